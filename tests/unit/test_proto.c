/* test_proto.c: building and validating protocol messages. */
#include <check.h>

#include "check_main.h"
#include <errno.h>
#include <string.h>

#include "sched/proto.h"

static unsigned char buf[4096];

START_TEST(test_built_messages_decode_to_the_same_fields) {
  proto_alloc a = {.size = 300, .rid = 7, .n = 1};
  size_t len = proto_build(buf, sizeof buf, MSG_ALLOC, 42, 5, PROTO_NO_DEST, 0, -1, &a, NULL, 0);
  REQUIRE_EQ(len, sizeof(proto_header) + sizeof a);
  proto_msg m;
  REQUIRE_EQ(proto_decode(buf, len, &m), 0);
  REQUIRE_EQ(m.h->type, MSG_ALLOC);
  REQUIRE_EQ(m.h->req, 42);
  REQUIRE_EQ(m.h->origin, 5);
  REQUIRE_EQ(((const proto_alloc *)m.fixed)->size, 300);
  REQUIRE(m.tail == NULL);
  uint64_t tail[3] = {1, 2, 3};
  proto_reply r = {.ntail = 3};
  len = proto_build(buf, sizeof buf, MSG_REPLY, 9, 5, 5, ENOENT, -1, &r, tail, 3);
  REQUIRE_EQ(proto_decode(buf, len, &m), 0);
  REQUIRE_EQ(m.ntail, 3);
  REQUIRE_EQ(m.tail[2], 3);
  REQUIRE_EQ(m.h->status, ENOENT);
}
END_TEST

START_TEST(test_every_malformation_is_eproto) {
  proto_alloc a = {.size = 300, .rid = 7, .n = 1};
  size_t len = proto_build(buf, sizeof buf, MSG_ALLOC, 1, 5, PROTO_NO_DEST, 0, -1, &a, NULL, 0);
  proto_msg m;
  REQUIRE_EQ(proto_decode(buf, 10, &m), EPROTO);       /* shorter than a header */
  REQUIRE_EQ(proto_decode(buf, len - 1, &m), EPROTO);  /* length does not match */
  proto_header *h = (proto_header *)buf;
  h->magic ^= 1;
  REQUIRE_EQ(proto_decode(buf, len, &m), EPROTO);
  h->magic ^= 1;
  h->version = 9;
  REQUIRE_EQ(proto_decode(buf, len, &m), EPROTO);
  h->version = PROTO_VERSION;
  h->type = MSG_TYPE_END;
  REQUIRE_EQ(proto_decode(buf, len, &m), EPROTO);
  h->type = 0;
  REQUIRE_EQ(proto_decode(buf, len, &m), EPROTO);
  h->type = MSG_QUERY; /* fixed part of the wrong size for the type */
  REQUIRE_EQ(proto_decode(buf, len, &m), EPROTO);
  h->type = MSG_ALLOC;
  REQUIRE_EQ(proto_decode(buf, len, &m), 0);
  ((proto_alloc *)(buf + sizeof *h))->n = 2; /* ALLOC is one object */
  REQUIRE_EQ(proto_decode(buf, len, &m), EPROTO);
  ((proto_alloc *)(buf + sizeof *h))->n = 1;
  ((proto_alloc *)(buf + sizeof *h))->size = 0;
  REQUIRE_EQ(proto_decode(buf, len, &m), EPROTO);
  proto_reply r = {.ntail = 1000}; /* announces a tail it does not carry */
  len = proto_build(buf, sizeof buf, MSG_REPLY, 9, 5, 5, 0, -1, &r, NULL, 0);
  REQUIRE_EQ(proto_decode(buf, len, &m), EPROTO);
}
END_TEST

START_TEST(test_build_refuses_what_does_not_fit) {
  uint64_t tail[600] = {0};
  proto_reply r = {.ntail = 600};
  REQUIRE_EQ(proto_build(buf, sizeof buf, MSG_REPLY, 1, 1, 1, 0, -1, &r, tail, 600), 0);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("proto");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_built_messages_decode_to_the_same_fields);
  tcase_add_test(tc, test_every_malformation_is_eproto);
  tcase_add_test(tc, test_build_refuses_what_does_not_fit);
  suite_add_tcase(s, tc);
  return s;
}

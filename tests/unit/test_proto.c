/* test_proto.c: building and validating protocol messages. */
#include <check.h>

#include "check_main.h"
#include <errno.h>
#include <string.h>

#include "proto/proto.h"

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

START_TEST(test_unreadable_messages_are_eproto_and_bad_fields_einval) {
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
  /* readable, but a field out of range: EINVAL, with the message decoded so it can be
   * answered */
  ((proto_alloc *)(buf + sizeof *h))->n = 2; /* ALLOC is one object */
  REQUIRE_EQ(proto_decode(buf, len, &m), EINVAL);
  REQUIRE(m.h == (const proto_header *)buf && m.h->req == 1);
  ((proto_alloc *)(buf + sizeof *h))->n = 1;
  ((proto_alloc *)(buf + sizeof *h))->size = 0;
  REQUIRE_EQ(proto_decode(buf, len, &m), EINVAL);
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

/* Decode a LEASE with these fields. */
static int decode_lease(uint64_t size, uint32_t want, uint32_t min) {
  proto_lease l = {.size = size, .rid = 3, .want = want, .min = min};
  size_t len = proto_build(buf, sizeof buf, MSG_LEASE, 1, 5, PROTO_NO_DEST, 0, -1, &l, NULL, 0);
  REQUIRE(len > 0);
  proto_msg m;
  return proto_decode(buf, len, &m);
}

START_TEST(test_lease_within_bounds_decodes) {
  REQUIRE_EQ(decode_lease(1, 1, 1), 0);
  REQUIRE_EQ(decode_lease(4096, PROTO_LEASE_MAX, 1), 0);
  REQUIRE_EQ(decode_lease(100, 8, 8), 0);
  proto_msg m;
  proto_lease l = {.size = 200, .rid = 9, .want = 16, .min = 2};
  size_t len = proto_build(buf, sizeof buf, MSG_LEASE, 4, 5, PROTO_NO_DEST, 0, -1, &l, NULL, 0);
  REQUIRE_EQ(proto_decode(buf, len, &m), 0);
  const proto_lease *got = m.fixed;
  REQUIRE_EQ(got->size, 200);
  REQUIRE_EQ(got->rid, 9);
  REQUIRE_EQ(got->want, 16);
  REQUIRE_EQ(got->min, 2);
  REQUIRE_EQ(m.ntail, 0);
}
END_TEST

START_TEST(test_lease_of_size_0_is_einval) {
  REQUIRE_EQ(decode_lease(0, 1, 1), EINVAL);
}
END_TEST

START_TEST(test_lease_of_size_4097_is_einval) {
  REQUIRE_EQ(decode_lease(4097, 1, 1), EINVAL);
  REQUIRE_EQ(decode_lease(UINT64_MAX, 1, 1), EINVAL);
}
END_TEST

START_TEST(test_lease_with_min_0_is_einval) {
  REQUIRE_EQ(decode_lease(64, 1, 0), EINVAL);
  REQUIRE_EQ(decode_lease(64, 0, 0), EINVAL);
}
END_TEST

START_TEST(test_lease_with_want_below_min_is_einval) {
  REQUIRE_EQ(decode_lease(64, 3, 4), EINVAL);
}
END_TEST

START_TEST(test_lease_with_want_over_the_maximum_is_einval) {
  REQUIRE_EQ(decode_lease(64, PROTO_LEASE_MAX + 1, 1), EINVAL);
  REQUIRE_EQ(decode_lease(64, UINT32_MAX, UINT32_MAX), EINVAL);
}
END_TEST

START_TEST(test_lease_with_a_tail_is_eproto) {
  proto_lease l = {.size = 64, .rid = 3, .want = 1, .min = 1};
  uint64_t tail[1] = {7};
  size_t len = proto_build(buf, sizeof buf, MSG_LEASE, 1, 5, PROTO_NO_DEST, 0, -1, &l, tail, 1);
  proto_msg m;
  REQUIRE_EQ(proto_decode(buf, len, &m), EPROTO);
}
END_TEST

START_TEST(test_unlease_decodes_its_pairs) {
  proto_unlease u = {.n = 2};
  uint64_t tail[4] = {0x1000, 5, 0x2000, 0};
  size_t len = proto_build(buf, sizeof buf, MSG_UNLEASE, 1, 5, PROTO_NO_DEST, 0, -1, &u, tail, 4);
  proto_msg m;
  REQUIRE_EQ(proto_decode(buf, len, &m), 0);
  REQUIRE_EQ(m.ntail, 4);
  REQUIRE_EQ(m.tail[0], 0x1000);
  REQUIRE_EQ(m.tail[1], 5);
  REQUIRE_EQ(m.tail[2], 0x2000);
}
END_TEST

START_TEST(test_unlease_of_0_slabs_is_einval) {
  proto_unlease u = {.n = 0};
  size_t len = proto_build(buf, sizeof buf, MSG_UNLEASE, 1, 5, PROTO_NO_DEST, 0, -1, &u, NULL, 0);
  proto_msg m;
  REQUIRE_EQ(proto_decode(buf, len, &m), EINVAL);
}
END_TEST

START_TEST(test_balloc_of_more_objects_than_a_reply_carries_is_e2big) {
  proto_alloc a = {.size = 64, .rid = 7, .n = PROTO_MAX_TAIL + 1};
  size_t len = proto_build(buf, sizeof buf, MSG_BALLOC, 4, 5, PROTO_NO_DEST, 0, -1, &a, NULL, 0);
  proto_msg m;
  REQUIRE_EQ(proto_decode(buf, len, &m), E2BIG);
  REQUIRE_EQ(m.h->req, 4);
  a.n = 2000000000u;
  len = proto_build(buf, sizeof buf, MSG_BALLOC, 4, 5, PROTO_NO_DEST, 0, -1, &a, NULL, 0);
  REQUIRE_EQ(proto_decode(buf, len, &m), E2BIG);
  a.n = PROTO_MAX_TAIL;
  len = proto_build(buf, sizeof buf, MSG_BALLOC, 4, 5, PROTO_NO_DEST, 0, -1, &a, NULL, 0);
  REQUIRE_EQ(proto_decode(buf, len, &m), 0);
  a.n = 0;
  len = proto_build(buf, sizeof buf, MSG_BALLOC, 4, 5, PROTO_NO_DEST, 0, -1, &a, NULL, 0);
  REQUIRE_EQ(proto_decode(buf, len, &m), EINVAL);
}
END_TEST

START_TEST(test_unlease_whose_tail_does_not_match_n_is_eproto) {
  uint64_t tail[8] = {0};
  proto_msg m;
  struct { uint32_t n, words; } bad[] = {{2, 3}, {2, 5}, {2, 2}, {1, 0}, {1, 1}, {3, 8}, {4, 6}};
  for (unsigned i = 0; i < sizeof bad / sizeof *bad; i++) {
    proto_unlease u = {.n = bad[i].n};
    size_t len = proto_build(buf, sizeof buf, MSG_UNLEASE, 1, 5, PROTO_NO_DEST, 0, -1, &u, tail,
                             bad[i].words);
    REQUIRE_EQ(proto_decode(buf, len, &m), EPROTO);
  }
  proto_unlease huge = {.n = UINT32_MAX}; /* 2n words overflow 32 bits: still refused */
  size_t len = proto_build(buf, sizeof buf, MSG_UNLEASE, 1, 5, PROTO_NO_DEST, 0, -1, &huge, tail, 2);
  REQUIRE_EQ(proto_decode(buf, len, &m), EPROTO);
  proto_unlease wrap = {.n = 0x80000001u}; /* 2n mod 2^32 == 2 */
  len = proto_build(buf, sizeof buf, MSG_UNLEASE, 1, 5, PROTO_NO_DEST, 0, -1, &wrap, tail, 2);
  REQUIRE_EQ(proto_decode(buf, len, &m), EPROTO);
}
END_TEST

START_TEST(test_packv_with_undefined_flags_is_einval_and_readable) {
  uint64_t names[2] = {5, 0}; /* a lenient part: the child, then its parent */
  proto_packv v = {.nreg = 1, .flags = PACKV_SKIP_GONE};
  size_t len = proto_build(buf, sizeof buf, MSG_PACKV, 1, 5, PROTO_NO_DEST, 0, -1, &v, names, 2);
  proto_msg m;
  REQUIRE_EQ(proto_decode(buf, len, &m), 0);
  REQUIRE_EQ(((const proto_packv *)m.fixed)->flags, PACKV_SKIP_GONE);
  REQUIRE_EQ(m.ntail, 2);
  len = proto_build(buf, sizeof buf, MSG_PACKV, 1, 5, PROTO_NO_DEST, 0, -1, &v, names, 1);
  REQUIRE_EQ(proto_decode(buf, len, &m), EPROTO); /* the parents are missing */
  v.flags = 64;
  len = proto_build(buf, sizeof buf, MSG_PACKV, 1, 5, PROTO_NO_DEST, 0, -1, &v, names, 1);
  REQUIRE_EQ(proto_decode(buf, len, &m), EINVAL);
  REQUIRE_EQ(m.h->req, 1); /* filled: a worker that sent it gets an answer */
  v.flags = PACKV_HANDOVER | PACKV_HANDBACK; /* one or the other */
  v.peer = 3;
  len = proto_build(buf, sizeof buf, MSG_PACKV, 1, 5, PROTO_NO_DEST, 0, -1, &v, names, 1);
  REQUIRE_EQ(proto_decode(buf, len, &m), EINVAL);
  v.flags = PACKV_HANDOVER;
  v.peer = -1; /* to nobody */
  len = proto_build(buf, sizeof buf, MSG_PACKV, 1, 5, PROTO_NO_DEST, 0, -1, &v, names, 1);
  REQUIRE_EQ(proto_decode(buf, len, &m), EINVAL);
  v.flags = PACKV_COMMIT; /* a commit of nothing handed */
  len = proto_build(buf, sizeof buf, MSG_PACKV, 1, 5, PROTO_NO_DEST, 0, -1, &v, names, 1);
  REQUIRE_EQ(proto_decode(buf, len, &m), EINVAL);
  /* what regions own: regions only, no hand-over, with ranges */
  v.flags = PACKV_OWNED;
  len = proto_build(buf, sizeof buf, MSG_PACKV, 1, 5, PROTO_NO_DEST, 0, -1, &v, names, 1);
  REQUIRE_EQ(proto_decode(buf, len, &m), 0);
  uint32_t bad[] = {PACKV_OWNED | PACKV_HANDOVER, PACKV_OWNED | PACKV_HANDBACK,
                    PACKV_OWNED | PACKV_NO_RANGES};
  v.peer = 3;
  for (unsigned i = 0; i < sizeof bad / sizeof *bad; i++) {
    v.flags = bad[i];
    len = proto_build(buf, sizeof buf, MSG_PACKV, 1, 5, PROTO_NO_DEST, 0, -1, &v, names, 1);
    REQUIRE_EQ(proto_decode(buf, len, &m), EINVAL);
  }
  v = (proto_packv){.nreg = 1, .nobj = 1, .flags = PACKV_OWNED}; /* an object owns nothing */
  len = proto_build(buf, sizeof buf, MSG_PACKV, 1, 5, PROTO_NO_DEST, 0, -1, &v, names, 2);
  REQUIRE_EQ(proto_decode(buf, len, &m), EINVAL);
}
END_TEST

/* A reply in several messages: PROTO_REPLY_MORE is the only flag; any other is EINVAL. */
START_TEST(test_reply_flags_other_than_more_are_einval) {
  unsigned char buf[128];
  uint64_t tail[2] = {0x1000, 4096};
  proto_reply more = {.ntail = 2, .flags = PROTO_REPLY_MORE}, bad = {.ntail = 2, .flags = 6};
  proto_msg m;
  size_t len = proto_build(buf, sizeof buf, MSG_REPLY, 1, 3, 3, 0, -1, &more, tail, 2);
  REQUIRE_EQ(proto_decode(buf, len, &m), 0);
  REQUIRE_EQ(((const proto_reply *)m.fixed)->flags, PROTO_REPLY_MORE);
  REQUIRE_EQ(m.ntail, 2);
  len = proto_build(buf, sizeof buf, MSG_REPLY, 1, 3, 3, 0, -1, &bad, tail, 2);
  REQUIRE_EQ(proto_decode(buf, len, &m), EINVAL);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("proto");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_built_messages_decode_to_the_same_fields);
  tcase_add_test(tc, test_unreadable_messages_are_eproto_and_bad_fields_einval);
  tcase_add_test(tc, test_build_refuses_what_does_not_fit);
  tcase_add_test(tc, test_lease_within_bounds_decodes);
  tcase_add_test(tc, test_lease_of_size_0_is_einval);
  tcase_add_test(tc, test_lease_of_size_4097_is_einval);
  tcase_add_test(tc, test_lease_with_min_0_is_einval);
  tcase_add_test(tc, test_lease_with_want_below_min_is_einval);
  tcase_add_test(tc, test_lease_with_want_over_the_maximum_is_einval);
  tcase_add_test(tc, test_lease_with_a_tail_is_eproto);
  tcase_add_test(tc, test_unlease_decodes_its_pairs);
  tcase_add_test(tc, test_unlease_of_0_slabs_is_einval);
  tcase_add_test(tc, test_balloc_of_more_objects_than_a_reply_carries_is_e2big);
  tcase_add_test(tc, test_unlease_whose_tail_does_not_match_n_is_eproto);
  tcase_add_test(tc, test_packv_with_undefined_flags_is_einval_and_readable);
  tcase_add_test(tc, test_reply_flags_other_than_more_are_einval);
  suite_add_tcase(s, tc);
  return s;
}

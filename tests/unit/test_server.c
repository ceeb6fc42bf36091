/* test_server.c: one scheduler server driven by hand through a capturing transport: local
 * service, errors for unknown regions and wild pointers, and every kind of bad input
 * (malformed bytes, a worker speaking for another, a second FINALIZE) counted and dropped
 * without a reply and without changing anything; a readable request with impossible arguments
 * answered with an errno; the shutdown report in each of its settings, and a loss reported
 * whatever the setting. */
#include <check.h>

#include "check_main.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/types.h"
#include "proto/proto.h"
#include "sched/server.h"

static unsigned char sent[1 << 16];
static size_t sent_len;
static int sent_to, nsent;
/* Every message since the log was last cleared (the first LOG_MAX), for multi-message cases. */
#define LOG_MAX 64
static struct {
  unsigned char msg[4096];
  size_t len;
  int to;
} sent_log[LOG_MAX];
static int nlog;
static void capture(void *ctx, int from, int to, const void *msg, size_t len) {
  (void)ctx;
  (void)from;
  if (len <= sizeof sent) memcpy(sent, msg, len);
  sent_len = len;
  sent_to = to;
  nsent++;
  if (nlog < LOG_MAX && len <= sizeof sent_log[0].msg) {
    memcpy(sent_log[nlog].msg, msg, len);
    sent_log[nlog].len = len;
    sent_log[nlog].to = to;
  }
  nlog++;
}

static sched_tree tree;
static sched_server *srv;

static void setup(void) {
  REQUIRE_EQ(sched_tree_heap(&tree, 1, 2, 2), 0); /* rank 0 schedules workers 1 and 2 */
  sched_config cfg = sched_config_default();
  cfg.quiet = true;
  cfg.log = fopen("/dev/null", "w");
  REQUIRE_EQ(sched_server_create(&srv, &tree, 0, &cfg, (sched_transport){capture, NULL}), 0);
  sched_server_boot(srv);
  nsent = 0;
}
static void teardown(void) {
  sched_server_destroy(srv);
  sched_tree_free(&tree);
}

/* Send a request as worker `from`; return the reply's status (or -1 when none came). */
static int ask(int from, unsigned type, const void *fixed, uint64_t *tail0) {
  unsigned char msg[128];
  static uint64_t req;
  size_t len = proto_build(msg, sizeof msg, type, ++req, from, PROTO_NO_DEST, 0, -1, fixed, NULL, 0);
  int before = nsent;
  sched_server_handle(srv, from, msg, len);
  if (nsent == before) return -1;
  proto_msg m;
  REQUIRE_EQ(proto_decode(sent, sent_len, &m), 0);
  REQUIRE_EQ(m.h->type, MSG_REPLY);
  REQUIRE_EQ(sent_to, from);
  REQUIRE_EQ(m.h->req, req);
  if (tail0 && m.ntail) *tail0 = m.tail[0];
  return m.h->status;
}

START_TEST(test_local_requests_are_served) {
  uint64_t rid = 0, addr = 0;
  proto_ralloc ra = {.parent = 0, .level_hint = -1};
  REQUIRE_EQ(ask(1, MSG_RALLOC, &ra, &rid), 0);
  REQUIRE(rid != 0);
  proto_alloc al = {.size = 100, .rid = (uint32_t)rid, .n = 1};
  REQUIRE_EQ(ask(1, MSG_ALLOC, &al, &addr), 0);
  proto_addr q = {.addr = addr};
  uint64_t got = 0;
  REQUIRE_EQ(ask(2, MSG_QUERY, &q, &got), 0); /* another worker may ask about it */
  REQUIRE_EQ(got, rid);
  REQUIRE_EQ(ask(2, MSG_FREE, &q, NULL), EPERM); /* but not free it: worker 1 holds it */
  REQUIRE_EQ(ask(1, MSG_FREE, &q, NULL), 0);
  REQUIRE_EQ(ask(1, MSG_FREE, &q, NULL), EINVAL);
  proto_rid rf = {.rid = (uint32_t)rid};
  REQUIRE_EQ(ask(1, MSG_RFREE, &rf, NULL), 0);
  REQUIRE_EQ(ask(1, MSG_RFREE, &rf, NULL), ENOENT);
}
END_TEST

START_TEST(test_unknown_regions_and_wild_pointers_get_errors) {
  proto_alloc al = {.size = 64, .rid = 0x7000000, .n = 1};
  REQUIRE_EQ(ask(1, MSG_ALLOC, &al, NULL), ENOENT);
  proto_addr wild = {.addr = 0x1234};
  REQUIRE_EQ(ask(1, MSG_FREE, &wild, NULL), EINVAL);
  proto_rid root = {.rid = 0};
  REQUIRE_EQ(ask(1, MSG_RFREE, &root, NULL), EINVAL);
}
END_TEST

START_TEST(test_bad_input_is_counted_dropped_and_changes_nothing) {
  sched_stats st;
  unsigned char junk[48];
  for (unsigned i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)(i * 31 + 7);
  REQUIRE_EQ(sched_server_handle(srv, 1, junk, sizeof junk), EPROTO);
  /* A well-formed request from worker 1 claiming to be worker 2. */
  unsigned char msg[128];
  proto_alloc al = {.size = 64, .rid = 0, .n = 1};
  size_t len = proto_build(msg, sizeof msg, MSG_ALLOC, 1, 2, PROTO_NO_DEST, 0, -1, &al, NULL, 0);
  REQUIRE_EQ(sched_server_handle(srv, 1, msg, len), EPROTO);
  /* A worker may not send scheduler messages. */
  proto_grant g = {.page_addr = 0, .npages = 1};
  len = proto_build(msg, sizeof msg, MSG_GRANT, 1, -1, 0, 0, -1, &g, NULL, 0);
  REQUIRE_EQ(sched_server_handle(srv, 1, msg, len), EPROTO);
  /* A rank outside the job. */
  len = proto_build(msg, sizeof msg, MSG_ALLOC, 1, 9, PROTO_NO_DEST, 0, -1, &al, NULL, 0);
  REQUIRE_EQ(sched_server_handle(srv, 9, msg, len), EPROTO);
  REQUIRE_EQ(nsent, 0); /* no reply to any of them */
  sched_server_get_stats(srv, &st);
  REQUIRE_EQ(st.malformed, 4);
  REQUIRE_EQ(st.served, 0);
  uint64_t addr;
  REQUIRE_EQ(ask(1, MSG_ALLOC, &al, &addr), 0); /* and the server still works */
}
END_TEST

START_TEST(test_readable_requests_with_impossible_arguments_are_answered_not_dropped) {
  /* The worker waits for a reply: an argument the scheduler cannot serve gets an errno. */
  uint64_t rid = 0;
  proto_ralloc ra = {.parent = 0, .level_hint = -1};
  REQUIRE_EQ(ask(1, MSG_RALLOC, &ra, &rid), 0);
  proto_alloc huge = {.size = 64, .rid = (uint32_t)rid, .n = 2000000000u};
  REQUIRE_EQ(ask(1, MSG_BALLOC, &huge, NULL), E2BIG);
  proto_alloc none = {.size = 64, .rid = (uint32_t)rid, .n = 0};
  REQUIRE_EQ(ask(1, MSG_BALLOC, &none, NULL), EINVAL);
  proto_alloc zero = {.size = 0, .rid = (uint32_t)rid, .n = 1};
  REQUIRE_EQ(ask(2, MSG_ALLOC, &zero, NULL), EINVAL);
  proto_lease bad = {.size = 64, .rid = (uint32_t)rid, .want = 1, .min = 2};
  REQUIRE_EQ(ask(2, MSG_LEASE, &bad, NULL), EINVAL);
  /* level hints: SYS_NO_LEVEL_HINT (-1) or a level the tree has (one level here: 0) */
  proto_ralloc deep = {.parent = 0, .level_hint = 99}, neg = {.parent = 0, .level_hint = -5},
               one = {.parent = 0, .level_hint = 1}, top = {.parent = 0, .level_hint = 0};
  REQUIRE_EQ(ask(1, MSG_RALLOC, &deep, NULL), EINVAL);
  REQUIRE_EQ(ask(1, MSG_RALLOC, &neg, NULL), EINVAL);
  REQUIRE_EQ(ask(1, MSG_RALLOC, &one, NULL), EINVAL);
  REQUIRE_EQ(ask(1, MSG_RALLOC, &top, NULL), 0);
  sched_stats st;
  sched_server_get_stats(srv, &st);
  REQUIRE_EQ(st.malformed, 0);
}
END_TEST

START_TEST(test_second_finalize_is_malformed_and_shutdown_checks_everything) {
  unsigned char msg[64];
  size_t len = proto_build(msg, sizeof msg, MSG_FINALIZE, 1, 1, PROTO_NO_DEST, 0, -1, NULL, NULL, 0);
  REQUIRE_EQ(sched_server_handle(srv, 1, msg, len), 0);
  REQUIRE(!sched_server_done(srv));
  REQUIRE_EQ(sched_server_handle(srv, 1, msg, len), EPROTO); /* worker 1 again */
  REQUIRE(!sched_server_done(srv));
  len = proto_build(msg, sizeof msg, MSG_FINALIZE, 1, 2, PROTO_NO_DEST, 0, -1, NULL, NULL, 0);
  REQUIRE_EQ(sched_server_handle(srv, 2, msg, len), 0);
  REQUIRE(sched_server_done(srv));
  REQUIRE_EQ(sched_server_conservation(srv), 0);
}
END_TEST

/* A leaf that asked for a refill must not return everything before the grant arrives:
 * pages granted after its RETURN would be missing at the root. Drives a leaf by hand. */
START_TEST(test_leaf_waits_for_a_pending_grant_before_returning) {
  sched_tree t2;
  REQUIRE_EQ(sched_tree_heap(&t2, 2, 1, 1), 0); /* rank 0 root, rank 1 leaf, rank 2 worker */
  sched_config cfg = sched_config_default();
  cfg.quiet = true;
  cfg.log = fopen("/dev/null", "w");
  sched_server *leaf;
  REQUIRE_EQ(sched_server_create(&leaf, &t2, 1, &cfg, (sched_transport){capture, NULL}), 0);
  unsigned char msg[256];
  proto_grant g = {.page_addr = cfg.gas_base, .npages = 1, .id_first = 1, .id_count = 100};
  size_t len = proto_build(msg, sizeof msg, MSG_GRANT, 0, -1, 1, 0, -1, &g, NULL, 0);
  REQUIRE_EQ(sched_server_handle(leaf, 0, msg, len), 0); /* the boot chunk: one page */
  proto_ralloc ra = {.parent = 0, .level_hint = -1}; /* region 0 lives at the root: forwarded */
  nsent = 0;
  len = proto_build(msg, sizeof msg, MSG_RALLOC, 1, 2, PROTO_NO_DEST, 0, -1, &ra, NULL, 0);
  REQUIRE_EQ(sched_server_handle(leaf, 2, msg, len), 0);
  REQUIRE_EQ(sent_to, 0);
  /* The root answers with a CREATE_BELOW: the leaf makes the region from its own page and
   * IDs, and, now below its low watermark, asks for a refill. */
  proto_create cb = {.parent = 0, .level_hint = -1, .parent_sched = 0};
  len = proto_build(msg, sizeof msg, MSG_CREATE_BELOW, 1, 2, PROTO_NO_DEST, 0, -1, &cb, NULL, 0);
  nsent = 0;
  REQUIRE_EQ(sched_server_handle(leaf, 0, msg, len), 0);
  bool asked = false;
  proto_msg m;
  REQUIRE_EQ(proto_decode(sent, sent_len, &m), 0); /* the last message sent */
  asked = m.h->type == MSG_REFILL || nsent >= 2;
  REQUIRE(asked);
  len = proto_build(msg, sizeof msg, MSG_FINALIZE, 2, 2, PROTO_NO_DEST, 0, -1, NULL, NULL, 0);
  REQUIRE_EQ(sched_server_handle(leaf, 2, msg, len), 0);
  REQUIRE(!sched_server_done(leaf)); /* a grant is on its way */
  proto_grant more = {.page_addr = cfg.gas_base + AH_PAGE_SIZE, .npages = 1};
  len = proto_build(msg, sizeof msg, MSG_GRANT, 0, -1, 1, 0, -1, &more, NULL, 0);
  REQUIRE_EQ(sched_server_handle(leaf, 0, msg, len), 0);
  REQUIRE(sched_server_done(leaf));
  REQUIRE_EQ(proto_decode(sent, sent_len, &m), 0); /* the RETURN holds both pages */
  REQUIRE_EQ(m.h->type, MSG_RETURN);
  const proto_return *r = m.fixed;
  REQUIRE_EQ(r->nranges, 1);
  REQUIRE_EQ(m.tail[0], cfg.gas_base);
  REQUIRE_EQ(m.tail[1], 2 * AH_PAGE_SIZE);
  sched_server_destroy(leaf);
  sched_tree_free(&t2);
}
END_TEST

/* ---- leases for workers' caches ---- */

/* Send a request with a tail as worker `from`; the reply's status (-1 when none came), and
 * its tail copied to out[0..*nout). */
static int ask_tail(int from, unsigned type, const void *fixed, const uint64_t *tail,
                    uint32_t ntail, uint64_t *out, size_t maxout, size_t *nout) {
  static unsigned char msg[1 << 14];
  static uint64_t req = 1000;
  size_t len = proto_build(msg, sizeof msg, type, ++req, from, PROTO_NO_DEST, 0, -1, fixed,
                           tail, ntail);
  REQUIRE(len > 0);
  int before = nsent;
  sched_server_handle(srv, from, msg, len);
  if (nsent == before) return -1;
  proto_msg m;
  REQUIRE_EQ(proto_decode(sent, sent_len, &m), 0);
  REQUIRE_EQ(m.h->type, MSG_REPLY);
  REQUIRE_EQ(sent_to, from);
  REQUIRE_EQ(m.h->req, req);
  REQUIRE(m.ntail <= maxout);
  for (uint32_t i = 0; i < m.ntail; i++) out[i] = m.tail[i];
  *nout = m.ntail;
  return m.h->status;
}

static uint32_t new_region(int worker) {
  uint64_t rid = 0;
  proto_ralloc ra = {.parent = 0, .level_hint = -1};
  REQUIRE_EQ(ask(worker, MSG_RALLOC, &ra, &rid), 0);
  return (uint32_t)rid;
}

/* Lease want slabs of size in rid as worker; the reply's tail in out. */
static int lease(int worker, uint32_t rid, uint64_t size, uint32_t want, uint64_t *out,
                 size_t *nout) {
  proto_lease l = {.size = size, .rid = rid, .want = want, .min = 1};
  return ask_tail(worker, MSG_LEASE, &l, NULL, 0, out, 64, nout);
}

START_TEST(test_lease_is_served_by_the_scheduler_holding_the_region) {
  uint32_t rid = new_region(1);
  uint64_t r[64];
  size_t n;
  REQUIRE_EQ(lease(1, rid, 100, 4, r, &n), 0);
  REQUIRE_EQ(n, 2 + 4);
  REQUIRE_EQ(r[0], 0);   /* scheduler rank 0 granted it: the UNLEASE goes there */
  REQUIRE_EQ(r[1], 128); /* the slot size */
  sched_config cfg = sched_config_default();
  for (size_t i = 2; i < n; i++) {
    REQUIRE_EQ(r[i] % AH_SLAB_SIZE, 0);
    REQUIRE(r[i] >= cfg.gas_base && r[i] - cfg.gas_base < cfg.gas_size);
    for (size_t j = 2; j < i; j++) REQUIRE(r[i] != r[j]);
    proto_addr q = {.addr = r[i]};
    REQUIRE_EQ(ask(2, MSG_QUERY, &q, NULL), EINVAL); /* a leased slot is no object yet */
  }
  sched_stats st;
  sched_server_get_stats(srv, &st);
  REQUIRE_EQ(st.leased_slabs, 4);
}
END_TEST

START_TEST(test_lease_in_an_unknown_region_is_enoent) {
  uint64_t r[64];
  size_t n;
  REQUIRE_EQ(lease(1, 0x7000000, 64, 1, r, &n), ENOENT);
  uint32_t rid = new_region(1);
  proto_rid rf = {.rid = rid};
  REQUIRE_EQ(ask(1, MSG_RFREE, &rf, NULL), 0);
  REQUIRE_EQ(lease(1, rid, 64, 1, r, &n), ENOENT);
  sched_stats st;
  sched_server_get_stats(srv, &st);
  REQUIRE_EQ(st.leased_slabs, 0);
}
END_TEST

START_TEST(test_unlease_hands_the_slabs_back_and_live_slots_become_objects) {
  uint32_t rid = new_region(1);
  uint64_t r[64], d[4];
  size_t n, nd;
  REQUIRE_EQ(lease(1, rid, 128, 3, r, &n), 0);
  uint64_t pairs[6] = {r[2], 0x5, r[3], 0, r[4], 0}; /* slots 0 and 2 of the first are live */
  proto_unlease u = {.n = 3};
  REQUIRE_EQ(ask_tail(1, MSG_UNLEASE, &u, pairs, 6, d, 4, &nd), 0);
  REQUIRE_EQ(nd, 1);
  REQUIRE_EQ(d[0], 0); /* nothing dropped */
  uint64_t who = 0;
  proto_addr q = {.addr = r[2] + 2 * 128};
  REQUIRE_EQ(ask(2, MSG_QUERY, &q, &who), 0);
  REQUIRE_EQ(who, rid);
  q.addr = r[2] + 128;
  REQUIRE_EQ(ask(2, MSG_QUERY, &q, NULL), EINVAL);
  q.addr = r[2];
  REQUIRE_EQ(ask(1, MSG_FREE, &q, NULL), 0);
  REQUIRE_EQ(ask_tail(1, MSG_UNLEASE, &u, pairs, 6, d, 4, &nd), EINVAL); /* not twice */
  sched_stats st;
  sched_server_get_stats(srv, &st);
  REQUIRE_EQ(st.returned_leases, 3);
}
END_TEST

START_TEST(test_unlease_by_another_worker_is_einval) {
  uint32_t rid = new_region(1);
  uint64_t r[64], d[4];
  size_t n, nd;
  REQUIRE_EQ(lease(1, rid, 64, 2, r, &n), 0);
  uint64_t pairs[4] = {r[2], 0, r[3], 0};
  proto_unlease u = {.n = 2};
  REQUIRE_EQ(ask_tail(2, MSG_UNLEASE, &u, pairs, 4, d, 4, &nd), EINVAL);
  REQUIRE_EQ(nd, 0);
  REQUIRE_EQ(ask_tail(1, MSG_UNLEASE, &u, pairs, 4, d, 4, &nd), 0); /* still worker 1's */
  sched_stats st;
  sched_server_get_stats(srv, &st);
  REQUIRE_EQ(st.returned_leases, 2);
}
END_TEST

START_TEST(test_unlease_after_the_region_was_freed_drops_the_live_slots) {
  uint32_t rid = new_region(1);
  uint64_t r[64], d[4];
  size_t n, nd;
  REQUIRE_EQ(lease(1, rid, 2048, 1, r, &n), 0); /* 2 slots */
  proto_rid rf = {.rid = rid};
  REQUIRE_EQ(ask(2, MSG_RFREE, &rf, NULL), EPERM); /* not another worker's to free */
  REQUIRE_EQ(ask(1, MSG_RFREE, &rf, NULL), 0); /* a raw RFREE before the lessee's flush */
  uint64_t pairs[2] = {r[2], 0x3};
  proto_unlease u = {.n = 1};
  REQUIRE_EQ(ask_tail(1, MSG_UNLEASE, &u, pairs, 2, d, 4, &nd), 0);
  REQUIRE_EQ(nd, 1);
  REQUIRE_EQ(d[0], 2);
  proto_addr q = {.addr = r[2]};
  REQUIRE_EQ(ask(1, MSG_QUERY, &q, NULL), EINVAL);
}
END_TEST

START_TEST(test_shutdown_after_every_lease_came_back_loses_nothing) {
  uint32_t rid = new_region(1), dead = new_region(2);
  uint64_t r[64], z[64], d[4];
  size_t n, nz, nd;
  REQUIRE_EQ(lease(1, rid, 64, 2, r, &n), 0);
  REQUIRE_EQ(lease(2, dead, 64, 1, z, &nz), 0);
  proto_rid rf = {.rid = dead};
  REQUIRE_EQ(ask(2, MSG_RFREE, &rf, NULL), 0);
  uint64_t pairs[4] = {r[2], 1, r[3], 0}, zp[2] = {z[2], 1};
  proto_unlease u2 = {.n = 2}, u1 = {.n = 1};
  REQUIRE_EQ(ask_tail(1, MSG_UNLEASE, &u2, pairs, 4, d, 4, &nd), 0);
  REQUIRE_EQ(ask_tail(2, MSG_UNLEASE, &u1, zp, 2, d, 4, &nd), 0);
  unsigned char msg[64];
  for (int w = 1; w <= 2; w++) {
    size_t len = proto_build(msg, sizeof msg, MSG_FINALIZE, 1, w, PROTO_NO_DEST, 0, -1, NULL, NULL, 0);
    REQUIRE_EQ(sched_server_handle(srv, w, msg, len), 0);
  }
  REQUIRE(sched_server_done(srv));
  REQUIRE_EQ(sched_server_conservation(srv), 0);
}
END_TEST

/* A worker that finalizes without handing its lease back (a hostile or broken one): at
 * shutdown every worker has left, so the slab is taken back and nothing is missing. */
START_TEST(test_shutdown_takes_back_a_lease_nobody_returned) {
  uint32_t rid = new_region(1);
  uint64_t r[64];
  size_t n;
  REQUIRE_EQ(lease(1, rid, 64, 1, r, &n), 0); /* never handed back */
  unsigned char msg[64];
  for (int w = 1; w <= 2; w++) {
    size_t len = proto_build(msg, sizeof msg, MSG_FINALIZE, 1, w, PROTO_NO_DEST, 0, -1, NULL, NULL, 0);
    REQUIRE_EQ(sched_server_handle(srv, w, msg, len), 0);
  }
  REQUIRE(sched_server_done(srv));
  REQUIRE_EQ(sched_server_conservation(srv), 0);
  sched_stats st;
  sched_server_get_stats(srv, &st);
  REQUIRE_EQ(st.leased_slabs, 1);
  REQUIRE_EQ(st.returned_leases, 0);
}
END_TEST


/* ---- holders: the hand-over rule ---- */

START_TEST(test_requests_by_a_worker_that_does_not_hold_the_region_are_eperm) {
  uint32_t rid = new_region(1), other = new_region(2);
  uint64_t addr = 0, kid = 0, r[64];
  size_t n;
  proto_alloc al = {.size = 100, .rid = rid, .n = 1}, bal = {.size = 100, .rid = rid, .n = 3};
  REQUIRE_EQ(ask(1, MSG_ALLOC, &al, &addr), 0);
  proto_addr q = {.addr = addr};
  proto_realloc re = {.addr = addr, .size = 300, .rid = UINT32_MAX}; /* stay in its region */
  proto_ralloc ra = {.parent = rid, .level_hint = -1};
  proto_rid rf = {.rid = rid};
  REQUIRE_EQ(ask(2, MSG_ALLOC, &al, NULL), EPERM);
  REQUIRE_EQ(ask(2, MSG_BALLOC, &bal, NULL), EPERM);
  REQUIRE_EQ(ask(2, MSG_FREE, &q, NULL), EPERM);
  REQUIRE_EQ(ask(2, MSG_REALLOC, &re, NULL), EPERM);
  REQUIRE_EQ(ask(2, MSG_RALLOC, &ra, NULL), EPERM);
  REQUIRE_EQ(ask(2, MSG_RFREE, &rf, NULL), EPERM);
  REQUIRE_EQ(ask(2, MSG_PACK, &rf, NULL), EPERM);
  REQUIRE_EQ(lease(2, rid, 64, 1, r, &n), EPERM);
  re.rid = other; /* worker 1 moving its object into worker 2's region */
  REQUIRE_EQ(ask(1, MSG_REALLOC, &re, NULL), EPERM);
  /* nothing changed: looking is allowed, and the holder still does all of it */
  REQUIRE_EQ(ask(2, MSG_QUERY, &q, NULL), 0);
  REQUIRE_EQ(ask(1, MSG_RALLOC, &ra, &kid), 0);
  REQUIRE_EQ(ask(1, MSG_FREE, &q, NULL), 0);
  REQUIRE_EQ(ask(1, MSG_RFREE, &rf, NULL), 0);
  proto_alloc root = {.size = 64, .rid = 0, .n = 1}; /* the root region: everyone's */
  REQUIRE_EQ(ask(2, MSG_ALLOC, &root, &addr), 0);
  q.addr = addr;
  REQUIRE_EQ(ask(1, MSG_FREE, &q, NULL), 0);
}
END_TEST

/* A PACKV as `from`; the reply's ranges in out (at most 64 words). */
static int packv_ask(int from, uint32_t flags, int32_t peer, const uint64_t *names, uint32_t nreg,
                     uint32_t nobj, uint64_t *out, size_t *nout) {
  proto_packv v = {.nreg = nreg, .nobj = nobj, .flags = flags, .peer = peer};
  uint32_t words = nreg * (flags & PACKV_SKIP_GONE ? 2 : 1) + nobj; /* (proto.h) */
  return ask_tail(from, MSG_PACKV, &v, names, words, out, 64, nout);
}

START_TEST(test_a_hand_over_moves_the_subtree_to_the_peer_once_and_back_only_to_the_giver) {
  uint32_t rid = new_region(1);
  uint64_t kid = 0, addr = 0, out[64];
  size_t n;
  proto_ralloc ra = {.parent = rid, .level_hint = -1};
  REQUIRE_EQ(ask(1, MSG_RALLOC, &ra, &kid), 0);
  proto_alloc in_kid = {.size = 100, .rid = (uint32_t)kid, .n = 1};
  REQUIRE_EQ(ask(1, MSG_ALLOC, &in_kid, &addr), 0);
  uint64_t names[1] = {rid};
  REQUIRE_EQ(packv_ask(2, PACKV_HANDOVER, 1, names, 1, 0, out, &n), EPERM); /* not 2's to give */
  REQUIRE_EQ(packv_ask(1, PACKV_HANDOVER, 2, names, 1, 0, out, &n), 0);
  REQUIRE_EQ(n, 2); /* the ranges come back with the hand-over */
  REQUIRE_EQ(out[0], addr);
  REQUIRE_EQ(ask(1, MSG_ALLOC, &in_kid, NULL), EPERM); /* the child went with it */
  REQUIRE_EQ(packv_ask(1, PACKV_HANDOVER, 1 + 1, names, 1, 0, out, &n), EPERM); /* not twice */
  REQUIRE_EQ(packv_ask(2, PACKV_HANDBACK, 1, names, 1, 0, out, &n), EPERM); /* 1 gave it, not 2 */
  REQUIRE_EQ(packv_ask(1, PACKV_HANDBACK | PACKV_NO_RANGES, 2, names, 1, 0, out, &n), 0);
  REQUIRE_EQ(n, 0);
  REQUIRE_EQ(ask(2, MSG_ALLOC, &in_kid, NULL), EPERM);
  REQUIRE_EQ(ask(1, MSG_ALLOC, &in_kid, NULL), 0); /* worker 1's again */
  REQUIRE_EQ(packv_ask(1, PACKV_HANDBACK, 2, names, 1, 0, out, &n), EPERM); /* only once */
}
END_TEST

/* What a region owns (PACKV_OWNED: what sys_rfree gives back to the OS): every range of its
 * pool, used or free, with its children's; only its holder may ask; never the root region. */
START_TEST(test_an_owned_pack_covers_the_pools_and_only_the_holder_may_ask) {
  uint32_t rid = new_region(1);
  uint64_t kid = 0, a = 0, b = 0, out[64];
  size_t n;
  proto_ralloc ra = {.parent = rid, .level_hint = -1};
  REQUIRE_EQ(ask(1, MSG_RALLOC, &ra, &kid), 0);
  proto_alloc in_rid = {.size = 4096, .rid = rid, .n = 1}, in_kid = {.size = 64, .rid = (uint32_t)kid, .n = 1};
  REQUIRE_EQ(ask(1, MSG_ALLOC, &in_rid, &a), 0);
  REQUIRE_EQ(ask(1, MSG_ALLOC, &in_kid, &b), 0);
  uint64_t names[1] = {rid};
  REQUIRE_EQ(packv_ask(1, 0, PROTO_NO_DEST, names, 1, 0, out, &n), 0);
  uint64_t live = 0;
  for (size_t i = 1; i < n; i += 2) live += out[i];
  REQUIRE_EQ(live, 2 * 4096); /* the two objects' slabs */
  REQUIRE_EQ(packv_ask(2, PACKV_OWNED, PROTO_NO_DEST, names, 1, 0, out, &n), EPERM);
  REQUIRE_EQ(packv_ask(1, PACKV_OWNED, PROTO_NO_DEST, names, 1, 0, out, &n), 0);
  uint64_t owned = 0;
  bool has_a = false, has_b = false;
  for (size_t i = 0; i + 1 < n; i += 2) {
    owned += out[i + 1];
    has_a |= a >= out[i] && a < out[i] + out[i + 1];
    has_b |= b >= out[i] && b < out[i] + out[i + 1];
    if (i) REQUIRE(out[i] > out[i - 2] + out[i - 1]); /* sorted, merged */
  }
  REQUIRE(has_a && has_b);
  REQUIRE(owned >= 2 * 16 * 4096); /* both pools, free slabs too (16 each at the start) */
  uint64_t root[1] = {0};
  REQUIRE_EQ(packv_ask(1, PACKV_OWNED, PROTO_NO_DEST, root, 1, 0, out, &n), EINVAL);
  proto_rid rf = {.rid = rid};
  REQUIRE_EQ(ask(1, MSG_RFREE, &rf, NULL), 0);
}
END_TEST

START_TEST(test_a_packv_a_worker_may_not_send_is_einval_and_changes_nothing) {
  uint32_t rid = new_region(1), other = new_region(2);
  uint64_t addr = 0, theirs = 0, out[64];
  size_t n;
  proto_alloc al = {.size = 256, .rid = rid, .n = 1}, al2 = {.size = 64, .rid = other, .n = 1};
  REQUIRE_EQ(ask(1, MSG_ALLOC, &al, &addr), 0);
  REQUIRE_EQ(ask(2, MSG_ALLOC, &al2, &theirs), 0);
  uint64_t names[2] = {rid, addr};
  REQUIRE_EQ(packv_ask(1, PACKV_HANDOVER | PACKV_COMMIT, 2, names, 1, 0, out, &n), EINVAL);
  REQUIRE_EQ(packv_ask(1, PACKV_SKIP_GONE, -1, names, 1, 0, out, &n), EINVAL);
  REQUIRE_EQ(packv_ask(1, PACKV_HANDOVER, 0, names, 1, 0, out, &n), EINVAL); /* a scheduler */
  REQUIRE_EQ(packv_ask(1, PACKV_HANDOVER, 1, names, 1, 0, out, &n), EINVAL); /* itself */
  REQUIRE_EQ(packv_ask(1, PACKV_HANDOVER, 9, names, 1, 0, out, &n), EINVAL); /* nobody */
  uint64_t root[1] = {0};
  REQUIRE_EQ(packv_ask(1, PACKV_HANDOVER, 2, root, 1, 0, out, &n), EPERM); /* everyone's */
  uint64_t interior[1] = {addr + 64};
  REQUIRE_EQ(packv_ask(1, 0, -1, interior, 0, 1, out, &n), EINVAL); /* no object starts there */
  uint64_t foreign[1] = {theirs};
  REQUIRE_EQ(packv_ask(1, 0, -1, foreign, 0, 1, out, &n), EPERM); /* in worker 2's region */
  REQUIRE_EQ(packv_ask(1, PACKV_HANDOVER, 2, names, 1, 1, out, &n), 0); /* and still worker 1's */
}
END_TEST

/* ---- packs that span schedulers ---- */

/* A root (rank 0) over one leaf (rank 1) that serves worker 2, driven by hand: the root's
 * boot grant to the leaf is decoded so that tests can name IDs the leaf holds. */
static sched_tree ptree;
static sched_server *proot;
static proto_grant boot_grant;
static uint32_t pack_words; /* the root's pack replies: words of one (0: the default) */

static void pack_setup(void) {
  REQUIRE_EQ(sched_tree_heap(&ptree, 2, 1, 2), 0); /* workers 2 and 3 on the leaf */
  sched_config cfg = sched_config_default();
  cfg.reply_words = pack_words;
  cfg.quiet = true;
  cfg.log = fopen("/dev/null", "w");
  REQUIRE_EQ(sched_server_create(&proot, &ptree, 0, &cfg, (sched_transport){capture, NULL}), 0);
  nlog = 0;
  sched_server_boot(proot);
  bool granted = false;
  for (int i = 0; i < nlog && i < LOG_MAX; i++) {
    proto_msg m;
    REQUIRE_EQ(proto_decode(sent_log[i].msg, sent_log[i].len, &m), 0);
    if (m.h->type == MSG_GRANT && sent_log[i].to == 1) {
      boot_grant = *(const proto_grant *)m.fixed;
      granted = true;
    }
  }
  REQUIRE(granted && boot_grant.id_count >= 200);
}

/* Hand the root a message from the leaf (rank 1) on behalf of worker 2. */
static int leaf_for(int32_t origin, unsigned type, uint64_t req, int32_t dest, int32_t status,
                    int32_t sched, const void *fixed, const uint64_t *tail, uint32_t ntail) {
  static unsigned char msg[1 << 14];
  size_t len = proto_build(msg, sizeof msg, type, req, origin, dest, status, sched, fixed, tail,
                           ntail);
  REQUIRE(len > 0);
  return sched_server_handle(proot, 1, msg, len);
}
static int leaf_part(unsigned type, uint64_t req, int32_t dest, int32_t status, int32_t sched,
                     const void *fixed, const uint64_t *tail, uint32_t ntail) {
  static unsigned char msg[1 << 14];
  size_t len = proto_build(msg, sizeof msg, type, req, 2, dest, status, sched, fixed, tail, ntail);
  REQUIRE(len > 0);
  return sched_server_handle(proot, 1, msg, len);
}
static int leaf_says(unsigned type, uint64_t req, int32_t dest, int32_t status,
                     const void *fixed, const uint64_t *tail, uint32_t ntail) {
  static unsigned char msg[1 << 14];
  size_t len = proto_build(msg, sizeof msg, type, req, 2, dest, status, -1, fixed, tail, ntail);
  REQUIRE(len > 0);
  return sched_server_handle(proot, 1, msg, len);
}
static void from_leaf(unsigned type, uint64_t req, int32_t dest, int32_t status,
                      const void *fixed, const uint64_t *tail, uint32_t ntail) {
  REQUIRE_EQ(leaf_says(type, req, dest, status, fixed, tail, ntail), 0);
}

/* A region at the root with n children created on the leaf (the leaf's CREATED reports). */
static uint32_t root_region_with_leaf_kids(uint32_t n) {
  proto_ralloc ra = {.parent = 0, .level_hint = 0}; /* level 0: the root keeps it */
  nlog = 0;
  from_leaf(MSG_RALLOC, 1, PROTO_NO_DEST, 0, &ra, NULL, 0);
  proto_msg m;
  REQUIRE_EQ(proto_decode(sent_log[0].msg, sent_log[0].len, &m), 0);
  REQUIRE_EQ(m.h->status, 0);
  uint32_t top = (uint32_t)m.tail[0];
  for (uint32_t k = 0; k < n; k++) {
    proto_created c = {.rid = boot_grant.id_first + k, .parent = top};
    from_leaf(MSG_CREATED, 100 + k, 0, 0, &c, NULL, 0);
  }
  return top;
}

START_TEST(test_pack_asks_the_leaf_once_for_all_its_remote_children) {
  /* Before: one PACK per remote child, so packing the root of a big job was a storm of
   * thousands of messages. Now: one PACKV per next hop, naming them all. */
  uint32_t top = root_region_with_leaf_kids(200);
  nlog = 0;
  proto_rid pr = {.rid = top};
  from_leaf(MSG_PACK, 7, PROTO_NO_DEST, 0, &pr, NULL, 0);
  REQUIRE_EQ(nlog, 1);
  proto_msg m;
  REQUIRE_EQ(proto_decode(sent_log[0].msg, sent_log[0].len, &m), 0);
  REQUIRE_EQ(sent_log[0].to, 1);
  REQUIRE_EQ(m.h->type, MSG_PACKV);
  const proto_packv *v = m.fixed;
  REQUIRE_EQ(v->nreg, 200);
  REQUIRE_EQ(v->nobj, 0);
  REQUIRE_EQ(v->flags, PACKV_SKIP_GONE); /* a child freed meanwhile must not fail the pack */
  REQUIRE_EQ(m.ntail, 400); /* each child, then the parent it was found under */
  for (uint32_t k = 0; k < 200; k++) REQUIRE_EQ(m.tail[k], boot_grant.id_first + k);
  for (uint32_t k = 0; k < 200; k++) REQUIRE_EQ(m.tail[200 + k], top);
  REQUIRE_EQ(m.h->sched, 0); /* the answer comes back to the root */
  uint64_t part_req = m.h->req;
  /* the leaf answers with its ranges; the worker gets them with the root's, in one reply */
  uint64_t ranges[2] = {0x200000000000ull, 4096};
  proto_reply r = {.ntail = 2};
  nlog = 0;
  from_leaf(MSG_REPLY, part_req, 0, 0, &r, ranges, 2);
  REQUIRE_EQ(nlog, 1);
  REQUIRE_EQ(proto_decode(sent_log[0].msg, sent_log[0].len, &m), 0);
  REQUIRE_EQ(m.h->type, MSG_REPLY);
  REQUIRE_EQ(m.h->dest, 2); /* to the worker (through its leaf) */
  REQUIRE_EQ(m.h->req, 7);
  REQUIRE_EQ(m.h->status, 0);
  bool has_leaf_range = false;
  for (uint32_t i = 0; i + 1 < m.ntail; i += 2)
    has_leaf_range |= m.tail[i] == ranges[0] && m.tail[i + 1] == ranges[1];
  REQUIRE(has_leaf_range);
}
END_TEST

static void one_sent(proto_msg *m, int to);

/* Remote children are found by parent (kids.c): an rfree of one region at the root frees its
 * own remote children only, and a pack of another still names exactly its own. */
START_TEST(test_remote_children_are_found_by_their_parent) {
  uint32_t top1 = root_region_with_leaf_kids(0), top2 = root_region_with_leaf_kids(0);
  for (uint32_t k = 0; k < 100; k++) {
    proto_created c = {.rid = boot_grant.id_first + k, .parent = k % 2 ? top2 : top1};
    from_leaf(MSG_CREATED, 200 + k, 0, 0, &c, NULL, 0);
  }
  proto_created again = {.rid = boot_grant.id_first + 1, .parent = top1}; /* moves to top1 */
  from_leaf(MSG_CREATED, 300, 0, 0, &again, NULL, 0);
  proto_rid rf = {.rid = top1};
  nlog = 0;
  from_leaf(MSG_RFREE, 301, PROTO_NO_DEST, 0, &rf, NULL, 0);
  REQUIRE_EQ(nlog, 51); /* an RFREE part for each of top1's 51 children, nothing else yet */
  for (int i = 0; i < nlog; i++) {
    proto_msg m;
    REQUIRE_EQ(proto_decode(sent_log[i].msg, sent_log[i].len, &m), 0);
    REQUIRE_EQ(m.h->type, MSG_RFREE);
    const proto_rid *r = m.fixed;
    uint32_t k = r->rid - boot_grant.id_first;
    REQUIRE(k % 2 == 0 || k == 1);
    REQUIRE_EQ(r->parent1, top1 + 1);
  }
  proto_rid pr = {.rid = top2};
  nlog = 0;
  from_leaf(MSG_PACK, 302, PROTO_NO_DEST, 0, &pr, NULL, 0);
  proto_msg m;
  one_sent(&m, 1);
  const proto_packv *v = m.fixed;
  REQUIRE_EQ(v->nreg, 49); /* top2's odd children but the one that moved */
  for (uint32_t i = 0; i < v->nreg; i++) {
    uint32_t k = (uint32_t)m.tail[i] - boot_grant.id_first;
    REQUIRE(k % 2 == 1 && k != 1);
    REQUIRE_EQ(m.tail[v->nreg + i], top2);
  }
}
END_TEST

/* malloc, calloc or realloc fails once, at the alloc_fail_at-th call of any of them from when
 * it is set (-1: never): this test links with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,
 * so the scheduler's own calls come here. */
static long alloc_fail_at = -1;
static bool fail_now(void) {
  if (alloc_fail_at == 0) {
    alloc_fail_at = -1;
    return true;
  }
  if (alloc_fail_at > 0) alloc_fail_at--;
  return false;
}
void *__real_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n) { return fail_now() ? NULL : __real_realloc(p, n); }
void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size) { return fail_now() ? NULL : __real_calloc(n, size); }
void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_malloc(size_t n) { return fail_now() ? NULL : __real_malloc(n); }

/* A session of every kind of request two workers make (regions, a child region, objects of
 * many sizes, a batch, reallocations, frees, a lease and its hand-back, queries, a pack, region
 * frees), each answered with 0 or an errno; then both workers finalize. */
static void a_session(void) {
  uint64_t r1 = 0, r2 = 0, r3 = 0, addr[24] = {0}, t[64];
  size_t nt;
  proto_ralloc ra = {.parent = 0, .level_hint = -1};
  REQUIRE(ask(1, MSG_RALLOC, &ra, &r1) >= 0);
  proto_ralloc child = {.parent = (uint32_t)r1, .level_hint = -1};
  REQUIRE(ask(1, MSG_RALLOC, &child, &r2) >= 0);
  REQUIRE(ask(2, MSG_RALLOC, &ra, &r3) >= 0);
  for (int i = 0; i < 24; i++) {
    proto_alloc al = {.size = (uint64_t)24 << (i % 16), .rid = (uint32_t)(i % 3 ? r1 : r2), .n = 1};
    REQUIRE(ask(1, MSG_ALLOC, &al, &addr[i]) >= 0);
  }
  proto_alloc bal = {.size = 200, .rid = (uint32_t)r3, .n = 500};
  REQUIRE(ask(2, MSG_BALLOC, &bal, NULL) >= 0);
  for (int i = 0; i < 24; i += 3) {
    proto_realloc re = {.addr = addr[i], .size = 3000, .rid = (uint32_t)r1};
    REQUIRE(ask(1, MSG_REALLOC, &re, &addr[i]) >= 0);
  }
  for (int i = 1; i < 24; i += 2) {
    proto_addr q = {.addr = addr[i]};
    REQUIRE(ask(2, MSG_QUERY, &q, NULL) >= 0);
    REQUIRE(ask(1, MSG_FREE, &q, NULL) >= 0);
  }
  if (lease(1, (uint32_t)r1, 64, 8, t, &nt) == 0 && nt > 2) {
    uint64_t pairs[4] = {t[2], 1, nt > 3 ? t[3] : t[2], 0};
    proto_unlease u = {.n = nt > 3 ? 2 : 1};
    REQUIRE(ask_tail(1, MSG_UNLEASE, &u, pairs, 2 * u.n, t, 64, &nt) >= 0);
  }
  proto_rid pr = {.rid = (uint32_t)r1};
  REQUIRE(ask_tail(1, MSG_PACK, &pr, NULL, 0, t, 64, &nt) >= -1); /* may need more than 64 */
  proto_rid f2 = {.rid = (uint32_t)r2}, f3 = {.rid = (uint32_t)r3};
  REQUIRE(ask(1, MSG_RFREE, &f2, NULL) >= 0);
  REQUIRE(ask(2, MSG_RFREE, &f3, NULL) >= 0);
}

static void finalize_both(void) {
  unsigned char msg[64];
  for (int w = 1; w <= 2; w++) {
    size_t len = proto_build(msg, sizeof msg, MSG_FINALIZE, 1, w, PROTO_NO_DEST, 0, -1, NULL, NULL, 0);
    REQUIRE_EQ(sched_server_handle(srv, w, msg, len), 0);
  }
}

/* The session with the k-th allocation of the scheduler failing, for every k: every request is
 * answered (0 or an errno, never a crash), the server's own checks hold (Debug builds assert
 * them), and at shutdown every page and region ID is accounted for. */
START_TEST(test_every_allocation_failing_in_turn_loses_nothing) {
  bool untouched = false;
  long k = 0;
  for (; !untouched; k++) {
    teardown();
    setup();
    alloc_fail_at = k;
    a_session();
    untouched = alloc_fail_at > 0;
    alloc_fail_at = -1;
    finalize_both();
    REQUIRE(sched_server_done(srv));
    REQUIRE_EQ(sched_server_conservation(srv), 0);
  }
  REQUIRE(k > 2); /* some allocations failed (the metadata itself comes from the scheduler's own
                     pools, not malloc: this sweeps the heap allocations around it) */
}
END_TEST

/* Send a message from the leaf to the root with the k-th allocation failing; whether it made
 * fewer than k allocations (then nothing failed). */
static bool from_leaf_failing_at(long k, unsigned type, uint64_t req, const void *fixed) {
  nlog = 0;
  alloc_fail_at = k;
  from_leaf(type, req, PROTO_NO_DEST, 0, fixed, NULL, 0);
  bool untouched = alloc_fail_at > 0;
  alloc_fail_at = -1;
  return untouched;
}

/* An RFREE of a region with 40 remote children, its k-th allocation failing: the answer is ENOMEM
 * with nothing freed (freeing it again sends all 40 parts), or all 40 parts; never a free that
 * tells only some of its children (they would stay allocated on the leaf for good). */
START_TEST(test_an_rfree_out_of_memory_frees_nothing_or_tells_every_child) {
  enum { KIDS = 40 };
  bool untouched = false;
  for (long k = 0; !untouched; k++) {
    uint32_t top = root_region_with_leaf_kids(KIDS);
    proto_rid rf = {.rid = top};
    untouched = from_leaf_failing_at(k, MSG_RFREE, 400 + (uint64_t)k, &rf);
    if (nlog == 1) { /* the answer alone: ENOMEM, and the region still there */
      proto_msg m;
      REQUIRE_EQ(proto_decode(sent_log[0].msg, sent_log[0].len, &m), 0);
      REQUIRE_EQ(m.h->type, MSG_REPLY);
      REQUIRE_EQ(m.h->status, ENOMEM);
      nlog = 0;
      from_leaf(MSG_RFREE, 500 + (uint64_t)k, PROTO_NO_DEST, 0, &rf, NULL, 0);
    }
    REQUIRE_EQ(nlog, KIDS); /* an RFREE part for every child */
    for (int i = 0; i < nlog; i++) {
      proto_msg m;
      REQUIRE_EQ(proto_decode(sent_log[i].msg, sent_log[i].len, &m), 0);
      REQUIRE_EQ(m.h->type, MSG_RFREE);
    }
  }
}
END_TEST

/* A PACK of a region with 40 remote children, its k-th allocation failing: ENOMEM alone, or one
 * PACKV naming every child; never a pack that leaves some out (their bytes would not move). */
START_TEST(test_a_pack_out_of_memory_fails_or_names_every_child) {
  enum { KIDS = 40 };
  bool untouched = false;
  for (long k = 0; !untouched; k++) {
    uint32_t top = root_region_with_leaf_kids(KIDS);
    proto_rid pr = {.rid = top};
    untouched = from_leaf_failing_at(k, MSG_PACK, 600 + (uint64_t)k, &pr);
    proto_msg m;
    one_sent(&m, 1);
    if (m.h->type == MSG_REPLY) {
      REQUIRE_EQ(m.h->status, ENOMEM);
      continue;
    }
    REQUIRE_EQ(m.h->type, MSG_PACKV);
    REQUIRE_EQ(((const proto_packv *)m.fixed)->nreg, KIDS);
  }
}
END_TEST

START_TEST(test_a_failed_part_fails_the_whole_pack) {
  uint32_t top = root_region_with_leaf_kids(3);
  nlog = 0;
  proto_rid pr = {.rid = top};
  from_leaf(MSG_PACK, 8, PROTO_NO_DEST, 0, &pr, NULL, 0);
  REQUIRE_EQ(nlog, 1);
  proto_msg m;
  REQUIRE_EQ(proto_decode(sent_log[0].msg, sent_log[0].len, &m), 0);
  proto_reply r = {.ntail = 0};
  nlog = 0;
  from_leaf(MSG_REPLY, m.h->req, 0, E2BIG, &r, NULL, 0); /* too many ranges down there */
  REQUIRE_EQ(nlog, 1);
  REQUIRE_EQ(proto_decode(sent_log[0].msg, sent_log[0].len, &m), 0);
  REQUIRE_EQ(m.h->req, 8);
  REQUIRE_EQ(m.h->status, E2BIG); /* never a silently partial list of ranges */
}
END_TEST

START_TEST(test_packv_skips_gone_children_only_when_told) {
  /* The root owns IDs it never handed out: such a region does not exist. A worker's own
   * name must exist; a remote child the trie still names may be gone. */
  uint32_t top = root_region_with_leaf_kids(0);
  uint64_t names[4] = {top, boot_grant.id_first + boot_grant.id_count + 5, 0, 0}; /* + parents */
  proto_packv strict = {.nreg = 2}, lenient = {.nreg = 2, .flags = PACKV_SKIP_GONE},
              bad_flags = {.nreg = 1, .flags = 64};
  nlog = 0;
  from_leaf(MSG_PACKV, 9, PROTO_NO_DEST, 0, &strict, names, 2);
  proto_msg m;
  REQUIRE_EQ(nlog, 1);
  REQUIRE_EQ(proto_decode(sent_log[0].msg, sent_log[0].len, &m), 0);
  REQUIRE_EQ(m.h->status, ENOENT);
  nlog = 0; /* a part of the leaf's own event (only a scheduler may skip) */
  REQUIRE_EQ(leaf_part(MSG_PACKV, 10, PROTO_NO_DEST, 0, 1, &lenient, names, 4), 0);
  REQUIRE_EQ(nlog, 1);
  REQUIRE_EQ(proto_decode(sent_log[0].msg, sent_log[0].len, &m), 0);
  REQUIRE_EQ(m.h->status, 0);
  /* flags nobody defined: malformed between schedulers (dropped, nothing sent) */
  nlog = 0;
  REQUIRE_EQ(leaf_says(MSG_PACKV, 11, PROTO_NO_DEST, 0, &bad_flags, names, 1), EPROTO);
  REQUIRE_EQ(nlog, 0);
}
END_TEST


/* The root's messages since nlog was reset: exactly one, decoded into *m. */
static void one_sent(proto_msg *m, int to) {
  REQUIRE_EQ(nlog, 1);
  REQUIRE_EQ(sent_log[0].to, to);
  REQUIRE_EQ(proto_decode(sent_log[0].msg, sent_log[0].len, m), 0);
}

START_TEST(test_a_hand_over_across_schedulers_commits_only_after_every_part_checked) {
  uint32_t top = root_region_with_leaf_kids(3); /* worker 2's */
  uint64_t names[1] = {top};
  proto_packv v = {.nreg = 1, .flags = PACKV_HANDOVER, .peer = 3};
  nlog = 0;
  from_leaf(MSG_PACKV, 20, PROTO_NO_DEST, 0, &v, names, 1);
  proto_msg m;
  one_sent(&m, 1); /* the first round: the leaf checks and packs the remote children */
  const proto_packv *part = m.fixed;
  REQUIRE_EQ(part->flags, PACKV_HANDOVER | PACKV_SKIP_GONE);
  REQUIRE_EQ(part->peer, 3);
  proto_ralloc ra = {.parent = top, .level_hint = 0};
  REQUIRE_EQ(leaf_says(MSG_RALLOC, 21, PROTO_NO_DEST, 0, &ra, NULL, 0), 0); /* still worker 2's */
  uint64_t ranges[2] = {0x200000000000ull, 4096};
  proto_reply r = {.ntail = 2};
  nlog = 0;
  from_leaf(MSG_REPLY, m.h->req, 0, 0, &r, ranges, 2);
  one_sent(&m, 1); /* the second round: commit, no ranges */
  part = m.fixed;
  REQUIRE_EQ(part->flags, PACKV_HANDOVER | PACKV_SKIP_GONE | PACKV_COMMIT | PACKV_NO_RANGES);
  r.ntail = 0;
  nlog = 0;
  from_leaf(MSG_REPLY, m.h->req, 0, 0, &r, NULL, 0);
  one_sent(&m, 1);
  REQUIRE_EQ(m.h->type, MSG_REPLY);
  REQUIRE_EQ(m.h->dest, 2);
  REQUIRE_EQ(m.h->req, 20);
  REQUIRE_EQ(m.h->status, 0);
  bool has_leaf_range = false; /* the first round's ranges */
  for (uint32_t i = 0; i + 1 < m.ntail; i += 2)
    has_leaf_range |= m.tail[i] == ranges[0] && m.tail[i + 1] == ranges[1];
  REQUIRE(has_leaf_range);
  nlog = 0; /* worker 2 gave it away: its RALLOC under top is refused now */
  from_leaf(MSG_RALLOC, 22, PROTO_NO_DEST, 0, &ra, NULL, 0);
  one_sent(&m, 1);
  REQUIRE_EQ(m.h->status, EPERM);
}
END_TEST

START_TEST(test_a_hand_over_whose_part_is_refused_changes_no_holder) {
  uint32_t top = root_region_with_leaf_kids(3);
  uint64_t names[1] = {top};
  proto_packv v = {.nreg = 1, .flags = PACKV_HANDOVER, .peer = 3};
  nlog = 0;
  from_leaf(MSG_PACKV, 30, PROTO_NO_DEST, 0, &v, names, 1);
  proto_msg m;
  one_sent(&m, 1);
  proto_reply r = {.ntail = 0};
  nlog = 0;
  from_leaf(MSG_REPLY, m.h->req, 0, EPERM, &r, NULL, 0); /* a child down there is not 2's */
  one_sent(&m, 1); /* no commit round: the answer */
  REQUIRE_EQ(m.h->type, MSG_REPLY);
  REQUIRE_EQ(m.h->req, 30);
  REQUIRE_EQ(m.h->status, EPERM);
  proto_ralloc ra = {.parent = top, .level_hint = 0};
  nlog = 0;
  from_leaf(MSG_RALLOC, 31, PROTO_NO_DEST, 0, &ra, NULL, 0);
  one_sent(&m, 1);
  REQUIRE_EQ(m.h->status, 0); /* still worker 2's */
}
END_TEST


/* ---- packs of any size: replies in parts (PROTO_REPLY_MORE) ---- */

static void pack_teardown(void);
static void parts_setup(void) {
  pack_words = 4; /* two ranges a reply */
  pack_setup();
}
static void parts_teardown(void) {
  pack_words = 0;
  pack_teardown();
}

/* Worker 2 fills its region rid (at the root) with n objects of a slab and frees every other
 * one: n / 2 separate ranges, their addresses in kept (sorted). */
static size_t fragment_at_root(uint32_t rid, uint32_t n, uint64_t *kept) {
  proto_alloc b = {.size = 4096, .rid = rid, .n = n};
  nlog = 0;
  from_leaf(MSG_BALLOC, 40, PROTO_NO_DEST, 0, &b, NULL, 0);
  proto_msg m;
  one_sent(&m, 1);
  REQUIRE_EQ(m.h->status, 0);
  REQUIRE_EQ(m.ntail, n);
  uint64_t all[64];
  memcpy(all, m.tail, n * sizeof *all);
  for (uint32_t i = 1; i < n; i++) /* sort (insertion: n is small) */
    for (uint32_t j = i; j > 0 && all[j - 1] > all[j]; j--) {
      uint64_t t = all[j];
      all[j] = all[j - 1];
      all[j - 1] = t;
    }
  size_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (i % 2 == 1) {
      kept[k++] = all[i];
      continue;
    }
    proto_addr f = {.addr = all[i]};
    nlog = 0;
    from_leaf(MSG_FREE, 41 + i, PROTO_NO_DEST, 0, &f, NULL, 0);
    one_sent(&m, 1);
    REQUIRE_EQ(m.h->status, 0);
  }
  return k;
}

/* The root's replies to request req since nlog was reset, joined: every part but the last says
 * PROTO_REPLY_MORE and carries at most pack_words words. The number of parts. */
static int joined_reply(uint64_t req, uint64_t *w, uint32_t *nw, int *status) {
  int parts = 0;
  *nw = 0;
  for (int i = 0; i < nlog && i < LOG_MAX; i++) {
    proto_msg m;
    REQUIRE_EQ(proto_decode(sent_log[i].msg, sent_log[i].len, &m), 0);
    REQUIRE_EQ(m.h->type, MSG_REPLY);
    REQUIRE_EQ(m.h->req, req);
    REQUIRE(m.ntail <= pack_words);
    bool more = ((const proto_reply *)m.fixed)->flags & PROTO_REPLY_MORE;
    REQUIRE_EQ(more, i + 1 < nlog); /* the last one, and only it, ends the reply */
    memcpy(w + *nw, m.tail, m.ntail * sizeof *w);
    *nw += m.ntail;
    *status = m.h->status;
    parts++;
  }
  return parts;
}

START_TEST(test_a_pack_of_more_ranges_than_a_reply_carries_comes_in_parts) {
  uint32_t top = root_region_with_leaf_kids(2);
  uint64_t kept[16];
  size_t k = fragment_at_root(top, 12, kept); /* 6 ranges at the root */
  REQUIRE_EQ(k, 6);
  uint64_t names[1] = {top};
  proto_packv v = {.nreg = 1};
  nlog = 0;
  from_leaf(MSG_PACKV, 50, PROTO_NO_DEST, 0, &v, names, 1);
  proto_msg m;
  one_sent(&m, 1); /* the part for the children on the leaf */
  uint64_t part_req = m.h->req;
  /* the leaf answers in two parts: the first continues, and the root still waits */
  uint64_t lr[4] = {0x200000000000ull, 4096, 0x200000010000ull, 8192};
  proto_reply more = {.ntail = 2, .flags = PROTO_REPLY_MORE}, last = {.ntail = 2};
  nlog = 0;
  from_leaf(MSG_REPLY, part_req, 0, 0, &more, lr, 2);
  REQUIRE_EQ(nlog, 0);
  from_leaf(MSG_REPLY, part_req, 0, 0, &last, lr + 2, 2);
  uint64_t w[64];
  uint32_t nw;
  int st;
  REQUIRE_EQ(joined_reply(50, w, &nw, &st), 4); /* 8 ranges, 2 a reply */
  REQUIRE_EQ(st, 0);
  REQUIRE_EQ(nw, 16);
  for (uint32_t i = 2; i < nw; i += 2) REQUIRE(w[i] > w[i - 2] + w[i - 1]); /* sorted, apart */
  for (size_t i = 0; i < k; i++) {
    bool found = false;
    for (uint32_t j = 0; j < nw; j += 2) found |= w[j] == kept[i] && w[j + 1] == 4096;
    REQUIRE(found); /* each kept object a range of its own */
  }
  REQUIRE_EQ(w[nw - 4], lr[0]); /* the leaf's ranges, highest, last */
  REQUIRE_EQ(w[nw - 2], lr[2]);
}
END_TEST

START_TEST(test_a_hand_over_commits_only_after_the_last_part_of_every_part) {
  uint32_t top = root_region_with_leaf_kids(1);
  uint64_t kept[16];
  fragment_at_root(top, 8, kept);
  uint64_t names[1] = {top};
  proto_packv v = {.nreg = 1, .flags = PACKV_HANDOVER, .peer = 3};
  nlog = 0;
  from_leaf(MSG_PACKV, 60, PROTO_NO_DEST, 0, &v, names, 1);
  proto_msg m;
  one_sent(&m, 1);
  uint64_t part_req = m.h->req;
  uint64_t lr[2] = {0x200000000000ull, 4096};
  proto_reply more = {.ntail = 2, .flags = PROTO_REPLY_MORE}, last = {.ntail = 0};
  nlog = 0;
  from_leaf(MSG_REPLY, part_req, 0, 0, &more, lr, 2);
  REQUIRE_EQ(nlog, 0); /* no commit round yet: the part is not whole */
  proto_ralloc ra = {.parent = top, .level_hint = 0};
  REQUIRE_EQ(leaf_says(MSG_RALLOC, 61, PROTO_NO_DEST, 0, &ra, NULL, 0), 0);
  one_sent(&m, 1);
  REQUIRE_EQ(m.h->status, 0); /* still worker 2's */
  nlog = 0;
  from_leaf(MSG_REPLY, part_req, 0, 0, &last, NULL, 0);
  one_sent(&m, 1); /* now the commit round */
  REQUIRE_EQ(((const proto_packv *)m.fixed)->flags & PACKV_COMMIT, PACKV_COMMIT);
  uint64_t commit_req = m.h->req;
  nlog = 0;
  from_leaf(MSG_REPLY, commit_req, 0, 0, &last, NULL, 0);
  uint64_t w[64];
  uint32_t nw;
  int st;
  REQUIRE(joined_reply(60, w, &nw, &st) >= 3); /* 4 + 1 ranges (+ the child's pool) */
  REQUIRE_EQ(st, 0);
  nlog = 0;
  from_leaf(MSG_RALLOC, 62, PROTO_NO_DEST, 0, &ra, NULL, 0);
  one_sent(&m, 1);
  REQUIRE_EQ(m.h->status, EPERM); /* handed over */
}
END_TEST

START_TEST(test_a_child_created_under_an_id_another_worker_now_holds_is_undone) {
  /* Worker 3 asked for a child under its region, which it freed meanwhile; the ID went to
   * worker 2's top. The leaf's CREATED must not hang the child under worker 2's region. */
  uint32_t top = root_region_with_leaf_kids(0);
  uint32_t child = boot_grant.id_first + 7;
  proto_created c = {.rid = child, .parent = top};
  nlog = 0;
  REQUIRE_EQ(leaf_for(3, MSG_CREATED, 40, 0, 0, -1, &c, NULL, 0), 0);
  REQUIRE_EQ(nlog, 2); /* the undo (RFREE of the child, down to the leaf) and the answer */
  bool undone = false, refused = false;
  for (int i = 0; i < 2; i++) {
    proto_msg m;
    REQUIRE_EQ(proto_decode(sent_log[i].msg, sent_log[i].len, &m), 0);
    if (m.h->type == MSG_RFREE) {
      undone = ((const proto_rid *)m.fixed)->rid == child &&
               ((const proto_rid *)m.fixed)->parent1 == top + 1;
    }
    if (m.h->type == MSG_REPLY) refused = m.h->dest == 3 && m.h->status == ENOENT;
  }
  REQUIRE(undone && refused);
  proto_rid pr = {.rid = top}; /* worker 2's region packs alone: no foreign child under it */
  nlog = 0;
  from_leaf(MSG_PACK, 41, PROTO_NO_DEST, 0, &pr, NULL, 0);
  proto_msg m;
  one_sent(&m, 1);
  REQUIRE_EQ(m.h->type, MSG_REPLY);
  REQUIRE_EQ(m.h->status, 0);
}
END_TEST

/* A CREATED that names no worker (origin -1; only a forged one can) has nobody to answer: the
 * answer is dropped and counted, nothing goes to a rank outside the job, and the root still
 * serves (the fuzzer's created-no-origin: the answer's route read the tree at rank -1). */
START_TEST(test_a_created_that_names_no_worker_is_answered_to_nobody) {
  uint32_t top = root_region_with_leaf_kids(0);
  sched_stats before, after;
  sched_server_get_stats(proot, &before);
  for (int k = 0; k < 2; k++) { /* a parent the worker holds, then one it does not */
    proto_created c = {.rid = boot_grant.id_first + 20 + (uint32_t)k, .parent = k ? top + 99 : top};
    nlog = 0;
    leaf_for(-1, MSG_CREATED, 60 + (uint64_t)k, 0, 0, -1, &c, NULL, 0);
    for (int i = 0; i < nlog && i < LOG_MAX; i++)
      REQUIRE(sent_log[i].to >= 0 && sent_log[i].to < ptree.nranks);
  }
  sched_server_get_stats(proot, &after);
  REQUIRE_EQ(after.malformed, before.malformed + 2);
  proto_ralloc ra = {.parent = top, .level_hint = 0};
  nlog = 0;
  from_leaf(MSG_RALLOC, 62, PROTO_NO_DEST, 0, &ra, NULL, 0);
  proto_msg m;
  one_sent(&m, 1);
  REQUIRE_EQ(m.h->status, 0);
}
END_TEST

/* A request forwarded by the leaf in the name of a scheduler (origin names no worker) is
 * malformed and dropped with nothing sent: the root would place the region towards that
 * "worker", which is itself (the fuzzer's ralloc-origin-a-scheduler: an assertion). */
START_TEST(test_a_request_in_a_schedulers_name_is_dropped) {
  sched_stats before, after;
  sched_server_get_stats(proot, &before);
  proto_ralloc ra = {.parent = 0, .level_hint = 1}; /* a level below the root */
  for (int32_t who = 0; who <= 1; who++) {
    nlog = 0;
    REQUIRE_EQ(leaf_for(who, MSG_RALLOC, 70 + (uint64_t)who, PROTO_NO_DEST, 0, -1, &ra, NULL, 0),
               EPROTO);
    REQUIRE_EQ(nlog, 0);
  }
  sched_server_get_stats(proot, &after);
  REQUIRE_EQ(after.malformed, before.malformed + 2);
  nlog = 0;
  from_leaf(MSG_RALLOC, 72, PROTO_NO_DEST, 0, &ra, NULL, 0); /* worker 2's is placed */
  REQUIRE_EQ(nlog, 1);
}
END_TEST

START_TEST(test_an_rfree_part_for_a_child_whose_id_was_reused_frees_nothing) {
  uint32_t top = root_region_with_leaf_kids(0), other = root_region_with_leaf_kids(0);
  proto_rid part = {.rid = other, .parent1 = top + 1}; /* "free my child `other` of `top`" */
  nlog = 0;
  REQUIRE_EQ(leaf_part(MSG_RFREE, 50, PROTO_NO_DEST, 0, 1, &part, NULL, 0), 0);
  proto_msg m;
  one_sent(&m, 1);
  REQUIRE_EQ(m.h->status, 0); /* gone, as far as that event is concerned */
  proto_ralloc ra = {.parent = other, .level_hint = 0};
  nlog = 0;
  from_leaf(MSG_RALLOC, 51, PROTO_NO_DEST, 0, &ra, NULL, 0); /* and `other` lives on */
  one_sent(&m, 1);
  REQUIRE_EQ(m.h->status, 0);
}
END_TEST

static void pack_teardown(void) {
  sched_server_destroy(proot);
  sched_tree_free(&ptree);
}

/* ---- the shutdown report ---- */

/* Everything written to f, as a string (freed by the caller). */
static char *read_all(FILE *f) {
  long n = ftell(f);
  char *buf = malloc((size_t)n + 1);
  REQUIRE(buf != NULL);
  rewind(f);
  REQUIRE_EQ(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = '\0';
  return buf;
}

/* What a root reports under cfg at the end of a job: of one scheduler serving workers 1 and
 * 2 (one request served), or with lose set of a root whose two children return nothing. */
static char *report_of(sched_config cfg, bool lose) {
  sched_tree t;
  REQUIRE_EQ(lose ? sched_tree_heap(&t, 3, 2, 2) : sched_tree_heap(&t, 1, 2, 2), 0);
  cfg.log = tmpfile();
  REQUIRE(cfg.log != NULL);
  sched_server *s;
  REQUIRE_EQ(sched_server_create(&s, &t, 0, &cfg, (sched_transport){capture, NULL}), 0);
  sched_server_boot(s);
  unsigned char msg[128];
  if (lose) { /* children 1 and 2 return none of their pages and IDs */
    proto_return r = {0};
    for (int c = 1; c <= 2; c++) {
      size_t len = proto_build(msg, sizeof msg, MSG_RETURN, 0, -1, 0, 0, -1, &r, NULL, 0);
      REQUIRE_EQ(sched_server_handle(s, c, msg, len), 0);
    }
  } else {
    proto_ralloc ra = {.parent = 0, .level_hint = -1};
    size_t len = proto_build(msg, sizeof msg, MSG_RALLOC, 1, 1, PROTO_NO_DEST, 0, -1, &ra, NULL, 0);
    REQUIRE_EQ(sched_server_handle(s, 1, msg, len), 0);
    for (int w = 1; w <= 2; w++) {
      len = proto_build(msg, sizeof msg, MSG_FINALIZE, 2, w, PROTO_NO_DEST, 0, -1, NULL, NULL, 0);
      REQUIRE_EQ(sched_server_handle(s, w, msg, len), 0);
    }
  }
  REQUIRE(sched_server_done(s));
  REQUIRE_EQ(sched_server_conservation(s), lose ? -1 : 0);
  char *out = read_all(cfg.log);
  fclose(cfg.log);
  sched_server_destroy(s);
  sched_tree_free(&t);
  return out;
}

#define HINT "; ANTHEAP_STATS=table for every scheduler's row\n"

START_TEST(test_the_shutdown_report_is_a_line_a_table_a_file_or_nothing) {
  sched_config cfg = sched_config_default();
  cfg.report = SCHED_REPORT_SUMMARY;
  char *r = report_of(cfg, false);
  REQUIRE(strncmp(r, "antheapd: shutdown: nothing lost: all ", 38) == 0);
  REQUIRE(strstr(r, " back at the root; 1 request served by 1 scheduler" HINT) != NULL);
  REQUIRE(strchr(r, '\n')[1] == '\0'); /* one line */
  free(r);
  cfg.report = SCHED_REPORT_OFF;
  r = report_of(cfg, false);
  REQUIRE_EQ(strlen(r), 0);
  free(r);
  cfg.report = SCHED_REPORT_TABLE; /* the line, then a header and a row */
  r = report_of(cfg, false);
  REQUIRE(strstr(r, "served by 1 scheduler\n") && strstr(r, " rss_MiB\n") && !strstr(r, HINT));
  free(r);
  cfg.quiet = true; /* the simulator's: no table */
  r = report_of(cfg, false);
  REQUIRE(strstr(r, "served by 1 scheduler\n") && !strstr(r, "rss_MiB"));
  free(r);
  cfg.quiet = false;
  char path[] = "/tmp/antheap-test-server-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  cfg.report = SCHED_REPORT_SUMMARY;
  cfg.stats_csv = path;
  r = report_of(cfg, false);
  char want[128];
  snprintf(want, sizeof want, "1 scheduler; every scheduler's row in %s\n", path);
  REQUIRE(strstr(r, want) && !strstr(r, "rss_MiB"));
  free(r);
  FILE *csv = fopen(path, "r");
  char head[32] = "";
  REQUIRE(csv && fgets(head, sizeof head, csv));
  REQUIRE(strncmp(head, "rank,level,kind,", 16) == 0);
  fclose(csv);
  unlink(path);
}
END_TEST

START_TEST(test_a_loss_is_reported_whatever_the_setting) {
  sched_config cfg = sched_config_default();
  for (int k = 0; k < 3; k++) {
    cfg.report = k == 0 ? SCHED_REPORT_OFF : k == 1 ? SCHED_REPORT_SUMMARY : SCHED_REPORT_TABLE;
    char *r = report_of(cfg, true);
    REQUIRE(strstr(r, "antheapd: shutdown: MISSING: only ") != NULL);
    REQUIRE(strstr(r, "came back to the root; 0 requests served by 1 scheduler") != NULL);
    free(r);
  }
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("server");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_every_allocation_failing_in_turn_loses_nothing);
  tcase_add_test(tc, test_local_requests_are_served);
  tcase_add_test(tc, test_unknown_regions_and_wild_pointers_get_errors);
  tcase_add_test(tc, test_bad_input_is_counted_dropped_and_changes_nothing);
  tcase_add_test(tc, test_readable_requests_with_impossible_arguments_are_answered_not_dropped);
  tcase_add_test(tc, test_second_finalize_is_malformed_and_shutdown_checks_everything);
  tcase_add_test(tc, test_leaf_waits_for_a_pending_grant_before_returning);
  tcase_add_test(tc, test_lease_is_served_by_the_scheduler_holding_the_region);
  tcase_add_test(tc, test_lease_in_an_unknown_region_is_enoent);
  tcase_add_test(tc, test_unlease_hands_the_slabs_back_and_live_slots_become_objects);
  tcase_add_test(tc, test_unlease_by_another_worker_is_einval);
  tcase_add_test(tc, test_unlease_after_the_region_was_freed_drops_the_live_slots);
  tcase_add_test(tc, test_shutdown_after_every_lease_came_back_loses_nothing);
  tcase_add_test(tc, test_shutdown_takes_back_a_lease_nobody_returned);
  tcase_add_test(tc, test_requests_by_a_worker_that_does_not_hold_the_region_are_eperm);
  tcase_add_test(tc, test_a_hand_over_moves_the_subtree_to_the_peer_once_and_back_only_to_the_giver);
  tcase_add_test(tc, test_a_packv_a_worker_may_not_send_is_einval_and_changes_nothing);
  tcase_add_test(tc, test_an_owned_pack_covers_the_pools_and_only_the_holder_may_ask);
  suite_add_tcase(s, tc);
  TCase *tp = tcase_create("pack");
  tcase_add_checked_fixture(tp, pack_setup, pack_teardown);
  tcase_add_test(tp, test_pack_asks_the_leaf_once_for_all_its_remote_children);
  tcase_add_test(tp, test_a_failed_part_fails_the_whole_pack);
  tcase_add_test(tp, test_remote_children_are_found_by_their_parent);
  tcase_add_test(tp, test_an_rfree_out_of_memory_frees_nothing_or_tells_every_child);
  tcase_add_test(tp, test_a_pack_out_of_memory_fails_or_names_every_child);
  tcase_add_test(tp, test_packv_skips_gone_children_only_when_told);
  tcase_add_test(tp, test_a_hand_over_across_schedulers_commits_only_after_every_part_checked);
  tcase_add_test(tp, test_a_hand_over_whose_part_is_refused_changes_no_holder);
  tcase_add_test(tp, test_a_child_created_under_an_id_another_worker_now_holds_is_undone);
  tcase_add_test(tp, test_an_rfree_part_for_a_child_whose_id_was_reused_frees_nothing);
  tcase_add_test(tp, test_a_created_that_names_no_worker_is_answered_to_nobody);
  tcase_add_test(tp, test_a_request_in_a_schedulers_name_is_dropped);
  suite_add_tcase(s, tp);
  TCase *tq = tcase_create("parts");
  tcase_add_checked_fixture(tq, parts_setup, parts_teardown);
  tcase_add_test(tq, test_a_pack_of_more_ranges_than_a_reply_carries_comes_in_parts);
  tcase_add_test(tq, test_a_hand_over_commits_only_after_the_last_part_of_every_part);
  suite_add_tcase(s, tq);
  TCase *tr = tcase_create("report");
  tcase_add_test(tr, test_the_shutdown_report_is_a_line_a_table_a_file_or_nothing);
  tcase_add_test(tr, test_a_loss_is_reported_whatever_the_setting);
  suite_add_tcase(s, tr);
  return s;
}

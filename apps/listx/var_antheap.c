/* var_antheap.c: the antheap variants of listx. The list lives in one region. The exchange
 * moves the whole region with one sys_send and one sys_recv each way; the receiver walks the
 * list by its own pointers, which mean the same on every worker.
 *   antheap         one sys_alloc per node, as in the paper (a scheduler round trip each)
 *   antheap-balloc  sys_balloc, LX_BATCH nodes per call (the API's way to allocate many
 *                   objects of one size; the baselines carve nodes from one block too)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "antheap.h"
#include "bench.h"
#include "listx_mpi.h"

#define LX_BATCH 1024

static struct {
  rid_t region;
  lx_node *head;
  /* LISTX_PHASES=1: where a repetition's exchange went (ns), printed per worker at its end */
  int phases;
  double fetch, walk, back, rewalk;
  double slow_alloc, build;  /* LISTX_PHASES=3: the build, and its allocations over 2 us */
  double in_call[2][2];      /* LISTX_PHASES=3: [fetch, give back][sys_send, sys_recv] */
  int giving_back;
  long slow_allocs;
} A;

/* Build the list; batch: nodes per sys_balloc, or 0 for one sys_alloc per node. */
static int build(lx_ctx *c, int batch) {
  const char *ph = getenv("LISTX_PHASES");
  A.phases = ph ? atoi(ph) : 0;
  A.region = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  if (!A.region) return -1;
  lx_node *prev = NULL;
  void *got[LX_BATCH];
  A.head = NULL;
  double tb = A.phases > 2 ? bench_now_ns() : 0;
  for (long i = 0; i < c->o->nodes;) {
    int k = 1;
    double ta = A.phases > 2 ? bench_now_ns() : 0;
    if (batch) {
      k = c->o->nodes - i < batch ? (int)(c->o->nodes - i) : batch;
      if (sys_balloc(c->o->node_size, A.region, k, got)) return -1;
    } else if (!(got[0] = sys_alloc(c->o->node_size, A.region))) {
      return -1;
    }
    if (A.phases > 2) {
      double d = bench_now_ns() - ta;
      if (d > 2000) A.slow_alloc += d, A.slow_allocs++;
    }
    for (int j = 0; j < k; j++, i++) {
      lx_node *x = got[j];
      lx_init_node(c, x, (uint32_t)i);
      if (prev) prev->next = (uintptr_t)x;
      else A.head = x;
      prev = x;
    }
  }
  if (A.phases > 2) A.build = bench_now_ns() - tb;
  if (A.phases) { /* how far the list is from walking memory forwards */
    long forward = 0, back = 0, far = 0;
    for (lx_node *x = A.head; x && x->next; x = (lx_node *)x->next) {
      uintptr_t a = (uintptr_t)x, b = (uintptr_t)x->next;
      if (b == a + c->o->node_size) forward++;
      else if (b < a) back++;
      else far++;
    }
    fprintf(stderr, "listx: phases: worker %d rep %d: list links: %ld next-slot, %ld forward "
            "jumps, %ld backward jumps\n", c->me, c->rep, forward, far, back);
  }
  return 0;
}

static int ah_build(lx_ctx *c) { return build(c, 0); }
static int ah_build_balloc(lx_ctx *c) { return build(c, LX_BATCH); }

/* sys_send or sys_recv of one region and its head, timed under LISTX_PHASES=3. */
static int move_timed(int recv, int peer, rid_t *r, void **o) {
  double t = A.phases > 2 ? bench_now_ns() : 0;
  int rc = recv ? sys_recv(peer, r, 1, o, 1) : sys_send(peer, r, 1, o, 1);
  if (A.phases > 2) A.in_call[A.giving_back][recv] += bench_now_ns() - t;
  return rc;
}

/* One blocking pair: the lower worker sends first. */
static int swap(int me, int peer, rid_t *give_r, void **give_o, rid_t *get_r, void **get_o) {
  if (me < peer) {
    if (move_timed(0, peer, give_r, give_o)) return -1;
    return move_timed(1, peer, get_r, get_o);
  }
  if (move_timed(1, peer, get_r, get_o)) return -1;
  return move_timed(0, peer, give_r, give_o);
}

static int ah_exchange(lx_ctx *c, int peer) {
  rid_t mine = A.region, theirs;
  void *my_head = A.head, *their_head;
  double t0 = A.phases ? bench_now_ns() : 0, t1 = 0, t2 = 0;
  A.giving_back = 0;
  /* fetch: my list goes to the peer while its list comes to me */
  if (swap(c->me, peer, &mine, &my_head, &theirs, &their_head)) {
    fprintf(stderr, "listx: worker %d: sys_send/sys_recv with %d: %s\n", c->me, peer,
            sys_strerror(errno));
    return -1;
  }
  double tw = A.phases ? bench_now_ns() : 0;
  uint32_t i = 0;
  for (lx_node *x = their_head; x && i <= (uint32_t)c->o->nodes; x = (lx_node *)x->next, i++)
    lx_modify(c, x, peer, i);
  if (A.phases) t1 = bench_now_ns();
  if (A.phases == 2) { /* LISTX_PHASES=2: walk it again, reading only (is the first walk cold?) */
    uint64_t sum = 0;
    i = 0;
    for (lx_node *x = their_head; x && i <= (uint32_t)c->o->nodes; x = (lx_node *)x->next, i++)
      sum += x->visits;
    A.rewalk += bench_now_ns() - t1;
    if (sum == 0) c->bad++; /* every node was just visited */
    t1 = bench_now_ns();
  }
  /* give back */
  A.giving_back = 1;
  rid_t back;
  void *back_head;
  if (swap(c->me, peer, &theirs, &their_head, &back, &back_head)) {
    fprintf(stderr, "listx: worker %d: giving back to %d: %s\n", c->me, peer,
            sys_strerror(errno));
    return -1;
  }
  if (back != A.region || back_head != A.head) {
    fprintf(stderr, "listx: worker %d: worker %d gave back region %u head %p, not %u %p\n",
            c->me, peer, back, back_head, A.region, (void *)A.head);
    c->bad++;
  }
  if (A.phases) {
    t2 = bench_now_ns();
    A.fetch += tw - t0;
    A.walk += t1 - tw;
    A.back += t2 - t1;
  }
  return 0;
}

static const lx_node *ah_first(lx_ctx *c) {
  (void)c;
  return A.head;
}

static const lx_node *ah_next(lx_ctx *c, const lx_node *x) {
  (void)c;
  return (const lx_node *)x->next;
}

static void ah_release(lx_ctx *c) {
  if (A.phases)
    fprintf(stderr, "listx: phases: worker %d rep %d: fetch %.1f ms, walk %.1f ms, give back "
            "%.1f ms, second walk %.1f ms\n", c->me, c->rep, A.fetch * 1e-6, A.walk * 1e-6,
            A.back * 1e-6, A.rewalk * 1e-6);
  if (A.phases > 2)
    fprintf(stderr, "listx: phases: worker %d rep %d: build %.1f ms (%ld allocations over 2 us: "
            "%.1f ms); fetch: in sys_send %.1f ms, sys_recv %.1f ms; give back: %.1f, %.1f ms\n",
            c->me, c->rep, A.build * 1e-6, A.slow_allocs, A.slow_alloc * 1e-6,
            A.in_call[0][0] * 1e-6, A.in_call[0][1] * 1e-6, A.in_call[1][0] * 1e-6,
            A.in_call[1][1] * 1e-6);
  A.fetch = A.walk = A.back = A.rewalk = A.slow_alloc = A.build = 0;
  A.in_call[0][0] = A.in_call[0][1] = A.in_call[1][0] = A.in_call[1][1] = 0;
  A.slow_allocs = 0;
  if (sys_rfree(A.region))
    fprintf(stderr, "listx: worker %d: sys_rfree: %s\n", c->me, sys_strerror(errno));
  A.region = 0;
  A.head = NULL;
}

const lx_variant lx_antheap = {
    .name = "antheap",
    .build = ah_build,
    .exchange = ah_exchange,
    .first = ah_first,
    .next = ah_next,
    .release = ah_release,
};

const lx_variant lx_antheap_balloc = {
    .name = "antheap-balloc",
    .build = ah_build_balloc,
    .exchange = ah_exchange,
    .first = ah_first,
    .next = ah_next,
    .release = ah_release,
};

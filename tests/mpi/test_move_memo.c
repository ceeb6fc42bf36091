/* test_move_memo.c: random moves that follow the hand-over rule, for the move memo
 * (src/worker/memo.h). Workers hold bundles: a top region with up to two child regions, each
 * with a few stamped objects (some regions empty). In every round each worker meets a partner
 * (w ^ 1, then w ^ 2, ...) and one of the two, by turns, acts: it may change a bundle first
 * (allocate, free, add or free a child), then either hands a whole bundle over for good, lends
 * it (the partner may change it and sends it back), or lends one child alone (likewise). A
 * plain MPI message (the plan) tells the partner what comes and, after the moves, every
 * object's stamp is checked on the side that holds it. Run with ANTHEAP_MOVE_MEMO=check, every
 * range list the memo serves is packed too and a difference prints "move memo mismatch"
 * (ctest fails on it); the same walk runs with the memo on and off, shared and private.
 * Every worker counts; worker 0 prints "test_move_memo: N passed, M failed". */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "antheap.h"

#define CHECK_NAME "test_move_memo"
#include "worker_check.h"

enum { MAXREG = 3, MAXOBJ = 4, MAXBUNDLES = 16, ROUNDS = 200, TAG_PLAN = 77 };

/* A bundle: r[0] the top region, r[1..nr) its children; obj[i] the objects of r[i]. */
typedef struct {
  rid_t r[MAXREG];
  int nr;
  uint64_t *obj[MAXREG][MAXOBJ];
  int nobj[MAXREG];
} bundle;

typedef enum { GIVE, LEND, LEND_CHILD, NOTHING } action;

/* What the acting worker tells its partner before a move (and the partner before one back). */
typedef struct {
  int act;
  int child;      /* LEND_CHILD: which child */
  int nnamed;     /* objects named in the move */
  void *named[2];
  bundle b;       /* the bundle as it leaves */
} plan;

static bundle held[MAXBUNDLES];
static int nheld;
static unsigned seed;

static unsigned rnd(unsigned n) {
  seed = seed * 1103515245u + 12345u;
  return (seed >> 16) % n;
}

static uint64_t stamp(rid_t r, int i) { return (uint64_t)r << 32 | (uint64_t)i; }

/* A new stamped object in region i of b. */
static void add_object(bundle *b, int i) {
  if (b->nobj[i] == MAXOBJ) return;
  uint64_t *x = sys_alloc(64, b->r[i]);
  CHECK(x != NULL);
  if (!x) return;
  x[0] = stamp(b->r[i], b->nobj[i]);
  b->obj[i][b->nobj[i]++] = x;
}

static void new_bundle(void) {
  bundle *b = &held[nheld++];
  *b = (bundle){.nr = 1};
  b->r[0] = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  CHECK(b->r[0] != 0);
  for (int k = (int)rnd(3); k > 0; k--) add_object(b, 0);
}

/* Change b: an object more or less, a child more or less (children may stay empty). */
static void change(bundle *b, bool children_too) {
  int i = (int)rnd((unsigned)b->nr);
  switch (rnd(children_too ? 4 : 2)) {
    case 0: add_object(b, i); break;
    case 1:
      if (b->nobj[i]) {
        b->nobj[i]--;
        /* re-stamp nothing: the last object goes, the others keep their stamps */
        CHECK(sys_free(b->obj[i][b->nobj[i]]) == 0);
      }
      break;
    case 2:
      if (b->nr < MAXREG) {
        b->r[b->nr] = sys_ralloc(b->r[0], SYS_NO_LEVEL_HINT);
        CHECK(b->r[b->nr] != 0);
        b->nobj[b->nr++] = 0;
      }
      break;
    case 3:
      if (b->nr > 1) {
        b->nr--;
        CHECK(sys_rfree(b->r[b->nr]) == 0);
      }
      break;
  }
}

/* Every object of regions [from, to) of b carries its stamp. */
static void check_stamps(const bundle *b, int from, int to) {
  for (int i = from; i < to; i++)
    for (int k = 0; k < b->nobj[i]; k++) CHECK(b->obj[i][k][0] == stamp(b->r[i], k));
}

/* The names of a move of regions [from, to) of b: its first region, and up to 2 objects. */
static int named_objects(const bundle *b, int from, int to, void **objs) {
  int n = 0;
  for (int i = from; i < to && n < 2; i++)
    for (int k = 0; k < b->nobj[i] && n < 2; k++)
      if (rnd(2)) objs[n++] = b->obj[i][k];
  return n;
}

static void send_plan(int peer, const plan *p) {
  MPI_Send(p, (int)sizeof *p, MPI_BYTE, peer, TAG_PLAN, sys_comm());
}

static void recv_plan(int peer, plan *p) {
  MPI_Recv(p, (int)sizeof *p, MPI_BYTE, peer, TAG_PLAN, sys_comm(), MPI_STATUS_IGNORE);
}

/* Receive region r and the objects the plan names from peer. */
static void receive(int peer, rid_t r, const plan *p) {
  rid_t got = 0;
  void *o[2] = {NULL, NULL};
  CHECK(sys_recv(peer, &got, 1, o, p->nnamed) == 0);
  CHECK(got == r);
  for (int k = 0; k < p->nnamed; k++) CHECK(o[k] == p->named[k]);
}

/* The acting side of a round. */
static void act(int peer) {
  if (nheld == 0 || (nheld < MAXBUNDLES && !rnd(4))) new_bundle();
  int which = (int)rnd((unsigned)nheld);
  bundle *b = &held[which];
  if (rnd(2)) change(b, true);
  plan p = {.act = (int)rnd(3)};
  if (p.act == LEND_CHILD && b->nr == 1) p.act = LEND;
  if (p.act == GIVE && nheld == 1) p.act = LEND; /* keep one at hand */
  int from = 0, to = b->nr;
  if (p.act == LEND_CHILD) p.child = from = 1 + (int)rnd((unsigned)(b->nr - 1)), to = from + 1;
  p.nnamed = named_objects(b, from, to, p.named);
  p.b = *b;
  send_plan(peer, &p);
  rid_t r = b->r[from];
  CHECK(sys_send(peer, &r, 1, p.named, p.nnamed) == 0);
  if (p.act == GIVE) {
    held[which] = held[--nheld];
    return;
  }
  plan back;
  recv_plan(peer, &back);
  receive(peer, r, &back);
  *b = back.b;
  check_stamps(b, 0, b->nr);
}

/* Is x an object of regions [from, to) of b? */
static bool object_of(const bundle *b, int from, int to, const void *x) {
  for (int i = from; i < to; i++)
    for (int k = 0; k < b->nobj[i]; k++)
      if ((const void *)b->obj[i][k] == x) return true;
  return false;
}

/* The other side of a round. */
static void answer(int peer) {
  plan p;
  recv_plan(peer, &p);
  bundle b = p.b;
  bool child = p.act == LEND_CHILD;
  int from = child ? p.child : 0;
  rid_t r = b.r[from];
  receive(peer, r, &p);
  check_stamps(&b, from, child ? from + 1 : b.nr);
  if (p.act == GIVE) {
    if (nheld < MAXBUNDLES) held[nheld++] = b;
    else CHECK(sys_rfree(b.r[0]) == 0); /* no room: it is ours, free it */
    return;
  }
  if (rnd(2)) { /* change what was lent, inside what was lent */
    if (!child) change(&b, true);
    else if (rnd(2)) add_object(&b, from);
    else if (b.nobj[from]) CHECK(sys_free(b.obj[from][--b.nobj[from]]) == 0);
  }
  plan back = {.act = p.act, .child = p.child, .b = b};
  for (int k = 0; k < p.nnamed; k++) /* back go the named objects that still live */
    if (object_of(&b, from, child ? from + 1 : b.nr, p.named[k]))
      back.named[back.nnamed++] = p.named[k];
  send_plan(peer, &back);
  CHECK(sys_send(peer, &r, 1, back.named, back.nnamed) == 0);
}

int main(int argc, char **argv) {
  if (sys_init(&argc, &argv)) {
    fprintf(stderr, "test_move_memo: sys_init failed: %s\n", sys_strerror(errno));
    return 1;
  }
  int me = sys_worker_id(), n = sys_workers(), dims = 0;
  while ((1 << (dims + 1)) <= n) dims++;
  seed = 12345u + 7919u * (unsigned)me;
  for (int round = 0; dims && round < ROUNDS; round++) {
    int peer = me ^ (1 << (round % dims));
    if (peer >= n) continue; /* (workers past the largest power of two sit out) */
    bool acting = ((round / dims) % 2 == 0) == (me < peer);
    if (acting) act(peer);
    else answer(peer);
  }
  for (int i = 0; i < nheld; i++) {
    check_stamps(&held[i], 0, held[i].nr);
    CHECK(sys_rfree(held[i].r[0]) == 0);
  }
  int bad = check_summary(sys_comm(), "");
  sys_finalize();
  return bad ? 1 : 0;
}

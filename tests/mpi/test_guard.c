/* test_guard.c: ANTHEAP_CHECK=handover (src/worker/guard.c) in real jobs, 2 workers or more.
 *   (no option)       what the rule allows keeps working under the guard: a region sent and
 *                     sent back is read and written again; a region given away, freed by its
 *                     new holder and reused by the giver's own allocations; objects moved alone
 *                     (their slabs stay with the sender); a send the receiver refuses (the
 *                     region stays the sender's, writable); prints "test_guard: N passed, 0 failed";
 *   --stale-write     worker 0 writes into a region it has sent: the job must stop with the
 *                     guard's message (ctest looks for it);
 *   --stale-read      ... reads from it;
 *   --stale-give      ... writes into a region it gave away with sys_give. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "antheap.h"

#define CHECK_NAME "test_guard"
#include "worker_check.h"

typedef struct node {
  struct node *next;
  long value;
} node;

static int me;

static node *make_list(rid_t r, int n) {
  node *head = NULL;
  for (int i = 0; i < n; i++) {
    node *x = sys_alloc(sizeof *x, r);
    CHECK(x != NULL);
    if (!x) break;
    *x = (node){head, i};
    head = x;
  }
  return head;
}

static long sum_list(const node *x) {
  long s = 0;
  for (; x; x = x->next) s += x->value;
  return s;
}

static void legit(void) {
  enum { N = 3000 };
  if (me == 0) { /* there and back: read and write again after the return */
    rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    node *head = make_list(r, N);
    void *o = head;
    CHECK(sys_send(1, &r, 1, &o, 1) == 0);
    CHECK(sys_recv(1, &r, 1, &o, 1) == 0 && o == head);
    CHECK(sum_list(head) == -(long)N * (N - 1) / 2);
    head->value = 1;
    CHECK(sys_rfree(r) == 0);
  } else if (me == 1) {
    rid_t r;
    void *o;
    CHECK(sys_recv(0, &r, 1, &o, 1) == 0);
    for (node *x = o; x; x = x->next) x->value = -x->value;
    CHECK(sys_send(0, &r, 1, &o, 1) == 0);
  }
  sys_barrier();
  rid_t g = 0; /* given away, freed by the new holder, and its pages reused by the giver */
  if (me == 0) {
    g = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    CHECK(g != 0 && make_list(g, N) != NULL);
    CHECK(sys_give(1, &g, 1) == 0);
  }
  MPI_Bcast(&g, 1, MPI_UINT32_T, 0, sys_comm());
  if (me == 1) CHECK(sys_rfree(g) == 0);
  sys_barrier();
  if (me == 0) {
    rid_t again = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    for (int round = 0; round < 4; round++) { /* enough to land on the freed pages */
      node *head = make_list(again, N);
      CHECK(sum_list(head) == (long)N * (N - 1) / 2);
      char *big = sys_alloc(20000, again); /* a scheduler's object, not the cache's */
      CHECK(big != NULL);
      if (big) memset(big, 1, 20000);
    }
    CHECK(sys_rfree(again) == 0);
  }
  sys_barrier();
  if (me == 0) { /* a send the receiver refuses: the region stays ours, and so does writing */
    rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    node *head = make_list(r, N);
    void *o = head;
    CHECK(sys_send(1, &r, 1, &o, 1) == -1 && errno == ECONNREFUSED);
    head->value = 7; /* (the guard was set before the move: it must be gone) */
    CHECK(sum_list(head) == 7 + (long)(N - 1) * (N - 2) / 2);
    CHECK(sys_rfree(r) == 0);
  } else if (me == 1) {
    rid_t r[2];
    void *o;
    CHECK(sys_recv(0, r, 2, &o, 1) == -1 && errno == EINVAL); /* two regions expected */
  }
  sys_barrier();
  if (me == 0) { /* objects alone: their slabs stay ours, and so does writing there */
    rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    node *a = sys_alloc(sizeof *a, r), *b = sys_alloc(sizeof *b, r);
    CHECK(a && b);
    *a = (node){NULL, 5};
    void *o = a;
    CHECK(sys_send(1, NULL, 0, &o, 1) == 0);
    *b = (node){NULL, 6}; /* same slab, still ours */
    CHECK(sys_rfree(r) == 0);
  } else if (me == 1) {
    void *o;
    CHECK(sys_recv(0, NULL, 0, &o, 1) == 0 && ((node *)o)->value == 5);
  }
  sys_barrier();
}

/* Worker 0 hands a region over, then touches it; the guard must stop the job. */
static void stale(const char *how) {
  if (me == 0) {
    rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    node *head = make_list(r, 100);
    void *o = head;
    if (!strcmp(how, "--stale-give")) CHECK(sys_give(1, &r, 1) == 0);
    else CHECK(sys_send(1, &r, 1, &o, 1) == 0);
    fprintf(stderr, "test_guard: worker 0 touches region %u after handing it over\n", r);
    if (!strcmp(how, "--stale-read")) {
      volatile long v = head->next->value;
      (void)v;
    } else {
      head->next->value = 42;
    }
    fprintf(stderr, "test_guard: NOT STOPPED: the stale access went through\n");
  } else if (me == 1 && strcmp(how, "--stale-give")) {
    rid_t r;
    void *o;
    CHECK(sys_recv(0, &r, 1, &o, 1) == 0);
  }
  sys_barrier(); /* worker 0 never gets here */
}

int main(int argc, char **argv) {
  if (sys_init(&argc, &argv)) {
    fprintf(stderr, "test_guard: sys_init failed: %s\n", sys_strerror(errno));
    return 1;
  }
  me = sys_worker_id();
  if (sys_workers() < 2) {
    fprintf(stderr, "test_guard: needs 2 workers or more\n");
    sys_finalize();
    return 1;
  }
  if (argc > 1) stale(argv[1]);
  else legit();
  int bad = check_summary(sys_comm(), "");
  if (sys_finalize()) bad = 1;
  return bad ? 1 : 0;
}

/* test_handover.c: the hand-over rule (include/antheap.h) in real jobs. A region has one holder;
 * every call by another worker that would change it is EPERM and changes nothing:
 *   - the sender after a sys_send: alloc, balloc, free, realloc, ralloc, rfree, a second send
 *     (also of a descendant, or of an object in it), a give;
 *   - a third worker that never held it;
 *   - a move the receiver refuses: the regions come back to the sender;
 *   - sys_give hands regions over without moving them; the root region belongs to everyone;
 *   - a memo-served resend (shared GAS) is checked like any other;
 *   - a send the sender rejects itself (bad arguments, an interior pointer) tells the receiver.
 * --waits (run with small ANTHEAP_WAIT_WARN and ANTHEAP_WAIT_TIMEOUT): a sys_recv, a sys_barrier
 * and two workers sending to each other at once give up with ETIMEDOUT after a warning that
 * names the wait, and what was sent arrives when the peers come after all.
 * At least 3 workers (worker 0 sends, 1 receives, 2 watches); worker 0 prints the summary.
 * After it, worker 1 leaves first and worker 0's moves to it (channel 0 and the last channel)
 * come back ESHUTDOWN.
 * --mpi-finalize-only: the same tests, then MPI_Finalize without sys_finalize (the library
 * names the mistake and leaves the job cleanly instead of hanging it). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "antheap.h"

#define CHECK_NAME "test_handover"
#include "worker_check.h"

static int me, nw;
static MPI_Comm comm;

typedef struct node {
  struct node *next;
  long value;
} node;

/* A list of n nodes in r, the second half in r's child kid; its head. */
static node *make_list(rid_t r, rid_t kid, int n, long base) {
  node *head = NULL, *tail = NULL;
  for (int i = 0; i < n; i++) {
    node *x = sys_alloc(sizeof *x, i < n / 2 ? r : kid);
    CHECK(x != NULL);
    if (!x) break;
    *x = (node){NULL, base + i};
    if (tail) tail->next = x; else head = x;
    tail = x;
  }
  return head;
}

static long sum_list(const node *x) {
  long s = 0;
  for (; x; x = x->next) s += x->value;
  return s;
}

/* Everything a worker that does not hold r (with child kid and object o in it) may try. */
static void check_not_holder(rid_t r, rid_t kid, void *o, int peer) {
  void *v[4];
  CHECK(sys_alloc(64, r) == NULL && errno == EPERM);
  CHECK(sys_alloc(9000, kid) == NULL && errno == EPERM);
  CHECK(sys_balloc(64, r, 4, v) == -1 && errno == EPERM);
  CHECK(sys_free(o) == -1 && errno == EPERM);
  CHECK(sys_realloc(o, 200, SYS_SAME_REGION) == NULL && errno == EPERM);
  CHECK(sys_realloc(o, 16, SYS_SAME_REGION) == NULL && errno == EPERM); /* even in place */
  CHECK(sys_ralloc(r, SYS_NO_LEVEL_HINT) == 0 && errno == EPERM);
  CHECK(sys_ralloc(kid, SYS_NO_LEVEL_HINT) == 0 && errno == EPERM);
  CHECK(sys_rfree(kid) == -1 && errno == EPERM);
  CHECK(sys_rfree(r) == -1 && errno == EPERM);
  CHECK(sys_give(peer, &r, 1) == -1 && errno == EPERM);
  rid_t rr = 0;
  CHECK(sys_query(o, &rr, NULL) == 0 && (rr == r || rr == kid)); /* looking is allowed */
}

/* A send the sender refuses (EPERM): the peer's sys_recv hears ECANCELED. */
static void refused_send(int to, const rid_t *r, int nr, void *const *o, int no) {
  if (me == 0) {
    CHECK(sys_send(to, r, nr, o, no) == -1 && errno == EPERM);
  } else if (me == to) {
    rid_t got[2];
    void *obj[2];
    CHECK(sys_recv(0, got, nr, obj, no) == -1 && errno == ECANCELED);
  }
}

/* 1. Worker 0 builds, sends to worker 1, and may touch nothing of it afterwards. */
static void test_sender_after_send(void) {
  enum { N = 400 };
  rid_t ids[3] = {0, 0, 0}; /* r, kid, and r's object as a number */
  node *head = NULL;
  if (me == 0) {
    ids[0] = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    ids[1] = ids[0] ? sys_ralloc(ids[0], SYS_NO_LEVEL_HINT) : 0;
    CHECK(ids[0] && ids[1]);
    head = make_list(ids[0], ids[1], N, 100);
    void *o = head;
    CHECK(sys_send(1, ids, 1, &o, 1) == 0);
    check_not_holder(ids[0], ids[1], head, 1);
  } else if (me == 1) {
    rid_t r;
    void *o;
    CHECK(sys_recv(0, &r, 1, &o, 1) == 0);
    CHECK(sum_list(o) == (long)N * 100 + (long)N * (N - 1) / 2);
    node *x = sys_alloc(sizeof *x, r); /* the receiver's now */
    CHECK(x != NULL);
    if (x) *x = (node){o, 7};
    CHECK(sys_free(x) == 0);
  }
  MPI_Bcast(ids, 2, MPI_UINT32_T, 0, comm);
  uint64_t h = (uintptr_t)head;
  MPI_Bcast(&h, 1, MPI_UINT64_T, 0, comm);
  void *o = (void *)(uintptr_t)h;
  /* a second delivery, a descendant, an object in it: none leaves worker 0 */
  refused_send(1, ids, 1, &o, 1);
  refused_send(2, ids, 1, NULL, 0);
  refused_send(2, &ids[1], 1, NULL, 0);
  refused_send(2, NULL, 0, &o, 1);
  MPI_Barrier(comm);
  if (me == 2) check_not_holder(ids[0], ids[1], o, 0); /* never held it */
  MPI_Barrier(comm);
  if (me == 1) CHECK(sys_rfree(ids[0]) == 0);
  MPI_Barrier(comm);
}

/* 2. A move the receiver refuses hands the regions back to the sender. */
static void test_refused_move_comes_back(void) {
  if (me == 0) {
    rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    node *head = make_list(r, r, 50, 0);
    void *o = head;
    CHECK(sys_send(1, &r, 1, &o, 1) == -1 && errno == ECONNREFUSED);
    CHECK(sum_list(head) == 50 * 49 / 2);
    CHECK(sys_alloc(64, r) != NULL); /* still worker 0's */
    int go;
    MPI_Recv(&go, 1, MPI_INT, 1, 1, comm, MPI_STATUS_IGNORE);
    CHECK(sys_rfree(r) == 0);
  } else if (me == 1) {
    rid_t r[2];
    void *o;
    CHECK(sys_recv(0, r, 2, &o, 1) == -1 && errno == EINVAL); /* counts that differ */
    int go = 1;
    MPI_Send(&go, 1, MPI_INT, 0, 1, comm);
  }
  MPI_Barrier(comm);
}

/* 3. sys_give hands a region over without moving it; the root region is everyone's. */
static void test_give(void) {
  rid_t r = 0;
  if (me == 0) {
    r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    CHECK(r != 0 && sys_alloc(100, r) != NULL);
    CHECK(sys_give(0, &r, 1) == -1 && errno == EINVAL); /* to itself */
    CHECK(sys_give(nw, &r, 1) == -1 && errno == EINVAL); /* to nobody */
    rid_t root = SYS_ROOT_REGION;
    CHECK(sys_give(1, &root, 1) == -1 && errno == EPERM);
    CHECK(sys_give(1, &r, 1) == 0);
    CHECK(sys_alloc(64, r) == NULL && errno == EPERM);
  }
  MPI_Bcast(&r, 1, MPI_UINT32_T, 0, comm); /* after the give: worker 1 may act on it now */
  if (me == 1) {
    rid_t kid = sys_ralloc(r, SYS_NO_LEVEL_HINT);
    CHECK(kid != 0 && sys_alloc(64, kid) != NULL);
    CHECK(sys_rfree(r) == 0);
  }
  char *mine = sys_alloc(64, SYS_ROOT_REGION); /* the root: everyone allocates there */
  CHECK(mine != NULL);
  uint64_t a = (uintptr_t)mine, left = 0;
  MPI_Sendrecv(&a, 1, MPI_UINT64_T, (me + 1) % nw, 2, &left, 1, MPI_UINT64_T, (me + nw - 1) % nw,
               2, comm, MPI_STATUS_IGNORE);
  sys_barrier(); /* flushed: the left neighbour's object is the schedulers' */
  CHECK(sys_free((void *)(uintptr_t)left) == 0); /* and anyone frees in the root */
  MPI_Barrier(comm);
}

/* 4. A child handed over alone: its parent's holder may not send or free the parent, and gets
 * nothing of the child; the child comes back with a move. */
static void test_child_handed_alone(void) {
  rid_t ids[2] = {0, 0};
  if (me == 0) {
    ids[0] = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    ids[1] = sys_ralloc(ids[0], SYS_NO_LEVEL_HINT);
    CHECK(ids[0] && ids[1] && sys_alloc(64, ids[1]) != NULL);
    CHECK(sys_send(1, &ids[1], 1, NULL, 0) == 0);
    CHECK(sys_alloc(64, ids[0]) != NULL); /* the parent is still worker 0's */
    CHECK(sys_rfree(ids[0]) == -1 && errno == EPERM); /* but not all of its subtree */
  } else if (me == 1) {
    rid_t k;
    CHECK(sys_recv(0, &k, 1, NULL, 0) == 0);
    CHECK(sys_alloc(64, k) != NULL);
  }
  refused_send(2, ids, 1, NULL, 0); /* the parent with a child worker 1 holds */
  if (me == 1) {
    rid_t k = 0;
    MPI_Recv(&k, 1, MPI_UINT32_T, 0, 3, comm, MPI_STATUS_IGNORE);
    CHECK(sys_send(0, &k, 1, NULL, 0) == 0); /* back home */
  } else if (me == 0) {
    MPI_Send(&ids[1], 1, MPI_UINT32_T, 1, 3, comm);
    rid_t k;
    CHECK(sys_recv(1, &k, 1, NULL, 0) == 0 && k == ids[1]);
    CHECK(sys_rfree(ids[0]) == 0); /* the whole subtree is worker 0's again */
  }
  MPI_Barrier(comm);
}

/* 5. Received and passed on unchanged (the move memo, on a shared GAS): once, not twice. */
static void test_memo_resend(void) {
  if (me == 0) {
    rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    node *head = make_list(r, r, 30, 5);
    void *o = head;
    CHECK(sys_send(1, &r, 1, &o, 1) == 0);
  } else if (me == 1) {
    rid_t r;
    void *o;
    CHECK(sys_recv(0, &r, 1, &o, 1) == 0);
    CHECK(sys_send(2, &r, 1, &o, 1) == 0); /* unchanged: the memo serves it where it may */
    CHECK(sys_send(2, &r, 1, &o, 1) == -1 && errno == EPERM);
  } else if (me == 2) {
    rid_t r;
    void *o;
    CHECK(sys_recv(1, &r, 1, &o, 1) == 0);
    CHECK(sum_list(o) == 30 * 5 + 30 * 29 / 2);
    CHECK(sys_recv(1, &r, 1, &o, 1) == -1 && errno == ECANCELED);
    CHECK(sys_rfree(r) == 0);
  }
  MPI_Barrier(comm);
}

/* 6. Sends the sender rejects itself tell the receiver (it would wait for ever otherwise). */
static void test_rejected_sends_tell_the_receiver(void) {
  rid_t r = 0;
  if (me == 0) {
    r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    char *o = sys_alloc(256, r);
    CHECK(o != NULL);
    void *interior = o + 64;
    CHECK(sys_send(1, &r, 1, NULL, 1) == -1 && errno == EINVAL); /* objects NULL, 1 named */
    CHECK(sys_send(1, NULL, 0, &interior, 1) == -1 && errno == EINVAL); /* not an object's start */
    CHECK(sys_send(1, &r, -1, NULL, 0) == -1 && errno == EINVAL);
    CHECK(sys_rfree(r) == 0); /* nothing was handed over */
  } else if (me == 1) {
    rid_t got;
    void *obj;
    for (int i = 0; i < 3; i++) CHECK(sys_recv(0, &got, 1, &obj, 1) == -1 && errno == ECANCELED);
  }
  MPI_Barrier(comm);
}

/* --waits: nothing comes, a barrier waits for a late worker, two workers send to each other. */
static void test_waits(void) {
  rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT), got = 0;
  CHECK(r != 0);
  if (me == 0) { /* worker 1 sends nothing yet */
    CHECK(sys_recv(1, &got, 1, NULL, 0) == -1 && errno == ETIMEDOUT);
  }
  MPI_Barrier(comm);
  if (me == 1) usleep(1400000); /* the others give up, then wait for the same barrier again */
  int rc = sys_barrier();
  if (me != 1) {
    CHECK(rc == -1 && errno == ETIMEDOUT);
    CHECK(sys_barrier() == 0);
  } else {
    CHECK(rc == 0);
  }
  MPI_Barrier(comm);
  if (me < 2) { /* both send at once: both give up; each then receives what the other sent */
    int peer = 1 - me;
    CHECK(sys_send(peer, &r, 1, NULL, 0) == -1 && errno == ETIMEDOUT);
    usleep(500000); /* the other gives up too before this one answers its move */
    CHECK(sys_recv(peer, &got, 1, NULL, 0) == 0 && got != r && got != 0);
    CHECK(sys_alloc(64, got) != NULL); /* handed over all the same */
    CHECK(sys_alloc(64, r) == NULL && errno == EPERM);
    r = got;
  }
  MPI_Barrier(comm);
  CHECK(sys_rfree(r) == 0);
}

/* After the summary: worker 1 leaves at once; worker 0's moves to it, on channel 0 and on
 * another, are refused with ESHUTDOWN, and the region stays worker 0's. */
static int late_check(void) {
  if (me != 0) return 0;
  rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  int bad = !r || sys_send(1, &r, 1, NULL, 0) != -1 || errno != ESHUTDOWN;
  bad |= sys_send_on(1, SYS_MOVE_CHANNELS - 1, &r, 1, NULL, 0) != -1 || errno != ESHUTDOWN;
  bad |= !sys_alloc(64, r) || sys_rfree(r);
  printf("test_handover: a move to a worker that left: %s\n",
         bad ? "late check failed (expected ESHUTDOWN and the region back)" : "ESHUTDOWN, region back");
  return bad;
}

int main(int argc, char **argv) {
  if (sys_init(&argc, &argv)) {
    fprintf(stderr, "test_handover: sys_init failed: %s\n", sys_strerror(errno));
    return 1;
  }
  me = sys_worker_id();
  nw = sys_workers();
  comm = sys_comm();
  if (nw < 3) {
    if (me == 0) fprintf(stderr, "test_handover: needs 3 workers or more (has %d)\n", nw);
    sys_finalize();
    return 1;
  }
  bool waits = argc > 1 && !strcmp(argv[1], "--waits");  /* else: every test */
  if (waits) {
    test_waits();
  } else {
    test_sender_after_send();
    test_refused_move_comes_back();
    test_give();
    test_child_handed_alone();
    test_memo_resend();
    test_rejected_sends_tell_the_receiver();
  }
  int bad = check_summary(comm, "");
  if (argc > 1 && !strcmp(argv[1], "--mpi-finalize-only")) { /* the mistake the library catches */
    MPI_Finalize();
    return bad ? 1 : 0;
  }
  if (!waits) bad |= late_check();
  if (sys_finalize()) bad = 1;
  return bad ? 1 : 0;
}

/* var_antheap_threads.c: the hybrid antheap variants of listx (issue 34): every worker rank
 * runs --threads T threads, and each thread is one worker of the benchmark, worker
 * rank * T + thread, doing exactly what a single-threaded antheap worker does (the same lists,
 * partners, modifications and verification; the driver in listx.c runs in every thread).
 *   antheap-threads         one sys_alloc per node
 *   antheap-balloc-threads  sys_balloc, LXT_BATCH nodes per call
 * Each thread builds its list in a region of its own (sys_ralloc, then its own allocation
 * cache). The exchange with a partner:
 *   - in the same rank: the partner's head is read from a table the threads share (a pointer
 *     handed over inside the process). The regions are the rank's either way, so no sys_send:
 *     the owner leaves its list alone during the stage (it walks the partner's), the partner
 *     modifies it, and the stage's barrier gives it back.
 *   - in another rank: a swap of the region and its head each way (the lower worker sends,
 *     then receives), from the thread, as the single-threaded variant does, on a channel of
 *     its own (sys_send_on / sys_recv_on): in stage s, the m pairs of threads that cross
 *     between ranks A < B are numbered k = 0..m-1 by their worker in A, and pair k moves on
 *     channel k, which both ranks derive from the schedule. So every pair moves at the same
 *     time as the others, between one pair of ranks as between different ones.
 * The driver's barriers and reductions (lx_rt) become collectives of all threads of all
 * ranks: a barrier of the rank's threads, then one thread's MPI call on the workers'
 * communicator, then the threads' barrier again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "antheap.h"
#include "bench.h"
#include "listx_mpi.h"

#define LXT_BATCH 1024

/* The bundled variant's meeting point of a rank pair: the stage it counts for, and the lists
 * its crossing pairs put together, indexed by pair number k. */
typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  long epoch; /* rep * stages + stage of the current count (-1: none yet) */
  int arrived, walked;   /* pairs whose list is in give[], whose walk is done */
  int fetched, returned; /* the leader's swaps: 0 not yet, 1 done, -1 failed */
  rid_t *give_r, *got_r, *back_r;
  void **give_o, **got_o, **back_o;
} lxt_bundle;

static struct {
  int T;               /* threads per rank */
  int rank, nranks;    /* this worker rank, the worker ranks */
  const lx_opts *o;
  const lx_variant *v;
  lx_rt base;          /* the runtime as given (the ranks') */
  pthread_barrier_t bar;
  double *dv;          /* per thread: a reduction's operands */
  long *lv;
  double dres;
  long lres;
  lx_node **heads;     /* per thread: its list's head (for partners in this rank) */
  lxt_bundle *bundles; /* the bundled variant's, per other worker rank */
  int *status;         /* per thread: lx_run's */
} H;

static _Thread_local int lxt_tid;

/* ---- the runtime: collectives of every thread of every rank --------------------------- */

static void lxt_barrier(void) {
  pthread_barrier_wait(&H.bar);
  if (lxt_tid == 0) H.base.barrier();
  pthread_barrier_wait(&H.bar);
}

static double lxt_max(double v) {
  H.dv[lxt_tid] = v;
  pthread_barrier_wait(&H.bar);
  if (lxt_tid == 0) {
    double m = H.dv[0];
    for (int t = 1; t < H.T; t++)
      if (H.dv[t] > m) m = H.dv[t];
    H.dres = H.base.max(m);
  }
  pthread_barrier_wait(&H.bar);
  return H.dres; /* written again only after the next call's first barrier */
}

static long lxt_sum(long v) {
  H.lv[lxt_tid] = v;
  pthread_barrier_wait(&H.bar);
  if (lxt_tid == 0) {
    long s = 0;
    for (int t = 0; t < H.T; t++) s += H.lv[t];
    H.lres = H.base.sum(s);
  }
  pthread_barrier_wait(&H.bar);
  return H.lres;
}

/* ---- the variant ------------------------------------------------------------------------ */

typedef struct {
  rid_t region;
  lx_node *head;
  /* LISTX_PHASES=1: a repetition's exchange (ns), printed per worker at its end: waiting for
   * the other pairs (bundled), in sys_send/sys_recv, walking a list in this rank, in another */
  int phases;
  double wait, move, walk_local, walk_remote;
  int local, remote; /* stages with a partner in this rank, in another */
} lxt_state;

static int lxt_setup(lx_ctx *c) {
  lxt_state *st = calloc(1, sizeof *st);
  c->priv = st;
  const char *ph = getenv("LISTX_PHASES");
  if (st) st->phases = ph ? atoi(ph) : 0;
  return st ? 0 : -1;
}

static double now(const lxt_state *st) { return st->phases ? bench_now_ns() : 0; }

static void lxt_teardown(lx_ctx *c) {
  free(c->priv);
  c->priv = NULL;
}

static int build(lx_ctx *c, int batch) {
  lxt_state *st = c->priv;
  st->region = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  if (!st->region) return -1;
  lx_node *prev = NULL;
  void *got[LXT_BATCH];
  st->head = NULL;
  for (long i = 0; i < c->o->nodes;) {
    int k = 1;
    if (batch) {
      k = c->o->nodes - i < batch ? (int)(c->o->nodes - i) : batch;
      if (sys_balloc(c->o->node_size, st->region, k, got)) return -1;
    } else if (!(got[0] = sys_alloc(c->o->node_size, st->region))) {
      return -1;
    }
    for (int j = 0; j < k; j++, i++) {
      lx_node *x = got[j];
      lx_init_node(c, x, (uint32_t)i);
      if (prev) prev->next = (uintptr_t)x;
      else st->head = x;
      prev = x;
    }
  }
  H.heads[lxt_tid] = st->head; /* read by partners in this rank after the build's barrier */
  return 0;
}

static int lxt_build(lx_ctx *c) { return build(c, 0); }
static int lxt_build_balloc(lx_ctx *c) { return build(c, LXT_BATCH); }

/* The pair (me, peer) of ranks lo < hi in stage s: its number k among the rank pair's
 * crossing pairs (ordered by their worker in lo), and their count m. */
static void cross_order(int me, int peer, int n, int s, int *k, int *m) {
  int T = H.T, lo = me < peer ? me : peer, hi_rank = (me < peer ? peer : me) / T;
  int first = lo / T * T;
  *k = *m = 0;
  for (int w = first; w < first + T && w < n; w++) {
    int p = lx_partner(w, n, s);
    if (p < 0 || p / T != hi_rank) continue;
    if (w < lo) ++*k;
    ++*m;
  }
}

/* One swap of n regions and objects with worker rank `rank` on a channel: the side that sends
 * first (the lower worker) sends, then receives; the other receives, then sends. */
static int swap(bool send_first, int rank, int channel, rid_t *give_r, void **give_o,
                rid_t *get_r, void **get_o, int n) {
  if (send_first) {
    if (sys_send_on(rank, channel, give_r, n, give_o, n)) return -1;
    return sys_recv_on(rank, channel, get_r, n, get_o, n);
  }
  if (sys_recv_on(rank, channel, get_r, n, get_o, n)) return -1;
  return sys_send_on(rank, channel, give_r, n, give_o, n);
}

static void modify_all(lx_ctx *c, lx_node *head, int peer) {
  uint32_t i = 0;
  for (lx_node *x = head; x && i <= (uint32_t)c->o->nodes; x = (lx_node *)x->next, i++)
    lx_modify(c, x, peer, i);
}

static int lxt_exchange(lx_ctx *c, int peer) {
  lxt_state *st = c->priv;
  int T = H.T, prank = peer / T;
  if (prank == H.rank) { /* in this rank: the pointer; the stage's barrier gives it back */
    lx_node *theirs = H.heads[peer % T];
    if (!theirs) {
      fprintf(stderr, "listx: worker %d: worker %d of this rank has no list\n", c->me, peer);
      return -1;
    }
    double t0 = now(st);
    modify_all(c, theirs, peer);
    st->walk_local += now(st) - t0;
    st->local++;
    return 0;
  }
  int k, m; /* the pair's number among the rank pair's crossing pairs: its channel */
  cross_order(c->me, peer, c->n, c->stage, &k, &m);
  if (k >= SYS_MOVE_CHANNELS) {
    fprintf(stderr, "listx: worker %d: more than %d threads a rank cross to one rank\n", c->me,
            SYS_MOVE_CHANNELS);
    return -1;
  }
  rid_t mine = st->region, theirs, back;
  void *my_head = st->head, *their_head, *back_head;
  double t1 = now(st);
  int rc = swap(c->me < peer, prank, k, &mine, &my_head, &theirs, &their_head, 1);
  double t2 = now(st);
  if (rc) {
    fprintf(stderr, "listx: worker %d: sys_send/sys_recv with %d (rank %d): %s\n", c->me, peer,
            prank, sys_strerror(errno));
    return -1;
  }
  modify_all(c, their_head, peer);
  double t3 = now(st);
  rc = swap(c->me < peer, prank, k, &theirs, &their_head, &back, &back_head, 1);
  if (st->phases) {
    double t5 = now(st);
    st->move += (t2 - t1) + (t5 - t3);
    st->walk_remote += t3 - t2;
    st->remote++;
  }
  if (rc) {
    fprintf(stderr, "listx: worker %d: giving back to %d (rank %d): %s\n", c->me, peer, prank,
            sys_strerror(errno));
    return -1;
  }
  if (back != st->region || back_head != st->head) {
    fprintf(stderr, "listx: worker %d: worker %d gave back region %u head %p, not %u %p\n",
            c->me, peer, back, back_head, st->region, (void *)st->head);
    c->bad++;
  }
  return 0;
}

/* antheap-threads-bundled: the crossing pairs of a rank pair in a stage move their lists
 * together, one swap of all m regions (and heads) each way to fetch and one to give back, made
 * by the threads of pair 0 (the leaders) for all of them: 4 moves a rank pair and stage,
 * against 4m on m channels. The others put their list in, wait for the fetch, walk the partner's
 * list, and wait for the give-back. Not "a move from the thread" any more: a comparison. */
static int lxt_exchange_bundled(lx_ctx *c, int peer) {
  lxt_state *st = c->priv;
  int T = H.T, prank = peer / T;
  if (prank == H.rank) return lxt_exchange(c, peer); /* by pointer, as there */
  int k, m;
  cross_order(c->me, peer, c->n, c->stage, &k, &m);
  long epoch = (long)c->rep * lx_run_stages(c->o, c->n) + c->stage;
  lxt_bundle *b = &H.bundles[prank];
  int lower = H.rank < prank;
  double t0 = now(st), t1, t2, t3, t4;
  pthread_mutex_lock(&b->mu);
  if (b->epoch != epoch) {
    b->epoch = epoch;
    b->arrived = b->walked = b->fetched = b->returned = 0;
  }
  b->give_r[k] = st->region;
  b->give_o[k] = st->head;
  b->arrived++;
  pthread_cond_broadcast(&b->cv);
  if (k == 0) { /* the leader: fetch for all */
    while (b->arrived < m) pthread_cond_wait(&b->cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
    t1 = now(st);
    int rc = swap(lower, prank, 0, b->give_r, b->give_o, b->got_r, b->got_o, m);
    if (rc)
      fprintf(stderr, "listx: worker %d: the bundled fetch with rank %d: %s\n", c->me, prank,
              sys_strerror(errno));
    t2 = now(st);
    pthread_mutex_lock(&b->mu);
    b->fetched = rc ? -1 : 1;
    pthread_cond_broadcast(&b->cv);
  } else {
    while (!b->fetched) pthread_cond_wait(&b->cv, &b->mu);
    t1 = t2 = now(st);
  }
  int ok = b->fetched > 0;
  lx_node *theirs = ok ? b->got_o[k] : NULL;
  pthread_mutex_unlock(&b->mu);
  if (!ok) return -1;
  modify_all(c, theirs, peer);
  t3 = now(st);
  pthread_mutex_lock(&b->mu);
  b->walked++;
  pthread_cond_broadcast(&b->cv);
  if (k == 0) { /* give every list back */
    while (b->walked < m) pthread_cond_wait(&b->cv, &b->mu);
    pthread_mutex_unlock(&b->mu);
    t4 = now(st);
    int rc = swap(lower, prank, 0, b->got_r, b->got_o, b->back_r, b->back_o, m);
    if (rc)
      fprintf(stderr, "listx: worker %d: the bundled give-back with rank %d: %s\n", c->me,
              prank, sys_strerror(errno));
    pthread_mutex_lock(&b->mu);
    b->returned = rc ? -1 : 1;
    pthread_cond_broadcast(&b->cv);
  } else {
    while (!b->returned) pthread_cond_wait(&b->cv, &b->mu);
    t4 = now(st);
  }
  ok = b->returned > 0;
  rid_t back = ok ? b->back_r[k] : 0;
  void *back_head = ok ? b->back_o[k] : NULL;
  pthread_mutex_unlock(&b->mu);
  if (!ok) return -1;
  if (back != st->region || back_head != st->head) {
    fprintf(stderr, "listx: worker %d: worker %d gave back region %u head %p, not %u %p\n",
            c->me, peer, back, back_head, st->region, (void *)st->head);
    c->bad++;
  }
  if (st->phases) { /* waits: for the others' lists and walks; moves: the leader's swaps */
    double t5 = now(st);
    st->wait += (t1 - t0) + (k == 0 ? 0 : t5 - t4);
    st->move += (t2 - t1) + (k == 0 ? t5 - t4 : 0);
    st->walk_remote += t3 - t2;
    st->wait += t4 - t3;
    st->remote++;
  }
  return 0;
}

static const lx_node *lxt_first(lx_ctx *c) { return ((lxt_state *)c->priv)->head; }

static const lx_node *lxt_next(lx_ctx *c, const lx_node *x) {
  (void)c;
  return (const lx_node *)x->next;
}

static void lxt_release(lx_ctx *c) {
  lxt_state *st = c->priv;
  if (st->phases)
    fprintf(stderr, "listx: phases: worker %d (rank %d thread %d) rep %d: %d partners in this "
            "rank, walks %.1f ms; %d in others: waiting for the others %.1f ms, in "
            "sys_send/sys_recv %.1f ms, walks %.1f ms\n", c->me, H.rank, lxt_tid, c->rep, st->local,
            st->walk_local * 1e-6, st->remote, st->wait * 1e-6, st->move * 1e-6,
            st->walk_remote * 1e-6);
  st->wait = st->move = st->walk_local = st->walk_remote = 0;
  st->local = st->remote = 0;
  if (sys_rfree(st->region))
    fprintf(stderr, "listx: worker %d: sys_rfree: %s\n", c->me, sys_strerror(errno));
  st->region = 0;
  st->head = NULL;
  H.heads[lxt_tid] = NULL;
}

const lx_variant lx_antheap_threads = {
    .name = "antheap-threads",
    .setup = lxt_setup,
    .build = lxt_build,
    .exchange = lxt_exchange,
    .first = lxt_first,
    .next = lxt_next,
    .release = lxt_release,
    .teardown = lxt_teardown,
};

const lx_variant lx_antheap_threads_bundled = {
    .name = "antheap-threads-bundled",
    .setup = lxt_setup,
    .build = lxt_build,
    .exchange = lxt_exchange_bundled,
    .first = lxt_first,
    .next = lxt_next,
    .release = lxt_release,
    .teardown = lxt_teardown,
};

const lx_variant lx_antheap_balloc_threads = {
    .name = "antheap-balloc-threads",
    .setup = lxt_setup,
    .build = lxt_build_balloc,
    .exchange = lxt_exchange,
    .first = lxt_first,
    .next = lxt_next,
    .release = lxt_release,
    .teardown = lxt_teardown,
};

/* ---- the threads ------------------------------------------------------------------------ */

static void *thread_main(void *arg) {
  lxt_tid = (int)(intptr_t)arg;
  lx_rt rt = H.base;
  rt.me = H.rank * H.T + lxt_tid;
  rt.n = H.nranks * H.T;
  rt.threads = H.T;
  rt.barrier = lxt_barrier;
  rt.max = lxt_max;
  rt.sum = lxt_sum;
  const lx_variant *vs[] = {H.v};
  H.status[lxt_tid] = lx_run(H.o, &rt, vs, 1);
  return NULL;
}

int lx_run_threads(const lx_opts *o, const lx_rt *rt, const lx_variant *v) {
  int T = o->threads;
  memset(&H, 0, sizeof H);
  H.T = T;
  H.rank = rt->me;
  H.nranks = rt->n;
  H.o = o;
  H.v = v;
  H.base = *rt;
  H.dv = calloc((size_t)T, sizeof *H.dv);
  H.lv = calloc((size_t)T, sizeof *H.lv);
  H.heads = calloc((size_t)T, sizeof *H.heads);
  H.status = calloc((size_t)T, sizeof *H.status);
  H.bundles = calloc((size_t)rt->n, sizeof *H.bundles);
  pthread_t *th = calloc((size_t)T, sizeof *th);
  if (!H.dv || !H.lv || !H.heads || !H.status || !H.bundles || !th) {
    fprintf(stderr, "listx: rank %d: no memory for %d threads\n", rt->me, T);
    rt->abort(2);
  }
  for (int r = 0; r < rt->n; r++) {
    pthread_mutex_init(&H.bundles[r].mu, NULL);
    pthread_cond_init(&H.bundles[r].cv, NULL);
    H.bundles[r].epoch = -1;
    lxt_bundle *b = &H.bundles[r];
    b->give_r = calloc((size_t)T, sizeof(rid_t));
    b->got_r = calloc((size_t)T, sizeof(rid_t));
    b->back_r = calloc((size_t)T, sizeof(rid_t));
    b->give_o = calloc((size_t)T, sizeof(void *));
    b->got_o = calloc((size_t)T, sizeof(void *));
    b->back_o = calloc((size_t)T, sizeof(void *));
    if (!b->give_r || !b->got_r || !b->back_r || !b->give_o || !b->got_o || !b->back_o) {
      fprintf(stderr, "listx: rank %d: no memory for %d threads\n", rt->me, T);
      rt->abort(2);
    }
  }
  pthread_barrier_init(&H.bar, NULL, (unsigned)T);
  for (int t = 1; t < T; t++) {
    int rc = pthread_create(&th[t], NULL, thread_main, (void *)(intptr_t)t);
    if (rc) {
      fprintf(stderr, "listx: rank %d: pthread_create: %s\n", rt->me, strerror(rc));
      rt->abort(2);
    }
  }
  thread_main((void *)(intptr_t)0);
  int status = H.status[0];
  for (int t = 1; t < T; t++) {
    pthread_join(th[t], NULL);
    if (H.status[t] > status) status = H.status[t];
  }
  pthread_barrier_destroy(&H.bar);
  for (int r = 0; r < rt->n; r++) {
    pthread_mutex_destroy(&H.bundles[r].mu);
    pthread_cond_destroy(&H.bundles[r].cv);
    lxt_bundle *b = &H.bundles[r];
    free(b->give_r), free(b->got_r), free(b->back_r);
    free(b->give_o), free(b->got_o), free(b->back_o);
  }
  free(th);
  free(H.dv);
  free(H.lv);
  free(H.heads);
  free(H.status);
  free(H.bundles);
  return status;
}

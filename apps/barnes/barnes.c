/* barnes.c: parallel Barnes-Hut on antheap regions (Myrmics section 6.3): bh_run.c's step over
 * antheap's transport. A worker's tree lives in regions (one per level, under a tree region);
 * the locally essential tree (LET) for each peer is built in a region of its own, as one
 * object, and moved with sys_send: the peer walks it where it lands, by the pointers it was
 * built with (on one host it copies nothing), and frees it after the walk: the hand-over rule,
 * one holder at a time. Moves go in the rounds of a round-robin tournament (each worker has one
 * partner a round; the lower index sends first), so no two workers wait on each other's send.
 * Main entry: main(). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "antheap.h"
#include "bench.h"
#include "bh_run.h"

static double now(void) { return bench_now_ns() * 1e-9; }

/* ---- the local tree's memory: regions, timed as scheduler communication ---- */
static uint32_t a_region(void *ctx, uint32_t parent) {
  (void)ctx;
  double t0 = now();
  rid_t r = sys_ralloc(parent ? parent : SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  bh_run_clock()->scomm += now() - t0;
  return r;
}

/* The thread that started the library: the clock is its alone. A hybrid's team allocates a
 * tree's cells in shares beside it (bh_mem's balloc_any_thread), so its own share's time stands
 * for the whole. */
static pthread_t main_thread;

static int a_balloc(void *ctx, uint32_t region, size_t size, int n, void **out) {
  (void)ctx;
  double t0 = now();
  int rc = 0;
  for (int i = 0; rc == 0 && i < n; i += 65536) /* replies stay well under a message's cap */
    rc = sys_balloc(size, region, n - i < 65536 ? n - i : 65536, out + i);
  if (pthread_equal(pthread_self(), main_thread)) bh_run_clock()->scomm += now() - t0;
  return rc;
}

static int a_rfree(void *ctx, uint32_t region) {
  (void)ctx;
  double t0 = now();
  int rc = sys_rfree(region);
  bh_run_clock()->scomm += now() - t0;
  return rc;
}

/* ---- LETs as regions ---- */
typedef struct lets {
  int me, P;
  rid_t *out, *in; /* per peer: the region sent, the region received */
  void **obj;      /* per peer: the LET object sent */
  struct area *area;
} lets;

static void *let_buffer(void *ctx, int peer, size_t bytes) {
  lets *L = ctx;
  double t0 = now();
  L->out[peer] = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  L->obj[peer] = L->out[peer] ? sys_alloc(bytes, L->out[peer]) : NULL;
  bh_run_clock()->scomm += now() - t0;
  return L->obj[peer];
}

/* This worker's partner in round r of a round-robin tournament of P workers (the circle
 * method: P - 1 rounds, or P with a bye each round when P is odd), or -1 (a bye). */
static int partner(int me, int P, int r) {
  int n = P % 2 ? P + 1 : P, m = n - 1, q;
  if (me == m) q = r;
  else if (me == r % m) q = m;
  else q = ((2 * r - me) % m + m) % m;
  return q < P ? q : -1;
}

static int exchange(void *ctx, const void **got, const char *want, bh_clock *clk) {
  lets *L = ctx;
  int rounds = L->P % 2 ? L->P : L->P - 1;
  double t0 = now();
  for (int r = 0; r < rounds; r++) {
    int q = partner(L->me, L->P, r);
    if (q < 0 || !want[q]) continue;
    for (int turn = 0; turn < 2; turn++) {
      if ((turn == 0) == (L->me < q)) {
        if (sys_send(q, &L->out[q], 1, &L->obj[q], 1)) return -1;
      } else {
        void *o;
        if (sys_recv(q, &L->in[q], 1, &o, 1)) return -1;
        got[q] = o;
      }
    }
  }
  clk->wcomm += now() - t0;
  return 0;
}

static void release(void *ctx, bh_clock *clk) {
  lets *L = ctx;
  double t0 = now();
  for (int q = 0; q < L->P; q++)
    if (q != L->me && L->in[q]) {
      if (sys_rfree(L->in[q]))
        fprintf(stderr, "barnes: worker %d: sys_rfree of a received LET: %s\n", L->me,
                sys_strerror(errno));
      L->in[q] = 0;
    }
  clk->scomm += now() - t0;
}

/* ---- the pooled walk's memory (bh_pool.h): one object in a region of its own, kept from step
 * to step and made anew only when it must grow ---- */
typedef struct area {
  rid_t region;
  void *obj;
  size_t cap;
} area;

static void *shared_area(void *ctx, size_t bytes) {
  area *A = ((lets *)ctx)->area;
  if (bytes + 64 > A->cap) {
    if (!A->region && !(A->region = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT))) return NULL;
    if (A->obj && sys_free(A->obj)) return NULL;
    A->obj = NULL;
    A->cap = (bytes + 64) + (bytes + 64) / 4; /* room for the next steps' bodies */
    if (!(A->obj = sys_alloc(A->cap, A->region))) {
      A->cap = 0;
      return NULL;
    }
  }
  return (void *)(((uintptr_t)A->obj + 63) & ~(uintptr_t)63);
}

/* A worker walks the trees of those that share its GAS. Not under ANTHEAP_CHECK=handover: their
 * trees hold the LETs this worker sent them, whose pages the check takes from it. */
static bool shares(void *ctx, int peer) {
  (void)ctx;
  const char *check = getenv("ANTHEAP_CHECK");
  return sys_shares_gas(peer) == 1 && !(check && !strcmp(check, "handover"));
}

int main(int argc, char **argv) {
  if (bench_wants_help(argc, argv)) { /* before sys_init: --help needs no job */
    bh_usage(stdout, BH_ANTHEAP);
    return 0;
  }
  /* --threads T > 1 (hybrid: the sort, tree, LETs and walk in T threads): MPI_THREAD_MULTIPLE,
   * so that the launch does not bind the rank to one core, and so that the team may allocate
   * the tree's cells from several threads at once (each from its own cache); the threads make
   * no other antheap call, and no MPI call */
  int threads = 1;
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
  int provided = MPI_THREAD_SINGLE;
  main_thread = pthread_self();
  if (threads > 1 ? sys_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided)
                  : sys_init(&argc, &argv)) {
    fprintf(stderr, "barnes: error: sys_init failed: %s\n", sys_strerror(errno));
    return 1;
  }
  bh_opts o;
  int rc = bh_opts_parse(argc, argv, BH_ANTHEAP, &o);
  if (rc) {
    sys_finalize();
    return rc > 0 ? 0 : 2;
  }
  int P = sys_workers(), world;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  area pool_area = {0};
  lets L = {.me = sys_worker_id(), .P = P, .area = &pool_area, .out = calloc((size_t)P, sizeof(rid_t)),
            .in = calloc((size_t)P, sizeof(rid_t)), .obj = calloc((size_t)P, sizeof(void *))};
  if (!L.out || !L.in || !L.obj) {
    fprintf(stderr, "barnes: error: out of memory\n");
    return 1;
  }
  bh_transport tr = {.mode = o.threads > 1 ? "antheap-threads" : "antheap", .relocatable = false,
                     .mem = {a_region, a_balloc, a_rfree, NULL,
                             o.threads > 1 && provided == MPI_THREAD_MULTIPLE},
                     .let_buffer = let_buffer, .exchange = exchange, .release = release,
                     .shared_area = shared_area, .shares = shares, .ctx = &L};
  int failed = bh_run(&o, sys_comm(), world - P, &tr);
  free(L.out), free(L.in), free(L.obj);
  sys_finalize();
  return failed;
}

/* barnes.c: parallel Barnes-Hut on antheap regions (Myrmics section 6.3, after Dubinski 1996).
 *
 * Each step, every worker:
 *   1. exchanges bounding boxes with every other worker (MPI_Allgather on sys_comm),
 *   2. builds the octree of its bodies, one region per level below a tree region,
 *   3. decides how many levels each peer needs (the opening criterion on the distance from
 *      each cell to the peer's box) and tells each peer (MPI_Alltoall),
 *   4. walks its own tree, then passes the level regions of the tree it holds round a ring of
 *      the workers with sys_send (a tree has one holder at a time: the hand-over rule), walking
 *      each tree that arrives, by pointer at the same addresses, as deep as its owner said;
 *      after P moves its own tree is back; waits at a barrier (timed: the walk's load
 *      imbalance shows there); frees its tree region,
 *   5. kicks, and rebalances by recursive bisection along the longest dimension, weighted by
 *      each body's interactions in this step; bodies cross between partners as a bodies
 *      region (sys_send of a region holding one array object), which the receiver frees.
 * Time goes to four columns: computation, worker communication (MPI collectives and
 * sys_send/sys_recv, whose pack request to the scheduler is inside), scheduler communication
 * (sys_ralloc, sys_balloc, sys_alloc, sys_rfree) and barrier wait. Main entry: main(). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "antheap.h"
#include "bench.h"
#include "bh.h"

static struct {
  bh_opts o;
  int me, P, nlog;
  bh_body *b, *scratch;
  size_t n, cap;
  MPI_Comm *group; /* group[l]: the 2^(nlog-l) workers that bisect together at level l */
  double wcomm, scomm, barrier;
  int64_t work, missing;
} G;

static double now(void) { return bench_now_ns() * 1e-9; }

static void die(const char *what) {
  fprintf(stderr, "barnes: worker %d: error: %s: %s\n", G.me, what, sys_strerror(errno));
  MPI_Abort(sys_comm(), 1);
}

/* ---- bh_mem on antheap regions, timed as scheduler communication ---- */
static uint32_t a_region(void *ctx, uint32_t parent) {
  (void)ctx;
  double t0 = now();
  rid_t r = sys_ralloc(parent ? parent : SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  G.scomm += now() - t0;
  return r;
}

static int a_balloc(void *ctx, uint32_t region, size_t size, int n, void **out) {
  (void)ctx;
  double t0 = now();
  int rc = 0;
  for (int i = 0; rc == 0 && i < n; i += 65536) /* replies stay well under a message's cap */
    rc = sys_balloc(size, region, n - i < 65536 ? n - i : 65536, out + i);
  G.scomm += now() - t0;
  return rc;
}

static int a_rfree(void *ctx, uint32_t region) {
  (void)ctx;
  double t0 = now();
  int rc = sys_rfree(region);
  G.scomm += now() - t0;
  return rc;
}

static const bh_mem MEM = {a_region, a_balloc, a_rfree, NULL};

static int reserve(size_t n) {
  if (n <= G.cap) return 0;
  size_t cap = G.cap ? G.cap : 1024;
  while (cap < n) cap *= 2;
  bh_body *b = realloc(G.b, cap * sizeof *b), *s = b ? realloc(G.scratch, cap * sizeof *s) : NULL;
  if (b) G.b = b;
  if (!b || !s) return -1;
  G.scratch = s;
  G.cap = cap;
  return 0;
}

/* ---- forces ---- */

/* Add the forces of one tree (its root, walked to `levels` levels) to every body. */
static void walk_tree(const bh_cell *root, int levels) {
  for (size_t i = 0; i < G.n; i++) {
    bh_body *x = &G.b[i];
    int64_t before = x->work;
    G.missing += bh_walk(root, levels, x->pos, x->id, G.o.theta, G.o.eps, x->acc, &x->pot,
                         &x->work);
    G.work += x->work - before;
  }
}

/* Move a tree's level regions (and its root object) one step round the ring: to the right
 * neighbour, from the left one. Even workers send first, odd ones receive first, so that no
 * two neighbours both wait in sys_send (which waits for the receiver). */
static void ring_step(rid_t *out, int nout, void *out_root, int nin, rid_t *in, void **in_root) {
  int P = G.P, right = (G.me + 1) % P, left = (G.me + P - 1) % P;
  for (int turn = 0; turn < 2; turn++) {
    if ((turn == 0) == (G.me % 2 == 0)) {
      if (sys_send(right, out, nout, &out_root, 1)) die("sys_send of a tree");
    } else if (sys_recv(left, in, nin, in_root, 1)) {
      die("sys_recv of a tree");
    }
  }
}

static void forces(void) {
  int P = G.P, me = G.me;
  double t0, mine[6], *boxes = malloc((size_t)P * 6 * sizeof *boxes);
  int *send_lev = calloc((size_t)P, sizeof *send_lev), *recv_lev = calloc((size_t)P, sizeof *recv_lev);
  int *nlev = calloc((size_t)P, sizeof *nlev);
  if (!boxes || !send_lev || !recv_lev || !nlev) die("out of memory");
  bh_box(G.b, G.n, mine, mine + 3);
  t0 = now();
  MPI_Allgather(mine, 6, MPI_DOUBLE, boxes, 6, MPI_DOUBLE, sys_comm());
  G.wcomm += now() - t0;

  bh_tree t;
  char err[160];
  if (bh_tree_build(&MEM, G.b, G.n, &t, err, sizeof err)) die(err);
  for (int p = 0; p < P; p++)
    if (p != me) send_lev[p] = bh_tree_levels_for_box(&t, boxes + 6 * p, boxes + 6 * p + 3, G.o.theta);

  t0 = now();
  MPI_Alltoall(send_lev, 1, MPI_INT, recv_lev, 1, MPI_INT, sys_comm());
  MPI_Allgather(&t.nlevels, 1, MPI_INT, nlev, 1, MPI_INT, sys_comm());
  G.wcomm += now() - t0;

  for (size_t i = 0; i < G.n; i++) {
    bh_body *x = &G.b[i];
    memset(x->acc, 0, sizeof x->acc);
    x->pot = 0;
    x->work = 0;
  }
  walk_tree(t.root, t.nlevels);
  /* Every tree goes round the ring, held by one worker at a time (the hand-over rule): in
   * round k this worker holds the tree of worker me - k, walks it as deep as that worker said
   * it needs, and passes it on; after P rounds its own tree is back, and it frees it. */
  rid_t cur[BH_MAX_LEVELS], next[BH_MAX_LEVELS];
  memcpy(cur, t.level, (size_t)t.nlevels * sizeof *cur);
  void *cur_root = t.root;
  for (int k = 1; k <= P && P > 1; k++) {
    int holding = (me - k + 1 + P) % P, coming = (me - k + P) % P;
    t0 = now();
    ring_step(cur, nlev[holding], cur_root, nlev[coming], next, &cur_root);
    G.wcomm += now() - t0;
    memcpy(cur, next, (size_t)nlev[coming] * sizeof *cur);
    if (coming != me) walk_tree(cur_root, recv_lev[coming]);
  }
  t0 = now(); /* the walk's load imbalance shows here, not in the next collective */
  sys_barrier();
  G.barrier += now() - t0;
  if (bh_tree_free(&MEM, &t)) die("sys_rfree of the tree region");
  free(boxes), free(send_lev), free(recv_lev), free(nlev);
}

/* ---- load balancing ---- */
static void group_box(void *ctx, double lo[3], double hi[3]) {
  MPI_Comm c = *(MPI_Comm *)ctx;
  double v[6];
  bh_box(G.b, G.n, v, v + 3);
  for (int d = 0; d < 3; d++) v[3 + d] = -v[3 + d];
  double t0 = now();
  MPI_Allreduce(MPI_IN_PLACE, v, 6, MPI_DOUBLE, MPI_MIN, c);
  G.wcomm += now() - t0;
  for (int d = 0; d < 3; d++) lo[d] = v[d], hi[d] = -v[3 + d];
}

static int64_t group_below(void *ctx, int dim, double cut) {
  MPI_Comm c = *(MPI_Comm *)ctx;
  int64_t w = 0;
  for (size_t i = 0; i < G.n; i++)
    if (G.b[i].pos[dim] < cut) w += bh_weight(&G.b[i]);
  double t0 = now();
  MPI_Allreduce(MPI_IN_PLACE, &w, 1, MPI_INT64_T, MPI_SUM, c);
  G.wcomm += now() - t0;
  return w;
}

/* Send b[0..cnt) to peer as a region holding one array object: the region is the peer's now
 * (it frees it once it has copied the bodies out). */
static void send_bodies(int peer, const bh_body *b, size_t cnt) {
  double t0 = now();
  rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  int64_t *obj = r ? sys_alloc(sizeof(int64_t) * 2 + cnt * sizeof *b, r) : NULL;
  G.scomm += now() - t0;
  if (!obj) die("allocating a bodies region");
  obj[0] = (int64_t)cnt;
  memcpy(obj + 2, b, cnt * sizeof *b);
  t0 = now();
  void *o = obj;
  if (sys_send(peer, &r, 1, &o, 1)) die("sys_send of bodies");
  G.wcomm += now() - t0;
}

/* Append the peer's bodies to G.b (copied out of the region it sent, which we then free). */
static void recv_bodies(int peer) {
  rid_t r;
  void *o;
  double t0 = now();
  if (sys_recv(peer, &r, 1, &o, 1)) die("sys_recv of bodies");
  G.wcomm += now() - t0;
  const int64_t *obj = o;
  size_t cnt = (size_t)obj[0];
  if (reserve(G.n + cnt)) die("out of memory for bodies");
  memcpy(G.b + G.n, obj + 2, cnt * sizeof *G.b);
  G.n += cnt;
  t0 = now();
  if (sys_rfree(r)) die("sys_rfree of a received bodies region");
  G.scomm += now() - t0;
}

static void balance(void) {
  for (int l = 0, g = G.P; g > 1; l++, g /= 2) {
    bh_group grp = {group_box, group_below, &G.group[l]};
    int dim;
    double cut = bh_bisect_cut(&grp, &dim);
    size_t nlow = bh_partition(G.b, G.n, dim, cut, G.scratch);
    int lower = G.me % g < g / 2, peer = lower ? G.me + g / 2 : G.me - g / 2;
    if (lower) { /* keep b[0, nlow), send the rest, then take the peer's lower bodies */
      send_bodies(peer, G.b + nlow, G.n - nlow);
      G.n = nlow;
      recv_bodies(peer);
    } else { /* take the peer's upper bodies, send b[0, nlow), keep the rest */
      recv_bodies(peer);
      send_bodies(peer, G.b, nlow);
      memmove(G.b, G.b + nlow, (G.n - nlow) * sizeof *G.b);
      G.n -= nlow;
    }
  }
}

/* Diagnostics of the whole system: sums (kinetic, potential, momentum), interactions, and
 * cells that a walk wanted to open beyond the levels it had received (must be 0). */
static void global_sums(double s[5], int64_t *work, int64_t *missing) {
  bh_sums(G.b, G.n, s);
  int64_t c[2] = {G.work, G.missing};
  double t0 = now();
  MPI_Allreduce(MPI_IN_PLACE, s, 5, MPI_DOUBLE, MPI_SUM, sys_comm());
  MPI_Allreduce(MPI_IN_PLACE, c, 2, MPI_INT64_T, MPI_SUM, sys_comm());
  G.wcomm += now() - t0;
  *work = c[0];
  *missing = c[1];
}

/* Worker 0 gets every body (plain MPI on sys_comm: output only). */
static bh_body *gather_bodies(size_t *total) {
  int cnt = (int)(G.n * sizeof *G.b), *cnts = NULL, *displs = NULL;
  if (G.me == 0) cnts = calloc((size_t)G.P, sizeof *cnts), displs = calloc((size_t)G.P, sizeof *displs);
  MPI_Gather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, 0, sys_comm());
  bh_body *all = NULL;
  if (G.me == 0) {
    size_t bytes = 0;
    for (int p = 0; p < G.P; p++) displs[p] = (int)bytes, bytes += (size_t)cnts[p];
    all = malloc(bytes ? bytes : 1);
    *total = bytes / sizeof *all;
  }
  MPI_Gatherv(G.b, cnt, MPI_BYTE, all, cnts, displs, MPI_BYTE, 0, sys_comm());
  free(cnts), free(displs);
  return all;
}

int main(int argc, char **argv) {
  if (bench_wants_help(argc, argv)) { /* before sys_init: --help needs no job */
    bh_usage(stdout, 0);
    return 0;
  }
  if (sys_init(&argc, &argv)) {
    fprintf(stderr, "barnes: error: sys_init failed: %s\n", sys_strerror(errno));
    return 1;
  }
  G.me = sys_worker_id();
  G.P = sys_workers();
  int rc = bh_opts_parse(argc, argv, 0, &G.o);
  if (rc == 0 && (G.P & (G.P - 1))) {
    if (G.me == 0)
      fprintf(stderr,
              "barnes: error: the recursive bisection needs a power-of-two number of workers; "
              "this job has %d (mpirun -np N with N minus the schedulers = 1, 2, 4, 8, ...)\n",
              G.P);
    rc = -1;
  }
  if (rc) {
    sys_finalize();
    return rc > 0 ? 0 : 2;
  }
  int world;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  while ((1 << G.nlog) < G.P) G.nlog++;
  G.group = calloc((size_t)G.nlog + 1, sizeof *G.group);
  for (int l = 0; l < G.nlog; l++) /* level l: groups of P >> l consecutive workers */
    MPI_Comm_split(sys_comm(), G.me / (G.P >> l), G.me, &G.group[l]);

  /* Every worker generates the same bodies and keeps its slice; the first balance decides. */
  size_t N = (size_t)G.o.bodies, lo = N * (size_t)G.me / (size_t)G.P,
         hi = N * (size_t)(G.me + 1) / (size_t)G.P;
  bh_body *all = malloc(N * sizeof *all);
  if (!all || reserve(hi - lo + 1)) die("out of memory for the bodies");
  bh_plummer(all, N, G.o.seed);
  memcpy(G.b, all + lo, (hi - lo) * sizeof *all);
  G.n = hi - lo;
  free(all);

  balance();
  forces();
  double s0[5], s[5];
  int64_t work, missing;
  global_sums(s0, &work, &missing);
  if (G.me == 0 && !G.o.quiet) {
    printf("barnes: %zu bodies, %d workers, %d schedulers, theta %g, dt %g, eps %g, seed %llu\n",
           N, G.P, world - G.P, G.o.theta, G.o.dt, G.o.eps, (unsigned long long)G.o.seed);
    bh_print_step(0, 0, s0, s0, (double)work / (double)N);
  }

  G.wcomm = G.scomm = G.barrier = 0;
  sys_barrier();
  double t0 = now();
  for (long step = 1; step <= G.o.steps; step++) {
    G.work = 0;
    bh_kick(G.b, G.n, G.o.dt / 2);
    bh_drift(G.b, G.n, G.o.dt);
    forces();
    bh_kick(G.b, G.n, G.o.dt / 2);
    global_sums(s, &work, &missing);
    if (G.me == 0 && !G.o.quiet) bh_print_step(step, (double)step * G.o.dt, s0, s, (double)work / (double)N);
    balance();
  }
  double total = now() - t0;
  global_sums(s, &work, &missing);
  bh_times mine = {total - G.wcomm - G.scomm - G.barrier, G.wcomm, G.scomm, G.barrier, total},
           sum, max;
  MPI_Reduce(&mine, &sum, 5, MPI_DOUBLE, MPI_SUM, 0, sys_comm());
  MPI_Reduce(&mine, &max, 5, MPI_DOUBLE, MPI_MAX, 0, sys_comm());
  int failed = 0;
  if (G.me == 0) {
    bh_times avg = {sum.compute / G.P, sum.wcomm / G.P, sum.scomm / G.P, sum.barrier / G.P,
                    sum.total / G.P};
    double drift = (s[0] + s[1] - s0[0] - s0[1]) / fabs(s0[0] + s0[1]);
    if (bh_report(&G.o, "antheap", G.P, world - G.P, &avg, &max,
                  G.o.steps ? (double)work / (double)N : 0, drift))
      failed = 1;
    if (missing) {
      fprintf(stderr, "barnes: error: %lld cells opened beyond the levels their sender sent\n",
              (long long)missing);
      failed = 1;
    }
  }
  size_t n_all = 0;
  bh_body *every = gather_bodies(&n_all);
  if (G.me == 0) {
    if (n_all != N) {
      fprintf(stderr, "barnes: error: %zu bodies at the end, %zu at the start\n", n_all, N);
      failed = 1;
    }
    if (G.o.positions && bh_write_positions(G.o.positions, every, n_all)) failed = 1;
    printf("barnes: %d passed, %d failed\n", !failed, failed);
  }
  free(every);
  MPI_Bcast(&failed, 1, MPI_INT, 0, sys_comm());
  for (int l = 0; l < G.nlog; l++) MPI_Comm_free(&G.group[l]);
  free(G.group), free(G.b), free(G.scratch);
  sys_finalize();
  return failed;
}

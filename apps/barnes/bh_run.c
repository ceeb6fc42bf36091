/* bh_run.c: the parallel Barnes-Hut step over MPI (bh_run.h), the same for barnes and
 * barnes-mpi, which differ only in their transport. Each step, every worker:
 *   1. agrees on the cube of all bodies (one MPI_Allreduce): every tree is built in it;
 *   2. sorts its bodies by key, cuts the key space into P domains of equal weight (what each
 *      body's walk cost last step, measured, or as BARNES_WEIGHTS says: reweigh;
 *      bh_domain_cuts) and sends each body to the worker of its domain (MPI_Alltoallv);
 *   3. builds the tree of its bodies (a hybrid worker sorts them by key again first), finds its
 *      branches, and gathers every worker's (MPI_Allgatherv): every worker builds the same top
 *      tree and hangs its own branches in;
 *   4. makes for each peer the LET of its branches for the peer's box (the boxes: one
 *      MPI_Allgather) and exchanges them through the transport; hangs the peers' LETs in;
 *   5. walks the whole tree for each of its bodies (the serial walk, cell for cell), waits at
 *      a barrier (timed: the load imbalance shows there), and frees the step's memory.
 * A hybrid worker (--threads T) runs the sort, the tree, the making of its LETs and the walk on
 * its T threads (bh_team.c); its MPI and antheap calls stay on its main thread, but for the
 * tree's cells, which the team allocates in shares where antheap runs MPI_THREAD_MULTIPLE.
 * Time goes to computation, worker communication (MPI and the transport's moves), scheduler
 * communication (the transport's memory calls) and the barrier. Main entry: bh_run. */
#include "bh_run.h"

#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bh_pool.h"
#include "bh_steal.h"

/* Where a worker's step goes (BARNES_PHASES=1 prints the slowest, average and fastest; 2 also
 * traces each step's walk per worker: trace_step). */
enum { PH_DOMAINS, PH_TREE, PH_TOP, PH_LETS, PH_WALK, PH_BARRIER, PH_FREE, PH_N };
static const char *const phase_name[PH_N] = {"cube+domains", "tree", "branches+top",
                                            "LETs made+moved", "walk", "barrier", "free"};

typedef struct run {
  double phase[PH_N];
  const bh_opts *o;
  const bh_transport *tr;
  MPI_Comm comm;
  int me, P, schedulers;
  bh_body *b, *scratch;
  uint64_t *keys, *cut, *tcut; /* tcut[j]: the first key of domain j's tail (shared tails) */
  uint64_t *keys2;  /* a team's: the keys of the bodies in scratch (the migration's, the merge's) */
  size_t *runs;     /* a team's: after the migration, run r of bodies [runs[r], runs[r + 1]) */
  int nruns;
  size_t n, cap;
  double barrier;
  int64_t work, missing;
  bh_team *team; /* --threads T > 1: the rank's threads (sort, tree, LETs, walk); NULL: one */
  bh_tree_keep keep; /* the team's tree memory, kept from step to step */
  bh_block sort_keep; /* the sorts' pairs, kept from step to step */
  double runq;    /* BARNES_PHASES: the timed steps' run-queue wait, the rank's threads summed */
  double dpart[3];  /* BARNES_PHASES=3: the decomposition's sort, cuts and migration (seconds);
                       a team's merge before its tree is dpart[0] too */
  double let_cells; /* cells of the LETs this worker made (the phases' table) */
  int let_peers;    /* the peers this worker made a LET for in its last exchange */
  double steal_share; /* BARNES_STEAL: the tail's share of the weight; 0: no tail shared */
  size_t tail;        /* the step's first body of the tail (its keys from tcut); n: none */
  bh_steal steal;
  int pool;             /* BARNES_POOL: the walk drawn from every worker's pool (bh_pool.h) */
  bh_pool_mode pool_mode; /* BARNES_POOL_TEST, for worker 0 */
  bh_pool **pools;      /* per worker: its pool this step (NULL: this one, or out of reach) */
  char *pool_peer;      /* per worker: shares memory with this one (a pool's peer) */
  bool poison;          /* BARNES_TREE_TEST=poison: each tree poisoned before it is freed */
  bool graft_near;      /* the pool peers' branches are grafted as they lie in their trees, and
                           only the other workers get LETs (BARNES_LETS) */
  int in_place;         /* ... and every worker is a pool peer of every other: no LETs at all */
  char *let_want;       /* per worker: it gets a LET from this one, and sends one */
  bh_pool_stats pst;    /* summed over the timed steps */
} run;

static bh_clock clock_now; /* the run's worker and scheduler communication (bh_run_clock) */
bh_clock *bh_run_clock(void) { return &clock_now; }

static double now(void) { return bench_now_ns() * 1e-9; }

_Noreturn static void die(const run *R, const char *what) {
  fprintf(stderr, "barnes: worker %d: error: %s\n", R->me, what);
  MPI_Abort(R->comm, 1);
  exit(1); /* (MPI_Abort may return) */
}

static int reserve(run *R, size_t n) {
  if (n <= R->cap) return 0;
  size_t cap = R->cap ? R->cap : 1024;
  while (cap < n) cap *= 2;
  bh_body *b = realloc(R->b, cap * sizeof *b);
  if (b) R->b = b;
  bh_body *s = b ? realloc(R->scratch, cap * sizeof *s) : NULL;
  if (s) R->scratch = s;
  uint64_t *k = s ? realloc(R->keys, cap * sizeof *k) : NULL;
  if (k) R->keys = k;
  uint64_t *k2 = k && R->team ? realloc(R->keys2, cap * sizeof *k2) : NULL;
  if (k2) R->keys2 = k2;
  if (!k || (R->team && !k2)) return -1;
  R->cap = cap;
  return 0;
}

/* ---- collectives, timed as worker communication ---- */

static void sum_i64(void *ctx, int64_t *v, int n) {
  double t0 = now();
  MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_INT64_T, MPI_SUM, ((run *)ctx)->comm);
  clock_now.wcomm += now() - t0;
}

/* The cube of every worker's bodies. */
static bh_cube global_cube(run *R) {
  double lo[3], hi[3], v[6];
  bh_box(R->b, R->n, lo, hi);
  for (int d = 0; d < 3; d++) v[d] = lo[d], v[3 + d] = -hi[d];
  double t0 = now();
  MPI_Allreduce(MPI_IN_PLACE, v, 6, MPI_DOUBLE, MPI_MIN, R->comm);
  clock_now.wcomm += now() - t0;
  for (int d = 0; d < 3; d++) lo[d] = v[d], hi[d] = -v[3 + d];
  return bh_cube_of_box(lo, hi);
}

/* ---- 2. domains ---- */

/* The first body (keys sorted) with key >= k. */
static size_t first_at(const run *R, uint64_t k) {
  size_t lo = 0, hi = R->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (R->keys[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The bodies a worker may hold: the migration's counts and offsets are bytes in MPI's int. */
#define BODIES_MAX ((size_t)INT_MAX / sizeof(bh_body))
static void too_many_bodies(const run *R) {
  char what[160];
  snprintf(what, sizeof what, "a worker would hold more than %zu bodies, more than the "
           "migration's MPI counts reach (INT_MAX bytes): run more workers", BODIES_MAX);
  die(R, what);
}

/* A team's: the keys of send_part's bodies sent and received as they were (its byte counts
 * and offsets of bodies, the part for itself, `self` bytes, copied), into R->keys2; each
 * sender's bodies one more run (R->runs), to be merged rather than sorted before the tree. */
static void send_keys(run *R, const int *sc, const int *sd, const int *rc, const int *rd,
                      size_t self) {
  int P = R->P, *k = calloc((size_t)P * 4, sizeof *k);
  if (!k) die(R, "out of memory");
  const size_t body = sizeof(bh_body), key = sizeof(uint64_t);
  const int *bytes[4] = {sc, sd, rc, rd};
  for (int q = 0; q < 4; q++)
    for (int p = 0; p < P; p++) k[q * P + p] = (int)((size_t)bytes[q][p] / body * key);
  MPI_Alltoallv(R->keys, k, k + P, MPI_BYTE, R->keys2, k + 2 * P, k + 3 * P, MPI_BYTE, R->comm);
  memcpy(R->keys2 + (size_t)rd[R->me] / body, R->keys + (size_t)sd[R->me] / body,
         self / body * key);
  for (int p = 0; p < P; p++) {
    size_t got = p == R->me ? self : (size_t)rc[p];
    R->runs[++R->nruns] = ((size_t)rd[p] + got) / body;
  }
  free(k);
}

/* To each worker p the bodies of keys [from[p], to[p]) (bodies sorted by key), received into
 * R->scratch after the first at bodies there; how many arrived. A worker's part for itself
 * (most of its bodies: the domains move little from step to step) is copied by its team, not
 * by MPI on one thread. A team's keys go too (send_keys). */
static size_t send_part(run *R, const uint64_t *from, const uint64_t *to, size_t at) {
  int P = R->P, *sc = calloc((size_t)P * 4, sizeof *sc), *sd = sc + P, *rc = sd + P, *rd = rc + P;
  if (!sc) die(R, "out of memory");
  if (R->n > BODIES_MAX) too_many_bodies(R);
  for (int p = 0; p < P; p++) {
    size_t a = first_at(R, from[p]), z = first_at(R, to[p]);
    sd[p] = (int)(a * sizeof(bh_body));
    sc[p] = (int)((z > a ? z - a : 0) * sizeof(bh_body));
  }
  MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, R->comm);
  size_t total = at * sizeof(bh_body);
  for (int p = 0; p < P; p++) rd[p] = (int)total, total += (size_t)rc[p];
  if (total > INT_MAX) too_many_bodies(R);
  if (reserve(R, total / sizeof(bh_body) + 1)) die(R, "out of memory for bodies");
  size_t self = (size_t)sc[R->me];
  sc[R->me] = rc[R->me] = 0;
  MPI_Alltoallv(R->b, sc, sd, MPI_BYTE, R->scratch, rc, rd, MPI_BYTE, R->comm);
  bh_team_copy(R->team, (char *)R->scratch + rd[R->me], (const char *)R->b + sd[R->me], self);
  if (R->team) send_keys(R, sc, sd, rc, rd, self);
  free(sc);
  return total / sizeof(bh_body) - at;
}

/* Every body to the worker of its domain (bodies sorted by key before). With shared tails a
 * domain's front and its tail go in two exchanges: a worker holds its front, then its tail. */
static void migrate(run *R) {
  double t0 = now();
  bool tails = R->steal_share > 0;
  R->nruns = 0;
  size_t front = send_part(R, R->cut, tails ? R->tcut : R->cut + 1, 0);
  R->n = front + (tails ? send_part(R, R->tcut, R->cut + 1, front) : 0);
  R->tail = front;
  clock_now.wcomm += now() - t0;
  bh_body *t = R->b; /* the bodies are where they arrived: no copy back */
  R->b = R->scratch, R->scratch = t;
  if (R->team) {
    uint64_t *k = R->keys;
    R->keys = R->keys2, R->keys2 = k;
  }
}

/* Bodies arrive as one key-sorted run per sender. One thread a rank leaves them so (each run
 * keeps its bodies in Morton order, which is what the walk's locality needs; the next step
 * sorts); a team merges them before the tree (into_key_order), whose insertion needs key order. */
static void decompose(run *R, const bh_cube *cube) {
  int share = (int)lround(R->steal_share * BH_SHARE_ONE);
  double t0 = now(), t1;
  if (bh_sort_by_key_swap(cube, &R->b, &R->scratch, R->n, R->keys, R->team, &R->sort_keep))
    die(R, "out of memory sorting the bodies");
  R->dpart[0] += (t1 = now()) - t0;
  if (bh_domain_cuts_tails(R->keys, R->b, R->n, R->P, share, sum_i64, R, R->cut,
                           R->steal_share > 0 ? R->tcut : NULL))
    die(R, "out of memory cutting the domains");
  R->tcut[R->P - 1] = BH_KEY_END; /* the last worker has no one to share a tail with */
  R->dpart[1] += (t0 = now()) - t1;
  migrate(R);
  R->dpart[2] += now() - t0;
}

/* ---- 3. branches and the top tree ---- */

typedef struct pieces {
  bh_branch *all;       /* every worker's branches, in worker (= key) order */
  int *count, *first;   /* per worker */
  const bh_cell **mine; /* this worker's branch cells */
  bh_top top;
} pieces;

static void gather_branches(run *R, const bh_tree *t, const bh_cube *cube, pieces *g) {
  bh_branch *mine;
  long nb = bh_branches(t, cube, R->cut[R->me], R->cut[R->me + 1], R->me, &mine, &g->mine);
  if (nb < 0) die(R, "out of memory finding the branches");
  int P = R->P, *bytes = calloc((size_t)P * 2, sizeof *bytes), *displ = bytes + P, my = (int)nb;
  g->count = calloc((size_t)P * 2, sizeof *g->count);
  if (!bytes || !g->count) die(R, "out of memory");
  g->first = g->count + P;
  double t0 = now();
  MPI_Allgather(&my, 1, MPI_INT, g->count, 1, MPI_INT, R->comm);
  size_t total = 0;
  for (int p = 0; p < P; p++) {
    g->first[p] = (int)total;
    displ[p] = (int)(total * sizeof(bh_branch));
    bytes[p] = g->count[p] * (int)sizeof(bh_branch);
    total += (size_t)g->count[p];
  }
  g->all = malloc((total ? total : 1) * sizeof *g->all);
  if (!g->all) die(R, "out of memory");
  MPI_Allgatherv(mine, my * (int)sizeof(bh_branch), MPI_BYTE, g->all, bytes, displ, MPI_BYTE,
                 R->comm);
  clock_now.wcomm += now() - t0;
  free(mine), free(bytes);
  if (bh_top_build(&g->top, g->all, total, cube)) die(R, "out of memory for the top tree");
  for (int i = 0; i < my; i++) bh_top_graft(&g->top, (size_t)(g->first[R->me] + i), g->mine[i]);
}

/* ---- 4. LETs ---- */

/* The LET of its branches for each peer: the cells of every (peer, branch) part counted, each
 * peer's buffer asked of the transport (on the main thread), the parts copied; a hybrid
 * worker's threads count and copy the parts, taken in turn. The bytes are bh_let_fill's: each
 * part is written where the serial fill writes it. */
typedef struct let_job {
  const bh_cell *const *mine;
  size_t nb, nparts;
  const char *want; /* per peer: a LET made for it */
  const double *boxes;
  double theta;
  bool relocatable;
  size_t *at;  /* per part (q * nb + i): its cells, then the cell index it starts at */
  void **buf;  /* per peer */
  atomic_size_t next;
} let_job;

static void let_parts_count(void *ctx, int t, int T) {
  (void)t, (void)T;
  let_job *j = ctx;
  for (size_t k; (k = atomic_fetch_add(&j->next, 1)) < j->nparts;) {
    int q = (int)(k / j->nb);
    const double *b = j->boxes + 6 * q;
    j->at[k] = !j->want[q] ? 0 : bh_let_branch_cells(j->mine[k % j->nb], b, b + 3, j->theta);
  }
}

static void let_parts_fill(void *ctx, int t, int T) {
  (void)t, (void)T;
  let_job *j = ctx;
  for (size_t k; (k = atomic_fetch_add(&j->next, 1)) < j->nparts;) {
    int q = (int)(k / j->nb);
    if (!j->want[q]) continue;
    const double *b = j->boxes + 6 * q;
    bh_let_fill_branch(j->buf[q], j->nb, k % j->nb, j->at[k], j->mine[k % j->nb], b, b + 3,
                       j->theta, j->relocatable);
  }
}

static void make_lets(run *R, const bh_cell *const *mine, size_t nb, const double *boxes,
                      const char *want) {
  int P = R->P;
  R->let_peers = 0;
  let_job j = {.mine = mine, .nb = nb, .nparts = (size_t)P * nb, .want = want, .boxes = boxes,
               .theta = R->o->theta, .relocatable = R->tr->relocatable};
  j.at = malloc((j.nparts ? j.nparts : 1) * sizeof *j.at);
  j.buf = calloc((size_t)P, sizeof *j.buf);
  if (!j.at || !j.buf) die(R, "out of memory for the LETs");
  atomic_init(&j.next, 0);
  bh_team_run(R->team, let_parts_count, &j);
  for (int q = 0; q < P; q++) {
    if (!want[q]) continue;
    size_t cells = 0;
    for (size_t i = 0; i < nb; i++) {
      size_t c = j.at[(size_t)q * nb + i];
      j.at[(size_t)q * nb + i] = cells;
      cells += c;
    }
    R->let_cells += (double)cells;
    R->let_peers++;
    if (!(j.buf[q] = R->tr->let_buffer(R->tr->ctx, q, bh_let_size(nb, cells))))
      die(R, "no memory for a LET");
    bh_let_head_set(j.buf[q], nb, cells);
  }
  atomic_init(&j.next, 0);
  bh_team_run(R->team, let_parts_fill, &j);
  free(j.at), free(j.buf);
}

/* The branches of the workers that share memory with this one (its host's: its pool peers)
 * are grafted into the top where they lie in those peers' trees: one allgather of every
 * worker's branch addresses (the other hosts' go unused), no LET made or moved for them. A
 * walk then reads the peers' trees, read-only, until the barrier after the walk; no tree is
 * freed before it (antheap.h: reading what another worker holds). Every cell a LET would hold
 * is the tree's own, and the walk opens no cell a LET would have cut (those are the cells no
 * body of the peer's box opens), so the walk is the same, interaction for interaction. */
static void graft_peer_trees(run *R, pieces *g) {
  int P = R->P, my = g->count[R->me];
  size_t total = (size_t)g->first[P - 1] + (size_t)g->count[P - 1];
  uint64_t *mine = malloc((my ? (size_t)my : 1) * sizeof *mine);
  uint64_t *all = malloc((total ? total : 1) * sizeof *all);
  if (!mine || !all) die(R, "out of memory");
  for (int i = 0; i < my; i++) mine[i] = (uint64_t)(uintptr_t)g->mine[i];
  double t0 = now();
  atomic_thread_fence(memory_order_release); /* the tree's cells, before their addresses */
  MPI_Allgatherv(mine, my, MPI_UINT64_T, all, g->count, g->first, MPI_UINT64_T, R->comm);
  atomic_thread_fence(memory_order_acquire);
  clock_now.wcomm += now() - t0;
  for (int q = 0; q < P; q++)
    for (int i = 0; q != R->me && R->pool_peer[q] && i < g->count[q]; i++)
      bh_top_graft(&g->top, (size_t)(g->first[q] + i),
                   (const bh_cell *)(uintptr_t)all[g->first[q] + i]);
  free(mine), free(all);
}

static void exchange_lets(run *R, pieces *g) {
  int P = R->P;
  if (R->graft_near) graft_peer_trees(R, g);
  if (R->in_place || R->P == 1) return; /* (a worker alone has no peer to make a LET for) */
  /* each worker's box and its tail's (empty: no tail) */
  double mybox[12], *boxes = malloc((size_t)P * 18 * sizeof *boxes), *asked = boxes + 12 * P;
  const void **got = calloc((size_t)P, sizeof *got);
  if (!boxes || !got) die(R, "out of memory");
  bh_box(R->b, R->n, mybox, mybox + 3);
  bh_box(R->b + R->tail, R->n - R->tail, mybox + 6, mybox + 9);
  double t0 = now();
  MPI_Allgather(mybox, 12, MPI_DOUBLE, boxes, 12, MPI_DOUBLE, R->comm);
  clock_now.wcomm += now() - t0;
  /* what a peer's walk may open: its own bodies, and the previous worker's tail */
  for (int q = 0; q < P; q++)
    for (int d = 0; d < 3; d++) {
      const double *tail = q > 0 ? boxes + 12 * (q - 1) + 6 : NULL;
      asked[6 * q + d] = boxes[12 * q + d];
      asked[6 * q + 3 + d] = boxes[12 * q + 3 + d];
      if (tail && tail[d] < asked[6 * q + d]) asked[6 * q + d] = tail[d];
      if (tail && tail[3 + d] > asked[6 * q + 3 + d]) asked[6 * q + 3 + d] = tail[3 + d];
    }
  make_lets(R, g->mine, (size_t)g->count[R->me], asked, R->let_want);
  if (R->steal_share > 0) { /* the tails' positions to the next workers, with the LETs */
    t0 = now();
    if (bh_steal_begin(&R->steal, R->b, R->n, R->tail)) die(R, "out of memory for the tails");
    clock_now.wcomm += now() - t0;
  }
  if (R->tr->exchange(R->tr->ctx, got, R->let_want, &clock_now))
    die(R, "exchanging the LETs failed");
  for (int q = 0; q < P; q++) {
    if (!R->let_want[q]) continue;
    if (((const bh_let_head *)got[q])->nroots != g->count[q]) die(R, "a LET with other branches");
    for (int i = 0; i < g->count[q]; i++)
      bh_top_graft(&g->top, (size_t)(g->first[q] + i), bh_let_root(got[q], (size_t)i));
  }
  free(boxes), free(got);
}

/* ---- the step's forces ---- */

/* Time since *t0 into phase k; *t0 moves on. */
static void lap(run *R, int k, double *t0) {
  double t = now();
  R->phase[k] += t - *t0;
  *t0 = t;
}

/* The walk of bodies b[lo, hi), each timed (the next step's weights); adds to *missing, *work. */
static void walk_range(run *R, const bh_cell *root, bh_body *b, size_t lo, size_t hi,
                       int64_t *missing, int64_t *work) {
  double tick = bench_now_ns();
  for (size_t i = lo; i < hi; i++) {
    bh_body *x = &b[i];
    memset(x->acc, 0, sizeof x->acc);
    x->pot = 0;
    x->work = 0;
    *missing += bh_walk(root, x->pos, x->id, R->o->theta, R->o->eps, x->acc, &x->pot, &x->work);
    *work += x->work;
    double tock = bench_now_ns();
    x->cost = (int64_t)(tock - tick) + 1;
    tick = tock;
  }
}

/* --threads T (hybrid): the rank's threads share the walk in chunks of bodies, from lanes of
 * consecutive chunks (bh_pool.h): thread t starts on lane t, then takes from the lane with the
 * most left. Each body's walk is the serial one and writes only that body, and the sums are
 * integers, so the result is the same bit for bit whatever the threads; the walk calls no MPI
 * and no sys_*. */
#define WALK_CHUNK 64
typedef struct {
  run *R;
  const bh_cell *root;
  bh_lane *lane; /* T */
  atomic_int_least64_t missing, work;
} walk_job;

typedef struct {
  walk_job *j;
  int64_t missing, work; /* the thread's own until the end (no shared line) */
} walk_mine;

static void walk_chunk(void *ctx, uint64_t c) {
  walk_mine *m = ctx;
  run *R = m->j->R;
  size_t lo = (size_t)c * WALK_CHUNK, hi = lo + WALK_CHUNK < R->n ? lo + WALK_CHUNK : R->n;
  walk_range(R, m->j->root, R->b, lo, hi, &m->missing, &m->work);
}

static void walk_thread(void *ctx, int t, int T) {
  walk_job *j = ctx;
  walk_mine m = {j, 0, 0};
  bh_lanes_draw(j->lane, T, t, walk_chunk, &m);
  atomic_fetch_add(&j->missing, m.missing);
  atomic_fetch_add(&j->work, m.work);
}

/* The shared tail's walker (bh_steal.h). */
typedef struct {
  run *R;
  const bh_cell *root;
} walk_ctx;

static void walk_some(void *ctx, bh_body *b, size_t lo, size_t hi, int64_t *work,
                      int64_t *missing) {
  walk_ctx *w = ctx;
  walk_range(w->R, w->root, b, lo, hi, missing, work);
}

static void walk_all(run *R, const bh_cell *root) {
  if (R->steal_share > 0) {
    walk_ctx w = {R, root};
    if (bh_steal_walk(&R->steal, walk_some, &w, &R->work, &R->missing))
      die(R, "out of memory sharing the walk's tail");
    return;
  }
  if (!R->team) {
    walk_range(R, root, R->b, 0, R->n, &R->missing, &R->work);
    return;
  }
  int T = bh_team_size(R->team);
  walk_job j = {.R = R, .root = root, .lane = aligned_alloc(64, (size_t)T * sizeof(bh_lane))};
  if (!j.lane) die(R, "out of memory");
  bh_lanes_init(j.lane, T, (R->n + WALK_CHUNK - 1) / WALK_CHUNK);
  atomic_init(&j.missing, 0);
  atomic_init(&j.work, 0);
  bh_team_run(R->team, walk_thread, &j);
  free(j.lane);
  R->missing += atomic_load(&j.missing);
  R->work += atomic_load(&j.work);
}

/* A worker's threads draw from the pools at once (bh_team_run; one thread without a team). */
typedef struct {
  run *R;
  bh_pool *mine;
  bh_pool_mode mode;
  bh_pool_stats *st; /* per thread */
} pool_job;

static void pool_thread(void *ctx, int t, int T) {
  (void)T;
  pool_job *j = ctx;
  bh_pool_draw(j->mine, j->R->pools, j->R->P, j->R->me, t, j->mode, &j->st[t]);
}

/* BARNES_POOL: this worker's pool in the memory the workers share (the top tree copied there:
 * its own cells are private), every worker's pool's address to all, and the walk: drawing from
 * the pools of the workers that share memory with this one (the workers of its host). */
static void walk_pooled(run *R, const bh_top *top) {
  int T = bh_team_size(R->team); /* a lane of the pool a thread */
  size_t pool_bytes = bh_pool_bytes(R->n, T);
  double t0 = now();
  char *mem = R->tr->shared_area(R->tr->ctx, pool_bytes + top->ncells * sizeof(bh_cell));
  clock_now.scomm += now() - t0;
  if (!mem) die(R, "no shared memory for the walk's pool");
  const bh_cell *root =
      bh_pool_copy_top(top->cells, top->ncells, top->root, (bh_cell *)(mem + pool_bytes));
  bh_pool *mine = bh_pool_lay(mem, root, R->b, R->n, R->o->theta, R->o->eps, T);
  uint64_t at = (uint64_t)(uintptr_t)mine, *all = (uint64_t *)R->pools;
  _Static_assert(sizeof(bh_pool *) == sizeof(uint64_t), "a pool's address is 64 bits");
  /* the pool's plain stores before the others learn its address, their pools' after: the
   * shared-memory transports order them already; the fences say so, at no cost on x86 */
  atomic_thread_fence(memory_order_release);
  t0 = now();
  MPI_Allgather(&at, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, R->comm);
  clock_now.wcomm += now() - t0;
  atomic_thread_fence(memory_order_acquire);
  for (int q = 0; q < R->P; q++) /* (the addresses stand as pointers in place) */
    if (!R->pool_peer[q]) R->pools[q] = NULL;
  /* worker 0 lazy (the tests) where others can walk its pool */
  bool lazy = R->me == 0 && R->pool_mode == BH_POOL_LAZY && memchr(R->pool_peer, 1, (size_t)R->P);
  pool_job j = {R, mine, lazy ? BH_POOL_LAZY : BH_POOL_EAGER, calloc((size_t)T, sizeof *j.st)};
  if (!j.st) die(R, "out of memory");
  bh_team_run(R->team, pool_thread, &j);
  bh_pool_stats st = j.st[0]; /* (own_s: the main thread's) */
  for (int t = 1; t < T; t++) {
    st.own += j.st[t].own, st.taken += j.st[t].taken;
    st.work += j.st[t].work, st.missing += j.st[t].missing;
  }
  free(j.st);
  bh_pool_finish(mine, st.own, R->b, j.mode, &st);
  R->work += st.work;
  R->missing += st.missing;
  R->pst.own += st.own, R->pst.given += st.given, R->pst.taken += st.taken;
  R->pst.own_s = st.own_s; /* (the step's: the trace's) */
}

/* BARNES_WEIGHTS: what the next step's cut weighs a body by. time (the default): its walk's
 * nanoseconds. work: its interactions. scaled: its nanoseconds scaled so that the worker's
 * bodies weigh its interactions in all, so a worker that ran slow or fast this step (a busy
 * core, the clock) passes none of it on to its bodies' next owners, while the share of each
 * body within the worker stays what it measured. Read once; another value is an error
 * (bh_run). */
enum { WEIGH_UNKNOWN = -1, WEIGH_TIME, WEIGH_WORK, WEIGH_SCALED };
static const char *const weights_name[] = {"time", "work", "scaled"};
static int weights_mode(void) {
  static int mode = -2;
  if (mode == -2) {
    const char *e = getenv("BARNES_WEIGHTS");
    mode = WEIGH_UNKNOWN;
    for (int m = WEIGH_TIME; m <= WEIGH_SCALED; m++)
      if (!e || !*e ? m == WEIGH_TIME : !strcmp(e, weights_name[m])) mode = m;
  }
  return mode;
}

/* BARNES_PHASES: 1 prints the phase table (print_phases), 2 also traces every step's walk per
 * worker (trace_step), 3 splits the decomposition and the tree into their parts
 * (print_parts); 0 when unset or anything else. Read once. */
static int phases_level(void) {
  static int level = -1;
  if (level < 0) {
    const char *e = getenv("BARNES_PHASES");
    level = 0;
    for (int k = 1; k <= 3; k++)
      if (e && e[0] == '0' + k && !e[1]) level = k;
  }
  return level;
}
static int tracing(void) { return phases_level() == 2; }

static double weight_held(const run *R) {
  double w = 0;
  for (size_t i = 0; i < R->n; i++) w += (double)bh_weight(&R->b[i]);
  return w;
}

/* After each step's walk, a line per worker: its bodies, the weight the cut gave it (the sum of
 * its bodies' weights, x 1e-9: seconds for the time weights), its walk's seconds, those of its
 * own bodies (before it took any of the previous worker's tail), its interactions (work), its
 * CPU, and the chunks of its tail the next worker walked and of the previous one's it walked. */
static void trace_step(const run *R, double weight, double walk_s, int64_t work,
                       const long tails[2]) {
  double own_s = R->steal_share > 0 ? R->steal.own_s : R->pool ? R->pst.own_s : walk_s;
  double mine[8] = {(double)R->n, weight * 1e-9, walk_s, own_s,
                    (double)work, (double)sched_getcpu(), (double)tails[0], (double)tails[1]};
  double *all = R->me == 0 ? malloc((size_t)R->P * sizeof mine) : NULL;
  MPI_Gather(mine, 8, MPI_DOUBLE, all, 8, MPI_DOUBLE, 0, R->comm);
  if (!all) return;
  static int step;
  printf("barnes trace: step %d (weights %s): worker bodies weight/1e9 walk_s own_s interactions "
         "cpu given taken\n", step++, weights_name[weights_mode()]);
  for (int p = 0; p < R->P; p++) {
    const double *v = all + 8 * p;
    printf("barnes trace: %3d %8.0f %8.4f %8.4f %8.4f %12.0f %3.0f %5.0f %5.0f\n", p, v[0], v[1],
           v[2], v[3], v[4], v[5], v[6], v[7]);
  }
  free(all);
}

/* After the walk: the bodies' weights as weights_mode says (the walk left nanoseconds). */
static void reweigh(run *R) {
  int mode = weights_mode();
  if (mode == WEIGH_TIME) return;
  if (mode == WEIGH_WORK) { /* bh_weight falls back on the interactions */
    for (size_t i = 0; i < R->n; i++) R->b[i].cost = 0;
    return;
  }
  double ns = 0, work = 0;
  for (size_t i = 0; i < R->n; i++) ns += (double)R->b[i].cost, work += (double)R->b[i].work;
  /* in 1/64 interaction: the integer weights keep the share of a body of a few interactions */
  double scale = ns > 0 ? 64.0 * work / ns : 0;
  for (size_t i = 0; i < R->n; i++) R->b[i].cost = (int64_t)((double)R->b[i].cost * scale) + 1;
}

/* A team inserts subtrees of bodies in key order: the runs the migration brought, with their
 * keys, merged (sorted instead where a run is out of order, which a sender's sort rules out;
 * left where they are when they came in order, as one run always does). */
static void into_key_order(run *R, const bh_cube *cube) {
  int rc = bh_merge_runs_team(R->b, R->keys, R->runs, R->nruns, R->scratch, R->keys2, R->team);
  if (rc < 0) die(R, "out of memory merging the bodies");
  if (rc == 1) {
    fprintf(stderr, "barnes: worker %d: warning: a migrated run was out of key order; sorting\n",
            R->me);
    if (bh_sort_by_key_swap(cube, &R->b, &R->scratch, R->n, R->keys, R->team, &R->sort_keep))
      die(R, "out of memory sorting the bodies");
  } else if (rc == 0) {
    bh_body *b = R->b;
    R->b = R->scratch, R->scratch = b;
    uint64_t *k = R->keys;
    R->keys = R->keys2, R->keys2 = k;
  }
}

static void forces(run *R) {
  double t0 = now();
  bh_cube cube = global_cube(R);
  decompose(R, &cube);
  lap(R, PH_DOMAINS, &t0);
  bh_tree t;
  char err[160];
  double sort0 = now();
  if (R->team) into_key_order(R, &cube);
  R->dpart[0] += now() - sort0;
  if (bh_tree_build_team(&R->tr->mem, R->b, R->team ? R->keys : NULL, R->n, &cube, &t, err,
                         sizeof err, R->team, &R->keep))
    die(R, err);
  lap(R, PH_TREE, &t0);
  pieces g = {0};
  gather_branches(R, &t, &cube, &g);
  lap(R, PH_TOP, &t0);
  exchange_lets(R, &g);
  lap(R, PH_LETS, &t0);
  double weight = tracing() ? weight_held(R) : 0, walk0 = now();
  int64_t work0 = R->work;
  long tails0[2] = {R->steal.given + R->pst.given, R->steal.taken + R->pst.taken};
  if (R->pool) walk_pooled(R, &g.top); /* each walk timed: the next step's weights */
  else walk_all(R, g.top.root);
  double walk_s = now() - walk0;
  if (!(R->steal_share > 0)) reweigh(R);
  lap(R, PH_WALK, &t0);
  /* what the next worker walked of this one's tail comes back (a wait, counted as barrier);
   * then every body's weight is known */
  if (R->steal_share > 0) {
    if (bh_steal_finish(&R->steal, &R->work)) die(R, "the walk's shared tail came back wrong");
    reweigh(R);
  }
  long tails[2] = {R->steal.given + R->pst.given - tails0[0],
                   R->steal.taken + R->pst.taken - tails0[1]};
  if (tracing()) trace_step(R, weight, walk_s, R->work - work0, tails);
  MPI_Barrier(R->comm); /* the walk's load imbalance shows here, not in the next collective */
  R->barrier += now() - t0;
  lap(R, PH_BARRIER, &t0);
  R->tr->release(R->tr->ctx, &clock_now);
  if (R->poison) bh_tree_poison(&t); /* (a late reader of this tree then reads NaN) */
  if (bh_tree_free(&R->tr->mem, &t)) die(R, "freeing the tree failed");
  bh_top_free(&g.top);
  free(g.all), free(g.count), free(g.mine);
  lap(R, PH_FREE, &t0);
}

/* The seconds the rank's threads have waited on a run queue (runnable while another thread
 * held their core: /proc/thread-self/schedstat), summed over the threads: each reads its own in
 * a team run. -1 where a thread could not read it. */
static void read_runq(void *ctx, int t, int T) {
  (void)T;
  ((double *)ctx)[t] = bench_runq_wait_ns();
}

static double threads_runq(run *R) {
  int T = bh_team_size(R->team);
  double *v = calloc((size_t)T, sizeof *v), sum = 0;
  if (!v) die(R, "out of memory");
  if (R->team) bh_team_run(R->team, read_runq, v);
  else read_runq(v, 0, 1);
  for (int t = 0; t < T && sum >= 0; t++) sum = v[t] < 0 ? -1 : sum + v[t] * 1e-9;
  free(v);
  return sum;
}

/* BARNES_PHASES=3: the parts of the decomposition and of the tree, as print_phases' rows. */
static void print_parts(const run *R) {
  enum { N = 3 + BH_SORT_STAGES + BH_TREE_PARTS };
  static const char *const name[N] = {"  sort by key", "  domain cuts", "  migration",
                                      "   sort: keys", "   sort: counts", "   sort: scatter",
                                      "   sort: buckets", "   sort: move", "   sort: copy",
                                      "   sort: merge",
                                      "  insertion", "  order", "  moments", "  cells' memory",
                                      "  cells"};
  double mine[N], mx[N], mn[N], sum[N];
  memcpy(mine, R->dpart, sizeof R->dpart);
  bh_sort_stages(mine + 3);
  memcpy(mine + 3 + BH_SORT_STAGES, R->keep.part, sizeof R->keep.part);
  MPI_Reduce(mine, mx, N, MPI_DOUBLE, MPI_MAX, 0, R->comm);
  MPI_Reduce(mine, mn, N, MPI_DOUBLE, MPI_MIN, 0, R->comm);
  MPI_Reduce(mine, sum, N, MPI_DOUBLE, MPI_SUM, 0, R->comm);
  if (R->me != 0) return;
  printf("  parts (BARNES_PHASES=3): cube+domains' sort (a team's merge before its tree "
         "too), cuts and migration; the tree's\n");
  for (int k = 0; k < N; k++)
    printf("  %-16s %8.4f %8.4f %8.4f\n", name[k], mx[k], sum[k] / R->P, mn[k]);
}

/* BARNES_PHASES=1 (or 2, 3): per phase of the timed steps, the slowest, average and fastest
 * worker; then how long its threads waited for a core. */
static void print_phases(run *R) {
  if (!phases_level()) return;
  double mx[PH_N + 1], mn[PH_N + 1], sum[PH_N + 1], mine[PH_N + 1];
  memcpy(mine, R->phase, sizeof R->phase);
  mine[PH_N] = R->runq;
  MPI_Reduce(mine, mx, PH_N + 1, MPI_DOUBLE, MPI_MAX, 0, R->comm);
  MPI_Reduce(mine, mn, PH_N + 1, MPI_DOUBLE, MPI_MIN, 0, R->comm);
  MPI_Reduce(mine, sum, PH_N + 1, MPI_DOUBLE, MPI_SUM, 0, R->comm);
  long tails[3], my_tails[3] = {R->steal.given, R->steal.twice, R->pst.given};
  MPI_Reduce(my_tails, tails, 3, MPI_LONG, MPI_SUM, 0, R->comm);
  double let_cells = 0;
  MPI_Reduce(&R->let_cells, &let_cells, 1, MPI_DOUBLE, MPI_SUM, 0, R->comm);
  int peers[2] = {R->let_peers, -R->let_peers}; /* the most, and minus the fewest */
  MPI_Reduce(R->me ? (void *)peers : MPI_IN_PLACE, peers, 2, MPI_INT, MPI_MAX, 0, R->comm);
  if (R->me != 0) return;
  printf("barnes phases (%s, %d workers, seconds over the timed steps): slowest / average / fastest worker\n",
         R->tr->mode, R->P);
  for (int k = 0; k < PH_N; k++)
    printf("  %-16s %8.4f %8.4f %8.4f\n", phase_name[k], mx[k], sum[k] / R->P, mn[k]);
  if (mn[PH_N] < 0)
    printf("  %-16s (unknown: a thread could not read /proc/thread-self/schedstat)\n",
           "waited for core");
  else
    printf("  %-16s %8.4f %8.4f %8.4f  (a rank's threads summed: runnable, the core another's)\n",
           "waited for core", mx[PH_N], sum[PH_N] / R->P, mn[PH_N]);
  if (R->in_place)
    printf("  LETs: none made: the peers' branches read where they lie (BARNES_LETS=1 makes them)\n");
  else {
    char made_for[32];
    if (peers[0] == -peers[1]) snprintf(made_for, sizeof made_for, "%d", peers[0]);
    else snprintf(made_for, sizeof made_for, "%d to %d", -peers[1], peers[0]);
    printf("  LETs: %.0f cells made, every worker's summed (%.1f MB), a worker's for %s of its "
           "%d peers%s\n", let_cells, let_cells * (double)sizeof(bh_cell) / 1e6, made_for,
           R->P - 1,
           R->graft_near ? ", for the workers of other hosts only: the branches of a host's "
                           "workers read where they lie" : "");
  }
  if (R->steal_share > 0)
    printf("  shared tails (BARNES_STEAL=%g, %d bodies a chunk): %ld chunks walked by the next "
           "worker, %ld by both\n", R->steal_share, BH_STEAL_CHUNK, tails[0], tails[1]);
  if (R->pool)
    printf("  pooled walk (BARNES_POOL, %d bodies a chunk): %ld chunks walked by another "
           "worker than their owner\n", BH_POOL_CHUNK, tails[2]);
}

/* ---- diagnostics and the report ---- */

/* Sums (kinetic, potential, momentum), interactions, and cells opened whose children were
 * not sent (must be 0). */
static void global_sums(run *R, double s[5], int64_t *work, int64_t *missing) {
  bh_sums(R->b, R->n, s);
  int64_t c[2] = {R->work, R->missing};
  double t0 = now();
  MPI_Allreduce(MPI_IN_PLACE, s, 5, MPI_DOUBLE, MPI_SUM, R->comm);
  MPI_Allreduce(MPI_IN_PLACE, c, 2, MPI_INT64_T, MPI_SUM, R->comm);
  clock_now.wcomm += now() - t0;
  *work = c[0];
  *missing = c[1];
}

/* Worker 0 gets every body (plain MPI: output only). */
static bh_body *gather_bodies(run *R, size_t *total) {
  int cnt = (int)(R->n * sizeof *R->b), *cnts = NULL, *displs = NULL;
  if (R->me == 0) cnts = calloc((size_t)R->P * 2, sizeof *cnts), displs = cnts + R->P;
  MPI_Gather(&cnt, 1, MPI_INT, cnts, 1, MPI_INT, 0, R->comm);
  bh_body *all = NULL;
  if (R->me == 0) {
    size_t bytes = 0;
    for (int p = 0; p < R->P; p++) displs[p] = (int)bytes, bytes += (size_t)cnts[p];
    all = malloc(bytes ? bytes : 1);
    *total = bytes / sizeof *all;
  }
  MPI_Gatherv(R->b, cnt, MPI_BYTE, all, cnts, displs, MPI_BYTE, 0, R->comm);
  free(cnts);
  return all;
}

/* Worker 0: the table and CSV row, the checks; 1 when one failed. */
static int report(run *R, double total, const double s0[5], const double s[5], int64_t work,
                  int64_t missing) {
  bh_times mine = {total - clock_now.wcomm - clock_now.scomm - R->barrier, clock_now.wcomm,
                   clock_now.scomm, R->barrier, total},
           sum, max;
  MPI_Reduce(&mine, &sum, 5, MPI_DOUBLE, MPI_SUM, 0, R->comm);
  MPI_Reduce(&mine, &max, 5, MPI_DOUBLE, MPI_MAX, 0, R->comm);
  if (R->me != 0) return 0;
  int P = R->P, failed = 0;
  bh_times avg = {sum.compute / P, sum.wcomm / P, sum.scomm / P, sum.barrier / P, sum.total / P};
  double drift = (s[0] + s[1] - s0[0] - s0[1]) / fabs(s0[0] + s0[1]);
  size_t N = (size_t)R->o->bodies;
  if (bh_report(R->o, R->tr->mode, P, R->schedulers, &avg, &max,
                R->o->steps ? (double)work / (double)N : 0, drift))
    failed = 1;
  if (missing) {
    fprintf(stderr, "barnes: error: %lld cells opened whose children no LET carried\n",
            (long long)missing);
    failed = 1;
  }
  return failed;
}

/* Every worker makes the same bodies and keeps its slice; the first step's domains decide. */
static void start(run *R) {
  size_t N = (size_t)R->o->bodies, lo = N * (size_t)R->me / (size_t)R->P,
         hi = N * (size_t)(R->me + 1) / (size_t)R->P;
  bh_body *all = malloc(N * sizeof *all);
  R->cut = calloc((size_t)R->P + 1, sizeof *R->cut);
  R->tcut = calloc((size_t)R->P, sizeof *R->tcut);
  R->runs = calloc(2 * (size_t)R->P + 1, sizeof *R->runs); /* two exchanges with tails */
  if (!all || !R->cut || !R->tcut || !R->runs || reserve(R, hi - lo + 1)) die(R, "out of memory for the bodies");
  bh_plummer(all, N, R->o->seed);
  memcpy(R->b, all + lo, (hi - lo) * sizeof *all);
  R->n = hi - lo;
  free(all);
}

/* The run's end: the report, the positions, the body count; 1 when a check failed. */
static int finish(run *R, double total, const double s0[5]) {
  double s[5];
  int64_t work, missing;
  global_sums(R, s, &work, &missing);
  int failed = report(R, total, s0, s, work, missing);
  size_t n_all = 0, N = (size_t)R->o->bodies;
  bh_body *every = gather_bodies(R, &n_all);
  if (R->me == 0) {
    if (n_all != N) {
      fprintf(stderr, "barnes: error: %zu bodies at the end, %zu at the start\n", n_all, N);
      failed = 1;
    }
    if (R->o->positions && bh_write_positions(R->o->positions, every, n_all)) failed = 1;
    printf("barnes: %d passed, %d failed\n", !failed, failed);
  }
  free(every);
  MPI_Bcast(&failed, 1, MPI_INT, 0, R->comm);
  return failed;
}

/* Worker q sends this one a LET exactly when this one sends q one: the exchange waits for
 * what it was promised. Workers that disagree on who shares memory (ANTHEAP_CHECK=handover on
 * some ranks only) would hang there; they stop here instead. */
static void agree_on_lets(run *R) {
  char *theirs = malloc((size_t)R->P);
  if (!theirs) die(R, "out of memory");
  MPI_Alltoall(R->let_want, 1, MPI_BYTE, theirs, 1, MPI_BYTE, R->comm);
  int q = 0;
  while (q < R->P && !theirs[q] == !R->let_want[q]) q++;
  int odd = q < R->P;
  MPI_Allreduce(MPI_IN_PLACE, &odd, 1, MPI_INT, MPI_MAX, R->comm);
  free(theirs);
  if (odd && R->me == 0)
    fprintf(stderr, "barnes: error: the workers disagree on which of them share memory (is "
                    "ANTHEAP_CHECK set the same on every rank?)\n");
  if (odd) {
    MPI_Barrier(R->comm);
    MPI_Abort(R->comm, 2);
  }
}

/* BARNES_STEAL and BARNES_TAIL_TEST (bh_steal.h), BARNES_POOL and BARNES_POOL_TEST (bh_pool.h),
 * read on worker 0 and sent to all (one setting for the job). The tails are shared where there
 * are several workers of one thread each (a team shares its walk among its threads); the walk is
 * pooled where there are several workers that share memory (each, with all its threads, draws
 * from the pools of its host's workers), by default unless the tails are used. -1 after a bad
 * value, said once. */
static int walk_settings(run *R) {
  double v[5] = {bh_steal_share(), bh_steal_test(), bh_pool_setting(), bh_pool_test_mode(),
                 bh_lets_setting()};
  MPI_Bcast(v, 5, MPI_DOUBLE, 0, R->comm);
  /* the tails count only for workers of one thread */
  bool tails = v[0] > 0 && !R->team, asked = v[2] == BH_POOL_ON;
  if (v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0 || v[4] < 0 || (tails && asked)) {
    if (R->me == 0 && v[0] < 0)
      fprintf(stderr, "barnes: error: BARNES_STEAL=%s: expected 0 or a share of the walk from "
              "0.001 to 0.5\n", getenv("BARNES_STEAL"));
    if (R->me == 0 && v[1] < 0)
      fprintf(stderr, "barnes: error: BARNES_TAIL_TEST=%s: expected late, twice, keep or half\n",
              getenv("BARNES_TAIL_TEST"));
    if (R->me == 0 && v[2] < 0)
      fprintf(stderr, "barnes: error: BARNES_POOL=%s: expected 0 or 1\n", getenv("BARNES_POOL"));
    if (R->me == 0 && v[3] < 0)
      fprintf(stderr, "barnes: error: BARNES_POOL_TEST=%s: expected lazy\n",
              getenv("BARNES_POOL_TEST"));
    if (R->me == 0 && v[4] < 0)
      fprintf(stderr, "barnes: error: BARNES_LETS=%s: expected 0 or 1\n", getenv("BARNES_LETS"));
    if (R->me == 0 && tails && asked)
      fprintf(stderr, "barnes: error: BARNES_STEAL and BARNES_POOL=1 are two ways to share the "
              "walk: set one\n");
    return -1;
  }
  if (R->team && v[0] > 0 && R->me == 0)
    fprintf(stderr, "barnes: note: BARNES_STEAL is not used with --threads: a rank's threads "
            "share its walk\n");
  if (R->P == 1) {
    if (asked && R->me == 0)
      fprintf(stderr, "barnes: note: BARNES_POOL is not used: one worker has no one to share "
              "its walk with\n");
    return 0;
  }
  if (tails) {
    R->steal_share = v[0];
    R->steal = (bh_steal){.me = R->me, .P = R->P, .test = (int)v[1]};
    MPI_Comm_dup(R->comm, &R->steal.comm);
    return 0;
  }
  if (tails || v[2] == BH_POOL_OFF || !R->tr->shared_area) {
    if (asked && R->me == 0)
      fprintf(stderr, "barnes: note: BARNES_POOL is not used: this program's workers share no "
              "memory (barnes on one host does)\n");
    return 0;
  }
  /* the workers that share memory with this one (those of its host): its pool's peers */
  R->pool_peer = calloc((size_t)R->P, sizeof *R->pool_peer);
  R->pools = calloc((size_t)R->P, sizeof *R->pools);
  if (!R->pool_peer || !R->pools) die(R, "out of memory");
  int some = 0;
  for (int q = 0; q < R->P; q++)
    if (q != R->me && R->tr->shares && R->tr->shares(R->tr->ctx, q)) R->pool_peer[q] = 1, some = 1;
  MPI_Allreduce(MPI_IN_PLACE, &some, 1, MPI_INT, MPI_MAX, R->comm);
  R->pool = some;
  if (!R->pool && asked && R->me == 0)
    fprintf(stderr, "barnes: note: BARNES_POOL is not used: no worker shares memory with another "
            "(one a host, ANTHEAP_SHARE=none, or ANTHEAP_CHECK=handover)\n");
  R->pool_mode = (bh_pool_mode)v[3];
  R->graft_near = R->pool && v[4] != BH_LETS_ALWAYS;
  int all = R->graft_near;
  for (int q = 0; q < R->P; q++) all &= q == R->me || R->pool_peer[q];
  MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, R->comm);
  R->in_place = all;
  for (int q = 0; q < R->P; q++) R->let_want[q] = !(R->graft_near && R->pool_peer[q]);
  R->let_want[R->me] = 0;
  agree_on_lets(R);
  return 0;
}

int bh_run(const bh_opts *o, MPI_Comm comm, int schedulers, const bh_transport *tr) {
  run R = {.o = o, .tr = tr, .comm = comm, .schedulers = schedulers};
  if (o->threads > 1 && !(R.team = bh_team_new(o->threads))) {
    fprintf(stderr, "barnes: error: could not start %d threads\n", o->threads);
    MPI_Abort(comm, 1);
  }
  MPI_Comm_rank(comm, &R.me);
  MPI_Comm_size(comm, &R.P);
  if (weights_mode() == WEIGH_UNKNOWN) {
    if (R.me == 0)
      fprintf(stderr, "barnes: error: BARNES_WEIGHTS=%s: expected time, work or scaled\n",
              getenv("BARNES_WEIGHTS"));
    MPI_Barrier(comm);
    MPI_Abort(comm, 2);
  }
  const char *tree_test = getenv("BARNES_TREE_TEST"); /* poison: bh_tree_poison before a free */
  if (tree_test && *tree_test && strcmp(tree_test, "poison")) {
    if (R.me == 0)
      fprintf(stderr, "barnes: error: BARNES_TREE_TEST=%s: expected poison\n", tree_test);
    MPI_Barrier(comm);
    MPI_Abort(comm, 2);
  }
  R.poison = tree_test && !strcmp(tree_test, "poison");
  if (!(R.let_want = malloc((size_t)R.P))) die(&R, "out of memory");
  for (int q = 0; q < R.P; q++) R.let_want[q] = q != R.me; /* (walk_settings may graft some) */
  if (walk_settings(&R)) {
    MPI_Barrier(comm);
    MPI_Abort(comm, 2);
  }
  start(&R);
  forces(&R);
  double s0[5];
  int64_t work, missing;
  global_sums(&R, s0, &work, &missing);
  if (R.me == 0 && !o->quiet) {
    printf("barnes: %ld bodies, %d workers, %d schedulers (%s), theta %g, dt %g, eps %g, seed %llu\n",
           o->bodies, R.P, schedulers, tr->mode, o->theta, o->dt, o->eps,
           (unsigned long long)o->seed);
    bh_print_step(0, 0, s0, s0, (double)work / (double)o->bodies);
  }
  clock_now = (bh_clock){0};
  R.barrier = 0;
  memset(R.phase, 0, sizeof R.phase);
  memset(R.dpart, 0, sizeof R.dpart);
  bh_sort_stages_reset();
  memset(R.keep.part, 0, sizeof R.keep.part);
  R.steal.given = R.steal.taken = R.steal.twice = 0;
  R.pst = (bh_pool_stats){0};
  R.let_cells = 0;
  MPI_Barrier(comm);
  double runq0 = phases_level() ? threads_runq(&R) : 0;
  double t0 = now();
  for (long step = 1; step <= o->steps; step++) {
    R.work = 0;
    bh_kick(R.b, R.n, o->dt / 2);
    bh_drift(R.b, R.n, o->dt);
    forces(&R);
    bh_kick(R.b, R.n, o->dt / 2);
    double s[5];
    global_sums(&R, s, &work, &missing);
    if (R.me == 0 && !o->quiet)
      bh_print_step(step, (double)step * o->dt, s0, s, (double)work / (double)o->bodies);
  }
  double total = now() - t0;
  if (phases_level()) {
    double runq1 = threads_runq(&R);
    R.runq = runq0 < 0 || runq1 < 0 ? -1 : runq1 - runq0;
  }
  print_phases(&R);
  if (phases_level() == 3) print_parts(&R);
  int failed = finish(&R, total, s0);
  free(R.b), free(R.scratch), free(R.keys), free(R.keys2), free(R.runs), free(R.cut), free(R.tcut);
  if (R.steal_share > 0) MPI_Comm_free(&R.steal.comm);
  free(R.pools), free(R.pool_peer), free(R.let_want);
  bh_team_free(R.team);
  bh_tree_keep_free(&R.keep);
  bh_block_free(&R.sort_keep);
  return failed;
}

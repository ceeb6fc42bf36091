/* par_left.c: what waits after the main phase. By then the cells are full, and a move costs the
 * receiver a page-table entry per page of the cell (the region's memory is shared, not copied,
 * but mapped page by page), so only the cells the waiting points need move. An insertion that
 * waits says which cell it needed (the first one it met that its worker did not hold: the
 * point's pad). In each round every worker learns the waiting points (one sum, then one gather
 * when there are any) and joins each point's cell with the cell it needed, in groups that only
 * grow from round to round (union-find, the same at every worker); each group with a waiting
 * point goes to one holder: the one that already holds most of it (by the cells' expected
 * points), so the least memory moves. Then each worker inserts what waits in the cells it holds.
 * A point that waits again names another cell, so groups grow until its insertion fits; after
 * ROUNDS rounds every cell joins one group (one worker holds all: nothing can wait;
 * DT_LEFT_ROUNDS=K in the environment sets ROUNDS, for the tests). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "par.h"

#define ROUNDS 6

/* ---- groups of cells (union-find) ---- */
static int find(int *up, int c) {
  while (up[c] != c) c = up[c] = up[up[c]];
  return c;
}

static void join(int *up, int a, int b) {
  a = find(up, a), b = find(up, b);
  if (a != b) up[a < b ? b : a] = a < b ? a : b;
}

/* Every worker's waiting points (in the headers of the cells it holds), at every worker. */
static dt_pt *gather_waiting(int64_t *n) {
  dt_pt *mine = NULL;
  size_t k = 0;
  for (int c = 0; c < G.p.ncells; c++)
    if (G.own[c] && G.hdr[c]->npend) {
      mine = realloc(mine, (k + (size_t)G.hdr[c]->npend) * sizeof *mine);
      if (!mine) die("out of memory");
      memcpy(mine + k, G.hdr[c]->pend, (size_t)G.hdr[c]->npend * sizeof *mine);
      k += (size_t)G.hdr[c]->npend;
    }
  int cnt = (int)k, *all = malloc((size_t)G.W * sizeof *all), *off = malloc((size_t)G.W * sizeof *off);
  if (!all || !off) die("out of memory");
  double t0 = now();
  MPI_Allgather(&cnt, 1, MPI_INT, all, 1, MPI_INT, sys_comm());
  *n = 0;
  for (int w = 0; w < G.W; w++) off[w] = (int)*n, *n += all[w];
  dt_pt *every = malloc(((size_t)*n + 1) * sizeof *every);
  if (!every) die("out of memory");
  MPI_Allgatherv(mine, cnt, G.pt_type, every, all, off, G.pt_type, sys_comm());
  G.wcomm += now() - t0;
  free(mine), free(all), free(off);
  return every;
}

/* The holder of the group of cells rooted at root: the worker with the largest share of its
 * expected points (share: scratch of W zeros, left zeroed). */
static int group_holder(const int *members, int k, double *share) {
  int best = G.holder[members[0]];
  for (int i = 0; i < k; i++) share[G.holder[members[i]]] += (double)G.expect[members[i]] + 1;
  for (int i = 0; i < k; i++)
    if (share[G.holder[members[i]]] > share[best]) best = G.holder[members[i]];
  for (int i = 0; i < k; i++) share[G.holder[members[i]]] = 0;
  return best;
}

static int by_root(const void *a, const void *b) {
  const int *x = a, *y = b; /* root, cell */
  return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* The holders of one round: the groups that hold a waiting point, each to one worker; other
 * cells stay. up: the groups, grown by this round's points (all cells joined: everything). */
static void round_holders(const dt_pt *pts, int64_t n, int everything, int *up, int *to) {
  int nc = G.p.ncells, k = 0;
  int *rc = malloc((size_t)nc * 2 * sizeof *rc), *members = malloc((size_t)nc * sizeof *members);
  uint8_t *active = calloc((size_t)nc, 1);
  double *share = calloc((size_t)G.W, sizeof *share);
  if (!rc || !members || !active || !share) die("out of memory");
  for (int64_t i = 0; i < n; i++) {
    int home = dt_plan_cell_of(&G.p, pts[i].x, pts[i].y), need = pts[i].pad;
    if (need >= 0 && need < nc) join(up, home, need);
  }
  for (int c = 1; everything && c < nc; c++) join(up, 0, c);
  for (int64_t i = 0; i < n; i++) active[find(up, dt_plan_cell_of(&G.p, pts[i].x, pts[i].y))] = 1;
  for (int c = 0; c < nc; c++) {
    to[c] = G.holder[c];
    if (active[find(up, c)]) rc[2 * k] = find(up, c), rc[2 * k + 1] = c, k++;
  }
  qsort(rc, (size_t)k, 2 * sizeof *rc, by_root);
  for (int i = 0, j; i < k; i = j) {
    for (j = i; j < k && rc[2 * j] == rc[2 * i]; j++) members[j - i] = rc[2 * j + 1];
    int w = group_holder(members, j - i, share);
    for (int t = 0; t < j - i; t++) to[members[t]] = w;
  }
  free(rc), free(members), free(active), free(share);
}

/* DT_DEBUG: how far the waiting points are from the borders, in their blocks' spacings. */
static void debug_distances(const dt_pt *pts, int64_t n, int round) {
  int hist[12] = {0};
  for (int64_t i = 0; i < n; i++) {
    int b = dt_plan_block_of(&G.p, pts[i].x, pts[i].y), bi = b / G.p.BY, bj = b % G.p.BY;
    double r[4], s = dt_plan_spacing(&G.p, b), d = INFINITY;
    dt_plan_block_rect(&G.p, b, r);
    if (bi > 0) d = fmin(d, pts[i].x - r[0]);
    if (bi < G.p.BX - 1) d = fmin(d, r[1] - pts[i].x);
    if (bj > 0) d = fmin(d, pts[i].y - r[2]);
    if (bj < G.p.BY - 1) d = fmin(d, r[3] - pts[i].y);
    int k = s > 0 && d / s < 11 ? (int)(d / s) : 11;
    hist[k]++;
  }
  fprintf(stderr, "delaunay: round %d: %lld points wait; by distance to a border (spacings 0, "
          "1, .. 11+):", round, (long long)n);
  for (int k = 0; k < 12; k++) fprintf(stderr, " %d", hist[k]);
  fprintf(stderr, "\n");
}

int64_t par_leftovers(void (*run_phase)(int tag, const dt_pt *start)) {
  int64_t first = -1;
  int nc = G.p.ncells, *to = malloc((size_t)nc * sizeof *to), *up = malloc((size_t)nc * sizeof *up);
  if (!to || !up) die("out of memory");
  for (int c = 0; c < nc; c++) up[c] = c;
  const char *env = getenv("DT_LEFT_ROUNDS"); /* tests: reach the last round sooner */
  int rounds = env ? atoi(env) : ROUNDS;
  for (int round = 0;; round++) {
    int64_t mine = par_my_pending(NULL), all = 0;
    double t0 = now();
    MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_SUM, sys_comm());
    G.wait += now() - t0;
    if (first < 0) first = all;
    if (!all) break;
    if (round > rounds) die("points still wait with every cell at one worker");
    dt_pt *pts = gather_waiting(&all);
    if (getenv("DT_DEBUG") && G.me == 0) debug_distances(pts, all, round);
    round_holders(pts, all, round == rounds, up, to);
    if (round == rounds && G.me == 0)
      printf("delaunay: %lld points still waited after %d rounds: every cell to one worker\n",
             (long long)all, rounds);
    free(pts);
    par_transition(to);
    run_phase(-1, NULL);
  }
  free(to), free(up);
  return first;
}

/* plan.c: the decomposition of plan.h: blocks at the points' quantiles (columns, then rows per
 * column), the 3 x 3 cells of each block, zones, who holds which cell in each configuration,
 * and the moves between two configurations in a deadlock-free order of rounds. */
#include "plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int dt_plan_init(dt_plan *p, int workers) {
  memset(p, 0, sizeof *p);
  int m = 0;
  while ((1 << m) < workers && m < 12) m++;
  if (workers < 1 || workers > PLAN_MAX_WORKERS || (1 << m) != workers) return -1;
  p->W = workers;
  p->m = m;
  p->BX = 1 << (m / 2);
  p->BY = 1 << (m - m / 2);
  p->ncells = 9 * workers;
  return 0;
}

void dt_plan_free(dt_plan *p) {
  free(p->xs), free(p->ys), free(p->inner), free(p->zone), free(p->whole);
  p->xs = p->ys = p->inner = p->zone = NULL;
  p->whole = NULL;
}

/* ---- quantiles: a deterministic quickselect on (x, y) pairs (Hoare partition: equal keys,
 * as on a grid, split evenly) ---- */
static void swap_pair(double *a, long i, long j) {
  double x = a[2 * i], y = a[2 * i + 1];
  a[2 * i] = a[2 * j], a[2 * i + 1] = a[2 * j + 1];
  a[2 * j] = x, a[2 * j + 1] = y;
}

static double med3(double a, double b, double c) {
  if (a > b) {
    double t = a;
    a = b, b = t;
  }
  return c < a ? a : c > b ? b : c;
}

/* Put the k-th smallest (by coordinate ax) at a[k], smaller ones before, larger after. */
static void select_k(double *a, long n, long k, int ax) {
  long lo = 0, hi = n - 1;
  while (lo < hi) {
    double pv = med3(a[2 * lo + ax], a[2 * ((lo + hi) / 2) + ax], a[2 * hi + ax]);
    long i = lo, j = hi;
    while (i <= j) {
      while (a[2 * i + ax] < pv) i++;
      while (a[2 * j + ax] > pv) j--;
      if (i <= j) swap_pair(a, i++, j--);
    }
    if (k <= j)
      hi = j;
    else if (k >= i)
      lo = i;
    else
      return;
  }
}

/* Edges between `parts` groups of a[0..n) along ax (parts a power of two), into edge[1..parts-1]
 * (edge[t]: where group t starts); groups land contiguous, group t at [start[t], start[t+1]). */
static void split(double *a, long n, int parts, int ax, double *edge, long *start, long base) {
  if (parts == 1) return;
  long k = n / 2;
  if (n > 0) select_k(a, n, k, ax);
  edge[parts / 2] = n > 0 ? a[2 * k + ax] : NAN;
  start[parts / 2] = base + k;
  split(a, k, parts / 2, ax, edge, start, base);
  split(a + 2 * k, n - k, parts / 2, ax, edge + parts / 2, start + parts / 2, base + k);
}

/* Empty groups (a sample smaller than the parts) get edges between their neighbours'. */
static void fill_edges(double *e, int parts, double lo, double hi) {
  e[0] = lo, e[parts] = hi;
  for (int t = 1; t < parts; t++) {
    if (!isnan(e[t]) && e[t] >= e[t - 1] && e[t] <= hi) continue;
    int u = t + 1;
    while (u < parts && (isnan(e[u]) || e[u] < e[t - 1])) u++;
    double end = u < parts ? e[u] : hi;
    e[t] = e[t - 1] + (end - e[t - 1]) / (u - t + 1);
  }
}

double dt_plan_spacing(const dt_plan *p, int b) {
  double r[4];
  dt_plan_block_rect(p, b, r);
  return p->n ? sqrt((r[1] - r[0]) * (r[3] - r[2]) * p->W / (double)p->n) : 0;
}

static void block_strips(dt_plan *p, int b, double zone) {
  double r[4];
  dt_plan_block_rect(p, b, r);
  double w = r[1] - r[0], h = r[3] - r[2], s = dt_plan_spacing(p, b);
  double zw = zone * s, fx = fmax(w / 8, zw + 3 * s), fy = fmax(h / 8, zw + 3 * s);
  fx = fmin(fx, 0.3 * w), fy = fmin(fy, 0.3 * h);
  double *in = &p->inner[4 * b];
  in[0] = r[0] + fx, in[1] = r[1] - fx, in[2] = r[2] + fy, in[3] = r[3] - fy;
  p->zone[b] = zw;
}

int dt_plan_geometry(dt_plan *p, const double box[4], double *xy, size_t ns, size_t n, double zone) {
  int BX = p->BX, BY = p->BY;
  memcpy(p->box, box, sizeof p->box);
  p->n = n;
  p->xs = malloc((size_t)(BX + 1) * sizeof *p->xs);
  p->ys = malloc((size_t)BX * (BY + 1) * sizeof *p->ys);
  p->inner = malloc((size_t)p->W * 4 * sizeof *p->inner);
  p->zone = malloc((size_t)p->W * sizeof *p->zone);
  p->whole = calloc((size_t)BX, 1);
  long *col = malloc((size_t)(BX + 1) * sizeof *col), *row = malloc((size_t)(BY + 1) * sizeof *row);
  if (!p->xs || !p->ys || !p->inner || !p->zone || !p->whole || !col || !row) {
    free(col), free(row), dt_plan_free(p);
    return -1;
  }
  col[0] = 0, col[BX] = (long)ns;
  split(xy, (long)ns, BX, 0, p->xs, col, 0);
  fill_edges(p->xs, BX, box[0], box[1]);
  for (int i = 0; i < BX; i++) {
    double *ys = &p->ys[i * (BY + 1)];
    long m = col[i + 1] - col[i];
    split(xy + 2 * col[i], m, BY, 1, ys, row, 0);
    fill_edges(ys, BY, box[2], box[3]);
  }
  dt_plan_refit(p, zone);
  free(col), free(row);
  return 0;
}

static void find_whole_lines(dt_plan *p);

void dt_plan_refit(dt_plan *p, double zone) {
  for (int b = 0; b < p->W; b++) block_strips(p, b, zone);
  find_whole_lines(p);
}

/* ---- where a point is ---- */
/* The group t of v among edges e[0..parts] (e[t] <= v < e[t+1], clamped; NaN: 0). A search
 * without branches on v: the halving step is a conditional move, since on points in random
 * order every compare would be a coin toss for the branch predictor (classifying and counting
 * millions of points calls this per point). */
static int group_of(const double *e, int parts, double v) {
  int lo = 0, n = parts; /* invariant: the answer in [lo, lo + n) */
  while (n > 1) {
    int half = n / 2;
    lo = v >= e[lo + half] ? lo + half : lo;
    n -= half;
  }
  return lo;
}

int dt_plan_column_of(const dt_plan *p, double x) { return group_of(p->xs, p->BX, x); }

int dt_plan_block_of(const dt_plan *p, double x, double y) {
  int i = dt_plan_column_of(p, x);
  return i * p->BY + group_of(&p->ys[i * (p->BY + 1)], p->BY, y);
}

/* The cell of (x, y) in block b: its strip tests (strip_span has their rectangles). */
static int cell_in_block(const dt_plan *p, int b, double x, double y) {
  const double *in = &p->inner[4 * b];
  int c = x < in[0] ? 0 : x >= in[1] ? 2 : 1, r = y < in[2] ? 0 : y >= in[3] ? 2 : 1;
  return 9 * b + 3 * r + c;
}

int dt_plan_cell_of(const dt_plan *p, double x, double y) {
  return cell_in_block(p, dt_plan_block_of(p, x, y), x, y);
}

void dt_plan_block_rect(const dt_plan *p, int b, double r[4]) {
  int i = b / p->BY, j = b % p->BY;
  const double *ys = &p->ys[i * (p->BY + 1)];
  r[0] = p->xs[i], r[1] = p->xs[i + 1], r[2] = ys[j], r[3] = ys[j + 1];
}

void dt_plan_cell_rect(const dt_plan *p, int cell, double r[4]) {
  int b = cell / 9, c = cell % 3, rw = cell % 9 / 3;
  double br[4];
  dt_plan_block_rect(p, b, br);
  const double *in = &p->inner[4 * b];
  double xe[4] = {br[0], in[0], in[1], br[1]}, ye[4] = {br[2], in[2], in[3], br[3]};
  r[0] = xe[c], r[1] = xe[c + 1], r[2] = ye[rw], r[3] = ye[rw + 1];
}

/* One axis of dt_plan_cell_inside: the part of [lo, hi) (the block's) that the strip tests
 * (v < a: 0, v >= b: 2, else 1) give part k, as [*r0, *r1). */
static void strip_span(double lo, double hi, double a, double b, int k, double *r0, double *r1) {
  if (k == 0) *r0 = lo, *r1 = fmin(a, hi);
  else if (k == 1) *r0 = fmax(a, lo), *r1 = fmin(b, hi);
  else *r0 = fmax(fmax(a, b), lo), *r1 = hi;
}

void dt_plan_cell_inside(const dt_plan *p, int cell, double r[4]) {
  int b = cell / 9, c = cell % 3, rw = cell % 9 / 3;
  double br[4];
  dt_plan_block_rect(p, b, br);
  const double *in = &p->inner[4 * b];
  strip_span(br[0], br[1], in[0], in[1], c, &r[0], &r[1]);
  strip_span(br[2], br[3], in[2], in[3], rw, &r[2], &r[3]);
}

/* The line configuration of a point at height y by line (l, l + 1): the pair of column l's rows
 * whose inner border is the nearest (the first or last pair at the box's edges); the first
 * configuration of its parity for a whole line. */
static int line_zone(const dt_plan *p, int l, double y) {
  int BY = p->BY;
  const double *ys = &p->ys[l * (BY + 1)];
  int j = group_of(ys, BY, y), j0 = y - ys[j] < ys[j + 1] - y ? j - 1 : j;
  j0 = j0 < 0 || p->whole[l] ? 0 : j0 > BY - 2 ? BY - 2 : j0;
  return CONF_VZ0 + 2 * (l % 2) + j0 % 2;
}

/* The zone of a point of block (i, j) with rectangle r, for a zone of half-width z. */
static int zone_at(const dt_plan *p, int i, int j, const double r[4], double x, double y,
                   double z) {
  if (i > 0 && x - r[0] < z) return line_zone(p, i - 1, y);
  if (i < p->BX - 1 && r[1] - x < z) return line_zone(p, i, y);
  if (j > 0 && y - r[2] < z) return CONF_HZ0 + (j - 1) % 2;
  if (j < p->BY - 1 && r[3] - y < z) return CONF_HZ0 + j % 2;
  return CONF_BLOCK;
}

/* The zone of a point of block b, for a zone of half-width z. */
static int zone_in(const dt_plan *p, int b, double x, double y, double z) {
  double r[4];
  dt_plan_block_rect(p, b, r);
  return zone_at(p, b / p->BY, b % p->BY, r, x, y, z);
}

int dt_plan_zone(const dt_plan *p, double x, double y) {
  int b = dt_plan_block_of(p, x, y);
  return zone_in(p, b, x, y, p->zone[b]);
}

int dt_plan_place(const dt_plan *p, double x, double y, double zw, const double *cap, int *zone) {
  int i = group_of(p->xs, p->BX, x);
  const double *ys = &p->ys[i * (p->BY + 1)];
  int j = group_of(ys, p->BY, y), b = i * p->BY + j;
  double r[4] = {p->xs[i], p->xs[i + 1], ys[j], ys[j + 1]};
  *zone = zone_at(p, i, j, r, x, y, zw < cap[b] ? zw : cap[b]);
  return cell_in_block(p, b, x, y);
}

int dt_plan_place_rect(const dt_plan *p, const double r[4], double zw, const double *cap) {
  int z0, z1, c0 = dt_plan_place(p, r[0], r[2], zw, cap, &z0);
  int c1 = dt_plan_place(p, r[1], r[3], zw, cap, &z1);
  return c0 == c1 && z0 == CONF_BLOCK && z1 == CONF_BLOCK ? c0 : -1;
}

/* ---- configurations ---- */
/* The part of column l whose line points go to pair (j0, j0 + 1) (line_zone: those nearer its
 * inner border than any other), from the middle of row j0 to the middle of row j0 + 1 (the
 * box's edge at the first and last pair), widened by a quarter of either row: [*a, *b). */
static void pair_reach(const dt_plan *p, int l, int j0, double *a, double *b) {
  const double *ys = &p->ys[l * (p->BY + 1)];
  *a = j0 == 0 ? -INFINITY : ys[j0 + 1] - 0.75 * (ys[j0 + 1] - ys[j0]);
  *b = j0 + 2 == p->BY ? INFINITY : ys[j0 + 1] + 0.75 * (ys[j0 + 2] - ys[j0 + 1]);
}

/* The pair of rows (j0, j0 + 1) of parity k in column l whose reach a cell of column l + 1
 * spanning [y0, y1) meets, as the block (l, j0), or -1; in *pairs, how many it meets (more than
 * one makes the line whole, and then this answer is not used). */
static int right_cell_window(const dt_plan *p, int l, int k, double y0, double y1, int *pairs) {
  const double *ys = &p->ys[l * (p->BY + 1)];
  int lo = group_of(ys, p->BY, y0), hi = group_of(ys, p->BY, y1), first = -1;
  *pairs = 0;
  for (int j0 = lo - 1; j0 <= hi; j0++) {
    if (j0 < 0 || j0 + 1 >= p->BY || j0 % 2 != k) continue;
    double a, b;
    pair_reach(p, l, j0, &a, &b);
    if (fmin(b, y1) - fmax(a, y0) <= 0) continue;
    if (first < 0) first = l * p->BY + j0;
    ++*pairs;
  }
  return first;
}

/* A line is whole where a right-hand cell of its windows meets the reach of two pairs of one
 * parity (the columns' rows far apart, as clustered points make them): its one window holds
 * both columns in both configurations of its parity, and one worker inserts the line's zone
 * over the columns' whole height. */
static void find_whole_lines(dt_plan *p) {
  for (int l = 0; l + 1 < p->BX; l++) {
    p->whole[l] = 0;
    for (int b = (l + 1) * p->BY; b < (l + 2) * p->BY && !p->whole[l]; b++)
      for (int cell = 9 * b; cell < 9 * b + 9 && !p->whole[l]; cell++) {
        double r[4];
        dt_plan_cell_rect(p, cell, r);
        for (int k = 0, pairs; k < 2 && cell % 3 <= 1; k++)
          if (right_cell_window(p, l, k, r[2], r[3], &pairs), pairs > 1) p->whole[l] = 1;
      }
  }
}

/* The window of a cell (block (i, j), strip column c) in line configuration VZ0 + v. */
static int line_window(const dt_plan *p, int v, int cell) {
  int b = cell / 9, i = b / p->BY, j = b % p->BY, c = cell % 3, lp = v / 2, k = v % 2, pairs;
  int l = i % 2 == lp ? i : i - 1; /* the line whose window may hold it: i's own, or i - 1's */
  if (l < 0 || l + 1 >= p->BX) return -1;
  if (p->whole[l]) return l * p->BY + p->BY - 1; /* the top block of the left column */
  if (l == i && c >= 1) { /* the left column of the line */
    int j0 = j % 2 == k ? j : j - 1;
    return j0 >= 0 && j0 + 1 < p->BY ? i * p->BY + j0 : -1;
  }
  if (l == i - 1 && c <= 1) { /* the right column */
    double r[4];
    dt_plan_cell_rect(p, cell, r);
    return right_cell_window(p, l, k, r[2], r[3], &pairs);
  }
  return -1;
}

int dt_plan_window(const dt_plan *p, int conf, int cell) {
  int b = cell / 9, j = b % p->BY;
  if (conf == CONF_HZ0 || conf == CONF_HZ1) {
    int k = conf - CONF_HZ0;
    if (j % 2 == k && j + 1 < p->BY) return b;    /* the lower block of its pair */
    if (j >= 1 && (j - 1) % 2 == k) return b - 1; /* the upper one */
  } else if (conf >= CONF_VZ0 && conf <= CONF_VZ3) {
    return line_window(p, conf - CONF_VZ0, cell);
  }
  return -1;
}

int dt_plan_owner(const dt_plan *p, int conf, int cell) {
  if (conf == CONF_ZERO) return 0;
  int w = dt_plan_window(p, conf, cell);
  return w < 0 ? cell / 9 : w;
}

void dt_plan_owners(const dt_plan *p, int conf, int *own) {
  for (int c = 0; c < p->ncells; c++) own[c] = dt_plan_owner(p, conf, c);
}

void dt_plan_scatter_step(const dt_plan *p, const int *dest, int r, int *own) {
  int low = p->m - r;
  for (int c = 0; c < p->ncells; c++) own[c] = low > 0 ? dest[c] & ~((1 << low) - 1) : dest[c];
}

/* ---- moves ---- */
static int by_pair(const void *a, const void *b) {
  const int *x = a, *y = b; /* from, to, cell */
  for (int k = 0; k < 3; k++)
    if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
  return 0;
}

static int by_round(const void *a, const void *b) {
  const dt_move *x = a, *y = b;
  if (x->round != y->round) return x->round - y->round;
  if (x->from != y->from) return x->from - y->from;
  return x->to - y->to;
}

/* Greedy rounds (an edge colouring: at most 2 d - 1 rounds for d moves per worker). */
static int set_rounds(const dt_plan *p, dt_move *mv, int nm) {
  int *deg = calloc((size_t)p->W, sizeof *deg), maxd = 0;
  if (!deg) return -1;
  for (int i = 0; i < nm; i++) deg[mv[i].from]++, deg[mv[i].to]++;
  for (int w = 0; w < p->W; w++) maxd = deg[w] > maxd ? deg[w] : maxd;
  free(deg);
  int R = 2 * maxd + 1;
  unsigned char *busy = calloc((size_t)p->W * (size_t)R, 1);
  if (!busy) return -1;
  for (int i = 0; i < nm; i++) {
    int r = 0;
    while (busy[(size_t)mv[i].from * R + r] || busy[(size_t)mv[i].to * R + r]) r++;
    busy[(size_t)mv[i].from * R + r] = busy[(size_t)mv[i].to * R + r] = 1;
    mv[i].round = r;
  }
  free(busy);
  return 0;
}

int dt_plan_moves(const dt_plan *p, const int *own0, const int *own1, dt_move **moves, int **buf) {
  int n = p->ncells, nt = 0, nm = 0;
  int *t = malloc(((size_t)n + 1) * 3 * sizeof *t), *b = malloc(((size_t)n + 1) * sizeof *b);
  dt_move *m = calloc((size_t)n + 1, sizeof *m);
  if (!t || !b || !m) goto fail;
  for (int c = 0; c < n; c++)
    if (own0[c] != own1[c]) t[3 * nt] = own0[c], t[3 * nt + 1] = own1[c], t[3 * nt + 2] = c, nt++;
  qsort(t, (size_t)nt, 3 * sizeof *t, by_pair);
  for (int i = 0; i < nt; i++) {
    if (i == 0 || t[3 * i] != t[3 * i - 3] || t[3 * i + 1] != t[3 * i - 2])
      m[nm++] = (dt_move){t[3 * i], t[3 * i + 1], 0, 0, b + i};
    b[i] = t[3 * i + 2];
    m[nm - 1].count++;
  }
  if (set_rounds(p, m, nm)) goto fail;
  qsort(m, (size_t)nm, sizeof *m, by_round); /* the cells pointers stay valid */
  free(t);
  *moves = m;
  *buf = b;
  return nm;
fail:
  free(t), free(b), free(m);
  return -1;
}

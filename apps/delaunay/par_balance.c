/* par_balance.c: the blocks' edges at the exact quantiles of all the points, with DT_BALANCE=1
 * (off by default: par_points.c). plan_geometry puts them at the quantiles of a sample that
 * every worker takes alike (4,096 points a block: a block may hold 3% more points than n / W,
 * and the slowest block sets the time; at 16 workers this pass cost more, 0.015-0.025 s, than
 * those 3%: docs/RESULTS.md, 2026-12-04, third session). Here every worker
 * counts the points of its slice in 512 bins across a bracket around each edge (a tenth of the
 * narrower neighbouring column or row on each side), one sum gives the counts of all points, and
 * each edge moves to the bin where the count crosses its share. An edge whose share lies outside
 * its bracket gets one three times as wide on that side (on clustered points a gap between
 * clusters can hold a sample's error), one whose bin holds more than a thousandth of a block's
 * points gets that bin as its bracket (points over a huge range of scales), and the round
 * repeats, at most 8 times. First the column edges, then, in each column, the row edges.
 * Where the brackets are all open and apart (the first round, as a rule), a point is counted
 * with one increment, not one per bracket (count_sorted; DT_CHECK_BALANCE=1 counts both ways
 * and stops on a difference). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "par.h"

#define BINS 512
#define ROUNDS 8 /* one for uniform and clustered points; more for a huge range of scales */

/* One set of edges e[0..parts] being settled (edge t below t / parts of the points): per inner
 * edge its bracket and whether done. */
typedef struct edges {
  double *e, *lo, *hi;
  int parts;
  uint8_t *done;
} edges;

static void open_brackets(edges *s, double *e, int parts) {
  s->e = e, s->parts = parts;
  s->lo = malloc((size_t)(parts + 1) * sizeof *s->lo);
  s->hi = malloc((size_t)(parts + 1) * sizeof *s->hi);
  s->done = calloc((size_t)(parts + 1), 1);
  if (!s->lo || !s->hi || !s->done) die("out of memory");
  for (int t = 1; t < parts; t++) {
    double a = e[t] - e[t - 1], b = e[t + 1] - e[t], d = 0.1 * (a < b ? a : b);
    s->lo[t] = e[t] - d, s->hi[t] = e[t] + d;
  }
}

static void close_brackets(edges *s) {
  free(s->lo), free(s->hi), free(s->done);
}

/* f in [0, BINS - 1], truncated: a bin (NaN: some bin; the callers add 0 for values outside a
 * bracket). With SSE2, minsd and maxsd: the compiler makes branches of the plain comparisons,
 * and on values outside any bracket (count_sorted, count_open) they would be mispredicted. */
static inline int clamp_bin(double f) {
#ifdef __SSE2__
  __m128d x = _mm_max_sd(_mm_set_sd(f), _mm_setzero_pd()); /* (NaN: 0) */
  x = _mm_min_sd(x, _mm_set_sd(BINS - 1));
  return _mm_cvttsd_si32(x);
#else
  f = f < 0 ? 0 : f;
  return f < BINS - 1 ? (int)f : BINS - 1;
#endif
}

/* The bin of v in bracket t (lo[t] <= v < hi[t]). */
static int bin_of(const edges *s, int t, double v) {
  return clamp_bin((v - s->lo[t]) / (s->hi[t] - s->lo[t]) * BINS);
}

/* Count v against the open brackets: cnt[(t - 1) * (BINS + 1)] the values below bracket t,
 * then its bins. The reference for DT_CHECK_BALANCE (count_open is its fast form). */
static void count(const edges *s, double v, int64_t *cnt) {
  for (int t = 1; t < s->parts; t++) {
    if (s->done[t]) continue;
    int64_t *c = &cnt[(size_t)(t - 1) * (BINS + 1)];
    if (v < s->lo[t])
      c[0]++;
    else if (v < s->hi[t])
      c[1 + bin_of(s, t, v)]++;
  }
}

/* Are all brackets open, not reversed, and in order without overlap (hi[t - 1] <= lo[t])?
 * Then a value lies below every bracket from the first one it does not pass, and count_sorted
 * counts it with one increment (two in a bracket) where count makes one per bracket. */
static bool brackets_sorted(const edges *s) {
  for (int t = 1; t < s->parts; t++)
    if (s->done[t] || s->hi[t] < s->lo[t] || (t > 1 && s->lo[t] < s->hi[t - 1])) return false;
  return true;
}

/* count's answer for sorted brackets: from[t] gets the values below bracket t and above the
 * ones before it, or in bracket t - 1; counted_below adds them up into cnt's below counts.
 * Without a branch on v: with the points in random order, the bracket a point passes and
 * whether it falls inside one are coin tosses, and a mispredicted branch costs more than the
 * work. t counts the brackets v passed (sorted: they come first; NaN passes all); a value above
 * every bracket lands in from[parts], which counted_below does not read, and a value outside
 * the brackets adds 0 to a bin. */
static inline void count_sorted(const edges *s, double v, int64_t *cnt, int64_t *from) {
  int parts = s->parts, t = 1;
  for (int u = 1; u < parts; u++) t += !(v < s->hi[u]);
  int b = t - (t == parts); /* a bracket to read */
  int in = (t < parts) & (v >= s->lo[b]);
  from[t + in]++;
  int k = clamp_bin((v - s->lo[b]) / (s->hi[b] - s->lo[b]) * BINS); /* as bin_of */
  cnt[(size_t)(b - 1) * (BINS + 1) + 1 + (size_t)k] += in;
}

/* count's answer without a branch on v, over the open brackets only (open[0..nopen)): the
 * rounds after the first, where a few brackets are open. */
static inline void count_open(const edges *s, const int *open, int nopen, double v, int64_t *cnt) {
  for (int i = 0; i < nopen; i++) {
    int t = open[i];
    double lo = s->lo[t], hi = s->hi[t];
    int64_t *c = &cnt[(size_t)(t - 1) * (BINS + 1)];
    c[0] += v < lo;
    c[1 + clamp_bin((v - lo) / (hi - lo) * BINS)] += (v >= lo) & (v < hi);
  }
}

static void counted_below(const edges *s, int64_t *cnt, const int64_t *from) {
  int64_t below = 0;
  for (int t = 1; t < s->parts; t++) {
    below += from[t];
    cnt[(size_t)(t - 1) * (BINS + 1)] += below;
  }
}

/* One pass of values v(i) (the caller's loop) against s into cnt; DT_CHECK_BALANCE=1 counts the
 * plain way too and stops on a difference. */
typedef struct counter {
  const edges *s;
  bool sorted, check;
  int64_t *from, *plain;
  int *open, nopen; /* the brackets not done */
  size_t n;         /* cnt's entries for s */
} counter;

static void counter_start(counter *k, const edges *s, size_t n) {
  const char *check = getenv("DT_CHECK_BALANCE");
  *k = (counter){.s = s, .sorted = brackets_sorted(s), .check = check && !strcmp(check, "1"),
                 .n = n};
  k->from = calloc((size_t)s->parts + 1, sizeof *k->from);
  k->open = malloc((size_t)s->parts * sizeof *k->open);
  k->plain = k->check ? calloc(n, sizeof *k->plain) : NULL;
  if (!k->from || !k->open || (k->check && !k->plain)) die("out of memory");
  for (int t = 1; t < s->parts; t++)
    if (!s->done[t]) k->open[k->nopen++] = t;
}

static inline void counter_add(counter *k, double v, int64_t *cnt) {
  if (k->sorted)
    count_sorted(k->s, v, cnt, k->from);
  else
    count_open(k->s, k->open, k->nopen, v, cnt);
  if (k->check) count(k->s, v, k->plain);
}

static void counter_end(counter *k, int64_t *cnt) {
  if (k->sorted) counted_below(k->s, cnt, k->from);
  if (k->check && memcmp(cnt, k->plain, k->n * sizeof *cnt))
    die("DT_CHECK_BALANCE: the sorted brackets' counts differ from the plain ones");
  free(k->from), free(k->open), free(k->plain);
}

/* Each open edge to where the counts cross its share of total, or a wider bracket on the side
 * where the share lies. Returns how many stay open. */
static int settle(edges *s, const int64_t *cnt, int64_t total) {
  int open = 0;
  for (int t = 1; t < s->parts; t++) {
    if (s->done[t]) continue;
    const int64_t *c = &cnt[(size_t)(t - 1) * (BINS + 1)];
    double share = (double)total * t / s->parts, below = (double)c[0], w = s->hi[t] - s->lo[t];
    int k = 0;
    for (; k < BINS && below < share && !s->done[t]; k++) {
      if (below + (double)c[1 + k] >= share) s->e[t] = s->lo[t] + w * k / BINS, s->done[t] = 1;
      below += (double)c[1 + k];
    }
    if (s->done[t] && (double)c[k] * s->parts > 1e-3 * (double)total && w / BINS < w) {
      s->done[t] = 0; /* its bin holds more than a thousandth of a block: look inside it */
      s->lo[t] += w * (k - 1) / BINS, s->hi[t] = s->lo[t] + w / BINS;
      open++;
      continue;
    }
    if (s->done[t]) continue;
    open++;
    if ((double)c[0] >= share) /* the share lies below the bracket */
      s->hi[t] = s->lo[t], s->lo[t] -= 3 * w;
    else
      s->lo[t] = s->hi[t], s->hi[t] += 3 * w;
  }
  for (int t = 1; t < s->parts; t++) /* in order */
    if (s->e[t] < s->e[t - 1]) s->e[t] = s->e[t - 1];
  return open;
}

/* DT_DEBUG: seconds counting and summing, columns then rows. */
static double laps[4];

static void sum(int64_t *cnt, size_t n, double *lap) {
  double t0 = now();
  MPI_Allreduce(MPI_IN_PLACE, cnt, (int)n, MPI_INT64_T, MPI_SUM, sys_comm());
  G.wcomm += now() - t0;
  *lap += now() - t0;
}

/* The column edges: rounds over all points of my slice [lo, hi). */
static void columns(size_t lo, size_t hi) {
  dt_plan *p = &G.p;
  size_t nc = (size_t)(p->BX - 1) * (BINS + 1);
  int64_t *cnt = malloc(nc * sizeof *cnt);
  edges s;
  if (!cnt) die("out of memory");
  open_brackets(&s, p->xs, p->BX);
  for (int r = 0, open = 1; r < ROUNDS && open; r++) {
    memset(cnt, 0, nc * sizeof *cnt);
    counter k;
    double t0 = now();
    counter_start(&k, &s, nc);
    for (size_t i = lo; i < hi; i++) counter_add(&k, G.in.xy[2 * i], cnt);
    counter_end(&k, cnt);
    laps[0] += now() - t0;
    sum(cnt, nc, &laps[1]);
    open = settle(&s, cnt, (int64_t)G.in.n);
    if (getenv("DT_DEBUG") && G.me == 0) fprintf(stderr, "delaunay: column edges, round %d: %d open\n", r, open);
  }
  close_brackets(&s);
  free(cnt);
}

/* My slice's y values grouped by column (final column edges): y[start[c] .. start[c + 1]). */
typedef struct by_column {
  double *y;
  size_t *start;
} by_column;

static by_column group_by_column(size_t lo, size_t hi) {
  const dt_plan *p = &G.p;
  int BX = p->BX;
  size_t n = hi - lo;
  by_column g = {malloc((n + 1) * sizeof *g.y), calloc((size_t)BX + 2, sizeof *g.start)};
  uint16_t *col = malloc((n + 1) * sizeof *col); /* (BX <= W: cells fit 16 bits, dt_tri) */
  if (!g.y || !g.start || !col) die("out of memory");
  for (size_t i = lo; i < hi; i++) {
    int c = dt_plan_column_of(p, G.in.xy[2 * i]);
    col[i - lo] = (uint16_t)c;
    g.start[c + 2]++;
  }
  for (int c = 0; c < BX; c++) g.start[c + 2] += g.start[c + 1];
  for (size_t i = lo; i < hi; i++) g.y[g.start[col[i - lo] + 1]++] = G.in.xy[2 * i + 1];
  free(col);
  return g; /* (the scatter moved each start[c + 1] up to start[c + 2]'s old value) */
}

/* The row edges of every column: rounds over the points of my slice, grouped by column once,
 * so that a round passes only over the columns whose edges are still open. */
static void rows(size_t lo, size_t hi) {
  dt_plan *p = &G.p;
  int BX = p->BX, BY = p->BY;
  size_t per = (size_t)(BY - 1) * (BINS + 1) + 1, n = (size_t)BX * per; /* a column's points first */
  int64_t *cnt = malloc(n * sizeof *cnt);
  edges *s = malloc((size_t)BX * sizeof *s);
  if (!cnt || !s) die("out of memory");
  for (int c = 0; c < BX; c++) open_brackets(&s[c], &p->ys[c * (BY + 1)], BY);
  double t0 = now();
  by_column g = group_by_column(lo, hi);
  laps[2] += now() - t0;
  for (int r = 0, open = 1; r < ROUNDS && open; r++) {
    memset(cnt, 0, n * sizeof *cnt);
    t0 = now();
    for (int c = 0; c < BX; c++) {
      counter k;
      counter_start(&k, &s[c], per - 1);
      int64_t *cc = &cnt[(size_t)c * per];
      cc[0] = (int64_t)(g.start[c + 1] - g.start[c]);
      for (size_t i = g.start[c]; k.nopen && i < g.start[c + 1]; i++) counter_add(&k, g.y[i], cc + 1);
      counter_end(&k, cc + 1);
    }
    laps[2] += now() - t0;
    sum(cnt, n, &laps[3]);
    open = 0;
    for (int c = 0; c < BX; c++) open += settle(&s[c], &cnt[(size_t)c * per + 1], cnt[(size_t)c * per]);
    if (getenv("DT_DEBUG") && G.me == 0) fprintf(stderr, "delaunay: row edges, round %d: %d open\n", r, open);
  }
  for (int c = 0; c < BX; c++) close_brackets(&s[c]);
  free(g.y), free(g.start), free(s), free(cnt);
}

int par_balance_setting(void) {
  const char *v = getenv("DT_BALANCE");
  return !v || !strcmp(v, "0") ? 0 : !strcmp(v, "1") ? 1 : -1;
}

void par_balance(size_t lo, size_t hi) {
  if (G.p.BX > 1) columns(lo, hi);
  if (G.p.BY > 1) rows(lo, hi);
  dt_plan_refit(&G.p, G.o.zone);
  if (getenv("DT_DEBUG"))
    fprintf(stderr, "worker %d balance: columns count %.4f sum %.4f, rows count %.4f sum %.4f s\n",
            G.me, laps[0], laps[1], laps[2], laps[3]);
}

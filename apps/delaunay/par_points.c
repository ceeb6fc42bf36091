/* par_points.c: the geometry and the points of the parallel program. The box, the hull and the
 * density grid come from every worker's slice of the input (collectives); the blocks from a
 * sample of the points, each worker reading a share and one allgather giving all of it to
 * every worker (dt_plan_geometry: the same answer everywhere), made exact by par_balance.c with
 * DT_BALANCE=1. Then each worker sends every point of
 * its slice to the worker that inserts it (one MPI_Alltoallv of ids: every worker has loaded
 * the input), by the phase that inserts it: the hull, a band along it, the sparse places and a
 * sample to worker 0 (inserted before the split), the zones along the borders to the holders of
 * their windows, the rest to the block's worker. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "par.h"
#include "pred.h"

/* The blocks' edges at the quantiles of a sample: 4,096 points a block (a block then holds
 * n / W points within about 3%; measured at 16 workers, 2026-12-04, cheaper than making them
 * exact: par_balance, DT_BALANCE=1), at most GEO_MAX in all (every worker splits the whole
 * sample: its cost grows with W while a worker's points shrink). */
#define GEO_PER_BLOCK 4096
#define GEO_MAX 131072

static uint64_t mix(uint64_t x) { /* splitmix64 */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* A hash of x as a number in [0, 1). */
static double unit_of(uint64_t x) { return (double)(mix(x) >> 11) * 0x1p-53; }

static int cell_fn(const void *ctx, double x, double y) { return dt_plan_cell_of(ctx, x, y); }
static void cell_inside_fn(const void *ctx, int cell, double r[4]) {
  dt_plan_cell_inside(ctx, cell, r);
}

/* The convex hull of all points and the band along it, in parallel (Akl-Toussaint): extremes
 * in eight directions (of every 16th point of each slice: any input points will do, their
 * octagon only has to lie inside the hull), the octagon they span, the points of each slice not
 * strictly inside it (few on uniform points, many where clusters straddle the octagon's edges;
 * most are ruled out by a rectangle and a grid of squares inside the octagon), each worker's
 * hull of its own, and the hull of those, computed alike by every worker. */
static void find_band(size_t lo, size_t hi, double band_points) {
  dt_pt ext[8], *all = malloc((size_t)G.W * 8 * sizeof *all);
  if (!all) die("out of memory");
  double best[8];
  for (int k = 0; k < 8; k++) ext[k].id = -1, best[k] = INFINITY;
  for (size_t i = lo; i < hi; i += 16) {
    double x = G.in.xy[2 * i], y = G.in.xy[2 * i + 1];
    double v[8] = {x, -x, y, -y, x + y, -x - y, x - y, y - x};
    for (int k = 0; k < 8; k++)
      if (v[k] < best[k]) best[k] = v[k], ext[k] = (dt_pt){x, y, (int32_t)i, 0};
  }
  double t0 = now();
  MPI_Allgather(ext, 8, G.pt_type, all, 8, G.pt_type, sys_comm());
  G.wcomm += now() - t0;
  size_t na = 0;
  for (int i = 0; i < 8 * G.W; i++)
    if (all[i].id >= 0) all[na++] = all[i];
  dt_pt *oct = malloc((na + 2) * sizeof *oct);
  if (!oct) die("out of memory");
  size_t no = dt_hull(all, na, oct);
  dt_band inner; /* its rectangle: inside the octagon by a margin over rounding */
  double margin = 1e-9 * (fabs(G.box[1] - G.box[0]) + fabs(G.box[3] - G.box[2]));
  if (dt_band_init(&inner, oct, no, margin)) die("out of memory");
  /* candidates: not strictly inside the octagon (exact test where the rectangle cannot tell) */
  dt_pt *cand = malloc((hi - lo + 1) * sizeof *cand);
  if (!cand) die("out of memory");
  int nc = 0;
  for (size_t i = lo; i < hi; i++) {
    double p[2] = {G.in.xy[2 * i], G.in.xy[2 * i + 1]};
    if (no >= 3 && dt_band_surely_inside(&inner, p[0], p[1])) continue;
    int inside = no >= 3;
    for (size_t k = 0; k < no && inside; k++) {
      double a[2] = {oct[k].x, oct[k].y}, b[2] = {oct[(k + 1) % no].x, oct[(k + 1) % no].y};
      if (pred_orient(a, b, p) <= 0) inside = 0;
    }
    if (!inside) cand[nc++] = (dt_pt){p[0], p[1], (int32_t)i, 0};
  }
  dt_band_free(&inner);
  /* only the hull of my candidates goes out: the hull of all is the hull of the workers' hulls
   * (the same vertices, the lowest id of equal points: dt_hull sorts by x, y, id) */
  dt_pt *mine = malloc(((size_t)nc + 2) * sizeof *mine);
  if (!mine) die("out of memory");
  nc = (int)dt_hull(cand, (size_t)nc, mine);
  free(cand);
  cand = mine;
  int *cnt = malloc((size_t)G.W * sizeof *cnt), *off = malloc(((size_t)G.W + 1) * sizeof *off);
  if (!cnt || !off) die("out of memory");
  t0 = now();
  MPI_Allgather(&nc, 1, MPI_INT, cnt, 1, MPI_INT, sys_comm());
  off[0] = 0;
  for (int w = 0; w < G.W; w++) off[w + 1] = off[w] + cnt[w];
  dt_pt *every = malloc(((size_t)off[G.W] + 1) * sizeof *every),
        *hull = malloc(((size_t)off[G.W] + 2) * sizeof *hull);
  if (!every || !hull) die("out of memory");
  MPI_Allgatherv(cand, nc, G.pt_type, every, cnt, off, G.pt_type, sys_comm());
  G.wcomm += now() - t0;
  size_t h = dt_hull(every, (size_t)off[G.W], hull);
  double delta = dt_hull_delta(hull, h, G.in.n, band_points);
  if (dt_band_init(&G.band, hull, h, delta)) die("out of memory");
  free(all), free(oct), free(cand), free(cnt), free(off), free(every), free(hull);
}

/* My slice of the input. */
static void slice(size_t *lo, size_t *hi) {
  size_t n = G.in.n;
  *lo = n * (size_t)G.me / (size_t)G.W, *hi = n * (size_t)(G.me + 1) / (size_t)G.W;
}

/* The square of the density grid that holds (x, y): a multiplication, not a division, the same
 * on every worker (the grid's counts and its use agree; a point on a square's edge may go to
 * the next one, which only moves it between two squares of the same grid). */
static int square_of(double x, double y) {
  int H = G.hist_side;
  double u = (x - G.box[0]) * G.hist_scale[0], v = (y - G.box[2]) * G.hist_scale[1];
  int i = !(u >= 0) ? 0 : u >= H ? H - 1 : (int)u, j = !(v >= 0) ? 0 : v >= H ? H - 1 : (int)v;
  return j * H + i; /* (NaN, which no valid input gives, to square 0) */
}

/* Sparse points. Where the points are sparse (the outskirts of clusters, the space between
 * them), Delaunay triangles are large, and their circumcentres, which choose their cells, lie
 * far from the points that will meet them: an insertion there needs cells of other blocks. So
 * the points of sparse squares of a grid over the box (about 64 points a square on average)
 * join worker 0's sample, with the hull: their large triangles are then final before the split.
 * A square is sparse with at most 4 points, fewer when that would give worker 0 more than
 * 2 x --sample x W points. The grid's counts: one sum of every worker's. */
static void density(size_t lo, size_t hi) {
  double side = sqrt((double)G.in.n / 64);
  int H = G.hist_side = side < 16 ? 16 : side > 128 ? 128 : (int)side;
  G.hist_scale[0] = G.box[1] > G.box[0] ? H / (G.box[1] - G.box[0]) : 0;
  G.hist_scale[1] = G.box[3] > G.box[2] ? H / (G.box[3] - G.box[2]) : 0;
  int *mine = calloc((size_t)H * H, sizeof *mine), *hist = G.hist = calloc((size_t)H * H, sizeof *hist);
  if (!mine || !G.hist) die("out of memory");
  for (size_t i = lo; i < hi; i++) mine[square_of(G.in.xy[2 * i], G.in.xy[2 * i + 1])]++;
  double t0 = now();
  MPI_Allreduce(mine, hist, H * H, MPI_INT, MPI_SUM, sys_comm());
  G.wcomm += now() - t0;
  free(mine);
  int64_t at[5] = {0}; /* points in squares of exactly k points, k <= 4 */
  for (int s = 0; s < H * H; s++)
    if (hist[s] <= 4) at[hist[s]] += hist[s];
  double cap = 2.0 * (double)G.o.sample * G.W;
  int64_t sum = at[1] + at[2] + at[3] + at[4];
  for (G.sparse = 4; G.sparse > 0 && (double)sum > cap; G.sparse--) sum -= at[G.sparse];
}

/* The zones' half-widths, per square and per block (tag_of takes the smaller), once the blocks and
 * the density grid are known. */
static void zone_tables(void) {
  int H = G.hist_side;
  double area = (G.box[1] - G.box[0]) * (G.box[3] - G.box[2]) / ((double)H * H);
  G.zone_sq = malloc((size_t)H * H * sizeof *G.zone_sq);
  G.zone_cap = malloc((size_t)G.W * sizeof *G.zone_cap);
  if (!G.zone_sq || !G.zone_cap) die("out of memory");
  for (int sq = 0; sq < H * H; sq++)
    G.zone_sq[sq] = G.o.zone * sqrt(area / (G.hist[sq] > 0 ? G.hist[sq] : 1));
  for (int b = 0; b < G.W; b++) {
    double r[4];
    dt_plan_block_rect(&G.p, b, r);
    G.zone_cap[b] = 0.25 * fmin(r[1] - r[0], r[3] - r[2]);
  }
}

/* DT_DEBUG: the distribution's parts, timed on each worker (dist_lap after each part; the
 * line is printed at the end of par_distribute). */
#define DIST_LAPS 10
static struct {
  const char *name;
  double s;
} laps[DIST_LAPS];
static int nlaps;
static double lap_mark, square_share; /* (and the share of points placed by their square) */

static void dist_lap(const char *name) {
  double t = now();
  if (nlaps < DIST_LAPS) laps[nlaps].name = name, laps[nlaps++].s = t - lap_mark;
  lap_mark = t;
}

static void print_laps(void) {
  if (!getenv("DT_DEBUG")) return;
  char line[512];
  int k = snprintf(line, sizeof line, "worker %d distribute:", G.me);
  for (int i = 0; i < nlaps && k > 0 && (size_t)k < sizeof line; i++)
    k += snprintf(line + k, sizeof line - (size_t)k, " %s %.4f", laps[i].name, laps[i].s);
  fprintf(stderr, "%s s; %.0f%% of the points placed by their square\n", line, 100 * square_share);
}

/* The sample of ns points, the same on every worker: one point of each stride of the input, at
 * a hashed place in it (an input whose order repeats with the stride fools a fixed place).
 * Each worker reads its share of the strides (reads spread over the whole input: a cache miss
 * each) and one allgather gives every worker all of them, in order. */
static double *sample_points(size_t ns) {
  size_t n = G.in.n, W = (size_t)G.W;
  double *s = malloc((2 * ns + 2) * sizeof *s);
  int *cnt = malloc(W * sizeof *cnt), *off = malloc(W * sizeof *off);
  if (!s || !cnt || !off) die("out of memory");
  for (size_t w = 0; w < W; w++) {
    size_t k0 = ns * w / W, k1 = ns * (w + 1) / W;
    off[w] = (int)(2 * k0), cnt[w] = (int)(2 * (k1 - k0));
  }
  for (size_t k = (size_t)off[G.me] / 2; k < (size_t)(off[G.me] + cnt[G.me]) / 2; k++) {
    size_t i = (size_t)(((double)k + unit_of((uint64_t)k ^ 0x5eed)) * (double)n / (double)ns);
    i = i < n ? i : n - 1;
    s[2 * k] = G.in.xy[2 * i], s[2 * k + 1] = G.in.xy[2 * i + 1];
  }
  double t0 = now();
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, s, cnt, off, MPI_DOUBLE, sys_comm());
  G.wcomm += now() - t0;
  free(cnt), free(off);
  return s;
}

void par_geometry(void) {
  size_t lo, hi, n = G.in.n;
  slice(&lo, &hi);
  nlaps = 0, lap_mark = now();
  double mine[4];
  dt_box(G.in.xy + 2 * lo, hi - lo, mine);
  mine[1] = -mine[1], mine[3] = -mine[3];
  double t0 = now();
  MPI_Allreduce(mine, G.box, 4, MPI_DOUBLE, MPI_MIN, sys_comm());
  G.wcomm += now() - t0;
  G.box[1] = -G.box[1], G.box[3] = -G.box[3];
  size_t ns = (size_t)GEO_PER_BLOCK * (size_t)G.W;
  ns = ns > GEO_MAX ? GEO_MAX : ns;
  ns = ns < n ? ns : n;
  double *s = sample_points(ns);
  if (dt_plan_geometry(&G.p, G.box, s, ns, n, G.o.zone)) die("out of memory");
  free(s);
  dist_lap("box+sample");
  density(lo, hi);
  dist_lap("density");
  if (par_balance_setting() == 1) par_balance(lo, hi);
  zone_tables();
  dist_lap("balance");
  if (getenv("DT_DEBUG") && G.me == 0) {
    int whole = 0;
    for (int l = 0; l + 1 < G.p.BX; l++) whole += G.p.whole[l];
    fprintf(stderr, "delaunay: %d of %d vertical lines whole (rows too far apart for pairs)\n",
            whole, G.p.BX - 1);
  }
  double band = 256 * sqrt((double)G.W);
  find_band(lo, hi, band > 1024 ? band : 1024);
  dist_lap("band");
}

/* A point's tag and the worker that inserts it (owner: dt_plan_owner's answers, per
 * configuration and cell). The zone's half-width at the point's square: --zone spacings of the
 * points there (the density grid's: a border through sparse points gets a wider zone), at most
 * a quarter of the block's side. */
static int in_sample(int32_t id, double sample) { /* worker 0's: a hash of the id */
  return unit_of((uint64_t)id ^ (G.o.seed << 32)) < sample;
}

int par_in_sample(int32_t id, double times) {
  return in_sample(id, times * (double)G.o.sample * G.W / (double)(G.in.n ? G.in.n : 1));
}

static int tag_of(double sample, int32_t id, double x, double y, const int *owner, int *cell,
                  int *dest) {
  int z, sq = square_of(x, y);
  *cell = dt_plan_place(&G.p, x, y, G.zone_sq[sq], G.zone_cap, &z);
  if (in_sample(id, sample) || G.hist[sq] <= G.sparse || dt_band_has(&G.band, x, y)) {
    *dest = 0;
    return CONF_ZERO;
  }
  if (G.W == 1) z = CONF_BLOCK;
  *dest = owner[z * G.p.ncells + *cell];
  return z;
}

/* The squares of the density grid whose every point goes the same way (one cell, outside every
 * zone, not sparse, surely inside the hull's band: most of them): one lookup places their
 * points but the sample's. fast[sq] is that cell, -1 where each point is placed on its own
 * (tag_of), FAST_UNKNOWN until the square's first point. */
#define FAST_UNKNOWN (-2)

/* A rectangle that holds every point square_of puts in square sq: the square widened by far
 * more than square_of's rounding and this one's (64 ulps of the coordinates' magnitude: the box
 * may lie far from 0). */
static void square_rect(int sq, double r[4]) {
  int H = G.hist_side, i[2] = {sq % H, sq / H};
  for (int a = 0; a < 2; a++) {
    double lo = G.box[2 * a], hi = G.box[2 * a + 1], w = hi - lo;
    double margin = 64 * DBL_EPSILON * (fabs(lo) + fabs(hi));
    r[2 * a] = lo + w * i[a] / H - margin, r[2 * a + 1] = lo + w * (i[a] + 1) / H + margin;
  }
}

static int square_cell(int sq) {
  if (G.hist[sq] <= G.sparse) return -1;
  double r[4];
  square_rect(sq, r);
  if (!dt_band_rect_surely_inside(&G.band, r)) return -1;
  return dt_plan_place_rect(&G.p, r, G.zone_sq[sq], G.zone_cap);
}

/* DT_CHECK_CLASSIFY=1 (the tests): every point the lookup placed, placed again on its own. */
static void check_fast(int32_t id, double x, double y, const int *owner, double sample, int c,
                       int d) {
  int c2, d2, t2 = tag_of(sample, id, x, y, owner, &c2, &d2);
  if (t2 != CONF_BLOCK || c2 != c || d2 != d) {
    fprintf(stderr, "delaunay: worker %d: point %d (%.17g, %.17g): the square's lookup says cell "
            "%d to worker %d in the main phase, the point's own test tag %d cell %d worker %d\n",
            G.me, (int)id, x, y, c, d, t2, c2, d2);
    errno = EPROTO;
    die("DT_CHECK_CLASSIFY");
  }
}

/* The exchange: counts per (worker, tag), then the points' ids (one MPI_Alltoallv: every worker
 * has the input, so 4 bytes a point, not its 24-byte dt_pt), and the points per cell (all, then
 * those inserted before the main phase: expect[ncells + c]). out holds the ids for worker w and
 * tag t at cnt's offsets, in that order. */
static void exchange(const int32_t *out, const int *cnt, int64_t *expect) {
  int W = G.W, *sc = calloc((size_t)W, sizeof *sc), *rc = calloc((size_t)W, sizeof *rc);
  int *so = calloc((size_t)W + 1, sizeof *so), *ro = calloc((size_t)W + 1, sizeof *ro);
  G.rcnt = calloc((size_t)W * NPT, sizeof *G.rcnt);
  G.roff = calloc((size_t)W + 1, sizeof *G.roff);
  if (!sc || !rc || !so || !ro || !G.rcnt || !G.roff) die("out of memory");
  G.expect = calloc(2 * (size_t)G.p.ncells, sizeof *G.expect);
  if (!G.expect) die("out of memory");
  G.early = G.expect + G.p.ncells;
  double t0 = now();
  MPI_Allreduce(expect, G.expect, 2 * G.p.ncells, MPI_INT64_T, MPI_SUM, sys_comm());
  MPI_Alltoall(cnt, NPT, MPI_INT, G.rcnt, NPT, MPI_INT, sys_comm());
  for (int w = 0; w < W; w++) {
    for (int t = 0; t < NPT; t++) sc[w] += cnt[w * NPT + t], rc[w] += G.rcnt[w * NPT + t];
    so[w + 1] = so[w] + sc[w], ro[w + 1] = ro[w] + rc[w];
    G.roff[w + 1] = (size_t)ro[w + 1];
  }
  G.ids = dt_alloc(((size_t)ro[W] + 1) * sizeof *G.ids);
  if (!G.ids) die("out of memory for points");
  MPI_Alltoallv(out, sc, so, MPI_INT32_T, G.ids, rc, ro, MPI_INT32_T, sys_comm());
  G.wcomm += now() - t0;
  free(sc), free(rc), free(so), free(ro);
}

size_t par_points_count(int t) {
  size_t k = 0;
  for (int w = 0; w < G.W; w++) k += (size_t)G.rcnt[w * NPT + t];
  return k;
}

void par_points_copy_slice(int t, dt_pt *to, size_t from, size_t count) {
  const double *xy = G.in.xy;
  size_t first = 0; /* the list's index of sender w's first point of tag t */
  for (int w = 0; w < G.W && count; w++) {
    size_t here = (size_t)G.rcnt[w * NPT + t];
    if (from < first + here) {
      size_t at = G.roff[w];
      for (int u = 0; u < t; u++) at += (size_t)G.rcnt[w * NPT + u];
      const int32_t *id = G.ids + at;
      for (size_t k = from - first; k < here && count; k++, from++, count--)
        to[from] = (dt_pt){xy[2 * (size_t)id[k]], xy[2 * (size_t)id[k] + 1], id[k], t};
    }
    first += here;
  }
}

void par_points_copy(int t, dt_pt *to) { par_points_copy_slice(t, to, 0, par_points_count(t)); }

dt_pt *par_points_of(int t, dt_pt *list, size_t *n) {
  size_t k = par_points_count(t);
  dt_pt *l = realloc(list, (*n + k + 1) * sizeof *l);
  if (!l) die("out of memory");
  par_points_copy(t, l + *n);
  *n += k;
  return l;
}

void par_mesh_init(void) {
  if (dt_mesh_init(&G.m, G.pools, G.p.ncells, cell_fn, &G.p, par_refill, NULL))
    die("out of memory");
  G.m.own = G.own;
  if (!getenv("DT_NO_HOT_CELL")) dt_mesh_cell_rects(&G.m, cell_inside_fn);
  if (!getenv("DT_NO_HINTS") && dt_mesh_hints(&G.m, 256, G.box)) die("out of memory");
  G.m.epoch_base = 2 * (uint32_t)G.me; /* marks of one worker never look current to another */
  G.m.epoch_step = 2 * (uint32_t)G.W;
}

void par_distribute(const int32_t start[3]) {
  size_t lo, hi;
  slice(&lo, &hi);
  int W = G.W, nc = G.p.ncells;
  double sample = (double)G.o.sample * W / (double)(G.in.n ? G.in.n : 1);
  int *cnt = calloc((size_t)W * NPT, sizeof *cnt), *fill = calloc((size_t)W * NPT + 1, sizeof *fill);
  int *dest = dt_alloc((hi - lo + 1) * sizeof *dest);
  int64_t *expect = calloc(2 * (size_t)nc, sizeof *expect); /* every point, then the early ones */
  int32_t *out = dt_alloc((hi - lo + 1) * sizeof *out);
  int *owner = malloc((size_t)NCONF * (size_t)nc * sizeof *owner);
  size_t squares = (size_t)G.hist_side * (size_t)G.hist_side;
  int *fast = malloc(squares * sizeof *fast), check = getenv("DT_CHECK_CLASSIFY") != NULL;
  int lookup = !getenv("DT_NO_SQUARES"); /* (to measure what the lookup is worth) */
  if (!cnt || !fill || !dest || !expect || !out || !owner || !fast) die("out of memory");
  for (int z = 0; z < NCONF; z++) dt_plan_owners(&G.p, z, &owner[z * nc]);
  for (size_t q = 0; q < squares; q++) fast[q] = lookup ? FAST_UNKNOWN : -1;
  size_t by_square = 0;
  dist_lap("buffers");
  for (size_t i = lo; i < hi; i++) {
    int32_t id = (int32_t)i;
    double x = G.in.xy[2 * i], y = G.in.xy[2 * i + 1];
    int sq = square_of(x, y), c = fast[sq], d, t;
    if (c == FAST_UNKNOWN) c = fast[sq] = square_cell(sq);
    if (c >= 0 && !in_sample(id, sample)) {
      t = CONF_BLOCK, d = owner[CONF_BLOCK * nc + c], by_square++;
      if (check) check_fast(id, x, y, owner, sample, c, d);
    } else {
      t = tag_of(sample, id, x, y, owner, &c, &d);
    }
    expect[c]++;
    expect[nc + c] += t != CONF_BLOCK;
    dest[i - lo] = id == start[0] || id == start[1] || id == start[2] ? -1 : d * NPT + t;
    if (dest[i - lo] >= 0) cnt[dest[i - lo]]++;
  }
  dist_lap("classify");
  square_share = hi > lo ? (double)by_square / (double)(hi - lo) : 0;
  for (int k = 0; k < W * NPT; k++) fill[k + 1] = fill[k] + cnt[k];
  for (size_t i = lo; i < hi; i++)
    if (dest[i - lo] >= 0) out[fill[dest[i - lo]]++] = (int32_t)i;
  dist_lap("fill");
  exchange(out, cnt, expect);
  dist_lap("exchange");
  print_laps();
  free(cnt), free(fill), free(dest), free(expect), free(out), free(owner), free(fast);
}

/* The first three points not on one line, in input order (every worker finds the same): the
 * first point, the first one unlike it, the first one off their line (as dt_pick_start). */
int par_pick_start(int32_t s[3]) {
  const double *xy = G.in.xy;
  size_t n = G.in.n, b = 1;
  while (b < n && xy[2 * b] == xy[0] && xy[2 * b + 1] == xy[1]) b++;
  for (size_t c = b + 1; c < n; c++)
    if (pred_orient(xy, xy + 2 * b, xy + 2 * c) != 0) {
      s[0] = 0, s[1] = (int32_t)b, s[2] = (int32_t)c;
      return 0;
    }
  return -1;
}

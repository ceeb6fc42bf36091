/* order.c: the insertion order. Points inserted along a space-filling curve make every walk
 * short and keep the triangles touched together in cache; a biased randomized insertion order
 * (BRIO: rounds of growing size, each sorted along the curve) keeps the expected cavity small
 * even for sorted or degenerate input. This is what CGAL's spatial_sort does before its
 * insertion, so the serial comparison is like for like. The sort is adaptive: a cell of the
 * curve's grid that holds many points is sorted again over its own points' box (points spread
 * over a huge range of scales would otherwise share a few cells, in random order, and every
 * walk would cross the mesh). Main entries: dt_brio(), dt_hilbert_sort(). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dt.h"

/* The Hilbert curve as a 4-state machine (state: swap x/y, complement both), four levels of
 * bits per step: tab[state][x nibble << 4 | y nibble] = 8 bits of index | next state << 8. */
static uint16_t tab[4][256];
static int tab_ready;

static void build_table(void) {
  for (int s0 = 0; s0 < 4; s0++)
    for (int xy = 0; xy < 256; xy++) {
      int s = s0, digits = 0;
      for (int bit = 3; bit >= 0; bit--) {
        int bx = (xy >> (4 + bit)) & 1, by = (xy >> bit) & 1, sw = s & 1, cp = s >> 1;
        int x = (sw ? by : bx) ^ cp, y = (sw ? bx : by) ^ cp;
        digits = digits << 2 | ((3 * x) ^ y);
        if (y == 0) {
          if (x == 1) cp ^= 1;
          sw ^= 1;
        }
        s = sw | cp << 1;
      }
      tab[s0][xy] = (uint16_t)(digits | s << 8);
    }
  tab_ready = 1;
}

static inline uint32_t quantize(double v, double lo, double hi) {
  double t = hi > lo ? (v - lo) / (hi - lo) * 65536.0 : 0;
  if (!(t >= 0)) return 0;
  if (t >= 65535) return 65535;
  return (uint32_t)t;
}

/* The key of (x, y) on the 2^16 grid, the curve starting in state *s (the state after the last
 * digit written back: the orientation of the curve inside the point's cell). */
static inline uint32_t hilbert16(uint32_t x, uint32_t y, int *s) {
  uint32_t key = 0;
  for (int i = 3; i >= 0; i--) {
    uint16_t e = tab[*s][((x >> (4 * i)) & 15) << 4 | ((y >> (4 * i)) & 15)];
    key = key << 8 | (e & 255);
    *s = e >> 8;
  }
  return key;
}

uint32_t dt_hilbert_key(double x, double y, const double box[4]) {
  if (!tab_ready) build_table();
  int s = 0;
  return hilbert16(quantize(x, box[0], box[1]), quantize(y, box[2], box[3]), &s);
}

/* The square around box (its shorter side widened about its middle to the longer one): the
 * curve's grid then has square cells, so points near on the curve are near in the plane. Over
 * the box itself a long, thin cloud (points near a line) would be stretched to a square, and
 * neighbours on the curve would lie far apart along it. */
void dt_square_box(const double box[4], double sq[4]) {
  double w = box[1] - box[0], h = box[3] - box[2], mx = box[0] + w / 2, my = box[2] + h / 2;
  double half = (w > h ? w : h) / 2; /* (fmin, fmax: rounding never leaves a point outside) */
  sq[0] = w >= h ? box[0] : fmin(box[0], mx - half), sq[1] = w >= h ? box[1] : fmax(box[1], mx + half);
  sq[2] = h >= w ? box[2] : fmin(box[2], my - half), sq[3] = h >= w ? box[3] : fmax(box[3], my + half);
}

/* The pieces of one level's sort, each over a range [from, to) so that dt_brio_step can do
 * them a slice at a time: the keys (key << 32 | position), an LSD radix sort on them (three
 * passes of 11 bits, each a count and a scatter), the points put in key order. */
static void keys_range(const dt_pt *pts, const double box[4], int s0, uint64_t *k, size_t from,
                       size_t to) {
  for (size_t i = from; i < to; i++) {
    int s = s0;
    k[i] = (uint64_t)hilbert16(quantize(pts[i].x, box[0], box[1]),
                               quantize(pts[i].y, box[2], box[3]), &s)
               << 32 |
           i;
  }
}

#define RADIX_PASSES 3
#define RADIX_DIGITS DT_BRIO_DIGITS
static int radix_shift(int pass) { return 32 + 11 * pass; }

static void count_range(const uint64_t *v, size_t *count, int pass, size_t from, size_t to) {
  int sh = radix_shift(pass);
  for (size_t i = from; i < to; i++) count[(v[i] >> sh) & (RADIX_DIGITS - 1)]++;
}

static void counts_to_offsets(size_t *count) {
  size_t sum = 0;
  for (int d = 0; d < RADIX_DIGITS; d++) {
    size_t c = count[d];
    count[d] = sum;
    sum += c;
  }
}

static void scatter_range(const uint64_t *v, uint64_t *out, size_t *count, int pass, size_t from,
                          size_t to) {
  int sh = radix_shift(pass);
  for (size_t i = from; i < to; i++) out[count[(v[i] >> sh) & (RADIX_DIGITS - 1)]++] = v[i];
}

/* The buffer pass p reads (k, tmp alternating); after the last pass the keys are in tmp. */
static uint64_t *pass_src(uint64_t *k, uint64_t *tmp, int pass) { return pass % 2 ? tmp : k; }

static void insertion_sort(uint64_t *v, size_t n) {
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && v[j] < v[j - 1]; j--) {
      uint64_t s = v[j];
      v[j] = v[j - 1];
      v[j - 1] = s;
    }
}

#define SMALL_SORT 64 /* fewer keys than this: insertion sort */

/* Sort k[0..n) (tmp: as many more); returns the buffer that holds them sorted. */
static const uint64_t *sort_keys(uint64_t *k, uint64_t *tmp, size_t n) {
  if (n < SMALL_SORT) {
    insertion_sort(k, n);
    return k;
  }
  size_t count[RADIX_DIGITS];
  for (int pass = 0; pass < RADIX_PASSES; pass++) {
    memset(count, 0, sizeof count);
    count_range(pass_src(k, tmp, pass), count, pass, 0, n);
    counts_to_offsets(count);
    scatter_range(pass_src(k, tmp, pass), pass_src(k, tmp, pass + 1), count, pass, 0, n);
  }
  return pass_src(k, tmp, RADIX_PASSES);
}

static void permute_range(const dt_pt *pts, const uint64_t *keys, dt_pt *out, size_t from,
                          size_t to) {
  for (size_t i = from; i < to; i++) out[i] = pts[(uint32_t)keys[i]];
}

/* Scratch of one sort: keys, the radix sort's other buffer, points. */
typedef struct sort_buf {
  uint64_t *k, *tmp;
  dt_pt *pts;
} sort_buf;

/* A run of points that share a cell of the 2^16 grid, to be sorted again over its own box. */
typedef struct dt_brio_run {
  size_t at, n;
  int state, depth; /* (depth: dt_brio_step's, the level that sorts it again) */
} run;

#define RUN_MAX 16   /* more points than this in one cell are sorted again inside it */
#define DEPTH_MAX 64 /* the recursion stops there (only points all equal could go deeper) */

/* The curve's state inside the cell of the 2^16 grid over box that holds p (from state s0):
 * where the cell's own sort continues the curve. */
static int cell_state(const dt_pt *p, const double box[4], int s0) {
  int s = s0;
  hilbert16(quantize(p->x, box[0], box[1]), quantize(p->y, box[2], box[3]), &s);
  return s;
}

/* The runs of more than RUN_MAX points with one key among pts[0..n) (in key order, keys
 * sorted), with the curve's state inside their cell, into *runs; how many. */
static size_t find_runs(const dt_pt *pts, size_t n, const uint64_t *keys, const double box[4],
                        int s0, run **runs) {
  size_t nr = 0, cap = 0;
  for (size_t i = 0, j; i < n; i = j) {
    for (j = i + 1; j < n && keys[j] >> 32 == keys[i] >> 32;) j++;
    if (j - i <= RUN_MAX) continue;
    if (nr == cap) {
      cap = cap ? 2 * cap : 16;
      run *r = realloc(*runs, cap * sizeof *r);
      if (!r) abort(); /* the caller's own memory is gone: nothing sensible is left */
      *runs = r;
    }
    (*runs)[nr++] = (run){i, j - i, cell_state(&pts[i], box, s0), 0};
  }
  return nr;
}

/* Sort pts[0..n) along the curve over box from state s0; note the runs of more than RUN_MAX
 * points with one key (with the curve's state inside their cell) in *runs. */
static size_t sort_level(dt_pt *pts, size_t n, const double box[4], int s0, sort_buf *b,
                         run **runs) {
  keys_range(pts, box, s0, b->k, 0, n);
  const uint64_t *keys = sort_keys(b->k, b->tmp, n);
  permute_range(pts, keys, b->pts, 0, n);
  memcpy(pts, b->pts, n * sizeof *pts);
  return find_runs(pts, n, keys, box, s0, runs);
}

/* The runs' own sorts, each over its points' box (hilbert_sort_rec below). */
static void hilbert_sort_rec(dt_pt *pts, size_t n, const double box[4], int s0, sort_buf *b,
                             int depth);
static void sort_runs(dt_pt *pts, const run *runs, size_t nr, sort_buf *b, int depth) {
  for (size_t r = 0; r < nr && depth < DEPTH_MAX; r++) {
    double sub[4], sq[4];
    dt_pt *q = pts + runs[r].at;
    dt_box_pts(q, runs[r].n, sub);
    if (sub[0] == sub[1] && sub[2] == sub[3]) continue; /* all equal: any order */
    dt_square_box(sub, sq);
    hilbert_sort_rec(q, runs[r].n, sq, runs[r].state, b, depth + 1);
  }
}

/* The Hilbert sort, adaptive: a cell of the 2^16 grid that holds many points (input spread over
 * a huge range of scales, where most points share a few cells of the whole box) is sorted
 * again over the box of its own points, continuing the curve's orientation, and so on down. */
static void hilbert_sort_rec(dt_pt *pts, size_t n, const double box[4], int s0, sort_buf *b,
                             int depth) {
  run *runs = NULL;
  size_t nr = sort_level(pts, n, box, s0, b, &runs);
  sort_runs(pts, runs, nr, b, depth);
  free(runs);
}

static void hilbert_sort_with(dt_pt *pts, size_t n, const double box[4], sort_buf *b) {
  if (!tab_ready) build_table();
  double sq[4];
  dt_square_box(box, sq);
  hilbert_sort_rec(pts, n, sq, 0, b, 0);
}

/* The sorts' scratch (dt_brio_scratch_bytes(n) bytes) as keys, their radix buffer and points. */
static sort_buf buf_at(void *scratch, size_t n) {
  uint64_t *k = scratch;
  return (sort_buf){.k = k, .tmp = k + n, .pts = (dt_pt *)(k + 2 * n)};
}

void dt_hilbert_sort(dt_pt *pts, size_t n, const double box[4]) {
  if (n < 2) return;
  void *scratch = dt_alloc(dt_brio_scratch_bytes(n));
  if (!scratch) abort(); /* the caller's own memory is gone: nothing sensible is left */
  sort_buf b = buf_at(scratch, n);
  hilbert_sort_with(pts, n, box, &b);
  free(scratch);
}

void dt_order_init(void) {
  if (!tab_ready) build_table();
}

size_t dt_brio_scratch_bytes(size_t n) {
  n = n ? n : 1;
  return n * 2 * sizeof(uint64_t) + n * sizeof(dt_pt);
}

void dt_brio(dt_pt *pts, size_t n, const double box[4], uint64_t seed) {
  if (n < 2) return;
  void *scratch = dt_alloc(dt_brio_scratch_bytes(n));
  if (!scratch) abort(); /* the caller's own memory is gone: nothing sensible is left */
  dt_brio_in(pts, n, box, seed, scratch);
  free(scratch);
}

/* ---- BRIO in steps (dt_brio_job): the shuffle, then each round's level sort in slices ---- */
enum {
  ST_SHUFFLE, ST_ROUND, ST_KEYS, ST_COUNT, ST_SCATTER, ST_PERMUTE, ST_COPY, ST_FIND_RUNS, ST_RUNS,
  ST_DONE
};

void dt_brio_start(dt_brio_job *j, dt_pt *pts, size_t n, const double box[4], uint64_t seed,
                   void *scratch) {
  if (!tab_ready) build_table();
  *j = (dt_brio_job){.pts = pts, .n = n, .scratch = scratch,
                     .stage = n < 2 ? ST_DONE : ST_SHUFFLE, .at = n, .len = n};
  dt_square_box(box, j->box);
  j->rng = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  if (!j->rng) j->rng = 1;
}

/* At most `work` items of the shuffle (Fisher-Yates, at from n down to 2); the items done. */
static size_t shuffle_slice(dt_brio_job *j, size_t work, int *over) {
  bench_rng r = {j->rng};
  size_t stop = j->at - 1 > work ? j->at - work : 1;
  for (size_t i = j->at; i > stop; i--) {
    size_t k = (size_t)(bench_rand(&r) % i);
    dt_pt s = j->pts[i - 1];
    j->pts[i - 1] = j->pts[k];
    j->pts[k] = s;
  }
  size_t done = j->at - stop;
  j->rng = r.s, j->at = stop;
  *over = stop == 1;
  return done;
}

/* At most `work` items of the round's current stage over its m points, from j->at on; the
 * items done. */
static size_t level_slice(dt_brio_job *j, size_t work, int *over) {
  sort_buf b = buf_at(j->scratch, j->n);
  dt_pt *base = j->pts + j->base;
  size_t m = j->m, at = j->at, to = work < m - at ? at + work : m;
  switch (j->stage) {
  case ST_KEYS: keys_range(base, j->lbox, j->s0, b.k, at, to); break;
  case ST_COUNT:
    if (at == 0) memset(j->count, 0, sizeof j->count);
    count_range(pass_src(b.k, b.tmp, j->pass), j->count, j->pass, at, to);
    if (to == m) counts_to_offsets(j->count);
    break;
  case ST_SCATTER:
    scatter_range(pass_src(b.k, b.tmp, j->pass), pass_src(b.k, b.tmp, j->pass + 1), j->count,
                  j->pass, at, to);
    break;
  case ST_PERMUTE: permute_range(base, j->keys, b.pts, at, to); break;
  default: memcpy(base + at, b.pts + at, (to - at) * sizeof *base); break; /* ST_COPY */
  }
  j->at = to;
  *over = to == m;
  return to - at;
}

/* After a stage is over: the next one (from its start). */
static void next_stage(dt_brio_job *j) {
  sort_buf b = buf_at(j->scratch, j->n);
  size_t m = j->m;
  j->at = 0;
  switch (j->stage) {
  case ST_SHUFFLE: j->stage = ST_ROUND; break;
  case ST_KEYS:
    if (m < SMALL_SORT) {
      insertion_sort(b.k, m);
      j->keys = b.k, j->stage = ST_PERMUTE;
    } else {
      j->pass = 0, j->stage = ST_COUNT;
    }
    break;
  case ST_COUNT: j->stage = ST_SCATTER; break;
  case ST_SCATTER:
    if (++j->pass < RADIX_PASSES) j->stage = ST_COUNT;
    else j->keys = pass_src(b.k, b.tmp, RADIX_PASSES), j->stage = ST_PERMUTE;
    break;
  case ST_PERMUTE: j->stage = ST_COPY; break;
  case ST_COPY: j->stage = ST_FIND_RUNS; break;
  default: j->stage = ST_RUNS; break; /* ST_FIND_RUNS */
  }
}

/* The sort of pts[base, base + m) over lbox from curve state s0, at `depth`, from its keys on. */
static void start_level(dt_brio_job *j, size_t base, size_t m, const double lbox[4], int s0,
                        int depth) {
  j->base = base, j->m = m, j->s0 = s0, j->depth = depth;
  memcpy(j->lbox, lbox, sizeof j->lbox);
  j->at = 0, j->stage = ST_KEYS;
}

/* The rounds from the largest down: the last 3/4 of [0, len), then [0, len/4) the same way. */
static void start_round(dt_brio_job *j) {
  if (j->len == 0) {
    j->stage = ST_DONE;
    return;
  }
  j->mid = j->len > 16 ? j->len / 4 : 0;
  start_level(j, j->mid, j->len - j->mid, j->box, 0, 0);
}

static void push_run(dt_brio_job *j, run r) {
  if (j->nruns == j->cap_runs) {
    size_t cap = j->cap_runs ? 2 * j->cap_runs : 16;
    run *p = realloc(j->runs, cap * sizeof *p);
    if (!p) abort(); /* the caller's own memory is gone: nothing sensible is left */
    j->runs = p, j->cap_runs = cap;
  }
  j->runs[j->nruns++] = r;
}

/* At most about `work` of the sorted keys scanned for runs of more than RUN_MAX equal ones
 * (crowded cells of the curve's grid: points over a huge range of scales, or dense clusters),
 * each noted with the curve's state inside its cell, to be sorted again one level down
 * (find_runs' answers, as hilbert_sort_rec takes them; none below DEPTH_MAX). A group of equal
 * keys is scanned whole. All of a level's runs are found before any is sorted: their sorts
 * reuse the scratch that holds the keys. The keys scanned. */
static size_t find_slice(dt_brio_job *j, size_t work, int *over) {
  const dt_pt *pts = j->pts + j->base;
  size_t m = j->m, i = j->at, stop = work < m - i ? i + work : m;
  while (i < stop) {
    size_t e = i + 1;
    while (e < m && j->keys[e] >> 32 == j->keys[i] >> 32) e++;
    if (e - i > RUN_MAX && j->depth < DEPTH_MAX)
      push_run(j, (run){j->base + i, e - i, cell_state(&pts[i], j->lbox, j->s0), j->depth + 1});
    i = e;
  }
  size_t done = i - j->at;
  j->at = i;
  *over = i == m;
  return done;
}

/* The next crowded cell's sort (over the box of its own points; cells of equal points are
 * left as they are), or, with none left, the next round. The points whose box was taken. */
static size_t next_run(dt_brio_job *j) {
  size_t done = 0;
  while (j->nruns) {
    run r = j->runs[--j->nruns];
    double sub[4], sq[4];
    dt_box_pts(j->pts + r.at, r.n, sub);
    done += r.n;
    if (sub[0] == sub[1] && sub[2] == sub[3]) continue;
    dt_square_box(sub, sq);
    start_level(j, r.at, r.n, sq, r.state, r.depth);
    return done;
  }
  j->len = j->mid, j->stage = ST_ROUND;
  return done;
}

int dt_brio_step(dt_brio_job *j, size_t work) {
  work = work ? work : 1; /* every call moves on: a loop of calls with 0 ends too */
  for (size_t done = 0; j->stage != ST_DONE && done < work;) {
    int over = 0;
    if (j->stage == ST_ROUND)
      start_round(j);
    else if (j->stage == ST_FIND_RUNS)
      done += find_slice(j, work - done, &over);
    else if (j->stage == ST_RUNS)
      done += next_run(j);
    else if (j->stage == ST_SHUFFLE)
      done += shuffle_slice(j, work - done, &over);
    else
      done += level_slice(j, work - done, &over);
    if (over) next_stage(j);
  }
  if (j->stage == ST_DONE && j->runs) free(j->runs), j->runs = NULL, j->cap_runs = 0;
  return j->stage != ST_DONE;
}

void dt_brio_cancel(dt_brio_job *j) {
  free(j->runs);
  j->runs = NULL, j->nruns = j->cap_runs = 0;
  j->stage = ST_DONE;
}

void dt_brio_in(dt_pt *pts, size_t n, const double box[4], uint64_t seed, void *scratch) {
  dt_brio_job j;
  dt_brio_start(&j, pts, n, box, seed, scratch);
  while (dt_brio_step(&j, SIZE_MAX)) {
  }
}

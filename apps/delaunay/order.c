/* order.c: the insertion order. Points inserted along a space-filling curve make every walk
 * short and keep the triangles touched together in cache; a biased randomized insertion order
 * (BRIO: rounds of growing size, each sorted along the curve) keeps the expected cavity small
 * even for sorted or degenerate input. This is what CGAL's spatial_sort does before its
 * insertion, so the serial comparison is like for like. The sort is adaptive: a cell of the
 * curve's grid that holds many points is sorted again over its own points' box (points spread
 * over a huge range of scales would otherwise share a few cells, in random order, and every
 * walk would cross the mesh). Main entries: dt_brio(), dt_hilbert_sort(). */
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

/* Sort v[0..n) (key << 32 | position) by key: LSD radix, three passes of 11 bits. */
static void radix_sort(uint64_t *v, uint64_t *tmp, size_t n) {
  static const int shift[3] = {32, 43, 54};
  size_t count[2048];
  for (int pass = 0; pass < 3; pass++) {
    memset(count, 0, sizeof count);
    int sh = shift[pass];
    for (size_t i = 0; i < n; i++) count[(v[i] >> sh) & 2047]++;
    size_t sum = 0;
    for (int d = 0; d < 2048; d++) {
      size_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++) tmp[count[(v[i] >> sh) & 2047]++] = v[i];
    uint64_t *s = v;
    v = tmp;
    tmp = s;
  }
  /* three passes: the result is in the buffer that started as tmp */
  memcpy(tmp, v, n * sizeof *v);
}

static void insertion_sort(uint64_t *v, size_t n) {
  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && v[j] < v[j - 1]; j--) {
      uint64_t s = v[j];
      v[j] = v[j - 1];
      v[j - 1] = s;
    }
}

/* Scratch of one sort: keys, the radix sort's other buffer, points. */
typedef struct sort_buf {
  uint64_t *k, *tmp;
  dt_pt *pts;
} sort_buf;

/* A run of points that share a cell of the 2^16 grid, to be sorted again over its own box. */
typedef struct run {
  size_t at, n;
  int state;
} run;

#define RUN_MAX 16   /* more points than this in one cell are sorted again inside it */
#define DEPTH_MAX 64 /* the recursion stops there (only points all equal could go deeper) */

/* Sort pts[0..n) along the curve over box from state s0; note the runs of more than RUN_MAX
 * points with one key (with the curve's state inside their cell) in *runs. */
static size_t sort_level(dt_pt *pts, size_t n, const double box[4], int s0, sort_buf *b,
                         run **runs) {
  for (size_t i = 0; i < n; i++) {
    int s = s0;
    b->k[i] = (uint64_t)hilbert16(quantize(pts[i].x, box[0], box[1]),
                                  quantize(pts[i].y, box[2], box[3]), &s)
                  << 32 |
              i;
  }
  if (n < 64)
    insertion_sort(b->k, n);
  else
    radix_sort(b->k, b->tmp, n);
  for (size_t i = 0; i < n; i++) b->pts[i] = pts[(uint32_t)b->k[i]];
  memcpy(pts, b->pts, n * sizeof *pts);
  size_t nr = 0, cap = 0;
  for (size_t i = 0, j; i < n; i = j) {
    for (j = i + 1; j < n && b->k[j] >> 32 == b->k[i] >> 32;) j++;
    if (j - i <= RUN_MAX) continue;
    if (nr == cap) {
      cap = cap ? 2 * cap : 16;
      run *r = realloc(*runs, cap * sizeof *r);
      if (!r) abort(); /* the caller's own memory is gone: nothing sensible is left */
      *runs = r;
    }
    int s = s0;
    hilbert16(quantize(pts[i].x, box[0], box[1]), quantize(pts[i].y, box[2], box[3]), &s);
    (*runs)[nr++] = (run){i, j - i, s};
  }
  return nr;
}

/* The Hilbert sort, adaptive: a cell of the 2^16 grid that holds many points (input spread over
 * a huge range of scales, where most points share a few cells of the whole box) is sorted
 * again over the box of its own points, continuing the curve's orientation, and so on down. */
static void hilbert_sort_rec(dt_pt *pts, size_t n, const double box[4], int s0, sort_buf *b,
                             int depth) {
  run *runs = NULL;
  size_t nr = sort_level(pts, n, box, s0, b, &runs);
  for (size_t r = 0; r < nr && depth < DEPTH_MAX; r++) {
    double sub[4];
    dt_pt *q = pts + runs[r].at;
    dt_box_pts(q, runs[r].n, sub);
    if (sub[0] == sub[1] && sub[2] == sub[3]) continue; /* all equal: any order */
    hilbert_sort_rec(q, runs[r].n, sub, runs[r].state, b, depth + 1);
  }
  free(runs);
}

static void hilbert_sort_with(dt_pt *pts, size_t n, const double box[4], sort_buf *b) {
  if (!tab_ready) build_table();
  hilbert_sort_rec(pts, n, box, 0, b, 0);
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

void dt_brio_in(dt_pt *pts, size_t n, const double box[4], uint64_t seed, void *scratch) {
  if (n < 2) return;
  bench_rng r = {seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull};
  if (!r.s) r.s = 1;
  for (size_t i = n; i > 1; i--) { /* Fisher-Yates */
    size_t j = (size_t)(bench_rand(&r) % i);
    dt_pt s = pts[i - 1];
    pts[i - 1] = pts[j];
    pts[j] = s;
  }
  sort_buf b = buf_at(scratch, n);
  /* rounds from the largest down: the last 3/4 of [0, len), then [0, len/4) the same way */
  for (size_t len = n; len > 0;) {
    size_t mid = len > 16 ? len / 4 : 0;
    hilbert_sort_with(pts + mid, len - mid, box, &b);
    len = mid;
  }
}

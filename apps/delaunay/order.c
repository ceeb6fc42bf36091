/* order.c: the insertion order. Points inserted along a space-filling curve make every walk
 * short and keep the triangles touched together in cache; a biased randomized insertion order
 * (BRIO: rounds of growing size, each sorted along the curve) keeps the expected cavity small
 * even for sorted or degenerate input. This is what CGAL's spatial_sort does before its
 * insertion, so the serial comparison is like for like. Main entries: dt_brio(),
 * dt_hilbert_sort(). */
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

static inline uint32_t hilbert16(uint32_t x, uint32_t y) {
  uint32_t key = 0;
  int s = 0;
  for (int i = 3; i >= 0; i--) {
    uint16_t e = tab[s][((x >> (4 * i)) & 15) << 4 | ((y >> (4 * i)) & 15)];
    key = key << 8 | (e & 255);
    s = e >> 8;
  }
  return key;
}

uint32_t dt_hilbert_key(double x, double y, const double box[4]) {
  if (!tab_ready) build_table();
  return hilbert16(quantize(x, box[0], box[1]), quantize(y, box[2], box[3]));
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

/* Sort pts[0..n) by key, with the scratch buffers of hilbert_sort_with. */
static void hilbert_sort_with(dt_pt *pts, size_t n, const double box[4], uint64_t *k, uint64_t *tmp,
                              dt_pt *ptmp) {
  if (!tab_ready) build_table();
  for (size_t i = 0; i < n; i++)
    k[i] =
        (uint64_t)hilbert16(quantize(pts[i].x, box[0], box[1]), quantize(pts[i].y, box[2], box[3]))
            << 32 |
        i;
  if (n < 64)
    insertion_sort(k, n);
  else
    radix_sort(k, tmp, n);
  for (size_t i = 0; i < n; i++) ptmp[i] = pts[(uint32_t)k[i]];
  memcpy(pts, ptmp, n * sizeof *pts);
}

void dt_hilbert_sort(dt_pt *pts, size_t n, const double box[4]) {
  if (n < 2) return;
  uint64_t *k = dt_alloc((n ? n : 1) * 2 * sizeof *k);
  dt_pt *ptmp = dt_alloc((n ? n : 1) * sizeof *ptmp);
  if (!k || !ptmp) abort(); /* the caller's own memory is gone: nothing sensible is left */
  hilbert_sort_with(pts, n, box, k, k + n, ptmp);
  free(k);
  free(ptmp);
}

void dt_brio(dt_pt *pts, size_t n, const double box[4], uint64_t seed) {
  if (n < 2) return;
  bench_rng r = {seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull};
  if (!r.s) r.s = 1;
  for (size_t i = n; i > 1; i--) { /* Fisher-Yates */
    size_t j = (size_t)(bench_rand(&r) % i);
    dt_pt s = pts[i - 1];
    pts[i - 1] = pts[j];
    pts[j] = s;
  }
  uint64_t *k = dt_alloc((n ? n : 1) * 2 * sizeof *k);
  dt_pt *ptmp = dt_alloc((n ? n : 1) * sizeof *ptmp);
  if (!k || !ptmp) abort();
  /* rounds from the largest down: the last 3/4 of [0, len), then [0, len/4) the same way */
  for (size_t len = n; len > 0;) {
    size_t mid = len > 16 ? len / 4 : 0;
    hilbert_sort_with(pts + mid, len - mid, box, k, k + n, ptmp);
    len = mid;
  }
  free(k);
  free(ptmp);
}

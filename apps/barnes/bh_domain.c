/* bh_domain.c: domains as ranges of keys (bh.h). A worker's bodies sorted by key, and the cuts
 * between domains: cut[j], the smallest key with j/P of the system's weight below it, found
 * for all j at once by bisection of the key space (64 rounds of one collective sum of P - 1
 * numbers). Bodies of one key never split, so a cell of the deepest key level lies in one
 * domain. Main entries: bh_sort_by_key, bh_domain_cuts. */
#include <stdlib.h>
#include <string.h>

#include "bh_par.h"

typedef struct keyed {
  uint64_t key;
  size_t i;
} keyed;

static int by_key(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i; /* stable: equal keys keep their order */
}

int bh_sort_by_key(const bh_cube *c, bh_body *b, size_t n, uint64_t *keys, bh_body *scratch) {
  keyed *k = malloc((n ? n : 1) * sizeof *k);
  if (!k) return -1;
  for (size_t i = 0; i < n; i++) k[i] = (keyed){bh_key(c, b[i].pos), i};
  qsort(k, n, sizeof *k, by_key);
  for (size_t i = 0; i < n; i++) scratch[i] = b[k[i].i], keys[i] = k[i].key;
  memcpy(b, scratch, n * sizeof *b);
  free(k);
  return 0;
}

/* The weight of the bodies with key < k: pw[i] is the weight of the first i (keys sorted). */
static int64_t weight_below(const uint64_t *keys, const int64_t *pw, size_t n, uint64_t k) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return pw[lo];
}

int bh_domain_cuts(const uint64_t *keys, const bh_body *b, size_t n, int P, bh_sum_fn sum,
                   void *ctx, uint64_t *cut) {
  int64_t *pw = malloc((n + 1) * sizeof *pw), *w = malloc(((size_t)P + 1) * sizeof *w);
  uint64_t *lo = malloc((size_t)P * sizeof *lo), *hi = malloc((size_t)P * sizeof *hi);
  if (!pw || !w || !lo || !hi) {
    free(pw), free(w), free(lo), free(hi);
    return -1;
  }
  pw[0] = 0;
  for (size_t i = 0; i < n; i++) pw[i + 1] = pw[i] + bh_weight(&b[i]);
  int64_t total = pw[n];
  sum(ctx, &total, 1);
  for (int j = 1; j < P; j++) lo[j] = 0, hi[j] = BH_KEY_END;
  /* lower bound of each target: the smallest k with weight_below(k) * P >= j * total */
  for (int round = 0; round <= 3 * BH_KEY_LEVELS; round++) {
    for (int j = 1; j < P; j++)
      w[j] = lo[j] < hi[j] ? weight_below(keys, pw, n, lo[j] + (hi[j] - lo[j]) / 2) : 0;
    sum(ctx, w + 1, P - 1);
    for (int j = 1; j < P; j++) {
      if (lo[j] >= hi[j]) continue;
      uint64_t mid = lo[j] + (hi[j] - lo[j]) / 2;
      if (w[j] * (int64_t)P >= (int64_t)j * total) hi[j] = mid;
      else lo[j] = mid + 1;
    }
  }
  cut[0] = 0;
  for (int j = 1; j < P; j++) cut[j] = lo[j];
  cut[P] = BH_KEY_END;
  free(pw), free(w), free(lo), free(hi);
  return 0;
}

size_t bh_domain_of(const uint64_t *cut, int P, uint64_t key) {
  size_t lo = 0, hi = (size_t)P; /* the last j with cut[j] <= key */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (cut[mid] <= key) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* bench_trie.c: ns per insert / find / nearest / delete of the 8-degree trie, side by side
 * with glibc's tsearch family on the same keys in the same run. tsearch has no nearest
 * search, so nearest is compared with a binary search over a sorted array (the best a
 * static structure does). Two key sets: "slab" keys (n distinct slab indices among 4n, like
 * a pool's Used trie; 30-bit width) and "sparse" keys (random 40-bit, the GAS's widest). */
#include <getopt.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "trie/trie.h"

typedef struct {
  const char *name;
  unsigned bits;
} keyset;

static int cmp_key(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* n distinct keys in random order. */
static void make_keys(uint64_t *keys, size_t n, const keyset *ks, uint64_t seed) {
  bench_rng r = {seed};
  if (ks->bits == 30) { /* a random n-subset of [0, 4n): shuffle the range, keep n */
    size_t range = 4 * n;
    uint64_t *all = malloc(range * sizeof *all);
    for (size_t i = 0; i < range; i++) all[i] = i;
    for (size_t i = 0; i < n; i++) {
      size_t j = i + bench_rand(&r) % (range - i);
      uint64_t t = all[i]; all[i] = all[j]; all[j] = t;
    }
    memcpy(keys, all, n * sizeof *keys);
    free(all);
    return;
  }
  uint64_t mask = ((uint64_t)1 << ks->bits) - 1;
  for (size_t i = 0; i < n; i++) keys[i] = bench_rand(&r) & mask; /* duplicates: ~0 at 2^40 */
  qsort(keys, n, sizeof *keys, cmp_key);
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (m == 0 || keys[i] != keys[m - 1]) keys[m++] = keys[i];
  for (; m < n; m++) keys[m] = (keys[m - 1] + 1) & mask; /* top up (never hit in practice) */
  for (size_t i = n; i > 1; i--) { /* back to random order */
    size_t j = bench_rand(&r) % i;
    uint64_t t = keys[i - 1]; keys[i - 1] = keys[j]; keys[j] = t;
  }
}

typedef struct {
  double insert, find, nearest, del;
} times;

static volatile uintptr_t sink;

static times run_trie(const uint64_t *keys, const uint64_t *probes, size_t n, unsigned bits) {
  trie t;
  trie_init(&t, bits, trie_heap_source());
  times tm;
  double t0 = bench_now_ns();
  for (size_t i = 0; i < n; i++) trie_insert(&t, keys[i], keys[i] + 1);
  double t1 = bench_now_ns();
  uintptr_t acc = 0;
  for (size_t i = 0; i < n; i++) acc += trie_find(&t, keys[n - 1 - i]);
  double t2 = bench_now_ns();
  for (size_t i = 0; i < n; i++) {
    uintptr_t v = 0;
    trie_le(&t, probes[i], NULL, &v);
    acc += v;
  }
  double t3 = bench_now_ns();
  for (size_t i = 0; i < n; i++) trie_delete(&t, keys[i], NULL);
  double t4 = bench_now_ns();
  sink = acc;
  if (trie_count(&t) != 0) fprintf(stderr, "bench-trie: trie not empty after deletes\n");
  trie_clear(&t);
  tm = (times){(t1 - t0) / n, (t2 - t1) / n, (t3 - t2) / n, (t4 - t3) / n};
  return tm;
}

static times run_glibc(const uint64_t *keys, const uint64_t *probes, size_t n) {
  void *root = NULL;
  times tm;
  double t0 = bench_now_ns();
  for (size_t i = 0; i < n; i++) tsearch(&keys[i], &root, cmp_key);
  double t1 = bench_now_ns();
  uintptr_t acc = 0;
  for (size_t i = 0; i < n; i++) acc += (uintptr_t)tfind(&keys[n - 1 - i], &root, cmp_key);
  double t2 = bench_now_ns();
  /* nearest <=: binary search over a sorted copy (tsearch has none) */
  uint64_t *sorted = malloc(n * sizeof *sorted);
  memcpy(sorted, keys, n * sizeof *sorted);
  qsort(sorted, n, sizeof *sorted, cmp_key);
  double t2b = bench_now_ns();
  for (size_t i = 0; i < n; i++) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (sorted[mid] <= probes[i]) lo = mid + 1; else hi = mid;
    }
    acc += lo;
  }
  double t3 = bench_now_ns();
  for (size_t i = 0; i < n; i++) tdelete(&keys[i], &root, cmp_key);
  double t4 = bench_now_ns();
  sink = acc;
  free(sorted);
  tm = (times){(t1 - t0) / n, (t2 - t1) / n, (t3 - t2b) / n, (t4 - t3) / n};
  return tm;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: bench-trie [--reps R] [--max N] [--csv PATH]\n"
          "  ns per insert/find/nearest/delete of the 8-degree trie vs glibc tsearch\n"
          "  (nearest vs binary search in a sorted array) at 1e4, 1e5, 1e6 keys.\n"
          "  --reps R   repetitions, median reported (default 5)\n"
          "  --max N    largest key count (default 1000000)\n"
          "  --csv PATH CSV output (default results/bench-trie.csv)\n");
}

int main(int argc, char **argv) {
  int reps = 5;
  size_t max_n = 1000000;
  const char *csv = "results/bench-trie.csv";
  static struct option opts[] = {{"reps", 1, 0, 'r'}, {"max", 1, 0, 'm'}, {"csv", 1, 0, 'c'},
                                 {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
  for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
    switch (c) {
      case 'r': reps = atoi(optarg); break;
      case 'm': max_n = strtoul(optarg, NULL, 10); break;
      case 'c': csv = optarg; break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if (reps < 1 || reps > 100 || max_n < 10) {
    fprintf(stderr, "bench-trie: --reps must be 1..100 and --max at least 10\n");
    return 2;
  }
  static const char *const cols[] = {"keys", "n", "op", "trie_ns", "baseline", "baseline_ns",
                                     "ratio_baseline_over_trie"};
  bench_table *tab = bench_table_new("bench-trie: ns per operation (median)", 7, cols);
  keyset sets[] = {{"slab", 30}, {"sparse40", 40}};
  for (unsigned s = 0; s < 2; s++) {
    for (size_t n = 10000; n <= max_n; n *= 10) {
      uint64_t *keys = malloc(n * sizeof *keys), *probes = malloc(n * sizeof *probes);
      make_keys(keys, n, &sets[s], 42 + n);
      bench_rng r = {7 + n};
      uint64_t mask = ((uint64_t)1 << sets[s].bits) - 1;
      for (size_t i = 0; i < n; i++) probes[i] = bench_rand(&r) & (sets[s].bits == 30 ? 4 * n - 1 : mask);
      double tt[4][100], tg[4][100];
      for (int k = 0; k < reps; k++) {
        fprintf(stderr, "\rbench-trie: %s keys, n=%zu, rep %d/%d   ", sets[s].name, n, k + 1, reps);
        times a = run_trie(keys, probes, n, sets[s].bits), b = run_glibc(keys, probes, n);
        tt[0][k] = a.insert; tt[1][k] = a.find; tt[2][k] = a.nearest; tt[3][k] = a.del;
        tg[0][k] = b.insert; tg[1][k] = b.find; tg[2][k] = b.nearest; tg[3][k] = b.del;
      }
      const char *ops[] = {"insert", "find", "nearest_le", "delete"};
      const char *base[] = {"tsearch", "tfind", "sorted-array bsearch", "tdelete"};
      for (int o = 0; o < 4; o++) {
        char cn[32], ct[32], cg[32], cr[32];
        double mt = bench_median(tt[o], (size_t)reps), mg = bench_median(tg[o], (size_t)reps);
        snprintf(cn, sizeof cn, "%zu", n);
        snprintf(ct, sizeof ct, "%.1f", mt);
        snprintf(cg, sizeof cg, "%.1f", mg);
        snprintf(cr, sizeof cr, "%.2f", mg / mt);
        const char *row[] = {sets[s].name, cn, ops[o], ct, base[o], cg, cr};
        bench_table_row(tab, row);
      }
      free(keys);
      free(probes);
    }
  }
  fprintf(stderr, "\r%60s\r", "");
  return bench_table_finish(tab, csv) ? 1 : 0;
}

/* bench_slab.c: ns per alloc+free pair of a slab pool, side by side with glibc malloc/free
 * on the same sequence in the same run. Two patterns: "pair" (free right after alloc, the
 * best case of every allocator) and "window" (10,000 objects live; each step allocates one
 * and frees a random live one). The pool is an ordinary pool over a GAS window (it never
 * touches the managed memory; glibc writes its headers) with metadata in a kernel pool. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "common/types.h"
#include "slab/slab.h"

#define WINDOW 10000

static void *volatile sink;

typedef struct {
  size_t *size;   /* request size per step */
  size_t *victim; /* window slot freed per step */
  size_t steps;
} sequence;

static void make_sequence(sequence *q, size_t steps, size_t fixed, uint64_t seed) {
  bench_rng r = {seed};
  q->steps = steps;
  q->size = malloc(steps * sizeof *q->size);
  q->victim = malloc(steps * sizeof *q->victim);
  for (size_t i = 0; i < steps; i++) {
    q->size[i] = fixed ? fixed : 1 + bench_rand(&r) % AH_SLAB_SIZE;
    q->victim[i] = bench_rand(&r) % WINDOW;
  }
}

static slab_pool *new_gas_pool(slab_pool *kernel) {
  slab_config cfg = slab_config_default();
  cfg.base = AH_GAS_DEFAULT_BASE;
  cfg.span = AH_GAS_DEFAULT_SIZE;
  slab_pool *p;
  if (slab_pool_create(&p, &cfg, kernel) || slab_add_range(p, cfg.base, (size_t)4 << 30)) {
    fprintf(stderr, "bench-slab: cannot create the pool\n");
    exit(1);
  }
  return p;
}

static double pool_pairs(slab_pool *k, const sequence *q) {
  slab_pool *p = new_gas_pool(k);
  uintptr_t a;
  double t0 = bench_now_ns();
  for (size_t i = 0; i < q->steps; i++) {
    slab_alloc(p, q->size[i], &a);
    slab_free(p, a);
  }
  double t = (bench_now_ns() - t0) / (double)q->steps;
  slab_pool_destroy(p, NULL, NULL);
  return t;
}

static double glibc_pairs(const sequence *q) {
  double t0 = bench_now_ns();
  for (size_t i = 0; i < q->steps; i++) {
    void *m = malloc(q->size[i]);
    sink = m;
    free(m);
  }
  return (bench_now_ns() - t0) / (double)q->steps;
}

static double pool_window(slab_pool *k, const sequence *q) {
  slab_pool *p = new_gas_pool(k);
  uintptr_t live[WINDOW];
  for (size_t i = 0; i < WINDOW; i++) slab_alloc(p, q->size[i], &live[i]);
  double t0 = bench_now_ns();
  for (size_t i = 0; i < q->steps; i++) {
    size_t v = q->victim[i];
    slab_free(p, live[v]);
    if (slab_alloc(p, q->size[i], &live[v])) {
      fprintf(stderr, "bench-slab: pool allocation failed\n");
      exit(1);
    }
  }
  double t = (bench_now_ns() - t0) / (double)q->steps;
  slab_pool_destroy(p, NULL, NULL);
  return t;
}

static double glibc_window(const sequence *q) {
  void **live = malloc(WINDOW * sizeof *live);
  for (size_t i = 0; i < WINDOW; i++) live[i] = malloc(q->size[i]);
  double t0 = bench_now_ns();
  for (size_t i = 0; i < q->steps; i++) {
    size_t v = q->victim[i];
    free(live[v]);
    live[v] = malloc(q->size[i]);
  }
  double t = (bench_now_ns() - t0) / (double)q->steps;
  for (size_t i = 0; i < WINDOW; i++) free(live[i]);
  free(live);
  return t;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: bench-slab [--steps N] [--reps R] [--csv PATH]\n"
          "  ns per alloc+free pair: slab pool vs glibc malloc/free, sizes 64, 192, 256,\n"
          "  1024, 4096 B and mixed (1..4096 B), patterns pair and window.\n"
          "  --steps N  pairs per measurement (default 2000000)\n"
          "  --reps R   repetitions, median reported (default 5)\n"
          "  --csv PATH CSV output (default results/bench-slab.csv)\n");
}

int main(int argc, char **argv) {
  size_t steps = 2000000;
  int reps = 5;
  const char *csv = "results/bench-slab.csv";
  static struct option opts[] = {{"steps", 1, 0, 's'}, {"reps", 1, 0, 'r'}, {"csv", 1, 0, 'c'},
                                 {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
  for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
    switch (c) {
      case 's': steps = strtoul(optarg, NULL, 10); break;
      case 'r': reps = atoi(optarg); break;
      case 'c': csv = optarg; break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if (steps < WINDOW || reps < 1 || reps > 100) {
    fprintf(stderr, "bench-slab: --steps must be >= %d and --reps 1..100\n", WINDOW);
    return 2;
  }
  size_t kbytes = (size_t)512 << 20;
  void *kmem = aligned_alloc(AH_SLAB_SIZE, kbytes);
  slab_pool *kernel;
  if (!kmem || slab_pool_create_self_hosted(&kernel, kmem, kbytes, NULL)) {
    fprintf(stderr, "bench-slab: cannot create the kernel pool\n");
    return 1;
  }
  static const char *const cols[] = {"size", "pattern", "pool_ns", "glibc_ns", "ratio_glibc_over_pool"};
  bench_table *tab = bench_table_new("bench-slab: ns per alloc+free pair (median)", 5, cols);
  size_t sizes[] = {64, 192, 256, 1024, 4096, 0};
  for (unsigned s = 0; s < 6; s++) {
    sequence q;
    make_sequence(&q, steps, sizes[s], 99 + s);
    for (int pat = 0; pat < 2; pat++) {
      double tp[100], tg[100];
      for (int k = 0; k < reps; k++) {
        fprintf(stderr, "\rbench-slab: size %zu %s rep %d/%d   ", sizes[s], pat ? "window" : "pair", k + 1, reps);
        tp[k] = pat ? pool_window(kernel, &q) : pool_pairs(kernel, &q);
        tg[k] = pat ? glibc_window(&q) : glibc_pairs(&q);
      }
      double mp = bench_median(tp, (size_t)reps), mg = bench_median(tg, (size_t)reps);
      char cs[32], cp[32], cg[32], cr[32];
      if (sizes[s]) snprintf(cs, sizeof cs, "%zu", sizes[s]); else snprintf(cs, sizeof cs, "mixed");
      snprintf(cp, sizeof cp, "%.1f", mp);
      snprintf(cg, sizeof cg, "%.1f", mg);
      snprintf(cr, sizeof cr, "%.2f", mg / mp);
      const char *row[] = {cs, pat ? "window" : "pair", cp, cg, cr};
      bench_table_row(tab, row);
    }
    free(q.size);
    free(q.victim);
  }
  fprintf(stderr, "\r%60s\r", "");
  free(kmem);
  return bench_table_finish(tab, csv) ? 1 : 0;
}

/* bench_region.c: the region layer's costs. (1) Freeing a region holding 1e3, 1e5, 1e6
 * objects (should be flat: a region drops its private metadata chunks, it does not visit
 * objects), beside destroying an ordinary pool with the same content (visits every slab).
 * (2) ns per alloc+free pair in a region vs the bare slab pool (the layer's overhead).
 * (3) pack time and range count for a 30,000-node list of 256-B nodes. (4) A scheduler's
 * share of listx's cycle, ns per slab: W regions (one per worker) each leased S slabs of
 * 256-B slots in grants of 256 taken in turn (the workers build at once), handed back full
 * (the first send's flush), packed twice (the first send walks the pool, later ones hit the
 * cache), freed. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "common/types.h"
#include "region/region.h"

static void *chunks[1024];
static int nchunks;
static int kernel_grow(void *ctx, size_t min_bytes, uintptr_t *addr, size_t *len) {
  (void)ctx;
  size_t sz = min_bytes < ((size_t)64 << 20) ? (size_t)64 << 20 : ah_round_up(min_bytes, AH_SLAB_SIZE);
  if (nchunks == 1024 || !(chunks[nchunks] = aligned_alloc(AH_SLAB_SIZE, sz))) return ENOMEM;
  *addr = (uintptr_t)chunks[nchunks++];
  *len = sz;
  return 0;
}

static slab_pool *make_kernel(void) {
  slab_config kc = slab_config_default();
  kc.grow = kernel_grow;
  uintptr_t a;
  size_t len;
  kernel_grow(NULL, 0, &a, &len);
  slab_pool *k;
  if (slab_pool_create_self_hosted(&k, (void *)a, len, &kc)) {
    fprintf(stderr, "bench-region: cannot create the kernel pool\n");
    exit(1);
  }
  return k;
}

static region_layer *make_layer(slab_pool *k) {
  region_config cfg = region_config_default();
  region_layer *L;
  if (region_layer_create(&L, &cfg, k) || region_layer_add_range(L, cfg.gas_base, (size_t)16 << 30) ||
      region_layer_add_ids(L, 1, 1000000)) {
    fprintf(stderr, "bench-region: cannot create the region layer\n");
    exit(1);
  }
  return L;
}

static void die_if(int rc, const char *what) {
  if (rc) {
    fprintf(stderr, "bench-region: %s failed (error %d)\n", what, rc);
    exit(1);
  }
}

/* (1) free-region time vs destroying an ordinary pool with the same objects */
static void bench_free(region_layer *L, slab_pool *k, bench_table *t, int reps) {
  static const size_t counts[] = {1000, 10000, 100000, 1000000};
  for (unsigned c = 0; c < 4; c++) {
    size_t n = counts[c];
    double tr[100], tp[100];
    for (int i = 0; i < reps; i++) {
      fprintf(stderr, "\rbench-region: free, %zu objects, rep %d/%d   ", n, i + 1, reps);
      rid_t r;
      uintptr_t a;
      die_if(region_create(L, REGION_ROOT, 0, &r), "region_create");
      for (size_t j = 0; j < n; j++) die_if(region_alloc(L, 64, r, &a), "region_alloc");
      double t0 = bench_now_ns();
      die_if(region_free(L, r), "region_free");
      tr[i] = bench_now_ns() - t0;
      slab_config pc = slab_config_default();
      pc.base = AH_GAS_DEFAULT_BASE + ((size_t)32 << 30);
      pc.span = (size_t)16 << 30;
      slab_pool *p;
      die_if(slab_pool_create(&p, &pc, k) || slab_add_range(p, pc.base, pc.span), "pool");
      for (size_t j = 0; j < n; j++) die_if(slab_alloc(p, 64, &a), "slab_alloc");
      t0 = bench_now_ns();
      slab_pool_destroy(p, NULL, NULL);
      tp[i] = bench_now_ns() - t0;
    }
    char cn[32], c1[32], c2[32];
    snprintf(cn, sizeof cn, "%zu", n);
    snprintf(c1, sizeof c1, "%.1f", bench_median(tr, (size_t)reps) / 1e3);
    snprintf(c2, sizeof c2, "%.1f", bench_median(tp, (size_t)reps) / 1e3);
    const char *row[] = {"free_region_us", cn, c1, "pool_destroy_us", c2};
    bench_table_row(t, row);
  }
}

/* (2) alloc+free pairs through the layer vs the bare pool, 10,000 live, random victims */
static void bench_overhead(region_layer *L, slab_pool *k, bench_table *t, int reps, size_t steps) {
  enum { W = 10000 };
  static uintptr_t live[W];
  size_t *victim = malloc(steps * sizeof *victim);
  bench_rng rng = {17};
  for (size_t i = 0; i < steps; i++) victim[i] = bench_rand(&rng) % W;
  double tr[100], tp[100];
  for (int i = 0; i < reps; i++) {
    fprintf(stderr, "\rbench-region: overhead rep %d/%d   ", i + 1, reps);
    rid_t r;
    die_if(region_create(L, REGION_ROOT, 0, &r), "region_create");
    for (size_t j = 0; j < W; j++) die_if(region_alloc(L, 192, r, &live[j]), "region_alloc");
    double t0 = bench_now_ns();
    for (size_t j = 0; j < steps; j++) {
      region_free_object(L, live[victim[j]]);
      region_alloc(L, 192, r, &live[victim[j]]);
    }
    tr[i] = (bench_now_ns() - t0) / (double)steps;
    region_free(L, r);
    slab_config pc = slab_config_default();
    pc.base = AH_GAS_DEFAULT_BASE + ((size_t)32 << 30);
    pc.span = (size_t)16 << 30;
    slab_pool *p;
    die_if(slab_pool_create(&p, &pc, k) || slab_add_range(p, pc.base, pc.span), "pool");
    for (size_t j = 0; j < W; j++) die_if(slab_alloc(p, 192, &live[j]), "slab_alloc");
    t0 = bench_now_ns();
    for (size_t j = 0; j < steps; j++) {
      slab_free(p, live[victim[j]]);
      slab_alloc(p, 192, &live[victim[j]]);
    }
    tp[i] = (bench_now_ns() - t0) / (double)steps;
    slab_pool_destroy(p, NULL, NULL);
  }
  free(victim);
  char c1[32], c2[32];
  snprintf(c1, sizeof c1, "%.1f", bench_median(tr, (size_t)reps));
  snprintf(c2, sizeof c2, "%.1f", bench_median(tp, (size_t)reps));
  const char *row[] = {"region_alloc_free_ns", "10000 live x 192 B", c1, "pool_alloc_free_ns", c2};
  bench_table_row(t, row);
}

/* (3) pack of a 30,000-node list */
static void bench_pack(region_layer *L, bench_table *t, int reps) {
  rid_t r;
  uintptr_t a;
  die_if(region_create(L, REGION_ROOT, 0, &r), "region_create");
  for (int j = 0; j < 30000; j++) die_if(region_alloc(L, 256, r, &a), "region_alloc");
  double tp[100];
  size_t n = 0;
  for (int i = 0; i < reps; i++) {
    double t0 = bench_now_ns();
    die_if(region_pack(L, &r, 1, NULL, 0, NULL, NULL, &n), "region_pack");
    tp[i] = bench_now_ns() - t0;
  }
  region_free(L, r);
  char c1[32], c2[32];
  snprintf(c1, sizeof c1, "%.1f", bench_median(tp, (size_t)reps) / 1e3);
  snprintf(c2, sizeof c2, "%zu", n);
  const char *row[] = {"pack_us", "30000 x 256 B list", c1, "ranges", c2};
  bench_table_row(t, row);
}

/* (4) the lease cycle of listx at one scheduler */
enum { CYCLE_W = 16, CYCLE_GRANT = 256 };
typedef struct {
  double lease, give_back, first_pack, pack, free;
} cycle_ns;

/* Sort a worker's {slab, live} pairs by address, as its cache hands them back. */
static int cmp_pair(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

static void cycle_once(region_layer *L, size_t per, cycle_ns *ns) {
  static uint64_t pairs[CYCLE_W][2 * 65536];
  uintptr_t got[CYCLE_GRANT];
  rid_t r[CYCLE_W];
  size_t have[CYCLE_W] = {0}, total = (size_t)CYCLE_W * per, n;
  uint64_t full = ~0ull >> (64 - AH_SLAB_SIZE / 256);
  for (int w = 0; w < CYCLE_W; w++) die_if(region_create(L, REGION_ROOT, 0, &r[w]), "region_create");
  double t0 = bench_now_ns();
  for (size_t left = total; left;)
    for (int w = 0; w < CYCLE_W; w++) {
      size_t want = per - have[w] < CYCLE_GRANT ? per - have[w] : CYCLE_GRANT, k;
      uint32_t slot;
      if (!want) continue;
      die_if(region_lease(L, r[w], 256, want, want, w, got, &k, &slot), "region_lease");
      for (size_t i = 0; i < k; i++) {
        pairs[w][2 * (have[w] + i)] = got[i];
        pairs[w][2 * (have[w] + i) + 1] = full;
      }
      have[w] += k;
      left -= k;
    }
  double t1 = bench_now_ns();
  for (int w = 0; w < CYCLE_W; w++) qsort(pairs[w], per, 2 * sizeof(uint64_t), cmp_pair);
  double t2 = bench_now_ns();
  for (int w = 0; w < CYCLE_W; w++) {
    size_t dropped = 0;
    die_if(region_lease_return(L, w, pairs[w], per, &dropped), "region_lease_return");
  }
  double t3 = bench_now_ns();
  for (int w = 0; w < CYCLE_W; w++)
    die_if(region_pack(L, &r[w], 1, NULL, 0, NULL, NULL, &n), "region_pack");
  double t4 = bench_now_ns();
  for (int w = 0; w < CYCLE_W; w++)
    die_if(region_pack(L, &r[w], 1, NULL, 0, NULL, NULL, &n), "region_pack");
  double t5 = bench_now_ns();
  for (int w = 0; w < CYCLE_W; w++) die_if(region_free(L, r[w]), "region_free");
  double t6 = bench_now_ns(), d = (double)total;
  *ns = (cycle_ns){(t1 - t0) / d, (t3 - t2) / d, (t4 - t3) / d, (t5 - t4) / d, (t6 - t5) / d};
}

static void bench_cycle(region_layer *L, bench_table *t, int reps, size_t per) {
  double v[5][100];
  for (int i = 0; i < reps; i++) {
    fprintf(stderr, "\rbench-region: lease cycle rep %d/%d   ", i + 1, reps);
    cycle_ns ns;
    cycle_once(L, per, &ns);
    v[0][i] = ns.lease, v[1][i] = ns.give_back, v[2][i] = ns.first_pack, v[3][i] = ns.pack;
    v[4][i] = ns.free;
  }
  static const char *const what[] = {"lease_ns_per_slab", "give_back_ns_per_slab",
                                     "first_pack_ns_per_slab", "pack_ns_per_slab",
                                     "free_ns_per_slab"};
  char cs[64];
  snprintf(cs, sizeof cs, "%d regions x %zu slabs of 256 B", CYCLE_W, per);
  for (int m = 0; m < 5; m++) {
    char c1[32];
    snprintf(c1, sizeof c1, "%.1f", bench_median(v[m], (size_t)reps));
    const char *row[] = {what[m], cs, c1, "", ""};
    bench_table_row(t, row);
  }
}

static void usage(FILE *f) {
  fprintf(f, "usage: bench-region [--reps R] [--steps N] [--csv PATH]\n"
             "  free-region time at 1e3/1e5/1e6 objects (vs destroying a bare pool), the\n"
             "  layer's alloc+free overhead vs the bare pool, pack of a 30,000-node list, and\n"
             "  a scheduler's ns per slab in listx's lease cycle (lease, give back, pack, free).\n"
             "  --only cycle  just the lease cycle (for profiling)\n"
             "  --slabs S     slabs per region in the lease cycle (default 15000, at most 65536)\n"
             "  --reps R    repetitions, median reported (default 5)\n"
             "  --steps N   alloc+free pairs for the overhead test (default 2000000)\n"
             "  --csv PATH  CSV output (default results/bench-region.csv)\n");
}

int main(int argc, char **argv) {
  int reps = 5, only_cycle = 0;
  size_t steps = 2000000, per = 15000;
  const char *csv = "results/bench-region.csv";
  static struct option opts[] = {{"reps", 1, 0, 'r'}, {"steps", 1, 0, 's'}, {"csv", 1, 0, 'c'},
                                 {"only", 1, 0, 'o'}, {"slabs", 1, 0, 'n'},
                                 {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
  for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
    switch (c) {
      case 'r': reps = atoi(optarg); break;
      case 's': steps = strtoul(optarg, NULL, 10); break;
      case 'c': csv = optarg; break;
      case 'n': per = strtoul(optarg, NULL, 10); break;
      case 'o':
        if (strcmp(optarg, "cycle")) {
          fprintf(stderr, "bench-region: --only takes 'cycle'\n");
          return 2;
        }
        only_cycle = 1;
        break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if (reps < 1 || reps > 100 || steps < 1 || per < 1 || per > 65536) {
    fprintf(stderr, "bench-region: --reps must be 1..100, --steps positive, --slabs 1..65536\n");
    return 2;
  }
  slab_pool *k = make_kernel();
  region_layer *L = make_layer(k);
  static const char *const cols[] = {"measure", "case", "value", "baseline", "baseline_value"};
  bench_table *t = bench_table_new("bench-region (medians)", 5, cols);
  if (!only_cycle) {
    bench_free(L, k, t, reps);
    bench_overhead(L, k, t, reps, steps);
    bench_pack(L, t, reps);
  }
  bench_cycle(L, t, reps, per);
  fprintf(stderr, "\r%60s\r", "");
  region_layer_destroy(L, NULL, NULL);
  for (int i = 0; i < nchunks; i++) free(chunks[i]);
  return bench_table_finish(t, csv) ? 1 : 0;
}

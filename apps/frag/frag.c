/* frag.c: the fragmentation study (Myrmics section 6.2, Figure 4a-c).
 *
 * One process, one region. The application keeps every live pointer and, at each step, either
 * allocates a new object or frees a randomly chosen live one. Scenarios:
 *   a  192-B objects, 60% alloc / 40% free
 *   b  192-B objects, alloc probability varying in phases (alloc-heavy, then free-heavy ...)
 *   c  six sizes (64, 192, 1024, 1536, 4096, 50048 B) chosen at random, same phases as b
 * At K evenly spaced steps it records the application's live bytes (requested sizes), the
 * region pool's full / partial / empty / run / free slabs, and the number of ranges a pack of
 * the region produces, into one CSV per scenario named from --csv PATH (frag_samples_path:
 * results/frag-<s>.csv by default); a summary table goes to stdout and PATH
 * (results/frag-summary.csv). Every sample is checked against the application's own bookkeeping
 * (objects, bytes, pack coverage) and teardown checks that no address space was lost: any
 * mismatch is reported and the exit status is 1, which is what the ctest smoke test asserts.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"
#include "common/types.h"
#include "region/region.h"
#include "slab/slab.h"

#define GAS_BYTES ((size_t)16 << 30)     /* address space handed to the layer (numbers only) */
#define KERNEL_CHUNK ((size_t)16 << 20)  /* kernel pool memory, first chunk and each growth */
#define MAX_CHUNKS 256

/* ---- scenarios ---------------------------------------------------------------------- */

typedef struct scenario {
  char name;
  const char *what;
  bool phased;   /* alloc probability from phase_p, else 0.6 throughout */
  bool mixed;    /* sizes from mixed_sizes, else 192 B */
  size_t steps;  /* default step count */
} scenario;

static const scenario scenarios[] = {
    {'a', "192-B objects, 60% alloc / 40% free", false, false, 100000},
    {'b', "192-B objects, phased alloc/free probabilities", true, false, 200000},
    {'c', "6 sizes (64..50048 B), phased alloc/free probabilities", true, true, 200000},
};
#define NSCENARIOS (sizeof scenarios / sizeof scenarios[0])

static const size_t mixed_sizes[] = {64, 192, 1024, 1536, 4096, 50048};
/* Alloc probability of each phase (equal lengths): alloc-heavy and free-heavy in turn, so the
 * live size climbs, falls back, climbs higher ... and never needs to go below zero. */
static const double phase_p[] = {0.75, 0.30, 0.70, 0.35, 0.80, 0.25, 0.65, 0.40};
#define NPHASES (sizeof phase_p / sizeof phase_p[0])

/* Alloc probability at a step. */
static double alloc_probability(const scenario *sc, size_t step, size_t steps) {
  if (!sc->phased) return 0.6;
  return phase_p[(step * NPHASES) / steps];
}

/* Request size of the next allocation. */
static size_t next_size(const scenario *sc, bench_rng *r) {
  if (!sc->mixed) return 192;
  return mixed_sizes[bench_rand(r) % (sizeof mixed_sizes / sizeof mixed_sizes[0])];
}

/* Uniform double in [0, 1). */
static double rand_unit(bench_rng *r) { return (double)(bench_rand(r) >> 11) * 0x1.0p-53; }

/* ---- the kernel pool (the layer's metadata), growing in aligned_alloc chunks -------- */

typedef struct kernel {
  slab_pool *pool;
  void *chunk[MAX_CHUNKS];
  size_t nchunks;
} kernel;

/* slab_grow_fn: one more chunk of at least min_bytes. */
static int kernel_grow(void *ctx, size_t min_bytes, uintptr_t *addr, size_t *len) {
  kernel *k = ctx;
  size_t n = ah_round_up(min_bytes > KERNEL_CHUNK ? min_bytes : KERNEL_CHUNK, AH_SLAB_SIZE);
  void *m = k->nchunks < MAX_CHUNKS ? aligned_alloc(AH_SLAB_SIZE, n) : NULL;
  if (!m) return ENOMEM;
  k->chunk[k->nchunks++] = m;
  *addr = (uintptr_t)m;
  *len = n;
  return 0;
}

static int kernel_open(kernel *k) {
  memset(k, 0, sizeof *k);
  void *m = aligned_alloc(AH_SLAB_SIZE, KERNEL_CHUNK);
  if (!m) return ENOMEM;
  k->chunk[k->nchunks++] = m;
  slab_config cfg = slab_config_default();
  cfg.grow = kernel_grow;
  cfg.grow_ctx = k;
  return slab_pool_create_self_hosted(&k->pool, m, KERNEL_CHUNK, &cfg);
}

static void kernel_close(kernel *k) {
  if (k->pool) slab_pool_destroy(k->pool, NULL, NULL);
  for (size_t i = 0; i < k->nchunks; i++) free(k->chunk[i]);
  k->nchunks = 0;
}

/* ---- the application's live objects ------------------------------------------------- */

typedef struct live_set {
  uintptr_t *addr;
  size_t *size;
  size_t n, cap;
  size_t bytes; /* sum of requested sizes */
} live_set;

static int live_push(live_set *l, uintptr_t addr, size_t size) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 4096;
    uintptr_t *a = realloc(l->addr, cap * sizeof *a);
    if (a) l->addr = a;
    size_t *s = realloc(l->size, cap * sizeof *s);
    if (s) l->size = s;
    if (!a || !s) return ENOMEM;
    l->cap = cap;
  }
  l->addr[l->n] = addr;
  l->size[l->n++] = size;
  l->bytes += size;
  return 0;
}

/* Forget entry i (the last one takes its place). */
static void live_remove(live_set *l, size_t i) {
  l->bytes -= l->size[i];
  l->n--;
  l->addr[i] = l->addr[l->n];
  l->size[i] = l->size[l->n];
}

/* ---- one run ------------------------------------------------------------------------ */

typedef struct sample {
  size_t step, app_bytes, objects;
  slab_stats pool;
  size_t pack_ranges, pack_bytes;
  double p_alloc;
} sample;

typedef struct run {
  const scenario *sc;
  size_t steps, samples;
  bench_rng rng;
  kernel k;
  region_layer *layer;
  rid_t rid;
  live_set live;
  FILE *csv;
  /* summary */
  size_t peak_bytes, peak_objects, peak_step, max_ranges;
  size_t shown_pct; /* progress last printed (percent + 1; 0: none) */
  sample last;
  double seconds;
} run;

/* Report an inconsistency or a failed call; returns 1. */
static int fail(const run *r, size_t step, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "frag: scenario %c, step %zu: ", r->sc->name, step);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  return 1;
}

/* slab_range_fn: add up a pack's bytes. */
static int add_len(void *ctx, uintptr_t addr, size_t len) {
  (void)addr;
  *(size_t *)ctx += len;
  return 0;
}

static int setup(run *r) {
  int rc = kernel_open(&r->k);
  if (rc) return fprintf(stderr, "frag: cannot create the kernel pool: %s\n", strerror(rc)), 1;
  region_config cfg = region_config_default();
  if ((rc = region_layer_create(&r->layer, &cfg, r->k.pool)) ||
      (rc = region_layer_add_range(r->layer, cfg.gas_base, GAS_BYTES)) ||
      (rc = region_layer_add_ids(r->layer, 1, 1000)) ||
      (rc = region_create(r->layer, REGION_ROOT, 0, &r->rid))) {
    fprintf(stderr, "frag: cannot set up the region layer: %s\n", strerror(rc));
    return 1;
  }
  return 0;
}

/* One application step: allocate with probability p (always when nothing is live). */
static int step_once(run *r, double p, size_t step) {
  live_set *l = &r->live;
  if (l->n == 0 || rand_unit(&r->rng) < p) {
    size_t size = next_size(r->sc, &r->rng);
    uintptr_t a;
    int rc = region_alloc(r->layer, size, r->rid, &a);
    if (rc) return fail(r, step, "region_alloc(%zu): %s", size, strerror(rc));
    if (a % AH_SLOT_ALIGN) return fail(r, step, "region_alloc returned an unaligned address");
    if (live_push(l, a, size)) return fail(r, step, "out of memory for the live set");
    return 0;
  }
  size_t i = bench_rand(&r->rng) % l->n;
  int rc = region_free_object(r->layer, l->addr[i]);
  if (rc) return fail(r, step, "region_free_object(%#lx): %s", (unsigned long)l->addr[i], strerror(rc));
  live_remove(l, i);
  return 0;
}

static int take_sample(run *r, size_t step, sample *s) {
  region_info info;
  int rc = region_get_info(r->layer, r->rid, &info);
  if (rc) return fail(r, step, "region_get_info: %s", strerror(rc));
  *s = (sample){.step = step, .app_bytes = r->live.bytes, .objects = r->live.n,
                .pool = info.pool, .p_alloc = alloc_probability(r->sc, step ? step - 1 : 0, r->steps)};
  rc = region_pack(r->layer, &r->rid, 1, NULL, 0, add_len, &s->pack_bytes, &s->pack_ranges);
  if (rc) return fail(r, step, "region_pack: %s", strerror(rc));
  return 0;
}

/* The sample agrees with what the application knows. */
static int check_sample(const run *r, const sample *s) {
  const slab_stats *p = &s->pool;
  size_t used_bytes = (p->full_slabs + p->partial_slabs + p->run_slabs) * AH_SLAB_SIZE;
  if (p->objects != s->objects)
    return fail(r, s->step, "pool holds %zu objects, the application %zu", p->objects, s->objects);
  if (s->app_bytes > p->object_bytes)
    return fail(r, s->step, "application bytes %zu > pool object bytes %zu", s->app_bytes,
                p->object_bytes);
  if (p->object_bytes - s->app_bytes >= (s->objects + 1) * AH_SLAB_SIZE)
    return fail(r, s->step, "pool object bytes %zu exceed the %zu requested by a slab per object",
                p->object_bytes, s->app_bytes);
  if ((s->objects > 0) != (s->pack_ranges > 0))
    return fail(r, s->step, "%zu objects live but pack gives %zu ranges", s->objects,
                s->pack_ranges);
  if (s->pack_bytes != used_bytes)
    return fail(r, s->step, "pack covers %zu bytes, the used slabs %zu", s->pack_bytes, used_bytes);
  return 0;
}

static void write_sample(run *r, const sample *s) {
  const slab_stats *p = &s->pool;
  fprintf(r->csv, "%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%zu,%.2f\n", s->step, s->app_bytes,
          p->full_slabs, p->partial_slabs, p->empty_slabs, s->pack_ranges, p->run_slabs,
          p->free_slabs, s->objects, p->object_bytes, s->p_alloc);
}

static int record(run *r, size_t step) {
  sample s;
  if (take_sample(r, step, &s) || check_sample(r, &s)) return 1;
  write_sample(r, &s);
  if (s.pack_ranges > r->max_ranges) r->max_ranges = s.pack_ranges;
  r->last = s;
  return 0;
}

/* "frag: scenario b  40%" on stderr every 10% of a long run, erased at the end. */
static void progress(run *r, size_t done) {
  if (r->steps < 100000) return;
  size_t pct = done * 100 / r->steps / 10 * 10;
  if (pct + 1 != r->shown_pct) fprintf(stderr, "\rfrag: scenario %c %3zu%%", r->sc->name, pct);
  r->shown_pct = pct + 1;
  if (done == r->steps) fprintf(stderr, "\r%30s\r", "");
}

static int simulate(run *r) {
  if (record(r, 0)) return 1;
  size_t next = 1;
  for (size_t step = 1; step <= r->steps; step++) {
    if (step_once(r, alloc_probability(r->sc, step - 1, r->steps), step)) return 1;
    if (r->live.bytes > r->peak_bytes) {
      r->peak_bytes = r->live.bytes;
      r->peak_step = step;
    }
    if (r->live.n > r->peak_objects) r->peak_objects = r->live.n;
    if (step * r->samples >= next * r->steps) { /* sample `next` of K is due */
      if (record(r, step)) return 1;
      progress(r, step);
      next++;
    }
  }
  return 0;
}

/* Free every live object, then the region and the layer: the region must be empty and the
 * layer must hand back exactly the address space it was given. */
static int teardown(run *r) {
  int bad = 0;
  while (r->live.n && !bad) {
    int rc = region_free_object(r->layer, r->live.addr[r->live.n - 1]);
    if (rc) bad = fail(r, r->steps, "teardown: region_free_object: %s", strerror(rc));
    else live_remove(&r->live, r->live.n - 1);
  }
  region_info info;
  if (!bad && !region_get_info(r->layer, r->rid, &info) &&
      (info.pool.objects || info.pool.full_slabs || info.pool.partial_slabs || info.pool.run_slabs))
    bad = fail(r, r->steps, "region not empty after freeing every object");
  if (!bad && region_free(r->layer, r->rid)) bad = fail(r, r->steps, "region_free failed");
  size_t back = 0;
  if (r->layer) region_layer_destroy(r->layer, add_len, &back);
  if (!bad && r->layer && back != GAS_BYTES)
    bad = fail(r, r->steps, "layer gave back %zu bytes of the %zu it was given", back, GAS_BYTES);
  r->layer = NULL;
  kernel_close(&r->k);
  free(r->live.addr);
  free(r->live.size);
  return bad;
}

static const char *const csv_header =
    "step,app_bytes,full_slabs,partial_slabs,empty_slabs,pack_ranges,run_slabs,free_slabs,"
    "objects,object_bytes,p_alloc\n";

/* The samples' file of scenario x beside the summary's: the summary's path with its ending
 * "-summary.csv" (else ".csv", else nothing) replaced by "-x.csv". */
static void frag_samples_path(char *out, size_t len, const char *summary, char x) {
  size_t n = strlen(summary);
  static const char *const endings[] = {"-summary.csv", ".csv"};
  for (int k = 0; k < 2; k++) {
    size_t e = strlen(endings[k]);
    if (n >= e && !strcmp(summary + n - e, endings[k])) {
      n -= e;
      break;
    }
  }
  snprintf(out, len, "%.*s-%c.csv", (int)n, summary, x);
}

static int run_scenario(run *r, const char *summary) {
  char path[4096];
  frag_samples_path(path, sizeof path, summary, r->sc->name);
  r->csv = fopen(path, "w");
  if (!r->csv) return fprintf(stderr, "frag: cannot write %s: %s\n", path, strerror(errno)), 1;
  fputs(csv_header, r->csv);
  double t0 = bench_now_ns();
  int bad = setup(r) || simulate(r);
  r->seconds = (bench_now_ns() - t0) / 1e9;
  bad |= teardown(r);
  if (fclose(r->csv)) {
    fprintf(stderr, "frag: error writing %s\n", path);
    bad = 1;
  }
  if (!bad) fprintf(stderr, "frag: scenario %c: %s\n", r->sc->name, path);
  return bad;
}

/* ---- summary and command line ------------------------------------------------------- */

static const char *const summary_cols[] = {
    "scenario", "steps", "peak_objects", "peak_app_KB", "end_objects", "end_app_KB",
    "end_full", "end_partial", "end_empty", "end_run_slabs", "end_pack_ranges",
    "max_pack_ranges", "seconds"};
#define NSUMMARY (sizeof summary_cols / sizeof summary_cols[0])

static void summary_row(bench_table *t, const run *r) {
  char c[NSUMMARY][32];
  const sample *s = &r->last;
  snprintf(c[0], 32, "%c", r->sc->name);
  snprintf(c[1], 32, "%zu", r->steps);
  snprintf(c[2], 32, "%zu", r->peak_objects);
  snprintf(c[3], 32, "%.1f", r->peak_bytes / 1024.0);
  snprintf(c[4], 32, "%zu", s->objects);
  snprintf(c[5], 32, "%.1f", s->app_bytes / 1024.0);
  snprintf(c[6], 32, "%zu", s->pool.full_slabs);
  snprintf(c[7], 32, "%zu", s->pool.partial_slabs);
  snprintf(c[8], 32, "%zu", s->pool.empty_slabs);
  snprintf(c[9], 32, "%zu", s->pool.run_slabs);
  snprintf(c[10], 32, "%zu", s->pack_ranges);
  snprintf(c[11], 32, "%zu", r->max_ranges);
  snprintf(c[12], 32, "%.2f", r->seconds);
  const char *cells[NSUMMARY];
  for (size_t i = 0; i < NSUMMARY; i++) cells[i] = c[i];
  bench_table_row(t, cells);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: frag [--scenario a|b|c|all] [--steps N] [--samples K] [--seed S] [--csv PATH]\n"
          "  Fragmentation study (Myrmics section 6.2, Figure 4a-c): random alloc/free in one\n"
          "  region; records live application bytes, full/partial/empty slabs and pack ranges.\n"
          "    a  192-B objects, 60%% alloc / 40%% free             (default %zu steps)\n"
          "    b  192-B objects, phased alloc/free probabilities    (default %zu steps)\n"
          "    c  64/192/1024/1536/4096/50048 B, phased              (default %zu steps)\n"
          "  --scenario X  which scenario (default all)\n"
          "  --steps N     steps per scenario (default: per scenario, above)\n"
          "  --samples K   sample points per scenario (default 400)\n"
          "  --seed S      random seed (default 1)\n"
          "  --csv PATH    the summary table's CSV (default results/frag-summary.csv); each\n"
          "                scenario's samples go beside it, to PATH with its ending -summary.csv\n"
          "                (else .csv) replaced by -<x>.csv: results/frag-a.csv by default,\n"
          "                out/run.csv gives out/run-a.csv\n"
          "  Exits 1 if the region's statistics ever disagree with the application's.\n",
          scenarios[0].steps, scenarios[1].steps, scenarios[2].steps);
}

typedef struct options {
  const char *which, *csv;
  size_t steps, samples;
  uint64_t seed;
} options;

static bool parse_size(const char *s, size_t *v) {
  char *end;
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno || end == s || *end || s[0] == '-') return false;
  *v = (size_t)x;
  return true;
}

/* 0: run; 1: error; -1: --help shown. */
static int parse_options(int argc, char **argv, options *o) {
  *o = (options){.which = "all", .csv = "results/frag-summary.csv", .samples = 400, .seed = 1};
  static struct option opts[] = {{"scenario", 1, 0, 'x'}, {"steps", 1, 0, 'n'},
                                 {"samples", 1, 0, 'k'},  {"seed", 1, 0, 's'},
                                 {"csv", 1, 0, 'c'},      {"help", 0, 0, 'h'},
                                 {"out", 1, 0, 'o'},      {0, 0, 0, 0}};
  size_t seed = 1;
  for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
    bool ok = true;
    switch (c) {
      case 'x': o->which = optarg; break;
      case 'n': ok = parse_size(optarg, &o->steps) && o->steps > 0; break;
      case 'k': ok = parse_size(optarg, &o->samples) && o->samples > 0; break;
      case 's': ok = parse_size(optarg, &seed); o->seed = seed; break;
      case 'c': o->csv = optarg; break;
      case 'o':
        return fprintf(stderr, "frag: --out DIR is now --csv PATH (--csv DIR/frag-summary.csv "
                               "writes the files --out DIR wrote)\n"), 1;
      case 'h': usage(stdout); return -1;
      default: usage(stderr); return 1;
    }
    if (!ok) return fprintf(stderr, "frag: bad value '%s' (a positive integer)\n", optarg), 1;
  }
  if (optind < argc) return fprintf(stderr, "frag: unexpected argument '%s'\n", argv[optind]), 1;
  bool known = !strcmp(o->which, "all") || (strlen(o->which) == 1 && strchr("abc", o->which[0]));
  if (!known) return fprintf(stderr, "frag: unknown scenario '%s' (a, b, c or all)\n", o->which), 1;
  return 0;
}

/* mkdir -p of the directory a file goes to */
static int make_dirs(const char *file) {
  char p[4096];
  snprintf(p, sizeof p, "%s", file);
  char *slash = strrchr(p, '/');
  if (!slash || slash == p) return 0; /* the current or the root directory */
  *slash = 0;
  for (char *c = p + 1; *c; c++) {
    if (*c != '/') continue;
    *c = 0;
    mkdir(p, 0777);
    *c = '/';
  }
  if (mkdir(p, 0777) && errno != EEXIST)
    return fprintf(stderr, "frag: cannot create %s: %s\n", p, strerror(errno)), 1;
  return 0;
}

int main(int argc, char **argv) {
  options o;
  int rc = parse_options(argc, argv, &o);
  if (rc) return rc < 0 ? 0 : 2;
  if (make_dirs(o.csv)) return 1;
  bench_table *tab = bench_table_new("frag: one region, random alloc/free (Myrmics Fig. 4a-c)",
                                     (int)NSUMMARY, summary_cols);
  int bad = 0;
  for (size_t i = 0; i < NSCENARIOS && !bad; i++) {
    const scenario *sc = &scenarios[i];
    if (strcmp(o.which, "all") && o.which[0] != sc->name) continue;
    static run r;
    r = (run){.sc = sc, .steps = o.steps ? o.steps : sc->steps, .samples = o.samples,
              .rng = {o.seed * 0x9e3779b97f4a7c15ull + (uint64_t)sc->name}};
    if (r.samples > r.steps) r.samples = r.steps;
    bad = run_scenario(&r, o.csv);
    if (!bad) summary_row(tab, &r);
  }
  if (bench_table_finish(tab, bad ? NULL : o.csv)) bad = 1;
  return bad ? 1 : 0;
}

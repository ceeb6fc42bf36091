/* bench_frag.c: what fragmentation costs the schedulers (issue 32). Three patterns, each timed
 * against its number of fragments in one run:
 *
 *   ids      worker 0 makes 2F regions and frees every other one (F free-ID fragments, and as
 *            many holes in the free address space), then times rounds of {sys_ralloc, two
 *            sys_alloc of 64 B, sys_rfree}; F = 0 is the unfragmented baseline, measured in the
 *            same run. The building itself (2F rallocs, F rfrees) is timed per request too.
 *   exhaust  every worker fills its own region with objects of --size bytes until the GAS is
 *            exhausted (ENOMEM), frees every other object (one hole each), then allocates half
 *            of them again and times that (per worker, and the slowest single call). Run it
 *            with a small GAS (ANTHEAP_GAS_SIZE_MIB=64 ANTHEAP_BOOT_PAGES=4
 *            ANTHEAP_REFILL_PAGES=4): the number of holes is set by the GAS and the size.
 *   move     worker 0 builds a region whose live objects lie in F separate ranges (2F objects
 *            of one slab, every other one freed), writes a pattern into each, sends it to
 *            worker 1, which checks every object and frees the region; the memory the region
 *            held must go back to the OS (RssShmem on a shared GAS, RssAnon on a private one;
 *            with --antheap-retain 0, which this benchmark sets unless ANTHEAP_RETAIN is set).
 *
 * Each pattern runs with the allocation cache on and off (--cache both, the default); the
 * cache is switched at run time (antheap_debug_set_cache), so both run side by side. Every
 * object and region is checked (distinct, writable, the pattern intact after the move); a
 * failure makes the exit status 1. One table, printed and written as CSV (--csv PATH): a row
 * per pattern, cache setting and fragment count, with the time per request (median over
 * rounds, and mean) and its ratio to the pattern's first row of that cache setting.
 *
 * Run: mpirun -np 3 bench-frag [--pattern ids|exhaust|move|all] [--frags 100,1000,...]
 *                              [--rounds R] [--size B] [--cache on|off|both] [--csv PATH]
 *      (scripts/bench-frag runs the sweep of the issue and plots it)
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "antheap.h"
#include "bench.h"
#include "worker/debug.h"

#define MAX_FRAGS 16
#define MAX_ROUNDS 100000
#define SLAB 4096
#define BALLOC_MAX (1 << 20)

static int me, nworkers, failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "bench-frag: worker %d: FAILED: ", me);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  failures++;
}

/* ---- options ------------------------------------------------------------------------------ */

typedef struct {
  bool ids, exhaust, move;
  size_t frags[MAX_FRAGS];
  int nfrags;
  int rounds;
  size_t size;
  bool cache_on, cache_off;
  const char *csv;
} options;

static void usage(FILE *f) {
  fprintf(f,
          "usage: mpirun -np N bench-frag [--pattern ids|exhaust|move|all] [--frags F1,F2,...]\n"
          "                               [--rounds R] [--size B] [--cache on|off|both]\n"
          "                               [--csv PATH]\n"
          "  What fragmentation costs the schedulers (issue 32), per request, against the number\n"
          "  of fragments:\n"
          "  ids      worker 0: 2F regions, every other one freed (F free-ID fragments), then\n"
          "           rounds of {sys_ralloc, 2 sys_alloc, sys_rfree}; F = 0 is the baseline\n"
          "  exhaust  every worker fills the GAS with --size B objects, frees every other one and\n"
          "           allocates half again (run with ANTHEAP_GAS_SIZE_MIB=64 and small refills)\n"
          "  move     worker 0 builds a region of F separate ranges, sends it to worker 1, which\n"
          "           checks every object and frees it: its pages must go back to the OS\n"
          "  --frags LIST   fragment counts (default 100,1000,10000,30000,100000; move:\n"
          "                 the same; exhaust ignores it)\n"
          "  --rounds R     timed rounds per point (default 2000)\n"
          "  --size B       exhaust: object size (default 4096)\n"
          "  --cache M      on, off or both (default both: the cache switched at run time)\n"
          "  --csv PATH     the table as CSV (default results/bench-frag.csv)\n"
          "Needs 1 worker for ids, 2 for move. The exit status is 1 on any failed check.\n"
          BENCH_ANTHEAP_HELP);
}

static int parse_frags(const char *s, options *o) {
  o->nfrags = 0;
  while (*s) {
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || o->nfrags == MAX_FRAGS || v > 10000000ull) return -1;
    o->frags[o->nfrags++] = (size_t)v;
    s = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return -1;
  }
  return o->nfrags ? 0 : -1;
}

static int parse(int argc, char **argv, options *o) {
  static const struct option lo[] = {
      {"pattern", required_argument, 0, 'p'}, {"frags", required_argument, 0, 'f'},
      {"rounds", required_argument, 0, 'r'},  {"size", required_argument, 0, 's'},
      {"cache", required_argument, 0, 'c'},   {"csv", required_argument, 0, 'o'},
      {"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
  *o = (options){.ids = true, .exhaust = true, .move = true, .rounds = 2000, .size = SLAB,
                 .cache_on = true, .cache_off = true, .csv = "results/bench-frag.csv"};
  parse_frags("100,1000,10000,30000,100000", o);
  int c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
    switch (c) {
      case 'p':
        o->ids = !strcmp(optarg, "ids") || !strcmp(optarg, "all");
        o->exhaust = !strcmp(optarg, "exhaust") || !strcmp(optarg, "all");
        o->move = !strcmp(optarg, "move") || !strcmp(optarg, "all");
        if (!o->ids && !o->exhaust && !o->move) return -1;
        break;
      case 'f': if (parse_frags(optarg, o)) return -1; break;
      case 'r': o->rounds = atoi(optarg); if (o->rounds < 1 || o->rounds > MAX_ROUNDS) return -1; break;
      case 's': o->size = (size_t)strtoull(optarg, NULL, 10); if (!o->size) return -1; break;
      case 'c':
        o->cache_on = !strcmp(optarg, "on") || !strcmp(optarg, "both");
        o->cache_off = !strcmp(optarg, "off") || !strcmp(optarg, "both");
        if (!o->cache_on && !o->cache_off) return -1;
        break;
      case 'o': o->csv = optarg; break;
      case 'h': return 1;
      default: return -1;
    }
  }
  return optind == argc ? 0 : -1;
}

/* ---- the table ---------------------------------------------------------------------------- */

static const char *const cols[] = {"pattern", "cache",      "share",      "workers",
                                   "frags",   "requests",   "us_request", "us_request_mean",
                                   "ratio",   "setup_us_request", "seconds", "detail"};
#define NCOLS (int)(sizeof cols / sizeof cols[0])
static bench_table *table;
static bool shared_gas; /* worker 0's view: does worker 1 share its GAS memory? */

typedef struct {
  const char *pattern;
  bool cache;
  size_t frags, requests;
  double us, us_mean, base_us, setup_us, seconds;
  char detail[160];
} row;

static void add_row(const row *r) {
  char c[NCOLS][64];
  snprintf(c[0], 64, "%s", r->pattern);
  snprintf(c[1], 64, "%s", r->cache ? "on" : "off");
  snprintf(c[2], 64, "%s", shared_gas ? "host" : "none");
  snprintf(c[3], 64, "%d", nworkers);
  snprintf(c[4], 64, "%zu", r->frags);
  snprintf(c[5], 64, "%zu", r->requests);
  snprintf(c[6], 64, "%.3f", r->us);
  snprintf(c[7], 64, "%.3f", r->us_mean);
  snprintf(c[8], 64, "%.2f", r->base_us > 0 ? r->us / r->base_us : 1.0);
  snprintf(c[9], 64, "%.3f", r->setup_us);
  snprintf(c[10], 64, "%.3f", r->seconds);
  const char *cells[NCOLS];
  for (int i = 0; i < NCOLS - 1; i++) cells[i] = c[i];
  cells[NCOLS - 1] = r->detail;
  bench_table_row(table, cells);
}

static double now_us(void) { return bench_now_ns() / 1000.0; }

static void set_cache(bool on) {
  if (antheap_debug_set_cache(on)) fail("antheap_debug_set_cache(%d): %s", on, sys_strerror(errno));
}

/* ---- ids: free-ID fragments ----------------------------------------------------------------- */

/* One round: a region, two objects, the region freed. Its time in us, or -1 on failure. */
static double ids_round(void) {
  double t0 = now_us();
  rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  if (!r) return fail("round: sys_ralloc: %s", sys_strerror(errno)), -1;
  char *a = sys_alloc(64, r), *b = sys_alloc(64, r);
  if (!a || !b || a == b) return fail("round: sys_alloc: %s", sys_strerror(errno)), -1;
  a[0] = b[63] = 1;
  if (sys_rfree(r)) return fail("round: sys_rfree: %s", sys_strerror(errno)), -1;
  return now_us() - t0;
}

/* 2f regions, every other one freed: the kept ones in *kept (f of them). Time per request. */
static double ids_build(size_t f, rid_t **kept) {
  rid_t *all = malloc((2 * f + 1) * sizeof *all);
  *kept = malloc((f + 1) * sizeof **kept);
  if (!all || !*kept) return fail("no memory"), 0;
  double t0 = now_us();
  for (size_t i = 0; i < 2 * f; i++)
    if (!(all[i] = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT)))
      return fail("build: sys_ralloc %zu of %zu: %s", i, 2 * f, sys_strerror(errno)), 0;
  for (size_t i = 0; i < f; i++) {
    if (sys_rfree(all[2 * i])) fail("build: sys_rfree: %s", sys_strerror(errno));
    (*kept)[i] = all[2 * i + 1];
  }
  double per = f ? (now_us() - t0) / (3.0 * (double)f) : 0;
  free(all);
  return per;
}

static void ids_point(const options *o, bool cache, size_t f, double *base) {
  rid_t *kept;
  double t0 = now_us(), setup = ids_build(f, &kept);
  double *v = malloc((size_t)o->rounds * sizeof *v), sum = 0;
  for (int i = 0; v && i < o->rounds; i++) sum += v[i] = ids_round();
  row r = {.pattern = "ids", .cache = cache, .frags = f, .requests = 4, .setup_us = setup};
  r.us = v ? bench_median(v, (size_t)o->rounds) / 4.0 : 0;
  r.us_mean = sum / o->rounds / 4.0;
  if (*base < 0) *base = r.us;
  r.base_us = *base;
  for (size_t i = 0; i < f; i++)
    if (sys_rfree(kept[i])) fail("teardown: sys_rfree: %s", sys_strerror(errno));
  r.seconds = (now_us() - t0) / 1e6;
  snprintf(r.detail, sizeof r.detail, "round %.1f us (median of %d)", r.us * 4, o->rounds);
  add_row(&r);
  free(v);
  free(kept);
}

static void pattern_ids(const options *o) {
  for (int c = 0; c < 2; c++) {
    bool cache = c == 0;
    if ((cache && !o->cache_on) || (!cache && !o->cache_off)) continue;
    if (me == 0) {
      set_cache(cache);
      double base = -1;
      ids_point(o, cache, 0, &base);
      for (int i = 0; i < o->nfrags; i++) ids_point(o, cache, o->frags[i], &base);
      set_cache(true);
    }
    sys_barrier();
  }
}

/* ---- exhaust: re-allocating half of a full GAS ----------------------------------------------- */

typedef struct {
  double seconds, worst_us;
  size_t filled, holes, again;
} exhaust_result;

/* Fill region r until ENOMEM; the objects in *objs. */
static size_t exhaust_fill(rid_t r, size_t size, void ***objs) {
  size_t n = 0, cap = 1024;
  void **v = malloc(cap * sizeof *v);
  for (;;) {
    if (n == cap) {
      void **w = realloc(v, 2 * cap * sizeof *v);
      if (!w) break;
      v = w, cap *= 2;
    }
    void *p = sys_alloc(size, r);
    if (!p) {
      if (errno != ENOMEM) fail("fill: sys_alloc: %s", sys_strerror(errno));
      break;
    }
    *(size_t *)p = n;
    v[n++] = p;
  }
  *objs = v;
  return n;
}

static exhaust_result exhaust_once(const options *o) {
  exhaust_result x = {0};
  rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  if (!r) return fail("exhaust: sys_ralloc: %s", sys_strerror(errno)), x;
  void **v;
  x.filled = exhaust_fill(r, o->size, &v);
  sys_barrier(); /* everybody full: the GAS is exhausted */
  for (size_t i = 0; i < x.filled; i += 2, x.holes++)
    if (sys_free(v[i])) fail("exhaust: sys_free: %s", sys_strerror(errno));
  sys_barrier(); /* every hole made (and every cache flushed) */
  double t0 = now_us();
  for (size_t i = 0; i < x.filled; i += 2) {
    double t1 = now_us();
    void *p = sys_alloc(o->size, r);
    double dt = now_us() - t1;
    if (dt > x.worst_us) x.worst_us = dt;
    if (!p) {
      if (errno != ENOMEM) fail("exhaust: sys_alloc again: %s", sys_strerror(errno));
      v[i] = NULL;
      continue;
    }
    *(size_t *)p = i;
    v[i] = p;
    x.again++;
  }
  x.seconds = (now_us() - t0) / 1e6;
  for (size_t i = 0; i < x.filled; i++)
    if (v[i] && *(size_t *)v[i] != i) fail("exhaust: object %zu overwritten", i);
  if (sys_rfree(r)) fail("exhaust: sys_rfree: %s", sys_strerror(errno));
  free(v);
  sys_barrier();
  return x;
}

static void pattern_exhaust(const options *o) {
  double base = -1;
  for (int c = 0; c < 2; c++) {
    bool cache = c == 0;
    if ((cache && !o->cache_on) || (!cache && !o->cache_off)) continue;
    set_cache(cache);
    exhaust_result x = exhaust_once(o);
    set_cache(true);
    double mine[4] = {x.seconds, x.worst_us, (double)x.holes, (double)x.again}, most[4], sum[4];
    MPI_Reduce(mine, most, 4, MPI_DOUBLE, MPI_MAX, 0, sys_comm());
    MPI_Reduce(mine, sum, 4, MPI_DOUBLE, MPI_SUM, 0, sys_comm());
    if (me != 0) continue;
    row r = {.pattern = "exhaust", .cache = cache, .frags = (size_t)sum[2],
             .requests = (size_t)sum[3], .seconds = most[0]};
    r.us = sum[3] > 0 ? sum[0] * 1e6 / sum[3] : 0; /* the workers' time per allocation */
    r.us_mean = r.us;
    if (base < 0) base = r.us;
    r.base_us = base;
    snprintf(r.detail, sizeof r.detail,
             "slowest worker %.3f s; slowest call %.0f us; %.0f of %.0f holes refilled; size %zu",
             most[0], most[1], sum[3], sum[2], o->size);
    add_row(&r);
  }
}

/* ---- move: a region of F separate ranges ----------------------------------------------------- */

/* kB of a /proc/self/status field (RssShmem, RssAnon). */
static long status_kb(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t n = strlen(field);
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, field, n) && line[n] == ':') v = atol(line + n + 1);
  if (f) fclose(f);
  return v;
}

/* What a worker holds of the GAS: shared pages (a shared GAS) and private ones (a private GAS). */
static long resident_kb(void) { return status_kb("RssShmem") + status_kb("RssAnon"); }

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return (x > y) - (x < y);
}

/* Worker 0: a region whose f live objects of one slab each lie in f separate ranges. */
static rid_t move_build(size_t f, void ***objs) {
  rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  void **all = malloc((2 * f + 1) * sizeof *all), **kept = malloc((f + 1) * sizeof *kept);
  if (!r || !all || !kept) return fail("move: set-up: %s", sys_strerror(errno)), 0;
  for (size_t done = 0; done < 2 * f;) {
    int n = 2 * f - done > BALLOC_MAX ? BALLOC_MAX : (int)(2 * f - done);
    if (sys_balloc(SLAB, r, n, all + done)) return fail("move: sys_balloc: %s", sys_strerror(errno)), 0;
    done += (size_t)n;
  }
  /* in address order: every other one freed leaves each kept one a range of its own */
  qsort(all, 2 * f, sizeof *all, cmp_ptr);
  for (size_t i = 0; i < f; i++) {
    if (sys_free(all[2 * i])) fail("move: sys_free: %s", sys_strerror(errno));
    kept[i] = all[2 * i + 1];
    uint64_t *w = kept[i];
    w[0] = (uint64_t)(uintptr_t)kept[i] ^ 0x5a5a5a5aull;
    w[SLAB / 8 - 1] = i;
  }
  free(all);
  *objs = kept;
  return r;
}

/* What the worker that freed the region saw: its resident kB before the region existed, while
 * it held it and after sys_rfree, and the times. */
typedef struct {
  double check_s, free_s, before, held, after, ok;
} move_seen;

/* Worker 1: receive the region (its objects' addresses by MPI first), check every object, free
 * it. */
static move_seen move_receive(size_t f) {
  move_seen w = {.before = (double)resident_kb(), .ok = 0};
  int count;
  MPI_Status st;
  MPI_Probe(0, 7, sys_comm(), &st);
  MPI_Get_count(&st, MPI_UINT64_T, &count);
  void **kept = malloc(((size_t)count + 1) * sizeof *kept);
  MPI_Recv(kept, count, MPI_UINT64_T, 0, 7, sys_comm(), MPI_STATUS_IGNORE);
  rid_t got;
  if ((size_t)count != f || sys_recv(0, &got, 1, NULL, 0)) {
    if ((size_t)count == f) fail("move: sys_recv of %zu ranges: %s", f, sys_strerror(errno));
    free(kept);
    return w;
  }
  double t0 = now_us();
  w.ok = 1;
  for (size_t i = 0; i < f && w.ok; i++) {
    const uint64_t *o = kept[i];
    if (o[0] != ((uint64_t)(uintptr_t)kept[i] ^ 0x5a5a5a5aull) || o[SLAB / 8 - 1] != i) {
      fail("move: object %zu of %zu arrived changed", i, f);
      w.ok = 0;
    }
  }
  w.check_s = (now_us() - t0) / 1e6;
  w.held = (double)resident_kb();
  t0 = now_us();
  if (sys_rfree(got)) fail("move: sys_rfree: %s", sys_strerror(errno)), w.ok = 0;
  w.free_s = (now_us() - t0) / 1e6;
  w.after = (double)resident_kb();
  free(kept);
  return w;
}

/* Worker 0's row: the move, and whether the region's pages went back to the OS (all of them:
 * at most 5% and 1 MiB more resident after the free than before the region). */
static void move_row(bool cache, size_t f, double *base, double build_s, double send_s,
                     bool sent, const move_seen *w) {
  double region_kb = (double)f * SLAB / 1024.0, back_kb = w->held - w->after;
  bool given_back = w->after - w->before < region_kb * 0.05 + 1024;
  if (!given_back)
    fail("move: %zu ranges: %.0f kB more resident after sys_rfree than before the region "
         "(it held %.0f kB)", f, w->after - w->before, region_kb);
  row x = {.pattern = "move", .cache = cache, .frags = f, .requests = 1, .seconds = send_s};
  x.us = f ? send_s * 1e6 / (double)f : 0; /* the move's time per range */
  x.us_mean = x.us;
  if (*base < 0) *base = x.us;
  x.base_us = *base;
  x.setup_us = f ? build_s * 1e6 / (3.0 * (double)f) : 0;
  snprintf(x.detail, sizeof x.detail,
           "%s %.3f s; check %.3f s; rfree %.3f s; %.0f of %.0f kB given back%s",
           sent ? "send" : "SEND FAILED", send_s, w->check_s, w->free_s, back_kb, region_kb,
           given_back ? "" : " (NOT ALL)");
  add_row(&x);
}

static void move_point(bool cache, size_t f, double *base) {
  move_seen w = {0};
  if (me == 1) {
    w = move_receive(f);
    MPI_Send(&w, 6, MPI_DOUBLE, 0, 8, sys_comm());
  } else if (me == 0) {
    void **kept = NULL;
    double before = (double)resident_kb(), t0 = now_us();
    rid_t r = move_build(f, &kept);
    double build_s = (now_us() - t0) / 1e6;
    MPI_Send(kept, r ? (int)f : 0, MPI_UINT64_T, 1, 7, sys_comm());
    t0 = now_us();
    bool sent = r && sys_send(1, &r, 1, NULL, 0) == 0;
    if (r && !sent) fail("move: sys_send of %zu ranges: %s", f, sys_strerror(errno));
    double send_s = (now_us() - t0) / 1e6;
    MPI_Recv(&w, 6, MPI_DOUBLE, 1, 8, sys_comm(), MPI_STATUS_IGNORE);
    if (r && !sent) { /* the region stayed here: its pages must go back all the same */
      w = (move_seen){.before = before, .held = (double)resident_kb()};
      t0 = now_us();
      if (sys_rfree(r)) fail("move: sys_rfree after the failed send: %s", sys_strerror(errno));
      w.free_s = (now_us() - t0) / 1e6;
      w.after = (double)resident_kb();
    }
    if (!w.ok && sent) fail("move of %zu ranges failed at the receiver", f);
    move_row(cache, f, base, build_s, send_s, sent, &w);
    free(kept);
  }
  sys_barrier();
}

/* The region is built with the cache off (sys_balloc straight from the scheduler: nothing is
 * touched but the objects kept), so this pattern runs once, "off". */
static void pattern_move(const options *o) {
  if (nworkers < 2) {
    if (me == 0) fprintf(stderr, "bench-frag: move needs 2 workers: skipped\n");
    return;
  }
  set_cache(false);
  double base = -1;
  for (int i = 0; i < o->nfrags; i++) move_point(false, o->frags[i], &base);
  set_cache(true);
}

/* Does worker 1 map the same GAS memory as worker 0? (A move to it copies nothing.) */
static bool gas_is_shared_with_1(void) {
  int v = nworkers > 1 ? antheap_debug_memo_applies(me == 0 ? 1 : 0) : 0;
  return v > 0;
}

int main(int argc, char **argv) {
  if (bench_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  if (!getenv("ANTHEAP_RETAIN")) setenv("ANTHEAP_RETAIN", "0", 1); /* move: pages go back */
  if (sys_init(&argc, &argv)) return 1;
  me = sys_worker_id();
  nworkers = sys_workers();
  options o;
  int pc = parse(argc, argv, &o);
  if (pc) {
    if (me == 0) usage(pc > 0 ? stdout : stderr);
    sys_finalize();
    return pc > 0 ? 0 : 2;
  }
  shared_gas = gas_is_shared_with_1();
  table = bench_table_new("bench-frag: time per request against fragments", NCOLS, cols);
  if (o.ids) pattern_ids(&o);
  if (o.exhaust) pattern_exhaust(&o);
  if (o.move) pattern_move(&o);
  int mine = failures, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, sys_comm());
  if (me == 0 && bench_table_finish(table, o.csv)) all++;
  sys_finalize();
  if (me == 0 && all) fprintf(stderr, "bench-frag: %d check(s) FAILED\n", all);
  return all ? 1 : 0;
}

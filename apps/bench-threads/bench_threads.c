/* bench_threads.c: allocation throughput of 1..N threads of one worker rank (issue 34):
 * antheap's per-thread caches (sys_init_thread, MPI_THREAD_MULTIPLE) against glibc malloc,
 * jemalloc and mimalloc on the same size mix, with and without cross-thread frees.
 *
 * Each thread runs rounds of: allocate a batch of objects (sizes from one fixed mix of 16 B to
 * 4 KiB, the sizes antheap's caches serve), write one byte of each, then free a batch: its own
 * (no cross frees), or, after a barrier of the threads, the batch its neighbour allocated in
 * that round (cross frees: every object is freed by another thread than the one that
 * allocated it). Threads stay up across repetitions (a warm-up repetition first, then --reps,
 * median reported); a repetition lasts from the first thread's start to the last one's end.
 * antheap's threads allocate in a region each. jemalloc and mimalloc are loaded with dlopen
 * (RTLD_LOCAL: they do not replace malloc for the rest of the process) through their own
 * entry points (mallocx / dallocx, mi_malloc / mi_free), from the paths found at configure time
 * or given (--jemalloc, --mimalloc: libraries carried to a machine without them); a peer that
 * does not load is left out and said so.
 *
 * By default each allocator runs all its thread counts and modes before the next one, so that
 * its row and mimalloc's were measured seconds or minutes apart. --alternate K pairs them
 * instead: at each thread count and mode the allocators take turns K times (the order rotated
 * each turn), and the ratio to mimalloc is the median of the K turns' ratios, each from two
 * measurements made one after the other; on a shared machine whose speed drifts, that ratio is
 * the allocators', not the drift's.
 *
 * Run: mpirun -np 2 bench-threads [options]: 1 scheduler + 1 worker, which measures.
 * Columns: allocator, threads, cross (0/1), ops (allocations + frees), seconds, Mops/s,
 * ns/op (per thread: seconds x threads / ops), speedup over 1 thread of the same allocator and
 * mode, throughput against mimalloc's at the same threads and mode, and (with --alternate) the
 * lowest and highest of the turns' ratios to mimalloc. */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "antheap.h"
#include "bench.h"
#include "bench_mpi.h"

#define MAX_THREADS 256
#define MAX_REPS 31
#define MAX_TURNS 31
#define NSIZES 4096

typedef struct options {
  int threads[32], nthreads; /* thread counts to run */
  int reps, batch;
  int turns; /* --alternate: turns of the allocators at each point (1: one allocator after another) */
  long rounds;
  bool quick;
  char only[128]; /* allocators to run (comma list), "" for all */
  const char *csv;
  const char *jemalloc, *mimalloc; /* the peers' libraries (default: found at configure time) */
} options;

static int wrank;

static void usage(FILE *f) {
  fprintf(f,
          "usage: mpirun -np 2 bench-threads [--threads LIST] [--rounds R] [--batch B] [--reps N]\n"
          "                                  [--alternate K] [--allocators LIST] [--quick]\n"
          "                                  [--csv PATH]\n"
          "                                  [--jemalloc LIB] [--mimalloc LIB]\n"
          "  Allocation throughput of 1..N threads of one worker rank: antheap's per-thread caches\n"
          "  (MPI_THREAD_MULTIPLE) against glibc malloc, jemalloc and mimalloc (those found at\n"
          "  build time), one size mix (16 B - 4 KiB), with and without cross-thread frees (each\n"
          "  batch freed by the neighbouring thread after a barrier). 1 scheduler + 1 worker.\n"
          "  --threads LIST     thread counts, e.g. 1,2,4,8,16 (default 1, 2, 4 ... up to the\n"
          "                     cores of the machine, and the cores themselves)\n"
          "  --rounds R         rounds per thread and repetition (default 2000)\n"
          "  --batch B          objects per round (default 256)\n"
          "  --reps N           timed repetitions after one warm-up, median (default 5, max %d)\n"
          "  --alternate K      at each thread count and mode, the allocators take turns K times\n"
          "                     (order rotated; max %d): seconds are the median of the turns, the\n"
          "                     ratio to mimalloc the median of each turn's ratio (default 1: each\n"
          "                     allocator runs all its points before the next one)\n"
          "  --allocators LIST  antheap,glibc,jemalloc,mimalloc (default all that load; a peer\n"
          "                     named here that does not load fails the run)\n"
          "  --quick            a smoke run: threads 1,2, 50 rounds, 1 repetition\n"
          "  --csv PATH         CSV output (default results/bench-threads.csv)\n"
          "  --jemalloc LIB     jemalloc's shared library (default: the one found at build time)\n"
          "  --mimalloc LIB     mimalloc's shared library (likewise)\n\n%s",
          MAX_REPS, MAX_TURNS, BENCH_ANTHEAP_HELP);
}

static int parse_threads(const char *s, options *o) {
  o->nthreads = 0;
  for (const char *p = s; *p && o->nthreads < 32;) {
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p || v < 1 || v > MAX_THREADS) return -1;
    o->threads[o->nthreads++] = (int)v;
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return -1;
  }
  return o->nthreads ? 0 : -1;
}

static void default_threads(options *o) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  o->nthreads = 0;
  for (int t = 1; t < cores && o->nthreads < 31; t *= 2) o->threads[o->nthreads++] = t;
  o->threads[o->nthreads++] = (int)(cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : cores);
}

/* ---- the allocators ---- */

typedef struct allocator {
  const char *name;
  void *(*alloc)(size_t size, rid_t region);
  void (*free)(void *p);
  bool ok;
} allocator;

static void *(*je_mallocx)(size_t, int);
static void (*je_dallocx)(void *, int);
static void *(*mi_malloc_fn)(size_t);
static void (*mi_free_fn)(void *);

static void *a_antheap(size_t size, rid_t r) { return sys_alloc(size, r); }
static void f_antheap(void *p) { sys_free(p); }
static void *a_glibc(size_t size, rid_t r) { (void)r; return malloc(size); }
static void f_glibc(void *p) { free(p); }
static void *a_je(size_t size, rid_t r) { (void)r; return je_mallocx(size, 0); }
static void f_je(void *p) { je_dallocx(p, 0); }
static void *a_mi(size_t size, rid_t r) { (void)r; return mi_malloc_fn(size); }
static void f_mi(void *p) { mi_free_fn(p); }

enum { ANTHEAP, GLIBC, JEMALLOC, MIMALLOC }; /* allocators[]'s rows; the peers loaded are last */
static allocator allocators[] = {
    [ANTHEAP] = {"antheap", a_antheap, f_antheap, true},
    [GLIBC] = {"glibc", a_glibc, f_glibc, true},
    [JEMALLOC] = {"jemalloc", a_je, f_je, false},
    [MIMALLOC] = {"mimalloc", a_mi, f_mi, false},
};
#define NALLOC (int)(sizeof allocators / sizeof allocators[0])

/* Every name of a comma list is an allocator's (allocators[]), none empty. */
static bool known_allocators(const char *list) {
  for (const char *p = list;; p++) {
    size_t len = strcspn(p, ",");
    bool known = false;
    for (int i = 0; i < NALLOC; i++)
      known |= len == strlen(allocators[i].name) && !strncmp(p, allocators[i].name, len);
    if (!known) return false;
    p += len;
    if (!*p) return true;
  }
}

static int parse(int argc, char **argv, void *out) {
  options *o = out;
  static const struct option opts[] = {
      {"help", no_argument, 0, 'h'},           {"threads", required_argument, 0, 't'},
      {"rounds", required_argument, 0, 'r'},   {"batch", required_argument, 0, 'b'},
      {"reps", required_argument, 0, 'n'},     {"allocators", required_argument, 0, 'a'},
      {"quick", no_argument, 0, 'q'},          {"csv", required_argument, 0, 'c'},
      {"jemalloc", required_argument, 0, 'J'}, {"mimalloc", required_argument, 0, 'M'},
      {"alternate", required_argument, 0, 'k'}, {0, 0, 0, 0}};
  *o = (options){.reps = 5, .turns = 1, .batch = 256, .rounds = 2000,
                 .csv = "results/bench-threads.csv"};
#ifdef BENCH_JEMALLOC
  o->jemalloc = BENCH_JEMALLOC;
#endif
#ifdef BENCH_MIMALLOC
  o->mimalloc = BENCH_MIMALLOC;
#endif
  default_threads(o);
  for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
    switch (c) {
      case 'h': if (wrank == 0) usage(stdout); return 0;
      case 't':
        if (parse_threads(optarg, o)) {
          if (wrank == 0) fprintf(stderr, "bench-threads: bad --threads '%s'\n", optarg);
          return 2;
        }
        break;
      case 'r': o->rounds = atol(optarg); break;
      case 'b': o->batch = atoi(optarg); break;
      case 'n': o->reps = atoi(optarg); break;
      case 'k': o->turns = atoi(optarg); break;
      case 'a':
        if (strlen(optarg) >= sizeof o->only || !known_allocators(optarg)) {
          if (wrank == 0)
            fprintf(stderr, "bench-threads: bad --allocators '%s' (a comma list of antheap, "
                            "glibc, jemalloc, mimalloc)\n", optarg);
          return 2;
        }
        snprintf(o->only, sizeof o->only, "%s", optarg);
        break;
      case 'q': o->quick = true; break;
      case 'c': o->csv = optarg; break;
      case 'J': o->jemalloc = optarg; break;
      case 'M': o->mimalloc = optarg; break;
      default: if (wrank == 0) usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    if (wrank == 0) fprintf(stderr, "bench-threads: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  if (o->quick) {
    o->nthreads = 2, o->threads[0] = 1, o->threads[1] = 2;
    o->rounds = 50, o->reps = 1;
  }
  if (o->reps < 1 || o->reps > MAX_REPS || o->batch < 1 || o->batch > 65536 || o->rounds < 1 ||
      o->turns < 1 || o->turns > MAX_TURNS) {
    if (wrank == 0)
      fprintf(stderr, "bench-threads: need --reps 1..%d, --alternate 1..%d, --batch 1..65536, "
                      "--rounds >= 1\n", MAX_REPS, MAX_TURNS);
    return 2;
  }
  return -1;
}


/* A peer library (its path from configure time), and two of its symbols. */
static bool load_peer(const char *path, const char *a, const char *f, void **pa, void **pf) {
  if (!path || !*path) return false;
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "bench-threads: %s does not load (%s)%s\n", path, dlerror(),
            strstr(path, "jemalloc") ? " (a jemalloc built for initial-exec TLS loads with "
                                       "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=65536)"
                                     : "");
    return false;
  }
  *pa = dlsym(h, a);
  *pf = dlsym(h, f);
  return *pa && *pf;
}

static bool wanted(const options *o, const char *name) {
  if (!o->only[0]) return true;
  char list[130];
  snprintf(list, sizeof list, ",%s,", o->only);
  char key[40];
  snprintf(key, sizeof key, ",%s,", name);
  return strstr(list, key) != NULL;
}

/* The peers wanted; one that does not load is left out, unless --allocators names it: then
 * the run fails (-1) rather than print a table without it. */
static int load_peers(const options *o) {
  if (wanted(o, "jemalloc"))
    allocators[JEMALLOC].ok = load_peer(o->jemalloc, "mallocx", "dallocx", (void **)&je_mallocx,
                                 (void **)&je_dallocx);
  if (wanted(o, "mimalloc"))
    allocators[MIMALLOC].ok = load_peer(o->mimalloc, "mi_malloc", "mi_free", (void **)&mi_malloc_fn,
                                 (void **)&mi_free_fn);
  int rc = 0;
  for (int i = JEMALLOC; i < NALLOC; i++) {
    if (allocators[i].ok || !wanted(o, allocators[i].name)) continue;
    if (o->only[0]) {
      fprintf(stderr, "bench-threads: --allocators asks for %s, which is not available (its "
                      "library: --%s LIB)\n", allocators[i].name, allocators[i].name);
      rc = -1;
    } else {
      fprintf(stderr, "bench-threads: %s not available: left out\n", allocators[i].name);
    }
  }
  return rc;
}

/* ---- the threads ---- */

static size_t sizes[NSIZES];

/* 60% 16-128 B, 30% 129-512 B, 10% 513 B - 4 KiB: the same for every allocator and thread. */
static void make_sizes(void) {
  bench_rng r = {0x5eed1234abcdull};
  for (int i = 0; i < NSIZES; i++) {
    uint64_t x = bench_rand(&r) % 10;
    sizes[i] = x < 6 ? 16 + bench_rand(&r) % 113 : x < 9 ? 129 + bench_rand(&r) % 384
                                                        : 513 + bench_rand(&r) % 3584;
  }
}

typedef struct run run;
typedef struct worker {
  run *R;
  int t;
  rid_t region;
  void **slot[2]; /* this round's batch (parity), freed by us or by the previous thread */
  long failures;
  double start[MAX_REPS + 1], end[MAX_REPS + 1]; /* each repetition, by this thread's clock */
  pthread_t th;
} worker;

struct run {
  const allocator *a;
  const options *o;
  int T;
  bool cross;
  worker *w;
  pthread_barrier_t rep, round; /* rep: T + the main thread; round: the T threads */
};

static void one_round(worker *w, long r) {
  run *R = w->R;
  int B = R->o->batch;
  void **out = w->slot[r & 1];
  size_t base = (size_t)(r * B + w->t * 7);
  for (int i = 0; i < B; i++) {
    char *p = R->a->alloc(sizes[(base + (size_t)i) & (NSIZES - 1)], w->region);
    if (!p) w->failures++;
    else *p = (char)i;
    out[i] = p;
  }
  void **in = out;
  if (R->cross) {
    pthread_barrier_wait(&R->round);
    in = R->w[(w->t + 1) % R->T].slot[r & 1];
  }
  for (int i = 0; i < B; i++)
    if (in[i]) R->a->free(in[i]);
}

static void *thread_main(void *arg) {
  worker *w = arg;
  for (int rep = 0; rep <= w->R->o->reps; rep++) {
    pthread_barrier_wait(&w->R->rep); /* start */
    w->start[rep] = bench_now_ns();
    for (long r = 0; r < w->R->o->rounds; r++) one_round(w, r);
    w->end[rep] = bench_now_ns();
    pthread_barrier_wait(&w->R->rep); /* end */
  }
  return NULL;
}

/* One allocator, T threads, one mode: the median seconds of a repetition (-1 on failure). */
static double measure(const allocator *a, const options *o, int T, bool cross) {
  run R = {.a = a, .o = o, .T = T, .cross = cross, .w = calloc((size_t)T, sizeof(worker))};
  pthread_barrier_init(&R.rep, NULL, (unsigned)T + 1);
  pthread_barrier_init(&R.round, NULL, (unsigned)T);
  bool ah = !strcmp(a->name, "antheap");
  for (int t = 0; t < T; t++) {
    worker *w = &R.w[t];
    *w = (worker){.R = &R, .t = t};
    w->slot[0] = calloc((size_t)o->batch, sizeof(void *));
    w->slot[1] = calloc((size_t)o->batch, sizeof(void *));
    if (ah && !(w->region = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT)))
      fprintf(stderr, "bench-threads: sys_ralloc: %s\n", sys_strerror(errno)), w->failures++;
    pthread_create(&w->th, NULL, thread_main, w);
  }
  for (int rep = 0; rep <= o->reps; rep++) {
    pthread_barrier_wait(&R.rep);
    pthread_barrier_wait(&R.rep);
  }
  double times[MAX_REPS + 1]; /* a repetition: first start to last end, over the threads */
  for (int t = 0; t < T; t++) pthread_join(R.w[t].th, NULL);
  for (int rep = 0; rep <= o->reps; rep++) {
    double a = R.w[0].start[rep], b = R.w[0].end[rep];
    for (int t = 1; t < T; t++) {
      if (R.w[t].start[rep] < a) a = R.w[t].start[rep];
      if (R.w[t].end[rep] > b) b = R.w[t].end[rep];
    }
    times[rep] = (b - a) * 1e-9;
  }
  long failures = 0;
  for (int t = 0; t < T; t++) {
    failures += R.w[t].failures;
    if (ah && R.w[t].region && sys_rfree(R.w[t].region)) failures++;
    free(R.w[t].slot[0]);
    free(R.w[t].slot[1]);
  }
  pthread_barrier_destroy(&R.rep);
  pthread_barrier_destroy(&R.round);
  free(R.w);
  if (failures) {
    fprintf(stderr, "bench-threads: %s, %d threads: %ld allocations failed\n", a->name, T, failures);
    return -1;
  }
  return bench_median(times + 1, (size_t)o->reps); /* times[0]: the warm-up */
}

/* ---- the table ---- */

typedef struct result {
  int a, T;
  bool cross;
  double s;
  bool paired;          /* --alternate: vs_mi, lo and hi are the turns' ratios to mimalloc */
  double vs_mi, lo, hi;
} result;

static double seconds_of(const result *res, int n, int a, int T, bool cross) {
  for (int i = 0; i < n; i++)
    if (res[i].a == a && res[i].T == T && res[i].cross == cross) return res[i].s;
  return -1;
}

static int report(const options *o, const result *res, int n) {
  static const char *cols[] = {"allocator",  "threads",   "cross",   "ops",
                               "seconds",    "mops_per_s", "ns_per_op", "speedup",
                               "vs_mimalloc", "vs_mimalloc_lo", "vs_mimalloc_hi"};
  enum { NCOLS = sizeof cols / sizeof cols[0] };
  bench_table *tb = bench_table_new("allocation throughput (ops: allocations + frees)", NCOLS, cols);
  for (int i = 0; i < n; i++) {
    const result *r = &res[i];
    double ops = 2.0 * (double)r->T * (double)o->rounds * o->batch;
    double one = seconds_of(res, n, r->a, 1, r->cross);
    double mi = seconds_of(res, n, MIMALLOC, r->T, r->cross);
    char c[NCOLS][48];
    snprintf(c[0], 48, "%s", allocators[r->a].name);
    snprintf(c[1], 48, "%d", r->T);
    snprintf(c[2], 48, "%d", r->cross);
    snprintf(c[3], 48, "%.0f", ops);
    snprintf(c[4], 48, "%.4f", r->s);
    snprintf(c[5], 48, "%.1f", ops / r->s * 1e-6);
    snprintf(c[6], 48, "%.2f", r->s * r->T / ops * 1e9);
    if (one > 0) snprintf(c[7], 48, "%.2f", (ops / r->s) / (ops / r->T / one));
    else snprintf(c[7], 48, "-");
    /* > 1: faster than mimalloc */
    if (r->paired) snprintf(c[8], 48, "%.2f", r->vs_mi);
    else if (mi > 0) snprintf(c[8], 48, "%.2f", mi / r->s);
    else snprintf(c[8], 48, "-");
    snprintf(c[9], 48, r->paired ? "%.2f" : "-", r->lo);
    snprintf(c[10], 48, r->paired ? "%.2f" : "-", r->hi);
    const char *cells[NCOLS];
    for (int k = 0; k < NCOLS; k++) cells[k] = c[k];
    bench_table_row(tb, cells);
  }
  return bench_table_finish(tb, o->csv);
}

/* ---- the order of the measurements ---- */

static bool runs(const options *o, int a) {
  return allocators[a].ok && wanted(o, allocators[a].name);
}

static double measure_said(int a, const options *o, int T, bool cross, int turn) {
  double s = measure(&allocators[a], o, T, cross);
  if (turn < 0)
    fprintf(stderr, "bench-threads: %s, %d threads, cross %d: %.4f s\n", allocators[a].name, T,
            cross, s);
  else
    fprintf(stderr, "bench-threads: %s, %d threads, cross %d, turn %d: %.4f s\n",
            allocators[a].name, T, cross, turn + 1, s);
  return s;
}

/* Each allocator all its points, then the next (--alternate 1). 0, or 1 when one failed. */
static int measure_in_turn(const options *o, result *res, int *n) {
  int rc = 0;
  for (int a = 0; a < NALLOC; a++) {
    if (!runs(o, a)) continue;
    for (int cross = 0; cross < 2; cross++)
      for (int i = 0; i < o->nthreads; i++) {
        double s = measure_said(a, o, o->threads[i], cross, -1);
        if (s < 0) rc = 1;
        else res[(*n)++] = (result){.a = a, .T = o->threads[i], .cross = cross, .s = s};
      }
  }
  return rc;
}

/* The lowest and highest of n values, and their median (reorders v). */
static void spread(double *v, int n, double *median, double *lo, double *hi) {
  *lo = *hi = v[0];
  for (int k = 1; k < n; k++) {
    if (v[k] < *lo) *lo = v[k];
    if (v[k] > *hi) *hi = v[k];
  }
  *median = bench_median(v, (size_t)n);
}

/* One point, the allocators taking o->turns turns (the first one rotates each turn, so that no
 * allocator always follows the same one). 0, or 1 when one failed (its row is left out). */
static int measure_point(const options *o, int T, bool cross, result *res, int *n) {
  int which[NALLOC], na = 0, rc = 0;
  for (int a = 0; a < NALLOC; a++)
    if (runs(o, a)) which[na++] = a;
  double s[NALLOC][MAX_TURNS];
  bool failed[NALLOC] = {false};
  for (int k = 0; k < o->turns; k++)
    for (int j = 0; j < na; j++) {
      int i = (j + k) % na;
      s[i][k] = measure_said(which[i], o, T, cross, k);
      if (s[i][k] < 0) failed[i] = true, rc = 1;
    }
  int mi = -1;
  for (int i = 0; i < na; i++)
    if (which[i] == MIMALLOC && !failed[i]) mi = i;
  for (int i = 0; i < na; i++) {
    if (failed[i]) continue;
    result r = {.a = which[i], .T = T, .cross = cross, .paired = mi >= 0};
    double v[MAX_TURNS], lo, hi;
    memcpy(v, s[i], sizeof(double) * (size_t)o->turns);
    spread(v, o->turns, &r.s, &lo, &hi);
    if (r.paired) {
      for (int k = 0; k < o->turns; k++) v[k] = s[mi][k] / s[i][k];
      spread(v, o->turns, &r.vs_mi, &r.lo, &r.hi);
    }
    res[(*n)++] = r;
  }
  return rc;
}

/* Every point, the allocators in turns at each (--alternate K > 1). */
static int measure_alternating(const options *o, result *res, int *n) {
  int rc = 0;
  for (int cross = 0; cross < 2; cross++)
    for (int i = 0; i < o->nthreads; i++) rc |= measure_point(o, o->threads[i], cross, res, n);
  return rc;
}

int main(int argc, char **argv) {
  if (bench_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  int provided;
  options o;
  int mpi_level;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &mpi_level);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  int code = bench_own_options(argc, argv, "bench-threads", parse, &o);
  if (code >= 0) {
    MPI_Finalize();
    return code;
  }
  if (sys_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided)) {
    fprintf(stderr, "bench-threads: sys_init_thread: %s\n", sys_strerror(errno));
    MPI_Finalize();
    return 1;
  }
  int rc = 0;
  if (provided != MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "bench-threads: antheap gave thread level %d, not MPI_THREAD_MULTIPLE\n", provided);
    rc = 1;
  } else if (sys_worker_id() == 0 && load_peers(&o)) {
    rc = 1;
  } else if (sys_worker_id() == 0) {
    make_sizes();
    result *res = calloc((size_t)NALLOC * (size_t)o.nthreads * 2, sizeof *res);
    int n = 0;
    rc = o.turns > 1 ? measure_alternating(&o, res, &n) : measure_in_turn(&o, res, &n);
    if (report(&o, res, n)) rc = 1;
    free(res);
  }
  MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, sys_comm());
  if (sys_finalize()) rc = 1;
  MPI_Finalize();
  return rc;
}

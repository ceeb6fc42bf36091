/* bench_latency.c: the latency of antheap's worker calls against an MPI ping-pong of the same
 * message sizes between the same two processes, in the same run (issue 4's goal: sys_alloc
 * within 1.5x of the ping-pong round trip).
 *
 * Every sys_* call is one request from a worker to its leaf scheduler and one reply (more hops
 * when the region lives elsewhere). The baseline must run between the same pair of processes,
 * but once sys_init has turned a rank into a scheduler the application cannot talk to it. So
 * the baseline runs first: MPI_Init, the launch plan as sys_init will build it (same options,
 * same hwloc binding) to learn which world ranks will be worker 0 and its leaf scheduler, an
 * MPI_Send/MPI_Recv ping-pong between those two ranks with the request and reply sizes of each
 * call (taken from the wire protocol, src/proto/proto.h), a barrier, then sys_init (which does
 * not call MPI_Init again; scheduler ranks never return from it).
 *
 * Then worker 0 alone measures (other workers wait in a barrier): sys_alloc and sys_free
 * timed separately, sys_balloc per call and per object for n = 1, 16, 256, 4096, sys_ralloc
 * and sys_rfree, and, in a hierarchy, sys_alloc/sys_free in a region placed on the root
 * (forwarded through every level). Object rows run twice: with the worker's allocation cache
 * (src/worker/cache.c: no message once the cache holds slabs of the region) and without it
 * (every call a round trip, as ANTHEAP_CACHE=off), beside glibc's malloc/free of the same
 * size. Cached and malloc rows read the clock once per repetition (a clock read would cost
 * more than the call): their ns_call is the median over repetitions of the mean per call. Both sides read the clock once per call, so the per-call
 * overhead is the same. Each row: the median over --reps repetitions of the mean time per
 * call, the 99th percentile of single calls (over all repetitions), the ping-pong round trip
 * of the same sizes and the ratio. Every result is checked (non-NULL, distinct, aligned,
 * writable objects; frees succeed; sys_query finds the objects); any failure makes the exit
 * status non-zero.
 *
 * Run: mpirun -np 2 bench-latency [--reps R] [--calls N] [--size B] [--quick] [--csv PATH]
 *                                 [--antheap-schedulers S --antheap-fanout F]
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "antheap.h"
#include "bench.h"
#include "bench_mpi.h"
#include "common/types.h"
#include "job/launch.h"
#include "proto/proto.h"
#include "worker/debug.h"

#define MAXREPS 200
#define TAG 4201
#define MAX_OBJECTS 4096 /* objects live at once in one repetition of a balloc row */

static int wrank; /* rank in MPI_COMM_WORLD */
static int failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "bench-latency: FAILED: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  failures++;
}

/* ---- options ------------------------------------------------------------------------------ */

typedef struct {
  int reps, calls;
  size_t size;
  bool quick;
  const char *csv;
  int gap_us; /* worker 0 computes this long before each timed round trip */
} options;

/* Before a timed round trip: --gap of computation (a busy wait), so that the peer has waited
 * that long when the request comes, as between an application's requests; returns the clock
 * after it, where the round trip's time starts. */
static double gap_then_now(const options *o, double prev) {
  if (!o->gap_us) return prev;
  double t, end = bench_now_ns() + o->gap_us * 1000.0;
  while ((t = bench_now_ns()) < end) {
  }
  return t;
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: mpirun -np N bench-latency [--reps R] [--calls N] [--size B] [--quick] [--csv PATH]\n"
          "                                  [--gap US] [--antheap-schedulers S] [--antheap-fanout F]\n"
          "  Latency of sys_alloc, sys_free, sys_balloc (n = 1, 16, 256, 4096), sys_ralloc and\n"
          "  sys_rfree, measured by worker 0, against an MPI ping-pong of the same request and\n"
          "  reply sizes between the same two processes (worker 0 and its leaf scheduler), run\n"
          "  before sys_init turns one of them into a scheduler. Default: -np 2, 1 scheduler +\n"
          "  1 worker; with more workers only worker 0 measures; in a hierarchy one more row\n"
          "  allocates in a region placed on the root scheduler. SPMD launches only (the\n"
          "  baseline needs the scheduler rank before it becomes one).\n"
          "  --reps R    repetitions, median reported (default 15, at most %d)\n"
          "  --calls N   calls per repetition for alloc/free/ralloc/rfree (default 1000)\n"
          "  --size B    object size in bytes (default 64)\n"
          "  --quick     a smoke run: 20 calls, balloc up to n = 256\n"
          "  --csv PATH  CSV output (default results/bench-latency.csv)\n"
          "  --gap US    worker 0 computes US microseconds (0..100000, default 0) before each\n"
          "              round trip, the ping-pong's too, and the times leave it out: the peer\n"
          "              has waited that long, as a scheduler waits between an application's\n"
          "              requests (its spin, its sleeps). Cached and malloc rows take no gap.\n\n%s",
          MAXREPS, launch_help_text());
}

/* Parse a copy of argv without the --antheap-* options. -1 to go on, else an exit code. */
static int parse(int argc, char **argv, void *out) {
  options *o = out;
  static const struct option opts[] = {
      {"help", no_argument, 0, 'h'},        {"reps", required_argument, 0, 'r'},
      {"calls", required_argument, 0, 'n'}, {"size", required_argument, 0, 's'},
      {"quick", no_argument, 0, 'q'},       {"csv", required_argument, 0, 'c'},
      {"gap", required_argument, 0, 'g'},   {0, 0, 0, 0}};
  *o = (options){15, 1000, 64, false, "results/bench-latency.csv", 0};
  bool calls_given = false;
  for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
    switch (c) {
      case 'h': if (wrank == 0) usage(stdout); return 0;
      case 'r': o->reps = atoi(optarg); break;
      case 'n': o->calls = atoi(optarg), calls_given = true; break;
      case 's': o->size = strtoull(optarg, NULL, 0); break;
      case 'q': o->quick = true; break;
      case 'c': o->csv = optarg; break;
      case 'g': o->gap_us = atoi(optarg); break;
      default: if (wrank == 0) usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    if (wrank == 0) fprintf(stderr, "bench-latency: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  if (o->quick && !calls_given) o->calls = 20;
  if (o->reps < 1 || o->reps > MAXREPS || o->calls < 1 || o->calls > MAX_OBJECTS || o->size < 1 ||
      o->size > ((size_t)1 << 20) || o->gap_us < 0 || o->gap_us > 100000) {
    if (wrank == 0)
      fprintf(stderr,
              "bench-latency: need --reps 1..%d, --calls 1..%d, --size 1..1048576, --gap 0..100000\n",
              MAXREPS, MAX_OBJECTS);
    return 2;
  }
  return -1;
}

/* ---- the rows ----------------------------------------------------------------------------- */

enum op { OP_ALLOC, OP_FREE, OP_BALLOC, OP_RALLOC, OP_RFREE, OP_MALLOC, OP_LIBC_FREE };
enum path { PATH_ROUND_TRIP, PATH_CACHE, PATH_LIBC };
static const char *const path_names[] = {"round trip", "cache", "glibc"};

typedef struct {
  enum op op;
  const char *name;
  int n;                 /* objects per call (balloc), else 1 */
  bool at_root;          /* region placed on the root scheduler (level hint 0) */
  enum path path;        /* how the call is served */
  size_t req, reply; /* bytes on the wire */
  /* Single calls (round trips) over all repetitions: median and 99th percentile; and the
   * median over repetitions of the mean time per call (which includes the spikes). */
  double p50, p99, mean;
  double mpi_p50, mpi_mean; /* the ping-pong of req/reply bytes */
} row;

static size_t request_bytes(unsigned type) { return sizeof(proto_header) + proto_fixed_size(type); }
static size_t reply_bytes(int tail_words) {
  return sizeof(proto_header) + proto_fixed_size(MSG_REPLY) + 8 * (size_t)tail_words;
}

/* A row of op; the wire sizes are those of the round trip (cached rows send nothing). */
static row make_row(enum op op, const char *name, int n, bool at_root, enum path path,
                    unsigned type, int reply_words) {
  size_t req = path == PATH_ROUND_TRIP ? request_bytes(type) : 0;
  size_t reply = path == PATH_ROUND_TRIP ? reply_bytes(reply_words) : 0;
  return (row){.op = op, .name = name, .n = n, .at_root = at_root, .path = path, .req = req,
               .reply = reply};
}

#define MAX_ROWS 24

static int make_rows(row *rows, const options *o, int levels) {
  static const int ns[] = {1, 16, 256, 4096};
  int k = 0;
  for (int root = 0; root <= (levels > 1); root++)
    for (enum path p = PATH_ROUND_TRIP; p <= PATH_CACHE; p++) {
      rows[k++] = make_row(OP_ALLOC, "alloc", 1, root, p, MSG_ALLOC, 1);
      rows[k++] = make_row(OP_FREE, "free", 1, root, p, MSG_FREE, 0);
    }
  rows[k++] = make_row(OP_MALLOC, "malloc", 1, false, PATH_LIBC, 0, 0);
  rows[k++] = make_row(OP_LIBC_FREE, "free", 1, false, PATH_LIBC, 0, 0);
  for (enum path p = PATH_ROUND_TRIP; p <= PATH_CACHE; p++)
    for (unsigned i = 0; i < 4 && !(o->quick && ns[i] > 256); i++)
      rows[k++] = make_row(OP_BALLOC, "balloc", ns[i], false, p, MSG_BALLOC, ns[i]);
  rows[k++] = make_row(OP_RALLOC, "ralloc", 1, false, PATH_ROUND_TRIP, MSG_RALLOC, 1);
  rows[k++] = make_row(OP_RFREE, "rfree", 1, false, PATH_ROUND_TRIP, MSG_RFREE, 0);
  AH_ASSERT(k <= MAX_ROWS);
  return k;
}

/* Calls of one row in one repetition. */
static int calls_of(const row *r, const options *o) {
  if (r->op != OP_BALLOC) return o->calls;
  int c = MAX_OBJECTS / r->n;
  return c < 1 ? 1 : c < o->calls ? c : o->calls;
}

/* ---- the baseline: MPI ping-pong before sys_init ------------------------------------------ */

/* A barrier that sleeps while it waits, so that ranks not in the ping-pong leave the cores to
 * the two that are (as idle schedulers do): on an oversubscribed host a spinning MPI_Barrier
 * would slow the baseline down. */
static void quiet_barrier(MPI_Comm comm) {
  MPI_Request rq;
  MPI_Ibarrier(comm, &rq);
  for (int done = 0;;) {
    MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
    if (done) return;
    nanosleep(&(struct timespec){0, 50000}, NULL);
  }
}

/* One repetition of `calls` round trips of req bytes there and reply bytes back between the
 * initiator and the responder (other ranks only join the barrier); the initiator stores each
 * round trip in one[] and returns the mean. */
enum pp_role { PP_IDLE, PP_INITIATOR, PP_RESPONDER };
static double pingpong(const options *o, enum pp_role role, int peer, const row *r, int calls,
                       char *buf, double *one) {
  quiet_barrier(MPI_COMM_WORLD);
  if (role == PP_RESPONDER)
    for (int i = 0; i < calls; i++) {
      MPI_Recv(buf, (int)r->req, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, (int)r->reply, MPI_BYTE, peer, TAG, MPI_COMM_WORLD);
    }
  if (role != PP_INITIATOR) return 0;
  double prev = bench_now_ns(), sum = 0;
  for (int i = 0; i < calls; i++) {
    prev = gap_then_now(o, prev);
    MPI_Send(buf, (int)r->req, MPI_BYTE, peer, TAG, MPI_COMM_WORLD);
    MPI_Recv(buf, (int)r->reply, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double t = bench_now_ns();
    sum += one[i] = t - prev;
    prev = t;
  }
  return sum / calls;
}

typedef struct {
  int worker0, leaf; /* world ranks */
  int schedulers, levels, workers, fanout;
} setup;

/* Build the plan sys_init will build (collective; binds this rank as sys_init would) to learn
 * the shape of the job and which world ranks will be worker 0 and its leaf. -1 to go on. */
static int peek_plan(int argc, char **argv, setup *su) {
  launch_plan p;
  if (bench_peek_plan(argc, argv, "bench-latency", &p)) return 2;
  *su = (setup){p.worker_ranks[0], p.ranks[p.worker_ranks[0]].leaf, p.nschedulers, p.nlevels,
                p.nworkers, p.fanout};
  launch_plan_free(&p);
  return -1;
}

/* The baseline of every row, between worker 0 and its leaf (a warm-up repetition first). */
static void baseline(const options *o, row *rows, int nrows, const setup *su) {
  enum pp_role role = wrank == su->worker0 ? PP_INITIATOR : wrank == su->leaf ? PP_RESPONDER : PP_IDLE;
  int peer = role == PP_INITIATOR ? su->leaf : su->worker0;
  double *one = malloc((size_t)(o->reps + 1) * MAX_OBJECTS * sizeof *one), mean[MAXREPS];
  char *buf = calloc(1, reply_bytes(MAX_OBJECTS) + 64);
  if (!one || !buf) {
    fprintf(stderr, "bench-latency: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (role == PP_INITIATOR)
    fprintf(stderr, "bench-latency: MPI ping-pong between world ranks %d (to be worker 0) and %d "
                    "(its leaf scheduler)\n", su->worker0, su->leaf);
  for (int k = 0; k < nrows; k++) {
    row *r = &rows[k];
    if (r->path != PATH_ROUND_TRIP) continue; /* no message to compare with */
    int calls = calls_of(r, o);
    pingpong(o, role, peer, r, calls, buf, one);
    for (int i = 0; i < o->reps; i++)
      mean[i] = pingpong(o, role, peer, r, calls, buf, one + (size_t)i * (size_t)calls);
    if (role != PP_INITIATOR) continue;
    r->mpi_mean = bench_median(mean, (size_t)o->reps);
    r->mpi_p50 = bench_median(one, (size_t)o->reps * (size_t)calls);
  }
  free(one);
  free(buf);
  quiet_barrier(MPI_COMM_WORLD);
}

/* ---- the measurements (worker 0, after sys_init) ------------------------------------------ */

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return (x > y) - (x < y);
}

/* n objects: non-NULL, 64-B aligned, not overlapping, writable; the first one known to
 * sys_query in region rid with a slot of at least size bytes. Sorts v. */
static void check_objects(void **v, int n, size_t size, rid_t rid, const char *what) {
  for (int i = 0; i < n; i++)
    if (!v[i] || (uintptr_t)v[i] % 64) {
      fail("%s returned %p (NULL or not 64-B aligned)", what, v[i]);
      return;
    }
  void *first = v[0];
  qsort(v, (size_t)n, sizeof *v, cmp_ptr);
  for (int i = 0; i + 1 < n; i++)
    if ((uintptr_t)v[i + 1] - (uintptr_t)v[i] < size) {
      fail("%s returned overlapping objects %p and %p", what, v[i], v[i + 1]);
      return;
    }
  for (int i = 0; i < n; i++) memset(v[i], 0xA5, size < 64 ? size : 64);
  rid_t got;
  size_t slot;
  if (sys_query(first, &got, &slot) || got != rid || slot < size)
    fail("sys_query(%p) after %s: %s (region %u, slot %zu; expected region %u, >= %zu)", first,
         what, sys_strerror(errno), (unsigned)got, slot, (unsigned)rid, size);
}

typedef struct {
  void **obj; /* MAX_OBJECTS objects */
  rid_t *rid; /* MAX_OBJECTS regions */
} scratch;

/* n calls of sys_alloc (libc: malloc) into obj[]: the mean per call; per-call times into one[]
 * (or, batch timed, the mean in every one[i]). */
static double timed_allocs(const options *o, rid_t rid, bool libc, bool batch, void **obj,
                           double *one) {
  int n = o->calls;
  double t0 = bench_now_ns(), prev = t0, sum = 0;
  for (int i = 0; i < n; i++) {
    if (!batch) prev = gap_then_now(o, prev);
    obj[i] = libc ? malloc(o->size) : sys_alloc(o->size, rid);
    if (batch) continue;
    double t = bench_now_ns();
    sum += one[i] = t - prev;
    prev = t;
  }
  double mean = batch ? (bench_now_ns() - t0) / n : sum / n;
  for (int i = 0; batch && i < n; i++) one[i] = mean;
  return mean;
}

/* The same for freeing obj[]; *bad counts failed frees. */
static double timed_frees(const options *o, bool libc, bool batch, void **obj, double *one,
                          int *bad) {
  int n = o->calls;
  double t0 = bench_now_ns(), prev = t0, sum = 0;
  for (int i = 0; i < n; i++) {
    if (!batch) prev = gap_then_now(o, prev);
    if (libc) free(obj[i]);
    else *bad += obj[i] && sys_free(obj[i]) != 0;
    if (batch) continue;
    double t = bench_now_ns();
    sum += one[i] = t - prev;
    prev = t;
  }
  double mean = batch ? (bench_now_ns() - t0) / n : sum / n;
  for (int i = 0; batch && i < n; i++) one[i] = mean;
  return mean;
}

/* One repetition of alloc + free (both rows are timed from the same objects). */
static void rep_alloc_free(const options *o, const row *r, rid_t rid, scratch *s,
                           double *alloc_mean, double *free_mean, double *alloc_one,
                           double *free_one) {
  bool libc = r->path == PATH_LIBC, batch = r->path != PATH_ROUND_TRIP;
  int n = o->calls;
  *alloc_mean = timed_allocs(o, rid, libc, batch, s->obj, alloc_one);
  void **sorted = malloc((size_t)n * sizeof *sorted);
  memcpy(sorted, s->obj, (size_t)n * sizeof *sorted);
  if (!libc) check_objects(sorted, n, o->size, rid, "sys_alloc");
  for (int i = 0; libc && i < n; i++)
    if (!s->obj[i]) fail("malloc(%zu) returned NULL", o->size);
  free(sorted);
  int bad = 0;
  *free_mean = timed_frees(o, libc, batch, s->obj, free_one, &bad);
  if (bad) fail("%d of %d sys_free calls failed: %s", bad, n, sys_strerror(errno));
}

/* One repetition of balloc rows: `calls` calls of n objects in a fresh region, freed with it. */
static double rep_balloc(const options *o, const row *r, scratch *s, double *one) {
  int calls = calls_of(r, o);
  rid_t rid = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  if (!rid) {
    fail("sys_ralloc for balloc: %s", sys_strerror(errno));
    return 0;
  }
  int bad = 0;
  bool batch = r->path != PATH_ROUND_TRIP;
  double t0 = bench_now_ns(), prev = t0, sum = 0;
  for (int c = 0; c < calls; c++) {
    if (!batch) prev = gap_then_now(o, prev);
    bad += sys_balloc(o->size, rid, r->n, s->obj + (size_t)c * (size_t)r->n) != 0;
    if (batch) continue;
    double t = bench_now_ns();
    sum += one[c] = t - prev;
    prev = t;
  }
  double mean = batch ? (bench_now_ns() - t0) / calls : sum / calls;
  for (int c = 0; batch && c < calls; c++) one[c] = mean;
  if (bad) fail("%d of %d sys_balloc(n = %d) calls failed: %s", bad, calls, r->n, sys_strerror(errno));
  else check_objects(s->obj, calls * r->n, o->size, rid, "sys_balloc");
  if (sys_rfree(rid)) fail("sys_rfree after balloc: %s", sys_strerror(errno));
  return mean;
}

/* One repetition of ralloc + rfree of `calls` empty regions under the root region. */
static void rep_regions(const options *o, scratch *s, double *ralloc_mean, double *rfree_mean,
                        double *ralloc_one, double *rfree_one) {
  int n = o->calls;
  double prev = bench_now_ns(), sum = 0;
  for (int i = 0; i < n; i++) {
    prev = gap_then_now(o, prev);
    s->rid[i] = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    double t = bench_now_ns();
    sum += ralloc_one[i] = t - prev;
    prev = t;
  }
  *ralloc_mean = sum / n;
  int bad = 0;
  for (int i = 0; i < n; i++) {
    bad += s->rid[i] == 0;
    for (int j = 0; j < i && s->rid[i]; j++) bad += s->rid[j] == s->rid[i];
  }
  if (bad) fail("%d of %d sys_ralloc calls failed or repeated an ID: %s", bad, n, sys_strerror(errno));
  bad = 0;
  prev = bench_now_ns(), sum = 0;
  for (int i = 0; i < n; i++) {
    prev = gap_then_now(o, prev);
    bad += s->rid[i] && sys_rfree(s->rid[i]) != 0;
    double t = bench_now_ns();
    sum += rfree_one[i] = t - prev;
    prev = t;
  }
  *rfree_mean = sum / n;
  if (bad) fail("%d of %d sys_rfree calls failed: %s", bad, n, sys_strerror(errno));
}

/* p-th percentile of v[0..n) (reorders v). */
static double percentile(double *v, size_t n, double p) {
  bench_median(v, n); /* sorts */
  size_t i = (size_t)(p * (double)(n - 1) + 0.5);
  return v[i < n ? i : n - 1];
}

static void summarise(row *r, double *mean, int reps, double *one, size_t none) {
  r->mean = bench_median(mean, (size_t)reps);
  r->p50 = bench_median(one, none);
  r->p99 = percentile(one, none, 0.99);
}

/* Fill p50, p99 and mean of every row. Rows come in the order make_rows builds them. */
static void measure(const options *o, row *rows, int nrows) {
  size_t cap = (size_t)o->reps * MAX_OBJECTS;
  double *one[2] = {malloc(cap * sizeof(double)), malloc(cap * sizeof(double))}, mean[2][MAXREPS];
  scratch s = {malloc(MAX_OBJECTS * sizeof(void *)), malloc(MAX_OBJECTS * sizeof(rid_t))};
  if (!one[0] || !one[1] || !s.obj || !s.rid) {
    fprintf(stderr, "bench-latency: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  for (int k = 0; k < nrows && !failures; k++) {
    row *r = &rows[k];
    fprintf(stderr, "bench-latency: %s", r->name);
    if (r->op == OP_BALLOC) fprintf(stderr, " n = %d", r->n);
    fprintf(stderr, "%s (%s)\n", r->at_root ? " (region on the root scheduler)" : "",
            path_names[r->path]);
    if (antheap_debug_set_cache(r->path == PATH_CACHE)) {
      fail("turning the allocation cache %s: %s", r->path == PATH_CACHE ? "on" : "off",
           sys_strerror(errno));
      break;
    }
    if (r->op == OP_ALLOC || r->op == OP_MALLOC) { /* this row and the next (free) */
      rid_t rid = r->op == OP_MALLOC ? 0 : sys_ralloc(SYS_ROOT_REGION, r->at_root ? 0 : SYS_NO_LEVEL_HINT);
      if (r->op == OP_ALLOC && !rid) {
        fail("sys_ralloc: %s", sys_strerror(errno));
        break;
      }
      double d0, d1;
      rep_alloc_free(o, r, rid, &s, &d0, &d1, one[0], one[1]); /* warm-up */
      for (int i = 0; i < o->reps && !failures; i++)
        rep_alloc_free(o, r, rid, &s, &mean[0][i], &mean[1][i], one[0] + (size_t)i * o->calls,
                       one[1] + (size_t)i * o->calls);
      if (rid && sys_rfree(rid)) fail("sys_rfree: %s", sys_strerror(errno));
      for (int j = 0; j < 2; j++) summarise(&r[j], mean[j], o->reps, one[j], (size_t)o->reps * o->calls);
      k++;
    } else if (r->op == OP_BALLOC) {
      int calls = calls_of(r, o);
      rep_balloc(o, r, &s, one[0]);
      for (int i = 0; i < o->reps && !failures; i++)
        mean[0][i] = rep_balloc(o, r, &s, one[0] + (size_t)i * calls);
      summarise(r, mean[0], o->reps, one[0], (size_t)o->reps * calls);
    } else if (r->op == OP_RALLOC) { /* this row and the next (rfree) */
      double d0, d1;
      rep_regions(o, &s, &d0, &d1, one[0], one[1]);
      for (int i = 0; i < o->reps && !failures; i++)
        rep_regions(o, &s, &mean[0][i], &mean[1][i], one[0] + (size_t)i * o->calls,
                    one[1] + (size_t)i * o->calls);
      for (int j = 0; j < 2; j++) summarise(&r[j], mean[j], o->reps, one[j], (size_t)o->reps * o->calls);
      k++;
    }
  }
  free(one[0]);
  free(one[1]);
  free(s.obj);
  free(s.rid);
}

/* ---- table and driver --------------------------------------------------------------------- */

static const char *const cols[] = {"call",     "served_by", "region_on", "objects",    "req_B",
                                   "reply_B",  "ns_call",   "ns_object", "p99_ns",     "mean_ns",
                                   "mpi_rtt_ns", "mpi_mean_ns", "ratio", "ratio_mean", "schedulers",
                                   "levels", "workers", "gap_us"};
#define NCOLS 18

static void report(const options *o, const row *rows, int nrows, const setup *su) {
  static char title[1024];
  snprintf(title, sizeof title,
           "bench-latency: antheap calls by worker 0 (world rank %d) vs an MPI_Send/MPI_Recv "
           "ping-pong of the same bytes with its leaf scheduler (world rank %d), run before sys_init\n"
           "%d scheduler(s) in %d level(s), %d worker(s); %zu-B objects; %d reps of %d calls "
           "(balloc: up to %d objects per rep); gap_us: worker 0's computation before each "
           "round trip (left out of the times)\n"
           "ns_call, mpi_rtt_ns: median of single calls / round trips; p99_ns: their 99th "
           "percentile; mean_ns, mpi_mean_ns: median over reps of the mean (spikes included)\n"
           "ratio = ns_call / mpi_rtt_ns, ratio_mean = mean_ns / mpi_mean_ns (round trips: goal "
           "<= 1.5)\n"
           "served_by: round trip (ANTHEAP_CACHE=off), cache (the worker's allocation cache: "
           "goals alloc/free <= 50 ns, balloc n = 4096 <= 20 ns per object), glibc "
           "(malloc/free); cache and glibc rows: one clock read per repetition, ns_call = median "
           "of the repetitions' mean",
           su->worker0, su->leaf, su->schedulers, su->levels, su->workers, o->size, o->reps,
           o->calls, MAX_OBJECTS);
  bench_table *t = bench_table_new(title, NCOLS, cols);
  for (int k = 0; k < nrows; k++) {
    const row *r = &rows[k];
    char f[NCOLS][48];
    bool rtt = r->path == PATH_ROUND_TRIP;
    snprintf(f[0], 48, "%s", r->name);
    snprintf(f[1], 48, "%s", path_names[r->path]);
    snprintf(f[2], 48, "%s", r->path == PATH_LIBC ? "-" : r->at_root ? "root" : "leaf");
    snprintf(f[3], 48, "%d", r->n);
    snprintf(f[4], 48, "%zu", r->req);
    snprintf(f[5], 48, "%zu", r->reply);
    snprintf(f[6], 48, rtt ? "%.0f" : "%.1f", r->p50);
    snprintf(f[7], 48, "%.1f", r->p50 / r->n);
    snprintf(f[8], 48, rtt ? "%.0f" : "%.1f", r->p99);
    snprintf(f[9], 48, rtt ? "%.0f" : "%.1f", r->mean);
    snprintf(f[10], 48, rtt ? "%.0f" : "-", r->mpi_p50);
    snprintf(f[11], 48, rtt ? "%.0f" : "-", r->mpi_mean);
    snprintf(f[12], 48, rtt ? "%.2f" : "-", r->p50 / r->mpi_p50);
    snprintf(f[13], 48, rtt ? "%.2f" : "-", r->mean / r->mpi_mean);
    snprintf(f[14], 48, "%d", su->schedulers);
    snprintf(f[15], 48, "%d", su->levels);
    snprintf(f[16], 48, "%d", su->workers);
    snprintf(f[17], 48, "%d", rtt ? o->gap_us : 0);
    const char *cells[NCOLS];
    for (int i = 0; i < NCOLS; i++) cells[i] = f[i];
    bench_table_row(t, cells);
  }
  if (bench_table_finish(t, o->csv)) failures++;
  printf("(request = %zu-B header + the call's fixed payload; reply = header + 8-B reply field + "
         "8 B per returned word)\n", sizeof(proto_header));
}

int main(int argc, char **argv) {
  if (bench_wants_help(argc, argv)) { /* before MPI_Init: --help needs no mpirun */
    usage(stdout);
    return 0;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  options o;
  int code = bench_own_options(argc, argv, "bench-latency", parse, &o);
  int *appnum, flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
  if (code < 0 && flag && *appnum > 0) {
    fprintf(stderr, "bench-latency: SPMD launches only (mpirun -np N bench-latency): the baseline "
                    "ping-pong needs the scheduler rank before it becomes one\n");
    code = 2;
  }
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (code < 0 && size < 2) {
    if (wrank == 0) fprintf(stderr, "bench-latency: needs at least 2 ranks (mpirun -np 2)\n");
    code = 2;
  }
  if (code >= 0) {
    MPI_Finalize();
    return code;
  }
  setup su;
  if ((code = peek_plan(argc, argv, &su)) >= 0) {
    MPI_Finalize();
    return code;
  }
  row rows[MAX_ROWS];
  int nrows = make_rows(rows, &o, su.levels);
  baseline(&o, rows, nrows, &su);
  if (sys_init(&argc, &argv)) {
    fprintf(stderr, "bench-latency: sys_init: %s\n", sys_strerror(errno));
    MPI_Finalize();
    return 1;
  }
  if (sys_worker_id() == 0) {
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me != su.worker0) fail("worker 0 is world rank %d; the plan said %d", me, su.worker0);
    else measure(&o, rows, nrows);
    if (!failures) report(&o, rows, nrows, &su);
  }
  quiet_barrier(sys_comm()); /* the other workers wait here, asleep */
  int mine = failures, total = 0;
  MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, sys_comm());
  if (sys_finalize()) {
    fprintf(stderr, "bench-latency: sys_finalize: %s\n", sys_strerror(errno));
    total++;
  }
  MPI_Finalize(); /* ours: sys_init found MPI initialised */
  return total ? 1 : 0;
}

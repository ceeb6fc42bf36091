/* bench_throughput.c: how many allocations per second antheap's leaf schedulers serve, with
 * all the workers of the job allocating at once (issue 4).
 *
 * Every worker makes a region (placed on its own leaf), then, after a barrier, loops
 * sys_alloc/sys_free pairs of --size bytes for --seconds (or --ops pairs). Per repetition:
 * aggregate rate = all workers' calls / the longest worker's elapsed time. Reported: the median
 * over --reps repetitions of the aggregate calls/s and allocs/s, per leaf, and the mean call
 * latency a worker saw. The job's shape (schedulers, levels, leaves, workers per leaf) comes
 * from the launch plan, so one row describes one mpirun; a sweep over worker counts and
 * hierarchies is several mpirun runs appending to one CSV (--append; scripts/bench throughput
 * does this).
 *
 * Checks (non-zero exit on any failure): every allocation non-NULL, 64-B aligned and inside
 * the worker's region (sys_query on a sample), every free succeeds, the calls of all workers
 * add up (allocs == frees == pairs counted), each region's rfree succeeds, and at shutdown the
 * root scheduler finds nothing lost.
 *
 * Run: mpirun -np N bench-throughput [--seconds S | --ops N] [--reps R] [--size B]
 *                                    [--csv PATH] [--append] [--antheap-schedulers S ...]
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "antheap.h"
#include "bench.h"
#include "bench_mpi.h"
#include "job/launch.h"

#define MAXREPS 100

static int wrank; /* rank in MPI_COMM_WORLD */

/* ---- options ------------------------------------------------------------------------------ */

typedef struct {
  double seconds;
  long long ops; /* pairs per worker per repetition; 0: run for `seconds` */
  int reps;
  size_t size;
  const char *csv;
  bool append;
} options;

static void usage(FILE *f) {
  fprintf(f,
          "usage: mpirun -np N bench-throughput [--seconds S | --ops N] [--reps R] [--size B]\n"
          "                                     [--csv PATH] [--append] [--antheap-* options]\n"
          "  Aggregate sys_alloc/sys_free rate that antheap's leaf schedulers serve while every\n"
          "  worker of the job loops alloc/free pairs in its own region. One mpirun = one row\n"
          "  (its schedulers, levels, leaves and workers come from the launch plan); sweep worker\n"
          "  counts and hierarchies with several runs and --append (see scripts/bench).\n"
          "  --seconds S  length of one repetition per worker (default 1.0)\n"
          "  --ops N      alloc/free pairs per worker per repetition instead of a duration\n"
          "  --reps R     repetitions, median reported (default 3, at most %d)\n"
          "  --size B     object size in bytes (default 64)\n"
          "  --csv PATH   CSV output (default results/bench-throughput.csv)\n"
          "  --append     add the row to PATH (its header is kept) instead of rewriting it\n\n%s",
          MAXREPS, launch_help_text());
}

/* Parse a copy of argv without the --antheap-* options. -1 to go on, else an exit code. */
static int parse(int argc, char **argv, void *out) {
  options *o = out;
  static const struct option opts[] = {
      {"help", no_argument, 0, 'h'},          {"seconds", required_argument, 0, 't'},
      {"ops", required_argument, 0, 'n'},     {"reps", required_argument, 0, 'r'},
      {"size", required_argument, 0, 's'},    {"csv", required_argument, 0, 'c'},
      {"append", no_argument, 0, 'a'},        {0, 0, 0, 0}};
  *o = (options){1.0, 0, 3, 64, "results/bench-throughput.csv", false};
  for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
    switch (c) {
      case 'h': if (wrank == 0) usage(stdout); return 0;
      case 't': o->seconds = atof(optarg); break;
      case 'n': o->ops = atoll(optarg); break;
      case 'r': o->reps = atoi(optarg); break;
      case 's': o->size = strtoull(optarg, NULL, 0); break;
      case 'c': o->csv = optarg; break;
      case 'a': o->append = true; break;
      default: if (wrank == 0) usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    if (wrank == 0) fprintf(stderr, "bench-throughput: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  if (o->reps < 1 || o->reps > MAXREPS || o->ops < 0 || (!o->ops && !(o->seconds > 0)) ||
      o->size < 1 || o->size > ((size_t)1 << 20)) {
    if (wrank == 0)
      fprintf(stderr, "bench-throughput: need --reps 1..%d, --seconds > 0 or --ops >= 1, "
                      "--size 1..1048576\n", MAXREPS);
    return 2;
  }
  return -1;
}

/* ---- the job's shape ---------------------------------------------------------------------- */

typedef struct {
  int schedulers, levels, leaves, workers, fanout;
  bool mpmd;
  char per_leaf[128]; /* workers served by each leaf, "2+2" */
} shape;

/* The plan sys_init will build (collective over MPI_COMM_WORLD; it binds this rank exactly as
 * sys_init would). MPMD launches (antheapd ranks do not take part) describe themselves after
 * sys_init instead. -1 to go on, else an exit code. */
static int peek_plan(int argc, char **argv, shape *sh) {
  int *appnum, flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
  if (flag && *appnum > 0) {
    *sh = (shape){.mpmd = true};
    return -1;
  }
  launch_plan p;
  if (bench_peek_plan(argc, argv, "bench-throughput", &p)) return 2;
  *sh = (shape){p.nschedulers, p.nlevels, p.nleaves, p.nworkers, p.fanout, false, ""};
  for (int i = 0, len = 0; i < p.nleaves && len < (int)sizeof sh->per_leaf - 12; i++)
    len += snprintf(sh->per_leaf + len, sizeof sh->per_leaf - (size_t)len, "%s%d", i ? "+" : "",
                    p.ranks[p.leaves[i]].worker_count);
  launch_plan_free(&p);
  return -1;
}

/* ---- the measurement ---------------------------------------------------------------------- */

typedef struct {
  long long pairs, allocs, frees, bad_allocs, bad_frees;
  double elapsed_ns;
} tally;

/* One repetition on this worker. */
static void run_rep(const options *o, rid_t rid, tally *t) {
  *t = (tally){0};
  double t0 = bench_now_ns(), limit = o->seconds * 1e9, now = t0;
  for (long long i = 0; o->ops ? i < o->ops : now - t0 < limit; i++) {
    void *p = sys_alloc(o->size, rid);
    t->allocs++;
    if (!p || (uintptr_t)p % 64) {
      t->bad_allocs++;
    } else {
      *(volatile char *)p = (char)i; /* the object is mapped and writable */
      t->frees++;
      t->bad_frees += sys_free(p) != 0;
    }
    t->pairs++;
    if (!o->ops) now = bench_now_ns();
  }
  t->elapsed_ns = bench_now_ns() - t0;
}

/* A sample allocation must belong to rid. 0 or 1 (failure, reported). */
static int check_region(rid_t rid, size_t size) {
  void *p = sys_alloc(size, rid);
  rid_t got = 0;
  size_t slot = 0;
  int bad = !p || sys_query(p, &got, &slot) || got != rid || slot < size || sys_free(p);
  if (bad)
    fprintf(stderr, "bench-throughput: FAILED: worker %d: object %p in region %u: query says "
                    "region %u, slot %zu (%s)\n", sys_worker_id(), p, (unsigned)rid, (unsigned)got,
            slot, sys_strerror(errno));
  return bad;
}

/* Write the row to the CSV, or append it (keeping the file's header) with --append. */
static int write_table(bench_table *t, const options *o) {
  FILE *old = o->append ? fopen(o->csv, "r") : NULL;
  if (!old) return bench_table_finish(t, o->csv);
  fclose(old);
  char part[4096];
  snprintf(part, sizeof part, "%s.part", o->csv);
  if (bench_table_finish(t, part)) return -1;
  FILE *in = fopen(part, "r"), *out = fopen(o->csv, "a");
  char line[4096];
  int rc = in && out && fgets(line, sizeof line, in) ? 0 : -1; /* skip the header */
  while (!rc && fgets(line, sizeof line, in)) fputs(line, out);
  if (in) fclose(in);
  if (out && fclose(out)) rc = -1;
  remove(part);
  if (rc) fprintf(stderr, "bench-throughput: cannot append to %s\n", o->csv);
  else printf("(appended to %s)\n", o->csv);
  return rc;
}

static const char *const cols[] = {"schedulers", "levels", "leaves", "workers", "workers_per_leaf",
                                   "obj_bytes", "calls", "seconds", "calls_per_s", "allocs_per_s",
                                   "allocs_per_s_per_leaf", "ns_per_call_per_worker", "min_max_worker"};
#define NCOLS 13

int main(int argc, char **argv) {
  if (bench_wants_help(argc, argv)) { /* before MPI_Init: --help needs no mpirun */
    usage(stdout);
    return 0;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  options o;
  int code = bench_own_options(argc, argv, "bench-throughput", parse, &o);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (code < 0 && size < 2) {
    if (wrank == 0) fprintf(stderr, "bench-throughput: needs at least 2 ranks (mpirun -np 2)\n");
    code = 2;
  }
  shape sh;
  if (code < 0) code = peek_plan(argc, argv, &sh);
  if (code >= 0) {
    MPI_Finalize();
    return code;
  }
  if (sys_init(&argc, &argv)) {
    fprintf(stderr, "bench-throughput: sys_init: %s\n", sys_strerror(errno));
    MPI_Finalize();
    return 1;
  }
  int me = sys_worker_id(), nw = sys_workers(), failures = 0;
  if (sh.mpmd) { /* what the plan would have said */
    sh.workers = nw;
    sh.schedulers = size - nw;
    snprintf(sh.per_leaf, sizeof sh.per_leaf, "?");
  }
  MPI_Comm comm = sys_comm();
  rid_t rid = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  if (!rid) {
    fprintf(stderr, "bench-throughput: FAILED: worker %d: sys_ralloc: %s\n", me, sys_strerror(errno));
    failures++;
  }
  int any = 0;
  MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, comm);
  double rate[MAXREPS], per_call[MAXREPS], elapsed[MAXREPS];
  long long calls[MAXREPS], lo_hi[MAXREPS][2];
  if (!any) {
    if (me == 0)
      fprintf(stderr, "bench-throughput: %d worker(s), %d scheduler(s), %s\n", nw, sh.schedulers,
              o.ops ? "fixed count" : "fixed time");
    tally t;
    options warm = o;
    warm.ops = 200; /* warm-up: slabs carved, pages in place */
    run_rep(&warm, rid, &t);
    for (int r = 0; r < o.reps; r++) {
      sys_barrier();
      run_rep(&o, rid, &t);
      long long mine[6] = {t.pairs, t.allocs, t.frees, t.bad_allocs, t.bad_frees, 0}, sum[6];
      MPI_Allreduce(mine, sum, 6, MPI_LONG_LONG, MPI_SUM, comm);
      double max_ns, sum_ns;
      MPI_Allreduce(&t.elapsed_ns, &max_ns, 1, MPI_DOUBLE, MPI_MAX, comm);
      MPI_Allreduce(&t.elapsed_ns, &sum_ns, 1, MPI_DOUBLE, MPI_SUM, comm);
      MPI_Allreduce(&t.pairs, &lo_hi[r][0], 1, MPI_LONG_LONG, MPI_MIN, comm);
      MPI_Allreduce(&t.pairs, &lo_hi[r][1], 1, MPI_LONG_LONG, MPI_MAX, comm);
      if (sum[3] || sum[4] || sum[1] != sum[0] || sum[2] != sum[0] - sum[3] ||
          (o.ops && sum[0] != o.ops * nw)) {
        if (me == 0)
          fprintf(stderr, "bench-throughput: FAILED: rep %d: %lld pairs, %lld allocs (%lld bad), "
                          "%lld frees (%lld failed)\n", r, sum[0], sum[1], sum[3], sum[2], sum[4]);
        failures++;
        break;
      }
      calls[r] = 2 * sum[0];
      elapsed[r] = max_ns;
      rate[r] = (double)calls[r] / (max_ns * 1e-9);
      per_call[r] = sum_ns / (double)calls[r]; /* mean call time a worker saw */
      if (me == 0) fprintf(stderr, "bench-throughput: rep %d: %.0f calls/s\n", r, rate[r]);
    }
    failures += check_region(rid, o.size);
  }
  if (rid && sys_rfree(rid)) {
    fprintf(stderr, "bench-throughput: FAILED: worker %d: sys_rfree: %s\n", me, sys_strerror(errno));
    failures++;
  }
  MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, comm);
  if (me == 0 && !any) {
    /* the median rate; the other columns from the repetition closest to it */
    double sorted[MAXREPS];
    memcpy(sorted, rate, sizeof(double) * (size_t)o.reps);
    double med = bench_median(sorted, (size_t)o.reps);
    int best = 0;
    for (int r = 1; r < o.reps; r++)
      if (fabs(rate[r] - med) < fabs(rate[best] - med)) best = r;
    static char title[512];
    snprintf(title, sizeof title,
             "bench-throughput: sys_alloc/sys_free pairs by every worker at once, %d scheduler(s) "
             "(%d level(s), %d leaf/leaves), %d worker(s); median of %d reps.\n"
             "On a small host the ranks outnumber the cores: the numbers then measure "
             "oversubscription as much as antheap (%s)",
             sh.schedulers, sh.levels, sh.leaves, sh.workers, o.reps, bench_machine());
    bench_table *tb = bench_table_new(title, NCOLS, cols);
    char f[NCOLS][128];
    snprintf(f[0], 128, "%d", sh.schedulers);
    snprintf(f[1], 128, "%d", sh.levels);
    snprintf(f[2], 128, "%d", sh.leaves);
    snprintf(f[3], 128, "%d", nw);
    snprintf(f[4], 128, "%s", sh.per_leaf);
    snprintf(f[5], 128, "%zu", o.size);
    snprintf(f[6], 128, "%lld", calls[best]);
    snprintf(f[7], 128, "%.3f", elapsed[best] * 1e-9);
    snprintf(f[8], 128, "%.0f", med);
    snprintf(f[9], 128, "%.0f", med / 2);
    snprintf(f[10], 128, "%.0f", sh.leaves ? med / 2 / sh.leaves : 0);
    snprintf(f[11], 128, "%.0f", per_call[best]);
    snprintf(f[12], 128, "%lld/%lld", lo_hi[best][0] * 2, lo_hi[best][1] * 2);
    const char *cells[NCOLS];
    for (int i = 0; i < NCOLS; i++) cells[i] = f[i];
    bench_table_row(tb, cells);
    if (write_table(tb, &o)) failures++;
  }
  MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, comm);
  if (sys_finalize()) {
    fprintf(stderr, "bench-throughput: sys_finalize: %s\n", sys_strerror(errno));
    any++;
  }
  MPI_Finalize(); /* ours: sys_init found MPI initialised */
  return any ? 1 : 0;
}

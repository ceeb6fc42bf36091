/* app.c: options and --help of the Delaunay programs, loading the points, the check and the
 * outputs after a run, and the timing report (table + CSV row). */
#include "app.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"

int dt_errors_quiet;

/* An error about the options: printed unless dt_errors_quiet (the parallel program's workers
 * other than 0 parse the same arguments and would repeat it). */
static void opt_error(const char *fmt, ...) {
  if (dt_errors_quiet) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
}

static const char *name_of(dt_prog p) {
  return p == DT_SERIAL ? "delaunay-serial" : p == DT_PARALLEL ? "delaunay" : "delaunay-cgal";
}

static void usage(FILE *f, dt_prog p) {
  fprintf(
      f,
      "usage: %s [options]\n"
      "  2-D Delaunay triangulation (Myrmics section 6.4, Figure 4d).\n"
      "%s"
      "Points (generated, seeded; or read):\n"
      "  --points N         how many (default 100000)\n"
      "  --dist D           uniform (default; [0,1)^2), clustered (Gaussian blobs), grid\n"
      "                     (integer coordinates: every square's corners cocircular), wide\n"
      "                     (|x|, |y| = 10^U(-12, 12), random signs: a huge range of scales),\n"
      "                     graded (radius 10^U(-6, 0) around the origin: refined toward a\n"
      "                     point) or line (x in [0,1), y Gaussian of deviation 1e-6)\n"
      "  --seed S           generator seed (default 1)\n"
      "  --clusters K       blobs of --dist clustered (default 16)\n"
      "  --sigma X          their standard deviation (default 0.02)\n"
      "  --input FILE       read the points instead: text, \"x y\" per line (blank lines and\n"
      "                     '#' comments skipped), or binary: the 8 bytes DTPOINTS, a uint64\n"
      "                     count, then x y pairs of doubles, all little-endian. Coordinates\n"
      "                     must be 0 or of magnitude in [1e-50, 1e50]\n"
      "  --write-points FILE  write the points (text x y; binary with --binary)\n"
      "Output and checks:\n"
      "  --triangles FILE   write the triangles, one \"a b c\" per line: input indices\n"
      "                     (0-based), counter-clockwise\n"
      "  --compare FILE     compare with a triangle file (ours, qdelaunay's \"i\" output,\n"
      "                     or CGAL's): the same set of triangles, orientation ignored\n"
      "  --no-check         skip the validation (it runs by default after every run: each\n"
      "                     triangle counter-clockwise, each edge in at most two triangles,\n"
      "                     the hull, 2n-2-h triangles, the empty circle across every edge,\n"
      "                     all with exact predicates)\n"
      "Timing:\n"
      "  --csv FILE         append the timing row to FILE (header when new)\n"
      "  --tag TEXT         x label of the row in plots\n"
      "  --baseline-seconds T  serial time of the same points, for parallel efficiency\n"
      "  --quiet            less output\n"
      "%s"
      "  --help             this text\n"
      "Duplicate points are reported and skipped (the first one is kept).\n%s",
      name_of(p),
      p == DT_SERIAL
          ? "  Serial Bowyer-Watson on malloc (the baseline): points in a biased randomized\n"
            "  order along a Hilbert curve, each located by a walk from the last triangle.\n"
      : p == DT_PARALLEL
          ? "  Parallel Bowyer-Watson on antheap regions: one block of the points per worker\n"
            "  (columns and rows at the quantiles of a sample of the points, so clustered\n"
            "  input is balanced too: DT_BALANCE=1 makes them exact), each block 3 x 3\n"
            "  cells (regions: an interior and strips along its sides) under a binary tree\n"
            "  of regions; a triangle in the cell of its circumcentre. Worker 0 inserts the\n"
            "  hull, sparse places and a sample, the cells go out; the points along the\n"
            "  borders go first, in windows of whole blocks across each border; then every\n"
            "  worker its block; what still waits gathers the cells it needs. Where more\n"
            "  than 40% of the sample's triangles reach out of their blocks (points over\n"
            "  many scales, or nearly on a line), worker 0 inserts every point itself and\n"
            "  says so (DT_ALONE=0: never, 1: always).\n"
            "  Workers: a power of 2 (1, 2, 4, 8, ...).\n"
            "  SPMD: mpirun -np N delaunay --antheap-schedulers S; MPMD: antheapd : delaunay.\n"
          : "  CGAL's Delaunay_triangulation_2 (Epick kernel) on the same points, timed around\n"
            "  insert(begin, end) (which shuffles and spatially sorts, like ours).\n",
      p == DT_PARALLEL
          ? "  --sample K         points per block that worker 0 inserts before the split\n"
            "                     (default 256; with the hull and a band along it)\n"
            "  --zone X           border zones: points closer than X spacings (of the points\n"
            "                     around them) to a border between blocks, inserted first in\n"
            "                     the windows (default 3; 0: none)\n"
            "  --phases           print each phase's seconds (slowest and mean worker) and\n"
            "                     counts (DT_DEBUG=1 also prints every worker's lines)\n"
          : "",
      p == DT_PARALLEL ? BENCH_ANTHEAP_HELP : "");
}

static int num(const char *prog, const char *opt, const char *v, double lo, double hi,
               double *out) {
  char *end;
  errno = 0;
  double x = v ? strtod(v, &end) : 0;
  if (!v || errno || *end || end == v || !(x >= lo && x <= hi)) {
    opt_error("%s: error: %s needs a number in [%g, %g], got '%s'\n", prog, opt, lo, hi,
              v ? v : "");
    return -1;
  }
  *out = x;
  return 0;
}

int dt_opts_parse(int argc, char **argv, dt_prog prog, dt_opts *o) {
  const char *me = name_of(prog);
  *o = (dt_opts){.points = 100000,
                 .seed = 1,
                 .dist = "uniform",
                 .clusters = 16,
                 .sigma = 0.02,
                 .sample = 256,
                 .zone = 3};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    double x;
    int used = 1;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout, prog);
      return 1;
    } else if (!strcmp(a, "--points")) {
      if (num(me, a, v, 0, DT_MAX_POINTS, &x)) return -1;
      o->points = (long)x;
    } else if (!strcmp(a, "--seed")) {
      if (num(me, a, v, 0, 1.8e19, &x)) return -1;
      o->seed = (uint64_t)x;
    } else if (!strcmp(a, "--clusters")) {
      if (num(me, a, v, 1, 1e6, &x)) return -1;
      o->clusters = (int)x;
    } else if (!strcmp(a, "--sigma")) {
      if (num(me, a, v, 1e-9, 1e3, &x)) return -1;
      o->sigma = x;
    } else if (!strcmp(a, "--baseline-seconds")) {
      if (num(me, a, v, 0, 1e9, &x)) return -1;
      o->baseline_s = x;
    } else if (prog == DT_PARALLEL && !strcmp(a, "--sample")) {
      if (num(me, a, v, 1, 1e7, &x)) return -1;
      o->sample = (long)x;
    } else if (prog == DT_PARALLEL && !strcmp(a, "--zone")) {
      if (num(me, a, v, 0, 1e3, &x)) return -1;
      o->zone = x;
    } else if (!strcmp(a, "--dist") || !strcmp(a, "--input") || !strcmp(a, "--write-points") ||
               !strcmp(a, "--triangles") || !strcmp(a, "--compare") || !strcmp(a, "--csv") ||
               !strcmp(a, "--tag")) {
      if (!v) {
        opt_error("%s: error: %s needs a value\n", me, a);
        return -1;
      }
      const char **dst = !strcmp(a, "--dist")           ? &o->dist
                         : !strcmp(a, "--input")        ? &o->input
                         : !strcmp(a, "--write-points") ? &o->write_points
                         : !strcmp(a, "--triangles")    ? &o->triangles
                         : !strcmp(a, "--compare")      ? &o->compare
                         : !strcmp(a, "--csv")          ? &o->csv
                                                        : &o->tag;
      *dst = v;
    } else if (!strcmp(a, "--quiet") || !strcmp(a, "--no-check") || !strcmp(a, "--binary") ||
               (prog == DT_PARALLEL && !strcmp(a, "--phases"))) {
      used = 0;
      if (!strcmp(a, "--quiet"))
        o->quiet = 1;
      else if (!strcmp(a, "--no-check"))
        o->no_check = 1;
      else if (!strcmp(a, "--phases"))
        o->phases = 1;
      else
        o->binary = 1;
    } else {
      opt_error("%s: error: unknown option '%s' (see --help)\n", me, a);
      return -1;
    }
    i += used;
  }
  static const char *const dists[] = {"uniform", "clustered", "grid", "wide", "graded", "line"};
  size_t d = 0;
  while (d < sizeof dists / sizeof *dists && strcmp(o->dist, dists[d])) d++;
  if (d == sizeof dists / sizeof *dists) {
    opt_error("%s: error: --dist must be uniform, clustered, grid, wide, graded or line, got "
              "'%s'\n", me, o->dist);
    return -1;
  }
  return 0;
}

int dt_load_msg(const dt_opts *o, dt_input *in, char *err, size_t errlen) {
  if (o->input) return dt_read_points(in, o->input, err, errlen);
  size_t n = (size_t)o->points;
  int rc;
  if (!strcmp(o->dist, "uniform"))
    rc = dt_gen_uniform(in, n, o->seed);
  else if (!strcmp(o->dist, "clustered"))
    rc = dt_gen_clustered(in, n, o->seed, o->clusters, o->sigma);
  else if (!strcmp(o->dist, "wide"))
    rc = dt_gen_wide(in, n, o->seed);
  else if (!strcmp(o->dist, "graded"))
    rc = dt_gen_graded(in, n, o->seed);
  else if (!strcmp(o->dist, "line"))
    rc = dt_gen_line(in, n, o->seed);
  else
    rc = dt_gen_grid(in, n);
  if (rc) snprintf(err, errlen, "out of memory for %zu points", n);
  return rc;
}

int dt_load(const dt_opts *o, dt_input *in, const char *prog) {
  char err[512];
  int rc = dt_load_msg(o, in, err, sizeof err);
  if (rc) fprintf(stderr, "%s: error: %s\n", prog, err);
  return rc;
}

int dt_finish(const dt_opts *o, const char *prog, const dt_input *in, int32_t *tri, size_t ntri,
              const int32_t *dup, size_t ndup) {
  char err[512];
  int failed = 0;
  if (ndup && !o->quiet) {
    printf("%s: %zu duplicate points skipped:", prog, ndup);
    for (size_t i = 0; i < ndup && i < 10; i++)
      printf(" %d (%.17g, %.17g)", dup[i], in->xy[2 * (size_t)dup[i]],
             in->xy[2 * (size_t)dup[i] + 1]);
    printf("%s\n", ndup > 10 ? " ..." : "");
  } else if (ndup) {
    printf("%s: %zu duplicate points skipped\n", prog, ndup);
  }
  if (o->write_points && dt_write_points(in, o->write_points, o->binary)) {
    fprintf(stderr, "%s: error: cannot write %s\n", prog, o->write_points);
    failed = 1;
  }
  if (o->triangles && dt_write_triangles(o->triangles, tri, ntri)) {
    fprintf(stderr, "%s: error: cannot write %s\n", prog, o->triangles);
    failed = 1;
  }
  if (!o->no_check) {
    dt_check c;
    double t0 = bench_now_ns();
    if (dt_validate(in->xy, in->n, tri, ntri, dup, ndup, &c, err, sizeof err)) {
      fprintf(stderr, "%s: error: INVALID triangulation: %s\n", prog, err);
      failed = 1;
    } else if (c.collinear) {
      printf("%s: check: all %zu distinct points on one line: no triangles (right)\n", prog,
             c.distinct);
    } else {
      printf(
          "%s: check: %zu triangles = 2n-2-h (n %zu, h %zu), counter-clockwise, edges in "
          "at most 2 triangles, hull ok, %zu interior edges locally Delaunay (exact; %.2f s)\n",
          prog, c.triangles, c.distinct, c.hull, c.delaunay_edges, (bench_now_ns() - t0) * 1e-9);
    }
  }
  if (o->compare) {
    int32_t *other;
    size_t nother;
    if (dt_read_triangles(o->compare, &other, &nother, err, sizeof err)) {
      fprintf(stderr, "%s: error: %s\n", prog, err);
      failed = 1;
    } else {
      size_t diff = dt_compare_sets(tri, ntri, other, nother, err, sizeof err);
      printf("%s: compare with %s: %zu vs %zu triangles, %zu differ%s%s\n", prog, o->compare, ntri,
             nother, diff, diff ? ": " : " (the same set)", diff ? err : "");
      if (diff) failed = 1;
      free(other);
    }
  }
  return failed;
}

int dt_report(const dt_opts *o, const char *mode, int workers, int schedulers, const dt_times *avg,
              const dt_times *max, size_t triangles, int64_t postponed, int64_t gathered) {
  double eff = o->baseline_s > 0 && max->total > 0 ? o->baseline_s / (workers * max->total) : 0;
  char tag[64];
  if (o->tag)
    snprintf(tag, sizeof tag, "%s", o->tag);
  else if (!strcmp(mode, "serial"))
    snprintf(tag, sizeof tag, "Serial");
  else if (!strcmp(mode, "cgal"))
    snprintf(tag, sizeof tag, "CGAL");
  else
    snprintf(tag, sizeof tag, "%d", workers);
  static const char *const cols[] = {
      "tag",          "mode",          "workers",      "schedulers", "points",  "dist",
      "compute_s",    "worker_comm_s", "sched_comm_s", "wait_s",     "total_s", "max_sched_comm_s",
      "points_per_s", "efficiency",    "triangles",    "postponed",  "gathered"};
  enum { NC = sizeof cols / sizeof *cols };
  char v[NC][80];
  snprintf(v[0], 80, "%.60s", tag);
  snprintf(v[1], 80, "%s", mode);
  snprintf(v[2], 80, "%d", workers);
  snprintf(v[3], 80, "%d", schedulers);
  snprintf(v[4], 80, "%ld", o->points);
  snprintf(v[5], 80, "%.60s", o->input ? "file" : o->dist);
  snprintf(v[6], 80, "%.4f", avg->compute);
  snprintf(v[7], 80, "%.4f", avg->wcomm);
  snprintf(v[8], 80, "%.4f", avg->scomm);
  snprintf(v[9], 80, "%.4f", avg->wait);
  snprintf(v[10], 80, "%.4f", max->total);
  snprintf(v[11], 80, "%.4f", max->scomm);
  snprintf(v[12], 80, "%.0f", max->total > 0 ? (double)o->points / max->total : 0);
  snprintf(v[13], 80, "%.3f", eff);
  snprintf(v[14], 80, "%zu", triangles);
  snprintf(v[15], 80, "%lld", (long long)postponed);
  snprintf(v[16], 80, "%lld", (long long)gathered);
  const char *cells[NC];
  for (int c = 0; c < NC; c++) cells[c] = v[c];
  return bench_row_append("delaunay", "delaunay: seconds per worker (average over workers; total = "
                          "slowest worker)", NC, cols, cells, o->csv);
}

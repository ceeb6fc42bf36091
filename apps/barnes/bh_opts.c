/* bh_opts.c: what both Barnes-Hut programs share around the physics: options and --help,
 * the per-step diagnostics line, positions files, and the timing report (table + CSV row). */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"
#include "bh.h"

void bh_usage(FILE *f, int prog) {
  static const char *const name[] = {"barnes", "barnes-serial", "barnes-mpi"};
  static const char *const how[] = {
      "  SPMD: mpirun -np N barnes --antheap-schedulers S [--antheap-fanout F] (N - S workers,\n"
      "  any number); MPMD: mpirun -np S antheapd : -np W barnes. Each worker's locally essential\n"
      "  trees move as antheap regions (sys_send), pointers and all.\n",
      "  One process, no MPI: the serial baseline. Every parallel run, on any number of workers,\n"
      "  reproduces its positions bit for bit (--compare).\n",
      "  Plain MPI, no antheap: mpirun -np W barnes-mpi. Each worker's locally essential trees are\n"
      "  marshalled into MPI messages (MPI_Alltoallv) and their pointers rebuilt on arrival.\n"};
  fprintf(f,
          "usage: %s [options]\n"
          "  3-D Barnes-Hut (Myrmics section 6.3): Plummer bodies, leapfrog (kick-drift-kick);\n"
          "  in parallel, every step: domains of equal weight along the Morton curve, the top of\n"
          "  the tree shared by all, and each peer sent the cells its bodies may open.\n"
          "%s"
          "  --bodies N         bodies (default 16384)\n"
          "  --seed S           Plummer generator seed (default 1)\n"
          "  --steps K          time steps (default 10)\n"
          "  --theta T          opening angle (default 0.5; cells open when size/d > T)\n"
          "  --dt D             time step (default 0.025)\n"
          "  --eps E            Plummer softening length (default 0.025)\n"
          "  --positions FILE   write the final positions, \"id x y z\" sorted by id\n"
          "  --csv FILE         append the timing row to FILE (header when new)\n"
          "  --tag TEXT         x label of the row in plots (default: workers)\n"
          "  --figure X         plot the row belongs to (e: one scheduler, f: hierarchy)\n"
          "  --baseline-seconds T  serial time of the same run, for parallel efficiency\n"
          "  --quiet            no per-step lines\n"
          "%s"
          "%s"
          "  --help             this text\n"
          "Output: per step, the energy drift (E-E0)/|E0|, the momentum drift |P-P0| and the\n"
          "interactions per body; at the end, time per worker split into computation, worker\n"
          "communication, scheduler communication and barrier wait, and bodies/second/worker.\n%s%s%s",
          name[prog], how[prog],
          prog != 1 ? "  --threads T        hybrid: T threads in each worker rank share its sort by\n"
                      "                     key, its tree, the making of its LETs and its walk\n"
                      "                     (bodies in chunks taken in turn); MPI, the moves and the\n"
                      "                     rest of the step stay on one thread a rank (default 1)\n"
                    : "",
          prog == 1 ? "  --compare FILE     compare the final positions with FILE (from barnes)\n"
                      "  --tol X            largest |dx| --compare accepts (default 0: bit for bit)\n"
                    : "",
          prog == 0 ? BENCH_ANTHEAP_HELP : "",
          prog != 1 ? "Environment (every worker the same):\n"
                      "  BARNES_PHASES=1|2|3  the phases' table (slowest, average, fastest worker);\n"
                      "                       2: each step's walk per worker too; 3: the parts of\n"
                      "                       the decomposition and of the tree\n"
                      "  BARNES_WEIGHTS=W     what the cut weighs a body by: time (its last walk,\n"
                      "                       the default), work (its interactions) or scaled\n"
                      "  BARNES_STEAL=S       share S (up to 0.5) of each worker's weight, its\n"
                      "                       tail, also walked by the next worker when that one\n"
                      "                       is done first (default 0: off; one thread a rank)\n"
                    : "",
          prog == 0 ? "  BARNES_POOL=0|1      the walk pooled (the default where every worker maps\n"
                      "                       one memory, --antheap-share host on one host): a\n"
                      "                       worker done with its bodies walks chunks of another's\n"
                      "                       from that one's tree (with --threads, every thread\n"
                      "                       of the rank); 0: each walks its own; 1 says why\n"
                      "                       where it cannot be used\n"
                      "  BARNES_LETS=0|1      1: LETs made and moved even where every worker's\n"
                      "                       walk is pooled with every other's; 0 (the default):\n"
                      "                       those read the peers' trees where they lie\n"
                    : "");
}

static int num(const char *opt, const char *v, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double x = v ? strtod(v, &end) : 0;
  if (!v || errno || *end || end == v || !(x >= lo && x <= hi)) {
    fprintf(stderr, "barnes: error: %s needs a number in [%g, %g], got '%s'\n", opt, lo, hi,
            v ? v : "");
    return -1;
  }
  *out = x;
  return 0;
}

int bh_opts_parse(int argc, char **argv, int prog, bh_opts *o) {
  bool serial = prog == 1;
  *o = (bh_opts){.bodies = 16384, .steps = 10, .seed = 1, .theta = 0.5,
                 .dt = 0.025, .eps = 0.025, .threads = 1};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    double x;
    int used = 1;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      bh_usage(stdout, prog);
      return 1;
    } else if (!strcmp(a, "--bodies")) {
      if (num(a, v, 1, 1e9, &x)) return -1;
      o->bodies = (long)x;
    } else if (!strcmp(a, "--seed")) {
      if (num(a, v, 0, 1.8e19, &x)) return -1;
      o->seed = (uint64_t)x;
    } else if (!strcmp(a, "--steps")) {
      if (num(a, v, 0, 1e9, &x)) return -1;
      o->steps = (long)x;
    } else if (!strcmp(a, "--theta")) {
      if (num(a, v, 0, 2, &x)) return -1;
      o->theta = x;
    } else if (!strcmp(a, "--dt")) {
      if (num(a, v, 0, 1e6, &x)) return -1;
      o->dt = x;
    } else if (!strcmp(a, "--eps")) {
      if (num(a, v, 0, 1e6, &x)) return -1;
      o->eps = x;
    } else if (!strcmp(a, "--baseline-seconds")) {
      if (num(a, v, 0, 1e9, &x)) return -1;
      o->baseline_s = x;
    } else if (serial && !strcmp(a, "--tol")) {
      if (num(a, v, 0, 1e9, &x)) return -1;
      o->tol = x;
    } else if (!strcmp(a, "--positions") || !strcmp(a, "--csv") || !strcmp(a, "--tag") ||
               !strcmp(a, "--figure") || (serial && !strcmp(a, "--compare"))) {
      if (!v) {
        fprintf(stderr, "barnes: error: %s needs a value\n", a);
        return -1;
      }
      const char **dst = !strcmp(a, "--positions") ? &o->positions
                         : !strcmp(a, "--csv")     ? &o->csv
                         : !strcmp(a, "--tag")     ? &o->tag
                         : !strcmp(a, "--figure")  ? &o->figure
                                                   : &o->compare;
      *dst = v;
    } else if (prog != 1 && !strcmp(a, "--threads")) {
      if (num(a, v, 1, 1024, &x) || x != (int)x) return -1;
      o->threads = (int)x;
    } else if (!strcmp(a, "--quiet")) {
      used = 0;
      o->quiet = 1;
    } else {
      fprintf(stderr, "barnes: error: unknown option '%s' (see --help)\n", a);
      return -1;
    }
    i += used;
  }
  return 0;
}

void bh_print_step(long step, double t, const double s0[5], const double s[5],
                   double interactions_per_body) {
  double e0 = s0[0] + s0[1], e = s[0] + s[1], dp = 0;
  for (int d = 0; d < 3; d++) dp += (s[2 + d] - s0[2 + d]) * (s[2 + d] - s0[2 + d]);
  printf("step %4ld  t %8.4f  E %+.10f  dE/|E0| %+.3e  |dP| %.3e  interactions/body %.1f\n",
         step, t, e, (e - e0) / fabs(e0), sqrt(dp), interactions_per_body);
}

static int by_id(const void *a, const void *b) {
  int64_t x = ((const bh_body *)a)->id, y = ((const bh_body *)b)->id;
  return (x > y) - (x < y);
}

int bh_write_positions(const char *path, bh_body *b, size_t n) {
  qsort(b, n, sizeof *b, by_id);
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "barnes: error: cannot write %s: %s\n", path, strerror(errno));
    return -1;
  }
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%lld %.17g %.17g %.17g\n", (long long)b[i].id, b[i].pos[0], b[i].pos[1],
            b[i].pos[2]);
  return fclose(f) ? -1 : 0;
}

int bh_compare_positions(const char *path, bh_body *b, size_t n, double *worst, double *rel) {
  qsort(b, n, sizeof *b, by_id);
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(stderr, "barnes: error: cannot read %s: %s\n", path, strerror(errno));
    return -1;
  }
  *worst = *rel = 0;
  size_t i = 0;
  long long id;
  double x[3];
  int rc = 0;
  while (fscanf(f, "%lld %lf %lf %lf", &id, &x[0], &x[1], &x[2]) == 4) {
    if (i >= n || id != b[i].id) {
      rc = -1;
      break;
    }
    double len = 0, e2 = 0;
    for (int d = 0; d < 3; d++) {
      double e = fabs(x[d] - b[i].pos[d]);
      if (!(e <= *worst)) *worst = e; /* NaN propagates */
      e2 += e * e, len += b[i].pos[d] * b[i].pos[d];
    }
    double r = len > 0 ? sqrt(e2 / len) : sqrt(e2);
    if (!(r <= *rel)) *rel = r;
    i++;
  }
  fclose(f);
  if (i != n) rc = -1;
  if (rc) fprintf(stderr, "barnes: error: %s holds another set of bodies\n", path);
  return rc;
}

int bh_report(const bh_opts *o, const char *mode, int workers, int schedulers,
              const bh_times *avg, const bh_times *max, double interactions, double drift) {
  double work = (double)o->bodies * (double)o->steps;
  double bpsw = max->total > 0 ? work / max->total / workers : 0;
  double eff = o->baseline_s > 0 && max->total > 0 ? o->baseline_s / (workers * max->total) : 0;
  char tag[64];
  snprintf(tag, sizeof tag, "%s", o->tag ? o->tag : "");
  if (!o->tag) snprintf(tag, sizeof tag, "%s", !strcmp(mode, "serial") ? "Serial" : "");
  if (!tag[0] && o->threads > 1) snprintf(tag, sizeof tag, "%dx%d", workers, o->threads);
  if (!tag[0]) snprintf(tag, sizeof tag, "%d", workers);
  static const char *const cols[] = {
      "figure", "tag", "mode", "workers", "schedulers", "bodies", "steps", "theta",
      "compute_s", "worker_comm_s", "sched_comm_s", "barrier_s", "total_s", "max_sched_comm_s",
      "bodies_per_s_per_worker", "efficiency", "interactions_per_body", "energy_drift"};
  enum { NC = sizeof cols / sizeof *cols };
  char v[NC][80];
  snprintf(v[0], 80, "%.60s", o->figure ? o->figure : "-");
  snprintf(v[1], 80, "%s", tag);
  snprintf(v[2], 80, "%s", mode);
  snprintf(v[3], 80, "%d", workers);
  snprintf(v[4], 80, "%d", schedulers);
  snprintf(v[5], 80, "%ld", o->bodies);
  snprintf(v[6], 80, "%ld", o->steps);
  snprintf(v[7], 80, "%g", o->theta);
  snprintf(v[8], 80, "%.4f", avg->compute);
  snprintf(v[9], 80, "%.4f", avg->wcomm);
  snprintf(v[10], 80, "%.4f", avg->scomm);
  snprintf(v[11], 80, "%.4f", avg->barrier);
  snprintf(v[12], 80, "%.4f", max->total);
  snprintf(v[13], 80, "%.4f", max->scomm);
  snprintf(v[14], 80, "%.0f", bpsw);
  snprintf(v[15], 80, "%.3f", eff);
  snprintf(v[16], 80, "%.1f", interactions);
  snprintf(v[17], 80, "%.3e", drift);
  const char *cells[NC];
  for (int c = 0; c < NC; c++) cells[c] = v[c];
  return bench_row_append("barnes", "barnes: seconds per worker (average over workers; total = "
                          "slowest worker's step loop)", NC, cols, cells, o->csv);
}

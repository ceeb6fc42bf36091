/* listx.c: the driver every listx variant shares (listx.h): options, the round-robin
 * schedule, the node modification and its verification, the timed repetitions, the report
 * line and the CSV row. Talks to no communication library: the runtime and the variants
 * come from main_mpi.c (antheap, mpi-rma, mpi-pack) and main_shmem.c (shmem).
 */
#include "listx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"

#define LX_MAX_WORKERS 65536

/* ---- options ----------------------------------------------------------------------- */

/* Whether this process should print messages meant to appear once (the job's first rank;
 * the launcher tells it before any library is initialized). */
static int first_rank(void) {
  const char *r = getenv("OMPI_COMM_WORLD_RANK");
  if (!r) r = getenv("PMIX_RANK");
  return !r || atoi(r) == 0;
}

static void usage(FILE *f, const char *prog, const char *known) {
  fprintf(f,
          "usage: %s [options]\n"
          "  The list-exchange benchmark (Myrmics section 6.5, Fig. 4g-h): every worker builds\n"
          "  a list of N nodes; in round-robin stages separated by barriers, partners fetch\n"
          "  each other's whole list, modify every node and give it back; every worker then\n"
          "  verifies its own list (exit status 1 when a modification is missing, doubled or\n"
          "  a node is lost). Times are build + exchange, median and min over repetitions.\n"
          "options:\n"
          "  --nodes N         nodes per worker (default 30000)\n"
          "  --node-size S     bytes per node, the link included, a multiple of 8, at least\n"
          "                    %zu + one bit per worker (default 256)\n"
          "  --reps R          repetitions per variant (default 3)\n"
          "  --partners K      exchange with K partners only (the first K round-robin stages)\n"
          "                    instead of all W-1: the exchange then costs each worker the\n"
          "                    same whatever W, for runs past 512 workers (default: all)\n"
          "  --variants LIST   comma-separated, from: %s (default: all of them)\n"
          "  --threads T       the *-threads variants (hybrid): T threads per worker rank, each\n"
          "                    one worker of the exchange (worker = rank x T + thread), so that\n"
          "                    2 ranks x 16 threads do the work of 32 ranks; a partner in the\n"
          "                    same rank takes the list by pointer, one in another rank by\n"
          "                    sys_send_on/sys_recv_on, each crossing pair of threads on a\n"
          "                    channel both ranks derive from the schedule (default 1);\n"
          "                    antheap-threads-bundled moves a rank pair's crossing lists of a\n"
          "                    stage together instead, one swap each way by one thread a side\n"
          "  --csv FILE        append one row per variant to FILE (header when new)\n"
          "  --net LABEL       interconnect label for the CSV (default shm)\n"
          "  --quiet           no report line (errors still go to stderr)\n"
          "  --corrupt         test only: worker 1 skips its modification of one node, so the\n"
          "                    verification must fail\n"
          "  --help            this text\n"
          "environment: LISTX_MACHINE prefixes the CSV's machine column (e.g. a box's name);\n"
          "  LISTX_PHASES=1 (antheap variants) prints each worker's fetch, walk and give-back\n"
          "  (*-threads: its moves and walks in and out of its rank; bundled: its waits too)\n"
          "  time per repetition and how its list is laid out; 2 also times a second walk; 3 times\n"
          "  the build's slow allocations and the time inside sys_send and sys_recv instead.\n"
          "  LISTX_RUNQ=1 prints per repetition how long the workers' threads waited for a core\n"
          "  (runnable, the core another thread's: /proc/thread-self/schedstat) in the build\n"
          "  and in the exchange, the mean and the largest of the workers.\n",
          prog, LX_HEADER + 1, known);
  if (strstr(known, "antheap")) /* the antheap variants start with sys_init */
    fprintf(f,
            "The antheap variants: --antheap-schedulers S with --antheap-fanout F < S gives\n"
            "hierarchical scheduling; MPMD: mpirun -np S antheapd : -np W %s --variants antheap.\n"
            "%s",
            prog, BENCH_ANTHEAP_HELP);
}

static int parse_long(const char *s, long lo, long hi, long *out) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int lx_parse(int argc, char **argv, lx_opts *o, const char *prog, const char *known) {
  memset(o, 0, sizeof *o);
  o->nodes = 30000;
  o->node_size = 256;
  o->reps = 3;
  o->net = "shm";
  o->threads = 1;
  snprintf(o->variants, sizeof o->variants, "%s", known);
  int loud = first_rank();
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *val = i + 1 < argc ? argv[i + 1] : NULL;
    long v;
#define NEED_VALUE                                                                        \
  do {                                                                                    \
    if (!val) {                                                                           \
      if (loud) fprintf(stderr, "%s: %s needs a value (see --help)\n", prog, a);         \
      return -1;                                                                          \
    }                                                                                     \
    i++;                                                                                  \
  } while (0)
#define BAD_VALUE(what)                                                                   \
  do {                                                                                    \
    if (loud) fprintf(stderr, "%s: %s: '%s' is not %s\n", prog, a, val, what);           \
    return -1;                                                                            \
  } while (0)
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      if (loud) usage(stdout, prog, known);
      return 1;
    } else if (!strcmp(a, "--nodes")) {
      NEED_VALUE;
      if (parse_long(val, 1, 1L << 31, &v)) BAD_VALUE("a count in 1..2^31");
      o->nodes = v;
    } else if (!strcmp(a, "--node-size")) {
      NEED_VALUE;
      if (parse_long(val, (long)LX_HEADER + 8, 1L << 20, &v) || v % 8)
        BAD_VALUE("a multiple of 8 between 40 and 1 MiB");
      o->node_size = (size_t)v;
    } else if (!strcmp(a, "--reps")) {
      NEED_VALUE;
      if (parse_long(val, 1, 1000, &v)) BAD_VALUE("a count in 1..1000");
      o->reps = (int)v;
    } else if (!strcmp(a, "--partners")) {
      NEED_VALUE;
      if (parse_long(val, 1, LX_MAX_WORKERS, &v)) BAD_VALUE("a count in 1..65536");
      o->partners = (int)v;
    } else if (!strcmp(a, "--threads")) {
      NEED_VALUE;
      if (parse_long(val, 1, 1024, &v)) BAD_VALUE("a count in 1..1024");
      o->threads = (int)v;
    } else if (!strcmp(a, "--variants")) {
      NEED_VALUE;
      snprintf(o->variants, sizeof o->variants, "%s", val);
      /* every name must be known */
      char copy[256];
      snprintf(copy, sizeof copy, "%s", val);
      for (char *save, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char k[256];
        snprintf(k, sizeof k, "%s", known);
        int found = 0;
        for (char *s2, *u = strtok_r(k, ",", &s2); u; u = strtok_r(NULL, ",", &s2))
          found |= !strcmp(t, u);
        if (!found) {
          if (loud)
            fprintf(stderr, "%s: unknown variant '%s' (this binary has: %s)\n", prog, t, known);
          return -1;
        }
      }
    } else if (!strcmp(a, "--csv")) {
      NEED_VALUE;
      o->csv = val;
    } else if (!strcmp(a, "--net")) {
      NEED_VALUE;
      o->net = val;
    } else if (!strcmp(a, "--quiet")) {
      o->quiet = 1;
    } else if (!strcmp(a, "--corrupt")) {
      o->corrupt = 1;
    } else if (!strncmp(a, "--antheap-", 10)) {
      /* the launcher's: left in argv for sys_init; the fan-out is noted for the CSV */
      const char *eq = strchr(a, '=');
      int takes = strcmp(a, "--antheap-topology") != 0; /* every other one takes a value */
      const char *arg = eq ? eq + 1 : NULL;
      if (takes && !eq && val) arg = argv[++i];
      if (!strncmp(a, "--antheap-fanout", 16) && arg && parse_long(arg, 1, 1000000, &v) == 0)
        o->fanout = (int)v;
    } else {
      if (loud) fprintf(stderr, "%s: unknown option '%s' (see --help)\n", prog, a);
      return -1;
    }
#undef NEED_VALUE
#undef BAD_VALUE
  }
  return 0;
}

int lx_wants(const lx_opts *o, const char *name) {
  char copy[256];
  snprintf(copy, sizeof copy, "%s", o->variants);
  for (char *save, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
    if (!strcmp(t, name)) return 1;
  return 0;
}

/* ---- schedule ---------------------------------------------------------------------- */

/* The circle method over m = n rounded up to even players: m - 1 stages; in stage s, player
 * i < m - 1 meets (2s - i) mod (m - 1), or player m - 1 when that is itself. A partner of
 * index n (the extra player of an odd n) is a bye. */
int lx_stages(int n) { return n < 2 ? 0 : (n % 2 ? n : n - 1); }

int lx_partner(int me, int n, int s) {
  if (n < 2) return -1;
  int m = n % 2 ? n + 1 : n, k = m - 1, p;
  if (me == m - 1) {
    p = s % k;  /* the i with 2i = 2s (mod k): k is odd */
  } else {
    p = ((2 * s - me) % k + k) % k;
    if (p == me) p = m - 1;
  }
  return p >= n ? -1 : p;
}

int lx_run_stages(const lx_opts *o, int n) {
  int all = lx_stages(n);
  return o->partners && o->partners < all ? o->partners : all;
}

/* ---- nodes ------------------------------------------------------------------------- */

/* The checksum term of visitor v on node (owner, index): splitmix64. */
static uint64_t lx_mix(uint32_t owner, uint32_t index, uint32_t v) {
  uint64_t z = ((uint64_t)owner << 32 | index) * 0x9e3779b97f4a7c15ull + v + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void lx_init_node(const lx_ctx *c, lx_node *x, uint32_t index) {
  memset(x, 0, c->o->node_size);
  x->owner = (uint32_t)c->me;
  x->index = index;
}

void lx_modify(lx_ctx *c, lx_node *x, int peer, uint32_t index) {
  if (x->owner != (uint32_t)peer || x->index != index) {
    if (c->bad++ < 3)
      fprintf(stderr, "listx: worker %d: stage %d: node %u of worker %d's list reads "
              "owner %u index %u\n", c->me, c->stage, index, peer, x->owner, x->index);
    return;
  }
  /* test only: worker 1 "forgets" one node of its first partner's list */
  if (c->o->corrupt && c->me == 1 && c->rep == 0 && c->stage == 0 &&
      index == (uint32_t)(c->o->nodes / 2))
    return;
  x->marks[c->me / 8] |= (uint8_t)(1u << (c->me % 8));
  x->visits++;
  x->sum += lx_mix(x->owner, x->index, (uint32_t)c->me);
}

/* Verify this worker's own list; the number of faults (the first few are printed). The
 * expected visitors are this worker's partners in the stages run: every other worker, or the
 * first --partners K. */
static long lx_verify(lx_ctx *c, const lx_variant *v) {
  long faults = 0, count = 0;
  const long n = c->o->nodes;
  size_t bitmap = c->o->node_size - LX_HEADER;
  uint8_t *want = calloc(bitmap, 1);
  int *who = malloc(sizeof(int) * (size_t)(c->n > 0 ? c->n : 1));
  int nwho = 0;
  if (!want || !who) {
    fprintf(stderr, "listx: worker %d: no memory to verify\n", c->me);
    free(want);
    free(who);
    return 1;
  }
  for (int s = 0; s < lx_run_stages(c->o, c->n); s++) {
    int p = lx_partner(c->me, c->n, s);
    if (p < 0 || (want[p / 8] >> (p % 8)) & 1) continue;
    want[p / 8] |= (uint8_t)(1u << (p % 8));
    who[nwho++] = p;
  }
#define FAULT(...)                                                                        \
  do {                                                                                    \
    if (faults++ < 3) {                                                                   \
      fprintf(stderr, "listx: worker %d: verification FAILED (%s): ", c->me, v->name);  \
      fprintf(stderr, __VA_ARGS__);                                                       \
      fputc('\n', stderr);                                                                \
    }                                                                                     \
  } while (0)
  for (const lx_node *x = v->first(c); x; x = v->next(c, x), count++) {
    if (count >= n) {
      FAULT("more than %ld nodes (a cycle or a duplicated node)", n);
      break;
    }
    if (x->owner != (uint32_t)c->me || x->index != (uint32_t)count) {
      FAULT("node %ld reads owner %u index %u (lost or duplicated nodes)", count, x->owner,
            x->index);
      continue;
    }
    uint64_t sum = 0;
    for (int i = 0; i < nwho; i++) sum += lx_mix(x->owner, x->index, (uint32_t)who[i]);
    int marks_ok = memcmp(x->marks, want, bitmap) == 0;
    if (x->visits != (uint32_t)nwho || !marks_ok || x->sum != sum)
      FAULT("node %ld: %u visits of %d expected, marks %s, checksum %s", count, x->visits,
            nwho, marks_ok ? "complete" : "WRONG", x->sum == sum ? "right" : "WRONG");
  }
  if (count < n) FAULT("%ld nodes of %ld (nodes lost)", count, n);
#undef FAULT
  free(want);
  free(who);
  return faults;
}

/* ---- the run ----------------------------------------------------------------------- */

static void csv_row(const lx_opts *o, const lx_rt *rt, const char *variant, double med,
                    double min, double build, double exch, int ok) {
  struct stat st;
  int fresh = stat(o->csv, &st) != 0 || st.st_size == 0;
  FILE *f = fopen(o->csv, "a");
  if (!f) {
    fprintf(stderr, "listx: cannot write %s: %s\n", o->csv, strerror(errno));
    return;
  }
  if (fresh)
    fprintf(f, "machine,net,variant,workers,schedulers,fanout,ranks,nodes,node_size,reps,"
               "median_s,min_s,build_median_s,exchange_median_s,verified,partners,threads\n");
  const char *label = getenv("LISTX_MACHINE");
  char machine[512];
  snprintf(machine, sizeof machine, "%s%s%s", label ? label : "", label ? ": " : "",
           bench_machine());
  for (char *p = machine; *p; p++)
    if (*p == ',') *p = ';';
  int fanout = rt->schedulers ? (o->fanout ? o->fanout : 8) : 0;
  int t = rt->threads > 1 ? rt->threads : 1; /* ranks: the worker ranks (n / t) + schedulers */
  fprintf(f, "%s,%s,%s,%d,%d,%d,%d,%ld,%zu,%d,%.6f,%.6f,%.6f,%.6f,%s,%d,%d\n", machine, o->net,
          variant, rt->n, rt->schedulers, fanout, rt->n / t + rt->schedulers, o->nodes,
          o->node_size, o->reps, med, min, build, exch, ok ? "yes" : "NO",
          lx_run_stages(o, rt->n), t);
  fclose(f);
}

/* LISTX_RUNQ=1: a worker thread's run-queue wait (ms) since the last call. */
static double runq_lap(double *mark) {
  double t = bench_runq_wait_ns(), d = *mark >= 0 && t >= 0 ? (t - *mark) * 1e-6 : 0;
  *mark = t;
  return d;
}

/* LISTX_RUNQ=1: worker 0 prints the repetition's run-queue waits (a collective). */
static void report_runq(const lx_rt *rt, const char *variant, int rep, double build_ms,
                        double exch_ms) {
  double bmax = rt->max(build_ms), emax = rt->max(exch_ms);
  long bsum = rt->sum((long)(build_ms * 1000)), esum = rt->sum((long)(exch_ms * 1000));
  if (rt->me == 0)
    printf("listx: %s rep %d: waited for a core: build mean %.2f ms, largest %.2f; exchange "
           "mean %.2f ms, largest %.2f\n",
           variant, rep, (double)bsum / 1000 / rt->n, bmax, (double)esum / 1000 / rt->n, emax);
}

static int run_variant(const lx_opts *o, const lx_rt *rt, const lx_variant *v) {
  lx_ctx c = {.o = o, .me = rt->me, .n = rt->n};
  double *tot = calloc((size_t)o->reps, sizeof *tot), *bld = calloc((size_t)o->reps, sizeof *bld),
         *exc = calloc((size_t)o->reps, sizeof *exc);
  long faults = 0, anomalies = 0;
  if (v->setup && v->setup(&c)) {
    fprintf(stderr, "listx: worker %d: %s: set-up failed\n", rt->me, v->name);
    return -1;
  }
  /* (a collective per repetition: on only where every worker has it, whatever each one's
   * environment says) */
  int runq = rt->sum(getenv("LISTX_RUNQ") ? 1 : 0) == rt->n;
  for (int r = 0; r < o->reps; r++) {
    c.rep = r;
    c.bad = 0;
    rt->barrier();
    double mark = -1, build_ms = 0, exch_ms = 0;
    if (runq) runq_lap(&mark);
    double t0 = bench_now_ns();
    if (v->build(&c)) {
      fprintf(stderr, "listx: worker %d: %s: building the list failed\n", rt->me, v->name);
      return -1;
    }
    rt->barrier();
    double t1 = bench_now_ns();
    if (runq) build_ms = runq_lap(&mark);
    for (int s = 0; s < lx_run_stages(o, rt->n); s++) {
      c.stage = s;
      int peer = lx_partner(rt->me, rt->n, s);
      if (peer >= 0 && v->exchange(&c, peer)) {
        fprintf(stderr, "listx: worker %d: %s: exchange with worker %d failed\n", rt->me,
                v->name, peer);
        return -1;
      }
      rt->barrier();
    }
    double t2 = bench_now_ns();
    if (runq) exch_ms = runq_lap(&mark), report_runq(rt, v->name, r, build_ms, exch_ms);
    bld[r] = rt->max((t1 - t0) * 1e-9);
    exc[r] = rt->max((t2 - t1) * 1e-9);
    tot[r] = rt->max((t2 - t0) * 1e-9);
    faults += rt->sum(lx_verify(&c, v));
    anomalies += rt->sum(c.bad);
    if (v->release) v->release(&c);
  }
  if (v->teardown) v->teardown(&c);
  double min = tot[0];
  for (int r = 1; r < o->reps; r++)
    if (tot[r] < min) min = tot[r];
  double med = bench_median(tot, (size_t)o->reps), bmed = bench_median(bld, (size_t)o->reps),
         emed = bench_median(exc, (size_t)o->reps);
  int ok = faults == 0 && anomalies == 0;
  if (rt->me == 0) {
    if (!o->quiet) {
      printf("listx: %-8s %3d workers", v->name, rt->n);
      if (rt->threads > 1) printf(" (%d ranks x %d threads)", rt->n / rt->threads, rt->threads);
      if (rt->schedulers) printf(" + %d sched", rt->schedulers);
      if (o->partners) printf(", %d partners", lx_run_stages(o, rt->n));
      printf(", %ld nodes x %zu B, %d reps: median %.4f s (build %.4f, exchange %.4f), "
             "min %.4f s, %s\n",
             o->nodes, o->node_size, o->reps, med, bmed, emed, min,
             ok ? "verified" : "verification FAILED");
      fflush(stdout);
    }
    if (!ok)
      fprintf(stderr, "listx: %s: verification FAILED: %ld faulty nodes, %ld anomalies\n",
              v->name, faults, anomalies);
    if (o->csv) csv_row(o, rt, v->name, med, min, bmed, emed, ok);
  }
  free(tot);
  free(bld);
  free(exc);
  return ok ? 0 : 1;
}

int lx_run(const lx_opts *o, const lx_rt *rt, const lx_variant *const *vs, int nv) {
  if (rt->n > LX_MAX_WORKERS || (size_t)(rt->n + 7) / 8 > o->node_size - LX_HEADER) {
    if (rt->me == 0)
      fprintf(stderr, "listx: %d workers need nodes of at least %zu bytes\n", rt->n,
              LX_HEADER + (size_t)(rt->n + 7) / 8);
    return 2;
  }
  int status = 0;
  for (int i = 0; i < nv; i++) {
    if (!lx_wants(o, vs[i]->name)) continue;
    int rc = run_variant(o, rt, vs[i]);
    if (rc < 0) rt->abort(2); /* the partners would wait for this worker forever */
    if (rc) status = 1;
  }
  return status;
}

/* bench_wake.c: how late a sleeping process wakes, alone and beside busy ones. antheap's ranks
 * wait by polling MPI and sleeping short naps (src/common/idle.h: 20 us and up); a nap that
 * lasts a timer tick, or a woken rank that waits for a busy core's time slice, stretches every
 * handshake. For each load L (spinning processes, bound one a core from core 0) and each nap d,
 * the sleeper (not bound, as a scheduler rank beside bound workers; --bind-sleeper C binds it
 * to core C, as a worker sharing its core) naps N times; the table gives the percentiles of
 * how much longer than d each nap took, and the sleeper's run-queue wait per nap
 * (/proc/thread-self/schedstat: the time it was runnable but not running). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#endif
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_LIST 16

static void usage(FILE *f) {
  fprintf(f,
          "usage: bench-wake [--naps LIST] [--loads LIST] [--count N] [--bind-sleeper C]\n"
          "                  [--csv FILE]\n"
          "How much longer than asked a nanosleep takes, with L processes spinning one a core\n"
          "(cores 0..L-1) beside the sleeper, and how long the woken sleeper waited for a core.\n"
          "  --naps LIST       comma-separated naps in microseconds (default 20,100,1000)\n"
          "  --loads LIST      comma-separated spinner counts, at most one a core; 'all' is one\n"
          "                    a core (default 0,all)\n"
          "  --count N         naps per row (default 2000)\n"
          "  --bind-sleeper C  bind the sleeper to core C (default: not bound)\n"
          "  --csv FILE        also write the table as CSV (default results/bench-wake.csv)\n");
}

static void die(const char *what) {
  fprintf(stderr, "bench-wake: error: %s: %s\n", what, strerror(errno));
  exit(1);
}

/* A comma-separated list of non-negative integers ('all': ncpu) into v; its length, or -1. */
static int parse_list(const char *s, long ncpu, long *v) {
  int n = 0;
  char *copy = strdup(s), *save = NULL;
  if (!copy) die("out of memory");
  for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char *end;
    long x = !strcmp(tok, "all") ? ncpu : strtol(tok, &end, 10);
    if (n == MAX_LIST || (strcmp(tok, "all") && (*end || x < 0))) {
      free(copy);
      return -1;
    }
    v[n++] = x;
  }
  free(copy);
  return n;
}

static int bind_to(long core) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET((int)core, &set);
  return sched_setaffinity(0, sizeof set, &set);
}

/* L children spinning, child i bound to core i mod ncpu; their pids into pid. */
static void start_spinners(long L, long ncpu, pid_t *pid) {
  for (long i = 0; i < L; i++) {
    pid[i] = fork();
    if (pid[i] < 0) die("fork");
    if (pid[i] == 0) {
      if (bind_to(i % ncpu)) _exit(1); /* (its row then has a spinner fewer) */
      for (volatile unsigned long k = 0;; k++) {
      }
    }
  }
}

static void stop_spinners(long L, const pid_t *pid) {
  for (long i = 0; i < L; i++) kill(pid[i], SIGKILL);
  for (long i = 0; i < L; i++) waitpid(pid[i], NULL, 0);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double pct(const double *sorted, size_t n, double p) {
  size_t i = (size_t)(p * (double)(n - 1) + 0.5);
  return sorted[i < n ? i : n - 1];
}

/* n naps of nap_us; late[i]: microseconds past the nap; *runq_us: run-queue wait per nap. */
static void naps(long nap_us, size_t n, double *late, double *runq_us) {
  struct timespec ts = {nap_us / 1000000, (nap_us % 1000000) * 1000};
  double w0 = bench_runq_wait_ns();
  for (size_t i = 0; i < n; i++) {
    double t0 = bench_now_ns();
    nanosleep(&ts, NULL);
    late[i] = (bench_now_ns() - t0) * 1e-3 - (double)nap_us;
  }
  double w1 = bench_runq_wait_ns();
  *runq_us = w0 < 0 || w1 < 0 ? -1 : (w1 - w0) * 1e-3 / (double)n;
}

int main(int argc, char **argv) {
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN), nap[MAX_LIST] = {20, 100, 1000},
       load[MAX_LIST] = {0, ncpu}, count = 2000, bind = -1;
  int nnaps = 3, nloads = 2;
  const char *csv = "results/bench-wake.csv";
  static const struct option opts[] = {{"naps", 1, 0, 'n'},  {"loads", 1, 0, 'l'},
                                       {"count", 1, 0, 'c'}, {"bind-sleeper", 1, 0, 'b'},
                                       {"csv", 1, 0, 'o'},   {"help", 0, 0, 'h'},
                                       {0, 0, 0, 0}};
  for (int o, at = 0; (o = getopt_long(argc, argv, "h", opts, &at)) != -1; at = 0) {
    char *end = NULL;
    switch (o) {
    case 'n': nnaps = parse_list(optarg, ncpu, nap); break;
    case 'l': nloads = parse_list(optarg, ncpu, load); break;
    case 'c': count = strtol(optarg, &end, 10); break;
    case 'b': bind = strtol(optarg, &end, 10); break;
    case 'o': csv = optarg; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
    int big = 0;
    for (int l = 0; l < nloads; l++) big |= load[l] > ncpu;
    if (nnaps <= 0 || nloads <= 0 || (end && *end) || count < 1 || bind >= ncpu || bind < -1 ||
        big) {
      fprintf(stderr, "bench-wake: error: bad value for --%s: %s\n", opts[at].name, optarg);
      usage(stderr);
      return 2;
    }
  }
  if (bind >= 0 && bind_to(bind)) die("binding the sleeper");
  double *late = malloc((size_t)count * sizeof *late);
  pid_t *pid = malloc((size_t)(ncpu > 0 ? ncpu : 1) * MAX_LIST * sizeof *pid);
  if (!late || !pid) die("out of memory");
  static const char *const cols[] = {"spinners", "nap_us", "late_p50_us", "late_p90_us",
                                     "late_p99_us", "late_max_us", "runq_us_per_nap"};
  char title[160];
  snprintf(title, sizeof title, "bench-wake: %ld cores, %ld naps a row, sleeper %s", ncpu, count,
           bind >= 0 ? "bound" : "not bound");
  bench_table *t = bench_table_new(title, 7, cols);
  for (int l = 0; l < nloads; l++) {
    start_spinners(load[l], ncpu, pid);
    for (int k = 0; k < nnaps; k++) {
      double runq;
      naps(nap[k], (size_t)count, late, &runq);
      qsort(late, (size_t)count, sizeof *late, cmp_double);
      char c[7][32];
      snprintf(c[0], 32, "%ld", load[l]);
      snprintf(c[1], 32, "%ld", nap[k]);
      snprintf(c[2], 32, "%.1f", pct(late, (size_t)count, 0.5));
      snprintf(c[3], 32, "%.1f", pct(late, (size_t)count, 0.9));
      snprintf(c[4], 32, "%.1f", pct(late, (size_t)count, 0.99));
      snprintf(c[5], 32, "%.1f", late[count - 1]);
      snprintf(c[6], 32, "%.1f", runq);
      const char *row[7] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
      bench_table_row(t, row);
    }
    stop_spinners(load[l], pid);
  }
  free(late), free(pid);
  return bench_table_finish(t, csv) ? 1 : 0;
}

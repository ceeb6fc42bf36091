/* bench_fault.c: what first touching memory costs when P processes do it at once, for the ways
 * a GAS can be backed: one memory object shared by all (antheap's shared GAS today), one memory
 * object per process mapped shared, and private anonymous memory (a private GAS). Each of P
 * forked processes maps its own MiB-sized range of the backing, waits for the others at a
 * pipe, then faults every page in (MADV_POPULATE_WRITE, or a write a page where the kernel
 * lacks it), and reports the seconds. Two more rows split a shared object's first touch in
 * two: its pages made (fallocate: allocated and zeroed in the object, not yet mapped) by each
 * process, timed apart from the mapping that follows ("-fallocate" rows: alloc_s is the
 * fallocate's share), and made before the start by the parent, so that the processes only map
 * pages that exist ("-made-before": what a process pays when another made its pages ahead).
 * The table: per backing and process count, the slowest and mean process and the
 * microseconds per page. */
/* (fallocate: _GNU_SOURCE, set for every target by the build) */
#include <fcntl.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

enum backing { ONE_SHARED, PER_PROC, PRIVATE, PER_PROC_FALLOC, ONE_SHARED_MADE, NBACKINGS };
static const char *const backing_name[NBACKINGS] = {"one-shared", "per-process", "private",
                                                    "per-process-fallocate",
                                                    "one-shared-made-before"};

static void usage(FILE *f) {
  fprintf(f,
          "usage: bench-fault [--procs LIST] [--mib M] [--reps R] [--csv FILE]\n"
          "First-touch cost of memory when P processes fault pages in at once, for three\n"
          "backings: one memfd shared by all (each process its own range of it), one memfd a\n"
          "process (mapped shared), and private anonymous memory; then a memfd a process\n"
          "whose pages the process makes first (fallocate, timed: alloc_s) and then maps, and\n"
          "one shared memfd whose pages the parent made before the start (only mapped).\n"
          "  --procs LIST  comma-separated process counts (default 1,4,16)\n"
          "  --mib M       MiB each process faults in (default 64)\n"
          "  --reps R      repetitions; the table keeps the median (default 3)\n"
          "  --csv FILE    also write the table as CSV (default results/bench-fault.csv)\n");
}

static void die(const char *what) {
  fprintf(stderr, "bench-fault: error: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void fault_in(char *p, size_t bytes) {
  if (madvise(p, bytes, MADV_POPULATE_WRITE) == 0) return;
  long page = sysconf(_SC_PAGESIZE);
  for (size_t off = 0; off < bytes; off += (size_t)page) p[off] = 1;
}

/* The child: map its range, wait for the start, fault it in (after making its pages, for
 * PER_PROC_FALLOC), write its seconds and the making's to out. */
static void child(enum backing b, int shared_fd, int index, size_t bytes, int start, int out) {
  char *p;
  int fd = shared_fd;
  if (b == PRIVATE) {
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
             -1, 0);
  } else {
    off_t off = (off_t)index * (off_t)bytes;
    if (b == PER_PROC || b == PER_PROC_FALLOC) {
      fd = memfd_create("bench-fault", MFD_CLOEXEC);
      if (fd < 0 || ftruncate(fd, (off_t)bytes)) die("memfd");
      off = 0;
    }
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
  }
  if (p == MAP_FAILED) die("mmap");
  char go;
  if (read(start, &go, 1) != 1) die("waiting for the start");
  double t0 = bench_now_ns();
  if (b == PER_PROC_FALLOC && fallocate(fd, 0, 0, (off_t)bytes)) die("fallocate");
  double t1 = bench_now_ns();
  fault_in(p, bytes);
  double s[2] = {(bench_now_ns() - t0) * 1e-9, (t1 - t0) * 1e-9};
  if (write(out, s, sizeof s) != (ssize_t)sizeof s) die("reporting");
  _exit(0);
}

/* One round: P processes fault bytes each in backing b at once; max and mean seconds, and
 * the mean of the making's share. */
static void round_of(enum backing b, int P, size_t bytes, double *max_s, double *mean_s,
                     double *alloc_s) {
  int shared_fd = -1, start[2], out[2];
  if (b == ONE_SHARED || b == ONE_SHARED_MADE) {
    shared_fd = memfd_create("bench-fault", MFD_CLOEXEC);
    if (shared_fd < 0 || ftruncate(shared_fd, (off_t)bytes * P)) die("memfd");
    if (b == ONE_SHARED_MADE && fallocate(shared_fd, 0, 0, (off_t)bytes * P)) die("fallocate");
  }
  if (pipe(start) || pipe(out)) die("pipe");
  for (int i = 0; i < P; i++) {
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
      close(start[1]), close(out[0]);
      child(b, shared_fd, i, bytes, start[0], out[1]);
    }
  }
  close(start[0]), close(out[1]);
  usleep(100000); /* every child mapped and waiting */
  for (int i = 0; i < P; i++)
    if (write(start[1], "g", 1) != 1) die("starting");
  *max_s = *mean_s = *alloc_s = 0;
  for (int i = 0; i < P; i++) {
    double s[2];
    if (read(out[0], s, sizeof s) != (ssize_t)sizeof s) die("reading a result");
    if (s[0] > *max_s) *max_s = s[0];
    *mean_s += s[0] / P, *alloc_s += s[1] / P;
  }
  while (wait(NULL) > 0) {}
  close(start[1]), close(out[0]);
  if (shared_fd >= 0) close(shared_fd);
}

int main(int argc, char **argv) {
  if (bench_wants_help(argc, argv)) return usage(stdout), 0;
  char procs_list[256] = "1,4,16";
  const char *csv = "results/bench-fault.csv";
  long mib = 64, reps = 3;
  static const struct option opts[] = {{"procs", 1, 0, 'p'}, {"mib", 1, 0, 'm'},
                                       {"reps", 1, 0, 'r'}, {"csv", 1, 0, 'c'}, {0, 0, 0, 0}};
  for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
    if (c == 'p') snprintf(procs_list, sizeof procs_list, "%s", optarg);
    else if (c == 'm') mib = atol(optarg);
    else if (c == 'r') reps = atol(optarg);
    else if (c == 'c') csv = optarg;
    else return usage(stderr), 2;
  }
  if (mib < 1 || mib > 65536 || reps < 1 || reps > 100 || optind < argc)
    return usage(stderr), 2;
  static const char *const cols[] = {"backing", "procs", "mib_each", "max_s", "mean_s",
                                     "alloc_s", "us_per_page"};
  bench_table *t = bench_table_new("first touch of memory by P processes at once (median of reps)",
                                   7, cols);
  size_t bytes = (size_t)mib << 20, pages = bytes / (size_t)sysconf(_SC_PAGESIZE);
  for (char *tok = strtok(procs_list, ","); tok; tok = strtok(NULL, ",")) {
    int P = atoi(tok);
    if (P < 1 || P > 4096) {
      fprintf(stderr, "bench-fault: error: process count %s: expected 1 to 4096\n", tok);
      return 2;
    }
    for (int b = 0; b < NBACKINGS; b++) {
      double mx[100], mean[100], alloc[100];
      for (long r = 0; r < reps; r++)
        round_of((enum backing)b, P, bytes, &mx[r], &mean[r], &alloc[r]);
      double m = bench_median(mx, (size_t)reps), a = bench_median(mean, (size_t)reps);
      char cp[16], cm[16], cx[32], ca[32], cl[32], cu[32];
      snprintf(cp, sizeof cp, "%d", P);
      snprintf(cm, sizeof cm, "%ld", mib);
      snprintf(cx, sizeof cx, "%.4f", m);
      snprintf(ca, sizeof ca, "%.4f", a);
      snprintf(cl, sizeof cl, "%.4f", bench_median(alloc, (size_t)reps));
      snprintf(cu, sizeof cu, "%.3f", a * 1e6 / (double)pages);
      const char *cells[] = {backing_name[b], cp, cm, cx, ca, cl, cu};
      bench_table_row(t, cells);
      fprintf(stderr, "bench-fault: %s, %d processes done\n", backing_name[b], P);
    }
  }
  return bench_table_finish(t, csv) ? 1 : 0;
}

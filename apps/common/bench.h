/* bench.h: what every antheap benchmark and app shares: a clock, medians over repetitions,
 * the machine's name, a seeded generator, one table that is printed and written as CSV, and
 * the --help conventions (asked for before MPI starts; the library's options in brief). */
#ifndef AH_BENCH_H
#define AH_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Monotonic time in nanoseconds. */
double bench_now_ns(void);
/* Nanoseconds the calling thread has waited on a run queue (runnable, its core taken by
 * another thread): /proc/thread-self/schedstat's second field; -1 where the kernel has none. */
double bench_runq_wait_ns(void);
/* Median of n values (reorders v). */
double bench_median(double *v, size_t n);
/* "hostname (cpu model)", for the CSV's machine column. */
const char *bench_machine(void);

/* xorshift64*: fast, deterministic from the seed. */
typedef struct { uint64_t s; } bench_rng;
static inline uint64_t bench_rand(bench_rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 2685821657736338717ull;
}

/* A result table: rows of named columns, printed aligned and written as CSV (with a leading
 * machine column). */
typedef struct bench_table bench_table;
bench_table *bench_table_new(const char *title, int ncols, const char *const *cols);
/* Add a row of ncols cells, formatted by the caller. */
void bench_table_row(bench_table *t, const char *const *cells);
/* Print to stdout and write path (creating its directory); returns 0 or -1 with a message. */
int bench_table_finish(bench_table *t, const char *csv_path);
/* Print a one-row table (title, ncols named columns), then, when csv_path is not NULL, append
 * the row to it (a machine column first; the header when the file is new or empty), for
 * sweeps that run the program once per point. 0, or -1 with a message prefixed by prog. */
int bench_row_append(const char *prog, const char *title, int ncols, const char *const *cols,
                     const char *const *cells, const char *csv_path);

/* Whether argv asks for help: --help or -h before any "--". Programs look before MPI_Init,
 * sys_init or CUDA, so that --help works without mpirun (and on a machine without a GPU). */
int bench_wants_help(int argc, char **argv);

/* For the --help of programs on antheap: the library's options and variables in brief (sys_init
 * takes them out of argv; antheapd --help has them in full). */
#define BENCH_ANTHEAP_HELP                                                                      \
  "antheap's options (sys_init takes them out of argv; each one overrides its ANTHEAP_*\n"     \
  "variable; antheapd --help lists them all, with ANTHEAP_GAS_SIZE_MIB and the others):\n"    \
  "  --antheap-schedulers N  SPMD: the first N ranks become schedulers (default 1;\n"          \
  "                          ANTHEAP_SCHEDULERS); MPMD: mpirun -np S antheapd : -np W prog\n"  \
  "  --antheap-fanout F      scheduler children per scheduler (default 8; ANTHEAP_FANOUT)\n"   \
  "  --antheap-share M       host (default): a host's workers share the GAS, moves between\n"  \
  "                          them copy nothing; none: every move copies (ANTHEAP_SHARE)\n"     \
  "  --antheap-retain MiB    freed memory kept mapped for reuse (default 256; ANTHEAP_RETAIN)\n" \
  "  --antheap-topology      print the launch plan and do not start\n"

#endif

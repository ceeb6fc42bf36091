/* bench.h: what every antheap benchmark shares: a clock, medians over repetitions, the
 * machine's name, a seeded generator, and one table that is printed and written as CSV. */
#ifndef AH_BENCH_H
#define AH_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Monotonic time in nanoseconds. */
double bench_now_ns(void);
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

#endif

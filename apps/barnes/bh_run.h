/* bh_run.h: the parallel Barnes-Hut over MPI (bh_run.c), shared by barnes and barnes-mpi. A
 * program brings its transport: where trees live, and how locally essential trees (LETs) go
 * from worker to worker. barnes: regions, moved with sys_send (pointers valid on arrival);
 * barnes-mpi: malloc'd memory, marshalled into one MPI_Alltoallv (pointers rebuilt). */
#ifndef BH_RUN_H
#define BH_RUN_H

#include <mpi.h>

#include "bh_par.h"

/* Time spent, as the report splits it (seconds), kept by the transport's calls too. */
typedef struct bh_clock {
  double wcomm, scomm;
} bh_clock;

typedef struct bh_transport {
  const char *mode;  /* the report's mode column */
  bool relocatable;  /* LETs travel as bytes (pointers are indices until bh_let_relocate) */
  bh_mem mem;        /* the local tree's memory */
  /* A buffer of bytes for the LET to peer (filled by the caller before exchange); NULL on
   * failure. */
  void *(*let_buffer)(void *ctx, int peer, size_t bytes);
  /* Send the LET to every peer q with want[q] (its buffer asked of let_buffer this step), and
   * receive each such peer's: got[q] readable with bh_let_root until release. want is the same
   * on both sides of a pair (want[me] is 0). 0 or -1. */
  int (*exchange)(void *ctx, const void **got, const char *want, bh_clock *clk);
  /* Free what exchange received (and anything the step kept). */
  void (*release)(void *ctx, bh_clock *clk);
  /* The pooled walk (bh_pool.h), NULL where workers share no memory: bytes (64-byte aligned)
   * that every worker q with shares(ctx, q) reads at the same address, kept until the next
   * call (NULL on failure); and whether worker q does. */
  void *(*shared_area)(void *ctx, size_t bytes);
  bool (*shares)(void *ctx, int peer);
  void *ctx;
} bh_transport;

/* The run's clock, for the transport's calls to add to (wcomm: moves; scomm: memory). */
bh_clock *bh_run_clock(void);

/* The whole run after start-up: P workers on comm (me: this one), schedulers for the report.
 * Generates the bodies, runs o->steps steps, reports (worker 0) and writes positions. Returns
 * 0, or 1 when a check failed (the same on every worker). */
int bh_run(const bh_opts *o, MPI_Comm comm, int schedulers, const bh_transport *tr);

#endif

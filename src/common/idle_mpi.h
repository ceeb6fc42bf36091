/* idle_mpi.h: completing one MPI request with the idle back-off of idle.h, for the ranks that
 * link MPI (workers' collectives, a move's answer). Header-only, so that ah_common itself
 * needs no MPI. */
#ifndef AH_IDLE_MPI_H
#define AH_IDLE_MPI_H

#include <mpi.h>

#include "common/idle.h"

/* Complete *rq: in MPI_Wait when cap_ns is 0 (a core of its own), else testing it with
 * sleeps of at most cap_ns between empty tests (MPI's own waits spin, which on shared
 * cores takes them from the ranks that work). */
static inline void idle_wait_request(MPI_Request *rq, uint64_t cap_ns) {
  if (!cap_ns) {
    MPI_Wait(rq, MPI_STATUS_IGNORE);
    return;
  }
  idle_wait w;
  idle_start(&w, cap_ns);
  for (int done = 0;;) {
    MPI_Test(rq, &done, MPI_STATUS_IGNORE);
    if (done) return;
    idle_pause(&w);
  }
}

#endif

/* worker_check.h: what the MPI tests of the worker API share: CHECK, which counts and names
 * the worker and errno of a failure, and the summary "NAME: N passed, M failed" that worker 0
 * prints (ctest's pass and fail patterns read it). Define CHECK_NAME (a string) first. */
#ifndef AH_TESTS_WORKER_CHECK_H
#define AH_TESTS_WORKER_CHECK_H

#include <errno.h>
#include <mpi.h>
#include <stdio.h>

#include "antheap.h"

static int passed, failed;
/* Count one check of text `what` at file:line; a failure names the worker and err (errno as
 * the check left it). */
static inline void check_count(int ok, const char *what, const char *file, int line, int err) {
  if (ok) {
    passed++;
    return;
  }
  failed++;
  fprintf(stderr, CHECK_NAME ": worker %d: %s:%d: failed: %s (errno %d: %s)\n", sys_worker_id(),
          file, line, what, err, sys_strerror(err));
}

/* errno is read before sys_worker_id, which sets it when antheap is not up */
#define CHECK(cond)                                                 \
  do {                                                              \
    int ok_ = (cond) ? 1 : 0;                                       \
    check_count(ok_, #cond, __FILE__, __LINE__, errno);             \
  } while (0)

/* Sum the counts of comm's workers; worker 0 prints the summary, then `extra` (may be "").
 * Whether any worker failed a check (the same answer on every worker). */
static inline int check_summary(MPI_Comm comm, const char *extra) {
  int counts[2] = {passed, failed}, total[2] = {0, 0}, me, bad = failed;
  MPI_Comm_rank(comm, &me);
  MPI_Reduce(counts, total, 2, MPI_INT, MPI_SUM, 0, comm);
  if (me == 0) printf(CHECK_NAME ": %d passed, %d failed%s\n", total[0], total[1], extra);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm);
  return bad != 0;
}

#endif

/* bench_mpi.c: option splitting and plan peeking for the MPI benchmarks. */
#include "bench_mpi.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/launch.h"

static int world_rank(void) {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/* A copy of argv the launch code may rearrange (argv itself must stay for sys_init). */
static char **argv_copy(int argc, char **argv) {
  char **copy = malloc((size_t)(argc + 1) * sizeof *copy);
  if (copy) memcpy(copy, argv, (size_t)(argc + 1) * sizeof *copy);
  return copy;
}

int bench_own_options(int argc, char **argv, const char *prog,
                      int (*parse)(int argc, char **argv, void *opts), void *opts) {
  char **av = argv_copy(argc, argv), err[256];
  if (!av) return 2;
  launch_options lo;
  int ac = argc, code;
  if (launch_parse_options(&ac, &av, &lo, err, sizeof err)) {
    if (world_rank() == 0) fprintf(stderr, "%s: %s\n", prog, err);
    code = 2;
  } else {
    code = parse(ac, av, opts);
  }
  free(av);
  return code;
}

int bench_peek_plan(int argc, char **argv, const char *prog, launch_plan *plan) {
  char **copy = argv_copy(argc, argv), err[512];
  if (!copy) return 2;
  int rc = launch_plan_build(MPI_COMM_WORLD, &argc, &copy, plan, err, sizeof err);
  free(copy);
  if (rc) {
    if (world_rank() == 0) fprintf(stderr, "%s: %s\n", prog, err);
    return 2;
  }
  return 0;
}

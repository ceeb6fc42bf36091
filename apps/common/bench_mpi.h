/* bench_mpi.h: what the MPI benchmarks (bench-latency, bench-throughput) share before
 * sys_init: their own options without the --antheap-* ones, and a look at the launch plan
 * sys_init is about to build. */
#ifndef AH_BENCH_MPI_H
#define AH_BENCH_MPI_H

#include "job/plan.h"

/* Parse the program's own options from a copy of argv without the --antheap-* options
 * (which stay in argv for sys_init). Returns what parse returns (-1: go on, else an exit
 * code), or 2 after a message for a bad --antheap-* option. */
int bench_own_options(int argc, char **argv, const char *prog,
                      int (*parse)(int argc, char **argv, void *opts), void *opts);
/* Build the plan sys_init will build (collective over MPI_COMM_WORLD; binds this rank as
 * sys_init would). 0 with *plan filled (free it with launch_plan_free), or 2 after a
 * message. */
int bench_peek_plan(int argc, char **argv, const char *prog, launch_plan *plan);

#endif

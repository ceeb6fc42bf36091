/* antheapd.c: the scheduler daemon of an MPMD launch:
 *   mpirun -np S antheapd [options] : -np W ./app
 * Every antheapd rank becomes a scheduler; the application's ranks are the workers (their
 * sys_init finds them). --topology prints the launch plan and starts nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/job.h"
#include "sched/launch.h"

static void usage(void) {
  printf("usage: mpirun -np S antheapd [--topology] [--antheap-* options] : -np W ./app [args]\n"
         "  antheap's scheduler daemon: S scheduler ranks serve the W worker ranks of ./app.\n"
         "  --topology      print the launch plan (ranks, roles, hosts, cores, tree) and exit\n"
         "  --help          this text\n\n%s\n%s",
         launch_help_text(), ah_config_help());
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage();
      return 0;
    }
    if (!strcmp(argv[i], "--topology")) argv[i] = (char *)"--antheap-topology";
  }
  MPI_Init(&argc, &argv);
  ah_job job;
  char err[512];
  if (job_setup(&argc, &argv, &job, err, sizeof err)) {
    if (job.rank == 0) fprintf(stderr, "antheapd: %s\n", err);
    MPI_Finalize();
    return 2;
  }
  int rc = 0;
  if (job.plan.topology_only) {
    if (job.rank == 0) plan_print(stdout, &job.plan);
  } else if (job.is_sched) {
    rc = job_run_scheduler(&job);
  } else {
    fprintf(stderr, "antheapd: rank %d is planned as a worker; run the application there\n", job.rank);
    rc = 2;
  }
  job_teardown(&job);
  MPI_Finalize();
  return rc;
}

/* antheapd.c: the scheduler daemon of an MPMD launch:
 *   mpirun -np S antheapd [--antheap-* options] : -np W ./app
 * Every antheapd rank becomes a scheduler; the application's ranks are the workers (their
 * sys_init finds them). It takes the --antheap-* options an SPMD application takes
 * (--antheap-topology prints the launch plan and starts nothing), --help (every option and
 * ANTHEAP_* variable with its default) and --version (antheap and MPI); anything else, the old
 * --topology included, is refused on every rank of the job with a message naming the option. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "antheap.h"
#include "job/job.h"
#include "job/launch.h"

static void usage(void) {
  printf("usage: mpirun -np S antheapd [--antheap-* options] : -np W ./app [args]\n"
         "  antheap's scheduler daemon: S scheduler ranks serve the W worker ranks of ./app.\n"
         "  It takes the --antheap-* options below, as an SPMD application does (one of the two\n"
         "  sides may give them; --antheap-topology prints the launch plan and starts nothing).\n"
         "  --version       print antheap's and the MPI library's versions and exit\n"
         "  --help          this text\n\n%s\n%s\n"
         "worker environment (read by the application's sys_init):\n"
         "  ANTHEAP_CACHE            on (default) or off: off makes every sys_* call a round\n"
         "                           trip to the schedulers\n"
         "  ANTHEAP_XFER_PLAN        whole: a move between workers that MPI connects through\n"
         "                           shared memory sends each long range in one message, not\n"
         "                           in pieces (default: pieces; for comparisons)\n"
         "  ANTHEAP_MOVE_MEMO        on (default), off or check: off makes every sys_send ask\n"
         "                           the schedulers for its ranges, also for a region received\n"
         "                           from a worker sharing the GAS and sent on unchanged; check\n"
         "                           asks them too and prints where the memo differs (tests)\n"
         "  ANTHEAP_CHECK            handover: a worker loses access to the pages of the regions\n"
         "                           it sends or gives away until they come back; a stale read\n"
         "                           or write stops the job and names the call that handed\n"
         "                           them over (default: none)\n"
         "  ANTHEAP_WAIT_WARN        seconds a worker waits in sys_recv, sys_send or sys_barrier\n"
         "                           before it says once what it waits for (default 60; 0: never)\n"
         "  ANTHEAP_WAIT_TIMEOUT     seconds after which such a wait gives up: the call fails\n"
         "                           with ETIMEDOUT (default: never)\n"
         "  ANTHEAP_TCACHE_FENCE     1: at MPI_THREAD_MULTIPLE each thread's cache orders its\n"
         "                           guard with a fence, not through membarrier (comparisons)\n"
         "every rank:\n"
         "  ANTHEAP_IDLE_MAX_US      the longest sleep of a waiting rank that shares its core\n"
         "                           (20..1000000; default 20 per rank per core of the host, at\n"
         "                           most 10000): waits back off from 20 us to this, an eighth\n"
         "                           of the time waited so far\n"
         "  ANTHEAP_IDLE_SPIN_US     how long such a rank spins before its first sleep when the\n"
         "                           host has at most 5 ranks per 4 cores, yielding its core to\n"
         "                           any thread that waits for it (0..1000000; default 200)\n"
         "  ANTHEAP_PROFILE          on: each worker prints at sys_finalize its round trips by\n"
         "                           kind (count, seconds, the longest, the median's octave),\n"
         "                           rank-lock waits, flushes and the time it mapped big leases;\n"
         "                           each scheduler what it handled by kind and how long it\n"
         "                           waited; both how often they slept and rang a sleeper awake\n"
         "                           (default: off)\n",
         launch_help_text(), ah_config_help());
}

/* antheap's version, then the MPI library's (MPI_Get_library_version works before MPI_Init). */
static void version(void) {
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  printf("antheapd (antheap) %s\n", ANTHEAP_VERSION_STRING);
  if (MPI_Get_library_version(mpi, &len) == MPI_SUCCESS && len > 0) {
    mpi[strcspn(mpi, "\n")] = '\0';
    printf("MPI: %s\n", mpi);
  }
}

/* What antheapd refuses in its own arguments: whatever is left once the --antheap-* options
 * are taken out of a copy of argv. NULL when nothing is (or when those options are wrong
 * themselves: job_setup says so); else the message, in buf. No MPI needed. */
static const char *refusal(int argc, char **argv, char *buf, size_t len) {
  char **copy = malloc(((size_t)argc + 1) * sizeof *copy), **av = copy, err[512];
  if (!copy) return NULL;
  memcpy(copy, argv, ((size_t)argc + 1) * sizeof *copy);
  launch_options o;
  int n = argc;
  const char *why = NULL;
  if (launch_parse_options(&n, &av, &o, err, sizeof err) == 0 && n > 1) {
    if (strcmp(av[1], "--topology") == 0)
      snprintf(buf, len, "--topology is not an option of antheapd: print the launch plan with "
               "--antheap-topology (the option SPMD applications take too)");
    else
      snprintf(buf, len, "unknown argument '%s': antheapd takes --antheap-* options, --help and "
               "--version (see antheapd --help)", av[1]);
    why = buf;
  }
  free(copy);
  return why;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      usage();
      return 0;
    }
    if (!strcmp(argv[i], "--version")) {
      version();
      return 0;
    }
  }
  char why[512];
  const char *refused = refusal(argc, argv, why, sizeof why);
  MPI_Init(&argc, &argv);
  ah_job job;
  if (job_setup(&argc, &argv, &job, "antheapd", refused)) { /* said so, on one rank */
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

/* job.h: what every rank of an antheap job sets up the same way, collectively, whether it
 * runs antheapd (MPMD) or the application (SPMD, where sys_init turns some ranks into
 * schedulers): the launch plan, the routing tree, the settings, and the communicators
 * (protocol traffic between workers and schedulers; the workers alone, ordered by worker
 * index, for the application and for transfers). Then schedulers run the daemon. */
#ifndef AH_JOB_JOB_H
#define AH_JOB_JOB_H

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/config.h"
#include "job/bells.h"
#include "job/plan.h"
#include "sched/tree.h"

#define AH_TAG_PROTO 4171 /* on job.proto */
#define AH_TAG_XFER 4172  /* on job.xfer */

typedef struct ah_job {
  launch_plan plan;
  sched_tree tree;
  ah_config cfg;
  int rank;            /* in MPI_COMM_WORLD */
  bool is_sched;
  uint64_t idle_cap_ns; /* the longest sleep of a wait (idle.h); 0: bound to a core of its
                          own, polls without sleeping */
  MPI_Comm proto;      /* every rank: requests, replies, scheduler traffic */
  MPI_Comm workers;    /* workers only (MPI_COMM_NULL on schedulers): sys_comm() */
  MPI_Comm xfer;       /* workers only: sys_send / sys_recv */
  bell_board bells;    /* the host's doorbells (bells.h); the waits sleep on bells.mine */
} ah_job;

/* Collective over MPI_COMM_WORLD (MPI must be initialised). Consumes the --antheap-* options
 * from argv. `who` names the program in messages ("antheap", "antheapd"); `refusal` (NULL:
 * none) is an error the caller found in its own arguments, which fails the set-up on every
 * rank as a bad option does. 0, or on every rank alike:
 *   EDOM    a bad --antheap-* option, ANTHEAP_* value or refusal (the plan cannot be made);
 *   ENOMEM  no memory for the routing tree.
 * Before any rank returns a failure, one rank has printed "who: why" on stderr (flushed), so
 * that no launcher ending the job on the first rank that exits can cut the message off. */
int job_setup(int *argc, char ***argv, ah_job *job, const char *who, const char *refusal);
void job_teardown(ah_job *job);
/* Run this scheduler until shutdown. 0, or 1 at the root when something was not returned. */
int job_run_scheduler(ah_job *job);
/* The rank of the scheduler at `level` on the way up from `rank` (a scheduler itself, e.g. a
 * worker's leaf): `rank` when it is no deeper than that. */
int job_sched_on_path(const ah_job *job, int rank, int level);

#endif

/* job.c: collective set-up of a job (plan, tree, settings, communicators), and its failure:
 * one message, printed before any rank may leave. */
#include "job/job.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/idle.h"
#include "job/launch.h"

/* The routing tree from the plan: a worker's parent is its leaf. */
static int tree_from_plan(const launch_plan *p, sched_tree *t) {
  bool *is = calloc((size_t)p->nranks, sizeof *is);
  int *parent = calloc((size_t)p->nranks, sizeof *parent);
  int rc = -1;
  if (is && parent) {
    for (int r = 0; r < p->nranks; r++) {
      is[r] = p->ranks[r].role == PLAN_SCHEDULER;
      parent[r] = is[r] ? p->ranks[r].parent : p->ranks[r].leaf;
    }
    rc = sched_tree_init(t, p->nranks, is, parent) ? -1 : 0;
  }
  free(is);
  free(parent);
  return rc;
}

/* The lowest rank for which failed holds, or -1 when none (collective). */
static int lowest_failing(int me, bool failed) {
  int mine = failed ? me : INT_MAX, lowest;
  MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return lowest == INT_MAX ? -1 : lowest;
}

/* The speaker prints why, then nobody leaves before it is out: an application that exits
 * with status 1 makes mpirun end the job, maybe before a slower rank 0 had printed it. */
static int fail_everywhere(const ah_job *j, const char *who, int speaker, const char *why, int rc) {
  if (j->rank == speaker) {
    fprintf(stderr, "%s: %s\n", who, why);
    fflush(stderr);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return rc;
}

int job_setup(int *argc, char ***argv, ah_job *j, const char *who, const char *refusal) {
  memset(j, 0, sizeof *j);
  j->proto = j->workers = j->xfer = MPI_COMM_NULL;
  j->bells = (bell_board){.win = MPI_WIN_NULL, .host = MPI_COMM_NULL};
  MPI_Comm_rank(MPI_COMM_WORLD, &j->rank);
  char err[640];
  launch_extra x = {.refusal = refusal};
  if (launch_plan_build_ex(MPI_COMM_WORLD, argc, argv, &x, &j->plan, err, sizeof err))
    return fail_everywhere(j, who, x.speaker, err, EDOM);
  /* Every rank reads the same environment, normally; the lowest rank refusing it speaks. */
  int bad = lowest_failing(j->rank, ah_config_from_env(&j->cfg, err, sizeof err) != 0);
  if (bad >= 0) {
    launch_plan_free(&j->plan);
    return fail_everywhere(j, who, bad, err, EDOM);
  }
  if (j->plan.topology_only) return 0;
  bad = lowest_failing(j->rank, tree_from_plan(&j->plan, &j->tree) != 0);
  if (bad >= 0) {
    if (j->tree.nranks) sched_tree_free(&j->tree);
    launch_plan_free(&j->plan);
    return fail_everywhere(j, who, bad, "no memory for the routing tree of the launch plan",
                           ENOMEM);
  }
  j->is_sched = j->plan.ranks[j->rank].role == PLAN_SCHEDULER;
  /* a core of its own, on a host with no more ranks than cores: waits may spin */
  bool own_core = j->plan.ranks[j->rank].core >= 0 && j->plan.local_ranks <= j->plan.host_cores;
  j->idle_cap_ns = own_core ? 0 : idle_cap_ns(j->plan.local_ranks, j->plan.host_cores);
  MPI_Comm_dup(MPI_COMM_WORLD, &j->proto);
  int key = j->is_sched ? 0 : j->plan.ranks[j->rank].worker_index;
  MPI_Comm_split(MPI_COMM_WORLD, j->is_sched ? MPI_UNDEFINED : 0, key, &j->workers);
  if (!j->is_sched) MPI_Comm_dup(j->workers, &j->xfer);
  bells_open(&j->bells, j->cfg.bells, j->idle_cap_ns != 0, j->plan.nranks);
  idle_setup(j->bells.mine, idle_spin_ns());
  return 0;
}

void job_teardown(ah_job *j) {
  idle_setup(NULL, IDLE_SPIN_NS);
  bells_close(&j->bells);
  if (j->xfer != MPI_COMM_NULL) MPI_Comm_free(&j->xfer);
  if (j->workers != MPI_COMM_NULL) MPI_Comm_free(&j->workers);
  if (j->proto != MPI_COMM_NULL) MPI_Comm_free(&j->proto);
  if (j->tree.nranks) sched_tree_free(&j->tree);
  launch_plan_free(&j->plan);
}

int job_sched_on_path(const ah_job *j, int rank, int level) {
  int x = rank;
  while (j->tree.level[x] > level) x = j->tree.parent[x];
  return x;
}

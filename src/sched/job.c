/* job.c: collective set-up of a job (plan, tree, settings, communicators). */
#include "sched/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/idle.h"
#include "sched/launch.h"

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

int job_setup(int *argc, char ***argv, ah_job *j, char *err, size_t errlen) {
  memset(j, 0, sizeof *j);
  j->proto = j->workers = j->xfer = MPI_COMM_NULL;
  MPI_Comm_rank(MPI_COMM_WORLD, &j->rank);
  if (launch_plan_build(MPI_COMM_WORLD, argc, argv, &j->plan, err, errlen)) return -1;
  /* Every rank reads the same environment; a bad value is refused everywhere alike. */
  int bad = ah_config_from_env(&j->cfg, err, errlen) != 0, any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_bad) {
    if (!bad) snprintf(err, errlen, "another rank refused its ANTHEAP_* settings");
    launch_plan_free(&j->plan);
    return -1;
  }
  if (j->plan.topology_only) return 0;
  if (tree_from_plan(&j->plan, &j->tree)) {
    snprintf(err, errlen, "the launch plan does not form a tree (internal error)");
    launch_plan_free(&j->plan);
    return -1;
  }
  j->is_sched = j->plan.ranks[j->rank].role == PLAN_SCHEDULER;
  bool own_core = j->plan.ranks[j->rank].core >= 0;
  j->idle_cap_ns = own_core ? 0 : idle_cap_ns(j->plan.local_ranks, j->plan.host_cores);
  MPI_Comm_dup(MPI_COMM_WORLD, &j->proto);
  int key = j->is_sched ? 0 : j->plan.ranks[j->rank].worker_index;
  MPI_Comm_split(MPI_COMM_WORLD, j->is_sched ? MPI_UNDEFINED : 0, key, &j->workers);
  if (!j->is_sched) MPI_Comm_dup(j->workers, &j->xfer);
  return 0;
}

void job_teardown(ah_job *j) {
  if (j->xfer != MPI_COMM_NULL) MPI_Comm_free(&j->xfer);
  if (j->workers != MPI_COMM_NULL) MPI_Comm_free(&j->workers);
  if (j->proto != MPI_COMM_NULL) MPI_Comm_free(&j->proto);
  if (j->tree.nranks) sched_tree_free(&j->tree);
  launch_plan_free(&j->plan);
}

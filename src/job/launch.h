/* launch.h: the launch plan of a real MPI job: options, roles from MPI, placement with hwloc.
 *
 * launch_plan_build is collective over `world` (every rank calls it, schedulers and workers,
 * SPMD or MPMD). It
 *   1. takes the --antheap-* options out of argv (ANTHEAP_* environment variables are the
 *      defaults; argv wins), and agrees on them across ranks (the lowest rank that set a
 *      value wins; --antheap-topology on any rank counts for all);
 *   2. tells MPMD from SPMD by the MPI_APPNUM attribute: app numbers that differ across ranks
 *      mean `mpirun -np S antheapd : -np W ./app`, and app 0 ranks are the schedulers;
 *   3. binds each rank to one core with hwloc (the i-th rank of a host to its i-th core)
 *      when the host has at least as many cores as ranks there and the launcher has not bound
 *      it already; otherwise leaves it unbound and says so in plan->warnings;
 *   4. gathers every rank's host name, NUMA node (of its binding) and core, and builds the
 *      plan with plan_build (src/job/plan.h), the same on every rank.
 * On an error every rank returns -1 with a message (the same kind of failure on all ranks, so
 * none is left waiting in a collective); launch_plan_build_ex also names the rank whose
 * message is first-hand, for the caller to print it once.
 */
#ifndef AH_JOB_LAUNCH_H
#define AH_JOB_LAUNCH_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "job/plan.h"

#define LAUNCH_DEFAULT_SCHEDULERS 1 /* SPMD, when neither option nor environment says */
#define LAUNCH_DEFAULT_FANOUT 8

/* Options as parsed on one rank; 0 / false = not given. */
typedef struct launch_options {
  int schedulers; /* --antheap-schedulers N, ANTHEAP_SCHEDULERS */
  int fanout;     /* --antheap-fanout F, ANTHEAP_FANOUT */
  bool topology;  /* --antheap-topology: print the plan, do not start */
  int share;      /* --antheap-share host|none, ANTHEAP_SHARE: 0 not given, 1 host, 2 none */
  int retain_mib; /* --antheap-retain MiB, ANTHEAP_RETAIN: freed memory kept mapped; -1 not given */
  plan_stats stats;       /* --antheap-stats off|table|FILE, ANTHEAP_STATS (0: not given) */
  const char *stats_path; /* PLAN_STATS_FILE: the file (points into argv or the environment) */
} launch_options;

#define LAUNCH_PATH_MAX 4096 /* longest --antheap-stats file name, with its '\0' */

/* Remove the --antheap-* options (also --antheap-x=value) from argv, before any "--", and
 * read ANTHEAP_SCHEDULERS, ANTHEAP_FANOUT, ANTHEAP_SHARE, ANTHEAP_RETAIN and ANTHEAP_STATS for
 * what argv does not give. Unknown --antheap-* options and bad values are errors (returns -1
 * and writes err). No MPI needed. */
int launch_parse_options(int *argc, char ***argv, launch_options *o, char *err, size_t errlen);

/* The help text for these options and variables (for --help of antheapd and of apps). */
const char *launch_help_text(void);

/* Build the plan of this job (see above). On success returns 0 with out->self = this rank and
 * out->topology_only set from --antheap-topology; free with launch_plan_free. On failure
 * returns -1, *out holds nothing to free, err holds a one-line message. Collective. */
int launch_plan_build(MPI_Comm world, int *argc, char ***argv, launch_plan *out, char *err,
                      size_t errlen);

/* launch_plan_build with two more things. */
typedef struct launch_extra {
  const char *refusal; /* in: this rank refuses its own arguments with this message (NULL: it
                        * does not); it fails the build on every rank as a bad option does */
  int speaker;         /* out, after a failure: the lowest rank whose err is first-hand (the
                        * others may hold a note naming it): the one rank that should print */
} launch_extra;
int launch_plan_build_ex(MPI_Comm world, int *argc, char ***argv, launch_extra *x,
                         launch_plan *out, char *err, size_t errlen);
void launch_plan_free(launch_plan *p);

#endif /* AH_JOB_LAUNCH_H */

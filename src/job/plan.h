/* plan.h: the launch plan of an antheap job (Myrmics section 5.1, Figure 3), as a pure function.
 *
 * From a description of the MPI ranks (host, NUMA node, bound core, and in MPMD whether the rank
 * was launched as antheapd) plan_build decides which ranks are schedulers and which are workers,
 * how the schedulers form a tree (one root, up to `fanout` scheduler children each, in heap
 * order), and which leaf scheduler serves which contiguous block of workers, keeping each leaf
 * on the host (and NUMA node) of its workers. No MPI and no hwloc here: src/job/launch.c
 * gathers the description from MPI and hwloc and calls plan_build. The placement rules are
 * written at the top of plan.c.
 *
 * Vocabulary: a scheduler's `index` is its place in the heap-ordered tree (root 0, children of
 * index i are F*i+1 .. F*i+F); a worker's `index` is 0..W-1, in the order of the leaves that
 * serve them (rank order within a leaf), so that every leaf serves one contiguous block.
 * "Descendants" of a scheduler are the schedulers strictly below it.
 */
#ifndef AH_JOB_PLAN_H
#define AH_JOB_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum plan_role { PLAN_WORKER = 0, PLAN_SCHEDULER = 1 } plan_role;

/* What the root scheduler reports at shutdown (--antheap-stats, ANTHEAP_STATS). */
typedef enum plan_stats {
  PLAN_STATS_SUMMARY = 0, /* one line (the default) */
  PLAN_STATS_OFF,         /* nothing, unless something is missing (an error) */
  PLAN_STATS_TABLE,       /* the line and a table of every scheduler's row */
  PLAN_STATS_FILE,        /* the line, and every row as CSV in the file stats_path */
} plan_stats;

/* What plan_build can refuse. plan_status_text() names each one; plan_build also writes a
 * detailed message (with the numbers involved) into its err buffer. */
typedef enum plan_status {
  PLAN_OK = 0,
  PLAN_ERR_INPUT,               /* no ranks, NULL arrays, negative host or bad NUMA ids */
  PLAN_ERR_SCHEDULERS,          /* SPMD scheduler count < 1 */
  PLAN_ERR_TOO_MANY_SCHEDULERS, /* SPMD scheduler count > number of ranks */
  PLAN_ERR_NO_WORKERS,          /* SPMD scheduler count == number of ranks: no worker left */
  PLAN_ERR_FANOUT,              /* fan-out < 1 */
  PLAN_ERR_MPMD_NO_DAEMON,      /* MPMD with no antheapd rank */
  PLAN_ERR_MPMD_NO_APP,         /* MPMD with no application rank */
  PLAN_ERR_NOMEM,
} plan_status;

/* One rank as the launcher sees it. */
typedef struct plan_rank_info {
  int host;       /* host id, 0 .. nhosts-1 (small ints; equal ids = same host) */
  int numa;       /* NUMA node of the cores the rank is bound to; -1: unknown or several */
  int core;       /* core the rank is bound to (printed only); -1: not bound */
  bool is_daemon; /* MPMD: launched as antheapd (MPI app number 0); ignored in SPMD */
} plan_rank_info;

typedef struct plan_input {
  int nranks;
  const plan_rank_info *ranks;    /* nranks entries, indexed by rank */
  bool mpmd;                      /* roles fixed by is_daemon; else chosen here (SPMD) */
  int schedulers;                 /* SPMD: S (>= 1). MPMD: 0, or a count to check (warning) */
  int fanout;                     /* F: scheduler children per scheduler (>= 1) */
  int nhosts;                     /* entries in host_names; 0 when host_names is NULL */
  const char *const *host_names;  /* optional, by host id; printed by plan_print */
} plan_input;

/* One rank in the plan. Fields that do not apply to the role are -1 / false / 0. */
typedef struct plan_rank {
  plan_role role;
  int host, numa, core;    /* copied from the input */
  /* schedulers */
  int sched_index;         /* heap index, 0 = root */
  int level;               /* 0 = root */
  int parent;              /* rank of the parent scheduler; -1 for the root */
  int nchildren;           /* scheduler children */
  const int *children;     /* their ranks, in index order (points into the plan) */
  bool is_leaf;            /* no scheduler children: serves workers */
  int worker_first;        /* leaves: first worker index served */
  int worker_count;        /* leaves: number of workers served (a contiguous block) */
  int descendants;         /* schedulers strictly below this one */
  /* workers */
  int worker_index;        /* 0 .. nworkers-1 */
  int leaf;                /* rank of the leaf scheduler serving this worker */
} plan_rank;

typedef struct launch_plan {
  int nranks, nschedulers, nworkers;
  int fanout;
  int nlevels;             /* scheduler levels (1: the root alone) */
  int nleaves;
  bool mpmd;
  int self;                /* the calling rank (set by launch_plan_build; -1 otherwise) */
  bool topology_only;      /* --antheap-topology: print the plan, do not start */
  bool share_host;         /* workers of one host share one GAS (--antheap-share, default) */
  long retain_mib;         /* this rank's --antheap-retain (MiB), -1 when not given */
  plan_stats stats;        /* the shutdown report (the lowest rank's choice) */
  char *stats_path;        /* PLAN_STATS_FILE: the file; NULL otherwise (freed by plan_free) */
  int local_ranks;         /* ranks on this rank's host, and that host's cores (0: unknown; */
  int host_cores;          /* set by launch_plan_build, for the idle back-off: idle.h) */
  plan_rank *ranks;        /* nranks entries, indexed by rank */
  int *sched_ranks;        /* nschedulers: rank of each scheduler index */
  int *worker_ranks;       /* nworkers: rank of each worker index */
  int *leaves;             /* nleaves: leaf ranks in scheduler-index order */
  int *child_store;        /* backing store of every ranks[r].children */
  int nhosts;
  char **host_names;       /* nhosts copies, or NULL */
  char *warnings;          /* newline-terminated notes about placement; NULL when none */
} launch_plan;

/* Build the plan for `in` into *out. On failure *out holds nothing to free, and err (when not
 * NULL) receives a one-line message. */
plan_status plan_build(const plan_input *in, launch_plan *out, char *err, size_t errlen);
void plan_free(launch_plan *p);

/* The short name of a status ("no worker left" ...). */
const char *plan_status_text(plan_status s);

/* Append one line to p->warnings (printf format, no trailing newline needed). Returns false
 * when out of memory (the note is lost, the plan is unchanged). */
bool plan_warn(launch_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Schedulers strictly below `rank` in the tree; 0 for leaves; -1 when rank is not a scheduler.
 * The root hands out pages and IDs in chunks proportional to (descendants + 1). */
int sched_descendants(const launch_plan *p, int rank);

/* The host name of a host id ("host3" when no names were given). */
const char *plan_host_name(const launch_plan *p, int host, char *buf, size_t buflen);

/* A table of the plan: one line per rank (rank, role, host, NUMA, core, scheduler index,
 * level, parent, children, workers served), then the warnings. What --antheap-topology
 * prints. */
void plan_print(FILE *f, const launch_plan *p);

#endif /* AH_JOB_PLAN_H */

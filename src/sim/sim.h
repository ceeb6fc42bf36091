/* sim.h: an in-process simulator of a whole antheap job: a tree of scheduler event servers
 * (the real src/sched code) and simulated workers, exchanging messages in one process.
 * Messages between two ranks keep their order (as MPI guarantees); which channel delivers
 * next is drawn from the seed, so every interleaving is reproducible from the seed alone.
 * Workers issue random traffic (ralloc, alloc, balloc, free, realloc, query, pack, rfree,
 * and deliberate wrong usage) and check every reply against a shadow model; at the end they
 * finalize and the root must find every page and region ID back. */
#ifndef AH_SIM_H
#define AH_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sched/server.h"

typedef struct sim_config {
  int schedulers, fanout, workers;
  int ops;           /* operations per worker */
  uint64_t seed;
  int garbage;       /* malformed messages injected into random schedulers */
  sched_config sched;
  FILE *log;         /* progress and failures (stderr if NULL) */
  bool verbose;
} sim_config;

typedef struct sim_result {
  bool ok;
  uint64_t messages, replies_checked, errors_expected;
  uint64_t leases, zombie_returns; /* slabs leased; slabs handed back after their region died */
  uint64_t placed_by_load; /* regions the schedulers placed by load (requester elsewhere) */
  int conservation; /* the root's verdict: 0 ok */
  char failure[512];
} sim_result;

sim_config sim_config_default(void);
int sim_run(const sim_config *cfg, sim_result *res);

#endif

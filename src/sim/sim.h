/* sim.h: an in-process simulator of a whole antheap job: a tree of scheduler event servers
 * (the real src/sched code) and simulated workers, exchanging messages in one process.
 * Messages between two ranks keep their order (as MPI guarantees); which channel delivers
 * next is drawn from the seed, so every interleaving is reproducible from the seed alone.
 * Workers issue random traffic (ralloc, alloc, balloc, free, realloc, query, pack, rfree,
 * lease, unlease, and deliberate wrong usage) and check every reply against a shadow model;
 * at the end they finalize and the root must find every page and region ID back. They follow
 * the hand-over rule (only a region's holder acts on it): they hand whole top regions, with
 * their descendants and objects, to other workers (PACKV_HANDOVER), and the receiver takes
 * them on; and they ask now and then what only another worker may, which must be refused.
 *
 * As the protocol fuzzer (--hostile K), K hostile workers join them: they send well-formed
 * requests with hostile arguments, forged headers and random bytes, and check that every
 * request that reads well is answered with an errno (a silent drop is a failure), that what
 * they are given overlaps no live object, that every request naming what another worker
 * holds is refused (never accepted), and that the total traffic stays within storm_factor
 * messages per request sent (plus storm_const). */
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
  int hostile;       /* hostile workers, spread over the leaves */
  int hostile_ops;   /* messages each hostile worker sends */
  bool hostile_keep_leases; /* hostile workers finalize holding their leased slabs */
  /* F > 0: hostile workers also fragment on purpose (hostile.c: the fragmenter), in rounds:
   * 2F objects of a slab with every other one freed, the region packed (about F ranges, each
   * kept object covered) and freed; 2F regions with every other one freed (F free-ID holes). */
  int hostile_fragment;
  /* Storm: more than storm_factor * requests + storm_const messages delivered (checked after
   * every delivery; factor 0: never). Measured per seed (messages / requests workers sent):
   * 1.8-2.0 with one scheduler, 3.6-4.1 with 2 levels, 5.4-6.3 with 3 levels, up to 8.5 with
   * hostile workers in a 3-level tree (fan-out 4, 1000 workers); hence 16 by default. */
  unsigned storm_factor, storm_const;
  FILE *log;         /* progress and failures (stderr if NULL) */
  bool verbose;
} sim_config;

/* Kinds of failure, counted apart (sim_result.fails). */
enum { SIM_FAIL_WRONG, SIM_FAIL_OVERLAP, SIM_FAIL_STORM, SIM_FAIL_LOST, SIM_FAIL_SILENT,
       SIM_FAIL_HANG, SIM_FAIL_KINDS };
extern const char *const sim_fail_names[SIM_FAIL_KINDS];

typedef struct sim_result {
  bool ok;
  uint64_t messages, replies_checked, errors_expected;
  uint64_t leases, zombie_returns; /* slabs leased; slabs handed back after their region died */
  uint64_t placed_by_load; /* regions the schedulers placed by load (requester elsewhere) */
  /* The hand-over rule: successful hand-overs (PACKV_HANDOVER) and hand-backs; requests naming
   * what another worker holds, refused with EPERM (well-behaved and hostile workers); PACKVs
   * with flags or a peer no worker may send, refused with EINVAL (hostile workers). */
  uint64_t handovers, handbacks, nonholder_refused, bad_moves_refused;
  int conservation; /* the root's verdict: 0 ok */
  uint64_t requests;          /* messages workers sent */
  uint64_t hostile_sent, hostile_garbage, hostile_replies; /* garbage: sent to be dropped */
  /* The fragmenter: objects freed to make holes, regions freed to make free-ID holes, packs of
   * fragmented regions checked and their ranges; reply parts that said PROTO_REPLY_MORE. */
  uint64_t frag_holes, frag_id_holes, frag_packs, frag_ranges, continued;
  uint64_t fails[SIM_FAIL_KINDS];
  char failure[512];
} sim_result;

sim_config sim_config_default(void);
int sim_run(const sim_config *cfg, sim_result *res);

#endif

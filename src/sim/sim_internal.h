/* sim_internal.h: the simulator's state, shared by sim.c (channels, the delivery loop, the
 * well-behaved workers) and hostile.c (the hostile workers of the protocol fuzzer). */
#ifndef AH_SIM_INTERNAL_H
#define AH_SIM_INTERNAL_H

#include "common/types.h"
#include "region/region.h"
#include "proto/proto.h"
#include "sim/sim.h"
#include "trie/trie.h"

/* A message on its way: FIFO per (from, to). */
typedef struct msg {
  struct msg *next;
  size_t len;
  unsigned char data[];
} msg;

typedef struct channel {
  int from, to;
  msg *head, *tail;
  int active_slot; /* index in the active array, -1 when empty */
} channel;

typedef struct sim_worker sim_worker;

/* The parts of a reply in several messages (proto.h: PROTO_REPLY_MORE) gathered for one rank. */
typedef struct sim_parts {
  uint64_t req;
  uint64_t *w;
  size_t n, cap;
} sim_parts;
typedef struct hostile hostile;

/* The hand-over rule (include/antheap.h): only a region's holder may act on it. Every worker
 * (well-behaved and hostile) first makes a public region under the root and pins one object in
 * it; neither is ever freed nor handed over, so that what other workers ask of them must be
 * refused (EPERM), with no race to excuse anything else. */
typedef struct {
  rid_t rid;
  int holder;       /* the worker's rank */
  uintptr_t pinned; /* its pinned object (64 bytes), 0 until made */
} sim_public;

typedef struct sim {
  const sim_config *cfg;
  sched_tree tree;
  sched_server **servers; /* by rank (NULL for workers) */
  sim_worker *workers; /* well-behaved workers, by index */
  hostile *hostiles; /* hostile workers, by index */
  int *role; /* by rank: well-behaved index, or -1 - hostile index */
  channel *chans; /* nranks * nranks, only neighbours used */
  int *active, nactive;
  uint64_t rng, messages;
  uint64_t requests; /* messages workers sent (the storm bound counts from these) */
  sim_result *res;
  int workers_finished, hostiles_finished;
  bool trace; /* SIM_TRACE set: every request and reply on stderr */
  sim_public *publics; /* every worker's public region, once made */
  int npublic;
  uint64_t serials; /* the last serial given to a well-behaved worker's region */
  trie live; /* every live object of every well-behaved worker: (addr - base) / 64 -> size */
  trie hlive; /* hostile workers' objects nobody else can free (and their leased slabs) */
  sim_parts *parts; /* by rank: a reply whose parts are still coming */
  uint64_t continued; /* reply parts that said PROTO_REPLY_MORE */
} sim;

/* sim.c */
uint64_t sim_rnd(uint64_t *s);
/* A reply for worker `rank` (well-behaved or hostile): false while its parts are still coming
 * (the part is kept); true when m is whole, its tail then the parts' joined (valid until the
 * next call for this rank). A part that continues with an error, or names another request
 * than the parts before it, is a wrong reply (reported; the parts are dropped). */
bool sim_join_reply(sim *S, int rank, proto_msg *m);
void sim_send(sim *S, int from, int to, const void *data, size_t len);
/* Record a failure of kind k (sim.h: SIM_FAIL_*); the first one's text is kept. Failures of
 * well-behaved workers and storms stop the seed (stop); hostile findings are counted on. */
void sim_fail(sim *S, int k, bool stop, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Does [addr, addr + extent) lie in the GAS, aligned, and (overlap) clear of every object in
 * both tries? */
bool sim_place_ok(sim *S, uintptr_t addr, size_t extent, const char *who, bool overlap);
uint64_t sim_live_key(uintptr_t addr);
/* Bytes an object of size occupies (slots up to a slab, whole slabs above). */
size_t sim_extent(size_t size);
/* A slab leased to well-behaved worker i (the r-th, modulo its count): 1, or 0 when none. */
uint32_t sim_worker_leased(const sim *S, int i, uint64_t r, uint64_t *slab);
/* Every worker (well-behaved and hostile) is done: all tell their leaves FINALIZE. */
void sim_maybe_finalize_all(sim *S);
/* A public region (its index in S->publics) that worker rank does not hold, with its pinned
 * object when pinned; -1 when there is none (yet). */
int sim_public_other(sim *S, int rank, bool pinned);
/* The rank of well-behaved worker i. */
int sim_worker_rank(const sim *S, int i);

/* hostile.c */
int hostile_setup(sim *S);
void hostile_start(sim *S, int k);
void hostile_on_message(sim *S, int k, const unsigned char *data, size_t len);
/* Nothing left to deliver: requests still unanswered are silent drops. False when no hostile
 * worker sent anything after it (the run is over). */
bool hostile_on_quiet(sim *S);
/* Has a hostile worker handed region rid to the well-behaved worker of rank `rank` (the
 * hand-over or its hand-back may be in flight)? That worker holds it then, without knowing. */
bool hostile_gave(const sim *S, rid_t rid, int rank);
void hostile_finalize(sim *S, int k);
void hostile_teardown(sim *S);

#endif

/* server_internal.h: the server's state, shared by server.c (life cycle and local service),
 * dispatch.c (the way of a message, by the table of kinds), route.c (routing tries), trade.c
 * (pages and IDs), events.c (multi-step operations), move.c (packs and hand-overs). */
#ifndef AH_SCHED_SERVER_INTERNAL_H
#define AH_SCHED_SERVER_INTERNAL_H

#include "common/types.h"
#include "region/region.h"
#include "proto/proto.h"
#include "sched/server.h"
#include "trie/rangeset.h"
#include "trie/trie.h"

enum route_kind { ROUTE_LOCAL, ROUTE_CHILD, ROUTE_PARENT, ROUTE_UNKNOWN };
typedef struct {
  enum route_kind kind;
  int child; /* rank, for ROUTE_CHILD */
} route;

/* A message kept for later (a request waiting for a refill). */
typedef struct parked {
  struct parked *next;
  int from, tries;
  size_t len;
  unsigned char msg[];
} parked;

/* A multi-step operation waiting for replies from other schedulers. */
typedef struct event {
  struct event *next;
  uint64_t id;
  int remaining;            /* replies still expected */
  unsigned type;            /* MSG_RFREE, MSG_PACK or MSG_PACKV */
  int status;               /* the first error a part answered */
  uint64_t req;             /* the original request */
  int32_t origin, reply_to; /* worker that asked; rank the final reply goes to */
  uint64_t *ranges;         /* MSG_PACK(V): collected {addr, len} pairs */
  size_t nranges, cap;
  int phase;                /* a hand-over (move.c): 1 checking and packing, 2 committing */
  unsigned char *request;   /* ... and the worker's PACKV, which the commit round names again */
  size_t request_len;
} event;

struct sched_server {
  const sched_tree *tree;
  int me;
  sched_config cfg;
  sched_transport tx;
  void **kchunks; /* memory under the kernel pool */
  int nkchunks, kcap;
  slab_pool *kernel;
  region_layer *layer;
  rangeset owned_pages, owned_ids; /* what this scheduler answers for */
  trie deleg_pages, deleg_ids; /* start -> (count << 8 | child slot + 1) */
  trie remote_kids;            /* region on a child's subtree -> its local parent + 1 */
  trie kids_by_parent;         /* the same, by parent: (parent << 32 | child) -> 1 (kids.c) */
  trie remote_parent;          /* local region with a parent elsewhere -> that scheduler + 1 */
  int *children;               /* scheduler children ranks (slot = index) */
  int nchildren;
  uint64_t *child_load;
  uint64_t reported_load;
  parked *parked_head, **parked_tail;
  bool refill_pending, booted;
  size_t refill_need; /* pages the largest parked request needs */
  size_t refill_asked; /* pages the refill under way asked for */
  parked *parked_refills;      /* children's REFILLs waiting for our own refill */
  event *events;
  uint64_t next_event;
  int workers_done, children_returned, workers_direct;
  trie *finalized;  /* workers that sent FINALIZE (a second one is malformed) */
  int replay_tries; /* while replaying a parked request: how often it was parked before */
  bool replaying;   /* a parked message is handled again: not counted as received twice */
  bool done;
  int conservation; /* root: 0 ok, -1 missing, 1 not checked */
  uint64_t returned_pages_total, returned_ids_total;
  uint64_t *stat_rows; /* root: per-scheduler statistics rows gathered at shutdown */
  size_t nstat_rows, stat_cap;
  sched_stats st;
  unsigned char *out; /* scratch for building messages */
  size_t outcap;
};

/* The handler of every message kind (proto/kinds.def's handler column): server.c serves
 * requests on the spot, dispatch.c adapts the rest; dispatch.c calls them. */
#define PROTO_KIND(NAME, fixed, tail, check, route, key, by, handler)                         \
  void handler(sched_server *s, int from, const proto_msg *m);
#include "proto/kinds.def"

/* server.c */
void srv_send(sched_server *s, int to, const void *msg, size_t len);
void srv_forward(sched_server *s, int to, const proto_msg *m);
void srv_answer(sched_server *s, const proto_msg *m, int status, const uint64_t *tail,
                uint32_t ntail);
void srv_reply(sched_server *s, int32_t dest, uint64_t req, int32_t origin, int status,
               const uint64_t *tail, uint32_t ntail);
/* One part of a reply in several messages (proto.h: PROTO_REPLY_MORE in flags on all but the
 * last); srv_reply is the whole reply in one. */
void srv_reply_part(sched_server *s, int32_t dest, uint64_t req, int32_t origin, int status,
                    const uint64_t *tail, uint32_t ntail, uint32_t flags);
int srv_reply_dest(const proto_msg *m);
void srv_log(sched_server *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int srv_child_slot(const sched_server *s, int rank);
uint64_t srv_subtree_load(const sched_server *s);
void srv_report_load(sched_server *s);

/* route.c */
route route_region(const sched_server *s, rid_t rid);
route route_addr(const sched_server *s, uintptr_t addr);
/* A leased slab handed back: where its region lives, or here if it is one of our zombies. */
route route_lease(const sched_server *s, uintptr_t slab);
int deleg_add(trie *t, uint64_t start, uint64_t count, int slot);
int deleg_find(const trie *t, uint64_t key, uint64_t *start, uint64_t *count);
void deleg_remove_span(trie *t, uint64_t start, uint64_t count); /* every chunk inside */

/* trade.c */
void trade_boot(sched_server *s);
void trade_park(sched_server *s, int from, const proto_msg *m, int rc);
void trade_on_refill(sched_server *s, int from, const proto_msg *m);
void trade_on_grant(sched_server *s, const proto_msg *m);
void trade_check_ceiling(sched_server *s);
void trade_on_giveback(sched_server *s, int from, const proto_msg *m);
void trade_check_low(sched_server *s);
void trade_on_finalize(sched_server *s);
void trade_on_return(sched_server *s, int from, const proto_msg *m);
uint64_t page_of(const sched_server *s, uintptr_t addr);

/* events.c */
event *event_new(sched_server *s, unsigned type, const proto_msg *m, int remaining);
void event_drop(sched_server *s, event *e);
void event_rfree(sched_server *s, const proto_msg *m);
void event_on_reply(sched_server *s, const proto_msg *m);
/* Place a new region under parent: here, or further down. parent_sched holds the parent region
 * (this scheduler for a RALLOC served here). */
void place_region(sched_server *s, int from, const proto_msg *m, rid_t parent, int hint,
                  int parent_sched);
void event_on_created(sched_server *s, const proto_msg *m);
void event_on_unlink(sched_server *s, const proto_msg *m);

/* kids.c: remote children, by child and by parent */
int kids_remember(sched_server *s, rid_t child, rid_t parent); /* overwrites; ENOMEM */
void kids_forget(sched_server *s, rid_t child);
/* The remote children of rid and its local descendants, as {child, parent} pairs (malloc'ed in
 * *out, possibly NULL), *n of them: 0, or ENOMEM with none (never some of them). A free collects
 * them before it frees, so that running out of memory frees nothing. */
int kids_under(sched_server *s, rid_t rid, rid_t **out, size_t *n);

/* move.c */
void event_pack(sched_server *s, const proto_msg *m);
void event_packv(sched_server *s, const proto_msg *m);
void move_on_reply(sched_server *s, event *e, const proto_msg *m);

#endif

/* proto.h: the wire protocol between workers and schedulers, and between schedulers.
 *
 * Every message is a fixed 32-byte header followed by a payload whose fixed part is set by
 * the type, optionally followed by a tail of 64-bit words (the count is in the fixed part).
 * All fields have fixed sizes; a message is validated (magic, version, type, exact length,
 * counts in range) before anything reads it: proto_decode. Ranks only talk to their
 * parent and children; a request travels by its content (region ID or address), a reply or
 * notification carries its destination rank and travels hop by hop along the tree. What each
 * kind of message is (its layout, tail, checks, route, senders and handler) is one row of
 * proto/kinds.def.
 */
#ifndef AH_PROTO_H
#define AH_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_MAGIC 0xA17Eu
#define PROTO_VERSION 6u /* 6: replies in several messages (PROTO_REPLY_MORE) */
#define PROTO_MAX_TAIL (1u << 20) /* 64-bit words in one message's tail */
#define PROTO_NO_DEST (-1)

/* Message kinds: the rows of proto/kinds.def, numbered from 1 in its order. */
enum proto_type {
  MSG_TYPE_NONE = 0, /* no message has type 0 */
#define PROTO_KIND(NAME, fixed, tail, check, route, key, by, handler) MSG_##NAME,
#include "proto/kinds.def"
  MSG_TYPE_END
};

/* How a scheduler finds where a message kind is served (kinds.def's route column). */
enum proto_route {
  PROTO_ROUTE_REGION, /* by the region ID at the kind's key offset: where the region lives */
  PROTO_ROUTE_ADDR,   /* by the address at the key offset: where the object lives */
  PROTO_ROUTE_LEASE,  /* by the first slab of the tail: where the leased slab's region lives */
  PROTO_ROUTE_GATHER, /* served by the first scheduler, which gathers parts from the others */
  PROTO_ROUTE_DEST,   /* travels hop by hop to header.dest, handled there */
  PROTO_ROUTE_HERE    /* handled by the neighbour that receives it */
};

/* Who may send a message kind (kinds.def's by column). */
enum proto_sender {
  PROTO_BY_WORKER, /* a worker, as its own request; schedulers forward it */
  PROTO_BY_SCHED   /* a parent or child scheduler only */
};

typedef struct proto_header {
  uint16_t magic;
  uint8_t version;
  uint8_t type;
  uint32_t length;  /* payload bytes after the header */
  uint64_t req;     /* request id, unique per origin worker */
  int32_t origin;   /* rank of the worker that asked (or -1) */
  int32_t dest;     /* rank a reply/notification goes to, or PROTO_NO_DEST */
  int32_t status;   /* 0 or an errno code (replies, grants) */
  int32_t sched;    /* scheduler rank a multi-step event returns to (or -1) */
} proto_header;

typedef struct { uint32_t parent; int32_t level_hint; } proto_ralloc;
/* parent1: 0, or (an RFREE a scheduler sends for a remote child) that child's parent ID + 1:
 * a region with the ID under another parent reused a freed child's ID, and is not freed. */
typedef struct { uint32_t rid; uint32_t parent1; } proto_rid;
typedef struct { uint64_t size; uint32_t rid; uint32_t n; } proto_alloc;
typedef struct { uint64_t addr; } proto_addr;
typedef struct { uint64_t addr, size; uint32_t rid; uint32_t pad; } proto_realloc;
/* A worker's allocation cache asks for want (>= min) empty slabs of the slot size holding
 * size (<= one slab) in region rid; at most PROTO_LEASE_MAX slabs at once. */
#define PROTO_LEASE_MAX 4096u
typedef struct { uint64_t size; uint32_t rid, want, min, pad; } proto_lease;
/* ... and hands n of them back, all granted by one scheduler (routed by the first slab). */
typedef struct { uint32_t n, pad; } proto_unlease;
/* A PACKV packs what a move names and checks that the asking worker (header.origin) holds it:
 * every named region with every descendant, and the region of every named object (which must
 * be an object's start). Flags:
 *   PACKV_HANDOVER  the move hands the regions (with descendants) to worker `peer`: once every
 *                   scheduler has checked its part, a second round commits (PACKV_COMMIT), and
 *                   only then does the worker hear back;
 *   PACKV_HANDBACK  a move that failed after its hand-over: regions (no objects) that the
 *                   asking worker handed to `peer` come back to it;
 *   PACKV_NO_RANGES check (and hand over) only: the reply has no ranges;
 *   PACKV_OWNED     regions only, no hand-over, not the root region: the reply has what the
 *                   regions own (every range given to their pools, used or free: a few per
 *                   region), not their live slabs: what a worker gives back to the OS before
 *                   it frees them;
 * and, only between schedulers:
 *   PACKV_SKIP_GONE for the remote children of a packed region: one that no longer exists is
 *                   left out instead of failing the pack; such a part names no objects, and its
 *                   tail has the parent each child was found under after the children (a
 *                   region with that ID under another parent reused a freed child's ID: gone);
 *   PACKV_COMMIT    the second round of a hand-over or hand-back. */
#define PACKV_SKIP_GONE 1u
#define PACKV_HANDOVER 2u
#define PACKV_HANDBACK 4u
#define PACKV_NO_RANGES 8u
#define PACKV_COMMIT 16u
#define PACKV_OWNED 32u
#define PACKV_FLAGS 63u
#define PACKV_WORKER_FLAGS (PACKV_HANDOVER | PACKV_HANDBACK | PACKV_NO_RANGES | PACKV_OWNED)
typedef struct { uint32_t nreg, nobj, flags; int32_t peer; } proto_packv;
typedef struct {
  uint32_t parent;      /* the parent region's ID */
  int32_t level_hint;
  int32_t parent_sched; /* rank of the scheduler holding the parent region */
  int32_t pad;
} proto_create;
typedef struct { uint32_t rid, parent; } proto_created;
typedef struct { uint64_t pages; uint32_t ids; uint32_t pad; } proto_refill;
typedef struct { uint64_t page_addr, npages; uint32_t id_first, id_count; } proto_grant;
typedef struct { uint64_t regions; } proto_load;
/* tail: nranges x {addr, len}, nids x {first, count}, nrows x PROTO_STAT_WORDS (statistics
 * of every scheduler in the sender's subtree: rank, the first 13 sched_stats counters in the
 * order trade.c's my_stat_row writes them, the traffic counters, then its peak RSS in KiB) */
#define PROTO_STAT_WORDS 19
typedef struct {
  uint32_t nranges, nids, nrows, pad;
} proto_return;
/* A reply whose tail does not fit one message (the ranges of a pack) comes in several, in
 * order: every one but the last has PROTO_REPLY_MORE in flags and status 0; the receiver joins
 * their tails. Only pack replies (MSG_PACK, MSG_PACKV) continue. */
#define PROTO_REPLY_MORE 1u
typedef struct { uint32_t ntail; uint32_t flags; } proto_reply;

/* The largest fixed payload of any type. */
#define PROTO_MAX_FIXED 64

/* A decoded view of a message (pointers into the caller's buffer). */
typedef struct proto_msg {
  const proto_header *h;
  const void *fixed;     /* the type's fixed payload */
  const uint64_t *tail;  /* tail words, or NULL */
  uint32_t ntail;
} proto_msg;

/* Does reply m continue in another message (PROTO_REPLY_MORE)? m must be a MSG_REPLY. */
static inline bool proto_reply_more(const proto_msg *m) {
  return (((const proto_reply *)m->fixed)->flags & PROTO_REPLY_MORE) != 0;
}

/* Validate buf[0..len) and fill *m. 0; EPROTO when the message cannot be read (bad magic,
 * version, type, length or tail count: *m is not filled); EINVAL or E2BIG when it reads well
 * but a field is out of range (a size of 0, a batch of more objects than one reply can carry):
 * *m is filled, so that the request can be answered with that errno instead of dropped. */
int proto_decode(const void *buf, size_t len, proto_msg *m);
/* Bytes of the fixed payload of a type (0 for an unknown type). */
size_t proto_fixed_size(unsigned type);
/* Number of tail words announced by the fixed part of a decoded type. */
uint32_t proto_tail_count(unsigned type, const void *fixed);
const char *proto_type_name(unsigned type);
/* The route of a kind (PROTO_ROUTE_HERE for an unknown one). */
enum proto_route proto_route_of(unsigned type);
/* True when a worker may send the kind as its own request. */
bool proto_by_worker(unsigned type);
/* The key a decoded request of kind PROTO_ROUTE_REGION (a region ID), PROTO_ROUTE_ADDR (an
 * address) or PROTO_ROUTE_LEASE (the first slab of its tail) routes by; 0 for other kinds. */
uint64_t proto_route_key(const proto_msg *m);

/* Build a message into out (capacity cap): header fields, fixed payload, tail.
 * Returns its length, or 0 when it does not fit. */
size_t proto_build(void *out, size_t cap, unsigned type, uint64_t req, int32_t origin,
                   int32_t dest, int32_t status, int32_t sched, const void *fixed,
                   const uint64_t *tail, uint32_t ntail);

#endif /* AH_PROTO_H */

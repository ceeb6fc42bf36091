/* memo.h: the move memo. The range lists of moves this worker received from a worker that maps
 * the same GAS memory, kept until something may have changed them, so that sending the same
 * regions and objects on needs no pack at the schedulers.
 *
 * Why: on one host a move between workers that share the GAS copies nothing, and its cost is
 * the pack, a round trip to a scheduler that every worker of a stage asks at once (listx: 16
 * workers, one scheduler on a shared core, 30 moves a worker and repetition). A region passed
 * on unchanged, or handed back to whoever sent it, has the ranges it arrived with.
 *
 * When a memo is right: a move hands its regions (with descendants) and objects over; until the
 * receiver moves them on, nobody else allocates or frees in them (docs/DESIGN.md, "Same host: no
 * copy": a move is a hand-over). So a received list stays the schedulers' list until the
 * receiver changes something, or until ownership may have moved without a move:
 *   - any allocation, free, realloc, region allocation or region free by this worker forgets
 *     every memo (memo_forget_all: it cannot tell cheaply whether the region it touched lies
 *     under a memo's region), and so does a cache flush that handed slabs back (their objects
 *     join the packs) and a barrier (the other hand-over: a worker may allocate in a region
 *     the application gave it by convention between two barriers);
 *   - a memo is used once, by a send that names exactly its regions and objects in the same
 *     order, and is gone after it (the worker no longer holds them);
 *   - a send that had to pack forgets every memo: what it sent may be an ancestor or a
 *     descendant of a memo's region, which the worker cannot see when either is empty (no
 *     range to overlap);
 *   - a send served from a memo, and every receive, forget the memos that name one of its
 *     regions or objects or have a range overlapping its list.
 * What that leaves: a memo is wrong only if the application broke the hand-over (moved a
 * region while another worker held a descendant of it, say). Only shared-mode moves are
 * memoised and served, because there a move writes nothing: a wrong list only makes the
 * receiver map other pages in advance (gas_populate), or map pages that were given back.
 * A pack would have failed where a region was freed under the memo (ENOENT); the move goes
 * through with handles to a region that is gone. A copy moves bytes into the receiver's GAS,
 * so copies always ask the schedulers. Lists of more than MEMO_MAX_RANGES ranges or
 * MEMO_MAX_NAMES handle words are not kept (a pack costs little beside moving them).
 *
 * Pure bookkeeping, no MPI and no system calls. ANTHEAP_MOVE_MEMO=off turns it off (every
 * send packs), =check packs anyway and reports any difference (api.c), for tests. */
#ifndef AH_WORKER_MEMO_H
#define AH_WORKER_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/transfer.h"

#define MEMO_SLOTS 8 /* moves remembered; the oldest goes first */
#define MEMO_MAX_RANGES ((size_t)1 << 16)
#define MEMO_MAX_NAMES ((uint32_t)1 << 12)

typedef struct memo_entry {
  uint64_t *names; /* the move's handle words: nreg, nobj, region IDs, object pointers */
  uint32_t nnames;
  gas_range *r;    /* its ranges, sorted by address, not overlapping */
  size_t n;
  uint64_t age;    /* when it was kept (a counter) */
} memo_entry;

typedef struct memo {
  bool on;
  unsigned held;   /* memos in e[] (a free slot has names NULL) */
  uint64_t clock;
  memo_entry e[MEMO_SLOTS];
} memo;

void memo_init(memo *m, bool on);
void memo_destroy(memo *m);

/* Keep a received move: takes ownership of names (nnames handle words) and r (n ranges) in
 * any case. Forgets the memos it meets first (memo_forget_moved), then keeps it unless the
 * memo is off, the move names nothing, its lists are too long, or r has empty or overlapping
 * ranges (which a checked list never has); sorts r when it is not sorted. */
void memo_keep(memo *m, uint64_t *names, uint32_t nnames, gas_range *r, size_t n);

/* A memo for exactly these handle words: true, with its ranges handed over to the caller (who
 * frees *r) and the memo gone; false when there is none. */
bool memo_take(memo *m, const uint64_t *names, uint32_t nnames, gas_range **r, size_t *n);

/* A move of these handle words and ranges left or reached this worker: forget every memo
 * that names one of its regions or objects or overlaps one of its ranges (every memo, when r
 * is not sorted by address). */
void memo_forget_moved(memo *m, const uint64_t *names, uint32_t nnames, const gas_range *r,
                       size_t n);

/* No memo held: nothing for a change to forget (sys_alloc's and sys_free's inline test). */
static inline bool memo_none(const memo *m) { return m->held == 0; }

/* This worker changed some region: forget everything (inline: every sys_alloc calls it). */
void memo_drop_all(memo *m);
static inline void memo_forget_all(memo *m) {
  if (m->held) memo_drop_all(m);
}

/* What the worker did that may change a memo's list (memo_on_change decides what each
 * forgets; the rules are this file's opening note). */
typedef enum memo_change {
  MEMO_OBJECTS_CHANGED, /* an allocation, free or realloc: any may land in a region we hold */
  MEMO_REGIONS_CHANGED, /* a region allocated or freed: a child changes its parent's pack */
  MEMO_BARRIER,         /* regions may have changed hands by the application's convention */
  MEMO_SLABS_RETURNED,  /* a cache flush handed slabs back: their objects join the packs */
  MEMO_GIVEN,           /* regions given away (sys_give): a memo of them could only be refused */
  MEMO_SENT_PACKED,     /* a send that packed: maybe an ancestor or descendant of a memo */
  MEMO_MOVED            /* a move left (served from a memo) or arrived (copied): its lists */
} memo_change;

/* The handle words and ranges of the move a MEMO_MOVED change names. */
typedef struct memo_moved {
  const uint64_t *names;
  uint32_t nnames;
  const gas_range *r;
  size_t n;
} memo_moved;

/* The one place that decides what a change forgets: MEMO_MOVED the memos that meet `moved`
 * (memo_forget_moved), any other change every memo (moved is NULL then). Inline: every
 * sys_alloc calls it. */
static inline void memo_on_change(memo *m, memo_change c, const memo_moved *moved) {
  if (c == MEMO_MOVED) memo_forget_moved(m, moved->names, moved->nnames, moved->r, moved->n);
  else memo_forget_all(m);
}

/* Memos held (for tests). */
size_t memo_count(const memo *m);

#endif

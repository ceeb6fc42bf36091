/* memo.h: the move memo. The range lists of moves this worker received from a worker that maps
 * the same GAS memory, kept while nothing this worker did can have changed them, so that
 * sending the same regions and objects on needs no pack at the schedulers.
 *
 * Why: on one host a move between workers that share the GAS copies nothing, and its cost is
 * the pack, a round trip to a scheduler that every worker of a stage asks at once (listx: 16
 * workers, one scheduler on a shared core, 30 moves a worker and repetition). A region passed
 * on unchanged, or handed back to whoever sent it, has the ranges it arrived with.
 *
 * When a memo is right: a move hands its regions (with descendants) and objects over; until it
 * moves them on, the receiver holds them and nobody else allocates or frees in them (on one
 * host the sender must not even write them: docs/DESIGN.md, "A move is a hand-over"). So the
 * list stays the schedulers' list as long as this worker does not change anything:
 *   - any allocation, free, realloc, region allocation or region free by this worker forgets
 *     every memo (memo_forget_all: it cannot tell cheaply whether the region it touched lies
 *     under a memo's region);
 *   - a memo is used once, by a send that names exactly its regions and objects in the same
 *     order, and is gone after it (the worker no longer holds them);
 *   - a send or a receive forgets every other memo that names one of its regions or objects
 *     or has a range overlapping its list (a descendant sent on its own leaves the worker; a
 *     region that came back is kept anew).
 * Only shared-mode moves are memoised and served: there the move writes nothing, so even a
 * memo made wrong by another worker's misuse (freeing a region it does not hold) only gives
 * the receiver handles to a region that is gone, as a move just before that free would have.
 * A copy moves bytes into the receiver's GAS, so copies always ask the schedulers.
 *
 * Pure bookkeeping, no MPI and no system calls. ANTHEAP_MOVE_MEMO=off turns it off (every
 * send packs), for comparison. */
#ifndef AH_WORKER_MEMO_H
#define AH_WORKER_MEMO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/transfer.h"

#define MEMO_SLOTS 8 /* moves remembered; the oldest goes first */

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
 * any case (frees them when off, or when r has empty or overlapping ranges, which a checked
 * list never has; sorts r when it is not sorted). Forgets the memos it meets first
 * (memo_forget_moved). */
void memo_keep(memo *m, uint64_t *names, uint32_t nnames, gas_range *r, size_t n);

/* A memo for exactly these handle words: true, with its ranges handed over to the caller (who
 * frees *r) and the memo gone; false when there is none. */
bool memo_take(memo *m, const uint64_t *names, uint32_t nnames, gas_range **r, size_t *n);

/* A move of these handle words and ranges left or reached this worker: forget every memo
 * that names one of its regions or objects or overlaps one of its ranges (every memo, when r
 * is not sorted by address). */
void memo_forget_moved(memo *m, const uint64_t *names, uint32_t nnames, const gas_range *r,
                       size_t n);

/* This worker changed some region: forget everything (inline: every sys_alloc calls it). */
void memo_drop_all(memo *m);
static inline void memo_forget_all(memo *m) {
  if (m->held) memo_drop_all(m);
}

/* Memos held (for tests). */
size_t memo_count(const memo *m);

#endif

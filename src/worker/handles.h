/* handles.h: what a move names, typed (move_desc: the regions and objects of a sys_send, or
 * of a pack or hand-over), and its wire form, the handle words {nreg, nobj, region IDs...,
 * object pointers...} that a transfer carries to the receiver and the move memo keeps (memo.h).
 * handles.c is the only code that writes or reads those words. */
#ifndef AH_WORKER_HANDLES_H
#define AH_WORKER_HANDLES_H

#include <stdbool.h>
#include <stdint.h>

#include "antheap.h"

/* nreg regions (each with its descendants) and nobj objects (each an object's start). */
typedef struct move_desc {
  const rid_t *regions;
  uint32_t nreg;
  void *const *objects;
  uint32_t nobj;
} move_desc;

/* Only the regions of d. */
static inline move_desc move_desc_regions(const move_desc *d) {
  return (move_desc){.regions = d->regions, .nreg = d->nreg};
}

/* Words of d's wire form. */
static inline uint32_t move_words_count(const move_desc *d) { return 2 + d->nreg + d->nobj; }

/* d's wire form, malloc'ed, of move_words_count(d) words; NULL when out of memory. */
uint64_t *move_words_encode(const move_desc *d);

/* Are w[0..n) the wire form of nreg regions and nobj objects? */
bool move_words_fit(const uint64_t *w, uint32_t n, uint32_t nreg, uint32_t nobj);

/* The regions and objects of a wire form that fits (move_words_fit) into the caller's arrays
 * (of w[0] and w[1] entries). */
void move_words_decode(const uint64_t *w, rid_t *regions, void **objects);

/* Is word i (from 2 on) of a wire form a region ID (else an object pointer)? */
static inline bool move_word_is_region(const uint64_t *w, uint32_t i) { return i < 2 + w[0]; }

#endif /* AH_WORKER_HANDLES_H */

/* handles.c: a move's handles to and from their wire form (handles.h). */
#include "worker/handles.h"

#include <stdlib.h>

uint64_t *move_words_encode(const move_desc *d) {
  uint64_t *w = malloc((size_t)move_words_count(d) * sizeof *w);
  if (!w) return NULL;
  w[0] = d->nreg;
  w[1] = d->nobj;
  for (uint32_t i = 0; i < d->nreg; i++) w[2 + i] = d->regions[i];
  for (uint32_t i = 0; i < d->nobj; i++) w[2 + d->nreg + i] = (uintptr_t)d->objects[i];
  return w;
}

bool move_words_fit(const uint64_t *w, uint32_t n, uint32_t nreg, uint32_t nobj) {
  return n >= 2 && w[0] == nreg && w[1] == nobj && n == 2 + (uint64_t)nreg + nobj;
}

void move_words_decode(const uint64_t *w, rid_t *regions, void **objects) {
  uint64_t nreg = w[0], nobj = w[1];
  for (uint64_t i = 0; i < nreg; i++) regions[i] = (rid_t)w[2 + i];
  for (uint64_t i = 0; i < nobj; i++) objects[i] = (void *)(uintptr_t)w[2 + nreg + i];
}

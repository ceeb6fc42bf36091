/* runs.c: class runs, several contiguous slabs of one class under one descriptor. A lease of
 * many slabs is carved as one run (lease.c), and a run whose slabs all come back full stays
 * one descriptor, so a worker that fills a thousand slabs costs its scheduler a handful of
 * descriptors instead of a thousand. When the slabs of a run part ways (some come back
 * partial or empty, an object in one is freed), the run is cut into pieces here, each piece a
 * descriptor of its own. Every cut registers at most one descriptor, so it either happens
 * whole or (ENOMEM) not at all. Main entries: run_cut_tail, run_uncut_tail, run_isolate. */
#include <errno.h>

#include "slab/pool_internal.h"

int run_cut_tail(slab_pool *p, slab_desc *d, size_t n, slab_desc **tail) {
  AH_ASSERT(desc_is_class_run(d) && n >= 1 && n < d->nslabs);
  slab_desc *t;
  uintptr_t at = d->addr + ((uintptr_t)(d->nslabs - n) << AH_SLAB_SHIFT);
  if (desc_register(p, &t, at, (uint32_t)n)) return ENOMEM;
  t->cls = d->cls;
  t->lessee = d->lessee;
  t->bitmap = d->bitmap;
  t->used = d->used;
  list_count(d->cls, d->list, -(int64_t)n); /* desc_move counts them again, as t's */
  d->nslabs -= (uint32_t)n;
  desc_move(t, (enum slab_list)d->list);
  if (tail) *tail = t;
  return 0;
}

void run_uncut_tail(slab_pool *p, slab_desc *d, slab_desc *tail) {
  AH_ASSERT(tail->addr == d->addr + desc_bytes(d) && tail->cls == d->cls);
  desc_move(tail, LIST_DETACHED);
  d->nslabs += tail->nslabs;
  list_count(d->cls, d->list, tail->nslabs);
  desc_unregister(p, tail);
}

int run_isolate(slab_pool *p, slab_desc *d, uintptr_t addr, slab_desc **slab) {
  size_t j = (desc_slab_of(d, addr) - d->addr) >> AH_SLAB_SHIFT, n = d->nslabs;
  slab_desc *after = NULL, *one = NULL;
  if (j + 1 < n && run_cut_tail(p, d, n - j - 1, &after)) /* the slabs after it */
    return ENOMEM;
  if (j == 0) {
    *slab = d;
    return 0;
  }
  if (run_cut_tail(p, d, 1, &one)) {
    if (after) run_uncut_tail(p, d, after);
    return ENOMEM;
  }
  *slab = one;
  return 0;
}

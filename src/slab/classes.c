/* classes.c: a pool's size classes and the slabs in their use.
 *   - class records: the Partial trie (slot units -> class) and its array mirror, which the hot
 *     path reads (pool_internal.h: class_find);
 *   - descriptors and the Used trie: slabs entering and leaving use (desc_register,
 *     desc_unregister, desc_find);
 *   - carving slabs for a class (with preallocation for busy classes), lazy return of empty
 *     slabs, finding free slabs (pool_pick_slabs: Free, else the classes' empty slabs, else
 *     growth), and the maintenance a pool does after each outermost call (trimming; for a
 *     self-hosted pool, refilling the reserve of empty 64-B slabs its re-entrant metadata
 *     allocations draw on);
 *   - class runs: several contiguous slabs of one class under one descriptor. A lease of many
 *     slabs is carved as one run (lease.c), and a run whose slabs all come back full stays one
 *     descriptor, so a worker that fills a thousand slabs costs its scheduler a handful of
 *     descriptors instead of a thousand. When the slabs of a run part ways (some come back
 *     partial or empty, an object in one is freed), the run is cut into pieces, each piece a
 *     descriptor of its own. Every cut registers at most one descriptor, so it either happens
 *     whole or (ENOMEM) not at all.
 * Calls down to ranges.c (Free) and, for its records, to alloc.c (meta_alloc: the metadata
 * pool, itself a slab pool: the one call back up, inherent in self-hosting).
 * Main entries: class_create, slabs_carve_for_class, pool_pick_slabs, pool_maintain,
 * run_cut_tail, run_isolate. */
#include <errno.h>

#include "slab/pool_internal.h"

/* ---- class records ---- */

int class_create(slab_pool *p, uint32_t slot_size, slab_class **out) {
  unsigned units = slot_size >> AH_SLOT_ALIGN_SHIFT;
  AH_ASSERT(units >= 1 && units <= SLAB_CLASS_UNITS && !p->class_cache[units]);
  if (!structural_ok(p)) return ENOMEM;
  slab_class *c = meta_alloc(p);
  if (!c) return ENOMEM;
  *c = (slab_class){.slot_size = slot_size,
                    .recip = (uint32_t)((((uint64_t)1 << 32) + slot_size - 1) / slot_size),
                    .capacity = (uint16_t)(AH_SLAB_SIZE / slot_size),
                    .pack_version = &p->pack_version};
  int rc = trie_insert(&p->partial, units, (uintptr_t)c);
  if (rc) {
    meta_free(p, c);
    return rc;
  }
  p->class_cache[units] = c;
  p->classes++;
  *out = c;
  return 0;
}

/* ---- descriptors, carving, trimming, maintenance ---- */

int desc_register(slab_pool *p, slab_desc **out, uintptr_t addr, uint32_t nslabs) {
  slab_desc *d = meta_alloc(p);
  if (!d) return ENOMEM;
  *d = (slab_desc){.addr = addr, .nslabs = nslabs, .list = LIST_DETACHED};
  p->pack_version++;
  int rc = trie_insert(&p->used, slab_key(p, addr), (uintptr_t)d);
  if (rc) {
    meta_free(p, d);
    return rc;
  }
  *out = d;
  return 0;
}

void desc_unregister(slab_pool *p, slab_desc *d) {
  int rc = trie_delete(&p->used, slab_key(p, d->addr), NULL);
  AH_ASSERT(rc == 0);
  (void)rc;
  if (p->last_desc == d) p->last_desc = NULL;
  p->pack_version++;
  meta_free(p, d);
}

slab_desc *desc_find(const slab_pool *p, uintptr_t addr) {
  slab_desc *d = p->last_desc;
  if (d && addr - d->addr < desc_bytes(d)) return d;
  if (!in_window(p, addr)) return NULL;
  /* Most addresses lie in a slab with its own descriptor: an exact find; interior slabs of a
   * run (and wild addresses) need the nearest search. */
  uint64_t key = slab_key(p, addr);
  uintptr_t v = trie_find(&p->used, key);
  if (!v && trie_le(&p->used, key, NULL, &v)) return NULL;
  d = (slab_desc *)v;
  return addr - d->addr < desc_bytes(d) ? d : NULL;
}

/* Return the empty slabs every class keeps (lazy return) to the Free trie, all but the
 * metadata reserve of a self-hosted pool: what a pool does before it asks for more space. */
static void reclaim_empty_slabs(slab_pool *p) {
  trie_cursor c;
  uintptr_t v;
  slab_class *batch[SLAB_CLASS_UNITS];
  size_t n = 0;
  trie_cursor_seek(&c, &p->partial, 0); /* collect first: releasing changes the tries */
  while (trie_cursor_next(&c, NULL, &v)) batch[n++] = (slab_class *)v;
  for (size_t i = 0; i < n; i++) {
    bool meta = p->self_hosted && batch[i]->slot_size == AH_SLOT_ALIGN;
    pool_trim_class(p, batch[i], meta ? SLAB_META_RESERVE : 0);
  }
}

/* Find nslabs free slabs without taking them yet: from Free, else after reclaiming the
 * classes' empty slabs, else after growing the pool once. */
int pool_pick_slabs(slab_pool *p, size_t nslabs, uintptr_t *addr) {
  if (free_range_pick(p, nslabs, addr) == 0) return 0;
  reclaim_empty_slabs(p);
  if (free_range_pick(p, nslabs, addr) == 0) return 0;
  if (pool_grow(p, nslabs << AH_SLAB_SHIFT)) return ENOMEM;
  return free_range_pick(p, nslabs, addr);
}

/* Carve the free slabs [addr, addr + want slabs) for class c; the lowest address ends up at
 * the head of its empty list. */
static int carve_at(slab_pool *p, slab_class *c, uintptr_t addr, size_t want) {
  slab_desc *fresh[want];
  for (size_t i = 0; i < want; i++) {
    if (desc_register(p, &fresh[i], addr + (i << AH_SLAB_SHIFT), 1)) {
      while (i--) desc_unregister(p, fresh[i]);
      return ENOMEM;
    }
  }
  free_range_take(p, addr, want);
  uint64_t phantom = phantom_bits(c);
  for (size_t i = want; i-- > 0;) {
    fresh[i]->cls = c;
    fresh[i]->bitmap = phantom;
    desc_move(fresh[i], LIST_EMPTY);
  }
  c->slabs_carved += (uint32_t)want;
  return 0;
}

int slabs_carve_for_class(slab_pool *p, slab_class *c) {
  if (!structural_ok(p)) return ENOMEM;
  size_t want = c->slabs_carved && p->cfg.prealloc > 1 ? p->cfg.prealloc : 1;
  uintptr_t addr;
  if (free_range_pick(p, want, &addr) != 0) {
    want = 1;
    if (pool_pick_slabs(p, want, &addr)) return ENOMEM;
  }
  return carve_at(p, c, addr, want);
}

int slab_release_empty(slab_pool *p, slab_desc *d) {
  AH_ASSERT(d->used == 0 && d->list == LIST_EMPTY);
  if (!structural_ok(p)) return EAGAIN;
  /* Off the list first, so re-entrant metadata allocations cannot pick this slab. */
  desc_move(d, LIST_DETACHED);
  int rc = free_range_add(p, d->addr, d->nslabs);
  if (rc) {
    desc_move(d, LIST_EMPTY);
    return rc;
  }
  desc_unregister(p, d);
  return 0;
}

void pool_trim_class(slab_pool *p, slab_class *c, unsigned keep) {
  while (c->n_empty > keep)
    if (slab_release_empty(p, c->empty)) return;
}

void pool_maintain(slab_pool *p) {
  AH_ASSERT(p->depth == 1);
  if (p->touched) {
    pool_trim_class(p, p->touched, p->cfg.empty_keep);
    p->touched = NULL;
  }
  if (!p->self_hosted) return;
  slab_class *mc = class_find(p, AH_SLOT_ALIGN);
  unsigned keep = meta_keep(p);
  while (mc->n_empty < SLAB_META_RESERVE)
    if (slabs_carve_for_class(p, mc)) break; /* out of memory: later calls may get ENOMEM */
  pool_trim_class(p, mc, keep);
}

/* ---- class runs ---- */

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

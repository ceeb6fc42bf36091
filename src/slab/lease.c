/* lease.c: whole empty slabs leased to a worker's allocation cache, and handed back with the
 * bitmap of their live slots (slab.h explains the contract). Main entry points: slab_lease,
 * slab_lease_check, slab_lease_return. */
#include <errno.h>

#include "slab/pool_internal.h"

/* Slots past the end of a slab of class c: always set in its bitmap. */
static uint64_t phantom_bits(const slab_class *c) {
  return c->capacity == 64 ? 0 : ~0ull << c->capacity;
}

/* Take one empty slab of c (carving if the class has none) and lease it. */
static int lease_one(slab_pool *p, slab_class *c, int32_t lessee, uintptr_t *addr) {
  if (!c->empty) {
    int rc = slabs_carve_for_class(p, c);
    if (rc) return rc;
  }
  slab_desc *d = c->empty;
  desc_move(d, LIST_LEASED);
  d->bitmap = ~0ull;
  d->used = c->capacity;
  d->lessee = lessee;
  p->leased_slabs++;
  *addr = d->addr;
  return 0;
}

/* Undo a lease that was never handed out (the slab goes back to the empty list). */
static void unlease_empty(slab_pool *p, slab_desc *d) {
  d->bitmap = phantom_bits(d->cls);
  d->used = 0;
  desc_move(d, LIST_EMPTY);
  p->leased_slabs--;
  if (d->cls->n_empty > p->cfg.empty_keep) p->touched = d->cls;
}

int slab_lease(slab_pool *p, size_t size, size_t want, size_t min, int32_t lessee,
               uintptr_t *slabs, size_t *got, uint32_t *slot) {
  if (size == 0 || size > AH_SLAB_SIZE || min == 0 || want < min) return EINVAL;
  uint32_t s = (uint32_t)ah_round_up(size, AH_SLOT_ALIGN);
  pool_enter(p);
  slab_class *c;
  int rc = class_get(p, s, &c);
  size_t n = 0;
  if (!rc && want > (size_t)c->n_empty + 1) /* one contiguous run when a free range holds it */
    (void)slabs_carve_run(p, c, want - c->n_empty);
  while (!rc && n < want) {
    rc = lease_one(p, c, lessee, &slabs[n]);
    if (!rc) n++;
  }
  if (n < min) { /* all or nothing below min */
    while (n) unlease_empty(p, desc_find(p, slabs[--n]));
    rc = rc ? rc : ENOMEM;
  } else {
    rc = 0;
  }
  pool_leave(p);
  if (rc) return rc;
  *got = n;
  *slot = s;
  return 0;
}

/* The descriptor of a slab leased to lessee, or NULL. */
static slab_desc *leased_desc(const slab_pool *p, uintptr_t addr, int32_t lessee) {
  slab_desc *d = desc_find(p, addr);
  if (!d || d->addr != addr || d->list != LIST_LEASED || d->lessee != lessee) return NULL;
  return d;
}

int slab_lease_check(const slab_pool *p, uintptr_t addr, int32_t lessee, uint64_t live) {
  const slab_desc *d = leased_desc(p, addr, lessee);
  if (!d || (live & phantom_bits(d->cls))) return EINVAL;
  return 0;
}

void slab_lease_return(slab_pool *p, uintptr_t addr, uint64_t live) {
  slab_desc *d = desc_find(p, addr);
  AH_ASSERT(d && d->addr == addr && d->list == LIST_LEASED && !(live & phantom_bits(d->cls)));
  slab_class *c = d->cls;
  pool_enter(p);
  unlease_empty(p, d); /* now an empty slab of its class; then the live slots come back */
  unsigned n = (unsigned)__builtin_popcountll(live);
  if (n) {
    d->bitmap |= live;
    d->used = (uint16_t)n;
    desc_move(d, n == c->capacity ? LIST_FULL : LIST_PARTIAL);
    p->objects += n;
    p->object_bytes += (size_t)n * c->slot_size;
    if (p->touched == c && c->n_empty <= p->cfg.empty_keep) p->touched = NULL;
  }
  pool_leave(p);
}

void slab_lease_walk(const slab_pool *p, slab_lease_fn fn, void *ctx) {
  for (unsigned u = 1; u <= SLAB_CLASS_UNITS; u++) {
    const slab_class *c = p->class_cache[u];
    if (!c) continue;
    for (const slab_desc *d = c->leased, *next; d; d = next) {
      next = d->next; /* fn may not change the pool, but read ahead all the same */
      fn(ctx, d->addr, d->lessee, c->slot_size);
    }
  }
}

/* alloc.c: allocating and freeing objects, and looking addresses up; and a pool's own records,
 * which are objects of its meta pool (64-B slots), or, while a self-hosted pool bootstraps,
 * come from a bump allocator over its boot slabs. Calls down to classes.c and ranges.c.
 * Main entry points: slab_alloc, slab_free, slab_lookup, meta_alloc. */
#include <errno.h>

#include "slab/pool_internal.h"

static int alloc_slot(slab_pool *p, uint32_t slot, uintptr_t *out) {
  slab_class *c;
  int rc = class_get(p, slot, &c);
  if (rc) return rc;
  slab_desc *d = c->partial;
  if (!d) {
    if (!c->empty && (rc = slabs_carve_for_class(p, c))) return rc;
    d = c->empty;
    /* an empty run: its first slab, the rest stays empty */
    if (d->nslabs > 1 && (!structural_ok(p) || run_cut_tail(p, d, d->nslabs - 1, NULL)))
      return ENOMEM;
    desc_move(d, LIST_PARTIAL);
  }
  unsigned i = (unsigned)__builtin_ctzll(~d->bitmap);
  d->bitmap |= 1ull << i;
  if (++d->used == c->capacity) desc_move(d, LIST_FULL);
  AH_ASSERT(desc_counts_ok(d));
  p->objects++;
  p->object_bytes += slot;
  *out = d->addr + (uintptr_t)i * slot;
  return 0;
}

static int alloc_run(slab_pool *p, size_t size, uintptr_t *out) {
  if (!structural_ok(p)) return ENOMEM;
  size_t nslabs = ah_round_up(size, AH_SLAB_SIZE) >> AH_SLAB_SHIFT;
  if (nslabs > UINT32_MAX) return ENOMEM;
  uintptr_t addr;
  if (pool_pick_slabs(p, nslabs, &addr)) return ENOMEM;
  slab_desc *d;
  if (desc_register(p, &d, addr, (uint32_t)nslabs)) return ENOMEM;
  free_range_take(p, addr, nslabs);
  d->used = 1;
  d->bitmap = 1;
  p->runs++;
  p->run_slabs += nslabs;
  p->objects++;
  p->object_bytes += nslabs << AH_SLAB_SHIFT;
  *out = addr;
  return 0;
}

int slab_alloc(slab_pool *p, size_t size, uintptr_t *addr) {
  if (size == 0 || size > p->cfg.span) return size == 0 ? EINVAL : ENOMEM;
  pool_enter(p);
  int rc = size <= AH_SLAB_SIZE
               ? alloc_slot(p, (uint32_t)ah_round_up(size, AH_SLOT_ALIGN), addr)
               : alloc_run(p, size, addr);
  pool_leave(p);
  return rc;
}

void *slab_malloc(slab_pool *p, size_t size) {
  uintptr_t addr = 0; /* (GCC 13 cannot see that slab_alloc sets it when it returns 0) */
  if (!p->self_hosted || slab_alloc(p, size, &addr)) return NULL;
  return (void *)addr;
}

/* Free a run: its slabs go back to Free first (the only step that can fail). */
static int free_run(slab_pool *p, slab_desc *d) {
  if (!structural_ok(p)) return EAGAIN;
  int rc = free_range_add(p, d->addr, d->nslabs);
  if (rc) return rc;
  p->runs--;
  p->run_slabs -= d->nslabs;
  p->objects--;
  p->object_bytes -= desc_bytes(d);
  desc_unregister(p, d);
  return 0;
}

static int free_slot(slab_pool *p, slab_desc *d, uintptr_t addr) {
  slab_class *c = d->cls;
  if (d->list == LIST_LEASED) return EINVAL; /* its slots belong to a worker's cache */
  uintptr_t off = addr - d->addr;
  uint32_t i = class_slot_index(c, off);
  if ((uintptr_t)i * c->slot_size != off || i >= c->capacity || !(d->bitmap & (1ull << i)))
    return EINVAL;
  d->bitmap &= ~(1ull << i);
  bool was_full = d->list == LIST_FULL;
  d->used--;
  p->objects--;
  p->object_bytes -= c->slot_size;
  if (d->used == 0) {
    desc_move(d, LIST_EMPTY);
    if (c->n_empty > p->cfg.empty_keep) p->touched = c;
  } else if (was_full) {
    desc_move(d, LIST_PARTIAL);
  }
  AH_ASSERT(desc_counts_ok(d));
  return 0;
}

/* Is addr the start of a live slot of class slab (or class run) d? */
static bool live_slot_start(const slab_desc *d, uintptr_t addr) {
  uintptr_t off = addr - desc_slab_of(d, addr);
  uint32_t i = class_slot_index(d->cls, off);
  return (uintptr_t)i * d->cls->slot_size == off && i < d->cls->capacity &&
         (d->bitmap >> i & 1);
}

/* Free an object of a class run: its slab becomes a descriptor of its own first. */
static int free_in_run(slab_pool *p, slab_desc *d, uintptr_t addr) {
  if (d->list != LIST_FULL || !live_slot_start(d, addr)) return EINVAL;
  if (!structural_ok(p)) return EAGAIN;
  slab_desc *one;
  if (run_isolate(p, d, addr, &one)) return ENOMEM;
  p->last_desc = one;
  return free_slot(p, one, addr);
}

int slab_free(slab_pool *p, uintptr_t addr) {
  slab_desc *d = desc_find(p, addr);
  if (!d) return EINVAL;
  p->last_desc = d;
  pool_enter(p);
  int rc;
  if (desc_is_class_run(d))
    rc = free_in_run(p, d, addr);
  else if (d->cls)
    rc = free_slot(p, d, addr);
  else
    rc = addr == d->addr ? free_run(p, d) : EINVAL;
  pool_leave(p);
  return rc;
}

int slab_lookup(const slab_pool *p, uintptr_t addr, uintptr_t *start, size_t *size) {
  const slab_desc *d = desc_find(p, addr);
  if (!d || d->list == LIST_LEASED) return EINVAL;
  uintptr_t base = d->cls ? desc_slab_of(d, addr) : d->addr;
  size_t slot = d->cls ? d->cls->slot_size : desc_bytes(d);
  uintptr_t i = d->cls ? class_slot_index(d->cls, addr - base) : 0;
  if (d->cls && (i >= d->cls->capacity || !(d->bitmap & (1ull << i)))) return EINVAL;
  if (start) *start = base + i * slot;
  if (size) *size = slot;
  return 0;
}

int slab_size_of(const slab_pool *p, uintptr_t addr, size_t *size) {
  uintptr_t start;
  int rc = slab_lookup(p, addr, &start, size);
  return rc ? rc : (start == addr ? 0 : EINVAL);
}

/* ---- metadata records ---- */
void *meta_alloc(slab_pool *p) {
  if (p->booting) {
    if (p->boot_next >= p->boot_end) return NULL;
    void *rec = (void *)p->boot_next;
    p->boot_next += AH_SLOT_ALIGN;
    return rec;
  }
  uintptr_t addr = 0; /* (set by slab_alloc on success; zeroed for the compiler) */
  return slab_alloc(p->meta, AH_SLOT_ALIGN, &addr) == 0 ? (void *)addr : NULL;
}

void meta_free(slab_pool *p, void *rec) {
  AH_ASSERT(!p->booting);
  int rc = slab_free(p->meta, (uintptr_t)rec);
  AH_ASSERT(rc == 0);
  (void)rc;
}

static trie_node *node_alloc(void *ctx) { return meta_alloc(ctx); }
static void node_release(void *ctx, trie_node *n) { meta_free(ctx, n); }

trie_node_source meta_node_source(slab_pool *p) {
  return (trie_node_source){.alloc = node_alloc, .release = node_release, .ctx = p};
}

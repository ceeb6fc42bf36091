/* slabmap.h: which thread's allocation cache holds each leased slab of the GAS.
 *
 * One word per 4-KiB slab of the GAS, in a mapping reserved at once and touched only where
 * slabs are leased (MAP_NORESERVE: a 64-GiB GAS reserves 128 MiB of address space): 0 for a
 * slab no thread caches, else the owning thread cache's address (aligned to SLABMAP_ALIGN)
 * with the slab's slot size in 64-B units in the low bits. A thread that frees an object its
 * own cache does not hold reads the owner here without a lock (tcache.c), and knows at once
 * whether the pointer is a slot's start. Written by the lease and unlease paths (tcache.c),
 * which hold the rank lock while they do, so that a slab leaves the map and goes back to its
 * scheduler as one step for any thread that then asks the scheduler. */
#ifndef AH_WORKER_SLABMAP_H
#define AH_WORKER_SLABMAP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/types.h"

#define SLABMAP_ALIGN 128 /* owners' alignment: slot / 64 (1 .. 64) fits below it */

typedef struct slabmap {
  uintptr_t base;
  size_t n; /* slabs covered */
  _Atomic uintptr_t *e;
} slabmap;

/* 0 or ENOMEM. */
int slabmap_init(slabmap *m, uintptr_t base, size_t size);
void slabmap_destroy(slabmap *m);

static inline _Atomic uintptr_t *slabmap_entry(const slabmap *m, uintptr_t addr) {
  uintptr_t i = (addr - m->base) >> AH_SLAB_SHIFT;
  return addr >= m->base && i < m->n ? &m->e[i] : NULL;
}

/* The owner of addr's slab (NULL: none) and its slot size (0 when none). */
static inline void *slabmap_owner(const slabmap *m, uintptr_t addr, size_t *slot) {
  _Atomic uintptr_t *p = slabmap_entry(m, addr);
  uintptr_t v = p ? atomic_load_explicit(p, memory_order_acquire) : 0;
  *slot = (size_t)(v & (SLABMAP_ALIGN - 1)) << AH_SLOT_ALIGN_SHIFT;
  return (void *)(v & ~(uintptr_t)(SLABMAP_ALIGN - 1));
}

/* Record (owner != NULL) or clear the owner of the slab at addr. */
static inline void slabmap_set(slabmap *m, uintptr_t addr, void *owner, size_t slot) {
  _Atomic uintptr_t *p = slabmap_entry(m, addr);
  if (!p) return;
  uintptr_t v = owner ? (uintptr_t)owner | (slot >> AH_SLOT_ALIGN_SHIFT) : 0;
  atomic_store_explicit(p, v, memory_order_release);
}

#endif

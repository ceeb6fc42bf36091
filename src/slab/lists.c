/* lists.c: size classes: creating a class record in the Partial trie (slot units -> class)
 * and its array mirror, which the hot path reads (pool_internal.h: class_find). */
#include <errno.h>

#include "slab/pool_internal.h"

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

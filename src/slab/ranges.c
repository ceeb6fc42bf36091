/* ranges.c: the space a pool manages: the Free trie, a range set of slab indices
 * (trie/rangeset.h) with the free-slab count kept beside it, ranges added by the caller
 * (pool_add_range) and growth through the pool's callback (pool_grow). Calls nothing else of
 * src/slab. Main entries: free_range_add, free_range_pick, free_range_take, pool_add_range,
 * pool_grow. */
#include <errno.h>

#include "slab/pool_internal.h"
#include "trie/rangeset.h"

int free_range_add(slab_pool *p, uintptr_t addr, size_t nslabs) {
  return rangeset_add(&p->free, slab_key(p, addr), nslabs);
}

int free_range_pick(const slab_pool *p, size_t nslabs, uintptr_t *addr) {
  uint64_t k;
  if (rangeset_pick_end(&p->free, nslabs, &k)) return ENOMEM;
  *addr = slab_addr(p, k);
  return 0;
}

void free_range_take(slab_pool *p, uintptr_t addr, size_t nslabs) {
  rangeset_take_end(&p->free, slab_key(p, addr), nslabs);
}

bool free_range_overlaps(const slab_pool *p, uintptr_t addr, size_t len) {
  return rangeset_overlaps(&p->free, slab_key(p, addr), len >> AH_SLAB_SHIFT);
}

/* The self-hosted pool's own header (its struct) lies at the start of its first chunk. */
static bool overlaps_header(const slab_pool *p, uintptr_t addr, size_t len) {
  if (!p->self_hosted) return false;
  uintptr_t h = (uintptr_t)p, hend = h + ah_round_up(sizeof *p, AH_SLAB_SIZE);
  return addr < hend && h < addr + len;
}

int pool_add_range(slab_pool *p, uintptr_t addr, size_t len) {
  if (len == 0 || addr % AH_SLAB_SIZE || len % AH_SLAB_SIZE || !in_window(p, addr) ||
      len > p->cfg.span - (addr - p->cfg.base))
    return EINVAL;
  uintptr_t v;
  if (trie_le(&p->used, slab_key(p, addr + len - 1), NULL, &v) == 0) {
    const slab_desc *d = (const slab_desc *)v;
    if (d->addr + desc_bytes(d) > addr) return EINVAL;
  }
  if (free_range_overlaps(p, addr, len) || overlaps_header(p, addr, len)) return EINVAL;
  return free_range_add(p, addr, len >> AH_SLAB_SHIFT);
}

int pool_grow(slab_pool *p, size_t min_bytes) {
  uintptr_t addr;
  size_t len;
  if (!p->cfg.grow || p->cfg.grow(p->cfg.grow_ctx, min_bytes, &addr, &len)) return ENOMEM;
  if (len < min_bytes) return ENOMEM;
  return pool_add_range(p, addr, len) ? ENOMEM : 0;
}

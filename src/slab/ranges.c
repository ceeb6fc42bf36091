/* ranges.c: the Free trie of a pool, a range set of slab indices (trie/rangeset.h), and the
 * free-slab count kept beside it. */
#include <errno.h>

#include "slab/pool_internal.h"
#include "trie/rangeset.h"

int free_range_add(slab_pool *p, uintptr_t addr, size_t nslabs) {
  int rc = rangeset_add(&p->free, slab_key(p, addr), nslabs);
  if (rc == 0) p->free_slabs += nslabs;
  return rc;
}

int free_range_pick(const slab_pool *p, size_t nslabs, uintptr_t *addr) {
  uint64_t k;
  if (rangeset_pick_end(&p->free, nslabs, &k)) return ENOMEM;
  *addr = slab_addr(p, k);
  return 0;
}

void free_range_take(slab_pool *p, uintptr_t addr, size_t nslabs) {
  rangeset_take_end(&p->free, slab_key(p, addr), nslabs);
  p->free_slabs -= nslabs;
}

bool free_range_overlaps(const slab_pool *p, uintptr_t addr, size_t len) {
  return rangeset_overlaps(&p->free, slab_key(p, addr), len >> AH_SLAB_SHIFT);
}

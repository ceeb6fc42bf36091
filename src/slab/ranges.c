/* ranges.c: the Free trie of a pool: free slab ranges keyed by first slab, value = length in
 * slabs; adjacent ranges always merged. Carving takes slabs from the end of a range, so it
 * only shrinks a value in place (or deletes a key) and can never fail half-way. */
#include <errno.h>

#include "slab/pool_internal.h"

int free_range_add(slab_pool *p, uintptr_t addr, size_t nslabs) {
  uint64_t k = slab_key(p, addr);
  uint64_t pk = 0;
  uintptr_t plen = 0;
  bool merge_pred = k > 0 && trie_le(&p->free, k - 1, &pk, &plen) == 0 && pk + plen == k;
  uintptr_t slen = trie_find(&p->free, k + nslabs);
  if (merge_pred) {
    *trie_find_slot(&p->free, pk) = plen + nslabs + slen;
  } else {
    int rc = trie_insert(&p->free, k, nslabs + slen);
    if (rc) return rc;
  }
  if (slen) trie_delete(&p->free, k + nslabs, NULL);
  p->free_slabs += nslabs;
  return 0;
}

int free_range_pick(const slab_pool *p, size_t nslabs, uintptr_t *addr) {
  trie_cursor c;
  uint64_t k;
  uintptr_t len;
  trie_cursor_seek(&c, &p->free, 0);
  while (trie_cursor_next(&c, &k, &len)) { /* lowest range that fits: keeps pools compact */
    if (len >= nslabs) {
      *addr = slab_addr(p, k + len - nslabs);
      return 0;
    }
  }
  return ENOMEM;
}

void free_range_take(slab_pool *p, uintptr_t addr, size_t nslabs) {
  uint64_t k = slab_key(p, addr), start;
  uintptr_t len;
  int rc = trie_le(&p->free, k, &start, &len);
  AH_ASSERT(rc == 0 && start + len == k + nslabs);
  (void)rc;
  if (start == k)
    trie_delete(&p->free, k, NULL);
  else
    *trie_find_slot(&p->free, start) = len - nslabs;
  p->free_slabs -= nslabs;
}

bool free_range_overlaps(const slab_pool *p, uintptr_t addr, size_t len) {
  uint64_t k;
  uintptr_t flen;
  uint64_t last = slab_key(p, addr + len - 1);
  return trie_le(&p->free, last, &k, &flen) == 0 && k + flen > slab_key(p, addr);
}

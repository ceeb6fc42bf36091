/* objects.c: objects in regions: alloc, bulk alloc, free, realloc (resize and move), query.
 * A pointer finds its region through Used Ranges (one trie lookup), an ID through Used
 * Region IDs (one lookup); the region's pool does the rest. */
#include <errno.h>

#include "region/region_internal.h"

int region_alloc(region_layer *L, size_t size, rid_t rid, uintptr_t *addr) {
  region *r = region_find(L, rid);
  if (!r) return ENOENT;
  return slab_alloc(r->pool, size, addr);
}

int region_balloc(region_layer *L, size_t size, rid_t rid, size_t n, uintptr_t *addrs) {
  region *r = region_find(L, rid);
  if (!r) return ENOENT;
  for (size_t i = 0; i < n; i++) {
    int rc = slab_alloc(r->pool, size, &addrs[i]);
    if (rc) { /* all or nothing */
      while (i--) slab_free(r->pool, addrs[i]);
      return rc;
    }
  }
  return 0;
}

int region_free_object(region_layer *L, uintptr_t addr) {
  const range_rec *rec = space_owner(L, addr);
  return rec ? slab_free(rec->owner->pool, addr) : EINVAL;
}

int region_query(const region_layer *L, uintptr_t addr, rid_t *rid, uintptr_t *start,
                 size_t *size) {
  const range_rec *rec = space_owner(L, addr);
  if (!rec) return EINVAL;
  int rc = slab_lookup(rec->owner->pool, addr, start, size);
  if (rc == 0 && rid) *rid = rec->owner->id;
  return rc;
}

/* The slot an allocation of size bytes occupies. */
static size_t slot_for(size_t size) {
  return size <= AH_SLAB_SIZE ? ah_round_up(size, AH_SLOT_ALIGN) : ah_round_up(size, AH_SLAB_SIZE);
}

int region_realloc(region_layer *L, uintptr_t old, size_t new_size, rid_t new_region,
                   uintptr_t *addr, size_t *old_size) {
  const range_rec *rec = space_owner(L, old);
  size_t osz;
  if (!rec || slab_size_of(rec->owner->pool, old, &osz)) return EINVAL;
  if (new_size == 0) return EINVAL;
  region *from = rec->owner, *to = new_region == REGION_NONE ? from : region_find(L, new_region);
  if (!to) return ENOENT;
  *old_size = osz;
  if (to == from && slot_for(new_size) == osz) {
    *addr = old;
    return 0;
  }
  uintptr_t fresh;
  int rc = slab_alloc(to->pool, new_size, &fresh);
  if (rc) return rc;
  rc = slab_free(from->pool, old); /* ENOMEM only: old is a live object of a full class run */
  if (rc) {
    int back = slab_free(to->pool, fresh); /* a slot or run just taken: nothing to cut */
    AH_ASSERT(back == 0);
    (void)back;
    return rc;
  }
  *addr = fresh;
  return 0;
}

/* entry.cu: dm_malloc, the allocation entry point. A lane alone in its warp takes a block
 * from its class buffer right here; everything else (coalescing, page sharing, the page
 * layer, exhaustion) goes to the warp paths of group.cu. dm_free is in free.cu. This unit
 * holds no warp-collective code. */
#include "antheap_device.h"
#include "group.cuh"
#include "lane.cuh"

__device__ void *dm_malloc(size_t size)
{
  const unsigned mask = __activemask();
  if (dm_heap_g.npages == 0) return NULL;   /* no current heap (none made, or destroyed) */
  if (size == 0) size = 1;
  if (mask == (1u << dm_lane()) && size <= DM_CLASS_MAX) {
    const dm_heap_dev *h = &dm_heap_g;
    unsigned c = dm_class_of(size);
    char *p = dm_class_take(h, c, dm_buffer_hash(c), DM_TAKE_TRIES);
    if (p) {
#if DM_CHECKS
      if (dm_live_flip(h, p, true)) atomicAdd(&h->ctr->bad_frees, 1ull);
#endif
      return p;
    }
  }                                       /* (dm_malloc_group does not take from it again) */
  return dm_malloc_group(size, mask);
}

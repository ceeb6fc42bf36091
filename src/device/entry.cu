/* entry.cu: dm_malloc and dm_free, the device entry points. A lane alone in its warp
 * takes a block from its class buffer, or gives one back, right here; everything else
 * (coalescing, page sharing, the page layer, exhaustion) goes to the warp paths of
 * group.cu. This unit holds no warp-collective code. */
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

__device__ void dm_free(void *ptr)
{
  const unsigned mask = __activemask();
  if (dm_heap_g.npages == 0) return;        /* no current heap: nothing can be ours */
  if (mask == (1u << dm_lane())) {        /* alone: no group to settle an area with */
    const dm_heap_dev *h = &dm_heap_g;
    char *p = (char *)ptr, *blk = NULL;
    unsigned long long page = 0;
    unsigned info = 0;
    bool ok = true, comp = p ? dm_locate(h, p, &blk, &page, &info, &ok) : false;
    dm_free_settle(h, p, blk, page, info, ok, comp, mask);
    return;
  }
  dm_free_group(ptr, mask);
}

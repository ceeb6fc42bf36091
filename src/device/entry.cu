/* entry.cu: dm_malloc, the allocation entry point. A lane alone in its warp asking a class
 * size takes the next block of its slot's page right here (one atomic add; classes.cuh,
 * "lone-lane pages"; its refill is group.cu's dm_malloc_lone), and a whole warp asking
 * 16 B or less takes a page of its slot's bitmap word (dm_malloc_warp16: a shuffle, a vote
 * and a warp barrier, its only warp-collective code); everything else (coalescing, page
 * sharing, the page layer, exhaustion) goes to the warp paths of group.cu. dm_free is in
 * free.cu.
 *
 * Why the lone lane has its own pages: through the class buffers a lone lane would pop a
 * block from one of its class's 1,024 buffers (head and tail loads, the slot's load, a CAS,
 * then the page's count: four round trips in a row); an empty buffer would send it to
 * dm_malloc_group (a call with a 27-register prologue, the page search), which pushes the
 * new page's other 31 blocks into the buffer one by one (three to five round trips each,
 * CAS retries against the other lanes hashed to that buffer), and what does not fit goes
 * back to the page's count, which marks the page retiring, so its buffered blocks are sent
 * home when popped rather than used; each free would push its block back (three to five
 * more round trips). Here: one atomic, uncontended (the slot is the warp's hardware slot),
 * and one in its free (free.cu, dm_free_lone); a page search every nb allocations of a
 * slot (docs/HISTORY.md: the measurement that led here). */
#include "antheap_device.h"
#include "group.cuh"
#include "lane.cuh"

/* A whole warp asking 16 B or less; every lane of the full warp calls this. One class-0
 * page from the warp slot's bitmap word (page.cuh, dm_slot_claim: one atomic, no load)
 * holds the warp's 32 blocks, lane i taking block i: what dm_malloc_group does for such a
 * warp (no buffers, nothing to spill), without calling it, and without the claim's fence
 * in release builds (types.cuh, DM_PK_UNFENCED). NULL in every lane when the slot's word
 * had no free page: the caller then calls dm_malloc_group, whose walk searches the heap
 * (trying the full word once more on its way: one atomic, only then). The bit is picked
 * by the clock, which differs between the warps that follow each other in a slot.
 * Why here: dm_malloc_group saves 27 registers to the stack on entry and restores them on
 * return (its register cap is 64, and it uses them for the general paths), runs hundreds
 * of instructions a warp for this request and waits on its random walk's 32 loads
 * (docs/HISTORY.md: the profile and the measurements). */
static __device__ __forceinline__ char *dm_malloc_warp16(const dm_heap_dev *h)
{
  const unsigned me = dm_lane();
  long page = -1;
  if (me == 0u) {
    page = dm_slot_claim<DM_CLAIM_UNFENCED>(h, (unsigned)clock());
    if (page >= 0) dm_class_warp_page_init(h, page);
  }
  page = __shfl_sync(~0u, page, 0);
  if (page < 0) return NULL;
  char *p = h->base + (unsigned long long)page * DM_PAGE_BYTES + me * 16u;
#if DM_CHECKS
  if (dm_live_flip(h, p, true)) atomicAdd(&h->ctr->bad_frees, 1ull);
#endif
  __syncwarp();   /* leave together, as dm_malloc_group does; orders lane 0's stores */
  return p;
}

/* Never inlined into its caller, LTO or not: with whole-program LTO (DM_LTO) an inlined
 * dm_malloc/dm_free gave one page to two owners in the exhausted-heap churn test (debug: pages
 * claimed while their pinfo said they were in use); as calls, the same build is clean. Their
 * warp logic starts from __activemask() at the call. */
__device__ __noinline__ void *dm_malloc(size_t size)
{
  const unsigned mask = __activemask();
  if (dm_heap_g.npages == 0) return NULL;   /* no current heap (none made, or destroyed) */
  if (size == 0) size = 1;
  if (mask == (1u << dm_lane()) && size <= DM_CLASS_MAX) {
    /* a lane alone: the next block of its slot's class page, one atomic (classes.cuh,
     * lone-lane pages); a page used up, or none, or the 512-B class: dm_malloc_lone */
    const dm_heap_dev *h = &dm_heap_g;
    const unsigned c = dm_class_of(size);
    if (c + 1u < DM_NCLASS) {
      const unsigned long long v = atomicAdd(dm_lone_slot(h, c), 1ull);
      if ((unsigned)v < dm_class_blocks(c)) {
        char *p = dm_class_block(h, c, v >> 32, (unsigned)v);
#if DM_CHECKS
        if (dm_live_flip(h, p, true)) atomicAdd(&h->ctr->bad_frees, 1ull);
#endif
        return p;
      }
    }
    return dm_malloc_lone(size, c);
  }
  if (mask == ~0u && __all_sync(~0u, size <= 16u)) {
    char *p = dm_malloc_warp16(&dm_heap_g);
    if (p) return p;                      /* (NULL in every lane or in none) */
  }
  return dm_malloc_group(size, mask);
}

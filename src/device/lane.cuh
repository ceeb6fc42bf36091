/* lane.cuh: the per-lane steps that the allocator's compilation units share: the
 * debug live bits of class blocks, finding the block a freed pointer belongs to, and
 * counting NULLs. No warp-collective code lives here except
 * the one ballot of dm_count_nulls. */
#ifndef DM_LANE_CUH
#define DM_LANE_CUH

#include "classes.cuh"
#include "coalesce.cuh"
#include "page.cuh"
#include "types.cuh"
#include "warp.cuh"

#if DM_CHECKS
/* Debug: flip the live bit of class block `blk`; returns whether it was already set. */
static __device__ bool dm_live_flip(const dm_heap_dev *h, const char *blk, bool set)
{
  unsigned long long off = (unsigned long long)(blk - h->base);
  unsigned long long page = off >> DM_PAGE_SHIFT;
  unsigned c = DM_PI_VAL(dm_ld(&h->pinfo[page]));
  unsigned i = (unsigned)((off & (DM_PAGE_BYTES - 1u)) >> (DM_MIN_SHIFT + c));
  unsigned *w = &h->live[page * DM_BLOCK_WORDS + i / 32u], bit = 1u << (i % 32u);
  unsigned old = set ? atomicOr(w, bit) : atomicAnd(w, ~bit);
  return (old & bit) != 0;
}
#endif

/* Count the NULLs a call handed out (one atomic per warp). */
static __device__ __forceinline__ void dm_count_nulls(const dm_heap_dev *h, unsigned mask,
                                                      bool null)
{
  unsigned nulls = __ballot_sync(mask, null);
  if (nulls && dm_lane() == (unsigned)__ffs(mask) - 1u)
    atomicAdd(&h->ctr->nulls, (unsigned long long)__popc(nulls));
}

/* Page `page`'s record (types.cuh): its pkind byte, or where that says the value is too
 * large for it, its pinfo (release builds); debug builds read pinfo, as their checks do. */
static __device__ __forceinline__ unsigned dm_page_record(const dm_heap_dev *h,
                                                          unsigned long long page)
{
  if (DM_PI_KEPT(0u)) return dm_ld(&h->pinfo[page]);
  unsigned b = dm_ld8(&h->pkind[page]);
#if DM_CLAIM_UNFENCED
  /* a class page whose record was not fenced (types.cuh): what this lane does next may
   * hand the block to a buffer or to the page's count, read on other multiprocessors */
  if ((b & (0xc0u | DM_PK_UNFENCED)) == (DM_PK_CLASS_BYTE | DM_PK_UNFENCED)) {
    dm_fence_release();
    b &= ~DM_PK_UNFENCED;
  }
#endif
  unsigned info = DM_PK_INFO(b);
  return DM_PI_VAL(info) < DM_PK_VMAX ? info : dm_ld(&h->pinfo[page]);
}

/* Which block `p` belongs to: sets *blk, *page and *info and says whether p is a
 * compartment; false in *ok for a pointer that no dm_malloc returned. */
static __device__ bool dm_locate(const dm_heap_dev *h, char *p, char **blk,
                                 unsigned long long *page, unsigned *info, bool *ok)
{
  unsigned long long off = (unsigned long long)(p - h->base);
  *ok = false;
  if (p < h->base || off >= h->bytes || (off & (DM_ALIGN - 1u))) return false;
  *page = off >> DM_PAGE_SHIFT;
  *info = dm_page_record(h, *page);
  if (DM_PI_KIND(*info) == DM_PI_BODY) {
    *page -= DM_PI_VAL(*info);
    *info = dm_page_record(h, *page);
    if (DM_PI_KIND(*info) != DM_PI_HEAD) return false;
  }
  if (DM_PI_KIND(*info) == DM_PI_FREE) return false;
  char *pg = h->base + *page * DM_PAGE_BYTES;
  if (DM_PI_KIND(*info) == DM_PI_CLASS) {
    unsigned bs = 16u << DM_PI_VAL(*info);
    *blk = pg + ((unsigned)(p - pg) / bs) * bs;
  } else {
    *blk = pg;
  }
  *ok = true;
  if (p == *blk) return false;
  bool comp = dm_ld(&((const dm_area *)*blk)->magic) == DM_AREA_MAGIC;
#if DM_CHECKS
  if (comp && !dm_area_check_free((dm_area *)*blk, p)) comp = false;
#endif
  *ok = comp;
  return comp;
}

#endif /* DM_LANE_CUH */

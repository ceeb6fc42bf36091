/* malloc.cu: dm_malloc and dm_free, the device entry points, and dm_heap_g, the current
 * heap. They tie the layers together: warp coalescing (coalesce.cuh) on top, then size
 * classes with buffers (classes.cuh) or page runs (page.cuh). */
#include <limits.h>

#include "antheap_device.h"
#include "classes.cuh"
#include "coalesce.cuh"
#include "page.cuh"
#include "types.cuh"
#include "warp.cuh"

__device__ dm_heap_dev dm_heap_g;

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

/* Every lane of `mask` calls this together: each lane asking `size` > 0 bytes gets a
 * class block or a page run (NULL when the heap is exhausted); lanes asking 0 only help
 * the page search. */
static __device__ char *dm_alloc_group(const dm_heap_dev *h, unsigned mask, size_t size,
                                       unsigned *rng)
{
  char *p = NULL;
  unsigned c = 0, q = 0, npages = 0, pay;
  bool cls = size > 0 && size <= DM_CLASS_MAX;
  const unsigned epoch = dm_reclaim_epoch(h);
  if (cls) {
    c = dm_class_of(size);
    q = dm_buffer_hash(c);
    if (dm_fifo_pop(dm_buffer(h, c, q), &pay)) p = dm_block(h, pay);
    else npages = 1;
  } else if (size > 0) {
    unsigned long long np = (size + DM_PAGE_BYTES - 1u) >> DM_PAGE_SHIFT;
    npages = np <= h->npages ? (unsigned)np : 0u;
  }
  if (__ballot_sync(mask, npages != 0) != 0) {
    long page = dm_pages_get(h, mask, npages, rng);
    if (npages && page < 0 && cls) {    /* no page: any buffered block of c will do */
      for (unsigned i = 1; i < DM_NFIFO && !p; ++i)
        if (dm_fifo_pop(dm_buffer(h, c, (q + i) % DM_NFIFO), &pay)) p = dm_block(h, pay);
    }
    /* still none: empty the other buffers and search again. The second search is made by
     * the whole group, like the first: a *_sync call with a smaller mask inside divergent
     * code can pair with the group's pending ones on sm_70+ and exchange garbage. */
    bool again = npages && page < 0 && !p && dm_class_reclaim(h, cls ? c : DM_NCLASS, epoch);
    if (__ballot_sync(mask, again) != 0) {
      long p2 = dm_pages_get(h, mask, again ? npages : 0u, rng);
      if (again) page = p2;
    }
    if (cls && npages) {
      if (page >= 0) p = dm_class_carve(h, c, page, q);
    } else if (npages && page >= 0) {
      dm_run_mark(h, page, npages);
      __threadfence();
      if (npages > 1u) atomicAdd(&h->ctr->runs, 1ull);
      p = h->base + (unsigned long long)page * DM_PAGE_BYTES;
    }
  }
#if DM_CHECKS
  if (cls && p && dm_live_flip(h, p, true)) atomicAdd(&h->ctr->bad_frees, 1ull);
#endif
  return p;
}

__device__ void *dm_malloc(size_t size)
{
  const dm_heap_dev *h = &dm_heap_g;
  const unsigned mask = __activemask(), me = dm_lane();
  unsigned rng = dm_seed();
  if (size == 0) size = 1;
  unsigned co = __ballot_sync(mask, size <= DM_COALESCE_MAX);
  if (__popc(co) < 2) co = 0;
  char *p;
  if ((co >> me) & 1u) {
    /* Cut the lanes, in lane order, into areas of at most DM_AREA_CAP compartment bytes.
     * Every *_sync below names all of `co` and is reached by all of it: per-area masks in
     * divergent code can pair with other pending *_sync calls on sm_70+ (seen on the H100
     * as garbage shuffles under exhaustion). */
    unsigned cs = dm_compartment_bytes(size), gid = 0, fill = 0, mygid = 0, off = 0;
    for (unsigned m = co; m; m &= m - 1u) {
      unsigned src = (unsigned)__ffs(m) - 1u, x = __shfl_sync(co, cs, (int)src);
      if (fill > 0 && fill + x > DM_AREA_CAP) { ++gid; fill = 0; }
      if (src == me) { mygid = gid; off = fill; }
      fill += x;
    }
    unsigned grp = __match_any_sync(co, mygid), total = 0;
    for (unsigned m = co; m; m &= m - 1u) {
      unsigned src = (unsigned)__ffs(m) - 1u, x = __shfl_sync(co, cs, (int)src);
      if ((grp >> src) & 1u) total += x;
    }
    unsigned leader = (unsigned)__ffs(grp) - 1u;
    bool solo = __popc(grp) == 1;         /* a lane alone gets a plain block */
    size_t ask = solo ? size : (me == leader ? DM_AREA_HDR + total : 0u);
    char *area = dm_alloc_group(h, co, ask, &rng);   /* all areas in one page search */
    if (!solo && me == leader && area) dm_area_init((dm_area *)area, __popc(grp));
    area = (char *)__shfl_sync(co, (unsigned long long)area, (int)leader);
    p = solo ? area : dm_area_enter(co, grp, area, off);
  } else {
    p = dm_alloc_group(h, mask & ~co, size, &rng);
  }
  if (p == NULL) atomicAdd(&h->ctr->nulls, 1ull);
  return p;
}

/* Free a whole block or run (not a compartment). */
static __device__ void dm_free_block(const dm_heap_dev *h, char *blk,
                                     unsigned long long page, unsigned info)
{
  if (DM_PI_KIND(info) == DM_PI_CLASS) {
#if DM_CHECKS
    if (!dm_live_flip(h, blk, false)) {     /* double free */
      atomicAdd(&h->ctr->bad_frees, 1ull);
      return;
    }
#endif
    dm_class_put(h, DM_PI_VAL(info), page, blk);
  } else {
    dm_pages_put(h, (long)page, DM_PI_VAL(info));
  }
}

__device__ void dm_free(void *ptr)
{
  const dm_heap_dev *h = &dm_heap_g;
  const unsigned mask = __activemask();
  char *p = (char *)ptr, *blk = NULL;
  unsigned long long page = 0;
  unsigned info = 0;
  bool bad = false, comp = false;
  if (p) {
    unsigned long long off = (unsigned long long)(p - h->base);
    if (p < h->base || off >= h->bytes || (off & (DM_ALIGN - 1u))) {
      bad = true;
    } else {
      page = off >> DM_PAGE_SHIFT;
      info = dm_ld(&h->pinfo[page]);
      if (DM_PI_KIND(info) == DM_PI_BODY) {
        page -= DM_PI_VAL(info);
        info = dm_ld(&h->pinfo[page]);
        bad = DM_PI_KIND(info) != DM_PI_HEAD;
      }
      if (DM_PI_KIND(info) == DM_PI_FREE) bad = true;
      if (!bad) {
        char *pg = h->base + page * DM_PAGE_BYTES;
        if (DM_PI_KIND(info) == DM_PI_CLASS) {
          unsigned bs = 16u << DM_PI_VAL(info);
          blk = pg + ((unsigned)(p - pg) / bs) * bs;
        } else {
          blk = pg;
        }
        if (p != blk) {
          comp = ((const volatile dm_area *)blk)->magic == DM_AREA_MAGIC;
          bad = !comp;
#if DM_CHECKS
          if (comp && !dm_area_check_free((dm_area *)blk, p)) comp = false, bad = true;
#endif
        }
      }
    }
  }
  /* lanes freeing compartments of one area settle its count with one atomic */
  unsigned grp = __match_any_sync(mask, comp ? (unsigned long long)blk : 0ull);
  if (bad) {
    atomicAdd(&h->ctr->bad_frees, 1ull);
    return;
  }
  if (p == NULL) return;
  if (comp && !dm_area_close_group((dm_area *)blk, grp)) return;
  if (comp) ((dm_area *)blk)->magic = 0;
  dm_free_block(h, blk, page, info);
}

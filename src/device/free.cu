/* free.cu: dm_free, the free entry point, and every path of it: the short path of a whole
 * warp freeing whole blocks and runs (dm_free_warp, release builds), a lone lane's free
 * (dm_free_lone), and the general warp path (dm_free_group: compartments, class blocks to
 * buffers, foreign pointers, the debug checks). Its own compilation unit so that it gets
 * its own register cap (DM_FREE_MAXRREG, CMakeLists.txt): a kernel gets the registers of
 * the largest function it may call, and one that only frees reaches nothing of the
 * allocation paths, so it can run 6 blocks of 256 per SM where they need 4.
 *
 * The short path owns the common case only: the 32 lanes of a converged warp each free
 * NULL, a whole run that lies inside one bitmap word (runs of 2..32 pages), or a class
 * block whose page's every block is freed by a row of consecutive lanes of this warp (the
 * two 256-B blocks of a page freed by lanes 2i and 2i+1, a warp's 16-B page by all 32, a
 * 512-B block by its lane). Anything else (compartments, pointers dm_malloc never returned,
 * class blocks whose page stays partly out or whose blocks are not on consecutive lanes,
 * runs longer than a word) sends the whole warp to the general path, which the short one
 * only shortens: for these lanes it does what the general path does (a page whose every
 * block the warp frees goes home without its count atomic; one release per bitmap word),
 * with no second call, no MATCH and no branch per case. Debug builds never take it: their
 * checks (live bits, the count check of dm_class_unref, FREE pinfo, the bitmap's old bits)
 * live in the general path, which they always run.
 *
 * Why: the general path spends its instructions on cases and calls a common free does not
 * need, besides its long waits (the pinfo load, the fence and the page-key MATCH); the short
 * path runs about 40% fewer, and its bitmap atomic is a RED (warp.cuh, dm_red_and). What is
 * left is the pointer load in the caller, the page record's load (a DRAM miss; it reads the
 * one-byte pkind: a 4-KiB run's head pinfo is 32 B from the next one, so a warp freeing 32
 * of them would load 32 sectors, where their pkind bytes are 8) and the release fence, one
 * per warp (docs/HISTORY.md: the profile and the measurements). */
#include "antheap_device.h"
#include "group.cuh"
#include "lane.cuh"

#if !DM_CHECKS
/* Every lane of a full, converged warp calls this with the pointer it frees. True when the
 * warp's frees are done; false, having changed nothing (loads and warp votes only), when
 * some lane needs the general path: the caller then calls dm_free_group. */
static __device__ __forceinline__ bool dm_free_warp(const dm_heap_dev *h, const void *ptr)
{
  const unsigned me = dm_lane();
  const unsigned long long off = (unsigned long long)((uintptr_t)ptr - (uintptr_t)h->base);
  const unsigned page = (unsigned)(off >> DM_PAGE_SHIFT);
  const unsigned at = (unsigned)off & (DM_PAGE_BYTES - 1u);   /* offset in its page */
  /* a pointer below the base wraps to a huge offset: outside, like one past the end */
  const bool in = ptr != NULL && off < h->bytes && (off & (DM_ALIGN - 1u)) == 0u;
  /* the page's kind and small value from its pkind byte (types.cuh): a warp freeing 32
   * 4-KiB runs reads 8 sectors, where their pinfo entries were 32. Ordered as the pinfo
   * read was: the claimer wrote the byte before the fence that preceded handing this
   * pointer out. A body page's byte (kind BODY) and a run of 63 pages or more (value
   * DM_PK_VMAX) fail both tests below: the general path. */
  const unsigned byte = in ? dm_ld8(&h->pkind[page]) : 0u;   /* one load (a macro argument) */
  const unsigned info = in ? DM_PK_INFO(byte) : DM_PI_FREE;
  const unsigned kind = DM_PI_KIND(info), val = DM_PI_VAL(info);
  const unsigned cval = val & ~DM_PK_UNFENCED;   /* a class page's class (types.cuh) */
  /* a run's head page at offset 0: the whole run, when it lies inside one bitmap word */
  const bool run = kind == DM_PI_HEAD && at == 0u && (page % 32u) + val <= 32u;
  /* a class block's start (not a compartment, which lies past an area's header) */
  const bool cls = kind == DM_PI_CLASS && cval < DM_NCLASS &&
                   (at & ((DM_ALIGN << cval) - 1u)) == 0u;
  /* Rows of consecutive lanes with the same page (class lanes) and with the same bitmap
   * word, from one shuffle. A page number fits in 30 bits (heap.cu), so ~0u, the key of
   * lanes that free nothing, matches no page and its word no page's word. */
  const unsigned key = run || cls ? page : ~0u;
  const unsigned up = __shfl_up_sync(~0u, key, 1);
  const unsigned rows = __ballot_sync(~0u, me == 0u || up != key);
  const unsigned upto = dm_lanes_below() | (1u << me);
  const unsigned first = 31u - (unsigned)__clz(rows & upto);       /* my row's first lane */
  const unsigned later = rows & ~upto;
  const unsigned lanes = (later ? (unsigned)__ffs(later) - 1u : 32u) - first;
  /* the row holds every block of its class page: the page goes home, and nobody else can
   * touch its count (the lanes hold all its blocks), so release builds skip the count
   * atomic, as dm_free_group does */
  const bool whole = cls && lanes == dm_class_blocks(cval);
  if (__ballot_sync(~0u, ptr != NULL && !run && !whole) != 0u) return false;
  const unsigned n = run ? val : whole && me == first ? 1u : 0u;   /* pages I give back */
  if (__ballot_sync(~0u, n != 0u) == 0u) return true;              /* NULLs only */
  bool last;
  const unsigned bits = dm_row_or(~0u, me == 0u || (up >> 5) != (key >> 5),
                                  n ? dm_bits(page % 32u, n) : 0u, &last);
  /* The users' last writes to these pages, by any lane, before the bits that let a claimer
   * reuse them: the warp barrier orders every lane's earlier accesses before the release
   * of the lane that clears the word (as dm_pages_put_group), a red.release: fence + RED */
  __syncwarp();
  if (last && key != ~0u && bits != 0u) dm_red_and_release(&h->bitmap[key >> 5], ~bits);
  __syncwarp();   /* leave together, as dm_free_group does */
  return true;
}
#endif

/* dm_free_group's body, for the lanes of `mask_in` (FULL: the whole warp, whose mask the
 * compiler then knows: each *_sync with a constant full mask skips the checks of a
 * run-time mask, a match and a reduction each, which were a third of a 4-KiB free's warp
 * collectives). */
template <bool FULL>
static __device__ __forceinline__ void dm_free_lanes(void *ptr, unsigned mask_in)
{
  const unsigned mask = FULL ? ~0u : mask_in;
  const dm_heap_dev *h = &dm_heap_g;
  char *p = (char *)ptr, *blk = NULL;
  unsigned long long page = 0;
  unsigned info = 0;
  const unsigned me = dm_lane();
  bool ok = true, comp = p ? dm_locate(h, p, &blk, &page, &info, &ok) : false;
  /* lanes freeing compartments of one area settle its count with one atomic (the match
   * only where some lane frees a compartment: the ballot is uniform over `mask`) */
  unsigned grp = 0;
  if (__ballot_sync(mask, comp) != 0u)
    grp = __match_any_sync(mask, comp ? (unsigned long long)blk : 0ull);
  /* what this lane gives back: a whole block or run (a compartment only when its area's
   * last compartments are freed here) */
  bool whole = ok && p && (!comp || dm_area_close_group((dm_area *)blk, grp));
  if (!ok) atomicAdd(&h->ctr->bad_frees, 1ull);
  if (whole && comp) ((dm_area *)blk)->magic = 0;
  bool cls = whole && DM_PI_KIND(info) == DM_PI_CLASS;
#if DM_CHECKS
  if (cls && !dm_live_flip(h, blk, false)) {     /* double free */
    atomicAdd(&h->ctr->bad_frees, 1ull);
    cls = whole = false;
  }
#endif
  /* Class blocks. Lanes freeing every block of one page at once (a warp's 16-B page,
   * the two blocks of a 256-B page, a 512-B block) take the page home without a buffer:
   * they hold all its blocks, so its count can only be theirs, and nobody else touches it
   * until the page is claimed again and the count rewritten; release builds skip the
   * atomic, debug builds check it. Other blocks go to buffers one by one, draining home
   * where the buffers are full, as before. The page number is a 32-bit key (npages is
   * 32-bit): one MATCH, where the 64-bit one was the slowest step of a 256-B free. */
  unsigned put = whole && !cls ? DM_PI_VAL(info) : 0u;    /* pages this lane gives back */
  bool drained = false;
  const unsigned clsm = __ballot_sync(mask, cls);
  if (clsm != 0u) {
    unsigned same = __match_any_sync(mask, cls ? (unsigned)page : ~0u);
    if (cls) {
      unsigned c = DM_PI_VAL(info);
      if ((unsigned)__popc(same) == dm_class_blocks(c)) {
        if (me == (unsigned)__ffs(same) - 1u &&
            (!DM_CHECKS || dm_class_unref(h, page, (unsigned)__popc(same))))
          put = 1u;
      } else if (!dm_class_buffer(h, c, blk)) {
        if (dm_class_unref(h, page, 1u)) put = 1u;
        drained = true;
      }
    }
  }
  /* runs and whole class pages go home together: one fence, one atomic per bitmap word
   * (the ballot in there waits for the buffer pushes above) */
  dm_pages_put_group(h, mask, (long)page, put, cls ? (long)page : -1l);
  /* The lanes that came in together leave together (the ballot waits for all of them).
   * Without this, lanes leaving one by one after their buffer pushes broke the caller's
   * next dm_malloc on the H100: a kernel that frees and then allocates hung or got
   * pointers with their upper half zeroed, while a __syncwarp() between the two calls,
   * or the free in its own kernel, cured it (tests/gpu: test_calls_from_divergent_code).
   * Drains of full buffers are counted here, one atomic per warp (whole pages taken home
   * above are not drains: dm_stats.drains counts blocks the buffers refused). */
  if (clsm != 0u) {
    unsigned d = __ballot_sync(mask, drained);
    if (d && me == (unsigned)__ffs(mask) - 1u)
      atomicAdd(&h->ctr->drains, (unsigned long long)__popc(d));
  }
  __syncwarp(mask);
}

static __device__ __noinline__ void dm_free_group(void *ptr, unsigned mask)
{
  if (mask == ~0u)
    dm_free_lanes<true>(ptr, mask);
  else
    dm_free_lanes<false>(ptr, mask);
}

/* A lane alone in its warp: no group to settle an area with. A class block goes straight
 * back to its page's count (one atomic; the last block out takes the page home), not to a
 * buffer: a push is three to five round trips and a CAS that other lanes hashed to the
 * buffer contend for, and a lone lane's allocation no longer pops buffers (entry.cu), so the
 * block would only wait there for a warp. A drain that leaves blocks out marks the page
 * retiring (classes.cuh), which only matters for its blocks that sit in buffers: those go
 * home when popped, as for any drained page. Its own function (not inlined into dm_free)
 * so that its registers do not count against the short path's (DM_FREE_MAXRREG). */
static __device__ __noinline__ void dm_free_lone(void *ptr, unsigned mask)
{
  const dm_heap_dev *h = &dm_heap_g;
  char *p = (char *)ptr, *blk = NULL;
  unsigned long long page = 0;
  unsigned info = 0;
  bool ok = true, comp = p ? dm_locate(h, p, &blk, &page, &info, &ok) : false;
  if (!ok) {
    atomicAdd(&h->ctr->bad_frees, 1ull);
  } else if (p && (!comp || dm_area_close_group((dm_area *)blk, mask))) {
    if (comp) ((dm_area *)blk)->magic = 0;
    if (DM_PI_KIND(info) == DM_PI_CLASS) {
#if DM_CHECKS
      if (!dm_live_flip(h, blk, false)) {     /* double free */
        atomicAdd(&h->ctr->bad_frees, 1ull);
        return;
      }
#endif
      dm_class_drain(h, page);
    } else {
      dm_pages_put(h, (long)page, DM_PI_VAL(info));
    }
  }
}

/* Never inlined into its caller (entry.cu, dm_malloc, says why). */
__device__ __noinline__ void dm_free(void *ptr)
{
  const unsigned mask = __activemask();
  if (dm_heap_g.npages == 0) return;        /* no current heap: nothing can be ours */
#if !DM_CHECKS
  if (mask == ~0u && dm_free_warp(&dm_heap_g, ptr)) return;   /* the whole warp, done */
#endif
  if (mask == (1u << dm_lane()))
    dm_free_lone(ptr, mask);
  else
    dm_free_group(ptr, mask);
}

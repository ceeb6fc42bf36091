/* group.cu: the warp paths of dm_malloc (every warp-collective step of an allocation),
 * dm_heap_g (the current heap) and the trim kernel. They tie the layers together: warp
 * coalescing (coalesce.cuh) on top, then size classes with buffers (classes.cuh) or page
 * runs (page.cuh). entry.cu calls in here for every request that a lane alone cannot
 * serve from its buffer. The free paths live in free.cu.
 *
 * Built at full ptxas optimisation (DM_PTXAS_OPT, default 3). It was once built at -O0
 * for garbage shuffles under exhaustion at -O1 and above; those came from *_sync calls
 * with smaller masks inside divergent code (fixed in the source: see dm_alloc_group and
 * free.cu's dm_free_lanes), and the last -O3-only failure, the debug build's "block
 * drained to page P with count 2, pinfo 0", was a racy debug check (see dm_class_unref),
 * not ptxas; so was its return under a register cap (DM_MAXRREG), with count 0x1E0002. */
#include "antheap_device.h"
#include "group.cuh"
#include "lane.cuh"

DM_HEAP_SPACE dm_heap_dev dm_heap_g;

/* Address of page `page`. */
static __device__ __forceinline__ char *dm_page_addr(const dm_heap_dev *h, long page)
{
  return h->base + (unsigned long long)page * DM_PAGE_BYTES;
}

/* One round at the page layer; every lane of `mask` calls it. A lane with c < DM_NCLASS
 * wants a class-c block: the lanes wanting class c share fresh pages, the r-th of them
 * taking block r % nb of the page found by the (r - r % nb)-th, which buffers the blocks
 * nobody took. A lane with run > 0 wants a run of that many pages. Lanes wanting nothing
 * help the search. NULL where the bounded search failed. */
static __device__ char *dm_page_round(const dm_heap_dev *h, unsigned mask, unsigned c,
                                      unsigned run, unsigned q, unsigned *rng)
{
  const unsigned me = dm_lane();
  const bool cl = c < DM_NCLASS;
  dm_converge(mask);
  unsigned peers = __match_any_sync(mask, c);
  unsigned rank = (unsigned)__popc(peers & dm_lanes_below());
  unsigned nb = cl ? dm_class_blocks(c) : 1u, lead = rank - rank % nb;
  unsigned owner = cl ? dm_fks(peers, lead) : me;
  unsigned n = cl ? (owner == me ? 1u : 0u) : run;
  long page = -1;
  if (__ballot_sync(mask, n != 0u) != 0u) page = dm_pages_get(h, mask, n, rng);
  if (cl && owner == me && page >= 0) dm_class_page_init(h, c, page);
  dm_converge(mask);
  long shared = __shfl_sync(mask, page, (int)owner);
  char *p = NULL;
  if (cl && shared >= 0) p = dm_page_addr(h, shared) + (rank - lead) * dm_class_bytes(c);
  if (cl && owner == me && page >= 0)
    dm_class_spill(h, c, page, min(nb, (unsigned)__popc(peers) - lead), q);
  if (!cl && run && page >= 0) {
    dm_run_mark(h, page, run);
    dm_fence_acq_rel();   /* acquire for the claim, release for the record (warp.cuh) */
    p = dm_page_addr(h, page);
  }
  /* one counter update per warp (it was one same-address atomic per 1-KiB allocation) */
  unsigned runs = __ballot_sync(mask, !cl && run > 1u && page >= 0);
  if (runs && me == (unsigned)__ffs(mask) - 1u)
    atomicAdd(&h->ctr->runs, (unsigned long long)__popc(runs));
  return p;
}

/* Every lane of `mask` calls this together: each lane asking `size` > 0 bytes gets a
 * class block or a page run (NULL when the heap is exhausted); lanes asking 0 only help
 * the page search. Every *_sync names all of `mask` and is reached by all of it: a
 * *_sync with a smaller mask inside divergent code can pair with the group's pending ones
 * on sm_70+ (seen on the H100 as garbage shuffles under exhaustion). */
static __device__ char *dm_alloc_group(const dm_heap_dev *h, unsigned mask, size_t size,
                                       unsigned *rng, bool pop)
{
  const bool cls = size > 0 && size <= DM_CLASS_MAX;
  const unsigned c = cls ? dm_class_of(size) : DM_NCLASS, q = cls ? dm_buffer_hash(c) : 0u;
  unsigned run = 0;
  char *p = NULL;
  if (cls && pop) {
    p = dm_class_take(h, c, q, DM_TAKE_TRIES);
  } else if (size > 0 && !cls) {                 /* larger than the heap: NULL, no search */
    unsigned long long np = (size + DM_PAGE_BYTES - 1u) >> DM_PAGE_SHIFT;
    run = np <= h->npages ? (unsigned)np : 0u;
  }
  bool want = (cls && !p) || run;
  dm_converge(mask);
  if (__ballot_sync(mask, want) != 0u) {
    char *got = dm_page_round(h, mask, want && cls ? c : DM_NCLASS, want ? run : 0u, q, rng);
    if (want) p = got;
    bool miss = want && !p;
    dm_converge(mask);
    if (__ballot_sync(mask, miss) != 0u) {
      /* exhausted: any buffered block of c will do (blocks of retiring pages met on the
       * way go home, dm_class_take); else empty the other classes' buffers into their
       * pages and search once more, the whole group together */
      for (unsigned i = pop ? 1u : 0u; miss && cls && i < DM_NFIFO && !p; ++i)
        p = dm_class_take(h, c, (q + i) % DM_NFIFO, DM_FIFO_CAP);
      bool again = miss && !p;
      if (again) dm_class_reclaim(h, c, rng);
      got = dm_page_round(h, mask, again && cls ? c : DM_NCLASS, again ? run : 0u, q, rng);
      if (again) p = got;
    }
  }
#if DM_CHECKS
  if (cls && p && dm_live_flip(h, p, true)) atomicAdd(&h->ctr->bad_frees, 1ull);
#endif
  return p;
}

__device__ __noinline__ void *dm_malloc_group(size_t size, unsigned mask)
{
  const dm_heap_dev *h = &dm_heap_g;
  const unsigned me = dm_lane();
  unsigned rng = 0;                       /* seeded by the first page search */
  if (mask == (1u << me)) {               /* alone: nothing to coalesce or share; a class
                                             request found its buffer empty in entry.cu */
    char *p = dm_alloc_group(h, mask, size, &rng, size > DM_CLASS_MAX);
    dm_count_nulls(h, mask, p == NULL);
    return p;
  }
  if (mask == ~0u && __ballot_sync(mask, size <= 16u) == ~0u) {
    /* A whole warp asking 16 B or less: one fresh 16-B class page holds exactly its 32
     * blocks (no area header, no buffer pops, nothing to spill: one bitmap atomic), and
     * when the warp frees them together its free (free.cu) takes the page home with one
     * atomic. As an area this was a 512-B block for 31 lanes plus a 16-B page for the
     * 32nd, whose 31 spare blocks were pushed to buffers one by one. entry.cu serves such
     * a warp from its slot's word first (dm_malloc_warp16); this is its way when the word
     * is full: the walk, and NULL from an exhausted heap. */
    char *p = dm_alloc_group(h, mask, size, &rng, false);
    dm_count_nulls(h, mask, p == NULL);
    __syncwarp(mask);
    return p;
  }
  /* plan the warp's coalescing, then make all its requests in one group call */
  unsigned co = __ballot_sync(mask, size <= DM_COALESCE_MAX);
  unsigned cs = ((co >> me) & 1u) ? dm_compartment_bytes(size) : 0u;
  dm_place pl = {32u + me, 0u, cs};
  if (__popc(co) >= 2) pl = dm_plan(mask, co, cs);
  unsigned grp = __match_any_sync(mask, pl.gid);
  unsigned leader = (unsigned)__ffs(grp) - 1u;
  bool shared = __popc(grp) > 1;
  size_t ask = !shared ? size : (me == leader ? (size_t)DM_AREA_HDR + pl.total : 0u);
  char *area = dm_alloc_group(h, mask, ask, &rng, true);
  if (shared && me == leader && area) dm_area_init((dm_area *)area, (unsigned)__popc(grp));
  dm_converge(mask);
  area = (char *)__shfl_sync(mask, (unsigned long long)area, (int)leader);
  char *p = dm_area_enter(mask, shared, grp, area, pl.off);
  DM_INVARIANT(h, !p || (p >= h->base && p + size <= h->base + h->bytes),
               "dm_malloc(%llu) returned %p outside the heap\n", (unsigned long long)size, p);
  dm_count_nulls(h, mask, p == NULL);
  __syncwarp(mask);   /* leave together, as dm_free does */
  return p;
}

/* A lane alone in its warp asks a class-c block (`size` bytes) and its slot's page had none
 * left (entry.cu; or c is the 512-B class, one block a page, which never goes through a
 * slot). Another lane of the slot may have just put a fresh page there: one more bump when
 * the word says so. Otherwise a page of its own, through the page layer's search for one
 * lane (dm_pages_get: the slot's bitmap word first, one atomic, then the bounded walk): the
 * lane takes block 0, and the page goes into the slot word with one exchange, the page it
 * replaces settled (classes.cuh, dm_slot_retire). With no page to be had, a block of another
 * slot's page (dm_lone_sweep), then the general way of a lone lane: a buffered block,
 * the buffers and slots of other classes emptied, one more search (dm_alloc_group), and NULL
 * counted when that fails too. Its own function, so that the caller's fast path (entry.cu)
 * stays one atomic and a few instructions. */
__device__ __noinline__ void *dm_malloc_lone(size_t size, unsigned c)
{
  const dm_heap_dev *h = &dm_heap_g;
  const unsigned mask = 1u << dm_lane(), nb = dm_class_blocks(c);
  unsigned long long *sw = dm_lone_slot(h, c);
  char *p = NULL;
  if (nb > 1u && (unsigned)dm_ld64(sw) < nb) {
    const unsigned long long v = atomicAdd(sw, 1ull);
    if ((unsigned)v < nb) p = dm_class_block(h, c, v >> 32, (unsigned)v);
  }
  unsigned rng = 0;
  if (!p) {
    const long page = dm_pages_get(h, mask, 1u, &rng);
    if (page >= 0) {
      dm_class_page_init(h, c, page);   /* all nb blocks out, the record, the fence */
      if (nb > 1u)
        dm_slot_retire(h, c, atomicExch(sw, ((unsigned long long)page << 32) | 1ull));
      p = dm_page_addr(h, page);
    } else if (nb > 1u) {
      p = dm_lone_sweep(h, c);
    }
  }
  if (p) {
#if DM_CHECKS
    if (dm_live_flip(h, p, true)) atomicAdd(&h->ctr->bad_frees, 1ull);
#endif
    return p;
  }
  p = dm_alloc_group(h, mask, size, &rng, true);   /* the heap is exhausted */
  dm_count_nulls(h, mask, p == NULL);
  return p;
}

/* Host trim (heap.cu): one thread per buffer empties it into its pages, and one per slot
 * word gives its page's blocks not handed out back to the page (heap.cu sizes the grid). */
__global__ void dm_trim_kernel(void)
{
  unsigned f = blockIdx.x * blockDim.x + threadIdx.x;
  if (f < DM_NCLASS * DM_NFIFO) dm_class_trim(&dm_heap_g, f);
  if (f < dm_heap_g.nslot * DM_SLOT_STRIDE) dm_slot_empty(&dm_heap_g, f);
}

/* classes.cuh: size classes and their buffers (XMalloc 5.2). Requests up to DM_CLASS_MAX
 * are rounded up to a power-of-two class; free blocks of each class wait in DM_NFIFO
 * lock-free FIFOs (fifo.cuh), a warp picking one by hash. An empty buffer is refilled
 * from the page layer: the lanes of a warp that need blocks of one class share fresh pages
 * (a page per nb lanes), and only a page's spare blocks are buffered.
 * A full buffer drains to the page layer: the block goes back to its page, and the page
 * itself goes back when none of its blocks is out any more. When the page layer runs dry,
 * dm_class_reclaim empties a span of other classes' buffers, so that pages held only by
 * buffered blocks go home;
 * dm_class_trim does the same for one buffer, from the host's trim kernel.
 * Entry points: dm_class_of, dm_class_page_init, dm_class_spill, dm_class_put,
 * dm_class_reclaim, dm_class_trim. */
#ifndef DM_CLASSES_CUH
#define DM_CLASSES_CUH

#include "types.cuh"
#include "fifo.cuh"
#include "page.cuh"

/* Class of a request of `size` bytes (1 .. DM_CLASS_MAX). */
static __device__ __forceinline__ unsigned dm_class_of(size_t size)
{
  if (size <= 16u) return 0;
  return 32u - (unsigned)__clz((unsigned)size - 1u) - DM_MIN_SHIFT;
}

/* Block bytes and blocks per page of class c. */
static __device__ __forceinline__ unsigned dm_class_bytes(unsigned c) { return 16u << c; }
static __device__ __forceinline__ unsigned dm_class_blocks(unsigned c)
{
  return DM_PAGE_BYTES >> (DM_MIN_SHIFT + c);
}

/* Buffer q of class c. */
static __device__ __forceinline__ dm_fifo *dm_buffer(const dm_heap_dev *h, unsigned c,
                                                     unsigned q)
{
  return &h->fifo[c * DM_NFIFO + q];
}

/* Payload <-> block address. */
static __device__ __forceinline__ unsigned dm_payload(const dm_heap_dev *h, const void *p)
{
  return (unsigned)(((const char *)p - h->base) / DM_ALIGN);
}
static __device__ __forceinline__ char *dm_block(const dm_heap_dev *h, unsigned pay)
{
  return h->base + (unsigned long long)pay * DM_ALIGN;
}

/* One block of a class page goes back to its page; the last one takes the page home. */
static __device__ void dm_class_drain(const dm_heap_dev *h, unsigned long long page)
{
  int was = atomicSub(&h->blockcount[page], 1);
  DM_INVARIANT(h, was >= 1 && DM_PI_KIND(dm_ld(&h->pinfo[page])) == DM_PI_CLASS,
               "block drained to page %llu with count %d, pinfo %x\n", page, was,
               dm_ld(&h->pinfo[page]));
  if (was == 1) dm_pages_put(h, (long)page, 1);
}

/* A fresh page, owned by this lane alone, becomes a class-c page with all its blocks out
 * (the lanes sharing it take the first ones, dm_class_spill buffers the rest). The page's
 * pinfo is written before any of its blocks can reach a user. */
static __device__ void dm_class_page_init(const dm_heap_dev *h, unsigned c, long page)
{
  DM_INVARIANT(h, dm_ld(&h->pinfo[page]) == DM_PI_FREE,
               "class page %ld claimed while its pinfo says %x\n", page, dm_ld(&h->pinfo[page]));
  h->blockcount[page] = (int)dm_class_blocks(c);
  h->pinfo[page] = DM_PI_CLASS | c;
  __threadfence();
}

/* Blocks `used` .. nb-1 of a fresh class-c page go to buffer q (or the next two buffers);
 * those that fit nowhere go straight back to the page (the users' blocks keep it held). */
static __device__ void dm_class_spill(const dm_heap_dev *h, unsigned c, long page,
                                      unsigned used, unsigned q)
{
  unsigned nb = dm_class_blocks(c), bytes = dm_class_bytes(c);
  char *first = h->base + (unsigned long long)page * DM_PAGE_BYTES;
  unsigned i = used, k = 0;
  while (i < nb && k < 3u) {
    if (dm_fifo_push(dm_buffer(h, c, (q + k) % DM_NFIFO), dm_payload(h, first + i * bytes)))
      ++i;
    else
      ++k;
  }
  if (i < nb) atomicSub(&h->blockcount[page], (int)(nb - i));
}

/* A free block of class c (in class page `page`) goes to a buffer, or drains home. */
static __device__ void dm_class_put(const dm_heap_dev *h, unsigned c, unsigned long long page,
                                    void *blk)
{
  unsigned q = dm_buffer_hash(c), pay = dm_payload(h, blk);
  if (dm_fifo_push(dm_buffer(h, c, q), pay)) return;
  if (dm_fifo_push(dm_buffer(h, c, (q + 1u) % DM_NFIFO), pay)) return;
  atomicAdd(&h->ctr->drains, 1ull);
  dm_class_drain(h, page);
}

/* Heap exhausted: empty DM_RECLAIM_SPAN buffers of classes other than `skip`, from a
 * random one on, back into their pages (at most one buffer's worth of pops each, so frees
 * racing in cannot keep us here), so that pages held only by buffered blocks go home.
 * Every lane that finds the heap exhausted helps this way: no lock, no waiting, and
 * repeated misses sweep all the buffers. */
static __device__ void dm_class_reclaim(const dm_heap_dev *h, unsigned skip, unsigned *rng)
{
  const unsigned nfifo = DM_NCLASS * DM_NFIFO;
  if (*rng == 0u) *rng = dm_seed();
  unsigned f = dm_rand(rng) % nfifo, pay;
  for (unsigned i = 0; i < DM_RECLAIM_SPAN; ++i, f = (f + 1u) % nfifo) {
    if (f / DM_NFIFO == skip) continue;
    for (unsigned k = 0; k < DM_FIFO_CAP && dm_fifo_pop(&h->fifo[f], &pay); ++k)
      dm_class_drain(h, (unsigned long long)pay * DM_ALIGN >> DM_PAGE_SHIFT);
  }
}

/* Empty buffer f back into its pages (no allocation may run meanwhile). */
static __device__ void dm_class_trim(const dm_heap_dev *h, unsigned f)
{
  unsigned pay;
  while (dm_fifo_pop(&h->fifo[f], &pay))
    dm_class_drain(h, (unsigned long long)pay * DM_ALIGN >> DM_PAGE_SHIFT);
}

#endif /* DM_CLASSES_CUH */

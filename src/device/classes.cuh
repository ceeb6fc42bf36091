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
 * A page some of whose blocks drained home while others are still out is retiring: blocks
 * of it that are popped from a buffer go home too rather than to a user (dm_class_take),
 * so that a page whose free blocks are split between the buffers and its count comes
 * back whole instead of being pinned at users by the buffered ones.
 * Lone lanes take their blocks from per-slot pages, not from the buffers (see
 * "lone-lane pages" below).
 * Entry points: dm_class_of, dm_class_page_init, dm_class_spill, dm_class_take,
 * dm_class_put, dm_class_unref, dm_class_reclaim, dm_class_trim, dm_lone_slot,
 * dm_slot_retire, dm_slot_empty, dm_lone_sweep. */
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

/* n blocks of a class page, all held by the caller, go back to its count with one atomic;
 * true when they were the last ones out (the caller then gives the page back). A drain
 * that leaves blocks out adds DM_BC_DRAINED: the page is retiring (dm_class_take).
 *
 * The debug check reads pinfo while the caller still holds its blocks, so it must see the
 * page's class: the page cannot go home before this atomic. But "before" needs ordering,
 * not only program order. The load's value is used only after the atomic (nothing depends
 * on it), and a relaxed load followed by a relaxed atomic to another address is not
 * ordered by PTX (load buffering): the hardware may perform the load late, after the
 * atomic has gone out and come back to another lane. The interleaving ("1 blocks drained
 * to page P with count 0x1E0002, pinfo 0": a 16-B page with 30 blocks drained home and
 * the last 2 out, both drained at once by two lanes of other warps: k_free_all's
 * scattered frees finding the buffers full, the refill's dm_class_take of a retiring
 * page's blocks, or the trim kernel):
 *   lane A: ld pinfo (issued, not yet performed) ... atom count -> 0x1E0002 (2 out)
 *   lane B:                                atom count -> 0x1F0001 (1 out: the last),
 *                                          st pinfo = FREE, fence, clear the bitmap bit
 *   lane A's load performed now: it reads B's FREE.
 * The second-to-last drainer is the one a single round trip behind the FREE store, hence
 * the count's 2 out every time; the register cap's busier SMs (DM_MAXRREG=64: 4 blocks of
 * 256 per SM where the uncapped code fits 2) are the likely reason its load lost that race
 * in a fifth of the runs, where the uncapped build's did not in 10. (Before, the load came
 * after the atomic: "count 2, pinfo 0", two lanes draining a 256-B page at once.) The
 * count itself was right (2 out, and the last drain took the page home): a racy check,
 * not an accounting bug; no block was lost or handed out twice.
 * The fix, debug builds only: the count atomic is acq_rel. Release orders A's pinfo load
 * before A's atomic; B's atomic reads A's (a read-modify-write, so it synchronizes with
 * it) and its acquire orders B's FREE store after it: A's load happens before B's store
 * and cannot read it. Release builds keep the relaxed atomic: they read no pinfo here, and
 * a page goes home only through the bitmap after a release fence (dm_pages_put). */
#if DM_CHECKS
static __device__ __forceinline__ int dm_count_add_acq_rel(int *p, int v)
{
  int old;
  asm volatile("atom.acq_rel.gpu.add.s32 %0, [%1], %2;"
               : "=r"(old) : "l"(p), "r"(v) : "memory");
  return old;
}
#endif
static __device__ bool dm_class_unref(const dm_heap_dev *h, unsigned long long page,
                                      unsigned n)
{
#if DM_CHECKS
  unsigned pi = dm_ld(&h->pinfo[page]);
  int was = dm_count_add_acq_rel(&h->blockcount[page], DM_BC_DRAINED - (int)n);
#else
  int was = atomicAdd(&h->blockcount[page], DM_BC_DRAINED - (int)n);
#endif
  unsigned out = (unsigned)was & DM_BC_OUT;
  DM_INVARIANT(h, out >= n && DM_PI_KIND(pi) == DM_PI_CLASS,
               "%u blocks drained to page %llu with count %d, pinfo %x\n", n, page, was, pi);
  return out == n;
}

/* n blocks of a class page, all held by the caller, go back to it; the last ones take the
 * page home. */
static __device__ void dm_class_drain_n(const dm_heap_dev *h, unsigned long long page,
                                        unsigned n)
{
  if (dm_class_unref(h, page, n)) dm_pages_put(h, (long)page, 1);
}

/* One block of a class page goes back to its page; the last one takes the page home. */
static __device__ void dm_class_drain(const dm_heap_dev *h, unsigned long long page)
{
  dm_class_drain_n(h, page, 1u);
}

/* A block of class c from buffer q for a user, or NULL (the buffer is empty, or gave
 * `tries` blocks of retiring pages: DM_TAKE_TRIES on the way in, where a page search is
 * the alternative, DM_FIFO_CAP in an exhausted heap). Blocks of a retiring page (one whose count says
 * blocks of it were drained home) are drained too instead of handed out: the drained ones
 * can only be used again once the whole page is home, and handing out its buffered blocks
 * would pin it at users. (That was the "recovers after frees" failure: warps freeing 16-B
 * blocks of 32 different pages each filled the buffers and drained the rest, every page
 * kept a few buffered blocks, and the refill popped those, one pinned page per 16 B,
 * until the heap was full of pages whose other blocks nobody could use.) The count read
 * is a hint: a stale one only picks the other of two correct choices. */
static __device__ char *dm_class_take(const dm_heap_dev *h, unsigned c, unsigned q,
                                      unsigned tries)
{
  unsigned pay;
  for (unsigned k = 0; k < tries && dm_fifo_pop(dm_buffer(h, c, q), &pay); ++k) {
    unsigned long long page = (unsigned long long)pay * DM_ALIGN >> DM_PAGE_SHIFT;
    DM_INVARIANT(h, page < h->npages, "buffer %u of class %u gave payload %u\n", q, c, pay);
    if (dm_ld((const unsigned *)&h->blockcount[page]) < (unsigned)DM_BC_DRAINED)
      return dm_block(h, pay);
    dm_class_drain(h, page);
  }
  return NULL;
}

/* A fresh page, owned by this lane alone, becomes a class-c page with all its blocks out
 * (the lanes sharing it take the first ones, dm_class_spill buffers the rest). The page's
 * record (pkind; pinfo too in debug builds) is written before any of its blocks can reach
 * a user. */
static __device__ void dm_class_page_init(const dm_heap_dev *h, unsigned c, long page)
{
  DM_INVARIANT(h, dm_ld(&h->pinfo[page]) == DM_PI_FREE,
               "class page %ld claimed while its pinfo says %x\n", page, dm_ld(&h->pinfo[page]));
  h->blockcount[page] = (int)dm_class_blocks(c);
  dm_pinfo_set(h, (unsigned long)page, DM_PI_CLASS | c);
  dm_fence_acq_rel();   /* acquire for the claim, release for the above (warp.cuh) */
}

/* A fresh page, claimed by this lane with an acquire (dm_slot_claim<true>), becomes a
 * whole warp's 16-B page: all its blocks out, to the lanes of the warp. DM_CLAIM_UNFENCED:
 * its record carries DM_PK_UNFENCED and no fence follows the two stores; the warp's own
 * readers (its frees) are ordered after them by its warp barriers, and a free that would
 * hand a block of it to a buffer or to its count, where other multiprocessors read the
 * count, fences first (lane.cuh, dm_page_record). Otherwise dm_class_page_init. */
static __device__ __forceinline__ void dm_class_warp_page_init(const dm_heap_dev *h, long page)
{
#if DM_CLAIM_UNFENCED
  h->blockcount[page] = (int)dm_class_blocks(0u);
  h->pkind[page] = (unsigned char)(DM_PK_OF(DM_PI_CLASS | 0u) | DM_PK_UNFENCED);
#else
  dm_class_page_init(h, 0u, page);
#endif
}

/* Blocks `used` .. nb-1 of a fresh class-c page go to buffer q (or the next two buffers);
 * those that fit nowhere go straight back to the page (the users' blocks keep it held),
 * which makes it retiring. */
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
  if (i < nb) atomicAdd(&h->blockcount[page], DM_BC_DRAINED - (int)(nb - i));
}

/* A free block of class c (in class page `page`) goes to a buffer; false when both
 * buffers tried are full (the caller drains it home and counts the drain). */
static __device__ bool dm_class_buffer(const dm_heap_dev *h, unsigned c, void *blk)
{
  unsigned q = dm_buffer_hash(c), pay = dm_payload(h, blk);
  if (dm_fifo_push(dm_buffer(h, c, q), pay)) return true;
  return dm_fifo_push(dm_buffer(h, c, (q + 1u) % DM_NFIFO), pay);
}

/* A free block of class c (in class page `page`) goes to a buffer, or drains home. */
static __device__ void dm_class_put(const dm_heap_dev *h, unsigned c, unsigned long long page,
                                    void *blk)
{
  if (dm_class_buffer(h, c, blk)) return;
  atomicAdd(&h->ctr->drains, 1ull);
  dm_class_drain(h, page);
}

/* ---- lone-lane pages ----------------------------------------------------
 * A lane alone in its warp takes its class block from its slot's page (types.cuh, slot):
 * one atomic add on the slot's word for its class returns (page, k), and k below the
 * class's blocks per page nb names its block, block k (entry.cu). Nothing is shared with
 * the other lanes of the warp (there are none), no buffer is touched, and the word belongs
 * to the warp's hardware slot, whose warps run one after another: the atomic meets no
 * other lane's. A class page given to a slot starts with all its nb blocks counted out
 * (its blockcount), as any fresh class page: each bump hands one of them to a user, and
 * each block comes back through the count (a lone free drains it home, free.cu) or a
 * buffer (a warp's free), as before. A bump that finds k >= nb (the page used up, or no
 * page) asks group.cu for a fresh page (dm_malloc_lone), which takes block 0 and swaps the
 * page into the word with one atomic exchange; the old word it gets back names the page it
 * replaced and how many of that page's blocks were handed out, and the blocks that never
 * were are given back to the page's count (dm_slot_retire), so that the page goes home
 * once its users' blocks do. That also makes the exchange safe when two lanes refill at
 * once, or when another lane (the trim kernel, an exhausted request) empties the word:
 * whoever swaps a page out settles it, exactly once, whatever the page. A page stays out
 * while its slot holds it: dm_heap_trim, and an exhausted heap a span at a time
 * (dm_class_reclaim), empty the slots.
 * Ordering: the refiller writes the page's count and record and fences (acq_rel, as every
 * class page's claimer, dm_class_page_init) before its exchange publishes the page; a
 * bumper reaches the page only through the value its atomic returned, the address
 * dependency the buffers' pops rely on (fifo.cuh), and its accesses of the count go to
 * the L2, where the refiller's stores are. */

/* Word of class c in the slot of the calling warp (a hint, as dm_slot_word; a %smid past
 * the device's count, which PTX allows, wraps). */
static __device__ __forceinline__ unsigned long long *dm_lone_slot(const dm_heap_dev *h,
                                                                   unsigned c)
{
  unsigned w;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(w));
  unsigned s = dm_smid() * DM_SLOT_WARPS + (w & (DM_SLOT_WARPS - 1u));
  if (s >= h->nslot) s %= h->nslot;
  return &h->slot[s * DM_SLOT_STRIDE + c];
}

/* Block k of class-c page `page`. */
static __device__ __forceinline__ char *dm_class_block(const dm_heap_dev *h, unsigned c,
                                                       unsigned long long page, unsigned k)
{
  return h->base + (page << DM_PAGE_SHIFT) + ((unsigned long long)k << (DM_MIN_SHIFT + c));
}

/* A class-c slot word `old` was swapped out of its slot by the caller: the blocks of its
 * page that were never handed out go back to the page's count (the last ones out take it
 * home). Nothing when the word named no page or every block was handed out. */
static __device__ void dm_slot_retire(const dm_heap_dev *h, unsigned c, unsigned long long old)
{
  const unsigned page = (unsigned)(old >> 32), k = (unsigned)old, nb = dm_class_blocks(c);
  if (page != DM_SLOT_NONE && k < nb) dm_class_drain_n(h, page, nb - k);
}

/* Empty slot word i (of the nslot * DM_SLOT_STRIDE), if it holds a page. */
static __device__ void dm_slot_empty(const dm_heap_dev *h, unsigned i)
{
  const unsigned c = i % DM_SLOT_STRIDE;
  if (c >= DM_NCLASS || (unsigned)(dm_ld64(&h->slot[i]) >> 32) == DM_SLOT_NONE) return;
  dm_slot_retire(h, c, atomicExch(&h->slot[i], DM_SLOT_EMPTY));
}

/* Heap exhausted, a lone lane of class c found no page: a block of another slot's class-c
 * page that was not handed out yet, or NULL. Every slot's word is read, sixteen loads in
 * flight at a time (nslot is a multiple of 64), and bumped where it has blocks left. */
static __device__ char *dm_lone_sweep(const dm_heap_dev *h, unsigned c)
{
  const unsigned nb = dm_class_blocks(c);
  for (unsigned s0 = 0; s0 < h->nslot; s0 += 16u) {
    unsigned long long w[16];
#pragma unroll
    for (unsigned i = 0; i < 16u; ++i) w[i] = dm_ld64(&h->slot[(s0 + i) * DM_SLOT_STRIDE + c]);
#pragma unroll
    for (unsigned i = 0; i < 16u; ++i) {
      if ((unsigned)w[i] >= nb) continue;
      unsigned long long v = atomicAdd(&h->slot[(s0 + i) * DM_SLOT_STRIDE + c], 1ull);
      if ((unsigned)v < nb) return dm_class_block(h, c, v >> 32, (unsigned)v);
    }
  }
  return NULL;
}

/* Heap exhausted: empty DM_RECLAIM_SPAN buffers of classes other than `skip`, from a
 * random one on, back into their pages (at most one buffer's worth of pops each, so frees
 * racing in cannot keep us here), so that pages held only by buffered blocks go home;
 * likewise DM_SLOT_RECLAIM_SPAN lone-lane slot words of other classes (their pages'
 * blocks not handed out go back to their counts: the pages go home with their users'
 * blocks). Every lane that finds the heap exhausted helps this way: no lock, no waiting,
 * and repeated misses sweep all the buffers and slots. */
static __device__ void dm_class_reclaim(const dm_heap_dev *h, unsigned skip, unsigned *rng)
{
  const unsigned nfifo = DM_NCLASS * DM_NFIFO, nslot = h->nslot * DM_SLOT_STRIDE;
  if (*rng == 0u) *rng = dm_seed();
  unsigned f = dm_rand(rng) % nfifo, pay;
  for (unsigned i = 0; i < DM_RECLAIM_SPAN; ++i, f = (f + 1u) % nfifo) {
    if (f / DM_NFIFO == skip) continue;
    for (unsigned k = 0; k < DM_FIFO_CAP && dm_fifo_pop(&h->fifo[f], &pay); ++k)
      dm_class_drain(h, (unsigned long long)pay * DM_ALIGN >> DM_PAGE_SHIFT);
  }
  unsigned s = dm_rand(rng) % nslot;
  for (unsigned i = 0; i < DM_SLOT_RECLAIM_SPAN; ++i, s = (s + 1u) % nslot)
    if (s % DM_SLOT_STRIDE != skip) dm_slot_empty(h, s);
}

/* Empty buffer f back into its pages (no allocation may run meanwhile). */
static __device__ void dm_class_trim(const dm_heap_dev *h, unsigned f)
{
  unsigned pay;
  while (dm_fifo_pop(&h->fifo[f], &pay))
    dm_class_drain(h, (unsigned long long)pay * DM_ALIGN >> DM_PAGE_SHIFT);
}

#endif /* DM_CLASSES_CUH */

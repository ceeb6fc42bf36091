/* page.cuh: the page layer (Pham et al., ICS'22). The arena is cut into DM_PAGE_BYTES
 * pages tracked by one bitmap (1 = used); there is no free list and no global state.
 * Entry points: dm_pages_get (every lane of a warp-synchronous group calls it; lanes that
 * need nothing help search) and dm_pages_put.
 *  - single pages: the collaborative random walk (CoRW, Algorithm 2): each lane reads one
 *    random bitmap word, and the free bits found are shared out to the lanes that still
 *    need a page with ballots and shuffles. Deviation: no LockMap. A provider claims all the
 *    bits it hands out with one atomicOr, whose old value says exactly which it won, so a
 *    lock word (and its second atomic) is unnecessary.
 *  - runs of 2..32 pages inside one word: Algorithm 3's shared search: all lanes scout,
 *    and for each needy lane the first scout whose word holds a long enough hole claims it.
 *  - runs longer than 32 pages: word-aligned, searched and claimed by the lane alone.
 *  - bounded: DM_WALK_ROUNDS random rounds, then one sweep of the whole bitmap by the
 *    group (consecutive words, as Algorithm 3 reads them); a lane that still has nothing
 *    gets -1, so a full heap returns NULL instead of hanging the kernel.
 */
#ifndef DM_PAGE_CUH
#define DM_PAGE_CUH

#include "types.cuh"
#include "warp.cuh"

/* Set page `page`'s record to v: its pkind byte, and its pinfo where that is kept
 * (types.cuh, DM_PI_KEPT: release builds only for values a byte cannot hold). */
static __device__ __forceinline__ void dm_pinfo_set(const dm_heap_dev *h, unsigned long page,
                                                    unsigned v)
{
  h->pkind[page] = DM_PK_OF(v);
  if (DM_PI_KEPT(v)) h->pinfo[page] = v;
}

/* Bit i set when bits i .. i+n-1 of `freeb` are all set (n in 1..32). */
static __device__ __forceinline__ unsigned dm_hole_starts(unsigned freeb, unsigned n)
{
  unsigned m = freeb;
  for (unsigned i = 1; i < n && m; ++i) m &= m >> 1;
  return m;
}

/* Mask of n bits from bit b (n in 1..32, b + n <= 32). */
static __device__ __forceinline__ unsigned dm_bits(unsigned b, unsigned n)
{
  return (n >= 32u ? ~0u : ((1u << n) - 1u)) << b;
}

/* The word a lane reads in round r of a search: random first, then the sweep. Returns
 * nwords when this lane has no word in that round (sweep finished). */
static __device__ __forceinline__ unsigned dm_walk_word(const dm_heap_dev *h, unsigned r,
                                                        unsigned *rng, unsigned start,
                                                        unsigned rank, unsigned nlanes)
{
  if (r < DM_WALK_ROUNDS) return dm_rand(rng) % h->nwords;
  unsigned i = (r - DM_WALK_ROUNDS) * nlanes + rank;
  return i < h->nwords ? (start + i) % h->nwords : h->nwords;
}

/* Rounds of a whole search: the random rounds plus one sweep. */
static __device__ __forceinline__ unsigned dm_walk_rounds(const dm_heap_dev *h,
                                                          unsigned nlanes)
{
  return DM_WALK_ROUNDS + (h->nwords + nlanes - 1u) / nlanes;
}

/* The bitmap word this warp's hardware slot prefers: the multiprocessor and the warp slot on
 * it (%warpid, a hint: it may change under preemption, and nothing relies on it), one word
 * per 32-byte sector so that slots do not share a sector. The warps that follow each other
 * in a slot reuse its word's pages, whose bitmap word, records and counts stay in the L2,
 * where the random walk's first round loads 32 random words (DRAM misses in a fresh heap)
 * and waits for all of them before its atomic. */
static __device__ __forceinline__ unsigned dm_slot_word(const dm_heap_dev *h)
{
  unsigned w;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(w));
  return ((dm_smid() * 64u + w) * 8u) % h->nwords;
}

/* One lane alone needs one page: claim it in the slot's word with one atomic and no load.
 * Bit r % 32 of the word (r random) is or'ed in blindly; where it was taken, the old value
 * the atomic returns names the word's free bits and the lowest of them is tried once more.
 * -1 when both miss (the caller walks as before: a full heap still ends in NULL). Bits past
 * the last page are set (heap.cu), so a blind bit never claims a page that does not exist.
 * ACQUIRE: the atomics acquire (for a claimer that does not fence after its claim). Used by
 * dm_pages_get for a lone needy lane (a lone lane's refill, an area) and by entry.cu's
 * whole-warp 16-B path, in front of the heap walk (docs/HISTORY.md: what it gains). */
template <bool ACQUIRE>
static __device__ __forceinline__ unsigned dm_claim_or(unsigned *word, unsigned bit)
{
  return ACQUIRE ? dm_atom_or_acquire(word, bit) : atomicOr(word, bit);
}
template <bool ACQUIRE = false>
static __device__ __forceinline__ long dm_slot_claim(const dm_heap_dev *h, unsigned r)
{
  const unsigned w = dm_slot_word(h);
  unsigned bit = 1u << (r & 31u);
  unsigned old = dm_claim_or<ACQUIRE>(&h->bitmap[w], bit);
  if ((old & bit) != 0u) {
    bit = ~old & (0u - ~old);
    if (bit == 0u) return -1;
    old = dm_claim_or<ACQUIRE>(&h->bitmap[w], bit);
    if ((old & bit) != 0u) return -1;
  }
  return (long)w * 32 + (__ffs(bit) - 1);
}

/* CoRW: lanes of `need` (within `mask`) each get one page in *page. */
static __device__ void dm_corw(const dm_heap_dev *h, unsigned mask, unsigned need,
                               unsigned *rng, long *page)
{
  const unsigned me = dm_lane(), below = dm_lanes_below();
  const unsigned rank = __popc(mask & below), nlanes = __popc(mask);
  const unsigned start = __shfl_sync(mask, dm_rand(rng), __ffs(mask) - 1) % h->nwords;
  const unsigned rounds = dm_walk_rounds(h, nlanes);
  for (unsigned r = 0; need && r < rounds; ++r) {
    unsigned w = dm_walk_word(h, r, rng, start, rank, nlanes);
    unsigned freeb = w < h->nwords ? ~dm_ld(&h->bitmap[w]) : 0u;
    dm_converge(mask);
    unsigned has = __ballot_sync(mask, freeb != 0);
    while (need && has) {
      if ((need & (need - 1u)) == 0u) {
        /* one lane needs a page (a class page shared by a whole warp, an area): the first
         * provider claims one bit for it, without the scan and the search below, whose
         * shuffle loops were the hottest instructions of a 16-B allocation kernel */
        unsigned p = (unsigned)__ffs(has) - 1u, won = 0;
        if (me == p) {
          unsigned bit = freeb & (0u - freeb);
          unsigned old = atomicOr(&h->bitmap[w], bit);
          won = bit & ~old;
          freeb &= ~(bit | old);
        }
        dm_converge(mask);
        unsigned pwon = __shfl_sync(mask, won, (int)p), pw = __shfl_sync(mask, w, (int)p);
        bool needy = (need >> me) & 1u;
        if (needy && pwon) *page = (long)pw * 32 + (__ffs(pwon) - 1);
        need = __ballot_sync(mask, needy && *page < 0);
        has = __ballot_sync(mask, freeb != 0);
        continue;
      }
      /* providers in lane order serve the needy lanes in lane order */
      unsigned total, before = dm_warp_exscan(mask, __popc(freeb), &total);
      unsigned nneed = __popc(need);
      unsigned k = before < nneed ? min((unsigned)__popc(freeb), nneed - before) : 0u;
      unsigned claim = dm_low_bits(freeb, k), won = 0;
      if (claim) {
        unsigned old = atomicOr(&h->bitmap[w], claim);
        won = claim & ~old;
        freeb &= ~(claim | old);
      }
      bool needy = (need >> me) & 1u;
      unsigned s = __popc(need & below), src = me, idx = 0;
      dm_converge(mask);
      bool found = false;
      for (unsigned m = has; m; m &= m - 1u) {
        unsigned p = (unsigned)__ffs(m) - 1u;
        unsigned bp = __shfl_sync(mask, before, (int)p), kp = __shfl_sync(mask, k, (int)p);
        if (needy && s >= bp && s < bp + kp) { src = p; idx = s - bp; found = true; }
      }
      unsigned pclaim = __shfl_sync(mask, claim, (int)src);
      unsigned pwon = __shfl_sync(mask, won, (int)src);
      unsigned pw = __shfl_sync(mask, w, (int)src);
      if (found) {
        unsigned bit = dm_fks(pclaim, idx);
        if (bit < 32u && ((pwon >> bit) & 1u)) *page = (long)pw * 32 + bit;
      }
      need = __ballot_sync(mask, needy && *page < 0);
      has = __ballot_sync(mask, freeb != 0);
    }
  }
}

/* Algorithm 3: lanes of `need` get a run of n (2..32) pages inside one bitmap word.
 * Round 0 reads a window of consecutive words from a random start (lane of rank i: word
 * start + i; a group of 8 lanes or more starts on a multiple of 8 words, one bitmap
 * sector), later rounds random words as in the paper, then the sweep. Why the window
 * (issue 31): the first scout with a hole serves the needy lanes in order, so consecutive
 * lanes' runs fill the window's words in order, a whole warp's 32 runs of 4 KiB lying in 8
 * consecutive words (one bitmap sector, 256 consecutive pkind bytes) where random scouts
 * put them in 8 random words. A warp freeing them (free.cu, dm_free_warp) then loads 2
 * lines of pkind and clears 1 bitmap sector, not 8 of each, each its own DRAM access: the
 * cost of a 1-KiB or 4-KiB free that grew with the size (H100, free4k 0.0233 ms against
 * free256's 0.0184, Gallatin 0.0168). The window is also one line of bitmap to load where
 * the random round loaded 32 sectors. In round 0 a lane that loses part of a claim to
 * another warp drops its word (the next scout's word serves the next lane): two warps
 * whose windows meet would otherwise chase each other through it, the slower one losing
 * every claim to the one ahead; later rounds keep what the lost claim's old value says. */
static __device__ void dm_run_search(const dm_heap_dev *h, unsigned mask, unsigned need,
                                     unsigned n, unsigned *rng, long *page)
{
  const unsigned me = dm_lane();
  const unsigned rank = __popc(mask & dm_lanes_below()), nlanes = __popc(mask);
  unsigned start = __shfl_sync(mask, dm_rand(rng), __ffs(mask) - 1) % h->nwords;
  if (nlanes >= 8u) start &= ~7u;
  const unsigned rounds = dm_walk_rounds(h, nlanes);
  for (unsigned r = 0; need && r < rounds; ++r) {
    /* round 0: the window (a lane past the heap's words reads none) */
    unsigned w = r ? dm_walk_word(h, r, rng, start, rank, nlanes)
                   : rank < h->nwords ? (start + rank) % h->nwords : h->nwords;
    unsigned freeb = w < h->nwords ? ~dm_ld(&h->bitmap[w]) : 0u;
    for (unsigned m = need; m; m &= m - 1u) {
      unsigned q = (unsigned)__ffs(m) - 1u;
      unsigned nq = __shfl_sync(mask, n, (int)q);
      unsigned starts = dm_hole_starts(freeb, nq);
      unsigned cand = __ballot_sync(mask, starts != 0);
      if (!cand) continue;
      unsigned p = (unsigned)__ffs(cand) - 1u;
      long got = -1;
      if (me == p) {
        unsigned b = (unsigned)__ffs(starts) - 1u, run = dm_bits(b, nq);
        unsigned old = atomicOr(&h->bitmap[w], run);
        if (old & run) {               /* lost part of it: give back what we set */
          atomicAnd(&h->bitmap[w], ~(run & ~old));
          freeb = r ? freeb & ~old : 0u;   /* round 0: drop the word (see above) */
        } else {
          got = (long)w * 32 + b;
          freeb &= ~run;
        }
      }
      dm_converge(mask);
      got = __shfl_sync(mask, got, (int)p);
      if (me == q && got >= 0) *page = got;
    }
    need = __ballot_sync(mask, ((need >> me) & 1u) && *page < 0);
  }
}

/* Claim k whole words from word s, the last one only its low `last` bits. */
static __device__ bool dm_claim_words(const dm_heap_dev *h, unsigned s, unsigned k,
                                      unsigned last)
{
  for (unsigned i = 0; i < k; ++i) {
    unsigned want = i + 1 < k ? ~0u : dm_bits(0, last);
    unsigned old = atomicOr(&h->bitmap[s + i], want);
    if (old & want) {
      atomicAnd(&h->bitmap[s + i], ~(want & ~old));
      for (unsigned j = 0; j < i; ++j) atomicAnd(&h->bitmap[s + j], 0u);
      return false;
    }
  }
  return true;
}

/* A run of n > 32 pages starting on a word boundary, searched by this lane alone:
 * random probes, then one sweep. */
static __device__ long dm_big_run(const dm_heap_dev *h, unsigned n, unsigned *rng)
{
  unsigned k = (n + 31u) / 32u, last = n - (k - 1u) * 32u;
  if (k > h->nwords) return -1;
  unsigned span = h->nwords - k + 1u;
  for (unsigned r = 0; r < DM_WALK_ROUNDS; ++r) {
    unsigned s = dm_rand(rng) % span, i = 0;
    while (i < k && (dm_ld(&h->bitmap[s + i]) & (i + 1 < k ? ~0u : dm_bits(0, last))) == 0)
      ++i;
    if (i == k && dm_claim_words(h, s, k, last)) return (long)s * 32;
  }
  unsigned zeros = 0;                   /* consecutive free words ending before s */
  for (unsigned s = 0; s < h->nwords; ++s) {
    unsigned v = dm_ld(&h->bitmap[s]);
    if (zeros + 1u >= k && (v & dm_bits(0, last)) == 0) {
      unsigned s0 = s + 1u - k;
      if (dm_claim_words(h, s0, k, last)) return (long)s0 * 32;
    }
    zeros = v == 0 ? zeros + 1u : 0u;
  }
  return -1;
}

/* Every lane of `mask` calls this together; a lane asking n > 0 pages gets the first page
 * of a run of n pages (its record not yet written), or -1 when the bounded search failed.
 * Lanes asking 0 help the others search. */
static __device__ long dm_pages_get(const dm_heap_dev *h, unsigned mask, unsigned n,
                                    unsigned *rng)
{
  long page = -1;
  if (*rng == 0u) *rng = dm_seed();      /* callers seed lazily: most never search */
  dm_converge(mask);
  unsigned one = __ballot_sync(mask, n == 1u);
  if (one != 0u && (one & (one - 1u)) == 0u) {   /* one lane needs one page: its slot */
    if (n == 1u) page = dm_slot_claim(h, dm_rand(rng));
    dm_converge(mask);
    one = __ballot_sync(mask, n == 1u && page < 0);
  }
  if (one) dm_corw(h, mask, one, rng, &page);
  dm_converge(mask);
  unsigned some = __ballot_sync(mask, n >= 2u && n <= 32u);
  if (some) dm_run_search(h, mask, some, n, rng, &page);
  if (n > 32u) page = dm_big_run(h, n, rng);
#if DM_CHECKS
  for (unsigned i = 0; page >= 0 && i < n; ++i) {
    unsigned long pg = (unsigned long)page + i;
    DM_INVARIANT(h, pg < h->npages && ((dm_ld(&h->bitmap[pg / 32u]) >> (pg % 32u)) & 1u),
                 "page %lu of a %u-page request handed out unclaimed (%s)\n", pg, n,
                 n == 1u ? "corw" : n <= 32u ? "run search" : "big run");
  }
  DM_INVARIANT(h, page < 0 || n > 0, "page %ld handed to a lane that asked none\n", page);
#endif
  return page;
}

/* Bytes k = 0..7 of the pkind of pages i .. i+7 of a run (i + 7 < DM_PK_VMAX), byte 0 of
 * the first page the run head's `head`: DM_PI_BODY | (i + k) in the byte form (lanes of
 * one 64-bit word: no carries); DM_PK_RECORD=0 writes bodies as DM_PK_VMAX (its pinfo
 * holds the distance). */
static __device__ __forceinline__ unsigned long long dm_pk_bytes(unsigned i, unsigned head)
{
  const unsigned long long v =
      DM_PK_RECORD ? 0xc0c0c0c0c0c0c0c0ull | (i * 0x0101010101010101ull + 0x0706050403020100ull)
                   : ~0ull;
  return i ? v : (v & ~0xffull) | head;
}

/* Write the record of a run just claimed: head, then one body entry per later page.
 * A run inside a bitmap word (n <= 32) lies in one aligned 32-byte chunk of pkind, written
 * with at most 7 stores of 1 to 8 bytes (a 4-KiB run at a page that is a multiple of 8:
 * one 8-byte store, where pinfo took 8); only the run's own bytes are written (a
 * neighbour's byte, read at the same time by its owner's free, is never rewritten).
 * Longer runs: one byte per page, and pinfo where a byte cannot hold the value. */
static __device__ __forceinline__ void dm_run_mark(const dm_heap_dev *h, long page,
                                                   unsigned n)
{
  DM_INVARIANT(h, page >= 0 && page + n <= h->npages, "run %ld+%u outside the heap\n", page, n);
  for (unsigned i = 0; i < n; ++i)
    DM_INVARIANT(h, dm_ld(&h->pinfo[page + i]) == DM_PI_FREE,
                 "run page %ld claimed while its pinfo says %x\n", page + i,
                 dm_ld(&h->pinfo[page + i]));
  if (n > 32u) {
    for (unsigned i = 1; i < n; ++i) dm_pinfo_set(h, (unsigned long)page + i, DM_PI_BODY | i);
    dm_pinfo_set(h, (unsigned long)page, DM_PI_HEAD | n);
    return;
  }
  if (DM_PI_KEPT(0u)) {   /* debug builds, or DM_PK_RECORD=0: pinfo in full too */
    for (unsigned i = 1; i < n; ++i) h->pinfo[page + i] = DM_PI_BODY | i;
    h->pinfo[page] = DM_PI_HEAD | n;
  }
  const unsigned head = DM_PK_OF(DM_PI_HEAD | n);
  unsigned char *b = h->pkind + page;
  /* the common case, one store: 2, 4 or 8 pages at a multiple of their number (the 1-KiB,
   * 2-KiB and 4-KiB runs of a heap that is not fragmented). Without it the general steps
   * below would cost 1-KiB allocations more than the two pinfo stores they replace. */
  if ((n & (n - 1u)) == 0u && n <= 8u && ((unsigned)page & (n - 1u)) == 0u) {
    const unsigned long long v = dm_pk_bytes(0u, head);
    if (n == 8u) *(unsigned long long *)b = v;
    else if (n == 4u) *(unsigned *)b = (unsigned)v;
    else if (n == 2u) *(unsigned short *)b = (unsigned short)v;
    else *b = (unsigned char)v;
    return;
  }
  const unsigned a = (unsigned)page & 7u;   /* b's misalignment (pkind is 256-B aligned) */
  unsigned i = 0;
  /* up to 8-byte alignment: the store of k bytes where (a + i) has bit k */
  if (((a + i) & 1u) && i + 1u <= n) { b[i] = (unsigned char)dm_pk_bytes(i, head); i += 1u; }
  if (((a + i) & 2u) && i + 2u <= n) {
    *(unsigned short *)(b + i) = (unsigned short)dm_pk_bytes(i, head); i += 2u;
  }
  if (((a + i) & 4u) && i + 4u <= n) {
    *(unsigned *)(b + i) = (unsigned)dm_pk_bytes(i, head); i += 4u;
  }
  /* aligned to 8 now, unless fewer bytes than the failed step's are left */
  for (; i + 8u <= n; i += 8u) *(unsigned long long *)(b + i) = dm_pk_bytes(i, head);
  if (i + 4u <= n) { *(unsigned *)(b + i) = (unsigned)dm_pk_bytes(i, head); i += 4u; }
  if (i + 2u <= n) {
    *(unsigned short *)(b + i) = (unsigned short)dm_pk_bytes(i, head); i += 2u;
  }
  if (i < n) b[i] = (unsigned char)dm_pk_bytes(i, head);
}

/* Clear the bitmap bits of pages page .. page+n-1 (fenced before: the user's writes, and in
 * debug builds the records cleared), one atomic per word. */
static __device__ void dm_pages_clear(const dm_heap_dev *h, unsigned long p, unsigned long end)
{
  while (p < end) {
    unsigned w = (unsigned)(p / 32u), b = (unsigned)(p % 32u);
    unsigned cnt = (unsigned)min((unsigned long)(32u - b), end - p);
#if DM_CHECKS
    unsigned old = atomicAnd(&h->bitmap[w], ~dm_bits(b, cnt));
    DM_INVARIANT(h, (old & dm_bits(b, cnt)) == dm_bits(b, cnt),
                 "pages %lu..%lu freed while not all used\n", p, p + cnt - 1u);
#else
    dm_red_and(&h->bitmap[w], ~dm_bits(b, cnt));   /* no return wanted: a RED (warp.cuh) */
#endif
    p += cnt;
  }
}

/* Give n pages from `page` back: clear their bits, after a release fence (the user's last
 * writes to them, and this lane's earlier metadata stores, come before a claimer's).
 * The bitmap alone says which pages are free: a free page's record (pkind, and pinfo where
 * kept: types.cuh) is never read (a claimer writes the record of every page it claims, run
 * head and body or class page, and fences before any of its blocks reach a user; the only
 * other readers are dm_locate and the whole-warp free, and a pointer that dm_malloc handed
 * out leads them to a live page), so release builds leave a free page's record as it was:
 * no store, and nothing for a late store of ours to overwrite in a page claimed
 * meanwhile. The price: release builds no longer tell a second free of a run
 * or class page from a first (a double free, which only debug builds promise to catch; a
 * pointer to a page never handed out still reads FREE and is counted). Debug builds clear
 * every page's record before the fence, since their claim checks want a free page FREE. */
static __device__ void dm_pages_put(const dm_heap_dev *h, long page, unsigned n)
{
#if DM_CHECKS
  for (unsigned i = 0; i < n; ++i) dm_pinfo_set(h, (unsigned long)page + i, DM_PI_FREE);
#endif
  dm_fence_release();
  dm_pages_clear(h, (unsigned long)page, (unsigned long)page + n);
}

/* Segmented OR over rows of lanes: every lane of `mask` calls it together; a row starts at
 * each lane with `head` set (and at each lane whose lower neighbour is not in `mask`) and
 * runs up to the next. The last lane of each row gets the OR of its row's `bits` (*last
 * set); other lanes get partial ORs. One reduction when the whole group is one row, else a
 * maximum and log2(longest row) shuffle rounds (Hillis-Steele, segmented). */
static __device__ __forceinline__ unsigned dm_row_or(unsigned mask, bool head, unsigned bits,
                                                     bool *last)
{
  const unsigned me = dm_lane();
  head = head || me == 0u || !((mask >> (me - 1u)) & 1u);
  const unsigned heads = __ballot_sync(mask, head);
  *last = me == 31u || ((heads | ~mask) >> (me + 1u)) & 1u;
  if (__popc(heads) == 1) return dm_warp_or(mask, bits);          /* one row: the group */
  const unsigned s = 31u - (unsigned)__clz(heads & (dm_lanes_below() | (1u << me)));
  const unsigned longest = dm_warp_max(mask, me - s + 1u);
  for (unsigned d = 1; d < longest; d <<= 1) {
    unsigned o = __shfl_up_sync(mask, bits, d);
    if (me >= s + d) bits |= o;
  }
  return bits;
}

/* dm_pages_put for a warp: every lane of `mask` calls it together, and the lanes with
 * n > 0 give back n pages from `page`. A warp barrier (it orders every lane's earlier
 * writes, the users' and the debug build's record stores, before every lane's fence), one
 * release fence for all, then each bitmap word the lanes' pages share is cleared with one
 * atomic: the lanes' words are combined by a segmented OR over runs of consecutive lanes
 * with the same word (a warp freeing 32 4-KiB runs touches 8 words: 8 atomics, not 32, in
 * two shuffle rounds; a loop over the distinct words cost four warp collectives per word).
 * A word met in two runs of lanes gets two atomics, which is correct, only slower. Lanes
 * giving nothing back but freeing in a known page (`home`: a class block's page, -1 for
 * none) join its word's run with no bits, so that the lanes of one class page do not split
 * their neighbours' runs. A run that crosses a word (longer than 32 pages: word-aligned)
 * is cleared by its own lane. */
static __device__ void dm_pages_put_group(const dm_heap_dev *h, unsigned mask, long page,
                                          unsigned n, long home)
{
#if DM_CHECKS
  for (unsigned i = 0; i < n; ++i) dm_pinfo_set(h, (unsigned long)page + i, DM_PI_FREE);
#endif
  if (__ballot_sync(mask, n != 0u) == 0u) return;
  __syncwarp(mask);
  dm_fence_release();
  unsigned long p = (unsigned long)page;
  unsigned w = (unsigned)(p / 32u), b = (unsigned)(p % 32u);
  bool one = n != 0u && b + n <= 32u;
  if (n != 0u && !one) dm_pages_clear(h, p, p + n);
  /* the word this lane's run of lanes is keyed by: its own, its class page's, or none */
  unsigned key = one ? w : home >= 0 ? (unsigned)((unsigned long)home / 32u) : ~0u;
  unsigned prev = __shfl_up_sync(mask, key, 1);
  bool tail;
  unsigned bits = dm_row_or(mask, prev != key, one ? dm_bits(b, n) : 0u, &tail);
  if (tail && key != ~0u && bits != 0u) {
#if DM_CHECKS
    unsigned old = atomicAnd(&h->bitmap[key], ~bits);
    DM_INVARIANT(h, (old & bits) == bits, "pages of word %u (bits %x) freed while not all "
                 "used (bits %x)\n", key, bits, old);
#else
    dm_red_and(&h->bitmap[key], ~bits);
#endif
  }
}

#endif /* DM_PAGE_CUH */

/* cache.c: the worker's allocation cache (cache.h): bins of leased slabs by region and slot
 * size, an index of every leased slab by address, and the lease / unlease traffic through the
 * backend. The hot paths (cache_alloc, cache_free) are a bin or index lookup and a bitmap bit,
 * inline in cache_hot.h with the records. Main entries: cache_alloc, cache_free, cache_flush. */
#include "worker/cache_hot.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

cache_config cache_config_default(void) {
  return (cache_config){.first_grant = 2, .max_grant = 1024, .max_idle = 2048, .max_batch = 65536};
}

/* ---- slab records ---- */

/* Slab records come in blocks, kept until cache_fini: a lease of thousands of slabs and the
 * flush that hands them back cost no malloc and free a slab (in a rank's threads, those
 * contend in the allocator's arenas). */
#define RECORDS_PER_BLOCK 256
struct record_block {
  struct record_block *next;
  cslab rec[RECORDS_PER_BLOCK];
};

static void record_free(cache *c, cslab *s) {
  s->next = c->spare;
  c->spare = s;
}

/* Block b's records spare, handed out in memory order. */
static void block_spare(cache *c, struct record_block *b) {
  for (size_t i = RECORDS_PER_BLOCK; i-- > 0;) record_free(c, &b->rec[i]);
}

static cslab *record_new(cache *c) {
  if (!c->spare) {
    struct record_block *b = malloc(sizeof *b);
    if (!b) return NULL;
    b->next = c->blocks;
    c->blocks = b;
    block_spare(c, b);
  }
  cslab *s = c->spare;
  c->spare = s->next;
  return s;
}

/* Every record spare again (none is in use), handed out from here on block by block in
 * memory order. A lease takes them for its slabs last to first (adopt), so a grant's records
 * lie in a block in the reverse order of its slabs, and a flush (by address) reads them
 * backwards through memory, in order still, not at random. */
static void records_reset(cache *c) {
  c->spare = NULL;
  for (struct record_block *b = c->blocks; b; b = b->next) block_spare(c, b);
}

/* ---- the slab index ---- */

static void index_put(cslab **tab, size_t mask, cslab *s) {
  size_t i = cache_slab_hash(s->addr, mask);
  while (tab[i]) i = (i + 1) & mask;
  tab[i] = s;
}

/* Room for `more` entries at a load of at most one half. */
static int index_reserve(cache *c, size_t more) {
  size_t old = c->tmask + 1, cap = old;
  if (2 * (c->tcount + more) <= cap) return 0;
  while (2 * (c->tcount + more) > cap) cap *= 2;
  cslab **tab = calloc(cap, sizeof *tab);
  if (!tab) return ENOMEM;
  for (size_t i = 0; i < old; i++)
    if (c->tab[i]) index_put(tab, cap - 1, c->tab[i]);
  free(c->tab);
  c->tab = tab;
  c->tmask = cap - 1;
  return 0;
}

/* Remove s (backward-shift deletion keeps every probe chain unbroken). */
static void index_remove(cache *c, const cslab *s) {
  size_t mask = c->tmask, i = cache_slab_hash(s->addr, mask);
  while (c->tab[i] != s) i = (i + 1) & mask;
  for (size_t j = (i + 1) & mask; c->tab[j]; j = (j + 1) & mask) {
    size_t home = cache_slab_hash(c->tab[j]->addr, mask);
    if (((j - home) & mask) >= ((j - i) & mask)) { /* j's home is at or before the hole */
      c->tab[i] = c->tab[j];
      i = j;
    }
  }
  c->tab[i] = NULL;
  c->tcount--;
}

/* ---- bins ---- */

static size_t bin_hash(uint32_t rid, uint32_t slot, size_t cap) {
  uint64_t k = (uint64_t)rid << 7 | (slot >> AH_SLOT_ALIGN_SHIFT);
  return (size_t)((k * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

static cbin *bin_find(const cache *c, uint32_t rid, uint32_t slot) {
  for (cbin *b = c->bins[bin_hash(rid, slot, c->bcap)]; b; b = b->hnext)
    if (b->rid == rid && b->slot == slot) return b;
  return NULL;
}

static int bins_grow(cache *c) {
  size_t cap = 2 * c->bcap;
  cbin **bins = calloc(cap, sizeof *bins);
  if (!bins) return ENOMEM;
  for (size_t i = 0; i < c->bcap; i++)
    for (cbin *b = c->bins[i], *next; b; b = next) {
      next = b->hnext;
      size_t h = bin_hash(b->rid, b->slot, cap);
      b->hnext = bins[h];
      bins[h] = b;
    }
  free(c->bins);
  c->bins = bins;
  c->bcap = cap;
  return 0;
}

static cbin *bin_get(cache *c, uint32_t rid, uint32_t slot) {
  cbin *b = bin_find(c, rid, slot);
  if (b) return b;
  if (c->bcount >= c->bcap && bins_grow(c)) return NULL;
  b = calloc(1, sizeof *b);
  if (!b) return NULL;
  *b = (cbin){.rid = rid, .slot = slot, .grant = c->cfg.first_grant,
              .idle_room = 2 * (ptrdiff_t)c->cfg.first_grant};
  for (uint32_t at = 0; at + slot <= AH_SLAB_SIZE; at += slot) /* every slot's start */
    b->all |= 1ull << (at >> AH_SLOT_ALIGN_SHIFT);
  size_t h = bin_hash(rid, slot, c->bcap);
  b->hnext = c->bins[h];
  c->bins[h] = b;
  c->bcount++;
  return b;
}

/* ---- life cycle ---- */

int cache_init(cache *c, const cache_backend *be, const cache_config *cfg) {
  cache_config k = cfg ? *cfg : cache_config_default();
  if (!be || !be->lease || !be->unlease || k.first_grant < 1 || k.max_grant < k.first_grant ||
      k.max_grant > 4096 || k.max_batch < 1)
    return EINVAL;
  *c = (cache){.be = *be, .cfg = k, .tmask = 63, .bcap = 16, .idle_room = k.max_idle};
  c->tab = calloc(c->tmask + 1, sizeof *c->tab);
  c->bins = calloc(c->bcap, sizeof *c->bins);
  if (!c->tab || !c->bins) {
    cache_fini(c);
    return ENOMEM;
  }
  return 0;
}

int cache_create(cache **out, const cache_backend *be, const cache_config *cfg) {
  cache *c = malloc(sizeof *c);
  if (!c) return ENOMEM;
  int rc = cache_init(c, be, cfg);
  if (rc) {
    free(c);
    return rc;
  }
  *out = c;
  return 0;
}

/* Forget every slab and bin (after they were handed back, or at destroy). */
static void forget_all(cache *c) {
  memset(c->tab, 0, (c->tmask + 1) * sizeof *c->tab);
  records_reset(c);
  for (size_t i = 0; i < c->bcap; i++)
    for (cbin *b = c->bins[i], *next; b; b = next) {
      next = b->hnext;
      free(b);
    }
  memset(c->bins, 0, c->bcap * sizeof *c->bins);
  c->tcount = c->bcount = 0;
  c->idle_room = c->cfg.max_idle;
  memset(c->direct, 0, sizeof c->direct);
}

void cache_fini(cache *c) {
  if (c->tab && c->bins) forget_all(c);
  free(c->tab);
  free(c->bins);
  c->tab = NULL;
  c->bins = NULL;
  for (struct record_block *b = c->blocks, *next; b; b = next) {
    next = b->next;
    free(b);
  }
  c->blocks = NULL;
  c->spare = NULL;
  free(c->room);
  c->room = NULL;
  c->room_cap = 0;
}

void cache_destroy(cache *c) {
  if (!c) return;
  cache_fini(c);
  free(c);
}

/* ---- leasing ---- */

/* Take slabs[0..n) into bin b. Pushed last to first, so that they are used in the order of
 * the grant (ascending addresses: a list built from them walks memory forwards, which the
 * hardware prefetchers follow). */
static void adopt(cache *c, cbin *b, int32_t sched, const uintptr_t *slabs, uint32_t n) {
  for (uint32_t i = n; i-- > 0;) {
    cslab *s = record_new(c);
    if (!s) { /* keep what fits; the rest goes straight back */
      uint64_t pairs[2] = {slabs[i], 0}, dropped;
      c->be.unlease(c->be.ctx, sched, pairs, 1, &dropped);
      continue;
    }
    *s = (cslab){.addr = slabs[i], .free = b->all, .slot = b->slot, .bin = b, .sched = sched};
    index_put(c->tab, c->tmask, s);
    c->tcount++;
    cache_avail_push(b, s);
    b->nslabs++;
    b->idle_room--;
    c->idle_room--;
  }
}

/* Give back slabs the cache cannot keep (a grant it cannot use). */
static void give_back_unused(cache *c, int32_t sched, const uintptr_t *slabs, uint32_t n) {
  uint64_t *pairs = calloc(2 * (size_t)n, sizeof *pairs), dropped;
  if (!pairs) return; /* they stay leased until the scheduler's shutdown check reports them */
  for (uint32_t i = 0; i < n; i++) pairs[2 * i] = slabs[i];
  c->be.unlease(c->be.ctx, sched, pairs, n, &dropped);
  free(pairs);
}

/* One lease of want (>= min) slabs into the bin of (rid, slot of size). */
static int lease_into(cache *c, uint32_t rid, size_t size, uint32_t want, uint32_t min,
                      cbin **out) {
  if (index_reserve(c, want)) return ENOMEM;
  uintptr_t *slabs = malloc(want * sizeof *slabs);
  if (!slabs) return ENOMEM;
  int32_t sched = -1;
  uint32_t slot = 0, got = 0;
  int rc = c->be.lease(c->be.ctx, rid, size, want, min, &sched, &slot, slabs, &got);
  if (rc == ENOMEM) { /* our own idle slabs may be what the scheduler is missing */
    cache_trim(c);
    rc = c->be.lease(c->be.ctx, rid, size, min, min, &sched, &slot, slabs, &got);
  }
  if (rc) {
    free(slabs);
    return rc;
  }
  cbin *b = NULL;
  if (got < min || got > want || slot != ah_round_up(size, AH_SLOT_ALIGN))
    rc = EPROTO;
  else if (!(b = bin_get(c, rid, slot)))
    rc = ENOMEM;
  if (rc) {
    give_back_unused(c, sched, slabs, got <= want ? got : want);
    free(slabs);
    return rc;
  }
  if (c->be.leased) c->be.leased(c->be.ctx, slabs, got); /* a grant kept: map it */
  c->st.leases++;
  c->st.leased_slabs += got;
  adopt(c, b, sched, slabs, got);
  free(slabs);
  *out = b;
  return 0;
}

/* x4 after each lease: a bin that keeps allocating reaches max_grant in a few round trips. */
static void grow_grant(const cache *c, cbin *b) {
  uint32_t grant = 4 * b->grant < c->cfg.max_grant ? 4 * b->grant : c->cfg.max_grant;
  b->idle_room += 2 * ((ptrdiff_t)grant - (ptrdiff_t)b->grant); /* (its bound moves with it) */
  b->grant = grant;
}

/* Near exhaustion a lease is refused (ENOMEM: no empty slab anywhere) while the scheduler can
 * still serve the allocation from a partial slab (api.c falls back to MSG_ALLOC). Asking for a
 * lease before every such allocation made the cache three round trips where no cache is one
 * (the lease, the lease again after cache_trim, the allocation). So a bin whose lease was
 * refused leaves its next `skip` allocations to the scheduler at once (ENOMEM, no message),
 * 1, 2, 4 ... up to LEASE_BACKOFF_MAX after each refusal in a row; a lease granted ends it. */
#define LEASE_BACKOFF_MAX 4096u

static void lease_refused(cache *c, cbin *b, uint32_t rid, size_t size) {
  if (!b && !(b = bin_get(c, rid, (uint32_t)ah_round_up(size, AH_SLOT_ALIGN)))) return;
  b->backoff = b->backoff ? (2 * b->backoff < LEASE_BACKOFF_MAX ? 2 * b->backoff : LEASE_BACKOFF_MAX) : 1;
  b->skip = b->backoff;
  c->st.refused++;
}

/* A bin for (rid, size) with at least one free slot, leasing more as the bin's grant says. */
static int refill(cache *c, uint32_t rid, size_t size, cbin **bp) {
  cbin *b = *bp;
  if (b && b->skip) { /* backing off after refused leases */
    b->skip--;
    c->st.skipped++;
    return ENOMEM;
  }
  uint32_t want = b ? b->grant : c->cfg.first_grant;
  int rc = lease_into(c, rid, size, want, 1, &b);
  if (rc == ENOMEM) lease_refused(c, *bp, rid, size);
  if (rc) return rc;
  b->backoff = 0;
  grow_grant(c, b);
  *bp = b;
  return 0;
}

/* cache_alloc when the slot size's direct bin is not rid's or has no free slot: find the bin,
 * lease if needed. (Not inlined: cache_alloc's own path then saves no registers.) */
static __attribute__((noinline)) int alloc_slow(cache *c, size_t size, uint32_t rid,
                                                uintptr_t *addr) {
  uint32_t slot = (uint32_t)ah_round_up(size, AH_SLOT_ALIGN);
  cbin **d = &c->direct[slot >> AH_SLOT_ALIGN_SHIFT], *b = *d;
  if (!b || b->rid != rid) b = bin_find(c, rid, slot); /* (a mix of sizes: no hash per call) */
  if (!b || !b->avail) {
    int rc = refill(c, rid, size, &b);
    if (rc) return rc;
  }
  *d = b;
  *addr = cache_take_slot(c, b);
  c->st.allocs++;
  return 0;
}

int cache_alloc(cache *c, size_t size, uint32_t rid, uintptr_t *addr) {
  if (cache_alloc_hit(c, size, rid, addr)) return 0;
  if (size - 1 >= AH_SLAB_SIZE) return ENOTSUP; /* 0 (wraps) or over one slab */
  return alloc_slow(c, size, rid, addr);
}

/* The most objects one cache_balloc serves (more go to the scheduler as one request). */
#define CACHE_BALLOC_MAX ((size_t)1 << 20)

/* The free slots of bin b, counted until there are `enough` (b->avail's slabs, newest first). */
static size_t free_slots(const cbin *b, size_t enough) {
  size_t k = 0;
  for (const cslab *s = b->avail; s && k < enough; s = s->next) k += (size_t)__builtin_popcountll(s->free);
  return k;
}

int cache_balloc(cache *c, size_t size, uint32_t rid, size_t n, uintptr_t *addrs) {
  if (size == 0 || size > AH_SLAB_SIZE || n == 0 || n > CACHE_BALLOC_MAX) return ENOTSUP;
  uint32_t slot = (uint32_t)ah_round_up(size, AH_SLOT_ALIGN);
  size_t per_slab = AH_SLAB_SIZE / slot;
  cbin *b = bin_find(c, rid, slot);
  for (size_t have; (have = b ? free_slots(b, n) : 0) < n;) {
    size_t need = (n - have + per_slab - 1) / per_slab;
    uint32_t min = need > 4096 ? 4096 : (uint32_t)need;
    uint32_t want = b && b->grant > min ? b->grant : min;
    int rc = lease_into(c, rid, size, want, min, &b);
    if (rc) return rc;
    grow_grant(c, b); /* a bin filled batch after batch leases ahead, not a lease per batch */
  }
  c->direct[slot >> AH_SLOT_ALIGN_SHIFT] = b;
  for (size_t k = 0; k < n; k++) addrs[k] = cache_take_slot(c, b);
  c->st.allocs += n;
  return 0;
}

/* ---- freeing ---- */

/* Forget one slab the scheduler took back (on its bin's available list iff it has a free slot). */
static void forget_slab(cache *c, cslab *s) {
  cbin *b = s->bin;
  if (s->free) cache_avail_remove(b, s);
  b->nslabs--;
  if (s->free == b->all) {
    b->idle_room++;
    c->idle_room++;
  }
  index_remove(c, s);
  record_free(c, s);
}

typedef struct keyed_slab {
  uint64_t key;
  cslab *s;
} keyed_slab;

typedef struct hand_back {
  cslab **v;      /* the slabs */
  uint64_t *pairs; /* a request's {slab, live slots} */
  keyed_slab *k;  /* the sort's keys and their scratch (2 per slab) */
} hand_back;

/* Scratch for handing back n slabs in requests of at most `batch`, from the cache's room
 * (kept from one hand-back to the next: a flush of thousands of slabs faults no fresh memory
 * in); 0 or ENOMEM. */
static int hand_back_room(cache *c, size_t n, size_t batch, hand_back *h) {
  size_t pairs = 2 * (n < batch ? n : batch);
  size_t bytes = n * sizeof *h->v + pairs * sizeof *h->pairs + 2 * n * sizeof *h->k;
  if (bytes > c->room_cap) {
    void *r = malloc(bytes);
    if (!r) return ENOMEM;
    free(c->room);
    c->room = r, c->room_cap = bytes;
  }
  h->k = c->room; /* (the widest first: each part stays aligned) */
  h->v = (cslab **)(h->k + 2 * n);
  h->pairs = (uint64_t *)(h->v + n);
  return 0;
}

static void sort_for_unlease(cslab **v, size_t n, keyed_slab *k);

/* Hand back up to max fully free slabs of bin `only` (every bin when it is NULL), sorted as a
 * flush sorts them. */
static int return_idle(cache *c, cbin *only, size_t max) {
  size_t n = 0, idle = cache_nidle(c), cap = idle < max ? idle : max;
  if (cap == 0) return 0;
  hand_back h;
  if (hand_back_room(c, cap, c->cfg.max_batch, &h)) return ENOMEM;
  cslab **v = h.v;
  for (size_t i = 0; i < c->bcap && n < cap; i++)
    for (cbin *b = c->bins[i]; b && n < cap; b = b->hnext) {
      if (only && b != only) continue;
      for (cslab *s = b->avail; s && n < cap; s = s->next)
        if (s->free == b->all) v[n++] = s;
    }
  sort_for_unlease(v, n, h.k);
  int rc = 0;
  uint64_t *pairs = h.pairs;
  for (size_t i = 0; !rc && i < n;) { /* one request per run of slabs of one scheduler */
    size_t j = i, k = 0;
    while (j < n && v[j]->sched == v[i]->sched && k < c->cfg.max_batch) {
      pairs[2 * k] = v[j]->addr;
      pairs[2 * k + 1] = 0;
      j++, k++;
    }
    uint64_t dropped = 0;
    rc = c->be.unlease(c->be.ctx, v[i]->sched, pairs, (uint32_t)k, &dropped);
    c->st.unleases++;
    for (; !rc && i < j; i++) { /* handed back: forget them */
      forget_slab(c, v[i]);
      c->st.returned_slabs++;
    }
  }
  return rc;
}

int cache_trim(cache *c) { return return_idle(c, NULL, cache_nidle(c)); }

void cache_return_surplus(cache *c, cbin *b) {
  /* A bin keeps one lease's worth idle; the cache at most max_idle in all. */
  if (b->idle_room < 0) return_idle(c, b, bin_nidle(b) - b->grant);
  if (c->idle_room < 0) return_idle(c, NULL, cache_nidle(c) - c->cfg.max_idle / 2);
}

int cache_free(cache *c, uintptr_t addr) { return cache_free_here(c, addr); }

int cache_lookup(const cache *c, uintptr_t addr, uint32_t *rid, uintptr_t *start, size_t *size,
                 int32_t *sched) {
  const cslab *s = cache_index_find(c, addr);
  if (!s) return ESRCH;
  const cbin *b = s->bin;
  uintptr_t at = (addr - s->addr) / s->slot * s->slot; /* the start of the slot holding addr */
  uint64_t bit = 1ull << (at >> AH_SLOT_ALIGN_SHIFT);
  if (!(b->all & ~s->free & bit)) return EINVAL; /* past the last slot, or not handed out */
  if (rid) *rid = b->rid;
  if (start) *start = s->addr + at;
  if (size) *size = s->slot;
  if (sched) *sched = s->sched;
  return 0;
}

/* ---- handing everything back ---- */

/* s's live slots as a scheduler counts them: bit i for the i-th slot (cache_hot.h's bitmaps
 * count 64-B units). */
static uint64_t live_slots(const cslab *s) {
  uint64_t live = s->bin->all & ~s->free, out = 0;
  unsigned units = s->slot >> AH_SLOT_ALIGN_SHIFT;
  if (units == 1) return live; /* 64-B slots: the same bits */
  for (unsigned i = 0, u = 0; u < 64; i++, u += units) out |= (live >> u & 1) << i;
  return out;
}

static int cmp_by_sched(const void *a, const void *b) {
  const cslab *x = *(cslab *const *)a, *y = *(cslab *const *)b;
  if (x->sched != y->sched) return (x->sched > y->sched) - (x->sched < y->sched);
  return (x->addr > y->addr) - (x->addr < y->addr);
}

#define UNLEASE_RADIX_BITS 11

/* k[0..n) by key, into k or k + n (returned): an LSD radix sort over the key's `bits` low bits,
 * the other half as scratch. */
static keyed_slab *radix_sort_slabs(keyed_slab *k, size_t n, int bits) {
  enum { DIGITS = 1 << UNLEASE_RADIX_BITS };
  size_t count[DIGITS];
  keyed_slab *src = k, *dst = k + n;
  for (int shift = 0; shift < bits; shift += UNLEASE_RADIX_BITS) {
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++) count[(src[i].key >> shift) & (DIGITS - 1)]++;
    for (size_t d = 0, sum = 0; d < DIGITS; d++) {
      size_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++) dst[count[(src[i].key >> shift) & (DIGITS - 1)]++] = src[i];
    keyed_slab *t = src;
    src = dst, dst = t;
  }
  return src;
}

/* v[0..n) by scheduler, then address: one unlease a scheduler, its slabs ascending (which the
 * scheduler checks without a sort: src/region/lease.c). A radix sort of keys in k (2n of them):
 * the slab's number from the lowest, and the scheduler's from the lowest just above the bits
 * those take, so that the sort passes over only the bits the keys use (two passes for the
 * slabs of a few hundred MiB of one scheduler); qsort where that is over 64 bits. A flush of
 * 40,000 slabs spent most of its time in qsort's comparisons. */
static void sort_for_unlease(cslab **v, size_t n, keyed_slab *k) {
  if (n < 2) return;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  int32_t smin = INT32_MAX, smax = INT32_MIN;
  for (size_t i = 0; i < n; i++) {
    lo = v[i]->addr < lo ? v[i]->addr : lo;
    hi = v[i]->addr > hi ? v[i]->addr : hi;
    smin = v[i]->sched < smin ? v[i]->sched : smin;
    smax = v[i]->sched > smax ? v[i]->sched : smax;
  }
  uint64_t span = (uint64_t)(hi - lo) >> AH_SLAB_SHIFT, scheds = (uint64_t)((int64_t)smax - smin);
  int slab_bits = span ? 64 - __builtin_clzll(span) : 0;
  int sched_bits = scheds ? 64 - __builtin_clzll(scheds) : 0;
  if (slab_bits + sched_bits > 64) {
    qsort(v, n, sizeof *v, cmp_by_sched);
    return;
  }
  uint64_t any = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t s = (uint64_t)((int64_t)v[i]->sched - smin);
    uint64_t slab = (uint64_t)(v[i]->addr - lo) >> AH_SLAB_SHIFT;
    k[i].key = (slab_bits < 64 ? s << slab_bits : 0) | slab;
    k[i].s = v[i];
    any |= k[i].key;
  }
  keyed_slab *sorted = radix_sort_slabs(k, n, any ? 64 - __builtin_clzll(any) : 0);
  for (size_t i = 0; i < n; i++) v[i] = sorted[i].s;
}

int cache_flush_counted(cache *c, uint64_t *returned, uint64_t *dropped) {
  uint64_t slabs = c->st.returned_slabs, lost = c->st.dropped;
  int rc = cache_flush(c);
  *returned += c->st.returned_slabs - slabs;
  *dropped += c->st.dropped - lost;
  return rc;
}

int cache_flush(cache *c) {
  c->st.flushes++;
  if (c->tcount == 0) return 0;
  size_t n = 0;
  hand_back h;
  if (hand_back_room(c, c->tcount, c->cfg.max_batch, &h))
    return ENOMEM; /* keep everything: a later flush can still hand it back */
  cslab **v = h.v;
  uint64_t *pairs = h.pairs;
  for (size_t i = 0; i <= c->tmask; i++)
    if (c->tab[i]) v[n++] = c->tab[i];
  sort_for_unlease(v, n, h.k);
  int first_error = 0;
  size_t back = 0, kept = 0; /* v[0..back): taken back; kept: batches refused for memory */
  for (size_t i = 0; i < n;) { /* one request per scheduler (and per max_batch slabs) */
    size_t k = 0, from = i;
    int32_t sched = v[i]->sched;
    for (; i < n && v[i]->sched == sched && k < c->cfg.max_batch; i++, k++) {
      pairs[2 * k] = v[i]->addr;
      pairs[2 * k + 1] = live_slots(v[i]);
    }
    uint64_t dropped = 0;
    int rc = c->be.unlease(c->be.ctx, sched, pairs, (uint32_t)k, &dropped);
    c->st.unleases++;
    if (rc && !first_error) first_error = rc;
    if (rc == ENOMEM) { /* nothing taken back: keep them for a later flush */
      kept += k;
      continue;
    }
    while (from < i) v[back++] = v[from++];
    c->st.returned_slabs += k;
    c->st.dropped += dropped;
  }
  if (kept == 0)
    forget_all(c);
  else
    for (size_t i = 0; i < back; i++) forget_slab(c, v[i]);
  return first_error;
}

void cache_get_stats(const cache *c, cache_stats *st) {
  *st = c->st;
  st->slabs = c->tcount;
  st->idle_slabs = cache_nidle(c);
}

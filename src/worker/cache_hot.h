/* cache_hot.h: the allocation cache's records (struct cache, its bins and its slab records)
 * and its two hot paths as inline functions: an allocation from the slot size's direct bin
 * (cache_alloc_hit) and a free of a slot of a leased slab (cache_free_here). cache.c builds
 * the rest of cache.h on them; the per-thread caches (tcache.c) embed their cache and inline
 * these (tcache_hot.h), and so do sys_alloc and sys_free (api.c) for the rank's cache, so
 * that a cached allocation or free is one function from the API down to the slab's bitmap
 * (docs/DESIGN.md, "Threads"). Only cache.c, tcache.c and api.c include it (directly or
 * through tcache_hot.h): everyone else goes through cache.h. */
#ifndef AH_WORKER_CACHE_HOT_H
#define AH_WORKER_CACHE_HOT_H

#include <errno.h>
#include <stdbool.h>

#include "worker/cache.h"

/* The bitmaps of a slab count in units of 64 B (AH_SLOT_ALIGN), not in slots: bit k stands for
 * the slot that starts k x 64 bytes into the slab, and only slots' starts have bits. So a slot's
 * bit is its offset shifted (no division on a free, no multiplication on an allocation), and a
 * pointer is a slot's start exactly when its offset is a multiple of 64 whose bit is in the
 * bin's `all`. What goes to a scheduler counts in slots (cache.c converts). */

/* One leased slab (records come in blocks: cache.c). */
typedef struct cslab {
  uint64_t free;             /* bit k: the slot at k x 64 is in the cache, not handed out */
  uintptr_t addr;
  uint32_t slot;             /* its bin's */
  int32_t sched;             /* the scheduler that leased it */
  struct cbin *bin;          /* (its bitmap of slots' starts: bin->all) */
  struct cslab *prev, *next; /* the bin's list of slabs with free slots */
} cslab;

/* The slabs of one region and slot size. */
typedef struct cbin {
  uint32_t rid, slot;
  uint32_t grant;            /* slabs the next lease asks for */
  uint32_t backoff, skip;    /* after refused leases: allocations left to the scheduler */
  uint64_t all;              /* a full slab's bitmap: every slot's start (in 64-B units) */
  cslab *avail;              /* slabs with a free slot */
  size_t nslabs;             /* slabs held */
  ptrdiff_t idle_room;       /* 2 x grant less the fully free slabs held (bin_nidle) */
  struct cbin *hnext;        /* bin hash chain */
} cbin;

/* Slot sizes are 64 .. 4096 in steps of 64: one direct entry each (entry 0 unused). */
#define DIRECT_SLOTS (AH_SLAB_SIZE / AH_SLOT_ALIGN + 1)

struct cache {
  cache_backend be;
  cache_config cfg;
  cslab **tab;               /* open addressing by slab number, linear probing */
  size_t tmask, tcount;      /* the table's size less one (a power of two less one) */
  cbin **bins;               /* chained by (rid, slot) */
  size_t bcap, bcount;
  cbin *direct[DIRECT_SLOTS]; /* by slot / 64: the bin last used for that slot size, any region */
  ptrdiff_t idle_room;       /* max_idle less the fully free slabs of all bins (cache_nidle) */
  cslab *spare;              /* slab records not in use (linked by next) */
  struct record_block *blocks; /* every block of slab records, freed by cache_fini */
  void *room;                /* the hand-backs' scratch, kept for the next (cache.c) */
  size_t room_cap;
  cache_stats st;
};

/* A cache in memory the caller owns (a thread's cache record embeds one): cache_create's
 * checks and errors; cache_fini frees what cache_init allocated (nothing handed back). */
int cache_init(cache *c, const cache_backend *be, const cache_config *cfg);
void cache_fini(cache *c);

/* Fully free slabs are counted as room left under their bound: a bin may keep twice its grant
 * idle, the cache max_idle in all. A free that empties a slab takes one from both rooms, and
 * hands the surplus back when either is below zero: one sign test on the free's path. */
static inline size_t bin_nidle(const cbin *b) {
  return (size_t)(2 * (ptrdiff_t)b->grant - b->idle_room);
}
static inline size_t cache_nidle(const cache *c) {
  return (size_t)((ptrdiff_t)c->cfg.max_idle - c->idle_room);
}

/* A slab of bin b just became fully free, and the bin holds more than twice its grant fully
 * free, or the cache more than max_idle: the surplus goes back (cache.c). */
void cache_return_surplus(cache *c, cbin *b);

/* ---- the slab index ---- */

static inline size_t cache_slab_hash(uintptr_t addr, size_t mask) {
  return (size_t)(((addr >> AH_SLAB_SHIFT) * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

static inline cslab *cache_index_find(const cache *c, uintptr_t addr) {
  uintptr_t slab = addr & ~(uintptr_t)(AH_SLAB_SIZE - 1);
  for (size_t i = cache_slab_hash(slab, c->tmask);; i = (i + 1) & c->tmask) {
    cslab *s = c->tab[i];
    if (!s || s->addr == slab) return s;
  }
}

/* ---- a bin's list of slabs with free slots ---- */

static inline void cache_avail_push(cbin *b, cslab *s) {
  s->prev = NULL;
  s->next = b->avail;
  if (b->avail) b->avail->prev = s;
  b->avail = s;
}

static inline void cache_avail_remove(cbin *b, cslab *s) {
  if (s->prev) s->prev->next = s->next; else b->avail = s->next;
  if (s->next) s->next->prev = s->prev;
  s->prev = s->next = NULL;
}

/* ---- the hot paths ---- */

/* Hand out one slot of the bin's first available slab. */
static inline uintptr_t cache_take_slot(cache *c, cbin *b) {
  cslab *s = b->avail;
  uint64_t f = s->free;
  ptrdiff_t was_idle = f == b->all; /* counted without a branch: with a mix of sizes it is */
  b->idle_room += was_idle;         /* taken at random, and mispredicted half the time */
  c->idle_room += was_idle;
  uintptr_t k = (uintptr_t)__builtin_ctzll(f);
  s->free = f &= f - 1;
  if (!f) cache_avail_remove(b, s);
  return s->addr + (k << AH_SLOT_ALIGN_SHIFT);
}

/* An allocation from the direct bin of size's slot size, when that bin is rid's and has a free
 * slot: true with *addr set; false otherwise, nothing changed (cache_alloc does the rest). */
static inline bool cache_alloc_hit(cache *c, size_t size, uint32_t rid, uintptr_t *addr) {
  if (size - 1 >= AH_SLAB_SIZE) return false; /* 0 (wraps) or over one slab */
  cbin *b = c->direct[(size + AH_SLOT_ALIGN - 1) >> AH_SLOT_ALIGN_SHIFT];
  if (__builtin_expect(!b || b->rid != rid || !b->avail, 0)) return false;
  *addr = cache_take_slot(c, b);
  c->st.allocs++;
  return true;
}

/* cache_free (cache.h's errors): the slot goes back to its slab's bitmap. */
static inline int cache_free_here(cache *c, uintptr_t addr) {
  cslab *s = cache_index_find(c, addr);
  if (!s) return ESRCH;
  uintptr_t off = addr & (AH_SLAB_SIZE - 1); /* (s is addr's slab): 64 units */
  uint64_t bit = 1ull << (off >> AH_SLOT_ALIGN_SHIFT), f = s->free;
  cbin *b = s->bin;
  if ((off & (AH_SLOT_ALIGN - 1)) || !(b->all & ~f & bit))
    return EINVAL; /* no slot's start (interior, or past the last slot), or not handed out */
  if (!f) cache_avail_push(b, s);
  s->free = f |= bit;
  c->st.frees++;
  ptrdiff_t idle = f == b->all; /* (as in cache_take_slot: no branch on it) */
  ptrdiff_t room = (b->idle_room -= idle) | (c->idle_room -= idle);
  if (__builtin_expect(room < 0, 0) && idle) /* (only a free that empties a slab returns one) */
    cache_return_surplus(c, b);
  return 0;
}

#endif /* AH_WORKER_CACHE_HOT_H */

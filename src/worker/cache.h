/* cache.h: a worker's allocation cache. sys_alloc / sys_free / sys_balloc of objects up to one
 * slab (4 KiB) are served inside the worker, with no message, from whole slabs that the
 * schedulers lease to it (region_lease): the cache asks for slabs of one region and slot size
 * at a time, a few at first and geometrically more while the worker keeps allocating there;
 * it hands their slots out and takes frees of them back; fully free slabs beyond a bound go
 * back to their scheduler in batches. cache_flush hands every slab back with the bitmap of its
 * live slots, which then become ordinary objects known to the schedulers.
 *
 * Its slabs' records come in blocks and its hand-backs sort in scratch it keeps (cache.c), so
 * a flush of many slabs costs no malloc a slab and faults no fresh memory in; both are freed
 * by cache_destroy, and hold about 100 bytes per slab of the most the cache ever held.
 *
 * The cache does not talk to anyone itself: a backend (MPI in cache_backend.c, a fake in the
 * unit test) carries its two requests. Not thread-safe: one cache per worker below
 * MPI_THREAD_MULTIPLE, one per thread at MULTIPLE (tcache.h guards each for its owner and the
 * flushers).
 *
 * Errors: EINVAL (a pointer inside a leased slab that is not a live slot's start: interior,
 * double free, never handed out), ESRCH (the pointer is not in any slab of this cache: ask the
 * scheduler), ENOTSUP (the request is not one the cache serves: size 0 or over one slab, or
 * too many objects), and whatever the backend returns (ENOENT for an unknown region, ENOMEM). */
#ifndef AH_WORKER_CACHE_H
#define AH_WORKER_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "common/types.h"

typedef struct cache cache;

typedef struct cache_backend {
  /* Lease want (>= min) empty slabs of the slot size holding size, in region rid: their
   * addresses in slabs[0..*got), the slot size, and the scheduler that granted them. */
  int (*lease)(void *ctx, uint32_t rid, size_t size, uint32_t want, uint32_t min,
               int32_t *sched, uint32_t *slot, uintptr_t *slabs, uint32_t *got);
  /* Hand n slabs back to scheduler sched: pairs {slab address, live slots bitmap}; *dropped
   * counts live slots of regions freed meanwhile. */
  int (*unlease)(void *ctx, int32_t sched, const uint64_t *pairs, uint32_t n, uint64_t *dropped);
  /* Optional: the n slabs a lease just brought, before the cache hands out any of their slots,
   * called outside whatever lock lease takes (the worker maps a big lease's pages here, so
   * that other threads do not wait for it). */
  void (*leased)(void *ctx, const uintptr_t *slabs, uint32_t n);
  void *ctx;
} cache_backend;

typedef struct cache_config {
  uint32_t first_grant; /* slabs of a region's and size's first lease */
  uint32_t max_grant;   /* the most slabs one lease of cache_alloc asks for (x4 up to it) */
  uint32_t max_idle;    /* fully free slabs the whole cache may hold before it returns them */
  uint32_t max_batch;   /* slabs in one unlease request */
} cache_config;

typedef struct cache_stats {
  uint64_t allocs, frees;          /* served here */
  uint64_t leases, leased_slabs;   /* lease requests and the slabs they brought */
  uint64_t unleases, returned_slabs; /* unlease requests and the slabs they took back */
  uint64_t flushes, dropped;       /* cache_flush calls; live slots lost to regions freed */
  uint64_t slabs, idle_slabs;      /* held now, and of those fully free */
  uint64_t refused, skipped;       /* leases refused (ENOMEM), and allocations then left to the
                                    * scheduler without asking (cache_alloc's back-off) */
} cache_stats;

/* Defaults: first lease 2 slabs, x4 each lease up to 1024 (4 MiB), 2048 idle slabs (8 MiB:
 * two of the largest leases, so that a lease just taken by one busy bin is not handed back by
 * the next free), 65536 slabs a batch. A scheduler records a lease of many slabs as a few
 * class runs (src/slab/classes.c), so a large grant costs it little; the worker maps a large
 * lease's pages at once (cache_backend.c), so a bin that stops right after a lease holds up to
 * 4 MiB it does not use, after having used at least 2.7 MiB to earn that grant. */
cache_config cache_config_default(void);
int cache_create(cache **out, const cache_backend *be, const cache_config *cfg);
/* Destroy without handing anything back (flush first). */
void cache_destroy(cache *c);

/* ENOMEM: no slab could be leased (the caller asks the scheduler, which may still have a slot
 * in a partial slab); after a refused lease the next allocations of that region and size
 * answer ENOMEM at once, without asking (1, 2, 4 ... 4096 of them after each refusal in a row,
 * until a lease is granted): near exhaustion the cache costs what no cache costs. */
int cache_alloc(cache *c, size_t size, uint32_t rid, uintptr_t *addr);
/* n objects of one size, all or nothing (on failure the slabs leased stay in the cache). */
int cache_balloc(cache *c, size_t size, uint32_t rid, size_t n, uintptr_t *addrs);
int cache_free(cache *c, uintptr_t addr);
/* The live object containing addr (any interior address): region, start, slot size, and
 * the scheduler that leased its slab. ESRCH when addr is in no slab of this cache. */
int cache_lookup(const cache *c, uintptr_t addr, uint32_t *rid, uintptr_t *start, size_t *size,
                 int32_t *sched);
/* Hand every slab back (live slots become the schedulers' objects): 0, or the first error of
 * the backend. A batch a scheduler refused with ENOMEM (no metadata to take it: nothing taken)
 * stays in the cache for a later flush; any other error empties the cache as success does. */
int cache_flush(cache *c);
/* cache_flush, adding the slabs it handed back and the live slots it dropped (regions freed
 * by another worker) to *returned and *dropped. */
int cache_flush_counted(cache *c, uint64_t *returned, uint64_t *dropped);
/* Hand back every fully free slab. */
int cache_trim(cache *c);
void cache_get_stats(const cache *c, cache_stats *st);

#endif /* AH_WORKER_CACHE_H */

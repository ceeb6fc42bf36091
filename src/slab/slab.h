/* slab.h: slab pools (Myrmics section 3), the lowest allocator layer.
 *
 * A pool hands out objects from address ranges given to it. Sizes are rounded up to 64-B
 * slots; objects of one slot size share 4 KiB slabs; an object larger than a slab takes a
 * run of whole slabs under one descriptor. Three tries index the pool: Used (slabs in use,
 * by address), Partial (slot size -> class record with its partial and empty slabs) and Free
 * (free slab ranges, by address, adjacent ranges merged).
 *
 * An ordinary pool never reads or writes the memory it manages: addresses are numbers to it,
 * and its metadata lives in another pool (the meta pool). A self-hosted pool (the kernel pool
 * of section 3.3) keeps its metadata, and its own struct, inside the memory it manages; it
 * bootstraps itself and never recurses without bound.
 *
 * Errors are returned as errno codes: EINVAL (bad argument, foreign or freed address),
 * ENOMEM (no address space or no metadata memory). A failed call changes nothing.
 */
#ifndef AH_SLAB_H
#define AH_SLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct slab_pool slab_pool;

/* Called when the pool has no free slabs for a request of min_bytes: give it a range
 * (slab-aligned, at least min_bytes) through *addr and *len and return 0, or return ENOMEM. */
typedef int (*slab_grow_fn)(void *ctx, size_t min_bytes, uintptr_t *addr, size_t *len);
/* Receives one address range (pack, destroy). Return non-zero to stop early. */
typedef int (*slab_range_fn)(void *ctx, uintptr_t addr, size_t len);

typedef struct slab_config {
  uintptr_t base;       /* lowest address the pool may ever manage (slab-aligned) */
  size_t span;          /* size of the address window starting at base */
  unsigned empty_keep;  /* empty slabs a class keeps before returning them to Free */
  unsigned prealloc;    /* slabs carved at once for a class that needed a slab before */
  bool unsized;         /* no index of the Free trie by length: a pool whose objects are all of
                         * one slab or less (a region's metadata) never looks for a long run,
                         * and the index's nodes would come and go with every region */
  slab_grow_fn grow;    /* optional: more address space on demand */
  void *grow_ctx;
} slab_config;

typedef struct slab_stats {
  size_t full_slabs, partial_slabs, empty_slabs; /* slabs of size classes */
  size_t run_slabs, runs;                        /* large objects: slabs and objects */
  size_t free_slabs, free_ranges;                /* in the Free trie */
  size_t objects, object_bytes;                  /* live objects and their slot bytes */
  size_t classes;                                /* slot sizes in use */
  size_t leased_slabs;                           /* slabs leased whole to workers */
  size_t trie_nodes;                             /* nodes of the three tries */
  size_t max_depth;                              /* deepest re-entry seen (self-hosted) */
} slab_stats;

/* Defaults: the whole user address space (base 0, span 2^47), keep 1 empty slab per class,
 * preallocate 2 slabs for busy classes, no grow callback. */
slab_config slab_config_default(void);

/* An ordinary pool whose metadata (struct, descriptors, trie nodes) lives in meta. */
int slab_pool_create(slab_pool **out, const slab_config *cfg, slab_pool *meta);
/* A self-hosted pool over [mem, mem+len): slab-aligned, at least 8 slabs. The pool struct
 * sits in the first slab. cfg may be NULL; its base/span are ignored (the whole user space
 * is indexed so that grown chunks may lie anywhere). Free the memory after destroy. */
int slab_pool_create_self_hosted(slab_pool **out, void *mem, size_t len, const slab_config *cfg);
/* Destroy; range_fn (may be NULL) receives every slab range the pool held, used or free, in
 * address order and coalesced, so the caller can take the address space back. */
void slab_pool_destroy(slab_pool *p, slab_range_fn range_fn, void *ctx);

/* The whole pool against its invariants (check.c; Debug builds check it when a pool is
 * destroyed, tests whenever they like): 0, or EINVAL. */
int slab_pool_check(const slab_pool *p);

/* Give the pool [addr, addr+len): slab-aligned, inside base/span, overlapping nothing the
 * pool holds (EINVAL otherwise; ENOMEM if metadata memory ran out). */
int slab_add_range(slab_pool *p, uintptr_t addr, size_t len);
/* Take back up to max_slabs free slabs (one contiguous range, the highest), for a caller
 * that trims idle pools. ENOENT when the pool holds no free slab. */
int slab_take_free(slab_pool *p, size_t max_slabs, uintptr_t *addr, size_t *len);
/* Take n contiguous free slabs: the end of the smallest free range that holds them (one search
 * whatever the pool's fragmentation). ENOENT when no free range holds n. */
int slab_take_fit(slab_pool *p, size_t n, uintptr_t *addr);
/* The longest run of contiguous free slabs the pool holds (0: none). */
size_t slab_longest_free(const slab_pool *p);

/* Allocate size bytes (> 0): 0 with *addr set, or EINVAL / ENOMEM. */
int slab_alloc(slab_pool *p, size_t size, uintptr_t *addr);
/* Free an object by its start address: 0, or EINVAL for an address that is not the start of
 * a live object of this pool (foreign, interior, or already freed); ENOMEM (nothing changed)
 * when its slab is one of a lease's slabs handed back full together and the metadata to give
 * it a descriptor of its own could not be had. */
int slab_free(slab_pool *p, uintptr_t addr);
/* Slot size of the live object starting at addr (EINVAL otherwise). */
int slab_size_of(const slab_pool *p, uintptr_t addr, size_t *size);
/* The live object containing addr (any interior address): its start and slot size. */
int slab_lookup(const slab_pool *p, uintptr_t addr, uintptr_t *start, size_t *size);
/* For a self-hosted pool: memory from the pool itself, or NULL. */
void *slab_malloc(slab_pool *p, size_t size);

/* Leases (a worker's allocation cache, src/worker/cache.c). A lease is a whole empty slab of
 * one slot size handed to one worker (lessee), which allocates and frees its slots itself.
 * While leased, the slab is in use for the pool (never allocated from, trimmed or freed), but
 * its slots are unknown: slab_free, slab_lookup and slab_size_of answer EINVAL for them, and
 * slab_pack skips the slab (a cached slot is never moved). The lessee hands the slab back with
 * the bitmap of its slots that are live; they become ordinary objects.
 *
 * slab_lease: up to want (>= min >= 1) empty slabs of the slot size that holds `size` (at most
 * one slab), taken from the class's empty slabs or carved; their addresses in slabs[0..*got)
 * and the slot size in *slot. Once no run of slabs can be had (the free space is scattered:
 * near exhaustion), only a few more (16) are taken one by one, not want. ENOMEM (nothing
 * leased) when fewer than min can be had; EINVAL for a bad size or count. */
int slab_lease(slab_pool *p, size_t size, size_t want, size_t min, int32_t lessee,
               uintptr_t *slabs, size_t *got, uint32_t *slot);
/* Can `lessee` hand back the slab at addr with these live slots? 0, or EINVAL (not a slab
 * leased to lessee, or live names slots the slab does not have). Changes nothing. */
int slab_lease_check(const slab_pool *p, uintptr_t addr, int32_t lessee, uint64_t live);
/* The same for n pairs {slab address, live slots} (faster over the slabs of one lease). */
int slab_lease_check_many(const slab_pool *p, const uint64_t *pairs, size_t n, int32_t lessee);
/* Hand leased slabs back, in two steps: n pairs {slab address, live slots}, each slab once,
 * checked first (an unchecked bad return is an assertion). slab_lease_prepare splits what a
 * lease of many slabs needs split for them, the only step that needs metadata: 0, or ENOMEM
 * with nothing handed back (the slabs are all still leased). slab_lease_return_many then hands
 * them back and cannot fail. slab_lease_return: both steps for one slab. */
int slab_lease_prepare(slab_pool *p, const uint64_t *pairs, size_t n);
void slab_lease_return_many(slab_pool *p, const uint64_t *pairs, size_t n);
int slab_lease_return(slab_pool *p, uintptr_t addr, uint64_t live);
/* Every leased slab: fn(ctx, slab address, lessee, slot size). */
typedef void (*slab_lease_fn)(void *ctx, uintptr_t addr, int32_t lessee, uint32_t slot);
void slab_lease_walk(const slab_pool *p, slab_lease_fn fn, void *ctx);

/* Used slabs as coalesced (address, length) ranges in address order; returns the number of
 * ranges (also when range_fn stopped early, counting up to that range). */
size_t slab_pack(const slab_pool *p, slab_range_fn range_fn, void *ctx);
/* A number that changes whenever what slab_pack reports may have changed (a slab gaining its
 * first live slot or losing its last, leased or handed back, carved or released): equal
 * numbers mean an earlier slab_pack's ranges still hold. */
uint64_t slab_pack_version(const slab_pool *p);
void slab_get_stats(const slab_pool *p, slab_stats *st);
/* True when addr lies in any range the pool holds (used or free). */
bool slab_holds(const slab_pool *p, uintptr_t addr);

#endif /* AH_SLAB_H */

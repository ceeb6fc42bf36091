/* region.h: the local region layer of one scheduler (Myrmics section 4).
 *
 * A region is a growable set of objects with its own slab pool, so its objects are packed
 * together, apart from every other region. Regions form a tree under the root region (ID 0,
 * created by the layer when asked). Four tries: Used Ranges (slab range -> owning region),
 * Free Ranges (slab ranges any pool may get), Used Region IDs (ID -> region) and Free Region
 * IDs. Pointer -> region and ID -> region are one trie lookup each.
 *
 * A region's pool keeps its metadata in a private self-hosted pool whose memory comes from
 * the scheduler's kernel pool, so freeing a region costs time in the number of regions and
 * ranges involved, not in the number of objects.
 *
 * Watermarks: a new region starts with high_watermark free slabs. When the layer runs out of
 * free ranges it trims free slabs from other regions, round-robin from the last one visited,
 * down to low_watermark; only then does it call need_pages (or return ENOMEM when none is set:
 * the scheduler turns that into a request to its parent).
 *
 * Errors (errno codes; a failed call changes nothing): ENOENT unknown region, EINVAL bad
 * pointer (unknown, interior or already freed) or forbidden operation (freeing the root),
 * ENOSPC no region ID left, ENOMEM no address space or no metadata memory.
 */
#ifndef AH_REGION_H
#define AH_REGION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "slab/slab.h"

typedef uint32_t rid_t;
#define REGION_ROOT ((rid_t)0)
#define REGION_NONE ((rid_t)UINT32_MAX) /* realloc: stay in the object's region */

typedef struct region_layer region_layer;

typedef struct region_config {
  uintptr_t gas_base;    /* the GAS window this layer's addresses lie in */
  size_t gas_size;
  size_t high_watermark; /* free slabs a new region's pool starts with (and grows by) */
  size_t low_watermark;  /* free slabs trimming leaves in a region */
  size_t meta_chunk;     /* bytes of a region's first private metadata chunk */
  bool create_root;      /* create the root region (ID 0) */
  /* Called when no free range is left after trimming: add ranges with region_layer_add_range
   * and return 0, or return ENOMEM. Optional. */
  int (*need_pages)(void *ctx, region_layer *layer, size_t min_bytes);
  void *need_pages_ctx;
} region_config;

typedef struct region_layer_stats {
  size_t regions;
  size_t free_slabs, free_ranges; /* the Free Ranges trie */
  size_t used_ranges;             /* records in Used Ranges */
  uint64_t free_ids;              /* IDs in Free Region IDs */
  size_t trims, trimmed_slabs;    /* trimming passes that took slabs, and slabs taken */
  size_t need_pages_calls;
  size_t stranded_slabs;          /* slabs lost to metadata exhaustion mid-way (should be 0) */
  size_t stranded_ids;            /* region IDs lost the same way (should be 0) */
  size_t zombie_slabs;            /* leased slabs of freed regions not handed back yet */
  size_t quarantined_ids;         /* freed regions' IDs held until their zombies return */
} region_layer_stats;

typedef struct region_info {
  rid_t id, parent;
  int level_hint;
  size_t children;
  size_t ranges;      /* Used Ranges records */
  size_t meta_chunks; /* private metadata chunks */
  slab_stats pool;
} region_info;

/* Defaults: GAS at AH_GAS_DEFAULT_BASE/SIZE, high 16 slabs, low 2, 32 KiB metadata chunk,
 * root created. */
region_config region_config_default(void);

/* kernel: a self-hosted pool holding the layer's metadata (give it a grow callback). */
int region_layer_create(region_layer **out, const region_config *cfg, slab_pool *kernel);
/* Free every region and the layer; range_fn (may be NULL) receives every range the layer
 * held (free and used), coalesced, in address order. */
void region_layer_destroy(region_layer *layer, slab_range_fn range_fn, void *ctx);
/* Hand the layer address space (slab-aligned, inside the GAS, not overlapping). */
int region_layer_add_range(region_layer *layer, uintptr_t addr, size_t len);
/* Hand the layer region IDs [first, first+count) (never 0). */
int region_layer_add_ids(region_layer *layer, rid_t first, rid_t count);
void region_layer_get_stats(const region_layer *layer, region_layer_stats *st);

int region_create(region_layer *layer, rid_t parent, int level_hint, rid_t *id);
/* A region whose parent lives on another scheduler: it heads a local subtree. */
int region_create_detached(region_layer *layer, rid_t remote_parent, int level_hint, rid_t *id);
/* Call fn(ctx, id) for region id and every local descendant (pre-order) until fn returns
 * non-zero (then that value). ENOENT for an unknown region. */
int region_subtree_walk(const region_layer *layer, rid_t id, int (*fn)(void *ctx, rid_t id),
                        void *ctx);
/* Is region a equal to, or a descendant of, region b (both local)? */
bool region_is_within(const region_layer *layer, rid_t a, rid_t b);
/* Does addr lie in a range some local region's pool holds? */
bool region_layer_holds(const region_layer *layer, uintptr_t addr);
/* Take up to max_pages whole, aligned 1 MiB pages out of Free Ranges (to hand to another
 * scheduler). ENOENT when there is none. */
int region_layer_take_pages(region_layer *layer, size_t max_pages, uintptr_t *addr, size_t *npages);
/* Take up to max IDs (one contiguous chunk, the highest) out of Free Region IDs. */
int region_layer_take_ids(region_layer *layer, rid_t max, rid_t *first, rid_t *count);
/* Free every region (the root included). */
void region_layer_free_all(region_layer *layer);
/* Walk Free Ranges and Free Region IDs (either callback may be NULL). */
void region_layer_walk_free(const region_layer *layer, slab_range_fn range_fn,
                            int (*id_fn)(void *ctx, rid_t first, rid_t count), void *ctx);
/* Free a region with all its objects and all its descendants. */
int region_free(region_layer *layer, rid_t id);
int region_get_info(const region_layer *layer, rid_t id, region_info *info);
bool region_exists(const region_layer *layer, rid_t id);
/* The ID of region id's parent (local or remote; REGION_NONE for the root). ENOENT. */
int region_get_parent(const region_layer *layer, rid_t id, rid_t *parent);

int region_alloc(region_layer *layer, size_t size, rid_t region, uintptr_t *addr);
/* n objects of one size, all or nothing. */
int region_balloc(region_layer *layer, size_t size, rid_t region, size_t n, uintptr_t *addrs);
int region_free_object(region_layer *layer, uintptr_t addr);
/* Resize and/or move to new_region (REGION_NONE: stay). *addr is the object's address
 * afterwards (unchanged when the slot still fits in the same region); *old_size the old slot
 * size, so the caller, who holds the data, can copy it. */
int region_realloc(region_layer *layer, uintptr_t old, size_t new_size, rid_t new_region,
                   uintptr_t *addr, size_t *old_size);
/* The region, start and slot size of the live object containing addr. */
int region_query(const region_layer *layer, uintptr_t addr, rid_t *region, uintptr_t *start,
                 size_t *size);

/* Leases for workers' allocation caches (slab.h: slab_lease). region_lease leases up to want
 * (>= min) empty slabs of the slot size holding `size` in region rid to worker lessee; ENOENT
 * for an unknown region, EINVAL for a size over one slab, ENOMEM below min. */
int region_lease(region_layer *layer, rid_t rid, size_t size, size_t want, size_t min,
                 int32_t lessee, uintptr_t *slabs, size_t *got, uint32_t *slot);
/* Hand back n leased slabs: pairs[2i] the slab address, pairs[2i+1] the bitmap of its live
 * slots, all leased to lessee. All or nothing: EINVAL (nothing changed) if any slab is not
 * leased to lessee, appears twice, or names slots it does not have. A slab of a region freed
 * meanwhile (a zombie) goes back to Free Ranges, its live slots dropped and counted in
 * *dropped; the region's ID is free again once its last zombie is back. ENOMEM (nothing
 * handed back, every slab still leased) when the metadata to split a lease of many slabs ran
 * out. */
int region_lease_return(region_layer *layer, int32_t lessee, const uint64_t *pairs, size_t n,
                        size_t *dropped);
/* Take every zombie back, whoever holds it (at shutdown, when every worker has left: leases
 * nobody handed back, e.g. a worker that finalized without flushing). Their slabs go back to
 * Free Ranges and quarantined IDs are free again. Returns how many slabs came back. */
size_t region_layer_reclaim_zombies(region_layer *layer);
/* Is addr inside a zombie (a leased slab of a freed region, not handed back yet)? */
bool region_layer_has_zombie(const region_layer *layer, uintptr_t addr);

/* Holders (holder.c). Every region has one holder, the worker (an MPI rank) that may allocate,
 * free and create children in it, free it or hand it over; REGION_ANYONE (the root region, and
 * regions made without one) lets every worker act. The layer only records and compares: the
 * scheduler decides who asks. A subtree's regions may have different holders (a child handed
 * over alone); what acts on a whole subtree (free, hand-over) needs every local region of it. */
#define REGION_ANYONE ((int32_t)-1)
/* Record who holds region id (at creation). ENOENT. */
int region_set_holder(region_layer *layer, rid_t id, int32_t who);
/* The holder of id, and the worker that handed it over last (REGION_ANYONE: none). ENOENT. */
int region_get_holder(const region_layer *layer, rid_t id, int32_t *holder, int32_t *prev);
/* May `who` act on region id? 0, EPERM (another worker holds it), ENOENT. */
int region_check_holder(const region_layer *layer, rid_t id, int32_t who);
/* ... on id and every local descendant (who must hold each one). */
int region_check_subtree(const region_layer *layer, rid_t id, int32_t who);
/* Was id's local subtree handed to `holder` by `prev` (every region of it)? 0, EPERM, ENOENT. */
int region_check_handed(const region_layer *layer, rid_t id, int32_t holder, int32_t prev);
/* Hand id and every local descendant to `to`, each remembering its holder before (one that
 * `to` holds already stays as it is). ENOENT. */
int region_hand_subtree(region_layer *layer, rid_t id, int32_t to);

/* Pack: the used slabs of every listed region and all its descendants, plus each listed
 * object, in address order, coalesced into ranges handed to range_fn; *nranges gets their
 * number. ENOENT / EINVAL for an unknown region / object (nothing emitted). */
int region_pack(region_layer *layer, const rid_t *regions, size_t nregions,
                const uintptr_t *objects, size_t nobjects, slab_range_fn range_fn, void *ctx,
                size_t *nranges);
/* What region id and every local descendant own: every range their pools were given, used or
 * free, coalesced, in address order (a few ranges per region, however fragmented its objects:
 * what a worker gives back to the OS before it frees the region). From then on trimming takes
 * no free slab of theirs (it would hand pages about to be given back to another region).
 * ENOENT. */
int region_pack_owned(region_layer *layer, rid_t id, slab_range_fn range_fn, void *ctx,
                      size_t *nranges);

#endif /* AH_REGION_H */

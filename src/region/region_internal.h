/* region_internal.h: the records of the region layer, shared by the files of src/region.
 *   region       one per local region: tree links, its pool and its private metadata pool
 *   range_rec    one per range of slabs given to a region's pool (the Used Ranges value)
 *   meta_chunk   one per chunk of real memory under a region's private metadata pool
 *   region_layer the four tries and the configuration
 * The files call down only, without a cycle: layer.c (life cycle, statistics) -> tree.c
 * (create, free, the tree) -> pack.c (packs) -> objects.c (objects) -> space.c (address space
 * between the layer and the pools); tree.c -> lease.c (leases, zombies) -> space.c; layer.c ->
 * space.c; holder.c (holders) -> tree.c (its walk). Metadata records come from the inline
 * layer_alloc below. */
#ifndef AH_REGION_INTERNAL_H
#define AH_REGION_INTERNAL_H

#include "common/types.h"
#include "region/region.h"
#include "trie/rangeset.h"
#include "trie/trie.h"

typedef struct region region;

#define LAYER_SPARE_CHUNKS 16 /* first metadata chunks of freed regions kept for reuse */

typedef struct range_rec {
  uintptr_t start;
  size_t nslabs;
  region *owner;
  struct range_rec *prev, *next; /* the owner's list */
} range_rec;

typedef struct meta_chunk {
  void *mem;
  size_t len;
  struct meta_chunk *next;
} meta_chunk;

struct region {
  rid_t id, parent_id;
  int level_hint;
  int32_t holder, prev_holder; /* holder.c: the worker that may act on it, and the one before */
  bool releasing; /* its owned ranges were packed (region_pack_owned): its holder is giving their
                   * pages back before it frees it, so trimming leaves its free slabs alone */
  region *parent; /* NULL for the root */
  region *first_child, *prev_sibling, *next_sibling;
  size_t nchildren, nranges, nchunks;
  size_t owned_slabs; /* slabs in its range records */
  slab_pool *pool; /* objects; metadata in meta */
  slab_pool *meta; /* private, self-hosted, over chunks */
  meta_chunk *chunks;
  range_rec *ranges;
  region_layer *layer;
  /* The ranges of pool's last slab_pack (pack.c), valid while its pack version is unchanged:
   * a region moved back and forth is packed in O(ranges), not O(slabs). */
  struct pack_span *packed;
  size_t npacked;
  uint64_t packed_version;
};

struct region_layer {
  region_config cfg;
  slab_pool *kernel;
  trie used_ranges; /* slab key -> range_rec* */
  rangeset free_ranges; /* slab keys; by length, and those holding a whole 1 MiB page */
  trie used_ids;    /* id -> region* */
  rangeset free_ids;    /* ids */
  trie zombies;     /* slab key -> zombie lease (lease.c): leased slabs of freed regions */
  trie quarantine;  /* id -> zombie leases left: a freed region's ID, not reused until 0 */
  size_t regions, used_range_count;
  size_t trims, trimmed_slabs, need_pages_calls, stranded_slabs, stranded_ids;
  rid_t trim_cursor; /* trimming resumes after this region ID */
  /* First metadata chunks of freed regions, kept for the next regions (tree.c): a region made
   * and freed costs no run carved and freed in the kernel pool. */
  void *spare_chunks[LAYER_SPARE_CHUNKS];
  int nspare;
  /* One-entry caches in front of Used Ranges and Used Region IDs (cleared when the record
   * they point to goes away). */
  const range_rec *last_rec;
  region *last_region;
};

static inline uint64_t layer_key(const region_layer *L, uintptr_t addr) {
  return (uint64_t)((addr - L->cfg.gas_base) >> AH_SLAB_SHIFT);
}
static inline uintptr_t layer_addr(const region_layer *L, uint64_t key) {
  return L->cfg.gas_base + ((uintptr_t)key << AH_SLAB_SHIFT);
}
static inline bool layer_in_gas(const region_layer *L, uintptr_t addr) {
  return addr >= L->cfg.gas_base && addr - L->cfg.gas_base < L->cfg.gas_size;
}
static inline region *region_find(const region_layer *L, rid_t id) {
  region *r = L->last_region;
  if (r && r->id == id) return r;
  r = (region *)trie_find(&L->used_ids, id);
  if (r) ((region_layer *)L)->last_region = r;
  return r;
}

/* pack.c: drop r's cached pack ranges (before its pools go). */
void region_pack_forget(region_layer *L, region *r);

/* Metadata records from the kernel pool (inline here, so that every file can take records
 * without calling up into layer.c). */
static inline void *layer_alloc(region_layer *L, size_t size) {
  uintptr_t a = 0; /* (set by slab_alloc on success; zeroed for the compiler) */
  return slab_alloc(L->kernel, size, &a) == 0 ? (void *)a : NULL;
}
static inline void layer_free(region_layer *L, void *rec) {
  int rc = slab_free(L->kernel, (uintptr_t)rec);
  AH_ASSERT(rc == 0);
  (void)rc;
}

/* space.c: address space between the layer and the regions' pools. */
int space_give(region_layer *L, region *r, size_t min_slabs, uintptr_t *addr, size_t *len);
void space_return_all(region_layer *L, region *r);
const range_rec *space_owner(const region_layer *L, uintptr_t addr);
int space_free_ranges_add(region_layer *L, uintptr_t addr, size_t nslabs);
void layer_strand(region_layer *L, size_t nslabs, size_t nids);
int region_pool_grow(void *ctx, size_t min_bytes, uintptr_t *addr, size_t *len);

/* lease.c: before a region is destroyed, its leased slabs (see slab_lease) are noted; once its
 * ranges are back in Free Ranges they are taken out again as zombies, and the region's ID is
 * kept out of Free Region IDs, until every lessee hands its zombies back. Returns true when the
 * region had leases (its ID is then quarantined, not freed). */
typedef struct lease_note lease_note;
lease_note *lease_note_region(region_layer *L, region *r);
bool lease_bury(region_layer *L, rid_t id, lease_note *note);

/* tree.c */
void region_destroy_subtree(region_layer *L, region *r);
/* The next region after x in a pre-order walk of top's subtree (NULL when done). */
region *region_walk_next(region *top, region *x);

#endif

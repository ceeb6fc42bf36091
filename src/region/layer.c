/* layer.c: the region layer's life cycle: create (with the root region), hand it address
 * space and region IDs, statistics, destroy. Main entry: region_layer_create. */
#include <errno.h>
#include <string.h>

#include "region/region_internal.h"
#include "trie/rangeset.h"

region_config region_config_default(void) {
  return (region_config){.gas_base = AH_GAS_DEFAULT_BASE, .gas_size = AH_GAS_DEFAULT_SIZE,
                         .high_watermark = 16, .low_watermark = 2,
                         .meta_chunk = (size_t)32 << 10, .create_root = true};
}

static trie_node *node_alloc(void *ctx) { return layer_alloc(ctx, sizeof(trie_node)); }
static void node_release(void *ctx, trie_node *n) { layer_free(ctx, n); }

static unsigned key_bits_for(uint64_t count) {
  unsigned bits = 1;
  while (bits < 64 && ((uint64_t)1 << bits) < count) bits++;
  return bits;
}

static bool config_ok(const region_config *c) {
  return c->gas_base % AH_PAGE_SIZE == 0 && c->gas_size % AH_PAGE_SIZE == 0 && c->gas_size &&
         c->gas_base + (c->gas_size - 1) > c->gas_base && c->low_watermark <= c->high_watermark &&
         c->high_watermark >= 1 && c->meta_chunk >= 8 * AH_SLAB_SIZE &&
         c->meta_chunk % AH_SLAB_SIZE == 0;
}

int region_create_root(region_layer *L);

int region_layer_create(region_layer **out, const region_config *cfg, slab_pool *kernel) {
  region_config c = cfg ? *cfg : region_config_default();
  if (!kernel || !config_ok(&c)) return EINVAL;
  region_layer *L = slab_malloc(kernel, sizeof *L);
  if (!L) return ENOMEM;
  memset(L, 0, sizeof *L);
  L->cfg = c;
  L->kernel = kernel;
  trie_node_source src = {node_alloc, node_release, L};
  unsigned slab_bits = key_bits_for(c.gas_size >> AH_SLAB_SHIFT);
  trie_init(&L->used_ranges, slab_bits, src);
  rangeset_init(&L->free_ranges, slab_bits, src,
                RANGESET_SIZED | RANGESET_ALIGN(AH_PAGE_SIZE >> AH_SLAB_SHIFT));
  trie_init(&L->used_ids, 32, src);
  rangeset_init(&L->free_ids, 32, src, 0);
  trie_init(&L->zombies, slab_bits, src);
  trie_init(&L->quarantine, 32, src);
  if (c.create_root) {
    int rc = region_create_root(L);
    if (rc) {
      layer_free(L, L);
      return rc;
    }
  }
  *out = L;
  return 0;
}

int region_layer_add_range(region_layer *L, uintptr_t addr, size_t len) {
  if (len == 0 || addr % AH_SLAB_SIZE || len % AH_SLAB_SIZE || !layer_in_gas(L, addr) ||
      len > L->cfg.gas_size - (addr - L->cfg.gas_base))
    return EINVAL;
  uint64_t k = layer_key(L, addr), n = len >> AH_SLAB_SHIFT;
  if (rangeset_overlaps(&L->free_ranges, k, n)) return EINVAL;
  uint64_t rk;
  uintptr_t v;
  if (trie_le(&L->used_ranges, k + n - 1, &rk, &v) == 0) {
    const range_rec *r = (const range_rec *)v;
    if (rk + r->nslabs > k) return EINVAL;
  }
  return space_free_ranges_add(L, addr, n);
}

int region_layer_add_ids(region_layer *L, rid_t first, rid_t count) {
  if (first == 0 || count == 0 || (uint64_t)first + count - 1 > UINT32_MAX - 1) return EINVAL;
  if (rangeset_overlaps(&L->free_ids, first, count)) return EINVAL;
  trie_cursor c;
  uint64_t id;
  trie_cursor_seek(&c, &L->used_ids, first); /* an ID in use may not come back */
  if (trie_cursor_next(&c, &id, NULL) && id < (uint64_t)first + count) return EINVAL;
  return rangeset_add(&L->free_ids, first, count);
}

/* Lease bookkeeping: every quarantined ID (a freed region's, with zombie slabs left) neither
 * in use nor free, waiting for no more zombies than there are. 0, or EINVAL. */
static int check_leases(const region_layer *L) {
  trie_cursor c;
  uint64_t id;
  uintptr_t left;
  size_t waiting = 0;
  trie_cursor_seek(&c, &L->quarantine, 0);
  while (trie_cursor_next(&c, &id, &left)) {
    if (trie_find(&L->used_ids, id) || rangeset_overlaps(&L->free_ids, id, 1)) return EINVAL;
    waiting += left;
  }
  return waiting <= trie_count(&L->zombies) ? 0 : EINVAL;
}

/* The running counts the statistics read must be what a walk finds (Debug builds). */
static int check_counts(const region_layer *L) {
  if (rangeset_check(&L->free_ids) || rangeset_check(&L->free_ranges)) return EINVAL;
  return check_leases(L);
}

void region_layer_get_stats(const region_layer *L, region_layer_stats *st) {
  AH_ASSERT_CHECK(check_counts(L));
  *st = (region_layer_stats){.regions = L->regions, .free_slabs = rangeset_total(&L->free_ranges),
                             .free_ranges = rangeset_count(&L->free_ranges),
                             .used_ranges = L->used_range_count,
                             .free_ids = rangeset_total(&L->free_ids), .trims = L->trims,
                             .trimmed_slabs = L->trimmed_slabs,
                             .need_pages_calls = L->need_pages_calls,
                             .stranded_slabs = L->stranded_slabs,
                             .stranded_ids = L->stranded_ids,
                             .zombie_slabs = trie_count(&L->zombies),
                             .quarantined_ids = trie_count(&L->quarantine)};
}

bool region_layer_holds(const region_layer *L, uintptr_t addr) {
  return space_owner(L, addr) != NULL;
}

int region_layer_take_pages(region_layer *L, size_t max_pages, uintptr_t *addr, size_t *npages) {
  const uint64_t per_page = AH_PAGE_SIZE >> AH_SLAB_SHIFT;
  uint64_t k, len;
  if (max_pages == 0) return ENOENT;
  /* the lowest range holding a whole page: one search in the index of such ranges */
  if (rangeset_pick_aligned(&L->free_ranges, &k, &len)) return ENOENT;
  uint64_t first = (k + per_page - 1) / per_page * per_page, end = (k + len) / per_page * per_page;
  uint64_t n = (end - first) / per_page;
  if (n > max_pages) n = max_pages;
  uint64_t start = end - n * per_page;
  int rc = rangeset_remove(&L->free_ranges, start, n * per_page);
  if (rc) return rc;
  *addr = layer_addr(L, start);
  *npages = n;
  return 0;
}

int region_layer_take_ids(region_layer *L, rid_t max, rid_t *first, rid_t *count) {
  uint64_t f, n;
  int rc = rangeset_take_highest(&L->free_ids, max, &f, &n);
  if (rc == 0) {
    *first = (rid_t)f;
    *count = (rid_t)n;
  }
  return rc;
}

void region_layer_walk_free(const region_layer *L, slab_range_fn range_fn,
                            int (*id_fn)(void *ctx, rid_t first, rid_t count), void *ctx) {
  trie_cursor c;
  uint64_t k;
  uintptr_t n;
  trie_cursor_seek(&c, &L->free_ranges.ranges, 0);
  while (range_fn && trie_cursor_next(&c, &k, &n))
    if (range_fn(ctx, layer_addr(L, k), (size_t)n << AH_SLAB_SHIFT)) break;
  trie_cursor_seek(&c, &L->free_ids.ranges, 0);
  while (id_fn && trie_cursor_next(&c, &k, &n))
    if (id_fn(ctx, (rid_t)k, (rid_t)n)) break;
}

void region_layer_free_all(region_layer *L) {
  /* Free every top-level local region (the root, or subtrees whose parent is elsewhere). */
  for (;;) {
    trie_cursor c;
    uintptr_t v = 0;
    region *top = NULL;
    trie_cursor_seek(&c, &L->used_ids, 0);
    while (trie_cursor_next(&c, NULL, &v))
      if (!((region *)v)->parent) {
        top = (region *)v;
        break;
      }
    if (!top) break;
    region_destroy_subtree(L, top);
  }
}

void region_layer_destroy(region_layer *L, slab_range_fn range_fn, void *ctx) {
  if (!L) return;
  region_layer_free_all(L);
  while (L->nspare) layer_free(L, L->spare_chunks[--L->nspare]);
  region_layer_walk_free(L, range_fn, NULL, ctx);
  trie_clear(&L->used_ranges);
  rangeset_clear(&L->free_ranges);
  trie_clear(&L->used_ids);
  rangeset_clear(&L->free_ids);
  trie_clear(&L->zombies);
  trie_clear(&L->quarantine);
  layer_free(L, L);
}

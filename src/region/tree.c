/* tree.c: regions and the region tree: a region's two pools (objects, and the private
 * self-hosted pool for their metadata), create, free with all descendants, info.
 * Main entries: region_create, region_free. */
#include <errno.h>

#include "region/region_internal.h"
#include "trie/rangeset.h"

/* Grow callback of a region's private metadata pool: chunks from the kernel pool, doubling. */
static int region_meta_grow(void *ctx, size_t min_bytes, uintptr_t *addr, size_t *len) {
  region *r = ctx;
  region_layer *L = r->layer;
  size_t size = r->chunks ? 2 * r->chunks->len : L->cfg.meta_chunk;
  if (size < min_bytes) size = ah_round_up(min_bytes, AH_SLAB_SIZE);
  meta_chunk *c = layer_alloc(L, sizeof *c);
  void *mem = NULL;
  if (c && size == L->cfg.meta_chunk && L->nspare) mem = L->spare_chunks[--L->nspare];
  else if (c) mem = slab_malloc(L->kernel, size);
  if (!mem) {
    if (c) layer_free(L, c);
    return ENOMEM;
  }
  *c = (meta_chunk){.mem = mem, .len = size, .next = r->chunks};
  r->chunks = c;
  r->nchunks++;
  *addr = (uintptr_t)mem;
  *len = size;
  return 0;
}

static void drop_pools(region_layer *L, region *r) {
  region_pack_forget(L, r);
  while (r->chunks) { /* the pools live in these chunks: nothing else to free */
    meta_chunk *c = r->chunks;
    r->chunks = c->next;
    if (c->len == L->cfg.meta_chunk && L->nspare < LAYER_SPARE_CHUNKS)
      L->spare_chunks[L->nspare++] = c->mem; /* for the next region */
    else
      layer_free(L, c->mem);
    layer_free(L, c);
  }
  r->nchunks = 0;
  r->pool = r->meta = NULL;
}

static int make_pools(region_layer *L, region *r) {
  uintptr_t mem;
  size_t len;
  if (region_meta_grow(r, L->cfg.meta_chunk, &mem, &len)) return ENOMEM;
  slab_config mc = slab_config_default();
  mc.unsized = true; /* records of 64 B and the pool struct: no runs to find by length */
  mc.grow = region_meta_grow;
  mc.grow_ctx = r;
  slab_config pc = slab_config_default();
  pc.base = L->cfg.gas_base;
  pc.span = L->cfg.gas_size;
  pc.grow = region_pool_grow;
  pc.grow_ctx = r;
  if (slab_pool_create_self_hosted(&r->meta, (void *)mem, len, &mc) ||
      slab_pool_create(&r->pool, &pc, r->meta)) {
    drop_pools(L, r);
    return ENOMEM;
  }
  return 0;
}

static void link_child(region *parent, region *r) {
  r->parent = parent;
  if (!parent) return;
  r->next_sibling = parent->first_child;
  if (parent->first_child) parent->first_child->prev_sibling = r;
  parent->first_child = r;
  parent->nchildren++;
}

static void unlink_child(region *r) {
  region *parent = r->parent;
  if (!parent) return;
  if (r->prev_sibling) r->prev_sibling->next_sibling = r->next_sibling;
  else parent->first_child = r->next_sibling;
  if (r->next_sibling) r->next_sibling->prev_sibling = r->prev_sibling;
  parent->nchildren--;
}

/* A new region with pools and an ID entry, linked under parent; starts with up to the high
 * watermark of free slabs if Free Ranges has them (it grows on demand otherwise). */
static int region_new(region_layer *L, rid_t id, region *parent, rid_t parent_id, int hint,
                      region **out) {
  region *r = layer_alloc(L, sizeof *r);
  if (!r) return ENOMEM;
  *r = (region){.id = id, .parent_id = parent_id, .level_hint = hint, .holder = REGION_ANYONE,
                .prev_holder = REGION_ANYONE, .layer = L};
  if (make_pools(L, r)) {
    layer_free(L, r);
    return ENOMEM;
  }
  if (trie_insert(&L->used_ids, id, (uintptr_t)r)) {
    drop_pools(L, r);
    layer_free(L, r);
    return ENOMEM;
  }
  link_child(parent, r);
  L->regions++;
  uint64_t key;
  if (rangeset_pick_end(&L->free_ranges, L->cfg.high_watermark, &key) == 0) {
    uintptr_t addr;
    size_t len;
    if (space_give(L, r, L->cfg.high_watermark, &addr, &len) == 0 &&
        slab_add_range(r->pool, addr, len))
      space_return_all(L, r);
  }
  *out = r;
  return 0;
}

int region_create_root(region_layer *L);
int region_create_root(region_layer *L) {
  region *r;
  return region_new(L, REGION_ROOT, NULL, REGION_NONE, 0, &r);
}

/* Shared body of region_create and region_create_detached (parent NULL: remote). */
static int create_with_id(region_layer *L, region *parent, rid_t parent_id, int level_hint,
                          rid_t *id) {
  uint64_t nid;
  int rc = rangeset_take_lowest(&L->free_ids, &nid);
  if (rc) return rc == ENOENT ? ENOSPC : rc;
  region *r;
  if ((rc = region_new(L, (rid_t)nid, parent, parent_id, level_hint, &r))) {
    if (rangeset_add(&L->free_ids, nid, 1)) layer_strand(L, 0, 1);
    return rc;
  }
  *id = (rid_t)nid;
  return 0;
}

int region_create(region_layer *L, rid_t parent_id, int level_hint, rid_t *id) {
  region *parent = region_find(L, parent_id);
  if (!parent) return ENOENT;
  return create_with_id(L, parent, parent_id, level_hint, id);
}

int region_create_detached(region_layer *L, rid_t remote_parent, int level_hint, rid_t *id) {
  if (region_find(L, remote_parent)) return EINVAL; /* a local parent: use region_create */
  return create_with_id(L, NULL, remote_parent, level_hint, id);
}

int region_subtree_walk(const region_layer *L, rid_t id, int (*fn)(void *ctx, rid_t id),
                        void *ctx) {
  region *top = region_find(L, id);
  if (!top) return ENOENT;
  for (region *x = top; x; x = region_walk_next(top, x)) {
    int rc = fn(ctx, x->id);
    if (rc) return rc;
  }
  return 0;
}

bool region_is_within(const region_layer *L, rid_t a, rid_t b) {
  const region *x = region_find(L, a), *top = region_find(L, b);
  for (; x && top; x = x->parent)
    if (x == top) return true;
  return false;
}

static void destroy_one(region_layer *L, region *r) {
  lease_note *leases = lease_note_region(L, r); /* read the pool before it goes */
  space_return_all(L, r);
  drop_pools(L, r);
  trie_delete(&L->used_ids, r->id, NULL);
  bool quarantined = lease_bury(L, r->id, leases);
  if (r->id != REGION_ROOT && !quarantined && rangeset_add(&L->free_ids, r->id, 1))
    layer_strand(L, 0, 1);
  unlink_child(r);
  L->regions--;
  if (L->last_region == r) L->last_region = NULL;
  layer_free(L, r);
}

region *region_walk_next(region *top, region *x) {
  if (x->first_child) return x->first_child;
  for (; x != top; x = x->parent)
    if (x->next_sibling) return x->next_sibling;
  return NULL;
}

void region_destroy_subtree(region_layer *L, region *r) {
  region *x = r;
  for (;;) { /* post-order without recursion: deepest first child, then climb */
    while (x->first_child) x = x->first_child;
    region *up = x == r ? NULL : x->parent;
    destroy_one(L, x);
    if (!up) return;
    x = up;
  }
}

int region_free(region_layer *L, rid_t id) {
  if (id == REGION_ROOT) return EINVAL;
  region *r = region_find(L, id);
  if (!r) return ENOENT;
  region_destroy_subtree(L, r);
  return 0;
}

bool region_exists(const region_layer *L, rid_t id) { return region_find(L, id) != NULL; }

int region_get_parent(const region_layer *L, rid_t id, rid_t *parent) {
  const region *r = region_find(L, id);
  if (!r) return ENOENT;
  *parent = r->parent_id;
  return 0;
}

int region_get_info(const region_layer *L, rid_t id, region_info *info) {
  const region *r = region_find(L, id);
  if (!r) return ENOENT;
  *info = (region_info){.id = r->id, .parent = r->parent_id, .level_hint = r->level_hint,
                        .children = r->nchildren, .ranges = r->nranges,
                        .meta_chunks = r->nchunks};
  slab_get_stats(r->pool, &info->pool);
  return 0;
}

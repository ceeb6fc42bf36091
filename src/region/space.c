/* space.c: address space between the layer and its regions' pools.
 * Free Ranges (a range set of slab keys) holds what no pool has; Used Ranges maps the first
 * slab of each range given to a pool to a record naming the owner. Giving carves from the
 * end of the lowest fitting free range (so it cannot fail half-way); when nothing fits, the
 * layer trims free slabs from other regions, round-robin, down to the low watermark, and
 * only then asks need_pages. Main entries: space_give, region_pool_grow, space_return_all. */
#include <errno.h>
#include <stdio.h>

#include "region/region_internal.h"
#include "trie/rangeset.h"

int space_free_ranges_add(region_layer *L, uintptr_t addr, size_t nslabs) {
  return rangeset_add(&L->free_ranges, layer_key(L, addr), nslabs);
}

/* Count address space or IDs that metadata exhaustion left neither free nor in use. */
void layer_strand(region_layer *L, size_t nslabs, size_t nids) {
  if (L->stranded_slabs + L->stranded_ids == 0)
    fprintf(stderr, "antheap: region layer out of metadata memory: %zu slabs, %zu IDs stranded\n",
            nslabs, nids);
  L->stranded_slabs += nslabs;
  L->stranded_ids += nids;
}

static inline bool rec_holds(const range_rec *rec, uintptr_t addr) {
  return addr - rec->start < (rec->nslabs << AH_SLAB_SHIFT);
}

const range_rec *space_owner(const region_layer *L, uintptr_t addr) {
  const range_rec *rec = L->last_rec;
  if (rec && rec_holds(rec, addr)) return rec;
  uintptr_t v;
  if (!layer_in_gas(L, addr) || trie_le(&L->used_ranges, layer_key(L, addr), NULL, &v)) return NULL;
  rec = (const range_rec *)v;
  if (!rec_holds(rec, addr)) return NULL;
  ((region_layer *)L)->last_rec = rec;
  return rec;
}

static void rec_link(region *r, range_rec *rec) {
  rec->prev = NULL;
  rec->next = r->ranges;
  if (r->ranges) r->ranges->prev = rec;
  r->ranges = rec;
  r->nranges++;
  r->owned_slabs += rec->nslabs;
  r->layer->used_range_count++;
}

static void rec_unlink_free(region_layer *L, range_rec *rec) {
  region *r = rec->owner;
  if (rec->prev) rec->prev->next = rec->next; else r->ranges = rec->next;
  if (rec->next) rec->next->prev = rec->prev;
  r->nranges--;
  r->owned_slabs -= rec->nslabs;
  L->used_range_count--;
  if (L->last_rec == rec) L->last_rec = NULL;
  layer_free(L, rec);
}

/* Record that [key, key+n) now belongs to r. ENOMEM changes nothing. */
static int rec_add(region_layer *L, region *r, uint64_t key, size_t n) {
  range_rec *rec = layer_alloc(L, sizeof *rec);
  if (!rec) return ENOMEM;
  *rec = (range_rec){.start = layer_addr(L, key), .nslabs = n, .owner = r};
  if (trie_insert(&L->used_ranges, key, (uintptr_t)rec)) {
    layer_free(L, rec);
    return ENOMEM;
  }
  rec_link(r, rec);
  return 0;
}

/* Take back as many free slabs as possible (up to want) from regions other than except,
 * each down to the low watermark, resuming after the last region visited. */
static size_t trim(region_layer *L, const region *except, size_t want);
/* Take back one run of at least min (up to n) contiguous free slabs from a region other than
 * except that can spare it above its low watermark; 0 when none can. */
static size_t trim_fit(region_layer *L, const region *except, size_t min, size_t n);

/* A free range of at least min slabs (preferring n) in Free Ranges, or 0 slabs. */
static size_t pick(region_layer *L, size_t n, size_t min, uint64_t *key) {
  if (rangeset_pick_end(&L->free_ranges, n, key) == 0) return n;
  if (min < n && rangeset_pick_end(&L->free_ranges, min, key) == 0) return min;
  return 0;
}

int space_give(region_layer *L, region *r, size_t min_slabs, uintptr_t *addr, size_t *len) {
  /* Grow geometrically (at least what the region owns already), so a region holds few
   * range records and freeing it stays cheap however large it grew. */
  size_t n = min_slabs > L->cfg.high_watermark ? min_slabs : L->cfg.high_watermark;
  if (n < r->owned_slabs) n = r->owned_slabs;
  uint64_t key;
  size_t got = pick(L, n, min_slabs, &key);
  if (!got && trim(L, r, min_slabs)) got = pick(L, n, min_slabs, &key);
  /* The slabs trimmed may be pieces that do not touch (the tops of several regions' free
   * ranges; near exhaustion, holes of one slab): a request for more than one takes a run that
   * some region's pool holds whole (each pool finds its best fit by size). Trimming a whole
   * growth step more instead moved up to that many scattered holes to Free Ranges for nothing
   * when no region had such a run. */
  if (!got && min_slabs > 1 && trim_fit(L, r, min_slabs, n)) got = pick(L, n, min_slabs, &key);
  if (!got && L->cfg.need_pages) {
    L->need_pages_calls++;
    if (L->cfg.need_pages(L->cfg.need_pages_ctx, L, n << AH_SLAB_SHIFT) == 0)
      got = pick(L, n, min_slabs, &key);
  }
  if (!got) return ENOMEM;
  if (rec_add(L, r, key, got)) return ENOMEM;
  rangeset_take_end(&L->free_ranges, key, got);
  *addr = layer_addr(L, key);
  *len = got << AH_SLAB_SHIFT;
  return 0;
}

int region_pool_grow(void *ctx, size_t min_bytes, uintptr_t *addr, size_t *len) {
  region *r = ctx;
  return space_give(r->layer, r, ah_round_up(min_bytes, AH_SLAB_SIZE) >> AH_SLAB_SHIFT, addr, len);
}

/* Cut [addr, addr+n slabs) out of record rec (which contains it). ENOMEM changes nothing. */
static int rec_cut(region_layer *L, range_rec *rec, uintptr_t addr, size_t n) {
  uintptr_t end = addr + (n << AH_SLAB_SHIFT), rend = rec->start + (rec->nslabs << AH_SLAB_SHIFT);
  if (addr == rec->start && end == rend) {
    trie_delete(&L->used_ranges, layer_key(L, rec->start), NULL);
    rec_unlink_free(L, rec);
  } else if (end == rend) {
    rec->nslabs -= n;
    rec->owner->owned_slabs -= n;
  } else if (addr == rec->start) {
    if (trie_insert(&L->used_ranges, layer_key(L, end), (uintptr_t)rec)) return ENOMEM;
    trie_delete(&L->used_ranges, layer_key(L, addr), NULL);
    rec->start = end;
    rec->nslabs -= n;
    rec->owner->owned_slabs -= n;
  } else {
    if (rec_add(L, rec->owner, layer_key(L, end), (rend - end) >> AH_SLAB_SHIFT)) return ENOMEM;
    size_t keep = (addr - rec->start) >> AH_SLAB_SHIFT;
    rec->owner->owned_slabs -= rec->nslabs - keep; /* rec_add counted the tail */
    rec->nslabs = keep;
  }
  return 0;
}

/* [addr, addr+n slabs) came out of r's pool: move it from r's records to Free Ranges, one
 * record piece at a time. A piece that cannot be moved goes back to the pool. */
static size_t space_reclaim(region_layer *L, region *r, uintptr_t addr, size_t n) {
  size_t moved = 0;
  while (moved < n) {
    uintptr_t a = addr + (moved << AH_SLAB_SHIFT);
    range_rec *rec = (range_rec *)space_owner(L, a);
    AH_ASSERT(rec && rec->owner == r);
    size_t in_rec = (rec->start + (rec->nslabs << AH_SLAB_SHIFT) - a) >> AH_SLAB_SHIFT;
    size_t piece = in_rec < n - moved ? in_rec : n - moved;
    if (rec_cut(L, rec, a, piece)) break;
    if (space_free_ranges_add(L, a, piece)) {
      layer_strand(L, piece, 0);
    }
    moved += piece;
  }
  if (moved < n && slab_add_range(r->pool, addr + (moved << AH_SLAB_SHIFT),
                                  (n - moved) << AH_SLAB_SHIFT))
    layer_strand(L, n - moved, 0);
  return moved;
}

/* Trim one region down to the low watermark (or until want slabs were taken). A region whose
 * pages its holder is giving back (releasing) is left alone. */
static size_t trim_region(region_layer *L, region *x, size_t want) {
  size_t got = 0;
  if (x->releasing) return 0;
  slab_stats st;
  slab_get_stats(x->pool, &st);
  size_t spare = st.free_slabs > L->cfg.low_watermark ? st.free_slabs - L->cfg.low_watermark : 0;
  while (spare && got < want) {
    uintptr_t a;
    size_t len;
    size_t ask = spare < want - got ? spare : want - got;
    if (slab_take_free(x->pool, ask, &a, &len)) break;
    size_t n = len >> AH_SLAB_SHIFT, moved = space_reclaim(L, x, a, n);
    got += moved;
    spare -= n;
    if (moved < n) break;
  }
  return got;
}

/* A run of at least min (up to n) of x's free slabs, above its low watermark, into Free Ranges. */
static size_t trim_fit_region(region_layer *L, region *x, size_t min, size_t n) {
  if (x->releasing) return 0;
  slab_stats st;
  slab_get_stats(x->pool, &st);
  size_t longest = slab_longest_free(x->pool);
  size_t spare = st.free_slabs > L->cfg.low_watermark ? st.free_slabs - L->cfg.low_watermark : 0;
  size_t k = n < longest ? n : longest;
  if (k > spare) k = spare;
  uintptr_t a;
  if (k < min || slab_take_fit(x->pool, k, &a)) return 0;
  return space_reclaim(L, x, a, k) == k ? k : 0;
}

static size_t trim_fit(region_layer *L, const region *except, size_t min, size_t n) {
  rid_t start = L->trim_cursor;
  for (int pass = 0; pass < 2; pass++) {
    trie_cursor c;
    uint64_t id;
    uintptr_t v;
    trie_cursor_seek(&c, &L->used_ids, pass == 0 ? (uint64_t)start + 1 : 0);
    while (trie_cursor_next(&c, &id, &v)) {
      if (pass == 1 && id > start) break;
      region *x = (region *)v;
      size_t got = x != except ? trim_fit_region(L, x, min, n) : 0;
      L->trim_cursor = (rid_t)id;
      if (got) {
        L->trims++;
        L->trimmed_slabs += got;
        return got;
      }
    }
  }
  return 0;
}

static size_t trim(region_layer *L, const region *except, size_t want) {
  size_t got = 0;
  rid_t start = L->trim_cursor;
  for (int pass = 0; pass < 2 && got < want; pass++) {
    trie_cursor c;
    uint64_t id;
    uintptr_t v;
    trie_cursor_seek(&c, &L->used_ids, pass == 0 ? (uint64_t)start + 1 : 0);
    while (got < want && trie_cursor_next(&c, &id, &v)) {
      if (pass == 1 && id > start) break;
      region *x = (region *)v;
      if (x != except) got += trim_region(L, x, want - got);
      L->trim_cursor = (rid_t)id;
    }
  }
  if (got) {
    L->trims++;
    L->trimmed_slabs += got;
  }
  return got;
}

void space_return_all(region_layer *L, region *r) {
  while (r->ranges) {
    range_rec *rec = r->ranges;
    trie_delete(&L->used_ranges, layer_key(L, rec->start), NULL);
    if (space_free_ranges_add(L, rec->start, rec->nslabs)) layer_strand(L, rec->nslabs, 0);
    rec_unlink_free(L, rec);
  }
}

/* pack.c: packing regions and objects for a transfer: the used slabs of each listed region
 * and of all its descendants, plus each listed object, sorted by address and coalesced into
 * (address, length) ranges. Each region keeps the ranges of its last pool walk while its
 * pool's pack version stands (region_pack_forget drops them), so a region that moves again
 * unchanged costs O(ranges) here, not O(slabs). Buffers come from the kernel pool. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "region/region_internal.h"

typedef struct pack_span {
  uintptr_t addr;
  size_t len;
} span;

typedef struct {
  region_layer *L;
  span *v;
  size_t n, cap;
  int err;
} span_buf;

static int span_push(void *ctx, uintptr_t addr, size_t len) {
  span_buf *b = ctx;
  if (b->n == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 256;
    span *v = layer_alloc(b->L, cap * sizeof *v);
    if (!v) {
      b->err = ENOMEM;
      return 1;
    }
    if (b->v) {
      memcpy(v, b->v, b->n * sizeof *v);
      layer_free(b->L, b->v);
    }
    b->v = v;
    b->cap = cap;
  }
  b->v[b->n++] = (span){addr, len};
  return 0;
}

void region_pack_forget(region_layer *L, region *r) {
  if (r->packed) layer_free(L, r->packed);
  r->packed = NULL;
  r->npacked = 0;
}

/* The ranges of r's pool into b: the cached ones while they hold, else from a walk of the
 * pool, kept for next time (when memory allows: the cache is only a shortcut). */
static void collect_region(span_buf *b, region *r) {
  uint64_t version = slab_pack_version(r->pool);
  if (r->packed && r->packed_version == version) {
    for (size_t i = 0; i < r->npacked && !b->err; i++) span_push(b, r->packed[i].addr, r->packed[i].len);
    return;
  }
  region_pack_forget(b->L, r);
  size_t first = b->n;
  slab_pack(r->pool, span_push, b);
  size_t n = b->n - first;
  if (b->err || n == 0 || !(r->packed = layer_alloc(b->L, n * sizeof *r->packed))) return;
  memcpy(r->packed, b->v + first, n * sizeof *r->packed);
  r->npacked = n;
  r->packed_version = version;
}

/* What r owns: every range its pool was given (used and free slabs alike). From now on no
 * other region may trim its free slabs (space.c): their pages are about to go back to the OS. */
static void collect_owned(span_buf *b, region *r) {
  r->releasing = true;
  for (const range_rec *rec = r->ranges; rec && !b->err; rec = rec->next)
    span_push(b, rec->start, rec->nslabs << AH_SLAB_SHIFT);
}

/* Every region of the subtree under r, pre-order, without recursion: its used slabs, or all it
 * owns. */
static void collect_subtree(span_buf *b, region *r, bool owned) {
  region *x = r;
  for (;;) {
    if (owned) collect_owned(b, x);
    else collect_region(b, x);
    if (b->err) return;
    if (x->first_child) {
      x = x->first_child;
      continue;
    }
    while (x != r && !x->next_sibling) x = x->parent;
    if (x == r) return;
    x = x->next_sibling;
  }
}

static int cmp_span(const void *a, const void *b) {
  uintptr_t x = ((const span *)a)->addr, y = ((const span *)b)->addr;
  return (x > y) - (x < y);
}

/* Sort b's spans, merge what touches or overlaps, hand them to range_fn; frees b. */
static int emit(region_layer *L, span_buf *b, slab_range_fn range_fn, void *ctx, size_t *nranges);

int region_pack(region_layer *L, const rid_t *regions, size_t nregions, const uintptr_t *objects,
                size_t nobjects, slab_range_fn range_fn, void *ctx, size_t *nranges) {
  for (size_t i = 0; i < nregions; i++)
    if (!region_find(L, regions[i])) return ENOENT;
  for (size_t i = 0; i < nobjects; i++)
    if (region_query(L, objects[i], NULL, NULL, NULL)) return EINVAL;
  span_buf b = {.L = L};
  for (size_t i = 0; i < nregions && !b.err; i++)
    collect_subtree(&b, region_find(L, regions[i]), false);
  for (size_t i = 0; i < nobjects && !b.err; i++) {
    uintptr_t start;
    size_t size;
    region_query(L, objects[i], NULL, &start, &size);
    span_push(&b, start, size);
  }
  return emit(L, &b, range_fn, ctx, nranges);
}

int region_pack_owned(region_layer *L, rid_t id, slab_range_fn range_fn, void *ctx,
                      size_t *nranges) {
  region *r = region_find(L, id);
  if (!r) return ENOENT;
  span_buf b = {.L = L};
  collect_subtree(&b, r, true);
  return emit(L, &b, range_fn, ctx, nranges);
}

static int emit(region_layer *L, span_buf *b0, slab_range_fn range_fn, void *ctx, size_t *nranges) {
  span_buf b = *b0;
  if (b.err) {
    if (b.v) layer_free(L, b.v);
    return b.err;
  }
  if (b.n > 1) qsort(b.v, b.n, sizeof *b.v, cmp_span);
  size_t count = 0;
  for (size_t i = 0; i < b.n;) { /* merge what touches or overlaps */
    uintptr_t start = b.v[i].addr, end = start + b.v[i].len;
    for (i++; i < b.n && b.v[i].addr <= end; i++)
      if (b.v[i].addr + b.v[i].len > end) end = b.v[i].addr + b.v[i].len;
    count++;
    if (range_fn && range_fn(ctx, start, end - start)) break;
  }
  if (b.v) layer_free(L, b.v);
  *nranges = count;
  return 0;
}

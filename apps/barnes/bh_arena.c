/* bh_arena.c: the serial build's bh_mem: regions as lists of malloc'd blocks, with parents,
 * so that freeing a tree region frees its level regions as on antheap. */
#include <stdlib.h>
#include <string.h>

#include "bh.h"

typedef struct arena_region {
  uint32_t parent; /* 0: top */
  int live;
  void **blocks;
  size_t nblocks, cap;
} arena_region;

typedef struct arena {
  arena_region *r; /* r[id - 1] */
  size_t n, cap;
} arena;

static uint32_t arena_region_new(void *ctx, uint32_t parent) {
  arena *a = ctx;
  if (parent && (parent > a->n || !a->r[parent - 1].live)) return 0;
  size_t slot = a->n; /* the first dead slot, else a new one */
  for (size_t i = 0; i < a->n; i++)
    if (!a->r[i].live) {
      slot = i;
      break;
    }
  if (slot == a->n) {
    if (a->n == a->cap) {
      size_t cap = a->cap ? 2 * a->cap : 64;
      arena_region *v = realloc(a->r, cap * sizeof *v);
      if (!v) return 0;
      a->r = v;
      a->cap = cap;
    }
    a->n++;
  }
  a->r[slot] = (arena_region){.parent = parent, .live = 1};
  return (uint32_t)slot + 1;
}

static int arena_balloc(void *ctx, uint32_t region, size_t size, int n, void **out) {
  arena *a = ctx;
  if (!region || region > a->n || !a->r[region - 1].live || n < 1 || size == 0) return -1;
  arena_region *r = &a->r[region - 1];
  if (r->nblocks == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 4;
    void **v = realloc(r->blocks, cap * sizeof *v);
    if (!v) return -1;
    r->blocks = v;
    r->cap = cap;
  }
  size_t slot = (size + 63) & ~(size_t)63;
  char *block = aligned_alloc(64, slot * (size_t)n);
  if (!block) return -1;
  r->blocks[r->nblocks++] = block;
  for (int i = 0; i < n; i++) out[i] = block + slot * (size_t)i;
  return 0;
}

static void arena_kill(arena *a, size_t i) {
  arena_region *r = &a->r[i];
  for (size_t k = 0; k < r->nblocks; k++) free(r->blocks[k]);
  free(r->blocks);
  *r = (arena_region){0};
  for (size_t k = 0; k < a->n; k++) /* children: the tree is shallow (tree, levels) */
    if (a->r[k].live && a->r[k].parent == i + 1) arena_kill(a, k);
}

static int arena_rfree(void *ctx, uint32_t region) {
  arena *a = ctx;
  if (!region || region > a->n || !a->r[region - 1].live) return -1;
  arena_kill(a, region - 1);
  return 0;
}

bh_mem bh_arena_new(void) {
  return (bh_mem){.region = arena_region_new, .balloc = arena_balloc, .rfree = arena_rfree,
                  .ctx = calloc(1, sizeof(arena))};
}

int bh_arena_live(const bh_mem *m) {
  const arena *a = m->ctx;
  int live = 0;
  for (size_t i = 0; i < a->n; i++) live += a->r[i].live;
  return live;
}

void bh_arena_delete(bh_mem *m) {
  arena *a = m->ctx;
  if (!a) return;
  for (size_t i = 0; i < a->n; i++)
    if (a->r[i].live) arena_kill(a, i);
  free(a->r);
  free(a);
  m->ctx = NULL;
}

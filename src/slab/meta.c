/* meta.c: where a pool's own records come from: its meta pool (64-B slots), or, while a
 * self-hosted pool bootstraps, a bump allocator over its boot slabs. */
#include "slab/pool_internal.h"

void *meta_alloc(slab_pool *p) {
  if (p->booting) {
    if (p->boot_next >= p->boot_end) return NULL;
    void *rec = (void *)p->boot_next;
    p->boot_next += AH_SLOT_ALIGN;
    return rec;
  }
  uintptr_t addr;
  return slab_alloc(p->meta, AH_SLOT_ALIGN, &addr) == 0 ? (void *)addr : NULL;
}

void meta_free(slab_pool *p, void *rec) {
  AH_ASSERT(!p->booting);
  int rc = slab_free(p->meta, (uintptr_t)rec);
  AH_ASSERT(rc == 0);
  (void)rc;
}

static trie_node *node_alloc(void *ctx) { return meta_alloc(ctx); }
static void node_release(void *ctx, trie_node *n) { meta_free(ctx, n); }

trie_node_source meta_node_source(slab_pool *p) {
  return (trie_node_source){.alloc = node_alloc, .release = node_release, .ctx = p};
}

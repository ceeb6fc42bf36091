/* check.c: a pool against its invariants, for Debug builds (slab_pool_destroy) and tests: the
 * Used trie ordered, its descriptors disjoint and inside the window, each one's bitmap and
 * count agreeing with its list (desc_counts_ok); every class's list counters equal to what its
 * lists and Used hold; the pool's run and lease counters equal to what Used holds; Free sound
 * and disjoint from every descriptor. Main entry: slab_pool_check. */
#include <errno.h>

#include "slab/pool_internal.h"
#include "trie/rangeset.h"

/* Slabs on each list of each class, as found by walking Used. */
typedef struct {
  uint64_t by_list[SLAB_CLASS_UNITS + 1][LIST_LEASED + 1];
  uint64_t runs, run_slabs, leased_slabs;
} found_counts;

/* One descriptor of Used, at key k: sound, after the previous one (ending at *end), counted. */
static int check_desc(const slab_pool *p, uint64_t k, const slab_desc *d, uintptr_t *end,
                      found_counts *f) {
  if (d->addr != slab_addr(p, k) || d->nslabs == 0 || d->addr < *end) return EINVAL;
  if (!in_window(p, d->addr) || desc_bytes(d) > p->cfg.span - (d->addr - p->cfg.base))
    return EINVAL;
  if (!desc_counts_ok(d) || free_range_overlaps(p, d->addr, desc_bytes(d))) return EINVAL;
  *end = d->addr + desc_bytes(d);
  if (!d->cls) {
    f->runs++;
    f->run_slabs += d->nslabs;
    return 0;
  }
  if (d->list > LIST_LEASED) return EINVAL;
  f->by_list[d->cls->slot_size >> AH_SLOT_ALIGN_SHIFT][d->list] += d->nslabs;
  if (d->list == LIST_LEASED) f->leased_slabs += d->nslabs;
  return 0;
}

/* Slabs on a class's linked list (partial, empty or leased), each on the list it names. */
static uint64_t list_slabs(const slab_desc *head, unsigned list, bool *ok) {
  uint64_t n = 0;
  for (const slab_desc *d = head; d; d = d->next) {
    if (d->list != list || (d->next && d->next->prev != d)) *ok = false;
    n += d->nslabs;
  }
  return n;
}

/* A class's counters against its lists and what Used holds of it. */
static bool class_ok(const slab_class *c, const uint64_t *used) {
  bool ok = true;
  uint64_t partial = list_slabs(c->partial, LIST_PARTIAL, &ok);
  uint64_t empty = list_slabs(c->empty, LIST_EMPTY, &ok);
  uint64_t leased = list_slabs(c->leased, LIST_LEASED, &ok);
  return ok && c->n_partial == partial && partial == used[LIST_PARTIAL] &&
         c->n_empty == empty && empty == used[LIST_EMPTY] && c->n_leased == leased &&
         leased == used[LIST_LEASED] && c->n_full == used[LIST_FULL];
}

int slab_pool_check(const slab_pool *p) {
  if (trie_check(&p->used) || trie_check(&p->partial) || rangeset_check(&p->free)) return EINVAL;
  static const found_counts zero;
  found_counts f = zero;
  trie_cursor c;
  uint64_t k;
  uintptr_t v, end = 0;
  trie_cursor_seek(&c, &p->used, 0);
  while (trie_cursor_next(&c, &k, &v))
    if (check_desc(p, k, (const slab_desc *)v, &end, &f)) return EINVAL;
  if (f.runs != p->runs || f.run_slabs != p->run_slabs || f.leased_slabs != p->leased_slabs)
    return EINVAL;
  size_t classes = 0;
  for (unsigned u = 1; u <= SLAB_CLASS_UNITS; u++) {
    const slab_class *cls = p->class_cache[u];
    if (!cls) continue;
    classes++;
    if (cls->slot_size != u << AH_SLOT_ALIGN_SHIFT || !class_ok(cls, f.by_list[u])) return EINVAL;
  }
  return classes == p->classes && classes == trie_count(&p->partial) ? 0 : EINVAL;
}

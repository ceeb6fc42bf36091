/* lists.c: size classes: the Partial trie (slot units -> class record), its array mirror
 * for the hot path, and moving slabs between a class's partial, empty and full states. */
#include <errno.h>

#include "slab/pool_internal.h"

static void list_push(slab_desc **head, slab_desc *d) {
  d->prev = NULL;
  d->next = *head;
  if (*head) (*head)->prev = d;
  *head = d;
}

static void list_remove(slab_desc **head, slab_desc *d) {
  if (d->prev) d->prev->next = d->next; else *head = d->next;
  if (d->next) d->next->prev = d->prev;
  d->prev = d->next = NULL;
}

void desc_move(slab_desc *d, enum slab_list to) {
  slab_class *c = d->cls;
  switch ((enum slab_list)d->list) {
    case LIST_PARTIAL: list_remove(&c->partial, d); c->n_partial--; break;
    case LIST_EMPTY: list_remove(&c->empty, d); c->n_empty--; break;
    case LIST_FULL: c->n_full--; break;
    case LIST_DETACHED: break;
  }
  switch (to) {
    case LIST_PARTIAL: list_push(&c->partial, d); c->n_partial++; break;
    case LIST_EMPTY: list_push(&c->empty, d); c->n_empty++; break;
    case LIST_FULL: c->n_full++; break;
    case LIST_DETACHED: break;
  }
  d->list = (uint8_t)to;
}

slab_class *class_find(const slab_pool *p, uint32_t slot_size) {
  return p->class_cache[slot_size >> AH_SLOT_ALIGN_SHIFT];
}

int class_get(slab_pool *p, uint32_t slot_size, slab_class **out) {
  unsigned units = slot_size >> AH_SLOT_ALIGN_SHIFT;
  AH_ASSERT(units >= 1 && units <= SLAB_CLASS_UNITS);
  if ((*out = p->class_cache[units])) return 0;
  if (!structural_ok(p)) return ENOMEM;
  slab_class *c = meta_alloc(p);
  if (!c) return ENOMEM;
  *c = (slab_class){.slot_size = slot_size, .capacity = (uint16_t)(AH_SLAB_SIZE / slot_size)};
  int rc = trie_insert(&p->partial, units, (uintptr_t)c);
  if (rc) {
    meta_free(p, c);
    return rc;
  }
  p->class_cache[units] = c;
  p->classes++;
  *out = c;
  return 0;
}

/* route.c: where a request goes (Myrmics section 5.3). A scheduler answers for the pages and
 * region IDs it was given (owned_*); those it handed to a child are in the delegation tries
 * (deleg_*: start -> count and child). A region or address is local if the region layer has
 * it, goes to the child a delegation names, is unknown if this scheduler owns it but has no
 * such region or object (so nothing bounces between a parent and a child that never used a
 * delegated range), and otherwise goes to the parent; the root has no parent to ask. */
#include <errno.h>

#include "sched/server_internal.h"
#include "trie/rangeset.h"

/* Delegation values pack the count and the child's slot: count << 8 | (slot + 1). */
int deleg_add(trie *t, uint64_t start, uint64_t count, int slot) {
  return trie_insert(t, start, (uintptr_t)(count << 8 | (uint64_t)(slot + 1)));
}

int deleg_find(const trie *t, uint64_t key, uint64_t *start, uint64_t *count) {
  uint64_t k;
  uintptr_t v;
  if (trie_le(t, key, &k, &v) || key >= k + (v >> 8)) return -1;
  if (start) *start = k;
  if (count) *count = v >> 8;
  return (int)(v & 0xff) - 1;
}

void deleg_remove_span(trie *t, uint64_t start, uint64_t count) {
  uint64_t k;
  while (trie_ge(t, start, &k, NULL) == 0 && k < start + count) trie_delete(t, k, NULL);
}

static route decide(const sched_server *s, bool local, const trie *deleg, const rangeset *owned,
                    uint64_t key, bool key_valid) {
  if (local) return (route){ROUTE_LOCAL, -1};
  int slot = key_valid ? deleg_find(deleg, key, NULL, NULL) : -1;
  if (slot >= 0) return (route){ROUTE_CHILD, s->children[slot]};
  if (key_valid && rangeset_contains(owned, key, 1)) return (route){ROUTE_UNKNOWN, -1};
  if (s->tree->parent[s->me] < 0) return (route){ROUTE_UNKNOWN, -1};
  return (route){ROUTE_PARENT, -1};
}

route route_region(const sched_server *s, rid_t rid) {
  return decide(s, region_exists(s->layer, rid), &s->deleg_ids, &s->owned_ids, rid, true);
}

uint64_t page_of(const sched_server *s, uintptr_t addr) {
  return (addr - s->cfg.gas_base) >> AH_PAGE_SHIFT;
}

route route_addr(const sched_server *s, uintptr_t addr) {
  bool in_gas = addr >= s->cfg.gas_base && addr - s->cfg.gas_base < s->cfg.gas_size;
  return decide(s, in_gas && region_layer_holds(s->layer, addr), &s->deleg_pages, &s->owned_pages,
                in_gas ? page_of(s, addr) : 0, in_gas);
}

route route_lease(const sched_server *s, uintptr_t slab) {
  if (region_layer_has_zombie(s->layer, slab)) return (route){ROUTE_LOCAL, -1};
  return route_addr(s, slab);
}

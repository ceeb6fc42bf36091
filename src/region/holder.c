/* holder.c: who holds a region (region.h, "Holders"): the worker that may act on it, and the
 * one that handed it over last (a failed move hands it back to that one). Checks and hand-overs
 * of a whole local subtree walk it in pre-order without recursion.
 * Main entries: region_check_subtree, region_hand_subtree. */
#include <errno.h>

#include "region/region_internal.h"

/* A holder and a previous holder are worker ranks or REGION_ANYONE. */
static bool holders_ok(const region *r) {
  return r->holder >= REGION_ANYONE && r->prev_holder >= REGION_ANYONE;
}

static bool may_act(const region *r, int32_t who) {
  return r->holder == REGION_ANYONE || r->holder == who;
}

int region_set_holder(region_layer *L, rid_t id, int32_t who) {
  region *r = region_find(L, id);
  if (!r) return ENOENT;
  r->holder = who;
  r->prev_holder = REGION_ANYONE;
  AH_ASSERT(holders_ok(r));
  return 0;
}

int region_get_holder(const region_layer *L, rid_t id, int32_t *holder, int32_t *prev) {
  const region *r = region_find(L, id);
  if (!r) return ENOENT;
  if (holder) *holder = r->holder;
  if (prev) *prev = r->prev_holder;
  return 0;
}

int region_check_holder(const region_layer *L, rid_t id, int32_t who) {
  const region *r = region_find(L, id);
  if (!r) return ENOENT;
  return may_act(r, who) ? 0 : EPERM;
}

int region_check_subtree(const region_layer *L, rid_t id, int32_t who) {
  region *top = region_find(L, id);
  if (!top) return ENOENT;
  for (region *x = top; x; x = region_walk_next(top, x))
    if (!may_act(x, who)) return EPERM;
  return 0;
}

int region_check_handed(const region_layer *L, rid_t id, int32_t holder, int32_t prev) {
  region *top = region_find(L, id);
  if (!top) return ENOENT;
  for (region *x = top; x; x = region_walk_next(top, x))
    if (x->holder != holder || x->prev_holder != prev || holder == REGION_ANYONE ||
        prev == REGION_ANYONE)
      return EPERM;
  return 0;
}

int region_hand_subtree(region_layer *L, rid_t id, int32_t to) {
  region *top = region_find(L, id);
  if (!top) return ENOENT;
  for (region *x = top; x; x = region_walk_next(top, x)) {
    if (x->holder == to) continue; /* named twice in one move (a region and its descendant) */
    x->prev_holder = x->holder;
    x->holder = to;
    AH_ASSERT(holders_ok(x) && x->prev_holder != to);
  }
  return 0;
}

/* kids.c: the remote children of this scheduler's regions (regions on a child's subtree whose
 * parent region lives here), kept by child (remote_kids: child -> parent + 1) and by parent
 * (kids_by_parent: parent << 32 | child), so that a pack or a free of a subtree finds the
 * remote children under it in O(subtree + children found), not by a walk over every remote
 * child of the scheduler (a root over tens of thousands of regions made on its leaves would
 * pay that on every request). Main entries: kids_remember, kids_forget, kids_under. */
#include <errno.h>
#include <stdlib.h>

#include "sched/server_internal.h"

static uint64_t pair_key(rid_t parent, rid_t child) { return (uint64_t)parent << 32 | child; }

/* The two tables of remote children (by child, by parent) hold the same pairs. */
static bool kids_tables_agree(const sched_server *s) {
  return trie_count(&s->remote_kids) == trie_count(&s->kids_by_parent);
}

int kids_remember(sched_server *s, rid_t child, rid_t parent) {
  uintptr_t *slot = trie_find_slot(&s->remote_kids, child);
  if (slot && *slot == (uintptr_t)parent + 1) return 0;
  /* the child's word is authoritative for its ID: an older entry for it is overwritten */
  int rc = trie_insert(&s->kids_by_parent, pair_key(parent, child), 1);
  if (rc && rc != EEXIST) return rc;
  if (slot) {
    trie_delete(&s->kids_by_parent, pair_key((rid_t)(*slot - 1), child), NULL);
    *slot = (uintptr_t)parent + 1;
    AH_ASSERT(kids_tables_agree(s));
    return 0;
  }
  rc = trie_insert(&s->remote_kids, child, (uintptr_t)parent + 1);
  if (rc) trie_delete(&s->kids_by_parent, pair_key(parent, child), NULL);
  AH_ASSERT(kids_tables_agree(s));
  return rc;
}

void kids_forget(sched_server *s, rid_t child) {
  uintptr_t parent1;
  if (trie_delete(&s->remote_kids, child, &parent1) == 0)
    trie_delete(&s->kids_by_parent, pair_key((rid_t)(parent1 - 1), child), NULL);
  AH_ASSERT(kids_tables_agree(s));
}

/* Append {child, parent} to the pairs in *v (n pairs, cap); false when out of memory. */
static bool push_pair(rid_t **v, size_t *n, size_t *cap, rid_t child, rid_t parent) {
  if (*n == *cap) {
    size_t c = *cap ? 2 * *cap : 16;
    rid_t *w = realloc(*v, 2 * c * sizeof *w);
    if (!w) return false;
    *v = w;
    *cap = c;
  }
  (*v)[2 * *n] = child;
  (*v)[2 * *n + 1] = parent;
  (*n)++;
  return true;
}

typedef struct {
  sched_server *s;
  rid_t *v;
  size_t n, cap;
} kids_acc;

/* The remote children of one parent (region_subtree_walk's callback): 0, or ENOMEM. */
static int kids_of(void *ctx, rid_t parent) {
  kids_acc *a = ctx;
  trie_cursor c;
  uint64_t k;
  trie_cursor_seek(&c, &a->s->kids_by_parent, pair_key(parent, 0));
  while (trie_cursor_next(&c, &k, NULL) && (rid_t)(k >> 32) == parent)
    if (!push_pair(&a->v, &a->n, &a->cap, (rid_t)k, parent)) return ENOMEM;
  return 0;
}

int kids_under(sched_server *s, rid_t rid, rid_t **out, size_t *n) {
  kids_acc a = {.s = s};
  int rc = trie_count(&s->remote_kids) ? region_subtree_walk(s->layer, rid, kids_of, &a) : 0;
  if (rc == ENOMEM) { /* all of them or none */
    free(a.v);
    a.v = NULL, a.n = 0;
  }
  *out = a.v;
  *n = a.n;
  return rc == ENOMEM ? ENOMEM : 0;
}

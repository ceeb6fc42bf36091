/* tree.c: building the routing tree and walking it. */
#include "sched/tree.h"

#include <errno.h>
#include <stdlib.h>

static void *alloc_ints(int n) { return calloc((size_t)n, sizeof(int)); }

void sched_tree_free(sched_tree *t) {
  free(t->is_sched);
  free(t->parent);
  free(t->level);
  free(t->first_child);
  free(t->next_sibling);
  free(t->nchildren);
  free(t->descendants);
  free(t->workers_below);
  *t = (sched_tree){0};
}

/* Level of rank r by climbing (-1 on a cycle). */
static int depth_of(const sched_tree *t, int r) {
  int d = 0;
  for (int x = r; t->parent[x] >= 0; x = t->parent[x])
    if (++d > t->nranks) return -1;
  return d;
}

int sched_tree_init(sched_tree *t, int nranks, const bool *is_sched, const int *parent) {
  *t = (sched_tree){.nranks = nranks, .root = -1};
  if (nranks < 2) return EINVAL;
  t->is_sched = calloc((size_t)nranks, sizeof(bool));
  t->parent = alloc_ints(nranks);
  t->level = alloc_ints(nranks);
  t->first_child = alloc_ints(nranks);
  t->next_sibling = alloc_ints(nranks);
  t->nchildren = alloc_ints(nranks);
  t->descendants = alloc_ints(nranks);
  t->workers_below = alloc_ints(nranks);
  int rc = 0;
  for (int r = 0; r < nranks; r++) {
    t->is_sched[r] = is_sched[r];
    t->parent[r] = parent[r];
    t->first_child[r] = t->next_sibling[r] = -1;
    if (is_sched[r]) t->nsched++; else t->nworkers++;
    if (parent[r] < 0) {
      if (!is_sched[r] || t->root >= 0) rc = EINVAL;
      t->root = r;
    } else if (parent[r] >= nranks || !is_sched[parent[r]]) {
      rc = EINVAL;
    }
  }
  if (rc || t->root < 0 || t->nworkers == 0) {
    sched_tree_free(t);
    return EINVAL;
  }
  for (int r = nranks - 1; r >= 0; r--) { /* children lists in rank order */
    if ((t->level[r] = depth_of(t, r)) < 0) {
      sched_tree_free(t);
      return EINVAL;
    }
    if (parent[r] < 0) continue;
    t->next_sibling[r] = t->first_child[parent[r]];
    t->first_child[parent[r]] = r;
    if (is_sched[r]) t->nchildren[parent[r]]++;
  }
  for (int r = 0; r < nranks; r++) {
    if (is_sched[r] && t->level[r] + 1 > t->levels) t->levels = t->level[r] + 1;
    for (int x = parent[r]; x >= 0; x = t->parent[x]) {
      if (is_sched[r]) t->descendants[x]++; else t->workers_below[x]++;
    }
  }
  return 0;
}

int sched_tree_heap(sched_tree *t, int nsched, int fanout, int nworkers) {
  if (nsched < 1 || fanout < 1 || nworkers < 1) return EINVAL;
  int n = nsched + nworkers;
  bool *is = calloc((size_t)n, sizeof(bool));
  int *parent = alloc_ints(n), *leaves = alloc_ints(nsched), nleaves = 0;
  for (int s = 0; s < nsched; s++) {
    is[s] = true;
    parent[s] = s == 0 ? -1 : (s - 1) / fanout;
    if ((long)s * fanout + 1 >= nsched) leaves[nleaves++] = s;
  }
  for (int w = 0; w < nworkers; w++) /* contiguous blocks, sizes differing by at most one */
    parent[nsched + w] = leaves[(long)w * nleaves / nworkers];
  int rc = sched_tree_init(t, n, is, parent);
  free(is);
  free(parent);
  free(leaves);
  return rc;
}

bool sched_tree_is_leaf(const sched_tree *t, int s) { return t->is_sched[s] && t->nchildren[s] == 0; }

bool sched_tree_in_subtree(const sched_tree *t, int s, int x) {
  for (; x >= 0; x = t->parent[x])
    if (x == s) return true;
  return false;
}

int sched_tree_next_hop(const sched_tree *t, int from, int to) {
  if (from == to) return to;
  for (int x = to; t->parent[x] >= 0; x = t->parent[x])
    if (t->parent[x] == from) return x; /* `to` is below `from`: the child on the way */
  return t->parent[from];
}

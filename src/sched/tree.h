/* tree.h: the shape of a job as the schedulers route on it: for each rank, whether it is a
 * scheduler, its parent (a worker's parent is its leaf scheduler; the root has none), its
 * level, its children, and the next hop from any rank towards any other along the tree.
 * Built from parent links (sched_tree_init) or as a heap-ordered tree of S schedulers with
 * fan-out F and W workers in contiguous blocks over the leaves (sched_tree_heap). */
#ifndef AH_SCHED_TREE_H
#define AH_SCHED_TREE_H

#include <stdbool.h>

typedef struct sched_tree {
  int nranks, nsched, nworkers, levels, root;
  bool *is_sched;
  int *parent;       /* -1 for the root */
  int *level;        /* schedulers: 0 at the root; workers: their leaf's level + 1 */
  int *first_child;  /* children (schedulers and workers) as linked lists */
  int *next_sibling;
  int *nchildren;    /* scheduler children only */
  int *descendants;  /* schedulers below, itself excluded */
  int *workers_below;
} sched_tree;

/* From per-rank roles and parents. EINVAL unless exactly one root scheduler, every worker's
 * parent a scheduler, and the links acyclic. */
int sched_tree_init(sched_tree *t, int nranks, const bool *is_sched, const int *parent);
/* Schedulers are ranks 0..nsched-1 in heap order with the given fan-out; the workers
 * (ranks nsched..) are split into contiguous blocks over the leaves. */
int sched_tree_heap(sched_tree *t, int nsched, int fanout, int nworkers);
void sched_tree_free(sched_tree *t);

/* The neighbour of `from` on the tree path to `to` (to itself when from == to). */
int sched_tree_next_hop(const sched_tree *t, int from, int to);
bool sched_tree_is_leaf(const sched_tree *t, int s);
/* Is x in the subtree of scheduler s (s itself included)? */
bool sched_tree_in_subtree(const sched_tree *t, int s, int x);

#endif

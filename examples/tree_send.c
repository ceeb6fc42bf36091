/* tree_send.c: build a binary search tree in a region, send the region to another worker, and
 * walk it there by its own pointers: the receiver gets the same bytes at the same addresses,
 * so nothing is packed or fixed up. Workers pair up (0 sends to 1, 2 to 3, ...).
 *
 *   mpirun -np 3 ./tree_send                              1 scheduler + 2 workers (SPMD)
 *   mpirun -np 1 antheapd : -np 4 ./tree_send             MPMD, 2 pairs
 */
#include <antheap.h>
#include <errno.h>
#include <stdio.h>

#define BITS 12
#define KEYS ((1 << BITS) - 1) /* keys 1 .. 4095 */

typedef struct node {
  long key;
  struct node *left, *right;
} node;

/* What travels with the tree: its root, and what the receiver should find. */
typedef struct header {
  struct header *self; /* its own address: equal on the receiver, or pointers would break */
  node *root;
  long count, sum;
} header;

/* Insert key under *at (plain BST insertion, every node allocated in region r). */
static int insert(node **at, long key, rid_t r) {
  while (*at) at = key < (*at)->key ? &(*at)->left : &(*at)->right;
  node *x = sys_alloc(sizeof *x, r);
  if (!x) return -1;
  *x = (node){.key = key};
  *at = x;
  return 0;
}

/* In-order walk with a stack: count and sum the keys, -1 when they are out of order. */
static int walk(const node *root, long *count, long *sum) {
  const node *stack[128];
  int sp = 0;
  long last = -1;
  *count = *sum = 0;
  for (const node *x = root; x || sp;) {
    for (; x; x = x->left) {
      if (sp == 128) return -1;
      stack[sp++] = x;
    }
    x = stack[--sp];
    if (x->key <= last) return -1; /* not in order: the tree was damaged */
    last = x->key;
    ++*count, *sum += x->key;
    x = x->right;
  }
  return 0;
}

static int sender(int me, int peer) {
  rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  header *h = r ? sys_alloc(sizeof *h, r) : NULL;
  if (!h) return -1;
  *h = (header){.self = h};
  for (long i = 1; i <= KEYS; i++) { /* keys in bit-reversed order: a balanced tree */
    long key = 0;
    for (int b = 0; b < BITS; b++) key |= ((i >> b) & 1) << (BITS - 1 - b);
    if (insert(&h->root, key, r)) return -1;
    h->count++, h->sum += key;
  }
  long count = h->count;
  void *objects[1] = {h};
  if (sys_send(peer, &r, 1, objects, 1)) return -1; /* waits for the receiver */
  /* The region is the receiver's now (it frees it): this worker must not touch it any more. */
  printf("worker %d: sent a tree of %ld nodes in region %u to worker %d (header at %p)\n", me,
         count, (unsigned)r, peer, (void *)h);
  return 0;
}

static int receiver(int me, int peer) {
  rid_t r;
  void *objects[1];
  if (sys_recv(peer, &r, 1, objects, 1)) return -1;
  header *h = objects[0];
  long count, sum;
  if (h->self != h || walk(h->root, &count, &sum) || count != h->count || sum != h->sum) {
    errno = EINVAL;
    return -1;
  }
  printf("worker %d: received region %u from worker %d, header at %p, %ld nodes in order\n", me,
         (unsigned)r, peer, (void *)h, count);
  return sys_rfree(r);
}

int main(int argc, char **argv) {
  if (sys_init(&argc, &argv)) {
    fprintf(stderr, "tree_send: sys_init: %s\n", sys_strerror(errno));
    return 1;
  }
  int me = sys_worker_id(), n = sys_workers(), rc = 0;
  if (n < 2 && me == 0) fprintf(stderr, "tree_send: needs 2 workers or more\n");
  if (n < 2) rc = -1;
  else if (me % 2 == 0 && me + 1 < n) rc = sender(me, me + 1);
  else if (me % 2 == 1) rc = receiver(me, me - 1);
  if (rc && n >= 2) fprintf(stderr, "tree_send: worker %d: %s\n", me, sys_strerror(errno));
  sys_finalize();
  return rc ? 1 : 0;
}

/* three_schedulers.c: a job whose schedulers form a tree: a root and two leaves, each leaf
 * serving half of the workers.
 *
 *   mpirun -np 3 antheapd --antheap-fanout 2 : -np 4 ./three_schedulers      MPMD
 *   mpirun -np 7 ./three_schedulers --antheap-schedulers 3 --antheap-fanout 2  SPMD, the same
 *
 * Worker 0 finds how deep the tree is (a level hint deeper than the leaves is EINVAL) and puts
 * a "ring" region at the root scheduler. The ring travels once around the workers: each one
 * adds a sub-region at its own leaf scheduler with a few list nodes in it, linked to the list
 * that came with the ring, and sends the ring (sub-regions included) to the next worker. Back
 * at worker 0, the list must hold every worker's nodes in ring order; one sys_rfree of the
 * ring then frees every sub-region too.
 */
#include <antheap.h>
#include <errno.h>
#include <stdio.h>

#define PER_WORKER 100

typedef struct node {
  int worker, index;
  struct node *next;
} node;

typedef struct ring {
  node *head, *tail;
  int visits;
} ring;

/* Scheduler levels: level hints 0 .. levels-1 are valid, the next one is EINVAL. */
static int tree_levels(void) {
  for (int level = 0; level < 64; level++) {
    rid_t r = sys_ralloc(SYS_ROOT_REGION, level);
    if (!r) return errno == EINVAL ? level : -1;
    if (sys_rfree(r)) return -1;
  }
  return -1;
}

/* My part of the ring: a sub-region at my leaf, PER_WORKER nodes appended to the list. */
static int add_my_part(rid_t ring_region, ring *g, int me) {
  rid_t mine = sys_ralloc(ring_region, SYS_NO_LEVEL_HINT);
  if (!mine) return -1;
  for (int i = 0; i < PER_WORKER; i++) {
    node *x = sys_alloc(sizeof *x, mine);
    if (!x) return -1;
    *x = (node){.worker = me, .index = i};
    if (g->tail) g->tail->next = x;
    else g->head = x;
    g->tail = x;
  }
  g->visits++;
  return 0;
}

/* Worker 0, at the end: every worker's nodes, in ring order. */
static int check(const ring *g, int workers) {
  const node *x = g->head;
  for (int w = 0; w < workers; w++)
    for (int i = 0; i < PER_WORKER; i++, x = x->next)
      if (!x || x->worker != w || x->index != i) return -1;
  return x == NULL && g->visits == workers ? 0 : -1;
}

static int run(int me, int n) {
  rid_t r;
  ring *g;
  void *obj[1];
  if (me == 0) {
    int levels = tree_levels();
    if (levels < 0) return -1;
    printf("worker 0: %d workers, a scheduler tree of %d level%s\n", n, levels,
           levels == 1 ? "" : "s");
    r = sys_ralloc(SYS_ROOT_REGION, 0); /* level 0: the root scheduler */
    g = r ? sys_alloc(sizeof *g, r) : NULL;
    if (!g) return -1;
    *g = (ring){0};
  } else {
    if (sys_recv(me - 1, &r, 1, obj, 1)) return -1;
    g = obj[0];
  }
  if (add_my_part(r, g, me)) return -1;
  if (n == 1) return check(g, n) || sys_rfree(r);
  obj[0] = g;
  if (sys_send((me + 1) % n, &r, 1, obj, 1)) return -1; /* the ring is the next worker's now */
  if (me != 0) return 0;
  if (sys_recv(n - 1, &r, 1, obj, 1)) return -1;
  g = obj[0];
  if (check(g, n)) {
    errno = EINVAL;
    return -1;
  }
  printf("worker 0: the ring came back through %d workers with %d nodes in order\n", g->visits,
         n * PER_WORKER);
  return sys_rfree(r); /* the ring and every worker's sub-region */
}

int main(int argc, char **argv) {
  if (sys_init(&argc, &argv)) {
    fprintf(stderr, "three_schedulers: sys_init: %s\n", sys_strerror(errno));
    return 1;
  }
  int me = sys_worker_id(), rc = run(me, sys_workers());
  if (rc) fprintf(stderr, "three_schedulers: worker %d: %s\n", me, sys_strerror(errno));
  sys_finalize();
  return rc ? 1 : 0;
}

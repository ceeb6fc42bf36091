/* hello_regions.c: the smallest antheap program. Every worker makes a region, fills it with a
 * linked list, asks antheap which region an object lives in, and frees the whole region (every
 * object in it) with one call.
 *
 *   mpirun -np 3 ./hello_regions      SPMD: rank 0 becomes the scheduler, 2 workers
 */
#include <antheap.h>
#include <errno.h>
#include <stdio.h>

#define ITEMS 1000

struct item {
  long value;
  struct item *next;
};

int main(int argc, char **argv) {
  if (sys_init(&argc, &argv)) { /* scheduler ranks never return from here */
    fprintf(stderr, "hello_regions: sys_init: %s\n", sys_strerror(errno));
    return 1;
  }
  int me = sys_worker_id(), ok = 1;
  rid_t region = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT); /* at this worker's scheduler */
  struct item *head = NULL;
  for (long i = 0; region && i < ITEMS; i++) {
    struct item *x = sys_alloc(sizeof *x, region);
    if (!x) break;
    x->value = i;
    x->next = head;
    head = x;
  }
  long count = 0, sum = 0;
  for (struct item *x = head; x; x = x->next) count++, sum += x->value;
  rid_t where = 0;
  size_t slot = 0;
  if (!region || count != ITEMS || sum != (long)ITEMS * (ITEMS - 1) / 2 ||
      sys_query(head, &where, &slot) || where != region || slot < sizeof *head ||
      sys_rfree(region)) {
    fprintf(stderr, "hello_regions: worker %d: %s\n", me, sys_strerror(errno));
    ok = 0;
  } else {
    printf("worker %d of %d: %ld objects in region %u (slots of %zu B), freed at once "
           "(antheap %s)\n", me, sys_workers(), count, (unsigned)region, slot, sys_version());
  }
  sys_finalize(); /* every worker must reach it, also after a failure */
  return ok ? 0 : 1;
}

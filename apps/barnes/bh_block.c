/* bh_block.c: memory a worker keeps from one step to the next (bh.h's bh_block): the sorts'
 * pairs and the team's joined tree, each tens of MB, which a fresh allocation would fault in
 * page by page on every step while the team's threads wait on the process's memory map. */
#include <stdlib.h>

#include "bh.h"

void *bh_block_room(bh_block *b, size_t bytes) {
  if (!b) return malloc(bytes);
  if (b->cap < bytes) { /* some slack: the bodies a worker holds change from step to step */
    size_t cap = bytes + bytes / 8;
    free(b->mem);
    b->mem = malloc(cap);
    b->cap = b->mem ? cap : 0;
  }
  return b->mem;
}

void bh_block_release(bh_block *b, void *p) {
  if (!b || p != b->mem) free(p);
}

void bh_block_free(bh_block *b) {
  free(b->mem);
  *b = (bh_block){0};
}

/* slabmap.c: the slab-to-owner map's mapping (slabmap.h). */
#include "worker/slabmap.h"

#include <errno.h>
#include <sys/mman.h>

int slabmap_init(slabmap *m, uintptr_t base, size_t size) {
  size_t n = size >> AH_SLAB_SHIFT, bytes = n * sizeof *m->e;
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) return ENOMEM;
  *m = (slabmap){.base = base, .n = n, .e = p};
  return 0;
}

void slabmap_destroy(slabmap *m) {
  if (m->e) munmap((void *)m->e, m->n * sizeof *m->e);
  *m = (slabmap){0};
}

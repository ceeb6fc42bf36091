/* demo_slab.c: a single-process tour of a slab pool: a kernel pool bootstraps itself, an
 * ordinary pool manages a GAS window with its metadata in the kernel pool, objects of a
 * few sizes come and go, and the pool is packed into coalesced ranges. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/types.h"
#include "slab/slab.h"

static int print_range(void *ctx, uintptr_t addr, size_t len) {
  (void)ctx;
  printf("    [%#lx, %#lx)  %zu KiB\n", (unsigned long)addr, (unsigned long)(addr + len), len >> 10);
  return 0;
}

static void print_stats(const char *what, const slab_pool *p) {
  slab_stats s;
  slab_get_stats(p, &s);
  printf("  %-34s objects %6zu (%8zu B)  slabs: full %4zu partial %3zu empty %2zu run %4zu free %6zu\n",
         what, s.objects, s.object_bytes, s.full_slabs, s.partial_slabs, s.empty_slabs, s.run_slabs,
         s.free_slabs);
}

int main(int argc, char **argv) {
  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("usage: demo-slab\n  single-process demo of antheap's slab pools (no options)\n");
    return 0;
  }
  static char kernel_mem[(size_t)8 << 20] __attribute__((aligned(4096)));
  slab_pool *kernel, *pool;
  int rc = slab_pool_create_self_hosted(&kernel, kernel_mem, sizeof kernel_mem, NULL);
  if (rc) {
    fprintf(stderr, "demo-slab: kernel pool: %s\n", strerror(rc));
    return 1;
  }
  printf("antheap demo: slab pools (slot 64 B, slab %zu B)\n", AH_SLAB_SIZE);
  print_stats("kernel pool after bootstrap", kernel);

  slab_config cfg = slab_config_default();
  cfg.base = AH_GAS_DEFAULT_BASE;
  cfg.span = AH_GAS_DEFAULT_SIZE;
  if ((rc = slab_pool_create(&pool, &cfg, kernel)) ||
      (rc = slab_add_range(pool, cfg.base, AH_PAGE_SIZE * 16))) {
    fprintf(stderr, "demo-slab: GAS pool: %s\n", strerror(rc));
    return 1;
  }
  printf("GAS pool over [%#lx, +16 MiB), metadata in the kernel pool\n", (unsigned long)cfg.base);

  enum { N = 30000 };
  static uintptr_t node[N];
  for (int i = 0; i < N; i++) slab_alloc(pool, 256, &node[i]);
  print_stats("after 30,000 x 256 B", pool);
  uintptr_t big;
  slab_alloc(pool, 50048, &big);
  print_stats("after one 50,048 B object", pool);
  for (int i = 0; i < N; i += 3) slab_free(pool, node[i]);
  print_stats("after freeing every third node", pool);
  printf("  free of a freed address: %s\n", strerror(slab_free(pool, node[0])));
  printf("  free of an interior address: %s\n", strerror(slab_free(pool, node[1] + 8)));
  printf("  pack: used slabs as coalesced ranges\n");
  size_t n = slab_pack(pool, print_range, NULL);
  printf("  %zu range(s)\n", n);
  print_stats("kernel pool (holds the metadata)", kernel);
  slab_pool_destroy(pool, NULL, NULL);
  print_stats("kernel pool after destroying it", kernel);
  return 0;
}

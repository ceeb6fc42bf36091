/* main_shmem.c: the listx-shmem binary: the OpenSHMEM variant, UPC-style, as the paper's
 * UPC code does it with upc_memget/upc_memput. Built with the flags of oshcc (Open MPI's
 * OSHMEM) and launched with oshrun (or mpirun).
 *
 * Each PE's nodes are carved from one symmetric block (shmem_malloc is collective, so nodes
 * cannot be allocated one by one per PE); a link is 1 + the next node's byte offset in the
 * block, i.e. a (PE, offset) shared pointer. The exchange walks the peer's list node by
 * node: shmem_getmem the node (its link is needed for the next step), modify it,
 * shmem_putmem it back; shmem_quiet at the end of the walk.
 *
 * Before shmem_init the program sets, unless the environment already does:
 *   OMPI_MCA_opal_common_ucx_opal_mem_hooks=0  (Debian's Open MPI 4.1.4 OSHMEM crashes at
 *                                               exit without it)
 *   SHMEM_SYMMETRIC_HEAP_SIZE                  (the list plus 64 MiB)
 */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

#include "listx.h"

static struct {
  char *base;     /* this PE's nodes (symmetric) */
  char *buf;      /* one node, local */
  double *red;    /* all-reduce slots, one per PE (symmetric) */
  long *redl;
} H;

static int sh_setup(lx_ctx *c) {
  H.base = shmem_malloc((size_t)c->o->nodes * c->o->node_size);
  H.buf = malloc(c->o->node_size);
  return H.base && H.buf ? 0 : -1;
}

static int sh_build(lx_ctx *c) {
  size_t s = c->o->node_size;
  for (long i = 0; i < c->o->nodes; i++) {
    lx_node *x = (lx_node *)(H.base + (size_t)i * s);
    lx_init_node(c, x, (uint32_t)i);
    x->next = i + 1 < c->o->nodes ? (uint64_t)(i + 1) * s + 1 : 0;
  }
  return 0;
}

static int sh_exchange(lx_ctx *c, int peer) {
  size_t s = c->o->node_size;
  uint64_t link = 1; /* the head is the first node of the peer's block */
  lx_node *x = (lx_node *)H.buf;
  for (uint32_t i = 0; link && i <= (uint32_t)c->o->nodes; i++) {
    char *remote = H.base + (link - 1);
    shmem_getmem(x, remote, s, peer);
    lx_modify(c, x, peer, i);
    link = x->next;
    shmem_putmem(remote, x, s, peer); /* returns once x may be reused */
  }
  shmem_quiet(); /* every put is complete at the peer */
  return 0;
}

static const lx_node *sh_first(lx_ctx *c) {
  (void)c;
  return (const lx_node *)H.base;
}

static const lx_node *sh_next(lx_ctx *c, const lx_node *x) {
  (void)c;
  return x->next ? (const lx_node *)(H.base + (x->next - 1)) : NULL;
}

static void sh_teardown(lx_ctx *c) {
  (void)c;
  shmem_barrier_all();
  shmem_free(H.base);
  free(H.buf);
}

static const lx_variant lx_shmem = {
    .name = "shmem",
    .setup = sh_setup,
    .build = sh_build,
    .exchange = sh_exchange,
    .first = sh_first,
    .next = sh_next,
    .teardown = sh_teardown,
};

/* ---- the runtime: barriers, and all-reduces by puts into every PE's slots ---------- */

static void sh_barrier(void) { shmem_barrier_all(); }

static double sh_max(double v) {
  int me = shmem_my_pe(), n = shmem_n_pes();
  for (int p = 0; p < n; p++) shmem_double_p(&H.red[me], v, p);
  shmem_barrier_all();
  double m = H.red[0];
  for (int p = 1; p < n; p++)
    if (H.red[p] > m) m = H.red[p];
  shmem_barrier_all(); /* the slots may be written again */
  return m;
}

static long sh_sum(long v) {
  int me = shmem_my_pe(), n = shmem_n_pes();
  for (int p = 0; p < n; p++) shmem_long_p(&H.redl[me], v, p);
  shmem_barrier_all();
  long t = 0;
  for (int p = 0; p < n; p++) t += H.redl[p];
  shmem_barrier_all();
  return t;
}

static void sh_abort(int status) { shmem_global_exit(status); }

int main(int argc, char **argv) {
  lx_opts o;
  int rc = lx_parse(argc, argv, &o, "listx-shmem", "shmem");
  if (rc) return rc > 0 ? 0 : 2;
  setenv("OMPI_MCA_opal_common_ucx_opal_mem_hooks", "0", 0);
  char heap[32];
  snprintf(heap, sizeof heap, "%zu", (size_t)o.nodes * o.node_size + ((size_t)64 << 20));
  setenv("SHMEM_SYMMETRIC_HEAP_SIZE", heap, 0);

  shmem_init();
  lx_rt rt = {.me = shmem_my_pe(), .n = shmem_n_pes(), .barrier = sh_barrier, .max = sh_max,
              .sum = sh_sum, .abort = sh_abort};
  H.red = shmem_malloc((size_t)rt.n * sizeof *H.red);
  H.redl = shmem_malloc((size_t)rt.n * sizeof *H.redl);
  const lx_variant *vs[] = {&lx_shmem};
  int status = lx_run(&o, &rt, vs, 1);
  shmem_barrier_all();
  shmem_free(H.red);
  shmem_free(H.redl);
  shmem_finalize();
  return status;
}

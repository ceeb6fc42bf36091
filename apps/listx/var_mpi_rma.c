/* var_mpi_rma.c: MPI-3 RMA, UPC-style. Each worker's nodes live in its part of one
 * MPI_Win_allocate window; a link is 1 + the next node's byte offset in the owner's part.
 * The exchange is the paper's UPC code with MPI one-sided calls: under a passive-target
 * lock on the peer, MPI_Get a node (and flush, to read its link), modify it, MPI_Put it
 * back, node after node. Two node buffers alternate so that a put's buffer is not reused
 * before the flush of the next get completes it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "listx_mpi.h"

static struct {
  MPI_Win win;
  char *base;
  char *buf[2];
} R;

static int rma_setup(lx_ctx *c) {
  MPI_Aint bytes = (MPI_Aint)c->o->nodes * (MPI_Aint)c->o->node_size;
  if (MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, lx_comm, &R.base, &R.win) != MPI_SUCCESS)
    return -1;
  R.buf[0] = malloc(c->o->node_size);
  R.buf[1] = malloc(c->o->node_size);
  return R.buf[0] && R.buf[1] ? 0 : -1;
}

static int rma_build(lx_ctx *c) {
  size_t s = c->o->node_size;
  /* local stores into this worker's part of the window, outside any access epoch */
  for (long i = 0; i < c->o->nodes; i++) {
    lx_node *x = (lx_node *)(R.base + (size_t)i * s);
    lx_init_node(c, x, (uint32_t)i);
    x->next = i + 1 < c->o->nodes ? (uint64_t)(i + 1) * s + 1 : 0;
  }
  return 0;
}

static int rma_exchange(lx_ctx *c, int peer) {
  int s = (int)c->o->node_size;
  MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, R.win);
  uint64_t link = 1; /* the head is the first node of the peer's part */
  uint32_t i = 0;
  for (; link && i <= (uint32_t)c->o->nodes; i++) {
    MPI_Aint off = (MPI_Aint)(link - 1);
    char *b = R.buf[i & 1];
    MPI_Get(b, s, MPI_BYTE, peer, off, s, MPI_BYTE, R.win);
    MPI_Win_flush(peer, R.win); /* the node is here (and the previous put has left) */
    lx_node *x = (lx_node *)b;
    lx_modify(c, x, peer, i);
    link = x->next;
    MPI_Put(b, s, MPI_BYTE, peer, off, s, MPI_BYTE, R.win);
  }
  MPI_Win_unlock(peer, R.win); /* every put is complete at the peer */
  return 0;
}

static const lx_node *rma_first(lx_ctx *c) {
  (void)c;
  /* make the peers' puts visible to this worker's loads */
  MPI_Win_lock(MPI_LOCK_SHARED, c->me, 0, R.win);
  MPI_Win_sync(R.win);
  MPI_Win_unlock(c->me, R.win);
  return (const lx_node *)R.base;
}

static const lx_node *rma_next(lx_ctx *c, const lx_node *x) {
  (void)c;
  return x->next ? (const lx_node *)(R.base + (x->next - 1)) : NULL;
}

static void rma_teardown(lx_ctx *c) {
  (void)c;
  MPI_Win_free(&R.win);
  free(R.buf[0]);
  free(R.buf[1]);
}

const lx_variant lx_mpi_rma = {
    .name = "mpi-rma",
    .setup = rma_setup,
    .build = rma_build,
    .exchange = rma_exchange,
    .first = rma_first,
    .next = rma_next,
    .teardown = rma_teardown,
};

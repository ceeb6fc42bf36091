/* var_mpi_pack.c: hand-marshalled MPI, the "efficient and difficult" way. Nodes are malloc'd
 * one by one, linked by pointers. To exchange, a worker traverses its list and packs every
 * node's payload (all but the link) into a buffer; partners swap the counts and then the
 * buffers (MPI_Sendrecv); the receiver unpacks into freshly malloc'd nodes and re-links
 * them, modifies the list, packs it again and sends it back; the owner unpacks the payloads
 * into its own nodes, in list order.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "listx_mpi.h"

#define LINK sizeof(uint64_t) /* the link is the node's first field */

static struct {
  lx_node *head;
  MPI_Datatype payload; /* one node without its link */
  char *buf[2];         /* pack buffers: [0] out, [1] in */
  size_t cap[2];        /* nodes each holds */
} P;

static int pack_setup(lx_ctx *c) {
  MPI_Type_contiguous((int)(c->o->node_size - LINK), MPI_BYTE, &P.payload);
  MPI_Type_commit(&P.payload);
  return 0;
}

/* Room for a number of nodes in buffer b (0 out, 1 in); contents are not kept. */
static int reserve(int b, size_t nodes, size_t s) {
  if (nodes <= P.cap[b]) return 0;
  free(P.buf[b]);
  P.buf[b] = malloc(nodes * (s - LINK));
  P.cap[b] = P.buf[b] ? nodes : 0;
  return P.buf[b] ? 0 : -1;
}

static int pack_build(lx_ctx *c) {
  lx_node **tail = &P.head;
  for (long i = 0; i < c->o->nodes; i++) {
    lx_node *x = malloc(c->o->node_size);
    if (!x) return -1;
    lx_init_node(c, x, (uint32_t)i);
    *tail = x;
    tail = (lx_node **)&x->next;
  }
  *tail = NULL;
  return reserve(0, (size_t)c->o->nodes, c->o->node_size);
}

/* Traverse a list and copy each node's payload into buf; the node count. */
static long pack(const lx_node *x, char *buf, size_t s) {
  long n = 0;
  for (; x; x = (const lx_node *)x->next, n++)
    memcpy(buf + (size_t)n * (s - LINK), (const char *)x + LINK, s - LINK);
  return n;
}

/* Swap packed lists with the peer: send n nodes from the out buffer, receive into the in
 * buffer; the count received, or -1. */
static long swap(int peer, long n, size_t s) {
  long m;
  MPI_Sendrecv(&n, 1, MPI_LONG, peer, 1, &m, 1, MPI_LONG, peer, 1, lx_comm, MPI_STATUS_IGNORE);
  if (m < 0 || m > INT_MAX || reserve(1, (size_t)m, s)) return -1;
  MPI_Sendrecv(P.buf[0], (int)n, P.payload, peer, 2, P.buf[1], (int)m, P.payload, peer, 2,
               lx_comm, MPI_STATUS_IGNORE);
  return m;
}

static int pack_exchange(lx_ctx *c, int peer) {
  size_t s = c->o->node_size;
  long m = swap(peer, pack(P.head, P.buf[0], s), s);
  if (m < 0) return -1;
  /* unpack the peer's list into new nodes and re-link them */
  lx_node *theirs = NULL, **tail = &theirs;
  for (long j = 0; j < m; j++) {
    lx_node *x = malloc(s);
    if (!x) return -1;
    memcpy((char *)x + LINK, P.buf[1] + (size_t)j * (s - LINK), s - LINK);
    *tail = x;
    tail = (lx_node **)&x->next;
  }
  *tail = NULL;
  uint32_t i = 0;
  for (lx_node *x = theirs; x; x = (lx_node *)x->next, i++) lx_modify(c, x, peer, i);
  /* pack it back, free it, and take my own list back */
  if (reserve(0, (size_t)m, s)) return -1;
  long back = pack(theirs, P.buf[0], s);
  while (theirs) {
    lx_node *next = (lx_node *)theirs->next;
    free(theirs);
    theirs = next;
  }
  long mine = swap(peer, back, s);
  if (mine != c->o->nodes) {
    fprintf(stderr, "listx: worker %d: worker %d gave back %ld nodes of %ld\n", c->me, peer,
            mine, c->o->nodes);
    c->bad++;
  }
  long j = 0;
  for (lx_node *x = P.head; x && j < mine; x = (lx_node *)x->next, j++)
    memcpy((char *)x + LINK, P.buf[1] + (size_t)j * (s - LINK), s - LINK);
  return 0;
}

static const lx_node *pack_first(lx_ctx *c) {
  (void)c;
  return P.head;
}

static const lx_node *pack_next(lx_ctx *c, const lx_node *x) {
  (void)c;
  return (const lx_node *)x->next;
}

static void pack_release(lx_ctx *c) {
  (void)c;
  while (P.head) {
    lx_node *next = (lx_node *)P.head->next;
    free(P.head);
    P.head = next;
  }
}

static void pack_teardown(lx_ctx *c) {
  (void)c;
  MPI_Type_free(&P.payload);
  for (int b = 0; b < 2; b++) {
    free(P.buf[b]);
    P.buf[b] = NULL;
    P.cap[b] = 0;
  }
}

const lx_variant lx_mpi_pack = {
    .name = "mpi-pack",
    .setup = pack_setup,
    .build = pack_build,
    .exchange = pack_exchange,
    .first = pack_first,
    .next = pack_next,
    .release = pack_release,
    .teardown = pack_teardown,
};

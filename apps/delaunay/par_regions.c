/* par_regions.c: the regions of the parallel program: worker 0 creates the quadtree of
 * regions and the cells' headers; chunks of triangles come from sys_alloc in the cell's region;
 * postponed points are stored in their cell's region (so they travel with it); and the moves
 * of regions between workers (sys_send/sys_recv), in the deadlock-free order of plan_moves. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "par.h"

/* ---- chunks of a cell's pool: one sys_alloc each, growing from 64 KiB to 4 MiB (a large
 * object costs one round trip, where a batch of cache-sized chunks cost a lease per slab) ---- */
#define CHUNK_MIN (64u << 10)
#define CHUNK_MAX (4u << 20)

static rid_t cell_rid(int cell) { return G.rid[plan_node(G.p.K + 1, cell % G.p.G, cell / G.p.G)]; }

int par_refill(void *ctx, int cell, dt_pool *pool) {
  (void)ctx;
  cell_hdr *h = G.hdr[cell];
  size_t bytes = h->chunk ? h->chunk : CHUNK_MIN;
  h->chunk = bytes * 2 > CHUNK_MAX ? CHUNK_MAX : bytes * 2;
  double t0 = now();
  dt_chunk *c = sys_alloc(bytes, cell_rid(cell));
  G.scomm += now() - t0;
  if (c && !getenv("DT_NO_POPULATE"))
    dt_populate(c, bytes); /* computation: the serial run does the same */
  G.nchunks++;
  if (!c) return -1;
  c->bytes = bytes;
  c->next = pool->spare;
  pool->spare = c;
  return 0;
}

/* ---- set-up: worker 0 creates the inner regions of the quadtree and gives each worker the
 * last-level region of its block; every worker then creates the four cells of that block (with
 * their headers) at the same time and gives the block back, and all learn every ID and header.
 * Worker 0 holds every region when level 0 starts (the hand-over rule: a region has one
 * holder, and sys_give passes it on without moving bytes). A sys_barrier makes the headers
 * ordinary objects before any region moves. Worker 0 clears every header when it starts (with
 * a private GAS it does not see the other workers' bytes). ---- */
typedef struct cell_made {
  int32_t cell;
  rid_t rid;
  cell_hdr *hdr;
} cell_made;

void par_make_regions(void) {
  const dt_plan *p = &G.p;
  G.rid = calloc((size_t)p->nnodes, sizeof *G.rid);
  G.holder = calloc((size_t)p->nnodes, sizeof *G.holder); /* worker 0 holds all at first */
  G.hdr = calloc((size_t)p->ncells, sizeof *G.hdr);
  G.pools = calloc((size_t)p->ncells, sizeof *G.pools);
  G.own = calloc((size_t)p->ncells, 1);
  G.pend = calloc((size_t)p->ncells, sizeof *G.pend);
  G.npend = calloc((size_t)p->ncells, sizeof *G.npend);
  G.cap_pend = calloc((size_t)p->ncells, sizeof *G.cap_pend);
  cell_made mine[4], *all = calloc((size_t)G.W * 4, sizeof *all);
  if (!G.rid || !G.holder || !G.hdr || !G.pools || !G.own || !G.pend || !G.npend || !G.cap_pend || !all)
    die("out of memory");
  double t0 = now();
  if (G.me == 0)
    for (int d = 0; d <= p->K; d++)
      for (int y = 0; y < 1 << d; y++)
        for (int x = 0; x < 1 << d; x++) {
          rid_t parent = d ? G.rid[plan_node(d - 1, x / 2, y / 2)] : SYS_ROOT_REGION;
          if (!(G.rid[plan_node(d, x, y)] = sys_ralloc(parent, SYS_NO_LEVEL_HINT)))
            die("sys_ralloc");
        }
  for (int c = 0; G.me == 0 && c < p->ncells; c += 2) { /* each block's node to its worker */
    int x = c % p->G, y = c / p->G, w = plan_cell_owner(p, p->K, 0, x, y);
    if (x % 2 == 0 && y % 2 == 0 && w != 0 &&
        sys_give(w, &G.rid[plan_node(p->K, x / 2, y / 2)], 1))
      die("sys_give of a block's region"); /* and back below: the holders end as they began */
  }
  G.scomm += now() - t0;
  t0 = now();
  MPI_Bcast(G.rid, p->nnodes, MPI_UINT32_T, 0, sys_comm());
  G.wcomm += now() - t0;
  t0 = now();
  int n = 0;
  rid_t block = 0;
  for (int c = 0; c < p->ncells; c++) {
    int x = c % p->G, y = c / p->G;
    if (plan_cell_owner(p, p->K, 0, x, y) != G.me) continue;
    block = G.rid[plan_node(p->K, x / 2, y / 2)];
    rid_t r = sys_ralloc(block, SYS_NO_LEVEL_HINT);
    cell_hdr *h = r ? sys_alloc(sizeof *h, r) : NULL;
    if (!h) die("creating a cell region and its header");
    memset(h, 0, sizeof *h);
    mine[n++] = (cell_made){c, r, h};
  }
  if (n != 4) die("a last-level block is not four cells");
  if (G.me != 0 && sys_give(0, &block, 1)) die("sys_give of a block to worker 0");
  G.scomm += now() - t0;
  t0 = now();
  MPI_Allgather(mine, 4 * (int)sizeof *mine, MPI_BYTE, all, 4 * (int)sizeof *mine, MPI_BYTE,
                sys_comm());
  if (sys_barrier()) die("sys_barrier");
  G.wcomm += now() - t0;
  for (int i = 0; i < 4 * G.W; i++) {
    G.rid[plan_node(p->K + 1, all[i].cell % p->G, all[i].cell / p->G)] = all[i].rid;
    G.hdr[all[i].cell] = all[i].hdr;
  }
  free(all);
  for (int c = 0; c < p->ncells; c++) {
    if (G.me == 0) memset(G.hdr[c], 0, sizeof *G.hdr[c]);
    G.pools[c] = &G.hdr[c]->pool;
  }
}

void par_postpone(const dt_pt *q) {
  int c = dt_cell_of(&G.m, q->x, q->y);
  if (G.npend[c] == G.cap_pend[c]) {
    size_t cap = G.cap_pend[c] ? 2 * G.cap_pend[c] : 256;
    dt_pt *p = realloc(G.pend[c], cap * sizeof *p);
    if (!p) die("out of memory for postponed points");
    G.pend[c] = p;
    G.cap_pend[c] = cap;
  }
  G.pend[c][G.npend[c]++] = *q;
}

/* The points waiting in the headers of my cells, appended to list (the header keeps its
 * array, an object in the cell's region, for the next time). */
dt_pt *par_take_pending(dt_pt *list, size_t *n) {
  for (int c = 0; c < G.p.ncells; c++) {
    cell_hdr *h = G.hdr[c];
    if (!G.own[c] || !h->npend) continue;
    dt_pt *l = realloc(list, (*n + (size_t)h->npend + 1) * sizeof *l);
    if (!l) die("out of memory");
    list = l;
    memcpy(list + *n, h->pend, (size_t)h->npend * sizeof *list);
    *n += (size_t)h->npend;
    h->npend = 0;
  }
  return list;
}

/* What stayed postponed goes into the headers of my cells, to travel with their regions. The
 * array grows by doubling (a scheduler round trip only then). */
void par_store_pending(void) {
  for (int c = 0; c < G.p.ncells; c++) {
    if (!G.npend[c]) continue;
    cell_hdr *h = G.hdr[c];
    if ((int64_t)G.npend[c] > h->cap_pend) {
      int64_t cap = h->cap_pend ? h->cap_pend : 256;
      while (cap < (int64_t)G.npend[c]) cap *= 2;
      double t0 = now();
      if (h->pend && sys_free(h->pend)) die("sys_free of a postponed-points object");
      h->pend = sys_alloc((size_t)cap * sizeof *h->pend, cell_rid(c));
      G.scomm += now() - t0;
      if (!h->pend) die("sys_alloc of postponed points");
      h->cap_pend = cap;
    }
    memcpy(h->pend, G.pend[c], G.npend[c] * sizeof *h->pend);
    h->npend = (int64_t)G.npend[c];
    G.npend[c] = 0;
  }
}

/* A move of the depth-d region at (x, y) from worker a to worker b takes every region of its
 * subtree that a holds (the others stay with their holders). */
static void replay_move(int d, int x, int y, int a, int b) {
  for (int e = d, side = 1; e <= G.p.K + 1; e++, side *= 2)
    for (int j = y * side; j < (y + 1) * side; j++)
      for (int i = x * side; i < (x + 1) * side; i++) {
        int *h = &G.holder[plan_node(e, i, j)];
        if (*h == a) *h = b;
      }
}

/* Execute the moves of the depth-d regions between two ownership states. */
void par_move(int d, int k0, int ph0, int k1, int ph1) {
  dt_move *mv;
  int *buf;
  int nm = plan_moves(&G.p, d, k0, ph0, k1, ph1, &mv, &buf);
  if (nm < 0) die("out of memory");
  double t0 = now();
  for (int i = 0; i < nm; i++) {
    rid_t r[1024];
    int cnt = mv[i].count > 1024 ? 1024 : mv[i].count;
    for (int j = 0; j < cnt; j++) r[j] = G.rid[mv[i].nodes[j]];
    if (mv[i].from == G.me && sys_send(mv[i].to, r, cnt, NULL, 0)) die("sys_send of regions");
    if (mv[i].to == G.me && sys_recv(mv[i].from, r, cnt, NULL, 0)) die("sys_recv of regions");
    for (int j = 0; j < mv[i].count; j++) { /* every worker follows every move */
      int at = mv[i].nodes[j] - plan_node(d, 0, 0);
      replay_move(d, at & ((1 << d) - 1), at >> d, mv[i].from, mv[i].to);
    }
  }
  G.wcomm += now() - t0;
  free(mv);
  free(buf);
}

int64_t par_my_pending(void) {
  int64_t n = 0;
  for (int c = 0; c < G.p.ncells; c++)
    if (G.own[c]) n += G.hdr[c]->npend;
  return n;
}

/* Every cell region to worker 0 (from the owners of phase 3 of the last level). */
void par_gather_to_0(void) {
  const dt_plan *p = &G.p;
  int n = p->ncells;
  double t0 = now();
  rid_t *r = malloc((size_t)n * sizeof *r);
  if (!r) die("out of memory");
  for (int w = 1; w < G.W; w++) {
    int k = 0;
    for (int c = 0; c < n; c++)
      if (plan_cell_owner(p, p->K, 3, c % p->G, c / p->G) == w)
        r[k++] = G.rid[plan_node(p->K + 1, c % p->G, c / p->G)];
    if (!k) continue;
    if (G.me == w && sys_send(0, r, k, NULL, 0)) die("sys_send to worker 0");
    if (G.me == 0 && sys_recv(w, r, k, NULL, 0)) die("sys_recv at worker 0");
  }
  free(r);
  G.wcomm += now() - t0;
  for (int c = 0; c < n; c++) G.own[c] = G.me == 0;
  for (int c = 0; c < n; c++) G.holder[plan_node(p->K + 1, c % p->G, c / p->G)] = 0;
}

void par_free_regions(void) {
  const dt_plan *p = &G.p;
  for (int d = p->K + 1; d >= 0; d--) {
    for (int y = 0; y < 1 << d; y++)
      for (int x = 0; x < 1 << d; x++) {
        int node = plan_node(d, x, y);
        if (G.holder[node] == G.me && sys_rfree(G.rid[node])) die("sys_rfree of a region");
      }
    MPI_Barrier(sys_comm()); /* the next depth up frees nothing that is still held below */
  }
}

/* par_regions.c: the regions of the parallel program. The tree is made in parallel (a binary
 * tree over the workers: each holder makes two children and gives one away), every worker makes
 * the nine cells of its block (each a region with its header); chunks of triangles come from
 * sys_alloc in the cell's region, sized from the points the cell will get; postponed points
 * are stored in their cell's region (so they travel with it); cells move between
 * configurations with sys_send/sys_recv in the deadlock-free rounds of dt_plan_moves; at the end
 * every region is freed by its holder, the deepest first. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "par.h"

enum { TAG_TREE = 301, TAG_HANDSHAKE = 302 };

/* ---- chunks of a cell's pool: one sys_alloc each. The first, made at set-up by the cell's
 * maker, has room for the points inserted before the main phase (first_bytes); a refill before
 * the main phase takes a default chunk (from 128 KiB, doubling): the cells hold little then and
 * move between workers, and a window's worker would fault in memory its blocks' workers will
 * use. The main phase's first refill is as large as the cell's points will need (2.1 triangles
 * a point, the mean of a Delaunay mesh, plus a margin), so a cell costs one or two round trips
 * there and its worker faults its pages in once.
 *
 * Where every worker shares the GAS memory (sys_shares_gas: a move copies no bytes), the
 * block's worker allocates that main part at set-up instead (unless DT_MAIN_PART=late or 0), in
 * a region of its own per cell (a child of the block's region, beside the cell), and it is
 * faulted in beside the phases before the main one (by the presort's helper, or with
 * DT_MAIN_PART=waits in the handshakes' waits; par_presort.c; without a helper at the main
 * phase's start): the main phase then makes no round trip and takes no page fault for its
 * triangles. The part's region stays with the block's worker while the cell
 * moves through the zones (a receiver maps what it is handed: behind the cell's first chunk, a
 * part would be mapped by every worker the cell visits), joins the cell's pool when the main
 * phase starts (par_attach_parts) and from then on moves with the cell. Where moves copy it is
 * never done: every allocated byte of a region travels. */
#define CHUNK_MIN (64u << 10)
#define CHUNK_MAX (4u << 20)
#define CHUNK_HUGE ((size_t)256 << 20)

/* The size of the cell's next default chunk, growing to CHUNK_MAX. */
static size_t next_default(cell_hdr *h) {
  size_t bytes = h->chunk ? h->chunk : CHUNK_MIN;
  h->chunk = bytes * 2 > CHUNK_MAX ? CHUNK_MAX : bytes * 2;
  return bytes;
}

/* A chunk of `bytes` allocated in the region of the cell with header h and pool p, not carved
 * yet: onto the pool's spares. */
static void push_spare(cell_hdr *h, dt_pool *p, dt_chunk *c, size_t bytes) {
  h->given += bytes;
  c->bytes = bytes;
  c->next = p->spare;
  p->spare = c;
}

/* sys_alloc, the round trip timed as scheduler communication; NULL when refused. */
static void *sched_alloc(size_t bytes, rid_t r) {
  double t0 = now();
  void *p = sys_alloc(bytes, r);
  G.scomm += now() - t0;
  return p;
}

static dt_chunk *alloc_chunk(size_t bytes, rid_t cell) {
  dt_chunk *c = sched_alloc(bytes, cell);
  if (c) G.nchunks++;
  return c;
}

/* A chunk's pages faulted in at once (computation: the serial run does the same), unless
 * DT_NO_POPULATE is set (read once). */
static void populate(dt_chunk *c, size_t bytes) {
  static int off = -1;
  if (off < 0) off = getenv("DT_NO_POPULATE") != NULL;
  if (off) return;
  double t0 = now();
  dt_populate(c, bytes);
  G.pop += now() - t0;
}

/* What a cell's triangles will take in all: 2.1 a point plus a margin. */
static size_t cell_need(int cell) {
  return (size_t)(2.1 * (double)G.expect[cell] * sizeof(dt_tri)) + CHUNK_MIN;
}

int par_refill(void *ctx, int cell, dt_pool *pool) {
  (void)ctx;
  cell_hdr *h = G.hdr[cell];
  size_t bytes = next_default(h);
  size_t need = cell_need(cell);
  if (!G.small_chunks && need > h->given + bytes) bytes = need - h->given;
  if (bytes > CHUNK_HUGE) bytes = CHUNK_HUGE;
  dt_chunk *c = alloc_chunk(bytes, G.cell_rid[cell]);
  if (!c) return -1;
  G.refills++;
  populate(c, bytes);
  push_spare(h, pool, c, bytes);
  return 0;
}

/* ---- set-up ---- */
static rid_t ralloc(rid_t parent, int hint) {
  double t0 = now();
  rid_t r = sys_ralloc(parent, hint);
  G.scomm += now() - t0;
  if (!r) die("sys_ralloc");
  return r;
}

/* The inner regions sit at the top scheduler (a scheduler tree then serves each block's cells
 * at the leaf of the worker that made them); blocks and cells at leaves. */
static int hint_of(int depth) { return depth < G.p.m ? 0 : SYS_NO_LEVEL_HINT; }

/* The binary tree of regions over the workers, made in parallel: the holder of the node of
 * workers [a, a + 2s) makes its two children, keeps the first and gives the second to worker
 * a + s (sys_give, then its ID by MPI), who goes on below it. m rounds; every worker ends
 * holding its block's region (depth m). */
static rid_t make_tree(void) {
  int m = G.p.m;
  G.nodes = malloc((size_t)(m + 2) * sizeof *G.nodes);
  if (!G.nodes) die("out of memory");
  G.nnodes = 0;
  rid_t cur = G.me == 0 ? ralloc(SYS_ROOT_REGION, hint_of(0)) : 0;
  for (int d = 0; d < m; d++) {
    int span = 1 << (m - d), half = span / 2;
    if (G.me % span == 0) {
      rid_t left = ralloc(cur, hint_of(d + 1)), right = ralloc(cur, hint_of(d + 1));
      G.nodes[G.nnodes++] = cur;
      double t0 = now();
      if (sys_give(G.me + half, &right, 1)) die("sys_give of a subtree's region");
      G.scomm += now() - t0;
      t0 = now();
      MPI_Send(&right, 1, MPI_UINT32_T, G.me + half, TAG_TREE, sys_comm());
      G.wcomm += now() - t0;
      cur = left;
    } else if (G.me % span == half) {
      double t0 = now();
      MPI_Recv(&cur, 1, MPI_UINT32_T, G.me - half, TAG_TREE, sys_comm(), MPI_STATUS_IGNORE);
      G.wcomm += now() - t0;
    }
  }
  G.nodes[G.nnodes++] = cur;
  return cur;
}

static void alloc_tables(void) {
  size_t n = (size_t)G.p.ncells;
  G.cell_rid = calloc(n, sizeof *G.cell_rid);
  G.part_rid = calloc(n, sizeof *G.part_rid);
  G.hdr = calloc(n, sizeof *G.hdr);
  G.pools = calloc(n, sizeof *G.pools);
  G.holder = calloc(n, sizeof *G.holder);
  G.own = calloc(n, 1);
  G.pend = calloc(n, sizeof *G.pend);
  G.npend = calloc(n, sizeof *G.npend);
  G.cap_pend = calloc(n, sizeof *G.cap_pend);
  if (!G.cell_rid || !G.part_rid || !G.hdr || !G.pools || !G.holder || !G.own || !G.pend ||
      !G.npend || !G.cap_pend)
    die("out of memory");
}

typedef struct cell_made {
  rid_t rid;
  rid_t part_rid;  /* the region of the cell's main part (0: none, made at the main phase) */
  cell_hdr *hdr;
  dt_chunk *first; /* the cell's first chunk of triangles (first_bytes), behind hdr */
} cell_made;

/* The main parts of my block's cells (made here, attached at the main phase's start). */
static struct {
  dt_chunk *at;
  size_t bytes;
} my_part[9];

/* The first chunk's size: room for the triangles of the points inserted in the cell before the
 * main phase (the sample and the zones, counted by the distribution; 2.1 a point, a quarter
 * more for the triangles whose circumcentres fall next door), at least CHUNK_MIN. So the zone
 * phases rarely refill: each refill is a scheduler round trip, and on a host with a rank more
 * than cores the scheduler answers slowly while the workers that wait spin. */
static size_t first_bytes(int cell) {
  size_t early = G.early ? (size_t)G.early[cell] : 0;
  size_t bytes = (size_t)(1.25 * 2.1 * (double)early * sizeof(dt_tri)) + CHUNK_MIN;
  bytes = (bytes + 4095) & ~(size_t)4095;
  return bytes > CHUNK_HUGE ? CHUNK_HUGE : bytes;
}

/* The main part of a cell: what the cell will need in all less the first chunk, in whole
 * pages; 0 when that is less than a default chunk or more than CHUNK_HUGE (the main phase
 * refills as it would have). */
static size_t main_part_bytes(int cell) {
  if (!G.expect) return 0; /* (all points on one line: nothing distributed, nothing inserted) */
  size_t first = first_bytes(cell), need = cell_need(cell);
  if (need < first + CHUNK_MIN) return 0;
  size_t bytes = (need - first + 4095) & ~(size_t)4095;
  return bytes > CHUNK_HUGE ? 0 : bytes;
}

/* The room of a cell's header in front of its first chunk. */
#define HDR_ROOM ((sizeof(cell_hdr) + 63) & ~(size_t)63)

/* A cell's header with its first chunk behind it: one sys_alloc by the worker that makes the
 * cell (worker 0, which inserts the sample into every cell, would otherwise make 9 W round
 * trips alone, one after the other; here every worker makes its nine at the same time). Both
 * are faulted in here: with a shared GAS the pages are then made in parallel and worker 0 only
 * maps them (with a private one this is lost). Only the header is written here; worker 0 clears
 * it again (a private GAS would not show it ours). */
static cell_made make_cell(rid_t rid, int cell) {
  size_t first = first_bytes(cell);
  char *at = sched_alloc(HDR_ROOM + first, rid);
  if (!at) die("sys_alloc of a cell's header and first chunk");
  G.nchunks++;
  memset(at, 0, sizeof(cell_hdr));
  populate((dt_chunk *)at, HDR_ROOM + first);
  return (cell_made){rid, 0, (cell_hdr *)at, (dt_chunk *)(at + HDR_ROOM)};
}

/* The main part of my block's k-th cell (where main_parts): a region of its own under my
 * block's, its room in one sys_alloc, faulted in later (par_presort_populate). */
static rid_t make_part(rid_t block, int k) {
  size_t bytes = main_part_bytes(9 * G.me + k);
  if (!bytes) return 0;
  rid_t r = ralloc(block, SYS_NO_LEVEL_HINT);
  my_part[k].at = alloc_chunk(bytes, r);
  if (!my_part[k].at) die("sys_alloc of a cell's main part");
  my_part[k].bytes = bytes;
  par_presort_populate(my_part[k].at, bytes);
  return r;
}

/* On worker 0: the cell's first chunk onto its pool's spares, as its first refill would;
 * worker 0 maps only the pages the sample needs. */
static void install_first_chunk(cell_hdr *h, const cell_made *made, int cell) {
  populate(made->first, CHUNK_MIN); /* (first_bytes is at least that) */
  h->chunk = 2 * CHUNK_MIN; /* the default chunks after it */
  push_spare(h, &h->pool, made->first, first_bytes(cell));
}

/* DT_DEBUG's counts of the main phase, summed over the workers after the timed part
 * (par_debug_totals): a collective inside a phase would make every worker wait there for the
 * slowest and hide where the time goes. */
static int64_t parts_attached_here, main_refills_here;

void par_debug_totals(void) {
  int64_t mine[2] = {parts_attached_here, main_refills_here}, all[2] = {0, 0};
  if (!G.debug) return;
  MPI_Reduce(mine, all, 2, MPI_INT64_T, MPI_SUM, 0, sys_comm());
  if (G.me != 0) return;
  fprintf(stderr, "delaunay: %lld main parts attached to their cells' pools\n", (long long)all[0]);
  fprintf(stderr, "delaunay: the main phase took %lld chunks from the scheduler\n",
          (long long)all[1]);
}

void par_attach_parts(void) {
  int64_t attached = 0;
  for (int k = 0; k < 9; k++) {
    int c = 9 * G.me + k;
    if (!my_part[k].at) continue;
    if (!G.own[c]) {
      errno = EPROTO;
      die("a cell's main part without its cell");
    }
    push_spare(G.hdr[c], &G.hdr[c]->pool, my_part[k].at, my_part[k].bytes);
    my_part[k].at = NULL;
    attached++;
  }
  G.parts_attached = 1;
  parts_attached_here = attached;
}

void par_count_main_refills(int64_t refills_before) {
  main_refills_here = G.refills - refills_before;
}

int par_main_part_setting(void) {
  const char *when = getenv("DT_MAIN_PART");
  if (!when || !strcmp(when, "early")) return MAIN_EARLY;
  if (!strcmp(when, "waits")) return MAIN_WAITS;
  return !strcmp(when, "late") || !strcmp(when, "0") ? 0 : -1;
}

/* G.main_parts: what DT_MAIN_PART asks (par_main_part_setting, checked at start-up), where
 * every worker shares the GAS memory with every other (a move copies no bytes); else 0. A
 * collective, whatever each worker's environment says. */
static int main_parts_mode(void) {
  int mode = par_main_part_setting();
  int mine = mode > 0, all = 0;
  for (int p = 0; mine && p < G.W; p++) mine &= sys_shares_gas(p) == 1;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, sys_comm());
  return all ? mode : 0;
}

/* The tree in parallel, then every worker its block's nine cells (each with its header and
 * first chunk) at the same time, given to worker 0 (which inserts the sample with everything
 * owned) with sys_give: no bytes move; their main parts (where main_parts) stay with it. All
 * learn every cell's ID, header and first chunk.
 * Worker 0 clears every header (with a private GAS it does not see the other workers' bytes). */
void par_make_regions(void) {
  alloc_tables();
  int main_parts = G.main_parts = main_parts_mode();
  if (main_parts && G.debug && G.me == 0)
    fprintf(stderr, "delaunay: the cells' main parts made at set-up (%s)\n",
            main_parts == MAIN_WAITS || G.presort == PRESORT_WAITS ? "faulted in during waits"
            : G.presort                                             ? "faulted in by the helper"
                                     : "faulted in at the main phase's start");
  rid_t block = make_tree();
  cell_made mine[9];
  rid_t r[9];
  for (int k = 0; k < 9; k++) {
    r[k] = ralloc(block, SYS_NO_LEVEL_HINT); /* (timed there) */
    mine[k] = make_cell(r[k], 9 * G.me + k);
    if (main_parts) mine[k].part_rid = make_part(block, k);
  }
  double t0 = now();
  if (G.me != 0 && sys_give(0, r, 9)) die("sys_give of the cells to worker 0");
  G.scomm += now() - t0;
  cell_made *all = malloc((size_t)G.p.ncells * sizeof *all);
  if (!all) die("out of memory");
  t0 = now();
  MPI_Allgather(mine, 9 * (int)sizeof *mine, MPI_BYTE, all, 9 * (int)sizeof *mine, MPI_BYTE,
                sys_comm());
  G.wcomm += now() - t0;
  for (int c = 0; c < G.p.ncells; c++) {
    G.cell_rid[c] = all[c].rid;
    G.part_rid[c] = all[c].part_rid;
    G.hdr[c] = all[c].hdr;
    G.pools[c] = &all[c].hdr->pool;
    G.holder[c] = 0;
    G.own[c] = G.me == 0;
    if (G.me == 0) {
      memset(G.hdr[c], 0, sizeof *G.hdr[c]);
      install_first_chunk(G.hdr[c], &all[c], c);
    }
  }
  free(all);
}

/* ---- postponed points ---- */
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
      h->pend = sys_alloc((size_t)cap * sizeof *h->pend, G.cell_rid[c]);
      G.scomm += now() - t0;
      if (!h->pend) die("sys_alloc of postponed points");
      h->cap_pend = cap;
    }
    memcpy(h->pend, G.pend[c], G.npend[c] * sizeof *h->pend);
    h->npend = (int64_t)G.npend[c];
    G.npend[c] = 0;
  }
}

int64_t par_my_pending(int64_t *per_cell) {
  int64_t n = 0;
  for (int c = 0; c < G.p.ncells; c++) {
    int64_t k = G.own[c] ? G.hdr[c]->npend : 0;
    if (per_cell) per_cell[c] = k;
    n += k;
  }
  return n;
}

/* ---- moves ---- */
/* DT_DEBUG: each of my moves (phase, peer, direction, cells, the handshake's wait, the move's
 * time, the minor faults during it), printed by par_print_moves. */
#define LOGGED_MOVES 256
typedef struct logged_move {
  int phase, peer, sending, cells;
  double wait, move;
  long faults;
} logged_move;
static logged_move moves_log[LOGGED_MOVES];
static int nmoves_log;

static long minor_faults(void) {
  struct rusage ru;
  return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_minflt;
}

void par_print_moves(void) {
  for (int i = 0; i < nmoves_log; i++)
    fprintf(stderr, "worker %d move: phase %d %s %d, %d cells, wait %.2f ms, move %.2f ms, %ld faults\n",
            G.me, moves_log[i].phase, moves_log[i].sending ? "to" : "from", moves_log[i].peer,
            moves_log[i].cells, 1e3 * moves_log[i].wait, 1e3 * moves_log[i].move,
            moves_log[i].faults);
}

/* The handshake before a move: both partners are there. Its wait may gather and sort the main
 * phase's points (DT_PRESORT=waits) and fault in the main parts (par_prep_piece) a slice at a
 * time, about 0.1 ms each on the 16-core box, until the partner's byte is in. */
static void handshake(int peer) {
  char x = 0, y;
  MPI_Request rq[2];
  MPI_Irecv(&y, 1, MPI_CHAR, peer, TAG_HANDSHAKE, sys_comm(), &rq[0]);
  MPI_Isend(&x, 1, MPI_CHAR, peer, TAG_HANDSHAKE, sys_comm(), &rq[1]);
  par_wait_prepping(2, rq);
}

void par_wait_prepping(int n, MPI_Request *rq) {
  int done = 0;
  MPI_Testall(n, rq, &done, MPI_STATUSES_IGNORE);
  while (!done && par_prep_piece(PREP_POINTS, PREP_BYTES))
    MPI_Testall(n, rq, &done, MPI_STATUSES_IGNORE);
  if (!done) MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
}

/* The regions of the cells cells[0..n): each cell's, and its main part's once attached. */
static int move_regions(const int *cells, int n, rid_t *r) {
  int k = 0;
  for (int j = 0; j < n; j++) {
    r[k++] = G.cell_rid[cells[j]];
    if (G.parts_attached && G.part_rid[cells[j]]) r[k++] = G.part_rid[cells[j]];
  }
  return k;
}

/* One move of mine: a pairwise handshake (its time is the wait for the partner to finish what
 * it was doing), then the regions, those of at most MOVE_CELLS cells to a call (two regions a
 * cell at most: its own and its main part's). */
#define MOVE_REGIONS 1024
#define MOVE_CELLS (MOVE_REGIONS / 2)
static void do_move(const dt_move *mv, int sending) {
  int peer = sending ? mv->to : mv->from;
  double t0 = now();
  handshake(peer);
  double waited = now() - t0;
  G.wait += waited;
  long f0 = G.debug ? minor_faults() : 0;
  t0 = now();
  for (int at = 0; at < mv->count; at += MOVE_CELLS) {
    rid_t r[MOVE_REGIONS];
    int cells = mv->count - at > MOVE_CELLS ? MOVE_CELLS : mv->count - at;
    int cnt = move_regions(mv->cells + at, cells, r);
    if (sending && sys_send(peer, r, cnt, NULL, 0)) die("sys_send of cells");
    if (!sending && sys_recv(peer, r, cnt, NULL, 0)) die("sys_recv of cells");
  }
  G.wcomm += now() - t0;
  G.ph[G.phase].moves += 1;
  G.ph[G.phase].cells += mv->count;
  if (G.debug && nmoves_log < LOGGED_MOVES)
    moves_log[nmoves_log++] = (logged_move){G.phase, peer, sending, mv->count, waited,
                                                     now() - t0, minor_faults() - f0};
}

void par_transition(const int *to) {
  dt_move *mv;
  int *buf;
  int nm = dt_plan_moves(&G.p, G.holder, to, &mv, &buf);
  if (nm < 0) die("out of memory");
  for (int i = 0; i < nm; i++)
    if (mv[i].from == G.me || mv[i].to == G.me) do_move(&mv[i], mv[i].from == G.me);
  free(mv);
  free(buf);
  for (int c = 0; c < G.p.ncells; c++) {
    G.holder[c] = to[c];
    G.own[c] = to[c] == G.me;
  }
}

/* The cells (and their main parts) by their holders, then the tree's regions by theirs, the
 * deepest first (a barrier between depths: a region is freed only once nobody holds anything
 * below it). */
void par_free_regions(void) {
  for (int c = 0; c < G.p.ncells; c++) {
    if (G.holder[c] == G.me && sys_rfree(G.cell_rid[c])) die("sys_rfree of a cell");
    int part_holder = G.parts_attached ? G.holder[c] : c / 9; /* (its maker until attached) */
    if (G.part_rid[c] && part_holder == G.me && sys_rfree(G.part_rid[c]))
      die("sys_rfree of a cell's main part");
  }
  MPI_Barrier(sys_comm());
  int top = G.p.m - G.nnodes + 1; /* the depth of my first node */
  for (int d = G.p.m; d >= 0; d--) {
    if (d >= top && sys_rfree(G.nodes[d - top])) die("sys_rfree of the tree's region");
    MPI_Barrier(sys_comm());
  }
  free(G.nodes);
}

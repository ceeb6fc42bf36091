/* bh_pool.h: the step's walk as pools of chunks that every worker of one host draws from
 * (BARNES_POOL, bh_pool.c).
 *
 * Where the workers map one memory at the same addresses (antheap's GAS shared on a host), a
 * worker's whole tree -- the top cells, its branches, the LETs it received -- can be walked by
 * any of them from that worker's root: the serial walk, cell for cell, so a body's force has the
 * same bits whoever walks it. Each worker lays out a pool in that memory: its root, its bodies'
 * positions and IDs in chunks, a lane of chunks per thread of its own (a claim counter and an
 * end), a counter of chunks finished by others, and a result slot a body. It walks its chunks,
 * claiming each from a lane; when they run out it claims chunks of the lane with the most left
 * among the other pools, writing their results into that pool's slots (the only writes into
 * another worker's memory); then it waits until every chunk of its own that others claimed is
 * finished, and copies every result into its bodies.
 *
 * A worker of T threads (a hybrid rank) cuts its pool into T lanes of consecutive chunks, a
 * counter each: thread t walks lane t from its start, so that each thread walks neighbouring
 * bodies one after another, as a single-threaded worker does (one counter for all would hand
 * a thread every T-th chunk, each far from its last one in the tree); a thread whose lane is
 * done takes from the lane of its pool with the most left, then from the others' pools.
 *
 * Nothing here calls MPI or antheap: the caller places the pools, tells every worker where the
 * others' are (after which nobody writes a pool but through its counters and slots), and keeps
 * every pool and tree alive until all workers are past bh_pool_walk (a barrier). */
#ifndef BH_POOL_H
#define BH_POOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bh.h"

#define BH_POOL_CHUNK 64 /* bodies a claim */

/* The counters are shared between processes: only lock-free atomics work there. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "64-bit atomics are lock-free");

typedef struct bh_pool_body {
  double pos[3];
  int64_t id;
} bh_pool_body;

typedef struct bh_pool_result {
  double acc[3], pot;
  int64_t work, cost;
} bh_pool_result;

/* Chunks [next, end) of a run of consecutive chunks, handed out from next, one atomic add a
 * claim (next may pass end: the claims that found it done). Alone in its cache line. */
typedef struct bh_lane {
  _Alignas(64) _Atomic uint64_t next;
  uint64_t end;
} bh_lane;

#define BH_LANE_NONE UINT64_MAX

/* Cut chunks 0 .. chunks - 1 into L lanes of consecutive chunks, as even as can be. */
void bh_lanes_init(bh_lane *lane, int L, uint64_t chunks);
/* The next chunk of the lane, or BH_LANE_NONE when it is done. */
uint64_t bh_lane_claim(bh_lane *l);
/* Chunks left to claim. */
uint64_t bh_lane_left(bh_lane *l);
/* The lane with the most chunks left, or -1 when all are done. */
int bh_lanes_richest(bh_lane *lane, int L, uint64_t *most);
/* Thread t's share of the lanes: fn(ctx, c) for every chunk c it claims, lane t % L's first,
 * then the lane with the most left's while any has some (each lane in order); the count. */
long bh_lanes_draw(bh_lane *lane, int L, int t, void (*fn)(void *ctx, uint64_t c), void *ctx);

typedef struct bh_pool {
  _Alignas(64) _Atomic uint64_t done; /* chunks others claimed whose results are written */
  _Alignas(64) const bh_cell *root;
  uint64_t n, chunks;
  double theta, eps;
  int lanes;
  bh_lane *lane;              /* lanes of chunks: one a thread of the owner */
  bh_pool_body *body;
  bh_pool_result *result;
} bh_pool;

/* The bytes of the pool of n bodies in `lanes` lanes (a multiple of 64). */
size_t bh_pool_bytes(size_t n, int lanes);

/* Lay out the pool of bodies b[0, n), walked from root with theta and eps, in mem
 * (bh_pool_bytes(n, lanes) bytes, 64-byte aligned): its chunks in `lanes` lanes (the owner's
 * threads, at least 1), its counters at their start. */
bh_pool *bh_pool_lay(void *mem, const bh_cell *root, const bh_body *b, size_t n, double theta,
                     double eps, int lanes);

typedef struct bh_pool_stats {
  long own;       /* chunks of its own pool this worker walked */
  long given;     /* chunks of its own pool others walked */
  long taken;     /* chunks of others' pools this worker walked */
  double own_s;   /* seconds until its own chunks ran out */
  int64_t work;   /* interactions of every body this worker walked */
  int64_t missing;/* pruned cells those walks wanted to open (0 in a correct run) */
} bh_pool_stats;

/* BARNES_POOL_TEST=lazy (the tests): worker 0 claims nothing of its own pool, so that the others
 * walk all of it, and waits for them (the caller passes BH_POOL_LAZY to worker 0 alone). */
typedef enum { BH_POOL_EAGER, BH_POOL_LAZY } bh_pool_mode;

/* Worker me's walk: its own pool mine (of its bodies b), then chunks of pools[q] (q != me, NULL:
 * out of reach) while any has some left; then it waits for its chunks others took, and copies
 * each body's acc, pot, work and cost from the results into b. Adds into *st. It is
 * bh_pool_draw on one thread, then bh_pool_finish. */
void bh_pool_walk(bh_pool *mine, bh_pool *const *pools, int P, int me, bh_body *b,
                  bh_pool_mode mode, bh_pool_stats *st);

/* The walk of thread t of worker me (a worker with a team runs it on every thread at once):
 * chunks of mine (none when lazy), lane t's first, then of the others' pools. Adds into *st
 * (own, taken, own_s, work, missing). */
void bh_pool_draw(bh_pool *mine, bh_pool *const *pools, int P, int me, int t, bh_pool_mode mode,
                  bh_pool_stats *st);

/* Worker me's end, once all its threads are done drawing and `own` is the chunks of mine they
 * walked: waits until every other chunk of mine is finished (lazy: claimed first), copies every
 * result into b, and adds the chunks others walked to st->given. */
void bh_pool_finish(bh_pool *mine, long own, bh_body *b, bh_pool_mode mode, bh_pool_stats *st);

/* BARNES_POOL: BH_POOL_OFF for "0", BH_POOL_ON for "1" (asked: the caller says why where it
 * cannot pool), BH_POOL_AUTO when unset (pooled where it can be, silently); -1 for anything else
 * (the caller says so). */
enum { BH_POOL_OFF, BH_POOL_ON, BH_POOL_AUTO };
int bh_pool_setting(void);
/* BARNES_POOL_TEST: BH_POOL_EAGER when unset, BH_POOL_LAZY for "lazy"; -1 for anything else. */
int bh_pool_test_mode(void);
/* BARNES_LETS: BH_LETS_AUTO when unset or "0" (where every worker's walk is pooled with every other's,
 * the peers' branches are read where they lie in their trees, and no LET is made), BH_LETS_ALWAYS
 * for "1" (LETs made and moved all the same); -1 for anything else. */
enum { BH_LETS_AUTO, BH_LETS_ALWAYS };
int bh_lets_setting(void);

/* Copy the top tree's cells (grafted: every slot holds its branch's cell) into to
 * (ncells cells), the children between them made to point into the copy; the copy's root. */
const bh_cell *bh_pool_copy_top(const bh_cell *cells, size_t ncells, const bh_cell *root,
                                bh_cell *to);

#endif

/* bh_pool.c: the step's walk drawn from every worker's pool of chunks (bh_pool.h).
 *
 * A pool's lanes hand out its chunks in order, each from its counter, to the owner's threads
 * and to the others alike (one atomic add a chunk of 64 bodies, about a millisecond of
 * walking). A thread starts on its own lane; once its worker's chunks have run out it goes to
 * the lane with the most chunks left among all the other pools' lanes, and stays with it while
 * it lasts.
 * Whoever claims a chunk walks it, from the pool's root, into the pool's result slots; another
 * worker then counts it in the pool's `done` (a release), and the owner, once no chunk of any
 * pool is left to claim, waits (acquire) until `done` covers every chunk it did not walk
 * itself. Nobody waits for anything but the chunks already claimed, each of which is being
 * walked: the wait is short and cannot deadlock. Main entry: bh_pool_walk. */
#include "bh_pool.h"

#include <assert.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

static size_t round64(size_t x) { return (x + 63) & ~(size_t)63; }

void bh_lanes_init(bh_lane *lane, int L, uint64_t chunks) {
  for (int l = 0; l < L; l++) {
    atomic_init(&lane[l].next, chunks * (uint64_t)l / (uint64_t)L);
    lane[l].end = chunks * (uint64_t)(l + 1) / (uint64_t)L;
  }
}

uint64_t bh_lane_claim(bh_lane *l) {
  uint64_t c = atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed);
  return c < l->end ? c : BH_LANE_NONE;
}

uint64_t bh_lane_left(bh_lane *l) {
  uint64_t c = atomic_load_explicit(&l->next, memory_order_relaxed);
  return c < l->end ? l->end - c : 0;
}

int bh_lanes_richest(bh_lane *lane, int L, uint64_t *most) {
  int best = -1;
  *most = 0;
  for (int l = 0; l < L; l++) {
    uint64_t left = bh_lane_left(&lane[l]);
    if (left > *most) *most = left, best = l;
  }
  return best;
}

long bh_lanes_draw(bh_lane *lane, int L, int t, void (*fn)(void *ctx, uint64_t c), void *ctx) {
  long n = 0;
  uint64_t most;
  for (int k = t % L; k >= 0; k = bh_lanes_richest(lane, L, &most))
    for (uint64_t c; (c = bh_lane_claim(&lane[k])) != BH_LANE_NONE; n++) fn(ctx, c);
  return n;
}

size_t bh_pool_bytes(size_t n, int lanes) {
  return round64(sizeof(bh_pool)) + (size_t)lanes * sizeof(bh_lane) +
         round64(n * sizeof(bh_pool_body)) + round64(n * sizeof(bh_pool_result));
}

bh_pool *bh_pool_lay(void *mem, const bh_cell *root, const bh_body *b, size_t n, double theta,
                     double eps, int lanes) {
  assert(lanes >= 1);
  char *at = mem;
  bh_pool *p = mem;
  p->root = root;
  p->n = n;
  p->chunks = (n + BH_POOL_CHUNK - 1) / BH_POOL_CHUNK;
  p->theta = theta;
  p->eps = eps;
  p->lanes = lanes;
  p->lane = (bh_lane *)(at + round64(sizeof *p));
  p->body = (bh_pool_body *)((char *)p->lane + (size_t)lanes * sizeof(bh_lane));
  p->result = (bh_pool_result *)((char *)p->body + round64(n * sizeof *p->body));
  for (size_t i = 0; i < n; i++) {
    memcpy(p->body[i].pos, b[i].pos, sizeof b[i].pos);
    p->body[i].id = b[i].id;
  }
  bh_lanes_init(p->lane, lanes, p->chunks);
  atomic_init(&p->done, 0);
  return p;
}

/* Walk chunk c of pool p into its result slots, each body timed (its cost: the next step's
 * weight). */
static void walk_chunk(const bh_pool *p, uint64_t c, bh_pool_stats *st) {
  size_t lo = (size_t)c * BH_POOL_CHUNK, hi = lo + BH_POOL_CHUNK < p->n ? lo + BH_POOL_CHUNK : p->n;
  double tick = bench_now_ns();
  for (size_t i = lo; i < hi; i++) {
    bh_pool_result *r = &p->result[i];
    memset(r->acc, 0, sizeof r->acc);
    r->pot = 0;
    r->work = 0;
    st->missing += bh_walk(p->root, p->body[i].pos, p->body[i].id, p->theta, p->eps, r->acc,
                           &r->pot, &r->work);
    st->work += r->work;
    double tock = bench_now_ns();
    r->cost = (int64_t)(tock - tick) + 1;
    tick = tock;
  }
}

static bool pool_done(bh_pool *p) {
  uint64_t most;
  return bh_lanes_richest(p->lane, p->lanes, &most) < 0;
}

typedef struct {
  const bh_pool *p;
  bh_pool_stats *st;
} own_walk;

static void walk_own_chunk(void *ctx, uint64_t c) {
  own_walk *w = ctx;
  walk_chunk(w->p, c, w->st);
}

/* The lane with the most chunks left of the pools (not me's), or NULL; *of: its pool. */
static bh_lane *richest(bh_pool *const *pools, int P, int me, bh_pool **of) {
  bh_lane *best = NULL;
  uint64_t most = 0, m;
  for (int q = 0; q < P; q++) {
    if (q == me || !pools[q]) continue;
    int l = bh_lanes_richest(pools[q]->lane, pools[q]->lanes, &m);
    if (l >= 0 && m > most) most = m, best = &pools[q]->lane[l], *of = pools[q];
  }
  return best;
}

/* Wait for a chunk another worker is walking: spin a little, then give the core away (the
 * walker may be on this one when workers outnumber cores). */
static void pause_once(unsigned *spins) {
  if (++*spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  } else if (*spins < 1024) {
    sched_yield();
  } else {
    nanosleep(&(struct timespec){0, 20000}, NULL);
  }
}

void bh_pool_draw(bh_pool *mine, bh_pool *const *pools, int P, int me, int t, bh_pool_mode mode,
                  bh_pool_stats *st) {
  double t0 = bench_now_ns();
  if (mode == BH_POOL_EAGER)
    st->own += bh_lanes_draw(mine->lane, mine->lanes, t, walk_own_chunk,
                             &(own_walk){mine, st});
  st->own_s += (bench_now_ns() - t0) * 1e-9;
  bh_pool *p = NULL;
  for (bh_lane *l; (l = richest(pools, P, me, &p));) {
    for (uint64_t c; (c = bh_lane_claim(l)) != BH_LANE_NONE;) {
      walk_chunk(p, c, st);
      atomic_fetch_add_explicit(&p->done, 1, memory_order_release);
      st->taken++;
    }
  }
}

void bh_pool_finish(bh_pool *mine, long own, bh_body *b, bh_pool_mode mode, bh_pool_stats *st) {
  if (mode == BH_POOL_LAZY) /* every chunk is claimed by now only if the others took them all */
    for (unsigned spins = 0; !pool_done(mine);) pause_once(&spins);
  uint64_t given = mine->chunks - (uint64_t)own;
  for (unsigned spins = 0; atomic_load_explicit(&mine->done, memory_order_acquire) < given;)
    pause_once(&spins);
  st->given += (long)given;
  for (size_t i = 0; i < mine->n; i++) {
    const bh_pool_result *r = &mine->result[i];
    memcpy(b[i].acc, r->acc, sizeof r->acc);
    b[i].pot = r->pot;
    b[i].work = r->work;
    b[i].cost = r->cost;
  }
}

void bh_pool_walk(bh_pool *mine, bh_pool *const *pools, int P, int me, bh_body *b,
                  bh_pool_mode mode, bh_pool_stats *st) {
  long own0 = st->own;
  bh_pool_draw(mine, pools, P, me, 0, mode, st);
  bh_pool_finish(mine, st->own - own0, b, mode, st);
}

int bh_pool_setting(void) {
  const char *e = getenv("BARNES_POOL");
  return !e || !*e ? BH_POOL_AUTO : !strcmp(e, "0") ? BH_POOL_OFF : !strcmp(e, "1") ? BH_POOL_ON : -1;
}

int bh_lets_setting(void) {
  const char *e = getenv("BARNES_LETS");
  return !e || !*e || !strcmp(e, "0") ? BH_LETS_AUTO : !strcmp(e, "1") ? BH_LETS_ALWAYS : -1;
}

int bh_pool_test_mode(void) {
  const char *e = getenv("BARNES_POOL_TEST");
  return !e || !*e ? BH_POOL_EAGER : !strcmp(e, "lazy") ? BH_POOL_LAZY : -1;
}

const bh_cell *bh_pool_copy_top(const bh_cell *cells, size_t ncells, const bh_cell *root,
                                bh_cell *to) {
  if (ncells) memcpy(to, cells, ncells * sizeof *cells); /* (cells is NULL for an empty top) */
  uintptr_t lo = (uintptr_t)cells, hi = (uintptr_t)(cells + ncells);
#define INTO_COPY(p) \
  ((uintptr_t)(p) >= lo && (uintptr_t)(p) < hi ? to + ((const bh_cell *)(p) - cells) : (p))
  for (size_t i = 0; i < ncells; i++)
    for (int k = 0; k < 8; k++) to[i].child[k] = (bh_cell *)INTO_COPY(to[i].child[k]);
  return (const bh_cell *)INTO_COPY(root);
#undef INTO_COPY
}

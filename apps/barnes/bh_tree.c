/* bh_tree.c: the octree of a set of bodies in a given cube, built level by level into regions
 * (bh_tree_build), the cube and the key of a body in it (bh_cube_of_box, bh_key), the force
 * walk (bh_walk) and the direct sum that validates it (bh_direct).
 *
 * The tree is first built in private scratch memory by insertion (index-based), then copied
 * breadth first into cells allocated level by level: one region per level and one bulk
 * allocation per level (a hybrid worker's team: one per thread's share of a level), so scheduler
 * traffic is a few messages per level, not one per cell. The shape of the
 * octree of a point set with one body per leaf does not depend on insertion order, and
 * centres of mass are summed over children in octant order, so the cells depend only on the
 * set of bodies and the cube: a worker's tree of its own bodies has, below the cells that hold
 * only its bodies, exactly the cells of the serial tree. A hybrid worker's threads share the
 * breadth-first order, the moments and the copy, level by level (bh_tree_build_team); each
 * cell is still computed as one thread computes it. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bh.h"

/* A scratch node: the cube, children (indices, -1 none), the body (-1 none). */
typedef struct snode {
  double center[3], half;
  double com[3], mass;
  int32_t child[8];
  int32_t body;
  int32_t depth;
  int32_t internal;
} snode;

typedef struct scratch {
  snode *v;
  size_t n, cap;
} scratch;

static int32_t snode_new(scratch *s, const double c[3], double half, int depth) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 1024;
    snode *v = realloc(s->v, cap * sizeof *v);
    if (!v) return -1;
    s->v = v;
    s->cap = cap;
  }
  snode *x = &s->v[s->n];
  memset(x, 0, sizeof *x);
  memcpy(x->center, c, sizeof x->center);
  x->half = half;
  for (int k = 0; k < 8; k++) x->child[k] = -1;
  x->body = -1;
  x->depth = depth;
  return (int32_t)s->n++;
}

/* Octant of p in a cube centred at c (upper halves closed at the centre). */
static inline int octant_at(const double c[3], const double p[3]) {
  return (p[0] >= c[0]) | (p[1] >= c[1]) << 1 | (p[2] >= c[2]) << 2;
}
static inline int octant(const snode *x, const double p[3]) { return octant_at(x->center, p); }

/* h, or -h where `up` is 0: the sign bit flipped, with no branch (the octants of a body's
 * path are random, and a branch on each was mispredicted about half the time). The same value
 * as `up ? h : -h`, so the same centres. */
static inline double toward(double h, unsigned up) {
  uint64_t u;
  memcpy(&u, &h, sizeof u);
  u ^= (uint64_t)(~up & 1) << 63;
  memcpy(&h, &u, sizeof h);
  return h;
}

/* The centre of octant k of a cube centred at c whose children have half-edge h. */
static inline void child_center(const double c[3], int k, double h, double out[3]) {
  for (int d = 0; d < 3; d++) out[d] = c[d] + toward(h, (unsigned)k >> d);
}

bh_cube bh_cube_of_box(const double lo[3], const double hi[3]) {
  bh_cube c = {.half = 0};
  for (int d = 0; d < 3; d++) {
    c.center[d] = lo[d] + (hi[d] - lo[d]) / 2;
    double h = (hi[d] - lo[d]) / 2;
    if (h > c.half) c.half = h;
  }
  if (c.half == 0) c.half = 1;
  c.half *= 1.0 + 1e-12;
  return c;
}

uint64_t bh_key(const bh_cube *c, const double pos[3]) {
  double ctr[3] = {c->center[0], c->center[1], c->center[2]}, half = c->half;
  uint64_t key = 0;
  for (int l = 0; l < BH_KEY_LEVELS; l++) {
    int k = octant_at(ctr, pos);
    key = key << 3 | (uint64_t)k;
    half /= 2;
    child_center(ctr, k, half, ctr);
  }
  return key;
}

/* bh_key of KEY_LANES bodies at once: each level of a key waits for the centre the level above
 * gave (an add after a compare), so one body at a time leaves the core idle; independent bodies
 * side by side fill that wait. The same operations per body, so the same keys. */
#define KEY_LANES 4
void bh_keys(const bh_cube *c, const bh_body *b, size_t n, uint64_t *out) {
  size_t i = 0;
  for (; i + KEY_LANES <= n; i += KEY_LANES) {
    double ctr[KEY_LANES][3], half = c->half;
    uint64_t key[KEY_LANES] = {0};
    for (int q = 0; q < KEY_LANES; q++) memcpy(ctr[q], c->center, sizeof ctr[q]);
    for (int l = 0; l < BH_KEY_LEVELS; l++) {
      half /= 2;
      for (int q = 0; q < KEY_LANES; q++) {
        int k = octant_at(ctr[q], b[i + q].pos);
        key[q] = key[q] << 3 | (uint64_t)k;
        child_center(ctr[q], k, half, ctr[q]);
      }
    }
    memcpy(out + i, key, sizeof key);
  }
  for (; i < n; i++) out[i] = bh_key(c, b[i].pos);
}

/* The child of node i for octant k, created when missing; -1 on ENOMEM. */
static int32_t child_of(scratch *s, int32_t i, int k) {
  if (s->v[i].child[k] >= 0) return s->v[i].child[k];
  double h = s->v[i].half / 2, c[3];
  child_center(s->v[i].center, k, h, c);
  int32_t j = snode_new(s, c, h, s->v[i].depth + 1);
  if (j >= 0) s->v[i].child[k] = j;
  return j;
}

/* Insert body b; 0, -1 (ENOMEM) or -2 (too deep). */
static int insert(scratch *s, const bh_body *bodies, int32_t b) {
  int32_t i = 0;
  for (;;) {
    if (s->v[i].depth >= BH_MAX_LEVELS - 1) return -2;
    if (!s->v[i].internal) {
      if (s->v[i].body < 0) { /* an empty leaf */
        s->v[i].body = b;
        return 0;
      }
      int32_t old = s->v[i].body; /* a full leaf becomes internal: its body moves down */
      s->v[i].body = -1;
      s->v[i].internal = 1;
      int32_t c = child_of(s, i, octant(&s->v[i], bodies[old].pos));
      if (c < 0) return -1;
      s->v[c].body = old;
    }
    int32_t c = child_of(s, i, octant(&s->v[i], bodies[b].pos));
    if (c < 0) return -1;
    i = c;
  }
}

/* ---- from the scratch tree to cells: breadth-first order, moments, cells ---- */

/* The work after the insertion, level by level; each part runs on a team's threads where the
 * level is big enough to share (TEAM_MIN nodes) and on the calling thread otherwise. Every
 * node's values are computed as one thread alone computes them, so the tree is the same. */
#define TEAM_MIN 4096

typedef struct tree_job {
  const bh_body *bodies;
  const snode *v;
  int32_t *order;  /* scratch indices, breadth first */
  size_t lo, hi;   /* the level at work: order[lo, hi) */
  size_t *count;   /* per thread: children of its share of the level, then where they go */
  bh_cell **cell;  /* cell[scratch index] */
  void **ptrs;     /* ptrs[k]: the cell of order[k] */
  size_t ncells;
} tree_job;

static void order_count(void *ctx, int t, int T) {
  tree_job *j = ctx;
  size_t a, z, c = 0;
  bh_share(j->hi - j->lo, t, T, &a, &z);
  for (size_t k = j->lo + a; k < j->lo + z; k++)
    for (int o = 0; o < 8; o++) c += j->v[j->order[k]].child[o] >= 0;
  j->count[t] = c;
}

/* The level's children, in the order of their parents, then octant order. */
static void order_fill(void *ctx, int t, int T) {
  tree_job *j = ctx;
  size_t a, z, at = j->count[t];
  bh_share(j->hi - j->lo, t, T, &a, &z);
  for (size_t k = j->lo + a; k < j->lo + z; k++)
    for (int o = 0; o < 8; o++)
      if (j->v[j->order[k]].child[o] >= 0) j->order[at++] = j->v[j->order[k]].child[o];
}

/* Mass and centre of mass of the level's nodes (the level below is done). The scratch tree is
 * written through a cast: each node by the one thread whose share holds it. */
static void moments(void *ctx, int t, int T) {
  tree_job *j = ctx;
  size_t a, z;
  bh_share(j->hi - j->lo, t, T, &a, &z);
  for (size_t k = j->lo + a; k < j->lo + z; k++) {
    snode *x = (snode *)&j->v[j->order[k]];
    if (!x->internal) {
      const bh_body *b = &j->bodies[x->body];
      memcpy(x->com, b->pos, sizeof x->com);
      x->mass = b->mass;
      continue;
    }
    double m = 0, mx[3] = {0, 0, 0};
    for (int o = 0; o < 8; o++) {
      if (x->child[o] < 0) continue;
      const snode *y = &j->v[x->child[o]];
      m += y->mass;
      for (int d = 0; d < 3; d++) mx[d] += y->mass * y->com[d];
    }
    x->mass = m;
    for (int d = 0; d < 3; d++) x->com[d] = m > 0 ? mx[d] / m : x->center[d];
  }
}

static void cells_place(void *ctx, int t, int T) {
  tree_job *j = ctx;
  size_t a, z;
  bh_share(j->ncells, t, T, &a, &z);
  for (size_t k = a; k < z; k++) j->cell[j->order[k]] = j->ptrs[k];
}

static void cells_fill(void *ctx, int t, int T) {
  tree_job *j = ctx;
  size_t a, z;
  bh_share(j->ncells, t, T, &a, &z);
  for (size_t k = a; k < z; k++) {
    const snode *x = &j->v[j->order[k]];
    bh_cell *y = j->cell[j->order[k]];
    memcpy(y->com, x->com, sizeof y->com);
    y->mass = x->mass;
    y->size = 2 * x->half;
    y->id = x->internal ? -1 : j->bodies[x->body].id;
    for (int o = 0; o < 8; o++) y->child[o] = x->child[o] >= 0 ? j->cell[x->child[o]] : NULL;
  }
}

/* Run fn over the level order[lo, hi): on the team where the level is big enough. */
static void level_run(tree_job *j, bh_team *team, size_t lo, size_t hi,
                      void (*fn)(void *ctx, int t, int T)) {
  j->lo = lo, j->hi = hi;
  bh_team_run(hi - lo >= TEAM_MIN ? team : NULL, fn, j);
}

/* Breadth-first order of the n scratch nodes into j->order, level k at [start[k], start[k+1]);
 * the number of levels. */
static int breadth_first(tree_job *j, bh_team *team, size_t start[BH_MAX_LEVELS + 1]) {
  int nlev = 0;
  size_t lo = 0, hi = 1;
  j->order[0] = 0;
  while (lo < hi) {
    start[nlev++] = lo;
    bh_team *tm = hi - lo >= TEAM_MIN ? team : NULL;
    int T = bh_team_size(tm);
    level_run(j, tm, lo, hi, order_count);
    size_t at = hi;
    for (int t = 0; t < T; t++) {
      size_t c = j->count[t];
      j->count[t] = at;
      at += c;
    }
    level_run(j, tm, lo, hi, order_fill);
    lo = hi, hi = at;
  }
  start[nlev] = hi;
  return nlev;
}

/* A team's share of every level's cells: level k's [start[k], start[k+1]) cut among the
 * threads, each share at least BALLOC_SHARE_MIN cells (fewer threads for a small level), every
 * thread's share one balloc from its own cache. */
#define BALLOC_SHARE_MIN 1024

typedef struct balloc_job {
  const bh_mem *mem;
  const bh_tree *t;
  const size_t *start;
  void **ptrs;
  _Atomic int failed;
} balloc_job;

static int balloc_level_share(const balloc_job *j, int k, int t, int T) {
  size_t lo = j->start[k], cnt = j->start[k + 1] - lo, a, z;
  size_t most = cnt / BALLOC_SHARE_MIN ? cnt / BALLOC_SHARE_MIN : 1;
  int pieces = most < (size_t)T ? (int)most : T;
  if (t >= pieces) return 0;
  bh_share(cnt, t, pieces, &a, &z);
  return z > a ? j->mem->balloc(j->mem->ctx, j->t->level[k], sizeof(bh_cell), (int)(z - a),
                                j->ptrs + lo + a)
               : 0;
}

static void balloc_levels(void *ctx, int t, int T) {
  balloc_job *j = ctx;
  for (int k = 0; k < j->t->nlevels && !atomic_load(&j->failed); k++)
    if (balloc_level_share(j, k, t, T)) atomic_store(&j->failed, 1);
}

/* The tree's regions (one a level, below one for the tree) and its cells, ptrs[k] the cell of
 * order[k]: the cells allocated on the team where the memory allows it (bh_mem's
 * balloc_any_thread) and the tree is big enough, else on the calling thread; 0 or -1. */
static int tree_regions(const bh_mem *mem, bh_tree *t, const size_t *start, int nlev,
                        void **ptrs, bh_team *team) {
  t->region = mem->region(mem->ctx, 0);
  int rc = t->region ? 0 : -1;
  for (int k = 0; rc == 0 && k < nlev; k++) {
    t->level[k] = mem->region(mem->ctx, t->region);
    if (!t->level[k]) rc = -1;
    t->nlevels = k + 1;
  }
  if (rc) return rc;
  balloc_job j = {.mem = mem, .t = t, .start = start, .ptrs = ptrs};
  atomic_init(&j.failed, 0);
  bool shared = mem->balloc_any_thread && start[nlev] >= TEAM_MIN;
  bh_team_run(shared ? team : NULL, balloc_levels, &j);
  return atomic_load(&j.failed) ? -1 : 0;
}

/* The scratch tree of the cell at (c, half, depth) holding bodies [a, z), inserted into s:
 * its root, then the bodies one by one; 0, -1 (ENOMEM) or -2 (too deep). */
static int scratch_cell(scratch *s, const bh_body *bodies, const double c[3], double half,
                        int depth, size_t a, size_t z) {
  int rc = snode_new(s, c, half, depth) < 0 ? -1 : 0;
  for (size_t b = a; rc == 0 && b < z; b++) rc = insert(s, bodies, (int32_t)b);
  return rc;
}

/* The scratch tree of bodies[0..n) in cube, inserted on the calling thread; 0, -1 (ENOMEM) or
 * -2 (too deep), with s->v freed on failure. */
static int scratch_tree(const bh_body *bodies, size_t n, const bh_cube *cube, scratch *s) {
  int rc = scratch_cell(s, bodies, cube->center, cube->half, 0, 0, n);
  if (rc) free(s->v), s->v = NULL;
  return rc;
}

/* ---- the insertion with a team: subtrees of sorted bodies ---- */

/* With the bodies sorted by key, a cell's bodies are one range of them: the cells near the
 * root that hold more than a thread's fair share (n/8T bodies, at least 512) are made on the
 * calling thread (internal nodes: they hold at least two bodies), and each cell below them that
 * holds any bodies is the root of a subtree that one thread inserts its range into, in a scratch tree of its
 * own. The pieces are then put together in one scratch array, children renumbered. The
 * shape of the tree does not depend on the order of insertion, so it is the serial one. */
#define SPLIT_MAX 16 /* the cells made on the calling thread lie above this level (0..15) */
_Static_assert(SPLIT_MAX <= BH_KEY_LEVELS, "the top cells are found by their keys' digits");

typedef struct subtree {
  int32_t parent; /* its top node, and the octant it hangs at */
  int oct;
  size_t a, z;    /* its bodies */
  scratch s;
  size_t at;      /* where its nodes go in the whole tree */
  int rc;
} subtree;

typedef struct insert_job {
  const bh_body *bodies;
  const scratch *top;
  subtree *sub;
  size_t nsub, cap;
  snode *all;
  atomic_size_t next;
} insert_job;

static int key_digit(uint64_t key, int level) {
  return (int)(key >> 3 * (BH_KEY_LEVELS - 1 - level)) & 7;
}

/* The end of the bodies of [a, z) whose digit at `level` is at most o (keys sorted, the
 * digits above `level` all alike). */
static size_t digit_end(const uint64_t *keys, size_t a, size_t z, int level, int o) {
  while (a < z) {
    size_t m = a + (z - a) / 2;
    if (key_digit(keys[m], level) <= o) a = m + 1;
    else z = m;
  }
  return a;
}

static int add_subtree(insert_job *j, int32_t parent, int oct, size_t a, size_t z) {
  if (j->nsub == j->cap) {
    size_t cap = j->cap ? 2 * j->cap : 64;
    subtree *v = realloc(j->sub, cap * sizeof *v);
    if (!v) return -1;
    j->sub = v, j->cap = cap;
  }
  j->sub[j->nsub++] = (subtree){.parent = parent, .oct = oct, .a = a, .z = z};
  return 0;
}

/* Top node i holds bodies [a, z), more than `limit`: internal; its children too when they
 * hold more than limit (down to SPLIT_MAX), the others become subtrees. */
static int split_top(insert_job *j, scratch *top, int32_t i, const uint64_t *keys, size_t a,
                     size_t z, size_t limit) {
  top->v[i].internal = 1;
  int level = top->v[i].depth;
  for (int o = 0; o < 8 && a < z; o++) {
    size_t e = digit_end(keys, a, z, level, o);
    if (e == a) continue;
    int rc;
    if (e - a > limit && level + 1 < SPLIT_MAX) {
      int32_t c = child_of(top, i, o);
      rc = c < 0 ? -1 : split_top(j, top, c, keys, a, e, limit);
    } else {
      rc = add_subtree(j, i, o, a, e);
    }
    if (rc) return rc;
    a = e;
  }
  return 0;
}

static void insert_subtrees(void *ctx, int t, int T) {
  (void)t, (void)T;
  insert_job *j = ctx;
  for (size_t k; (k = atomic_fetch_add(&j->next, 1)) < j->nsub;) {
    subtree *u = &j->sub[k];
    const snode *p = &j->top->v[u->parent];
    double h = p->half / 2, c[3];
    child_center(p->center, u->oct, h, c);
    /* room for the usual 1.5 nodes a body at once: no copies as the subtree grows */
    size_t cap = 2 * (u->z - u->a) + 64;
    if ((u->s.v = malloc(cap * sizeof *u->s.v))) u->s.cap = cap;
    u->rc = scratch_cell(&u->s, j->bodies, c, h, p->depth + 1, u->a, u->z);
  }
}

static void join_subtrees(void *ctx, int t, int T) {
  (void)t, (void)T;
  insert_job *j = ctx;
  for (size_t k; (k = atomic_fetch_add(&j->next, 1)) < j->nsub;) {
    const subtree *u = &j->sub[k];
    for (size_t i = 0; i < u->s.n; i++) {
      snode *x = &j->all[u->at + i];
      *x = u->s.v[i];
      for (int o = 0; o < 8; o++)
        if (x->child[o] >= 0) x->child[o] += (int32_t)u->at;
    }
  }
}

void bh_tree_keep_free(bh_tree_keep *k) {
  bh_block_free(&k->nodes);
  *k = (bh_tree_keep){0};
}

/* The scratch tree of bodies sorted by key (keys[0..n)), its insertion shared by a team; 0, -1
 * (ENOMEM) or -2 (too deep), with s->v released on failure (bh_block_release). The joined tree is
 * placed in the kept block where there is one. */
static int scratch_tree_team(const bh_body *bodies, const uint64_t *keys, size_t n,
                             const bh_cube *cube, scratch *s, bh_team *team, bh_block *kept) {
  insert_job j = {.bodies = bodies, .top = s};
  size_t limit = n / (8 * (size_t)bh_team_size(team));
  if (limit < 512) limit = 512;
  if (n <= limit) return scratch_tree(bodies, n, cube, s); /* the root may be a leaf */
  int rc = snode_new(s, cube->center, cube->half, 0) < 0 ? -1 : 0;
  if (rc == 0) rc = split_top(&j, s, 0, keys, 0, n, limit);
  if (rc == 0) {
    atomic_init(&j.next, 0);
    bh_team_run(team, insert_subtrees, &j);
    size_t total = s->n;
    for (size_t k = 0; k < j.nsub; k++) {
      if (j.sub[k].rc && !rc) rc = j.sub[k].rc;
      j.sub[k].at = total;
      total += j.sub[k].s.n;
    }
    if (rc == 0 && total > INT32_MAX) rc = -1;
    if (rc == 0 && !(j.all = bh_block_room(kept, total * sizeof *j.all))) rc = -1;
    if (rc == 0) {
      memcpy(j.all, s->v, s->n * sizeof *j.all);
      atomic_init(&j.next, 0);
      bh_team_run(team, join_subtrees, &j);
      for (size_t k = 0; k < j.nsub; k++)
        j.all[j.sub[k].parent].child[j.sub[k].oct] = (int32_t)j.sub[k].at;
      free(s->v);
      s->v = j.all, s->n = s->cap = total; /* read-only from here: it may be keep's memory,
                                              which snode_new must never grow */
    }
  }
  for (size_t k = 0; k < j.nsub; k++) free(j.sub[k].s.v);
  free(j.sub);
  if (rc) bh_block_release(kept, s->v), s->v = NULL;
  return rc;
}

/* Seconds since *t0 (ns) added to keep's part k (nothing without a keep); *t0 moves on. */
static void part_lap(bh_tree_keep *keep, int k, double *t0) {
  if (!keep) return;
  double t = bench_now_ns();
  keep->part[k] += (t - *t0) * 1e-9;
  *t0 = t;
}

int bh_tree_build_team(const bh_mem *mem, const bh_body *bodies, const uint64_t *keys, size_t n,
                       const bh_cube *cube, bh_tree *t, char *err, size_t errlen,
                       bh_team *team, bh_tree_keep *keep) {
  memset(t, 0, sizeof *t);
  if (n == 0) return 0;
  if (n > INT32_MAX / 4) {
    snprintf(err, errlen, "too many bodies in one domain (%zu)", n);
    return -1;
  }
  bh_cube own;
  if (!cube) {
    double lo[3], hi[3];
    bh_box(bodies, n, lo, hi);
    own = bh_cube_of_box(lo, hi);
    cube = &own;
  }
  double t0 = keep ? bench_now_ns() : 0;
  bh_block *kept = keep ? &keep->nodes : NULL;
  scratch s = {0}; /* keys are those of the cube given (none for a cube of their own) */
  int rc = keys && cube != &own && bh_team_size(team) > 1
               ? scratch_tree_team(bodies, keys, n, cube, &s, team, kept)
               : scratch_tree(bodies, n, cube, &s);
  if (rc) {
    snprintf(err, errlen, rc == -2 ? "bodies closer than %d tree levels resolve (coincident?)"
                                   : "out of memory building the tree (%d)",
             BH_MAX_LEVELS);
    return -1;
  }
  tree_job j = {.bodies = bodies, .v = s.v, .ncells = s.n};
  j.order = malloc(s.n * sizeof *j.order);
  j.cell = malloc(s.n * sizeof *j.cell);
  j.ptrs = malloc(s.n * sizeof *j.ptrs);
  j.count = malloc((size_t)bh_team_size(team) * sizeof *j.count);
  size_t start[BH_MAX_LEVELS + 1];
  rc = j.order && j.cell && j.ptrs && j.count ? 0 : -1;
  part_lap(keep, BH_TREE_INSERT, &t0);
  int nlev = rc ? 0 : breadth_first(&j, team, start);
  part_lap(keep, BH_TREE_ORDER, &t0);
  /* mass and centre of mass bottom up, a level at a time */
  for (int k = nlev; k-- > 0;) level_run(&j, team, start[k], start[k + 1], moments);
  part_lap(keep, BH_TREE_MOMENTS, &t0);
  if (rc == 0 && tree_regions(mem, t, start, nlev, j.ptrs, team)) {
    if (t->region) mem->rfree(mem->ctx, t->region);
    memset(t, 0, sizeof *t);
    rc = -1;
  }
  part_lap(keep, BH_TREE_ALLOC, &t0);
  if (rc == 0) {
    bh_team_run(s.n >= TEAM_MIN ? team : NULL, cells_place, &j);
    bh_team_run(s.n >= TEAM_MIN ? team : NULL, cells_fill, &j);
    t->root = j.cell[0];
    t->ncells = s.n;
    part_lap(keep, BH_TREE_CELLS, &t0);
  } else {
    snprintf(err, errlen, "%s", j.order && j.cell && j.ptrs && j.count
                                    ? "allocating the tree's regions failed"
                                    : "out of memory building the tree");
  }
  free(j.ptrs), free(j.order), free(j.cell), free(j.count);
  bh_block_release(kept, s.v);
  return rc;
}

int bh_tree_build(const bh_mem *mem, const bh_body *bodies, size_t n, const bh_cube *cube,
                  bh_tree *t, char *err, size_t errlen) {
  return bh_tree_build_team(mem, bodies, NULL, n, cube, t, err, errlen, NULL, NULL);
}

void bh_tree_poison(bh_tree *t) {
  if (!t->root) return;
  bh_cell **stack = malloc(t->ncells * sizeof *stack); /* (every cell pushed once) */
  if (!stack) return;
  size_t sp = 0;
  stack[sp++] = t->root;
  while (sp) {
    bh_cell *c = stack[--sp];
    c->mass = c->com[0] = c->com[1] = c->com[2] = NAN;
    for (int o = 0; o < 8; o++)
      if (c->child[o] && sp < t->ncells) stack[sp++] = (bh_cell *)c->child[o];
  }
  free(stack);
}

int bh_tree_free(const bh_mem *mem, bh_tree *t) {
  int rc = t->region ? mem->rfree(mem->ctx, t->region) : 0;
  memset(t, 0, sizeof *t);
  return rc;
}

int bh_walk(const bh_cell *root, const double pos[3], int64_t self, double theta, double eps,
            double acc[3], double *pot, int64_t *work) {
  if (!root) return 0;
  const bh_cell *stack[8 * BH_MAX_LEVELS];
  int sp = 0, missing = 0;
  double eps2 = eps * eps, a0 = acc[0], a1 = acc[1], a2 = acc[2], p = *pot;
  int64_t w = 0;
  stack[sp++] = root;
  while (sp) {
    const bh_cell *c = stack[--sp];
    double dx = c->com[0] - pos[0], dy = c->com[1] - pos[1], dz = c->com[2] - pos[2];
    double d2 = dx * dx + dy * dy + dz * dz;
    if (c->id < 0 && bh_opens(c->size, theta, d2)) {
      if (c->id == BH_PRUNED) { /* its children were not sent: use it whole, count it */
        missing++;
      } else {
        for (int o = 7; o >= 0; o--) /* popped in octant order 0..7 */
          if (c->child[o]) stack[sp++] = c->child[o];
        continue;
      }
    }
    if (c->id == self) continue;
    double r2 = d2 + eps2, inv = 1 / sqrt(r2), m3 = c->mass * inv * inv * inv;
    a0 += m3 * dx;
    a1 += m3 * dy;
    a2 += m3 * dz;
    p -= c->mass * inv;
    w++;
  }
  acc[0] = a0, acc[1] = a1, acc[2] = a2;
  *pot = p;
  *work += w;
  return missing;
}

void bh_direct(const bh_body *b, size_t n, double eps, double *acc, double *pot) {
  double eps2 = eps * eps;
  for (size_t i = 0; i < n; i++) {
    double a[3] = {0, 0, 0}, p = 0;
    for (size_t j = 0; j < n; j++) {
      if (j == i) continue;
      double dx = b[j].pos[0] - b[i].pos[0], dy = b[j].pos[1] - b[i].pos[1],
             dz = b[j].pos[2] - b[i].pos[2];
      double r2 = dx * dx + dy * dy + dz * dz + eps2, inv = 1 / sqrt(r2);
      double m3 = b[j].mass * inv * inv * inv;
      a[0] += m3 * dx, a[1] += m3 * dy, a[2] += m3 * dz;
      p -= b[j].mass * inv;
    }
    memcpy(acc + 3 * i, a, sizeof a);
    pot[i] = p;
  }
}

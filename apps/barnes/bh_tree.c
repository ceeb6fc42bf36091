/* bh_tree.c: the octree of a set of bodies in a given cube, built level by level into regions
 * (bh_tree_build), the cube and the key of a body in it (bh_cube_of_box, bh_key), the force
 * walk (bh_walk) and the direct sum that validates it (bh_direct).
 *
 * The tree is first built in private scratch memory by insertion (index-based), then copied
 * breadth first into cells allocated level by level: one region and one bulk allocation per
 * level, so scheduler traffic is a few messages per level, not one per cell. The shape of the
 * octree of a point set with one body per leaf does not depend on insertion order, and
 * centres of mass are summed over children in octant order, so the cells depend only on the
 * set of bodies and the cube: a worker's tree of its own bodies has, below the cells that hold
 * only its bodies, exactly the cells of the serial tree. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The centre of octant k of a cube centred at c whose children have half-edge h. */
static inline void child_center(const double c[3], int k, double h, double out[3]) {
  for (int d = 0; d < 3; d++) out[d] = c[d] + ((k >> d) & 1 ? h : -h);
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

int bh_tree_build(const bh_mem *mem, const bh_body *bodies, size_t n, const bh_cube *cube,
                  bh_tree *t, char *err, size_t errlen) {
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
  scratch s = {0};
  int rc = snode_new(&s, cube->center, cube->half, 0) < 0 ? -1 : 0;
  for (size_t b = 0; rc == 0 && b < n; b++) rc = insert(&s, bodies, (int32_t)b);
  if (rc) {
    free(s.v);
    snprintf(err, errlen, rc == -2 ? "bodies closer than %d tree levels resolve (coincident?)"
                                   : "out of memory building the tree (%d)",
             BH_MAX_LEVELS);
    return -1;
  }
  /* Mass and centre of mass bottom up: children always come after their parent. */
  for (size_t k = s.n; k-- > 0;) {
    snode *x = &s.v[k];
    if (!x->internal) {
      const bh_body *b = &bodies[x->body];
      memcpy(x->com, b->pos, sizeof x->com);
      x->mass = b->mass;
      continue;
    }
    double m = 0, mx[3] = {0, 0, 0};
    for (int o = 0; o < 8; o++) {
      if (x->child[o] < 0) continue;
      const snode *y = &s.v[x->child[o]];
      m += y->mass;
      for (int d = 0; d < 3; d++) mx[d] += y->mass * y->com[d];
    }
    x->mass = m;
    for (int d = 0; d < 3; d++) x->com[d] = m > 0 ? mx[d] / m : x->center[d];
  }
  /* Breadth-first order, level by level: order[] lists nodes, start[k] where level k begins. */
  int32_t *order = malloc(s.n * sizeof *order);
  bh_cell **cell = malloc(s.n * sizeof *cell); /* cell[scratch index] */
  size_t start[BH_MAX_LEVELS + 1];
  if (!order || !cell) {
    free(order), free(cell), free(s.v);
    snprintf(err, errlen, "out of memory building the tree");
    return -1;
  }
  size_t head = 0, tail = 0;
  int nlev = 0;
  order[tail++] = 0;
  while (head < tail) {
    start[nlev++] = head;
    size_t end = tail;
    for (; head < end; head++)
      for (int o = 0; o < 8; o++)
        if (s.v[order[head]].child[o] >= 0) order[tail++] = s.v[order[head]].child[o];
  }
  start[nlev] = tail;
  t->region = mem->region(mem->ctx, 0);
  rc = t->region ? 0 : -1;
  void **ptrs = malloc(s.n * sizeof *ptrs);
  if (!ptrs) rc = -1;
  for (int k = 0; rc == 0 && k < nlev; k++) {
    t->level[k] = mem->region(mem->ctx, t->region);
    size_t cnt = start[k + 1] - start[k];
    if (!t->level[k] ||
        mem->balloc(mem->ctx, t->level[k], sizeof(bh_cell), (int)cnt, ptrs + start[k]))
      rc = -1;
    t->nlevels = k + 1;
  }
  if (rc) {
    free(ptrs), free(order), free(cell), free(s.v);
    if (t->region) mem->rfree(mem->ctx, t->region);
    memset(t, 0, sizeof *t);
    snprintf(err, errlen, "allocating the tree's regions failed");
    return -1;
  }
  for (size_t k = 0; k < tail; k++) cell[order[k]] = ptrs[k];
  for (size_t k = 0; k < tail; k++) {
    const snode *x = &s.v[order[k]];
    bh_cell *y = cell[order[k]];
    memcpy(y->com, x->com, sizeof y->com);
    y->mass = x->mass;
    y->size = 2 * x->half;
    y->id = x->internal ? -1 : bodies[x->body].id;
    for (int o = 0; o < 8; o++) y->child[o] = x->child[o] >= 0 ? cell[x->child[o]] : NULL;
  }
  t->root = cell[0];
  t->ncells = tail;
  free(ptrs), free(order), free(cell), free(s.v);
  return 0;
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

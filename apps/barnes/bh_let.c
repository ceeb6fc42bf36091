/* bh_let.c: the global tree cut into pieces (bh.h): the branches of a worker's tree, the top
 * tree every worker builds alike from all branches, and the locally essential tree (LET) a
 * worker makes of its branches for a peer. The top tree's moments are summed over children in
 * octant order, as bh_tree_build sums them, from the branches' moments: bit for bit the serial
 * tree's cells. Main entries: bh_branches, bh_top_build, bh_let_fill. */
#include <stdlib.h>
#include <string.h>

#include "bh_par.h"

/* ---- branches ---- */

typedef struct branch_list {
  bh_branch *v;
  const bh_cell **cells;
  size_t n, cap;
  uint64_t lo, hi;
  const bh_cube *cube;
  int owner;
  bool oom;
} branch_list;

static void push_branch(branch_list *l, const bh_cell *c, uint64_t prefix, int depth) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    bh_branch *v = realloc(l->v, cap * sizeof *v);
    const bh_cell **cells = v ? realloc(l->cells, cap * sizeof *cells) : NULL;
    if (v) l->v = v;
    if (!cells) {
      l->oom = true;
      return;
    }
    l->cells = cells;
    l->cap = cap;
  }
  l->v[l->n] = (bh_branch){.prefix = prefix, .depth = depth, .owner = l->owner,
                           .com = {c->com[0], c->com[1], c->com[2]}, .mass = c->mass,
                           .size = c->size, .id = c->id};
  l->cells[l->n++] = c;
}

/* Do the keys of the cell at depth d with path prefix p, [p << s, (p + 1) << s) with
 * s = 3(L - d), all lie in [lo, hi)? */
static bool fits(const branch_list *l, uint64_t prefix, int depth) {
  int shift = 3 * (BH_KEY_LEVELS - depth);
  return prefix << shift >= l->lo && (prefix + 1) << shift <= l->hi;
}

/* A branch is a cell whose keys all lie in this domain: what it holds in the whole system is
 * what it holds here. A leaf whose cell does not fit (other domains' keys share it) goes down
 * its body's key to the first cell that does: that cell holds this body alone. */
static void find_branches(branch_list *l, const bh_cell *c, uint64_t prefix, int depth) {
  if (fits(l, prefix, depth)) {
    push_branch(l, c, prefix, depth);
    return;
  }
  if (c->id >= 0) {
    uint64_t key = bh_key(l->cube, c->com); /* a leaf's centre of mass is its body */
    int d = depth + 1;
    while (!fits(l, key >> 3 * (BH_KEY_LEVELS - d), d)) d++; /* d = L fits: one key */
    push_branch(l, c, key >> 3 * (BH_KEY_LEVELS - d), d);
    return;
  }
  for (int o = 0; o < 8; o++)
    if (c->child[o]) find_branches(l, c->child[o], prefix << 3 | (uint64_t)o, depth + 1);
}

long bh_branches(const bh_tree *t, const bh_cube *cube, uint64_t lo, uint64_t hi, int owner,
                 bh_branch **out, const bh_cell ***cells) {
  branch_list l = {.lo = lo, .hi = hi, .cube = cube, .owner = owner};
  if (t->root) find_branches(&l, t->root, 0, 0);
  if (l.oom) {
    free(l.v), free(l.cells);
    return -1;
  }
  *out = l.v;
  *cells = l.cells;
  return (long)l.n;
}

/* ---- the top tree ---- */

typedef struct top_maker {
  bh_top *top;
  const bh_branch *br;
  size_t used;
} top_maker;

/* Branch b's path prefix at depth d (d <= b's depth <= BH_KEY_LEVELS). */
static uint64_t prefix_at(const bh_branch *b, int d) { return b->prefix >> 3 * (b->depth - d); }

/* The cell of the cube at depth d (half-edge half) over branches br[i, j), all under it; *slot
 * receives it. A single branch at this depth is itself the cell, and so is a single leaf
 * branch at any depth below (a cell holding one body is a leaf, as in the serial tree): a
 * stand-in holding its moments, whose slot the graft fills. */
static void make_cell(top_maker *m, size_t i, size_t j, int depth, double half, bh_cell **slot) {
  bh_cell *x = &m->top->cells[m->used++];
  const bh_branch *b = &m->br[i];
  if (j == i + 1 && (b->depth == depth || b->id >= 0)) {
    *x = (bh_cell){.com = {b->com[0], b->com[1], b->com[2]}, .mass = b->mass, .size = b->size,
                   .id = b->id};
    *slot = x;
    m->top->slot[i] = slot;
    return;
  }
  *x = (bh_cell){.size = 2 * half, .id = BH_INTERNAL};
  *slot = x;
  for (size_t k = i; k < j;) { /* the branches under each octant, contiguous in key order */
    uint64_t p = prefix_at(&m->br[k], depth + 1);
    size_t e = k + 1;
    while (e < j && prefix_at(&m->br[e], depth + 1) == p) e++;
    make_cell(m, k, e, depth + 1, half / 2, &x->child[p & 7]);
    k = e;
  }
}

/* Moments bottom up (children are made after their parent, so backwards is bottom up). */
static void top_moments(bh_top *top) {
  for (size_t k = top->ncells; k-- > 0;) {
    bh_cell *x = &top->cells[k];
    if (x->id != BH_INTERNAL || x->mass > 0) continue;
    double m = 0, mx[3] = {0, 0, 0};
    for (int o = 0; o < 8; o++) {
      const bh_cell *y = x->child[o];
      if (!y) continue;
      m += y->mass;
      for (int d = 0; d < 3; d++) mx[d] += y->mass * y->com[d];
    }
    x->mass = m;
    for (int d = 0; d < 3; d++) x->com[d] = mx[d] / m;
  }
}

int bh_top_build(bh_top *top, const bh_branch *br, size_t nb, const bh_cube *c) {
  memset(top, 0, sizeof *top);
  if (nb == 0) return 0;
  /* at most 2 nb - 1 cells: every top cell has at least two children, or sits on the path to a
   * deeper branch of a run of single children; bound it by the branches' depths instead */
  size_t cap = 0;
  for (size_t i = 0; i < nb; i++) cap += (size_t)br[i].depth + 1;
  top->cells = calloc(cap, sizeof *top->cells);
  top->slot = calloc(nb, sizeof *top->slot);
  if (!top->cells || !top->slot) {
    bh_top_free(top);
    return -1;
  }
  top->nbranches = nb;
  top_maker m = {top, br, 0};
  make_cell(&m, 0, nb, 0, c->half, &top->root);
  top->ncells = m.used;
  top_moments(top);
  return 0;
}

void bh_top_free(bh_top *top) {
  free(top->cells);
  free(top->slot);
  memset(top, 0, sizeof *top);
}

/* ---- LETs ---- */

/* May a walk from any point of the box [lo, hi] open c? Its centre of mass's distance to the
 * box, shrunk by a margin far above rounding: a cell this keeps closed stays closed for all. */
static bool box_opens(const bh_cell *c, const double lo[3], const double hi[3], double theta) {
  double d2 = 0;
  for (int d = 0; d < 3; d++) {
    double x = c->com[d] < lo[d] ? lo[d] - c->com[d] : c->com[d] > hi[d] ? c->com[d] - hi[d] : 0;
    d2 += x * x;
  }
  return bh_opens(c->size, theta, d2 * (1 - 1e-9));
}

static size_t let_count(const bh_cell *c, const double lo[3], const double hi[3], double theta) {
  size_t n = 1;
  if (c->id == BH_INTERNAL && box_opens(c, lo, hi, theta))
    for (int o = 0; o < 8; o++)
      if (c->child[o]) n += let_count(c->child[o], lo, hi, theta);
  return n;
}

static size_t head_bytes(size_t nb) {
  return sizeof(bh_let_head) + nb * sizeof(int64_t);
}

size_t bh_let_bytes(const bh_cell *const *cells, size_t nb, const double lo[3],
                    const double hi[3], double theta) {
  size_t n = 0;
  for (size_t i = 0; i < nb; i++) n += let_count(cells[i], lo, hi, theta);
  return bh_let_size(nb, n);
}

size_t bh_let_branch_cells(const bh_cell *branch, const double lo[3], const double hi[3],
                           double theta) {
  return let_count(branch, lo, hi, theta);
}

size_t bh_let_size(size_t nb, size_t ncells) { return head_bytes(nb) + ncells * sizeof(bh_cell); }

typedef struct let_writer {
  bh_cell *cells;
  size_t used;
  const double *lo, *hi;
  double theta;
  bool relocatable;
} let_writer;

/* Copy c (pre-order) and what the box may open below it; its index. */
static size_t let_copy(let_writer *w, const bh_cell *c) {
  size_t me = w->used++;
  bh_cell *x = &w->cells[me];
  *x = *c;
  memset(x->child, 0, sizeof x->child);
  if (c->id != BH_INTERNAL) return me;
  if (!box_opens(c, w->lo, w->hi, w->theta)) {
    x->id = BH_PRUNED;
    return me;
  }
  for (int o = 0; o < 8; o++) {
    if (!c->child[o]) continue;
    size_t k = let_copy(w, c->child[o]);
    x = &w->cells[me];
    x->child[o] = w->relocatable ? (bh_cell *)(uintptr_t)(k + 1) : &w->cells[k];
  }
  return me;
}

void bh_let_fill(void *buf, const bh_cell *const *cells, size_t nb, const double lo[3],
                 const double hi[3], double theta, bool relocatable) {
  size_t at = 0;
  for (size_t i = 0; i < nb; i++)
    at += bh_let_fill_branch(buf, nb, i, at, cells[i], lo, hi, theta, relocatable);
  bh_let_head_set(buf, nb, at);
}

size_t bh_let_fill_branch(void *buf, size_t nb, size_t i, size_t at, const bh_cell *branch,
                          const double lo[3], const double hi[3], double theta,
                          bool relocatable) {
  int64_t *root = (int64_t *)((bh_let_head *)buf + 1);
  let_writer w = {(bh_cell *)((char *)buf + head_bytes(nb)), at, lo, hi, theta, relocatable};
  root[i] = (int64_t)let_copy(&w, branch);
  return w.used - at;
}

void bh_let_head_set(void *buf, size_t nb, size_t ncells) {
  bh_let_head *h = buf;
  h->ncells = (int64_t)ncells;
  h->nroots = (int64_t)nb;
}

int bh_let_relocate(void *buf, size_t bytes) {
  bh_let_head *h = buf;
  if (bytes < sizeof *h || h->nroots < 0 || h->ncells < 0 ||
      head_bytes((size_t)h->nroots) + (size_t)h->ncells * sizeof(bh_cell) != bytes)
    return -1;
  const int64_t *root = (const int64_t *)(h + 1);
  bh_cell *cells = (bh_cell *)((char *)buf + head_bytes((size_t)h->nroots));
  for (int64_t i = 0; i < h->nroots; i++)
    if (root[i] < 0 || root[i] >= h->ncells) return -1;
  for (int64_t i = 0; i < h->ncells; i++)
    for (int o = 0; o < 8; o++) {
      uintptr_t k = (uintptr_t)cells[i].child[o];
      if (k > (uintptr_t)h->ncells) return -1;
      cells[i].child[o] = k ? &cells[k - 1] : NULL;
    }
  return 0;
}

const bh_cell *bh_let_root(const void *buf, size_t i) {
  const bh_let_head *h = buf;
  if ((int64_t)i >= h->nroots) return NULL;
  const int64_t *root = (const int64_t *)(h + 1);
  return (const bh_cell *)((const char *)buf + head_bytes((size_t)h->nroots)) + root[i];
}

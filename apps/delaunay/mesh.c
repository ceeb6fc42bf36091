/* mesh.c: Bowyer-Watson insertion (after Arens's implementation, as Myrmics section 6.4 uses
 * it): walk from the last triangle to the new point (a visibility walk, one orientation test
 * per edge), grow the cavity of triangles in conflict over neighbours, then replace it by a fan
 * around the point, created in the order of the cavity's boundary. Triangles come from per-cell
 * pools (free list first, then chunks carved in place), each in the cell of its circumcentre
 * (the caller's cell function; one cell without one).
 * Every read or write of a triangle outside the owned cells is refused before it happens, and
 * the insertion is postponed with nothing changed, which is what makes the parallel program
 * correct. Main entries:
 * dt_insert(), dt_start(). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>

#include "dt.h"
#include "pred.h"

/* A boundary edge of the cavity, copied out before the cavity is freed. */
typedef struct dt_edge {
  double a[2], b[2];
  int32_t va, vb;
  dt_tri *in;  /* the cavity's triangle on the edge */
  dt_tri *out; /* the triangle outside, and the slot of out that faced the cavity */
  int outi;
  uint16_t outc, cell;
  dt_tri *nt;
} dt_edge;

static inline int is_ghost(const dt_tri *t) { return (t->v[0] | t->v[1] | t->v[2]) < 0; }
static inline int inf_index(const dt_tri *t) { return t->v[0] < 0 ? 0 : t->v[1] < 0 ? 1 : 2; }
static inline int owned(const dt_mesh *m, int cell) { return !m->own || m->own[cell]; }

/* ---- cells ---- */
int dt_cell_of(const dt_mesh *m, double x, double y) {
  return m->cell_of ? m->cell_of(m->cell_ctx, x, y) : 0;
}

/* The cell of a new triangle's circumcentre (x, y): the hot cell when its rectangle holds the
 * point, else cell_of's answer, whose rectangle becomes the hot one. */
static int fan_cell_of(dt_mesh *m, double x, double y) {
  if (x >= m->hot[0] && x < m->hot[1] && y >= m->hot[2] && y < m->hot[3]) return m->hot_cell;
  int c = m->cell_of(m->cell_ctx, x, y);
  if (m->cell_rect) {
    m->cell_rect(m->cell_ctx, c, m->hot);
    m->hot_cell = c;
  }
  return c;
}

void dt_mesh_cell_rects(dt_mesh *m, dt_cell_rect_fn cell_rect) {
  m->cell_rect = cell_rect;
  memset(m->hot, 0, sizeof m->hot); /* [0, 0) x [0, 0): empty, as dt_mesh_init leaves it */
}

/* The cell of the circumcentre of (a, b, p), all finite: relative to p, the hot cell's
 * rectangle first. */
static int circum_cell(dt_mesh *m, const double *a, const double *b, const double *p) {
  double ex = a[0] - p[0], ey = a[1] - p[1], fx = b[0] - p[0], fy = b[1] - p[1];
  double el = ex * ex + ey * ey, fl = fx * fx + fy * fy, inv = 0.5 / (ex * fy - ey * fx);
  return fan_cell_of(m, p[0] + (fy * el - ey * fl) * inv, p[1] + (ex * fl - fx * el) * inv);
}

/* The cell of triangle (a, b, c), c finite; a or b may be the infinite vertex (va/vb < 0):
 * then the midpoint of the finite edge, else the circumcentre. */
static int tri_cell(dt_mesh *m, const double *a, int32_t va, const double *b, int32_t vb,
                    const double *c) {
  if (!m->cell_of) return 0;
  if (va < 0) return dt_cell_of(m, (b[0] + c[0]) / 2, (b[1] + c[1]) / 2);
  if (vb < 0) return dt_cell_of(m, (a[0] + c[0]) / 2, (a[1] + c[1]) / 2);
  return circum_cell(m, a, b, c);
}

/* ---- pools ---- */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void dt_populate(void *p, size_t bytes) {
  uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095,
            b = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;
  if (b > a && madvise((void *)a, b - a, MADV_POPULATE_WRITE) && getenv("DT_DEBUG"))
    perror("delaunay: madvise(MADV_POPULATE_WRITE)");
}

void *dt_alloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (p && bytes >= (1u << 20)) dt_populate(p, bytes);
  return p;
}

static size_t tris_per_chunk(const dt_chunk *c) {
  return c->bytes > sizeof *c ? (c->bytes - sizeof *c) / sizeof(dt_tri) : 0;
}

static int new_chunk(dt_mesh *m, int cell, dt_pool *p) {
  if (!p->spare && (m->refill(m->ctx, cell, p) || !p->spare)) return -1;
  dt_chunk *c = p->spare;
  if (tris_per_chunk(c) < 1) return -1;
  p->spare = c->next;
  c->next = p->chunks;
  p->chunks = c;
  p->cur = (char *)(c + 1);
  p->end = p->cur + tris_per_chunk(c) * sizeof(dt_tri);
  return 0;
}

static inline dt_tri *tri_alloc(dt_mesh *m, int cell) {
  dt_pool *p = m->pool[cell];
  dt_tri *t = p->free;
  if (t) {
    p->free = t->n[0];
  } else {
    if (p->end - p->cur < (ptrdiff_t)sizeof(dt_tri) && new_chunk(m, cell, p)) return NULL;
    t = (dt_tri *)p->cur;
    p->cur += sizeof(dt_tri);
  }
  p->live++;
  t->mark = 0;
  t->cell = (uint16_t)cell;
  p->hint = t;
  return t;
}

static inline void tri_free(dt_mesh *m, dt_tri *t) {
  dt_pool *p = m->pool[t->cell];
  t->mark = DT_DEAD;
  t->n[0] = p->free;
  p->free = t;
  p->live--;
}

void dt_pool_each(const dt_pool *p, void (*f)(void *ctx, dt_tri *t), void *ctx) {
  for (dt_chunk *c = p->chunks; c; c = c->next) {
    dt_tri *t = (dt_tri *)(c + 1);
    size_t k = c == p->chunks ? (size_t)((dt_tri *)p->cur - t) : tris_per_chunk(c);
    for (size_t i = 0; i < k; i++)
      if (t[i].mark != DT_DEAD) f(ctx, &t[i]);
  }
}

/* ---- set-up ---- */
int dt_mesh_init(dt_mesh *m, dt_pool **pools, int ncells, dt_cell_fn cell_of, const void *cell_ctx,
                 dt_refill_fn refill, void *ctx) {
  memset(m, 0, sizeof *m);
  if (ncells < 1 || ncells > 65536) return -1;
  m->pool = pools;
  m->ncells = ncells;
  m->cell_of = cell_of;
  m->cell_ctx = cell_ctx;
  m->refill = refill;
  m->ctx = ctx;
  m->epoch = 0;
  m->epoch_step = 2;
  m->cap_cav = 64;
  m->cap_bnd = 64;
  m->cav = malloc(m->cap_cav * sizeof *m->cav);
  m->bnd = malloc(m->cap_bnd * sizeof *m->bnd);
  return m->cav && m->bnd ? 0 : -1;
}

void dt_mesh_release(dt_mesh *m) {
  free(m->cav);
  free(m->bnd);
  free(m->hints);
  m->cav = NULL;
  m->bnd = NULL;
  m->hints = NULL;
}

int dt_mesh_hints(dt_mesh *m, int side, const double box[4]) {
  m->hints = calloc((size_t)side * (size_t)side, sizeof *m->hints);
  m->hint_side = side;
  memcpy(m->hbox, box, sizeof m->hbox);
  m->hscale[0] = box[1] > box[0] ? side / (box[1] - box[0]) : 0;
  m->hscale[1] = box[3] > box[2] ? side / (box[3] - box[2]) : 0;
  return m->hints ? 0 : -1;
}

/* The hint of p's square (a multiplication, not a division: a point near a square's edge may
 * land in the next one, which only means another start for a walk). */
static inline dt_hint *hint_at(const dt_mesh *m, const double *p) {
  int s = m->hint_side;
  double u = (p[0] - m->hbox[0]) * m->hscale[0], v = (p[1] - m->hbox[2]) * m->hscale[1];
  int i = u >= 0 ? (u < s ? (int)u : s - 1) : 0, j = v >= 0 ? (v < s ? (int)v : s - 1) : 0;
  return &m->hints[(size_t)j * s + i];
}

static void set_tri(dt_tri *t, const dt_pt *a, const dt_pt *b, const dt_pt *c) {
  const dt_pt *q[3] = {a, b, c};
  for (int k = 0; k < 3; k++) {
    t->v[k] = q[k] ? q[k]->id : DT_INF;
    t->p[k][0] = q[k] ? q[k]->x : 0;
    t->p[k][1] = q[k] ? q[k]->y : 0;
  }
}

static void link(dt_tri *t, int i, dt_tri *u, int j) {
  t->n[i] = u;
  t->nc[i] = u->cell;
  u->n[j] = t;
  u->nc[j] = t->cell;
}

int dt_start(dt_mesh *m, const dt_pt *a, const dt_pt *b, const dt_pt *c) {
  double pa[2] = {a->x, a->y}, pb[2] = {b->x, b->y}, pc[2] = {c->x, c->y};
  double o = pred_orient(pa, pb, pc);
  if (o == 0) return -1;
  if (o < 0) { /* make a, b, c counter-clockwise */
    const dt_pt *s = b;
    b = c;
    c = s;
  }
  double A[2] = {a->x, a->y}, B[2] = {b->x, b->y}, C[2] = {c->x, c->y};
  /* t = (a, b, c); g0 = (c, b, inf), g1 = (a, c, inf), g2 = (b, a, inf) */
  dt_tri *t = tri_alloc(m, tri_cell(m, A, a->id, B, b->id, C));
  dt_tri *g0 = t ? tri_alloc(m, tri_cell(m, NULL, DT_INF, C, c->id, B)) : NULL;
  dt_tri *g1 = g0 ? tri_alloc(m, tri_cell(m, NULL, DT_INF, A, a->id, C)) : NULL;
  dt_tri *g2 = g1 ? tri_alloc(m, tri_cell(m, NULL, DT_INF, B, b->id, A)) : NULL;
  if (!g2) return -1;
  set_tri(t, a, b, c);
  set_tri(g0, c, b, NULL);
  set_tri(g1, a, c, NULL);
  set_tri(g2, b, a, NULL);
  link(t, 0, g0, 2);
  link(t, 1, g1, 2);
  link(t, 2, g2, 2);
  link(g0, 0, g2, 1); /* (b, inf) */
  link(g0, 1, g1, 0); /* (inf, c) */
  link(g1, 1, g2, 0); /* (inf, a) */
  m->last = t;
  m->last_cell = t->cell;
  m->st.inserted += 3;
  return 0;
}

int dt_pick_start(const dt_pt *pts, size_t n, size_t *i, size_t *j, size_t *k) {
  size_t b = 1;
  while (b < n && pts[b].x == pts[0].x && pts[b].y == pts[0].y) b++;
  if (b >= n) return -1;
  double A[2] = {pts[0].x, pts[0].y}, B[2] = {pts[b].x, pts[b].y};
  for (size_t c = b + 1; c < n; c++) {
    double C[2] = {pts[c].x, pts[c].y};
    if (pred_orient(A, B, C) != 0) {
      *i = 0, *j = b, *k = c;
      return 0;
    }
  }
  return -1;
}

/* ---- the conflict test ---- */
static inline int lex_less(const double *a, const double *b) {
  return a[0] < b[0] || (a[0] == b[0] && a[1] < b[1]);
}

/* d on the circle through the counter-clockwise a, b, c (all distinct): CGAL's symbolic
 * perturbation (Delaunay_triangulation_2::side_of_oriented_circle with perturb): sort the four
 * points lexicographically and decide by the first non-vanishing orientation, from the
 * largest point down. +1: in conflict. */
static int perturbed(const double *a, const double *b, const double *c, const double *d) {
  const double *q[4] = {a, b, c, d};
  for (int i = 1; i < 4; i++) /* insertion sort, ascending */
    for (int j = i; j > 0 && lex_less(q[j], q[j - 1]); j--) {
      const double *s = q[j];
      q[j] = q[j - 1];
      q[j - 1] = s;
    }
  for (int i = 3; i > 0; i--) {
    double o;
    if (q[i] == d) return -1;
    if (q[i] == c && (o = pred_orient(a, b, d)) != 0) return o > 0 ? 1 : -1;
    if (q[i] == b && (o = pred_orient(a, d, c)) != 0) return o > 0 ? 1 : -1;
    if (q[i] == a && (o = pred_orient(d, b, c)) != 0) return o > 0 ? 1 : -1;
  }
  return -1; /* not reached for a, b, c not collinear */
}

static inline int between(const double *u, const double *w, const double *p) {
  int d = u[0] != w[0] ? 0 : 1;
  double lo = u[d] < w[d] ? u[d] : w[d], hi = u[d] < w[d] ? w[d] : u[d];
  return p[d] > lo && p[d] < hi;
}

/* Is p in conflict with t: strictly inside its circumcircle (perturbed when on it), or for a
 * ghost (u, w, inf): strictly outside the hull edge u->w, or on its open segment. */
static inline int in_conflict(const dt_tri *t, const double *p) {
  if (is_ghost(t)) {
    int i = inf_index(t);
    const double *u = t->p[(i + 1) % 3], *w = t->p[(i + 2) % 3];
    double o = pred_orient(u, w, p);
    if (o != 0) return o > 0;
    return between(u, w, p);
  }
  double r = pred_incircle(t->p[0], t->p[1], t->p[2], p);
  if (r != 0) return r > 0;
  return perturbed(t->p[0], t->p[1], t->p[2], p) > 0;
}

/* ---- location ---- */
/* Walk from t to a triangle in conflict with p: the finite triangle holding p (closed), or the
 * ghost beyond the hull edge that p lies strictly outside of. Where p is beyond two edges, an
 * edge into an owned cell is taken. NULL: every way on needs a cell not owned. */
static dt_tri *walk(dt_mesh *m, dt_tri *t, const double *p) {
  dt_tri *from = NULL;
  if (is_ghost(t)) {
    int i = inf_index(t);
    if (!owned(m, t->nc[i])) {
      m->blocked_cell = t->nc[i];
      return NULL;
    }
    t = t->n[i];
  }
  for (;;) {
    int k, blocked = -1;
    for (k = 0; k < 3; k++) {
      if (t->n[k] == from) continue; /* p is beyond the edge we came through */
      if (pred_orient(t->p[(k + 1) % 3], t->p[(k + 2) % 3], p) < 0) {
        if (t->nc[k] == t->cell || owned(m, t->nc[k])) break; /* (t's cell is owned) */
        blocked = k;
      }
    }
    m->st.walk_steps++;
    if (k == 3 && blocked >= 0) m->blocked_cell = t->nc[blocked];
    if (k == 3) return blocked < 0 ? t : NULL;
    from = t;
    t = t->n[k];
    if (is_ghost(t)) return t;
  }
}

/* A live triangle of pool p (the first found), or NULL. */
static dt_tri *pool_first_live(const dt_pool *p) {
  for (dt_chunk *c = p->chunks; c; c = c->next) {
    dt_tri *t = (dt_tri *)(c + 1);
    size_t k = c == p->chunks ? (size_t)((dt_tri *)p->cur - t) : tris_per_chunk(c);
    for (size_t i = 0; i < k; i++)
      if (t[i].mark != DT_DEAD) return &t[i];
  }
  return NULL;
}

/* From the last triangle; when that way is blocked, from the latest one made near p (the hint
 * grid's, where its cell is owned and it lives), then from a triangle of p's cell (its latest,
 * or the first live one when that one died since). */
static dt_tri *locate(dt_mesh *m, const double *p) {
  dt_tri *t = walk(m, m->last, p);
  if (t || !m->own) return t;
  dt_hint *g = m->hints ? hint_at(m, p) : NULL;
  if (g && g->t && g->t != m->last && owned(m, g->cell) && g->t->mark != DT_DEAD &&
      (t = walk(m, g->t, p)))
    return t;
  int c = dt_cell_of(m, p[0], p[1]);
  if (!m->own[c]) {
    m->blocked_cell = c;
    return NULL;
  }
  dt_tri *h = m->pool[c]->hint;
  if (h && h->mark == DT_DEAD) h = pool_first_live(m->pool[c]);
  if (!h || h == m->last) return NULL;
  return walk(m, h, p);
}

static int next_epoch(dt_mesh *m);

/* The cells of the fan's triangles (a, b, p), into the boundary edges; -1 when one is not owned.
 * Most need no circumcentre. The circles through a and b have their centres on the bisector of
 * ab, and the side of ab where p lies is covered more the further the centre moves to that
 * side. p is in the circle of the cavity's triangle on ab (on p's side) and not inside the one
 * of the triangle outside, so the new circle's centre lies between the two old centres. Cells are
 * axis-aligned boxes (convex), so where both old triangles are finite and in one cell, the new
 * one is in that cell too. (In exact arithmetic: a label is the cell of the computed centre, and
 * may differ from it where a centre lies within rounding of a border; nothing recomputes one.) */
static int fan_cells(dt_mesh *m, const double *p, size_t nb) {
  dt_edge *bnd = m->bnd;
  if (!m->cell_of) {
    for (size_t i = 0; i < nb; i++) bnd[i].cell = 0;
    return 0;
  }
  for (size_t i = 0; i < nb; i++) {
    dt_edge *e = &bnd[i];
    int c;
    if ((e->va | e->vb) < 0) {
      c = tri_cell(m, e->a, e->va, e->b, e->vb, p);
    } else if (e->outc == e->in->cell && !is_ghost(e->in) && !is_ghost(e->out)) {
      e->cell = e->outc; /* the cavity's cell: owned */
      continue;
    } else {
      c = circum_cell(m, e->a, e->b, p);
    }
    e->cell = (uint16_t)c;
    if (!owned(m, c)) {
      m->blocked_cell = c;
      return -1;
    }
  }
  return 0;
}

/* ---- insertion ---- */
static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  size_t c = *cap * 2;
  while (c < need) c *= 2;
  void *p = realloc(*arr, c * elem);
  if (!p) return -1;
  *arr = p;
  *cap = c;
  return 0;
}

/* 1. The cavity of p: every triangle in conflict, grown over neighbours from t, into m->cav.
 * Its size, 0 when it needs a cell not owned (nothing changed but marks), -1 on memory. */
static long grow_cavity(dt_mesh *m, dt_tri *t, const double *p) {
  const uint32_t IN = m->epoch, OUT = m->epoch + 1;
  size_t nc = 1;
  m->cav[0] = t;
  t->mark = IN;
  for (size_t i = 0; i < nc; i++) {
    dt_tri *c = m->cav[i];
    for (int k = 0; k < 3; k++) {
      if (c->nc[k] != c->cell && !owned(m, c->nc[k])) { /* (c's own cell is owned) */
        m->blocked_cell = c->nc[k];
        m->st.blocked_cavity++;
        return 0;
      }
      dt_tri *nb = c->n[k];
      if (nb->mark == IN || nb->mark == OUT) continue;
      if (in_conflict(nb, p)) {
        if (grow((void **)&m->cav, &m->cap_cav, nc + 1, sizeof *m->cav)) return -1;
        nb->mark = IN;
        m->cav[nc++] = nb;
      } else {
        nb->mark = OUT;
      }
    }
  }
  return (long)nc;
}

/* 2. The cavity's boundary into m->bnd, counter-clockwise: from one boundary edge (a, b), turn
 * around b inside the cavity to the next edge leaving b. Its length, or -1 on memory. */
static long trace_boundary(dt_mesh *m, size_t nc) {
  const uint32_t IN = m->epoch;
  dt_tri *c0 = NULL;
  int k0 = 0;
  for (size_t i = 0; i < nc && !c0; i++)
    for (int k = 0; k < 3; k++)
      if (m->cav[i]->n[k]->mark != IN) {
        c0 = m->cav[i];
        k0 = k;
        break;
      }
  size_t nb = 0;
  dt_tri *c = c0;
  int k = k0;
  do {
    if (grow((void **)&m->bnd, &m->cap_bnd, nb + 1, sizeof *m->bnd)) return -1;
    dt_edge *e = &m->bnd[nb++];
    int ia = (k + 1) % 3, ib = (k + 2) % 3;
    e->a[0] = c->p[ia][0], e->a[1] = c->p[ia][1];
    e->b[0] = c->p[ib][0], e->b[1] = c->p[ib][1];
    e->va = c->v[ia];
    e->vb = c->v[ib];
    e->in = c;
    e->out = c->n[k];
    e->outc = c->nc[k];
    e->outi = e->out->n[0] == c ? 0 : e->out->n[1] == c ? 1 : 2;
    int32_t vb = e->vb;
    for (int j = ib;;) {
      int x = (j + 2) % 3;
      if (c->n[x]->mark != IN) {
        k = x;
        break;
      }
      c = c->n[x];
      j = c->v[0] == vb ? 0 : c->v[1] == vb ? 1 : 2;
    }
  } while (c != c0 || k != k0);
  return (long)nb;
}

/* 4. Free the cavity, create the fan around p (reusing the freed triangles) and link it. */
static int make_fan(dt_mesh *m, const double *p, int32_t id, size_t nc, size_t nb) {
  for (size_t i = 0; i < nc; i++) tri_free(m, m->cav[i]);
  for (size_t i = 0; i < nb; i++) {
    dt_edge *e = &m->bnd[i];
    dt_tri *n = tri_alloc(m, e->cell);
    if (!n) return -1;
    e->nt = n;
    n->p[0][0] = e->a[0], n->p[0][1] = e->a[1];
    n->p[1][0] = e->b[0], n->p[1][1] = e->b[1];
    n->p[2][0] = p[0], n->p[2][1] = p[1];
    n->v[0] = e->va, n->v[1] = e->vb, n->v[2] = id;
    n->n[2] = e->out;
    n->nc[2] = e->outc;
    e->out->n[e->outi] = n;
    e->out->nc[e->outi] = n->cell;
  }
  for (size_t i = 0; i < nb; i++) {
    dt_tri *a = m->bnd[i].nt, *b = m->bnd[i + 1 < nb ? i + 1 : 0].nt;
    a->n[0] = b; /* across (b_i, p) */
    a->nc[0] = b->cell;
    b->n[1] = a; /* across (p, a_{i+1}) */
    b->nc[1] = a->cell;
  }
  m->last = m->bnd[0].nt;
  m->last_cell = m->last->cell;
  return 0;
}

static int postponed(dt_mesh *m) {
  m->st.postponed++;
  return DT_POSTPONED;
}

/* Postponed after its walk found t (live, in a held cell, where p is): the next walk starts
 * there. The next point is most likely near this one, and the last triangle made may be far:
 * points along a window's edge that wait, one after another, would each walk again from where
 * the last insertion was (hundreds of steps along a zone). */
static int postponed_at(dt_mesh *m, dt_tri *t) {
  m->last = t;
  m->last_cell = t->cell;
  return postponed(m);
}

int dt_insert(dt_mesh *m, const dt_pt *pt) {
  const double p[2] = {pt->x, pt->y};
  dt_tri *t = locate(m, p);
  if (!t) {
    m->st.blocked_walk++;
    return postponed(m);
  }
  if (!is_ghost(t))
    for (int k = 0; k < 3; k++)
      if (t->p[k][0] == p[0] && t->p[k][1] == p[1]) {
        m->dup_of = t->v[k];
        m->st.duplicates++;
        return DT_DUPLICATE;
      }
  if (next_epoch(m)) return DT_NOMEM;
  long nc = grow_cavity(m, t, p);
  if (nc <= 0) return nc < 0 ? DT_NOMEM : postponed_at(m, t);
  long nb = trace_boundary(m, (size_t)nc);
  if (nb < 0) return DT_NOMEM;
  if (fan_cells(m, p, (size_t)nb)) { /* 3. the new triangles' cells: all owned, or nothing */
    m->st.blocked_new++;
    return postponed_at(m, t);
  }
  if (make_fan(m, p, pt->id, (size_t)nc, (size_t)nb)) return DT_NOMEM;
  if (m->hints) *hint_at(m, p) = (dt_hint){m->last, m->last_cell};
  m->st.inserted++;
  m->st.cavity_tris += nc;
  return DT_INSERTED;
}

/* ---- epochs ---- */
static void unmark(void *ctx, dt_tri *t) {
  (void)ctx;
  t->mark = 0;
}

/* The next cavity epoch (even; epoch + 1 marks "tested, not in conflict"). Parallel callers
 * give each worker its own residue (epoch_base, epoch_step), so marks left by one worker never
 * look current to another. When the counter would wrap, a mesh that owns everything clears the
 * marks; one that does not cannot, and fails (after ~2^31 / workers insertions). */
static int next_epoch(dt_mesh *m) {
  if (m->epoch == 0)
    m->epoch = m->epoch_base + 2;
  else if (m->epoch > 0xfffffff0u - m->epoch_step) {
    if (m->own) return -1;
    for (int c = 0; c < m->ncells; c++) dt_pool_each(m->pool[c], unmark, NULL);
    m->epoch = m->epoch_base + 2;
  } else {
    m->epoch += m->epoch_step;
  }
  return 0;
}

/* ---- ownership changes and output ---- */
static void first_live(void *ctx, dt_tri *t) {
  dt_tri **found = ctx;
  if (!*found) *found = t;
}

int dt_restart(dt_mesh *m) {
  if (m->last && owned(m, m->last_cell) && m->last->mark != DT_DEAD &&
      m->last->cell == m->last_cell)
    return 0;
  for (int pass = 0; pass < 2; pass++)
    for (int c = 0; c < m->ncells; c++) {
      if (!owned(m, c)) continue;
      dt_pool *p = m->pool[c];
      dt_tri *t = p->hint && p->hint->mark != DT_DEAD && p->hint->cell == c ? p->hint : NULL;
      if (!t && pass == 1) dt_pool_each(p, first_live, &t); /* rare */
      if (t) {
        m->last = t;
        m->last_cell = c;
        return 0;
      }
    }
  return -1;
}

typedef struct collect_ctx {
  int32_t *tri;
  size_t n;
} collect_ctx;

static void collect_one(void *ctx, dt_tri *t) {
  collect_ctx *c = ctx;
  if (is_ghost(t)) return;
  if (c->tri) memcpy(c->tri + 3 * c->n, t->v, 3 * sizeof(int32_t));
  c->n++;
}

size_t dt_collect(const dt_mesh *m, const uint8_t *own, int32_t *tri) {
  collect_ctx c = {tri, 0};
  for (int cell = 0; cell < m->ncells; cell++)
    if (!own || own[cell]) dt_pool_each(m->pool[cell], collect_one, &c);
  return c.n;
}

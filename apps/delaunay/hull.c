/* hull.c: the convex hull (Andrew's monotone chain, exact orientation) and the hull band: the
 * points within a distance of the hull's boundary. The parallel program inserts the hull and the
 * band first, at level 0: afterwards no point lies outside the mesh's hull (so no cavity reaches
 * the ghosts), and the long, thin triangles along long hull edges, whose circumcircles span many
 * cells, are final before the space is split (the border problem's main source). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "dt.h"
#include "pred.h"

static int by_xy_id(const void *pa, const void *pb) {
  const dt_pt *a = pa, *b = pb;
  if (a->x != b->x) return a->x < b->x ? -1 : 1;
  if (a->y != b->y) return a->y < b->y ? -1 : 1;
  return (a->id > b->id) - (a->id < b->id);
}

static double orient_pt(const dt_pt *a, const dt_pt *b, const dt_pt *c) {
  double A[2] = {a->x, a->y}, B[2] = {b->x, b->y}, C[2] = {c->x, c->y};
  return pred_orient(A, B, C);
}

size_t dt_hull(dt_pt *pts, size_t n, dt_pt *out) {
  qsort(pts, n, sizeof *pts, by_xy_id);
  size_t h = 0;
  for (size_t i = 0; i < n; i++) {
    if (i && pts[i].x == pts[i - 1].x && pts[i].y == pts[i - 1].y) continue;
    while (h >= 2 && orient_pt(&out[h - 2], &out[h - 1], &pts[i]) <= 0) h--;
    out[h++] = pts[i];
  }
  size_t lower = h;
  for (size_t i = n - 1; n >= 2 && i-- > 0;) {
    if (pts[i].x == pts[i + 1].x && pts[i].y == pts[i + 1].y) continue;
    while (h > lower && orient_pt(&out[h - 2], &out[h - 1], &pts[i]) <= 0) h--;
    out[h++] = pts[i];
  }
  return h > 1 ? h - 1 : h;
}

#define BAND_GRID 64     /* squares a side of the band's grid */
#define BAND_GRID_EDGES 4096 /* no grid for a hull with more edges (its set-up would cost more) */

/* The grid of squares wholly inside the hull shrunk by delta: a square whose four corners are
 * all at least delta (plus a margin over rounding) inside every edge is, the hull being convex,
 * so everywhere in it, and dt_band_has answers 0 there at once. Most points on clustered input,
 * whose hull's inner rectangle is small, are found this way instead of against every edge. */
static void band_grid(dt_band *b, const double lo[2], const double hi[2]) {
  b->inside = NULL;
  if (b->h < 3 || b->h > BAND_GRID_EDGES || !(hi[0] > lo[0]) || !(hi[1] > lo[1])) return;
  double w = (hi[0] - lo[0]) / BAND_GRID, v = (hi[1] - lo[1]) / BAND_GRID;
  double tol = 1e-12 * (fabs(lo[0]) + fabs(hi[0]) + fabs(lo[1]) + fabs(hi[1]));
  uint8_t *ok = malloc((BAND_GRID + 1) * (BAND_GRID + 1)); /* per corner: inside enough */
  b->inside = calloc(BAND_GRID * BAND_GRID, 1);
  if (!ok || !b->inside) {
    free(ok), free(b->inside);
    b->inside = NULL;
    return;
  }
  for (int j = 0; j <= BAND_GRID; j++)
    for (int i = 0; i <= BAND_GRID; i++) {
      double x = lo[0] + w * i, y = lo[1] + v * j;
      int in = 1;
      for (size_t k = 0; k < b->h && in; k++)
        if (b->e[k].nx * x + b->e[k].ny * y + b->e[k].c < b->delta + tol) in = 0;
      ok[j * (BAND_GRID + 1) + i] = (uint8_t)in;
    }
  for (int j = 0; j < BAND_GRID; j++)
    for (int i = 0; i < BAND_GRID; i++) {
      const uint8_t *c = &ok[j * (BAND_GRID + 1) + i];
      b->inside[j * BAND_GRID + i] = c[0] & c[1] & c[BAND_GRID + 1] & c[BAND_GRID + 2];
    }
  free(ok);
  b->g[0] = lo[0], b->g[1] = lo[1], b->g[2] = 1 / w, b->g[3] = 1 / v;
}

int dt_band_init(dt_band *b, const dt_pt *hull, size_t h, double delta) {
  b->h = h;
  b->delta = delta;
  b->inside = NULL;
  b->e = malloc((h ? h : 1) * sizeof *b->e);
  if (!b->e) return -1;
  for (size_t i = 0; i < h; i++) { /* inward unit normal: left of the counter-clockwise edge */
    const dt_pt *a = &hull[i], *c = &hull[(i + 1) % h];
    double dx = c->x - a->x, dy = c->y - a->y, len = sqrt(dx * dx + dy * dy);
    b->e[i].nx = len > 0 ? -dy / len : 0;
    b->e[i].ny = len > 0 ? dx / len : 0;
    b->e[i].c = -(b->e[i].nx * a->x + b->e[i].ny * a->y);
  }
  /* a rectangle inside the hull shrunk by delta (a quick "not in the band"): the hull's box
   * scaled about its centre until its four corners pass; convexity does the rest */
  double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
  for (size_t i = 0; i < h; i++) {
    lo[0] = fmin(lo[0], hull[i].x), hi[0] = fmax(hi[0], hull[i].x);
    lo[1] = fmin(lo[1], hull[i].y), hi[1] = fmax(hi[1], hull[i].y);
  }
  double cx = (lo[0] + hi[0]) / 2, cy = (lo[1] + hi[1]) / 2;
  b->r[0] = b->r[2] = 1, b->r[1] = b->r[3] = 0; /* empty */
  for (double t = 1; h >= 3 && t > 0; t -= 1.0 / 128) {
    double x0 = cx + t * (lo[0] - cx), x1 = cx + t * (hi[0] - cx);
    double y0 = cy + t * (lo[1] - cy), y1 = cy + t * (hi[1] - cy);
    double X[4] = {x0, x1, x1, x0}, Y[4] = {y0, y0, y1, y1};
    int ok = 1;
    for (int k = 0; k < 4 && ok; k++)
      for (size_t i = 0; i < h && ok; i++)
        if (b->e[i].nx * X[k] + b->e[i].ny * Y[k] + b->e[i].c < delta) ok = 0;
    if (ok) {
      b->r[0] = x0, b->r[1] = x1, b->r[2] = y0, b->r[3] = y1;
      break;
    }
  }
  band_grid(b, lo, hi);
  return 0;
}

void dt_band_free(dt_band *b) {
  free(b->e), free(b->inside);
  b->e = NULL, b->inside = NULL;
}

int dt_band_surely_inside(const dt_band *b, double x, double y) {
  if (b->h < 3) return 0;
  if (x > b->r[0] && x < b->r[1] && y > b->r[2] && y < b->r[3]) return 1;
  if (!b->inside) return 0;
  double u = (x - b->g[0]) * b->g[2], v = (y - b->g[1]) * b->g[3];
  return u >= 0 && u < BAND_GRID && v >= 0 && v < BAND_GRID &&
         b->inside[(int)v * BAND_GRID + (int)u];
}

int dt_band_rect_surely_inside(const dt_band *b, const double r[4]) {
  return b->h >= 3 && r[0] > b->r[0] && r[1] < b->r[1] && r[2] > b->r[2] && r[3] < b->r[3];
}

int dt_band_has(const dt_band *b, double x, double y) {
  if (b->h < 3) return 1;
  if (dt_band_surely_inside(b, x, y)) return 0;
  for (size_t i = 0; i < b->h; i++)
    if (b->e[i].nx * x + b->e[i].ny * y + b->e[i].c < b->delta) return 1;
  return 0;
}

double dt_hull_delta(const dt_pt *hull, size_t h, size_t n, double band_points) {
  double area = 0, perim = 0;
  for (size_t i = 0; i < h; i++) {
    const dt_pt *a = &hull[i], *c = &hull[(i + 1) % h];
    area += a->x * c->y - c->x * a->y;
    perim += hypot(c->x - a->x, c->y - a->y);
  }
  area = fabs(area) / 2;
  return perim > 0 && n ? band_points * area / ((double)n * perim) : 0;
}

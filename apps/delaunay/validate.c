/* validate.c: checks of a triangulation that trust nothing but the points and the list of
 * triangles (vertex id triples): not the mesh's pointers, not its cells. The hull is computed
 * here on its own (Andrew's monotone chain, exact orientation), and every test of geometry is
 * an exact predicate. Main entry: dt_validate(). Also the triangle files and set comparison
 * used against qhull, CGAL and between our own programs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt.h"
#include "pred.h"

/* Sort order of the points: by x, then y, then id; on copies of the coordinates, so that the
 * sort reads memory in order (an index sort through the coordinates was most of the check's time
 * at 3,000,000 points). */
static int by_xy_then_id(const void *pa, const void *pb) {
  const dt_pt *a = pa, *b = pb;
  if (a->x != b->x) return a->x < b->x ? -1 : 1;
  if (a->y != b->y) return a->y < b->y ? -1 : 1;
  return (a->id > b->id) - (a->id < b->id);
}

/* ---- directed edges: per vertex (by its rank in x, y order, so that neighbours in the mesh
 * are near in memory), the edges leaving it: (head, triangle * 3 + side), in CSR form ---- */
typedef struct edge_rows {
  size_t *off; /* rows: [off[r], off[r + 1]) */
  int32_t *head;
  uint32_t *tri;
} edge_rows;

/* The triangle side (3 t + k) of the directed edge a -> b (ranks), or -1. */
static int64_t find_edge(const edge_rows *e, int32_t a, int32_t b) {
  for (size_t i = e->off[a]; i < e->off[a + 1]; i++)
    if (e->head[i] == b) return e->tri[i];
  return -1;
}

#define FAIL(...)                       \
  do {                                  \
    snprintf(err, errlen, __VA_ARGS__); \
    goto out;                           \
  } while (0)

static const double *pt(const double *xy, int32_t id) { return xy + 2 * (size_t)id; }

int dt_validate(const double *xy, size_t n, const int32_t *tri, size_t ntri, const int32_t *dup,
                size_t ndup, dt_check *res, char *err, size_t errlen) {
  int rc = -1;
  uint8_t *is_dup = calloc(n ? n : 1, 1), *used = calloc(n ? n : 1, 1);
  int32_t *order = malloc((n ? n : 1) * sizeof *order), *hull = malloc((2 * n + 2) * sizeof *hull);
  int32_t *next = malloc((n ? n : 1) * sizeof *next), *rank = malloc((n ? n : 1) * sizeof *rank);
  int32_t *rt = malloc((3 * ntri + 1) * sizeof *rt); /* the triangles, in ranks */
  double *sxy = malloc((2 * n + 2) * sizeof *sxy);   /* coordinates by rank */
  dt_pt *sorted = malloc((n ? n : 1) * sizeof *sorted);
  edge_rows e = {calloc(n + 2, sizeof *e.off), malloc((3 * ntri + 1) * sizeof *e.head),
                 malloc((3 * ntri + 1) * sizeof *e.tri)};
  memset(res, 0, sizeof *res);
  err[0] = 0;
  if (!is_dup || !used || !order || !hull || !next || !rank || !rt || !sxy || !sorted || !e.off ||
      !e.head || !e.tri)
    FAIL("out of memory for the check");

  /* 1. duplicates: in every run of equal points exactly one is kept, the others reported */
  for (size_t i = 0; i < ndup; i++) {
    if (dup[i] < 0 || (size_t)dup[i] >= n || is_dup[dup[i]]) FAIL("bad duplicate id %d", dup[i]);
    is_dup[dup[i]] = 1;
  }
  for (size_t i = 0; i < n; i++) sorted[i] = (dt_pt){xy[2 * i], xy[2 * i + 1], (int32_t)i, 0};
  qsort(sorted, n, sizeof *sorted, by_xy_then_id);
  size_t m = 0; /* distinct points: order[r] is the id of rank r, sxy its coordinates */
  for (size_t i = 0; i < n;) {
    size_t j = i, kept = 0;
    int32_t keep = -1;
    for (; j < n && sorted[j].x == sorted[i].x && sorted[j].y == sorted[i].y; j++)
      if (!is_dup[sorted[j].id]) kept++, keep = sorted[j].id;
    if (kept != 1)
      FAIL("point %d (%.17g, %.17g) occurs %zu times with %zu of them kept (must be 1)",
           sorted[i].id, sorted[i].x, sorted[i].y, j - i, kept);
    for (size_t k = i; k < j; k++) rank[sorted[k].id] = (int32_t)m;
    sxy[2 * m] = sorted[i].x, sxy[2 * m + 1] = sorted[i].y;
    order[m++] = keep;
    i = j;
  }
  res->distinct = m;

  /* 2. the convex hull (in ranks), counter-clockwise, collinear boundary points included */
  size_t h = 0;
  for (size_t i = 0; i < m; i++) { /* lower chain, left to right */
    while (h >= 2 &&
           pred_orient(pt(sxy, hull[h - 2]), pt(sxy, hull[h - 1]), pt(sxy, (int32_t)i)) < 0)
      h--;
    hull[h++] = (int32_t)i;
  }
  size_t lower = h;
  for (size_t i = m - 1; m >= 2 && i-- > 0;) { /* upper chain, right to left */
    while (h >= lower + 1 &&
           pred_orient(pt(sxy, hull[h - 2]), pt(sxy, hull[h - 1]), pt(sxy, (int32_t)i)) < 0)
      h--;
    hull[h++] = (int32_t)i;
  }
  if (m >= 2) h--; /* the last point of the upper chain is the first of the lower */
  int collinear = m < 3;
  if (!collinear) {
    collinear = 1;
    for (size_t i = 2; i < m && collinear; i++)
      if (pred_orient(pt(sxy, 0), pt(sxy, 1), pt(sxy, (int32_t)i)) != 0) collinear = 0;
  }
  res->collinear = collinear;
  if (collinear) {
    if (ntri) FAIL("all %zu distinct points lie on one line, yet there are %zu triangles", m, ntri);
    rc = 0;
    goto out;
  }
  for (size_t i = 0; i < m; i++) next[i] = -1;
  for (size_t i = 0; i < h; i++) next[hull[i]] = hull[(i + 1) % h];
  res->hull = h;

  /* 3. every triangle: valid distinct kept ids, counter-clockwise; its edges into the rows */
  for (size_t t = 0; t < ntri; t++) {
    const int32_t *v = tri + 3 * t;
    for (int k = 0; k < 3; k++) {
      if (v[k] < 0 || (size_t)v[k] >= n) FAIL("triangle %zu: vertex id %d out of range", t, v[k]);
      if (is_dup[v[k]]) FAIL("triangle %zu uses point %d, reported as a duplicate", t, v[k]);
      used[v[k]] = 1;
      rt[3 * t + k] = rank[v[k]];
    }
    const int32_t *r = rt + 3 * t;
    if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2]) FAIL("triangle %zu repeats a vertex", t);
    if (pred_orient(pt(sxy, r[0]), pt(sxy, r[1]), pt(sxy, r[2])) <= 0)
      FAIL("triangle %zu (%d %d %d) is not counter-clockwise", t, v[0], v[1], v[2]);
    for (int k = 0; k < 3; k++) e.off[r[k] + 2]++;
  }
  for (size_t i = 0; i < m; i++)
    if (!used[order[i]]) FAIL("point %d is no triangle's vertex", order[i]);
  for (size_t i = 2; i <= m + 1; i++) e.off[i] += e.off[i - 1];
  for (size_t t = 0; t < ntri; t++) /* off[r + 1] is the fill point of row r */
    for (int k = 0; k < 3; k++) {
      size_t at = e.off[rt[3 * t + k] + 1]++;
      e.head[at] = rt[3 * t + (k + 1) % 3];
      e.tri[at] = (uint32_t)(3 * t + k);
    }
  for (size_t a = 0; a < m; a++) /* directed edges unique: two would be overlapping triangles */
    for (size_t i = e.off[a]; i < e.off[a + 1]; i++)
      for (size_t j = e.off[a]; j < i; j++)
        if (e.head[i] == e.head[j])
          FAIL("the directed edge %d->%d is in two triangles (they overlap)", order[a],
               order[e.head[i]]);

  /* 4. edges with one triangle are exactly the hull's; across the others, empty circles */
  size_t boundary = 0, checked = 0;
  for (size_t t = 0; t < ntri; t++) {
    const int32_t *r = rt + 3 * t;
    for (int k = 0; k < 3; k++) {
      int32_t a = r[k], b = r[(k + 1) % 3], c = r[(k + 2) % 3];
      int64_t other = find_edge(&e, b, a);
      if (other < 0) {
        if (next[a] != b)
          FAIL("edge %d->%d has one triangle but is not a convex hull edge", order[a], order[b]);
        boundary++;
        continue;
      }
      if (a > b) continue; /* each interior edge once */
      int32_t d = rt[3 * (other / 3) + (other % 3 + 2) % 3];
      if (pred_incircle(pt(sxy, a), pt(sxy, b), pt(sxy, c), pt(sxy, d)) > 0)
        FAIL("not Delaunay: point %d is inside the circle of triangle (%d %d %d)", order[d],
             order[a], order[b], order[c]);
      checked++;
    }
  }
  if (boundary != h) FAIL("%zu boundary edges, but the convex hull has %zu", boundary, h);
  if (ntri != 2 * m - 2 - h)
    FAIL("%zu triangles; a triangulation of %zu points with %zu on the hull has %zu", ntri, m, h,
         2 * m - 2 - h);
  res->triangles = ntri;
  res->delaunay_edges = checked;
  rc = 0;
out:
  free(is_dup), free(used), free(order), free(hull), free(next), free(rank), free(rt), free(sxy);
  free(sorted), free(e.off), free(e.head), free(e.tri);
  return rc;
}

/* ---- triangle sets and files ---- */
static int cmp_triple(const void *pa, const void *pb) {
  const int32_t *a = pa, *b = pb;
  for (int k = 0; k < 3; k++)
    if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
  return 0;
}

static void normalize(int32_t *t, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int32_t *v = t + 3 * i;
    for (int a = 0; a < 2; a++)
      for (int b = a + 1; b < 3; b++)
        if (v[b] < v[a]) {
          int32_t s = v[a];
          v[a] = v[b];
          v[b] = s;
        }
  }
  if (n > 1) qsort(t, n, 3 * sizeof *t, cmp_triple); /* (t may be NULL when n is 0) */
}

size_t dt_compare_sets(int32_t *a, size_t na, int32_t *b, size_t nb, char *err, size_t errlen) {
  normalize(a, na);
  normalize(b, nb);
  size_t i = 0, j = 0, diff = 0;
  err[0] = 0;
  while (i < na || j < nb) {
    int c = i == na ? 1 : j == nb ? -1 : cmp_triple(a + 3 * i, b + 3 * j);
    if (c == 0) {
      i++, j++;
      continue;
    }
    const int32_t *v = c < 0 ? a + 3 * i : b + 3 * j;
    if (!diff)
      snprintf(err, errlen, "triangle (%d %d %d) only in the %s list", v[0], v[1], v[2],
               c < 0 ? "first" : "second");
    diff++;
    if (c < 0)
      i++;
    else
      j++;
  }
  return diff;
}

int dt_read_triangles(const char *path, int32_t **tri, size_t *ntri, char *err, size_t errlen) {
  FILE *f = fopen(path, "r");
  *tri = NULL;
  *ntri = 0;
  if (!f) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  char line[256];
  size_t cap = 0;
  long lineno = 0;
  int rc = 0;
  while (fgets(line, sizeof line, f)) {
    lineno++;
    long v[4];
    int got = sscanf(line, "%ld %ld %ld %ld", &v[0], &v[1], &v[2], &v[3]);
    if (got == 1 && lineno == 1) continue; /* qhull's count */
    if (got != 3 || v[0] < 0 || v[1] < 0 || v[2] < 0 || v[0] > INT32_MAX || v[1] > INT32_MAX ||
        v[2] > INT32_MAX) {
      snprintf(err, errlen, "%s:%ld: expected three vertex ids \"a b c\"", path, lineno);
      rc = -1;
      break;
    }
    if (*ntri == cap) {
      cap = cap ? 2 * cap : 1024;
      int32_t *p = realloc(*tri, cap * 3 * sizeof *p);
      if (!p) {
        snprintf(err, errlen, "%s: out of memory", path);
        rc = -1;
        break;
      }
      *tri = p;
    }
    for (int k = 0; k < 3; k++) (*tri)[3 * *ntri + k] = (int32_t)v[k];
    (*ntri)++;
  }
  fclose(f);
  if (rc) {
    free(*tri);
    *tri = NULL;
    *ntri = 0;
  }
  return rc;
}

int dt_write_triangles(const char *path, const int32_t *tri, size_t ntri) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  for (size_t i = 0; i < ntri; i++)
    fprintf(f, "%d %d %d\n", tri[3 * i], tri[3 * i + 1], tri[3 * i + 2]);
  return fclose(f) ? -1 : 0;
}

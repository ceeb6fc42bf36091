/* serial.c: the serial triangulation on malloc (the baseline of the parallel efficiency): one
 * cell, chunks of 1 MiB, points in BRIO order. And the bookkeeping of duplicates shared with
 * the parallel program. Main entry: dt_triangulate(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "dt.h"

#define SERIAL_CHUNK (1u << 20)

typedef struct serial_ctx {
  double seconds, populate_s; /* in malloc; faulting the chunks in (DT_DEBUG's line) */
} serial_ctx;

static int refill_malloc(void *ctx, int cell, dt_pool *p) {
  (void)cell;
  serial_ctx *s = ctx;
  double t0 = bench_now_ns();
  dt_chunk *c = malloc(SERIAL_CHUNK);
  s->seconds += (bench_now_ns() - t0) * 1e-9; /* the allocation; faulting in is computation */
  if (!c) return -1;
  double t1 = bench_now_ns();
  if (!getenv("DT_NO_POPULATE")) dt_populate(c, SERIAL_CHUNK);
  s->populate_s += (bench_now_ns() - t1) * 1e-9;
  c->bytes = SERIAL_CHUNK;
  c->next = p->spare;
  p->spare = c;
  return 0;
}

static void free_chunks(dt_chunk *c) {
  while (c) {
    dt_chunk *n = c->next;
    free(c);
    c = n;
  }
}

void dt_result_free(dt_result *r) {
  free(r->tri);
  free(r->dup);
  memset(r, 0, sizeof *r);
}

static int by_xy_id(const void *pa, const void *pb) {
  const dt_pt *a = pa, *b = pb;
  if (a->x != b->x) return a->x < b->x ? -1 : 1;
  if (a->y != b->y) return a->y < b->y ? -1 : 1;
  return (a->id > b->id) - (a->id < b->id);
}

int dt_collinear_duplicates(const double *xy, size_t n, int32_t **dup, size_t *ndup) {
  dt_pt *o = malloc((n ? n : 1) * sizeof *o);
  *dup = malloc((n ? n : 1) * sizeof **dup);
  *ndup = 0;
  if (!o || !*dup) {
    free(o);
    return -1;
  }
  for (size_t i = 0; i < n; i++) o[i] = (dt_pt){xy[2 * i], xy[2 * i + 1], (int32_t)i, 0};
  qsort(o, n, sizeof *o, by_xy_id);
  for (size_t i = 1; i < n; i++)
    if (o[i].x == o[i - 1].x && o[i].y == o[i - 1].y) (*dup)[(*ndup)++] = o[i].id;
  free(o);
  return 0;
}

int dt_settle_duplicates(int32_t *tri, size_t ntri, const int32_t *pairs, size_t npairs, size_t n,
                         int32_t **dup) {
  int32_t *low = malloc((n ? n : 1) * sizeof *low); /* per kept vertex: the lowest equal id */
  *dup = malloc((npairs ? npairs : 1) * sizeof **dup);
  if (!low || !*dup) {
    free(low);
    return -1;
  }
  for (size_t i = 0; i < npairs; i++) low[pairs[2 * i + 1]] = pairs[2 * i + 1];
  for (size_t i = 0; i < npairs; i++)
    if (pairs[2 * i] < low[pairs[2 * i + 1]]) low[pairs[2 * i + 1]] = pairs[2 * i];
  /* every kept vertex k with a lower equal id becomes that id; k joins the duplicates */
  uint8_t *renamed = calloc(n ? n : 1, 1);
  if (!renamed) {
    free(low);
    return -1;
  }
  for (size_t i = 0; i < npairs; i++) {
    int32_t d = pairs[2 * i], k = pairs[2 * i + 1];
    (*dup)[i] = d == low[k] ? k : d;
    if (d == low[k]) renamed[k] = 1;
  }
  if (npairs)
    for (size_t i = 0; i < 3 * ntri; i++)
      if (renamed[tri[i]]) tri[i] = low[tri[i]];
  free(renamed);
  free(low);
  return 0;
}

int dt_triangulate(const double *xy, size_t n, uint64_t seed, dt_result *r) {
  memset(r, 0, sizeof *r);
  double t0 = bench_now_ns();
  dt_pt *pts = dt_alloc((n ? n : 1) * sizeof *pts);
  int32_t *pairs = NULL;
  size_t npairs = 0, cap = 0;
  if (!pts) return -1;
  for (size_t i = 0; i < n; i++) pts[i] = (dt_pt){xy[2 * i], xy[2 * i + 1], (int32_t)i, 0};
  double box[4];
  dt_box(xy, n, box);
  dt_brio(pts, n, box, seed);
  double t_order = bench_now_ns();

  serial_ctx ctx = {0};
  dt_pool pool = {0}, *pp = &pool;
  dt_mesh m;
  size_t a, b, c;
  int rc = -1;
  if (dt_mesh_init(&m, &pp, 1, NULL, NULL, refill_malloc, &ctx)) goto out;
  if (dt_pick_start(pts, n, &a, &b, &c)) { /* every point on one line: no triangles */
    r->seconds = (bench_now_ns() - t0) * 1e-9;
    rc = dt_collinear_duplicates(xy, n, &r->dup, &r->ndup);
    goto out;
  }
  if (dt_start(&m, &pts[a], &pts[b], &pts[c])) goto out;
  for (size_t i = 0; i < n; i++) {
    if (i == a || i == b || i == c) continue;
    int x = dt_insert(&m, &pts[i]);
    if (x == DT_DUPLICATE) {
      if (npairs == cap) {
        cap = cap ? 2 * cap : 64;
        int32_t *p = realloc(pairs, cap * 2 * sizeof *p);
        if (!p) goto out;
        pairs = p;
      }
      pairs[2 * npairs] = pts[i].id;
      pairs[2 * npairs + 1] = m.dup_of;
      npairs++;
    } else if (x != DT_INSERTED) {
      goto out; /* out of memory (a serial mesh owns everything: nothing is postponed) */
    }
  }
  r->seconds = (bench_now_ns() - t0) * 1e-9;
  r->alloc_seconds = ctx.seconds;
  if (getenv("DT_DEBUG")) /* to set beside the parallel main phase's lines */
    fprintf(stderr,
            "delaunay-serial: %zu points: order %.4f s (the copy, the box, BRIO), insert %.4f s "
            "(the mesh's set-up with it; of it %.4f s faulting chunks in, %.4f s in malloc)\n",
            n, (t_order - t0) * 1e-9, r->seconds - (t_order - t0) * 1e-9, ctx.populate_s,
            ctx.seconds);
  r->st = m.st;
  r->ntri = dt_collect(&m, NULL, NULL);
  r->tri = malloc((r->ntri ? r->ntri : 1) * 3 * sizeof *r->tri);
  if (!r->tri) goto out;
  dt_collect(&m, NULL, r->tri);
  if (dt_settle_duplicates(r->tri, r->ntri, pairs, npairs, n, &r->dup)) goto out;
  r->ndup = npairs;
  rc = 0;
out:
  dt_mesh_release(&m);
  free_chunks(pool.chunks);
  free_chunks(pool.spare);
  free(pts);
  free(pairs);
  if (rc) dt_result_free(r);
  return rc;
}

/* par_points.c: the points of the parallel program: each worker reads its slice of the input
 * and sends every point to the worker that will insert it, at the level chosen for it: the hull
 * and a band along it at level 0 (worker 0), the zone along each level's new block borders at
 * that level (first, in the rotations' windows), a sample for each level, the rest at the last
 * level. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "par.h"
#include "pred.h"

/* ---- points: each worker reads its slice and sends every point to who inserts it ---- */
static uint64_t mix(uint64_t x) { /* splitmix64 */
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* The level a point is inserted at: a sample of o.sample points per sub-quadrant of the next
 * level before each delegation (n_k = sample * 4^(k+2) points in all by the end of level k). */
/* The zone of level k: points closer than --zone mean spacings to a border between level k's
 * blocks that is not a border at a coarser level (the lines i / 2^k, i odd). They are inserted
 * first at level k, in the windows of the three rotations (each part of a border lies inside
 * some window), so that the triangles along the borders are small before phase 0 freezes the
 * ones that straddle a border. Returns k, or 0 for no zone. */
static int zone_of(double v, double lo, double hi) {
  double t = hi > lo ? (v - lo) / (hi - lo) : 0, z = G.o.zone / sqrt((double)G.in.n);
  for (int k = 1; k <= G.p.K; k++) {
    double u = t * (1 << k), r = (double)(long)(u + 0.5);
    if (r >= 1 && r <= (1 << k) - 1 && ((long)r & 1) && (u > r ? u - r : r - u) < z * (1 << k))
      return k;
  }
  return 0;
}

/* A point's level, and 1 << 8 for a point of a zone (pad of dt_pt). */
static int level_of(int32_t id, double x, double y) {
  if (dt_band_has(&G.band, x, y)) return 0;
  int zx = zone_of(x, G.box[0], G.box[1]), zy = zone_of(y, G.box[2], G.box[3]);
  int z = zx && zy ? (zx < zy ? zx : zy) : zx ? zx : zy;
  if (z) return z | ZONE_BIT;
  double u = (double)(mix((uint64_t)id ^ (G.o.seed << 32)) >> 11) * 0x1p-53, N = (double)G.in.n;
  for (int k = 0; k < G.p.K; k++)
    if (u * N < (double)G.o.sample * (double)(1 << (2 * (k + 2)))) return k;
  return G.p.K;
}

/* The convex hull of all points and the band along it, in parallel (Akl-Toussaint): extremes
 * in eight directions (of every 16th point of each slice: any input points will do, their
 * octagon only has to lie inside the hull), the octagon they span, the points of each slice not
 * strictly inside it (few; most are ruled out by a rectangle inside the octagon), and the hull
 * of those, computed alike by every worker. */
static void find_band(size_t lo, size_t hi) {
  dt_pt ext[8], *all = malloc((size_t)G.W * 8 * sizeof *all);
  if (!all) die("out of memory");
  double best[8];
  for (int k = 0; k < 8; k++) ext[k].id = -1, best[k] = INFINITY;
  for (size_t i = lo; i < hi; i += 16) {
    double x = G.in.xy[2 * i], y = G.in.xy[2 * i + 1];
    double v[8] = {x, -x, y, -y, x + y, -x - y, x - y, y - x};
    for (int k = 0; k < 8; k++)
      if (v[k] < best[k]) best[k] = v[k], ext[k] = (dt_pt){x, y, (int32_t)i, 0};
  }
  double t0 = now();
  MPI_Allgather(ext, 8, G.pt_type, all, 8, G.pt_type, sys_comm());
  G.wcomm += now() - t0;
  size_t na = 0;
  for (int i = 0; i < 8 * G.W; i++)
    if (all[i].id >= 0) all[na++] = all[i];
  dt_pt *oct = malloc((na + 2) * sizeof *oct);
  if (!oct) die("out of memory");
  size_t no = dt_hull(all, na, oct);
  dt_band inner; /* its rectangle: inside the octagon by a margin over rounding */
  double margin = 1e-9 * (fabs(G.box[1] - G.box[0]) + fabs(G.box[3] - G.box[2]));
  if (dt_band_init(&inner, oct, no, margin)) die("out of memory");
  /* candidates: not strictly inside the octagon (exact test where the rectangle cannot tell) */
  dt_pt *cand = malloc((hi - lo + 1) * sizeof *cand);
  if (!cand) die("out of memory");
  int nc = 0;
  for (size_t i = lo; i < hi; i++) {
    double p[2] = {G.in.xy[2 * i], G.in.xy[2 * i + 1]};
    if (no >= 3 && p[0] > inner.r[0] && p[0] < inner.r[1] && p[1] > inner.r[2] && p[1] < inner.r[3])
      continue;
    int inside = no >= 3;
    for (size_t k = 0; k < no && inside; k++) {
      double a[2] = {oct[k].x, oct[k].y}, b[2] = {oct[(k + 1) % no].x, oct[(k + 1) % no].y};
      if (pred_orient(a, b, p) <= 0) inside = 0;
    }
    if (!inside) cand[nc++] = (dt_pt){p[0], p[1], (int32_t)i, 0};
  }
  dt_band_free(&inner);
  int *cnt = malloc((size_t)G.W * sizeof *cnt), *off = malloc(((size_t)G.W + 1) * sizeof *off);
  if (!cnt || !off) die("out of memory");
  t0 = now();
  MPI_Allgather(&nc, 1, MPI_INT, cnt, 1, MPI_INT, sys_comm());
  off[0] = 0;
  for (int w = 0; w < G.W; w++) off[w + 1] = off[w] + cnt[w];
  dt_pt *every = malloc(((size_t)off[G.W] + 1) * sizeof *every),
        *hull = malloc(((size_t)off[G.W] + 2) * sizeof *hull);
  if (!every || !hull) die("out of memory");
  MPI_Allgatherv(cand, nc, G.pt_type, every, cnt, off, G.pt_type, sys_comm());
  G.wcomm += now() - t0;
  size_t h = dt_hull(every, (size_t)off[G.W], hull);
  double delta = dt_hull_delta(hull, h, G.in.n, 16.0 * (double)G.o.sample);
  if (dt_band_init(&G.band, hull, h, delta)) die("out of memory");
  free(all), free(oct), free(cand), free(cnt), free(off), free(every), free(hull);
}

void par_distribute(const int32_t start[3]) {
  int W = G.W;
  size_t n = G.in.n, lo = n * (size_t)G.me / (size_t)W, hi = n * (size_t)(G.me + 1) / (size_t)W;
  double mine[4];
  dt_box(G.in.xy + 2 * lo, hi - lo, mine);
  mine[1] = -mine[1], mine[3] = -mine[3];
  double t0 = now();
  MPI_Allreduce(mine, G.box, 4, MPI_DOUBLE, MPI_MIN, sys_comm());
  G.wcomm += now() - t0;
  G.box[1] = -G.box[1], G.box[3] = -G.box[3];
  if (dt_mesh_init(&G.m, G.pools, G.p.G, G.box, par_refill, NULL)) die("out of memory");
  G.m.own = G.own;
  G.m.epoch_base = 2 * (uint32_t)G.me; /* marks of one worker never look current to another */
  G.m.epoch_step = 2 * (uint32_t)W;
  double tdbg = now();
  find_band(lo, hi);
  if (getenv("DT_DEBUG")) fprintf(stderr, "worker %d: hull band %.3f s\n", G.me, now() - tdbg);
  tdbg = now();

  int *cnt = calloc((size_t)W, sizeof *cnt), *rcnt = calloc((size_t)W, sizeof *rcnt);
  int *off = calloc((size_t)W + 1, sizeof *off), *roff = calloc((size_t)W + 1, sizeof *roff);
  int *dest = dt_alloc((hi - lo + 1) * sizeof *dest);
  /* who inserts a point of cell c at level l: owner[(2 l + zone) * ncells + c] (a zone point in
   * phase 1, the others in phase 0) */
  int nc = G.p.ncells, *owner = malloc((size_t)(G.p.K + 1) * 2 * (size_t)nc * sizeof *owner);
  if (!owner) die("out of memory");
  for (int l = 0; l <= G.p.K; l++)
    for (int z = 0; z < 2; z++)
      for (int c = 0; c < nc; c++)
        owner[(2 * l + z) * nc + c] = plan_cell_owner(&G.p, l, z, c % G.p.G, c / G.p.G);
  dt_pt *out = dt_alloc((hi - lo + 1) * sizeof *out);
  if (!cnt || !rcnt || !off || !roff || !dest || !out) die("out of memory");
  for (size_t i = lo; i < hi; i++) {
    int32_t id = (int32_t)i;
    if (id == start[0] || id == start[1] || id == start[2]) {
      dest[i - lo] = -1;
      continue;
    }
    double x = G.in.xy[2 * i], y = G.in.xy[2 * i + 1];
    int c = dt_cell_of(&G.m, x, y), lev = level_of(id, x, y);
    int d = owner[(2 * (lev & ~ZONE_BIT) + !!(lev & ZONE_BIT)) * nc + c];
    dest[i - lo] = d | lev << 16;
    cnt[d]++;
  }
  for (int w = 0; w < W; w++) off[w + 1] = off[w] + cnt[w];
  int *fill = calloc((size_t)W, sizeof *fill);
  for (size_t i = lo; i < hi; i++) {
    int d = dest[i - lo];
    if (d < 0) continue;
    out[off[d & 0xffff] + fill[d & 0xffff]++] =
        (dt_pt){G.in.xy[2 * i], G.in.xy[2 * i + 1], (int32_t)i, d >> 16};
  }
  free(owner);
  if (getenv("DT_DEBUG")) fprintf(stderr, "worker %d: levels %.3f s\n", G.me, now() - tdbg);
  t0 = now();
  MPI_Alltoall(cnt, 1, MPI_INT, rcnt, 1, MPI_INT, sys_comm());
  for (int w = 0; w < W; w++) roff[w + 1] = roff[w] + rcnt[w];
  G.npts = (size_t)roff[W];
  G.pts = dt_alloc((G.npts + 1) * sizeof *G.pts);
  if (!G.pts) die("out of memory for points");
  MPI_Alltoallv(out, cnt, off, G.pt_type, G.pts, rcnt, roff, G.pt_type, sys_comm());
  G.wcomm += now() - t0;
  free(cnt), free(rcnt), free(off), free(roff), free(dest), free(out), free(fill);
}

/* The first three points not on one line, in input order (every worker finds the same). */
int par_pick_start(int32_t s[3]) {
  dt_pt *q = malloc((G.in.n + 1) * sizeof *q);
  if (!q) die("out of memory");
  size_t n = 0;
  for (size_t i = 0; i < G.in.n; i++)
    q[n++] = (dt_pt){G.in.xy[2 * i], G.in.xy[2 * i + 1], (int32_t)i, 0};
  size_t a, b, c;
  int rc = dt_pick_start(q, n, &a, &b, &c);
  if (!rc) s[0] = q[a].id, s[1] = q[b].id, s[2] = q[c].id;
  free(q);
  return rc;
}

/* delaunay.c: parallel Bowyer-Watson on antheap regions (Myrmics section 6.4, Figure 4d): the
 * phases of each level and main(). The regions are in par_regions.c, the points in par_points.c.
 *
 * Regions: a quadtree of degree four over the points' box (plan.h): the top region is the whole
 * space, the 4W leaves are the cells. A cell's region holds its header (the cell's pool of
 * triangles and its postponed points) and the chunks its triangles are carved from: a triangle
 * lives in the cell of its circumcentre. Worker 0 creates the inner regions, each worker the four
 * cells of its last-level block.
 *
 * Levels k = 0..K (W = 4^K): worker 0 alone starts; at level k, 4^k workers each own a block of
 * four sub-quadrants. Per level: the zone in rotations 1, 2, 3; phase 0; rotations 1, 2, 3 for
 * what waits; the delegation. Phase 0 inserts the level's points (in stages, see run_phase); a
 * point that needs a triangle (to read, write or create) outside the worker's cells changes
 * nothing and is postponed into its cell's header, so it travels with the region. The three
 * rotations (phases 1..3, Figure 5) move sub-quadrant regions with sys_send so that every 2 x 2
 * window of sub-quadrants is one worker's once; each retries the points of its cells. Then the
 * regions go straight to the owners of the next level (the fourth rotation and the delegation in
 * one move).
 *
 * The border problem. The paper assumes every point can be inserted within two adjacent
 * sub-quadrants. Triangles that straddle a border are frozen for both sides in phase 0, so the
 * points near borders wait for the rotations; three things keep that band thin and the
 * assumption mostly true (par_points.c): the convex hull and a band along it are inserted at
 * level 0 (no point is ever outside the mesh's hull later, and the long thin triangles along long
 * hull edges are final before the space is split); at each level, a zone of points along the
 * level's new block borders is inserted first, in the windows of the three rotations (each part
 * of a border lies inside some window), so that the triangles straddling a border are small when
 * phase 0 freezes them; and phase 0 retries its waiting points between stages. Where the
 * assumption still fails (long triangles of clustered input, a tiny --sample), the point is
 * never dropped or forced: what is still postponed after a level's rotations is retried at the
 * next level, and after the last level every cell region is sent to worker 0, which inserts the
 * rest with everything owned (the "gathered" column).
 *
 * Time: computation, worker communication (MPI collectives, sys_send/sys_recv), scheduler
 * communication (sys_ralloc/alloc/free) and wait (barriers between stages and phases, where
 * imbalance shows). Then, untimed, every region goes to worker 0, which checks the mesh.
 * DT_DEBUG=1 in the environment prints per-phase counts and times on stderr.
 * Main entry: main(). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "par.h"

par G;

void die(const char *what) {
  fprintf(stderr, "delaunay: worker %d: error: %s: %s\n", G.me, what, sys_strerror(errno));
  MPI_Abort(sys_comm(), 1);
}

static void wait_all(void) {
  double t0 = now();
  MPI_Barrier(sys_comm());
  G.wait += now() - t0;
}

/* ---- phases ---- */
static void set_owner(int k, int ph) {
  for (int c = 0; c < G.p.ncells; c++)
    G.own[c] = plan_cell_owner(&G.p, k, ph, c % G.p.G, c / G.p.G) == G.me;
}

/* Insert list[0..n) in order; the points that must wait are kept at the front of list
 * (returns how many). */
static size_t insert_pass(dt_pt *list, size_t n) {
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    int rc = dt_insert(&G.m, &list[i]);
    if (rc == DT_POSTPONED) {
      list[kept++] = list[i];
    } else if (rc == DT_DUPLICATE) {
      if (G.npairs == G.cap_pairs) {
        G.cap_pairs = G.cap_pairs ? 2 * G.cap_pairs : 64;
        G.pairs = realloc(G.pairs, G.cap_pairs * 2 * sizeof *G.pairs);
        if (!G.pairs) die("out of memory");
      }
      G.pairs[2 * G.npairs] = list[i].id;
      G.pairs[2 * G.npairs + 1] = G.m.dup_of;
      G.npairs++;
    } else if (rc != DT_INSERTED) {
      errno = ENOMEM;
      die("inserting a point (out of memory, or the epoch counter ran out)");
    }
  }
  return kept;
}

/* One phase of level k, cells owned as in phase ph: my points of list `which` (a level, with
 * ZONE_BIT for a border zone; -1 for none) and the points postponed in my cells. The main list
 * of phase 0 goes in stages that follow the rounds of the BRIO order (the first 1/256 of the
 * points, then up to 1/64, 1/16, 1/4, all), with a barrier between stages: neighbours then grow
 * their parts of the mesh at the same pace, and a point that met large triangles reaching across
 * the border in one stage is retried in the next, when the triangles near the border have
 * shrunk. What still does not fit after the last stage waits for a rotation. */
#define STAGES 5

static void run_phase(int k, int ph, int which, const dt_pt *start) {
  set_owner(k, ph);
  int active = G.me < 1 << (2 * k), stages = ph == 0 && which >= 0 ? STAGES : 1;
  dt_pt *list = NULL;
  size_t n = 0;
  if (active && which >= 0) {
    for (size_t i = 0; i < G.npts; i++)
      if (G.pts[i].pad == which) n++;
    list = malloc((n + 1) * sizeof *list);
    if (!list) die("out of memory");
    n = 0;
    for (size_t i = 0; i < G.npts; i++)
      if (G.pts[i].pad == which) list[n++] = G.pts[i];
  }
  if (active) list = par_take_pending(list, &n);
  double tb = now();
  dt_brio(list, n, G.box, G.o.seed + (uint64_t)(k * 4 + ph));
  tb = now() - tb;
  double ti = now();
  if (start && dt_start(&G.m, &start[0], &start[1], &start[2])) die("the first triangle");
  dt_pt *waiting = malloc((n + 1) * sizeof *waiting);
  if (!waiting) die("out of memory");
  size_t nwait = 0, begin = 0;
  int can = active && n && !dt_restart(&G.m); /* else nothing of mine has a triangle yet */
  int64_t before = G.m.st.postponed;
  for (int s = stages - 1; s >= 0; s--) {
    size_t end = n >> (2 * s);
    if (can) {
      nwait = insert_pass(waiting, nwait);
      size_t kept = end > begin ? insert_pass(list + begin, end - begin) : 0;
      if (kept) memcpy(waiting + nwait, list + begin, kept * sizeof *list);
      nwait += kept;
    } else if (end > begin) {
      memcpy(waiting + nwait, list + begin, (end - begin) * sizeof *list);
      nwait += end - begin;
    }
    begin = end;
    if (stages > 1) wait_all();
  }
  if (can && stages > 1) nwait = insert_pass(waiting, nwait);
  if (getenv("DT_DEBUG") && active)
    fprintf(stderr,
            "worker %d level %d phase %d: %zu points, %lld attempts failed, %zu wait; brio %.3f s, "
            "insert %.3f s\n",
            G.me, k, ph, n, (long long)(G.m.st.postponed - before), nwait, tb, now() - ti);
  for (size_t i = 0; i < nwait; i++) par_postpone(&waiting[i]);
  free(waiting);
  free(list);
  par_store_pending();
}

/* Levels 0..K: per level the zone (rotations 1, 2, 3), phase 0, rotations 1, 2, 3 for what
 * waits, then the fourth rotation and the delegation in one move into the next level. */
static void levels(const int32_t start[3]) {
  const dt_plan *p = &G.p;
  dt_pt s3[3];
  for (int i = 0; i < 3; i++)
    s3[i] = (dt_pt){G.in.xy[2 * (size_t)start[i]], G.in.xy[2 * (size_t)start[i] + 1], start[i], 0};
  for (int k = 0; k <= p->K; k++) {
    if (k > 0) { /* the zone along this level's new borders, in the rotations' windows */
      run_phase(k, 1, k | ZONE_BIT, NULL);
      for (int ph = 2; ph <= 4; ph++) {
        wait_all();
        par_move(k + 1, k, ph - 1, k, ph & 3);
        if (ph < 4) run_phase(k, ph, -1, NULL);
      }
    }
    run_phase(k, 0, k, k == 0 && G.me == 0 ? s3 : NULL);
    for (int ph = 1; k > 0 && ph <= 3; ph++) {
      wait_all();
      par_move(k + 1, k, ph - 1, k, ph);
      run_phase(k, ph, -1, NULL);
    }
    wait_all();
    if (k < p->K) par_move(k + 2, k, k ? 3 : 0, k + 1, 1);
  }
}

/* The border problem's last resort: what still waits after the last level's rotations is
 * inserted by worker 0 once every cell region has been sent to it. */
static void last_resort(void) {
  int64_t left = par_my_pending(), all_left = 0;
  double t0 = now();
  MPI_Allreduce(&left, &all_left, 1, MPI_INT64_T, MPI_SUM, sys_comm());
  G.wcomm += now() - t0;
  G.gathered = all_left;
  if (!all_left || G.p.K == 0) return;
  par_gather_to_0();
  if (G.me != 0) return;
  G.m.own = NULL;
  memset(G.own, 1, (size_t)G.p.ncells);
  dt_pt *list = NULL;
  size_t n = 0;
  list = par_take_pending(list, &n);
  if (n && (dt_restart(&G.m) || insert_pass(list, n)))
    die("a point could not be inserted with every cell owned");
  free(list);
}

/* Not timed: every region to worker 0, which collects the triangles, settles duplicates,
 * checks the mesh and reports. Returns nonzero (on worker 0) when something failed. */
static int check_at_0(int world, double total, int collinear) {
  const dt_plan *p = &G.p;
  int64_t post = G.m.st.postponed, post_all = 0;
  if (getenv("DT_DEBUG"))
    fprintf(stderr,
            "worker %d: sched %.3f s in %lld chunk allocations; inserted %lld postponed %lld (walk "
            "%lld "
            "cavity %lld new %lld)\n",
            G.me, G.scomm, (long long)G.nchunks, (long long)G.m.st.inserted,
            (long long)G.m.st.postponed, (long long)G.m.st.blocked_walk,
            (long long)G.m.st.blocked_cavity, (long long)G.m.st.blocked_new);
  MPI_Reduce(&post, &post_all, 1, MPI_INT64_T, MPI_SUM, 0, sys_comm());
  if (!collinear && !(G.gathered && p->K > 0) && p->K > 0) par_gather_to_0();
  int npairs = (int)(2 * G.npairs), *counts = NULL, *displs = NULL, tot = 0;
  if (G.me == 0)
    counts = calloc((size_t)G.W, sizeof *counts), displs = calloc((size_t)G.W, sizeof *displs);
  MPI_Gather(&npairs, 1, MPI_INT, counts, 1, MPI_INT, 0, sys_comm());
  int32_t *allpairs = NULL;
  if (G.me == 0) {
    for (int w = 0; w < G.W; w++) displs[w] = tot, tot += counts[w];
    allpairs = malloc(((size_t)tot + 1) * sizeof *allpairs);
  }
  MPI_Gatherv(G.pairs, npairs, MPI_INT32_T, allpairs, counts, displs, MPI_INT32_T, 0, sys_comm());
  dt_times mine = {total - G.wcomm - G.scomm - G.wait, G.wcomm, G.scomm, G.wait, total}, sum, max;
  MPI_Reduce(&mine, &sum, 5, MPI_DOUBLE, MPI_SUM, 0, sys_comm());
  MPI_Reduce(&mine, &max, 5, MPI_DOUBLE, MPI_MAX, 0, sys_comm());
  int failed = 0;
  if (G.me == 0) {
    int32_t *tri = NULL, *dup = NULL;
    size_t ntri = 0, ndup = 0;
    if (collinear) {
      if (dt_collinear_duplicates(G.in.xy, G.in.n, &dup, &ndup)) die("out of memory");
    } else {
      ntri = dt_collect(&G.m, NULL, NULL);
      tri = malloc((ntri + 1) * 3 * sizeof *tri);
      if (!tri) die("out of memory for the triangles");
      dt_collect(&G.m, NULL, tri);
      ndup = (size_t)tot / 2;
      if (dt_settle_duplicates(tri, ntri, allpairs, ndup, G.in.n, &dup)) die("out of memory");
    }
    printf(
        "delaunay: %zu points, %d workers, %d schedulers, %d cells; %zu triangles in %.3f s; "
        "%lld postponements, %lld points left for worker 0 after the rotations\n",
        G.in.n, G.W, world - G.W, p->ncells, ntri, max.total, (long long)post_all,
        (long long)G.gathered);
    failed = dt_finish(&G.o, "delaunay", &G.in, tri, ntri, dup, ndup);
    dt_times avg = {sum.compute / G.W, sum.wcomm / G.W, sum.scomm / G.W, sum.wait / G.W,
                    sum.total / G.W};
    dt_report(&G.o, "antheap", G.W, world - G.W, &avg, &max, ntri, post_all, G.gathered);
    printf("delaunay: %d passed, %d failed\n", !failed, failed);
    free(tri), free(dup);
  }
  free(allpairs), free(counts), free(displs);
  return failed;
}

int main(int argc, char **argv) {
  if (bench_wants_help(argc, argv)) { /* before sys_init: --help needs no job */
    char *help[] = {argv[0], "--help", NULL};
    return dt_opts_parse(2, help, DT_PARALLEL, &G.o) > 0 ? 0 : 2;
  }
  if (sys_init(&argc, &argv)) {
    fprintf(stderr, "delaunay: error: sys_init failed: %s\n", sys_strerror(errno));
    return 1;
  }
  G.me = sys_worker_id();
  G.W = sys_workers();
  int world;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int rc = dt_opts_parse(argc, argv, DT_PARALLEL, &G.o);
  if (rc == 0 && plan_init(&G.p, G.W)) {
    if (G.me == 0)
      fprintf(stderr,
              "delaunay: error: the quadrant decomposition needs a power-of-four number "
              "of workers (1, 4, 16, 64, ...); this job has %d (mpirun -np N with N minus "
              "the schedulers)\n",
              G.W);
    rc = -1;
  }
  if (rc == 0 && dt_load(&G.o, &G.in, "delaunay")) rc = -1;
  if (rc) {
    sys_finalize();
    return rc > 0 ? 0 : 2;
  }
  G.o.points = (long)G.in.n;
  MPI_Type_contiguous(sizeof(dt_pt), MPI_BYTE, &G.pt_type);
  MPI_Type_commit(&G.pt_type);
  int32_t start[3];
  int collinear = par_pick_start(start) != 0;
  const dt_plan *p = &G.p;

  MPI_Barrier(sys_comm());
  double t0 = now();
  par_make_regions();
  if (!collinear) {
    par_distribute(start);
    levels(start);
    last_resort();
  }
  double total = now() - t0;

  int failed = check_at_0(world, total, collinear);
  MPI_Bcast(&failed, 1, MPI_INT, 0, sys_comm());
  par_free_regions();
  for (int c = 0; c < p->ncells; c++) free(G.pend[c]);
  free(G.pend), free(G.npend), free(G.cap_pend), free(G.pts), free(G.pairs);
  free(G.rid), free(G.holder), free(G.hdr), free(G.pools), free(G.own);
  dt_mesh_release(&G.m);
  dt_band_free(&G.band);
  dt_input_free(&G.in);
  MPI_Type_free(&G.pt_type);
  sys_finalize();
  return failed;
}

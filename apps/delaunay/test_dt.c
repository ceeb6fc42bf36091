/* test_dt.c: the serial triangulation and its checker: random, clustered and degenerate inputs
 * (grids, cocircular points, collinear hulls, duplicates, all points on a line), a validator
 * that rejects broken meshes, the Hilbert order (adaptive: coordinates over a huge range), the
 * hull band's quick test, the point reader's errors, and where a postponed point leaves the
 * next walk. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"
#include "check_main.h"
#include "dt.h"
#include "pred.h"

static char ERR[512];

/* Triangulate and validate; returns the result (caller frees). */
static dt_result run(const double *xy, size_t n, uint64_t seed) {
  dt_result r;
  ck_assert_int_eq(dt_triangulate(xy, n, seed, &r), 0);
  dt_check c;
  if (dt_validate(xy, n, r.tri, r.ntri, r.dup, r.ndup, &c, ERR, sizeof ERR))
    ck_abort_msg("invalid: %s", ERR);
  return r;
}

START_TEST(test_uniform_points_give_a_valid_delaunay_mesh) {
  dt_input in;
  ck_assert_int_eq(dt_gen_uniform(&in, 5000, 3), 0);
  dt_result r = run(in.xy, in.n, 1);
  ck_assert_uint_gt(r.ntri, 9900);
  dt_result_free(&r);
  dt_input_free(&in);
}
END_TEST

START_TEST(test_clustered_points_give_a_valid_delaunay_mesh) {
  dt_input in;
  ck_assert_int_eq(dt_gen_clustered(&in, 5000, 3, 8, 0.01), 0);
  dt_result r = run(in.xy, in.n, 1);
  dt_result_free(&r);
  dt_input_free(&in);
}
END_TEST

/* On a grid every square is cocircular: the perturbation must still give one answer, whatever
 * the insertion order. */
START_TEST(test_grid_is_valid_and_independent_of_the_order) {
  dt_input in;
  ck_assert_int_eq(dt_gen_grid(&in, 1600), 0);
  dt_result a = run(in.xy, in.n, 1), b = run(in.xy, in.n, 2);
  ck_assert_uint_eq(a.ntri, 2 * 39 * 39);
  ck_assert_uint_eq(dt_compare_sets(a.tri, a.ntri, b.tri, b.ntri, ERR, sizeof ERR), 0);
  dt_result_free(&a);
  dt_result_free(&b);
  dt_input_free(&in);
}
END_TEST

/* All integer points on the circle x^2 + y^2 = 65^2 (many cocircular), and its centre. */
START_TEST(test_cocircular_points_give_a_valid_mesh) {
  double xy[2 * 200];
  size_t n = 0;
  for (int x = -65; x <= 65; x++)
    for (int y = -65; y <= 65; y++)
      if (x * x + y * y == 65 * 65) xy[2 * n] = x, xy[2 * n + 1] = y, n++;
  ck_assert_uint_ge(n, 16);
  xy[2 * n] = 0, xy[2 * n + 1] = 0, n++;
  dt_result r = run(xy, n, 5);
  ck_assert_uint_eq(r.ntri, n - 1); /* a fan around the centre */
  dt_result_free(&r);
  dt_result a = run(xy, n - 1, 5), b = run(xy, n - 1, 6); /* only the circle */
  ck_assert_uint_eq(a.ntri, n - 3);
  ck_assert_uint_eq(dt_compare_sets(a.tri, a.ntri, b.tri, b.ntri, ERR, sizeof ERR), 0);
  dt_result_free(&a);
  dt_result_free(&b);
}
END_TEST

/* Points on the sides of a square (collinear on the hull) and inside it. */
START_TEST(test_collinear_hull_points_are_vertices) {
  double xy[2 * 600];
  size_t n = 0;
  for (int i = 0; i < 100; i++) {
    double t = i / 100.0 * 64; /* exact multiples of 0.64 are not needed: stay on the lines */
    double s[4][2] = {{t, 0}, {64, t}, {64 - t, 64}, {0, 64 - t}};
    for (int k = 0; k < 4; k++) xy[2 * n] = s[k][0], xy[2 * n + 1] = s[k][1], n++;
  }
  bench_rng r = {11};
  for (int i = 0; i < 200; i++, n++)
    xy[2 * n] = 1 + (double)(bench_rand(&r) % 62000) / 1000,
           xy[2 * n + 1] = 1 + (double)(bench_rand(&r) % 62000) / 1000;
  dt_result res = run(xy, n, 1);
  dt_check c;
  ck_assert_int_eq(dt_validate(xy, n, res.tri, res.ntri, res.dup, res.ndup, &c, ERR, sizeof ERR),
                   0);
  ck_assert_uint_eq(c.hull, 400);
  dt_result_free(&res);
}
END_TEST

START_TEST(test_duplicates_are_reported_and_the_lowest_id_kept) {
  double xy[] = {0, 0, 1, 0, 0, 1, 1, 1, 0.5, 0.5, 1, 0, 0.5, 0.5, 0, 0, 0.25, 0.75, 0.5, 0.5};
  size_t n = sizeof xy / sizeof *xy / 2;
  for (uint64_t seed = 1; seed < 20; seed++) {
    dt_result r = run(xy, n, seed);
    ck_assert_uint_eq(r.ndup, 4);
    int seen[10] = {0};
    for (size_t i = 0; i < r.ndup; i++) seen[r.dup[i]] = 1;
    ck_assert(seen[5] && seen[6] && seen[7] && seen[9]); /* later copies of 1, 4, 0, 4 */
    dt_result_free(&r);
  }
}
END_TEST

START_TEST(test_points_on_one_line_give_no_triangles) {
  double xy[2 * 50];
  for (int i = 0; i < 50; i++)
    xy[2 * i] = i % 40, xy[2 * i + 1] = 3 * (i % 40) + 1; /* 10 repeats */
  dt_result r;
  ck_assert_int_eq(dt_triangulate(xy, 50, 1, &r), 0);
  ck_assert_uint_eq(r.ntri, 0);
  ck_assert_uint_eq(r.ndup, 10);
  dt_check c;
  ck_assert_int_eq(dt_validate(xy, 50, r.tri, r.ntri, r.dup, r.ndup, &c, ERR, sizeof ERR), 0);
  ck_assert(c.collinear);
  dt_result_free(&r);
}
END_TEST

START_TEST(test_three_points_give_one_triangle) {
  double xy[] = {0, 0, 0, 1, 1, 0}; /* clockwise as given */
  dt_result r = run(xy, 3, 1);
  ck_assert_uint_eq(r.ntri, 1);
  dt_result_free(&r);
}
END_TEST

/* ---- the validator must catch broken meshes ---- */
static void expect_invalid(const double *xy, size_t n, int32_t *tri, size_t ntri,
                           const char *what) {
  dt_check c;
  if (!dt_validate(xy, n, tri, ntri, NULL, 0, &c, ERR, sizeof ERR))
    ck_abort_msg("validator accepted %s", what);
}

START_TEST(test_validator_rejects_broken_meshes) {
  dt_input in;
  ck_assert_int_eq(dt_gen_uniform(&in, 300, 9), 0);
  dt_result r = run(in.xy, in.n, 1);
  size_t bytes = 3 * (r.ntri + 1) * sizeof(int32_t);
  int32_t *t = malloc(bytes);

  memcpy(t, r.tri, bytes - 3 * sizeof(int32_t)); /* clockwise triangle */
  int32_t s = t[0];
  t[0] = t[1], t[1] = s;
  expect_invalid(in.xy, in.n, t, r.ntri, "a clockwise triangle");
  ck_assert(strstr(ERR, "counter-clockwise"));

  memcpy(t, r.tri, bytes - 3 * sizeof(int32_t)); /* a missing triangle */
  expect_invalid(in.xy, in.n, t + 3, r.ntri - 1, "a missing triangle");

  memcpy(t, r.tri, bytes - 3 * sizeof(int32_t)); /* a doubled triangle */
  memcpy(t + 3 * r.ntri, t, 3 * sizeof(int32_t));
  expect_invalid(in.xy, in.n, t, r.ntri + 1, "a doubled triangle");
  ck_assert(strstr(ERR, "two triangles"));

  /* an interior edge flipped: (a b c) + (b a d) -> (a d c) + (d b c) is a valid triangulation
   * that is not Delaunay, found by the empty-circle test alone */
  memcpy(t, r.tri, bytes - 3 * sizeof(int32_t));
  int flipped = 0;
  for (size_t i = 0; i < r.ntri && !flipped; i++)
    for (size_t j = 0; j < r.ntri && !flipped; j++)
      for (int k = 0; k < 3 && !flipped; k++)
        for (int l = 0; l < 3 && !flipped; l++) {
          int32_t a = t[3 * i + k], b = t[3 * i + (k + 1) % 3], c = t[3 * i + (k + 2) % 3];
          int32_t d = t[3 * j + (l + 2) % 3];
          if (t[3 * j + l] != b || t[3 * j + (l + 1) % 3] != a) continue;
          const double *A = in.xy + 2 * a, *B = in.xy + 2 * b, *C = in.xy + 2 * c,
                       *D = in.xy + 2 * d;
          /* the flip is a triangulation only when the quadrilateral a d b c is convex */
          double o1 = (D[0] - A[0]) * (C[1] - A[1]) - (D[1] - A[1]) * (C[0] - A[0]);
          double o2 = (B[0] - D[0]) * (C[1] - D[1]) - (B[1] - D[1]) * (C[0] - D[0]);
          if (o1 <= 1e-9 || o2 <= 1e-9) continue;
          int32_t x[6] = {a, d, c, d, b, c};
          memcpy(t + 3 * i, x, sizeof(int32_t) * 3);
          memcpy(t + 3 * j, x + 3, sizeof(int32_t) * 3);
          flipped = 1;
        }
  ck_assert(flipped);
  expect_invalid(in.xy, in.n, t, r.ntri, "a flipped edge");
  ck_assert_msg(strstr(ERR, "not Delaunay"), "%s", ERR);
  free(t);
  dt_result_free(&r);
  dt_input_free(&in);
}
END_TEST

/* ---- order ---- */
START_TEST(test_hilbert_order_steps_between_neighbouring_cells) {
  const double box[4] = {0, 65536, 0, 65536};
  dt_pt *p = malloc(65536 * sizeof *p);
  for (int i = 0; i < 65536; i++)
    p[i] = (dt_pt){(i % 256) * 256 + 128.0, (i / 256) * 256 + 128.0, i, 0};
  dt_hilbert_sort(p, 65536, box);
  for (int i = 1; i < 65536; i++) {
    double d = fabs(p[i].x - p[i - 1].x) + fabs(p[i].y - p[i - 1].y);
    if (d != 256)
      ck_abort_msg("step %d: from (%g, %g) to (%g, %g)", i, p[i - 1].x, p[i - 1].y, p[i].x, p[i].y);
  }
  free(p);
}
END_TEST

/* Adaptive: 4096 points in one cell of the 2^16 grid (and two far corners that make the box)
 * come out along the curve inside that cell too, each a step from the last. */
START_TEST(test_hilbert_sort_goes_inside_crowded_cells) {
  const double box[4] = {0, 65536, 0, 65536};
  dt_pt *p = malloc(4098 * sizeof *p);
  for (int i = 0; i < 4096; i++) p[i] = (dt_pt){(i % 64 + 0.5) / 64, (i / 64 + 0.5) / 64, i, 0};
  p[4096] = (dt_pt){65535.5, 0.5, 4096, 0};
  p[4097] = (dt_pt){65535.5, 65535.5, 4097, 0};
  dt_hilbert_sort(p, 4098, box);
  int steps = 0;
  for (int i = 1; i < 4098; i++)
    if (p[i].id < 4096 && p[i - 1].id < 4096) {
      double d = fabs(p[i].x - p[i - 1].x) + fabs(p[i].y - p[i - 1].y);
      if (fabs(d - 1.0 / 64) > 1e-12)
        ck_abort_msg("step %d: from (%g, %g) to (%g, %g)", i, p[i - 1].x, p[i - 1].y, p[i].x, p[i].y);
      steps++;
    }
  ck_assert_int_eq(steps, 4095);
  free(p);
}
END_TEST

/* Coordinates over 24 orders of magnitude: the walk stays as short as on uniform points (it
 * took 819 steps a point when the crowded cells kept their random order). */
/* Walk steps a point of the serial triangulation of 50,000 points from gen (seed 5). */
static double walk_steps_of(int (*gen)(dt_input *, size_t, uint64_t)) {
  dt_input in;
  ck_assert_int_eq(gen(&in, 50000, 5), 0);
  dt_result r = run(in.xy, in.n, 1);
  double steps = (double)r.st.walk_steps / (double)r.st.inserted;
  dt_result_free(&r);
  dt_input_free(&in);
  return steps;
}

START_TEST(test_wide_range_keeps_the_walk_short) {
  double steps = walk_steps_of(dt_gen_wide);
  ck_assert_msg(steps < 8, "%.1f walk steps a point", steps);
}
END_TEST

/* Points near a line (x in [0, 1), y of deviation 1e-6): the curve runs over the square around
 * their box, so neighbours on it are neighbours along the line (over the box itself, stretched
 * to a square, they were a thousand points apart: 144 steps a point on 1,000,000). The square is
 * the box widened about its middle. */
START_TEST(test_points_near_a_line_keep_the_walk_short) {
  double steps = walk_steps_of(dt_gen_line);
  ck_assert_msg(steps < 8, "%.1f walk steps a point", steps);
  double sq[4], flat[4] = {0, 1, 2, 2.5}, tall[4] = {-1, -1, 0, 4};
  dt_square_box(flat, sq);
  REQUIRE(sq[0] == 0 && sq[1] == 1 && sq[2] == 1.75 && sq[3] == 2.75);
  dt_square_box(tall, sq);
  REQUIRE(sq[0] == -3 && sq[1] == 1 && sq[2] == 0 && sq[3] == 4);
  double level[4] = {2, 6, 1, 1}, point[4] = {3, 3, 5, 5};
  dt_square_box(level, sq);
  REQUIRE(sq[0] == 2 && sq[1] == 6 && sq[2] == -1 && sq[3] == 3);
  dt_square_box(point, sq); /* (all points equal: the box itself) */
  REQUIRE(sq[0] == 3 && sq[1] == 3 && sq[2] == 5 && sq[3] == 5);
}
END_TEST

/* ---- a postponed point: where the next walk starts ---- */
static int left_or_right(const void *ctx, double x, double y) {
  (void)ctx, (void)y;
  return x < 0.5 ? 0 : 1;
}

static int refill_test(void *ctx, int cell, dt_pool *p) {
  (void)ctx, (void)cell;
  dt_chunk *c = malloc(64u << 10);
  if (!c) return -1;
  c->bytes = 64u << 10;
  c->next = p->spare;
  p->spare = c;
  return 0;
}

static void free_pool(dt_pool *p) {
  for (dt_chunk *c = p->chunks, *n; c; c = n) n = c->next, free(c);
  for (dt_chunk *c = p->spare, *n; c; c = n) n = c->next, free(c);
}

/* p in the closed triangle t (finite) */
static int holds(const dt_tri *t, const double *p) {
  for (int k = 0; k < 3; k++)
    if (pred_orient(t->p[(k + 1) % 3], t->p[(k + 2) % 3], p) < 0) return 0;
  return 1;
}

/* A point whose walk finds its triangle but whose cavity needs the cell not held is postponed,
 * changes nothing, and leaves the next walk at that triangle (not at the last one made, far
 * away): points along a window's edge fail one after another. */
START_TEST(test_postponed_point_leaves_the_walk_at_its_triangle) {
  dt_pool pools[2], *pp[2] = {&pools[0], &pools[1]};
  memset(pools, 0, sizeof pools);
  dt_mesh m;
  ck_assert_int_eq(dt_mesh_init(&m, pp, 2, left_or_right, NULL, refill_test, NULL), 0);
  bench_rng r = {7};
  dt_pt pts[400];
  for (int i = 0; i < 400; i++)
    pts[i] = (dt_pt){(double)(bench_rand(&r) >> 11) * 0x1p-53,
                     (double)(bench_rand(&r) >> 11) * 0x1p-53, i, 0};
  ck_assert_int_eq(dt_start(&m, &pts[0], &pts[1], &pts[2]), 0);
  for (int i = 3; i < 400; i++) ck_assert_int_eq(dt_insert(&m, &pts[i]), DT_INSERTED);
  const uint8_t own[2] = {1, 0}; /* from now on only the left cell is held */
  m.own = own;
  dt_pt far = {0.05, 0.5, 400, 0};
  ck_assert_int_eq(dt_insert(&m, &far), DT_INSERTED);
  int found = 0;
  for (int k = 0; k < 80 && !found; k++) {
    dt_pt q = {0.4985, 0.1 + 0.01 * k, 401 + k, 0};
    int64_t walks = m.st.blocked_walk, ins = m.st.inserted, cav = m.st.blocked_cavity;
    int rc = dt_insert(&m, &q);
    ck_assert_int_ne(rc, DT_NOMEM);
    if (rc != DT_POSTPONED || m.st.blocked_cavity == cav) continue;
    ck_assert_int_eq(m.st.blocked_walk, walks);
    ck_assert_int_eq(m.st.inserted, ins); /* nothing changed */
    const double p[2] = {q.x, q.y};
    ck_assert(m.last->mark != DT_DEAD && m.last->v[0] != DT_INF && m.last->v[1] != DT_INF &&
              m.last->v[2] != DT_INF);
    ck_assert_int_eq(m.last_cell, 0);
    ck_assert_int_eq(m.last->cell, 0);
    ck_assert_msg(holds(m.last, p), "the next walk starts at a triangle without the point");
    found = 1;
  }
  ck_assert_msg(found, "no point near the cells' border was postponed by its cavity");
  dt_mesh_release(&m);
  free_pool(&pools[0]);
  free_pool(&pools[1]);
}
END_TEST

/* The same when only a new triangle needs the cell not held. In the triangle A B C (its centre
 * in the held cell, x < 0.5), d and then e go in near C, so the last triangle made is near C
 * and does not hold q; q, close to the edge A B, would make the triangle A B q, whose centre
 * lies far to the right. */
START_TEST(test_postponed_by_a_new_cell_leaves_the_walk_at_its_triangle) {
  dt_pool pools[2], *pp[2] = {&pools[0], &pools[1]};
  memset(pools, 0, sizeof pools);
  dt_mesh m;
  ck_assert_int_eq(dt_mesh_init(&m, pp, 2, left_or_right, NULL, refill_test, NULL), 0);
  const uint8_t own[2] = {1, 0};
  m.own = own;
  dt_pt a = {0.4, 0.0, 0, 0}, b = {0.4, 1.0, 1, 0}, c = {-0.2, 0.5, 2, 0};
  dt_pt d = {-0.1, 0.5, 3, 0}, e = {-0.15, 0.52, 4, 0}, q = {0.39, 0.5, 5, 0};
  const double p[2] = {q.x, q.y};
  ck_assert_int_eq(dt_start(&m, &a, &b, &c), 0);
  ck_assert_int_eq(dt_insert(&m, &d), DT_INSERTED);
  ck_assert_int_eq(dt_insert(&m, &e), DT_INSERTED);
  ck_assert(!holds(m.last, p)); /* (else the test below could not fail) */
  int64_t cav = m.st.blocked_cavity, fan = m.st.blocked_new;
  ck_assert_int_eq(dt_insert(&m, &q), DT_POSTPONED);
  ck_assert_int_eq(m.st.blocked_cavity, cav);
  ck_assert_int_eq(m.st.blocked_new, fan + 1);
  ck_assert(m.last->mark != DT_DEAD && m.last->v[0] != DT_INF && m.last->v[1] != DT_INF &&
            m.last->v[2] != DT_INF && m.last->cell == 0 && m.last_cell == 0);
  ck_assert_msg(holds(m.last, p), "the next walk starts at a triangle without the point");
  dt_mesh_release(&m);
  free_pool(&pools[0]);
  free_pool(&pools[1]);
}
END_TEST

START_TEST(test_brio_is_a_permutation) {
  dt_input in;
  ck_assert_int_eq(dt_gen_uniform(&in, 10000, 1), 0);
  dt_pt *p = malloc(in.n * sizeof *p);
  for (size_t i = 0; i < in.n; i++) p[i] = (dt_pt){in.xy[2 * i], in.xy[2 * i + 1], (int32_t)i, 0};
  double box[4];
  dt_box(in.xy, in.n, box);
  dt_brio(p, in.n, box, 4);
  char *seen = calloc(in.n, 1);
  for (size_t i = 0; i < in.n; i++) {
    REQUIRE(!seen[p[i].id]);
    seen[p[i].id] = 1;
    REQUIRE(p[i].x == in.xy[2 * p[i].id] && p[i].y == in.xy[2 * p[i].id + 1]);
  }
  free(seen);
  free(p);
  dt_input_free(&in);
}
END_TEST

/* BRIO in slices: any slice size (0 counts as 1) gives dt_brio's order, and that order is a
 * permutation whose rounds (the last 3/4 of [0, len), then the same of [0, len / 4)) are each in curve order. */
static dt_pt *points_of(const dt_input *in) {
  dt_pt *p = malloc((in->n + 1) * sizeof *p);
  for (size_t i = 0; i < in->n; i++) p[i] = (dt_pt){in->xy[2 * i], in->xy[2 * i + 1], (int32_t)i, 0};
  return p;
}

static void brio_in_slices(dt_pt *p, size_t n, const double box[4], size_t slice) {
  void *scratch = malloc(dt_brio_scratch_bytes(n));
  dt_brio_job *j = malloc(sizeof *j);
  dt_brio_start(j, p, n, box, 4, scratch);
  int steps = 0;
  while (dt_brio_step(j, slice)) steps++;
  if (slice <= 1 && n > 64) REQUIRE(steps > (int)n); /* (or slices were not tested; 0 is 1) */
  free(j), free(scratch);
}

START_TEST(test_brio_in_slices_gives_the_same_order) {
  for (int wide = 0; wide < 2; wide++) {
    dt_input in;
    ck_assert_int_eq(wide ? dt_gen_wide(&in, 20000, 2) : dt_gen_uniform(&in, 5000, 2), 0);
    double box[4];
    dt_box(in.xy, in.n, box);
    dt_pt *whole = points_of(&in);
    dt_brio(whole, in.n, box, 4);
    static const size_t slices[] = {0, 1, 7, 63, 1000, 4999, SIZE_MAX};
    for (size_t s = 0; s < sizeof slices / sizeof *slices; s++) {
      dt_pt *p = points_of(&in);
      brio_in_slices(p, in.n, box, slices[s]);
      for (size_t i = 0; i < in.n; i++)
        ck_assert_msg(p[i].id == whole[i].id, "slice %zu: point %zu differs", slices[s], i);
      free(p);
    }
    double sq[4]; /* (the curve runs over the square around the box) */
    dt_square_box(box, sq);
    if (!wide) /* no crowded cells: each round is in key order over the whole square */
      for (size_t len = in.n; len > 0; len = len > 16 ? len / 4 : 0)
        for (size_t i = (len > 16 ? len / 4 : 0) + 1; i < len; i++)
          REQUIRE(dt_hilbert_key(whole[i - 1].x, whole[i - 1].y, sq) <=
                  dt_hilbert_key(whole[i].x, whole[i].y, sq));
    /* each round is in the order of the recursive, adaptive sort (dt_hilbert_sort, crowded
     * cells sorted again over their own boxes): sorting it again changes nothing */
    for (size_t len = in.n; len > 0; len = len > 16 ? len / 4 : 0) {
      size_t mid = len > 16 ? len / 4 : 0, m = len - mid;
      dt_pt *again = malloc(m * sizeof *again);
      memcpy(again, whole + mid, m * sizeof *again);
      dt_hilbert_sort(again, m, box);
      for (size_t i = 0; i < m; i++)
        ck_assert_msg(again[i].id == whole[mid + i].id, "round [%zu, %zu): point %zu", mid, len, i);
      free(again);
    }
    free(whole);
    dt_input_free(&in);
  }
  for (size_t n = 0; n < 70; n += 23) { /* tiny lists: nothing, or one insertion-sorted level */
    dt_input in;
    ck_assert_int_eq(dt_gen_uniform(&in, n ? n : 1, 3), 0);
    double box[4];
    dt_box(in.xy, in.n, box);
    dt_pt *a = points_of(&in), *b = points_of(&in);
    dt_brio(a, n, box, 4);
    brio_in_slices(b, n, box, 5);
    for (size_t i = 0; i < n; i++) REQUIRE(a[i].id == b[i].id);
    free(a), free(b);
    dt_input_free(&in);
  }
}
END_TEST

/* A job cancelled midway, while crowded cells wait on its stack (wide points): it is done (a
 * step does nothing more), its heap memory is freed (the sanitizer build checks leaks) and the
 * points are still a permutation of the input. */
START_TEST(test_brio_cancelled_midway_frees_and_keeps_the_points) {
  dt_input in;
  ck_assert_int_eq(dt_gen_wide(&in, 20000, 2), 0);
  double box[4];
  dt_box(in.xy, in.n, box);
  dt_pt *p = points_of(&in);
  void *scratch = malloc(dt_brio_scratch_bytes(in.n));
  dt_brio_job j;
  dt_brio_start(&j, p, in.n, box, 4, scratch);
  int steps = 0;
  while (j.nruns == 0 && dt_brio_step(&j, 64)) steps++;
  ck_assert_msg(j.nruns > 0, "no crowded cell was ever pending (%d steps)", steps);
  dt_brio_cancel(&j);
  REQUIRE(j.runs == NULL && j.nruns == 0);
  REQUIRE(!dt_brio_step(&j, 64));
  char *seen = calloc(in.n, 1);
  for (size_t i = 0; i < in.n; i++) {
    REQUIRE(!seen[p[i].id]);
    seen[p[i].id] = 1;
  }
  free(seen), free(scratch), free(p);
  dt_input_free(&in);
}
END_TEST

/* ---- the hull band ---- */
/* dt_band_has's quick part (the inner rectangle, the grid of squares inside) never changes an
 * answer: every point of clustered, uniform and wide-range inputs against the edge loop alone,
 * for a band of a few spacings and for none. */
static int band_by_edges(const dt_band *b, double x, double y) {
  if (b->h < 3) return 1;
  for (size_t i = 0; i < b->h; i++)
    if (b->e[i].nx * x + b->e[i].ny * y + b->e[i].c < b->delta) return 1;
  return 0;
}

START_TEST(test_band_quick_test_agrees_with_the_edges) {
  for (int kind = 0; kind < 3; kind++) {
    dt_input in;
    int rc = kind == 0   ? dt_gen_clustered(&in, 20000, 5, 8, 0.02)
             : kind == 1 ? dt_gen_uniform(&in, 20000, 5)
                         : dt_gen_wide(&in, 20000, 5);
    ck_assert_int_eq(rc, 0);
    dt_pt *p = malloc(in.n * sizeof *p), *hull = malloc((in.n + 2) * sizeof *hull);
    for (size_t i = 0; i < in.n; i++) p[i] = (dt_pt){in.xy[2 * i], in.xy[2 * i + 1], (int32_t)i, 0};
    size_t h = dt_hull(p, in.n, hull);
    for (int k = 0; k < 2; k++) {
      dt_band b;
      double delta = k ? dt_hull_delta(hull, h, in.n, 1024) : 0;
      ck_assert_int_eq(dt_band_init(&b, hull, h, delta), 0);
      size_t quick = 0, in_band = 0;
      for (size_t i = 0; i < in.n; i++) {
        double x = in.xy[2 * i], y = in.xy[2 * i + 1];
        int has = dt_band_has(&b, x, y);
        REQUIRE(has == band_by_edges(&b, x, y));
        quick += (size_t)dt_band_surely_inside(&b, x, y);
        in_band += (size_t)has;
      }
      if (kind < 2) ck_assert_uint_gt(quick, in.n / 2); /* the quick part does most of the work */
      if (k && kind < 2) ck_assert_uint_gt(in_band, 0);
      dt_band_free(&b);
    }
    free(p), free(hull);
    dt_input_free(&in);
  }
}
END_TEST

/* ---- the reader ---- */
static int read_text(const char *text, size_t len, dt_input *in) {
  char path[] = "/tmp/test_dt_points_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "wb");
  fwrite(text, 1, len, f);
  fclose(f);
  int rc = dt_read_points(in, path, ERR, sizeof ERR);
  remove(path);
  return rc;
}
#define READ(s, in) read_text(s, sizeof(s) - 1, in)

START_TEST(test_reader_accepts_text_and_binary) {
  dt_input in;
  ck_assert_int_eq(READ("# points\n1 2\n\n  3.5e1\t-4 \n", &in), 0);
  ck_assert_uint_eq(in.n, 2);
  ck_assert(in.xy[2] == 35 && in.xy[3] == -4);
  dt_input_free(&in);
  static const unsigned char bin[] =
      "DTPOINTS\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\xf0\x3f\0\0\0\0\0\0\0\x40";
  ck_assert_int_eq(read_text((const char *)bin, sizeof bin - 1, &in), 0);
  ck_assert_uint_eq(in.n, 1);
  ck_assert(in.xy[0] == 1 && in.xy[1] == 2);
  dt_input_free(&in);
}
END_TEST

START_TEST(test_reader_names_the_bad_line) {
  dt_input in;
  ck_assert_int_eq(READ("1 2\n3 4\nfoo bar\n", &in), -1);
  ck_assert_msg(strstr(ERR, ":3: expected two numbers"), "%s", ERR);
  ck_assert_int_eq(READ("1 2\n3\n", &in), -1);
  ck_assert_msg(strstr(ERR, ":2: expected two numbers"), "%s", ERR);
  ck_assert_int_eq(READ("1 2 3\n", &in), -1);
  ck_assert_msg(strstr(ERR, ":1: unexpected \"3\""), "%s", ERR);
  ck_assert_int_eq(READ("1 nan\n", &in), -1);
  ck_assert_msg(strstr(ERR, ":1: coordinate out of range"), "%s", ERR);
  ck_assert_int_eq(READ("1e300 0\n", &in), -1);
  ck_assert_msg(strstr(ERR, "out of range"), "%s", ERR);
  ck_assert_int_eq(READ("# nothing\n\n", &in), -1);
  ck_assert_msg(strstr(ERR, "no points"), "%s", ERR);
  ck_assert_int_eq(READ("DTPOINTS\x05\0\0\0\0\0\0\0\0\0\0\0", &in), -1);
  ck_assert_msg(strstr(ERR, "truncated"), "%s", ERR);
  ck_assert_int_eq(READ("1 2\n\0\0\n", &in), -1);
  ck_assert_msg(strstr(ERR, "NUL"), "%s", ERR);
  ck_assert_int_eq(dt_read_points(&in, "/nonexistent/points.txt", ERR, sizeof ERR), -1);
  ck_assert_msg(strstr(ERR, "cannot open"), "%s", ERR);
}
END_TEST

/* A binary header that announces far more points than the file holds: "truncated", said
 * before anything is allocated (the old reader asked for 32 GiB first, and said "out of
 * memory"). */
START_TEST(test_reader_says_truncated_before_allocating) {
  dt_input in;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  struct rlimit lim = {(rlim_t)4 << 30, (rlim_t)4 << 30}; /* 32 GiB cannot be had here */
  setrlimit(RLIMIT_AS, &lim); /* (Check runs each test in a child of its own) */
#endif
  static const unsigned char bin[] = "DTPOINTS\x00\xff\xff\x7f\0\0\0\0" /* 2,147,483,392 */
                                     "\0\0\0\0\0\0\xf0\x3f\0\0\0\0\0\0\0\x40";
  ck_assert_int_eq(read_text((const char *)bin, sizeof bin - 1, &in), -1);
  ck_assert_msg(strstr(ERR, "truncated") && strstr(ERR, "2147483392 points"), "%s", ERR);
  ck_assert_msg(!strstr(ERR, "memory") && strstr(ERR, "32 bytes") == NULL, "%s", ERR);
  ck_assert_msg(strstr(ERR, "16 bytes after the header"), "%s", ERR);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("delaunay serial");
  TCase *tc = tcase_create("dt");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_uniform_points_give_a_valid_delaunay_mesh);
  tcase_add_test(tc, test_clustered_points_give_a_valid_delaunay_mesh);
  tcase_add_test(tc, test_grid_is_valid_and_independent_of_the_order);
  tcase_add_test(tc, test_cocircular_points_give_a_valid_mesh);
  tcase_add_test(tc, test_collinear_hull_points_are_vertices);
  tcase_add_test(tc, test_duplicates_are_reported_and_the_lowest_id_kept);
  tcase_add_test(tc, test_points_on_one_line_give_no_triangles);
  tcase_add_test(tc, test_three_points_give_one_triangle);
  tcase_add_test(tc, test_validator_rejects_broken_meshes);
  tcase_add_test(tc, test_hilbert_order_steps_between_neighbouring_cells);
  tcase_add_test(tc, test_hilbert_sort_goes_inside_crowded_cells);
  tcase_add_test(tc, test_wide_range_keeps_the_walk_short);
  tcase_add_test(tc, test_points_near_a_line_keep_the_walk_short);
  tcase_add_test(tc, test_brio_is_a_permutation);
  tcase_add_test(tc, test_brio_in_slices_gives_the_same_order);
  tcase_add_test(tc, test_brio_cancelled_midway_frees_and_keeps_the_points);
  tcase_add_test(tc, test_postponed_point_leaves_the_walk_at_its_triangle);
  tcase_add_test(tc, test_postponed_by_a_new_cell_leaves_the_walk_at_its_triangle);
  tcase_add_test(tc, test_band_quick_test_agrees_with_the_edges);
  tcase_add_test(tc, test_reader_accepts_text_and_binary);
  tcase_add_test(tc, test_reader_names_the_bad_line);
  tcase_add_test(tc, test_reader_says_truncated_before_allocating);
  suite_add_tcase(s, tc);
  return s;
}

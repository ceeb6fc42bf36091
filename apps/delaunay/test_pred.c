/* test_pred.c: the exact predicates against rational arithmetic (GMP) on the inputs that break
 * floating point: collinear and cocircular points, points a few ulps off a line or a circle,
 * huge and tiny magnitudes; each stage (filter, adaptive, exact) checked on its own. */
#include <gmp.h>
#include <math.h>
#include <stdlib.h>

#include "bench.h"
#include "check_main.h"
#include "pred.h"

static int sgn(double x) { return (x > 0) - (x < 0); }

/* sign((a-c) x (b-c)) in rationals */
static int ref_orient(const double *a, const double *b, const double *c) {
  mpq_t t[6];
  for (int i = 0; i < 6; i++) mpq_init(t[i]);
  mpq_set_d(t[0], a[0]), mpq_set_d(t[1], c[0]), mpq_sub(t[0], t[0], t[1]); /* acx */
  mpq_set_d(t[2], b[1]), mpq_set_d(t[1], c[1]), mpq_sub(t[2], t[2], t[1]); /* bcy */
  mpq_set_d(t[3], a[1]), mpq_set_d(t[1], c[1]), mpq_sub(t[3], t[3], t[1]); /* acy */
  mpq_set_d(t[4], b[0]), mpq_set_d(t[1], c[0]), mpq_sub(t[4], t[4], t[1]); /* bcx */
  mpq_mul(t[0], t[0], t[2]);
  mpq_mul(t[3], t[3], t[4]);
  mpq_sub(t[5], t[0], t[3]);
  int s = mpq_sgn(t[5]);
  for (int i = 0; i < 6; i++) mpq_clear(t[i]);
  return s;
}

static int ref_incircle(const double *a, const double *b, const double *c, const double *d) {
  const double *p[3] = {a, b, c};
  mpq_t x[3], y[3], l[3], t, u, det;
  mpq_inits(t, u, det, NULL);
  for (int i = 0; i < 3; i++) {
    mpq_inits(x[i], y[i], l[i], NULL);
    mpq_set_d(x[i], p[i][0]), mpq_set_d(t, d[0]), mpq_sub(x[i], x[i], t);
    mpq_set_d(y[i], p[i][1]), mpq_set_d(t, d[1]), mpq_sub(y[i], y[i], t);
    mpq_mul(t, x[i], x[i]), mpq_mul(u, y[i], y[i]), mpq_add(l[i], t, u);
  }
  for (int i = 0; i < 3; i++) { /* l_i * (x_j y_k - x_k y_j) */
    int j = (i + 1) % 3, k = (i + 2) % 3;
    mpq_mul(t, x[j], y[k]), mpq_mul(u, x[k], y[j]), mpq_sub(t, t, u), mpq_mul(t, t, l[i]);
    mpq_add(det, det, t);
  }
  int s = mpq_sgn(det);
  for (int i = 0; i < 3; i++) mpq_clears(x[i], y[i], l[i], NULL);
  mpq_clears(t, u, det, NULL);
  return s;
}

static double rnd(bench_rng *r) { return (double)(bench_rand(r) >> 11) * 0x1p-53; }

START_TEST(test_orient_of_exactly_collinear_points_is_zero) {
  double a[2] = {0.5, 0.5}, b[2] = {12, 12}, c[2] = {24, 24};
  ck_assert(pred_orient(a, b, c) == 0);
  double d[2] = {1e30, 3e30}, e[2] = {2e30, 6e30}, o[2] = {0, 0};
  ck_assert(pred_orient(o, d, e) == 0);
  double f[2] = {1e-30, 0.1}, g[2] = {1e-30, 7}, h[2] = {1e-30, -3}; /* a vertical line */
  ck_assert(pred_orient(f, g, h) == 0);
}
END_TEST

/* Shewchuk's example: (0.5 + i ulp, 0.5 + j ulp) against the line through (12,12), (24,24).
 * Plain doubles get a large share of these signs wrong. */
START_TEST(test_orient_near_a_line_matches_exact_signs) {
  double b[2] = {12, 12}, c[2] = {24, 24};
  int naive_wrong = 0;
  for (int i = 0; i < 256; i++)
    for (int j = 0; j < 256; j++) {
      double a[2] = {0.5 + i * 0x1p-53, 0.5 + j * 0x1p-53};
      int s = sgn(pred_orient(a, b, c)), r = ref_orient(a, b, c);
      if (s != r) ck_abort_msg("orient(%d, %d): %d, exact %d", i, j, s, r);
      naive_wrong += sgn((a[0] - c[0]) * (b[1] - c[1]) - (a[1] - c[1]) * (b[0] - c[0])) != r;
    }
  ck_assert_int_gt(naive_wrong, 1000); /* the test would catch a non-exact predicate */
  ck_assert_uint_gt(pred_slow_orient, 0);
}
END_TEST

/* Points rounded onto random lines, at several magnitudes: the filter cannot decide them. */
START_TEST(test_orient_on_rounded_lines_matches_exact) {
  bench_rng r = {42};
  const double scale[] = {1, 1e-30, 1e30, 3.7e12};
  for (int s = 0; s < 4; s++)
    for (int i = 0; i < 20000; i++) {
      double a[2] = {rnd(&r) * scale[s], rnd(&r) * scale[s]};
      double b[2] = {rnd(&r) * scale[s], rnd(&r) * scale[s]};
      double t = rnd(&r) * 3 - 1;
      double c[2] = {a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])};
      REQUIRE(sgn(pred_orient(a, b, c)) == ref_orient(a, b, c));
      REQUIRE(sgn(pred_orient_exact(a, b, c)) == ref_orient(a, b, c));
    }
}
END_TEST

START_TEST(test_incircle_of_cocircular_points_is_zero) {
  /* integer points on x^2 + y^2 = 25, and a rectangle's corners */
  double a[2] = {5, 0}, b[2] = {3, 4}, c[2] = {-4, 3}, d[2] = {0, -5}, e[2] = {-3, -4};
  ck_assert(pred_incircle(a, b, c, d) == 0);
  ck_assert(pred_incircle(b, c, d, e) == 0);
  double r0[2] = {0, 0}, r1[2] = {1e6, 0}, r2[2] = {1e6, 3}, r3[2] = {0, 3};
  ck_assert(pred_incircle(r0, r1, r2, r3) == 0);
  /* inside and outside, counter-clockwise a, b, c */
  double in[2] = {0, 0}, out[2] = {6, 0};
  ck_assert(pred_incircle(a, b, c, in) > 0);
  ck_assert(pred_incircle(a, b, c, out) < 0);
}
END_TEST

/* A cocircular quadruple (a rectangle) with its fourth corner moved by a few ulps. */
START_TEST(test_incircle_near_a_circle_matches_exact) {
  bench_rng r = {7};
  int naive_wrong = 0;
  for (int i = 0; i < 20000; i++) {
    double x0 = rnd(&r), y0 = rnd(&r), w = rnd(&r) + 0.1, h = rnd(&r) + 0.1;
    double a[2] = {x0, y0}, b[2] = {x0 + w, y0}, c[2] = {x0 + w, y0 + h};
    double d[2] = {x0, y0 + h};
    for (int k = 0; k < 2; k++) d[k] += (double)((int)(bench_rand(&r) % 9) - 4) * 0x1p-52 * d[k];
    int s = sgn(pred_incircle(a, b, c, d)), ref = ref_incircle(a, b, c, d);
    if (s != ref) ck_abort_msg("incircle %d: %d, exact %d", i, s, ref);
    REQUIRE(sgn(pred_incircle_exact(a, b, c, d)) == ref);
    double adx = a[0] - d[0], ady = a[1] - d[1], bdx = b[0] - d[0], bdy = b[1] - d[1];
    double cdx = c[0] - d[0], cdy = c[1] - d[1];
    double naive = (adx * adx + ady * ady) * (bdx * cdy - cdx * bdy) +
                   (bdx * bdx + bdy * bdy) * (cdx * ady - adx * cdy) +
                   (cdx * cdx + cdy * cdy) * (adx * bdy - bdx * ady);
    naive_wrong += sgn(naive) != ref;
  }
  ck_assert_int_gt(naive_wrong, 100);
  ck_assert_uint_gt(pred_slow_incircle, 0);
}
END_TEST

/* The exact stage alone, on random and huge/tiny inputs (where differences are inexact). */
START_TEST(test_incircle_exact_stage_matches_rationals) {
  bench_rng r = {99};
  const double scale[] = {1, 1e-40, 1e40};
  for (int s = 0; s < 3; s++)
    for (int i = 0; i < 3000; i++) {
      double p[4][2];
      for (int k = 0; k < 4; k++)
        p[k][0] = (rnd(&r) + 1e3) * scale[s], p[k][1] = rnd(&r) * scale[s];
      int ref = ref_incircle(p[0], p[1], p[2], p[3]);
      REQUIRE(sgn(pred_incircle_exact(p[0], p[1], p[2], p[3])) == ref);
      REQUIRE(sgn(pred_incircle(p[0], p[1], p[2], p[3])) == ref);
    }
}
END_TEST

/* Points on a circle, rounded: every sign decided exactly, also with far-off offsets. */
START_TEST(test_incircle_rounded_circle_points_match_exact) {
  bench_rng r = {5};
  for (int i = 0; i < 20000; i++) {
    double cx = (rnd(&r) - 0.5) * 1e3, cy = (rnd(&r) - 0.5) * 1e3, rad = rnd(&r) + 1e-3;
    double p[4][2];
    for (int k = 0; k < 4; k++) {
      double t = 2 * M_PI * (k + rnd(&r)) / 4;
      p[k][0] = cx + rad * cos(t), p[k][1] = cy + rad * sin(t);
    }
    REQUIRE(sgn(pred_incircle(p[0], p[1], p[2], p[3])) == ref_incircle(p[0], p[1], p[2], p[3]));
  }
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("delaunay predicates");
  TCase *tc = tcase_create("pred");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_orient_of_exactly_collinear_points_is_zero);
  tcase_add_test(tc, test_orient_near_a_line_matches_exact_signs);
  tcase_add_test(tc, test_orient_on_rounded_lines_matches_exact);
  tcase_add_test(tc, test_incircle_of_cocircular_points_is_zero);
  tcase_add_test(tc, test_incircle_near_a_circle_matches_exact);
  tcase_add_test(tc, test_incircle_exact_stage_matches_rationals);
  tcase_add_test(tc, test_incircle_rounded_circle_points_match_exact);
  suite_add_tcase(s, tc);
  return s;
}

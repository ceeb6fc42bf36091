/* pred.h: exact geometric predicates on doubles (orientation, in-circle), after Shewchuk's
 * adaptive-precision arithmetic (1997): a floating-point filter inline here, and in pred.c the
 * adaptive stages and an exact fall-back on floating-point expansions. The sign is always
 * exact: the magnitude is only an approximation of the determinant.
 *
 *   pred_orient(a, b, c)  > 0: a, b, c counter-clockwise; < 0 clockwise; 0 collinear
 *   pred_incircle(a, b, c, d)  > 0: d strictly inside the circle through a, b, c (taken
 *                              counter-clockwise); < 0 outside; 0 on it
 *
 * The filter bounds assume IEEE double arithmetic with round-to-nearest, no x87 extended
 * precision and no contraction into fused multiply-adds (the CMake file sets
 * -ffp-contract=off). */
#ifndef DT_PRED_H
#define DT_PRED_H

/* Half an ulp of 1 (2^-53) and the filters' error-bound coefficients (Shewchuk's). */
#define PRED_EPS 1.1102230246251565404e-16
#define PRED_CCW_A ((3.0 + 16.0 * PRED_EPS) * PRED_EPS)
#define PRED_ICC_A ((10.0 + 96.0 * PRED_EPS) * PRED_EPS)

/* The slow paths, called when the filter cannot decide (pred.c). detsum and permanent are the
 * filter's magnitudes, reused for the next stage's bound. */
double pred_orient_adapt(const double *a, const double *b, const double *c, double detsum);
double pred_incircle_adapt(const double *a, const double *b, const double *c, const double *d,
                           double permanent);
/* The exact determinants from the original coordinates alone (the last stage; tests). */
double pred_orient_exact(const double *a, const double *b, const double *c);
double pred_incircle_exact(const double *a, const double *b, const double *c, const double *d);
/* How many calls fell through the filter, per predicate (statistics; not thread-safe). */
extern unsigned long pred_slow_orient, pred_slow_incircle;

static inline double pred_orient(const double *a, const double *b, const double *c) {
  double l = (a[0] - c[0]) * (b[1] - c[1]);
  double r = (a[1] - c[1]) * (b[0] - c[0]);
  double det = l - r, detsum;
  if (l > 0) {
    if (r <= 0) return det;
    detsum = l + r;
  } else if (l < 0) {
    if (r >= 0) return det;
    detsum = -l - r;
  } else {
    return det;
  }
  double bound = PRED_CCW_A * detsum;
  if (det >= bound || -det >= bound) return det;
  return pred_orient_adapt(a, b, c, detsum);
}

static inline double pred_incircle(const double *a, const double *b, const double *c,
                                   const double *d) {
  double adx = a[0] - d[0], ady = a[1] - d[1];
  double bdx = b[0] - d[0], bdy = b[1] - d[1];
  double cdx = c[0] - d[0], cdy = c[1] - d[1];
  double bc1 = bdx * cdy, bc2 = cdx * bdy, al = adx * adx + ady * ady;
  double ca1 = cdx * ady, ca2 = adx * cdy, bl = bdx * bdx + bdy * bdy;
  double ab1 = adx * bdy, ab2 = bdx * ady, cl = cdx * cdx + cdy * cdy;
  double det = al * (bc1 - bc2) + bl * (ca1 - ca2) + cl * (ab1 - ab2);
  double perm = (__builtin_fabs(bc1) + __builtin_fabs(bc2)) * al +
                (__builtin_fabs(ca1) + __builtin_fabs(ca2)) * bl +
                (__builtin_fabs(ab1) + __builtin_fabs(ab2)) * cl;
  double bound = PRED_ICC_A * perm;
  if (det > bound || -det > bound) return det;
  return pred_incircle_adapt(a, b, c, d, perm);
}

#endif

/* pred.c: the slow paths of the exact predicates (pred.h): floating-point expansions (a
 * number held exactly as a sum of doubles of increasing magnitude that do not overlap), after
 * Shewchuk, "Adaptive Precision Floating-Point Arithmetic and Fast Robust Geometric
 * Predicates" (1997). Written here from the paper's algorithms:
 *
 *   stage A  (pred.h) the determinant in doubles, with a bound on its rounding error
 *   stage B  the determinant of the rounded coordinate differences, computed exactly; exact
 *            for the real input too when the differences were exact (no tails), else accepted
 *            when it exceeds a second, smaller error bound
 *   exact    the determinant from the original coordinates, every difference kept as a
 *            two-term expansion (the last resort: degenerate or nearly degenerate input)
 *
 * Expansions here are nonoverlapping, sorted by increasing magnitude, and zero-eliminated;
 * their sign is the sign of their largest component. Products are split with Dekker's
 * splitter (no dependence on a fused multiply-add). Valid while no product overflows or
 * underflows: the point readers keep coordinates in [1e-50, 1e50] in magnitude (or 0). */
#include "pred.h"

#include <math.h>

unsigned long pred_slow_orient, pred_slow_incircle;

#define SPLITTER 134217729.0 /* 2^27 + 1 */
#define CCW_B ((2.0 + 12.0 * PRED_EPS) * PRED_EPS)
#define ICC_B ((4.0 + 48.0 * PRED_EPS) * PRED_EPS)

/* ---- error-free transformations ---- */

/* x + y == a + b exactly, x = fl(a + b). */
static inline void two_sum(double a, double b, double *x, double *y) {
  double s = a + b, bv = s - a, av = s - bv;
  *x = s;
  *y = (a - av) + (b - bv);
}

/* The rounding error of x = fl(a - b). */
static inline double diff_tail(double a, double b, double x) {
  double bv = a - x, av = x + bv;
  return (a - av) + (bv - b);
}

/* a = hi + lo with both halves of at most 26 significant bits. */
static inline void split(double a, double *hi, double *lo) {
  double c = SPLITTER * a, big = c - a;
  *hi = c - big;
  *lo = a - *hi;
}

/* x + y == a * b exactly, x = fl(a * b) (Dekker); b already split into bhi + blo. */
static inline void two_product_split(double a, double b, double bhi, double blo, double *x,
                                     double *y) {
  double p = a * b, ahi, alo;
  split(a, &ahi, &alo);
  double e1 = p - ahi * bhi, e2 = e1 - alo * bhi, e3 = e2 - ahi * blo;
  *x = p;
  *y = alo * blo - e3;
}

static inline void two_product(double a, double b, double *x, double *y) {
  double bhi, blo;
  split(b, &bhi, &blo);
  two_product_split(a, b, bhi, blo, x, y);
}

/* ---- expansions ---- */

/* h = e + f (Shewchuk's fast expansion sum with zero elimination): the components of both,
 * merged by magnitude, accumulated with two_sum. h holds elen + flen components at most. */
static int exp_sum(int elen, const double *e, int flen, const double *f, double *h) {
  int i = 0, j = 0, n = 0;
  double q;
  if (j >= flen || (i < elen && fabs(e[i]) <= fabs(f[j])))
    q = e[i++];
  else
    q = f[j++];
  while (i < elen || j < flen) {
    double g;
    if (j >= flen || (i < elen && fabs(e[i]) <= fabs(f[j])))
      g = e[i++];
    else
      g = f[j++];
    double s, t;
    two_sum(q, g, &s, &t);
    q = s;
    if (t != 0) h[n++] = t;
  }
  if (q != 0 || n == 0) h[n++] = q;
  return n;
}

/* h = e * b (scale expansion with zero elimination); h holds 2 * elen components at most. */
static int exp_scale(int elen, const double *e, double b, double *h) {
  double bhi, blo, q, t, p1, p0, s;
  int n = 0;
  split(b, &bhi, &blo);
  two_product_split(e[0], b, bhi, blo, &q, &t);
  if (t != 0) h[n++] = t;
  for (int i = 1; i < elen; i++) {
    two_product_split(e[i], b, bhi, blo, &p1, &p0);
    two_sum(q, p0, &s, &t);
    if (t != 0) h[n++] = t;
    two_sum(p1, s, &q, &t);
    if (t != 0) h[n++] = t;
  }
  if (q != 0 || n == 0) h[n++] = q;
  return n;
}

/* h = e * f: the sum of e scaled by each component of f. h and tmp hold 2 * elen * flen
 * components at most; scratch holds 2 * elen. */
static int exp_mul(int elen, const double *e, int flen, const double *f, double *h, double *tmp,
                   double *scratch) {
  int n = exp_scale(elen, e, f[0], h);
  for (int k = 1; k < flen; k++) {
    int m = exp_scale(elen, e, f[k], scratch);
    for (int i = 0; i < n; i++) tmp[i] = h[i];
    n = exp_sum(n, tmp, m, scratch, h);
  }
  return n;
}

static void exp_negate(int n, double *e) {
  for (int i = 0; i < n; i++) e[i] = -e[i];
}

/* The value, rounded; its sign is the expansion's sign (the components are added from the
 * smallest, and the sum of all but the largest is smaller than the largest). */
static double exp_estimate(int n, const double *e) {
  double s = 0;
  for (int i = 0; i < n; i++) s += e[i];
  return s;
}

/* ---- orientation ---- */

/* a[0]*b[1] - a[1]*b[0] as an expansion of 4 components at most. */
static int cross(const double *a, const double *b, double *h) {
  double p[2], q[2];
  two_product(a[0], b[1], &p[1], &p[0]);
  two_product(a[1], b[0], &q[1], &q[0]);
  exp_negate(2, q);
  return exp_sum(2, p, 2, q, h);
}

double pred_orient_exact(const double *a, const double *b, const double *c) {
  double ab[4], bc[4], ca[4], s[8], det[12];
  int nab = cross(a, b, ab), nbc = cross(b, c, bc), nca = cross(c, a, ca);
  int ns = exp_sum(nab, ab, nbc, bc, s);
  int n = exp_sum(ns, s, nca, ca, det);
  return exp_estimate(n, det);
}

double pred_orient_adapt(const double *a, const double *b, const double *c, double detsum) {
  pred_slow_orient++;
  double acx = a[0] - c[0], bcx = b[0] - c[0], acy = a[1] - c[1], bcy = b[1] - c[1];
  double l[2], r[2], B[4];
  two_product(acx, bcy, &l[1], &l[0]);
  two_product(acy, bcx, &r[1], &r[0]);
  exp_negate(2, r);
  int n = exp_sum(2, l, 2, r, B);
  double det = exp_estimate(n, B), bound = CCW_B * detsum;
  if (det >= bound || -det >= bound) return det;
  if (diff_tail(a[0], c[0], acx) == 0 && diff_tail(b[0], c[0], bcx) == 0 &&
      diff_tail(a[1], c[1], acy) == 0 && diff_tail(b[1], c[1], bcy) == 0)
    return det; /* the differences were exact: so is B */
  return pred_orient_exact(a, b, c);
}

/* ---- in-circle ---- */

/* lift * (x*y' - x'*y) for one row of the determinant, from exact doubles (stage B):
 * (dx^2 + dy^2) * m, m an expansion of mlen components. h holds 32 * mlen / 4 ... 8 * mlen. */
static int lifted_row(double dx, double dy, int mlen, const double *m, double *h) {
  double t1[8], t2[16], t3[8], t4[16];
  int n1 = exp_scale(mlen, m, dx, t1);
  int n2 = exp_scale(n1, t1, dx, t2);
  int n3 = exp_scale(mlen, m, dy, t3);
  int n4 = exp_scale(n3, t3, dy, t4);
  return exp_sum(n2, t2, n4, t4, h);
}

double pred_incircle_adapt(const double *a, const double *b, const double *c, const double *d,
                           double permanent) {
  pred_slow_incircle++;
  double adx = a[0] - d[0], bdx = b[0] - d[0], cdx = c[0] - d[0];
  double ady = a[1] - d[1], bdy = b[1] - d[1], cdy = c[1] - d[1];
  double A[2] = {adx, ady}, Bv[2] = {bdx, bdy}, C[2] = {cdx, cdy};
  double bc[4], ca[4], ab[4], ra[32], rb[32], rc[32], s[64], fin[96];
  int nbc = cross(Bv, C, bc), nca = cross(C, A, ca), nab = cross(A, Bv, ab);
  int na = lifted_row(adx, ady, nbc, bc, ra);
  int nb = lifted_row(bdx, bdy, nca, ca, rb);
  int nc = lifted_row(cdx, cdy, nab, ab, rc);
  int ns = exp_sum(na, ra, nb, rb, s);
  int n = exp_sum(ns, s, nc, rc, fin);
  double det = exp_estimate(n, fin), bound = ICC_B * permanent;
  if (det >= bound || -det >= bound) return det;
  if (diff_tail(a[0], d[0], adx) == 0 && diff_tail(b[0], d[0], bdx) == 0 &&
      diff_tail(c[0], d[0], cdx) == 0 && diff_tail(a[1], d[1], ady) == 0 &&
      diff_tail(b[1], d[1], bdy) == 0 && diff_tail(c[1], d[1], cdy) == 0)
    return det; /* the differences were exact: so is B */
  return pred_incircle_exact(a, b, c, d);
}

/* Exact in-circle: every difference p - d as a two-term expansion, then
 * det = |a-d|^2 (b-d)x(c-d) + |b-d|^2 (c-d)x(a-d) + |c-d|^2 (a-d)x(b-d). Sizes: a difference
 * 2, a product of two 4 ... (2x2) 8, a cross 16, a lift 16, a row 512, the sum 1536. */
typedef struct xdiff {
  double x[2], y[2];
  int nx, ny;
} xdiff;

static xdiff exact_diff(const double *p, const double *d) {
  xdiff r;
  double t;
  two_sum(p[0], -d[0], &r.x[1], &t);
  r.x[0] = t;
  two_sum(p[1], -d[1], &r.y[1], &t);
  r.y[0] = t;
  r.nx = r.x[0] != 0 ? 2 : (r.x[0] = r.x[1], 1);
  r.ny = r.y[0] != 0 ? 2 : (r.y[0] = r.y[1], 1);
  return r;
}

/* p.x * q.y - q.x * p.y (16 components at most). */
static int exact_cross(const xdiff *p, const xdiff *q, double *h) {
  double l[8], r[8], tmp[8], scr[4];
  int nl = exp_mul(p->nx, p->x, q->ny, q->y, l, tmp, scr);
  int nr = exp_mul(q->nx, q->x, p->ny, p->y, r, tmp, scr);
  exp_negate(nr, r);
  return exp_sum(nl, l, nr, r, h);
}

/* |p|^2 (16 components at most). */
static int exact_lift(const xdiff *p, double *h) {
  double xx[8], yy[8], tmp[8], scr[4];
  int nx = exp_mul(p->nx, p->x, p->nx, p->x, xx, tmp, scr);
  int ny = exp_mul(p->ny, p->y, p->ny, p->y, yy, tmp, scr);
  return exp_sum(nx, xx, ny, yy, h);
}

double pred_incircle_exact(const double *a, const double *b, const double *c, const double *d) {
  xdiff A = exact_diff(a, d), B = exact_diff(b, d), C = exact_diff(c, d);
  double lift[16], cr[16], row[3][512], tmp[512], scr[32], s[1024], fin[1536];
  const xdiff *P[3][3] = {{&A, &B, &C}, {&B, &C, &A}, {&C, &A, &B}};
  int nrow[3];
  for (int k = 0; k < 3; k++) {
    int nl = exact_lift(P[k][0], lift);
    int nc = exact_cross(P[k][1], P[k][2], cr);
    nrow[k] = exp_mul(nl, lift, nc, cr, row[k], tmp, scr);
  }
  int ns = exp_sum(nrow[0], row[0], nrow[1], row[1], s);
  int n = exp_sum(ns, s, nrow[2], row[2], fin);
  return exp_estimate(n, fin);
}

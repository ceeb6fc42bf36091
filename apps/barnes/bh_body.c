/* bh_body.c: bodies: the Plummer sphere (Aarseth, Henon & Wielen 1974), leapfrog kicks and
 * drifts, diagnostics sums and bounding boxes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bh.h"

/* splitmix64: seeds of any value (0 too) give well-mixed streams. */
static uint64_t next_u64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static double uniform(uint64_t *s) { return ((double)(next_u64(s) >> 11) + 0.5) / 9007199254740992.0; }

/* A random vector of length r, uniform in direction. */
static void isotropic(uint64_t *s, double r, double v[3]) {
  double z = 2 * uniform(s) - 1, phi = 2 * M_PI * uniform(s), q = sqrt(1 - z * z);
  v[0] = r * q * cos(phi);
  v[1] = r * q * sin(phi);
  v[2] = r * z;
}

void bh_plummer(bh_body *b, size_t n, uint64_t seed) {
  uint64_t s = seed;
  const double rscale = 3 * M_PI / 16, vscale = sqrt(1 / rscale);
  double cm[6] = {0};
  for (size_t i = 0; i < n; i++) {
    memset(&b[i], 0, sizeof b[i]);
    b[i].id = (int64_t)i;
    b[i].mass = 1.0 / (double)n;
    double r;
    do r = 1 / sqrt(pow(uniform(&s), -2.0 / 3.0) - 1);
    while (r > 10); /* the usual cut of the few far outliers */
    isotropic(&s, r * rscale, b[i].pos);
    double x, y; /* speed: von Neumann rejection of g(q) = q^2 (1 - q^2)^3.5 */
    do x = uniform(&s), y = 0.1 * uniform(&s);
    while (y > x * x * pow(1 - x * x, 3.5));
    isotropic(&s, x * sqrt(2.0) * pow(1 + r * r, -0.25) * vscale, b[i].vel);
    for (int d = 0; d < 3; d++) cm[d] += b[i].pos[d], cm[3 + d] += b[i].vel[d];
  }
  for (size_t i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) b[i].pos[d] -= cm[d] / (double)n, b[i].vel[d] -= cm[3 + d] / (double)n;
}

void bh_kick(bh_body *b, size_t n, double dt_half) {
  for (size_t i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) b[i].vel[d] += dt_half * b[i].acc[d];
}

void bh_drift(bh_body *b, size_t n, double dt) {
  for (size_t i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) b[i].pos[d] += dt * b[i].vel[d];
}

void bh_sums(const bh_body *b, size_t n, double s[5]) {
  memset(s, 0, 5 * sizeof *s);
  for (size_t i = 0; i < n; i++) {
    double v2 = 0;
    for (int d = 0; d < 3; d++) v2 += b[i].vel[d] * b[i].vel[d], s[2 + d] += b[i].mass * b[i].vel[d];
    s[0] += 0.5 * b[i].mass * v2;
    s[1] += 0.5 * b[i].mass * b[i].pot;
  }
}

void bh_box(const bh_body *b, size_t n, double lo[3], double hi[3]) {
  for (int d = 0; d < 3; d++) lo[d] = INFINITY, hi[d] = -INFINITY;
  for (size_t i = 0; i < n; i++)
    for (int d = 0; d < 3; d++) {
      if (b[i].pos[d] < lo[d]) lo[d] = b[i].pos[d];
      if (b[i].pos[d] > hi[d]) hi[d] = b[i].pos[d];
    }
}

/* barnes_serial.c: the serial Barnes-Hut (one process, no MPI): the same physics as barnes,
 * with an arena for regions. With --domains P it forms the same P domains as barnes on P
 * workers (the same recursive bisection), walks the same trees in the same order, and so
 * reproduces barnes's positions bit for bit; --domains 1 is the serial baseline of the
 * parallel efficiency. Main entry: main(). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bh.h"

/* bh_mem around the arena that times every call (the "scheduler communication" column). */
typedef struct timed_mem {
  bh_mem inner;
  double *seconds;
} timed_mem;

static uint32_t t_region(void *ctx, uint32_t parent) {
  timed_mem *m = ctx;
  double t0 = bench_now_ns();
  uint32_t r = m->inner.region(m->inner.ctx, parent);
  *m->seconds += (bench_now_ns() - t0) * 1e-9;
  return r;
}
static int t_balloc(void *ctx, uint32_t region, size_t size, int n, void **out) {
  timed_mem *m = ctx;
  double t0 = bench_now_ns();
  int rc = m->inner.balloc(m->inner.ctx, region, size, n, out);
  *m->seconds += (bench_now_ns() - t0) * 1e-9;
  return rc;
}
static int t_rfree(void *ctx, uint32_t region) {
  timed_mem *m = ctx;
  double t0 = bench_now_ns();
  int rc = m->inner.rfree(m->inner.ctx, region);
  *m->seconds += (bench_now_ns() - t0) * 1e-9;
  return rc;
}

typedef struct sim {
  bh_opts o;
  bh_body *b, *scratch;
  size_t n;
  size_t *off; /* domain d holds b[off[d] .. off[d+1]) */
  long domains;
  bh_mem mem;
  double scomm;
  int64_t work, missing;
} sim;

/* ---- load balancing: the group of domains [d0, d1) owns b[begin, end) ---- */
typedef struct slice {
  const bh_body *b;
  size_t n;
} slice;

static void slice_box(void *ctx, double lo[3], double hi[3]) {
  const slice *s = ctx;
  bh_box(s->b, s->n, lo, hi);
}

static int64_t slice_below(void *ctx, int dim, double cut) {
  const slice *s = ctx;
  int64_t w = 0;
  for (size_t i = 0; i < s->n; i++)
    if (s->b[i].pos[dim] < cut) w += bh_weight(&s->b[i]);
  return w;
}

static void balance(sim *s, size_t begin, size_t end, long d0, long d1) {
  if (d1 - d0 == 1) {
    s->off[d0] = begin;
    s->off[d1] = end;
    return;
  }
  slice sl = {s->b + begin, end - begin};
  bh_group g = {slice_box, slice_below, &sl};
  int dim;
  double cut = bh_bisect_cut(&g, &dim);
  size_t mid = begin + bh_partition(s->b + begin, end - begin, dim, cut, s->scratch);
  long dm = d0 + (d1 - d0) / 2;
  balance(s, begin, mid, d0, dm);
  balance(s, mid, end, dm, d1);
}

/* ---- forces: every domain's tree, walked by every body in barnes's ring order ---- */
static int forces(sim *s) {
  long D = s->domains;
  bh_tree *t = calloc((size_t)D, sizeof *t);
  double(*box)[6] = calloc((size_t)D, sizeof *box);
  char err[160];
  for (long d = 0; d < D; d++) {
    bh_box(s->b + s->off[d], s->off[d + 1] - s->off[d], box[d], box[d] + 3);
    if (bh_tree_build(&s->mem, s->b + s->off[d], s->off[d + 1] - s->off[d], &t[d], err,
                      sizeof err)) {
      fprintf(stderr, "barnes-serial: error: %s\n", err);
      return -1;
    }
  }
  /* The levels barnes would send from tree w to domain d (its own tree: all). */
  int *lev = malloc((size_t)(D * D) * sizeof *lev);
  for (long d = 0; d < D; d++)
    for (long w = 0; w < D; w++)
      lev[d * D + w] = w == d ? t[w].nlevels : bh_tree_levels_for_box(&t[w], box[d], box[d] + 3,
                                                                      s->o.theta);
  for (long d = 0; d < D; d++)
    for (size_t i = s->off[d]; i < s->off[d + 1]; i++) {
      bh_body *x = &s->b[i];
      memset(x->acc, 0, sizeof x->acc);
      x->pot = 0;
      x->work = 0;
      for (long k = 0; k < D; k++) { /* barnes's ring order: its own tree, then d-1, d-2, ... */
        long w = (d - k + D) % D;
        s->missing += bh_walk(t[w].root, lev[d * D + w], x->pos, x->id, s->o.theta, s->o.eps,
                              x->acc, &x->pot, &x->work);
      }
      s->work += x->work;
    }
  for (long d = 0; d < D; d++) bh_tree_free(&s->mem, &t[d]);
  free(lev);
  free(box);
  free(t);
  return 0;
}

int main(int argc, char **argv) {
  sim s = {0};
  int rc = bh_opts_parse(argc, argv, 1, &s.o);
  if (rc) return rc > 0 ? 0 : 2;
  s.n = (size_t)s.o.bodies;
  s.domains = s.o.domains;
  s.b = malloc(s.n * sizeof *s.b);
  s.scratch = malloc(s.n * sizeof *s.scratch);
  s.off = calloc((size_t)s.domains + 1, sizeof *s.off);
  bh_mem arena = bh_arena_new();
  timed_mem tm = {arena, &s.scomm};
  s.mem = (bh_mem){t_region, t_balloc, t_rfree, &tm};
  if (!s.b || !s.scratch || !s.off || !arena.ctx) {
    fprintf(stderr, "barnes-serial: error: out of memory for %zu bodies\n", s.n);
    return 1;
  }
  bh_plummer(s.b, s.n, s.o.seed);
  balance(&s, 0, s.n, 0, s.domains);
  if (forces(&s)) return 1;
  double s0[5], sums[5];
  bh_sums(s.b, s.n, s0);
  if (!s.o.quiet) {
    printf("barnes-serial: %zu bodies, %ld domains, theta %g, dt %g, eps %g, seed %llu\n", s.n,
           s.domains, s.o.theta, s.o.dt, s.o.eps, (unsigned long long)s.o.seed);
    bh_print_step(0, 0, s0, s0, (double)s.work / (double)s.n);
  }
  s.scomm = 0;
  double t0 = bench_now_ns();
  for (long step = 1; step <= s.o.steps; step++) {
    s.work = 0;
    bh_kick(s.b, s.n, s.o.dt / 2);
    bh_drift(s.b, s.n, s.o.dt);
    if (forces(&s)) return 1;
    bh_kick(s.b, s.n, s.o.dt / 2);
    bh_sums(s.b, s.n, sums);
    if (!s.o.quiet) bh_print_step(step, (double)step * s.o.dt, s0, sums, (double)s.work / (double)s.n);
    balance(&s, 0, s.n, 0, s.domains);
  }
  double total = (bench_now_ns() - t0) * 1e-9;
  bh_sums(s.b, s.n, sums);
  double drift = (sums[0] + sums[1] - s0[0] - s0[1]) / fabs(s0[0] + s0[1]);
  int failed = 0;
  if (s.missing) {
    fprintf(stderr, "barnes-serial: error: %lld cells opened beyond the levels a peer gets\n",
            (long long)s.missing);
    failed = 1;
  }
  bh_times tt = {.compute = total - s.scomm, .scomm = s.scomm, .total = total};
  bh_report(&s.o, "serial", (int)s.domains, 0, &tt, &tt,
            s.o.steps ? (double)s.work / (double)s.n : 0, drift);
  if (s.o.positions && bh_write_positions(s.o.positions, s.b, s.n)) failed = 1;
  if (s.o.compare) {
    double worst = bh_compare_positions(s.o.compare, s.b, s.n);
    int ok = worst >= 0 && worst <= s.o.tol;
    printf("barnes-serial: positions vs %s: max |dx| %.3e (tolerance %.3e): %s\n", s.o.compare,
           worst, s.o.tol, ok ? "match" : "MISMATCH");
    printf("barnes-serial: %d passed, %d failed\n", ok, !ok);
    if (!ok) failed = 1;
  }
  if (bh_arena_live(&arena) != 0) {
    fprintf(stderr, "barnes-serial: error: %d regions left in the arena\n", bh_arena_live(&arena));
    failed = 1;
  }
  bh_arena_delete(&arena);
  free(s.b), free(s.scratch), free(s.off);
  return failed;
}

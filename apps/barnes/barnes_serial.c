/* barnes_serial.c: the serial Barnes-Hut (one process, no MPI): the same physics as barnes and
 * barnes-mpi, with an arena for regions: one tree of all bodies a step, walked by each body.
 * The baseline of the parallel efficiency, and the reference every parallel run reproduces bit
 * for bit (--compare: the parallel walk is this walk, cell for cell). Main entry: main(). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bh.h"
#include "bh_par.h"

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
  uint64_t *keys;
  size_t n;
  bh_mem mem;
  double scomm;
  int64_t work;
} sim;

/* The tree of every body, walked by each (octant order), then freed. The bodies are walked in
 * key (Morton) order, as the parallel programs walk theirs: neighbours in memory then take
 * nearly the same path through the tree, which a run of bodies in generation order does not
 * (1.6x slower on the 2-core VM at 131,072 bodies). The order changes no body's force. */
static int forces(sim *s) {
  bh_tree t;
  char err[160];
  double lo[3], hi[3];
  bh_box(s->b, s->n, lo, hi);
  bh_cube cube = bh_cube_of_box(lo, hi);
  if (bh_sort_by_key(&cube, s->b, s->n, s->keys, s->scratch)) {
    fprintf(stderr, "barnes-serial: error: out of memory sorting the bodies\n");
    return -1;
  }
  if (bh_tree_build(&s->mem, s->b, s->n, &cube, &t, err, sizeof err)) {
    fprintf(stderr, "barnes-serial: error: %s\n", err);
    return -1;
  }
  for (size_t i = 0; i < s->n; i++) {
    bh_body *x = &s->b[i];
    memset(x->acc, 0, sizeof x->acc);
    x->pot = 0;
    x->work = 0;
    bh_walk(t.root, x->pos, x->id, s->o.theta, s->o.eps, x->acc, &x->pot, &x->work);
    s->work += x->work;
  }
  return bh_tree_free(&s->mem, &t);
}

int main(int argc, char **argv) {
  sim s = {0};
  int rc = bh_opts_parse(argc, argv, BH_SERIAL, &s.o);
  if (rc) return rc > 0 ? 0 : 2;
  s.n = (size_t)s.o.bodies;
  s.b = malloc(s.n * sizeof *s.b);
  s.scratch = malloc(s.n * sizeof *s.scratch);
  s.keys = malloc(s.n * sizeof *s.keys);
  bh_mem arena = bh_arena_new();
  timed_mem tm = {arena, &s.scomm};
  s.mem = (bh_mem){t_region, t_balloc, t_rfree, &tm, .balloc_any_thread = false};
  if (!s.b || !s.scratch || !s.keys || !arena.ctx) {
    fprintf(stderr, "barnes-serial: error: out of memory for %zu bodies\n", s.n);
    return 1;
  }
  bh_plummer(s.b, s.n, s.o.seed);
  if (forces(&s)) return 1;
  double s0[5], sums[5];
  bh_sums(s.b, s.n, s0);
  if (!s.o.quiet) {
    printf("barnes-serial: %zu bodies, theta %g, dt %g, eps %g, seed %llu\n", s.n, s.o.theta,
           s.o.dt, s.o.eps, (unsigned long long)s.o.seed);
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
  }
  double total = (bench_now_ns() - t0) * 1e-9;
  bh_sums(s.b, s.n, sums);
  double drift = (sums[0] + sums[1] - s0[0] - s0[1]) / fabs(s0[0] + s0[1]);
  int failed = 0;
  bh_times tt = {.compute = total - s.scomm, .scomm = s.scomm, .total = total};
  bh_report(&s.o, "serial", 1, 0, &tt, &tt, s.o.steps ? (double)s.work / (double)s.n : 0, drift);
  if (s.o.positions && bh_write_positions(s.o.positions, s.b, s.n)) failed = 1;
  if (s.o.compare) {
    double worst = 0, rel = 0;
    int same = bh_compare_positions(s.o.compare, s.b, s.n, &worst, &rel);
    int ok = same == 0 && worst <= s.o.tol;
    printf("barnes-serial: positions vs %s: max |dx| %.3e, max relative %.3e (tolerance %.3e): %s\n",
           s.o.compare, worst, rel, s.o.tol, ok ? "match" : "MISMATCH");
    printf("barnes-serial: %d passed, %d failed\n", ok, !ok);
    if (!ok) failed = 1;
  }
  if (bh_arena_live(&arena) != 0) {
    fprintf(stderr, "barnes-serial: error: %d regions left in the arena\n", bh_arena_live(&arena));
    failed = 1;
  }
  bh_arena_delete(&arena);
  free(s.b), free(s.scratch), free(s.keys);
  return failed;
}

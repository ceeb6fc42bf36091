/* test_bh.c: the physics of apps/barnes against direct summation and its own invariants:
 * force error at theta 0.5 (stated bound), exactness at theta 0, trees that depend only on the
 * set of bodies, one region per level, the Plummer generator, coincident bodies as a clear
 * error; and the parallel pieces without MPI: keys that follow the tree, domain cuts of equal
 * weight, and P domains' trees, top tree and LETs that walk as the serial tree, bit for bit
 * (bh_run.c's step, played in one process); a hybrid worker's team, and the sort and tree it
 * shares, the serial ones exactly; the pooled walk (bh_pool.h) with threads as workers. */
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bh.h"
#include "bh_par.h"
#include "bh_pool.h"
#include "check_main.h"

/* The stated bound: at theta 0.5 (monopoles, Plummer softening 0.025), over bodies the
 * relative force error |a_tree - a_direct| / |a_direct| has an RMS below 1% and a 99th
 * percentile below 3%. (The largest is not bounded so tightly: near the centre of the sphere
 * the direct force nearly cancels and the relative error of the few bodies there reaches ~8%.) */
#define RMS_BOUND 0.01
#define P99_BOUND 0.03

typedef struct errs {
  double rms, p99, max;
} errs;

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Forces of the serial tree against the direct sum: the relative errors' RMS, 99th
 * percentile and largest. */
static errs tree_vs_direct(size_t n, double theta) {
  bh_body *b = malloc(n * sizeof *b);
  bh_plummer(b, n, 7);
  bh_mem mem = bh_arena_new();
  bh_tree t;
  char err[128];
  ck_assert_int_eq(bh_tree_build(&mem, b, n, NULL, &t, err, sizeof err), 0);
  double *acc = malloc(3 * n * sizeof *acc), *pot = malloc(n * sizeof *pot);
  bh_direct(b, n, 0.025, acc, pot);
  double sum2 = 0, *rels = malloc(n * sizeof *rels);
  for (size_t i = 0; i < n; i++) {
    double a[3] = {0, 0, 0}, p = 0;
    int64_t w = 0;
    ck_assert_int_eq(bh_walk(t.root, b[i].pos, b[i].id, theta, 0.025, a, &p, &w), 0);
    double e2 = 0, a2 = 0;
    for (int c = 0; c < 3; c++) {
      e2 += (a[c] - acc[3 * i + c]) * (a[c] - acc[3 * i + c]);
      a2 += acc[3 * i + c] * acc[3 * i + c];
    }
    double rel = sqrt(e2 / a2);
    sum2 += rel * rel;
    rels[i] = rel;
  }
  bh_tree_free(&mem, &t);
  ck_assert_int_eq(bh_arena_live(&mem), 0);
  bh_arena_delete(&mem);
  qsort(rels, n, sizeof *rels, cmp_dbl);
  errs e = {sqrt(sum2 / (double)n), rels[n * 99 / 100], rels[n - 1]};
  free(b), free(acc), free(pot), free(rels);
  return e;
}

START_TEST(test_force_error_at_theta_half_is_below_the_stated_bound) {
  errs e = tree_vs_direct(2000, 0.5);
  printf("theta 0.5: rms %.2e, p99 %.2e, max %.2e\n", e.rms, e.p99, e.max);
  ck_assert_msg(e.rms < RMS_BOUND && e.p99 < P99_BOUND, "rms %g p99 %g", e.rms, e.p99);
}
END_TEST

START_TEST(test_theta_zero_is_the_direct_sum) {
  errs e = tree_vs_direct(500, 0.0);
  ck_assert_msg(e.max < 1e-12, "max %g", e.max);
}
END_TEST

/* Walk results (acc, pot, work) of every body over one tree. */
static void walk_all(const bh_cell *root, const bh_body *b, size_t n, double *out) {
  for (size_t i = 0; i < n; i++) {
    double a[3] = {0, 0, 0}, p = 0;
    int64_t w = 0;
    ck_assert_int_eq(bh_walk(root, b[i].pos, b[i].id, 0.5, 0.025, a, &p, &w), 0);
    out[5 * i] = a[0], out[5 * i + 1] = a[1], out[5 * i + 2] = a[2], out[5 * i + 3] = p;
    out[5 * i + 4] = (double)w;
  }
}

/* Plummer bodies in a fixed shuffle (an order the tree and the sort must not depend on). */
static bh_body *shuffled(size_t n, uint64_t seed) {
  bh_body *b = malloc(n * sizeof *b);
  bh_plummer(b, n, seed);
  for (size_t i = n - 1; i > 0; i--) {
    size_t j = (i * 2654435761u) % (i + 1);
    bh_body t = b[i];
    b[i] = b[j];
    b[j] = t;
  }
  return b;
}

START_TEST(test_tree_depends_only_on_the_set_of_bodies) {
  enum { N = 3000 };
  bh_body *b = malloc(N * sizeof *b), *s = shuffled(N, 3);
  bh_plummer(b, N, 3);
  bh_mem mem = bh_arena_new();
  bh_tree t1, t2;
  char err[128];
  ck_assert_int_eq(bh_tree_build(&mem, b, N, NULL, &t1, err, sizeof err), 0);
  ck_assert_int_eq(bh_tree_build(&mem, s, N, NULL, &t2, err, sizeof err), 0);
  ck_assert_int_eq(t1.nlevels, t2.nlevels);
  ck_assert_uint_eq(t1.ncells, t2.ncells);
  double *r1 = malloc(5 * N * sizeof *r1), *r2 = malloc(5 * N * sizeof *r2);
  walk_all(t1.root, b, N, r1);
  walk_all(t2.root, b, N, r2);
  ck_assert(memcmp(r1, r2, 5 * N * sizeof *r1) == 0); /* bit for bit */
  bh_tree_free(&mem, &t1);
  bh_tree_free(&mem, &t2);
  bh_arena_delete(&mem);
  free(b), free(s), free(r1), free(r2);
}
END_TEST

START_TEST(test_each_level_is_its_own_region_below_the_tree_region) {
  enum { N = 1000 };
  bh_body *b = malloc(N * sizeof *b);
  bh_plummer(b, N, 5);
  bh_mem mem = bh_arena_new();
  bh_tree t;
  char err[128];
  ck_assert_int_eq(bh_tree_build(&mem, b, N, NULL, &t, err, sizeof err), 0);
  ck_assert_int_eq(bh_arena_live(&mem), t.nlevels + 1);
  for (int k = 0; k < t.nlevels; k++) {
    ck_assert_uint_ne(t.level[k], 0);
    for (int j = 0; j < k; j++) ck_assert_uint_ne(t.level[k], t.level[j]);
  }
  ck_assert_int_eq(bh_tree_free(&mem, &t), 0);
  ck_assert_int_eq(bh_arena_live(&mem), 0); /* the levels went with the tree region */
  bh_arena_delete(&mem);
  free(b);
}
END_TEST

START_TEST(test_plummer_is_deterministic_centred_and_near_e_minus_a_quarter) {
  enum { N = 4096 };
  bh_body *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
  bh_plummer(a, N, 42);
  bh_plummer(b, N, 42);
  ck_assert(memcmp(a, b, N * sizeof *a) == 0);
  bh_plummer(b, N, 43);
  ck_assert(memcmp(a, b, N * sizeof *a) != 0);
  double cm[6] = {0}, *acc = malloc(3 * N * sizeof *acc), *pot = malloc(N * sizeof *pot);
  for (size_t i = 0; i < N; i++)
    for (int d = 0; d < 3; d++) cm[d] += a[i].mass * a[i].pos[d], cm[3 + d] += a[i].mass * a[i].vel[d];
  for (int d = 0; d < 6; d++) ck_assert(fabs(cm[d]) < 1e-12);
  bh_direct(a, N, 0, acc, pot);
  for (size_t i = 0; i < N; i++) a[i].pot = pot[i];
  double s[5];
  bh_sums(a, N, s);
  printf("Plummer %d bodies: E %.4f (K %.4f, W %.4f)\n", N, s[0] + s[1], s[0], s[1]);
  ck_assert(fabs(s[0] + s[1] + 0.25) < 0.02);
  free(a), free(b), free(acc), free(pot);
}
END_TEST

START_TEST(test_coincident_bodies_are_a_clear_error) {
  bh_body b[3];
  bh_plummer(b, 3, 1);
  b[2] = b[1];
  b[2].id = 2;
  bh_mem mem = bh_arena_new();
  bh_tree t;
  char err[128] = "";
  ck_assert_int_eq(bh_tree_build(&mem, b, 3, NULL, &t, err, sizeof err), -1);
  ck_assert_ptr_nonnull(strstr(err, "coincident"));
  ck_assert_int_eq(bh_arena_live(&mem), 0);
  bh_arena_delete(&mem);
}
END_TEST

START_TEST(test_leapfrog_conserves_energy_over_twenty_steps) {
  enum { N = 1024 };
  bh_body *b = malloc(N * sizeof *b);
  double *acc = malloc(3 * N * sizeof *acc), *pot = malloc(N * sizeof *pot), s0[5], s[5];
  bh_plummer(b, N, 2);
  for (int step = 0; step <= 20; step++) {
    if (step) bh_kick(b, N, 0.0125), bh_drift(b, N, 0.025);
    bh_direct(b, N, 0.025, acc, pot);
    for (size_t i = 0; i < N; i++) memcpy(b[i].acc, acc + 3 * i, sizeof b[i].acc), b[i].pot = pot[i];
    if (step) bh_kick(b, N, 0.0125);
    bh_sums(b, N, step ? s : s0);
  }
  double drift = fabs((s[0] + s[1] - s0[0] - s0[1]) / (s0[0] + s0[1]));
  printf("direct leapfrog, 20 steps: |dE/E0| %.2e\n", drift);
  ck_assert(drift < 1e-3);
  for (int d = 2; d < 5; d++) ck_assert(fabs(s[d] - s0[d]) < 1e-12);
  free(b), free(acc), free(pot);
}
END_TEST


/* ---- the parallel pieces, in one process ---- */

/* A sum over "every worker" when one process plays them all: nothing to add. */
static void sum_none(void *ctx, int64_t *v, int n) { (void)ctx, (void)v, (void)n; }

/* n bodies: a Plummer sphere, or (clustered) three tight clumps far apart with a few strays. */
static bh_body *bodies(size_t n, int clustered, uint64_t seed) {
  bh_body *b = malloc(n * sizeof *b);
  bh_plummer(b, n, seed);
  for (size_t i = 0; clustered && i < n; i++) {
    double shift = (double)(i % 3) * 8.0 - 8.0, scale = i % 50 ? 0.05 : 1.0;
    for (int d = 0; d < 3; d++) b[i].pos[d] = b[i].pos[d] * scale + (d == 0 ? shift : 0);
  }
  for (size_t i = 0; i < n; i++) b[i].work = (int64_t)(1 + (i * 7919) % 300); /* uneven weights */
  return b;
}

/* bh_run.c's step in one process: D domains cut by weight along the keys, each domain's tree in
 * the global cube, the top tree of every branch, each domain walking its own branches and the
 * LETs the others made for its box (relocatable ones copied first, as MPI would). Every body's
 * acc, pot and work into out[5 per body, by ID]; the walks' missing cells into *missing. With
 * share > 0 (the shared tails, bh_steal.h) the domain walks the previous domain's tail as well,
 * into taken[5 per body, by ID], and (cover) the LETs for it cover that tail's box too. */
static void play_domains(const bh_body *in, size_t n, int D, int relocatable, double share,
                         bool cover, double *out, double *taken, int64_t *missing) {
  bh_body *b = malloc(n * sizeof *b), *scratch = malloc(n * sizeof *b);
  uint64_t *keys = malloc(n * sizeof *keys), cut[65];
  memcpy(b, in, n * sizeof *b);
  double lo[3], hi[3];
  bh_box(b, n, lo, hi);
  bh_cube cube = bh_cube_of_box(lo, hi);
  ck_assert_int_eq(bh_sort_by_key(&cube, b, n, keys, scratch), 0);
  uint64_t tails[64];
  ck_assert_int_eq(bh_domain_cuts_tails(keys, b, n, D, (int)lround(share * BH_SHARE_ONE),
                                        sum_none, NULL, cut, tails), 0);
  size_t off[65];
  for (int d = 0; d <= D; d++) off[d] = d == D ? n : 0;
  for (int d = 1; d < D; d++) { /* the first body of each domain */
    size_t k = 0;
    while (k < n && keys[k] < cut[d]) k++;
    off[d] = k;
  }
  bh_mem mem = bh_arena_new();
  bh_tree t[64];
  bh_branch *br[64], *all = malloc(64 * n * sizeof *all);
  const bh_cell **cells[64];
  long nb[64], first[64], total = 0;
  char err[128];
  for (int d = 0; d < D; d++) {
    ck_assert_int_eq(bh_tree_build(&mem, b + off[d], off[d + 1] - off[d], &cube, &t[d], err, sizeof err), 0);
    nb[d] = bh_branches(&t[d], &cube, cut[d], cut[d + 1], d, &br[d], &cells[d]);
    ck_assert(nb[d] >= 0);
    first[d] = total;
    memcpy(all + total, br[d], (size_t)nb[d] * sizeof *all);
    total += nb[d];
  }
  *missing = 0;
  for (int d = 0; d < D; d++) { /* domain d's view: its top tree, its branches, the LETs */
    bh_top top;
    ck_assert_int_eq(bh_top_build(&top, all, (size_t)total, &cube), 0);
    double dlo[3], dhi[3], tlo[3], thi[3];
    bh_box(b + off[d], off[d + 1] - off[d], dlo, dhi);
    size_t tail = off[d]; /* the first body of the previous domain's tail */
    while (d > 0 && tail > off[d - 1] && keys[tail - 1] >= tails[d - 1]) tail--;
    bh_box(b + tail, d > 0 ? off[d] - tail : 0, tlo, thi);
    for (int k = 0; cover && k < 3; k++) dlo[k] = fmin(dlo[k], tlo[k]), dhi[k] = fmax(dhi[k], thi[k]);
    void *let[64] = {0};
    for (int q = 0; q < D; q++) {
      if (q == d) {
        for (long i = 0; i < nb[q]; i++) bh_top_graft(&top, (size_t)(first[q] + i), cells[q][i]);
        continue;
      }
      size_t bytes = bh_let_bytes(cells[q], (size_t)nb[q], dlo, dhi, 0.5);
      void *made = malloc(bytes);
      bh_let_fill(made, cells[q], (size_t)nb[q], dlo, dhi, 0.5, relocatable);
      let[q] = made;
      if (relocatable) { /* the bytes travel: a copy elsewhere, pointers rebuilt there */
        let[q] = malloc(bytes);
        memcpy(let[q], made, bytes);
        memset(made, 0xa5, bytes);
        free(made);
        ck_assert_int_eq(bh_let_relocate(let[q], bytes), 0);
      }
      for (long i = 0; i < nb[q]; i++)
        bh_top_graft(&top, (size_t)(first[q] + i), bh_let_root(let[q], (size_t)i));
    }
    for (size_t i = off[d]; i < off[d + 1]; i++) {
      double a[3] = {0, 0, 0}, p = 0;
      int64_t w = 0;
      *missing += bh_walk(top.root, b[i].pos, b[i].id, 0.5, 0.025, a, &p, &w);
      double *o = out + 5 * b[i].id;
      o[0] = a[0], o[1] = a[1], o[2] = a[2], o[3] = p, o[4] = (double)w;
    }
    for (size_t i = tail; d > 0 && i < off[d]; i++) { /* the previous domain's tail */
      double a[3] = {0, 0, 0}, p = 0;
      int64_t w = 0;
      *missing += bh_walk(top.root, b[i].pos, b[i].id, 0.5, 0.025, a, &p, &w);
      double *o = taken + 5 * b[i].id;
      o[0] = a[0], o[1] = a[1], o[2] = a[2], o[3] = p, o[4] = (double)w;
    }
    for (int q = 0; q < D; q++) free(let[q]);
    bh_top_free(&top);
  }
  for (int d = 0; d < D; d++) bh_tree_free(&mem, &t[d]), free(br[d]), free(cells[d]);
  ck_assert_int_eq(bh_arena_live(&mem), 0);
  bh_arena_delete(&mem);
  free(b), free(scratch), free(keys), free(all);
}

/* The serial walk of every body, by ID, as play_domains writes it. */
static void play_serial(const bh_body *b, size_t n, double *out) {
  bh_mem mem = bh_arena_new();
  bh_tree t;
  char err[128];
  ck_assert_int_eq(bh_tree_build(&mem, b, n, NULL, &t, err, sizeof err), 0);
  for (size_t i = 0; i < n; i++) {
    double a[3] = {0, 0, 0}, p = 0;
    int64_t w = 0;
    bh_walk(t.root, b[i].pos, b[i].id, 0.5, 0.025, a, &p, &w);
    double *o = out + 5 * b[i].id;
    o[0] = a[0], o[1] = a[1], o[2] = a[2], o[3] = p, o[4] = (double)w;
  }
  bh_tree_free(&mem, &t);
  bh_arena_delete(&mem);
}

START_TEST(test_domains_with_lets_walk_as_the_serial_tree_bit_for_bit) {
  enum { N = 3000 };
  static const int Ds[] = {1, 2, 3, 5, 8, 13, 32};
  for (int clustered = 0; clustered < 2; clustered++) {
    bh_body *b = bodies(N, clustered, 21);
    double *ref = malloc(5 * N * sizeof *ref), *got = malloc(5 * N * sizeof *got);
    play_serial(b, N, ref);
    for (size_t k = 0; k < sizeof Ds / sizeof *Ds; k++)
      for (int reloc = 0; reloc < 2; reloc++) {
        int64_t missing;
        memset(got, 0, 5 * N * sizeof *got);
        play_domains(b, N, Ds[k], reloc, 0, false, got, NULL, &missing);
        ck_assert_int_eq(missing, 0);
        ck_assert_msg(memcmp(ref, got, 5 * N * sizeof *ref) == 0,
                      "%d domains (%s, %s LETs) differ from the serial walk", Ds[k],
                      clustered ? "clustered" : "Plummer", reloc ? "relocated" : "in place");
      }
    free(b), free(ref), free(got);
  }
}
END_TEST

/* The shared tails: the next domain, with LETs that cover the previous domain's tail as well as
 * its own bodies, walks that tail as its owner does, bit for bit; with LETs for its own box
 * only it meets cells they pruned (so the cover is what makes the walk exact). */
START_TEST(test_the_next_domain_walks_a_tail_as_its_owner_does_bit_for_bit) {
  enum { N = 3000 };
  static const int Ds[] = {2, 3, 8, 13};
  static const double shares[] = {0.15, 0.5};
  for (int clustered = 0; clustered < 2; clustered++) {
    bh_body *b = bodies(N, clustered, 23);
    double *ref = malloc(5 * N * sizeof *ref), *got = malloc(5 * N * sizeof *got),
           *taken = malloc(5 * N * sizeof *taken);
    play_serial(b, N, ref);
    int64_t uncovered = 0;
    for (size_t k = 0; k < sizeof Ds / sizeof *Ds; k++)
      for (size_t sh = 0; sh < 2 * 2; sh++) { /* each share, LETs relocated and in place */
        int64_t missing;
        for (size_t i = 0; i < 5 * N; i++) taken[i] = NAN;
        play_domains(b, N, Ds[k], (int)(sh & 1), shares[sh / 2], true, got, taken, &missing);
        ck_assert_int_eq(missing, 0);
        ck_assert(memcmp(ref, got, 5 * N * sizeof *ref) == 0);
        size_t walked = 0;
        for (size_t id = 0; id < N; id++) {
          if (isnan(taken[5 * id])) continue;
          walked++;
          ck_assert_msg(memcmp(ref + 5 * id, taken + 5 * id, 5 * sizeof *ref) == 0,
                        "body %zu of a tail (%d domains, share %g) differs", id, Ds[k],
                        shares[sh / 2]);
        }
        /* every domain but the last has a tail of about share of its bodies' weight */
        ck_assert_msg(walked >= (size_t)(shares[sh / 2] * N * (Ds[k] - 1) / Ds[k] / 2),
                      "%zu tail bodies walked (%d domains)", walked, Ds[k]);
        play_domains(b, N, Ds[k], (int)(sh & 1), shares[sh / 2], false, got, taken, &missing);
        uncovered += missing;
      }
    /* a domain's own box may hold the tail before it (two halves of a sphere), not always */
    ck_assert_msg(uncovered > 0, "tails walked without their cover met no pruned cell (%s)",
                  clustered ? "clustered" : "Plummer");
    free(b), free(ref), free(got), free(taken);
  }
}
END_TEST

START_TEST(test_domain_tails_hold_their_share_of_each_domains_weight) {
  enum { N = 20000, P = 16 };
  bh_body *b = bodies(N, 0, 5), *scratch = malloc(N * sizeof *b);
  uint64_t *keys = malloc(N * sizeof *keys), cut[P + 1], alone[P + 1], tail[P];
  double lo[3], hi[3];
  bh_box(b, N, lo, hi);
  bh_cube cube = bh_cube_of_box(lo, hi);
  ck_assert_int_eq(bh_sort_by_key(&cube, b, N, keys, scratch), 0);
  ck_assert_int_eq(bh_domain_cuts(keys, b, N, P, sum_none, NULL, alone), 0);
  int64_t total = 0, heaviest = 0;
  for (size_t i = 0; i < N; i++) {
    total += bh_weight(&b[i]);
    if (bh_weight(&b[i]) > heaviest) heaviest = bh_weight(&b[i]);
  }
  static const int shares[] = {154, 512, 1, 0};
  for (size_t k = 0; k < sizeof shares / sizeof *shares; k++) {
    ck_assert_int_eq(bh_domain_cuts_tails(keys, b, N, P, shares[k], sum_none, NULL, cut, tail), 0);
    ck_assert(memcmp(cut, alone, sizeof cut) == 0); /* the tails' targets move no domain cut */
    for (int d = 0; d < P; d++) {
      int64_t w = 0;
      for (size_t i = 0; i < N; i++)
        if (keys[i] >= tail[d] && keys[i] < cut[d + 1]) w += bh_weight(&b[i]);
      /* share / 1,024 of a P-th of the weight, to within a body or two (the cut's and tail's) */
      double want = (double)shares[k] / BH_SHARE_ONE * (double)total / P;
      ck_assert_msg(fabs((double)w - want) <= 2.0 * (double)heaviest,
                    "share %d, domain %d: tail %lld, want %.0f", shares[k], d, (long long)w, want);
      if (shares[k] == 0) ck_assert_int_eq(w, 0); /* no tail */
    }
  }
  free(b), free(scratch), free(keys);
}
END_TEST

START_TEST(test_keys_follow_the_tree_and_sort_in_morton_order) {
  enum { N = 2000 };
  bh_body *b = bodies(N, 0, 5), *s = malloc(N * sizeof *s);
  uint64_t *keys = malloc(N * sizeof *keys);
  double lo[3], hi[3];
  bh_box(b, N, lo, hi);
  bh_cube c = bh_cube_of_box(lo, hi);
  ck_assert_int_eq(bh_sort_by_key(&c, b, N, keys, s), 0);
  for (size_t i = 1; i < N; i++) ck_assert(keys[i - 1] <= keys[i]);
  for (size_t i = 0; i < N; i++) {
    ck_assert(keys[i] < BH_KEY_END);
    ck_assert(keys[i] == bh_key(&c, b[i].pos));
    /* the first octant is the side of the centre the body lies on */
    int o = (int)(keys[i] >> 3 * (BH_KEY_LEVELS - 1));
    for (int d = 0; d < 3; d++) ck_assert(((o >> d) & 1) == (b[i].pos[d] >= c.center[d]));
  }
  free(b), free(s), free(keys);
}
END_TEST

/* ---- a hybrid worker's team (bh_team.c) and what it shares: the sort and the tree ---- */

typedef struct team_marks {
  int ran[8], sizes[8];
} team_marks;

static void mark(void *ctx, int t, int T) {
  team_marks *m = ctx;
  m->ran[t]++;
  m->sizes[t] = T;
}

START_TEST(test_a_team_runs_each_function_once_on_every_thread) {
  ck_assert_ptr_null(bh_team_new(1)); /* one thread: no team, everything serial */
  ck_assert_int_eq(bh_team_size(NULL), 1);
  team_marks m = {{0}, {0}};
  bh_team_run(NULL, mark, &m);
  ck_assert_int_eq(m.ran[0], 1);
  ck_assert_int_eq(m.sizes[0], 1);
  bh_team *tm = bh_team_new(5);
  ck_assert_ptr_nonnull(tm);
  ck_assert_int_eq(bh_team_size(tm), 5);
  for (int r = 0; r < 100; r++) bh_team_run(tm, mark, &m); /* back to back */
  ck_assert_int_eq(m.ran[0], 101);
  for (int t = 1; t < 5; t++) ck_assert_int_eq(m.ran[t], 100);
  for (int t = 0; t < 5; t++) ck_assert_int_eq(m.sizes[t], 5);
  ck_assert_int_eq(m.ran[5], 0);
  bh_team_free(tm);
  size_t lo, hi, next = 0; /* shares cover [0, n) in order, without gaps */
  for (int t = 0; t < 7; t++) {
    bh_share(1000, t, 7, &lo, &hi);
    ck_assert_uint_eq(lo, next);
    ck_assert(hi - lo == 142 || hi - lo == 143);
    next = hi;
  }
  ck_assert_uint_eq(next, 1000);
}
END_TEST

/* bh_keys gives bh_key's keys, for every count of bodies left past the lanes of four. */
START_TEST(test_keys_side_by_side_are_the_keys_one_at_a_time) {
  enum { N = 1003 };
  bh_body *b = shuffled(N, 5);
  double lo[3], hi[3];
  bh_box(b, N, lo, hi);
  bh_cube c = bh_cube_of_box(lo, hi);
  uint64_t *k = malloc((N + 1) * sizeof *k);
  for (size_t n = 0; n <= 9; n++) {
    k[n] = 0xfeed; /* not written past n */
    bh_keys(&c, b, n, k);
    for (size_t i = 0; i < n; i++) ck_assert_uint_eq(k[i], bh_key(&c, b[i].pos));
    ck_assert_uint_eq(k[n], 0xfeed);
  }
  bh_keys(&c, b + 1, N - 1, k); /* lanes from an odd start, 2 left over */
  for (size_t i = 0; i < N - 1; i++) ck_assert_uint_eq(k[i], bh_key(&c, b[i + 1].pos));
  free(k), free(b);
}
END_TEST

/* A sort's case: n shuffled bodies a, room for a copy b and for scratch s, two key arrays, the
 * cube of the bodies' box and a team of T threads. */
typedef struct sort_case {
  size_t n;
  bh_body *a, *b, *s;
  uint64_t *ka, *kb;
  bh_cube c;
  bh_team *tm;
} sort_case;

static sort_case sort_case_new(size_t n, uint64_t seed, int T) {
  sort_case x = {.n = n, .a = shuffled(n, seed), .b = malloc(n * sizeof *x.b),
                 .s = malloc(n * sizeof *x.s), .ka = malloc(n * sizeof *x.ka),
                 .kb = malloc(n * sizeof *x.kb), .tm = bh_team_new(T)};
  ck_assert(x.b && x.s && x.ka && x.kb);
  ck_assert_ptr_nonnull(x.tm);
  double lo[3], hi[3];
  bh_box(x.a, n, lo, hi);
  x.c = bh_cube_of_box(lo, hi);
  return x;
}

static void sort_case_free(sort_case *x) {
  bh_team_free(x->tm);
  free(x->a), free(x->b), free(x->s), free(x->ka), free(x->kb);
}

/* The team sorts b (keys over garbage) into a's order and keys, a sorted by the serial sort. */
static void team_sort_is_serial_sort(sort_case *x) {
  memset(x->kb, 0xab, x->n * sizeof *x->kb);
  ck_assert_int_eq(bh_sort_by_key_team(&x->c, x->b, x->n, x->kb, x->s, x->tm, NULL), 0);
  ck_assert(memcmp(x->ka, x->kb, x->n * sizeof *x->ka) == 0);
  ck_assert(memcmp(x->a, x->b, x->n * sizeof *x->a) == 0); /* the same bodies in the same places */
}

START_TEST(test_the_team_sort_gives_the_serial_order) {
  sort_case x = sort_case_new(50000, 11, 3);
  memcpy(x.b, x.a, x.n * sizeof *x.a);
  ck_assert_int_eq(bh_sort_by_key(&x.c, x.a, x.n, x.ka, x.s), 0);
  team_sort_is_serial_sort(&x);
  sort_case_free(&x);
}
END_TEST

/* Sorted bodies stay where they are and get their keys; one pair out of order inside a
 * thread's part, and two sorted runs, each as long as two of the 4 threads' parts (so every part
 * is in order, and only the middle boundary is not), are sorted as the serial sort sorts them. */
START_TEST(test_the_team_sort_of_sorted_bodies_and_of_two_sorted_runs) {
  enum { N = 40000 };
  sort_case x = sort_case_new(N, 21, 4);
  ck_assert_int_eq(bh_sort_by_key(&x.c, x.a, N, x.ka, x.s), 0);
  memcpy(x.b, x.a, N * sizeof *x.a);
  team_sort_is_serial_sort(&x);
  /* in order but for one pair inside a thread's part */
  memcpy(x.b, x.a, N * sizeof *x.a);
  bh_body t = x.b[5000];
  x.b[5000] = x.b[5001], x.b[5001] = t;
  team_sort_is_serial_sort(&x);
  /* the even bodies' run, then the odd ones' */
  for (size_t i = 0; i < N / 2; i++) x.b[i] = x.a[2 * i], x.b[N / 2 + i] = x.a[2 * i + 1];
  size_t p0, p1;
  bh_share(N, 1, 4, &p0, &p1);
  ck_assert_uint_eq(p1, N / 2); /* the runs meet at a boundary of the threads' parts */
  team_sort_is_serial_sort(&x);
  sort_case_free(&x);
}
END_TEST

/* A kept block serves sorts of changing sizes (up, then down), and bodies that moved a little
 * since they were sorted (each bucket mostly in order: its insertion path) or were shuffled
 * (the buckets of the dense core far out of order: the merges) come out as the serial sort
 * puts them, on a team and on the calling thread alone (a kept bh_block). */
START_TEST(test_the_sorts_with_a_kept_block_of_moved_and_shuffled_bodies) {
  enum { N = 60000 };
  sort_case x = sort_case_new(N, 31, 3);
  bh_block keep = {0};
  const size_t sizes[] = {N / 2, N, N / 3};
  for (int moved = 0; moved <= 1; moved++)
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
      size_t n = sizes[k];
      memcpy(x.b, x.a, n * sizeof *x.a);
      if (moved) { /* sorted, then a small drift of every body */
        ck_assert_int_eq(bh_sort_by_key(&x.c, x.b, n, x.kb, x.s), 0);
        for (size_t i = 0; i < n; i++)
          for (int d = 0; d < 3; d++) x.b[i].pos[d] += 0.025 * x.b[i].vel[d]; /* (a step's drift) */
      }
      bh_body *input = malloc(n * sizeof *input), *want = malloc(n * sizeof *want),
              *in = malloc(n * sizeof *in);
      ck_assert(input && want && in);
      memcpy(input, x.b, n * sizeof *input);
      memcpy(want, input, n * sizeof *want);
      ck_assert_int_eq(bh_sort_by_key(&x.c, want, n, x.ka, x.s), 0);
      for (int team = 0; team <= 1; team++) {
        memcpy(in, input, n * sizeof *in);
        memset(x.kb, 0xab, n * sizeof *x.kb);
        ck_assert_int_eq(bh_sort_by_key_team(&x.c, in, n, x.kb, x.s, team ? x.tm : NULL, &keep),
                         0);
        ck_assert(memcmp(x.ka, x.kb, n * sizeof *x.ka) == 0);
        ck_assert(memcmp(want, in, n * sizeof *in) == 0);
      }
      free(input), free(in);
      free(want);
    }
  ck_assert_uint_ge(keep.cap, 2 * (size_t)N * 16); /* grown to the largest sort's pairs */
  bh_block_free(&keep);
  ck_assert_ptr_null(keep.mem);
  sort_case_free(&x);
}
END_TEST

/* The sort without a copy back: the bodies end in the buffer they were sorted into, whose
 * pointer the two swap (on a team and alone); bodies in order already stay where they are. */
START_TEST(test_the_sort_that_swaps_its_buffers) {
  enum { N = 30000 };
  sort_case x = sort_case_new(N, 41, 2);
  memcpy(x.b, x.a, N * sizeof *x.a);
  ck_assert_int_eq(bh_sort_by_key(&x.c, x.a, N, x.ka, x.s), 0); /* a: the order wanted */
  bh_body *other = malloc(N * sizeof *other);
  ck_assert_ptr_nonnull(other);
  for (int team = 0; team <= 1; team++) {
    bh_body *in = malloc(N * sizeof *in), *scratch = other, *was_in;
    ck_assert_ptr_nonnull(in);
    memcpy(in, x.b, N * sizeof *in); /* shuffled */
    was_in = in;
    ck_assert_int_eq(bh_sort_by_key_swap(&x.c, &in, &scratch, N, x.kb, team ? x.tm : NULL, NULL),
                     0);
    ck_assert_ptr_eq(in, other);
    ck_assert_ptr_eq(scratch, was_in);
    ck_assert(memcmp(in, x.a, N * sizeof *in) == 0);
    ck_assert(memcmp(x.ka, x.kb, N * sizeof *x.ka) == 0);
    if (team) { /* sorted now: the team finds them in order and moves nothing */
      memset(x.kb, 0xab, N * sizeof *x.kb);
      ck_assert_int_eq(bh_sort_by_key_swap(&x.c, &in, &scratch, N, x.kb, x.tm, NULL), 0);
      ck_assert_ptr_eq(in, other);
      ck_assert(memcmp(in, x.a, N * sizeof *in) == 0);
      ck_assert(memcmp(x.ka, x.kb, N * sizeof *x.ka) == 0);
    }
    free(scratch);
    other = in; /* (the buffer the bodies now hold is the next round's scratch) */
  }
  free(other);
  sort_case_free(&x);
}
END_TEST

/* The runs of in[0..n) dealt by run_of (each run then sorted by key alone, as a sender sorts),
 * one after another into b with their keys in k and their bounds in at; the number of runs. */
static int runs_dealt(const sort_case *x, const bh_body *in, size_t n, int nruns,
                      int (*run_of)(size_t i, int nruns), bh_body *b, uint64_t *k, size_t *at) {
  size_t o = 0;
  at[0] = 0;
  for (int r = 0; r < nruns; r++) {
    size_t a = o;
    for (size_t i = 0; i < n; i++)
      if (run_of(i, nruns) == r) b[o++] = in[i];
    ck_assert_int_eq(bh_sort_by_key(&x->c, b + a, o - a, k + a, x->s), 0);
    at[r + 1] = o;
  }
  ck_assert_uint_eq(o, n);
  return nruns;
}

static int dealt_evenly(size_t i, int nruns) { return (int)((i * 7919) % (size_t)nruns); }
/* most bodies stay (run 1 of 4, as a worker's own), a few come from two peers, one run empty */
static int dealt_mostly_one(size_t i, int nruns) {
  (void)nruns;
  return i % 50 == 0 ? 0 : i % 50 == 1 ? 3 : 1;
}

/* Merged runs (even ones, a dominant one among an empty and small ones, and runs that share
 * bodies of equal keys) come out as the serial sort of the runs one after another puts them,
 * keys and all, on a team and alone; a run out of order is reported. */
START_TEST(test_merged_runs_are_the_sort_of_the_runs_one_after_another) {
  enum { N = 40000, RUNS = 4 };
  sort_case x = sort_case_new(N, 51, 3);
  bh_body *in = malloc(N * sizeof *in), *want = malloc(N * sizeof *want),
          *out = malloc(N * sizeof *out);
  uint64_t *k = malloc(N * sizeof *k), *ko = malloc(N * sizeof *ko);
  ck_assert(in && want && out && k && ko);
  size_t at[RUNS + 1];
  int (*const deal[])(size_t, int) = {dealt_evenly, dealt_mostly_one, dealt_evenly};
  for (int c = 0; c < 3; c++) {
    memcpy(in, x.a, N * sizeof *in);
    if (c == 2) /* every fourth body twice (another ID): equal keys in other runs */
      for (size_t i = 0; i + 4 <= N; i += 4) in[i + 1] = in[i], in[i + 1].id = -(int64_t)i - 1;
    int nruns = runs_dealt(&x, in, N, RUNS, deal[c], x.b, k, at);
    if (c == 1) ck_assert_uint_eq(at[3] - at[2], 0);
    memcpy(want, x.b, N * sizeof *want);
    ck_assert_int_eq(bh_sort_by_key(&x.c, want, N, x.ka, x.s), 0);
    for (int team = 0; team <= 1; team++) {
      memset(out, 0, N * sizeof *out);
      memset(ko, 0xab, N * sizeof *ko);
      ck_assert_int_eq(bh_merge_runs_team(x.b, k, at, nruns, out, ko, team ? x.tm : NULL), 0);
      ck_assert(memcmp(ko, x.ka, N * sizeof *ko) == 0);
      ck_assert(memcmp(out, want, N * sizeof *out) == 0);
    }
  }
  /* runs that follow each other in key order: left as they are (2), out untouched */
  ck_assert_int_eq(bh_sort_by_key(&x.c, x.b, N, k, x.s), 0);
  memset(out, 0, N * sizeof *out);
  bh_body *before = malloc(N * sizeof *before);
  ck_assert_ptr_nonnull(before);
  memcpy(before, x.b, N * sizeof *before);
  for (int team = 0; team <= 1; team++) {
    ck_assert_int_eq(bh_merge_runs_team(x.b, k, at, RUNS, out, ko, team ? x.tm : NULL), 2);
    ck_assert(memcmp(x.b, before, N * sizeof *before) == 0);
    for (size_t i = 0; i < N * sizeof *out; i++) ck_assert(((unsigned char *)out)[i] == 0);
  }
  free(before);
  /* run 2 out of order (a pair of unequal keys swapped): reported (1), on a team and alone */
  size_t i = at[2] + 10;
  while (k[i] == k[i + 1]) i++;
  ck_assert_uint_lt(i + 1, at[3]);
  bh_body t = x.b[i];
  x.b[i] = x.b[i + 1], x.b[i + 1] = t;
  uint64_t tk = k[i];
  k[i] = k[i + 1], k[i + 1] = tk;
  ck_assert_int_eq(bh_merge_runs_team(x.b, k, at, RUNS, out, ko, x.tm), 1);
  ck_assert_int_eq(bh_merge_runs_team(x.b, k, at, RUNS, out, ko, NULL), 1);
  free(in), free(want), free(out), free(k), free(ko);
  sort_case_free(&x);
}
END_TEST

/* Two trees with the same cells, pointer structure aside: same moments, sizes, IDs and
 * children, recursively. */
static void same_cells(const bh_cell *x, const bh_cell *y) {
  ck_assert(memcmp(x->com, y->com, sizeof x->com) == 0);
  ck_assert(x->mass == y->mass && x->size == y->size && x->id == y->id);
  for (int o = 0; o < 8; o++) {
    ck_assert((x->child[o] == NULL) == (y->child[o] == NULL));
    if (x->child[o]) same_cells(x->child[o], y->child[o]);
  }
}

/* n shuffled Plummer bodies (with `coincident`, the last one put on the 8th's place) sorted by
 * key in the cube of their box: the bodies, their keys (*keys) and the cube (*c). */
static bh_body *sorted_bodies(size_t n, uint64_t seed, int coincident, bh_cube *c,
                              uint64_t **keys) {
  bh_body *b = shuffled(n, seed), *s = malloc(n * sizeof *s);
  if (coincident) memcpy(b[n - 1].pos, b[7].pos, sizeof b[7].pos);
  *keys = malloc(n * sizeof **keys);
  double lo[3], hi[3];
  bh_box(b, n, lo, hi);
  *c = bh_cube_of_box(lo, hi);
  ck_assert_int_eq(bh_sort_by_key(c, b, n, *keys, s), 0);
  free(s);
  return b;
}

/* The cells of each level lie in breadth-first order in their level's block, as the serial
 * build puts them (the arena gives each level one block, cells 128 bytes apart). */
static void levels_in_breadth_first_order(const bh_cell *root) {
  enum { QCAP = 1 << 18 };
  const bh_cell **q = malloc(QCAP * sizeof *q);
  int *depth = malloc(QCAP * sizeof *depth);
  const bh_cell *last[BH_MAX_LEVELS] = {NULL};
  size_t head = 0, tail = 0;
  q[tail] = root, depth[tail++] = 0;
  while (head < tail) {
    const bh_cell *c = q[head];
    int d = depth[head++];
    if (last[d]) ck_assert((const char *)c - (const char *)last[d] == 128);
    last[d] = c;
    for (int o = 0; o < 8; o++)
      if (c->child[o]) {
        ck_assert(tail < QCAP);
        q[tail] = c->child[o], depth[tail++] = d + 1;
      }
  }
  free(q), free(depth);
}

START_TEST(test_a_team_builds_the_serial_tree_cell_for_cell) {
  /* many subtrees and team-sized levels; 47 subtrees (limit 512) and a team-sized copy; one
   * range under the limit (no subtrees); a root leaf */
  static const size_t sizes[] = {40000, 3000, 300, 1};
  bh_tree_keep keep = {0}; /* one for every size: made once, then reused by smaller trees */
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
    size_t n = sizes[si];
    bh_cube c;
    uint64_t *k;
    bh_body *b = sorted_bodies(n, 12, 0, &c, &k);
    bh_team *tm = bh_team_new(4);
    bh_mem mem = bh_arena_new();
    bh_tree t1, t2, t3;
    char err[160];
    ck_assert_int_eq(bh_tree_build(&mem, b, n, &c, &t1, err, sizeof err), 0);
    ck_assert_int_eq(bh_tree_build_team(&mem, b, k, n, &c, &t2, err, sizeof err, tm, NULL), 0);
    void *kept = keep.nodes.mem;
    ck_assert_int_eq(bh_tree_build_team(&mem, b, k, n, &c, &t3, err, sizeof err, tm, &keep), 0);
    if (si > 0) ck_assert_ptr_eq(keep.nodes.mem, kept); /* the first size's memory, reused */
    if (n >= 3000) ck_assert_ptr_nonnull(keep.nodes.mem); /* (300 and 1 join no subtrees) */
    ck_assert_int_eq(t1.nlevels, t2.nlevels);
    ck_assert_uint_eq(t1.ncells, t2.ncells);
    ck_assert_uint_eq(t1.ncells, t3.ncells);
    same_cells(t1.root, t2.root);
    same_cells(t1.root, t3.root);
    levels_in_breadth_first_order(t1.root);
    levels_in_breadth_first_order(t2.root);
    levels_in_breadth_first_order(t3.root);
    ck_assert_int_eq(bh_tree_free(&mem, &t1), 0);
    ck_assert_int_eq(bh_tree_free(&mem, &t2), 0);
    ck_assert_int_eq(bh_tree_free(&mem, &t3), 0);
    ck_assert_int_eq(bh_arena_live(&mem), 0);
    bh_arena_delete(&mem);
    bh_team_free(tm);
    free(b), free(k);
  }
  bh_tree_keep_free(&keep);
  ck_assert_ptr_null(keep.nodes.mem);
}
END_TEST

/* An arena that threads may allocate from at once (a lock around its balloc), counting the
 * threads that allocated, recording every balloc's region and count, and failing the
 * fail_at-th balloc (0: none) or, with fail_helper, the first one from another thread than
 * `main`. */
#define SA_CALLS 4096
typedef struct shared_arena {
  bh_mem arena;
  pthread_mutex_t mu;
  pthread_t seen[8], main;
  int nseen, calls, fail_at;
  bool fail_helper, helper_failed;
  uint32_t region[SA_CALLS];
  int n[SA_CALLS];
} shared_arena;

static uint32_t sa_region(void *ctx, uint32_t parent) {
  shared_arena *a = ctx;
  return a->arena.region(a->arena.ctx, parent);
}

static int sa_balloc(void *ctx, uint32_t region, size_t size, int n, void **out) {
  shared_arena *a = ctx;
  pthread_mutex_lock(&a->mu);
  int k = 0, fail = ++a->calls == a->fail_at;
  if (a->fail_helper && !a->helper_failed && !pthread_equal(a->main, pthread_self()))
    fail = a->helper_failed = true;
  if (a->calls <= SA_CALLS) a->region[a->calls - 1] = region, a->n[a->calls - 1] = n;
  while (k < a->nseen && !pthread_equal(a->seen[k], pthread_self())) k++;
  if (k == a->nseen && k < 8) a->seen[a->nseen++] = pthread_self();
  int rc = fail ? -1 : a->arena.balloc(a->arena.ctx, region, size, n, out);
  pthread_mutex_unlock(&a->mu);
  return rc;
}

static int sa_rfree(void *ctx, uint32_t region) {
  shared_arena *a = ctx;
  return a->arena.rfree(a->arena.ctx, region);
}

/* sa's recorded ballocs of one build: as many cells as the tree's, and every call of at least
 * 1,024 cells but the one of a level that is not split. */
static void shares_cover_the_tree(const shared_arena *sa, const bh_tree *t) {
  ck_assert_int_le(sa->calls, SA_CALLS);
  size_t cells = 0;
  for (int i = 0; i < sa->calls; i++) {
    cells += (size_t)sa->n[i];
    int same_region = 0;
    for (int j = 0; j < sa->calls; j++) same_region += sa->region[j] == sa->region[i];
    ck_assert_msg(sa->n[i] >= 1024 || same_region == 1, "a share of %d cells", sa->n[i]);
  }
  ck_assert_uint_eq(cells, t->ncells);
}

/* Where the memory lets any thread allocate (bh_mem's balloc_any_thread), the team allocates a
 * level's cells in shares, a thread each: the cells are still the serial tree's, every cell is
 * allocated once, and a share that fails (the main thread's or a helper's) fails the build with
 * nothing left held. */
START_TEST(test_a_team_allocates_the_cells_in_shares_where_the_memory_allows) {
  enum { N = 40000 };
  bh_cube c;
  uint64_t *k;
  bh_body *b = sorted_bodies(N, 12, 0, &c, &k);
  bh_team *tm = bh_team_new(4);
  shared_arena sa = {.arena = bh_arena_new(), .main = pthread_self()};
  pthread_mutex_init(&sa.mu, NULL);
  bh_mem mem = {sa_region, sa_balloc, sa_rfree, &sa, true};
  bh_tree t1, t2;
  char err[160];
  ck_assert_int_eq(bh_tree_build(&sa.arena, b, N, &c, &t1, err, sizeof err), 0);
  ck_assert_int_eq(bh_tree_build_team(&mem, b, k, N, &c, &t2, err, sizeof err, tm, NULL), 0);
  ck_assert_int_gt(sa.nseen, 1);           /* the team's threads allocated, not one alone */
  ck_assert_int_gt(sa.calls, t2.nlevels);  /* some level in several shares */
  ck_assert_uint_eq(t1.ncells, t2.ncells);
  same_cells(t1.root, t2.root);
  shares_cover_the_tree(&sa, &t2);
  ck_assert_int_eq(bh_tree_free(&mem, &t2), 0);
  for (int fail = 0; fail < 3; fail++) { /* the first share, a later one, a helper's first */
    sa.calls = 0, sa.fail_at = fail == 0 ? 1 : fail == 1 ? 12 : 0;
    sa.fail_helper = fail == 2, sa.helper_failed = false;
    ck_assert_int_eq(bh_tree_build_team(&mem, b, k, N, &c, &t2, err, sizeof err, tm, NULL), -1);
    ck_assert_msg(strstr(err, "allocating the tree's regions failed"), "%s", err);
    ck_assert_ptr_null(t2.root);
    ck_assert_int_eq(bh_arena_live(&sa.arena), t1.nlevels + 1); /* t1's alone */
    ck_assert(fail < 2 || sa.helper_failed);
  }
  ck_assert_int_eq(bh_tree_free(&sa.arena, &t1), 0);
  ck_assert_int_eq(bh_arena_live(&sa.arena), 0);
  bh_arena_delete(&sa.arena);
  pthread_mutex_destroy(&sa.mu);
  bh_team_free(tm);
  free(b), free(k);
}
END_TEST

START_TEST(test_coincident_bodies_are_a_clear_error_for_a_team_too) {
  enum { N = 20000 };
  bh_cube c;
  uint64_t *k;
  bh_body *b = sorted_bodies(N, 13, 1, &c, &k);
  bh_team *tm = bh_team_new(3);
  bh_mem mem = bh_arena_new();
  bh_tree t;
  char err[160] = "";
  bh_tree_keep keep = {0};
  ck_assert_int_eq(bh_tree_build_team(&mem, b, k, N, &c, &t, err, sizeof err, tm, NULL), -1);
  ck_assert_ptr_nonnull(strstr(err, "coincident"));
  err[0] = 0;
  ck_assert_int_eq(bh_tree_build_team(&mem, b, k, N, &c, &t, err, sizeof err, tm, &keep), -1);
  ck_assert_ptr_nonnull(strstr(err, "coincident"));
  bh_tree_keep_free(&keep);
  ck_assert_int_eq(bh_arena_live(&mem), 0);
  bh_arena_delete(&mem);
  bh_team_free(tm);
  free(b), free(k);
}
END_TEST

/* Two LETs of the same bytes, child pointers read as offsets into their own buffers. */
static void same_let(const void *x, const void *y, size_t bytes, size_t nb, bool relocatable) {
  if (relocatable) {
    ck_assert(memcmp(x, y, bytes) == 0);
    return;
  }
  size_t head = bh_let_size(nb, 0), n = (bytes - head) / sizeof(bh_cell);
  ck_assert(memcmp(x, y, head) == 0);
  const bh_cell *cx = (const bh_cell *)((const char *)x + head);
  const bh_cell *cy = (const bh_cell *)((const char *)y + head);
  for (size_t i = 0; i < n; i++) {
    ck_assert(memcmp(&cx[i], &cy[i], offsetof(bh_cell, child)) == 0);
    for (int o = 0; o < 8; o++) {
      ck_assert((cx[i].child[o] == NULL) == (cy[i].child[o] == NULL));
      if (cx[i].child[o]) ck_assert(cx[i].child[o] - cx == cy[i].child[o] - cy);
    }
  }
}

START_TEST(test_a_let_filled_in_parts_has_the_serial_bytes) {
  enum { N = 8000 };
  bh_cube c;
  uint64_t *k;
  bh_body *b = sorted_bodies(N, 14, 0, &c, &k);
  size_t m = N / 2; /* domain 0: the first half of the keys */
  uint64_t cut = k[m];
  while (m > 0 && k[m - 1] == cut) m--;
  bh_mem mem = bh_arena_new();
  bh_tree t;
  char err[160];
  ck_assert_int_eq(bh_tree_build(&mem, b, m, &c, &t, err, sizeof err), 0);
  bh_branch *br;
  const bh_cell **cells;
  long nb = bh_branches(&t, &c, 0, cut, 0, &br, &cells);
  ck_assert(nb > 1);
  double lo[3], hi[3]; /* the peer: the other half */
  bh_box(b + m, N - m, lo, hi);
  for (int reloc = 0; reloc < 2; reloc++) {
    size_t bytes = bh_let_bytes(cells, (size_t)nb, lo, hi, 0.5), *at = malloc(nb * sizeof *at);
    char *serial = malloc(bytes), *parts = malloc(bytes);
    bh_let_fill(serial, cells, (size_t)nb, lo, hi, 0.5, reloc);
    size_t total = 0;
    for (long i = 0; i < nb; i++) at[i] = total, total += bh_let_branch_cells(cells[i], lo, hi, 0.5);
    ck_assert_uint_eq(bh_let_size((size_t)nb, total), bytes);
    for (long i = nb; i-- > 0;) /* the parts in another order, as threads may write them */
      ck_assert_uint_eq(bh_let_fill_branch(parts, (size_t)nb, (size_t)i, at[i], cells[i], lo, hi,
                                           0.5, reloc),
                        bh_let_branch_cells(cells[i], lo, hi, 0.5));
    bh_let_head_set(parts, (size_t)nb, total);
    same_let(serial, parts, bytes, (size_t)nb, reloc);
    free(serial), free(parts), free(at);
  }
  free(br), free(cells);
  ck_assert_int_eq(bh_tree_free(&mem, &t), 0);
  bh_arena_delete(&mem);
  free(b), free(k);
}
END_TEST

START_TEST(test_domain_cuts_give_every_domain_its_share_of_the_weight) {
  enum { N = 5000 };
  bh_body *b = bodies(N, 1, 9), *s = malloc(N * sizeof *s);
  uint64_t *keys = malloc(N * sizeof *keys), cut[17];
  double lo[3], hi[3];
  bh_box(b, N, lo, hi);
  bh_cube c = bh_cube_of_box(lo, hi);
  ck_assert_int_eq(bh_sort_by_key(&c, b, N, keys, s), 0);
  int64_t total = 0, heaviest = 0, w[16] = {0};
  for (size_t i = 0; i < N; i++) {
    total += bh_weight(&b[i]);
    if (bh_weight(&b[i]) > heaviest) heaviest = bh_weight(&b[i]);
  }
  ck_assert_int_eq(bh_domain_cuts(keys, b, N, 16, sum_none, NULL, cut), 0);
  ck_assert(cut[0] == 0 && cut[16] == BH_KEY_END);
  for (int d = 1; d <= 16; d++) ck_assert(cut[d - 1] <= cut[d]);
  for (size_t i = 0; i < N; i++) w[bh_domain_of(cut, 16, keys[i])] += bh_weight(&b[i]);
  for (int d = 0; d < 16; d++) /* a 16th of the weight, to within one body */
    ck_assert_msg(llabs(16 * w[d] - total) <= 16 * heaviest, "domain %d: %lld of %lld", d,
                  (long long)w[d], (long long)total);
  free(b), free(s), free(keys);
}
END_TEST

START_TEST(test_a_walk_that_needs_a_pruned_cell_counts_it) {
  enum { N = 2000 };
  bh_body *b = bodies(N, 0, 3);
  bh_mem mem = bh_arena_new();
  bh_tree t;
  char err[128];
  ck_assert_int_eq(bh_tree_build(&mem, b, N, NULL, &t, err, sizeof err), 0);
  const bh_cell *root = t.root;
  double far_lo[3] = {50, 50, 50}, far_hi[3] = {51, 51, 51}; /* a box far away: little opens */
  size_t bytes = bh_let_bytes(&root, 1, far_lo, far_hi, 0.5);
  void *let = malloc(bytes);
  bh_let_fill(let, &root, 1, far_lo, far_hi, 0.5, false);
  ck_assert(bytes < sizeof(bh_let_head) + 8 + t.ncells * sizeof(bh_cell) / 10);
  double a[3] = {0, 0, 0}, p = 0, in[3] = {50.5, 50.5, 50.5};
  int64_t w = 0;
  ck_assert_int_eq(bh_walk(bh_let_root(let, 0), in, -1, 0.5, 0.025, a, &p, &w), 0);
  ck_assert(bh_walk(bh_let_root(let, 0), b[0].pos, b[0].id, 0.5, 0.025, a, &p, &w) > 0);
  free(let);
  bh_tree_free(&mem, &t);
  bh_arena_delete(&mem);
  free(b);
}
END_TEST

/* ---- lanes of chunks (bh_pool.h) ---- */

/* The lanes cut the chunks into consecutive runs, as even as can be, that cover every chunk
 * once; each hands out its run in order, then nothing; the richest is the one with most left. */
START_TEST(test_lanes_hand_out_consecutive_runs_that_cover_every_chunk_once) {
  static const uint64_t counts[] = {0, 1, 5, 64, 1001};
  static const int Ls[] = {1, 3, 8, 16};
  for (size_t a = 0; a < sizeof counts / sizeof *counts; a++)
    for (size_t b = 0; b < sizeof Ls / sizeof *Ls; b++) {
      uint64_t C = counts[a], most;
      int L = Ls[b];
      bh_lane *lane = aligned_alloc(64, (size_t)L * sizeof *lane);
      bh_lanes_init(lane, L, C);
      uint64_t expect = 0, small = C / (uint64_t)L;
      for (int l = 0; l < L; l++) {
        uint64_t left = bh_lane_left(&lane[l]);
        ck_assert_msg(left == small || left == small + 1, "lane %d of %d holds %" PRIu64
                      " of %" PRIu64 " chunks", l, L, left, C);
        for (uint64_t k = 0; k < left; k++) ck_assert_uint_eq(bh_lane_claim(&lane[l]), expect++);
        ck_assert_uint_eq(bh_lane_claim(&lane[l]), BH_LANE_NONE);
        ck_assert_uint_eq(bh_lane_left(&lane[l]), 0);
      }
      ck_assert_uint_eq(expect, C);
      ck_assert_int_eq(bh_lanes_richest(lane, L, &most), -1);
      free(lane);
    }
  bh_lane lane[3];
  bh_lanes_init(lane, 3, 30);
  for (int k = 0; k < 4; k++) bh_lane_claim(&lane[2]);
  for (int k = 0; k < 2; k++) bh_lane_claim(&lane[0]);
  uint64_t most;
  ck_assert_int_eq(bh_lanes_richest(lane, 3, &most), 1);
  ck_assert_uint_eq(most, 10);
}
END_TEST

/* Threads draw as the hybrid's walks do (bh_lanes_draw): their own lane, then the lane with the
 * most left. */
enum { LANE_T = 4, LANE_C = 4000 };
typedef struct {
  bh_lane *lane;
  _Atomic int seen[LANE_C];
  uint64_t order[LANE_T][LANE_C]; /* each thread's chunks in the order it claimed them */
  size_t count[LANE_T];
} lane_play;
typedef struct {
  lane_play *pl;
  int t;
} lane_arg;

static void lane_record(void *ctx, uint64_t c) {
  lane_arg *a = ctx;
  a->pl->order[a->t][a->pl->count[a->t]++] = c;
  atomic_fetch_add(&a->pl->seen[c], 1);
}

static void *lane_drawer(void *p) {
  lane_arg *a = p;
  long n = bh_lanes_draw(a->pl->lane, LANE_T, a->t, lane_record, a);
  ck_assert_int_eq(n, (long)a->pl->count[a->t]);
  return NULL;
}

static lane_play *lane_play_new(void) {
  lane_play *pl = calloc(1, sizeof *pl);
  pl->lane = aligned_alloc(64, LANE_T * sizeof *pl->lane);
  bh_lanes_init(pl->lane, LANE_T, LANE_C);
  return pl;
}

/* Alone, thread 2 walks its lane in order, then the others' whole, richest first (ties: the
 * lowest): consecutive chunks one after another. */
START_TEST(test_a_thread_walks_its_lane_in_order_then_the_richest) {
  lane_play *pl = lane_play_new();
  lane_drawer(&(lane_arg){pl, 2});
  ck_assert_uint_eq(pl->count[2], LANE_C);
  static const int lanes_in_order[LANE_T] = {2, 0, 1, 3};
  for (size_t i = 0; i < LANE_C; i++) {
    uint64_t run = (uint64_t)lanes_in_order[i / (LANE_C / LANE_T)] * (LANE_C / LANE_T);
    ck_assert_uint_eq(pl->order[2][i], run + i % (LANE_C / LANE_T));
  }
  free(pl->lane);
  free(pl);
}
END_TEST

/* At once: every chunk claimed by exactly one thread, and each thread's chunks from one lane
 * come in order. */
START_TEST(test_threads_drawing_lanes_at_once_claim_every_chunk_once) {
  for (int round = 0; round < 5; round++) {
    lane_play *pl = lane_play_new();
    pthread_t th[LANE_T];
    lane_arg args[LANE_T];
    for (int t = 0; t < LANE_T; t++) {
      args[t] = (lane_arg){pl, t};
      ck_assert_int_eq(pthread_create(&th[t], NULL, lane_drawer, &args[t]), 0);
    }
    for (int t = 0; t < LANE_T; t++) pthread_join(th[t], NULL);
    for (int c = 0; c < LANE_C; c++) ck_assert_int_eq(atomic_load(&pl->seen[c]), 1);
    for (int t = 0; t < LANE_T; t++)
      for (size_t i = 1; i < pl->count[t]; i++) {
        uint64_t a = pl->order[t][i - 1], b = pl->order[t][i];
        ck_assert_msg(a / (LANE_C / LANE_T) != b / (LANE_C / LANE_T) || b > a,
                      "thread %d claimed chunk %" PRIu64 " after %" PRIu64 " of its lane", t, b, a);
      }
    free(pl->lane);
    free(pl);
  }
}
END_TEST

/* ---- the pooled walk (bh_pool.h): threads play the workers of one host ---- */

typedef struct pool_worker {
  bh_pool *mine, **pools;
  int P, me, threads; /* threads > 1: several draw at once, then the worker finishes */
  bh_body *b;
  bh_pool_mode mode;
  bh_pool_stats st, thread_st[4];
} pool_worker;

typedef struct pool_thread_arg {
  pool_worker *w;
  int t;
} pool_thread_arg;

static void *pool_draw_main(void *p) {
  pool_thread_arg *a = p;
  pool_worker *w = a->w;
  bh_pool_draw(w->mine, w->pools, w->P, w->me, a->t, w->mode, &w->thread_st[a->t]);
  return NULL;
}

static void *pool_worker_main(void *p) {
  pool_worker *w = p;
  if (w->threads <= 1) {
    bh_pool_walk(w->mine, w->pools, w->P, w->me, w->b, w->mode, &w->st);
    return NULL;
  }
  pthread_t th[4];
  pool_thread_arg args[4];
  for (int t = 0; t < w->threads; t++) {
    args[t] = (pool_thread_arg){w, t};
    ck_assert_int_eq(pthread_create(&th[t], NULL, pool_draw_main, &args[t]), 0);
  }
  for (int t = 0; t < w->threads; t++) {
    pthread_join(th[t], NULL);
    w->st.own += w->thread_st[t].own, w->st.taken += w->thread_st[t].taken;
    w->st.missing += w->thread_st[t].missing;
  }
  bh_pool_finish(w->mine, w->st.own, w->b, w->mode, &w->st);
  return NULL;
}

enum { POOL_ALL_AT_ONCE, POOL_LAZY_AT_ONCE, POOL_LAZY_LAST };

/* P workers over N bodies (worker q holds share[q] of them, in order), in `hosts` groups (worker
 * q on host q % hosts: it sees only the pools of its host), worker 0 with threads0 threads
 * drawing at once. Each lays its pool with a tree, a theta and an eps of its own (pool q's
 * tree: the first N - 40 q bodies), so a body walked from another worker's root or with its
 * parameters shows, and its result slots filled with garbage (a chunk nobody walked shows). They
 * walk all at once, worker 0 lazy or not (how), or worker 0 lazy after the others are done.
 * Every body's acc, pot and work must be its own pool's walk, bit for bit; every chunk claimed
 * once (own and taken chunks add up to all); every host's chunks walked on that host. */
static void play_pools(int P, const double *share, int hosts, int how, int threads0,
                       pool_worker *w) {
  enum { N = 4000 };
  bh_body *all = bodies(N, 0, 5);
  bh_mem mem = bh_arena_new();
  bh_tree t[8];
  char err[128];
  bh_pool **pools = calloc((size_t)P, sizeof *pools), **seen = calloc((size_t)(P * P), sizeof *seen);
  void **area = calloc((size_t)P, sizeof *area);
  size_t at = 0;
  long chunks = 0;
  for (int q = 0; q < P; q++) {
    ck_assert_int_eq(bh_tree_build(&mem, all, N - 40 * (size_t)q, NULL, &t[q], err, sizeof err), 0);
    size_t n = q == P - 1 ? N - at : (size_t)(share[q] * N);
    int lanes = q == 0 ? threads0 : 1; /* a lane a thread */
    ck_assert_int_eq(posix_memalign(&area[q], 64, bh_pool_bytes(n, lanes)), 0);
    pools[q] = bh_pool_lay(area[q], t[q].root, all + at, n, 0.3 + 0.1 * q, 0.02 + 0.002 * q, lanes);
    memset(pools[q]->result, 0xff, n * sizeof *pools[q]->result);
    w[q] = (pool_worker){.mine = pools[q], .pools = seen + q * P, .P = P, .me = q,
                         .threads = q == 0 ? threads0 : 1, .b = all + at, .mode = BH_POOL_EAGER};
    at += n;
    chunks += (long)pools[q]->chunks;
  }
  for (int q = 0; q < P; q++)
    for (int r = 0; r < P; r++) seen[q * P + r] = q % hosts == r % hosts ? pools[r] : NULL;
  pthread_t th[8];
  if (how != POOL_ALL_AT_ONCE) w[0].mode = BH_POOL_LAZY;
  for (int q = how == POOL_LAZY_LAST; q < P; q++)
    ck_assert_int_eq(pthread_create(&th[q], NULL, pool_worker_main, &w[q]), 0);
  for (int q = how == POOL_LAZY_LAST; q < P; q++) pthread_join(th[q], NULL);
  if (how == POOL_LAZY_LAST) pool_worker_main(&w[0]);
  long taken[8] = {0}, given[8] = {0}, claimed = 0;
  for (int q = 0; q < P; q++) {
    ck_assert_int_eq(w[q].st.missing, 0);
    taken[q % hosts] += w[q].st.taken, given[q % hosts] += w[q].st.given;
    claimed += w[q].st.own + w[q].st.taken;
    for (size_t i = 0; i < pools[q]->n; i++) {
      const bh_body *x = &w[q].b[i];
      double a[3] = {0, 0, 0}, pot = 0;
      int64_t work = 0;
      bh_walk(t[q].root, x->pos, x->id, 0.3 + 0.1 * q, 0.02 + 0.002 * q, a, &pot, &work);
      ck_assert_msg(memcmp(a, x->acc, sizeof a) == 0 && memcmp(&pot, &x->pot, sizeof pot) == 0 &&
                        work == x->work && x->cost > 0,
                    "worker %d's body %zu differs from its own walk", q, i);
    }
  }
  ck_assert_int_eq(claimed, chunks);
  for (int h = 0; h < hosts; h++) ck_assert_int_eq(taken[h], given[h]);
  for (int q = 0; q < P; q++) free(area[q]), bh_tree_free(&mem, &t[q]);
  free(area), free(pools), free(seen);
  bh_arena_delete(&mem);
  free(all);
}

START_TEST(test_the_others_walk_a_lazy_workers_pool_as_it_would_bit_for_bit) {
  static const double share[] = {0.4, 0.2, 0.2, 0.2};
  pool_worker w[4];
  for (int how = POOL_LAZY_AT_ONCE; how <= POOL_LAZY_LAST; how++) {
    play_pools(4, share, 1, how, 1, w);
    ck_assert_int_eq(w[0].st.own, 0);
    ck_assert_int_gt(w[0].st.given, 0);
  }
  ck_assert_int_eq(w[0].st.taken, 0); /* (last: every other pool was done before it came) */
}
END_TEST

START_TEST(test_workers_drawing_from_each_others_pools_at_once_walk_every_chunk_once) {
  static const double share[] = {0.6, 0.05, 0.1, 0.05, 0.1, 0.1};
  for (int round = 0; round < 3; round++) {
    pool_worker w[6];
    play_pools(6, share, 1, POOL_ALL_AT_ONCE, 1, w);
  }
}
END_TEST

/* A worker of several threads (a hybrid rank): they draw at once, then it finishes with their
 * chunks summed; lazy, the others walk all of its pool while its threads walk theirs. */
START_TEST(test_a_workers_threads_draw_together_and_it_finishes_once) {
  static const double share[] = {0.5, 0.1, 0.2, 0.2};
  for (int round = 0; round < 3; round++) {
    pool_worker w[4];
    play_pools(4, share, 1, POOL_ALL_AT_ONCE, 3, w);
    play_pools(4, share, 1, POOL_LAZY_AT_ONCE, 3, w);
    ck_assert_int_eq(w[0].st.own, 0);
  }
}
END_TEST

/* Workers on two hosts: each draws from its host's pools alone (a lazy worker 0 is walked by its
 * host's others; the other host's heavy worker by its own host). */
START_TEST(test_workers_draw_only_from_the_pools_of_their_host) {
  static const double share[] = {0.3, 0.3, 0.05, 0.1, 0.1, 0.15};
  pool_worker w[6];
  play_pools(6, share, 2, POOL_LAZY_LAST, 1, w);
  ck_assert_int_eq(w[0].st.own, 0);
  ck_assert_int_eq(w[2].st.taken + w[4].st.taken, w[0].st.given + w[2].st.given + w[4].st.given);
  for (int round = 0; round < 3; round++) play_pools(6, share, 2, POOL_ALL_AT_ONCE, 1, w);
}
END_TEST

/* The top tree copied for the pool: children among the copied cells point into the copy, the
 * others (branches, LETs) stay, and the copy walks as the original. */
START_TEST(test_a_copied_top_tree_points_into_itself_and_walks_as_the_original) {
  enum { N = 1500 };
  bh_body *b = bodies(N, 1, 9);
  bh_mem mem = bh_arena_new();
  bh_tree t;
  char err[128];
  ck_assert_int_eq(bh_tree_build(&mem, b, N, NULL, &t, err, sizeof err), 0);
  /* a top of two cells over the tree's root's children: cells[0] -> cells[1] -> the tree */
  bh_cell cells[2], copy[2];
  cells[1] = *t.root;
  cells[0] = *t.root;
  for (int k = 0; k < 8; k++) cells[0].child[k] = NULL;
  int first = -1;
  for (int k = 0; k < 8 && first < 0; k++)
    if (t.root->child[k]) first = k;
  cells[0].child[first] = &cells[1];
  for (int k = first + 1; k < 8; k++) cells[0].child[k] = t.root->child[k];
  for (int k = 0; k <= first; k++) cells[1].child[k] = t.root->child[k];
  for (int k = first + 1; k < 8; k++) cells[1].child[k] = NULL;
  const bh_cell *root = bh_pool_copy_top(cells, 2, &cells[0], copy);
  ck_assert_ptr_eq(root, &copy[0]);
  ck_assert_ptr_eq(copy[0].child[first], &copy[1]);
  ck_assert_ptr_eq(copy[1].child[first], t.root->child[first]);
  for (int i = 0; i < N; i += 37) {
    double a[3] = {0, 0, 0}, c[3] = {0, 0, 0}, p = 0, q = 0;
    int64_t w = 0, v = 0;
    bh_walk(&cells[0], b[i].pos, b[i].id, 0.5, 0.025, a, &p, &w);
    bh_walk(root, b[i].pos, b[i].id, 0.5, 0.025, c, &q, &v);
    ck_assert(memcmp(a, c, sizeof a) == 0 && p == q && w == v);
  }
  ck_assert_ptr_eq(bh_pool_copy_top(cells, 2, t.root, copy), t.root); /* a root outside stays */
  bh_tree_free(&mem, &t);
  bh_arena_delete(&mem);
  free(b);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("barnes");
  TCase *tc = tcase_create("physics");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_force_error_at_theta_half_is_below_the_stated_bound);
  tcase_add_test(tc, test_theta_zero_is_the_direct_sum);
  tcase_add_test(tc, test_tree_depends_only_on_the_set_of_bodies);
  tcase_add_test(tc, test_each_level_is_its_own_region_below_the_tree_region);
  tcase_add_test(tc, test_plummer_is_deterministic_centred_and_near_e_minus_a_quarter);
  tcase_add_test(tc, test_coincident_bodies_are_a_clear_error);
  tcase_add_test(tc, test_leapfrog_conserves_energy_over_twenty_steps);
  tcase_add_test(tc, test_domains_with_lets_walk_as_the_serial_tree_bit_for_bit);
  tcase_add_test(tc, test_the_next_domain_walks_a_tail_as_its_owner_does_bit_for_bit);
  tcase_add_test(tc, test_domain_tails_hold_their_share_of_each_domains_weight);
  tcase_add_test(tc, test_keys_follow_the_tree_and_sort_in_morton_order);
  tcase_add_test(tc, test_domain_cuts_give_every_domain_its_share_of_the_weight);
  tcase_add_test(tc, test_a_walk_that_needs_a_pruned_cell_counts_it);
  tcase_add_test(tc, test_a_team_runs_each_function_once_on_every_thread);
  tcase_add_test(tc, test_keys_side_by_side_are_the_keys_one_at_a_time);
  tcase_add_test(tc, test_the_team_sort_gives_the_serial_order);
  tcase_add_test(tc, test_the_team_sort_of_sorted_bodies_and_of_two_sorted_runs);
  tcase_add_test(tc, test_the_sorts_with_a_kept_block_of_moved_and_shuffled_bodies);
  tcase_add_test(tc, test_the_sort_that_swaps_its_buffers);
  tcase_add_test(tc, test_merged_runs_are_the_sort_of_the_runs_one_after_another);
  tcase_add_test(tc, test_a_team_builds_the_serial_tree_cell_for_cell);
  tcase_add_test(tc, test_a_team_allocates_the_cells_in_shares_where_the_memory_allows);
  tcase_add_test(tc, test_coincident_bodies_are_a_clear_error_for_a_team_too);
  tcase_add_test(tc, test_a_let_filled_in_parts_has_the_serial_bytes);
  tcase_add_test(tc, test_lanes_hand_out_consecutive_runs_that_cover_every_chunk_once);
  tcase_add_test(tc, test_a_thread_walks_its_lane_in_order_then_the_richest);
  tcase_add_test(tc, test_threads_drawing_lanes_at_once_claim_every_chunk_once);
  tcase_add_test(tc, test_the_others_walk_a_lazy_workers_pool_as_it_would_bit_for_bit);
  tcase_add_test(tc, test_workers_drawing_from_each_others_pools_at_once_walk_every_chunk_once);
  tcase_add_test(tc, test_workers_draw_only_from_the_pools_of_their_host);
  tcase_add_test(tc, test_a_workers_threads_draw_together_and_it_finishes_once);
  tcase_add_test(tc, test_a_copied_top_tree_points_into_itself_and_walks_as_the_original);
  suite_add_tcase(s, tc);
  return s;
}

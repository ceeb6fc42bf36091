/* bh.h: the physics of apps/barnes (Myrmics section 6.3, after Dubinski 1996), shared by the
 * parallel program on antheap regions (barnes.c) and the serial one (barnes_serial.c).
 *
 * Nouns:
 *   body     a point mass with position, velocity, acceleration, potential and the number of
 *            interactions its last force evaluation took (its load-balancing weight).
 *   cell     an octree node in memory handed out by a bh_mem: centre of mass, mass, edge
 *            length, a body ID for leaves (-1 for internal cells) and 8 child pointers.
 *            A leaf holds exactly one body, so remote trees carry their bodies with them.
 *   level    all cells of one depth; each level lives in its own region (a sub-region of the
 *            step's tree region), so the first L levels of a tree are L regions to send.
 *   domain   the bodies of one worker. The force on a body is the sum over the domains' trees
 *            in domain order (own tree included), each walked depth first in child order, so
 *            a run is bit-for-bit reproducible by any program that forms the same domains:
 *            barnes_serial --domains P reproduces barnes on P workers exactly.
 *
 * Units: G = 1, total mass 1, Plummer model in Henon units (E = -1/4). Leapfrog KDK.
 * Nothing here calls MPI or antheap: memory comes through bh_mem, collectives through
 * bh_group. */
#ifndef BH_H
#define BH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BH_MAX_LEVELS 64 /* deeper means coincident bodies: a clear error */

typedef struct bh_body {
  double pos[3], vel[3], acc[3];
  double mass, pot;
  int64_t id, work;
} bh_body;

typedef struct bh_cell {
  double com[3], mass;
  double size; /* edge of the cube */
  int64_t id;  /* body ID of a leaf; -1 for an internal cell */
  struct bh_cell *child[8];
} bh_cell;

/* ---- memory: regions on antheap, an arena in the serial build ---- */
typedef struct bh_mem {
  /* A new region below parent (0: a top region); 0 on failure. */
  uint32_t (*region)(void *ctx, uint32_t parent);
  /* n objects of size bytes in region, pointers in out; 0 or -1. */
  int (*balloc)(void *ctx, uint32_t region, size_t size, int n, void **out);
  /* Free a region and everything below it; 0 or -1. */
  int (*rfree)(void *ctx, uint32_t region);
  void *ctx;
} bh_mem;

/* The serial arena: regions as lists of malloc'd blocks (bh_arena.c). */
bh_mem bh_arena_new(void);
void bh_arena_delete(bh_mem *m);
/* Regions alive in an arena (tests). */
int bh_arena_live(const bh_mem *m);

/* ---- a step's tree ---- */
typedef struct bh_tree {
  uint32_t region;                /* the step's tree region (0: empty tree, nothing held) */
  uint32_t level[BH_MAX_LEVELS];  /* level k's region, a child of region */
  int nlevels;
  bh_cell *root;                  /* NULL for no bodies */
  size_t ncells;
} bh_tree;

/* Build the octree of bodies[0..n) into mem: one region per level. 0, or -1 with a message in
 * err (allocation failure, or bodies so close that the tree passes BH_MAX_LEVELS). */
int bh_tree_build(const bh_mem *mem, const bh_body *bodies, size_t n, bh_tree *t, char *err,
                  size_t errlen);
/* Free the tree's region (all levels). */
int bh_tree_free(const bh_mem *mem, bh_tree *t);
/* How many levels of t a domain whose bodies lie in the box [lo, hi] needs so that walks from
 * any point of the box at opening angle theta never open a cell whose children were not sent
 * (0 for an empty tree or an empty box). */
int bh_tree_levels_for_box(const bh_tree *t, const double lo[3], const double hi[3],
                           double theta);

/* Accumulate into acc/pot/work the force of one tree (only levels 0..max_levels-1 may be
 * read) on a body at pos with ID self (skipped where it is a leaf). Returns the number of
 * cells it wanted to open at the last readable level (0 when the sender sent enough). */
int bh_walk(const bh_cell *root, int max_levels, const double pos[3], int64_t self,
            double theta, double eps, double acc[3], double *pot, int64_t *work);

/* Direct O(n^2) accelerations and potentials (same softening), into acc[3n] and pot[n]. */
void bh_direct(const bh_body *b, size_t n, double eps, double *acc, double *pot);

/* ---- initial conditions, integration, diagnostics ---- */
/* n bodies of a Plummer sphere from seed, IDs 0..n-1, centre of mass at rest at the origin. */
void bh_plummer(bh_body *b, size_t n, uint64_t seed);
void bh_kick(bh_body *b, size_t n, double dt_half);
void bh_drift(bh_body *b, size_t n, double dt);
/* Sums for the diagnostics: [0] kinetic, [1] potential (1/2 sum m phi), [2..4] momentum. */
void bh_sums(const bh_body *b, size_t n, double s[5]);
/* Bounding box of positions (lo = +inf, hi = -inf when n = 0). */
void bh_box(const bh_body *b, size_t n, double lo[3], double hi[3]);

/* ---- load balancing: recursive bisection ---- */
/* A group of domains, seen through two collectives. */
typedef struct bh_group {
  /* The group's bounding box of body positions. */
  void (*box)(void *ctx, double lo[3], double hi[3]);
  /* The group's total weight of bodies with pos[dim] < cut. */
  int64_t (*weight_below)(void *ctx, int dim, double cut);
  void *ctx;
} bh_group;
/* The weight of a body: its interactions in the last force evaluation (at least 1). */
static inline int64_t bh_weight(const bh_body *b) { return b->work > 0 ? b->work : 1; }
/* The cut of a group: along the longest dimension of its box (*dim), the smallest coordinate
 * (bisection to 2^-40 of the box) that has at least half the weight below it. Bodies with
 * pos[dim] < cut go to the lower half of the group. Deterministic from the group's bodies. */
double bh_bisect_cut(const bh_group *g, int *dim);
/* Stable partition of b[0..n) by pos[dim] < cut; returns how many are below (scratch: n). */
size_t bh_partition(bh_body *b, size_t n, int dim, double cut, bh_body *scratch);

/* ---- options and reports shared by both programs (bh_opts.c) ---- */
typedef struct bh_opts {
  long bodies, steps, domains;
  uint64_t seed;
  double theta, dt, eps, tol, baseline_s;
  const char *positions, *csv, *compare, *tag, *figure;
  int quiet;
} bh_opts;
/* Parse argv; 0 = run, 1 = --help printed, -1 = error printed. serial: accept --domains,
 * --compare, --tol. */
int bh_opts_parse(int argc, char **argv, int serial, bh_opts *o);
/* The --help text of barnes (serial 0: with antheap's options) or barnes-serial (1). */
void bh_usage(FILE *f, int serial);
/* Timings of one worker (seconds). */
typedef struct bh_times {
  double compute, wcomm, scomm, barrier, total;
} bh_times;
/* One step's diagnostics line. */
void bh_print_step(long step, double t, const double s0[5], const double s[5],
                   double interactions_per_body);
/* Write final positions "id x y z" sorted by ID (reorders b). 0 or -1. */
int bh_write_positions(const char *path, bh_body *b, size_t n);
/* Compare b (any order; reorders it) with a positions file: max |dx| over bodies; -1 on a
 * missing file or different body sets. */
double bh_compare_positions(const char *path, bh_body *b, size_t n);
/* Print the run's table and append its row to o->csv (header when the file is new). avg and
 * max: over workers. */
int bh_report(const bh_opts *o, const char *mode, int workers, int schedulers,
              const bh_times *avg, const bh_times *max, double interactions, double drift);

#endif

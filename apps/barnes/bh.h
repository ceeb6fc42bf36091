/* bh.h: the physics of apps/barnes (Myrmics section 6.3), shared by the parallel programs
 * (barnes on antheap regions, barnes-mpi on plain MPI: bh_par.c) and the serial one.
 *
 * Nouns:
 *   body     a point mass with position, velocity, acceleration, potential and the number of
 *            interactions its last force evaluation took (its load-balancing weight).
 *   cube     the root cell's cube, from the bounding box of all bodies. Every tree of a step,
 *            serial or any worker's, is built in the same cube, so a cell is the same cube
 *            wherever it is built: the octree of the whole system, cut into pieces.
 *   cell     an octree node: centre of mass, mass, edge length, a body ID for leaves (-1 for
 *            internal cells, BH_PRUNED for one sent without its children) and 8 children in
 *            octant order. A leaf holds exactly one body.
 *   key      a body's path from the root, 3 bits a level for BH_KEY_LEVELS levels, computed
 *            with the tree's own octant tests: Morton order, and a cell is a range of keys.
 *   domain   the bodies of one worker: a range of keys, cut so that every worker has the same
 *            weight (bh_domain.c). A branch is a largest cell whose keys all lie in one domain;
 *            the cells above the branches form the top tree, which every worker builds alike
 *            from all branches (bh_let.c).
 *   LET      a worker's locally essential tree for a peer: its branches, with every cell that
 *            some body of the peer's domain may open and nothing below cells none can open.
 * A worker walks the top tree, its own branches and the LETs it received: the walk of the serial
 * tree, cell for cell and in the same order, so a run on any number of workers reproduces the
 * serial run bit for bit.
 *
 * Units: G = 1, total mass 1, Plummer model in Henon units (E = -1/4). Leapfrog KDK.
 * Nothing here calls MPI or antheap: memory comes through bh_mem. */
#ifndef BH_H
#define BH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BH_MAX_LEVELS 64 /* deeper means coincident bodies: a clear error */

typedef struct bh_body {
  double pos[3], vel[3], acc[3];
  double mass, pot;
  int64_t id, work; /* work: interactions in the last force evaluation */
  int64_t cost;     /* the last walk of this body, in ns (BARNES_WEIGHTS=scaled: 1/64
                       interaction; 0: not measured, or =work) */
} bh_body;

#define BH_INTERNAL ((int64_t)-1)
#define BH_PRUNED ((int64_t)-2) /* an internal cell sent without its children (a LET's edge) */
#define BH_KEY_LEVELS 21        /* 63-bit keys */
#define BH_KEY_END ((uint64_t)1 << (3 * BH_KEY_LEVELS))

typedef struct bh_cell {
  double com[3], mass;
  double size; /* edge of the cube */
  int64_t id;  /* body ID of a leaf; BH_INTERNAL or BH_PRUNED */
  struct bh_cell *child[8];
} bh_cell;

typedef struct bh_cube {
  double center[3], half;
} bh_cube;

/* The cube of the bodies in the box [lo, hi]: centred, half the largest extent (1 when 0),
 * enlarged by 1e-12 so that no body lies on its upper faces. */
bh_cube bh_cube_of_box(const double lo[3], const double hi[3]);
/* The key of pos in cube c: its octant at each of BH_KEY_LEVELS levels, found as the tree
 * finds them (the same centres, the same comparisons). */
uint64_t bh_key(const bh_cube *c, const double pos[3]);
/* out[i] = bh_key(c, b[i].pos) for i < n, faster (bodies side by side). */
void bh_keys(const bh_cube *c, const bh_body *b, size_t n, uint64_t *out);

/* ---- memory: regions on antheap, an arena in the serial build ---- */
typedef struct bh_mem {
  /* A new region below parent (0: a top region); 0 on failure. */
  uint32_t (*region)(void *ctx, uint32_t parent);
  /* n objects of size bytes in region, pointers in out; 0 or -1. */
  int (*balloc)(void *ctx, uint32_t region, size_t size, int n, void **out);
  /* Free a region and everything below it; 0 or -1. */
  int (*rfree)(void *ctx, uint32_t region);
  void *ctx;
  /* balloc may run on several threads at once (antheap at MPI_THREAD_MULTIPLE: each thread
   * allocates from its own cache): a team then allocates a level's cells in shares, one a
   * thread, as ranks would their own trees' (bh_tree_build_team). */
  bool balloc_any_thread;
} bh_mem;

/* The serial arena: regions as lists of malloc'd blocks (bh_arena.c). */
bh_mem bh_arena_new(void);
void bh_arena_delete(bh_mem *m);
/* Regions alive in an arena (tests). */
int bh_arena_live(const bh_mem *m);

/* ---- a worker rank's threads (bh_team.c) ---- */
/* A team of T threads: T - 1 helpers for the run's life and the thread that calls
 * bh_team_run. NULL stands for one thread: every function taking a team then runs serially.
 * bh_team_new gives NULL for T <= 1, and when it cannot make the threads (bh_run stops the job
 * then, rather than run a hybrid serially). */
typedef struct bh_team bh_team;
bh_team *bh_team_new(int T);
void bh_team_free(bh_team *tm);
int bh_team_size(const bh_team *tm); /* 1 for NULL */
/* fn(ctx, t, T) on every thread of the team (t = 0: the caller); returns when all are done. */
void bh_team_run(bh_team *tm, void (*fn)(void *ctx, int t, int T), void *ctx);
/* Thread t's share [lo, hi) of n items. */
void bh_share(size_t n, int t, int T, size_t *lo, size_t *hi);
/* memcpy by the team, a share of the bytes each (under 1 MiB on the calling thread alone). */
void bh_team_copy(bh_team *tm, void *to, const void *from, size_t bytes);

/* ---- a step's tree ---- */
typedef struct bh_tree {
  uint32_t region;                /* the step's tree region (0: empty tree, nothing held) */
  uint32_t level[BH_MAX_LEVELS];  /* level k's region, a child of region */
  int nlevels;
  bh_cell *root;                  /* NULL for no bodies */
  size_t ncells;
} bh_tree;

/* Build the octree of bodies[0..n) into mem, in cube c (NULL: the cube of their own box, as the
 * serial program does): one region per level. 0, or -1 with a message in err (allocation
 * failure, or bodies so close that the tree passes BH_MAX_LEVELS). */
int bh_tree_build(const bh_mem *mem, const bh_body *bodies, size_t n, const bh_cube *c,
                  bh_tree *t, char *err, size_t errlen);
/* A block of memory a worker keeps from one step to the next ({0}: none yet; bh_block.c):
 * bh_block_room hands it out grown to `bytes` (its contents dropped; a NULL block: a fresh
 * malloc), bh_block_release frees what was not the block's, bh_block_free gives it back. */
typedef struct bh_block {
  void *mem;
  size_t cap; /* bytes */
} bh_block;
void *bh_block_room(bh_block *b, size_t bytes);
void bh_block_release(bh_block *b, void *p);
void bh_block_free(bh_block *b);
/* Memory a worker's tree builds keep from one step to the next: the array that a team's
 * insertion joins its pieces into, over 100 MB at half a million bodies. A fresh allocation that
 * large is a fresh mapping (glibc maps blocks past 32 MiB anew), faulted in page by page on every
 * step while the team's threads wait on the process's memory map. {0} is empty;
 * bh_tree_keep_free gives it back. */
enum { BH_TREE_INSERT, BH_TREE_ORDER, BH_TREE_MOMENTS, BH_TREE_ALLOC, BH_TREE_CELLS,
       BH_TREE_PARTS };
typedef struct bh_tree_keep {
  bh_block nodes;
  /* Where the builds' time went (seconds, added up): the insertion into the scratch tree, its
   * breadth-first order, the moments, the cells' regions and ballocs, the cells' filling. */
  double part[BH_TREE_PARTS];
} bh_tree_keep;
void bh_tree_keep_free(bh_tree_keep *k);
/* The same tree, cell for cell and in the same places, with a team's threads sharing the
 * breadth-first order, the moments and the cells, and, given the bodies' keys in c (sorted:
 * bh_sort_by_key's order), the insertion; the regions are made on the calling thread, the
 * cells' ballocs on the team where mem->balloc_any_thread allows it. keep: memory kept between
 * builds, and the builds' times by part (NULL: allocated and freed in each, not timed). */
int bh_tree_build_team(const bh_mem *mem, const bh_body *bodies, const uint64_t *keys, size_t n,
                       const bh_cube *c, bh_tree *t, char *err, size_t errlen, bh_team *team,
                       bh_tree_keep *keep);
/* Overwrite every cell's mass and centre of mass with NaN (a test mode: a walk that still
 * reads a tree its owner has let go of then gives NaN positions, which the comparison with the
 * serial run catches, where freed memory would read as it was). */
void bh_tree_poison(bh_tree *t);
/* Free the tree's region (all levels). */
int bh_tree_free(const bh_mem *mem, bh_tree *t);

/* Does a walk from pos open a cell of this size and centre of mass? (theta: opening angle) */
static inline int bh_opens(double size, double theta, double d2) {
  return size * size > theta * theta * d2;
}
/* Accumulate into acc/pot/work the force of the tree under root on a body at pos with ID self
 * (skipped where it is a leaf), depth first in octant order. Returns the number of cells it
 * wanted to open whose children were not sent (BH_PRUNED: used whole; 0 in a correct run). */
int bh_walk(const bh_cell *root, const double pos[3], int64_t self, double theta, double eps,
            double acc[3], double *pot, int64_t *work);

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

/* The weight of a body for the domains: what its last walk cost (cost, in nanoseconds or as
 * bh_run's BARNES_WEIGHTS scaled it) where that was measured (what the machine spent: the interactions, and how far the cells it read were), else
 * its interactions; at least 1. Weights only place bodies: no body's force depends on them. */
static inline int64_t bh_weight(const bh_body *b) {
  return b->cost > 0 ? b->cost : b->work > 0 ? b->work : 1;
}

/* ---- options and reports shared by both programs (bh_opts.c) ---- */
typedef struct bh_opts {
  long bodies, steps;
  uint64_t seed;
  double theta, dt, eps, tol, baseline_s;
  const char *positions, *csv, *compare, *tag, *figure;
  int quiet;
  int threads; /* --threads T: threads of a worker rank (sort, tree, LETs, walk; 1: none) */
} bh_opts;
/* The programs: barnes (on antheap), barnes-serial, barnes-mpi (plain MPI). */
enum { BH_ANTHEAP = 0, BH_SERIAL = 1, BH_MPI = 2 };
/* Parse argv for program prog; 0 = run, 1 = --help printed, -1 = error printed. The serial
 * program also takes --compare and --tol. */
int bh_opts_parse(int argc, char **argv, int prog, bh_opts *o);
/* The --help text of program prog. */
void bh_usage(FILE *f, int prog);
/* Timings of one worker (seconds). */
typedef struct bh_times {
  double compute, wcomm, scomm, barrier, total;
} bh_times;
/* One step's diagnostics line. */
void bh_print_step(long step, double t, const double s0[5], const double s[5],
                   double interactions_per_body);
/* Write final positions "id x y z" sorted by ID (reorders b). 0 or -1. */
int bh_write_positions(const char *path, bh_body *b, size_t n);
/* Compare b (any order; reorders it) with a positions file: the largest |dx| of a coordinate
 * into *worst, the largest |dx| / |x| of a body into *rel; 0, or -1 on a missing file or
 * another set of bodies. */
int bh_compare_positions(const char *path, bh_body *b, size_t n, double *worst, double *rel);
/* Print the run's table and append its row to o->csv (header when the file is new). avg and
 * max: over workers. */
int bh_report(const bh_opts *o, const char *mode, int workers, int schedulers,
              const bh_times *avg, const bh_times *max, double interactions, double drift);

#endif

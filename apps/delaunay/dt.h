/* dt.h: the Delaunay triangulation of apps/delaunay (Myrmics section 6.4), shared by the
 * serial program on malloc (delaunay_serial.c), the parallel one on antheap regions
 * (delaunay.c) and the tests. Nothing here calls MPI or antheap: memory comes through a
 * refill callback, ownership through a per-cell table.
 *
 * Nouns:
 *   point     an input point: coordinates and its input index (its id). Points that repeat an
 *             earlier point are duplicates: reported and skipped.
 *   triangle  three vertices counter-clockwise, with their coordinates copied in (so a
 *             triangle can be read with nothing else at hand: regions move with all they need),
 *             its three neighbours (n[i] across the edge opposite vertex i) and its cell.
 *   ghost     a triangle with the infinite vertex (id DT_INF) standing for the outside of the
 *             convex hull: a ghost is (u, w, inf) for each hull edge u->w seen from outside.
 *             With ghosts there is no super-triangle and no wrong hull.
 *   cell      a part of the plane (the caller's cell function; serially one cell for all). A
 *             triangle belongs to the cell of its circumcentre (a ghost: the midpoint of its
 *             hull edge): the triangles an insertion can touch are those whose circles hold the
 *             point, so their cells are near it. In the parallel program each cell is a region.
 *   pool      the triangles of one cell: a free list, chunks carved into triangles, spare
 *             chunks; it lives in memory the cell owns (its region), so it moves with it.
 *   cavity    the triangles whose circumcircle holds the new point (Bowyer-Watson), found by
 *             a walk to the point (Arens) and a search over neighbours; replaced by a fan.
 *   owned     a cell the caller may read and write now. An insertion that would read or write a
 *             triangle of a cell not owned changes nothing and is postponed.
 *
 * Ties (cocircular points) are broken by the symbolic perturbation that CGAL's
 * Delaunay_triangulation_2 uses (Devillers-Teillaud; lexicographic order of the points), so the
 * triangulation is unique for any input: the serial, parallel and CGAL meshes are equal. */
#ifndef DT_H
#define DT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DT_INF (-1)              /* the infinite vertex's id */
#define DT_DEAD 0xffffffffu      /* mark of a triangle on a free list */
#define DT_MAX_POINTS 0x7ffffff0 /* ids are int32 */

typedef struct dt_pt {
  double x, y;
  int32_t id;
  int32_t pad;
} dt_pt;

typedef struct dt_tri {
  double p[3][2];      /* vertex coordinates, counter-clockwise (the infinite one: unused) */
  struct dt_tri *n[3]; /* n[i]: the neighbour across the edge opposite vertex i */
  int32_t v[3];        /* vertex ids; DT_INF for the infinite vertex */
  uint32_t mark;       /* cavity search epoch; DT_DEAD on a free list */
  uint16_t cell;       /* this triangle's cell */
  uint16_t nc[3];      /* nc[i]: the cell of n[i], to test ownership before reading n[i] */
} dt_tri;

/* The triangles of one cell. A chunk starts with a dt_chunk header, then whole triangles. */
typedef struct dt_chunk {
  struct dt_chunk *next;
  uint64_t bytes; /* of the whole chunk, header included */
} dt_chunk;

typedef struct dt_pool {
  dt_tri *free;     /* dead triangles, linked through n[0] */
  char *cur, *end;  /* the part of the newest chunk not carved yet */
  dt_chunk *chunks; /* every chunk carved from, newest first (enumeration) */
  dt_chunk *spare;  /* chunks allocated but not carved yet */
  dt_tri *hint;     /* a triangle of this cell created lately (maybe dead since) */
  int64_t live;     /* live triangles of this cell */
} dt_pool;

/* More chunks for pool (of cell): push at least one on p->spare, its bytes set; 0, or -1 when
 * out of memory. */
typedef int (*dt_refill_fn)(void *ctx, int cell, dt_pool *p);
/* The cell of a point, in [0, ncells). */
typedef int (*dt_cell_fn)(const void *ctx, double x, double y);
/* A rectangle [r0, r1) x [r2, r3) every point of which the cell function gives cell `cell`. */
typedef void (*dt_cell_rect_fn)(const void *ctx, int cell, double r[4]);

typedef struct dt_stats {
  int64_t inserted, duplicates, postponed, walk_steps, cavity_tris;
  int64_t blocked_walk, blocked_cavity, blocked_new; /* why postponed */
} dt_stats;

/* A triangle an insertion near a place made, and its cell (checked before the triangle is). */
typedef struct dt_hint {
  struct dt_tri *t;
  int cell;
} dt_hint;

typedef struct dt_mesh {
  dt_pool **pool; /* per cell */
  int ncells;
  dt_cell_fn cell_of; /* NULL: one cell */
  const void *cell_ctx;
  dt_cell_rect_fn cell_rect; /* NULL: every new triangle's cell asked of cell_of */
  double hot[4];             /* the rectangle of hot_cell, the cell last found (all 0: none) */
  int hot_cell;
  const uint8_t *own; /* per cell: nonzero where this caller may read/write; NULL: all */
  dt_refill_fn refill;
  void *ctx;
  uint32_t epoch, epoch_base, epoch_step; /* cavity marks; see next_epoch in mesh.c */
  dt_tri *last;                           /* a live, owned triangle: where the next walk starts */
  int last_cell;                          /* its cell (known without reading it) */
  int32_t dup_of;                         /* after DT_DUPLICATE: the id of the equal vertex */
  int blocked_cell;                       /* after DT_POSTPONED: a cell it needed, not owned */
  dt_hint *hints; /* per square of a grid over the box: where a walk blocked on the way may start
                     again (dt_mesh_hints; NULL: none) */
  int hint_side;
  double hbox[4];
  double hscale[2];          /* hint_side / the box's width and height (0 when flat) */
  dt_stats st;
  /* scratch of one insertion */
  dt_tri **cav;
  struct dt_edge *bnd;
  size_t cap_cav, cap_bnd;
} dt_mesh;

enum { DT_INSERTED = 0, DT_DUPLICATE = 1, DT_POSTPONED = 2, DT_NOMEM = -1 };

/* ---- mesh.c: the triangulation ---- */
/* Set up an empty mesh of ncells cells (at most 65536; cell_of NULL: one), with pools given by
 * the caller (pool[c] zeroed, or holding triangles of an earlier mesh part). */
int dt_mesh_init(dt_mesh *m, dt_pool **pools, int ncells, dt_cell_fn cell_of, const void *cell_ctx,
                 dt_refill_fn refill, void *ctx);
void dt_mesh_release(dt_mesh *m); /* the scratch arrays and hints (not the pools) */
/* Remember, per square of a side x side grid over box, a triangle the latest insertion there
 * made: a walk that meets cells not owned on the way (parts of a block that other workers'
 * triangles separate, such as clusters) starts again from there. 0, or -1 (memory). */
int dt_mesh_hints(dt_mesh *m, int side, const double box[4]);
/* The first triangle a, b, c (not collinear; any order) and its three ghosts. */
int dt_start(dt_mesh *m, const dt_pt *a, const dt_pt *b, const dt_pt *c);
/* Insert one point: DT_INSERTED, DT_DUPLICATE (an equal point is a vertex: nothing changes),
 * DT_POSTPONED (it needs a cell not owned: nothing changes, but where its walk found its
 * triangle, the next walk starts there) or DT_NOMEM. */
int dt_insert(dt_mesh *m, const dt_pt *p);
/* The cell of a point. */
int dt_cell_of(const dt_mesh *m, double x, double y);
/* Let the mesh find a new triangle's cell in the rectangle of the last cell found before it
 * asks cell_of (most of a cell's triangles are made one after another): the same cells, with
 * one comparison per side in place of cell_of's search. Call it again (it forgets the last
 * rectangle) if the cells' geometry changes. */
void dt_mesh_cell_rects(dt_mesh *m, dt_cell_rect_fn cell_rect);
/* Find a live triangle to start walks from among the owned cells (after ownership changed);
 * 0, or -1 if no owned cell has one. */
int dt_restart(dt_mesh *m);
/* Live finite triangles of the pools of cells [c0, c1) where own[c] (or all when own is NULL),
 * written as id triples into tri (NULL: only count). Returns the count. */
size_t dt_collect(const dt_mesh *m, const uint8_t *own, int32_t *tri);
/* Live triangles (ghosts included) of one pool, by chunk walk; calls f for each. */
void dt_pool_each(const dt_pool *p, void (*f)(void *ctx, dt_tri *t), void *ctx);

/* Find a first triangle among pts[0..n): indexes of three points that are not collinear,
 * the first such in order (i = 0, j the first point unlike pts[0], k the first not on the line
 * i-j). Returns 0, or -1 when every point is on one line (or fewer than 3 distinct). */
int dt_pick_start(const dt_pt *pts, size_t n, size_t *i, size_t *j, size_t *k);

/* ---- serial.c: the serial triangulation on malloc, and duplicates ---- */
typedef struct dt_result {
  int32_t *tri; /* 3 * ntri ids, counter-clockwise */
  size_t ntri;
  int32_t *dup; /* ids skipped as duplicates (of each set of equal points the lowest id is kept) */
  size_t ndup;
  dt_stats st;
  double seconds;       /* the triangulation (order + insertion), not input or output */
  double alloc_seconds; /* of which in the chunk allocator */
} dt_result;
/* Triangulate xy[0..2n) serially: BRIO order (seeded), then insertion. 0, or -1 (memory). */
int dt_triangulate(const double *xy, size_t n, uint64_t seed, dt_result *r);
void dt_result_free(dt_result *r);
/* Make the lowest id of each set of equal points the one kept: pairs[2i] was skipped as equal
 * to the vertex pairs[2i+1]. Renames vertices in tri and fills *dup (malloc'd). 0 or -1. */
int dt_settle_duplicates(int32_t *tri, size_t ntri, const int32_t *pairs, size_t npairs, size_t n,
                         int32_t **dup);
/* Duplicates of points that are all on one line (no mesh to find them in): by sorting. */
int dt_collinear_duplicates(const double *xy, size_t n, int32_t **dup, size_t *ndup);

/* ---- hull.c: the convex hull and the band along it ---- */
/* The strict convex hull (counter-clockwise, no collinear points) of pts[0..n) (sorted in place)
 * into out (n + 1 slots); returns its size. */
size_t dt_hull(dt_pt *pts, size_t n, dt_pt *out);
typedef struct dt_band {
  struct {
    double nx, ny, c;
  } * e; /* per hull edge: inward normal and offset */
  size_t h;
  double delta;
  double r[4]; /* a rectangle inside the hull shrunk by delta: quickly not in the band */
  uint8_t *inside; /* a grid over the hull's box: squares wholly inside the hull shrunk by delta
                      (NULL: none) */
  double g[4];     /* the grid's x0, y0 and squares per unit in x and y */
} dt_band;
/* Points closer than delta to the boundary of the hull (a heuristic test in doubles: it only
 * chooses when a point is inserted, never whether the mesh is right). */
int dt_band_init(dt_band *b, const dt_pt *hull, size_t h, double delta);
int dt_band_has(const dt_band *b, double x, double y);
/* 1 where (x, y) is surely inside the hull by more than delta (its inner rectangle, or a square
 * of its grid wholly so), 0 where it may not be: the quick part of dt_band_has. */
int dt_band_surely_inside(const dt_band *b, double x, double y);
/* 1 where every point of the closed rectangle [r0, r1] x [r2, r3] is surely inside (within the
 * inner rectangle): dt_band_has answers 0 for all of them. */
int dt_band_rect_surely_inside(const dt_band *b, const double r[4]);
void dt_band_free(dt_band *b);
/* The distance that puts about band_points of n points spread evenly over the hull in the band. */
double dt_hull_delta(const dt_pt *hull, size_t h, size_t n, double band_points);

/* Fault in the pages of a new chunk in one call (MADV_POPULATE_WRITE) instead of one fault per
 * page as triangles are carved; a no-op where the kernel lacks it. Both programs do it for
 * their chunks (DT_NO_POPULATE=1 in the environment turns it off, to measure). (mesh.c) */
void dt_populate(void *p, size_t bytes);
/* malloc, and its pages faulted in at once when it is large (so that neither program pays a
 * fault per page where the other does not). */
void *dt_alloc(size_t bytes);

/* ---- points.c: input ---- */
typedef struct dt_input {
  double *xy; /* 2n coordinates, by id */
  size_t n;
} dt_input;
/* Generators (seeded; deterministic): uniform in [0,1)^2; clustered: k Gaussian blobs of
 * standard deviation sigma with uniform centres; grid: integer coordinates of a near-square
 * grid, row by row (degenerate on purpose: every square's four corners are cocircular). */
int dt_gen_uniform(dt_input *in, size_t n, uint64_t seed);
int dt_gen_clustered(dt_input *in, size_t n, uint64_t seed, int k, double sigma);
int dt_gen_grid(dt_input *in, size_t n);
/* wide: |x|, |y| = 10^U(-12, 12), random signs: a huge range of scales (the ordering's test) */
int dt_gen_wide(dt_input *in, size_t n, uint64_t seed);
/* graded: radius 10^U(-6, 0) at a uniform angle around the origin (a mesh refined toward a
 * point: density 1 / r^2); line: x uniform in [0, 1), y Gaussian of deviation 1e-6 (points
 * nearly on a line) */
int dt_gen_graded(dt_input *in, size_t n, uint64_t seed);
int dt_gen_line(dt_input *in, size_t n, uint64_t seed);
/* Read a file: binary (the 8 bytes "DTPOINTS", a little-endian uint64 n, then n pairs of
 * little-endian doubles) or text ("x y" per line; blank lines and lines starting with '#'
 * skipped). 0, or -1 with a message naming the file and line in err. */
int dt_read_points(dt_input *in, const char *path, char *err, size_t errlen);
int dt_write_points(const dt_input *in, const char *path, int binary);
void dt_input_free(dt_input *in);
/* Bounding box [xmin, xmax, ymin, ymax] of xy[0..2n). */
void dt_box(const double *xy, size_t n, double box[4]);
void dt_box_pts(const dt_pt *p, size_t n, double box[4]); /* of points */

/* ---- order.c: insertion order ---- */
/* Hilbert index of a point on a 2^16 x 2^16 grid over box. */
uint32_t dt_hilbert_key(double x, double y, const double box[4]);
/* The square around box that the sorts below run their curve over (the shorter side widened
 * about its middle): square cells, so points near on the curve are near in the plane even for
 * a long, thin cloud (points near a line). */
void dt_square_box(const double box[4], double sq[4]);
/* Sort pts[0..n) along the Hilbert curve over box (radix sort on the keys); a cell of the 2^16
 * grid with more than 16 points is sorted again over its points' own box (adaptive: points over
 * a huge range of scales still come out in curve order). */
void dt_hilbert_sort(dt_pt *pts, size_t n, const double box[4]);
/* Biased randomized insertion order (Amenta, Choi, Rote), as CGAL's spatial sort does it:
 * shuffle (seeded), then the last 3/4 Hilbert-sorted and the first 1/4 treated the same way
 * recursively, down to 16 points. */
void dt_brio(dt_pt *pts, size_t n, const double box[4], uint64_t seed);
/* The same in scratch memory of dt_brio_scratch_bytes(n) bytes that the caller owns: no
 * allocation of its own but a few small ones (a thread may run it on memory its process's main
 * thread allocated and frees). Call dt_order_init first from the thread that starts others. */
void dt_brio_in(dt_pt *pts, size_t n, const double box[4], uint64_t seed, void *scratch);
size_t dt_brio_scratch_bytes(size_t n);
/* dt_brio_in in steps, for a thread that has other work (delaunay sorts while it waits for a
 * partner): dt_brio_start, then dt_brio_step(j, work) does about `work` points' worth (a slice
 * of one pass over the points, of a round's sort or of a crowded cell's sort again; a cell's
 * box is one pass, and a group of equal keys is scanned whole; 0 counts as 1: every call moves
 * on) and returns nonzero while unfinished. The same order as dt_brio_in, whatever the
 * slices. The job holds a list of the crowded cells (heap memory) until it is done. */
#define DT_BRIO_DIGITS 2048
typedef struct dt_brio_job {
  dt_pt *pts;
  size_t n;
  double box[4];
  void *scratch;
  uint64_t rng;
  int stage, pass;
  size_t at, len, mid; /* the stage's cursor; the round is pts[mid, len) */
  /* the sort under way: pts[base, base + m) along the curve over lbox from state s0, depth
   * levels below the round's (a crowded cell's, or the round's own: depth 0) */
  size_t base, m;
  double lbox[4];
  int s0, depth;
  const uint64_t *keys;     /* its keys, sorted */
  struct dt_brio_run *runs; /* crowded cells still to sort again (a stack) */
  size_t nruns, cap_runs;
  size_t count[DT_BRIO_DIGITS];
} dt_brio_job;
void dt_brio_start(dt_brio_job *j, dt_pt *pts, size_t n, const double box[4], uint64_t seed,
                   void *scratch);
int dt_brio_step(dt_brio_job *j, size_t work);
/* A job left unfinished: its heap memory freed (the points in some order of the sort's way). */
void dt_brio_cancel(dt_brio_job *j);
/* The curve's table, built once (dt_hilbert_key, dt_hilbert_sort and dt_brio build it when they
 * first need it: before threads share it, build it here). */
void dt_order_init(void);

/* ---- validate.c: checks that do not trust the mesh ---- */
typedef struct dt_check {
  size_t distinct, hull, triangles, delaunay_edges;
  int collinear; /* every point on one line: no triangles is right */
} dt_check;
/* Check a triangulation given as id triples against the points: every triangle
 * counter-clockwise (exact), every directed edge used once (so an edge has at most two
 * triangles, on opposite sides), every distinct point a vertex, the edges used once exactly the
 * convex hull's (counted with collinear points, computed here on its own), the count
 * 2n - 2 - h, and the empty-circle test (exact) across every interior edge. dup: the ids
 * reported as duplicates (each must equal a point kept). 0, or -1 with the first failure in
 * err. */
int dt_validate(const double *xy, size_t n, const int32_t *tri, size_t ntri, const int32_t *dup,
                size_t ndup, dt_check *out, char *err, size_t errlen);
/* Compare two triangle lists as sets of vertex sets (orientation ignored; lists reordered).
 * Returns the number of triangles in one and not the other. */
size_t dt_compare_sets(int32_t *a, size_t na, int32_t *b, size_t nb, char *err, size_t errlen);
/* Read a triangle file ("a b c" per line; qhull's first line with the count is skipped). */
int dt_read_triangles(const char *path, int32_t **tri, size_t *ntri, char *err, size_t errlen);
int dt_write_triangles(const char *path, const int32_t *tri, size_t ntri);

#ifdef __cplusplus
}
#endif

#endif

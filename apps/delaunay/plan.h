/* plan.h: the decomposition of the parallel Delaunay program as pure arithmetic (plan.c), shared
 * by the program and its tests. No MPI, no antheap.
 *
 *   W = 2^m workers, each with one block. Blocks: BX columns (x-quantiles of the points, lines
 *   over the whole box) times BY rows per column (y-quantiles of that column's points), BX <= BY,
 *   BX * BY = W; so every block holds about n / W points whatever the distribution (clustered
 *   input included; the parallel program takes them from a sample, or exact with DT_BALANCE=1:
 *   par_balance.c). Block
 *   b = i * BY + j (column i, row j) is worker b's.
 *   Cells: each block is cut 3 x 3 into an interior and a ring of strips of width f (a fraction
 *   of the block's side, at least a few point spacings): cell = 9 b + 3 r + c, r = 0..2 bottom
 *   to top, c = 0..2 left to right. Cells are the regions: the unit of ownership and of moves.
 *
 * Configurations: who holds which cell (dt_plan_owners). Before the main phase the cells hold
 * little (the sample), so moving them costs next to nothing:
 *   ZERO   everything at worker 0 (the sample, and the end's check)
 *   BLOCK  every worker its own block's nine cells (the main phase)
 *   HZ0, HZ1  the windows of the horizontal borders inside the columns, by parity: blocks
 *          (i, j) and (i, j + 1) for j even (HZ0) or odd (HZ1), held by (i, j)'s worker
 *   VZ0 .. VZ3  the windows of the vertical lines between columns, by the line's parity and the
 *          parity of a pair of rows: VZ0 + 2 (l % 2) + (j % 2) holds, for each line (l, l + 1)
 *          of that parity and each pair of rows (j, j + 1) of that parity in column l, the
 *          pair's two blocks less their left-hand strips and the right column's cells less its
 *          right-hand strips that meet the pair's reach (the part of column l whose line
 *          points it gets, from the middle of row j to the middle of row j + 1, widened by a
 *          quarter of either row), at (l, j)'s worker. A line's zone point goes to the pair
 *          whose inner border (y of row j + 1) is nearer than any other of column l. Lines of
 *          one parity share no column, and the pairs of one parity no block, so the windows of
 *          a configuration are apart; each holds a line's zone over two rows, not the column's
 *          whole height. A line is whole where one right-hand cell meets the reach of two pairs
 *          of one parity (the columns' rows far apart, as clustered points make them): its one
 *          window, at the left column's top block, holds both columns in both configurations of
 *          its parity, and all its points go to the first
 * A point within half a block of a border lies, with its neighbourhood, in one worker's cells in
 * BLOCK, one of the HZ (away from the column's sides) or one of the VZ (near a vertical line,
 * the T-junctions of the rows included): test_plan checks it for disks. After the main phase
 * the cells are full, and what still waits is inserted where the few cells near it are
 * gathered (delaunay.c): the strips keep that small. */
#ifndef DT_PLAN_H
#define DT_PLAN_H

#include <stddef.h>

#define PLAN_MAX_WORKERS 4096 /* 9 W cells must fit the triangles' 16-bit cell numbers */

enum { CONF_ZERO, CONF_BLOCK, CONF_HZ0, CONF_HZ1, CONF_VZ0, CONF_VZ1, CONF_VZ2, CONF_VZ3, NCONF };

typedef struct dt_plan {
  int W, m, BX, BY, ncells;
  size_t n;       /* points in all (for spacings) */
  double box[4];  /* xmin, xmax, ymin, ymax */
  double *xs;     /* BX + 1 column edges */
  double *ys;     /* per column BY + 1 row edges: ys[i * (BY + 1) + j] */
  double *inner;  /* per block the strips' inner edges: x0 + fx, x1 - fx, y0 + fy, y1 - fy */
  double *zone;   /* per block the zone's half-width (zone spacings of that block) */
  unsigned char *whole; /* per line (l, l + 1): one window of both columns (rows far apart) */
} dt_plan;

/* 0, or -1 when workers is not a power of two in [1, PLAN_MAX_WORKERS]. No geometry yet. */
int dt_plan_init(dt_plan *p, int workers);
/* The geometry from sample points xy[0..2ns) of the n points inside box (the same sample gives
 * the same geometry on every worker): column and row edges at the sample's quantiles, strips
 * of width max(1/8 of the side, zone + 3 spacings) (at most 0.3 of it), zones of `zone` mean
 * spacings of the block. Sorts the sample in place. 0, or -1 (memory). */
int dt_plan_geometry(dt_plan *p, const double box[4], double *xy, size_t ns, size_t n, double zone);
void dt_plan_free(dt_plan *p);
/* After the edges (xs, ys) moved: the strips, the zones and the whole lines again. */
void dt_plan_refit(dt_plan *p, double zone);

int dt_plan_column_of(const dt_plan *p, double x); /* the column of dt_plan_block_of's block */
int dt_plan_block_of(const dt_plan *p, double x, double y);
int dt_plan_cell_of(const dt_plan *p, double x, double y);
void dt_plan_block_rect(const dt_plan *p, int b, double r[4]); /* x0, x1, y0, y1 */
void dt_plan_cell_rect(const dt_plan *p, int cell, double r[4]);
/* A rectangle [r0, r1) x [r2, r3) every point of which dt_plan_cell_of gives cell (the cell's
 * own, without the edge cells' reach past the box; empty where the strips leave it none). */
void dt_plan_cell_inside(const dt_plan *p, int cell, double r[4]);
/* The configuration whose window inserts a point of a border zone: CONF_VZ0 .. CONF_VZ3 within
 * the zone of a vertical line between columns (by the line's parity and the pair of rows of
 * the left column whose inner border is nearest; the first of its parity for a whole line),
 * else CONF_HZ0 or CONF_HZ1 within that of a horizontal border inside a column; CONF_BLOCK
 * outside every zone (the box's own edges have none). */
int dt_plan_zone(const dt_plan *p, double x, double y);
/* For the distribution's pass over every point, the block's column and row found once: the
 * cell of (x, y), and in *zone the configuration of its zone for a half-width of zw capped at
 * cap[its block]. */
int dt_plan_place(const dt_plan *p, double x, double y, double zw, const double *cap, int *zone);
/* The cell that dt_plan_place gives every point of the closed rectangle [r0, r1] x [r2, r3]
 * with CONF_BLOCK (no zone) for the same zw and cap, where one does; else -1. The two corners
 * (r0, r2) and (r1, r3) decide for the whole rectangle: the same cell at both is the same
 * block, so the same column (the column search is monotone in x over sorted edges) and the
 * same row (monotone in y over that column's edges); with the block fixed, the strips and each
 * side's distance test are monotone in x or in y alone. The distribution places the points
 * of such a rectangle by one lookup. */
int dt_plan_place_rect(const dt_plan *p, const double r[4], double zw, const double *cap);

/* The holder of a cell in configuration conf; of every cell (own[ncells]). */
int dt_plan_owner(const dt_plan *p, int conf, int cell);
void dt_plan_owners(const dt_plan *p, int conf, int *own);
/* The mean spacing of the points in block b (sqrt(area / (n / W))). */
double dt_plan_spacing(const dt_plan *p, int b);
/* The window of a cell in an HZ or VZ configuration, named by the block whose worker holds it
 * (the lower block of its pair; a whole line's: the left column's top block), or -1: the cell
 * is in none (it stays with its block's worker). */
int dt_plan_window(const dt_plan *p, int conf, int cell);
/* Step r (0..m) of a scatter from worker 0 to the holders dest[]: the holder of each cell is
 * dest with its m - r lowest bits cleared (step 0: worker 0; step m: dest). Between two steps
 * every worker sends at most once, to w + 2^(m-r-1). */
void dt_plan_scatter_step(const dt_plan *p, const int *dest, int r, int *own);

/* A move of cells between two workers. Moves come in rounds, each a matching (nobody twice), so
 * that every worker doing its own moves in this order never deadlocks. */
typedef struct dt_move {
  int from, to, round;
  int count;  /* cells in this move */
  int *cells; /* into the dt_plan_moves buffer, ascending */
} dt_move;
/* The moves from holders own0 to own1 (every cell whose holder differs, one move per pair of
 * workers). Returns the number of moves; *moves and *buf malloc'd (free both). -1 on memory. */
int dt_plan_moves(const dt_plan *p, const int *own0, const int *own1, dt_move **moves, int **buf);

#endif

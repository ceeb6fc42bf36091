/* plan.h: the decomposition of Myrmics section 6.4 as pure arithmetic (plan.c), shared by the
 * parallel program and its tests.
 *
 *   W = 4^K workers; a grid of G x G leaf cells, G = 2^(K+1), so 4W cells (4 per worker).
 *   Region tree: a node per square of the quadtree, depth 0 (the whole box) to K+1 (the
 *   cells); node (d, x, y) is the child of (d-1, x/2, y/2). Every node is a region.
 *   Level k = 0..K: 4^k workers are active; worker w owns a block (a node of depth k) made of
 *   four sub-quadrants (its children, depth k+1). Delegation from level k to k+1: the owner of
 *   a block keeps sub-quadrant 0 and gives sub-quadrant s to worker w + s 4^k.
 *   Phases of a level (Figure 5): 0, the main triangulation; then three rotations of the
 *   sub-quadrants, which shift every worker's window of 2 x 2 sub-quadrants by one sub-quadrant
 *   to the right (1), then down (2: both shifts), then back left (3: the vertical shift only),
 *   wrapping around the grid. Every 2 x 2 window of sub-quadrants is some worker's window in
 *   exactly one phase, so a point whose cavity fits in two adjacent sub-quadrants (in both
 *   directions) finds an owner. The fourth rotation, back to phase 0, is folded into the
 *   delegation (one move straight to the next level's owner). */
#ifndef DT_PLAN_H
#define DT_PLAN_H

typedef struct dt_plan {
  int K, W, G, ncells, nnodes;
} dt_plan;

/* 0, or -1 when workers is not a power of four (1, 4, 16, ...; at most 4^6). */
int plan_init(dt_plan *p, int workers);
/* Index of node (d, x, y) in [0, nnodes): breadth first. */
int plan_node(int d, int x, int y);
/* The owner at level k of block (bx, by) (a 2^k x 2^k grid). */
int plan_owner(const dt_plan *p, int k, int bx, int by);
/* The owner of cell (cx, cy) in phase ph (0..3) of level k. */
int plan_cell_owner(const dt_plan *p, int k, int ph, int cx, int cy);
/* The owner of node (d, x, y) in phase ph of level k: the owner of its first cell (all its cells
 * have the same owner when d >= k + 1). */
int plan_node_owner(const dt_plan *p, int k, int ph, int d, int x, int y);

/* A move of regions between two workers: every node of depth d whose owner differs between two
 * (level, phase) states. Moves are ordered in rounds (each round a matching: nobody twice), so
 * that executing them in this order on every worker never deadlocks and a round runs at once. */
typedef struct dt_move {
  int from, to, round;
  int count;  /* nodes in this move */
  int *nodes; /* into the plan_moves buffer */
} dt_move;
/* Moves of the depth-d nodes from state (k0, ph0) to (k1, ph1). Returns the number of moves;
 * *moves and *buf malloc'd (free both). -1 on memory. */
int plan_moves(const dt_plan *p, int d, int k0, int ph0, int k1, int ph1, dt_move **moves,
               int **buf);

#endif

/* plan.c: who owns which square when (the decomposition of plan.h), and the region moves
 * between two ownership states in a deadlock-free order. */
#include "plan.h"

#include <stdlib.h>

int plan_init(dt_plan *p, int workers) {
  int K = 0, w = 1;
  while (w < workers && K < 6) w *= 4, K++;
  if (w != workers) return -1;
  p->K = K;
  p->W = workers;
  p->G = 2 << K;
  p->ncells = p->G * p->G;
  p->nnodes = ((1 << (2 * (K + 2))) - 1) / 3;
  return 0;
}

int plan_node(int d, int x, int y) { return ((1 << (2 * d)) - 1) / 3 + (y << d) + x; }

int plan_owner(const dt_plan *p, int k, int bx, int by) {
  (void)p;
  int w = 0;
  for (int l = 1; l <= k; l++) { /* from the root block down: sub-quadrant s at level l-1 */
    int sh = k - l, s = ((bx >> sh) & 1) + 2 * ((by >> sh) & 1);
    w += s << (2 * (l - 1));
  }
  return w;
}

int plan_cell_owner(const dt_plan *p, int k, int ph, int cx, int cy) {
  static const int off[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  int S = 2 << k, sh = p->K - k;
  int i = cx >> sh, j = cy >> sh;
  int bx = ((i - off[ph][0] + S) % S) / 2, by = ((j - off[ph][1] + S) % S) / 2;
  return plan_owner(p, k, bx, by);
}

int plan_node_owner(const dt_plan *p, int k, int ph, int d, int x, int y) {
  int sh = p->K + 1 - d;
  return plan_cell_owner(p, k, ph, x << sh, y << sh);
}

static int by_pair(const void *a, const void *b) {
  const dt_move *x = a, *y = b;
  if (x->from != y->from) return x->from - y->from;
  return x->to - y->to;
}

static int by_round(const void *a, const void *b) {
  const dt_move *x = a, *y = b;
  if (x->round != y->round) return x->round - y->round;
  if (x->from != y->from) return x->from - y->from;
  return x->to - y->to;
}

int plan_moves(const dt_plan *p, int d, int k0, int ph0, int k1, int ph1, dt_move **moves,
               int **buf) {
  int side = 1 << d, n = side * side, nm = 0;
  dt_move *m = calloc((size_t)n + 1, sizeof *m);
  int *b = malloc(((size_t)n + 1) * sizeof *b);
  int *busy = calloc((size_t)p->W * (size_t)(n + 1), sizeof *busy); /* busy[round * W + worker] */
  if (!m || !b || !busy) {
    free(m), free(b), free(busy);
    return -1;
  }
  /* one move per (from, to) pair, its nodes in node order */
  dt_move *tmp = calloc((size_t)n + 1, sizeof *tmp);
  int nt = 0;
  for (int y = 0; y < side; y++)
    for (int x = 0; x < side; x++) {
      int a = plan_node_owner(p, k0, ph0, d, x, y), c = plan_node_owner(p, k1, ph1, d, x, y);
      if (a != c) tmp[nt++] = (dt_move){a, c, 0, plan_node(d, x, y), NULL};
    }
  qsort(tmp, (size_t)nt, sizeof *tmp, by_pair); /* stable enough: nodes added in order below */
  int used = 0;
  for (int i = 0; i < nt;) {
    int j = i;
    m[nm] = (dt_move){tmp[i].from, tmp[i].to, 0, 0, b + used};
    /* the node ids were stashed in count; keep them sorted for a reproducible order */
    for (; j < nt && tmp[j].from == tmp[i].from && tmp[j].to == tmp[i].to; j++)
      b[used + m[nm].count++] = tmp[j].count;
    for (int a = 1; a < m[nm].count; a++)
      for (int c = a; c > 0 && m[nm].nodes[c] < m[nm].nodes[c - 1]; c--) {
        int s = m[nm].nodes[c];
        m[nm].nodes[c] = m[nm].nodes[c - 1];
        m[nm].nodes[c - 1] = s;
      }
    used += m[nm].count;
    nm++;
    i = j;
  }
  free(tmp);
  /* greedy rounds: the first round where neither worker is busy */
  for (int i = 0; i < nm; i++) {
    int r = 0;
    while (busy[r * p->W + m[i].from] || busy[r * p->W + m[i].to]) r++;
    busy[r * p->W + m[i].from] = busy[r * p->W + m[i].to] = 1;
    m[i].round = r;
  }
  free(busy);
  /* the nodes pointers stay valid: qsort moves the structs, not the buffer */
  qsort(m, (size_t)nm, sizeof *m, by_round);
  *moves = m;
  *buf = b;
  return nm;
}

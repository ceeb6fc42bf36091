/* par_alone.c: inputs the blocks cannot split. A triangle lives in the cell of its
 * circumcentre, so a block's worker can insert a point only where the triangles whose circles
 * hold it have their centres in its block. Points over a huge range of scales (--dist wide)
 * make long, thin triangles whose centres lie blocks away from their vertices at every scale:
 * at 16 workers nearly every insertion of the zone and main phases waited, each wait was
 * walked again in later phases, and the run took 4-5x the serial program's time.
 *
 * After worker 0's sample, the sample's mesh tells: the share of the triangles between random
 * sample points that have a vertex outside the block of their own cell. On uniform and
 * clustered points that share is the triangles along the borders, 2-10%, and on points refined
 * toward a centre (--dist graded) 14-21%; over many scales (wide) 55-86%, near a line 79-98%
 * (2 to 16 workers, 300,000 and 2,000,000 points alike: docs/DESIGN.md). Above ALONE_SHARE
 * worker 0, which holds every cell then, inserts every point itself (the serial program's work
 * in the parallel program's cells) while the others wait: the run costs about the serial time,
 * not a multiple of it. DT_ALONE=1 does so on any input (the tests), DT_ALONE=0 never (to
 * measure the blocks on such inputs).
 *
 * Between, above DENSER_SHARE (points refined toward a centre: 14-21%), the blocks work but
 * many points wait: worker 0 first inserts a sample DENSER_FACTOR times as dense (the points of
 * the denser sample's hash, a superset of the sample's), so the triangles the workers start from
 * are smaller. Their own workers meet those points again and find them there (a duplicate of
 * itself: nothing to do). On 5M graded points at 16 workers, a 4x sample took 1.05-1.07 s
 * against 1.62-1.63 (`--sample 1024`, the same points); on uniform points a 4x sample costs
 * worker 0 about 10 ms. DT_DENSER=1 always (the tests), 0 never. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "par.h"

#define ALONE_SHARE 0.4
#define DENSER_SHARE 0.13 /* above (and not alone): worker 0 inserts a denser sample */
#define ALONE_MIN_TRIANGLES 64 /* fewer (a --sample of a few points a block): no answer */

/* The sample's triangles (all three vertices random sample points: the hull band's and the
 * sparse squares' are not a sample of the input, and their number changes with n), and those of
 * them with a vertex outside their cell's block. */
typedef struct reach {
  int64_t triangles, across;
} reach;

static void count_reach(void *ctx, dt_tri *t) {
  reach *r = ctx;
  int out = 0, block = t->cell / 9;
  for (int i = 0; i < 3; i++)
    if (t->v[i] == DT_INF || !par_in_sample(t->v[i], 1)) return;
  for (int i = 0; i < 3; i++) out |= dt_plan_block_of(&G.p, t->p[i][0], t->p[i][1]) != block;
  r->triangles++;
  r->across += out;
}

/* Worker 0, holding every cell: the share of the sample's triangles that reach out (0 where
 * there are too few to tell). */
static double reach_share(void) {
  reach r = {0, 0};
  for (int c = 0; c < G.p.ncells; c++) dt_pool_each(G.pools[c], count_reach, &r);
  return r.triangles >= ALONE_MIN_TRIANGLES ? (double)r.across / (double)r.triangles : 0;
}

static int setting_of(const char *name) {
  const char *v = getenv(name);
  return !v ? -1 : !strcmp(v, "0") ? 0 : !strcmp(v, "1") ? 1 : -2;
}

int par_alone_setting(void) { return setting_of("DT_ALONE"); }
int par_denser_setting(void) { return setting_of("DT_DENSER"); }

/* While worker 0 decides, the others do what they do in any wait (the main phase's sort, with
 * DT_PRESORT=waits). */
int par_alone_decide(void) {
  int choice = 0, setting = par_alone_setting(), denser = par_denser_setting();
  double share = 0;
  if (G.me == 0 && G.W > 1) {
    share = reach_share();
    choice = setting == 1 || (setting == -1 && share > ALONE_SHARE) ? CHOICE_ALONE
            : denser == 1 || (denser == -1 && share > DENSER_SHARE) ? CHOICE_DENSER
                                                                     : CHOICE_BLOCKS;
    if ((G.debug || G.o.phases) && choice != CHOICE_ALONE)
      fprintf(stderr, "delaunay: %.1f%% of the sample's triangles reach out of their block "
              "(worker 0 alone above %.0f%%)\n", 100 * share, 100 * ALONE_SHARE);
    if (choice == CHOICE_DENSER)
      fprintf(stderr, "delaunay: a denser sample (%dx): %.1f%% of the sample's triangles reach "
              "out of their block\n", DENSER_FACTOR, 100 * share);
    if (choice == CHOICE_ALONE && setting == 1)
      fprintf(stderr, "delaunay: note: DT_ALONE=1: worker 0 inserts every point (%.1f%% of "
              "the sample's triangles reach out of their block)\n", 100 * share);
    else if (choice == CHOICE_ALONE)
      fprintf(stderr,
              "delaunay: note: %.1f%% of the sample's triangles reach out of their block (thin "
              "triangles whose circles cross blocks: points over many scales, or nearly on a "
              "line): worker 0 inserts every point\n",
              100 * share);
  }
  if (G.W == 1) return CHOICE_BLOCKS;
  MPI_Request rq;
  double t0 = now();
  MPI_Ibcast(&choice, 1, MPI_INT, 0, sys_comm(), &rq);
  par_wait_prepping(1, &rq);
  G.wait += now() - t0;
  return choice;
}

/* (A denser sample's list is sized for about twice the points the hash should pick, and grows
 * if it must: it is a few thousand of n, where the list of every point is faulted in whole.) */
dt_pt *par_alone_points(size_t *n, int denser) {
  size_t ns = par_points_count(CONF_ZERO), k = 0;
  size_t cap = denser ? 2 * DENSER_FACTOR * (size_t)G.o.sample * (size_t)G.W + 64 : G.in.n + 1;
  cap = cap < G.in.n + 1 ? cap : G.in.n + 1;
  uint8_t *done = calloc(G.in.n + 1, 1);
  dt_pt *inserted = malloc((ns + 1) * sizeof *inserted),
        *list = denser ? malloc(cap * sizeof *list) : dt_alloc(cap * sizeof *list);
  if (!done || !inserted || !list) die("out of memory");
  par_points_copy(CONF_ZERO, inserted);
  for (size_t i = 0; i < ns; i++) done[inserted[i].id] = 1;
  for (int i = 0; i < 3; i++) done[G.start[i]] = 1;
  for (size_t i = 0; i < G.in.n; i++) {
    if (done[i] || (denser && !par_in_sample((int32_t)i, DENSER_FACTOR))) continue;
    if (k == cap && !(list = realloc(list, (cap *= 2) * sizeof *list))) die("out of memory");
    list[k++] = (dt_pt){G.in.xy[2 * i], G.in.xy[2 * i + 1], (int32_t)i, CONF_BLOCK};
  }
  free(done), free(inserted);
  *n = k;
  return list;
}

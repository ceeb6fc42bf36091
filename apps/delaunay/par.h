/* par.h: the parallel program's state and the pieces of it in par_points.c (the points: who
 * inserts which, when) and par_regions.c (the regions: set-up, chunks, postponed points, moves).
 * delaunay.c holds the phases and main(). Nothing here is used by the serial program. */
#ifndef DT_PAR_H
#define DT_PAR_H

#include <mpi.h>

#include "antheap.h"
#include "app.h"
#include "bench.h"
#include "dt.h"
#include "plan.h"

/* A cell's header, an object in the cell's region. */
typedef struct cell_hdr {
  dt_pool pool;
  dt_pt *pend; /* postponed points located in this cell (an object in this region) */
  int64_t npend, cap_pend;
  size_t chunk; /* bytes of the next chunk, growing */
} cell_hdr;

typedef struct par {
  dt_opts o;
  dt_plan p;
  int me, W;
  dt_input in;
  double box[4];
  rid_t *rid;      /* per node */
  int *holder;     /* per node: the worker that holds its region (the same on every worker:
                      each one replays every move, par_regions.c) */
  cell_hdr **hdr;  /* per cell */
  dt_pool **pools; /* per cell: &hdr[c]->pool */
  uint8_t *own;    /* per cell, this worker now */
  dt_mesh m;
  dt_pt *pts; /* points this worker inserts, by level (pad = level) */
  size_t npts;
  dt_pt **pend; /* per cell: postponed in this phase (malloc'd buffers) */
  size_t *npend, *cap_pend;
  int32_t *pairs; /* duplicates: (skipped id, vertex id) */
  size_t npairs, cap_pairs;
  double wcomm, scomm, wait;
  int64_t nchunks;
  int64_t gathered;
  MPI_Datatype pt_type;
  dt_band band; /* points along the hull: inserted at level 0 */
} par;
extern par G;

static inline double now(void) { return bench_now_ns() * 1e-9; }
/* A message naming this worker, then MPI_Abort: the job cannot go on. */
void die(const char *what);

/* ---- par_points.c ---- */
#define ZONE_BIT (1 << 8) /* in dt_pt.pad (the level): a point of a border zone */
/* The first three points not on one line, in input order (every worker finds the same); -1 when
 * all points are on one line. */
int par_pick_start(int32_t s[3]);
/* The box, the mesh's set-up, the hull band, then every point to the worker that inserts it
 * (G.pts, level in pad), the start triangle's points left out. */
void par_distribute(const int32_t start[3]);

/* ---- par_regions.c ---- */
void par_make_regions(void);                        /* worker 0 creates, everyone learns */
int par_refill(void *ctx, int cell, dt_pool *pool); /* dt_refill_fn: a chunk by sys_alloc */
void par_postpone(const dt_pt *q);                  /* into this phase's list of q's cell */
dt_pt *par_take_pending(dt_pt *list, size_t *n);    /* the waiting points of my cells */
void par_store_pending(void);                       /* into my cells' headers */
int64_t par_my_pending(void);
/* Move the depth-d regions from the owners of (k0, ph0) to those of (k1, ph1). */
void par_move(int d, int k0, int ph0, int k1, int ph1);
/* Every cell region to worker 0 (from the owners of the last phase). */
void par_gather_to_0(void);
/* Free every region of the quadtree, each by its holder, the deepest first. */
void par_free_regions(void);

#endif

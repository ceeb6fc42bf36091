/* par.h: the parallel program's state and the pieces of it in par_points.c (the geometry and
 * the points: who inserts which, in which phase) and par_regions.c (the regions: the tree made
 * in parallel, chunks, postponed points, moves between configurations, freeing). delaunay.c
 * holds the phases and main(). Nothing here is used by the serial program. */
#ifndef DT_PAR_H
#define DT_PAR_H

#include <mpi.h>

#include "antheap.h"
#include "app.h"
#include "bench.h"
#include "dt.h"
#include "plan.h"

/* A cell's header, an object in the cell's region (so it travels with it). */
typedef struct cell_hdr {
  dt_pool pool;
  dt_pt *pend; /* postponed points located in this cell (an object in this region) */
  int64_t npend, cap_pend;
  size_t chunk; /* bytes of the next default chunk, growing */
  size_t given; /* bytes of chunks so far */
} cell_hdr;

/* Phases, for the table of where the time goes (--phases). */
enum {
  PH_DISTRIB, /* the box, the blocks, the hull band, every point to who inserts it */
  PH_SETUP,   /* the tree of regions, the cells (in parallel) */
  PH_SAMPLE,  /* worker 0: the hull band and the sample, everything owned */
  PH_SCATTER, /* the cells out from worker 0 (a binary tree of moves) */
  PH_HZ0,     /* the zones of the horizontal borders in their windows (pairs of blocks) */
  PH_HZ1,
  PH_VZ0, /* the zones of the vertical lines (pairs of rows by a line) */
  PH_VZ1,
  PH_VZ2,
  PH_VZ3,
  PH_MAIN, /* every worker its block */
  PH_LEFT, /* what waits: the cells near it gathered, in rounds */
  NPH
};
/* Point tags (dt_pt.pad): the configuration whose phase inserts the point: CONF_ZERO (the
 * sample), CONF_BLOCK (the main phase), CONF_HZ0 .. CONF_VZ3 (the zones). */
#define NPT NCONF

/* One worker's account of one phase (doubles: reduced with MPI_DOUBLE). */
typedef struct ph_stat {
  double total, wcomm, scomm, wait, points, failed, moves, cells;
} ph_stat;
#define PH_FIELDS 8
/* DT_DEBUG's kernel counters per phase (RUSAGE_THREAD: the worker's own thread, not the
 * presort's helper): minor faults, involuntary context switches (the core taken by another
 * thread or process), voluntary ones (sleeps), seconds in dt_populate, and seconds the thread
 * was runnable but waited for a core (/proc/thread-self/schedstat; 0 where the kernel has no
 * schedstat). */
enum { KC_MINFLT, KC_NIVCSW, KC_NVCSW, KC_POP, KC_RUNQ, KC_FIELDS };

enum { PRESORT_ZONES = 1, PRESORT_EARLY = 2, PRESORT_WAITS = 3 };
/* When each cell's main part is made (DT_MAIN_PART; par_regions.c): at set-up, faulted in later
 * (par_presort_populate) by the presort's helper (MAIN_EARLY, the default where the GAS is
 * shared; without a helper by the main phase at its start) or by the main thread in the
 * handshakes' waits (MAIN_WAITS); or at the main phase's first refill (0). */
enum { MAIN_EARLY = 1, MAIN_WAITS = 2 };

typedef struct par {
  dt_opts o;
  dt_plan p;
  int me, W;
  int main_parts; /* 0, MAIN_EARLY or MAIN_WAITS (par_regions.c: main_parts_mode) */
  int presort; /* the main phase's points gathered and sorted before it (par_presort.c): by a
                  helper thread from worker 0's sample on (PRESORT_EARLY: the default where
                  every helper of the host has a core) or from the second zone phase
                  (PRESORT_ZONES), where MPI gave MPI_THREAD_FUNNELED; by the worker in its
                  waits for partners from the sample on (PRESORT_WAITS: the default elsewhere);
                  0: at the main phase's start */
  dt_input in;
  int32_t start[3]; /* the first triangle's points */
  int denser;       /* worker 0 inserted a denser sample (par_alone.c), */
  int denser_now;   /* and does now */
  double box[4];
  rid_t *cell_rid;  /* per cell */
  rid_t *part_rid;  /* per cell: its main part's region (0: none; DT_MAIN_PART) */
  int parts_attached; /* the main parts are in their cells' pools and move with them */
  cell_hdr **hdr;   /* per cell */
  dt_pool **pools;  /* per cell: &hdr[c]->pool */
  int *holder;      /* per cell: who holds it now (every worker follows every move) */
  uint8_t *own;     /* per cell: holder == me */
  int64_t *expect;  /* per cell: points whose cell it is (to size chunks) */
  int64_t *early;   /* per cell: those of them inserted before the main phase (in expect) */
  rid_t *nodes;     /* the tree's regions this worker made and holds, deepest last */
  int nnodes;
  dt_mesh m;
  int32_t *ids; /* the points this worker inserts (their ids: every worker has the input):
                 * from each worker, grouped by tag */
  int *rcnt;    /* per (sender, tag): how many; rcnt[w * NPT + t] */
  size_t *roff; /* per sender: where its points start in ids */
  dt_pt **pend; /* per cell: postponed in this phase (malloc'd buffers) */
  size_t *npend, *cap_pend;
  int32_t *pairs; /* duplicates: (skipped id, vertex id) */
  size_t npairs, cap_pairs;
  double wcomm, scomm, wait;
  int64_t nchunks, gathered;
  int64_t refills; /* par_refill's chunks so far */
  int small_chunks; /* before the main phase: default chunks on refill (par_refill) */
  MPI_Datatype pt_type;
  dt_band band; /* points along the hull: inserted with the sample */
  int *hist;    /* the points per square of an H x H grid over the box (all workers') */
  int hist_side, sparse; /* H; a square with at most `sparse` points is sparse */
  double hist_scale[2];  /* H / the box's width and height (0 when flat) */
  double *zone_sq;       /* per square: --zone spacings of its points (a zone's half-width) */
  double *zone_cap;      /* per block: a quarter of its shorter side (the widest zone) */
  int phase;
  ph_stat ph[NPH], mark; /* per phase; mark: the counters when the phase began */
  int debug;             /* DT_DEBUG is set: phase_begin also reads the kernel's counters */
  double pop;            /* seconds in dt_populate (faulting chunks in) */
  double kc[NPH][KC_FIELDS], kmark[KC_FIELDS]; /* per phase: the kernel's counters (DT_DEBUG) */
  double t0, ph_end[NPH]; /* the run's start (after a barrier); when each phase last ended */
} par;
extern par G;

static inline double now(void) { return bench_now_ns() * 1e-9; }
/* A message naming this worker, then MPI_Abort: the job cannot go on. */
_Noreturn void die(const char *what);
/* Close the current phase's account and open ph's. */
void phase_begin(int ph);

/* ---- par_points.c ---- */
/* The first three points not on one line, in input order (every worker finds the same); -1 when
 * all points are on one line. */
int par_pick_start(int32_t s[3]);
/* The box, the blocks and cells (dt_plan_geometry), the hull band. */
void par_geometry(void);
/* The mesh over the cells' pools (after par_make_regions). */
void par_mesh_init(void);
/* Every point to the worker that inserts it (G.ids, by tag), the start's three left out; the
 * points per cell (G.expect, G.early). */
void par_distribute(const int32_t start[3]);
/* Is the point one of the random sample's (--sample a block; worker 0 inserts them), with the
 * sample `times` as dense (1: the sample's; a denser sample holds it)? */
int par_in_sample(int32_t id, double times);
/* My points of tag t, appended to list[0..*n) (realloc'd). */
dt_pt *par_points_of(int t, dt_pt *list, size_t *n);
/* How many those are, and a copy of them into to[0..count), tag t in pad (reads only the input
 * and the exchange's ids, which nothing writes after par_distribute: a helper thread may
 * copy). */
size_t par_points_count(int t);
void par_points_copy(int t, dt_pt *to);
/* Of that list, the points [from, from + count) into to[from .. from + count). */
void par_points_copy_slice(int t, dt_pt *to, size_t from, size_t count);

/* ---- par_presort.c ---- */
/* Unless DT_PRESORT=0 (G.presort): my points of tag t (par_points_of) put in insertion order
 * from now on, by a helper thread or (PRESORT_WAITS) in this thread's waits (par_prep_piece);
 * when no thread starts, or no memory is had, nothing. */
void par_presort_start(int t, uint64_t seed);
/* What the helper did, for DT_DEBUG: the seconds from its start to the sorted list, then
 * faulting the main parts in; the main thread's wait to join it, then faulting in the rest.
 * With the sort in the waits (in_waits): the seconds sorting in them, finishing the sort at
 * the main phase (joined), then faulting in the rest. */
typedef struct presort_report {
  double sorted, populated, joined, rest;
  int in_waits;
} presort_report;
/* That list (its length in *n, the helper's account in *r) once sorted, or NULL when no sort of
 * tag t was started. For the main phase's tag, the main parts the helper did not fault in are
 * faulted in here. */
dt_pt *par_presort_take(int t, size_t *n, presort_report *r);
/* A cell's main part [at, at + bytes), allocated at set-up, for the helper to fault in after its
 * sort (at most nine: the block's cells). */
void par_presort_populate(void *at, size_t bytes);
/* What the main thread does while it waits for a partner: with DT_PRESORT=waits (or by
 * default where no helper has a core) the next slice of `points` of the main phase's gather and
 * sort, then, as with DT_MAIN_PART=waits (where the helper leaves the main parts alone), the
 * next piece of at most `bytes` of the main parts faulted in; 0 when nothing is left to do (or
 * it is not this thread's). */
int par_prep_piece(size_t points, size_t bytes);
/* The slice a wait does at a time (about 0.1 ms each on the 16-core box). */
#define PREP_POINTS 8192
#define PREP_BYTES (128u << 10)
/* The main phase will not come (par_alone.c): a helper stops faulting in and is joined (after
 * its sort: it cannot be cut short), a sort in the waits is dropped, the list freed. */
void par_presort_drop(void);
/* The first half of that, for a thread that goes on working before dropping it: a helper stops
 * faulting in the main parts once sorted. */
void par_presort_stop(void);

/* ---- par_balance.c ---- */
/* The blocks' edges at the exact quantiles of all points (my slice [lo, hi): a few sums), every
 * block n / W of them. */
void par_balance(size_t lo, size_t hi);
/* DT_BALANCE: 1 (par_balance runs), 0 (unset or 0: the sample's quantiles), -1 (else). */
int par_balance_setting(void);

/* ---- par_regions.c ---- */
/* DT_MAIN_PART: MAIN_EARLY (unset or early), MAIN_WAITS (waits), 0 (late or 0), -1 (else). */
int par_main_part_setting(void);
/* The tree and the cells, all to worker 0; each cell's main part (where G.main_parts) in a
 * region of its own that stays with the cell's maker. */
void par_make_regions(void);
/* At the main phase's start, my cells home: my block's main parts onto their cells' pools; from
 * now on every move of a cell carries its main part's region (every worker calls it). */
void par_attach_parts(void);
/* After the main phase: how many chunks it took from the scheduler here (refills_before:
 * G.refills at the phase's start), for par_debug_totals. */
void par_count_main_refills(int64_t refills_before);
/* DT_DEBUG, after the timed part: worker 0 says how many main parts the workers attached and how
 * many chunks the main phase took from the scheduler (a collective). */
void par_debug_totals(void);
int par_refill(void *ctx, int cell, dt_pool *pool); /* dt_refill_fn: a chunk by sys_alloc */
void par_postpone(const dt_pt *q);                  /* into this phase's list of q's cell */
dt_pt *par_take_pending(dt_pt *list, size_t *n);    /* the waiting points of my cells */
void par_store_pending(void);                       /* into my cells' headers */
int64_t par_my_pending(int64_t *per_cell);          /* in my cells (per cell when not NULL) */
/* Wait for requests rq[0..n), doing the waits' work (par_prep_piece) meanwhile. */
void par_wait_prepping(int n, MPI_Request *rq);
/* Move every cell whose holder differs to its holder in to[] (sys_send/sys_recv in rounds). */
void par_transition(const int *to);
void par_print_moves(void); /* DT_DEBUG: my moves, one line each (stderr) */

/* ---- par_alone.c ---- */
/* DT_ALONE: 1 (worker 0 inserts every point), 0 (never), -1 (unset: the sample's mesh decides),
 * -2 (anything else). */
int par_alone_setting(void);
int par_denser_setting(void); /* DT_DENSER, the same way */
/* A collective after worker 0's sample: CHOICE_ALONE when worker 0 inserts every point (most
 * of the sample's triangles reach across blocks), CHOICE_DENSER when it first inserts a sample
 * DENSER_FACTOR times as dense (more than 13% do: points refined toward a centre), else
 * CHOICE_BLOCKS; said once on stderr. */
enum { CHOICE_BLOCKS, CHOICE_DENSER, CHOICE_ALONE };
#define DENSER_FACTOR 4
int par_alone_decide(void);
/* Worker 0: every point not inserted yet (all but the sample phase's and the start's), or with
 * denser only those of the denser sample, in input order; its count in *n. */
dt_pt *par_alone_points(size_t *n, int denser);

/* ---- par_left.c ---- */
/* What waits after the main phase: rounds of gathering the cells near the waiting points
 * (disks growing fourfold a round) at one holder per group, until none waits. Returns the
 * points that waited. run_phase inserts the points of the cells one holds. */
int64_t par_leftovers(void (*run_phase)(int tag, const dt_pt *start));
/* Free every region, each by its holder, the deepest first. */
void par_free_regions(void);

#endif

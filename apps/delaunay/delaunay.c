/* delaunay.c: parallel Bowyer-Watson on antheap regions (Myrmics section 6.4, Figure 4d): the
 * phases and main(). The regions are in par_regions.c, the points in par_points.c, what waits
 * after the main phase in par_left.c, the decomposition in plan.c.
 *
 * Regions: a binary tree over the workers (made in parallel), each worker's block at its leaves,
 * and under each block its nine cells: an interior and eight strips along the block's sides. A
 * cell's region holds its header (its pool of triangles and its postponed points) and the
 * chunks its triangles are carved from; a triangle lives in the cell of its circumcentre.
 *
 * Any power of two W of workers. The blocks are at the quantiles of a sample of the points
 * (columns, then rows in each column; 4,096 sample points a block, at most 131,072 in all), so
 * each holds about n / W points (within a few percent) on any input; DT_BALANCE=1 makes them
 * exact. Phases:
 *   sample   worker 0, holding every cell, inserts the hull, a band along it, the points of
 *            sparse places (where triangles are large) and a sample (--sample per block);
 *   scatter  the cells go out in a binary tree of moves (m rounds, each a matching);
 *   zones    the points within --zone local spacings of a border, in windows of blocks (cheap
 *            to move: they hold little yet): the horizontal borders in each column (pairs of
 *            blocks, even ones then odd ones), then the vertical lines, a pair of rows of the
 *            left column at a time (even lines then odd ones, even pairs then odd ones: plan.h);
 *            then every triangle that straddles a border is small;
 *   main     every worker its block, no barrier: every move is pairwise, and a worker waits
 *            only for the partners it takes cells from;
 *   left     what had to wait: only the cells it needs move (par_left.c).
 * Where more than 40% of the sample's triangles reach out of their blocks (points over many
 * scales, or near a line), worker 0 inserts every point after its sample instead, and the
 * others wait (par_alone.c; DT_ALONE=0: never, 1: always); where more than 13% do (points
 * refined toward a centre), it first inserts a sample 4 times as dense (DT_DENSER=0/1).
 * An insertion that would read, write or create a triangle outside the worker's cells changes
 * nothing and is postponed into its cell's header, so it travels with the region.
 *
 * Time: computation, worker communication (MPI collectives, sys_send/sys_recv), scheduler
 * communication (sys_ralloc/alloc/free/give) and wait (the pairwise handshake before each move,
 * the sums after the main phase: where imbalance shows). Then, untimed, every region goes to
 * worker 0, which checks the mesh. --phases prints every phase's share; DT_DEBUG=1 also every
 * worker's lines on stderr. To measure what a part is worth, the environment can turn parts
 * off (or on): DT_BALANCE=1 (the blocks at the exact quantiles, par_balance.c, not only a
 * sample's), DT_NO_SQUARES=1 (the distribution places every point on its own, not most by
 * their square's lookup: par_points.c), DT_NO_HINTS=1 (no hint grid
 * for blocked walks), DT_NO_HOT_CELL=1 (every new triangle's cell searched for, not first the
 * last one's rectangle), DT_NO_POPULATE=1 (chunks faulted in page by page), DT_PRESORT=0 (the
 * main phase's points gathered and sorted at its start, not before it: par_presort.c; =waits:
 * by the worker in its waits for partners, the default where a helper thread would share a
 * core; =early: by a helper thread from worker 0's sample on, for which the worker asks
 * MPI_THREAD_FUNNELED, the default where every helper of the host has a core; =zones: the
 * helper from the second zone phase on); DT_MAIN_PART=late (each cell's room for its
 * main-phase triangles allocated at that phase's first refill, not at set-up in a region of its
 * own; =waits: faulted in by the main thread while it waits, not by the helper; par_regions.c);
 * DT_LEFT_ROUNDS=K sends every cell to one worker after K rounds of what waits (the tests).
 * Main entry: main(). */
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "par.h"
#include "pred.h"

par G;

static const char *const ph_name[NPH] = {
    "distribute", "setup", "sample", "scatter", "zone H0", "zone H1", "zone V0",
    "zone V1", "zone V2", "zone V3", "main", "left"};

_Noreturn void die(const char *what) {
  fprintf(stderr, "delaunay: worker %d: error: %s: %s\n", G.me, what, sys_strerror(errno));
  MPI_Abort(sys_comm(), 1);
  exit(1); /* (MPI_Abort may return) */
}

/* The kernel's counters now (kc: KC_FIELDS), for DT_DEBUG's table. */
static void kernel_counters(double *kc) {
  struct rusage ru;
  if (getrusage(RUSAGE_THREAD, &ru)) memset(&ru, 0, sizeof ru);
  kc[KC_MINFLT] = (double)ru.ru_minflt;
  kc[KC_NIVCSW] = (double)ru.ru_nivcsw;
  kc[KC_NVCSW] = (double)ru.ru_nvcsw;
  kc[KC_POP] = G.pop;
  double runq = bench_runq_wait_ns();
  kc[KC_RUNQ] = runq < 0 ? 0 : runq * 1e-9;
}

static void kernel_phase_end(int ph) {
  double k[KC_FIELDS];
  kernel_counters(k);
  for (int i = 0; i < KC_FIELDS; i++) G.kc[ph][i] += k[i] - G.kmark[i], G.kmark[i] = k[i];
}

void phase_begin(int ph) {
  double t = now();
  if (G.debug) kernel_phase_end(G.phase);
  ph_stat *s = &G.ph[G.phase];
  s->total += t - G.mark.total;
  s->wcomm += G.wcomm - G.mark.wcomm;
  s->scomm += G.scomm - G.mark.scomm;
  s->wait += G.wait - G.mark.wait;
  G.ph_end[G.phase] = t - G.t0;
  G.mark = (ph_stat){t, G.wcomm, G.scomm, G.wait, 0, 0, 0, 0};
  G.phase = ph;
}

/* ---- insertion ---- */
static void add_pair(int32_t id, int32_t of) {
  if (G.npairs == G.cap_pairs) {
    G.cap_pairs = G.cap_pairs ? 2 * G.cap_pairs : 64;
    G.pairs = realloc(G.pairs, G.cap_pairs * 2 * sizeof *G.pairs);
    if (!G.pairs) die("out of memory");
  }
  G.pairs[2 * G.npairs] = id;
  G.pairs[2 * G.npairs + 1] = of;
  G.npairs++;
}

/* Insert list[0..n) in order; the points that must wait are kept at the front of list
 * (returns how many). */
static size_t insert_pass(dt_pt *list, size_t n) {
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    int rc = dt_insert(&G.m, &list[i]);
    if (rc == DT_POSTPONED) {
      list[kept] = list[i];
      list[kept++].pad = G.m.blocked_cell; /* what it waits for: par_left.c groups by it */
    } else if (rc == DT_DUPLICATE) {
      /* (itself: worker 0's denser sample had it, and only then; worker 0 there leaves the
       * duplicates of other points to their own workers, who meet them too) */
      if (G.m.dup_of == list[i].id && !(G.denser && par_in_sample(list[i].id, DENSER_FACTOR)))
        die("a point met itself as a vertex outside the denser sample (inserted twice)");
      if (G.m.dup_of != list[i].id && !G.denser_now) add_pair(list[i].id, G.m.dup_of);
    } else if (rc != DT_INSERTED) {
      errno = ENOMEM;
      die("inserting a point (out of memory, or the epoch counter ran out)");
    }
  }
  return kept;
}

/* Passes over what waits while they make progress (a point that met a large triangle reaching
 * out of the window may fit once its neighbours are in). */
static size_t insert_all(dt_pt *list, size_t n) {
  size_t left = insert_pass(list, n);
  for (int pass = 0; pass < 8 && left; pass++) {
    size_t k = insert_pass(list, left);
    if (k == left) break;
    left = k;
  }
  return left;
}

/* One phase, cells held as G.holder says: my points of tag (or none: -1; TAG_ALONE: every
 * point not inserted yet) and the points postponed in my cells, in BRIO order; what still waits
 * goes back into its cells' headers. */
#define TAG_ALONE (-2)
#define TAG_DENSER (-3) /* worker 0's denser sample */
static void run_phase(int tag, const dt_pt *start) {
  size_t n = 0, sorted = 0;
  presort_report pr = {0, 0, 0, 0, 0};
  double t_list = now(); /* (DT_DEBUG: the phase's moves in and set-up are before this) */
  dt_pt *list = NULL;
  if (tag == TAG_ALONE || tag == TAG_DENSER)
    list = par_alone_points(&n, tag == TAG_DENSER);
  else if (tag >= 0 && !(list = par_presort_take(tag, &sorted, &pr)))
    list = par_points_of(tag, NULL, &n);
  else
    n = sorted;
  list = par_take_pending(list, &n); /* after the presorted ones: in an order of their own */
  double tb = now();
  if (list) dt_brio(list + sorted, n - sorted, G.box, G.o.seed + (uint64_t)G.phase);
  tb = now() - tb;
  double ti = now();
  if (start && dt_start(&G.m, &start[0], &start[1], &start[2])) die("the first triangle");
  int64_t before = G.m.st.postponed, steps = G.m.st.walk_steps, cavity = G.m.st.cavity_tris,
          inserted = G.m.st.inserted;
  size_t left = n;
  if (n && !dt_restart(&G.m))
    left = insert_all(list, n);
  else /* nothing of mine has a triangle yet: nothing tried, nothing known it needs */
    for (size_t i = 0; i < n; i++) list[i].pad = -1;
  G.ph[G.phase].points += (double)n;
  G.ph[G.phase].failed += (double)(G.m.st.postponed - before);
  double te = now();
  for (size_t i = 0; i < left; i++) par_postpone(&list[i]);
  free(list);
  par_store_pending();
  if (getenv("DT_DEBUG") && n) {
    char beside[160] = "";
    if (pr.in_waits)
      snprintf(beside, sizeof beside,
               " (and %.4f s sorting in waits before, %.4f s finishing the sort, %.4f s "
               "faulting in the rest)",
               pr.sorted, pr.joined, pr.rest);
    else if (pr.sorted > 0)
      snprintf(beside, sizeof beside,
               " (and %.4f s beside the phases before, then %.4f s faulting in; joined after "
               "%.4f s, %.4f s faulting in the rest)",
               pr.sorted, pr.populated, pr.joined, pr.rest);
    fprintf(stderr,
            "worker %d %s: %zu points, %lld attempts failed, %zu wait; brio %.4f s%s, insert "
            "%.4f s; %.1f walk steps a point (every attempt's), %.1f cavity triangles an "
            "insertion; the phase's %.4f s before its list, %.4f s storing what waits\n",
            G.me, ph_name[G.phase], n, (long long)(G.m.st.postponed - before), left, tb,
            beside, te - ti, (double)(G.m.st.walk_steps - steps) / (double)n,
            (double)(G.m.st.cavity_tris - cavity) /
                (double)(G.m.st.inserted > inserted ? G.m.st.inserted - inserted : 1),
            t_list - G.mark.total, now() - te);
  }
}

/* ---- the phases ---- */
static int *owners(int conf) {
  int *o = malloc((size_t)G.p.ncells * sizeof *o);
  if (!o) die("out of memory");
  dt_plan_owners(&G.p, conf, o);
  return o;
}

/* The cells from worker 0 to their holders in `to`, in m rounds of a binary tree. */
static void scatter(const int *to) {
  int *own = owners(CONF_ZERO);
  for (int r = 1; r <= G.p.m; r++) {
    dt_plan_scatter_step(&G.p, to, r, own);
    par_transition(own);
  }
  free(own);
}

/* The cells to their holders in configuration conf. */
static void transition_to(int conf) {
  int *to = owners(conf);
  par_transition(to);
  free(to);
}

/* The cells to their holders in configuration conf, then its points and what waits there. */
static void phase_in(int ph, int conf) {
  phase_begin(ph);
  transition_to(conf);
  run_phase(conf, NULL);
}

/* Worker 0, holding every cell since the sample, inserts every point (par_alone.c); the others
 * wait for it in a barrier that sleeps between polls (MPI's would spin, and on a host with
 * fewer cores than ranks take cores worker 0 needs), then the leftovers find none. */
static void alone(void) {
  G.small_chunks = 0;
  phase_begin(PH_MAIN);
  if (G.me == 0) {
    G.m.cell_of = NULL; /* every new triangle in cell 0, as the serial program's one cell */
    par_presort_stop(); /* (its helper's main parts will not be used: no faulting them in) */
    int64_t refills = G.refills;
    run_phase(TAG_ALONE, NULL);
    par_count_main_refills(refills);
  }
  par_presort_drop();
  double t0 = now();
  MPI_Request rq;
  int done = 0;
  MPI_Ibarrier(sys_comm(), &rq);
  for (long ns = 10000; MPI_Test(&rq, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done;
       ns = ns < 1000000 ? 2 * ns : ns)
    nanosleep(&(struct timespec){0, ns}, NULL);
  G.wait += now() - t0;
  phase_begin(PH_LEFT);
  G.gathered = par_leftovers(run_phase);
}

static void phases(const int32_t start[3]) {
  dt_pt s3[3];
  for (int i = 0; i < 3; i++)
    s3[i] = (dt_pt){G.in.xy[2 * (size_t)start[i]], G.in.xy[2 * (size_t)start[i] + 1], start[i], 0};
  uint64_t main_seed = G.o.seed + (uint64_t)PH_MAIN;
  if (G.presort == PRESORT_EARLY || G.presort == PRESORT_WAITS)
    par_presort_start(CONF_BLOCK, main_seed);
  phase_begin(PH_SAMPLE);
  G.small_chunks = 1; /* until the main phase: the cells hold little, and move */
  if (G.me == 0) run_phase(CONF_ZERO, s3);
  int choice = par_alone_decide();
  if (choice == CHOICE_ALONE) {
    alone();
    return;
  }
  G.denser = choice == CHOICE_DENSER;
  if (G.denser && G.me == 0) {
    G.denser_now = 1;
    run_phase(TAG_DENSER, NULL);
    G.denser_now = 0;
  }
  phase_begin(PH_SCATTER);
  int *h0 = owners(CONF_HZ0);
  scatter(h0);
  free(h0);
  phase_begin(PH_HZ0);
  run_phase(CONF_HZ0, NULL);
  phase_begin(PH_HZ1);
  transition_to(CONF_HZ1);
  /* Every worker has had cells by now (in HZ0, from the scatter, or just now from HZ0's
   * holders), so worker 0's sample phase is over: the helper no longer slows it */
  if (G.presort == PRESORT_ZONES) par_presort_start(CONF_BLOCK, main_seed);
  run_phase(CONF_HZ1, NULL);
  for (int v = 0; v < 4; v++) phase_in(PH_VZ0 + v, CONF_VZ0 + v);
  G.small_chunks = 0;
  phase_begin(PH_MAIN);
  transition_to(CONF_BLOCK);
  par_attach_parts();
  int64_t refills = G.refills;
  run_phase(CONF_BLOCK, NULL);
  par_count_main_refills(refills);
  phase_begin(PH_LEFT);
  G.gathered = par_leftovers(run_phase);
}

/* ---- the report ---- */
/* Every phase's seconds (slowest worker and mean) and counts (all workers), on worker 0. */
static void phase_table(void) {
  ph_stat mx[NPH], sm[NPH];
  MPI_Reduce(G.ph, mx, NPH * PH_FIELDS, MPI_DOUBLE, MPI_MAX, 0, sys_comm());
  MPI_Reduce(G.ph, sm, NPH * PH_FIELDS, MPI_DOUBLE, MPI_SUM, 0, sys_comm());
  if (G.me != 0) return;
  printf("delaunay: phases, %d workers (seconds: slowest worker, then the mean of comm, sched, "
         "wait; moves, cells moved, points tried and failed attempts: all workers)\n",
         G.W);
  printf("  %-10s %8s %8s %8s %8s %8s %7s %7s %9s %8s\n", "phase", "max", "mean", "comm", "sched",
         "wait", "moves", "cells", "points", "failed");
  double tmax = 0, tmean = 0;
  for (int i = 0; i < NPH; i++) {
    double W = G.W;
    tmax += mx[i].total, tmean += sm[i].total / W;
    printf("  %-10s %8.4f %8.4f %8.4f %8.4f %8.4f %7.0f %7.0f %9.0f %8.0f\n", ph_name[i],
           mx[i].total, sm[i].total / W, sm[i].wcomm / W, sm[i].scomm / W, sm[i].wait / W,
           sm[i].moves / 2, sm[i].cells / 2, sm[i].points, sm[i].failed);
  }
  printf("  %-10s %8.4f %8.4f  (the sum of the phases' slowest is more than the run's total: "
         "they are not all the same worker)\n",
         "sum", tmax, tmean);
}

/* DT_DEBUG: per worker and phase, the worker thread's minor faults (thousands), involuntary
 * context switches, voluntary ones, milliseconds of dt_populate and milliseconds waiting for a
 * core. */
static void kernel_table(void) {
  double *k = G.me == 0 ? malloc((size_t)G.W * NPH * KC_FIELDS * sizeof *k) : NULL;
  if (G.me == 0 && !k) die("out of memory");
  MPI_Gather(G.kc, NPH * KC_FIELDS, MPI_DOUBLE, k, NPH * KC_FIELDS, MPI_DOUBLE, 0, sys_comm());
  if (G.me != 0) return;
  printf("delaunay: inside each phase, thousands of minor faults / involuntary context switches "
         "/ voluntary ones / milliseconds faulting chunks in (dt_populate) / milliseconds "
         "runnable waiting for a core\n");
  for (int w = 0; w < G.W; w++) {
    printf("  %6d", w);
    for (int i = 0; i < NPH; i++) {
      const double *c = &k[((size_t)w * NPH + i) * KC_FIELDS];
      printf(" %.1f/%.0f/%.0f/%.0f/%.1f", c[KC_MINFLT] / 1e3, c[KC_NIVCSW], c[KC_NVCSW],
             1e3 * c[KC_POP], 1e3 * c[KC_RUNQ]);
    }
    printf("\n");
  }
  free(k);
}

/* DT_DEBUG: when each worker ended each phase, in seconds since the run's start (one clock on
 * one host: the ranks' monotonic clocks are the same; the start follows a barrier), so the
 * critical path can be read: who waited for whom between the phases. */
static void timeline(void) {
  double *all = G.me == 0 ? malloc((size_t)G.W * NPH * sizeof *all) : NULL;
  ph_stat *st = G.me == 0 ? malloc((size_t)G.W * NPH * sizeof *st) : NULL;
  if (G.me == 0 && (!all || !st)) die("out of memory");
  MPI_Gather(G.ph_end, NPH, MPI_DOUBLE, all, NPH, MPI_DOUBLE, 0, sys_comm());
  MPI_Gather(G.ph, NPH * PH_FIELDS, MPI_DOUBLE, st, NPH * PH_FIELDS, MPI_DOUBLE, 0, sys_comm());
  if (G.me != 0) return;
  printf("delaunay: timeline (seconds since the start when each worker ended each phase)\n");
  printf("  %6s", "worker");
  for (int i = 0; i < NPH; i++) printf(" %10s", ph_name[i]);
  printf("\n");
  for (int w = 0; w < G.W; w++) {
    printf("  %6d", w);
    for (int i = 0; i < NPH; i++) printf(" %10.4f", all[(size_t)w * NPH + i]);
    printf("\n");
  }
  printf("delaunay: inside each phase, milliseconds waiting for partners / in worker "
         "communication / in scheduler calls / the rest\n");
  for (int w = 0; w < G.W; w++) {
    printf("  %6d", w);
    for (int i = 0; i < NPH; i++) {
      const ph_stat *p = &st[(size_t)w * NPH + i];
      printf(" %.0f/%.0f/%.0f/%.0f", 1e3 * p->wait, 1e3 * p->wcomm, 1e3 * p->scomm,
             1e3 * (p->total - p->wait - p->wcomm - p->scomm));
    }
    printf("\n");
  }
  free(all), free(st);
}

/* Not timed: the duplicates, the timing sums and every cell to worker 0, which collects the
 * triangles, settles duplicates, checks the mesh and reports. Returns nonzero (on worker 0) when
 * something failed. */
static int check_at_0(int world, const dt_times *timed, int collinear) {
  int64_t post = G.m.st.postponed, post_all = 0;
  if (getenv("DT_DEBUG"))
    fprintf(stderr, "worker %d: sched %.3f s in %lld chunk allocations; inserted %lld postponed "
            "%lld (walk %lld cavity %lld cell %lld)\n",
            G.me, G.scomm, (long long)G.nchunks, (long long)G.m.st.inserted,
            (long long)G.m.st.postponed, (long long)G.m.st.blocked_walk,
            (long long)G.m.st.blocked_cavity, (long long)G.m.st.blocked_new);
  MPI_Reduce(&post, &post_all, 1, MPI_INT64_T, MPI_SUM, 0, sys_comm());
  if (G.o.phases || getenv("DT_DEBUG")) phase_table();
  if (!collinear) par_debug_totals(); /* (no main phase on one line: nothing to sum) */
  if (G.debug) timeline(), kernel_table(), par_print_moves();
  int *zero = owners(CONF_ZERO);
  par_transition(zero);
  free(zero);
  int npairs = (int)(2 * G.npairs), *counts = NULL, *displs = NULL, tot = 0;
  if (G.me == 0)
    counts = calloc((size_t)G.W, sizeof *counts), displs = calloc((size_t)G.W, sizeof *displs);
  MPI_Gather(&npairs, 1, MPI_INT, counts, 1, MPI_INT, 0, sys_comm());
  int32_t *allpairs = NULL;
  if (G.me == 0) {
    for (int w = 0; w < G.W; w++) displs[w] = tot, tot += counts[w];
    allpairs = malloc(((size_t)tot + 1) * sizeof *allpairs);
  }
  MPI_Gatherv(G.pairs, npairs, MPI_INT32_T, allpairs, counts, displs, MPI_INT32_T, 0, sys_comm());
  dt_times sum, max;
  MPI_Reduce(timed, &sum, 5, MPI_DOUBLE, MPI_SUM, 0, sys_comm());
  MPI_Reduce(timed, &max, 5, MPI_DOUBLE, MPI_MAX, 0, sys_comm());
  int failed = 0;
  if (G.me == 0) {
    int32_t *tri = NULL, *dup = NULL;
    size_t ntri = 0, ndup = 0;
    if (collinear) {
      if (dt_collinear_duplicates(G.in.xy, G.in.n, &dup, &ndup)) die("out of memory");
    } else {
      ntri = dt_collect(&G.m, NULL, NULL);
      tri = malloc((ntri + 1) * 3 * sizeof *tri);
      if (!tri) die("out of memory for the triangles");
      dt_collect(&G.m, NULL, tri);
      ndup = (size_t)tot / 2;
      if (dt_settle_duplicates(tri, ntri, allpairs, ndup, G.in.n, &dup)) die("out of memory");
    }
    printf("delaunay: %zu points, %d workers, %d schedulers, %d cells; %zu triangles in %.3f s; "
           "%lld postponements, %lld points waited after the main phase\n",
           G.in.n, G.W, world - G.W, G.p.ncells, ntri, max.total, (long long)post_all,
           (long long)G.gathered);
    failed = dt_finish(&G.o, "delaunay", &G.in, tri, ntri, dup, ndup);
    dt_times avg = {sum.compute / G.W, sum.wcomm / G.W, sum.scomm / G.W, sum.wait / G.W,
                    sum.total / G.W};
    dt_report(&G.o, "antheap", G.W, world - G.W, &avg, &max, ntri, post_all, G.gathered);
    printf("delaunay: %d passed, %d failed\n", !failed, failed);
    free(tri), free(dup);
  }
  free(allpairs), free(counts), free(displs);
  return failed;
}

/* ---- main ---- */
/* Every worker reads or makes the points; an error is printed once, by the first worker that
 * met it (all meet the same one, as a rule). */
static int load_once(void) {
  char err[512] = "";
  int mine = dt_load_msg(&G.o, &G.in, err, sizeof err) ? G.me : G.W, first;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, sys_comm());
  if (first == G.W) return 0;
  if (G.me == first && first == 0) fprintf(stderr, "delaunay: error: %s\n", err);
  if (G.me == first && first != 0) fprintf(stderr, "delaunay: worker %d: error: %s\n", G.me, err);
  dt_input_free(&G.in);
  return -1;
}

static int start_up(int argc, char **argv) {
  dt_errors_quiet = G.me != 0; /* every worker parses the same arguments: one says what's wrong */
  int rc = dt_opts_parse(argc, argv, DT_PARALLEL, &G.o);
  if (rc == 0 && dt_plan_init(&G.p, G.W)) {
    if (G.me == 0)
      fprintf(stderr,
              "delaunay: error: the decomposition needs a power-of-two number of workers (1, 2, "
              "4, 8, ... %d); this job has %d (mpirun -np N with N minus the schedulers)\n",
              PLAN_MAX_WORKERS, G.W);
    rc = -1;
  }
  if (rc == 0 && load_once()) rc = -1;
  return rc;
}

static void release(void) {
  for (int c = 0; c < G.p.ncells; c++) free(G.pend[c]);
  free(G.pend), free(G.npend), free(G.cap_pend), free(G.ids), free(G.pairs), free(G.expect);
  free(G.rcnt), free(G.roff), free(G.hist), free(G.zone_sq), free(G.zone_cap);
  free(G.cell_rid), free(G.part_rid), free(G.holder), free(G.hdr), free(G.pools), free(G.own);
  dt_mesh_release(&G.m);
  dt_band_free(&G.band);
  dt_input_free(&G.in);
  dt_plan_free(&G.p);
  MPI_Type_free(&G.pt_type);
}

/* Has every helper of this host a core of its own: its ranks (workers and schedulers) and one
 * helper a worker at most its online processors? Only then does the presort's helper thread
 * start by default. A worker that sleeps while a helper holds its core waits for that core
 * until the kernel's next tick (up to 4 ms on the 16-core box, whose kernel appears to
 * preempt a thread computing in user space only at a tick), and the waits before the main
 * phase are many short handshakes: there the worker sorts in its own waits instead
 * (docs/RESULTS.md, 2026-12-04, third session). */
static int helpers_have_cores(void) {
  MPI_Comm host;
  int workers = 1, ranks = 0, cores = 0;
  if (MPI_Comm_split_type(sys_comm(), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) == MPI_SUCCESS) {
    MPI_Comm_size(host, &workers);
    MPI_Comm_free(&host);
  }
  if (sys_host_load(&ranks, &cores) || ranks <= 0) ranks = workers;
  if (cores <= 0) cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  return cores <= 0 || ranks + workers <= cores;
}

/* DT_PRESORT: unset (-1: by the host), early, zones, waits, 0 (PRESORT_*); -2 for anything
 * else. */
static int presort_setting(void) {
  const char *v = getenv("DT_PRESORT");
  if (!v) return -1;
  static const struct {
    const char *name;
    int mode;
  } modes[] = {{"early", PRESORT_EARLY}, {"zones", PRESORT_ZONES}, {"waits", PRESORT_WAITS},
               {"0", 0}};
  for (size_t i = 0; i < sizeof modes / sizeof *modes; i++)
    if (!strcmp(v, modes[i].name)) return modes[i].mode;
  return -2;
}

/* The environment's settings that take a value, checked by every worker before any work (a
 * collective): a bad one is said once, by the lowest worker that has it. */
static int settings_ok(void) {
  static const struct {
    const char *name, *values;
  } var[] = {{"DT_MAIN_PART", "early, waits, late or 0"},
             {"DT_PRESORT", "early, zones, waits or 0"},
             {"DT_BALANCE", "0 or 1"},
             {"DT_ALONE", "0 or 1"},
             {"DT_DENSER", "0 or 1"}};
  int which = par_main_part_setting() < 0 ? 0
              : presort_setting() == -2   ? 1
              : par_balance_setting() < 0 ? 2
              : par_alone_setting() == -2 ? 3
              : par_denser_setting() == -2 ? 4
                                          : -1;
  int mine = which >= 0 ? G.me : G.W, first = G.W;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, sys_comm());
  if (first == G.me)
    fprintf(stderr, "delaunay: error: %s=%s: %s must be %s\n", var[which].name,
            getenv(var[which].name), var[which].name, var[which].values);
  if (first == G.W && G.me == 0 && getenv("DT_NO_BALANCE")) /* a setting that is gone */
    fprintf(stderr, "delaunay: note: DT_NO_BALANCE is no longer read: the blocks are at a "
                    "sample's quantiles by default, and DT_BALANCE=1 makes them exact\n");
  return first == G.W;
}

int main(int argc, char **argv) {
  if (bench_wants_help(argc, argv)) { /* before sys_init: --help needs no job */
    char *help[] = {argv[0], "--help", NULL};
    return dt_opts_parse(2, help, DT_PARALLEL, &G.o) > 0 ? 0 : 2;
  }
  /* The main phase's points are gathered and sorted before it: by a helper thread (FUNNELED:
   * it makes no MPI call) from worker 0's sample on where every helper of the host has a core
   * (DT_PRESORT=early: everywhere; =zones: from the second zone phase), else by the worker
   * itself in its waits for partners (=waits); =0: at the main phase's start */
  int presort = presort_setting(), level;
  int thread = presort == -1 || presort == PRESORT_EARLY || presort == PRESORT_ZONES;
  if (sys_init_thread(&argc, &argv, thread ? MPI_THREAD_FUNNELED : MPI_THREAD_SINGLE, &level)) {
    fprintf(stderr, "delaunay: error: sys_init failed: %s\n", sys_strerror(errno));
    return 1;
  }
  G.me = sys_worker_id();
  G.W = sys_workers();
  int cores = helpers_have_cores(); /* (a collective: every worker, whatever its environment) */
  G.presort = presort == -1 ? (cores ? PRESORT_EARLY : PRESORT_WAITS) : presort < 0 ? 0 : presort;
  if (thread && G.presort != PRESORT_WAITS && level < MPI_THREAD_FUNNELED)
    G.presort = PRESORT_WAITS; /* no thread: the waits instead */
  int world, rc = settings_ok() ? start_up(argc, argv) : -1;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (rc) {
    sys_finalize();
    return rc > 0 ? 0 : 2;
  }
  G.o.points = (long)G.in.n;
  MPI_Type_contiguous(sizeof(dt_pt), MPI_BYTE, &G.pt_type);
  MPI_Type_commit(&G.pt_type);
  int32_t start[3] = {0, 0, 0};
  int collinear = par_pick_start(start) != 0;
  memcpy(G.start, start, sizeof start);

  MPI_Barrier(sys_comm());
  double t0 = now();
  G.t0 = t0;
  G.phase = PH_DISTRIB;
  G.mark.total = t0;
  G.debug = getenv("DT_DEBUG") != NULL;
  if (G.debug) kernel_counters(G.kmark);
  if (!collinear) {
    par_geometry();
    par_distribute(start);
  }
  phase_begin(PH_SETUP); /* the cells' first chunks sized for the points counted there */
  par_make_regions();
  if (!collinear) {
    par_mesh_init();
    phases(start);
  }
  phase_begin(G.phase); /* closes the last phase's account */
  double total = now() - t0;

  /* the timed part's account, before the check's moves add to the counters */
  dt_times timed = {total - G.wcomm - G.scomm - G.wait, G.wcomm, G.scomm, G.wait, total};
  int failed = check_at_0(world, &timed, collinear);
  MPI_Bcast(&failed, 1, MPI_INT, 0, sys_comm());
  par_free_regions();
  release();
  sys_finalize();
  return failed;
}

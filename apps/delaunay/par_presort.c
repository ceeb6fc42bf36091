/* par_presort.c: the main phase's points gathered from the input and put in insertion order
 * (BRIO) before that phase, while the phases before it run. Between the distribution and the
 * main phase a worker mostly waits (worker 0 inserts the sample while the others wait, the
 * cells come out in rounds of moves, the zones go window by window), and the gather and sort of
 * its main points (a tenth of its main phase) can fill those waits instead of starting the
 * main phase. Two ways (delaunay.c chooses, DT_PRESORT overrides):
 *
 * In the waits (PRESORT_WAITS: the default where a helper thread would share a core, as 16
 * workers and their scheduler do on 16 cores): the worker itself, while a handshake waits for
 * its partner (par_regions.c), does a slice of 8,192 points of the gather or of the sort
 * (dt_brio_step), then of its main parts faulted in, and tests the handshake between slices.
 * What is left when the main phase starts, it does then. No second thread: a worker that
 * sleeps while another thread holds its core waits for that core until the kernel's next tick
 * (up to 4 ms on the 16-core box, whose kernel appears to preempt a thread computing in user
 * space only at a tick, even an idle-priority one); with helpers beside them the workers
 * waited 4-38 ms on run queues in each zone phase, none without (docs/RESULTS.md, 2026-12-04,
 * third session).
 *
 * By a helper thread (PRESORT_EARLY: the default where every helper has a core of its own;
 * from worker 0's sample on; DT_PRESORT=zones: from the second zone phase). The main thread
 * allocates everything (the list and the sort's scratch, untouched) and frees it; the thread
 * copies the points out of the input by the exchange's ids, which nothing writes after the
 * distribution, and sorts them: no MPI, no antheap call, no large allocation or release (which
 * Open MPI's memory hooks would see from a second thread), only page faults and a few small
 * mallocs. The worker asks MPI_THREAD_FUNNELED (delaunay.c). The thread runs under SCHED_IDLE;
 * where the worker is bound to one core (by antheap's launch or the launcher), it may use the
 * others. Before the sample, it once slowed worker 0's scheduler round trips (now there are
 * none); from the second zone phase it was often not done when the main phase began
 * (docs/RESULTS.md, 2026-12-03, second session).
 *
 * With the main parts made at set-up (par_regions.c: DT_MAIN_PART=early, the default where the
 * GAS is shared), the helper, or the waits once the sort is done, also fault in the main parts
 * of the worker's cells, each in a region of its own that its worker holds until the main
 * phase, so that the main phase takes no page fault for its triangles. Faulting pages in
 * changes no byte; the pages are the GAS's shared memory, and the worker's own page table gets
 * their entries, which its main phase then uses. When the main phase starts, the helper stops
 * at its next piece and the main thread faults in the rest; with DT_PRESORT=0 the main phase
 * sorts and faults them all in at its start; with DT_MAIN_PART=waits the main thread faults
 * them in during its waits and a helper leaves them alone. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_attr_setaffinity_np, CPU_ALLOC, SCHED_IDLE */
#endif
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "par.h"

/* The main parts to fault in (par_presort_populate): at most one per cell of the block. */
typedef struct span {
  void *at;
  size_t bytes;
} span;

static struct {
  bool running;
  bool stop; /* the main phase began: the helper stops faulting in (atomic) */
  bool no_populate; /* DT_NO_POPULATE */
  span parts[9];
  int nparts, parts_done; /* parts[0 .. parts_done) are faulted in */
  size_t part_off;        /* and so much of parts[parts_done] */
  double populate;        /* the helper's seconds in it */
  int tag;
  pthread_t thread;
  dt_pt *list;
  size_t n;
  void *scratch;
  double box[4];
  uint64_t seed;
  double seconds; /* wall time from the thread's start to the sorted list */
  int idle_rc;    /* pthread_setschedparam's answer for SCHED_IDLE (0: at idle priority) */
  /* PRESORT_WAITS: the main thread gathers and sorts in its waits (par_prep_piece) */
  bool in_waits;
  size_t scratch_faulted; /* the scratch's first bytes faulted in (before the sort needs them) */
  size_t gathered; /* list[0 .. gathered) copied from the input */
  dt_brio_job job; /* started once gathered */
  bool sorting;
} S;

/* At most `bytes` more of the main parts faulted in, from where the last call stopped: by the
 * helper until the main phase stops it, then by the main thread after joining it; with
 * DT_MAIN_PART=waits only by the main thread (never two threads at once). False when none was
 * left (or DT_NO_POPULATE). */
static bool populate_parts(size_t bytes) {
  if (S.no_populate || S.parts_done >= S.nparts) return false;
  while (bytes && S.parts_done < S.nparts) {
    span *p = &S.parts[S.parts_done];
    size_t k = p->bytes - S.part_off < bytes ? p->bytes - S.part_off : bytes;
    dt_populate((char *)p->at + S.part_off, k);
    bytes -= k;
    if ((S.part_off += k) == p->bytes) S.parts_done++, S.part_off = 0;
  }
  return true;
}

static void *sort_main(void *arg) {
  (void)arg;
  struct sched_param none = {0}; /* (pthread attributes take no SCHED_IDLE) */
  S.idle_rc = pthread_setschedparam(pthread_self(), SCHED_IDLE, &none);
  double t0 = now();
  par_points_copy(S.tag, S.list);
  dt_brio_in(S.list, S.n, S.box, S.seed, S.scratch);
  S.seconds = now() - t0;
  double t1 = now();
  while (G.main_parts == MAIN_EARLY && !__atomic_load_n(&S.stop, __ATOMIC_RELAXED) &&
         populate_parts(1u << 20)) {
  }
  S.populate = now() - t1;
  return NULL;
}

void par_presort_populate(void *at, size_t bytes) {
  S.no_populate = getenv("DT_NO_POPULATE") != NULL;
  uintptr_t a = ((uintptr_t)at + 4095) & ~(uintptr_t)4095, /* its whole pages */
            b = ((uintptr_t)at + bytes) & ~(uintptr_t)4095;
  if (S.nparts < 9 && b > a) S.parts[S.nparts++] = (span){(void *)a, b - a};
}

/* PRESORT_WAITS: the next slice of the gather (with as much of the scratch faulted in: the
 * sort's radix scatters would otherwise take their page faults in one slice), then of the sort;
 * false once the list is sorted. */
static bool sort_piece(size_t points) {
  size_t scratch = dt_brio_scratch_bytes(S.n);
  if (S.scratch_faulted < scratch && !S.no_populate) { /* to a page's end: no page left out */
    uintptr_t base = (uintptr_t)S.scratch, slice = points * (scratch / (S.n ? S.n : 1));
    size_t end = ((base + S.scratch_faulted + slice + 4095) & ~(uintptr_t)4095) - base;
    end = end < scratch ? end : scratch;
    dt_populate((char *)S.scratch + S.scratch_faulted, end - S.scratch_faulted);
    S.scratch_faulted = end;
  }
  if (S.gathered < S.n) {
    size_t k = S.n - S.gathered < points ? S.n - S.gathered : points;
    par_points_copy_slice(S.tag, S.list, S.gathered, k);
    if ((S.gathered += k) == S.n)
      dt_brio_start(&S.job, S.list, S.n, S.box, S.seed, S.scratch), S.sorting = true;
    return true;
  }
  if (!S.sorting) return false;
  S.sorting = dt_brio_step(&S.job, points);
  return true;
}

int par_prep_piece(size_t points, size_t bytes) {
  if (S.in_waits && (S.gathered < S.n || S.sorting)) {
    double t0 = now();
    sort_piece(points);
    S.seconds += now() - t0;
    return 1;
  }
  if (G.main_parts != MAIN_WAITS && !(S.in_waits && G.main_parts == MAIN_EARLY)) return 0;
  double t0 = now();
  bool did = populate_parts(bytes);
  G.pop += now() - t0;
  return did;
}

/* The main thread: the parts nobody faulted in yet (no helper, or DT_PRESORT=0, or waits too
 * short), at the main phase's start, timed as its refills' were. */
static void populate_rest(void) {
  double t0 = now();
  populate_parts(SIZE_MAX);
  G.pop += now() - t0;
}

/* For a worker bound to one core: every core the kernel allows the process. 0, or -1 when the
 * attributes cannot be had. */
static int spread_attr(pthread_attr_t *a, cpu_set_t **set) {
  if (pthread_attr_init(a)) return -1;
  long ncpu = sysconf(_SC_NPROCESSORS_CONF);
  cpu_set_t mine;
  *set = NULL;
  if (ncpu > 1 && sched_getaffinity(0, sizeof mine, &mine) == 0 && CPU_COUNT(&mine) == 1 &&
      (*set = CPU_ALLOC((size_t)ncpu))) {
    size_t bytes = CPU_ALLOC_SIZE((size_t)ncpu);
    CPU_ZERO_S(bytes, *set);
    for (long c = 0; c < ncpu; c++) CPU_SET_S((size_t)c, bytes, *set);
    (void)pthread_attr_setaffinity_np(a, bytes, *set);
  }
  return 0;
}

void par_presort_start(int tag, uint64_t seed) {
  if (!G.presort) return; /* (main: not DT_PRESORT=0) */
  S.tag = tag, S.seed = seed, S.seconds = 0;
  S.no_populate = getenv("DT_NO_POPULATE") != NULL;
  S.n = par_points_count(tag);
  S.list = malloc((S.n + 1) * sizeof *S.list);
  S.scratch = malloc(dt_brio_scratch_bytes(S.n));
  for (int k = 0; k < 4; k++) S.box[k] = G.box[k];
  dt_order_init(); /* the curve's table, built here, not racing */
  if (G.presort == PRESORT_WAITS) {
    S.in_waits = S.list && S.scratch;
    if (!S.in_waits) free(S.list), free(S.scratch), S.list = NULL, S.scratch = NULL;
    return;
  }
  pthread_attr_t a;
  cpu_set_t *set = NULL;
  if (S.list && S.scratch && spread_attr(&a, &set) == 0) {
    S.running = pthread_create(&S.thread, &a, sort_main, NULL) == 0;
    pthread_attr_destroy(&a);
  }
  if (set) CPU_FREE(set);
  if (!S.running) { /* sorted at the phase's start instead */
    free(S.list), free(S.scratch);
    S.list = NULL, S.scratch = NULL;
  }
}

/* The sorted list to the main phase (its length in *n), the scratch freed, then the main parts
 * nobody faulted in yet (their seconds in r->rest). */
static dt_pt *hand_over(size_t *n, presort_report *r) {
  free(S.scratch);
  dt_pt *l = S.list;
  *n = S.n;
  S.list = NULL, S.scratch = NULL;
  double t0 = now();
  populate_rest();
  r->rest = now() - t0;
  return l;
}

/* PRESORT_WAITS at the main phase: the rest of the sort, then of the main parts. */
static dt_pt *take_from_waits(size_t *n, presort_report *r) {
  double t0 = now();
  r->sorted = S.seconds; /* in the waits before */
  r->in_waits = 1;
  while (sort_piece(SIZE_MAX)) {
  }
  r->joined = now() - t0; /* the sort's rest */
  S.in_waits = false;
  return hand_over(n, r);
}

dt_pt *par_presort_take(int tag, size_t *n, presort_report *r) {
  if (S.in_waits && S.tag == tag) return take_from_waits(n, r);
  if (!S.running || S.tag != tag) {
    if (tag == CONF_BLOCK) populate_rest();
    return NULL;
  }
  /* The helper may still be faulting in (at idle priority, on a core that a busy worker keeps):
   * it stops at its next piece, and this thread, its core now free, does the rest */
  __atomic_store_n(&S.stop, true, __ATOMIC_RELAXED);
  double t0 = now();
  pthread_join(S.thread, NULL);
  r->joined = now() - t0;
  S.running = false;
  if (S.idle_rc && getenv("DT_DEBUG"))
    fprintf(stderr, "worker %d: the presort's helper ran at normal priority (SCHED_IDLE: %s)\n",
            G.me, strerror(S.idle_rc));
  r->sorted = S.seconds;
  r->populated = S.populate;
  return hand_over(n, r);
}

void par_presort_stop(void) { __atomic_store_n(&S.stop, true, __ATOMIC_RELAXED); }

void par_presort_drop(void) {
  par_presort_stop();
  if (S.running) pthread_join(S.thread, NULL);
  if (S.sorting && getenv("DT_DEBUG"))
    fprintf(stderr, "worker %d: the main phase's sort in the waits dropped midway\n", G.me);
  if (S.sorting) dt_brio_cancel(&S.job);
  S.running = S.in_waits = S.sorting = false;
  free(S.list), free(S.scratch);
  S.list = NULL, S.scratch = NULL;
}

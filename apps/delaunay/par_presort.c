/* par_presort.c: the main phase's points put in insertion order (dt_brio) by a helper thread
 * while the phases before it run. Between the distribution and the main phase a worker mostly
 * waits (worker 0 inserts the sample while the others wait, the cells come out in rounds of
 * moves, the zones go pair by pair), and the sort of its main points (a tenth of its main
 * phase) can fill that wait instead of starting the main phase. The thread copies its points out
 * of the exchange's buffers (which nobody writes any more) and sorts that array, its own until
 * par_presort_take joins it: no MPI, no antheap call, nothing else shared. It runs on
 * any core of the process's set (a worker is bound to one core, which its own main thread
 * needs) and under SCHED_IDLE: it takes only cycles nobody else wants, so it never delays
 * worker 0's sample phase, which every worker waits for, nor a scheduler's answer, also on a
 * host with fewer cores than ranks. At the main phase the worker waits in pthread_join, its
 * own core then idle, so the sort ends about when it would have there. DT_NO_PRESORT=1 sorts at
 * the main phase's start instead, as before; so does a failure to start the thread. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_ALLOC, SCHED_IDLE */
#endif
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "par.h"

static struct {
  bool running;
  int tag;
  pthread_t thread;
  dt_pt *list;
  size_t n;
  double box[4];
  uint64_t seed;
  double seconds; /* the sort's own time, for DT_DEBUG */
} S;

/* Any core the process may use (the kernel keeps the set to the allowed ones), and only the
 * cycles nobody else wants. */
static void step_aside(void) {
  long ncpu = sysconf(_SC_NPROCESSORS_CONF);
  cpu_set_t *set = ncpu > 0 ? CPU_ALLOC((size_t)ncpu) : NULL;
  if (set) {
    size_t bytes = CPU_ALLOC_SIZE((size_t)ncpu);
    CPU_ZERO_S(bytes, set);
    for (long c = 0; c < ncpu; c++) CPU_SET_S((size_t)c, bytes, set);
    (void)pthread_setaffinity_np(pthread_self(), bytes, set);
    CPU_FREE(set);
  }
  struct sched_param none = {0};
  (void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &none);
}

static void *sort_main(void *arg) {
  (void)arg;
  step_aside();
  double t0 = now();
  S.n = 0;
  S.list = par_points_try(S.tag, NULL, &S.n);
  if (S.list) dt_brio(S.list, S.n, S.box, S.seed);
  S.seconds = now() - t0;
  return NULL;
}

void par_presort_start(int tag, uint64_t seed) {
  const char *off = getenv("DT_NO_PRESORT");
  if (off && *off && *off != '0') return;
  S.tag = tag, S.seed = seed, S.seconds = 0, S.list = NULL;
  for (int k = 0; k < 4; k++) S.box[k] = G.box[k];
  dt_hilbert_key(G.box[0], G.box[2], G.box); /* the curve's table, built here, not racing */
  S.running = pthread_create(&S.thread, NULL, sort_main, NULL) == 0; /* else: at the start */
}

dt_pt *par_presort_take(int tag, size_t *n, double *seconds) {
  if (!S.running || S.tag != tag) return NULL;
  pthread_join(S.thread, NULL);
  S.running = false;
  if (!S.list) die("out of memory for the main phase's points");
  dt_pt *l = S.list;
  *n = S.n;
  *seconds = S.seconds;
  S.list = NULL;
  return l;
}

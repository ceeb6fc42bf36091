/* bh_team.c: a worker rank's team of threads (bh.h, --threads T): T - 1 helper threads that
 * live for the run and the calling thread, which run one function together and return when
 * all of them are done (bh_team_run). The hybrid worker uses it for the step's parts that
 * grow with its bodies: the sort by key (bh_domain.c), the tree (bh_tree.c), the making of the
 * LETs and the walk (bh_run.c). The team calls neither MPI nor antheap.
 *
 * Between runs a thread first spins (BARNES_TEAM_SPIN_US, default 50 us), then sleeps on a
 * condition variable. A thread that sleeps gives its core away, and on a full host (a rank's
 * threads and the scheduler on every core) it may get the core back only at the kernel's next
 * tick, milliseconds later: the run waits for its slowest thread, so every such wake-up is the
 * whole team's. The runs of a step follow each other closely (the tree's levels, the LETs), so
 * a short spin keeps the team awake through them and costs nothing while a run computes. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "bench.h"
#include "bh.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SPIN_PAUSE() _mm_pause()
#else
#define SPIN_PAUSE() ((void)0)
#endif

struct bh_team {
  int T;                   /* threads, the caller included */
  double spin_ns;          /* how long a thread spins before it sleeps */
  pthread_mutex_t mu;
  pthread_cond_t go, done; /* a new run (or the end) for the helpers; the helpers finished */
  atomic_ulong gen;        /* runs started; the helpers follow it */
  atomic_int quit, finished; /* finished: helpers done with the current run */
  void (*fn)(void *ctx, int t, int T);
  void *ctx;
  pthread_t *th;
  struct helper {
    bh_team *tm;
    int t;
  } *args;
};

/* Spin until done(tm, arg) or spin_ns pass; whether it came true. */
static int spin_until(bh_team *tm, int (*done)(bh_team *, unsigned long), unsigned long arg) {
  if (done(tm, arg)) return 1;
  if (tm->spin_ns <= 0) return 0;
  double end = bench_now_ns() + tm->spin_ns;
  for (;;) {
    for (int k = 0; k < 64; k++) {
      if (done(tm, arg)) return 1;
      SPIN_PAUSE();
    }
    if (bench_now_ns() > end) return done(tm, arg);
  }
}

static int new_run(bh_team *tm, unsigned long seen) {
  return atomic_load_explicit(&tm->gen, memory_order_acquire) != seen ||
         atomic_load_explicit(&tm->quit, memory_order_acquire);
}

static int all_finished(bh_team *tm, unsigned long unused) {
  (void)unused;
  return atomic_load_explicit(&tm->finished, memory_order_acquire) == tm->T - 1;
}

/* Wait (spin, then sleep) until done(tm, arg); the waker changes the condition, then
 * broadcasts under the mutex, so a sleeper that tested it under the mutex is woken. */
static void wait_until(bh_team *tm, int (*done)(bh_team *, unsigned long), unsigned long arg,
                       pthread_cond_t *cv) {
  if (spin_until(tm, done, arg)) return;
  pthread_mutex_lock(&tm->mu);
  while (!done(tm, arg)) pthread_cond_wait(cv, &tm->mu);
  pthread_mutex_unlock(&tm->mu);
}

static void wake(bh_team *tm, pthread_cond_t *cv) {
  pthread_mutex_lock(&tm->mu);
  pthread_cond_broadcast(cv);
  pthread_mutex_unlock(&tm->mu);
}

static void *helper_main(void *p) {
  struct helper *h = p;
  bh_team *tm = h->tm;
  unsigned long seen = 0;
  for (;;) {
    wait_until(tm, new_run, seen, &tm->go);
    if (atomic_load_explicit(&tm->quit, memory_order_acquire)) break;
    seen = atomic_load_explicit(&tm->gen, memory_order_acquire);
    tm->fn(tm->ctx, h->t, tm->T);
    if (atomic_fetch_add_explicit(&tm->finished, 1, memory_order_acq_rel) + 1 == tm->T - 1)
      wake(tm, &tm->done);
  }
  return NULL;
}

/* Stop and join helpers 1 .. T - 1, free everything. */
static void team_end(bh_team *tm) {
  atomic_store_explicit(&tm->quit, 1, memory_order_release);
  wake(tm, &tm->go);
  for (int t = 1; t < tm->T; t++) pthread_join(tm->th[t], NULL);
  pthread_cond_destroy(&tm->go);
  pthread_cond_destroy(&tm->done);
  pthread_mutex_destroy(&tm->mu);
  free(tm->th), free(tm->args), free(tm);
}

bh_team *bh_team_new(int T) {
  if (T <= 1) return NULL;
  bh_team *tm = calloc(1, sizeof *tm);
  if (!tm) return NULL;
  tm->th = calloc((size_t)T, sizeof *tm->th);
  tm->args = calloc((size_t)T, sizeof *tm->args);
  if (!tm->th || !tm->args) {
    free(tm->th), free(tm->args), free(tm);
    return NULL;
  }
  pthread_mutex_init(&tm->mu, NULL);
  pthread_cond_init(&tm->go, NULL);
  pthread_cond_init(&tm->done, NULL);
  const char *spin = getenv("BARNES_TEAM_SPIN_US");
  tm->spin_ns = (spin ? atof(spin) : 50) * 1e3;
  tm->T = 1;
  for (int t = 1; t < T; t++) {
    tm->args[t] = (struct helper){tm, t};
    if (pthread_create(&tm->th[t], NULL, helper_main, &tm->args[t])) {
      team_end(tm); /* the helpers made so far wait for a run: told to quit */
      return NULL;
    }
    tm->T = t + 1; /* no run has started: the helpers read T only in one */
  }
  return tm;
}

void bh_team_free(bh_team *tm) {
  if (tm) team_end(tm);
}

int bh_team_size(const bh_team *tm) { return tm ? tm->T : 1; }

void bh_team_run(bh_team *tm, void (*fn)(void *ctx, int t, int T), void *ctx) {
  if (!tm) {
    fn(ctx, 0, 1);
    return;
  }
  tm->fn = fn; /* (the helpers read them after they see gen move: release, acquire) */
  tm->ctx = ctx;
  atomic_store_explicit(&tm->finished, 0, memory_order_relaxed);
  atomic_fetch_add_explicit(&tm->gen, 1, memory_order_release);
  wake(tm, &tm->go);
  fn(ctx, 0, tm->T);
  wait_until(tm, all_finished, 0, &tm->done);
}

void bh_share(size_t n, int t, int T, size_t *lo, size_t *hi) {
  *lo = n * (size_t)t / (size_t)T;
  *hi = n * (size_t)(t + 1) / (size_t)T;
}

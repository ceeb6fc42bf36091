/* bh_team.c: a worker rank's team of threads (bh.h, --threads T): T - 1 helper threads that
 * live for the run and the calling thread, which run one function together and return when
 * all of them are done (bh_team_run). The hybrid worker uses it for the step's parts that
 * grow with its bodies: the sort by key (bh_domain.c), the tree (bh_tree.c), the making of the
 * LETs and the walk (bh_run.c), and copies (bh_team_copy). Helpers wait on a condition
 * variable between runs; what runs on the team makes no MPI call of its own, and calls no
 * antheap but the tree cells' ballocs (bh_tree.c, where antheap runs MPI_THREAD_MULTIPLE; a
 * thread's cache that runs short leases from the schedulers, over MPI, inside its balloc). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bh.h"

struct bh_team {
  int T;                   /* threads, the caller included */
  pthread_mutex_t mu;
  pthread_cond_t go, done; /* a new run (or the end) for the helpers; a helper finished */
  unsigned long gen;       /* runs started; the helpers follow it */
  int quit, finished;      /* helpers done with the current run */
  void (*fn)(void *ctx, int t, int T);
  void *ctx;
  pthread_t *th;
  struct helper {
    bh_team *tm;
    int t;
  } *args;
};

static void *helper_main(void *p) {
  struct helper *h = p;
  bh_team *tm = h->tm;
  unsigned long seen = 0;
  pthread_mutex_lock(&tm->mu);
  for (;;) {
    while (tm->gen == seen && !tm->quit) pthread_cond_wait(&tm->go, &tm->mu);
    if (tm->quit) break;
    seen = tm->gen;
    pthread_mutex_unlock(&tm->mu);
    tm->fn(tm->ctx, h->t, tm->T);
    pthread_mutex_lock(&tm->mu);
    if (++tm->finished == tm->T - 1) pthread_cond_signal(&tm->done);
  }
  pthread_mutex_unlock(&tm->mu);
  return NULL;
}

/* Stop and join helpers 1 .. T - 1, free everything. */
static void team_end(bh_team *tm) {
  pthread_mutex_lock(&tm->mu);
  tm->quit = 1;
  pthread_cond_broadcast(&tm->go);
  pthread_mutex_unlock(&tm->mu);
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
  pthread_mutex_lock(&tm->mu);
  tm->fn = fn;
  tm->ctx = ctx;
  tm->finished = 0;
  tm->gen++;
  pthread_cond_broadcast(&tm->go);
  pthread_mutex_unlock(&tm->mu);
  fn(ctx, 0, tm->T);
  pthread_mutex_lock(&tm->mu);
  while (tm->finished < tm->T - 1) pthread_cond_wait(&tm->done, &tm->mu);
  pthread_mutex_unlock(&tm->mu);
}

void bh_share(size_t n, int t, int T, size_t *lo, size_t *hi) {
  *lo = n * (size_t)t / (size_t)T;
  *hi = n * (size_t)(t + 1) / (size_t)T;
}

typedef struct copy_job {
  char *to;
  const char *from;
  size_t bytes;
} copy_job;

static void copy_share(void *ctx, int t, int T) {
  const copy_job *j = ctx;
  size_t a, z;
  bh_share(j->bytes, t, T, &a, &z);
  memcpy(j->to + a, j->from + a, z - a);
}

void bh_team_copy(bh_team *tm, void *to, const void *from, size_t bytes) {
  copy_job j = {to, from, bytes};
  bh_team_run(bytes >= ((size_t)1 << 20) ? tm : NULL, copy_share, &j);
}

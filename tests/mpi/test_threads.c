/* test_threads.c: every sys_* call from many threads of each worker rank (issue 34), at
 * MPI_THREAD_MULTIPLE (sys_init_thread). Per worker, at once:
 *   - T allocating threads, each in a region of its own and in the root region: random
 *     sys_alloc / sys_free / sys_realloc / sys_balloc of a size mix around the cache's 4-KiB
 *     line, every object filled with a pattern of its own address and checked before it is
 *     freed (a shadow record per object); a share of the objects goes through a mailbox to
 *     other threads, which query, reallocate or free it (cross-thread frees: tcache.h);
 *   - for every other worker and each of C channels, a thread that sends it regions on that
 *     channel (sys_send_on: a list built in the region, walked and checked by the receiver,
 *     which frees it) and a thread that receives from it on the channel: moves from several
 *     threads to different peers and to one peer on several channels at once, each list marked
 *     with its channel (a move taken on another channel fails the check), each sys_send a flush
 *     of every thread's cache while the allocating threads go on.
 * Before them, workers 0 and 1 move two regions on channels 0 and 1, received in the other
 * order (channels_out_of_order). After the threads are joined, the main thread checks that no
 * two live objects of the worker overlap, frees everything (sys_rfree of the threads' regions)
 * and the shutdown check counts every slab back (MISSING and "still leased" fail the test).
 * Last, a thread that allocated calls sys_alloc and sys_free after sys_finalize: NULL, -1 and
 * ENOTCONN (the exit status says it: the summary line comes before sys_finalize).
 * Options: --threads T (4), --ops N (operations per allocating thread, 4000), --rounds R (moves
 * per peer, direction and channel, 6), --channels C (3), --seed S. Prints "test_threads: N passed, M failed". */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "antheap.h"

#define CHECK_NAME "test_threads"
#include "worker_check.h"

static int me, nw, nthreads = 4, rounds = 6, channels = 3;
static long ops = 4000;
static uint64_t seed = 1;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

/* CHECK from threads: the counters of worker_check.h are plain ints, counted under a lock.
 * The condition is evaluated before the lock is taken: it may be a sys_send_on that waits for
 * its peer's receiving thread, which may itself be waiting to count a check. */
#define TCHECK(cond)                                    \
  do {                                                  \
    int ok_ = (cond) ? 1 : 0, err_ = errno;             \
    pthread_mutex_lock(&count_lock);                    \
    check_count(ok_, #cond, __FILE__, __LINE__, err_);  \
    pthread_mutex_unlock(&count_lock);                  \
  } while (0)

typedef struct obj {
  unsigned char *p;
  size_t size;
  rid_t region;
} obj;

static uint64_t rnd(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

/* Mostly the cache's sizes, some up to one slab, a few over (the scheduler's). */
static size_t rnd_size(uint64_t *s) {
  uint64_t r = rnd(s) % 20;
  return r < 14 ? 8 + rnd(s) % 256 : r < 19 ? 257 + rnd(s) % 3840 : 4097 + rnd(s) % 4096;
}

static unsigned char pattern(const void *p, size_t i) {
  return (unsigned char)(((uintptr_t)p >> 6) * 31 + i * 7 + 1);
}
static void fill(obj *o) {
  for (size_t i = 0; i < o->size; i++) o->p[i] = pattern(o->p, i);
}
static bool intact(const obj *o) {
  for (size_t i = 0; i < o->size; i++)
    if (o->p[i] != pattern(o->p, i)) return false;
  return true;
}

/* ---- the mailbox: objects handed from one thread to another ---- */

#define MAILBOX 512
static obj mailbox[MAILBOX];
static int mail_n;
static pthread_mutex_t mail_lock = PTHREAD_MUTEX_INITIALIZER;

static bool post(const obj *o) {
  pthread_mutex_lock(&mail_lock);
  bool ok = mail_n < MAILBOX;
  if (ok) mailbox[mail_n++] = *o;
  pthread_mutex_unlock(&mail_lock);
  return ok;
}
static bool take(obj *o, uint64_t *s) {
  pthread_mutex_lock(&mail_lock);
  bool ok = mail_n > 0;
  if (ok) {
    int i = (int)(rnd(s) % (uint64_t)mail_n);
    *o = mailbox[i];
    mailbox[i] = mailbox[--mail_n];
  }
  pthread_mutex_unlock(&mail_lock);
  return ok;
}

/* ---- allocating threads ---- */

typedef struct worker_thread {
  int t;
  rid_t region; /* this thread's own */
  obj *live;
  size_t n, cap;
  pthread_t th;
} worker_thread;

static void keep(worker_thread *w, const obj *o) {
  if (w->n == w->cap) {
    w->cap = w->cap ? 2 * w->cap : 256;
    w->live = realloc(w->live, w->cap * sizeof *w->live);
  }
  w->live[w->n++] = *o;
}

static void drop_at(worker_thread *w, size_t i) { w->live[i] = w->live[--w->n]; }

static void do_alloc(worker_thread *w, uint64_t *s) {
  obj o = {NULL, rnd_size(s), rnd(s) % 4 ? w->region : SYS_ROOT_REGION};
  o.p = sys_alloc(o.size, o.region);
  TCHECK(o.p != NULL);
  if (!o.p) return;
  fill(&o);
  keep(w, &o);
}

static void do_balloc(worker_thread *w, uint64_t *s) {
  void *v[16];
  int k = 1 + (int)(rnd(s) % 16);
  size_t size = 8 + rnd(s) % 512;
  int rc = sys_balloc(size, w->region, k, v);
  TCHECK(rc == 0);
  for (int i = 0; !rc && i < k; i++) {
    obj o = {v[i], size, w->region};
    fill(&o);
    keep(w, &o);
  }
}

/* Free, reallocate or pass on one object (its owner may be another thread). */
static void do_free(obj *o) {
  TCHECK(intact(o));
  TCHECK(sys_free(o->p) == 0);
}

static void do_realloc(worker_thread *w, obj *o, uint64_t *s) {
  TCHECK(intact(o));
  size_t n = rnd_size(s), keep_n = n < o->size ? n : o->size;
  rid_t to = rnd(s) % 2 ? SYS_SAME_REGION : w->region;
  unsigned char *p = sys_realloc(o->p, n, to);
  TCHECK(p != NULL);
  if (!p) return;
  bool same = true;
  for (size_t i = 0; i < keep_n; i++) same &= p[i] == pattern(o->p, i);
  TCHECK(same);
  obj f = {p, n, to == SYS_SAME_REGION ? o->region : to};
  fill(&f);
  keep(w, &f);
}

static void do_query(const obj *o) {
  rid_t r;
  size_t size;
  TCHECK(sys_query(o->p, &r, &size) == 0 && r == o->region && size >= o->size);
}

static void *allocating(void *arg) {
  worker_thread *w = arg;
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + (uint64_t)me * 1000003u + (uint64_t)w->t * 7919u + 1;
  for (long i = 0; i < ops; i++) {
    uint64_t r = rnd(&s) % 100;
    if (r < 40 || w->n < 8) do_alloc(w, &s);
    else if (r < 43) do_balloc(w, &s);
    else if (r < 70) { /* free one of ours */
      size_t k = rnd(&s) % w->n;
      obj o = w->live[k];
      drop_at(w, k);
      do_free(&o);
    } else if (r < 78) {
      size_t k = rnd(&s) % w->n;
      obj o = w->live[k];
      drop_at(w, k);
      do_realloc(w, &o, &s);
    } else if (r < 88) { /* hand one to another thread */
      size_t k = rnd(&s) % w->n;
      if (post(&w->live[k])) drop_at(w, k);
    } else { /* take one another thread handed out: query, then free or reallocate it */
      obj o;
      if (!take(&o, &s)) continue;
      do_query(&o);
      if (rnd(&s) % 3) do_free(&o);
      else do_realloc(w, &o, &s);
    }
  }
  return NULL;
}

/* ---- moving threads: one sender and one receiver per other worker ---- */

typedef struct node {
  struct node *next;
  uint64_t value;
} node;

#define LIST_LEN 200

/* A mover thread's peer and channel. */
typedef struct {
  int peer, channel;
  pthread_t th;
} mover;

/* The value of node i of round r of a list from worker `from` to worker `to` on channel c. */
static uint64_t node_value(int from, int to, int c, int r, int i) {
  return (uint64_t)from << 40 | (uint64_t)to << 24 | (uint64_t)c << 16 |
         (uint64_t)(r * LIST_LEN + i);
}

static void *sending(void *arg) {
  const mover *m = arg;
  int peer = m->peer;
  for (int r = 0; r < rounds; r++) {
    rid_t reg = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    TCHECK(reg != 0);
    node *head = NULL;
    for (int i = 0; i < LIST_LEN; i++) {
      node *n = sys_alloc(sizeof *n + (size_t)(i % 5) * 40, reg);
      TCHECK(n != NULL);
      if (!n) break;
      n->value = node_value(me, peer, m->channel, r, i);
      n->next = head;
      head = n;
    }
    void *objs[1] = {head};
    TCHECK(sys_send_on(peer, m->channel, &reg, 1, objs, 1) == 0);
  }
  return NULL;
}

static void *receiving(void *arg) {
  const mover *m = arg;
  int peer = m->peer;
  for (int r = 0; r < rounds; r++) {
    rid_t reg;
    void *objs[1];
    int rc = sys_recv_on(peer, m->channel, &reg, 1, objs, 1);
    TCHECK(rc == 0);
    if (rc) continue;
    int k = 0;
    bool ok = true;
    for (node *n = objs[0]; n; n = n->next, k++)
      ok &= n->value == node_value(peer, me, m->channel, r, LIST_LEN - 1 - k);
    TCHECK(ok && k == LIST_LEN);
    TCHECK(sys_rfree(reg) == 0);
  }
  return NULL;
}

/* ---- two channels of one pair, taken in the other order ---- */

#define OOO_BYTES (200u << 10) /* a 200-KiB object a region: data messages even on a private GAS */

static unsigned char ooo_byte(int c, size_t i) { return (unsigned char)(c * 31 + i * 7); }

typedef struct {
  int channel;
  rid_t region;
  unsigned char *obj;
  int rc;
} ooo_move;

static void *ooo_send(void *arg) {
  ooo_move *m = arg;
  void *objs[1] = {m->obj};
  m->rc = sys_send_on(1, m->channel, &m->region, 1, objs, 1);
  return NULL;
}

/* Workers 0 and 1, before anything else: worker 0 sends a region on channel 0 from a thread,
 * then another on channel 1; worker 1 receives channel 1 first, then channel 0. Both objects
 * have the same size, so a receive that took the other channel's list, answer or data would
 * hold the other channel's bytes (on a private GAS the bytes travel as data messages). */
static void channels_out_of_order(void) {
  if (me == 0) {
    ooo_move m[2];
    for (int c = 0; c < 2; c++) {
      m[c] = (ooo_move){.channel = c, .region = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT)};
      CHECK(m[c].region != 0);
      m[c].obj = m[c].region ? sys_alloc(OOO_BYTES, m[c].region) : NULL;
      CHECK(m[c].obj != NULL);
      if (!m[c].obj) return;
      for (size_t i = 0; i < OOO_BYTES; i++) m[c].obj[i] = ooo_byte(c, i);
    }
    pthread_t th;
    pthread_create(&th, NULL, ooo_send, &m[0]);
    usleep(50000); /* channel 0's move is on its way first */
    ooo_send(&m[1]);
    pthread_join(th, NULL);
    CHECK(m[0].rc == 0 && m[1].rc == 0);
  } else if (me == 1) {
    for (int c = 1; c >= 0; c--) {
      rid_t r = 0;
      void *objs[1] = {NULL};
      int rc = sys_recv_on(0, c, &r, 1, objs, 1);
      CHECK(rc == 0);
      if (rc) continue;
      const unsigned char *p = objs[0];
      size_t wrong = 0;
      for (size_t i = 0; i < OOO_BYTES; i++) wrong += p[i] != ooo_byte(c, i);
      CHECK(wrong == 0);
      CHECK(sys_rfree(r) == 0);
    }
  }
}

/* ---- after the threads: no two live objects overlap ---- */

static int by_addr(const void *a, const void *b) {
  const obj *x = a, *y = b;
  return (x->p > y->p) - (x->p < y->p);
}

static void check_no_overlap(worker_thread *w) {
  size_t n = (size_t)mail_n;
  for (int t = 0; t < nthreads; t++) n += w[t].n;
  obj *all = malloc((n + 1) * sizeof *all);
  size_t k = 0;
  for (int i = 0; i < mail_n; i++) all[k++] = mailbox[i];
  for (int t = 0; t < nthreads; t++)
    for (size_t i = 0; i < w[t].n; i++) all[k++] = w[t].live[i];
  qsort(all, k, sizeof *all, by_addr);
  size_t overlaps = 0, broken = 0;
  for (size_t i = 0; i < k; i++) {
    if (i + 1 < k && all[i].p + all[i].size > all[i + 1].p) overlaps++;
    if (!intact(&all[i])) broken++;
  }
  CHECK(overlaps == 0);
  CHECK(broken == 0);
  free(all);
}

/* A thread that allocated, so has a cache, and calls again after sys_finalize: the library
 * answers "not up" (ENOTCONN), allocating nothing and freeing nothing, and does not crash. */
typedef struct late_thread {
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int step;            /* 1: allocated (main may finalize); 2: finalized (call again) */
  void *p, *q;
  int alloc_errno, free_rc, free_errno;
} late_thread;

static void late_wait(late_thread *l, int step) {
  pthread_mutex_lock(&l->mu);
  while (l->step < step) pthread_cond_wait(&l->cv, &l->mu);
  pthread_mutex_unlock(&l->mu);
}

static void late_step(late_thread *l, int step) {
  pthread_mutex_lock(&l->mu);
  l->step = step;
  pthread_cond_broadcast(&l->cv);
  pthread_mutex_unlock(&l->mu);
}

static void *late_calls(void *arg) {
  late_thread *l = arg;
  l->p = sys_alloc(64, SYS_ROOT_REGION);
  if (l->p) sys_free(l->p); /* (its slab stays in this thread's cache until the flush) */
  late_step(l, 1);
  late_wait(l, 2);
  errno = 0;
  l->q = sys_alloc(64, SYS_ROOT_REGION);
  l->alloc_errno = errno;
  errno = 0;
  l->free_rc = sys_free(l->p);
  l->free_errno = errno;
  return NULL;
}

static void options(int argc, char **argv) {
  for (int i = 1; i + 1 < argc; i++) {
    if (!strcmp(argv[i], "--threads")) nthreads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--ops")) ops = atol(argv[++i]);
    else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--channels")) channels = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seed")) seed = strtoull(argv[++i], NULL, 10);
  }
}

int main(int argc, char **argv) {
  int provided = -1;
  bool bad_level = sys_init_thread(&argc, &argv, 12345, &provided) == -1 && errno == EINVAL;
  if (sys_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided)) {
    fprintf(stderr, "test_threads: sys_init_thread: %s\n", sys_strerror(errno));
    return 1;
  }
  options(argc, argv);
  me = sys_worker_id();
  nw = sys_workers();
  CHECK(bad_level); /* a level MPI does not have is EINVAL, and nothing started */
  CHECK(provided == MPI_THREAD_MULTIPLE);
  if (provided != MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "test_threads: MPI gave thread level %d, not MPI_THREAD_MULTIPLE\n", provided);
    sys_finalize();
    return 1;
  }
  worker_thread *w = calloc((size_t)nthreads, sizeof *w);
  for (int t = 0; t < nthreads; t++) {
    w[t].t = t;
    w[t].region = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    CHECK(w[t].region != 0);
  }
  if (nw >= 2) channels_out_of_order();
  /* channels outside 0 .. SYS_MOVE_CHANNELS - 1: EINVAL, and nothing leaves (no receiver) */
  rid_t none = 0;
  int other = nw > 1 ? 1 - (me & 1) : 0; /* a valid peer: only the channel is wrong */
  CHECK(sys_send_on(other, -1, &none, 0, NULL, 0) == -1 && errno == EINVAL);
  CHECK(sys_recv_on(other, SYS_MOVE_CHANNELS, &none, 0, NULL, 0) == -1 && errno == EINVAL);
  size_t nm = 2 * (size_t)nw * (size_t)channels;
  mover *movers = calloc(nm, sizeof *movers);
  for (int t = 0; t < nthreads; t++) pthread_create(&w[t].th, NULL, allocating, &w[t]);
  for (int p = 0; p < nw; p++)
    for (int c = 0; p != me && c < channels; c++) {
      mover *s = &movers[2 * ((size_t)p * channels + c)], *r = s + 1;
      *s = (mover){.peer = p, .channel = c};
      *r = (mover){.peer = p, .channel = c};
      pthread_create(&s->th, NULL, sending, s);
      pthread_create(&r->th, NULL, receiving, r);
    }
  for (int t = 0; t < nthreads; t++) pthread_join(w[t].th, NULL);
  for (int p = 0; p < nw; p++)
    for (int c = 0; p != me && c < channels; c++) {
      pthread_join(movers[2 * ((size_t)p * channels + c)].th, NULL);
      pthread_join(movers[2 * ((size_t)p * channels + c) + 1].th, NULL);
    }
  check_no_overlap(w);
  CHECK(sys_barrier() == 0); /* flushes every thread's cache: the schedulers know every object */
  for (int i = 0; i < mail_n; i++) do_query(&mailbox[i]);
  for (int t = 0; t < nthreads; t++)
    for (size_t i = 0; i < w[t].n; i++) do_query(&w[t].live[i]);
  for (int i = 0; i < mail_n; i++) /* root-region objects go one by one */
    if (mailbox[i].region == SYS_ROOT_REGION) CHECK(sys_free(mailbox[i].p) == 0);
  for (int t = 0; t < nthreads; t++) {
    for (size_t i = 0; i < w[t].n; i++)
      if (w[t].live[i].region == SYS_ROOT_REGION) CHECK(sys_free(w[t].live[i].p) == 0);
    CHECK(sys_rfree(w[t].region) == 0);
    free(w[t].live);
  }
  free(w);
  free(movers);
  late_thread late = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
  bool started = pthread_create(&late.th, NULL, late_calls, &late) == 0;
  CHECK(started);
  if (started) late_wait(&late, 1);
  CHECK(!started || late.p != NULL);
  int bad = check_summary(sys_comm(), "");
  sys_finalize();
  if (!started) return 1;
  late_step(&late, 2);
  pthread_join(late.th, NULL);
  if (late.q || late.alloc_errno != ENOTCONN || late.free_rc != -1 || late.free_errno != ENOTCONN) {
    fprintf(stderr, "test_threads: after sys_finalize, another thread's sys_alloc gave %p "
                    "(errno %d) and sys_free %d (errno %d); expected NULL, -1 and ENOTCONN\n",
            late.q, late.alloc_errno, late.free_rc, late.free_errno);
    bad = 1;
  }
  return bad;
}

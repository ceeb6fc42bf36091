/* test_tcache.c: per-thread allocation caches (src/worker/tcache.c) against a fake scheduler,
 * with real threads and no MPI: the set that the ThreadSanitizer build runs (scripts/test).
 * The fake scheduler leases slabs of one arena, takes them back with their live bitmaps and
 * keeps the live slots as its own objects; a free it gets (ESRCH from the caches, or a remote
 * free whose slab went back) must name one of those. At the end every slab is back and the
 * scheduler's objects are exactly those the threads still hold. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "worker/tcache_hot.h"

#define ARENA_SLABS 8192
static unsigned char *arena;
static pthread_mutex_t sched_lock = PTHREAD_MUTEX_INITIALIZER;
static bool leased[ARENA_SLABS];
static uint64_t objects[ARENA_SLABS]; /* the scheduler's live slots, by slab */
static uint32_t slot_of[ARENA_SLABS];
static long leased_now;
static atomic_long errors; /* counted by every thread */

static size_t slab_index(uintptr_t a) { return (a - (uintptr_t)arena) / AH_SLAB_SIZE; }

static void lock(void) { pthread_mutex_lock(&sched_lock); }
static void unlock(void) { pthread_mutex_unlock(&sched_lock); }

/* (called under lock: tcache.c takes it around the backend) */
static int fake_lease(void *ctx, uint32_t rid, size_t size, uint32_t want, uint32_t min,
                      int32_t *sched, uint32_t *slot, uintptr_t *slabs, uint32_t *got) {
  (void)ctx, (void)rid;
  uint32_t n = 0;
  for (size_t i = 0; i < ARENA_SLABS && n < want; i++)
    if (!leased[i] && !objects[i]) {
      leased[i] = true;
      slot_of[i] = (uint32_t)ah_round_up(size, AH_SLOT_ALIGN);
      slabs[n++] = (uintptr_t)arena + i * AH_SLAB_SIZE;
    }
  if (n < min) {
    for (uint32_t k = 0; k < n; k++) leased[slab_index(slabs[k])] = false;
    return ENOMEM;
  }
  leased_now += n;
  *sched = 1;
  *slot = (uint32_t)ah_round_up(size, AH_SLOT_ALIGN);
  *got = n;
  return 0;
}

static int fake_unlease(void *ctx, int32_t sched, const uint64_t *pairs, uint32_t n,
                        uint64_t *dropped) {
  (void)ctx, (void)sched;
  for (uint32_t k = 0; k < n; k++) {
    size_t i = slab_index(pairs[2 * k]);
    if (!leased[i]) errors++;
    leased[i] = false;
    objects[i] = pairs[2 * k + 1];
    leased_now--;
  }
  *dropped = 0;
  return 0;
}

/* A free the caches did not serve: one of the scheduler's objects, else EINVAL. */
static int fake_free(uintptr_t a) {
  lock();
  size_t i = slab_index(a);
  uint32_t s = slot_of[i], k = (uint32_t)((a & (AH_SLAB_SIZE - 1)) / (s ? s : 1));
  int rc = EINVAL;
  if (s && !leased[i] && (a & (AH_SLAB_SIZE - 1)) % s == 0 && (objects[i] >> k & 1)) {
    objects[i] &= ~(1ull << k);
    rc = 0;
  }
  unlock();
  return rc;
}

static long scheduler_objects(void) {
  long n = 0;
  for (size_t i = 0; i < ARENA_SLABS; i++) n += __builtin_popcountll(objects[i]);
  return n;
}

static void setup(void) {
  arena = aligned_alloc(AH_SLAB_SIZE, (size_t)ARENA_SLABS * AH_SLAB_SIZE);
  memset(leased, 0, sizeof leased);
  memset(objects, 0, sizeof objects);
  memset(slot_of, 0, sizeof slot_of);
  leased_now = 0;
  errors = 0;
  cache_config cfg = cache_config_default();
  cfg.max_grant = 64; /* small leases: more traffic, more interleavings */
  cfg.max_idle = 128;
  tcache_setup s = {.be = {.lease = fake_lease, .unlease = fake_unlease},
                    .lock = lock, .unlock = unlock,
                    .gas_base = (uintptr_t)arena, .gas_size = (size_t)ARENA_SLABS * AH_SLAB_SIZE,
                    .cfg = &cfg, .free_elsewhere = fake_free};
  ck_assert_int_eq(tcaches_start(&s), 0);
}

static void teardown(void) {
  tcaches_stop();
  free(arena);
}

/* Free wherever it lives: a cache, else the scheduler. */
static int free_any(void *p) {
  int rc = tcache_free((uintptr_t)p);
  return rc == ESRCH ? fake_free((uintptr_t)p) : rc;
}

/* As sys_alloc and sys_free take them (api.c): the inline hit first, the whole way after a
 * miss. */
static atomic_long hits; /* allocations and frees the hits served */
static int alloc_as_api(size_t size, uint32_t rid, uintptr_t *a) {
  if (!tcache_fast || !tcache_alloc_hit(tcache_fast, size, rid, a)) return tcache_alloc(size, rid, a);
  hits++;
  return 0;
}
static int free_as_api(void *p) {
  if (!tcache_fast || !tcache_free_hit(tcache_fast, (uintptr_t)p)) return free_any(p);
  hits++;
  return 0;
}

/* ---- one thread's own objects ---- */

START_TEST(test_a_thread_allocates_and_frees_with_no_lease_per_object) {
  void *p[1000];
  for (int i = 0; i < 1000; i++) {
    uintptr_t a;
    ck_assert_int_eq(tcache_alloc(100, 7, &a), 0);
    p[i] = (void *)a;
    memset(p[i], i & 0xff, 100);
  }
  for (int i = 0; i < 1000; i++) ck_assert_int_eq(tcache_free((uintptr_t)p[i]), 0);
  cache_stats st;
  tcaches_stats(&st);
  ck_assert_uint_eq(st.allocs, 1000);
  ck_assert_uint_le(st.leases, 8);
  ck_assert_int_eq(tcaches_count(), 1);
}
END_TEST

/* ---- remote frees ---- */

typedef struct batch {
  uintptr_t *p;
  int n;
} batch;

static void *free_batch(void *arg) {
  batch *b = arg;
  for (int i = 0; i < b->n; i++)
    if (tcache_free(b->p[i])) errors++;
  return NULL;
}

START_TEST(test_objects_freed_by_another_thread_come_back_to_the_owner_at_its_next_allocation) {
  enum { N = 500 };
  uintptr_t p[N];
  for (int i = 0; i < N; i++) ck_assert_int_eq(tcache_alloc(64, 1, &p[i]), 0);
  batch b = {p, N};
  pthread_t th;
  pthread_create(&th, NULL, free_batch, &b);
  pthread_join(th, NULL);
  ck_assert_int_eq(errors, 0);
  cache_stats st;
  tcaches_stats(&st);
  ck_assert_uint_eq(st.frees, 0); /* still on the owner's list */
  uintptr_t q;
  ck_assert_int_eq(tcache_alloc(64, 1, &q), 0);
  tcaches_stats(&st);
  ck_assert_uint_eq(st.frees, N);
  ck_assert_int_eq(tcaches_count(), 1); /* a thread that only frees needs no cache */
  ck_assert_int_eq(tcache_free(q), 0);
}
END_TEST

static void *free_one(void *arg) {
  *(int *)arg = tcache_free(((uintptr_t *)arg)[1]);
  return NULL;
}

START_TEST(test_a_free_of_an_interior_pointer_from_another_thread_is_einval) {
  uintptr_t a;
  ck_assert_int_eq(tcache_alloc(128, 1, &a), 0);
  uintptr_t arg[2] = {0, a + 64};
  pthread_t th;
  pthread_create(&th, NULL, free_one, arg);
  pthread_join(th, NULL);
  ck_assert_int_eq((int)arg[0], EINVAL);
  ck_assert_int_eq(tcache_free(a), 0);
}
END_TEST

START_TEST(test_a_double_free_from_another_thread_is_found_by_the_owner_and_ignored) {
  uintptr_t a, b;
  ck_assert_int_eq(tcache_alloc(64, 1, &a), 0);
  uintptr_t p[2] = {a, a}; /* freed twice by the other thread */
  batch bt = {p, 2};
  pthread_t th;
  pthread_create(&th, NULL, free_batch, &bt);
  pthread_join(th, NULL);
  ck_assert_int_eq(errors, 0); /* both pushes are taken: the owner judges them */
  ck_assert_int_eq(tcache_alloc(64, 1, &b), 0); /* takes the list: one free, one reported */
  cache_stats st;
  tcaches_stats(&st);
  ck_assert_uint_eq(st.frees, 1);
  ck_assert_int_eq(tcache_free(b), 0);
  ck_assert_int_eq(tcache_free(b), EINVAL); /* the owner's own double free stays exact */
}
END_TEST

/* ---- threads allocating while others flush ---- */

#define THREADS 4
static atomic_bool stop_flushing;
static uintptr_t *mail; /* objects passed between threads */
static int mail_n;
static pthread_mutex_t mail_lock = PTHREAD_MUTEX_INITIALIZER;

typedef struct held {
  uintptr_t *p;
  int n;
  bool as_api; /* through the inline hits (alloc_as_api, free_as_api) */
} held;

static void *churn(void *arg) {
  held *h = arg;
  uint64_t x = (uint64_t)(uintptr_t)arg | 1;
  for (int it = 0; it < 20000; it++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    if (h->n < 64 || x % 3 == 0) {
      uintptr_t a;
      size_t size = 16 + x % 1000;
      uint32_t rid = (uint32_t)(x % 3);
      if (h->as_api ? alloc_as_api(size, rid, &a) : tcache_alloc(size, rid, &a)) {
        errors++;
        continue;
      }
      *(uintptr_t *)a = a; /* the object names itself: an overlap would break it */
      h->p[h->n++] = a;
    } else {
      int k = (int)(x % (uint64_t)h->n);
      uintptr_t a = h->p[k];
      h->p[k] = h->p[--h->n];
      if (*(uintptr_t *)a != a) errors++;
      if (x % 4 == 0) { /* to another thread */
        pthread_mutex_lock(&mail_lock);
        mail[mail_n++] = a;
        int j = (int)(x % (uint64_t)mail_n);
        a = mail[j];
        mail[j] = mail[--mail_n];
        pthread_mutex_unlock(&mail_lock);
        if (*(uintptr_t *)a != a) errors++;
      }
      if (h->as_api ? free_as_api((void *)a) : free_any((void *)a)) errors++;
    }
  }
  return NULL;
}

static void *flushing(void *arg) {
  (void)arg;
  while (!atomic_load(&stop_flushing)) {
    uint64_t r = 0, d = 0;
    if (tcaches_flush(&r, &d)) errors++;
  }
  return NULL;
}

/* _i = 0: through tcache_alloc / tcache_free; 1: as the API takes them (the inline hits). */
START_TEST(test_flushes_while_threads_allocate_and_free_across_threads_lose_nothing) {
  mail = malloc(THREADS * 20000 * sizeof *mail);
  mail_n = 0;
  held h[THREADS];
  pthread_t th[THREADS], fl;
  atomic_store(&stop_flushing, false);
  for (int t = 0; t < THREADS; t++) {
    h[t].p = malloc(20000 * sizeof(uintptr_t));
    h[t].n = 0;
    h[t].as_api = _i == 1;
    hits = 0;
    pthread_create(&th[t], NULL, churn, &h[t]);
  }
  pthread_create(&fl, NULL, flushing, NULL);
  for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
  atomic_store(&stop_flushing, true);
  pthread_join(fl, NULL);
  uint64_t r = 0, d = 0;
  ck_assert_int_eq(tcaches_flush(&r, &d), 0);
  ck_assert_int_eq(errors, 0);
  ck_assert_int_eq(leased_now, 0);
  long live = mail_n;
  for (int t = 0; t < THREADS; t++) live += h[t].n;
  ck_assert_int_eq(scheduler_objects(), live); /* every live object known, nothing else */
  if (_i == 1) /* the hits served (none where the owners must fence instead); how much of it
                 * depends on the schedule: a flusher or pending remote frees send them the
                 * whole way, and under valgrind, which runs one thread at a time, that is most */
    ck_assert(tcache_fence ? hits == 0 : hits > 0);
  for (int t = 0; t < THREADS; t++) free(h[t].p);
  free(mail);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("tcache");
  TCase *tc = tcase_create("threads");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_a_thread_allocates_and_frees_with_no_lease_per_object);
  tcase_add_test(tc, test_objects_freed_by_another_thread_come_back_to_the_owner_at_its_next_allocation);
  tcase_add_test(tc, test_a_free_of_an_interior_pointer_from_another_thread_is_einval);
  tcase_add_test(tc, test_a_double_free_from_another_thread_is_found_by_the_owner_and_ignored);
  tcase_add_loop_test(tc, test_flushes_while_threads_allocate_and_free_across_threads_lose_nothing,
                      0, 2);
  suite_add_tcase(s, tc);
  return s;
}

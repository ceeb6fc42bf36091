/* tcache.c: per-thread allocation caches (tcache.h): the registry of every thread's cache,
 * the owner's guard (busy / stop, membarrier), frees of other threads' objects (their
 * owners' remote-free lists, mpsc.h), lookups of them, and the flush of every thread's cache.
 * Main entries: tcache_alloc, tcache_free, tcaches_flush. */
#include "worker/tcache.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "worker/tcache_hot.h"
#include "worker/slabmap.h"

static struct {
  tcache_setup s;
  cache_config cfg;
  slabmap map;
  _Atomic(tcache *) all;       /* every cache made since tcaches_start */
  _Atomic int count;
  pthread_key_t key;           /* its destructor keeps an exiting thread's cache for the next */
  unsigned run;                /* tcaches_start calls so far */
} T;

static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER; /* one flusher at a time */
_Thread_local tcache *tcache_mine __attribute__((tls_model("initial-exec")));
_Thread_local tcache *tcache_fast __attribute__((tls_model("initial-exec")));
/* Caches of earlier runs (tcaches_stop), stopped for good: threads may still point at them. */
static tcache *parked;
bool tcache_fence, tcache_hits_on;

/* ---- the owner's guard ---- */

/* The owner enters an operation: true on the fast path (busy set, nobody stopping), false when
 * a stopper was there first (then the owner holds mu; the stopper has finished). */
static inline bool enter(tcache *t) {
  if (tcache_enter_fast(t)) return true;
  pthread_mutex_lock(&t->mu);
  return false;
}

static inline void leave(tcache *t, bool fast) {
  if (fast) tcache_leave_fast(t);
  else pthread_mutex_unlock(&t->mu);
}

/* Every running thread of the process executes a full memory barrier (tcache.h). */
static void barrier_everywhere(void) {
  if (!tcache_fence) syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

static void stop_begin(tcache *t) {
  pthread_mutex_lock(&t->mu);
  atomic_store(&t->stop, 1);
}

static void stop_wait(tcache *t) {
  while (atomic_load_explicit(&t->busy, memory_order_acquire)) sched_yield();
}

/* Stop every cache from head on at once: one barrier for all of them. */
static void stop_all(tcache *head) {
  for (tcache *t = head; t; t = t->next) stop_begin(t);
  barrier_everywhere();
  for (tcache *t = head; t; t = t->next) stop_wait(t);
}

/* Take another thread's cache (or one's own, outside an operation) for a while. */
static void stop(tcache *t) {
  stop_begin(t);
  barrier_everywhere();
  stop_wait(t);
}

static void resume(tcache *t) {
  atomic_store_explicit(&t->stop, 0, memory_order_release);
  pthread_mutex_unlock(&t->mu);
}

/* ---- remote frees ---- */

/* Free in t's cache what other threads freed (t's owner, or a stopper of t). An object whose
 * slab went back to its scheduler meanwhile is freed there (free_elsewhere). One that is not a
 * live object is a double free from another thread, found only now, and it ends the walk: an
 * object pushed twice had its link overwritten by the second push, so the list may run in a
 * circle through it from there on, and the frees pushed before its first push are lost (those
 * objects stay allocated). Reported, never followed. */
static void drain(tcache *t) {
  for (uintptr_t o = mpsc_take_all(&t->remote), next; o; o = next) {
    next = mpsc_next(o);
    int rc = cache_free(&t->c, o);
    if (rc == ESRCH && T.s.free_elsewhere) rc = T.s.free_elsewhere(o);
    if (rc == EINVAL) {
      fprintf(stderr, "antheap: a free from another thread of %#lx found no live object there "
              "(freed twice?); it and the frees queued before it are dropped\n",
              (unsigned long)o);
      break;
    }
  }
}

static inline void drain_if_any(tcache *t) {
  if (__builtin_expect(!mpsc_empty(&t->remote), 0)) drain(t);
}

/* ---- the backend: the rank's, with the slab map kept under its lock ---- */

static void lock_backend(void) {
  if (T.s.lock) T.s.lock();
}
static void unlock_backend(void) {
  if (T.s.unlock) T.s.unlock();
}

static bool slot_valid(uint32_t slot) {
  return slot >= AH_SLOT_ALIGN && slot <= AH_SLAB_SIZE && slot % AH_SLOT_ALIGN == 0;
}

static int lease_owned(void *ctx, uint32_t rid, size_t size, uint32_t want, uint32_t min,
                       int32_t *sched, uint32_t *slot, uintptr_t *slabs, uint32_t *got) {
  lock_backend();
  int rc = T.s.be.lease(T.s.be.ctx, rid, size, want, min, sched, slot, slabs, got);
  for (uint32_t i = 0; !rc && slot_valid(*slot) && i < *got && i < want; i++)
    slabmap_set(&T.map, slabs[i], ctx, *slot);
  unlock_backend();
  return rc;
}

/* The slabs are this cache's alone: no lock. */
static void leased_owned(void *ctx, const uintptr_t *slabs, uint32_t n) {
  (void)ctx;
  if (T.s.be.leased) T.s.be.leased(T.s.be.ctx, slabs, n);
}

/* The map forgets the slabs after their scheduler took them, under the same lock: a thread
 * that then finds no owner asks the scheduler, which has them back by then. (ENOMEM: nothing
 * taken back, the cache keeps them.) */
static int unlease_owned(void *ctx, int32_t sched, const uint64_t *pairs, uint32_t n,
                         uint64_t *dropped) {
  (void)ctx;
  lock_backend();
  int rc = T.s.be.unlease(T.s.be.ctx, sched, pairs, n, dropped);
  for (uint32_t i = 0; rc != ENOMEM && i < n; i++) slabmap_set(&T.map, pairs[2 * i], NULL, 0);
  unlock_backend();
  return rc;
}

/* ---- the registry ---- */

static tcache *new_tcache(void) {
  size_t bytes = (sizeof(tcache) + SLABMAP_ALIGN - 1) / SLABMAP_ALIGN * SLABMAP_ALIGN;
  tcache *t = aligned_alloc(SLABMAP_ALIGN, bytes);
  if (!t) return NULL;
  memset(t, 0, sizeof *t);
  pthread_mutex_init(&t->mu, NULL);
  atomic_init(&t->owned, true);
  t->run = T.run;
  cache_backend be = {.lease = lease_owned, .unlease = unlease_owned, .leased = leased_owned,
                      .ctx = t};
  if (cache_init(&t->c, &be, &T.cfg)) {
    pthread_mutex_destroy(&t->mu);
    free(t);
    return NULL;
  }
  t->next = atomic_load(&T.all);
  while (!atomic_compare_exchange_weak(&T.all, &t->next, t)) {
  }
  atomic_fetch_add(&T.count, 1);
  return t;
}

/* The calling thread's cache of this run (NULL: none yet; a cache of an earlier run is parked). */
static tcache *mine_now(void) {
  tcache *t = tcache_mine;
  return t && t->run == T.run ? t : NULL;
}

/* The calling thread's cache: one a thread left behind, else a new one (NULL: no memory). */
static tcache *get_mine(void) {
  tcache *m = mine_now();
  if (m) return m;
  tcache *t = atomic_load(&T.all);
  for (bool no = false; t; t = t->next, no = false)
    if (atomic_compare_exchange_strong(&t->owned, &no, true)) break;
  if (!t && !(t = new_tcache())) return NULL;
  pthread_setspecific(T.key, t);
  tcache_fast = tcache_hits_on ? t : NULL;
  return tcache_mine = t;
}

/* A thread exits: its slabs go back, its cache waits for the next thread. */
static void retire(void *p) {
  tcache *t = p;
  if (!tcaches_running || t->run != T.run) return; /* (a parked cache of an earlier run) */
  stop(t);
  drain(t);
  cache_flush(&t->c);
  resume(t);
  atomic_store(&t->owned, false);
}

int tcaches_start(const tcache_setup *s) {
  if (tcaches_running) return EINVAL;
  T.s = *s;
  T.cfg = s->cfg ? *s->cfg : cache_config_default();
  const char *f = getenv("ANTHEAP_TCACHE_FENCE"); /* 1: the owner fences (for comparison) */
  tcache_fence = (f && !strcmp(f, "1")) ||
            syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0;
  int rc = slabmap_init(&T.map, s->gas_base, s->gas_size);
  if (rc) return rc;
  if (pthread_key_create(&T.key, retire)) {
    slabmap_destroy(&T.map);
    return ENOMEM;
  }
  atomic_store(&T.all, NULL);
  atomic_store(&T.count, 0);
  T.run++;
  tcaches_running = true;
  tcache_hits_on = !tcache_fence;
  return 0;
}

/* Every cache is stopped for good (a thread inside an operation finishes it first), its memory
 * freed and its record parked, not freed: other threads' tcache_fast and tcache_mine may still
 * point at it, and a call after sys_finalize then meets a stopped cache and takes the slow way.
 * The parked records (one a thread that ever allocated, per run) stay until the process ends. */
void tcaches_stop(void) {
  if (!tcaches_running) return;
  tcache_hits_on = false;
  tcaches_running = false;
  tcache *head = atomic_load(&T.all);
  stop_all(head);
  for (tcache *t = head, *next; t; t = next) {
    next = t->next;
    cache_fini(&t->c);
    pthread_mutex_unlock(&t->mu); /* (stop stays set) */
    t->next = parked;
    parked = t;
  }
  atomic_store(&T.all, NULL);
  pthread_key_delete(T.key);
  slabmap_destroy(&T.map);
  tcache_mine = tcache_fast = NULL;
}

bool tcaches_running;

int tcaches_count(void) { return atomic_load(&T.count); }

/* ---- the calling thread's operations ---- */

/* tcache_alloc's way when the thread has no cache yet or a stopper holds it (not inlined, so
 * that the fast path saves few registers). */
static __attribute__((noinline)) int alloc_guarded(size_t size, uint32_t rid, uintptr_t *addr) {
  tcache *t = get_mine();
  if (!t) return ENOMEM;
  bool fast = enter(t);
  drain_if_any(t);
  int rc = cache_alloc(&t->c, size, rid, addr);
  leave(t, fast);
  return rc;
}

/* tcache_alloc, entered (fast), when other threads freed objects of t's. */
static __attribute__((noinline)) int alloc_draining(tcache *t, size_t size, uint32_t rid,
                                                    uintptr_t *addr) {
  drain(t);
  int rc = cache_alloc(&t->c, size, rid, addr);
  leave(t, true);
  return rc;
}

int tcache_alloc(size_t size, uint32_t rid, uintptr_t *addr) {
  tcache *t = tcache_mine;
  if (__builtin_expect(!t || !tcache_enter_fast(t), 0)) return alloc_guarded(size, rid, addr);
  if (__builtin_expect(!mpsc_empty(&t->remote), 0)) return alloc_draining(t, size, rid, addr);
  int rc = cache_alloc(&t->c, size, rid, addr); /* (tries the direct bin first, inline) */
  leave(t, true);
  return rc;
}

int tcache_balloc(size_t size, uint32_t rid, size_t n, uintptr_t *addrs) {
  tcache *t = get_mine();
  if (!t) return ENOMEM;
  bool fast = enter(t);
  drain_if_any(t);
  int rc = cache_balloc(&t->c, size, rid, n, addrs);
  leave(t, fast);
  return rc;
}

/* An object of another thread's cache: onto the owner's remote list, which it frees at its
 * next allocation. Only a pointer that is no slot's start is refused here (slot: the slab's
 * slot size, from the map); a double free is found by the owner. */
static int free_remote(tcache *o, uintptr_t addr, size_t slot) {
  uintptr_t off = addr & (AH_SLAB_SIZE - 1);
  if (!slot || off % slot || off / slot >= AH_SLAB_SIZE / slot) return EINVAL;
  mpsc_push(&o->remote, addr);
  return 0;
}

/* tcache_free when the fast entry failed (no cache yet, or a stopper holds it: the guarded
 * way), or after the caller's own cache answered ESRCH (tried): the slab map's owner. */
static __attribute__((noinline)) int free_guarded(uintptr_t addr, bool tried) {
  tcache *t = mine_now();
  if (t && !tried) {
    bool fast = enter(t);
    int rc = cache_free(&t->c, addr);
    leave(t, fast);
    if (rc != ESRCH) return rc;
  }
  size_t slot;
  tcache *o = slabmap_owner(&T.map, addr, &slot);
  if (!o || o == t) return ESRCH; /* (t: handed back since the map was read) */
  return free_remote(o, addr, slot);
}

int tcache_free(uintptr_t addr) {
  tcache *t = tcache_mine;
  if (__builtin_expect(!t || !tcache_enter_fast(t), 0)) return free_guarded(addr, false);
  /* most frees are of one's own objects: no map read */
  int rc = cache_free_here(&t->c, addr);
  leave(t, true);
  if (__builtin_expect(rc != ESRCH, 1)) return rc;
  return free_guarded(addr, true);
}

int tcache_lookup(uintptr_t addr, uint32_t *rid, uintptr_t *start, size_t *size, int32_t *sched) {
  size_t slot;
  tcache *o = slabmap_owner(&T.map, addr, &slot);
  if (!o) return ESRCH;
  int rc;
  if (o == tcache_mine) {
    bool fast = enter(o);
    rc = cache_lookup(&o->c, addr, rid, start, size, sched);
    leave(o, fast);
  } else {
    stop(o);
    rc = cache_lookup(&o->c, addr, rid, start, size, sched);
    resume(o);
  }
  return rc;
}

/* ---- every thread's cache at once ---- */

int tcaches_flush(uint64_t *returned, uint64_t *dropped) {
  pthread_mutex_lock(&flush_lock);
  tcache *head = atomic_load(&T.all);
  stop_all(head);
  int first = 0;
  for (tcache *t = head; t; t = t->next) {
    drain(t); /* frees of its objects before its slabs go back with their live bitmaps */
    int rc = cache_flush_counted(&t->c, returned, dropped);
    if (rc && !first) first = rc;
  }
  for (tcache *t = head; t; t = t->next) resume(t);
  pthread_mutex_unlock(&flush_lock);
  return first;
}

void tcaches_stats(cache_stats *sum) {
  memset(sum, 0, sizeof *sum);
  for (tcache *t = atomic_load(&T.all); t; t = t->next) {
    cache_stats s;
    stop(t);
    cache_get_stats(&t->c, &s);
    resume(t);
    uint64_t *d = (uint64_t *)sum, *v = (uint64_t *)&s;
    for (size_t i = 0; i < sizeof s / sizeof(uint64_t); i++) d[i] += v[i];
  }
}

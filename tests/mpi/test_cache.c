/* test_cache.c: the worker allocation cache (src/worker/cache.c, leases in src/region/lease.c)
 * in real MPI jobs, whatever the launch. Objects up to 4 KiB come from slabs leased whole to
 * a worker and are unknown to the schedulers until the worker's next flush point (sys_rfree,
 * sys_send, sys_barrier, sys_finalize); these tests go after what that can break:
 *   1. a region freed by another worker while this one holds leased slots in it (zombies);
 *   2. no two live objects overlap, ever (intervals of every worker gathered and compared);
 *   3. a freed region's ID is not reused while leases in it are out (quarantine);
 *   4. sys_realloc of cached objects across regions, size classes and the 4-KiB line, and of
 *      scheduler objects by every worker at once in one region (data kept across the move);
 *   5. finalizing with a full cache (the schedulers' shutdown check: nothing MISSING);
 *   6. many workers caching in one region, then the region sent and walked by pointer;
 *   7. exhaustion of a small GAS (--exhaustion, run on its own) and recovery;
 *   8. exact errors (double free, interior, freed region, freed slot, wild address).
 * The same assertions hold with ANTHEAP_CACHE=off, except those about the cache itself
 * (guarded by cache_on). Every worker counts; worker 0 prints "test_cache: N passed, M failed".
 * TEST_CACHE_VERBOSE=1 prints what the checks leave open (ID reuse, object counts).
 *
 * A worker's GAS may be private memory: it then sees the bytes of another's objects only after
 * a sys_send/sys_recv. Overlaps between workers are therefore found by comparing addresses
 * (gather_intervals), overlaps within one worker by its fill patterns; where the workers of a
 * host share the GAS memory, the patterns see the others' writes too (stricter still). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "antheap.h"
#include "worker/debug.h"

#define CHECK_NAME "test_cache"
#include "worker_check.h"

static bool cache_on; /* ANTHEAP_CACHE is not off: checks about the cache's own behaviour */
static int me, nw;
static MPI_Comm comm;

#define NO_SUCH_REGION ((rid_t)0x7ffffff0u)

/* ---- random numbers, fill patterns ---- */

static uint64_t rng_state;
static uint64_t rnd(void) {
  uint64_t x = rng_state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return rng_state = x;
}

/* Mostly small (the cache's), some up to one slab, some over (the scheduler's). */
static size_t rnd_size(size_t max) {
  uint64_t r = rnd() % 10;
  size_t s = r < 7 ? 16 + rnd() % 497 : r < 9 ? 513 + rnd() % 3584 : 4097 + rnd() % 2048;
  return s > max ? max : s;
}

/* A key no other object of the job shares: worker, test, serial. */
static uint64_t key_of(int test, uint64_t serial) {
  return (uint64_t)me << 48 | (uint64_t)test << 40 | serial;
}

static uint64_t pat(uint64_t key, size_t i) {
  uint64_t x = (key + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)i + 1) * 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 29);
}

/* Byte j of the pattern: byte j % 8 of word j / 8 (little-endian, as the word loops write
 * it), so that any prefix of an object checks against the pattern of the whole. */
static unsigned char pat_byte(uint64_t key, size_t j) {
  return (unsigned char)(pat(key, j / 8) >> (8 * (j % 8)));
}

/* Words first..size/8 of the pattern of key, then the tail bytes. */
static void fill_from(void *p, size_t size, uint64_t key, size_t first) {
  uint64_t *w = p;
  for (size_t i = first; i < size / 8; i++) w[i] = pat(key, i);
  for (size_t j = size / 8 * 8; j < size; j++) ((unsigned char *)p)[j] = pat_byte(key, j);
}
static void fill(void *p, size_t size, uint64_t key) { fill_from(p, size, key, 0); }

static bool intact_from(const void *p, size_t size, uint64_t key, size_t first) {
  const uint64_t *w = p;
  for (size_t i = first; i < size / 8; i++)
    if (w[i] != pat(key, i)) return false;
  for (size_t j = size / 8 * 8; j < size; j++)
    if (((const unsigned char *)p)[j] != pat_byte(key, j)) return false;
  return true;
}
static bool intact(const void *p, size_t size, uint64_t key) { return intact_from(p, size, key, 0); }

/* ---- objects a worker keeps track of ---- */

typedef struct {
  char *p;
  size_t size;
  uint64_t key;
  rid_t rid;
} obj;

typedef struct {
  obj *v;
  size_t n, cap;
} objs;

static void objs_push(objs *o, char *p, size_t size, uint64_t key, rid_t rid) {
  if (o->n == o->cap) {
    o->cap = o->cap ? 2 * o->cap : 64;
    o->v = realloc(o->v, o->cap * sizeof *o->v);
    if (!o->v) abort();
  }
  o->v[o->n++] = (obj){p, size, key, rid};
}

static void objs_remove(objs *o, size_t i) { o->v[i] = o->v[--o->n]; }

/* Allocate size bytes in rid, fill with a fresh key and track it; NULL on failure. */
static obj *alloc_fill(objs *o, int test, uint64_t *serial, size_t size, rid_t rid) {
  char *p = sys_alloc(size, rid);
  if (!p) return NULL;
  uint64_t key = key_of(test, (*serial)++);
  fill(p, size, key);
  objs_push(o, p, size, key, rid);
  return &o->v[o->n - 1];
}

/* Every tracked object still carries its pattern (one CHECK for the lot). */
static void check_contents(const objs *o, const char *what) {
  size_t bad = 0;
  for (size_t i = 0; i < o->n; i++)
    if (!intact(o->v[i].p, o->v[i].size, o->v[i].key)) {
      if (bad++ < 3)
        fprintf(stderr, "test_cache: worker %d: %s: object %p (%zu B) overwritten\n", me, what,
                (void *)o->v[i].p, o->v[i].size);
    }
  CHECK(bad == 0);
}

/* ---- intervals of live objects, gathered from every worker ---- */

typedef struct {
  uint64_t start, len, rid, owner;
} ival;

typedef struct {
  ival *v;
  size_t n, cap;
} ivals;

static void ivals_push(ivals *s, const void *p, size_t len, rid_t rid) {
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 64;
    s->v = realloc(s->v, s->cap * sizeof *s->v);
    if (!s->v) abort();
  }
  s->v[s->n++] = (ival){(uintptr_t)p, len, rid, (uint64_t)me};
}

/* The interval of each tracked object, from sys_query (which must know it, in its region,
 * with a slot at least as large as asked for). */
static void add_live(ivals *s, const objs *o) {
  size_t bad = 0;
  for (size_t i = 0; i < o->n; i++) {
    rid_t r = 0;
    size_t slot = 0;
    if (sys_query(o->v[i].p, &r, &slot) != 0 || r != o->v[i].rid || slot < o->v[i].size) {
      if (bad++ < 3)
        fprintf(stderr, "test_cache: worker %d: query of %p (%zu B in region %u): rc errno %d, "
                "region %u, slot %zu\n", me, (void *)o->v[i].p, o->v[i].size, o->v[i].rid,
                errno, r, slot);
      continue;
    }
    ivals_push(s, o->v[i].p, slot, r);
  }
  CHECK(bad == 0);
}

static int cmp_ival(const void *a, const void *b) {
  uint64_t x = ((const ival *)a)->start, y = ((const ival *)b)->start;
  return (x > y) - (x < y);
}

/* Every worker's intervals, sorted by start (collective over sys_comm, no flush). */
static ival *gather_intervals(const ivals *mine, size_t *total) {
  int words = (int)(mine->n * 4), *counts = malloc((size_t)nw * sizeof *counts),
      *displs = malloc((size_t)nw * sizeof *displs);
  MPI_Allgather(&words, 1, MPI_INT, counts, 1, MPI_INT, comm);
  int sum = 0;
  for (int i = 0; i < nw; i++) displs[i] = sum, sum += counts[i];
  ival *all = malloc(((size_t)sum / 4 + 1) * sizeof *all);
  MPI_Allgatherv(mine->v, words, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, comm);
  free(counts);
  free(displs);
  *total = (size_t)sum / 4;
  qsort(all, *total, sizeof *all, cmp_ival);
  return all;
}

/* No two intervals overlap (one CHECK; the first few overlaps named). */
static void check_no_overlap(const ival *all, size_t n, const char *what) {
  size_t bad = 0;
  for (size_t i = 1; i < n; i++)
    if (all[i - 1].start + all[i - 1].len > all[i].start) {
      if (bad++ < 3 && me == 0)
        fprintf(stderr, "test_cache: %s: [%#lx +%lu) of worker %lu (region %lu) overlaps [%#lx "
                "+%lu) of worker %lu (region %lu)\n", what, (unsigned long)all[i - 1].start,
                (unsigned long)all[i - 1].len, (unsigned long)all[i - 1].owner,
                (unsigned long)all[i - 1].rid, (unsigned long)all[i].start,
                (unsigned long)all[i].len, (unsigned long)all[i].owner,
                (unsigned long)all[i].rid);
    }
  CHECK(bad == 0);
}

/* The interval holding addr, or NULL (all sorted, not overlapping). */
static const ival *covering(const ival *all, size_t n, uintptr_t addr) {
  size_t lo = 0, hi = n;
  while (lo < hi) { /* the first interval starting after addr */
    size_t mid = (lo + hi) / 2;
    if (all[mid].start <= addr) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return NULL;
  const ival *c = &all[lo - 1];
  return addr < c->start + c->len ? c : NULL;
}

/* p was an object of the freed region dead. At a quiet point (every worker flushed, nobody
 * allocating): unless a live object (all) now covers p, the schedulers must not know it. */
static void check_dead(const void *p, rid_t dead, const ival *all, size_t n) {
  const ival *c = covering(all, n, (uintptr_t)p);
  rid_t r = 0;
  if (!c) {
    CHECK(sys_query(p, &r, NULL) == -1 && errno == EINVAL);
    CHECK(sys_free((void *)p) == -1 && errno == EINVAL);
  } else { /* its address was reused (without the cache, freed slabs go back at once) */
    CHECK(c->rid != dead && sys_query(p, &r, NULL) == 0 && r == c->rid);
  }
}

/* Gather the live objects of every worker and check them: no overlap, contents intact. */
static ival *check_live(const objs *o, const char *what, size_t *n) {
  ivals mine = {0};
  add_live(&mine, o);
  ival *all = gather_intervals(&mine, n);
  free(mine.v);
  check_no_overlap(all, *n, what);
  check_contents(o, what);
  return all;
}

/* sys_barrier, which flushes this worker's cache first: the flush must succeed too. */
static void barrier(void) { CHECK(sys_barrier() == 0); }

/* ---- 8. exact errors ---- */

static void test_errors(void) {
  enum { T = 8 };
  rid_t R = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  CHECK(R != 0);
  /* double free: a neighbour in the slab stays live, so nobody else can get the slot */
  char *a = sys_alloc(64, R), *keep = sys_alloc(64, R);
  CHECK(a && keep);
  CHECK(sys_free(a) == 0);
  CHECK(sys_free(a) == -1 && errno == EINVAL);
  CHECK(sys_query(a, NULL, NULL) == -1 && errno == EINVAL); /* a freed slot */
  CHECK(sys_query(a + 10, NULL, NULL) == -1 && errno == EINVAL);
  CHECK(sys_realloc(a, 100, SYS_SAME_REGION) == NULL && errno == EINVAL);
  /* interior pointers: queries find the object, frees and reallocs refuse */
  char *q = sys_alloc(256, R);
  CHECK(q != NULL);
  rid_t r = 0;
  size_t slot = 0;
  CHECK(sys_query(q + 100, &r, &slot) == 0 && r == R && slot == 256);
  CHECK(sys_free(q + 8) == -1 && errno == EINVAL);
  CHECK(sys_free(q + 64) == -1 && errno == EINVAL);
  CHECK(sys_free(q + 255) == -1 && errno == EINVAL);
  CHECK(sys_realloc(q + 8, 300, SYS_SAME_REGION) == NULL && errno == EINVAL);
  CHECK(sys_free(q) == 0);
  CHECK(sys_free(q) == -1 && errno == EINVAL);
  /* past the last slot of a slab whose slots do not fill it (3 x 1344 B = 4032 B) */
  char *odd = sys_alloc(1300, R);
  CHECK(odd != NULL);
  if (odd) {
    char *slab = (char *)((uintptr_t)odd & ~(uintptr_t)4095);
    CHECK(sys_query(odd, NULL, &slot) == 0 && slot == 1344);
    CHECK(sys_free(slab + 4032) == -1 && errno == EINVAL);
    CHECK(sys_query(slab + 4040, NULL, NULL) == -1 && errno == EINVAL);
  }
  /* batches: distinct, in the region, each freed once */
  void *v[100];
  CHECK(sys_balloc(200, R, 100, v) == 0);
  size_t dup = 0;
  for (int i = 0; i < 100; i++)
    for (int j = 0; j < i; j++) dup += v[i] == v[j];
  CHECK(dup == 0);
  for (int i = 0; i < 100; i++) fill(v[i], 200, key_of(T, (uint64_t)i));
  size_t bad = 0;
  for (int i = 0; i < 100; i++) bad += !intact(v[i], 200, key_of(T, (uint64_t)i));
  CHECK(bad == 0);
  CHECK(sys_query(v[57], &r, &slot) == 0 && r == R && slot == 256);
  for (int i = 0; i < 100; i += 2) CHECK(sys_free(v[i]) == 0);
  CHECK(sys_free(v[10]) == -1 && errno == EINVAL);
  /* unknown regions, sizes */
  CHECK(sys_alloc(64, NO_SUCH_REGION) == NULL && errno == ENOENT);
  CHECK(sys_alloc(8000, NO_SUCH_REGION) == NULL && errno == ENOENT);
  CHECK(sys_balloc(64, NO_SUCH_REGION, 10, v) == -1 && errno == ENOENT);
  CHECK(sys_alloc(0, R) == NULL && errno == EINVAL);
  CHECK(sys_balloc(64, R, 0, v) == -1 && errno == EINVAL);
  /* wild GAS addresses (never a slot start: +8) */
  uint64_t x = 777 + (uint64_t)me;
  for (int i = 0; i < 32; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    uintptr_t wild = (uintptr_t)keep + (uintptr_t)((x >> 20) % (1ull << 24)) * 4096 + 8;
    CHECK(sys_free((void *)wild) == -1 && errno == EINVAL);
  }
  CHECK(sys_free(keep + 8) == -1 && errno == EINVAL);
  CHECK(sys_free((void *)0x1234) == -1 && errno == EINVAL);
  /* a region this worker freed itself: everyone frees between two barriers, and checks while
   * nobody allocates (a freed address may go to anyone next) */
  char *gone[3] = {sys_alloc(64, R), sys_alloc(2000, R), sys_alloc(7000, R)};
  CHECK(gone[0] && gone[1] && gone[2]);
  barrier();
  CHECK(sys_rfree(R) == 0);
  barrier();
  for (int i = 0; i < 3; i++) {
    CHECK(sys_free(gone[i]) == -1 && errno == EINVAL);
    CHECK(sys_query(gone[i], NULL, NULL) == -1 && errno == EINVAL);
  }
  CHECK(sys_free(keep) == -1 && errno == EINVAL);
  CHECK(sys_alloc(64, R) == NULL && errno == ENOENT);
  CHECK(sys_rfree(R) == -1 && errno == ENOENT);
  barrier();
}

/* ---- 1. another worker frees a region while this one caches in it ---- */

static void test_foreign_rfree(void) {
  enum { T = 1, OLD = 24, FRESH = 150 };
  if (nw < 2) return;
  rid_t R = 0;
  if (me == 0) R = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  MPI_Bcast(&R, 1, MPI_UINT32_T, 0, comm);
  CHECK(R != 0);
  /* fresh regions before anything is freed: none of them can take R's ID */
  rid_t F = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  CHECK(F != 0 && F != R);
  objs old = {0}, stale = {0}, fresh = {0};
  uint64_t serial = 0;
  static const size_t sizes[3] = {64, 1000, 3000};
  barrier();
  if (me == 1) { /* objects in R from the cache, unknown to the schedulers */
    for (int i = 0; i < OLD; i++) CHECK(alloc_fill(&old, T, &serial, sizes[i % 3], R) != NULL);
    uint64_t msg[4] = {(uintptr_t)old.v[0].p, (uintptr_t)old.v[1].p, (uintptr_t)old.v[2].p,
                       (uint64_t)(int64_t)antheap_debug_scheduler_of(old.v[0].p)};
    CHECK((int64_t)msg[3] >= 0);
    MPI_Send(msg, 4, MPI_UINT64_T, 0, 101, comm);
  } else if (me == 0) {
    for (int i = 0; i < 6; i++) CHECK(alloc_fill(&old, T, &serial, sizes[i % 3], R) != NULL);
    uint64_t msg[4];
    MPI_Recv(msg, 4, MPI_UINT64_T, 1, 101, comm, MPI_STATUS_IGNORE);
    CHECK((int)(int64_t)msg[3] == antheap_debug_scheduler_of(old.v[0].p)); /* R's scheduler */
    rid_t r = 0;
    for (int i = 0; i < 3; i++) {
      void *theirs = (void *)(uintptr_t)msg[i];
      if (cache_on) { /* in a slab leased to worker 1: not ours to see or free */
        CHECK(sys_query(theirs, &r, NULL) == -1 && errno == EINVAL);
        CHECK(sys_free(theirs) == -1 && errno == EINVAL);
        CHECK(antheap_debug_scheduler_of(theirs) == -1 && errno == EINVAL);
      } else {
        CHECK(sys_query(theirs, &r, NULL) == 0 && r == R);
      }
    }
    CHECK(sys_rfree(R) == 0); /* while worker 1 still holds its slabs in R */
    CHECK(sys_alloc(64, R) == NULL && errno == ENOENT);
  }
  MPI_Barrier(comm); /* plain MPI: R is gone, and nobody has flushed */
  /* everyone allocates afresh (R's slabs must not come back while worker 1 may use them) */
  for (int i = 0; i < FRESH; i++) CHECK(alloc_fill(&fresh, T, &serial, rnd_size(6144), F) != NULL);
  if (me == 1) {
    rid_t r = 0;
    if (cache_on) { /* the stale cache still answers for its objects */
      CHECK(sys_query(old.v[3].p + 5, &r, NULL) == 0 && r == R);
      CHECK(sys_free(old.v[3].p) == 0);
      CHECK(sys_free(old.v[3].p) == -1 && errno == EINVAL);
      old.v[3].key = ~0ull; /* freed: no longer checked for its pattern */
    }
    static const size_t more[4] = {64, 1000, 3000, 2048};
    for (int i = 0; i < 12; i++) {
      size_t size = more[i % 4];
      obj *o = alloc_fill(&stale, T, &serial, size, R);
      if (o) {
        CHECK(cache_on && size != 2048); /* from a slab of the dead region, never a new lease */
      } else {
        CHECK(errno == ENOENT);
      }
    }
    if (cache_on) CHECK(stale.n > 0); /* the first leases brought slots to spare */
  }
  MPI_Barrier(comm); /* plain MPI again: everyone's objects exist, no flush yet */
  {
    ivals mine = {0};
    add_live(&mine, &fresh);
    if (cache_on && me == 1) { /* the stale cache's objects are live until the flush */
      add_live(&mine, &stale);
      objs live_old = {0};
      for (size_t i = 0; i < old.n; i++)
        if (old.v[i].key != ~0ull) objs_push(&live_old, old.v[i].p, old.v[i].size, old.v[i].key, R);
      add_live(&mine, &live_old);
      check_contents(&live_old, "foreign rfree: old objects before the flush");
      check_contents(&stale, "foreign rfree: stale objects before the flush");
      free(live_old.v);
    }
    size_t n;
    ival *all = gather_intervals(&mine, &n);
    check_no_overlap(all, n, "foreign rfree, before the flush");
    check_contents(&fresh, "foreign rfree: fresh objects");
    free(all);
    free(mine.v);
  }
  barrier(); /* flush: worker 1's zombies go home, its objects in R are dropped */
  size_t n;
  ival *all = check_live(&fresh, "foreign rfree, after the flush", &n);
  if (me == 1) {
    void *v[4];
    CHECK(sys_alloc(64, R) == NULL && errno == ENOENT);
    CHECK(sys_alloc(3000, R) == NULL && errno == ENOENT);
    CHECK(sys_alloc(9000, R) == NULL && errno == ENOENT);
    CHECK(sys_balloc(64, R, 4, v) == -1 && errno == ENOENT);
    for (size_t i = 0; i < stale.n; i++) check_dead(stale.v[i].p, R, all, n);
  }
  for (size_t i = 0; i < old.n; i++) check_dead(old.v[i].p, R, all, n);
  free(all);
  barrier();
  CHECK(sys_rfree(F) == 0);
  barrier();
  free(old.v);
  free(stale.v);
  free(fresh.v);
}

/* ---- 2. no overlap, ever ---- */

static void test_no_overlap(void) {
  enum { T = 2, STEPS = 360 };
  rid_t shared[2] = {0, 0}; /* P at the root, S below it */
  if (me == 0) {
    shared[0] = sys_ralloc(SYS_ROOT_REGION, 0);
    shared[1] = sys_ralloc(shared[0], SYS_NO_LEVEL_HINT);
  }
  MPI_Bcast(shared, 2, MPI_UINT32_T, 0, comm);
  CHECK(shared[0] != 0 && shared[1] != 0);
  rid_t A = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  rid_t B = sys_ralloc(shared[0], SYS_NO_LEVEL_HINT);
  rid_t V = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT); /* freed by the left neighbour */
  CHECK(A && B && V);
  rid_t *victims = malloc((size_t)nw * sizeof *victims);
  MPI_Allgather(&V, 1, MPI_UINT32_T, victims, 1, MPI_UINT32_T, comm);
  rid_t regions[4] = {A, B, shared[0], shared[1]};
  objs live = {0}, early = {0}, late = {0}; /* late: in V after this worker's own rfree */
  uint64_t serial = 0;
  bool freed_neighbour = false;
  barrier();
  for (int i = 0; i < STEPS; i++) {
    CHECK(alloc_fill(&live, T, &serial, rnd_size(6144), regions[rnd() % 4]) != NULL);
    if (i % 3 == 0) { /* in V, which the right neighbour frees at some point */
      obj *o = alloc_fill(freed_neighbour ? &late : &early, T, &serial, rnd_size(4096), V);
      if (!o) CHECK(errno == ENOENT);
    }
    if (i % 5 == 4 && live.n) { /* free one */
      size_t k = (size_t)(rnd() % live.n);
      CHECK(intact(live.v[k].p, live.v[k].size, live.v[k].key));
      CHECK(sys_free(live.v[k].p) == 0);
      objs_remove(&live, k);
    }
    if (i % 7 == 6 && live.n) { /* realloc one, within its region or to another */
      size_t k = (size_t)(rnd() % live.n);
      obj *o = &live.v[k];
      size_t size = rnd_size(6144);
      rid_t to = rnd() % 2 ? SYS_SAME_REGION : regions[rnd() % 4];
      char *p = sys_realloc(o->p, size, to);
      CHECK(p != NULL);
      if (p) {
        size_t kept = size < o->size ? size : o->size;
        CHECK(intact(p, kept, o->key));
        o->p = p;
        o->size = size;
        o->key = key_of(T, serial++);
        if (to != SYS_SAME_REGION) o->rid = to;
        fill(p, size, o->key);
      }
    }
    if (i == STEPS / 2) { /* free the left neighbour's V while it may be allocating there */
      CHECK(sys_rfree(victims[(me + nw - 1) % nw]) == 0);
      freed_neighbour = true;
    }
  }
  MPI_Barrier(comm); /* plain MPI: nobody flushed since the phase */
  {
    ivals mine = {0};
    add_live(&mine, &live);
    /* V's objects allocated since this worker's own rfree (a flush) are in slabs still leased
     * to it: alive until its next flush, whether or not V was freed meanwhile */
    if (cache_on) {
      for (size_t i = 0; i < late.n; i++) {
        rid_t r = 0;
        size_t slot = 0;
        CHECK(sys_query(late.v[i].p, &r, &slot) == 0 && r == V && slot >= late.v[i].size);
        ivals_push(&mine, late.v[i].p, slot, V);
      }
      check_contents(&late, "no overlap: stale objects before the flush");
    }
    size_t n;
    ival *all = gather_intervals(&mine, &n);
    check_no_overlap(all, n, "no overlap, before the flush");
    free(all);
    free(mine.v);
  }
  barrier(); /* every cache flushed: all live objects are the schedulers' */
  size_t n;
  ival *all = check_live(&live, "no overlap, after the flush", &n);
  for (size_t i = 0; i < early.n; i++) check_dead(early.v[i].p, V, all, n);
  for (size_t i = 0; i < late.n; i++) check_dead(late.v[i].p, V, all, n);
  CHECK(sys_alloc(64, V) == NULL && errno == ENOENT);
  free(all);
  for (size_t i = 0; i < live.n; i += 3) CHECK(sys_free(live.v[i].p) == 0);
  barrier();
  CHECK(sys_rfree(A) == 0 && sys_rfree(B) == 0);
  barrier(); /* B lives under P: freed by its owner before P goes */
  if (me == 0) CHECK(sys_rfree(shared[0]) == 0);
  barrier();
  free(victims);
  free(live.v);
  free(early.v);
  free(late.v);
}

/* ---- 3. a freed region's ID while leases in it are out ---- */

static void test_id_quarantine(void) {
  enum { T = 3, NEW = 6 };
  if (nw < 2) return;
  rid_t R = 0;
  if (me == 0) R = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  MPI_Bcast(&R, 1, MPI_UINT32_T, 0, comm);
  CHECK(R != 0);
  objs theirs = {0}, stale = {0}, later = {0};
  uint64_t serial = 0;
  rid_t fresh[NEW] = {0}, again[NEW] = {0};
  barrier();
  if (me == 1) {
    for (int i = 0; i < 10; i++) CHECK(alloc_fill(&stale, T, &serial, 64 + 64 * (size_t)(i % 3), R));
    int go = 1;
    MPI_Send(&go, 1, MPI_INT, 0, 201, comm);
    /* worker 0 freed R and made new regions (with an object each) before our flush */
    uint64_t info[3 * NEW];
    MPI_Recv(info, 3 * NEW, MPI_UINT64_T, 0, 202, comm, MPI_STATUS_IGNORE);
    bool reused = false;
    for (int i = 0; i < NEW; i++) reused |= (rid_t)info[3 * i] == R;
    if (cache_on) CHECK(!reused); /* quarantined while worker 1 holds leases in R */
    for (int i = 0; i < 6; i++) {
      char *p = sys_alloc(64, R);
      if (!p) {
        CHECK(errno == ENOENT && !reused);
        continue;
      }
      CHECK(cache_on || reused);
      rid_t r = 0;
      CHECK(sys_query(p, &r, NULL) == 0 && r == R);
      for (int j = 0; j < NEW; j++) /* never on top of worker 0's new objects */
        CHECK((uintptr_t)p + 64 <= info[3 * j + 1] || info[3 * j + 1] + info[3 * j + 2] <= (uintptr_t)p);
    }
  } else if (me == 0) {
    int go;
    MPI_Recv(&go, 1, MPI_INT, 1, 201, comm, MPI_STATUS_IGNORE);
    CHECK(sys_rfree(R) == 0);
    uint64_t info[3 * NEW];
    for (int i = 0; i < NEW; i++) {
      fresh[i] = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT); /* R's scheduler: worker 0's leaf */
      CHECK(fresh[i] != 0);
      if (cache_on) CHECK(fresh[i] != R);
      obj *o = alloc_fill(&theirs, T, &serial, 64, fresh[i]);
      CHECK(o != NULL);
      size_t slot = 0;
      if (o) CHECK(sys_query(o->p, NULL, &slot) == 0);
      info[3 * i] = fresh[i];
      info[3 * i + 1] = o ? (uintptr_t)o->p : 0;
      info[3 * i + 2] = slot;
    }
    MPI_Send(info, 3 * NEW, MPI_UINT64_T, 1, 202, comm);
  }
  barrier(); /* worker 1 hands its zombies back: R's ID may be given out again */
  if (me == 0)
    for (int i = 0; i < NEW; i++) {
      again[i] = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
      CHECK(again[i] != 0);
    }
  MPI_Bcast(again, NEW, MPI_UINT32_T, 0, comm);
  MPI_Bcast(fresh, NEW, MPI_UINT32_T, 0, comm);
  if (me == 1) {
    bool live_R = false;
    for (int i = 0; i < NEW; i++) live_R |= fresh[i] == R || again[i] == R;
    for (int i = 0; i < NEW; i++) {
      obj *o = alloc_fill(&later, T, &serial, i % 2 ? 64 : 3000, again[i]);
      CHECK(o != NULL);
      rid_t r = 0;
      if (o) CHECK(sys_query(o->p, &r, NULL) == 0 && r == again[i]);
    }
    char *p = sys_alloc(64, R); /* R again only if a new region took its ID */
    if (live_R) {
      rid_t r = 0;
      CHECK(p != NULL && sys_query(p, &r, NULL) == 0 && r == R);
    } else {
      CHECK(p == NULL && errno == ENOENT);
    }
    check_contents(&later, "ID quarantine: objects in new regions");
    int reuse = 0;
    for (int i = 0; i < NEW; i++) reuse |= again[i] == R;
    if (cache_on && getenv("TEST_CACHE_VERBOSE"))
      printf("test_cache: region %u %s after the flush\n", R, reuse ? "reused" : "not reused yet");
  }
  if (me == 0) check_contents(&theirs, "ID quarantine: worker 0's new objects");
  barrier();
  if (me == 0)
    for (int i = 0; i < NEW; i++) CHECK(sys_rfree(fresh[i]) == 0 && sys_rfree(again[i]) == 0);
  barrier();
  free(theirs.v);
  free(stale.v);
  free(later.v);
}

/* ---- 4. realloc of cached objects ---- */

/* p, reallocated from old (now dead unless it stayed), in region want with size bytes and
 * the first keep bytes of key. A freed old address is checked only where no other worker
 * allocates (mine): elsewhere it may already be someone else's object. */
static char *check_moved_at(int line, char *old, char *p, rid_t want, size_t size, size_t keep,
                            uint64_t key, bool mine) {
  int before = failed;
  CHECK(p != NULL);
  if (p) {
    rid_t r = 0;
    size_t slot = 0;
    CHECK(sys_query(p, &r, &slot) == 0 && r == want && slot >= size);
    CHECK(intact(p, keep, key));
    if (p != old && mine) CHECK(sys_free(old) == -1 && errno == EINVAL);
  }
  if (failed > before)
    fprintf(stderr, "test_cache: worker %d: (line %d: realloc of %p to %zu B in region %u: %p)\n",
            me, line, (void *)old, size, want, (void *)p);
  return p ? p : old;
}
#define check_moved(...) check_moved_at(__LINE__, __VA_ARGS__)

static void test_realloc(void) {
  enum { T = 4 };
  /* X and Y: only this worker allocates there; S: for the left neighbour (its Z) */
  rid_t X = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT), Y = sys_ralloc(SYS_ROOT_REGION, 0),
        S = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  CHECK(X && Y && S);
  rid_t *xs = malloc((size_t)nw * sizeof *xs);
  MPI_Allgather(&S, 1, MPI_UINT32_T, xs, 1, MPI_UINT32_T, comm);
  rid_t Z = xs[(me + 1) % nw]; /* the right neighbour's S (maybe another scheduler) */
  rid_t H = 0; /* everyone's */
  if (me == 0) H = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  MPI_Bcast(&H, 1, MPI_UINT32_T, 0, comm);
  CHECK(H != 0);
  barrier();
  uint64_t k = key_of(T, 1);
  char *p = sys_alloc(100, X);
  CHECK(p != NULL);
  if (!p) return;
  fill(p, 100, k);
  char *q = sys_realloc(p, 120, SYS_SAME_REGION); /* the same slot size: stays */
  CHECK(q == p);
  p = check_moved(p, q, X, 120, 100, k, true);
  q = sys_realloc(p, 1000, SYS_SAME_REGION); /* another class, the same region */
  p = check_moved(p, q, X, 1000, 100, k, true);
  fill(p, 1000, k = key_of(T, 2));
  q = sys_realloc(p, 1000, Y); /* to a root region */
  CHECK(q != p);
  p = check_moved(p, q, Y, 1000, 1000, k, true);
  q = sys_realloc(p, 10000, SYS_SAME_REGION); /* over one slab: the scheduler's */
  p = check_moved(p, q, Y, 10000, 1000, k, true);
  fill(p, 10000, k = key_of(T, 3));
  q = sys_realloc(p, 300, Z); /* back under a slab, into the neighbour's region */
  p = check_moved(p, q, Z, 300, 300, k, true); /* from Y */
  q = sys_realloc(p, 50, SYS_SAME_REGION); /* a smaller class */
  p = check_moved(p, q, Z, 50, 50, k, false);
  q = sys_realloc(p, 4096, X); /* exactly one slab, home */
  p = check_moved(p, q, X, 4096, 50, k, false);
  fill(p, 4096, k = key_of(T, 4));
  q = sys_realloc(p, 4096, SYS_SAME_REGION);
  CHECK(q == p);
  q = sys_realloc(p, 64, NO_SUCH_REGION); /* fails, p stays */
  CHECK(q == NULL && errno == ENOENT);
  CHECK(intact(p, 4096, k));
  rid_t r = 0;
  CHECK(sys_query(p, &r, NULL) == 0 && r == X);
  CHECK(sys_realloc(p + 64, 64, SYS_SAME_REGION) == NULL && errno == EINVAL);
  CHECK(sys_free(p) == 0);
  CHECK(sys_realloc(p, 64, SYS_SAME_REGION) == NULL && errno == EINVAL);
  q = sys_realloc(NULL, 64, X);
  CHECK(q != NULL && sys_query(q, &r, NULL) == 0 && r == X);
  /* many objects on a walk through sizes and regions, each checked at every step */
  enum { N = 40 };
  objs o = {0};
  uint64_t serial = 100;
  rid_t where[4] = {X, Y, Z, SYS_SAME_REGION};
  for (int i = 0; i < N; i++) CHECK(alloc_fill(&o, T, &serial, 16 + (size_t)i * 100, X) != NULL);
  for (int step = 0; step < 6; step++)
    for (size_t i = 0; i < o.n; i++) {
      obj *x = &o.v[i];
      size_t size = rnd_size(8000);
      rid_t to = where[(i + (size_t)step) % 4];
      char *y = sys_realloc(x->p, size, to);
      x->p = check_moved(x->p, y, to == SYS_SAME_REGION ? x->rid : to, size,
                         size < x->size ? size : x->size, x->key, x->rid != Z);
      if (y) {
        if (to != SYS_SAME_REGION) x->rid = to;
        x->size = size;
        fill(y, size, x->key = key_of(T, serial++));
      }
    }
  check_contents(&o, "realloc walk");
  /* everyone at once in one region, objects over a slab (the scheduler's) that move at each
   * step: a slot freed by a move goes to the next worker who asks, while the mover copies
   * (where workers share the GAS memory, the copy must come first) */
  objs h = {0};
  for (int i = 0; i < 16; i++) CHECK(alloc_fill(&h, T, &serial, 5000, H) != NULL);
  size_t lost = 0;
  for (int step = 0; step < 400 && h.n; step++) {
    obj *x = &h.v[(size_t)step % h.n];
    size_t size = x->size == 5000 ? 9000 : 5000;
    char *y = sys_realloc(x->p, size, SYS_SAME_REGION);
    CHECK(y != NULL);
    if (!y) break;
    lost += !intact(y, size < x->size ? size : x->size, x->key);
    x->p = y;
    x->size = size;
    fill(y, size, x->key = key_of(T, serial++));
  }
  CHECK(lost == 0);
  if (lost) fprintf(stderr, "test_cache: worker %d: %zu of 400 reallocs in a shared region "
                    "lost their data\n", me, lost);
  check_contents(&h, "realloc in a shared region");
  barrier(); /* everyone's objects in Z are flushed before Z's owner frees it */
  CHECK(sys_rfree(X) == 0 && sys_rfree(Y) == 0 && sys_rfree(S) == 0);
  barrier();
  if (me == 0) CHECK(sys_rfree(H) == 0);
  barrier();
  free(h.v);
  free(o.v);
  free(xs);
}

/* ---- 6. many workers caching in one region, sent and walked ---- */

typedef struct link {
  struct link *next;
  uint64_t key, size; /* the pattern starts at word 3 */
} link;

static void test_one_region(void) {
  enum { T = 6, PER = 120, STALE = 8 };
  if (nw < 2) return;
  rid_t G = 0;
  if (me == 0) G = sys_ralloc(SYS_ROOT_REGION, 0);
  MPI_Bcast(&G, 1, MPI_UINT32_T, 0, comm);
  CHECK(G != 0);
  barrier();
  void *mine[PER];
  int have = 0;
  for (int i = 0; i < PER; i++) {
    size_t size = i % 10 == 9 ? 4097 + rnd() % 4000 : 32 + rnd() % 4064;
    link *x = sys_alloc(size, G);
    CHECK(x != NULL);
    if (!x) continue;
    x->key = key_of(T, (uint64_t)have);
    x->size = size;
    fill_from(x, size, x->key, 3);
    if (have) ((link *)mine[have - 1])->next = x;
    mine[have++] = x;
  }
  uint64_t head = have ? (uintptr_t)mine[0] : 0, *heads = malloc((size_t)nw * 8);
  int *counts = malloc((size_t)nw * sizeof *counts);
  MPI_Allgather(&head, 1, MPI_UINT64_T, heads, 1, MPI_UINT64_T, comm);
  MPI_Allgather(&have, 1, MPI_INT, counts, 1, MPI_INT, comm);
  if (have) { /* one chain through every worker's objects */
    link *last = mine[have - 1];
    last->next = NULL;
    for (int w = me + 1; w < nw && !last->next; w++) last->next = (link *)(uintptr_t)heads[w];
  }
  barrier(); /* every cache flushed: all these objects are the schedulers' */
  /* a private GAS holds only its own worker's bytes: worker 0 collects them object by object
   * first */
  if (me == 0) {
    for (int w = 1; w < nw; w++) {
      void **got = malloc((size_t)(counts[w] ? counts[w] : 1) * sizeof *got);
      CHECK(sys_recv(w, NULL, 0, got, counts[w]) == 0);
      CHECK(counts[w] == 0 || got[0] == (void *)(uintptr_t)heads[w]);
      free(got);
    }
  } else {
    CHECK(sys_send(0, NULL, 0, mine, have) == 0);
  }
  /* the others take new leases in G that worker 0's pack must leave out */
  uint64_t stale[STALE] = {0};
  if (me >= 2) {
    for (int i = 0; i < STALE; i++) {
      char *s = sys_alloc(64, G);
      CHECK(s != NULL);
      if (s) fill(s, 64, key_of(T, 1000 + (uint64_t)i));
      stale[i] = (uintptr_t)s;
    }
    MPI_Send(stale, STALE, MPI_UINT64_T, 1, 601, comm);
  }
  uint64_t *canaries = NULL;
  size_t ncanaries = 0;
  if (me == 1 && nw > 2) {
    ncanaries = (size_t)(nw - 2) * STALE;
    canaries = calloc(ncanaries, 8);
    for (int w = 2; w < nw; w++)
      MPI_Recv(canaries + (size_t)(w - 2) * STALE, STALE, MPI_UINT64_T, w, 601, comm,
               MPI_STATUS_IGNORE);
    if (cache_on) /* our own bytes there: a pack that left those slabs out leaves them be */
      for (size_t i = 0; i < ncanaries; i++)
        if (canaries[i]) memset((void *)(uintptr_t)canaries[i], 0xc5, 64);
  }
  MPI_Barrier(comm); /* plain MPI: the new leases are out */
  if (me == 0) {
    CHECK(sys_send(1, &G, 1, NULL, 0) == 0);
  } else if (me == 1) {
    rid_t g = 0;
    CHECK(sys_recv(0, &g, 1, NULL, 0) == 0 && g == G);
    long total = 0, expect = 0, bad = 0;
    for (int w = 0; w < nw; w++) expect += counts[w];
    int w = 0;
    while (w < nw && !counts[w]) w++;
    uint64_t serial = 0;
    for (link *x = w < nw ? (link *)(uintptr_t)heads[w] : NULL; x && total <= expect; x = x->next) {
      if (x->key >> 48 != (uint64_t)w) { /* the next worker's chain */
        w++;
        serial = 0;
      }
      if (x->key != ((uint64_t)w << 48 | (uint64_t)T << 40 | serial) || x->size > 8192 ||
          !intact_from(x, x->size, x->key, 3)) {
        if (bad++ < 3)
          fprintf(stderr, "test_cache: worker 1: object %p of worker %d: key %#lx, wrong bytes\n",
                  (void *)x, w, (unsigned long)x->key);
      }
      serial++;
      total++;
    }
    CHECK(total == expect);
    CHECK(bad == 0);
    if (cache_on) {
      size_t spoilt = 0;
      for (size_t i = 0; i < ncanaries; i++) {
        const unsigned char *c = (const unsigned char *)(uintptr_t)canaries[i];
        for (int j = 0; c && j < 64; j++) spoilt += c[j] != 0xc5;
      }
      CHECK(spoilt == 0);
      for (size_t i = 0; i < ncanaries; i++) /* still in worker w's cache: not ours to free */
        if (canaries[i]) CHECK(sys_free((void *)(uintptr_t)canaries[i]) == -1 && errno == EINVAL);
    }
    /* flushed objects of other workers are ordinary objects: anyone may free them */
    for (int v = 0; v < nw; v++)
      if (v != 1 && counts[v] > 2) {
        link *x = (link *)(uintptr_t)heads[v];
        CHECK(sys_free(x->next) == 0);
      }
  }
  MPI_Barrier(comm); /* plain MPI: the new leases stay out until worker 1 has looked */
  barrier();
  if (me == 0) CHECK(sys_rfree(G) == 0);
  barrier();
  free(canaries);
  free(heads);
  free(counts);
}

/* ---- 7. exhaustion of a small GAS ---- */

static void test_exhaustion(void) {
  enum { T = 7 };
  rid_t E = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  CHECK(E != 0);
  const char *mib = getenv("ANTHEAP_GAS_SIZE_MIB");
  size_t bound = (mib ? (size_t)atol(mib) : 64) * 256 + 4096; /* slabs in the GAS, and some */
  objs o = {0};
  uint64_t serial = 0;
  barrier();
  int err = 0;
  for (size_t i = 0; i < bound; i++) {
    size_t size = i % 8 == 7 ? 64 : 4096; /* whole slabs, and some small ones */
    char *p = sys_alloc(size, E);
    if (!p) {
      err = errno;
      break;
    }
    uint64_t key = key_of(T, serial++);
    ((uint64_t *)p)[0] = key; /* the first and last words only: quick */
    ((uint64_t *)p)[size / 8 - 1] = ~key;
    objs_push(&o, p, size, key, E);
  }
  CHECK(err == ENOMEM);
  /* running out of pages leaves the region IDs where they were: the root can still name a
   * region (a leaf that asked for IDs with every refill drained the root's) */
  rid_t top = sys_ralloc(SYS_ROOT_REGION, 0);
  CHECK(top != 0);
  CHECK(top == 0 || sys_rfree(top) == 0);
  MPI_Barrier(comm); /* plain MPI: the GAS is full; nobody has flushed */
  {
    ivals mine = {0};
    for (size_t i = 0; i < o.n; i++) ivals_push(&mine, o.v[i].p, o.v[i].size, E);
    size_t n;
    ival *all = gather_intervals(&mine, &n);
    check_no_overlap(all, n, "exhaustion, GAS full");
    free(all);
    free(mine.v);
  }
  size_t before = o.n, bad = 0;
  for (size_t i = 0; i < o.n; i++) {
    const uint64_t *w = (const uint64_t *)o.v[i].p;
    bad += w[0] != o.v[i].key || w[o.v[i].size / 8 - 1] != ~o.v[i].key;
    CHECK(sys_free(o.v[i].p) == 0);
  }
  CHECK(bad == 0);
  o.n = 0;
  int mine = (int)before, least = 0, most = 0;
  MPI_Allreduce(&mine, &least, 1, MPI_INT, MPI_MIN, comm);
  MPI_Allreduce(&mine, &most, 1, MPI_INT, MPI_SUM, comm);
  if (me == 0 && getenv("TEST_CACHE_VERBOSE"))
    printf("test_cache: exhaustion: %d objects in all, the fewest %d\n", most, least);
  barrier(); /* everything freed and every cache flushed */
  /* half of what each worker had fits again, and the job goes on (finalize with them live) */
  for (size_t i = 0; i < before / 2; i++)
    CHECK(alloc_fill(&o, T, &serial, i % 8 == 7 ? 64 : 4096, E) != NULL);
  check_contents(&o, "exhaustion: after the recovery");
  barrier();
  free(o.v);
}

/* ---- 5. finalize with a full cache ---- */

static void fill_cache_before_finalize(void) {
  enum { T = 5, N = 3000 };
  rid_t S = 0;
  if (me == 0) S = sys_ralloc(SYS_ROOT_REGION, 0);
  MPI_Bcast(&S, 1, MPI_UINT32_T, 0, comm);
  rid_t own = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT), Q = 0;
  if (me == 0) Q = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  MPI_Bcast(&Q, 1, MPI_UINT32_T, 0, comm);
  CHECK(S && own && Q);
  barrier();
  rid_t where[3] = {S, own, SYS_ROOT_REGION};
  objs o = {0};
  uint64_t serial = 0;
  for (int i = 0; i < N; i++) {
    obj *x = alloc_fill(&o, T, &serial, 16 + rnd() % 4081, where[i % 3]);
    CHECK(x != NULL);
  }
  for (size_t i = 0; i < o.n; i += 4) CHECK(sys_free(o.v[i].p) == 0); /* partly free slabs */
  void *v[200];
  CHECK(sys_balloc(48, own, 200, v) == 0);
  /* and zombies at the end: worker 1 caches in Q, worker 0 frees Q, nobody flushes before
   * sys_finalize */
  if (nw >= 2 && me == 1) {
    for (int i = 0; i < 20; i++) CHECK(sys_alloc(64 + 64 * (size_t)(i % 4), Q) != NULL);
    int go = 1;
    MPI_Send(&go, 1, MPI_INT, 0, 501, comm);
  } else if (nw >= 2 && me == 0) {
    int go;
    MPI_Recv(&go, 1, MPI_INT, 1, 501, comm, MPI_STATUS_IGNORE);
    CHECK(sys_rfree(Q) == 0);
  }
  free(o.v);
}

int main(int argc, char **argv) {
  if (sys_init(&argc, &argv)) {
    fprintf(stderr, "test_cache: sys_init failed: %s\n", sys_strerror(errno));
    return 1;
  }
  bool exhaustion = argc > 1 && !strcmp(argv[1], "--exhaustion");
  const char *c = getenv("ANTHEAP_CACHE");
  cache_on = !c || (strcmp(c, "off") && strcmp(c, "0"));
  me = sys_worker_id();
  nw = sys_workers();
  comm = sys_comm();
  rng_state = 0x2545F4914F6CDD1Dull ^ ((uint64_t)me + 1) * 0x9E3779B97F4A7C15ull;
  if (exhaustion) {
    test_exhaustion();
  } else {
    test_errors();
    test_foreign_rfree();
    test_no_overlap();
    test_id_quarantine();
    test_realloc();
    test_one_region();
    fill_cache_before_finalize();
  }
  int bad = check_summary(comm, cache_on ? " (cache on)" : " (cache off)");
  if (sys_finalize()) {
    fprintf(stderr, "test_cache: worker %d: sys_finalize failed: %s\n", me, sys_strerror(errno));
    bad = 1;
  }
  return bad ? 1 : 0;
}

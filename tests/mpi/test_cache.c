/* test_cache.c: the worker allocation cache (src/worker/cache.c, leases in src/region/lease.c)
 * in real MPI jobs, whatever the launch. Objects up to 4 KiB come from slabs leased whole to
 * a worker and are unknown to the schedulers until the worker's next flush point (sys_rfree,
 * sys_send, sys_barrier, sys_finalize); these tests go after what that can break:
 *   1. a region another worker holds (and caches in): every call that would change it is
 *      EPERM and changes nothing (a region freed under another worker's lease, and the ID
 *      quarantine that follows, cannot happen through the API any more: test_region and the
 *      simulator's hostile workers test them);
 *   2. no two live objects overlap, ever (intervals of every worker gathered and compared);
 *   4. sys_realloc of cached objects across regions, size classes and the 4-KiB line, and of
 *      scheduler objects by every worker at once in one region (data kept across the move);
 *   5. finalizing with a full cache (the schedulers' shutdown check: nothing MISSING);
 *   6. many workers caching in the root region (which every worker holds), then the objects
 *      sent and walked by pointer;
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
    size_t slot = 0;
    int rc = sys_query(p, &r, &slot);
    CHECK(c->rid != dead && rc == 0 && r == c->rid);
    if (c->rid == dead || rc || r != c->rid) {
      fprintf(stderr, "test_cache: worker %d: %p of dead region %u lies in [%#lx +%lu) of region "
              "%lu (worker %lu), which sys_query says is %s region %u (slot %zu)\n", me, p, dead,
              (unsigned long)c->start, (unsigned long)c->len, (unsigned long)c->rid,
              (unsigned long)c->owner, rc ? "no object:" : "in", r, slot);
    }
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

/* ---- 1. a region another worker holds: what would change it is EPERM, and changes nothing ---- */

static void test_foreign_region(void) {
  enum { T = 1, OLD = 24 };
  if (nw < 2) return;
  rid_t R = 0;
  if (me == 0) R = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  MPI_Bcast(&R, 1, MPI_UINT32_T, 0, comm);
  CHECK(R != 0);
  objs old = {0};
  uint64_t serial = 0, held[2] = {0, 0};
  static const size_t sizes[3] = {64, 1000, 3000};
  if (me == 0) { /* cached objects, unknown to the schedulers until the next flush */
    for (int i = 0; i < OLD; i++) CHECK(alloc_fill(&old, T, &serial, sizes[i % 3], R) != NULL);
    held[0] = (uintptr_t)old.v[0].p;
    held[1] = (uintptr_t)old.v[1].p;
  }
  MPI_Bcast(held, 2, MPI_UINT64_T, 0, comm); /* plain MPI: nobody flushes */
  void *o = (void *)(uintptr_t)held[0], *v[4];
  if (me == 1) {
    char *mine = sys_alloc(100, SYS_ROOT_REGION);
    CHECK(mine != NULL);
    CHECK(sys_alloc(64, R) == NULL && errno == EPERM);
    CHECK(sys_alloc(9000, R) == NULL && errno == EPERM);
    CHECK(sys_balloc(64, R, 4, v) == -1 && errno == EPERM);
    CHECK(sys_ralloc(R, SYS_NO_LEVEL_HINT) == 0 && errno == EPERM);
    CHECK(sys_realloc(mine, 100, R) == NULL && errno == EPERM); /* into R: refused, kept */
    CHECK(sys_free(mine) == 0);
    CHECK(sys_rfree(R) == -1 && errno == EPERM);
    CHECK(sys_give(0, &R, 1) == -1 && errno == EPERM);
    if (cache_on) CHECK(sys_free(o) == -1 && errno == EINVAL); /* in a slab leased to worker 0 */
    CHECK(sys_send(0, &R, 1, NULL, 0) == -1 && errno == EPERM); /* worker 0 hears ECANCELED */
  } else if (me == 0) {
    rid_t r = 0;
    CHECK(sys_recv(1, &r, 1, NULL, 0) == -1 && errno == ECANCELED);
  }
  barrier(); /* worker 0's objects are the schedulers' now, R still worker 0's */
  if (me == 1) {
    rid_t r = 0;
    CHECK(sys_query(o, &r, NULL) == 0 && r == R); /* looking is allowed */
    CHECK(sys_free(o) == -1 && errno == EPERM);
    CHECK(sys_realloc(o, 200, SYS_SAME_REGION) == NULL && errno == EPERM);
    CHECK(sys_realloc(o, 60, SYS_SAME_REGION) == NULL && errno == EPERM); /* even in place */
    CHECK(sys_realloc(o, 100, SYS_ROOT_REGION) == NULL && errno == EPERM);
    CHECK(sys_send(0, NULL, 0, &o, 1) == -1 && errno == EPERM);
  } else if (me == 0) {
    CHECK(sys_recv(1, NULL, 0, v, 1) == -1 && errno == ECANCELED);
  }
  barrier();
  if (me == 0) {
    check_contents(&old, "foreign region: the holder's objects");
    CHECK(sys_free(old.v[2].p) == 0);
    CHECK(sys_rfree(R) == 0);
  }
  barrier();
  free(old.v);
}

/* ---- 2. no overlap, ever ---- */

static void test_no_overlap(void) {
  enum { T = 2, STEPS = 360 };
  /* the root region, which every worker holds, and regions of this worker's own: one below
   * its leaf, one at the top scheduler, and V, freed half-way */
  rid_t A = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT), B = sys_ralloc(SYS_ROOT_REGION, 0);
  rid_t C = A ? sys_ralloc(A, SYS_NO_LEVEL_HINT) : 0, V = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  CHECK(A && B && C && V);
  rid_t regions[4] = {A, B, C, SYS_ROOT_REGION};
  objs live = {0}, early = {0}; /* early: in V before it was freed */
  uint64_t serial = 0;
  bool freed = false;
  barrier();
  for (int i = 0; i < STEPS; i++) {
    CHECK(alloc_fill(&live, T, &serial, rnd_size(6144), regions[rnd() % 4]) != NULL);
    if (i % 3 == 0) {
      obj *o = alloc_fill(&early, T, &serial, rnd_size(4096), V);
      CHECK(freed ? !o && errno == ENOENT : o != NULL);
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
    if (i == STEPS / 2) { /* while the others allocate */
      CHECK(sys_rfree(V) == 0);
      freed = true;
    }
  }
  MPI_Barrier(comm); /* plain MPI: nobody flushed since the phase */
  {
    ivals mine = {0};
    add_live(&mine, &live);
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
  CHECK(sys_alloc(64, V) == NULL && errno == ENOENT);
  free(all);
  /* the point stays quiet until every worker has checked: a live object freed next may cover
   * another worker's dead address (IDs and slabs are reused as soon as they are free) */
  barrier();
  for (size_t i = 0; i < live.n; i += 3) CHECK(sys_free(live.v[i].p) == 0);
  barrier();
  CHECK(sys_rfree(A) == 0 && sys_rfree(B) == 0);
  barrier();
  free(live.v);
  free(early.v);
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
  /* X and Y: only this worker allocates there; Z and H: the root region (on the top
   * scheduler), where every worker allocates */
  rid_t X = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT), Y = sys_ralloc(SYS_ROOT_REGION, 0);
  CHECK(X && Y);
  const rid_t Z = SYS_ROOT_REGION, H = SYS_ROOT_REGION;
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
  q = sys_realloc(p, 300, Z); /* back under a slab, into the root region */
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
  barrier();
  CHECK(sys_rfree(X) == 0 && sys_rfree(Y) == 0);
  for (size_t i = 0; i < h.n; i++) CHECK(sys_free(h.v[i].p) == 0);
  barrier();
  free(h.v);
  free(o.v);
}

/* ---- 6. many workers caching in one region (the root, which every worker holds), the objects
 * sent and walked ---- */

typedef struct link {
  struct link *next;
  uint64_t key, size; /* the pattern starts at word 3 */
} link;

static void test_one_region(void) {
  enum { T = 6, PER = 120, STALE = 8 };
  if (nw < 2) return;
  const rid_t G = SYS_ROOT_REGION;
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
  int all = 0;
  for (int w = 0; w < nw; w++) all += counts[w];
  void **every = malloc((size_t)(all ? all : 1) * sizeof *every); /* worker 0: the whole chain */
  if (me == 0) {
    memcpy(every, mine, (size_t)have * sizeof *every);
    for (int w = 1, at = have; w < nw; at += counts[w++]) {
      CHECK(sys_recv(w, NULL, 0, every + at, counts[w]) == 0);
      CHECK(counts[w] == 0 || every[at] == (void *)(uintptr_t)heads[w]);
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
    CHECK(sys_send(1, NULL, 0, every, all) == 0);
  } else if (me == 1) {
    CHECK(sys_recv(0, NULL, 0, every, all) == 0);
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
    /* flushed objects of other workers in the root region: anyone may free them */
    for (int v = 0; v < nw; v++)
      if (v != 1 && counts[v] > 2) {
        link *x = (link *)(uintptr_t)heads[v];
        CHECK(sys_free(x->next) == 0);
      }
  }
  MPI_Barrier(comm); /* plain MPI: the new leases stay out until worker 1 has looked */
  barrier();
  free(every);
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
  rid_t S = sys_ralloc(SYS_ROOT_REGION, 0), own = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  CHECK(S && own);
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
    test_foreign_region();
    test_no_overlap();
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

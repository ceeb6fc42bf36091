/* test_cache.c: the worker's allocation cache against a fake scheduler backend that hands out
 * slab addresses from a counter and records every lease and every unlease (with its live
 * bitmaps), checking that no slab comes back twice, to the wrong scheduler, or naming slots
 * it does not have. It can be told to refuse the next leases with ENOMEM or ENOENT. */
#include <check.h>

#include "check_main.h"
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/types.h"
#include "worker/cache.h"

/* ---- the fake scheduler ---- */

#define FAKE_BASE ((uintptr_t)0x200000000000ull)
#define FAKE_SLABS 65536
#define FAKE_CALLS 4096

enum { NEVER = 0, LEASED, RETURNED };

typedef struct {
  uint32_t rid, want, min, got;
  size_t size;
  int rc;
} lease_call;

typedef struct {
  int32_t sched;
  uint32_t n;
  size_t first; /* its pairs: pair_addr/pair_live[first .. first+n) */
} unlease_call;

typedef struct {
  uint64_t next;        /* slab number the next lease starts at */
  int32_t sched;        /* the scheduler rank leases name */
  int refuse_rc;        /* refuse the next refuse_left leases with this code */
  int refuse_left;
  uint32_t bad_slot;    /* non-zero: answer with this slot size (a broken scheduler) */
  uint64_t drop;        /* *dropped every unlease reports */
  int unlease_refuse_left; /* refuse the next ones with ENOMEM, taking nothing back */
  lease_call lease[FAKE_CALLS];
  size_t nlease;
  unlease_call unlease[FAKE_CALLS];
  size_t nunlease;
  uint64_t pair_addr[FAKE_SLABS], pair_live[FAKE_SLABS];
  size_t npairs;
  char log[3 * FAKE_CALLS + 1]; /* 'L' lease, 'U' unlease, 'P' leased, in order */
  size_t nlog;
  uint64_t leased_first; /* the slabs of the last leased call */
  uint32_t leased_n;
  /* per slab number */
  uint8_t state[FAKE_SLABS];
  uint32_t slot[FAKE_SLABS], rid[FAKE_SLABS];
  int32_t owner[FAKE_SLABS];
  uint64_t live[FAKE_SLABS]; /* as handed back */
} fake;

static fake F;

static size_t slab_no(uintptr_t addr) {
  REQUIRE(addr >= FAKE_BASE);
  size_t i = (addr - FAKE_BASE) >> AH_SLAB_SHIFT;
  REQUIRE(i < FAKE_SLABS);
  return i;
}
static uintptr_t slab_start(uintptr_t addr) { return addr & ~(uintptr_t)(AH_SLAB_SIZE - 1); }

static int fake_lease(void *ctx, uint32_t rid, size_t size, uint32_t want, uint32_t min,
                      int32_t *sched, uint32_t *slot, uintptr_t *slabs, uint32_t *got) {
  fake *f = ctx;
  REQUIRE(f->nlease < FAKE_CALLS);
  /* What the cache asks must be a valid MSG_LEASE. */
  REQUIRE(size >= 1 && size <= AH_SLAB_SIZE);
  REQUIRE(min >= 1 && want >= min && want <= 4096);
  lease_call *l = &f->lease[f->nlease++];
  *l = (lease_call){.rid = rid, .want = want, .min = min, .size = size};
  f->log[f->nlog++] = 'L';
  if (f->refuse_left > 0) {
    f->refuse_left--;
    return l->rc = f->refuse_rc;
  }
  uint32_t s = (uint32_t)ah_round_up(size, AH_SLOT_ALIGN);
  REQUIRE(f->next + want <= FAKE_SLABS);
  for (uint32_t i = 0; i < want; i++) {
    uint64_t k = f->next++;
    slabs[i] = FAKE_BASE + ((uintptr_t)k << AH_SLAB_SHIFT);
    f->state[k] = LEASED;
    f->slot[k] = s;
    f->rid[k] = rid;
    f->owner[k] = f->sched;
  }
  *sched = f->sched;
  *slot = f->bad_slot ? f->bad_slot : s;
  *got = l->got = want;
  return 0;
}

static int fake_unlease(void *ctx, int32_t sched, const uint64_t *pairs, uint32_t n,
                        uint64_t *dropped) {
  fake *f = ctx;
  REQUIRE(n >= 1);
  REQUIRE(f->nunlease < FAKE_CALLS);
  f->log[f->nlog++] = 'U';
  if (f->unlease_refuse_left > 0) {
    f->unlease_refuse_left--;
    return ENOMEM;
  }
  f->unlease[f->nunlease++] = (unlease_call){.sched = sched, .n = n, .first = f->npairs};
  for (uint32_t i = 0; i < n; i++) {
    size_t k = slab_no(pairs[2 * i]);
    REQUIRE_EQ(pairs[2 * i] % AH_SLAB_SIZE, 0);
    if (i > 0) REQUIRE(pairs[2 * i] > pairs[2 * (i - 1)]); /* ascending: the scheduler's one pass */
    REQUIRE_EQ(f->state[k], LEASED);     /* leased, and handed back only once */
    REQUIRE_EQ(f->owner[k], sched);      /* to the scheduler that leased it */
    uint32_t cap = AH_SLAB_SIZE / f->slot[k];
    if (cap < 64) REQUIRE_EQ(pairs[2 * i + 1] >> cap, 0); /* only slots the slab has */
    f->state[k] = RETURNED;
    f->live[k] = pairs[2 * i + 1];
    REQUIRE(f->npairs < FAKE_SLABS);
    f->pair_addr[f->npairs] = pairs[2 * i];
    f->pair_live[f->npairs++] = pairs[2 * i + 1];
  }
  *dropped = f->drop;
  return 0;
}

/* The backend's hook after a lease: the slabs of the lease just made, in order. */
static void fake_leased(void *ctx, const uintptr_t *slabs, uint32_t n) {
  fake *f = ctx;
  REQUIRE(f->nlog < sizeof f->log - 1);
  f->log[f->nlog++] = 'P';
  REQUIRE(n >= 1);
  for (uint32_t i = 0; i < n; i++) REQUIRE_EQ(f->state[slab_no(slabs[i])], LEASED);
  f->leased_first = slabs[0];
  f->leased_n = n;
}

static cache *make_cache(const cache_config *cfg) {
  memset(&F, 0, sizeof F);
  F.sched = 1;
  cache_backend be = {.lease = fake_lease, .unlease = fake_unlease, .leased = fake_leased,
                      .ctx = &F};
  cache *c = NULL;
  REQUIRE_EQ(cache_create(&c, &be, cfg), 0);
  return c;
}

static size_t slabs_leased(void) {
  size_t n = 0;
  for (size_t i = 0; i < F.nlease; i++) n += F.lease[i].got;
  return n;
}

static int cmp_addr(const void *a, const void *b) {
  uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
  return (x > y) - (x < y);
}
static void require_distinct(uintptr_t *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_addr);
  for (size_t i = 1; i < n; i++) REQUIRE(v[i] != v[i - 1]);
}

/* addr is a slot start of a slab leased (and not handed back) for rid and this slot size. */
static void require_slot_of(uintptr_t a, uint32_t rid, uint32_t slot) {
  size_t k = slab_no(a);
  REQUIRE_EQ(F.state[k], LEASED);
  REQUIRE_EQ(F.rid[k], rid);
  REQUIRE_EQ(F.slot[k], slot);
  REQUIRE_EQ(a % AH_SLOT_ALIGN, 0);
  REQUIRE_EQ((a - slab_start(a)) % slot, 0);
  REQUIRE((a - slab_start(a)) + slot <= AH_SLAB_SIZE);
}

/* ---- allocating and freeing ---- */

START_TEST(test_allocations_are_distinct_aligned_and_inside_leased_slabs_of_their_slot) {
  cache *c = make_cache(NULL);
  static const size_t sizes[] = {1, 64, 100, 192, 1000, 3000, 4096};
  enum { PER = 700, N = 7 * PER };
  static uintptr_t a[N];
  size_t n = 0;
  for (int round = 0; round < PER; round++)
    for (unsigned s = 0; s < 7; s++) { /* interleaved: the bins take turns */
      uint32_t rid = 10 + s % 3;
      REQUIRE_EQ(cache_alloc(c, sizes[s], rid, &a[n]), 0);
      require_slot_of(a[n], rid, (uint32_t)ah_round_up(sizes[s], AH_SLOT_ALIGN));
      n++;
    }
  require_distinct(a, n);
  cache_stats st;
  cache_get_stats(c, &st);
  REQUIRE_EQ(st.allocs, N);
  REQUIRE_EQ(st.slabs, slabs_leased());
  cache_destroy(c);
}
END_TEST

/* Every lease is followed by one leased call with its slabs, before the next call to the
 * backend (so before any slot of them is handed out: cache_alloc returns after both). */
START_TEST(test_every_lease_is_followed_by_leased_with_its_slabs) {
  cache_config cfg = cache_config_default();
  cache *c = make_cache(&cfg);
  for (int i = 0; i < 2000; i++) {
    uintptr_t p = 0;
    size_t before = F.nlog;
    REQUIRE_EQ(cache_alloc(c, 64, 7, &p), 0);
    if (F.nlog > before) { /* this call leased: its object is in the slabs just leased */
      REQUIRE_EQ(F.log[F.nlog - 1], 'P');
      REQUIRE_EQ(F.leased_n, F.lease[F.nlease - 1].got);
      REQUIRE(p >= F.leased_first);
      REQUIRE(p < F.leased_first + ((uintptr_t)F.leased_n << AH_SLAB_SHIFT));
    }
  }
  REQUIRE(F.nlease >= 2);
  for (size_t i = 0; i < F.nlog; i++)
    if (F.log[i] == 'L') REQUIRE_EQ(F.log[i + 1], 'P');
  cache_destroy(c);
}
END_TEST

START_TEST(test_free_then_alloc_reuses_the_slot) {
  cache *c = make_cache(NULL);
  uintptr_t a, b;
  REQUIRE_EQ(cache_alloc(c, 300, 1, &a), 0);
  REQUIRE_EQ(cache_free(c, a), 0);
  REQUIRE_EQ(cache_alloc(c, 300, 1, &b), 0);
  REQUIRE_EQ(b, a);
  REQUIRE_EQ(F.nlease, 1);
  REQUIRE_EQ(F.nunlease, 0);
  cache_destroy(c);
}
END_TEST

START_TEST(test_double_free_is_einval) {
  cache *c = make_cache(NULL);
  uintptr_t a, b;
  REQUIRE_EQ(cache_alloc(c, 64, 1, &a), 0);
  REQUIRE_EQ(cache_alloc(c, 64, 1, &b), 0);
  REQUIRE_EQ(cache_free(c, a), 0);
  REQUIRE_EQ(cache_free(c, a), EINVAL);
  cache_stats st;
  cache_get_stats(c, &st);
  REQUIRE_EQ(st.frees, 1);
  REQUIRE_EQ(cache_free(c, b), 0); /* the other object is untouched */
  cache_destroy(c);
}
END_TEST

START_TEST(test_free_of_an_interior_pointer_is_einval) {
  cache *c = make_cache(NULL);
  uintptr_t a, t;
  REQUIRE_EQ(cache_alloc(c, 128, 1, &a), 0);
  REQUIRE_EQ(cache_free(c, a + 64), EINVAL);
  REQUIRE_EQ(cache_free(c, a + 1), EINVAL);
  REQUIRE_EQ(cache_free(c, a + 127), EINVAL);
  REQUIRE_EQ(cache_alloc(c, 192, 1, &t), 0); /* 21 slots: the last 64 B are no slot */
  REQUIRE_EQ(cache_free(c, slab_start(t) + 21 * 192), EINVAL);
  cache_stats st;
  cache_get_stats(c, &st);
  REQUIRE_EQ(st.frees, 0);
  REQUIRE_EQ(cache_free(c, a), 0);
  cache_destroy(c);
}
END_TEST

START_TEST(test_free_of_a_slot_never_handed_out_is_einval) {
  cache *c = make_cache(NULL);
  uintptr_t a;
  REQUIRE_EQ(cache_alloc(c, 256, 1, &a), 0);
  REQUIRE_EQ(cache_free(c, slab_start(a) + 15 * 256), EINVAL); /* in the slab, still cached */
  cache_destroy(c);
}
END_TEST

START_TEST(test_free_of_a_foreign_pointer_is_esrch) {
  cache *c = make_cache(NULL);
  uintptr_t a;
  REQUIRE_EQ(cache_alloc(c, 64, 1, &a), 0);
  uintptr_t never = FAKE_BASE + ((uintptr_t)F.next << AH_SLAB_SHIFT); /* no lease reached it */
  uintptr_t foreign[] = {0, 0x1234, FAKE_BASE - 64, FAKE_BASE - AH_SLAB_SIZE, never,
                         never + 64, (uintptr_t)-64};
  for (unsigned i = 0; i < sizeof foreign / sizeof *foreign; i++) {
    REQUIRE_EQ(cache_free(c, foreign[i]), ESRCH);
    REQUIRE_EQ(cache_lookup(c, foreign[i], NULL, NULL, NULL, NULL), ESRCH);
  }
  cache_destroy(c);
}
END_TEST

START_TEST(test_sizes_0_and_4097_are_enotsup) {
  cache *c = make_cache(NULL);
  uintptr_t a[4];
  REQUIRE_EQ(cache_alloc(c, 0, 1, a), ENOTSUP);
  REQUIRE_EQ(cache_alloc(c, AH_SLAB_SIZE + 1, 1, a), ENOTSUP);
  REQUIRE_EQ(cache_balloc(c, 0, 1, 4, a), ENOTSUP);
  REQUIRE_EQ(cache_balloc(c, AH_SLAB_SIZE + 1, 1, 4, a), ENOTSUP);
  REQUIRE_EQ(cache_balloc(c, 64, 1, 0, a), ENOTSUP);
  REQUIRE_EQ(F.nlease, 0); /* nothing asked of the scheduler */
  cache_destroy(c);
}
END_TEST

START_TEST(test_lookup_of_an_interior_address_gives_the_slot_start) {
  cache *c = make_cache(NULL);
  F.sched = 6;
  uintptr_t a, b, start;
  uint32_t rid;
  size_t size;
  int32_t sched;
  REQUIRE_EQ(cache_alloc(c, 200, 42, &a), 0);
  REQUIRE_EQ(cache_alloc(c, 200, 42, &b), 0);
  for (uintptr_t off = 0; off < 256; off += 37) {
    REQUIRE_EQ(cache_lookup(c, b + off, &rid, &start, &size, &sched), 0);
    REQUIRE_EQ(start, b);
    REQUIRE_EQ(size, 256);
    REQUIRE_EQ(rid, 42);
    REQUIRE_EQ(sched, 6);
  }
  REQUIRE_EQ(cache_lookup(c, b + 255, NULL, &start, NULL, NULL), 0);
  REQUIRE_EQ(start, b);
  REQUIRE_EQ(cache_lookup(c, a + 255, NULL, &start, NULL, NULL), 0);
  REQUIRE_EQ(start, a);
  cache_destroy(c);
}
END_TEST

START_TEST(test_lookup_of_a_free_slot_is_einval) {
  cache *c = make_cache(NULL);
  uintptr_t a, t;
  REQUIRE_EQ(cache_alloc(c, 256, 1, &a), 0);
  REQUIRE_EQ(cache_lookup(c, slab_start(a) + 5 * 256 + 9, NULL, NULL, NULL, NULL), EINVAL);
  REQUIRE_EQ(cache_free(c, a), 0);
  REQUIRE_EQ(cache_lookup(c, a, NULL, NULL, NULL, NULL), EINVAL); /* freed */
  REQUIRE_EQ(cache_alloc(c, 3000, 1, &t), 0); /* one 3008-B slot, the rest no slot */
  REQUIRE_EQ(cache_lookup(c, t + 3007, NULL, NULL, NULL, NULL), 0);
  REQUIRE_EQ(cache_lookup(c, t + 3008, NULL, NULL, NULL, NULL), EINVAL);
  REQUIRE_EQ(cache_lookup(c, t + AH_SLAB_SIZE - 1, NULL, NULL, NULL, NULL), EINVAL);
  cache_destroy(c);
}
END_TEST

/* ---- leasing ---- */

START_TEST(test_lease_sizes_grow_geometrically_up_to_max_grant) {
  cache_config cfg = cache_config_default();
  cfg.first_grant = 1;
  cfg.max_grant = 16;
  cache *c = make_cache(&cfg);
  uintptr_t a;
  for (int i = 0; i < 150; i++) REQUIRE_EQ(cache_alloc(c, 4096, 1, &a), 0); /* a slab each */
  REQUIRE(F.nlease >= 3);
  REQUIRE_EQ(F.lease[0].want, 1);
  uint32_t factor = F.lease[1].want / F.lease[0].want;
  REQUIRE(factor >= 2);
  for (size_t i = 0; i < F.nlease; i++) {
    uint32_t prev = i ? F.lease[i - 1].want : 0;
    if (i) REQUIRE_EQ(F.lease[i].want, prev * factor < 16 ? prev * factor : 16);
    REQUIRE_EQ(F.lease[i].min, 1);
    REQUIRE_EQ(F.lease[i].rid, 1);
  }
  REQUIRE_EQ(F.lease[F.nlease - 1].want, 16); /* capped, and it stays there */
  REQUIRE(F.nlease <= 4 + 150 / 16 + 1);      /* few round trips for 150 slabs */
  cache_destroy(c);
}
END_TEST

START_TEST(test_each_bin_grows_its_own_lease_size) {
  cache_config cfg = cache_config_default();
  cfg.first_grant = 2;
  cfg.max_grant = 64;
  cache *c = make_cache(&cfg);
  uintptr_t a;
  while (F.nlease < 3) REQUIRE_EQ(cache_alloc(c, 4096, 1, &a), 0);
  REQUIRE(F.lease[2].want > 2);
  REQUIRE_EQ(cache_alloc(c, 4096, 2, &a), 0); /* another region: starts small again */
  REQUIRE_EQ(cache_alloc(c, 2048, 1, &a), 0); /* another slot size: too */
  REQUIRE_EQ(F.nlease, 5);
  REQUIRE_EQ(F.lease[3].want, 2);
  REQUIRE_EQ(F.lease[4].want, 2);
  cache_destroy(c);
}
END_TEST

START_TEST(test_balloc_of_4096_objects_takes_few_leases_and_distinct_slots) {
  cache *c = make_cache(NULL);
  enum { N = 4096 };
  static uintptr_t a[N];
  REQUIRE_EQ(cache_balloc(c, 64, 3, N, a), 0);
  REQUIRE(F.nlease <= 2);
  for (size_t i = 0; i < N; i++) require_slot_of(a[i], 3, 64);
  require_distinct(a, N);
  REQUIRE_EQ(slabs_leased(), N / 64); /* exactly the slabs needed */
  cache_stats st;
  cache_get_stats(c, &st);
  REQUIRE_EQ(st.allocs, N);
  REQUIRE_EQ(st.idle_slabs, 0);
  cache_destroy(c);
}
END_TEST

START_TEST(test_ballocs_in_batches_lease_ahead_not_once_per_batch) {
  cache *c = make_cache(NULL);
  enum { BATCH = 64, CALLS = 200 }; /* 64 objects of 256 B: 4 slabs a call, 800 in all */
  static uintptr_t a[BATCH * CALLS];
  for (int i = 0; i < CALLS; i++) REQUIRE_EQ(cache_balloc(c, 256, 3, BATCH, a + i * BATCH), 0);
  REQUIRE(F.nlease <= 10); /* 4, 8, 32, 128, 256, 256, ...: not 200 */
  for (size_t i = 0; i < BATCH * CALLS; i++) require_slot_of(a[i], 3, 256);
  require_distinct(a, BATCH * CALLS);
  cache_destroy(c);
}
END_TEST

START_TEST(test_balloc_uses_the_free_slots_the_bin_has_first) {
  cache *c = make_cache(NULL);
  uintptr_t a, v[31];
  REQUIRE_EQ(cache_alloc(c, 128, 3, &a), 0); /* one slab of 32 slots, 31 free */
  REQUIRE_EQ(cache_balloc(c, 128, 3, 31, v), 0);
  REQUIRE_EQ(F.nlease, 1);
  for (int i = 0; i < 31; i++) REQUIRE_EQ(slab_start(v[i]), slab_start(a));
  cache_destroy(c);
}
END_TEST

/* ---- handing back ---- */

START_TEST(test_flush_hands_back_every_slab_once_with_its_live_bitmap) {
  cache *c = make_cache(NULL);
  enum { N = 3000 };
  static uintptr_t a[N];
  static bool live[N];
  static const size_t sizes[] = {64, 1000, 4096, 192};
  for (size_t i = 0; i < N; i++) {
    REQUIRE_EQ(cache_alloc(c, sizes[i % 4], (uint32_t)(i % 3), &a[i]), 0);
    live[i] = true;
  }
  for (size_t i = 0; i < N; i += 3) {
    REQUIRE_EQ(cache_free(c, a[i]), 0);
    live[i] = false;
  }
  static uint64_t expect[FAKE_SLABS];
  memset(expect, 0, sizeof expect);
  for (size_t i = 0; i < N; i++)
    if (live[i]) {
      size_t k = slab_no(a[i]);
      expect[k] |= 1ull << ((a[i] - slab_start(a[i])) / F.slot[k]);
    }
  REQUIRE_EQ(cache_flush(c), 0);
  for (size_t k = 0; k < F.next; k++) {
    REQUIRE_EQ(F.state[k], RETURNED); /* every slab; the fake refuses a second return */
    REQUIRE_EQ(F.live[k], expect[k]);
  }
  REQUIRE_EQ(F.npairs, F.next);
  cache_stats st;
  cache_get_stats(c, &st);
  REQUIRE_EQ(st.slabs, 0);
  REQUIRE_EQ(st.idle_slabs, 0);
  REQUIRE_EQ(st.flushes, 1);
  REQUIRE_EQ(cache_free(c, a[1]), ESRCH); /* the cache knows none of them any more */
  REQUIRE_EQ(cache_lookup(c, a[2], NULL, NULL, NULL, NULL), ESRCH);
  size_t calls = F.nunlease;
  REQUIRE_EQ(cache_flush(c), 0); /* nothing left to send */
  REQUIRE_EQ(F.nunlease, calls);
  uintptr_t b;
  REQUIRE_EQ(cache_alloc(c, 64, 0, &b), 0); /* and it starts over with a fresh lease */
  REQUIRE_EQ(F.state[slab_no(b)], LEASED);
  cache_destroy(c);
}
END_TEST

START_TEST(test_a_flush_refused_for_memory_keeps_the_slabs_for_the_next) {
  cache *c = make_cache(NULL);
  enum { N = 600 };
  static uintptr_t a[N];
  for (size_t i = 0; i < N; i++) REQUIRE_EQ(cache_alloc(c, 256, 1, &a[i]), 0);
  REQUIRE_EQ(cache_free(c, a[7]), 0);
  cache_stats before, after;
  cache_get_stats(c, &before);
  F.unlease_refuse_left = 1;
  REQUIRE_EQ(cache_flush(c), ENOMEM);
  cache_get_stats(c, &after);
  REQUIRE_EQ(after.slabs, before.slabs); /* every slab still here, every object still live */
  REQUIRE_EQ(F.npairs, 0);
  for (size_t i = 0; i < N; i += 50)
    REQUIRE_EQ(cache_lookup(c, a[i + 1], NULL, NULL, NULL, NULL), 0);
  REQUIRE_EQ(cache_free(c, a[9]), 0); /* still served here */
  REQUIRE_EQ(cache_flush(c), 0);
  for (size_t k = 0; k < F.next; k++) REQUIRE_EQ(F.state[k], RETURNED);
  REQUIRE_EQ(F.live[slab_no(a[7])] >> ((a[7] - slab_start(a[7])) / 256) & 1, 0);
  REQUIRE_EQ(F.live[slab_no(a[8])] >> ((a[8] - slab_start(a[8])) / 256) & 1, 1);
  cache_get_stats(c, &after);
  REQUIRE_EQ(after.slabs, 0);
  cache_destroy(c);
}
END_TEST

START_TEST(test_flush_counts_the_slots_the_scheduler_dropped) {
  cache *c = make_cache(NULL);
  uintptr_t a;
  REQUIRE_EQ(cache_alloc(c, 64, 1, &a), 0);
  F.drop = 5;
  REQUIRE_EQ(cache_flush(c), 0);
  cache_stats st;
  cache_get_stats(c, &st);
  REQUIRE_EQ(st.dropped, 5);
  cache_destroy(c);
}
END_TEST

START_TEST(test_flush_sends_one_request_per_scheduler) {
  cache *c = make_cache(NULL);
  uintptr_t a;
  size_t per[8] = {0};
  F.sched = 3;
  for (int i = 0; i < 100; i++) REQUIRE_EQ(cache_alloc(c, 4096, 1, &a), 0);
  F.sched = 5;
  for (int i = 0; i < 50; i++) REQUIRE_EQ(cache_alloc(c, 4096, 2, &a), 0);
  F.sched = 3;
  for (int i = 0; i < 10; i++) REQUIRE_EQ(cache_alloc(c, 64, 3, &a), 0);
  for (size_t k = 0; k < F.next; k++) per[F.owner[k]]++;
  REQUIRE_EQ(F.nunlease, 0);
  REQUIRE_EQ(cache_flush(c), 0);
  REQUIRE_EQ(F.nunlease, 2);
  REQUIRE(F.unlease[0].sched != F.unlease[1].sched);
  for (int i = 0; i < 2; i++) REQUIRE_EQ(F.unlease[i].n, per[F.unlease[i].sched]);
  cache_destroy(c);
}
END_TEST

/* Schedulers whose numbers lie far apart (31 bits of the hand-back's sort keys above the slabs'
 * few) still get one request each, in scheduler order, their slabs ascending (fake_unlease). */
START_TEST(test_flush_sorts_the_slabs_of_schedulers_far_apart) {
  cache *c = make_cache(NULL);
  uintptr_t a;
  const int32_t far = INT32_MAX - 7;
  for (int round = 0; round < 3; round++) { /* the two schedulers' leases interleaved */
    F.sched = round % 2 ? far : 2;
    for (int i = 0; i < 40; i++) REQUIRE_EQ(cache_alloc(c, 4096, (uint32_t)(1 + round), &a), 0);
  }
  size_t mine[2] = {0};
  for (size_t k = 0; k < F.next; k++) mine[F.owner[k] == far]++;
  REQUIRE_EQ(cache_flush(c), 0);
  REQUIRE_EQ(F.nunlease, 2);
  REQUIRE_EQ(F.unlease[0].sched, 2); /* by scheduler */
  REQUIRE_EQ(F.unlease[1].sched, far);
  REQUIRE_EQ(F.unlease[0].n, mine[0]);
  REQUIRE_EQ(F.unlease[1].n, mine[1]);
  cache_destroy(c);
}
END_TEST

START_TEST(test_flush_splits_a_scheduler_request_at_max_batch) {
  cache_config cfg = cache_config_default();
  cfg.max_batch = 4;
  cache *c = make_cache(&cfg);
  uintptr_t a;
  for (int i = 0; i < 10; i++) REQUIRE_EQ(cache_alloc(c, 4096, 1, &a), 0);
  size_t slabs = F.next;
  REQUIRE_EQ(cache_flush(c), 0);
  REQUIRE_EQ(F.nunlease, (slabs + 3) / 4);
  for (size_t i = 0; i < F.nunlease; i++) REQUIRE(F.unlease[i].n <= 4);
  REQUIRE_EQ(F.npairs, slabs);
  cache_destroy(c);
}
END_TEST

START_TEST(test_freeing_everything_returns_surplus_idle_slabs_in_batches) {
  cache_config cfg = cache_config_default();
  cfg.max_idle = 8;
  cache *c = make_cache(&cfg);
  enum { N = 200 };
  uintptr_t a[N];
  for (int i = 0; i < N; i++) REQUIRE_EQ(cache_alloc(c, 4096, 1, &a[i]), 0); /* a slab each */
  REQUIRE_EQ(F.nunlease, 0);
  for (int i = 0; i < N; i++) REQUIRE_EQ(cache_free(c, a[i]), 0);
  REQUIRE(F.nunlease > 0);
  REQUIRE(F.nunlease < F.npairs); /* in batches, not a request per slab */
  bool batched = false;
  for (size_t i = 0; i < F.nunlease; i++) batched |= F.unlease[i].n > 1;
  REQUIRE(batched);
  for (size_t i = 0; i < F.npairs; i++) REQUIRE_EQ(F.pair_live[i], 0); /* all fully free */
  cache_stats st;
  cache_get_stats(c, &st);
  REQUIRE(st.idle_slabs <= cfg.max_idle);
  REQUIRE_EQ(st.slabs, st.idle_slabs);
  REQUIRE_EQ(st.slabs + F.npairs, slabs_leased());
  REQUIRE_EQ(st.returned_slabs, F.npairs);
  cache_destroy(c);
}
END_TEST

/* A bin keeps at most twice its grant fully free, and that bound grows with the grant. */
START_TEST(test_a_bin_keeps_at_most_twice_its_grant_idle_as_its_grant_grows) {
  cache_config cfg = cache_config_default();
  cfg.first_grant = 2;
  cfg.max_grant = 8;
  cfg.max_idle = 1000; /* only the bin's bound applies */
  cache *c = make_cache(&cfg);
  enum { N = 40 };
  uintptr_t a[N];
  for (int i = 0; i < N; i++) REQUIRE_EQ(cache_alloc(c, 4096, 1, &a[i]), 0); /* 2 + 5 x 8 */
  REQUIRE_EQ(F.nunlease, 0);
  cache_stats st;
  for (int i = 0; i < N; i++) {
    REQUIRE_EQ(cache_free(c, a[i]), 0);
    cache_get_stats(c, &st);
    REQUIRE(st.idle_slabs <= 2 * cfg.max_grant);
  }
  REQUIRE(F.nunlease > 0);
  REQUIRE(st.idle_slabs > 2 * cfg.first_grant); /* the bound moved with the grant */
  REQUIRE_EQ(st.slabs, st.idle_slabs);
  REQUIRE_EQ(st.slabs + F.npairs, slabs_leased());
  cache_destroy(c);
}
END_TEST

START_TEST(test_trim_hands_back_idle_slabs_only) {
  cache_config cfg = cache_config_default();
  cfg.first_grant = 4;
  cache *c = make_cache(&cfg);
  uintptr_t a;
  REQUIRE_EQ(cache_alloc(c, 4096, 1, &a), 0); /* 4 slabs: 1 used, 3 idle */
  REQUIRE_EQ(cache_trim(c), 0);
  REQUIRE_EQ(F.npairs, 3);
  for (size_t i = 0; i < F.npairs; i++) {
    REQUIRE(F.pair_addr[i] != a);
    REQUIRE_EQ(F.pair_live[i], 0);
  }
  REQUIRE_EQ(cache_lookup(c, a, NULL, NULL, NULL, NULL), 0);
  cache_destroy(c);
}
END_TEST

/* ---- the backend says no ---- */

START_TEST(test_enomem_from_the_backend_trims_idle_slabs_and_retries_once) {
  cache_config cfg = cache_config_default();
  cfg.first_grant = 4;
  cfg.max_grant = 4;
  cache *c = make_cache(&cfg);
  uintptr_t a, b;
  REQUIRE_EQ(cache_alloc(c, 4096, 1, &a), 0); /* 4 slabs: 1 used, 3 idle */
  F.refuse_rc = ENOMEM;
  F.refuse_left = 1; /* the first call only */
  REQUIRE_EQ(cache_alloc(c, 64, 2, &b), 0);
  F.log[F.nlog] = 0;
  /* lease (its leased hook), refused lease, hand back idle, retry (its hook) */
  REQUIRE(strcmp(F.log, "LPLULP") == 0);
  REQUIRE_EQ(F.lease[1].rc, ENOMEM);
  REQUIRE_EQ(F.unlease[0].n, 3);
  for (size_t i = 0; i < F.npairs; i++) {
    REQUIRE(F.pair_addr[i] != a); /* the slab in use stays */
    REQUIRE_EQ(F.pair_live[i], 0);
  }
  REQUIRE_EQ(F.lease[2].want, F.lease[2].min); /* the retry asks for the least */
  require_slot_of(b, 2, 64);
  REQUIRE_EQ(cache_lookup(c, a, NULL, NULL, NULL, NULL), 0);
  cache_destroy(c);
}
END_TEST

START_TEST(test_enomem_twice_is_returned_after_one_retry) {
  cache *c = make_cache(NULL);
  uintptr_t a;
  F.refuse_rc = ENOMEM;
  F.refuse_left = 2;
  REQUIRE_EQ(cache_alloc(c, 64, 1, &a), ENOMEM);
  REQUIRE_EQ(F.nlease, 2);
  cache_stats st;
  cache_get_stats(c, &st);
  REQUIRE_EQ(st.slabs, 0);
  REQUIRE_EQ(st.allocs, 0);
  REQUIRE_EQ(st.refused, 1);
  /* the next allocation goes to the scheduler without asking (the back-off: 1 after one
   * refusal), and the one after asks again */
  REQUIRE_EQ(cache_alloc(c, 64, 1, &a), ENOMEM);
  REQUIRE_EQ(F.nlease, 2);
  REQUIRE_EQ(cache_alloc(c, 64, 1, &a), 0);
  REQUIRE_EQ(F.nlease, 3);
  cache_get_stats(c, &st);
  REQUIRE_EQ(st.skipped, 1);
  cache_destroy(c);
}
END_TEST

/* Near exhaustion: each refusal in a row doubles the allocations left to the scheduler without
 * asking (1, 2, 4 ...); a lease granted ends the back-off; other sizes and regions are not
 * held back. */
START_TEST(test_refused_leases_back_off_and_a_grant_ends_it) {
  cache *c = make_cache(NULL);
  uintptr_t a;
  F.refuse_rc = ENOMEM;
  F.refuse_left = 6; /* three refused leases (each one retried once) */
  int asked[3] = {0};
  for (int round = 0; round < 3; round++) {
    int before = F.nlease;
    REQUIRE_EQ(cache_alloc(c, 64, 1, &a), ENOMEM); /* asks: refused twice */
    asked[round] = F.nlease - before;
    for (int k = 0; k < (1 << round); k++) REQUIRE_EQ(cache_alloc(c, 64, 1, &a), ENOMEM);
    REQUIRE_EQ(F.nlease - before, 2); /* the skipped ones asked nothing */
  }
  REQUIRE_EQ(asked[0] + asked[1] + asked[2], 6);
  REQUIRE_EQ(cache_alloc(c, 128, 1, &a), 0); /* another size: its own bin, no back-off */
  cache_stats st;
  cache_get_stats(c, &st);
  REQUIRE_EQ(st.refused, 3);
  REQUIRE_EQ(st.skipped, 7);
  REQUIRE_EQ(cache_alloc(c, 64, 1, &a), 0); /* granted: the back-off ends */
  F.refuse_left = 2;
  uintptr_t v[256];
  size_t n = 0;
  while (cache_alloc(c, 64, 1, &v[n]) == 0 && n < 255) n++; /* until a lease is refused */
  REQUIRE_EQ(cache_alloc(c, 64, 1, &a), ENOMEM); /* one skipped, not eight */
  REQUIRE_EQ(cache_alloc(c, 64, 1, &a), 0);
  cache_destroy(c);
}
END_TEST

START_TEST(test_enoent_passes_through_and_creates_no_bin) {
  cache *c = make_cache(NULL);
  uintptr_t a[8];
  F.refuse_rc = ENOENT;
  F.refuse_left = 2;
  REQUIRE_EQ(cache_alloc(c, 64, 77, a), ENOENT);
  REQUIRE_EQ(F.nlease, 1); /* not retried: only ENOMEM is */
  REQUIRE_EQ(cache_balloc(c, 64, 77, 8, a), ENOENT);
  REQUIRE_EQ(F.nlease, 2);
  REQUIRE_EQ(F.nunlease, 0);
  cache_stats st;
  cache_get_stats(c, &st);
  REQUIRE_EQ(st.slabs, 0);
  REQUIRE_EQ(cache_flush(c), 0);
  REQUIRE_EQ(F.nunlease, 0); /* a later flush sends nothing */
  cache_destroy(c);
}
END_TEST

START_TEST(test_a_grant_of_the_wrong_slot_size_is_eproto_and_goes_back) {
  cache_config cfg = cache_config_default();
  cfg.first_grant = 3;
  cache *c = make_cache(&cfg);
  uintptr_t a;
  F.bad_slot = 256;
  REQUIRE_EQ(cache_alloc(c, 64, 1, &a), EPROTO);
  REQUIRE_EQ(F.npairs, 3); /* every slab of the grant handed straight back, empty */
  for (size_t i = 0; i < F.npairs; i++) REQUIRE_EQ(F.pair_live[i], 0);
  cache_stats st;
  cache_get_stats(c, &st);
  REQUIRE_EQ(st.slabs, 0);
  cache_destroy(c);
}
END_TEST

START_TEST(test_bad_configurations_are_einval) {
  cache_backend be = {.lease = fake_lease, .unlease = fake_unlease, .ctx = &F},
                none = {.lease = NULL, .unlease = fake_unlease, .ctx = &F};
  cache *c;
  cache_config cfg = cache_config_default();
  REQUIRE_EQ(cache_create(&c, NULL, &cfg), EINVAL);
  REQUIRE_EQ(cache_create(&c, &none, &cfg), EINVAL);
  cfg.first_grant = 0;
  REQUIRE_EQ(cache_create(&c, &be, &cfg), EINVAL);
  cfg = cache_config_default();
  cfg.max_grant = cfg.first_grant - 1;
  REQUIRE_EQ(cache_create(&c, &be, &cfg), EINVAL);
  cfg = cache_config_default();
  cfg.max_grant = 4097;
  REQUIRE_EQ(cache_create(&c, &be, &cfg), EINVAL);
  cfg = cache_config_default();
  cfg.max_batch = 0;
  REQUIRE_EQ(cache_create(&c, &be, &cfg), EINVAL);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("cache");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_allocations_are_distinct_aligned_and_inside_leased_slabs_of_their_slot);
  tcase_add_test(tc, test_every_lease_is_followed_by_leased_with_its_slabs);
  tcase_add_test(tc, test_free_then_alloc_reuses_the_slot);
  tcase_add_test(tc, test_double_free_is_einval);
  tcase_add_test(tc, test_free_of_an_interior_pointer_is_einval);
  tcase_add_test(tc, test_free_of_a_slot_never_handed_out_is_einval);
  tcase_add_test(tc, test_free_of_a_foreign_pointer_is_esrch);
  tcase_add_test(tc, test_sizes_0_and_4097_are_enotsup);
  tcase_add_test(tc, test_lookup_of_an_interior_address_gives_the_slot_start);
  tcase_add_test(tc, test_lookup_of_a_free_slot_is_einval);
  tcase_add_test(tc, test_lease_sizes_grow_geometrically_up_to_max_grant);
  tcase_add_test(tc, test_each_bin_grows_its_own_lease_size);
  tcase_add_test(tc, test_balloc_of_4096_objects_takes_few_leases_and_distinct_slots);
  tcase_add_test(tc, test_ballocs_in_batches_lease_ahead_not_once_per_batch);
  tcase_add_test(tc, test_balloc_uses_the_free_slots_the_bin_has_first);
  tcase_add_test(tc, test_flush_hands_back_every_slab_once_with_its_live_bitmap);
  tcase_add_test(tc, test_flush_counts_the_slots_the_scheduler_dropped);
  tcase_add_test(tc, test_flush_sends_one_request_per_scheduler);
  tcase_add_test(tc, test_flush_sorts_the_slabs_of_schedulers_far_apart);
  tcase_add_test(tc, test_flush_splits_a_scheduler_request_at_max_batch);
  tcase_add_test(tc, test_freeing_everything_returns_surplus_idle_slabs_in_batches);
  tcase_add_test(tc, test_a_bin_keeps_at_most_twice_its_grant_idle_as_its_grant_grows);
  tcase_add_test(tc, test_trim_hands_back_idle_slabs_only);
  tcase_add_test(tc, test_enomem_from_the_backend_trims_idle_slabs_and_retries_once);
  tcase_add_test(tc, test_enomem_twice_is_returned_after_one_retry);
  tcase_add_test(tc, test_refused_leases_back_off_and_a_grant_ends_it);
  tcase_add_test(tc, test_enoent_passes_through_and_creates_no_bin);
  tcase_add_test(tc, test_a_grant_of_the_wrong_slot_size_is_eproto_and_goes_back);
  tcase_add_test(tc, test_bad_configurations_are_einval);
  tcase_add_test(tc, test_a_flush_refused_for_memory_keeps_the_slabs_for_the_next);
  suite_add_tcase(s, tc);
  return s;
}

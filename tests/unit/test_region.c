/* test_region.c: the local region layer: the region tree, conservation of slabs and IDs,
 * packing, watermark trimming, realloc, and every error path. */
#include <check.h>

#include "check_main.h"
#include <errno.h>
#include <stdlib.h>

#include "common/types.h"
#include "region/region.h"

/* ---- a kernel pool that grows by heap chunks, freed at teardown ---- */
typedef struct {
  void *chunk[256];
  int n;
} chunks;
static chunks kchunks;
static int kernel_grow(void *ctx, size_t min_bytes, uintptr_t *addr, size_t *len) {
  chunks *c = ctx;
  size_t sz = min_bytes < ((size_t)4 << 20) ? (size_t)4 << 20 : ah_round_up(min_bytes, AH_SLAB_SIZE);
  if (c->n == 256 || !(c->chunk[c->n] = aligned_alloc(AH_SLAB_SIZE, sz))) return ENOMEM;
  *addr = (uintptr_t)c->chunk[c->n++];
  *len = sz;
  return 0;
}
static slab_pool *kernel;
static size_t kernel_objects_at_start;

#define GAS_BYTES ((size_t)64 << 20)

static region_layer *layer_with(region_config cfg, size_t bytes, rid_t ids) {
  kchunks.n = 0;
  slab_config kc = slab_config_default();
  kc.grow = kernel_grow;
  kc.grow_ctx = &kchunks;
  size_t kbytes = (size_t)4 << 20;
  void *mem = aligned_alloc(AH_SLAB_SIZE, kbytes);
  kchunks.chunk[kchunks.n++] = mem;
  REQUIRE_EQ(slab_pool_create_self_hosted(&kernel, mem, kbytes, &kc), 0);
  slab_stats ks;
  slab_get_stats(kernel, &ks);
  kernel_objects_at_start = ks.objects;
  region_layer *L;
  REQUIRE_EQ(region_layer_create(&L, &cfg, kernel), 0);
  if (bytes) REQUIRE_EQ(region_layer_add_range(L, cfg.gas_base, bytes), 0);
  if (ids) REQUIRE_EQ(region_layer_add_ids(L, 1, ids), 0);
  return L;
}
static region_layer *default_layer(void) { return layer_with(region_config_default(), GAS_BYTES, 1000); }

static void teardown(region_layer *L) {
  region_layer_destroy(L, NULL, NULL);
  for (int i = 0; i < kchunks.n; i++) free(kchunks.chunk[i]);
  kchunks.n = 0;
}

/* Conservation: every slab is free in the layer or in a region's records, every ID free or
 * used. */
static size_t region_slabs(region_layer *L, rid_t id) {
  region_info info;
  REQUIRE_EQ(region_get_info(L, id, &info), 0);
  return info.pool.full_slabs + info.pool.partial_slabs + info.pool.empty_slabs +
         info.pool.run_slabs + info.pool.free_slabs;
}
static void check_conservation(region_layer *L, const rid_t *live, size_t nlive, size_t total_slabs,
                               uint64_t total_ids) {
  region_layer_stats st;
  region_layer_get_stats(L, &st);
  size_t held = region_slabs(L, REGION_ROOT);
  for (size_t i = 0; i < nlive; i++) held += region_slabs(L, live[i]);
  REQUIRE_EQ(st.free_slabs + held, total_slabs);
  REQUIRE_EQ(st.free_ids + nlive, total_ids);
  REQUIRE_EQ(st.regions, nlive + 1);
  REQUIRE_EQ(st.stranded_slabs, 0);
  REQUIRE_EQ(st.stranded_ids, 0);
}

START_TEST(test_deep_and_wide_trees_free_subtrees_without_losing_slabs_or_ids) {
  region_layer *L = default_layer();
  size_t total = GAS_BYTES / AH_SLAB_SIZE;
  rid_t chain[50], wide[200];
  rid_t parent = REGION_ROOT;
  for (int i = 0; i < 50; i++) { /* a chain 50 deep */
    REQUIRE_EQ(region_create(L, parent, i, &chain[i]), 0);
    parent = chain[i];
    uintptr_t a;
    REQUIRE_EQ(region_alloc(L, 64 + i * 100, chain[i], &a), 0);
  }
  for (int i = 0; i < 200; i++) { /* 200 children of chain[10] */
    REQUIRE_EQ(region_create(L, chain[10], 1, &wide[i]), 0);
    uintptr_t a;
    REQUIRE_EQ(region_alloc(L, 5000, wide[i], &a), 0);
  }
  rid_t all[250];
  for (int i = 0; i < 50; i++) all[i] = chain[i];
  for (int i = 0; i < 200; i++) all[50 + i] = wide[i];
  check_conservation(L, all, 250, total, 1000);
  region_info info;
  REQUIRE_EQ(region_get_info(L, chain[10], &info), 0);
  REQUIRE_EQ(info.children, 201);
  REQUIRE_EQ(info.parent, chain[9]);
  REQUIRE_EQ(info.level_hint, 10);
  /* Free chain[5]: 45 chain regions and all 200 wide ones go. */
  REQUIRE_EQ(region_free(L, chain[5]), 0);
  for (int i = 5; i < 50; i++) REQUIRE(!region_exists(L, chain[i]));
  for (int i = 0; i < 200; i++) REQUIRE(!region_exists(L, wide[i]));
  check_conservation(L, chain, 5, total, 1000);
  REQUIRE_EQ(region_get_info(L, chain[4], &info), 0);
  REQUIRE_EQ(info.children, 0);
  for (int i = 4; i >= 0; i--) REQUIRE_EQ(region_free(L, chain[i]), 0);
  check_conservation(L, NULL, 0, total, 1000);
  /* Every metadata record of the freed regions went back to the kernel pool. */
  region_layer_stats st;
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.used_ranges, 0);
  teardown(L);
}
END_TEST

typedef struct {
  uintptr_t addr[4096];
  size_t len[4096];
  size_t n;
} spans;
static int collect(void *ctx, uintptr_t addr, size_t len) {
  spans *s = ctx;
  REQUIRE(s->n < 4096);
  if (s->n) REQUIRE(addr > s->addr[s->n - 1] + s->len[s->n - 1]); /* sorted and coalesced */
  s->addr[s->n] = addr;
  s->len[s->n++] = len;
  return 0;
}
static bool covered(const spans *s, uintptr_t a, size_t len) {
  for (size_t i = 0; i < s->n; i++)
    if (a >= s->addr[i] && a + len <= s->addr[i] + s->len[i]) return true;
  return false;
}

START_TEST(test_list_of_30000_nodes_packs_into_few_ranges_covering_exactly_the_used_slabs) {
  region_layer *L = default_layer();
  rid_t list, sub;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &list), 0);
  enum { N = 30000 };
  static uintptr_t node[N];
  for (int i = 0; i < N; i++) REQUIRE_EQ(region_alloc(L, 256, list, &node[i]), 0);
  static spans s;
  s.n = 0;
  size_t n;
  REQUIRE_EQ(region_pack(L, &list, 1, NULL, 0, collect, &s, &n), 0);
  REQUIRE_EQ(n, s.n);
  REQUIRE(n <= 16); /* 1875 slabs in a handful of ranges */
  size_t bytes = 0;
  for (size_t i = 0; i < s.n; i++) bytes += s.len[i];
  REQUIRE_EQ(bytes, (size_t)N * 256); /* exactly the used slabs: 16 nodes per slab, all full */
  for (int i = 0; i < N; i += 97) REQUIRE(covered(&s, node[i], 256));
  /* A sub-region's objects are included when the parent is packed. */
  REQUIRE_EQ(region_create(L, list, 1, &sub), 0);
  uintptr_t extra[100];
  REQUIRE_EQ(region_balloc(L, 1024, sub, 100, extra), 0);
  s.n = 0;
  REQUIRE_EQ(region_pack(L, &list, 1, NULL, 0, collect, &s, &n), 0);
  bytes = 0;
  for (size_t i = 0; i < s.n; i++) bytes += s.len[i];
  REQUIRE_EQ(bytes, (size_t)N * 256 + 100 * 1024);
  for (int i = 0; i < 100; i++) REQUIRE(covered(&s, extra[i], 1024));
  /* Packing the sub-region alone gives only its slabs; single objects can be added. */
  s.n = 0;
  REQUIRE_EQ(region_pack(L, &sub, 1, &node[7], 1, collect, &s, &n), 0);
  bytes = 0;
  for (size_t i = 0; i < s.n; i++) bytes += s.len[i];
  REQUIRE_EQ(bytes, 100 * 1024 + 256);
  REQUIRE(covered(&s, node[7], 256));
  REQUIRE(!covered(&s, node[8], 256));
  /* An empty region packs into no range. */
  rid_t empty;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &empty), 0);
  s.n = 0;
  REQUIRE_EQ(region_pack(L, &empty, 1, NULL, 0, collect, &s, &n), 0);
  REQUIRE_EQ(n, 0);
  REQUIRE_EQ(s.n, 0);
  teardown(L);
}
END_TEST

/* What a pack of `list` must cover: the slabs of the live objects (small ones share slabs). */
static size_t expected_pack_bytes(const uintptr_t *obj, const size_t *size, const bool *live,
                                  int n) {
  static uintptr_t slab[4096];
  size_t ns = 0, bytes = 0;
  for (int i = 0; i < n; i++) {
    if (!live[i]) continue;
    if (size[i] > AH_SLAB_SIZE) {
      bytes += ah_round_up(size[i], AH_SLAB_SIZE);
      continue;
    }
    uintptr_t sl = obj[i] & ~(uintptr_t)(AH_SLAB_SIZE - 1);
    bool seen = false;
    for (size_t j = 0; j < ns && !seen; j++) seen = slab[j] == sl;
    if (!seen) slab[ns++] = sl;
  }
  return bytes + ns * AH_SLAB_SIZE;
}

START_TEST(test_pack_after_every_change_covers_exactly_the_live_objects) {
  /* Packs are cached per region while its pool is unchanged: every kind of change must show. */
  region_layer *L = default_layer();
  rid_t list;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &list), 0);
  enum { N = 600 };
  static uintptr_t obj[N];
  static size_t size[N];
  static bool live[N];
  static spans s;
  unsigned seed = 12345;
  for (int step = 0; step < 3000; step++) {
    seed = seed * 1103515245u + 12345u;
    int i = (int)((seed >> 8) % N);
    if (live[i]) {
      REQUIRE_EQ(region_free_object(L, obj[i]), 0);
      live[i] = false;
    } else {
      size[i] = (seed >> 20) % 8 == 0 ? 3 * AH_SLAB_SIZE : 256; /* some multi-slab runs */
      REQUIRE_EQ(region_alloc(L, size[i], list, &obj[i]), 0);
      live[i] = true;
    }
    if (step % 7 == 0) { /* a lease and its return with one live slot: a packed slab more */
      uintptr_t slab;
      size_t got;
      uint32_t slot;
      REQUIRE_EQ(region_lease(L, list, 256, 1, 1, 5, &slab, &got, &slot), 0);
      s.n = 0;
      size_t n;
      REQUIRE_EQ(region_pack(L, &list, 1, NULL, 0, collect, &s, &n), 0);
      REQUIRE(!covered(&s, slab, 256)); /* leased: not packed */
      int j = 0;
      while (j < N && live[j]) j++;
      if (j < N) {
        uint64_t pair[2] = {slab, 1};
        size_t dropped;
        REQUIRE_EQ(region_lease_return(L, 5, pair, 1, &dropped), 0);
        obj[j] = slab, size[j] = 256, live[j] = true;
      }
    }
    s.n = 0;
    size_t n, bytes = 0;
    REQUIRE_EQ(region_pack(L, &list, 1, NULL, 0, collect, &s, &n), 0);
    for (size_t k = 0; k < s.n; k++) bytes += s.len[k];
    REQUIRE_EQ(bytes, expected_pack_bytes(obj, size, live, N));
    for (int k = 0; k < N; k++)
      if (live[k]) REQUIRE(covered(&s, obj[k], size[k]));
  }
  teardown(L);
}
END_TEST

/* A well-behaved region's objects under hostile calls aimed at the end of the GAS: interior
 * frees and reallocs, sizes near 2^64, reallocs into other regions, regions created and
 * freed, with pages moving about. Every live object stays known, exactly, and nothing handed
 * out overlaps it. */
START_TEST(test_live_objects_at_the_gas_end_survive_hostile_calls) {
  region_config cfg = region_config_default();
  cfg.gas_size = (size_t)8 << 20;
  region_layer *L = layer_with(cfg, cfg.gas_size, 100000);
  const uintptr_t end = cfg.gas_base + cfg.gas_size;
  rid_t good, bad[4];
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &good), 0);
  for (int i = 0; i < 4; i++) REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &bad[i]), 0);
  enum { N = 512 };
  static uintptr_t obj[N];
  static size_t osz[N];
  int n = 0;
  static const size_t sizes[] = {100, 64, 128, 4096, 5000, 40000};
  uint64_t seed = 99;
  for (int step = 0; step < 20000; step++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t r = seed >> 17;
    uintptr_t target = n ? obj[r % (unsigned)n] : end - 128;
    uintptr_t a;
    switch (r % 9) {
      case 0: case 1: /* the well-behaved worker allocates */
        if (n < N && region_alloc(L, sizes[(r >> 8) % 6], good, &a) == 0) {
          uintptr_t st;
          size_t sz;
          REQUIRE_EQ(region_query(L, a, NULL, &st, &sz), 0);
          for (int k = 0; k < n; k++) REQUIRE(a + sz <= obj[k] || obj[k] + osz[k] <= a);
          obj[n] = a, osz[n++] = sz;
        }
        break;
      case 2: /* and frees */
        if (n) {
          int k = (int)(r % (unsigned)n);
          REQUIRE_EQ(region_free_object(L, obj[k]), 0);
          obj[k] = obj[--n], osz[k] = osz[n];
        }
        break;
      case 3: /* hostile: a strictly interior free is refused; near-end frees may hit a bad
               * region's objects (any worker may free those): the checks below judge them */
        if (n && osz[r % (unsigned)n] > 1)
          REQUIRE_EQ(region_free_object(L, target + 1 + (r >> 9) % (osz[r % (unsigned)n] - 1)), EINVAL);
        (void)region_free_object(L, end - 1 - ((r >> 12) % 8192) / 64 * 64);
        break;
      case 4: case 5: { /* hostile: reallocs of interior pointers, any size, any region */
        static const size_t hs[] = {1, 64, 4096, 70000, (size_t)1 << 30, SIZE_MAX, SIZE_MAX - 4095,
                                    (size_t)8 << 20};
        uintptr_t x = target + 8 + ((r >> 9) % 56);
        size_t old;
        rid_t to = (r >> 20) % 3 == 0 ? good : (r >> 20) % 3 == 1 ? bad[(r >> 24) % 4] : REGION_NONE;
        if (n) REQUIRE_EQ(region_realloc(L, x, hs[(r >> 12) % 8], to, &a, &old), EINVAL);
        bool ours = false; /* the last slot may be ours: then this would be a legal realloc */
        for (int k = 0; k < n; k++) ours |= obj[k] == end - 64;
        if (!ours) (void)region_realloc(L, end - 64, hs[(r >> 13) % 8], to, &a, &old);
        break;
      }
      case 6: /* hostile: huge allocations into the regions, which move pages about */
        if (region_alloc(L, (r >> 9) % 2 ? SIZE_MAX - 100 : (size_t)3 << 20, bad[(r >> 10) % 4], &a) == 0) {
          for (int k = 0; k < n; k++) REQUIRE(a + ((size_t)3 << 20) <= obj[k] || obj[k] + osz[k] <= a);
          REQUIRE_EQ(region_free_object(L, a), 0);
        }
        break;
      case 7: { /* hostile: a bad region freed and made again (its pages go back) */
        int k = (int)((r >> 9) % 4);
        REQUIRE_EQ(region_free(L, bad[k]), 0);
        REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &bad[k]), 0);
        uintptr_t b;
        for (int j = 0; j < 8; j++) {
          if (region_alloc(L, sizes[(r >> (12 + j)) % 6], bad[k], &b)) break;
          for (int m = 0; m < n; m++) REQUIRE(b + 64 <= obj[m] || obj[m] + osz[m] <= b);
        }
        break;
      }
      default: { /* queries of interior pointers name the containing object, exactly */
        uintptr_t st;
        size_t sz;
        rid_t rid;
        if (n && region_query(L, target + 1, &rid, &st, &sz) == 0) REQUIRE(st == target && rid == good);
      }
    }
    for (int k = 0; k < n; k++) { /* every live object still known, exactly */
      uintptr_t st;
      size_t sz;
      rid_t rid;
      REQUIRE_EQ(region_query(L, obj[k], &rid, &st, &sz), 0);
      REQUIRE(st == obj[k] && sz == osz[k] && rid == good);
    }
  }
  teardown(L);
}
END_TEST

/* A huge balloc that fails leaves the GAS as free slabs of the region it was tried in; a new
 * region then needs a contiguous run that trimming must find (found by the protocol fuzzer:
 * ENOMEM in an almost empty GAS). */
START_TEST(test_allocation_after_a_failed_huge_balloc_finds_contiguous_space) {
  region_config cfg = region_config_default();
  cfg.gas_size = GAS_BYTES;
  cfg.create_root = true;
  region_layer *L = layer_with(cfg, GAS_BYTES, 1000);
  static uintptr_t addrs[1 << 10];
  REQUIRE_EQ(region_balloc(L, (size_t)1 << 20, REGION_ROOT, 1 << 10, addrs), ENOMEM);
  uintptr_t sl[3];
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, REGION_ROOT, 4096, 3, 1, 7, sl, &got, &slot), 0);
  uint64_t pairs[6] = {sl[0], 0, sl[1], 0, sl[2], 0};
  size_t dropped;
  REQUIRE_EQ(region_lease_return(L, 7, pairs, got, &dropped), 0);
  rid_t p, id;
  REQUIRE_EQ(region_create(L, REGION_ROOT, -1, &p), 0);
  REQUIRE_EQ(region_create(L, p, -1, &id), 0);
  uintptr_t a;
  REQUIRE_EQ(region_alloc(L, 64, id, &a), 0);
  REQUIRE_EQ(region_alloc(L, 9000, id, &a), 0);
  REQUIRE_EQ(region_alloc(L, (size_t)4 << 20, p, &a), 0);
  teardown(L);
}
END_TEST

/* need_pages: count calls; hand out one more MiB per call while allowed. */
typedef struct {
  int calls, allow;
  uintptr_t next;
} pager;
static int give_page(void *ctx, region_layer *L, size_t min_bytes) {
  pager *p = ctx;
  p->calls++;
  if (p->allow-- <= 0) return ENOMEM;
  size_t len = ah_round_up(min_bytes, AH_PAGE_SIZE);
  int rc = region_layer_add_range(L, p->next, len);
  p->next += len;
  return rc;
}

START_TEST(test_trimming_moves_idle_slabs_to_a_busy_region_before_asking_for_pages) {
  region_config cfg = region_config_default();
  cfg.high_watermark = 16;
  cfg.low_watermark = 2;
  pager pg = {.allow = 0, .next = cfg.gas_base + ((size_t)1 << 30)};
  cfg.need_pages = give_page;
  cfg.need_pages_ctx = &pg;
  size_t slabs = 8 * 16 + 16; /* room for 8 idle regions at the high watermark, and a bit */
  region_layer *L = layer_with(cfg, slabs * AH_SLAB_SIZE, 100);
  rid_t idle[8], busy;
  for (int i = 0; i < 8; i++) REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &idle[i]), 0);
  region_info info;
  REQUIRE_EQ(region_get_info(L, idle[0], &info), 0);
  REQUIRE_EQ(info.pool.free_slabs, 16); /* starts at the high watermark */
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &busy), 0);
  /* The busy region allocates far more than the free ranges hold. */
  uintptr_t a;
  int got = 0;
  while (region_alloc(L, 4096, busy, &a) == 0) got++;
  region_layer_stats st;
  region_layer_get_stats(L, &st);
  REQUIRE(st.trims > 0);
  REQUIRE_EQ(st.trimmed_slabs, 8 * (16 - 2)); /* every idle region trimmed to the low mark */
  for (int i = 0; i < 8; i++) {
    REQUIRE_EQ(region_get_info(L, idle[i], &info), 0);
    REQUIRE_EQ(info.pool.free_slabs, 2);
  }
  REQUIRE(got >= 8 * 14 + 16); /* it got the trimmed slabs */
  REQUIRE(pg.calls >= 1); /* ...and only then asked for pages (refused here) */
  /* With pages allowed, allocation continues. */
  pg.allow = 1;
  REQUIRE_EQ(region_alloc(L, 4096, busy, &a), 0);
  teardown(L);
}
END_TEST

/* Issue 32: what the scheduler reads on every request (free IDs, free slabs and ranges) are
 * running counts, right through heavy fragmentation (a debug build also checks them against a
 * walk at every read). */
START_TEST(test_statistics_stay_exact_through_fragmentation) {
  region_layer *L = layer_with(region_config_default(), GAS_BYTES, 5000);
  enum { N = 2000 };
  static rid_t id[N];
  for (int i = 0; i < N; i++) REQUIRE_EQ(region_create(L, REGION_ROOT, -1, &id[i]), 0);
  for (int i = 0; i < N; i += 2) REQUIRE_EQ(region_free(L, id[i]), 0);
  region_layer_stats st;
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.free_ids, 5000 - N / 2);
  REQUIRE_EQ(st.regions, N / 2 + 1);
  REQUIRE(st.free_ranges >= 400); /* the freed regions that had slabs: holes between live ones */
  static rid_t live[N / 2];
  for (int i = 1; i < N; i += 2) live[i / 2] = id[i];
  check_conservation(L, live, N / 2, GAS_BYTES >> AH_SLAB_SHIFT, 5000);
  /* a region made now takes the lowest free ID, and its slabs from a hole of its size */
  rid_t again;
  REQUIRE_EQ(region_create(L, REGION_ROOT, -1, &again), 0);
  REQUIRE_EQ(again, id[0]);
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.free_ids, 5000 - N / 2 - 1);
  for (int i = 1; i < N; i += 2) REQUIRE_EQ(region_free(L, id[i]), 0);
  REQUIRE_EQ(region_free(L, again), 0);
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.free_ids, 5000);
  REQUIRE_EQ(st.free_ranges, 1); /* everything merged back */
  teardown(L);
}
END_TEST

static int cmp_uptr(const void *x, const void *y) {
  uintptr_t a = *(const uintptr_t *)x, b = *(const uintptr_t *)y;
  return (a > b) - (a < b);
}

/* Near exhaustion the free space is holes of one slab: a lease of many slabs takes a few of
 * them one by one (it stops looking for a run once none could be had), and an object of two
 * slabs finds a hole of two once there is one. */
START_TEST(test_leases_and_runs_find_holes_near_exhaustion) {
  region_layer *L = layer_with(region_config_default(), 2048 * AH_SLAB_SIZE, 100);
  rid_t a, b;
  REQUIRE_EQ(region_create(L, REGION_ROOT, -1, &a), 0);
  static uintptr_t obj[2048];
  size_t n = 0;
  while (n < 2048 && region_alloc(L, 4096, a, &obj[n]) == 0) n++;
  REQUIRE(n > 1900); /* the GAS is full */
  qsort(obj, n, sizeof *obj, cmp_uptr);
  for (size_t i = 0; i < n; i += 2) REQUIRE_EQ(region_free_object(L, obj[i]), 0);
  REQUIRE_EQ(region_create(L, REGION_ROOT, -1, &b), 0);
  uintptr_t s[64];
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, b, 64, 64, 1, 5, s, &got, &slot), 0);
  REQUIRE_EQ(got, 16); /* no run anywhere: a few holes a left, not all 64 asked for */
  for (size_t i = 0; i < got; i++) {
    uintptr_t *hit = bsearch(&s[i], obj, n, sizeof *obj, cmp_uptr);
    REQUIRE(hit && (hit - obj) % 2 == 0);
  }
  uint64_t pairs[128];
  for (size_t i = 0; i < got; i++) pairs[2 * i] = s[i], pairs[2 * i + 1] = 0;
  size_t dropped;
  REQUIRE_EQ(region_lease_return(L, 5, pairs, got, &dropped), 0);
  size_t k = 1; /* a kept object between two holes: freed, a hole of three */
  while (k + 1 < n && !(obj[k] == obj[k - 1] + AH_SLAB_SIZE && obj[k + 1] == obj[k] + AH_SLAB_SIZE))
    k += 2;
  REQUIRE(k + 1 < n);
  REQUIRE_EQ(region_free_object(L, obj[k]), 0);
  uintptr_t big;
  REQUIRE_EQ(region_alloc(L, 8192, b, &big), 0);
  region_layer_stats st;
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.stranded_slabs, 0);
  teardown(L);
}
END_TEST

/* Whole pages go to other schedulers from the lowest free range holding one (an index of such
 * ranges: no walk over the holes below it). */
START_TEST(test_pages_come_from_the_lowest_range_holding_a_whole_page) {
  region_config cfg = region_config_default();
  cfg.create_root = false;
  region_layer *L = layer_with(cfg, 0, 0);
  const size_t pp = AH_PAGE_SIZE >> AH_SLAB_SHIFT;
  uintptr_t base = cfg.gas_base;
  /* 1000 holes of 100 slabs, a range of 3 pages not aligned, an aligned one of 4 pages */
  for (size_t i = 0; i < 1000; i++)
    REQUIRE_EQ(region_layer_add_range(L, base + i * 101 * AH_SLAB_SIZE, 100 * AH_SLAB_SIZE), 0);
  REQUIRE_EQ(region_layer_add_range(L, base + (500 * pp + 7) * AH_SLAB_SIZE, 3 * AH_PAGE_SIZE), 0);
  REQUIRE_EQ(region_layer_add_range(L, base + 600 * AH_PAGE_SIZE, 4 * AH_PAGE_SIZE), 0);
  uintptr_t addr;
  size_t np;
  REQUIRE_EQ(region_layer_take_pages(L, 8, &addr, &np), 0);
  REQUIRE_EQ(np, 2); /* the unaligned range holds two whole pages */
  REQUIRE_EQ(addr, base + 501 * AH_PAGE_SIZE);
  REQUIRE_EQ(region_layer_take_pages(L, 1, &addr, &np), 0);
  REQUIRE_EQ(np, 1);
  REQUIRE_EQ(addr, base + 603 * AH_PAGE_SIZE); /* the highest page of the next */
  REQUIRE_EQ(region_layer_take_pages(L, 8, &addr, &np), 0);
  REQUIRE_EQ(np, 3);
  REQUIRE_EQ(region_layer_take_pages(L, 8, &addr, &np), ENOENT); /* holes only now */
  region_layer_stats st;
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.free_slabs, 1000 * 100 + 7 * pp - 6 * pp);
  teardown(L);
}
END_TEST

/* {addr, len} pairs into a growable array (a slab_range_fn). */
typedef struct {
  uint64_t *v;
  size_t n, cap;
} words_t;
static int push_pair(void *ctx, uintptr_t addr, size_t len) {
  words_t *w = ctx;
  if (w->n + 2 > w->cap) {
    w->cap = w->cap ? 2 * w->cap : 64;
    w->v = realloc(w->v, w->cap * sizeof *w->v);
    REQUIRE(w->v != NULL);
  }
  w->v[w->n++] = addr;
  w->v[w->n++] = len;
  return 0;
}

/* What a region owns (region_pack_owned: what its holder gives back to the OS before it frees
 * it): its pools' ranges, used and free, in a few ranges however scattered its objects; and
 * from then on no other region trims its free slabs. */
START_TEST(test_owned_ranges_cover_the_pools_and_stop_trimming) {
  region_config cfg = region_config_default();
  region_layer *L = layer_with(cfg, 512 * AH_SLAB_SIZE, 100);
  rid_t a, kid, b;
  REQUIRE_EQ(region_create(L, REGION_ROOT, -1, &a), 0);
  REQUIRE_EQ(region_create(L, a, -1, &kid), 0);
  static uintptr_t obj[200];
  for (int i = 0; i < 200; i++) REQUIRE_EQ(region_alloc(L, 4096, i % 2 ? kid : a, &obj[i]), 0);
  for (int i = 0; i < 200; i += 4) REQUIRE_EQ(region_free_object(L, obj[i]), 0);
  words_t w = {0};
  size_t n, live_n;
  REQUIRE_EQ(region_pack(L, &a, 1, NULL, 0, push_pair, &w, &live_n), 0);
  w.n = 0;
  REQUIRE_EQ(region_pack_owned(L, a, push_pair, &w, &n), 0);
  REQUIRE(n < live_n); /* fewer ranges than the live ones, scattered by the frees */
  uint64_t owned = 0;
  for (size_t i = 0; i < w.n; i += 2) owned += w.v[i + 1];
  REQUIRE_EQ(owned >> AH_SLAB_SHIFT, region_slabs(L, a) + region_slabs(L, kid));
  for (int i = 0; i < 200; i++) { /* every object, live or freed, inside */
    bool in = false;
    for (size_t j = 0; j < w.n && !in; j += 2) in = obj[i] >= w.v[j] && obj[i] < w.v[j] + w.v[j + 1];
    REQUIRE(in);
  }
  /* b needs more space than Free Ranges has: a's and kid's free slabs are not taken */
  region_info before_a, before_k, after;
  REQUIRE_EQ(region_get_info(L, a, &before_a), 0);
  REQUIRE_EQ(region_get_info(L, kid, &before_k), 0);
  REQUIRE_EQ(region_create(L, REGION_ROOT, -1, &b), 0);
  uintptr_t x;
  while (region_alloc(L, 4096, b, &x) == 0) {
  }
  REQUIRE_EQ(region_get_info(L, a, &after), 0);
  REQUIRE_EQ(after.pool.free_slabs, before_a.pool.free_slabs);
  REQUIRE_EQ(region_get_info(L, kid, &after), 0);
  REQUIRE_EQ(after.pool.free_slabs, before_k.pool.free_slabs);
  REQUIRE_EQ(region_pack_owned(L, 9999, push_pair, &w, &n), ENOENT);
  free(w.v);
  REQUIRE_EQ(region_free(L, a), 0);
  teardown(L);
}
END_TEST

START_TEST(test_objects_alloc_query_realloc_and_balloc) {
  region_layer *L = default_layer();
  rid_t r1, r2;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r1), 0);
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r2), 0);
  uintptr_t a, b, start;
  size_t size, old;
  rid_t who;
  REQUIRE_EQ(region_alloc(L, 100, r1, &a), 0);
  REQUIRE_EQ(region_query(L, a + 50, &who, &start, &size), 0);
  REQUIRE_EQ(who, r1);
  REQUIRE_EQ(start, a);
  REQUIRE_EQ(size, 128);
  REQUIRE_EQ(region_realloc(L, a, 120, REGION_NONE, &b, &old), 0); /* same slot: in place */
  REQUIRE_EQ(b, a);
  REQUIRE_EQ(old, 128);
  REQUIRE_EQ(region_realloc(L, a, 1000, REGION_NONE, &b, &old), 0); /* grows: moves */
  REQUIRE(b != a);
  REQUIRE_EQ(region_query(L, a, NULL, NULL, NULL), EINVAL); /* the old one is gone */
  REQUIRE_EQ(region_realloc(L, b, 1000, r2, &a, &old), 0); /* moves to another region */
  REQUIRE_EQ(region_query(L, a, &who, NULL, &size), 0);
  REQUIRE_EQ(who, r2);
  REQUIRE_EQ(size, 1024);
  REQUIRE_EQ(old, 1024);
  uintptr_t many[500];
  REQUIRE_EQ(region_balloc(L, 200, r1, 500, many), 0);
  for (int i = 0; i < 500; i++) {
    REQUIRE_EQ(region_query(L, many[i], &who, NULL, NULL), 0);
    REQUIRE_EQ(who, r1);
  }
  for (int i = 0; i < 500; i++) REQUIRE_EQ(region_free_object(L, many[i]), 0);
  REQUIRE_EQ(region_alloc(L, 64, REGION_ROOT, &a), 0); /* the root region holds objects too */
  REQUIRE_EQ(region_query(L, a, &who, NULL, NULL), 0);
  REQUIRE_EQ(who, REGION_ROOT);
  teardown(L);
}
END_TEST

START_TEST(test_error_paths_have_distinct_codes_and_change_nothing) {
  region_config cfg = region_config_default();
  region_layer *L = layer_with(cfg, (size_t)1 << 20, 3);
  rid_t r[3], extra;
  uintptr_t a, b;
  size_t old;
  for (int i = 0; i < 3; i++) REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r[i]), 0);
  region_layer_stats before, after;
  region_layer_get_stats(L, &before);
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &extra), ENOSPC);  /* IDs exhausted */
  REQUIRE_EQ(region_create(L, 999, 0, &extra), ENOENT);          /* unknown parent */
  REQUIRE_EQ(region_alloc(L, 64, 999, &a), ENOENT);              /* unknown region */
  REQUIRE_EQ(region_free(L, 999), ENOENT);
  REQUIRE_EQ(region_free(L, REGION_ROOT), EINVAL);               /* the root stays */
  REQUIRE_EQ(region_free_object(L, 0x1234), EINVAL);             /* wild pointer */
  REQUIRE_EQ(region_free_object(L, cfg.gas_base + ((size_t)2 << 20)), EINVAL); /* unowned GAS */
  REQUIRE_EQ(region_alloc(L, 0, r[0], &a), EINVAL);
  region_layer_get_stats(L, &after);
  REQUIRE_EQ(after.regions, before.regions);
  REQUIRE_EQ(after.free_slabs, before.free_slabs);
  REQUIRE_EQ(region_alloc(L, 64, r[0], &a), 0);
  REQUIRE_EQ(region_free_object(L, a + 64), EINVAL);  /* a free slot next to a */
  REQUIRE_EQ(region_free_object(L, a + 8), EINVAL);   /* interior */
  REQUIRE_EQ(region_free_object(L, a), 0);
  REQUIRE_EQ(region_free_object(L, a), EINVAL);       /* double free */
  REQUIRE_EQ(region_realloc(L, a, 64, REGION_NONE, &b, &old), EINVAL);
  REQUIRE_EQ(region_alloc(L, 64, r[1], &a), 0);
  REQUIRE_EQ(region_realloc(L, a, 64, 999, &b, &old), ENOENT);
  REQUIRE_EQ(region_free(L, r[1]), 0);
  REQUIRE_EQ(region_free(L, r[1]), ENOENT);           /* double rfree */
  REQUIRE_EQ(region_free_object(L, a), EINVAL);       /* died with its region */
  /* No memory: 1 MiB of GAS, no need_pages. */
  REQUIRE_EQ(region_alloc(L, (size_t)2 << 20, r[0], &a), ENOMEM);
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &extra), 0); /* r[1]'s ID came back */
  REQUIRE_EQ(extra, r[1]);
  /* Bad ranges and IDs handed to the layer. */
  REQUIRE_EQ(region_layer_add_range(L, cfg.gas_base, AH_PAGE_SIZE), EINVAL);  /* overlap */
  REQUIRE_EQ(region_layer_add_range(L, cfg.gas_base - AH_PAGE_SIZE, AH_PAGE_SIZE), EINVAL);
  REQUIRE_EQ(region_layer_add_ids(L, 0, 5), EINVAL);
  REQUIRE_EQ(region_layer_add_ids(L, 2, 5), EINVAL); /* IDs in use */
  rid_t ids_ok = 10;
  REQUIRE_EQ(region_layer_add_ids(L, ids_ok, 5), 0);
  teardown(L);
}
END_TEST

START_TEST(test_freeing_a_region_returns_all_metadata_whatever_its_object_count) {
  region_layer *L = default_layer();
  slab_stats k0, k1;
  slab_get_stats(kernel, &k0);
  for (int round = 0; round < 3; round++) {
    rid_t r;
    REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
    uintptr_t a;
    for (int i = 0; i < 20000; i++) REQUIRE_EQ(region_alloc(L, 64, r, &a), 0);
    region_info info;
    REQUIRE_EQ(region_get_info(L, r, &info), 0);
    REQUIRE(info.meta_chunks >= 2); /* 20,000 objects needed more than the first chunk */
    REQUIRE_EQ(region_free(L, r), 0);
    slab_get_stats(kernel, &k1);
    if (round == 0) k0 = k1; /* the kernel pool's own bookkeeping settles in round 0 */
    REQUIRE_EQ(k1.objects, k0.objects);
  }
  teardown(L);
}
END_TEST

START_TEST(test_destroy_reports_all_address_space) {
  region_config cfg = region_config_default();
  region_layer *L = layer_with(cfg, (size_t)4 << 20, 100);
  rid_t r;
  uintptr_t a;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
  REQUIRE_EQ(region_alloc(L, 100000, r, &a), 0);
  static spans s;
  s.n = 0;
  region_layer_destroy(L, collect, &s);
  REQUIRE_EQ(s.n, 1);
  REQUIRE_EQ(s.addr[0], cfg.gas_base);
  REQUIRE_EQ(s.len[0], (size_t)4 << 20);
  for (int i = 0; i < kchunks.n; i++) free(kchunks.chunk[i]);
  kchunks.n = 0;
}
END_TEST

START_TEST(test_detached_regions_pages_and_ids_for_other_schedulers) {
  region_config cfg = region_config_default();
  cfg.create_root = false; /* a scheduler below the root holds no root region */
  region_layer *L = layer_with(cfg, (size_t)8 << 20, 100);
  rid_t a, b, c;
  REQUIRE_EQ(region_create_detached(L, 4242, 2, &a), 0); /* parent on another scheduler */
  REQUIRE_EQ(region_create(L, a, 3, &b), 0);
  REQUIRE_EQ(region_create_detached(L, b, 0, &c), EINVAL); /* b is local */
  region_info info;
  REQUIRE_EQ(region_get_info(L, a, &info), 0);
  REQUIRE_EQ(info.parent, 4242);
  REQUIRE(region_is_within(L, b, a));
  REQUIRE(region_is_within(L, a, a));
  REQUIRE(!region_is_within(L, a, b));
  uintptr_t o;
  REQUIRE_EQ(region_alloc(L, 64, b, &o), 0);
  REQUIRE(region_layer_holds(L, o));
  REQUIRE(!region_layer_holds(L, cfg.gas_base + ((size_t)7 << 20)));
  /* Whole pages only: the regions took slabs from the end of the first page-run. */
  uintptr_t pa;
  size_t np;
  region_layer_stats st0, st1;
  region_layer_get_stats(L, &st0);
  REQUIRE_EQ(region_layer_take_pages(L, 100, &pa, &np), 0);
  REQUIRE_EQ(pa % AH_PAGE_SIZE, 0);
  REQUIRE(np >= 1);
  region_layer_get_stats(L, &st1);
  REQUIRE_EQ(st0.free_slabs - st1.free_slabs, np * (AH_PAGE_SIZE / AH_SLAB_SIZE));
  REQUIRE(!region_layer_holds(L, pa));
  rid_t first, count;
  REQUIRE_EQ(region_layer_take_ids(L, 10, &first, &count), 0);
  REQUIRE_EQ(count, 10);
  REQUIRE_EQ(first, 91); /* the highest chunk of 1..100 */
  REQUIRE_EQ(region_free(L, a), 0);
  REQUIRE(!region_exists(L, b));
  teardown(L);
}
END_TEST

/* ---- leases for workers' caches, and zombies ---- */

static bool in_slab(uintptr_t slab, uintptr_t a) { return a - slab < AH_SLAB_SIZE; }

/* Leased slabs of a live region. */
static size_t leased_in(region_layer *L, rid_t id) {
  region_info info;
  REQUIRE_EQ(region_get_info(L, id, &info), 0);
  return info.pool.leased_slabs;
}

START_TEST(test_lease_in_an_unknown_region_is_enoent) {
  region_layer *L = default_layer();
  uintptr_t s[4];
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, 999, 64, 4, 1, 3, s, &got, &slot), ENOENT);
  rid_t r;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
  REQUIRE_EQ(region_free(L, r), 0);
  REQUIRE_EQ(region_lease(L, r, 64, 4, 1, 3, s, &got, &slot), ENOENT); /* freed */
  teardown(L);
}
END_TEST

START_TEST(test_lease_in_a_region_gives_slabs_it_owns_of_the_slot_size) {
  region_layer *L = default_layer();
  rid_t r;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
  uintptr_t s[20];
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, r, 1000, 20, 20, 3, s, &got, &slot), 0); /* more than it starts with */
  REQUIRE_EQ(got, 20);
  REQUIRE_EQ(slot, 1024);
  for (int i = 0; i < 20; i++) {
    REQUIRE_EQ(s[i] % AH_SLAB_SIZE, 0);
    REQUIRE(region_layer_holds(L, s[i]));
    REQUIRE_EQ(region_query(L, s[i], NULL, NULL, NULL), EINVAL); /* no object of the region */
    REQUIRE_EQ(region_free_object(L, s[i]), EINVAL);
    for (int j = 0; j < i; j++) REQUIRE(s[i] != s[j]);
  }
  REQUIRE_EQ(leased_in(L, r), 20);
  teardown(L);
}
END_TEST

START_TEST(test_bad_lease_arguments_at_the_layer_are_einval) {
  region_layer *L = default_layer();
  rid_t r;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
  uintptr_t s[2];
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, r, AH_SLAB_SIZE + 1, 1, 1, 3, s, &got, &slot), EINVAL);
  REQUIRE_EQ(region_lease(L, r, 0, 1, 1, 3, s, &got, &slot), EINVAL);
  REQUIRE_EQ(region_lease(L, r, 64, 1, 2, 3, s, &got, &slot), EINVAL);
  REQUIRE_EQ(region_lease(L, r, 64, 1, 1, -1, s, &got, &slot), EINVAL); /* not a rank */
  size_t dropped;
  REQUIRE_EQ(region_lease_return(L, 3, s, 0, &dropped), EINVAL);
  REQUIRE_EQ(leased_in(L, r), 0);
  teardown(L);
}
END_TEST

START_TEST(test_lease_return_makes_live_slots_objects_of_the_region) {
  region_layer *L = default_layer();
  rid_t r, who;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
  uintptr_t s[2], start;
  size_t got, size, dropped = 99;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, r, 512, 2, 2, 3, s, &got, &slot), 0); /* 8 slots each */
  uint64_t pairs[4] = {s[0], 0x81, s[1], 0};
  REQUIRE_EQ(region_lease_return(L, 3, pairs, 2, &dropped), 0);
  REQUIRE_EQ(dropped, 0);
  REQUIRE_EQ(leased_in(L, r), 0);
  REQUIRE_EQ(region_query(L, s[0] + 7 * 512 + 5, &who, &start, &size), 0);
  REQUIRE_EQ(who, r);
  REQUIRE_EQ(start, s[0] + 7 * 512);
  REQUIRE_EQ(size, 512);
  REQUIRE_EQ(region_query(L, s[0] + 512, NULL, NULL, NULL), EINVAL);
  REQUIRE_EQ(region_free_object(L, s[0]), 0);
  REQUIRE_EQ(region_free_object(L, s[0]), EINVAL);
  REQUIRE_EQ(region_lease_return(L, 3, pairs, 2, &dropped), EINVAL); /* handed back already */
  teardown(L);
}
END_TEST

START_TEST(test_lease_return_with_one_bad_pair_changes_nothing) {
  region_layer *L = default_layer();
  rid_t r, q;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &q), 0);
  uintptr_t s[4], other, obj;
  size_t got, dropped = 77;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, r, 256, 4, 4, 3, s, &got, &slot), 0);  /* 16 slots */
  REQUIRE_EQ(region_lease(L, q, 256, 1, 1, 4, &other, &got, &slot), 0); /* another lessee's */
  REQUIRE_EQ(region_alloc(L, 256, r, &obj), 0);
  region_config cfg = region_config_default();
  uint64_t bad[][2] = {
      {other, 0},                                  /* leased, but to worker 4 */
      {obj & ~(uint64_t)(AH_SLAB_SIZE - 1), 0},    /* a slab of ordinary objects */
      {s[2] + 64, 0},                              /* not a slab's start */
      {s[3], 1ull << 16},                          /* a slot the slab does not have */
      {cfg.gas_base + ((size_t)60 << 20), 0},      /* a free slab */
      {0x1000, 0},                                 /* outside the GAS */
  };
  for (unsigned k = 0; k < sizeof bad / sizeof *bad; k++) {
    uint64_t pairs[10] = {s[0], 1, s[1], 0xffff, bad[k][0], bad[k][1], s[2], 0, s[3], 2};
    REQUIRE_EQ(region_lease_return(L, 3, pairs, 5, &dropped), EINVAL);
    REQUIRE_EQ(dropped, 77);
    REQUIRE_EQ(leased_in(L, r), 4); /* every good slab still leased */
    REQUIRE_EQ(leased_in(L, q), 1);
    region_info info;
    REQUIRE_EQ(region_get_info(L, r, &info), 0);
    REQUIRE_EQ(info.pool.objects, 1);
    REQUIRE_EQ(region_query(L, s[0], NULL, NULL, NULL), EINVAL);
  }
  uint64_t good[8] = {s[0], 1, s[1], 0xffff, s[2], 0, s[3], 2};
  REQUIRE_EQ(region_lease_return(L, 3, good, 4, &dropped), 0);
  REQUIRE_EQ(leased_in(L, r), 0);
  region_info info;
  REQUIRE_EQ(region_get_info(L, r, &info), 0);
  REQUIRE_EQ(info.pool.objects, 1 + 1 + 16 + 1);
  teardown(L);
}
END_TEST

START_TEST(test_lease_return_naming_a_slab_twice_is_einval) {
  region_layer *L = default_layer();
  rid_t r;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
  uintptr_t s[3];
  size_t got, dropped;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, r, 64, 3, 3, 3, s, &got, &slot), 0);
  uint64_t pairs[8] = {s[0], 1, s[1], 0, s[2], 0, s[0], 1};
  REQUIRE_EQ(region_lease_return(L, 3, pairs, 4, &dropped), EINVAL);
  REQUIRE_EQ(leased_in(L, r), 3);
  uint64_t twice_apart[4] = {s[1], 1, s[1], 2}; /* same slab, different bits */
  REQUIRE_EQ(region_lease_return(L, 3, twice_apart, 2, &dropped), EINVAL);
  REQUIRE_EQ(leased_in(L, r), 3);
  REQUIRE_EQ(region_lease_return(L, 3, pairs, 3, &dropped), 0);
  teardown(L);
}
END_TEST

/* Caches send their slabs in ascending order (checked without sorting); any other order is
 * as valid, and checked by sorting. */
START_TEST(test_lease_return_in_any_order_is_taken) {
  region_layer *L = default_layer();
  rid_t r;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
  uintptr_t s[4];
  size_t got, dropped;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, r, 64, 4, 4, 3, s, &got, &slot), 0);
  uintptr_t lo = s[0], hi = s[0];
  for (int i = 1; i < 4; i++) {
    if (s[i] < lo) lo = s[i];
    if (s[i] > hi) hi = s[i];
  }
  uint64_t down[4] = {hi, 1, lo, 3}; /* descending */
  REQUIRE_EQ(region_lease_return(L, 3, down, 2, &dropped), 0);
  REQUIRE_EQ(leased_in(L, r), 2);
  uint64_t rest[4], k = 0;
  for (int i = 0; i < 4; i++)
    if (s[i] != lo && s[i] != hi) rest[2 * k] = s[i], rest[2 * k++ + 1] = 0;
  if (rest[0] > rest[2]) { /* ascending */
    uint64_t t = rest[0];
    rest[0] = rest[2];
    rest[2] = t;
  }
  uint64_t same[4] = {rest[0], 0, rest[0], 0}; /* the same slab twice in a row */
  REQUIRE_EQ(region_lease_return(L, 3, same, 2, &dropped), EINVAL);
  REQUIRE_EQ(region_lease_return(L, 3, rest, 2, &dropped), 0);
  REQUIRE_EQ(leased_in(L, r), 0);
  region_info info;
  REQUIRE_EQ(region_get_info(L, r, &info), 0);
  REQUIRE_EQ(info.pool.objects, 1 + 2); /* bit 0 of hi, bits 0 and 1 of lo */
  teardown(L);
}
END_TEST

START_TEST(test_lease_return_by_another_lessee_is_einval) {
  region_layer *L = default_layer();
  rid_t r;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
  uintptr_t s;
  size_t got, dropped;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, r, 64, 1, 1, 3, &s, &got, &slot), 0);
  uint64_t pairs[2] = {s, 0};
  REQUIRE_EQ(region_lease_return(L, 4, pairs, 1, &dropped), EINVAL);
  REQUIRE_EQ(leased_in(L, r), 1);
  REQUIRE_EQ(region_lease_return(L, 3, pairs, 1, &dropped), 0);
  teardown(L);
}
END_TEST

/* Conservation with zombies: every slab free, held by a region, or a zombie. */
static void check_conservation_with_zombies(region_layer *L, const rid_t *live, size_t nlive,
                                            size_t total_slabs) {
  region_layer_stats st;
  region_layer_get_stats(L, &st);
  size_t held = region_slabs(L, REGION_ROOT);
  for (size_t i = 0; i < nlive; i++) {
    held += region_slabs(L, live[i]);
    region_info info;
    REQUIRE_EQ(region_get_info(L, live[i], &info), 0);
    held += info.pool.leased_slabs;
  }
  REQUIRE_EQ(st.free_slabs + held + st.zombie_slabs, total_slabs);
  REQUIRE_EQ(st.stranded_slabs, 0);
  REQUIRE_EQ(st.stranded_ids, 0);
}

START_TEST(test_region_freed_with_a_lease_keeps_the_slab_as_a_zombie) {
  region_layer *L = layer_with(region_config_default(), (size_t)1 << 20, 100); /* 256 slabs */
  rid_t r;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
  uintptr_t z, a;
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, r, 64, 1, 1, 3, &z, &got, &slot), 0);
  REQUIRE_EQ(region_alloc(L, 64, r, &a), 0);
  REQUIRE_EQ(region_free(L, r), 0);
  region_layer_stats st;
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.zombie_slabs, 1);
  REQUIRE_EQ(st.quarantined_ids, 1);
  REQUIRE(!region_layer_holds(L, z));
  check_conservation_with_zombies(L, NULL, 0, 256);
  /* New regions take every other slab of the layer, never the zombie. */
  rid_t fresh[4];
  for (int i = 0; i < 4; i++) REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &fresh[i]), 0);
  size_t n = 0;
  for (bool any = true; any;) {
    any = false;
    for (int i = 0; i < 4; i++)
      if (region_alloc(L, 4096, fresh[i], &a) == 0) {
        REQUIRE(!in_slab(z, a));
        any = true;
        n++;
      }
  }
  while (region_alloc(L, 64, REGION_ROOT, &a) == 0) REQUIRE(!in_slab(z, a));
  check_conservation_with_zombies(L, fresh, 4, 256);
  REQUIRE(n >= 256 - 1 - 4 * 2 - 2); /* all but the zombie and a few low-watermark slabs */
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.zombie_slabs, 1);
  teardown(L);
}
END_TEST

START_TEST(test_freed_id_is_not_reused_while_quarantined) {
  region_layer *L = layer_with(region_config_default(), GAS_BYTES, 10);
  rid_t r, x, got_ids[10];
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
  uintptr_t z;
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, r, 64, 1, 1, 3, &z, &got, &slot), 0);
  REQUIRE_EQ(region_free(L, r), 0);
  region_layer_stats st;
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.free_ids, 9);
  size_t n = 0;
  while (region_create(L, REGION_ROOT, 0, &x) == 0) {
    REQUIRE(x != r);
    got_ids[n++] = x;
  }
  REQUIRE_EQ(n, 9);
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &x), ENOSPC);
  for (size_t i = 0; i < n; i++) REQUIRE_EQ(region_free(L, got_ids[i]), 0); /* none is r */
  for (int i = 0; i < 9; i++) { /* ...and round two still skips it */
    REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &x), 0);
    REQUIRE(x != r);
  }
  teardown(L);
}
END_TEST

START_TEST(test_returning_a_zombie_counts_its_live_slots_as_dropped_and_frees_the_slab) {
  region_layer *L = layer_with(region_config_default(), (size_t)1 << 20, 100);
  rid_t r;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
  uintptr_t z, a;
  size_t got, dropped = 0;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, r, 1024, 1, 1, 3, &z, &got, &slot), 0); /* 4 slots */
  REQUIRE_EQ(region_free(L, r), 0);
  region_layer_stats before, after;
  region_layer_get_stats(L, &before);
  uint64_t bad[2] = {z, 1ull << 4}; /* a zombie is checked like a lease: 4 slots only */
  REQUIRE_EQ(region_lease_return(L, 3, bad, 1, &dropped), EINVAL);
  REQUIRE_EQ(region_lease_return(L, 4, (uint64_t[]){z, 0}, 1, &dropped), EINVAL); /* not 4's */
  region_layer_get_stats(L, &after);
  REQUIRE_EQ(after.zombie_slabs, 1);
  uint64_t pairs[2] = {z, 0xb};
  REQUIRE_EQ(region_lease_return(L, 3, pairs, 1, &dropped), 0);
  REQUIRE_EQ(dropped, 3);
  region_layer_get_stats(L, &after);
  REQUIRE_EQ(after.zombie_slabs, 0);
  REQUIRE_EQ(after.free_slabs, before.free_slabs + 1);
  REQUIRE_EQ(region_lease_return(L, 3, pairs, 1, &dropped), EINVAL); /* not twice */
  /* The slab is anyone's again: filling the layer reaches it. */
  rid_t q;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &q), 0);
  bool reached = false;
  while (region_alloc(L, 4096, q, &a) == 0) reached |= in_slab(z, a);
  REQUIRE(reached);
  check_conservation(L, &q, 1, 256, 100);
  teardown(L);
}
END_TEST

START_TEST(test_quarantined_id_comes_back_after_its_last_zombie) {
  region_layer *L = layer_with(region_config_default(), GAS_BYTES, 3);
  rid_t r, x;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
  uintptr_t s[2], t;
  size_t got, dropped;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, r, 64, 2, 2, 3, s, &got, &slot), 0);   /* worker 3: two slabs */
  REQUIRE_EQ(region_lease(L, r, 128, 1, 1, 4, &t, &got, &slot), 0); /* worker 4: one */
  REQUIRE_EQ(region_free(L, r), 0);
  region_layer_stats st;
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.zombie_slabs, 3);
  REQUIRE_EQ(st.quarantined_ids, 1);
  REQUIRE_EQ(region_lease_return(L, 3, (uint64_t[]){s[0], 0, s[1], 0}, 2, &dropped), 0);
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.zombie_slabs, 1);
  REQUIRE_EQ(st.quarantined_ids, 1); /* worker 4 still holds one */
  REQUIRE_EQ(st.free_ids, 2);
  REQUIRE_EQ(region_lease_return(L, 4, (uint64_t[]){t, 1}, 1, &dropped), 0);
  REQUIRE_EQ(dropped, 1);
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.zombie_slabs, 0);
  REQUIRE_EQ(st.quarantined_ids, 0);
  REQUIRE_EQ(st.free_ids, 3);
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &x), 0);
  REQUIRE_EQ(x, r); /* the lowest free ID again */
  check_conservation(L, &x, 1, GAS_BYTES / AH_SLAB_SIZE, 3);
  teardown(L);
}
END_TEST

START_TEST(test_lease_return_mixing_zombies_and_leases_is_all_or_nothing) {
  region_layer *L = default_layer();
  rid_t dead, live;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &dead), 0);
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &live), 0);
  uintptr_t z, s;
  size_t got, dropped = 0;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, dead, 64, 1, 1, 3, &z, &got, &slot), 0);
  REQUIRE_EQ(region_lease(L, live, 64, 1, 1, 3, &s, &got, &slot), 0);
  REQUIRE_EQ(region_free(L, dead), 0);
  uint64_t pairs[6] = {z, 1, s, 1, s + AH_SLAB_SIZE, 0}; /* the last one is no lease */
  REQUIRE_EQ(region_lease_return(L, 3, pairs, 3, &dropped), EINVAL);
  region_layer_stats st;
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.zombie_slabs, 1);
  REQUIRE_EQ(st.quarantined_ids, 1);
  REQUIRE_EQ(leased_in(L, live), 1);
  REQUIRE_EQ(region_lease_return(L, 3, pairs, 2, &dropped), 0);
  REQUIRE_EQ(dropped, 1); /* the zombie's slot; the live region's became an object */
  REQUIRE_EQ(region_query(L, s, NULL, NULL, NULL), 0);
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.zombie_slabs, 0);
  REQUIRE_EQ(st.quarantined_ids, 0);
  teardown(L);
}
END_TEST

START_TEST(test_region_freed_with_descendants_holding_leases_buries_theirs) {
  region_layer *L = layer_with(region_config_default(), GAS_BYTES, 20);
  size_t total = GAS_BYTES / AH_SLAB_SIZE;
  rid_t p, c1, c2, g, x;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &p), 0);
  REQUIRE_EQ(region_create(L, p, 1, &c1), 0);
  REQUIRE_EQ(region_create(L, p, 1, &c2), 0);
  REQUIRE_EQ(region_create(L, c2, 2, &g), 0);
  uintptr_t s1[2], sg, obj;
  size_t got, dropped;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, c1, 64, 2, 2, 3, s1, &got, &slot), 0);
  REQUIRE_EQ(region_lease(L, g, 2048, 1, 1, 4, &sg, &got, &slot), 0);
  REQUIRE_EQ(region_alloc(L, 64, p, &obj), 0);
  REQUIRE_EQ(region_free(L, p), 0);
  REQUIRE(!region_exists(L, c1) && !region_exists(L, c2) && !region_exists(L, g));
  region_layer_stats st;
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.zombie_slabs, 3);
  REQUIRE_EQ(st.quarantined_ids, 2); /* c1 and g; p and c2 held no lease */
  REQUIRE_EQ(st.free_ids, 20 - 2);
  check_conservation_with_zombies(L, NULL, 0, total);
  rid_t made[20];
  size_t n = 0;
  while (region_create(L, REGION_ROOT, 0, &x) == 0) {
    REQUIRE(x != c1 && x != g);
    made[n++] = x;
  }
  REQUIRE_EQ(n, 18); /* p's and c2's IDs were reused */
  for (size_t i = 0; i < n; i++) REQUIRE_EQ(region_free(L, made[i]), 0);
  REQUIRE_EQ(region_lease_return(L, 4, (uint64_t[]){sg, 4}, 1, &dropped), EINVAL); /* 2 slots */
  REQUIRE_EQ(region_lease_return(L, 4, (uint64_t[]){sg, 2}, 1, &dropped), 0);
  REQUIRE_EQ(dropped, 1);
  REQUIRE_EQ(region_lease_return(L, 3, (uint64_t[]){s1[0], 0, s1[1], ~0ull}, 2, &dropped), 0);
  REQUIRE_EQ(dropped, 64);
  check_conservation(L, NULL, 0, total, 20);
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.zombie_slabs, 0);
  REQUIRE_EQ(st.quarantined_ids, 0);
  teardown(L);
}
END_TEST

/* ---- leases of many slabs (class runs, src/slab/classes.c) at the layer ---- */

START_TEST(test_runs_of_two_regions_handed_back_in_one_batch) {
  region_layer *L = default_layer();
  rid_t r[2];
  uintptr_t s[2][40];
  uint64_t pairs[160];
  size_t got, dropped = 1, n = 0;
  uint32_t slot;
  for (int k = 0; k < 2; k++) {
    REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r[k]), 0);
    REQUIRE_EQ(region_lease(L, r[k], 256, 40, 40, 3, s[k], &got, &slot), 0);
    REQUIRE_EQ(got, 40);
  }
  for (int k = 0; k < 2; k++) /* region 0 full, region 1 two slots a slab */
    for (int i = 0; i < 40; i++) pairs[2 * n] = s[k][i], pairs[2 * n++ + 1] = k ? 0x3 : 0xffff;
  REQUIRE_EQ(region_lease_return(L, 4, pairs, n, &dropped), EINVAL); /* not 4's: nothing moved */
  REQUIRE_EQ(leased_in(L, r[0]) + leased_in(L, r[1]), 80);
  REQUIRE_EQ(region_lease_return(L, 3, pairs, n, &dropped), 0);
  REQUIRE_EQ(dropped, 0);
  region_info info[2];
  for (int k = 0; k < 2; k++) REQUIRE_EQ(region_get_info(L, r[k], &info[k]), 0);
  REQUIRE_EQ(info[0].pool.leased_slabs + info[1].pool.leased_slabs, 0);
  REQUIRE_EQ(info[0].pool.objects, 40 * 16);
  REQUIRE_EQ(info[1].pool.objects, 40 * 2);
  rid_t owner;
  uintptr_t start;
  size_t size;
  REQUIRE_EQ(region_query(L, s[0][39] + 15 * 256 + 3, &owner, &start, &size), 0);
  REQUIRE_EQ(owner, r[0]);
  REQUIRE_EQ(start, s[0][39] + 15 * 256);
  REQUIRE_EQ(region_free_object(L, s[0][20] + 256), 0); /* one object out of a full run */
  REQUIRE_EQ(region_free_object(L, s[0][20] + 256), EINVAL);
  REQUIRE_EQ(region_get_info(L, r[0], &info[0]), 0);
  REQUIRE_EQ(info[0].pool.objects, 40 * 16 - 1);
  for (int k = 0; k < 2; k++) REQUIRE_EQ(region_free(L, r[k]), 0);
  teardown(L);
}
END_TEST

START_TEST(test_region_freed_with_a_leased_run_buries_each_of_its_slabs) {
  region_layer *L = layer_with(region_config_default(), (size_t)1 << 20, 100); /* 256 slabs */
  rid_t r;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
  uintptr_t s[32];
  size_t got, dropped = 0;
  uint32_t slot;
  REQUIRE_EQ(region_lease(L, r, 512, 32, 32, 3, s, &got, &slot), 0); /* 8 slots a slab */
  REQUIRE_EQ(got, 32);
  REQUIRE_EQ(region_free(L, r), 0);
  region_layer_stats st;
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.zombie_slabs, 32);
  for (int i = 0; i < 32; i++) REQUIRE(region_layer_has_zombie(L, s[i]));
  check_conservation_with_zombies(L, NULL, 0, 256);
  uint64_t pairs[64];
  for (int i = 0; i < 32; i++) pairs[2 * i] = s[i], pairs[2 * i + 1] = i < 16 ? 0xff : 0;
  REQUIRE_EQ(region_lease_return(L, 3, pairs, 32, &dropped), 0);
  REQUIRE_EQ(dropped, 16 * 8);
  region_layer_get_stats(L, &st);
  REQUIRE_EQ(st.zombie_slabs, 0);
  check_conservation_with_zombies(L, NULL, 0, 256);
  teardown(L);
}
END_TEST


/* ---- holders (holder.c) ---- */

START_TEST(test_new_regions_and_the_root_let_anyone_act_until_a_holder_is_set) {
  region_layer *L = default_layer();
  rid_t r;
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, &r), 0);
  REQUIRE_EQ(region_check_holder(L, REGION_ROOT, 7), 0);
  REQUIRE_EQ(region_check_holder(L, r, 7), 0);
  REQUIRE_EQ(region_set_holder(L, r, 3), 0);
  REQUIRE_EQ(region_check_holder(L, r, 3), 0);
  REQUIRE_EQ(region_check_holder(L, r, 7), EPERM);
  REQUIRE_EQ(region_check_holder(L, 999, 3), ENOENT);
  REQUIRE_EQ(region_set_holder(L, 999, 3), ENOENT);
  int32_t h, prev;
  REQUIRE_EQ(region_get_holder(L, r, &h, &prev), 0);
  REQUIRE_EQ(h, 3);
  REQUIRE_EQ(prev, REGION_ANYONE);
  teardown(L);
}
END_TEST

/* A tree a -> {b -> d, c}, every region held by `who`. */
static void small_tree(region_layer *L, int32_t who, rid_t *a, rid_t *b, rid_t *c, rid_t *d) {
  REQUIRE_EQ(region_create(L, REGION_ROOT, 0, a), 0);
  REQUIRE_EQ(region_create(L, *a, 0, b), 0);
  REQUIRE_EQ(region_create(L, *a, 0, c), 0);
  REQUIRE_EQ(region_create(L, *b, 0, d), 0);
  rid_t all[4] = {*a, *b, *c, *d};
  for (int i = 0; i < 4; i++) REQUIRE_EQ(region_set_holder(L, all[i], who), 0);
}

START_TEST(test_a_subtree_check_needs_every_descendant_and_a_hand_over_moves_them_all) {
  region_layer *L = default_layer();
  rid_t a, b, c, d;
  small_tree(L, 3, &a, &b, &c, &d);
  REQUIRE_EQ(region_check_subtree(L, a, 3), 0);
  REQUIRE_EQ(region_hand_subtree(L, d, 5), 0); /* a grandchild handed over alone */
  REQUIRE_EQ(region_check_subtree(L, a, 3), EPERM);
  REQUIRE_EQ(region_check_subtree(L, b, 3), EPERM);
  REQUIRE_EQ(region_check_subtree(L, c, 3), 0);
  REQUIRE_EQ(region_check_holder(L, b, 3), 0); /* b itself is still 3's */
  REQUIRE_EQ(region_check_subtree(L, d, 5), 0);
  REQUIRE_EQ(region_hand_subtree(L, d, 3), 0); /* back */
  REQUIRE_EQ(region_hand_subtree(L, a, 9), 0);
  rid_t all[4] = {a, b, c, d};
  for (int i = 0; i < 4; i++) {
    int32_t h, prev;
    REQUIRE_EQ(region_get_holder(L, all[i], &h, &prev), 0);
    REQUIRE_EQ(h, 9);
    REQUIRE_EQ(prev, 3);
  }
  REQUIRE_EQ(region_check_subtree(L, a, 3), EPERM);
  REQUIRE_EQ(region_hand_subtree(L, 999, 3), ENOENT);
  REQUIRE_EQ(region_check_subtree(L, 999, 3), ENOENT);
  teardown(L);
}
END_TEST

START_TEST(test_a_hand_back_is_allowed_only_to_the_worker_that_handed_over) {
  region_layer *L = default_layer();
  rid_t a, b, c, d;
  small_tree(L, 3, &a, &b, &c, &d);
  REQUIRE_EQ(region_check_handed(L, a, 3, REGION_ANYONE), EPERM); /* never handed over */
  REQUIRE_EQ(region_hand_subtree(L, a, 5), 0);
  REQUIRE_EQ(region_check_handed(L, a, 5, 3), 0);
  REQUIRE_EQ(region_check_handed(L, a, 5, 4), EPERM); /* 4 never had it */
  REQUIRE_EQ(region_check_handed(L, a, 6, 3), EPERM); /* 6 does not hold it */
  REQUIRE_EQ(region_hand_subtree(L, b, 7), 0);        /* 5 passed a part on */
  REQUIRE_EQ(region_check_handed(L, a, 5, 3), EPERM);
  teardown(L);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("region");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_deep_and_wide_trees_free_subtrees_without_losing_slabs_or_ids);
  tcase_add_test(tc, test_list_of_30000_nodes_packs_into_few_ranges_covering_exactly_the_used_slabs);
  tcase_add_test(tc, test_pack_after_every_change_covers_exactly_the_live_objects);
  tcase_add_test(tc, test_live_objects_at_the_gas_end_survive_hostile_calls);
  tcase_add_test(tc, test_allocation_after_a_failed_huge_balloc_finds_contiguous_space);
  tcase_add_test(tc, test_trimming_moves_idle_slabs_to_a_busy_region_before_asking_for_pages);
  tcase_add_test(tc, test_statistics_stay_exact_through_fragmentation);
  tcase_add_test(tc, test_leases_and_runs_find_holes_near_exhaustion);
  tcase_add_test(tc, test_pages_come_from_the_lowest_range_holding_a_whole_page);
  tcase_add_test(tc, test_owned_ranges_cover_the_pools_and_stop_trimming);
  tcase_add_test(tc, test_objects_alloc_query_realloc_and_balloc);
  tcase_add_test(tc, test_error_paths_have_distinct_codes_and_change_nothing);
  tcase_add_test(tc, test_freeing_a_region_returns_all_metadata_whatever_its_object_count);
  tcase_add_test(tc, test_destroy_reports_all_address_space);
  tcase_add_test(tc, test_detached_regions_pages_and_ids_for_other_schedulers);
  tcase_add_test(tc, test_lease_in_an_unknown_region_is_enoent);
  tcase_add_test(tc, test_lease_in_a_region_gives_slabs_it_owns_of_the_slot_size);
  tcase_add_test(tc, test_bad_lease_arguments_at_the_layer_are_einval);
  tcase_add_test(tc, test_lease_return_makes_live_slots_objects_of_the_region);
  tcase_add_test(tc, test_lease_return_with_one_bad_pair_changes_nothing);
  tcase_add_test(tc, test_lease_return_naming_a_slab_twice_is_einval);
  tcase_add_test(tc, test_lease_return_in_any_order_is_taken);
  tcase_add_test(tc, test_lease_return_by_another_lessee_is_einval);
  tcase_add_test(tc, test_region_freed_with_a_lease_keeps_the_slab_as_a_zombie);
  tcase_add_test(tc, test_freed_id_is_not_reused_while_quarantined);
  tcase_add_test(tc, test_returning_a_zombie_counts_its_live_slots_as_dropped_and_frees_the_slab);
  tcase_add_test(tc, test_quarantined_id_comes_back_after_its_last_zombie);
  tcase_add_test(tc, test_lease_return_mixing_zombies_and_leases_is_all_or_nothing);
  tcase_add_test(tc, test_region_freed_with_descendants_holding_leases_buries_theirs);
  tcase_add_test(tc, test_runs_of_two_regions_handed_back_in_one_batch);
  tcase_add_test(tc, test_region_freed_with_a_leased_run_buries_each_of_its_slabs);
  tcase_add_test(tc, test_new_regions_and_the_root_let_anyone_act_until_a_holder_is_set);
  tcase_add_test(tc, test_a_subtree_check_needs_every_descendant_and_a_hand_over_moves_them_all);
  tcase_add_test(tc, test_a_hand_back_is_allowed_only_to_the_worker_that_handed_over);
  suite_add_tcase(s, tc);
  return s;
}

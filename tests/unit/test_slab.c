/* test_slab.c: slab pools against a shadow model, every error path, large objects,
 * metadata in another pool, and the self-hosted (kernel) pool's bootstrap. */
#include <check.h>

#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/types.h"
#include "slab/pool_internal.h"
#include "slab/slab.h"

#define GAS_BASE ((uintptr_t)0x100000000000ull)
#define GAS_SPAN ((size_t)1 << 30)
#define KERNEL_BYTES ((size_t)16 << 20)

static uint64_t rng_state;
static uint64_t rnd(void) {
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

/* A kernel pool over fresh heap memory; the memory goes to *mem for freeing. */
static slab_pool *kernel_pool(size_t bytes, void **mem) {
  *mem = aligned_alloc(AH_SLAB_SIZE, bytes);
  REQUIRE((*mem) != NULL);
  slab_pool *k = NULL;
  REQUIRE_EQ(slab_pool_create_self_hosted(&k, *mem, bytes, NULL), 0);
  return k;
}

/* An ordinary pool over a GAS window it never touches, metadata in kernel. */
static slab_pool *gas_pool(slab_pool *kernel, size_t bytes) {
  slab_config cfg = slab_config_default();
  cfg.base = GAS_BASE;
  cfg.span = GAS_SPAN;
  slab_pool *p = NULL;
  REQUIRE_EQ(slab_pool_create(&p, &cfg, kernel), 0);
  REQUIRE_EQ(slab_add_range(p, GAS_BASE, bytes), 0);
  return p;
}

static size_t slot_of(size_t size) {
  return size <= AH_SLAB_SIZE ? ah_round_up(size, AH_SLOT_ALIGN) : ah_round_up(size, AH_SLAB_SIZE);
}

static void stats_equal(const slab_stats *a, const slab_stats *b) {
  REQUIRE_EQ(a->objects, b->objects);
  REQUIRE_EQ(a->object_bytes, b->object_bytes);
  REQUIRE_EQ(a->full_slabs, b->full_slabs);
  REQUIRE_EQ(a->partial_slabs, b->partial_slabs);
  REQUIRE_EQ(a->empty_slabs, b->empty_slabs);
  REQUIRE_EQ(a->free_slabs, b->free_slabs);
  REQUIRE_EQ(a->run_slabs, b->run_slabs);
}

/* ---- shadow model: live objects and a bitmap of 64-B units over the managed range ---- */
typedef struct {
  uintptr_t addr;
  size_t size;
} object;
typedef struct {
  object *live;
  size_t n;
  uint8_t *unit_used; /* one byte per 64-B unit of the managed range */
  uintptr_t lo;
  size_t bytes;
} shadow;

static void shadow_mark(shadow *s, uintptr_t addr, size_t size, uint8_t v) {
  REQUIRE((addr) >= (s->lo));
  REQUIRE((addr + size) <= (s->lo + s->bytes)); /* inside the pool's range */
  for (size_t u = (addr - s->lo) / 64; u < (addr + size - s->lo) / 64; u++) {
    REQUIRE((s->unit_used[u]) != (v)); /* alloc: never overlaps; free: was live */
    s->unit_used[u] = v;
  }
}

static void check_totals(slab_pool *p, const shadow *s) {
  slab_stats st;
  slab_get_stats(p, &st);
  size_t bytes = 0;
  for (size_t i = 0; i < s->n; i++) bytes += slot_of(s->live[i].size);
  REQUIRE_EQ(st.objects, s->n);
  REQUIRE_EQ(st.object_bytes, bytes);
  REQUIRE_EQ(st.full_slabs + st.partial_slabs + st.empty_slabs + st.run_slabs + st.free_slabs, s->bytes / AH_SLAB_SIZE);
}

static void random_traffic(uint64_t seed, const size_t *sizes, unsigned nsizes, int ops) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  size_t range = (size_t)512 << 20;
  slab_pool *p = gas_pool(k, range);
  shadow s = {.live = calloc((size_t)ops, sizeof(object)), .lo = GAS_BASE, .bytes = range,
              .unit_used = calloc(range / 64, 1)};
  rng_state = seed;
  for (int op = 0; op < ops; op++) {
    if (s.n == 0 || rnd() % 100 < 60) {
      size_t size = sizes[rnd() % nsizes] - rnd() % 8 * (rnd() % 2); /* exact and ragged */
      uintptr_t a;
      REQUIRE_EQ(slab_alloc(p, size, &a), 0);
      REQUIRE_EQ(a % AH_SLOT_ALIGN, 0);
      shadow_mark(&s, a, slot_of(size), 1);
      size_t got;
      REQUIRE_EQ(slab_size_of(p, a, &got), 0);
      REQUIRE_EQ(got, slot_of(size));
      s.live[s.n++] = (object){a, size};
    } else {
      size_t i = rnd() % s.n;
      object o = s.live[i];
      if (slot_of(o.size) > 64) { /* an interior address is refused, nothing changes */
        slab_stats before, after;
        slab_get_stats(p, &before);
        REQUIRE_EQ(slab_free(p, o.addr + 64), EINVAL);
        slab_get_stats(p, &after);
        stats_equal(&before, &after);
      }
      REQUIRE_EQ(slab_free(p, o.addr), 0);
      shadow_mark(&s, o.addr, slot_of(o.size), 0);
      REQUIRE_EQ(slab_free(p, o.addr), EINVAL); /* double free */
      s.live[i] = s.live[--s.n];
    }
    if (op % 997 == 0) check_totals(p, &s);
  }
  check_totals(p, &s);
  while (s.n) REQUIRE_EQ(slab_free(p, s.live[--s.n].addr), 0);
  check_totals(p, &s);
  slab_pool_destroy(p, NULL, NULL);
  free(s.live);
  free(s.unit_used);
  free(mem);
}

START_TEST(test_random_single_size_traffic_matches_shadow) {
  size_t sizes[] = {192};
  random_traffic(11, sizes, 1, 100000);
}
END_TEST

START_TEST(test_random_mixed_size_traffic_matches_shadow) {
  size_t sizes[] = {64, 192, 256, 1024, 1536, 4096, 50048, 3000, 8192};
  random_traffic(12, sizes, 9, 100000);
}
END_TEST

START_TEST(test_sizes_round_up_to_64_and_any_multiple_is_a_class) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)4 << 20);
  uintptr_t a, b;
  size_t sz;
  REQUIRE_EQ(slab_alloc(p, 1, &a), 0);
  REQUIRE_EQ(slab_size_of(p, a, &sz), 0);
  REQUIRE_EQ(sz, 64);
  REQUIRE_EQ(slab_alloc(p, 193, &b), 0); /* 256, not a power-of-two rule */
  REQUIRE_EQ(slab_size_of(p, b, &sz), 0);
  REQUIRE_EQ(sz, 256);
  REQUIRE_EQ(slab_alloc(p, 320, &b), 0); /* 320 is its own class */
  REQUIRE_EQ(slab_size_of(p, b, &sz), 0);
  REQUIRE_EQ(sz, 320);
  slab_stats st;
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.classes, 3);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_large_object_takes_one_run_with_one_descriptor) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)8 << 20);
  slab_stats kbefore, kafter, st;
  slab_get_stats(k, &kbefore);
  uintptr_t a;
  REQUIRE_EQ(slab_alloc(p, (size_t)1 << 20, &a), 0); /* 256 slabs */
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.runs, 1);
  REQUIRE_EQ(st.run_slabs, 256);
  slab_get_stats(k, &kafter); /* one descriptor plus a trie path, not 256 descriptors */
  REQUIRE((kafter.objects - kbefore.objects) < (40));
  uintptr_t start;
  size_t size;
  REQUIRE_EQ(slab_lookup(p, a + 777777, &start, &size), 0);
  REQUIRE_EQ(start, a);
  REQUIRE_EQ(size, (size_t)1 << 20);
  REQUIRE_EQ(slab_free(p, a + AH_SLAB_SIZE), EINVAL);
  REQUIRE_EQ(slab_free(p, a), 0);
  REQUIRE_EQ(slab_free(p, a), EINVAL);
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.runs, 0);
  REQUIRE_EQ(st.free_ranges, 1); /* merged back into one range */
  REQUIRE_EQ(st.free_slabs, 2048);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_free_of_foreign_or_freed_address_is_einval_and_changes_nothing) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)4 << 20);
  uintptr_t a;
  REQUIRE_EQ(slab_alloc(p, 128, &a), 0);
  slab_stats before, after;
  slab_get_stats(p, &before);
  uintptr_t bad[] = {0, 1, a + 1, a + 64, a + 128, GAS_BASE - 64, GAS_BASE + GAS_SPAN,
                     GAS_BASE + ((size_t)4 << 20) + 64, (uintptr_t)-64};
  for (unsigned i = 0; i < sizeof bad / sizeof *bad; i++) {
    REQUIRE_EQ(slab_free(p, bad[i]), EINVAL);
    size_t sz;
    if (bad[i] != a) REQUIRE_EQ(slab_size_of(p, bad[i], &sz), EINVAL);
  }
  slab_get_stats(p, &after);
  stats_equal(&before, &after);
  REQUIRE_EQ(slab_free(p, a), 0);
  REQUIRE_EQ(slab_free(p, a), EINVAL);
  REQUIRE_EQ(slab_alloc(p, 0, &a), EINVAL);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_bad_ranges_and_configs_are_einval) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)1 << 20);
  REQUIRE_EQ(slab_add_range(p, GAS_BASE, AH_SLAB_SIZE), EINVAL);         /* overlap */
  REQUIRE_EQ(slab_add_range(p, GAS_BASE + 100, AH_SLAB_SIZE), EINVAL);   /* unaligned */
  REQUIRE_EQ(slab_add_range(p, GAS_BASE + ((size_t)2 << 20), 100), EINVAL);
  REQUIRE_EQ(slab_add_range(p, GAS_BASE - AH_SLAB_SIZE, AH_SLAB_SIZE), EINVAL);
  REQUIRE_EQ(slab_add_range(p, GAS_BASE + GAS_SPAN - AH_SLAB_SIZE, 2 * AH_SLAB_SIZE), EINVAL);
  REQUIRE_EQ(slab_add_range(p, GAS_BASE + ((size_t)2 << 20), 0), EINVAL);
  uintptr_t a;
  REQUIRE_EQ(slab_alloc(p, 64, &a), 0);
  REQUIRE_EQ(slab_add_range(p, a, AH_SLAB_SIZE), EINVAL); /* overlaps a used slab */
  slab_pool *q;
  slab_config cfg = slab_config_default();
  REQUIRE_EQ(slab_pool_create(&q, &cfg, NULL), EINVAL);
  REQUIRE_EQ(slab_pool_create(&q, &cfg, p), EINVAL); /* meta must own real memory */
  cfg.base = 100;
  REQUIRE_EQ(slab_pool_create(&q, &cfg, k), EINVAL);
  REQUIRE_EQ(slab_pool_create_self_hosted(&q, (char *)mem + 64, 1 << 20, NULL), EINVAL);
  REQUIRE_EQ(slab_pool_create_self_hosted(&q, mem, 4 * AH_SLAB_SIZE, NULL), EINVAL);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_exhausted_pool_is_enomem_and_recovers_after_free) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, 16 * AH_SLAB_SIZE);
  uintptr_t a[17];
  for (int i = 0; i < 16; i++) REQUIRE_EQ(slab_alloc(p, 4096, &a[i]), 0);
  slab_stats before, after;
  slab_get_stats(p, &before);
  REQUIRE_EQ(slab_alloc(p, 4096, &a[16]), ENOMEM);
  REQUIRE_EQ(slab_alloc(p, 64, &a[16]), ENOMEM);
  REQUIRE_EQ(slab_alloc(p, 3 * AH_SLAB_SIZE, &a[16]), ENOMEM);
  slab_get_stats(p, &after);
  stats_equal(&before, &after);
  REQUIRE_EQ(slab_free(p, a[5]), 0);
  REQUIRE_EQ(slab_alloc(p, 64, &a[16]), 0);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

/* Collects ranges from pack/destroy. */
typedef struct {
  uintptr_t addr[64];
  size_t len[64];
  size_t n;
} ranges;
static int collect(void *ctx, uintptr_t addr, size_t len) {
  ranges *r = ctx;
  REQUIRE((r->n) < (64));
  if (r->n) REQUIRE((addr) > (r->addr[r->n - 1] + r->len[r->n - 1])); /* ordered, coalesced */
  r->addr[r->n] = addr;
  r->len[r->n++] = len;
  return 0;
}

START_TEST(test_pack_coalesces_used_slabs_in_address_order) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)4 << 20);
  uintptr_t obj[48];
  for (int i = 0; i < 48; i++) REQUIRE_EQ(slab_alloc(p, 256, &obj[i]), 0); /* 3 slabs */
  ranges r = {0};
  REQUIRE_EQ(slab_pack(p, collect, &r), 1);
  REQUIRE_EQ(r.len[0], 3 * AH_SLAB_SIZE);
  for (int i = 0; i < 48; i++) {
    REQUIRE((obj[i]) >= (r.addr[0]));
    REQUIRE((obj[i]) < (r.addr[0] + r.len[0]));
  }
  /* Empty the middle slab: its address is no longer part of the pack. */
  uintptr_t mid = r.addr[0] + AH_SLAB_SIZE;
  for (int i = 0; i < 48; i++)
    if (obj[i] >= mid && obj[i] < mid + AH_SLAB_SIZE) REQUIRE_EQ(slab_free(p, obj[i]), 0);
  r.n = 0;
  REQUIRE_EQ(slab_pack(p, collect, &r), 2);
  REQUIRE_EQ(r.len[0] + r.len[1], 2 * AH_SLAB_SIZE);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

/* One create / fill / destroy cycle; returns the meta pool's object count afterwards. */
static size_t pool_cycle(slab_pool *k) {
  slab_pool *p = gas_pool(k, (size_t)2 << 20);
  REQUIRE_EQ(slab_add_range(p, GAS_BASE + ((size_t)8 << 20), (size_t)1 << 20), 0);
  rng_state = 5;
  uintptr_t a;
  for (int i = 0; i < 3000; i++) slab_alloc(p, 64 + rnd() % 5000, &a);
  ranges r = {0};
  slab_pool_destroy(p, collect, &r);
  REQUIRE_EQ(r.n, 2);
  REQUIRE_EQ(r.addr[0], GAS_BASE);
  REQUIRE_EQ(r.len[0], (size_t)2 << 20);
  REQUIRE_EQ(r.addr[1], GAS_BASE + ((size_t)8 << 20));
  REQUIRE_EQ(r.len[1], (size_t)1 << 20);
  slab_stats st;
  slab_get_stats(k, &st);
  return st.objects;
}

START_TEST(test_destroy_reports_every_range_and_returns_all_metadata) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  size_t after_first = pool_cycle(k);
  /* The kernel pool's own bookkeeping settles after the first cycle; a leak would grow it. */
  for (int i = 0; i < 3; i++) REQUIRE_EQ(pool_cycle(k), after_first);
  free(mem);
}
END_TEST

START_TEST(test_take_free_returns_highest_free_slabs) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, 64 * AH_SLAB_SIZE);
  uintptr_t a, got;
  size_t len;
  REQUIRE_EQ(slab_alloc(p, 64, &a), 0);
  REQUIRE_EQ(slab_take_free(p, 10, &got, &len), 0);
  REQUIRE_EQ(len, 10 * AH_SLAB_SIZE);
  REQUIRE(!slab_holds(p, got));
  REQUIRE(slab_holds(p, a));
  REQUIRE_EQ(slab_alloc(p, 54 * AH_SLAB_SIZE, &a), ENOMEM);
  REQUIRE_EQ(slab_add_range(p, got, len), 0);
  REQUIRE_EQ(slab_take_free(p, 0, &got, &len), ENOENT);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

static int cmp_addr(const void *x, const void *y) {
  uintptr_t a = *(const uintptr_t *)x, b = *(const uintptr_t *)y;
  return (a > b) - (a < b);
}

/* Issue 32: a pool whose free space is many one-slab holes and one longer run finds the run
 * by size (slab_take_fit, the best fit; slab_longest_free), a large object lands in it, and a
 * lease of many slabs takes the holes one by one once no run is left. */
START_TEST(test_fitting_runs_are_found_by_size_among_many_holes) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, 4000 * AH_SLAB_SIZE);
  static uintptr_t obj[4000];
  size_t n = 0;
  while (n < 4000 && slab_alloc(p, 4096, &obj[n]) == 0) n++;
  REQUIRE_EQ(n, 4000);
  qsort(obj, n, sizeof *obj, cmp_addr);
  for (size_t i = 0; i < n; i += 2) REQUIRE_EQ(slab_free(p, obj[i]), 0);
  slab_stats st;
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.free_slabs + st.empty_slabs, 2000);
  /* the empties go to the Free trie when the pool must find a run: none of 2 yet */
  uintptr_t big;
  REQUIRE_EQ(slab_alloc(p, 8192, &big), ENOMEM);
  REQUIRE_EQ(slab_longest_free(p), 1);
  size_t m = 1001; /* a kept object between two holes: a hole of three */
  while (m + 1 < n && !(obj[m] == obj[m - 1] + AH_SLAB_SIZE && obj[m + 1] == obj[m] + AH_SLAB_SIZE))
    m += 2;
  REQUIRE(m + 1 < n);
  REQUIRE_EQ(slab_free(p, obj[m]), 0);
  REQUIRE_EQ(slab_alloc(p, 8192, &big), 0); /* found by size among the holes */
  REQUIRE(big == obj[m - 1] || big == obj[m]);
  REQUIRE_EQ(slab_free(p, big), 0);
  REQUIRE_EQ(slab_longest_free(p), 3);
  uintptr_t at;
  REQUIRE_EQ(slab_take_fit(p, 3, &at), 0);
  REQUIRE_EQ(at, obj[m - 1]);
  REQUIRE_EQ(slab_take_fit(p, 2, &at), ENOENT);
  REQUIRE_EQ(slab_take_fit(p, 1, &at), 0); /* a hole of one: the best fit */
  REQUIRE_EQ(slab_longest_free(p), 1);
  uintptr_t s[300];
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(slab_lease(p, 64, 300, 1, 7, s, &got, &slot), 0);
  REQUIRE_EQ(got, 16); /* no run: a few single slabs, not 300 that would sit idle */
  REQUIRE_EQ(slab_lease(p, 64, 300, 20, 7, s, &got, &slot), 0);
  REQUIRE_EQ(got, 20); /* but never fewer than asked for at least */
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_metadata_lives_in_the_meta_pool_not_in_managed_space) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_stats k0, k1;
  slab_get_stats(k, &k0);
  slab_pool *p = gas_pool(k, (size_t)16 << 20);
  uintptr_t a;
  for (int i = 0; i < 2000; i++) REQUIRE_EQ(slab_alloc(p, 64, &a), 0);
  slab_get_stats(k, &k1);
  REQUIRE((k1.objects) > (k0.objects + 31)); /* >= one descriptor per slab */
  REQUIRE((uintptr_t)p >= (uintptr_t)mem && (uintptr_t)p < (uintptr_t)mem + KERNEL_BYTES);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

/* Self-hosted: fill with 64-B objects until ENOMEM, writing every byte of every object;
 * the pool's own metadata must survive, then everything is freed and reallocated. */
START_TEST(test_self_hosted_pool_bootstraps_and_survives_being_filled) {
  size_t bytes = (size_t)1 << 20;
  void *mem = aligned_alloc(AH_SLAB_SIZE, bytes);
  slab_pool *k;
  REQUIRE_EQ(slab_pool_create_self_hosted(&k, mem, bytes, NULL), 0);
  size_t cap = bytes / 64, n = 0;
  void **objs = malloc(cap * sizeof *objs);
  for (;;) {
    void *o = slab_malloc(k, 64);
    if (!o) break;
    REQUIRE((char *)o >= (char *)mem && (char *)o + 64 <= (char *)mem + bytes);
    memset(o, 0xA5, 64);
    objs[n++] = o;
  }
  REQUIRE((n) > (cap * 8 / 10)); /* metadata overhead stays small */
  slab_stats st;
  slab_get_stats(k, &st);
  REQUIRE((st.max_depth) <= (2)); /* metadata never recursed past one level */
  for (size_t i = 0; i < n; i++) {
    for (int b = 0; b < 64; b++) REQUIRE_EQ(((unsigned char *)objs[i])[b], 0xA5);
    REQUIRE_EQ(slab_free(k, (uintptr_t)objs[i]), 0);
  }
  size_t again = 0;
  while (slab_malloc(k, 64)) again++;
  REQUIRE((again) >= (n));
  free(objs);
  free(mem);
}
END_TEST

/* Grows by chunks from a callback; any mix of sizes keeps working across chunks. */
typedef struct {
  void *chunk[64];
  int n;
} chunks;
static int grow_chunk(void *ctx, size_t min_bytes, uintptr_t *addr, size_t *len) {
  chunks *c = ctx;
  size_t sz = min_bytes < ((size_t)1 << 20) ? (size_t)1 << 20 : ah_round_up(min_bytes, AH_SLAB_SIZE);
  if (c->n == 64) return ENOMEM;
  c->chunk[c->n] = aligned_alloc(AH_SLAB_SIZE, sz);
  *addr = (uintptr_t)c->chunk[c->n++];
  *len = sz;
  return 0;
}

START_TEST(test_self_hosted_pool_grows_through_callback) {
  chunks c = {0};
  slab_config cfg = slab_config_default();
  cfg.grow = grow_chunk;
  cfg.grow_ctx = &c;
  size_t bytes = 64 * AH_SLAB_SIZE;
  void *mem = aligned_alloc(AH_SLAB_SIZE, bytes);
  slab_pool *k;
  REQUIRE_EQ(slab_pool_create_self_hosted(&k, mem, bytes, &cfg), 0);
  rng_state = 9;
  void *o[5000];
  for (int i = 0; i < 5000; i++) {
    size_t sz = 1 + rnd() % 3000;
    o[i] = slab_malloc(k, sz);
    REQUIRE((o[i]) != NULL);
    memset(o[i], i & 0xff, sz);
  }
  REQUIRE((c.n) > (1));
  for (int i = 0; i < 5000; i++) REQUIRE_EQ(slab_free(k, (uintptr_t)o[i]), 0);
  slab_stats st;
  slab_get_stats(k, &st);
  REQUIRE((st.max_depth) <= (2));
  for (int i = 0; i < c.n; i++) free(c.chunk[i]);
  free(mem);
}
END_TEST

/* The meta pool runs out while an ordinary pool needs descriptors: ENOMEM, nothing lost. */
START_TEST(test_metadata_exhaustion_is_enomem_and_consistent) {
  size_t kbytes = 24 * AH_SLAB_SIZE;
  void *mem = aligned_alloc(AH_SLAB_SIZE, kbytes);
  slab_pool *k;
  REQUIRE_EQ(slab_pool_create_self_hosted(&k, mem, kbytes, NULL), 0);
  slab_pool *p = gas_pool(k, (size_t)64 << 20);
  uintptr_t a[20000];
  size_t n = 0;
  int rc;
  rng_state = 3;
  while ((rc = slab_alloc(p, 64 * (1 + rnd() % 64), &a[n])) == 0) n++;
  REQUIRE_EQ(rc, ENOMEM);
  REQUIRE((n) < (20000));
  slab_stats st;
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.objects, n);
  while (n) REQUIRE_EQ(slab_free(p, a[--n]), 0);
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.objects, 0);
  REQUIRE_EQ(slab_alloc(p, 64, &a[0]), 0);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_empty_slabs_are_kept_lazily_then_returned) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)4 << 20);
  uintptr_t a[640];
  for (int i = 0; i < 640; i++) REQUIRE_EQ(slab_alloc(p, 64, &a[i]), 0); /* 10 slabs */
  for (int i = 0; i < 640; i++) REQUIRE_EQ(slab_free(p, a[i]), 0);
  slab_stats st;
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.empty_slabs, 1); /* empty_keep = 1 */
  REQUIRE_EQ(st.full_slabs + st.partial_slabs, 0);
  REQUIRE_EQ(st.free_slabs + st.empty_slabs, ((size_t)4 << 20) / AH_SLAB_SIZE);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_slot_index_reciprocal_is_exact_for_every_class_and_offset) {
  for (uint32_t slot = 64; slot <= AH_SLAB_SIZE; slot += 64) {
    slab_class c = {.slot_size = slot, .recip = (uint32_t)((((uint64_t)1 << 32) + slot - 1) / slot)};
    for (uintptr_t off = 0; off < AH_SLAB_SIZE; off++) REQUIRE_EQ(class_slot_index(&c, off), off / slot);
  }
}
END_TEST

/* ---- leases: whole empty slabs handed to a worker's cache ---- */

/* Sum of every slab state, leased ones included: the pool's range, always. */
static size_t all_slabs(slab_pool *p) {
  slab_stats st;
  slab_get_stats(p, &st);
  return st.full_slabs + st.partial_slabs + st.empty_slabs + st.run_slabs + st.free_slabs +
         st.leased_slabs;
}

static bool inside_any(const uintptr_t *slabs, size_t n, uintptr_t a) {
  for (size_t i = 0; i < n; i++)
    if (a - slabs[i] < AH_SLAB_SIZE) return true;
  return false;
}

START_TEST(test_lease_gives_distinct_empty_slabs_of_the_slot_size) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)1 << 20);
  uintptr_t s[8];
  size_t got = 0;
  uint32_t slot = 0;
  REQUIRE_EQ(slab_lease(p, 100, 8, 1, 7, s, &got, &slot), 0);
  REQUIRE_EQ(got, 8);
  REQUIRE_EQ(slot, 128);
  for (size_t i = 0; i < got; i++) {
    REQUIRE_EQ(s[i] % AH_SLAB_SIZE, 0);
    REQUIRE(s[i] >= GAS_BASE && s[i] < GAS_BASE + ((size_t)1 << 20));
    REQUIRE(slab_holds(p, s[i]));
    for (size_t j = 0; j < i; j++) REQUIRE(s[i] != s[j]);
  }
  slab_stats st;
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.leased_slabs, 8);
  REQUIRE_EQ(st.objects, 0); /* a leased slot is no object of the pool */
  REQUIRE_EQ(st.full_slabs + st.partial_slabs, 0); /* (carving ahead may leave an empty one) */
  REQUIRE_EQ(all_slabs(p), ((size_t)1 << 20) / AH_SLAB_SIZE);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_lease_takes_the_class_empty_slab_before_carving) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)1 << 20);
  uintptr_t a, s;
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(slab_alloc(p, 256, &a), 0);
  REQUIRE_EQ(slab_free(p, a), 0); /* its slab stays as the class's empty slab */
  slab_stats st;
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.empty_slabs, 1);
  REQUIRE_EQ(slab_lease(p, 256, 1, 1, 3, &s, &got, &slot), 0);
  REQUIRE_EQ(s, a & ~(uintptr_t)(AH_SLAB_SIZE - 1));
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.empty_slabs, 0);
  REQUIRE_EQ(st.leased_slabs, 1);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_slots_of_a_leased_slab_are_einval_for_free_lookup_and_size_of) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)1 << 20);
  uintptr_t s;
  size_t got, sz;
  uint32_t slot;
  REQUIRE_EQ(slab_lease(p, 192, 1, 1, 4, &s, &got, &slot), 0);
  REQUIRE_EQ(slot, 192);
  slab_stats before, after;
  slab_get_stats(p, &before);
  for (uintptr_t a = s; a < s + AH_SLAB_SIZE; a += 64) { /* slot starts, interiors, the tail */
    uintptr_t start;
    REQUIRE_EQ(slab_free(p, a), EINVAL);
    REQUIRE_EQ(slab_lookup(p, a, &start, &sz), EINVAL);
    REQUIRE_EQ(slab_size_of(p, a, &sz), EINVAL);
  }
  slab_get_stats(p, &after);
  stats_equal(&before, &after);
  REQUIRE_EQ(after.leased_slabs, 1);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_pack_skips_leased_slabs) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)1 << 20);
  uintptr_t obj[16], s[4];
  size_t got;
  uint32_t slot;
  for (int i = 0; i < 16; i++) REQUIRE_EQ(slab_alloc(p, 256, &obj[i]), 0); /* one full slab */
  REQUIRE_EQ(slab_lease(p, 256, 4, 4, 1, s, &got, &slot), 0);
  ranges r = {0};
  REQUIRE_EQ(slab_pack(p, collect, &r), 1);
  REQUIRE_EQ(r.len[0], AH_SLAB_SIZE); /* only the slab of ordinary objects */
  REQUIRE_EQ(r.addr[0], obj[0] & ~(uintptr_t)(AH_SLAB_SIZE - 1));
  for (int i = 0; i < 4; i++) REQUIRE(s[i] - r.addr[0] >= r.len[0]);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_alloc_never_hands_out_a_slot_of_a_leased_slab) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, 16 * AH_SLAB_SIZE);
  uintptr_t a, s[5];
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(slab_alloc(p, 64, &a), 0); /* the class exists, with a partial slab */
  REQUIRE_EQ(slab_free(p, a), 0);       /* ...now its kept empty slab */
  REQUIRE_EQ(slab_lease(p, 64, 5, 5, 2, s, &got, &slot), 0);
  size_t n = 0;
  while (slab_alloc(p, 64, &a) == 0) {
    REQUIRE(!inside_any(s, 5, a));
    n++;
  }
  REQUIRE_EQ(n, (16 - 5) * 64); /* every other slab, and not one slot more */
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_lease_return_makes_exactly_the_live_slots_objects) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)1 << 20);
  uintptr_t s, start;
  size_t got, sz;
  uint32_t slot;
  REQUIRE_EQ(slab_lease(p, 256, 1, 1, 9, &s, &got, &slot), 0); /* 16 slots */
  uint64_t live = (1ull << 0) | (1ull << 3) | (1ull << 15);
  REQUIRE_EQ(slab_lease_check(p, s, 9, live), 0);
  slab_lease_return(p, s, live);
  slab_stats st;
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.leased_slabs, 0);
  REQUIRE_EQ(st.objects, 3);
  REQUIRE_EQ(st.object_bytes, 3 * 256);
  REQUIRE_EQ(st.partial_slabs, 1);
  for (unsigned i = 0; i < 16; i++) {
    uintptr_t a = s + i * 256;
    if ((live >> i) & 1) {
      REQUIRE_EQ(slab_lookup(p, a + 100, &start, &sz), 0);
      REQUIRE_EQ(start, a);
      REQUIRE_EQ(sz, 256);
      REQUIRE_EQ(slab_size_of(p, a, &sz), 0);
    } else {
      REQUIRE_EQ(slab_lookup(p, a, &start, &sz), EINVAL);
      REQUIRE_EQ(slab_free(p, a), EINVAL);
    }
  }
  REQUIRE_EQ(slab_free(p, s + 3 * 256), 0);
  REQUIRE_EQ(slab_free(p, s + 3 * 256), EINVAL);
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.objects, 2);
  /* The free slots are the pool's again: the next allocations of the class fill them. */
  uintptr_t a;
  REQUIRE_EQ(slab_alloc(p, 256, &a), 0);
  REQUIRE_EQ(a, s + 256);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_lease_return_with_every_slot_live_gives_a_full_slab) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)1 << 20);
  uintptr_t s[2];
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(slab_lease(p, 192, 2, 2, 1, s, &got, &slot), 0); /* 21 slots each */
  uint64_t all = (1ull << 21) - 1;
  REQUIRE_EQ(slab_lease_check(p, s[0], 1, all), 0);
  slab_lease_return(p, s[0], all);
  slab_stats st;
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.full_slabs, 1);
  REQUIRE_EQ(st.objects, 21);
  uintptr_t a;
  REQUIRE_EQ(slab_alloc(p, 192, &a), 0); /* not from the full slab, nor the leased one */
  REQUIRE(a - s[0] >= AH_SLAB_SIZE && a - s[1] >= AH_SLAB_SIZE);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_lease_return_with_no_live_slot_gives_an_empty_slab) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)1 << 20);
  size_t total = ((size_t)1 << 20) / AH_SLAB_SIZE;
  uintptr_t s[3], a;
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(slab_lease(p, 512, 3, 3, 1, s, &got, &slot), 0);
  for (int i = 0; i < 3; i++) {
    REQUIRE_EQ(slab_lease_check(p, s[i], 1, 0), 0);
    slab_lease_return(p, s[i], 0);
  }
  slab_stats st;
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.leased_slabs, 0);
  REQUIRE_EQ(st.objects, 0);
  REQUIRE_EQ(st.full_slabs + st.partial_slabs, 0);
  REQUIRE_EQ(st.empty_slabs, 1); /* empty_keep = 1; the others went back to Free */
  REQUIRE_EQ(st.free_slabs, total - 1);
  REQUIRE_EQ(slab_free(p, s[0]), EINVAL); /* no object came back with them */
  REQUIRE_EQ(slab_alloc(p, 512, &a), 0);   /* the kept empty slab serves the class */
  REQUIRE(inside_any(s, 3, a));
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_lease_check_rejects_another_lessee) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)1 << 20);
  uintptr_t s;
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(slab_lease(p, 64, 1, 1, 5, &s, &got, &slot), 0);
  REQUIRE_EQ(slab_lease_check(p, s, 6, 0), EINVAL);
  REQUIRE_EQ(slab_lease_check(p, s, 0, 0), EINVAL);
  REQUIRE_EQ(slab_lease_check(p, s, -1, 0), EINVAL);
  REQUIRE_EQ(slab_lease_check(p, s, 5, 0), 0);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_lease_check_rejects_a_slab_not_leased) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)1 << 20);
  uintptr_t s, a, e, run;
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(slab_lease(p, 64, 1, 1, 5, &s, &got, &slot), 0);
  REQUIRE_EQ(slab_alloc(p, 64, &a), 0);                  /* a slab of ordinary objects */
  REQUIRE_EQ(slab_alloc(p, 2 * AH_SLAB_SIZE, &run), 0);  /* a run */
  REQUIRE_EQ(slab_alloc(p, 128, &e), 0);
  REQUIRE_EQ(slab_free(p, e), 0);                        /* an empty slab of a class */
  uintptr_t free_slab = GAS_BASE;
  while (desc_find(p, free_slab)) free_slab += AH_SLAB_SIZE; /* a slab no descriptor covers */
  uintptr_t bad[] = {a, run, run + AH_SLAB_SIZE, e, s + 64, free_slab, GAS_BASE + GAS_SPAN, 0};
  for (unsigned i = 0; i < sizeof bad / sizeof *bad; i++)
    REQUIRE_EQ(slab_lease_check(p, bad[i], 5, 0), EINVAL);
  slab_lease_return(p, s, 0);
  REQUIRE_EQ(slab_lease_check(p, s, 5, 0), EINVAL); /* handed back already */
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_lease_check_rejects_bits_past_the_slab_capacity) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)1 << 20);
  uintptr_t s;
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(slab_lease(p, 3072, 1, 1, 1, &s, &got, &slot), 0); /* 1 slot */
  REQUIRE_EQ(slot, 3072);
  REQUIRE_EQ(slab_lease_check(p, s, 1, 1), 0);
  REQUIRE_EQ(slab_lease_check(p, s, 1, 2), EINVAL);
  REQUIRE_EQ(slab_lease_check(p, s, 1, 1ull << 63), EINVAL);
  REQUIRE_EQ(slab_lease(p, 192, 1, 1, 1, &s, &got, &slot), 0); /* 21 slots */
  REQUIRE_EQ(slab_lease_check(p, s, 1, (1ull << 21) - 1), 0);
  REQUIRE_EQ(slab_lease_check(p, s, 1, 1ull << 21), EINVAL);
  REQUIRE_EQ(slab_lease_check(p, s, 1, ~0ull), EINVAL);
  REQUIRE_EQ(slab_lease(p, 64, 1, 1, 1, &s, &got, &slot), 0); /* 64 slots: every bit is one */
  REQUIRE_EQ(slab_lease_check(p, s, 1, ~0ull), 0);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_lease_below_min_is_enomem_and_changes_nothing) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, 16 * AH_SLAB_SIZE);
  uintptr_t a, s[5];
  REQUIRE_EQ(slab_alloc(p, 64, &a), 0);
  REQUIRE_EQ(slab_free(p, a), 0); /* the 64-B class keeps one empty slab */
  for (int i = 0; i < 13; i++) REQUIRE_EQ(slab_alloc(p, 4096, &a), 0);
  slab_stats before, after;
  slab_get_stats(p, &before);
  REQUIRE_EQ(before.free_slabs + before.empty_slabs, 3); /* 3 slabs to be had, 4 wanted */
  size_t got = 99;
  uint32_t slot = 99;
  REQUIRE_EQ(slab_lease(p, 64, 5, 4, 1, s, &got, &slot), ENOMEM);
  REQUIRE_EQ(got, 99);
  REQUIRE_EQ(slot, 99);
  slab_get_stats(p, &after);
  stats_equal(&before, &after);
  REQUIRE_EQ(after.leased_slabs, 0);
  REQUIRE_EQ(slab_lease(p, 64, 5, 3, 1, s, &got, &slot), 0); /* a lower min gets them all */
  REQUIRE_EQ(got, 3);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_bad_lease_arguments_are_einval) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)1 << 20);
  uintptr_t s[4];
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(slab_lease(p, 0, 1, 1, 1, s, &got, &slot), EINVAL);
  REQUIRE_EQ(slab_lease(p, AH_SLAB_SIZE + 1, 1, 1, 1, s, &got, &slot), EINVAL);
  REQUIRE_EQ(slab_lease(p, 64, 1, 0, 1, s, &got, &slot), EINVAL);
  REQUIRE_EQ(slab_lease(p, 64, 1, 2, 1, s, &got, &slot), EINVAL);
  slab_stats st;
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.leased_slabs, 0);
  REQUIRE_EQ(st.classes, 0);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

typedef struct {
  uintptr_t addr[16];
  int32_t lessee[16];
  uint32_t slot[16];
  size_t n;
} walked;
static void walk_one(void *ctx, uintptr_t addr, int32_t lessee, uint32_t slot) {
  walked *w = ctx;
  REQUIRE(w->n < 16);
  w->addr[w->n] = addr;
  w->lessee[w->n] = lessee;
  w->slot[w->n++] = slot;
}

START_TEST(test_lease_walk_visits_each_leased_slab_once) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)1 << 20);
  uintptr_t s[5], a;
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(slab_lease(p, 64, 3, 3, 11, s, &got, &slot), 0);
  REQUIRE_EQ(slab_lease(p, 1000, 2, 2, 12, s + 3, &got, &slot), 0);
  REQUIRE_EQ(slab_alloc(p, 64, &a), 0); /* ordinary slabs are not visited */
  walked w = {0};
  slab_lease_walk(p, walk_one, &w);
  REQUIRE_EQ(w.n, 5);
  for (int i = 0; i < 5; i++) {
    int hits = 0;
    for (size_t j = 0; j < w.n; j++)
      if (w.addr[j] == s[i]) {
        hits++;
        REQUIRE_EQ(w.lessee[j], i < 3 ? 11 : 12);
        REQUIRE_EQ(w.slot[j], i < 3 ? 64 : 1024);
      }
    REQUIRE_EQ(hits, 1);
  }
  slab_lease_return(p, s[1], 0); /* a slab handed back is no longer visited */
  w.n = 0;
  slab_lease_walk(p, walk_one, &w);
  REQUIRE_EQ(w.n, 4);
  for (size_t j = 0; j < w.n; j++) REQUIRE(w.addr[j] != s[1]);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

/* ---- class runs: a lease of many slabs under one descriptor (src/slab/classes.c) ---- */

/* Lease n slabs of 256-B slots (16 a slab) to lessee 5, check they are adjacent (one run). */
static void lease_run_of(slab_pool *p, size_t n, uintptr_t *s) {
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(slab_lease(p, 256, n, n, 5, s, &got, &slot), 0);
  REQUIRE_EQ(got, n);
  for (size_t i = 1; i < n; i++) REQUIRE_EQ(s[i], s[0] + i * AH_SLAB_SIZE);
}

/* Both steps of a hand-back: 0, or the first step's ENOMEM (nothing handed back). */
static int hand_back(slab_pool *p, const uint64_t *pairs, size_t n) {
  int rc = slab_lease_prepare(p, pairs, n);
  if (!rc) slab_lease_return_many(p, pairs, n);
  return rc;
}

/* A pool of 4 MiB (1,024 slabs) for the run tests; its kernel's memory goes to *mem. */
static slab_pool *run_pool(void **mem) {
  return gas_pool(kernel_pool(KERNEL_BYTES, mem), (size_t)4 << 20);
}

START_TEST(test_a_lease_of_many_slabs_is_one_run_every_slab_checkable) {
  void *mem;
  slab_pool *p = run_pool(&mem);
  uintptr_t s[64];
  slab_stats before, after;
  slab_get_stats(p, &before);
  lease_run_of(p, 64, s);
  slab_get_stats(p, &after);
  REQUIRE_EQ(after.leased_slabs, 64);
  REQUIRE(after.trie_nodes <= before.trie_nodes + 2); /* one descriptor, not 64 */
  for (int i = 0; i < 64; i++) {
    REQUIRE_EQ(slab_lease_check(p, s[i], 5, ~0ull >> 48), 0);
    REQUIRE_EQ(slab_lease_check(p, s[i], 6, 0), EINVAL);        /* another lessee */
    REQUIRE_EQ(slab_lease_check(p, s[i] + 256, 5, 0), EINVAL);  /* not a slab's start */
    REQUIRE_EQ(slab_lease_check(p, s[i], 5, 1ull << 16), EINVAL); /* slot 16 of 16 */
    REQUIRE_EQ(slab_free(p, s[i]), EINVAL);
    uintptr_t start;
    size_t size;
    REQUIRE_EQ(slab_lookup(p, s[i] + 300, &start, &size), EINVAL);
  }
  REQUIRE_EQ(all_slabs(p), ((size_t)4 << 20) / AH_SLAB_SIZE);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_a_run_handed_back_full_is_one_range_of_live_objects) {
  void *mem;
  slab_pool *p = run_pool(&mem);
  uintptr_t s[64];
  uint64_t pairs[128];
  lease_run_of(p, 64, s);
  for (int i = 0; i < 64; i++) pairs[2 * i] = s[i], pairs[2 * i + 1] = 0xffff;
  REQUIRE_EQ(hand_back(p, pairs, 64), 0);
  slab_stats st;
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.leased_slabs, 0);
  REQUIRE_EQ(st.full_slabs, 64);
  REQUIRE_EQ(st.objects, 64 * 16);
  REQUIRE_EQ(st.object_bytes, 64 * AH_SLAB_SIZE);
  ranges r = {0};
  REQUIRE_EQ(slab_pack(p, collect, &r), 1);
  REQUIRE_EQ(r.len[0], 64 * AH_SLAB_SIZE);
  for (int i = 0; i < 64; i += 7) { /* any slot of any slab, by any interior address */
    uintptr_t start;
    size_t size;
    REQUIRE_EQ(slab_lookup(p, s[i] + 5 * 256 + 17, &start, &size), 0);
    REQUIRE_EQ(start, s[i] + 5 * 256);
    REQUIRE_EQ(size, 256);
    REQUIRE_EQ(slab_size_of(p, s[i] + 15 * 256, &size), 0);
    REQUIRE_EQ(slab_size_of(p, s[i] + 15 * 256 + 64, &size), EINVAL);
  }
  REQUIRE_EQ(all_slabs(p), ((size_t)4 << 20) / AH_SLAB_SIZE);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

START_TEST(test_freeing_in_a_full_run_splits_off_its_slab_and_nothing_else) {
  void *mem;
  slab_pool *p = run_pool(&mem);
  uintptr_t s[64], a;
  uint64_t pairs[128];
  lease_run_of(p, 64, s);
  for (int i = 0; i < 64; i++) pairs[2 * i] = s[i], pairs[2 * i + 1] = 0xffff;
  REQUIRE_EQ(hand_back(p, pairs, 64), 0);
  REQUIRE_EQ(slab_free(p, s[10] + 3 * 256 + 8), EINVAL); /* interior */
  REQUIRE_EQ(slab_free(p, s[10] + 3 * 256), 0);
  REQUIRE_EQ(slab_free(p, s[10] + 3 * 256), EINVAL);     /* twice */
  slab_stats st;
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.full_slabs, 63);
  REQUIRE_EQ(st.partial_slabs, 1);
  REQUIRE_EQ(st.objects, 64 * 16 - 1);
  ranges r = {0};
  REQUIRE_EQ(slab_pack(p, collect, &r), 1); /* still one range: nothing is empty */
  REQUIRE_EQ(r.len[0], 64 * AH_SLAB_SIZE);
  REQUIRE_EQ(slab_alloc(p, 256, &a), 0);
  REQUIRE_EQ(a, s[10] + 3 * 256); /* the hole is the class's partial slab */
  for (int i = 63; i >= 0; i--) /* then everything, first and last slabs included */
    for (int j = 0; j < 16; j++) REQUIRE_EQ(slab_free(p, s[i] + (uintptr_t)j * 256), 0);
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.objects, 0);
  REQUIRE_EQ(st.full_slabs + st.partial_slabs, 0);
  REQUIRE_EQ(all_slabs(p), ((size_t)4 << 20) / AH_SLAB_SIZE);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

/* Hand back slabs 0-9 full, 10 partial, 11-19 empty, 20-29 full (in the order given), keep the
 * rest leased; then the rest, empty. */
static void hand_back_mixed(slab_pool *p, const uintptr_t *s, const int *order) {
  uint64_t pairs[60];
  for (int k = 0; k < 30; k++) {
    int i = order ? order[k] : k;
    pairs[2 * k] = s[i];
    pairs[2 * k + 1] = i < 10 || i >= 20 ? 0xffff : i == 10 ? 0x00f1 : 0;
  }
  REQUIRE_EQ(hand_back(p, pairs, 30), 0);
  slab_stats st;
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.leased_slabs, 34);
  REQUIRE_EQ(st.full_slabs, 20);
  REQUIRE_EQ(st.partial_slabs, 1);
  REQUIRE_EQ(st.objects, 20 * 16 + 5);
  uintptr_t start;
  size_t size;
  REQUIRE_EQ(slab_lookup(p, s[10] + 4 * 256, &start, &size), 0); /* bit 4 of 0xf1 */
  REQUIRE_EQ(slab_lookup(p, s[10] + 1 * 256, &start, &size), EINVAL);
  REQUIRE_EQ(slab_lookup(p, s[15], &start, &size), EINVAL);     /* empty: back in Free */
  for (int i = 30; i < 64; i++) REQUIRE_EQ(slab_lease_check(p, s[i], 5, 0), 0);
  for (int i = 0; i < 30; i++) REQUIRE_EQ(slab_lease_check(p, s[i], 5, 0), EINVAL);
  REQUIRE_EQ(all_slabs(p), ((size_t)4 << 20) / AH_SLAB_SIZE);
  uint64_t rest[68];
  for (int i = 30; i < 64; i++) rest[2 * (i - 30)] = s[i], rest[2 * (i - 30) + 1] = 0;
  REQUIRE_EQ(hand_back(p, rest, 34), 0);
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.leased_slabs, 0);
  REQUIRE_EQ(st.objects, 20 * 16 + 5);
  REQUIRE_EQ(all_slabs(p), ((size_t)4 << 20) / AH_SLAB_SIZE);
}

/* A run of 64 leased on a fresh pool, then handed back as hand_back_mixed does. */
static void mixed_hand_back_case(const int *order) {
  void *mem;
  slab_pool *p = run_pool(&mem);
  uintptr_t s[64];
  lease_run_of(p, 64, s);
  hand_back_mixed(p, s, order);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}

START_TEST(test_a_run_handed_back_in_parts_keeps_each_slab_in_one_state) {
  mixed_hand_back_case(NULL);
}
END_TEST

START_TEST(test_a_run_handed_back_out_of_order_ends_the_same) {
  int order[30];
  for (int i = 0; i < 30; i++) order[i] = (i * 7) % 30; /* 7 is prime to 30: a permutation */
  mixed_hand_back_case(order);
}
END_TEST

START_TEST(test_empty_runs_of_two_classes_handed_back_together_are_both_trimmed) {
  void *mem;
  slab_pool *p = run_pool(&mem);
  uintptr_t a[64], b[64];
  uint64_t pairs[256];
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(slab_lease(p, 256, 64, 64, 5, a, &got, &slot), 0);
  REQUIRE_EQ(slab_lease(p, 1024, 64, 64, 5, b, &got, &slot), 0);
  for (int i = 0; i < 64; i++) { /* one batch, the classes interleaved */
    pairs[4 * i] = a[i], pairs[4 * i + 1] = 0;
    pairs[4 * i + 2] = b[i], pairs[4 * i + 3] = 0;
  }
  REQUIRE_EQ(hand_back(p, pairs, 128), 0);
  slab_stats st;
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.leased_slabs, 0);
  REQUIRE(st.empty_slabs <= 2); /* each class keeps at most empty_keep = 1 */
  REQUIRE_EQ(all_slabs(p), ((size_t)4 << 20) / AH_SLAB_SIZE);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

static void count_leased(void *ctx, uintptr_t addr, int32_t lessee, uint32_t slot) {
  (void)addr, (void)lessee, (void)slot;
  ++*(size_t *)ctx;
}

START_TEST(test_a_hand_back_without_metadata_changes_nothing_then_succeeds) {
  size_t kbytes = 24 * AH_SLAB_SIZE; /* a small kernel: its descriptors run out */
  void *mem = aligned_alloc(AH_SLAB_SIZE, kbytes);
  slab_pool *k;
  REQUIRE_EQ(slab_pool_create_self_hosted(&k, mem, kbytes, NULL), 0);
  slab_pool *p = gas_pool(k, (size_t)64 << 20);
  slab_pool *filler[2]; /* two more pools on the kernel eat its metadata: [0] 16 slabs' worth */
  for (int f = 0; f < 2; f++) {
    slab_config fc = slab_config_default();
    fc.base = GAS_BASE + (size_t)(f + 1) * GAS_SPAN;
    fc.span = GAS_SPAN;
    REQUIRE_EQ(slab_pool_create(&filler[f], &fc, k), 0);
    REQUIRE_EQ(slab_add_range(filler[f], fc.base, (size_t)64 << 20), 0);
  }
  uintptr_t s[256], a;
  size_t n = 0;
  lease_run_of(p, 256, s);
  for (int i = 0; i < 16; i++) REQUIRE_EQ(slab_alloc(filler[0], 4096, &a), 0);
  while (n < 20000 && slab_alloc(filler[1], 4096, &a) == 0) n++; /* a descriptor each, to the end */
  REQUIRE(n < 20000);
  slab_pool_destroy(filler[0], NULL, NULL); /* room for a few cuts, not for all */
  uint64_t pairs[512];
  for (int i = 0; i < 256; i++) /* every other slab full: 255 cuts to make */
    pairs[2 * i] = s[i], pairs[2 * i + 1] = i % 2 ? 0xffff : 0x0003;
  slab_stats before, st;
  slab_get_stats(p, &before);
  REQUIRE_EQ(hand_back(p, pairs, 256), ENOMEM); /* a few cuts made, then none: nothing back */
  size_t leased = 0;
  slab_lease_walk(p, count_leased, &leased);
  slab_get_stats(p, &st);
  REQUIRE_EQ(leased, 256);
  REQUIRE_EQ(st.leased_slabs, 256);
  REQUIRE_EQ(st.objects, before.objects);
  for (int i = 0; i < 256; i++) REQUIRE_EQ(slab_lease_check(p, s[i], 5, pairs[2 * i + 1]), 0);
  REQUIRE_EQ(hand_back(p, pairs, 256), ENOMEM); /* and again, still whole */
  slab_pool_destroy(filler[1], NULL, NULL); /* its metadata back: the batch comes home */
  REQUIRE_EQ(hand_back(p, pairs, 256), 0);
  slab_get_stats(p, &st);
  REQUIRE_EQ(st.leased_slabs, 0);
  REQUIRE_EQ(st.objects, 128 * 16 + 128 * 2);
  REQUIRE_EQ(st.full_slabs, 128);
  REQUIRE_EQ(st.partial_slabs, 128);
  slab_pool_destroy(p, NULL, NULL);
  free(mem);
}
END_TEST

/* slab_pool_check: every invariant holds through allocations of every size, frees, a lease
 * and its return (both pools: the GAS pool and the kernel pool holding its metadata). */
START_TEST(test_pool_invariants_hold_through_churn_and_leases) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)4 << 20);
  rng_state = 42;
  uintptr_t live[512];
  size_t n = 0;
  for (int step = 0; step < 4000; step++) {
    if (n < 512 && (n == 0 || rnd() % 3)) {
      size_t size = 1 + rnd() % (rnd() % 8 ? 512 : 3 * AH_SLAB_SIZE);
      if (slab_alloc(p, size, &live[n]) == 0) n++;
    } else {
      size_t i = rnd() % n;
      REQUIRE_EQ(slab_free(p, live[i]), 0);
      live[i] = live[--n];
    }
  }
  REQUIRE_EQ(slab_pool_check(p), 0);
  uintptr_t slabs[8];
  size_t got;
  uint32_t slot;
  REQUIRE_EQ(slab_lease(p, 128, 8, 1, 3, slabs, &got, &slot), 0);
  REQUIRE_EQ(slab_pool_check(p), 0);
  for (size_t i = 0; i < got; i++) REQUIRE_EQ(slab_lease_return(p, slabs[i], i % 2 ? 5 : 0), 0);
  REQUIRE_EQ(slab_pool_check(p), 0);
  REQUIRE_EQ(slab_pool_check(k), 0);
  slab_pool_destroy(p, NULL, NULL);
  slab_pool_destroy(k, NULL, NULL);
  free(mem);
}
END_TEST

/* slab_pool_check finds a slab whose count disagrees with its bitmap. */
START_TEST(test_pool_check_finds_a_count_that_disagrees_with_its_bitmap) {
  void *mem;
  slab_pool *k = kernel_pool(KERNEL_BYTES, &mem);
  slab_pool *p = gas_pool(k, (size_t)1 << 20);
  uintptr_t a, b;
  REQUIRE_EQ(slab_alloc(p, 64, &a), 0);
  REQUIRE_EQ(slab_alloc(p, 64, &b), 0);
  REQUIRE_EQ(slab_pool_check(p), 0);
  slab_desc *d = p->class_cache[1]->partial;
  REQUIRE(d != NULL);
  d->used++; /* a count the bitmap does not have */
  REQUIRE_EQ(slab_pool_check(p), EINVAL);
  d->used--;
  REQUIRE_EQ(slab_pool_check(p), 0);
  slab_pool_destroy(p, NULL, NULL);
  slab_pool_destroy(k, NULL, NULL);
  free(mem);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("slab");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_random_single_size_traffic_matches_shadow);
  tcase_add_test(tc, test_random_mixed_size_traffic_matches_shadow);
  tcase_add_test(tc, test_sizes_round_up_to_64_and_any_multiple_is_a_class);
  tcase_add_test(tc, test_large_object_takes_one_run_with_one_descriptor);
  tcase_add_test(tc, test_free_of_foreign_or_freed_address_is_einval_and_changes_nothing);
  tcase_add_test(tc, test_bad_ranges_and_configs_are_einval);
  tcase_add_test(tc, test_exhausted_pool_is_enomem_and_recovers_after_free);
  tcase_add_test(tc, test_pack_coalesces_used_slabs_in_address_order);
  tcase_add_test(tc, test_destroy_reports_every_range_and_returns_all_metadata);
  tcase_add_test(tc, test_take_free_returns_highest_free_slabs);
  tcase_add_test(tc, test_fitting_runs_are_found_by_size_among_many_holes);
  tcase_add_test(tc, test_metadata_lives_in_the_meta_pool_not_in_managed_space);
  tcase_add_test(tc, test_self_hosted_pool_bootstraps_and_survives_being_filled);
  tcase_add_test(tc, test_self_hosted_pool_grows_through_callback);
  tcase_add_test(tc, test_metadata_exhaustion_is_enomem_and_consistent);
  tcase_add_test(tc, test_empty_slabs_are_kept_lazily_then_returned);
  tcase_add_test(tc, test_slot_index_reciprocal_is_exact_for_every_class_and_offset);
  tcase_add_test(tc, test_lease_gives_distinct_empty_slabs_of_the_slot_size);
  tcase_add_test(tc, test_lease_takes_the_class_empty_slab_before_carving);
  tcase_add_test(tc, test_slots_of_a_leased_slab_are_einval_for_free_lookup_and_size_of);
  tcase_add_test(tc, test_pack_skips_leased_slabs);
  tcase_add_test(tc, test_alloc_never_hands_out_a_slot_of_a_leased_slab);
  tcase_add_test(tc, test_lease_return_makes_exactly_the_live_slots_objects);
  tcase_add_test(tc, test_lease_return_with_every_slot_live_gives_a_full_slab);
  tcase_add_test(tc, test_lease_return_with_no_live_slot_gives_an_empty_slab);
  tcase_add_test(tc, test_lease_check_rejects_another_lessee);
  tcase_add_test(tc, test_lease_check_rejects_a_slab_not_leased);
  tcase_add_test(tc, test_lease_check_rejects_bits_past_the_slab_capacity);
  tcase_add_test(tc, test_lease_below_min_is_enomem_and_changes_nothing);
  tcase_add_test(tc, test_bad_lease_arguments_are_einval);
  tcase_add_test(tc, test_lease_walk_visits_each_leased_slab_once);
  tcase_add_test(tc, test_a_lease_of_many_slabs_is_one_run_every_slab_checkable);
  tcase_add_test(tc, test_a_run_handed_back_full_is_one_range_of_live_objects);
  tcase_add_test(tc, test_freeing_in_a_full_run_splits_off_its_slab_and_nothing_else);
  tcase_add_test(tc, test_a_run_handed_back_in_parts_keeps_each_slab_in_one_state);
  tcase_add_test(tc, test_a_run_handed_back_out_of_order_ends_the_same);
  tcase_add_test(tc, test_a_hand_back_without_metadata_changes_nothing_then_succeeds);
  tcase_add_test(tc, test_empty_runs_of_two_classes_handed_back_together_are_both_trimmed);
  tcase_add_test(tc, test_pool_invariants_hold_through_churn_and_leases);
  tcase_add_test(tc, test_pool_check_finds_a_count_that_disagrees_with_its_bitmap);
  suite_add_tcase(s, tc);
  return s;
}

/* test_trie.c: the 8-degree trie against a sorted-array reference model. */
#include <check.h>

#include "check_main.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trie/trie.h"

/* ---- reference model: a sorted array of (key, value) ---- */
typedef struct {
  uint64_t key;
  uintptr_t value;
} kv;
typedef struct {
  kv *e;
  size_t n, cap;
} model;

static size_t model_lower_bound(const model *m, uint64_t key) {
  size_t lo = 0, hi = m->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (m->e[mid].key < key) lo = mid + 1; else hi = mid;
  }
  return lo;
}
static bool model_has(const model *m, uint64_t key) {
  size_t i = model_lower_bound(m, key);
  return i < m->n && m->e[i].key == key;
}
static void model_insert(model *m, uint64_t key, uintptr_t v) {
  if (m->n == m->cap) {
    m->cap = m->cap ? 2 * m->cap : 1024;
    m->e = realloc(m->e, m->cap * sizeof *m->e);
  }
  size_t i = model_lower_bound(m, key);
  memmove(&m->e[i + 1], &m->e[i], (m->n - i) * sizeof *m->e);
  m->e[i] = (kv){key, v};
  m->n++;
}
static void model_delete(model *m, uint64_t key) {
  size_t i = model_lower_bound(m, key);
  memmove(&m->e[i], &m->e[i + 1], (m->n - i - 1) * sizeof *m->e);
  m->n--;
}

static uint64_t rng_state;
static uint64_t rnd(void) { /* xorshift64*: deterministic from the seed */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ull;
}

/* ---- a node source that counts and can be told to fail ---- */
typedef struct {
  long live;
  long fail_after; /* allocations left before failing; <0: never fail */
} counting_ctx;
static trie_node *counting_alloc(void *ctx) {
  counting_ctx *c = ctx;
  if (c->fail_after == 0) return NULL;
  if (c->fail_after > 0) c->fail_after--;
  c->live++;
  return aligned_alloc(64, sizeof(trie_node));
}
static void counting_release(void *ctx, trie_node *n) {
  ((counting_ctx *)ctx)->live--;
  free(n);
}
static trie_node_source counting_source(counting_ctx *c) {
  c->live = 0;
  c->fail_after = -1;
  return (trie_node_source){counting_alloc, counting_release, c};
}

/* Check every query type for one probe key against the model. */
static void check_probe(const trie *t, const model *m, uint64_t probe) {
  size_t i = model_lower_bound(m, probe);
  uint64_t k;
  uintptr_t v;
  int rc = trie_ge(t, probe, &k, &v);
  if (i < m->n) {
    REQUIRE_EQ(rc, 0);
    REQUIRE_EQ(k, m->e[i].key);
    REQUIRE_EQ(v, m->e[i].value);
  } else {
    REQUIRE_EQ(rc, ENOENT);
  }
  bool exact = i < m->n && m->e[i].key == probe;
  size_t j = exact ? i : i; /* index of first key > probe when exact is false */
  rc = trie_le(t, probe, &k, &v);
  if (exact) {
    REQUIRE_EQ(rc, 0);
    REQUIRE_EQ(k, probe);
  } else if (j > 0) {
    REQUIRE_EQ(rc, 0);
    REQUIRE_EQ(k, m->e[j - 1].key);
    REQUIRE_EQ(v, m->e[j - 1].value);
  } else {
    REQUIRE_EQ(rc, ENOENT);
  }
  REQUIRE_EQ(trie_find(t, probe), exact ? m->e[i].value : 0);
}

static void check_walk(const trie *t, const model *m) {
  trie_cursor c;
  trie_cursor_seek(&c, t, 0);
  uint64_t k;
  uintptr_t v;
  size_t i = 0;
  while (trie_cursor_next(&c, &k, &v)) {
    REQUIRE((i) < (m->n));
    REQUIRE_EQ(k, m->e[i].key);
    REQUIRE_EQ(v, m->e[i].value);
    i++;
  }
  REQUIRE_EQ(i, m->n);
}

/* 1e5 random operations at one key width, checked against the model. */
static void random_ops(unsigned bits, uint64_t seed, uint64_t key_range) {
  counting_ctx cc;
  trie t;
  REQUIRE_EQ(trie_init(&t, bits, counting_source(&cc)), 0);
  model m = {0};
  rng_state = seed;
  for (int op = 0; op < 100000; op++) {
    uint64_t key = rnd() % key_range;
    unsigned what = rnd() % 10;
    if (what < 5) {
      uintptr_t v = (uintptr_t)(rnd() | 1);
      int rc = trie_insert(&t, key, v);
      if (model_has(&m, key)) {
        REQUIRE_EQ(rc, EEXIST);
      } else {
        REQUIRE_EQ(rc, 0);
        model_insert(&m, key, v);
      }
    } else if (what < 8) {
      uintptr_t old = 0;
      int rc = trie_delete(&t, key, &old);
      if (model_has(&m, key)) {
        REQUIRE_EQ(rc, 0);
        REQUIRE_EQ(old, m.e[model_lower_bound(&m, key)].value);
        model_delete(&m, key);
      } else {
        REQUIRE_EQ(rc, ENOENT);
      }
    } else {
      check_probe(&t, &m, key);
    }
    REQUIRE_EQ(trie_count(&t), m.n);
  }
  check_walk(&t, &m);
  REQUIRE_EQ(cc.live, (long)t.nodes);
  trie_clear(&t);
  REQUIRE_EQ(cc.live, 0);
  free(m.e);
}

START_TEST(test_random_ops_match_model_dense_keys) { random_ops(16, 1, 1u << 12); }
END_TEST
START_TEST(test_random_ops_match_model_sparse_40bit_keys) {
  random_ops(40, 2, (uint64_t)1 << 40);
}
END_TEST
START_TEST(test_random_ops_match_model_64bit_keys) { random_ops(64, 3, UINT64_MAX); }
END_TEST
START_TEST(test_random_ops_match_model_odd_width) { random_ops(7, 4, 128); }
END_TEST

START_TEST(test_edge_keys_zero_and_max) {
  unsigned widths[] = {1, 3, 4, 40, 63, 64};
  for (unsigned w = 0; w < sizeof widths / sizeof *widths; w++) {
    trie t;
    REQUIRE_EQ(trie_init(&t, widths[w], trie_heap_source()), 0);
    uint64_t max = trie_key_max(&t);
    REQUIRE_EQ(trie_insert(&t, 0, 10), 0);
    REQUIRE_EQ(trie_insert(&t, max, 20), 0);
    REQUIRE_EQ(trie_find(&t, 0), 10);
    REQUIRE_EQ(trie_find(&t, max), 20);
    uint64_t k;
    REQUIRE_EQ(trie_le(&t, max, &k, NULL), 0);
    REQUIRE_EQ(k, max);
    if (max > 1) {
      REQUIRE_EQ(trie_le(&t, max - 1, &k, NULL), 0);
      REQUIRE_EQ(k, 0);
      REQUIRE_EQ(trie_ge(&t, 1, &k, NULL), 0);
      REQUIRE_EQ(k, max);
    }
    if (widths[w] < 64) {
      REQUIRE_EQ(trie_insert(&t, max + 1, 30), EINVAL);
      REQUIRE_EQ(trie_ge(&t, max + 1, &k, NULL), ENOENT);
      REQUIRE_EQ(trie_le(&t, max + 1, &k, NULL), 0); /* clamps to max */
      REQUIRE_EQ(k, max);
    }
    REQUIRE_EQ(trie_delete(&t, 0, NULL), 0);
    REQUIRE_EQ(trie_delete(&t, max, NULL), 0);
    REQUIRE((t.root) == NULL);
    REQUIRE_EQ(t.nodes, 0);
  }
}
END_TEST

START_TEST(test_bad_width_and_zero_value_are_einval) {
  trie t;
  REQUIRE_EQ(trie_init(&t, 0, trie_heap_source()), EINVAL);
  REQUIRE_EQ(trie_init(&t, 65, trie_heap_source()), EINVAL);
  REQUIRE_EQ(trie_init(&t, 12, trie_heap_source()), 0);
  REQUIRE_EQ(trie_insert(&t, 5, 0), EINVAL);
  REQUIRE_EQ(trie_count(&t), 0);
  REQUIRE_EQ(t.nodes, 0);
}
END_TEST

START_TEST(test_nearest_at_and_between_keys) {
  trie t;
  trie_init(&t, 30, trie_heap_source());
  uint64_t keys[] = {100, 200, 4096, 1u << 20, (1u << 29) + 7};
  for (unsigned i = 0; i < 5; i++) REQUIRE_EQ(trie_insert(&t, keys[i], keys[i] + 1), 0);
  uint64_t k;
  uintptr_t v;
  REQUIRE_EQ(trie_le(&t, 99, &k, &v), ENOENT);
  REQUIRE_EQ(trie_le(&t, 100, &k, &v), 0);
  REQUIRE_EQ(k, 100);
  REQUIRE_EQ(v, 101);
  REQUIRE_EQ(trie_le(&t, 4095, &k, NULL), 0);
  REQUIRE_EQ(k, 200);
  REQUIRE_EQ(trie_ge(&t, 201, &k, NULL), 0);
  REQUIRE_EQ(k, 4096);
  REQUIRE_EQ(trie_ge(&t, (1u << 20) + 1, &k, NULL), 0);
  REQUIRE_EQ(k, (1u << 29) + 7);
  REQUIRE_EQ(trie_ge(&t, (1u << 29) + 8, &k, NULL), ENOENT);
  REQUIRE_EQ(trie_le(&t, (1u << 30) - 1, &k, NULL), 0);
  REQUIRE_EQ(k, (1u << 29) + 7);
  trie_clear(&t);
}
END_TEST

START_TEST(test_walk_resumes_from_seek_point_in_order) {
  trie t;
  trie_init(&t, 24, trie_heap_source());
  for (uint64_t k = 0; k < 5000; k += 7) trie_insert(&t, k * 3, k + 1);
  trie_cursor c;
  trie_cursor_seek(&c, &t, 1000);
  uint64_t prev = 0, k;
  uintptr_t v;
  size_t n = 0;
  bool first = true;
  while (trie_cursor_next(&c, &k, &v)) {
    REQUIRE((k) >= (1000));
    if (!first) REQUIRE((k) > (prev));
    REQUIRE_EQ(v, k / 3 + 1);
    prev = k;
    first = false;
    n++;
  }
  size_t expect = 0;
  for (uint64_t k2 = 0; k2 < 5000; k2 += 7)
    if (k2 * 3 >= 1000) expect++;
  REQUIRE_EQ(n, expect);
  trie_cursor_seek(&c, &t, trie_key_max(&t));
  REQUIRE(!trie_cursor_next(&c, &k, &v));
  trie_clear(&t);
}
END_TEST

START_TEST(test_deleted_nodes_are_given_back_and_reused) {
  counting_ctx cc;
  trie t;
  trie_init(&t, 36, counting_source(&cc));
  for (uint64_t k = 0; k < 1000; k++) trie_insert(&t, k * 9973, 1);
  long peak = cc.live;
  REQUIRE((peak) > (0));
  for (uint64_t k = 0; k < 1000; k++) REQUIRE_EQ(trie_delete(&t, k * 9973, NULL), 0);
  REQUIRE_EQ(cc.live, 0);
  REQUIRE((t.root) == NULL);
  for (uint64_t k = 0; k < 1000; k++) trie_insert(&t, k * 9973, 1);
  REQUIRE_EQ(cc.live, peak);
  trie_clear(&t);
  REQUIRE_EQ(cc.live, 0);
}
END_TEST

START_TEST(test_insert_without_memory_is_enomem_and_changes_nothing) {
  counting_ctx cc;
  trie t;
  trie_init(&t, 30, counting_source(&cc));
  REQUIRE_EQ(trie_insert(&t, 1, 1), 0);
  long before = cc.live;
  cc.fail_after = 3; /* a far key needs ~9 new nodes: fail midway */
  REQUIRE_EQ(trie_insert(&t, (1u << 29) | 12345, 2), ENOMEM);
  REQUIRE_EQ(cc.live, before);
  REQUIRE_EQ(t.nodes, (size_t)before);
  REQUIRE_EQ(trie_count(&t), 1);
  REQUIRE_EQ(trie_find(&t, (1u << 29) | 12345), 0);
  cc.fail_after = -1;
  REQUIRE_EQ(trie_insert(&t, (1u << 29) | 12345, 2), 0);
  trie_clear(&t);
}
END_TEST

START_TEST(test_depth_is_width_over_three_and_the_root_skips_shared_levels) {
  trie t;
  trie_init(&t, 40, trie_heap_source());
  REQUIRE_EQ(t.levels, 14);
  trie_insert(&t, 12345, 1);
  REQUIRE_EQ(t.nodes, 1); /* one key: its leaf node is the root */
  trie_insert(&t, 12346, 2);
  REQUIRE_EQ(t.nodes, 1); /* same leaf */
  trie_insert(&t, (uint64_t)1 << 39, 3);
  REQUIRE_EQ(t.top, 0); /* keys now differ in the first digit: full depth */
  REQUIRE_EQ(t.nodes, 1 + 13 + 13);
  REQUIRE_EQ(trie_delete(&t, (uint64_t)1 << 39, NULL), 0);
  REQUIRE_EQ(t.nodes, 1); /* the root moved back down */
  REQUIRE_EQ(trie_find(&t, 12345), 1);
  uint64_t k;
  REQUIRE_EQ(trie_ge(&t, 0, &k, NULL), 0); /* below the root's range */
  REQUIRE_EQ(k, 12345);
  REQUIRE_EQ(trie_le(&t, (uint64_t)1 << 39, &k, NULL), 0); /* above it */
  REQUIRE_EQ(k, 12346);
  REQUIRE_EQ(trie_le(&t, 100, &k, NULL), ENOENT);
  REQUIRE_EQ(trie_ge(&t, 20000, &k, NULL), ENOENT);
  trie_clear(&t);
  REQUIRE_EQ(t.nodes, 0);
  trie_init(&t, 64, trie_heap_source());
  REQUIRE_EQ(t.levels, 22);
  REQUIRE_EQ(sizeof(trie_node), 64);
}
END_TEST

START_TEST(test_find_slot_updates_in_place) {
  trie t;
  trie_init(&t, 10, trie_heap_source());
  trie_insert(&t, 77, 5);
  uintptr_t *w = trie_find_slot(&t, 77);
  REQUIRE((w) != NULL);
  *w = 9;
  REQUIRE_EQ(trie_find(&t, 77), 9);
  REQUIRE((trie_find_slot(&t, 78)) == NULL);
  trie_clear(&t);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("trie");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_random_ops_match_model_dense_keys);
  tcase_add_test(tc, test_random_ops_match_model_sparse_40bit_keys);
  tcase_add_test(tc, test_random_ops_match_model_64bit_keys);
  tcase_add_test(tc, test_random_ops_match_model_odd_width);
  tcase_add_test(tc, test_edge_keys_zero_and_max);
  tcase_add_test(tc, test_bad_width_and_zero_value_are_einval);
  tcase_add_test(tc, test_nearest_at_and_between_keys);
  tcase_add_test(tc, test_walk_resumes_from_seek_point_in_order);
  tcase_add_test(tc, test_deleted_nodes_are_given_back_and_reused);
  tcase_add_test(tc, test_insert_without_memory_is_enomem_and_changes_nothing);
  tcase_add_test(tc, test_depth_is_width_over_three_and_the_root_skips_shared_levels);
  tcase_add_test(tc, test_find_slot_updates_in_place);
  suite_add_tcase(s, tc);
  return s;
}

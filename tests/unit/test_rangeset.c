/* test_rangeset.c: merged integer ranges on a trie: the set, its running counts, the index by
 * length (best fit), the index of ranges holding an aligned block, and what happens when an
 * index cannot have a node (stale: searches walk, then rebuild). */
#include <check.h>

#include "check_main.h"
#include <errno.h>
#include <string.h>

#include "trie/rangeset.h"

static rangeset fresh_flags(unsigned bits, unsigned flags) {
  rangeset s;
  REQUIRE_EQ(rangeset_init(&s, bits, trie_heap_source(), flags), 0);
  return s;
}
static rangeset fresh(void) { return fresh_flags(32, RANGESET_SIZED | RANGESET_ALIGN(16)); }

START_TEST(test_adjacent_ranges_merge_both_ways) {
  rangeset s = fresh();
  REQUIRE_EQ(rangeset_add(&s, 10, 5), 0);  /* [10,15) */
  REQUIRE_EQ(rangeset_add(&s, 20, 5), 0);  /* [20,25) */
  REQUIRE_EQ(rangeset_count(&s), 2);
  REQUIRE_EQ(rangeset_add(&s, 15, 5), 0);  /* fills the gap: one range [10,25) */
  REQUIRE_EQ(rangeset_count(&s), 1);
  REQUIRE_EQ(trie_find(&s.ranges, 10), 15);
  REQUIRE_EQ(rangeset_add(&s, 5, 5), 0);   /* merges with the successor */
  REQUIRE_EQ(trie_find(&s.ranges, 5), 20);
  REQUIRE_EQ(rangeset_total(&s), 20);
  REQUIRE_EQ(rangeset_check(&s), 0);
  rangeset_clear(&s);
}
END_TEST

START_TEST(test_overlaps_detects_any_shared_element) {
  rangeset s = fresh();
  rangeset_add(&s, 100, 10);
  REQUIRE(rangeset_overlaps(&s, 109, 1));
  REQUIRE(rangeset_overlaps(&s, 90, 11));
  REQUIRE(rangeset_overlaps(&s, 50, 100));
  REQUIRE(!rangeset_overlaps(&s, 110, 5));
  REQUIRE(!rangeset_overlaps(&s, 90, 10));
  rangeset_clear(&s);
}
END_TEST

START_TEST(test_pick_takes_the_end_of_the_best_fitting_range) {
  rangeset s = fresh();
  rangeset_add(&s, 0, 2);
  rangeset_add(&s, 10, 8);
  rangeset_add(&s, 40, 4);
  rangeset_add(&s, 60, 4);
  uint64_t st;
  REQUIRE_EQ(rangeset_pick_end(&s, 3, &st), 0); /* [40,44) and [60,64) fit best: the lower */
  REQUIRE_EQ(st, 41);
  rangeset_take_end(&s, st, 3);
  REQUIRE_EQ(trie_find(&s.ranges, 40), 1);
  REQUIRE_EQ(rangeset_pick_end(&s, 2, &st), 0); /* [0,2) fits exactly */
  REQUIRE_EQ(st, 0);
  rangeset_take_end(&s, 0, 2);
  REQUIRE_EQ(trie_find(&s.ranges, 0), 0);
  REQUIRE_EQ(rangeset_pick_end(&s, 5, &st), 0); /* only [10,18) */
  REQUIRE_EQ(st, 13);
  REQUIRE_EQ(rangeset_pick_end(&s, 9, &st), ENOENT);
  REQUIRE_EQ(rangeset_pick_end(&s, 0, &st), EINVAL);
  REQUIRE_EQ(rangeset_check(&s), 0);
  rangeset_clear(&s);
}
END_TEST

START_TEST(test_unsized_set_picks_the_lowest_fitting_range) {
  rangeset s = fresh_flags(32, 0);
  rangeset_add(&s, 0, 2);
  rangeset_add(&s, 10, 8);
  rangeset_add(&s, 40, 4);
  uint64_t st;
  REQUIRE_EQ(rangeset_pick_end(&s, 3, &st), 0);
  REQUIRE_EQ(st, 15);
  REQUIRE_EQ(rangeset_check(&s), 0);
  rangeset_clear(&s);
}
END_TEST

START_TEST(test_take_highest_and_lowest) {
  rangeset s = fresh();
  rangeset_add(&s, 1, 3);
  rangeset_add(&s, 100, 50);
  uint64_t st, n;
  REQUIRE_EQ(rangeset_take_highest(&s, 20, &st, &n), 0);
  REQUIRE_EQ(st, 130);
  REQUIRE_EQ(n, 20);
  REQUIRE_EQ(rangeset_take_lowest(&s, &st), 0);
  REQUIRE_EQ(st, 1);
  REQUIRE_EQ(trie_find(&s.ranges, 2), 2);
  REQUIRE_EQ(rangeset_take_lowest(&s, &st), 0);
  REQUIRE_EQ(rangeset_take_lowest(&s, &st), 0);
  REQUIRE_EQ(st, 3);
  REQUIRE_EQ(rangeset_total(&s), 30);
  REQUIRE_EQ(rangeset_check(&s), 0);
  REQUIRE_EQ(rangeset_take_highest(&s, 0, &st, &n), ENOENT);
  rangeset_clear(&s);
  REQUIRE_EQ(rangeset_take_lowest(&s, &st), ENOENT);
  REQUIRE_EQ(rangeset_total(&s), 0);
}
END_TEST

START_TEST(test_remove_splits_and_contains_checks_whole_spans) {
  rangeset s = fresh();
  rangeset_add(&s, 100, 100); /* [100,200) */
  REQUIRE(rangeset_contains(&s, 100, 100));
  REQUIRE(!rangeset_contains(&s, 150, 51));
  REQUIRE_EQ(rangeset_remove(&s, 120, 10), 0); /* middle: [100,120) [130,200) */
  REQUIRE_EQ(rangeset_count(&s), 2);
  REQUIRE(!rangeset_contains(&s, 125, 1));
  REQUIRE_EQ(rangeset_remove(&s, 100, 20), 0); /* a whole range */
  REQUIRE_EQ(rangeset_remove(&s, 130, 5), 0);  /* its start */
  REQUIRE_EQ(rangeset_remove(&s, 190, 10), 0); /* its end */
  REQUIRE_EQ(rangeset_total(&s), 55);
  REQUIRE_EQ(trie_find(&s.ranges, 135), 55);
  REQUIRE_EQ(rangeset_remove(&s, 10, 5), EINVAL); /* not in the set */
  REQUIRE_EQ(rangeset_remove(&s, 180, 20), EINVAL); /* runs past the range */
  REQUIRE_EQ(rangeset_total(&s), 55);
  REQUIRE_EQ(rangeset_check(&s), 0);
  rangeset_clear(&s);
}
END_TEST

START_TEST(test_aligned_index_finds_the_lowest_range_holding_a_block) {
  rangeset s = fresh(); /* blocks of 16 */
  uint64_t st, n;
  REQUIRE_EQ(rangeset_pick_aligned(&s, &st, &n), ENOENT);
  rangeset_add(&s, 1, 30);  /* [1,31): no aligned 16 ([16,32) needs 31) */
  rangeset_add(&s, 33, 15); /* [33,48): too short */
  REQUIRE_EQ(rangeset_pick_aligned(&s, &st, &n), ENOENT);
  rangeset_add(&s, 100, 40); /* [100,140) holds [112,128) */
  REQUIRE_EQ(rangeset_pick_aligned(&s, &st, &n), 0);
  REQUIRE_EQ(st, 100);
  REQUIRE_EQ(n, 40);
  rangeset_add(&s, 31, 1); /* [1,32) now holds [16,32): the lowest */
  REQUIRE_EQ(rangeset_count(&s), 3);
  REQUIRE_EQ(rangeset_pick_aligned(&s, &st, &n), 0);
  REQUIRE_EQ(st, 1);
  rangeset_take_end(&s, 31, 1);
  REQUIRE_EQ(rangeset_pick_aligned(&s, &st, &n), 0);
  REQUIRE_EQ(st, 100);
  REQUIRE_EQ(rangeset_check(&s), 0);
  rangeset_clear(&s);
}
END_TEST

START_TEST(test_longest_is_one_search_and_the_lowest_of_equals) {
  rangeset s = fresh();
  uint64_t st, n;
  REQUIRE_EQ(rangeset_longest(&s, &st, &n), ENOENT);
  rangeset_add(&s, 50, 7);
  rangeset_add(&s, 10, 7);
  rangeset_add(&s, 90, 3);
  REQUIRE_EQ(rangeset_longest(&s, &st, &n), 0);
  REQUIRE_EQ(st, 10);
  REQUIRE_EQ(n, 7);
  rangeset_clear(&s);
}
END_TEST

/* Lengths past the size key's cap share one key prefix: a 60-bit set keeps 4 bits of length. */
START_TEST(test_lengths_past_the_cap_are_still_exact) {
  rangeset s;
  REQUIRE_EQ(rangeset_init(&s, 48, trie_heap_source(), RANGESET_SIZED), 0);
  REQUIRE_EQ(s.len_cap, 65535);
  rangeset_add(&s, 0, 100000);
  rangeset_add(&s, 1000000, 70000);
  rangeset_add(&s, 5000000, 10);
  uint64_t st, n;
  REQUIRE_EQ(rangeset_pick_end(&s, 80000, &st), 0);
  REQUIRE_EQ(st, 100000 - 80000);
  REQUIRE_EQ(rangeset_pick_end(&s, 66000, &st), 0);
  REQUIRE_EQ(st, 0 + 100000 - 66000); /* both fit; the index does not know which is smaller */
  REQUIRE_EQ(rangeset_pick_end(&s, 200000, &st), ENOENT);
  REQUIRE_EQ(rangeset_longest(&s, &st, &n), 0);
  REQUIRE_EQ(n, 100000);
  REQUIRE_EQ(rangeset_check(&s), 0);
  rangeset_clear(&s);
  REQUIRE_EQ(rangeset_init(&s, 49, trie_heap_source(), RANGESET_SIZED), EINVAL);
  REQUIRE_EQ(rangeset_init(&s, 32, trie_heap_source(), RANGESET_ALIGN(3)), EINVAL);
}
END_TEST

/* A node source that fails after `left` more nodes. */
static long nodes_left = -1;
static trie_node *rationed_alloc(void *ctx) {
  (void)ctx;
  if (nodes_left == 0) return NULL;
  if (nodes_left > 0) nodes_left--;
  return aligned_alloc(64, sizeof(trie_node));
}
static void heap_release(void *ctx, trie_node *n) {
  (void)ctx;
  free(n);
}
static const trie_node_source rationed = {rationed_alloc, heap_release, NULL};

START_TEST(test_enomem_changes_nothing) {
  rangeset s = fresh();
  rangeset_add(&s, 10, 5);
  s.ranges.source.alloc = rationed_alloc;
  nodes_left = 0;
  REQUIRE_EQ(rangeset_add(&s, 1000000, 5), ENOMEM); /* needs new nodes */
  REQUIRE_EQ(rangeset_total(&s), 5);
  REQUIRE_EQ(rangeset_add(&s, 15, 5), 0); /* a merge needs none for the set */
  REQUIRE_EQ(rangeset_total(&s), 10);
  REQUIRE_EQ(rangeset_check(&s), 0);
  nodes_left = -1;
  rangeset_clear(&s);
}
END_TEST

/* An index that cannot have a node goes stale; the set stays right, the searches walk (and
 * find what there is), and a later search rebuilds the index once nodes come back. */
START_TEST(test_a_stale_index_falls_back_to_walks_and_rebuilds) {
  rangeset s = fresh();
  s.by_size.source = rationed;
  s.aligned.source = rationed;
  nodes_left = 0;
  REQUIRE_EQ(rangeset_add(&s, 1000, 40), 0); /* the set has its range, the indexes do not */
  REQUIRE(s.stale);
  REQUIRE_EQ(rangeset_total(&s), 40);
  REQUIRE_EQ(rangeset_check(&s), 0);
  uint64_t st, n;
  REQUIRE_EQ(rangeset_pick_end(&s, 30, &st), 0); /* found by the walk */
  REQUIRE_EQ(st, 1010);
  REQUIRE_EQ(rangeset_pick_aligned(&s, &st, &n), 0);
  REQUIRE_EQ(st, 1000);
  REQUIRE_EQ(rangeset_longest(&s, &st, &n), 0);
  REQUIRE_EQ(n, 40);
  REQUIRE(s.stale);
  rangeset_take_end(&s, 1030, 10); /* cannot fail, stale or not */
  REQUIRE_EQ(rangeset_total(&s), 30);
  nodes_left = -1; /* nodes again: the next search rebuilds */
  REQUIRE_EQ(rangeset_pick_end(&s, 30, &st), 0);
  REQUIRE(!s.stale);
  REQUIRE_EQ(st, 1000);
  REQUIRE_EQ(rangeset_check(&s), 0);
  rangeset_clear(&s);
}
END_TEST

/* Random adds, takes and removes against a bitmap: the set, its counts and both indexes agree
 * with the model after every step, and every best fit is the model's. */
#define SPACE 4096
static unsigned char model[SPACE];
static uint64_t rnd_state = 12345;
static uint64_t rnd(void) {
  rnd_state ^= rnd_state << 13;
  rnd_state ^= rnd_state >> 7;
  rnd_state ^= rnd_state << 17;
  return rnd_state;
}

/* The model's best fit for n: the smallest run of members of length >= n, the lowest first. */
static bool model_fit(uint64_t n, uint64_t *best_start, uint64_t *best_len) {
  bool found = false;
  for (uint64_t i = 0; i < SPACE;) {
    if (!model[i]) {
      i++;
      continue;
    }
    uint64_t j = i;
    while (j < SPACE && model[j]) j++;
    if (j - i >= n && (!found || j - i < *best_len)) {
      found = true;
      *best_start = i;
      *best_len = j - i;
    }
    i = j;
  }
  return found;
}

START_TEST(test_random_operations_match_a_model) {
  rangeset s = fresh_flags(12, RANGESET_SIZED | RANGESET_ALIGN(64));
  memset(model, 0, sizeof model);
  uint64_t total = 0;
  for (int step = 0; step < 20000; step++) {
    uint64_t a = rnd() % SPACE, n = 1 + rnd() % 40, st = 0, bl = 0;
    if (a + n > SPACE) n = SPACE - a;
    bool any = false, all = true;
    for (uint64_t i = a; i < a + n; i++) any |= model[i], all &= model[i] != 0;
    switch (rnd() % 3) {
      case 0:
        if (any) break;
        REQUIRE_EQ(rangeset_add(&s, a, n), 0);
        memset(model + a, 1, n);
        total += n;
        break;
      case 1:
        if (!all) break;
        REQUIRE_EQ(rangeset_remove(&s, a, n), 0); /* members lie in one merged range */
        memset(model + a, 0, n);
        total -= n;
        break;
      default: {
        bool fit = model_fit(n, &st, &bl);
        uint64_t got;
        REQUIRE_EQ(rangeset_pick_end(&s, n, &got), fit ? 0 : ENOENT);
        if (!fit) break;
        REQUIRE_EQ(got, st + bl - n); /* the smallest fitting range, the lowest of equals */
        rangeset_take_end(&s, got, n);
        memset(model + got, 0, n);
        total -= n;
      }
    }
    REQUIRE_EQ(rangeset_total(&s), total);
    if (step % 64 == 0) REQUIRE_EQ(rangeset_check(&s), 0);
  }
  REQUIRE_EQ(rangeset_check(&s), 0);
  rangeset_clear(&s);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("rangeset");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_adjacent_ranges_merge_both_ways);
  tcase_add_test(tc, test_overlaps_detects_any_shared_element);
  tcase_add_test(tc, test_pick_takes_the_end_of_the_best_fitting_range);
  tcase_add_test(tc, test_unsized_set_picks_the_lowest_fitting_range);
  tcase_add_test(tc, test_take_highest_and_lowest);
  tcase_add_test(tc, test_enomem_changes_nothing);
  tcase_add_test(tc, test_remove_splits_and_contains_checks_whole_spans);
  tcase_add_test(tc, test_aligned_index_finds_the_lowest_range_holding_a_block);
  tcase_add_test(tc, test_longest_is_one_search_and_the_lowest_of_equals);
  tcase_add_test(tc, test_lengths_past_the_cap_are_still_exact);
  tcase_add_test(tc, test_a_stale_index_falls_back_to_walks_and_rebuilds);
  tcase_add_test(tc, test_random_operations_match_a_model);
  suite_add_tcase(s, tc);
  return s;
}

/* test_rangeset.c: merged integer ranges on a trie. */
#include <check.h>

#include "check_main.h"
#include <errno.h>

#include "trie/rangeset.h"

static trie fresh(void) {
  trie t;
  trie_init(&t, 32, trie_heap_source());
  return t;
}

START_TEST(test_adjacent_ranges_merge_both_ways) {
  trie t = fresh();
  REQUIRE_EQ(rangeset_add(&t, 10, 5), 0);  /* [10,15) */
  REQUIRE_EQ(rangeset_add(&t, 20, 5), 0);  /* [20,25) */
  REQUIRE_EQ(trie_count(&t), 2);
  REQUIRE_EQ(rangeset_add(&t, 15, 5), 0);  /* fills the gap: one range [10,25) */
  REQUIRE_EQ(trie_count(&t), 1);
  REQUIRE_EQ(trie_find(&t, 10), 15);
  REQUIRE_EQ(rangeset_add(&t, 5, 5), 0);   /* merges with the successor */
  REQUIRE_EQ(trie_find(&t, 5), 20);
  REQUIRE_EQ(rangeset_total(&t), 20);
  trie_clear(&t);
}
END_TEST

START_TEST(test_overlaps_detects_any_shared_element) {
  trie t = fresh();
  rangeset_add(&t, 100, 10);
  REQUIRE(rangeset_overlaps(&t, 109, 1));
  REQUIRE(rangeset_overlaps(&t, 90, 11));
  REQUIRE(rangeset_overlaps(&t, 50, 100));
  REQUIRE(!rangeset_overlaps(&t, 110, 5));
  REQUIRE(!rangeset_overlaps(&t, 90, 10));
  trie_clear(&t);
}
END_TEST

START_TEST(test_pick_and_take_from_the_end_of_the_lowest_fitting_range) {
  trie t = fresh();
  rangeset_add(&t, 0, 2);
  rangeset_add(&t, 10, 8);
  uint64_t s;
  REQUIRE_EQ(rangeset_pick_end(&t, 3, &s), 0);
  REQUIRE_EQ(s, 15);
  rangeset_take_end(&t, s, 3);
  REQUIRE_EQ(trie_find(&t, 10), 5);
  REQUIRE_EQ(rangeset_pick_end(&t, 2, &s), 0);
  REQUIRE_EQ(s, 0);
  rangeset_take_end(&t, 0, 2);
  REQUIRE_EQ(trie_find(&t, 0), 0);
  REQUIRE_EQ(rangeset_pick_end(&t, 6, &s), ENOENT);
  trie_clear(&t);
}
END_TEST

START_TEST(test_take_highest_and_lowest) {
  trie t = fresh();
  rangeset_add(&t, 1, 3);
  rangeset_add(&t, 100, 50);
  uint64_t s, n;
  REQUIRE_EQ(rangeset_take_highest(&t, 20, &s, &n), 0);
  REQUIRE_EQ(s, 130);
  REQUIRE_EQ(n, 20);
  REQUIRE_EQ(rangeset_take_lowest(&t, &s), 0);
  REQUIRE_EQ(s, 1);
  REQUIRE_EQ(trie_find(&t, 2), 2);
  REQUIRE_EQ(rangeset_take_lowest(&t, &s), 0);
  REQUIRE_EQ(rangeset_take_lowest(&t, &s), 0);
  REQUIRE_EQ(s, 3);
  REQUIRE_EQ(rangeset_total(&t), 30);
  REQUIRE_EQ(rangeset_take_highest(&t, 0, &s, &n), ENOENT);
  trie_clear(&t);
  REQUIRE_EQ(rangeset_take_lowest(&t, &s), ENOENT);
}
END_TEST

START_TEST(test_remove_splits_and_contains_checks_whole_spans) {
  trie t = fresh();
  rangeset_add(&t, 100, 100); /* [100,200) */
  REQUIRE(rangeset_contains(&t, 100, 100));
  REQUIRE(!rangeset_contains(&t, 150, 51));
  REQUIRE_EQ(rangeset_remove(&t, 120, 10), 0); /* middle: [100,120) [130,200) */
  REQUIRE_EQ(trie_count(&t), 2);
  REQUIRE(!rangeset_contains(&t, 125, 1));
  REQUIRE_EQ(rangeset_remove(&t, 100, 20), 0); /* a whole range */
  REQUIRE_EQ(rangeset_remove(&t, 130, 5), 0);  /* its start */
  REQUIRE_EQ(rangeset_remove(&t, 190, 10), 0); /* its end */
  REQUIRE_EQ(rangeset_total(&t), 55);
  REQUIRE_EQ(trie_find(&t, 135), 55);
  REQUIRE_EQ(rangeset_remove(&t, 10, 5), EINVAL); /* not in the set */
  REQUIRE_EQ(rangeset_remove(&t, 180, 20), EINVAL); /* runs past the range */
  REQUIRE_EQ(rangeset_total(&t), 55);
  trie_clear(&t);
}
END_TEST

static trie_node *failing_alloc(void *ctx) {
  (void)ctx;
  return NULL;
}
static void no_release(void *ctx, trie_node *n) {
  (void)ctx;
  free(n);
}

START_TEST(test_enomem_changes_nothing) {
  trie t = fresh();
  rangeset_add(&t, 10, 5);
  t.source = (trie_node_source){failing_alloc, no_release, NULL};
  REQUIRE_EQ(rangeset_add(&t, 1000000, 5), ENOMEM); /* needs new nodes */
  REQUIRE_EQ(rangeset_total(&t), 5);
  REQUIRE_EQ(rangeset_add(&t, 15, 5), 0); /* a merge needs none */
  REQUIRE_EQ(rangeset_total(&t), 10);
  trie_clear(&t);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("rangeset");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_adjacent_ranges_merge_both_ways);
  tcase_add_test(tc, test_overlaps_detects_any_shared_element);
  tcase_add_test(tc, test_pick_and_take_from_the_end_of_the_lowest_fitting_range);
  tcase_add_test(tc, test_take_highest_and_lowest);
  tcase_add_test(tc, test_enomem_changes_nothing);
  tcase_add_test(tc, test_remove_splits_and_contains_checks_whole_spans);
  suite_add_tcase(s, tc);
  return s;
}

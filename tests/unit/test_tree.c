/* test_tree.c: the routing tree: shapes, next hops, subtree membership, bad links. */
#include <check.h>

#include "check_main.h"
#include <errno.h>

#include "sched/tree.h"

START_TEST(test_heap_tree_of_7_schedulers_and_8_workers) {
  sched_tree t;
  REQUIRE_EQ(sched_tree_heap(&t, 7, 2, 8), 0);
  REQUIRE_EQ(t.levels, 3);
  REQUIRE_EQ(t.root, 0);
  REQUIRE_EQ(t.descendants[0], 6);
  REQUIRE_EQ(t.descendants[1], 2);
  REQUIRE(sched_tree_is_leaf(&t, 3) && !sched_tree_is_leaf(&t, 1));
  for (int w = 7; w < 15; w++) { /* two workers per leaf, in order */
    REQUIRE(sched_tree_is_leaf(&t, t.parent[w]));
    REQUIRE_EQ(t.parent[w], 3 + (w - 7) / 2);
  }
  REQUIRE_EQ(sched_tree_next_hop(&t, 0, 14), 2);  /* down towards worker 14 (leaf 6) */
  REQUIRE_EQ(sched_tree_next_hop(&t, 6, 14), 14);
  REQUIRE_EQ(sched_tree_next_hop(&t, 3, 14), 1);  /* up first */
  REQUIRE_EQ(sched_tree_next_hop(&t, 7, 0), 3);   /* a worker's only way is its leaf */
  REQUIRE_EQ(sched_tree_next_hop(&t, 5, 5), 5);
  REQUIRE(sched_tree_in_subtree(&t, 1, 8) && !sched_tree_in_subtree(&t, 1, 12));
  sched_tree_free(&t);
}
END_TEST

START_TEST(test_one_scheduler_serves_every_worker) {
  sched_tree t;
  REQUIRE_EQ(sched_tree_heap(&t, 1, 8, 3), 0);
  REQUIRE_EQ(t.levels, 1);
  REQUIRE(sched_tree_is_leaf(&t, 0));
  REQUIRE_EQ(t.workers_below[0], 3);
  sched_tree_free(&t);
}
END_TEST

START_TEST(test_bad_links_are_einval) {
  sched_tree t;
  bool is[4] = {true, true, false, false};
  int two_roots[4] = {-1, -1, 0, 1};
  REQUIRE_EQ(sched_tree_init(&t, 4, is, two_roots), EINVAL);
  int worker_parent[4] = {-1, 2, 0, 0}; /* a scheduler under a worker */
  REQUIRE_EQ(sched_tree_init(&t, 4, is, worker_parent), EINVAL);
  bool cyc_is[4] = {true, true, true, false};
  int cycle[4] = {-1, 2, 1, 0}; /* 1 and 2 point at each other */
  REQUIRE_EQ(sched_tree_init(&t, 4, cyc_is, cycle), EINVAL);
  bool none[2] = {true, true};
  int p[2] = {-1, 0}; /* no worker */
  REQUIRE_EQ(sched_tree_init(&t, 2, none, p), EINVAL);
  REQUIRE_EQ(sched_tree_heap(&t, 0, 2, 4), EINVAL);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("tree");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_heap_tree_of_7_schedulers_and_8_workers);
  tcase_add_test(tc, test_one_scheduler_serves_every_worker);
  tcase_add_test(tc, test_bad_links_are_einval);
  suite_add_tcase(s, tc);
  return s;
}

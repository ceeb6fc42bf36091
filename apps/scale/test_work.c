/* test_work.c: the weak-scaling benchmark's pure logic (apps/scale/work.c): the partner
 * schedule, scheduler counts of fan-out trees, the statistics file. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "work.h"

/* Every stage is a matching: p(p(i)) = i, never oneself, symmetric byes. */
static void require_matchings(int n, int k) {
  for (int s = 0; s < scale_stages(k); s++)
    for (int i = 0; i < n; i++) {
      int p = scale_partner(i, n, s, k);
      if (p < 0) continue;
      REQUIRE(p != i && p < n);
      REQUIRE_EQ(scale_partner(p, n, s, k), i);
    }
}

START_TEST(test_every_stage_is_a_matching_for_even_odd_and_tiny_counts) {
  for (int n = 1; n <= 70; n++)
    for (int k = 0; k <= 4; k++) require_matchings(n, k);
  require_matchings(4096, 3);
}
END_TEST

START_TEST(test_the_ring_links_every_worker_to_both_neighbours_when_even) {
  int n = 64;
  for (int i = 0; i < n; i++) {
    int a = scale_partner(i, n, 0, 3), b = scale_partner(i, n, 1, 3);
    int left = (i - 1 + n) % n, right = (i + 1) % n;
    REQUIRE((a == left && b == right) || (a == right && b == left));
  }
}
END_TEST

START_TEST(test_partners_per_round_are_bounded_whatever_the_worker_count) {
  for (int n = 2; n <= 8192; n *= 2) {
    int most = 0;
    for (int i = 0; i < n; i += n / 32 + 1) {
      int c = 0;
      for (int s = 0; s < scale_stages(3); s++) c += scale_partner(i, n, s, 3) >= 0;
      if (c > most) most = c;
    }
    REQUIRE(most <= 5);
    if (n >= 16) REQUIRE_EQ(most, 5);
  }
}
END_TEST

START_TEST(test_hypercube_partners_stay_in_a_block_of_2_to_the_k_plus_1) {
  for (int s = 2; s < scale_stages(3); s++)
    for (int i = 0; i < 4096; i++) REQUIRE_EQ(scale_partner(i, 4096, s, 3) / 16, i / 16);
}
END_TEST

START_TEST(test_scheduler_counts_of_full_fanout_8_trees) {
  REQUIRE_EQ(scale_schedulers_for(64, 8, 8), 9);
  REQUIRE_EQ(scale_schedulers_for(128, 8, 8), 19); /* 17 would leave 15 leaves */
  REQUIRE_EQ(scale_schedulers_for(256, 8, 8), 37);
  REQUIRE_EQ(scale_schedulers_for(512, 8, 8), 73);
  REQUIRE_EQ(scale_schedulers_for(1024, 8, 8), 147);
  REQUIRE_EQ(scale_schedulers_for(4096, 8, 8), 585);
  REQUIRE_EQ(scale_schedulers_for(8, 2, 4), 3);
  REQUIRE_EQ(scale_schedulers_for(3, 8, 8), 1);
  REQUIRE_EQ(scale_levels(9, 8), 2);
  REQUIRE_EQ(scale_levels(37, 8), 3);
  REQUIRE_EQ(scale_levels(19, 8), 3);
  REQUIRE_EQ(scale_levels(73, 8), 3);
  REQUIRE_EQ(scale_levels(147, 8), 4);
  REQUIRE_EQ(scale_levels(585, 8), 4);
  REQUIRE_EQ(scale_levels(1, 8), 1);
  REQUIRE_EQ(scale_schedulers_for(0, 8, 8), -1);
  REQUIRE_EQ(scale_schedulers_for(16, 1, 8), -1);
}
END_TEST

START_TEST(test_statistics_are_summed_by_place_in_the_tree) {
  const char *csv =
      "rank,level,kind,msgs_in,msgs_out,bytes_in,bytes_out,served,rss_kib\n"
      "0,0,root,10,12,100,120,5,2048\n"
      "1,1,inner,20,20,200,200,5,1024\n"
      "3,2,leaf,30,40,300,400,5,4096\n"
      "4,2,leaf,1,2,3,4,5,1000\n";
  FILE *f = fmemopen((void *)csv, strlen(csv), "r");
  scale_sched_stats st;
  REQUIRE(scale_read_stats(f, &st) == 0);
  fclose(f);
  REQUIRE_EQ(st.rows, 4);
  REQUIRE_EQ(st.levels, 3);
  REQUIRE_EQ(st.cls[0].count, 1);
  REQUIRE_EQ(st.cls[0].msgs, 22);
  REQUIRE_EQ(st.cls[0].bytes, 220);
  REQUIRE_EQ(st.cls[2].count, 2);
  REQUIRE_EQ(st.cls[2].msgs, 73);
  REQUIRE_EQ(st.cls[2].msgs_max, 70);
  REQUIRE_EQ(st.cls[2].rss_kib_max, 4096);
  REQUIRE_EQ(st.cls[2].rss_kib_sum, 5096);
}
END_TEST

START_TEST(test_a_file_that_is_not_statistics_is_refused) {
  const char *bad[] = {"", "rank,served\n0,1\n", "rank,level,kind,msgs_in\n0,0,moon,1,2,3,4,5\n",
                       "rank,level,kind,msgs_in\n"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    FILE *f = fmemopen((void *)bad[i], strlen(bad[i]) + 1, "r");
    scale_sched_stats st;
    REQUIRE(scale_read_stats(f, &st) == -1);
    fclose(f);
  }
}
END_TEST

START_TEST(test_checksums_differ_by_owner_index_and_round) {
  REQUIRE(scale_mix(1, 2, 3) != scale_mix(2, 1, 3));
  REQUIRE(scale_mix(1, 2, 3) != scale_mix(1, 2, 4));
  REQUIRE(scale_mix(0, 0, 0) == scale_mix(0, 0, 0));
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("scale");
  TCase *tc = tcase_create("work");
  tcase_add_test(tc, test_every_stage_is_a_matching_for_even_odd_and_tiny_counts);
  tcase_add_test(tc, test_the_ring_links_every_worker_to_both_neighbours_when_even);
  tcase_add_test(tc, test_partners_per_round_are_bounded_whatever_the_worker_count);
  tcase_add_test(tc, test_hypercube_partners_stay_in_a_block_of_2_to_the_k_plus_1);
  tcase_add_test(tc, test_scheduler_counts_of_full_fanout_8_trees);
  tcase_add_test(tc, test_statistics_are_summed_by_place_in_the_tree);
  tcase_add_test(tc, test_a_file_that_is_not_statistics_is_refused);
  tcase_add_test(tc, test_checksums_differ_by_owner_index_and_round);
  suite_add_tcase(s, tc);
  return s;
}

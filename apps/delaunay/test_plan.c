/* test_plan.c: the decomposition of section 6.4 (plan.c): delegation by sub-quadrants, the
 * rotations' windows (every 2 x 2 window of sub-quadrants inside the grid is one worker's in
 * exactly one phase), and region moves that change exactly the owners that differ, in rounds
 * where nobody takes part twice. */
#include <stdlib.h>

#include "check_main.h"
#include "plan.h"

START_TEST(test_only_powers_of_four_workers) {
  dt_plan p;
  ck_assert_int_eq(plan_init(&p, 1), 0);
  ck_assert_int_eq(p.G, 2);
  ck_assert_int_eq(plan_init(&p, 16), 0);
  ck_assert_int_eq(p.K, 2);
  ck_assert_int_eq(p.ncells, 64); /* 4 x workers */
  ck_assert_int_eq(p.nnodes, 1 + 4 + 16 + 64);
  ck_assert_int_eq(plan_init(&p, 2), -1);
  ck_assert_int_eq(plan_init(&p, 8), -1);
}
END_TEST

/* Delegation: the owner of a block at level k keeps sub-quadrant 0 and gives s to w + s 4^k. */
START_TEST(test_delegation_gives_sub_quadrant_s_to_w_plus_s_4_to_the_k) {
  dt_plan p;
  plan_init(&p, 64);
  for (int k = 0; k < p.K; k++)
    for (int by = 0; by < 1 << k; by++)
      for (int bx = 0; bx < 1 << k; bx++) {
        int w = plan_owner(&p, k, bx, by);
        for (int s = 0; s < 4; s++)
          REQUIRE_EQ(plan_owner(&p, k + 1, 2 * bx + (s & 1), 2 * by + (s >> 1)),
                     w + (s << (2 * k)));
      }
  /* at the last level every worker owns exactly one block of four cells */
  int count[64] = {0};
  for (int c = 0; c < p.ncells; c++) count[plan_cell_owner(&p, p.K, 0, c % p.G, c / p.G)]++;
  for (int w = 0; w < 64; w++) REQUIRE_EQ(count[w], 4);
}
END_TEST

START_TEST(test_every_window_of_sub_quadrants_is_one_workers_in_one_phase) {
  dt_plan p;
  plan_init(&p, 16);
  for (int k = 1; k <= p.K; k++) {
    int S = 2 << k, sh = p.K - k;
    for (int j = 0; j + 1 < S; j++)
      for (int i = 0; i + 1 < S; i++) {
        int phases = 0;
        for (int ph = 0; ph < 4; ph++) {
          int w = plan_cell_owner(&p, k, ph, i << sh, j << sh), same = 1;
          for (int d = 1; d < 4; d++)
            same &= plan_cell_owner(&p, k, ph, (i + (d & 1)) << sh, (j + (d >> 1)) << sh) == w;
          phases += same;
        }
        if (phases != 1)
          ck_abort_msg("level %d window (%d, %d): one worker's in %d phases", k, i, j, phases);
      }
  }
}
END_TEST

START_TEST(test_moves_change_exactly_the_owners_that_differ_in_matchings) {
  dt_plan p;
  plan_init(&p, 16);
  struct {
    int d, k0, ph0, k1, ph1;
  } t[] = {{1, 0, 0, 1, 0}, {2, 1, 0, 1, 1}, {2, 1, 1, 1, 2},
           {2, 1, 2, 1, 3}, {2, 1, 3, 2, 0}, {3, 2, 2, 2, 3}};
  for (size_t x = 0; x < sizeof t / sizeof *t; x++) {
    dt_move *m;
    int *buf;
    int n = plan_moves(&p, t[x].d, t[x].k0, t[x].ph0, t[x].k1, t[x].ph1, &m, &buf);
    ck_assert_int_ge(n, 1);
    int side = 1 << t[x].d, moved = 0;
    for (int i = 0; i < n; i++) {
      ck_assert_int_ne(m[i].from, m[i].to);
      if (i) ck_assert_int_ge(m[i].round, m[i - 1].round);
      for (int j = 0; j < i; j++) /* a round is a matching */
        if (m[j].round == m[i].round)
          REQUIRE(m[j].from != m[i].from && m[j].from != m[i].to && m[j].to != m[i].from &&
                  m[j].to != m[i].to);
      for (int c = 0; c < m[i].count; c++) {
        int node = m[i].nodes[c], first = ((1 << (2 * t[x].d)) - 1) / 3, y = (node - first) / side,
            xx = (node - first) % side;
        REQUIRE_EQ(plan_node_owner(&p, t[x].k0, t[x].ph0, t[x].d, xx, y), m[i].from);
        REQUIRE_EQ(plan_node_owner(&p, t[x].k1, t[x].ph1, t[x].d, xx, y), m[i].to);
        moved++;
      }
    }
    int differ = 0;
    for (int y = 0; y < side; y++)
      for (int xx = 0; xx < side; xx++)
        differ += plan_node_owner(&p, t[x].k0, t[x].ph0, t[x].d, xx, y) !=
                  plan_node_owner(&p, t[x].k1, t[x].ph1, t[x].d, xx, y);
    ck_assert_int_eq(moved, differ);
    free(m);
    free(buf);
  }
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("delaunay plan");
  TCase *tc = tcase_create("plan");
  tcase_add_test(tc, test_only_powers_of_four_workers);
  tcase_add_test(tc, test_delegation_gives_sub_quadrant_s_to_w_plus_s_4_to_the_k);
  tcase_add_test(tc, test_every_window_of_sub_quadrants_is_one_workers_in_one_phase);
  tcase_add_test(tc, test_moves_change_exactly_the_owners_that_differ_in_matchings);
  suite_add_tcase(s, tc);
  return s;
}

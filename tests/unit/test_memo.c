/* test_memo.c: the move memo (src/worker/memo.c): which received range lists a worker may send
 * on without a pack, and when it must forget them. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "worker/memo.h"

static memo M; /* each test's memo: on, empty (fixture) */

static void memo_setup(void) { memo_init(&M, true); }
static void memo_teardown(void) { memo_destroy(&M); }

/* Handle words of a move of one region and one object: {1, 1, rid, obj}. */
static uint64_t *names1(uint64_t rid, uint64_t obj) {
  uint64_t *h = malloc(4 * sizeof *h);
  h[0] = 1, h[1] = 1, h[2] = rid, h[3] = obj;
  return h;
}

/* A malloc'ed list of n ranges: [base + i * step, + len). */
static gas_range *ranges(uintptr_t base, size_t n, uintptr_t step, size_t len) {
  gas_range *r = malloc((n ? n : 1) * sizeof *r);
  for (size_t i = 0; i < n; i++) r[i] = (gas_range){base + i * step, len};
  return r;
}

/* Keep {rid, obj} with ranges [base + i * 0x1000, +0x100), i < n. */
static void keep(memo *m, uint64_t rid, uint64_t obj, uintptr_t base, size_t n) {
  memo_keep(m, names1(rid, obj), 4, ranges(base, n, 0x1000, 0x100), n);
}

/* Is there a memo for {rid, obj}? Takes it; checks its first range starts at base. */
static bool take(memo *m, uint64_t rid, uint64_t obj, uintptr_t base, size_t *n) {
  uint64_t h[4] = {1, 1, rid, obj};
  gas_range *r = NULL;
  size_t got = 0;
  if (!memo_take(m, h, 4, &r, &got)) return false;
  if (got) REQUIRE_EQ(r[0].addr, base);
  if (n) *n = got;
  free(r);
  return true;
}

START_TEST(test_a_received_move_is_sent_on_once_with_its_ranges) {
  memo *m = &M;
  keep(m, 7, 0x5000, 0x10000, 3);
  REQUIRE_EQ(memo_count(m), 1);
  size_t n;
  REQUIRE(take(m, 7, 0x5000, 0x10000, &n));
  REQUIRE_EQ(n, 3);
  REQUIRE(!take(m, 7, 0x5000, 0x10000, NULL)); /* used once: the region left */
  REQUIRE_EQ(memo_count(m), 0);
}
END_TEST

START_TEST(test_only_the_same_names_in_the_same_order_match) {
  memo *m = &M;
  keep(m, 7, 0x5000, 0x10000, 2);
  REQUIRE(!take(m, 7, 0x6000, 0x10000, NULL)); /* another object */
  REQUIRE(!take(m, 8, 0x5000, 0x10000, NULL)); /* another region */
  uint64_t just_region[3] = {1, 0, 7};
  gas_range *r;
  size_t n;
  REQUIRE(!memo_take(m, just_region, 3, &r, &n)); /* fewer names */
  REQUIRE_EQ(memo_count(m), 1);
}
END_TEST

START_TEST(test_any_change_by_the_worker_forgets_everything) {
  memo *m = &M;
  keep(m, 7, 0x5000, 0x10000, 2);
  keep(m, 8, 0x6000, 0x90000, 2);
  REQUIRE_EQ(memo_count(m), 2);
  memo_forget_all(m);
  REQUIRE_EQ(memo_count(m), 0);
  REQUIRE(!take(m, 7, 0x5000, 0x10000, NULL));
}
END_TEST

START_TEST(test_a_move_that_overlaps_a_memo_forgets_it) {
  memo *m = &M;
  keep(m, 7, 0x5000, 0x10000, 4);  /* [0x10000,+0x100) ... [0x13000,+0x100) */
  keep(m, 8, 0x6000, 0x90000, 2);
  gas_range inside = {0x12080, 0x10}; /* a descendant of 7 sent on its own */
  uint64_t other[3] = {1, 0, 99};
  memo_forget_moved(m, other, 3, &inside, 1);
  REQUIRE(!take(m, 7, 0x5000, 0x10000, NULL));
  REQUIRE(take(m, 8, 0x6000, 0x90000, NULL));
}
END_TEST

START_TEST(test_a_move_that_names_a_memo_region_forgets_it_even_without_ranges) {
  memo *m = &M;
  keep(m, 7, 0x5000, 0x10000, 0); /* an empty region: no range to overlap */
  uint64_t with_7[4] = {2, 0, 3, 7};
  memo_forget_moved(m, with_7, 4, NULL, 0);
  REQUIRE_EQ(memo_count(m), 0);
  keep(m, 7, 0x5000, 0x10000, 0);
  uint64_t obj_7[3] = {0, 1, 7}; /* an object at address 7 is not region 7 */
  memo_forget_moved(m, obj_7, 3, NULL, 0);
  REQUIRE_EQ(memo_count(m), 1);
}
END_TEST

START_TEST(test_a_region_received_again_replaces_its_old_memo) {
  memo *m = &M;
  keep(m, 7, 0x5000, 0x10000, 2);
  keep(m, 7, 0x5000, 0x40000, 3); /* it came back, grown elsewhere */
  REQUIRE_EQ(memo_count(m), 1);
  size_t n;
  REQUIRE(take(m, 7, 0x5000, 0x40000, &n));
  REQUIRE_EQ(n, 3);
}
END_TEST

START_TEST(test_the_oldest_memo_goes_when_every_slot_is_taken) {
  memo *m = &M;
  for (uint64_t i = 0; i < MEMO_SLOTS + 1; i++) keep(m, 100 + i, 0x5000 + i, 0x100000 * (i + 1), 1);
  REQUIRE_EQ(memo_count(m), MEMO_SLOTS);
  REQUIRE(!take(m, 100, 0x5000, 0x100000, NULL));
  for (uint64_t i = 1; i < MEMO_SLOTS + 1; i++)
    REQUIRE(take(m, 100 + i, 0x5000 + i, 0x100000 * (i + 1), NULL));
}
END_TEST

START_TEST(test_an_unsorted_list_is_kept_sorted_and_a_bad_one_not_at_all) {
  memo *m = &M;
  gas_range *r = ranges(0x10000, 3, 0x1000, 0x100);
  gas_range t = r[0];
  r[0] = r[2], r[2] = t;
  memo_keep(m, names1(7, 0x5000), 4, r, 3);
  REQUIRE(take(m, 7, 0x5000, 0x10000, NULL)); /* first range: the lowest */
  gas_range *bad = ranges(0x10000, 2, 0x80, 0x100); /* overlapping */
  memo_keep(m, names1(7, 0x5000), 4, bad, 2);
  REQUIRE_EQ(memo_count(m), 0);
}
END_TEST

START_TEST(test_an_unsorted_move_forgets_every_memo) {
  memo *m = &M;
  keep(m, 7, 0x5000, 0x10000, 2);
  gas_range far[2] = {{0x900000, 0x10}, {0x800000, 0x10}}; /* overlaps nothing, not sorted */
  uint64_t other[3] = {1, 0, 99};
  memo_forget_moved(m, other, 3, far, 2);
  REQUIRE_EQ(memo_count(m), 0);
}
END_TEST

START_TEST(test_off_keeps_nothing) {
  memo *m = &M;
  memo_destroy(m);
  memo_init(m, false);
  keep(m, 7, 0x5000, 0x10000, 2);
  REQUIRE_EQ(memo_count(m), 0);
  REQUIRE(!take(m, 7, 0x5000, 0x10000, NULL));
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("memo");
  TCase *tc = tcase_create("core");
  tcase_add_checked_fixture(tc, memo_setup, memo_teardown);
  tcase_add_test(tc, test_a_received_move_is_sent_on_once_with_its_ranges);
  tcase_add_test(tc, test_only_the_same_names_in_the_same_order_match);
  tcase_add_test(tc, test_any_change_by_the_worker_forgets_everything);
  tcase_add_test(tc, test_a_move_that_overlaps_a_memo_forgets_it);
  tcase_add_test(tc, test_a_move_that_names_a_memo_region_forgets_it_even_without_ranges);
  tcase_add_test(tc, test_a_region_received_again_replaces_its_old_memo);
  tcase_add_test(tc, test_the_oldest_memo_goes_when_every_slot_is_taken);
  tcase_add_test(tc, test_an_unsorted_list_is_kept_sorted_and_a_bad_one_not_at_all);
  tcase_add_test(tc, test_an_unsorted_move_forgets_every_memo);
  tcase_add_test(tc, test_off_keeps_nothing);
  suite_add_tcase(s, tc);
  return s;
}

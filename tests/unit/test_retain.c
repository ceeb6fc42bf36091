/* test_retain.c: the budget of freed GAS memory a worker keeps mapped (src/worker/retain.c). */
#include <check.h>
#include <stdint.h>

#include "check_main.h"
#include "worker/retain.h"

#define MIB ((size_t)1 << 20)

START_TEST(test_regions_are_kept_while_they_fit_the_budget) {
  retain r;
  retain_init(&r, 100 * MIB);
  REQUIRE(retain_keep(&r, 60 * MIB));
  REQUIRE(retain_keep(&r, 40 * MIB)); /* exactly full */
  REQUIRE_EQ(r.held, 100 * MIB);
  REQUIRE(!retain_keep(&r, 1)); /* given back: held stays */
  REQUIRE_EQ(r.held, 100 * MIB);
}
END_TEST

START_TEST(test_a_region_larger_than_the_room_left_goes_back_whole) {
  retain r;
  retain_init(&r, 100 * MIB);
  REQUIRE(retain_keep(&r, 70 * MIB));
  REQUIRE(!retain_keep(&r, 31 * MIB));
  REQUIRE(retain_keep(&r, 30 * MIB)); /* a smaller one still fits */
  REQUIRE(!retain_keep(&r, SIZE_MAX)); /* no overflow */
}
END_TEST

START_TEST(test_leases_make_room_again_and_never_go_below_zero) {
  retain r;
  retain_init(&r, 100 * MIB);
  REQUIRE(retain_keep(&r, 100 * MIB));
  retain_reused(&r, 30 * MIB);
  REQUIRE_EQ(r.held, 70 * MIB);
  REQUIRE(retain_keep(&r, 30 * MIB));
  retain_reused(&r, 1000 * MIB);
  REQUIRE_EQ(r.held, 0);
  retain_reused(&r, 1);
  REQUIRE_EQ(r.held, 0);
}
END_TEST

START_TEST(test_budget_zero_gives_every_region_back) {
  retain r;
  retain_init(&r, 0);
  REQUIRE(!retain_keep(&r, MIB));
  REQUIRE(!retain_keep(&r, 1));
  REQUIRE(retain_keep(&r, 0)); /* nothing to give back */
  REQUIRE_EQ(r.held, 0);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("retain");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_regions_are_kept_while_they_fit_the_budget);
  tcase_add_test(tc, test_a_region_larger_than_the_room_left_goes_back_whole);
  tcase_add_test(tc, test_leases_make_room_again_and_never_go_below_zero);
  tcase_add_test(tc, test_budget_zero_gives_every_region_back);
  suite_add_tcase(s, tc);
  return s;
}

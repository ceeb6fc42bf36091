/* check_main.h: the one main() every Check test binary shares.
 * A test file defines `static Suite *make_suite(void)` and then includes this header. */
#ifndef AH_CHECK_MAIN_H
#define AH_CHECK_MAIN_H
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

static Suite *make_suite(void);

/* Check records every passing ck_assert in a file; in loops of 1e5 operations that costs more
 * than the code under test. These report through Check only when they fail. */
#define REQUIRE(cond)                                                   \
  do {                                                                  \
    if (!(cond)) ck_abort_msg("requirement failed: %s", #cond);         \
  } while (0)
#define REQUIRE_EQ(a, b)                                                             \
  do {                                                                               \
    uintmax_t a_ = (uintmax_t)(a), b_ = (uintmax_t)(b);                              \
    if (a_ != b_) ck_abort_msg("%s == %s failed: %ju != %ju", #a, #b, a_, b_);       \
  } while (0)

int main(void) {
  SRunner *sr = srunner_create(make_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
#endif

/* check_main.h: the one main() every Check test binary shares.
 * A test file defines `static Suite *make_suite(void)` and then includes this header. */
#ifndef AH_CHECK_MAIN_H
#define AH_CHECK_MAIN_H
#include <check.h>
#include <stdlib.h>

static Suite *make_suite(void);

int main(void) {
  SRunner *sr = srunner_create(make_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
#endif

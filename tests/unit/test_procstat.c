/* test_procstat.c: reading VmHWM / VmRSS out of /proc/<pid>/status text (src/common/procstat.c). */
#include <check.h>
#include <stdint.h>

#include "check_main.h"
#include "common/procstat.h"

static const char *const status =
    "Name:\tscale\n"
    "VmPeak:\t  123456 kB\n"
    "VmHWM:\t    8120 kB\n"
    "VmRSS:\t    7000 kB\n"
    "Threads:\t3\n";

START_TEST(test_a_field_is_read_in_kib) {
  uint64_t kib = 0;
  REQUIRE(procstat_parse_kib(status, "VmHWM", &kib) == 0);
  REQUIRE_EQ(kib, 8120);
  REQUIRE(procstat_parse_kib(status, "VmRSS", &kib) == 0);
  REQUIRE_EQ(kib, 7000);
}
END_TEST

START_TEST(test_a_field_must_match_whole_up_to_its_colon) {
  uint64_t kib = 42;
  REQUIRE(procstat_parse_kib(status, "VmH", &kib) == -1); /* a prefix of VmHWM is not it */
  REQUIRE(procstat_parse_kib(status, "Vm", &kib) == -1);
  REQUIRE_EQ(kib, 42); /* untouched on failure */
}
END_TEST

START_TEST(test_missing_or_bad_fields_are_errors) {
  uint64_t kib = 0;
  REQUIRE(procstat_parse_kib(status, "VmSwap", &kib) == -1);
  REQUIRE(procstat_parse_kib("VmHWM:\tlots kB\n", "VmHWM", &kib) == -1);
  REQUIRE(procstat_parse_kib("", "VmHWM", &kib) == -1);
  REQUIRE(procstat_parse_kib("VmHWM: 5 kB", "VmHWM", &kib) == 0); /* no final newline */
  REQUIRE_EQ(kib, 5);
}
END_TEST

START_TEST(test_this_process_has_a_peak_at_least_its_current_size) {
  uint64_t now = procstat_rss_kib(), peak = procstat_peak_rss_kib(); /* now first: it may grow */
  REQUIRE(now > 0);
  REQUIRE(peak >= now);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("procstat");
  TCase *tc = tcase_create("procstat");
  tcase_add_test(tc, test_a_field_is_read_in_kib);
  tcase_add_test(tc, test_a_field_must_match_whole_up_to_its_colon);
  tcase_add_test(tc, test_missing_or_bad_fields_are_errors);
  tcase_add_test(tc, test_this_process_has_a_peak_at_least_its_current_size);
  suite_add_tcase(s, tc);
  return s;
}

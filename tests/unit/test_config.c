/* test_config.c: the ANTHEAP_* settings every rank reads (src/common/config.c): defaults, values
 * taken, and a bad value refused with its name and range, changing nothing. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "common/config.h"
#include "common/types.h"

static const char *const vars[] = {"ANTHEAP_GAS_BASE",      "ANTHEAP_GAS_SIZE_MIB",
                                   "ANTHEAP_SHARE_OBJECTS", "ANTHEAP_SPLIT_HOSTS",
                                   "ANTHEAP_LOW_WATERMARK", "ANTHEAP_HIGH_WATERMARK"};

static void clear_env(void) {
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) unsetenv(vars[i]);
}

START_TEST(test_the_defaults) {
  clear_env();
  ah_config c;
  char err[256] = "";
  REQUIRE_EQ(ah_config_from_env(&c, err, sizeof err), 0);
  REQUIRE_EQ(c.gas_base, (uintptr_t)AH_GAS_BUILD_BASE);
  REQUIRE_EQ(c.gas_size, (size_t)AH_GAS_DEFAULT_SIZE);
  REQUIRE_EQ(c.share_objects, 64);
  REQUIRE_EQ(c.split_hosts, 1);
}
END_TEST

START_TEST(test_values_are_taken) {
  clear_env();
  setenv("ANTHEAP_SPLIT_HOSTS", "3", 1);
  setenv("ANTHEAP_SHARE_OBJECTS", "0x10", 1);
  setenv("ANTHEAP_GAS_SIZE_MIB", "256", 1);
  ah_config c;
  char err[256] = "";
  REQUIRE_EQ(ah_config_from_env(&c, err, sizeof err), 0);
  REQUIRE_EQ(c.split_hosts, 3);
  REQUIRE_EQ(c.share_objects, 16);
  REQUIRE_EQ(c.gas_size, (size_t)256 << 20);
  clear_env();
}
END_TEST

/* Out of range, not a number, trailing text: EINVAL, the variable and its range named, *c as
 * it was. */
START_TEST(test_a_bad_value_is_refused_by_name_and_changes_nothing) {
  static const char *const bad[][2] = {
      {"ANTHEAP_SPLIT_HOSTS", "0"},       {"ANTHEAP_SPLIT_HOSTS", "4097"},
      {"ANTHEAP_SPLIT_HOSTS", "two"},     {"ANTHEAP_SPLIT_HOSTS", "2x"},
      {"ANTHEAP_SHARE_OBJECTS", "65"},    {"ANTHEAP_GAS_SIZE_MIB", "8"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    clear_env();
    setenv(bad[i][0], bad[i][1], 1);
    ah_config c, before;
    memset(&c, 0x5a, sizeof c);
    before = c;
    char err[256] = "";
    REQUIRE_EQ(ah_config_from_env(&c, err, sizeof err), EINVAL);
    ck_assert_msg(strstr(err, bad[i][0]) && strstr(err, "expected a number in ["),
                  "%s=%s: message '%s'", bad[i][0], bad[i][1], err);
    ck_assert_msg(memcmp(&c, &before, sizeof c) == 0, "%s=%s changed the config", bad[i][0],
                  bad[i][1]);
  }
  clear_env();
}
END_TEST

/* Settings fine alone but wrong together (the watermarks crossed, a GAS past 2^47): EINVAL,
 * both named, *c as it was. */
START_TEST(test_settings_wrong_together_are_refused_and_change_nothing) {
  static const char *const bad[][2][2] = {
      {{"ANTHEAP_LOW_WATERMARK", "9"}, {"ANTHEAP_HIGH_WATERMARK", "8"}},
      {{"ANTHEAP_GAS_BASE", "0x7fff00000000"}, {"ANTHEAP_GAS_SIZE_MIB", "65536"}}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    clear_env();
    setenv(bad[i][0][0], bad[i][0][1], 1);
    setenv(bad[i][1][0], bad[i][1][1], 1);
    ah_config c, before;
    memset(&c, 0x5a, sizeof c);
    before = c;
    char err[256] = "";
    REQUIRE_EQ(ah_config_from_env(&c, err, sizeof err), EINVAL);
    ck_assert_msg(strstr(err, bad[i][0][0]) && strstr(err, bad[i][1][0]), "case %zu: message '%s'",
                  i, err);
    ck_assert_msg(memcmp(&c, &before, sizeof c) == 0, "case %zu changed the config", i);
  }
  clear_env();
}
END_TEST

START_TEST(test_the_help_names_every_variable) {
  const char *h = ah_config_help();
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
    ck_assert_msg(strstr(h, vars[i]), "--help lacks %s", vars[i]);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("config");
  TCase *tc = tcase_create("config");
  tcase_add_test(tc, test_the_defaults);
  tcase_add_test(tc, test_values_are_taken);
  tcase_add_test(tc, test_a_bad_value_is_refused_by_name_and_changes_nothing);
  tcase_add_test(tc, test_settings_wrong_together_are_refused_and_change_nothing);
  tcase_add_test(tc, test_the_help_names_every_variable);
  suite_add_tcase(s, tc);
  return s;
}

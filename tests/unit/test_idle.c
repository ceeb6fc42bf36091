/* test_idle.c: the back-off of ranks that wait on shared cores (src/common/idle.c). */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "check_main.h"
#include "common/idle.h"

START_TEST(test_the_first_polls_do_not_sleep) {
  for (unsigned p = 0; p < IDLE_SPIN; p++) REQUIRE_EQ(idle_sleep_ns(p, 0, 10000000, IDLE_SPIN_NS), 0);
  REQUIRE_EQ(idle_sleep_ns(IDLE_SPIN, 0, 10000000, IDLE_SPIN_NS), IDLE_MIN_NS);
}
END_TEST

START_TEST(test_a_light_load_spins_before_its_first_sleep) {
  uint64_t light = 21250, heavier = 40000; /* 17 ranks on 16 cores; 2 ranks a core */
  REQUIRE_EQ(idle_sleep_ns(IDLE_SPIN, 0, light, IDLE_SPIN_NS), 0);
  REQUIRE_EQ(idle_sleep_ns(IDLE_SPIN + 500, IDLE_SPIN_NS - 1, light, IDLE_SPIN_NS), 0);
  REQUIRE_EQ(idle_sleep_ns(IDLE_SPIN + 500, IDLE_SPIN_NS, light, IDLE_SPIN_NS), light); /* 25 us, capped */
  REQUIRE_EQ(idle_sleep_ns(IDLE_SPIN, 0, heavier, IDLE_SPIN_NS), IDLE_MIN_NS);         /* sleeps at once */
}
END_TEST

START_TEST(test_the_light_loads_spin_is_a_setting) {
  uint64_t light = 21250;
  REQUIRE_EQ(idle_sleep_ns(IDLE_SPIN, 0, light, 0), IDLE_MIN_NS); /* no spin: sleeps at once */
  REQUIRE_EQ(idle_sleep_ns(IDLE_SPIN + 9, 49999, light, 50000), 0);
  REQUIRE_EQ(idle_sleep_ns(IDLE_SPIN + 9, 50000, light, 50000), IDLE_MIN_NS);
  setenv("ANTHEAP_IDLE_SPIN_US", "0", 1);
  REQUIRE_EQ(idle_spin_ns(), 0);
  setenv("ANTHEAP_IDLE_SPIN_US", "75", 1);
  REQUIRE_EQ(idle_spin_ns(), 75000);
  setenv("ANTHEAP_IDLE_SPIN_US", "2000000", 1); /* above 1 s: ignored, said */
  REQUIRE_EQ(idle_spin_ns(), IDLE_SPIN_NS);
  setenv("ANTHEAP_IDLE_SPIN_US", "5x", 1); /* not a number: ignored */
  REQUIRE_EQ(idle_spin_ns(), IDLE_SPIN_NS);
  unsetenv("ANTHEAP_IDLE_SPIN_US");
  REQUIRE_EQ(idle_spin_ns(), IDLE_SPIN_NS);
}
END_TEST

/* The light load's spin yields the core between polls; it never sleeps (no sleep is counted)
 * and a wait that spins past its spin time sleeps from then on. */
START_TEST(test_the_spin_does_not_sleep_until_its_time_is_up) {
  idle_setup(NULL, 10000000000ull); /* 10 s of spin: far more than the polls below take */
  idle_wait w;
  idle_start(&w, 21250); /* 17 ranks on 16 cores */
  uint64_t before = idle_counts_now().sleeps;
  for (int i = 0; i < 2 * IDLE_SPIN; i++) idle_pause(&w);
  REQUIRE_EQ(idle_counts_now().sleeps, before);
  w.since_ns -= 20000000000ull; /* as if 20 s had been spent spinning */
  idle_pause(&w);
  REQUIRE_EQ(idle_counts_now().sleeps, before + 1);
  idle_setup(NULL, IDLE_SPIN_NS);
}
END_TEST

START_TEST(test_a_sleep_is_an_eighth_of_the_wait_between_the_bounds) {
  uint64_t cap = 10000000;
  REQUIRE_EQ(idle_sleep_ns(1000, 80000, cap, IDLE_SPIN_NS), IDLE_MIN_NS); /* 10 us: below the minimum */
  REQUIRE_EQ(idle_sleep_ns(1000, 8000000, cap, IDLE_SPIN_NS), 1000000);   /* 8 ms waited: 1 ms */
  REQUIRE_EQ(idle_sleep_ns(1000, 8000000000ull, cap, IDLE_SPIN_NS), cap); /* capped */
}
END_TEST

START_TEST(test_the_stretch_of_a_wait_is_bounded) {
  /* sleeping in the policy's steps, the wait ends at most 1/8 + one minimum sleep late */
  uint64_t cap = 10000000;
  for (uint64_t end = 1000; end < 2000000000ull; end = end * 3 + 7) {
    uint64_t t = 0;
    unsigned polls = IDLE_SPIN;
    while (t < end) t += idle_sleep_ns(polls++, t, cap, IDLE_SPIN_NS);
    REQUIRE(t - end <= end / 8 + IDLE_MIN_NS || t - end <= cap);
  }
}
END_TEST

START_TEST(test_a_cap_below_the_minimum_is_the_minimum) {
  REQUIRE_EQ(idle_sleep_ns(1000, 1000000000ull, 1, IDLE_SPIN_NS), IDLE_MIN_NS);
}
END_TEST

START_TEST(test_own_core_ranks_never_sleep) {
  idle_wait w;
  idle_start(&w, 0);
  for (int i = 0; i < 100000; i++) idle_pause(&w); /* would take seconds if it slept */
  REQUIRE_EQ(w.polls, 0);
}
END_TEST

START_TEST(test_the_cap_comes_from_the_environment) {
  setenv("ANTHEAP_IDLE_MAX_US", "500", 1);
  REQUIRE_EQ(idle_max_ns(), 500000);
  unsetenv("ANTHEAP_IDLE_MAX_US");
  REQUIRE_EQ(idle_max_ns(), IDLE_DEFAULT_MAX_US * 1000);
}
END_TEST

START_TEST(test_the_cap_grows_with_the_ranks_per_core) {
  unsetenv("ANTHEAP_IDLE_MAX_US");
  REQUIRE_EQ(idle_cap_ns(8, 16), IDLE_MIN_NS);              /* fewer ranks than cores */
  REQUIRE_EQ(idle_cap_ns(17, 16), IDLE_MIN_NS * 17 / 16);   /* one scheduler beside 16 workers */
  REQUIRE_EQ(idle_cap_ns(1171, 16), IDLE_MIN_NS * 1171 / 16); /* 73 per core: 1.46 ms */
  REQUIRE_EQ(idle_cap_ns(100000, 16), IDLE_DEFAULT_MAX_US * 1000);
  REQUIRE_EQ(idle_cap_ns(0, 16), IDLE_DEFAULT_MAX_US * 1000); /* unknown: the default */
  REQUIRE_EQ(idle_cap_ns(17, 0), IDLE_DEFAULT_MAX_US * 1000);
}
END_TEST

START_TEST(test_the_environment_overrides_the_load) {
  setenv("ANTHEAP_IDLE_MAX_US", "700", 1);
  REQUIRE_EQ(idle_cap_ns(17, 16), 700000);
  REQUIRE_EQ(idle_cap_ns(1171, 16), 700000);
  unsetenv("ANTHEAP_IDLE_MAX_US");
}
END_TEST

START_TEST(test_a_bad_environment_value_is_ignored) {
  setenv("ANTHEAP_IDLE_MAX_US", "5", 1);
  REQUIRE_EQ(idle_cap_ns(17, 16), IDLE_MIN_NS * 17 / 16);
  REQUIRE_EQ(idle_max_ns(), IDLE_DEFAULT_MAX_US * 1000);
  unsetenv("ANTHEAP_IDLE_MAX_US");
}
END_TEST

#if defined(__linux__)
/* In a thread of its own (the slack is a thread's): the slack before and after waits. */
static void *slack_in_waits(void *arg) {
  long *slack = arg; /* [0]: at the start, [1]: after a wait that only spun, [2]: after a sleep */
  slack[0] = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  idle_setup(NULL, 0);
  idle_wait w;
  idle_start(&w, 21250);
  for (int i = 0; i < IDLE_SPIN - 1; i++) idle_pause(&w); /* the first polls: no sleep yet */
  slack[1] = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  idle_pause(&w); /* the first sleep */
  slack[2] = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  idle_setup(NULL, IDLE_SPIN_NS);
  return NULL;
}

START_TEST(test_a_thread_that_sleeps_in_a_wait_has_a_tight_timer_slack) {
  long slack[3];
  pthread_t t;
  REQUIRE_EQ(pthread_create(&t, NULL, slack_in_waits, slack), 0);
  REQUIRE_EQ(pthread_join(t, NULL), 0);
  REQUIRE_EQ(slack[1], slack[0]); /* polls leave it alone (Linux's default: 50 us) */
  REQUIRE_EQ(slack[2], (long)IDLE_SLACK_NS);
}
END_TEST
#endif

static Suite *make_suite(void) {
  Suite *s = suite_create("idle");
  TCase *tc = tcase_create("idle");
  tcase_add_test(tc, test_the_first_polls_do_not_sleep);
  tcase_add_test(tc, test_a_light_load_spins_before_its_first_sleep);
  tcase_add_test(tc, test_the_light_loads_spin_is_a_setting);
  tcase_add_test(tc, test_the_spin_does_not_sleep_until_its_time_is_up);
#if defined(__linux__)
  tcase_add_test(tc, test_a_thread_that_sleeps_in_a_wait_has_a_tight_timer_slack);
#endif
  tcase_add_test(tc, test_a_sleep_is_an_eighth_of_the_wait_between_the_bounds);
  tcase_add_test(tc, test_the_stretch_of_a_wait_is_bounded);
  tcase_add_test(tc, test_a_cap_below_the_minimum_is_the_minimum);
  tcase_add_test(tc, test_own_core_ranks_never_sleep);
  tcase_add_test(tc, test_the_cap_comes_from_the_environment);
  tcase_add_test(tc, test_the_cap_grows_with_the_ranks_per_core);
  tcase_add_test(tc, test_the_environment_overrides_the_load);
  tcase_add_test(tc, test_a_bad_environment_value_is_ignored);
  suite_add_tcase(s, tc);
  return s;
}

/* test_bell.c: the doorbells (src/common/bell.c) and the waits that sleep on them
 * (src/common/idle.c): a ring before the sleep is never slept through, a ring wakes a sleeper
 * of another thread and of another process (a futex on shared memory), a ring with nobody
 * asleep makes no system call. The sleepers here sleep with time-outs of 30 s, and the checks
 * that they woke in 15 s are liveness checks (a lost wake-up), not timings. */
#include <check.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_main.h"
#include "common/bell.h"
#include "common/clock.h"
#include "common/idle.h"

#define LONG_NS 30000000000ull /* a sleep's time-out that only a lost wake-up would reach */
#define WOKE_WITHIN_NS 15000000000ull

START_TEST(test_a_ring_before_the_sleep_ends_it_at_once) {
  bell b = {.wakeable = 1};
  uint32_t seen = bell_seen(&b);
  bell_ring(&b); /* a message sent after the look for messages, before the sleep */
  uint64_t t0 = ah_now_ns();
  REQUIRE_EQ(bell_sleep(&b, seen, LONG_NS), BELL_RUNG);
  REQUIRE(ah_now_ns() - t0 < WOKE_WITHIN_NS);
  REQUIRE_EQ(atomic_load(&b.sleepers), 0);
}
END_TEST

START_TEST(test_a_sleep_nobody_rings_times_out) {
  bell b = {.wakeable = 1};
  REQUIRE_EQ(bell_sleep(&b, bell_seen(&b), 1000000), BELL_TIMEOUT);
  REQUIRE_EQ(atomic_load(&b.sleepers), 0);
}
END_TEST

START_TEST(test_a_ring_with_nobody_asleep_makes_no_system_call) {
  bell b = {.wakeable = 1};
  uint64_t calls = bell_wake_calls();
  for (int i = 0; i < 100; i++) bell_ring(&b);
  REQUIRE_EQ(bell_wake_calls(), calls);
  REQUIRE_EQ(bell_seen(&b), 100);
}
END_TEST

typedef struct {
  bell *b;
  uint32_t seen;
  enum bell_wake woke;
  uint64_t ns;
} sleeper;

static void *sleep_on(void *arg) {
  sleeper *s = arg;
  uint64_t t0 = ah_now_ns();
  s->woke = bell_sleep(s->b, s->seen, LONG_NS);
  s->ns = ah_now_ns() - t0;
  return NULL;
}

/* Ring b once `sleepers` threads sleep on it (or are about to: they counted themselves). */
static void ring_when_asleep(bell *b, uint32_t sleepers) {
  while (atomic_load(&b->sleepers) < sleepers) usleep(100);
  usleep(2000); /* most likely inside the futex by now; either way the ring must reach them */
  bell_ring(b);
}

START_TEST(test_a_bell_its_owner_never_sleeps_on_is_not_rung) {
  bell b = {.wakeable = 0};
  uint32_t seen = bell_seen(&b);
  bell_ring(&b);
  REQUIRE_EQ(bell_seen(&b), seen); /* a read, no write to the owner's line */
}
END_TEST

START_TEST(test_a_ring_wakes_every_sleeping_thread) {
  bell b = {.wakeable = 1};
  sleeper s[3];
  pthread_t th[3];
  for (int i = 0; i < 3; i++) {
    s[i] = (sleeper){.b = &b, .seen = bell_seen(&b)};
    REQUIRE_EQ(pthread_create(&th[i], NULL, sleep_on, &s[i]), 0);
  }
  uint64_t calls = bell_wake_calls();
  ring_when_asleep(&b, 3);
  for (int i = 0; i < 3; i++) {
    pthread_join(th[i], NULL);
    REQUIRE_EQ(s[i].woke, BELL_RUNG);
    REQUIRE(s[i].ns < WOKE_WITHIN_NS);
  }
  REQUIRE_EQ(bell_wake_calls(), calls + 1);
  REQUIRE_EQ(atomic_load(&b.sleepers), 0);
}
END_TEST

START_TEST(test_a_ring_wakes_a_sleeper_of_another_process) {
  bell *b = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(b != MAP_FAILED);
  b->wakeable = 1;
  uint32_t seen = bell_seen(b);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) { /* exit 0: woken by the ring, in time */
    uint64_t t0 = ah_now_ns();
    enum bell_wake w = bell_sleep(b, seen, LONG_NS);
    _exit(w == BELL_RUNG && ah_now_ns() - t0 < WOKE_WITHIN_NS ? 0 : 1);
  }
  ring_when_asleep(b, 1);
  int status = 0;
  REQUIRE_EQ(waitpid(child, &status, 0), child);
  REQUIRE(WIFEXITED(status));
  REQUIRE_EQ(WEXITSTATUS(status), 0);
  munmap(b, sizeof *b);
}
END_TEST

START_TEST(test_a_wait_sleeps_on_the_process_bell_and_counts_the_rings) {
  bell b = {.wakeable = 1};
  idle_setup(&b, IDLE_SPIN_NS);
  idle_wait w;
  idle_start(&w, LONG_NS);               /* no light load: no spin */
  w.since_ns = ah_now_ns() - 8 * LONG_NS; /* so its sleep would be 30 s, if the ring were lost */
  bell_ring(&b);                          /* a message came after the wait's look */
  idle_counts before = idle_counts_now();
  uint64_t t0 = ah_now_ns();
  for (unsigned i = 0; i < IDLE_SPIN; i++) idle_pause(&w); /* the last one sleeps */
  idle_counts after = idle_counts_now();
  REQUIRE(ah_now_ns() - t0 < WOKE_WITHIN_NS);
  REQUIRE_EQ(after.sleeps, before.sleeps + 1);
  REQUIRE_EQ(after.rung, before.rung + 1);
  REQUIRE_EQ(w.seen, bell_seen(&b)); /* read again for the next sleep */
  REQUIRE_EQ(w.polls, IDLE_SPIN - IDLE_LOOKS_AFTER_SLEEP); /* two looks before the next */
  REQUIRE_EQ(w.since_ns, 0); /* and the back-off starts again from its shortest sleep */
  idle_setup(NULL, IDLE_SPIN_NS);
}
END_TEST

/* Open MPI's MPI_Iprobe takes in a message that arrived during a sleep only on its first call
 * after it, and finds it on the second: so a wait looks twice after every sleep. */
static void two_looks_after_a_sleep(bell *b) {
  idle_setup(b, IDLE_SPIN_NS);
  idle_wait w;
  idle_start(&w, 10000000000ull);
  w.since_ns = ah_now_ns() - 8000000; /* waited 8 ms: sleeps of 1 ms */
  for (unsigned i = 0; i < IDLE_SPIN - 1; i++) idle_pause(&w);
  idle_counts c0 = idle_counts_now();
  idle_pause(&w); /* the first sleep, nobody rings */
  idle_counts c1 = idle_counts_now();
  REQUIRE_EQ(c1.sleeps, c0.sleeps + 1);
  REQUIRE_EQ(c1.rung, c0.rung);
  idle_pause(&w); /* after the first look: no sleep */
  REQUIRE_EQ(idle_counts_now().sleeps, c1.sleeps);
  idle_pause(&w); /* after the second: the next sleep */
  REQUIRE_EQ(idle_counts_now().sleeps, c1.sleeps + 1);
  idle_setup(NULL, IDLE_SPIN_NS);
}

START_TEST(test_a_wait_looks_twice_after_a_sleep_on_a_bell) {
  bell b = {.wakeable = 1};
  two_looks_after_a_sleep(&b);
}
END_TEST

START_TEST(test_a_wait_looks_twice_after_a_plain_sleep) { two_looks_after_a_sleep(NULL); }
END_TEST

START_TEST(test_a_wait_on_a_core_of_its_own_never_touches_the_bell) {
  bell b = {.wakeable = 1};
  idle_setup(&b, IDLE_SPIN_NS);
  idle_wait w;
  idle_start(&w, 0);
  REQUIRE(w.bell == NULL);
  idle_counts before = idle_counts_now();
  for (int i = 0; i < 100000; i++) idle_pause(&w);
  REQUIRE_EQ(idle_counts_now().sleeps, before.sleeps);
  idle_setup(NULL, IDLE_SPIN_NS);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("bell");
  TCase *tc = tcase_create("bell");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_a_ring_before_the_sleep_ends_it_at_once);
  tcase_add_test(tc, test_a_sleep_nobody_rings_times_out);
  tcase_add_test(tc, test_a_ring_with_nobody_asleep_makes_no_system_call);
  tcase_add_test(tc, test_a_bell_its_owner_never_sleeps_on_is_not_rung);
  tcase_add_test(tc, test_a_ring_wakes_every_sleeping_thread);
  tcase_add_test(tc, test_a_ring_wakes_a_sleeper_of_another_process);
  tcase_add_test(tc, test_a_wait_sleeps_on_the_process_bell_and_counts_the_rings);
  tcase_add_test(tc, test_a_wait_looks_twice_after_a_sleep_on_a_bell);
  tcase_add_test(tc, test_a_wait_looks_twice_after_a_plain_sleep);
  tcase_add_test(tc, test_a_wait_on_a_core_of_its_own_never_touches_the_bell);
  suite_add_tcase(s, tc);
  return s;
}

/* idle.c: waiting without spinning on shared cores (idle.h). */
#include "common/idle.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "common/clock.h"

static bell *process_bell;
static uint64_t light_spin_ns = IDLE_SPIN_NS;
static _Atomic uint64_t sleeps, rung;

void idle_setup(bell *b, uint64_t spin_ns) {
  process_bell = b;
  light_spin_ns = spin_ns;
}

idle_counts idle_counts_now(void) {
  return (idle_counts){atomic_load_explicit(&sleeps, memory_order_relaxed),
                       atomic_load_explicit(&rung, memory_order_relaxed)};
}

void idle_counts_text(char *out, size_t len) {
  idle_counts c = idle_counts_now();
  snprintf(out, len, "sleeps %llu (%llu ended by a ring); rings that woke a sleeper %llu",
           (unsigned long long)c.sleeps, (unsigned long long)c.rung,
           (unsigned long long)bell_wake_calls());
}

uint64_t idle_sleep_ns(unsigned polls, uint64_t waited_ns, uint64_t max_ns, uint64_t spin_ns) {
  if (polls < IDLE_SPIN) return 0;
  if (max_ns <= IDLE_SPIN_CAP_NS && waited_ns < spin_ns) return 0; /* a light load: spin */
  uint64_t t = waited_ns / 8;
  if (t < IDLE_MIN_NS) t = IDLE_MIN_NS;
  if (t > max_ns) t = max_ns > IDLE_MIN_NS ? max_ns : IDLE_MIN_NS;
  return t;
}

/* Microseconds from the environment variable name, in [lo, hi], in ns; `none` when it is not
 * set or not valid (said). Read when a job sets up, not in the waits. */
static uint64_t env_us(const char *name, unsigned long long lo, unsigned long long hi,
                       uint64_t none) {
  const char *v = getenv(name);
  if (!v || !*v) return none;
  char *end;
  errno = 0;
  unsigned long long x = strtoull(v, &end, 10);
  if (!errno && !*end && x >= lo && x <= hi) return x * 1000;
  fprintf(stderr, "antheap: %s=%s: expected %llu to %llu; ignored\n", name, v, lo, hi);
  return none;
}

/* ANTHEAP_IDLE_MAX_US in ns; 0 when it is not set (or not valid). */
static uint64_t env_cap_ns(void) { return env_us("ANTHEAP_IDLE_MAX_US", 20, 1000000, 0); }

uint64_t idle_spin_ns(void) { return env_us("ANTHEAP_IDLE_SPIN_US", 0, 1000000, IDLE_SPIN_NS); }

uint64_t idle_max_ns(void) {
  uint64_t env = env_cap_ns();
  return env ? env : IDLE_DEFAULT_MAX_US * 1000;
}

uint64_t idle_cap_ns(int local_ranks, int host_cores) {
  uint64_t env = env_cap_ns(), most = IDLE_DEFAULT_MAX_US * 1000;
  if (env) return env;
  if (local_ranks <= 0 || host_cores <= 0) return most;
  uint64_t cap = IDLE_MIN_NS * (uint64_t)local_ranks / (uint64_t)host_cores;
  return cap < IDLE_MIN_NS ? IDLE_MIN_NS : cap > most ? most : cap;
}

void idle_start(idle_wait *w, uint64_t cap_ns) {
  w->polls = 0;
  w->since_ns = 0;
  w->max_ns = cap_ns;
  w->spin_ns = light_spin_ns;
  w->bell = cap_ns ? process_bell : NULL;
  if (w->bell) w->seen = bell_seen(w->bell);
}

/* Before a thread's first sleep in a wait: its timer slack to IDLE_SLACK_NS (idle.h), once. */
static void tighten_timer_slack(void) {
#if defined(__linux__)
  static _Thread_local bool done;
  if (done) return;
  done = true;
  (void)prctl(PR_SET_TIMERSLACK, (unsigned long)IDLE_SLACK_NS, 0UL, 0UL, 0UL);
#endif
}

void idle_pause(idle_wait *w) {
  if (!w->max_ns) return; /* a core of its own */
  if (++w->polls < IDLE_SPIN) return;
  uint64_t t = ah_now_ns();
  if (!w->since_ns) w->since_ns = t;
  uint64_t ns = idle_sleep_ns(w->polls, t - w->since_ns, w->max_ns, w->spin_ns);
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  if (!ns) { /* a light load's spin: the core goes to any thread that waits for it */
    sched_yield();
    return;
  }
  atomic_fetch_add_explicit(&sleeps, 1, memory_order_relaxed);
  tighten_timer_slack();
  w->polls = IDLE_SPIN - IDLE_LOOKS_AFTER_SLEEP;
  if (!w->bell) {
    nanosleep(&ts, NULL);
    return;
  }
  if (bell_sleep(w->bell, w->seen, ns) == BELL_RUNG) {
    atomic_fetch_add_explicit(&rung, 1, memory_order_relaxed);
    w->since_ns = 0; /* the host talks to this rank: short sleeps again, in case the message
                        is not there for the two looks (another thread's progress took it in,
                        or its sender still holds it) */
  }
  w->seen = bell_seen(w->bell); /* before the next look */
}

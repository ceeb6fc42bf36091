/* idle.c: waiting without spinning on shared cores (idle.h). */
#include "common/idle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/clock.h"

uint64_t idle_sleep_ns(unsigned polls, uint64_t waited_ns, uint64_t max_ns) {
  if (polls < IDLE_SPIN) return 0;
  if (max_ns <= IDLE_SPIN_CAP_NS && waited_ns < IDLE_SPIN_NS) return 0; /* a light load: spin */
  uint64_t t = waited_ns / 8;
  if (t < IDLE_MIN_NS) t = IDLE_MIN_NS;
  if (t > max_ns) t = max_ns > IDLE_MIN_NS ? max_ns : IDLE_MIN_NS;
  return t;
}

/* ANTHEAP_IDLE_MAX_US in ns; 0 when it is not set (or not valid). Read when a job sets up,
 * not in the waits. */
static uint64_t env_cap_ns(void) {
  uint64_t cached = 0;
  const char *v = getenv("ANTHEAP_IDLE_MAX_US");
  if (v && *v) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || x < 20 || x > 1000000)
      fprintf(stderr, "antheap: ANTHEAP_IDLE_MAX_US=%s: expected 20 to 1000000; ignored\n", v);
    else
      cached = x * 1000;
  }
  return cached;
}

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
}

void idle_pause(idle_wait *w) {
  if (!w->max_ns) return; /* a core of its own */
  if (++w->polls < IDLE_SPIN) return;
  uint64_t t = ah_now_ns();
  if (!w->since_ns) w->since_ns = t;
  uint64_t ns = idle_sleep_ns(w->polls, t - w->since_ns, w->max_ns);
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  nanosleep(&ts, NULL);
}

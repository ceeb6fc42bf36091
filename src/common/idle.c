/* idle.c: waiting without spinning on shared cores (idle.h). */
#include "common/idle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t idle_sleep_ns(unsigned polls, uint64_t waited_ns, uint64_t max_ns) {
  if (polls < IDLE_SPIN) return 0;
  uint64_t t = waited_ns / 8;
  if (t < IDLE_MIN_NS) t = IDLE_MIN_NS;
  if (t > max_ns) t = max_ns > IDLE_MIN_NS ? max_ns : IDLE_MIN_NS;
  return t;
}

uint64_t idle_max_ns(void) {
  static uint64_t cached;
  if (cached) return cached;
  uint64_t us = IDLE_DEFAULT_MAX_US;
  const char *v = getenv("ANTHEAP_IDLE_MAX_US");
  if (v && *v) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || *end || x < 20 || x > 1000000)
      fprintf(stderr, "antheap: ANTHEAP_IDLE_MAX_US=%s: expected 20 to 1000000; using %llu\n", v,
              (unsigned long long)us);
    else
      us = x;
  }
  cached = us * 1000;
  return cached;
}

void idle_start(idle_wait *w, bool own_core) {
  w->own_core = own_core;
  w->polls = 0;
  w->since_ns = 0;
  w->max_ns = own_core ? 0 : idle_max_ns();
}

void idle_pause(idle_wait *w) {
  if (w->own_core) return;
  if (++w->polls < IDLE_SPIN) return;
  uint64_t t = now_ns();
  if (!w->since_ns) w->since_ns = t;
  uint64_t ns = idle_sleep_ns(w->polls, t - w->since_ns, w->max_ns);
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  nanosleep(&ts, NULL);
}

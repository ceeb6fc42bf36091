/* clock.h: the monotonic clock in nanoseconds, for the waits' back-off (idle.c), the wait
 * warnings (watch.c) and the profiles (src/worker/profile.c, src/job/daemon.c). */
#ifndef AH_CLOCK_H
#define AH_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t ah_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif

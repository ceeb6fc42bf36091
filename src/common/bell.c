/* bell.c: ringing and sleeping on a doorbell (bell.h), with Linux futexes on memory that
 * several processes map (so not FUTEX_PRIVATE_FLAG). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* syscall */
#endif
#include "common/bell.h"

#include <limits.h>
#include <time.h>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

static _Atomic uint64_t wake_calls;

uint64_t bell_wake_calls(void) { return atomic_load_explicit(&wake_calls, memory_order_relaxed); }

/* The ring and the sleep each write their word, then read the other's (a store-load fence
 * between): either the ringer sees a sleeper, or the sleeper's futex sees the new count. */
void bell_ring(bell *b) {
  if (!b->wakeable) return;
  atomic_fetch_add_explicit(&b->rung, 1, memory_order_seq_cst);
  if (!atomic_load_explicit(&b->sleepers, memory_order_seq_cst)) return;
#if defined(__linux__)
  if (syscall(SYS_futex, (uint32_t *)&b->rung, FUTEX_WAKE, INT_MAX, NULL, NULL, 0) > 0)
    atomic_fetch_add_explicit(&wake_calls, 1, memory_order_relaxed);
#endif
}

enum bell_wake bell_sleep(bell *b, uint32_t seen, uint64_t ns) {
  struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
#if defined(__linux__)
  atomic_fetch_add_explicit(&b->sleepers, 1, memory_order_seq_cst);
  if (atomic_load_explicit(&b->rung, memory_order_seq_cst) == seen)
    syscall(SYS_futex, (uint32_t *)&b->rung, FUTEX_WAIT, seen, &ts, NULL, 0);
  atomic_fetch_sub_explicit(&b->sleepers, 1, memory_order_relaxed);
#else
  if (atomic_load_explicit(&b->rung, memory_order_acquire) == seen) nanosleep(&ts, NULL);
#endif
  return atomic_load_explicit(&b->rung, memory_order_acquire) != seen ? BELL_RUNG : BELL_TIMEOUT;
}

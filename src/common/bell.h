/* bell.h: a doorbell, one a rank, in memory its host's ranks share (src/job/bells.c makes
 * them). A rank that waits for a message and has nothing to do sleeps on its bell (idle.c,
 * with the back-off's sleep as a time-out); a rank of the same host that sends it a message
 * rings the bell after the send.
 *
 * Why: on a host whose cores are all busy, a rank that naps wakes on a timer and then waits
 * for a core (a time slice of a busy thread), and a requester that spins on its answer keeps
 * the one core that its scheduler could have used. Sleeping on a bell gives the core away at
 * once, and the ring wakes the sleeper as the kernel wakes a blocked thread, at the head of
 * the queue. (docs/DESIGN.md, "Waiting": the measurements.)
 *
 * The bell is a counter: a ring adds one, and a sleeper sleeps only while the counter still
 * holds what it read *before* it last looked for messages, so a message sent between that
 * look and the sleep is never slept through. Sleepers are counted, so a ring costs a system
 * call only when someone sleeps. Linux futexes; elsewhere a bell never wakes anyone early and
 * bell_sleep is a plain sleep. */
#ifndef AH_BELL_H
#define AH_BELL_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct bell {
  _Atomic uint32_t rung;     /* rings so far (wraps) */
  _Atomic uint32_t sleepers; /* threads of the owner asleep on it */
  uint32_t wakeable;         /* the owner may sleep on it (set once, before any ring): else a
                                ring is a read (a rank on a core of its own polls, never sleeps) */
  char pad_[64 - 3 * sizeof(uint32_t)];
} bell;
_Static_assert(sizeof(bell) == 64, "a bell is a cache line of its own");
_Static_assert(sizeof(_Atomic uint32_t) == 4, "a futex word is 4 bytes");

/* What ended a bell_sleep. */
enum bell_wake { BELL_TIMEOUT = 0, BELL_RUNG = 1 };

/* The counter now: read it before looking for messages, and sleep with what it said. */
static inline uint32_t bell_seen(bell *b) {
  return atomic_load_explicit(&b->rung, memory_order_acquire);
}

/* Ring b (after the message was sent). Wakes every thread asleep on it; nothing when b is not
 * wakeable. */
void bell_ring(bell *b);

/* Sleep on b for at most ns nanoseconds unless it has been rung since it said `seen`:
 * BELL_RUNG (at once when it already had been), or BELL_TIMEOUT. A signal ends the sleep
 * early (as BELL_TIMEOUT): callers look for messages again either way. */
enum bell_wake bell_sleep(bell *b, uint32_t seen, uint64_t ns);

/* How many of this process's rings woke a sleeper, for ANTHEAP_PROFILE. */
uint64_t bell_wake_calls(void);

#endif

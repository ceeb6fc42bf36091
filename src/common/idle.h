/* idle.h: how a rank waits for a message without taking the core from the ranks that work.
 *
 * A scheduler between requests, a worker waiting for a reply, a move or a barrier: each polls
 * MPI and, between empty polls, calls idle_pause. A rank bound to a core of its own spins
 * (lowest latency). A rank that shares cores (an oversubscribed job: 16 cores hosting 1,000
 * ranks) spins a few polls, then sleeps, each sleep an eighth of the time it has waited so
 * far, from 20 us up to a cap (ANTHEAP_IDLE_MAX_US, default 10,000): a wait is stretched by
 * at most about 1/8 (plus one minimum sleep), while a rank that waits long wakes up rarely,
 * so that a thousand idle ranks cost the busy ones little. */
#ifndef AH_IDLE_H
#define AH_IDLE_H

#include <stdbool.h>
#include <stdint.h>

#define IDLE_SPIN 64                 /* empty polls before the first sleep */
#define IDLE_MIN_NS 20000ull         /* the first sleep */
#define IDLE_DEFAULT_MAX_US 10000ull /* the longest sleep, unless ANTHEAP_IDLE_MAX_US says */

typedef struct idle_wait {
  bool own_core;     /* spin, never sleep */
  unsigned polls;    /* empty polls so far */
  uint64_t since_ns; /* when the first sleep came (monotonic) */
  uint64_t max_ns;   /* the cap */
} idle_wait;

/* Start a wait (and again after each message handled). */
void idle_start(idle_wait *w, bool own_core);
/* After an empty poll: nothing, or a sleep as above. */
void idle_pause(idle_wait *w);
/* The policy alone: the sleep after `polls` empty polls, `waited_ns` into the sleeping phase,
 * with the cap max_ns; 0 means poll again at once. */
uint64_t idle_sleep_ns(unsigned polls, uint64_t waited_ns, uint64_t max_ns);
/* The cap from ANTHEAP_IDLE_MAX_US (read once; a bad value is the default, with a message). */
uint64_t idle_max_ns(void);

#endif

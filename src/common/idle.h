/* idle.h: how a rank waits for a message without taking the core from the ranks that work.
 *
 * A scheduler between requests, a worker waiting for a reply, a move or a barrier: each polls
 * MPI and, between empty polls, calls idle_pause. A rank bound to a core of its own spins
 * (lowest latency). A rank that shares cores spins a few polls (and 200 us more on a host
 * with at most 5 ranks per 4 cores), then sleeps, each sleep an eighth of the time it has
 * waited so far, from 20 us up to a cap: a wait is stretched by at most about 1/8 (plus one
 * minimum sleep), while a rank that waits long wakes up rarely.
 *
 * The cap follows the host's load (idle_cap_ns): 20 us times the ranks per core, up to 10 ms.
 * A wake-up and its empty poll cost a few us of CPU, so ranks that all sleep at the cap burn
 * about the same small share of the host (some 15%) whatever their number: a thousand idle
 * ranks on 16 cores (73 per core: 1.5 ms) cost the busy ones little, and 17 ranks on 16
 * cores (one scheduler beside 16 workers: 21 us) answer a burst of requests at once instead
 * of a millisecond late; one cap for every load would make a lightly loaded host answer late.
 * ANTHEAP_IDLE_MAX_US, when set, is the cap (docs/HISTORY.md: the measurements).
 *
 * Where the job gave the rank a doorbell (bell.h: ranks of one host ring each other's after
 * sending a message; ANTHEAP_BELLS), the sleeps are sleeps on the bell: a message from the
 * host ends them, and the back-off's steps are only their time-outs, for messages nobody rings
 * (other hosts', MPI's own collectives). ANTHEAP_IDLE_SPIN_US sets the light load's spin. */
#ifndef AH_IDLE_H
#define AH_IDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/bell.h"

#define IDLE_SPIN 64                 /* empty polls before the first sleep */
/* Looks for messages after a sleep before the next one. Two: Open MPI's MPI_Iprobe answers
 * from what earlier calls took in, and only then takes in what has arrived (ob1: the match,
 * then opal_progress), so the first look after a sleep misses a message that came during it,
 * and a wait that slept again at once slept twice for it (and a rank rung awake slept on
 * through the message it was rung for). More looks would only yield the core more often
 * (Open MPI's empty polls yield it, OMPI_MCA_mpi_yield_when_idle=1). */
#define IDLE_LOOKS_AFTER_SLEEP 2
#define IDLE_MIN_NS 20000ull         /* the first sleep */
/* The timer slack of a thread that sleeps in a wait (Linux, set before its first such sleep):
 * a timed sleep or futex wait may end up to the slack late, and the default slack (50 us)
 * would stretch the shortest sleep to 70 us and more, past the 1/8 the back-off allows. */
#define IDLE_SLACK_NS (IDLE_MIN_NS / 8)
/* On a host with at most 5 ranks per 4 cores (a cap of at most IDLE_SPIN_CAP_NS), a wait also
 * spins IDLE_SPIN_NS before its first sleep, to keep a scheduler beside busy workers awake
 * through a burst of requests and a worker awake for its reply: a message that comes during
 * the spin is taken at once, where a sleep waits for a futex wake-up (a ring) or its timer.
 * The spin's polls yield the core (sched_yield) to any thread that waits for it, not
 * nanosleep(0), which sleeps the timer slack (50-75 us: docs/DESIGN.md, "A light load spins
 * first"). */
#define IDLE_SPIN_NS 200000ull /* unless ANTHEAP_IDLE_SPIN_US says */
#define IDLE_SPIN_CAP_NS (IDLE_MIN_NS * 5 / 4)
#define IDLE_DEFAULT_MAX_US 10000ull /* the longest sleep, unless ANTHEAP_IDLE_MAX_US says */

typedef struct idle_wait {
  unsigned polls;    /* empty polls so far */
  uint64_t since_ns; /* when the first IDLE_SPIN polls ended (monotonic) */
  uint64_t max_ns;   /* the cap; 0: a core of its own, spin, never sleep */
  uint64_t spin_ns;  /* a light load's spin (idle_setup) */
  bell *bell;        /* the rank's doorbell (idle_setup), or NULL: plain sleeps */
  uint32_t seen;     /* the bell's count before the last look for messages */
} idle_wait;

/* For every wait this process starts after it: its doorbell (NULL: none), and how long a wait
 * spins on a light load (IDLE_SPIN_NS until set). Set by the job when it starts; the bell is
 * cleared before the bells go. */
void idle_setup(bell *b, uint64_t spin_ns);
/* ANTHEAP_IDLE_SPIN_US in ns when it is set (0 to 1000000; a bad value is ignored, with a
 * message), else IDLE_SPIN_NS. */
uint64_t idle_spin_ns(void);

/* Sleeps of this process's waits so far, and how many of them a ring ended (ANTHEAP_PROFILE). */
typedef struct idle_counts {
  uint64_t sleeps, rung;
} idle_counts;
idle_counts idle_counts_now(void);
/* Those counts and this process's rings that woke a sleeper, as the profile lines of workers
 * and schedulers say them: "sleeps S (R ended by a ring); rings that woke a sleeper W". */
void idle_counts_text(char *out, size_t len);

/* Start a wait (and again after each message handled) with the longest sleep cap_ns: 0 for a
 * rank on a core of its own (spin), else idle_cap_ns(...). Both read the bell's count,
 * and the next sleep lasts only while it holds: call them before the look for messages that
 * the sleep follows (a wait's loop does). */
void idle_start(idle_wait *w, uint64_t cap_ns);
/* After an empty poll: nothing, or a sleep as above. */
void idle_pause(idle_wait *w);
/* The policy alone: the sleep after `polls` empty polls, `waited_ns` after the first IDLE_SPIN
 * of them, with the cap max_ns and a light load's spin spin_ns; 0 means poll again at once. */
uint64_t idle_sleep_ns(unsigned polls, uint64_t waited_ns, uint64_t max_ns, uint64_t spin_ns);
/* The cap from ANTHEAP_IDLE_MAX_US when it is set (a bad value is ignored, with a message),
 * or IDLE_DEFAULT_MAX_US. */
uint64_t idle_max_ns(void);
/* The cap for a rank sharing a host of host_cores cores with local_ranks ranks (either <= 0:
 * unknown, the default cap): ANTHEAP_IDLE_MAX_US when set, else IDLE_MIN_NS per rank per
 * core, within [IDLE_MIN_NS, IDLE_DEFAULT_MAX_US]. */
uint64_t idle_cap_ns(int local_ranks, int host_cores);

#endif

/* watch.h: a wait that says why it waits. A worker blocked in sys_recv, sys_send or
 * sys_barrier for longer than ANTHEAP_WAIT_WARN seconds (default 60; 0: never) prints once
 * what it waits for; with ANTHEAP_WAIT_TIMEOUT seconds (default: never) the wait gives up and
 * the call fails with ETIMEDOUT. The waiting loops (idle.h) call watch_poll after each empty
 * poll: a clock read, and a message at most once. No MPI here. */
#ifndef AH_WATCH_H
#define AH_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WATCH_WARN_DEFAULT_S 60.0

typedef struct watch_config {
  uint64_t warn_ns;    /* 0: never warn */
  uint64_t timeout_ns; /* 0: never give up */
  int me;              /* the worker index the messages name */
} watch_config;

/* The settings from ANTHEAP_WAIT_WARN and ANTHEAP_WAIT_TIMEOUT (seconds, decimals allowed).
 * 0, or EINVAL with a message in err for a value that is not a number of seconds >= 0. */
int watch_config_from_env(watch_config *c, int me, char *err, size_t errlen);

/* One wait: `call` waits for `what` (a printf format with one %d: the peer, or none). */
typedef struct watch {
  const watch_config *cfg; /* NULL: no watch (never warns, never times out) */
  const char *call, *what;
  int peer;
  uint64_t start_ns;
  bool warned;
} watch;

void watch_start(watch *w, const watch_config *cfg, const char *call, const char *what, int peer);
/* After an empty poll: 0 to go on waiting (having warned once when due), or ETIMEDOUT. */
int watch_poll(watch *w);
/* Is the wait watched at all (a warning or a timeout set)? Waits that are not may block in
 * MPI's own calls. */
bool watch_active(const watch_config *cfg);

#endif

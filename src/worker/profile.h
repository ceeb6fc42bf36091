/* profile.h: ANTHEAP_PROFILE=1, where a worker's time with its schedulers goes. Each worker
 * counts its round trips by message kind with their seconds (request sent to reply taken, the
 * longest, and the octave that holds their median; the schedulers print their side,
 * src/job/daemon.c), the seconds its threads waited for the rank lock (threads.h), the cache
 * flushes with the slabs they handed back, and the seconds spent mapping big leases
 * (cache_backend.c); each prints one line at sys_finalize. Off (the default), each of those
 * places costs one branch on a flag set once at sys_init. */
#ifndef AH_WORKER_PROFILE_H
#define AH_WORKER_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/clock.h"

extern bool profile_on;

/* Reads ANTHEAP_PROFILE (1 or on: on; 0, off or unset: off; anything else: a message, off). */
void profile_setup(void);
static inline uint64_t profile_now_ns(void) { return ah_now_ns(); }
/* A round trip of kind `type` that took ns (called under the rank lock at MULTIPLE). */
void profile_rpc(unsigned type, uint64_t ns);
/* A wait of ns for the rank lock (called once it is held; the outermost hold of a thread). */
void profile_lock_wait(uint64_t ns);
/* A flush of every cache that took ns and handed back `slabs` (any thread). */
void profile_flush(uint64_t ns, uint64_t slabs);
/* Big leases' pages mapped in ns (any thread, outside the rank lock). */
void profile_populate(uint64_t ns);
/* The line of worker `id` on stderr (nothing when off). */
void profile_report(int id);

#endif

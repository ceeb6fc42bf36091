/* guard.h: ANTHEAP_CHECK=handover, a sanitizer for the hand-over rule (include/antheap.h).
 *
 * A worker that hands regions over (sys_send, sys_give) loses every access to their pages in
 * its own mapping (mprotect PROT_NONE; shared or private GAS alike) until they come back to it:
 * a move that brings them in, or a lease or an allocation that lands on them after they were
 * freed and reused. A read or write through a stale pointer then stops the job with a message
 * naming the address, the regions, the call that handed them over (its number among this
 * worker's hand-overs, the peer, and a backtrace of it) and the worker.
 *
 * Only the pages of whole regions are guarded: a region's slabs are its own (a 4-KiB slab is a
 * page), while an object moved alone shares its page with objects its region keeps. */
#ifndef AH_WORKER_GUARD_H
#define AH_WORKER_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/transfer.h"

/* ANTHEAP_CHECK: unset or "none" (off), or "handover". 0, or EINVAL with a message in err. */
int guard_setting(bool *on, char *err, size_t errlen);
/* Turn the guard on for worker `me` (installs a SIGSEGV handler that passes faults it does not
 * own on to the one before). */
void guard_start(int me);
bool guard_on(void);
/* The guard of one hand-over (guard_protect), or GUARD_NONE. */
#define GUARD_NONE SIZE_MAX
/* Guard the ranges of regions that `how` ("sys_send", "sys_give") hands to worker peer, before
 * the receiver can have them: from then on its frees may bring their slabs back to this worker
 * (a lease that lands on them releases them: guard_release), so a guard set after the hand-over
 * could take pages this worker holds again. readable: writes only are stopped, while a
 * copy-mode sys_send still reads them (guard_tighten after it). The hand-over's guard, or
 * GUARD_NONE. */
size_t guard_protect(const gas_range *r, size_t n, bool readable, const char *how, int peer,
                     const uint32_t *regions, int nregions);
/* The pages of hand-over rec still guarded (none released meanwhile) lose read access too. */
void guard_tighten(size_t rec);
/* The hand-over rec did not happen: its pages still guarded are this worker's again. */
void guard_undo(size_t rec);
/* [addr, addr + len) is this worker's again: every guarded page in it becomes accessible. */
void guard_release(uintptr_t addr, size_t len);
/* Forget everything (the GAS is unmapped); the handler stays, passing faults on. */
void guard_stop(void);

#endif

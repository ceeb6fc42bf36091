/* tcache.h: per-thread allocation caches (MPI_THREAD_MULTIPLE, issue 34).
 *
 * Every thread of a worker rank that allocates gets a cache of its own (cache.h, one per
 * thread, made at its first call and kept for the next thread when it exits): its sys_alloc,
 * sys_balloc and sys_free of its own objects touch nothing another thread writes, and take no
 * lock and no atomic read-modify-write (the owner's guard below is two plain stores and a
 * load). The caches lease from the rank's schedulers through the rank's channel (the backend,
 * cache_backend.c), so leases are the rank's: a region held by the rank is cached in by any of
 * its threads.
 *
 * The owner's guard. A flush point (sys_send, sys_give, sys_rfree, sys_barrier, sys_finalize)
 * must hand every thread's slabs back, while those threads go on allocating elsewhere. Each
 * cache has a mutex and two flags: the owner sets `busy` around each operation and reads
 * `stop`; a thread that wants the cache (a flusher) takes the mutex, sets `stop`, and waits
 * until `busy` is clear; the owner that finds `stop` set clears `busy` and takes the mutex
 * instead. That is Dekker's handshake, and needs the owner's store ordered before its load:
 * the flusher makes every running thread of the process execute a full barrier with
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) between its store and its load, so the owner
 * needs only a compiler barrier; where the kernel refuses membarrier the owner uses a fence.
 *
 * Frees of another thread's objects: see tcache_free. The map from slabs to owners is
 * slabmap.h.
 *
 * Locks, in the order they may be taken: the flush lock, caches' mutexes (registry order),
 * the backend's lock (the rank lock). A thread must not stop a cache (flush, tcache_lookup
 * or a free of another thread's object) while it holds the backend's lock: an owner may be
 * waiting for that lock in the middle of an operation, and the stopper would wait for it.
 * No MPI here: the backend carries the requests (cache_backend.c; a fake one in the unit
 * test). */
#ifndef AH_WORKER_TCACHE_H
#define AH_WORKER_TCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/cache.h"

typedef struct tcache_setup {
  cache_backend be;            /* the rank's lease / unlease (called with ctx = be.ctx) */
  void (*lock)(void);          /* the lock the backend runs under (may be NULL) */
  void (*unlock)(void);
  uintptr_t gas_base;          /* the GAS, for the slab map */
  size_t gas_size;
  const cache_config *cfg;     /* NULL: cache_config_default() */
  /* Free an object no cache holds any more (a remote free whose slab went back meanwhile):
   * called with no lock held; 0 or an errno (EINVAL: not a live object). */
  int (*free_elsewhere)(uintptr_t addr);
} tcache_setup;

/* Start per-thread caching: 0, ENOMEM, or EINVAL (a bad config). */
int tcaches_start(const tcache_setup *s);
/* Stop every cache for good without handing anything back (tcaches_flush first), after any
 * thread inside an operation has finished it: their memory is freed, their records kept for
 * the threads that may still point at them (tcache.c). */
void tcaches_stop(void);
extern bool tcaches_running; /* (read on every sys_* call: set once, before any thread) */
static inline bool tcaches_on(void) { return tcaches_running; }

/* The calling thread's cache serves these (cache.h's errors). ENOMEM also when the thread
 * could get no cache (the caller asks the scheduler). */
int tcache_alloc(size_t size, uint32_t rid, uintptr_t *addr);
int tcache_balloc(size_t size, uint32_t rid, size_t n, uintptr_t *addrs);
/* (The fast paths alone, which sys_alloc and sys_free try first, are tcache_hot.h's.) */
/* Free an object of any thread's cache: the caller's own at once; another thread's goes onto
 * the owner's remote-free list (mpsc.h), which the owner frees at its next allocation (and
 * every flush before it hands slabs back). Synchronous errors: EINVAL for a pointer that is
 * no slot's start; a double free of another thread's object is found and reported (stderr)
 * by the owner, which drops the frees queued before it (their objects stay allocated: the
 * second push broke the list there). ESRCH: no thread's cache holds it (ask the scheduler). */
int tcache_free(uintptr_t addr);
/* cache_lookup in whichever thread's cache holds addr's slab (ESRCH: none). */
int tcache_lookup(uintptr_t addr, uint32_t *rid, uintptr_t *start, size_t *size, int32_t *sched);

/* Hand every thread's slabs back (cache_flush of each, every cache stopped until all are
 * back, so that no free meanwhile can reach a scheduler before its slab does). The slabs
 * returned and live slots dropped (regions freed meanwhile) are added to *returned and
 * *dropped. 0 or the first error. */
int tcaches_flush(uint64_t *returned, uint64_t *dropped);

/* Sum of every cache's statistics (for tests and benchmarks). */
void tcaches_stats(cache_stats *sum);
/* Caches made so far (threads that allocated; a cache is reused after its thread exits). */
int tcaches_count(void);

#endif

/* threads.h: a worker rank's thread level (sys_init_thread) and the rank lock.
 *
 * At MPI_THREAD_MULTIPLE every sys_* call may come from any thread of a worker rank. The state
 * the threads share (the request channel to the leaf scheduler, its request numbers, the GAS
 * bookkeeping: retained memory, the checked mode's spans) is used under one
 * recursive mutex, the rank lock. It is held for request/reply round trips, never across a
 * move's wait for its peer (sys_send / sys_recv run their transfers unlocked, so that threads
 * move to different peers at once) and never while a flush waits for a thread's allocation
 * cache (tcache.h: a cache's owner may be waiting for this lock to lease). Below
 * MPI_THREAD_MULTIPLE nothing locks: one branch on a flag that never changes after sys_init.
 * The hot paths (the allocation caches) do not take it at all (tcache.h). */
#ifndef AH_WORKER_THREADS_H
#define AH_WORKER_THREADS_H

#include <stdbool.h>

/* The level the library provides (an MPI_THREAD_* value); set once in sys_init_thread. */
void threads_set_level(int provided);

/* true at MPI_THREAD_MULTIPLE: sys_* from any thread (read on every call, set once). */
extern bool threads_multi_on;
static inline bool threads_multi(void) { return threads_multi_on; }

/* The rank lock (recursive). Both do nothing below MPI_THREAD_MULTIPLE. */
void rank_lock(void);
void rank_unlock(void);
/* How deeply this thread holds the rank lock now (0: not at all). */
int rank_lock_depth(void);

/* Hold the rank lock to the end of the enclosing block (GCC/Clang cleanup attribute). */
static inline void rank_guard_release(int *unused) {
  (void)unused;
  rank_unlock();
}
static inline int rank_guard_take(void) {
  rank_lock();
  return 0;
}
#define RANK_GUARD_CAT2(a, b) a##b
#define RANK_GUARD_CAT(a, b) RANK_GUARD_CAT2(a, b)
#define RANK_GUARD()                                                              \
  __attribute__((cleanup(rank_guard_release), unused)) int RANK_GUARD_CAT(rank_guard_, \
                                                                         __LINE__) = \
      rank_guard_take()

#endif

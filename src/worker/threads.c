/* threads.c: the thread level of a worker rank and the rank lock (threads.h). */
#include "worker/threads.h"

#include <mpi.h>
#include <pthread.h>

#include "common/assert.h"
#include "worker/profile.h"

bool threads_multi_on;
static pthread_mutex_t lock;
static pthread_once_t lock_once = PTHREAD_ONCE_INIT;
static _Thread_local int depth; /* this thread's holds of the rank lock */

static void lock_init(void) {
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&lock, &a);
  pthread_mutexattr_destroy(&a);
}

void threads_set_level(int provided) {
  pthread_once(&lock_once, lock_init);
  threads_multi_on = provided == MPI_THREAD_MULTIPLE;
}

void rank_lock(void) {
  if (!threads_multi_on) return;
  if (profile_on && depth == 0) { /* (a thread's nested holds wait for nothing) */
    uint64_t t0 = profile_now_ns();
    pthread_mutex_lock(&lock);
    profile_lock_wait(profile_now_ns() - t0);
  } else {
    pthread_mutex_lock(&lock);
  }
  depth++;
}

void rank_unlock(void) {
  if (!threads_multi_on) return;
  AH_ASSERT(depth > 0);
  depth--;
  pthread_mutex_unlock(&lock);
}

int rank_lock_depth(void) { return depth; }

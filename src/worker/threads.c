/* threads.c: the thread level of a worker rank and the rank lock (threads.h). */
#include "worker/threads.h"

#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/assert.h"
#include "worker/profile.h"

bool threads_multi_on;
static pthread_mutex_t lock;
static pthread_once_t lock_once = PTHREAD_ONCE_INIT;
static _Thread_local int depth; /* this thread's holds of the rank lock */
static unsigned long long spin_ns; /* threads_set_spin */

void threads_setup_spin(bool light_load) {
  spin_ns = light_load ? RANK_LOCK_SPIN_NS : 0;
  const char *v = getenv("ANTHEAP_LOCK_SPIN_US");
  if (!v || !*v) return;
  char *end;
  errno = 0;
  unsigned long long us = strtoull(v, &end, 10);
  if (errno || *end || us > 1000000)
    fprintf(stderr, "antheap: ANTHEAP_LOCK_SPIN_US=%s: expected 0 to 1000000; ignored\n", v);
  else
    spin_ns = us * 1000;
}

static unsigned long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* The lock, tried for up to spin_ns before a sleep in the mutex (threads.h). */
static void take(void) {
  for (unsigned long long i = 0, t0 = 0; spin_ns; i++) {
    if (pthread_mutex_trylock(&lock) == 0) return;
    if (i % 64 == 0) { /* (a clock read every 64 tries) */
      unsigned long long t = now_ns();
      if (!t0) t0 = t;
      else if (t - t0 > spin_ns) break;
    }
    cpu_relax();
  }
  pthread_mutex_lock(&lock);
}

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
  if (profile_on) {
    uint64_t t0 = profile_now_ns();
    take();
    profile_lock_wait(profile_now_ns() - t0);
  } else {
    take();
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

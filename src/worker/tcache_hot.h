/* tcache_hot.h: a thread's cache record (tcache.h), the calling thread's pointer to it, the
 * owner's fast entry of the guard, and the two fast paths that sys_alloc and sys_free (api.c)
 * inline: a slot of the thread's direct bin, a free of a live slot of its own cache. With
 * cache_hot.h's hits inside them, a cached allocation or free is one function from the API
 * to the slab's bitmap. tcache.c owns everything here (the registry, the guard's slow ways,
 * remote frees, flushes); only tcache.c and api.c include it. */
#ifndef AH_WORKER_TCACHE_HOT_H
#define AH_WORKER_TCACHE_HOT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "worker/cache_hot.h"
#include "worker/mpsc.h"
#include "worker/tcache.h"

/* One thread's cache. Aligned to SLABMAP_ALIGN (its address is a slab map entry); busy is
 * the owner's, alone in its cache line, so a flusher polling it does not disturb the rest. */
typedef struct tcache {
  _Atomic int busy;            /* the owner is inside an operation on c */
  char pad_[64 - sizeof(_Atomic int)];
  _Atomic int stop;            /* a stopper holds mu and wants c: the owner takes mu too */
  _Atomic bool owned;          /* a live thread uses it (false: kept for the next thread) */
  pthread_mutex_t mu;          /* held by stoppers, and by the owner while stop is set */
  struct tcache *next;         /* the registry, newest first */
  unsigned run;                /* the tcaches_start it was made under */
  _Alignas(64) cache c;        /* in place: the hot paths read it with no pointer between */
  _Alignas(64) mpsc remote;    /* objects other threads freed (its own line: they write it) */
} tcache;

/* The calling thread's cache (NULL before its first call; after tcaches_stop, a parked one of
 * an earlier run until it gets a new one). Initial-exec TLS: one %fs-relative load, where the
 * default model under -fPIC is a call (__tls_get_addr), which made every allocation keep its
 * arguments in saved registers. A libantheap.so loaded with dlopen takes its 16 bytes (this and
 * tcache_fast) from the static TLS surplus glibc keeps for that. */
extern _Thread_local tcache *tcache_mine __attribute__((tls_model("initial-exec")));
/* No membarrier (or ANTHEAP_TCACHE_FENCE=1): the owner orders its store with a fence. */
extern bool tcache_fence;
/* The per-thread caches run and the owners need no fence (set by tcaches_start after
 * tcache_fence, cleared first by tcaches_stop): a thread's cache is then also its tcache_fast. */
extern bool tcache_hits_on;
/* The calling thread's cache when sys_alloc and sys_free may take its hits inline (it was made
 * while tcache_hits_on), else NULL: their whole gate, one load (at MPI_THREAD_MULTIPLE the
 * worker keeps no memos). tcaches_stop stops every cache for good and keeps its record, so
 * that a thread that calls after sys_finalize meets a stopped cache and takes the slow way,
 * which answers that the library is not up. */
extern _Thread_local tcache *tcache_fast __attribute__((tls_model("initial-exec")));

/* The owner's fast entry: true with busy set and nobody stopping; false (busy clear again)
 * when a stopper is there (the caller then goes the guarded way, which tries again). fence:
 * order the store with a fence (no membarrier); a constant where the caller knows it. */
static inline bool tcache_enter(tcache *t, bool fence) {
  atomic_store_explicit(&t->busy, 1, memory_order_relaxed);
  if (fence) atomic_thread_fence(memory_order_seq_cst);
  else atomic_signal_fence(memory_order_seq_cst); /* the stopper's membarrier orders the CPU */
  if (__builtin_expect(!atomic_load_explicit(&t->stop, memory_order_acquire), 1)) return true;
  atomic_store_explicit(&t->busy, 0, memory_order_release);
  return false;
}

static inline bool tcache_enter_fast(tcache *t) { return tcache_enter(t, tcache_fence); }

static inline void tcache_leave_fast(tcache *t) {
  atomic_store_explicit(&t->busy, 0, memory_order_release);
}

/* A slot of t's direct bin for (size, rid), t the calling thread's tcache_fast: true with *addr
 * set; false when that takes more (a stopper, frees from other threads to take, a bin to find
 * or fill: then tcache_alloc, which does it all). */
static inline bool tcache_alloc_hit(tcache *t, size_t size, uint32_t rid, uintptr_t *addr) {
  if (__builtin_expect(!tcache_enter(t, false), 0)) return false;
  bool hit = mpsc_empty(&t->remote) && cache_alloc_hit(&t->c, size, rid, addr);
  tcache_leave_fast(t);
  return hit;
}

/* True when addr was a live slot of t, the calling thread's tcache_fast, and is free now; false
 * with nothing changed otherwise (then tcache_free, which does the rest). */
static inline bool tcache_free_hit(tcache *t, uintptr_t addr) {
  if (__builtin_expect(!tcache_enter(t, false), 0)) return false;
  int rc = cache_free_here(&t->c, addr);
  tcache_leave_fast(t);
  return rc == 0;
}

#endif /* AH_WORKER_TCACHE_HOT_H */

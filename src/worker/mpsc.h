/* mpsc.h: remote frees, a lock-free multi-producer single-consumer list of freed objects.
 *
 * A thread that frees an object another thread's cache handed out pushes it here, on the
 * owner's list (tcache.c); the owner takes the whole list with one exchange at its next
 * allocation and frees each object in its own cache. The freed objects are the nodes: an
 * object's first word holds the next pointer (every slot is at least 64 bytes), so a push
 * needs no memory and cannot fail. A push is a compare-and-swap loop on the head (Treiber's
 * stack); the consumer never pops one node, it swaps the head for NULL, so there is no ABA
 * (a node is never taken while a producer can still compare against it). Order is not kept:
 * frees need none. The Giersch-Nolte FIFO (src/device/gnqueue.cuh) keeps order, takes its
 * nodes from a pool and costs two fetch-and-adds an operation; here order does not matter and
 * nodes come free, so the list is the simpler fit (docs/DESIGN.md, "Threads").
 *
 * Ordering: a push releases the object's next word (and everything the freeing thread wrote
 * before the free); the take acquires it. */
#ifndef AH_WORKER_MPSC_H
#define AH_WORKER_MPSC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct mpsc {
  _Atomic uintptr_t head; /* the last object pushed, 0: empty */
} mpsc;

static inline void mpsc_push(mpsc *q, uintptr_t obj) {
  uintptr_t h = atomic_load_explicit(&q->head, memory_order_relaxed);
  do
    *(uintptr_t *)obj = h;
  while (!atomic_compare_exchange_weak_explicit(&q->head, &h, obj, memory_order_release,
                                                memory_order_relaxed));
}

/* Anything to take? (one load: the owner asks at every allocation) */
static inline bool mpsc_empty(mpsc *q) {
  return atomic_load_explicit(&q->head, memory_order_relaxed) == 0;
}

/* The whole list (0: empty), last pushed first; follow it with mpsc_next. */
static inline uintptr_t mpsc_take_all(mpsc *q) {
  return atomic_exchange_explicit(&q->head, 0, memory_order_acquire);
}

static inline uintptr_t mpsc_next(uintptr_t obj) { return *(const uintptr_t *)obj; }

#endif

/* fifo.cuh: XMalloc's bounded lock-free FIFO (Huang et al. 2011, 5.2.1, Figs. 7-9).
 * Messages are named by sequence number: message n lives at msg[n % DM_FIFO_CAP] and
 * carries n in its upper 32 bits, which both locates it and tags it against ABA. The FIFO
 * holds the head's number and the whole tail message; dequeue advances head with one CAS,
 * enqueue first moves the old tail into the array (helping is allowed: a failed move means
 * someone else moved it) and then CASes in the new tail. Empty: tail.num - head + 1 == 0.
 * No fences: a message's number and payload are one 64-bit word, written by one CAS, and
 * every read of a slot is checked against the number it must carry, so a stale read only
 * costs a retry. (The blocks themselves carry nothing the next owner reads.)
 * Nor an acquire on the pop: what the popper and the block's next users read of the
 * block's page (its pinfo in dm_locate and the debug checks, its count) is read at an
 * address computed from the payload, so not before the pop's load has returned it; the
 * claimer's fence put the page's pinfo and count before the push (for a whole warp's
 * unfenced 16-B page the pusher's own fence does, types.cuh DM_PK_UNFENCED), and those
 * .gpu loads and atomics are served where the push was (the L2), not from a stale L1.
 * That is an address dependency, which PTX does not promise to order but no hardware can
 * break without guessing the address; an ld.acquire per pop would also invalidate the L1.
 * Entry points: dm_fifo_init (host-launched), dm_fifo_pop, dm_fifo_push. */
#ifndef DM_FIFO_CUH
#define DM_FIFO_CUH

#include "types.cuh"
#include "warp.cuh"

#define DM_MSG(num, payload) (((unsigned long long)(num) << 32) | (unsigned)(payload))
#define DM_MSG_NUM(m) ((unsigned)((m) >> 32))
#define DM_MSG_PAY(m) ((unsigned)(m))

/* Empty FIFO: message 0 is the (already consumed) tail; slot i holds number i - CAP so
 * that the first enqueue into it sees the expected predecessor. */
static __device__ void dm_fifo_init(dm_fifo *q, unsigned lane, unsigned nlanes)
{
  for (unsigned i = lane; i < DM_FIFO_CAP; i += nlanes) q->msg[i] = DM_MSG(i - DM_FIFO_CAP, 0);
  if (lane == 0) {
    q->head = 1;
    q->tail = DM_MSG(0, 0);
  }
}

/* Dequeue one payload into *out; false when the FIFO is empty. */
static __device__ bool dm_fifo_pop(dm_fifo *q, unsigned *out)
{
  for (;;) {
    unsigned head = dm_ld(&q->head);
    unsigned long long tail = dm_ld64(&q->tail);
    if (DM_MSG_NUM(tail) - head + 1u == 0u) return false;
    unsigned v;
    if (head == DM_MSG_NUM(tail)) {
      v = DM_MSG_PAY(tail);
    } else {
      unsigned long long m = dm_ld64(&q->msg[head % DM_FIFO_CAP]);
      if (DM_MSG_NUM(m) != head) continue;   /* not moved there yet, or reused: reread */
      v = DM_MSG_PAY(m);
    }
    if (atomicCAS(&q->head, head, head + 1u) == head) {
      *out = v;
      return true;
    }
  }
}

/* Enqueue one payload; false when the FIFO is full. */
static __device__ bool dm_fifo_push(dm_fifo *q, unsigned payload)
{
  for (;;) {
    unsigned head = dm_ld(&q->head);
    unsigned long long tail = dm_ld64(&q->tail);
    unsigned tnum = DM_MSG_NUM(tail);
    if (tnum - head + 1u >= DM_FIFO_CAP - 1u) return false;
    unsigned long long *slot = &q->msg[tnum % DM_FIFO_CAP];
    unsigned long long old = dm_ld64(slot);
    if (DM_MSG_NUM(old) != tnum) {             /* move the old tail into the array... */
      if (DM_MSG_NUM(old) + DM_FIFO_CAP != tnum) continue;        /* stale view: reread */
      unsigned long long seen = atomicCAS(slot, old, tail);
      if (seen != old && DM_MSG_NUM(seen) != tnum) continue;
    }                                          /* ...before ever swinging the tail past it */
    if (atomicCAS(&q->tail, tail, DM_MSG(tnum + 1u, payload)) == tail) return true;
  }
}

#endif /* DM_FIFO_CUH */

/* gnqueue.cuh: a CUDA port of the Giersch-Nolte lock-free FIFO (IEEE TPDS 2022, Listings
 * 1-8), kept beside XMalloc's FIFO (fifo.cuh) so the two can be measured against each
 * other (tests/gpu/test_queues.cu, apps/device/bench_queues.cu). The class buffers use
 * fifo.cuh.
 *
 * The queue is a linked list of nodes of GN_SLOTS slots. Enqueue and dequeue reserve a slot
 * with one fetch-and-add on a tagged (node, index) word and then set bits in the slot with a
 * second fetch-and-add; an index past the node's end takes the slow path (Michael-Scott append
 * or head advance). A node is given back deterministically when the last operation that can
 * still see it finishes: try_reclaim checks the slots once the last one is read, and the slow
 * paths count themselves against the final count that the CAS swinging head or tail fixes.
 *
 * Port notes.
 *  - Nodes live in a pool given at init and are named by 32-bit index; a tagged word is
 *    (node << 32 | index), so adding 1 advances the index. Free nodes form a Treiber stack
 *    whose head carries a 32-bit tag against ABA.
 *  - The paper's 16-bit operation counts become 32-bit: thousands of GPU threads can take a
 *    node's slow path at once.
 *  - A payload is a 32-bit value stored as (v << 3 | WRITER). When the pool is empty an
 *    enqueue that needs a new node fails (returns false) instead of allocating.
 *  - No warp-collective code: every operation is one lane's.
 * Entry points: gn_init (one thread), gn_enqueue, gn_dequeue, gn_free_nodes (quiescent). */
#ifndef DM_GNQUEUE_CUH
#define DM_GNQUEUE_CUH

#include "warp.cuh"

#define GN_SLOTS 256u
#define GN_NONE 0xffffffffu
#define GN_RESUME 1ull
#define GN_WRITER 2ull
#define GN_READER 4ull
#define GN_CONSUMED (GN_READER | GN_WRITER)
#define GN_R_SLOT 1u          /* reclaim flags: try_reclaim passed every slot */
#define GN_R_DEQ 2u           /*                every slow dequeue has finished */
#define GN_R_ENQ 4u           /*                every slow enqueue has finished */

typedef struct gn_node {
  unsigned long long slot[GN_SLOTS];
  unsigned long long enq_count;   /* final count << 32 | slow enqueues finished */
  unsigned long long deq_count;   /* final count << 32 | slow dequeues finished */
  unsigned next;                  /* next node in the queue, GN_NONE */
  unsigned reclaim;               /* GN_R_* */
  unsigned free_next;             /* next node on the free stack */
  unsigned pad_;
} gn_node;

typedef struct gn_pool {
  gn_node *node;
  unsigned long long free_top;    /* tag << 32 | node index (GN_NONE: empty) */
  unsigned long long reclaimed;   /* nodes given back by the reclamation protocol */
  unsigned n;
} gn_pool;

typedef struct gn_queue {
  unsigned long long head;        /* node << 32 | dequeue index */
  unsigned long long tail;        /* node << 32 | enqueue index */
  unsigned curr_tail;             /* cached tail node */
  unsigned pad_;
  gn_pool *pool;
} gn_queue;

#define GN_TAG(node, idx) (((unsigned long long)(node) << 32) | (unsigned)(idx))
#define GN_NODE(t) ((unsigned)((t) >> 32))
#define GN_IDX(t) ((unsigned)(t))

static __device__ __forceinline__ unsigned long long gn_ld64(const unsigned long long *p)
{
  return dm_ld64(p);
}

/* Give node i back to the pool. */
static __device__ void gn_node_free(gn_pool *pool, unsigned i)
{
  unsigned long long top = gn_ld64(&pool->free_top);
  for (;;) {
    pool->node[i].free_next = (unsigned)top;
    __threadfence();
    unsigned long long seen = atomicCAS(&pool->free_top, top, GN_TAG((top >> 32) + 1u, i));
    if (seen == top) return;
    top = seen;
  }
}

/* A fresh node from the pool holding `first` in slot 0 (GN_NONE: none), or GN_NONE when
 * the pool is empty. */
static __device__ unsigned gn_node_alloc(gn_pool *pool, unsigned long long first)
{
  unsigned long long top = gn_ld64(&pool->free_top);
  unsigned i;
  for (;;) {
    i = (unsigned)top;
    if (i == GN_NONE) return GN_NONE;
    unsigned nx = dm_ld(&pool->node[i].free_next);
    unsigned long long seen = atomicCAS(&pool->free_top, top, GN_TAG((top >> 32) + 1u, nx));
    if (seen == top) break;
    top = seen;
  }
  gn_node *nd = &pool->node[i];
  for (unsigned s = 0; s < GN_SLOTS; ++s) nd->slot[s] = 0;
  nd->slot[0] = first;
  nd->enq_count = nd->deq_count = 0;
  nd->next = GN_NONE;
  nd->reclaim = 0;
  __threadfence();                 /* all of it before the node is linked */
  return i;
}

/* Listing 7: once every slot of node i has been both written and read, the fast paths are
 * done with it; the last of the three parties (slots, slow enqueues, slow dequeues) frees. */
static __device__ void gn_try_reclaim(gn_pool *pool, unsigned i, unsigned start)
{
  gn_node *nd = &pool->node[i];
  for (unsigned s = start; s < GN_SLOTS; ++s)
    if ((gn_ld64(&nd->slot[s]) & GN_CONSUMED) != GN_CONSUMED &&
        (atomicAdd(&nd->slot[s], GN_RESUME) & GN_CONSUMED) != GN_CONSUMED)
      return;                      /* whoever completes slot s resumes from s + 1 */
  if (atomicAdd(&nd->reclaim, GN_R_SLOT) == (GN_R_ENQ | GN_R_DEQ)) {
    atomicAdd(&pool->reclaimed, 1ull);
    gn_node_free(pool, i);
  }
}

/* Listing 8: one slow-path operation on node i finished; `final` (when not 0) is the count
 * of all of them, known to the one that moved head or tail off the node. */
static __device__ void gn_count_slow(gn_pool *pool, unsigned i, unsigned long long *count,
                                     unsigned flag, unsigned final)
{
  unsigned long long m;
  if (final == 0) {
    m = atomicAdd(count, 1ull);
    final = (unsigned)(m >> 32);
  } else {
    m = atomicAdd(count, 1ull + ((unsigned long long)final << 32));
  }
  if (1u + (unsigned)m == final &&
      atomicAdd(&pool->node[i].reclaim, flag) == (GN_R_SLOT | (GN_R_ENQ ^ GN_R_DEQ ^ flag))) {
    atomicAdd(&pool->reclaimed, 1ull);
    gn_node_free(pool, i);
  }
}

/* One thread sets up an empty queue over a pool of n nodes (node 0 becomes the first). */
static __device__ bool gn_init(gn_queue *q, gn_pool *pool, gn_node *nodes, unsigned n)
{
  pool->node = nodes;
  pool->n = n;
  pool->reclaimed = 0;
  pool->free_top = GN_TAG(0, GN_NONE);
  for (unsigned i = n; i-- > 1;) {
    nodes[i].free_next = (unsigned)pool->free_top;
    pool->free_top = GN_TAG(0, i);
  }
  gn_node *nd = &nodes[0];
  for (unsigned s = 0; s < GN_SLOTS; ++s) nd->slot[s] = 0;
  nd->enq_count = nd->deq_count = 0;
  nd->next = GN_NONE;
  nd->reclaim = 0;
  q->head = q->tail = GN_TAG(0, 0);
  q->curr_tail = 0;
  q->pool = pool;
  __threadfence();
  return n > 0;
}

enum { GN_ADV_INSERTED, GN_ADV_ONLY, GN_ADV_FULL };

/* Listing 3, lines T11 and T19: move the tail from full node t (last seen as `curr`) to node
 * `to`, index 1. Returns the final count of t's slow enqueues when this call moved it, 0
 * when another did. */
static __device__ unsigned gn_swing_tail(gn_queue *q, unsigned long long curr, unsigned t,
                                         unsigned to)
{
  for (;;) {
    unsigned long long seen = atomicCAS(&q->tail, curr, GN_TAG(to, 1));
    if (seen == curr) return GN_IDX(curr) - GN_SLOTS;
    curr = seen;
    if (GN_NODE(curr) != t) return 0;
  }
}

/* Listing 3: the enqueue slow path on full tail node t (our index was past its end). */
static __device__ int gn_adv_tail(gn_queue *q, unsigned long long w, unsigned t)
{
  gn_pool *pool = q->pool;
  gn_node *tn = &pool->node[t];
  int res;
  unsigned final = 0, next = GN_NONE;
  for (;;) {
    unsigned long long curr = gn_ld64(&q->tail);
    if (GN_NODE(curr) != t) { res = GN_ADV_ONLY; break; }
    next = dm_ld(&tn->next);
    if (next == GN_NONE) {
      unsigned nd = gn_node_alloc(pool, w);
      if (nd == GN_NONE) { res = GN_ADV_FULL; break; }
      if (atomicCAS(&tn->next, GN_NONE, nd) == GN_NONE) {
        next = nd;
        res = GN_ADV_INSERTED;     /* our value sits in the new node's slot 0 */
        final = gn_swing_tail(q, curr, t, nd);
        break;
      }
      gn_node_free(pool, nd);      /* someone else appended first: help them instead */
      continue;
    }
    res = GN_ADV_ONLY;             /* help move the tail to the node already appended */
    final = gn_swing_tail(q, curr, t, next);
    break;
  }
  if (next != GN_NONE) atomicCAS(&q->curr_tail, t, next);
  gn_count_slow(pool, t, &tn->enq_count, GN_R_ENQ, final);
  return res;
}

/* Listing 2: enqueue payload v; false when the node pool ran dry. */
static __device__ bool gn_enqueue(gn_queue *q, unsigned v)
{
  const unsigned long long w = ((unsigned long long)v << 3) | GN_WRITER;
  for (;;) {
    unsigned long long t = atomicAdd(&q->tail, 1ull);
    unsigned node = GN_NODE(t), i = GN_IDX(t);
    if (i < GN_SLOTS) {
      unsigned long long prev = atomicAdd(&q->pool->node[node].slot[i], w);
      if (prev <= GN_RESUME) return true;
      if (prev == (GN_READER | GN_RESUME)) gn_try_reclaim(q->pool, node, i + 1u);
      continue;                    /* a reader came first and abandoned the slot */
    }
    int r = gn_adv_tail(q, w, node);
    if (r == GN_ADV_INSERTED) return true;
    if (r == GN_ADV_FULL) return false;
  }
}

/* Listing 4: true when the queue looks empty (reading the contested tail only if needed). */
static __device__ bool gn_is_empty(gn_queue *q)
{
  unsigned long long hd = gn_ld64(&q->head);
  unsigned ct = dm_ld(&q->curr_tail);
  if (GN_NODE(hd) != ct) return false;
  unsigned long long tl = gn_ld64(&q->tail);
  if (ct != GN_NODE(tl)) atomicCAS(&q->curr_tail, ct, GN_NODE(tl));
  return GN_NODE(hd) == GN_NODE(tl) && (GN_IDX(hd) >= GN_SLOTS || GN_IDX(tl) <= GN_IDX(hd));
}

/* Listing 6: the dequeue slow path on drained head node h; false when the queue is empty. */
static __device__ bool gn_adv_head(gn_queue *q, unsigned long long curr, unsigned h)
{
  gn_pool *pool = q->pool;
  gn_node *hn = &pool->node[h];
  if (h == GN_NODE(gn_ld64(&q->tail))) {
    gn_count_slow(pool, h, &hn->deq_count, GN_R_DEQ, 0);
    return false;
  }
  unsigned next = dm_ld(&hn->next);
  curr += 1u;                      /* the head word after our own increment */
  for (;;) {
    unsigned long long seen = atomicCAS(&q->head, curr, GN_TAG(next, 0));
    if (seen == curr) break;
    curr = seen;
    if (GN_NODE(curr) != h) {
      gn_count_slow(pool, h, &hn->deq_count, GN_R_DEQ, 0);
      return true;
    }
  }
  gn_count_slow(pool, h, &hn->deq_count, GN_R_DEQ, GN_IDX(curr) - GN_SLOTS);
  return true;
}

/* Listing 5: dequeue into *out; false when the queue is empty. */
static __device__ bool gn_dequeue(gn_queue *q, unsigned *out)
{
  for (;;) {
    if (gn_is_empty(q)) return false;
    unsigned long long curr = atomicAdd(&q->head, 1ull);
    unsigned h = GN_NODE(curr), i = GN_IDX(curr);
    if (i < GN_SLOTS) {
      unsigned long long prev = atomicAdd(&q->pool->node[h].slot[i], GN_READER);
      if (i == GN_SLOTS - 1u) gn_try_reclaim(q->pool, h, 0);
      if (prev & GN_WRITER) {
        if (prev & GN_RESUME) gn_try_reclaim(q->pool, h, i + 1u);
        *out = (unsigned)(prev >> 3);
        return true;
      }
      continue;                    /* we came before the writer: slot abandoned */
    }
    if (!gn_adv_head(q, curr, h)) return false;
  }
}

/* Nodes on the free stack (only while no operation runs). */
static __device__ unsigned gn_free_nodes(const gn_pool *pool)
{
  unsigned k = 0;
  for (unsigned i = (unsigned)pool->free_top; i != GN_NONE && k <= pool->n; ++k)
    i = pool->node[i].free_next;
  return k;
}

#endif /* DM_GNQUEUE_CUH */

/* offload_kernels.cuh: what the offload tests build on the GPU and check on the CPU: a list
 * (one node per thread, linked in index order) and a tree (binary, each node with a payload
 * block of its own size and a pointer into the middle of it), every stored pointer a GAS
 * address (gpu_gas). The CPU checks read them with plain pointers. */
#ifndef OFFLOAD_KERNELS_CUH
#define OFFLOAD_KERNELS_CUH

#include <stdint.h>
#include <stdlib.h>

#include "antheap_gpu.h"

/* A list node; node_size bytes, the rest after the header holds a pattern. */
typedef struct ol_node {
  unsigned long long next;   /* GAS address of the next node, 0 at the end */
  unsigned index, visits;
  unsigned long long value;  /* ol_mix(index, 0) + each visitor's ol_mix(index, visitor) */
  unsigned long long owner;
} ol_node;

static __host__ __device__ inline unsigned long long ol_mix(unsigned i, unsigned v)
{
  unsigned long long z = ((unsigned long long)v << 32 | i) * 0x9e3779b97f4a7c15ull + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static __host__ __device__ inline unsigned char ol_byte(unsigned i, size_t b)
{
  return (unsigned char)(i * 7u + b * 13u + 1u);
}

/* Thread i: a node of `size` bytes, filled; its device address in slots[i] (NULL: the heap is
 * exhausted, counted in *nulls). */
__global__ void ol_list_alloc(ol_node **slots, unsigned n, unsigned size, unsigned owner,
                              unsigned *nulls)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  ol_node *x = (ol_node *)dm_malloc(size);
  slots[i] = x;
  if (!x) {
    atomicAdd(nulls, 1u);
    return;
  }
  x->next = 0;
  x->index = i;
  x->visits = 0;
  x->value = ol_mix(i, 0);
  x->owner = owner;
  unsigned char *b = (unsigned char *)x;
  for (size_t k = sizeof(ol_node); k < size; ++k) b[k] = ol_byte(i, k);
}

/* Thread i links node i to node i + 1 by its GAS address; the list ends at the first NULL.
 * *head: node 0's GAS address. */
__global__ void ol_list_link(gpu_view v, ol_node **slots, unsigned n, unsigned long long *head)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || !slots[i]) return;
  ol_node *nx = i + 1 < n ? slots[i + 1] : NULL;
  slots[i]->next = (unsigned long long)(uintptr_t)gpu_gas(v, nx);
  if (i == 0) *head = (unsigned long long)(uintptr_t)gpu_gas(v, slots[0]);
}

/* One thread walks the list from its GAS head (following gpu_dev), checks the order, adds
 * `visitor`'s visit; *count nodes seen, *bad anomalies. */
__global__ void ol_list_visit(gpu_view v, unsigned long long head, unsigned visitor,
                              unsigned expect_visits, unsigned *count, unsigned *bad)
{
  unsigned i = 0, wrong = 0;
  for (ol_node *x = (ol_node *)gpu_dev(v, (void *)(uintptr_t)head); x;
       x = (ol_node *)gpu_dev(v, (void *)(uintptr_t)x->next), ++i) {
    if (x->index != i || x->visits != expect_visits) ++wrong;
    x->visits++;
    x->value += ol_mix(i, visitor);
  }
  *count = i;
  *bad = wrong;
}

/* One thread frees every node of the list (reading each link before the free). */
__global__ void ol_list_free(gpu_view v, unsigned long long head)
{
  ol_node *x = (ol_node *)gpu_dev(v, (void *)(uintptr_t)head);
  while (x) {
    ol_node *nx = (ol_node *)gpu_dev(v, (void *)(uintptr_t)x->next);
    dm_free(x);
    x = nx;
  }
}

/* A tree node: children and a pointer into the middle of its own payload block. */
typedef struct ol_tree {
  unsigned long long left, right;  /* GAS addresses, 0: none */
  unsigned long long data;         /* GAS address of payload + len / 2 */
  unsigned long long other;        /* a GAS address the kernel was given, stored as is */
  unsigned index, len;
} ol_tree;

/* Payload sizes: classes, coalesced sizes and multi-page runs. */
static __host__ __device__ inline unsigned ol_payload(unsigned i)
{
  unsigned x = i * 2654435761u;
  x ^= x >> 13;
  return x % 4u == 0u ? 1024u + x % 3000u : 16u + x % 500u;
}

/* Thread i: tree node i and its payload (filled); NULLs counted. */
__global__ void ol_tree_alloc(ol_tree **slots, unsigned char **payloads, unsigned n,
                              unsigned long long other, unsigned *nulls)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  ol_tree *t = (ol_tree *)dm_malloc(sizeof(ol_tree));
  unsigned len = ol_payload(i);
  unsigned char *p = (unsigned char *)dm_malloc(len);
  slots[i] = t;
  payloads[i] = p;
  if (!t || !p) {
    atomicAdd(nulls, 1u);
    return;
  }
  for (unsigned k = 0; k < len; ++k) p[k] = ol_byte(i, k);
  t->index = i;
  t->len = len;
  t->other = other;
}

/* Thread i: children 2i + 1 and 2i + 2, the interior data pointer; *root: node 0. */
__global__ void ol_tree_link(gpu_view v, ol_tree **slots, unsigned char **payloads, unsigned n,
                             unsigned long long *root)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || !slots[i]) return;
  ol_tree *t = slots[i];
  t->left = 2u * i + 1u < n ? (uintptr_t)gpu_gas(v, slots[2u * i + 1u]) : 0;
  t->right = 2u * i + 2u < n ? (uintptr_t)gpu_gas(v, slots[2u * i + 2u]) : 0;
  t->data = (uintptr_t)gpu_gas(v, payloads[i] ? payloads[i] + t->len / 2u : NULL);
  if (i == 0) *root = (uintptr_t)gpu_gas(v, t);
}

/* Launch shape for n threads. */
static inline unsigned ol_blocks(unsigned n) { return (n + 255u) / 256u; }

/* ---- checks on the CPU, with plain pointers ---- */

/* Walk a landed list from head: n nodes in index order, each inside [lo, lo + bytes), its
 * pattern intact, `visits` visits from visitors 1..visits (value), owner. Anomalies. */
static inline long ol_check_list(unsigned long long head, unsigned n, unsigned size,
                                 uintptr_t lo, size_t bytes, unsigned visits,
                                 unsigned long long owner)
{
  long bad = 0;
  unsigned i = 0;
  for (const ol_node *x = (const ol_node *)(uintptr_t)head; x && i <= n;
       x = (const ol_node *)(uintptr_t)x->next, ++i) {
    uintptr_t a = (uintptr_t)x;
    if (a < lo || a - lo + size > bytes || a % 16u) return bad + 1; /* not ours: stop */
    unsigned long long want = ol_mix(i, 0);
    for (unsigned v = 1; v <= visits; ++v) want += ol_mix(i, v);
    if (x->index != i || x->visits != visits || x->value != want || x->owner != owner) ++bad;
    const unsigned char *b = (const unsigned char *)x;
    for (size_t k = sizeof(ol_node); k < size; ++k)
      if (b[k] != ol_byte(i, k)) {
        ++bad;
        break;
      }
  }
  return bad + (i != n);
}

/* Add visitor `v`'s visit to every node of a landed list, on the CPU. Nodes seen. */
static inline unsigned ol_visit_list(unsigned long long head, unsigned v)
{
  unsigned i = 0;
  for (ol_node *x = (ol_node *)(uintptr_t)head; x; x = (ol_node *)(uintptr_t)x->next, ++i) {
    x->visits++;
    x->value += ol_mix(i, v);
  }
  return i;
}

/* Walk a landed tree of n nodes from root (depth first, by an explicit stack): every node
 * once, inside [lo, lo + bytes), its children's indices 2i+1 and 2i+2, its payload intact
 * around the interior pointer, `other` as given. Anomalies. */
static inline long ol_check_tree(unsigned long long root, unsigned n, uintptr_t lo,
                                 size_t bytes, unsigned long long other)
{
  long bad = 0;
  unsigned seen = 0, top = 0;
  /* pending nodes: their address and the index their parent expects */
  unsigned long long *stack = (unsigned long long *)malloc(2 * (n + 1) * sizeof *stack);
  if (!stack) return 1;
  if (root) {
    stack[0] = root;
    stack[1] = 0;
    top = 1;
  }
  while (top) {
    --top;
    const ol_tree *t = (const ol_tree *)(uintptr_t)stack[2 * top];
    unsigned i = (unsigned)stack[2 * top + 1];
    uintptr_t a = (uintptr_t)t;
    if (a < lo || a - lo + sizeof *t > bytes || ++seen > n) {
      ++bad;
      break;
    }
    if (t->index != i || t->len != ol_payload(i) || t->other != other) {
      ++bad;
      continue;
    }
    const unsigned char *mid = (const unsigned char *)(uintptr_t)t->data;
    if ((uintptr_t)mid < lo + t->len / 2u || (uintptr_t)mid - lo + (t->len - t->len / 2u) > bytes) {
      ++bad;
    } else {
      const unsigned char *p = mid - t->len / 2u;
      for (unsigned k = 0; k < t->len; ++k)
        if (p[k] != ol_byte(i, k)) {
          ++bad;
          break;
        }
    }
    const unsigned long long kids[2] = {t->left, t->right};
    for (unsigned c = 0; c < 2; ++c) {
      unsigned want = 2u * i + 1u + c;
      if (!kids[c]) {
        bad += want < n; /* a child missing */
      } else if (top < n) {
        stack[2 * top] = kids[c];
        stack[2 * top + 1] = want;
        ++top;
      }
    }
  }
  free(stack);
  return bad + (seen != n);
}

#endif /* OFFLOAD_KERNELS_CUH */

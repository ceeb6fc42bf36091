/* test_queues.cu: the two lock-free FIFOs of the device allocator, XMalloc's (fifo.cuh,
 * bounded, the one the class buffers use) and the Giersch-Nolte port (gnqueue.cuh), under
 * many producers and consumers at once: every value enqueued is dequeued exactly once,
 * nothing else comes out, and the Giersch-Nolte nodes are reclaimed (the rounds move far
 * more values than the pool holds, and after the final drain every node but each queue's
 * current one is free again). */
#include <vector>

#include "../../src/device/fifo.cuh"
#include "../../src/device/gnqueue.cuh"
#include "gpu_test.cuh"

#define NQ 64u              /* queues */
#define GN_PER 64u          /* Giersch-Nolte nodes per queue */

struct queues {
  dm_fifo x[NQ];
  gn_queue g[NQ];
  gn_pool pool[NQ];         /* one pool per queue: a queue's nodes come back to it */
};

__global__ void k_init(queues *qs, gn_node *nodes)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= NQ) return;
  dm_fifo_init(&qs->x[i], 0, 1);
  gn_init(&qs->g[i], &qs->pool[i], nodes + i * GN_PER, GN_PER);
}

template <bool GN> __device__ bool q_push(queues *qs, unsigned q, unsigned v)
{
  return GN ? gn_enqueue(&qs->g[q], v) : dm_fifo_push(&qs->x[q], v);
}
template <bool GN> __device__ bool q_pop(queues *qs, unsigned q, unsigned *v)
{
  return GN ? gn_dequeue(&qs->g[q], v) : dm_fifo_pop(&qs->x[q], v);
}

/* Thread t of round r enqueues r*n+t into queue t % NQ (noting a full queue), then tries a
 * few times to dequeue one value from the same queue and counts what it got. */
template <bool GN>
__global__ void k_round(queues *qs, unsigned n, unsigned r, unsigned *seen, unsigned *full)
{
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  unsigned q = t % NQ, v = r * n + t, got;
  if (!q_push<GN>(qs, q, v)) full[v] = 1;
  for (int k = 0; k < 4; ++k)
    if (q_pop<GN>(qs, q, &got)) {
      atomicAdd(&seen[got], 1u);
      break;
    }
}

/* One thread per queue takes what is left; then (Giersch-Nolte) counts the nodes that
 * are free again and that the protocol reclaimed. */
template <bool GN>
__global__ void k_drain(queues *qs, unsigned *seen, unsigned limit, unsigned long long *nodes)
{
  unsigned q = blockIdx.x * blockDim.x + threadIdx.x, got;
  if (q >= NQ) return;
  while (q_pop<GN>(qs, q, &got))
    if (got < limit) atomicAdd(&seen[got], 1u);
    else atomicAdd(&seen[limit], 1u);       /* a value nobody enqueued */
  if (GN) {
    atomicAdd(&nodes[0], (unsigned long long)gn_free_nodes(&qs->pool[q]));
    atomicAdd(&nodes[1], qs->pool[q].reclaimed);
  }
}

template <bool GN> static void every_value_comes_out_once(void)
{
  const unsigned n = 65536, rounds = 24, total = n * rounds;
  queues *qs;
  gn_node *nodes;
  unsigned *seen, *full;
  unsigned long long *dnodes, hn[2];
  GT_CUDA(cudaMalloc(&qs, sizeof *qs));
  GT_CUDA(cudaMalloc(&nodes, NQ * GN_PER * sizeof(gn_node)));
  GT_CUDA(cudaMalloc(&seen, (total + 1) * sizeof(unsigned)));
  GT_CUDA(cudaMalloc(&full, total * sizeof(unsigned)));
  GT_CUDA(cudaMemset(seen, 0, (total + 1) * sizeof(unsigned)));
  GT_CUDA(cudaMemset(full, 0, total * sizeof(unsigned)));
  GT_CUDA(cudaMalloc(&dnodes, 2 * sizeof(unsigned long long)));
  GT_CUDA(cudaMemset(dnodes, 0, 2 * sizeof(unsigned long long)));
  k_init<<<1, NQ>>>(qs, nodes);
  GT_SYNC();
  for (unsigned r = 0; r < rounds; ++r) {
    k_round<GN><<<n / 256, 256>>>(qs, n, r, seen, full);
    GT_CUDA(cudaGetLastError());
  }
  k_drain<GN><<<1, NQ>>>(qs, seen, total, dnodes);
  GT_SYNC();
  GT_CUDA(cudaMemcpy(hn, dnodes, sizeof hn, cudaMemcpyDeviceToHost));
  std::vector<unsigned> s(total + 1), f(total);
  GT_CUDA(cudaMemcpy(s.data(), seen, s.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  GT_CUDA(cudaMemcpy(f.data(), full, f.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
  size_t lost = 0, twice = 0, refused = 0;
  for (unsigned v = 0; v < total; ++v) {
    if (f[v]) { ++refused; twice += s[v] != 0; continue; }
    lost += s[v] == 0;
    twice += s[v] > 1;
  }
  printf("  %s: %u values, %zu refused (queue full), %zu lost, %zu twice, %u foreign\n",
         GN ? "giersch-nolte" : "xmalloc", total, refused, lost, twice, s[total]);
  GT_CHECK(lost == 0 && twice == 0 && s[total] == 0);
  if (GN) {
    printf("  giersch-nolte: %llu nodes reclaimed, %llu of %u free after the drain\n", hn[1],
           hn[0], NQ * GN_PER);
    GT_CHECK(hn[1] > 0);                      /* nodes were given back and reused */
    GT_CHECK(hn[0] >= NQ * (GN_PER - 2u));    /* all but the head/tail node of each queue */
  }
  /* Refusals are printed, not checked: with 1024 threads on one queue at once, XMalloc's
   * 62-entry FIFO and the 64-node Giersch-Nolte pool both fill (dequeuers that overtake
   * enqueuers abandon Giersch-Nolte slots, which burns nodes faster still). */
  cudaFree(qs);
  cudaFree(nodes);
  cudaFree(seen);
  cudaFree(full);
  cudaFree(dnodes);
}

static void test_xmalloc_fifo_gives_every_value_once(void) { every_value_comes_out_once<false>(); }
static void test_giersch_nolte_queue_gives_every_value_once(void)
{
  every_value_comes_out_once<true>();
}

int main(void)
{
  gt_require_gpu();
  GT_RUN(test_xmalloc_fifo_gives_every_value_once);
  GT_RUN(test_giersch_nolte_queue_gives_every_value_once);
  return gt_finish();
}

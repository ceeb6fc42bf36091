/* bench_queues.cu: the allocator's two lock-free FIFOs measured against each other:
 * XMalloc's sequence-numbered FIFO (fifo.cuh, what the class buffers use) and the CUDA port
 * of the Giersch-Nolte queue (gnqueue.cuh). 1M threads each enqueue one value and then
 * dequeue one, the traffic a free followed by a malloc puts on a class buffer, over 1024
 * queues (little contention, like the buffers) and over 32 (heavy contention). */
#include "bench.cuh"
#include "../../src/device/fifo.cuh"
#include "../../src/device/gnqueue.cuh"

static const unsigned THREADS = 1u << 20;

struct qset {
  dm_fifo *x;
  gn_queue *g;
  gn_pool *pool;
  gn_node *nodes;
  unsigned nq, per;
};

__global__ void k_init(qset s)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= s.nq) return;
  dm_fifo_init(&s.x[i], 0, 1);
  gn_init(&s.g[i], &s.pool[i], s.nodes + (size_t)i * s.per, s.per);
}

template <bool GN> __global__ void k_churn(qset s, unsigned *stats)
{
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x, q = t % s.nq, got;
  if (t >= THREADS) return;
  bool in = GN ? gn_enqueue(&s.g[q], t) : dm_fifo_push(&s.x[q], t);
  bool out = GN ? gn_dequeue(&s.g[q], &got) : dm_fifo_pop(&s.x[q], &got);
  if (!in) atomicAdd(&stats[0], 1u);       /* refused: queue full */
  if (!out) atomicAdd(&stats[1], 1u);      /* found it empty */
}

template <bool GN> __global__ void k_drain(qset s)
{
  unsigned q = blockIdx.x * blockDim.x + threadIdx.x, got;
  if (q >= s.nq) return;
  while (GN ? gn_dequeue(&s.g[q], &got) : dm_fifo_pop(&s.x[q], &got)) {
  }
}

template <bool GN> static float run(qset s, int reps, unsigned *stats, unsigned *hs)
{
  std::vector<float> t;
  BCUDA(cudaMemset(stats, 0, 2 * sizeof(unsigned)));
  for (int r = -1; r < reps; ++r) {
    float ms = time_once([&] { k_churn<GN><<<THREADS / 256, 256>>>(s, stats); });
    k_drain<GN><<<(s.nq + 63) / 64, 64>>>(s);
    BCUDA(cudaGetLastError());
    if (r >= 0) t.push_back(ms);
  }
  BCUDA(cudaMemcpy(hs, stats, 2 * sizeof(unsigned), cudaMemcpyDeviceToHost));
  return median(t);
}

int main(int argc, char **argv)
{
  bench_opts o = bench_parse(argc, argv, "dm-bench-queues", "",
      "XMalloc's FIFO vs the Giersch-Nolte queue, 1M threads each enqueue then dequeue one "
      "value, over 1024 and 32 queues", "results/device-queues.csv");
  std::string dev = device_name();
  table tb;
  tb.cols = {"device", "queues", "xmalloc_ms", "gn_ms", "xmalloc_ns_per_pair", "gn_ns_per_pair",
             "gn_over_xmalloc", "xmalloc_refused", "gn_refused", "xmalloc_empty", "gn_empty"};
  unsigned *stats;
  BCUDA(cudaMalloc(&stats, 2 * sizeof(unsigned)));
  for (unsigned nq : {1024u, 32u}) {
    qset s;
    s.nq = nq;
    s.per = std::max(64u, 16u * THREADS / nq / GN_SLOTS);
    BCUDA(cudaMalloc(&s.x, nq * sizeof(dm_fifo)));
    BCUDA(cudaMalloc(&s.g, nq * sizeof(gn_queue)));
    BCUDA(cudaMalloc(&s.pool, nq * sizeof(gn_pool)));
    BCUDA(cudaMalloc(&s.nodes, (size_t)nq * s.per * sizeof(gn_node)));
    k_init<<<(nq + 63) / 64, 64>>>(s);
    BCUDA(cudaGetLastError());
    unsigned xs[2], gs[2];
    float x = run<false>(s, o.reps, stats, xs);
    float g = run<true>(s, o.reps, stats, gs);
    double per = 1e6 / THREADS;
    tb.add({dev, fmt("%.0f", nq), fmt("%.3f", x), fmt("%.3f", g), fmt("%.2f", x * per),
            fmt("%.2f", g * per), fmt("%.2f", g / x), fmt("%.0f", xs[0]), fmt("%.0f", gs[0]),
            fmt("%.0f", xs[1]), fmt("%.0f", gs[1])});
    printf("queues %u: xmalloc %.3f ms, giersch-nolte %.3f ms (x%.2f)\n", nq, x, g, g / x);
    fflush(stdout);
    cudaFree(s.x);
    cudaFree(s.g);
    cudaFree(s.pool);
    cudaFree(s.nodes);
  }
  tb.print("queues: 1M threads x (enqueue one, dequeue one); medians in ms; refused and "
           "empty are summed over the warm-up and all reps");
  tb.write_csv(o.csv);
  return 0;
}

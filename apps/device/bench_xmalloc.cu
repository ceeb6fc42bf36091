/* bench_xmalloc.cu: benchmark 1 (XMalloc's): 1,048,576 worker threads each allocate an
 * int-sized object, write it and free it, with 1..32 worker lanes per warp (the other lanes
 * idle); time per allocation, ours against CUDA's device malloc in the same run. Also with
 * the heap pre-filled by 2^17 blocks of 1 KiB. */
#include "bench.cuh"

#define WORKERS (1u << 20)
#define HEAP_BYTES (512ull << 20)
#define PREFILL (1u << 17)

template <bool OURS> __global__ void k_work(unsigned lanes, int *sink)
{
  unsigned lane = threadIdx.x % 32u;
  if (lane >= lanes) return;
  int *p = (int *)b_alloc<OURS>(sizeof(int));
  if (!p) { atomicAdd(sink, 1); return; }
  *(volatile int *)p = (int)threadIdx.x;
  b_free<OURS>(p);
}

template <bool OURS> __global__ void k_prefill(void **keep, unsigned n)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) keep[i] = b_alloc<OURS>(1024);
}
template <bool OURS> __global__ void k_unfill(void **keep, unsigned n)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b_free<OURS>(keep[i]);
}

/* Median ms of the worker kernel with `lanes` workers per warp. */
template <bool OURS> static float run(unsigned lanes, int reps, int *sink)
{
  unsigned warps = WORKERS / lanes, block = 256;
  unsigned grid = (unsigned)(((unsigned long long)warps * 32u + block - 1) / block);
  std::vector<float> t;
  for (int r = -1; r < reps; ++r) {    /* r == -1: warm-up */
    float ms = time_once([&] { k_work<OURS><<<grid, block>>>(lanes, sink); });
    if (r >= 0) t.push_back(ms);
  }
  return median(t);
}

int main(int argc, char **argv)
{
  bench_opts o = bench_parse(argc, argv, "dm-bench-xmalloc", "",
      "benchmark 1, 1M threads allocate/write/free an int, 1..32 lanes per warp, dm_malloc vs "
      "CUDA malloc", "results/device-xmalloc.csv");
  BCUDA(cudaDeviceSetLimit(cudaLimitMallocHeapSize, HEAP_BYTES));
  dm_heap *h;
  BCUDA((cudaError_t)dm_heap_create(&h, HEAP_BYTES));
  int *sink;
  void **keep;
  BCUDA(cudaMalloc(&sink, 2 * sizeof(int)));
  BCUDA(cudaMemset(sink, 0, 2 * sizeof(int)));
  BCUDA(cudaMalloc(&keep, PREFILL * sizeof(void *)));
  std::string dev = device_name();
  table tb;
  tb.cols = {"device", "prefill", "lanes", "ours_ms", "cuda_ms", "ours_ns_per_alloc",
             "cuda_ns_per_alloc", "speedup", "ours_nulls", "cuda_nulls"};
  unsigned lanes_all[] = {1, 2, 4, 8, 16, 32}, quick[] = {1, 32};
  for (int pre = 0; pre < 2; ++pre) {
    if (pre) {
      k_prefill<true><<<PREFILL / 256, 256>>>(keep, PREFILL);
      BCUDA(cudaDeviceSynchronize());
    }
    void **keep_cuda = NULL;
    if (pre) {
      BCUDA(cudaMalloc(&keep_cuda, PREFILL * sizeof(void *)));
      k_prefill<false><<<PREFILL / 256, 256>>>(keep_cuda, PREFILL);
      BCUDA(cudaDeviceSynchronize());
    }
    unsigned nl = o.quick ? 2 : 6;
    for (unsigned i = 0; i < nl; ++i) {
      unsigned lanes = o.quick ? quick[i] : lanes_all[i];
      float ours = run<true>(lanes, o.reps, sink);
      float cuda = run<false>(lanes, o.reps, sink + 1);
      int nulls[2];
      BCUDA(cudaMemcpy(nulls, sink, sizeof nulls, cudaMemcpyDeviceToHost));
      BCUDA(cudaMemset(sink, 0, 2 * sizeof(int)));
      tb.add({dev, pre ? "2^17x1KiB" : "none", fmt("%.0f", lanes), fmt("%.3f", ours),
              fmt("%.3f", cuda), fmt("%.2f", ours * 1e6 / WORKERS),
              fmt("%.2f", cuda * 1e6 / WORKERS), fmt("%.1f", cuda / ours),
              fmt("%.0f", nulls[0]), fmt("%.0f", nulls[1])});
      printf("prefill=%d lanes=%u ours %.3f ms cuda %.3f ms (x%.1f)\n", pre, lanes, ours,
             cuda, cuda / ours);
      fflush(stdout);
    }
    if (pre) {
      k_unfill<true><<<PREFILL / 256, 256>>>(keep, PREFILL);
      k_unfill<false><<<PREFILL / 256, 256>>>(keep_cuda, PREFILL);
      BCUDA(cudaDeviceSynchronize());
      cudaFree(keep_cuda);
    }
  }
  tb.print("benchmark 1: 1M threads x (malloc int, write, free); time per allocation");
  tb.write_csv(o.csv);
  dm_heap_destroy(h);
  return 0;
}

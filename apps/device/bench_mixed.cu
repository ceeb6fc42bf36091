/* bench_mixed.cu: benchmark 3: every thread allocates a random size in 16 B .. 4 KiB and
 * writes it; a later kernel frees everything; ours against CUDA's device malloc in the
 * same run, allocation and free timed separately. */
#include "bench.cuh"

#define HEAP_BYTES (3ull << 30)

static __device__ unsigned rsize(unsigned i, unsigned rep)
{
  unsigned x = (i ^ (rep * 0x9e3779b9u)) * 2654435761u;
  x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
  return 16u + x % (4096u - 16u + 1u);
}

template <bool OURS> __global__ void k_alloc(void **keep, unsigned n, unsigned rep, int *nulls)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned s = rsize(i, rep);
  char *p = (char *)b_alloc<OURS>(s);
  if (p) { p[0] = 1; p[s - 1] = 2; } else atomicAdd(nulls, 1);
  keep[i] = p;
}
template <bool OURS> __global__ void k_free(void **keep, unsigned n)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b_free<OURS>(keep[i]);
}

template <bool OURS> static void run(void **keep, unsigned n, int reps, int *nulls,
                                     float *a_ms, float *f_ms)
{
  std::vector<float> ta, tf;
  unsigned g = (n + 255) / 256;
  for (int r = -1; r < reps; ++r) {
    float a = time_once([&] { k_alloc<OURS><<<g, 256>>>(keep, n, (unsigned)(r + 1), nulls); });
    float f = time_once([&] { k_free<OURS><<<g, 256>>>(keep, n); });
    if (r >= 0) { ta.push_back(a); tf.push_back(f); }
  }
  *a_ms = median(ta);
  *f_ms = median(tf);
}

int main(int argc, char **argv)
{
  bench_opts o = bench_parse(argc, argv, "dm-bench-mixed", "",
      "benchmark 3, random sizes 16 B..4 KiB allocated, freed in a later kernel, dm_malloc vs "
      "CUDA malloc", "results/device-mixed.csv");
  BCUDA(cudaDeviceSetLimit(cudaLimitMallocHeapSize, HEAP_BYTES));
  dm_heap *h;
  BCUDA((cudaError_t)dm_heap_create(&h, HEAP_BYTES));
  void **keep;
  int *nulls;
  BCUDA(cudaMalloc(&keep, (1u << 20) * sizeof(void *)));
  BCUDA(cudaMalloc(&nulls, 2 * sizeof(int)));
  BCUDA(cudaMemset(nulls, 0, 2 * sizeof(int)));
  std::string dev = device_name();
  table tb;
  tb.cols = {"device", "threads", "ours_alloc_ms", "cuda_alloc_ms", "alloc_speedup",
             "ours_free_ms", "cuda_free_ms", "free_speedup", "ours_nulls", "cuda_nulls"};
  std::vector<unsigned> threads = {1u << 16, 1u << 18, 1u << 20};
  if (o.quick) threads = {1u << 16, 1u << 18};
  for (unsigned n : threads) {
    float oa, of, ca, cf;
    run<true>(keep, n, o.reps, nulls, &oa, &of);
    run<false>(keep, n, o.reps, nulls + 1, &ca, &cf);
    int nn[2];
    BCUDA(cudaMemcpy(nn, nulls, sizeof nn, cudaMemcpyDeviceToHost));
    BCUDA(cudaMemset(nulls, 0, 2 * sizeof(int)));
    tb.add({dev, fmt("%.0f", n), fmt("%.3f", oa), fmt("%.3f", ca), fmt("%.1f", ca / oa),
            fmt("%.3f", of), fmt("%.3f", cf), fmt("%.1f", cf / of), fmt("%.0f", nn[0]),
            fmt("%.0f", nn[1])});
    printf("threads %u: alloc ours %.3f cuda %.3f | free ours %.3f cuda %.3f ms\n", n, oa,
           ca, of, cf);
    fflush(stdout);
  }
  tb.print("benchmark 3: mixed sizes 16 B..4 KiB, free in a later kernel; medians in ms");
  tb.write_csv(o.csv);
  dm_heap_destroy(h);
  return 0;
}

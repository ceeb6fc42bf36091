/* bench_pham.cu: benchmark 2 (Pham et al.'s): every thread allocates one object without
 * freeing it (sizes 16 B .. 8 KiB, 2^16 .. 2^22 threads), then a second kernel frees them;
 * allocation and free timed separately, ours against CUDA's device malloc in the same run.
 * Combinations above 1 GiB of requests are skipped (the heaps are 3 GiB each), and CUDA's
 * malloc is skipped (nan) where its previous time predicts more than 4 s a run. */
#include <math.h>

#include "bench.cuh"

#define HEAP_BYTES (3ull << 30)
#define MAX_BYTES (1ull << 30)

template <bool OURS> __global__ void k_alloc(void **keep, unsigned n, unsigned size, int *nulls)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  char *p = (char *)b_alloc<OURS>(size);
  if (p) *(volatile char *)p = 1; else atomicAdd(nulls, 1);
  keep[i] = p;
}
template <bool OURS> __global__ void k_free(void **keep, unsigned n)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) b_free<OURS>(keep[i]);
}

template <bool OURS> static void run(void **keep, unsigned n, unsigned size, int reps,
                                     int *nulls, float *a_ms, float *f_ms)
{
  std::vector<float> ta, tf;
  unsigned g = (n + 255) / 256;
  for (int r = -1; r < reps; ++r) {
    float a = time_once([&] { k_alloc<OURS><<<g, 256>>>(keep, n, size, nulls); });
    float f = time_once([&] { k_free<OURS><<<g, 256>>>(keep, n); });
    if (r >= 0) { ta.push_back(a); tf.push_back(f); }
    if (r == -1 && a + f > 1000.0f) reps = 1;   /* slow (CUDA malloc): one timed run */
  }
  *a_ms = median(ta);
  *f_ms = median(tf);
}

int main(int argc, char **argv)
{
  bench_opts o = bench_parse(argc, argv, "dm-bench-pham", "",
      "benchmark 2, allocation without immediate free (16 B..8 KiB, 2^16..2^22 threads), "
      "alloc and free timed apart, dm_malloc vs CUDA malloc", "results/device-pham.csv");
  BCUDA(cudaDeviceSetLimit(cudaLimitMallocHeapSize, HEAP_BYTES));
  dm_heap *h;
  BCUDA((cudaError_t)dm_heap_create(&h, HEAP_BYTES));
  void **keep;
  int *nulls;
  BCUDA(cudaMalloc(&keep, (1u << 22) * sizeof(void *)));
  BCUDA(cudaMalloc(&nulls, 2 * sizeof(int)));
  BCUDA(cudaMemset(nulls, 0, 2 * sizeof(int)));
  std::string dev = device_name();
  table tb;
  tb.cols = {"device", "size", "threads", "ours_alloc_ms", "cuda_alloc_ms", "alloc_speedup",
             "ours_free_ms", "cuda_free_ms", "free_speedup", "ours_nulls", "cuda_nulls"};
  std::vector<unsigned> sizes = {16, 64, 256, 1024, 4096, 8192};
  std::vector<unsigned> threads = {1u << 16, 1u << 18, 1u << 20, 1u << 22};
  if (o.quick) { sizes = {16, 1024, 8192}; threads = {1u << 16, 1u << 20}; }
  for (unsigned s : sizes) {
    float prev = 0;        /* CUDA's alloc+free ms at the previous thread count */
    unsigned prev_n = 0;
    for (unsigned n : threads) {
      if ((unsigned long long)s * n > MAX_BYTES) continue;
      float oa, of, ca = NAN, cf = NAN;
      run<true>(keep, n, s, o.reps, nulls, &oa, &of);
      /* CUDA malloc grows about linearly: skip it where that predicts over 4 s a run */
      if (!prev_n || prev * (float)n / (float)prev_n < 4000.0f) {
        run<false>(keep, n, s, o.reps, nulls + 1, &ca, &cf);
        prev = ca + cf;
        prev_n = n;
      }
      int nn[2];
      BCUDA(cudaMemcpy(nn, nulls, sizeof nn, cudaMemcpyDeviceToHost));
      BCUDA(cudaMemset(nulls, 0, 2 * sizeof(int)));
      tb.add({dev, fmt("%.0f", s), fmt("%.0f", n), fmt("%.3f", oa), fmt("%.3f", ca),
              fmt("%.1f", ca / oa), fmt("%.3f", of), fmt("%.3f", cf), fmt("%.1f", cf / of),
              fmt("%.0f", nn[0]), fmt("%.0f", nn[1])});
      printf("size %u threads %u: alloc ours %.3f cuda %.3f | free ours %.3f cuda %.3f ms\n",
             s, n, oa, ca, of, cf);
      fflush(stdout);
    }
  }
  tb.print("benchmark 2: allocate (no free), then free in a later kernel; medians in ms");
  tb.write_csv(o.csv);
  dm_heap_destroy(h);
  return 0;
}

/* bench_exhaust.cu: benchmark 4: 65,536 threads allocate until they get NULL; reports the
 * bytes obtained over the heap size (utilisation), that every thread returned, and the
 * time; ours against CUDA's device malloc in the same run, over heaps of the same size.
 * Our metadata lives apart from the arena; its size is reported beside the ratio. */
#include "bench.cuh"

static size_t HEAP_BYTES = 128ull << 20;   /* --small: 8 MiB and 2048 threads */
static unsigned THREADS = 65536u;

static __device__ unsigned size_of(unsigned size, unsigned t, unsigned k)
{
  if (size) return size;
  unsigned x = (t * 2654435761u) ^ (k * 0x9e3779b9u);
  x ^= x >> 15; x *= 0x2c1b3c6du; x ^= x >> 12;
  return 16u + x % (4096u - 16u + 1u);
}

template <bool OURS>
__global__ void k_fill(void **keep, unsigned cap, unsigned size, unsigned long long *bytes,
                       unsigned *done, unsigned threads)
{
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  unsigned long long got = 0;
  unsigned k = 0;
  for (; k < cap; ++k) {
    unsigned s = size_of(size, t, k);
    char *p = (char *)b_alloc<OURS>(s);
    keep[(size_t)t * cap + k] = p;
    if (!p) break;
    p[0] = 1;
    got += s;
  }
  for (unsigned j = k + 1; j < cap; ++j) keep[(size_t)t * cap + j] = NULL;
  atomicAdd(bytes, got);
  atomicAdd(done, 1u);
}

template <bool OURS> __global__ void k_free_all(void **keep, size_t n)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    if (keep[i]) b_free<OURS>(keep[i]);
}

template <bool OURS> static void run(void **keep, unsigned cap, unsigned size,
                                     unsigned long long *dbytes, unsigned *ddone,
                                     double *util, unsigned *done, float *ms)
{
  BCUDA(cudaMemset(dbytes, 0, sizeof *dbytes));
  BCUDA(cudaMemset(ddone, 0, sizeof *ddone));
  *ms = time_once([&] { k_fill<OURS><<<THREADS / 256, 256>>>(keep, cap, size, dbytes, ddone, THREADS); });
  unsigned long long b;
  BCUDA(cudaMemcpy(&b, dbytes, sizeof b, cudaMemcpyDeviceToHost));
  BCUDA(cudaMemcpy(done, ddone, sizeof *done, cudaMemcpyDeviceToHost));
  *util = (double)b / (double)HEAP_BYTES;
  k_free_all<OURS><<<1024, 256>>>(keep, (size_t)THREADS * cap);
  BCUDA(cudaGetLastError());
  BCUDA(cudaDeviceSynchronize());
}

int main(int argc, char **argv)
{
  int n = 1, only = -1;                      /* --small, --size N: for compute-sanitizer */
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], "--small")) {
      HEAP_BYTES = 8ull << 20;
      THREADS = 2048;
    } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
      only = atoi(argv[++i]);
    } else {
      argv[n++] = argv[i];
    }
  argc = n;
  bench_opts o = bench_parse(argc, argv, "dm-bench-exhaust", " [--small] [--size N]",
      "benchmark 4, 65536 threads allocate until NULL; utilisation = bytes obtained / heap "
      "size; dm_malloc vs CUDA malloc (128 MiB heaps; --small: 8 MiB, 2048 threads, for "
      "compute-sanitizer; --size N: that size only)",
      "results/device-exhaust.csv");
  BCUDA(cudaDeviceSetLimit(cudaLimitMallocHeapSize, HEAP_BYTES));
  std::vector<unsigned> sizes = {16, 64, 256, 1000, 4096, 0};
  if (o.quick) sizes = {16, 4096, 0};
  if (only >= 0) sizes = {(unsigned)only};
  size_t cap_max = HEAP_BYTES / 16 / THREADS * 2 + 8;
  void **keep;
  unsigned long long *dbytes;
  unsigned *ddone;
  BCUDA(cudaMalloc(&keep, (size_t)THREADS * cap_max * sizeof(void *)));
  BCUDA(cudaMalloc(&dbytes, sizeof *dbytes));
  BCUDA(cudaMalloc(&ddone, sizeof *ddone));
  std::string dev = device_name();
  table tb;
  tb.cols = {"device", "size", "ours_util", "cuda_util", "ours_returned", "cuda_returned",
             "ours_ms", "cuda_ms", "ours_meta_MiB"};
  for (unsigned s : sizes) {
    unsigned cap = (unsigned)(HEAP_BYTES / (s ? s : 16) / THREADS * 2 + 8);
    dm_heap *h;
    BCUDA((cudaError_t)dm_heap_create(&h, HEAP_BYTES));   /* a fresh heap each size */
    double ou, cu;
    unsigned od, cd;
    float oms, cms;
    run<true>(keep, cap, s, dbytes, ddone, &ou, &od, &oms);
    dm_stats st;
    BCUDA((cudaError_t)dm_heap_stats(h, &st));
    dm_heap_destroy(h);
    run<false>(keep, cap, s, dbytes, ddone, &cu, &cd, &cms);
    tb.add({dev, s ? fmt("%.0f", s) : std::string("16..4096"), fmt("%.4f", ou),
            fmt("%.4f", cu), fmt("%.0f", od), fmt("%.0f", cd), fmt("%.3f", oms),
            fmt("%.3f", cms), fmt("%.2f", st.meta_bytes / 1048576.0)});
    printf("size %u: util ours %.4f cuda %.4f, returned %u/%u and %u/%u\n", s, ou, cu, od,
           THREADS, cd, THREADS);
    fflush(stdout);
  }
  tb.print("benchmark 4: allocate until NULL (same heap size for both)");
  tb.write_csv(o.csv);
  return 0;
}

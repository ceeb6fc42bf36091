/* bench.cuh: shared parts of the device-allocator benchmarks: options (--help, --csv,
 * --reps, --quick), CUDA error checks, event timing with warm-up and median, the
 * allocator switch (ours or CUDA's built-in malloc) and the table/CSV writer. */
#ifndef DM_BENCH_CUH
#define DM_BENCH_CUH

#include <algorithm>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

#include "antheap_device.h"

#define BCUDA(call)                                                                   \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                   \
              cudaGetErrorString(e_));                                                \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

/* Which allocator a kernel uses: OURS = dm_malloc/dm_free, else CUDA's malloc/free. */
template <bool OURS> __device__ __forceinline__ void *b_alloc(size_t s)
{
  return OURS ? dm_malloc(s) : malloc(s);
}
template <bool OURS> __device__ __forceinline__ void b_free(void *p)
{
  if (OURS) dm_free(p); else free(p);
}

struct bench_opts {
  const char *csv;
  int reps;
  int quick;
};

/* Parse the common options; for --help (before any CUDA call, so it works without a GPU)
 * prints a usage line for prog with `more` (its own options, "" for none), the line `what`
 * and the common options, and exits 0. */
static inline bench_opts bench_parse(int argc, char **argv, const char *prog, const char *more,
                                     const char *what, const char *def_csv)
{
  bench_opts o = {def_csv, 5, 0};
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf("usage: %s [--csv PATH] [--reps N] [--quick]%s\n  %s\noptions:\n"
             "  --csv PATH   write the results there (default %s)\n"
             "  --reps N     timed repetitions, median reported (default 5)\n"
             "  --quick      fewer sizes and thread counts\n  --help\n", prog, more, what, def_csv);
      exit(0);
    } else if (!strcmp(argv[i], "--csv") && i + 1 < argc) {
      o.csv = argv[++i];
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
      o.reps = atoi(argv[++i]);
      if (o.reps < 1) o.reps = 1;
    } else if (!strcmp(argv[i], "--quick")) {
      o.quick = 1;
    } else {
      fprintf(stderr, "unknown option %s (try --help)\n", argv[i]);
      exit(2);
    }
  }
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    fprintf(stderr, "no CUDA device\n");
    exit(77);
  }
  return o;
}

/* Milliseconds of one run of `f` (which launches work), timed with events. */
template <class F> static float time_once(F f)
{
  cudaEvent_t a, b;
  BCUDA(cudaEventCreate(&a));
  BCUDA(cudaEventCreate(&b));
  BCUDA(cudaEventRecord(a));
  f();
  BCUDA(cudaGetLastError());
  BCUDA(cudaEventRecord(b));
  BCUDA(cudaEventSynchronize(b));
  float ms = 0;
  BCUDA(cudaEventElapsedTime(&ms, a, b));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms;
}

static inline float median(std::vector<float> v)
{
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

/* Rows of a result table, printed aligned and written as CSV. */
struct table {
  std::vector<std::string> cols;
  std::vector<std::vector<std::string> > rows;
  void add(std::vector<std::string> r) { rows.push_back(r); }
  void print(const char *title) const
  {
    std::vector<size_t> w(cols.size());
    for (size_t c = 0; c < cols.size(); ++c) {
      w[c] = cols[c].size();
      for (size_t r = 0; r < rows.size(); ++r) w[c] = std::max(w[c], rows[r][c].size());
    }
    printf("\n%s\n", title);
    for (size_t c = 0; c < cols.size(); ++c) printf("%*s  ", (int)w[c], cols[c].c_str());
    printf("\n");
    for (size_t r = 0; r < rows.size(); ++r) {
      for (size_t c = 0; c < cols.size(); ++c) printf("%*s  ", (int)w[c], rows[r][c].c_str());
      printf("\n");
    }
    fflush(stdout);
  }
  void write_csv(const char *path) const
  {
    FILE *f = fopen(path, "w");
    if (!f) {
      fprintf(stderr, "cannot write %s\n", path);
      return;
    }
    for (size_t c = 0; c < cols.size(); ++c) fprintf(f, "%s%s", c ? "," : "", cols[c].c_str());
    fprintf(f, "\n");
    for (size_t r = 0; r < rows.size(); ++r) {
      for (size_t c = 0; c < cols.size(); ++c)
        fprintf(f, "%s%s", c ? "," : "", rows[r][c].c_str());
      fprintf(f, "\n");
    }
    fclose(f);
    printf("wrote %s\n", path);
  }
};

static inline std::string fmt(const char *f, double v)
{
  char b[64];
  snprintf(b, sizeof b, f, v);
  return b;
}

/* Name of device 0, for the tables. */
static inline std::string device_name(void)
{
  cudaDeviceProp p;
  BCUDA(cudaGetDeviceProperties(&p, 0));
  return p.name;
}

#endif /* DM_BENCH_CUH */

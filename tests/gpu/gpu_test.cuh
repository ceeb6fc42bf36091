/* gpu_test.cuh: a minimal test harness for the GPU tests: one PASS/FAIL line per test,
 * a closing "N passed, N failed" line, and exit code 77 (ctest: skipped) where no CUDA
 * device is present. Checks are plain assertions on the host side. */
#ifndef GPU_TEST_CUH
#define GPU_TEST_CUH

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

static int gt_failed_now, gt_passed, gt_failed;

/* Fail the current test (and leave it) when cond is false. */
#define GT_CHECK(cond)                                                              \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      fprintf(stderr, "  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);    \
      gt_failed_now = 1;                                                            \
      return;                                                                       \
    }                                                                               \
  } while (0)

/* A CUDA call or launch that must succeed. */
#define GT_CUDA(call)                                                               \
  do {                                                                              \
    cudaError_t e_ = (call);                                                        \
    if (e_ != cudaSuccess) {                                                        \
      fprintf(stderr, "  %s:%d: %s: %s\n", __FILE__, __LINE__, #call,               \
              cudaGetErrorString(e_));                                              \
      gt_failed_now = 1;                                                            \
      return;                                                                       \
    }                                                                               \
  } while (0)

/* Check a launch and wait for it. */
#define GT_SYNC() GT_CUDA(cudaGetLastError()); GT_CUDA(cudaDeviceSynchronize())

/* Run one test and report it. */
#define GT_RUN(fn)                                                                  \
  do {                                                                              \
    gt_failed_now = 0;                                                              \
    fn();                                                                           \
    printf("%s %s\n", gt_failed_now ? "FAIL" : "PASS", #fn);                        \
    fflush(stdout);                                                                 \
    if (gt_failed_now) ++gt_failed; else ++gt_passed;                               \
  } while (0)

/* Exit 77 (skipped) where there is no usable CUDA device. */
static void gt_require_gpu(void)
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    printf("SKIP: no CUDA device\n");
    exit(77);
  }
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) == cudaSuccess)
    printf("device: %s (sm_%d%d)\n", p.name, p.major, p.minor);
}

/* Print the summary line; the process's exit code. */
static int gt_finish(void)
{
  printf("%d passed, %d failed\n", gt_passed, gt_failed);
  return gt_failed ? 1 : 0;
}

#endif /* GPU_TEST_CUH */

/* test_misuse.cu: wrong usage against the debug build of the allocator (DM_DEBUG): double
 * frees of blocks, compartments and runs, and foreign pointers, are counted in
 * dm_stats.bad_frees and ignored, and the heap keeps working afterwards. */
#include "antheap_device.h"
#include "gpu_test.cuh"

__global__ void k_alloc_n(char **out, size_t size)
{
  out[blockIdx.x * blockDim.x + threadIdx.x] = (char *)dm_malloc(size);
}
__global__ void k_free_n(char **p) { dm_free(p[blockIdx.x * blockDim.x + threadIdx.x]); }
__global__ void k_free_ptr(void *p) { dm_free(p); }

/* In a fresh 1 MiB heap: allocate `threads` objects of `size` in one block (coalesced when
 * threads > 1), free them, free the first again; the second free must be the one bad free. */
static void double_free_is_detected(unsigned threads, size_t size)
{
  dm_heap *h;
  char **dp, *first;
  dm_stats a, b;
  GT_CHECK(dm_heap_create(&h, 1u << 20) == 0);
  GT_CUDA(cudaMalloc(&dp, threads * sizeof(char *)));
  k_alloc_n<<<1, threads>>>(dp, size);
  GT_SYNC();
  GT_CUDA(cudaMemcpy(&first, dp, sizeof first, cudaMemcpyDeviceToHost));
  GT_CHECK(first != NULL);
  k_free_n<<<1, threads>>>(dp);
  GT_SYNC();
  GT_CHECK(dm_heap_stats(h, &a) == 0);
  k_free_ptr<<<1, 1>>>(first);
  GT_SYNC();
  GT_CHECK(dm_heap_stats(h, &b) == 0);
  GT_CHECK(b.bad_frees - a.bad_frees == 1);
  cudaFree(dp);
  dm_heap_destroy(h);
}

static void test_library_is_the_debug_build(void)
{
  dm_heap *h;
  GT_CHECK(dm_heap_create(&h, 1u << 20) == 0);
  dm_stats st;
  GT_CHECK(dm_heap_stats(h, &st) == 0);
  GT_CHECK(st.debug == 1);
  dm_heap_destroy(h);
}

static void test_double_free_of_a_block_is_detected(void) { double_free_is_detected(1, 100); }
/* 32 lanes at once: one coalesced area */
static void test_double_free_of_a_compartment_is_detected(void) { double_free_is_detected(32, 8); }
static void test_double_free_of_a_run_is_detected(void) { double_free_is_detected(1, 5000); }

static void test_foreign_pointers_are_detected_and_ignored(void)
{
  dm_heap *h;
  GT_CHECK(dm_heap_create(&h, 1u << 20) == 0);
  char **dp, *p;
  void *other;
  GT_CUDA(cudaMalloc(&dp, sizeof(char *)));
  GT_CUDA(cudaMalloc(&other, 64));
  k_alloc_n<<<1, 1>>>(dp, 256);
  GT_SYNC();
  GT_CUDA(cudaMemcpy(&p, dp, sizeof p, cudaMemcpyDeviceToHost));
  GT_CHECK(p != NULL);
  void *base;
  size_t bytes;
  dm_heap_range(h, &base, &bytes);
  k_free_ptr<<<1, 1>>>(other);                       /* outside the heap */
  k_free_ptr<<<1, 1>>>(p + 16);                      /* inside a block */
  k_free_ptr<<<1, 1>>>(p + 3);                       /* misaligned */
  k_free_ptr<<<1, 1>>>((char *)base + bytes - 1024); /* a page nobody holds */
  GT_SYNC();
  dm_stats st;
  GT_CHECK(dm_heap_stats(h, &st) == 0);
  GT_CHECK(st.bad_frees == 4);
  k_free_ptr<<<1, 1>>>(p);                           /* the real one still frees fine */
  k_alloc_n<<<1, 1>>>(dp, 256);
  GT_SYNC();
  GT_CUDA(cudaMemcpy(&p, dp, sizeof p, cudaMemcpyDeviceToHost));
  GT_CHECK(p != NULL);
  GT_CHECK(dm_heap_stats(h, &st) == 0);
  GT_CHECK(st.bad_frees == 4);
  cudaFree(other);
  cudaFree(dp);
  dm_heap_destroy(h);
}

int main(void)
{
  gt_require_gpu();
  GT_RUN(test_library_is_the_debug_build);
  GT_RUN(test_double_free_of_a_block_is_detected);
  GT_RUN(test_double_free_of_a_compartment_is_detected);
  GT_RUN(test_double_free_of_a_run_is_detected);
  GT_RUN(test_foreign_pointers_are_detected_and_ignored);
  return gt_finish();
}

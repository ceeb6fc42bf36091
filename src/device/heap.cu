/* heap.cu: the host side of a device heap: create (metadata by cudaMalloc, the arena too or
 * the caller's), make current, read statistics, destroy. The only file of the
 * allocator that calls the CUDA runtime API. */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "antheap_device.h"
#include "fifo.cuh"
#include "types.cuh"

extern DM_HEAP_SPACE dm_heap_dev dm_heap_g;
__global__ void dm_trim_kernel(void);   /* group.cu */

struct dm_heap {
  dm_heap_dev d;        /* what kernels see */
  void *arena, *meta;
  size_t meta_bytes;
  bool owns_arena;      /* false: the caller's memory (dm_heap_create_over) */
};

/* Round up to 256 bytes, the alignment of every metadata array. */
static size_t dm_round(size_t n) { return (n + 255u) & ~(size_t)255u; }

/* Empty buffers and lone-lane slots, and the bitmap bits past the last page set so nobody
 * takes them. */
static __global__ void dm_init_kernel(dm_heap_dev d)
{
  unsigned nfifo = DM_NCLASS * DM_NFIFO;
  for (unsigned f = blockIdx.x; f < nfifo; f += gridDim.x)
    dm_fifo_init(&d.fifo[f], threadIdx.x, blockDim.x);
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < d.nslot * DM_SLOT_STRIDE;
       i += gridDim.x * blockDim.x)
    d.slot[i] = DM_SLOT_EMPTY;
  if (blockIdx.x == 0 && threadIdx.x == 0 && (d.npages % 32u) != 0)
    d.bitmap[d.nwords - 1u] = ~0u << (d.npages % 32u);
}

/* Build a heap over `arena` (NULL: cudaMalloc one of `bytes`, owned by the heap). */
static int dm_heap_build(dm_heap **out, void *arena, size_t bytes)
{
  *out = NULL;
  size_t npages = bytes >> DM_PAGE_SHIFT;
  if (npages < 1 || npages > (1ull << 30) || npages * DM_PAGE_BYTES / DM_ALIGN > 0xffffffffull)
    return (int)cudaErrorInvalidValue;
  if ((uintptr_t)arena % DM_PAGE_BYTES != 0) return (int)cudaErrorInvalidValue;
  dm_heap *h = (dm_heap *)calloc(1, sizeof *h);
  if (!h) return (int)cudaErrorMemoryAllocation;
  h->owns_arena = arena == NULL;
  h->arena = arena;
  unsigned nwords = (unsigned)((npages + 31u) / 32u);
  /* a lone-lane slot per hardware warp slot of the current device */
  int dev = 0, nsm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      nsm < 1)
    nsm = 132;
  unsigned nslot = (unsigned)nsm * DM_SLOT_WARPS;
  size_t o_bitmap = 0;
  size_t o_pinfo = o_bitmap + dm_round(nwords * sizeof(unsigned));
  size_t o_pkind = o_pinfo + dm_round(npages * sizeof(unsigned));
  size_t o_count = o_pkind + dm_round(npages);
  size_t o_live = o_count + dm_round(npages * sizeof(int));
  /* the live bits of class blocks: debug builds only (their double-free check) */
  size_t live_bytes = DM_CHECKS ? dm_round(npages * DM_BLOCK_WORDS * sizeof(unsigned)) : 0;
  size_t o_fifo = o_live + live_bytes;
  size_t o_slot = o_fifo + dm_round(DM_NCLASS * DM_NFIFO * sizeof(dm_fifo));
  size_t o_ctr = o_slot + dm_round((size_t)nslot * DM_SLOT_STRIDE * sizeof(unsigned long long));
  h->meta_bytes = o_ctr + dm_round(sizeof(dm_counters));
  cudaError_t e = cudaSuccess;
  if (h->owns_arena) e = cudaMalloc(&h->arena, npages * DM_PAGE_BYTES);
  if (e == cudaSuccess) e = cudaMalloc(&h->meta, h->meta_bytes);
  if (e == cudaSuccess) e = cudaMemset(h->meta, 0, h->meta_bytes);
  if (e != cudaSuccess) {
    dm_heap_destroy(h);
    return (int)e;
  }
  char *m = (char *)h->meta;
  h->d.base = (char *)h->arena;
  h->d.bytes = (unsigned long long)npages * DM_PAGE_BYTES;
  h->d.npages = (unsigned)npages;
  h->d.nwords = nwords;
  h->d.bitmap = (unsigned *)(m + o_bitmap);
  h->d.pinfo = (unsigned *)(m + o_pinfo);
  h->d.pkind = (unsigned char *)(m + o_pkind);   /* zeroed: every page DM_PI_FREE */
  h->d.blockcount = (int *)(m + o_count);
  h->d.live = DM_CHECKS ? (unsigned *)(m + o_live) : NULL;
  h->d.fifo = (dm_fifo *)(m + o_fifo);
  h->d.slot = (unsigned long long *)(m + o_slot);
  h->d.nslot = nslot;
  h->d.ctr = (dm_counters *)(m + o_ctr);
  dm_init_kernel<<<128, 128>>>(h->d);
  e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = (cudaError_t)dm_heap_use(h);
  if (e != cudaSuccess) {
    dm_heap_destroy(h);
    return (int)e;
  }
  *out = h;
  return 0;
}

int dm_heap_create(dm_heap **out, size_t bytes)
{
  return dm_heap_build(out, NULL, bytes);
}

int dm_heap_create_over(dm_heap **out, void *arena, size_t bytes)
{
  if (!arena) {
    *out = NULL;
    return (int)cudaErrorInvalidValue;
  }
  return dm_heap_build(out, arena, bytes);
}

int dm_heap_use(dm_heap *h)
{
  return (int)cudaMemcpyToSymbol(dm_heap_g, &h->d, sizeof h->d);
}

void dm_heap_destroy(dm_heap *h)
{
  if (!h) return;
  dm_heap_dev none;
  memset(&none, 0, sizeof none);
  dm_heap_dev cur;
  if (cudaMemcpyFromSymbol(&cur, dm_heap_g, sizeof cur) == cudaSuccess && cur.base == h->d.base)
    cudaMemcpyToSymbol(dm_heap_g, &none, sizeof none);
  if (h->arena && h->owns_arena) cudaFree(h->arena);
  if (h->meta) cudaFree(h->meta);
  free(h);
}

int dm_heap_trim(dm_heap *h)
{
  cudaError_t e = (cudaError_t)dm_heap_use(h);
  /* one thread per buffer and one per slot word (group.cu) */
  unsigned threads = h->d.nslot * DM_SLOT_STRIDE;
  if (threads < DM_NCLASS * DM_NFIFO) threads = DM_NCLASS * DM_NFIFO;
  if (e == cudaSuccess) {
    dm_trim_kernel<<<(threads + 127u) / 128u, 128>>>();
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  return (int)e;
}

int dm_heap_stats(const dm_heap *h, dm_stats *st)
{
  memset(st, 0, sizeof *st);
  unsigned *bm = (unsigned *)malloc(h->d.nwords * sizeof(unsigned));
  if (!bm) return (int)cudaErrorMemoryAllocation;
  dm_counters c;
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess)
    e = cudaMemcpy(bm, h->d.bitmap, h->d.nwords * sizeof(unsigned), cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(&c, h->d.ctr, sizeof c, cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) {
    size_t used = 0;
    for (unsigned w = 0; w < h->d.nwords; ++w) used += (size_t)__builtin_popcount(bm[w]);
    used -= (size_t)h->d.nwords * 32u - h->d.npages;   /* the padding bits */
    st->heap_bytes = h->d.bytes;
    st->meta_bytes = h->meta_bytes;
    st->page_bytes = DM_PAGE_BYTES;
    st->pages_total = h->d.npages;
    st->pages_used = used;
    st->nulls = c.nulls;
    st->bad_frees = c.bad_frees;
    st->runs = c.runs;
    st->drains = c.drains;
    st->broken = c.broken;
    st->debug = DM_CHECKS;
  }
  free(bm);
  return (int)e;
}

void dm_heap_range(const dm_heap *h, void **base, size_t *bytes)
{
  *base = h->d.base;
  *bytes = h->d.bytes;
}

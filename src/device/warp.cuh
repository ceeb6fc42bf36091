/* warp.cuh: small warp-level helpers shared by the layers: lane numbers, the k-th set bit
 * of a mask (Pham et al.'s fks), per-lane random numbers, the buffer hash, the fences and
 * bitmap reductions (RED) of the page layer, reductions and the exclusive prefix sum across
 * an arbitrary set of lanes. Written for independent thread scheduling: every *_sync call
 * names exactly the lanes that execute it. */
#ifndef DM_WARP_CUH
#define DM_WARP_CUH

#include "types.cuh"

/* A coherent read of a metadata word other threads change: relaxed at GPU scope (a
 * volatile read would be system scope, and slower). */
static __device__ __forceinline__ unsigned dm_ld(const unsigned *p)
{
  unsigned v;
  asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
static __device__ __forceinline__ unsigned long long dm_ld64(const unsigned long long *p)
{
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

/* The same for a byte (a page's pkind, types.cuh). */
static __device__ __forceinline__ unsigned dm_ld8(const unsigned char *p)
{
  unsigned short v;
  asm volatile("ld.relaxed.gpu.u8 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
  return v;
}

/* This lane's number in its warp. */
static __device__ __forceinline__ unsigned dm_lane(void)
{
  unsigned l;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
}

/* Mask of the lanes below this one. */
static __device__ __forceinline__ unsigned dm_lanes_below(void)
{
  unsigned m;
  asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
  return m;
}

/* The multiprocessor this warp runs on (spreads the buffer hash). */
static __device__ __forceinline__ unsigned dm_smid(void)
{
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

/* Lane number of the k-th (0-based) set bit of m; 32 when m has fewer bits. */
static __device__ __forceinline__ unsigned dm_fks(unsigned m, unsigned k)
{
  for (unsigned i = 0; i < k && m; ++i) m &= m - 1u;
  return m ? (unsigned)__ffs(m) - 1u : 32u;
}

/* The k lowest set bits of m. */
static __device__ __forceinline__ unsigned dm_low_bits(unsigned m, unsigned k)
{
  unsigned r = 0;
  for (unsigned i = 0; i < k && m; ++i) {
    unsigned b = m & (0u - m);
    r |= b;
    m &= m - 1u;
  }
  return r;
}

/* 32-bit mixer (lowbias32). */
static __device__ __forceinline__ unsigned dm_mix(unsigned x)
{
  x ^= x >> 16; x *= 0x7feb352du;
  x ^= x >> 15; x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

/* A fresh per-lane random state: clock, multiprocessor, block and thread. */
static __device__ __forceinline__ unsigned dm_seed(void)
{
  unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  return dm_mix((unsigned)clock64() ^ dm_mix(b * 1024u + t) ^ (dm_smid() << 24)) | 1u;
}

/* Next random number of a per-lane xorshift state. */
static __device__ __forceinline__ unsigned dm_rand(unsigned *s)
{
  unsigned x = *s;
  x ^= x << 13; x ^= x >> 17; x ^= x << 5;
  *s = x;
  return x;
}

/* Which of a class's DM_NFIFO buffers this lane uses (XMalloc: a hash of thread, block
 * and multiprocessor). The lanes of a warp take consecutive buffers: when all 32 push or
 * pop at once they do not fight over one FIFO's head or tail (with one buffer a warp, the
 * CAS retry loops of dm_fifo_push dominate a free of small blocks). Nothing needs the lanes
 * of a warp to agree. */
static __device__ __forceinline__ unsigned dm_buffer_hash(unsigned salt)
{
  unsigned b = blockIdx.x + gridDim.x * blockIdx.y;
  unsigned w = (threadIdx.x + blockDim.x * threadIdx.y) >> 5;
  return (dm_mix(b * 131u + w * 7u + dm_smid() * 977u + salt) + dm_lane()) % DM_NFIFO;
}

/* Release fence at GPU scope: this lane's earlier reads and writes (and those a warp
 * barrier ordered before it) are ordered before its later writes, which is all a page
 * given back needs (the user's last writes to it, and in debug builds its pinfo store,
 * before the bitmap bit that lets a claimer reuse it). fence.release.gpu where PTX has it
 * (ISA 8.6, sm_90): no L1 invalidation, which only an acquire needs; fence.acq_rel.gpu
 * elsewhere. Neither is __threadfence() (fence.sc.gpu, MEMBAR.SC on the H100). */
static __device__ __forceinline__ void dm_fence_release(void)
{
#if __CUDA_ARCH__ >= 900 && (__CUDACC_VER_MAJOR__ > 12 || \
                             (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 8))
  asm volatile("fence.release.gpu;" ::: "memory");
#else
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
#endif
}

/* Acquire-release fence at GPU scope, after a claim (the bitmap atomicOr that took pages)
 * and the claimer's metadata stores: acquire for the claim (the previous owner's writes,
 * released by its free, come before ours and the users') and release for the metadata
 * (pinfo and counts before the blocks reach anyone). Not __threadfence(): fence.sc.gpu
 * orders more than this needs (MEMBAR.SC.GPU, not MEMBAR.ALL.GPU, on Hopper). */
static __device__ __forceinline__ void dm_fence_acq_rel(void)
{
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

/* Atomic AND of v into a global word whose old value nobody reads: a reduction (RED), not
 * an atomic with a return (atomicAnd compiles to ATOM even when its result is unused).
 * The difference is where the warp waits: after an ATOM the warp's next load from local
 * memory (the return address a function reloads before it returns) waits for the
 * atomic's round trip, a DRAM miss on the bitmap; a RED is only waited for when the warp
 * exits. Relaxed at GPU scope, as
 * atomicAnd; dm_red_and_release orders this lane's earlier accesses (and those a warp
 * barrier ordered before it) before it, as fence.release.gpu would (MEMBAR.ALL.GPU, then
 * the RED, in SASS). */
static __device__ __forceinline__ void dm_red_and(unsigned *p, unsigned v)
{
  asm volatile("red.relaxed.gpu.global.and.b32 [%0], %1;"
               :: "l"(__cvta_generic_to_global(p)), "r"(v) : "memory");
}
static __device__ __forceinline__ void dm_red_and_release(unsigned *p, unsigned v)
{
  asm volatile("red.release.gpu.global.and.b32 [%0], %1;"
               :: "l"(__cvta_generic_to_global(p)), "r"(v) : "memory");
}

/* atomicOr with acquire semantics at GPU scope: the claim of pages whose claimer does not
 * fence afterwards (page.cuh, dm_slot_claim; entry.cu, dm_malloc_warp16). The previous
 * owner released the pages (its users' writes, then the bits cleared by a release), so
 * this claimer's and its users' later accesses come after theirs. */
static __device__ __forceinline__ unsigned dm_atom_or_acquire(unsigned *p, unsigned v)
{
  unsigned old;
  asm volatile("atom.acquire.gpu.global.or.b32 %0, [%1], %2;"
               : "=r"(old) : "l"(__cvta_generic_to_global(p)), "r"(v) : "memory");
  return old;
}

/* OR of v over the lanes of `mask`; all of them call it together. */
static __device__ __forceinline__ unsigned dm_warp_or(unsigned mask, unsigned v)
{
#if __CUDA_ARCH__ >= 800
  return __reduce_or_sync(mask, v);
#else
  unsigned r = 0;
  for (unsigned m = mask; m; m &= m - 1u) r |= __shfl_sync(mask, v, __ffs(m) - 1);
  return r;
#endif
}

/* Maximum of v over the lanes of `mask`; all of them call it together. */
static __device__ __forceinline__ unsigned dm_warp_max(unsigned mask, unsigned v)
{
#if __CUDA_ARCH__ >= 800
  return __reduce_max_sync(mask, v);
#else
  unsigned r = 0;
  for (unsigned m = mask; m; m &= m - 1u) r = max(r, __shfl_sync(mask, v, __ffs(m) - 1));
  return r;
#endif
}

/* The lanes of `mask` wait for each other before a warp-collective step that follows
 * per-lane work of unequal length (buffer retries, scans, atomics). */
static __device__ __forceinline__ void dm_converge(unsigned mask)
{
#ifndef DM_NO_CONVERGE
  __syncwarp(mask);
#else
  (void)mask;
#endif
}

/* Exclusive prefix sum of v over the lanes of `mask` (ascending lane order); *total gets
 * the sum. All lanes of `mask` call it together. */
static __device__ __forceinline__ unsigned dm_warp_exscan(unsigned mask, unsigned v,
                                                          unsigned *total)
{
  unsigned me = dm_lane(), before = 0, sum = 0;
  for (unsigned m = mask; m; m &= m - 1u) {
    unsigned src = (unsigned)__ffs(m) - 1u;
    unsigned x = __shfl_sync(mask, v, (int)src);
    if (src < me) before += x;
    sum += x;
  }
  *total = sum;
  return before;
}

#endif /* DM_WARP_CUH */

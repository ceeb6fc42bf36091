/* antheap_gpu.h: GPU offload into regions (src/gpu). A kernel builds a pointer structure with
 * dm_malloc / dm_free (antheap_device.h) in a device heap whose blocks land in one GAS object
 * of a region; the region then moves with sys_send like any other, and the receiver walks it
 * with plain pointers on the CPU, or brings it to its own GPU.
 *
 *   gpu_worker_attach(NULL);                       // after sys_init: pick this worker's GPU
 *   gpu_arena *a;
 *   gpu_arena_create(&a, region, 384u << 20, GPU_MODE_AUTO);  // an object in region + a heap
 *   build<<<g, b>>>(gpu_arena_view(a), ...);       // p = dm_malloc(n); x->next = gpu_gas(v, p)
 *   gpu_arena_land(a);                             // the structure is in the region now
 *   sys_send(peer, &region, 1, objects, n);        // the receiver walks it with its pointers
 *
 * The arena is one object of the region (sys_alloc), `bytes` rounded up to 4 KiB. Every block
 * the heap hands out lies inside it, at the same offset on the device and in the GAS, so a
 * block's GAS address is known on the device before it lands (gpu_gas). Two ways:
 *   GPU_MODE_DEVICE     the heap's arena is device memory mirroring the object; kernels run at
 *                       device-memory speed and gpu_arena_land copies the whole arena into the
 *                       object in one transfer (the object is registered with the GPU once,
 *                       so the copy runs at pinned-memory speed).
 *   GPU_MODE_ZERO_COPY  the heap's arena is the object itself, registered with the GPU: every
 *                       store of a kernel crosses the bus (many times slower for a kernel that
 *                       builds a list); landing only waits for the kernels. No device memory
 *                       needed.
 *   GPU_MODE_AUTO       DEVICE, or ZERO_COPY when device memory for the arena cannot be had.
 *
 * What a kernel may store in a structure it builds (what the CPU and other workers read):
 *   - blocks of this arena's heap (or pointers inside them) translated with gpu_gas(v, p);
 *   - GAS addresses it was given: objects from sys_alloc in any region, blocks of other landed
 *     arenas (gpu_gas leaves pointers outside its arena unchanged, so translating them is fine);
 *   - NULL.
 * Never a device address: cudaMalloc'd memory, blocks of a heap made with dm_heap_create,
 * local or shared memory; they mean nothing to the CPU or to another worker. To follow a
 * stored pointer in a kernel, translate it back with gpu_dev(v, p): a kernel can only follow
 * pointers into its own arena (a DEVICE arena holds a copy of nothing else). Both translations
 * are the identity for a ZERO_COPY arena on a GPU that uses host pointers (the H100 does).
 *
 * The other direction: gpu_arena_open brings a GAS range received from another worker (or
 * built on the CPU) to the GPU, copied (DEVICE) or registered (ZERO_COPY), without a heap: a
 * kernel walks and modifies it through gpu_dev, and gpu_arena_land puts it back. An arena made
 * by gpu_arena_create keeps its heap while its region travels: when the region comes back,
 * gpu_arena_load copies the GAS bytes (with the other worker's changes) to the device again,
 * and kernels may go on allocating and freeing in it.
 *
 * Registration lifetime. A GAS range is registered (cudaHostRegister) once, when its arena is
 * created or opened, and unregistered when the last arena on it is destroyed; an arena opened
 * inside a registered range shares that registration; ranges that overlap only in part are
 * EBUSY. A region stays registered on this worker while it travels (its pages are this
 * worker's own, or shared on one host); do not launch kernels on it until it comes back.
 * sys_rfree on this worker of a region holding arenas (or of an ancestor) unregisters them
 * before the pages go back to the OS or to the schedulers: the arenas are then dead (their
 * heaps and device memory released, every call ENOENT) and gpu_arena_destroy only frees the
 * handle. sys_finalize does the same for every arena. Kernels on such an arena must be
 * finished (the hook waits for the device). Destroy arenas before their region is freed by
 * another worker: a pinned page that another worker frees stays with this worker's GPU.
 *
 * Errors: 0, or -1 with errno: EINVAL bad argument (NULL, zero or misaligned sizes, an opened
 * arena where a heap is needed), ENOMEM no GAS or host memory (sys_alloc's errors pass
 * through: ENOENT no such region), ENOENT a dead arena, EBUSY a range overlapping another
 * registration in part, ENODEV no CUDA device, EIO a CUDA call failed (gpu_cuda_error() names
 * it). Not thread-safe, as the sys_* calls. One device per worker process.
 *
 * Link: antheap_gpu (CMake target, built where nvcc and MPI are found), with the kernels'
 * code compiled as relocatable device code like any dm_malloc caller.
 */
#ifndef ANTHEAP_GPU_H
#define ANTHEAP_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "antheap.h"
#include "antheap_device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gpu_mode { GPU_MODE_AUTO = 0, GPU_MODE_DEVICE = 1, GPU_MODE_ZERO_COPY = 2 } gpu_mode;

/* What a kernel needs to translate pointers of one arena: pass it by value. */
typedef struct gpu_view {
  char *dev;      /* the arena's first byte as the device addresses it */
  uintptr_t gas;  /* the same byte's GAS address */
  size_t bytes;
} gpu_view;

typedef struct gpu_arena gpu_arena;

/* Pick this worker's GPU: its index among the workers of its host, modulo the devices there
 * (collective over sys_comm()). *device (may be NULL) gets the device. 0, or -1 (ENODEV). */
int gpu_worker_attach(int *device);

/* A new object of `bytes` (rounded up to 4 KiB) in `region` and a device heap over it, made
 * current. mode GPU_MODE_AUTO picks DEVICE where it can. */
int gpu_arena_create(gpu_arena **out, rid_t region, size_t bytes, gpu_mode mode);
/* The same over host memory the caller owns (any GAS object, or for tests any memory):
 * `gas` aligned to 512 B, `bytes` a non-zero multiple of 512. */
int gpu_arena_create_at(gpu_arena **out, void *gas, size_t bytes, gpu_mode mode);
/* Bring [gas, gas + bytes) to the GPU without a heap: copied to device memory (DEVICE) or
 * registered (ZERO_COPY); any alignment. */
int gpu_arena_open(gpu_arena **out, void *gas, size_t bytes, gpu_mode mode);

gpu_view gpu_arena_view(const gpu_arena *a);
gpu_mode gpu_arena_mode(const gpu_arena *a);      /* DEVICE or ZERO_COPY (AUTO resolved) */
void *gpu_arena_base(const gpu_arena *a);         /* the GAS object */
size_t gpu_arena_bytes(const gpu_arena *a);
dm_heap *gpu_arena_heap(const gpu_arena *a);      /* NULL: opened, or dead */

/* Make the arena's heap the one dm_malloc uses in kernels launched from now on. */
int gpu_arena_use(gpu_arena *a);
/* Wait for the device, then put the arena's bytes into its GAS range (DEVICE: one copy of the
 * whole arena and nothing past it; ZERO_COPY: they are there). */
int gpu_arena_land(gpu_arena *a);
/* Copy the GAS range to the device again (DEVICE; nothing to do for ZERO_COPY), after the CPU
 * or another worker changed it. */
int gpu_arena_load(gpu_arena *a);
/* Drop every block: a fresh empty heap over the same arena (made current), registration kept. */
int gpu_arena_reset(gpu_arena *a);
/* Release the device side: heap, device memory, the registration (when its last user). The
 * GAS object and what landed in it stay in the region. NULL is a no-op. */
int gpu_arena_destroy(gpu_arena *a);

/* The last failed CUDA call's error, for EIO ("no error" when none). */
const char *gpu_cuda_error(void);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#define GPU_HD __host__ __device__ __forceinline__
#else
#define GPU_HD inline
#endif

/* The GAS address of p (a device address in v's arena); anything else unchanged (NULL too). */
static GPU_HD void *gpu_gas(gpu_view v, const void *p) {
  uintptr_t x = (uintptr_t)p, d = (uintptr_t)v.dev;
  return (void *)(x - d < v.bytes ? x - d + v.gas : x);
}
/* The device address of p (a GAS address in v's arena); anything else unchanged. */
static GPU_HD void *gpu_dev(gpu_view v, const void *p) {
  uintptr_t x = (uintptr_t)p;
  return (void *)(x - v.gas < v.bytes ? x - v.gas + (uintptr_t)v.dev : x);
}
#undef GPU_HD

#endif /* ANTHEAP_GPU_H */

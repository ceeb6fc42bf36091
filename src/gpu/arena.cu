/* arena.cu: GPU arenas over host ranges (antheap_gpu.h): registration (counted in ranges.c),
 * the device heap over device memory that mirrors the range or over the registered range
 * itself, landing and loading, and the arenas' death when their memory is freed under them
 * (gpu_forget_range). The only file of the GPU layer that calls the CUDA runtime; it knows
 * nothing of MPI or the schedulers (region.c does). Host code only. */
#include <cuda_runtime.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "antheap_gpu.h"
#include "gpu/gpu.h"

extern "C" {
#include "gpu/ranges.h"
}

struct gpu_arena {
  gpu_mode mode;       /* DEVICE or ZERO_COPY */
  char *gas;           /* the host range */
  size_t bytes;
  char *dev;           /* the arena as the device addresses it */
  void *dev_alloc;     /* DEVICE: the cudaMalloc'd block holding dev */
  dm_heap *heap;       /* NULL: opened (no heap) or dead */
  bool opened, dead, registered;
  gpu_arena *next;     /* every arena not yet destroyed */
};

static gpu_arena *arenas;        /* live and dead, until destroyed */
static gpu_regs regs;            /* host ranges registered with the GPU */
static cudaError_t last_error = cudaSuccess;

static int fail(int err) {
  errno = err;
  return -1;
}

/* A failed CUDA call: remembered for gpu_cuda_error, EIO (ENOMEM for device memory). */
static int cuda_fail(cudaError_t e) {
  last_error = e;
  cudaGetLastError(); /* clear a sticky non-fatal error */
  return fail(e == cudaErrorMemoryAllocation ? ENOMEM : EIO);
}

const char *gpu_cuda_error(void) { return cudaGetErrorString(last_error); }

int gpu_use_device(int index, int *device) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    cudaGetLastError();
    return fail(ENODEV);
  }
  int d = (index < 0 ? 0 : index) % n;
  cudaError_t e = cudaSetDevice(d);
  if (e != cudaSuccess) return cuda_fail(e);
  if (device) *device = d;
  return 0;
}

/* The whole host pages around [gas, gas + bytes): what CUDA registers. */
static void pages_around(char *gas, size_t bytes, uintptr_t *start, size_t *span) {
  static size_t page;
  if (!page) page = (size_t)sysconf(_SC_PAGESIZE);
  gpu_pages_around((uintptr_t)gas, bytes, page, start, span);
}

/* Register the pages of [gas, gas + bytes) unless a registration holds them already. */
static int take_registration(char *gas, size_t bytes) {
  uintptr_t start;
  size_t span;
  pages_around(gas, bytes, &start, &span);
  int rc = gpu_regs_take(&regs, start, span, NULL);
  if (rc < 0) return fail(-rc);
  if (rc == 0) return 0;
  cudaError_t e = cudaHostRegister((void *)start, span, cudaHostRegisterPortable | cudaHostRegisterMapped);
  if (e == cudaSuccess) return 0;
  gpu_regs_put(&regs, start, span, NULL);
  if (e == cudaErrorHostMemoryAlreadyRegistered) { /* by someone else than this layer */
    cudaGetLastError();
    last_error = e;
    return fail(EBUSY);
  }
  return cuda_fail(e);
}

/* Drop this arena's reference; unregister with the last one. */
static int put_registration(char *gas, size_t bytes) {
  gpu_reg r;
  uintptr_t start;
  size_t span;
  pages_around(gas, bytes, &start, &span);
  int rc = gpu_regs_put(&regs, start, span, &r);
  if (rc <= 0) return rc == 0 ? 0 : fail(-rc);
  cudaError_t e = cudaHostUnregister((void *)r.addr);
  return e == cudaSuccess ? 0 : cuda_fail(e);
}

/* The device address of registered host memory: the same where the GPU uses host pointers. */
static int mapped_address(char *gas, char **dev) {
  int dev_id = 0, same = 0;
  cudaError_t e = cudaGetDevice(&dev_id);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&same, cudaDevAttrCanUseHostPointerForRegisteredMem, dev_id);
  if (e == cudaSuccess && same) {
    *dev = gas;
    return 0;
  }
  void *p = NULL;
  if (e == cudaSuccess) e = cudaHostGetDevicePointer(&p, gas, 0);
  if (e != cudaSuccess) return cuda_fail(e);
  *dev = (char *)p;
  return 0;
}

/* Device memory for a DEVICE arena, at the same offset from a GPU_ARENA_ALIGN boundary as
 * its host range (0 for a heap's arena), so that what is aligned in one is in the other. */
static cudaError_t device_buffer(gpu_arena *a) {
  cudaError_t e = cudaMalloc(&a->dev_alloc, a->bytes + 2 * GPU_ARENA_ALIGN);
  if (e != cudaSuccess) return e;
  uintptr_t p = ((uintptr_t)a->dev_alloc + GPU_ARENA_ALIGN - 1) & ~(uintptr_t)(GPU_ARENA_ALIGN - 1);
  a->dev = (char *)(p + (uintptr_t)a->gas % GPU_ARENA_ALIGN);
  return cudaSuccess;
}

/* Everything on the device side goes: heap, device memory, registration. */
static int release(gpu_arena *a) {
  int rc = 0;
  dm_heap_destroy(a->heap);
  a->heap = NULL;
  if (a->dev_alloc) {
    cudaError_t e = cudaFree(a->dev_alloc);
    if (e != cudaSuccess) rc = cuda_fail(e);
  }
  a->dev_alloc = NULL;
  a->dev = NULL;
  if (a->registered && put_registration(a->gas, a->bytes)) rc = -1;
  a->registered = false;
  return rc;
}

static void unlink_arena(gpu_arena *a) {
  for (gpu_arena **p = &arenas; *p; p = &(*p)->next)
    if (*p == a) {
      *p = a->next;
      return;
    }
}

/* Build an arena over [gas, gas + bytes): with a heap (create) or with the range's bytes
 * copied to the device (open). */
static int build(gpu_arena **out, char *gas, size_t bytes, gpu_mode mode, bool open) {
  if (!out) return fail(EINVAL);
  *out = NULL;
  if (mode != GPU_MODE_AUTO && mode != GPU_MODE_DEVICE && mode != GPU_MODE_ZERO_COPY)
    return fail(EINVAL);
  int rc = open ? gpu_open_check(gas, bytes) : gpu_arena_check(gas, bytes);
  if (rc) return fail(rc);
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    cudaGetLastError();
    return fail(ENODEV);
  }
  gpu_arena *a = (gpu_arena *)calloc(1, sizeof *a);
  if (!a) return fail(ENOMEM);
  a->gas = gas;
  a->bytes = bytes;
  a->opened = open;
  a->next = arenas;
  arenas = a;
  /* DEVICE registers too: the landing copy then runs at pinned-memory speed */
  if (take_registration(gas, bytes)) goto failed;
  a->registered = true;
  a->mode = mode == GPU_MODE_ZERO_COPY ? GPU_MODE_ZERO_COPY : GPU_MODE_DEVICE;
  if (a->mode == GPU_MODE_DEVICE) {
    cudaError_t e = device_buffer(a);
    if (e != cudaSuccess && mode == GPU_MODE_AUTO) { /* no room on the device: zero-copy */
      cudaGetLastError();
      a->mode = GPU_MODE_ZERO_COPY;
    } else if (e != cudaSuccess) {
      cuda_fail(e);
      goto failed;
    }
  }
  if (a->mode == GPU_MODE_ZERO_COPY && mapped_address(gas, &a->dev)) goto failed;
  if (open) {
    if (gpu_arena_load(a)) goto failed;
  } else {
    int e = dm_heap_create_over(&a->heap, a->dev, bytes);
    if (e) {
      cuda_fail((cudaError_t)e);
      goto failed;
    }
  }
  *out = a;
  return 0;
failed: {
  int err = errno;
  release(a);
  unlink_arena(a);
  free(a);
  return fail(err);
}
}

int gpu_arena_create_at(gpu_arena **out, void *gas, size_t bytes, gpu_mode mode) {
  return build(out, (char *)gas, bytes, mode, false);
}

int gpu_arena_open(gpu_arena **out, void *gas, size_t bytes, gpu_mode mode) {
  return build(out, (char *)gas, bytes, mode, true);
}

gpu_view gpu_arena_view(const gpu_arena *a) {
  gpu_view v = {NULL, 0, 0};
  if (a && !a->dead) v = gpu_view{a->dev, (uintptr_t)a->gas, a->bytes};
  return v;
}

gpu_mode gpu_arena_mode(const gpu_arena *a) { return a ? a->mode : GPU_MODE_AUTO; }
void *gpu_arena_base(const gpu_arena *a) { return a ? a->gas : NULL; }
size_t gpu_arena_bytes(const gpu_arena *a) { return a ? a->bytes : 0; }
dm_heap *gpu_arena_heap(const gpu_arena *a) { return a ? a->heap : NULL; }

/* Arguments of the calls on a live arena: EINVAL (NULL), ENOENT (dead). */
static int usable(const gpu_arena *a) {
  if (!a) return fail(EINVAL);
  if (a->dead) return fail(ENOENT);
  return 0;
}

int gpu_arena_use(gpu_arena *a) {
  if (usable(a)) return -1;
  if (!a->heap) return fail(EINVAL);
  int e = dm_heap_use(a->heap);
  return e ? cuda_fail((cudaError_t)e) : 0;
}

int gpu_arena_land(gpu_arena *a) {
  if (usable(a)) return -1;
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess && a->mode == GPU_MODE_DEVICE)
    e = cudaMemcpy(a->gas, a->dev, a->bytes, cudaMemcpyDeviceToHost);
  return e == cudaSuccess ? 0 : cuda_fail(e);
}

int gpu_arena_load(gpu_arena *a) {
  if (usable(a)) return -1;
  cudaError_t e = cudaSuccess;
  if (a->mode == GPU_MODE_DEVICE) e = cudaMemcpy(a->dev, a->gas, a->bytes, cudaMemcpyHostToDevice);
  return e == cudaSuccess ? 0 : cuda_fail(e);
}

int gpu_arena_reset(gpu_arena *a) {
  if (usable(a)) return -1;
  if (a->opened) return fail(EINVAL);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) return cuda_fail(e);
  dm_heap_destroy(a->heap);
  a->heap = NULL;
  int rc = dm_heap_create_over(&a->heap, a->dev, a->bytes);
  return rc ? cuda_fail((cudaError_t)rc) : 0;
}

int gpu_arena_destroy(gpu_arena *a) {
  if (!a) return 0;
  unlink_arena(a);
  int rc = 0;
  if (!a->dead) {
    cudaError_t e = cudaDeviceSynchronize(); /* kernels may still use the heap */
    if (e != cudaSuccess) rc = cuda_fail(e);
    if (release(a)) rc = -1;
  }
  int err = errno;
  free(a);
  return rc ? fail(err) : 0;
}

size_t gpu_forget_range(uintptr_t addr, size_t len) {
  size_t killed = 0;
  bool synced = false;
  for (gpu_arena *a = arenas; a; a = a->next) {
    if (a->dead || !gpu_ranges_overlap((uintptr_t)a->gas, a->bytes, addr, len)) continue;
    if (!synced) cudaDeviceSynchronize(); /* kernels still running on it finish first */
    synced = true;
    release(a);
    a->dead = true;
    killed++;
  }
  return killed;
}

/* gpu.h: what the GPU layer's files tell each other (not public): arena.cu (CUDA) serves
 * region.c (MPI and the worker) and the tests. */
#ifndef AH_GPU_GPU_H
#define AH_GPU_GPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Use device index % (devices here). 0 with *device (may be NULL), or -1 (ENODEV, EIO). */
int gpu_use_device(int index, int *device);

/* Memory in [addr, addr + len) is about to be freed (sys_rfree, sys_finalize: the worker's
 * free hook): wait for the device, then release every arena overlapping it (heap, device
 * memory, registration) and mark it dead. Returns how many arenas died. */
size_t gpu_forget_range(uintptr_t addr, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* AH_GPU_GPU_H */

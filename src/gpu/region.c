/* region.c: the GPU layer's side that knows the worker (antheap_gpu.h): an arena's object is
 * allocated in a region, sys_rfree and sys_finalize tell the layer of memory they free (the
 * worker's free hook, hook.h), and a worker picks its GPU by its place on its host. The CUDA
 * work is arena.cu's. */
#include <errno.h>

#include "antheap_gpu.h"
#include "gpu/gpu.h"
#include "gpu/ranges.h"
#include "worker/hook.h"

static void forget(uintptr_t addr, size_t len) { gpu_forget_range(addr, len); }

int gpu_worker_attach(int *device) {
  MPI_Comm workers = sys_comm(), host;
  if (workers == MPI_COMM_NULL) {
    errno = EINVAL;
    return -1;
  }
  int local = 0;
  MPI_Comm_split_type(workers, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  MPI_Comm_rank(host, &local);
  MPI_Comm_free(&host);
  worker_set_free_hook(forget);
  return gpu_use_device(local, device);
}

int gpu_arena_create(gpu_arena **out, rid_t region, size_t want, gpu_mode mode) {
  size_t bytes;
  if (!out || gpu_arena_object_bytes(want, &bytes)) {
    errno = EINVAL;
    return -1;
  }
  *out = NULL;
  void *gas = sys_alloc(bytes, region); /* a run of whole slabs: 4 KiB aligned */
  if (!gas) return -1;
  worker_set_free_hook(forget); /* before sys_rfree can free the object */
  if (gpu_arena_create_at(out, gas, bytes, mode)) {
    int err = errno;
    sys_free(gas);
    errno = err;
    return -1;
  }
  return 0;
}

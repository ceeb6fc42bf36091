/* group.cuh: what entry.cu calls in group.cu: the warp paths of dm_malloc and dm_free.
 * Every lane of `mask` (the lanes that entered dm_malloc or dm_free together) calls them
 * together; dm_free_group only gets two lanes or more (entry.cu frees a lone lane's block). */
#ifndef DM_GROUP_CUH
#define DM_GROUP_CUH

#include <stddef.h>

#include "types.cuh"

extern __device__ dm_heap_dev dm_heap_g;
__device__ __noinline__ void *dm_malloc_group(size_t size, unsigned mask);
__device__ __noinline__ void dm_free_group(void *ptr, unsigned mask);

#endif /* DM_GROUP_CUH */

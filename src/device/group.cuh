/* group.cuh: what entry.cu and free.cu use of group.cu: the warp path of dm_malloc, which
 * every lane of `mask` (the lanes that entered dm_malloc together) calls together, a lone
 * lane's refill of its slot page (dm_malloc_lone), and dm_heap_g, the current heap. */
#ifndef DM_GROUP_CUH
#define DM_GROUP_CUH

#include <stddef.h>

#include "types.cuh"

extern DM_HEAP_SPACE dm_heap_dev dm_heap_g;
__device__ __noinline__ void *dm_malloc_group(size_t size, unsigned mask);
__device__ __noinline__ void *dm_malloc_lone(size_t size, unsigned c);

#endif /* DM_GROUP_CUH */

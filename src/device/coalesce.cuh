/* coalesce.cuh: warp-level allocation coalescing (XMalloc 5.1), for independent thread
 * scheduling. The lanes of a warp that ask at once for small sizes are served by one
 * request: their compartment sizes are summed across the lanes that are actually there
 * (__activemask, shuffles), cut in lane order into areas that fit the largest class
 * (__match_any_sync groups the lanes of one area), one lane per area asks the class layer
 * for it, the address is shuffled back and each lane takes its compartment. Deviation: compartments
 * carry no header. An area starts on a block or run boundary that the page's pinfo gives
 * back on free, so a pointer not on such a boundary is a compartment and the area header
 * sits at the boundary; this keeps the per-object overhead at zero.
 * Entry points: dm_area_init, dm_area_enter, dm_area_close_group. */
#ifndef DM_COALESCE_CUH
#define DM_COALESCE_CUH

#include "types.cuh"
#include "warp.cuh"

/* Bytes of a compartment for a request of `size` bytes. */
static __device__ __forceinline__ unsigned dm_compartment_bytes(size_t size)
{
  return ((unsigned)size + DM_ALIGN - 1u) & ~(DM_ALIGN - 1u);
}

/* The area's first lane writes its header (before the address is shuffled out). */
static __device__ void dm_area_init(dm_area *a, unsigned n)
{
  a->count = n;
  a->live = n >= 32u ? ~0u : ((1u << n) - 1u);
  a->n = n;
  a->magic = DM_AREA_MAGIC;
  __threadfence();
}

/* Every lane of `co` calls this; lanes of `grp` share `area` (NULL: they get NULL) and
 * get their compartment at header + `off`. Debug builds record each compartment's offset
 * in the header first. */
static __device__ char *dm_area_enter(unsigned co, unsigned grp, char *area, unsigned off)
{
#if DM_CHECKS
  if (area && __popc(grp) > 1)
    ((dm_area *)area)->off[__popc(grp & dm_lanes_below())] =
        (unsigned short)((DM_AREA_HDR + off) / DM_ALIGN);
  __threadfence();
  __syncwarp(co);
#else
  (void)co;
  (void)grp;
#endif
  return area ? area + DM_AREA_HDR + off : NULL;
}

#if DM_CHECKS
/* Debug: mark the compartment at `ptr` of area `a` freed; false if it was not live (double
 * free) or is no compartment of `a` (foreign pointer). */
static __device__ bool dm_area_check_free(dm_area *a, const char *ptr)
{
  unsigned n = *(volatile unsigned *)&a->n;
  unsigned o = (unsigned)((ptr - (const char *)a) / DM_ALIGN);
  for (unsigned i = 0; i < n && i < 32u; ++i)
    if (a->off[i] == o) return (atomicAnd(&a->live, ~(1u << i)) >> i) & 1u;
  return false;
}
#endif

/* The lanes of `grp` free compartments of one area `a`: one atomic for all of them.
 * True for the one lane that must now free the area itself. */
static __device__ bool dm_area_close_group(dm_area *a, unsigned grp)
{
  if (dm_lane() != (unsigned)__ffs(grp) - 1u) return false;
  unsigned n = __popc(grp);
  return atomicSub(&a->count, n) == n;
}

#endif /* DM_COALESCE_CUH */

/* coalesce.cuh: warp-level allocation coalescing (XMalloc 5.1), for independent thread
 * scheduling. The lanes of a warp that ask at once for small sizes are served by few
 * requests: their compartment sizes are shared across the lanes that are actually there
 * (__activemask, shuffles) and cut, in lane order, into areas; one lane per area asks for
 * it, the address is shuffled back and each lane takes its compartment.
 *
 * Plan. An area may be limited to 512 B (the largest class) or to runs of 1, 2 or 4 KiB; each
 * limit gives a greedy cut whose cost is the bytes its requests really take (class or
 * whole pages, header included) plus DM_REQUEST_COST per request, and asking alone (no
 * area) is the fifth choice. The cheapest wins: 32 x 16 B go in one 512-B area, 32 x 64 B
 * in a 2-KiB run, 32 x 256 B alone (an area would round up). Lanes asking the same size
 * (the common case) get the plan by arithmetic; mixed sizes take one pass of shuffles.
 *
 * Deviation: compartments carry no header. An area starts on a block or run boundary that
 * the page's pinfo gives back on free, so a pointer not on such a boundary is a compartment
 * and the area header sits at the boundary; this keeps the per-object overhead at zero.
 * Entry points: dm_plan, dm_area_init, dm_area_enter, dm_area_close_group. */
#ifndef DM_COALESCE_CUH
#define DM_COALESCE_CUH

#include "types.cuh"
#include "warp.cuh"

/* Bytes of a compartment for a request of `size` bytes. */
static __device__ __forceinline__ unsigned dm_compartment_bytes(size_t size)
{
  return ((unsigned)size + DM_ALIGN - 1u) & ~(DM_ALIGN - 1u);
}

/* Bytes a request of b bytes really takes: its class, or whole pages. */
static __device__ __forceinline__ unsigned dm_taken_bytes(unsigned b)
{
  if (b <= 16u) return 16u;
  if (b <= DM_CLASS_MAX) return 1u << (32u - (unsigned)__clz(b - 1u));
  return (b + DM_PAGE_BYTES - 1u) & ~(DM_PAGE_BYTES - 1u);
}

/* Compartment bytes an area of limit option o holds. */
static __device__ __forceinline__ unsigned dm_area_room(unsigned o)
{
  return (DM_CLASS_MAX << o) - DM_AREA_HDR;
}

/* Cost of one request made for k compartments filling `fill` bytes (x: the first's). */
static __device__ __forceinline__ unsigned dm_request_cost(unsigned k, unsigned fill, unsigned x)
{
  return dm_taken_bytes(k == 1u ? x : DM_AREA_HDR + fill) + DM_REQUEST_COST;
}

/* A lane's place in the plan: its group (lanes of one group share an area; a group of
 * one asks alone), its offset in the area and the area's compartment bytes. */
typedef struct dm_place {
  unsigned gid, off, total;
} dm_place;

/* Lanes of `co` all ask x bytes; this lane is the r-th of n. */
static __device__ dm_place dm_plan_uniform(unsigned n, unsigned r, unsigned x)
{
  unsigned best = n * (dm_taken_bytes(x) + DM_REQUEST_COST), per_best = 1;
  for (unsigned o = 0; o < DM_AREA_OPTS; ++o) {
    unsigned per = min(dm_area_room(o) / x, n);
    if (per < 2u) continue;
    unsigned full = n / per, rem = n % per;
    unsigned cost = full * dm_request_cost(per, per * x, x);
    if (rem) cost += dm_request_cost(rem, rem * x, x);
    if (cost <= best) { best = cost; per_best = per; }   /* ties: fewer requests */
  }
  dm_place pl;
  pl.gid = r / per_best;
  pl.off = (r % per_best) * x;
  unsigned first = pl.gid * per_best;
  pl.total = min(per_best, n - first) * x;
  return pl;
}

/* Lanes of `co` ask various sizes: one pass over them computes every option's cut. */
static __device__ dm_place dm_plan_mixed(unsigned mask, unsigned co, unsigned cs)
{
  const unsigned me = dm_lane();
  unsigned fill[DM_AREA_OPTS], cnt[DM_AREA_OPTS], first[DM_AREA_OPTS], gid[DM_AREA_OPTS];
  unsigned cost[DM_AREA_OPTS], mg[DM_AREA_OPTS], mo[DM_AREA_OPTS], mt[DM_AREA_OPTS];
  unsigned solo = 0;
#pragma unroll
  for (unsigned o = 0; o < DM_AREA_OPTS; ++o)
    fill[o] = cnt[o] = first[o] = gid[o] = cost[o] = mg[o] = mo[o] = mt[o] = 0;
  for (unsigned m = co; m; m &= m - 1u) {
    unsigned src = (unsigned)__ffs(m) - 1u, x = __shfl_sync(mask, cs, (int)src);
    solo += dm_taken_bytes(x) + DM_REQUEST_COST;
#pragma unroll
    for (unsigned o = 0; o < DM_AREA_OPTS; ++o) {
      if (cnt[o] && fill[o] + x > dm_area_room(o)) {     /* close the area */
        cost[o] += dm_request_cost(cnt[o], fill[o], first[o]);
        if (mg[o] == gid[o] && src > me) mt[o] = fill[o];
        ++gid[o];
        fill[o] = cnt[o] = 0;
      }
      if (cnt[o] == 0) first[o] = x;
      if (src == me) { mg[o] = gid[o]; mo[o] = fill[o]; }
      fill[o] += x;
      ++cnt[o];
    }
  }
  dm_place pl = {32u + me, 0u, cs};                        /* asking alone */
  unsigned best = solo;
#pragma unroll
  for (unsigned o = 0; o < DM_AREA_OPTS; ++o) {
    cost[o] += dm_request_cost(cnt[o], fill[o], first[o]);
    if (mg[o] == gid[o]) mt[o] = fill[o];                  /* mine is the last area */
    if (cost[o] <= best) {
      best = cost[o];
      pl.gid = mg[o];
      pl.off = mo[o];
      pl.total = mt[o];
    }
  }
  return pl;
}

/* Every lane of `mask` calls this; lanes of `co` (two or more) ask cs compartment bytes.
 * Group ids below 32 are areas; 32 + lane marks a lane that asks alone. */
static __device__ dm_place dm_plan(unsigned mask, unsigned co, unsigned cs)
{
  const unsigned me = dm_lane();
  unsigned x0 = __shfl_sync(mask, cs, __ffs(co) - 1);
  bool uniform = (__ballot_sync(mask, cs == x0) & co) == co;
  dm_place pl = {32u + me, 0u, cs};
  if (uniform) {
    if ((co >> me) & 1u) pl = dm_plan_uniform((unsigned)__popc(co),
                                              (unsigned)__popc(co & dm_lanes_below()), x0);
  } else {
    pl = dm_plan_mixed(mask, co, cs);
  }
  if (!((co >> me) & 1u)) pl.gid = 32u + me;
  return pl;
}

/* The area's first lane writes its header (before the address is shuffled out). */
static __device__ void dm_area_init(dm_area *a, unsigned n)
{
  a->count = n;
  a->live = n >= 32u ? ~0u : ((1u << n) - 1u);
  a->n = n;
  a->magic = DM_AREA_MAGIC;
  dm_fence_acq_rel();   /* was __threadfence(): see dm_fence_acq_rel */
}

/* Every lane of `mask` calls this together. Lanes of a shared group `grp` get their
 * compartment of `area` (NULL: they get NULL) at header + `off`; the others get `area`
 * itself. Debug builds record each compartment's offset in the header first. */
static __device__ char *dm_area_enter(unsigned mask, bool shared, unsigned grp, char *area,
                                      unsigned off)
{
#if DM_CHECKS
  if (shared && area)
    ((dm_area *)area)->off[__popc(grp & dm_lanes_below())] =
        (unsigned short)((DM_AREA_HDR + off) / DM_ALIGN);
  __threadfence();
  __syncwarp(mask);
#else
  (void)mask;
  (void)grp;
#endif
  if (!shared) return area;
  return area ? area + DM_AREA_HDR + off : NULL;
}

#if DM_CHECKS
/* Debug: mark the compartment at `ptr` of area `a` freed; false if it was not live (double
 * free) or is no compartment of `a` (foreign pointer). */
static __device__ bool dm_area_check_free(dm_area *a, const char *ptr)
{
  unsigned n = dm_ld(&a->n);
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

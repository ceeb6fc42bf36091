/* antheap_device.h: the device allocator's public API (src/device).
 *
 * A device heap is one arena (cudaMalloc'd, or the caller's: dm_heap_create_over; never
 * managed memory) plus its metadata.
 * The host creates it, makes it current, reads its statistics and destroys it; kernels
 * call dm_malloc / dm_free from any thread, any number of threads, and blocks outlive
 * the kernel that allocated them (free them in a later kernel, or destroy the heap).
 *
 *   dm_heap *h;
 *   if (dm_heap_create(&h, 256u << 20) != 0) ...;   // 256 MiB, becomes current
 *   kernel<<<g, b>>>();                               // dm_malloc / dm_free inside
 *   dm_stats st; dm_heap_stats(h, &st);
 *   dm_heap_destroy(h);
 *
 * dm_malloc returns 16-byte aligned memory, or NULL when the heap is exhausted (a full
 * heap never hangs a kernel: every search is bounded). dm_free(NULL) is a no-op. A free
 * of a pointer that dm_malloc did not return is counted in dm_stats.bad_frees and
 * ignored; debug builds (AH_DEBUG or DM_DEBUG) also catch double frees and check the
 * allocator's own invariants (dm_stats.broken). Calls may come from divergent code: the
 * lanes of a warp that enter together have their small requests served together, and a
 * lane that enters alone takes the next block of a page kept for its hardware warp slot
 * (one atomic; each slot keeps at most one partly used page per size class, counted in
 * pages_used until dm_heap_trim).
 * With no current heap (none created yet, or the current one destroyed) dm_malloc returns
 * NULL and dm_free does nothing.
 * Code that calls dm_malloc is compiled with relocatable device code (-rdc=true) and
 * links the antheap_device library.
 */
#ifndef ANTHEAP_DEVICE_H
#define ANTHEAP_DEVICE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dm_heap dm_heap; /* host handle of one device heap */

typedef struct dm_stats {
  size_t heap_bytes;          /* arena size (a multiple of the page size) */
  size_t meta_bytes;          /* device memory taken by metadata, apart from the arena */
  size_t page_bytes;          /* page size */
  size_t pages_total;         /* pages in the arena */
  size_t pages_used;          /* pages taken by class pages and runs now */
  unsigned long long nulls;   /* dm_malloc calls that returned NULL */
  unsigned long long bad_frees;   /* foreign pointers and (debug) double frees seen */
  unsigned long long runs;    /* multi-page runs handed out */
  unsigned long long drains;  /* class blocks given back to their page (buffers full) */
  unsigned broken;            /* debug builds: internal invariants found violated (an
                                 allocator bug; the first few are printed) */
  int debug;                  /* 1 when the library was built with double-free checks */
} dm_stats;

/* Create a heap over `bytes` of device memory (rounded down to pages) and make it the
 * current heap of the calling host thread's device. Returns 0 or a cudaError_t code. */
int dm_heap_create(dm_heap **out, size_t bytes);
/* Create a heap over memory the caller owns and the device can address at `arena`
 * (device memory, or host memory registered with cudaHostRegister and mapped at the same
 * address): `arena` aligned to the page size (512 B), `bytes` rounded down to pages. The
 * heap's metadata is cudaMalloc'd apart; dm_heap_destroy leaves the arena alone. Every block
 * lies inside the arena and no metadata does, so a copy of the arena elsewhere keeps every
 * block at the same offset. Returns 0 or a cudaError_t code (cudaErrorInvalidValue for a NULL or misaligned
 * arena). */
int dm_heap_create_over(dm_heap **out, void *arena, size_t bytes);
/* Make `h` the heap that dm_malloc / dm_free use in kernels launched from now on. */
int dm_heap_use(dm_heap *h);
/* Free the arena and metadata. Kernels using the heap must have finished. */
void dm_heap_destroy(dm_heap *h);
/* Give every buffered free block back to its page, and every block of a lone-lane slot's
 * page not yet handed out, so that pages held only by those are free again (before a
 * phase of large allocations, or to check for leaks: with every block freed and the heap
 * trimmed, pages_used is 0). Makes `h` current and
 * synchronises the device; kernels using the heap must have finished. Returns 0 or a
 * cudaError_t code. */
int dm_heap_trim(dm_heap *h);
/* Read the heap's statistics (synchronises the device). Returns 0 or a cudaError_t. */
int dm_heap_stats(const dm_heap *h, dm_stats *st);
/* Device address range of the arena, for tests and tools. */
void dm_heap_range(const dm_heap *h, void **base, size_t *bytes);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
/* Allocate `size` bytes from the current heap; NULL when exhausted. */
extern __device__ void *dm_malloc(size_t size);
/* Free a pointer returned by dm_malloc; NULL is a no-op. */
extern __device__ void dm_free(void *ptr);
#endif

#endif /* ANTHEAP_DEVICE_H */

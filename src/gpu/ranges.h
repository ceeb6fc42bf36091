/* ranges.h: the GPU layer's CPU side (no CUDA, no MPI; unit-tested in tests/unit/test_gpu.c):
 * which host ranges are registered with the GPU and how many arenas use each, and the rules
 * an arena's range must follow.
 *
 * A registration covers one range; an arena whose range lies inside a registered one shares
 * it (a reference), a range that overlaps a registered one only in part cannot be registered
 * (CUDA registers a page once). The caller makes the CUDA calls the table asks for: register
 * when gpu_regs_take says the range is new, unregister when gpu_regs_put says the last
 * reference went.
 */
#ifndef AH_GPU_RANGES_H
#define AH_GPU_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GPU_ARENA_ALIGN ((size_t)512)        /* the device heap's page (dm_heap_create_over) */
#define GPU_OBJECT_ALIGN ((size_t)4096)      /* an arena object: whole slabs of its region */
#define GPU_ARENA_MAX ((size_t)32 << 30)     /* the device heap's limit, rounded down */

typedef struct gpu_reg {
  uintptr_t addr;
  size_t len;
  unsigned refs;
} gpu_reg;

/* Registered ranges, sorted by address, never overlapping. Zero-initialised = empty. */
typedef struct gpu_regs {
  gpu_reg *v;
  size_t n, cap;
} gpu_regs;

/* Take a reference to [addr, addr + len) (len > 0). 1: a new entry, which the caller must now
 * register (and gpu_regs_put on failure); 0: inside an existing registration, whose range goes
 * to *reg (may be NULL). Negative errno: -EINVAL (empty or wrapping), -EBUSY (overlaps a
 * registration in part), -ENOMEM. */
int gpu_regs_take(gpu_regs *t, uintptr_t addr, size_t len, gpu_reg *reg);
/* Drop a reference taken for [addr, addr + len). 1: it was the last one, the entry (into
 * *reg, may be NULL) is gone and the caller unregisters it; 0: others remain; -ENOENT: no
 * registration holds that range. */
int gpu_regs_put(gpu_regs *t, uintptr_t addr, size_t len, gpu_reg *reg);
/* The registration containing [addr, addr + len), or NULL. */
const gpu_reg *gpu_regs_find(const gpu_regs *t, uintptr_t addr, size_t len);
void gpu_regs_free(gpu_regs *t);

/* The whole pages of `page` bytes (a power of two) around [addr, addr + len) (len > 0, not
 * wrapping): what the GPU registers. */
void gpu_pages_around(uintptr_t addr, size_t len, size_t page, uintptr_t *start, size_t *span);
/* Whether [a, a + alen) and [b, b + blen) share a byte. */
bool gpu_ranges_overlap(uintptr_t a, size_t alen, uintptr_t b, size_t blen);

/* The object size of an arena asked for `want` bytes: rounded up to GPU_OBJECT_ALIGN. 0 or
 * EINVAL (0, or more than GPU_ARENA_MAX). */
int gpu_arena_object_bytes(size_t want, size_t *bytes);
/* Whether a heap can be built over [gas, gas + bytes): 0 or EINVAL (NULL, misaligned, a size
 * that is 0, not a multiple of GPU_ARENA_ALIGN, above GPU_ARENA_MAX, or wrapping). */
int gpu_arena_check(const void *gas, size_t bytes);
/* Whether a range can be opened: 0 or EINVAL (NULL, empty, wrapping). */
int gpu_open_check(const void *gas, size_t bytes);

#endif /* AH_GPU_RANGES_H */

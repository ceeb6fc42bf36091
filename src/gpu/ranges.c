/* ranges.c: the registration table and the range rules of the GPU layer (ranges.h). A sorted
 * array: a worker holds a few arenas, not thousands. */
#include "gpu/ranges.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Whether [addr, addr + len) is a non-empty range that does not wrap around. */
static bool range_ok(uintptr_t addr, size_t len) { return len > 0 && addr + len > addr; }

bool gpu_ranges_overlap(uintptr_t a, size_t alen, uintptr_t b, size_t blen) {
  return alen && blen && a < b + blen && b < a + alen;
}

/* Whether entry r holds all of [addr, addr + len). */
static bool holds(const gpu_reg *r, uintptr_t addr, size_t len) {
  return addr >= r->addr && addr - r->addr <= r->len && len <= r->len - (addr - r->addr);
}

/* Index of the first entry ending after addr (the only ones that can overlap or hold it). */
static size_t first_after(const gpu_regs *t, uintptr_t addr) {
  size_t lo = 0, hi = t->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (t->v[mid].addr + t->v[mid].len <= addr) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const gpu_reg *gpu_regs_find(const gpu_regs *t, uintptr_t addr, size_t len) {
  if (!range_ok(addr, len)) return NULL;
  size_t i = first_after(t, addr);
  return i < t->n && holds(&t->v[i], addr, len) ? &t->v[i] : NULL;
}

int gpu_regs_take(gpu_regs *t, uintptr_t addr, size_t len, gpu_reg *reg) {
  if (!range_ok(addr, len)) return -EINVAL;
  size_t i = first_after(t, addr);
  if (i < t->n && holds(&t->v[i], addr, len)) {
    t->v[i].refs++;
    if (reg) *reg = t->v[i];
    return 0;
  }
  if (i < t->n && gpu_ranges_overlap(t->v[i].addr, t->v[i].len, addr, len)) return -EBUSY;
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 8;
    gpu_reg *v = realloc(t->v, cap * sizeof *v);
    if (!v) return -ENOMEM;
    t->v = v;
    t->cap = cap;
  }
  memmove(&t->v[i + 1], &t->v[i], (t->n - i) * sizeof *t->v);
  t->v[i] = (gpu_reg){addr, len, 1};
  t->n++;
  if (reg) *reg = t->v[i];
  return 1;
}

int gpu_regs_put(gpu_regs *t, uintptr_t addr, size_t len, gpu_reg *reg) {
  if (!range_ok(addr, len)) return -ENOENT;
  size_t i = first_after(t, addr);
  if (i >= t->n || !holds(&t->v[i], addr, len)) return -ENOENT;
  if (reg) *reg = t->v[i];
  if (--t->v[i].refs) return 0;
  memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof *t->v);
  t->n--;
  return 1;
}

void gpu_regs_free(gpu_regs *t) {
  free(t->v);
  memset(t, 0, sizeof *t);
}

void gpu_pages_around(uintptr_t addr, size_t len, size_t page, uintptr_t *start, size_t *span) {
  uintptr_t lo = addr & ~(uintptr_t)(page - 1), hi = (addr + len + page - 1) & ~(uintptr_t)(page - 1);
  *start = lo;
  *span = hi - lo;
}

int gpu_arena_object_bytes(size_t want, size_t *bytes) {
  if (want == 0 || want > GPU_ARENA_MAX) return EINVAL;
  *bytes = (want + GPU_OBJECT_ALIGN - 1) & ~(GPU_OBJECT_ALIGN - 1);
  return 0;
}

int gpu_arena_check(const void *gas, size_t bytes) {
  uintptr_t a = (uintptr_t)gas;
  if (!gas || a % GPU_ARENA_ALIGN || bytes % GPU_ARENA_ALIGN || bytes > GPU_ARENA_MAX ||
      !range_ok(a, bytes))
    return EINVAL;
  return 0;
}

int gpu_open_check(const void *gas, size_t bytes) {
  return gas && range_ok((uintptr_t)gas, bytes) ? 0 : EINVAL;
}

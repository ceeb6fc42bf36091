/* gas.c: maps the global address space at a fixed address (MAP_FIXED_NOREPLACE), reports a
 * clash as a clear start-up error instead of moving it, and answers "is this range inside the
 * GAS?" for transfers. The only file that asks the OS for GAS memory. */
#include "worker/gas.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000 /* Linux >= 4.17; older kernels ignore it (handled) */
#endif

static gas_bounds mapped; /* size 0: no GAS mapped */
static bool mapped_shared; /* from a memory object other workers map too (share.c) */

/* Chunks of the GAS whose pages this process mapped with gas_populate and has not given back
 * since: a bit per POPULATED_CHUNK bytes (128 KiB for the default 64 GiB GAS). A set bit only
 * skips a populate (a hint), so it may be stale: when another worker of the host gives the
 * pages back, they are simply faulted in again. NULL: none tracked (populate every time). The
 * words are read and changed atomically (relaxed: a hint needs no order), so threads of a
 * rank populate and release without a lock. */
#define POPULATED_SHIFT 16
#define POPULATED_CHUNK ((uintptr_t)1 << POPULATED_SHIFT)
static uint64_t *populated;

/* Write a formatted message into err (when given) and return code. */
static int fail(int code, char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return code;
}

/* The settings that move or shrink the GAS (src/common/config.c reads them on every rank). */
#define HINT                                                                                 \
  "choose another base with ANTHEAP_GAS_BASE=0x... (1 MiB-aligned; on every rank), and/or a " \
  "smaller size with ANTHEAP_GAS_SIZE_MIB=..."

#ifdef AH_ASAN_BUILD
#define ASAN_NOTE " (this is an AddressSanitizer build: its shadow memory covers " \
                  "[0x02008fff7000, 0x10007fff8000), and its heap 4 TiB at 0x500000000000 or " \
                  "0x600000000000, by its version)"
#else
#define ASAN_NOTE ""
#endif

/* Arguments a mapping can be made from: page-aligned, non-empty, not wrapping around. */
static int check_args(uintptr_t base, size_t size, char *err, size_t errlen) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  if (size == 0 || base == 0 || base % page || size % page)
    return fail(EINVAL, err, errlen,
                "antheap: GAS [0x%jx, +%zu bytes) is not a non-empty range of whole %ju-byte "
                "pages at a non-zero base",
                (uintmax_t)base, size, (uintmax_t)page);
  if (base + size < base)
    return fail(EINVAL, err, errlen,
                "antheap: GAS at 0x%jx with %zu bytes wraps around the address space; " HINT,
                (uintmax_t)base, size);
  return 0;
}

/* Map stripes [stripe j = base + j * stride) of the reserved range [base, base + size) from
 * fds[j % nfds] at offset (j / nfds) * stride, shared, over the reservation. 0 or errno. */
static int map_stripes(uintptr_t base, size_t size, const int *fds, int nfds, size_t stride) {
  for (size_t j = 0; (uintptr_t)j * stride < size; j++) {
    size_t at = j * stride, len = size - at < stride ? size - at : stride;
    void *p = mmap((void *)(base + at), len, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_FIXED | MAP_NORESERVE, fds[j % (size_t)nfds],
                   (off_t)((j / (size_t)nfds) * stride));
    if (p == MAP_FAILED) return errno;
  }
  return 0;
}

/* Map the GAS privately (nfds 0) or from nfds memory objects, shared: one object linearly, or
 * several in stripes of stride bytes taken in turn (gas_map_striped). */
static int map_gas(uintptr_t base, size_t size, const int *fds, int nfds, size_t stride,
                   char *err, size_t errlen) {
  if (mapped.size)
    return fail(EBUSY, err, errlen, "antheap: a GAS is already mapped at [0x%jx, 0x%jx)",
                (uintmax_t)mapped.base, (uintmax_t)(mapped.base + mapped.size));
  int rc = check_args(base, size, err, errlen);
  if (rc) return rc;
  /* One object is mapped at once; several over a reservation of the whole range (which is
   * what meets a clash: MAP_FIXED_NOREPLACE), a stripe at a time. */
  int flags = MAP_FIXED_NOREPLACE | MAP_NORESERVE;
  flags |= nfds == 1 ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS;
  void *p = mmap((void *)base, size, nfds > 1 ? PROT_NONE : PROT_READ | PROT_WRITE, flags,
                 nfds == 1 ? fds[0] : -1, 0);
  uintptr_t end = base + size;
  if (p == MAP_FAILED && errno == EEXIST)
    return fail(EEXIST, err, errlen,
                "antheap: cannot map the GAS at [0x%jx, 0x%jx) (%zu MiB): part of that range "
                "is already mapped in this process%s; " HINT,
                (uintmax_t)base, (uintmax_t)end, size >> 20, ASAN_NOTE);
  if (p == MAP_FAILED) {
    int e = errno;
    return fail(e, err, errlen, "antheap: cannot map the GAS at [0x%jx, 0x%jx) (%zu MiB): %s; " HINT,
                (uintmax_t)base, (uintmax_t)end, size >> 20, strerror(e));
  }
  if ((uintptr_t)p != base) { /* a kernel older than 4.17 took the address as a hint */
    munmap(p, size);
    return fail(EEXIST, err, errlen,
                "antheap: cannot map the GAS at [0x%jx, 0x%jx): the kernel placed it at %p "
                "instead (Linux < 4.17 ignores MAP_FIXED_NOREPLACE, and the range is in use); " HINT,
                (uintmax_t)base, (uintmax_t)end, p);
  }
  int e = nfds > 1 ? map_stripes(base, size, fds, nfds, stride) : 0;
  if (e) {
    munmap(p, size);
    return fail(e, err, errlen,
                "antheap: cannot map the shared GAS's %zu stripes of %zu KiB from %d memory "
                "objects: %s (the kernel's limit of mappings a process, vm.max_map_count?); "
                "ANTHEAP_SHARE_OBJECTS=1 maps one object whole",
                (size + stride - 1) / stride, stride >> 10, nfds, strerror(e));
  }
  mapped.base = base;
  mapped.size = size;
  mapped_shared = nfds > 0;
  populated = calloc(((size >> POPULATED_SHIFT) + 64) / 64, sizeof *populated);
  return 0;
}

int gas_map(uintptr_t base, size_t size, char *err, size_t errlen) {
  return map_gas(base, size, NULL, 0, 0, err, errlen);
}

int gas_map_shared(uintptr_t base, size_t size, int fd, char *err, size_t errlen) {
  return gas_map_striped(base, size, &fd, 1, size, err, errlen);
}

int gas_map_striped(uintptr_t base, size_t size, const int *fds, int nfds, size_t stride,
                    char *err, size_t errlen) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  if (nfds < 1 || (nfds > 1 && (stride == 0 || stride % page)))
    return fail(EINVAL, err, errlen, "antheap: no memory objects (or no stripe size) to map the "
                                     "GAS from");
  for (int i = 0; i < nfds; i++)
    if (fds[i] < 0) return fail(EINVAL, err, errlen, "antheap: a GAS memory object is missing");
  return map_gas(base, size, fds, nfds, stride, err, errlen);
}

bool gas_is_shared(void) { return mapped.size && mapped_shared; }

int gas_release(uintptr_t addr, size_t len) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t start = (addr + page - 1) & ~(page - 1), end = (addr + len) & ~(page - 1);
  if (!gas_contains(addr, len)) return EINVAL;
  if (end <= start) return 0;
  for (uintptr_t c = (start - mapped.base) >> POPULATED_SHIFT;
       populated && c <= (end - 1 - mapped.base) >> POPULATED_SHIFT; c++)
    __atomic_fetch_and(&populated[c / 64], ~(1ull << (c % 64)), __ATOMIC_RELAXED);
  /* shared: the memory object's pages go (for every worker mapping it); private: ours */
  if (madvise((void *)start, end - start, mapped_shared ? MADV_REMOVE : MADV_DONTNEED)) return errno;
  return 0;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux >= 5.14; older kernels answer EINVAL (ignored) */
#endif

static bool chunk_populated(uintptr_t c) {
  return populated && __atomic_load_n(&populated[c / 64], __ATOMIC_RELAXED) >> (c % 64) & 1;
}

/* Populate [start, end) (whole pages), then mark the chunks it covers whole. */
static void populate_run(uintptr_t start, uintptr_t end) {
  if (madvise((void *)start, end - start, MADV_POPULATE_WRITE)) return; /* a hint: fine */
  uintptr_t first = (start - mapped.base + POPULATED_CHUNK - 1) >> POPULATED_SHIFT;
  for (uintptr_t c = first; populated && (c + 1) << POPULATED_SHIFT <= end - mapped.base; c++)
    __atomic_fetch_or(&populated[c / 64], 1ull << (c % 64), __ATOMIC_RELAXED);
}

void gas_populate(uintptr_t addr, size_t len) {
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t start = addr & ~(page - 1), end = (addr + len + page - 1) & ~(page - 1);
  if (len == 0 || !gas_contains(start, end - start)) return;
  /* one madvise per run of chunks not known to be mapped already */
  uintptr_t run = 0; /* start of the pending run, 0: none */
  for (uintptr_t at = start; at < end;) {
    uintptr_t c = (at - mapped.base) >> POPULATED_SHIFT;
    uintptr_t next = mapped.base + ((c + 1) << POPULATED_SHIFT);
    if (next > end) next = end;
    if (chunk_populated(c)) {
      if (run) populate_run(run, at);
      run = 0;
    } else if (!run) {
      run = at;
    }
    at = next;
  }
  if (run) populate_run(run, end);
}

int gas_unmap(void) {
  if (!mapped.size) return EINVAL;
  if (munmap((void *)mapped.base, mapped.size)) return errno;
  free(populated);
  populated = NULL;
  mapped.base = 0;
  mapped.size = 0;
  mapped_shared = false;
  return 0;
}

const gas_bounds *gas_current(void) { return mapped.size ? &mapped : NULL; }

bool gas_bounds_contains(const gas_bounds *g, uintptr_t addr, size_t len) {
  if (!g || len == 0 || addr < g->base) return false;
  uintptr_t off = addr - g->base; /* no overflow: addr >= base */
  return off < g->size && len <= g->size - off;
}

bool gas_contains(uintptr_t addr, size_t len) { return gas_bounds_contains(gas_current(), addr, len); }

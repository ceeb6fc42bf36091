/* gas.h: the global address space (GAS) of a worker: one fixed virtual range, mapped at the
 * same address in every worker process so that a pointer into it means the same object
 * everywhere.
 *
 * A worker's GAS is either private memory (MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE: the
 * same virtual range holds different data on different workers until a transfer (transfer.h)
 * copies bytes from one worker's GAS into the same addresses of another's), or, for workers
 * of one host, one memory object mapped MAP_SHARED by all of them (share.h), so that a region
 * moves between them without a copy. Pages cost physical memory only once touched, and
 * gas_release gives them back.
 *
 * One GAS per process: gas_map records the mapping, gas_current()/gas_contains() consult it.
 */
#ifndef AH_WORKER_GAS_H
#define AH_WORKER_GAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/types.h"

/* A GAS window: [base, base + size). */
typedef struct gas_bounds {
  uintptr_t base;
  size_t size;
} gas_bounds;

/* Map [base, base + size) read-write, private, without reserving swap, and only there
 * (MAP_FIXED_NOREPLACE: never over an existing mapping, never somewhere else). base and size
 * must be multiples of the system page size. Returns 0, or an errno code with a one-line
 * message in err (may be NULL): EEXIST the range clashes with a mapping already there (or the
 * kernel is older than 4.17 and placed it elsewhere), ENOMEM no address space, EINVAL bad
 * arguments, EBUSY a GAS is already mapped in this process. */
int gas_map(uintptr_t base, size_t size, char *err, size_t errlen);

/* The same, shared: the GAS is the memory object fd (at least size bytes), MAP_SHARED. */
int gas_map_shared(uintptr_t base, size_t size, int fd, char *err, size_t errlen);
/* The same from nfds memory objects in stripes: stripe j, [base + j * stride, + stride), is
 * fds[j % nfds] at offset (j / nfds) * stride (each object at least ceil(stripes / nfds) *
 * stride bytes; stride a multiple of the page size). The kernel serializes first touches of one
 * shared object's pages (its page cache and accounting locks): workers faulting in different
 * stripes at once do not wait for each other. nfds 1 is gas_map_shared. */
int gas_map_striped(uintptr_t base, size_t size, const int *fds, int nfds, size_t stride,
                    char *err, size_t errlen);
/* Is the mapped GAS shared with other workers? */
bool gas_is_shared(void);
/* Give the whole pages inside [addr, addr + len) back to the OS (they read as zeros after):
 * MADV_REMOVE on a shared GAS (the memory object's pages, for every worker of the host),
 * MADV_DONTNEED on a private one. 0, EINVAL (not inside the GAS) or the madvise error. */
int gas_release(uintptr_t addr, size_t len);

/* Map the pages of [addr, addr + len) writable now, in one call, instead of one page fault
 * each at first touch (MADV_POPULATE_WRITE; a hint: kernels without it ignore it). Chunks this
 * process populated before and has not released since are skipped: walking the page tables
 * of a region that is already mapped costs as much as a small move. Thread-safe, as is
 * gas_release (the chunks' bits change atomically). */
void gas_populate(uintptr_t addr, size_t len);

/* Unmap the GAS mapped by gas_map (its data is lost). Returns 0, or EINVAL when none is. */
int gas_unmap(void);

/* The mapped GAS, or NULL when none is. */
const gas_bounds *gas_current(void);

/* Whether [addr, addr + len) lies inside g (len > 0; overflow-safe: a range that wraps
 * around the address space is never inside). */
bool gas_bounds_contains(const gas_bounds *g, uintptr_t addr, size_t len);

/* gas_bounds_contains for the mapped GAS (false when none is mapped). */
bool gas_contains(uintptr_t addr, size_t len);

#endif /* AH_WORKER_GAS_H */

/* retain.h: how much freed GAS memory a worker keeps mapped instead of giving it back to the OS.
 *
 * Giving a freed big region's pages back at once (gas_release) makes the next region that
 * lands on those addresses pay a page fault (and, on a shared GAS, a page allocation and
 * zeroing) per 4 KiB page again, which can be most of the cost of building a list. So a worker
 * keeps up to `budget` bytes of freed regions mapped; a freed region that does not fit goes
 * back to the OS whole. The pages can only be given back while the region is still ours
 * (before MSG_RFREE hands its addresses to the schedulers), so what is kept stays mapped until
 * new objects land on it: every slab this worker then leases is counted as reuse of kept memory
 * (the schedulers hand freed space out again before they ask for more), which makes room in the
 * budget again. The memory a job keeps mapped is therefore bounded by its peak footprint plus
 * the budget of each worker, not by the total it ever freed. Budget 0: every big region goes
 * back at once. Pure bookkeeping, no system calls (gas.c does those). */
#ifndef AH_WORKER_RETAIN_H
#define AH_WORKER_RETAIN_H

#include <stdbool.h>
#include <stddef.h>

#define RETAIN_DEFAULT_BUDGET ((size_t)256 << 20) /* bytes per worker */

typedef struct retain {
  size_t budget; /* most bytes of freed regions kept mapped */
  size_t held;   /* bytes kept that no lease has reused yet */
} retain;

void retain_init(retain *r, size_t budget);

/* A region of `bytes` is being freed: true when it fits the budget (kept mapped; counted),
 * false when the caller must give its pages back. */
bool retain_keep(retain *r, size_t bytes);

/* `bytes` of new slabs were leased: count them as reuse of kept memory. */
void retain_reused(retain *r, size_t bytes);

#endif

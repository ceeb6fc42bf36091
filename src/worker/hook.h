/* hook.h: a layer above the worker library (src/gpu) hears of memory about to be freed, before
 * its pages go back to the OS or to the schedulers: a GPU registration of those pages must go
 * first (a page pinned for a GPU and then given back would stay with the GPU, and CUDA would
 * refuse to register the range again). Not part of the public API. */
#ifndef AH_WORKER_HOOK_H
#define AH_WORKER_HOOK_H

#include <stddef.h>
#include <stdint.h>

/* Called with each range of a region freed by this worker (sys_rfree: the region and its
 * descendants, before the pages are given back and the schedulers free it), and with the
 * whole GAS before sys_finalize unmaps it. */
typedef void (*worker_free_hook)(uintptr_t addr, size_t len);
/* Install the hook (one; NULL removes it). */
void worker_set_free_hook(worker_free_hook fn);

#endif /* AH_WORKER_HOOK_H */

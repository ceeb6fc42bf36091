/* cache_backend.c: the worker's allocation caches (cache.c: the rank's one below
 * MPI_THREAD_MULTIPLE, one per thread at MULTIPLE: tcache.c) on this worker's schedulers:
 * ANTHEAP_CACHE, the backend that leases slabs and hands them back over rpc (MSG_LEASE,
 * MSG_UNLEASE), and flushes where the schedulers must see every object. Main entries:
 * worker_start_cache, worker_flush_cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/gas.h"
#include "worker/guard.h"
#include "worker/profile.h"
#include "worker/worker.h"

/* Map the pages of n leased slabs now, one call per run of adjacent slabs. */
static void populate_runs(const uintptr_t *slabs, uint32_t n) {
  for (uint32_t i = 0; i < n;) {
    uint32_t j = i + 1;
    while (j < n && slabs[j] == slabs[j - 1] + AH_SLAB_SIZE) j++;
    gas_populate(slabs[i], (size_t)(j - i) * AH_SLAB_SIZE);
    i = j;
  }
}

static int lease_rpc(void *ctx, uint32_t rid, size_t size, uint32_t want, uint32_t min,
                     int32_t *sched, uint32_t *slot, uintptr_t *slabs, uint32_t *got) {
  (void)ctx;
  RANK_GUARD(); /* the request channel, the retain budget */
  proto_lease b = {.size = size, .rid = rid, .want = want, .min = min};
  const uint64_t *t;
  uint32_t n;
  int rc = rpc_call(MSG_LEASE, &b, &t, &n);
  if (rc) return rc;
  if (n < 2 + min || n > 2 + want) return EPROTO;
  *sched = (int32_t)t[0];
  *slot = (uint32_t)t[1];
  *got = n - 2;
  for (uint32_t i = 0; i < *got; i++) slabs[i] = (uintptr_t)t[2 + i];
  for (uint32_t i = 0; guard_on() && i < *got; i++) guard_release(slabs[i], AH_SLAB_SIZE);
  retain_reused(&ah_self.kept, (size_t)*got * AH_SLAB_SIZE);
  return 0;
}

/* A big lease's pages are mapped at once (a call per run, not a fault a page), outside the rank
 * lock (cache_backend.leased): at MPI_THREAD_MULTIPLE the rank's other threads do not wait
 * while up to 4 MiB is faulted in (gas_populate is thread-safe). */
static void lease_leased(void *ctx, const uintptr_t *slabs, uint32_t n) {
  (void)ctx;
  if (n < 16) return;
  uint64_t t0 = profile_on ? profile_now_ns() : 0;
  populate_runs(slabs, n);
  if (profile_on) profile_populate(profile_now_ns() - t0);
}

/* The reply comes back through our leaf whichever scheduler granted the slabs: the request
 * is routed by its first slab's address, so sched only groups the slabs. */
static int unlease_rpc(void *ctx, int32_t sched, const uint64_t *pairs, uint32_t n,
                       uint64_t *dropped) {
  (void)ctx, (void)sched;
  RANK_GUARD();
  proto_unlease b = {.n = n};
  const uint64_t *t;
  uint32_t nt;
  int rc = rpc_tail(MSG_UNLEASE, &b, pairs, 2 * n, &t, &nt);
  if (rc) return rc;
  if (nt != 1) return EPROTO;
  *dropped = t[0];
  return 0;
}

/* (worker.h) */
int worker_flush_cache(void) {
  uint64_t returned = 0, dropped = 0, t0 = profile_on ? profile_now_ns() : 0;
  int rc = 0;
  if (ah_self.cache) {
    rc = cache_flush_counted(ah_self.cache, &returned, &dropped);
  } else if (tcaches_on()) { /* every thread's (tcache.h: never under the rank lock) */
    AH_ASSERT(rank_lock_depth() == 0);
    rc = tcaches_flush(&returned, &dropped);
  }
  if (profile_on) profile_flush(profile_now_ns() - t0, returned);
  if (returned) memo_on_change(&ah_self.memo, MEMO_SLABS_RETURNED, NULL);
  if (dropped)
    fprintf(stderr,
            "antheap: worker %d: %lu objects allocated from the cache in regions that another "
            "worker had freed were dropped\n",
            ah_self.id, (unsigned long)dropped);
  return rc;
}

/* ANTHEAP_CACHE: on (default) or off. */
static int cache_setting(bool *on, char *err, size_t errlen) {
  const char *v = getenv("ANTHEAP_CACHE");
  *on = true;
  if (!v || !strcmp(v, "on") || !strcmp(v, "1")) return 0;
  if (!strcmp(v, "off") || !strcmp(v, "0")) {
    *on = false;
    return 0;
  }
  snprintf(err, errlen, "ANTHEAP_CACHE=%s: expected on or off", v);
  return EINVAL;
}

int worker_new_cache(void) {
  cache_backend be = {.lease = lease_rpc, .unlease = unlease_rpc, .leased = lease_leased};
  return cache_create(&ah_self.cache, &be, NULL);
}

/* (worker.h) */
int worker_free_at_scheduler(uintptr_t addr) {
  proto_addr b = {.addr = addr};
  return rpc_call(MSG_FREE, &b, NULL, NULL);
}

/* At MPI_THREAD_MULTIPLE: a cache per thread, leasing through the rank (tcache.h). A thread's
 * lease holds the rank lock across the scheduler's round trip, so the rank's threads lease one
 * after another: their caches lease 4x more at a time than a rank's (first grant 8 slabs, up
 * to 4,096: 16 MiB), for a quarter of the round trips, and keep up to one such lease idle. */
static const cache_config thread_grants = {
    .first_grant = 8, .max_grant = 4096, .max_idle = 4096, .max_batch = 65536};

static int start_tcaches(void) {
  const gas_bounds *g = gas_current();
  tcache_setup s = {.be = {.lease = lease_rpc, .unlease = unlease_rpc, .leased = lease_leased},
                    .lock = rank_lock, .unlock = rank_unlock,
                    .gas_base = g->base, .gas_size = g->size,
                    .free_elsewhere = worker_free_at_scheduler, .cfg = &thread_grants};
  return tcaches_start(&s);
}

int worker_start_cache(char *err, size_t errlen) {
  bool on;
  int rc = cache_setting(&on, err, errlen);
  if (rc || !on) return rc;
  if ((rc = threads_multi() ? start_tcaches() : worker_new_cache()))
    snprintf(err, errlen, "no memory for the allocation cache");
  return rc;
}

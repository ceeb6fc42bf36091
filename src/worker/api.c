/* api.c: the worker library (include/antheap.h): joining and leaving the job (at any MPI
 * thread level: sys_init_thread, threads.h), barriers, regions and objects (the calling
 * thread's allocation cache first for objects up to 4 KiB, else a request to the leaf
 * scheduler: rpc.c), realloc, errors and the test hooks. Moves are move.c's, the caches'
 * backend cache_backend.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/idle.h"
#include "common/idle_mpi.h"
#include "worker/gas.h"
#include "worker/guard.h"
#include "worker/profile.h"
#include "worker/tcache_hot.h"
#include "worker/worker.h"

worker_state ah_self;

/* ANTHEAP_MOVE_MEMO: on (default), off, or check (memo.h). */
static int memo_setting(char *err, size_t errlen) {
  const char *v = getenv("ANTHEAP_MOVE_MEMO");
  bool on = !v || !strcmp(v, "on") || !strcmp(v, "1"), check = v && !strcmp(v, "check");
  if (!on && !check && strcmp(v, "off") && strcmp(v, "0")) {
    snprintf(err, errlen, "ANTHEAP_MOVE_MEMO=%s: expected on, off or check", v);
    return EINVAL;
  }
  memo_init(&ah_self.memo, (on || check) && !threads_multi()); /* off at MULTIPLE (threads.h) */
  ah_self.memo_check = check;
  return 0;
}

/* ---- joining and leaving ---- */

static void leave_job(void) {
  if (ah_self.up) {
    unsigned char msg[sizeof(proto_header)];
    size_t len = proto_build(msg, sizeof msg, MSG_FINALIZE, ++ah_self.req, ah_self.job.rank,
                             PROTO_NO_DEST, 0, -1, NULL, NULL, 0);
    MPI_Send(msg, (int)len, MPI_BYTE, ah_self.leaf, AH_TAG_PROTO, ah_self.job.proto);
    bells_ring(&ah_self.job.bells, ah_self.leaf);
    const gas_bounds *g = gas_current();
    if (ah_self.free_hook && g) ah_self.free_hook(g->base, g->size);
    guard_stop();
    transfer_set_landing(NULL);
    transfer_set_ring(NULL); /* (the bells go with the job) */
    gas_unmap();
  }
  share_free(&ah_self.share);
  cache_destroy(ah_self.cache);
  ah_self.cache = NULL;
  tcaches_stop();
  memo_destroy(&ah_self.memo);
  ah_self.up = false;
  job_teardown(&ah_self.job);
  free(ah_self.buf);
  ah_self.buf = NULL;
  ah_self.cap = 0;
}

static void catch_mpi_finalize(void);

/* The doorbell of worker `peer` (a rank of job.xfer, where the moves go), for transfer.c. */
static void ring_worker(int peer) {
  bells_ring(&ah_self.job.bells, ah_self.job.plan.worker_ranks[peer]);
}

/* A worker setting that was refused (EINVAL from its reader) is a bad setting: EDOM. */
static int setting(int rc) { return rc == EINVAL ? EDOM : rc; }

/* The checked mode's landing hook at MPI_THREAD_MULTIPLE: its spans are the rank's. */
static void landing_locked(uintptr_t addr, size_t len) {
  RANK_GUARD();
  guard_release(addr, len);
}

/* The worker's own settings and the GAS, in sys_init: 0 or an errno, with a message in err. */
static int start_worker(char *err, size_t errlen) {
  int rc = share_map_gas(ah_self.job.workers, ah_self.job.plan.share_host,
                         ah_self.job.cfg.share_objects, ah_self.job.cfg.split_hosts,
                         ah_self.job.cfg.gas_base,
                         ah_self.job.cfg.gas_size, &ah_self.share, err, errlen);
  if (!rc && (rc = setting(memo_setting(err, errlen)))) gas_unmap();
  if (!rc && (rc = setting(watch_config_from_env(&ah_self.watch, ah_self.id, err, errlen))))
    gas_unmap();
  bool guard = false;
  if (!rc && (rc = setting(guard_setting(&guard, err, errlen)))) gas_unmap();
  if (!rc && guard) {
    guard_start(ah_self.id);
    transfer_set_landing(threads_multi() ? landing_locked : guard_release);
  }
  ah_self.watch_warn = ah_self.watch;
  ah_self.watch_warn.timeout_ns = 0;
  transfer_set_watch(&ah_self.watch);
  if (!rc && (rc = setting(worker_start_cache(err, errlen)))) gas_unmap();
  long mib = ah_self.job.plan.retain_mib;
  retain_init(&ah_self.kept, mib < 0 ? RETAIN_DEFAULT_BUDGET : (size_t)mib << 20);
  return rc;
}

/* sys_init failed: MPI goes too when sys_init started it, so that the program can simply
 * return (every rank fails alike: nobody waits in a collective). */
static int init_failed(int rc) {
  if (ah_self.mpi_ours) MPI_Finalize();
  ah_self.mpi_ours = false;
  return fail_errno(rc);
}

/* MPI's thread levels are ordered (MPI 4.0, 11.6): SINGLE < FUNNELED < SERIALIZED < MULTIPLE. */
static bool thread_level_valid(int l) {
  return l == MPI_THREAD_SINGLE || l == MPI_THREAD_FUNNELED || l == MPI_THREAD_SERIALIZED ||
         l == MPI_THREAD_MULTIPLE;
}

int sys_init(int *argc, char ***argv) {
  int provided;
  return sys_init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}

int sys_init_thread(int *argc, char ***argv, int required, int *provided) {
  if (ah_self.up) return fail_errno(EBUSY);
  if (!thread_level_valid(required) || !provided) return fail_errno(EINVAL);
  int flag, mpi_level;
  MPI_Initialized(&flag);
  if (!flag) {
    MPI_Init_thread(argc, argv, required, &mpi_level);
    ah_self.mpi_ours = true;
  } else {
    MPI_Query_thread(&mpi_level);
  }
  *provided = required < mpi_level ? required : mpi_level;
  threads_set_level(*provided); /* before the worker's settings (memo_setting reads it) */
  profile_setup();
  int rc = job_setup(argc, argv, &ah_self.job, "antheap", NULL); /* prints why it failed */
  if (rc) return init_failed(rc);
  if (ah_self.job.plan.topology_only) { /* print the plan and end the job everywhere */
    if (ah_self.job.rank == 0) plan_print(stdout, &ah_self.job.plan);
    job_teardown(&ah_self.job);
    MPI_Finalize();
    exit(0);
  }
  if (ah_self.job.is_sched) { /* SPMD: this rank is a scheduler for the whole job */
    rc = job_run_scheduler(&ah_self.job);
    job_teardown(&ah_self.job);
    MPI_Finalize();
    exit(rc);
  }
  MPI_Comm_rank(ah_self.job.workers, &ah_self.id);
  MPI_Comm_size(ah_self.job.workers, &ah_self.nworkers);
  ah_self.leaf = ah_self.job.plan.ranks[ah_self.job.rank].leaf;
  transfer_set_idle_cap(ah_self.job.idle_cap_ns); /* moves wait like every other wait of ours */
  transfer_set_ring(ring_worker);
  char err[512];
  rc = start_worker(err, sizeof err);
  /* the lowest failing worker says why (the others most likely failed alike), then all go */
  struct { int id, rc; } mine = {rc ? ah_self.id : ah_self.nworkers, rc}, first;
  MPI_Allreduce(&mine, &first, 1, MPI_2INT, MPI_MINLOC, ah_self.job.workers);
  ah_self.up = true;
  if (first.id < ah_self.nworkers) { /* nobody starts: the schedulers end the job */
    if (first.id == ah_self.id)
      fprintf(stderr, "antheap: worker %d: %s\n", ah_self.id, err), fflush(stderr);
    /* said before any worker can leave (and mpirun end the job) */
    MPI_Barrier(ah_self.job.workers);
    leave_job();
    return init_failed(rc ? rc : first.rc);
  }
  catch_mpi_finalize();
  return 0;
}

/* A barrier of all workers that refuses moves sent to this worker meanwhile (their senders
 * would otherwise wait for ever): the worker is leaving. */
static void leaving_barrier(void) {
  MPI_Request rq;
  MPI_Ibarrier(ah_self.job.workers, &rq);
  idle_wait idle;
  idle_start(&idle, ah_self.job.idle_cap_ns);
  watch wt;
  watch_start(&wt, &ah_self.watch_warn, "sys_finalize", "every other worker to call it too", 0);
  for (int done = 0;;) {
    MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
    if (done) break;
    if (transfer_refuse_pending(ah_self.job.xfer, AH_TAG_XFER, SYS_MOVE_CHANNELS, ESHUTDOWN))
      idle_start(&idle, ah_self.job.idle_cap_ns);
    else watch_poll(&wt), idle_pause(&idle);
  }
  while (transfer_refuse_pending(ah_self.job.xfer, AH_TAG_XFER, SYS_MOVE_CHANNELS, ESHUTDOWN)) {
  }
}

/* What sys_finalize does before MPI_Finalize: 0 or the flush's error. */
static int leave_cleanly(void) {
  int rc = worker_flush_cache(); /* before the barrier: the schedulers shut down after it */
  if (ah_self.barrier_pending)
    rpc_wait_collective(&ah_self.barrier_rq, &ah_self.watch_warn, "sys_finalize");
  ah_self.barrier_pending = false;
  leaving_barrier();
  profile_report(ah_self.id); /* (the last flush counted) */
  leave_job();
  return rc;
}

int sys_finalize(void) {
  if (!ah_self.up) return fail_errno(NOT_UP);
  int rc = leave_cleanly();
  if (ah_self.mpi_ours) MPI_Finalize();
  return rc ? fail_errno(rc) : 0;
}

/* A worker that calls MPI_Finalize without sys_finalize would leave the schedulers (and so the
 * whole job) waiting for ever. MPI_Finalize first deletes the attributes of MPI_COMM_SELF, with
 * MPI still usable (MPI 3.1, section 8.7.1): one set in sys_init names the mistake there and
 * leaves the job as sys_finalize would. */
static int on_mpi_finalize(MPI_Comm comm, int key, void *attr, void *extra) {
  (void)comm, (void)key, (void)attr, (void)extra;
  if (!ah_self.up) return MPI_SUCCESS; /* sys_finalize came first, as it should */
  fprintf(stderr, "antheap: worker %d: MPI_Finalize was called before sys_finalize: antheap "
          "leaves the job now, as sys_finalize would (call sys_finalize before MPI_Finalize)\n",
          ah_self.id);
  leave_cleanly();
  return MPI_SUCCESS;
}

static void catch_mpi_finalize(void) {
  int key;
  if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_mpi_finalize, &key, NULL) == MPI_SUCCESS)
    MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL);
}

MPI_Comm sys_comm(void) {
  return ah_self.up ? ah_self.job.workers : (fail_errno(NOT_UP), MPI_COMM_NULL);
}
int sys_worker_id(void) { return ah_self.up ? ah_self.id : fail_errno(NOT_UP); }
int sys_workers(void) { return ah_self.up ? ah_self.nworkers : (fail_errno(NOT_UP), 0); }

int sys_shares_gas(int peer) {
  if (!ah_self.up) return fail_errno(NOT_UP);
  if (peer < 0 || peer >= ah_self.nworkers) return fail_errno(EINVAL);
  return peer == ah_self.id || share_with(&ah_self.share, peer);
}

int sys_host_load(int *ranks, int *cores) {
  if (!ah_self.up) return fail_errno(NOT_UP);
  if (ranks) *ranks = ah_self.job.plan.local_ranks;
  if (cores) *cores = ah_self.job.plan.host_cores;
  return 0;
}

int sys_barrier(void) {
  if (!ah_self.up) return fail_errno(NOT_UP);
  int rc = worker_flush_cache(); /* after the barrier every worker's objects are known everywhere */
  memo_on_change(&ah_self.memo, MEMO_BARRIER, NULL);
  /* a barrier that gave up is still under way: this call waits for that one */
  if (!ah_self.barrier_pending &&
      MPI_Ibarrier(ah_self.job.workers, &ah_self.barrier_rq) != MPI_SUCCESS)
    return fail_errno(EPROTO);
  ah_self.barrier_pending = true;
  int late = rpc_wait_collective(&ah_self.barrier_rq, &ah_self.watch, "sys_barrier");
  if (late) return fail_errno(late);
  ah_self.barrier_pending = false;
  return rc ? fail_errno(rc) : 0;
}

/* ---- regions and objects ---- */

rid_t sys_ralloc(rid_t parent, int level_hint) {
  if (!ah_self.up) return (rid_t)fail_errno(NOT_UP) + 1; /* 0 */
  RANK_GUARD();
  memo_on_change(&ah_self.memo, MEMO_REGIONS_CHANGED, NULL);
  proto_ralloc b = {.parent = parent, .level_hint = level_hint};
  const uint64_t *t;
  uint32_t n;
  int rc = rpc_call(MSG_RALLOC, &b, &t, &n);
  if (rc || n != 1) return (rid_t)fail_reply(rc) + 1; /* 0 */
  return (rid_t)t[0];
}

/* Regions this large (or larger) give their memory back to the OS when freed, unless they fit
 * the worker's budget of kept memory (retain.h). */
#define RELEASE_MIN ((size_t)1 << 20)

/* Give the memory of a region about to be freed back to the OS (gas.h: gas_release), before
 * the schedulers can hand its addresses to anyone else, when it does not fit the budget of
 * freed memory this worker keeps mapped for reuse. Only for regions of RELEASE_MIN or more: a
 * pack round trip costs more than small regions are worth. What is given back is what the
 * region and its descendants own (PACKV_OWNED: every range given to their pools, a few per
 * region), not their live objects' slabs: a region of a million separate objects is a few
 * calls, not a million, and the pages of its freed objects go back too. No other worker can
 * have data there: only the holder leases in a region, and it flushed its cache. */
static int release_region(rid_t region) {
  gas_range *r;
  size_t n;
  ah_self.packs++;
  move_desc d = {.regions = &region, .nreg = 1};
  int rc = move_packv(&d, PACKV_OWNED, PROTO_NO_DEST, &r, &n);
  if (rc) return rc;
  size_t total = 0;
  for (size_t i = 0; i < n; i++) total += r[i].len;
  for (size_t i = 0; ah_self.free_hook && i < n; i++) ah_self.free_hook(r[i].addr, r[i].len);
  bool give_back = total >= RELEASE_MIN && !retain_keep(&ah_self.kept, total);
  for (size_t i = 0; give_back && i < n; i++) gas_release(r[i].addr, r[i].len);
  free(r);
  return 0;
}

int sys_rfree(rid_t region) {
  if (!ah_self.up) return fail_errno(NOT_UP);
  if (region == SYS_ROOT_REGION) return fail_errno(EINVAL); /* never freed, never given back */
  memo_on_change(&ah_self.memo, MEMO_REGIONS_CHANGED, NULL);
  int rc = worker_flush_cache(); /* our cached slots of the region (and its descendants) go first */
  if (rc) return fail_errno(rc);
  RANK_GUARD();
  /* the pack checks the whole subtree, on every scheduler, before anything is freed */
  if (release_region(region) == EPERM) return fail_errno(EPERM);
  proto_rid b = {.rid = region};
  rc = rpc_call(MSG_RFREE, &b, NULL, NULL);
  return rc ? fail_errno(rc) : 0;
}

/* Did the cache answer (0 or a final error), or must the scheduler (ENOTSUP: not a request
 * for the cache; ENOMEM: a lease needs an empty slab, the scheduler may still have a slot)? */
static bool cache_answered(int rc) { return rc != ENOTSUP && rc != ENOMEM && rc != ESRCH; }

/* The calling thread's allocation cache: the rank's one (ah_self.cache) below
 * MPI_THREAD_MULTIPLE, the thread's own at MULTIPLE (tcache.h). Called without the rank lock
 * (tcache.h). */
static bool caching(void) { return ah_self.cache || tcaches_on(); }
static int cached_alloc(size_t size, rid_t region, uintptr_t *a) {
  return ah_self.cache ? cache_alloc(ah_self.cache, size, region, a)
                       : tcache_alloc(size, region, a);
}
static int cached_balloc(size_t size, rid_t region, size_t n, uintptr_t *a) {
  return ah_self.cache ? cache_balloc(ah_self.cache, size, region, n, a)
                       : tcache_balloc(size, region, n, a);
}
static int cached_free(uintptr_t a) {
  return ah_self.cache ? cache_free(ah_self.cache, a) : tcache_free(a);
}
static int cached_lookup(uintptr_t a, rid_t *region, uintptr_t *start, size_t *size,
                         int32_t *sched) {
  return ah_self.cache ? cache_lookup(ah_self.cache, a, region, start, size, sched)
                       : tcache_lookup(a, region, start, size, sched);
}

/* sys_alloc's round trip (not inlined: the cached path then saves few registers). */
static __attribute__((noinline)) void *alloc_at_scheduler(size_t size, rid_t region) {
  RANK_GUARD();
  proto_alloc b = {.size = size, .rid = region, .n = 1};
  const uint64_t *t;
  uint32_t n;
  int rc = rpc_call(MSG_ALLOC, &b, &t, &n);
  if (rc || n != 1) return fail_reply(rc), NULL;
  guard_release((uintptr_t)t[0], size); /* (ANTHEAP_CHECK: pages of a region we handed over) */
  return (void *)(uintptr_t)t[0];
}

/* sys_alloc's whole way: errors, the memos, the cache's slow path, the scheduler (not inlined:
 * sys_alloc's own path then saves few registers). */
static __attribute__((noinline)) void *alloc_any(size_t size, rid_t region) {
  if (!ah_self.up) return fail_errno(NOT_UP), NULL;
  if (size == 0) return fail_errno(EINVAL), NULL;
  memo_on_change(&ah_self.memo, MEMO_OBJECTS_CHANGED, NULL);
  if (caching()) {
    uintptr_t a;
    int rc = cached_alloc(size, region, &a);
    if (rc == 0) return (void *)a;
    if (cache_answered(rc)) return fail_errno(rc), NULL;
  }
  return alloc_at_scheduler(size, region);
}

/* The rank's cache may serve a hit: it has one, the worker is up and holds no memo (which
 * memo_on_change would forget). (Per-thread caches: tcache_fast says it all.) */
static inline bool rank_cache_hits(void) {
  return ah_self.cache && ah_self.up && memo_none(&ah_self.memo);
}

/* The common case first, inline: a slot of the calling thread's (or the rank's) direct bin,
 * which changes nothing when it misses (then alloc_any). */
void *sys_alloc(size_t size, rid_t region) {
  uintptr_t a;
  tcache *t = tcache_fast;
  if (t ? tcache_alloc_hit(t, size, region, &a)
        : rank_cache_hits() && cache_alloc_hit(ah_self.cache, size, region, &a))
    return (void *)a;
  return alloc_any(size, region);
}

int sys_balloc(size_t size, rid_t region, int num, void **objects) {
  if (!ah_self.up) return fail_errno(NOT_UP);
  if (size == 0 || num < 1 || !objects) return fail_errno(EINVAL);
  if ((uint32_t)num > PROTO_MAX_TAIL) return fail_errno(E2BIG); /* more than one reply carries */
  memo_on_change(&ah_self.memo, MEMO_OBJECTS_CHANGED, NULL);
  if (caching()) {
    int rc = cached_balloc(size, region, (size_t)num, (uintptr_t *)objects);
    if (rc == 0) return 0;
    if (cache_answered(rc)) return fail_errno(rc);
  }
  RANK_GUARD();
  proto_alloc b = {.size = size, .rid = region, .n = (uint32_t)num};
  const uint64_t *t;
  uint32_t n;
  int rc = rpc_call(MSG_BALLOC, &b, &t, &n);
  if (rc || n != (uint32_t)num) return fail_reply(rc);
  for (int i = 0; i < num; i++) objects[i] = (void *)(uintptr_t)t[i];
  for (int i = 0; guard_on() && i < num; i++) guard_release((uintptr_t)t[i], size);
  return 0;
}

/* sys_free's whole way (not inlined, as alloc_any). */
static __attribute__((noinline)) int free_any(void *ptr) {
  if (!ptr) return 0; /* as free(NULL): nothing to do, initialised or not */
  if (!ah_self.up) return fail_errno(NOT_UP);
  memo_on_change(&ah_self.memo, MEMO_OBJECTS_CHANGED, NULL);
  if (caching()) {
    int rc = cached_free((uintptr_t)ptr);
    if (rc != ESRCH) return rc ? fail_errno(rc) : 0;
  }
  int rc = worker_free_at_scheduler((uintptr_t)ptr);
  return rc ? fail_errno(rc) : 0;
}

/* A free of a live slot of the calling thread's (or the rank's) cache first, inline; anything
 * else (an error too: the check changed nothing) takes free_any. */
int sys_free(void *ptr) {
  tcache *t = tcache_fast;
  if (t) {
    if (tcache_free_hit(t, (uintptr_t)ptr)) return 0;
  } else if (rank_cache_hits()) {
    if (cache_free_here(ah_self.cache, (uintptr_t)ptr) == 0) return 0;
  }
  return free_any(ptr);
}

int sys_query(const void *ptr, rid_t *region, size_t *size) {
  if (!ah_self.up) return fail_errno(NOT_UP);
  if (caching()) {
    int rc = cached_lookup((uintptr_t)ptr, region, NULL, size, NULL);
    if (rc != ESRCH) return rc ? fail_errno(rc) : 0;
  }
  RANK_GUARD();
  proto_addr b = {.addr = (uintptr_t)ptr};
  const uint64_t *t;
  uint32_t n;
  int rc = rpc_call(MSG_QUERY, &b, &t, &n);
  if (rc || n != 4) return fail_reply(rc);
  if (region) *region = (rid_t)t[0];
  if (size) *size = (size_t)t[2];
  return 0;
}

/* The world rank of the scheduler that holds the object at ptr (test hook, debug.h). */
int antheap_debug_scheduler_of(const void *ptr) {
  if (!ah_self.up) return fail_errno(NOT_UP);
  int32_t sched;
  if (caching()) {
    int rc = cached_lookup((uintptr_t)ptr, NULL, NULL, NULL, &sched);
    if (rc != ESRCH) return rc ? fail_errno(rc) : sched;
  }
  RANK_GUARD();
  proto_addr b = {.addr = (uintptr_t)ptr};
  const uint64_t *t;
  uint32_t n;
  int rc = rpc_call(MSG_QUERY, &b, &t, &n);
  return rc || n != 4 ? fail_reply(rc) : (int)t[3];
}

/* The world rank of the scheduler at `level` on this worker's path (its leaf when the tree
 * is not that deep) (test hook). */
int antheap_debug_path(int level) {
  if (!ah_self.up) return fail_errno(NOT_UP);
  return job_sched_on_path(&ah_self.job, ah_self.leaf, level);
}

/* Realloc of an object this worker's cache handed out: all here, no message. */
static void *realloc_cached(void *ptr, rid_t rid, size_t slot, size_t new_size, rid_t new_region) {
  rid_t to = new_region == SYS_SAME_REGION ? rid : new_region;
  if (to == rid && new_size <= AH_SLAB_SIZE && ah_round_up(new_size, AH_SLOT_ALIGN) == slot)
    return ptr; /* the same slot size, the same region: stays (as the scheduler decides) */
  void *fresh = sys_alloc(new_size, to);
  if (!fresh) return NULL;
  memcpy(fresh, ptr, slot < new_size ? slot : new_size);
  int rc = sys_free(ptr); /* (another thread's flush may have handed its slab back) */
  AH_ASSERT(rc == 0);
  (void)rc;
  return fresh;
}

/* Realloc in three requests, the old slot freed only after the copy: for a new region on
 * another scheduler (MSG_REALLOC answers EXDEV), and on a shared GAS, where MSG_REALLOC would
 * free the old slot at the scheduler before the reply and another worker of the host could
 * take it and write into it before this worker has copied out of it. */
static void *realloc_copy_first(void *ptr, size_t new_size, rid_t new_region) {
  rid_t rid;
  size_t old;
  uintptr_t start;
  { /* the reply lives in the rank's buffer: read it under the lock (not the rest: it allocates) */
    RANK_GUARD();
    proto_addr b = {.addr = (uintptr_t)ptr};
    const uint64_t *t;
    uint32_t n;
    int rc = rpc_call(MSG_QUERY, &b, &t, &n);
    if (rc || n != 4) return fail_reply(rc), NULL;
    rid = (rid_t)t[0], start = (uintptr_t)t[1], old = (size_t)t[2];
  }
  if (start != (uintptr_t)ptr) return fail_errno(EINVAL), NULL; /* interior */
  rid_t to = new_region == SYS_SAME_REGION ? rid : new_region;
  size_t slot = new_size <= AH_SLAB_SIZE ? ah_round_up(new_size, AH_SLOT_ALIGN)
                                         : ah_round_up(new_size, AH_SLAB_SIZE);
  if (to == rid && slot == old) { /* stays, as the scheduler decides: if it is ours */
    move_desc d = {.objects = &ptr, .nobj = 1};
    int held = move_hand_over(&d, PROTO_NO_DEST);
    return held ? fail_errno(held), NULL : ptr;
  }
  void *fresh = sys_alloc(new_size, to);
  if (!fresh) return NULL;
  memcpy(fresh, ptr, old < new_size ? old : new_size);
  if (sys_free(ptr)) { /* not ours (EPERM): nothing may change */
    int err = errno;
    sys_free(fresh);
    return fail_errno(err), NULL;
  }
  return fresh;
}

/* One MSG_REALLOC under the rank lock (its reply lives in the rank's buffer): the new object,
 * or NULL with errno (EXDEV: the new region is on another scheduler). */
static void *realloc_at_scheduler(void *ptr, size_t new_size, rid_t new_region) {
  RANK_GUARD();
  proto_realloc b = {.addr = (uintptr_t)ptr, .size = new_size, .rid = new_region};
  const uint64_t *t;
  uint32_t n;
  int rc = rpc_call(MSG_REALLOC, &b, &t, &n);
  if (rc == EXDEV) return errno = EXDEV, NULL; /* the caller's fallback sets errno if it fails */
  if (rc || n != 2) return fail_reply(rc), NULL;
  void *fresh = (void *)(uintptr_t)t[0];
  size_t old = (size_t)t[1];
  guard_release((uintptr_t)fresh, new_size);
  if (fresh != ptr) memcpy(fresh, ptr, old < new_size ? old : new_size); /* private GAS: ours */
  return fresh;
}

void *sys_realloc(void *ptr, size_t new_size, rid_t new_region) {
  if (!ah_self.up) return fail_errno(NOT_UP), NULL;
  if (!ptr) return sys_alloc(new_size, new_region == SYS_SAME_REGION ? SYS_ROOT_REGION : new_region);
  if (new_size == 0) return fail_errno(EINVAL), NULL;
  memo_on_change(&ah_self.memo, MEMO_OBJECTS_CHANGED, NULL);
  if (caching()) {
    rid_t rid;
    uintptr_t start;
    size_t slot;
    int rc = cached_lookup((uintptr_t)ptr, &rid, &start, &slot, NULL);
    if (rc == 0 && start != (uintptr_t)ptr) rc = EINVAL; /* an interior pointer */
    if (rc == 0) return realloc_cached(ptr, rid, slot, new_size, new_region);
    if (rc != ESRCH) return fail_errno(rc), NULL;
  }
  /* a shared GAS is mapped only where another worker of the host maps it too (share.c) */
  if (gas_is_shared()) return realloc_copy_first(ptr, new_size, new_region);
  void *fresh = realloc_at_scheduler(ptr, new_size, new_region);
  if (fresh || errno != EXDEV) return fresh;
  /* the region is elsewhere; without the lock: the allocation there may wait for this
   * thread's cache while a flusher holds it stopped and waits for the lock */
  return realloc_copy_first(ptr, new_size, new_region);
}

const char *sys_strerror(int err) {
  switch (err) {
    case ENOENT: return "antheap: no such region";
    case EINVAL: return "antheap: invalid pointer or argument (unknown, interior or freed)";
    case ENOMEM: return "antheap: out of memory (the global address space is exhausted)";
    case ENOSPC: return "antheap: no region IDs left";
    case E2BIG: return "antheap: too many for one call (sys_balloc: at most 1,048,576 objects; "
                       "sys_send, sys_give: at most 1,048,576 regions and objects named; a move: "
                       "at most 16,777,216 separate ranges)";
    case EPERM: return "antheap: this worker does not hold the region (only the worker that "
                       "created it, or the last one it was moved or given to, may allocate, "
                       "free, send or give in it)";
    case EPROTO: return "antheap: protocol error (malformed message)";
    case EXDEV: return "antheap: object and region on different schedulers";
    case ECANCELED: return "antheap: the sender gave up the move (its sys_send failed)";
    case ECONNREFUSED: return "antheap: the receiver refused the move (its sys_recv names other "
                              "counts, or the list was not one it could take)";
    case ESHUTDOWN: return "antheap: the receiver left the job (sys_finalize) without receiving";
    case ETIMEDOUT: return "antheap: the peer did not come within ANTHEAP_WAIT_TIMEOUT seconds";
    case NOT_UP: return "antheap is not initialised (call sys_init first)";
    case EDOM: return "antheap: bad option or setting: a --antheap-* option or an ANTHEAP_* "
                      "variable was refused; see the message above";
    case EBUSY: return "antheap: already initialised (sys_init was called twice)";
    default: return strerror(err);
  }
}

void worker_set_free_hook(worker_free_hook fn) { ah_self.free_hook = fn; }

/* ---- test hooks (src/worker/debug.h) ---- */
#include "worker/debug.h"

int antheap_debug_set_cache(int on) {
  if (!ah_self.up) return fail_errno(NOT_UP);
  if (threads_multi()) return fail_errno(ENOTSUP); /* (the threads' caches stay) */
  if (!on) {
    int rc = worker_flush_cache();
    cache_destroy(ah_self.cache);
    ah_self.cache = NULL;
    return rc ? fail_errno(rc) : 0;
  }
  int rc = ah_self.cache ? 0 : worker_new_cache();
  return rc ? fail_errno(rc) : 0;
}

long antheap_debug_packs(void) { return ah_self.packs; }

long antheap_debug_reply_parts(void) { return ah_self.reply_parts; }

int antheap_debug_memo_applies(int peer) {
  if (!ah_self.up) return fail_errno(NOT_UP);
  if (!valid_peer(peer)) return fail_errno(EINVAL);
  return ah_self.memo.on && share_with(&ah_self.share, peer);
}

int antheap_debug_send_raw(const void *buf, size_t len) {
  if (!ah_self.up) return fail_errno(NOT_UP);
  RANK_GUARD();
  MPI_Send(buf, (int)len, MPI_BYTE, ah_self.leaf, AH_TAG_PROTO, ah_self.job.proto);
  return 0;
}

/* api.c: the worker library (include/antheap.h): joining the job, the allocation cache in
 * front of the schedulers (objects up to 4 KiB: cache.c, fed by MSG_LEASE / MSG_UNLEASE),
 * one request/reply with the leaf scheduler for everything else, flushes of the cache where
 * the schedulers must see every object, and sys_send/sys_recv on top of the range transfer. */
#include "antheap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/idle.h"
#include "common/idle_mpi.h"
#include "common/watch.h"
#include "sched/job.h"
#include "sched/proto.h"
#include "worker/cache.h"
#include "worker/gas.h"
#include "worker/guard.h"
#include "worker/hook.h"
#include "worker/memo.h"
#include "worker/retain.h"
#include "worker/share.h"
#include "worker/tcache.h"
#include "worker/threads.h"
#include "worker/transfer.h"

static struct {
  bool up, mpi_ours;
  cache *cache; /* NULL: every call is a round trip (ANTHEAP_CACHE=off) */
  share_group share; /* who maps the same GAS memory as this worker */
  retain kept;       /* freed regions kept mapped for reuse (retain.h) */
  memo memo;         /* range lists of shared moves received and not changed since (memo.h) */
  bool memo_check;   /* ANTHEAP_MOVE_MEMO=check: pack anyway, report differences */
  worker_free_hook free_hook; /* told of memory about to be freed (hook.h: src/gpu) */
  watch_config watch;         /* ANTHEAP_WAIT_WARN / _TIMEOUT: waits that say why (watch.h) */
  watch_config watch_warn;    /* ... the warning alone, for waits that cannot give up */
  bool barrier_pending;       /* a sys_barrier gave up (ETIMEDOUT): the next one finishes it */
  MPI_Request barrier_rq;
  ah_job job;
  int leaf, id, nworkers;
  uint64_t req;
  long packs; /* MSG_PACKV requests sent (debug.h), less those of memo checks */
  long reply_parts; /* replies that said more were coming (PROTO_REPLY_MORE: debug.h) */
  unsigned char *buf;
  size_t cap;
} W;

static int fail_errno(int err) {
  errno = err;
  return -1;
}

/* Every call but sys_init, sys_strerror and sys_version needs a job: before sys_init and after
 * sys_finalize they fail with this errno (antheap.h), which no other failure uses. */
#define NOT_UP ENOTCONN

/* Wait for the next protocol message from the leaf, backing off while idle (idle.h). */
static int receive_reply(proto_msg *m) {
  idle_wait idle;
  idle_start(&idle, W.job.idle_cap_ns);
  watch wt;
  watch_start(&wt, &W.watch_warn, "a request", "its scheduler (rank %d) to answer", W.leaf);
  for (;;) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(W.leaf, AH_TAG_PROTO, W.job.proto, &flag, &st);
    if (flag) {
      int count;
      MPI_Get_count(&st, MPI_BYTE, &count);
      if ((size_t)count > W.cap) {
        unsigned char *b = realloc(W.buf, (size_t)count);
        if (!b) return ENOMEM;
        W.buf = b;
        W.cap = (size_t)count;
      }
      MPI_Recv(W.buf, count, MPI_BYTE, W.leaf, AH_TAG_PROTO, W.job.proto, MPI_STATUS_IGNORE);
      return proto_decode(W.buf, (size_t)count, m);
    }
    watch_poll(&wt);
    idle_pause(&idle);
  }
}

/* Complete a nonblocking collective of the workers (call: the API call that waits), backing
 * off while it is not done, watched by cfg: 0 or ETIMEDOUT (*rq still under way). */
static int wait_collective(MPI_Request *rq, const watch_config *cfg, const char *call) {
  watch wt;
  watch_start(&wt, cfg, call, "every other worker to call it too", 0);
  if (!wt.cfg) {
    idle_wait_request(rq, W.job.idle_cap_ns);
    return 0;
  }
  idle_wait idle;
  idle_start(&idle, W.job.idle_cap_ns);
  for (int done = 0;;) {
    MPI_Test(rq, &done, MPI_STATUS_IGNORE);
    if (done) return 0;
    int rc = watch_poll(&wt);
    if (rc) return rc;
    idle_pause(&idle);
  }
}

/* Send one request (with a tail of out_n words) to the leaf; its number in *req. */
static int rpc_send(unsigned type, const void *fixed, const uint64_t *out, uint32_t out_n,
                    uint64_t *req) {
  if (!W.up) return NOT_UP;
  unsigned char small[sizeof(proto_header) + PROTO_MAX_FIXED], *msg = small;
  size_t cap = sizeof small + (size_t)out_n * 8;
  if (out_n && !(msg = malloc(cap))) return ENOMEM;
  *req = ++W.req;
  size_t len = proto_build(msg, cap, type, *req, W.job.rank, PROTO_NO_DEST, 0, -1, fixed, out,
                           out_n);
  MPI_Send(msg, (int)len, MPI_BYTE, W.leaf, AH_TAG_PROTO, W.job.proto);
  if (msg != small) free(msg);
  return 0;
}

/* The next reply to request req (valid until the next receive): 0, ENOMEM, or EPROTO for
 * anything else (a message that does not read as a reply to it). */
static int rpc_receive(uint64_t req, proto_msg *m) {
  int rc = receive_reply(m);
  if (rc) return rc == ENOMEM ? ENOMEM : EPROTO;
  return m->h->type == MSG_REPLY && m->h->req == req ? 0 : EPROTO;
}

static bool reply_continues(const proto_msg *m) {
  return (((const proto_reply *)m->fixed)->flags & PROTO_REPLY_MORE) != 0;
}

/* One request (with a tail of out_n words) to the leaf and its reply: the reply's status (0 or
 * an errno code); the reply's tail (valid until the next call) in *tail / *ntail. A reply in
 * several messages is a protocol error here (only packs continue: rpc_gather). */
static int rpc_tail(unsigned type, const void *fixed, const uint64_t *out, uint32_t out_n,
                    const uint64_t **tail, uint32_t *ntail) {
  RANK_GUARD(); /* the reply's tail lives in W.buf: callers hold the lock while they read it */
  uint64_t req;
  proto_msg m;
  int rc = rpc_send(type, fixed, out, out_n, &req);
  if (!rc) rc = rpc_receive(req, &m);
  if (rc) return rc;
  if (reply_continues(&m)) return EPROTO;
  if (tail) *tail = m.tail;
  if (ntail) *ntail = m.ntail;
  return m.h->status;
}

/* A request whose reply may come in several messages (a pack of any size): the tails of every
 * part, joined, in *words (malloc'ed, NULL when empty) and *nwords. The reply's status. */
static int rpc_gather(unsigned type, const void *fixed, const uint64_t *out, uint32_t out_n,
                      uint64_t **words, size_t *nwords) {
  RANK_GUARD();
  uint64_t req, *w = NULL;
  size_t n = 0, cap = 0;
  proto_msg m;
  *words = NULL;
  *nwords = 0;
  int rc = rpc_send(type, fixed, out, out_n, &req), status = 0;
  bool bad = false; /* a part that continues must have status 0 */
  for (bool more = !rc; more;) {
    if ((rc = rpc_receive(req, &m))) break; /* the rest, if any, is lost with the protocol */
    more = reply_continues(&m);
    W.reply_parts += more;
    bad |= more && m.h->status;
    if (!status) status = m.h->status;
    if (n + m.ntail > cap && !status) { /* after an error, the parts are only taken */
      size_t c = cap ? cap : 1024;
      while (c < n + m.ntail) c *= 2;
      uint64_t *g = realloc(w, c * sizeof *g);
      if (!g) status = ENOMEM; /* the parts are still taken */
      else w = g, cap = c;
    }
    if (!status && m.ntail) memcpy(w + n, m.tail, (size_t)m.ntail * sizeof *w);
    if (!status) n += m.ntail;
  }
  if (!rc && bad) rc = EPROTO;
  if (rc || status) {
    free(w);
    return rc ? rc : status;
  }
  *words = w;
  *nwords = n;
  return 0;
}

static int rpc(unsigned type, const void *fixed, const uint64_t **tail, uint32_t *ntail) {
  return rpc_tail(type, fixed, NULL, 0, tail, ntail);
}

/* ---- the allocation cache's backend: leases and their return, over rpc ---- */

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
  RANK_GUARD(); /* the request channel, the retain budget, the GAS's populated chunks */
  proto_lease b = {.size = size, .rid = rid, .want = want, .min = min};
  const uint64_t *t;
  uint32_t n;
  int rc = rpc(MSG_LEASE, &b, &t, &n);
  if (rc) return rc;
  if (n < 2 + min || n > 2 + want) return EPROTO;
  *sched = (int32_t)t[0];
  *slot = (uint32_t)t[1];
  *got = n - 2;
  for (uint32_t i = 0; i < *got; i++) slabs[i] = (uintptr_t)t[2 + i];
  for (uint32_t i = 0; guard_on() && i < *got; i++) guard_release(slabs[i], AH_SLAB_SIZE);
  retain_reused(&W.kept, (size_t)*got * AH_SLAB_SIZE);
  if (*got >= 16) populate_runs(slabs, *got); /* big leases: a call per run, not a fault a page */
  return 0;
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

/* Hand every cached slab back before the schedulers must see every object (rfree, send,
 * barrier, finalize). */
static int flush_cache(void) {
  uint64_t returned = 0, dropped = 0;
  int rc = 0;
  if (W.cache) {
    cache_stats before, after;
    cache_get_stats(W.cache, &before);
    rc = cache_flush(W.cache);
    cache_get_stats(W.cache, &after);
    returned = after.returned_slabs - before.returned_slabs;
    dropped = after.dropped - before.dropped;
  } else if (tcaches_on()) { /* every thread's (tcache.h: never under the rank lock) */
    AH_ASSERT(rank_lock_depth() == 0);
    rc = tcaches_flush(&returned, &dropped);
  }
  if (returned) memo_forget_all(&W.memo); /* memo.h */
  if (dropped)
    fprintf(stderr,
            "antheap: worker %d: %lu objects allocated from the cache in regions that another "
            "worker had freed were dropped\n",
            W.id, (unsigned long)dropped);
  return rc;
}

/* The calling thread's allocation cache: the rank's one (W.cache) below MPI_THREAD_MULTIPLE,
 * the thread's own at MULTIPLE (tcache.h). Called without the rank lock (tcache.h). */
static bool caching(void) { return W.cache || tcaches_on(); }
static int cached_alloc(size_t size, rid_t region, uintptr_t *a) {
  return W.cache ? cache_alloc(W.cache, size, region, a) : tcache_alloc(size, region, a);
}
static int cached_balloc(size_t size, rid_t region, size_t n, uintptr_t *a) {
  return W.cache ? cache_balloc(W.cache, size, region, n, a) : tcache_balloc(size, region, n, a);
}
static int cached_free(uintptr_t a) { return W.cache ? cache_free(W.cache, a) : tcache_free(a); }
static int cached_lookup(uintptr_t a, rid_t *region, uintptr_t *start, size_t *size,
                         int32_t *sched) {
  return W.cache ? cache_lookup(W.cache, a, region, start, size, sched)
                 : tcache_lookup(a, region, start, size, sched);
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

/* ANTHEAP_MOVE_MEMO: on (default), off, or check (memo.h). */
static int memo_setting(char *err, size_t errlen) {
  const char *v = getenv("ANTHEAP_MOVE_MEMO");
  bool on = !v || !strcmp(v, "on") || !strcmp(v, "1"), check = v && !strcmp(v, "check");
  if (!on && !check && strcmp(v, "off") && strcmp(v, "0")) {
    snprintf(err, errlen, "ANTHEAP_MOVE_MEMO=%s: expected on, off or check", v);
    return EINVAL;
  }
  memo_init(&W.memo, (on || check) && !threads_multi()); /* off at MULTIPLE (threads.h) */
  W.memo_check = check;
  return 0;
}

static int new_cache(void) {
  cache_backend be = {.lease = lease_rpc, .unlease = unlease_rpc};
  return cache_create(&W.cache, &be, NULL);
}

/* A remote free whose slab went back to its scheduler before the owner took it (tcache.h). */
static int free_at_scheduler(uintptr_t addr) {
  proto_addr b = {.addr = addr};
  return rpc(MSG_FREE, &b, NULL, NULL);
}

/* At MPI_THREAD_MULTIPLE: a cache per thread, leasing through the rank (tcache.h). */
static int start_tcaches(void) {
  const gas_bounds *g = gas_current();
  tcache_setup s = {.be = {.lease = lease_rpc, .unlease = unlease_rpc},
                    .lock = rank_lock, .unlock = rank_unlock,
                    .gas_base = g->base, .gas_size = g->size,
                    .free_elsewhere = free_at_scheduler};
  return tcaches_start(&s);
}

static int start_cache(char *err, size_t errlen) {
  bool on;
  int rc = cache_setting(&on, err, errlen);
  if (rc || !on) return rc;
  if ((rc = threads_multi() ? start_tcaches() : new_cache()))
    snprintf(err, errlen, "no memory for the allocation cache");
  return rc;
}

/* ---- joining and leaving ---- */

static void leave_job(void) {
  if (W.up) {
    unsigned char msg[sizeof(proto_header)];
    size_t len = proto_build(msg, sizeof msg, MSG_FINALIZE, ++W.req, W.job.rank, PROTO_NO_DEST, 0,
                             -1, NULL, NULL, 0);
    MPI_Send(msg, (int)len, MPI_BYTE, W.leaf, AH_TAG_PROTO, W.job.proto);
    const gas_bounds *g = gas_current();
    if (W.free_hook && g) W.free_hook(g->base, g->size);
    guard_stop();
    transfer_set_landing(NULL);
    gas_unmap();
  }
  share_free(&W.share);
  cache_destroy(W.cache);
  W.cache = NULL;
  tcaches_stop();
  memo_destroy(&W.memo);
  W.up = false;
  job_teardown(&W.job);
  free(W.buf);
  W.buf = NULL;
  W.cap = 0;
}

static void catch_mpi_finalize(void);

/* A worker setting that was refused (EINVAL from its reader) is a bad setting: EDOM. */
static int setting(int rc) { return rc == EINVAL ? EDOM : rc; }

/* The checked mode's landing hook at MPI_THREAD_MULTIPLE: its spans are the rank's. */
static void landing_locked(uintptr_t addr, size_t len) {
  RANK_GUARD();
  guard_release(addr, len);
}

/* The worker's own settings and the GAS, in sys_init: 0 or an errno, with a message in err. */
static int start_worker(char *err, size_t errlen) {
  int rc = share_map_gas(W.job.workers, W.job.plan.share_host, W.job.cfg.gas_base,
                         W.job.cfg.gas_size, &W.share, err, errlen);
  if (!rc && (rc = setting(memo_setting(err, errlen)))) gas_unmap();
  if (!rc && (rc = setting(watch_config_from_env(&W.watch, W.id, err, errlen)))) gas_unmap();
  bool guard = false;
  if (!rc && (rc = setting(guard_setting(&guard, err, errlen)))) gas_unmap();
  if (!rc && guard) {
    guard_start(W.id);
    transfer_set_landing(threads_multi() ? landing_locked : guard_release);
  }
  W.watch_warn = W.watch;
  W.watch_warn.timeout_ns = 0;
  transfer_set_watch(&W.watch);
  if (!rc && (rc = setting(start_cache(err, errlen)))) gas_unmap();
  long mib = W.job.plan.retain_mib;
  retain_init(&W.kept, mib < 0 ? RETAIN_DEFAULT_BUDGET : (size_t)mib << 20);
  return rc;
}

/* sys_init failed: MPI goes too when sys_init started it, so that the program can simply
 * return (every rank fails alike: nobody waits in a collective). */
static int init_failed(int rc) {
  if (W.mpi_ours) MPI_Finalize();
  W.mpi_ours = false;
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
  if (W.up) return fail_errno(EBUSY);
  if (!thread_level_valid(required) || !provided) return fail_errno(EINVAL);
  int flag, mpi_level;
  MPI_Initialized(&flag);
  if (!flag) {
    MPI_Init_thread(argc, argv, required, &mpi_level);
    W.mpi_ours = true;
  } else {
    MPI_Query_thread(&mpi_level);
  }
  *provided = required < mpi_level ? required : mpi_level;
  threads_set_level(*provided); /* before the worker's settings (memo_setting reads it) */
  int rc = job_setup(argc, argv, &W.job, "antheap", NULL); /* prints why it failed */
  if (rc) return init_failed(rc);
  if (W.job.plan.topology_only) { /* print the plan and end the job everywhere */
    if (W.job.rank == 0) plan_print(stdout, &W.job.plan);
    job_teardown(&W.job);
    MPI_Finalize();
    exit(0);
  }
  if (W.job.is_sched) { /* SPMD: this rank is a scheduler for the whole job */
    rc = job_run_scheduler(&W.job);
    job_teardown(&W.job);
    MPI_Finalize();
    exit(rc);
  }
  MPI_Comm_rank(W.job.workers, &W.id);
  MPI_Comm_size(W.job.workers, &W.nworkers);
  W.leaf = W.job.plan.ranks[W.job.rank].leaf;
  transfer_set_idle_cap(W.job.idle_cap_ns); /* moves wait like every other wait of ours */
  char err[512];
  rc = start_worker(err, sizeof err);
  /* the lowest failing worker says why (the others most likely failed alike), then all go */
  struct { int id, rc; } mine = {rc ? W.id : W.nworkers, rc}, first;
  MPI_Allreduce(&mine, &first, 1, MPI_2INT, MPI_MINLOC, W.job.workers);
  W.up = true;
  if (first.id < W.nworkers) { /* nobody starts: the schedulers end the job */
    if (first.id == W.id) fprintf(stderr, "antheap: worker %d: %s\n", W.id, err), fflush(stderr);
    MPI_Barrier(W.job.workers); /* said before any worker can leave (and mpirun end the job) */
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
  MPI_Ibarrier(W.job.workers, &rq);
  idle_wait idle;
  idle_start(&idle, W.job.idle_cap_ns);
  watch wt;
  watch_start(&wt, &W.watch_warn, "sys_finalize", "every other worker to call it too", 0);
  for (int done = 0;;) {
    MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
    if (done) break;
    if (transfer_refuse_pending(W.job.xfer, AH_TAG_XFER, ESHUTDOWN)) idle_start(&idle, W.job.idle_cap_ns);
    else watch_poll(&wt), idle_pause(&idle);
  }
  while (transfer_refuse_pending(W.job.xfer, AH_TAG_XFER, ESHUTDOWN)) {
  }
}

/* What sys_finalize does before MPI_Finalize: 0 or the flush's error. */
static int leave_cleanly(void) {
  int rc = flush_cache(); /* before the barrier: the schedulers shut down after it */
  if (W.barrier_pending) wait_collective(&W.barrier_rq, &W.watch_warn, "sys_finalize");
  W.barrier_pending = false;
  leaving_barrier();
  leave_job();
  return rc;
}

int sys_finalize(void) {
  if (!W.up) return fail_errno(NOT_UP);
  int rc = leave_cleanly();
  if (W.mpi_ours) MPI_Finalize();
  return rc ? fail_errno(rc) : 0;
}

/* A worker that calls MPI_Finalize without sys_finalize would leave the schedulers (and so the
 * whole job) waiting for ever. MPI_Finalize first deletes the attributes of MPI_COMM_SELF, with
 * MPI still usable (MPI 3.1, section 8.7.1): one set in sys_init names the mistake there and
 * leaves the job as sys_finalize would. */
static int on_mpi_finalize(MPI_Comm comm, int key, void *attr, void *extra) {
  (void)comm, (void)key, (void)attr, (void)extra;
  if (!W.up) return MPI_SUCCESS; /* sys_finalize came first, as it should */
  fprintf(stderr, "antheap: worker %d: MPI_Finalize was called before sys_finalize: antheap "
          "leaves the job now, as sys_finalize would (call sys_finalize before MPI_Finalize)\n",
          W.id);
  leave_cleanly();
  return MPI_SUCCESS;
}

static void catch_mpi_finalize(void) {
  int key;
  if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_mpi_finalize, &key, NULL) == MPI_SUCCESS)
    MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL);
}

MPI_Comm sys_comm(void) { return W.up ? W.job.workers : (fail_errno(NOT_UP), MPI_COMM_NULL); }
int sys_worker_id(void) { return W.up ? W.id : fail_errno(NOT_UP); }
int sys_workers(void) { return W.up ? W.nworkers : (fail_errno(NOT_UP), 0); }

int sys_barrier(void) {
  if (!W.up) return fail_errno(NOT_UP);
  int rc = flush_cache(); /* after the barrier every worker's objects are known everywhere */
  memo_forget_all(&W.memo);
  /* a barrier that gave up is still under way: this call waits for that one */
  if (!W.barrier_pending && MPI_Ibarrier(W.job.workers, &W.barrier_rq) != MPI_SUCCESS)
    return fail_errno(EPROTO);
  W.barrier_pending = true;
  int late = wait_collective(&W.barrier_rq, &W.watch, "sys_barrier");
  if (late) return fail_errno(late);
  W.barrier_pending = false;
  return rc ? fail_errno(rc) : 0;
}

/* ---- regions and objects ---- */

rid_t sys_ralloc(rid_t parent, int level_hint) {
  if (!W.up) return (rid_t)fail_errno(NOT_UP) + 1; /* 0 */
  RANK_GUARD();
  memo_forget_all(&W.memo); /* a child under a region we hold changes its pack */
  proto_ralloc b = {.parent = parent, .level_hint = level_hint};
  const uint64_t *t;
  uint32_t n;
  int rc = rpc(MSG_RALLOC, &b, &t, &n);
  if (rc || n != 1) return (rid_t)fail_errno(rc ? rc : EPROTO) + 1; /* 0 */
  return (rid_t)t[0];
}

static int packv(const rid_t *regions, int nreg, void *const *objects, int nobj, uint32_t flags,
                 int32_t peer, gas_range **out, size_t *nout);

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
  W.packs++;
  int rc = packv(&region, 1, NULL, 0, PACKV_OWNED, PROTO_NO_DEST, &r, &n);
  if (rc) return rc;
  size_t total = 0;
  for (size_t i = 0; i < n; i++) total += r[i].len;
  for (size_t i = 0; W.free_hook && i < n; i++) W.free_hook(r[i].addr, r[i].len);
  bool give_back = total >= RELEASE_MIN && !retain_keep(&W.kept, total);
  for (size_t i = 0; give_back && i < n; i++) gas_release(r[i].addr, r[i].len);
  free(r);
  return 0;
}

int sys_rfree(rid_t region) {
  if (!W.up) return fail_errno(NOT_UP);
  if (region == SYS_ROOT_REGION) return fail_errno(EINVAL); /* never freed, never given back */
  memo_forget_all(&W.memo);
  int rc = flush_cache(); /* our cached slots of the region (and its descendants) go first */
  if (rc) return fail_errno(rc);
  RANK_GUARD();
  /* the pack checks the whole subtree, on every scheduler, before anything is freed */
  if (release_region(region) == EPERM) return fail_errno(EPERM);
  proto_rid b = {.rid = region};
  rc = rpc(MSG_RFREE, &b, NULL, NULL);
  return rc ? fail_errno(rc) : 0;
}

/* Did the cache answer (0 or a final error), or must the scheduler (ENOTSUP: not a request
 * for the cache; ENOMEM: a lease needs an empty slab, the scheduler may still have a slot)? */
static bool cache_answered(int rc) { return rc != ENOTSUP && rc != ENOMEM && rc != ESRCH; }

void *sys_alloc(size_t size, rid_t region) {
  if (!W.up) return fail_errno(NOT_UP), NULL;
  if (size == 0) return fail_errno(EINVAL), NULL;
  memo_forget_all(&W.memo); /* (memo.h: any allocation may land in a region we hold) */
  if (caching()) {
    uintptr_t a;
    int rc = cached_alloc(size, region, &a);
    if (rc == 0) return (void *)a;
    if (cache_answered(rc)) return fail_errno(rc), NULL;
  }
  RANK_GUARD();
  proto_alloc b = {.size = size, .rid = region, .n = 1};
  const uint64_t *t;
  uint32_t n;
  int rc = rpc(MSG_ALLOC, &b, &t, &n);
  if (rc || n != 1) return fail_errno(rc ? rc : EPROTO), NULL;
  guard_release((uintptr_t)t[0], size); /* (ANTHEAP_CHECK: pages of a region we handed over) */
  return (void *)(uintptr_t)t[0];
}

int sys_balloc(size_t size, rid_t region, int num, void **objects) {
  if (!W.up) return fail_errno(NOT_UP);
  if (size == 0 || num < 1 || !objects) return fail_errno(EINVAL);
  if ((uint32_t)num > PROTO_MAX_TAIL) return fail_errno(E2BIG); /* more than one reply carries */
  memo_forget_all(&W.memo);
  if (caching()) {
    int rc = cached_balloc(size, region, (size_t)num, (uintptr_t *)objects);
    if (rc == 0) return 0;
    if (cache_answered(rc)) return fail_errno(rc);
  }
  RANK_GUARD();
  proto_alloc b = {.size = size, .rid = region, .n = (uint32_t)num};
  const uint64_t *t;
  uint32_t n;
  int rc = rpc(MSG_BALLOC, &b, &t, &n);
  if (rc || n != (uint32_t)num) return fail_errno(rc ? rc : EPROTO);
  for (int i = 0; i < num; i++) objects[i] = (void *)(uintptr_t)t[i];
  for (int i = 0; guard_on() && i < num; i++) guard_release((uintptr_t)t[i], size);
  return 0;
}

int sys_free(void *ptr) {
  if (!ptr) return 0; /* as free(NULL): nothing to do, initialised or not */
  if (!W.up) return fail_errno(NOT_UP);
  memo_forget_all(&W.memo);
  if (caching()) {
    int rc = cached_free((uintptr_t)ptr);
    if (rc != ESRCH) return rc ? fail_errno(rc) : 0;
  }
  RANK_GUARD();
  proto_addr b = {.addr = (uintptr_t)ptr};
  int rc = rpc(MSG_FREE, &b, NULL, NULL);
  return rc ? fail_errno(rc) : 0;
}

int sys_query(const void *ptr, rid_t *region, size_t *size) {
  if (!W.up) return fail_errno(NOT_UP);
  if (caching()) {
    int rc = cached_lookup((uintptr_t)ptr, region, NULL, size, NULL);
    if (rc != ESRCH) return rc ? fail_errno(rc) : 0;
  }
  RANK_GUARD();
  proto_addr b = {.addr = (uintptr_t)ptr};
  const uint64_t *t;
  uint32_t n;
  int rc = rpc(MSG_QUERY, &b, &t, &n);
  if (rc || n != 4) return fail_errno(rc ? rc : EPROTO);
  if (region) *region = (rid_t)t[0];
  if (size) *size = (size_t)t[2];
  return 0;
}

/* The world rank of the scheduler that holds the object at ptr (test hook, debug.h). */
int antheap_debug_scheduler_of(const void *ptr) {
  if (!W.up) return fail_errno(NOT_UP);
  int32_t sched;
  if (caching()) {
    int rc = cached_lookup((uintptr_t)ptr, NULL, NULL, NULL, &sched);
    if (rc != ESRCH) return rc ? fail_errno(rc) : sched;
  }
  RANK_GUARD();
  proto_addr b = {.addr = (uintptr_t)ptr};
  const uint64_t *t;
  uint32_t n;
  int rc = rpc(MSG_QUERY, &b, &t, &n);
  return rc || n != 4 ? fail_errno(rc ? rc : EPROTO) : (int)t[3];
}

/* The world rank of the scheduler at `level` on this worker's path (its leaf when the tree
 * is not that deep) (test hook). */
int antheap_debug_path(int level) {
  if (!W.up) return fail_errno(NOT_UP);
  int x = W.leaf;
  while (W.job.tree.level[x] > level) x = W.job.tree.parent[x];
  return x;
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

static int hand_over(const rid_t *regions, int nreg, void *const *objects, int nobj, int32_t to);

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
    int rc = rpc(MSG_QUERY, &b, &t, &n);
    if (rc || n != 4) return fail_errno(rc ? rc : EPROTO), NULL;
    rid = (rid_t)t[0], start = (uintptr_t)t[1], old = (size_t)t[2];
  }
  if (start != (uintptr_t)ptr) return fail_errno(EINVAL), NULL; /* interior */
  rid_t to = new_region == SYS_SAME_REGION ? rid : new_region;
  size_t slot = new_size <= AH_SLAB_SIZE ? ah_round_up(new_size, AH_SLOT_ALIGN)
                                         : ah_round_up(new_size, AH_SLAB_SIZE);
  if (to == rid && slot == old) { /* stays, as the scheduler decides: if it is ours */
    int held = hand_over(NULL, 0, &ptr, 1, PROTO_NO_DEST);
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

void *sys_realloc(void *ptr, size_t new_size, rid_t new_region) {
  if (!W.up) return fail_errno(NOT_UP), NULL;
  if (!ptr) return sys_alloc(new_size, new_region == SYS_SAME_REGION ? SYS_ROOT_REGION : new_region);
  if (new_size == 0) return fail_errno(EINVAL), NULL;
  memo_forget_all(&W.memo);
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
  RANK_GUARD();
  proto_realloc b = {.addr = (uintptr_t)ptr, .size = new_size, .rid = new_region};
  const uint64_t *t;
  uint32_t n;
  int rc = rpc(MSG_REALLOC, &b, &t, &n);
  if (rc == EXDEV) return realloc_copy_first(ptr, new_size, new_region); /* region elsewhere */
  if (rc || n != 2) return fail_errno(rc ? rc : EPROTO), NULL;
  void *fresh = (void *)(uintptr_t)t[0];
  size_t old = (size_t)t[1];
  guard_release((uintptr_t)fresh, new_size);
  if (fresh != ptr) memcpy(fresh, ptr, old < new_size ? old : new_size); /* private GAS: ours */
  return fresh;
}

/* ---- moving data ---- */

/* One MSG_PACKV naming regions and objects, with flags (proto.h: PACKV_HANDOVER, _HANDBACK,
 * _NO_RANGES) and the peer (a world rank) they concern: the schedulers check that this worker
 * holds what it names, hand regions over when asked, and answer with the ranges of every
 * named region (with descendants) and object, sorted and merged, whatever their number and
 * wherever they live. *out is NULL when there are none. */
static int packv(const rid_t *regions, int nreg, void *const *objects, int nobj, uint32_t flags,
                 int32_t peer, gas_range **out, size_t *nout) {
  *out = NULL;
  *nout = 0;
  if (nreg + nobj == 0) return 0;
  if ((uint64_t)nreg + (uint64_t)nobj > PROTO_MAX_TAIL) return E2BIG;
  uint64_t *names = malloc(((size_t)nreg + (size_t)nobj) * sizeof *names);
  if (!names) return ENOMEM;
  for (int i = 0; i < nreg; i++) names[i] = regions[i];
  for (int i = 0; i < nobj; i++) names[nreg + i] = (uintptr_t)objects[i];
  proto_packv b = {.nreg = (uint32_t)nreg, .nobj = (uint32_t)nobj, .flags = flags, .peer = peer};
  uint64_t *t;
  size_t nt;
  int rc = rpc_gather(MSG_PACKV, &b, names, (uint32_t)(nreg + nobj), &t, &nt);
  free(names);
  if (rc) return rc;
  if (nt % 2 || ((flags & PACKV_NO_RANGES) && nt)) {
    free(t);
    return EPROTO;
  }
  /* {addr, len} pairs are gas_range records as they stand (both two 64-bit words) */
  _Static_assert(sizeof(gas_range) == 2 * sizeof(uint64_t), "a gas_range is a wire pair");
  *out = (gas_range *)t;
  *nout = nt / 2;
  return 0;
}

/* The ranges of what a move names, checked as held by this worker, in one request. */
static int pack_ranges(const rid_t *regions, int nreg, void *const *objects, int nobj,
                       gas_range **out, size_t *nout) {
  return packv(regions, nreg, objects, nobj, 0, PROTO_NO_DEST, out, nout);
}

/* pack_ranges, counted (antheap_debug_packs), handing the regions to world rank `to` when it
 * is not PROTO_NO_DEST. */
static int gather_ranges(const rid_t *regions, int nreg, void *const *objects, int nobj,
                         int32_t to, gas_range **out, size_t *nout) {
  if (nreg + nobj) W.packs++;
  uint32_t flags = to != PROTO_NO_DEST && nreg ? PACKV_HANDOVER : 0;
  return packv(regions, nreg, objects, nobj, flags, to, out, nout);
}

/* Hand regions (with descendants) to world rank `to` without their ranges; with none, only
 * check that this worker holds the objects' regions. Not a pack (antheap_debug_packs). */
static int hand_over(const rid_t *regions, int nreg, void *const *objects, int nobj, int32_t to) {
  gas_range *none;
  size_t n;
  uint32_t flags = PACKV_NO_RANGES | (nreg ? PACKV_HANDOVER : 0);
  return packv(regions, nreg, objects, nobj, flags, to, &none, &n);
}

/* A move failed after its hand-over (the receiver refused it): the regions come back. */
static void hand_back(const rid_t *regions, int nreg, int32_t to) {
  gas_range *none;
  size_t n;
  int rc = nreg ? packv(regions, nreg, NULL, 0, PACKV_HANDBACK | PACKV_NO_RANGES, to, &none, &n)
                : 0;
  if (rc)
    fprintf(stderr, "antheap: worker %d: the regions of a failed sys_send could not be taken "
            "back (%s); they stay with the receiver\n", W.id, sys_strerror(rc));
}

/* ANTHEAP_MOVE_MEMO=check: pack what a memo served (uncounted) and say where they differ; the
 * pack's list, or its error, replaces the memo's. */
static int check_memo(const rid_t *regions, int nreg, void *const *objects, int nobj,
                      gas_range **r, size_t *n) {
  gas_range *p;
  size_t np;
  int rc = pack_ranges(regions, nreg, objects, nobj, &p, &np);
  size_t i = 0;
  while (!rc && i < np && i < *n && p[i].addr == (*r)[i].addr && p[i].len == (*r)[i].len) i++;
  if (rc)
    fprintf(stderr, "antheap: worker %d: move memo mismatch: the memo had %zu ranges, the pack "
            "failed (%s)\n", W.id, *n, sys_strerror(rc));
  else if (i < np || i < *n)
    fprintf(stderr, "antheap: worker %d: move memo mismatch: the memo had %zu ranges, the pack "
            "%zu; they differ from range %zu on\n", W.id, *n, np, i);
  free(*r);
  *r = rc ? NULL : p;
  *n = rc ? 0 : np;
  return rc;
}

/* The handles of a move: {nreg, nobj, region IDs..., object pointers...}. */
static uint64_t *move_handles(const rid_t *regions, int nreg, void *const *objects, int nobj) {
  uint64_t *h = malloc((2 + (size_t)nreg + (size_t)nobj) * sizeof *h);
  if (!h) return NULL;
  h[0] = (uint64_t)nreg;
  h[1] = (uint64_t)nobj;
  for (int i = 0; i < nreg; i++) h[2 + i] = regions[i];
  for (int i = 0; i < nobj; i++) h[2 + nreg + i] = (uintptr_t)objects[i];
  return h;
}

/* Is peer another worker's index? */
static bool valid_peer(int peer) { return peer >= 0 && peer < W.nworkers && peer != W.id; }

int sys_send(int peer, const rid_t *regions, int nreg, void *const *objects, int nobj) {
  if (!W.up) return fail_errno(NOT_UP);
  if (!valid_peer(peer)) return fail_errno(EINVAL);
  int32_t to = W.job.plan.worker_ranks[peer];
  int rc = nreg < 0 || nobj < 0 || (nreg && !regions) || (nobj && !objects) ? EINVAL : 0;
  if (!rc) rc = flush_cache(); /* the receiver must be able to allocate and free in what it gets */
  RANK_GUARD(); /* (not across the transfer: threads move to different peers at once) */
  if (!rc && (uint64_t)nreg + (uint64_t)nobj > PROTO_MAX_TAIL) rc = E2BIG;
  uint32_t nh = rc ? 0 : (uint32_t)(2 + (uint64_t)nreg + (uint64_t)nobj);
  uint64_t *h = rc ? NULL : move_handles(regions, nreg, objects, nobj);
  if (!rc && !h) rc = ENOMEM;
  transfer_mode mode = share_with(&W.share, peer) ? TRANSFER_SHARED : TRANSFER_COPY;
  gas_range *r = NULL;
  size_t n = 0;
  /* shared: what we received and did not change goes on without a pack (memo.h), but the
   * schedulers still check it and hand it over */
  bool served = !rc && mode == TRANSFER_SHARED && memo_take(&W.memo, h, nh, &r, &n);
  if (served && W.memo_check) rc = check_memo(regions, nreg, objects, nobj, &r, &n);
  gas_range *guarded = NULL; /* ANTHEAP_CHECK=handover: the regions' own ranges (guard.h) */
  size_t nguarded = 0;
  if (!rc && guard_on() && nreg && nobj) rc = pack_ranges(regions, nreg, NULL, 0, &guarded, &nguarded);
  if (served && !rc) rc = hand_over(regions, nreg, objects, nobj, to);
  else if (!rc && !served) rc = gather_ranges(regions, nreg, objects, nobj, to, &r, &n);
  if (rc) { /* the receiver hears of it: it would wait for ever otherwise */
    free(h);
    free(r);
    free(guarded);
    transfer_send_abort(W.job.xfer, peer, AH_TAG_XFER, rc);
    return fail_errno(rc);
  }
  if (served) memo_forget_moved(&W.memo, h, nh, r, n); /* they leave us */
  else memo_drop_all(&W.memo); /* ancestors or descendants of a memo, for all we know */
  int refusal;
  rank_unlock();
  rc = transfer_send(W.job.xfer, peer, AH_TAG_XFER, mode, share_near(&W.share, peer), h, nh,
                     r, n, &refusal);
  rank_lock();
  if ((rc == 0 || rc == ETIMEDOUT) && nreg) /* handed over (after ETIMEDOUT too): hands off */
    guard_protect(nobj ? guarded : r, nobj ? nguarded : n, "sys_send", peer, regions, nreg);
  free(h);
  free(r);
  free(guarded);
  /* refused: the move did not happen, they are ours again (after ETIMEDOUT the receiver may
   * still take them) */
  if (rc && rc != ETIMEDOUT) hand_back(regions, nreg, to);
  if (rc == ECONNREFUSED && refusal == ESHUTDOWN) rc = ESHUTDOWN; /* the receiver left */
  return rc ? fail_errno(rc) : 0;
}

int sys_give(int peer, const rid_t *regions, int num_regions) {
  if (!W.up) return fail_errno(NOT_UP);
  if (!valid_peer(peer) || num_regions < 0 || (num_regions && !regions))
    return fail_errno(EINVAL);
  if ((uint64_t)num_regions > PROTO_MAX_TAIL) return fail_errno(E2BIG);
  if (num_regions == 0) return 0;
  int rc = flush_cache(); /* the new holder must be able to allocate and free in them */
  RANK_GUARD();
  memo_drop_all(&W.memo); /* a memo of them could only be refused now */
  gas_range *guarded = NULL; /* ANTHEAP_CHECK=handover: their ranges (guard.h) */
  size_t nguarded = 0;
  if (!rc && guard_on()) rc = pack_ranges(regions, num_regions, NULL, 0, &guarded, &nguarded);
  if (!rc) rc = hand_over(regions, num_regions, NULL, 0, W.job.plan.worker_ranks[peer]);
  if (!rc) guard_protect(guarded, nguarded, "sys_give", peer, regions, num_regions);
  free(guarded);
  return rc ? fail_errno(rc) : 0;
}

/* What a receiver expects: the sender's counts must be its own; shared mode only with a worker
 * that maps the same GAS memory. */
typedef struct {
  int nreg, nobj;
  transfer_mode mode; /* set by accept_move: how the move came */
} move_expect;

static int accept_move(void *ctx, int src, transfer_mode mode, const uint64_t *extra,
                       uint32_t nextra) {
  move_expect *e = ctx;
  if (mode == TRANSFER_SHARED && !share_with(&W.share, src)) return EPROTO;
  e->mode = mode;
  if (nextra < 2 || extra[0] != (uint64_t)e->nreg || extra[1] != (uint64_t)e->nobj ||
      nextra != 2 + (uint64_t)e->nreg + (uint64_t)e->nobj)
    return EINVAL;
  return 0;
}

int sys_recv(int peer, rid_t *regions, int nreg, void **objects, int nobj) {
  if (!W.up) return fail_errno(NOT_UP);
  if (peer < 0 || peer >= W.nworkers || peer == W.id || nreg < 0 || nobj < 0 ||
      (nreg && !regions) || (nobj && !objects))
    return fail_errno(EINVAL);
  move_expect e = {nreg, nobj, TRANSFER_COPY};
  uint64_t *h;
  uint32_t nh;
  gas_range *r;
  size_t n;
  int rc = transfer_recv(W.job.xfer, peer, AH_TAG_XFER, accept_move, &e, &h, &nh, &r, &n, NULL,
                         NULL);
  if (rc) return fail_errno(rc);
  RANK_GUARD(); /* the memo, the GAS's populated chunks */
  /* Shared: the bytes are there, but not yet in our page tables: map them in one call per
   * range rather than one fault per page as the application walks them. */
  for (size_t i = 0; gas_is_shared() && i < n; i++) gas_populate(r[i].addr, r[i].len);
  for (int i = 0; i < nreg; i++) regions[i] = (rid_t)h[2 + i];
  for (int i = 0; i < nobj; i++) objects[i] = (void *)(uintptr_t)h[2 + nreg + i];
  if (e.mode == TRANSFER_SHARED) { /* kept (memo.h): sending it on needs no pack */
    memo_keep(&W.memo, h, nh, r, n);
    return 0;
  }
  memo_forget_moved(&W.memo, h, nh, r, n);
  free(h);
  free(r);
  return 0;
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

void worker_set_free_hook(worker_free_hook fn) { W.free_hook = fn; }

/* ---- test hooks (src/worker/debug.h) ---- */
#include "worker/debug.h"

int antheap_debug_set_cache(int on) {
  if (!W.up) return fail_errno(NOT_UP);
  if (threads_multi()) return fail_errno(ENOTSUP); /* (the threads' caches stay) */
  if (!on) {
    int rc = flush_cache();
    cache_destroy(W.cache);
    W.cache = NULL;
    return rc ? fail_errno(rc) : 0;
  }
  int rc = W.cache ? 0 : new_cache();
  return rc ? fail_errno(rc) : 0;
}

long antheap_debug_packs(void) { return W.packs; }

long antheap_debug_reply_parts(void) { return W.reply_parts; }

int antheap_debug_memo_applies(int peer) {
  if (!W.up) return fail_errno(NOT_UP);
  if (peer < 0 || peer >= W.nworkers || peer == W.id) return fail_errno(EINVAL);
  return W.memo.on && share_with(&W.share, peer);
}

int antheap_debug_send_raw(const void *buf, size_t len) {
  if (!W.up) return fail_errno(NOT_UP);
  RANK_GUARD();
  MPI_Send(buf, (int)len, MPI_BYTE, W.leaf, AH_TAG_PROTO, W.job.proto);
  return 0;
}

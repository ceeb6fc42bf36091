/* worker.h: the worker library's state and what its files share: api.c (joining and leaving,
 * regions and objects), rpc.c (one request and its reply with the leaf scheduler),
 * cache_backend.c (the allocation caches' leases over rpc, and their flushes), move.c
 * (sys_send, sys_recv, sys_give). At MPI_THREAD_MULTIPLE the state below is shared by the
 * rank's threads under the rank lock (threads.h: RANK_GUARD); the per-thread caches are
 * tcache.h's. Internal to src/worker. */
#ifndef AH_WORKER_WORKER_H
#define AH_WORKER_WORKER_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "antheap.h"
#include "common/watch.h"
#include "job/job.h"
#include "proto/proto.h"
#include "worker/cache.h"
#include "worker/handles.h"
#include "worker/hook.h"
#include "worker/memo.h"
#include "worker/retain.h"
#include "worker/share.h"
#include "worker/tcache.h"
#include "worker/threads.h"
#include "worker/transfer.h"

typedef struct worker_state {
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
} worker_state;


/* The one worker of this process. */
extern worker_state ah_self;

/* Every call but sys_init, sys_strerror and sys_version needs a job: before sys_init and after
 * sys_finalize they fail with this errno (antheap.h), which no other failure uses. */
#define NOT_UP ENOTCONN

/* Is peer another worker's index? */
static inline bool valid_peer(int peer) {
  return peer >= 0 && peer < ah_self.nworkers && peer != ah_self.id;
}

/* Fail an API call with errno err: -1. */
static inline int fail_errno(int err) {
  errno = err;
  return -1;
}

/* Fail an API call whose request failed (rc, an errno) or whose reply was not the shape it
 * must be (rc 0: EPROTO): -1. */
static inline int fail_reply(int rc) { return fail_errno(rc ? rc : EPROTO); }

/* rpc.c: requests to the leaf scheduler. The reply's status (0 or an errno code), or the
 * errno of the exchange itself (ENOMEM, EPROTO, NOT_UP). */
/* One request (with a tail of out_n words) and its reply, whose tail (valid until the next
 * call; at MPI_THREAD_MULTIPLE read it under the rank lock: threads.h) goes to *tail / *ntail. */
int rpc_tail(unsigned type, const void *fixed, const uint64_t *out, uint32_t out_n,
             const uint64_t **tail, uint32_t *ntail);
/* The same without a tail to send. */
int rpc_call(unsigned type, const void *fixed, const uint64_t **tail, uint32_t *ntail);
/* A request whose reply may come in several messages (a pack of any size): the tails of every
 * part, joined, in *words (malloc'ed, NULL when empty) and *nwords. */
int rpc_gather(unsigned type, const void *fixed, const uint64_t *out, uint32_t out_n,
               uint64_t **words, size_t *nwords);
/* Complete a nonblocking collective of the workers (call: the API call that waits), backing
 * off while it is not done, watched by cfg: 0 or ETIMEDOUT (*rq still under way). */
int rpc_wait_collective(MPI_Request *rq, const watch_config *cfg, const char *call);

/* cache_backend.c */
/* Start the allocation cache as ANTHEAP_CACHE says: 0 or an errno, with a message in err. */
int worker_start_cache(char *err, size_t errlen);
/* A new cache (the test hook that turns it back on): 0 or ENOMEM. */
int worker_new_cache(void);
/* Hand every cached slab back before the schedulers must see every object (rfree, send,
 * barrier, finalize): 0 or the flush's error. */
int worker_flush_cache(void);
/* sys_free's round trip (MSG_FREE), also a remote free whose slab went back to its scheduler
 * before the owning thread took it (tcache.h): 0 or an errno. */
int worker_free_at_scheduler(uintptr_t addr);

/* move.c */
/* One MSG_PACKV naming what d names, with flags (proto.h) and the world rank they concern: the
 * ranges of every named region (with descendants) and object, sorted and merged, in *out (NULL
 * when there are none). */
int move_packv(const move_desc *d, uint32_t flags, int32_t peer, gas_range **out, size_t *nout);
/* Hand d's regions (with descendants) to world rank `to` without their ranges; with none, only
 * check that this worker holds the objects' regions. */
int move_hand_over(const move_desc *d, int32_t to);

#endif

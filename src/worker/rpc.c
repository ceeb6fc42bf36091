/* rpc.c: one request and its reply with this worker's leaf scheduler (a reply in several
 * messages joined for packs), and waits for the workers' collectives; every wait backs off
 * while idle (common/idle.h) and says why it waits (common/watch.h). Main entries: rpc_call,
 * rpc_tail, rpc_gather. */
#include <stdlib.h>
#include <string.h>

#include "common/idle.h"
#include "common/idle_mpi.h"
#include "worker/profile.h"
#include "worker/worker.h"

/* Wait for the next protocol message from the leaf, backing off while idle (idle.h). */
static int receive_reply(proto_msg *m) {
  idle_wait idle;
  idle_start(&idle, ah_self.job.idle_cap_ns);
  watch wt;
  watch_start(&wt, &ah_self.watch_warn, "a request", "its scheduler (rank %d) to answer", ah_self.leaf);
  for (;;) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(ah_self.leaf, AH_TAG_PROTO, ah_self.job.proto, &flag, &st);
    if (flag) {
      int count;
      MPI_Get_count(&st, MPI_BYTE, &count);
      if ((size_t)count > ah_self.cap) {
        unsigned char *b = realloc(ah_self.buf, (size_t)count);
        if (!b) return ENOMEM;
        ah_self.buf = b;
        ah_self.cap = (size_t)count;
      }
      MPI_Recv(ah_self.buf, count, MPI_BYTE, ah_self.leaf, AH_TAG_PROTO, ah_self.job.proto, MPI_STATUS_IGNORE);
      return proto_decode(ah_self.buf, (size_t)count, m);
    }
    watch_poll(&wt);
    idle_pause(&idle);
  }
}

/* (worker.h) */
int rpc_wait_collective(MPI_Request *rq, const watch_config *cfg, const char *call) {
  watch wt;
  watch_start(&wt, cfg, call, "every other worker to call it too", 0);
  if (!wt.cfg) {
    idle_wait_request(rq, ah_self.job.idle_cap_ns);
    return 0;
  }
  idle_wait idle;
  idle_start(&idle, ah_self.job.idle_cap_ns);
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
  if (!ah_self.up) return NOT_UP;
  unsigned char small[sizeof(proto_header) + PROTO_MAX_FIXED], *msg = small;
  size_t cap = sizeof small + (size_t)out_n * 8;
  if (out_n && !(msg = malloc(cap))) return ENOMEM;
  *req = ++ah_self.req;
  size_t len = proto_build(msg, cap, type, *req, ah_self.job.rank, PROTO_NO_DEST, 0, -1, fixed, out,
                           out_n);
  if (msg == small) { /* one eager message: in the leaf's queue when MPI_Send returns */
    MPI_Send(msg, (int)len, MPI_BYTE, ah_self.leaf, AH_TAG_PROTO, ah_self.job.proto);
    bells_ring(&ah_self.job.bells, ah_self.leaf);
    return 0;
  }
  /* a long one may wait for the leaf to take it: ring first, then wait in MPI as MPI_Send
   * would (the leaf, awake, is taking it) */
  MPI_Request rq;
  MPI_Isend(msg, (int)len, MPI_BYTE, ah_self.leaf, AH_TAG_PROTO, ah_self.job.proto, &rq);
  bells_ring(&ah_self.job.bells, ah_self.leaf);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  free(msg);
  return 0;
}

/* The next reply to request req (valid until the next receive): 0, ENOMEM, or EPROTO for
 * anything else (a message that does not read as a reply to it). */
static int rpc_receive(uint64_t req, proto_msg *m) {
  int rc = receive_reply(m);
  if (rc) return rc == ENOMEM ? ENOMEM : EPROTO;
  return m->h->type == MSG_REPLY && m->h->req == req ? 0 : EPROTO;
}

/* One request (with a tail of out_n words) to the leaf and its reply: the reply's status (0 or
 * an errno code); the reply's tail (valid until the next call) in *tail / *ntail. A reply in
 * several messages is a protocol error here (only packs continue: rpc_gather). */
int rpc_tail(unsigned type, const void *fixed, const uint64_t *out, uint32_t out_n,
             const uint64_t **tail, uint32_t *ntail) {
  RANK_GUARD(); /* the reply's tail lives in ah_self.buf: callers hold the lock to read it */
  uint64_t req, t0 = profile_on ? profile_now_ns() : 0;
  proto_msg m;
  int rc = rpc_send(type, fixed, out, out_n, &req);
  if (!rc) rc = rpc_receive(req, &m);
  if (profile_on) profile_rpc(type, profile_now_ns() - t0);
  if (rc) return rc;
  if (proto_reply_more(&m)) return EPROTO;
  if (tail) *tail = m.tail;
  if (ntail) *ntail = m.ntail;
  return m.h->status;
}

/* A request whose reply may come in several messages (a pack of any size): the tails of every
 * part, joined, in *words (malloc'ed, NULL when empty) and *nwords. The reply's status. */
int rpc_gather(unsigned type, const void *fixed, const uint64_t *out, uint32_t out_n,
               uint64_t **words, size_t *nwords) {
  RANK_GUARD();
  uint64_t req, *w = NULL, t0 = profile_on ? profile_now_ns() : 0;
  size_t n = 0, cap = 0;
  proto_msg m;
  *words = NULL;
  *nwords = 0;
  int rc = rpc_send(type, fixed, out, out_n, &req), status = 0;
  bool bad = false; /* a part that continues must have status 0 */
  for (bool more = !rc; more;) {
    if ((rc = rpc_receive(req, &m))) break; /* the rest, if any, is lost with the protocol */
    more = proto_reply_more(&m);
    ah_self.reply_parts += more;
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
  if (profile_on) profile_rpc(type, profile_now_ns() - t0);
  if (!rc && bad) rc = EPROTO;
  if (rc || status) {
    free(w);
    return rc ? rc : status;
  }
  *words = w;
  *nwords = n;
  return 0;
}

int rpc_call(unsigned type, const void *fixed, const uint64_t **tail, uint32_t *ntail) {
  return rpc_tail(type, fixed, NULL, 0, tail, ntail);
}

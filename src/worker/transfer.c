/* transfer.c: the rendezvous transfer of GAS ranges between two workers (transfer.h): the
 * list message, the receiver's answer, and in copy mode the data, planned the same way on both
 * sides (direct messages for long ranges, staging messages for runs of short ones). The only
 * file that moves GAS data between processes. */
#include "worker/transfer.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(transfer_header) == 40, "transfer_header is a fixed 40-byte wire record");
_Static_assert(sizeof(transfer_wire_range) == 16, "a wire range is two 64-bit words");
_Static_assert(sizeof(uintptr_t) == 8 && sizeof(size_t) == 8, "antheap needs a 64-bit target");

#include "common/idle.h"
#include "common/idle_mpi.h"
#include "common/watch.h"

#define TAG_LIST(t) (t)
#define TAG_ANSWER(t) ((t) + 1)
#define TAG_DATA(t) ((t) + 2)

/* The byte size of a matched message (MPI_Count: may exceed INT_MAX). */
static MPI_Count message_bytes(const MPI_Status *st) {
  MPI_Count c = 0;
  MPI_Get_elements_x(st, MPI_BYTE, &c);
  return c;
}

/* ---- waiting (transfer_set_idle_cap) ------------------------------------------------------- */

static uint64_t idle_cap;              /* 0: MPI's blocking calls (when nothing watches) */
static const watch_config *watching; /* transfer_set_watch; NULL: waits say nothing */

void transfer_set_idle_cap(uint64_t cap_ns) { idle_cap = cap_ns; }
void transfer_set_watch(const watch_config *cfg) { watching = cfg; }

static void (*ring)(int peer); /* transfer_set_ring */
void transfer_set_ring(void (*fn)(int peer)) { ring = fn; }

/* A message the peer may be asleep waiting for: sent, then the peer's bell rung, then waited
 * for in MPI as MPI_Send would (a long one needs the peer, now awake, to take it). */
static void send_and_ring(const void *buf, int count, MPI_Datatype type, int peer, int tag,
                          MPI_Comm comm) {
  if (!ring) {
    MPI_Send(buf, count, type, peer, tag, comm);
    return;
  }
  MPI_Request rq;
  MPI_Isend(buf, count, type, peer, tag, comm, &rq);
  ring(peer);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
}

static void (*landing)(uintptr_t addr, size_t len); /* transfer_set_landing */
void transfer_set_landing(void (*fn)(uintptr_t addr, size_t len)) { landing = fn; }

/* Wait for a message from peer with tag, watched by wt: 0, or ETIMEDOUT (nothing taken). */
static int probe_watched(int peer, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *st,
                         watch *wt) {
  if (!idle_cap && !wt->cfg) {
    MPI_Mprobe(peer, tag, comm, msg, st);
    return 0;
  }
  idle_wait w;
  idle_start(&w, idle_cap);
  for (int flag = 0;;) {
    MPI_Improbe(peer, tag, comm, &flag, msg, st);
    if (flag) return 0;
    int rc = watch_poll(wt);
    if (rc) return rc;
    idle_pause(&w);
  }
}

/* ... unwatched: the data of a transfer already under way. */
static void probe_message(int peer, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *st) {
  watch none;
  watch_start(&none, NULL, NULL, NULL, 0);
  probe_watched(peer, tag, comm, msg, st, &none);
}

/* ---- the data plan (both sides) ------------------------------------------------------------ */

/* One data message: a piece of one long range (direct), or ranges [first, end) packed. */
typedef struct {
  bool staged;
  uintptr_t addr; /* direct */
  size_t len;     /* bytes in the message */
  size_t first, end;
} data_msg;

typedef struct {
  const gas_range *r;
  size_t n, i, off; /* next range, offset into it (direct pieces) */
  size_t piece;     /* bytes of one direct message at most */
} planner;

static size_t piece_bytes(unsigned shift) {
  return shift ? (size_t)1 << shift : TRANSFER_BLOCK_MAX;
}

/* ANTHEAP_XFER_PLAN=whole (read at the first move): direct ranges always go whole. */
static bool plan_whole(void) {
  static _Atomic int whole = -1; /* threads may move at once (every one reads the same answer) */
  int w = atomic_load_explicit(&whole, memory_order_relaxed);
  if (w < 0) {
    const char *plan = getenv("ANTHEAP_XFER_PLAN");
    w = plan && !strcmp(plan, "whole");
    atomic_store_explicit(&whole, w, memory_order_relaxed);
  }
  return w;
}

/* The sender's piece size (header.piece) for a move of total bytes. */
static unsigned piece_shift(bool near, uint64_t total) {
  if (!near || plan_whole()) return 0;
  unsigned s = TRANSFER_PIECE_MIN_SHIFT;
  while (s < TRANSFER_PIECE_MAX_SHIFT && ((uint64_t)1 << s) * TRANSFER_WINDOW < total) s++;
  return s;
}

static bool plan_next(planner *p, data_msg *m) {
  if (p->i >= p->n) return false;
  const gas_range *r = p->r;
  if (r[p->i].len >= TRANSFER_DIRECT_MIN) {
    size_t left = r[p->i].len - p->off;
    *m = (data_msg){.staged = false, .addr = r[p->i].addr + p->off,
                    .len = left < p->piece ? left : p->piece};
    p->off += m->len;
    if (p->off == r[p->i].len) p->i++, p->off = 0;
    return true;
  }
  *m = (data_msg){.staged = true, .first = p->i};
  while (p->i < p->n && r[p->i].len < TRANSFER_DIRECT_MIN && m->len + r[p->i].len <= TRANSFER_STAGE_MAX)
    m->len += r[p->i++].len;
  m->end = p->i;
  return true;
}

static void stage_pack(const gas_range *r, const data_msg *m, unsigned char *buf) {
  for (size_t k = m->first; k < m->end; buf += r[k].len, k++) memcpy(buf, (void *)r[k].addr, r[k].len);
}

static void stage_unpack(const gas_range *r, const data_msg *m, const unsigned char *buf) {
  for (size_t k = m->first; k < m->end; buf += r[k].len, k++) memcpy((void *)r[k].addr, buf, r[k].len);
}

/* A window of data messages in flight, with staging buffers allocated before the transfer
 * starts (so that neither side can fail halfway). */
typedef struct {
  MPI_Request req[TRANSFER_WINDOW];
  data_msg msg[TRANSFER_WINDOW];
  unsigned char *buf[TRANSFER_WINDOW];
  bool busy[TRANSFER_WINDOW];
} window;

static void window_free(window *w) {
  for (int k = 0; k < TRANSFER_WINDOW; k++) free(w->buf[k]);
}

/* Staging buffers for the plan of r[0..n): as many slots as can hold a staged message, each
 * of the longest staged message's size; *nmsgs gets the plan's message count. 0 or ENOMEM
 * (nothing held). */
static int window_alloc(window *w, const gas_range *r, size_t n, unsigned shift,
                        uint64_t *nmsgs_out) {
  memset(w, 0, sizeof *w);
  planner p = {.r = r, .n = n, .piece = piece_bytes(shift)};
  data_msg m;
  size_t nmsgs = 0, longest = 0;
  bool staged = false;
  while (plan_next(&p, &m)) {
    nmsgs++;
    if (m.staged) staged = true, longest = m.len > longest ? m.len : longest;
  }
  *nmsgs_out = nmsgs;
  size_t slots = nmsgs < TRANSFER_WINDOW ? nmsgs : TRANSFER_WINDOW;
  for (size_t k = 0; staged && k < slots; k++)
    if (!(w->buf[k] = malloc(longest))) {
      window_free(w);
      return ENOMEM;
    }
  return 0;
}

/* Wait for slot k; on the receiving side, unpack what it staged. */
static void slot_finish(window *w, int k, const gas_range *r, bool receiving) {
  if (!w->busy[k]) return;
  /* MPI's own wait: both sides are in the transfer by now, and MPI moves the data only inside
   * its calls (a sleep between tests would stall the stream) */
  MPI_Wait(&w->req[k], MPI_STATUS_IGNORE);
  if (receiving && w->msg[k].staged) stage_unpack(r, &w->msg[k], w->buf[k]);
  w->busy[k] = false;
}

/* Start message m in slot k (sending or receiving). */
static void slot_start(window *w, int k, const data_msg *m, const gas_range *r, bool receiving,
                       transfer_link link) {
  MPI_Comm comm = link.comm;
  int peer = link.peer, tag = link.tag;
  void *at = (void *)m->addr;
  if (m->staged) {
    if (!receiving) stage_pack(r, m, w->buf[k]);
    at = w->buf[k];
  }
  if (receiving) MPI_Irecv(at, (int)m->len, MPI_BYTE, peer, TAG_DATA(tag), comm, &w->req[k]);
  else MPI_Isend(at, (int)m->len, MPI_BYTE, peer, TAG_DATA(tag), comm, &w->req[k]);
  w->msg[k] = *m;
  w->busy[k] = true;
}

/* The sender gave up waiting (ETIMEDOUT): the messages under way stay with MPI (freed
 * requests complete if the receiver ever takes them), and so do their staging buffers, which
 * are therefore not freed. */
static void window_abandon(window *w) {
  for (int k = 0; k < TRANSFER_WINDOW; k++)
    if (w->busy[k]) {
      MPI_Request_free(&w->req[k]);
      w->buf[k] = NULL; /* MPI may still read it */
    }
  window_free(w);
}

/* Run the plan of r[0..n) through a prepared window (freed here), calling first_window()
 * once the first window of messages is started: the receiver answers there (its receives are
 * posted, so data lands only where it may), the sender waits there for that answer (its first
 * messages are on their way meanwhile). 0, or what first_window failed with (the sender gave
 * up: the rest of the plan is not sent). */
/* The side of a run_plan: receiving or not, and what it calls after its first window. */
typedef struct {
  bool receiving;
  int (*first_window)(void *ctx);
  void *ctx;
} plan_side;

static int run_plan(window *w, transfer_link link, const gas_range *r, size_t n, unsigned shift,
                    plan_side side) {
  bool receiving = side.receiving;
  int (*first_window)(void *) = side.first_window;
  void *ctx = side.ctx;
  planner p = {.r = r, .n = n, .piece = piece_bytes(shift)};
  data_msg m;
  size_t i = 0;
  bool told = !first_window;
  int rc = 0;
  while (plan_next(&p, &m)) {
    int k = (int)(i++ % TRANSFER_WINDOW);
    if (!told && k == 0 && i > 1) {
      told = true;
      if ((rc = first_window(ctx))) break;
    }
    slot_finish(w, k, r, receiving);
    slot_start(w, k, &m, r, receiving, link);
  }
  if (!told && !rc) rc = first_window(ctx);
  if (rc) {
    window_abandon(w);
    return rc;
  }
  for (int k = 0; k < TRANSFER_WINDOW; k++) slot_finish(w, k, r, receiving);
  window_free(w);
  return 0;
}

/* ---- sender ---------------------------------------------------------------------------- */

/* Check what the sender can: count, lengths, wrap-around, total. */
static int check_send_list(const gas_range *r, size_t n, uint32_t nextra, uint64_t *total) {
  if (n > 0 && !r) return EINVAL;
  if ((uint64_t)n > TRANSFER_MAX_RANGES || nextra > TRANSFER_MAX_EXTRA) return E2BIG;
  uint64_t t = 0;
  for (size_t i = 0; i < n; i++) {
    if (r[i].len == 0 || r[i].addr + r[i].len < r[i].addr) return EINVAL;
    if (__builtin_add_overflow(t, (uint64_t)r[i].len, &t)) return EOVERFLOW;
  }
  *total = t;
  return 0;
}

/* The data leaves before the receiver has judged the list, so the sender reads only what it
 * may: with a GAS mapped, every range inside it. 0 or EINVAL. */
static int check_readable(const gas_range *r, size_t n) {
  const gas_bounds *g = gas_current();
  for (size_t i = 0; g && i < n; i++)
    if (!gas_bounds_contains(g, r[i].addr, r[i].len)) return EINVAL;
  return 0;
}

static transfer_header make_header(int status, transfer_mode mode, unsigned shift,
                                   uint32_t nextra, uint64_t count, uint64_t total,
                                   uint64_t nmsgs) {
  return (transfer_header){.magic = TRANSFER_MAGIC, .version = TRANSFER_VERSION,
                           .mode = (uint8_t)mode, .piece = (uint8_t)shift, .status = status,
                           .nextra = nextra, .count = count, .total = total, .nmsgs = nmsgs};
}

int transfer_send_abort(transfer_link to, int err) {
  transfer_header h = make_header(err ? err : ECANCELED, TRANSFER_COPY, 0, 0, 0, 0, 0);
  send_and_ring(&h, (int)sizeof h, MPI_BYTE, to.peer, TAG_LIST(to.tag), to.comm);
  return err;
}

/* Message 1: header (h: all but the handle and range counts), handles and list in one
 * buffer. */
static int send_list(transfer_link to, transfer_header h, const transfer_list *list) {
  const uint64_t *extra = list->extra;
  uint32_t nextra = list->nextra;
  const gas_range *r = list->r;
  size_t n = list->n;
  size_t bytes = sizeof(transfer_header) + (size_t)nextra * 8 + n * sizeof(transfer_wire_range);
  if (bytes > INT_MAX) return E2BIG;
  unsigned char *buf = malloc(bytes);
  if (!buf) return ENOMEM;
  h.nextra = nextra;
  h.count = n;
  memcpy(buf, &h, sizeof h);
  if (nextra) memcpy(buf + sizeof h, extra, (size_t)nextra * 8);
  transfer_wire_range *w = (transfer_wire_range *)(buf + sizeof h + (size_t)nextra * 8);
  for (size_t i = 0; i < n; i++) w[i] = (transfer_wire_range){r[i].addr, r[i].len};
  send_and_ring(buf, (int)bytes, MPI_BYTE, to.peer, TAG_LIST(to.tag), to.comm);
  free(buf);
  return 0;
}

/* The sender's wait for the answer (run_plan's first_window, or alone). */
typedef struct {
  MPI_Request rq;
  int32_t answer;
  int peer;
} answer_wait;

/* Give up the wait for an answer: 0 when it came meanwhile after all. */
static int cancel_answer(answer_wait *a) {
  MPI_Cancel(&a->rq);
  MPI_Status st;
  MPI_Wait(&a->rq, &st);
  int cancelled = 0;
  MPI_Test_cancelled(&st, &cancelled);
  return cancelled ? ETIMEDOUT : 0;
}

static int await_answer(void *ctx) {
  answer_wait *a = ctx;
  watch wt;
  watch_start(&wt, watching, "sys_send", "worker %d to receive the move (sys_recv); two workers "
              "that send to each other at once wait for ever: one of them must receive first",
              a->peer);
  if (!idle_cap && !wt.cfg) {
    MPI_Wait(&a->rq, MPI_STATUS_IGNORE);
    return 0;
  }
  idle_wait w;
  idle_start(&w, idle_cap);
  for (int done = 0;;) {
    MPI_Test(&a->rq, &done, MPI_STATUS_IGNORE);
    if (done) return 0;
    if (watch_poll(&wt)) return cancel_answer(a);
    idle_pause(&w);
  }
}

int transfer_send(transfer_link to, transfer_mode mode, bool near, const transfer_list *list,
                  int *refusal) {
  const gas_range *r = list->r;
  size_t n = list->n;
  uint64_t total = 0, nmsgs = 0;
  if (refusal) *refusal = 0;
  int rc = check_send_list(r, n, list->nextra, &total);
  if (!rc && list->nextra && !list->extra) rc = EINVAL;
  bool copy = mode == TRANSFER_COPY && total > 0;
  if (!rc && copy) rc = check_readable(r, n);
  unsigned shift = copy ? piece_shift(near, total) : 0;
  window w;
  if (!rc && copy) rc = window_alloc(&w, r, n, shift, &nmsgs);
  if (!rc) {
    rc = send_list(to, make_header(0, mode, shift, 0, 0, total, nmsgs), list);
    if (rc && copy) window_free(&w);
  }
  if (rc) return transfer_send_abort(to, rc);
  /* The data follows the list at once; a receiver that refuses takes it truncated to nothing
   * (transfer.h), so it is sent whatever the answer. */
  answer_wait a = {.answer = -1, .peer = to.peer};
  MPI_Irecv(&a.answer, 1, MPI_INT32_T, to.peer, TAG_ANSWER(to.tag), to.comm, &a.rq);
  rc = copy ? run_plan(&w, to, r, n, shift, (plan_side){false, await_answer, &a})
            : await_answer(&a);
  if (rc) return rc;
  if (a.answer) {
    if (refusal) *refusal = a.answer;
    return ECONNREFUSED;
  }
  return 0;
}

/* ---- receiver -------------------------------------------------------------------------- */

/* Receive a matched message into buf (cap bytes), accepting truncation. */
static void recv_truncated(MPI_Comm comm, MPI_Message *msg, void *buf, int cap) {
  MPI_Errhandler old;
  MPI_Comm_get_errhandler(comm, &old);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Status st;
  MPI_Mrecv(buf, cap, MPI_BYTE, msg, &st); /* MPI_SUCCESS or MPI_ERR_TRUNCATE */
  MPI_Comm_set_errhandler(comm, old);
  MPI_Errhandler_free(&old);
}

/* A received list message. */
typedef struct {
  transfer_header h;
  uint64_t *extra;
  transfer_wire_range *w;
  size_t records;
  int rc; /* 0, EPROTO (bad size) or ENOMEM */
} list_msg;

/* Receive message 1; one of impossible size, or one we have no memory for, is received
 * truncated: its header is kept, the rest discarded. One shorter than a header has no
 * readable header: zeroed whole (no magic), so that nobody answers it. */
static void recv_list(MPI_Comm comm, MPI_Message *msg, MPI_Count bytes, list_msg *out) {
  memset(out, 0, sizeof *out);
  const MPI_Count hs = (MPI_Count)sizeof(transfer_header);
  unsigned char *buf = bytes >= hs && bytes <= INT_MAX ? malloc((size_t)bytes) : NULL;
  if (!buf) {
    recv_truncated(comm, msg, &out->h, (int)sizeof out->h);
    if (bytes < hs) memset(&out->h, 0, sizeof out->h);
    out->rc = bytes >= hs && bytes <= INT_MAX ? ENOMEM : EPROTO;
    return;
  }
  MPI_Status st;
  MPI_Mrecv(buf, (int)bytes, MPI_BYTE, msg, &st);
  memcpy(&out->h, buf, sizeof out->h);
  size_t rest = (size_t)(bytes - hs), ws = sizeof(transfer_wire_range);
  size_t xb = (size_t)out->h.nextra * 8;
  if (out->h.nextra > TRANSFER_MAX_EXTRA || xb > rest || (rest - xb) % ws) {
    out->rc = EPROTO;
  } else {
    out->records = (rest - xb) / ws;
    out->extra = malloc(xb ? xb : 1);
    out->w = malloc(out->records ? out->records * ws : 1);
    if (!out->extra || !out->w) out->rc = ENOMEM;
    else {
      memcpy(out->extra, buf + hs, xb);
      memcpy(out->w, buf + hs + xb, out->records * ws);
    }
  }
  free(buf);
}

static void list_free(list_msg *m) {
  free(m->extra);
  free(m->w);
}

static int cmp_wire(const void *a, const void *b) {
  const transfer_wire_range *x = a, *y = b;
  return (x->addr > y->addr) - (x->addr < y->addr);
}

/* No two ranges overlap (all inside the GAS, so ends do not wrap). 0, EINVAL or ENOMEM. */
static int check_disjoint(const transfer_wire_range *w, size_t n) {
  size_t i = 1;
  while (i < n && w[i - 1].addr + w[i - 1].len <= w[i].addr) i++;
  if (i >= n) return 0; /* ascending and disjoint */
  transfer_wire_range *s = malloc(n * sizeof *s);
  if (!s) return ENOMEM;
  memcpy(s, w, n * sizeof *s);
  qsort(s, n, sizeof *s, cmp_wire);
  int rc = 0;
  for (i = 1; i < n && !rc; i++)
    if (s[i - 1].addr + s[i - 1].len > s[i].addr) rc = EINVAL;
  free(s);
  return rc;
}

/* Validate a well-framed list against the GAS: count, each range, overlaps, total. */
static int check_list(const list_msg *m, const gas_bounds *gas) {
  if (m->h.count != m->records || m->h.count > TRANSFER_MAX_RANGES) return EPROTO;
  for (size_t i = 0; i < m->records; i++)
    if (!gas_bounds_contains(gas, (uintptr_t)m->w[i].addr, (size_t)m->w[i].len)) return EINVAL;
  int rc = check_disjoint(m->w, m->records);
  if (rc) return rc;
  uint64_t total = 0;
  for (size_t i = 0; i < m->records; i++) total += m->w[i].len; /* disjoint in GAS: no overflow */
  return total == m->h.total ? 0 : EPROTO;
}

/* 0 when the transfer may go ahead, else why it is refused. */
static int judge(const list_msg *m, int src, transfer_accept_fn accept, void *ctx,
                 const gas_bounds *gas) {
  if (m->rc) return m->rc;
  if (m->h.mode > TRANSFER_SHARED || (m->h.mode == TRANSFER_SHARED && !accept)) return EPROTO;
  if (m->h.piece && (m->h.piece < TRANSFER_PIECE_MIN_SHIFT || m->h.piece > TRANSFER_PIECE_MAX_SHIFT))
    return EPROTO;
  int rc = check_list(m, gas);
  if (!rc && accept) rc = accept(ctx, src, (transfer_mode)m->h.mode, m->extra, m->h.nextra);
  return rc;
}

static gas_range *to_ranges(const transfer_wire_range *w, size_t n) {
  gas_range *r = malloc((n ? n : 1) * sizeof *r);
  for (size_t i = 0; r && i < n; i++) r[i] = (gas_range){(uintptr_t)w[i].addr, (size_t)w[i].len};
  return r;
}

typedef struct {
  MPI_Comm comm;
  int src, tag;
} answer_ctx;

static void send_answer(MPI_Comm comm, int src, int tag, int32_t status) {
  send_and_ring(&status, 1, MPI_INT32_T, src, TAG_ANSWER(tag), comm);
}

static int answer_go(void *ctx) {
  answer_ctx *a = ctx;
  send_answer(a->comm, a->src, a->tag, 0);
  return 0;
}

/* Take the n data messages a refused transfer's sender sends anyway, truncated to nothing:
 * no byte of them is written (transfer.h). */
static void discard_data(MPI_Comm comm, int src, int tag, uint64_t n) {
  for (uint64_t i = 0; i < n; i++) {
    MPI_Message msg;
    MPI_Status st;
    unsigned char none;
    probe_message(src, TAG_DATA(tag), comm, &msg, &st);
    recv_truncated(comm, &msg, &none, 0);
  }
}

/* Refuse a readable list: the answer, then its data. */
static void refuse(MPI_Comm comm, int src, int tag, const transfer_header *h, int32_t why) {
  send_answer(comm, src, tag, why);
  discard_data(comm, src, tag, h->nmsgs);
}

int transfer_recv(transfer_link from, const transfer_policy *policy, transfer_receipt *got) {
  if (!got) return EINVAL;
  got->r = NULL;
  got->n = 0;
  got->extra = NULL;
  got->nextra = 0;
  static const transfer_policy defaults;
  if (!policy) policy = &defaults;
  transfer_accept_fn accept = policy->accept;
  void *ctx = policy->ctx;
  const gas_bounds *gas = policy->gas ? policy->gas : gas_current();
  MPI_Comm comm = from.comm;
  int peer = from.peer, tag = from.tag;
  if (!gas) return EINVAL;
  MPI_Message msg;
  MPI_Status st;
  watch wt;
  watch_start(&wt, watching, "sys_recv",
              peer == MPI_ANY_SOURCE ? "any worker to send it a move (sys_send)"
                                     : "worker %d to send it a move (sys_send)", peer);
  int rc = probe_watched(peer, TAG_LIST(tag), comm, &msg, &st, &wt);
  if (rc) return rc;
  int src = st.MPI_SOURCE;
  got->src = src;
  list_msg m;
  recv_list(comm, &msg, message_bytes(&st), &m);
  if (m.h.magic != TRANSFER_MAGIC || m.h.version != TRANSFER_VERSION) {
    list_free(&m); /* not a transfer we understand: whether it waits for an answer is unknown */
    return EPROTO;
  }
  if (m.h.status) { /* the sender gave up: nothing follows, nobody waits */
    list_free(&m);
    return ECANCELED;
  }
  rc = judge(&m, src, accept, ctx, gas);
  gas_range *list = rc ? NULL : to_ranges(m.w, m.records);
  if (!rc && !list) rc = ENOMEM;
  bool copy = m.h.mode == TRANSFER_COPY && m.h.total > 0;
  window w;
  uint64_t nmsgs = 0;
  if (!rc && copy) rc = window_alloc(&w, list, m.records, m.h.piece, &nmsgs);
  if (!rc && nmsgs != m.h.nmsgs) { /* the sender's plan is not the one its list makes */
    if (copy) window_free(&w);
    rc = EPROTO;
  }
  if (rc) {
    free(list);
    refuse(comm, src, tag, &m.h, rc);
    list_free(&m);
    return rc;
  }
  for (size_t i = 0; landing && i < m.records; i++) landing(list[i].addr, list[i].len);
  answer_ctx a = {comm, src, tag};
  transfer_link sender = {comm, src, tag};
  if (copy) run_plan(&w, sender, list, m.records, m.h.piece, (plan_side){true, answer_go, &a});
  else answer_go(&a); /* (a receiver's answer cannot fail) */
  size_t count = m.records;
  if (count == 0) {
    free(list);
    list = NULL;
  }
  got->r = list;
  got->n = count;
  got->nextra = m.h.nextra;
  got->extra = m.h.nextra ? m.extra : NULL;
  if (!m.h.nextra) free(m.extra);
  free(m.w);
  return 0;
}

int transfer_refuse_pending(MPI_Comm comm, int base, int nlinks, int err) {
  int flag = 0;
  MPI_Message msg;
  MPI_Status st;
  /* the first message waiting: usually nothing, or a list message of one of the links; when it
   * is something else, every link's list tag is asked in turn */
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st);
  if (!flag) return 0;
  int off = st.MPI_TAG - base, tag = -1;
  if (off >= 0 && off < nlinks * TRANSFER_TAGS && off % TRANSFER_TAGS == 1 &&
      message_bytes(&st) == (MPI_Count)sizeof(int32_t)) {
    /* an answer on one of the links: stale (a leaving worker sends nothing; a send that gave
     * up left it), taken so that the next poll is one probe again */
    int32_t stale;
    MPI_Improbe(st.MPI_SOURCE, st.MPI_TAG, comm, &flag, &msg, &st);
    if (flag) MPI_Mrecv(&stale, 1, MPI_INT32_T, &msg, MPI_STATUS_IGNORE);
    return flag;
  }
  if (off >= 0 && off < nlinks * TRANSFER_TAGS && off % TRANSFER_TAGS == 0) {
    tag = st.MPI_TAG;
    MPI_Improbe(st.MPI_SOURCE, TAG_LIST(tag), comm, &flag, &msg, &st);
  } else {
    flag = 0;
    for (int k = 0; !flag && k < nlinks; k++) {
      tag = base + k * TRANSFER_TAGS;
      MPI_Improbe(MPI_ANY_SOURCE, TAG_LIST(tag), comm, &flag, &msg, &st);
    }
  }
  if (!flag) return 0;
  list_msg m;
  recv_list(comm, &msg, message_bytes(&st), &m);
  bool waits = m.h.magic == TRANSFER_MAGIC && m.h.version == TRANSFER_VERSION && m.h.status == 0;
  if (waits) refuse(comm, st.MPI_SOURCE, tag, &m.h, err);
  list_free(&m);
  return 1;
}

/* ---- the path MPI takes between two processes of one host ------------------------------ */

/* Does the comma-separated list name one of the words? */
static bool names_any(const char *list, const char *const *words) {
  char copy[256];
  snprintf(copy, sizeof copy, "%s", list);
  for (char *save, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
    for (const char *const *w = words; *w; w++)
      if (!strcmp(t, *w)) return true;
  return false;
}

/* May a component list (Open MPI's "a,b" or "^a,b" syntax) use one of the words? */
static bool allows_any(const char *list, const char *const *words) {
  if (!list || !*list) return true;
  if (list[0] == '^') return !names_any(list + 1, words);
  return names_any(list, words);
}

bool transfer_host_uses_shm(void) {
  static const char *const btls[] = {"vader", "sm", "smcuda", NULL};
  static const char *const ucx[] = {"all", "sm", "shm", "posix", "sysv", "cma", "knem",
                                    "xpmem", NULL};
  return allows_any(getenv("OMPI_MCA_btl"), btls) && allows_any(getenv("UCX_TLS"), ucx);
}

/* transfer.c: sends a list of GAS ranges and their bytes as one MPI message over an hindexed
 * datatype from MPI_BOTTOM, and receives it into the same addresses after validating the list
 * (see transfer.h for the wire format and the error contract). The only file that moves GAS
 * data between processes. */
#include "worker/transfer.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(transfer_header) == 32, "transfer_header is a fixed 32-byte wire record");
_Static_assert(sizeof(transfer_wire_range) == 16, "a wire range is two 64-bit words");
_Static_assert(sizeof(uintptr_t) == 8 && sizeof(size_t) == 8, "antheap needs a 64-bit target");

/* ---- both sides ---------------------------------------------------------------------- */

/* MPI blocks needed for the n ranges, each split into pieces of at most TRANSFER_BLOCK_MAX
 * bytes; EOVERFLOW when more than INT_MAX. */
static int count_blocks(const gas_range *r, size_t n, size_t *nblocks) {
  size_t nb = 0;
  for (size_t i = 0; i < n; i++) {
    nb += r[i].len / TRANSFER_BLOCK_MAX + (r[i].len % TRANSFER_BLOCK_MAX != 0);
    if (nb > INT_MAX) return EOVERFLOW;
  }
  *nblocks = nb;
  return 0;
}

/* A committed datatype naming the ranges' bytes at their absolute addresses (use with
 * MPI_BOTTOM). Ranges must be non-empty. Returns 0, EOVERFLOW or ENOMEM. */
static int ranges_type(const gas_range *r, size_t n, MPI_Datatype *out) {
  size_t nb;
  int rc = count_blocks(r, n, &nb);
  if (rc) return rc;
  int *lens = malloc(nb * sizeof *lens);
  MPI_Aint *displs = malloc(nb * sizeof *displs);
  if (!lens || !displs) {
    free(lens);
    free(displs);
    return ENOMEM;
  }
  size_t b = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t off = 0; off < r[i].len; off += TRANSFER_BLOCK_MAX, b++) {
      size_t left = r[i].len - off;
      lens[b] = (int)(left < TRANSFER_BLOCK_MAX ? left : TRANSFER_BLOCK_MAX);
      MPI_Get_address((void *)(r[i].addr + off), &displs[b]);
    }
  AH_ASSERT(b == nb);
  MPI_Type_create_hindexed((int)nb, lens, displs, MPI_BYTE, out);
  MPI_Type_commit(out);
  free(lens);
  free(displs);
  return 0;
}

/* The byte size of a matched message (MPI_Count: may exceed INT_MAX). */
static MPI_Count message_bytes(const MPI_Status *st) {
  MPI_Count c = 0;
  MPI_Get_elements_x(st, MPI_BYTE, &c);
  return c;
}

/* ---- sender ---------------------------------------------------------------------------- */

/* Check what the sender can: count, lengths, wrap-around, total. */
static int check_send_list(const gas_range *r, size_t n, uint64_t *total) {
  if (n > 0 && !r) return EINVAL;
  if ((uint64_t)n > TRANSFER_MAX_RANGES) return E2BIG;
  uint64_t t = 0;
  for (size_t i = 0; i < n; i++) {
    if (r[i].len == 0 || r[i].addr + r[i].len < r[i].addr) return EINVAL;
    if (__builtin_add_overflow(t, (uint64_t)r[i].len, &t)) return EOVERFLOW;
  }
  *total = t;
  return 0;
}

static transfer_header make_header(int status, uint64_t count, uint64_t total) {
  transfer_header h = {.magic = TRANSFER_MAGIC, .version = TRANSFER_VERSION};
  h.status = status;
  h.count = count;
  h.total = total;
  return h;
}

/* The sender gave up: tell the receiver (a header with the error and nothing after it). */
static int send_abort(MPI_Comm comm, int peer, int tag, int err) {
  transfer_header h = make_header(err, 0, 0);
  MPI_Send(&h, (int)sizeof h, MPI_BYTE, peer, tag, comm);
  return err;
}

/* Message 1: header and list in one buffer. */
static int send_list(MPI_Comm comm, int peer, int tag, const gas_range *r, size_t n,
                     uint64_t total) {
  size_t bytes = sizeof(transfer_header) + n * sizeof(transfer_wire_range);
  unsigned char *buf = malloc(bytes);
  if (!buf) return ENOMEM;
  transfer_header h = make_header(0, n, total);
  memcpy(buf, &h, sizeof h);
  transfer_wire_range *w = (transfer_wire_range *)(buf + sizeof h);
  for (size_t i = 0; i < n; i++) w[i] = (transfer_wire_range){r[i].addr, r[i].len};
  MPI_Send(buf, (int)bytes, MPI_BYTE, peer, tag, comm);
  free(buf);
  return 0;
}

int transfer_send(MPI_Comm comm, int peer, int tag, const gas_range *r, size_t n) {
  uint64_t total = 0;
  size_t nb = 0;
  int rc = check_send_list(r, n, &total);
  if (!rc) rc = count_blocks(r, n, &nb);
  MPI_Datatype type = MPI_DATATYPE_NULL;
  if (!rc && n > 0) rc = ranges_type(r, n, &type); /* before the list: fail before sending */
  if (rc) return send_abort(comm, peer, tag, rc);
  rc = send_list(comm, peer, tag, r, n, total);
  if (rc) {
    if (n > 0) MPI_Type_free(&type);
    return send_abort(comm, peer, tag, rc);
  }
  if (n == 0) return 0;
  MPI_Send(MPI_BOTTOM, 1, type, peer, tag, comm); /* message 2: the data, no copy */
  MPI_Type_free(&type);
  return 0;
}

/* ---- receiver: draining --------------------------------------------------------------- */

/* Receive a matched message into buf (cap bytes), accepting truncation: the rest of the
 * message is discarded. MPI_ERR_TRUNCATE is made non-fatal by switching the communicator to
 * MPI_ERRORS_RETURN for this one call. */
static void recv_truncated(MPI_Comm comm, MPI_Message *msg, void *buf, int cap) {
  MPI_Errhandler old;
  MPI_Comm_get_errhandler(comm, &old);
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  MPI_Status st;
  MPI_Mrecv(buf, cap, MPI_BYTE, msg, &st); /* MPI_SUCCESS or MPI_ERR_TRUNCATE */
  MPI_Comm_set_errhandler(comm, old);
  MPI_Errhandler_free(&old);
}

/* Receive and discard a matched message of `bytes` bytes, in bounded memory. */
static void drain_matched(MPI_Comm comm, MPI_Message *msg, MPI_Count bytes) {
  void *scratch = bytes > 0 && (size_t)bytes <= TRANSFER_DRAIN_MAX ? malloc((size_t)bytes) : NULL;
  if (scratch) {
    MPI_Status st;
    MPI_Mrecv(scratch, (int)bytes, MPI_BYTE, msg, &st);
    free(scratch);
    return;
  }
  char small[64];
  recv_truncated(comm, msg, small, bytes == 0 ? 0 : (int)sizeof small);
}

/* Drain the next message from src on tag: the data of a rejected transfer. */
static void drain_next(MPI_Comm comm, int src, int tag) {
  MPI_Message msg;
  MPI_Status st;
  MPI_Mprobe(src, tag, comm, &msg, &st);
  drain_matched(comm, &msg, message_bytes(&st));
}

/* ---- receiver: the list ---------------------------------------------------------------- */

/* A received list message: its header (zeroed when the message was shorter), its wire
 * ranges (NULL when rejected unread) and how many whole records it held. */
typedef struct {
  transfer_header h;
  transfer_wire_range *w;
  size_t records;
  int rc; /* 0, EPROTO (bad size) or ENOMEM */
} list_msg;

/* Receive message 1 (matched by MPI_Mprobe); a list of impossible size, or one we have no
 * memory for, is received truncated: its header is kept, the rest discarded. */
static void recv_list(MPI_Comm comm, MPI_Message *msg, MPI_Count bytes, list_msg *out) {
  memset(out, 0, sizeof *out);
  const MPI_Count hs = (MPI_Count)sizeof(transfer_header), ws = sizeof(transfer_wire_range);
  int sane = bytes >= hs && (bytes - hs) % ws == 0 &&
             (uint64_t)((bytes - hs) / ws) <= TRANSFER_MAX_RANGES;
  unsigned char *buf = sane ? malloc((size_t)bytes) : NULL;
  if (!buf) {
    recv_truncated(comm, msg, &out->h, (int)sizeof out->h);
    out->rc = sane ? ENOMEM : EPROTO;
    return;
  }
  MPI_Status st;
  MPI_Mrecv(buf, (int)bytes, MPI_BYTE, msg, &st);
  memcpy(&out->h, buf, sizeof out->h);
  out->records = (size_t)((bytes - hs) / ws);
  out->w = malloc(out->records ? out->records * sizeof *out->w : 1);
  if (out->w) memcpy(out->w, buf + hs, out->records * sizeof *out->w);
  else out->rc = ENOMEM;
  free(buf);
}

static int cmp_wire(const void *a, const void *b) {
  const transfer_wire_range *x = a, *y = b;
  return (x->addr > y->addr) - (x->addr < y->addr);
}

/* No two ranges overlap (all are inside the GAS, so ends do not wrap). Sorted lists are
 * checked in place; others on a sorted copy. Returns 0, EINVAL or ENOMEM. */
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
  uint64_t total = 0;
  for (size_t i = 0; i < m->records; i++)
    if (!gas_bounds_contains(gas, (uintptr_t)m->w[i].addr, (size_t)m->w[i].len)) return EINVAL;
  int rc = check_disjoint(m->w, m->records);
  if (rc) return rc;
  for (size_t i = 0; i < m->records; i++) total += m->w[i].len; /* disjoint in GAS: no overflow */
  return total == m->h.total ? 0 : EPROTO;
}

/* Whether the header can be trusted for framing, and whether a data message follows it. */
static int framing_ok(const transfer_header *h) {
  return h->magic == TRANSFER_MAGIC && h->version == TRANSFER_VERSION;
}
static int data_follows(const transfer_header *h) { return h->status == 0 && h->count > 0; }

/* ---- receiver: the data ---------------------------------------------------------------- */

/* Message 2: receive into the ranges' addresses if its real size is the announced total,
 * else drain it. The list was validated; rc is returned to the caller. */
static int recv_data(MPI_Comm comm, int src, int tag, const gas_range *r, size_t n,
                     uint64_t total) {
  MPI_Message msg;
  MPI_Status st;
  MPI_Mprobe(src, tag, comm, &msg, &st);
  MPI_Count bytes = message_bytes(&st);
  MPI_Datatype type;
  int rc = (uint64_t)bytes == total ? ranges_type(r, n, &type) : EPROTO;
  if (rc) {
    drain_matched(comm, &msg, bytes);
    return rc;
  }
  MPI_Mrecv(MPI_BOTTOM, 1, type, &msg, &st);
  MPI_Type_free(&type);
  return 0;
}

static gas_range *to_ranges(const transfer_wire_range *w, size_t n) {
  gas_range *r = malloc(n * sizeof *r);
  for (size_t i = 0; r && i < n; i++) r[i] = (gas_range){(uintptr_t)w[i].addr, (size_t)w[i].len};
  return r;
}

/* Decide on a received list: 0 (data to receive), or the error to return. Drains the data
 * message of a well-framed transfer it rejects. */
static int accept_list(MPI_Comm comm, int src, int tag, const list_msg *m, const gas_bounds *gas) {
  if (!framing_ok(&m->h)) return EPROTO; /* cannot know what follows: receive nothing more */
  if (m->h.status) return ECANCELED;
  int rc = m->rc ? m->rc : check_list(m, gas);
  if (rc && data_follows(&m->h)) drain_next(comm, src, tag);
  return rc;
}

int transfer_recv(MPI_Comm comm, int peer, int tag, gas_range **r, size_t *n,
                  const gas_bounds *gas) {
  if (!r || !n) return EINVAL;
  *r = NULL;
  *n = 0;
  if (!gas) gas = gas_current();
  if (!gas) return EINVAL;
  MPI_Message msg;
  MPI_Status st;
  MPI_Mprobe(peer, tag, comm, &msg, &st);
  int src = st.MPI_SOURCE, tg = st.MPI_TAG; /* the data comes from the same sender and tag */
  list_msg m;
  recv_list(comm, &msg, message_bytes(&st), &m);
  int rc = accept_list(comm, src, tg, &m, gas);
  gas_range *list = NULL;
  if (!rc && m.records > 0 && !(list = to_ranges(m.w, m.records))) {
    rc = ENOMEM;
    drain_next(comm, src, tg);
  }
  free(m.w);
  if (!rc && m.records > 0) rc = recv_data(comm, src, tg, list, m.records, m.h.total);
  if (rc) {
    free(list);
    return rc;
  }
  *r = list;
  *n = m.records;
  return 0;
}

/* transfer.h: moving a list of GAS ranges (and a few handle words) from one worker to another.
 *
 * A transfer uses three tags from `tag` on one communicator:
 *   1. sender -> receiver, tag:     the list message: a transfer_header, `nextra` 64-bit handle
 *                                   words (sys_send's region IDs and object pointers), then
 *                                   `count` transfer_wire_range records;
 *   2. receiver -> sender, tag + 1: the answer, one int32: 0 (taken) or why it refuses;
 *   3. sender -> receiver, tag + 2: in copy mode, the data, right behind the list (it does not
 *                                   wait for the answer): every range of at least
 *                                   TRANSFER_DIRECT_MIN bytes as messages of its own straight
 *                                   from and into the GAS (so Open MPI's single-copy and
 *                                   zero-copy paths apply), cut into pieces of the header's
 *                                   piece size, runs of smaller ranges packed into staging
 *                                   messages of up to TRANSFER_STAGE_MAX bytes, at most
 *                                   TRANSFER_WINDOW messages in flight. Both sides derive this
 *                                   plan from the list message alone; the header says how many
 *                                   data messages follow (nmsgs).
 * The data does not wait for the answer: a long message's rendezvous request is already at the
 * receiver when it posts its receives, so the bytes start to move one round trip earlier than
 * they would after an answer (on TCP that round trip was a tenth of a 1 MiB move). Nothing
 * lands before the receiver has checked the list and posted its receives into the ranges; a
 * receiver that refuses (or leaves: transfer_refuse_pending) answers, then takes the nmsgs data
 * messages truncated to nothing, so no byte of them is written anywhere. MPI matches by sender
 * and tag, so a sender whose header lies about nmsgs only confuses its own later transfers to
 * this receiver.
 * Pieces: between two processes that MPI connects through shared memory, one long message runs
 * slower than several in flight, so the sender cuts long ranges into pieces of about total /
 * TRANSFER_WINDOW bytes (at least TRANSFER_PIECE_MIN); over a network (TCP) every message
 * costs its own latency, so a range goes whole there. (apps/bench-send/bench_ways.c compares
 * the alternatives: one hindexed message, staging on either side, eager-sized pieces; all
 * slower; docs/HISTORY.md has the numbers.)
 * In shared mode (both workers map the GAS from one memory object: share.h) no data moves: the
 * bytes are already at their addresses, and the answer orders the memory.
 *
 * The receiver validates everything before it answers: header, handle count (it must be the
 * one the receiver expects), list length, every range inside its GAS, lengths > 0, no two
 * ranges overlapping, the byte total, the number of data messages, and the mode (shared only
 * with a peer that shares its GAS). A refused transfer writes nothing, and the sender learns
 * why (ECONNREFUSED, with the receiver's reason). A sender that gives up before its list (bad
 * list, no memory, a failed pack) sends a header with its error, and the receiver returns
 * ECANCELED.
 *
 * Both sides block until the transfer is complete. Byte order and layout are the host's: all
 * ranks run the same build. Not thread-safe for concurrent transfers between one pair. */
#ifndef AH_WORKER_TRANSFER_H
#define AH_WORKER_TRANSFER_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/gas.h"

/* One range of GAS bytes: [addr, addr + len). */
typedef struct {
  uintptr_t addr;
  size_t len;
} gas_range;

typedef enum { TRANSFER_COPY = 0, TRANSFER_SHARED = 1 } transfer_mode;

/* The other side of a transfer: the communicator, the peer's rank in it (a receiver may name
 * MPI_ANY_SOURCE) and the first of the TRANSFER_TAGS tags. */
typedef struct transfer_link {
  MPI_Comm comm;
  int peer;
  int tag;
} transfer_link;

/* What a sender sends: nextra handle words (sys_send's region IDs and object pointers), then
 * n ranges. */
typedef struct transfer_list {
  const uint64_t *extra;
  uint32_t nextra;
  const gas_range *r;
  size_t n;
} transfer_list;

/* Wire format (public so that tests can forge malformed transfers). */
#define TRANSFER_MAGIC 0x46584841u /* "AHXF" little-endian */
#define TRANSFER_VERSION 4u
#define TRANSFER_MAX_RANGES ((uint64_t)1 << 24) /* a 256 MiB list */
#define TRANSFER_MAX_EXTRA ((uint32_t)1 << 24)  /* handle words */
#define TRANSFER_BLOCK_MAX ((size_t)1 << 30)     /* bytes in one direct message */
#define TRANSFER_DIRECT_MIN ((size_t)64 << 10)   /* ranges this long go on their own */
#define TRANSFER_STAGE_MAX ((size_t)4 << 20)     /* bytes of one staging message */
#define TRANSFER_WINDOW 8                        /* data messages in flight */
#define TRANSFER_TAGS 3                          /* tag, tag + 1, tag + 2 */
#define TRANSFER_PIECE_MIN_SHIFT 18               /* pieces of at least 256 KiB */
#define TRANSFER_PIECE_MAX_SHIFT 30               /* and at most TRANSFER_BLOCK_MAX */

typedef struct transfer_header {
  uint32_t magic;    /* TRANSFER_MAGIC */
  uint16_t version;  /* TRANSFER_VERSION */
  uint8_t mode;      /* transfer_mode */
  uint8_t piece;     /* 0: direct ranges whole (up to TRANSFER_BLOCK_MAX a message); else
                      * in pieces of 2^piece bytes, TRANSFER_PIECE_MIN/MAX_SHIFT inclusive */
  int32_t status;    /* 0, or the sender's errno: it gave up, nothing follows */
  uint32_t nextra;   /* handle words after the header */
  uint64_t count;    /* ranges in the list */
  uint64_t total;    /* bytes of data: the sum of the lengths */
  uint64_t nmsgs;    /* data messages that follow the list (copy mode; else 0) */
} transfer_header;

typedef struct transfer_wire_range {
  uint64_t addr, len;
} transfer_wire_range;

/* Send list's handles and ranges (in this order) to `to`. Ranges must be
 * readable, len > 0, no wrap-around; in copy mode, with a GAS mapped (gas_current), inside
 * it (the data leaves before the receiver has checked the list). near: MPI reaches peer through shared memory
 * (share_near: the same host, and transfer_host_uses_shm), so long ranges go in pieces;
 * ANTHEAP_XFER_PLAN=whole turns pieces off (for comparisons). Returns 0, or:
 *   EINVAL / E2BIG / EOVERFLOW / ENOMEM  a list this side cannot send (a bad range or one
 *                outside its GAS, too many ranges or handles, no memory): the receiver is
 *                told and returns ECANCELED;
 *   ECONNREFUSED the receiver refused it; its reason (an errno code) in *refusal (may be NULL);
 *   ETIMEDOUT    no answer within the watch's timeout (transfer_set_watch).
 * MPI errors follow the communicator's error handler. */
int transfer_send(transfer_link to, transfer_mode mode, bool near, const transfer_list *list,
                  int *refusal);

/* Does MPI carry messages between two processes of one host through shared memory? True
 * unless the environment restricts Open MPI to other transports (OMPI_MCA_btl without vader
 * or sm, or UCX_TLS without a shared-memory transport), as the TCP benchmarks do. */
bool transfer_host_uses_shm(void);

/* How this process's transfers wait for the peer to arrive (the receiver for the list, the
 * sender for the answer): cap_ns 0 (the default) in MPI's blocking calls, which spin; else
 * polling with the idle back-off of idle.h, whose longest sleep is cap_ns (a worker passes
 * its job's cap: ranks that share cores leave them to the ranks that work). The data phase
 * always waits in MPI_Wait: both sides are then in the transfer, and MPI moves the bytes only
 * inside its calls. */
void transfer_set_idle_cap(uint64_t cap_ns);

/* What watches the waits for the peer (watch.h: a warning after ANTHEAP_WAIT_WARN, ETIMEDOUT
 * after ANTHEAP_WAIT_TIMEOUT); NULL (the default): nothing. The configuration must outlive
 * the transfers. A receiver that gives up has taken nothing; a sender that gives up leaves
 * what it had started sending with MPI (the receiver may still take it, and MPI may still read
 * its staging buffers, which stay allocated): after ETIMEDOUT from transfer_send, the pair
 * is out of step. */
struct watch_config;
void transfer_set_watch(const struct watch_config *cfg);

/* Ring the doorbell of `peer` (a rank of the links' communicator), called after the list, the
 * answer and an abort, which the peer may be asleep waiting for (src/job/bells.h); NULL (the
 * default): nothing rings, and those messages are sent with MPI_Send. */
void transfer_set_ring(void (*fn)(int peer));

/* Called by a receiver for every range of a transfer it takes, before anything lands there
 * (guard.h: pages this worker had handed over become its own again); NULL: nothing. */
void transfer_set_landing(void (*fn)(uintptr_t addr, size_t len));

/* Tell a receiver that the transfer it waits for will not come (err: why). Returns err. */
int transfer_send_abort(transfer_link to, int err);

/* Whether the receiver takes a transfer: 0, or the errno code it refuses it with. Sees the
 * sender, the mode and the handle words before anything is written. */
typedef int (*transfer_accept_fn)(void *ctx, int src, transfer_mode mode, const uint64_t *extra,
                                  uint32_t nextra);

/* How a receiver judges a transfer: accept (NULL: copy mode only, any handles) with its ctx,
 * after the list checks; the data lands at the same addresses of the GAS gas (NULL: the one
 * gas_map mapped). */
typedef struct transfer_policy {
  transfer_accept_fn accept;
  void *ctx;
  const gas_bounds *gas;
} transfer_policy;

/* What a receiver took: malloc'ed copies of the handles and the list (the caller frees them;
 * NULL when empty) and their lengths, and the sender's rank (set once a list has come). */
typedef struct transfer_receipt {
  uint64_t *extra;
  uint32_t nextra;
  gas_range *r;
  size_t n;
  int src;
} transfer_receipt;

/* Receive a transfer from `from` (its peer may be MPI_ANY_SOURCE), judged by policy (NULL: all
 * defaults), into *got. Returns 0, or, with nothing written and nothing returned (got's lists
 * NULL and empty):
 *   EINVAL   ranges outside the GAS, empty or overlapping (refused; the sender gets
 *            ECONNREFUSED and this code), or what accept refused with (its code);
 *   EPROTO   a list that breaks the protocol (refused, unless even its header is unreadable);
 *   ECANCELED the sender gave up;
 *   ENOMEM   no memory for the list (refused);
 *   ETIMEDOUT nothing came within the watch's timeout (transfer_set_watch). */
int transfer_recv(transfer_link from, const transfer_policy *policy, transfer_receipt *got);

/* If a transfer's list message is waiting (from anyone) on one of the nlinks links whose tags
 * start at base, base + TRANSFER_TAGS, ..., refuse it with err: 1 when one was refused (or a
 * stale answer or data message of those links dropped), else 0. For a worker that leaves the
 * job while others may still send to it. */
int transfer_refuse_pending(MPI_Comm comm, int base, int nlinks, int err);

#endif /* AH_WORKER_TRANSFER_H */

/* transfer.h: moving a list of GAS ranges from one worker to another, with no staging copy.
 *
 * A transfer is two MPI messages from sender to receiver, on the same communicator and tag:
 *   1. the list: a transfer_header, then `count` transfer_wire_range records (MPI_BYTE);
 *   2. the data: only when header.status == 0 and header.count > 0, the bytes of every range
 *      in list order, as ONE message sent from MPI_BOTTOM with an MPI_Type_create_hindexed
 *      type over the ranges' absolute addresses, and received the same way into the same
 *      addresses of the receiver's GAS.
 * The framing rule (a data message follows iff status == 0 and count > 0) depends on the
 * header alone, so a receiver that rejects a list's contents still knows whether to drain a
 * data message. Messages between one pair of ranks on one tag are ordered (MPI's
 * non-overtaking rule), so the data message is the next one from that sender on that tag.
 *
 * The receiver validates everything before writing a byte: header fields, list length, every
 * range inside its GAS, lengths > 0, no two ranges overlapping, the byte total, and the data
 * message's real size (from MPI_Mprobe). A rejected transfer writes nothing to the GAS: the
 * data message is drained into a scratch buffer (small messages) or received truncated into
 * a bounded one (large ones), so a bad sender can neither make the receiver write outside its
 * GAS nor leave a message behind that would confuse the next transfer.
 *
 * Both sides are blocking (MPI_Send / MPI_Mrecv). Byte order and struct layout are the
 * host's: all ranks are assumed to run the same build on the same architecture. Not
 * thread-safe for concurrent transfers between the same pair on the same tag.
 */
#ifndef AH_WORKER_TRANSFER_H
#define AH_WORKER_TRANSFER_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "worker/gas.h"

/* One range of GAS bytes: [addr, addr + len). */
typedef struct {
  uintptr_t addr;
  size_t len;
} gas_range;

/* Wire format (public so that tests can forge malformed transfers). */
#define TRANSFER_MAGIC 0x46584841u /* "AHXF" little-endian */
#define TRANSFER_VERSION 1u
/* The most ranges one transfer may name (a 256 MiB list); more is E2BIG at the sender and a
 * protocol error at the receiver. */
#define TRANSFER_MAX_RANGES ((uint64_t)1 << 24)
/* An MPI block is an int count of bytes: longer ranges are split into blocks of this size. */
#define TRANSFER_BLOCK_MAX ((size_t)1 << 30)
/* Rejected data messages up to this size are drained into a scratch buffer; larger ones are
 * received truncated into a buffer of this size (MPI_ERR_TRUNCATE, returned, not fatal). */
#define TRANSFER_DRAIN_MAX ((size_t)16 << 20)

typedef struct transfer_header {
  uint32_t magic;    /* TRANSFER_MAGIC */
  uint16_t version;  /* TRANSFER_VERSION */
  uint16_t reserved; /* 0 */
  int32_t status;    /* 0, or the sender's errno: it gave up, no list and no data follow */
  uint32_t reserved2;
  uint64_t count;    /* ranges in the list */
  uint64_t total;    /* bytes in the data message: the sum of the lengths */
} transfer_header;

typedef struct transfer_wire_range {
  uint64_t addr, len;
} transfer_wire_range;

/* Send the n ranges (in this order) and their bytes to peer. Every range must be readable
 * memory with len > 0 and no wrap-around; ranges may lie anywhere in the sender's memory (the
 * receiver checks them against its GAS). n == 0 sends the header only. Returns 0, or:
 *   EINVAL  r is NULL with n > 0, a range has len 0 or wraps around;
 *   E2BIG   more than TRANSFER_MAX_RANGES ranges;
 *   EOVERFLOW the total overflows or the ranges need more than INT_MAX MPI blocks;
 *   ENOMEM  no memory for the datatype's arrays.
 * On these errors the sender still sends a header carrying the error (status), so the
 * receiver returns ECANCELED instead of waiting for ever. MPI errors follow the
 * communicator's error handler (fatal by default). */
int transfer_send(MPI_Comm comm, int peer, int tag, const gas_range *r, size_t n);

/* Receive a transfer from peer (MPI_ANY_SOURCE allowed) with tag (MPI_ANY_TAG allowed): the
 * data lands at the same addresses in this process's GAS gas (NULL: the one gas_map mapped).
 * On success *r is a malloc'ed copy of the list in the sender's order (NULL when *n == 0; the
 * caller frees it) and *n its length. Returns 0, or, with *r = NULL, *n = 0 and nothing
 * written to the GAS:
 *   EINVAL   bad arguments (NULL r or n, no GAS; nothing is received), or a well-formed list
 *            that names memory this process may not write: a range outside the GAS, of
 *            length 0, or overlapping another (the data message is drained);
 *   EPROTO   a message that does not follow the protocol: bad magic or version (nothing more
 *            is received: the framing cannot be trusted), list length not matching count,
 *            too many ranges, total not matching the lengths or the data message's size (the
 *            data message, if the header announced one, is drained);
 *   ECANCELED the sender gave up (its error code was in the header; no data follows);
 *   ENOMEM   no memory for the list or the datatype (the data message is drained). */
int transfer_recv(MPI_Comm comm, int peer, int tag, gas_range **r, size_t *n,
                  const gas_bounds *gas);

#endif /* AH_WORKER_TRANSFER_H */

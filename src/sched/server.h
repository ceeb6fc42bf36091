/* server.h: the scheduler's event server (Myrmics section 5.2), free of I/O.
 *
 * It consumes decoded messages (sched_server_handle) and emits messages through a transport
 * callback; it never calls MPI itself, so the same code runs under MPI (src/sched/mpi_main)
 * and inside the in-process simulator (src/sim). A request about a local region or address
 * is served at once; otherwise it goes to the child that the routing tries name, or to the
 * parent; the root answers unknown IDs and pointers with an error that travels back to the
 * worker. Pages (1 MiB) and region IDs flow down in chunks, refilled on demand; requests
 * wait (parked) while a refill is on its way. Multi-step operations (a region created below
 * its parent's scheduler, freeing a region with descendants on other schedulers, packing such
 * a region) are events with saved state. At shutdown everything returns to the root, which
 * checks that nothing is missing and reports (sched_config.report): one line, a table of
 * every scheduler's statistics, a CSV file.
 */
#ifndef AH_SCHED_SERVER_H
#define AH_SCHED_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sched/tree.h"

typedef struct sched_server sched_server;

typedef struct sched_transport {
  /* Deliver len bytes to rank `to` (a parent, child or served worker of this scheduler). */
  void (*send)(void *ctx, int from, int to, const void *msg, size_t len);
  void *ctx;
} sched_transport;

/* What the root prints at shutdown. A loss ("MISSING") is printed whatever the choice. */
typedef enum sched_report {
  SCHED_REPORT_TABLE = 0, /* the line below, then a table of every scheduler's row */
  SCHED_REPORT_SUMMARY,   /* one line: nothing lost (or MISSING), requests served, schedulers */
  SCHED_REPORT_OFF,       /* nothing */
} sched_report;

typedef struct sched_config {
  uintptr_t gas_base;
  size_t gas_size;
  size_t boot_pages;      /* pages each scheduler gets at boot (times its subtree size) */
  uint32_t boot_ids;      /* region IDs likewise */
  size_t refill_pages;    /* pages asked for when a scheduler runs out */
  uint32_t refill_ids;
  size_t ceiling_pages;   /* whole free pages above this go back to the parent (0: never) */
  size_t high_watermark;  /* slabs a region starts with (region layer) */
  size_t low_watermark;
  unsigned load_threshold; /* report subtree load upstream when it moved this much */
  FILE *log;              /* errors and the shutdown report (stderr if NULL) */
  sched_report report;    /* root: the shutdown report (default: the line and the table) */
  bool quiet;             /* no table, whatever report says (the line stays) */
  const char *stats_csv;  /* root: write every scheduler's statistics row here at shutdown */
  uint64_t (*peak_rss_kib)(void); /* this rank's peak resident memory, for its row (or NULL) */
  uint32_t reply_words;   /* most tail words of one pack reply (0: PROTO_MAX_TAIL; even; tests
                           * set it small to see packs continue over several replies) */
} sched_config;

typedef struct sched_stats {
  uint64_t served, forwarded, replies_routed, malformed, parked;
  uint64_t pages_granted, pages_received, ids_granted, ids_received, pages_given_back;
  uint64_t regions_created, events;
  uint64_t placed_by_load; /* regions sent to the least-loaded child (requester not below) */
  uint64_t leased_slabs, returned_leases; /* slabs leased to workers' caches, and handed back */
  /* Traffic: messages and bytes received (a parked request replayed counts once) and sent. */
  uint64_t msgs_in, msgs_out, bytes_in, bytes_out;
} sched_stats;

sched_config sched_config_default(void);

/* A server for scheduler rank `me` of tree. */
int sched_server_create(sched_server **out, const sched_tree *tree, int me,
                        const sched_config *cfg, sched_transport tx);
void sched_server_destroy(sched_server *s);
/* The root hands out the boot chunks; call once on every scheduler before any message. */
void sched_server_boot(sched_server *s);
/* One message from rank `from`. Malformed input is counted, logged and dropped (EPROTO). */
int sched_server_handle(sched_server *s, int from, const void *msg, size_t len);
/* True once this scheduler has returned everything (the root: and checked the totals). */
bool sched_server_done(const sched_server *s);
/* At the root after shutdown: 0 when every page and ID came back, else -1. */
int sched_server_conservation(const sched_server *s);
void sched_server_get_stats(const sched_server *s, sched_stats *st);

#endif

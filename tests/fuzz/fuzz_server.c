/* fuzz_server.c: libFuzzer target on the wire decoder (src/proto/proto.c) and the scheduler's
 * event server (src/sched/server.c and what it calls), fed hostile bytes.
 *
 * Each input (format in fuzz_input.h) builds a fresh job in-process, as src/sim does: a tree
 * of sched_servers and a transport that queues every message and delivers it, in order,
 * until the job is quiet. The whole input goes through proto_decode, then to a leaf as one
 * message from a worker; then its records, one message each, from varied source ranks; then,
 * if asked, every worker finalizes. Any of these is a finding (abort, so that libFuzzer keeps
 * the input): a sanitizer report or assertion, more than FUZZ_MAX_MESSAGES deliveries (a
 * storm), a server sending to a rank that is not its neighbour or sending bytes that do not
 * decode, and, when only workers spoke (schedulers trust each other, workers nobody), a
 * shutdown that does not finish or does not get every page and ID back to the root.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "proto/proto.h"
#include "sched/server.h"
#include "sched/tree.h"

#define FUZZ_MAX_MESSAGES 200000u
#define FUZZ_MAX_RANKS 8

/* ---- the transport: one FIFO of every message in flight ---- */
typedef struct qmsg {
  struct qmsg *next;
  int from, to;
  size_t len;
  unsigned char data[];
} qmsg;

typedef struct job {
  sched_tree tree;
  sched_server *servers[FUZZ_MAX_RANKS];
  qmsg *head, **tail;
  uint64_t delivered;
  bool hostile_sched; /* a record came from a scheduler rank: shutdown checks are off */
} job;

static FILE *devnull;
static bool trace; /* FUZZ_TRACE set: every delivery on stderr (replaying one input) */

static void die(const char *what, int from, int to) {
  fprintf(stderr, "fuzz_server: %s (from %d to %d)\n", what, from, to);
  abort();
}

static bool neighbours(const sched_tree *t, int a, int b) {
  return t->parent[a] == b || t->parent[b] == a;
}

static void push(job *J, int from, int to, const void *data, size_t len) {
  qmsg *m = malloc(sizeof *m + len);
  if (!m) abort();
  m->next = NULL;
  m->from = from;
  m->to = to;
  m->len = len;
  if (len) memcpy(m->data, data, len);
  *J->tail = m;
  J->tail = &m->next;
}

/* What a server sends must go to a neighbour and decode. */
static void transport_send(void *ctx, int from, int to, const void *data, size_t len) {
  job *J = ctx;
  if (to < 0 || to >= J->tree.nranks || !neighbours(&J->tree, from, to))
    die("server sent to a rank that is not its neighbour", from, to);
  proto_msg m;
  if (proto_decode(data, len, &m) != 0) die("server sent a message that does not decode", from, to);
  push(J, from, to, data, len);
}

static void trace_msg(const qmsg *m) {
  proto_msg pm;
  int rc = proto_decode(m->data, m->len, &pm);
  if (rc == EPROTO) {
    fprintf(stderr, "trace: %d -> %d: %zu undecodable bytes\n", m->from, m->to, m->len);
    return;
  }
  const proto_header *h = pm.h;
  fprintf(stderr, "trace: %d -> %d: %s (rc %d) req %lu origin %d dest %d status %d sched %d ntail %u\n",
          m->from, m->to, proto_type_name(h->type), rc, (unsigned long)h->req, h->origin, h->dest,
          h->status, h->sched, pm.ntail);
}

/* Deliver until quiet; a worker drops what it gets (it was checked on the way out). */
static void deliver(job *J) {
  while (J->head) {
    qmsg *m = J->head;
    J->head = m->next;
    if (!J->head) J->tail = &J->head;
    if (++J->delivered > FUZZ_MAX_MESSAGES) die("message storm", m->from, m->to);
    if (trace) trace_msg(m);
    if (m->to >= 0 && m->to < J->tree.nranks && J->tree.is_sched[m->to])
      sched_server_handle(J->servers[m->to], m->from, m->data, m->len);
    free(m);
  }
}

/* ---- the job's life ---- */
static int job_start(job *J, const sched_config *cfg, bool tree) {
  memset(J, 0, sizeof *J);
  J->tail = &J->head;
  int rc = tree ? sched_tree_heap(&J->tree, 3, 2, 4) : sched_tree_heap(&J->tree, 1, 2, 2);
  if (rc) return rc;
  sched_transport tx = {transport_send, J};
  for (int r = 0; r < J->tree.nsched; r++)
    if (sched_server_create(&J->servers[r], &J->tree, r, cfg, tx)) return ENOMEM;
  for (int r = 0; r < J->tree.nsched; r++) sched_server_boot(J->servers[r]);
  deliver(J);
  return 0;
}

static void job_end(job *J) {
  while (J->head) {
    qmsg *m = J->head;
    J->head = m->next;
    free(m);
  }
  for (int r = 0; r < J->tree.nsched; r++) sched_server_destroy(J->servers[r]);
  sched_tree_free(&J->tree);
}

static void finalize_all(job *J) {
  unsigned char buf[sizeof(proto_header)];
  for (int w = J->tree.nsched; w < J->tree.nranks; w++) {
    size_t len = proto_build(buf, sizeof buf, MSG_FINALIZE, 1, w, PROTO_NO_DEST, 0, -1, NULL,
                             NULL, 0);
    push(J, w, J->tree.parent[w], buf, len);
  }
  deliver(J);
  if (J->hostile_sched) return;
  for (int r = 0; r < J->tree.nsched; r++)
    if (!sched_server_done(J->servers[r])) die("shutdown never finished", r, -1);
  if (sched_server_conservation(J->servers[J->tree.root]) != 0)
    die("the root did not get every page and ID back", J->tree.root, -1);
}

/* ---- records ---- */
static int natural_peer(const sched_tree *t, int from) {
  if (from < 0 || from >= t->nranks) return t->root;
  if (t->parent[from] >= 0) return t->parent[from];
  for (int c = t->first_child[from]; c >= 0; c = t->next_sibling[c])
    if (t->is_sched[c]) return c;
  return t->root; /* a lone root: to itself, as nobody would */
}

static void repair(unsigned char *msg, size_t len, int from, const sched_tree *t) {
  if (len < sizeof(proto_header)) return;
  proto_header h;
  memcpy(&h, msg, sizeof h);
  h.magic = PROTO_MAGIC;
  h.version = PROTO_VERSION;
  h.length = (uint32_t)(len - sizeof h);
  if (from >= 0 && from < t->nranks && !t->is_sched[from]) {
    h.origin = from;
    h.dest = PROTO_NO_DEST;
    h.sched = -1;
  }
  memcpy(msg, &h, sizeof h);
}

static void feed_record(job *J, uint8_t sel, unsigned char *msg, size_t len) {
  const sched_tree *t = &J->tree;
  int from = (int)(sel & 0x0f) % (t->nranks + 2) - 1;
  int to = (sel & FUZZ_SEL_NATURAL) ? natural_peer(t, from) : (int)((sel >> 4) & 3) % t->nsched;
  if (from >= 0 && from < t->nranks && t->is_sched[from]) J->hostile_sched = true;
  if (sel & FUZZ_SEL_REPAIR) repair(msg, len, from, t);
  push(J, from, to, msg, len);
  deliver(J);
}

static void feed_records(job *J, const uint8_t *data, size_t size) {
  size_t at = 0;
  unsigned char *buf = NULL;
  while (at + 3 <= size) {
    uint8_t sel = data[at];
    size_t len = (size_t)data[at + 1] | (size_t)data[at + 2] << 8;
    at += 3;
    if (len > size - at) len = size - at;
    unsigned char *nb = realloc(buf, len ? len : 1); /* a private, exactly sized copy */
    if (!nb) abort();
    buf = nb;
    memcpy(buf, data + at, len);
    at += len;
    feed_record(J, sel, buf, len);
  }
  free(buf);
}

/* ---- (1) the decoder alone ---- */
static void fuzz_decode(const uint8_t *data, size_t size) {
  proto_msg m;
  int rc = proto_decode(data, size, &m);
  if (rc == EPROTO) return;
  size_t fixed = proto_fixed_size(m.h->type);
  if (sizeof *m.h + fixed + (size_t)m.ntail * 8 != size || m.ntail > PROTO_MAX_TAIL)
    die("decoder accepted a message whose sizes do not add up", -1, -1);
  if (rc != 0 && rc != EINVAL && rc != E2BIG) die("decoder returned an undocumented errno", -1, -1);
  (void)proto_type_name(m.h->type);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!devnull) {
    if (!(devnull = fopen("/dev/null", "w"))) abort();
    trace = getenv("FUZZ_TRACE") != NULL;
  }
  fuzz_decode(data, size);
  if (size < 1) return 0;
  sched_config cfg = sched_config_default();
  cfg.log = devnull;
  cfg.quiet = true;
  job J;
  if (job_start(&J, &cfg, data[0] & FUZZ_SHAPE_TREE)) abort();
  /* (2) the whole input, as one message from the first worker to its leaf */
  int w = J.tree.nsched;
  push(&J, w, J.tree.parent[w], data, size);
  deliver(&J);
  feed_records(&J, data + 1, size - 1);
  if (data[0] & FUZZ_SHAPE_FINALIZE) finalize_all(&J);
  job_end(&J);
  return 0;
}

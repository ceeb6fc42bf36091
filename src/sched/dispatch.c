/* dispatch.c: a message's way through a scheduler, by the table of message kinds
 * (proto/kinds.def): who may send it, whether it is passed on towards its destination, routed
 * by its region or address (served here, forwarded to a child or the parent, or answered as
 * unknown), or handled here; and the handlers that only adapt an event or trade entry to the
 * table's signature. Main entry: sched_server_handle. */
#include <errno.h>
#include <stdlib.h>

#include "sched/server_internal.h"

/* ---- handlers of the table that hand over to events.c, move.c, trade.c ---- */
void serve_rfree(sched_server *s, int from, const proto_msg *m) { (void)from; event_rfree(s, m); }
void serve_pack(sched_server *s, int from, const proto_msg *m) { (void)from; event_pack(s, m); }
void serve_packv(sched_server *s, int from, const proto_msg *m) { (void)from; event_packv(s, m); }
void on_reply(sched_server *s, int from, const proto_msg *m) { (void)from; event_on_reply(s, m); }
void on_created(sched_server *s, int from, const proto_msg *m) {
  (void)from;
  event_on_created(s, m);
}
void on_unlink(sched_server *s, int from, const proto_msg *m) { (void)from; event_on_unlink(s, m); }
void on_grant(sched_server *s, int from, const proto_msg *m) { (void)from; trade_on_grant(s, m); }

/* A region to make below us, whose parent lives at a scheduler above us. */
void on_create_below(sched_server *s, int from, const proto_msg *m) {
  const proto_create *c = m->fixed;
  int ps = c->parent_sched;
  if (ps < 0 || ps >= s->tree->nranks || ps == s->me || !s->tree->is_sched[ps] ||
      !sched_tree_in_subtree(s->tree, ps, s->me)) { /* must come from above us */
    s->st.malformed++;
    srv_log(s, "CREATE_BELOW naming scheduler %d as the parent's: dropped", ps);
    return;
  }
  place_region(s, from, m, c->parent, c->level_hint, ps);
}

/* A child's new count of the regions in its subtree. */
void on_load(sched_server *s, int from, const proto_msg *m) {
  int slot = srv_child_slot(s, from);
  if (slot >= 0) s->child_load[slot] = ((const proto_load *)m->fixed)->regions;
  srv_report_load(s);
}

/* A worker is done (a second FINALIZE from it is malformed: sender_ok). */
void on_finalize(sched_server *s, int from, const proto_msg *m) {
  (void)m;
  if (!s->finalized) {
    s->finalized = calloc(1, sizeof(trie));
    if (s->finalized) trie_init(s->finalized, 32, trie_heap_source());
  }
  if (s->finalized) trie_insert(s->finalized, (uint64_t)from, 1);
  trade_on_finalize(s);
}

/* ---- the table ---- */
typedef void (*kind_handler)(sched_server *s, int from, const proto_msg *m);

static const kind_handler handlers[MSG_TYPE_END] = {
#define PROTO_KIND(NAME, fixed, tail, check, route, key, by, handler) [MSG_##NAME] = handler,
#include "proto/kinds.def"
};

/* ---- routing ---- */
/* The route a request takes: by the region it names, by the address, or by its leased slab. */
static route route_of(const sched_server *s, const proto_msg *m) {
  uint64_t key = proto_route_key(m);
  switch (proto_route_of(m->h->type)) {
    case PROTO_ROUTE_REGION: return route_region(s, (rid_t)key);
    case PROTO_ROUTE_ADDR: return route_addr(s, (uintptr_t)key);
    case PROTO_ROUTE_LEASE: return route_lease(s, (uintptr_t)key);
    default: return (route){ROUTE_LOCAL, -1}; /* gathered: the first scheduler serves it */
  }
}

static void handle_request(sched_server *s, int from, const proto_msg *m) {
  route r = route_of(s, m);
  switch (r.kind) {
    case ROUTE_LOCAL:
      s->st.served++;
      handlers[m->h->type](s, from, m);
      break;
    case ROUTE_CHILD: case ROUTE_PARENT:
      s->st.forwarded++;
      srv_forward(s, r.kind == ROUTE_CHILD ? r.child : s->tree->parent[s->me], m);
      break;
    case ROUTE_UNKNOWN: { /* by ID: no such region; by address: no such object */
      bool by_id = proto_route_of(m->h->type) == PROTO_ROUTE_REGION;
      srv_answer(s, m, by_id ? ENOENT : EINVAL, NULL, 0);
      break;
    }
  }
}

/* Pass a reply or notification one hop on towards its destination (one that names none is
 * malformed: there is nowhere to pass it). */
static void pass_on(sched_server *s, const proto_msg *m) {
  if (m->h->dest < 0) {
    s->st.malformed++;
    srv_log(s, "%s without a destination: dropped", proto_type_name(m->h->type));
    return;
  }
  s->st.replies_routed++;
  srv_forward(s, sched_tree_next_hop(s->tree, s->me, m->h->dest), m);
}

/* Who may send what: a worker only its own requests (once finalized, nothing), a scheduler
 * only as our parent or child; ranks named in the header must exist, and an origin is a
 * worker's (the one whose request it is: a scheduler's own requests name it in sched). */
static bool sender_ok(sched_server *s, int from, const proto_msg *m) {
  const sched_tree *t = s->tree;
  const proto_header *h = m->h;
  int n = t->nranks;
  bool worker_kind = proto_by_worker(h->type);
  if (from < 0 || from >= n) return false;
  if (h->dest != PROTO_NO_DEST && (h->dest < 0 || h->dest >= n)) return false;
  if (h->origin != -1 && (h->origin < 0 || h->origin >= n || t->is_sched[h->origin]))
    return false;
  if (h->sched != -1 && (h->sched < 0 || h->sched >= n || !t->is_sched[h->sched])) return false;
  if (t->is_sched[from]) /* a forwarded request must say whom the answer goes to */
    return (t->parent[from] == s->me || t->parent[s->me] == from) &&
           (!worker_kind || h->origin >= 0 || h->sched >= 0);
  if (t->parent[from] != s->me || !worker_kind || h->origin != from ||
      h->dest != PROTO_NO_DEST || h->sched != -1)
    return false;
  return !s->finalized || !trie_find(s->finalized, (uint64_t)from);
}

int sched_server_handle(sched_server *s, int from, const void *msg, size_t len) {
  if (!s->replaying) {
    s->st.msgs_in++;
    s->st.bytes_in += len;
  }
  proto_msg m;
  int rc = proto_decode(msg, len, &m);
  bool readable = rc != EPROTO && sender_ok(s, from, &m);
  if (readable && rc && !s->tree->is_sched[from]) {
    /* a worker's request that reads well but asks the impossible: it waits for an answer */
    srv_answer(s, &m, rc, NULL, 0);
    return rc;
  }
  if (!readable || rc) {
    s->st.malformed++;
    srv_log(s, "malformed message (%zu bytes) from rank %d dropped", len, from);
    return EPROTO;
  }
  switch (proto_route_of(m.h->type)) {
    case PROTO_ROUTE_DEST:
      if (m.h->dest == s->me) handlers[m.h->type](s, from, &m);
      else pass_on(s, &m);
      break;
    case PROTO_ROUTE_HERE: handlers[m.h->type](s, from, &m); break;
    default: handle_request(s, from, &m); break;
  }
  return 0;
}

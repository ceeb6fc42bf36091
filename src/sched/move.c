/* move.c: what a move asks of the schedulers (Myrmics 5.3, and the hand-over rule of
 * include/antheap.h): the ranges of every region (with its descendants) and object it names,
 * gathered from every scheduler that holds a part into one sorted, coalesced reply, and the
 * hand-over of those regions from the worker that asks to the one that receives.
 *
 * A hand-over runs in two rounds so that it happens whole or not at all: the first checks
 * (every region of every named subtree, and the region of every named object, held by the
 * asking worker) and packs; only when every part has answered without an error does the
 * second round hand the regions over (PACKV_COMMIT), and only then does the worker hear back.
 * A move whose regions all live on the worker's leaf takes no message between schedulers:
 * both rounds run on the spot. Main entries: event_packv, event_pack, move_on_reply. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/server_internal.h"
#include "sched/words.h"

/* What one scheduler is asked to do with its share of a move. */
typedef struct {
  uint32_t flags; /* PACKV_* */
  int32_t peer;   /* PACKV_HANDOVER: the receiver; PACKV_HANDBACK: who refused the move */
  int32_t origin; /* the worker that asks */
} move_ask;

static bool hands(const move_ask *a) { return (a->flags & (PACKV_HANDOVER | PACKV_HANDBACK)) != 0; }

/* ---- sorting and coalescing the ranges ---- */

static int cmp_pair(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Sort {addr, len} pairs and merge those that touch; returns the new word count. */
static size_t coalesce_pairs(uint64_t *w, size_t nwords) {
  size_t n = nwords / 2, out = 0;
  if (n > 1) qsort(w, n, 2 * sizeof *w, cmp_pair);
  for (size_t i = 0; i < n; i++) {
    uint64_t a = w[2 * i], l = w[2 * i + 1];
    if (out && w[2 * (out - 1)] + w[2 * (out - 1) + 1] >= a) {
      uint64_t end = a + l, prev_end = w[2 * (out - 1)] + w[2 * (out - 1) + 1];
      if (end > prev_end) w[2 * (out - 1) + 1] = end - w[2 * (out - 1)];
    } else {
      w[2 * out] = a;
      w[2 * out + 1] = l;
      out++;
    }
  }
  return 2 * out;
}

/* The ranges of a pack, sorted and merged, to dest: in as many replies as they need, each of
 * at most reply_words words (whole pairs), every one but the last marked PROTO_REPLY_MORE. A
 * pack of any size is answered so: it never fails for its size. */
static void pack_reply(sched_server *s, int32_t dest, uint64_t req, int32_t origin, words *b) {
  b->n = coalesce_pairs(b->w, b->n);
  size_t off = 0, chunk = s->cfg.reply_words;
  do {
    size_t k = b->n - off < chunk ? b->n - off : chunk;
    bool more = off + k < b->n;
    /* (an empty region packs to no ranges: no words, and b->w may be NULL) */
    srv_reply_part(s, dest, req, origin, 0, k ? b->w + off : NULL, (uint32_t)k,
                   more ? PROTO_REPLY_MORE : 0);
    off += k;
  } while (off < b->n);
}

/* ---- the parts of a move that live elsewhere: one PACKV per next hop ----
 * A move names regions and objects; those held by other schedulers are gathered per next hop
 * (a child, or the parent) and each hop gets one PACKV for all of them, so packing a region
 * with a thousand remote descendants costs a message per scheduler it touches, not one per
 * region. Two kinds of parts never share a message: the worker's own names must exist (an
 * unknown one fails the move), while remote children found in the trie may have been freed
 * meanwhile (their UNLINK still on its way) and are skipped then (PACKV_SKIP_GONE). */
typedef struct {
  int rank;          /* the next hop */
  bool lenient;      /* PACKV_SKIP_GONE parts */
  words rids, addrs; /* one rid or address per word; a lenient part's parents in addrs */
} pack_hop;

typedef struct {
  pack_hop *hop;
  size_t nhops, cap;
  int status; /* the first error: a name that routes nowhere, a holder check, no memory */
} pack_parts;

/* The words PACKV messages carry at most: well within a scheduler's output buffer. */
#define PACKV_CHUNK 65536u

static void fail_part(pack_parts *p, int rc) {
  if (!p->status) p->status = rc;
}

/* The batch for (rank, lenient); NULL when out of memory (recorded). At most two per child
 * and two for the parent. */
static pack_hop *hop_for(pack_parts *p, bool lenient, int rank) {
  for (size_t i = 0; i < p->nhops; i++)
    if (p->hop[i].rank == rank && p->hop[i].lenient == lenient) return &p->hop[i];
  if (p->nhops == p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 8;
    pack_hop *h = realloc(p->hop, cap * sizeof *h);
    if (!h) {
      fail_part(p, ENOMEM);
      return NULL;
    }
    p->hop = h;
    p->cap = cap;
  }
  pack_hop *h = &p->hop[p->nhops++];
  *h = (pack_hop){.rank = rank, .lenient = lenient};
  return h;
}

static int hop_rank(const sched_server *s, route r) {
  return r.kind == ROUTE_CHILD ? r.child : s->tree->parent[s->me];
}

static void push_word(pack_parts *p, words *v, uint64_t x) {
  if (words_push1(v, x)) fail_part(p, ENOMEM);
}

/* A region that is not here: to its hop. A lenient part (a remote child of `parent`) only
 * ever goes down (a remote child lives below its parent's scheduler); one that routes up or
 * nowhere is gone and skipped. */
static void part_region(sched_server *s, pack_parts *p, bool lenient, rid_t rid, rid_t parent) {
  route r = route_region(s, rid);
  bool sendable = r.kind == ROUTE_CHILD || (r.kind == ROUTE_PARENT && !lenient);
  if (!sendable) {
    if (!lenient) fail_part(p, ENOENT);
    return;
  }
  pack_hop *h = hop_for(p, lenient, hop_rank(s, r));
  if (h) push_word(p, &h->rids, rid);
  if (h && lenient) push_word(p, &h->addrs, parent);
}

static void part_object(sched_server *s, pack_parts *p, uintptr_t addr, route r) {
  if (r.kind != ROUTE_CHILD && r.kind != ROUTE_PARENT) {
    fail_part(p, EINVAL);
    return;
  }
  pack_hop *h = hop_for(p, false, hop_rank(s, r));
  if (h) push_word(p, &h->addrs, addr);
}

/* Send one hop's parts as PACKV messages for event e, asking what a asks; each one sent is a
 * reply to wait for. A lenient part's messages carry each child's parent after the children
 * (proto.h), in chunks of half the size. */
static void send_hop(sched_server *s, event *e, pack_hop *h, const move_ask *a) {
  uint32_t flags = (a->flags & ~PACKV_SKIP_GONE) | (h->lenient ? PACKV_SKIP_GONE : 0);
  size_t nr = h->rids.n, no = h->addrs.n, r = 0, o = 0;
  size_t chunk = h->lenient ? PACKV_CHUNK / 2 : PACKV_CHUNK;
  size_t most = nr + no < PACKV_CHUNK ? nr + no : PACKV_CHUNK;
  uint64_t *tail = malloc(most * sizeof *tail);
  while (tail && (r < nr || o < no)) {
    uint32_t cr = (uint32_t)(nr - r < chunk ? nr - r : chunk);
    uint32_t co = h->lenient ? cr : (uint32_t)(no - o < chunk - cr ? no - o : chunk - cr);
    if (cr) memcpy(tail, h->rids.w + r, cr * sizeof *tail);
    if (co) memcpy(tail + cr, h->addrs.w + o, co * sizeof *tail);
    proto_packv body = {.nreg = cr, .nobj = h->lenient ? 0 : co, .flags = flags, .peer = a->peer};
    size_t len = proto_build(s->out, s->outcap, MSG_PACKV, e->id, e->origin, PROTO_NO_DEST, 0,
                             s->me, &body, tail, cr + co);
    AH_ASSERT(len > 0);
    srv_send(s, h->rank, s->out, len);
    e->remaining++;
    r += cr;
    o += co;
  }
  if (!tail && !e->status) e->status = ENOMEM;
  free(tail);
}

/* Send every hop's parts for event *e (made here from m when there are parts and no event
 * yet; nothing is sent once a part has failed) and free them. */
static void send_parts(sched_server *s, const proto_msg *m, unsigned type, pack_parts *p,
                       const move_ask *a, event **e) {
  for (size_t i = 0; i < p->nhops; i++) {
    pack_hop *h = &p->hop[i];
    if (!p->status && !*e) *e = event_new(s, type, m, 0);
    if (!*e) fail_part(p, ENOMEM);
    if (!p->status) send_hop(s, *e, h, a);
    free(h->rids.w);
    free(h->addrs.w);
  }
  free(p->hop);
  *p = (pack_parts){.status = p->status};
}

/* ---- this scheduler's share ---- */

/* May the asking worker move (or hand back) the local subtree under rid? The root region
 * belongs to every worker: it can be packed, never handed over. */
static int check_region(sched_server *s, const move_ask *a, rid_t rid) {
  if (hands(a) && rid == REGION_ROOT) return EPERM;
  if ((a->flags & PACKV_OWNED) && rid == REGION_ROOT) return EINVAL; /* never freed */
  if (a->flags & PACKV_HANDBACK) return region_check_handed(s->layer, rid, a->peer, a->origin);
  return region_check_subtree(s->layer, rid, a->origin);
}

/* Local region rid: checked (first round) or handed over (commit), its ranges into b unless
 * PACKV_NO_RANGES; its remote children join the lenient parts. 0 or an errno code. */
static int local_region(sched_server *s, const move_ask *a, rid_t rid, words *b, pack_parts *p) {
  bool commit = (a->flags & PACKV_COMMIT) != 0;
  int rc = commit ? 0 : check_region(s, a, rid);
  rid_t *kids = NULL;
  size_t n = 0;
  if (!rc) rc = kids_under(s, rid, &kids, &n); /* before the hand-over: ENOMEM changes nothing */
  if (!rc && commit)
    rc = region_hand_subtree(s->layer, rid, a->flags & PACKV_HANDBACK ? a->origin : a->peer);
  size_t nranges;
  if (!rc && (a->flags & PACKV_OWNED))
    rc = region_pack_owned(s->layer, rid, words_push_range, b, &nranges);
  else if (!rc && !(a->flags & PACKV_NO_RANGES))
    rc = region_pack(s->layer, &rid, 1, NULL, 0, words_push_range, b, &nranges);
  if (rc) {
    free(kids);
    return rc;
  }
  for (size_t i = 0; i < n; i++) part_region(s, p, true, kids[2 * i], kids[2 * i + 1]);
  free(kids);
  return 0;
}

/* A local object: its start (an interior pointer names no object), in a region the asking
 * worker holds. */
static int local_object(sched_server *s, const move_ask *a, uintptr_t addr, words *b) {
  rid_t rid;
  uintptr_t start;
  size_t size;
  int rc = region_query(s->layer, addr, &rid, &start, &size);
  if (!rc && start != addr) rc = EINVAL;
  if (!rc) rc = region_check_holder(s->layer, rid, a->origin);
  if (!rc && !(a->flags & PACKV_NO_RANGES) && words_push2(b, start, size)) rc = ENOMEM;
  return rc;
}

/* This scheduler's share of the PACKV m, asked as a says: its own regions and objects into b,
 * the rest into parts. A commit names regions only: objects were checked in the first round
 * and change no holder. */
static void packv_here(sched_server *s, const proto_msg *m, const move_ask *a, words *b,
                       pack_parts *p) {
  const proto_packv *v = m->fixed;
  bool lenient = (v->flags & PACKV_SKIP_GONE) != 0;
  for (uint32_t i = 0; i < v->nreg; i++) {
    rid_t rid = (rid_t)m->tail[i], expect = lenient ? (rid_t)m->tail[v->nreg + i] : REGION_NONE, up;
    if (!region_exists(s->layer, rid)) {
      part_region(s, p, lenient, rid, expect);
      continue;
    }
    if (lenient && (region_get_parent(s->layer, rid, &up) || up != expect))
      continue; /* a freed child's ID, given to another region meanwhile: the child is gone */
    int rc = local_region(s, a, rid, b, p);
    if (rc) fail_part(p, rc);
  }
  for (uint32_t i = 0; !(a->flags & PACKV_COMMIT) && i < v->nobj; i++) {
    uintptr_t addr = (uintptr_t)m->tail[v->nreg + i];
    route r = route_addr(s, addr);
    if (r.kind != ROUTE_LOCAL) {
      part_object(s, p, addr, r);
      continue;
    }
    int rc = local_object(s, a, addr, b);
    if (rc) fail_part(p, rc);
  }
}

/* ---- the rounds ---- */

/* Hand the event the ranges gathered so far (it owns them now). */
static void event_keep(event *e, words *b) {
  e->ranges = b->w;
  e->nranges = b->n;
  e->cap = b->cap;
}

/* The commit round of hand-over e: this scheduler's regions now, the parts elsewhere by
 * message (e->remaining counts them). It cannot fail unless memory runs out: the first round
 * checked every region, and only their holder, who waits for this reply, could change them. */
static void commit_round(sched_server *s, event *e) {
  proto_msg m;
  if (proto_decode(e->request, e->request_len, &m)) {
    e->status = EPROTO;
    return;
  }
  const proto_packv *v = m.fixed;
  move_ask a = {v->flags | PACKV_COMMIT | PACKV_NO_RANGES, v->peer, m.h->origin};
  words none = {0};
  pack_parts p = {0};
  packv_here(s, &m, &a, &none, &p);
  free(none.w);
  send_parts(s, &m, MSG_PACKV, &p, &a, &e);
  if (p.status) {
    srv_log(s, "hand-over to worker %d by worker %d failed half-way (%d)", a.peer, a.origin,
            p.status);
    if (!e->status) e->status = p.status;
  }
}

/* Every part of event e has answered: commit a hand-over that passed its checks, or answer. */
static void move_advance(sched_server *s, event *e) {
  if (!e->status && e->phase == 1) {
    e->phase = 2;
    commit_round(s, e);
    if (e->remaining > 0) return;
  }
  if (e->status) {
    srv_reply(s, e->reply_to, e->req, e->origin, e->status, NULL, 0);
  } else {
    words b = {e->ranges, e->nranges, e->cap};
    pack_reply(s, e->reply_to, e->req, e->origin, &b);
    e->ranges = b.w;
  }
  event_drop(s, e);
}

/* After this scheduler's share: answer at once (no parts, no hand-over), or let the event
 * wait for its parts and rounds. */
static void pack_finish(sched_server *s, const proto_msg *m, pack_parts *p, words *b, event *e) {
  if (!e) {
    if (p->status) srv_answer(s, m, p->status, NULL, 0);
    else pack_reply(s, srv_reply_dest(m), m->h->req, m->h->origin, b);
    free(b->w);
    return;
  }
  if (!e->status) e->status = p->status;
  event_keep(e, b);
  if (e->remaining == 0) move_advance(s, e);
}

void event_pack(sched_server *s, const proto_msg *m) {
  move_ask a = {0, PROTO_NO_DEST, m->h->origin};
  rid_t rid = ((const proto_rid *)m->fixed)->rid;
  words b = {0};
  pack_parts p = {0};
  int rc = local_region(s, &a, rid, &b, &p);
  if (rc) fail_part(&p, rc);
  event *e = NULL;
  send_parts(s, m, MSG_PACK, &p, &a, &e);
  pack_finish(s, m, &p, &b, e);
}

/* A worker's own PACKV (not a part of another scheduler's): only the flags a worker may set,
 * and a peer that is another worker. */
static int worker_ask_ok(const sched_server *s, const move_ask *a) {
  if (a->flags & ~PACKV_WORKER_FLAGS) return EINVAL;
  if (hands(a) && (a->peer >= s->tree->nranks || s->tree->is_sched[a->peer] ||
                   a->peer == a->origin))
    return EINVAL;
  return 0;
}

/* A hand-over's event, made before its first round so that the commit round can follow:
 * keeps a copy of the worker's request. NULL when out of memory. */
static event *handover_event(sched_server *s, const proto_msg *m) {
  event *e = event_new(s, MSG_PACKV, m, 0);
  if (!e) return NULL;
  e->request_len = sizeof *m->h + m->h->length;
  e->request = malloc(e->request_len);
  if (!e->request) {
    event_drop(s, e);
    return NULL;
  }
  memcpy(e->request, m->h, e->request_len);
  e->phase = 1;
  return e;
}

void event_packv(sched_server *s, const proto_msg *m) {
  const proto_packv *v = m->fixed;
  move_ask a = {v->flags, v->peer, m->h->origin};
  bool first = m->h->sched < 0; /* the worker's own request (a part names the scheduler whose
                                 * event it is): this scheduler leads the rounds */
  int rc = first ? worker_ask_ok(s, &a) : 0;
  if (rc) {
    srv_answer(s, m, rc, NULL, 0);
    return;
  }
  words b = {0};
  pack_parts p = {0};
  event *e = NULL;
  if (first && hands(&a) && !(e = handover_event(s, m))) fail_part(&p, ENOMEM);
  packv_here(s, m, &a, &b, &p);
  send_parts(s, m, MSG_PACKV, &p, &a, &e);
  pack_finish(s, m, &p, &b, e);
}

/* A part of a move answered: its ranges join the event's, or its error fails the move. A part
 * that continues (PROTO_REPLY_MORE) is still awaited. */
void move_on_reply(sched_server *s, event *e, const proto_msg *m) {
  bool more = proto_reply_more(m);
  if (m->h->status) {
    if (!e->status) e->status = m->h->status;
  } else {
    words b = {e->ranges, e->nranges, e->cap};
    bool oom = false;
    for (uint32_t i = 0; i + 1 < m->ntail; i += 2)
      oom |= words_push2(&b, m->tail[i], m->tail[i + 1]);
    if (oom && !e->status) e->status = ENOMEM;
    event_keep(e, &b);
  }
  if (more || --e->remaining > 0) return;
  move_advance(s, e);
}

/* events.c: operations that span schedulers (Myrmics sections 5.2-5.3).
 *  - Placement: a new region goes to the scheduler of its parent region, then down towards
 *    the level its hint names (default: a leaf), along the path to the worker that asked, or
 *    to the least-loaded child. Created below its parent's scheduler, it is reported back up
 *    (CREATED) so the parent's scheduler knows its remote children.
 *  - rfree: the local subtree goes at once; remote children of the freed regions get RFREE
 *    (an event counts their replies) before the worker hears back.
 *  - pack: the local subtree's ranges, plus those of every remote child (an event gathers
 *    them), sorted and coalesced into one reply. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/server_internal.h"
#include "sched/words.h"

static event *event_new(sched_server *s, unsigned type, const proto_msg *m, int remaining) {
  event *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  *e = (event){.next = s->events, .id = ++s->next_event, .remaining = remaining, .type = type,
               .req = m->h->req, .origin = m->h->origin, .reply_to = srv_reply_dest(m)};
  s->events = e;
  s->st.events++;
  return e;
}

static void event_drop(sched_server *s, event *e) {
  for (event **p = &s->events; *p; p = &(*p)->next)
    if (*p == e) {
      *p = e->next;
      break;
    }
  free(e->ranges);
  free(e);
}

/* Send a request of our own (part of event e) towards the region it names. False when the
 * region routes nowhere (then nothing was sent). */
static bool send_for_event(sched_server *s, const event *e, unsigned type, rid_t rid) {
  route r = route_region(s, rid);
  if (r.kind != ROUTE_CHILD && r.kind != ROUTE_PARENT) return false;
  proto_rid body = {.rid = rid};
  size_t len = proto_build(s->out, s->outcap, type, e->id, e->origin, PROTO_NO_DEST, 0, s->me,
                           &body, NULL, 0);
  srv_send(s, r.kind == ROUTE_CHILD ? r.child : s->tree->parent[s->me], s->out, len);
  return true;
}

/* ---- placement ---- */

static int least_loaded_child(const sched_server *s) {
  int best = 0;
  for (int i = 1; i < s->nchildren; i++)
    if (s->child_load[i] < s->child_load[best]) best = i;
  return s->children[best];
}

void place_region(sched_server *s, int from, const proto_msg *m, rid_t parent, int hint,
                  int psched) {
  const sched_tree *t = s->tree;
  int target = hint < 0 || hint >= t->levels ? t->levels - 1 : hint;
  bool parent_here = psched == s->me;
  int32_t origin = m->h->origin;
  if (t->level[s->me] < target && s->nchildren > 0) { /* further down */
    bool mine = origin >= 0 && sched_tree_in_subtree(t, s->me, origin);
    int child = mine ? sched_tree_next_hop(t, s->me, origin) : least_loaded_child(s);
    if (!mine) s->st.placed_by_load++;
    proto_create c = {.parent = parent, .level_hint = hint, .parent_sched = psched};
    size_t len = proto_build(s->out, s->outcap, MSG_CREATE_BELOW, m->h->req, origin,
                             PROTO_NO_DEST, 0, -1, &c, NULL, 0);
    srv_send(s, child, s->out, len);
    s->st.forwarded++;
    return;
  }
  rid_t id;
  int rc = parent_here ? region_create(s->layer, parent, hint, &id)
                       : region_create_detached(s->layer, parent, hint, &id);
  if (rc == ENOMEM || rc == ENOSPC) {
    trade_park(s, from, m, rc);
    return;
  }
  if (rc) {
    srv_reply(s, origin, m->h->req, origin, rc, NULL, 0);
    return;
  }
  s->st.regions_created++;
  uint64_t tail[1] = {id};
  if (parent_here) {
    srv_reply(s, origin, m->h->req, origin, 0, tail, 1);
  } else if (trie_insert(&s->remote_parent, id, (uintptr_t)psched + 1)) {
    region_free(s->layer, id);
    srv_reply(s, origin, m->h->req, origin, ENOMEM, NULL, 0);
    return;
  } else {
    proto_created c = {.rid = id, .parent = parent};
    size_t len = proto_build(s->out, s->outcap, MSG_CREATED, m->h->req, origin, psched, 0, -1,
                             &c, NULL, 0);
    srv_send(s, sched_tree_next_hop(t, s->me, psched), s->out, len);
  }
  srv_report_load(s);
  trade_check_low(s);
}

/* Remember that region rid (on a child's subtree) hangs under local region parent. The
 * child's word is authoritative for its ID: an older entry for it is overwritten. */
static int remember_kid(sched_server *s, rid_t rid, rid_t parent) {
  uintptr_t *slot = trie_find_slot(&s->remote_kids, rid);
  if (slot) {
    *slot = (uintptr_t)parent + 1;
    return 0;
  }
  return trie_insert(&s->remote_kids, rid, (uintptr_t)parent + 1);
}

void event_on_created(sched_server *s, const proto_msg *m) {
  const proto_created *c = m->fixed;
  uint64_t tail[1] = {c->rid};
  if (region_exists(s->layer, c->parent) && remember_kid(s, c->rid, c->parent) == 0) {
    srv_reply(s, m->h->origin, m->h->req, m->h->origin, 0, tail, 1);
    return;
  }
  /* The parent went away meanwhile (or no memory to remember the child): undo. */
  event dummy = {.id = 0, .origin = -1};
  send_for_event(s, &dummy, MSG_RFREE, c->rid);
  srv_reply(s, m->h->origin, m->h->req, m->h->origin, ENOENT, NULL, 0);
}

void event_on_unlink(sched_server *s, const proto_msg *m) {
  trie_delete(&s->remote_kids, ((const proto_created *)m->fixed)->rid, NULL);
}

/* ---- rfree ---- */

/* Remote children whose local parent is gone: collected, and forgotten here. */
static size_t orphaned_kids(sched_server *s, rid_t **out) {
  size_t n = 0, cap = 0;
  rid_t *v = NULL;
  trie_cursor c;
  uint64_t k;
  uintptr_t parent1;
  trie_cursor_seek(&c, &s->remote_kids, 0);
  while (trie_cursor_next(&c, &k, &parent1)) {
    if (region_exists(s->layer, (rid_t)(parent1 - 1))) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      rid_t *w = realloc(v, cap * sizeof *w);
      if (!w) break;
      v = w;
    }
    v[n++] = (rid_t)k;
  }
  for (size_t i = 0; i < n; i++) trie_delete(&s->remote_kids, v[i], NULL);
  *out = v;
  return n;
}

void event_rfree(sched_server *s, const proto_msg *m) {
  rid_t rid = ((const proto_rid *)m->fixed)->rid;
  uintptr_t psched1 = trie_find(&s->remote_parent, rid);
  int rc = region_free(s->layer, rid);
  if (rc) {
    srv_answer(s, m, rc, NULL, 0);
    return;
  }
  if (psched1) { /* the parent's scheduler forgets this remote child */
    trie_delete(&s->remote_parent, rid, NULL);
    proto_created c = {.rid = rid};
    int to = (int)psched1 - 1;
    size_t len = proto_build(s->out, s->outcap, MSG_UNLINK, 0, -1, to, 0, -1, &c, NULL, 0);
    srv_send(s, sched_tree_next_hop(s->tree, s->me, to), s->out, len);
  }
  srv_report_load(s);
  trade_check_ceiling(s);
  rid_t *kids;
  size_t n = orphaned_kids(s, &kids);
  event *e = n ? event_new(s, MSG_RFREE, m, (int)n) : NULL;
  for (size_t i = 0; e && i < n; i++)
    if (!send_for_event(s, e, MSG_RFREE, kids[i])) e->remaining--;
  free(kids);
  if (!e || e->remaining == 0) {
    if (e) event_drop(s, e);
    srv_answer(s, m, 0, NULL, 0);
  }
}

/* ---- pack ---- */

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

static void pack_reply(sched_server *s, int32_t dest, uint64_t req, int32_t origin, words *b) {
  b->n = coalesce_pairs(b->w, b->n);
  if (b->n > PROTO_MAX_TAIL)
    srv_reply(s, dest, req, origin, E2BIG, NULL, 0);
  else
    srv_reply(s, dest, req, origin, 0, b->w, (uint32_t)b->n);
}

/* Remote children (on other schedulers) of the local subtree under rid. */
static size_t remote_kids_under(sched_server *s, rid_t rid, rid_t **out) {
  rid_t *kids = NULL;
  size_t n = 0, cap = 0;
  trie_cursor c;
  uint64_t k;
  uintptr_t parent1;
  trie_cursor_seek(&c, &s->remote_kids, 0);
  while (trie_cursor_next(&c, &k, &parent1)) {
    if (!region_is_within(s->layer, (rid_t)(parent1 - 1), rid)) continue;
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      rid_t *w = realloc(kids, cap * sizeof *w);
      if (!w) break;
      kids = w;
    }
    kids[n++] = (rid_t)k;
  }
  *out = kids;
  return n;
}

/* ---- the parts of a pack that live elsewhere: one PACKV per next hop ----
 * A pack names regions and objects; those held by other schedulers are gathered per next hop
 * (a child, or the parent) and each hop gets one PACKV for all of them, so packing a region
 * with a thousand remote descendants costs a message per scheduler it touches, not one per
 * region. Two kinds of parts never share a message: the worker's own names must exist (an
 * unknown one fails the move), while remote children found in the trie may have been freed
 * meanwhile (their UNLINK still on its way) and are skipped then (PACKV_SKIP_GONE). */
typedef struct {
  int rank;          /* the next hop */
  bool lenient;      /* PACKV_SKIP_GONE parts */
  words rids, addrs; /* one rid or address per word */
} pack_hop;

typedef struct {
  pack_hop *hop;
  size_t nhops, cap;
  int status; /* the first error: a name that routes nowhere, or no memory */
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

/* A region that is not here: to its hop. A lenient part only ever goes down (a remote child
 * lives below its parent's scheduler); one that routes up or nowhere is gone and skipped. */
static void part_region(sched_server *s, pack_parts *p, bool lenient, rid_t rid) {
  route r = route_region(s, rid);
  bool sendable = r.kind == ROUTE_CHILD || (r.kind == ROUTE_PARENT && !lenient);
  if (!sendable) {
    if (!lenient) fail_part(p, ENOENT);
    return;
  }
  pack_hop *h = hop_for(p, lenient, hop_rank(s, r));
  if (h) push_word(p, &h->rids, rid);
}

static void part_object(sched_server *s, pack_parts *p, uintptr_t addr, route r) {
  if (r.kind != ROUTE_CHILD && r.kind != ROUTE_PARENT) {
    fail_part(p, EINVAL);
    return;
  }
  pack_hop *h = hop_for(p, false, hop_rank(s, r));
  if (h) push_word(p, &h->addrs, addr);
}

/* Send one hop's parts as PACKV messages for event e; each one sent is a reply to wait for. */
static void send_hop(sched_server *s, event *e, pack_hop *h, uint32_t flags) {
  size_t nr = h->rids.n, no = h->addrs.n, r = 0, o = 0;
  size_t most = nr + no < PACKV_CHUNK ? nr + no : PACKV_CHUNK;
  uint64_t *tail = malloc(most * sizeof *tail);
  while (tail && (r < nr || o < no)) {
    uint32_t cr = (uint32_t)(nr - r < PACKV_CHUNK ? nr - r : PACKV_CHUNK);
    uint32_t co = (uint32_t)(no - o < PACKV_CHUNK - cr ? no - o : PACKV_CHUNK - cr);
    if (cr) memcpy(tail, h->rids.w + r, cr * sizeof *tail);
    if (co) memcpy(tail + cr, h->addrs.w + o, co * sizeof *tail);
    proto_packv body = {.nreg = cr, .nobj = co, .flags = flags};
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

/* Send every hop's parts (creating event e when there are any; nothing is sent once a part
 * has failed) and free them. */
static void send_parts(sched_server *s, const proto_msg *m, unsigned type, pack_parts *p,
                       event **e) {
  for (size_t i = 0; i < p->nhops; i++) {
    pack_hop *h = &p->hop[i];
    if (!p->status && !*e) *e = event_new(s, type, m, 0);
    if (!*e) fail_part(p, ENOMEM);
    if (!p->status) send_hop(s, *e, h, h->lenient ? PACKV_SKIP_GONE : 0);
    free(h->rids.w);
    free(h->addrs.w);
  }
  free(p->hop);
  *p = (pack_parts){.status = p->status};
}

/* Pack local region rid into b; its remote children join the lenient parts. 0 or the
 * region layer's error. */
static int pack_local(sched_server *s, rid_t rid, words *b, pack_parts *p) {
  size_t nranges;
  int rc = region_pack(s->layer, &rid, 1, NULL, 0, words_push_range, b, &nranges);
  if (rc) return rc;
  rid_t *kids;
  size_t n = remote_kids_under(s, rid, &kids);
  for (size_t i = 0; i < n; i++) part_region(s, p, true, kids[i]);
  free(kids);
  return 0;
}

/* Hand the event the ranges gathered so far (it owns them now). */
static void event_keep(event *e, words *b) {
  e->ranges = b->w;
  e->nranges = b->n;
  e->cap = b->cap;
}

/* After the local parts: wait for the remote ones, or answer now. */
static void pack_finish(sched_server *s, const proto_msg *m, unsigned type, pack_parts *p,
                        words *b) {
  event *e = NULL;
  send_parts(s, m, type, p, &e);
  if (e && e->remaining > 0) { /* the parts elsewhere answer later */
    if (!e->status) e->status = p->status;
    event_keep(e, b);
    return;
  }
  int status = p->status ? p->status : e ? e->status : 0;
  if (e) event_drop(s, e);
  if (status) srv_answer(s, m, status, NULL, 0);
  else pack_reply(s, srv_reply_dest(m), m->h->req, m->h->origin, b);
  free(b->w);
}

void event_pack(sched_server *s, const proto_msg *m) {
  rid_t rid = ((const proto_rid *)m->fixed)->rid;
  words b = {0};
  pack_parts p = {0};
  int rc = pack_local(s, rid, &b, &p);
  if (rc) fail_part(&p, rc);
  pack_finish(s, m, MSG_PACK, &p, &b);
}

void event_packv(sched_server *s, const proto_msg *m) {
  const proto_packv *v = m->fixed;
  bool lenient = (v->flags & PACKV_SKIP_GONE) != 0;
  words b = {0};
  pack_parts parts = {0}, *p = &parts;
  for (uint32_t i = 0; i < v->nreg; i++) {
    rid_t rid = (rid_t)m->tail[i];
    if (region_exists(s->layer, rid)) {
      int rc = pack_local(s, rid, &b, p);
      if (rc) fail_part(p, rc);
    } else {
      part_region(s, p, lenient, rid);
    }
  }
  for (uint32_t i = 0; i < v->nobj; i++) {
    uintptr_t addr = (uintptr_t)m->tail[v->nreg + i];
    route r = route_addr(s, addr);
    if (r.kind != ROUTE_LOCAL) {
      part_object(s, p, addr, r);
      continue;
    }
    rid_t rid;
    uintptr_t start;
    size_t size;
    int rc = region_query(s->layer, addr, &rid, &start, &size);
    if (!rc && words_push2(&b, start, size)) rc = ENOMEM;
    if (rc) fail_part(p, rc);
  }
  pack_finish(s, m, MSG_PACKV, p, &b);
}

/* A part of a pack answered: its ranges join the event's, or its error fails the pack. */
static void pack_part(event *e, const proto_msg *m) {
  if (m->h->status) {
    if (!e->status) e->status = m->h->status;
    return;
  }
  words b = {e->ranges, e->nranges, e->cap};
  bool oom = false;
  for (uint32_t i = 0; i + 1 < m->ntail; i += 2) oom |= words_push2(&b, m->tail[i], m->tail[i + 1]);
  if (oom && !e->status) e->status = ENOMEM;
  event_keep(e, &b);
}

void event_on_reply(sched_server *s, const proto_msg *m) {
  event *e = s->events;
  while (e && e->id != m->h->req) e = e->next;
  if (!e) return; /* a reply nobody waits for (an undo's answer): nothing to do */
  bool pack = e->type == MSG_PACK || e->type == MSG_PACKV;
  if (pack) pack_part(e, m);
  if (--e->remaining > 0) return;
  if (pack && e->status) {
    srv_reply(s, e->reply_to, e->req, e->origin, e->status, NULL, 0);
  } else if (pack) {
    words b = {e->ranges, e->nranges, e->cap};
    pack_reply(s, e->reply_to, e->req, e->origin, &b);
    e->ranges = b.w;
  } else {
    srv_reply(s, e->reply_to, e->req, e->origin, 0, NULL, 0);
  }
  event_drop(s, e);
}

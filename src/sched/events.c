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

/* A QUERY of our own for event e: its reply comes back with the event's ID and this bit. */
#define QUERY_PART (1ull << 63)
static bool query_for_event(sched_server *s, const event *e, uintptr_t addr) {
  route r = route_addr(s, addr);
  if (r.kind != ROUTE_CHILD && r.kind != ROUTE_PARENT) return false;
  proto_addr body = {.addr = addr};
  size_t len = proto_build(s->out, s->outcap, MSG_QUERY, e->id | QUERY_PART, e->origin,
                           PROTO_NO_DEST, 0, s->me, &body, NULL, 0);
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

/* Pack local region rid into b, and ask for its remote children's ranges as parts of event
 * *e (created when needed, of type `type` for m). 0 or the region layer's error. */
static int pack_local(sched_server *s, const proto_msg *m, unsigned type, rid_t rid, words *b,
                      event **e) {
  size_t nranges;
  int rc = region_pack(s->layer, &rid, 1, NULL, 0, words_push_range, b, &nranges);
  if (rc) return rc;
  rid_t *kids;
  size_t n = remote_kids_under(s, rid, &kids);
  if (n && !*e) *e = event_new(s, type, m, 0);
  for (size_t i = 0; *e && i < n; i++)
    if (send_for_event(s, *e, MSG_PACK, kids[i])) (*e)->remaining++;
  free(kids);
  return 0;
}

/* Hand the event the ranges gathered so far (it owns them now). */
static void event_keep(event *e, words *b) {
  e->ranges = b->w;
  e->nranges = b->n;
  e->cap = b->cap;
}

void event_pack(sched_server *s, const proto_msg *m) {
  rid_t rid = ((const proto_rid *)m->fixed)->rid;
  words b = {0};
  event *e = NULL;
  int rc = pack_local(s, m, MSG_PACK, rid, &b, &e);
  if (rc) {
    free(b.w);
    srv_answer(s, m, rc, NULL, 0);
    return;
  }
  if (e && e->remaining > 0) {
    event_keep(e, &b);
    return;
  }
  if (e) event_drop(s, e);
  pack_reply(s, srv_reply_dest(m), m->h->req, m->h->origin, &b);
  free(b.w);
}

/* One part of a batched pack: a region, here or elsewhere. */
static void packv_region(sched_server *s, const proto_msg *m, rid_t rid, words *b, event **e,
                         int *status) {
  route r = route_region(s, rid);
  if (r.kind == ROUTE_LOCAL) {
    int rc = pack_local(s, m, MSG_PACKV, rid, b, e);
    if (rc && !*status) *status = rc;
    return;
  }
  if (!*e) *e = event_new(s, MSG_PACKV, m, 0);
  if (*e && send_for_event(s, *e, MSG_PACK, rid)) (*e)->remaining++;
  else if (!*status) *status = *e ? ENOENT : ENOMEM;
}

/* One part of a batched pack: an object, here or elsewhere. */
static void packv_object(sched_server *s, const proto_msg *m, uintptr_t addr, words *b,
                         event **e, int *status) {
  route r = route_addr(s, addr);
  if (r.kind == ROUTE_LOCAL) {
    rid_t rid;
    uintptr_t start;
    size_t size;
    int rc = region_query(s->layer, addr, &rid, &start, &size);
    if (!rc && words_push2(b, start, size)) rc = ENOMEM;
    if (rc && !*status) *status = rc;
    return;
  }
  if (!*e) *e = event_new(s, MSG_PACKV, m, 0);
  if (*e && query_for_event(s, *e, addr)) (*e)->remaining++;
  else if (!*status) *status = *e ? EINVAL : ENOMEM;
}

void event_packv(sched_server *s, const proto_msg *m) {
  const proto_packv *v = m->fixed;
  words b = {0};
  event *e = NULL;
  int status = 0;
  for (uint32_t i = 0; i < v->nreg; i++) packv_region(s, m, (rid_t)m->tail[i], &b, &e, &status);
  for (uint32_t i = 0; i < v->nobj; i++)
    packv_object(s, m, (uintptr_t)m->tail[v->nreg + i], &b, &e, &status);
  if (e && e->remaining > 0) { /* the parts elsewhere answer later */
    e->status = status;
    event_keep(e, &b);
    return;
  }
  if (e) event_drop(s, e);
  if (status) srv_answer(s, m, status, NULL, 0);
  else pack_reply(s, srv_reply_dest(m), m->h->req, m->h->origin, &b);
  free(b.w);
}

/* A part of a batched pack answered: its ranges (or the object's slot) join the event's. */
static void packv_part(event *e, const proto_msg *m, bool query) {
  if (m->h->status) {
    if (!e->status) e->status = m->h->status;
    return;
  }
  words b = {e->ranges, e->nranges, e->cap};
  bool oom = false;
  if (query && m->ntail == 4) oom = words_push2(&b, m->tail[1], m->tail[2]);
  for (uint32_t i = 0; !query && i + 1 < m->ntail; i += 2) oom |= words_push2(&b, m->tail[i], m->tail[i + 1]);
  if (oom && !e->status) e->status = ENOMEM;
  event_keep(e, &b);
}

void event_on_reply(sched_server *s, const proto_msg *m) {
  bool query = (m->h->req & QUERY_PART) != 0;
  uint64_t id = m->h->req & ~QUERY_PART;
  event *e = s->events;
  while (e && e->id != id) e = e->next;
  if (!e) return; /* a reply nobody waits for (an undo's answer): nothing to do */
  if (e->type == MSG_PACKV) {
    packv_part(e, m, query);
  } else if (e->type == MSG_PACK && m->h->status == 0) {
    words b = {e->ranges, e->nranges, e->cap};
    for (uint32_t i = 0; i + 1 < m->ntail; i += 2) words_push2(&b, m->tail[i], m->tail[i + 1]);
    e->ranges = b.w;
    e->nranges = b.n;
    e->cap = b.cap;
  }
  if (--e->remaining > 0) return;
  if (e->type == MSG_PACKV && e->status) {
    srv_reply(s, e->reply_to, e->req, e->origin, e->status, NULL, 0);
  } else if (e->type == MSG_PACK || e->type == MSG_PACKV) {
    words b = {e->ranges, e->nranges, e->cap};
    pack_reply(s, e->reply_to, e->req, e->origin, &b);
    e->ranges = b.w;
  } else {
    srv_reply(s, e->reply_to, e->req, e->origin, 0, NULL, 0);
  }
  event_drop(s, e);
}

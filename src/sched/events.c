/* events.c: operations that span schedulers (Myrmics sections 5.2-5.3).
 *  - Placement: a new region goes to the scheduler of its parent region, then down towards
 *    the level its hint names (default: a leaf), along the path to the worker that asked, or
 *    to the least-loaded child. Created below its parent's scheduler, it is reported back up
 *    (CREATED) so the parent's scheduler knows its remote children.
 *  - rfree: the local subtree goes at once (every region of it held by the worker that asks);
 *    remote children of the freed regions get RFREE (an event counts their replies) before
 *    the worker hears back.
 *  - the replies that events wait for; packs and hand-overs (move.c) are events too. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/server_internal.h"

event *event_new(sched_server *s, unsigned type, const proto_msg *m, int remaining) {
  event *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  *e = (event){.next = s->events, .id = ++s->next_event, .remaining = remaining, .type = type,
               .req = m->h->req, .origin = m->h->origin, .reply_to = srv_reply_dest(m)};
  s->events = e;
  s->st.events++;
  return e;
}

void event_drop(sched_server *s, event *e) {
  for (event **p = &s->events; *p; p = &(*p)->next)
    if (*p == e) {
      *p = e->next;
      break;
    }
  free(e->ranges);
  free(e->request);
  free(e);
}

/* Send an RFREE of our own (part of event e) towards remote child rid of region parent.
 * False when the region routes nowhere (then nothing was sent). */
static bool send_for_event(sched_server *s, const event *e, unsigned type, rid_t rid,
                           rid_t parent) {
  route r = route_region(s, rid);
  if (r.kind != ROUTE_CHILD && r.kind != ROUTE_PARENT) return false;
  proto_rid body = {.rid = rid, .parent1 = parent + 1};
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
  region_set_holder(s->layer, id, origin); /* the worker that asked (origin -1: anyone) */
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

void event_on_created(sched_server *s, const proto_msg *m) {
  const proto_created *c = m->fixed;
  uint64_t tail[1] = {c->rid};
  /* The parent must still be the one the worker asked under: its ID may have been freed and
   * given to another worker's region meanwhile, which then holds it. */
  if (region_check_holder(s->layer, c->parent, m->h->origin) == 0 &&
      kids_remember(s, c->rid, c->parent) == 0) {
    srv_reply(s, m->h->origin, m->h->req, m->h->origin, 0, tail, 1);
    return;
  }
  /* The parent went away meanwhile (or no memory to remember the child): undo. */
  event dummy = {.id = 0, .origin = -1};
  send_for_event(s, &dummy, MSG_RFREE, c->rid, c->parent);
  srv_reply(s, m->h->origin, m->h->req, m->h->origin, ENOENT, NULL, 0);
}

void event_on_unlink(sched_server *s, const proto_msg *m) {
  kids_forget(s, ((const proto_created *)m->fixed)->rid);
}

/* ---- rfree ---- */

/* An RFREE that another scheduler sent for a remote child of a region it freed: is rid still
 * that child? (Its ID may have been freed and given to another region meanwhile.) */
static bool still_the_child(sched_server *s, const proto_msg *m, rid_t rid) {
  uint32_t parent1 = ((const proto_rid *)m->fixed)->parent1;
  rid_t parent;
  if (m->h->sched < 0 || !parent1) return true; /* a worker's own request: the ID it names */
  return region_get_parent(s->layer, rid, &parent) == 0 && parent == parent1 - 1;
}

void event_rfree(sched_server *s, const proto_msg *m) {
  rid_t rid = ((const proto_rid *)m->fixed)->rid;
  if (!still_the_child(s, m, rid)) { /* gone already: what the part asked for */
    srv_answer(s, m, 0, NULL, 0);
    return;
  }
  uintptr_t psched1 = trie_find(&s->remote_parent, rid);
  int rc = rid == REGION_ROOT ? EINVAL : region_check_subtree(s->layer, rid, m->h->origin);
  rid_t *kids = NULL; /* the remote children under it: orphans after the free */
  size_t n = 0;
  if (!rc) rc = kids_under(s, rid, &kids, &n); /* all of them, or ENOMEM with nothing freed */
  event *e = NULL; /* the children's answers, made before the free for the same reason */
  if (!rc && n && !(e = event_new(s, MSG_RFREE, m, (int)n))) rc = ENOMEM;
  if (!rc) rc = region_free(s->layer, rid);
  if (rc) {
    if (e) event_drop(s, e);
    free(kids);
    srv_answer(s, m, rc, NULL, 0);
    return;
  }
  for (size_t i = 0; i < n; i++) kids_forget(s, kids[2 * i]);
  if (psched1) { /* the parent's scheduler forgets this remote child */
    trie_delete(&s->remote_parent, rid, NULL);
    proto_created c = {.rid = rid};
    int to = (int)psched1 - 1;
    size_t len = proto_build(s->out, s->outcap, MSG_UNLINK, 0, -1, to, 0, -1, &c, NULL, 0);
    srv_send(s, sched_tree_next_hop(s->tree, s->me, to), s->out, len);
  }
  srv_report_load(s);
  trade_check_ceiling(s);
  for (size_t i = 0; e && i < n; i++)
    if (!send_for_event(s, e, MSG_RFREE, kids[2 * i], kids[2 * i + 1])) e->remaining--;
  free(kids);
  if (!e || e->remaining == 0) {
    if (e) event_drop(s, e);
    srv_answer(s, m, 0, NULL, 0);
  }
}

void event_on_reply(sched_server *s, const proto_msg *m) {
  event *e = s->events;
  while (e && e->id != m->h->req) e = e->next;
  if (!e) return; /* a reply nobody waits for (an undo's answer): nothing to do */
  if (e->type == MSG_PACK || e->type == MSG_PACKV) {
    move_on_reply(s, e, m);
    return;
  }
  /* an RFREE part: a remote child held by another worker stays (EPERM); one gone meanwhile
   * (ENOENT) is what the worker asked for anyway */
  if (m->h->status == EPERM) e->status = EPERM;
  if (--e->remaining > 0) return;
  srv_reply(s, e->reply_to, e->req, e->origin, e->status, NULL, 0);
  event_drop(s, e);
}

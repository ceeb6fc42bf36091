/* server.c: the event server's life cycle, sending and replies, load reports, and the
 * requests served on the spot (ralloc, alloc, balloc, free, realloc, query, lease, unlease).
 * Dispatch to them is dispatch.c's. Main entry: sched_server_create. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sched/server_internal.h"
#include "trie/rangeset.h"

sched_config sched_config_default(void) {
  return (sched_config){.gas_base = AH_GAS_DEFAULT_BASE, .gas_size = AH_GAS_DEFAULT_SIZE,
                        .boot_pages = 64, .boot_ids = 4096, .refill_pages = 64,
                        .refill_ids = 4096, .ceiling_pages = 256, .high_watermark = 16,
                        .low_watermark = 2,
                        .load_threshold = 8};
}

void srv_log(sched_server *s, const char *fmt, ...) {
  FILE *f = s->cfg.log ? s->cfg.log : stderr;
  va_list ap;
  va_start(ap, fmt);
  fprintf(f, "antheapd[%d]: ", s->me);
  vfprintf(f, fmt, ap);
  fputc('\n', f);
  va_end(ap);
}

/* ---- memory for the server's own bookkeeping: a kernel pool over heap chunks ---- */
static int kernel_grow(void *ctx, size_t min_bytes, uintptr_t *addr, size_t *len) {
  sched_server *s = ctx;
  size_t size = min_bytes > ((size_t)4 << 20) ? ah_round_up(min_bytes, AH_SLAB_SIZE) : (size_t)4 << 20;
  if (s->nkchunks == s->kcap) {
    int cap = s->kcap ? 2 * s->kcap : 16;
    void **v = realloc(s->kchunks, (size_t)cap * sizeof *v);
    if (!v) return ENOMEM;
    s->kchunks = v;
    s->kcap = cap;
  }
  void *mem = aligned_alloc(AH_SLAB_SIZE, size);
  if (!mem) return ENOMEM;
  s->kchunks[s->nkchunks++] = mem;
  *addr = (uintptr_t)mem;
  *len = size;
  return 0;
}

static trie_node *knode_alloc(void *ctx) { return slab_malloc(((sched_server *)ctx)->kernel, 64); }
static void knode_release(void *ctx, trie_node *n) {
  slab_free(((sched_server *)ctx)->kernel, (uintptr_t)n);
}

static int make_layer(sched_server *s) {
  uintptr_t a;
  size_t len;
  if (kernel_grow(s, (size_t)1 << 20, &a, &len)) return ENOMEM;
  slab_config kc = slab_config_default();
  /* Metadata comes and goes by the thousand (a slab descriptor per leased slab): carve its
   * slabs 16 at a time and keep up to 64 idle, rather than trimming to 2 after every free
   * and carving them back one by one (that churn would cost as much as the lease itself). */
  kc.prealloc = 16;
  kc.empty_keep = 64;
  kc.grow = kernel_grow;
  kc.grow_ctx = s;
  if (slab_pool_create_self_hosted(&s->kernel, (void *)a, len, &kc)) return ENOMEM;
  region_config rc = region_config_default();
  rc.gas_base = s->cfg.gas_base;
  rc.gas_size = s->cfg.gas_size;
  rc.high_watermark = s->cfg.high_watermark;
  rc.low_watermark = s->cfg.low_watermark;
  rc.create_root = s->me == s->tree->root;
  if (region_layer_create(&s->layer, &rc, s->kernel)) return ENOMEM;
  trie_node_source src = {knode_alloc, knode_release, s};
  unsigned page_bits = 1;
  while (((uint64_t)1 << page_bits) < (s->cfg.gas_size >> AH_PAGE_SHIFT)) page_bits++;
  rangeset_init(&s->owned_pages, page_bits, src, 0);
  trie_init(&s->deleg_pages, page_bits, src);
  rangeset_init(&s->owned_ids, 32, src, 0);
  trie_init(&s->deleg_ids, 32, src);
  trie_init(&s->remote_kids, 32, src);
  trie_init(&s->kids_by_parent, 64, src);
  trie_init(&s->remote_parent, 32, src);
  return 0;
}

int sched_server_create(sched_server **out, const sched_tree *tree, int me,
                        const sched_config *cfg, sched_transport tx) {
  if (me < 0 || me >= tree->nranks || !tree->is_sched[me]) return EINVAL;
  sched_server *s = calloc(1, sizeof *s);
  if (!s) return ENOMEM;
  s->tree = tree;
  s->me = me;
  s->cfg = cfg ? *cfg : sched_config_default();
  /* Give back only well above what a refill brings, or pages would bounce up and down. */
  if (s->cfg.ceiling_pages && s->cfg.ceiling_pages < 2 * s->cfg.refill_pages)
    s->cfg.ceiling_pages = 2 * s->cfg.refill_pages;
  /* a pack reply carries whole {addr, len} pairs, at most what one message can */
  if (s->cfg.reply_words == 0 || s->cfg.reply_words > PROTO_MAX_TAIL)
    s->cfg.reply_words = PROTO_MAX_TAIL;
  s->cfg.reply_words = s->cfg.reply_words < 2 ? 2 : s->cfg.reply_words & ~1u;
  s->tx = tx;
  s->parked_tail = &s->parked_head;
  s->conservation = 1;
  s->outcap = sizeof(proto_header) + PROTO_MAX_FIXED + (size_t)PROTO_MAX_TAIL * 8;
  s->out = malloc(s->outcap);
  s->children = calloc((size_t)tree->nchildren[me] + 1, sizeof(int));
  s->child_load = calloc((size_t)tree->nchildren[me] + 1, sizeof(uint64_t));
  for (int c = tree->first_child[me]; c >= 0; c = tree->next_sibling[c]) {
    if (tree->is_sched[c]) s->children[s->nchildren++] = c;
    else s->workers_direct++;
  }
  if (!s->out || !s->children || !s->child_load || make_layer(s)) {
    sched_server_destroy(s);
    return ENOMEM;
  }
  *out = s;
  return 0;
}

void sched_server_destroy(sched_server *s) {
  if (!s) return;
  while (s->parked_head) {
    parked *p = s->parked_head;
    s->parked_head = p->next;
    free(p);
  }
  while (s->parked_refills) {
    parked *p = s->parked_refills;
    s->parked_refills = p->next;
    free(p);
  }
  while (s->events) {
    event *e = s->events;
    s->events = e->next;
    free(e->ranges);
    free(e->request);
    free(e);
  }
  for (int i = 0; i < s->nkchunks; i++) free(s->kchunks[i]); /* layer, tries: all in here */
  free(s->kchunks);
  free(s->children);
  free(s->child_load);
  if (s->finalized) {
    trie_clear(s->finalized);
    free(s->finalized);
  }
  free(s->stat_rows);
  free(s->out);
  free(s);
}

bool sched_server_done(const sched_server *s) { return s->done; }
int sched_server_conservation(const sched_server *s) { return s->conservation; }
void sched_server_get_stats(const sched_server *s, sched_stats *st) { *st = s->st; }

int srv_child_slot(const sched_server *s, int rank) {
  for (int i = 0; i < s->nchildren; i++)
    if (s->children[i] == rank) return i;
  return -1;
}

/* ---- sending ---- */
void srv_send(sched_server *s, int to, const void *msg, size_t len) {
  AH_ASSERT(to != s->me && to >= 0 && to < s->tree->nranks);
  s->st.msgs_out++;
  s->st.bytes_out += len;
  s->tx.send(s->tx.ctx, s->me, to, msg, len);
}

void srv_forward(sched_server *s, int to, const proto_msg *m) {
  srv_send(s, to, m->h, sizeof *m->h + m->h->length);
}

/* Who hears the outcome of m: the scheduler whose event sent it, else the worker that asked. */
int srv_reply_dest(const proto_msg *m) { return m->h->sched >= 0 ? m->h->sched : m->h->origin; }

void srv_reply(sched_server *s, int32_t dest, uint64_t req, int32_t origin, int status,
               const uint64_t *tail, uint32_t ntail) {
  srv_reply_part(s, dest, req, origin, status, tail, ntail, 0);
}

void srv_reply_part(sched_server *s, int32_t dest, uint64_t req, int32_t origin, int status,
                    const uint64_t *tail, uint32_t ntail, uint32_t flags) {
  if (dest < 0 || dest >= s->tree->nranks) { /* a forged request named no one to answer */
    s->st.malformed++;
    srv_log(s, "an answer to rank %d, which is no rank of the job: dropped", (int)dest);
    return;
  }
  proto_reply r = {.ntail = ntail, .flags = flags};
  size_t len = proto_build(s->out, s->outcap, MSG_REPLY, req, origin, dest, status, -1, &r, tail,
                           ntail);
  AH_ASSERT(len > 0);
  if (dest == s->me) { /* an event of our own (a cascade that needed no message) */
    proto_msg m;
    if (proto_decode(s->out, len, &m) == 0) event_on_reply(s, &m);
    return;
  }
  srv_send(s, sched_tree_next_hop(s->tree, s->me, dest), s->out, len);
}

/* Reply to whoever asked m. */
void srv_answer(sched_server *s, const proto_msg *m, int status, const uint64_t *tail,
                   uint32_t ntail) {
  srv_reply(s, srv_reply_dest(m), m->h->req, m->h->origin, status, tail, ntail);
}

/* ---- load ---- */
uint64_t srv_subtree_load(const sched_server *s) {
  region_layer_stats st;
  region_layer_get_stats(s->layer, &st);
  uint64_t load = st.regions;
  for (int i = 0; i < s->nchildren; i++) load += s->child_load[i];
  return load;
}

void srv_report_load(sched_server *s) {
  int parent = s->tree->parent[s->me];
  if (parent < 0) return;
  uint64_t load = srv_subtree_load(s);
  uint64_t diff = load > s->reported_load ? load - s->reported_load : s->reported_load - load;
  if (diff < s->cfg.load_threshold) return;
  proto_load l = {.regions = load};
  size_t len = proto_build(s->out, s->outcap, MSG_LOAD, 0, -1, parent, 0, -1, &l, NULL, 0);
  srv_send(s, parent, s->out, len);
  s->reported_load = load;
}

/* ---- requests served here ---- */
static bool needs_refill(int rc) { return rc == ENOMEM || rc == ENOSPC; }

/* The hand-over rule (include/antheap.h): only the worker that holds a region may act on it.
 * True when the worker that asked m does not hold region rid (answered: EPERM, or ENOENT). */
static bool refused_region(sched_server *s, const proto_msg *m, rid_t rid) {
  int rc = region_check_holder(s->layer, rid, m->h->origin);
  if (rc) srv_answer(s, m, rc, NULL, 0);
  return rc != 0;
}

/* ... the same for the region of the live object at addr; an address that is no live object
 * is left to the request's own answer (EINVAL). */
static bool refused_object(sched_server *s, const proto_msg *m, uintptr_t addr) {
  rid_t rid;
  uintptr_t start;
  size_t size;
  if (region_query(s->layer, addr, &rid, &start, &size)) return false;
  return refused_region(s, m, rid);
}

void serve_alloc(sched_server *s, int from, const proto_msg *m) {
  const proto_alloc *a = m->fixed;
  if (refused_region(s, m, a->rid)) return;
  uint64_t one, *addrs = a->n == 1 ? &one : malloc((size_t)a->n * sizeof *addrs);
  if (!addrs) {
    srv_answer(s, m, ENOMEM, NULL, 0);
    return;
  }
  int rc = region_balloc(s->layer, a->size, a->rid, a->n, (uintptr_t *)addrs);
  if (needs_refill(rc))
    trade_park(s, from, m, rc);
  else
    srv_answer(s, m, rc, addrs, rc ? 0 : a->n);
  if (addrs != &one) free(addrs);
  if (!needs_refill(rc)) trade_check_low(s);
}

void serve_realloc(sched_server *s, int from, const proto_msg *m) {
  const proto_realloc *r = m->fixed;
  rid_t to = r->rid;
  if (refused_object(s, m, r->addr)) return;
  if (to != REGION_NONE && route_region(s, to).kind != ROUTE_LOCAL) {
    srv_answer(s, m, EXDEV, NULL, 0); /* the worker moves it: alloc there, copy, free here */
    return;
  }
  if (to != REGION_NONE && refused_region(s, m, to)) return;
  uintptr_t addr;
  size_t old;
  int rc = region_realloc(s->layer, r->addr, r->size, to, &addr, &old);
  if (needs_refill(rc)) {
    trade_park(s, from, m, rc);
    return;
  }
  uint64_t tail[2] = {addr, old};
  srv_answer(s, m, rc, tail, rc ? 0 : 2);
}

/* A worker's cache leases slabs: the reply names this scheduler (its UNLEASE comes here). */
void serve_lease(sched_server *s, int from, const proto_msg *m) {
  const proto_lease *l = m->fixed;
  if (refused_region(s, m, l->rid)) return;
  uint64_t *tail = malloc((2 + (size_t)l->want) * sizeof *tail);
  if (!tail) {
    srv_answer(s, m, ENOMEM, NULL, 0);
    return;
  }
  size_t got = 0;
  uint32_t slot = 0;
  int rc = region_lease(s->layer, l->rid, l->size, l->want, l->min, m->h->origin,
                        (uintptr_t *)(tail + 2), &got, &slot);
  if (needs_refill(rc)) {
    trade_park(s, from, m, rc);
  } else {
    tail[0] = (uint64_t)s->me;
    tail[1] = slot;
    srv_answer(s, m, rc, tail, rc ? 0 : (uint32_t)(2 + got));
    if (!rc) s->st.leased_slabs += got;
    trade_check_low(s);
  }
  free(tail);
}

void serve_unlease(sched_server *s, int from, const proto_msg *m) {
  (void)from;
  const proto_unlease *u = m->fixed;
  size_t dropped = 0;
  int rc = region_lease_return(s->layer, m->h->origin, m->tail, u->n, &dropped);
  uint64_t tail[1] = {dropped};
  srv_answer(s, m, rc, tail, rc ? 0 : 1);
  if (!rc) s->st.returned_leases += u->n;
}

void serve_free(sched_server *s, int from, const proto_msg *m) {
  (void)from;
  uintptr_t addr = ((const proto_addr *)m->fixed)->addr;
  if (!refused_object(s, m, addr)) srv_answer(s, m, region_free_object(s->layer, addr), NULL, 0);
}

void serve_query(sched_server *s, int from, const proto_msg *m) {
  (void)from;
  rid_t rid;
  uintptr_t start;
  size_t size;
  int rc = region_query(s->layer, ((const proto_addr *)m->fixed)->addr, &rid, &start, &size);
  uint64_t tail[4] = {rid, start, size, (uint64_t)s->me};
  srv_answer(s, m, rc, tail, rc ? 0 : 4);
}

void serve_ralloc(sched_server *s, int from, const proto_msg *m) {
  const proto_ralloc *r = m->fixed;
  if (r->level_hint < -1 || r->level_hint >= s->tree->levels) /* a level the tree has */
    srv_answer(s, m, EINVAL, NULL, 0);
  else if (!refused_region(s, m, r->parent))
    place_region(s, from, m, r->parent, r->level_hint, s->me);
}

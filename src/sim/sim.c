/* sim.c: the simulator: channels, the delivery loop, simulated workers and their checks.
 * Well-behaved workers follow the hand-over rule: they act only on regions they hold (their
 * own, the root region, and those handed to them). Each first makes a public region with an
 * object pinned in it (never freed, never handed over), then sends random traffic, and hands
 * whole top regions (with descendants and objects, leases flushed first) to other workers by
 * PACKV_HANDOVER; the receiver takes them over in its books when the giver's reply comes back
 * (the scheduler commits before it replies), and its rallocs under them are placed by load
 * when they live on another branch. Now and then a worker asks of a region (or object) another
 * worker holds, which must be refused (EPERM; ENOENT or success only where a race allows it).
 * Main entry: sim_run. Hostile workers (the fuzzer) live in hostile.c. */
#include "sim/sim_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- random numbers ---- */
uint64_t sim_rnd(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}
static uint64_t rnd(uint64_t *s) { return sim_rnd(s); }

/* ---- channels: FIFO per (from, to); the active ones in an array to draw from ---- */
static channel *chan(sim *S, int from, int to) { return &S->chans[(size_t)from * S->tree.nranks + to]; }

void sim_send(sim *S, int from, int to, const void *data, size_t len) {
  msg *m = malloc(sizeof *m + len);
  if (!m) abort(); /* the simulator itself out of memory: nothing sensible to do */
  m->next = NULL;
  m->len = len;
  memcpy(m->data, data, len);
  channel *c = chan(S, from, to);
  c->from = from;
  c->to = to;
  if (c->tail) c->tail->next = m; else c->head = m;
  c->tail = m;
  if (c->active_slot < 0) {
    c->active_slot = S->nactive;
    S->active[S->nactive++] = (int)(c - S->chans);
  }
}

static void transport_send(void *ctx, int from, int to, const void *data, size_t len) {
  sim_send(ctx, from, to, data, len);
}

static msg *channel_pop(sim *S, channel *c) {
  msg *m = c->head;
  c->head = m->next;
  if (!c->head) {
    c->tail = NULL;
    int last = S->active[--S->nactive];
    S->active[c->active_slot] = last;
    S->chans[last].active_slot = c->active_slot;
    c->active_slot = -1;
  }
  return m;
}

/* ---- replies in several messages ---- */
static bool parts_append(sim_parts *p, const uint64_t *t, uint32_t n) {
  if (p->n + n > p->cap) {
    size_t cap = p->cap ? 2 * p->cap : 1024;
    while (cap < p->n + n) cap *= 2;
    uint64_t *w = realloc(p->w, cap * sizeof *w);
    if (!w) abort(); /* the simulator itself out of memory */
    p->w = w;
    p->cap = cap;
  }
  if (n) memcpy(p->w + p->n, t, (size_t)n * sizeof *t);
  p->n += n;
  return true;
}

bool sim_join_reply(sim *S, int rank, proto_msg *m) {
  sim_parts *p = &S->parts[rank];
  bool more = proto_reply_more(m);
  if (p->n && p->req != m->h->req) {
    sim_fail(S, SIM_FAIL_WRONG, true, "worker %d: request %lu answered in the middle of the parts "
             "of request %lu", rank, (unsigned long)m->h->req, (unsigned long)p->req);
    p->n = 0;
  }
  if (more && m->h->status) {
    sim_fail(S, SIM_FAIL_WRONG, true, "worker %d: a reply part with status %d continues", rank,
             m->h->status);
    p->n = 0;
    return false;
  }
  if (more) {
    S->continued++;
    p->req = m->h->req;
    return parts_append(p, m->tail, m->ntail), false;
  }
  if (!p->n) return true;
  parts_append(p, m->tail, m->ntail);
  m->tail = p->w;
  m->ntail = (uint32_t)p->n;
  p->n = 0; /* the buffer stays valid until the next part for this rank */
  return true;
}

/* ---- failures ---- */
const char *const sim_fail_names[SIM_FAIL_KINDS] = {"wrong replies", "overlaps", "storms",
                                                    "lost pages", "silent drops", "hangs"};

static bool stopped(const sim *S) { return S->res->failure[0] && !S->res->ok; }

static void vfail(sim *S, int k, bool stop, const char *fmt, va_list ap) {
  if (stopped(S)) return; /* a stopped seed's later symptoms are its first failure's echo */
  S->res->fails[k]++;
  if (!S->res->failure[0]) vsnprintf(S->res->failure, sizeof S->res->failure, fmt, ap);
  if (stop) S->res->ok = false;
}

void sim_fail(sim *S, int k, bool stop, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(S, k, stop, fmt, ap);
  va_end(ap);
}

/* A well-behaved worker's wrong reply (or the run's end gone wrong): the seed stops. */
static void fail(sim *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(sim *S, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vfail(S, SIM_FAIL_WRONG, true, fmt, ap);
  va_end(ap);
}

/* ---- simulated workers ---- */
typedef struct { uintptr_t addr; size_t size; rid_t rid; } sobj;
/* serial: unique over the run (IDs are reused after rfree), to tell a region from a later one
 * with its ID */
typedef struct { rid_t rid, parent; bool alive; uint64_t serial; } sreg;
/* A slab leased to a worker (its allocation cache): the whole slab is the worker's. */
typedef struct { uintptr_t addr; uint32_t slot; rid_t rid; int32_t sched; } slease;
typedef struct { rid_t rid; uint64_t serial; } sgave;

enum wop { OP_RALLOC, OP_ALLOC, OP_BALLOC, OP_FREE, OP_REALLOC, OP_QUERY, OP_PACK, OP_RFREE,
           OP_BAD_FREE, OP_BAD_REGION, OP_LEASE, OP_UNLEASE, OP_PUBLIC, OP_PIN, OP_HANDOVER,
           OP_FOREIGN, OP_NONE };

/* OP_FOREIGN: what a worker asks of a region (F_FREE, F_REALLOC: an object) it does not hold. */
enum fkind { F_ALLOC, F_BALLOC, F_RALLOC, F_LEASE, F_RFREE, F_PACK, F_HANDOVER, F_FREE,
             F_REALLOC, F_KINDS };
static const char *const fkind_names[F_KINDS] = {"alloc", "balloc", "ralloc", "lease", "rfree",
                                                 "pack", "hand-over", "free", "realloc"};

#define MAX_NAMED 2 /* objects a hand-over names besides its region */
#define GAVE_KEEP 8 /* regions a worker remembers having handed over */

struct sim_worker {
  int rank, leaf, index, ops_left;
  uint64_t req;
  enum wop op;        /* in flight */
  size_t arg_index;   /* object or region index the op is about */
  size_t size, n;
  rid_t rid;      /* region the op is about (for realloc: the object's region) */
  int public_index;   /* its public region in S->publics (-1: not made yet) */
  bool pinned;        /* the object pinned in it is made */
  /* OP_HANDOVER: the receiver (a well-behaved index), the PACKV flags, the objects named */
  int peer;
  uint32_t flags;
  sobj named[MAX_NAMED];
  size_t nnamed;
  /* OP_FOREIGN: the request, and the region's serial (0: a public region, refused for sure) */
  enum fkind fkind;
  uint64_t serial;
  sgave gave[GAVE_KEEP]; /* the last regions it handed over (ngave counts them all) */
  rid_t got;             /* the last top region handed to it (REGION_ROOT: none) */
  size_t ngave;
  sobj *objs;
  size_t nobjs, objcap;
  sreg *regs;
  size_t nregs, regcap;
  slease *leases;
  size_t nleases, leasecap;
  size_t expect_dropped; /* OP_UNLEASE: live slots of slabs whose region this worker freed */
  bool finalized;
};

uint64_t sim_live_key(uintptr_t a) { return (a - AH_GAS_DEFAULT_BASE) >> AH_SLOT_ALIGN_SHIFT; }
#define live_key sim_live_key /* short name in this file */

size_t sim_extent(size_t size) {
  return size <= AH_SLAB_SIZE ? ah_round_up(size, AH_SLOT_ALIGN) : ah_round_up(size, AH_SLAB_SIZE);
}

/* The live object of t that [addr, addr + extent) overlaps (its start), or 0. */
static uintptr_t overlaps(const trie *t, uintptr_t addr, size_t extent) {
  uint64_t k;
  uintptr_t v;
  if (trie_le(t, live_key(addr + extent - 1), &k, &v) == 0 &&
      k + (v >> AH_SLOT_ALIGN_SHIFT) > live_key(addr))
    return AH_GAS_DEFAULT_BASE + (k << AH_SLOT_ALIGN_SHIFT);
  return 0;
}

/* An allocation must lie in the GAS and not overlap any live object of any worker. */
bool sim_place_ok(sim *S, uintptr_t addr, size_t extent, const char *who, bool overlap) {
  const sched_config *c = &S->cfg->sched;
  if (addr < c->gas_base || addr % AH_SLOT_ALIGN || extent > c->gas_size ||
      addr - c->gas_base > c->gas_size - extent) {
    sim_fail(S, SIM_FAIL_OVERLAP, true, "%s: allocation [%#lx, +%zu) outside the GAS or misaligned",
             who, (unsigned long)addr, extent);
    return false;
  }
  if (!overlap) return true;
  uintptr_t well = overlaps(&S->live, addr, extent), hostile = overlaps(&S->hlive, addr, extent);
  if (well || hostile) {
    sim_fail(S, SIM_FAIL_OVERLAP, true, "%s: allocation [%#lx, +%zu) overlaps the live object at "
             "%#lx of a %s worker", who, (unsigned long)addr, extent,
             (unsigned long)(well ? well : hostile), well ? "well-behaved" : "hostile");
    return false;
  }
  return true;
}

static void shadow_add(sim *S, uintptr_t addr, size_t size) {
  size_t extent = ah_round_up(size, AH_SLOT_ALIGN);
  if (sim_place_ok(S, addr, extent, "well-behaved worker", true))
    trie_insert(&S->live, live_key(addr), extent);
}
static void shadow_del(sim *S, uintptr_t addr) { trie_delete(&S->live, live_key(addr), NULL); }

/* ---- a worker's books: objects and regions ---- */
static void push_obj(sim_worker *w, sobj o) {
  if (w->nobjs == w->objcap) {
    w->objcap = w->objcap ? 2 * w->objcap : 64;
    w->objs = realloc(w->objs, w->objcap * sizeof *w->objs);
    if (!w->objs) abort(); /* the simulator itself out of memory */
  }
  w->objs[w->nobjs++] = o;
}

static void push_reg(sim_worker *w, sreg r) {
  if (w->nregs == w->regcap) {
    w->regcap = w->regcap ? 2 * w->regcap : 16;
    w->regs = realloc(w->regs, w->regcap * sizeof *w->regs);
    if (!w->regs) abort();
  }
  w->regs[w->nregs++] = r;
}

static void add_obj(sim *S, sim_worker *w, uintptr_t addr, size_t size, rid_t rid) {
  push_obj(w, (sobj){addr, size, rid});
  shadow_add(S, addr, sim_extent(size));
}

static void add_reg(sim *S, sim_worker *w, rid_t rid, rid_t parent) {
  push_reg(w, (sreg){rid, parent, true, ++S->serials});
}

static void drop_obj(sim *S, sim_worker *w, size_t i) {
  shadow_del(S, w->objs[i].addr);
  w->objs[i] = w->objs[--w->nobjs];
}

static size_t live_regions(const sim_worker *w, size_t *idx, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < w->nregs && n < cap; i++)
    if (w->regs[i].alive) idx[n++] = i;
  return n;
}

/* Is region rid alive among this worker's regions (the root region always is)? */
static bool reg_alive(const sim_worker *w, rid_t rid) {
  if (rid == REGION_ROOT) return true;
  for (size_t i = 0; i < w->nregs; i++)
    if (w->regs[i].alive && w->regs[i].rid == rid) return true;
  return false;
}

/* Is region rid (of this worker) top or below top? */
static bool reg_within(const sim_worker *w, rid_t rid, rid_t top) {
  for (int guard = 0; guard < 1000; guard++) {
    if (rid == top) return true;
    size_t i = 0; /* IDs are reused after rfree: only live entries count */
    while (i < w->nregs && !(w->regs[i].alive && w->regs[i].rid == rid)) i++;
    if (i == w->nregs) return false;
    rid = w->regs[i].parent;
  }
  return false;
}

/* The well-behaved worker whose books hold the region with this serial alive, or NULL (it was
 * freed: books mark a region dead when its RFREE is sent, before the scheduler frees it). */
static const sim_worker *serial_holder(const sim *S, uint64_t serial) {
  for (int i = 0; i < S->cfg->workers; i++) {
    const sim_worker *x = &S->workers[i];
    for (size_t j = 0; j < x->nregs; j++)
      if (x->regs[j].alive && x->regs[j].serial == serial) return x;
  }
  return NULL;
}

/* Does w hold region rid now, or is it on its way to w (in a hand-over to w whose reply has not
 * come back: the scheduler may have committed it)? */
static bool rid_coming(const sim *S, const sim_worker *w, rid_t rid) {
  if (reg_alive(w, rid)) return true;
  for (int i = 0; i < S->cfg->workers; i++) {
    const sim_worker *x = &S->workers[i];
    if (x->op == OP_HANDOVER && x->peer == w->index && reg_alive(x, rid) &&
        reg_within(x, rid, x->regs[x->arg_index].rid))
      return true;
  }
  return false;
}

/* Another well-behaved worker (there are at least two). */
static int other_worker(sim *S, const sim_worker *w) {
  int j = (int)(rnd(&S->rng) % (uint64_t)(S->cfg->workers - 1));
  return j >= w->index ? j + 1 : j;
}

int sim_worker_rank(const sim *S, int i) { return S->workers[i].rank; }

int sim_public_other(sim *S, int rank, bool pinned) {
  for (int t = 0; t < 8 && S->npublic; t++) {
    int k = (int)(rnd(&S->rng) % (uint64_t)S->npublic);
    if (S->publics[k].holder != rank && (!pinned || S->publics[k].pinned)) return k;
  }
  return -1;
}

/* ---- requests ---- */
static void send_req_tail(sim *S, sim_worker *w, unsigned type, const void *fixed,
                          const uint64_t *tail, uint32_t ntail) {
  unsigned char small[sizeof(proto_header) + PROTO_MAX_FIXED], *buf = small;
  size_t cap = sizeof small + (size_t)ntail * 8;
  if (ntail && !(buf = malloc(cap))) abort(); /* the simulator itself out of memory */
  if (S->trace)
    fprintf(stderr, "trace: worker %d sends %s req %lu (word0 %#lx word1 %#lx)\n", w->rank,
            proto_type_name(type), (unsigned long)w->req + 1,
            (unsigned long)*(const uint64_t *)fixed,
            proto_fixed_size(type) >= 16 ? (unsigned long)((const uint64_t *)fixed)[1] : 0ul);
  size_t len = proto_build(buf, cap, type, ++w->req, w->rank, PROTO_NO_DEST, 0, -1, fixed, tail,
                           ntail);
  S->requests++;
  sim_send(S, w->rank, w->leaf, buf, len);
  if (buf != small) free(buf);
}

static void send_req(sim *S, sim_worker *w, unsigned type, const void *fixed) {
  send_req_tail(S, w, type, fixed, NULL, 0);
}

/* A region of this worker (or the root region) to allocate in. */
static rid_t pick_region(sim *S, sim_worker *w) {
  size_t idx[64], n = live_regions(w, idx, 64);
  if (n == 0 || rnd(&S->rng) % 5 == 0) return REGION_ROOT;
  return w->regs[idx[rnd(&S->rng) % n]].rid;
}

/* A level the tree has (up to 3), or -1 (the default: a leaf) when allowed. */
static int level_hint(sim *S, bool or_default) {
  uint64_t levels = S->tree.levels < 3 ? (uint64_t)S->tree.levels : 3;
  return or_default ? (int)(rnd(&S->rng) % (levels + 1)) - 1 : (int)(rnd(&S->rng) % levels);
}

/* First a public region, then an object pinned in it: neither is ever freed nor handed over;
 * other workers ask about them, to be refused. False once both are made. */
static bool start_setup(sim *S, sim_worker *w) {
  if (w->public_index < 0) {
    proto_ralloc b = {.parent = REGION_ROOT, .level_hint = level_hint(S, false)};
    w->op = OP_PUBLIC;
    send_req(S, w, MSG_RALLOC, &b);
    return true;
  }
  if (w->pinned) return false;
  proto_alloc b = {.size = 64, .rid = S->publics[w->public_index].rid, .n = 1};
  w->op = OP_PIN;
  send_req(S, w, MSG_ALLOC, &b);
  return true;
}

/* ... under one of its regions or the root, half the time under the last region handed to it
 * while it lives: that one's scheduler may be on another branch, then placement goes by load. */
static void start_ralloc(sim *S, sim_worker *w) {
  bool got = w->got != REGION_ROOT && reg_alive(w, w->got) && rnd(&S->rng) % 2;
  proto_ralloc b = {.parent = got ? w->got : pick_region(S, w)};
  b.level_hint = level_hint(S, true);
  w->op = OP_RALLOC;
  w->rid = b.parent;
  send_req(S, w, MSG_RALLOC, &b);
}

static void start_alloc(sim *S, sim_worker *w, bool batch) {
  static const size_t sizes[] = {8, 64, 100, 192, 256, 1000, 4096, 9000};
  proto_alloc b = {.size = batch ? 256 : sizes[rnd(&S->rng) % 8], .n = 1};
  b.rid = pick_region(S, w);
  if (batch) b.n = 1 + (uint32_t)(rnd(&S->rng) % 8);
  w->op = batch ? OP_BALLOC : OP_ALLOC;
  w->size = b.size;
  w->n = b.n;
  w->rid = b.rid;
  send_req(S, w, batch ? MSG_BALLOC : MSG_ALLOC, &b);
}

/* What a worker hands over when it sends a request is no longer its own, from that moment:
 * the scheduler may give the memory to someone else before the reply comes back. */
static void start_free(sim *S, sim_worker *w) {
  if (!w->nobjs) return;
  w->arg_index = rnd(&S->rng) % w->nobjs;
  proto_addr b = {.addr = w->objs[w->arg_index].addr};
  w->op = OP_FREE;
  drop_obj(S, w, w->arg_index);
  send_req(S, w, MSG_FREE, &b);
}

static void start_realloc(sim *S, sim_worker *w) {
  if (!w->nobjs) return;
  w->arg_index = rnd(&S->rng) % w->nobjs;
  proto_realloc b = {.addr = w->objs[w->arg_index].addr, .size = 64 + rnd(&S->rng) % 2000,
                     .rid = REGION_NONE};
  w->op = OP_REALLOC;
  w->size = b.size;
  w->rid = w->objs[w->arg_index].rid;
  drop_obj(S, w, w->arg_index);
  send_req(S, w, MSG_REALLOC, &b);
}

static void start_query(sim *S, sim_worker *w) {
  if (!w->nobjs) return;
  w->arg_index = rnd(&S->rng) % w->nobjs;
  proto_addr b = {.addr = w->objs[w->arg_index].addr + rnd(&S->rng) % 8};
  w->op = OP_QUERY;
  send_req(S, w, MSG_QUERY, &b);
}

static void rfree_shadow(sim *S, sim_worker *w, rid_t top) {
  for (size_t i = 0; i < w->nobjs;)
    if (reg_within(w, w->objs[i].rid, top)) drop_obj(S, w, i); else i++;
  bool *dies = calloc(w->nregs + 1, sizeof *dies); /* decide first: marking breaks the chains */
  if (!dies) abort();
  for (size_t i = 0; i < w->nregs; i++) dies[i] = w->regs[i].alive && reg_within(w, w->regs[i].rid, top);
  for (size_t i = 0; i < w->nregs; i++)
    if (dies[i]) w->regs[i].alive = false;
  free(dies);
}

/* pack or rfree one of its regions (which holds every descendant: only whole top regions are
 * ever handed over) */
static void start_by_rid(sim *S, sim_worker *w, bool rfree) {
  size_t idx[64], n = live_regions(w, idx, 64);
  if (!n) return;
  w->arg_index = idx[rnd(&S->rng) % n];
  proto_rid b = {.rid = w->regs[w->arg_index].rid};
  w->op = rfree ? OP_RFREE : OP_PACK;
  if (rfree) rfree_shadow(S, w, b.rid);
  send_req(S, w, rfree ? MSG_RFREE : MSG_PACK, &b);
}

/* Wrong usage: a wild pointer inside the GAS, or a region nobody has (IDs in the middle of the
 * space stay with the root, which never creates that many). */
static void start_wrong(sim *S, sim_worker *w, bool wild) {
  if (wild) {
    proto_addr b = {.addr = AH_GAS_DEFAULT_BASE + (rnd(&S->rng) % (AH_GAS_DEFAULT_SIZE >> 6)) * 64 + 8};
    w->op = OP_BAD_FREE;
    send_req(S, w, MSG_FREE, &b);
    return;
  }
  proto_alloc b = {.size = 64, .rid = 0x80000000u + (uint32_t)(rnd(&S->rng) % 1000), .n = 1};
  w->op = OP_BAD_REGION;
  send_req(S, w, MSG_ALLOC, &b);
}

/* Lease a few slabs, as a worker's allocation cache does (one time in four, up to 40: the
 * scheduler carves those as class runs, which hand-backs of some of their slabs then cut). */
static void start_lease(sim *S, sim_worker *w) {
  static const size_t sizes[] = {8, 64, 100, 192, 256, 1000, 3000, 4096};
  uint32_t want = 1 + (uint32_t)(rnd(&S->rng) % (rnd(&S->rng) % 4 ? 4 : 40));
  proto_lease b = {.size = sizes[rnd(&S->rng) % 8], .rid = pick_region(S, w), .want = want,
                   .min = 1 + (uint32_t)(rnd(&S->rng) % want)};
  w->op = OP_LEASE;
  w->size = b.size;
  w->n = b.want;
  w->rid = b.rid;
  send_req(S, w, MSG_LEASE, &b);
}

/* One lease into an UNLEASE's tail, with random live slots: the live slots of a region still
 * alive become this worker's objects; those of a region it freed meanwhile (a zombie) must come
 * back counted as dropped. */
static void unlease_one(sim *S, sim_worker *w, slease l, uint64_t *pair) {
  unsigned cap = (unsigned)(AH_SLAB_SIZE / l.slot);
  uint64_t all = cap == 64 ? ~0ull : (1ull << cap) - 1, live = rnd(&S->rng) & all;
  if (rnd(&S->rng) % 3 == 0) live = 0;
  else if (rnd(&S->rng) % 2 == 0) live = all; /* full: pieces of a run stay runs */
  pair[0] = l.addr;
  pair[1] = live;
  shadow_del(S, l.addr); /* the slab was ours whole; now only its live slots are */
  if (reg_alive(w, l.rid)) {
    for (unsigned k = 0; k < cap; k++)
      if ((live >> k) & 1) add_obj(S, w, l.addr + (uintptr_t)k * l.slot, l.slot, l.rid);
  } else {
    w->expect_dropped += (size_t)__builtin_popcountll(live);
    S->res->zombie_returns++;
  }
}

/* Hand back leases of scheduler sched: each with chance 3/4 (at least one), or (flush) every
 * one in region top's subtree, as the worker library flushes its cache before a hand-over. */
static void unlease_send(sim *S, sim_worker *w, int32_t sched, bool flush, rid_t top) {
  uint64_t *tail = malloc(2 * w->nleases * sizeof *tail);
  if (!tail) abort();
  uint32_t n = 0;
  w->expect_dropped = 0;
  for (size_t i = 0; i < w->nleases;) {
    slease l = w->leases[i];
    bool take = l.sched == sched && (flush ? reg_within(w, l.rid, top) : rnd(&S->rng) % 4 != 0);
    if (!take) {
      i++;
      continue;
    }
    unlease_one(S, w, l, &tail[2 * n++]);
    w->leases[i] = w->leases[--w->nleases];
  }
  if (n == 0) { /* drew none: take the first one of that scheduler, empty */
    size_t i = 0;
    while (w->leases[i].sched != sched) i++;
    slease l = w->leases[i];
    tail[0] = l.addr;
    tail[1] = 0;
    n = 1;
    shadow_del(S, l.addr);
    if (!reg_alive(w, l.rid)) S->res->zombie_returns++;
    w->leases[i] = w->leases[--w->nleases];
  }
  proto_unlease b = {.n = n};
  w->op = OP_UNLEASE;
  send_req_tail(S, w, MSG_UNLEASE, &b, tail, 2 * n);
  free(tail);
}

static void start_unlease(sim *S, sim_worker *w) {
  unlease_send(S, w, w->leases[rnd(&S->rng) % w->nleases].sched, false, REGION_NONE);
}

uint32_t sim_worker_leased(const sim *S, int i, uint64_t r, uint64_t *slab) {
  const sim_worker *w = &S->workers[i];
  if (!w->nleases) return 0;
  *slab = w->leases[r % w->nleases].addr;
  return 1;
}

/* ---- the hand-over rule ---- */

/* Hand one of its top regions (parent: the root), with its descendants, to another
 * well-behaved worker: a PACKV_HANDOVER naming it and up to MAX_NAMED of its objects (checked
 * and packed, not handed), now and then without ranges. Leased slabs in that subtree go back
 * first: this op is then their UNLEASE, the hand-over a later one. */
static void start_handover(sim *S, sim_worker *w) {
  size_t idx[64], n = 0;
  for (size_t i = 0; i < w->nregs && n < 64 && S->cfg->workers > 1; i++)
    if (w->regs[i].alive && w->regs[i].parent == REGION_ROOT) idx[n++] = i;
  if (n == 0) return;
  size_t top = idx[rnd(&S->rng) % n];
  rid_t rid = w->regs[top].rid;
  for (size_t i = 0; i < w->nleases; i++)
    if (reg_within(w, w->leases[i].rid, rid)) {
      unlease_send(S, w, w->leases[i].sched, true, rid);
      return;
    }
  uint64_t tail[1 + MAX_NAMED] = {rid};
  w->nnamed = 0;
  for (int k = 0; k < MAX_NAMED && w->nobjs; k++) {
    sobj o = w->objs[rnd(&S->rng) % w->nobjs];
    if (rnd(&S->rng) % 2 || (w->nnamed && w->named[0].addr == o.addr)) continue;
    w->named[w->nnamed++] = o;
    tail[w->nnamed] = o.addr;
  }
  w->op = OP_HANDOVER;
  w->arg_index = top;
  w->peer = other_worker(S, w);
  w->flags = PACKV_HANDOVER | (rnd(&S->rng) % 3 == 0 ? PACKV_NO_RANGES : 0);
  proto_packv b = {.nreg = 1, .nobj = (uint32_t)w->nnamed, .flags = w->flags,
                   .peer = S->workers[w->peer].rank};
  send_req_tail(S, w, MSG_PACKV, &b, tail, 1 + (uint32_t)w->nnamed);
}

/* Send the request of kind k about region rid (F_FREE, F_REALLOC: about object addr). */
static void send_foreign(sim *S, sim_worker *w, enum fkind k, rid_t rid, uintptr_t addr) {
  w->op = OP_FOREIGN;
  w->fkind = k;
  w->rid = rid;
  w->size = 64;
  if (k == F_ALLOC || k == F_BALLOC) {
    proto_alloc b = {.size = 64, .rid = rid, .n = k == F_ALLOC ? 1 : 2 + (uint32_t)(rnd(&S->rng) % 4)};
    send_req(S, w, k == F_ALLOC ? MSG_ALLOC : MSG_BALLOC, &b);
  } else if (k == F_RALLOC) {
    proto_ralloc b = {.parent = rid, .level_hint = level_hint(S, true)};
    send_req(S, w, MSG_RALLOC, &b);
  } else if (k == F_LEASE) {
    proto_lease b = {.size = 64, .rid = rid, .want = 2, .min = 1};
    send_req(S, w, MSG_LEASE, &b);
  } else if (k == F_RFREE || k == F_PACK) {
    proto_rid b = {.rid = rid};
    send_req(S, w, k == F_RFREE ? MSG_RFREE : MSG_PACK, &b);
  } else if (k == F_HANDOVER) {
    proto_packv b = {.nreg = 1, .flags = PACKV_HANDOVER, .peer = S->workers[other_worker(S, w)].rank};
    uint64_t tail[1] = {rid};
    send_req_tail(S, w, MSG_PACKV, &b, tail, 1);
  } else if (k == F_FREE) {
    proto_addr b = {.addr = addr};
    send_req(S, w, MSG_FREE, &b);
  } else {
    proto_realloc b = {.addr = addr, .size = 200, .rid = REGION_NONE};
    send_req(S, w, MSG_REALLOC, &b);
  }
}

/* A region another well-behaved worker holds now, or one this worker handed over (its holder
 * may free it, or hand it back, before the request arrives): alloc or pack there. (No ralloc:
 * its ID may be reused meanwhile by a region a hostile worker hands to this one, and a child
 * made under that would change what the hostile worker takes back.) */
static bool start_foreign_live(sim *S, sim_worker *w) {
  sgave g;
  if (w->ngave && rnd(&S->rng) % 2) {
    g = w->gave[rnd(&S->rng) % (w->ngave < GAVE_KEEP ? w->ngave : GAVE_KEEP)];
  } else {
    const sim_worker *x = &S->workers[other_worker(S, w)];
    size_t idx[64], n = live_regions(x, idx, 64);
    if (!n) return false;
    const sreg *r = &x->regs[idx[rnd(&S->rng) % n]];
    g = (sgave){r->rid, r->serial};
  }
  if (reg_alive(w, g.rid)) return false; /* its own again (or its ID reused for one of its own) */
  send_foreign(S, w, rnd(&S->rng) % 2 ? F_ALLOC : F_PACK, g.rid, 0);
  w->serial = g.serial;
  return true;
}

/* Ask what only another worker may ask: of a public region (or its pinned object), which must
 * be refused (EPERM), or (a third of the time) of a region another well-behaved worker holds. */
static void start_foreign(sim *S, sim_worker *w) {
  if (S->cfg->workers > 1 && rnd(&S->rng) % 3 == 0 && start_foreign_live(S, w)) return;
  int k = sim_public_other(S, w->rank, false);
  if (k < 0) return;
  const sim_public *p = &S->publics[k];
  enum fkind f = (enum fkind)(rnd(&S->rng) % F_KINDS);
  if ((f == F_FREE || f == F_REALLOC) && !p->pinned) f = F_ALLOC;
  if (f == F_HANDOVER && S->cfg->workers < 2) f = F_PACK;
  send_foreign(S, w, f, p->rid, p->pinned);
  w->serial = 0;
}

static void start_op(sim *S, sim_worker *w) {
  w->op = OP_NONE;
  if (start_setup(S, w)) return;
  if (rnd(&S->rng) % 8 == 0) { /* the allocation cache's traffic */
    if (w->nleases && rnd(&S->rng) % 2) start_unlease(S, w);
    else if (w->nleases < 160) start_lease(S, w);
    if (w->op != OP_NONE) return;
  }
  uint64_t r = rnd(&S->rng) % 100;
  size_t idx[64];
  if (r < 14) {
    if (live_regions(w, idx, 64) < 12) start_ralloc(S, w);
  } else if (r < 43) start_alloc(S, w, false);
  else if (r < 50) start_alloc(S, w, true);
  else if (r < 68) start_free(S, w);
  else if (r < 72) start_realloc(S, w);
  else if (r < 77) start_query(S, w);
  else if (r < 83) start_by_rid(S, w, false);
  else if (r < 89) start_by_rid(S, w, true);
  else if (r < 94) start_handover(S, w);
  else if (r < 97) start_foreign(S, w);
  else start_wrong(S, w, r < 98);
  if (w->op == OP_NONE) { /* nothing applicable: allocate in the root region */
    proto_alloc b = {.size = 64, .rid = REGION_ROOT, .n = 1};
    w->op = OP_ALLOC;
    w->size = 64;
    w->rid = REGION_ROOT;
    send_req(S, w, MSG_ALLOC, &b);
  }
}

/* ---- replies ---- */
static void expect_status(sim *S, sim_worker *w, int got, int want, const char *what) {
  if (got != want) fail(S, "worker %d: %s answered %d, expected %d", w->rank, what, got, want);
}

static bool covered(uintptr_t a, size_t size, const uint64_t *tail, uint32_t ntail) {
  for (uint32_t j = 0; j + 1 < ntail; j += 2)
    if (a >= tail[j] && a + size <= tail[j] + tail[j + 1]) return true;
  return false;
}

static void check_pack(sim *S, sim_worker *w, rid_t top, const uint64_t *tail, uint32_t ntail) {
  for (size_t i = 0; i < w->nobjs; i++)
    if (reg_within(w, w->objs[i].rid, top) && !covered(w->objs[i].addr, w->objs[i].size, tail, ntail))
      fail(S, "worker %d: pack of region %u misses object %#lx", w->rank, top,
           (unsigned long)w->objs[i].addr);
  for (uint32_t j = 2; j + 1 < ntail; j += 2)
    if (tail[j] <= tail[j - 2] + tail[j - 1]) fail(S, "worker %d: pack ranges not sorted/coalesced", w->rank);
}

static void on_lease_reply(sim *S, sim_worker *w, int st, const uint64_t *t, uint32_t nt) {
  if (st) return;
  uint32_t want_slot = (uint32_t)ah_round_up(w->size, AH_SLOT_ALIGN);
  if (nt < 3 || nt - 2 > w->n || t[1] != want_slot) {
    fail(S, "worker %d: lease answered %u words, slot %lu", w->rank, nt, nt > 1 ? (unsigned long)t[1] : 0ul);
    return;
  }
  for (uint32_t i = 2; i < nt; i++) {
    if (t[i] % AH_SLAB_SIZE) fail(S, "worker %d: leased slab %#lx not slab-aligned", w->rank, (unsigned long)t[i]);
    if (w->nleases == w->leasecap) {
      w->leasecap = w->leasecap ? 2 * w->leasecap : 16;
      w->leases = realloc(w->leases, w->leasecap * sizeof *w->leases);
      if (!w->leases) abort();
    }
    w->leases[w->nleases++] = (slease){t[i], want_slot, w->rid, (int32_t)t[0]};
    shadow_add(S, t[i], AH_SLAB_SIZE);
    S->res->leases++;
  }
}

static void on_setup_reply(sim *S, sim_worker *w, int st, const uint64_t *t, uint32_t nt) {
  bool pin = w->op == OP_PIN;
  expect_status(S, w, st, 0, pin ? "alloc of the pinned object" : "ralloc of the public region");
  if (st || nt != 1) return;
  if (pin) {
    S->publics[w->public_index].pinned = t[0];
    shadow_add(S, t[0], 64);
    w->pinned = true;
  } else {
    S->publics[S->npublic] = (sim_public){(rid_t)t[0], w->rank, 0};
    w->public_index = S->npublic++;
  }
}

/* A hand-over committed: region top with its live descendants and their objects leave from's
 * books for to's (to may have an op in flight: what that op names stays where it is). */
static void hand_subtree(sim *S, sim_worker *from, sim_worker *to, size_t top_index) {
  sreg top = from->regs[top_index];
  for (size_t i = 0; i < from->nobjs;) {
    if (!reg_within(from, from->objs[i].rid, top.rid)) {
      i++;
      continue;
    }
    push_obj(to, from->objs[i]);
    from->objs[i] = from->objs[--from->nobjs];
  }
  bool *moves = calloc(from->nregs + 1, sizeof *moves); /* decide first: marking breaks chains */
  if (!moves) abort();
  for (size_t i = 0; i < from->nregs; i++)
    moves[i] = from->regs[i].alive && reg_within(from, from->regs[i].rid, top.rid);
  for (size_t i = 0; i < from->nregs; i++)
    if (moves[i]) {
      push_reg(to, from->regs[i]);
      from->regs[i].alive = false; /* never used again by from */
    }
  free(moves);
  from->gave[from->ngave++ % GAVE_KEEP] = (sgave){top.rid, top.serial};
  to->got = top.rid;
  S->res->handovers++;
}

static void on_handover_reply(sim *S, sim_worker *w, int st, const uint64_t *t, uint32_t nt) {
  expect_status(S, w, st, 0, "hand-over");
  if (st) return;
  rid_t top = w->regs[w->arg_index].rid;
  if (w->flags & PACKV_NO_RANGES) {
    if (nt) fail(S, "worker %d: hand-over without ranges answered %u words", w->rank, nt);
  } else {
    check_pack(S, w, top, t, nt);
    for (size_t i = 0; i < w->nnamed; i++)
      if (!covered(w->named[i].addr, w->named[i].size, t, nt))
        fail(S, "worker %d: hand-over misses the named object %#lx", w->rank,
             (unsigned long)w->named[i].addr);
  }
  hand_subtree(S, w, &S->workers[w->peer], w->arg_index);
}

/* A request about what another worker holds: EPERM; for a region another well-behaved worker
 * held (serial), ENOENT if it was freed meanwhile, and success if it was handed to this
 * worker meanwhile (then the object is this worker's), or its ID reused for a region a
 * hostile worker handed to this one (then the object is left there, unknown to both). */
static void on_foreign_reply(sim *S, sim_worker *w, int st, const uint64_t *t, uint32_t nt) {
  S->res->errors_expected++;
  if (st == EPERM) {
    S->res->nonholder_refused++;
    return;
  }
  if (w->serial && st == ENOENT && !serial_holder(S, w->serial)) return;
  bool coming = w->serial && st == 0 && rid_coming(S, w, w->rid);
  if (coming || (w->serial && st == 0 && hostile_gave(S, w->rid, w->rank))) {
    if (w->fkind == F_ALLOC && nt != 1)
      fail(S, "worker %d: alloc answered %u words", w->rank, nt);
    else if (w->fkind == F_ALLOC && coming)
      add_obj(S, w, t[0], w->size, w->rid);
    return;
  }
  fail(S, "worker %d: %s of %s %u, which another worker holds, answered %d (expected EPERM%s)",
       w->rank, fkind_names[w->fkind], w->fkind >= F_FREE ? "the object pinned in region" : "region",
       w->rid, st, w->serial ? " or, once it is freed, ENOENT" : "");
}

static void check_reply(sim *S, sim_worker *w, int st, const uint64_t *t, uint32_t nt) {
  switch (w->op) {
    case OP_PUBLIC: case OP_PIN: on_setup_reply(S, w, st, t, nt); break;
    case OP_RALLOC:
      expect_status(S, w, st, 0, "ralloc");
      if (st == 0 && nt == 1) add_reg(S, w, (rid_t)t[0], w->rid);
      break;
    case OP_ALLOC: case OP_REALLOC:
      expect_status(S, w, st, 0, w->op == OP_ALLOC ? "alloc" : "realloc");
      if (st == 0) add_obj(S, w, t[0], w->size, w->rid);
      break;
    case OP_BALLOC:
      expect_status(S, w, st, 0, "balloc");
      if (st == 0 && nt != w->n) fail(S, "worker %d: balloc returned %u of %zu", w->rank, nt, w->n);
      for (uint32_t i = 0; st == 0 && i < nt; i++) add_obj(S, w, t[i], w->size, w->rid);
      break;
    case OP_FREE: expect_status(S, w, st, 0, "free"); break;
    case OP_QUERY:
      expect_status(S, w, st, 0, "query");
      if (st == 0 && (t[0] != w->objs[w->arg_index].rid || t[1] != w->objs[w->arg_index].addr))
        fail(S, "worker %d: query of %#lx answered region %lu start %#lx", w->rank,
             (unsigned long)w->objs[w->arg_index].addr, (unsigned long)t[0], (unsigned long)t[1]);
      break;
    case OP_PACK:
      expect_status(S, w, st, 0, "pack");
      if (st == 0) check_pack(S, w, w->regs[w->arg_index].rid, t, nt);
      break;
    case OP_RFREE: expect_status(S, w, st, 0, "rfree"); break;
    case OP_BAD_FREE: /* EINVAL; EPERM when it falls in an object another worker holds */
      S->res->errors_expected++;
      if (st == EPERM) S->res->nonholder_refused++;
      else expect_status(S, w, st, EINVAL, "free of a wild pointer");
      break;
    case OP_BAD_REGION:
      S->res->errors_expected++;
      expect_status(S, w, st, ENOENT, "alloc in a nonexistent region");
      break;
    case OP_LEASE:
      expect_status(S, w, st, 0, "lease");
      on_lease_reply(S, w, st, t, nt);
      break;
    case OP_UNLEASE:
      expect_status(S, w, st, 0, "unlease");
      if (st == 0 && (nt != 1 || t[0] != w->expect_dropped))
        fail(S, "worker %d: unlease dropped %lu live slots, expected %zu", w->rank,
             nt ? (unsigned long)t[0] : 0ul, w->expect_dropped);
      break;
    case OP_HANDOVER: on_handover_reply(S, w, st, t, nt); break;
    case OP_FOREIGN: on_foreign_reply(S, w, st, t, nt); break;
    case OP_NONE: fail(S, "worker %d: reply with no request in flight", w->rank); break;
  }
}

static void on_reply(sim *S, sim_worker *w, const proto_msg *m) {
  if (S->trace)
    fprintf(stderr, "trace: worker %d op %d status %d tail[0] %#lx n %u\n", w->rank, (int)w->op,
            m->h->status, m->ntail ? (unsigned long)m->tail[0] : 0ul, m->ntail);
  if (m->h->req != w->req) fail(S, "worker %d: reply to request %lu, expected %lu", w->rank,
                                (unsigned long)m->h->req, (unsigned long)w->req);
  S->res->replies_checked++;
  check_reply(S, w, m->h->status, m->tail, m->ntail);
  w->op = OP_NONE;
  if (--w->ops_left > 0) {
    start_op(S, w);
  } else if (w->nleases) { /* as sys_finalize flushes: every lease back before the end */
    start_unlease(S, w);
  } else {
    S->workers_finished++;
    sim_maybe_finalize_all(S);
  }
}

/* sys_finalize is collective: after a barrier of all workers, each tells its leaf. */
void sim_maybe_finalize_all(sim *S) {
  if (S->workers_finished != S->cfg->workers || S->hostiles_finished < S->cfg->hostile) return;
  S->workers_finished = -1; /* once */
  for (int i = 0; i < S->cfg->workers; i++) {
    sim_worker *x = &S->workers[i];
    unsigned char buf[sizeof(proto_header)];
    size_t len = proto_build(buf, sizeof buf, MSG_FINALIZE, ++x->req, x->rank, PROTO_NO_DEST,
                             0, -1, NULL, NULL, 0);
    S->requests++;
    sim_send(S, x->rank, x->leaf, buf, len);
    x->finalized = true;
  }
  for (int k = 0; k < S->cfg->hostile; k++) hostile_finalize(S, k);
}

/* ---- setup and the delivery loop ---- */
static void inject_garbage(sim *S) {
  for (int i = 0; i < S->cfg->garbage; i++) {
    int w = S->cfg->schedulers + (int)(rnd(&S->rng) % (uint64_t)S->tree.nworkers);
    unsigned char buf[96];
    for (size_t j = 0; j < sizeof buf; j++) buf[j] = (unsigned char)rnd(&S->rng);
    size_t len = 1 + rnd(&S->rng) % sizeof buf;
    if (i % 2) { /* a plausible header with lies inside */
      proto_header *h = (proto_header *)buf;
      h->magic = PROTO_MAGIC;
      h->version = PROTO_VERSION;
      h->type = (uint8_t)(1 + rnd(&S->rng) % (MSG_TYPE_END + 2));
      len = sizeof *h + rnd(&S->rng) % 64;
      h->length = (uint32_t)(rnd(&S->rng) % 3 ? len - sizeof *h : rnd(&S->rng));
    }
    sim_send(S, w, S->tree.parent[w], buf, len);
  }
}

/* Worker j of all (well-behaved and hostile) is hostile: the hostile ones spread evenly. */
static bool is_hostile(const sim_config *c, int j) {
  long all = (long)c->workers + c->hostile;
  return (long)(j + 1) * c->hostile / all > (long)j * c->hostile / all;
}

/* Ranks to roles: S->role[rank] is a well-behaved index, or -1 - a hostile index. */
static int assign_roles(sim *S) {
  const sim_config *c = S->cfg;
  S->role = calloc((size_t)S->tree.nranks, sizeof *S->role);
  if (!S->role) return ENOMEM;
  int nw = 0, nh = 0;
  for (int j = 0; j < c->workers + c->hostile; j++) {
    int rank = c->schedulers + j;
    if (is_hostile(c, j)) {
      S->role[rank] = -1 - nh++;
      continue;
    }
    sim_worker *w = &S->workers[nw];
    w->index = nw;
    w->public_index = -1;
    S->role[rank] = nw++;
    w->rank = rank;
    w->leaf = S->tree.parent[rank];
    w->ops_left = c->ops;
  }
  return 0;
}

static int setup(sim *S) {
  const sim_config *c = S->cfg;
  if (sched_tree_heap(&S->tree, c->schedulers, c->fanout, c->workers + c->hostile)) return EINVAL;
  int n = S->tree.nranks;
  S->chans = calloc((size_t)n * n, sizeof *S->chans);
  S->active = calloc((size_t)n * n, sizeof *S->active);
  S->servers = calloc((size_t)n, sizeof *S->servers);
  S->workers = calloc((size_t)c->workers, sizeof *S->workers);
  S->publics = calloc((size_t)c->workers + (size_t)c->hostile, sizeof *S->publics);
  S->parts = calloc((size_t)n, sizeof *S->parts);
  if (!S->chans || !S->active || !S->servers || !S->workers || !S->publics || !S->parts)
    return ENOMEM;
  for (size_t i = 0; i < (size_t)n * n; i++) S->chans[i].active_slot = -1;
  sched_transport tx = {transport_send, S};
  for (int r = 0; r < c->schedulers; r++)
    if (sched_server_create(&S->servers[r], &S->tree, r, &c->sched, tx)) return ENOMEM;
  for (int r = 0; r < c->schedulers; r++) sched_server_boot(S->servers[r]);
  trie_init(&S->live, 30, trie_heap_source());
  trie_init(&S->hlive, 30, trie_heap_source());
  if (assign_roles(S) || hostile_setup(S)) return ENOMEM;
  inject_garbage(S);
  for (int i = 0; i < c->workers; i++) start_op(S, &S->workers[i]);
  for (int k = 0; k < c->hostile; k++) hostile_start(S, k);
  return 0;
}

static void teardown(sim *S) {
  int n = S->tree.nranks;
  for (int r = 0; S->servers && r < n; r++) sched_server_destroy(S->servers[r]);
  for (int i = 0; S->workers && i < S->cfg->workers; i++) {
    free(S->workers[i].objs);
    free(S->workers[i].regs);
    free(S->workers[i].leases);
  }
  for (size_t i = 0; S->chans && i < (size_t)n * n; i++)
    while (S->chans[i].head) {
      msg *m = S->chans[i].head;
      S->chans[i].head = m->next;
      free(m);
    }
  hostile_teardown(S);
  trie_clear(&S->live);
  trie_clear(&S->hlive);
  free(S->role);
  free(S->chans);
  free(S->active);
  free(S->servers);
  free(S->workers);
  free(S->publics);
  for (int r = 0; S->parts && r < n; r++) free(S->parts[r].w);
  free(S->parts);
  sched_tree_free(&S->tree);
}

/* The library's defaults: one scheduler and fan-out 8 (src/job/launch.h), the scheduler's
 * trading sizes (sched_config_default); antheap-sim then reads the ANTHEAP_* variables. */
sim_config sim_config_default(void) {
  sim_config c = {.schedulers = 1, .fanout = 8, .workers = 1000, .ops = 40, .seed = 1,
                  .hostile_ops = 200, .storm_factor = 16, .storm_const = 4096,
                  .sched = sched_config_default()};
  c.sched.quiet = true;
  return c;
}

/* One message to its rank: a scheduler, a well-behaved worker or a hostile one. */
static void deliver(sim *S, const channel *c, const msg *m) {
  if (S->tree.is_sched[c->to]) {
    sched_server_handle(S->servers[c->to], c->from, m->data, m->len);
    return;
  }
  int role = S->role[c->to];
  if (role < 0) {
    hostile_on_message(S, -1 - role, m->data, m->len);
    return;
  }
  proto_msg pm;
  if (proto_decode(m->data, m->len, &pm) || pm.h->type != MSG_REPLY)
    fail(S, "worker %d got a malformed or unexpected message", c->to);
  else if (sim_join_reply(S, c->to, &pm)) /* a pack's parts: the whole reply at the last */
    on_reply(S, &S->workers[role], &pm);
}

/* Storm: far more messages than the workers' requests explain. */
static bool storm(sim *S) {
  uint64_t bound = (uint64_t)S->cfg->storm_factor * S->requests + S->cfg->storm_const;
  if (!S->cfg->storm_factor || S->messages <= bound) return false;
  sim_fail(S, SIM_FAIL_STORM, true, "storm: %lu messages delivered for %lu requests sent",
           (unsigned long)S->messages, (unsigned long)S->requests);
  return true;
}

/* Deliver until nothing moves; then unanswered hostile requests time out (and the hostile
 * workers go on) until they too are done. */
static void deliver_all(sim *S) {
  FILE *log = S->cfg->log ? S->cfg->log : stderr;
  while (S->res->ok) {
    if (S->nactive == 0 && !hostile_on_quiet(S)) break;
    if (S->nactive == 0) continue;
    channel *c = &S->chans[S->active[rnd(&S->rng) % (uint64_t)S->nactive]];
    msg *m = channel_pop(S, c);
    S->messages++;
    deliver(S, c, m);
    free(m);
    if (storm(S)) break;
    if (S->cfg->verbose && S->messages % 100000 == 0)
      fprintf(log, "sim: %lu messages delivered\n", (unsigned long)S->messages);
  }
}

int sim_run(const sim_config *cfg, sim_result *res) {
  *res = (sim_result){.ok = true, .conservation = 1};
  sim S = {.cfg = cfg, .rng = cfg->seed * 0x9E3779B97F4A7C15ull + 1, .res = res,
           .trace = getenv("SIM_TRACE") != NULL};
  int rc = setup(&S);
  if (rc) {
    snprintf(res->failure, sizeof res->failure, "setup failed: %s", rc == EINVAL ? "bad shape" : "no memory");
    res->ok = false;
    teardown(&S);
    return rc;
  }
  deliver_all(&S);
  res->messages = S.messages;
  res->requests = S.requests;
  res->continued = S.continued;
  for (int r = 0; res->ok && r < cfg->schedulers; r++)
    if (!sched_server_done(S.servers[r]))
      sim_fail(&S, SIM_FAIL_HANG, true, "scheduler %d never finished shutdown", r);
  for (int i = 0; res->ok && i < cfg->workers; i++)
    if (!S.workers[i].finalized)
      sim_fail(&S, SIM_FAIL_HANG, true, "worker %d never finished", S.workers[i].rank);
  res->conservation = sched_server_conservation(S.servers[0]);
  if (res->ok && res->conservation != 0)
    sim_fail(&S, SIM_FAIL_LOST, true, "the root did not get every page and ID back");
  if (res->ok) {
    sched_stats st = {0};
    uint64_t malformed = 0;
    for (int r = 0; r < cfg->schedulers; r++) {
      sched_server_get_stats(S.servers[r], &st);
      malformed += st.malformed;
      res->placed_by_load += st.placed_by_load;
    }
    uint64_t dropped = (uint64_t)cfg->garbage + res->hostile_garbage;
    if (malformed != dropped)
      fail(&S, "%lu malformed messages counted, %lu sent to be dropped", (unsigned long)malformed,
           (unsigned long)dropped);
  }
  teardown(&S);
  if (res->failure[0]) res->ok = false; /* hostile findings counted on to the end */
  return res->ok ? 0 : -1;
}

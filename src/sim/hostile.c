/* hostile.c: hostile workers, the protocol fuzzer. Each one sends cfg->hostile_ops
 * messages to the schedulers: well-formed requests with hostile arguments (sizes near 2^64
 * and past the GAS, counts of billions, wrong and interior addresses, addresses at the GAS
 * end, unknown and near-max region IDs, level hints out of range, leases and returns of slabs
 * that are not theirs), forged headers and random bytes. A message the schedulers can read as
 * this worker's request must be answered (else: a silent drop); anything else must be dropped
 * and counted as malformed. Replies are checked against what the request makes certain (a size
 * past the GAS cannot succeed), and whatever a hostile worker is given must overlap no live
 * object.
 *
 * The hand-over rule: a hostile worker also asks, with every request a worker can send, what
 * only another worker may ask: alloc, balloc, lease, ralloc, rfree, pack and PACKV in regions
 * another worker holds for sure (the public regions of the others, sim_internal.h, and the
 * regions it handed over itself), free and realloc of objects in them (their pinned objects,
 * and those it handed over), reallocs of its own objects into them, PACKVs handing over the
 * root region or regions it does not hold, hand-backs of regions it never handed over. Each
 * must be refused with EPERM (ENOENT for a region that may be gone: a near-max ID may be
 * anybody's or nobody's; EINVAL for an address no object starts at), never accepted: an
 * acceptance is a wrong reply. PACKVs with the flags only schedulers may set (PACKV_COMMIT,
 * PACKV_SKIP_GONE) or a hand-over peer that is itself, a scheduler or no rank must be EINVAL.
 * It hands its own top regions (with descendants and objects) to well-behaved workers, which
 * never learn of them (so the regions stay as handed), and hands some back: both must succeed,
 * and from the hand-over on, what it asks of those regions and objects must be refused.
 *
 * A hostile worker never disturbs the well-behaved ones through legal means: it frees and
 * reallocs only its own objects (or addresses no object can start at, or objects whose region
 * another worker holds), rfrees only its own regions or IDs it cannot hold. Its objects in its
 * own regions (and its leased slabs) are in the hlive trie, where no other allocation may land.
 * Main entries: hostile_start, hostile_on_message, hostile_on_quiet. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

#define MAX_PENDING 4 /* requests one hostile worker has in flight */
#define MAX_REGS 16
#define MAX_TAIL 16 /* tail words of the hostile requests built here */
#define B(e) (1u << (e)) /* an errno in a set of them (all used here are below 32) */

/* EXP_SET: an errno of p.errs (never success). */
enum expect { EXP_ANY, EXP_OK, EXP_FAIL, EXP_ERRNO, EXP_SET };

/* What a request was about, to check its reply and to update the worker's shadow. */
enum hkind {
  HK_ALLOC,
  HK_FREE,
  HK_REALLOC,
  HK_QUERY,
  HK_RALLOC,
  HK_RFREE,
  HK_PACK,
  HK_PACKV,
  HK_LEASE,
  HK_UNLEASE,
  HK_HANDOVER, /* of its own top region, to a well-behaved worker */
  HK_HANDBACK, /* of a region it handed over */
  HK_PUBLIC,   /* its public region */
  HK_PIN,      /* the object pinned in it */
  HK_FRAG      /* a step of the fragmenter (--hostile-fragment): pend.n says which */
};

/* The fragmenter (sim_config.hostile_fragment = F): a hostile worker that fragments the
 * schedulers' free space and free region IDs on purpose, in rounds. FR_REGION makes a region of
 * its own (apart from its shadow of regions, so its other requests never touch it); FR_BALLOC
 * fills it with 2F objects of one slab each; FR_FREE frees every other one (F holes, each
 * kept object a range of its own); FR_PACK packs the region, whose reply must cover every kept
 * object, sorted and coalesced, however many messages it takes;
 * FR_RFREE frees it; FR_IDS makes 2F regions under the root and FR_IDFREE frees every other
 * one (F free-ID holes; the others stay to the end). */
enum frag_step { FR_REGION, FR_BALLOC, FR_FREE, FR_PACK, FR_RFREE, FR_IDS, FR_IDFREE };

typedef struct {
  int phase;       /* enum frag_step */
  int inflight;    /* its requests in flight (a phase ends when they are all back) */
  rid_t rid;       /* the region it fragments, 0 when none */
  uintptr_t *objs; /* its objects in address order (FR_FREE frees the even ones) */
  size_t n, next;  /* objects; the next one to free (or ID region to make or free) */
  rid_t *ids;      /* FR_IDS: the regions made (0: failed) */
  size_t nids;
  rid_t *kept;     /* the regions FR_IDFREE left alive, every round's */
  size_t nkept, keptcap;
} fragger;

typedef struct {
  uintptr_t addr;
  size_t size;
  int reg;
} hobj; /* reg: index, -1 the root */
/* given_to: the well-behaved rank it was handed to (then not alive), -1 if none; handing: a
 * hand-over or hand-back of it is in flight (neither its own nor surely handed over). */
typedef struct {
  rid_t rid;
  int parent;
  bool alive, safe;
  int given_to;
  bool handing;
} hreg; /* parent: -1 root, -2 other */
typedef struct {
  uintptr_t slab;
  uint32_t slot;
  int32_t sched;
} hlease;

typedef struct pend {
  uint64_t req;
  int kind, expect, err;
  unsigned type;
  hobj obj; /* FREE / REALLOC / QUERY of an own object; ALLOC: size and region */
  bool own; /* about an own object or region */
  bool safe; /* what it makes is this worker's alone (goes into hlive) */
  bool sound; /* what it makes stays until the reply comes, unless reg dies meanwhile: its
               * overlap with live objects can be checked */
  uint64_t n; /* BALLOC: the count */
  int reg; /* RALLOC: the parent's index; RFREE / PACK: the region's; HANDOVER / HANDBACK: the
            * top region's */
  rid_t rid; /* QUERY: the region an own object is in; near: the near-max ID named */
  uint32_t slot; /* LEASE: the slot size asked for */
  uint32_t errs; /* EXP_SET: the errnos it may answer, B(e) */
  uint32_t flags; /* PACKV: its flags */
  bool nonholder; /* it names what another worker holds: EPERM is a refusal of the rule */
  bool near; /* it names near-max ID rid: should that be its own after all, anything goes */
  bool badmove; /* a PACKV no worker may send: EINVAL is a refusal of the rule */
} pend;

struct hostile {
  int rank, leaf, index, ops_left;
  uint64_t req;
  pend pend[MAX_PENDING];
  int npend;
  hobj *objs;
  size_t nobjs, objcap;
  hobj *gobjs; /* its objects in regions handed over (or being handed): in hlive still */
  size_t ngobjs, gobjcap;
  hreg regs[MAX_REGS];
  int nregs;
  hlease *leases;
  size_t nleases, leasecap;
  uint64_t gave_up[16]; /* requests timed out (a late answer to one is no news) */
  int ngave_up;
  int setup; /* 0: no public region yet; 1: no pinned object yet; 2: done (or given up) */
  int drain; /* 1 (2): a hand-over (hand-back) waits for every reply to come back first */
  int pub;   /* its public region in S->publics, -1 if none */
  bool leases_slabs; /* even workers lease; odd ones return others' slabs (never theirs) */
  bool done, finalized;
  fragger fr;
};

static uint64_t rnd(sim *S) { return sim_rnd(&S->rng); }
static uint64_t pick(sim *S, uint64_t n) { return rnd(S) % n; }

/* ---- the shadow of what a hostile worker holds alone ---- */
static void hlive_add(sim *S, uintptr_t addr, size_t extent) {
  trie_insert(&S->hlive, sim_live_key(addr), extent);
}
static void hlive_del(sim *S, uintptr_t addr) { trie_delete(&S->hlive, sim_live_key(addr), NULL); }

static void push_hobj(hobj **v, size_t *n, size_t *cap, hobj o) {
  if (*n == *cap) {
    *cap = *cap ? 2 * *cap : 32;
    *v = realloc(*v, *cap * sizeof **v);
    if (!*v) abort(); /* the simulator itself out of memory */
  }
  (*v)[(*n)++] = o;
}

static void add_obj(sim *S, hostile *h, hobj o) {
  push_hobj(&h->objs, &h->nobjs, &h->objcap, o);
  hlive_add(S, o.addr, sim_extent(o.size));
}

/* Take object i out of the shadow (it is about to be freed or moved). */
static hobj take_obj(sim *S, hostile *h, size_t i) {
  hobj o = h->objs[i];
  hlive_del(S, o.addr);
  h->objs[i] = h->objs[--h->nobjs];
  return o;
}

/* Is region index reg (-1: the root) still alive? What lands in a dead one died with it. */
static bool reg_alive(const hostile *h, int reg) {
  return reg == -1 || (reg >= 0 && h->regs[reg].alive);
}

static bool reg_in(const hostile *h, int r, int top) {
  for (int guard = 0; r >= 0 && guard <= MAX_REGS; guard++, r = h->regs[r].parent)
    if (r == top) return true;
  return false;
}

/* Region top dies with its descendants and their objects. */
static void kill_regs(sim *S, hostile *h, int top) {
  for (size_t i = 0; i < h->nobjs;)
    if (h->objs[i].reg >= 0 && reg_in(h, h->objs[i].reg, top))
      take_obj(S, h, i);
    else
      i++;
  bool dies[MAX_REGS];
  for (int r = 0; r < h->nregs; r++) dies[r] = h->regs[r].alive && reg_in(h, r, top);
  for (int r = 0; r < h->nregs; r++)
    if (dies[r]) h->regs[r].alive = false;
}

static int live_reg(sim *S, hostile *h) { /* an alive region of this worker, or -1 */
  int idx[MAX_REGS], n = 0;
  for (int r = 0; r < h->nregs; r++)
    if (h->regs[r].alive) idx[n++] = r;
  return n ? idx[pick(S, (uint64_t)n)] : -1;
}

static int live_safe_reg(sim *S, hostile *h) { /* ... under its own regions only, or -1 */
  int idx[MAX_REGS], n = 0;
  for (int r = 0; r < h->nregs; r++)
    if (h->regs[r].alive && h->regs[r].safe) idx[n++] = r;
  return n ? idx[pick(S, (uint64_t)n)] : -1;
}

/* Is region r handed over for sure (no hand-back of it in flight)? */
static bool reg_given(const hostile *h, int r) {
  return r >= 0 && h->regs[r].given_to >= 0 && !h->regs[r].handing;
}

/* ---- region IDs and addresses to lie with ---- */

/* An ID no region can have: REGION_NONE, or one in the middle the root never hands out. */
static rid_t unknown_rid(sim *S) {
  return pick(S, 2) ? REGION_NONE : 0x80000000u + (rid_t)pick(S, 1000);
}

/* Is rid one of the fragmenter's regions (the one it fragments, this round's, those kept)? */
static bool frag_rid(const hostile *h, rid_t rid) {
  const fragger *f = &h->fr;
  if (rid && f->rid == rid) return true;
  for (size_t i = 0; i < f->nids; i++)
    if (f->ids[i] == rid) return true;
  for (size_t i = 0; i < f->nkept; i++)
    if (f->kept[i] == rid) return true;
  return false;
}

/* Does this worker know rid as one of its regions (in any state) or its public region? */
static bool rid_known(const sim *S, const hostile *h, rid_t rid) {
  for (int r = 0; r < h->nregs; r++)
    if (h->regs[r].rid == rid) return true;
  if (frag_rid(h, rid)) return true;
  return h->pub >= 0 && S->publics[h->pub].rid == rid;
}

/* A near-max ID (the top of the ID space goes to the leaves: anybody's region, or nobody's)
 * that none of its regions has; one in the middle nobody has when the draws keep hitting its
 * own (never REGION_NONE, which a realloc reads as "stay"). It may still turn out its own: a
 * region its RALLOC in flight makes. */
static rid_t near_rid(sim *S, hostile *h) {
  for (int t = 0; t < 4; t++) {
    rid_t rid = (rid_t)(0xFFFFFFFEu - pick(S, (uint64_t)S->cfg->sched.boot_ids * 2 + 1));
    if (!rid_known(S, h, rid)) return rid;
  }
  return 0x80000000u + (rid_t)pick(S, 1000);
}

/* Is near-max ID rid this worker's after all (made by a RALLOC that was in flight)? */
static bool near_own(const sim *S, const hostile *h, rid_t rid) {
  if (rid_known(S, h, rid)) return true;
  for (int i = 0; i < h->npend; i++) /* its answer may still be on its way */
    if (h->pend[i].kind == HK_RALLOC || (h->pend[i].kind == HK_FRAG && h->pend[i].type == MSG_RALLOC))
      return true;
  return false;
}

/* A region another worker holds for sure: a public one of another worker (never freed nor
 * handed over), or one this worker handed over (its receiver never learns of it); REGION_NONE
 * when there is none. */
static rid_t held_rid(sim *S, hostile *h) {
  int given[MAX_REGS], n = 0;
  for (int r = 0; r < h->nregs; r++)
    if (reg_given(h, r)) given[n++] = r;
  if (n && pick(S, 2)) return h->regs[given[pick(S, (uint64_t)n)]].rid;
  int k = sim_public_other(S, h->rank, false);
  if (k >= 0) return S->publics[k].rid;
  return n ? h->regs[given[0]].rid : REGION_NONE;
}

/* An object another worker holds for sure (the start of one pinned in a public region of
 * another worker, or of one handed over with its region), or 0. */
static uintptr_t held_obj(sim *S, hostile *h) {
  for (int t = 0; t < 4 && h->ngobjs && pick(S, 2); t++) {
    hobj o = h->gobjs[pick(S, h->ngobjs)];
    if (reg_given(h, o.reg)) return o.addr;
  }
  int k = sim_public_other(S, h->rank, true);
  return k >= 0 ? S->publics[k].pinned : 0;
}

/* A region of another worker: held for sure (*held), or a near-max ID. */
static rid_t other_rid(sim *S, hostile *h, bool *held) {
  rid_t rid = pick(S, 3) ? held_rid(S, h) : REGION_NONE;
  *held = rid != REGION_NONE;
  return *held ? rid : near_rid(S, h);
}

/* A rank to hand over to that is a well-behaved worker; -1 when there is none. */
static int wb_peer(sim *S) {
  return S->cfg->workers ? sim_worker_rank(S, (int)pick(S, (uint64_t)S->cfg->workers)) : -1;
}

/* Another worker's rank (well-behaved or hostile): a peer a worker may name. */
static int32_t valid_peer(sim *S, hostile *h) {
  int32_t r;
  do r = (int32_t)(S->cfg->schedulers + (int)pick(S, (uint64_t)(S->tree.nranks - S->cfg->schedulers)));
  while (r == h->rank && S->tree.nranks - S->cfg->schedulers > 1);
  return r;
}

/* A peer no worker may name: itself, a scheduler, no rank at all. */
static int32_t bad_peer(sim *S, hostile *h) {
  static const int32_t odd[] = {-1, INT32_MIN, INT32_MAX};
  switch (pick(S, 4)) {
    case 0: return h->rank;
    case 1: return (int32_t)pick(S, (uint64_t)S->cfg->schedulers);
    case 2: return S->tree.nranks + (int32_t)pick(S, 3);
    default: return odd[pick(S, 3)];
  }
}

/* An address no object starts at: off the slot alignment, outside the GAS, or at its end. */
static uintptr_t wild_addr(sim *S) {
  uintptr_t base = S->cfg->sched.gas_base, end = base + S->cfg->sched.gas_size;
  uint64_t off = 1 + pick(S, AH_SLOT_ALIGN - 1);
  switch (pick(S, 10)) {
    case 0: return end - off;
    case 1: return end + pick(S, 3) * AH_SLOT_ALIGN;
    case 2: return base - AH_SLOT_ALIGN * (1 + pick(S, 2));
    case 3: return pick(S, 2) ? 0 : UINTPTR_MAX - pick(S, 2) * 63;
    case 4: return base + off;
    default:
      return base + pick(S, S->cfg->sched.gas_size >> AH_SLOT_ALIGN_SHIFT) * AH_SLOT_ALIGN + off;
  }
}
/* An address inside some live object (of this worker or a well-behaved one), not its start
 * (off the slot alignment, or a whole slot in when the object is this worker's). */
static uintptr_t interior_addr(sim *S, hostile *h, bool *own) {
  *own = h->nobjs && pick(S, 2);
  if (*own) {
    hobj o = h->objs[pick(S, h->nobjs)];
    if (o.size > AH_SLOT_ALIGN && pick(S, 2))
      return o.addr + AH_SLOT_ALIGN * (1 + pick(S, (o.size - 1) / AH_SLOT_ALIGN));
    return o.addr + 1 + pick(S, AH_SLOT_ALIGN - 1);
  }
  uint64_t k;
  uintptr_t v;
  uint64_t probe = pick(S, S->cfg->sched.gas_size >> AH_SLOT_ALIGN_SHIFT);
  if (trie_le(&S->live, probe, &k, &v) && trie_ge(&S->live, probe, &k, &v)) return wild_addr(S);
  return AH_GAS_DEFAULT_BASE + (k << AH_SLOT_ALIGN_SHIFT) + 1 + pick(S, AH_SLOT_ALIGN - 1);
}

/* A size no allocation of this GAS can have. */
static uint64_t huge_size(sim *S) {
  uint64_t gas = S->cfg->sched.gas_size;
  static const uint64_t sizes[] = {UINT64_MAX,       UINT64_MAX - 63, UINT64_MAX - 4095, 1ull << 63,
                                   (1ull << 63) + 1, 1ull << 62,      (uint64_t)64 << 30};
  switch (pick(S, 4)) {
    case 0: return gas + 1 + pick(S, 64);
    case 1: return gas + AH_PAGE_SIZE;
    default: {
      uint64_t s = sizes[pick(S, sizeof sizes / sizeof *sizes)];
      return s > gas ? s : gas + 1;
    }
  }
}

/* A size that may well succeed: mostly small, now and then several pages. */
static uint64_t fair_size(sim *S) {
  static const uint64_t sizes[] = {1, 8, 63, 64, 65, 100, 1000, 4095, 4096, 4097, 9000, 65536};
  if (pick(S, 50) == 0) return (1 + pick(S, 3)) << AH_PAGE_SHIFT;
  return sizes[pick(S, sizeof sizes / sizeof *sizes)];
}

/* ---- what the schedulers must make of a message ---- */
enum verdict { V_DROP, V_REPLY, V_FINALIZE };

/* Mirror of the server's rules (proto_decode, then sender_ok): a message it cannot read, or
 * one that is not this worker's own request to its leaf, is dropped as malformed. */
static enum verdict judge(const hostile *h, int to, const void *buf, size_t len) {
  proto_msg m;
  if (proto_decode(buf, len, &m) == EPROTO) return V_DROP;
  const proto_header *hd = m.h;
  if (to != h->leaf || h->finalized || hd->type < MSG_RALLOC || hd->type > MSG_FINALIZE ||
      hd->origin != h->rank || hd->dest != PROTO_NO_DEST || hd->sched != -1)
    return V_DROP;
  return hd->type == MSG_FINALIZE ? V_FINALIZE : V_REPLY;
}

static void send_to(sim *S, hostile *h, int to, const void *buf, size_t len) {
  S->requests++;
  S->res->hostile_sent++;
  sim_send(S, h->rank, to, buf, len);
}

/* A message sent to be dropped: the schedulers' malformed counts must match. */
static void send_garbage(sim *S, hostile *h, int to, const void *buf, size_t len) {
  S->res->hostile_garbage++;
  send_to(S, h, to, buf, len);
}

static bool req_taken(const hostile *h, uint64_t req) {
  for (int i = 0; i < h->npend; i++)
    if (h->pend[i].req == req) return true;
  return false;
}

/* The request ID: the next one, or (now and then) a forged one no pending request has. */
static uint64_t next_req(sim *S, hostile *h) {
  static const uint64_t odd[] = {0, UINT64_MAX, 1ull << 63, (1ull << 63) | 1, 1};
  uint64_t req = ++h->req;
  if (pick(S, 8) == 0) req = pick(S, 2) ? odd[pick(S, 5)] : rnd(S);
  while (req_taken(h, req)) req = rnd(S);
  return req;
}

/* Send request p (its type, fixed part and tail) to the leaf: it must be answered. */
static void request(sim *S, hostile *h, pend p, const void *fixed, const uint64_t *tail,
                    uint32_t ntail) {
  unsigned char buf[sizeof(proto_header) + PROTO_MAX_FIXED + MAX_TAIL * 8];
  p.req = next_req(S, h);
  size_t len = proto_build(buf, sizeof buf, p.type, p.req, h->rank, PROTO_NO_DEST, 0, -1, fixed,
                           tail, ntail);
  if (S->trace)
    fprintf(stderr, "trace: hostile %d sends %s req %lu kind %d (word0 %#lx word1 %#lx word2 %#lx)\n",
            h->rank, proto_type_name(p.type), (unsigned long)p.req, p.kind,
            (unsigned long)*(const uint64_t *)fixed,
            proto_fixed_size(p.type) >= 16 ? (unsigned long)((const uint64_t *)fixed)[1] : 0ul,
            proto_fixed_size(p.type) >= 24 ? (unsigned long)((const uint64_t *)fixed)[2] : 0ul);
  if (judge(h, h->leaf, buf, len) != V_REPLY) abort(); /* the fuzzer's own bug */
  h->pend[h->npend++] = p;
  send_to(S, h, h->leaf, buf, len);
}

/* ---- well-formed requests with hostile arguments ---- */
static pend mk(unsigned type, int kind, int expect, int err) {
  return (pend){.type = type, .kind = kind, .expect = expect, .err = err, .reg = -1};
}

/* What a request naming region rid of another worker must get, once its fields are good:
 * EPERM for one held for sure; for a near-max ID, EPERM or ENOENT (or, should it turn out its
 * own, anything). */
static void expect_other(pend *p, rid_t rid, bool held) {
  p->nonholder = true;
  if (held) {
    p->expect = EXP_ERRNO, p->err = EPERM;
    return;
  }
  p->expect = EXP_SET, p->errs = B(EPERM) | B(ENOENT);
  p->near = true, p->rid = rid;
}

/* Allocation requests: a region (own, root, another worker's, unknown) and sizes/counts. */
static void hostile_alloc(sim *S, hostile *h) {
  int reg = -1;
  rid_t rid = REGION_ROOT;
  bool safe = true, unknown = false, other = false, held = false;
  uint64_t r = pick(S, 10);
  if (r < 3 && (reg = live_reg(S, h)) >= 0)
    rid = h->regs[reg].rid, safe = h->regs[reg].safe;
  else if (r < 5)
    rid = other_rid(S, h, &held), other = true, safe = false, reg = -2;
  else if (r < 6)
    rid = unknown_rid(S), unknown = true, reg = -2;
  else
    reg = -1;
  bool batch = pick(S, 3) == 0;
  uint64_t size = pick(S, 3) == 0 ? huge_size(S) : fair_size(S);
  uint32_t n = 1;
  pend p = mk(batch ? MSG_BALLOC : MSG_ALLOC, HK_ALLOC, EXP_ANY, 0);
  if (batch) {
    static const uint32_t counts[] = {0, 2000000000u, UINT32_MAX, PROTO_MAX_TAIL + 1};
    n = pick(S, 2) ? 1 + (uint32_t)pick(S, 16) : counts[pick(S, 4)];
    if (n == PROTO_MAX_TAIL + 1 && pick(S, 2)) n = PROTO_MAX_TAIL, size = (uint64_t)1 << 30;
  } else if (pick(S, 16) == 0) {
    n = pick(S, 2) ? 0 : 2; /* ALLOC carries n = 1, nothing else */
  }
  if (pick(S, 32) == 0) size = 0;
  /* what is certain, in the order the server checks: fields, region, holder, space */
  if (size == 0 || n == 0 || (!batch && n != 1))
    p.expect = EXP_ERRNO, p.err = EINVAL;
  else if (batch && n > PROTO_MAX_TAIL)
    p.expect = EXP_ERRNO, p.err = E2BIG;
  else if (unknown)
    p.expect = EXP_ERRNO, p.err = ENOENT;
  else if (other)
    expect_other(&p, rid, held);
  else if (size > S->cfg->sched.gas_size / n)
    p.expect = EXP_FAIL;
  p.obj = (hobj){0, size, reg};
  p.n = n;
  p.safe = safe && reg >= -1;
  p.sound = p.safe;
  proto_alloc b = {.size = size, .rid = rid, .n = n};
  request(S, h, p, &b, NULL, 0);
}

/* An address no object starts at (EINVAL; EPERM inside an object another worker holds). */
static uintptr_t no_start(sim *S, hostile *h, pend *p) {
  bool own = false;
  uintptr_t addr = pick(S, 2) ? interior_addr(S, h, &own) : wild_addr(S);
  p->expect = EXP_SET, p->errs = B(EINVAL) | (own ? 0 : B(EPERM)), p->nonholder = !own;
  return addr;
}

/* Free: an own object, one another worker holds (EPERM), an address no object starts at. */
static void hostile_free(sim *S, hostile *h) {
  pend p = mk(MSG_FREE, HK_FREE, EXP_OK, 0);
  uintptr_t addr;
  uint64_t r = pick(S, 4);
  if (h->nobjs && r < 2) {
    p.obj = take_obj(S, h, pick(S, h->nobjs));
    p.own = true;
    addr = p.obj.addr;
  } else if (r == 2 && (addr = held_obj(S, h))) {
    p.expect = EXP_ERRNO, p.err = EPERM, p.nonholder = true;
  } else {
    addr = no_start(S, h, &p);
  }
  proto_addr b = {.addr = addr};
  request(S, h, p, &b, NULL, 0);
}

/* Realloc of an own object (into its region, the root, another own region, or a region
 * another worker holds: EPERM where the object lives, EXDEV elsewhere), of an object another
 * worker holds (EPERM, checked before anything else), of an address no object starts at. */
static void hostile_realloc(sim *S, hostile *h) {
  pend p = mk(MSG_REALLOC, HK_REALLOC, EXP_FAIL, 0);
  bool other = false, held = false;
  uint64_t size = pick(S, 3) == 0 ? huge_size(S) : fair_size(S);
  rid_t to = REGION_NONE;
  int reg = -3; /* the object's own region */
  uint64_t r = pick(S, 6);
  if (r == 0)
    to = REGION_ROOT, reg = -1;
  else if (r == 1)
    to = other_rid(S, h, &held), reg = -2, other = true;
  else if (r == 2 && (reg = live_reg(S, h)) >= 0)
    to = h->regs[reg].rid;
  else
    reg = -3;
  if (pick(S, 32) == 0) size = 0;
  uintptr_t addr;
  uint64_t w = pick(S, 6);
  if (h->nobjs && w < 4) {
    p.obj = take_obj(S, h, pick(S, h->nobjs));
    p.own = true;
    addr = p.obj.addr;
    p.expect = size > S->cfg->sched.gas_size ? EXP_FAIL : EXP_ANY;
    if (other) {
      p.expect = EXP_SET, p.errs = B(EXDEV) | B(EPERM), p.nonholder = true;
      p.near = !held, p.rid = to;
    }
    p.safe = reg == -3 || reg == -1 || (reg >= 0 && h->regs[reg].safe);
    p.sound = p.safe;
    p.reg = reg != -3 ? reg : p.obj.reg; /* where it goes if it moves */
  } else if (w == 4 && (addr = held_obj(S, h))) {
    p.expect = EXP_ERRNO, p.err = EPERM, p.nonholder = true;
  } else {
    addr = no_start(S, h, &p);
    if (to != REGION_NONE) p.errs |= B(EXDEV) | B(EPERM); /* a region elsewhere, or another's */
    p.nonholder |= other;
  }
  if (size == 0) p.expect = EXP_ERRNO, p.err = EINVAL, p.near = false, p.nonholder = false;
  p.obj.size = p.own ? p.obj.size : size;
  p.n = size;
  proto_realloc b = {.addr = addr, .size = size, .rid = to};
  request(S, h, p, &b, NULL, 0);
}

static void hostile_query(sim *S, hostile *h) {
  pend p = mk(MSG_QUERY, HK_QUERY, EXP_ANY, 0);
  bool own = false;
  uintptr_t addr;
  if (h->nobjs && pick(S, 2)) {
    size_t i = pick(S, h->nobjs);
    p.obj = h->objs[i];
    p.own = true;
    p.expect = EXP_OK;
    p.rid = p.obj.reg >= 0 ? h->regs[p.obj.reg].rid : REGION_ROOT;
    addr = p.obj.addr;
  } else {
    addr = pick(S, 2) ? interior_addr(S, h, &own) : wild_addr(S);
  }
  p.obj.addr = addr;
  proto_addr b = {.addr = addr};
  request(S, h, p, &b, NULL, 0);
}

/* ralloc under an own region, the root, another worker's (EPERM once the level hint is good:
 * the scheduler of the parent checks the hint first), an unknown one (ENOENT: routed first). */
static void hostile_ralloc(sim *S, hostile *h) {
  static const int32_t hints[] = {-5, 99, INT32_MIN, INT32_MAX, -2, -1, 0, 1, 2};
  pend p = mk(MSG_RALLOC, HK_RALLOC, EXP_ANY, 0);
  bool other = false, held = false, unknown = false;
  int32_t hint = hints[pick(S, sizeof hints / sizeof *hints)];
  rid_t parent = REGION_ROOT;
  int reg = -1;
  uint64_t r = pick(S, 8);
  if (r < 3 && (reg = live_reg(S, h)) >= 0)
    parent = h->regs[reg].rid;
  else if (r == 3)
    parent = other_rid(S, h, &held), reg = -2, other = true;
  else if (r == 4)
    parent = unknown_rid(S), reg = -2, unknown = true;
  else
    reg = -1;
  p.reg = reg;
  p.safe = reg == -1 || (reg >= 0 && h->regs[reg].safe);
  if (h->nregs == MAX_REGS) hint = 99; /* no room to remember another: make it fail for sure */
  bool bad_hint = hint < -1 || hint >= S->tree.levels;
  if (unknown)
    p.expect = EXP_ERRNO, p.err = ENOENT;
  else if (other && bad_hint)
    p.expect = EXP_SET, p.errs = B(EINVAL) | (held ? 0 : B(ENOENT)), p.near = !held, p.rid = parent;
  else if (other)
    expect_other(&p, parent, held);
  else if (bad_hint)
    p.expect = EXP_FAIL;
  proto_ralloc b = {.parent = parent, .level_hint = hint};
  request(S, h, p, &b, NULL, 0);
}

/* rfree and pack: own regions, the root, regions another worker holds (EPERM; pack also
 * near-max IDs), unknown IDs. */
static void hostile_by_rid(sim *S, hostile *h, bool rfree) {
  pend p = mk(rfree ? MSG_RFREE : MSG_PACK, rfree ? HK_RFREE : HK_PACK, EXP_ANY, 0);
  int reg = pick(S, 2) ? live_reg(S, h) : -1;
  rid_t rid = REGION_NONE;
  bool held = false;
  uint64_t r = pick(S, 3);
  if (reg >= 0 && rfree && !h->regs[reg].safe) /* under another worker's region: it may be */
    reg = -1; /* gone with it, and its ID another worker's now */
  if (reg < 0 && r == 1) rid = rfree ? held_rid(S, h) : other_rid(S, h, &held);
  held |= rfree;
  if (reg >= 0) {
    rid = h->regs[reg].rid;
    p.reg = reg;
    p.own = true;
    if (h->regs[reg].safe) p.expect = EXP_OK;
    if (rfree) kill_regs(S, h, reg); /* what the worker hands over is gone from now on */
  } else if (r == 0) {
    rid = REGION_ROOT;
    if (rfree) p.expect = EXP_ERRNO, p.err = EINVAL; /* the root region is never freed */
  } else if (rid != REGION_NONE) {
    expect_other(&p, rid, held);
  } else {
    rid = unknown_rid(S);
    p.expect = EXP_ERRNO, p.err = ENOENT;
  }
  proto_rid b = {.rid = rid};
  request(S, h, p, &b, NULL, 0);
}

/* ---- PACKV: moves, hand-overs and hand-backs ---- */

/* A region name for a PACKV: own (safe), another worker's (EPERM), near-max (at most one:
 * EPERM or ENOENT), unknown (ENOENT); p->errs gathers what it may make the reply, *sure is set
 * when the name cannot be this worker's. */
static uint64_t packv_region(sim *S, hostile *h, pend *p, bool *sure) {
  int reg;
  rid_t rid;
  switch (pick(S, 4)) {
    case 0:
      if ((reg = live_safe_reg(S, h)) >= 0) return h->regs[reg].rid;
      /* fall through */
    case 1:
      if ((rid = held_rid(S, h)) != REGION_NONE) return *sure = true, p->errs |= B(EPERM), rid;
      /* fall through */
    case 2:
      if (!p->near) return p->near = true, p->errs |= B(EPERM) | B(ENOENT), p->rid = near_rid(S, h);
      /* fall through */
    default: return *sure = true, p->errs |= B(ENOENT), unknown_rid(S);
  }
}

/* An object name: an own object's start, another worker's (EPERM), no object's start (EINVAL;
 * EPERM inside another worker's object). */
static uint64_t packv_object(sim *S, hostile *h, pend *p, bool *sure) {
  uintptr_t a;
  bool own = false;
  switch (pick(S, 4)) {
    case 0:
      if (h->nobjs) return h->objs[pick(S, h->nobjs)].addr;
      /* fall through */
    case 1:
      if ((a = held_obj(S, h))) return *sure = true, p->errs |= B(EPERM), a;
      /* fall through */
    default:
      a = pick(S, 2) ? interior_addr(S, h, &own) : wild_addr(S);
      p->errs |= B(EINVAL) | (own ? 0 : B(EPERM));
      *sure = true;
      return a;
  }
}

/* A PACKV of regions and objects (flags 0 or PACKV_NO_RANGES): only own names succeed; any
 * other fails it with an errno one of them can draw (the parts answer in any order), unless
 * the only other is a near-max ID that turns out its own. */
static void packv_names(sim *S, hostile *h, uint32_t flags) {
  uint64_t tail[MAX_TAIL];
  proto_packv b = {.nreg = (uint32_t)pick(S, 4)};
  b.nobj = (uint32_t)pick(S, 4), b.flags = flags;
  pend p = mk(MSG_PACKV, HK_PACKV, EXP_OK, 0);
  bool sure = false;
  p.flags = flags;
  for (uint32_t i = 0; i < b.nreg; i++) tail[i] = packv_region(S, h, &p, &sure);
  for (uint32_t i = 0; i < b.nobj; i++) tail[b.nreg + i] = packv_object(S, h, &p, &sure);
  if (b.nreg + b.nobj == 0)
    p.expect = EXP_ERRNO, p.err = EINVAL, p.near = false;
  else if (p.errs)
    p.expect = EXP_SET, p.nonholder = true, p.near = p.near && !sure;
  request(S, h, p, &b, tail, b.nreg + b.nobj);
}

/* A PACKV no worker may send (EINVAL): flags only schedulers set (PACKV_COMMIT,
 * PACKV_SKIP_GONE), both hand flags, unknown ones, a hand-back naming objects; or a hand-over
 * (hand-back) to itself, a scheduler, no rank. It names its own region, which would move. */
static void packv_bad_ask(sim *S, hostile *h) {
  static const uint32_t flags[] = {
      PACKV_SKIP_GONE, PACKV_COMMIT, PACKV_COMMIT | PACKV_HANDOVER, PACKV_COMMIT | PACKV_HANDBACK,
      PACKV_SKIP_GONE | PACKV_HANDOVER, PACKV_SKIP_GONE | PACKV_NO_RANGES,
      PACKV_HANDOVER | PACKV_HANDBACK, PACKV_FLAGS + 1, PACKV_FLAGS};
  int reg = live_safe_reg(S, h);
  uint64_t tail[2] = {reg >= 0 ? h->regs[reg].rid : REGION_ROOT, 0};
  proto_packv b = {.nreg = 1, .peer = valid_peer(S, h)};
  uint64_t r = pick(S, 5);
  if (r < 2) {
    b.flags = flags[pick(S, sizeof flags / sizeof *flags)];
  } else if (r < 4) {
    b.flags = (r == 2 ? PACKV_HANDOVER : PACKV_HANDBACK) | (pick(S, 2) ? PACKV_NO_RANGES : 0);
    b.peer = bad_peer(S, h);
  } else { /* a hand-back names regions only */
    b.flags = PACKV_HANDBACK, b.nobj = 1;
    tail[1] = h->nobjs ? h->objs[pick(S, h->nobjs)].addr : wild_addr(S);
  }
  pend p = mk(MSG_PACKV, HK_PACKV, EXP_ERRNO, EINVAL);
  p.badmove = true, p.flags = b.flags;
  /* a lenient part's tail has each child's parent after it (proto.h) */
  request(S, h, p, &b, tail, b.nreg * (b.flags & PACKV_SKIP_GONE ? 2 : 1) + b.nobj);
}

/* A valid peer other than rank `not`, or -1 when there is none. */
static int32_t valid_peer_but(sim *S, hostile *h, int not) {
  for (int t = 0; t < 8; t++) {
    int32_t r = valid_peer(S, h);
    if (r != not && r != h->rank) return r;
  }
  return -1;
}

/* The index of region rid among those it handed over for sure, or -1. */
static int given_index(const hostile *h, uint64_t rid) {
  for (int g = 0; g < h->nregs; g++)
    if (h->regs[g].rid == rid && reg_given(h, g)) return g;
  return -1;
}

/* A hand-over or hand-back of what it may not move (EPERM): the root region; a region another
 * worker holds; its own region with an object another worker holds (nothing moves: the first
 * round fails); a hand-back of its own region, of the root, of another's region, or of one it
 * handed over, from a peer it did not hand it to. */
static void packv_not_held(sim *S, hostile *h) {
  int reg = live_safe_reg(S, h);
  rid_t held = held_rid(S, h);
  uintptr_t obj = held_obj(S, h);
  uint64_t tail[2] = {REGION_ROOT, 0};
  proto_packv b = {.nreg = 1, .flags = PACKV_HANDOVER, .peer = valid_peer(S, h)};
  uint64_t r = pick(S, 5);
  if (r == 1 && held != REGION_NONE) {
    tail[0] = held;
  } else if (r == 2 && reg >= 0 && obj) {
    tail[0] = h->regs[reg].rid, tail[1] = obj, b.nobj = 1;
  } else if (r >= 3) {
    b.flags = PACKV_HANDBACK;
    if (r == 3 && reg >= 0) tail[0] = h->regs[reg].rid;
    else if (held != REGION_NONE) tail[0] = held;
    int g = given_index(h, tail[0]);
    if (g >= 0 && (b.peer = valid_peer_but(S, h, h->regs[g].given_to)) < 0)
      tail[0] = REGION_ROOT, b.peer = valid_peer(S, h);
  }
  if (pick(S, 2)) b.flags |= PACKV_NO_RANGES;
  pend p = mk(MSG_PACKV, HK_PACKV, EXP_ERRNO, EPERM);
  p.nonholder = true, p.flags = b.flags;
  if (b.peer == h->rank) p.err = EINVAL, p.nonholder = false, p.badmove = true; /* alone */
  request(S, h, p, &b, tail, b.nreg + b.nobj);
}

/* A top region (its parent: the root) of its own, alive (back: one it handed over for sure);
 * -1 when there is none. */
static int pick_top(sim *S, hostile *h, bool back) {
  int idx[MAX_REGS], n = 0;
  for (int r = 0; r < h->nregs; r++)
    if (h->regs[r].parent == -1 && (back ? reg_given(h, r) : h->regs[r].alive)) idx[n++] = r;
  return n ? idx[pick(S, (uint64_t)n)] : -1;
}

/* A hand-over of top (to peer) or a hand-back of it is sent: its subtree is neither its own
 * nor handed over for sure until the reply; a hand-over's objects go to gobjs. */
static void hand_start(hostile *h, int top, bool back, int peer) {
  for (int r = 0; r < h->nregs; r++) {
    hreg *g = &h->regs[r];
    if (!reg_in(h, r, top) || !(back ? reg_given(h, r) : g->alive)) continue;
    g->alive = false;
    g->handing = true;
    g->given_to = back ? g->given_to : peer;
  }
  for (size_t i = 0; !back && i < h->nobjs;) {
    if (h->objs[i].reg < 0 || !h->regs[h->objs[i].reg].handing) {
      i++;
      continue;
    }
    push_hobj(&h->gobjs, &h->ngobjs, &h->gobjcap, h->objs[i]); /* still live: in hlive */
    h->objs[i] = h->objs[--h->nobjs];
  }
}

/* Its reply: the subtree (with its objects) is its own (a hand-back, or a hand-over that
 * failed) or handed over for sure. */
static void hand_end(hostile *h, int top, bool own) {
  for (int r = 0; r < h->nregs; r++) {
    hreg *g = &h->regs[r];
    if (!reg_in(h, r, top) || !g->handing) continue;
    g->handing = false;
    g->alive = own;
    g->given_to = own ? -1 : g->given_to;
  }
  for (size_t i = 0; own && i < h->ngobjs;) {
    if (!h->regs[h->gobjs[i].reg].alive) {
      i++;
      continue;
    }
    push_hobj(&h->objs, &h->nobjs, &h->objcap, h->gobjs[i]); /* in hlive all along */
    h->gobjs[i] = h->gobjs[--h->ngobjs];
  }
}

/* A hand-over of one of its top regions (with up to two of its objects named) to a
 * well-behaved worker, which never learns of it and so never acts on it, or a hand-back of
 * one it handed over: both must succeed. Sent only with nothing else in flight, so that no
 * request of its own races with the commit. False when there is nothing to hand. */
static bool hand_own(sim *S, hostile *h, bool back) {
  int top = S->cfg->workers && h->npend == 0 ? pick_top(S, h, back) : -1;
  if (top < 0) return false;
  uint64_t tail[3] = {h->regs[top].rid};
  proto_packv b = {.nreg = 1, .flags = back ? PACKV_HANDBACK : PACKV_HANDOVER};
  b.peer = back ? h->regs[top].given_to : wb_peer(S);
  if (pick(S, 2)) b.flags |= PACKV_NO_RANGES;
  size_t first = h->ngobjs;
  hand_start(h, top, back, b.peer);
  for (size_t k = 0; !back && k < 2 && h->ngobjs > first; k++)
    if (pick(S, 2)) tail[1 + b.nobj++] = h->gobjs[first + pick(S, h->ngobjs - first)].addr;
  pend p = mk(MSG_PACKV, back ? HK_HANDBACK : HK_HANDOVER, EXP_OK, 0);
  p.reg = top, p.flags = b.flags;
  request(S, h, p, &b, tail, b.nreg + b.nobj);
  return true;
}

static void hostile_packv(sim *S, hostile *h) {
  uint64_t r = pick(S, 10);
  if (r < 2 && hand_own(S, h, r == 1)) return;
  if (r < 2 && h->npend) h->drain = 1 + (int)r; /* once nothing else is in flight */
  if (r == 2) packv_bad_ask(S, h);
  else if (r == 3) packv_not_held(S, h);
  else packv_names(S, h, pick(S, 3) ? 0 : PACKV_NO_RANGES);
}

/* Lease slabs in its own region, the root, or a region another worker holds (EPERM). */
static void hostile_lease(sim *S, hostile *h) {
  static const uint64_t sizes[] = {0, 64, 100, 4096, 4097, 1 << 20};
  pend p = mk(MSG_LEASE, HK_LEASE, EXP_ANY, 0);
  proto_lease b = {.size = sizes[pick(S, 6)], .rid = REGION_ROOT, .want = 1 + (uint32_t)pick(S, 4)};
  b.min = 1 + (uint32_t)pick(S, b.want);
  uint64_t r = pick(S, 4);
  int reg = r < 2 ? live_reg(S, h) : -1;
  if (reg >= 0) b.rid = h->regs[reg].rid;
  if (r == 2 && (b.rid = held_rid(S, h)) != REGION_NONE) expect_other(&p, b.rid, true);
  else if (r == 2) b.rid = REGION_ROOT;
  if (pick(S, 8) == 0) b.want = pick(S, 2) ? PROTO_LEASE_MAX + 1 : 0;
  if (pick(S, 8) == 0) b.min = b.want + 1;
  if (b.size == 0 || b.size > AH_SLAB_SIZE || b.min < 1 || b.want < b.min ||
      b.want > PROTO_LEASE_MAX)
    p.expect = EXP_ERRNO, p.err = EINVAL, p.nonholder = false;
  p.slot = (uint32_t)ah_round_up(b.size, AH_SLOT_ALIGN);
  p.n = b.want;
  request(S, h, p, &b, NULL, 0);
}

/* Hand back slabs: own ones whole and empty (fine), own ones twice or with slots they do not
 * have, other workers' leased slabs, addresses that are no slab (all refused). */
static void hostile_unlease(sim *S, hostile *h) {
  uint64_t tail[MAX_TAIL];
  pend p = mk(MSG_UNLEASE, HK_UNLEASE, EXP_FAIL, 0);
  uint32_t n = 0;
  uint64_t r = pick(S, 4);
  if (h->leases_slabs && h->nleases && r < 2) { /* own, all fine: nothing live */
    size_t i = pick(S, h->nleases);
    hlease l = h->leases[i];
    tail[0] = l.slab;
    tail[1] = 0;
    n = 1;
    if (r == 0) {
      tail[2] = l.slab; /* twice: refused, still leased */
      tail[3] = 0;
      n = 2;
    } else if (pick(S, 2) && AH_SLAB_SIZE / l.slot < 64) {
      tail[1] = 1ull << (AH_SLAB_SIZE / l.slot); /* a slot past the slab's last */
    } else {
      p.expect = EXP_OK;
      hlive_del(S, l.slab);
      h->leases[i] = h->leases[--h->nleases];
    }
  } else if (!h->leases_slabs && r < 2 && S->cfg->workers) { /* another worker's */
    for (int t = 0; t < 4 && !n; t++)
      n = sim_worker_leased(S, (int)pick(S, (uint64_t)S->cfg->workers), rnd(S), &tail[0]);
    tail[1] = pick(S, 2) ? 0 : rnd(S);
  }
  if (n == 0) { /* an address that is no leased slab */
    tail[0] = pick(S, 2) ? wild_addr(S) : (wild_addr(S) & ~(uint64_t)(AH_SLAB_SIZE - 1));
    if (h->leases_slabs) tail[0] |= 8; /* never one of its own */
    tail[1] = 0;
    n = 1;
  }
  proto_unlease b = {.n = n};
  request(S, h, p, &b, tail, 2 * n);
}

/* ---- forged headers and random bytes ---- */

/* A scheduler-to-scheduler message, well built, from a worker. */
static size_t forge_sched_msg(sim *S, hostile *h, unsigned char *buf, size_t cap) {
  static const unsigned types[] = {MSG_REPLY,  MSG_CREATE_BELOW, MSG_CREATED,
                                   MSG_UNLINK, MSG_REFILL,       MSG_GRANT,
                                   MSG_LOAD,   MSG_RETURN,       MSG_GIVEBACK};
  unsigned type = types[pick(S, sizeof types / sizeof *types)];
  unsigned char fixed[PROTO_MAX_FIXED];
  for (size_t i = 0; i < sizeof fixed; i++) fixed[i] = (unsigned char)rnd(S);
  uint32_t ntail = 0;
  if (type == MSG_REPLY) {
    proto_reply r = {.ntail = ntail = (uint32_t)pick(S, 4)};
    memcpy(fixed, &r, sizeof r);
  } else if (type == MSG_RETURN) {
    proto_return r = {.nranges = 1, .nids = 1};
    memcpy(fixed, &r, sizeof r);
    ntail = 4;
  } else if (type == MSG_GRANT || type == MSG_GIVEBACK) { /* pages and IDs that exist */
    proto_grant g = {S->cfg->sched.gas_base + (pick(S, 64) << AH_PAGE_SHIFT), 1 + pick(S, 64),
                     1 + (uint32_t)pick(S, 1000), 1 + (uint32_t)pick(S, 1000)};
    memcpy(fixed, &g, sizeof g);
  }
  uint64_t tail[4];
  for (int i = 0; i < 4; i++) tail[i] = rnd(S);
  int32_t dest = pick(S, 2) ? (int32_t)pick(S, (uint64_t)S->tree.nranks) : PROTO_NO_DEST;
  return proto_build(buf, cap, type, rnd(S), pick(S, 2) ? h->rank : -1, dest, 0, -1, fixed, tail,
                     ntail);
}

/* A request of this worker with one lie in its header, or sent to the wrong scheduler. */
static size_t forge_request(sim *S, hostile *h, unsigned char *buf, size_t cap, int *to) {
  proto_alloc b = {.size = 64, .rid = REGION_ROOT, .n = 1};
  size_t len = proto_build(buf, cap, MSG_ALLOC, rnd(S), h->rank, PROTO_NO_DEST, 0, -1, &b, NULL, 0);
  proto_header *hd = (proto_header *)buf;
  switch (pick(S, 9)) {
    case 0: hd->origin = (int32_t)pick(S, (uint64_t)S->tree.nranks); break; /* someone else */
    case 1: hd->origin = pick(S, 2) ? INT32_MAX : -2; break;
    case 2: hd->dest = (int32_t)pick(S, (uint64_t)S->tree.nranks); break;
    case 3: hd->sched = (int32_t)pick(S, (uint64_t)S->cfg->schedulers); break;
    case 4: hd->length += pick(S, 2) ? 8 : (uint32_t)-8; break;
    case 5: len -= 1 + pick(S, 8); break; /* truncated */
    case 6: hd->type = (uint8_t)(pick(S, 2) ? 0 : MSG_TYPE_END + pick(S, 200)); break;
    case 7: hd->magic ^= 1; break;
    default: *to = (int)pick(S, (uint64_t)S->cfg->schedulers); break; /* not its leaf */
  }
  if (hd->origin == h->rank && hd->dest == PROTO_NO_DEST && hd->sched == -1 &&
      len == sizeof *hd + hd->length && *to == h->leaf && hd->magic == PROTO_MAGIC &&
      hd->type == MSG_ALLOC)
    hd->magic ^= 2; /* every draw above must lie */
  return len;
}

static void hostile_garbage(sim *S, hostile *h) {
  unsigned char buf[sizeof(proto_header) + PROTO_MAX_FIXED + 8 * 8];
  int to = h->leaf;
  size_t len;
  uint64_t r = pick(S, 3);
  if (r == 0) {
    len = forge_sched_msg(S, h, buf, sizeof buf);
  } else if (r == 1) {
    len = forge_request(S, h, buf, sizeof buf, &to);
  } else {
    len = pick(S, sizeof buf + 1);
    for (size_t i = 0; i < len; i++) buf[i] = (unsigned char)rnd(S);
  }
  enum verdict v = judge(h, to, buf, len);
  if (v != V_DROP) { /* a lie that reads as the truth (random bytes never do): spoil it */
    ((proto_header *)buf)->magic ^= 4;
  }
  send_garbage(S, h, to, buf, len);
}

/* ---- fragmenting on purpose ---- */

static void wrong(sim *S, hostile *h, const pend *p, const char *what, int st);

static void frag_request(sim *S, hostile *h, int step, int expect, uint64_t index,
                         unsigned type, const void *fixed, const uint64_t *tail, uint32_t ntail) {
  pend p = mk(type, HK_FRAG, expect, 0);
  p.n = (uint64_t)step;
  p.obj.addr = (uintptr_t)index;
  h->fr.inflight++;
  request(S, h, p, fixed, tail, ntail);
}

/* The next step of the fragmenter, if one can go now: true when a request was sent. */
static bool frag_step(sim *S, hostile *h) {
  fragger *f = &h->fr;
  size_t want = (size_t)S->cfg->hostile_fragment;
  switch ((enum frag_step)f->phase) {
    case FR_REGION: {
      if (f->inflight) return false;
      proto_ralloc b = {.parent = REGION_ROOT, .level_hint = -1};
      frag_request(S, h, FR_REGION, EXP_ANY, 0, MSG_RALLOC, &b, NULL, 0);
      return true;
    }
    case FR_BALLOC: {
      if (f->inflight) return false;
      proto_alloc b = {.size = AH_SLAB_SIZE, .rid = f->rid, .n = (uint32_t)(2 * want)};
      frag_request(S, h, FR_BALLOC, EXP_ANY, 0, MSG_BALLOC, &b, NULL, 0);
      return true;
    }
    case FR_FREE: {
      if (f->next >= f->n) return false; /* the last frees are on their way */
      proto_addr b = {.addr = f->objs[f->next]};
      hlive_del(S, f->objs[f->next]);
      frag_request(S, h, FR_FREE, EXP_OK, f->next, MSG_FREE, &b, NULL, 0);
      f->next += 2;
      return true;
    }
    case FR_PACK: {
      if (f->inflight) return false;
      proto_packv b = {.nreg = 1};
      uint64_t tail[1] = {f->rid};
      frag_request(S, h, FR_PACK, EXP_OK, 0, MSG_PACKV, &b, tail, 1);
      return true;
    }
    case FR_RFREE: {
      if (f->inflight) return false;
      for (size_t i = 1; i < f->n; i += 2) hlive_del(S, f->objs[i]);
      proto_rid b = {.rid = f->rid};
      frag_request(S, h, FR_RFREE, EXP_OK, 0, MSG_RFREE, &b, NULL, 0);
      return true;
    }
    case FR_IDS: {
      if (f->next >= 2 * want) return false;
      proto_ralloc b = {.parent = REGION_ROOT, .level_hint = -1};
      frag_request(S, h, FR_IDS, EXP_ANY, f->next++, MSG_RALLOC, &b, NULL, 0);
      return true;
    }
    case FR_IDFREE: {
      while (f->next < f->nids && !f->ids[f->next]) f->next += 2;
      if (f->next >= f->nids) return false;
      proto_rid b = {.rid = f->ids[f->next]};
      frag_request(S, h, FR_IDFREE, EXP_OK, f->next, MSG_RFREE, &b, NULL, 0);
      f->next += 2;
      return true;
    }
  }
  return false;
}

static int cmp_addr(const void *a, const void *b) {
  uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
  return (x > y) - (x < y);
}

/* FR_BALLOC answered: 2F objects, each clear of every live one, kept in address order. */
static void frag_objects(sim *S, hostile *h, const proto_msg *m) {
  fragger *f = &h->fr;
  size_t n = m->ntail;
  f->objs = realloc(f->objs, (n ? n : 1) * sizeof *f->objs);
  if (!f->objs) abort(); /* the simulator itself out of memory */
  for (size_t i = 0; i < n; i++) {
    f->objs[i] = (uintptr_t)m->tail[i];
    if (sim_place_ok(S, f->objs[i], AH_SLAB_SIZE, "hostile worker (fragmenting)", true))
      hlive_add(S, f->objs[i], AH_SLAB_SIZE);
  }
  qsort(f->objs, n, sizeof *f->objs, cmp_addr);
  f->n = n;
  f->next = 0;
}

/* FR_PACK answered: sorted, coalesced ranges that cover every kept object (the odd ones). As
 * a rule each is a range of its own, but an allocation this worker sent under a near-max ID
 * while the region's RALLOC was in flight may have landed there too (near_own): so the
 * objects must be covered, and the ranges at least half as many as they. */
static void frag_ranges(sim *S, hostile *h, const pend *p, const proto_msg *m) {
  fragger *f = &h->fr;
  const uint64_t *t = m->tail;
  size_t kept = f->n / 2, nr = m->ntail / 2, j = 0;
  if (m->ntail % 2 || nr < kept / 2) {
    wrong(S, h, p, "a pack of the fragmented region of the wrong shape", 0);
    return;
  }
  for (size_t k = 1; k < nr; k++)
    if (t[2 * k] <= t[2 * k - 2] + t[2 * k - 1]) {
      wrong(S, h, p, "a pack of the fragmented region not sorted and coalesced", 0);
      return;
    }
  for (size_t i = 1; i < f->n; i += 2) { /* objects and ranges both in address order */
    while (j < nr && t[2 * j] + t[2 * j + 1] <= f->objs[i]) j++;
    if (j == nr || t[2 * j] > f->objs[i] || t[2 * j] + t[2 * j + 1] < f->objs[i] + AH_SLAB_SIZE) {
      char what[160];
      snprintf(what, sizeof what, "a pack of the fragmented region that misses object %#lx (%zu "
               "of %zu ranges checked)", (unsigned long)f->objs[i], j, nr);
      wrong(S, h, p, what, 0);
      return;
    }
  }
  S->res->frag_ranges += nr;
  S->res->frag_packs++;
}

/* FR_IDFREE is done: the regions left alive are kept (known as its own to the end). */
static void frag_keep_ids(fragger *f) {
  for (size_t i = 1; i < f->nids; i += 2) {
    if (!f->ids[i]) continue;
    if (f->nkept == f->keptcap) {
      f->keptcap = f->keptcap ? 2 * f->keptcap : 64;
      f->kept = realloc(f->kept, f->keptcap * sizeof *f->kept);
      if (!f->kept) abort(); /* the simulator itself out of memory */
    }
    f->kept[f->nkept++] = f->ids[i];
  }
  f->nids = f->next = 0;
  f->phase = FR_REGION;
}

/* A reply to a step of the fragmenter: the next phase once the last of this one is back. */
static void frag_on_reply(sim *S, hostile *h, const pend *p, const proto_msg *m, int st) {
  fragger *f = &h->fr;
  size_t want = (size_t)S->cfg->hostile_fragment;
  f->inflight--;
  switch ((enum frag_step)p->n) {
    case FR_REGION:
      if (!st && m->ntail == 1) f->rid = (rid_t)m->tail[0], f->phase = FR_BALLOC;
      break;
    case FR_BALLOC:
      if (st || m->ntail != 2 * want) { /* no room: the region goes, the IDs come next */
        f->n = 0;
        f->phase = FR_RFREE;
        break;
      }
      frag_objects(S, h, m);
      f->phase = FR_FREE;
      break;
    case FR_FREE:
      S->res->frag_holes++;
      if (f->next >= f->n && !f->inflight) f->phase = FR_PACK;
      break;
    case FR_PACK:
      if (!st) frag_ranges(S, h, p, m);
      f->phase = FR_RFREE;
      break;
    case FR_RFREE:
      f->rid = 0;
      f->n = f->next = f->nids = 0;
      f->phase = FR_IDS;
      break;
    case FR_IDS: {
      size_t i = (size_t)p->obj.addr;
      if (f->nids < 2 * want) {
        f->ids = realloc(f->ids, 2 * want * sizeof *f->ids);
        if (!f->ids) abort();
        for (size_t k = f->nids; k < 2 * want; k++) f->ids[k] = 0;
        f->nids = 2 * want;
      }
      f->ids[i] = !st && m->ntail == 1 ? (rid_t)m->tail[0] : 0;
      if (f->next >= 2 * want && !f->inflight) f->next = 0, f->phase = FR_IDFREE;
      break;
    }
    case FR_IDFREE:
      S->res->frag_id_holes++;
      if (f->next >= f->nids && !f->inflight) frag_keep_ids(f);
      break;
  }
}

/* ---- the hostile worker's life ---- */

/* One message; true when it waits for a reply. */
static bool send_one(sim *S, hostile *h) {
  if (S->cfg->hostile_fragment && pick(S, 2) && frag_step(S, h)) return true;
  uint64_t r = pick(S, 100);
  if (r < 20)
    hostile_garbage(S, h);
  else if (r < 37)
    hostile_alloc(S, h);
  else if (r < 47)
    hostile_free(S, h);
  else if (r < 55)
    hostile_realloc(S, h);
  else if (r < 63)
    hostile_query(S, h);
  else if (r < 71)
    hostile_ralloc(S, h);
  else if (r < 76)
    hostile_by_rid(S, h, true);
  else if (r < 80)
    hostile_by_rid(S, h, false);
  else if (r < 87)
    hostile_packv(S, h);
  else if (r < 93 && h->leases_slabs)
    hostile_lease(S, h);
  else
    hostile_unlease(S, h);
  return r >= 20;
}

/* At the end, as sys_finalize does: the leases back, empty, those of one scheduler at a time
 * (unless cfg->hostile_keep_leases: a worker that finalizes holding leases). */
static void return_leases(sim *S, hostile *h) {
  uint64_t tail[MAX_TAIL];
  uint32_t n = 0;
  int32_t sched = h->leases[0].sched;
  for (size_t i = 0; i < h->nleases && n < MAX_TAIL / 2;) {
    if (h->leases[i].sched != sched) {
      i++;
      continue;
    }
    tail[2 * n] = h->leases[i].slab;
    tail[2 * n + 1] = 0;
    n++;
    hlive_del(S, h->leases[i].slab);
    h->leases[i] = h->leases[--h->nleases];
  }
  proto_unlease b = {.n = n};
  request(S, h, mk(MSG_UNLEASE, HK_UNLEASE, EXP_OK, 0), &b, tail, 2 * n);
}

/* First its public region, then an object pinned in it (sim_internal.h), one at a time and
 * before anything else. True while they are under way. */
static bool setup_step(sim *S, hostile *h) {
  if (h->setup >= 2 || h->ops_left <= 0) return false;
  if (h->npend) return true;
  h->ops_left--;
  if (h->setup == 0) {
    proto_ralloc b = {.parent = REGION_ROOT, .level_hint = (int32_t)pick(S, (uint64_t)S->tree.levels)};
    request(S, h, mk(MSG_RALLOC, HK_PUBLIC, EXP_OK, 0), &b, NULL, 0);
  } else {
    proto_alloc b = {.size = 64, .rid = S->publics[h->pub].rid, .n = 1};
    request(S, h, mk(MSG_ALLOC, HK_PIN, EXP_OK, 0), &b, NULL, 0);
  }
  return true;
}

/* Send until a reply is awaited (now and then several are), or the worker is done. A hand-over
 * (hand-back) waiting for the replies to come back first is sent then, and alone. */
static void step(sim *S, hostile *h) {
  if (!h->done && setup_step(S, h)) return;
  if (h->drain && h->npend) return;
  if (h->drain && h->ops_left > 0 && hand_own(S, h, h->drain == 2)) {
    h->drain = 0;
    h->ops_left--;
    return;
  }
  h->drain = 0;
  while (!h->done && h->ops_left > 0 && h->npend < MAX_PENDING) {
    h->ops_left--;
    if (send_one(S, h) && (h->npend == MAX_PENDING || pick(S, 4))) break;
  }
  if (!h->done && h->ops_left == 0 && h->npend == 0 && h->nleases && !S->cfg->hostile_keep_leases) {
    return_leases(S, h);
    return;
  }
  if (!h->done && h->ops_left == 0 && h->npend == 0) {
    h->done = true;
    S->hostiles_finished++;
    sim_maybe_finalize_all(S);
  }
}

int hostile_setup(sim *S) {
  if (!S->cfg->hostile) return 0;
  S->hostiles = calloc((size_t)S->cfg->hostile, sizeof *S->hostiles);
  if (!S->hostiles) return ENOMEM;
  for (int rank = 0; rank < S->tree.nranks; rank++) {
    if (S->tree.is_sched[rank] || S->role[rank] >= 0) continue;
    hostile *h = &S->hostiles[-1 - S->role[rank]];
    h->rank = rank;
    h->leaf = S->tree.parent[rank];
    h->index = -1 - S->role[rank];
    h->ops_left = S->cfg->hostile_ops;
    h->leases_slabs = h->index % 2 == 0;
    h->pub = -1;
  }
  return 0;
}

void hostile_start(sim *S, int k) { step(S, &S->hostiles[k]); }

void hostile_teardown(sim *S) {
  for (int k = 0; S->hostiles && k < S->cfg->hostile; k++) {
    free(S->hostiles[k].objs);
    free(S->hostiles[k].gobjs);
    free(S->hostiles[k].leases);
    free(S->hostiles[k].fr.objs);
    free(S->hostiles[k].fr.ids);
    free(S->hostiles[k].fr.kept);
  }
  free(S->hostiles);
}

/* After the barrier: FINALIZE, and then (now and then) a second one or a late request,
 * which a finalized worker may not send: both dropped. */
void hostile_finalize(sim *S, int k) {
  hostile *h = &S->hostiles[k];
  unsigned char buf[sizeof(proto_header) + sizeof(proto_addr)];
  size_t len = proto_build(buf, sizeof buf, MSG_FINALIZE, ++h->req, h->rank, PROTO_NO_DEST, 0, -1,
                           NULL, NULL, 0);
  send_to(S, h, h->leaf, buf, len);
  h->finalized = true;
  if (pick(S, 2)) send_garbage(S, h, h->leaf, buf, len);
  if (pick(S, 2)) {
    proto_addr b = {.addr = wild_addr(S)};
    len = proto_build(buf, sizeof buf, MSG_QUERY, ++h->req, h->rank, PROTO_NO_DEST, 0, -1, &b, NULL,
                      0);
    send_garbage(S, h, h->leaf, buf, len);
  }
}

/* ---- replies ---- */
static const char *kind_name(int kind) {
  static const char *const names[] = {"alloc",   "free",  "realloc",  "query",
                                      "ralloc",  "rfree", "pack",     "packv",
                                      "lease",   "unlease", "hand-over", "hand-back",
                                      "ralloc of its public region", "alloc of its pinned object",
                                      "fragmenting step"};
  return names[kind];
}

static void wrong(sim *S, hostile *h, const pend *p, const char *what, int st) {
  sim_fail(S, SIM_FAIL_WRONG, false, "hostile worker %d: %s (%s req %lu) answered %d: %s", h->rank,
           kind_name(p->kind), proto_type_name(p->type), (unsigned long)p->req, st, what);
}

static bool status_ok(sim *S, hostile *h, const pend *p, int st) {
  if (st < 0 || st > 4095) return wrong(S, h, p, "not an errno", st), false;
  if (p->near && near_own(S, h, p->rid)) return true; /* its own after all: anything goes */
  if (p->expect == EXP_OK && st != 0) return wrong(S, h, p, "expected success", st), false;
  if (p->expect == EXP_FAIL && st == 0) return wrong(S, h, p, "expected an error", st), false;
  if (p->expect == EXP_ERRNO && st != p->err) {
    char what[96];
    snprintf(what, sizeof what, "expected errno %d%s", p->err,
             st == 0 && p->nonholder ? " (a request of a worker that does not hold it)" : "");
    return wrong(S, h, p, what, st), false;
  }
  if (p->expect == EXP_SET && st == 0)
    return wrong(S, h, p, "accepted, though it names what this worker does not hold", st), false;
  if (p->expect == EXP_SET && (st >= 32 || !(p->errs >> st & 1))) {
    char what[64];
    snprintf(what, sizeof what, "expected an errno of the set %#x", p->errs);
    return wrong(S, h, p, what, st), false;
  }
  if (p->nonholder && st == EPERM) S->res->nonholder_refused++;
  if (p->badmove && st == EINVAL) S->res->bad_moves_refused++;
  return true;
}

/* Objects an allocation answered: in the GAS, clear of everything live; kept if safe. */
static void on_alloc(sim *S, hostile *h, const pend *p, const proto_msg *m) {
  if (m->ntail != p->n) {
    wrong(S, h, p, "wrong number of addresses", 0);
    return;
  }
  for (uint32_t i = 0; i < m->ntail; i++) {
    bool sound = p->sound && (p->obj.reg < 0 || reg_alive(h, p->obj.reg));
    if (!sim_place_ok(S, m->tail[i], sim_extent(p->obj.size), "hostile worker", sound)) return;
    if (p->safe && reg_alive(h, p->obj.reg))
      add_obj(S, h, (hobj){m->tail[i], p->obj.size, p->obj.reg});
  }
}

static void on_realloc(sim *S, hostile *h, const pend *p, const proto_msg *m, int st, bool ok) {
  if (!p->own) return;
  if (st) { /* a failed call changes nothing: the object is still there */
    if (reg_alive(h, p->obj.reg)) add_obj(S, h, p->obj);
    return;
  }
  if (!ok) return; /* it succeeded where it could not: what it is now is anybody's guess */
  if (m->ntail != 2) {
    wrong(S, h, p, "wrong reply length", 0);
    return;
  }
  size_t size = (size_t)p->n;
  bool sound = p->sound && (p->reg < 0 || reg_alive(h, p->reg));
  if (sim_place_ok(S, m->tail[0], sim_extent(size), "hostile worker", sound) && p->safe &&
      reg_alive(h, p->reg))
    add_obj(S, h, (hobj){m->tail[0], size, p->reg});
}

static void on_query(sim *S, hostile *h, const pend *p, const proto_msg *m, int st) {
  if (st) return;
  const uint64_t *t = m->tail;
  if (m->ntail != 4 || p->obj.addr < t[1] || p->obj.addr - t[1] >= t[2])
    wrong(S, h, p, "an object that does not hold the address", 0);
  else if (p->own && (t[0] != p->rid || t[1] != p->obj.addr))
    wrong(S, h, p, "not its own object", 0);
}

static void on_ralloc(sim *S, hostile *h, const pend *p, const proto_msg *m, int st) {
  if (st) return;
  if (m->ntail != 1) {
    wrong(S, h, p, "wrong reply length", 0);
    return;
  }
  if (h->nregs < MAX_REGS) /* born dead when its parent was freed meanwhile */
    h->regs[h->nregs++] = (hreg){(rid_t)m->tail[0], p->reg < -1 ? -2 : p->reg,
                                 p->reg < -1 || reg_alive(h, p->reg), p->safe, -1, false};
}

static void on_lease(sim *S, hostile *h, const pend *p, const proto_msg *m, int st) {
  if (st) return;
  if (m->ntail < 3 || m->ntail - 2 > p->n || m->tail[1] != p->slot) {
    wrong(S, h, p, "a lease of the wrong shape", 0);
    return;
  }
  for (uint32_t i = 2; i < m->ntail; i++) {
    if (m->tail[i] % AH_SLAB_SIZE) {
      wrong(S, h, p, "a leased slab not slab-aligned", 0);
      return;
    }
    if (!sim_place_ok(S, m->tail[i], AH_SLAB_SIZE, "hostile lease", true)) return;
    if (h->nleases == h->leasecap) {
      h->leasecap = h->leasecap ? 2 * h->leasecap : 16;
      h->leases = realloc(h->leases, h->leasecap * sizeof *h->leases);
      if (!h->leases) abort();
    }
    h->leases[h->nleases++] = (hlease){m->tail[i], p->slot, (int32_t)m->tail[0]};
    hlive_add(S, m->tail[i], AH_SLAB_SIZE);
  }
}

/* A PACKV's ranges: none when it asked for none; else pairs, sorted and coalesced, covering
 * what it names of its own (a hand-over: every object of the subtree, named or not). */
static void on_ranges(sim *S, hostile *h, const pend *p, const proto_msg *m) {
  const uint64_t *t = m->tail;
  if ((p->flags & PACKV_NO_RANGES) ? m->ntail != 0 : m->ntail % 2 != 0) {
    wrong(S, h, p, "ranges of the wrong shape", 0);
    return;
  }
  for (uint32_t j = 2; j + 1 < m->ntail; j += 2)
    if (t[j] <= t[j - 2] + t[j - 1]) wrong(S, h, p, "ranges not sorted and coalesced", 0);
  for (size_t i = 0; p->kind == HK_HANDOVER && m->ntail && i < h->ngobjs; i++) {
    hobj o = h->gobjs[i];
    bool covered = false;
    for (uint32_t j = 0; j + 1 < m->ntail && !covered; j += 2)
      covered = o.addr >= t[j] && o.addr + o.size <= t[j] + t[j + 1];
    if (!covered && reg_in(h, o.reg, p->reg)) wrong(S, h, p, "ranges that miss an object", 0);
  }
}

/* Its public region and the object pinned in it: without them it goes on all the same. */
static void on_setup(sim *S, hostile *h, const pend *p, const proto_msg *m, int st) {
  h->setup = 2;
  if (st || m->ntail != 1) return;
  if (p->kind == HK_PUBLIC) {
    S->publics[S->npublic] = (sim_public){(rid_t)m->tail[0], h->rank, 0};
    h->pub = S->npublic++;
    h->setup = 1;
  } else if (sim_place_ok(S, m->tail[0], AH_SLOT_ALIGN, "hostile worker", true)) {
    S->publics[h->pub].pinned = m->tail[0];
    hlive_add(S, m->tail[0], AH_SLOT_ALIGN);
  }
}

static void on_reply(sim *S, hostile *h, const pend *p, const proto_msg *m) {
  int st = m->h->status;
  S->res->hostile_replies++;
  if (m->h->origin != h->rank) wrong(S, h, p, "reply names another origin", st);
  bool ok = status_ok(S, h, p, st);
  if (p->kind == HK_PUBLIC || p->kind == HK_PIN) {
    on_setup(S, h, p, m, st);
    return;
  }
  if (p->kind == HK_FRAG) {
    frag_on_reply(S, h, p, m, ok ? st : -1);
    return;
  }
  if (p->kind == HK_HANDOVER || p->kind == HK_HANDBACK) {
    hand_end(h, p->reg, (p->kind == HK_HANDBACK) == (st == 0));
    if (st == 0) S->res->handovers += p->kind == HK_HANDOVER, S->res->handbacks += p->kind == HK_HANDBACK;
  }
  if (!ok && p->kind != HK_REALLOC) return;
  switch (p->kind) {
    case HK_ALLOC:
      if (!st) on_alloc(S, h, p, m);
      break;
    case HK_REALLOC: on_realloc(S, h, p, m, st, ok); break;
    case HK_QUERY: on_query(S, h, p, m, st); break;
    case HK_RALLOC: on_ralloc(S, h, p, m, st); break;
    case HK_LEASE: on_lease(S, h, p, m, st); break;
    case HK_PACKV: case HK_HANDOVER: case HK_HANDBACK:
      if (!st) on_ranges(S, h, p, m);
      break;
    case HK_UNLEASE:
      if (!st && (m->ntail != 1 || m->tail[0] != 0))
        wrong(S, h, p, "dropped slots of an empty slab", st);
      break;
    default: break;
  }
}

void hostile_on_message(sim *S, int k, const unsigned char *data, size_t len) {
  hostile *h = &S->hostiles[k];
  proto_msg m;
  if (proto_decode(data, len, &m) || m.h->type != MSG_REPLY || m.h->dest != h->rank) {
    sim_fail(S, SIM_FAIL_WRONG, false, "hostile worker %d got a malformed or unexpected message",
             h->rank);
    return;
  }
  if (!sim_join_reply(S, h->rank, &m)) return; /* a pack's parts: the whole reply at the last */
  int i = 0;
  while (i < h->npend && h->pend[i].req != m.h->req) i++;
  if (i == h->npend) {
    for (int j = 0; j < h->ngave_up && j < 16; j++)
      if (h->gave_up[j] == m.h->req) return;
    sim_fail(S, SIM_FAIL_WRONG, false,
             "hostile worker %d: reply to request %lu, which it did not send"
             " (or was answered already)",
             h->rank, (unsigned long)m.h->req);
    return;
  }
  pend p = h->pend[i];
  h->pend[i] = h->pend[--h->npend];
  if (S->trace)
    fprintf(stderr, "trace: hostile %d req %lu status %d tail[0] %#lx n %u\n", h->rank,
            (unsigned long)p.req, m.h->status, m.ntail ? (unsigned long)m.tail[0] : 0ul, m.ntail);
  on_reply(S, h, &p, &m);
  step(S, h);
}

bool hostile_on_quiet(sim *S) {
  for (int k = 0; k < S->cfg->hostile; k++) {
    hostile *h = &S->hostiles[k];
    for (int i = 0; i < h->npend; i++) {
      const pend *p = &h->pend[i];
      sim_fail(S, SIM_FAIL_SILENT, false,
               "hostile worker %d: %s (%s req %lu) never answered (silent drop)", h->rank,
               kind_name(p->kind), proto_type_name(p->type), (unsigned long)p->req);
      h->gave_up[h->ngave_up++ % 16] = p->req;
    }
    h->npend = 0; /* given up on: what they were about is not tracked any more */
    step(S, h);
  }
  return S->nactive > 0;
}

bool hostile_gave(const sim *S, rid_t rid, int rank) {
  for (int k = 0; S->hostiles && k < S->cfg->hostile; k++) {
    const hostile *h = &S->hostiles[k];
    for (int r = 0; r < h->nregs; r++)
      if (h->regs[r].rid == rid && h->regs[r].given_to == rank) return true;
  }
  return false;
}

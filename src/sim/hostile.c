/* hostile.c: hostile workers, the protocol fuzzer (issue 14). Each one sends cfg->hostile_ops
 * messages to the schedulers: well-formed requests with hostile arguments (sizes near 2^64
 * and past the GAS, counts of billions, wrong and interior addresses, addresses at the GAS
 * end, unknown and near-max region IDs, level hints out of range, reallocs into other
 * workers' regions, leases and returns of slabs that are not theirs), forged headers and
 * random bytes. A message the schedulers can read as this worker's request must be answered
 * (else: a silent drop); anything else must be dropped and counted as malformed. Replies are
 * checked against what the request makes certain (a size past the GAS cannot succeed), and
 * whatever a hostile worker is given must overlap no live object.
 *
 * A hostile worker never disturbs the well-behaved ones through legal means: it frees and
 * reallocs only its own objects (or addresses no object can start at), rfrees only its own
 * regions or IDs nobody can hold. Its objects in its own regions (and its leased slabs) are
 * in the hlive trie, where no other allocation may land. Main entries: hostile_start,
 * hostile_on_message, hostile_on_quiet. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_internal.h"

#define MAX_PENDING 4 /* requests one hostile worker has in flight */
#define MAX_REGS 16
#define MAX_TAIL 16 /* tail words of the hostile requests built here */

enum expect { EXP_ANY, EXP_OK, EXP_FAIL, EXP_ERRNO };

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
  HK_UNLEASE
};

typedef struct {
  uintptr_t addr;
  size_t size;
  int reg;
} hobj; /* reg: index, -1 the root */
typedef struct {
  rid_t rid;
  int parent;
  bool alive, safe;
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
               * overlap with live objects can be checked (a region of another worker may
               * be freed, and its memory handed out again, before the reply arrives) */
  uint64_t n; /* BALLOC: the count */
  int reg; /* RALLOC: the parent's index; RFREE / PACK: the region's */
  rid_t rid; /* QUERY: the region an own object is in */
  uint32_t slot; /* LEASE: the slot size asked for */
} pend;

struct hostile {
  int rank, leaf, index, ops_left;
  uint64_t req;
  pend pend[MAX_PENDING];
  int npend;
  hobj *objs;
  size_t nobjs, objcap;
  hreg regs[MAX_REGS];
  int nregs;
  hlease *leases;
  size_t nleases, leasecap;
  uint64_t gave_up[16]; /* requests timed out (a late answer to one is no news) */
  int ngave_up;
  bool leases_slabs; /* even workers lease; odd ones return others' slabs (never theirs) */
  bool done, finalized;
};

static uint64_t rnd(sim *S) { return sim_rnd(&S->rng); }
static uint64_t pick(sim *S, uint64_t n) { return rnd(S) % n; }

/* ---- the shadow of what a hostile worker holds alone ---- */
static void hlive_add(sim *S, uintptr_t addr, size_t extent) {
  trie_insert(&S->hlive, sim_live_key(addr), extent);
}
static void hlive_del(sim *S, uintptr_t addr) { trie_delete(&S->hlive, sim_live_key(addr), NULL); }

static void add_obj(sim *S, hostile *h, hobj o) {
  if (h->nobjs == h->objcap) {
    h->objcap = h->objcap ? 2 * h->objcap : 32;
    h->objs = realloc(h->objs, h->objcap * sizeof *h->objs);
    if (!h->objs) abort(); /* the simulator itself out of memory */
  }
  h->objs[h->nobjs++] = o;
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

/* ---- region IDs and addresses to lie with ---- */

/* An ID no region can have: REGION_NONE, or one in the middle the root never hands out. */
static rid_t unknown_rid(sim *S) {
  return pick(S, 2) ? REGION_NONE : 0x80000000u + (rid_t)pick(S, 1000);
}

/* A region of a well-behaved worker: a public one (*public: never freed), or a near-max ID
 * (which may be anybody's, or nobody's). */
static rid_t foreign_rid(sim *S, bool *public) {
  *public = S->npublic && pick(S, 3);
  if (*public) return S->publics[pick(S, (uint64_t)S->npublic)];
  const sim_config *c = S->cfg;
  return (rid_t)(0xFFFFFFFEu - pick(S, (uint64_t)c->sched.boot_ids * 2 + 1)); /* near max */
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
    fprintf(stderr, "trace: hostile %d sends %s req %lu kind %d (word0 %#lx word1 %#lx)\n", h->rank,
            proto_type_name(p.type), (unsigned long)p.req, p.kind,
            (unsigned long)*(const uint64_t *)fixed,
            proto_fixed_size(p.type) >= 16 ? (unsigned long)((const uint64_t *)fixed)[1] : 0ul);
  if (judge(h, h->leaf, buf, len) != V_REPLY) abort(); /* the fuzzer's own bug */
  h->pend[h->npend++] = p;
  send_to(S, h, h->leaf, buf, len);
}

/* ---- well-formed requests with hostile arguments ---- */
static pend mk(unsigned type, int kind, int expect, int err) {
  return (pend){.type = type, .kind = kind, .expect = expect, .err = err, .reg = -1};
}

/* Allocation requests: a region (own, root, another worker's, unknown) and sizes/counts. */
static void hostile_alloc(sim *S, hostile *h) {
  int reg = -1;
  rid_t rid = REGION_ROOT;
  bool safe = true, unknown = false, public = false;
  uint64_t r = pick(S, 10);
  if (r < 3 && (reg = live_reg(S, h)) >= 0)
    rid = h->regs[reg].rid, safe = h->regs[reg].safe;
  else if (r < 5)
    rid = foreign_rid(S, &public), safe = false, reg = -2;
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
  /* what is certain, in the order the server checks: fields, region, space */
  if (size == 0 || n == 0 || (!batch && n != 1))
    p.expect = EXP_ERRNO, p.err = EINVAL;
  else if (batch && n > PROTO_MAX_TAIL)
    p.expect = EXP_ERRNO, p.err = E2BIG;
  else if (unknown)
    p.expect = EXP_ERRNO, p.err = ENOENT;
  else if (size > S->cfg->sched.gas_size / n)
    p.expect = EXP_FAIL;
  p.obj = (hobj){0, size, reg};
  p.n = n;
  p.safe = safe && reg >= -1;
  p.sound = p.safe || public;
  proto_alloc b = {.size = size, .rid = rid, .n = n};
  request(S, h, p, &b, NULL, 0);
}

static void hostile_free(sim *S, hostile *h) {
  pend p = mk(MSG_FREE, HK_FREE, EXP_ERRNO, EINVAL);
  bool own = false;
  uintptr_t addr;
  if (h->nobjs && pick(S, 2)) {
    p.obj = take_obj(S, h, pick(S, h->nobjs));
    p.own = true;
    p.expect = EXP_OK;
    addr = p.obj.addr;
  } else {
    addr = pick(S, 2) ? interior_addr(S, h, &own) : wild_addr(S);
  }
  proto_addr b = {.addr = addr};
  request(S, h, p, &b, NULL, 0);
}

static void hostile_realloc(sim *S, hostile *h) {
  pend p = mk(MSG_REALLOC, HK_REALLOC, EXP_FAIL, 0);
  bool own = false, public = false;
  uint64_t size = pick(S, 3) == 0 ? huge_size(S) : fair_size(S);
  rid_t to = REGION_NONE;
  int reg = -3; /* the object's own region */
  uint64_t r = pick(S, 6);
  if (r == 0)
    to = REGION_ROOT, reg = -1;
  else if (r == 1)
    to = foreign_rid(S, &public), reg = -2;
  else if (r == 2 && (reg = live_reg(S, h)) >= 0)
    to = h->regs[reg].rid;
  else
    reg = -3;
  if (pick(S, 32) == 0) size = 0;
  uintptr_t addr;
  if (h->nobjs && pick(S, 3)) {
    p.obj = take_obj(S, h, pick(S, h->nobjs));
    p.own = true;
    addr = p.obj.addr;
    p.expect = size > S->cfg->sched.gas_size ? EXP_FAIL : EXP_ANY;
    p.safe = reg == -3 || reg == -1 || (reg >= 0 && h->regs[reg].safe);
    p.sound = p.safe || public;
    if (reg != -3)
      p.reg = reg; /* where it goes if it moves */
    else
      p.reg = p.obj.reg;
  } else {
    addr = pick(S, 2) ? interior_addr(S, h, &own) : wild_addr(S);
  }
  if (size == 0) p.expect = EXP_ERRNO, p.err = EINVAL;
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

static void hostile_ralloc(sim *S, hostile *h) {
  static const int32_t hints[] = {-5, 99, INT32_MIN, INT32_MAX, -2, -1, 0, 1, 2};
  pend p = mk(MSG_RALLOC, HK_RALLOC, EXP_ANY, 0);
  bool public;
  int32_t hint = hints[pick(S, sizeof hints / sizeof *hints)];
  rid_t parent = REGION_ROOT;
  int reg = -1;
  uint64_t r = pick(S, 8);
  if (r < 3 && (reg = live_reg(S, h)) >= 0)
    parent = h->regs[reg].rid;
  else if (r == 3)
    parent = foreign_rid(S, &public), reg = -2;
  else if (r == 4)
    parent = unknown_rid(S), reg = -2, p.expect = EXP_ERRNO, p.err = ENOENT;
  else
    reg = -1;
  if (hint < -1 || hint >= S->tree.levels) p.expect = EXP_FAIL;
  p.reg = reg;
  p.safe = reg == -1 || (reg >= 0 && h->regs[reg].safe);
  if (h->nregs == MAX_REGS) { /* no room to remember another: make it fail for sure */
    hint = 99;
    p.expect = EXP_FAIL;
  }
  proto_ralloc b = {.parent = parent, .level_hint = hint};
  request(S, h, p, &b, NULL, 0);
}

/* rfree and pack: own regions, the root, unknown IDs (pack also other workers'). */
static void hostile_by_rid(sim *S, hostile *h, bool rfree) {
  pend p = mk(rfree ? MSG_RFREE : MSG_PACK, rfree ? HK_RFREE : HK_PACK, EXP_ANY, 0);
  int reg = pick(S, 2) ? live_reg(S, h) : -1;
  rid_t rid;
  if (reg >= 0 && rfree && !h->regs[reg].safe) /* under another worker's region: it may be */
    reg = -1; /* gone with it, and its ID another worker's now */
  if (reg >= 0) {
    rid = h->regs[reg].rid;
    p.reg = reg;
    p.own = true;
    if (h->regs[reg].safe) p.expect = EXP_OK;
    if (rfree) kill_regs(S, h, reg); /* what the worker hands over is gone from now on */
  } else if (pick(S, 3) == 0) {
    rid = REGION_ROOT;
    if (rfree) p.expect = EXP_FAIL; /* the root region is never freed */
  } else if (!rfree && pick(S, 2)) {
    bool public;
    rid = foreign_rid(S, &public);
  } else {
    rid = unknown_rid(S);
    p.expect = EXP_ERRNO, p.err = ENOENT;
  }
  proto_rid b = {.rid = rid};
  request(S, h, p, &b, NULL, 0);
}

static void hostile_packv(sim *S, hostile *h) {
  uint64_t tail[MAX_TAIL];
  proto_packv b = {.nreg = (uint32_t)pick(S, 4), .nobj = (uint32_t)pick(S, 4)};
  bool own, public;
  for (uint32_t i = 0; i < b.nreg; i++)
    tail[i] = pick(S, 2) ? foreign_rid(S, &public) : unknown_rid(S);
  for (uint32_t i = 0; i < b.nobj; i++)
    tail[b.nreg + i] = pick(S, 2) ? interior_addr(S, h, &own) : wild_addr(S);
  pend p = mk(MSG_PACKV, HK_PACKV, EXP_ANY, 0);
  if (b.nreg + b.nobj == 0) p.expect = EXP_ERRNO, p.err = EINVAL;
  request(S, h, p, &b, tail, b.nreg + b.nobj);
}

static void hostile_lease(sim *S, hostile *h) {
  static const uint64_t sizes[] = {0, 64, 100, 4096, 4097, 1 << 20};
  pend p = mk(MSG_LEASE, HK_LEASE, EXP_ANY, 0);
  proto_lease b = {.size = sizes[pick(S, 6)], .rid = REGION_ROOT, .want = 1 + (uint32_t)pick(S, 4)};
  b.min = 1 + (uint32_t)pick(S, b.want);
  int reg = pick(S, 2) ? live_reg(S, h) : -1;
  if (reg >= 0) b.rid = h->regs[reg].rid;
  if (pick(S, 8) == 0) b.want = pick(S, 2) ? PROTO_LEASE_MAX + 1 : 0;
  if (pick(S, 8) == 0) b.min = b.want + 1;
  if (b.size == 0 || b.size > AH_SLAB_SIZE || b.min < 1 || b.want < b.min ||
      b.want > PROTO_LEASE_MAX)
    p.expect = EXP_ERRNO, p.err = EINVAL;
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

/* ---- the hostile worker's life ---- */

/* One message; true when it waits for a reply. */
static bool send_one(sim *S, hostile *h) {
  uint64_t r = pick(S, 100);
  if (r < 20)
    hostile_garbage(S, h);
  else if (r < 40)
    hostile_alloc(S, h);
  else if (r < 50)
    hostile_free(S, h);
  else if (r < 58)
    hostile_realloc(S, h);
  else if (r < 66)
    hostile_query(S, h);
  else if (r < 74)
    hostile_ralloc(S, h);
  else if (r < 79)
    hostile_by_rid(S, h, true);
  else if (r < 83)
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

/* Send until a reply is awaited (now and then several are), or the worker is done. */
static void step(sim *S, hostile *h) {
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
  }
  return 0;
}

void hostile_start(sim *S, int k) { step(S, &S->hostiles[k]); }

void hostile_teardown(sim *S) {
  for (int k = 0; S->hostiles && k < S->cfg->hostile; k++) {
    free(S->hostiles[k].objs);
    free(S->hostiles[k].leases);
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
  static const char *const names[] = {"alloc", "free", "realloc", "query", "ralloc",
                                      "rfree", "pack", "packv",   "lease", "unlease"};
  return names[kind];
}

static void wrong(sim *S, hostile *h, const pend *p, const char *what, int st) {
  sim_fail(S, SIM_FAIL_WRONG, false, "hostile worker %d: %s (%s req %lu) answered %d: %s", h->rank,
           kind_name(p->kind), proto_type_name(p->type), (unsigned long)p->req, st, what);
}

static bool status_ok(sim *S, hostile *h, const pend *p, int st) {
  if (st < 0 || st > 4095) return wrong(S, h, p, "not an errno", st), false;
  if (p->expect == EXP_OK && st != 0) return wrong(S, h, p, "expected success", st), false;
  if (p->expect == EXP_FAIL && st == 0) return wrong(S, h, p, "expected an error", st), false;
  if (p->expect == EXP_ERRNO && st != p->err) {
    char what[64];
    snprintf(what, sizeof what, "expected errno %d", p->err);
    return wrong(S, h, p, what, st), false;
  }
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
                                 p->reg < -1 || reg_alive(h, p->reg), p->safe};
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

static void on_reply(sim *S, hostile *h, const pend *p, const proto_msg *m) {
  int st = m->h->status;
  S->res->hostile_replies++;
  if (m->h->origin != h->rank) wrong(S, h, p, "reply names another origin", st);
  bool ok = status_ok(S, h, p, st);
  if (!ok && p->kind != HK_REALLOC) return;
  switch (p->kind) {
    case HK_ALLOC:
      if (!st) on_alloc(S, h, p, m);
      break;
    case HK_REALLOC: on_realloc(S, h, p, m, st, ok); break;
    case HK_QUERY: on_query(S, h, p, m, st); break;
    case HK_RALLOC: on_ralloc(S, h, p, m, st); break;
    case HK_LEASE: on_lease(S, h, p, m, st); break;
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
    fprintf(stderr, "trace: hostile %d req %lu status %d n %u\n", h->rank, (unsigned long)p.req,
            m.h->status, m.ntail);
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

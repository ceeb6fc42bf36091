/* proto.c: the table of message kinds (kinds.def: sizes, tails, checks, routes, senders), and
 * building and validating messages by it. Nothing is read from a message before proto_decode
 * has checked it. Main entries: proto_decode, proto_build. */
#include "proto/proto.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* ---- tail counts (kinds.def's tail column): the words the fixed part announces, or
 * PROTO_MAX_TAIL + 1 when that is more than a message may carry ---- */
static uint32_t capped(uint64_t words) {
  return words > PROTO_MAX_TAIL ? PROTO_MAX_TAIL + 1 : (uint32_t)words;
}
static uint32_t tail_reply(const void *fixed) { return ((const proto_reply *)fixed)->ntail; }
static uint32_t tail_packv(const void *fixed) {
  const proto_packv *v = fixed;
  return capped((uint64_t)v->nreg * (v->flags & PACKV_SKIP_GONE ? 2 : 1) + v->nobj);
}
static uint32_t tail_unlease(const void *fixed) {
  return capped(2ull * ((const proto_unlease *)fixed)->n);
}
static uint32_t tail_return(const void *fixed) {
  const proto_return *r = fixed;
  return capped(2ull * r->nranges + 2ull * r->nids + (uint64_t)PROTO_STAT_WORDS * r->nrows);
}

/* ---- field checks (kinds.def's check column): counts and sizes a scheduler must never trust
 * blindly; 0 when they hold, else the errno to answer with ---- */
static int check_balloc(const void *fixed) {
  const proto_alloc *a = fixed;
  if (a->n == 0 || a->size == 0) return EINVAL;
  return a->n <= PROTO_MAX_TAIL ? 0 : E2BIG; /* the reply could not carry the addresses */
}
static int check_alloc(const void *fixed) {
  const proto_alloc *a = fixed;
  return a->n == 1 && a->size > 0 ? 0 : EINVAL;
}
static int check_realloc(const void *fixed) {
  return ((const proto_realloc *)fixed)->size > 0 ? 0 : EINVAL;
}
static int check_lease(const void *fixed) {
  const proto_lease *l = fixed;
  bool ok = l->size > 0 && l->size <= 4096 && l->min >= 1 && l->want >= l->min &&
            l->want <= PROTO_LEASE_MAX;
  return ok ? 0 : EINVAL;
}
static int check_unlease(const void *fixed) {
  return ((const proto_unlease *)fixed)->n >= 1 ? 0 : EINVAL;
}
static int check_reply(const void *fixed) {
  return (((const proto_reply *)fixed)->flags & ~PROTO_REPLY_MORE) == 0 ? 0 : EINVAL;
}
static int check_packv(const void *fixed) {
  const proto_packv *v = fixed;
  bool over = v->flags & PACKV_HANDOVER, back = v->flags & PACKV_HANDBACK;
  bool ok = (uint64_t)v->nreg + v->nobj >= 1 && (v->flags & ~PACKV_FLAGS) == 0 &&
            !(over && back) && !(back && v->nobj) && (!(over || back) || v->peer >= 0) &&
            !((v->flags & PACKV_SKIP_GONE) && v->nobj) &&
            (!(v->flags & PACKV_COMMIT) || over || back) &&
            (!(v->flags & PACKV_OWNED) || (!v->nobj && !over && !back &&
                                           !(v->flags & PACKV_NO_RANGES)));
  return ok ? 0 : EINVAL;
}

/* ---- the table of kinds (kinds.def), indexed by type ---- */
typedef struct kind {
  const char *name;
  size_t fixed;
  uint32_t (*tail)(const void *fixed);
  int (*check)(const void *fixed);
  enum proto_route route;
  size_t key;
  enum proto_sender by;
} kind;

static const kind kinds[MSG_TYPE_END] = {
#define PROTO_KIND(NAME, fixed_, tail_, check_, route_, key_, by_, handler)                    \
  [MSG_##NAME] = {.name = #NAME, .fixed = fixed_, .tail = tail_, .check = check_,             \
                  .route = route_, .key = key_, .by = by_},
#include "proto/kinds.def"
};

/* The wire numbers are the rows' order: a row inserted or moved would renumber the kinds. */
_Static_assert(MSG_RALLOC == 1 && MSG_PACKV == 11 && MSG_REPLY == 13 && MSG_GIVEBACK == 21 &&
                   MSG_TYPE_END == 22,
               "proto/kinds.def: append rows, never insert or reorder (wire numbers)");

/* The row of a type, or NULL for a type no row has. */
static const kind *kind_of(unsigned type) {
  return type > MSG_TYPE_NONE && type < MSG_TYPE_END ? &kinds[type] : NULL;
}

size_t proto_fixed_size(unsigned type) {
  const kind *k = kind_of(type);
  return k ? k->fixed : 0;
}

uint32_t proto_tail_count(unsigned type, const void *fixed) {
  const kind *k = kind_of(type);
  return k && k->tail ? k->tail(fixed) : 0;
}

const char *proto_type_name(unsigned type) {
  const kind *k = kind_of(type);
  return k ? k->name : "?";
}

enum proto_route proto_route_of(unsigned type) {
  const kind *k = kind_of(type);
  return k ? k->route : PROTO_ROUTE_HERE;
}

bool proto_by_worker(unsigned type) {
  const kind *k = kind_of(type);
  return k && k->by == PROTO_BY_WORKER;
}

uint64_t proto_route_key(const proto_msg *m) {
  const kind *k = kind_of(m->h->type);
  const unsigned char *at = (const unsigned char *)m->fixed + (k ? k->key : 0);
  switch (k ? k->route : PROTO_ROUTE_HERE) {
    case PROTO_ROUTE_REGION: { uint32_t rid; memcpy(&rid, at, sizeof rid); return rid; }
    case PROTO_ROUTE_ADDR: { uint64_t addr; memcpy(&addr, at, sizeof addr); return addr; }
    case PROTO_ROUTE_LEASE: return m->tail[0];
    default: return 0;
  }
}

/* Field checks beyond sizes: 0 when they hold, else the errno to answer with. */
static int fields_errno(unsigned type, const void *fixed) {
  const kind *k = kind_of(type);
  return k && k->check ? k->check(fixed) : 0;
}

int proto_decode(const void *buf, size_t len, proto_msg *m) {
  if (len < sizeof(proto_header)) return EPROTO;
  const proto_header *h = buf;
  if (h->magic != PROTO_MAGIC || h->version != PROTO_VERSION) return EPROTO;
  if (h->type == 0 || h->type >= MSG_TYPE_END) return EPROTO;
  if ((size_t)h->length != len - sizeof *h) return EPROTO;
  size_t fixed = proto_fixed_size(h->type);
  if (h->length < fixed) return EPROTO;
  const unsigned char *p = (const unsigned char *)buf + sizeof *h;
  uint32_t ntail = fixed ? proto_tail_count(h->type, p) : 0;
  if (ntail > PROTO_MAX_TAIL || h->length != fixed + (size_t)ntail * 8) return EPROTO;
  m->h = h;
  m->fixed = fixed ? p : NULL;
  m->tail = ntail ? (const uint64_t *)(p + fixed) : NULL;
  m->ntail = ntail;
  return fixed ? fields_errno(h->type, p) : 0;
}

size_t proto_build(void *out, size_t cap, unsigned type, uint64_t req, int32_t origin,
                   int32_t dest, int32_t status, int32_t sched, const void *fixed,
                   const uint64_t *tail, uint32_t ntail) {
  size_t fsize = proto_fixed_size(type);
  size_t len = sizeof(proto_header) + fsize + (size_t)ntail * 8;
  if (len > cap) return 0;
  proto_header h = {.magic = PROTO_MAGIC, .version = PROTO_VERSION, .type = (uint8_t)type,
                    .length = (uint32_t)(len - sizeof h), .req = req, .origin = origin,
                    .dest = dest, .status = status, .sched = sched};
  unsigned char *p = out;
  memcpy(p, &h, sizeof h);
  if (fsize) memcpy(p + sizeof h, fixed, fsize);
  if (ntail) memcpy(p + sizeof h + fsize, tail, (size_t)ntail * 8);
  return len;
}

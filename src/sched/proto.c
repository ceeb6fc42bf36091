/* proto.c: building and validating protocol messages. Nothing is read from a message before
 * proto_decode has checked it. */
#include "sched/proto.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

size_t proto_fixed_size(unsigned type) {
  switch (type) {
    case MSG_RALLOC: return sizeof(proto_ralloc);
    case MSG_RFREE: case MSG_PACK: return sizeof(proto_rid);
    case MSG_ALLOC: case MSG_BALLOC: return sizeof(proto_alloc);
    case MSG_FREE: case MSG_QUERY: return sizeof(proto_addr);
    case MSG_REALLOC: return sizeof(proto_realloc);
    case MSG_LEASE: return sizeof(proto_lease);
    case MSG_UNLEASE: return sizeof(proto_unlease);
    case MSG_PACKV: return sizeof(proto_packv);
    case MSG_FINALIZE: return 0;
    case MSG_REPLY: return sizeof(proto_reply);
    case MSG_CREATE_BELOW: return sizeof(proto_create);
    case MSG_CREATED: case MSG_UNLINK: return sizeof(proto_created);
    case MSG_REFILL: return sizeof(proto_refill);
    case MSG_GRANT: case MSG_GIVEBACK: return sizeof(proto_grant);
    case MSG_LOAD: return sizeof(proto_load);
    case MSG_RETURN: return sizeof(proto_return);
    default: return 0;
  }
}

uint32_t proto_tail_count(unsigned type, const void *fixed) {
  if (type == MSG_REPLY) return ((const proto_reply *)fixed)->ntail;
  if (type == MSG_PACKV) {
    const proto_packv *v = fixed;
    uint64_t words = (uint64_t)v->nreg * (v->flags & PACKV_SKIP_GONE ? 2 : 1) + v->nobj;
    return words > PROTO_MAX_TAIL ? PROTO_MAX_TAIL + 1 : (uint32_t)words;
  }
  if (type == MSG_UNLEASE) {
    uint64_t words = 2ull * ((const proto_unlease *)fixed)->n;
    return words > PROTO_MAX_TAIL ? PROTO_MAX_TAIL + 1 : (uint32_t)words;
  }
  if (type == MSG_RETURN) {
    const proto_return *r = fixed;
    uint64_t words = 2ull * r->nranges + 2ull * r->nids + (uint64_t)PROTO_STAT_WORDS * r->nrows;
    return words > PROTO_MAX_TAIL ? PROTO_MAX_TAIL + 1 : (uint32_t)words;
  }
  return 0;
}

const char *proto_type_name(unsigned type) {
  static const char *const names[MSG_TYPE_END] = {
      "?", "RALLOC", "RFREE", "ALLOC", "BALLOC", "FREE", "REALLOC", "PACK", "QUERY", "LEASE",
      "UNLEASE", "PACKV", "FINALIZE", "REPLY", "CREATE_BELOW", "CREATED", "UNLINK", "REFILL", "GRANT", "LOAD",
      "RETURN", "GIVEBACK"};
  return type < MSG_TYPE_END ? names[type] : "?";
}

/* Field checks beyond sizes: counts and sizes a scheduler must never trust blindly. 0 when
 * they hold, else the errno to answer with. */
static int fields_errno(unsigned type, const void *fixed) {
  bool ok = true;
  switch (type) {
    case MSG_BALLOC: {
      const proto_alloc *a = fixed;
      if (a->n == 0 || a->size == 0) return EINVAL;
      return a->n <= PROTO_MAX_TAIL ? 0 : E2BIG; /* the reply could not carry the addresses */
    }
    case MSG_ALLOC: {
      const proto_alloc *a = fixed;
      ok = a->n == 1 && a->size > 0;
      break;
    }
    case MSG_REALLOC: ok = ((const proto_realloc *)fixed)->size > 0; break;
    case MSG_LEASE: {
      const proto_lease *l = fixed;
      ok = l->size > 0 && l->size <= 4096 && l->min >= 1 && l->want >= l->min &&
           l->want <= PROTO_LEASE_MAX;
      break;
    }
    case MSG_UNLEASE: ok = ((const proto_unlease *)fixed)->n >= 1; break;
    case MSG_REPLY: ok = (((const proto_reply *)fixed)->flags & ~PROTO_REPLY_MORE) == 0; break;
    case MSG_PACKV: {
      const proto_packv *v = fixed;
      bool over = v->flags & PACKV_HANDOVER, back = v->flags & PACKV_HANDBACK;
      ok = (uint64_t)v->nreg + v->nobj >= 1 && (v->flags & ~PACKV_FLAGS) == 0 &&
           !(over && back) && !(back && v->nobj) && (!(over || back) || v->peer >= 0) &&
           !((v->flags & PACKV_SKIP_GONE) && v->nobj) &&
           (!(v->flags & PACKV_COMMIT) || over || back) &&
           (!(v->flags & PACKV_OWNED) || (!v->nobj && !over && !back &&
                                          !(v->flags & PACKV_NO_RANGES)));
      break;
    }
    default: break;
  }
  return ok ? 0 : EINVAL;
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

/* move.c: moving regions and objects between workers (sys_send, sys_recv, sys_give): the
 * pack at the schedulers (MSG_PACKV, with the hand-over), the move memo on a shared GAS
 * (memo.h), the ANTHEAP_CHECK=handover guard, and the range transfer (transfer.h), on one of
 * SYS_MOVE_CHANNELS channels (each its own transfer tags). Main entries: sys_send_on,
 * sys_recv_on (sys_send, sys_recv: channel 0), sys_give. */
#include <stdio.h>
#include <stdlib.h>

#include "worker/gas.h"
#include "worker/guard.h"
#include "worker/handles.h"
#include "worker/worker.h"

/* One MSG_PACKV naming what d names, with flags (proto.h: PACKV_HANDOVER, _HANDBACK,
 * _NO_RANGES) and the peer (a world rank) they concern: the schedulers check that this worker
 * holds what it names, hand regions over when asked, and answer with the ranges of every
 * named region (with descendants) and object, sorted and merged, whatever their number and
 * wherever they live. *out is NULL when there are none. */
int move_packv(const move_desc *d, uint32_t flags, int32_t peer, gas_range **out,
               size_t *nout) {
  *out = NULL;
  *nout = 0;
  uint64_t count = (uint64_t)d->nreg + d->nobj;
  if (count == 0) return 0;
  if (count > PROTO_MAX_TAIL) return E2BIG;
  uint64_t *names = malloc((size_t)count * sizeof *names);
  if (!names) return ENOMEM;
  for (uint32_t i = 0; i < d->nreg; i++) names[i] = d->regions[i];
  for (uint32_t i = 0; i < d->nobj; i++) names[d->nreg + i] = (uintptr_t)d->objects[i];
  proto_packv b = {.nreg = d->nreg, .nobj = d->nobj, .flags = flags, .peer = peer};
  uint64_t *t;
  size_t nt;
  int rc = rpc_gather(MSG_PACKV, &b, names, (uint32_t)count, &t, &nt);
  free(names);
  if (rc) return rc;
  if (nt % 2 || ((flags & PACKV_NO_RANGES) && nt)) {
    free(t);
    return EPROTO;
  }
  /* {addr, len} pairs are gas_range records as they stand (both two 64-bit words) */
  _Static_assert(sizeof(gas_range) == 2 * sizeof(uint64_t), "a gas_range is a wire pair");
  *out = (gas_range *)t;
  *nout = nt / 2;
  return 0;
}

/* The ranges of what d names, checked as held by this worker, in one request. */
static int pack_ranges(const move_desc *d, gas_range **out, size_t *nout) {
  return move_packv(d, 0, PROTO_NO_DEST, out, nout);
}

/* pack_ranges, counted (antheap_debug_packs), handing the regions to world rank `to` when it
 * is not PROTO_NO_DEST. */
static int gather_ranges(const move_desc *d, int32_t to, gas_range **out, size_t *nout) {
  if (d->nreg + d->nobj) ah_self.packs++;
  uint32_t flags = to != PROTO_NO_DEST && d->nreg ? PACKV_HANDOVER : 0;
  return move_packv(d, flags, to, out, nout);
}

/* Hand d's regions (with descendants) to world rank `to` without their ranges; with none, only
 * check that this worker holds the objects' regions. Not a pack (antheap_debug_packs). */
int move_hand_over(const move_desc *d, int32_t to) {
  gas_range *none;
  size_t n;
  uint32_t flags = PACKV_NO_RANGES | (d->nreg ? PACKV_HANDOVER : 0);
  return move_packv(d, flags, to, &none, &n);
}

/* A move failed after its hand-over (the receiver refused it): d's regions come back. */
static void hand_back(const move_desc *d, int32_t to) {
  gas_range *none;
  size_t n;
  move_desc regions = move_desc_regions(d);
  uint32_t flags = PACKV_HANDBACK | PACKV_NO_RANGES;
  int rc = d->nreg ? move_packv(&regions, flags, to, &none, &n) : 0;
  if (rc)
    fprintf(stderr, "antheap: worker %d: the regions of a failed sys_send could not be taken "
            "back (%s); they stay with the receiver\n", ah_self.id, sys_strerror(rc));
}

/* ANTHEAP_MOVE_MEMO=check: pack what a memo served (uncounted) and say where they differ; the
 * pack's list, or its error, replaces the memo's. */
static int check_memo(const move_desc *d, gas_range **r, size_t *n) {
  gas_range *p;
  size_t np;
  int rc = pack_ranges(d, &p, &np);
  size_t i = 0;
  while (!rc && i < np && i < *n && p[i].addr == (*r)[i].addr && p[i].len == (*r)[i].len) i++;
  if (rc)
    fprintf(stderr, "antheap: worker %d: move memo mismatch: the memo had %zu ranges, the pack "
            "failed (%s)\n", ah_self.id, *n, sys_strerror(rc));
  else if (i < np || i < *n)
    fprintf(stderr, "antheap: worker %d: move memo mismatch: the memo had %zu ranges, the pack "
            "%zu; they differ from range %zu on\n", ah_self.id, *n, np, i);
  free(*r);
  *r = rc ? NULL : p;
  *n = rc ? 0 : np;
  return rc;
}


/* The link of a move with worker index peer on a channel: its own TRANSFER_TAGS tags. */
static transfer_link link_with(int peer, int channel) {
  return (transfer_link){ah_self.job.xfer, peer, AH_TAG_XFER + channel * TRANSFER_TAGS};
}

static bool valid_channel(int channel) { return channel >= 0 && channel < SYS_MOVE_CHANNELS; }
_Static_assert(AH_TAG_XFER + SYS_MOVE_CHANNELS * TRANSFER_TAGS <= 32767,
               "every channel's tags within what MPI promises (MPI_TAG_UB >= 32767)");

int sys_send(int peer, const rid_t *regions, int nreg, void *const *objects, int nobj) {
  return sys_send_on(peer, 0, regions, nreg, objects, nobj);
}

int sys_send_on(int peer, int channel, const rid_t *regions, int nreg, void *const *objects,
                int nobj) {
  if (!ah_self.up) return fail_errno(NOT_UP);
  if (!valid_peer(peer) || !valid_channel(channel)) return fail_errno(EINVAL);
  int32_t to = ah_self.job.plan.worker_ranks[peer];
  int rc = nreg < 0 || nobj < 0 || (nreg && !regions) || (nobj && !objects) ? EINVAL : 0;
  /* the receiver must be able to allocate and free in what it gets */
  if (!rc) rc = worker_flush_cache();
  RANK_GUARD(); /* (not across the transfer: threads move to different peers at once) */
  if (!rc && (uint64_t)nreg + (uint64_t)nobj > PROTO_MAX_TAIL) rc = E2BIG;
  move_desc d = {regions, rc ? 0 : (uint32_t)nreg, objects, rc ? 0 : (uint32_t)nobj};
  uint32_t nh = rc ? 0 : move_words_count(&d);
  uint64_t *h = rc ? NULL : move_words_encode(&d);
  if (!rc && !h) rc = ENOMEM;
  transfer_mode mode = share_with(&ah_self.share, peer) ? TRANSFER_SHARED : TRANSFER_COPY;
  gas_range *r = NULL;
  size_t n = 0;
  /* shared: what we received and did not change goes on without a pack (memo.h), but the
   * schedulers still check it and hand it over */
  bool served = !rc && mode == TRANSFER_SHARED && memo_take(&ah_self.memo, h, nh, &r, &n);
  if (served && ah_self.memo_check) rc = check_memo(&d, &r, &n);
  gas_range *guarded = NULL; /* ANTHEAP_CHECK=handover: the regions' own ranges (guard.h) */
  size_t nguarded = 0;
  move_desc own = move_desc_regions(&d);
  if (!rc && guard_on() && d.nreg && d.nobj) rc = pack_ranges(&own, &guarded, &nguarded);
  if (served && !rc) rc = move_hand_over(&d, to);
  else if (!rc && !served) rc = gather_ranges(&d, to, &r, &n);
  if (rc) { /* the receiver hears of it: it would wait for ever otherwise */
    free(h);
    free(r);
    free(guarded);
    transfer_send_abort(link_with(peer, channel), rc);
    return fail_errno(rc);
  }
  memo_moved left = {h, nh, r, n}; /* served from a memo: they leave us */
  memo_on_change(&ah_self.memo, served ? MEMO_MOVED : MEMO_SENT_PACKED, &left);
  int refusal;
  transfer_list list = {h, nh, r, n};
  /* hands off before the receiver can free them (guard.h); a copy still reads them */
  size_t guard = d.nreg ? guard_protect(d.nobj ? guarded : r, d.nobj ? nguarded : n,
                                        mode == TRANSFER_COPY, "sys_send", peer, regions, nreg)
                        : GUARD_NONE;
  rank_unlock();
  rc = transfer_send(link_with(peer, channel), mode, share_near(&ah_self.share, peer), &list,
                     &refusal);
  rank_lock();
  if (rc == 0 || rc == ETIMEDOUT) guard_tighten(guard); /* handed over (after ETIMEDOUT too) */
  else guard_undo(guard);
  free(h);
  free(r);
  free(guarded);
  /* refused: the move did not happen, they are ours again (after ETIMEDOUT the receiver may
   * still take them) */
  if (rc && rc != ETIMEDOUT) hand_back(&d, to);
  if (rc == ECONNREFUSED && refusal == ESHUTDOWN) rc = ESHUTDOWN; /* the receiver left */
  return rc ? fail_errno(rc) : 0;
}

int sys_give(int peer, const rid_t *regions, int num_regions) {
  if (!ah_self.up) return fail_errno(NOT_UP);
  if (!valid_peer(peer) || num_regions < 0 || (num_regions && !regions))
    return fail_errno(EINVAL);
  if ((uint64_t)num_regions > PROTO_MAX_TAIL) return fail_errno(E2BIG);
  if (num_regions == 0) return 0;
  int rc = worker_flush_cache(); /* the new holder must be able to allocate and free in them */
  RANK_GUARD();
  memo_on_change(&ah_self.memo, MEMO_GIVEN, NULL);
  move_desc d = {.regions = regions, .nreg = (uint32_t)num_regions};
  gas_range *guarded = NULL; /* ANTHEAP_CHECK=handover: their ranges (guard.h) */
  size_t nguarded = 0;
  if (!rc && guard_on()) rc = pack_ranges(&d, &guarded, &nguarded);
  size_t guard = rc ? GUARD_NONE
                    : guard_protect(guarded, nguarded, false, "sys_give", peer, regions,
                                    num_regions); /* before the new holder can free them */
  if (!rc) rc = move_hand_over(&d, ah_self.job.plan.worker_ranks[peer]);
  if (rc) guard_undo(guard);
  free(guarded);
  return rc ? fail_errno(rc) : 0;
}

/* What a receiver expects: the sender's counts must be its own; shared mode only with a worker
 * that maps the same GAS memory. */
typedef struct {
  int nreg, nobj;
  transfer_mode mode; /* set by accept_move: how the move came */
} move_expect;

static int accept_move(void *ctx, int src, transfer_mode mode, const uint64_t *extra,
                       uint32_t nextra) {
  move_expect *e = ctx;
  if (mode == TRANSFER_SHARED && !share_with(&ah_self.share, src)) return EPROTO;
  e->mode = mode;
  return move_words_fit(extra, nextra, (uint32_t)e->nreg, (uint32_t)e->nobj) ? 0 : EINVAL;
}

int sys_recv(int peer, rid_t *regions, int nreg, void **objects, int nobj) {
  return sys_recv_on(peer, 0, regions, nreg, objects, nobj);
}

int sys_recv_on(int peer, int channel, rid_t *regions, int nreg, void **objects, int nobj) {
  if (!ah_self.up) return fail_errno(NOT_UP);
  if (!valid_peer(peer) || !valid_channel(channel) || nreg < 0 || nobj < 0 ||
      (nreg && !regions) || (nobj && !objects))
    return fail_errno(EINVAL);
  move_expect e = {nreg, nobj, TRANSFER_COPY};
  transfer_policy policy = {.accept = accept_move, .ctx = &e};
  transfer_receipt got;
  int rc = transfer_recv(link_with(peer, channel), &policy, &got);
  if (rc) return fail_errno(rc);
  gas_range *r = got.r;
  size_t n = got.n;
  /* Shared: the bytes are there, but not yet in our page tables: map them in one call per
   * range rather than one fault per page as the application walks them. Outside the rank lock
   * (gas_populate is thread-safe): a rank's other threads need not wait for the pages. */
  for (size_t i = 0; gas_is_shared() && i < n; i++) gas_populate(r[i].addr, r[i].len);
  RANK_GUARD(); /* the memo */
  move_words_decode(got.extra, regions, objects);
  if (e.mode == TRANSFER_SHARED) { /* kept (memo.h): sending it on needs no pack */
    memo_keep(&ah_self.memo, got.extra, got.nextra, r, n);
    return 0;
  }
  memo_moved arrived = {got.extra, got.nextra, r, n};
  memo_on_change(&ah_self.memo, MEMO_MOVED, &arrived);
  free(got.extra);
  free(r);
  return 0;
}

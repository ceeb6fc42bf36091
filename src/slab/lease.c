/* lease.c: whole empty slabs leased to a worker's allocation cache, and handed back with the
 * bitmap of their live slots (slab.h explains the contract). A lease of several slabs that the
 * class's empty slabs cannot cover is carved as one class run (classes.c): one descriptor for up
 * to SLAB_RUN_MAX slabs. Handing back takes two steps, so that a batch comes home whole or not
 * at all: slab_lease_prepare cuts each run into pieces whose slabs share a fate (the only step
 * that needs memory), then slab_lease_return_many settles them: full slabs stay one run,
 * partial ones are slabs of their own, empty ones an empty run of their class. Main entry
 * points: slab_lease, slab_lease_check, slab_lease_prepare, slab_lease_return_many. */
#include <errno.h>

#include "slab/pool_internal.h"

/* Lease all of d (a slab or a class run of c, just carved or empty) to lessee: its slabs'
 * addresses into slabs[0..*got). */
static void lease_whole(slab_pool *p, slab_desc *d, int32_t lessee, uintptr_t *slabs,
                        size_t *got) {
  d->bitmap = ~0ull;
  d->used = d->cls->capacity;
  d->lessee = lessee;
  desc_move(d, LIST_LEASED);
  AH_ASSERT(desc_counts_ok(d));
  p->leased_slabs += d->nslabs;
  for (uint32_t i = 0; i < d->nslabs; i++) slabs[i] = d->addr + ((uintptr_t)i << AH_SLAB_SHIFT);
  *got = d->nslabs;
}

/* Carve up to n (>= 2) contiguous slabs for c as one class run leased to lessee, their
 * addresses into slabs[0..*got): the largest of n, n/2, n/4... (at least 2) that the longest
 * free range holds (one search), after growing the pool when it holds no run of 2 (the growth
 * asks for 2 at least and brings a whole step where there is one: near exhaustion, asking for
 * n made the layer trim up to n scattered holes of other regions for nothing). ENOMEM
 * (nothing changed) when no run of 2 can be had. */
static int lease_run(slab_pool *p, slab_class *c, size_t n, int32_t lessee, uintptr_t *slabs,
                     size_t *got) {
  if (n > SLAB_RUN_MAX) n = SLAB_RUN_MAX;
  uintptr_t addr;
  slab_desc *d;
  if (!structural_ok(p)) return ENOMEM;
  uint64_t lk, longest = 0;
  rangeset_longest(&p->free, &lk, &longest);
  if (longest < 2) {
    if (pool_pick_slabs(p, 2, &addr)) return ENOMEM;
    rangeset_longest(&p->free, &lk, &longest);
  }
  size_t k = n;
  while (k > 2 && k > longest) k /= 2;
  if (k < 2 || free_range_pick(p, k, &addr)) return ENOMEM; /* (cannot be: a run of 2 is there) */
  n = k;
  if (desc_register(p, &d, addr, (uint32_t)n)) return ENOMEM;
  free_range_take(p, addr, n);
  d->cls = c;
  c->slabs_carved += (uint32_t)n;
  lease_whole(p, d, lessee, slabs, got);
  return 0;
}

/* A leased slab or run goes back to its class's empty list (a run as one empty class run:
 * no memory needed, so this never fails). For a lease never handed out, and for slabs handed
 * back with no live slot. */
static void unlease(slab_pool *p, slab_desc *d) {
  p->leased_slabs -= d->nslabs;
  d->bitmap = phantom_bits(d->cls);
  d->used = 0;
  desc_move(d, LIST_EMPTY);
  if (d->cls->n_empty > p->cfg.empty_keep) p->touched = d->cls;
}

/* Undo a lease never handed out: a run carved for it goes back to Free, as it came (or, with
 * no memory for that, to the empty list), a slab back to the empty list. */
static void unlease_fresh(slab_pool *p, slab_desc *d) {
  if (d->nslabs > 1) {
    desc_move(d, LIST_DETACHED);
    if (free_range_add(p, d->addr, d->nslabs) == 0) {
      p->leased_slabs -= d->nslabs;
      desc_unregister(p, d);
      return;
    }
    desc_move(d, LIST_LEASED);
  }
  unlease(p, d);
}

/* Lease what the class's first empty descriptor can give, up to `left` slabs: a slab, or a
 * whole empty run, or its first `left` slabs (the rest cut off, still empty). ENOMEM when the
 * cut finds no metadata. */
static int lease_empty(slab_pool *p, slab_class *c, size_t left, int32_t lessee, uintptr_t *slabs,
                       size_t *got) {
  slab_desc *d = c->empty;
  if (d->nslabs > left && (!structural_ok(p) || run_cut_tail(p, d, d->nslabs - left, NULL)))
    return ENOMEM;
  lease_whole(p, d, lessee, slabs, got);
  return 0;
}

int slab_lease(slab_pool *p, size_t size, size_t want, size_t min, int32_t lessee,
               uintptr_t *slabs, size_t *got, uint32_t *slot) {
  if (size == 0 || size > AH_SLAB_SIZE || min == 0 || want < min) return EINVAL;
  uint32_t s = (uint32_t)ah_round_up(size, AH_SLOT_ALIGN);
  pool_enter(p);
  slab_class *c;
  int rc = class_get(p, s, &c);
  size_t n = 0, limit = want;
  bool runs = true; /* until a run could not be had even after growing: then slab by slab */
  while (!rc && n < limit) { /* the class's empty slabs first, then runs, then one by one */
    size_t k = 0;
    if (!c->empty && limit - n > 1 && runs) {
      if (lease_run(p, c, limit - n, lessee, slabs + n, &k) == 0) {
        n += k;
        continue;
      }
      /* Near exhaustion: the free space is scattered slabs. Take a few more, not want: a
       * worker's cache would hold idle what other workers' allocations need (it hands them
       * back only at its flush points), and each one costs a descriptor here. */
      runs = false;
      limit = n + SLAB_LEASE_SCATTERED < want ? n + SLAB_LEASE_SCATTERED : want;
      if (limit < min) limit = min;
    }
    if (!c->empty) rc = slabs_carve_for_class(p, c);
    if (!rc) rc = lease_empty(p, c, limit - n, lessee, slabs + n, &k);
    n += rc ? 0 : k;
  }
  if (n < min) { /* all or nothing below min: a run's slabs are adjacent in slabs[] */
    while (n) {
      slab_desc *d = desc_find(p, slabs[n - 1]);
      n -= d->nslabs;
      unlease_fresh(p, d);
    }
    rc = rc ? rc : ENOMEM;
  } else {
    rc = 0;
  }
  pool_leave(p);
  if (rc) return rc;
  *got = n;
  *slot = s;
  return 0;
}

/* The descriptor of a slab leased to lessee (the slab, or the class run holding it), or NULL. */
static slab_desc *leased_desc(const slab_pool *p, uintptr_t addr, int32_t lessee) {
  slab_desc *d = desc_find(p, addr);
  if (!d || ((addr - d->addr) & (AH_SLAB_SIZE - 1)) || d->list != LIST_LEASED ||
      d->lessee != lessee)
    return NULL;
  return d;
}

int slab_lease_check(const slab_pool *p, uintptr_t addr, int32_t lessee, uint64_t live) {
  const slab_desc *d = leased_desc(p, addr, lessee);
  if (!d || (live & phantom_bits(d->cls))) return EINVAL;
  return 0;
}

int slab_lease_check_many(const slab_pool *p, const uint64_t *pairs, size_t n, int32_t lessee) {
  const slab_desc *d = NULL;
  for (size_t i = 0; i < n; i++) {
    uintptr_t addr = (uintptr_t)pairs[2 * i];
    if (!d || addr - d->addr >= desc_bytes(d) || ((addr - d->addr) & (AH_SLAB_SIZE - 1)))
      if (!(d = leased_desc(p, addr, lessee))) return EINVAL;
    if (pairs[2 * i + 1] & phantom_bits(d->cls)) return EINVAL;
  }
  return 0;
}

/* ---- handing back ---- */

/* A single leased slab comes back with these live slots. */
static void return_slab(slab_pool *p, slab_desc *d, uint64_t live) {
  slab_class *c = d->cls;
  unlease(p, d); /* now an empty slab of its class; then the live slots come back */
  unsigned n = (unsigned)__builtin_popcountll(live);
  if (n) {
    d->bitmap |= live;
    d->used = (uint16_t)n;
    desc_move(d, n == c->capacity ? LIST_FULL : LIST_PARTIAL);
    AH_ASSERT(desc_counts_ok(d));
    p->objects += n;
    p->object_bytes += (size_t)n * c->slot_size;
    if (p->touched == c && c->n_empty <= p->cfg.empty_keep) p->touched = NULL;
  }
}

/* What a slab of a run becomes when handed back (KEEP: not named, still leased). */
enum { KEEP, FULL, EMPTY, PARTIAL };

static int fate(const slab_class *c, uint64_t live) {
  if (!live) return EMPTY;
  return (live | phantom_bits(c)) == ~0ull ? FULL : PARTIAL;
}

/* Cut run d into pieces of one fate each (those named by pairs[0..m), ascending or not, and
 * the rest), all still leased: cut off its end one by one, each cut whole or (ENOMEM) not at
 * all, so a failure leaves finer leases and nothing handed back. */
static int cut_run(slab_pool *p, slab_desc *d, const uint64_t *pairs, size_t m) {
  int f[SLAB_RUN_MAX];
  size_t n = d->nslabs;
  for (size_t j = 0; j < n; j++) f[j] = KEEP;
  for (size_t i = 0; i < m; i++)
    f[(pairs[2 * i] - d->addr) >> AH_SLAB_SHIFT] = fate(d->cls, pairs[2 * i + 1]);
  while (n > 1) {
    size_t first = n - 1;
    while (first > 0 && f[first - 1] == f[n - 1] && f[n - 1] != PARTIAL) first--;
    if (first == 0) return 0;
    if (run_cut_tail(p, d, n - first, NULL)) return ENOMEM;
    n = first;
  }
  return 0;
}

int slab_lease_prepare(slab_pool *p, const uint64_t *pairs, size_t n) {
  int rc = 0;
  pool_enter(p);
  for (size_t i = 0; i < n && !rc;) {
    slab_desc *d = desc_find(p, (uintptr_t)pairs[2 * i]);
    AH_ASSERT(d && d->list == LIST_LEASED);
    size_t m = 1;
    while (i + m < n && pairs[2 * (i + m)] - d->addr < desc_bytes(d)) m++;
    if (d->nslabs > 1) rc = structural_ok(p) ? cut_run(p, d, pairs + 2 * i, m) : EAGAIN;
    i += m;
  }
  pool_leave(p);
  return rc;
}

void slab_lease_return_many(slab_pool *p, const uint64_t *pairs, size_t n) {
  pool_enter(p);
  const slab_desc *piece = NULL; /* the last one settled: its other slabs are home too */
  for (size_t i = 0; i < n; i++) {
    if (piece && pairs[2 * i] - piece->addr < desc_bytes(piece)) continue;
    slab_desc *d = desc_find(p, (uintptr_t)pairs[2 * i]);
    AH_ASSERT(d && !(pairs[2 * i + 1] & phantom_bits(d->cls)));
    piece = d;
    if (d->list != LIST_LEASED) continue; /* its piece came home with an earlier pair */
    uint64_t live = pairs[2 * i + 1];
    int f = fate(d->cls, live);
    AH_ASSERT(d->nslabs == 1 || f != PARTIAL); /* prepared: a run's slabs share one fate */
    if (d->nslabs == 1) {
      return_slab(p, d, live);
    } else if (f == EMPTY) {
      unlease(p, d);
    } else {
      desc_move(d, LIST_FULL);
      p->leased_slabs -= d->nslabs;
      p->objects += (size_t)d->nslabs * d->cls->capacity;
      p->object_bytes += (size_t)d->nslabs * d->cls->capacity * d->cls->slot_size;
    }
  }
  /* Empty pieces of several classes: trim each (pool_leave trims only the last one touched) */
  for (unsigned u = 1; u <= SLAB_CLASS_UNITS && structural_ok(p) && !p->self_hosted; u++) {
    slab_class *c = p->class_cache[u];
    if (c && c->n_empty > p->cfg.empty_keep) pool_trim_class(p, c, p->cfg.empty_keep);
  }
  pool_leave(p);
}

int slab_lease_return(slab_pool *p, uintptr_t addr, uint64_t live) {
  uint64_t pair[2] = {addr, live};
  int rc = slab_lease_prepare(p, pair, 1);
  if (!rc) slab_lease_return_many(p, pair, 1);
  return rc;
}

void slab_lease_walk(const slab_pool *p, slab_lease_fn fn, void *ctx) {
  for (unsigned u = 1; u <= SLAB_CLASS_UNITS; u++) {
    const slab_class *c = p->class_cache[u];
    if (!c) continue;
    for (const slab_desc *d = c->leased, *next; d; d = next) {
      next = d->next; /* fn may not change the pool, but read ahead all the same */
      for (uint32_t k = 0; k < d->nslabs; k++)
        fn(ctx, d->addr + ((uintptr_t)k << AH_SLAB_SHIFT), d->lessee, c->slot_size);
    }
  }
}

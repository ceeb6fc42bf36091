/* lease.c: slabs leased to workers' allocation caches, at the region layer: leasing in a
 * region, handing leases back, and zombies. A region freed while a worker still holds a lease
 * in it cannot give that slab to anyone else (the worker may still hand out its slots until it
 * hears of the free), so the slab stays out of Free Ranges as a zombie, and the region's ID out
 * of Free Region IDs (quarantine), until the lessee hands the slab back. Then both are free
 * again, and two live objects never overlap, nor does a stale cache serve a reused ID.
 * Main entries: region_lease, region_lease_return, lease_note_region + lease_bury. */
#include <errno.h>
#include <stdlib.h>

#include "region/region_internal.h"
#include "trie/rangeset.h"

/* A zombie's trie value: region ID, slot size in 64-B units, lessee + 1 (never 0). */
static uintptr_t zombie_value(rid_t id, uint32_t slot, int32_t lessee) {
  return (uintptr_t)id << 32 | (uintptr_t)(slot >> AH_SLOT_ALIGN_SHIFT) << 24 |
         (uintptr_t)(lessee + 1);
}
static rid_t zombie_rid(uintptr_t v) { return (rid_t)(v >> 32); }
static uint32_t zombie_slot(uintptr_t v) { return (uint32_t)((v >> 24) & 0xff) << AH_SLOT_ALIGN_SHIFT; }
static int32_t zombie_lessee(uintptr_t v) { return (int32_t)(v & 0xffffff) - 1; }

#define LEASE_MAX_LESSEE 0xfffffe /* ranks that fit a zombie's 24-bit field */

int region_lease(region_layer *L, rid_t rid, size_t size, size_t want, size_t min,
                 int32_t lessee, uintptr_t *slabs, size_t *got, uint32_t *slot) {
  if (lessee < 0 || lessee > LEASE_MAX_LESSEE) return EINVAL;
  region *r = region_find(L, rid);
  if (!r) return ENOENT;
  return slab_lease(r->pool, size, want, min, lessee, slabs, got, slot);
}

/* ---- handing back ---- */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* The pairs from i on that a group shares: those of one region's pool (consecutive, in one of
 * its range records), or a single pair outside every region. Returns the group's size; *pool
 * its pool, or NULL for a pair of no region (a zombie, or a bad address). */
static size_t group_at(const region_layer *L, const uint64_t *pairs, size_t n, size_t i,
                       slab_pool **pool) {
  uintptr_t addr = (uintptr_t)pairs[2 * i];
  const range_rec *rec = layer_in_gas(L, addr) ? space_owner(L, addr) : NULL;
  *pool = rec ? rec->owner->pool : NULL;
  if (!rec) return 1;
  uintptr_t end = rec->start + (rec->nslabs << AH_SLAB_SHIFT);
  size_t m = 1;
  while (i + m < n && pairs[2 * (i + m)] >= rec->start && pairs[2 * (i + m)] < end) m++;
  return m;
}

/* May lessee hand back this zombie slab with these live slots? */
static int check_zombie(const region_layer *L, int32_t lessee, uintptr_t addr, uint64_t live) {
  if (addr % AH_SLAB_SIZE || !layer_in_gas(L, addr)) return EINVAL;
  uintptr_t v = trie_find(&L->zombies, layer_key(L, addr));
  if (!v || zombie_lessee(v) != lessee) return EINVAL;
  uint32_t cap = (uint32_t)(AH_SLAB_SIZE / zombie_slot(v));
  return cap < 64 && (live >> cap) ? EINVAL : 0;
}

/* Are the slabs in strictly ascending order (so none twice)? Workers' caches send them so. */
static bool ascending(const uint64_t *pairs, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (pairs[2 * i] <= pairs[2 * (i - 1)]) return false;
  return true;
}

/* No slab twice, in any order: 0, EINVAL or ENOMEM. */
static int no_repeats(const uint64_t *pairs, size_t n) {
  if (ascending(pairs, n)) return 0; /* the usual case: a sort here cost most of an unlease */
  uint64_t *addrs = malloc(n * sizeof *addrs);
  if (!addrs) return ENOMEM;
  for (size_t i = 0; i < n; i++) addrs[i] = pairs[2 * i];
  qsort(addrs, n, sizeof *addrs, cmp_u64);
  int rc = 0;
  for (size_t i = 1; i < n && !rc; i++)
    if (addrs[i] == addrs[i - 1]) rc = EINVAL;
  free(addrs);
  return rc;
}

/* Every slab once, each one returnable: 0 or EINVAL. */
static int check_all(const region_layer *L, int32_t lessee, const uint64_t *pairs, size_t n) {
  int rc = no_repeats(pairs, n);
  for (size_t i = 0, m; i < n && !rc; i += m) {
    slab_pool *pool;
    m = group_at(L, pairs, n, i, &pool);
    rc = pool ? slab_lease_check_many(pool, pairs + 2 * i, m, lessee)
              : check_zombie(L, lessee, pairs[2 * i], pairs[2 * i + 1]);
  }
  return rc;
}

/* A zombie comes home: its slab back to Free Ranges, one less zombie on its region's ID. */
static void zombie_return(region_layer *L, uintptr_t addr) {
  uint64_t key = layer_key(L, addr);
  uintptr_t v = 0;
  trie_delete(&L->zombies, key, &v);
  AH_ASSERT(v != 0);
  if (space_free_ranges_add(L, addr, 1)) layer_strand(L, 1, 0);
  rid_t id = zombie_rid(v);
  uintptr_t *left = trie_find_slot(&L->quarantine, id);
  if (!left) return; /* its count could not be kept: the ID stays stranded (lease_bury) */
  if (*left > 1) { /* a trie word must stay non-zero: the last one is deleted, not zeroed */
    --*left;
    return;
  }
  trie_delete(&L->quarantine, id, NULL);
  if (rangeset_add(&L->free_ids, id, 1)) layer_strand(L, 0, 1);
}

size_t region_layer_reclaim_zombies(region_layer *L) {
  size_t n = 0;
  uint64_t key;
  while (trie_ge(&L->zombies, 0, &key, NULL) == 0) { /* the lowest, until none */
    zombie_return(L, layer_addr(L, key));
    n++;
  }
  return n;
}

int region_lease_return(region_layer *L, int32_t lessee, const uint64_t *pairs, size_t n,
                        size_t *dropped) {
  if (n == 0 || !pairs) return EINVAL;
  int rc = check_all(L, lessee, pairs, n);
  slab_pool *pool;
  for (size_t i = 0, m; i < n && !rc; i += m) /* what needs memory first: all of it, or none */
    if ((m = group_at(L, pairs, n, i, &pool)) && pool) rc = slab_lease_prepare(pool, pairs + 2 * i, m);
  if (rc) return rc;
  size_t lost = 0;
  for (size_t i = 0, m; i < n; i += m) {
    m = group_at(L, pairs, n, i, &pool);
    if (pool) {
      slab_lease_return_many(pool, pairs + 2 * i, m);
    } else {
      lost += (size_t)__builtin_popcountll(pairs[2 * i + 1]);
      zombie_return(L, (uintptr_t)pairs[2 * i]);
    }
  }
  if (dropped) *dropped = lost;
  return 0;
}

bool region_layer_has_zombie(const region_layer *L, uintptr_t addr) {
  return layer_in_gas(L, addr) && trie_find(&L->zombies, layer_key(L, addr)) != 0;
}

/* ---- regions freed with leases outstanding ---- */

typedef struct lease_rec {
  uintptr_t addr;
  int32_t lessee;
  uint32_t slot;
} lease_rec;

struct lease_note {
  size_t n, cap;
  lease_rec *v;
};

static void note_one(void *ctx, uintptr_t addr, int32_t lessee, uint32_t slot) {
  lease_note *note = ctx;
  if (note->n == note->cap) {
    size_t cap = note->cap ? 2 * note->cap : 16;
    lease_rec *v = realloc(note->v, cap * sizeof *v);
    if (!v) return; /* counted below as stranded: never reused, never overlapping */
    note->v = v;
    note->cap = cap;
  }
  note->v[note->n++] = (lease_rec){addr, lessee, slot};
}

lease_note *lease_note_region(region_layer *L, region *r) {
  slab_stats st;
  slab_get_stats(r->pool, &st);
  if (st.leased_slabs == 0) return NULL;
  lease_note *note = calloc(1, sizeof *note);
  if (note) slab_lease_walk(r->pool, note_one, note);
  if (!note || note->n < st.leased_slabs) { /* no memory to remember them: keep them out */
    fprintf(stderr, "antheap: out of memory noting leases of region %u\n", r->id);
  }
  (void)L;
  return note;
}

/* Take one leased slab of a freed region out of Free Ranges and remember it as a zombie. */
static int bury_one(region_layer *L, rid_t id, const lease_rec *l) {
  uint64_t key = layer_key(L, l->addr);
  int rc = trie_insert(&L->zombies, key, zombie_value(id, l->slot, l->lessee));
  if (rc) return rc;
  rc = rangeset_remove(&L->free_ranges, key, 1);
  if (rc) {
    trie_delete(&L->zombies, key, NULL);
    return rc;
  }
  return 0;
}

bool lease_bury(region_layer *L, rid_t id, lease_note *note) {
  if (!note) return false;
  size_t buried = 0;
  for (size_t i = 0; i < note->n; i++) {
    if (bury_one(L, id, &note->v[i]) == 0) {
      buried++;
    } else { /* no metadata memory: the slab stays free and the lessee's slots are at risk */
      fprintf(stderr, "antheap: out of memory burying a leased slab at %#lx\n",
              (unsigned long)note->v[i].addr);
    }
  }
  free(note->v);
  free(note);
  if (buried == 0 || id == REGION_ROOT) return false; /* the root's ID is never reused */
  if (trie_insert(&L->quarantine, id, buried)) { /* cannot count: keep the ID out for good */
    layer_strand(L, 0, 1);
  }
  return true;
}

/* pool_internal.h: the slab pool's records, shared by the files of src/slab.
 *   slab_desc   one per slab in use, per run of slabs holding one large object, or per class
 *               run (contiguous slabs of one class leased together, or handed back full)
 *   slab_class  one per slot size: lists of partial and empty slabs (Partial trie value)
 *   slab_pool   the three tries, counters, the re-entry depth and the fast-path caches
 * Every record a pool allocates for itself is exactly one 64-B slot (the pool struct of an
 * ordinary pool excepted), so a self-hosted pool serves its own metadata from one class.
 *
 * The files, by concept, calling down only (one pair excepted): pool.c (life cycle, bootstrap,
 * whole-pool queries) -> alloc.c (objects; metadata records) and lease.c (leases) ->
 * classes.c (class records, descriptors, carving, trimming, class runs) -> ranges.c (Free,
 * added ranges, growth). The pair: classes.c takes its records from alloc.c (meta_alloc: a
 * pool's metadata are objects of its meta pool, itself a slab pool). check.c reads them all. */
#ifndef AH_SLAB_POOL_INTERNAL_H
#define AH_SLAB_POOL_INTERNAL_H

#include "common/types.h"
#include "slab/slab.h"
#include "trie/rangeset.h"
#include "trie/trie.h"

/* Which list of its class a slab is on; full slabs are on none (found through Used). */
enum slab_list { LIST_FULL = 0, LIST_PARTIAL, LIST_EMPTY, LIST_DETACHED, LIST_LEASED };

typedef struct slab_class slab_class;

/* A class run (cls set, nslabs > 1) is LIST_LEASED, LIST_FULL or LIST_EMPTY, never partial:
 * its bitmap and used describe each of its slabs alike (classes.c cuts one into pieces when its
 * slabs part ways). A large object's run has cls NULL. */
typedef struct slab_desc {
  uintptr_t addr;          /* first byte of the slab (or run) */
  uint64_t bitmap;         /* bit i set: slot i is live (phantom slots past capacity too) */
  slab_class *cls;         /* NULL for a large object's run */
  struct slab_desc *prev, *next; /* in cls's partial, empty or leased list */
  uint32_t nslabs;         /* 1, or the run's length */
  uint16_t used;           /* live slots per slab (a leased slab: every slot) */
  uint8_t list;            /* enum slab_list */
  int32_t lessee;          /* LIST_LEASED: the worker rank holding the lease */
} slab_desc;
_Static_assert(sizeof(slab_desc) <= 64, "a descriptor is one 64-B metadata slot");

struct slab_class {
  slab_desc *partial;      /* slabs with free and used slots */
  slab_desc *empty;        /* slabs with no used slot, kept for reuse */
  slab_desc *leased;       /* slabs leased whole to a worker's allocation cache */
  uint32_t slot_size;
  uint32_t recip;          /* ceil(2^32 / slot_size): offset / slot_size as a multiply */
  uint16_t capacity;       /* slots per slab */
  uint32_t n_partial, n_empty, n_full, n_leased; /* slabs (a class run counts its length) */
  uint32_t slabs_carved;   /* > 0 marks a busy class: preallocate for it */
  uint64_t *pack_version;  /* its pool's pack_version (desc_move bumps it) */
};
_Static_assert(sizeof(struct slab_class) <= 64, "a class record is one 64-B metadata slot");

#define SLAB_CLASS_UNITS (AH_SLAB_SIZE / AH_SLOT_ALIGN) /* slot sizes 64..4096: 64 classes */
#define SLAB_BOOT_SLABS 2u   /* bootstrap slabs of a self-hosted pool */
#define SLAB_META_RESERVE 2u /* empty 64-B slabs a self-hosted pool keeps for re-entry */

struct slab_pool {
  slab_pool *meta;         /* where metadata comes from (itself when self-hosted) */
  slab_config cfg;
  trie used;               /* slab index -> slab_desc* */
  trie partial;            /* slot units -> slab_class* */
  rangeset free;           /* free slab ranges: slab index -> length, indexed by length */
  slab_desc *last_desc;    /* fast path for free/lookup: the last descriptor found */
  slab_class *class_cache[SLAB_CLASS_UNITS + 1]; /* by slot units; mirrors Partial */
  slab_class *touched;     /* class whose empty list may need trimming */
  size_t run_slabs, runs, objects, object_bytes, classes, leased_slabs;
  uint64_t pack_version;   /* changes whenever the set slab_pack reports may have changed */
  unsigned depth, max_depth;
  bool self_hosted, booting;
  uintptr_t boot_next, boot_end; /* bump allocator during bootstrap */
};

/* Slab index used as a trie key, and back. */
static inline uint64_t slab_key(const slab_pool *p, uintptr_t addr) {
  return (uint64_t)((addr - p->cfg.base) >> AH_SLAB_SHIFT);
}
static inline uintptr_t slab_addr(const slab_pool *p, uint64_t key) {
  return p->cfg.base + ((uintptr_t)key << AH_SLAB_SHIFT);
}
/* Bytes covered by a descriptor. */
static inline size_t desc_bytes(const slab_desc *d) { return (size_t)d->nslabs << AH_SLAB_SHIFT; }
/* Is addr inside the pool's address window? */
static inline bool in_window(const slab_pool *p, uintptr_t addr) {
  return addr >= p->cfg.base && addr - p->cfg.base < p->cfg.span;
}
/* May this call change the pool's structure (tries)? Only the outermost call may; re-entered
 * calls of a self-hosted pool (metadata for its own tries) only flip bitmap bits. */
static inline bool structural_ok(const slab_pool *p) { return p->depth <= 1; }

/* Every public call that may change a pool brackets itself with pool_enter/pool_leave: the
 * outermost call (depth 1) runs the maintenance; re-entered calls (a self-hosted pool
 * allocating its own metadata) only flip bitmap bits. */
void pool_maintain(slab_pool *p); /* classes.c */
static inline unsigned meta_keep(const slab_pool *p) {
  return p->cfg.empty_keep > SLAB_META_RESERVE ? p->cfg.empty_keep : SLAB_META_RESERVE;
}
/* Is there trimming to do, or a self-hosted reserve to refill? */
static inline bool maintenance_due(const slab_pool *p) {
  if (p->touched) return true;
  if (!p->self_hosted) return false;
  const slab_class *mc = p->class_cache[1];
  return mc->n_empty < SLAB_META_RESERVE || mc->n_empty > meta_keep(p);
}
static inline void pool_enter(slab_pool *p) {
  if (++p->depth > p->max_depth) p->max_depth = p->depth;
}
static inline void pool_leave(slab_pool *p) {
  if (p->depth == 1 && maintenance_due(p)) pool_maintain(p);
  p->depth--;
}

/* alloc.c: 64-B metadata records and trie nodes for a pool (objects of its meta pool). */
void *meta_alloc(slab_pool *p);
void meta_free(slab_pool *p, void *rec);
trie_node_source meta_node_source(slab_pool *p);

/* ranges.c: the Free trie, ranges added to the pool, growth (calls nothing else of src/slab). */
int free_range_add(slab_pool *p, uintptr_t addr, size_t nslabs);
int free_range_pick(const slab_pool *p, size_t nslabs, uintptr_t *addr);
void free_range_take(slab_pool *p, uintptr_t addr, size_t nslabs);
bool free_range_overlaps(const slab_pool *p, uintptr_t addr, size_t len);
int pool_add_range(slab_pool *p, uintptr_t addr, size_t len);
int pool_grow(slab_pool *p, size_t min_bytes);

/* classes.c: class records (Partial trie and its array mirror). */
int class_create(slab_pool *p, uint32_t slot_size, slab_class **out);
/* The class of a slot size, or NULL when none exists yet. */
static inline slab_class *class_find(const slab_pool *p, uint32_t slot_size) {
  return p->class_cache[slot_size >> AH_SLOT_ALIGN_SHIFT];
}
static inline int class_get(slab_pool *p, uint32_t slot_size, slab_class **out) {
  return (*out = class_find(p, slot_size)) ? 0 : class_create(p, slot_size, out);
}
/* Slot index of an offset inside a slab: exact for offsets below 2^12 (tested). */
static inline uint32_t class_slot_index(const slab_class *c, uintptr_t off) {
  return (uint32_t)((off * c->recip) >> 32);
}

static inline void list_push(slab_desc **head, slab_desc *d) {
  d->prev = NULL;
  d->next = *head;
  if (*head) (*head)->prev = d;
  *head = d;
}
static inline void list_remove(slab_desc **head, slab_desc *d) {
  if (d->prev) d->prev->next = d->next; else *head = d->next;
  if (d->next) d->next->prev = d->prev;
  d->prev = d->next = NULL;
}
/* Does slab_pack report a class slab on this list (live slots, not leased)? */
static inline bool list_packed(unsigned list) { return list == LIST_PARTIAL || list == LIST_FULL; }

/* Add delta slabs to the count of class c's list `list`. */
static inline void list_count(slab_class *c, unsigned list, int64_t delta) {
  switch ((enum slab_list)list) {
    case LIST_PARTIAL: c->n_partial = (uint32_t)(c->n_partial + delta); break;
    case LIST_EMPTY: c->n_empty = (uint32_t)(c->n_empty + delta); break;
    case LIST_FULL: c->n_full = (uint32_t)(c->n_full + delta); break;
    case LIST_LEASED: c->n_leased = (uint32_t)(c->n_leased + delta); break;
    case LIST_DETACHED: break;
  }
}

/* Move a class slab (or class run) between its partial, empty and leased lists, the full
 * state and detached, keeping the lists' slab counts. */
static inline void desc_move(slab_desc *d, enum slab_list to) {
  slab_class *c = d->cls;
  if (list_packed(d->list) != list_packed(to)) ++*c->pack_version;
  switch ((enum slab_list)d->list) {
    case LIST_PARTIAL: list_remove(&c->partial, d); break;
    case LIST_EMPTY: list_remove(&c->empty, d); break;
    case LIST_LEASED: list_remove(&c->leased, d); break;
    case LIST_FULL: case LIST_DETACHED: break;
  }
  list_count(c, d->list, -(int64_t)d->nslabs);
  switch (to) {
    case LIST_PARTIAL: list_push(&c->partial, d); break;
    case LIST_EMPTY: list_push(&c->empty, d); break;
    case LIST_LEASED: list_push(&c->leased, d); break;
    case LIST_FULL: case LIST_DETACHED: break;
  }
  list_count(c, to, d->nslabs);
  d->list = (uint8_t)to;
}

/* Slots past the end of a slab of class c: always set in its bitmap. */
static inline uint64_t phantom_bits(const slab_class *c) {
  return c->capacity == 64 ? 0 : ~0ull << c->capacity;
}
/* Invariant of a class slab (or class run) d: its bitmap has every phantom bit set and as
 * many live bits as `used`, and its list agrees with `used` (empty: 0; full: capacity; partial:
 * between; leased: every slot). A large object's run (no class) and a detached descriptor
 * (between lists) are not judged. Checked by AH_ASSERT after every change of a slab's slots. */
static inline bool desc_counts_ok(const slab_desc *d) {
  if (!d->cls || d->list == LIST_DETACHED) return true;
  uint64_t phantom = phantom_bits(d->cls);
  unsigned live = (unsigned)__builtin_popcountll(d->bitmap & ~phantom), cap = d->cls->capacity;
  bool list_ok = d->list == LIST_EMPTY     ? d->used == 0
                 : d->list == LIST_PARTIAL ? d->used > 0 && d->used < cap
                                           : d->used == cap; /* full or leased */
  return (d->bitmap & phantom) == phantom && live == d->used && list_ok;
}
/* Is d a class run (several slabs of one class under one descriptor)? */
static inline bool desc_is_class_run(const slab_desc *d) { return d->cls && d->nslabs > 1; }
/* The first byte of the slab of d that holds addr. */
static inline uintptr_t desc_slab_of(const slab_desc *d, uintptr_t addr) {
  return d->addr + ((addr - d->addr) & ~(uintptr_t)(AH_SLAB_SIZE - 1));
}

/* classes.c: slabs in and out of use (descriptors in Used, carving, trimming), and finding
 * nslabs free slabs (Free, else the classes' empty slabs, else growth). */
int pool_pick_slabs(slab_pool *p, size_t nslabs, uintptr_t *addr);
int slabs_carve_for_class(slab_pool *p, slab_class *c);
int slab_release_empty(slab_pool *p, slab_desc *d);
int desc_register(slab_pool *p, slab_desc **out, uintptr_t addr, uint32_t nslabs);
void desc_unregister(slab_pool *p, slab_desc *d);
slab_desc *desc_find(const slab_pool *p, uintptr_t addr);
void pool_trim_class(slab_pool *p, slab_class *c, unsigned keep);

/* classes.c: class runs. A lease carves at most SLAB_RUN_MAX slabs as one run. */
#define SLAB_RUN_MAX 256
/* lease.c: slabs a lease takes one by one once no run can be had (near exhaustion), besides
 * those it had (and at least its min). */
#define SLAB_LEASE_SCATTERED 16
/* Cut the last n (< d->nslabs) slabs of class run d off as a descriptor of their own (into
 * *tail, which may be NULL), of the same class, lessee, bitmap and used, on d's list; d keeps
 * the rest. ENOMEM changes nothing. */
int run_cut_tail(slab_pool *p, slab_desc *d, size_t n, slab_desc **tail);
/* Undo run_cut_tail: tail (detached or filed) merges back into d, which it must follow. */
void run_uncut_tail(slab_pool *p, slab_desc *d, slab_desc *tail);
/* The slab of class run d that holds addr, as a descriptor of its own on d's list (d keeps
 * the slabs before it, a new run the ones after). ENOMEM changes nothing. */
int run_isolate(slab_pool *p, slab_desc *d, uintptr_t addr, slab_desc **slab);

#endif /* AH_SLAB_POOL_INTERNAL_H */

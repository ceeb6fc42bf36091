/* pool.c: pool life cycle and whole-pool queries: create (an ordinary pool, or a self-hosted
 * one that bootstraps itself), add and take back ranges, pack (coalesced used ranges in
 * address order), statistics, destroy.
 *
 * Bootstrapping a self-hosted pool (Myrmics section 3.3): the pool struct takes the first
 * slab(s) of the memory. The next SLAB_BOOT_SLABS slabs serve every metadata record by bump
 * allocation while the tries are built (the 64-B class, the boot slabs' descriptors, the Free
 * range of the rest). Because the bump allocator hands out slots in order, accounting for it
 * afterwards is exact: the first n slots of the boot slabs are marked used. From then on the
 * pool is an ordinary slab pool that serves itself, and the maintenance keeps a reserve of
 * empty 64-B slabs so that a re-entrant metadata allocation is always a bitmap flip.
 * Main entries: slab_pool_create, slab_pool_create_self_hosted, slab_pack, slab_pool_destroy. */
#include <errno.h>
#include <string.h>

#include "slab/pool_internal.h"
#include "trie/rangeset.h"

slab_config slab_config_default(void) {
  return (slab_config){.base = 0, .span = (size_t)1 << 47, .empty_keep = 1, .prealloc = 2};
}

/* Key width for the slabs of a window of span bytes. */
static unsigned slab_key_bits(size_t span) {
  size_t slabs = span >> AH_SLAB_SHIFT;
  unsigned bits = 1;
  while (bits < 64 && ((size_t)1 << bits) < slabs) bits++;
  return bits;
}

/* Init the three tries of p; nodes come from p's meta pool. */
static void pool_init_tries(slab_pool *p) {
  trie_node_source src = meta_node_source(p);
  unsigned bits = slab_key_bits(p->cfg.span);
  trie_init(&p->used, bits, src);
  rangeset_init(&p->free, bits, src, p->cfg.unsized ? 0 : RANGESET_SIZED);
  trie_init(&p->partial, 7, src); /* slot units 1..64 */
}

static bool config_ok(const slab_config *cfg) {
  return cfg->base % AH_SLAB_SIZE == 0 && cfg->span % AH_SLAB_SIZE == 0 &&
         cfg->span >= AH_SLAB_SIZE && cfg->base + (cfg->span - 1) >= cfg->base;
}

int slab_pool_create(slab_pool **out, const slab_config *cfg, slab_pool *meta) {
  slab_config c = cfg ? *cfg : slab_config_default();
  if (!meta || !meta->self_hosted || !config_ok(&c)) return EINVAL;
  uintptr_t addr;
  if (slab_alloc(meta, sizeof(slab_pool), &addr)) return ENOMEM;
  slab_pool *p = (slab_pool *)addr;
  memset(p, 0, sizeof *p);
  p->cfg = c;
  p->meta = meta;
  pool_init_tries(p);
  *out = p;
  return 0;
}

/* ---- a self-hosted pool's bootstrap ---- */

/* After bootstrap: mark the bump-allocated slots of each boot slab as used. */
static void account_boot_slots(slab_pool *p, slab_desc **boot, uintptr_t first) {
  size_t records = (p->boot_next - first) / AH_SLOT_ALIGN;
  for (unsigned i = 0; i < SLAB_BOOT_SLABS; i++) {
    size_t n = records > AH_SLOTS_PER_SLAB ? AH_SLOTS_PER_SLAB : records;
    records -= n;
    boot[i]->bitmap = n == 64 ? ~0ull : (1ull << n) - 1;
    boot[i]->used = (uint16_t)n;
    p->objects += n;
    p->object_bytes += n * AH_SLOT_ALIGN;
    desc_move(boot[i], n == AH_SLOTS_PER_SLAB ? LIST_FULL : n ? LIST_PARTIAL : LIST_EMPTY);
  }
}

int slab_pool_create_self_hosted(slab_pool **out, void *mem, size_t len, const slab_config *cfg) {
  uintptr_t base = (uintptr_t)mem;
  size_t header = ah_round_up(sizeof(slab_pool), AH_SLAB_SIZE) >> AH_SLAB_SHIFT;
  if (!mem || base % AH_SLAB_SIZE || len % AH_SLAB_SIZE ||
      (len >> AH_SLAB_SHIFT) < header + SLAB_BOOT_SLABS + 4)
    return EINVAL;
  slab_pool *p = mem;
  memset(p, 0, sizeof *p);
  slab_config def = slab_config_default();
  p->cfg = cfg ? *cfg : def;
  p->cfg.base = def.base;
  p->cfg.span = def.span;
  p->meta = p;
  p->self_hosted = true;
  p->booting = true;
  uintptr_t first = base + (header << AH_SLAB_SHIFT);
  p->boot_next = first;
  p->boot_end = first + (SLAB_BOOT_SLABS << AH_SLAB_SHIFT);
  pool_init_tries(p);
  p->depth = 1;

  slab_class *c;
  slab_desc *boot[SLAB_BOOT_SLABS];
  if (class_get(p, AH_SLOT_ALIGN, &c)) return ENOMEM;
  for (unsigned i = 0; i < SLAB_BOOT_SLABS; i++) {
    if (desc_register(p, &boot[i], first + ((uintptr_t)i << AH_SLAB_SHIFT), 1)) return ENOMEM;
    boot[i]->cls = c;
  }
  size_t rest = (len >> AH_SLAB_SHIFT) - header - SLAB_BOOT_SLABS;
  if (free_range_add(p, p->boot_end, rest)) return ENOMEM;
  account_boot_slots(p, boot, first);
  c->slabs_carved = SLAB_BOOT_SLABS;
  p->booting = false;
  pool_maintain(p);
  p->depth = 0;
  *out = p;
  return 0;
}


int slab_add_range(slab_pool *p, uintptr_t addr, size_t len) {
  pool_enter(p);
  int rc = pool_add_range(p, addr, len);
  pool_leave(p);
  return rc;
}

int slab_take_free(slab_pool *p, size_t max_slabs, uintptr_t *addr, size_t *len) {
  uint64_t k, n;
  pool_enter(p);
  int rc = rangeset_take_highest(&p->free, max_slabs, &k, &n);
  if (rc == 0) {
    *addr = slab_addr(p, k);
    *len = n << AH_SLAB_SHIFT;
  }
  pool_leave(p);
  return rc;
}

int slab_take_fit(slab_pool *p, size_t n, uintptr_t *addr) {
  if (n == 0) return EINVAL;
  pool_enter(p);
  int rc = free_range_pick(p, n, addr) ? ENOENT : 0;
  if (!rc) free_range_take(p, *addr, n);
  pool_leave(p);
  return rc;
}

size_t slab_longest_free(const slab_pool *p) {
  uint64_t k, n;
  return rangeset_longest(&p->free, &k, &n) ? 0 : (size_t)n;
}

/* Coalesces ranges arriving in address order and hands them to a callback. */
typedef struct coalescer {
  slab_range_fn fn;
  void *ctx;
  uintptr_t start, end;
  size_t count;
  bool stopped;
} coalescer;

static void coalesce_flush(coalescer *co) {
  if (co->end == co->start || co->stopped) return;
  co->count++;
  if (co->fn && co->fn(co->ctx, co->start, co->end - co->start)) co->stopped = true;
  co->start = co->end;
}

static void coalesce_add(coalescer *co, uintptr_t addr, size_t len) {
  if (addr != co->end) {
    coalesce_flush(co);
    co->start = addr;
  }
  co->end = addr + len;
}

uint64_t slab_pack_version(const slab_pool *p) { return p->pack_version; }

size_t slab_pack(const slab_pool *p, slab_range_fn fn, void *ctx) {
  coalescer co = {.fn = fn, .ctx = ctx};
  trie_cursor c;
  uintptr_t v;
  trie_cursor_seek(&c, &p->used, 0);
  while (!co.stopped && trie_cursor_next(&c, NULL, &v)) {
    const slab_desc *d = (const slab_desc *)v;
    if (d->used && d->list != LIST_LEASED) coalesce_add(&co, d->addr, desc_bytes(d));
  }
  coalesce_flush(&co);
  return co.count;
}

/* Every range the pool holds, used or free, in address order (two ordered walks merged). */
static void report_all_ranges(const slab_pool *p, slab_range_fn fn, void *ctx) {
  coalescer co = {.fn = fn, .ctx = ctx};
  trie_cursor cu, cf;
  uint64_t ku = 0, kf = 0;
  uintptr_t vu = 0, vf = 0;
  trie_cursor_seek(&cu, &p->used, 0);
  trie_cursor_seek(&cf, &p->free.ranges, 0);
  bool hu = trie_cursor_next(&cu, &ku, &vu), hf = trie_cursor_next(&cf, &kf, &vf);
  while ((hu || hf) && !co.stopped) {
    if (hu && (!hf || ku < kf)) {
      const slab_desc *d = (const slab_desc *)vu;
      coalesce_add(&co, d->addr, desc_bytes(d));
      hu = trie_cursor_next(&cu, &ku, &vu);
    } else {
      coalesce_add(&co, slab_addr(p, kf), vf << AH_SLAB_SHIFT);
      hf = trie_cursor_next(&cf, &kf, &vf);
    }
  }
  coalesce_flush(&co);
}

/* Give every record stored as a value of t back to the meta pool. */
static void free_values(slab_pool *p, const trie *t) {
  trie_cursor c;
  uintptr_t v;
  trie_cursor_seek(&c, t, 0);
  while (trie_cursor_next(&c, NULL, &v)) meta_free(p, (void *)v);
}

void slab_pool_destroy(slab_pool *p, slab_range_fn fn, void *ctx) {
  if (!p) return;
  AH_ASSERT_CHECK(slab_pool_check(p));
  if (fn) report_all_ranges(p, fn, ctx);
  if (p->self_hosted) return; /* everything lives in the caller's memory */
  free_values(p, &p->used);
  free_values(p, &p->partial);
  trie_clear(&p->used);
  trie_clear(&p->partial);
  rangeset_clear(&p->free);
  int rc = slab_free(p->meta, (uintptr_t)p);
  AH_ASSERT(rc == 0);
  (void)rc;
}

void slab_get_stats(const slab_pool *p, slab_stats *st) {
  *st = (slab_stats){.run_slabs = p->run_slabs, .runs = p->runs,
                     .free_slabs = rangeset_total(&p->free), .free_ranges = rangeset_count(&p->free),
                     .objects = p->objects, .object_bytes = p->object_bytes,
                     .classes = p->classes, .leased_slabs = p->leased_slabs, .max_depth = p->max_depth,
                     .trie_nodes = p->used.nodes + p->partial.nodes + p->free.ranges.nodes +
                                   p->free.by_size.nodes};
  trie_cursor c;
  uintptr_t v;
  trie_cursor_seek(&c, &p->partial, 0);
  while (trie_cursor_next(&c, NULL, &v)) {
    const slab_class *cls = (const slab_class *)v;
    st->full_slabs += cls->n_full;
    st->partial_slabs += cls->n_partial;
    st->empty_slabs += cls->n_empty;
  }
}

bool slab_holds(const slab_pool *p, uintptr_t addr) {
  if (!in_window(p, addr)) return false;
  return desc_find(p, addr) != NULL || free_range_overlaps(p, addr & ~(AH_SLAB_SIZE - 1), AH_SLAB_SIZE);
}

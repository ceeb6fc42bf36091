/* boot.c: bootstrapping a self-hosted pool (Myrmics section 3.3).
 *
 * The pool struct takes the first slab(s) of the memory. The next SLAB_BOOT_SLABS slabs serve
 * every metadata record by bump allocation while the tries are built (the 64-B class, the
 * boot slabs' descriptors, the Free range of the rest). Because the bump allocator hands out
 * slots in order, accounting for it afterwards is exact: the first n slots of the boot slabs
 * are marked used. From then on the pool is an ordinary slab pool that serves itself, and the
 * maintenance keeps a reserve of empty 64-B slabs so that a re-entrant metadata allocation is
 * always a bitmap flip. */
#include <errno.h>
#include <string.h>

#include "slab/pool_internal.h"

void pool_init_tries(slab_pool *p);

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

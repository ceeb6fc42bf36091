/* memo.c: the move memo (memo.h explains when a received range list may be sent on). */
#include "worker/memo.h"

#include <stdlib.h>
#include <string.h>

#include "worker/handles.h"

void memo_init(memo *m, bool on) { *m = (memo){.on = on}; }

static void drop(memo *m, memo_entry *e) {
  free(e->names);
  free(e->r);
  *e = (memo_entry){0};
  m->held--;
}

void memo_drop_all(memo *m) {
  for (int i = 0; i < MEMO_SLOTS; i++)
    if (m->e[i].names) drop(m, &m->e[i]);
}

void memo_destroy(memo *m) { memo_drop_all(m); }

size_t memo_count(const memo *m) { return m->held; }

static int by_addr(const void *a, const void *b) {
  uintptr_t x = ((const gas_range *)a)->addr, y = ((const gas_range *)b)->addr;
  return x < y ? -1 : x > y;
}

static bool sorted_by_addr(const gas_range *r, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (r[i].addr < r[i - 1].addr) return false;
  return true;
}

/* Sorted by address, each range non-empty and ending before the next begins. Sorts r first
 * when it is not sorted (a receiver may get a list in any order). */
static bool sorted_disjoint(gas_range *r, size_t n) {
  if (!sorted_by_addr(r, n)) qsort(r, n, sizeof *r, by_addr);
  for (size_t i = 0; i < n; i++) {
    if (r[i].len == 0 || r[i].addr + r[i].len < r[i].addr) return false;
    if (i && r[i - 1].addr + r[i - 1].len > r[i].addr) return false;
  }
  return true;
}

/* Do two sorted, disjoint lists share a byte? One merge pass. */
static bool lists_overlap(const gas_range *a, size_t na, const gas_range *b, size_t nb) {
  size_t i = 0, j = 0;
  while (i < na && j < nb) {
    if (a[i].addr + a[i].len <= b[j].addr) i++;
    else if (b[j].addr + b[j].len <= a[i].addr) j++;
    else return true;
  }
  return false;
}

/* Handle words (handles.h): does any region or object of a appear in b? (Quadratic: past a
 * million pairs, say yes.) */
static bool names_meet(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb) {
  if (!a || !b || na < 2 || nb < 2) return false;
  if ((uint64_t)na * nb > ((uint64_t)1 << 20)) return true;
  for (uint32_t i = 2; i < na; i++) {
    bool a_reg = move_word_is_region(a, i);
    for (uint32_t j = 2; j < nb; j++)
      if (a[i] == b[j] && a_reg == move_word_is_region(b, j)) return true;
  }
  return false;
}

/* memo_forget_moved for a list known to be sorted by address. */
static void forget_meeting(memo *m, const uint64_t *names, uint32_t nnames, const gas_range *r,
                           size_t n) {
  for (int i = 0; m->held && i < MEMO_SLOTS; i++) {
    memo_entry *e = &m->e[i];
    if (e->names && (names_meet(e->names, e->nnames, names, nnames) ||
                     lists_overlap(e->r, e->n, r, n)))
      drop(m, e);
  }
}

void memo_forget_moved(memo *m, const uint64_t *names, uint32_t nnames, const gas_range *r,
                       size_t n) {
  if (!m->held) return;
  if (sorted_by_addr(r, n)) forget_meeting(m, names, nnames, r, n);
  else memo_drop_all(m); /* a peer's unsorted list: no merge pass */
}

void memo_keep(memo *m, uint64_t *names, uint32_t nnames, gas_range *r, size_t n) {
  if (!m->on) {
    free(names);
    free(r);
    return;
  }
  bool sorted = n <= MEMO_MAX_RANGES && sorted_disjoint(r, n);
  if (sorted) forget_meeting(m, names, nnames, r, n);
  else memo_drop_all(m); /* no merge pass over such a list */
  if (!sorted || !names || nnames <= 2 || nnames > MEMO_MAX_NAMES) {
    free(names);
    free(r);
    return;
  }
  memo_entry *slot = &m->e[0];
  for (int i = 0; i < MEMO_SLOTS; i++) { /* a free slot, else the oldest */
    if (!m->e[i].names) {
      slot = &m->e[i];
      break;
    }
    if (m->e[i].age < slot->age) slot = &m->e[i];
  }
  if (slot->names) drop(m, slot);
  *slot = (memo_entry){.names = names, .nnames = nnames, .r = r, .n = n, .age = ++m->clock};
  m->held++;
}

bool memo_take(memo *m, const uint64_t *names, uint32_t nnames, gas_range **r, size_t *n) {
  for (int i = 0; m->on && i < MEMO_SLOTS; i++) {
    memo_entry *e = &m->e[i];
    if (!e->names || e->nnames != nnames || memcmp(e->names, names, nnames * sizeof *names))
      continue;
    *r = e->r;
    *n = e->n;
    e->r = NULL;
    drop(m, e);
    return true;
  }
  return false;
}

/* rangeset.c: disjoint, merged integer ranges on a trie, with running counts and two optional
 * indexes (rangeset.h): by length, for best-fit searches, and the ranges that hold an aligned
 * block. Every change to a range goes through index_drop (never fails) before and index_put
 * (may miss for want of a node: the index goes stale) after, so an index only ever holds true
 * entries: what a search finds in it is right, and only a miss in a stale index needs a walk. */
#include "trie/rangeset.h"

#include <errno.h>

#include "common/types.h"

/* ---- the indexes ---- */

static uint64_t size_key(const rangeset *s, uint64_t start, uint64_t len) {
  uint64_t code = len < s->len_cap ? len : s->len_cap;
  return (code << s->start_bits) | start;
}

static uint64_t size_key_start(const rangeset *s, uint64_t key) {
  return key & (((uint64_t)1 << s->start_bits) - 1);
}

/* Does [start, start+len) hold a whole block of s->align elements aligned to it? */
static bool holds_block(const rangeset *s, uint64_t start, uint64_t len) {
  uint64_t a = s->align, skip = (a - start % a) % a;
  return skip < len && len - skip >= a;
}

static void index_put(rangeset *s, uint64_t start, uint64_t len) {
  if (s->sized && trie_insert(&s->by_size, size_key(s, start, len), 1)) s->stale = true;
  if (s->align && holds_block(s, start, len) && trie_insert(&s->aligned, start, 1))
    s->stale = true;
}

static void index_drop(rangeset *s, uint64_t start, uint64_t len) {
  if (s->sized) trie_delete(&s->by_size, size_key(s, start, len), NULL);
  if (s->align && holds_block(s, start, len)) trie_delete(&s->aligned, start, NULL);
}

int rangeset_reindex(rangeset *s) {
  if (!s->stale) return 0;
  trie_clear(&s->by_size);
  trie_clear(&s->aligned);
  s->stale = false;
  trie_cursor c;
  uint64_t k;
  uintptr_t len;
  trie_cursor_seek(&c, &s->ranges, 0);
  while (!s->stale && trie_cursor_next(&c, &k, &len)) index_put(s, k, len);
  return s->stale ? ENOMEM : 0;
}

/* May the indexes be trusted for a miss? (Rebuilt first when stale; false when that failed.) */
static bool index_whole(const rangeset *s) {
  return !s->stale || rangeset_reindex((rangeset *)s) == 0; /* logically const */
}

/* ---- set up ---- */

int rangeset_init(rangeset *s, unsigned key_bits, trie_node_source source, unsigned flags) {
  uint64_t align = flags >> 8;
  bool sized = (flags & RANGESET_SIZED) != 0;
  if (key_bits < 1 || key_bits > 64 || (align & (align - 1)) || (sized && key_bits > 48) ||
      (align && key_bits > 63))
    return EINVAL;
  unsigned len_bits = 64 - key_bits < key_bits + 1 ? 64 - key_bits : key_bits + 1;
  *s = (rangeset){.align = align, .start_bits = (uint8_t)key_bits, .sized = sized,
                  .len_cap = sized ? ((uint64_t)1 << len_bits) - 1 : 0};
  trie_init(&s->ranges, key_bits, source);
  trie_init(&s->by_size, sized ? key_bits + len_bits : 1, source);
  trie_init(&s->aligned, key_bits, source);
  return 0;
}

void rangeset_clear(rangeset *s) {
  trie_clear(&s->ranges);
  trie_clear(&s->by_size);
  trie_clear(&s->aligned);
  s->total = 0;
  s->stale = false;
}

/* ---- changes ---- */

int rangeset_add(rangeset *s, uint64_t start, uint64_t n) {
  trie *t = &s->ranges;
  uint64_t pk = 0;
  uintptr_t plen = 0;
  bool merge_pred = start > 0 && trie_le(t, start - 1, &pk, &plen) == 0 && pk + plen == start;
  uintptr_t slen = start + n <= trie_key_max(t) ? trie_find(t, start + n) : 0;
  if (!merge_pred) {
    int rc = trie_insert(t, start, n + slen); /* the only step that may fail */
    if (rc) return rc;
    pk = start;
    plen = 0;
  } else {
    index_drop(s, pk, plen);
    *trie_find_slot(t, pk) = plen + n + slen;
  }
  if (slen) {
    index_drop(s, start + n, slen);
    trie_delete(t, start + n, NULL);
  }
  index_put(s, pk, plen + n + slen);
  s->total += n;
  return 0;
}

bool rangeset_overlaps(const rangeset *s, uint64_t start, uint64_t n) {
  uint64_t k;
  uintptr_t len;
  return trie_le(&s->ranges, start + n - 1, &k, &len) == 0 && k + len > start;
}

void rangeset_take_end(rangeset *s, uint64_t start, uint64_t n) {
  uint64_t k;
  uintptr_t len;
  int rc = trie_le(&s->ranges, start, &k, &len);
  AH_ASSERT(rc == 0 && k + len == start + n);
  (void)rc;
  index_drop(s, k, len);
  if (k == start) {
    trie_delete(&s->ranges, k, NULL);
  } else {
    *trie_find_slot(&s->ranges, k) = len - n;
    index_put(s, k, len - n);
  }
  s->total -= n;
}

int rangeset_take_highest(rangeset *s, uint64_t max, uint64_t *start, uint64_t *n) {
  uint64_t k;
  uintptr_t len;
  if (max == 0 || trie_le(&s->ranges, trie_key_max(&s->ranges), &k, &len)) return ENOENT;
  *n = len < max ? len : max;
  *start = k + len - *n;
  rangeset_take_end(s, *start, *n);
  return 0;
}

int rangeset_take_lowest(rangeset *s, uint64_t *elem) {
  uint64_t k;
  uintptr_t len;
  if (trie_ge(&s->ranges, 0, &k, &len)) return ENOENT;
  if (len > 1) {
    int rc = trie_insert(&s->ranges, k + 1, len - 1);
    if (rc) return rc;
  }
  index_drop(s, k, len);
  trie_delete(&s->ranges, k, NULL);
  if (len > 1) index_put(s, k + 1, len - 1);
  s->total--;
  *elem = k;
  return 0;
}

bool rangeset_contains(const rangeset *s, uint64_t start, uint64_t n) {
  uint64_t k;
  uintptr_t len;
  return trie_le(&s->ranges, start, &k, &len) == 0 && k + len >= start + n;
}

int rangeset_remove(rangeset *s, uint64_t start, uint64_t n) {
  uint64_t k;
  uintptr_t len;
  if (n == 0 || trie_le(&s->ranges, start, &k, &len) || k + len < start + n) return EINVAL;
  uint64_t end = start + n, rend = k + len;
  if (end < rend) { /* a tail remains: it needs its own key */
    int rc = trie_insert(&s->ranges, end, rend - end);
    if (rc) return rc;
  }
  index_drop(s, k, len);
  if (start == k) {
    trie_delete(&s->ranges, k, NULL);
  } else {
    *trie_find_slot(&s->ranges, k) = start - k;
    index_put(s, k, start - k);
  }
  if (end < rend) index_put(s, end, rend - end);
  s->total -= n;
  return 0;
}

/* ---- searches ---- */

/* The smallest range holding at least n (lowest first among equals), from the size index:
 * one nearest search, and for lengths past len_cap (which share one key prefix) a look at each
 * such range (there are few: they cover the key space many times over otherwise). */
static int sized_fit(const rangeset *s, uint64_t n, uint64_t *k, uint64_t *len) {
  uint64_t key = size_key(s, 0, n), found;
  while (trie_ge(&s->by_size, key, &found, NULL) == 0) {
    uint64_t first = size_key_start(s, found), code = found >> s->start_bits;
    uint64_t l = code < s->len_cap ? code : trie_find(&s->ranges, first);
    if (l >= n) {
      *k = first;
      *len = l;
      return 0;
    }
    key = found + 1;
  }
  return ENOENT;
}

/* The lowest range holding at least n, by a walk (unsized sets, or a stale index). */
static int walk_fit(const rangeset *s, uint64_t n, uint64_t *k, uint64_t *len) {
  trie_cursor c;
  uintptr_t l;
  trie_cursor_seek(&c, &s->ranges, 0);
  while (trie_cursor_next(&c, k, &l))
    if (l >= n) {
      *len = l;
      return 0;
    }
  return ENOENT;
}

int rangeset_pick_end(const rangeset *s, uint64_t n, uint64_t *start) {
  uint64_t k, len;
  int rc = ENOENT;
  if (n == 0) return EINVAL;
  if (s->sized) {
    rc = sized_fit(s, n, &k, &len);
    if (rc && s->stale && index_whole(s)) rc = sized_fit(s, n, &k, &len);
    if (rc && s->stale) rc = walk_fit(s, n, &k, &len);
  } else {
    rc = walk_fit(s, n, &k, &len);
  }
  if (rc) return rc;
  *start = k + len - n;
  return 0;
}

int rangeset_pick_aligned(const rangeset *s, uint64_t *start, uint64_t *n) {
  uint64_t k;
  uintptr_t len;
  if (!s->align) return EINVAL;
  if (trie_ge(&s->aligned, 0, &k, NULL) == 0 ||
      (s->stale && index_whole(s) && trie_ge(&s->aligned, 0, &k, NULL) == 0)) {
    *start = k;
    *n = trie_find(&s->ranges, k);
    return 0;
  }
  if (!s->stale) return ENOENT;
  trie_cursor c;
  trie_cursor_seek(&c, &s->ranges, 0);
  while (trie_cursor_next(&c, &k, &len))
    if (holds_block(s, k, len)) {
      *start = k;
      *n = len;
      return 0;
    }
  return ENOENT;
}

int rangeset_longest(const rangeset *s, uint64_t *start, uint64_t *n) {
  uint64_t best = 0, bk = 0, k, found;
  uintptr_t len;
  if (trie_count(&s->ranges) == 0) return ENOENT;
  if (s->sized && index_whole(s)) {
    trie_le(&s->by_size, trie_key_max(&s->by_size), &found, NULL);
    uint64_t code = found >> s->start_bits;
    bk = size_key_start(s, found);
    best = code;
    if (code == s->len_cap) { /* the capped ones: the longest of them, the lowest first */
      trie_cursor c;
      best = 0;
      trie_cursor_seek(&c, &s->by_size, code << s->start_bits);
      while (trie_cursor_next(&c, &found, NULL)) {
        uint64_t first = size_key_start(s, found), l = trie_find(&s->ranges, first);
        if (l > best) best = l, bk = first;
      }
    } else { /* the lowest of the equal longest ones */
      trie_ge(&s->by_size, code << s->start_bits, &found, NULL);
      bk = size_key_start(s, found);
    }
  } else {
    trie_cursor c;
    trie_cursor_seek(&c, &s->ranges, 0);
    while (trie_cursor_next(&c, &k, &len))
      if (len > best) best = len, bk = k;
  }
  *start = bk;
  *n = best;
  return 0;
}

/* ---- the check ---- */

int rangeset_check(const rangeset *s) {
  trie_cursor c;
  uint64_t k, total = 0, prev_end = 0;
  uintptr_t len;
  size_t n = 0, nalign = 0;
  bool first = true;
  trie_cursor_seek(&c, &s->ranges, 0);
  while (trie_cursor_next(&c, &k, &len)) {
    if (len == 0 || (!first && k <= prev_end)) return EINVAL; /* empty, or not merged */
    total += len;
    n++;
    prev_end = k + len;
    first = false;
    bool block = s->align && holds_block(s, k, len);
    nalign += block;
    if (s->stale) continue; /* a stale index may miss entries; it never holds wrong ones */
    if (s->sized && !trie_find(&s->by_size, size_key(s, k, len))) return EINVAL;
    if (block && !trie_find(&s->aligned, k)) return EINVAL;
  }
  if (total != s->total || n != trie_count(&s->ranges)) return EINVAL;
  if (s->sized && (s->stale ? trie_count(&s->by_size) > n : trie_count(&s->by_size) != n))
    return EINVAL;
  if (s->align && (s->stale ? trie_count(&s->aligned) > nalign : trie_count(&s->aligned) != nalign))
    return EINVAL;
  return 0;
}

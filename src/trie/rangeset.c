/* rangeset.c: disjoint, merged integer ranges on a trie. Taking from the end of a range only
 * shrinks a value in place, so it cannot fail; adding inserts before it deletes. */
#include "trie/rangeset.h"

#include <errno.h>

#include "common/types.h"

int rangeset_add(trie *t, uint64_t start, uint64_t n) {
  uint64_t pk = 0;
  uintptr_t plen = 0;
  bool merge_pred = start > 0 && trie_le(t, start - 1, &pk, &plen) == 0 && pk + plen == start;
  uintptr_t slen = start + n <= trie_key_max(t) ? trie_find(t, start + n) : 0;
  if (merge_pred) {
    *trie_find_slot(t, pk) = plen + n + slen;
  } else {
    int rc = trie_insert(t, start, n + slen);
    if (rc) return rc;
  }
  if (slen) trie_delete(t, start + n, NULL);
  return 0;
}

bool rangeset_overlaps(const trie *t, uint64_t start, uint64_t n) {
  uint64_t k;
  uintptr_t len;
  return trie_le(t, start + n - 1, &k, &len) == 0 && k + len > start;
}

int rangeset_pick_end(const trie *t, uint64_t n, uint64_t *start) {
  trie_cursor c;
  uint64_t k;
  uintptr_t len;
  trie_cursor_seek(&c, t, 0);
  while (trie_cursor_next(&c, &k, &len)) {
    if (len >= n) {
      *start = k + len - n;
      return 0;
    }
  }
  return ENOENT;
}

void rangeset_take_end(trie *t, uint64_t start, uint64_t n) {
  uint64_t k;
  uintptr_t len;
  int rc = trie_le(t, start, &k, &len);
  AH_ASSERT(rc == 0 && k + len == start + n);
  (void)rc;
  if (k == start)
    trie_delete(t, k, NULL);
  else
    *trie_find_slot(t, k) = len - n;
}

int rangeset_take_highest(trie *t, uint64_t max, uint64_t *start, uint64_t *n) {
  uint64_t k;
  uintptr_t len;
  if (max == 0 || trie_le(t, trie_key_max(t), &k, &len)) return ENOENT;
  *n = len < max ? len : max;
  *start = k + len - *n;
  rangeset_take_end(t, *start, *n);
  return 0;
}

int rangeset_take_lowest(trie *t, uint64_t *elem) {
  uint64_t k;
  uintptr_t len;
  if (trie_ge(t, 0, &k, &len)) return ENOENT;
  if (len > 1) {
    int rc = trie_insert(t, k + 1, len - 1);
    if (rc) return rc;
  }
  trie_delete(t, k, NULL);
  *elem = k;
  return 0;
}

bool rangeset_contains(const trie *t, uint64_t start, uint64_t n) {
  uint64_t k;
  uintptr_t len;
  return trie_le(t, start, &k, &len) == 0 && k + len >= start + n;
}

int rangeset_remove(trie *t, uint64_t start, uint64_t n) {
  uint64_t k;
  uintptr_t len;
  if (trie_le(t, start, &k, &len) || k + len < start + n) return EINVAL;
  uint64_t end = start + n, rend = k + len;
  if (end < rend) { /* a tail remains: it needs its own key */
    int rc = trie_insert(t, end, rend - end);
    if (rc) return rc;
  }
  if (start == k)
    trie_delete(t, k, NULL);
  else
    *trie_find_slot(t, k) = start - k;
  return 0;
}

uint64_t rangeset_total(const trie *t) {
  trie_cursor c;
  uintptr_t len;
  uint64_t total = 0;
  trie_cursor_seek(&c, t, 0);
  while (trie_cursor_next(&c, NULL, &len)) total += len;
  return total;
}

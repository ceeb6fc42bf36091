/* trie.c: the 8-degree trie: insert, find, delete, nearest searches and ordered walks.
 * Main entry points: trie_insert, trie_delete, trie_le / trie_ge, trie_cursor_next. */
#include "trie/trie.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/types.h"

/* The 3-bit digit of key used at level lv (level 0 is the root). */
static inline unsigned digit_at(const trie *t, uint64_t key, unsigned lv) {
  return (unsigned)(key >> (3u * (t->levels - 1u - lv))) & 7u;
}

/* The digits of key above level lv (what a root at level lv must share with it). */
static inline uint64_t high_digits(const trie *t, uint64_t key, unsigned lv) {
  return lv == 0 ? 0 : key >> (3u * (t->levels - lv));
}

/* The key spelled by the root's prefix and the digits of a path from the root down. */
static uint64_t key_of_path(const trie *t, const uint8_t *digit) {
  uint64_t key = t->prefix;
  for (unsigned lv = t->top; lv < t->levels; lv++) key = (key << 3) | digit[lv];
  return key;
}

/* True when no word of the node is used. */
static inline bool node_is_empty(const trie_node *n) {
  uintptr_t any = 0;
  for (unsigned i = 0; i < TRIE_DEGREE; i++) any |= n->word[i];
  return any == 0;
}

/* First used word of n at index from, from+dir, ... (dir = +1 or -1); -1 when none. */
static int scan_used(const trie_node *n, int from, int dir) {
  for (int i = from; i >= 0 && i < TRIE_DEGREE; i += dir)
    if (n->word[i]) return i;
  return -1;
}

static inline trie_node *child(const trie_node *n, unsigned d) { return (trie_node *)n->word[d]; }

static trie_node *heap_alloc(void *ctx) {
  (void)ctx;
  return aligned_alloc(64, sizeof(trie_node));
}
static void heap_release(void *ctx, trie_node *node) {
  (void)ctx;
  free(node);
}

trie_node_source trie_heap_source(void) {
  return (trie_node_source){.alloc = heap_alloc, .release = heap_release, .ctx = NULL};
}

int trie_init(trie *t, unsigned key_bits, trie_node_source source) {
  if (key_bits < 1 || key_bits > 64 || !source.alloc || !source.release) return EINVAL;
  *t = (trie){.root = NULL, .source = source, .key_bits = (uint8_t)key_bits,
              .levels = (uint8_t)((key_bits + 2) / 3)};
  return 0;
}

/* Release n and, for inner levels, everything below it. */
static void release_node(trie *t, trie_node *n);
static void release_subtree(trie *t, trie_node *n, unsigned lv) {
  if (lv + 1 < t->levels)
    for (unsigned i = 0; i < TRIE_DEGREE; i++)
      if (n->word[i]) release_subtree(t, child(n, i), lv + 1);
  release_node(t, n);
}

int trie_check(const trie *t) {
  trie_cursor c;
  uint64_t k, prev = 0;
  uintptr_t v;
  size_t n = 0;
  trie_cursor_seek(&c, t, 0);
  while (trie_cursor_next(&c, &k, &v)) {
    if (v == 0 || k > trie_key_max(t) || (n && k <= prev)) return EINVAL;
    prev = k;
    n++;
  }
  return n == t->count ? 0 : EINVAL;
}

void trie_clear(trie *t) {
  AH_ASSERT_CHECK(trie_check(t));
  if (t->root) release_subtree(t, t->root, t->top);
  t->root = NULL;
  t->count = 0;
  AH_ASSERT(t->nodes == 0);
}

/* A zeroed node from the source, or NULL. */
static trie_node *new_node(trie *t) {
  trie_node *n = t->source.alloc(t->source.ctx);
  if (n) {
    memset(n, 0, sizeof *n);
    t->nodes++;
  }
  return n;
}

static void release_node(trie *t, trie_node *n) {
  t->source.release(t->source.ctx, n);
  t->nodes--;
}

/* Put a new root one level above the current one. ENOMEM leaves the trie as it was. */
static int expand_root(trie *t) {
  trie_node *n = new_node(t);
  if (!n) return ENOMEM;
  n->word[t->prefix & 7u] = (uintptr_t)t->root;
  t->root = n;
  t->top--;
  t->prefix >>= 3;
  return 0;
}

/* Restore the invariant: an inner root has at least two children (or the trie is empty). */
static void shrink_root(trie *t) {
  while (t->root && t->top + 1u < t->levels) {
    int first = scan_used(t->root, 0, +1);
    if (first < 0 || scan_used(t->root, first + 1, +1) >= 0) break;
    trie_node *only = child(t->root, (unsigned)first);
    release_node(t, t->root);
    t->root = only;
    t->top++;
    t->prefix = (t->prefix << 3) | (unsigned)first;
  }
}

int trie_insert(trie *t, uint64_t key, uintptr_t value) {
  if (key > trie_key_max(t) || value == 0) return EINVAL;
  if (!t->root) { /* the first key: its leaf node is the root */
    if (!(t->root = new_node(t))) return ENOMEM;
    t->top = (uint8_t)(t->levels - 1u);
    t->prefix = high_digits(t, key, t->top);
  }
  while (high_digits(t, key, t->top) != t->prefix) {
    if (expand_root(t)) {
      shrink_root(t);
      return ENOMEM;
    }
  }
  /* Walk down as far as nodes exist. */
  trie_node **link = &t->root;
  unsigned lv = t->top;
  while (*link && lv + 1 < t->levels) {
    link = (trie_node **)&(*link)->word[digit_at(t, key, lv)];
    lv++;
  }
  if (*link && (*link)->word[digit_at(t, key, lv)]) return EEXIST;
  /* Allocate every missing node first, so a failure leaves the trie untouched. */
  trie_node *fresh[TRIE_MAX_LEVELS];
  unsigned missing = *link ? 0 : t->levels - lv;
  for (unsigned i = 0; i < missing; i++) {
    if (!(fresh[i] = new_node(t))) {
      while (i--) release_node(t, fresh[i]);
      shrink_root(t);
      return ENOMEM;
    }
  }
  for (unsigned i = 0; i < missing; i++, lv++) {
    *link = fresh[i];
    if (lv + 1 < t->levels) link = (trie_node **)&fresh[i]->word[digit_at(t, key, lv)];
  }
  trie_node *leaf = *link;
  leaf->word[digit_at(t, key, t->levels - 1)] = value;
  t->count++;
  return 0;
}

uintptr_t *trie_find_slot(const trie *t, uint64_t key) {
  if (key > trie_key_max(t) || !t->root || high_digits(t, key, t->top) != t->prefix) return NULL;
  const trie_node *n = t->root;
  for (unsigned lv = t->top; n && lv + 1 < t->levels; lv++) n = child(n, digit_at(t, key, lv));
  if (!n) return NULL;
  uintptr_t *w = (uintptr_t *)&n->word[digit_at(t, key, t->levels - 1)];
  return *w ? w : NULL;
}

uintptr_t trie_find(const trie *t, uint64_t key) {
  const uintptr_t *w = trie_find_slot(t, key);
  return w ? *w : 0;
}

int trie_delete(trie *t, uint64_t key, uintptr_t *old) {
  if (key > trie_key_max(t) || !t->root || high_digits(t, key, t->top) != t->prefix)
    return ENOENT;
  trie_node *path[TRIE_MAX_LEVELS];
  trie_node *n = t->root;
  unsigned last = t->levels - 1u;
  for (unsigned lv = t->top; lv < last; lv++) {
    path[lv] = n;
    n = child(n, digit_at(t, key, lv));
    if (!n) return ENOENT;
  }
  path[last] = n;
  unsigned d = digit_at(t, key, last);
  if (!n->word[d]) return ENOENT;
  if (old) *old = n->word[d];
  n->word[d] = 0;
  t->count--;
  /* Give back nodes left empty, bottom up. */
  for (unsigned lv = last + 1u; lv-- > t->top;) {
    if (!node_is_empty(path[lv])) break;
    release_node(t, path[lv]);
    if (lv == t->top)
      t->root = NULL;
    else
      path[lv - 1]->word[digit_at(t, key, lv - 1)] = 0;
  }
  shrink_root(t);
  return 0;
}

/* From path[lv] down, follow the extreme used word in direction dir (first for +1, last
 * for -1) to the last level. */
static void descend_extreme(const trie *t, trie_node **path, uint8_t *digit, unsigned lv,
                            int dir) {
  for (; lv + 1 < t->levels; lv++) {
    path[lv + 1] = child(path[lv], digit[lv]);
    digit[lv + 1] = (uint8_t)scan_used(path[lv + 1], dir > 0 ? 0 : TRIE_DEGREE - 1, dir);
  }
}

/* Move the path to the next key in direction dir, starting the search at word `from` of
 * path[lv] and climbing as needed. False when the trie has no such key. */
static bool step(const trie *t, trie_node **path, uint8_t *digit, unsigned lv, int from,
                 int dir) {
  for (;;) {
    int j = scan_used(path[lv], from, dir);
    if (j >= 0) {
      digit[lv] = (uint8_t)j;
      descend_extreme(t, path, digit, lv, dir);
      return true;
    }
    if (lv == t->top) return false;
    lv--;
    from = digit[lv] + dir;
  }
}

/* Path to key itself, or to the nearest key in direction dir. False when none. */
static bool locate(const trie *t, uint64_t key, int dir, trie_node **path, uint8_t *digit) {
  if (!t->root) return false;
  trie_node *n = t->root;
  path[t->top] = n;
  uint64_t high = high_digits(t, key, t->top);
  if (high != t->prefix) { /* key lies wholly below or above every stored key */
    if ((high < t->prefix) != (dir > 0)) return false;
    return step(t, path, digit, t->top, dir > 0 ? 0 : TRIE_DEGREE - 1, dir);
  }
  for (unsigned lv = t->top;; lv++) {
    path[lv] = n;
    unsigned d = digit_at(t, key, lv);
    if (!n->word[d]) return step(t, path, digit, lv, (int)d + dir, dir);
    digit[lv] = (uint8_t)d;
    if (lv + 1 == t->levels) return true;
    n = child(n, d);
  }
}

/* Shared body of trie_le and trie_ge. */
static int nearest(const trie *t, uint64_t key, int dir, uint64_t *found_key,
                   uintptr_t *value) {
  if (key > trie_key_max(t)) {
    if (dir > 0) return ENOENT;
    key = trie_key_max(t);
  }
  trie_node *path[TRIE_MAX_LEVELS];
  uint8_t digit[TRIE_MAX_LEVELS];
  if (!locate(t, key, dir, path, digit)) return ENOENT;
  unsigned last = t->levels - 1u;
  if (found_key) *found_key = key_of_path(t, digit);
  if (value) *value = path[last]->word[digit[last]];
  return 0;
}

int trie_le(const trie *t, uint64_t key, uint64_t *found_key, uintptr_t *value) {
  return nearest(t, key, -1, found_key, value);
}

int trie_ge(const trie *t, uint64_t key, uint64_t *found_key, uintptr_t *value) {
  return nearest(t, key, +1, found_key, value);
}

void trie_cursor_seek(trie_cursor *c, const trie *t, uint64_t from) {
  c->t = t;
  c->at_entry = from <= trie_key_max(t) && locate(t, from, +1, c->path, c->digit);
}

bool trie_cursor_next(trie_cursor *c, uint64_t *key, uintptr_t *value) {
  if (!c->at_entry) return false;
  const trie *t = c->t;
  unsigned last = t->levels - 1u;
  if (key) *key = key_of_path(t, c->digit);
  if (value) *value = c->path[last]->word[c->digit[last]];
  c->at_entry = step(t, c->path, c->digit, last, c->digit[last] + 1, +1);
  return true;
}

/* trie.h: the 8-degree trie (Myrmics section 3.2).
 *
 * Keys are unsigned integers of a fixed width (1..64 bits) chosen at init; each level of the
 * trie consumes 3 bits, so every operation touches at most ceil(width / 3) nodes: constant
 * time for a given width. A node is 64 bytes: 8 words that are child pointers in inner nodes
 * and values in the last level. Values are pointer-sized and must be non-zero (zero marks an
 * empty word). Node memory comes from a caller-supplied source, so a slab pool can keep its
 * own trie nodes in its own slabs. Nodes left empty by a delete are given back at once.
 *
 * Root compression: the root sits at the deepest level that still covers every key (the
 * digits above it, shared by all keys, are kept in `prefix`), so keys that cluster, as slab
 * addresses of one pool do, cost fewer levels than the full width. The root is never an inner
 * node with a single child.
 */
#ifndef AH_TRIE_H
#define AH_TRIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRIE_DEGREE 8
#define TRIE_MAX_LEVELS 22 /* ceil(64 / 3) */

typedef struct trie_node {
  uintptr_t word[TRIE_DEGREE];
} __attribute__((aligned(64))) trie_node;

/* Where nodes come from: alloc returns 64 bytes aligned to 64 (any contents) or NULL. */
typedef struct trie_node_source {
  trie_node *(*alloc)(void *ctx);
  void (*release)(void *ctx, trie_node *node);
  void *ctx;
} trie_node_source;

typedef struct trie {
  trie_node *root;
  trie_node_source source;
  uint64_t prefix;  /* digits above the root's level, shared by every key */
  uint8_t key_bits;
  uint8_t levels;   /* full depth: ceil(key_bits / 3) */
  uint8_t top;      /* level of the root node (0 = the full depth) */
  size_t count; /* keys stored */
  size_t nodes; /* nodes held */
} trie;

/* Ordered walk position. Valid until the trie is next modified. */
typedef struct trie_cursor {
  const trie *t;
  bool at_entry;
  trie_node *path[TRIE_MAX_LEVELS];
  uint8_t digit[TRIE_MAX_LEVELS];
} trie_cursor;

/* A source backed by aligned_alloc/free, for tests and for code with no pool at hand. */
trie_node_source trie_heap_source(void);

/* Init an empty trie; EINVAL for a width outside 1..64. */
int trie_init(trie *t, unsigned key_bits, trie_node_source source);
/* Give back every node; the trie is empty (and still usable) afterwards. */
void trie_clear(trie *t);

/* Insert key -> value. EINVAL: key too wide or value 0; EEXIST: key present;
 * ENOMEM: the node source failed (the trie is unchanged). */
int trie_insert(trie *t, uint64_t key, uintptr_t value);
/* The value stored under key, or 0. */
uintptr_t trie_find(const trie *t, uint64_t key);
/* The word holding key's value (to update in place; keep it non-zero), or NULL. */
uintptr_t *trie_find_slot(const trie *t, uint64_t key);
/* Remove key; its value goes to *old if old is non-NULL. ENOENT when absent. */
int trie_delete(trie *t, uint64_t key, uintptr_t *old);
/* Largest key <= key (trie_le) or smallest key >= key (trie_ge). ENOENT when none.
 * found_key and value may be NULL. */
int trie_le(const trie *t, uint64_t key, uint64_t *found_key, uintptr_t *value);
int trie_ge(const trie *t, uint64_t key, uint64_t *found_key, uintptr_t *value);
static inline size_t trie_count(const trie *t) { return t->count; }
/* Invariants, by an ordered walk: keys strictly increasing and within the width, values
 * non-zero, as many as count. 0, or EINVAL (debug checks and tests). */
int trie_check(const trie *t);
/* Largest key the trie accepts. */
static inline uint64_t trie_key_max(const trie *t) {
  return t->key_bits == 64 ? UINT64_MAX : ((uint64_t)1 << t->key_bits) - 1;
}

/* Ordered walk: seek to the first key >= from, then next() yields keys in increasing order,
 * each step resuming from the last visited node (amortised O(1) per key). */
void trie_cursor_seek(trie_cursor *c, const trie *t, uint64_t from);
bool trie_cursor_next(trie_cursor *c, uint64_t *key, uintptr_t *value);

#endif /* AH_TRIE_H */

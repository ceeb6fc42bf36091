/* rangeset.h: a set of disjoint integer ranges, adjacent ranges always merged. Slab pools keep
 * their free slabs in one, the region layer its free slab ranges and free region IDs, the
 * scheduler the pages and IDs it answers for. Lengths must be non-zero.
 *
 * The ranges live in a trie by first element (value: length). What the schedulers ask of a set
 * on every request costs no walk:
 *   - the number of elements and of ranges are running counts (rangeset_total, _count);
 *   - a sized set (RANGESET_SIZED) also indexes its ranges by length, in a second trie keyed by
 *     (length, first): a range of at least n elements is found in one nearest search,
 *     whatever the fragmentation (rangeset_pick_end: the best fit);
 *   - a set with an alignment A (RANGESET_ALIGN(A), A a power of two) also keeps the ranges
 *     that hold a whole aligned block of A elements, by first element (rangeset_pick_aligned:
 *     the lowest such range in one search).
 * The indexes need trie nodes of their own. The set itself never depends on them: when a node
 * cannot be had for an index, the set stays whole and right, the index is marked stale, and
 * the searches walk the ranges until rangeset_reindex rebuilds it, which
 * the searches try first. So every call keeps the contract it had: taking from the end of a
 * range cannot fail, an add or a split that needs a node for the set itself is ENOMEM with
 * nothing changed. */
#ifndef AH_RANGESET_H
#define AH_RANGESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trie/trie.h"

#define RANGESET_SIZED 1u
#define RANGESET_ALIGN(a) ((unsigned)(a) << 8) /* a power of two, at most 2^23 */

typedef struct rangeset {
  trie ranges;     /* first -> length: the set */
  trie by_size;    /* (min(length, len_cap) << start_bits | first) -> 1 (sized sets) */
  trie aligned;    /* first -> 1, for ranges holding an aligned block (sets with an alignment) */
  uint64_t total;  /* elements in the set */
  uint64_t align;  /* 0, or the block size of `aligned` */
  uint64_t len_cap; /* lengths from this one on share one key prefix in by_size */
  uint8_t start_bits;
  bool sized;
  bool stale;      /* an index missed an entry for want of a node: searches walk */
} rangeset;

/* An empty set of keys of key_bits bits (1..64); flags: 0, RANGESET_SIZED, RANGESET_ALIGN(a),
 * or'ed. EINVAL for a bad width or alignment. */
int rangeset_init(rangeset *s, unsigned key_bits, trie_node_source source, unsigned flags);
/* Give back every node; the set is empty (and usable) afterwards. */
void rangeset_clear(rangeset *s);

/* Add [start, start+n), merging with neighbours. The caller guarantees no overlap
 * (rangeset_overlaps). ENOMEM leaves the set unchanged. */
int rangeset_add(rangeset *s, uint64_t start, uint64_t n);
/* True when [start, start+n) shares any element with the set. */
bool rangeset_overlaps(const rangeset *s, uint64_t start, uint64_t n);
/* The last n elements of a range holding at least n (not taken): in a sized set the smallest
 * such range (the lowest of equal ones), O(log n); otherwise the lowest, by a walk. ENOENT. */
int rangeset_pick_end(const rangeset *s, uint64_t n, uint64_t *start);
/* The lowest range holding a whole block of `align` elements aligned to align (the set's
 * alignment): its first element and length. ENOENT when none. */
int rangeset_pick_aligned(const rangeset *s, uint64_t *start, uint64_t *n);
/* The longest range (the lowest of equal ones; sized sets in O(log n)). ENOENT when empty. */
int rangeset_longest(const rangeset *s, uint64_t *start, uint64_t *n);
/* Take [start, start+n), which must be the end of one range: never fails. */
void rangeset_take_end(rangeset *s, uint64_t start, uint64_t n);
/* Take up to max elements from the end of the highest range. ENOENT when empty. */
int rangeset_take_highest(rangeset *s, uint64_t max, uint64_t *start, uint64_t *n);
/* Take the lowest element. ENOENT when empty, ENOMEM (nothing changed) if a node is needed. */
int rangeset_take_lowest(rangeset *s, uint64_t *elem);
/* Remove [start, start+n), which must lie inside one range (EINVAL otherwise; a split may
 * need a node: ENOMEM then, nothing changed). */
int rangeset_remove(rangeset *s, uint64_t start, uint64_t n);
/* True when every element of [start, start+n) is in the set. */
bool rangeset_contains(const rangeset *s, uint64_t start, uint64_t n);
/* Elements in the set (a running count). */
static inline uint64_t rangeset_total(const rangeset *s) { return s->total; }
/* Ranges in the set. */
static inline size_t rangeset_count(const rangeset *s) { return trie_count(&s->ranges); }

/* Rebuild stale indexes from the ranges: 0, or ENOMEM (still stale; the searches walk). */
int rangeset_reindex(rangeset *s);
/* Check the running counts and the indexes against a walk of the ranges (debug builds call it
 * where the counts are read; tests call it after every step): 0, or EINVAL when they differ. */
int rangeset_check(const rangeset *s);

#endif

/* rangeset.h: a set of disjoint integer ranges kept in a trie (key = first, value = length),
 * adjacent ranges always merged. Slab pools keep their free slabs in one, the region layer
 * its free slab ranges and free region IDs. Lengths must be non-zero. */
#ifndef AH_RANGESET_H
#define AH_RANGESET_H

#include <stdbool.h>
#include <stdint.h>

#include "trie/trie.h"

/* Add [start, start+n), merging with neighbours. The caller guarantees no overlap
 * (rangeset_overlaps). ENOMEM leaves the set unchanged. */
int rangeset_add(trie *t, uint64_t start, uint64_t n);
/* True when [start, start+n) shares any element with the set. */
bool rangeset_overlaps(const trie *t, uint64_t start, uint64_t n);
/* The last n elements of the lowest range holding at least n (not taken). ENOENT if none. */
int rangeset_pick_end(const trie *t, uint64_t n, uint64_t *start);
/* Take [start, start+n), which must be the end of one range: never fails. */
void rangeset_take_end(trie *t, uint64_t start, uint64_t n);
/* Take up to max elements from the end of the highest range. ENOENT when empty. */
int rangeset_take_highest(trie *t, uint64_t max, uint64_t *start, uint64_t *n);
/* Take the lowest element. ENOENT when empty, ENOMEM (nothing changed) if a node is needed. */
int rangeset_take_lowest(trie *t, uint64_t *elem);
/* Remove [start, start+n), which must lie inside one range (a split may need a node:
 * ENOMEM then, nothing changed). */
int rangeset_remove(trie *t, uint64_t start, uint64_t n);
/* True when every element of [start, start+n) is in the set. */
bool rangeset_contains(const trie *t, uint64_t start, uint64_t n);
/* Sum of the lengths (walks the set). */
uint64_t rangeset_total(const trie *t);

#endif

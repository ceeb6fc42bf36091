/* words.h: a growable array of 64-bit words, filled one at a time (the names of a PACKV) or in
 * pairs ({addr, len}, {first, count}), for the messages whose tails the server assembles (pack
 * requests and replies, shutdown returns). */
#ifndef AH_SCHED_WORDS_H
#define AH_SCHED_WORDS_H

#include <stdint.h>
#include <stdlib.h>

typedef struct words {
  uint64_t *w;
  size_t n, cap; /* in words */
} words;

/* Room for k more words; non-zero when out of memory (nothing changed). */
static inline int words_room(words *v, size_t k) {
  if (v->n + k <= v->cap) return 0;
  size_t cap = v->cap ? 2 * v->cap : 256;
  uint64_t *w = realloc(v->w, cap * sizeof *w);
  if (!w) return 1;
  v->w = w;
  v->cap = cap;
  return 0;
}

/* Append the word a; non-zero when out of memory (nothing appended). */
static inline int words_push1(words *v, uint64_t a) {
  if (words_room(v, 1)) return 1;
  v->w[v->n++] = a;
  return 0;
}

/* Append the pair {a, b}; non-zero when out of memory (nothing appended). */
static inline int words_push2(words *v, uint64_t a, uint64_t b) {
  if (words_room(v, 2)) return 1;
  v->w[v->n++] = a;
  v->w[v->n++] = b;
  return 0;
}

/* As a slab_range_fn: append {addr, len}. */
static inline int words_push_range(void *ctx, uintptr_t addr, size_t len) {
  return words_push2(ctx, addr, len);
}

#endif

/* bh_steal.h: the walk's tail shared with the next worker (bh_steal.c). A worker's domain
 * ends in a tail, its last bodies by key (a share of its weight, BARNES_STEAL), which the next
 * worker along the curve walks too once its own walk is done, from the tail's far end, while the
 * owner walks it from the near end; they meet where the slower of the two had got to. The peers'
 * LETs for the next worker cover the tail's box as well as its own, so its walk of a tail body
 * is the serial walk, cell for cell, and writes the same bits the owner would have. */
#ifndef BH_STEAL_H
#define BH_STEAL_H

#include <mpi.h>
#include <stdbool.h>

#include "bh.h"

#define BH_STEAL_CHUNK 64 /* bodies a chunk: a claim and a result message each */

/* Walks b[lo, hi): each body's acc, pot, work and cost written; their interactions added to
 * *work, the pruned cells they opened to *missing. */
typedef void (*bh_walk_fn)(void *ctx, bh_body *b, size_t lo, size_t hi, int64_t *work,
                           int64_t *missing);

/* A worker's part in one step's shared walk: with the next worker (me + 1) as owner of the
 * tail, with the one before (me - 1) as the taker of its tail. */
/* BARNES_TAIL_TEST, for the tests and measurements: every chunk of every tail walked by the
 * next worker only (late: an owner walks its tail once its taker has claimed it all), by both
 * (twice: owners ignore the claims, takers the progress), by its owner only (keep: takers claim
 * nothing; the LETs still cover the tails), or the first half by the owner and the rest by the
 * taker (half: takers claim down to the middle, and owners wait there for the end of the
 * claims). */
enum { BH_TAIL_SHARED, BH_TAIL_LATE, BH_TAIL_TWICE, BH_TAIL_KEEP, BH_TAIL_HALF };

typedef struct bh_steal {
  MPI_Comm comm; /* the workers, in domain order (a duplicate: its own tags) */
  int me, P;
  int test; /* BH_TAIL_* */
  /* as owner: the tail b[tail, n) in chunks; the next worker's claims */
  bh_body *b;
  size_t tail, n;
  int chunks, claimed_from, claims;
  bool end_seen;
  char *walked; /* per chunk: walked here */
  int *progress;
  MPI_Request *rq; /* one a chunk started, then the last word */
  int nrq;
  /* as taker: the previous worker's tail */
  void *in, *results;
  size_t in_n;
  int in_chunks, in_at, *claim;
  MPI_Request *in_rq;
  int in_nrq;
  /* the step's counts, summed over the steps: chunks of this worker's tail walked by the next
   * worker, chunks of the previous worker's walked here, chunks walked by both */
  long given, taken, twice;
  double own_s; /* the step's walk of this worker's own bodies, seconds */
} bh_steal;

/* BARNES_STEAL: the tail's share of a worker's weight, 0 (no tail shared, as when unset) or
 * from 1/BH_SHARE_ONE to 0.5. -1 for anything else (the caller says so). */
double bh_steal_share(void);

/* BARNES_TAIL_TEST: BH_TAIL_SHARED when unset, else BH_TAIL_LATE, _TWICE, _KEEP or _HALF for
 * "late", "twice", "keep" or "half"; -1 for anything else. */
int bh_steal_test(void);

/* The step's tails: b[0, n) is this worker's (sorted by key), b[tail, n) its tail; sends the
 * tail's positions to the next worker and gets the previous worker's. Every worker calls it
 * (each waits for its neighbours only), then bh_steal_walk and bh_steal_finish. 0, or -1 when
 * memory ran out (the caller stops the job: the neighbours wait for it). */
int bh_steal_begin(bh_steal *s, bh_body *b, size_t n, size_t tail);

/* Walks this worker's bodies with the tail shared with the next worker, then what it can of the
 * previous worker's tail (the results go back to it). 0, or -1 when memory ran out. */
int bh_steal_walk(bh_steal *s, bh_walk_fn walk, void *ctx, int64_t *work, int64_t *missing);

/* Waits for what the next worker walked of this worker's tail (their results copied into b,
 * their interactions added to *work) and for the previous worker's last word. 0 or -1. */
int bh_steal_finish(bh_steal *s, int64_t *work);

#endif

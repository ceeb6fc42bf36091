/* work.h: the weak-scaling benchmark's pure logic (no MPI, unit-tested): the fixed partner
 * schedule, the scheduler count of a full fan-out tree, the checksums of what travels, and the
 * schedulers' statistics (the root's ANTHEAP_STATS file) summed by place in the tree.
 *
 * Per round every worker exchanges its travel region with at most 2 + K partners, whatever
 * the number of workers W: stage 0 pairs 2j with 2j+1 (ring, even links), stage 1 pairs 2j+1
 * with 2j+2 mod W (ring, odd links), stage 1 + d (d = 1..K) pairs i with i XOR 2^d (the first
 * K hypercube dimensions above the ring: a block of 2^(K+1) workers). Every stage is a
 * matching; a worker without a partner in a stage has a bye. */
#ifndef AH_SCALE_WORK_H
#define AH_SCALE_WORK_H

#include <stdint.h>
#include <stdio.h>

/* Stages of one round with K hypercube dimensions. */
int scale_stages(int cube_dims);
/* The partner of worker me (of n) in stage s, or -1 (a bye). */
int scale_partner(int me, int n, int stage, int cube_dims);

/* Schedulers of an SPMD job with `workers` workers, `per_leaf` workers on each leaf and
 * fan-out `fanout`, in antheap's heap-ordered tree (src/job/plan.c: the last S - I indices
 * are the leaves, I = ceil((S-1)/F)): the smallest S with enough leaves. -1 on bad input. */
int scale_schedulers_for(int workers, int fanout, int per_leaf);
/* Levels of the heap-ordered tree of S schedulers with fan-out F. */
int scale_levels(int schedulers, int fanout);

/* The checksum of one item (owner, index, round) of a travel region: splitmix64. */
uint64_t scale_mix(uint64_t owner, uint64_t index, uint64_t round);

/* Statistics of one class of schedulers (root, inner, leaf). */
typedef struct scale_class {
  int count;
  uint64_t msgs, bytes;    /* in + out, summed over the class */
  uint64_t msgs_max;       /* the busiest scheduler's in + out */
  uint64_t rss_kib_max, rss_kib_sum;
} scale_class;

typedef struct scale_sched_stats {
  scale_class cls[3]; /* 0 root, 1 inner, 2 leaf */
  int levels;         /* deepest level + 1 */
  int rows;
} scale_sched_stats;

/* Read the root's statistics CSV (header line, then rank,level,kind,msgs_in,msgs_out,
 * bytes_in,bytes_out,...,rss_kib rows). 0, or -1 when the header or a row is not one. */
int scale_read_stats(FILE *f, scale_sched_stats *out);

#endif

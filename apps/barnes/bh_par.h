/* bh_par.h: the pieces of the parallel Barnes-Hut (bh.h's nouns: domain, branch, top tree,
 * LET) that need neither MPI nor antheap, so the serial test checks them: domains
 * (bh_domain.c), branches, the top tree and LETs (bh_let.c). The step that puts them together
 * over MPI is bh_run.c. */
#ifndef BH_PAR_H
#define BH_PAR_H

#include <stdbool.h>

#include "bh.h"

/* ---- domains (bh_domain.c) ---- */
/* Sort b[0..n) by key in cube c (stable), keys into keys[0..n) (scratch: n bodies). 0 or -1. */
int bh_sort_by_key(const bh_cube *c, bh_body *b, size_t n, uint64_t *keys, bh_body *scratch);
/* The same order with a team's threads (NULL: the calling thread alone): keys, a stable
 * bucketing by their leading bits, each bucket sorted, the bodies moved. keep: the memory of
 * their (key, index) pairs, kept between sorts (35 MB at 1.1 million bodies, which every sort
 * would fault in again; NULL: allocated and freed in each). */
int bh_sort_by_key_team(const bh_cube *c, bh_body *b, size_t n, uint64_t *keys,
                        bh_body *scratch, bh_team *team, bh_block *keep);
/* The same, with no copy back: *b's bodies sorted into *scratch and the two pointers swapped
 * (left as they are where the bodies were in order already), for a caller whose two buffers
 * are alike (as large, and either may hold the bodies). */
int bh_sort_by_key_swap(const bh_cube *c, bh_body **b, bh_body **scratch, size_t n,
                        uint64_t *keys, bh_team *team, bh_block *keep);
/* The bodies b[0..at[nruns]) in nruns runs, run r [at[r], at[r + 1]) in key order (keys[i]
 * b[i]'s key, at[0] = 0), merged into key order in out and out_keys by the team's threads:
 * stable, so the order bh_sort_by_key gives the runs one after another (equal keys in run
 * order, then as they were). 0; 2 when the runs one after another are in key order already
 * (nothing is written: b and keys are the result); 1 when some run was not in key order (out
 * is then some permutation: sort instead); -1 on ENOMEM. */
int bh_merge_runs_team(const bh_body *b, const uint64_t *keys, const size_t *at, int nruns,
                       bh_body *out, uint64_t *out_keys, bh_team *team);
/* The sorts' stages: the keys (and their pairs), the counts by bucket, the scatter into
 * buckets, the buckets' sorts (the serial sort's radix passes), the bodies' move into key
 * order, the copy back (bh_sort_by_key_team), the merges (bh_merge_runs_team). Seconds by stage summed over this process's
 * sorts, for the phase tables (BARNES_PHASES=3). */
enum { BH_SORT_KEYS, BH_SORT_COUNT, BH_SORT_SCATTER, BH_SORT_BUCKETS, BH_SORT_MOVE,
       BH_SORT_COPY, BH_SORT_MERGE, BH_SORT_STAGES };
void bh_sort_stages(double s[BH_SORT_STAGES]);
void bh_sort_stages_reset(void);
/* Sum v[0..n) over every worker, in place (a collective). */
typedef void (*bh_sum_fn)(void *ctx, int64_t *v, int n);
/* The cuts of P domains by weight: cut[0] = 0, cut[P] = BH_KEY_END, and cut[j] the smallest
 * key with at least j/P of the system's weight below it (keys sorted, bodies b). 0 or -1. */
int bh_domain_cuts(const uint64_t *keys, const bh_body *b, size_t n, int P, bh_sum_fn sum,
                   void *ctx, uint64_t *cut);
/* The domain a key belongs to. */
size_t bh_domain_of(const uint64_t *cut, int P, uint64_t key);
/* Shares of a domain's weight, in BH_SHARE_ONE-ths. */
#define BH_SHARE_ONE 1024
/* bh_domain_cuts, and (tail not NULL) each domain's tail, which the next worker may walk too
 * (bh_steal.h): tail[j] the smallest key with at least (j + 1 - share / BH_SHARE_ONE) / P of the
 * system's weight below it, within [cut[j], cut[j + 1]]. The same rounds of sums as the cuts
 * alone, each of up to 2P - 1 numbers. 0 or -1. */
int bh_domain_cuts_tails(const uint64_t *keys, const bh_body *b, size_t n, int P, int share,
                         bh_sum_fn sum, void *ctx, uint64_t *cut, uint64_t *tail);

/* ---- branches, the top tree, LETs (bh_let.c) ---- */
typedef struct bh_branch {
  uint64_t prefix; /* the cell's path: 3 bits a level, depth levels */
  int32_t depth, owner;
  double com[3], mass, size;
  int64_t id;
} bh_branch;

/* The branches of t (built in cube c of bodies whose keys all lie in [lo, hi)), in key order,
 * into *out (malloc'd) and their cells into *cells; their number, or -1 when out of memory. */
long bh_branches(const bh_tree *t, const bh_cube *c, uint64_t lo, uint64_t hi, int owner,
                 bh_branch **out, const bh_cell ***cells);

/* The cells above the branches, the same on every worker. Each branch hangs at a slot (a
 * child pointer of a top cell, or the root) that bh_top_graft fills with its cell. */
typedef struct bh_top {
  bh_cell *cells;  /* top cells and one stand-in cell per branch (its moments) */
  size_t ncells;
  bh_cell ***slot; /* slot[i]: the child pointer (or root) where branch i's cell goes */
  bh_cell *root;   /* the root of the whole tree once grafted */
  size_t nbranches;
} bh_top;
/* Build the top tree of branches br[0..nb) (key order) in cube c. 0 or -1 (ENOMEM). */
int bh_top_build(bh_top *top, const bh_branch *br, size_t nb, const bh_cube *c);
/* Hang branch i's real cell (a local cell, or a LET's). */
static inline void bh_top_graft(bh_top *top, size_t i, const bh_cell *cell) {
  *top->slot[i] = (bh_cell *)cell;
}
void bh_top_free(bh_top *top);

/* A LET in one block of memory: a header, root[] (one cell index per branch of the sender, in
 * key order), then the cells. Children are pointers into the block, or, in a relocatable LET
 * (one that travels as bytes), cell index + 1, made pointers by bh_let_relocate. */
typedef struct bh_let_head {
  int64_t ncells, nroots;
} bh_let_head;
/* The bytes of the LET of cells[0..nb) (the sender's branches) for a peer whose bodies lie in
 * [lo, hi]: every cell a walk from the box may open, the others pruned. */
size_t bh_let_bytes(const bh_cell *const *cells, size_t nb, const double lo[3],
                    const double hi[3], double theta);
/* Fill it into buf (bytes from bh_let_bytes). */
void bh_let_fill(void *buf, const bh_cell *const *cells, size_t nb, const double lo[3],
                 const double hi[3], double theta, bool relocatable);
/* The same in pieces, for threads that fill one LET together (bh_run.c): the cells branch's
 * part of a LET holds, the bytes of a LET of nb branches and ncells cells, the part of branch
 * i (of nb) written from cell index `at` (the sum of the parts before it; returns its cells),
 * and the header, once every part is known. The bytes are bh_let_fill's. */
size_t bh_let_branch_cells(const bh_cell *branch, const double lo[3], const double hi[3],
                           double theta);
size_t bh_let_size(size_t nb, size_t ncells);
size_t bh_let_fill_branch(void *buf, size_t nb, size_t i, size_t at, const bh_cell *branch,
                          const double lo[3], const double hi[3], double theta,
                          bool relocatable);
void bh_let_head_set(void *buf, size_t nb, size_t ncells);
/* Make a received relocatable LET's children pointers; 0, or -1 for a malformed one. */
int bh_let_relocate(void *buf, size_t bytes);
/* The cell of root i of a LET (NULL past the end). */
const bh_cell *bh_let_root(const void *buf, size_t i);

#endif

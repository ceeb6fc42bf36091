/* bh_domain.c: domains as ranges of keys (bh.h). A worker's bodies sorted by key, and the cuts
 * between domains: cut[j], the smallest key with j/P of the system's weight below it, found
 * for all j at once by bisection of the key space (64 rounds of one collective sum of P - 1
 * numbers). Bodies of one key never split, so a cell of the deepest key level lies in one
 * domain. The sort is a radix sort of (key, index) pairs, then the bodies moved into that order.
 * A domain's tail is its last keys, a share of its weight (bh_domain_cuts_tails).
 * Main entries: bh_sort_by_key (bh_sort_by_key_team: the same with a worker's threads),
 * bh_domain_cuts. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bh_par.h"

/* Where the sorts' time goes (bh_sort_stages): seconds by stage, summed over this process's
 * sorts (one sort at a time: a rank's calling thread). */
static double stage_s[BH_SORT_STAGES];

void bh_sort_stages(double s[BH_SORT_STAGES]) { memcpy(s, stage_s, sizeof stage_s); }
void bh_sort_stages_reset(void) { memset(stage_s, 0, sizeof stage_s); }

/* Seconds since *t0 (ns) added to stage k; *t0 moves on. */
static void stage_lap(int k, double *t0) {
  double t = bench_now_ns();
  stage_s[k] += (t - *t0) * 1e-9;
  *t0 = t;
}

typedef struct keyed {
  uint64_t key;
  size_t i;
} keyed;

/* k[0..n) by key, stable (equal keys keep their order: (key, index) order when k[i].i = i): an LSD
 * radix sort, 11 bits a pass over the 63-bit keys, a pass skipped where every key has the same
 * digit (a domain's keys share their leading digits). tmp: n more pairs. */
#define RADIX_BITS 11
_Static_assert(3 * BH_KEY_LEVELS <= 64, "the keys fit the radix sort's 64-bit passes");
static void radix_sort_keyed(keyed *k, keyed *tmp, size_t n) {
  size_t count[1u << RADIX_BITS];
  keyed *src = k, *dst = tmp;
  for (int shift = 0; shift < 3 * BH_KEY_LEVELS; shift += RADIX_BITS) {
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < n; i++) count[(src[i].key >> shift) & ((1u << RADIX_BITS) - 1)]++;
    if (count[(src[0].key >> shift) & ((1u << RADIX_BITS) - 1)] == n) continue; /* one digit */
    for (size_t d = 0, sum = 0; d < (1u << RADIX_BITS); d++) {
      size_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; i++) dst[count[(src[i].key >> shift) & ((1u << RADIX_BITS) - 1)]++] = src[i];
    keyed *t = src;
    src = dst, dst = t;
  }
  if (src != k) memcpy(k, src, n * sizeof *k);
}

/* b[0..n) sorted by key into scratch, with its 2n pairs in k. */
static void sort_serial(const bh_cube *c, const bh_body *b, size_t n, uint64_t *keys,
                        bh_body *scratch, keyed *k) {
  double t0 = bench_now_ns();
  bh_keys(c, b, n, keys); /* (keys is overwritten in the sorted order below) */
  for (size_t i = 0; i < n; i++) k[i] = (keyed){keys[i], i};
  stage_lap(BH_SORT_KEYS, &t0);
  if (n > 1) radix_sort_keyed(k, k + n, n);
  stage_lap(BH_SORT_BUCKETS, &t0);
  for (size_t i = 0; i < n; i++) scratch[i] = b[k[i].i], keys[i] = k[i].key;
  stage_lap(BH_SORT_MOVE, &t0);
}

int bh_sort_by_key(const bh_cube *c, bh_body *b, size_t n, uint64_t *keys, bh_body *scratch) {
  keyed *k = malloc((n ? 2 * n : 1) * sizeof *k);
  if (!k) return -1;
  sort_serial(c, b, n, keys, scratch, k);
  memcpy(b, scratch, n * sizeof *b);
  free(k);
  return 0;
}

/* ---- the sort with a team (hybrid workers) ---- */

#define SORT_BUCKETS 4096 /* buckets of leading key bits: a few hundred bodies each, typically */

typedef struct sort_job {
  const bh_cube *c;
  bh_body *b, *scratch;
  uint64_t *keys;
  size_t n;
  keyed *k, *k2;          /* (key, index), then bucketed (k: a bucket's scratch then) */
  uint64_t *lo, *hi;      /* per thread: its smallest and largest key */
  size_t *at;             /* [t * SORT_BUCKETS + j]: thread t's count, then its next slot, in bucket j */
  size_t start[SORT_BUCKETS + 1];
  uint64_t kmin;
  int shift;
  atomic_size_t next;     /* the next bucket to sort */
  atomic_bool unsorted;   /* some key is smaller than the one before it */
} sort_job;

static size_t bucket_of(const sort_job *j, uint64_t key) {
  return (size_t)((key - j->kmin) >> j->shift);
}

static void sort_keys(void *ctx, int t, int T) {
  sort_job *j = ctx;
  size_t a, z;
  bh_share(j->n, t, T, &a, &z);
  uint64_t lo = UINT64_MAX, hi = 0, last = 0;
  bool unsorted = false;
  bh_keys(j->c, j->b + a, z - a, j->keys + a); /* the keys' place, sorted or not */
  for (size_t i = a; i < z; i++) {
    uint64_t key = j->keys[i];
    j->k[i] = (keyed){key, i};
    lo = key < lo ? key : lo;
    hi = key > hi ? key : hi;
    unsorted |= key < last;
    last = key;
  }
  j->lo[t] = lo, j->hi[t] = hi;
  if (unsorted) atomic_store_explicit(&j->unsorted, true, memory_order_relaxed);
}

/* In key order when each thread's part is, and each part starts at or after the last key of
 * the parts before it (bh_share's ranges, in order; an empty part passes the last key on). */
static bool sorted_already(const sort_job *j, int T) {
  if (atomic_load_explicit(&j->unsorted, memory_order_relaxed)) return false;
  uint64_t last = 0;
  for (int t = 0; t < T; t++) {
    size_t a, z;
    bh_share(j->n, t, T, &a, &z);
    if (a == z) continue;
    if (j->k[a].key < last) return false;
    last = j->k[z - 1].key;
  }
  return true;
}

static void sort_count(void *ctx, int t, int T) {
  sort_job *j = ctx;
  size_t a, z, *mine = j->at + (size_t)t * SORT_BUCKETS;
  bh_share(j->n, t, T, &a, &z);
  memset(mine, 0, SORT_BUCKETS * sizeof *mine);
  for (size_t i = a; i < z; i++) mine[bucket_of(j, j->k[i].key)]++;
}

/* Thread t's bodies, in their order, into the slots its count reserved: stable. */
static void sort_scatter(void *ctx, int t, int T) {
  sort_job *j = ctx;
  size_t a, z, *mine = j->at + (size_t)t * SORT_BUCKETS;
  bh_share(j->n, t, T, &a, &z);
  for (size_t i = a; i < z; i++) j->k2[mine[bucket_of(j, j->k[i].key)]++] = j->k[i];
}

static inline bool before(const keyed *x, const keyed *y) {
  return x->key < y->key || (x->key == y->key && x->i < y->i);
}

/* v[0..n) in (key, index) order by insertion, true; false (v a permutation of what it was)
 * after `budget` moves, where the pairs are far out of order. */
static bool insertion_sort(keyed *v, size_t n, size_t budget) {
  for (size_t i = 1; i < n; i++) {
    keyed x = v[i];
    size_t j = i;
    for (; j > 0 && before(&x, &v[j - 1]); j--) v[j] = v[j - 1];
    v[j] = x;
    if ((budget -= budget < i - j ? budget : i - j) == 0) return false;
  }
  return true;
}

/* v[0..n) in (key, index) order by merges of runs of doubling width, tmp as long (the
 * result in v). */
static void merge_sort(keyed *v, keyed *tmp, size_t n) {
  enum { RUN = 8 };
  for (size_t a = 0; a < n; a += RUN) insertion_sort(v + a, n - a < RUN ? n - a : RUN, SIZE_MAX);
  keyed *src = v, *dst = tmp;
  for (size_t w = RUN; w < n; w *= 2) {
    for (size_t a = 0; a < n; a += 2 * w) {
      size_t m = a + w < n ? a + w : n, z = a + 2 * w < n ? a + 2 * w : n, x = a, y = m, o = a;
      while (x < m && y < z) dst[o++] = before(&src[y], &src[x]) ? src[y++] : src[x++];
      while (x < m) dst[o++] = src[x++];
      while (y < z) dst[o++] = src[y++];
    }
    keyed *t = src;
    src = dst, dst = t;
  }
  if (src != v) memcpy(v, src, n * sizeof *v);
}

/* A bucket's pairs in order: mostly in order already (the bodies were sorted a step ago, and
 * have moved a little) or a few sorted runs (as the migration delivers them), which insertion
 * sorts in little more than a pass; a merge sort where that takes more than 4 moves a pair. */
static void sort_bucket(keyed *v, keyed *tmp, size_t n) {
  if (n > 1 && !insertion_sort(v, n, 4 * n)) merge_sort(v, tmp, n);
}

static void sort_buckets(void *ctx, int t, int T) {
  (void)t, (void)T;
  sort_job *j = ctx;
  for (size_t q; (q = atomic_fetch_add(&j->next, 1)) < SORT_BUCKETS;)
    sort_bucket(j->k2 + j->start[q], j->k + j->start[q], j->start[q + 1] - j->start[q]);
}

static void sort_move(void *ctx, int t, int T) {
  sort_job *j = ctx;
  size_t a, z;
  bh_share(j->n, t, T, &a, &z);
  for (size_t i = a; i < z; i++) j->scratch[i] = j->b[j->k2[i].i], j->keys[i] = j->k2[i].key;
}

/* Bucket q's first slot, and each thread's first slot in it (bucket by bucket, thread by
 * thread: the order of the bodies before the sort within a bucket). */
static void sort_slots(sort_job *j, int T) {
  size_t sum = 0;
  for (size_t q = 0; q < SORT_BUCKETS; q++) {
    j->start[q] = sum;
    for (int t = 0; t < T; t++) {
      size_t c = j->at[(size_t)t * SORT_BUCKETS + q];
      j->at[(size_t)t * SORT_BUCKETS + q] = sum;
      sum += c;
    }
  }
  j->start[SORT_BUCKETS] = sum;
}

/* The keys' range cut into SORT_BUCKETS buckets of leading bits; each thread's bodies counted
 * into them and placed, stably; each bucket sorted; the bodies moved into that order. */
static void sort_by_buckets(sort_job *j, bh_team *team, int T) {
  uint64_t kmin = UINT64_MAX, kmax = 0;
  for (int t = 0; t < T; t++) {
    kmin = j->lo[t] < kmin ? j->lo[t] : kmin;
    kmax = j->hi[t] > kmax ? j->hi[t] : kmax;
  }
  j->kmin = kmin;
  while (((kmax - kmin) >> j->shift) >= SORT_BUCKETS) j->shift++;
  double t0 = bench_now_ns();
  bh_team_run(team, sort_count, j);
  sort_slots(j, T);
  stage_lap(BH_SORT_COUNT, &t0);
  bh_team_run(team, sort_scatter, j);
  stage_lap(BH_SORT_SCATTER, &t0);
  atomic_init(&j->next, 0);
  bh_team_run(team, sort_buckets, j);
  stage_lap(BH_SORT_BUCKETS, &t0);
  bh_team_run(team, sort_move, j);
  stage_lap(BH_SORT_MOVE, &t0);
}

/* The team's or the calling thread's sort of b's bodies: 1 when they were moved into scratch
 * in key order, 0 when they were in order already (and stay in b), -1 on ENOMEM. */
static int sort_any(const bh_cube *c, bh_body *b, size_t n, uint64_t *keys, bh_body *scratch,
                    bh_team *team, bh_block *keep) {
  int T = bh_team_size(team);
  if (T <= 1 || n < 2 * SORT_BUCKETS) {
    keyed *k = bh_block_room(keep, (n ? 2 * n : 1) * sizeof *k);
    if (!k) return -1;
    sort_serial(c, b, n, keys, scratch, k);
    bh_block_release(keep, k);
    return 1;
  }
  sort_job *j = calloc(1, sizeof *j);
  if (!j) return -1;
  j->c = c, j->b = b, j->scratch = scratch, j->keys = keys, j->n = n;
  /* one block: the pairs twice, then per thread its counts, smallest and largest key */
  size_t per_thread = SORT_BUCKETS * sizeof *j->at + sizeof *j->lo + sizeof *j->hi;
  char *mem = bh_block_room(keep, 2 * n * sizeof(keyed) + (size_t)T * per_thread);
  int rc = -1;
  if (mem) {
    j->k = (keyed *)mem;
    j->k2 = j->k + n;
    j->at = (size_t *)(j->k2 + n);
    j->lo = (uint64_t *)(j->at + (size_t)T * SORT_BUCKETS);
    j->hi = j->lo + T;
    atomic_init(&j->unsorted, false);
    double t0 = bench_now_ns();
    bh_team_run(team, sort_keys, j);
    stage_lap(BH_SORT_KEYS, &t0);
    rc = 0; /* (in order already: the keys are in place, and so are the bodies) */
    if (!sorted_already(j, T)) {
      sort_by_buckets(j, team, T);
      rc = 1;
    }
    bh_block_release(keep, mem);
  }
  free(j);
  return rc;
}

int bh_sort_by_key_team(const bh_cube *c, bh_body *b, size_t n, uint64_t *keys,
                        bh_body *scratch, bh_team *team, bh_block *keep) {
  int rc = sort_any(c, b, n, keys, scratch, team, keep);
  double t0 = bench_now_ns();
  if (rc == 1) bh_team_copy(team, b, scratch, n * sizeof *b);
  stage_lap(BH_SORT_COPY, &t0);
  return rc < 0 ? -1 : 0;
}

int bh_sort_by_key_swap(const bh_cube *c, bh_body **b, bh_body **scratch, size_t n,
                        uint64_t *keys, bh_team *team, bh_block *keep) {
  int rc = sort_any(c, *b, n, keys, *scratch, team, keep);
  if (rc == 1) {
    bh_body *t = *b;
    *b = *scratch, *scratch = t;
  }
  return rc < 0 ? -1 : 0;
}

/* The weight of the bodies with key < k: pw[i] is the weight of the first i (keys sorted). */
static int64_t weight_below(const uint64_t *keys, const int64_t *pw, size_t n, uint64_t k) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return pw[lo];
}

int bh_domain_cuts_tails(const uint64_t *keys, const bh_body *b, size_t n, int P, int share,
                         bh_sum_fn sum, void *ctx, uint64_t *cut, uint64_t *tail) {
  /* the targets, in total / (P * BH_SHARE_ONE) of the weight: the cuts j * BH_SHARE_ONE, then
   * (tail) each domain's end less its share */
  int T = P - 1 + (tail ? P : 0);
  int64_t *pw = malloc((n + 1) * sizeof *pw), *w = malloc(((size_t)T + 1) * sizeof *w),
          *target = malloc(((size_t)T + 1) * sizeof *target);
  uint64_t *lo = malloc(((size_t)T + 1) * sizeof *lo), *hi = malloc(((size_t)T + 1) * sizeof *hi);
  if (!pw || !w || !target || !lo || !hi) {
    free(pw), free(w), free(target), free(lo), free(hi);
    return -1;
  }
  for (int t = 0; t < T; t++) {
    target[t] = t < P - 1 ? (int64_t)(t + 1) * BH_SHARE_ONE
                          : (int64_t)(t - (P - 1) + 1) * BH_SHARE_ONE - share;
    lo[t] = 0, hi[t] = BH_KEY_END;
  }
  pw[0] = 0;
  for (size_t i = 0; i < n; i++) pw[i + 1] = pw[i] + bh_weight(&b[i]);
  int64_t total = pw[n];
  sum(ctx, &total, 1);
  /* lower bound of each target: the smallest k with weight_below(k) * P * ONE >= target * total */
  for (int round = 0; round <= 3 * BH_KEY_LEVELS; round++) {
    for (int t = 0; t < T; t++)
      w[t] = lo[t] < hi[t] ? weight_below(keys, pw, n, lo[t] + (hi[t] - lo[t]) / 2) : 0;
    sum(ctx, w, T);
    for (int t = 0; t < T; t++) {
      if (lo[t] >= hi[t]) continue;
      uint64_t mid = lo[t] + (hi[t] - lo[t]) / 2;
      /* 128 bits: the weights are nanoseconds, and the targets 1,024ths of a domain */
      if ((__int128)w[t] * P * BH_SHARE_ONE >= (__int128)target[t] * total) hi[t] = mid;
      else lo[t] = mid + 1;
    }
  }
  cut[0] = 0;
  for (int j = 1; j < P; j++) cut[j] = lo[j - 1];
  cut[P] = BH_KEY_END;
  for (int j = 0; tail && j < P; j++) /* within the domain, whatever the rounding */
    tail[j] = lo[P - 1 + j] < cut[j] ? cut[j] : lo[P - 1 + j] > cut[j + 1] ? cut[j + 1] : lo[P - 1 + j];
  free(pw), free(w), free(target), free(lo), free(hi);
  return 0;
}

int bh_domain_cuts(const uint64_t *keys, const bh_body *b, size_t n, int P, bh_sum_fn sum,
                   void *ctx, uint64_t *cut) {
  return bh_domain_cuts_tails(keys, b, n, P, 0, sum, ctx, cut, NULL);
}

size_t bh_domain_of(const uint64_t *cut, int P, uint64_t key) {
  size_t lo = 0, hi = (size_t)P; /* the last j with cut[j] <= key */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (cut[mid] <= key) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* ---- the merge of key-sorted runs (a team's bodies after the migration) ---- */

typedef struct merge_job {
  const bh_body *b;
  const uint64_t *keys;
  const size_t *at;  /* run r: [at[r], at[r + 1]) */
  int nruns;
  bh_body *out;
  uint64_t *out_keys;
  size_t *pos;       /* [t * nruns + r]: thread t's first body of run r; row T: the runs' ends */
  size_t *head;      /* nruns a thread: its next body of each run */
  int *heap;         /* nruns a thread */
  atomic_bool unsorted; /* some run was not in key order */
} merge_job;

/* Run x's head before run y's: the smaller key, on a tie the earlier run (stable). */
static inline bool head_before(const uint64_t *keys, const size_t *h, int x, int y) {
  return keys[h[x]] < keys[h[y]] || (keys[h[x]] == keys[h[y]] && x < y);
}

static void sift_down(const uint64_t *keys, const size_t *h, int *heap, int n, int i) {
  for (int c; (c = 2 * i + 1) < n; i = c) {
    if (c + 1 < n && head_before(keys, h, heap[c + 1], heap[c])) c++;
    if (!head_before(keys, h, heap[c], heap[i])) return;
    int x = heap[i];
    heap[i] = heap[c], heap[c] = x;
  }
}

/* How far run r's bodies from i on (before `end`) all come before run q's head at key kq:
 * the first index from i + 1 on that does not (keys ascending; an exponential search, then a
 * binary one). */
static size_t block_end(const uint64_t *keys, size_t i, size_t end, int r, uint64_t kq, int q) {
  size_t lo = i + 1, step = 1, hi; /* keys[i] comes first: it is the heap's top */
#define BEFORE_Q(x) (keys[x] < kq || (keys[x] == kq && r < q))
  while (lo + step < end && BEFORE_Q(lo + step - 1)) lo += step, step *= 2;
  hi = lo + step < end ? lo + step : end;
  while (lo < hi) { /* the first of [lo, hi) not before q's head */
    size_t m = lo + (hi - lo) / 2;
    if (BEFORE_Q(m)) lo = m + 1;
    else hi = m;
  }
#undef BEFORE_Q
  return lo;
}

/* Thread t's share: every run's bodies between its splitters, merged by a heap of the runs'
 * heads into the output from its first slot on, a block at a time: the top run's bodies up to
 * the next run's head go in one copy (most bodies stay with their worker from step to step, so
 * the own run comes in long blocks between a few bodies from the peers). */
static void merge_share(void *ctx, int t, int T) {
  (void)T;
  merge_job *j = ctx;
  int R = j->nruns, *heap = j->heap + (size_t)t * R, n = 0;
  const size_t *first = j->pos + (size_t)t * R, *end = first + R;
  size_t *h = j->head + (size_t)t * R, o = 0; /* (the next thread's first row is our end) */
  memcpy(h, first, (size_t)R * sizeof *h);
  for (int r = 0; r < R; r++) o += h[r] - j->pos[r];
  for (int r = 0; r < R; r++)
    if (h[r] < end[r]) heap[n++] = r;
  for (int i = n / 2; i-- > 0;) sift_down(j->keys, h, heap, n, i);
  bool unsorted = false;
  while (n > 0) {
    int r = heap[0];
    size_t i = h[r], e = end[r];
    if (n > 1) { /* up to the smaller child's head: the next run's turn */
      int q = n > 2 && head_before(j->keys, h, heap[2], heap[1]) ? heap[2] : heap[1];
      e = block_end(j->keys, i, e, r, j->keys[h[q]], q);
    }
    memcpy(j->out + o, j->b + i, (e - i) * sizeof *j->out);
    memcpy(j->out_keys + o, j->keys + i, (e - i) * sizeof *j->out_keys);
    /* a run out of order shows inside some block: where one block ends, the next body of the
     * run comes after q's head, and the block's last body before it */
    for (size_t x = i + 1; x < e; x++) unsorted |= j->keys[x] < j->keys[x - 1];
    o += e - i;
    h[r] = e;
    if (e == end[r]) heap[0] = heap[--n];
    sift_down(j->keys, h, heap, n, 0);
  }
  if (unsorted) atomic_store_explicit(&j->unsorted, true, memory_order_relaxed);
}

/* The first index of [a, z) with keys[i] >= k. */
static size_t lower_bound(const uint64_t *keys, size_t a, size_t z, uint64_t k) {
  while (a < z) {
    size_t m = a + (z - a) / 2;
    if (keys[m] < k) a = m + 1;
    else z = m;
  }
  return a;
}

/* Each thread's first body in each run: the splitters are the longest run's T-quantile keys,
 * every run cut at the first key not below them (equal keys stay with one thread). */
static void merge_splits(merge_job *j, int T) {
  int R = j->nruns, longest = 0;
  for (int r = 1; r < R; r++)
    if (j->at[r + 1] - j->at[r] > j->at[longest + 1] - j->at[longest]) longest = r;
  size_t la = j->at[longest], ln = j->at[longest + 1] - la;
  for (int r = 0; r < R; r++) {
    j->pos[r] = j->at[r];
    j->pos[(size_t)T * R + r] = j->at[r + 1];
  }
  for (int t = 1; t < T; t++) {
    uint64_t split = j->keys[la + ln * (size_t)t / (size_t)T];
    for (int r = 0; r < R; r++) {
      size_t from = j->pos[(size_t)(t - 1) * R + r]; /* the splitters do not decrease */
      j->pos[(size_t)t * R + r] = lower_bound(j->keys, from, j->at[r + 1], split);
    }
  }
}

typedef struct order_job {
  const uint64_t *keys;
  size_t n;
  atomic_bool unsorted;
} order_job;

/* Thread t's keys, and the one before them, in order? */
static void order_check(void *ctx, int t, int T) {
  order_job *j = ctx;
  size_t a, z;
  bh_share(j->n, t, T, &a, &z);
  bool unsorted = false;
  for (size_t i = a ? a : 1; i < z; i++) unsorted |= j->keys[i] < j->keys[i - 1];
  if (unsorted) atomic_store_explicit(&j->unsorted, true, memory_order_relaxed);
}

int bh_merge_runs_team(const bh_body *b, const uint64_t *keys, const size_t *at, int nruns,
                       bh_body *out, uint64_t *out_keys, bh_team *team) {
  if (nruns < 1) return 2;
  int T = bh_team_size(team);
  if (at[nruns] - at[0] < 2 * SORT_BUCKETS) T = 1, team = NULL; /* too few to share */
  double t0 = bench_now_ns();
  order_job o = {.keys = keys, .n = at[nruns]};
  atomic_init(&o.unsorted, false);
  bh_team_run(team, order_check, &o);
  if (!atomic_load(&o.unsorted)) { /* (two workers' runs, often: each gains at its edges) */
    stage_lap(BH_SORT_MERGE, &t0);
    return 2;
  }
  merge_job j = {.b = b, .keys = keys, .at = at, .nruns = nruns, .out = out, .out_keys = out_keys};
  j.pos = malloc(((size_t)T + 1) * (size_t)nruns * sizeof *j.pos);
  j.head = malloc((size_t)T * (size_t)nruns * sizeof *j.head);
  j.heap = malloc((size_t)T * (size_t)nruns * sizeof *j.heap);
  int rc = -1;
  if (j.pos && j.head && j.heap) {
    atomic_init(&j.unsorted, false);
    merge_splits(&j, T);
    bh_team_run(team, merge_share, &j);
    stage_lap(BH_SORT_MERGE, &t0);
    rc = atomic_load(&j.unsorted) ? 1 : 0;
  }
  free(j.pos), free(j.head), free(j.heap);
  return rc;
}

/* test_transfer.c: the GAS mapping, same-host GAS sharing and range transfers between two
 * ranks (src/worker: gas.c, share.c, transfer.c; protocol v2, transfer.h).
 *
 * Phase 1, private GAS (gas_map): rank 0 builds a linked list (10,000 nodes of 256 B) and a
 * binary search tree (3,000 nodes of 64 B) in its GAS, bump-placing nodes round-robin over
 * three disjoint arenas with real pointers between them, and sends the three arenas (copy
 * mode, the directory's address as a handle word); rank 1 traverses both by pointer, checks
 * data and addresses, modifies every node and sends them back; rank 0 checks the changes.
 * Handle words arrive intact (also with no ranges at all). One transfer mixes thousands of
 * short ranges (staging messages, more than TRANSFER_WINDOW data messages) with long ones
 * (direct messages, one longer than TRANSFER_STAGE_MAX); every byte is checked, and the gaps
 * between the ranges must stay untouched.
 * Then the wrong-usage cases: ranges outside the GAS, overlapping, empty; forged list messages
 * (bad magic or version, shorter than a header, count, total, framing, mode); shared mode to a
 * receiver that does not take it; an accept callback refusing a handle count; a sender that
 * gives up; transfer_refuse_pending. Each must be refused with its error code on the receiver
 * and, where the sender follows the protocol, ECONNREFUSED with that code on the sender; write
 * nothing into the receiver's GAS (a canary region); and leave the stream in step, which a
 * good transfer after each group proves.
 *
 * Phase 2, shared GAS (both ranks on one host): rank 0 creates a memfd, rank 1 opens it
 * through /proc/<pid>/fd, both map it with gas_map_shared: a TRANSFER_SHARED transfer hands
 * the list and tree over without a data message, and gas_release zeroes pages for both.
 * Phase 3: share_map_gas itself, shared and then private.
 *
 * Run: mpirun -np 2 test_transfer   (GAS base from ANTHEAP_GAS_BASE, else the build default)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "worker/gas.h"
#include "worker/share.h"
#include "worker/transfer.h"

#define TAG 7 /* and 8, 9 */
#define NLIST 10000
#define NTREE 3000
#define NARENA 3
#define ARENA_CAP ((size_t)4 << 20)
#define CANARY_LEN ((size_t)8 << 20)
#define DIR_MAGIC 0x7472616e73666572ull
#define SHARED_SIZE ((size_t)256 << 20)
#define WORLD MPI_COMM_WORLD

/* transfer_recv into separate variables, as the checks below read them: the handles and their
 * count, the list and its length, the sender (left as it was until a list has come). */
static int recv_parts(MPI_Comm comm, int peer, int tag, transfer_accept_fn accept, void *ctx,
                      uint64_t **x, uint32_t *nx, gas_range **r, size_t *n,
                      const gas_bounds *gas, int *src) {
  transfer_policy policy = {.accept = accept, .ctx = ctx, .gas = gas};
  transfer_receipt got = {.src = src ? *src : 0};
  int rc = transfer_recv((transfer_link){comm, peer, tag}, &policy, &got);
  *x = got.extra;
  *nx = got.nextra;
  *r = got.r;
  *n = got.n;
  if (src) *src = got.src;
  return rc;
}

static int rank;
static uintptr_t gas_base;
static size_t gas_size;
/* Arena offsets: in the private GAS (64 GiB) spread far apart, in the shared one (256 MiB)
 * closer. */
static const size_t private_arena_off[NARENA] = {(size_t)1 << 20, (size_t)256 << 20, (size_t)4 << 30};
static const size_t shared_arena_off[NARENA] = {(size_t)1 << 20, (size_t)64 << 20, (size_t)128 << 20};
static const size_t *arena_off = private_arena_off;
static const size_t canary_off = (size_t)1 << 30;
static const size_t plan_off = (size_t)2 << 30; /* the data plan case's area */

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", rank, __func__, __LINE__, #cond); \
      return false;                                                                          \
    }                                                                                        \
  } while (0)

/* ---- the structures ------------------------------------------------------------------ */

typedef struct lnode {
  struct lnode *next;
  uintptr_t self; /* its own address, as placed on rank 0 */
  uint64_t idx;
  uint64_t gen; /* 0 as built, 1 after rank 1's changes */
  unsigned char payload[224];
} lnode;
_Static_assert(sizeof(lnode) == 256, "list nodes are 256 B");

typedef struct tnode {
  struct tnode *left, *right;
  uintptr_t self;
  uint64_t key, value, gen, pad[2];
} tnode;
_Static_assert(sizeof(tnode) == 64, "tree nodes are 64 B");

typedef struct directory { /* at the start of arena 0: where the structures begin */
  uint64_t magic;
  lnode *head;
  tnode *root;
  uint64_t nlist, ntree;
} directory;

typedef struct arena {
  uintptr_t start, cur;
} arena;

static uintptr_t canary(void) { return gas_base + canary_off; }
static directory *the_directory(void) { return (directory *)(gas_base + arena_off[0]); }

static void arenas_init(arena *a) {
  for (int k = 0; k < NARENA; k++) a[k].start = a[k].cur = gas_base + arena_off[k];
}

/* Bump placement: the i-th object goes to arena i % 3. */
static void *place(arena *a, size_t i, size_t size) {
  arena *ar = &a[i % NARENA];
  void *p = (void *)ar->cur;
  ar->cur += size;
  if (ar->cur > ar->start + ARENA_CAP) abort(); /* the test's own sizing error */
  return p;
}

static unsigned char payload_byte(uint64_t idx, size_t j, uint64_t gen) {
  return (unsigned char)(idx * 31 + j + gen);
}

static lnode *build_list(arena *a) {
  lnode *head = NULL, **tail = &head;
  for (size_t i = 0; i < NLIST; i++) {
    lnode *n = place(a, i, sizeof *n);
    *n = (lnode){.self = (uintptr_t)n, .idx = i};
    for (size_t j = 0; j < sizeof n->payload; j++) n->payload[j] = payload_byte(i, j, 0);
    *tail = n;
    tail = &n->next;
  }
  return head;
}

static tnode *build_tree(arena *a) {
  tnode *root = NULL;
  uint64_t s = 88172645463325252ull;
  for (size_t i = 0; i < NTREE;) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    uint64_t key = s % 1000000007ull;
    tnode **at = &root;
    while (*at && (*at)->key != key) at = key < (*at)->key ? &(*at)->left : &(*at)->right;
    if (*at) continue; /* duplicate key */
    tnode *n = place(a, i + 1, sizeof *n); /* shifted: list and tree interleave differently */
    *n = (tnode){.self = (uintptr_t)n, .key = key, .value = key * 3};
    *at = n;
    i++;
  }
  return root;
}

/* Rank 0: build both structures over the three arenas; out: the arenas as ranges. */
static void build_structures(gas_range *out) {
  arena a[NARENA];
  arenas_init(a);
  directory *d = place(a, 0, sizeof(directory) + 64 - sizeof(directory) % 64);
  d->head = build_list(a);
  d->root = build_tree(a);
  d->nlist = NLIST, d->ntree = NTREE, d->magic = DIR_MAGIC;
  for (int k = 0; k < NARENA; k++) out[k] = (gas_range){a[k].start, a[k].cur - a[k].start};
}

static bool in_ranges(const gas_range *r, size_t n, const void *p, size_t len) {
  for (size_t i = 0; i < n; i++)
    if ((uintptr_t)p >= r[i].addr && (uintptr_t)p + len <= r[i].addr + r[i].len) return true;
  return false;
}

/* Walk the list: count, order, self addresses inside the received ranges, payload. */
static bool check_list(const directory *d, const gas_range *r, size_t n, uint64_t gen) {
  size_t i = 0;
  for (const lnode *x = d->head; x; x = x->next, i++) {
    CHECK(i < NLIST);
    CHECK(in_ranges(r, n, x, sizeof *x));
    CHECK(x->self == (uintptr_t)x && x->idx == i && x->gen == gen);
    for (size_t j = 0; j < sizeof x->payload; j++) CHECK(x->payload[j] == payload_byte(i, j, gen));
  }
  CHECK(i == NLIST);
  return true;
}

/* In-order walk of the tree: keys ascending, values, addresses; counts nodes in *count. */
static bool check_tree(const tnode *t, const gas_range *r, size_t n, uint64_t gen,
                       uint64_t *last, size_t *count) {
  if (!t) return true;
  CHECK(in_ranges(r, n, t, sizeof *t) && t->self == (uintptr_t)t);
  if (!check_tree(t->left, r, n, gen, last, count)) return false;
  CHECK(*count == 0 || t->key > *last);
  CHECK(t->value == t->key * 3 + gen && t->gen == gen);
  *last = t->key;
  (*count)++;
  return check_tree(t->right, r, n, gen, last, count);
}

static bool check_structures(const gas_range *r, size_t n, uint64_t gen) {
  const directory *d = the_directory();
  CHECK(in_ranges(r, n, d, sizeof *d));
  CHECK(d->magic == DIR_MAGIC && d->nlist == NLIST && d->ntree == NTREE);
  if (!check_list(d, r, n, gen)) return false;
  uint64_t last = 0;
  size_t count = 0;
  if (!check_tree(d->root, r, n, gen, &last, &count)) return false;
  CHECK(count == NTREE);
  return true;
}

static void modify_tree(tnode *t) {
  if (!t) return;
  t->value++;
  t->gen = 1;
  modify_tree(t->left);
  modify_tree(t->right);
}

static void modify_structures(void) {
  directory *d = the_directory();
  for (lnode *x = d->head; x; x = x->next) {
    x->gen = 1;
    for (size_t j = 0; j < sizeof x->payload; j++) x->payload[j]++;
  }
  modify_tree(d->root);
}

/* ---- accept callbacks ------------------------------------------------------------------- */

/* What a receiver takes: shared mode or not (and the code it refuses shared mode with), the
 * handle count it expects (-1: any). Records what it was shown. */
typedef struct policy {
  bool shared_ok;
  int shared_refusal; /* refuse shared mode with this (when !shared_ok) */
  int want_nextra;    /* -1: any */
  int calls, src;
  transfer_mode mode;
  uint32_t nextra;
  uint64_t extra[8];
} policy;

static int accept_policy(void *ctx, int src, transfer_mode mode, const uint64_t *extra,
                         uint32_t nextra) {
  policy *p = ctx;
  p->calls++;
  p->src = src;
  p->mode = mode;
  p->nextra = nextra;
  for (uint32_t i = 0; i < nextra && i < 8; i++) p->extra[i] = extra[i];
  if (mode == TRANSFER_SHARED && !p->shared_ok) return p->shared_refusal;
  if (p->want_nextra >= 0 && nextra != (uint32_t)p->want_nextra) return EINVAL;
  return 0;
}

/* ---- phase 1: private GAS --------------------------------------------------------------- */

static gas_range sent[NARENA]; /* rank 0: what it sent */
static gas_range *got;         /* rank 1: what it received */
static size_t ngot;

static bool test_gas_contains_is_overflow_safe(void) {
  gas_bounds g = {0x100000, 0x100000};
  CHECK(gas_bounds_contains(&g, 0x100000, 0x100000));
  CHECK(gas_bounds_contains(&g, 0x1fffff, 1));
  CHECK(!gas_bounds_contains(&g, 0x200000, 1));
  CHECK(!gas_bounds_contains(&g, 0xfffff, 2));
  CHECK(!gas_bounds_contains(&g, 0x100000, 0));
  CHECK(!gas_bounds_contains(&g, 0x180000, SIZE_MAX));
  CHECK(!gas_bounds_contains(&g, UINTPTR_MAX - 8, 100));
  CHECK(!gas_bounds_contains(NULL, 0x100000, 1));
  CHECK(!gas_contains(0x100000, 1)); /* nothing mapped yet */
  CHECK(!gas_is_shared());
  CHECK(gas_release(0x100000, 4096) == EINVAL);
  CHECK(gas_unmap() == EINVAL);
  return true;
}

/* Long ranges go in pieces only where MPI uses shared memory between the two processes. */
static bool test_the_shared_memory_path_is_read_from_the_environment(void) {
  const char *btl = getenv("OMPI_MCA_btl"), *ucx = getenv("UCX_TLS");
  char *saved_btl = btl ? strdup(btl) : NULL, *saved_ucx = ucx ? strdup(ucx) : NULL;
  static const struct {
    const char *btl, *ucx;
    bool shm;
  } cases[] = {{NULL, NULL, true},           {"tcp,self", NULL, false},
               {"self,vader", NULL, true},   {"^tcp", NULL, true},
               {"^vader,sm,smcuda", NULL, false}, {"sm,self", NULL, true},
               {NULL, "tcp,self", false},    {NULL, "sm,tcp", true},
               {NULL, "^tcp", true},         {"vader,self", "tcp", false}};
  bool ok = true;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    if (cases[i].btl) setenv("OMPI_MCA_btl", cases[i].btl, 1);
    else unsetenv("OMPI_MCA_btl");
    if (cases[i].ucx) setenv("UCX_TLS", cases[i].ucx, 1);
    else unsetenv("UCX_TLS");
    if (transfer_host_uses_shm() != cases[i].shm) {
      fprintf(stderr, "rank %d: shared-memory path case %zu wrong\n", rank, i);
      ok = false;
    }
  }
  if (saved_btl) setenv("OMPI_MCA_btl", saved_btl, 1);
  else unsetenv("OMPI_MCA_btl");
  if (saved_ucx) setenv("UCX_TLS", saved_ucx, 1);
  else unsetenv("UCX_TLS");
  free(saved_btl);
  free(saved_ucx);
  return ok;
}

static bool test_gas_map_over_a_mapping_is_eexist(void) {
  size_t len = (size_t)2 << 20;
  void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED);
  char err[512] = "";
  int rc = gas_map((uintptr_t)p, len, err, sizeof err);
  munmap(p, len);
  CHECK(rc == EEXIST);
  /* the settings that exist (config.c), not options that do not */
  CHECK(strstr(err, "ANTHEAP_GAS_BASE=") && strstr(err, "ANTHEAP_GAS_SIZE_MIB="));
  CHECK(!strstr(err, "--antheap-gas"));
  CHECK(gas_current() == NULL);
  CHECK(gas_map(0x100001, 4096, err, sizeof err) == EINVAL);
  CHECK(gas_map_shared(0x100000, 4096, -1, err, sizeof err) == EINVAL);
  CHECK(gas_current() == NULL);
  return true;
}

static bool test_gas_map_twice_is_ebusy(void) {
  char err[512] = "";
  CHECK(gas_current() && gas_current()->base == gas_base && gas_current()->size == gas_size);
  CHECK(!gas_is_shared());
  CHECK(gas_map(gas_base + gas_size, 1 << 20, err, sizeof err) == EBUSY);
  CHECK(strstr(err, "already mapped"));
  CHECK(gas_current()->base == gas_base);
  return true;
}

static bool test_list_and_tree_arrive_at_the_same_addresses(void) {
  if (rank == 0) {
    build_structures(sent);
    uint64_t dir = (uint64_t)(uintptr_t)the_directory();
    int refusal = -1;
    CHECK(transfer_send((transfer_link){WORLD, 1, TAG}, TRANSFER_COPY, false,
        &(transfer_list){&dir, 1, sent, NARENA}, &refusal) == 0);
    CHECK(refusal == 0);
    return true;
  }
  uint64_t *x = NULL;
  uint32_t nx = 0;
  int src = -1;
  CHECK(recv_parts(WORLD, 0, TAG, NULL, NULL, &x, &nx, &got, &ngot, NULL, &src) == 0);
  bool handle = nx == 1 && x && x[0] == (uint64_t)(uintptr_t)the_directory();
  free(x);
  CHECK(handle && src == 0);
  CHECK(ngot == NARENA);
  for (int k = 0; k < NARENA; k++) CHECK(got[k].addr == gas_base + arena_off[k]);
  return check_structures(got, ngot, 0);
}

static bool test_modified_structures_come_back(void) {
  if (rank == 1) {
    modify_structures();
    CHECK(transfer_send((transfer_link){WORLD, 0, TAG}, TRANSFER_COPY, false,
        &(transfer_list){NULL, 0, got, ngot}, NULL) == 0);
    free(got);
    got = NULL;
    return true;
  }
  gas_range *r;
  size_t n;
  uint64_t *x;
  uint32_t nx;
  CHECK(recv_parts(WORLD, 1, TAG, NULL, NULL, &x, &nx, &r, &n, NULL, NULL) == 0);
  bool same = n == NARENA && memcmp(r, sent, sizeof sent) == 0 && !x && nx == 0;
  free(r);
  CHECK(same);
  return check_structures(sent, NARENA, 1);
}

static bool test_empty_transfer_sends_the_list_message_only(void) {
  if (rank == 0) return transfer_send((transfer_link){WORLD, 1, TAG}, TRANSFER_COPY, false,
      &(transfer_list){NULL, 0, NULL, 0}, NULL) == 0;
  gas_range *r = (gas_range *)1;
  size_t n = 99;
  uint64_t *x = (uint64_t *)1;
  uint32_t nx = 99;
  CHECK(recv_parts(WORLD, 0, TAG, NULL, NULL, &x, &nx, &r, &n, NULL, NULL) == 0);
  CHECK(r == NULL && n == 0 && x == NULL && nx == 0);
  return true;
}

static const uint64_t handle_words[5] = {0, UINT64_MAX, 0x0123456789abcdefull, 42,
                                        0x8000000000000000ull};

static bool test_handles_without_ranges_arrive_intact(void) {
  if (rank == 0) {
    int refusal = -1;
    CHECK(transfer_send((transfer_link){WORLD, 1, TAG}, TRANSFER_COPY, false,
        &(transfer_list){handle_words, 5, NULL, 0}, &refusal) == 0);
    CHECK(refusal == 0);
    return true;
  }
  policy p = {.want_nextra = 5};
  gas_range *r = (gas_range *)1;
  size_t n = 99;
  uint64_t *x = NULL;
  uint32_t nx = 0;
  int src = -1;
  CHECK(recv_parts(WORLD, MPI_ANY_SOURCE, TAG, accept_policy, &p, &x, &nx, &r, &n, NULL, &src) == 0);
  bool same = nx == 5 && x && memcmp(x, handle_words, sizeof handle_words) == 0;
  free(x);
  CHECK(same && r == NULL && n == 0 && src == 0);
  CHECK(p.calls == 1 && p.src == 0 && p.mode == TRANSFER_COPY && p.nextra == 5);
  CHECK(memcmp(p.extra, handle_words, sizeof handle_words) == 0);
  return true;
}

/* ---- the data plan: thousands of short ranges, some long ones --------------------------- */

static uint64_t rng_state;
static uint64_t rnd(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return rng_state;
}

static unsigned char pattern(uintptr_t a, unsigned seed) {
  uint64_t x = (a + seed) * 0x9E3779B97F4A7C15ull;
  return (unsigned char)(x >> 56);
}

#define GAP_BYTE 0xA5
#define PLAN_MAX 20000

/* Both ranks build the same list, deterministically: 14 runs of short ranges (64 B..4 KiB,
 * sometimes touching, two runs far longer than a staging message), each followed by a long
 * range (256 KiB..1 MiB; one of TRANSFER_STAGE_MAX + 12345 B), plus ranges one byte short of
 * and exactly TRANSFER_DIRECT_MIN. Some entries swapped, so the list is not in address order.
 * Returns the count; *end: the end of the last range. */
static size_t plan_ranges(gas_range *r, uintptr_t *end) {
  rng_state = 0x2545F4914F6CDD1Dull;
  uintptr_t pos = gas_base + plan_off;
  size_t n = 0;
  for (int g = 0; g < 14; g++) {
    size_t shorts = g == 3 || g == 9 ? 3000 : 300 + rnd() % 300;
    for (size_t i = 0; i < shorts; i++) {
      size_t len = 64 + rnd() % (4096 - 64 + 1);
      r[n++] = (gas_range){pos, len};
      pos += len + (rnd() % 3 == 0 ? 0 : rnd() % 256);
    }
    size_t len = g == 5 ? TRANSFER_STAGE_MAX + 12345 : ((size_t)256 << 10) + rnd() % ((size_t)768 << 10);
    r[n++] = (gas_range){pos, len};
    pos += len + rnd() % 4096;
    if (g == 7) {
      r[n++] = (gas_range){pos, TRANSFER_DIRECT_MIN - 1};
      pos += TRANSFER_DIRECT_MIN - 1;
      r[n++] = (gas_range){pos, TRANSFER_DIRECT_MIN};
      pos += TRANSFER_DIRECT_MIN + 1;
    }
  }
  for (size_t k = 0; k < n / 20; k++) { /* swap some pairs */
    size_t i = rnd() % n, j = rnd() % n;
    gas_range t = r[i];
    r[i] = r[j];
    r[j] = t;
  }
  *end = pos;
  return n;
}

/* The plan as transfer.h describes it: how many data messages, how many staged. */
static void count_messages(const gas_range *r, size_t n, size_t *msgs, size_t *staged) {
  *msgs = *staged = 0;
  for (size_t i = 0; i < n;) {
    if (r[i].len >= TRANSFER_DIRECT_MIN) {
      ++*msgs, i++;
      continue;
    }
    size_t bytes = 0;
    while (i < n && r[i].len < TRANSFER_DIRECT_MIN && bytes + r[i].len <= TRANSFER_STAGE_MAX)
      bytes += r[i++].len;
    ++*msgs, ++*staged;
  }
}

static int cmp_range(const void *a, const void *b) {
  const gas_range *x = a, *y = b;
  return (x->addr > y->addr) - (x->addr < y->addr);
}

static void fill_ranges(const gas_range *r, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < r[i].len; j++) ((unsigned char *)r[i].addr)[j] = pattern(r[i].addr + j, seed);
}

/* Every byte of the ranges holds the pattern, every byte between them GAP_BYTE. */
static bool check_plan_area(const gas_range *r, size_t n, uintptr_t end, unsigned seed) {
  gas_range *s = malloc(n * sizeof *s);
  CHECK(s);
  memcpy(s, r, n * sizeof *s);
  qsort(s, n, sizeof *s, cmp_range);
  uintptr_t at = gas_base + plan_off;
  size_t bad = 0;
  for (size_t i = 0; i <= n; i++) {
    uintptr_t stop = i < n ? s[i].addr : end;
    for (; at < stop; at++) bad += *(unsigned char *)at != GAP_BYTE;
    if (i == n) break;
    for (; at < s[i].addr + s[i].len; at++) bad += *(unsigned char *)at != pattern(at, seed);
  }
  free(s);
  if (bad) fprintf(stderr, "rank %d: %zu wrong bytes in the plan area\n", rank, bad);
  CHECK(bad == 0);
  return true;
}

static bool test_short_and_long_ranges_arrive_byte_for_byte(void) {
  static gas_range r[PLAN_MAX];
  uintptr_t end;
  size_t n = plan_ranges(r, &end);
  CHECK(n <= PLAN_MAX);
  size_t msgs, staged;
  count_messages(r, n, &msgs, &staged);
  CHECK(msgs > 2 * TRANSFER_WINDOW && staged > TRANSFER_WINDOW && msgs - staged >= 14);
  uintptr_t area = gas_base + plan_off;
  /* There and back (rank 0 -> rank 1, then back), twice: long ranges whole, then in pieces
   * (near: the plan of a move of this size cuts the range longer than 4 MiB in two). */
  for (int leg = 0; leg < 4; leg++) {
    int from = leg % 2, to = 1 - from;
    bool near = leg >= 2;
    unsigned seed = (unsigned)leg + 1;
    uint64_t words[3] = {n, end, seed};
    if (rank == to) memset((void *)area, GAP_BYTE, end - area);
    MPI_Barrier(WORLD);
    if (rank == from) {
      fill_ranges(r, n, seed);
      int refusal = -1;
      CHECK(transfer_send((transfer_link){WORLD, to, TAG}, TRANSFER_COPY, near,
          &(transfer_list){words, 3, r, n}, &refusal) == 0);
      CHECK(refusal == 0);
      continue;
    }
    policy p = {.want_nextra = 3};
    gas_range *rr;
    size_t nn;
    uint64_t *x;
    uint32_t nx;
    CHECK(recv_parts(WORLD, from, TAG, accept_policy, &p, &x, &nx, &rr, &nn, NULL, NULL) == 0);
    bool same = nn == n && memcmp(rr, r, n * sizeof *r) == 0 && nx == 3 &&
                memcmp(x, words, sizeof words) == 0;
    free(rr);
    free(x);
    CHECK(same);
    if (!check_plan_area(r, n, end, seed)) return false;
  }
  return true;
}

/* A small move to a peer reached through shared memory: its 300 KiB range goes in two pieces
 * (and whole with ANTHEAP_XFER_PLAN=whole); either way the bytes of the ranges arrive and the
 * gaps between them stay as they were. */
static bool test_a_small_move_arrives_in_pieces_or_whole(void) {
  uintptr_t base = gas_base + plan_off;
  gas_range r[5] = {{base + 100, 3000},       {base + 8192, (size_t)300 << 10},
                    {base + (1u << 20), 64},  {base + (1u << 20) + 4096, (size_t)70 << 10},
                    {base + (2u << 20), 1}};
  uintptr_t end = base + (3u << 20);
  for (int leg = 0; leg < 2; leg++) {
    unsigned seed = 7 + (unsigned)leg;
    if (leg == 1) setenv("ANTHEAP_XFER_PLAN", "whole", 1);
    if (rank == 1) memset((void *)base, GAP_BYTE, end - base);
    MPI_Barrier(WORLD);
    if (rank == 0) {
      fill_ranges(r, 5, seed);
      CHECK(transfer_send((transfer_link){WORLD, 1, TAG}, TRANSFER_COPY, true,
          &(transfer_list){NULL, 0, r, 5}, NULL) == 0);
    } else {
      gas_range *got_r;
      size_t n;
      uint64_t *x;
      uint32_t nx;
      CHECK(recv_parts(WORLD, 0, TAG, NULL, NULL, &x, &nx, &got_r, &n, NULL, NULL) == 0);
      bool same = n == 5 && memcmp(got_r, r, sizeof r) == 0;
      free(got_r);
      CHECK(same);
      if (!check_plan_area(r, 5, end, seed)) return false;
    }
    unsetenv("ANTHEAP_XFER_PLAN");
  }
  return true;
}

/* ---- wrong usage: refused, nothing written, the stream in step --------------------------- */

/* Rank 0's canary holds 0x5A, rank 1's 0xA5: a refused transfer must leave 0xA5. */
static void fill_canary(void) { memset((void *)canary(), rank == 0 ? 0x5A : 0xA5, CANARY_LEN); }
static bool canary_intact(void) {
  const unsigned char *c = (const unsigned char *)canary();
  for (size_t i = 0; i < CANARY_LEN; i++)
    if (c[i] != 0xA5) return false;
  return true;
}

/* Rank 1's side of a refused transfer: the error code, nothing returned, the canary
 * untouched. */
static bool recv_refused(int want, transfer_accept_fn accept, void *ctx, const gas_bounds *g) {
  gas_range *r = (gas_range *)1;
  size_t n = 99;
  uint64_t *x = (uint64_t *)1;
  uint32_t nx = 99;
  int src = -1;
  int rc = recv_parts(WORLD, 0, TAG, accept, ctx, &x, &nx, &r, &n, g, &src);
  if (rc != want) fprintf(stderr, "rank 1: expected error %d, got %d\n", want, rc);
  CHECK(rc == want && r == NULL && n == 0 && x == NULL && nx == 0 && src == 0);
  CHECK(canary_intact());
  return true;
}

/* Rank 0's side of a transfer the receiver refuses with why. */
static bool send_refused(int why, transfer_mode mode, const uint64_t *x, uint32_t nx,
                         const gas_range *r, size_t n) {
  int refusal = -1;
  int rc = transfer_send((transfer_link){WORLD, 1, TAG}, mode, false,
      &(transfer_list){x, nx, r, n}, &refusal);
  if (rc != ECONNREFUSED || refusal != why)
    fprintf(stderr, "rank 0: expected ECONNREFUSED/%d, got %d/%d\n", why, rc, refusal);
  CHECK(rc == ECONNREFUSED && refusal == why);
  return true;
}

/* Rank 0's side of a list it cannot send: err, no refusal; the receiver gets ECANCELED. */
static bool send_fails(int err, transfer_mode mode, const uint64_t *x, uint32_t nx,
                       const gas_range *r, size_t n) {
  int refusal = -1;
  int rc = transfer_send((transfer_link){WORLD, 1, TAG}, mode, false,
      &(transfer_list){x, nx, r, n}, &refusal);
  if (rc != err) fprintf(stderr, "rank 0: expected %d, got %d\n", err, rc);
  CHECK(rc == err && refusal == 0);
  return true;
}

/* A good transfer over the canary: the stream is in step, and data still lands. */
static unsigned good_round;
static bool good_transfer(void) {
  unsigned seed = 100 + good_round++;
  gas_range r[2] = {{canary() + 4096, 100}, /* staged */
                    {canary() + CANARY_LEN - 3 * TRANSFER_DIRECT_MIN, 2 * TRANSFER_DIRECT_MIN}};
  if (rank == 0) {
    fill_ranges(r, 2, seed);
    uint64_t w = seed;
    CHECK(transfer_send((transfer_link){WORLD, 1, TAG}, TRANSFER_COPY, false,
        &(transfer_list){&w, 1, r, 2}, NULL) == 0);
    return true;
  }
  gas_range *rr;
  size_t n;
  uint64_t *x;
  uint32_t nx;
  CHECK(recv_parts(WORLD, 0, TAG, NULL, NULL, &x, &nx, &rr, &n, NULL, NULL) == 0);
  bool shape = n == 2 && memcmp(rr, r, sizeof r) == 0 && nx == 1 && x[0] == seed;
  free(rr);
  free(x);
  CHECK(shape);
  for (int k = 0; k < 2; k++)
    for (size_t j = 0; j < r[k].len; j++)
      CHECK(((unsigned char *)r[k].addr)[j] == pattern(r[k].addr + j, seed));
  const unsigned char *c = (const unsigned char *)canary();
  CHECK(c[4095] == 0xA5 && c[4096 + 100] == 0xA5);
  fill_canary();
  return true;
}

/* Rank 0 sends a hand-made list message of list_bytes (header, then the words at body). */
static void forge(transfer_header h, const void *body, size_t body_len, size_t list_bytes) {
  unsigned char buf[512] = {0};
  memcpy(buf, &h, sizeof h);
  if (body_len) memcpy(buf + sizeof h, body, body_len);
  MPI_Send(buf, (int)list_bytes, MPI_BYTE, 1, TAG, WORLD);
}

/* The answer a forged list gets (the forger follows the protocol from there on). */
static int32_t forged_answer(void) {
  int32_t a = -1;
  MPI_Recv(&a, 1, MPI_INT32_T, 1, TAG + 1, WORLD, MPI_STATUS_IGNORE);
  return a;
}

static transfer_header header(uint32_t nextra, uint64_t count, uint64_t total) {
  return (transfer_header){.magic = TRANSFER_MAGIC, .version = TRANSFER_VERSION,
                           .mode = TRANSFER_COPY, .nextra = nextra, .count = count, .total = total};
}

#define HS sizeof(transfer_header)
#define WS sizeof(transfer_wire_range)

static bool test_range_outside_the_gas_is_einval_and_writes_nothing(void) {
  fill_canary();
  policy p = {.want_nextra = -1};
  transfer_wire_range past_end = {gas_base + gas_size - 4096, 8192};
  transfer_wire_range before = {gas_base - 4096, 8192};
  transfer_wire_range big_outside = {0x1000, (uint64_t)8 << 20}; /* long: a direct message */
  if (rank == 1) {
    /* the sender's own check: its data would leave before the answer (transfer.h) */
    for (int i = 0; i < 4; i++)
      if (!recv_refused(ECANCELED, accept_policy, &p, NULL)) return false;
    /* the receiver's: lists forged past the sender's check */
    for (int i = 0; i < 3; i++)
      if (!recv_refused(EINVAL, accept_policy, &p, NULL)) return false;
    CHECK(p.calls == 0); /* the list checks come before accept */
    /* inside the GAS, outside the bounds the receiver passes: refused, its data discarded */
    gas_bounds part = {canary(), CANARY_LEN / 2};
    if (!recv_refused(EINVAL, NULL, NULL, &part)) return false;
    return good_transfer();
  }
  char *heap = malloc(4096);
  memset(heap, 1, 4096);
  gas_range heap_r[2] = {{canary(), 4096}, {(uintptr_t)heap, 4096}};
  gas_range sent_past_end = {(uintptr_t)past_end.addr, (size_t)past_end.len};
  gas_range sent_before = {(uintptr_t)before.addr, (size_t)before.len};
  gas_range sent_big = {(uintptr_t)big_outside.addr, (size_t)big_outside.len};
  bool ok = send_fails(EINVAL, TRANSFER_COPY, NULL, 0, heap_r, 2) &&
            send_fails(EINVAL, TRANSFER_COPY, NULL, 0, &sent_past_end, 1) &&
            send_fails(EINVAL, TRANSFER_COPY, NULL, 0, &sent_before, 1) &&
            send_fails(EINVAL, TRANSFER_COPY, NULL, 0, &sent_big, 1);
  free(heap);
  CHECK(ok);
  transfer_header h1 = header(0, 1, 8192), h8 = header(0, 1, (uint64_t)8 << 20);
  forge(h1, &past_end, WS, HS + WS);
  forge(h1, &before, WS, HS + WS);
  forge(h8, &big_outside, WS, HS + WS);
  for (int i = 0; i < 3; i++) CHECK(forged_answer() == EINVAL);
  gas_range beyond_half = {canary() + CANARY_LEN / 2 - 100, 200};
  if (!send_refused(EINVAL, TRANSFER_COPY, NULL, 0, &beyond_half, 1)) return false;
  return good_transfer();
}

static bool test_overlapping_ranges_are_einval_and_write_nothing(void) {
  fill_canary();
  if (rank == 1) {
    for (int i = 0; i < 3; i++)
      if (!recv_refused(EINVAL, NULL, NULL, NULL)) return false;
    return good_transfer();
  }
  gas_range unsorted[3] = {{canary() + 8192, 4096}, {canary(), 4096}, {canary() + 2048, 4096}};
  gas_range by_one_byte[2] = {{canary(), 4096}, {canary() + 4095, 1 << 20}};
  gas_range same_twice[3] = {{canary(), 64}, {canary() + 1000, 64}, {canary(), 64}};
  CHECK(send_refused(EINVAL, TRANSFER_COPY, NULL, 0, unsorted, 3));
  CHECK(send_refused(EINVAL, TRANSFER_COPY, NULL, 0, by_one_byte, 2));
  CHECK(send_refused(EINVAL, TRANSFER_COPY, NULL, 0, same_twice, 3));
  return good_transfer();
}

static bool test_lists_the_sender_cannot_send_are_ecanceled(void) {
  fill_canary();
  if (rank == 1) {
    for (int i = 0; i < 4; i++)
      if (!recv_refused(ECANCELED, NULL, NULL, NULL)) return false;
    return good_transfer();
  }
  gas_range empty[2] = {{canary(), 4096}, {canary() + 4096, 0}};
  gas_range wraps = {UINTPTR_MAX - 8, 100};
  gas_range fine = {canary(), 4096};
  CHECK(send_fails(EINVAL, TRANSFER_COPY, NULL, 0, empty, 2));            /* zero length */
  CHECK(send_fails(EINVAL, TRANSFER_COPY, NULL, 0, &wraps, 1));           /* wraps around */
  CHECK(send_fails(EINVAL, TRANSFER_COPY, NULL, 3, &fine, 1));            /* handles NULL */
  CHECK(send_fails(EINVAL, TRANSFER_COPY, NULL, 0, NULL, 2));             /* ranges NULL */
  return good_transfer();
}


static bool test_unreadable_headers_are_eproto_and_get_no_answer(void) {
  fill_canary();
  if (rank == 1) {
    for (int i = 0; i < 4; i++)
      if (!recv_refused(EPROTO, NULL, NULL, NULL)) {
        fprintf(stderr, "rank 1: unreadable header case %d\n", i);
        return false;
      }
    return good_transfer();
  }
  transfer_wire_range one = {canary(), 4096};
  transfer_header bad = header(0, 1, 4096);
  bad.magic ^= 1;
  forge(bad, &one, WS, HS + WS);               /* bad magic */
  bad = header(0, 1, 4096);
  bad.version = 1;
  forge(bad, &one, WS, HS + WS);               /* protocol v1 */
  forge(header(0, 1, 4096), &one, WS, HS - 8); /* shorter than a header, magic intact */
  forge(header(0, 0, 0), NULL, 0, 0);          /* an empty message */
  /* nobody answers these: the next transfer's answer is the next one on tag + 1 */
  return good_transfer();
}

static bool test_forged_lists_are_refused_and_answered(void) {
  fill_canary();
  static const int want[] = {EPROTO, EPROTO, EPROTO, EPROTO, EPROTO, EPROTO,
                             EINVAL, EINVAL, EPROTO, EPROTO, EPROTO, EPROTO};
  const int ncases = (int)(sizeof want / sizeof *want);
  if (rank == 1) {
    policy p = {.shared_ok = true, .want_nextra = -1};
    for (int i = 0; i < ncases; i++)
      if (!recv_refused(want[i], accept_policy, &p, NULL)) {
        fprintf(stderr, "rank 1: forged case %d\n", i);
        return false;
      }
    CHECK(p.calls == 0);
    return good_transfer();
  }
  transfer_wire_range one = {canary(), 4096};
  transfer_wire_range two[2] = {{canary(), 4096}, {canary() + 4096, 4096}};
  struct {
    uint64_t words[2];
    transfer_wire_range w;
  } handles_then_one = {{1, 2}, {canary(), 4096}};
  transfer_header mode7 = header(0, 1, 4096);
  mode7.mode = 7;
  transfer_wire_range zero = {canary(), 0};
  transfer_wire_range wraps = {UINT64_MAX - 100, 4096};
  forge(header(0, 1, 8192), &one, WS, HS + WS);         /* total does not match the lengths */
  forge(header(0, 2, 4096), &one, WS, HS + WS);         /* count says 2, the list holds 1 */
  forge(header(0, 1, 8192), two, 2 * WS, HS + 2 * WS);  /* count says 1, the list holds 2 */
  forge(header(0, 1, 4096), &one, WS, HS + WS + 8);     /* not whole records */
  forge(header(3, 1, 4096), &handles_then_one, 2 * 8 + WS, HS + 2 * 8 + WS); /* nextra */
  forge(mode7, &one, WS, HS + WS);                      /* no such mode */
  forge(header(0, 1, 0), &zero, WS, HS + WS);           /* an empty range */
  forge(header(0, 1, 4096), &wraps, WS, HS + WS);       /* wraps around */
  transfer_header many = header(0, (uint64_t)1 << 40, 4096);
  forge(many, &one, WS, HS + WS);                       /* an absurd count */
  transfer_header extra_max = header(TRANSFER_MAX_EXTRA + 1, 1, 4096);
  forge(extra_max, &one, WS, HS + WS);                  /* too many handles */
  transfer_header tiny = header(0, 1, 4096), huge = header(0, 1, 4096);
  tiny.piece = TRANSFER_PIECE_MIN_SHIFT - 1;
  huge.piece = TRANSFER_PIECE_MAX_SHIFT + 1;
  forge(tiny, &one, WS, HS + WS);                       /* pieces below the minimum */
  forge(huge, &one, WS, HS + WS);                       /* pieces above the maximum */
  for (int i = 0; i < ncases; i++) {
    int32_t a = forged_answer();
    if (a != want[i]) fprintf(stderr, "rank 0: forged case %d answered %d, not %d\n", i, a, want[i]);
    CHECK(a == want[i]);
  }
  return good_transfer();
}

static bool test_shared_mode_to_a_receiver_that_does_not_take_it_is_eproto(void) {
  fill_canary();
  gas_range r = {canary(), 4096};
  if (rank == 1) {
    policy no = {.shared_ok = false, .shared_refusal = EPROTO, .want_nextra = -1};
    if (!recv_refused(EPROTO, NULL, NULL, NULL)) return false;     /* no accept: copy only */
    if (!recv_refused(EPROTO, accept_policy, &no, NULL)) return false;
    CHECK(no.calls == 1 && no.mode == TRANSFER_SHARED && no.src == 0);
    return good_transfer();
  }
  CHECK(send_refused(EPROTO, TRANSFER_SHARED, NULL, 0, &r, 1));
  CHECK(send_refused(EPROTO, TRANSFER_SHARED, NULL, 0, &r, 1));
  return good_transfer();
}

static bool test_accept_refusing_a_handle_count_is_einval(void) {
  fill_canary();
  gas_range r[2] = {{canary(), 4096}, {canary() + (1 << 20), (size_t)2 << 20}};
  if (rank == 1) {
    policy p = {.want_nextra = 3};
    if (!recv_refused(EINVAL, accept_policy, &p, NULL)) return false;
    CHECK(p.calls == 1 && p.nextra == 2);
    CHECK(p.extra[0] == handle_words[1] && p.extra[1] == handle_words[2]);
    if (!recv_refused(EINVAL, accept_policy, &p, NULL)) return false; /* none at all */
    CHECK(p.calls == 2 && p.nextra == 0);
    return good_transfer();
  }
  CHECK(send_refused(EINVAL, TRANSFER_COPY, handle_words + 1, 2, r, 2));
  int rc = transfer_send((transfer_link){WORLD, 1, TAG}, TRANSFER_COPY, false,
      &(transfer_list){NULL, 0, r, 2}, NULL); /* refusal NULL */
  CHECK(rc == ECONNREFUSED);
  return good_transfer();
}

static bool test_abort_is_ecanceled(void) {
  fill_canary();
  if (rank == 1) {
    if (!recv_refused(ECANCELED, NULL, NULL, NULL)) return false;
    if (!recv_refused(ECANCELED, NULL, NULL, NULL)) return false;
    return good_transfer();
  }
  CHECK(transfer_send_abort((transfer_link){WORLD, 1, TAG}, ENOSPC) == ENOSPC);
  CHECK(transfer_send_abort((transfer_link){WORLD, 1, TAG}, 0) == 0);
  return good_transfer();
}

static bool test_refuse_pending_refuses_with_eshutdown(void) {
  fill_canary();
  gas_range r[2] = {{canary(), 4096}, {canary() + (1 << 20), (size_t)2 << 20}};
  if (rank == 1) {
    CHECK(transfer_refuse_pending(WORLD, TAG, 1, ESHUTDOWN) == 0); /* nothing sent yet */
    MPI_Barrier(WORLD);
    /* a list waiting for its answer: refused */
    while (!transfer_refuse_pending(WORLD, TAG, 1, ESHUTDOWN)) usleep(1000);
    CHECK(canary_intact());
    /* an abort (nobody waits) and an unreadable header are taken without an answer */
    while (!transfer_refuse_pending(WORLD, TAG, 1, ESHUTDOWN)) usleep(1000);
    while (!transfer_refuse_pending(WORLD, TAG, 1, ESHUTDOWN)) usleep(1000);
    MPI_Barrier(WORLD);
    CHECK(transfer_refuse_pending(WORLD, TAG, 1, ESHUTDOWN) == 0);
    CHECK(canary_intact());
    return good_transfer();
  }
  MPI_Barrier(WORLD);
  CHECK(send_refused(ESHUTDOWN, TRANSFER_COPY, handle_words, 2, r, 2));
  transfer_send_abort((transfer_link){WORLD, 1, TAG}, ECANCELED);
  transfer_header bad = header(0, 0, 0);
  bad.magic = 0;
  forge(bad, NULL, 0, HS);
  MPI_Barrier(WORLD);
  return good_transfer();
}

static bool test_release_on_a_private_gas_zeroes_only_here(void) {
  long page = sysconf(_SC_PAGESIZE);
  unsigned char *x = (unsigned char *)(canary() + CANARY_LEN - 4 * (size_t)page);
  memset(x, 0x77, 4 * (size_t)page);
  MPI_Barrier(WORLD);
  int rc = rank == 0 ? gas_release((uintptr_t)x + 100, 3 * (size_t)page) : 0;
  MPI_Barrier(WORLD);
  CHECK(rc == 0);
  for (long i = 0; i < 4 * page; i++) {
    bool released = rank == 0 && i >= page && i < 3 * page; /* the whole pages inside */
    CHECK(x[i] == (released ? 0 : 0x77));
  }
  CHECK(gas_release(gas_base + gas_size - 4096, 8192) == EINVAL);
  CHECK(gas_release((uintptr_t)x + 1, 10) == 0 && x[1] == 0x77); /* no whole page: nothing */
  fill_canary();
  return true;
}

/* Resident pages of [p, p + npages pages) (mincore). */
static long resident_pages(uintptr_t p, long npages) {
  unsigned char vec[64];
  long page = sysconf(_SC_PAGESIZE), n = 0;
  if (npages > 64 || mincore((void *)p, (size_t)(npages * page), vec)) return -1;
  for (long i = 0; i < npages; i++) n += vec[i] & 1;
  return n;
}

static bool test_populate_maps_once_until_released(void) {
  long page = sysconf(_SC_PAGESIZE);
  uintptr_t chunk = (uintptr_t)1 << 16, x = (canary() + chunk) & ~(chunk - 1);
  long n = (long)(2 * chunk) / page; /* two whole tracking chunks */
  CHECK(madvise((void *)x, 2 * chunk, MADV_DONTNEED) == 0);
  CHECK(resident_pages(x, n) == 0);
  gas_populate(x, 2 * chunk);
  CHECK(resident_pages(x, n) == n); /* mapped in one call */
  /* dropped behind gas_release's back: the chunks still count as mapped, the call is skipped */
  CHECK(madvise((void *)x, 2 * chunk, MADV_DONTNEED) == 0);
  gas_populate(x, 2 * chunk);
  CHECK(resident_pages(x, n) == 0);
  /* gas_release forgets them: the next call maps them again */
  CHECK(gas_release(x, chunk) == 0);
  gas_populate(x, 2 * chunk);
  CHECK(resident_pages(x, n) == n / 2); /* the released chunk only */
  CHECK(gas_release(x, 2 * chunk) == 0);
  gas_populate(x + 100, 10); /* a part of a chunk: mapped (its page), the chunk not marked */
  CHECK(resident_pages(x, n) == 1);
  CHECK(madvise((void *)x, page, MADV_DONTNEED) == 0);
  gas_populate(x + 100, 10);
  CHECK(resident_pages(x, n) == 1);
  fill_canary();
  return true;
}

/* ---- phase 2: one memfd, mapped shared by both ranks -------------------------------------- */

static bool same_host(void) {
  MPI_Comm host;
  int hs;
  MPI_Comm_split_type(WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  MPI_Comm_size(host, &hs);
  MPI_Comm_free(&host);
  return hs == 2;
}

static bool all_ranks(bool ok) {
  int mine = ok, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, WORLD);
  return all;
}

/* Unmap the private GAS; rank 0 makes a memfd, rank 1 opens it through /proc, both map it. */
static bool map_shared_from_a_memfd(void) {
  char err[512] = "";
  bool ok = gas_unmap() == 0;
  int32_t note[2] = {(int32_t)getpid(), -1};
  int fd = -1;
  if (rank == 0) {
    fd = memfd_create("test_transfer-gas", MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, (off_t)SHARED_SIZE)) close(fd), fd = -1;
    if (fd < 0) perror("rank 0: memfd");
    note[1] = fd;
  }
  MPI_Bcast(note, 2, MPI_INT32_T, 0, WORLD);
  if (rank == 1 && note[1] >= 0) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)note[0], (int)note[1]);
    fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) perror(path);
  }
  ok = all_ranks(ok && fd >= 0);
  if (ok) {
    int rc = gas_map_shared(gas_base, SHARED_SIZE, fd, err, sizeof err);
    if (rc) fprintf(stderr, "rank %d: %s\n", rank, err);
    ok = rc == 0;
  }
  if (fd >= 0) close(fd); /* the mapping keeps the object */
  gas_size = SHARED_SIZE;
  arena_off = shared_arena_off;
  return all_ranks(ok);
}

static bool test_a_shared_gas_is_one_memory(void) {
  CHECK(gas_is_shared());
  CHECK(gas_current() && gas_current()->size == SHARED_SIZE);
  unsigned char *p = (unsigned char *)(gas_base + ((size_t)200 << 20));
  if (rank == 0) memset(p, 0x3C, 1 << 20);
  MPI_Barrier(WORLD);
  for (size_t i = 0; i < (1 << 20); i++) CHECK(p[i] == 0x3C);
  return true;
}

/* ok, and no data message waits on tag + 2 once both ranks are done (collective: every rank
 * calls it, whatever ok is). */
static bool no_data_message_waits(bool ok) {
  MPI_Barrier(WORLD);
  int flag = 1;
  MPI_Iprobe(MPI_ANY_SOURCE, TAG + 2, WORLD, &flag, MPI_STATUS_IGNORE);
  CHECK(!flag);
  return ok;
}

/* A refused copy move's data is sent anyway (it leaves before the answer) and taken by the
 * receiver truncated to nothing: nothing lands, and nothing waits on tag + 2 afterwards. The
 * same for a list whose header announces more data messages than its plan makes. */
static bool refused_data_taken(void) {
  gas_range r[3] = {{canary() + 64, 100}, /* staged */
                    {canary() + 8192, (size_t)300 << 10},
                    {canary() + (1u << 20), (size_t)2 << 20}};
  if (rank == 1) {
    policy p = {.want_nextra = 3};
    if (!recv_refused(EINVAL, accept_policy, &p, NULL)) return false;
    CHECK(p.calls == 1);
    if (!recv_refused(EPROTO, NULL, NULL, NULL)) return false;
    return good_transfer();
  }
  fill_ranges(r, 3, 77); /* what would show if a byte landed */
  CHECK(send_refused(EINVAL, TRANSFER_COPY, handle_words, 2, r, 3));
  transfer_wire_range one = {canary(), 4096};
  transfer_header lying = header(0, 1, 4096); /* one staged message, but it says two */
  lying.nmsgs = 2;
  forge(lying, &one, WS, HS + WS);
  unsigned char junk[4096];
  memset(junk, 0x11, sizeof junk);
  MPI_Send(junk, (int)sizeof junk, MPI_BYTE, 1, TAG + 2, WORLD);
  MPI_Send(junk, (int)sizeof junk, MPI_BYTE, 1, TAG + 2, WORLD);
  CHECK(forged_answer() == EPROTO);
  return good_transfer();
}

static bool test_refused_data_is_taken_and_writes_nothing(void) {
  fill_canary();
  return no_data_message_waits(refused_data_taken());
}

static bool shared_hand_over(void) {
  if (rank == 0) {
    build_structures(sent);
    uint64_t dir = (uint64_t)(uintptr_t)the_directory();
    int refusal = -1;
    CHECK(transfer_send((transfer_link){WORLD, 1, TAG}, TRANSFER_SHARED, false,
        &(transfer_list){&dir, 1, sent, NARENA}, &refusal) == 0);
    CHECK(refusal == 0);
    return true;
  }
  policy p = {.shared_ok = true, .want_nextra = 1};
  uint64_t *x = NULL;
  uint32_t nx = 0;
  CHECK(recv_parts(WORLD, 0, TAG, accept_policy, &p, &x, &nx, &got, &ngot, NULL, NULL) == 0);
  bool handle = nx == 1 && x[0] == (uint64_t)(uintptr_t)the_directory();
  free(x);
  CHECK(handle && p.calls == 1 && p.mode == TRANSFER_SHARED);
  CHECK(ngot == NARENA);
  for (int k = 0; k < NARENA; k++) CHECK(got[k].addr == gas_base + arena_off[k]);
  return check_structures(got, ngot, 0);
}

static bool test_shared_transfer_hands_over_without_data(void) {
  return no_data_message_waits(shared_hand_over());
}

static bool shared_hand_back(void) {
  if (rank == 1) {
    modify_structures();
    int refusal = -1;
    int rc = transfer_send((transfer_link){WORLD, 0, TAG}, TRANSFER_SHARED, false,
        &(transfer_list){NULL, 0, got, ngot}, &refusal);
    free(got);
    got = NULL;
    CHECK(rc == 0 && refusal == 0);
    return true;
  }
  policy p = {.shared_ok = true, .want_nextra = 0};
  gas_range *r;
  size_t n;
  uint64_t *x;
  uint32_t nx;
  CHECK(recv_parts(WORLD, 1, TAG, accept_policy, &p, &x, &nx, &r, &n, NULL, NULL) == 0);
  bool same = n == NARENA && memcmp(r, sent, sizeof sent) == 0 && !x && nx == 0;
  free(r);
  CHECK(same && p.calls == 1 && p.src == 1);
  return check_structures(sent, NARENA, 1);
}

static bool test_shared_transfer_back_shows_the_changes(void) {
  return no_data_message_waits(shared_hand_back());
}

static bool test_copy_mode_still_works_in_a_shared_gas(void) {
  /* rank 1 writes somewhere rank 0's list names and must see rank 0's bytes once done */
  gas_range r = {gas_base + ((size_t)210 << 20), (size_t)300 << 10};
  if (rank == 0) {
    fill_ranges(&r, 1, 9);
    CHECK(transfer_send((transfer_link){WORLD, 1, TAG}, TRANSFER_COPY, false,
        &(transfer_list){NULL, 0, &r, 1}, NULL) == 0);
    return true;
  }
  gas_range *rr;
  size_t n;
  uint64_t *x;
  uint32_t nx;
  CHECK(recv_parts(WORLD, 0, TAG, NULL, NULL, &x, &nx, &rr, &n, NULL, NULL) == 0);
  free(rr);
  CHECK(n == 1);
  for (size_t j = 0; j < r.len; j++) CHECK(((unsigned char *)r.addr)[j] == pattern(r.addr + j, 9));
  return true;
}

static bool test_release_on_a_shared_gas_zeroes_for_both(void) {
  long page = sysconf(_SC_PAGESIZE);
  unsigned char *x = (unsigned char *)(gas_base + ((size_t)220 << 20));
  if (rank == 1) memset(x, 0x77, 4 * (size_t)page); /* rank 1 writes, rank 0 releases */
  MPI_Barrier(WORLD);
  size_t before = 0, after = 0;
  int rc = 0;
  if (rank == 0) {
    for (long i = 0; i < 4 * page; i++) before += x[i] != 0x77;
    rc = gas_release((uintptr_t)x + 100, 3 * (size_t)page);
  }
  MPI_Barrier(WORLD);
  for (long i = 0; i < 4 * page; i++) {
    bool released = i >= page && i < 3 * page; /* the whole pages inside, for both */
    after += x[i] != (released ? 0 : 0x77);
  }
  MPI_Barrier(WORLD);
  if (rank == 1) memset(x + page, 0x11, (size_t)page); /* the memory object's page again */
  MPI_Barrier(WORLD);
  CHECK(before == 0 && rc == 0 && after == 0);
  CHECK(x[page] == 0x11 && x[2 * page] == 0);
  CHECK(gas_release(gas_base + SHARED_SIZE - 4096, 8192) == EINVAL);
  return true;
}

/* ---- phase 3: share_map_gas ------------------------------------------------------------- */

static bool test_share_map_gas_shares_within_the_host(void) {
  char err[512] = "";
  CHECK(gas_unmap() == 0 && !gas_is_shared());
  share_group g;
  int rc = share_map_gas(WORLD, true, SHARE_MAX_OBJECTS, 1, gas_base, SHARED_SIZE, &g, err,
                         sizeof err);
  if (rc) fprintf(stderr, "rank %d: %s\n", rank, err);
  CHECK(rc == 0);
  CHECK(strcmp(g.how, "memfds") == 0 || strcmp(g.how, "posix shm") == 0);
  bool ok = g.nworkers == 2 && g.me == rank && gas_is_shared() && strcmp(g.how, "private") != 0 &&
            share_with(&g, 1 - rank) && share_with(&g, rank) && !share_with(&g, 2) &&
            !share_with(&g, -1) && g.domain_of[0] == 0 && g.domain_of[1] == 0;
  if (rank == 0) printf("     share_map_gas: %s\n", g.how);
  share_free(&g);
  ok = ok && !share_with(&g, 0); /* freed */
  if (!ok) fprintf(stderr, "rank %d: share_map_gas's group is wrong\n", rank);
  unsigned char *p = (unsigned char *)(gas_base + ((size_t)3 << 20));
  if (rank == 0) memset(p, 0x42, 8192);
  gas_range r = {(uintptr_t)p, 8192};
  if (rank == 0) {
    ok = transfer_send((transfer_link){WORLD, 1, TAG}, TRANSFER_SHARED, false,
        &(transfer_list){handle_words, 1, &r, 1}, NULL) == 0 && ok;
  } else {
    policy pol = {.shared_ok = true, .want_nextra = 1};
    gas_range *rr = NULL;
    size_t n = 0, bad = 0;
    uint64_t *x = NULL;
    uint32_t nx;
    ok = recv_parts(WORLD, 0, TAG, accept_policy, &pol, &x, &nx, &rr, &n, NULL, NULL) == 0 && ok;
    free(rr);
    free(x);
    for (size_t i = 0; i < 8192; i++) bad += p[i] != 0x42;
    ok = ok && n == 1 && bad == 0;
  }
  return no_data_message_waits(ok);
}

/* Every byte the other worker writes shows, in any stripe (a 4 MiB stripe of 64 memfds, or
 * the one object): a marker at each stripe's first and last byte and in its middle. */
static bool shared_everywhere(size_t size) {
  const size_t stripe = (size_t)4 << 20;
  unsigned char *base = (unsigned char *)gas_base;
  if (rank == 0)
    for (size_t at = 0; at < size; at += stripe) {
      size_t last = (at + stripe < size ? at + stripe : size) - 1;
      base[at] = 0x51, base[at + (last - at) / 2] = 0x52, base[last] = 0x53;
    }
  MPI_Barrier(WORLD);
  size_t bad = 0;
  for (size_t at = 0; at < size; at += stripe) {
    size_t last = (at + stripe < size ? at + stripe : size) - 1;
    bad += base[at] != 0x51 || base[at + (last - at) / 2] != 0x52 || base[last] != 0x53;
  }
  MPI_Barrier(WORLD);
  if (bad) fprintf(stderr, "rank %d: %zu stripes of the shared GAS not shared\n", rank, bad);
  return bad == 0;
}

static bool test_share_map_gas_stripes_share_every_byte(void) {
  char err[512] = "";
  CHECK(gas_unmap() == 0);
  share_group g;
  int rc = share_map_gas(WORLD, true, SHARE_MAX_OBJECTS, 1, gas_base, SHARED_SIZE, &g, err,
                         sizeof err);
  if (rc) fprintf(stderr, "rank %d: %s\n", rank, err);
  CHECK(rc == 0 && gas_is_shared());
  bool ok = shared_everywhere(SHARED_SIZE);
  /* a page given back reads as zeros on both, in another object than the first */
  unsigned char *p = (unsigned char *)(gas_base + ((size_t)130 << 20));
  if (rank == 0) memset(p, 0x77, 4096);
  MPI_Barrier(WORLD);
  ok = ok && p[0] == 0x77;
  MPI_Barrier(WORLD);
  if (rank == 1) ok = gas_release((uintptr_t)p, 4096) == 0 && ok;
  MPI_Barrier(WORLD);
  ok = ok && p[0] == 0;
  share_free(&g);
  CHECK(gas_unmap() == 0);
  rc = share_map_gas(WORLD, true, 1, 1, gas_base, SHARED_SIZE, &g, err, sizeof err); /* one object */
  if (rc) fprintf(stderr, "rank %d: %s\n", rank, err);
  CHECK(rc == 0 && gas_is_shared());
  CHECK(strcmp(g.how, "memfd") == 0 || strcmp(g.how, "posix shm") == 0);
  ok = shared_everywhere(SHARED_SIZE) && ok;
  share_free(&g);
  /* three objects for a GAS of 63 stripes and a 3 MiB piece: each object holds stripes at
   * offsets past 0, and the last stripe is partial */
  CHECK(gas_unmap() == 0);
  size_t odd = SHARED_SIZE - ((size_t)1 << 20);
  rc = share_map_gas(WORLD, true, 3, 1, gas_base, odd, &g, err, sizeof err);
  if (rc) fprintf(stderr, "rank %d: %s\n", rank, err);
  CHECK(rc == 0 && gas_is_shared());
  ok = shared_everywhere(odd) && ok;
  share_free(&g);
  CHECK(gas_unmap() == 0);
  rc = share_map_gas(WORLD, true, SHARE_MAX_OBJECTS, 1, gas_base, SHARED_SIZE, &g, err, sizeof err);
  CHECK(rc == 0);
  share_free(&g);
  return all_ranks(ok);
}

static bool test_share_map_gas_private_when_not_wanted(void) {
  char err[512] = "";
  CHECK(gas_unmap() == 0);
  share_group g;
  int rc = share_map_gas(WORLD, false, SHARE_MAX_OBJECTS, 1, gas_base, SHARED_SIZE, &g, err,
                         sizeof err);
  if (rc) fprintf(stderr, "rank %d: %s\n", rank, err);
  CHECK(rc == 0);
  bool ok = !gas_is_shared() && strcmp(g.how, "private") == 0 && !share_with(&g, 1 - rank) &&
            g.domain_of[0] == -1 && g.domain_of[1] == -1;
  share_free(&g);
  unsigned char *p = (unsigned char *)(gas_base + ((size_t)3 << 20));
  bool fresh = p[0] == 0; /* a fresh private mapping: the shared bytes are gone */
  if (rank == 0) memset(p, 0x42, 4096);
  MPI_Barrier(WORLD);
  CHECK(ok && fresh);
  CHECK(p[0] == (rank == 0 ? 0x42 : 0));
  return true;
}

/* ANTHEAP_SPLIT_HOSTS's cut: the two ranks of this host in two groups act as two hosts, each
 * its own private GAS (a group of one), neither sharing with nor near the other. */
static bool test_share_map_gas_split_hosts_share_nothing_across(void) {
  char err[512] = "";
  CHECK(gas_unmap() == 0);
  share_group g;
  int rc = share_map_gas(WORLD, true, SHARE_MAX_OBJECTS, 2, gas_base, SHARED_SIZE, &g, err,
                         sizeof err);
  if (rc) fprintf(stderr, "rank %d: %s\n", rank, err);
  CHECK(rc == 0);
  bool ok = !gas_is_shared() && strcmp(g.how, "private") == 0 && !share_with(&g, 1 - rank) &&
            !share_near(&g, 1 - rank) && g.host_of[0] == 0 && g.host_of[1] == 1 &&
            g.domain_of[0] == -1 && g.domain_of[1] == -1;
  if (!ok) fprintf(stderr, "rank %d: the split hosts' group is wrong\n", rank);
  share_free(&g);
  CHECK(gas_unmap() == 0);
  rc = share_map_gas(WORLD, true, SHARE_MAX_OBJECTS, 1, gas_base, SHARED_SIZE, &g, err,
                     sizeof err); /* whole again: they share */
  CHECK(rc == 0);
  ok = ok && share_with(&g, 1 - rank) && g.host_of[0] == g.host_of[1];
  share_free(&g);
  return all_ranks(ok);
}

/* A split that differs between the workers (a rank-dependent ANTHEAP_SPLIT_HOSTS) would cut
 * the host into groups the ranks do not agree on and hang there: every rank gets EDOM and
 * the same message instead, and the next agreed split still works. */
static bool test_share_map_gas_refuses_a_split_the_ranks_disagree_on(void) {
  char err[512] = "";
  CHECK(gas_unmap() == 0);
  share_group g;
  int rc = share_map_gas(WORLD, true, SHARE_MAX_OBJECTS, rank == 0 ? 2 : 1, gas_base,
                         SHARED_SIZE, &g, err, sizeof err);
  bool ok = rc == EDOM && strstr(err, "ANTHEAP_SPLIT_HOSTS differs between the workers (1 to 2)");
  if (!ok) fprintf(stderr, "rank %d: rc %d, \"%s\"\n", rank, rc, err);
  rc = share_map_gas(WORLD, true, SHARE_MAX_OBJECTS, 1, gas_base, SHARED_SIZE, &g, err,
                     sizeof err);
  CHECK(rc == 0);
  ok = ok && share_with(&g, 1 - rank);
  share_free(&g);
  return all_ranks(ok);
}

/* ---- driver ------------------------------------------------------------------------------ */

static int passed, failed;

static void run(const char *name, bool (*fn)(void)) {
  int ok = fn(), all;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, WORLD);
  if (rank == 0) printf("%s %s\n", all ? "ok  " : "FAIL", name);
  fflush(stdout);
  if (all) passed++;
  else failed++;
}
#define RUN(fn) run(#fn, fn)

static uintptr_t chosen_base(void) {
  const char *s = getenv("ANTHEAP_GAS_BASE");
  return s && *s ? (uintptr_t)strtoull(s, NULL, 0) : AH_GAS_BUILD_BASE;
}

static bool map_gas(void) {
  char err[512] = "";
  gas_base = chosen_base();
  gas_size = AH_GAS_DEFAULT_SIZE;
  int rc = gas_map(gas_base, gas_size, err, sizeof err);
  if (rc) fprintf(stderr, "rank %d: %s\n", rank, err);
  return all_ranks(rc == 0);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--help") == 0) {
    puts("usage: mpirun -np 2 test_transfer   (GAS base: ANTHEAP_GAS_BASE, default per build)");
    return 0;
  }
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(WORLD, &rank);
  MPI_Comm_size(WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "test_transfer: needs exactly 2 ranks (got %d)\n", size);
    MPI_Finalize();
    return 2;
  }
  RUN(test_gas_contains_is_overflow_safe);
  RUN(test_gas_map_over_a_mapping_is_eexist);
  RUN(test_the_shared_memory_path_is_read_from_the_environment);
  if (!map_gas()) {
    failed++;
  } else {
    RUN(test_gas_map_twice_is_ebusy);
    RUN(test_list_and_tree_arrive_at_the_same_addresses);
    RUN(test_modified_structures_come_back);
    RUN(test_empty_transfer_sends_the_list_message_only);
    RUN(test_handles_without_ranges_arrive_intact);
    RUN(test_short_and_long_ranges_arrive_byte_for_byte);
    RUN(test_a_small_move_arrives_in_pieces_or_whole);
    RUN(test_range_outside_the_gas_is_einval_and_writes_nothing);
    RUN(test_overlapping_ranges_are_einval_and_write_nothing);
    RUN(test_lists_the_sender_cannot_send_are_ecanceled);
    RUN(test_unreadable_headers_are_eproto_and_get_no_answer);
    RUN(test_forged_lists_are_refused_and_answered);
    RUN(test_shared_mode_to_a_receiver_that_does_not_take_it_is_eproto);
    RUN(test_accept_refusing_a_handle_count_is_einval);
    RUN(test_abort_is_ecanceled);
    RUN(test_refuse_pending_refuses_with_eshutdown);
    RUN(test_refused_data_is_taken_and_writes_nothing);
    RUN(test_release_on_a_private_gas_zeroes_only_here);
    RUN(test_populate_maps_once_until_released);
    free(got);
    got = NULL;
    if (!same_host()) {
      if (rank == 0) printf("skip the shared GAS phases: the two ranks are on different hosts\n");
      gas_unmap();
    } else if (!map_shared_from_a_memfd()) {
      if (rank == 0) printf("FAIL map_shared_from_a_memfd\n");
      failed++;
      gas_unmap();
    } else {
      RUN(test_a_shared_gas_is_one_memory);
      RUN(test_shared_transfer_hands_over_without_data);
      RUN(test_shared_transfer_back_shows_the_changes);
      RUN(test_copy_mode_still_works_in_a_shared_gas);
      RUN(test_release_on_a_shared_gas_zeroes_for_both);
      free(got);
      got = NULL;
      RUN(test_share_map_gas_shares_within_the_host);
      RUN(test_share_map_gas_stripes_share_every_byte);
      RUN(test_share_map_gas_private_when_not_wanted);
      RUN(test_share_map_gas_split_hosts_share_nothing_across);
      RUN(test_share_map_gas_refuses_a_split_the_ranks_disagree_on);
      gas_unmap();
    }
  }
  if (rank == 0) printf("test_transfer: %d passed, %d failed\n", passed, failed);
  MPI_Finalize();
  return failed ? 1 : 0;
}

/* test_transfer.c: the GAS mapping and range transfers between two ranks (src/worker).
 *
 * Rank 0 builds a linked list (10,000 nodes of 256 B) and a binary search tree (3,000 nodes
 * of 64 B) in its GAS, bump-placing nodes round-robin over three disjoint arenas with real
 * pointers between them, and sends the three arenas; rank 1 traverses both by pointer, checks
 * data and addresses, modifies every node and sends them back; rank 0 checks the changes.
 * Then the wrong-usage cases: lists naming memory outside the GAS, overlapping ranges, forged
 * headers and mismatched data messages (small and large), a sender that gives up. Each must be
 * refused with its error code, write nothing into the receiver's GAS (a canary region), and
 * leave the stream in step, which the final transfer proves.
 *
 * Run: mpirun -np 2 test_transfer   (GAS base from ANTHEAP_GAS_BASE, else the build default)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "worker/gas.h"
#include "worker/transfer.h"

#define TAG 7
#define NLIST 10000
#define NTREE 3000
#define NARENA 3
#define ARENA_CAP ((size_t)4 << 20)
#define CANARY_LEN ((size_t)64 << 10)
#define DIR_MAGIC 0x7472616e73666572ull

static int rank;
static uintptr_t gas_base;
static const size_t arena_off[NARENA] = {(size_t)1 << 20, (size_t)256 << 20, (size_t)4 << 30};
static const size_t canary_off = (size_t)1 << 30;

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
  const directory *d = (const directory *)(gas_base + arena_off[0]);
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
  directory *d = (directory *)(gas_base + arena_off[0]);
  for (lnode *x = d->head; x; x = x->next) {
    x->gen = 1;
    for (size_t j = 0; j < sizeof x->payload; j++) x->payload[j]++;
  }
  modify_tree(d->root);
}

/* ---- the cases -------------------------------------------------------------------------- */

static gas_range sent[NARENA];      /* rank 0: what it sent */
static gas_range *got;              /* rank 1: what it received */
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
  CHECK(!gas_contains(0x100000, 1)); /* nothing mapped yet */
  return true;
}

static bool test_gas_map_over_a_mapping_is_eexist(void) {
  size_t len = (size_t)2 << 20;
  void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(p != MAP_FAILED);
  char err[512] = "";
  int rc = gas_map((uintptr_t)p, len, err, sizeof err);
  munmap(p, len);
  CHECK(rc == EEXIST);
  CHECK(strstr(err, "ANTHEAP_GAS_BASE") && strstr(err, "--antheap-gas-base"));
  CHECK(gas_current() == NULL);
  CHECK(gas_map(0x100001, 4096, err, sizeof err) == EINVAL);
  return true;
}

static bool test_list_and_tree_arrive_at_the_same_addresses(void) {
  if (rank == 0) {
    arena a[NARENA];
    arenas_init(a);
    directory *d = place(a, 0, sizeof(directory) + 64 - sizeof(directory) % 64);
    d->head = build_list(a);
    d->root = build_tree(a);
    d->nlist = NLIST, d->ntree = NTREE, d->magic = DIR_MAGIC;
    for (int k = 0; k < NARENA; k++) sent[k] = (gas_range){a[k].start, a[k].cur - a[k].start};
    CHECK(transfer_send(MPI_COMM_WORLD, 1, TAG, sent, NARENA) == 0);
    return true;
  }
  CHECK(transfer_recv(MPI_COMM_WORLD, 0, TAG, &got, &ngot, NULL) == 0);
  CHECK(ngot == NARENA);
  for (int k = 0; k < NARENA; k++) CHECK(got[k].addr == gas_base + arena_off[k]);
  return check_structures(got, ngot, 0);
}

static bool test_modified_structures_come_back(void) {
  if (rank == 1) {
    modify_structures();
    CHECK(transfer_send(MPI_COMM_WORLD, 0, TAG, got, ngot) == 0);
    return true;
  }
  gas_range *r;
  size_t n;
  CHECK(transfer_recv(MPI_COMM_WORLD, 1, TAG, &r, &n, NULL) == 0);
  bool same = n == NARENA && memcmp(r, sent, sizeof sent) == 0;
  free(r);
  CHECK(same);
  return check_structures(sent, NARENA, 1);
}

static bool test_empty_transfer_sends_the_header_only(void) {
  if (rank == 0) return transfer_send(MPI_COMM_WORLD, 1, TAG, NULL, 0) == 0;
  gas_range *r = (gas_range *)1;
  size_t n = 99;
  CHECK(transfer_recv(MPI_COMM_WORLD, 0, TAG, &r, &n, NULL) == 0);
  CHECK(r == NULL && n == 0);
  return true;
}

/* Rank 0's canary holds 0x5A, rank 1's 0xA5: a refused transfer must leave 0xA5. */
static void fill_canary(void) { memset((void *)canary(), rank == 0 ? 0x5A : 0xA5, CANARY_LEN); }
static bool canary_intact(void) {
  const unsigned char *c = (const unsigned char *)canary();
  for (size_t i = 0; i < CANARY_LEN; i++)
    if (c[i] != 0xA5) return false;
  return true;
}

/* Rank 1's side of a refused transfer: the error code, no list, the canary untouched. */
static bool refused_with(int want) {
  gas_range *r = (gas_range *)1;
  size_t n = 99;
  int rc = transfer_recv(MPI_COMM_WORLD, 0, TAG, &r, &n, NULL);
  if (rc != want) fprintf(stderr, "rank 1: expected error %d, got %d\n", want, rc);
  CHECK(rc == want && r == NULL && n == 0);
  CHECK(canary_intact());
  return true;
}

static bool test_range_outside_the_gas_is_einval_and_writes_nothing(void) {
  fill_canary();
  if (rank == 1) return refused_with(EINVAL);
  char *heap = malloc(4096);
  memset(heap, 1, 4096);
  gas_range r[2] = {{canary(), 4096}, {(uintptr_t)heap, 4096}};
  int rc = transfer_send(MPI_COMM_WORLD, 1, TAG, r, 2); /* the sender cannot know */
  free(heap);
  CHECK(rc == 0);
  return true;
}

static bool test_overlapping_ranges_are_einval_and_write_nothing(void) {
  fill_canary();
  if (rank == 1) return refused_with(EINVAL);
  gas_range r[3] = {{canary() + 8192, 4096}, {canary(), 4096}, {canary() + 2048, 4096}};
  CHECK(transfer_send(MPI_COMM_WORLD, 1, TAG, r, 3) == 0);
  return true;
}

static bool test_sender_error_is_ecanceled_at_the_receiver(void) {
  fill_canary();
  if (rank == 1) return refused_with(ECANCELED);
  gas_range r[2] = {{canary(), 4096}, {canary() + 4096, 0}};
  CHECK(transfer_send(MPI_COMM_WORLD, 1, TAG, r, 2) == EINVAL);
  return true;
}

/* Rank 0 sends a hand-made transfer: list message of list_bytes (header + records, cut or
 * padded), then, when data_len != SIZE_MAX, a data message of data_len bytes. */
static void forge(transfer_header h, const transfer_wire_range *w, size_t nw, size_t list_bytes,
                  size_t data_len) {
  unsigned char buf[512] = {0};
  memcpy(buf, &h, sizeof h);
  if (nw) memcpy(buf + sizeof h, w, nw * sizeof *w);
  MPI_Send(buf, (int)list_bytes, MPI_BYTE, 1, TAG, MPI_COMM_WORLD);
  if (data_len == SIZE_MAX) return;
  unsigned char *data = malloc(data_len ? data_len : 1);
  memset(data, 0x5A, data_len);
  MPI_Send(data, (int)data_len, MPI_BYTE, 1, TAG, MPI_COMM_WORLD);
  free(data);
}

static transfer_header header(uint64_t count, uint64_t total) {
  return (transfer_header){.magic = TRANSFER_MAGIC, .version = TRANSFER_VERSION,
                           .count = count, .total = total};
}

#define HS sizeof(transfer_header)
#define WS sizeof(transfer_wire_range)

static bool test_forged_transfers_are_refused_and_drained(void) {
  fill_canary();
  const size_t big = TRANSFER_DRAIN_MAX + ((size_t)8 << 20); /* drained truncated */
  if (rank == 1) {
    static const int want[] = {EPROTO, EPROTO, EPROTO, EPROTO, EPROTO, EINVAL, EPROTO, EPROTO};
    for (unsigned i = 0; i < sizeof want / sizeof *want; i++)
      if (!refused_with(want[i])) {
        fprintf(stderr, "rank 1: forged case %u\n", i);
        return false;
      }
    return true;
  }
  transfer_wire_range one = {canary(), 4096}, two[2] = {{canary(), 4096}, {canary() + 4096, 4096}};
  forge(header(1, 8192), &one, 1, HS + WS, 8192);   /* total does not match the lengths */
  forge(header(2, 4096), &one, 1, HS + WS, 4096);   /* count says 2, the list holds 1 */
  forge(header(1, 4096), &one, 1, HS + WS, 4000);   /* data message shorter than the total */
  forge(header(1, 4096), &one, 1, HS + WS + 8, 4096); /* list length not whole records */
  transfer_header bad = header(0, 0);
  bad.magic ^= 1;
  forge(bad, NULL, 0, HS, SIZE_MAX);                /* bad magic: nothing more is read */
  transfer_wire_range wild = {0x1000, big};
  forge(header(1, big), &wild, 1, HS + WS, big);    /* outside the GAS, large data */
  forge(header(2, 8192), two, 2, HS + 2 * WS, big); /* data message far larger than the total */
  forge(header(1, 4096), &one, 1, HS - 8, 4096);    /* shorter than a header */
  return true;
}

static bool test_transfer_after_errors_succeeds(void) {
  if (rank == 0) {
    for (size_t i = 0; i < CANARY_LEN; i++) ((unsigned char *)canary())[i] = (unsigned char)(i * 7);
    gas_range r = {canary(), CANARY_LEN};
    CHECK(transfer_send(MPI_COMM_WORLD, 1, TAG, &r, 1) == 0);
    return true;
  }
  gas_range *r;
  size_t n;
  CHECK(transfer_recv(MPI_COMM_WORLD, MPI_ANY_SOURCE, MPI_ANY_TAG, &r, &n, NULL) == 0);
  bool shape = n == 1 && r[0].addr == canary() && r[0].len == CANARY_LEN;
  free(r);
  CHECK(shape);
  for (size_t i = 0; i < CANARY_LEN; i++) CHECK(((unsigned char *)canary())[i] == (unsigned char)(i * 7));
  return true;
}

/* ---- driver ------------------------------------------------------------------------------ */

static int passed, failed;

static void run(const char *name, bool (*fn)(void)) {
  int ok = fn(), all;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) printf("%s %s\n", all ? "ok  " : "FAIL", name);
  fflush(stdout);
  if (all) passed++;
  else failed++;
}
#define RUN(fn) run(#fn, fn)

static uintptr_t chosen_base(void) {
  const char *s = getenv("ANTHEAP_GAS_BASE");
  return s && *s ? (uintptr_t)strtoull(s, NULL, 0) : GAS_BUILD_BASE;
}

static bool map_gas(void) {
  char err[512] = "";
  gas_base = chosen_base();
  int rc = gas_map(gas_base, AH_GAS_DEFAULT_SIZE, err, sizeof err), all;
  if (rc) fprintf(stderr, "rank %d: %s\n", rank, err);
  MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return all == 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--help") == 0) {
    puts("usage: mpirun -np 2 test_transfer   (GAS base: ANTHEAP_GAS_BASE, default per build)");
    return 0;
  }
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) fprintf(stderr, "test_transfer: needs exactly 2 ranks (got %d)\n", size);
    MPI_Finalize();
    return 2;
  }
  RUN(test_gas_contains_is_overflow_safe);
  RUN(test_gas_map_over_a_mapping_is_eexist);
  if (!map_gas()) {
    failed++;
  } else {
    RUN(test_list_and_tree_arrive_at_the_same_addresses);
    RUN(test_modified_structures_come_back);
    RUN(test_empty_transfer_sends_the_header_only);
    RUN(test_range_outside_the_gas_is_einval_and_writes_nothing);
    RUN(test_overlapping_ranges_are_einval_and_write_nothing);
    RUN(test_sender_error_is_ecanceled_at_the_receiver);
    RUN(test_forged_transfers_are_refused_and_drained);
    RUN(test_transfer_after_errors_succeeds);
    free(got);
    gas_unmap();
  }
  if (rank == 0) printf("test_transfer: %d passed, %d failed\n", passed, failed);
  MPI_Finalize();
  return failed ? 1 : 0;
}

/* test_api.c: every worker call of include/antheap.h in a real MPI job, whatever the launch
 * (SPMD or MPMD, one scheduler or a tree): regions across scheduler levels, objects,
 * realloc within and across regions, frees of objects and regions that live on another
 * leaf, lists and trees moved with sys_send/sys_recv and followed by pointer, and wrong
 * usage (wild pointers, double free, double rfree, unknown regions, a malformed message).
 * Every worker counts; worker 0 prints "test_api: N passed, M failed". */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "antheap.h"
#include "worker/debug.h"

#define CHECK_NAME "test_api"
#include "worker_check.h"

typedef struct node {
  struct node *next;
  long value;
  char pad[256 - 16];
} node;

typedef struct tnode {
  struct tnode *left, *right;
  long key;
  char pad[64 - 24];
} tnode;

/* Regions and objects on this worker's own path, nested across levels. */
static void test_regions_and_objects(void) {
  rid_t top = sys_ralloc(SYS_ROOT_REGION, 0); /* at the root scheduler */
  CHECK(top != 0);
  rid_t leaf = sys_ralloc(top, SYS_NO_LEVEL_HINT); /* below it, at this worker's leaf */
  CHECK(leaf != 0 && leaf != top);
  rid_t sub = sys_ralloc(leaf, SYS_NO_LEVEL_HINT);
  CHECK(sub != 0);
  enum { N = 200 };
  char *obj[N];
  for (int i = 0; i < N; i++) {
    size_t size = 16 + (size_t)(i * 37) % 6000;
    rid_t r = i % 3 == 0 ? top : i % 3 == 1 ? leaf : sub;
    obj[i] = sys_alloc(size, r);
    CHECK(obj[i] != NULL);
    if (!obj[i]) continue;
    memset(obj[i], i & 0xff, size);
    rid_t got;
    size_t slot;
    CHECK(sys_query(obj[i] + size / 2, &got, &slot) == 0 && got == r && slot >= size);
  }
  /* realloc: grow in place or move, data kept; then into another region */
  char *p = sys_alloc(100, leaf);
  CHECK(p != NULL);
  memset(p, 7, 100);
  char *q = sys_realloc(p, 3000, SYS_SAME_REGION);
  CHECK(q != NULL && q[0] == 7 && q[99] == 7);
  char *r = sys_realloc(q, 3000, top);
  rid_t where;
  CHECK(r != NULL && r[50] == 7 && sys_query(r, &where, NULL) == 0 && where == top);
  void *many[64];
  CHECK(sys_balloc(256, sub, 64, many) == 0);
  for (int i = 0; i < 64; i++) {
    memset(many[i], 0x5a, 256);
    for (int j = 0; j < i; j++) CHECK(many[i] != many[j]);
  }
  for (int i = 0; i < N; i += 2) CHECK(obj[i] == NULL || sys_free(obj[i]) == 0);
  CHECK(sys_free(obj[0]) == -1 && errno == EINVAL); /* double free */
  CHECK(sys_free(obj[1] + 8) == -1 && errno == EINVAL); /* interior pointer */
  /* rfree of the top region takes the regions below it on the leaf too. IDs and addresses
   * are reused once freed (another worker's next region may get them), so "gone" is checked
   * while every worker holds still between two barriers; and nobody frees before everyone
   * has created its regions (a new region could take an ID freed a moment before). */
  sys_barrier();
  CHECK(sys_rfree(top) == 0);
  sys_barrier();
  CHECK(sys_alloc(64, sub) == NULL && errno == ENOENT);
  CHECK(sys_alloc(64, leaf) == NULL && errno == ENOENT);
  CHECK(sys_rfree(top) == -1 && errno == ENOENT); /* double rfree */
  CHECK(sys_query(obj[1], NULL, NULL) == -1 && errno == EINVAL); /* died with its region */
  sys_barrier();
}

/* Level hints: 0 places a region at the root scheduler, no hint at this worker's leaf, and a
 * child of a root region may live below its parent's scheduler. */
static void test_level_hints(void) {
  int root = antheap_debug_path(0), leaf = antheap_debug_path(1 << 20);
  rid_t top = sys_ralloc(SYS_ROOT_REGION, 0), low = sys_ralloc(top, SYS_NO_LEVEL_HINT);
  void *a = sys_alloc(64, top), *b = sys_alloc(64, low);
  CHECK(a && b);
  CHECK(antheap_debug_scheduler_of(a) == root);
  CHECK(antheap_debug_scheduler_of(b) == leaf);
  /* level 1 of this worker's path; a tree of one level has no level 1: EINVAL, not clamped */
  bool deep = antheap_debug_path(1) != root;
  rid_t mid = sys_ralloc(top, 1);
  if (!deep) {
    CHECK(mid == 0 && errno == EINVAL);
    mid = sys_ralloc(top, SYS_NO_LEVEL_HINT);
  }
  void *c = sys_alloc(64, mid);
  CHECK(c != NULL && antheap_debug_scheduler_of(c) == antheap_debug_path(1));
  sys_barrier(); /* everyone created its regions before anyone frees */
  CHECK(sys_rfree(top) == 0); /* takes low and mid with it, wherever they live */
  sys_barrier(); /* freed addresses may be reused: check while everyone holds still */
  CHECK(sys_query(b, NULL, NULL) == -1 && errno == EINVAL);
  CHECK(sys_query(c, NULL, NULL) == -1 && errno == EINVAL);
  sys_barrier();
}

/* Wrong usage: unknown regions, wild pointers (some inside ranges delegated to schedulers
 * that never used them), a malformed message; the job goes on. */
static void test_wrong_usage(void) {
  CHECK(sys_alloc(64, 0x7ffffff0u) == NULL && errno == ENOENT);
  CHECK(sys_ralloc(0x7ffffff0u, 0) == 0 && errno == ENOENT);
  CHECK(sys_ralloc(SYS_ROOT_REGION, 99) == 0 && errno == EINVAL); /* deeper than any tree here */
  CHECK(sys_ralloc(SYS_ROOT_REGION, -5) == 0 && errno == EINVAL);
  CHECK(sys_ralloc(SYS_ROOT_REGION, INT32_MIN) == 0 && errno == EINVAL);
  CHECK(sys_free(NULL) == 0); /* as free(NULL) */
  CHECK(sys_rfree(0x7ffffff0u) == -1 && errno == ENOENT);
  CHECK(sys_alloc(0, SYS_ROOT_REGION) == NULL && errno == EINVAL);
  char *base = sys_alloc(64, SYS_ROOT_REGION);
  CHECK(base != NULL);
  unsigned long x = 12345 + (unsigned long)sys_worker_id();
  for (int i = 0; i < 40; i++) {
    x = x * 6364136223846793005ul + 1442695040888963407ul;
    char *wild = base + (long)((x >> 20) % (1ul << 30)) * 64 - (long)(1ul << 35) + 8;
    CHECK(sys_free(wild) == -1 && errno == EINVAL);
  }
  CHECK(sys_free((void *)0x1234) == -1 && errno == EINVAL);
  unsigned char junk[40];
  for (int i = 0; i < 40; i++) junk[i] = (unsigned char)(i * 29 + sys_worker_id());
  CHECK(antheap_debug_send_raw(junk, sizeof junk) == 0);
  CHECK(sys_free(base) == 0); /* the daemon is alive and answers */
}

/* Worker i allocates in its region and gives it to worker i+1, which frees those objects and
 * the region. */
static void test_cross_scheduler_frees(void) {
  int me = sys_worker_id(), n = sys_workers();
  if (n < 2) return;
  rid_t mine = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  CHECK(mine != 0);
  uint64_t handles[9];
  handles[0] = mine;
  for (int i = 1; i < 9; i++) handles[i] = (uintptr_t)sys_alloc(512, mine);
  uint64_t theirs[9];
  CHECK(sys_give((me + 1) % n, &mine, 1) == 0);
  CHECK(sys_alloc(64, mine) == NULL && errno == EPERM); /* given: no longer mine */
  CHECK(sys_free((void *)(uintptr_t)handles[7]) == -1 && errno == EPERM);
  sys_barrier(); /* every region given before any is freed */
  MPI_Sendrecv(handles, 9, MPI_UINT64_T, (me + 1) % n, 7, theirs, 9, MPI_UINT64_T,
               (me + n - 1) % n, 7, sys_comm(), MPI_STATUS_IGNORE);
  for (int i = 1; i < 5; i++) CHECK(sys_free((void *)(uintptr_t)theirs[i]) == 0);
  CHECK(sys_rfree((rid_t)theirs[0]) == 0);
  sys_barrier();
  CHECK(sys_alloc(64, mine) == NULL && errno == ENOENT); /* freed by my neighbour */
  CHECK(sys_free((void *)(uintptr_t)handles[6]) == -1 && errno == EINVAL);
  sys_barrier(); /* nobody reuses the freed ID or addresses before everyone checked */
}

/* A list in nested regions and a tree, sent to the partner, followed by pointer there,
 * modified, and sent back. */
static void test_transfer(void) {
  int me = sys_worker_id(), n = sys_workers();
  if (n < 2 || (n % 2 && me == n - 1)) return;
  int partner = me ^ 1;
  enum { LEN = 3000, TREE = 1023 };
  if (me % 2 == 0) {
    rid_t list = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT), part = 0;
    node *head = NULL, *tail = NULL;
    for (int i = 0; i < LEN; i++) {
      if (i % 500 == 0) part = sys_ralloc(list, SYS_NO_LEVEL_HINT); /* sub-regions */
      node *x = sys_alloc(sizeof *x, part);
      CHECK(x != NULL);
      x->value = i * 3 + me;
      x->next = NULL;
      if (tail) tail->next = x; else head = x;
      tail = x;
    }
    rid_t tree = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    tnode *t[TREE];
    CHECK(sys_balloc(sizeof(tnode), tree, TREE, (void **)t) == 0);
    for (int i = 0; i < TREE; i++) {
      t[i]->key = i;
      t[i]->left = 2 * i + 1 < TREE ? t[2 * i + 1] : NULL;
      t[i]->right = 2 * i + 2 < TREE ? t[2 * i + 2] : NULL;
    }
    rid_t regs[2] = {list, tree};
    void *objs[2] = {head, t[0]};
    CHECK(sys_send(partner, regs, 2, objs, 2) == 0);
    CHECK(sys_rfree(tree) == -1 && errno == EPERM); /* the partner holds both now */
    rid_t back_regs[1];
    void *back[1];
    CHECK(sys_recv(partner, back_regs, 1, back, 1) == 0);
    CHECK(back[0] == head && back_regs[0] == list);
    long i = 0;
    for (node *x = head; x; x = x->next, i++) CHECK(x->value == -(i * 3 + me));
    CHECK(i == LEN);
    CHECK(sys_rfree(list) == 0);
  } else {
    rid_t regs[2];
    void *objs[2];
    CHECK(sys_recv(partner, regs, 2, objs, 2) == 0);
    node *head = objs[0];
    long i = 0;
    for (node *x = head; x; x = x->next, i++) {
      CHECK(x->value == i * 3 + partner);
      x->value = -x->value; /* modify every node */
    }
    CHECK(i == LEN);
    long keys = 0;
    tnode *stack[64];
    int sp = 0;
    stack[sp++] = objs[1];
    while (sp) { /* depth-first walk of the received tree by its own pointers */
      tnode *x = stack[--sp];
      keys += x->key;
      if (x->right) stack[sp++] = x->right;
      if (x->left) stack[sp++] = x->left;
    }
    CHECK(keys == (long)TREE * (TREE - 1) / 2);
    CHECK(sys_send(partner, &regs[0], 1, objs, 1) == 0); /* the list goes back */
    CHECK(sys_rfree(regs[1]) == 0);                      /* the tree is ours to free */
  }
}

/* A list of LEN nodes in region r, the nodes after the first half in its child region c. */
static node *memo_list(rid_t r, rid_t c, int len, int me) {
  node *head = NULL, *tail = NULL;
  for (int i = 0; i < len; i++) {
    node *x = sys_alloc(sizeof *x, i < len / 2 ? r : c);
    CHECK(x != NULL);
    if (!x) return head;
    *x = (node){.value = i + 1000L * me};
    if (tail) tail->next = x; else head = x;
    tail = x;
  }
  return head;
}

/* Nodes in a list, and whether node i holds i + base. */
static long memo_walk(const node *x, long base, bool *in_order) {
  long i = 0;
  *in_order = true;
  for (; x; x = x->next, i++) *in_order &= x->value == i + base;
  return i;
}

/* The move memo (src/worker/memo.h): between workers that share the GAS, a region received
 * and sent on unchanged needs no pack; any change by the holder, or a descendant moved on its
 * own, makes the next send ask the schedulers again. Each worker counts its own packs. With a
 * private GAS (or ANTHEAP_MOVE_MEMO=off) every send packs, and the moves are the same. */
static void move_memo_pair(int me, int partner);
static void move_memo_changes(int me, int partner);
static void move_memo_barrier(int me, int partner);
static void move_memo_empty_child(int me, int partner);

/* The host of worker p of n as ANTHEAP_SPLIT_HOSTS=K makes them on the one host the ctest jobs
 * run on: K groups of consecutive workers. */
static int host_of(int p, int n) {
  const char *k = getenv("ANTHEAP_SPLIT_HOSTS");
  return (int)((long)p * (k && *k ? atoi(k) : 1) / n);
}

/* Whether this worker shares the GAS with worker peer: unless ANTHEAP_SHARE=none, when both are
 * on one host. */
static int shared_expected(int peer) {
  const char *share = getenv("ANTHEAP_SHARE");
  int n = sys_workers();
  return !(share && !strcmp(share, "none")) && host_of(peer, n) == host_of(sys_worker_id(), n);
}

/* Whether moves to peer use the memo: sharing with it, and ANTHEAP_MOVE_MEMO not off. */
static int memo_expected(int peer) {
  const char *memo = getenv("ANTHEAP_MOVE_MEMO");
  return shared_expected(peer) && !(memo && !strcmp(memo, "off"));
}

/* sys_shares_gas: every pair as shared_expected says; a worker always "shares" with itself; a
 * peer that is no worker is EINVAL. */
static void test_shares_gas(void) {
  int me = sys_worker_id(), n = sys_workers();
  for (int p = 0; p < n; p++) CHECK(sys_shares_gas(p) == (p == me ? 1 : shared_expected(p)));
  errno = 0;
  CHECK(sys_shares_gas(n) == -1 && errno == EINVAL);
  errno = 0;
  CHECK(sys_shares_gas(-1) == -1 && errno == EINVAL);
}

/* sys_host_load: the ctest jobs run on one host, so its ranks are every rank of the job
 * (workers and schedulers); its cores, hwloc's count, at least one and at most the CPUs online;
 * both 0 where hwloc could not describe the host (as the header allows); either pointer may be
 * NULL. */
static void test_host_load(void) {
  int ranks = -1, cores = -1, world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  CHECK(sys_host_load(&ranks, &cores) == 0);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  CHECK((ranks == 0 && cores == 0) ||
        (ranks == world && cores >= 1 && (online <= 0 || cores <= online)));
  int again = -1;
  CHECK(sys_host_load(NULL, &again) == 0 && again == cores);
  CHECK(sys_host_load(&again, NULL) == 0 && again == ranks);
}

static void test_move_memo(void) {
  int me = sys_worker_id(), n = sys_workers();
  bool paired = n >= 2 && !(n % 2 && me == n - 1);
  if (paired) move_memo_pair(me, me ^ 1);
  if (paired) move_memo_changes(me, me ^ 1);
  if (paired) move_memo_empty_child(me, me ^ 1);
  move_memo_barrier(me, paired ? me ^ 1 : -1);
  sys_barrier();
}

static void move_memo_pair(int me, int partner) {
  int memo = antheap_debug_memo_applies(partner);
  CHECK(memo == memo_expected(partner));
  enum { LEN = 200 };
  rid_t r, c;
  node *head;
  bool ok;
  long p0 = antheap_debug_packs();
  if (me % 2 == 0) {
    r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    c = sys_ralloc(r, SYS_NO_LEVEL_HINT);
    head = memo_list(r, c, LEN, me);
    void *o = head;
    CHECK(sys_send(partner, &r, 1, &o, 1) == 0);            /* built here: packs */
    CHECK(antheap_debug_packs() == p0 + 1);
    CHECK(sys_recv(partner, &r, 1, &o, 1) == 0 && o == head); /* back unchanged */
    CHECK(sys_send(partner, &r, 1, &o, 1) == 0);            /* on again, unchanged */
    CHECK(antheap_debug_packs() == p0 + 2 - memo);
    CHECK(sys_recv(partner, &r, 1, &o, 1) == 0 && o == head); /* the partner added a node */
    CHECK(memo_walk(head, 1000L * me, &ok) == LEN + 1 && ok);
    CHECK(sys_send(partner, &c, 1, NULL, 0) == 0);          /* the child alone: packs */
    CHECK(sys_recv(partner, &c, 1, NULL, 0) == 0);
    long p1 = antheap_debug_packs();
    CHECK(sys_send(partner, &r, 1, &o, 1) == 0); /* the memo of r went with c: packs */
    CHECK(antheap_debug_packs() == p1 + 1);
    CHECK(sys_recv(partner, &r, 1, &o, 1) == 0 && o == head);
    CHECK(memo_walk(head, 1000L * me, &ok) == LEN + 2 && ok);
    CHECK(sys_rfree(r) == 0);
  } else {
    void *o;
    CHECK(sys_recv(partner, &r, 1, &o, 1) == 0);
    head = o;
    CHECK(memo_walk(head, 1000L * partner, &ok) == LEN && ok);
    CHECK(sys_send(partner, &r, 1, &o, 1) == 0);            /* straight back */
    CHECK(antheap_debug_packs() == p0 + 1 - memo);
    CHECK(sys_recv(partner, &r, 1, &o, 1) == 0 && o == head);
    node *last = head;
    while (last->next) last = last->next;
    node *x = sys_alloc(sizeof *x, r);                      /* a change: the memo goes */
    CHECK(x != NULL);
    if (x) *x = (node){.value = last->value + 1}, last->next = x;
    long p1 = antheap_debug_packs();
    CHECK(sys_send(partner, &r, 1, &o, 1) == 0);
    CHECK(antheap_debug_packs() == p1 + 1);
    CHECK(sys_recv(partner, &c, 1, NULL, 0) == 0);          /* the child, alone */
    p1 = antheap_debug_packs();
    CHECK(sys_send(partner, &c, 1, NULL, 0) == 0);          /* back unchanged */
    CHECK(antheap_debug_packs() == p1 + 1 - memo);
    CHECK(sys_recv(partner, &r, 1, &o, 1) == 0 && o == head);
    while (last->next) last = last->next;
    x = sys_alloc(sizeof *x, c);                            /* a node in the child */
    CHECK(x != NULL);
    if (x) *x = (node){.value = last->value + 1}, last->next = x;
    p1 = antheap_debug_packs();
    CHECK(sys_send(partner, &r, 1, &o, 1) == 0);
    CHECK(antheap_debug_packs() == p1 + 1);
  }
}

/* What the holder of a received region does before sending it back (move_memo_changes). */
enum { MC_ALLOC, MC_QUERY, MC_FREE, MC_BALLOC, MC_REALLOC, MC_RALLOC, MC_RFREE, MC_KINDS };

/* Every change by the holder, in any region, makes its next send of what it received pack;
 * a query does not (it comes second: the first send also hands back the slabs the set-up
 * leased, which forgets the memo too). Worker `me` odd holds; its partner counts nothing. */
static void move_memo_changes(int me, int partner) {
  int memo = antheap_debug_memo_applies(partner);
  rid_t r;
  void *o;
  if (me % 2 == 0) {
    r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    node *head = sys_alloc(sizeof *head, r);
    CHECK(head != NULL);
    o = head;
    for (int k = 0; k < MC_KINDS; k++) {
      CHECK(sys_send(partner, &r, 1, &o, 1) == 0);
      CHECK(sys_recv(partner, &r, 1, &o, 1) == 0 && o == head);
    }
    CHECK(sys_rfree(r) == 0);
    return;
  }
  rid_t scratch = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  rid_t child = sys_ralloc(scratch, SYS_NO_LEVEL_HINT);
  void *spare = sys_alloc(64, scratch), *grow = sys_alloc(64, scratch), *two[2];
  CHECK(scratch && child && spare && grow);
  for (int k = 0; k < MC_KINDS; k++) {
    CHECK(sys_recv(partner, &r, 1, &o, 1) == 0);
    rid_t got;
    size_t size;
    switch (k) {
      case MC_QUERY: CHECK(sys_query(spare, &got, &size) == 0 && got == scratch); break;
      case MC_ALLOC: CHECK(sys_alloc(64, scratch) != NULL); break;
      case MC_FREE: CHECK(sys_free(spare) == 0); break;
      case MC_BALLOC: CHECK(sys_balloc(64, scratch, 2, two) == 0); break;
      case MC_REALLOC: CHECK((grow = sys_realloc(grow, 8192, SYS_SAME_REGION)) != NULL); break;
      case MC_RALLOC: CHECK(sys_ralloc(scratch, SYS_NO_LEVEL_HINT) != 0); break;
      case MC_RFREE: CHECK(sys_rfree(child) == 0); break;
    }
    long p = antheap_debug_packs();
    CHECK(sys_send(partner, &r, 1, &o, 1) == 0);
    long packs = antheap_debug_packs() - p, want = k == MC_QUERY ? 1 - memo : 1;
    if (packs != want)
      fprintf(stderr, "test_api: worker %d: a send back after change %d packed %ld times, "
              "not %ld\n", me, k, packs, want);
    CHECK(packs == want);
  }
  CHECK(sys_rfree(scratch) == 0);
}

/* An empty child has no range: its memo cannot be seen to overlap its parent's move. Worker
 * me even sends child R alone and gets it back (a memo with no range), then sends the parent
 * P, which comes back with an object in R: sending R now must pack (a send that packs
 * forgets every memo), or R would go with an empty list. */
static void move_memo_empty_child(int me, int partner) {
  rid_t pr, ch;
  void *o;
  if (me % 2 == 0) {
    pr = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    ch = sys_ralloc(pr, SYS_NO_LEVEL_HINT);
    o = sys_alloc(64, pr);
    CHECK(pr && ch && o);
    CHECK(sys_send(partner, &ch, 1, NULL, 0) == 0);
    CHECK(sys_recv(partner, &ch, 1, NULL, 0) == 0);
    CHECK(sys_send(partner, &pr, 1, &o, 1) == 0);
    CHECK(sys_recv(partner, &pr, 1, &o, 1) == 0);
    long p = antheap_debug_packs();
    CHECK(sys_send(partner, &ch, 1, NULL, 0) == 0);
    CHECK(antheap_debug_packs() == p + 1);
    CHECK(sys_recv(partner, &ch, 1, NULL, 0) == 0);
    CHECK(sys_rfree(pr) == 0);
    return;
  }
  CHECK(sys_recv(partner, &ch, 1, NULL, 0) == 0);
  CHECK(sys_send(partner, &ch, 1, NULL, 0) == 0);
  CHECK(sys_recv(partner, &pr, 1, &o, 1) == 0);
  CHECK(sys_alloc(64, ch) != NULL); /* the child is no longer empty */
  CHECK(sys_send(partner, &pr, 1, &o, 1) == 0);
  CHECK(sys_recv(partner, &ch, 1, NULL, 0) == 0);
  CHECK(sys_send(partner, &ch, 1, NULL, 0) == 0);
}

/* A barrier may hand regions over (antheap.h): a region received before it packs after it. */
static void move_memo_barrier(int me, int partner) {
  rid_t r = 0;
  void *o = NULL;
  if (partner >= 0 && me % 2 == 0) {
    r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    o = sys_alloc(64, r);
    CHECK(o != NULL);
    CHECK(sys_send(partner, &r, 1, &o, 1) == 0);
  } else if (partner >= 0) {
    CHECK(sys_recv(partner, &r, 1, &o, 1) == 0);
  }
  sys_barrier();
  if (partner < 0) return;
  if (me % 2 == 0) {
    CHECK(sys_recv(partner, &r, 1, &o, 1) == 0);
    CHECK(sys_rfree(r) == 0);
    return;
  }
  long p = antheap_debug_packs();
  CHECK(sys_send(partner, &r, 1, &o, 1) == 0);
  CHECK(antheap_debug_packs() == p + 1);
}

int main(int argc, char **argv) {
  if (sys_init(&argc, &argv)) {
    fprintf(stderr, "test_api: sys_init failed: %s\n", sys_strerror(errno));
    return 1;
  }
  test_regions_and_objects();
  test_level_hints();
  test_wrong_usage();
  test_cross_scheduler_frees();
  test_transfer();
  test_move_memo();
  test_shares_gas();
  test_host_load();
  int bad = check_summary(sys_comm(), "");
  sys_finalize();
  return bad ? 1 : 0;
}

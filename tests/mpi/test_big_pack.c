/* test_big_pack.c: packs of any size (issue 32). A region whose live objects lie in more
 * separate ranges than one reply carries must move, arrive intact and be freed with its pages
 * given back; its hand-over keeps both rounds of the rule. It links the library whose
 * schedulers send pack replies of 64 words (32 ranges: antheap_small_replies), so that a region of a few
 * thousand ranges takes dozens of replies, also between schedulers (a region on the root
 * whose children live on a leaf: their parts continue too), with --antheap-retain 0 (every
 * region of 1 MiB or more gives its pages back at sys_rfree).
 *
 * Workers 0 and 1 (others, if any, only join the barriers):
 *   1. worker 0 builds a region of F separate ranges (2F objects of a slab, every other one
 *      freed), writes each kept object, sends it to worker 1; worker 1 checks every object,
 *      the region's ranges (a send of it packs them: F ranges), that worker 0 may no longer
 *      free it (EPERM), and frees it: its resident memory goes back down;
 *   2. the same with a region on the root scheduler whose children (fragmented too) live on
 *      the leaf, sent by worker 1 back to worker 0 (its parts continue between schedulers);
 *   3. a move the receiver refuses (other counts): the fragmented region comes back to the
 *      sender, which frees it, pages given back;
 *   4. sys_rfree of a fragmented region never moved: pages given back, in a few calls (what the
 *      region owns, not its F live slabs). */
#define CHECK_NAME "test_big_pack"
#include "worker_check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "worker/debug.h"

#define SLAB 4096
#define F 3000 /* ranges of a region: 94 replies of 32 ranges */
#define KIDS 2 /* children of the region on the root */
/* Pages of a freed region's objects a worker may still have resident (none: every page went
 * back to the OS; a few for a slab the next allocation already took again) */
#define SLACK_PAGES 8

static int me;

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
  return (x > y) - (x < y);
}

/* How many of the n objects' pages are resident in this process (mincore): the region's own
 * pages, whatever the heap (or a sanitizer's quarantine) does meanwhile. */
static size_t resident_pages(void *const *objs, size_t n) {
  size_t res = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char v = 0;
    if (mincore(objs[i], SLAB, &v) == 0 && (v & 1)) res++;
  }
  return res;
}

/* n objects of a slab in region r, every other one freed: the kept ones (n / 2) into kept,
 * each written with its address and index. */
static int fragment(rid_t r, size_t n, void **kept, uint64_t tag) {
  void **all = malloc(n * sizeof *all);
  if (!all || sys_balloc(SLAB, r, (int)n, all)) return free(all), -1;
  qsort(all, n, sizeof *all, cmp_ptr);
  int rc = 0;
  for (size_t i = 0; i < n; i += 2) rc |= sys_free(all[i]);
  for (size_t i = 1; i < n; i += 2) {
    uint64_t *w = all[i];
    w[0] = (uint64_t)(uintptr_t)w ^ tag;
    w[SLAB / 8 - 1] = i / 2;
    kept[i / 2] = w;
  }
  free(all);
  return rc;
}

static int intact(void *const *kept, size_t n, uint64_t tag) {
  for (size_t i = 0; i < n; i++) {
    const uint64_t *w = kept[i];
    if (w[0] != ((uint64_t)(uintptr_t)w ^ tag) || w[SLAB / 8 - 1] != i) return 0;
  }
  return 1;
}

/* 1: worker 0 -> worker 1, a leaf region of F ranges. */
static void leaf_region_moves_and_is_freed(void) {
  void **kept = malloc(F * sizeof *kept);
  if (me == 0) {
    rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    CHECK(r != 0);
    CHECK(fragment(r, 2 * F, kept, 0x1111) == 0);
    MPI_Send(kept, F, MPI_UINT64_T, 1, 1, sys_comm());
    long parts = antheap_debug_reply_parts();
    CHECK(sys_send(1, &r, 1, NULL, 0) == 0);
    CHECK(antheap_debug_reply_parts() - parts >= F / 32 - 1); /* its pack came in ~94 replies */
    CHECK(sys_rfree(r) == -1 && errno == EPERM); /* handed over: no longer ours */
    MPI_Send(&r, 1, MPI_UINT32_T, 1, 2, sys_comm());
  } else if (me == 1) {
    MPI_Recv(kept, F, MPI_UINT64_T, 0, 1, sys_comm(), MPI_STATUS_IGNORE);
    rid_t got, sent;
    CHECK(sys_recv(0, &got, 1, NULL, 0) == 0);
    MPI_Recv(&sent, 1, MPI_UINT32_T, 0, 2, sys_comm(), MPI_STATUS_IGNORE);
    CHECK(got == sent);
    CHECK(intact(kept, F, 0x1111));
    CHECK(resident_pages(kept, F) == F); /* its pages are here */
    CHECK(sys_rfree(got) == 0);
    size_t after = resident_pages(kept, F);
    CHECK(after <= SLACK_PAGES); /* every page given back */
    if (after > SLACK_PAGES) fprintf(stderr, "test_big_pack: %zu of %d pages still resident\n", after, F);
  }
  free(kept);
  sys_barrier();
}

/* 2: worker 1 -> worker 0, a region on the root (level 0) with fragmented children on the
 * leaf: the leaf's parts of the pack continue over many replies to the root. */
static void root_region_with_leaf_children_moves(void) {
  void **kept = malloc((KIDS + 1) * F / 2 * sizeof *kept);
  size_t per = F / 2, total = (KIDS + 1) * per;
  if (me == 1) {
    rid_t r = sys_ralloc(SYS_ROOT_REGION, 0);
    CHECK(r != 0);
    CHECK(fragment(r, 2 * per, kept, 0x2222) == 0);
    for (int k = 0; k < KIDS; k++) {
      rid_t kid = sys_ralloc(r, SYS_NO_LEVEL_HINT);
      CHECK(kid != 0);
      CHECK(fragment(kid, 2 * per, kept + (k + 1) * per, 0x2222) == 0);
    }
    MPI_Send(kept, (int)total, MPI_UINT64_T, 0, 3, sys_comm());
    CHECK(sys_send(0, &r, 1, NULL, 0) == 0);
  } else if (me == 0) {
    MPI_Recv(kept, (int)total, MPI_UINT64_T, 1, 3, sys_comm(), MPI_STATUS_IGNORE);
    rid_t got;
    CHECK(sys_recv(1, &got, 1, NULL, 0) == 0);
    for (int k = 0; k <= KIDS; k++) CHECK(intact(kept + k * per, per, 0x2222));
    CHECK(sys_rfree(got) == 0); /* with its children, wherever they live */
  }
  free(kept);
  sys_barrier();
}

/* 3: a move the receiver refuses comes back: the sender frees the region, pages given back. */
static void refused_move_comes_back(void) {
  void **kept = malloc(F * sizeof *kept);
  if (me == 0) {
    rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    CHECK(fragment(r, 2 * F, kept, 0x3333) == 0);
    CHECK(sys_send(1, &r, 1, NULL, 0) == -1 && errno == ECONNREFUSED);
    CHECK(intact(kept, F, 0x3333));
    CHECK(sys_rfree(r) == 0); /* handed back: ours again */
    CHECK(resident_pages(kept, F) <= SLACK_PAGES);
  } else if (me == 1) {
    rid_t two[2];
    CHECK(sys_recv(0, two, 2, NULL, 0) == -1 && errno == EINVAL); /* other counts */
  }
  free(kept);
  sys_barrier();
}

/* 4: a fragmented region never moved is freed with its pages given back. */
static void rfree_gives_every_page_back(void) {
  if (me != 0) {
    sys_barrier();
    return;
  }
  void **kept = malloc(F * sizeof *kept);
  rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  CHECK(fragment(r, 2 * F, kept, 0x4444) == 0);
  CHECK(resident_pages(kept, F) == F);
  long parts = antheap_debug_reply_parts();
  CHECK(sys_rfree(r) == 0);
  /* what is given back is what the region owns (a few ranges), not its F live slabs */
  CHECK(antheap_debug_reply_parts() - parts < 3);
  CHECK(resident_pages(kept, F) <= SLACK_PAGES);
  free(kept);
  sys_barrier();
}

int main(int argc, char **argv) {
  if (sys_init(&argc, &argv)) return 1;
  me = sys_worker_id();
  if (sys_workers() < 2) {
    if (me == 0) fprintf(stderr, "test_big_pack: needs 2 workers\n");
    sys_finalize();
    return 1;
  }
  /* objects of the scheduler, not of the cache: its frees make the holes at once */
  CHECK(antheap_debug_set_cache(0) == 0);
  leaf_region_moves_and_is_freed();
  root_region_with_leaf_children_moves();
  refused_move_comes_back();
  rfree_gives_every_page_back();
  int bad = check_summary(sys_comm(), "");
  sys_finalize();
  return bad;
}

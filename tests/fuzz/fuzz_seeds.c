/* fuzz_seeds.c: writes a few valid inputs for fuzz_server (format in fuzz_input.h) into the
 * directory named on the command line: every worker request once, in both job shapes, a
 * scheduler's own messages, and single raw messages for the decoder. Built with proto_build.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/types.h"
#include "fuzz_input.h"
#include "proto/proto.h"

typedef struct {
  unsigned char buf[8192];
  size_t len;
} seed;

static void put(seed *s, const void *p, size_t n) {
  if (s->len + n > sizeof s->buf) abort();
  memcpy(s->buf + s->len, p, n);
  s->len += n;
}

/* One record: a message of type from rank index src (see fuzz_input.h), to its neighbour. */
static void rec(seed *s, unsigned src, unsigned type, int32_t origin, const void *fixed,
                const uint64_t *tail, uint32_t ntail) {
  unsigned char msg[1024];
  size_t len = proto_build(msg, sizeof msg, type, s->len, origin, PROTO_NO_DEST, 0, -1, fixed,
                           tail, ntail);
  unsigned char hdr[3] = {(unsigned char)(FUZZ_SEL_NATURAL | FUZZ_SEL_REPAIR | src),
                          (unsigned char)len, (unsigned char)(len >> 8)};
  put(s, hdr, 3);
  put(s, msg, len);
}

/* Every worker request, from the worker of rank `rank` (source index rank + 1). */
static void worker_requests(seed *s, int rank) {
  unsigned src = (unsigned)rank + 1;
  uint64_t base = AH_GAS_DEFAULT_BASE;
  proto_ralloc ra = {.parent = 0, .level_hint = -1};
  proto_alloc al = {.size = 64, .rid = 0, .n = 1}, ba = {.size = 32, .rid = 1, .n = 4};
  proto_addr ad = {.addr = base};
  proto_realloc re = {.addr = base, .size = 256, .rid = UINT32_MAX};
  proto_lease le = {.size = 64, .rid = 0, .want = 4, .min = 1};
  proto_unlease un = {.n = 1};
  uint64_t untail[2] = {base, 0};
  proto_packv pv = {.nreg = 1, .nobj = 1};
  uint64_t pvtail[2] = {1, base};
  proto_rid one = {.rid = 1};
  rec(s, src, MSG_RALLOC, rank, &ra, NULL, 0);
  rec(s, src, MSG_ALLOC, rank, &al, NULL, 0);
  rec(s, src, MSG_BALLOC, rank, &ba, NULL, 0);
  rec(s, src, MSG_QUERY, rank, &ad, NULL, 0);
  rec(s, src, MSG_REALLOC, rank, &re, NULL, 0);
  rec(s, src, MSG_FREE, rank, &ad, NULL, 0);
  rec(s, src, MSG_LEASE, rank, &le, NULL, 0);
  rec(s, src, MSG_UNLEASE, rank, &un, untail, 2);
  rec(s, src, MSG_PACKV, rank, &pv, pvtail, 2);
  rec(s, src, MSG_PACK, rank, &one, NULL, 0);
  rec(s, src, MSG_RFREE, rank, &one, NULL, 0);
}

/* A leaf's messages to the root (rank 1 of the tree: source index 2). */
static void scheduler_messages(seed *s) {
  proto_refill rf = {.pages = 4, .ids = 16};
  proto_grant gr = {.page_addr = AH_GAS_DEFAULT_BASE, .npages = 1, .id_first = 5000, .id_count = 1};
  proto_load ld = {.regions = 9};
  proto_created cr = {.rid = 7, .parent = 0};
  proto_return rt = {.nranges = 1, .nids = 1, .nrows = 0};
  uint64_t rtail[4] = {AH_GAS_DEFAULT_BASE, 1 << 20, 5000, 1};
  rec(s, 2, MSG_REFILL, -1, &rf, NULL, 0);
  rec(s, 2, MSG_LOAD, -1, &ld, NULL, 0);
  rec(s, 2, MSG_GIVEBACK, -1, &gr, NULL, 0);
  rec(s, 2, MSG_CREATED, -1, &cr, NULL, 0);
  rec(s, 2, MSG_RETURN, -1, &rt, rtail, 4);
}

static int save(const char *dir, const char *name, const seed *s) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(s->buf, 1, s->len, f) != s->len || fclose(f)) {
    fprintf(stderr, "fuzz_seeds: %s: %s\n", path, strerror(errno));
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fuzz_seeds DIR   (writes seed inputs of fuzz_server into DIR)\n");
    return 2;
  }
  int bad = 0;
  seed s = {.len = 1};
  s.buf[0] = FUZZ_SHAPE_FINALIZE; /* one scheduler, workers 1 and 2 */
  worker_requests(&s, 1);
  bad |= save(argv[1], "seed-one-scheduler", &s);
  s = (seed){.len = 1};
  s.buf[0] = FUZZ_SHAPE_TREE | FUZZ_SHAPE_FINALIZE; /* schedulers 0-2, workers 3-6 */
  worker_requests(&s, 3);
  worker_requests(&s, 6);
  bad |= save(argv[1], "seed-tree", &s);
  s = (seed){.len = 1};
  s.buf[0] = FUZZ_SHAPE_TREE;
  scheduler_messages(&s);
  bad |= save(argv[1], "seed-tree-scheduler-messages", &s);
  proto_alloc ba = {.size = 64, .rid = 0, .n = 2000000000u};
  s.len = proto_build(s.buf, sizeof s.buf, MSG_BALLOC, 1, 1, PROTO_NO_DEST, 0, -1, &ba, NULL, 0);
  bad |= save(argv[1], "seed-raw-balloc-too-many", &s);
  proto_return rt = {.nranges = 1, .nids = 0, .nrows = 0};
  uint64_t tail[2] = {AH_GAS_DEFAULT_BASE, 1 << 20};
  s.len = proto_build(s.buf, sizeof s.buf, MSG_RETURN, 1, -1, PROTO_NO_DEST, 0, -1, &rt, tail, 2);
  bad |= save(argv[1], "seed-raw-return", &s);
  return bad;
}

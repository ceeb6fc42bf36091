/* bench_send.c: moving a region between two ranks (transfer_send/transfer_recv over the
 * region layer's packed ranges) against MPI_Send/MPI_Recv of the same number of bytes from one
 * contiguous buffer, in the same run.
 *
 * Rank 0 lays out a region of 1 MiB .. --max-mib MiB of objects of 64 B, 256 B or 4 KiB with
 * the real region layer over its GAS: alone (its slabs contiguous: few ranges), or interleaved
 * with a second region allocated object by object beside it (its slabs scattered: many short
 * ranges). It packs the region (region_pack: used slabs coalesced into ranges) and ping-pongs
 * it with rank 1, which needs only the list it receives. With --antheap-share host (the
 * library's default, as there from ANTHEAP_SHARE) the two ranks map the GAS from one memory
 * object (share.h) and the run measures the zero-copy move (mode shared), which sends the list
 * alone, beside the copy; two ranks that cannot share (other hosts) measure the copy alone, as
 * with --antheap-share none, where every move copies (the cluster case: run it on shared memory
 * and over TCP). Reported: pack time, one-way move
 * time (half the round trip), one-way MPI time, bandwidths and ratio = MPI time / move time
 * (the data's speed against MPI_Send; goal >= 0.9 from 1 MiB), ratio_pack with the pack time
 * added; in copy mode also plain MPI with a message per range (mpi_ranges_us, ratio_ranges):
 * what the number of messages costs MPI itself. Medians over --reps repetitions after one
 * warm-up, in which rank 1 also checks every
 * received word; the ping-pongs alternate.
 *
 * Run: mpirun -np 2 bench-send [--reps R] [--max-mib M] [--antheap-share host|none] [--csv PATH]
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "region/region.h"
#include "worker/gas.h"
#include "worker/share.h"
#include "worker/transfer.h"

#define TAG 11
#define MAXREPS 200

static int rank;
static bool near; /* MPI reaches the peer through shared memory: long ranges go in pieces */

_Noreturn static void die(const char *what, int rc) {
  fprintf(stderr, "bench-send: rank %d: %s failed (error %d: %s)\n", rank, what, rc, strerror(rc));
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1); /* (MPI_Abort may return) */
}

/* ---- rank 0: a region layer over the GAS ------------------------------------------------ */

/* The kernel pool's memory: 64 MiB chunks from aligned_alloc (freed at exit by the OS). */
static int kernel_grow(void *ctx, size_t min_bytes, uintptr_t *addr, size_t *len) {
  (void)ctx;
  size_t sz = ah_round_up(min_bytes > ((size_t)64 << 20) ? min_bytes : (size_t)64 << 20, AH_SLAB_SIZE);
  void *p = aligned_alloc(AH_SLAB_SIZE, sz);
  if (!p) return ENOMEM;
  *addr = (uintptr_t)p;
  *len = sz;
  return 0;
}

static region_layer *make_layer(const gas_bounds *gas) {
  slab_config kc = slab_config_default();
  kc.grow = kernel_grow;
  uintptr_t a;
  size_t len;
  slab_pool *kernel;
  int rc = kernel_grow(NULL, 0, &a, &len);
  if (rc || (rc = slab_pool_create_self_hosted(&kernel, (void *)a, len, &kc))) die("kernel pool", rc);
  region_config cfg = region_config_default();
  cfg.gas_base = gas->base;
  cfg.gas_size = gas->size;
  region_layer *L;
  if ((rc = region_layer_create(&L, &cfg, kernel)) ||
      (rc = region_layer_add_range(L, gas->base, gas->size)) ||
      (rc = region_layer_add_ids(L, 1, 1000)))
    die("region layer", rc);
  return L;
}

/* A growable list of ranges, filled by region_pack. */
typedef struct {
  gas_range *r;
  size_t n, cap;
} range_vec;

static int collect(void *ctx, uintptr_t addr, size_t len) {
  range_vec *v = ctx;
  if (v->n == v->cap) {
    size_t cap = v->cap ? 2 * v->cap : 64;
    gas_range *r = realloc(v->r, cap * sizeof *r);
    if (!r) return ENOMEM;
    v->r = r, v->cap = cap;
  }
  v->r[v->n++] = (gas_range){addr, len};
  return 0;
}

static void pack(region_layer *L, rid_t rid, range_vec *v) {
  size_t n;
  v->n = 0;
  int rc = region_pack(L, &rid, 1, NULL, 0, collect, v, &n);
  if (rc) die("region_pack", rc);
}

static uint64_t pattern(uintptr_t a) { return (uint64_t)a * 0x9E3779B97F4A7C15ull; }

/* Fill every packed word (objects and the free slots between them) with its pattern. */
static void fill(const range_vec *v) {
  for (size_t i = 0; i < v->n; i++)
    for (uintptr_t a = v->r[i].addr; a < v->r[i].addr + v->r[i].len; a += 8) *(uint64_t *)a = pattern(a);
}

static int check(const gas_range *r, size_t n) {
  for (size_t i = 0; i < n; i++)
    for (uintptr_t a = r[i].addr; a < r[i].addr + r[i].len; a += 8)
      if (*(uint64_t *)a != pattern(a)) return 0;
  return 1;
}

/* ---- one measurement --------------------------------------------------------------------- */

typedef struct {
  size_t obj, bytes;
  bool interleaved;
  transfer_mode mode;
} config;

typedef struct {
  double pack_ns, xfer_ns, mpi_ns; /* medians; xfer and mpi one-way */
  double ranges_ns;                /* plain MPI, a message per range (copy mode; else 0) */
  size_t ranges, bytes, objects;
} result;

static int shared_ok(void *ctx, int src, transfer_mode mode, const uint64_t *extra, uint32_t n) {
  (void)ctx, (void)src, (void)extra, (void)n;
  return mode == TRANSFER_COPY || gas_is_shared() ? 0 : EPROTO;
}

/* One region ping-pong; rank 0 returns pack time in *pack_ns and the round trip. */
static double xfer_pingpong(region_layer *L, rid_t rid, range_vec *v, transfer_mode mode,
                            double *pack_ns, int verify) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = bench_now_ns();
  if (rank == 0) {
    pack(L, rid, v);
    double t1 = bench_now_ns();
    transfer_list list = {NULL, 0, v->r, v->n};
    int rc = transfer_send((transfer_link){MPI_COMM_WORLD, 1, TAG}, mode, near, &list, NULL);
    transfer_receipt back;
    transfer_policy policy = {.accept = shared_ok};
    if (rc || (rc = transfer_recv((transfer_link){MPI_COMM_WORLD, 1, TAG}, &policy, &back)))
      die("transfer", rc);
    double t2 = bench_now_ns();
    free(back.r);
    free(back.extra);
    *pack_ns = t1 - t0;
    return t2 - t1;
  }
  transfer_receipt received;
  transfer_policy policy = {.accept = shared_ok};
  int rc = transfer_recv((transfer_link){MPI_COMM_WORLD, 0, TAG}, &policy, &received);
  if (rc) die("transfer_recv", rc);
  free(received.extra);
  gas_range *got = received.r;
  size_t n = received.n;
  if (verify && !check(got, n)) {
    fprintf(stderr, "bench-send: rank 1: received data differs from what rank 0 sent\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  transfer_list list = {NULL, 0, got, n};
  rc = transfer_send((transfer_link){MPI_COMM_WORLD, 0, TAG}, mode, near, &list, NULL);
  if (rc) die("transfer_send", rc);
  free(got);
  return 0;
}

static double mpi_pingpong(char *buf, size_t bytes) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = bench_now_ns();
  int peer = 1 - rank;
  if (rank == 0) {
    MPI_Send(buf, (int)bytes, MPI_BYTE, peer, TAG, MPI_COMM_WORLD);
    MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(buf, (int)bytes, MPI_BYTE, peer, TAG, MPI_COMM_WORLD);
  }
  return bench_now_ns() - t0;
}

/* The same ranges with plain MPI, one message each, all in flight (no antheap protocol): what
 * the number of messages costs the MPI library itself. */
static double ranges_pingpong(const range_vec *v) {
  enum { MAXR = 256 };
  MPI_Request rq[MAXR];
  int n = v->n < MAXR ? (int)v->n : MAXR, peer = 1 - rank;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = bench_now_ns();
  for (int leg = 0; leg < 2; leg++) {
    bool sending = (leg == 0) == (rank == 0);
    for (int i = 0; i < n; i++) {
      void *p = (void *)v->r[i].addr;
      int len = (int)v->r[i].len;
      if (sending) MPI_Isend(p, len, MPI_BYTE, peer, TAG + 1 + i, MPI_COMM_WORLD, &rq[i]);
      else MPI_Irecv(p, len, MPI_BYTE, peer, TAG + 1 + i, MPI_COMM_WORLD, &rq[i]);
    }
    MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
  }
  return bench_now_ns() - t0;
}

/* Rank 1 learns rank 0's ranges (the same addresses: the GAS is mapped alike). */
static void share_ranges(range_vec *v) {
  uint64_t n = v->n;
  MPI_Bcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (rank != 0) {
    v->r = realloc(v->r, (n ? n : 1) * sizeof *v->r);
    if (!v->r) die("malloc of the range list", ENOMEM);
    v->n = v->cap = (size_t)n;
  }
  MPI_Bcast(v->r, (int)(n * sizeof *v->r), MPI_BYTE, 0, MPI_COMM_WORLD);
}

/* Rank 0 builds the region (and, interleaved, a second one beside it, object by object);
 * both ranks learn its packed shape. *other gets the second region (0 when none). */
static rid_t build_region(region_layer *L, const config *c, range_vec *v, result *res, rid_t *other) {
  rid_t rid = 0, rid2 = 0;
  uint64_t shape[3] = {0, 0, 0};
  if (rank == 0) {
    int rc = region_create(L, REGION_ROOT, 0, &rid);
    if (!rc && c->interleaved) rc = region_create(L, REGION_ROOT, 0, &rid2);
    size_t n = c->bytes / c->obj;
    uintptr_t a;
    for (size_t i = 0; !rc && i < n; i++) {
      rc = region_alloc(L, c->obj, rid, &a);
      if (!rc && rid2) rc = region_alloc(L, c->obj, rid2, &a);
    }
    if (rc) die("region_alloc", rc);
    pack(L, rid, v);
    fill(v);
    shape[0] = v->n;
    for (size_t i = 0; i < v->n; i++) shape[1] += v->r[i].len;
    shape[2] = n;
  }
  MPI_Bcast(shape, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  res->ranges = (size_t)shape[0];
  res->bytes = (size_t)shape[1];
  res->objects = (size_t)shape[2];
  *other = rid2;
  return rid;
}

static result measure(region_layer *L, const config *c, int reps) {
  result res;
  range_vec v = {0};
  rid_t other;
  rid_t rid = build_region(L, c, &v, &res, &other);
  if (res.bytes > INT_MAX) die("contiguous baseline (region larger than INT_MAX bytes)", EOVERFLOW);
  char *buf = malloc(res.bytes);
  if (!buf) die("malloc of the baseline buffer", ENOMEM);
  memset(buf, rank + 1, res.bytes);
  double pk[MAXREPS], xf[MAXREPS], mp[MAXREPS], rg[MAXREPS], dummy;
  xfer_pingpong(L, rid, &v, c->mode, &dummy, 1); /* warm-up: pages touched, data checked */
  mpi_pingpong(buf, res.bytes);
  range_vec plain = {0};
  bool per_range = c->mode == TRANSFER_COPY;
  if (per_range) {
    if (rank == 0) pack(L, rid, &plain);
    share_ranges(&plain);
    ranges_pingpong(&plain);
  }
  for (int i = 0; i < reps; i++) { /* interleaved, order alternating: drifts hit both */
    if (i % 2) mp[i] = mpi_pingpong(buf, res.bytes) / 2;
    xf[i] = xfer_pingpong(L, rid, &v, c->mode, &pk[i], 0) / 2;
    if (i % 2 == 0) mp[i] = mpi_pingpong(buf, res.bytes) / 2;
    rg[i] = per_range ? ranges_pingpong(&plain) / 2 : 0;
  }
  free(plain.r);
  res.pack_ns = bench_median(pk, (size_t)reps);
  res.xfer_ns = bench_median(xf, (size_t)reps);
  res.mpi_ns = bench_median(mp, (size_t)reps);
  res.ranges_ns = bench_median(rg, (size_t)reps);
  free(buf);
  free(v.r);
  if (rank == 0 && (region_free(L, rid) || (other && region_free(L, other))))
    die("region_free", EINVAL);
  return res;
}

/* ---- table and driver ---------------------------------------------------------------------- */

#define NCOLS 17
static const char *const cols[NCOLS] = {"mode",   "obj_bytes", "layout", "objects", "ranges",
                                        "bytes",  "pack_us",   "xfer_us", "mpi_us", "xfer_MBps",
                                        "mpi_MBps", "ratio",   "ratio_pack", "share",
                                        "mpi_ranges_us", "ratio_ranges", "pieces"};

static void add_row(bench_table *t, const config *c, const result *r, const char *share) {
  char f[NCOLS][32];
  snprintf(f[0], 32, "%s", c->mode == TRANSFER_SHARED ? "shared" : "copy");
  snprintf(f[1], 32, "%zu", c->obj);
  snprintf(f[2], 32, "%s", c->interleaved ? "scattered" : "contiguous");
  snprintf(f[3], 32, "%zu", r->objects);
  snprintf(f[4], 32, "%zu", r->ranges);
  snprintf(f[5], 32, "%zu", r->bytes);
  snprintf(f[6], 32, "%.1f", r->pack_ns / 1e3);
  snprintf(f[7], 32, "%.1f", r->xfer_ns / 1e3);
  snprintf(f[8], 32, "%.1f", r->mpi_ns / 1e3);
  snprintf(f[9], 32, "%.0f", r->bytes / r->xfer_ns * 1e3);
  snprintf(f[10], 32, "%.0f", r->bytes / r->mpi_ns * 1e3);
  snprintf(f[11], 32, "%.3f", r->mpi_ns / r->xfer_ns);
  snprintf(f[12], 32, "%.3f", r->mpi_ns / (r->xfer_ns + r->pack_ns));
  snprintf(f[13], 32, "%s", share);
  if (r->ranges_ns > 0) {
    snprintf(f[14], 32, "%.1f", r->ranges_ns / 1e3);
    snprintf(f[15], 32, "%.3f", r->mpi_ns / r->ranges_ns);
  } else {
    snprintf(f[14], 32, "-");
    snprintf(f[15], 32, "-");
  }
  snprintf(f[16], 32, "%s", c->mode == TRANSFER_COPY && near ? "yes" : "no");
  const char *cells[NCOLS];
  for (int i = 0; i < NCOLS; i++) cells[i] = f[i];
  bench_table_row(t, cells);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: mpirun -np 2 bench-send [--reps R] [--max-mib M] [--antheap-share host|none]\n"
          "                               [--quick] [--csv PATH]\n"
          "  A region move (pack + transfer_send/recv) vs MPI_Send of the same bytes from one\n"
          "  contiguous buffer; regions of 1, 16, 256, 1024 MiB (up to M) of 64 B, 256 B and 4 KiB\n"
          "  objects, contiguous or scattered (interleaved with another region).\n"
          "  --reps R        repetitions per point, median reported (default 9, at most %d)\n"
          "  --max-mib M     largest region in MiB (default 256; 1024 for the 1 GiB rows)\n"
          "  --antheap-share MODE  the library's option: host (default; ANTHEAP_SHARE sets\n"
          "                  the default, as for antheap): the two ranks share the GAS memory, and\n"
          "                  shared (zero-copy) rows are measured beside the copy rows (copy rows\n"
          "                  alone where they cannot share); none: every move copies\n"
          "  --quick         1 MiB and 16 MiB, 3 reps\n"
          "  --csv PATH      CSV output (default results/bench-send.csv; written afresh)\n"
          "  GAS base: ANTHEAP_GAS_BASE (default 0x%jx), size 64 GiB. Run it on shared memory\n"
          "  and over TCP (mpirun --mca pml ob1 --mca btl tcp,self) for both copy paths.\n",
          MAXREPS, (uintmax_t)AH_GAS_BUILD_BASE);
}

typedef struct {
  int reps;
  size_t max_mib;
  bool share, quick;
  const char *csv;
} options;

/* --antheap-share's value (or ANTHEAP_SHARE's, named by what) into *share; 0, or 2 after a
 * message. */
static int parse_share(const char *what, const char *v, bool *share) {
  if (strcmp(v, "host") && strcmp(v, "none")) {
    if (rank == 0) fprintf(stderr, "bench-send: %s %s: expected host or none\n", what, v);
    return 2;
  }
  *share = strcmp(v, "host") == 0;
  return 0;
}

/* Returns -1 to go on, else an exit code. */
static int parse(int argc, char **argv, options *o) {
  static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {"reps", required_argument, 0, 'r'},
                                       {"max-mib", required_argument, 0, 'm'}, {"csv", required_argument, 0, 'c'},
                                       {"antheap-share", required_argument, 0, 's'}, {"quick", no_argument, 0, 'q'},
                                       {"share", required_argument, 0, 'S'}, {0, 0, 0, 0}};
  *o = (options){9, 256, true, false, "results/bench-send.csv"};
  const char *env = getenv("ANTHEAP_SHARE"); /* the library's default, and its variable */
  if (env && *env && parse_share("ANTHEAP_SHARE", env, &o->share)) return 2;
  for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
    switch (c) {
      case 'h': if (rank == 0) usage(stdout); return 0;
      case 'r': o->reps = atoi(optarg); break;
      case 'm': o->max_mib = strtoull(optarg, NULL, 0); break;
      case 'c': o->csv = optarg; break;
      case 'q': o->quick = true; break;
      case 's':
        if (parse_share("--antheap-share", optarg, &o->share)) return 2;
        break;
      case 'S':
        if (rank == 0)
          fprintf(stderr, "bench-send: --share is now --antheap-share (the library's option: "
                          "host, the default, or none)\n");
        return 2;
      default: if (rank == 0) usage(stderr); return 2;
    }
  }
  if (o->quick) o->reps = 3, o->max_mib = 16;
  if (o->reps < 1 || o->reps > MAXREPS || o->max_mib < 1 || o->max_mib > 1024) {
    if (rank == 0) fprintf(stderr, "bench-send: --reps must be 1..%d, --max-mib 1..1024\n", MAXREPS);
    return 2;
  }
  return -1;
}

static const gas_bounds *map_gas(bool share, share_group *g) {
  const char *s = getenv("ANTHEAP_GAS_BASE");
  uintptr_t base = s && *s ? (uintptr_t)strtoull(s, NULL, 0) : AH_GAS_BUILD_BASE;
  char err[512];
  int rc = share_map_gas(MPI_COMM_WORLD, share, SHARE_MAX_OBJECTS, 1, base, AH_GAS_DEFAULT_SIZE, g,
                         err, sizeof err);
  if (rc) {
    fprintf(stderr, "bench-send: rank %d: %s\n", rank, err);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return gas_current();
}

/* Whether the run measures shared moves: asked for, and the two ranks share the GAS (as the
 * library, two ranks that cannot share copy). */
static bool shared_rows(bool share, const share_group *g) {
  if (!share || share_with(g, 1 - rank)) return share;
  if (rank == 0)
    fprintf(stderr, "bench-send: --antheap-share host: the two ranks do not share the GAS (two "
                    "hosts, or this host's GAS is %s): copy rows only\n", g->how);
  return false;
}

static void run(const options *o) {
  static const size_t objs[] = {64, 256, 4096}, mibs[] = {1, 16, 256, 1024};
  share_group g;
  const gas_bounds *gas = map_gas(o->share, &g);
  bool shared = shared_rows(o->share, &g);
  near = share_near(&g, 1 - rank);
  region_layer *L = rank == 0 ? make_layer(gas) : NULL;
  const char *share = shared ? "host" : "none";
  bench_table *t = rank != 0 ? NULL : bench_table_new("bench-send: region move (pack + transfer) vs "
                                   "MPI_Send of the same bytes, one-way, 2 ranks; ratio = mpi_us / "
                                   "xfer_us (the data), ratio_pack = mpi_us / (pack_us + xfer_us), "
                                   "ratio_ranges = mpi_us / mpi_ranges_us (plain MPI, a message per range), "
                                   "pieces: long ranges cut for MPI's shared-memory path",
                                   NCOLS, cols);
  for (int m = shared ? 1 : 0; m >= 0; m--)
    for (unsigned k = 0; k < 4 && mibs[k] <= o->max_mib; k++)
      for (unsigned s = 0; s < 3; s++)
        for (int inter = 0; inter < 2; inter++) {
          size_t mib = mibs[k];
          config c = {objs[s], mib << 20, inter, m ? TRANSFER_SHARED : TRANSFER_COPY};
          if (rank == 0)
            fprintf(stderr, "bench-send: %s, %zu MiB of %zu-B objects, %s\n", m ? "shared" : "copy",
                    mib, c.obj, inter ? "scattered" : "contiguous");
          result r = measure(L, &c, o->reps);
          if (rank == 0) add_row(t, &c, &r, share);
        }
  if (rank == 0) bench_table_finish(t, o->csv);
  share_free(&g);
}

int main(int argc, char **argv) {
  if (bench_wants_help(argc, argv)) { /* before MPI_Init: --help needs no mpirun */
    usage(stdout);
    return 0;
  }
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  options o;
  int code = parse(argc, argv, &o);
  if (code < 0 && size != 2) {
    if (rank == 0) fprintf(stderr, "bench-send: needs exactly 2 ranks (mpirun -np 2), got %d\n", size);
    code = 2;
  }
  if (code < 0) {
    run(&o);
    code = 0;
  }
  MPI_Finalize();
  return code;
}

/* bench_send.c: sending a region between two ranks (transfer_send/transfer_recv over the
 * region layer's packed ranges) against MPI_Send/MPI_Recv of the same number of bytes from one
 * contiguous buffer, in the same run.
 *
 * Rank 0 lays out a region of n objects (1e3..1e6, of 64 B and 256 B) with the real region
 * layer over its GAS, packs it (region_pack: used slabs coalesced into ranges) and ping-pongs
 * it with rank 1, which needs only the ranges it receives. Reported: pack time, one-way
 * transfer time (half the round trip), one-way MPI time, bandwidths (transfer including pack)
 * and their ratio (goal >= 0.9 for large regions). Medians over --reps repetitions after one
 * warm-up, in which rank 1 also checks every received word; the two ping-pongs alternate.
 *
 * Run: mpirun -np 2 bench-send [--reps R] [--max N] [--csv PATH]
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
#include "worker/transfer.h"

#define TAG 11
#define MAXREPS 200

static int rank;

static void die(const char *what, int rc) {
  fprintf(stderr, "bench-send: rank %d: %s failed (error %d: %s)\n", rank, what, rc, strerror(rc));
  MPI_Abort(MPI_COMM_WORLD, 1);
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
  size_t obj, count;
} config;

typedef struct {
  double pack_ns, xfer_ns, mpi_ns; /* medians; xfer and mpi one-way */
  size_t ranges, bytes;
} result;

/* One region ping-pong; rank 0 returns pack time in *pack_ns and the round trip. */
static double xfer_pingpong(region_layer *L, rid_t rid, range_vec *v, double *pack_ns, int verify) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = bench_now_ns();
  if (rank == 0) {
    pack(L, rid, v);
    double t1 = bench_now_ns();
    int rc = transfer_send(MPI_COMM_WORLD, 1, TAG, v->r, v->n);
    gas_range *back;
    size_t nb;
    if (rc || (rc = transfer_recv(MPI_COMM_WORLD, 1, TAG, &back, &nb, NULL))) die("transfer", rc);
    double t2 = bench_now_ns();
    free(back);
    *pack_ns = t1 - t0;
    return t2 - t1;
  }
  gas_range *got;
  size_t n;
  int rc = transfer_recv(MPI_COMM_WORLD, 0, TAG, &got, &n, NULL);
  if (rc) die("transfer_recv", rc);
  if (verify && !check(got, n)) {
    fprintf(stderr, "bench-send: rank 1: received data differs from what rank 0 sent\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if ((rc = transfer_send(MPI_COMM_WORLD, 0, TAG, got, n))) die("transfer_send", rc);
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

/* Rank 0 builds the region; both ranks learn its packed size. */
static rid_t build_region(region_layer *L, const config *c, range_vec *v, result *res) {
  rid_t rid = 0;
  uint64_t shape[2] = {0, 0};
  if (rank == 0) {
    int rc = region_create(L, REGION_ROOT, 0, &rid);
    uintptr_t a;
    for (size_t i = 0; !rc && i < c->count; i++) rc = region_alloc(L, c->obj, rid, &a);
    if (rc) die("region_alloc", rc);
    pack(L, rid, v);
    fill(v);
    shape[0] = v->n;
    for (size_t i = 0; i < v->n; i++) shape[1] += v->r[i].len;
  }
  MPI_Bcast(shape, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  res->ranges = (size_t)shape[0];
  res->bytes = (size_t)shape[1];
  return rid;
}

static result measure(region_layer *L, const config *c, int reps) {
  result res;
  range_vec v = {0};
  rid_t rid = build_region(L, c, &v, &res);
  if (res.bytes > INT_MAX) die("contiguous baseline (region larger than INT_MAX bytes)", EOVERFLOW);
  char *buf = malloc(res.bytes);
  if (!buf) die("malloc of the baseline buffer", ENOMEM);
  memset(buf, rank + 1, res.bytes);
  double pk[MAXREPS], xf[MAXREPS], mp[MAXREPS], dummy;
  xfer_pingpong(L, rid, &v, &dummy, 1); /* warm-up: pages touched, data checked */
  mpi_pingpong(buf, res.bytes);
  for (int i = 0; i < reps; i++) { /* interleaved, order alternating: drifts hit both */
    if (i % 2) mp[i] = mpi_pingpong(buf, res.bytes) / 2;
    xf[i] = xfer_pingpong(L, rid, &v, &pk[i], 0) / 2;
    if (i % 2 == 0) mp[i] = mpi_pingpong(buf, res.bytes) / 2;
  }
  res.pack_ns = bench_median(pk, (size_t)reps);
  res.xfer_ns = bench_median(xf, (size_t)reps);
  res.mpi_ns = bench_median(mp, (size_t)reps);
  free(buf);
  free(v.r);
  if (rank == 0 && region_free(L, rid)) die("region_free", EINVAL);
  return res;
}

/* ---- table and driver ---------------------------------------------------------------------- */

static const char *const cols[] = {"obj_bytes", "objects", "ranges", "bytes", "pack_us", "xfer_us",
                                   "mpi_us", "xfer_MBps", "mpi_MBps", "ratio"};

static void add_row(bench_table *t, const config *c, const result *r) {
  char f[10][32];
  double send_ns = r->pack_ns + r->xfer_ns;
  snprintf(f[0], 32, "%zu", c->obj);
  snprintf(f[1], 32, "%zu", c->count);
  snprintf(f[2], 32, "%zu", r->ranges);
  snprintf(f[3], 32, "%zu", r->bytes);
  snprintf(f[4], 32, "%.1f", r->pack_ns / 1e3);
  snprintf(f[5], 32, "%.1f", r->xfer_ns / 1e3);
  snprintf(f[6], 32, "%.1f", r->mpi_ns / 1e3);
  snprintf(f[7], 32, "%.0f", r->bytes / send_ns * 1e3);
  snprintf(f[8], 32, "%.0f", r->bytes / r->mpi_ns * 1e3);
  snprintf(f[9], 32, "%.3f", r->mpi_ns / send_ns);
  const char *cells[10];
  for (int i = 0; i < 10; i++) cells[i] = f[i];
  bench_table_row(t, cells);
}

static void usage(FILE *f) {
  fprintf(f,
          "usage: mpirun -np 2 bench-send [--reps R] [--max N] [--csv PATH]\n"
          "  Region send (pack + transfer_send/recv over a derived datatype) vs MPI_Send of the\n"
          "  same bytes from one contiguous buffer; regions of 1e3..N objects of 64 and 256 B.\n"
          "  --reps R    repetitions per point, median reported (default 15, at most %d)\n"
          "  --max N     largest object count (default 1000000)\n"
          "  --csv PATH  CSV output (default results/bench-send.csv)\n"
          "  GAS base: ANTHEAP_GAS_BASE (default 0x%jx), size 64 GiB\n",
          MAXREPS, (uintmax_t)GAS_BUILD_BASE);
}

typedef struct {
  int reps;
  size_t max;
  const char *csv;
} options;

/* Returns -1 to go on, else an exit code. */
static int parse(int argc, char **argv, options *o) {
  static const struct option opts[] = {{"help", no_argument, 0, 'h'}, {"reps", required_argument, 0, 'r'},
                                       {"max", required_argument, 0, 'm'}, {"csv", required_argument, 0, 'c'},
                                       {0, 0, 0, 0}};
  *o = (options){15, 1000000, "results/bench-send.csv"};
  for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
    switch (c) {
      case 'h': if (rank == 0) usage(stdout); return 0;
      case 'r': o->reps = atoi(optarg); break;
      case 'm': o->max = strtoull(optarg, NULL, 0); break;
      case 'c': o->csv = optarg; break;
      default: if (rank == 0) usage(stderr); return 2;
    }
  }
  if (o->reps < 1 || o->reps > MAXREPS) {
    if (rank == 0) fprintf(stderr, "bench-send: --reps must be 1..%d\n", MAXREPS);
    return 2;
  }
  return -1;
}

static const gas_bounds *map_gas(void) {
  const char *s = getenv("ANTHEAP_GAS_BASE");
  uintptr_t base = s && *s ? (uintptr_t)strtoull(s, NULL, 0) : GAS_BUILD_BASE;
  char err[512];
  int rc = gas_map(base, AH_GAS_DEFAULT_SIZE, err, sizeof err);
  if (rc) {
    fprintf(stderr, "bench-send: rank %d: %s\n", rank, err);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return gas_current();
}

static void run(const options *o) {
  static const size_t objs[] = {64, 256}, counts[] = {1000, 10000, 100000, 1000000};
  const gas_bounds *gas = map_gas();
  region_layer *L = rank == 0 ? make_layer(gas) : NULL;
  bench_table *t = rank != 0 ? NULL : bench_table_new("bench-send: region send (pack + one derived-datatype message) vs "
                                   "MPI_Send of the same bytes, one-way, 2 ranks",
                                   10, cols);
  for (unsigned s = 0; s < 2; s++)
    for (unsigned k = 0; k < 4 && counts[k] <= o->max; k++) {
      config c = {objs[s], counts[k]};
      if (rank == 0) fprintf(stderr, "bench-send: %zu objects of %zu B\n", c.count, c.obj);
      result r = measure(L, &c, o->reps);
      if (rank == 0) add_row(t, &c, &r);
    }
  if (rank == 0) bench_table_finish(t, o->csv);
}

int main(int argc, char **argv) {
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

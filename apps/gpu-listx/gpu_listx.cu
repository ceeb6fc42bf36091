/* gpu_listx.cu: GPU offload into regions (include/antheap_gpu.h), demonstrated and measured.
 *
 * Demo (mpirun -np 3: a scheduler and two workers): worker 0's kernels build a list of N nodes
 * with dm_malloc in an arena of a region and land it; the region goes to worker 1 (sys_send),
 * which walks the list on the CPU with its plain pointers and modifies every node (with
 * --gpu-walk, once more on its own GPU), then sends it back; worker 0 checks it node by node.
 *
 * Bench (--bench; mpirun -np 2 is enough, worker 0 measures): the same kernels build N nodes
 *   ref        into a plain device heap, then one cudaMemcpy of the arena into pinned memory
 *   device     (b) into device memory mirroring a region's arena, then gpu_arena_land
 *   zero-copy  (a) straight into the region's arena, registered with the GPU
 *   registered into registered host memory outside the GAS (cudaHostRegister of a malloc)
 * and the landing bandwidth against cudaMemcpy's into pinned memory; medians of --reps.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <vector>

#include "antheap_gpu.h"
extern "C" {
#include "bench.h"
}

#define PROG "gpu-listx"

/* A node: a header, then a payload of 16-byte words (pattern gl_word). */
typedef struct gl_node {
  unsigned long long next;   /* GAS address of the next node; 0 ends the list */
  unsigned index, visits;
  unsigned long long value;  /* gl_mix(index, 0) + gl_mix(index, v) for each visit v */
  unsigned long long owner;
} gl_node;

static __host__ __device__ inline unsigned long long gl_mix(unsigned i, unsigned v)
{
  unsigned long long z = ((unsigned long long)v << 32 | i) * 0x9e3779b97f4a7c15ull + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static __host__ __device__ inline uint4 gl_word(unsigned i, unsigned w)
{
  return make_uint4(i, w, i ^ 0x5a5a5a5au, w * 2654435761u);
}

/* Thread i: node i (header and payload written with 16-byte stores); its device address in
 * slots[i]; a NULL (the heap exhausted) counted. */
__global__ void gl_build(gl_node **slots, unsigned n, unsigned size, unsigned owner,
                         unsigned *nulls)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  gl_node *x = (gl_node *)dm_malloc(size);
  slots[i] = x;
  if (!x) {
    atomicAdd(nulls, 1u);
    return;
  }
  uint4 *w = (uint4 *)x;
  unsigned long long value = gl_mix(i, 0);
  w[0] = make_uint4(0u, 0u, i, 0u);                                         /* next, index, visits */
  w[1] = make_uint4((unsigned)value, (unsigned)(value >> 32), owner, 0u);   /* value, owner */
  for (unsigned k = 2; k < size / 16u; ++k) w[k] = gl_word(i, k);
}

/* Thread i links node i to node i + 1 by its GAS address; the list ends at the first NULL. */
__global__ void gl_link(gpu_view v, gl_node **slots, unsigned n, unsigned long long *head)
{
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n || !slots[i]) return;
  slots[i]->next = (uintptr_t)gpu_gas(v, i + 1 < n ? slots[i + 1] : NULL);
  if (i == 0) *head = (uintptr_t)gpu_gas(v, slots[0]);
}

/* One thread walks the list (GAS links, followed through gpu_dev) and adds visit `visitor`. */
__global__ void gl_visit(gpu_view v, unsigned long long head, unsigned visitor, unsigned *count)
{
  unsigned i = 0;
  for (gl_node *x = (gl_node *)gpu_dev(v, (void *)(uintptr_t)head); x;
       x = (gl_node *)gpu_dev(v, (void *)(uintptr_t)x->next), ++i) {
    x->visits++;
    x->value += gl_mix(i, visitor);
  }
  *count = i;
}

/* ---- options ---- */

static int me; /* this worker's index (0 before sys_init) */
/* A message meant to appear once: worker 0's. */
#define PERR(...)                                                                           \
  do {                                                                                      \
    if (me == 0) fprintf(stderr, __VA_ARGS__);                                              \
  } while (0)

typedef struct {
  long nodes;
  unsigned size, reps;
  double slack;
  gpu_mode mode;
  int bench, gpu_walk;
  const char *csv;
} gl_opts;

static void usage(FILE *f)
{
  fprintf(f,
          "usage: mpirun -np 3 %s [options]        (a scheduler and two workers)\n"
          "       mpirun -np 2 %s --bench [options]\n"
          "  GPU offload into regions. Worker 0's kernels build a list of N nodes with dm_malloc\n"
          "  in an arena of a region and land it; the region goes to worker 1 (sys_send), which\n"
          "  walks the list on the CPU and modifies every node (--gpu-walk: once more on its own\n"
          "  GPU), and sends it back; worker 0 checks it node by node (exit 1 on a difference).\n"
          "  --bench: worker 0 measures building N nodes and landing them both ways (device\n"
          "  memory + one copy; zero-copy into the registered region) against the same kernels\n"
          "  into plain device memory + one cudaMemcpy into pinned memory, and into registered\n"
          "  host memory; prints a table and the issue's goals, appends rows to a CSV.\n"
          "options:\n"
          "  --nodes N        nodes (default 100000; --bench 1048576)\n"
          "  --node-size S    bytes per node, a multiple of 16, at least 32 (default 256)\n"
          "  --mode M         device, zero-copy or auto (= device where it fits) (default auto)\n"
          "  --gpu-walk       worker 1 also walks and modifies the list on its GPU\n"
          "  --bench          measure instead of the demo\n"
          "  --reps R         timed repetitions, median reported (default 5)\n"
          "  --slack F        arena bytes = F x N x S (default 1.5: room for the allocator)\n"
          "  --csv FILE       bench rows appended here (default results/gpu-offload.csv; none: no CSV)\n"
          "  --help           this text\n"
          "%s",
          PROG, PROG, BENCH_ANTHEAP_HELP);
}

/* 0: go on; 1: --help printed; 2: an error (printed). */
static int parse(int argc, char **argv, gl_opts *o)
{
  memset(o, 0, sizeof *o);
  o->nodes = -1;
  o->size = 256;
  o->reps = 5;
  o->slack = 1.5;
  o->mode = GPU_MODE_AUTO;
  o->csv = "results/gpu-offload.csv";
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    bool takes = !strcmp(a, "--nodes") || !strcmp(a, "--node-size") || !strcmp(a, "--mode") ||
                 !strcmp(a, "--reps") || !strcmp(a, "--slack") || !strcmp(a, "--csv");
    if (takes && !val) {
      PERR("%s: %s needs a value (see --help)\n", PROG, a);
      return 2;
    }
    if (takes) ++i;
    errno = 0;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 1;
    } else if (!strcmp(a, "--nodes")) {
      o->nodes = strtol(val, &end, 10);
      if (errno || *end || o->nodes < 1 || o->nodes > (1L << 26)) {
        PERR("%s: --nodes: '%s' is not a count in 1..2^26\n", PROG, val);
        return 2;
      }
    } else if (!strcmp(a, "--node-size")) {
      long s = strtol(val, &end, 10);
      if (errno || *end || s < 32 || s > (1L << 20) || s % 16) {
        PERR("%s: --node-size: '%s' is not a multiple of 16 in 32..1 MiB\n", PROG, val);
        return 2;
      }
      o->size = (unsigned)s;
    } else if (!strcmp(a, "--mode")) {
      if (!strcmp(val, "device")) o->mode = GPU_MODE_DEVICE;
      else if (!strcmp(val, "zero-copy")) o->mode = GPU_MODE_ZERO_COPY;
      else if (!strcmp(val, "auto")) o->mode = GPU_MODE_AUTO;
      else {
        PERR("%s: --mode: '%s' is not device, zero-copy or auto\n", PROG, val);
        return 2;
      }
    } else if (!strcmp(a, "--reps")) {
      long r = strtol(val, &end, 10);
      if (errno || *end || r < 1 || r > 1000) {
        PERR("%s: --reps: '%s' is not a count in 1..1000\n", PROG, val);
        return 2;
      }
      o->reps = (unsigned)r;
    } else if (!strcmp(a, "--slack")) {
      o->slack = strtod(val, &end);
      if (errno || *end || !(o->slack >= 1.0 && o->slack <= 16.0)) {
        PERR("%s: --slack: '%s' is not a factor in 1..16\n", PROG, val);
        return 2;
      }
    } else if (!strcmp(a, "--csv")) {
      o->csv = strcmp(val, "none") ? val : NULL;
    } else if (!strcmp(a, "--gpu-walk")) {
      o->gpu_walk = 1;
    } else if (!strcmp(a, "--bench")) {
      o->bench = 1;
    } else {
      PERR("%s: unknown option '%s' (see --help)\n", PROG, a);
      return 2;
    }
  }
  if (o->nodes < 0) o->nodes = o->bench ? 1L << 20 : 100000;
  return 0;
}

/* ---- helpers ---- */

#define FAIL(...)                                                                           \
  do {                                                                                      \
    fprintf(stderr, PROG ": worker %d: ", me);                                              \
    fprintf(stderr, __VA_ARGS__);                                                           \
    fprintf(stderr, "\n");                                                                  \
    MPI_Abort(MPI_COMM_WORLD, 1);                                                           \
  } while (0)
#define CUDA_OK(call)                                                                       \
  do {                                                                                      \
    cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) FAIL("%s: %s", #call, cudaGetErrorString(e_));                   \
  } while (0)
#define GPU_OK(call)                                                                        \
  do {                                                                                      \
    if ((call) != 0) FAIL("%s: %s (CUDA: %s)", #call, strerror(errno), gpu_cuda_error());  \
  } while (0)

static double ms_since(double t0) { return (bench_now_ns() - t0) * 1e-6; }

static const char *mode_name(gpu_mode m)
{
  return m == GPU_MODE_DEVICE ? "device" : m == GPU_MODE_ZERO_COPY ? "zero-copy" : "auto";
}

/* Arena bytes for the options: slack x N x S, whole 4 KiB. */
static size_t arena_bytes(const gl_opts *o)
{
  size_t b = (size_t)(o->slack * (double)o->nodes * o->size);
  return (b + 4095) & ~(size_t)4095;
}

/* Device scratch of a build. */
typedef struct {
  gl_node **slots;
  unsigned *nulls;
  unsigned long long *head;
  unsigned *count;
} scratch;

static void scratch_new(scratch *s, long n)
{
  CUDA_OK(cudaMalloc(&s->slots, (size_t)n * sizeof *s->slots));
  CUDA_OK(cudaMalloc(&s->nulls, sizeof *s->nulls));
  CUDA_OK(cudaMalloc(&s->head, sizeof *s->head));
  CUDA_OK(cudaMalloc(&s->count, sizeof *s->count));
}

static void scratch_free(scratch *s)
{
  cudaFree(s->slots);
  cudaFree(s->nulls);
  cudaFree(s->head);
  cudaFree(s->count);
}

/* Build and link N nodes with the current heap (v: its arena); waits. The GAS head; NULLs in
 * *nulls. */
static unsigned long long build(const gl_opts *o, scratch *s, gpu_view v, unsigned *nulls)
{
  unsigned n = (unsigned)o->nodes, blocks = (n + 255u) / 256u;
  CUDA_OK(cudaMemsetAsync(s->nulls, 0, sizeof *s->nulls));
  gl_build<<<blocks, 256>>>(s->slots, n, o->size, (unsigned)me, s->nulls);
  gl_link<<<blocks, 256>>>(v, s->slots, n, s->head);
  CUDA_OK(cudaGetLastError());
  CUDA_OK(cudaDeviceSynchronize());
  unsigned long long head;
  CUDA_OK(cudaMemcpy(&head, s->head, sizeof head, cudaMemcpyDeviceToHost));
  CUDA_OK(cudaMemcpy(nulls, s->nulls, sizeof *nulls, cudaMemcpyDeviceToHost));
  return head;
}

/* Check a landed list node by node: N nodes in order inside [lo, lo + bytes), `visits`
 * visits (visitors 1..visits), the payload intact. Returns the number of bad nodes (a broken
 * chain counts the missing ones); the first few are described on stderr. */
static long check_list(const gl_opts *o, unsigned long long head, uintptr_t lo, size_t bytes,
                       unsigned visits, unsigned owner)
{
  long bad = 0, i = 0;
  for (const gl_node *x = (const gl_node *)(uintptr_t)head; x && i < o->nodes;
       x = (const gl_node *)(uintptr_t)x->next, ++i) {
    uintptr_t a = (uintptr_t)x;
    if (a < lo || a - lo + o->size > bytes) {
      fprintf(stderr, PROG ": node %ld at %p is outside the arena\n", i, (const void *)x);
      return bad + o->nodes - i;
    }
    unsigned long long want = gl_mix((unsigned)i, 0);
    for (unsigned v = 1; v <= visits; ++v) want += gl_mix((unsigned)i, v);
    bool ok = x->index == (unsigned)i && x->visits == visits && x->value == want &&
              x->owner == owner;
    const uint4 *w = (const uint4 *)x;
    for (unsigned k = 2; ok && k < o->size / 16u; ++k) {
      uint4 e = gl_word((unsigned)i, k);
      ok = w[k].x == e.x && w[k].y == e.y && w[k].z == e.z && w[k].w == e.w;
    }
    if (!ok && bad++ < 5)
      fprintf(stderr, PROG ": node %ld: index %u visits %u (want %u), value or payload wrong\n",
              i, x->index, x->visits, visits);
  }
  if (i < o->nodes) fprintf(stderr, PROG ": the list ends after %ld of %ld nodes\n", i, o->nodes);
  return bad + (o->nodes - i);
}

/* ---- demo ---- */

static int demo(const gl_opts *o)
{
  if (sys_workers() < 2) {
    if (me == 0) fprintf(stderr, PROG ": the demo needs two workers (mpirun -np 3; or --bench)\n");
    return 2;
  }
  int dev;
  GPU_OK(gpu_worker_attach(&dev));
  scratch s;
  if (me > 1) return 0; /* a third worker and more: nothing to do */
  scratch_new(&s, 1);
  if (me == 0) {
    scratch_free(&s);
    scratch_new(&s, o->nodes);
    rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    if (!r) FAIL("sys_ralloc: %s", sys_strerror(errno));
    size_t bytes = arena_bytes(o);
    gpu_arena *a;
    double t0 = bench_now_ns();
    if (gpu_arena_create(&a, r, bytes, o->mode))
      FAIL("gpu_arena_create of %.1f MiB: %s (CUDA: %s)", bytes / 1048576.0, strerror(errno),
           gpu_cuda_error());
    double t_setup = ms_since(t0);
    unsigned nulls;
    t0 = bench_now_ns();
    unsigned long long head = build(o, &s, gpu_arena_view(a), &nulls);
    double t_build = ms_since(t0);
    if (nulls) FAIL("the heap ran out: %u of %ld nodes got NULL (raise --slack)", nulls, o->nodes);
    t0 = bench_now_ns();
    GPU_OK(gpu_arena_land(a));
    double t_land = ms_since(t0);
    printf(PROG ": worker 0: GPU %d, %s arena of %.1f MiB in region %u (set up in %.1f ms)\n",
           dev, mode_name(gpu_arena_mode(a)), bytes / 1048576.0, r, t_setup);
    printf(PROG ": worker 0: built %ld nodes of %u B with dm_malloc in %.2f ms, landed in %.2f ms\n",
           o->nodes, o->size, t_build, t_land);
    fflush(stdout);
    /* the head is a block inside the arena object, not an object: a root record in the
     * region names it (sys_send takes object starts only) */
    unsigned long long *root = (unsigned long long *)sys_alloc(sizeof *root, r);
    if (!root) FAIL("sys_alloc of the root record: %s", sys_strerror(errno));
    *root = head;
    void *objs[2] = {gpu_arena_base(a), root};
    t0 = bench_now_ns();
    if (sys_send(1, &r, 1, objs, 2)) FAIL("sys_send to worker 1: %s", sys_strerror(errno));
    rid_t back;
    void *got[2];
    if (sys_recv(1, &back, 1, got, 2)) FAIL("sys_recv from worker 1: %s", sys_strerror(errno));
    double t_trip = ms_since(t0);
    if (back != r || got[1] != objs[1] || *root != head)
      FAIL("worker 1 gave back region %u root %p (head %#llx), not %u %p (%#llx)", back, got[1],
           *(unsigned long long *)got[1], r, objs[1], head);
    unsigned visits = 1 + (unsigned)o->gpu_walk;
    long bad = check_list(o, head, (uintptr_t)gpu_arena_base(a), gpu_arena_bytes(a), visits, 0);
    printf(PROG ": worker 0: the region came back after %.1f ms; checked %ld nodes node by node: %s\n",
           t_trip, o->nodes, bad ? "DIFFERENCES" : "every node modified as expected");
    if (sys_rfree(r)) FAIL("sys_rfree: %s", sys_strerror(errno)); /* unregisters first */
    GPU_OK(gpu_arena_destroy(a));
    scratch_free(&s);
    return bad ? 1 : 0;
  }
  rid_t r;
  void *got[2];
  if (sys_recv(0, &r, 1, got, 2)) FAIL("sys_recv from worker 0: %s", sys_strerror(errno));
  size_t bytes = 0;
  if (sys_query(got[0], NULL, &bytes)) FAIL("sys_query of the arena: %s", sys_strerror(errno));
  unsigned long long head = *(const unsigned long long *)got[1]; /* the root record */
  long bad = check_list(o, head, (uintptr_t)got[0], bytes, 0, 0);
  double t0 = bench_now_ns();
  long i = 0;
  for (gl_node *x = (gl_node *)(uintptr_t)head; x; x = (gl_node *)(uintptr_t)x->next, ++i) {
    x->visits++;
    x->value += gl_mix((unsigned)i, 1);
  }
  printf(PROG ": worker 1: received region %u: %ld nodes %s, walked and modified on the CPU in "
         "%.2f ms\n", r, i, bad ? "WITH DIFFERENCES" : "as built", ms_since(t0));
  if (o->gpu_walk) {
    gpu_arena *b;
    t0 = bench_now_ns();
    if (gpu_arena_open(&b, got[0], bytes, o->mode))
      FAIL("gpu_arena_open: %s (CUDA: %s)", strerror(errno), gpu_cuda_error());
    gl_visit<<<1, 1>>>(gpu_arena_view(b), head, 2, s.count);
    GPU_OK(gpu_arena_land(b));
    unsigned count;
    CUDA_OK(cudaMemcpy(&count, s.count, sizeof count, cudaMemcpyDeviceToHost));
    GPU_OK(gpu_arena_destroy(b));
    printf(PROG ": worker 1: walked and modified %u nodes on GPU %d (%s) in %.1f ms, opened "
           "and landed back\n", count, dev, mode_name(o->mode), ms_since(t0));
  }
  fflush(stdout);
  if (sys_send(0, &r, 1, got, 2)) FAIL("sys_send back to worker 0: %s", sys_strerror(errno));
  scratch_free(&s);
  return bad ? 1 : 0;
}

/* ---- bench ---- */

typedef struct {
  const char *name;
  double setup, kernel, land; /* ms: setup once, the others medians */
} row;

static double median(std::vector<double> v)
{
  return bench_median(v.data(), v.size());
}

/* Time reps builds: before each, fresh(ctx) gives an empty heap over arena `view` (untimed);
 * land(ctx) after (timed apart). */
template <class Fresh, class Land>
static void timed(const gl_opts *o, scratch *s, gpu_view view, Fresh fresh, Land land, row *r,
                  unsigned long long *head)
{
  std::vector<double> k, l;
  for (unsigned rep = 0; rep <= o->reps; ++rep) { /* rep 0 warms up */
    fresh();
    unsigned nulls;
    double t0 = bench_now_ns();
    *head = build(o, s, view, &nulls);
    double t1 = bench_now_ns();
    land();
    double t2 = bench_now_ns();
    if (nulls) FAIL("%s: the heap ran out (%u NULLs): raise --slack", r->name, nulls);
    if (rep) {
      k.push_back((t1 - t0) * 1e-6);
      l.push_back((t2 - t1) * 1e-6);
    }
  }
  r->kernel = median(k);
  r->land = median(l);
}

static int csv_append(const char *path, const char *const *cols, int ncols,
                      const std::vector<std::vector<std::string>> &rows);

static int bench(const gl_opts *o)
{
  int dev;
  GPU_OK(gpu_worker_attach(&dev));
  if (me != 0) return 0;
  cudaDeviceProp prop;
  CUDA_OK(cudaGetDeviceProperties(&prop, dev));
  size_t bytes = arena_bytes(o);
  printf(PROG ": bench on %s: %ld nodes of %u B, arenas of %.1f MiB, %u reps (median)\n",
         prop.name, o->nodes, o->size, bytes / 1048576.0, o->reps);
  fflush(stdout);
  scratch s;
  scratch_new(&s, o->nodes);
  unsigned long long head;
  row rows[4] = {{"ref: device heap + cudaMemcpy D2H pinned", 0, 0, 0},
                 {"(b) device build + gpu_arena_land", 0, 0, 0},
                 {"(a) zero-copy build in the region", 0, 0, 0},
                 {"registered host memory (outside the GAS)", 0, 0, 0}};

  /* ref: the same kernels into plain device memory, one copy into pinned memory */
  void *dbuf, *pinned;
  CUDA_OK(cudaMalloc(&dbuf, bytes + 512));
  char *dbase = (char *)(((uintptr_t)dbuf + 511) & ~(uintptr_t)511);
  double t0 = bench_now_ns();
  CUDA_OK(cudaMallocHost(&pinned, bytes));
  rows[0].setup = ms_since(t0);
  dm_heap *h = NULL;
  gpu_view same = {dbase, (uintptr_t)dbase, bytes};
  timed(o, &s, same,
        [&] {
          dm_heap_destroy(h);
          int e = dm_heap_create_over(&h, dbase, bytes);
          if (e) FAIL("dm_heap_create_over: %s", cudaGetErrorString((cudaError_t)e));
        },
        [&] { CUDA_OK(cudaMemcpy(pinned, dbase, bytes, cudaMemcpyDeviceToHost)); }, &rows[0],
        &head);
  dm_heap_destroy(h);
  h = NULL;

  /* (b) and (a): arenas in regions */
  gpu_mode modes[2] = {GPU_MODE_DEVICE, GPU_MODE_ZERO_COPY};
  long bad[2] = {0, 0};
  for (int m = 0; m < 2; ++m) {
    rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    if (!r) FAIL("sys_ralloc: %s", sys_strerror(errno));
    gpu_arena *a;
    t0 = bench_now_ns();
    if (gpu_arena_create(&a, r, bytes, modes[m]))
      FAIL("gpu_arena_create (%s): %s (CUDA: %s)", mode_name(modes[m]), strerror(errno),
           gpu_cuda_error());
    rows[1 + m].setup = ms_since(t0);
    timed(o, &s, gpu_arena_view(a), [&] { GPU_OK(gpu_arena_reset(a)); },
          [&] { GPU_OK(gpu_arena_land(a)); }, &rows[1 + m], &head);
    bad[m] = check_list(o, head, (uintptr_t)gpu_arena_base(a), bytes, 0, 0);
    if (sys_rfree(r)) FAIL("sys_rfree: %s", sys_strerror(errno));
    GPU_OK(gpu_arena_destroy(a));
  }

  /* registered host memory outside the GAS */
  void *host = aligned_alloc(4096, bytes), *hdev = NULL;
  if (!host) FAIL("no host memory for %zu bytes", bytes);
  t0 = bench_now_ns();
  CUDA_OK(cudaHostRegister(host, bytes, cudaHostRegisterMapped));
  CUDA_OK(cudaHostGetDevicePointer(&hdev, host, 0));
  rows[3].setup = ms_since(t0);
  gpu_view hv = {(char *)hdev, (uintptr_t)host, bytes};
  timed(o, &s, hv,
        [&] {
          dm_heap_destroy(h);
          int e = dm_heap_create_over(&h, hdev, bytes);
          if (e) FAIL("dm_heap_create_over: %s", cudaGetErrorString((cudaError_t)e));
        },
        [&] { CUDA_OK(cudaDeviceSynchronize()); }, &rows[3], &head);
  dm_heap_destroy(h);
  CUDA_OK(cudaHostUnregister(host));
  free(host);
  cudaFree(dbuf);
  cudaFreeHost(pinned);
  scratch_free(&s);

  /* the table */
  const char *cols[] = {"case", "nodes", "node_B", "arena_MiB", "setup_ms", "kernel_ms",
                        "land_ms", "total_ms", "x_ref", "land_GBps"};
  bench_table *t = bench_table_new(PROG ": building N nodes with dm_malloc and landing them",
                                   10, cols);
  std::vector<std::vector<std::string>> out;
  double ref = rows[0].kernel + rows[0].land;
  for (int i = 0; i < 4; ++i) {
    char c[10][64];
    double total = rows[i].kernel + rows[i].land;
    snprintf(c[0], 64, "%s", rows[i].name);
    snprintf(c[1], 64, "%ld", o->nodes);
    snprintf(c[2], 64, "%u", o->size);
    snprintf(c[3], 64, "%.1f", bytes / 1048576.0);
    snprintf(c[4], 64, "%.2f", rows[i].setup);
    snprintf(c[5], 64, "%.3f", rows[i].kernel);
    snprintf(c[6], 64, "%.3f", rows[i].land);
    snprintf(c[7], 64, "%.3f", total);
    snprintf(c[8], 64, "%.2f", total / ref);
    if (i <= 1) snprintf(c[9], 64, "%.1f", bytes / (rows[i].land * 1e6));
    else snprintf(c[9], 64, "-");
    const char *cells[10];
    std::vector<std::string> line;
    for (int k = 0; k < 10; ++k) {
      cells[k] = c[k];
      line.push_back(c[k]);
    }
    bench_table_row(t, cells);
    out.push_back(line);
  }
  bench_table_finish(t, NULL);
  double b_total = rows[1].kernel + rows[1].land;
  double g1 = b_total / ref, g1z = (rows[2].kernel + rows[2].land) / b_total;
  double g1r = (rows[3].kernel + rows[3].land) / b_total, g2 = rows[0].land / rows[1].land;
  printf("goal 1: (b) device build + land / (kernel into device memory + one cudaMemcpy) = %.2f "
         "(<= 1.5: %s)\n", g1, g1 <= 1.5 ? "met" : "NOT met");
  printf("goal 1: building through registered memory / (b) = %.1fx (registered host memory), "
         "%.1fx ((a) zero-copy in the region) (>= 10: %s)\n", g1r, g1z,
         std::min(g1r, g1z) >= 10 ? "met" : "NOT met");
  printf("goal 2: landing bandwidth / cudaMemcpy D2H pinned = %.1f / %.1f GB/s = %.2f "
         "(>= 0.8: %s)\n", bytes / (rows[1].land * 1e6), bytes / (rows[0].land * 1e6), g2,
         g2 >= 0.8 ? "met" : "NOT met");
  printf("default (GPU_MODE_AUTO) = device: (b) took %.2fx the time of (a)\n",
         b_total / (rows[2].kernel + rows[2].land));
  printf("lists checked node by node after landing: (b) %s, (a) %s\n",
         bad[0] ? "DIFFERENCES" : "ok", bad[1] ? "DIFFERENCES" : "ok");
  if (o->csv && csv_append(o->csv, cols, 10, out)) return 1;
  return bad[0] || bad[1] ? 1 : 0;
}

/* Append rows (a machine column first; the header when the file is new or empty). */
static int csv_append(const char *path, const char *const *cols, int ncols,
                      const std::vector<std::vector<std::string>> &rows)
{
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) {
    *slash = 0;
    mkdir(dir, 0777); /* results/: one level, as the other benchmarks */
  }
  struct stat st;
  bool fresh = stat(path, &st) != 0 || st.st_size == 0;
  FILE *f = fopen(path, "a");
  if (!f) {
    fprintf(stderr, PROG ": cannot append to %s: %s\n", path, strerror(errno));
    return -1;
  }
  if (fresh) {
    fprintf(f, "machine");
    for (int c = 0; c < ncols; ++c) fprintf(f, ",%s", cols[c]);
    fprintf(f, "\n");
  }
  for (const auto &r : rows) {
    fprintf(f, "%s", bench_machine());
    for (const auto &c : r) fprintf(f, ",%s", c.c_str());
    fprintf(f, "\n");
  }
  printf("(appended to %s)\n", path);
  return fclose(f) ? -1 : 0;
}

int main(int argc, char **argv)
{
  gl_opts o;
  /* our options are parsed after sys_init took the --antheap-* ones; --help works without MPI
   * or CUDA */
  if (bench_wants_help(argc, argv)) {
    usage(stdout);
    return 0;
  }
  /* the GAS is mapped before CUDA makes its context, which then keeps clear of it */
  if (sys_init(&argc, &argv)) {
    fprintf(stderr, PROG ": sys_init: %s\n", sys_strerror(errno));
    return 1;
  }
  me = sys_worker_id();
  int rc = parse(argc, argv, &o);
  if (rc) {
    sys_finalize();
    return rc == 1 ? 0 : 2;
  }
  int ndev = 0, gpu = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0, all_gpu = 0;
  MPI_Allreduce(&gpu, &all_gpu, 1, MPI_INT, MPI_MIN, sys_comm());
  if (!all_gpu) {
    if (me == 0) fprintf(stderr, PROG ": no CUDA device on some worker: nothing to run\n");
    sys_finalize();
    return 77;
  }
  rc = o.bench ? bench(&o) : demo(&o);
  int any = 0;
  MPI_Allreduce(&rc, &any, 1, MPI_INT, MPI_MAX, sys_comm());
  sys_finalize();
  return any;
}

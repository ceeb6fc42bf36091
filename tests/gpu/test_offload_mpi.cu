/* test_offload_mpi.cu: GPU offload into regions between two workers (mpirun -np 3: a
 * scheduler and two workers, which share a GPU or have one each). Worker 0's kernels build a
 * list (and a tree) with dm_malloc in an arena of a region; the region goes to worker 1 with
 * sys_send, which walks it on the CPU, then on its own GPU (gpu_arena_open), and sends it
 * back; worker 0 checks it node by node, loads it into its heap again and frees every node
 * there. sys_rfree of a region (or of its parent) whose arena is still registered unregisters
 * it first: the arena is dead and the addresses serve new arenas. Both workers also build at
 * once on the GPU and swap their lists. Exit 77 (skipped) on every rank where no GPU is. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "antheap_gpu.h"
#include "offload_kernels.cuh"

static int me, failures, checks;

/* A failed check is reported and counted; the test goes on, so that both workers keep making
 * the same calls (a worker that stopped early would leave the other waiting). */
#define CHECK(cond)                                                                          \
  do {                                                                                       \
    ++checks;                                                                                \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "worker %d: %s:%d: check failed: %s (errno %d: %s; cuda: %s)\n", me,  \
              __FILE__, __LINE__, #cond, errno, strerror(errno), gpu_cuda_error());          \
      ++failures;                                                                            \
    }                                                                                        \
  } while (0)
/* A step without which nothing can go on: the job ends. */
#define MUST(cond)                                                                           \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "worker %d: %s:%d: fatal: %s (errno %d: %s; cuda: %s)\n", me, __FILE__, \
              __LINE__, #cond, errno, strerror(errno), gpu_cuda_error());                    \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
    }                                                                                        \
  } while (0)

static const char *mode_name(gpu_mode m) { return m == GPU_MODE_ZERO_COPY ? "zero-copy" : "device"; }

/* Device scratch for building n nodes. */
typedef struct {
  void **slots, **slots2;
  unsigned *nulls;
  unsigned long long *head;
  unsigned *out;
} scratch;

static void scratch_new(scratch *s, unsigned n)
{
  MUST(cudaMalloc(&s->slots, n * sizeof(void *)) == cudaSuccess);
  MUST(cudaMalloc(&s->slots2, n * sizeof(void *)) == cudaSuccess);
  MUST(cudaMalloc(&s->nulls, sizeof(unsigned)) == cudaSuccess);
  MUST(cudaMalloc(&s->head, sizeof(unsigned long long)) == cudaSuccess);
  MUST(cudaMalloc(&s->out, 2 * sizeof(unsigned)) == cudaSuccess);
  MUST(cudaMemset(s->nulls, 0, sizeof(unsigned)) == cudaSuccess);
}

static void scratch_free(scratch *s)
{
  cudaFree(s->slots);
  cudaFree(s->slots2);
  cudaFree(s->nulls);
  cudaFree(s->head);
  cudaFree(s->out);
}

/* Build a list of n nodes of `size` bytes in a (made current); its GAS head. */
static unsigned long long build_list(gpu_arena *a, scratch *s, unsigned n, unsigned size)
{
  MUST(gpu_arena_use(a) == 0);
  MUST(cudaMemset(s->nulls, 0, sizeof(unsigned)) == cudaSuccess);
  ol_list_alloc<<<ol_blocks(n), 256>>>((ol_node **)s->slots, n, size, (unsigned)me, s->nulls);
  ol_list_link<<<ol_blocks(n), 256>>>(gpu_arena_view(a), (ol_node **)s->slots, n, s->head);
  MUST(cudaDeviceSynchronize() == cudaSuccess);
  unsigned long long head;
  unsigned nulls;
  MUST(cudaMemcpy(&head, s->head, sizeof head, cudaMemcpyDeviceToHost) == cudaSuccess);
  MUST(cudaMemcpy(&nulls, s->nulls, sizeof nulls, cudaMemcpyDeviceToHost) == cudaSuccess);
  CHECK(nulls == 0);
  return head;
}

/* A kernel's visit of the list at head in arena a: nodes seen and anomalies. */
static void gpu_visit(gpu_arena *a, scratch *s, unsigned long long head, unsigned visitor,
                      unsigned expect_visits, unsigned *count, unsigned *bad)
{
  ol_list_visit<<<1, 1>>>(gpu_arena_view(a), head, visitor, expect_visits, s->out, s->out + 1);
  MUST(cudaDeviceSynchronize() == cudaSuccess);
  unsigned h[2];
  MUST(cudaMemcpy(h, s->out, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess);
  *count = h[0];
  *bad = h[1];
}

static void report(const char *name, int before)
{
  int mine = failures - before, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, sys_comm());
  if (me == 0) printf("%s %s\n", all ? "FAIL" : "PASS", name);
  fflush(stdout);
}

/* A root record in region r holding addr (a block inside an arena object, which is not an
 * object: sys_send names object starts only, so the record travels and names it). */
static void *root_record(rid_t r, unsigned long long addr)
{
  unsigned long long *p = (unsigned long long *)sys_alloc(sizeof *p, r);
  MUST(p != NULL);
  *p = addr;
  return p;
}
static unsigned long long root_of(const void *record)
{
  return *(const unsigned long long *)record;
}

/* Worker 0 builds, worker 1 walks and modifies (CPU, then its GPU), worker 0 checks, loads it
 * back into its heap, frees every node on the GPU, then frees the region while registered. */
static void list_travels_and_comes_back(gpu_mode mode)
{
  int before = failures;
  unsigned n = 50000, size = 256;
  scratch s;
  scratch_new(&s, n);
  if (me == 0) {
    rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    MUST(r != 0);
    gpu_arena *a;
    MUST(gpu_arena_create(&a, r, (size_t)n * size * 3 / 2, mode) == 0);
    CHECK(gpu_arena_mode(a) == mode);
    unsigned long long head = build_list(a, &s, n, size);
    CHECK(gpu_arena_land(a) == 0);
    void *objs[2] = {gpu_arena_base(a), root_record(r, head)};
    MUST(sys_send(1, &r, 1, objs, 2) == 0);
    rid_t back;
    void *got[2];
    MUST(sys_recv(1, &back, 1, got, 2) == 0);
    CHECK(back == r && got[0] == objs[0] && got[1] == objs[1] && root_of(got[1]) == head);
    uintptr_t lo = (uintptr_t)gpu_arena_base(a);
    CHECK(ol_check_list(head, n, size, lo, gpu_arena_bytes(a), 2, 0) == 0); /* node by node */
    /* the other direction on this worker: the changed list back into the heap that built it */
    CHECK(gpu_arena_load(a) == 0);
    unsigned count, bad;
    gpu_visit(a, &s, head, 3, 2, &count, &bad);
    CHECK(count == n && bad == 0);
    CHECK(gpu_arena_land(a) == 0);
    CHECK(ol_check_list(head, n, size, lo, gpu_arena_bytes(a), 3, 0) == 0);
    CHECK(gpu_arena_use(a) == 0);
    ol_list_free<<<1, 1>>>(gpu_arena_view(a), head);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    CHECK(dm_heap_trim(gpu_arena_heap(a)) == 0);
    dm_stats st;
    CHECK(dm_heap_stats(gpu_arena_heap(a), &st) == 0 && st.pages_used == 0 && st.bad_frees == 0);
    /* freed while registered: unregistered first, the arena dead */
    CHECK(sys_rfree(r) == 0);
    CHECK(gpu_arena_land(a) == -1 && errno == ENOENT);
    CHECK(gpu_arena_destroy(a) == 0);
  } else if (me == 1) {
    rid_t r;
    void *got[2];
    MUST(sys_recv(0, &r, 1, got, 2) == 0);
    size_t bytes = 0;
    CHECK(sys_query(got[0], NULL, &bytes) == 0);
    uintptr_t lo = (uintptr_t)got[0];
    unsigned long long head = root_of(got[1]);
    CHECK(ol_check_list(head, n, size, lo, bytes, 0, 0) == 0);
    CHECK(ol_visit_list(head, 1) == n); /* on the CPU */
    gpu_arena *b;
    CHECK(gpu_arena_open(&b, got[0], bytes, mode) == 0); /* on this worker's GPU */
    unsigned count = 0, bad = 0;
    if (b) gpu_visit(b, &s, head, 2, 1, &count, &bad);
    CHECK(count == n && bad == 0);
    CHECK(gpu_arena_land(b) == 0);
    CHECK(gpu_arena_destroy(b) == 0);
    MUST(sys_send(0, &r, 1, got, 2) == 0);
  }
  scratch_free(&s);
  char name[96];
  snprintf(name, sizeof name, "list_travels_and_comes_back_%s", mode_name(mode));
  report(name, before);
}

/* A tree with pointers into payload blocks and to a sys_alloc'd object of the region; worker 1
 * checks it all, the object included; worker 1 frees the region. */
static void tree_travels(gpu_mode mode)
{
  int before = failures;
  unsigned n = 4095;
  if (me == 0) {
    scratch s;
    scratch_new(&s, n);
    rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    MUST(r != 0);
    unsigned long long *other = (unsigned long long *)sys_alloc(64, r);
    MUST(other != NULL);
    *other = 0x5eed5eedull;
    gpu_arena *a;
    MUST(gpu_arena_create(&a, r, (size_t)12 << 20, mode) == 0);
    MUST(gpu_arena_use(a) == 0);
    gpu_view v = gpu_arena_view(a);
    ol_tree_alloc<<<ol_blocks(n), 256>>>((ol_tree **)s.slots, (unsigned char **)s.slots2, n,
                                         (uintptr_t)other, s.nulls);
    ol_tree_link<<<ol_blocks(n), 256>>>(v, (ol_tree **)s.slots, (unsigned char **)s.slots2, n,
                                        s.head);
    CHECK(gpu_arena_land(a) == 0);
    unsigned long long root;
    unsigned nulls;
    MUST(cudaMemcpy(&root, s.head, sizeof root, cudaMemcpyDeviceToHost) == cudaSuccess);
    MUST(cudaMemcpy(&nulls, s.nulls, sizeof nulls, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(nulls == 0);
    CHECK(gpu_arena_destroy(a) == 0); /* the device side goes; the tree stays in the region */
    void *objs[2] = {root_record(r, root), other};
    MUST(sys_send(1, &r, 1, objs, 2) == 0);
    scratch_free(&s);
  } else if (me == 1) {
    rid_t r;
    void *got[2];
    MUST(sys_recv(0, &r, 1, got, 2) == 0);
    rid_t where = 0;
    size_t bytes = 0;
    CHECK(sys_query(got[1], &where, &bytes) == 0 && where == r);
    CHECK(*(unsigned long long *)got[1] == 0x5eed5eedull); /* the object came along */
    /* the root is a block inside the arena object; any address of the GAS will do here */
    CHECK(ol_check_tree(root_of(got[0]), n, 0, SIZE_MAX, (uintptr_t)got[1]) == 0);
    CHECK(sys_rfree(r) == 0);
  }
  char name[96];
  snprintf(name, sizeof name, "tree_travels_%s", mode_name(mode));
  report(name, before);
}

/* sys_rfree of a region whose arena is still registered, then of a parent whose child holds
 * one: each arena dies unregistered and new arenas (on the same addresses, as the schedulers
 * reuse them) work. */
static void rfree_while_registered(void)
{
  int before = failures;
  if (me == 0) {
    scratch s;
    scratch_new(&s, 2000);
    for (int round = 0; round < 6; ++round) {
      rid_t parent = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
      MUST(parent != 0);
      rid_t r = round % 2 ? sys_ralloc(parent, SYS_NO_LEVEL_HINT) : parent;
      MUST(r != 0);
      gpu_arena *a;
      MUST(gpu_arena_create(&a, r, (size_t)1 << 20, round % 3 ? GPU_MODE_DEVICE : GPU_MODE_ZERO_COPY) == 0);
      unsigned long long head = build_list(a, &s, 2000, 128);
      CHECK(gpu_arena_land(a) == 0);
      CHECK(ol_check_list(head, 2000, 128, (uintptr_t)gpu_arena_base(a), gpu_arena_bytes(a), 0, 0) == 0);
      CHECK(sys_rfree(parent) == 0); /* the child's arena too */
      CHECK(gpu_arena_use(a) == -1 && errno == ENOENT);
      CHECK(gpu_arena_destroy(a) == 0);
    }
    scratch_free(&s);
  }
  report("rfree_while_registered_unregisters_first", before);
}

/* Both workers build at once (one GPU shared, or one each), swap, check, swap back. */
static void both_workers_build_at_once(void)
{
  int before = failures;
  unsigned n = 20000, size = 128;
  if (me < 2) {
    int peer = 1 - me;
    scratch s;
    scratch_new(&s, n);
    rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
    MUST(r != 0);
    gpu_arena *a;
    MUST(gpu_arena_create(&a, r, (size_t)n * size * 2, GPU_MODE_AUTO) == 0);
    unsigned long long head = build_list(a, &s, n, size);
    CHECK(gpu_arena_land(a) == 0);
    void *mine[2] = {gpu_arena_base(a), root_record(r, head)}, *theirs[2];
    rid_t tr;
    if (me == 0) {
      MUST(sys_send(peer, &r, 1, mine, 2) == 0);
      MUST(sys_recv(peer, &tr, 1, theirs, 2) == 0);
    } else {
      MUST(sys_recv(peer, &tr, 1, theirs, 2) == 0);
      MUST(sys_send(peer, &r, 1, mine, 2) == 0);
    }
    size_t bytes = 0;
    CHECK(sys_query(theirs[0], NULL, &bytes) == 0);
    CHECK(ol_check_list(root_of(theirs[1]), n, size, (uintptr_t)theirs[0], bytes, 0,
                        (unsigned long long)peer) == 0);
    CHECK(ol_visit_list(root_of(theirs[1]), 1) == n);
    rid_t back;
    void *got[2];
    if (me == 0) {
      MUST(sys_send(peer, &tr, 1, theirs, 2) == 0);
      MUST(sys_recv(peer, &back, 1, got, 2) == 0);
    } else {
      MUST(sys_recv(peer, &back, 1, got, 2) == 0);
      MUST(sys_send(peer, &tr, 1, theirs, 2) == 0);
    }
    CHECK(back == r);
    CHECK(ol_check_list(head, n, size, (uintptr_t)gpu_arena_base(a), gpu_arena_bytes(a), 1,
                        (unsigned long long)me) == 0);
    CHECK(gpu_arena_destroy(a) == 0);
    CHECK(sys_rfree(r) == 0);
    scratch_free(&s);
  }
  report("both_workers_build_at_once_and_swap", before);
}

int main(int argc, char **argv)
{
  /* the GAS is mapped before CUDA makes its context, which then keeps clear of it */
  if (sys_init(&argc, &argv)) {
    fprintf(stderr, "test_offload_mpi: sys_init: %s\n", sys_strerror(errno));
    return 1;
  }
  me = sys_worker_id();
  int ndev = 0, gpu = cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0, all_gpu = 0;
  MPI_Allreduce(&gpu, &all_gpu, 1, MPI_INT, MPI_MIN, sys_comm());
  if (!all_gpu) {
    if (me == 0) printf("SKIP: no CUDA device on some worker\n");
    sys_finalize();
    return 77;
  }
  if (sys_workers() < 2) {
    if (me == 0) fprintf(stderr, "test_offload_mpi: needs two workers (mpirun -np 3)\n");
    sys_finalize();
    return 2;
  }
  int dev = -1;
  MUST(gpu_worker_attach(&dev) == 0);
  printf("worker %d: GPU %d\n", me, dev);
  list_travels_and_comes_back(GPU_MODE_DEVICE);
  list_travels_and_comes_back(GPU_MODE_ZERO_COPY);
  tree_travels(GPU_MODE_DEVICE);
  tree_travels(GPU_MODE_ZERO_COPY);
  rfree_while_registered();
  both_workers_build_at_once();
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, sys_comm());
  if (me == 0) printf("test_offload_mpi: %d checks, %d failed\n", checks, all);
  sys_finalize();
  return all ? 1 : 0;
}

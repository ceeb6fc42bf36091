/* test_offload.cu: GPU arenas over host memory (src/gpu/arena.cu) in one process, with a
 * private mapping standing in for the GAS (the MPI test, test_offload_mpi.cu, uses real
 * regions): a list and a tree built by kernels land at host addresses and are walked on the
 * CPU, in both modes; a range built on the CPU is opened, walked and modified by a kernel and
 * landed back; a heap exhausted in a kernel gives NULLs and lands nothing past its arena; a
 * range freed under an arena (the worker's free hook) unregisters it and kills the arena; the
 * registration is shared, counted and refused in part; bad arguments.
 * GT_SMALL=1 shrinks the sizes (for compute-sanitizer runs). */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "antheap_gpu.h"
#include "gpu/gpu.h"
#include "gpu_test.cuh"
#include "offload_kernels.cuh"

static int g_small;

#define GUARD ((size_t)64 << 10)
#define GUARD_BYTE 0xA5

/* Host memory standing in for a GAS object: `bytes` between two guard zones of GUARD_BYTE. */
typedef struct {
  char *map, *base;
  size_t bytes;
} host_range;

static bool range_new(host_range *r, size_t bytes)
{
  r->bytes = bytes;
  r->map = (char *)mmap(NULL, bytes + 2 * GUARD, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r->map == MAP_FAILED) return false;
  r->base = r->map + GUARD;
  memset(r->map, GUARD_BYTE, GUARD);
  memset(r->base + bytes, GUARD_BYTE, GUARD);
  return true;
}

/* Whether both guard zones still hold GUARD_BYTE only. */
static bool guards_intact(const host_range *r)
{
  for (size_t i = 0; i < GUARD; ++i)
    if ((unsigned char)r->map[i] != GUARD_BYTE ||
        (unsigned char)r->base[r->bytes + i] != GUARD_BYTE)
      return false;
  return true;
}

static void range_free(host_range *r) { munmap(r->map, r->bytes + 2 * GUARD); }

/* Whether [p, p + n) can be registered now (nobody holds it), leaving it unregistered. */
static bool registrable(void *p, size_t n)
{
  cudaError_t e = cudaHostRegister(p, n, cudaHostRegisterDefault);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return cudaHostUnregister(p) == cudaSuccess;
}

/* Scratch for a build: device slots and counters. */
typedef struct {
  void **slots, **slots2;
  unsigned *nulls;
  unsigned long long *head;
} scratch;

static bool scratch_new(scratch *s, unsigned n)
{
  memset(s, 0, sizeof *s);
  return cudaMalloc(&s->slots, n * sizeof(void *)) == cudaSuccess &&
         cudaMalloc(&s->slots2, n * sizeof(void *)) == cudaSuccess &&
         cudaMalloc(&s->nulls, sizeof(unsigned)) == cudaSuccess &&
         cudaMalloc(&s->head, sizeof(unsigned long long)) == cudaSuccess &&
         cudaMemset(s->nulls, 0, sizeof(unsigned)) == cudaSuccess &&
         cudaMemset(s->head, 0, sizeof(unsigned long long)) == cudaSuccess;
}

static void scratch_free(scratch *s)
{
  cudaFree(s->slots);
  cudaFree(s->slots2);
  cudaFree(s->nulls);
  cudaFree(s->head);
}

/* Build a list of n nodes in arena a; *head (GAS) and *nulls from the device. */
static cudaError_t build_list(gpu_arena *a, scratch *s, unsigned n, unsigned size,
                              unsigned long long *head, unsigned *nulls)
{
  gpu_view v = gpu_arena_view(a);
  if (gpu_arena_use(a)) return cudaErrorUnknown;
  ol_list_alloc<<<ol_blocks(n), 256>>>((ol_node **)s->slots, n, size, 7, s->nulls);
  ol_list_link<<<ol_blocks(n), 256>>>(v, (ol_node **)s->slots, n, s->head);
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaMemcpy(head, s->head, sizeof *head, cudaMemcpyDeviceToHost);
  if (e == cudaSuccess) e = cudaMemcpy(nulls, s->nulls, sizeof *nulls, cudaMemcpyDeviceToHost);
  return e;
}

/* ---- land and walk ---- */

static void list_lands_and_walks(gpu_mode mode)
{
  unsigned n = g_small ? 512 : 20000, size = 256;
  host_range r;
  scratch s;
  gpu_arena *a;
  GT_CHECK(range_new(&r, (size_t)8 << 20));
  GT_CHECK(scratch_new(&s, n));
  GT_CHECK(gpu_arena_create_at(&a, r.base, r.bytes, mode) == 0);
  GT_CHECK(gpu_arena_mode(a) == mode);
  GT_CHECK(gpu_arena_base(a) == r.base && gpu_arena_bytes(a) == r.bytes);
  unsigned long long head;
  unsigned nulls;
  GT_CUDA(build_list(a, &s, n, size, &head, &nulls));
  GT_CHECK(nulls == 0);
  GT_CHECK(head == (uintptr_t)gpu_gas(gpu_arena_view(a), gpu_dev(gpu_arena_view(a), (void *)head)));
  GT_CHECK(gpu_arena_land(a) == 0);
  GT_CHECK(ol_check_list(head, n, size, (uintptr_t)r.base, r.bytes, 0, 7) == 0);
  GT_CHECK(guards_intact(&r));
  GT_CHECK(gpu_arena_destroy(a) == 0);
  GT_CHECK(registrable(r.base, r.bytes)); /* the registration went with the arena */
  GT_CHECK(ol_check_list(head, n, size, (uintptr_t)r.base, r.bytes, 0, 7) == 0); /* data stays */
  scratch_free(&s);
  range_free(&r);
}

static void test_list_lands_and_walks_device(void) { list_lands_and_walks(GPU_MODE_DEVICE); }
static void test_list_lands_and_walks_zero_copy(void) { list_lands_and_walks(GPU_MODE_ZERO_COPY); }

/* A tree: children in other blocks, a pointer into the middle of a payload block (classes,
 * coalesced areas and multi-page runs), and a GAS address given to the kernel stored as is. */
static void tree_lands_and_walks(gpu_mode mode)
{
  unsigned n = g_small ? 255 : 8191;
  host_range r, other;
  scratch s;
  gpu_arena *a;
  GT_CHECK(range_new(&r, (size_t)32 << 20));
  GT_CHECK(range_new(&other, 4096));
  GT_CHECK(scratch_new(&s, n));
  GT_CHECK(gpu_arena_create_at(&a, r.base, r.bytes, mode) == 0);
  gpu_view v = gpu_arena_view(a);
  unsigned long long given = (uintptr_t)other.base + 64, root = 0;
  unsigned nulls = 0;
  ol_tree_alloc<<<ol_blocks(n), 256>>>((ol_tree **)s.slots, (unsigned char **)s.slots2, n,
                                       (unsigned long long)(uintptr_t)gpu_gas(v, (void *)given),
                                       s.nulls);
  ol_tree_link<<<ol_blocks(n), 256>>>(v, (ol_tree **)s.slots, (unsigned char **)s.slots2, n,
                                      s.head);
  GT_SYNC();
  GT_CUDA(cudaMemcpy(&root, s.head, sizeof root, cudaMemcpyDeviceToHost));
  GT_CUDA(cudaMemcpy(&nulls, s.nulls, sizeof nulls, cudaMemcpyDeviceToHost));
  GT_CHECK(nulls == 0);
  GT_CHECK(gpu_arena_land(a) == 0);
  GT_CHECK(ol_check_tree(root, n, (uintptr_t)r.base, r.bytes, given) == 0);
  GT_CHECK(guards_intact(&r));
  GT_CHECK(gpu_arena_destroy(a) == 0);
  scratch_free(&s);
  range_free(&r);
  range_free(&other);
}

static void test_tree_lands_and_walks_device(void) { tree_lands_and_walks(GPU_MODE_DEVICE); }
static void test_tree_lands_and_walks_zero_copy(void) { tree_lands_and_walks(GPU_MODE_ZERO_COPY); }

/* ---- exhaustion ---- */

static void exhausted_heap_lands_nothing_past_its_end(gpu_mode mode)
{
  unsigned n = g_small ? 1024 : 4096, size = 256; /* 1 MiB asked of 64 KiB */
  host_range r;
  scratch s;
  gpu_arena *a;
  GT_CHECK(range_new(&r, (size_t)64 << 10));
  GT_CHECK(scratch_new(&s, n));
  GT_CHECK(gpu_arena_create_at(&a, r.base, r.bytes, mode) == 0);
  unsigned long long head;
  unsigned nulls;
  GT_CUDA(build_list(a, &s, n, size, &head, &nulls));
  GT_CHECK(nulls > n / 2);
  dm_stats st;
  GT_CHECK(dm_heap_stats(gpu_arena_heap(a), &st) == 0);
  GT_CHECK(st.nulls > 0);
  GT_CHECK(gpu_arena_land(a) == 0);
  GT_CHECK(guards_intact(&r)); /* nothing landed before or past the arena */
  /* what was built before the first NULL is a list inside the arena */
  unsigned got = 0;
  for (const ol_node *x = (const ol_node *)(uintptr_t)head; x && got <= n;
       x = (const ol_node *)(uintptr_t)x->next, ++got) {
    GT_CHECK((uintptr_t)x >= (uintptr_t)r.base && (uintptr_t)x + size <= (uintptr_t)r.base + r.bytes);
    GT_CHECK(x->index == got);
  }
  GT_CHECK(got < n);
  GT_CHECK(gpu_arena_destroy(a) == 0);
  scratch_free(&s);
  range_free(&r);
}

static void test_exhausted_heap_lands_nothing_past_its_end_device(void)
{
  exhausted_heap_lands_nothing_past_its_end(GPU_MODE_DEVICE);
}
static void test_exhausted_heap_lands_nothing_past_its_end_zero_copy(void)
{
  exhausted_heap_lands_nothing_past_its_end(GPU_MODE_ZERO_COPY);
}

/* ---- the other direction ---- */

/* A list built on the CPU (as received from another worker), its nodes in a scrambled order,
 * opened on the GPU, walked and modified by a kernel, landed back. */
static void received_list_is_walked_and_modified_on_the_gpu(gpu_mode mode)
{
  unsigned n = g_small ? 300 : 10000, size = 64;
  host_range r;
  GT_CHECK(range_new(&r, (size_t)n * size + 100)); /* opening takes any size */
  ol_node *prev = NULL;
  unsigned long long head = 0;
  for (unsigned i = 0; i < n; ++i) {
    ol_node *x = (ol_node *)(r.base + (size_t)((i * 7919u) % n) * size);
    memset(x, 0, size);
    x->index = i;
    x->value = ol_mix(i, 0);
    x->owner = 3;
    for (size_t k = sizeof(ol_node); k < size; ++k) ((unsigned char *)x)[k] = ol_byte(i, k);
    if (prev) prev->next = (uintptr_t)x;
    else head = (uintptr_t)x;
    prev = x;
  }
  gpu_arena *a;
  GT_CHECK(gpu_arena_open(&a, r.base, r.bytes, mode) == 0);
  GT_CHECK(gpu_arena_heap(a) == NULL);
  unsigned *d;
  GT_CUDA(cudaMalloc(&d, 2 * sizeof(unsigned)));
  ol_list_visit<<<1, 1>>>(gpu_arena_view(a), head, 1, 0, d, d + 1);
  GT_SYNC();
  unsigned h[2];
  GT_CUDA(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  GT_CHECK(h[0] == n && h[1] == 0);
  GT_CHECK(gpu_arena_land(a) == 0);
  GT_CHECK(ol_check_list(head, n, size, (uintptr_t)r.base, r.bytes, 1, 3) == 0);
  GT_CHECK(guards_intact(&r));
  GT_CHECK(gpu_arena_destroy(a) == 0);
  GT_CHECK(registrable(r.base, r.bytes));
  cudaFree(d);
  range_free(&r);
}

static void test_received_list_is_walked_and_modified_on_the_gpu_device(void)
{
  received_list_is_walked_and_modified_on_the_gpu(GPU_MODE_DEVICE);
}
static void test_received_list_is_walked_and_modified_on_the_gpu_zero_copy(void)
{
  received_list_is_walked_and_modified_on_the_gpu(GPU_MODE_ZERO_COPY);
}

/* Built, landed, changed on the CPU (as by another worker), loaded back: the kernel sees the
 * changes and the heap still knows its blocks (every node freed: no page used after a trim). */
static void heap_survives_land_and_load(gpu_mode mode)
{
  unsigned n = g_small ? 256 : 5000, size = 128;
  host_range r;
  scratch s;
  gpu_arena *a;
  GT_CHECK(range_new(&r, (size_t)4 << 20));
  GT_CHECK(scratch_new(&s, n));
  GT_CHECK(gpu_arena_create_at(&a, r.base, r.bytes, mode) == 0);
  unsigned long long head;
  unsigned nulls;
  GT_CUDA(build_list(a, &s, n, size, &head, &nulls));
  GT_CHECK(nulls == 0);
  GT_CHECK(gpu_arena_land(a) == 0);
  GT_CHECK(ol_visit_list(head, 1) == n); /* the CPU's visit */
  GT_CHECK(gpu_arena_load(a) == 0);
  unsigned *d;
  GT_CUDA(cudaMalloc(&d, 2 * sizeof(unsigned)));
  ol_list_visit<<<1, 1>>>(gpu_arena_view(a), head, 2, 1, d, d + 1);
  GT_SYNC();
  unsigned h[2];
  GT_CUDA(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  GT_CHECK(h[0] == n && h[1] == 0);
  GT_CHECK(gpu_arena_land(a) == 0);
  GT_CHECK(ol_check_list(head, n, size, (uintptr_t)r.base, r.bytes, 2, 7) == 0);
  GT_CHECK(gpu_arena_use(a) == 0);
  ol_list_free<<<1, 1>>>(gpu_arena_view(a), head);
  GT_SYNC();
  GT_CHECK(dm_heap_trim(gpu_arena_heap(a)) == 0);
  dm_stats st;
  GT_CHECK(dm_heap_stats(gpu_arena_heap(a), &st) == 0);
  GT_CHECK(st.pages_used == 0 && st.bad_frees == 0);
  GT_CHECK(gpu_arena_destroy(a) == 0);
  cudaFree(d);
  scratch_free(&s);
  range_free(&r);
}

static void test_heap_survives_land_and_load_device(void) { heap_survives_land_and_load(GPU_MODE_DEVICE); }
static void test_heap_survives_land_and_load_zero_copy(void)
{
  heap_survives_land_and_load(GPU_MODE_ZERO_COPY);
}

/* ---- registrations and freed memory ---- */

/* The worker's free hook (sys_rfree) reports the range: the arena is unregistered and dead;
 * the range can be registered again and a new arena works there. */
static void freed_range_kills_the_arena(gpu_mode mode)
{
  unsigned n = g_small ? 128 : 1000;
  host_range r;
  scratch s;
  gpu_arena *a, *b;
  GT_CHECK(range_new(&r, (size_t)1 << 20));
  GT_CHECK(scratch_new(&s, n));
  GT_CHECK(gpu_arena_create_at(&a, r.base, r.bytes, mode) == 0);
  unsigned long long head;
  unsigned nulls;
  GT_CUDA(build_list(a, &s, n, 64, &head, &nulls));
  GT_CHECK(gpu_forget_range((uintptr_t)r.base + 4096, 4096) == 1); /* any overlap will do */
  GT_CHECK(gpu_forget_range((uintptr_t)r.base, r.bytes) == 0);     /* dead already */
  GT_CHECK(gpu_arena_land(a) == -1 && errno == ENOENT);
  GT_CHECK(gpu_arena_use(a) == -1 && errno == ENOENT);
  GT_CHECK(gpu_arena_load(a) == -1 && errno == ENOENT);
  GT_CHECK(gpu_arena_reset(a) == -1 && errno == ENOENT);
  GT_CHECK(gpu_arena_heap(a) == NULL && gpu_arena_view(a).bytes == 0);
  GT_CHECK(registrable(r.base, r.bytes)); /* no dangling registration */
  GT_CHECK(gpu_arena_create_at(&b, r.base, r.bytes, mode) == 0);
  GT_CUDA(cudaMemset(s.nulls, 0, sizeof(unsigned)));
  GT_CUDA(build_list(b, &s, n, 64, &head, &nulls));
  GT_CHECK(nulls == 0);
  GT_CHECK(gpu_arena_land(b) == 0);
  GT_CHECK(ol_check_list(head, n, 64, (uintptr_t)r.base, r.bytes, 0, 7) == 0);
  GT_CHECK(gpu_arena_destroy(a) == 0); /* the dead one: only its handle */
  GT_CHECK(gpu_arena_destroy(b) == 0);
  GT_CHECK(registrable(r.base, r.bytes));
  scratch_free(&s);
  range_free(&r);
}

static void test_freed_range_kills_the_arena_device(void) { freed_range_kills_the_arena(GPU_MODE_DEVICE); }
static void test_freed_range_kills_the_arena_zero_copy(void)
{
  freed_range_kills_the_arena(GPU_MODE_ZERO_COPY);
}

/* An arena opened inside a created one shares its registration, whoever goes first; a range
 * overlapping it in part is EBUSY. */
static void test_registration_is_shared_and_counted(void)
{
  host_range r;
  gpu_arena *a, *b, *c;
  GT_CHECK(range_new(&r, (size_t)1 << 20));
  GT_CHECK(gpu_arena_create_at(&a, r.base, r.bytes, GPU_MODE_DEVICE) == 0);
  GT_CHECK(gpu_arena_open(&b, r.base + 8192, 65536, GPU_MODE_ZERO_COPY) == 0);
  GT_CHECK(gpu_arena_open(&c, r.base + r.bytes / 2, r.bytes, GPU_MODE_DEVICE) == -1 && errno == EBUSY);
  GT_CHECK(c == NULL);
  GT_CHECK(gpu_arena_destroy(a) == 0);
  GT_CHECK(!registrable(r.base + 8192, 65536)); /* b still holds it */
  GT_CHECK(gpu_arena_land(b) == 0);
  GT_CHECK(gpu_arena_destroy(b) == 0);
  GT_CHECK(registrable(r.base, r.bytes));
  range_free(&r);
}

/* A range registered by someone else than the layer is EBUSY, and left registered. */
static void test_a_range_registered_elsewhere_is_ebusy(void)
{
  host_range r;
  gpu_arena *a;
  GT_CHECK(range_new(&r, (size_t)1 << 20));
  GT_CUDA(cudaHostRegister(r.base, r.bytes, cudaHostRegisterDefault));
  GT_CHECK(gpu_arena_create_at(&a, r.base, r.bytes, GPU_MODE_ZERO_COPY) == -1 && errno == EBUSY);
  GT_CUDA(cudaHostUnregister(r.base));
  GT_CHECK(gpu_arena_create_at(&a, r.base, r.bytes, GPU_MODE_ZERO_COPY) == 0);
  GT_CHECK(gpu_arena_destroy(a) == 0);
  range_free(&r);
}

static void test_reset_gives_an_empty_heap(void)
{
  unsigned n = g_small ? 256 : 2000;
  host_range r;
  scratch s;
  gpu_arena *a;
  GT_CHECK(range_new(&r, (size_t)1 << 20));
  GT_CHECK(scratch_new(&s, n));
  GT_CHECK(gpu_arena_create_at(&a, r.base, r.bytes, GPU_MODE_DEVICE) == 0);
  unsigned long long head;
  unsigned nulls;
  for (int round = 0; round < 3; ++round) { /* each round fills most of the arena */
    GT_CHECK(gpu_arena_reset(a) == 0);
    GT_CUDA(cudaMemset(s.nulls, 0, sizeof(unsigned)));
    GT_CUDA(build_list(a, &s, n, 256, &head, &nulls));
    GT_CHECK(nulls == 0);
  }
  GT_CHECK(gpu_arena_land(a) == 0);
  GT_CHECK(ol_check_list(head, n, 256, (uintptr_t)r.base, r.bytes, 0, 7) == 0);
  GT_CHECK(gpu_arena_destroy(a) == 0);
  scratch_free(&s);
  range_free(&r);
}

static void test_auto_mode_builds_in_device_memory(void)
{
  host_range r;
  gpu_arena *a;
  GT_CHECK(range_new(&r, (size_t)1 << 20));
  GT_CHECK(gpu_arena_create_at(&a, r.base, r.bytes, GPU_MODE_AUTO) == 0);
  GT_CHECK(gpu_arena_mode(a) == GPU_MODE_DEVICE);
  GT_CHECK((uintptr_t)gpu_arena_view(a).dev != (uintptr_t)r.base);
  GT_CHECK(gpu_arena_destroy(a) == 0);
  range_free(&r);
}

static void test_bad_arguments_are_einval(void)
{
  host_range r;
  gpu_arena *a = (gpu_arena *)&r;
  GT_CHECK(range_new(&r, (size_t)1 << 20));
  GT_CHECK(gpu_arena_create_at(&a, NULL, 4096, GPU_MODE_DEVICE) == -1 && errno == EINVAL);
  GT_CHECK(a == NULL);
  GT_CHECK(gpu_arena_create_at(&a, r.base + 256, 4096, GPU_MODE_DEVICE) == -1 && errno == EINVAL);
  GT_CHECK(gpu_arena_create_at(&a, r.base, 1000, GPU_MODE_DEVICE) == -1 && errno == EINVAL);
  GT_CHECK(gpu_arena_create_at(&a, r.base, 0, GPU_MODE_DEVICE) == -1 && errno == EINVAL);
  GT_CHECK(gpu_arena_create_at(&a, r.base, 4096, (gpu_mode)7) == -1 && errno == EINVAL);
  GT_CHECK(gpu_arena_create_at(NULL, r.base, 4096, GPU_MODE_DEVICE) == -1 && errno == EINVAL);
  GT_CHECK(gpu_arena_open(&a, r.base, 0, GPU_MODE_DEVICE) == -1 && errno == EINVAL);
  GT_CHECK(gpu_arena_land(NULL) == -1 && errno == EINVAL);
  GT_CHECK(gpu_arena_load(NULL) == -1 && errno == EINVAL);
  GT_CHECK(gpu_arena_use(NULL) == -1 && errno == EINVAL);
  GT_CHECK(gpu_arena_destroy(NULL) == 0);
  GT_CHECK(gpu_arena_open(&a, r.base + 3, 1000, GPU_MODE_DEVICE) == 0);
  GT_CHECK(gpu_arena_use(a) == -1 && errno == EINVAL);   /* no heap to use */
  GT_CHECK(gpu_arena_reset(a) == -1 && errno == EINVAL);
  GT_CHECK(gpu_arena_destroy(a) == 0);
  GT_CHECK(registrable(r.base, r.bytes)); /* every failure left nothing registered */
  range_free(&r);
}

int main(void)
{
  gt_require_gpu();
  g_small = getenv("GT_SMALL") != NULL;
  int d = 0;
  if (gpu_use_device(0, &d)) {
    fprintf(stderr, "gpu_use_device: %s (%s)\n", strerror(errno), gpu_cuda_error());
    return 1;
  }
  int same = 0;
  cudaDeviceGetAttribute(&same, cudaDevAttrCanUseHostPointerForRegisteredMem, d);
  printf("device %d uses host pointers for registered memory: %s\n", d, same ? "yes" : "no");
  GT_RUN(test_list_lands_and_walks_device);
  GT_RUN(test_list_lands_and_walks_zero_copy);
  GT_RUN(test_tree_lands_and_walks_device);
  GT_RUN(test_tree_lands_and_walks_zero_copy);
  GT_RUN(test_exhausted_heap_lands_nothing_past_its_end_device);
  GT_RUN(test_exhausted_heap_lands_nothing_past_its_end_zero_copy);
  GT_RUN(test_received_list_is_walked_and_modified_on_the_gpu_device);
  GT_RUN(test_received_list_is_walked_and_modified_on_the_gpu_zero_copy);
  GT_RUN(test_heap_survives_land_and_load_device);
  GT_RUN(test_heap_survives_land_and_load_zero_copy);
  GT_RUN(test_freed_range_kills_the_arena_device);
  GT_RUN(test_freed_range_kills_the_arena_zero_copy);
  GT_RUN(test_registration_is_shared_and_counted);
  GT_RUN(test_a_range_registered_elsewhere_is_ebusy);
  GT_RUN(test_reset_gives_an_empty_heap);
  GT_RUN(test_auto_mode_builds_in_device_memory);
  GT_RUN(test_bad_arguments_are_einval);
  return gt_finish();
}

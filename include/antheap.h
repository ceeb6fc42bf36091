/* antheap.h: the whole worker API (Myrmics Figure 1, on MPI).
 *
 * An antheap job is an MPI job whose ranks are split into scheduler daemons (antheapd) and
 * workers (the application). Workers see one global address space (GAS) mapped at the same
 * address in every worker, made of regions: growable sets of objects that can contain other
 * regions. Pointers between objects stay valid when whole regions move between workers with
 * sys_send / sys_recv: the receiver gets the same bytes at the same addresses.
 *
 * Launch, SPMD:  mpirun -np N ./app  [--antheap-schedulers S] [--antheap-fanout F]
 *        MPMD:   mpirun -np S antheapd : -np W ./app
 * Every call except sys_init and sys_finalize is made by workers only. On failure a call
 * returns 0 (IDs), NULL (pointers) or -1 (the rest) and sets errno:
 *   ENOENT  no such region          EINVAL  bad pointer or argument (wild, interior, freed)
 *   ENOMEM  GAS exhausted           ENOSPC  no region IDs left
 *   EPROTO  a malformed message     EXDEV   (internal: a move between schedulers)
 *   E2BIG   sys_balloc of more objects than one request carries (1,048,576)
 * sys_strerror(errno) explains them.
 *
 * The allocation cache. A worker serves sys_alloc, sys_balloc, sys_free, sys_realloc and
 * sys_query of objects up to 4 KiB itself, with no message, from whole slabs its schedulers
 * lease to it (a few at first, more while it keeps allocating in the same region and size);
 * errors (double free, interior or wild pointer) stay exact and synchronous. The schedulers
 * learn of such objects at the worker's next flush point: sys_rfree, sys_send, sys_barrier and
 * sys_finalize hand every leased slab back first. So another worker sees an object (sys_query,
 * sys_free, a region it sends) once its allocator has passed a flush point, which every
 * correct hand-over (sys_send, or a barrier) implies. A region freed by another worker is
 * noticed at this worker's next flush point, or when its cache needs a new lease there
 * (ENOENT): until then objects may still come from slabs cached in the dead region; they never
 * overlap a live object (the schedulers keep those slabs and the region's ID out of use until
 * they are handed back) and are dropped at the flush, with a message on stderr. ANTHEAP_CACHE=off
 * turns the cache off: every call is then a round trip to the schedulers.
 *
 * Memory is not zeroed: a new object may hold old bytes, also from regions that other workers
 * freed (freed regions stay mapped for reuse up to --antheap-retain MiB per worker).
 *
 * Building against an installed antheap (README, "Using antheap in your program"):
 *   CMake:       find_package(antheap) and target_link_libraries(app PRIVATE antheap::antheap)
 *   pkg-config:  cc app.c $(pkg-config --cflags --libs antheap)
 * The header is C11 and C++ (extern "C"); it includes <mpi.h>. The shared libantheap exports
 * the sys_* functions below and nothing else.
 */
#ifndef ANTHEAP_H
#define ANTHEAP_H

/* antheap uses MPI's C API only: from C++, keep mpi.h's deprecated C++ bindings out (Open MPI,
 * MPICH), so that C flags and libraries suffice (pkg-config, MPI::MPI_C). A program that wants
 * them includes <mpi.h> before this header. */
#if defined(__cplusplus) && !defined(OMPI_SKIP_MPICXX)
#define OMPI_SKIP_MPICXX 1
#endif
#if defined(__cplusplus) && !defined(MPICH_SKIP_MPICXX)
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* The version of this header; sys_version() gives the library's. The build (CMakeLists.txt)
 * reads its version from these three lines. */
#define ANTHEAP_VERSION_MAJOR 0
#define ANTHEAP_VERSION_MINOR 1
#define ANTHEAP_VERSION_PATCH 0
#define ANTHEAP_VERSION_STRING "0.1.0"
/* One number for comparisons: ANTHEAP_VERSION >= 100 means 0.1.0 or later. */
#define ANTHEAP_VERSION \
  (ANTHEAP_VERSION_MAJOR * 10000 + ANTHEAP_VERSION_MINOR * 100 + ANTHEAP_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t rid_t;
#define SYS_ROOT_REGION ((rid_t)0)
#define SYS_SAME_REGION ((rid_t)UINT32_MAX) /* sys_realloc: stay in the object's region */
#define SYS_NO_LEVEL_HINT (-1)              /* sys_ralloc: let antheap place it (a leaf) */

/* Join the job. On scheduler ranks of an SPMD launch this runs the daemon and never returns
 * (the process exits when the job ends). Calls MPI_Init if the application has not. Takes
 * the --antheap-* options out of argv. 0 on workers, -1 on failure. */
int sys_init(int *argc, char ***argv);
/* Leave the job: a barrier of all workers, then every scheduler returns what it holds to the
 * root, which checks that nothing is lost. Calls MPI_Finalize if sys_init called MPI_Init. */
int sys_finalize(void);

/* Regions. level_hint: 0 = top scheduler level, larger = closer to the workers, at most the
 * tree's deepest level (the leaves); SYS_NO_LEVEL_HINT places it at a leaf. Any other value
 * (deeper than the tree, or negative) is EINVAL: a hint is never clamped silently. */
rid_t sys_ralloc(rid_t parent, int level_hint);
int sys_rfree(rid_t region); /* frees its objects and every descendant region */

/* Objects. */
void *sys_alloc(size_t size, rid_t region);
/* sys_free(NULL) does nothing and returns 0, as free(NULL). -1 with errno EINVAL for a pointer
 * that is not a live object's start, ENOMEM when the scheduler had no metadata left to give
 * the object's slab a record of its own (a slab of a lease that came back full; the object
 * stays live, the call may be retried). */
int sys_free(void *ptr);
void *sys_realloc(void *ptr, size_t new_size, rid_t new_region);
int sys_balloc(size_t size, rid_t region, int num_objects, void **objects); /* <= 2^20 objects */
/* The region and slot size of the object containing ptr. */
int sys_query(const void *ptr, rid_t *region, size_t *size);

/* Moving data: whole regions (with their descendants) and single objects, to worker peer
 * (an index in 0 .. sys_workers()-1). The receiver names the same number of regions and
 * objects and gets their IDs and pointers. A move hands them over: until the receiver moves
 * them on (or a barrier hands them on by the application's own convention), no other worker
 * allocates, frees or writes in them. Workers of one host share the memory, so the receiver
 * sees exactly what the sender left; and a worker that received regions and changed nothing
 * since sends the same regions and objects on without asking the schedulers for their
 * ranges (ANTHEAP_MOVE_MEMO). */
int sys_send(int peer, const rid_t *regions, int num_regions, void *const *objects, int num_objects);
int sys_recv(int peer, rid_t *regions, int num_regions, void **objects, int num_objects);
/* Hand regions (with their descendants) over to worker peer without moving their bytes. */
int sys_give(int peer, const rid_t *regions, int num_regions);
int sys_barrier(void);

/* The workers' own communicator (rank = worker index), for the application's MPI calls. */
MPI_Comm sys_comm(void);
int sys_worker_id(void);
int sys_workers(void);
const char *sys_strerror(int err);
/* The library's version, "MAJOR.MINOR.PATCH" (ANTHEAP_VERSION_STRING of the header it was
 * built with); may be called before sys_init. */
const char *sys_version(void);

#ifdef __cplusplus
}
#endif

#endif /* ANTHEAP_H */

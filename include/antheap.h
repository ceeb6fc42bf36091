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
 * returns 0 (IDs), NULL (pointers) or -1 (the rest), changes nothing, and sets errno:
 *   ENOENT  no such region          EINVAL  bad pointer or argument (wild, interior, freed)
 *   ENOMEM  GAS exhausted           ENOSPC  no region IDs left
 *   EPERM   the worker does not hold the region (the hand-over rule, below)
 *   EPROTO  a malformed message     EXDEV   (internal: a move between schedulers)
 *   E2BIG   sys_balloc of more objects than one request carries (1,048,576)
 *   ETIMEDOUT, ECANCELED, ECONNREFUSED, ESHUTDOWN: moves and waits (below)
 *   ENOTCONN  antheap is not initialised: any call before sys_init or after sys_finalize
 *             (but sys_strerror, sys_version, and sys_free(NULL), which does nothing)
 *   EDOM    sys_init: a bad --antheap-* option or ANTHEAP_* value (one rank printed which,
 *           on stderr)          EBUSY   sys_init called twice
 * sys_strerror(errno) explains them. sys_init fails on every rank alike, after the message;
 * if it had called MPI_Init it calls MPI_Finalize, so the program just returns (status 1).
 *
 * The hand-over rule: a region has one holder. A region is held by the worker that created it,
 * then by the receiver of each sys_send (or sys_give) that names it or an ancestor; the root
 * region (SYS_ROOT_REGION) belongs to every worker and is never handed over. Only the holder
 * may allocate in a region (sys_alloc, sys_balloc, sys_realloc into it), free or reallocate its
 * objects, create children under it (sys_ralloc), free it (sys_rfree: it and every descendant
 * must be the worker's), or send or give it (likewise with every descendant; an object named
 * in a sys_send must lie in a region the sender holds, and be an object's start). Anyone may
 * look (sys_query). Any other call fails with EPERM and changes nothing, whichever scheduler
 * serves it, so a region can never be delivered twice. After a sys_send the sender must not
 * read or write what it sent either (on one host the receiver sees the same memory); nothing
 * can stop a plain load or store, but ANTHEAP_CHECK=handover catches them: the sender loses
 * access to the pages of the regions it handed over until they come back to it, and a stale
 * access stops the job with a message naming the address, the region, the hand-over (its
 * number, the peer, a backtrace) and the worker. The check costs no message: it is made by the
 * schedulers on the requests they see anyway, and a worker's allocation cache only ever holds
 * slabs of regions it holds (it hands them back before any hand-over).
 *
 * Reading what another worker holds: workers that share the GAS memory (sys_shares_gas: those
 * of one host, by default) see each other's regions at the same addresses, and may read a
 * region another worker holds, pointers and all, while its holder leaves it unchanged and
 * alive: between two points of the application's own synchronisation (a collective, a
 * message). antheap orders none of these reads and gives no access it would not give anyway;
 * writes stay the holder's. Such a read may reach a region the reader itself sent (its holder
 * is now another worker): ANTHEAP_CHECK=handover counts that as stale, so a program that reads
 * what others hold runs that part unchecked (apps/barnes' pooled walk stands aside under the
 * check).
 *
 * Threads: sys_init_thread takes MPI's thread levels. Below MPI_THREAD_MULTIPLE (and with
 * sys_init, which asks MPI_THREAD_SINGLE) call sys_* from one thread at a time, as MPI's own
 * levels say. At MPI_THREAD_MULTIPLE every sys_* call is safe from any thread of a worker rank,
 * with these rules: a region is held by the worker rank, so its threads share it, and the
 * hand-over rule holds between them as between ranks (a thread must not allocate or free in a
 * region while another thread of the rank sends, gives or frees it); sys_barrier and
 * sys_finalize are collectives of the workers, called by one thread of each rank (sys_finalize
 * once every other thread is done with antheap); two moves between the same pair of workers
 * in the same direction on the same channel must not overlap in time (moves to different
 * peers may, and so may moves on different channels: sys_send_on). Each thread
 * allocates from a cache of its own; an object may be freed by any thread of the rank.
 * sys_init_thread calls MPI_Init_thread when MPI is not initialised yet, else asks MPI which
 * level it gave (MPI_Query_thread); *provided is the lower of required and MPI's level.
 *
 * The allocation cache. A worker serves sys_alloc, sys_balloc, sys_free, sys_realloc and
 * sys_query of objects up to 4 KiB itself, with no message, from whole slabs its schedulers
 * lease to it (a few at first, more while it keeps allocating in the same region and size);
 * errors (double free, interior or wild pointer) stay exact and synchronous. The schedulers
 * learn of such objects at the worker's next flush point: sys_rfree, sys_send, sys_give,
 * sys_barrier and sys_finalize hand every leased slab back first. So another worker sees an
 * object (sys_query, a region it receives) once its allocator has passed a flush point, which
 * every hand-over implies. ANTHEAP_CACHE=off turns the cache off: every call is then a round
 * trip to the schedulers.
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
/* sys_init at a thread level: required is MPI_THREAD_SINGLE, _FUNNELED, _SERIALIZED or
 * _MULTIPLE (EINVAL otherwise); *provided gets the level antheap gives, which is at most MPI's
 * (a program that needs MULTIPLE checks it, as it would MPI_Init_thread's). */
int sys_init_thread(int *argc, char ***argv, int required, int *provided);
/* Leave the job: a barrier of all workers, then every scheduler returns what it holds to the
 * root, which checks that nothing is lost. Calls MPI_Finalize if sys_init called MPI_Init.
 * Moves still sent to a worker in sys_finalize are refused (the sender gets ESHUTDOWN). A
 * worker that calls MPI_Finalize without sys_finalize is told so on stderr, and leaves the job
 * as sys_finalize would, inside MPI_Finalize (the job would hang otherwise). */
int sys_finalize(void);

/* Regions. level_hint: 0 = top scheduler level, larger = closer to the workers, at most the
 * tree's deepest level (the leaves); SYS_NO_LEVEL_HINT places it at a leaf. Any other value
 * (deeper than the tree, or negative) is EINVAL: a hint is never clamped silently. The new
 * region is the caller's; the parent must be too (EPERM), or the root region. */
rid_t sys_ralloc(rid_t parent, int level_hint);
int sys_rfree(rid_t region); /* frees its objects and every descendant region (all the caller's) */

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
 * objects and gets their IDs and pointers, at the same addresses. A move hands the regions
 * over (the hand-over rule, above): the receiver holds them when both calls return, the
 * sender holds nothing of them any more. An object moved alone stays in its region, with that
 * region's holder: the receiver gets its bytes, the sender keeps the right to free it.
 * Workers of one host share the memory, so the receiver sees exactly what the sender left;
 * and a worker that received regions and changed nothing since sends them on without the
 * schedulers packing them again (ANTHEAP_MOVE_MEMO; they still check the holder).
 * Both calls block until the other side comes: sys_send waits for the receiver's sys_recv (a
 * rendezvous), so two workers that send to each other at once wait for ever (a deadlock):
 * one of them must receive first. Errors:
 *   sys_send  EPERM (not the holder: nothing leaves), EINVAL (bad arguments, an interior
 *             pointer), ECONNREFUSED (the receiver named other counts: the regions stay the
 *             sender's), ESHUTDOWN (the receiver left in sys_finalize: likewise), ETIMEDOUT;
 *   sys_recv  ECANCELED (the sender's sys_send failed before anything moved), EINVAL (other
 *             counts than the sender's), ETIMEDOUT.
 * A sys_send that fails always tells the receiver, which never waits for a move that will not
 * come. Waits that say why: a worker waiting in sys_recv, sys_send or sys_barrier for more
 * than ANTHEAP_WAIT_WARN seconds (default 60; 0: never) prints once what it waits for (call,
 * peer, time); with ANTHEAP_WAIT_TIMEOUT=S the call gives up after S seconds with ETIMEDOUT
 * (default: never). After ETIMEDOUT from sys_recv nothing was taken, and a later call takes the
 * move if it comes; after ETIMEDOUT from sys_send the regions count as handed over (the peer may
 * still receive them) and that pair of workers is out of step on that channel: end the job; a
 * sys_barrier that
 * gave up is still under way, and the next sys_barrier (or sys_finalize) waits for that one. */
int sys_send(int peer, const rid_t *regions, int num_regions, void *const *objects, int num_objects);
int sys_recv(int peer, rid_t *regions, int num_regions, void **objects, int num_objects);
/* The same on one of SYS_MOVE_CHANNELS channels between each pair of workers (sys_send and
 * sys_recv are channel 0): a move matches the receive of its channel alone, so moves between
 * one pair of workers on different channels may overlap in time (threads of two ranks swapping
 * regions pair by pair at once). EINVAL for a channel outside 0 .. SYS_MOVE_CHANNELS - 1. */
#define SYS_MOVE_CHANNELS 1024
int sys_send_on(int peer, int channel, const rid_t *regions, int num_regions,
                void *const *objects, int num_objects);
int sys_recv_on(int peer, int channel, rid_t *regions, int num_regions, void **objects,
                int num_objects);
/* Hand regions (with their descendants) over to worker peer without moving their bytes: for
 * regions one worker makes for another (empty ones, or where both share the GAS memory).
 * Returns once the schedulers have made peer the holder; the application tells peer by its
 * own means (the IDs in an MPI message, a collective). The barrier is not a hand-over. EPERM,
 * EINVAL (peer is this worker or no worker). */
int sys_give(int peer, const rid_t *regions, int num_regions);
/* A barrier of all workers; every allocation cache is flushed first, so every worker's objects
 * are known to the schedulers (sys_query) afterwards. ETIMEDOUT (above). */
int sys_barrier(void);

/* The workers' own communicator (rank = worker index), for the application's MPI calls. */
MPI_Comm sys_comm(void);
int sys_worker_id(void);
int sys_workers(void);
/* Does a move between this worker and worker peer copy no bytes (both map the same GAS memory:
 * workers of one host, --antheap-share host)? 1 or 0 (1 for this worker itself); -1 with errno
 * EINVAL for a peer that is no worker. An application may size what it allocates before moving
 * by it: where moves copy, every allocated byte of a sent region travels. */
int sys_shares_gas(int peer);
/* This worker's host: how many ranks run there (workers and schedulers) and how many cores it
 * has (hwloc's count; each 0 where unknown). An application that would start threads of its
 * own may see whether they would find cores free. 0, or -1 with errno (ENOTCONN before
 * sys_init, as every call that needs a job). */
int sys_host_load(int *ranks, int *cores);
const char *sys_strerror(int err);
/* The library's version, "MAJOR.MINOR.PATCH" (ANTHEAP_VERSION_STRING of the header it was
 * built with); may be called before sys_init. */
const char *sys_version(void);

#ifdef __cplusplus
}
#endif

#endif /* ANTHEAP_H */

/* share.h: same-host sharing of the GAS. The workers of one host (MPI_COMM_TYPE_SHARED) map
 * the GAS from one memory object, MAP_SHARED at the same address, so a region moved between
 * two of them needs no copy: the bytes are already where the receiver looks. Workers on
 * different hosts keep their own backings and copy (transfer.h).
 *
 * The memory objects are memfds of the host's first worker, opened by the others through
 * /proc/<pid>/fd (memfds are not limited by the size of /dev/shm, which containers often keep
 * tiny): up to SHARE_MAX_OBJECTS of them, taking stripes of the GAS in turn (gas_map_striped),
 * because the kernel serializes the first touch of one object's pages: 32 processes faulting
 * pages of one memfd at once paid 30 us a page on the 32-core box, of 32 memfds 3.5 us
 * (apps/bench-fault). Where memfds fail, one POSIX shared memory object (/dev/shm); where that
 * fails too, the host's workers fall back to private GAS mappings, with a warning. */
#ifndef AH_WORKER_SHARE_H
#define AH_WORKER_SHARE_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHARE_MAX_OBJECTS 64 /* memfds a shared GAS is striped over, at most */

typedef struct share_group {
  int nworkers;
  int *domain_of; /* by worker index: the world rank of its host's first worker, or -1 when
                     its GAS is private */
  int *host_of;   /* by worker index: the world rank of its host's first worker, always */
  bool mpi_shm;   /* MPI carries this host's messages through shared memory (transfer.h) */
  int me;         /* this worker's index */
  const char *how; /* "memfds", "memfd", "posix shm" or "private" */
} share_group;

/* Collective over the workers: map the GAS [base, base + size), shared with this host's other
 * workers when want_shared (and there are any; from up to `objects` memfds, 1 to
 * SHARE_MAX_OBJECTS), else privately. 0, or an errno code with a message in err (the GAS could
 * not be mapped at all). A fallback to private memory is not an error: it is printed once per
 * host. split > 1 (ANTHEAP_SPLIT_HOSTS, for tests): each host's workers are cut into `split`
 * groups of consecutive ranks of `workers` that act as hosts of their own (their own GAS
 * objects, no sharing and no "near" between groups). Every rank must pass the same split: where
 * they differ, all return EDOM (a bad setting) and say so. */
int share_map_gas(MPI_Comm workers, bool want_shared, int objects, int split, uintptr_t base,
                  size_t size, share_group *g, char *err, size_t errlen);
void share_free(share_group *g);
/* May this worker move regions to/from worker peer without a copy? */
bool share_with(const share_group *g, int peer);
/* Does MPI reach worker peer through shared memory (same host, whether or not they share the
 * GAS, and transfer_host_uses_shm, read once when the GAS was mapped)? Moves to such a peer
 * send long ranges in pieces. */
bool share_near(const share_group *g, int peer);

#endif /* AH_WORKER_SHARE_H */

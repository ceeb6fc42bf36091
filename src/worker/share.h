/* share.h: same-host sharing of the GAS. The workers of one host (MPI_COMM_TYPE_SHARED) map
 * the GAS from one memory object, MAP_SHARED at the same address, so a region moved between
 * two of them needs no copy: the bytes are already where the receiver looks. Workers on
 * different hosts keep their own backings and copy (transfer.h).
 *
 * The memory object is a memfd of the host's first worker, opened by the others through
 * /proc/<pid>/fd (memfds are not limited by the size of /dev/shm, which containers often keep
 * tiny); where that fails, a POSIX shared memory object (/dev/shm); where that fails too, the
 * host's workers fall back to private GAS mappings, with a warning. */
#ifndef AH_WORKER_SHARE_H
#define AH_WORKER_SHARE_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct share_group {
  int nworkers;
  int *domain_of; /* by worker index: the world rank of its host's first worker, or -1 when
                     its GAS is private */
  int *host_of;   /* by worker index: the world rank of its host's first worker, always */
  bool mpi_shm;   /* MPI carries this host's messages through shared memory (transfer.h) */
  int me;         /* this worker's index */
  const char *how; /* "memfd", "posix shm" or "private" */
} share_group;

/* Collective over the workers: map the GAS [base, base + size), shared with this host's other
 * workers when want_shared (and there are any), else privately. 0, or an errno code with a
 * message in err (the GAS could not be mapped at all). A fallback to private memory is not
 * an error: it is printed once per host. */
int share_map_gas(MPI_Comm workers, bool want_shared, uintptr_t base, size_t size,
                  share_group *g, char *err, size_t errlen);
void share_free(share_group *g);
/* May this worker move regions to/from worker peer without a copy? */
bool share_with(const share_group *g, int peer);
/* Does MPI reach worker peer through shared memory (same host, whether or not they share the
 * GAS, and transfer_host_uses_shm, read once when the GAS was mapped)? Moves to such a peer
 * send long ranges in pieces. */
bool share_near(const share_group *g, int peer);

#endif /* AH_WORKER_SHARE_H */

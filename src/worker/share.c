/* share.c: one GAS memory object per host (share.h): created by the host's first worker
 * (memfd, else POSIX shm), opened by the others, mapped by everyone; who shares with whom.
 * Main entry: share_map_gas. */
#include "worker/share.h"
#include "worker/transfer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "worker/gas.h"

/* What the host's first worker tells the others. */
typedef struct {
  int32_t ok, pid, fd;
  char name[64]; /* POSIX shm name */
} object_note;

/* The leader's memfd of size bytes; -1 on failure. */
static int leader_memfd(size_t size) {
  int fd = memfd_create("antheap-gas", MFD_CLOEXEC);
  if (fd >= 0 && ftruncate(fd, (off_t)size)) {
    close(fd);
    fd = -1;
  }
  return fd;
}

static int leader_posix(size_t size, char *name, size_t cap) {
  snprintf(name, cap, "/antheap-gas-%d-%lx", (int)getpid(), (unsigned long)time(NULL));
  int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 && ftruncate(fd, (off_t)size)) {
    close(fd);
    shm_unlink(name);
    fd = -1;
  }
  return fd;
}

/* One attempt at a host-wide object (posix: a /dev/shm object, else a memfd). Returns this
 * worker's descriptor when every worker of the host opened it, else -1 (all closed). */
static int open_on_host(MPI_Comm host, int hr, bool posix, size_t size) {
  object_note note = {0};
  int fd = -1;
  if (hr == 0) {
    fd = posix ? leader_posix(size, note.name, sizeof note.name) : leader_memfd(size);
    note.ok = fd >= 0;
    note.pid = (int32_t)getpid();
    note.fd = fd;
  }
  MPI_Bcast(&note, (int)sizeof note, MPI_BYTE, 0, host);
  if (hr != 0 && note.ok) {
    if (posix) {
      fd = shm_open(note.name, O_RDWR | O_CLOEXEC, 0600);
    } else {
      char path[64];
      snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)note.pid, (int)note.fd);
      fd = open(path, O_RDWR | O_CLOEXEC);
    }
  }
  int mine = fd >= 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, host); /* also: everyone has opened it */
  if (hr == 0 && posix && note.ok) shm_unlink(note.name);
  if (!all && fd >= 0) {
    close(fd);
    fd = -1;
  }
  return fd;
}

/* This host's shared descriptor, or -1 (private GAS); *how says which. */
static int host_object(MPI_Comm host, int hr, size_t size, const char **how) {
  int fd = open_on_host(host, hr, false, size);
  *how = "memfd";
  if (fd < 0) {
    fd = open_on_host(host, hr, true, size);
    *how = "posix shm";
  }
  if (fd < 0) *how = "private";
  return fd;
}

int share_map_gas(MPI_Comm workers, bool want_shared, uintptr_t base, size_t size,
                  share_group *g, char *err, size_t errlen) {
  memset(g, 0, sizeof *g);
  MPI_Comm_rank(workers, &g->me);
  MPI_Comm_size(workers, &g->nworkers);
  g->domain_of = malloc((size_t)g->nworkers * sizeof *g->domain_of);
  g->host_of = malloc((size_t)g->nworkers * sizeof *g->host_of);
  if (!g->domain_of || !g->host_of) {
    share_free(g);
    snprintf(err, errlen, "antheap: no memory for the sharing table");
    return ENOMEM;
  }
  MPI_Comm host;
  MPI_Comm_split_type(workers, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  int hr, hs, world;
  MPI_Comm_rank(host, &hr);
  MPI_Comm_size(host, &hs);
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  int fd = -1;
  g->how = "private";
  if (want_shared && hs > 1) {
    fd = host_object(host, hr, size, &g->how);
    if (fd < 0 && hr == 0)
      fprintf(stderr, "antheap: warning: the %d workers of this host could not share one GAS "
                      "(memfd and /dev/shm both failed): every move between them copies\n", hs);
  }
  int rc = fd >= 0 ? gas_map_shared(base, size, fd, err, errlen) : gas_map(base, size, err, errlen);
  if (fd >= 0) close(fd); /* the mapping keeps the object */
  int leader = world;
  MPI_Bcast(&leader, 1, MPI_INT, 0, host);
  int domain = fd >= 0 ? leader : -1;
  MPI_Allgather(&domain, 1, MPI_INT, g->domain_of, 1, MPI_INT, workers);
  MPI_Allgather(&leader, 1, MPI_INT, g->host_of, 1, MPI_INT, workers);
  g->mpi_shm = transfer_host_uses_shm();
  MPI_Comm_free(&host);
  return rc;
}

void share_free(share_group *g) {
  free(g->domain_of);
  free(g->host_of);
  g->domain_of = g->host_of = NULL;
}

bool share_near(const share_group *g, int peer) {
  if (!g->mpi_shm || !g->host_of || peer < 0 || peer >= g->nworkers) return false;
  return g->host_of[peer] == g->host_of[g->me];
}

bool share_with(const share_group *g, int peer) {
  if (!g->domain_of || peer < 0 || peer >= g->nworkers) return false;
  int d = g->domain_of[g->me];
  return d >= 0 && g->domain_of[peer] == d;
}

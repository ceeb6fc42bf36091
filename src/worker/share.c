/* share.c: the GAS memory objects of a host (share.h): created by the host's first worker
 * (memfds in stripes, else one POSIX shm object), opened by the others, mapped by everyone; who
 * shares with whom. Main entry: share_map_gas. */
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
  int32_t ok, pid, nfds;
  int32_t fd[SHARE_MAX_OBJECTS];
  char name[64]; /* POSIX shm name */
} object_note;

/* How the GAS of size bytes is cut over at most `objects` memfds: stripes of *stride bytes (at
 * least 4 MiB, and at most 16,384 of them: each is a mapping of its own in every worker), taken
 * by the objects in turn; returns the number of objects (at most the stripes). */
static int stripes_of(size_t size, int objects, size_t *stride) {
  size_t s = (size_t)4 << 20;
  while ((size + s - 1) / s > 16384) s *= 2;
  size_t n = (size + s - 1) / s;
  *stride = s;
  if (objects > SHARE_MAX_OBJECTS) objects = SHARE_MAX_OBJECTS;
  if (objects < 2 || n < 2) {
    *stride = size; /* one object, mapped whole */
    return 1;
  }
  return (size_t)objects < n ? objects : (int)n;
}

/* The leader's memfds (note->nfds of them) holding the GAS of size bytes in stripes of stride;
 * 0, or -1 with none left open. */
static int leader_memfds(size_t size, size_t stride, object_note *note) {
  size_t stripes = (size + stride - 1) / stride, n = (size_t)note->nfds;
  off_t each = (off_t)(((stripes + n - 1) / n) * stride);
  for (int i = 0; i < note->nfds; i++) {
    int fd = memfd_create("antheap-gas", MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, each)) close(fd), fd = -1;
    if (fd < 0) {
      while (i-- > 0) close(note->fd[i]);
      return -1;
    }
    note->fd[i] = fd;
  }
  return 0;
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

/* One attempt at the host-wide objects (posix: one /dev/shm object, else memfds in stripes of
 * stride: nfds of them). Fills fds[] with this worker's descriptors and returns how many when
 * every worker of the host opened them all, else 0 (all closed). */
static int open_on_host(MPI_Comm host, int hr, bool posix, size_t size, int nfds, size_t stride,
                        int *fds) {
  object_note note = {.nfds = posix ? 1 : nfds};
  int got = 0;
  if (hr == 0) {
    if (posix) {
      note.fd[0] = leader_posix(size, note.name, sizeof note.name);
      note.ok = note.fd[0] >= 0;
    } else {
      note.ok = leader_memfds(size, stride, &note) == 0;
    }
    note.pid = (int32_t)getpid();
    if (note.ok) memcpy(fds, note.fd, (size_t)note.nfds * sizeof *fds), got = note.nfds;
  }
  MPI_Bcast(&note, (int)sizeof note, MPI_BYTE, 0, host);
  if (hr != 0 && note.ok) {
    for (; got < note.nfds; got++) {
      if (posix) {
        fds[got] = shm_open(note.name, O_RDWR | O_CLOEXEC, 0600);
      } else {
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)note.pid, (int)note.fd[got]);
        fds[got] = open(path, O_RDWR | O_CLOEXEC);
      }
      if (fds[got] < 0) break;
    }
  }
  int mine = note.ok && got == note.nfds, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, host); /* also: everyone has opened them */
  if (hr == 0 && posix && note.ok) shm_unlink(note.name);
  if (!all) {
    while (got-- > 0) close(fds[got]);
    return 0;
  }
  return note.nfds;
}

/* This host's shared descriptors (their number; 0: private GAS); *how says which. Striped
 * memfds first, then one memfd (a low limit of open files can refuse 64 of them), then one
 * POSIX shm object. */
static int host_objects(MPI_Comm host, int hr, size_t size, int objects, size_t *stride,
                        int *fds, const char **how) {
  int nfds = stripes_of(size, objects, stride);
  int got = open_on_host(host, hr, false, size, nfds, *stride, fds);
  if (!got && nfds > 1) *stride = size, got = open_on_host(host, hr, false, size, 1, size, fds);
  *how = got > 1 ? "memfds" : "memfd";
  if (!got) {
    *stride = size;
    got = open_on_host(host, hr, true, size, 1, size, fds);
    *how = "posix shm";
  }
  if (!got) *how = "private";
  return got;
}

/* Map the GAS from nfds objects (in stripes of stride), closing them; whether every worker of the
 * host did (those that did unmap again when one did not). *rc: this worker's result. */
static bool mapped_everywhere(MPI_Comm host, uintptr_t base, size_t size, int *fds, int nfds,
                              size_t stride, int *rc, char *err, size_t errlen) {
  *rc = gas_map_striped(base, size, fds, nfds, stride, err, errlen);
  for (int i = 0; i < nfds; i++) close(fds[i]); /* the mappings keep the objects */
  int mine = *rc == 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, host);
  if (!all && *rc == 0) gas_unmap();
  return all;
}

/* Map the GAS from the host's nfds objects, on every worker of the host or none: when a
 * worker cannot map the stripes (vm.max_map_count), the host maps one object whole instead,
 * reopened; when that fails too, each maps privately. Closes fds; 0 or an errno with err. */
static int map_on_host(MPI_Comm host, int hr, uintptr_t base, size_t size, int *fds, int *nfds,
                       size_t stride, const char **how, char *err, size_t errlen) {
  if (!*nfds) return gas_map(base, size, err, errlen);
  int rc;
  if (mapped_everywhere(host, base, size, fds, *nfds, stride, &rc, err, errlen)) return 0;
  if (rc) fprintf(stderr, "%s\n", err);
  if (hr == 0)
    fprintf(stderr, "antheap: warning: a worker of this host could not map the shared GAS from "
                    "%d memory object(s); trying %s\n", *nfds, *nfds > 1 ? "one" : "private GASes");
  if (*nfds > 1 && (*nfds = open_on_host(host, hr, false, size, 1, size, fds)) &&
      mapped_everywhere(host, base, size, fds, 1, size, &rc, err, errlen)) {
    *how = "memfd";
    return 0;
  }
  *nfds = 0;
  *how = "private";
  return gas_map(base, size, err, errlen);
}

/* The workers of this host, or of its group when split > 1 (consecutive host ranks together,
 * as a launcher places ranks on hosts). */
static MPI_Comm this_host(MPI_Comm workers, int split) {
  MPI_Comm host, group;
  MPI_Comm_split_type(workers, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  if (split <= 1) return host;
  int hr, hs;
  MPI_Comm_rank(host, &hr);
  MPI_Comm_size(host, &hs);
  MPI_Comm_split(host, (int)((long)hr * split / hs), hr, &group);
  MPI_Comm_free(&host);
  return group;
}

int share_map_gas(MPI_Comm workers, bool want_shared, int objects, int split, uintptr_t base,
                  size_t size, share_group *g, char *err, size_t errlen) {
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
  int split_range[2] = {-split, split}; /* minus the fewest, and the most */
  MPI_Allreduce(MPI_IN_PLACE, split_range, 2, MPI_INT, MPI_MAX, workers);
  if (split_range[0] != -split || split_range[1] != split) {
    share_free(g);
    snprintf(err, errlen, "antheap: ANTHEAP_SPLIT_HOSTS differs between the workers (%d to %d): "
             "set it the same for every rank", -split_range[0], split_range[1]);
    return EDOM; /* (a bad setting, as antheap.h's sys_init says) */
  }
  MPI_Comm host = this_host(workers, split);
  int hr, hs, world;
  MPI_Comm_rank(host, &hr);
  MPI_Comm_size(host, &hs);
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  int fds[SHARE_MAX_OBJECTS], nfds = 0;
  size_t stride = size;
  g->how = "private";
  if (want_shared && hs > 1) {
    nfds = host_objects(host, hr, size, objects, &stride, fds, &g->how);
    if (!nfds && hr == 0)
      fprintf(stderr, "antheap: warning: the %d workers of this host could not share one GAS "
                      "(memfd and /dev/shm both failed): every move between them copies\n", hs);
  }
  int rc = map_on_host(host, hr, base, size, fds, &nfds, stride, &g->how, err, errlen);
  int leader = world;
  MPI_Bcast(&leader, 1, MPI_INT, 0, host);
  int domain = nfds ? leader : -1;
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

/* bells.c: the host's doorbells in an MPI shared-memory window (bells.h). */
#include "job/bells.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/idle_mpi.h"

/* Each rank's part of the window holds two bells' room, and its bell is the first 64-byte
 * line in it: Open MPI packs the parts without aligning them, and a futex needs 4-byte
 * alignment (64 keeps the bells on lines of their own). The window is mapped at a page in
 * every rank, so every rank finds the same bell. */
#define PART_BYTES (2 * sizeof(bell))
static bell *bell_in(void *part) {
  return (bell *)(((uintptr_t)part + sizeof(bell) - 1) & ~(uintptr_t)(sizeof(bell) - 1));
}

/* Every local rank's bell, by world rank, from the window. */
static bool find_bells(bell_board *b, int nranks) {
  int n;
  MPI_Comm_size(b->host, &n);
  int *local = malloc((size_t)n * sizeof *local), *world = malloc((size_t)n * sizeof *world);
  b->of = calloc((size_t)nranks, sizeof *b->of);
  bool ok = local && world && b->of;
  MPI_Group hg, wg;
  MPI_Comm_group(b->host, &hg);
  MPI_Comm_group(MPI_COMM_WORLD, &wg);
  for (int i = 0; ok && i < n; i++) local[i] = i;
  if (ok) MPI_Group_translate_ranks(hg, n, local, wg, world);
  for (int i = 0; ok && i < n; i++) {
    MPI_Aint size;
    int unit;
    void *at;
    ok = MPI_Win_shared_query(b->win, i, &size, &unit, &at) == MPI_SUCCESS &&
         size >= (MPI_Aint)PART_BYTES && world[i] >= 0 && world[i] < nranks;
    if (ok) b->of[world[i]] = bell_in(at);
  }
  MPI_Group_free(&hg);
  MPI_Group_free(&wg);
  free(local);
  free(world);
  return ok;
}

/* This host goes without bells (collective over it): said once; a window made on every rank
 * of the host is freed, a half-made one is left alone. */
static void go_without(bell_board *b, bool made) {
  int host_rank, me, all_made, mine = made;
  MPI_Comm_rank(b->host, &host_rank);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (host_rank == 0)
    fprintf(stderr, "antheap: rank %d: no shared window for the host's doorbells; its ranks wait "
                    "without them\n", me);
  free(b->of);
  b->of = NULL;
  MPI_Allreduce(&mine, &all_made, 1, MPI_INT, MPI_MIN, b->host);
  if (all_made) MPI_Win_free(&b->win);
  b->win = MPI_WIN_NULL;
}

void bells_open(bell_board *b, bool want, bool wakeable, int nranks) {
  *b = (bell_board){.win = MPI_WIN_NULL, .host = MPI_COMM_NULL};
  int mine_wants = want, all_want;
  MPI_Allreduce(&mine_wants, &all_want, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_want) return;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &b->host);
  MPI_Comm_set_errhandler(b->host, MPI_ERRORS_RETURN);
  void *part = NULL;
  int rc = MPI_Win_allocate_shared((MPI_Aint)PART_BYTES, 1, MPI_INFO_NULL, b->host, &part,
                                   &b->win);
  bool made = rc == MPI_SUCCESS && part;
  if (made) {
    bell *mine = bell_in(part);
    memset(mine, 0, sizeof *mine);
    mine->wakeable = wakeable; /* (the allreduce below orders it before any ring) */
    MPI_Win_set_errhandler(b->win, MPI_ERRORS_RETURN);
  }
  int found = made && find_bells(b, nranks), everywhere;
  MPI_Allreduce(&found, &everywhere, 1, MPI_INT, MPI_MIN, b->host); /* (also: zeroed everywhere) */
  if (!everywhere) {
    go_without(b, made);
    return;
  }
  int me;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  b->mine = b->of[me];
}

/* The window's free is a barrier over the host, and Open MPI's spins: the host's ranks first
 * meet in one that sleeps between its tests, so that workers done early leave the cores to the
 * schedulers still shutting down. */
void bells_close(bell_board *b) {
  if (b->win != MPI_WIN_NULL) {
    MPI_Request rq;
    MPI_Ibarrier(b->host, &rq);
    idle_wait_request(&rq, IDLE_DEFAULT_MAX_US * 1000);
    MPI_Win_free(&b->win);
  }
  if (b->host != MPI_COMM_NULL) MPI_Comm_free(&b->host);
  free(b->of);
  *b = (bell_board){.win = MPI_WIN_NULL, .host = MPI_COMM_NULL};
}

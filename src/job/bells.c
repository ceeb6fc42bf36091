/* bells.c: the host's doorbells in an MPI shared-memory window (bells.h). */
#include "job/bells.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every local rank's bell, by world rank, from the window (each rank's own part of it). */
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
         size >= (MPI_Aint)sizeof(bell) && world[i] >= 0 && world[i] < nranks;
    if (ok) b->of[world[i]] = at;
  }
  MPI_Group_free(&hg);
  MPI_Group_free(&wg);
  free(local);
  free(world);
  return ok;
}

void bells_open(bell_board *b, bool want, bool wakeable, int nranks) {
  *b = (bell_board){.win = MPI_WIN_NULL, .host = MPI_COMM_NULL};
  int all_want, me;
  int mine_wants = want;
  MPI_Allreduce(&mine_wants, &all_want, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_want) return;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &b->host);
  MPI_Comm_set_errhandler(b->host, MPI_ERRORS_RETURN);
  bell *mine = NULL;
  int made = MPI_Win_allocate_shared((MPI_Aint)sizeof(bell), 1, MPI_INFO_NULL, b->host, &mine,
                                     &b->win) == MPI_SUCCESS && mine, everywhere;
  if (made) {
    memset(mine, 0, sizeof *mine);
    mine->wakeable = wakeable; /* (the allreduce below orders it before any ring) */
    MPI_Win_set_errhandler(b->win, MPI_ERRORS_RETURN);
  }
  int found = made && find_bells(b, nranks);
  MPI_Allreduce(&found, &everywhere, 1, MPI_INT, MPI_MIN, b->host); /* (also: zeroed everywhere) */
  if (everywhere) {
    b->mine = b->of[me];
    return;
  }
  int first;
  MPI_Comm_rank(b->host, &first);
  if (first == 0)
    fprintf(stderr, "antheap: rank %d: no shared window for the host's doorbells; its ranks wait "
                    "without them\n", me);
  free(b->of);
  b->of = NULL;
  /* a window made everywhere (the bells could not be found) goes; a half-made one stays */
  int all_made;
  MPI_Allreduce(&made, &all_made, 1, MPI_INT, MPI_MIN, b->host);
  if (all_made) MPI_Win_free(&b->win);
  b->win = MPI_WIN_NULL;
}

void bells_close(bell_board *b) {
  if (b->win != MPI_WIN_NULL) MPI_Win_free(&b->win);
  if (b->host != MPI_COMM_NULL) MPI_Comm_free(&b->host);
  free(b->of);
  *b = (bell_board){.win = MPI_WIN_NULL, .host = MPI_COMM_NULL};
}

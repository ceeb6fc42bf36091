/* bells.h: the doorbells of a job's ranks (common/bell.h), one a rank, in an MPI shared-memory
 * window over the ranks of each host. A rank rings the bell of a rank of its own host after it
 * sends it a protocol message (a worker's request to its scheduler, a scheduler's reply or
 * its message to another scheduler), and every rank's waits sleep on its own bell
 * (common/idle.h). Ranks on other hosts have no bell here: their messages wake a sleeper at
 * the end of its back-off's sleep, as before bells. ANTHEAP_BELLS=0 turns them off. */
#ifndef AH_JOB_BELLS_H
#define AH_JOB_BELLS_H

#include <mpi.h>
#include <stdbool.h>

#include "common/bell.h"

typedef struct bell_board {
  bell **of;   /* by world rank: its bell when it is on this host; NULL: no bells */
  bell *mine;  /* this rank's, or NULL */
  MPI_Win win; /* the host's window (MPI_WIN_NULL: none) */
  MPI_Comm host;
} bell_board;

/* Collective over MPI_COMM_WORLD (nranks ranks): bells for the ranks of each host when every
 * rank wants them (want: ANTHEAP_BELLS), else none; this rank's is wakeable when its waits
 * sleep (no core of its own). A host whose MPI cannot share a window goes without, with one
 * warning. Never fails: a job runs without bells as it did before. */
void bells_open(bell_board *b, bool want, bool wakeable, int nranks);
/* Collective over the host's ranks (they all reach it: job_teardown). */
void bells_close(bell_board *b);

/* Ring world rank `rank`'s bell, if it has one here (after sending it a message). */
static inline void bells_ring(const bell_board *b, int rank) {
  bell *x = b->of ? b->of[rank] : NULL;
  if (x) bell_ring(x);
}

#endif

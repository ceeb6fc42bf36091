/* listx_mpi.h: the variants of the MPI binary (listx) and the communicator they share. */
#ifndef AH_LISTX_MPI_H
#define AH_LISTX_MPI_H

#include <mpi.h>

#include "listx.h"

/* The workers' communicator: sys_comm() under antheap, MPI_COMM_WORLD otherwise. */
extern MPI_Comm lx_comm;

extern const lx_variant lx_antheap;   /* var_antheap.c */
extern const lx_variant lx_antheap_balloc;
extern const lx_variant lx_mpi_rma;   /* var_mpi_rma.c */
extern const lx_variant lx_mpi_pack;  /* var_mpi_pack.c */
extern const lx_variant lx_antheap_threads; /* var_antheap_threads.c */
extern const lx_variant lx_antheap_balloc_threads;
extern const lx_variant lx_antheap_threads_bundled;

/* Run variant v (a *-threads one) with o->threads threads in this rank, each one worker
 * (rank rt->me of rt->n worker ranks); lx_run's status. */
int lx_run_threads(const lx_opts *o, const lx_rt *rt, const lx_variant *v);

#endif

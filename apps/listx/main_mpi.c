/* main_mpi.c: the listx binary: the antheap, antheap-balloc, mpi-rma and mpi-pack variants,
 * and the hybrid antheap-threads and antheap-balloc-threads (--threads T per rank).
 *
 * With an antheap variant (or any --antheap-* option) the job starts with sys_init: the
 * first ranks become schedulers and the workers are sys_comm(). Without it, plain MPI_Init
 * and every rank is a worker, so that a baseline never shares the cores with idle
 * schedulers. scripts/bench launches each variant on its own. A *-threads variant starts
 * antheap with sys_init_thread at MPI_THREAD_MULTIPLE (so the other antheap variants of the
 * same job run at that level too: no move memo, ranks not bound to a core; launch them alone
 * to compare).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "antheap.h"
#include "listx_mpi.h"

MPI_Comm lx_comm = MPI_COMM_NULL;

static void mpi_barrier(void) { MPI_Barrier(lx_comm); }

static double mpi_max(double v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, lx_comm);
  return v;
}

static long mpi_sum(long v) {
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG, MPI_SUM, lx_comm);
  return v;
}

static void mpi_abort(int status) { MPI_Abort(MPI_COMM_WORLD, status); }

int main(int argc, char **argv) {
  lx_opts o;
  int rc = lx_parse(argc, argv, &o, "listx",
                    "antheap,antheap-balloc,mpi-rma,mpi-pack,antheap-threads,"
                    "antheap-balloc-threads,antheap-threads-bundled");
  if (rc) return rc > 0 ? 0 : 2;
  int with_threads = lx_wants(&o, "antheap-threads") || lx_wants(&o, "antheap-balloc-threads") ||
                     lx_wants(&o, "antheap-threads-bundled");
  int with_antheap = lx_wants(&o, "antheap") || lx_wants(&o, "antheap-balloc") || with_threads;
  for (int i = 1; i < argc; i++) with_antheap |= !strncmp(argv[i], "--antheap-", 10);

  lx_rt rt = {.barrier = mpi_barrier, .max = mpi_max, .sum = mpi_sum, .abort = mpi_abort};
  if (with_antheap) {
    int provided = MPI_THREAD_SINGLE;
    /* scheduler ranks never return from it */
    if (with_threads ? sys_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided)
                     : sys_init(&argc, &argv)) {
      fprintf(stderr, "listx: sys_init failed: %s\n", sys_strerror(errno));
      return 2;
    }
    if (with_threads && provided != MPI_THREAD_MULTIPLE) {
      fprintf(stderr, "listx: the *-threads variants need MPI_THREAD_MULTIPLE (got %d)\n",
              provided);
      sys_finalize();
      return 2;
    }
    lx_comm = sys_comm();
    int world;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    rt.schedulers = world - sys_workers();
  } else {
    MPI_Init(&argc, &argv);
    lx_comm = MPI_COMM_WORLD;
  }
  MPI_Comm_rank(lx_comm, &rt.me);
  MPI_Comm_size(lx_comm, &rt.n);

  const lx_variant *vs[] = {&lx_antheap, &lx_antheap_balloc, &lx_mpi_rma, &lx_mpi_pack};
  int status = lx_run(&o, &rt, vs, 4);
  const lx_variant *ts[] = {&lx_antheap_threads, &lx_antheap_balloc_threads,
                            &lx_antheap_threads_bundled};
  for (int i = 0; i < 3; i++) {
    if (!lx_wants(&o, ts[i]->name)) continue;
    int st = lx_run_threads(&o, &rt, ts[i]);
    if (st > status) status = st;
  }
  if (with_antheap) sys_finalize();
  else MPI_Finalize();
  return status;
}

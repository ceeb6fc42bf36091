/* barnes_mpi.c: the same parallel Barnes-Hut in plain MPI, what a user writes without antheap
 * (bh_run.c's step, with the same domains, top tree, LETs and opening angle): a worker's tree
 * lives in malloc'd memory, and the LETs for all peers are marshalled into one MPI_Alltoallv
 * (child pointers as indices), their pointers rebuilt on arrival (bh_let_relocate). The
 * baseline beside barnes in apps/barnes/bench.sh. Main entry: main(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bh_run.h"

static double now(void) { return bench_now_ns() * 1e-9; }

typedef struct lets {
  int me, P;
  MPI_Comm comm;
  void **buf;       /* per peer: its LET, marshalled */
  int *sc, *sd, *rc, *rd;
  char *recv;       /* every peer's LET, as received */
} lets;

static void *let_buffer(void *ctx, int peer, size_t bytes) {
  lets *L = ctx;
  free(L->buf[peer]);
  L->buf[peer] = malloc(bytes ? bytes : 1);
  L->sc[peer] = (int)bytes;
  return L->buf[peer];
}

static int exchange(void *ctx, const void **got, const char *want, bh_clock *clk) {
  lets *L = ctx;
  size_t out = 0;
  for (int q = 0; q < L->P; q++)
    if (!want[q]) L->sc[q] = 0; /* (no buffer asked this step) */
  for (int q = 0; q < L->P; q++) L->sd[q] = (int)out, out += (size_t)L->sc[q];
  char *send = malloc(out ? out : 1);
  if (!send) return -1;
  for (int q = 0; q < L->P; q++)
    if (want[q]) memcpy(send + L->sd[q], L->buf[q], (size_t)L->sc[q]);
  double t0 = now();
  MPI_Alltoall(L->sc, 1, MPI_INT, L->rc, 1, MPI_INT, L->comm);
  size_t in = 0;
  for (int q = 0; q < L->P; q++) L->rd[q] = (int)in, in += (size_t)L->rc[q];
  free(L->recv);
  L->recv = malloc(in ? in : 1);
  if (!L->recv) return free(send), -1;
  MPI_Alltoallv(send, L->sc, L->sd, MPI_BYTE, L->recv, L->rc, L->rd, MPI_BYTE, L->comm);
  clk->wcomm += now() - t0;
  free(send);
  for (int q = 0; q < L->P; q++) {
    if (!want[q]) continue;
    if (bh_let_relocate(L->recv + L->rd[q], (size_t)L->rc[q])) return -1;
    got[q] = L->recv + L->rd[q];
  }
  return 0;
}

static void release(void *ctx, bh_clock *clk) {
  (void)clk;
  lets *L = ctx;
  for (int q = 0; q < L->P; q++) free(L->buf[q]), L->buf[q] = NULL;
  free(L->recv);
  L->recv = NULL;
}

int main(int argc, char **argv) {
  if (bench_wants_help(argc, argv)) { /* before MPI_Init: --help needs no job */
    bh_usage(stdout, BH_MPI);
    return 0;
  }
  int provided; /* --threads: the rank's threads call no MPI */
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  bh_opts o;
  int rc = bh_opts_parse(argc, argv, BH_MPI, &o);
  if (rc) {
    MPI_Finalize();
    return rc > 0 ? 0 : 2;
  }
  lets L = {.comm = MPI_COMM_WORLD};
  MPI_Comm_rank(L.comm, &L.me);
  MPI_Comm_size(L.comm, &L.P);
  L.buf = calloc((size_t)L.P, sizeof *L.buf);
  L.sc = calloc((size_t)L.P * 4, sizeof *L.sc);
  bh_mem arena = bh_arena_new();
  if (!L.buf || !L.sc || !arena.ctx) {
    fprintf(stderr, "barnes-mpi: error: out of memory\n");
    MPI_Abort(L.comm, 1);
  }
  L.sd = L.sc + L.P, L.rc = L.sd + L.P, L.rd = L.rc + L.P;
  bh_transport tr = {.mode = o.threads > 1 ? "mpi-threads" : "mpi", .relocatable = true, .mem = arena,
                     .let_buffer = let_buffer, .exchange = exchange, .release = release,
                     .ctx = &L};
  int failed = bh_run(&o, L.comm, 0, &tr);
  bh_arena_delete(&arena);
  free(L.buf), free(L.sc);
  MPI_Finalize();
  return failed;
}

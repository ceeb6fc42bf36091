/* bench_ways.c: the ways plain MPI can move K scattered ranges between two ranks, against one
 * MPI_Send of the same bytes from one contiguous buffer, in the same run: the measurement
 * behind transfer.c's choice of one message per range, and behind the limit that choice
 * meets over TCP.
 *
 * The ranges are K equal pieces of `total` bytes with gaps of the same length between them
 * (the layout of a region interleaved with another one). Every way first does what a move
 * does before its data (a small list message and a one-int answer, the receiver posting its
 * receives before it answers), then moves the bytes:
 *   messages   one message per range, all in flight (what transfer.c does);
 *   pieces     every range cut into messages of --piece bytes (default 65,408: under Open MPI's
 *              64 KiB TCP eager limit, so no rendezvous), a window of 8 in flight;
 *   hindexed   one message, an hindexed datatype of the ranges on both sides;
 *   stage-send the sender copies the ranges into one buffer (timed) and sends it contiguous;
 *              the receiver receives into the ranges through the datatype;
 *   stage-recv the sender sends through the datatype; the receiver receives into one buffer
 *              and copies it out to the ranges (timed).
 * ratio = MPI_Send time / the way's time (one-way: half a ping-pong; medians).
 *
 * Run: mpirun -np 2 bench-ways [--reps R] [--csv PATH]   (on TCP: --mca pml ob1 --mca btl
 * tcp,self; the default results/bench-ways.csv) */
#include <getopt.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define TAG 21
#define MAXREPS 200
#define MAXK 64
#define WINDOW 8

typedef enum { MESSAGES, PIECES, HINDEXED, STAGE_SEND, STAGE_RECV, NWAYS } way;
static const char *const way_names[NWAYS] = {"messages", "pieces", "hindexed", "stage-send",
                                             "stage-recv"};

typedef struct {
  size_t total, len; /* bytes moved; bytes of one range */
  int k;             /* ranges */
  size_t piece;      /* PIECES: bytes per message */
  char *base;        /* 2 * total bytes: range i at base + 2 * i * len */
  char *stage;       /* total bytes */
  MPI_Datatype ranges;
} layout;

static int rank;

static char *range_at(const layout *l, int i) { return l->base + (size_t)i * 2 * l->len; }

/* What a move does before its data: the sender's list, the receiver's answer (sent once
 * `post` has posted the receives). */
static void list_out(int peer) {
  int word = 0;
  MPI_Send(&word, 1, MPI_INT, peer, TAG, MPI_COMM_WORLD);
  MPI_Recv(&word, 1, MPI_INT, peer, TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
static void list_in(int peer) {
  int word;
  MPI_Recv(&word, 1, MPI_INT, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}
static void answer(int peer) {
  int word = 0;
  MPI_Send(&word, 1, MPI_INT, peer, TAG + 1, MPI_COMM_WORLD);
}

/* PIECES: message m of the concatenated ranges, each range cut on its own. */
static void piece_of(const layout *l, size_t m, char **at, int *len) {
  size_t per = (l->len + l->piece - 1) / l->piece;
  size_t i = m / per, off = (m % per) * l->piece;
  size_t left = l->len - off;
  *at = range_at(l, (int)i) + off;
  *len = (int)(left < l->piece ? left : l->piece);
}

static void pieces_leg(const layout *l, int peer, bool sending) {
  size_t n = (size_t)l->k * ((l->len + l->piece - 1) / l->piece), posted = 0, done = 0;
  MPI_Request rq[WINDOW];
  if (sending) list_out(peer);
  else list_in(peer);
  while (done < n) {
    while (posted < n && posted - done < WINDOW) {
      char *at;
      int len;
      piece_of(l, posted, &at, &len);
      if (sending) MPI_Isend(at, len, MPI_BYTE, peer, TAG + 2, MPI_COMM_WORLD, &rq[posted % WINDOW]);
      else MPI_Irecv(at, len, MPI_BYTE, peer, TAG + 2, MPI_COMM_WORLD, &rq[posted % WINDOW]);
      posted++;
      if (!sending && posted == (n < WINDOW ? n : WINDOW)) answer(peer);
    }
    MPI_Wait(&rq[done % WINDOW], MPI_STATUS_IGNORE);
    done++;
  }
}

/* One leg of a way: rank `sending` moves the ranges to the other. */
static void leg(const layout *l, way w, int peer, bool sending) {
  MPI_Request rq[MAXK];
  if (w == PIECES) {
    pieces_leg(l, peer, sending);
    return;
  }
  if (sending) {
    list_out(peer);
    if (w == MESSAGES) {
      for (int i = 0; i < l->k; i++)
        MPI_Isend(range_at(l, i), (int)l->len, MPI_BYTE, peer, TAG + 2, MPI_COMM_WORLD, &rq[i]);
      MPI_Waitall(l->k, rq, MPI_STATUSES_IGNORE);
    } else if (w == STAGE_SEND) {
      for (int i = 0; i < l->k; i++) memcpy(l->stage + (size_t)i * l->len, range_at(l, i), l->len);
      MPI_Send(l->stage, (int)l->total, MPI_BYTE, peer, TAG + 2, MPI_COMM_WORLD);
    } else { /* HINDEXED, STAGE_RECV */
      MPI_Send(l->base, 1, l->ranges, peer, TAG + 2, MPI_COMM_WORLD);
    }
    return;
  }
  list_in(peer);
  if (w == MESSAGES) {
    for (int i = 0; i < l->k; i++)
      MPI_Irecv(range_at(l, i), (int)l->len, MPI_BYTE, peer, TAG + 2, MPI_COMM_WORLD, &rq[i]);
    answer(peer);
    MPI_Waitall(l->k, rq, MPI_STATUSES_IGNORE);
  } else if (w == STAGE_RECV) {
    MPI_Irecv(l->stage, (int)l->total, MPI_BYTE, peer, TAG + 2, MPI_COMM_WORLD, &rq[0]);
    answer(peer);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < l->k; i++) memcpy(range_at(l, i), l->stage + (size_t)i * l->len, l->len);
  } else { /* HINDEXED, STAGE_SEND */
    MPI_Irecv(l->base, 1, l->ranges, peer, TAG + 2, MPI_COMM_WORLD, &rq[0]);
    answer(peer);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
  }
}

static double way_pingpong(const layout *l, way w) {
  int peer = 1 - rank;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = bench_now_ns();
  leg(l, w, peer, rank == 0);
  leg(l, w, peer, rank == 1);
  return (bench_now_ns() - t0) / 2;
}

static double send_pingpong(char *buf, size_t bytes) {
  int peer = 1 - rank;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = bench_now_ns();
  for (int legno = 0; legno < 2; legno++) {
    if ((legno == 0) == (rank == 0)) MPI_Send(buf, (int)bytes, MPI_BYTE, peer, TAG + 3, MPI_COMM_WORLD);
    else MPI_Recv(buf, (int)bytes, MPI_BYTE, peer, TAG + 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return (bench_now_ns() - t0) / 2;
}

static bool layout_init(layout *l, size_t total, int k, size_t piece) {
  l->k = k;
  l->len = total / (size_t)k;
  l->total = l->len * (size_t)k;
  l->piece = piece;
  l->base = malloc(2 * l->total);
  l->stage = malloc(l->total);
  if (!l->base || !l->stage) return false;
  memset(l->base, rank + 1, 2 * l->total);
  memset(l->stage, 0, l->total);
  int lens[MAXK];
  MPI_Aint at[MAXK];
  for (int i = 0; i < k; i++) lens[i] = (int)l->len, at[i] = (MPI_Aint)(range_at(l, i) - l->base);
  MPI_Type_create_hindexed(k, lens, at, MPI_BYTE, &l->ranges);
  MPI_Type_commit(&l->ranges);
  return true;
}

static void layout_free(layout *l) {
  MPI_Type_free(&l->ranges);
  free(l->base);
  free(l->stage);
}

static void usage(FILE *f) {
  fprintf(f, "usage: mpirun -np 2 bench-ways [--reps R] [--piece B] [--max-mib M] [--csv PATH]\n"
             "  Plain MPI ways to move K scattered ranges (K = 1, 5, 9; 1 MiB .. M MiB) against one\n"
             "  MPI_Send of the same bytes from one buffer: a message per range, eager-sized pieces,\n"
             "  one hindexed message, staging on the sender or on the receiver (see the source's\n"
             "  head). Each way first exchanges a list and an answer, as a move does.\n"
             "  --reps R      repetitions per point, median reported (default 21, at most %d)\n"
             "  --piece B     bytes per message of the pieces way (default 65408)\n"
             "  --max-mib M   largest move, MiB (default 16; sizes 1, 4, 16, ...)\n"
             "  --csv PATH    CSV output (default results/bench-ways.csv; written afresh)\n"
             "  Run it over TCP (mpirun --mca pml ob1 --mca btl tcp,self) and on shared memory.\n",
          MAXREPS);
}

int main(int argc, char **argv) {
  if (bench_wants_help(argc, argv)) { /* before MPI_Init: --help needs no mpirun */
    usage(stdout);
    return 0;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int reps = 21, size;
  long piece = 65408, max_mib = 16;
  const char *csv = "results/bench-ways.csv";
  static const struct option opts[] = {{"reps", 1, 0, 'r'}, {"piece", 1, 0, 'p'},
                                       {"max-mib", 1, 0, 'm'}, {"csv", 1, 0, 'c'},
                                       {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
  for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
    if (c == 'r') reps = atoi(optarg);
    else if (c == 'p') piece = atol(optarg);
    else if (c == 'm') max_mib = atol(optarg);
    else if (c == 'c') csv = optarg;
    else {
      if (rank == 0) usage(c == 'h' ? stdout : stderr);
      MPI_Finalize();
      return c == 'h' ? 0 : 2;
    }
  }
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2 || reps < 1 || reps > MAXREPS || piece < 1024 || piece > (1 << 30) ||
      max_mib < 1 || max_mib > 1024) {
    if (rank == 0) {
      fprintf(stderr, "bench-ways: needs exactly 2 ranks, --reps 1..%d, --piece 1024..2^30, "
                      "--max-mib 1..1024\n", MAXREPS);
      usage(stderr);
    }
    MPI_Finalize();
    return 2;
  }
  static const char *const cols[] = {"total_bytes", "ranges", "way", "piece", "way_us",
                                     "mpi_send_us", "ratio"};
  bench_table *t = rank == 0 ? bench_table_new("bench-ways: K scattered ranges moved by plain "
                                               "MPI vs one MPI_Send of the same bytes, one-way; "
                                               "ratio = mpi_send_us / way_us", 7, cols)
                             : NULL;
  if (rank == 0 && !t) MPI_Abort(MPI_COMM_WORLD, 1);
  static const int ks[] = {1, 5, 9};
  double tw[MAXREPS], tm[MAXREPS];
  for (long mib = 1; mib <= max_mib; mib *= 4) {
    for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
      layout l;
      if (!layout_init(&l, (size_t)mib << 20, ks[ki], (size_t)piece)) {
        fprintf(stderr, "bench-ways: rank %d: out of memory for %ld MiB\n", rank, mib);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      for (int w = 0; w < NWAYS; w++) {
        if (ks[ki] == 1 && w >= HINDEXED) continue; /* one range: nothing to gather */
        if (rank == 0) fprintf(stderr, "bench-ways: %ld MiB in %d ranges, %s\n", mib, l.k, way_names[w]);
        way_pingpong(&l, (way)w); /* warm-up */
        for (int r = 0; r < reps; r++) { /* alternate, so that drift hits both alike */
          tm[r] = send_pingpong(l.stage, l.total);
          tw[r] = way_pingpong(&l, (way)w);
        }
        double wm = bench_median(tw, (size_t)reps), mm = bench_median(tm, (size_t)reps);
        if (rank == 0) {
          char c[7][32];
          snprintf(c[0], sizeof c[0], "%zu", l.total);
          snprintf(c[1], sizeof c[1], "%d", l.k);
          snprintf(c[2], sizeof c[2], "%s", way_names[w]);
          snprintf(c[3], sizeof c[3], "%zu", w == PIECES ? l.piece : l.len);
          snprintf(c[4], sizeof c[4], "%.1f", wm * 1e-3);
          snprintf(c[5], sizeof c[5], "%.1f", mm * 1e-3);
          snprintf(c[6], sizeof c[6], "%.3f", mm / wm);
          const char *cells[7] = {c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
          bench_table_row(t, cells);
        }
      }
      layout_free(&l);
    }
  }
  int rc = rank == 0 ? bench_table_finish(t, csv) : 0;
  MPI_Finalize();
  return rc ? 1 : 0;
}

/* listx.h: the list-exchange benchmark (Myrmics section 6.5, Figure 4g-h), the driver that
 * every variant shares.
 *
 * Each worker builds a linked list of N nodes of S bytes (the link included). Then an
 * all-to-all in stages separated by barriers (a round-robin tournament: every pair of
 * workers meets exactly once): in each stage a worker fetches its partner's whole list,
 * modifies every node (marks itself in the node's visitor bitmap, counts the visit, adds a
 * checksum term) and gives the list back. At the end every worker verifies its own list:
 * N nodes, indices 0..N-1 in order, every other worker's mark, visit and checksum present
 * exactly once. A variant is only the way a list is built, fetched and given back:
 *   antheap   the list in a region; one sys_send/sys_recv of the region each way
 *             (antheap-balloc: the same, nodes allocated by sys_balloc in batches)
 *   shmem     OpenSHMEM, UPC-style: shmem_getmem/shmem_putmem node by node
 *   mpi-rma   MPI-3 RMA, UPC-style: MPI_Get/MPI_Put node by node, passive target
 *   mpi-pack  hand-marshalled MPI: traverse, pack, send, unpack, re-link
 *   antheap-threads  hybrid: each rank runs --threads T threads, each one worker as above
 *             (worker = rank * T + thread); a partner in the same rank gets the list by a
 *             pointer handed over in the process, one in another rank by sys_send_on /
 *             sys_recv_on, a channel per crossing pair (antheap-balloc-threads: with sys_balloc; antheap-threads-bundled: the lists
 *             crossing between two ranks in a stage move together; var_antheap_threads.c)
 * The driver times build + exchange (as the paper does: antheap pays one scheduler round
 * trip per allocation there), verifies, and prints a line and a CSV row per variant.
 */
#ifndef AH_LISTX_H
#define AH_LISTX_H

#include <stddef.h>
#include <stdint.h>

/* A list node. Its size is the run's node size (--node-size, 256 B by default): the
 * visitor bitmap fills the rest of it. */
typedef struct lx_node {
  uint64_t next;    /* the link: a pointer (antheap, mpi-pack), or 1 + the byte offset of the
                     * next node in the owner's segment (shmem, mpi-rma); 0 ends the list */
  uint32_t owner;   /* the worker that built it */
  uint32_t index;   /* its position in the owner's list */
  uint32_t visits;  /* modifications so far */
  uint32_t reserved;
  uint64_t sum;     /* sum of lx_mix(owner, index, visitor) over the visitors */
  uint8_t marks[];  /* bit v: visited by worker v */
} lx_node;

#define LX_HEADER ((size_t)offsetof(lx_node, marks))

/* Options (lx_parse). */
typedef struct lx_opts {
  long nodes;             /* N, nodes per worker */
  size_t node_size;       /* S, bytes per node, a multiple of 8 */
  int reps;               /* repetitions per variant */
  char variants[256];     /* comma-separated names */
  const char *csv;        /* append a row per variant here, or NULL */
  const char *net;        /* interconnect label for the CSV ("shm", "tcp") */
  int fanout;             /* --antheap-fanout as given (for the CSV; 0: default) */
  int partners;           /* --partners K: only the first K stages (0: all, W-1 partners) */
  int threads;            /* --threads T: worker threads per rank (the *-threads variants) */
  int corrupt;            /* test only: worker 1 skips one modification */
  int quiet;
} lx_opts;

/* What a variant gets: the options, who it is, and a counter of anomalies it saw. */
typedef struct lx_ctx {
  const lx_opts *o;
  int me, n;         /* worker index and worker count */
  int stage, rep;    /* current stage and repetition (for --corrupt) */
  long bad;          /* anomalies seen while modifying peers' lists */
  void *priv;        /* the variant's state */
} lx_ctx;

typedef struct lx_variant {
  const char *name;
  /* Once before the repetitions (may be NULL): windows, segments. 0 or -1. */
  int (*setup)(lx_ctx *c);
  /* Build this worker's list of c->o->nodes nodes, each set up with lx_init_node. 0 or -1. */
  int (*build)(lx_ctx *c);
  /* Fetch peer's list, lx_modify every node in list order, give it back; the partner does
   * the same at the same time (the exchange is symmetric). 0 or -1. */
  int (*exchange)(lx_ctx *c, int peer);
  /* Walk this worker's own list (for the verification). */
  const lx_node *(*first)(lx_ctx *c);
  const lx_node *(*next)(lx_ctx *c, const lx_node *x);
  /* End of a repetition: drop the list (may be NULL). */
  void (*release)(lx_ctx *c);
  /* After the repetitions (may be NULL). */
  void (*teardown)(lx_ctx *c);
} lx_variant;

/* The runtime the driver needs: barriers and all-reduces over the workers. */
typedef struct lx_rt {
  int me, n;
  int schedulers;  /* antheap scheduler ranks in the job (0 for the baselines) */
  int threads;     /* workers per rank (the *-threads variants: each thread is one worker,
                    * me and n count threads; 0 or 1: one worker a rank) */
  void (*barrier)(void);
  double (*max)(double v);
  long (*sum)(long v);
  void (*abort)(int status); /* a worker failed alone: end the whole job */
} lx_rt;

/* Parse argv (after the launcher's own options are gone): 0, 1 for --help (printed), -1 on
 * an error (printed). Only the first rank of the job prints. */
int lx_parse(int argc, char **argv, lx_opts *o, const char *prog, const char *known);
/* Whether name is in the --variants list. */
int lx_wants(const lx_opts *o, const char *name);
/* Run every wanted variant of vs[0..nv-1] and report; the process's exit status. */
int lx_run(const lx_opts *o, const lx_rt *rt, const lx_variant *const *vs, int nv);

/* Partner of worker me in stage s of n workers (round robin), or -1 (a bye). */
int lx_partner(int me, int n, int s);
int lx_stages(int n);
/* Stages a run does: all of them, or the first --partners K (each worker meets at most K
 * partners, so the exchange grows linearly with the workers, not quadratically). */
int lx_run_stages(const lx_opts *o, int n);

/* Fill a new node (owner c->me, the given index; next left to the caller). */
void lx_init_node(const lx_ctx *c, lx_node *x, uint32_t index);
/* The modification of a peer's node by this worker; checks the node belongs to peer and
 * sits at position index (anomalies go to c->bad). */
void lx_modify(lx_ctx *c, lx_node *x, int peer, uint32_t index);

#endif /* AH_LISTX_H */

/* listx.upc: the list-exchange benchmark in Berkeley UPC, as the Myrmics paper ran it
 * (section 6.5): nodes allocated one by one with upc_alloc in each thread's shared space;
 * in each round-robin stage a thread walks its partner's list node by node, fetching each
 * node with upc_memget, modifying it and returning it with upc_memput. Same schedule,
 * node layout (256 B, the shared next pointer included), modification and verification as
 * apps/listx (listx.h), so its CSV rows sit beside the other variants' (variant "upc").
 *
 * Built by CMake only when upcc is found (Berkeley UPC, https://upc.lbl.gov):
 *   upcc -O -network=mpi -o listx-upc listx.upc      (the paper used the MPI conduit)
 *   upcrun -n 16 ./listx-upc --nodes 30000 --reps 3 --csv results/listx-upc.csv
 * Options: --nodes N, --reps R, --csv FILE, --net LABEL. Exit status 1 when the
 * verification fails. Not built or run in antheap's CI (no upcc there).
 */
#include <upc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define NODE_SIZE 256

typedef struct node node;
typedef shared [] node *gptr; /* a pointer to a node in some thread's shared space */

struct node {
  gptr next;
  uint32_t owner, index, visits, reserved;
  uint64_t sum;
  uint8_t marks[NODE_SIZE - sizeof(gptr) - 24]; /* bit v: visited by thread v */
};

shared gptr heads[THREADS];     /* heads[t]: thread t's list */
shared double times[THREADS];   /* per-thread seconds, for the maximum */
shared long faults[THREADS];

static double now(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (double)tv.tv_sec + 1e-6 * (double)tv.tv_usec;
}

/* The round robin of listx.c (lx_partner). */
static int stages(int n) { return n < 2 ? 0 : (n % 2 ? n : n - 1); }
static int partner(int me, int n, int s) {
  int m = n % 2 ? n + 1 : n, k = m - 1, p;
  if (n < 2) return -1;
  if (me == m - 1) p = s % k;
  else {
    p = ((2 * s - me) % k + k) % k;
    if (p == me) p = m - 1;
  }
  return p >= n ? -1 : p;
}

static uint64_t mix(uint32_t owner, uint32_t index, uint32_t v) {
  uint64_t z = ((uint64_t)owner << 32 | index) * 0x9e3779b97f4a7c15ull + v + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  long nodes = 30000;
  int reps = 3;
  const char *csv = NULL, *net = "upc";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--nodes")) nodes = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--csv")) csv = argv[i + 1];
    else if (!strcmp(argv[i], "--net")) net = argv[i + 1];
  }
  if (THREADS > (int)sizeof(((node *)0)->marks) * 8 || nodes < 1 || reps < 1) {
    if (!MYTHREAD) fprintf(stderr, "listx-upc: bad arguments\n");
    return 2;
  }
  double *tot = malloc(sizeof(double) * (size_t)reps);
  long bad = 0, total_faults = 0;
  for (int r = 0; r < reps; r++) {
    upc_barrier;
    double t0 = now();
    gptr prev = NULL;
    for (long i = 0; i < nodes; i++) { /* build: one upc_alloc per node */
      gptr g = (gptr)upc_alloc(sizeof(node));
      node *x = (node *)g; /* local affinity: a plain pointer */
      memset(x, 0, sizeof *x);
      x->owner = (uint32_t)MYTHREAD;
      x->index = (uint32_t)i;
      x->next = NULL;
      if (prev) ((node *)prev)->next = g;
      else heads[MYTHREAD] = g;
      prev = g;
    }
    upc_barrier;
    for (int s = 0; s < stages(THREADS); s++) {
      int peer = partner(MYTHREAD, THREADS, s);
      if (peer >= 0) {
        node buf;
        uint32_t i = 0;
        for (gptr p = heads[peer]; p; p = buf.next, i++) {
          upc_memget(&buf, p, sizeof buf);
          if (buf.owner == (uint32_t)peer && buf.index == i) {
            buf.marks[MYTHREAD / 8] |= (uint8_t)(1u << (MYTHREAD % 8));
            buf.visits++;
            buf.sum += mix(buf.owner, buf.index, (uint32_t)MYTHREAD);
          } else {
            bad++;
          }
          upc_memput(p, &buf, sizeof buf);
        }
      }
      upc_barrier;
    }
    times[MYTHREAD] = now() - t0;
    /* verify the own list */
    long count = 0, f = 0;
    for (gptr g = heads[MYTHREAD]; g && count <= nodes; count++) {
      node *x = (node *)g;
      uint64_t want = 0;
      int ok = x->owner == (uint32_t)MYTHREAD && x->index == (uint32_t)count &&
               x->visits == (uint32_t)(THREADS - 1);
      for (int w = 0; w < THREADS; w++) {
        if (((x->marks[w / 8] >> (w % 8)) & 1) != (w != MYTHREAD)) ok = 0;
        if (w != MYTHREAD) want += mix(x->owner, x->index, (uint32_t)w);
      }
      if (!ok || x->sum != want) f++;
      gptr next = x->next;
      upc_free(g);
      g = next;
    }
    if (count != nodes) f++;
    faults[MYTHREAD] = f + bad;
    bad = 0;
    upc_barrier;
    double m = 0;
    for (int t = 0; t < THREADS; t++) m = times[t] > m ? times[t] : m;
    tot[r] = m;
    if (MYTHREAD == 0)
      for (int t = 0; t < THREADS; t++) total_faults += faults[t];
    upc_barrier;
  }
  int status = 0;
  if (MYTHREAD == 0) {
    double min = tot[0];
    for (int r = 1; r < reps; r++) min = tot[r] < min ? tot[r] : min;
    qsort(tot, (size_t)reps, sizeof *tot, cmp);
    double med = reps % 2 ? tot[reps / 2] : (tot[reps / 2 - 1] + tot[reps / 2]) / 2;
    printf("listx: upc      %3d workers, %ld nodes x %d B, %d reps: median %.4f s, min %.4f s, %s\n",
           THREADS, nodes, NODE_SIZE, reps, med, min, total_faults ? "verification FAILED" : "verified");
    if (csv) {
      FILE *f = fopen(csv, "a");
      if (f) {
        fprintf(f, "berkeley-upc,%s,upc,%d,0,0,%d,%ld,%d,%d,%.6f,%.6f,0,%.6f,%s\n", net, THREADS,
                THREADS, nodes, NODE_SIZE, reps, med, min, med, total_faults ? "NO" : "yes");
        fclose(f);
      }
    }
    status = total_faults ? 1 : 0;
  }
  upc_barrier;
  return status;
}

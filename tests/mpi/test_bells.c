/* test_bells.c: the doorbells of a host's ranks (src/job/bells.c) over MPI. Every rank joins at
 * MPI_THREAD_MULTIPLE, so that no rank is bound to a core of its own and every wait sleeps
 * (src/common/idle.h). Worker 0 idles --idle-ms between rounds, long enough for its scheduler
 * to sleep on its bell (the ctest sets sleeps of up to 100 ms), then makes a region, allocates
 * in it, checks the object and frees the region: the request rings the scheduler awake, and
 * its reply rings the worker if it sleeps. The ctests read the profile lines (ANTHEAP_PROFILE):
 * with bells, the scheduler's sleeps ended by a ring and worker 0's rings that woke it (the
 * scheduler's rings to the worker are not checked: the worker seldom sleeps before its
 * answer); with ANTHEAP_BELLS=0, no sleep ended by a ring. Every round's results are
 * checked: "test_bells: N rounds, 0 failed". Each round prints its first round trip's
 * microseconds (information, not checked). With --moves, worker 0 idles and then sends a
 * region to worker 1, asleep in sys_recv: the move's list rings it (src/worker/transfer.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "antheap.h"

static int failed;

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "test_bells: FAILED: %s (%s)\n", what, sys_strerror(errno));
  failed++;
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* One round; the first request's round trip in us (the one that meets a sleeping scheduler). */
static double one_round(void) {
  double t0 = now_us();
  rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  double first = now_us() - t0;
  check(r != 0, "sys_ralloc");
  if (!r) return first;
  unsigned char *p = sys_alloc(100, r);
  check(p != NULL, "sys_alloc");
  rid_t got = 0;
  if (p) {
    memset(p, 0x5A, 100);
    check(sys_query(p, &got, NULL) == 0 && got == r, "sys_query names the region");
  }
  check(sys_rfree(r) == 0, "sys_rfree");
  return first;
}

/* --moves: worker 0 sends a region it made to worker 1, which waits in sys_recv meanwhile and
 * frees what it received (the move handed it over). */
static void send_round(void) {
  rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  check(r != 0, "sys_ralloc of the moved region");
  check(r && sys_alloc(64, r) != NULL, "sys_alloc in the moved region");
  check(r && sys_send(1, &r, 1, NULL, 0) == 0, "sys_send");
}

static void recv_round(void) {
  rid_t r = 0;
  check(sys_recv(0, &r, 1, NULL, 0) == 0 && r != 0, "sys_recv");
  check(r && sys_rfree(r) == 0, "sys_rfree of the received region (it holds it now)");
}

int main(int argc, char **argv) {
  int rounds = 5, idle_ms = 300, moves = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--help")) {
      printf("usage: mpirun -np N test_bells [--rounds R] [--idle-ms MS] [--moves]\n");
      return 0;
    }
    if (!strcmp(argv[i], "--moves")) moves = 1;
    else if (i + 1 < argc && !strcmp(argv[i], "--rounds")) rounds = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--idle-ms")) idle_ms = atoi(argv[++i]);
  }
  int provided;
  if (sys_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided)) {
    fprintf(stderr, "test_bells: sys_init_thread: %s\n", sys_strerror(errno));
    return 1;
  }
  struct timespec idle = {idle_ms / 1000, (long)(idle_ms % 1000) * 1000000L};
  if (moves && sys_workers() < 2) check(0, "--moves needs two workers");
  else if (moves && sys_worker_id() == 0)
    for (int k = 0; k < rounds; k++) nanosleep(&idle, NULL), send_round();
  else if (moves && sys_worker_id() == 1)
    for (int k = 0; k < rounds; k++) recv_round();
  else if (sys_worker_id() == 0)
    for (int k = 0; k < rounds; k++) {
      nanosleep(&idle, NULL);
      printf("test_bells: round %d: the first round trip after %d ms idle: %.0f us\n", k + 1,
             idle_ms, one_round());
    }
  check(sys_barrier() == 0, "sys_barrier");
  if (sys_worker_id() == 0) printf("test_bells: %d rounds, %d failed\n", rounds, failed);
  int rc = sys_finalize();
  return failed || rc ? 1 : 0;
}

/* test_init.c: joining and leaving a job, and what goes wrong there (issue 28).
 *   default: every sys_* call before sys_init and after sys_finalize fails with ENOTCONN and
 *     sys_strerror says "antheap is not initialised"; sys_init twice is EBUSY; a few calls in
 *     between work. MPI is initialised by the test itself (so that it can count after
 *     sys_finalize); worker 0 prints "test_init: N passed, M failed".
 *   --expect-refusal: the launch carries a bad --antheap-* option or ANTHEAP_* value: sys_init
 *     must fail with EDOM ("bad option or setting"), and MPI, which sys_init initialised, must
 *     be finalised again; every rank prints "test_init: sys_init failed as expected: ..." and
 *     exits 0 (1 and "test_init: FAILED" otherwise).
 * The shutdown report (--antheap-stats, ANTHEAP_STATS) is checked by ctest on the output. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "antheap.h"

#define CHECK_NAME "test_init"
#include "worker_check.h"

/* The call failed with ENOTCONN and the text says why. */
static bool not_up(bool failed) {
  return failed && errno == ENOTCONN &&
         strcmp(sys_strerror(errno), "antheap is not initialised (call sys_init first)") == 0;
}

/* Every call that needs a job, with arguments it would otherwise take. */
static void check_every_call_needs_a_job(void) {
  static long x;
  rid_t r = 1;
  void *objs[2] = {&x, &x}, *o = &x;
  errno = 0;
  CHECK(not_up(sys_alloc(64, SYS_ROOT_REGION) == NULL));
  CHECK(not_up(sys_alloc(0, SYS_ROOT_REGION) == NULL)); /* not-initialised comes first */
  CHECK(not_up(sys_balloc(64, SYS_ROOT_REGION, 2, objs) == -1));
  CHECK(not_up(sys_free(&x) == -1));
  CHECK(sys_free(NULL) == 0); /* as free(NULL): nothing to do */
  CHECK(not_up(sys_realloc(&x, 128, SYS_SAME_REGION) == NULL));
  CHECK(not_up(sys_realloc(NULL, 128, SYS_SAME_REGION) == NULL));
  CHECK(not_up(sys_query(&x, &r, NULL) == -1));
  CHECK(not_up(sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT) == 0));
  CHECK(not_up(sys_rfree(r) == -1));
  CHECK(not_up(sys_send(1, &r, 1, &o, 1) == -1));
  CHECK(not_up(sys_recv(1, &r, 1, &o, 1) == -1));
  CHECK(not_up(sys_give(1, &r, 1) == -1));
  CHECK(not_up(sys_barrier() == -1));
  CHECK(not_up(sys_finalize() == -1));
  CHECK(not_up(sys_comm() == MPI_COMM_NULL));
  CHECK(not_up(sys_worker_id() == -1));
  CHECK(not_up(sys_workers() == 0));
  CHECK(not_up(sys_shares_gas(0) == -1));
  int ranks = -7, cores = -7;
  CHECK(not_up(sys_host_load(&ranks, &cores) == -1) && ranks == -7 && cores == -7);
  CHECK(strcmp(sys_version(), ANTHEAP_VERSION_STRING) == 0);
}

/* A few calls of a running job, and sys_init once more. */
static void check_a_running_job(void) {
  int argc = 1;
  char *args[] = {"test_init", NULL}, **argv = args;
  CHECK(sys_init(&argc, &argv) == -1 && errno == EBUSY);
  CHECK(strstr(sys_strerror(EBUSY), "already initialised") != NULL);
  rid_t r = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  void *p = sys_alloc(8000, r); /* more than the cache serves: a request */
  CHECK(r != 0 && p != NULL);
  CHECK(sys_free(p) == 0 && sys_rfree(r) == 0);
  CHECK(sys_free(p) == -1 && errno == EINVAL); /* the old text for the old error */
  CHECK(strstr(sys_strerror(EINVAL), "invalid pointer") != NULL);
  CHECK(sys_barrier() == 0);
}

/* --expect-refusal: sys_init must fail with EDOM and leave MPI finalised. */
static int expect_refusal(int argc, char **argv) {
  int rc = sys_init(&argc, &argv), err = errno, finalized = 0;
  MPI_Finalized(&finalized);
  const char *text = sys_strerror(err);
  if (rc == -1 && err == EDOM && strstr(text, "bad option or setting") && finalized) {
    printf("test_init: sys_init failed as expected: EDOM, %s\n", text);
    fflush(stdout); /* out now: a daemon that refused exits 2, and mpirun then kills the job */
    return 0;
  }
  printf("test_init: FAILED: sys_init returned %d, errno %d (%s), MPI %sfinalised\n", rc, err,
         text, finalized ? "" : "not ");
  if (rc == 0) sys_finalize();
  return 1;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--expect-refusal") == 0) return expect_refusal(argc, argv);
  MPI_Init(&argc, &argv); /* ours: MPI stays up after sys_finalize, to count */
  check_every_call_needs_a_job();
  if (sys_init(&argc, &argv)) { /* scheduler ranks never come back */
    fprintf(stderr, "test_init: sys_init failed: %s\n", sys_strerror(errno));
    MPI_Finalize();
    return 1;
  }
  MPI_Comm workers;
  MPI_Comm_dup(sys_comm(), &workers);
  check_a_running_job();
  CHECK(sys_finalize() == 0);
  check_every_call_needs_a_job(); /* after sys_finalize, as before sys_init */
  int bad = check_summary(workers, "");
  MPI_Comm_free(&workers);
  MPI_Finalize();
  return bad ? 1 : 0;
}

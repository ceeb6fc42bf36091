/* test_launch.c: launch_plan_build (src/job/launch.h) in a real MPI job, checked on every
 * rank: the same plan everywhere, a well-formed tree, each worker known to its leaf (a message
 * from every worker reaches its leaf, one from every scheduler its parent), ranks bound to
 * the core the plan names (when it names one), --antheap-*
 * options taken out of argv, and in MPMD the antheapd ranks as schedulers.
 *
 * Its own flags (kept apart from launch's): --as-antheapd (this app context plays antheapd),
 * --expect-mpmd, --expect-schedulers N, --expect-levels N, --expect-fanout N,
 * --expect-error TEXT (launch_plan_build must fail on every rank with TEXT in its message),
 * --expect-stats off|table|FILE (the shutdown report every rank's plan must name).
 * Rank 0 prints the plan with --antheap-topology, and "test_launch: all checks passed". */
#include <hwloc.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/launch.h"

static int failures;

#define CHECK(cond)                                                                       \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      failures++;                                                                         \
      fprintf(stderr, "test_launch: rank %d: check failed: %s (line %d)\n", self_rank,   \
              #cond, __LINE__);                                                           \
    }                                                                                     \
  } while (0)

static int self_rank;

typedef struct expect {
  bool as_antheapd, mpmd;
  int schedulers, levels, fanout;
  const char *error, *stats;
} expect;

static expect parse_expect(int argc, char **argv) {
  expect e = {0};
  for (int i = 1; i < argc; i++) {
    const char *next = i + 1 < argc ? argv[i + 1] : "0";
    if (!strcmp(argv[i], "--as-antheapd")) e.as_antheapd = true;
    else if (!strcmp(argv[i], "--expect-mpmd")) e.mpmd = true;
    else if (!strcmp(argv[i], "--expect-schedulers")) e.schedulers = atoi(next);
    else if (!strcmp(argv[i], "--expect-levels")) e.levels = atoi(next);
    else if (!strcmp(argv[i], "--expect-fanout")) e.fanout = atoi(next);
    else if (!strcmp(argv[i], "--expect-error")) e.error = next;
    else if (!strcmp(argv[i], "--expect-stats")) e.stats = next;
  }
  return e;
}

/* ---- option parsing (no MPI needed) ---- */

static void check_options_parse_and_leave_the_rest(void) {
  char *args[] = {"app", "--antheap-schedulers", "3", "x", "--antheap-fanout=4", "--",
                  "--antheap-bogus", NULL};
  int argc = 7;
  char **argv = args;
  launch_options o;
  char err[200];
  CHECK(launch_parse_options(&argc, &argv, &o, err, sizeof err) == 0);
  CHECK(o.schedulers == 3 && o.fanout == 4 && !o.topology);
  CHECK(argc == 4 && !strcmp(argv[1], "x") && !strcmp(argv[2], "--") && argv[4] == NULL);
}

static void check_bad_options_are_errors(void) {
  char *unknown[] = {"app", "--antheap-schedulerz", "3", NULL};
  char *bad_number[] = {"app", "--antheap-fanout", "0", NULL};
  char *missing[] = {"app", "--antheap-schedulers", NULL};
  char *flag_value[] = {"app", "--antheap-topology=yes", NULL};
  char **cases[] = {unknown, bad_number, missing, flag_value};
  const char *want[] = {"unknown option --antheap-schedulerz", "expected a whole number",
                        "needs a number", "takes no value"};
  for (int c = 0; c < 4; c++) {
    int argc = 0;
    while (cases[c][argc]) argc++;
    char **argv = cases[c];
    launch_options o;
    char err[200] = "";
    CHECK(launch_parse_options(&argc, &argv, &o, err, sizeof err) == -1);
    CHECK(strstr(err, want[c]) != NULL);
  }
}

/* ANTHEAP_* give defaults; argv wins. The variables are restored afterwards. */
static void check_environment_is_the_default(void) {
  char *saved_s = getenv("ANTHEAP_SCHEDULERS"), *saved_f = getenv("ANTHEAP_FANOUT");
  saved_s = saved_s ? strdup(saved_s) : NULL;
  saved_f = saved_f ? strdup(saved_f) : NULL;
  setenv("ANTHEAP_SCHEDULERS", "5", 1);
  setenv("ANTHEAP_FANOUT", "6", 1);
  char *args[] = {"app", "--antheap-schedulers", "2", NULL};
  int argc = 3;
  char **argv = args;
  launch_options o;
  char err[200];
  CHECK(launch_parse_options(&argc, &argv, &o, err, sizeof err) == 0);
  CHECK(o.schedulers == 2 && o.fanout == 6 && argc == 1);
  setenv("ANTHEAP_FANOUT", "many", 1);
  argc = 1;
  CHECK(launch_parse_options(&argc, &argv, &o, err, sizeof err) == -1);
  CHECK(strstr(err, "ANTHEAP_FANOUT=many") != NULL);
  if (saved_s) setenv("ANTHEAP_SCHEDULERS", saved_s, 1); else unsetenv("ANTHEAP_SCHEDULERS");
  if (saved_f) setenv("ANTHEAP_FANOUT", saved_f, 1); else unsetenv("ANTHEAP_FANOUT");
  free(saved_s);
  free(saved_f);
  CHECK(strstr(launch_help_text(), "--antheap-schedulers") != NULL);
}

/* --antheap-retain MiB (0 allowed), ANTHEAP_RETAIN; not given: -1 (the worker's default). */
static void check_retain_budget_option(void) {
  char *saved = getenv("ANTHEAP_RETAIN");
  saved = saved ? strdup(saved) : NULL;
  unsetenv("ANTHEAP_RETAIN");
  launch_options o;
  char err[200];
  char *none[] = {"app", NULL};
  int argc = 1;
  char **argv = none;
  CHECK(launch_parse_options(&argc, &argv, &o, err, sizeof err) == 0 && o.retain_mib == -1);
  char *zero[] = {"app", "--antheap-retain", "0", "x", NULL};
  argc = 4, argv = zero;
  CHECK(launch_parse_options(&argc, &argv, &o, err, sizeof err) == 0);
  CHECK(o.retain_mib == 0 && argc == 2 && !strcmp(argv[1], "x"));
  setenv("ANTHEAP_RETAIN", "64", 1);
  argc = 1, argv = none;
  CHECK(launch_parse_options(&argc, &argv, &o, err, sizeof err) == 0 && o.retain_mib == 64);
  char *eq[] = {"app", "--antheap-retain=512", NULL};
  argc = 2, argv = eq;
  CHECK(launch_parse_options(&argc, &argv, &o, err, sizeof err) == 0 && o.retain_mib == 512);
  char *bad[] = {"app", "--antheap-retain", "-1", NULL};
  argc = 3, argv = bad;
  CHECK(launch_parse_options(&argc, &argv, &o, err, sizeof err) == -1);
  CHECK(strstr(err, "expected a whole number of MiB") != NULL);
  setenv("ANTHEAP_RETAIN", "lots", 1);
  argc = 1, argv = none;
  CHECK(launch_parse_options(&argc, &argv, &o, err, sizeof err) == -1);
  CHECK(strstr(err, "ANTHEAP_RETAIN=lots") != NULL);
  if (saved) setenv("ANTHEAP_RETAIN", saved, 1); else unsetenv("ANTHEAP_RETAIN");
  free(saved);
}

/* Parse a copy of args (NULL-terminated, at most 7) into *o; 0 or -1 with the message in err. */
static int parse_args(char **args, launch_options *o, char *err, size_t errlen) {
  char *copy[8] = {0}, **argv = copy;
  int argc = 0;
  while (args[argc] && argc < 7) copy[argc] = args[argc], argc++;
  return launch_parse_options(&argc, &argv, o, err, errlen);
}

/* --antheap-stats off|table|FILE, ANTHEAP_STATS as its default; not given: the summary. */
static void check_stats_option(void) {
  char *saved = getenv("ANTHEAP_STATS");
  saved = saved ? strdup(saved) : NULL;
  unsetenv("ANTHEAP_STATS");
  launch_options o;
  char err[200];
  char *none[] = {"app", NULL}, *off[] = {"app", "--antheap-stats", "off", NULL};
  char *table[] = {"app", "--antheap-stats=table", NULL};
  char *file[] = {"app", "--antheap-stats", "stats.csv", "x", NULL};
  CHECK(parse_args(none, &o, err, sizeof err) == 0 && o.stats == PLAN_STATS_SUMMARY);
  CHECK(parse_args(off, &o, err, sizeof err) == 0 && o.stats == PLAN_STATS_OFF);
  CHECK(parse_args(table, &o, err, sizeof err) == 0 && o.stats == PLAN_STATS_TABLE);
  CHECK(parse_args(file, &o, err, sizeof err) == 0 && o.stats == PLAN_STATS_FILE &&
        !strcmp(o.stats_path, "stats.csv"));
  setenv("ANTHEAP_STATS", "table", 1);
  CHECK(parse_args(none, &o, err, sizeof err) == 0 && o.stats == PLAN_STATS_TABLE);
  CHECK(parse_args(off, &o, err, sizeof err) == 0 && o.stats == PLAN_STATS_OFF); /* argv wins */
  setenv("ANTHEAP_STATS", "-x", 1);
  CHECK(parse_args(none, &o, err, sizeof err) == -1 && strstr(err, "ANTHEAP_STATS=-x: expected"));
  unsetenv("ANTHEAP_STATS");
  char *missing[] = {"app", "--antheap-stats", NULL};
  char *forgot[] = {"app", "--antheap-stats", "--antheap-fanout", "2", NULL};
  char *empty[] = {"app", "--antheap-stats=", NULL};
  const char *expected = "expected off, table or a file name";
  CHECK(parse_args(missing, &o, err, sizeof err) == -1 && strstr(err, "needs off, table or a"));
  CHECK(parse_args(forgot, &o, err, sizeof err) == -1 && strstr(err, expected));
  CHECK(parse_args(empty, &o, err, sizeof err) == -1 && strstr(err, expected));
  if (saved) setenv("ANTHEAP_STATS", saved, 1);
  free(saved);
  CHECK(strstr(launch_help_text(), "--antheap-retain") != NULL);
}

/* ---- the plan ---- */

/* A digest of the whole plan, to compare across ranks. */
static unsigned long plan_digest(const launch_plan *p) {
  unsigned long h = 5381;
  for (int r = 0; r < p->nranks; r++) {
    const plan_rank *x = &p->ranks[r];
    int fields[] = {x->role, x->host, x->numa, x->sched_index, x->parent, x->worker_index,
                    x->leaf, x->worker_first, x->worker_count, x->nchildren};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) h = h * 33 + (unsigned)fields[i];
  }
  return h;
}

static void check_same_plan_everywhere(MPI_Comm world, const launch_plan *p) {
  unsigned long d = plan_digest(p), lo, hi;
  MPI_Allreduce(&d, &lo, 1, MPI_UNSIGNED_LONG, MPI_MIN, world);
  MPI_Allreduce(&d, &hi, 1, MPI_UNSIGNED_LONG, MPI_MAX, world);
  CHECK(lo == hi);
}

static void check_tree(const launch_plan *p) {
  CHECK(p->nschedulers + p->nworkers == p->nranks);
  for (int i = 0; i < p->nschedulers; i++) {
    const plan_rank *s = &p->ranks[p->sched_ranks[i]];
    CHECK(s->role == PLAN_SCHEDULER && s->sched_index == i);
    CHECK(i == 0 ? s->parent == -1 : s->parent == p->sched_ranks[(i - 1) / p->fanout]);
    for (int c = 0; c < s->nchildren; c++)
      CHECK(p->ranks[s->children[c]].parent == p->sched_ranks[i]);
  }
  for (int i = 0; i < p->nworkers; i++) {
    const plan_rank *w = &p->ranks[p->worker_ranks[i]];
    const plan_rank *leaf = &p->ranks[w->leaf];
    CHECK(w->role == PLAN_WORKER && w->worker_index == i);
    CHECK(leaf->role == PLAN_SCHEDULER && leaf->is_leaf);
    CHECK(i >= leaf->worker_first && i < leaf->worker_first + leaf->worker_count);
  }
}

/* Each worker tells its leaf its worker index; each non-root scheduler tells its parent its
 * scheduler index. Every receiver checks it heard exactly from the ranks the plan names. */
static void check_messages_follow_the_plan(MPI_Comm world, const launch_plan *p) {
  const plan_rank *me = &p->ranks[p->self];
  enum { TAG_WORKER = 11, TAG_CHILD = 12 };
  if (me->role == PLAN_WORKER) {
    MPI_Send(&me->worker_index, 1, MPI_INT, me->leaf, TAG_WORKER, world);
    return;
  }
  if (me->parent >= 0) MPI_Send(&me->sched_index, 1, MPI_INT, me->parent, TAG_CHILD, world);
  int expected = me->is_leaf ? me->worker_count : me->nchildren;
  int tag = me->is_leaf ? TAG_WORKER : TAG_CHILD;
  for (int k = 0; k < expected; k++) {
    int v;
    MPI_Status st;
    MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, tag, world, &st);
    if (me->is_leaf) {
      CHECK(v >= me->worker_first && v < me->worker_first + me->worker_count);
      CHECK(p->worker_ranks[v] == st.MPI_SOURCE);
    } else {
      CHECK(p->ranks[st.MPI_SOURCE].parent == p->self);
    }
  }
}

static void check_expectations(const launch_plan *p, const expect *e, int argc, char **argv) {
  for (int i = 0; i < argc; i++) CHECK(strncmp(argv[i], "--antheap-", 10) != 0);
  CHECK(p->mpmd == e->mpmd);
  if (e->schedulers) CHECK(p->nschedulers == e->schedulers);
  if (e->levels) CHECK(p->nlevels == e->levels);
  if (e->fanout) CHECK(p->fanout == e->fanout);
  if (e->mpmd) CHECK((p->ranks[p->self].role == PLAN_SCHEDULER) == e->as_antheapd);
  if (!e->stats) return; /* (the caller's ANTHEAP_STATS may choose one) */
  if (!strcmp(e->stats, "off")) CHECK(p->stats == PLAN_STATS_OFF);
  else if (!strcmp(e->stats, "table")) CHECK(p->stats == PLAN_STATS_TABLE);
  else CHECK(p->stats == PLAN_STATS_FILE && p->stats_path && !strcmp(p->stats_path, e->stats));
}

/* A rank the plan calls bound (core >= 0) runs inside that core; one it calls unbound has a
 * note saying why. */
static void check_binding(const launch_plan *p) {
  const plan_rank *me = &p->ranks[p->self];
  if (me->core < 0) {
    CHECK(p->warnings && (strstr(p->warnings, "not bound") || strstr(p->warnings, "launcher")));
    return;
  }
  hwloc_topology_t topo;
  CHECK(hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0);
  hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)me->core);
  hwloc_cpuset_t set = hwloc_bitmap_alloc();
  CHECK(core && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0);
  if (core) CHECK(hwloc_bitmap_isincluded(set, core->cpuset));
  hwloc_bitmap_free(set);
  hwloc_topology_destroy(topo);
}

/* --expect-error: every rank must fail with the same kind of message. */
static int run_expecting_error(MPI_Comm world, int *argc, char ***argv, const expect *e) {
  launch_plan p;
  char err[256] = "";
  CHECK(launch_plan_build(world, argc, argv, &p, err, sizeof err) == -1);
  CHECK(strstr(err, e->error) != NULL);
  if (self_rank == 0) printf("test_launch: refused as expected: %s\n", err);
  return 0;
}

static int run(MPI_Comm world, int *argc, char ***argv, const expect *e) {
  launch_plan p;
  char err[256] = "";
  if (launch_plan_build(world, argc, argv, &p, err, sizeof err) != 0) {
    fprintf(stderr, "test_launch: rank %d: launch_plan_build: %s\n", self_rank, err);
    failures++;
    return -1;
  }
  CHECK(p.self == self_rank);
  if (p.topology_only && self_rank == 0) plan_print(stdout, &p);
  fflush(stdout);
  check_same_plan_everywhere(world, &p);
  check_tree(&p);
  check_expectations(&p, e, *argc, *argv);
  check_binding(&p);
  check_messages_follow_the_plan(world, &p);
  launch_plan_free(&p);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &self_rank);
  char **copy = malloc(((size_t)argc + 1) * sizeof *copy); /* launch edits argv */
  memcpy(copy, argv, ((size_t)argc + 1) * sizeof *copy);
  expect e = parse_expect(argc, copy);
  check_options_parse_and_leave_the_rest();
  check_bad_options_are_errors();
  check_environment_is_the_default();
  check_retain_budget_option();
  check_stats_option();
  if (e.error) run_expecting_error(MPI_COMM_WORLD, &argc, &argv, &e);
  else run(MPI_COMM_WORLD, &argc, &argv, &e);
  int total;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (self_rank == 0 && total) printf("test_launch: %d checks failed\n", total);
  if (self_rank == 0 && !total) printf("test_launch: all checks passed\n");
  free(copy);
  MPI_Finalize();
  return total ? EXIT_FAILURE : EXIT_SUCCESS;
}

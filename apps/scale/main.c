/* main.c: scale, the weak-scaling benchmark of antheap (issue 19): the work of each worker is
 * the same whatever the number of workers, so time per worker-op should stay flat as the job
 * grows, and the root scheduler's share of the traffic should fall as levels are added.
 *
 * Per round, every worker
 *   - allocates --objects objects of 32..256 B in its own region, fills, checks and frees them;
 *   - creates --team-regions regions under its part of its team's region (a team is --team
 *     consecutive workers; the team's first worker makes the team region and a part under it
 *     for each member, which it gives to that member: sys_give), fills --team-objects objects
 *     in each, checks them and frees the regions;
 *   - exchanges its travel region (--items objects linked from a header) with each partner of
 *     the fixed schedule (work.h: ring neighbours and --cube hypercube dimensions, 2 + K at
 *     most): the partner checks every item, adds a stamp object allocated in the region and
 *     sends it back; the owner checks and frees the stamp;
 *   - ends the round with sys_barrier.
 * Every sys_* call is one worker-op. Worker 0 prints the phases, then a one-row table and a CSV
 * row: time in MPI_Init, sys_init, the rounds and sys_finalize (until the root has written the
 * schedulers' statistics), time per worker-op, the schedulers' messages by place in the tree
 * (root, inner, leaves) from their own counters, and the peak RSS of workers and schedulers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "antheap.h"
#include "bench.h"
#include "common/procstat.h"
#include "work.h"

typedef struct opts {
  int rounds, objects, team, team_regions, team_objects, items, cube;
  const char *csv, *stats;
  int keep_stats, corrupt;
} opts;

/* A travel region: a header object, items linked from it, stamps added by visitors. */
typedef struct item {
  struct item *next;
  uint64_t owner, index, round, sum;
} item;
typedef struct stamp {
  struct stamp *next;
  uint64_t visitor, round, stage;
} stamp;
typedef struct header {
  uint64_t magic, owner, round, nitems;
  item *items;
  stamp *stamps;
} header;
#define MAGIC 0x5ca1ab1e5ca1ab1eull

static int me, nw;
static long ops, faults;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void fault(const char *fmt, const char *what, long a, long b) {
  if (faults++ < 5) {
    fprintf(stderr, "scale: worker %d: verification FAILED: ", me);
    fprintf(stderr, fmt, what, a, b);
    fputc('\n', stderr);
  }
}

_Noreturn static void die(const char *what) {
  fprintf(stderr, "scale: worker %d: %s failed: %s\n", me, what, sys_strerror(errno));
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2); /* (MPI_Abort may return) */
}

static void usage(void) {
  printf("usage: mpirun -np N scale --antheap-schedulers S [options]\n"
         "  The weak-scaling benchmark: constant work per worker (own allocations, regions\n"
         "  under a team's shared parent, region moves to at most 2 + K fixed partners per\n"
         "  round: ring neighbours and K hypercube dimensions), every received region checked.\n"
         "  Worker 0 prints the phases and a table: time per worker-op, the schedulers'\n"
         "  messages by place in the tree, start-up and shutdown times, peak RSS.\n"
         "options:\n"
         "  --rounds R          rounds (default 10)\n"
         "  --objects A         own objects allocated and freed per round (default 64)\n"
         "  --team T            workers sharing a parent region (default 8)\n"
         "  --team-regions C    regions created under the team's parent per round (default 2)\n"
         "  --team-objects O    objects in each of them (default 8)\n"
         "  --items I           objects in the travel region (default 32)\n"
         "  --cube K            hypercube dimensions after the ring (default 3)\n"
         "  --csv FILE          append the result row to FILE (header when new)\n"
         "  --stats FILE        where the root writes the schedulers' statistics (default: a\n"
         "                      temporary file, removed; ANTHEAP_STATS if set)\n"
         "  --corrupt           test only: worker 1 spoils an item of its first partner's region,\n"
         "                      so verification must fail\n"
         "  --schedulers-for W  print the scheduler count for W workers (fan-out from\n"
         "                      --antheap-fanout F or ANTHEAP_FANOUT, default 8, as the job's;\n"
         "                      --per-leaf P workers on a leaf, default 8), the levels, and\n"
         "                      exit (no MPI)\n"
         "  --help              this text\n"
         "%s", BENCH_ANTHEAP_HELP);
}

static int number(const char *s, int lo, int hi, const char *name) {
  char *end;
  errno = 0;
  long v = s ? strtol(s, &end, 10) : 0;
  if (!s || errno || *end || v < lo || v > hi) {
    fprintf(stderr, "scale: %s needs a whole number from %d to %d (got '%s')\n", name, lo, hi,
            s ? s : "");
    exit(2);
  }
  return (int)v;
}

/* --antheap-* options are sys_init's: skipped here, but for the fan-out --schedulers-for
 * needs (in *fanout). Returns the index of the option's last word. */
static int antheap_option(int argc, char **argv, int i, int *fanout) {
  const char *a = argv[i], *eq = strchr(a, '=');
  const char *v = eq ? eq + 1 : NULL;
  if (!eq && strcmp(a, "--antheap-topology") && i + 1 < argc) v = argv[++i];
  if (v && !strncmp(a, "--antheap-fanout", 16) && (a[16] == '=' || !a[16]))
    *fanout = number(v, 1, 1000000, "--antheap-fanout");
  return i;
}

/* Options other than --antheap-* (which sys_init takes); exits for --help and errors. */
static void parse(int argc, char **argv, opts *o) {
  *o = (opts){.rounds = 10, .objects = 64, .team = 8, .team_regions = 2, .team_objects = 8,
              .items = 32, .cube = 3};
  const char *env_fanout = getenv("ANTHEAP_FANOUT");
  int plan_w = 0, per_leaf = 8;
  int fanout = env_fanout && *env_fanout ? number(env_fanout, 1, 1000000, "ANTHEAP_FANOUT") : 8;
  const char *rank = getenv("OMPI_COMM_WORLD_RANK");
  int loud = !rank || !strcmp(rank, "0");
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      if (loud) usage();
      exit(0);
    }
    if (!strncmp(a, "--antheap-", 10)) {
      i = antheap_option(argc, argv, i, &fanout);
      continue;
    }
    if (!strcmp(a, "--fanout")) {
      if (loud) fprintf(stderr, "scale: --fanout is now --antheap-fanout (the library's name)\n");
      exit(2);
    }
    if (!strcmp(a, "--corrupt")) { o->corrupt = 1; continue; }
    if (!v) {
      if (loud) fprintf(stderr, "scale: unknown option or missing value: %s (see --help)\n", a);
      exit(2);
    }
    i++;
    if (!strcmp(a, "--rounds")) o->rounds = number(v, 1, 1000000, a);
    else if (!strcmp(a, "--objects")) o->objects = number(v, 0, 1 << 20, a);
    else if (!strcmp(a, "--team")) o->team = number(v, 1, 1 << 20, a);
    else if (!strcmp(a, "--team-regions")) o->team_regions = number(v, 0, 1 << 16, a);
    else if (!strcmp(a, "--team-objects")) o->team_objects = number(v, 0, 1 << 16, a);
    else if (!strcmp(a, "--items")) o->items = number(v, 1, 1 << 20, a);
    else if (!strcmp(a, "--cube")) o->cube = number(v, 0, 20, a);
    else if (!strcmp(a, "--csv")) o->csv = v;
    else if (!strcmp(a, "--stats")) o->stats = v, o->keep_stats = 1;
    else if (!strcmp(a, "--schedulers-for")) plan_w = number(v, 1, 1 << 24, a);
    else if (!strcmp(a, "--per-leaf")) per_leaf = number(v, 1, 1 << 20, a);
    else {
      if (loud) fprintf(stderr, "scale: unknown option %s (see --help)\n", a);
      exit(2);
    }
  }
  if (plan_w) {
    int s = scale_schedulers_for(plan_w, fanout, per_leaf);
    if (s < 0) {
      fprintf(stderr, "scale: no tree of fan-out %d gives %d workers %d per leaf\n", fanout,
              plan_w, per_leaf);
      exit(2);
    }
    printf("%d %d\n", s, scale_levels(s, fanout));
    exit(0);
  }
}

/* ---- the travel region ---- */

static header *build_travel(rid_t r, int items) {
  header *h = sys_alloc(sizeof *h, r);
  ops++;
  if (!h) die("sys_alloc (travel header)");
  *h = (header){.magic = MAGIC, .owner = (uint64_t)me};
  item **link = &h->items;
  for (int i = 0; i < items; i++) {
    item *x = sys_alloc(sizeof *x, r);
    ops++;
    if (!x) die("sys_alloc (travel item)");
    *x = (item){.owner = (uint64_t)me, .index = (uint64_t)i};
    *link = x;
    link = &x->next;
  }
  h->nitems = (uint64_t)items;
  return h;
}

/* Set the items of our travel region for this round. */
static void stamp_round(header *h, int round) {
  h->round = (uint64_t)round;
  for (item *x = h->items; x; x = x->next) {
    x->round = (uint64_t)round;
    x->sum = scale_mix(x->owner, x->index, x->round);
  }
}

/* A partner's region: check every item, then add our stamp (allocated in the region). */
static void visit(header *h, rid_t r, int peer, int round, int stage, const opts *o) {
  if (h->magic != MAGIC || h->owner != (uint64_t)peer || h->round != (uint64_t)round) {
    fault("%s: header of worker %ld reads owner %ld", "travel", peer, (long)h->owner);
    return;
  }
  uint64_t n = 0;
  for (item *x = h->items; x && n <= h->nitems; x = x->next, n++) {
    if (x->owner != (uint64_t)peer || x->index != n || x->round != (uint64_t)round ||
        x->sum != scale_mix(x->owner, x->index, x->round))
      fault("%s: item %ld of worker %ld is wrong", "travel", (long)n, peer);
  }
  if (n != h->nitems) fault("%s: %ld items of %ld", "travel", (long)n, (long)h->nitems);
  if (o->corrupt && me == 1 && round == 0 && stage == 0 && h->items) /* test only */
    h->items->sum ^= 1;
  stamp *s = sys_alloc(sizeof *s, r);
  ops++;
  if (!s) die("sys_alloc (stamp in a partner's region)");
  *s = (stamp){.next = h->stamps, .visitor = (uint64_t)me, .round = (uint64_t)round,
               .stage = (uint64_t)stage};
  h->stamps = s;
}

/* Our region back: our items unchanged, and exactly the partner's stamp of this round and
 * stage, which we free. */
static void check_return(header *h, int peer, int round, int stage) {
  uint64_t n = 0;
  for (item *x = h->items; x && n <= h->nitems; x = x->next, n++)
    if (x->owner != (uint64_t)me || x->index != n || x->round != (uint64_t)round ||
        x->sum != scale_mix(x->owner, x->index, x->round))
      fault("%s: item %ld of ours came back wrong from worker %ld", "return", (long)n, peer);
  if (n != h->nitems) fault("%s: %ld items of %ld came back", "return", (long)n, (long)h->nitems);
  stamp *s = h->stamps;
  if (!s || s->next || s->visitor != (uint64_t)peer || s->round != (uint64_t)round ||
      s->stage != (uint64_t)stage) {
    fault("%s: no stamp (or a wrong one) from worker %ld in stage %ld", "return", peer, stage);
    return;
  }
  h->stamps = NULL;
  ops++;
  if (sys_free(s)) die("sys_free (stamp)");
}

/* One move of a region with its header object (the receiver learns both). */
static void move(int send, int peer, rid_t *r, header **h) {
  ops++;
  int rc = send ? sys_send(peer, r, 1, (void *const *)h, 1) : sys_recv(peer, r, 1, (void **)h, 1);
  if (rc) die(send ? "sys_send" : "sys_recv");
}

/* One exchange with peer (work.h's schedule): the lower index sends first; each visits the
 * other's region and sends it back; each checks its own on return. */
static void exchange(rid_t mine, header *h, int peer, int round, int stage, const opts *o) {
  rid_t theirs;
  header *th;
  header *mh = h;
  if (me < peer) {
    move(1, peer, &mine, &mh);
    move(0, peer, &theirs, &th);
    visit(th, theirs, peer, round, stage, o);
    move(1, peer, &theirs, &th);
    move(0, peer, &mine, &mh);
  } else {
    move(0, peer, &theirs, &th);
    move(1, peer, &mine, &mh);
    visit(th, theirs, peer, round, stage, o);
    move(0, peer, &mine, &mh);
    move(1, peer, &theirs, &th);
  }
  if (mh != h) fault("%s: header moved from %ld to %ld", "return", (long)(uintptr_t)h,
                     (long)(uintptr_t)mh);
  check_return(h, peer, round, stage);
}

/* ---- own objects and team regions ---- */

static void own_objects(rid_t r, int n, int round, void **v) {
  for (int i = 0; i < n; i++) {
    size_t sz = 32 * (size_t)(1 + (i + round) % 8);
    uint64_t *x = sys_alloc(sz, r);
    ops++;
    if (!x) die("sys_alloc (own object)");
    for (size_t k = 0; k < sz / 8; k++) x[k] = scale_mix((uint64_t)me, (uint64_t)i, k);
    v[i] = x;
  }
  for (int i = 0; i < n; i++) {
    size_t sz = 32 * (size_t)(1 + (i + round) % 8);
    const uint64_t *x = v[i];
    for (size_t k = 0; k < sz / 8; k++)
      if (x[k] != scale_mix((uint64_t)me, (uint64_t)i, k)) {
        fault("%s: object %ld word %ld overwritten", "own", i, (long)k);
        break;
      }
    ops++;
    if (sys_free(v[i])) die("sys_free (own object)");
  }
}

static void team_regions(rid_t parent, const opts *o, int round, void **v) {
  for (int c = 0; c < o->team_regions; c++) {
    rid_t r = sys_ralloc(parent, SYS_NO_LEVEL_HINT);
    ops++;
    if (!r) die("sys_ralloc (under the team's parent)");
    for (int i = 0; i < o->team_objects; i++) {
      uint64_t *x = sys_alloc(64, r);
      ops++;
      if (!x) die("sys_alloc (team region)");
      x[0] = scale_mix((uint64_t)me, (uint64_t)c, (uint64_t)round) + (uint64_t)i;
      v[i] = x;
    }
    for (int i = 0; i < o->team_objects; i++)
      if (((uint64_t *)v[i])[0] != scale_mix((uint64_t)me, (uint64_t)c, (uint64_t)round) + (uint64_t)i)
        fault("%s: object %ld of region %ld overwritten", "team", i, c);
    ops++;
    if (sys_rfree(r)) die("sys_rfree (team region)");
  }
}

/* ---- the report ---- */

/* Wait up to `limit` seconds for the root's statistics file; 0 when it is there. */
static int wait_for(const char *path, double limit) {
  double t0 = now();
  while (access(path, R_OK) != 0) {
    if (now() - t0 > limit) return -1;
    nanosleep(&(struct timespec){0, 2000000}, NULL);
  }
  return 0;
}

static const char *mib(char *b, uint64_t kib) {
  snprintf(b, 24, "%.1f", (double)kib / 1024.0);
  return b;
}

typedef struct result {
  int workers, schedulers;
  double ops_avg, run_s, mpi_init_s, startup_s, setup_s, shutdown_s;
  uint64_t rss_w_max, rss_w_sum;
  int verified;
} result;

static void report(const opts *o, const result *r, const scale_sched_stats *st, int have_stats) {
  double worker_ops = r->ops_avg * r->workers;
  const scale_class *root = &st->cls[0], *inner = &st->cls[1], *leaf = &st->cls[2];
  char c[24][40];
  int k = 0;
#define CELL(...) snprintf(c[k++], sizeof c[0], __VA_ARGS__)
  CELL("%d", r->workers);
  CELL("%d", r->schedulers);
  CELL("%d", have_stats ? st->levels : scale_levels(r->schedulers, 8));
  CELL("%d", r->workers + r->schedulers);
  CELL("%.0f", r->ops_avg);
  CELL("%.3f", r->run_s);
  CELL("%.2f", 1e6 * r->run_s / r->ops_avg);
  if (have_stats) {
    CELL("%.4f", (double)root->msgs / worker_ops);
    CELL("%lu", (unsigned long)root->msgs);
    CELL("%.0f", inner->count ? (double)inner->msgs / inner->count : 0.0);
    CELL("%.0f", leaf->count ? (double)leaf->msgs / leaf->count : 0.0);
    CELL("%.0f", (double)root->bytes / 1024.0);
    CELL("%.0f", leaf->count ? (double)leaf->bytes / 1024.0 / leaf->count : 0.0);
  } else {
    for (int i = 0; i < 6; i++) CELL("-");
  }
  CELL("%.3f", r->mpi_init_s);
  CELL("%.3f", r->startup_s);
  CELL("%.3f", r->setup_s);
  CELL("%.3f", r->shutdown_s);
  char b[24];
  CELL("%s", mib(b, r->rss_w_max));
  CELL("%s", mib(b, r->rss_w_sum / (uint64_t)r->workers));
  uint64_t smax = 0, ssum = 0;
  for (int i = 0; i < 3; i++) {
    if (st->cls[i].rss_kib_max > smax) smax = st->cls[i].rss_kib_max;
    ssum += st->cls[i].rss_kib_sum;
  }
  CELL("%s", have_stats ? mib(b, smax) : "-");
  CELL("%s", have_stats && st->rows ? mib(b, ssum / (uint64_t)st->rows) : "-");
  CELL("%s", r->verified ? "yes" : "NO");
#undef CELL
  static const char *const cols[] = {
      "workers", "schedulers", "levels", "ranks", "ops_per_worker", "run_s", "us_per_op",
      "root_msgs_per_op", "root_msgs", "inner_msgs_avg", "leaf_msgs_avg", "root_kib",
      "leaf_kib_avg", "mpi_init_s", "startup_s", "setup_s", "shutdown_s", "rss_worker_max_mib",
      "rss_worker_avg_mib", "rss_sched_max_mib", "rss_sched_avg_mib", "verified"};
  const char *cells[24];
  for (int i = 0; i < k; i++) cells[i] = c[i];
  char title[160];
  snprintf(title, sizeof title,
           "scale: %d rounds; per worker and round: %d own objects, %d team regions x %d "
           "objects, moves with at most %d partners of %d items",
           o->rounds, o->objects, o->team_regions, o->team_objects, scale_stages(o->cube),
           o->items);
  bench_row_append("scale", title, k, cols, cells, o->csv);
  if (have_stats)
    printf("scale: schedulers: root %lu msgs (%.4f per worker-op); %d inner: %lu msgs (max %lu);"
           " %d leaves: %lu msgs (max %lu)\n",
           (unsigned long)root->msgs, (double)root->msgs / worker_ops, inner->count,
           (unsigned long)inner->msgs, (unsigned long)inner->msgs_max, leaf->count,
           (unsigned long)leaf->msgs, (unsigned long)leaf->msgs_max);
}

int main(int argc, char **argv) {
  if (bench_wants_help(argc, argv)) { /* before anything else: --help needs no job */
    usage();
    return 0;
  }
  double t_start = now();
  opts o;
  parse(argc, argv, &o);
  MPI_Init(&argc, &argv); /* ours: sys_finalize leaves MPI up, for the statistics */
  double t_mpi = now();
  int wrank;
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  /* Every rank (schedulers included, SPMD) learns where the root writes its statistics. */
  char path[1024] = "";
  const char *env = getenv("ANTHEAP_STATS");
  if (wrank == 0) {
    if (o.stats) snprintf(path, sizeof path, "%s", o.stats);
    else if (env && *env) snprintf(path, sizeof path, "%s", env), o.keep_stats = 1;
    else {
      const char *tmp = getenv("TMPDIR");
      snprintf(path, sizeof path, "%s/antheap-scale-%ld.csv", tmp && *tmp ? tmp : "/tmp",
               (long)getpid());
    }
    unlink(path);
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  MPI_Bcast(&o.keep_stats, 1, MPI_INT, 0, MPI_COMM_WORLD);
  setenv("ANTHEAP_STATS", path, 1);
  if (sys_init(&argc, &argv)) { /* scheduler ranks never come back */
    fprintf(stderr, "scale: sys_init failed: %s\n", sys_strerror(errno));
    MPI_Finalize();
    return 2;
  }
  double t_init = now();
  me = sys_worker_id();
  nw = sys_workers();
  MPI_Comm comm = sys_comm();
  int world;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (me == 0) {
    printf("scale: %d workers + %d schedulers: MPI_Init %.3f s, sys_init %.3f s\n", nw,
           world - nw, t_mpi - t_start, t_init - t_mpi);
    fflush(stdout);
  }

  /* Set-up: a team region (its leader's, at the leader's leaf) with a part for each member
   * (made by the leader, given to the member), own regions. */
  void **v = malloc(sizeof(void *) * (size_t)(o.objects > o.team_objects ? o.objects + 1
                                                                         : o.team_objects + 1));
  rid_t team = 0, part = 0, *parts = calloc((size_t)o.team, sizeof *parts);
  int leader = me - me % o.team, members = nw - leader < o.team ? nw - leader : o.team;
  if (!parts) die("out of memory");
  if (me == leader) {
    if (!(team = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT))) die("sys_ralloc (team)");
    for (int m = 0; m < members; m++) {
      if (!(parts[m] = sys_ralloc(team, SYS_NO_LEVEL_HINT))) die("sys_ralloc (team part)");
      if (m && sys_give(leader + m, &parts[m], 1)) die("sys_give (team part)");
    }
  }
  /* each member's part, from its leader: a split by team, one scatter each */
  MPI_Comm tc;
  MPI_Comm_split(comm, me / o.team, me, &tc);
  MPI_Scatter(parts, 1, MPI_UINT32_T, &part, 1, MPI_UINT32_T, 0, tc);
  MPI_Comm_free(&tc);
  free(parts);
  rid_t own = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  rid_t travel = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  if (!own || !travel || !v) die("sys_ralloc (own regions)");
  header *h = build_travel(travel, o.items);
  if (sys_barrier()) die("sys_barrier");
  double t_setup = now();
  if (me == 0) {
    printf("scale: set-up %.3f s; %d rounds of %d stages\n", t_setup - t_init, o.rounds,
           scale_stages(o.cube));
    fflush(stdout);
  }

  ops = 0;
  double t0 = now(), last = t0;
  for (int round = 0; round < o.rounds; round++) {
    own_objects(own, o.objects, round, v);
    team_regions(part, &o, round, v);
    stamp_round(h, round);
    for (int s = 0; s < scale_stages(o.cube); s++) {
      int p = scale_partner(me, nw, s, o.cube);
      if (p >= 0) exchange(travel, h, p, round, s, &o);
    }
    ops++;
    if (sys_barrier()) die("sys_barrier");
    if (me == 0 && (now() - last > 5.0 || round + 1 == o.rounds)) {
      last = now();
      printf("scale: round %d of %d, %.3f s\n", round + 1, o.rounds, last - t0);
      fflush(stdout);
    }
  }
  double run = now() - t0;

  result r = {.workers = nw, .schedulers = world - nw, .mpi_init_s = t_mpi - t_start,
              .startup_s = t_init - t_mpi, .setup_s = t_setup - t_init};
  double ops_sum = (double)ops;
  long fsum = 0;
  MPI_Allreduce(&run, &r.run_s, 1, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, &ops_sum, 1, MPI_DOUBLE, MPI_SUM, comm);
  r.ops_avg = ops_sum / nw;

  /* Clean up: the job ends with every region freed (the root checks conservation anyway). */
  if (sys_rfree(own) || sys_rfree(travel) || sys_rfree(part)) die("sys_rfree (own regions)");
  if (sys_barrier()) die("sys_barrier");
  if (me == leader && sys_rfree(team)) die("sys_rfree (team)");
  MPI_Allreduce(&faults, &fsum, 1, MPI_LONG, MPI_SUM, comm);
  uint64_t hwm = procstat_peak_rss_kib();
  MPI_Allreduce(&hwm, &r.rss_w_max, 1, MPI_UINT64_T, MPI_MAX, comm);
  MPI_Allreduce(&hwm, &r.rss_w_sum, 1, MPI_UINT64_T, MPI_SUM, comm);
  r.verified = fsum == 0;
  free(v);

  double t_fin = now();
  if (me == 0) {
    printf("scale: rounds %.3f s (%s); sys_finalize...\n", run,
           r.verified ? "verified" : "verification FAILED");
    fflush(stdout);
  }
  sys_finalize();
  scale_sched_stats st;
  int have = 0;
  if (me == 0) {
    if (wait_for(path, 300.0) == 0) {
      r.shutdown_s = now() - t_fin;
      FILE *f = fopen(path, "r");
      have = f && scale_read_stats(f, &st) == 0;
      if (f) fclose(f);
      if (!have) fprintf(stderr, "scale: cannot read the schedulers' statistics in %s\n", path);
      if (!o.keep_stats) unlink(path);
    } else {
      r.shutdown_s = now() - t_fin;
      fprintf(stderr, "scale: the root wrote no statistics to %s within 300 s\n", path);
    }
    if (!have) memset(&st, 0, sizeof st);
    report(&o, &r, &st, have);
    if (!r.verified) fprintf(stderr, "scale: verification FAILED: %ld faults\n", fsum);
  }
  MPI_Finalize();
  return r.verified ? 0 : 1;
}

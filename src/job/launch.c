/* launch.c: launch_plan_build (launch.h): --antheap-* options, MPI roles, hwloc binding, and
 * the gather of every rank's placement into the pure plan of plan.c.
 *
 * The only file of the planner that talks to MPI and hwloc. Host ids are given in order of
 * first appearance in rank order (host names compared by a hash of the whole name and their
 * first 63 characters), so every rank computes the same ids from the same gathered table.
 */
#include "job/launch.h"

#include <errno.h>
#include <hwloc.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPT_PREFIX "--antheap-"
#define MAX_COUNT 1000000 /* largest scheduler count or fan-out accepted */
#define HOST_LEN 64

/* How a rank's binding came about. */
enum bind_state {
  BIND_HERE = 0,     /* bound to one core by us */
  BIND_LAUNCHER,     /* the launcher (mpirun --bind-to ...) had bound it: kept */
  BIND_FEW_CORES,    /* more ranks than cores on its host: not bound */
  BIND_FAILED,       /* hwloc refused: not bound */
  BIND_THREADS,      /* MPI_THREAD_MULTIPLE: the rank may run threads (issue 34): not bound */
};

/* What each rank tells every other (MPI_Allgather as bytes: one build, one cluster). */
typedef struct rank_report {
  char host[HOST_LEN];
  uint64_t host_hash;
  int32_t appnum;
  int32_t numa, core, bind, local_ranks, host_cores;
  int32_t schedulers, fanout, topology, share, stats; /* its parsed options (0 = not given) */
} rank_report;

const char *launch_help_text(void) {
  return "antheap launch options (removed from the application's argv):\n"
         "  --antheap-schedulers N  SPMD: N ranks become schedulers (default 1; env\n"
         "                          ANTHEAP_SCHEDULERS). MPMD (mpirun -np S antheapd : -np W\n"
         "                          ./app) takes the antheapd ranks as schedulers.\n"
         "  --antheap-fanout F      scheduler children per scheduler (default 8; env\n"
         "                          ANTHEAP_FANOUT).\n"
         "  --antheap-topology      print the launch plan (ranks, roles, hosts, cores, tree)\n"
         "                          and do not start.\n"
         "  --antheap-share M       host (default): the workers of one host map the GAS from\n"
         "                          one memory object, so regions move between them without\n"
         "                          a copy; none: every worker has a private GAS and every move\n"
         "                          copies (env ANTHEAP_SHARE).\n"
         "  --antheap-retain MiB    freed regions a worker keeps mapped for reuse instead of\n"
         "                          giving their pages back to the OS at once (default 256;\n"
         "                          0: give every freed region of 1 MiB or more back; env\n"
         "                          ANTHEAP_RETAIN).\n"
         "  --antheap-stats S       what the root scheduler reports at shutdown (env\n"
         "                          ANTHEAP_STATS). Default: one line (nothing lost, requests\n"
         "                          served, schedulers); off: nothing (a loss is still\n"
         "                          printed); table: the line and every scheduler's row\n"
         "                          (messages, bytes, pages, peak RSS ...); any other value is a\n"
         "                          file: the line, and every row as CSV in that file.\n"
         "Options may also be written --antheap-schedulers=N. Options win over the\n"
         "environment. Ranks are bound to one core each when their host has enough cores.\n";
}

/* ---- options ---- */

static int opt_error(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int opt_error(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* A whole number in [lo, hi] from text; -1 when it is not one. */
static int parse_whole(const char *s, long lo, long hi) {
  if (!s || !*s) return -1;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || *end || v < lo || v > hi) return -1;
  return (int)v;
}

/* A positive count (1..MAX_COUNT) from text, or -1. */
static int parse_count(const char *s) { return parse_whole(s, 1, MAX_COUNT); }

static int read_env(const char *name, int *out, char *err, size_t errlen) {
  const char *v = getenv(name);
  if (!v || !*v) return 0;
  int n = parse_count(v);
  if (n < 0)
    return opt_error(err, errlen, "%s=%s: expected a whole number from 1 to %d", name, v,
                     MAX_COUNT);
  *out = n;
  return 0;
}

#define MAX_RETAIN_MIB (1 << 30) /* 1 PiB: more than any GAS */

/* A budget in MiB (0..MAX_RETAIN_MIB, 0 allowed) from text, or -1. */
static int parse_mib(const char *s) { return parse_whole(s, 0, MAX_RETAIN_MIB); }

/* host -> 1, none -> 2, anything else -1. */
static int parse_share(const char *v) {
  if (!v) return -1;
  return strcmp(v, "host") == 0 ? 1 : strcmp(v, "none") == 0 ? 2 : -1;
}

/* off, table, or a file name (not empty, not starting with '-': a forgotten value); the
 * file in *path. -1 when it is none of them. */
static int parse_stats(const char *v, const char **path) {
  if (!v || !*v || *v == '-' || strlen(v) >= LAUNCH_PATH_MAX) return -1;
  if (strcmp(v, "off") == 0) return PLAN_STATS_OFF;
  if (strcmp(v, "table") == 0) return PLAN_STATS_TABLE;
  *path = v;
  return PLAN_STATS_FILE;
}

#define STATS_EXPECTED "expected off, table or a file name (not starting with '-')"

/* Which option argv[i] names: 0 schedulers, 1 fanout, 2 topology, 3 share, 4 retain, 5 stats,
 * -1 unknown.
 * *value gets the text after '=' (NULL when none). */
static int option_kind(const char *arg, const char **value) {
  static const char *const names[] = {"schedulers", "fanout", "topology", "share", "retain",
                                      "stats"};
  const char *name = arg + strlen(OPT_PREFIX);
  const char *eq = strchr(name, '=');
  size_t len = eq ? (size_t)(eq - name) : strlen(name);
  *value = eq ? eq + 1 : NULL;
  for (int k = 0; k < 6; k++)
    if (strlen(names[k]) == len && strncmp(name, names[k], len) == 0) return k;
  return -1;
}

/* Parse the option at argv[*i] into o; advances *i past a separate value. */
static int take_option(int argc, char **argv, int *i, launch_options *o, char *err,
                       size_t errlen) {
  const char *arg = argv[*i], *value;
  int kind = option_kind(arg, &value);
  if (kind < 0)
    return opt_error(err, errlen, "unknown option %s (antheap knows --antheap-schedulers N, "
                     "--antheap-fanout F, --antheap-topology, --antheap-share host|none, "
                     "--antheap-retain MiB, --antheap-stats off|table|FILE)", arg);
  if (kind == 2) {
    if (value) return opt_error(err, errlen, "%s takes no value", OPT_PREFIX "topology");
    o->topology = true;
    return 0;
  }
  if (!value) {
    if (*i + 1 >= argc)
      return opt_error(err, errlen, "%s needs %s", arg,
                       kind == 3 ? "host or none" : kind == 5 ? "off, table or a file name"
                                                              : "a number");
    value = argv[++*i];
  }
  if (kind == 3) {
    if ((o->share = parse_share(value)) < 0)
      return opt_error(err, errlen, "%s %s: expected host or none", OPT_PREFIX "share", value);
    return 0;
  }
  if (kind == 5) {
    int st = parse_stats(value, &o->stats_path);
    if (st < 0) return opt_error(err, errlen, "%s %s: " STATS_EXPECTED, OPT_PREFIX "stats", value);
    o->stats = (plan_stats)st;
    return 0;
  }
  if (kind == 4) {
    if ((o->retain_mib = parse_mib(value)) < 0)
      return opt_error(err, errlen, "%s %s: expected a whole number of MiB from 0 to %d",
                       OPT_PREFIX "retain", value, MAX_RETAIN_MIB);
    return 0;
  }
  int n = parse_count(value);
  if (n < 0)
    return opt_error(err, errlen, "%s %s: expected a whole number from 1 to %d",
                     kind == 0 ? OPT_PREFIX "schedulers" : OPT_PREFIX "fanout", value, MAX_COUNT);
  *(kind == 0 ? &o->schedulers : &o->fanout) = n;
  return 0;
}

int launch_parse_options(int *argc, char ***argv, launch_options *o, char *err, size_t errlen) {
  *o = (launch_options){.retain_mib = -1};
  if (read_env("ANTHEAP_SCHEDULERS", &o->schedulers, err, errlen) ||
      read_env("ANTHEAP_FANOUT", &o->fanout, err, errlen))
    return -1;
  const char *share = getenv("ANTHEAP_SHARE");
  if (share && *share && (o->share = parse_share(share)) < 0)
    return opt_error(err, errlen, "ANTHEAP_SHARE=%s: expected host or none", share);
  const char *retain = getenv("ANTHEAP_RETAIN");
  if (retain && *retain && (o->retain_mib = parse_mib(retain)) < 0)
    return opt_error(err, errlen, "ANTHEAP_RETAIN=%s: expected a whole number of MiB from 0 to %d",
                     retain, MAX_RETAIN_MIB);
  const char *stats = getenv("ANTHEAP_STATS");
  int st = stats && *stats ? parse_stats(stats, &o->stats_path) : 0;
  if (st < 0) return opt_error(err, errlen, "ANTHEAP_STATS=%s: " STATS_EXPECTED, stats);
  o->stats = (plan_stats)st;
  if (!argc || !argv || !*argv) return 0;
  char **av = *argv;
  int n = *argc, kept = 0, i = 0;
  for (; i < n; i++) {
    if (strcmp(av[i], "--") == 0) break;
    if (i > 0 && strncmp(av[i], OPT_PREFIX, strlen(OPT_PREFIX)) == 0) {
      if (take_option(n, av, &i, o, err, errlen)) return -1;
      continue;
    }
    av[kept++] = av[i];
  }
  for (; i < n; i++) av[kept++] = av[i];
  if (kept < n) av[kept] = NULL;
  *argc = kept;
  return 0;
}

/* ---- hwloc: binding and NUMA ---- */

/* Cores of this host (PUs when hwloc finds no cores). */
static int count_cores(hwloc_topology_t topo) {
  int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  return n > 0 ? n : hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
}

/* Logical index of the one core whose cpuset equals `set`; -1 when it spans several. */
static int core_of_set(hwloc_topology_t topo, hwloc_const_cpuset_t set) {
  hwloc_obj_t core = hwloc_get_obj_covering_cpuset(topo, set);
  while (core && core->type != HWLOC_OBJ_CORE) core = core->parent;
  if (!core) return -1;
  /* bound to a single PU or to a whole core: both count as that core */
  return hwloc_bitmap_isincluded(set, core->cpuset) ? (int)core->logical_index : -1;
}

/* Logical index of the NUMA node whose cores include `set`; -1 when none does. */
static int numa_of_set(hwloc_topology_t topo, hwloc_const_cpuset_t set) {
  int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n; i++) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, i);
    if (node && node->cpuset && hwloc_bitmap_isincluded(set, node->cpuset)) return i;
  }
  return -1;
}

/* The i-th core of the host (its i-th PU where hwloc finds no cores), or NULL. */
static hwloc_obj_t core_obj(hwloc_topology_t topo, int i) {
  hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)i);
  return core ? core : hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU, (unsigned)i);
}

/* Bind this rank (the local_index-th of local_ranks on its host) and fill numa, core, bind. */
static void place_rank(hwloc_topology_t topo, int local_index, int local_ranks,
                       rank_report *me) {
  hwloc_cpuset_t set = hwloc_bitmap_alloc();
  hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topo);
  me->host_cores = count_cores(topo);
  me->local_ranks = local_ranks;
  bool have = set && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0;
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (have && !hwloc_bitmap_isequal(set, allowed) && hwloc_bitmap_isincluded(set, allowed)) {
    me->bind = BIND_LAUNCHER;
  } else if (level == MPI_THREAD_MULTIPLE) { /* one core would hold every thread of the rank */
    me->bind = BIND_THREADS;
    if (set) hwloc_bitmap_copy(set, allowed);
  } else if (me->host_cores < local_ranks) {
    me->bind = BIND_FEW_CORES;
    if (set) hwloc_bitmap_copy(set, allowed);
  } else {
    hwloc_obj_t core = core_obj(topo, local_index);
    bool ok = core && set && hwloc_set_cpubind(topo, core->cpuset, HWLOC_CPUBIND_PROCESS) == 0;
    me->bind = ok ? BIND_HERE : BIND_FAILED;
    if (set) hwloc_bitmap_copy(set, ok ? core->cpuset : allowed);
  }
  me->core = set && (me->bind == BIND_HERE || me->bind == BIND_LAUNCHER) ? core_of_set(topo, set)
                                                                        : -1;
  me->numa = set ? numa_of_set(topo, set) : -1;
  hwloc_bitmap_free(set);
}

/* This host's topology, only what placement needs (cores, PUs, NUMA nodes): a full topology
 * with caches and packages takes about ten times as long to load, and every rank loads it.
 * 0, or -1 when hwloc cannot load one. */
static int load_topology(hwloc_topology_t *topo) {
  if (hwloc_topology_init(topo) != 0) return -1;
  hwloc_topology_set_all_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_type_filter(*topo, HWLOC_OBJ_CORE, HWLOC_TYPE_FILTER_KEEP_ALL);
  hwloc_topology_set_type_filter(*topo, HWLOC_OBJ_PU, HWLOC_TYPE_FILTER_KEEP_ALL);
  hwloc_topology_set_type_filter(*topo, HWLOC_OBJ_NUMANODE, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (hwloc_topology_load(*topo) == 0) return 0;
  hwloc_topology_destroy(*topo);
  return -1;
}

/* Place this rank with a fresh hwloc topology; -1 when hwloc cannot load one. */
static int place_with_hwloc(MPI_Comm world, rank_report *me) {
  MPI_Comm node;
  int local_index, local_ranks;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &local_index);
  MPI_Comm_size(node, &local_ranks);
  MPI_Comm_free(&node);
  hwloc_topology_t topo;
  if (load_topology(&topo)) return -1;
  place_rank(topo, local_index, local_ranks, me);
  hwloc_topology_destroy(topo);
  return 0;
}

/* Bind this rank to the core'th core of its host; 0 or -1. */
static int bind_to_core(int core) {
  hwloc_topology_t topo;
  if (load_topology(&topo)) return -1;
  hwloc_obj_t obj = core_obj(topo, core);
  int rc = obj && hwloc_set_cpubind(topo, obj->cpuset, HWLOC_CPUBIND_PROCESS) == 0 ? 0 : -1;
  hwloc_topology_destroy(topo);
  return rc;
}

/* ---- the gathered table ---- */

static uint64_t hash_name(const char *s) { /* FNV-1a */
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static void describe_self(MPI_Comm world, const launch_options *o, rank_report *me) {
  char name[MPI_MAX_PROCESSOR_NAME + 1] = "";
  int len = 0, flag = 0;
  int *appnum = NULL;
  memset(me, 0, sizeof *me);
  MPI_Get_processor_name(name, &len);
  name[len < 0 ? 0 : len] = '\0';
  size_t keep = strlen(name) < HOST_LEN - 1 ? strlen(name) : HOST_LEN - 1; /* the hash tells */
  memcpy(me->host, name, keep);                                           /* long names apart */
  me->host[keep] = '\0';
  me->host_hash = hash_name(name);
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
  me->appnum = flag && appnum ? *appnum : -1;
  me->schedulers = o->schedulers;
  me->fanout = o->fanout;
  me->topology = o->topology;
  me->share = o->share;
  me->stats = (int32_t)o->stats;
  if (place_with_hwloc(world, me) != 0) me->bind = BIND_FAILED, me->core = me->numa = -1;
}

/* Host ids by first appearance; fills info[].host and names[] (nhosts entries). */
static int number_hosts(const rank_report *all, int n, plan_rank_info *info,
                        const char **names) {
  int nhosts = 0;
  int *first = malloc((size_t)n * sizeof *first); /* host id -> first rank there */
  if (!first) return -1;
  for (int r = 0; r < n; r++) {
    int h = 0;
    while (h < nhosts && (all[first[h]].host_hash != all[r].host_hash ||
                          strcmp(all[first[h]].host, all[r].host) != 0))
      h++;
    if (h == nhosts) first[nhosts] = r, names[nhosts++] = all[r].host;
    info[r].host = h;
  }
  free(first);
  return nhosts;
}

/* MPMD when the app numbers differ across ranks; app 0 (antheapd) ranks are schedulers. */
static bool is_mpmd(const rank_report *all, int n) {
  for (int r = 1; r < n; r++)
    if (all[r].appnum != all[0].appnum) return true;
  return false;
}

/* The lowest rank's explicit value of one option; conflicts noted in *conflict. */
static int agree(const rank_report *all, int n, size_t field, int *conflict) {
  int v = 0;
  *conflict = -1;
  for (int r = 0; r < n; r++) {
    int32_t x;
    memcpy(&x, (const char *)&all[r] + field, sizeof x);
    if (x && !v) v = x;
    else if (x && x != v && *conflict < 0) *conflict = r;
  }
  return v;
}

/* Notes about options and binding, added to the plan. */
static void note_conflict(launch_plan *p, const char *what, int rank, int used) {
  if (rank >= 0)
    plan_warn(p, "rank %d gave a different %s; the lowest rank's value %d is used", rank, what,
              used);
}

/* The workers of host h. */
static int workers_on_host(const launch_plan *p, int h) {
  int w = 0;
  for (int r = 0; r < p->nranks; r++) w += p->ranks[r].host == h && p->ranks[r].role == PLAN_WORKER;
  return w;
}

/* A host with more ranks than cores whose workers alone fit (a job of one worker a core and its
 * schedulers): each worker gets a core, in rank order, and the schedulers none; they sleep when
 * idle (job.c's idle cap), while a worker on a core of its own never migrates. The plan's core
 * of those workers is set alike on every rank; each binds itself (bind_assigned_core). */
static void assign_worker_cores(launch_plan *p, const rank_report *all) {
  for (int h = 0; h < p->nhosts; h++) {
    int first = 0;
    while (first < p->nranks && p->ranks[first].host != h) first++;
    if (first == p->nranks || workers_on_host(p, h) > all[first].host_cores) continue;
    bool few = true; /* every rank of the host left unbound for want of cores (none bound by
                        the launcher, none at MPI_THREAD_MULTIPLE) */
    for (int r = first; r < p->nranks; r++)
      few &= p->ranks[r].host != h || all[r].bind == BIND_FEW_CORES;
    if (!few) continue;
    int core = 0;
    for (int r = first; r < p->nranks; r++)
      if (p->ranks[r].host == h && p->ranks[r].role == PLAN_WORKER) p->ranks[r].core = core++;
  }
}

/* This rank's part of assign_worker_cores; a worker hwloc cannot bind stays unbound (its core
 * is -1 in its own plan only: a rank reads only its own core, job.c). */
static void bind_assigned_core(launch_plan *p, const rank_report *mine) {
  plan_rank *me = &p->ranks[p->self];
  if (mine->bind != BIND_FEW_CORES || me->role != PLAN_WORKER || me->core < 0) return;
  if (bind_to_core(me->core) == 0) return;
  plan_warn(p, "rank %d: hwloc could not bind it to core %d; not bound", p->self, me->core);
  me->core = -1;
}

static void note_binding(launch_plan *p, const rank_report *all) {
  for (int h = 0; h < p->nhosts; h++) {
    int r = 0;
    while (r < p->nranks && p->ranks[r].host != h) r++;
    if (r == p->nranks) continue;
    bool assigned = false; /* assign_worker_cores gave this host's workers cores */
    for (int x = r; x < p->nranks; x++)
      assigned |= p->ranks[x].host == h && p->ranks[x].role == PLAN_WORKER &&
                  p->ranks[x].core >= 0 && all[x].bind == BIND_FEW_CORES;
    int w = workers_on_host(p, h);
    if (assigned)
      plan_warn(p, "host %s: %d ranks on %d cores; its %d workers bound one a core, its %d "
                "schedulers not bound", p->host_names[h], all[r].local_ranks, all[r].host_cores, w,
                all[r].local_ranks - w);
    else if (all[r].bind == BIND_FEW_CORES)
      plan_warn(p, "host %s: %d ranks on %d cores; ranks not bound", p->host_names[h],
                all[r].local_ranks, all[r].host_cores);
    else if (all[r].bind == BIND_LAUNCHER)
      plan_warn(p, "host %s: ranks already bound by the launcher; binding kept",
                p->host_names[h]);
  }
  for (int r = 0; r < p->nranks; r++)
    if (all[r].bind == BIND_FAILED)
      plan_warn(p, "rank %d: hwloc could not bind it to a core; not bound", r);
}

/* Turn the table into the plan. */
static int plan_from_table(const rank_report *all, int n, launch_plan *out, char *err,
                           size_t errlen) {
  plan_rank_info *info = calloc((size_t)n, sizeof *info);
  const char **names = calloc((size_t)n, sizeof *names);
  int nhosts = info && names ? number_hosts(all, n, info, names) : -1;
  if (nhosts < 0) {
    free(info);
    free(names);
    return opt_error(err, errlen, "out of memory gathering %d ranks", n);
  }
  for (int r = 0; r < n; r++) {
    info[r].numa = all[r].numa < -1 ? -1 : all[r].numa;
    info[r].core = all[r].core;
    info[r].is_daemon = all[r].appnum == 0;
  }
  int cs, cf;
  int s = agree(all, n, offsetof(rank_report, schedulers), &cs);
  int f = agree(all, n, offsetof(rank_report, fanout), &cf);
  plan_input in = {.nranks = n, .ranks = info, .mpmd = is_mpmd(all, n),
                   .schedulers = s, .fanout = f ? f : LAUNCH_DEFAULT_FANOUT,
                   .nhosts = nhosts, .host_names = names};
  if (!in.mpmd && !s) in.schedulers = LAUNCH_DEFAULT_SCHEDULERS;
  plan_status st = plan_build(&in, out, err, errlen);
  free(info);
  free(names);
  if (st != PLAN_OK) return -1;
  note_conflict(out, "scheduler count", cs, s);
  note_conflict(out, "fan-out", cf, f);
  assign_worker_cores(out, all);
  note_binding(out, all);
  for (int r = 0; r < n; r++) out->topology_only |= all[r].topology != 0;
  out->share_host = true; /* any rank asking for none turns sharing off for the job */
  for (int r = 0; r < n; r++) out->share_host &= all[r].share != 2;
  return 0;
}

/* ---- launch_plan_build ---- */

/* Every rank learns whether any rank's options failed; returns the lowest failing rank or -1. */
static int first_failure(MPI_Comm world, int me, bool failed) {
  int mine = failed ? me : INT_MAX, lowest;
  MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, world);
  return lowest == INT_MAX ? -1 : lowest;
}

/* The shutdown report: the lowest rank's choice; its file name comes from that rank. The
 * table is the same on every rank, so every rank takes part in the same broadcast. */
static void agree_stats(MPI_Comm world, const rank_report *all, int n, const launch_options *o,
                        launch_plan *out) {
  int from = 0;
  while (from < n && all[from].stats == 0) from++;
  if (from == n) return;
  out->stats = (plan_stats)all[from].stats;
  for (int r = from + 1; r < n; r++)
    if (all[r].stats && all[r].stats != all[from].stats) {
      plan_warn(out, "rank %d gave a different --antheap-stats; rank %d's is used", r, from);
      break;
    }
  if (out->stats != PLAN_STATS_FILE) return;
  char path[LAUNCH_PATH_MAX] = "";
  if (out->self == from) snprintf(path, sizeof path, "%s", o->stats_path);
  MPI_Bcast(path, (int)sizeof path, MPI_CHAR, from, world);
  if (!(out->stats_path = strdup(path))) {
    out->stats = PLAN_STATS_SUMMARY;
    plan_warn(out, "no memory for the statistics file name %s: not written", path);
  }
}

int launch_plan_build_ex(MPI_Comm world, int *argc, char ***argv, launch_extra *x,
                         launch_plan *out, char *err, size_t errlen) {
  int me, n;
  memset(out, 0, sizeof *out);
  out->self = -1;
  MPI_Comm_rank(world, &me);
  MPI_Comm_size(world, &n);
  launch_options o;
  char local_err[512] = "";
  bool failed = launch_parse_options(argc, argv, &o, local_err, sizeof local_err) != 0;
  if (!failed && x && x->refusal) {
    snprintf(local_err, sizeof local_err, "%s", x->refusal);
    failed = true;
  }
  int bad = first_failure(world, me, failed);
  if (x) x->speaker = bad;
  if (bad >= 0) {
    if (failed) return opt_error(err, errlen, "%s", local_err);
    return opt_error(err, errlen, "rank %d refused its antheap options", bad);
  }
  rank_report mine, *all = malloc((size_t)n * sizeof *all);
  describe_self(world, &o, &mine);
  bad = first_failure(world, me, all == NULL);
  if (x) x->speaker = bad;
  if (bad >= 0) {
    free(all);
    return opt_error(err, errlen, "out of memory gathering %d ranks", n);
  }
  /* A gather to rank 0 and a broadcast (a tree: log n steps), not an all-gather, whose ring or
   * neighbour exchange for tables this size takes n dependent steps: thousands of context
   * switches in a row when the ranks share cores. */
  MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, world);
  MPI_Bcast(all, (int)((size_t)n * sizeof mine), MPI_BYTE, 0, world);
  int rc = plan_from_table(all, n, out, err, errlen); /* the same verdict on every rank */
  if (x) x->speaker = 0;
  if (rc == 0) {
    out->self = me;
    out->retain_mib = o.retain_mib;
    out->local_ranks = mine.local_ranks;
    out->host_cores = mine.host_cores;
    bind_assigned_core(out, &mine);
    agree_stats(world, all, n, &o, out);
  }
  free(all);
  return rc;
}

int launch_plan_build(MPI_Comm world, int *argc, char ***argv, launch_plan *out, char *err,
                      size_t errlen) {
  return launch_plan_build_ex(world, argc, argv, NULL, out, err, errlen);
}

void launch_plan_free(launch_plan *p) { plan_free(p); }

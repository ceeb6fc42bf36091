/* sim_main.c: antheap-sim, the command line of the simulator and of the protocol fuzzer
 * (--hostile): runs one or more seeds, each in a child process with --fork (so a crash or a
 * hang is counted and the next seed runs), prints the seed of any failure so it can be
 * replayed exactly, the totals by kind of failure, and what the hand-over rule saw (hand-overs,
 * requests refused because the asker does not hold what they name).
 *
 * The job's settings speak the library's vocabulary: --antheap-foo-bar sets the variable
 * ANTHEAP_FOO_BAR, and the settings are then read from the environment as a real job reads
 * them (ah_config_from_env; the scheduler count and fan-out as launch.c reads them), so their
 * names, defaults, ranges and messages are the library's. Earlier spellings (--schedulers,
 * --gas-mib, ...) are refused with the new name. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/config.h"
#include "sim/sim.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: antheap-sim [options]\n"
          "  Runs a whole antheap job (schedulers + simulated workers) in one process.\n"
          "  Well-behaved workers follow the hand-over rule (only a region's holder acts on it):\n"
          "  each makes a public region with a pinned object (never freed nor handed over), then\n"
          "  sends random traffic (ralloc, alloc, balloc, free, realloc, query, pack, rfree, lease,\n"
          "  unlease, wrong usage), hands whole top regions with their objects to other workers\n"
          "  (PACKV_HANDOVER, its leases flushed first; rallocs under a region on another branch\n"
          "  are placed by load), and asks of regions and objects others hold, which must be\n"
          "  refused (EPERM; ENOENT once freed, success once handed to it). Each seed prints the\n"
          "  hand-overs and the non-holder requests refused.\n"
          " The job, in the library's names (antheapd --help): --antheap-foo-bar N sets\n"
          " ANTHEAP_FOO_BAR, which a real job reads; unset, the library's default holds:\n"
          "  --antheap-schedulers S     scheduler count (default 1)\n"
          "  --antheap-fanout F         scheduler children per scheduler (default 8)\n"
          "  --antheap-gas-base A       GAS start address (default 0x100000000000; 0x680000000000\n"
          "                             in AddressSanitizer builds)\n"
          "  --antheap-gas-size-mib M   GAS size in MiB (default 65536)\n"
          "  --antheap-boot-pages P     pages per scheduler at boot (default 64); small values\n"
          "                             force refills\n"
          "  --antheap-boot-ids I       region IDs per scheduler at boot (default 4096)\n"
          "  --antheap-refill-pages P / --antheap-refill-ids I   refill sizes (defaults 64 / 4096)\n"
          "  --antheap-ceiling-pages C  free pages above C go back to the parent (default 256;\n"
          "                             0: never)\n"
          "  --antheap-high-watermark H / --antheap-low-watermark L   free slabs a new region\n"
          "                             starts with / trimming leaves a region (defaults 16 / 2)\n"
          "  (--schedulers, --fanout, --gas-mib, --boot-pages, --boot-ids, --refill-pages,\n"
          "  --refill-ids and --ceiling-pages of earlier versions are refused, naming these.)\n"
          " The simulation:\n"
          "  --workers W      simulated workers (default 1000)\n"
          "  --ops N          operations per worker (default 40)\n"
          "  --seed X         first seed (default 1)\n"
          "  --seeds K        run K seeds: X, X+1, ... (default 1)\n"
          "  --garbage G      malformed messages injected (default 0)\n"
          "  --report         print the root's shutdown report\n"
          "  --verbose        progress on stderr\n"
          " The protocol fuzzer:\n"
          "  --hostile K      K hostile workers besides the W well-behaved ones (default 0)\n"
          "  --hostile-ops N  messages each hostile worker sends (default 200); besides forged\n"
          "                   messages and hostile arguments, every request a worker can send\n"
          "                   naming what another worker holds (must be EPERM, never accepted),\n"
          "                   PACKVs no worker may send (COMMIT, SKIP_GONE, a peer that is itself,\n"
          "                   a scheduler or no rank: EINVAL), hand-overs of its own regions to\n"
          "                   well-behaved workers and hand-backs (must succeed; then EPERM)\n"
          "  --hostile-keep-leases  hostile workers finalize holding leased slabs (by default\n"
          "                   they hand them back first, as sys_finalize does)\n"
          "  --hostile-fragment F  hostile workers also fragment on purpose, in rounds: 2F\n"
          "                   objects of a slab, every other one freed, the region packed (its\n"
          "                   reply, however many parts, must cover every kept object) and freed;\n"
          "                   2F regions, every other one freed (free-ID holes)\n"
          "  --reply-words N  the most words of one pack reply (default 1048576); small values\n"
          "                   make packs continue over several replies (PROTO_REPLY_MORE)\n"
          "  --storm-factor C / --storm-const K  a storm: more than C * requests + K messages\n"
          "                   delivered (defaults 16 / 4096; C 0: no storm check)\n"
          "  --fork           each seed in a child process: crashes and hangs are counted\n"
          "  --timeout T      with --fork: a seed running over T seconds is a hang (default 60)\n"
          "  --quiet          print failed seeds and the totals only\n");
}

/* ---- the library's settings ---- */

/* The options named after ANTHEAP_* variables (getopt values OPT_VAR + index). */
enum { OPT_VAR = 1000, OPT_OLD = 1100, OPT_NOSIM = 1200 };
static const char *const var_options[] = {
    "antheap-schedulers",   "antheap-fanout",        "antheap-gas-base",
    "antheap-gas-size-mib", "antheap-boot-pages",    "antheap-refill-pages",
    "antheap-boot-ids",     "antheap-refill-ids",    "antheap-ceiling-pages",
    "antheap-high-watermark", "antheap-low-watermark"};
#define NVAR_OPTIONS (sizeof var_options / sizeof *var_options)
/* Earlier spellings, and the index of their new name in var_options. */
static const struct { const char *old; int now; } renamed[] = {
    {"schedulers", 0},   {"fanout", 1},     {"gas-mib", 3},    {"boot-pages", 4},
    {"refill-pages", 5}, {"boot-ids", 6},   {"refill-ids", 7}, {"ceiling-pages", 8}};
#define NRENAMED (sizeof renamed / sizeof *renamed)
/* The library's options that mean nothing here (no memory is mapped, no ranks placed). */
static const char *const not_simulated[] = {"antheap-share", "antheap-retain", "antheap-topology"};
#define NNOT_SIMULATED (sizeof not_simulated / sizeof *not_simulated)

/* --antheap-foo-bar V: ANTHEAP_FOO_BAR=V for this process (argv wins over the environment). */
static void set_variable(const char *option, const char *value) {
  char name[64];
  size_t i = 0;
  for (; option[i] && i < sizeof name - 1; i++)
    name[i] = option[i] == '-' ? '_' : (char)toupper((unsigned char)option[i]);
  name[i] = '\0';
  setenv(name, value, 1);
}

/* ANTHEAP_SCHEDULERS or ANTHEAP_FANOUT as launch.c reads it: a whole number from 1 to
 * 1000000. 0 (unset: *out kept), or -1 after a message. */
static int env_count(const char *name, int *out) {
  const char *v = getenv(name);
  if (!v || !*v) return 0;
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno || *end || n < 1 || n > 1000000) {
    fprintf(stderr, "antheap-sim: %s=%s: expected a whole number from 1 to 1000000\n", name, v);
    return -1;
  }
  *out = (int)n;
  return 0;
}

/* The job's settings from the environment (set there by the --antheap-* options too), with
 * the library's defaults. 0, or -1 after a message. */
static int library_settings(sim_config *c) {
  ah_config a;
  char err[256];
  if (env_count("ANTHEAP_SCHEDULERS", &c->schedulers) || env_count("ANTHEAP_FANOUT", &c->fanout))
    return -1;
  if (ah_config_from_env(&a, err, sizeof err)) {
    fprintf(stderr, "antheap-sim: %s (each --antheap-foo-bar option sets ANTHEAP_FOO_BAR)\n",
            err);
    return -1;
  }
  c->sched.gas_base = a.gas_base;
  c->sched.gas_size = a.gas_size;
  c->sched.boot_pages = a.boot_pages;
  c->sched.refill_pages = a.refill_pages;
  c->sched.boot_ids = a.boot_ids;
  c->sched.refill_ids = a.refill_ids;
  c->sched.ceiling_pages = a.ceiling_pages;
  c->sched.high_watermark = a.high_watermark;
  c->sched.low_watermark = a.low_watermark;
  return 0;
}

/* An --antheap-* option or an earlier spelling (getopt value o); 0, or 2 after a message. */
static int library_option(int o, const char *value) {
  if (o >= OPT_VAR && o < OPT_VAR + (int)NVAR_OPTIONS) {
    if (!*value) { /* an empty variable would mean "unset": the default */
      fprintf(stderr, "antheap-sim: --%s needs a value\n", var_options[o - OPT_VAR]);
      return 2;
    }
    set_variable(var_options[o - OPT_VAR], value);
    return 0;
  }
  if (o >= OPT_OLD && o < OPT_OLD + (int)NRENAMED) {
    fprintf(stderr, "antheap-sim: --%s is now --%s (the library's name; see --help)\n",
            renamed[o - OPT_OLD].old, var_options[renamed[o - OPT_OLD].now]);
    return 2;
  }
  fprintf(stderr, "antheap-sim: --%s means nothing in the simulator (see --help)\n",
          not_simulated[o - OPT_NOSIM]);
  return 2;
}

/* Totals over the seeds. */
typedef struct {
  int seeds, failed, crashes;
  uint64_t messages, requests, hostile_sent, hostile_garbage, hostile_replies;
  uint64_t placed_by_load, handovers, handbacks, nonholder_refused, bad_moves_refused;
  uint64_t frag_holes, frag_id_holes, frag_packs, frag_ranges, continued;
  uint64_t fails[SIM_FAIL_KINDS];
} totals;

/* Run one seed in a child: its result comes back through a pipe; a child killed by a signal
 * crashed (SIGALRM: hung), and its result says so. */
static void run_forked(const sim_config *c, unsigned timeout, sim_result *r) {
  int fd[2];
  *r = (sim_result){.ok = false};
  if (pipe(fd)) {
    snprintf(r->failure, sizeof r->failure, "pipe failed");
    return;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    alarm(timeout);
    sim_run(c, r);
    ssize_t n = write(fd[1], r, sizeof *r);
    exit(n == (ssize_t)sizeof *r ? 0 : 3); /* exit, not _exit: LeakSanitizer checks the child */
  }
  close(fd[1]);
  ssize_t got = pid > 0 ? read(fd[0], r, sizeof *r) : -1;
  close(fd[0]);
  int st = 0;
  if (pid > 0) waitpid(pid, &st, 0);
  if (got == (ssize_t)sizeof *r && WIFEXITED(st) && WEXITSTATUS(st) == 0) return;
  *r = (sim_result){.ok = false};
  if (pid > 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) {
    r->fails[SIM_FAIL_HANG] = 1;
    snprintf(r->failure, sizeof r->failure, "hang: still running after %u s", timeout);
  } else {
    bool sig = pid > 0 && WIFSIGNALED(st);
    snprintf(r->failure, sizeof r->failure, "CRASH: %s %d", sig ? "signal" : "exit status",
             sig ? WTERMSIG(st) : WEXITSTATUS(st));
  }
}

static void print_seed(const sim_config *c, const sim_result *r, bool quiet) {
  if (quiet && r->ok) return;
  printf("seed %lu: %s: %lu messages, %lu replies checked, %lu wrong-usage errors as expected, "
         "%lu regions placed by load, %lu slabs leased (%lu back as zombies)",
         (unsigned long)c->seed, r->ok ? "ok" : "FAILED", (unsigned long)r->messages,
         (unsigned long)r->replies_checked, (unsigned long)r->errors_expected,
         (unsigned long)r->placed_by_load, (unsigned long)r->leases,
         (unsigned long)r->zombie_returns);
  printf(", %lu requests", (unsigned long)r->requests);
  printf(", %lu hand-overs (%lu back), %lu non-holder requests refused", (unsigned long)r->handovers,
         (unsigned long)r->handbacks, (unsigned long)r->nonholder_refused);
  if (c->hostile)
    printf(", hostile: %lu sent, %lu to be dropped, %lu answered, %lu moves no worker may ask"
           " refused", (unsigned long)r->hostile_sent, (unsigned long)r->hostile_garbage,
           (unsigned long)r->hostile_replies, (unsigned long)r->bad_moves_refused);
  if (c->hostile_fragment)
    printf(", fragmenting: %lu holes, %lu free-ID holes, %lu packs of %lu ranges checked",
           (unsigned long)r->frag_holes, (unsigned long)r->frag_id_holes,
           (unsigned long)r->frag_packs, (unsigned long)r->frag_ranges);
  if (r->continued) printf(", %lu reply parts continued", (unsigned long)r->continued);
  printf("%s%s\n", r->ok ? "" : ": ", r->ok ? "" : r->failure);
  if (r->ok) return;
  const sched_config *k = &c->sched;
  printf("  replay: antheap-sim --antheap-schedulers %d --antheap-fanout %d --workers %d --ops %d"
         " --seed %lu --garbage %d --antheap-gas-base 0x%lx --antheap-gas-size-mib %zu"
         " --antheap-boot-pages %zu --antheap-boot-ids %u --antheap-refill-pages %zu"
         " --antheap-refill-ids %u --antheap-ceiling-pages %zu --antheap-high-watermark %zu"
         " --antheap-low-watermark %zu",
         c->schedulers, c->fanout, c->workers, c->ops, (unsigned long)c->seed, c->garbage,
         (unsigned long)k->gas_base, k->gas_size >> 20, k->boot_pages, k->boot_ids,
         k->refill_pages, k->refill_ids, k->ceiling_pages, k->high_watermark, k->low_watermark);
  if (c->hostile)
    printf(" --hostile %d --hostile-ops %d --storm-factor %u --storm-const %u%s", c->hostile,
           c->hostile_ops, c->storm_factor, c->storm_const,
           c->hostile_keep_leases ? " --hostile-keep-leases" : "");
  if (c->hostile_fragment) printf(" --hostile-fragment %d", c->hostile_fragment);
  if (k->reply_words) printf(" --reply-words %u", k->reply_words);
  printf(" --verbose\n");
}

static void add_totals(totals *t, const sim_result *r) {
  t->seeds++;
  t->failed += !r->ok;
  t->crashes += strncmp(r->failure, "CRASH", 5) == 0;
  t->messages += r->messages;
  t->requests += r->requests;
  t->hostile_sent += r->hostile_sent;
  t->hostile_garbage += r->hostile_garbage;
  t->hostile_replies += r->hostile_replies;
  t->placed_by_load += r->placed_by_load;
  t->handovers += r->handovers;
  t->handbacks += r->handbacks;
  t->nonholder_refused += r->nonholder_refused;
  t->bad_moves_refused += r->bad_moves_refused;
  t->frag_holes += r->frag_holes;
  t->frag_id_holes += r->frag_id_holes;
  t->frag_packs += r->frag_packs;
  t->frag_ranges += r->frag_ranges;
  t->continued += r->continued;
  for (int k = 0; k < SIM_FAIL_KINDS; k++) t->fails[k] += r->fails[k];
}

static void print_totals(const totals *t, bool hostile) {
  if (hostile) {
    printf("totals: %d seeds, %lu messages for %lu requests (%.2f per request), %lu hostile"
           " messages sent (%lu to be dropped, %lu answered)\n",
           t->seeds, (unsigned long)t->messages, (unsigned long)t->requests,
           t->requests ? (double)t->messages / (double)t->requests : 0.0,
           (unsigned long)t->hostile_sent, (unsigned long)t->hostile_garbage,
           (unsigned long)t->hostile_replies);
    printf("failures: %d crashes", t->crashes);
    for (int k = 0; k < SIM_FAIL_KINDS; k++)
      printf(", %lu %s", (unsigned long)t->fails[k], sim_fail_names[k]);
    printf("\n");
  }
  printf("hand-over rule: %lu hand-overs (%lu back), %lu non-holder requests refused (EPERM),"
         " %lu moves no worker may ask refused (EINVAL), %lu regions placed by load\n",
         (unsigned long)t->handovers, (unsigned long)t->handbacks,
         (unsigned long)t->nonholder_refused, (unsigned long)t->bad_moves_refused,
         (unsigned long)t->placed_by_load);
  if (t->frag_holes || t->frag_id_holes || t->continued)
    printf("fragmenting: %lu holes, %lu free-ID holes, %lu packs of fragmented regions (%lu "
           "ranges) checked, %lu reply parts continued\n", (unsigned long)t->frag_holes,
           (unsigned long)t->frag_id_holes, (unsigned long)t->frag_packs,
           (unsigned long)t->frag_ranges, (unsigned long)t->continued);
  printf("%d passed, %d failed\n", t->seeds - t->failed, t->failed);
}

/* The run's options beside sim_config. */
typedef struct run_options {
  int seeds;
  bool forked, quiet;
  unsigned timeout;
} run_options;

/* getopt's table: the simulation's options, then the library's, earlier spellings and the
 * library's options the simulator has no use for. */
static struct option *option_table(void) {
  static const struct option own[] = {
      {"workers", 1, 0, 'w'},     {"ops", 1, 0, 'o'},         {"seed", 1, 0, 'x'},
      {"seeds", 1, 0, 'k'},       {"garbage", 1, 0, 'g'},     {"report", 0, 0, 'r'},
      {"hostile", 1, 0, 'H'},     {"hostile-ops", 1, 0, 'O'}, {"storm-factor", 1, 0, 'C'},
      {"storm-const", 1, 0, 'K'}, {"fork", 0, 0, 'F'},        {"timeout", 1, 0, 'T'},
      {"quiet", 0, 0, 'q'},       {"hostile-keep-leases", 0, 0, 'L'},
      {"hostile-fragment", 1, 0, 'R'}, {"reply-words", 1, 0, 'W'},
      {"verbose", 0, 0, 'v'},     {"help", 0, 0, 'h'}};
  enum { NOWN = sizeof own / sizeof *own };
  static struct option t[NOWN + NVAR_OPTIONS + NRENAMED + NNOT_SIMULATED + 1];
  size_t n = 0;
  for (size_t i = 0; i < NOWN; i++) t[n++] = own[i];
  for (size_t i = 0; i < NVAR_OPTIONS; i++)
    t[n++] = (struct option){var_options[i], 1, 0, OPT_VAR + (int)i};
  for (size_t i = 0; i < NRENAMED; i++)
    t[n++] = (struct option){renamed[i].old, 1, 0, OPT_OLD + (int)i};
  for (size_t i = 0; i < NNOT_SIMULATED; i++) /* --antheap-topology takes no value */
    t[n++] = (struct option){not_simulated[i], i + 1 < NNOT_SIMULATED, 0, OPT_NOSIM + (int)i};
  t[n] = (struct option){0, 0, 0, 0};
  return t;
}

/* One of the simulation's own options into c and r; 0, or an exit code. */
static int own_option(int o, const char *v, sim_config *c, run_options *r) {
  switch (o) {
    case 'w': c->workers = atoi(v); break;
    case 'o': c->ops = atoi(v); break;
    case 'x': c->seed = strtoull(v, NULL, 10); break;
    case 'k': r->seeds = atoi(v); break;
    case 'g': c->garbage = atoi(v); break;
    case 'H': c->hostile = atoi(v); break;
    case 'O': c->hostile_ops = atoi(v); break;
    case 'C': c->storm_factor = (unsigned)strtoul(v, NULL, 10); break;
    case 'K': c->storm_const = (unsigned)strtoul(v, NULL, 10); break;
    case 'F': r->forked = true; break;
    case 'L': c->hostile_keep_leases = true; break;
    case 'R': c->hostile_fragment = atoi(v); break;
    case 'W': c->sched.reply_words = (uint32_t)strtoul(v, NULL, 10); break;
    case 'T': r->timeout = (unsigned)strtoul(v, NULL, 10); break;
    case 'q': r->quiet = true; break;
    case 'r': c->sched.quiet = false; break;
    case 'v': c->verbose = true; break;
    case 'h': usage(stdout); return -1;
    default: usage(stderr); return 2;
  }
  return 0;
}

/* argv into c and r: the --antheap-* options through the environment, then the library's
 * settings. 0 to run, -1 after --help, else an exit code. */
static int parse_args(int argc, char **argv, sim_config *c, run_options *r) {
  const struct option *opts = option_table();
  for (int o; (o = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
    int rc = o >= OPT_VAR ? library_option(o, optarg) : own_option(o, optarg, c, r);
    if (rc) return rc;
  }
  if (optind < argc) {
    fprintf(stderr, "antheap-sim: unexpected argument '%s' (see --help)\n", argv[optind]);
    return 2;
  }
  if (library_settings(c)) return 2;
  if (c->schedulers < 1 || c->fanout < 1 || c->workers < 1 || c->ops < 1 || r->seeds < 1 ||
      c->garbage < 0 || c->hostile < 0 || c->hostile_ops < 0 || r->timeout < 1 ||
      c->hostile_fragment < 0 || c->hostile_fragment > 100000) {
    fprintf(stderr, "antheap-sim: bad option value (see --help)\n");
    return 2;
  }
  return 0;
}

int main(int argc, char **argv) {
  sim_config c = sim_config_default();
  run_options ro = {.seeds = 1, .timeout = 60};
  int rc = parse_args(argc, argv, &c, &ro);
  if (rc) return rc < 0 ? 0 : rc;
  if (!c.verbose) c.sched.log = fopen("/dev/null", "w"); /* malformed-message logs */
  totals t = {0};
  uint64_t first = c.seed;
  for (int k = 0; k < ro.seeds; k++) {
    c.seed = first + (uint64_t)k;
    sim_result r;
    if (ro.forked) run_forked(&c, ro.timeout, &r);
    else sim_run(&c, &r);
    print_seed(&c, &r, ro.quiet);
    add_totals(&t, &r);
  }
  print_totals(&t, c.hostile > 0);
  if (c.sched.log) fclose(c.sched.log);
  return t.failed ? 1 : 0;
}

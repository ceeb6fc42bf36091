/* sim_main.c: antheap-sim, the command line of the simulator and of the protocol fuzzer
 * (--hostile): runs one or more seeds, each in a child process with --fork (so a crash or a
 * hang is counted and the next seed runs), prints the seed of any failure so it can be
 * replayed exactly, the totals by kind of failure, and what the hand-over rule saw (hand-overs,
 * requests refused because the asker does not hold what they name). */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
          "  --schedulers S   scheduler count (default 21: three levels with fan-out 4)\n"
          "  --fanout F       scheduler-to-scheduler fan-out (default 4)\n"
          "  --workers W      simulated workers (default 1000)\n"
          "  --ops N          operations per worker (default 40)\n"
          "  --seed X         first seed (default 1)\n"
          "  --seeds K        run K seeds: X, X+1, ... (default 1)\n"
          "  --garbage G      malformed messages injected (default 0)\n"
          "  --boot-pages P   pages per scheduler at boot (default 64); small values force refills\n"
          "  --boot-ids I     region IDs per scheduler at boot (default 4096)\n"
          "  --refill-pages P / --refill-ids I   refill sizes (defaults 64 / 4096)\n"
          "  --ceiling-pages C  free pages above C go back to the parent (default 256; 0: never)\n"
          "  --gas-mib M      size of the GAS in MiB (default 65536)\n"
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
          "  --storm-factor C / --storm-const K  a storm: more than C * requests + K messages\n"
          "                   delivered (defaults 16 / 4096; C 0: no storm check)\n"
          "  --fork           each seed in a child process: crashes and hangs are counted\n"
          "  --timeout T      with --fork: a seed running over T seconds is a hang (default 60)\n"
          "  --quiet          print failed seeds and the totals only\n");
}

/* Totals over the seeds. */
typedef struct {
  int seeds, failed, crashes;
  uint64_t messages, requests, hostile_sent, hostile_garbage, hostile_replies;
  uint64_t placed_by_load, handovers, handbacks, nonholder_refused, bad_moves_refused;
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
  printf("%s%s\n", r->ok ? "" : ": ", r->ok ? "" : r->failure);
  if (r->ok) return;
  printf("  replay: antheap-sim --schedulers %d --fanout %d --workers %d --ops %d --seed %lu"
         " --garbage %d --boot-pages %zu --boot-ids %u --refill-pages %zu --refill-ids %u"
         " --gas-mib %zu --ceiling-pages %zu",
         c->schedulers, c->fanout, c->workers, c->ops, (unsigned long)c->seed, c->garbage,
         c->sched.boot_pages, c->sched.boot_ids, c->sched.refill_pages, c->sched.refill_ids,
         c->sched.gas_size >> 20, c->sched.ceiling_pages);
  if (c->hostile)
    printf(" --hostile %d --hostile-ops %d --storm-factor %u --storm-const %u%s", c->hostile,
           c->hostile_ops, c->storm_factor, c->storm_const,
           c->hostile_keep_leases ? " --hostile-keep-leases" : "");
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
  printf("%d passed, %d failed\n", t->seeds - t->failed, t->failed);
}

int main(int argc, char **argv) {
  sim_config c = sim_config_default();
  int seeds = 1;
  bool forked = false, quiet = false;
  unsigned timeout = 60;
  static struct option opts[] = {
      {"schedulers", 1, 0, 's'}, {"fanout", 1, 0, 'f'}, {"workers", 1, 0, 'w'},
      {"ops", 1, 0, 'o'}, {"seed", 1, 0, 'x'}, {"seeds", 1, 0, 'k'}, {"garbage", 1, 0, 'g'},
      {"boot-pages", 1, 0, 'p'}, {"boot-ids", 1, 0, 'i'}, {"refill-pages", 1, 0, 'P'},
      {"refill-ids", 1, 0, 'I'}, {"gas-mib", 1, 0, 'm'}, {"report", 0, 0, 'r'},
      {"ceiling-pages", 1, 0, 'c'}, {"hostile", 1, 0, 'H'}, {"hostile-ops", 1, 0, 'O'},
      {"storm-factor", 1, 0, 'C'}, {"storm-const", 1, 0, 'K'}, {"fork", 0, 0, 'F'},
      {"timeout", 1, 0, 'T'}, {"quiet", 0, 0, 'q'}, {"hostile-keep-leases", 0, 0, 'L'},
      {"verbose", 0, 0, 'v'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
  for (int o; (o = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
    switch (o) {
      case 's': c.schedulers = atoi(optarg); break;
      case 'f': c.fanout = atoi(optarg); break;
      case 'w': c.workers = atoi(optarg); break;
      case 'o': c.ops = atoi(optarg); break;
      case 'x': c.seed = strtoull(optarg, NULL, 10); break;
      case 'k': seeds = atoi(optarg); break;
      case 'g': c.garbage = atoi(optarg); break;
      case 'p': c.sched.boot_pages = strtoul(optarg, NULL, 10); break;
      case 'i': c.sched.boot_ids = (uint32_t)strtoul(optarg, NULL, 10); break;
      case 'P': c.sched.refill_pages = strtoul(optarg, NULL, 10); break;
      case 'I': c.sched.refill_ids = (uint32_t)strtoul(optarg, NULL, 10); break;
      case 'c': c.sched.ceiling_pages = strtoul(optarg, NULL, 10); break;
      case 'm': c.sched.gas_size = strtoull(optarg, NULL, 10) << 20; break;
      case 'H': c.hostile = atoi(optarg); break;
      case 'O': c.hostile_ops = atoi(optarg); break;
      case 'C': c.storm_factor = (unsigned)strtoul(optarg, NULL, 10); break;
      case 'K': c.storm_const = (unsigned)strtoul(optarg, NULL, 10); break;
      case 'F': forked = true; break;
      case 'L': c.hostile_keep_leases = true; break;
      case 'T': timeout = (unsigned)strtoul(optarg, NULL, 10); break;
      case 'q': quiet = true; break;
      case 'r': c.sched.quiet = false; break;
      case 'v': c.verbose = true; break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if (c.schedulers < 1 || c.fanout < 1 || c.workers < 1 || c.ops < 1 || seeds < 1 ||
      c.garbage < 0 || c.sched.gas_size < ((size_t)16 << 20) || c.sched.refill_pages < 1 ||
      c.sched.refill_ids < 1 || c.hostile < 0 || c.hostile_ops < 0 || timeout < 1) {
    fprintf(stderr, "antheap-sim: bad option value (see --help)\n");
    return 2;
  }
  if (!c.verbose) c.sched.log = fopen("/dev/null", "w"); /* malformed-message logs */
  totals t = {0};
  uint64_t first = c.seed;
  for (int k = 0; k < seeds; k++) {
    c.seed = first + (uint64_t)k;
    sim_result r;
    if (forked) run_forked(&c, timeout, &r);
    else sim_run(&c, &r);
    print_seed(&c, &r, quiet);
    add_totals(&t, &r);
  }
  print_totals(&t, c.hostile > 0);
  if (c.sched.log) fclose(c.sched.log);
  return t.failed ? 1 : 0;
}

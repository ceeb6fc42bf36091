/* sim_main.c: antheap-sim, the command line of the simulator: runs one or more seeds and
 * prints the seed of any failure so it can be replayed exactly. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: antheap-sim [options]\n"
          "  Runs a whole antheap job (schedulers + simulated workers) in one process.\n"
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
          "  --verbose        progress on stderr\n");
}

int main(int argc, char **argv) {
  sim_config c = sim_config_default();
  int seeds = 1;
  static struct option opts[] = {
      {"schedulers", 1, 0, 's'}, {"fanout", 1, 0, 'f'}, {"workers", 1, 0, 'w'},
      {"ops", 1, 0, 'o'}, {"seed", 1, 0, 'x'}, {"seeds", 1, 0, 'k'}, {"garbage", 1, 0, 'g'},
      {"boot-pages", 1, 0, 'p'}, {"boot-ids", 1, 0, 'i'}, {"refill-pages", 1, 0, 'P'},
      {"refill-ids", 1, 0, 'I'}, {"gas-mib", 1, 0, 'm'}, {"report", 0, 0, 'r'},
      {"ceiling-pages", 1, 0, 'c'},
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
      case 'r': c.sched.quiet = false; break;
      case 'v': c.verbose = true; break;
      case 'h': usage(stdout); return 0;
      default: usage(stderr); return 2;
    }
  }
  if (c.schedulers < 1 || c.fanout < 1 || c.workers < 1 || c.ops < 1 || seeds < 1 ||
      c.garbage < 0 || c.sched.gas_size < ((size_t)16 << 20) || c.sched.refill_pages < 1 ||
      c.sched.refill_ids < 1) {
    fprintf(stderr, "antheap-sim: bad option value (see --help)\n");
    return 2;
  }
  if (!c.verbose) c.sched.log = fopen("/dev/null", "w"); /* malformed-message logs */
  int failed = 0;
  uint64_t first = c.seed;
  for (int k = 0; k < seeds; k++) {
    c.seed = first + (uint64_t)k;
    sim_result r;
    sim_run(&c, &r);
    printf("seed %lu: %s: %lu messages, %lu replies checked, %lu wrong-usage errors as expected, "
           "%lu regions placed by load, %lu slabs leased (%lu back as zombies)%s%s\n",
           (unsigned long)c.seed, r.ok ? "ok" : "FAILED", (unsigned long)r.messages,
           (unsigned long)r.replies_checked, (unsigned long)r.errors_expected,
           (unsigned long)r.placed_by_load, (unsigned long)r.leases,
           (unsigned long)r.zombie_returns, r.ok ? "" : ": ", r.ok ? "" : r.failure);
    if (!r.ok) {
      failed++;
      printf("  replay: antheap-sim --schedulers %d --fanout %d --workers %d --ops %d --seed %lu"
             " --garbage %d --boot-pages %zu --boot-ids %u --refill-pages %zu --refill-ids %u"
             " --gas-mib %zu --ceiling-pages %zu --verbose\n",
             c.schedulers, c.fanout, c.workers, c.ops, (unsigned long)c.seed, c.garbage,
             c.sched.boot_pages, c.sched.boot_ids, c.sched.refill_pages, c.sched.refill_ids,
             c.sched.gas_size >> 20, c.sched.ceiling_pages);
    }
  }
  printf("%d passed, %d failed\n", seeds - failed, failed);
  if (c.sched.log) fclose(c.sched.log);
  return failed ? 1 : 0;
}

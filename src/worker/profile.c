/* profile.c: the worker's ANTHEAP_PROFILE counters and their line (profile.h). */
#include "worker/profile.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/idle.h"
#include "proto/proto.h"

bool profile_on;

static struct {
  uint64_t n[MSG_TYPE_END], ns[MSG_TYPE_END], most_ns[MSG_TYPE_END]; /* under the rank lock */
  uint64_t lock_waits, lock_ns;               /* under the rank lock */
  _Atomic uint64_t flushes, flush_ns, flush_slabs, populate_ns;
} P;

void profile_setup(void) {
  const char *v = getenv("ANTHEAP_PROFILE");
  profile_on = false;
  if (!v || !*v || !strcmp(v, "0") || !strcmp(v, "off")) return;
  if (!strcmp(v, "1") || !strcmp(v, "on")) profile_on = true;
  else fprintf(stderr, "antheap: ANTHEAP_PROFILE=%s: expected on or off; off\n", v);
}


void profile_rpc(unsigned type, uint64_t ns) {
  if (type >= MSG_TYPE_END) return;
  P.n[type]++;
  P.ns[type] += ns;
  if (ns > P.most_ns[type]) P.most_ns[type] = ns;
}

void profile_lock_wait(uint64_t ns) {
  P.lock_waits++;
  P.lock_ns += ns;
}

void profile_flush(uint64_t ns, uint64_t slabs) {
  atomic_fetch_add(&P.flushes, 1);
  atomic_fetch_add(&P.flush_ns, ns);
  atomic_fetch_add(&P.flush_slabs, slabs);
}

void profile_populate(uint64_t ns) { atomic_fetch_add(&P.populate_ns, ns); }

void profile_report(int id) {
  if (!profile_on) return;
  char line[2048];
  char sleeps[160];
  idle_counts_text(sleeps, sizeof sleeps);
  int at = snprintf(line, sizeof line, "antheap: worker %d profile (seconds):", id);
  for (unsigned t = 1; t < MSG_TYPE_END && at < (int)sizeof line; t++)
    if (P.n[t])
      at += snprintf(line + at, sizeof line - (size_t)at, " %s %llu in %.4f (longest %.6f);",
                     proto_type_name(t), (unsigned long long)P.n[t], (double)P.ns[t] * 1e-9,
                     (double)P.most_ns[t] * 1e-9);
  if (at < (int)sizeof line)
    snprintf(line + at, sizeof line - (size_t)at,
             " rank lock waited %.4f (%llu holds); flushes %llu in %.4f, %llu slabs back;"
             " big leases mapped in %.4f; %s",
             (double)P.lock_ns * 1e-9, (unsigned long long)P.lock_waits,
             (unsigned long long)atomic_load(&P.flushes), (double)atomic_load(&P.flush_ns) * 1e-9,
             (unsigned long long)atomic_load(&P.flush_slabs),
             (double)atomic_load(&P.populate_ns) * 1e-9, sleeps);
  fprintf(stderr, "%s\n", line);
}

/* profile.c: the worker's ANTHEAP_PROFILE counters and their line (profile.h). */
#include "worker/profile.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/idle.h"
#include "proto/proto.h"

bool profile_on;

/* Round trips by octave of their nanoseconds (bucket k: below 2^k ns), for the median. */
#define OCTAVES 40

static struct {
  uint64_t n[MSG_TYPE_END], ns[MSG_TYPE_END], most_ns[MSG_TYPE_END]; /* under the rank lock */
  uint32_t octave[MSG_TYPE_END][OCTAVES];                               /* under the rank lock */
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
  unsigned k = ns ? 64 - (unsigned)__builtin_clzll(ns) : 0;
  P.octave[type][k < OCTAVES ? k : OCTAVES - 1]++;
}

/* The bound under which half of kind type's round trips came back: the top of the median's
 * octave, in seconds (a round trip's typical cost, where the total mixes the first of a burst
 * with the rest). */
static double half_under_s(unsigned type) {
  uint64_t seen = 0;
  for (unsigned k = 0; k < OCTAVES; k++)
    if ((seen += P.octave[type][k]) * 2 >= P.n[type]) return (double)((uint64_t)1 << k) * 1e-9;
  return (double)P.most_ns[type] * 1e-9;
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
      at += snprintf(line + at, sizeof line - (size_t)at,
                     " %s %llu in %.4f (longest %.6f, half under %.6f);", proto_type_name(t),
                     (unsigned long long)P.n[t], (double)P.ns[t] * 1e-9,
                     (double)P.most_ns[t] * 1e-9, half_under_s(t));
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

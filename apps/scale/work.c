/* work.c: the weak-scaling benchmark's pure logic (work.h). */
#include "work.h"

#include <stdlib.h>
#include <string.h>

int scale_stages(int cube_dims) { return 2 + (cube_dims > 0 ? cube_dims : 0); }

int scale_partner(int me, int n, int stage, int cube_dims) {
  if (n < 2 || me < 0 || me >= n || stage < 0 || stage >= scale_stages(cube_dims)) return -1;
  int p;
  if (stage == 0) {
    p = me ^ 1;
  } else if (stage == 1) {
    if (n < 3) return -1; /* two workers: the odd link is the even one again */
    /* an odd n has no wrap-around link here: worker 0 has a bye (n-1 meets n-2) */
    if (n % 2 && me == 0) return -1;
    if (me % 2) p = (me + 1) % n;
    else p = (me - 1 + n) % n;
  } else {
    int d = stage - 1;
    if (d >= 30 || (1 << d) >= n) return -1;
    p = me ^ (1 << d);
  }
  return p < n && p != me ? p : -1;
}

/* Internal schedulers of a heap-ordered tree of S with fan-out F (plan.c's internal_count). */
static int internal_of(int S, int F) { return S <= 1 ? 0 : (S - 1 + F - 1) / F; }

int scale_schedulers_for(int workers, int fanout, int per_leaf) {
  if (workers < 1 || fanout < 1 || per_leaf < 1) return -1;
  int leaves = (workers + per_leaf - 1) / per_leaf;
  if (fanout == 1) return leaves == 1 ? 1 : -1; /* a chain has one leaf */
  for (int S = leaves; S <= 2 * leaves + 1; S++)
    if (S - internal_of(S, fanout) >= leaves) return S;
  return -1;
}

int scale_levels(int schedulers, int fanout) {
  if (schedulers < 1 || fanout < 1) return 0;
  int levels = 1;
  for (long i = schedulers - 1; i > 0; i = (i - 1) / fanout) levels++;
  return levels;
}

uint64_t scale_mix(uint64_t owner, uint64_t index, uint64_t round) {
  uint64_t z = (owner << 40 ^ index << 16 ^ round) * 0x9e3779b97f4a7c15ull + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int scale_read_stats(FILE *f, scale_sched_stats *out) {
  memset(out, 0, sizeof *out);
  char line[1024];
  if (!fgets(line, sizeof line, f) || strncmp(line, "rank,level,kind,", 16) != 0) return -1;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '\n' || line[0] == '\0') continue;
    unsigned long long rank, in, outm, bin, bout;
    int level, n = 0;
    char kind[16];
    if (sscanf(line, "%llu,%d,%15[a-z],%llu,%llu,%llu,%llu%n", &rank, &level, kind, &in, &outm,
               &bin, &bout, &n) != 7)
      return -1;
    const char *last = strrchr(line, ',');
    char *end;
    unsigned long long rss = strtoull(last + 1, &end, 10);
    if (end == last + 1) return -1;
    int c = !strcmp(kind, "root") ? 0 : !strcmp(kind, "inner") ? 1 : !strcmp(kind, "leaf") ? 2 : -1;
    if (c < 0) return -1;
    scale_class *k = &out->cls[c];
    k->count++;
    k->msgs += in + outm;
    k->bytes += bin + bout;
    if (in + outm > k->msgs_max) k->msgs_max = in + outm;
    if (rss > k->rss_kib_max) k->rss_kib_max = rss;
    k->rss_kib_sum += rss;
    if (level + 1 > out->levels) out->levels = level + 1;
    out->rows++;
  }
  return out->rows > 0 ? 0 : -1;
}

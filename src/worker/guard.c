/* guard.c: ANTHEAP_CHECK=handover (guard.h): the guarded pages of one worker, as sorted,
 * disjoint page-aligned spans, each naming the hand-over that guarded it; mprotect to take
 * and give back access; a SIGSEGV handler that reports a stale access and stops the job. The
 * only file that changes page protections. */
#include "worker/guard.h"

#include <errno.h>
#include <execinfo.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TRACE_MAX 24
#define REGIONS_NAMED 4

/* One hand-over: what the report says of it. */
typedef struct handover {
  unsigned long call; /* the worker's n-th hand-over (sys_send or sys_give) */
  const char *how;
  int peer, nregions, ntrace;
  uint32_t regions[REGIONS_NAMED];
  void *trace[TRACE_MAX];
} handover;

typedef struct span {
  uintptr_t start, end; /* page-aligned */
  size_t rec;           /* the handover that guarded it */
} span;

static struct {
  bool on;
  int me;
  uintptr_t page;
  span *v;
  size_t n, cap;
  handover *rec;
  size_t nrec, caprec;
  unsigned long calls;
  struct sigaction old;
} G;

int guard_setting(bool *on, char *err, size_t errlen) {
  const char *v = getenv("ANTHEAP_CHECK");
  *on = v && !strcmp(v, "handover");
  if (!v || !*v || *on || !strcmp(v, "none")) return 0;
  snprintf(err, errlen, "ANTHEAP_CHECK=%s: expected handover or none", v);
  return EINVAL;
}

bool guard_on(void) { return G.on; }

/* The first span whose end lies above addr (G.n when none). */
static size_t first_above(uintptr_t addr) {
  size_t lo = 0, hi = G.n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (G.v[mid].end <= addr) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* ---- the report: async-signal-safe writes only ---- */

static void say(const char *s) {
  for (size_t len = strlen(s); len;) {
    ssize_t k = write(STDERR_FILENO, s, len);
    if (k <= 0) return;
    s += k;
    len -= (size_t)k;
  }
}

static void report(uintptr_t addr, const handover *h) {
  char line[512], regs[128] = "";
  for (int i = 0, at = 0; i < h->nregions && at < (int)sizeof regs - 16; i++)
    at += snprintf(regs + at, sizeof regs - (size_t)at, "%s%u", i ? ", " : "", h->regions[i]);
  snprintf(line, sizeof line,
           "antheap: worker %d: hand-over violation (ANTHEAP_CHECK=handover): a read or write at "
           "%#lx, in region %s%s, which this worker handed to worker %d with its hand-over #%lu "
           "(%s); that worker holds it now. The %s was called from:\n",
           G.me, (unsigned long)addr, h->nregions > 1 ? "one of " : "", regs, h->peer, h->call,
           h->how, h->how);
  say(line);
  backtrace_symbols_fd((void *const *)h->trace, h->ntrace, STDERR_FILENO);
  say("antheap: the stale access, from:\n");
  void *here[TRACE_MAX];
  backtrace_symbols_fd(here, backtrace(here, TRACE_MAX), STDERR_FILENO);
  say("antheap: (link the program with -rdynamic for function names, or use addr2line)\n");
}

/* A fault that is not ours goes to whoever handled SIGSEGV before (default: the core dump). */
static void pass_on(int sig, siginfo_t *si, void *uc) {
  if ((G.old.sa_flags & SA_SIGINFO) && G.old.sa_sigaction) {
    G.old.sa_sigaction(sig, si, uc);
    return;
  }
  if (G.old.sa_handler == SIG_DFL || G.old.sa_handler == SIG_IGN) {
    signal(sig, SIG_DFL); /* the access faults again, and the default action follows */
    return;
  }
  G.old.sa_handler(sig);
}

static void on_segv(int sig, siginfo_t *si, void *uc) {
  uintptr_t a = (uintptr_t)si->si_addr;
  size_t i = G.on ? first_above(a) : G.n;
  if (i == G.n || G.v[i].start > a) {
    pass_on(sig, si, uc);
    return;
  }
  report(a, &G.rec[G.v[i].rec]);
  MPI_Abort(MPI_COMM_WORLD, 70);
  _exit(70);
}

void guard_start(int me) {
  G.on = true;
  G.me = me;
  long ps = sysconf(_SC_PAGESIZE);
  G.page = ps > 0 ? (uintptr_t)ps : 4096;
  void *warm[2];
  backtrace(warm, 2); /* loads the unwinder now, not in the signal handler */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &G.old);
}

/* ---- spans ---- */

static int span_room(size_t more) {
  if (G.n + more <= G.cap) return 0;
  size_t cap = G.cap ? 2 * G.cap : 64;
  while (cap < G.n + more) cap *= 2;
  span *v = realloc(G.v, cap * sizeof *v);
  if (!v) return ENOMEM;
  G.v = v;
  G.cap = cap;
  return 0;
}

/* The pages to guard for [addr, addr + len): those it touches, where a page is at most a slab
 * (so no page holds another region's slab); else only those wholly inside it. */
static void page_span(uintptr_t addr, size_t len, bool outward, uintptr_t *s, uintptr_t *e) {
  uintptr_t p = G.page;
  bool out = outward || p <= 4096;
  *s = out ? addr & ~(p - 1) : (addr + p - 1) & ~(p - 1);
  *e = out ? (addr + len + p - 1) & ~(p - 1) : (addr + len) & ~(p - 1);
}

void guard_release(uintptr_t addr, size_t len) {
  if (!G.on || !G.n || !len || span_room(1)) return;
  uintptr_t a, b;
  page_span(addr, len, true, &a, &b);
  size_t i = first_above(a), j = i;
  while (j < G.n && G.v[j].start < b) j++;
  if (i == j) return;
  span left = G.v[i], right = G.v[j - 1];
  uintptr_t lo = left.start > a ? left.start : a, hi = right.end < b ? right.end : b;
  mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE);
  span keep[2];
  size_t k = 0;
  if (left.start < a) keep[k++] = (span){left.start, a, left.rec};
  if (right.end > b) keep[k++] = (span){b, right.end, right.rec};
  memmove(G.v + i + k, G.v + j, (G.n - j) * sizeof *G.v); /* k <= 2 pieces for j - i >= 1 */
  memcpy(G.v + i, keep, k * sizeof *keep);
  G.n = G.n - (j - i) + k;
}

static size_t new_record(const char *how, int peer, const uint32_t *regions, int nregions) {
  if (G.nrec == G.caprec) {
    size_t cap = G.caprec ? 2 * G.caprec : 64;
    handover *v = realloc(G.rec, cap * sizeof *v);
    if (!v) return SIZE_MAX;
    G.rec = v;
    G.caprec = cap;
  }
  handover *h = &G.rec[G.nrec];
  *h = (handover){.call = ++G.calls, .how = how, .peer = peer,
                  .nregions = nregions < REGIONS_NAMED ? nregions : REGIONS_NAMED};
  memcpy(h->regions, regions, (size_t)h->nregions * sizeof *regions);
  h->ntrace = backtrace(h->trace, TRACE_MAX);
  return G.nrec++;
}

size_t guard_protect(const gas_range *r, size_t n, bool readable, const char *how, int peer,
                     const uint32_t *regions, int nregions) {
  if (!G.on || !n) return GUARD_NONE;
  size_t rec = new_record(how, peer, regions, nregions);
  if (rec == SIZE_MAX || span_room(2 * n)) return GUARD_NONE; /* no memory: unguarded */
  for (size_t k = 0; k < n; k++) {
    uintptr_t s, e;
    page_span(r[k].addr, r[k].len, false, &s, &e);
    if (s >= e) continue;
    guard_release(s, e - s); /* (nothing of it should be guarded: it was ours) */
    if (mprotect((void *)s, e - s, readable ? PROT_READ : PROT_NONE)) continue;
    size_t i = first_above(s);
    memmove(G.v + i + 1, G.v + i, (G.n - i) * sizeof *G.v);
    G.v[i] = (span){s, e, rec};
    G.n++;
  }
  return rec;
}

void guard_tighten(size_t rec) {
  for (size_t i = 0; G.on && rec != GUARD_NONE && i < G.n; i++)
    if (G.v[i].rec == rec) mprotect((void *)G.v[i].start, G.v[i].end - G.v[i].start, PROT_NONE);
}

void guard_undo(size_t rec) {
  if (!G.on || rec == GUARD_NONE) return;
  size_t k = 0;
  for (size_t i = 0; i < G.n; i++) {
    if (G.v[i].rec != rec) {
      G.v[k++] = G.v[i];
      continue;
    }
    mprotect((void *)G.v[i].start, G.v[i].end - G.v[i].start, PROT_READ | PROT_WRITE);
  }
  G.n = k;
}

void guard_stop(void) {
  free(G.v);
  free(G.rec);
  G.v = NULL;
  G.rec = NULL;
  G.n = G.cap = G.nrec = G.caprec = 0;
  G.on = false;
}

/* plan.c: the launch plan (plan.h): roles, the scheduler tree, leaves and their workers.
 *
 * The rules, in order (all deterministic; ties go to the lower host id, NUMA id, or rank):
 *
 *  1. Domains. Ranks are grouped by host, and within a host by NUMA node (-1, "unknown or
 *     several", is a node of its own). Hosts are taken in host-id order, NUMA nodes in id order.
 *
 *  2. Who is a scheduler. MPMD: the antheapd ranks (MPI app 0); S is their count. SPMD: S is
 *     shared out among the hosts in proportion to their rank counts, and within a host among
 *     its NUMA nodes the same way; on each NUMA node the lowest ranks become its schedulers.
 *     Sharing = one host (node) each first when S allows it (only those with two ranks or more),
 *     then one at a time to the one furthest behind its share (Sainte-Lague: largest
 *     ranks/(2*given+1)), leaving every host (node) at least one worker whenever the job has
 *     ranks enough for that.
 *
 *  3. The tree. Scheduler indices 0..S-1 in heap order: the parent of index i > 0 is
 *     (i-1)/F, so index i has children F*i+1 .. F*i+F (those < S). The first I indices have
 *     children (internal schedulers), the last L = S-I are the leaves.
 *
 *  4. Which schedulers are leaves. The L leaves are shared out among hosts in proportion to
 *     the workers there (never more than the host's schedulers; one each first for hosts that
 *     have both workers and schedulers, when L allows), then the same within each host among
 *     its NUMA nodes. On each NUMA node its lowest scheduler ranks are internal, the rest
 *     leaves. Internal ranks take indices 0..I-1 and leaves I..S-1, each in (host, NUMA,
 *     rank) order: so on one host with one NUMA node, ranks 0..S-1 are the schedulers in heap
 *     order (rank i has index i) and rank 0 is the root.
 *
 *  5. Who serves whom. The workers of a NUMA node that has leaves are split among those
 *     leaves in contiguous rank order, as evenly as possible. Workers of a NUMA node without a
 *     leaf go, one by one in rank order, to the least-loaded leaf of their host; workers of a
 *     host without a leaf (possible in MPMD, or SPMD with fewer schedulers than hosts) to the
 *     least-loaded leaf of all. Each fallback adds a line to plan->warnings.
 *
 *  6. Worker indices 0..W-1 follow the leaves (leaf by leaf, rank order within a leaf), so each
 *     leaf serves one contiguous block. With the usual block rank layout (a host's ranks
 *     consecutive) and no fallback this is plain rank order; with an interleaved layout it
 *     is host-major.
 */
#include "job/plan.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/types.h"

/* A NUMA node of one host: ranks there (n), schedulers (s), leaves (l), workers (w). */
typedef struct domain {
  int host, numa;
  int n, s, l, w;
  int leaf0; /* leaf position (0..L-1) of its first leaf */
} domain;

/* A host: the same counts, summed over its domains d0 .. d0+nd-1. */
typedef struct hostg {
  int id;
  int n, s, l, w;
  int d0, nd;
  int leaf0;
} hostg;

/* Everything plan_build works with. */
typedef struct work {
  const plan_input *in;
  launch_plan *p;
  int ndom, nhost;
  domain *dom;
  hostg *host;
  int *dom_of;  /* rank -> domain */
  int *order;   /* ranks sorted by (domain, rank) */
  int *leaf_of; /* rank -> leaf position, for workers */
  int *load;    /* leaf position -> workers so far */
  int nint;     /* internal schedulers I */
  int *wt, *cap, *got; /* scratch for share() */
  bool *want;
} work;

const char *plan_status_text(plan_status s) {
  switch (s) {
  case PLAN_OK: return "ok";
  case PLAN_ERR_INPUT: return "bad rank description";
  case PLAN_ERR_SCHEDULERS: return "need at least one scheduler";
  case PLAN_ERR_TOO_MANY_SCHEDULERS: return "more schedulers than ranks";
  case PLAN_ERR_NO_WORKERS: return "no worker left";
  case PLAN_ERR_FANOUT: return "fan-out must be at least 1";
  case PLAN_ERR_MPMD_NO_DAEMON: return "MPMD launch without antheapd ranks";
  case PLAN_ERR_MPMD_NO_APP: return "MPMD launch without application ranks";
  case PLAN_ERR_NOMEM: return "out of memory";
  }
  return "unknown plan error";
}

/* Report status s with a formatted detail; returns s. */
static plan_status fail(char *err, size_t errlen, plan_status s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static plan_status fail(char *err, size_t errlen, plan_status s, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return s;
}

bool plan_warn(launch_plan *p, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return false;
  size_t old = p->warnings ? strlen(p->warnings) : 0;
  char *w = realloc(p->warnings, old + (size_t)n + 2);
  if (!w) return false;
  va_start(ap, fmt);
  vsnprintf(w + old, (size_t)n + 1, fmt, ap);
  va_end(ap);
  w[old + (size_t)n] = '\n';
  w[old + (size_t)n + 1] = '\0';
  p->warnings = w;
  return true;
}

const char *plan_host_name(const launch_plan *p, int host, char *buf, size_t buflen) {
  if (p->host_names && host >= 0 && host < p->nhosts && p->host_names[host])
    return p->host_names[host];
  snprintf(buf, buflen, "host%d", host);
  return buf;
}

/* ---- validation ---- */

static plan_status check_ranks(const plan_input *in, char *err, size_t errlen) {
  if (in->nranks < 1 || !in->ranks)
    return fail(err, errlen, PLAN_ERR_INPUT, "no ranks to plan (nranks = %d)", in->nranks);
  if (in->host_names && in->nhosts < 1)
    return fail(err, errlen, PLAN_ERR_INPUT, "host names given but nhosts = %d", in->nhosts);
  for (int r = 0; r < in->nranks; r++) {
    const plan_rank_info *ri = &in->ranks[r];
    if (ri->host < 0 || (in->host_names && ri->host >= in->nhosts))
      return fail(err, errlen, PLAN_ERR_INPUT, "rank %d has host id %d (valid: 0..%d)", r,
                  ri->host, in->host_names ? in->nhosts - 1 : INT32_MAX);
    if (ri->numa < -1)
      return fail(err, errlen, PLAN_ERR_INPUT, "rank %d has NUMA node %d (valid: -1 or more)", r,
                  ri->numa);
  }
  return PLAN_OK;
}

static plan_status check_roles(const plan_input *in, char *err, size_t errlen) {
  if (in->fanout < 1)
    return fail(err, errlen, PLAN_ERR_FANOUT, "scheduler fan-out %d: must be at least 1",
                in->fanout);
  if (in->mpmd) {
    int d = 0;
    for (int r = 0; r < in->nranks; r++) d += in->ranks[r].is_daemon;
    if (d == 0)
      return fail(err, errlen, PLAN_ERR_MPMD_NO_DAEMON,
                  "MPMD launch with no antheapd ranks: start it as "
                  "'mpirun -np S antheapd : -np W ./app'");
    if (d == in->nranks)
      return fail(err, errlen, PLAN_ERR_MPMD_NO_APP,
                  "MPMD launch with %d antheapd ranks and no application ranks", d);
    return PLAN_OK;
  }
  int s = in->schedulers, n = in->nranks;
  if (s < 1)
    return fail(err, errlen, PLAN_ERR_SCHEDULERS, "%d schedulers: need at least 1", s);
  if (s > n)
    return fail(err, errlen, PLAN_ERR_TOO_MANY_SCHEDULERS,
                "%d schedulers requested but the job has only %d ranks", s, n);
  if (s == n)
    return fail(err, errlen, PLAN_ERR_NO_WORKERS,
                "%d schedulers in a job of %d ranks leave no worker (need at least %d ranks)", s,
                n, s + 1);
  return PLAN_OK;
}

/* ---- sharing a count among hosts or NUMA nodes ---- */

/* Give `total` out among n items in proportion to wt, never above cap: first one each to the
 * items marked in want (only when there are enough for all of them), then one at a time to
 * the item with the largest wt/(2*got+1), the lowest item on ties. Needs total <= sum(cap). */
static void share(int total, int n, const int *wt, const int *cap, const bool *want, int *got) {
  int nwant = 0;
  for (int i = 0; i < n; i++) {
    got[i] = 0;
    nwant += want[i] && cap[i] > 0;
  }
  if (nwant <= total)
    for (int i = 0; i < n; i++)
      if (want[i] && cap[i] > 0) got[i] = 1, total--;
  for (; total > 0; total--) {
    int best = -1;
    for (int i = 0; i < n; i++) {
      if (got[i] >= cap[i]) continue;
      if (best < 0 || (int64_t)wt[i] * (2 * got[best] + 1) > (int64_t)wt[best] * (2 * got[i] + 1))
        best = i;
    }
    AH_ASSERT(best >= 0);
    if (best < 0) return;
    got[best]++;
  }
}

/* ---- step 1: domains ---- */

static int cmp_domain(const void *a, const void *b) {
  const domain *x = a, *y = b;
  if (x->host != y->host) return x->host < y->host ? -1 : 1;
  return (x->numa > y->numa) - (x->numa < y->numa);
}

/* Fill w->dom (sorted, unique) and w->dom_of, then the hosts. */
static void build_domains(work *w) {
  const plan_input *in = w->in;
  for (int r = 0; r < in->nranks; r++)
    w->dom[r] = (domain){.host = in->ranks[r].host, .numa = in->ranks[r].numa};
  qsort(w->dom, (size_t)in->nranks, sizeof *w->dom, cmp_domain);
  int nd = 0;
  for (int i = 0; i < in->nranks; i++)
    if (nd == 0 || cmp_domain(&w->dom[nd - 1], &w->dom[i]) != 0) w->dom[nd++] = w->dom[i];
  w->ndom = nd;
  for (int r = 0; r < in->nranks; r++) {
    domain key = {.host = in->ranks[r].host, .numa = in->ranks[r].numa};
    domain *d = bsearch(&key, w->dom, (size_t)nd, sizeof *d, cmp_domain);
    w->dom_of[r] = (int)(d - w->dom);
    d->n++;
  }
  w->nhost = 0;
  for (int i = 0; i < nd; i++) {
    if (i == 0 || w->dom[i].host != w->dom[i - 1].host)
      w->host[w->nhost++] = (hostg){.id = w->dom[i].host, .d0 = i};
    hostg *h = &w->host[w->nhost - 1];
    h->nd++;
    h->n += w->dom[i].n;
  }
}

/* Ranks sorted by (domain, rank): a stable counting sort. */
static void build_order(work *w) {
  int n = w->in->nranks;
  int *next = w->got; /* scratch of ndom entries */
  for (int d = 0, at = 0; d < w->ndom; d++) next[d] = at, at += w->dom[d].n;
  for (int r = 0; r < n; r++) w->order[next[w->dom_of[r]]++] = r;
}

/* ---- step 2: who is a scheduler ---- */

/* SPMD: share S among hosts, then each host's share among its domains, by rank counts. */
static void share_schedulers(work *w) {
  int spare = 0, S = w->in->schedulers;
  for (int h = 0; h < w->nhost; h++) spare += w->host[h].n - 1;
  for (int h = 0; h < w->nhost; h++) {
    w->wt[h] = w->host[h].n;
    w->cap[h] = spare >= S ? w->host[h].n - 1 : w->host[h].n;
    w->want[h] = w->host[h].n >= 2;
  }
  int *got = w->got + w->ndom; /* scratch beyond the domain part */
  share(S, w->nhost, w->wt, w->cap, w->want, got);
  for (int h = 0; h < w->nhost; h++) w->host[h].s = got[h];
  for (int h = 0; h < w->nhost; h++) {
    hostg *hg = &w->host[h];
    domain *d = &w->dom[hg->d0];
    int dspare = 0;
    for (int i = 0; i < hg->nd; i++) dspare += d[i].n - 1;
    for (int i = 0; i < hg->nd; i++) {
      w->wt[i] = d[i].n;
      w->cap[i] = dspare >= hg->s ? d[i].n - 1 : d[i].n;
      w->want[i] = d[i].n >= 2;
    }
    share(hg->s, hg->nd, w->wt, w->cap, w->want, got);
    for (int i = 0; i < hg->nd; i++) d[i].s = got[i], d[i].w = d[i].n - got[i];
    hg->w = hg->n - hg->s;
  }
}

/* Mark roles: SPMD takes the lowest d.s ranks of each domain, MPMD the antheapd ranks. */
static void mark_schedulers(work *w) {
  launch_plan *p = w->p;
  const plan_input *in = w->in;
  if (in->mpmd) {
    for (int r = 0; r < in->nranks; r++) {
      domain *d = &w->dom[w->dom_of[r]];
      bool s = in->ranks[r].is_daemon;
      p->ranks[r].role = s ? PLAN_SCHEDULER : PLAN_WORKER;
      d->s += s;
      d->w += !s;
    }
    for (int h = 0; h < w->nhost; h++)
      for (int i = 0; i < w->host[h].nd; i++) {
        w->host[h].s += w->dom[w->host[h].d0 + i].s;
        w->host[h].w += w->dom[w->host[h].d0 + i].w;
      }
    return;
  }
  share_schedulers(w);
  for (int i = 0, d = -1, taken = 0; i < in->nranks; i++) {
    int r = w->order[i];
    if (w->dom_of[r] != d) d = w->dom_of[r], taken = 0;
    p->ranks[r].role = taken < w->dom[d].s ? PLAN_SCHEDULER : PLAN_WORKER;
    taken++;
  }
}

/* ---- steps 3 and 4: the tree and its leaves ---- */

static int internal_count(int S, int F) {
  int I = 0;
  while (I < S && (int64_t)F * I + 1 < S) I++;
  return I;
}

/* Share the L leaves among hosts by their workers, then among each host's domains. */
static void share_leaves(work *w, int L) {
  int *got = w->got + w->ndom;
  for (int h = 0; h < w->nhost; h++) {
    w->wt[h] = w->host[h].w;
    w->cap[h] = w->host[h].s;
    w->want[h] = w->host[h].w > 0 && w->host[h].s > 0;
  }
  share(L, w->nhost, w->wt, w->cap, w->want, got);
  for (int h = 0; h < w->nhost; h++) w->host[h].l = got[h];
  int leaf0 = 0;
  for (int h = 0; h < w->nhost; h++) {
    hostg *hg = &w->host[h];
    domain *d = &w->dom[hg->d0];
    for (int i = 0; i < hg->nd; i++) {
      w->wt[i] = d[i].w;
      w->cap[i] = d[i].s;
      w->want[i] = d[i].w > 0 && d[i].s > 0;
    }
    share(hg->l, hg->nd, w->wt, w->cap, w->want, got);
    hg->leaf0 = leaf0;
    for (int i = 0; i < hg->nd; i++) d[i].l = got[i], d[i].leaf0 = leaf0, leaf0 += got[i];
  }
}

/* Give scheduler indices: internal ranks 0..I-1, leaves I..S-1, both in (domain, rank) order. */
static void index_schedulers(work *w) {
  launch_plan *p = w->p;
  int next_int = 0, next_leaf = w->nint;
  for (int i = 0, d = -1, seen = 0; i < p->nranks; i++) {
    int r = w->order[i];
    if (w->dom_of[r] != d) d = w->dom_of[r], seen = 0;
    if (p->ranks[r].role != PLAN_SCHEDULER) continue;
    bool internal = seen++ < w->dom[d].s - w->dom[d].l;
    int idx = internal ? next_int++ : next_leaf++;
    p->ranks[r].sched_index = idx;
    p->sched_ranks[idx] = r;
  }
  AH_ASSERT(next_int == w->nint && next_leaf == p->nschedulers);
}

/* Parent, children, level, leaf flag and descendants of every scheduler (heap order). */
static void link_tree(launch_plan *p) {
  int S = p->nschedulers, F = p->fanout;
  for (int i = 0; i < S; i++) {
    plan_rank *pr = &p->ranks[p->sched_ranks[i]];
    int64_t first = (int64_t)F * i + 1;
    pr->parent = i == 0 ? -1 : p->sched_ranks[(i - 1) / F];
    pr->level = i == 0 ? 0 : p->ranks[pr->parent].level + 1;
    pr->nchildren = first < S ? (int)(S - first < F ? S - first : F) : 0;
    pr->children = pr->nchildren ? &p->child_store[first - 1] : NULL;
    pr->is_leaf = pr->nchildren == 0;
    pr->descendants = 0;
  }
  for (int i = 1; i < S; i++) p->child_store[i - 1] = p->sched_ranks[i];
  for (int i = S - 1; i > 0; i--) {
    plan_rank *pr = &p->ranks[p->sched_ranks[i]];
    p->ranks[pr->parent].descendants += pr->descendants + 1;
  }
  p->nlevels = p->ranks[p->sched_ranks[S - 1]].level + 1;
  p->nleaves = 0;
  for (int i = 0; i < S; i++)
    if (p->ranks[p->sched_ranks[i]].is_leaf) p->leaves[p->nleaves++] = p->sched_ranks[i];
}

/* ---- step 5: workers to leaves ---- */

/* The least-loaded leaf position in [lo, hi). */
static int least_loaded(const work *w, int lo, int hi) {
  int best = lo;
  for (int k = lo + 1; k < hi; k++)
    if (w->load[k] < w->load[best]) best = k;
  return best;
}

/* Assign the workers of domain d: split among its own leaves, else the host's, else anyone's.
 * Returns how many went off the domain's host. */
static int assign_domain(work *w, int d, int *first_worker) {
  const domain *dm = &w->dom[d];
  const hostg *hg = NULL;
  for (int h = 0; h < w->nhost; h++)
    if (w->host[h].id == dm->host) hg = &w->host[h];
  int k = 0, remote = 0, L = w->p->nleaves;
  for (int i = *first_worker; i < *first_worker + dm->n; i++) {
    int r = w->order[i];
    if (w->p->ranks[r].role != PLAN_WORKER) continue;
    int leaf;
    if (dm->l > 0) leaf = dm->leaf0 + (int)((int64_t)k * dm->l / dm->w);
    else if (hg->l > 0) leaf = least_loaded(w, hg->leaf0, hg->leaf0 + hg->l);
    else leaf = least_loaded(w, 0, L), remote++;
    w->leaf_of[r] = leaf;
    w->load[leaf]++;
    k++;
  }
  *first_worker += dm->n;
  return remote;
}

/* Warn about the fallbacks that step 5 took for domain d. */
static void warn_domain(work *w, int d, int remote) {
  const domain *dm = &w->dom[d];
  char buf[32];
  const char *hn = plan_host_name(w->p, dm->host, buf, sizeof buf);
  if (remote)
    plan_warn(w->p,
              "%d workers on host %s have no leaf scheduler on their host; leaves on other "
              "hosts serve them",
              remote, hn);
  else if (dm->l == 0 && dm->w > 0)
    plan_warn(w->p,
              "%d workers on host %s NUMA node %d have no leaf scheduler on their NUMA node; "
              "leaves on other NUMA nodes of the host serve them",
              dm->w, hn, dm->numa);
}

/* Worker indices leaf by leaf (rank order within a leaf), and each leaf's block. */
static void number_workers(work *w) {
  launch_plan *p = w->p;
  int L = p->nleaves;
  int *next = w->got; /* scratch, L <= nranks entries */
  for (int k = 0, at = 0; k < L; k++) {
    plan_rank *leaf = &p->ranks[p->leaves[k]];
    leaf->worker_first = at;
    leaf->worker_count = w->load[k];
    next[k] = at;
    at += w->load[k];
  }
  for (int r = 0; r < p->nranks; r++) {
    if (p->ranks[r].role != PLAN_WORKER) continue;
    int k = w->leaf_of[r], idx = next[k]++;
    p->ranks[r].worker_index = idx;
    p->ranks[r].leaf = p->leaves[k];
    p->worker_ranks[idx] = r;
  }
}

/* One line for the leaves that serve nobody (rank list cut after a few). */
static void warn_idle_leaves(launch_plan *p) {
  char list[96] = "";
  size_t used = 0;
  int idle = 0;
  for (int k = 0; k < p->nleaves; k++) {
    if (p->ranks[p->leaves[k]].worker_count) continue;
    if (idle++ < 8 && used < sizeof list)
      used += (size_t)snprintf(list + used, sizeof list - used, "%s%d", idle > 1 ? "," : "",
                               p->leaves[k]);
  }
  if (idle)
    plan_warn(p, "%d leaf schedulers serve no workers (ranks %s%s)", idle, list,
              idle > 8 ? ",..." : "");
}

static void assign_workers(work *w) {
  for (int d = 0, first = 0; d < w->ndom; d++) warn_domain(w, d, assign_domain(w, d, &first));
  number_workers(w);
  warn_idle_leaves(w->p);
}

/* ---- plan_build ---- */

static void work_free(work *w) {
  free(w->dom);
  free(w->host);
  free(w->dom_of);
  free(w->order);
  free(w->leaf_of);
  free(w->load);
  free(w->wt);
  free(w->cap);
  free(w->got);
  free(w->want);
}

/* Allocate the plan's arrays and the work arrays; false when out of memory. */
static bool allocate(work *w, launch_plan *p, const plan_input *in) {
  size_t n = (size_t)in->nranks, s = (size_t)p->nschedulers;
  p->ranks = calloc(n, sizeof *p->ranks);
  p->sched_ranks = calloc(s, sizeof *p->sched_ranks);
  p->worker_ranks = calloc(n - s, sizeof *p->worker_ranks);
  p->leaves = calloc(s, sizeof *p->leaves);
  p->child_store = calloc(s, sizeof *p->child_store);
  w->dom = calloc(n, sizeof *w->dom);
  w->host = calloc(n, sizeof *w->host);
  w->dom_of = calloc(n, sizeof *w->dom_of);
  w->order = calloc(n, sizeof *w->order);
  w->leaf_of = calloc(n, sizeof *w->leaf_of);
  w->load = calloc(s, sizeof *w->load);
  w->wt = calloc(n, sizeof *w->wt);
  w->cap = calloc(n, sizeof *w->cap);
  w->got = calloc(2 * n, sizeof *w->got);
  w->want = calloc(n, sizeof *w->want);
  bool ok = p->ranks && p->sched_ranks && p->worker_ranks && p->leaves && p->child_store;
  ok = ok && w->dom && w->host && w->dom_of && w->order && w->leaf_of && w->load && w->wt &&
       w->cap && w->got && w->want;
  if (ok && in->host_names) {
    p->host_names = calloc((size_t)in->nhosts, sizeof *p->host_names);
    ok = p->host_names != NULL;
    p->nhosts = ok ? in->nhosts : 0;
    for (int h = 0; ok && h < in->nhosts; h++)
      if (in->host_names[h]) ok = (p->host_names[h] = strdup(in->host_names[h])) != NULL;
  }
  return ok;
}

/* Copy the input per rank and clear the role-specific fields. */
static void init_ranks(launch_plan *p, const plan_input *in) {
  for (int r = 0; r < in->nranks; r++)
    p->ranks[r] = (plan_rank){.role = PLAN_WORKER,
                              .host = in->ranks[r].host,
                              .numa = in->ranks[r].numa,
                              .core = in->ranks[r].core,
                              .sched_index = -1,
                              .level = -1,
                              .parent = -1,
                              .worker_index = -1,
                              .leaf = -1};
}

static int count_daemons(const plan_input *in) {
  int d = 0;
  for (int r = 0; r < in->nranks; r++) d += in->ranks[r].is_daemon;
  return d;
}

plan_status plan_build(const plan_input *in, launch_plan *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  out->self = -1;
  if (!in) return fail(err, errlen, PLAN_ERR_INPUT, "no input");
  plan_status st = check_ranks(in, err, errlen);
  if (st == PLAN_OK) st = check_roles(in, err, errlen);
  if (st != PLAN_OK) return st;

  launch_plan *p = out;
  p->nranks = in->nranks;
  p->mpmd = in->mpmd;
  p->fanout = in->fanout;
  p->nschedulers = in->mpmd ? count_daemons(in) : in->schedulers;
  p->nworkers = p->nranks - p->nschedulers;
  work w = {.in = in, .p = p};
  if (!allocate(&w, p, in)) {
    work_free(&w);
    plan_free(p);
    return fail(err, errlen, PLAN_ERR_NOMEM, "out of memory planning %d ranks", in->nranks);
  }
  init_ranks(p, in);
  if (in->mpmd && in->schedulers > 0 && in->schedulers != p->nschedulers)
    plan_warn(p, "scheduler count %d ignored: the MPMD launch has %d antheapd ranks",
              in->schedulers, p->nschedulers);
  build_domains(&w);
  build_order(&w);
  mark_schedulers(&w);
  w.nint = internal_count(p->nschedulers, p->fanout);
  share_leaves(&w, p->nschedulers - w.nint);
  index_schedulers(&w);
  link_tree(p);
  assign_workers(&w);
  work_free(&w);
  return PLAN_OK;
}

void plan_free(launch_plan *p) {
  if (!p) return;
  free(p->ranks);
  free(p->sched_ranks);
  free(p->worker_ranks);
  free(p->leaves);
  free(p->child_store);
  for (int h = 0; p->host_names && h < p->nhosts; h++) free(p->host_names[h]);
  free(p->host_names);
  free(p->warnings);
  free(p->stats_path);
  memset(p, 0, sizeof *p);
  p->self = -1;
}

int sched_descendants(const launch_plan *p, int rank) {
  if (!p || rank < 0 || rank >= p->nranks || p->ranks[rank].role != PLAN_SCHEDULER) return -1;
  return p->ranks[rank].descendants;
}

/* ---- printing ---- */

/* "1,2,3" for a scheduler's children, cut with "+N more" when it does not fit. */
static void format_children(const plan_rank *pr, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  if (pr->nchildren == 0) {
    snprintf(buf, len, "-");
    return;
  }
  for (int c = 0; c < pr->nchildren; c++) {
    char one[16];
    int n = snprintf(one, sizeof one, "%s%d", c ? "," : "", pr->children[c]);
    int left = pr->nchildren - c;
    /* room for this one, and for ",+N more" after it unless it is the last */
    if (used + (size_t)n + (left == 1 ? 1 : 18) > len) {
      snprintf(buf + used, len - used, ",+%d more", left);
      return;
    }
    memcpy(buf + used, one, (size_t)n + 1);
    used += (size_t)n;
  }
}

/* The last column: a leaf's block of workers, or a worker's index. */
static void format_serves(const plan_rank *pr, char *buf, size_t len) {
  if (pr->role == PLAN_WORKER) snprintf(buf, len, "worker %d", pr->worker_index);
  else if (!pr->is_leaf) snprintf(buf, len, "-");
  else if (pr->worker_count == 0) snprintf(buf, len, "no workers");
  else if (pr->worker_count == 1) snprintf(buf, len, "worker %d", pr->worker_first);
  else
    snprintf(buf, len, "workers %d-%d (%d)", pr->worker_first,
             pr->worker_first + pr->worker_count - 1, pr->worker_count);
}

static void print_rank(FILE *f, const launch_plan *p, int r) {
  const plan_rank *pr = &p->ranks[r];
  char host[32], numa[12], core[12], idx[12], level[12], parent[12], kids[48], serves[48];
  const char *role = pr->role == PLAN_WORKER ? "worker" : pr->parent < 0 ? "root"
                     : pr->is_leaf ? "leaf" : "scheduler";
  if (pr->role == PLAN_SCHEDULER && pr->parent < 0 && pr->is_leaf) role = "root+leaf";
  snprintf(numa, sizeof numa, pr->numa < 0 ? "-" : "%d", pr->numa);
  snprintf(core, sizeof core, pr->core < 0 ? "-" : "%d", pr->core);
  bool s = pr->role == PLAN_SCHEDULER;
  snprintf(idx, sizeof idx, s ? "%d" : "-", pr->sched_index);
  snprintf(level, sizeof level, s ? "%d" : "-", pr->level);
  snprintf(parent, sizeof parent, (s ? pr->parent : pr->leaf) < 0 ? "-" : "%d",
           s ? pr->parent : pr->leaf);
  if (s) format_children(pr, kids, sizeof kids);
  else snprintf(kids, sizeof kids, "-");
  format_serves(pr, serves, sizeof serves);
  fprintf(f, "%6d  %-9s  %-16s %4s %5s %5s %5s %6s  %-16s %s\n", r, role,
          plan_host_name(p, pr->host, host, sizeof host), numa, core, idx, level, parent, kids,
          serves);
}

void plan_print(FILE *f, const launch_plan *p) {
  fprintf(f,
          "antheap launch plan (%s): %d ranks = %d scheduler%s (%d level%s, fan-out %d, %d "
          "lea%s) + %d worker%s\n",
          p->mpmd ? "MPMD" : "SPMD", p->nranks, p->nschedulers, p->nschedulers == 1 ? "" : "s",
          p->nlevels, p->nlevels == 1 ? "" : "s", p->fanout, p->nleaves,
          p->nleaves == 1 ? "f" : "ves", p->nworkers, p->nworkers == 1 ? "" : "s");
  fprintf(f, "%6s  %-9s  %-16s %4s %5s %5s %5s %6s  %-16s %s\n", "rank", "role", "host", "numa",
          "core", "sched", "level", "parent", "children", "serves");
  for (int r = 0; r < p->nranks; r++) print_rank(f, p, r);
  if (p->warnings) {
    for (const char *line = p->warnings; *line;) {
      const char *end = strchr(line, '\n');
      int n = end ? (int)(end - line) : (int)strlen(line);
      fprintf(f, "note: %.*s\n", n, line);
      line += n + (end != NULL);
    }
  }
}

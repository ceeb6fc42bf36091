/* trade.c: pages and region IDs between schedulers (Myrmics section 5.2), and shutdown.
 * The root owns the whole GAS and every ID. At boot each scheduler gets a chunk sized by its
 * subtree (boot_* times the schedulers in it) and passes its children theirs. A scheduler
 * that runs out parks the request and asks its parent (REFILL); the grant comes back as one
 * message and the parked requests run again. At shutdown every scheduler frees its regions and
 * returns all it holds to its parent once its workers and children are done; the root checks
 * that every page and ID came back and reports it (sched_config.report: a line, a table of
 * every scheduler's statistics, a CSV file). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/server_internal.h"
#include "sched/words.h"
#include "trie/rangeset.h"

#define MAX_PARK_TRIES 4
#define ALL_IDS ((rid_t)0xFFFFFFFEu) /* IDs 1 .. 2^32-2 */

/* Hand child `slot` up to pages pages and ids IDs from our layer; 0 when anything went. */
static int grant(sched_server *s, int slot, size_t pages, rid_t ids, uint64_t req) {
  proto_grant g = {0};
  uintptr_t addr;
  size_t n;
  if (pages && region_layer_take_pages(s->layer, pages, &addr, &n) == 0) {
    if (deleg_add(&s->deleg_pages, page_of(s, addr), n, slot)) {
      region_layer_add_range(s->layer, addr, n << AH_PAGE_SHIFT);
    } else {
      g.page_addr = addr;
      g.npages = n;
    }
  }
  rid_t first, count;
  if (ids && region_layer_take_ids(s->layer, ids, &first, &count) == 0) {
    if (deleg_add(&s->deleg_ids, first, count, slot)) {
      region_layer_add_ids(s->layer, first, count);
    } else {
      g.id_first = first;
      g.id_count = count;
    }
  }
  int status = g.npages || g.id_count ? 0 : ENOMEM;
  int child = s->children[slot];
  size_t len = proto_build(s->out, s->outcap, MSG_GRANT, req, -1, child, status, -1, &g, NULL, 0);
  srv_send(s, child, s->out, len);
  s->st.pages_granted += g.npages;
  s->st.ids_granted += g.id_count;
  return status;
}

/* Boot chunks for every child, in proportion to its subtree. */
static void distribute_boot(sched_server *s) {
  for (int i = 0; i < s->nchildren; i++) {
    size_t share = (size_t)s->tree->descendants[s->children[i]] + 1;
    grant(s, i, s->cfg.boot_pages * share, (rid_t)(s->cfg.boot_ids * share), 0);
  }
}

void trade_boot(sched_server *s) {
  if (s->me != s->tree->root) return;
  size_t npages = s->cfg.gas_size >> AH_PAGE_SHIFT;
  rangeset_add(&s->owned_pages, 0, npages);
  rangeset_add(&s->owned_ids, 1, ALL_IDS);
  region_layer_add_range(s->layer, s->cfg.gas_base, s->cfg.gas_size);
  region_layer_add_ids(s->layer, 1, ALL_IDS);
  s->booted = true;
  distribute_boot(s);
}

void sched_server_boot(sched_server *s) { trade_boot(s); }

static void request_refill(sched_server *s);
static void maybe_finish(sched_server *s);

/* Pages a request needs at least (what a refill must bring for it to fit); SIZE_MAX when
 * the bytes overflow (such a request can never fit). */
static size_t pages_needed(const proto_msg *m) {
  uint64_t bytes = 0;
  if (m->h->type == MSG_ALLOC || m->h->type == MSG_BALLOC) {
    const proto_alloc *a = m->fixed;
    if (a->n && a->size > UINT64_MAX / a->n) return SIZE_MAX;
    bytes = a->size * a->n;
  } else if (m->h->type == MSG_LEASE) {
    bytes = (uint64_t)((const proto_lease *)m->fixed)->min << AH_SLAB_SHIFT;
  } else if (m->h->type == MSG_REALLOC) {
    bytes = ((const proto_realloc *)m->fixed)->size;
  }
  return (size_t)(bytes >> AH_PAGE_SHIFT) + 1;
}

void trade_park(sched_server *s, int from, const proto_msg *m, int rc) {
  size_t need = rc == ENOMEM ? pages_needed(m) : 0;
  if (s->replay_tries >= MAX_PARK_TRIES || s->tree->parent[s->me] < 0 ||
      need > (s->cfg.gas_size >> AH_PAGE_SHIFT)) {
    /* the root has nobody to ask; or we asked enough; or the whole GAS could not hold it */
    srv_answer(s, m, rc, NULL, 0);
    return;
  }
  size_t len = sizeof *m->h + m->h->length;
  parked *p = malloc(sizeof *p + len);
  if (!p) {
    srv_answer(s, m, ENOMEM, NULL, 0);
    return;
  }
  p->next = NULL;
  p->from = from;
  p->tries = s->replay_tries + 1;
  p->len = len;
  memcpy(p->msg, m->h, len);
  *s->parked_tail = p;
  s->parked_tail = &p->next;
  s->st.parked++;
  if (need > s->refill_need) s->refill_need = need;
  request_refill(s);
}

static void request_refill(sched_server *s) {
  int parent = s->tree->parent[s->me];
  if (s->refill_pending || parent < 0) return;
  size_t pages = s->refill_need > s->cfg.refill_pages ? s->refill_need : s->cfg.refill_pages;
  /* IDs only when ours run low: a grant of IDs alone counts as progress for the parked
   * requests, so asking for IDs nobody needs while the GAS is exhausted replays them again
   * and again (until the root has handed out every ID) instead of answering ENOMEM. */
  region_layer_stats st;
  region_layer_get_stats(s->layer, &st);
  proto_refill r = {.pages = pages,
                    .ids = st.free_ids <= s->cfg.refill_ids / 4 ? s->cfg.refill_ids : 0};
  s->refill_need = 0;
  s->refill_asked = pages;
  size_t len = proto_build(s->out, s->outcap, MSG_REFILL, 0, -1, parent, 0, -1, &r, NULL, 0);
  srv_send(s, parent, s->out, len);
  s->refill_pending = true;
}

void trade_check_low(sched_server *s) {
  region_layer_stats st;
  region_layer_get_stats(s->layer, &st);
  size_t low = (s->cfg.refill_pages << (AH_PAGE_SHIFT - AH_SLAB_SHIFT)) / 4;
  if (st.free_slabs < low || st.free_ids < s->cfg.refill_ids / 4) request_refill(s);
}

void trade_on_refill(sched_server *s, int from, const proto_msg *m) {
  int slot = srv_child_slot(s, from);
  if (slot < 0) {
    s->st.malformed++;
    srv_log(s, "REFILL from rank %d, which is not a child: dropped", from);
    return;
  }
  const proto_refill *r = m->fixed;
  rid_t ids = r->ids > ALL_IDS ? ALL_IDS : (rid_t)r->ids;
  region_layer_stats st;
  region_layer_get_stats(s->layer, &st);
  bool have_pages = st.free_slabs >= (AH_PAGE_SIZE >> AH_SLAB_SHIFT), have_ids = st.free_ids > 0;
  bool root = s->tree->parent[s->me] < 0;
  if ((have_pages || !r->pages) && (have_ids || !ids)) {
    grant(s, slot, r->pages, ids, m->h->req);
    trade_check_low(s);
  } else if (root || s->replay_tries) { /* the root, or our own refill brought nothing */
    grant(s, slot, r->pages, ids, m->h->req); /* what there is; ENOMEM when nothing */
  } else { /* wait for our own refill, then serve it */
    size_t len = sizeof *m->h + m->h->length;
    parked *p = malloc(sizeof *p + len);
    if (!p) return;
    /* tries 1: replayed after an empty grant, it is answered with what there is (above)
     * instead of parking again, which would ask our parent for ever */
    *p = (parked){.next = s->parked_refills, .from = from, .tries = 1, .len = len};
    memcpy(p->msg, m->h, len);
    s->parked_refills = p;
    if (r->pages > s->refill_need) s->refill_need = r->pages; /* what our child needs */
    s->refill_pending = false; /* ask again even if an earlier refill is under way */
    request_refill(s);
  }
}

/* Run parked messages again. They may park again: a grant that brought something does not
 * count as a try; MAX_PARK_TRIES empty grants in a row answer the request with its error. */
static void replay(sched_server *s, parked *list, bool progress) {
  while (list) {
    parked *p = list;
    list = p->next;
    s->replay_tries = progress ? 0 : p->tries;
    s->replaying = true;
    sched_server_handle(s, p->from, p->msg, p->len);
    s->replaying = false;
    s->replay_tries = 0;
    free(p);
  }
}

void trade_on_grant(sched_server *s, const proto_msg *m) {
  const proto_grant *g = m->fixed;
  if (g->npages) {
    if (region_layer_add_range(s->layer, g->page_addr, g->npages << AH_PAGE_SHIFT) ||
        rangeset_add(&s->owned_pages, page_of(s, g->page_addr), g->npages))
      srv_log(s, "bad page grant [%#lx, +%lu pages) ignored", (unsigned long)g->page_addr,
              (unsigned long)g->npages);
    s->st.pages_received += g->npages;
  }
  if (g->id_count) {
    if (region_layer_add_ids(s->layer, g->id_first, g->id_count) ||
        rangeset_add(&s->owned_ids, g->id_first, g->id_count))
      srv_log(s, "bad ID grant [%u, +%u) ignored", g->id_first, g->id_count);
    s->st.ids_received += g->id_count;
  }
  if (!s->booted) {
    s->booted = true;
    distribute_boot(s);
  }
  s->refill_pending = false;
  parked *refills = s->parked_refills, *requests = s->parked_head;
  s->parked_refills = NULL;
  s->parked_head = NULL;
  s->parked_tail = &s->parked_head;
  /* Progress (the parked requests start counting their tries afresh) only when the grant
   * brought what was asked: a parent that can only give part of a page request hands out
   * the same few pages again and again otherwise (a request larger than any free range
   * bouncing between a parent's grant and our ceiling). */
  bool progress = m->h->status == 0 && (g->npages >= s->refill_asked || g->id_count > 0);
  replay(s, refills, progress);
  replay(s, requests, progress);
  maybe_finish(s);
}

/* ---- giving back: whole free pages above the ceiling return to the parent ---- */

void trade_check_ceiling(sched_server *s) {
  int parent = s->tree->parent[s->me];
  if (parent < 0 || s->cfg.ceiling_pages == 0) return;
  const size_t per_page = AH_PAGE_SIZE >> AH_SLAB_SHIFT;
  region_layer_stats st;
  region_layer_get_stats(s->layer, &st);
  if (st.free_slabs / per_page <= s->cfg.ceiling_pages) return;
  size_t excess = st.free_slabs / per_page - s->cfg.ceiling_pages;
  uintptr_t addr;
  size_t n;
  if (region_layer_take_pages(s->layer, excess, &addr, &n)) return;
  /* Not ours any more: out of the owned set first (a split may need a node). */
  if (rangeset_remove(&s->owned_pages, page_of(s, addr), n)) {
    region_layer_add_range(s->layer, addr, n << AH_PAGE_SHIFT);
    return;
  }
  proto_grant g = {.page_addr = addr, .npages = n};
  size_t len = proto_build(s->out, s->outcap, MSG_GIVEBACK, 0, -1, parent, 0, -1, &g, NULL, 0);
  srv_send(s, parent, s->out, len);
  s->st.pages_given_back += n;
}

void trade_on_giveback(sched_server *s, int from, const proto_msg *m) {
  const proto_grant *g = m->fixed;
  int slot = srv_child_slot(s, from);
  uint64_t first = page_of(s, g->page_addr);
  bool delegated = slot >= 0 && g->npages && deleg_find(&s->deleg_pages, first, NULL, NULL) == slot &&
                   deleg_find(&s->deleg_pages, first + g->npages - 1, NULL, NULL) == slot;
  if (!delegated) {
    s->st.malformed++;
    srv_log(s, "GIVEBACK from rank %d of pages it was not given: dropped", from);
    return;
  }
  /* Every delegated chunk overlapping the pages shrinks to what lies outside them. */
  uint64_t end = first + g->npages, k;
  uintptr_t v;
  while (trie_le(&s->deleg_pages, end - 1, &k, &v) == 0 && k + (v >> 8) > first) {
    uint64_t cend = k + (v >> 8);
    int cslot = (int)(v & 0xff) - 1;
    trie_delete(&s->deleg_pages, k, NULL);
    if (k < first) deleg_add(&s->deleg_pages, k, first - k, cslot);
    if (cend > end) deleg_add(&s->deleg_pages, end, cend - end, cslot);
  }
  if (region_layer_add_range(s->layer, g->page_addr, g->npages << AH_PAGE_SHIFT))
    srv_log(s, "GIVEBACK of pages we hold: [%#lx, +%lu pages)", (unsigned long)g->page_addr,
            (unsigned long)g->npages);
}

/* ---- shutdown ---- */

static int push_ids(void *ctx, rid_t first, rid_t count) { return words_push2(ctx, first, count); }

static void my_stat_row(const sched_server *s, uint64_t *row) {
  const sched_stats *t = &s->st;
  uint64_t rss = s->cfg.peak_rss_kib ? s->cfg.peak_rss_kib() : 0;
  uint64_t v[PROTO_STAT_WORDS] = {(uint64_t)s->me, t->served, t->forwarded, t->replies_routed,
                                  t->malformed, t->parked, t->pages_granted, t->pages_received,
                                  t->pages_given_back, t->ids_granted, t->regions_created,
                                  t->events, t->leased_slabs, t->returned_leases, t->msgs_in,
                                  t->msgs_out, t->bytes_in, t->bytes_out, rss};
  memcpy(row, v, sizeof v);
}

static void add_rows(sched_server *s, const uint64_t *rows, size_t n) {
  if (n == 0) return;
  if (s->nstat_rows + n > s->stat_cap) {
    size_t cap = (s->nstat_rows + n) * 2;
    uint64_t *r = realloc(s->stat_rows, cap * PROTO_STAT_WORDS * sizeof *r);
    if (!r) return;
    s->stat_rows = r;
    s->stat_cap = cap;
  }
  memcpy(s->stat_rows + s->nstat_rows * PROTO_STAT_WORDS, rows, n * PROTO_STAT_WORDS * 8);
  s->nstat_rows += n;
}

/* Where a row's scheduler sits: 0 root, 1 inner, 2 leaf (by the rank in row[0]). */
static int row_class(const sched_server *s, const uint64_t *row) {
  int r = (int)row[0];
  if (r < 0 || r >= s->tree->nranks) return 1;
  return r == s->tree->root ? 0 : sched_tree_is_leaf(s->tree, r) ? 2 : 1;
}

/* The rows as CSV (stats_csv), written to a temporary name and renamed, so that a reader
 * waiting for the file never sees half of it. */
static void write_stats_csv(sched_server *s) {
  static const char *const kind[] = {"root", "inner", "leaf"};
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.tmp", s->cfg.stats_csv) >= (int)sizeof tmp) return;
  FILE *f = fopen(tmp, "w");
  if (!f) {
    srv_log(s, "cannot write the statistics to %s", tmp);
    return;
  }
  fprintf(f, "rank,level,kind,msgs_in,msgs_out,bytes_in,bytes_out,served,forwarded,routed,"
             "malformed,parked,pages_out,pages_in,pages_back,ids_out,regions,events,leased,"
             "unleased,rss_kib\n");
  for (size_t i = 0; i < s->nstat_rows; i++) {
    const uint64_t *r = s->stat_rows + i * PROTO_STAT_WORDS;
    int rank = (int)r[0];
    fprintf(f, "%lu,%d,%s", (unsigned long)r[0],
            rank >= 0 && rank < s->tree->nranks ? s->tree->level[rank] : -1,
            kind[row_class(s, r)]);
    for (int k = 14; k < 18; k++) fprintf(f, ",%lu", (unsigned long)r[k]);
    for (int k = 1; k < 14; k++) fprintf(f, ",%lu", (unsigned long)r[k]);
    fprintf(f, ",%lu\n", (unsigned long)r[18]);
  }
  if (fclose(f) || rename(tmp, s->cfg.stats_csv))
    srv_log(s, "cannot write the statistics to %s", s->cfg.stats_csv);
}

/* Every scheduler's row, one line each (the table of SCHED_REPORT_TABLE). */
static void print_table(const sched_server *s, FILE *f) {
  fprintf(f, "%6s %9s %9s %8s %9s %7s %8s %8s %8s %9s %8s %7s %8s %8s %9s %9s %7s\n", "rank",
          "served", "forwarded", "routed", "malformed", "parked", "pg_out", "pg_in", "pg_back",
          "ids_out", "regions", "events", "leased", "unleased", "msgs_in", "msgs_out", "rss_MiB");
  for (size_t i = 0; i < s->nstat_rows; i++) {
    const uint64_t *r = s->stat_rows + i * PROTO_STAT_WORDS;
    fprintf(f, "%6lu", (unsigned long)r[0]);
    static const int width[] = {9, 9, 8, 9, 7, 8, 8, 8, 9, 8, 7, 8, 8, 9, 9};
    for (int k = 1; k < 16; k++) fprintf(f, " %*lu", width[k - 1], (unsigned long)r[k]);
    fprintf(f, " %7.1f\n", (double)r[18] / 1024.0);
  }
}

/* The shutdown report (sched_config.report): the CSV file, one line, the table. The line
 * keeps the words "nothing lost" / "MISSING" that tests and scripts look for, and a loss is
 * printed even with SCHED_REPORT_OFF: it is an error. */
static void print_report(sched_server *s, uint64_t slabs, uint64_t ids) {
  FILE *f = s->cfg.log ? s->cfg.log : stderr;
  uint64_t want_slabs = s->cfg.gas_size >> AH_SLAB_SHIFT, served = 0;
  bool lost = s->conservation != 0;
  if (s->cfg.stats_csv) write_stats_csv(s);
  if (s->cfg.report == SCHED_REPORT_OFF && !lost) return;
  for (size_t i = 0; i < s->nstat_rows; i++) served += s->stat_rows[i * PROTO_STAT_WORDS + 1];
  bool table = s->cfg.report == SCHED_REPORT_TABLE && !s->cfg.quiet;
  /* One write for the whole line: stderr is unbuffered, and another rank's output must not
   * land inside it (mpirun merges the ranks' streams) */
  char line[8192]; /* the stats path is the only part of any length */
  int n;
  if (lost)
    n = snprintf(line, sizeof line, "antheapd: shutdown: MISSING: only %lu of %lu slabs and %lu "
                 "of %lu region IDs came back to the root", (unsigned long)slabs,
                 (unsigned long)want_slabs, (unsigned long)ids, (unsigned long)ALL_IDS);
  else
    n = snprintf(line, sizeof line, "antheapd: shutdown: nothing lost: all %lu slabs and %lu "
                 "region IDs back at the root", (unsigned long)slabs, (unsigned long)ids);
  n += snprintf(line + n, sizeof line - (size_t)n, "; %lu request%s served by %zu scheduler%s",
                (unsigned long)served, served == 1 ? "" : "s", s->nstat_rows,
                s->nstat_rows == 1 ? "" : "s");
  if (s->cfg.report == SCHED_REPORT_SUMMARY && s->cfg.stats_csv)
    snprintf(line + n, sizeof line - (size_t)n, "; every scheduler's row in %s",
             s->cfg.stats_csv);
  else if (s->cfg.report == SCHED_REPORT_SUMMARY)
    snprintf(line + n, sizeof line - (size_t)n, "; ANTHEAP_STATS=table for every scheduler's row");
  fprintf(f, "%s\n", line);
  if (table) print_table(s, f);
  fflush(f);
}

static void finish(sched_server *s) {
  region_layer_free_all(s->layer); /* slabs still leased become zombies... */
  size_t unreturned = region_layer_reclaim_zombies(s->layer); /* ...taken back: all have left */
  if (unreturned)
    srv_log(s, "shutdown: %zu slabs were still leased (a worker left without handing them "
            "back): taken back", unreturned);
  uint64_t row[PROTO_STAT_WORDS];
  my_stat_row(s, row);
  add_rows(s, row, 1);
  words ranges = {0}, ids = {0};
  region_layer_walk_free(s->layer, words_push_range, NULL, &ranges);
  region_layer_walk_free(s->layer, NULL, push_ids, &ids);
  int parent = s->tree->parent[s->me];
  if (parent < 0) {
    uint64_t slabs = 0, nids = 0;
    for (size_t i = 1; i < ranges.n; i += 2) slabs += ranges.w[i] >> AH_SLAB_SHIFT;
    for (size_t i = 1; i < ids.n; i += 2) nids += ids.w[i];
    bool whole = ranges.n == 2 && ranges.w[0] == s->cfg.gas_base && ranges.w[1] == s->cfg.gas_size;
    s->conservation = whole && nids == ALL_IDS && ids.n == 2 ? 0 : -1;
    print_report(s, slabs, nids);
  } else {
    size_t ntail = ranges.n + ids.n + s->nstat_rows * PROTO_STAT_WORDS;
    uint64_t *tail = malloc((ntail ? ntail : 1) * sizeof *tail);
    if (tail && ntail <= PROTO_MAX_TAIL) {
      memcpy(tail, ranges.w, ranges.n * 8);
      memcpy(tail + ranges.n, ids.w, ids.n * 8);
      memcpy(tail + ranges.n + ids.n, s->stat_rows, s->nstat_rows * PROTO_STAT_WORDS * 8);
      proto_return r = {.nranges = (uint32_t)(ranges.n / 2), .nids = (uint32_t)(ids.n / 2),
                        .nrows = (uint32_t)s->nstat_rows};
      size_t len = proto_build(s->out, s->outcap, MSG_RETURN, 0, -1, parent, 0, -1, &r, tail,
                               (uint32_t)ntail);
      srv_send(s, parent, s->out, len);
    } else {
      srv_log(s, "shutdown: cannot return %zu words to the parent", ntail);
    }
    free(tail);
  }
  free(ranges.w);
  free(ids.w);
  s->done = true;
}

/* Finish once the workers are done, the children returned, and no grant is on its way
 * (pages granted after our RETURN would be missing at the root). */
static void maybe_finish(sched_server *s) {
  if (!s->done && s->workers_done == s->workers_direct && s->children_returned == s->nchildren &&
      !s->refill_pending)
    finish(s);
}

void trade_on_finalize(sched_server *s) {
  s->workers_done++;
  maybe_finish(s);
}

void trade_on_return(sched_server *s, int from, const proto_msg *m) {
  int slot = srv_child_slot(s, from);
  if (slot < 0) {
    s->st.malformed++;
    srv_log(s, "RETURN from rank %d, which is not a child: dropped", from);
    return;
  }
  const proto_return *r = m->fixed;
  const uint64_t *t = m->tail;
  for (uint32_t i = 0; i < r->nranges; i++, t += 2) {
    deleg_remove_span(&s->deleg_pages, page_of(s, t[0]), t[1] >> AH_PAGE_SHIFT);
    if (region_layer_add_range(s->layer, t[0], t[1]))
      srv_log(s, "shutdown: rank %d returned a range we hold: [%#lx, +%lu)", from,
              (unsigned long)t[0], (unsigned long)t[1]);
  }
  for (uint32_t i = 0; i < r->nids; i++, t += 2) {
    deleg_remove_span(&s->deleg_ids, t[0], t[1]);
    if (region_layer_add_ids(s->layer, (rid_t)t[0], (rid_t)t[1]))
      srv_log(s, "shutdown: rank %d returned IDs we hold: [%lu, +%lu)", from, (unsigned long)t[0],
              (unsigned long)t[1]);
  }
  add_rows(s, t, r->nrows);
  s->children_returned++;
  maybe_finish(s);
}

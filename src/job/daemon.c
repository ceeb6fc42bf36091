/* daemon.c: the MPI transport of the event server and its loop. Messages are received with
 * Iprobe/Recv on the protocol communicator and sent with Isend from copies, so two
 * schedulers sending each other large messages never block each other; an idle loop backs
 * off (common/idle.h: sleeps growing with the wait) so that oversubscribed jobs leave the
 * cores to the workers. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/idle.h"
#include "common/procstat.h"
#include "job/job.h"
#include "proto/proto.h"
#include "sched/server.h"

/* ANTHEAP_PROFILE=1 (as the workers' src/worker/profile.h): each scheduler counts the
 * messages it handles by kind with the seconds their handling took, and how long it waited
 * for them, and prints one line as it stops. */
typedef struct daemon_profile {
  bool on;
  uint64_t n[MSG_TYPE_END + 1], ns[MSG_TYPE_END + 1], most_ns[MSG_TYPE_END + 1]; /* [END]: unknown */
  uint64_t waited_ns;
} daemon_profile;


static void profile_start(daemon_profile *p) {
  const char *v = getenv("ANTHEAP_PROFILE");
  *p = (daemon_profile){.on = v && (!strcmp(v, "1") || !strcmp(v, "on"))};
}

/* One message of len bytes handled in ns. */
static void profile_count(daemon_profile *p, const unsigned char *msg, size_t len, uint64_t ns) {
  unsigned t = len >= sizeof(proto_header) ? ((const proto_header *)(const void *)msg)->type : 0;
  if (t == 0 || t >= MSG_TYPE_END) t = MSG_TYPE_END;
  p->n[t]++;
  p->ns[t] += ns;
  if (ns > p->most_ns[t]) p->most_ns[t] = ns;
}

static void profile_report(const daemon_profile *p, int rank) {
  if (!p->on) return;
  char line[2048];
  char sleeps[160];
  idle_counts_text(sleeps, sizeof sleeps);
  int at = snprintf(line, sizeof line, "antheapd[%d] profile (seconds): waited %.4f; %s;", rank,
                    (double)p->waited_ns * 1e-9, sleeps);
  for (unsigned t = 1; t <= MSG_TYPE_END && at < (int)sizeof line; t++)
    if (p->n[t])
      at += snprintf(line + at, sizeof line - (size_t)at, " %s %llu in %.4f (longest %.6f);",
                     t < MSG_TYPE_END ? proto_type_name(t) : "malformed",
                     (unsigned long long)p->n[t], (double)p->ns[t] * 1e-9,
                     (double)p->most_ns[t] * 1e-9);
  fprintf(stderr, "%s\n", line);
}

typedef struct outgoing {
  struct outgoing *next;
  MPI_Request req;
  int to;
  unsigned char data[];
} outgoing;

typedef struct mpi_tx {
  MPI_Comm comm;
  const bell_board *bells; /* rung after each send to a rank of this host */
  outgoing *pending;
  size_t npending;
} mpi_tx;

static void mpi_send(void *ctx, int from, int to, const void *msg, size_t len) {
  (void)from;
  mpi_tx *t = ctx;
  outgoing *o = malloc(sizeof *o + len);
  if (!o) {
    fprintf(stderr, "antheapd: out of memory sending %zu bytes to rank %d\n", len, to);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memcpy(o->data, msg, len);
  o->to = to;
  MPI_Isend(o->data, (int)len, MPI_BYTE, to, AH_TAG_PROTO, t->comm, &o->req);
  bells_ring(t->bells, to);
  int done = 0;
  MPI_Test(&o->req, &done, MPI_STATUS_IGNORE); /* on its way already: no second ring */
  if (done) o->to = -1;
  o->next = t->pending;
  t->pending = o;
  t->npending++;
}

/* Free the sends that completed; with wait, all of them. One that was still on its way after
 * the ring of mpi_send (a full queue, a long message) is rung again as it completes: its
 * receiver may have looked in between and gone back to sleep. */
static void progress_sends(mpi_tx *t, bool wait) {
  for (outgoing **p = &t->pending; *p;) {
    int done = 0;
    if (wait) MPI_Wait(&(*p)->req, MPI_STATUS_IGNORE), done = 1;
    else MPI_Test(&(*p)->req, &done, MPI_STATUS_IGNORE);
    if (done) {
      outgoing *o = *p;
      if (o->to >= 0) bells_ring(t->bells, o->to);
      *p = o->next;
      free(o);
      t->npending--;
    } else {
      p = &(*p)->next;
    }
  }
}

/* The most words of one pack reply: one message's worth (0), except in the test build of the
 * library that tests/mpi/test_big_pack links (AH_TEST_REPLY_WORDS: src/worker/CMakeLists.txt),
 * which sees packs continue over many replies without millions of ranges. */
#ifndef AH_TEST_REPLY_WORDS
#define AH_TEST_REPLY_WORDS 0
#endif

int job_run_scheduler(ah_job *j) {
  mpi_tx tx = {.comm = j->proto, .bells = &j->bells};
  sched_config cfg = sched_config_default();
  cfg.gas_base = j->cfg.gas_base;
  cfg.gas_size = j->cfg.gas_size;
  cfg.boot_pages = j->cfg.boot_pages;
  cfg.refill_pages = j->cfg.refill_pages;
  cfg.boot_ids = j->cfg.boot_ids;
  cfg.refill_ids = j->cfg.refill_ids;
  cfg.ceiling_pages = j->cfg.ceiling_pages;
  cfg.high_watermark = j->cfg.high_watermark;
  cfg.low_watermark = j->cfg.low_watermark;
  /* the shutdown report (--antheap-stats, ANTHEAP_STATS: launch.c), at the root */
  plan_stats st = j->plan.stats;
  cfg.report = st == PLAN_STATS_OFF ? SCHED_REPORT_OFF
             : st == PLAN_STATS_TABLE ? SCHED_REPORT_TABLE : SCHED_REPORT_SUMMARY;
  cfg.stats_csv = st == PLAN_STATS_FILE ? j->plan.stats_path : NULL;
  cfg.peak_rss_kib = procstat_peak_rss_kib;
  cfg.reply_words = AH_TEST_REPLY_WORDS;
  sched_server *s;
  if (sched_server_create(&s, &j->tree, j->rank, &cfg, (sched_transport){mpi_send, &tx})) {
    fprintf(stderr, "antheapd[%d]: cannot create the scheduler (out of memory)\n", j->rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  sched_server_boot(s);
  size_t cap = 1 << 16;
  unsigned char *buf = malloc(cap);
  idle_wait idle;
  idle_start(&idle, j->idle_cap_ns);
  daemon_profile prof;
  profile_start(&prof);
  uint64_t wait0 = prof.on ? ah_now_ns() : 0;
  while (!sched_server_done(s)) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, AH_TAG_PROTO, j->proto, &flag, &st);
    if (!flag) {
      progress_sends(&tx, false);
      if (tx.npending) idle.since_ns = 0; /* sends to progress: the shortest sleeps only */
      idle_pause(&idle);
      continue;
    }
    idle_start(&idle, j->idle_cap_ns);
    uint64_t t0 = prof.on ? ah_now_ns() : 0;
    if (prof.on) prof.waited_ns += t0 - wait0;
    int count;
    MPI_Get_count(&st, MPI_BYTE, &count);
    if ((size_t)count > cap) {
      unsigned char *bigger = realloc(buf, (size_t)count);
      if (!bigger) {
        fprintf(stderr, "antheapd[%d]: no memory for a %d-byte message\n", j->rank, count);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      buf = bigger;
      cap = (size_t)count;
    }
    MPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, AH_TAG_PROTO, j->proto, MPI_STATUS_IGNORE);
    sched_server_handle(s, st.MPI_SOURCE, buf, (size_t)count);
    progress_sends(&tx, false);
    if (prof.on) profile_count(&prof, buf, (size_t)count, (wait0 = ah_now_ns()) - t0);
  }
  progress_sends(&tx, true);
  profile_report(&prof, j->rank);
  int rc = j->rank == j->tree.root && sched_server_conservation(s) != 0 ? 1 : 0;
  sched_server_destroy(s);
  free(buf);
  return rc;
}

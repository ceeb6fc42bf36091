/* test_plan.c: the launch plan (src/job/plan.h) on synthetic jobs: roles, the scheduler
 * tree, leaves serving workers on their own host and NUMA node, warnings and input errors. */
#include <check.h>

#include "check_main.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/plan.h"

#define MAXR 256

/* ---- building inputs ---- */

typedef struct job {
  plan_rank_info r[MAXR];
  plan_input in;
} job;

/* n ranks on one host and one NUMA node, none bound, SPMD with s schedulers, fan-out f. */
static void job_spmd(job *j, int n, int s, int f) {
  memset(j, 0, sizeof *j);
  for (int i = 0; i < n; i++) j->r[i] = (plan_rank_info){.host = 0, .numa = 0, .core = -1};
  j->in = (plan_input){.nranks = n, .ranks = j->r, .schedulers = s, .fanout = f};
}

/* MPMD: ranks [d0, d0+nd) are antheapd. */
static void job_mpmd(job *j, int n, int d0, int nd, int f) {
  job_spmd(j, n, 0, f);
  j->in.mpmd = true;
  for (int i = d0; i < d0 + nd; i++) j->r[i].is_daemon = true;
}

static void hosts_blocked(job *j, int per_host) {
  for (int i = 0; i < j->in.nranks; i++) j->r[i].host = i / per_host;
}
static void hosts_interleaved(job *j, int nhosts) {
  for (int i = 0; i < j->in.nranks; i++) j->r[i].host = i % nhosts;
}

static launch_plan build_ok(const job *j) {
  launch_plan p;
  char err[256] = "";
  plan_status st = plan_build(&j->in, &p, err, sizeof err);
  if (st != PLAN_OK) ck_abort_msg("plan_build failed: %s (%s)", plan_status_text(st), err);
  return p;
}

/* ---- the invariants every plan keeps ---- */

static void check_tree(const launch_plan *p) {
  int S = p->nschedulers, F = p->fanout, maxlevel = 0;
  for (int i = 0; i < S; i++) {
    int r = p->sched_ranks[i];
    const plan_rank *s = &p->ranks[r];
    REQUIRE_EQ(s->role, PLAN_SCHEDULER);
    REQUIRE_EQ(s->sched_index, i);
    REQUIRE_EQ(s->parent, i == 0 ? -1 : p->sched_ranks[(i - 1) / F]);
    REQUIRE_EQ(s->level, i == 0 ? 0 : p->ranks[s->parent].level + 1);
    int kids_desc = 0;
    for (int c = 0; c < s->nchildren; c++) {
      REQUIRE_EQ(p->ranks[s->children[c]].parent, r);
      REQUIRE_EQ(p->ranks[s->children[c]].sched_index, F * i + 1 + c);
      kids_desc += p->ranks[s->children[c]].descendants + 1;
    }
    REQUIRE(s->nchildren <= F);
    REQUIRE_EQ(s->descendants, kids_desc);
    REQUIRE_EQ(s->is_leaf, s->nchildren == 0);
    if (s->level > maxlevel) maxlevel = s->level;
  }
  REQUIRE_EQ(p->nlevels, maxlevel + 1);
  REQUIRE_EQ(p->ranks[p->sched_ranks[0]].descendants, S - 1);
}

static void check_workers(const launch_plan *p) {
  int next = 0, prev_index = -1;
  for (int k = 0; k < p->nleaves; k++) {
    const plan_rank *l = &p->ranks[p->leaves[k]];
    REQUIRE(l->is_leaf);
    REQUIRE(l->sched_index > prev_index);
    prev_index = l->sched_index;
    REQUIRE_EQ(l->worker_first, next); /* blocks follow each other: a partition of 0..W-1 */
    for (int i = l->worker_first; i < l->worker_first + l->worker_count; i++)
      REQUIRE_EQ(p->ranks[p->worker_ranks[i]].leaf, p->leaves[k]);
    next += l->worker_count;
  }
  REQUIRE_EQ(next, p->nworkers);
  for (int i = 0; i < p->nworkers; i++) {
    const plan_rank *w = &p->ranks[p->worker_ranks[i]];
    REQUIRE_EQ(w->role, PLAN_WORKER);
    REQUIRE_EQ(w->worker_index, i);
    REQUIRE(i == 0 || p->worker_ranks[i - 1] < p->worker_ranks[i] ||
            p->ranks[p->worker_ranks[i - 1]].leaf != w->leaf); /* rank order within a leaf */
  }
}

static void check_plan(const launch_plan *p) {
  int s = 0, w = 0, leaves = 0;
  for (int r = 0; r < p->nranks; r++) {
    s += p->ranks[r].role == PLAN_SCHEDULER;
    w += p->ranks[r].role == PLAN_WORKER;
    leaves += p->ranks[r].role == PLAN_SCHEDULER && p->ranks[r].is_leaf;
  }
  REQUIRE_EQ(s, p->nschedulers);
  REQUIRE_EQ(w, p->nworkers);
  REQUIRE_EQ(leaves, p->nleaves);
  check_tree(p);
  check_workers(p);
}

/* Every worker whose host has a leaf is served by a leaf of its host. */
static void check_host_local(const launch_plan *p) {
  for (int r = 0; r < p->nranks; r++) {
    const plan_rank *w = &p->ranks[r];
    if (w->role != PLAN_WORKER) continue;
    bool host_has_leaf = false;
    for (int k = 0; k < p->nleaves; k++) host_has_leaf |= p->ranks[p->leaves[k]].host == w->host;
    if (host_has_leaf) REQUIRE_EQ(p->ranks[w->leaf].host, w->host);
  }
}

static bool warned(const launch_plan *p, const char *text) {
  return p->warnings && strstr(p->warnings, text);
}

/* ---- the shapes ---- */

START_TEST(test_one_scheduler_serves_one_worker) {
  job j;
  job_spmd(&j, 2, 1, 8);
  launch_plan p = build_ok(&j);
  check_plan(&p);
  ck_assert_int_eq(p.nlevels, 1);
  ck_assert_int_eq(p.ranks[0].role, PLAN_SCHEDULER);
  ck_assert(p.ranks[0].is_leaf);
  ck_assert_int_eq(p.ranks[0].parent, -1);
  ck_assert_int_eq(p.ranks[1].role, PLAN_WORKER);
  ck_assert_int_eq(p.ranks[1].leaf, 0);
  ck_assert_int_eq(p.ranks[1].worker_index, 0);
  ck_assert_ptr_null(p.warnings);
  plan_free(&p);
}
END_TEST

START_TEST(test_one_scheduler_serves_three_workers_in_rank_order) {
  job j;
  job_spmd(&j, 4, 1, 8);
  launch_plan p = build_ok(&j);
  check_plan(&p);
  ck_assert_int_eq(p.ranks[0].worker_first, 0);
  ck_assert_int_eq(p.ranks[0].worker_count, 3);
  for (int r = 1; r < 4; r++) ck_assert_int_eq(p.ranks[r].worker_index, r - 1);
  ck_assert_int_eq(sched_descendants(&p, 0), 0);
  plan_free(&p);
}
END_TEST

START_TEST(test_three_schedulers_are_a_root_and_two_leaves_of_two_workers) {
  job j;
  job_spmd(&j, 7, 3, 8);
  launch_plan p = build_ok(&j);
  check_plan(&p);
  ck_assert_int_eq(p.nlevels, 2);
  ck_assert_int_eq(p.nleaves, 2);
  ck_assert_int_eq(p.ranks[0].nchildren, 2);
  ck_assert_int_eq(p.ranks[0].children[0], 1);
  ck_assert_int_eq(p.ranks[0].children[1], 2);
  ck_assert_int_eq(sched_descendants(&p, 0), 2);
  int expect_leaf[7] = {-1, -1, -1, 1, 1, 2, 2};
  for (int r = 3; r < 7; r++) ck_assert_int_eq(p.ranks[r].leaf, expect_leaf[r]);
  ck_assert_ptr_null(p.warnings);
  plan_free(&p);
}
END_TEST

START_TEST(test_seven_schedulers_with_fanout_two_make_three_levels) {
  job j;
  job_spmd(&j, 15, 7, 2);
  launch_plan p = build_ok(&j);
  check_plan(&p);
  ck_assert_int_eq(p.nlevels, 3);
  ck_assert_int_eq(p.nleaves, 4);
  for (int r = 0; r < 7; r++) ck_assert_int_eq(p.ranks[r].sched_index, r);
  ck_assert_int_eq(p.ranks[1].parent, 0);
  ck_assert_int_eq(p.ranks[6].parent, 2);
  ck_assert_int_eq(p.ranks[6].level, 2);
  for (int k = 0; k < 4; k++) {
    ck_assert_int_eq(p.leaves[k], 3 + k);
    ck_assert_int_eq(p.ranks[3 + k].worker_count, 2);
  }
  ck_assert_int_eq(sched_descendants(&p, 0), 6);
  ck_assert_int_eq(sched_descendants(&p, 1), 2);
  ck_assert_int_eq(sched_descendants(&p, 5), 0);
  ck_assert_int_eq(sched_descendants(&p, 7), -1); /* a worker */
  ck_assert_int_eq(sched_descendants(&p, 99), -1);
  ck_assert_ptr_null(p.warnings);
  plan_free(&p);
}
END_TEST

START_TEST(test_fanout_one_makes_a_chain) {
  job j;
  job_spmd(&j, 6, 4, 1);
  launch_plan p = build_ok(&j);
  check_plan(&p);
  ck_assert_int_eq(p.nlevels, 4);
  ck_assert_int_eq(p.nleaves, 1);
  ck_assert_int_eq(p.ranks[3].worker_count, 2);
  plan_free(&p);
}
END_TEST

/* ---- locality ---- */

START_TEST(test_blocked_hosts_each_leaf_serves_only_its_host) {
  job j;
  job_spmd(&j, 16, 3, 2);
  hosts_blocked(&j, 8);
  launch_plan p = build_ok(&j);
  check_plan(&p);
  check_host_local(&p);
  /* the lowest ranks of each host are its schedulers: 0,1 on host 0, 8 on host 1 */
  ck_assert_int_eq(p.ranks[0].role, PLAN_SCHEDULER);
  ck_assert_int_eq(p.ranks[1].role, PLAN_SCHEDULER);
  ck_assert_int_eq(p.ranks[8].role, PLAN_SCHEDULER);
  ck_assert_int_eq(p.ranks[0].parent, -1);
  ck_assert(p.ranks[1].is_leaf && p.ranks[8].is_leaf);
  for (int r = 2; r < 8; r++) ck_assert_int_eq(p.ranks[r].leaf, 1);
  for (int r = 9; r < 16; r++) ck_assert_int_eq(p.ranks[r].leaf, 8);
  /* blocked layout: worker indices are rank order */
  for (int i = 1; i < p.nworkers; i++) ck_assert_int_lt(p.worker_ranks[i - 1], p.worker_ranks[i]);
  ck_assert_ptr_null(p.warnings);
  plan_free(&p);
}
END_TEST

START_TEST(test_interleaved_hosts_each_leaf_serves_only_its_host) {
  job j;
  job_spmd(&j, 16, 7, 2);
  hosts_interleaved(&j, 2);
  launch_plan p = build_ok(&j);
  check_plan(&p);
  check_host_local(&p);
  int leaves_per_host[2] = {0, 0};
  for (int k = 0; k < p.nleaves; k++) leaves_per_host[p.ranks[p.leaves[k]].host]++;
  ck_assert_int_eq(leaves_per_host[0], 2);
  ck_assert_int_eq(leaves_per_host[1], 2);
  ck_assert_ptr_null(p.warnings);
  plan_free(&p);
}
END_TEST

START_TEST(test_hosts_get_schedulers_in_proportion_to_their_ranks) {
  job j;
  job_spmd(&j, 16, 4, 3); /* root + 3 leaves; host 0 has 12 ranks, host 1 has 4 */
  for (int r = 0; r < 16; r++) j.r[r].host = r < 12 ? 0 : 1;
  launch_plan p = build_ok(&j);
  check_plan(&p);
  check_host_local(&p);
  int sched[2] = {0, 0}, leaves[2] = {0, 0};
  for (int r = 0; r < 16; r++) sched[p.ranks[r].host] += p.ranks[r].role == PLAN_SCHEDULER;
  for (int k = 0; k < p.nleaves; k++) leaves[p.ranks[p.leaves[k]].host]++;
  ck_assert_int_eq(sched[0], 3);
  ck_assert_int_eq(sched[1], 1);
  ck_assert_int_eq(leaves[0], 2);
  ck_assert_int_eq(leaves[1], 1);
  ck_assert_int_eq(p.ranks[12].role, PLAN_SCHEDULER); /* lowest rank of host 1 */
  plan_free(&p);
}
END_TEST

START_TEST(test_each_numa_node_gets_a_leaf_serving_its_workers) {
  job j;
  job_spmd(&j, 16, 3, 2);
  for (int r = 0; r < 16; r++) j.r[r].numa = r / 8;
  launch_plan p = build_ok(&j);
  check_plan(&p);
  for (int r = 0; r < 16; r++)
    if (p.ranks[r].role == PLAN_WORKER) ck_assert_int_eq(p.ranks[p.ranks[r].leaf].numa, r / 8);
  ck_assert_int_eq(p.ranks[8].role, PLAN_SCHEDULER); /* lowest rank of NUMA node 1 */
  ck_assert_ptr_null(p.warnings);
  plan_free(&p);
}
END_TEST

START_TEST(test_numa_node_without_leaf_is_served_on_its_host_with_a_note) {
  job j;
  job_spmd(&j, 8, 1, 2);
  for (int r = 0; r < 8; r++) j.r[r].numa = r / 4;
  launch_plan p = build_ok(&j);
  check_plan(&p);
  for (int r = 1; r < 8; r++) ck_assert_int_eq(p.ranks[r].leaf, 0);
  ck_assert(warned(&p, "NUMA node 1"));
  plan_free(&p);
}
END_TEST

START_TEST(test_fewer_schedulers_than_hosts_serves_remote_workers_with_a_note) {
  job j;
  job_spmd(&j, 9, 1, 2);
  hosts_blocked(&j, 3);
  launch_plan p = build_ok(&j);
  check_plan(&p);
  ck_assert(warned(&p, "no leaf scheduler on their host"));
  plan_free(&p);
}
END_TEST

START_TEST(test_more_leaves_than_workers_notes_idle_leaves) {
  job j;
  job_spmd(&j, 8, 7, 2); /* 4 leaves, 1 worker */
  launch_plan p = build_ok(&j);
  check_plan(&p);
  ck_assert_int_eq(p.nworkers, 1);
  ck_assert(warned(&p, "3 leaf schedulers serve no workers"));
  plan_free(&p);
}
END_TEST

/* ---- MPMD ---- */

START_TEST(test_mpmd_schedulers_are_the_antheapd_ranks) {
  job j;
  job_mpmd(&j, 8, 5, 2, 8); /* antheapd at ranks 5 and 6 */
  launch_plan p = build_ok(&j);
  check_plan(&p);
  ck_assert_int_eq(p.nschedulers, 2);
  ck_assert_int_eq(p.ranks[5].parent, -1);
  ck_assert(p.ranks[6].is_leaf);
  ck_assert_int_eq(p.ranks[6].worker_count, 6);
  ck_assert_int_eq(p.ranks[7].worker_index, 5);
  plan_free(&p);
}
END_TEST

START_TEST(test_mpmd_leaves_follow_the_hosts_of_the_workers) {
  job j;
  job_mpmd(&j, 8, 0, 2, 2);
  j.r[4].is_daemon = true; /* antheapd: 0, 1 on host 0 and 4 on host 1 */
  hosts_blocked(&j, 4);
  launch_plan p = build_ok(&j);
  check_plan(&p);
  check_host_local(&p);
  ck_assert_int_eq(p.ranks[0].parent, -1);
  ck_assert(p.ranks[1].is_leaf && p.ranks[4].is_leaf);
  ck_assert_ptr_null(p.warnings);
  plan_free(&p);
}
END_TEST

START_TEST(test_mpmd_schedulers_on_one_host_serve_the_other_with_a_note) {
  job j;
  job_mpmd(&j, 8, 0, 3, 2);
  hosts_blocked(&j, 4);
  launch_plan p = build_ok(&j);
  check_plan(&p);
  ck_assert_int_eq(p.ranks[p.ranks[3].leaf].host, 0);
  for (int r = 4; r < 8; r++) ck_assert_int_ge(p.ranks[r].leaf, 1);
  ck_assert(warned(&p, "4 workers on host host1 have no leaf scheduler on their host"));
  plan_free(&p);
}
END_TEST

START_TEST(test_mpmd_ignores_a_different_scheduler_count_with_a_note) {
  job j;
  job_mpmd(&j, 4, 0, 1, 8);
  j.in.schedulers = 3;
  launch_plan p = build_ok(&j);
  check_plan(&p);
  ck_assert_int_eq(p.nschedulers, 1);
  ck_assert(warned(&p, "scheduler count 3 ignored"));
  plan_free(&p);
}
END_TEST

/* ---- many shapes ---- */

static void check_balanced_single_host(const launch_plan *p) {
  int lo = p->nworkers, hi = 0;
  for (int k = 0; k < p->nleaves; k++) {
    int c = p->ranks[p->leaves[k]].worker_count;
    lo = c < lo ? c : lo;
    hi = c > hi ? c : hi;
  }
  REQUIRE(hi - lo <= 1);
}

START_TEST(test_every_shape_up_to_40_ranks_is_well_formed) {
  for (int n = 2; n <= 40; n++)
    for (int s = 1; s < n; s++)
      for (int f = 1; f <= 4; f++)
        for (int layout = 0; layout < 4; layout++) {
          job j;
          job_spmd(&j, n, s, f);
          if (layout == 1) hosts_blocked(&j, (n + 2) / 3);
          if (layout == 2) hosts_interleaved(&j, 3);
          if (layout == 3)
            for (int r = 0; r < n; r++) j.r[r].numa = (r * 2) / n;
          launch_plan p;
          REQUIRE_EQ(plan_build(&j.in, &p, NULL, 0), PLAN_OK);
          check_plan(&p);
          check_host_local(&p);
          if (layout == 0) check_balanced_single_host(&p);
          if (layout <= 1 && !p.warnings) /* blocked layouts: worker indices in rank order */
            for (int i = 1; i < p.nworkers; i++) REQUIRE(p.worker_ranks[i - 1] < p.worker_ranks[i]);
          plan_free(&p);
        }
}
END_TEST

START_TEST(test_every_mpmd_split_up_to_24_ranks_is_well_formed) {
  for (int n = 2; n <= 24; n++)
    for (int d = 1; d < n; d++)
      for (int layout = 0; layout < 2; layout++) {
        job j;
        job_mpmd(&j, n, 0, d, 3);
        if (layout) hosts_interleaved(&j, 2);
        launch_plan p;
        REQUIRE_EQ(plan_build(&j.in, &p, NULL, 0), PLAN_OK);
        check_plan(&p);
        check_host_local(&p);
        plan_free(&p);
      }
}
END_TEST

START_TEST(test_enough_schedulers_give_every_host_a_leaf) {
  for (int hosts = 1; hosts <= 4; hosts++)
    for (int per = 2; per <= 6; per++)
      for (int s = hosts; s <= hosts * (per - 1); s++) {
        job j;
        job_spmd(&j, hosts * per, s, 1 + s % 3);
        hosts_interleaved(&j, hosts);
        launch_plan p;
        REQUIRE_EQ(plan_build(&j.in, &p, NULL, 0), PLAN_OK);
        if (p.nleaves >= hosts) {
          REQUIRE(p.warnings == NULL || !strstr(p.warnings, "no leaf scheduler"));
          check_host_local(&p);
        }
        plan_free(&p);
      }
}
END_TEST

/* ---- bad input ---- */

/* plan_build must refuse j with status want and a message containing text. */
static void expect_error(const job *j, plan_status want, const char *text) {
  launch_plan p;
  char err[256] = "";
  plan_status st = plan_build(&j->in, &p, err, sizeof err);
  ck_assert_int_eq(st, want);
  ck_assert_msg(strstr(err, text), "message '%s' lacks '%s'", err, text);
  ck_assert_ptr_null(p.ranks);
  ck_assert_ptr_null(p.warnings);
  ck_assert_str_ne(plan_status_text(st), "unknown plan error");
  plan_free(&p); /* harmless on a refused plan */
}

START_TEST(test_zero_schedulers_is_an_error) {
  job j;
  job_spmd(&j, 4, 0, 8);
  expect_error(&j, PLAN_ERR_SCHEDULERS, "at least 1");
}
END_TEST

START_TEST(test_more_schedulers_than_ranks_is_an_error) {
  job j;
  job_spmd(&j, 4, 5, 8);
  expect_error(&j, PLAN_ERR_TOO_MANY_SCHEDULERS, "only 4 ranks");
}
END_TEST

START_TEST(test_as_many_schedulers_as_ranks_leaves_no_worker) {
  job j;
  job_spmd(&j, 4, 4, 8);
  expect_error(&j, PLAN_ERR_NO_WORKERS, "no worker");
  job_spmd(&j, 1, 1, 8);
  expect_error(&j, PLAN_ERR_NO_WORKERS, "at least 2 ranks");
}
END_TEST

START_TEST(test_fanout_zero_is_an_error) {
  job j;
  job_spmd(&j, 4, 1, 0);
  expect_error(&j, PLAN_ERR_FANOUT, "fan-out 0");
}
END_TEST

START_TEST(test_mpmd_without_antheapd_is_an_error) {
  job j;
  job_mpmd(&j, 4, 0, 0, 8);
  expect_error(&j, PLAN_ERR_MPMD_NO_DAEMON, "no antheapd");
}
END_TEST

START_TEST(test_mpmd_without_application_is_an_error) {
  job j;
  job_mpmd(&j, 3, 0, 3, 8);
  expect_error(&j, PLAN_ERR_MPMD_NO_APP, "no application");
}
END_TEST

START_TEST(test_bad_rank_descriptions_are_errors) {
  job j;
  job_spmd(&j, 0, 1, 8);
  expect_error(&j, PLAN_ERR_INPUT, "no ranks");
  job_spmd(&j, 4, 1, 8);
  j.in.ranks = NULL;
  expect_error(&j, PLAN_ERR_INPUT, "no ranks");
  job_spmd(&j, 4, 1, 8);
  j.r[2].host = -1;
  expect_error(&j, PLAN_ERR_INPUT, "rank 2 has host id -1");
  job_spmd(&j, 4, 1, 8);
  j.r[3].numa = -2;
  expect_error(&j, PLAN_ERR_INPUT, "rank 3 has NUMA node -2");
  const char *names[] = {"a"};
  job_spmd(&j, 4, 1, 8);
  j.in.host_names = names;
  j.in.nhosts = 1;
  j.r[1].host = 1;
  expect_error(&j, PLAN_ERR_INPUT, "rank 1 has host id 1");
}
END_TEST

/* ---- printing ---- */

START_TEST(test_print_shows_roles_hosts_tree_and_blocks) {
  job j;
  job_spmd(&j, 15, 7, 2);
  const char *names[] = {"node-a"};
  j.in.host_names = names;
  j.in.nhosts = 1;
  j.r[0].core = 0;
  launch_plan p = build_ok(&j);
  plan_warn(&p, "a note for %s", "the reader");
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  plan_print(f, &p);
  fclose(f);
  ck_assert_ptr_nonnull(strstr(text, "15 ranks = 7 schedulers (3 levels, fan-out 2, 4 leaves) + "
                                     "8 workers"));
  ck_assert_ptr_nonnull(strstr(text, "node-a"));
  ck_assert_ptr_nonnull(strstr(text, "root"));
  ck_assert_ptr_nonnull(strstr(text, "1,2"));
  ck_assert_ptr_nonnull(strstr(text, "workers 0-1 (2)"));
  ck_assert_ptr_nonnull(strstr(text, "note: a note for the reader\n"));
  int lines = 0;
  for (char *c = text; *c; c++) lines += *c == '\n';
  ck_assert_int_eq(lines, 2 + 15 + 1);
  free(text);
  plan_free(&p);
}
END_TEST

START_TEST(test_print_cuts_long_child_lists) {
  job j;
  job_spmd(&j, 200, 100, 99);
  launch_plan p = build_ok(&j);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  plan_print(f, &p);
  fclose(f);
  ck_assert_ptr_nonnull(strstr(text, "more"));
  ck_assert_ptr_nonnull(strstr(text, "host0"));
  free(text);
  plan_free(&p);
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("plan");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_one_scheduler_serves_one_worker);
  tcase_add_test(tc, test_one_scheduler_serves_three_workers_in_rank_order);
  tcase_add_test(tc, test_three_schedulers_are_a_root_and_two_leaves_of_two_workers);
  tcase_add_test(tc, test_seven_schedulers_with_fanout_two_make_three_levels);
  tcase_add_test(tc, test_fanout_one_makes_a_chain);
  tcase_add_test(tc, test_blocked_hosts_each_leaf_serves_only_its_host);
  tcase_add_test(tc, test_interleaved_hosts_each_leaf_serves_only_its_host);
  tcase_add_test(tc, test_hosts_get_schedulers_in_proportion_to_their_ranks);
  tcase_add_test(tc, test_each_numa_node_gets_a_leaf_serving_its_workers);
  tcase_add_test(tc, test_numa_node_without_leaf_is_served_on_its_host_with_a_note);
  tcase_add_test(tc, test_fewer_schedulers_than_hosts_serves_remote_workers_with_a_note);
  tcase_add_test(tc, test_more_leaves_than_workers_notes_idle_leaves);
  tcase_add_test(tc, test_mpmd_schedulers_are_the_antheapd_ranks);
  tcase_add_test(tc, test_mpmd_leaves_follow_the_hosts_of_the_workers);
  tcase_add_test(tc, test_mpmd_schedulers_on_one_host_serve_the_other_with_a_note);
  tcase_add_test(tc, test_mpmd_ignores_a_different_scheduler_count_with_a_note);
  tcase_add_test(tc, test_every_shape_up_to_40_ranks_is_well_formed);
  tcase_add_test(tc, test_every_mpmd_split_up_to_24_ranks_is_well_formed);
  tcase_add_test(tc, test_enough_schedulers_give_every_host_a_leaf);
  tcase_add_test(tc, test_zero_schedulers_is_an_error);
  tcase_add_test(tc, test_more_schedulers_than_ranks_is_an_error);
  tcase_add_test(tc, test_as_many_schedulers_as_ranks_leaves_no_worker);
  tcase_add_test(tc, test_fanout_zero_is_an_error);
  tcase_add_test(tc, test_mpmd_without_antheapd_is_an_error);
  tcase_add_test(tc, test_mpmd_without_application_is_an_error);
  tcase_add_test(tc, test_bad_rank_descriptions_are_errors);
  tcase_add_test(tc, test_print_shows_roles_hosts_tree_and_blocks);
  tcase_add_test(tc, test_print_cuts_long_child_lists);
  suite_add_tcase(s, tc);
  return s;
}

/* bh_steal.c: the walk's tail shared with the next worker (bh_steal.h).
 *
 * Worker j owns the tail b[tail, n), cut into chunks of BH_STEAL_CHUNK bodies, and worker j + 1
 * (the taker) may walk it. The protocol, over the workers' duplicated communicator:
 *   - before the walk, j sends the tail's positions and IDs to j + 1 (TAG_BODIES, every
 *     worker at once: bh_steal_begin);
 *   - j walks its front, then its tail's chunks from the first: before each, it reads the
 *     claims j + 1 sent (TAG_CLAIM) and stops at the first claimed chunk; else it says it
 *     starts the chunk (TAG_PROGRESS) and walks it; it ends with the chunk count (the last
 *     word);
 *   - j + 1, after its own walk, takes chunks from the last: before each, it reads j's progress
 *     and stops at a chunk j has started; else it claims the chunk, walks it and sends the
 *     results (TAG_RESULT); then it sends the end of its claims;
 *   - j waits for that end and for one result a claim, and keeps the results of the chunks it
 *     did not walk itself (a chunk both claimed and started is walked twice: the same bits);
 *     j + 1 reads j's progress up to the last word, so no message is left unread.
 * Claims come down from the last chunk and progress goes up from the first, so every chunk is
 * walked by one of the two or both. Nothing waits on the other side's walk but the ends, which
 * the barrier after the walk would wait for anyway. Main entries: bh_steal_walk,
 * bh_steal_finish. */
#include "bh_steal.h"

#include <stdlib.h>
#include <string.h>

#include "bh_par.h"

enum { TAG_BODIES = 71, TAG_CLAIM, TAG_RESULT, TAG_PROGRESS };
#define END_OF_CLAIMS (-1)

typedef struct {
  double pos[3];
  int64_t id;
} steal_body;

/* A chunk's results follow a head whose work is the chunk's index and cost its body count. */
typedef struct {
  double acc[3], pot;
  int64_t work, cost;
} steal_result;

double bh_steal_share(void) {
  const char *e = getenv("BARNES_STEAL");
  if (!e || !*e) return 0;
  char *end;
  double v = strtod(e, &end);
  /* a share the cut can tell from none: at least one BH_SHARE_ONE-th */
  return *end || end == e || !(v == 0 || (v * BH_SHARE_ONE >= 1 && v <= 0.5)) ? -1 : v;
}

int bh_steal_test(void) {
  const char *e = getenv("BARNES_TAIL_TEST");
  return !e || !*e              ? BH_TAIL_SHARED
         : !strcmp(e, "late")  ? BH_TAIL_LATE
         : !strcmp(e, "twice") ? BH_TAIL_TWICE
         : !strcmp(e, "keep")  ? BH_TAIL_KEEP
         : !strcmp(e, "half")  ? BH_TAIL_HALF
                               : -1;
}

static int chunks_of(size_t m) { return (int)((m + BH_STEAL_CHUNK - 1) / BH_STEAL_CHUNK); }
static size_t chunk_end(int c, size_t m) {
  size_t e = (size_t)(c + 1) * BH_STEAL_CHUNK;
  return e < m ? e : m;
}
static bool has_taker(const bh_steal *s) { return s->me + 1 < s->P; }

/* ---- the owner's side ---- */

/* The tail's positions and IDs (m of them), to send. */
static steal_body *owner_start(bh_steal *s, size_t m) {
  s->chunks = chunks_of(m), s->claimed_from = s->chunks, s->claims = 0, s->end_seen = false;
  s->nrq = 0;
  s->walked = calloc((size_t)s->chunks + 1, 1);
  s->progress = malloc(((size_t)s->chunks + 1) * sizeof *s->progress);
  s->rq = malloc(((size_t)s->chunks + 1) * sizeof *s->rq);
  steal_body *out = malloc((m ? m : 1) * sizeof *out);
  if (!s->walked || !s->progress || !s->rq || !out) return free(out), NULL;
  for (size_t i = 0; i < m; i++) {
    memcpy(out[i].pos, s->b[s->tail + i].pos, sizeof out[i].pos);
    out[i].id = s->b[s->tail + i].id;
  }
  return out;
}

/* Reads the taker's claims: those already here, or (wait) up to the end of its claims. */
static void owner_read_claims(bh_steal *s, bool wait) {
  while (!s->end_seen) {
    int here = 1, d;
    if (!wait) MPI_Iprobe(s->me + 1, TAG_CLAIM, s->comm, &here, MPI_STATUS_IGNORE);
    if (!here) return;
    MPI_Recv(&d, 1, MPI_INT, s->me + 1, TAG_CLAIM, s->comm, MPI_STATUS_IGNORE);
    if (d == END_OF_CLAIMS) {
      s->end_seen = true;
    } else {
      s->claims++;
      if (d < s->claimed_from) s->claimed_from = d;
    }
  }
}

static void say_progress(bh_steal *s, int c) {
  s->progress[c] = c;
  MPI_Isend(&s->progress[c], 1, MPI_INT, s->me + 1, TAG_PROGRESS, s->comm, &s->rq[s->nrq++]);
}

static void owner_walk_tail(bh_steal *s, bh_walk_fn walk, void *ctx, int64_t *work,
                            int64_t *missing) {
  size_t m = s->n - s->tail;
  if (s->test == BH_TAIL_LATE) owner_read_claims(s, true);
  for (int c = 0; c < s->chunks; c++) {
    if (s->test == BH_TAIL_HALF && c == s->chunks / 2) owner_read_claims(s, true);
    owner_read_claims(s, false);
    if (c >= s->claimed_from && s->test != BH_TAIL_TWICE) break;
    say_progress(s, c);
    walk(ctx, s->b, s->tail + (size_t)c * BH_STEAL_CHUNK, s->tail + chunk_end(c, m), work, missing);
    s->walked[c] = 1;
  }
  say_progress(s, s->chunks); /* the last word */
}

/* One result message of the taker: kept where this worker did not walk the chunk. */
static int owner_take_result(bh_steal *s, steal_result *r, int64_t *work) {
  MPI_Status st;
  int bytes;
  MPI_Recv(r, (BH_STEAL_CHUNK + 1) * (int)sizeof *r, MPI_BYTE, s->me + 1, TAG_RESULT, s->comm, &st);
  MPI_Get_count(&st, MPI_BYTE, &bytes);
  int c = (int)r[0].work;
  size_t cnt = (size_t)r[0].cost, at = s->tail + (size_t)c * BH_STEAL_CHUNK;
  if (c < 0 || c >= s->chunks || cnt != chunk_end(c, s->n - s->tail) - (size_t)c * BH_STEAL_CHUNK ||
      (size_t)bytes != (cnt + 1) * sizeof *r)
    return -1;
  if (s->walked[c]) {
    s->twice++;
    return 0;
  }
  for (size_t k = 0; k < cnt; k++) {
    bh_body *x = &s->b[at + k];
    memcpy(x->acc, r[1 + k].acc, sizeof x->acc);
    x->pot = r[1 + k].pot, x->work = r[1 + k].work, x->cost = r[1 + k].cost;
    *work += x->work;
  }
  s->walked[c] = 1;
  s->given++;
  return 0;
}

static int owner_finish(bh_steal *s, int64_t *work) {
  owner_read_claims(s, true);
  steal_result *r = malloc((BH_STEAL_CHUNK + 1) * sizeof *r);
  int rc = r ? 0 : -1;
  for (int i = 0; i < s->claims && !rc; i++) rc = owner_take_result(s, r, work);
  for (int c = 0; c < s->chunks && !rc; c++)
    if (!s->walked[c]) rc = -1; /* walked by nobody: the protocol is broken */
  MPI_Waitall(s->nrq, s->rq, MPI_STATUSES_IGNORE);
  free(r), free(s->walked), free(s->progress), free(s->rq);
  s->walked = NULL, s->progress = NULL, s->rq = NULL;
  return rc;
}

/* ---- the taker's side ---- */

/* Room for the previous worker's tail of m bodies and for what goes back. */
static int taker_start(bh_steal *s, size_t m) {
  s->in_n = m, s->in_chunks = chunks_of(m), s->in_nrq = 0, s->in_at = -1;
  s->in = malloc((m ? m : 1) * sizeof(steal_body));
  s->claim = malloc(((size_t)s->in_chunks + 1) * sizeof *s->claim);
  s->results = malloc(((size_t)s->in_chunks * (BH_STEAL_CHUNK + 1) + 1) * sizeof(steal_result));
  s->in_rq = malloc((2 * (size_t)s->in_chunks + 1) * sizeof *s->in_rq);
  return s->in && s->claim && s->results && s->in_rq ? 0 : -1;
}

/* Reads the owner's progress: what is here, or (wait) up to its last word, the chunk count.
 * in_at: the highest chunk it has said it started. */
static void read_progress(bh_steal *s, bool wait) {
  while (s->in_at < s->in_chunks) {
    int here = 1, c;
    if (!wait) MPI_Iprobe(s->me - 1, TAG_PROGRESS, s->comm, &here, MPI_STATUS_IGNORE);
    if (!here) return;
    MPI_Recv(&c, 1, MPI_INT, s->me - 1, TAG_PROGRESS, s->comm, MPI_STATUS_IGNORE);
    if (c > s->in_at) s->in_at = c;
  }
}

static int taker_walk(bh_steal *s, bh_walk_fn walk, void *ctx, int64_t *missing) {
  const steal_body *in = s->in;
  bh_body *tmp = calloc(BH_STEAL_CHUNK, sizeof *tmp);
  if (!tmp) return -1;
  for (int d = s->in_chunks - 1; d >= 0 && s->test != BH_TAIL_KEEP; d--) {
    read_progress(s, false);
    if (s->in_at >= d && s->test != BH_TAIL_TWICE) break;
    if (s->test == BH_TAIL_HALF && d < s->in_chunks / 2) break;
    s->claim[d] = d;
    MPI_Isend(&s->claim[d], 1, MPI_INT, s->me - 1, TAG_CLAIM, s->comm, &s->in_rq[s->in_nrq++]);
    size_t lo = (size_t)d * BH_STEAL_CHUNK, cnt = chunk_end(d, s->in_n) - lo;
    for (size_t k = 0; k < cnt; k++) {
      memset(&tmp[k], 0, sizeof tmp[k]);
      memcpy(tmp[k].pos, in[lo + k].pos, sizeof tmp[k].pos);
      tmp[k].id = in[lo + k].id;
    }
    int64_t not_mine = 0; /* the interactions count where the body lives */
    walk(ctx, tmp, 0, cnt, &not_mine, missing);
    steal_result *r = (steal_result *)s->results + (size_t)d * (BH_STEAL_CHUNK + 1);
    r[0] = (steal_result){.work = d, .cost = (int64_t)cnt};
    for (size_t k = 0; k < cnt; k++) {
      memcpy(r[1 + k].acc, tmp[k].acc, sizeof r[1 + k].acc);
      r[1 + k].pot = tmp[k].pot, r[1 + k].work = tmp[k].work, r[1 + k].cost = tmp[k].cost;
    }
    MPI_Isend(r, (int)((cnt + 1) * sizeof *r), MPI_BYTE, s->me - 1, TAG_RESULT, s->comm,
              &s->in_rq[s->in_nrq++]);
    s->taken++;
  }
  s->claim[s->in_chunks] = END_OF_CLAIMS;
  MPI_Isend(&s->claim[s->in_chunks], 1, MPI_INT, s->me - 1, TAG_CLAIM, s->comm,
            &s->in_rq[s->in_nrq++]);
  free(tmp);
  return 0;
}

static void taker_finish(bh_steal *s) {
  read_progress(s, true);
  MPI_Waitall(s->in_nrq, s->in_rq, MPI_STATUSES_IGNORE);
  free(s->in), free(s->claim), free(s->results), free(s->in_rq);
  s->in = NULL, s->claim = NULL, s->results = NULL, s->in_rq = NULL;
}

/* ---- the step ---- */

int bh_steal_begin(bh_steal *s, bh_body *b, size_t n, size_t tail) {
  s->b = b, s->n = n, s->tail = has_taker(s) ? tail : n;
  int next = has_taker(s) ? s->me + 1 : MPI_PROC_NULL, prev = s->me > 0 ? s->me - 1 : MPI_PROC_NULL;
  long m = (long)(n - s->tail), m_in = 0;
  steal_body *out = has_taker(s) ? owner_start(s, (size_t)m) : NULL;
  int bad = has_taker(s) && !out;
  /* neighbours only, every worker at once: a line of exchanges, done in one round */
  MPI_Sendrecv(&m, 1, MPI_LONG, next, TAG_BODIES, &m_in, 1, MPI_LONG, prev, TAG_BODIES, s->comm,
               MPI_STATUS_IGNORE);
  if (s->me > 0 && taker_start(s, (size_t)m_in)) bad = 1;
  if (!bad) /* (a worker that ran out of memory stops the job: no one waits for it here) */
    MPI_Sendrecv(out, (int)((size_t)m * sizeof *out), MPI_BYTE, next, TAG_BODIES, s->in,
                 (int)((size_t)m_in * sizeof(steal_body)), MPI_BYTE, prev, TAG_BODIES, s->comm,
                 MPI_STATUS_IGNORE);
  free(out);
  return bad ? -1 : 0;
}

int bh_steal_walk(bh_steal *s, bh_walk_fn walk, void *ctx, int64_t *work, int64_t *missing) {
  bh_body *b = s->b;
  double t0 = MPI_Wtime();
  walk(ctx, b, 0, s->tail, work, missing);
  if (has_taker(s)) owner_walk_tail(s, walk, ctx, work, missing);
  s->own_s = MPI_Wtime() - t0;
  return s->me > 0 ? taker_walk(s, walk, ctx, missing) : 0;
}

int bh_steal_finish(bh_steal *s, int64_t *work) {
  int rc = has_taker(s) ? owner_finish(s, work) : 0;
  if (s->me > 0) taker_finish(s);
  return rc;
}

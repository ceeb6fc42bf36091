/* test_plan.c: the decomposition of the parallel program (plan.c): any power of two workers,
 * blocks that hold the same number of points on uniform and clustered input, cells that tile
 * the blocks, cells' inside rectangles (the mesh's fast path) that name their cell, the windows
 * of each configuration, a zone point's disk inside
 * its window (what lets the border points be inserted), and moves that change exactly
 * the holders that differ, in rounds where nobody takes part twice. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "plan.h"

static uint64_t rng = 88172645463325252ull;
static double unit(void) { /* xorshift64 */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (double)(rng >> 11) * 0x1p-53;
}

/* n points, uniform in [0,1)^2 or in 16 Gaussian blobs of sigma 0.02 */
static double *points(size_t n, int clustered) {
  double *xy = malloc(2 * n * sizeof *xy), c[32];
  for (int k = 0; k < 32; k++) c[k] = unit();
  for (size_t i = 0; i < n; i++) {
    if (!clustered) {
      xy[2 * i] = unit(), xy[2 * i + 1] = unit();
      continue;
    }
    int b = (int)(unit() * 16);
    double r = 0.02 * sqrt(-2 * log(1 - unit())), a = 2 * M_PI * unit();
    xy[2 * i] = c[2 * b] + r * cos(a), xy[2 * i + 1] = c[2 * b + 1] + r * sin(a);
  }
  return xy;
}

static void box_of(const double *xy, size_t n, double box[4]) {
  box[0] = box[2] = INFINITY, box[1] = box[3] = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    box[0] = fmin(box[0], xy[2 * i]), box[1] = fmax(box[1], xy[2 * i]);
    box[2] = fmin(box[2], xy[2 * i + 1]), box[3] = fmax(box[3], xy[2 * i + 1]);
  }
}

/* the geometry of W workers from a sample of the first ns of n points */
static double *make(dt_plan *p, int W, size_t n, size_t ns, int clustered) {
  double *xy = points(n, clustered), box[4];
  box_of(xy, n, box);
  ck_assert_int_eq(dt_plan_init(p, W), 0);
  double *s = malloc(2 * ns * sizeof *s);
  memcpy(s, xy, 2 * ns * sizeof *s);
  ck_assert_int_eq(dt_plan_geometry(p, box, s, ns, n, 2.0), 0);
  free(s);
  return xy;
}

/* Every worker holds a cell in the first or the second configuration of horizontal borders,
 * so it has received cells from the scatter (which follows worker 0's sample phase) or from
 * the first one's holders before the second begins: where the presort's helper may start
 * (delaunay.c) without slowing worker 0's sample phase. */
START_TEST(test_every_worker_holds_a_cell_in_hz0_or_hz1) {
  dt_plan p;
  for (int W = 2; W <= PLAN_MAX_WORKERS; W *= 2) {
    ck_assert_int_eq(dt_plan_init(&p, W), 0);
    int *h0 = malloc((size_t)p.ncells * sizeof *h0), *h1 = malloc((size_t)p.ncells * sizeof *h1);
    char *holds = calloc((size_t)W, 1);
    ck_assert_ptr_nonnull(h0);
    ck_assert_ptr_nonnull(h1);
    ck_assert_ptr_nonnull(holds);
    dt_plan_owners(&p, CONF_HZ0, h0);
    dt_plan_owners(&p, CONF_HZ1, h1);
    for (int c = 0; c < p.ncells; c++) {
      REQUIRE(h0[c] >= 0 && h0[c] < W && h1[c] >= 0 && h1[c] < W);
      holds[h0[c]] = holds[h1[c]] = 1;
    }
    for (int w = 0; w < W; w++) REQUIRE(holds[w]);
    free(h0), free(h1), free(holds);
  }
}
END_TEST

START_TEST(test_any_power_of_two_workers) {
  dt_plan p;
  for (int W = 1; W <= PLAN_MAX_WORKERS; W *= 2) {
    ck_assert_int_eq(dt_plan_init(&p, W), 0);
    REQUIRE_EQ(p.BX * p.BY, W);
    REQUIRE(p.BX <= p.BY && p.BY <= 2 * p.BX);
    REQUIRE_EQ(p.ncells, 9 * W);
  }
  int bad[] = {0, 3, 6, 12, 24, 48, 100, 2 * PLAN_MAX_WORKERS};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) ck_assert_int_eq(dt_plan_init(&p, bad[i]), -1);
}
END_TEST

/* every block within 12% of n / W points, with the geometry of a 4096-per-block sample */
START_TEST(test_blocks_hold_the_same_number_of_points) {
  int Ws[] = {2, 8, 16, 32};
  for (int clustered = 0; clustered < 2; clustered++)
    for (size_t k = 0; k < 4; k++) {
      dt_plan p;
      int W = Ws[k];
      size_t n = 400000, ns = 4096 * (size_t)W < n ? 4096 * (size_t)W : n;
      double *xy = make(&p, W, n, ns, clustered);
      size_t *cnt = calloc((size_t)W, sizeof *cnt);
      for (size_t i = 0; i < n; i++) cnt[dt_plan_block_of(&p, xy[2 * i], xy[2 * i + 1])]++;
      for (int b = 0; b < W; b++)
        if (fabs((double)cnt[b] * W / (double)n - 1) > 0.12)
          ck_abort_msg("%s, %d workers: block %d holds %zu points of %zu",
                       clustered ? "clustered" : "uniform", W, b, cnt[b], n);
      free(cnt), free(xy), dt_plan_free(&p);
    }
}
END_TEST

/* a point's cell contains it, and lies in its block */
START_TEST(test_cells_tile_the_blocks) {
  dt_plan p;
  double *xy = make(&p, 32, 100000, 32768, 1);
  for (size_t i = 0; i < 100000; i++) {
    double x = xy[2 * i], y = xy[2 * i + 1], r[4];
    int c = dt_plan_cell_of(&p, x, y);
    REQUIRE_EQ(c / 9, dt_plan_block_of(&p, x, y));
    dt_plan_cell_rect(&p, c, r);
    REQUIRE(x >= r[0] && y >= r[2]);
    REQUIRE((x < r[1] || r[1] == p.box[1]) && (y < r[3] || r[3] == p.box[3]));
  }
  free(xy), dt_plan_free(&p);
}
END_TEST

/* every point of a cell's inside rectangle is the cell's, and the rectangles cover the points
 * inside the box (the mesh's fast path finds their cells there) */
START_TEST(test_cell_inside_rects) {
  for (int i = 0; i < 14; i++) {
    int W = 1 << (i / 2), clustered = i % 2;
    dt_plan p;
    double *xy = make(&p, W, 20000, 8192, clustered);
    size_t covered = 0;
    for (size_t i = 0; i < 20000; i++) {
      double x = xy[2 * i], y = xy[2 * i + 1], r[4];
      int c = dt_plan_cell_of(&p, x, y);
      dt_plan_cell_inside(&p, c, r);
      covered += x >= r[0] && x < r[1] && y >= r[2] && y < r[3];
    }
    REQUIRE(covered >= 20000 - 4); /* all but the points on the box's right and top edges */
    for (int c = 0; c < p.ncells; c++) {
      double r[4];
      dt_plan_cell_inside(&p, c, r);
      if (!(r[0] < r[1] && r[2] < r[3])) continue;
      for (int k = 0; k < 25; k++) { /* the lower corner, edges and inside: a 5 x 5 lattice */
        double fx = (k % 5) / 5.0, fy = (k / 5) / 5.0;
        double x = r[0] + fx * (r[1] - r[0]), y = r[2] + fy * (r[3] - r[2]);
        if (x >= r[1] || y >= r[3]) continue; /* rounding past the upper edge */
        REQUIRE_EQ(dt_plan_cell_of(&p, x, y), c);
      }
      double xl = nextafter(r[1], -INFINITY), yl = nextafter(r[3], -INFINITY);
      REQUIRE_EQ(dt_plan_cell_of(&p, xl, yl), c); /* the last point inside */
    }
    free(xy), dt_plan_free(&p);
  }
}
END_TEST

static int *owners(const dt_plan *p, int conf) {
  int *o = malloc((size_t)p->ncells * sizeof *o);
  dt_plan_owners(p, conf, o);
  return o;
}

/* A line split by pairs of rows (j0, j0 + 1) of column l: window VZ0 + 2 (l % 2) + j0 % 2 holds
 * both blocks but their left-hand strips, at (l, j0)'s worker; a right-hand column's cell of
 * such a configuration is its block's or a pair window's of that parity in the column left of
 * it, and a block's interior (the middle of its row) goes with the pair that holds its row
 * where the rows are near (uniform points). A whole line: both columns at the left column's
 * top block in both configurations of its parity. */
static void check_line_windows(const dt_plan *p, int *const *o, int uniform) {
  for (int l = 0; l + 1 < p->BX; l++) {
    REQUIRE(!uniform || !p->whole[l]);
    for (int k = CONF_VZ0 + 2 * (l % 2); p->whole[l] && k < CONF_VZ0 + 2 * (l % 2) + 2; k++)
      for (int c = 9 * l * p->BY; c < 9 * (l + 2) * p->BY; c++) REQUIRE_EQ(o[k][c], l * p->BY + p->BY - 1);
    if (p->whole[l]) continue;
    for (int j0 = 0; j0 + 1 < p->BY; j0++) {
      int k = CONF_VZ0 + 2 * (l % 2) + j0 % 2, w = l * p->BY + j0;
      for (int b = w; b <= w + 1; b++)
        for (int c = 0; c < 9; c++) REQUIRE_EQ(o[k][9 * b + c], c % 3 == 0 ? b : w);
      for (int j = j0; j <= j0 + 1 && uniform; j++) /* the right column's interiors */
        REQUIRE_EQ(o[k][9 * ((l + 1) * p->BY + j) + 4], w);
    }
    for (int k = CONF_VZ0 + 2 * (l % 2); k < CONF_VZ0 + 2 * (l % 2) + 2; k++)
      for (int cell = 9 * (l + 1) * p->BY; cell < 9 * (l + 2) * p->BY; cell++) {
        int h = o[k][cell];
        if (h == cell / 9) continue; /* the right column: its block's, or a pair's of parity k */
        REQUIRE(cell % 3 <= 1 && h / p->BY == l && h % p->BY % 2 == (k - CONF_VZ0) % 2 &&
                h % p->BY + 1 < p->BY);
      }
  }
}

/* BLOCK: each its nine; HZ: both blocks of a border, in one of the two; VZ: check_line_windows
 * (uniform points: every line split by pairs of rows; clustered ones: some lines whole) */
START_TEST(test_configurations_hold_the_windows) {
  for (int clustered = 0; clustered < 2; clustered++) {
    dt_plan p;
    double *xy = make(&p, 32, 20000, 20000, clustered);
    int *o[NCONF], whole = 0;
    for (int c = 0; c < NCONF; c++) o[c] = owners(&p, c);
    for (int c = 0; c < p.ncells; c++) {
      REQUIRE_EQ(o[CONF_BLOCK][c], c / 9);
      REQUIRE_EQ(o[CONF_ZERO][c], 0);
    }
    for (int i = 0; i < p.BX; i++)
      for (int j = 0; j + 1 < p.BY; j++) {
        int lo = i * p.BY + j, k = CONF_HZ0 + j % 2;
        for (int c = 0; c < 9; c++) {
          REQUIRE_EQ(o[k][9 * lo + c], lo);
          REQUIRE_EQ(o[k][9 * (lo + 1) + c], lo);
          REQUIRE(o[CONF_HZ0 + CONF_HZ1 - k][9 * lo + c] != o[CONF_HZ0 + CONF_HZ1 - k][9 * (lo + 1) + c]);
        }
      }
    check_line_windows(&p, o, !clustered);
    for (int l = 0; l + 1 < p.BX; l++) whole += p.whole[l];
    REQUIRE(clustered ? whole > 0 : whole == 0); /* both kinds of line checked */
    for (int c = 0; c < NCONF; c++) free(o[c]);
    free(xy), dt_plan_free(&p);
  }
}
END_TEST

static int disk_meets(const double r[4], double x, double y, double rad) {
  double dx = x < r[0] ? r[0] - x : x > r[1] ? x - r[1] : 0;
  double dy = y < r[2] ? r[2] - y : y > r[3] ? y - r[3] : 0;
  return dx * dx + dy * dy < rad * rad;
}

/* is every cell that meets the disk held by one worker in configuration own? */
static int one_holder(const dt_plan *p, const int *own, double x, double y, double rad) {
  int w = -1;
  for (int c = 0; c < p->ncells; c++) {
    double r[4];
    dt_plan_cell_rect(p, c, r);
    if (!disk_meets(r, x, y, rad)) continue;
    if (w >= 0 && own[c] != w) return 0;
    w = own[c];
  }
  return 1;
}

/* A disk of a tenth of the smallest block's side (a few of the sample's spacings) around a point
 * of a border zone (on a side,
 * at the T-junctions of the rows with the vertical lines) is one worker's in the configuration
 * of the point's zone or in one after it (the zone phases go HZ0, HZ1, VZ0 .. VZ3, then BLOCK's
 * main phase): a point that must wait in its cell's header is inserted there. */
START_TEST(test_a_zone_points_disk_is_its_windows) {
  int Ws[] = {2, 8, 16, 32};
  for (int clustered = 0; clustered < 2; clustered++)
    for (int k = 0; k < 4; k++) {
      dt_plan p;
      double *xy = make(&p, Ws[k], 50000, 50000, clustered), rad = INFINITY;
      for (int b = 0; b < p.W; b++) {
        double r[4];
        dt_plan_block_rect(&p, b, r);
        rad = fmin(rad, fmin(r[1] - r[0], r[3] - r[2]));
      }
      rad *= 0.1;
      int *o[NCONF], tried = 0;
      for (int c = 0; c < NCONF; c++) o[c] = owners(&p, c);
      for (int t = 0; t < 8000; t++) { /* within the zone of a side, anywhere along it */
        int b = (int)(unit() * p.W), vertical = t % 2;
        double r[4], u = unit();
        dt_plan_block_rect(&p, b, r);
        double side = vertical ? r[unit() < 0.5] : r[2 + (unit() < 0.5)];
        double off = (2 * unit() - 1) * p.zone[b];
        double x = vertical ? side + off : r[0] + u * (r[1] - r[0]);
        double y = vertical ? r[2] + u * (r[3] - r[2]) : side + off;
        int z = dt_plan_zone(&p, x, y);
        if (z == CONF_BLOCK) continue; /* the box's own edges */
        tried++;
        int ok = one_holder(&p, o[CONF_BLOCK], x, y, rad);
        for (int c = z; c <= CONF_VZ3 && !ok; c++) ok = one_holder(&p, o[c], x, y, rad);
        if (!ok)
          ck_abort_msg("%s, %d workers: the disk (%g, %g) r %g is nobody's from configuration %d on",
                       clustered ? "clustered" : "uniform", p.W, x, y, rad, z);
      }
      REQUIRE(tried > 1000);
      for (int c = 0; c < NCONF; c++) free(o[c]);
      free(xy), dt_plan_free(&p);
    }
}
END_TEST

static void check_moves(const dt_plan *p, const int *a, const int *b) {
  dt_move *mv;
  int *buf, *own = malloc((size_t)p->ncells * sizeof *own);
  int nm = dt_plan_moves(p, a, b, &mv, &buf);
  REQUIRE(nm >= 0);
  memcpy(own, a, (size_t)p->ncells * sizeof *own);
  for (int i = 0; i < nm; i++) {
    REQUIRE(mv[i].from != mv[i].to && mv[i].count > 0);
    REQUIRE(i == 0 || mv[i].round >= mv[i - 1].round);
    for (int j = 0; j < i; j++) /* a matching per round, one move per pair */
      if (mv[j].round == mv[i].round)
        REQUIRE(mv[j].from != mv[i].from && mv[j].to != mv[i].to && mv[j].from != mv[i].to &&
                mv[j].to != mv[i].from);
    for (int j = 0; j < mv[i].count; j++) {
      REQUIRE_EQ(own[mv[i].cells[j]], mv[i].from);
      own[mv[i].cells[j]] = mv[i].to;
    }
  }
  for (int c = 0; c < p->ncells; c++) REQUIRE_EQ(own[c], b[c]);
  free(mv), free(buf), free(own);
}

START_TEST(test_moves_change_exactly_what_differs_in_rounds) {
  int Ws[] = {1, 2, 8, 32, 64};
  for (int k = 0; k < 5; k++) {
    dt_plan p;
    double *xy = make(&p, Ws[k], 20000, 20000, 0);
    int *o[NCONF];
    for (int c = 0; c < NCONF; c++) o[c] = owners(&p, c);
    for (int x = 0; x < NCONF; x++)
      for (int y = 0; y < NCONF; y++) check_moves(&p, o[x], o[y]);
    /* the scatter from worker 0: every step a matching of sends to w + 2^(m-r-1) */
    int *s0 = malloc((size_t)p.ncells * sizeof *s0), *s1 = malloc((size_t)p.ncells * sizeof *s1);
    dt_plan_scatter_step(&p, o[CONF_HZ0], 0, s0);
    for (int c = 0; c < p.ncells; c++) REQUIRE_EQ(s0[c], 0);
    for (int r = 0; r < p.m; r++) {
      dt_plan_scatter_step(&p, o[CONF_HZ0], r + 1, s1);
      for (int c = 0; c < p.ncells; c++)
        REQUIRE(s1[c] == s0[c] || s1[c] == s0[c] + (1 << (p.m - r - 1)));
      check_moves(&p, s0, s1);
      memcpy(s0, s1, (size_t)p.ncells * sizeof *s0);
    }
    for (int c = 0; c < p.ncells; c++) REQUIRE_EQ(s0[c], o[CONF_HZ0][c]);
    for (int c = 0; c < NCONF; c++) free(o[c]);
    free(s0), free(s1), free(xy), dt_plan_free(&p);
  }
}
END_TEST

/* The configuration of a line's zone point at height y, and in *holder the block whose worker
 * holds its window: by the line's parity and the pair of rows of the left column l whose inner
 * border (1 .. BY - 1) is nearest y; the first of the parity and the column's top block for a
 * whole line. */
static int line_conf(const dt_plan *p, int l, double y, int *holder) {
  const double *ys = &p->ys[l * (p->BY + 1)];
  int t = 1;
  for (int u = 2; u < p->BY; u++)
    if (fabs(y - ys[u]) < fabs(y - ys[t])) t = u;
  if (p->whole[l]) t = 1;
  *holder = l * p->BY + (p->whole[l] ? p->BY - 1 : t - 1);
  return CONF_VZ0 + 2 * (l % 2) + (t - 1) % 2;
}

/* zones: near the borders between blocks (a line's by its parity and the nearest pair of rows),
 * never along the box's edges; a line point's window is the one that holds its cell (uniform
 * points, and clustered ones with whole lines; 16, 32 and 64 workers) */
START_TEST(test_zones_lie_along_inner_borders) {
  for (int run = 0; run < 6; run++) {
    int clustered = run % 2, W = 16 << (run / 2); /* 16, 32, 64 workers */
    dt_plan p;
    double *xy = make(&p, W, 100000, 32768, clustered);
    size_t nz[NCONF] = {0};
    for (size_t i = 0; i < 100000; i++) {
      double x = xy[2 * i], y = xy[2 * i + 1], r[4];
      int z = dt_plan_zone(&p, x, y), b = dt_plan_block_of(&p, x, y), bi = b / p.BY, bj = b % p.BY;
      int cell = dt_plan_cell_of(&p, x, y), holder = -1;
      dt_plan_block_rect(&p, b, r);
      nz[z]++;
      int left = bi > 0 && x - r[0] < p.zone[b], right = bi < p.BX - 1 && r[1] - x < p.zone[b];
      int down = bj > 0 && y - r[2] < p.zone[b], up = bj < p.BY - 1 && r[3] - y < p.zone[b];
      if (left) REQUIRE_EQ(z, line_conf(&p, bi - 1, y, &holder));
      if (!left && right) REQUIRE_EQ(z, line_conf(&p, bi, y, &holder));
      if (!left && !right && down) REQUIRE_EQ(z, CONF_HZ0 + (bj - 1) % 2);
      if (!left && !right && !down && up) REQUIRE_EQ(z, CONF_HZ0 + bj % 2);
      if (!left && !right && !down && !up) REQUIRE_EQ(z, CONF_BLOCK);
      if (holder >= 0) REQUIRE_EQ(dt_plan_window(&p, z, cell), holder);
      if (z != CONF_BLOCK) REQUIRE(dt_plan_window(&p, z, cell) >= 0);
    }
    for (int c = CONF_HZ0; c <= CONF_VZ3 && !clustered; c++) REQUIRE(nz[c] > 0);
    if (!clustered && W == 32) REQUIRE(nz[CONF_BLOCK] > 80000 && nz[CONF_BLOCK] < 95000);
    free(xy), dt_plan_free(&p);
  }
}
END_TEST

/* dt_plan_place_rect: where it names a cell, every point of the rectangle (its corners, its
 * edges and inside) gets that cell outside every zone from dt_plan_place; it names one for most
 * small squares (not a test that always says -1), never for a square across a column's edge or
 * one inside a zone. Squares of a 64 x 64 grid and random small rectangles, uniform and
 * clustered points, 2 to 64 workers, zones of a few spacings and a tight cap on some blocks. */
static void rect_points_agree(const dt_plan *p, const double r[4], double zw, const double *cap,
                              int cell) {
  for (int k = 0; k < 40; k++) {
    double u = k < 4 ? k % 2 : unit(), v = k < 4 ? k / 2 : unit();
    if (k >= 4 && k < 12) u = k % 2; /* on the left and right edges */
    double x = r[0] + u * (r[1] - r[0]), y = r[2] + v * (r[3] - r[2]);
    x = fmin(fmax(x, r[0]), r[1]), y = fmin(fmax(y, r[2]), r[3]);
    int zone, c = dt_plan_place(p, x, y, zw, cap, &zone);
    REQUIRE_EQ(c, cell);
    REQUIRE_EQ(zone, CONF_BLOCK);
  }
}

START_TEST(test_place_rect_names_the_cell_of_every_point) {
  for (int run = 0; run < 12; run++) {
    int clustered = run % 2, W = 2 << (run / 2); /* 2 .. 64 workers */
    dt_plan p;
    double *xy = make(&p, W, 50000, 16384, clustered);
    double *cap = malloc((size_t)W * sizeof *cap), zw = 2 * dt_plan_spacing(&p, 0);
    for (int b = 0; b < W; b++) cap[b] = b % 3 ? 1e300 : zw / 4;
    int named = 0, tried = 0, H = 128;
    for (int i = 0; i < H; i++)
      for (int j = 0; j < H; j++, tried++) {
        double wx = p.box[1] - p.box[0], wy = p.box[3] - p.box[2];
        double r[4] = {p.box[0] + wx * i / H, p.box[0] + wx * (i + 1) / H, p.box[2] + wy * j / H,
                       p.box[2] + wy * (j + 1) / H};
        int c = dt_plan_place_rect(&p, r, zw, cap);
        if (c < 0) continue;
        named++;
        rect_points_agree(&p, r, zw, cap, c);
      }
    REQUIRE(named > tried / 3);
    for (int k = 0; k < 2000; k++) { /* small rectangles anywhere */
      double x = p.box[0] + unit() * (p.box[1] - p.box[0]);
      double y = p.box[2] + unit() * (p.box[3] - p.box[2]);
      double w = unit() * 0.02, h = unit() * 0.02, r[4] = {x, x + w, y, y + h};
      int c = dt_plan_place_rect(&p, r, zw, cap);
      if (c >= 0) rect_points_agree(&p, r, zw, cap, c);
    }
    if (p.BX > 1) { /* across the first column's right edge: two blocks */
      double r[4] = {p.xs[1] - 1e-9, p.xs[1] + 1e-9, p.box[2], p.box[2] + 1e-9};
      REQUIRE_EQ(dt_plan_place_rect(&p, r, zw, cap), -1);
    }
    { /* a point's own rectangle inside a zone */
      int found = 0;
      for (size_t i = 0; i < 50000 && !found; i++) {
        double x = xy[2 * i], y = xy[2 * i + 1], r[4] = {x, x, y, y};
        int zone, c = dt_plan_place(&p, x, y, zw, cap, &zone);
        found = zone != CONF_BLOCK;
        REQUIRE_EQ(dt_plan_place_rect(&p, r, zw, cap), found ? -1 : c);
      }
      REQUIRE(found);
    }
    free(cap), free(xy), dt_plan_free(&p);
  }
}
END_TEST

static Suite *make_suite(void) {
  Suite *s = suite_create("delaunay plan");
  TCase *tc = tcase_create("plan");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_any_power_of_two_workers);
  tcase_add_test(tc, test_every_worker_holds_a_cell_in_hz0_or_hz1);
  tcase_add_test(tc, test_blocks_hold_the_same_number_of_points);
  tcase_add_test(tc, test_cells_tile_the_blocks);
  tcase_add_test(tc, test_cell_inside_rects);
  tcase_add_test(tc, test_configurations_hold_the_windows);
  tcase_add_test(tc, test_a_zone_points_disk_is_its_windows);
  tcase_add_test(tc, test_moves_change_exactly_what_differs_in_rounds);
  tcase_add_test(tc, test_zones_lie_along_inner_borders);
  tcase_add_test(tc, test_place_rect_names_the_cell_of_every_point);
  suite_add_tcase(s, tc);
  return s;
}

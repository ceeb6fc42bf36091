/* points.c: the input of apps/delaunay: seeded generators (uniform, clustered, wide, grid), the point
 * file reader (text or binary, with errors that name the line), the writer and the box. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench.h"
#include "dt.h"

#define MAGIC "DTPOINTS"
/* Coordinates must keep the exact predicates free of overflow and underflow (pred.c). */
#define COORD_MAX 1e50
#define COORD_MIN 1e-50

static int alloc_input(dt_input *in, size_t n) {
  in->n = 0;
  in->xy = NULL;
  if (n > DT_MAX_POINTS) return -1;
  in->xy = malloc((n ? n : 1) * 2 * sizeof *in->xy);
  if (!in->xy) return -1;
  in->n = n;
  return 0;
}

static bench_rng rng_of(uint64_t seed) {
  bench_rng r = {seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull};
  if (!r.s) r.s = 1;
  for (int i = 0; i < 4; i++) bench_rand(&r);
  return r;
}

static double unit(bench_rng *r) { return (double)(bench_rand(r) >> 11) * 0x1p-53; }

int dt_gen_uniform(dt_input *in, size_t n, uint64_t seed) {
  if (alloc_input(in, n)) return -1;
  bench_rng r = rng_of(seed);
  for (size_t i = 0; i < 2 * n; i++) in->xy[i] = unit(&r);
  return 0;
}

int dt_gen_clustered(dt_input *in, size_t n, uint64_t seed, int k, double sigma) {
  if (k < 1 || alloc_input(in, n)) return -1;
  bench_rng r = rng_of(seed);
  double *centre = malloc((size_t)k * 2 * sizeof *centre);
  if (!centre) return -1;
  for (int i = 0; i < 2 * k; i++) centre[i] = unit(&r);
  for (size_t i = 0; i < n; i++) { /* Box-Muller */
    size_t b = (size_t)(bench_rand(&r) % (uint64_t)k);
    double u = 1 - unit(&r), v = unit(&r), rad = sigma * sqrt(-2 * log(u));
    in->xy[2 * i] = centre[2 * b] + rad * cos(2 * M_PI * v);
    in->xy[2 * i + 1] = centre[2 * b + 1] + rad * sin(2 * M_PI * v);
  }
  free(centre);
  return 0;
}

int dt_gen_wide(dt_input *in, size_t n, uint64_t seed) {
  if (alloc_input(in, n)) return -1;
  bench_rng r = rng_of(seed);
  for (size_t i = 0; i < 2 * n; i++) {
    double mag = pow(10.0, -12 + 24 * unit(&r));
    in->xy[i] = bench_rand(&r) & 1 ? -mag : mag;
  }
  return 0;
}

int dt_gen_graded(dt_input *in, size_t n, uint64_t seed) {
  if (alloc_input(in, n)) return -1;
  bench_rng r = rng_of(seed);
  for (size_t i = 0; i < n; i++) {
    double rad = pow(10.0, -6 + 6 * unit(&r)), a = 2 * M_PI * unit(&r);
    in->xy[2 * i] = rad * cos(a);
    in->xy[2 * i + 1] = rad * sin(a);
  }
  return 0;
}

int dt_gen_line(dt_input *in, size_t n, uint64_t seed) {
  if (alloc_input(in, n)) return -1;
  bench_rng r = rng_of(seed);
  for (size_t i = 0; i < n; i++) { /* Box-Muller's first half */
    double u = 1 - unit(&r), v = unit(&r);
    in->xy[2 * i] = unit(&r);
    in->xy[2 * i + 1] = 1e-6 * sqrt(-2 * log(u)) * cos(2 * M_PI * v);
  }
  return 0;
}

int dt_gen_grid(dt_input *in, size_t n) {
  if (alloc_input(in, n)) return -1;
  size_t side = (size_t)ceil(sqrt((double)n));
  while (side * side < n) side++;
  for (size_t i = 0; i < n; i++) {
    in->xy[2 * i] = (double)(i % side);
    in->xy[2 * i + 1] = (double)(i / side);
  }
  return 0;
}

void dt_input_free(dt_input *in) {
  free(in->xy);
  in->xy = NULL;
  in->n = 0;
}

void dt_box_pts(const dt_pt *p, size_t n, double box[4]) {
  box[0] = box[2] = INFINITY;
  box[1] = box[3] = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (p[i].x < box[0]) box[0] = p[i].x;
    if (p[i].x > box[1]) box[1] = p[i].x;
    if (p[i].y < box[2]) box[2] = p[i].y;
    if (p[i].y > box[3]) box[3] = p[i].y;
  }
}

void dt_box(const double *xy, size_t n, double box[4]) {
  box[0] = box[2] = INFINITY;
  box[1] = box[3] = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    double x = xy[2 * i], y = xy[2 * i + 1];
    if (x < box[0]) box[0] = x;
    if (x > box[1]) box[1] = x;
    if (y < box[2]) box[2] = y;
    if (y > box[3]) box[3] = y;
  }
}

static int coord_ok(double v) {
  double a = fabs(v);
  return a == 0 || (a >= COORD_MIN && a <= COORD_MAX);
}

/* ---- reading ---- */
static int push(dt_input *in, size_t *cap, double x, double y) {
  if (in->n == *cap) {
    size_t c = *cap ? *cap * 2 : 1024;
    double *p = realloc(in->xy, c * 2 * sizeof *p);
    if (!p) return -1;
    in->xy = p;
    *cap = c;
  }
  in->xy[2 * in->n] = x;
  in->xy[2 * in->n + 1] = y;
  in->n++;
  return 0;
}

/* A short, printable excerpt of a bad line. */
static const char *excerpt(const char *s, char *buf, size_t len) {
  size_t i = 0;
  for (; s[i] && s[i] != '\n' && i + 4 < len; i++)
    buf[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
  buf[i] = 0;
  if (s[i] && s[i] != '\n') snprintf(buf + i, len - i, "...");
  return buf;
}

static int read_text(dt_input *in, FILE *f, const char *path, char *err, size_t errlen) {
  char *line = NULL, ex[48];
  size_t linecap = 0, cap = 0;
  long lineno = 0;
  ssize_t got;
  int rc = 0;
  while ((got = getline(&line, &linecap, f)) >= 0) {
    lineno++;
    if (memchr(line, 0, (size_t)got)) {
      snprintf(err, errlen,
               "%s:%ld: a NUL byte: not a text point file (a binary one starts with "
               "\"" MAGIC "\")",
               path, lineno);
      rc = -1;
      break;
    }
    char *s = line;
    while (isspace((unsigned char)*s)) s++;
    if (!*s || *s == '#') continue;
    char *e1, *e2;
    errno = 0;
    double x = strtod(s, &e1);
    double y = e1 != s ? strtod(e1, &e2) : 0;
    if (e1 == s || e2 == e1) {
      snprintf(err, errlen, "%s:%ld: expected two numbers \"x y\", got \"%s\"", path, lineno,
               excerpt(s, ex, sizeof ex));
      rc = -1;
      break;
    }
    while (isspace((unsigned char)*e2)) e2++;
    if (*e2) {
      snprintf(err, errlen, "%s:%ld: unexpected \"%s\" after the two numbers", path, lineno,
               excerpt(e2, ex, sizeof ex));
      rc = -1;
      break;
    }
    if (!coord_ok(x) || !coord_ok(y)) {
      snprintf(err, errlen,
               "%s:%ld: coordinate out of range (each must be 0 or of magnitude in "
               "[1e-50, 1e50]; no inf or nan): \"%s\"",
               path, lineno, excerpt(s, ex, sizeof ex));
      rc = -1;
      break;
    }
    if (in->n >= DT_MAX_POINTS || push(in, &cap, x, y)) {
      snprintf(err, errlen, "%s:%ld: too many points (out of memory or over %d)", path, lineno,
               DT_MAX_POINTS);
      rc = -1;
      break;
    }
  }
  free(line);
  if (!rc && ferror(f)) {
    snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
    rc = -1;
  }
  return rc;
}

/* A regular file shorter than its header says: "truncated", before anything is allocated (a
 * 32-byte file announcing 2^31 points must not ask for 32 GiB first). Pipes are read as they
 * come (the loop below says where they end). */
static int short_file(FILE *f, uint64_t n, const char *path, char *err, size_t errlen) {
  struct stat st;
  long at = ftell(f);
  if (at < 0 || fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) return 0;
  uint64_t have = st.st_size > at ? (uint64_t)(st.st_size - at) : 0, need = 16 * n;
  if (have >= need) return 0;
  snprintf(err, errlen,
           "%s: truncated: the header announces %llu points (%llu bytes of coordinates), the "
           "file has %llu bytes after the header",
           path, (unsigned long long)n, (unsigned long long)need, (unsigned long long)have);
  return -1;
}

static int read_binary(dt_input *in, FILE *f, const char *path, char *err, size_t errlen) {
  unsigned char h[8];
  if (fread(h, 1, 8, f) != 8) {
    snprintf(err, errlen,
             "%s: truncated binary header (after \"" MAGIC
             "\" comes a 64-bit "
             "little-endian count)",
             path);
    return -1;
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; i--) n = n << 8 | h[i];
  if (n > DT_MAX_POINTS) {
    snprintf(err, errlen, "%s: the header announces %llu points (at most %d)", path,
             (unsigned long long)n, DT_MAX_POINTS);
    return -1;
  }
  if (short_file(f, n, path, err, errlen)) return -1;
  if (alloc_input(in, (size_t)n)) {
    snprintf(err, errlen, "%s: out of memory for %llu points", path, (unsigned long long)n);
    return -1;
  }
  for (uint64_t i = 0; i < 2 * n; i++) {
    unsigned char b[8];
    if (fread(b, 1, 8, f) != 8) {
      snprintf(err, errlen,
               "%s: truncated: the header announces %llu points, the file ends in "
               "point %llu",
               path, (unsigned long long)n, (unsigned long long)(i / 2));
      return -1;
    }
    uint64_t u = 0;
    for (int k = 7; k >= 0; k--) u = u << 8 | b[k];
    double v;
    memcpy(&v, &u, sizeof v);
    if (!coord_ok(v)) {
      snprintf(err, errlen,
               "%s: point %llu: coordinate %g out of range (each must be 0 or of "
               "magnitude in [1e-50, 1e50])",
               path, (unsigned long long)(i / 2), v);
      return -1;
    }
    in->xy[i] = v;
  }
  if (fgetc(f) != EOF) {
    snprintf(err, errlen, "%s: bytes after the %llu points the header announces", path,
             (unsigned long long)n);
    return -1;
  }
  return 0;
}

int dt_read_points(dt_input *in, const char *path, char *err, size_t errlen) {
  in->xy = NULL;
  in->n = 0;
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    return -1;
  }
  char magic[8];
  size_t got = fread(magic, 1, 8, f);
  int binary = got == 8 && !memcmp(magic, MAGIC, 8);
  if (!binary) rewind(f);
  int rc = binary ? read_binary(in, f, path, err, errlen) : read_text(in, f, path, err, errlen);
  fclose(f);
  if (!rc && in->n == 0) {
    snprintf(err, errlen, "%s: no points", path);
    rc = -1;
  }
  if (rc) dt_input_free(in);
  return rc;
}

int dt_write_points(const dt_input *in, const char *path, int binary) {
  FILE *f = fopen(path, binary ? "wb" : "w");
  if (!f) return -1;
  if (binary) {
    unsigned char h[8];
    uint64_t n = in->n;
    fwrite(MAGIC, 1, 8, f);
    for (int i = 0; i < 8; i++) h[i] = (unsigned char)(n >> (8 * i));
    fwrite(h, 1, 8, f);
    for (size_t i = 0; i < 2 * in->n; i++) {
      uint64_t u;
      memcpy(&u, &in->xy[i], sizeof u);
      for (int k = 0; k < 8; k++) h[k] = (unsigned char)(u >> (8 * k));
      fwrite(h, 1, 8, f);
    }
  } else {
    for (size_t i = 0; i < in->n; i++)
      fprintf(f, "%.17g %.17g\n", in->xy[2 * i], in->xy[2 * i + 1]);
  }
  return fclose(f) ? -1 : 0;
}

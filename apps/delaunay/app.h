/* app.h: what the Delaunay programs share around the triangulation (app.c): options and
 * --help, loading the points, the end-of-run check and outputs, and the timing report (a table
 * and a CSV row shaped like Barnes-Hut's). */
#ifndef DT_APP_H
#define DT_APP_H

#include <stdint.h>

#include "dt.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { DT_SERIAL, DT_PARALLEL, DT_CGAL } dt_prog;

typedef struct dt_opts {
  long points;
  uint64_t seed;
  const char *dist; /* uniform | clustered | grid | wide */
  int clusters;
  double sigma;
  const char *input;        /* a point file instead of a generator */
  const char *write_points; /* write the points used (text; binary when --binary) */
  int binary;
  const char *triangles; /* write the triangles "a b c" */
  const char *compare;   /* compare with a triangle file (qhull, CGAL, another run) */
  const char *csv, *tag;
  double baseline_s;
  int quiet, no_check;
  long sample; /* parallel: points per block worker 0 inserts before the split */
  double zone; /* parallel: half-width of the border zones, in mean point spacings */
  int phases;  /* parallel: print the table of phases */
} dt_opts;

/* Set: dt_opts_parse prints no errors (the parallel program's workers but 0). */
extern int dt_errors_quiet;

/* Parse argv; 0 = run, 1 = --help printed, -1 = error printed. */
int dt_opts_parse(int argc, char **argv, dt_prog prog, dt_opts *o);
/* Generate or read the points (not timed). 0, or -1 after a message. */
int dt_load(const dt_opts *o, dt_input *in, const char *prog);
/* The same, the message (without the program's name) left in err instead of printed. */
int dt_load_msg(const dt_opts *o, dt_input *in, char *err, size_t errlen);

/* Seconds of one worker (or of the serial run). */
typedef struct dt_times {
  double compute, wcomm, scomm, wait, total;
} dt_times;

/* After a run: validate the triangles (unless --no-check), write --triangles, compare with
 * --compare, print what was found. Returns 0 when everything passed. */
int dt_finish(const dt_opts *o, const char *prog, const dt_input *in, int32_t *tri, size_t ntri,
              const int32_t *dup, size_t ndup);
/* Print the timing table and append the row to --csv. */
int dt_report(const dt_opts *o, const char *mode, int workers, int schedulers, const dt_times *avg,
              const dt_times *max, size_t triangles, int64_t postponed, int64_t gathered);

#ifdef __cplusplus
}
#endif

#endif

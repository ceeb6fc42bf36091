/* delaunay_serial.c: the serial Bowyer-Watson triangulation on malloc, the baseline of
 * Figure 4d: load or generate the points, triangulate (timed: ordering and insertion), check,
 * write and report. Main entry: main(). */
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "dt.h"
#include "pred.h"

int main(int argc, char **argv) {
  const char *me = "delaunay-serial";
  dt_opts o;
  int rc = dt_opts_parse(argc, argv, DT_SERIAL, &o);
  if (rc) return rc > 0 ? 0 : 2;
  dt_input in;
  if (dt_load(&o, &in, me)) return 2;
  o.points = (long)in.n;
  dt_result r;
  if (dt_triangulate(in.xy, in.n, o.seed, &r)) {
    fprintf(stderr, "%s: error: out of memory triangulating %zu points\n", me, in.n);
    dt_input_free(&in);
    return 1;
  }
  if (!o.quiet)
    printf(
        "%s: %zu points (%s), %zu triangles in %.3f s; walk %.2f steps/point, cavity %.2f "
        "triangles/point; exact-arithmetic fall-backs: orient %lu, incircle %lu\n",
        me, in.n, o.input ? o.input : o.dist, r.ntri, r.seconds,
        r.st.inserted ? (double)r.st.walk_steps / (double)r.st.inserted : 0,
        r.st.inserted ? (double)r.st.cavity_tris / (double)r.st.inserted : 0, pred_slow_orient,
        pred_slow_incircle);
  int failed = dt_finish(&o, me, &in, r.tri, r.ntri, r.dup, r.ndup);
  dt_times t = {
      .compute = r.seconds - r.alloc_seconds, .scomm = r.alloc_seconds, .total = r.seconds};
  dt_report(&o, "serial", 1, 0, &t, &t, r.ntri, 0, 0);
  printf("%s: %d passed, %d failed\n", me, !failed, failed);
  dt_result_free(&r);
  dt_input_free(&in);
  return failed;
}

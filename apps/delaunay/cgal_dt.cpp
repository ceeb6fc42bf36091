// cgal_dt.cpp: CGAL's serial Delaunay_triangulation_2 on the same points as our programs (the
// anchor a user would pick instead), for the timing of Figure 4d and the comparison test. The
// points come from the same generators and reader (dt_core, C); the time covers building the
// point vector and insert(begin, end), which shuffles and spatially sorts (BRIO on a Hilbert
// order) before inserting, as our serial program does. Epick kernel: exact predicates, inexact
// constructions. Output: the finite faces as input-index triples, counter-clockwise.
#include <CGAL/Delaunay_triangulation_2.h>
#include <CGAL/Exact_predicates_inexact_constructions_kernel.h>
#include <CGAL/Triangulation_vertex_base_with_info_2.h>

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <vector>

#include "app.h"
extern "C" {
#include "bench.h" /* C, without its own extern "C" */
}
#include "dt.h"

typedef CGAL::Exact_predicates_inexact_constructions_kernel K;
typedef CGAL::Triangulation_vertex_base_with_info_2<int, K> Vb;
typedef CGAL::Triangulation_data_structure_2<Vb> Tds;
typedef CGAL::Delaunay_triangulation_2<K, Tds> DT;

int main(int argc, char **argv) {
  const char *me = "delaunay-cgal";
  dt_opts o;
  int rc = dt_opts_parse(argc, argv, DT_CGAL, &o);
  if (rc) return rc > 0 ? 0 : 2;
  dt_input in;
  if (dt_load(&o, &in, me)) return 2;
  o.points = (long)in.n;

  double t0 = bench_now_ns();
  std::vector<std::pair<K::Point_2, int>> pts;
  pts.reserve(in.n);
  for (size_t i = 0; i < in.n; i++)
    pts.emplace_back(K::Point_2(in.xy[2 * i], in.xy[2 * i + 1]), (int)i);
  DT dt;
  dt.insert(pts.begin(), pts.end());
  double seconds = (bench_now_ns() - t0) * 1e-9;

  std::vector<int32_t> tri;
  tri.reserve(3 * dt.number_of_faces());
  for (DT::Finite_faces_iterator f = dt.finite_faces_begin(); f != dt.finite_faces_end(); ++f)
    for (int k = 0; k < 3; k++) tri.push_back(f->vertex(k)->info());
  size_t ntri = tri.size() / 3;
  // Duplicates: CGAL keeps the first inserted of equal points; report the others like ours
  // (the lowest id kept), so that the check and the comparison see the same point set.
  std::vector<int32_t> pairs;
  std::vector<int> vid(in.n, -1); // id of the vertex each point became
  for (DT::Finite_vertices_iterator v = dt.finite_vertices_begin(); v != dt.finite_vertices_end();
       ++v)
    vid[v->info()] = v->info();
  int32_t *dup = NULL;
  size_t ndup = 0;
  if (dt.dimension() < 2) {
    dt_collinear_duplicates(in.xy, in.n, &dup, &ndup);
  } else {
    for (size_t i = 0; i < in.n; i++)
      if (vid[i] < 0) { // not a vertex: equal to the vertex at its location
        DT::Vertex_handle h = dt.nearest_vertex(K::Point_2(in.xy[2 * i], in.xy[2 * i + 1]));
        pairs.push_back((int32_t)i);
        pairs.push_back(h->info());
      }
    ndup = pairs.size() / 2;
    dt_settle_duplicates(tri.data(), ntri, pairs.data(), ndup, in.n, &dup);
  }
  if (!o.quiet)
    std::printf("%s: %zu points (%s), %zu triangles in %.3f s (CGAL %s)\n", me, in.n,
                o.input ? o.input : o.dist, ntri, seconds, CGAL_VERSION_STR);
  int failed = dt_finish(&o, me, &in, tri.data(), ntri, dup, ndup);
  dt_times t = {seconds, 0, 0, 0, seconds};
  dt_report(&o, "cgal", 1, 0, &t, &t, ntri, 0, 0);
  std::printf("%s: %d passed, %d failed\n", me, !failed, failed);
  std::free(dup);
  dt_input_free(&in);
  return failed;
}

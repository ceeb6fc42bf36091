// hello_cxx.cpp: antheap.h from C++ (extern "C"): a region holding a std::vector's worth of
// objects, built with mpicxx or any C++ compiler given pkg-config's flags.
//   mpirun -np 2 ./hello_cxx        1 scheduler + 1 worker
#include <antheap.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

struct point {
  double x, y;
};

int main(int argc, char **argv) {
  if (sys_init(&argc, &argv)) {
    std::fprintf(stderr, "hello_cxx: sys_init: %s\n", sys_strerror(errno));
    return 1;
  }
  bool ok = std::strcmp(sys_version(), ANTHEAP_VERSION_STRING) == 0; // header and library agree
  rid_t region = sys_ralloc(SYS_ROOT_REGION, SYS_NO_LEVEL_HINT);
  std::vector<point *> points;
  for (int i = 0; ok && region && i < 256; i++) {
    point *p = static_cast<point *>(sys_alloc(sizeof(point), region));
    if (!p) break;
    *p = point{double(i), double(-i)};
    points.push_back(p);
  }
  double sum = 0;
  for (const point *p : points) sum += p->x + p->y;
  ok = ok && points.size() == 256 && sum == 0 && sys_rfree(region) == 0;
  std::printf("worker %d: C++ and antheap %s (header %s): %s\n", sys_worker_id(), sys_version(),
              ANTHEAP_VERSION_STRING, ok ? "ok" : "FAILED");
  sys_finalize();
  return ok ? 0 : 1;
}

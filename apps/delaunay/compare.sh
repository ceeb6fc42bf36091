#!/usr/bin/env bash
# apps/delaunay/compare.sh: our serial triangulation against an independent one on the same
# points (a ctest entry; also by hand).
# Usage: compare.sh BIN_DIR qhull|cgal DIST N
#   qhull: qdelaunay (Debian qhull-bin) on the points we wrote; the same set of triangles in
#          general position (uniform, clustered); on a grid (cocircular squares, many valid
#          answers) the same number of triangles, and ours passes its own check.
#   cgal:  BIN_DIR/delaunay-cgal (built where CGAL is found); the same set of triangles on every
#          input, grids included (both use the same symbolic perturbation). Exit 77 (ctest:
#          skipped) when it was not built.
set -euo pipefail
[[ $# -eq 4 ]] || { sed -n '2,11p' "$0"; exit 2; }
bin=$1 tool=$2 dist=$3 n=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin/delaunay-serial" --points "$n" --dist "$dist" --seed 7 --quiet --no-check \
  --write-points "$tmp/p.txt" --triangles "$tmp/ours.txt" >/dev/null
case "$tool" in
  qhull)
    command -v qdelaunay >/dev/null || { echo "compare: error: qdelaunay not found (scripts/deps installs qhull-bin)" >&2; exit 1; }
    { echo 2; wc -l <"$tmp/p.txt"; cat "$tmp/p.txt"; } | qdelaunay i Qt >"$tmp/other.txt"
    if [[ $dist == grid ]]; then
      ours=$(wc -l <"$tmp/ours.txt") theirs=$(head -1 "$tmp/other.txt")
      echo "compare: grid of $n points: ours $ours triangles, qdelaunay $theirs"
      "$bin/delaunay-serial" --input "$tmp/p.txt" --quiet | grep -E "check:|passed"
      [[ $ours -eq $theirs ]] || { echo "compare: 0 passed, 1 failed"; exit 1; }
      echo "compare: 1 passed, 0 failed"
      exit 0
    fi;;
  cgal)
    [[ -x $bin/delaunay-cgal ]] || { echo "compare: delaunay-cgal was not built (no CGAL): skipped"; exit 77; }
    "$bin/delaunay-cgal" --input "$tmp/p.txt" --quiet --no-check --triangles "$tmp/other.txt" >/dev/null;;
  *) echo "compare: error: unknown tool '$tool' (qhull or cgal)" >&2; exit 2;;
esac
"$bin/delaunay-serial" --input "$tmp/p.txt" --quiet --compare "$tmp/other.txt" | grep -E "check:|compare|passed"

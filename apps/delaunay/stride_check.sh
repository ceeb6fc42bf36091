#!/usr/bin/env bash
# apps/delaunay/stride_check.sh: an input whose order repeats with a period (point i in the
# x-band i % 8 of eight: files written column by column, or by a loop over bands) must still
# give every worker about n / W main-phase points. The blocks' edges come from a sample of
# one point in each stride (par_points.c): at a fixed place in the stride (its middle) the sample
# saw only some bands, and 8 workers got 7,197 to 23,178 main points of 131,072. Runs delaunay on
# W workers with DT_DEBUG=1 and checks every worker's main points within 20% of their mean.
# A ctest entry; also by hand.
# Usage: stride_check.sh MPIEXEC DELAUNAY [W] [N]   (W: workers, default 8; N: points, 131072)
set -euo pipefail
[[ $# -ge 2 ]] || { sed -n '2,9p' "$0"; exit 2; }
mpiexec=$1 prog=$2 w=${3:-8} n=${4:-131072}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
awk -v n="$n" 'BEGIN { srand(5); for (i = 0; i < n; i++) printf "%.17g %.17g\n", (i % 8 + rand()) / 8, rand() }' >"$dir/stride.txt"
DT_DEBUG=1 "$mpiexec" --oversubscribe --bind-to none -np $((w + 1)) "$prog" --antheap-schedulers 1 \
  --input "$dir/stride.txt" --quiet >"$dir/log" 2>&1 || { cat "$dir/log"; echo "stride_check: delaunay failed: 0 passed, 1 failed"; exit 1; }
grep -q "1 passed, 0 failed" "$dir/log" || { cat "$dir/log"; echo "stride_check: the mesh is wrong: 0 passed, 1 failed"; exit 1; }
sed -n 's/^worker \([0-9]*\) main: \([0-9]*\) points.*/\2/p' "$dir/log" | awk -v w="$w" '
  { s += $1; k++; if (k == 1 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
  END {
    if (k != w) { printf "stride_check: %d main lines for %d workers: 0 passed, 1 failed\n", k, w; exit 1 }
    m = s / k
    printf "stride_check: main points per worker %d to %d (mean %.0f)\n", lo, hi, m
    if (lo >= 0.8 * m && hi <= 1.2 * m) print "stride_check: within 20% of the mean: 1 passed, 0 failed"
    else { print "stride_check: more than 20% from the mean: 0 passed, 1 failed"; exit 1 }
  }'

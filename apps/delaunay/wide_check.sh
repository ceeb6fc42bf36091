#!/usr/bin/env bash
# apps/delaunay/wide_check.sh: coordinates over a huge range (|x|, |y| = 10^U(-12, 12), --dist
# wide) triangulate about as fast as uniform points of the same number: the ordering (order.c)
# must keep the walk short at any scale. Best of three runs each; within 3x of uniform's time
# and walk. A ctest entry; also by hand.
# Usage: wide_check.sh BIN_DIR [N]   (N: points, default 200000)
set -euo pipefail
[[ $# -ge 1 ]] || { sed -n '2,7p' "$0"; exit 2; }
bin=$1 n=${2:-200000}
best() { # DIST -> "seconds steps" (the fastest of three runs)
  for _ in 1 2 3; do
    "$bin/delaunay-serial" --points "$n" --dist "$1" --no-check |
      sed -n 's/.* in \([0-9.]*\) s; walk \([0-9.]*\) steps.*/\1 \2/p'
  done | sort -n | head -1
}
read -r ut uw <<<"$(best uniform)"
read -r wt ww <<<"$(best wide)"
echo "wide_check: $n points: uniform $ut s, walk $uw steps/point; wide $wt s, walk $ww steps/point"
if awk -v a="$wt" -v b="$ut" -v c="$ww" -v d="$uw" 'BEGIN { exit !(a <= 3 * b && c <= 3 * d) }'; then
  echo "wide_check: within 3x of uniform: 1 passed, 0 failed"
else
  echo "wide_check: more than 3x uniform's: 0 passed, 1 failed"
  exit 1
fi

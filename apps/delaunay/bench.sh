#!/usr/bin/env bash
# apps/delaunay/bench.sh: the Delaunay sweep of Myrmics Figure 4d (time against workers, with
# the serial baseline, CGAL's serial time and the ideal line). Runs as well on another machine
# with binaries built here (delaunay-cgal is linked statically for that).
# Usage: apps/delaunay/bench.sh BUILD_DIR CSV [--full]
#   BUILD_DIR: a build tree (BUILD_DIR/apps/delaunay/delaunay, delaunay-serial, delaunay-cgal)
#   CSV:       rewritten: the serial row, the CGAL row (when built), one row per worker count
#   quick (default): 200,000 uniform points; 1 and 4 workers
#   --full:          5,000,000 uniform points (the paper's size); 1, 4 and 16 workers
# Overrides: DT_POINTS, DT_DIST (uniform|clustered|grid), DT_WORKERS="1 4 16", DT_SEED,
# DT_MPIRUN_ARGS, DT_ARGS (more options of the parallel program, e.g. "--sample 128 --zone 3").
# Every run checks its mesh (not timed); the CSV gets the timed part only.
# DT_CEILING=1 (default with --full) also measures the machine's ceiling for each worker count
# p > 1: p copies of the serial program at once, each on n/p points (no communication, no
# borders), against one copy alone on n/p points; written to CSV's -ceiling.csv sibling.
# delaunay-cgal is built where CGAL is installed: apps/delaunay/bench.sh --deps installs
# libcgal-dev and libmpfr-dev (Debian; not in scripts/deps, Boost is heavy for CI), then
# reconfigure and build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [[ ${1:-} == --deps ]]; then
  pkgs=(libcgal-dev libmpfr-dev libgmp-dev)
  missing=()
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && { echo "delaunay: CGAL's packages are installed"; exit 0; }
  sudo=(); [[ $(id -u) -ne 0 ]] && sudo=(sudo)
  "${sudo[@]}" apt-get update -qq && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
  exit
fi
[[ $# -ge 2 ]] || { sed -n '2,16p' "$0"; exit 2; }
build=$1 csv=$2 full=${3:-}
points=200000 workers="1 4"
if [[ $full == --full ]]; then points=5000000 workers="1 4 16"; fi
points=${DT_POINTS:-$points} workers=${DT_WORKERS:-$workers}
dist=${DT_DIST:-uniform} seed=${DT_SEED:-1}
[[ -f $here/../../scripts/env.sh ]] && source "$here/../../scripts/env.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
bin=$build/apps/delaunay
run=(--points "$points" --dist "$dist" --seed "$seed" --quiet --csv "$csv")
# antheap binds each rank to a core itself when there are enough (hwloc): no mpirun binding.
mpi=(mpirun --bind-to none ${DT_MPIRUN_ARGS:-})
mkdir -p "$(dirname "$csv")"
rm -f "$csv"
echo "delaunay sweep: $points $dist points; workers: $workers ($(nproc) cores)"
"$bin/delaunay-serial" "${run[@]}"
col=$(head -1 "$csv" | tr ',' '\n' | grep -nx total_s | cut -d: -f1)
base=$(awk -F, -v c="$col" 'NR == 2 { print $c }' "$csv")
if [[ -x $bin/delaunay-cgal ]]; then
  "$bin/delaunay-cgal" "${run[@]}"
else
  echo "delaunay sweep: no delaunay-cgal in $bin (CGAL not found at build time): no CGAL row"
fi
for p in $workers; do
  "${mpi[@]}" -np $((p + 1)) "$bin/delaunay" --antheap-schedulers 1 "${run[@]}" \
    --baseline-seconds "$base" ${DT_ARGS:-}
done

# The ceiling: the best a parallel run of p workers could do on this machine with perfect
# decomposition and no communication is p serial runs of n/p points side by side.
# efficiency_ceiling = T_serial(n) / (p * max T_concurrent(n/p)); alone_s separates what the
# smaller problem gains (cache) from what sharing the machine costs (memory bandwidth, SMT).
ceiling=${DT_CEILING:-0}; [[ $full == --full ]] && ceiling=${DT_CEILING:-1}
if [[ $ceiling == 1 ]]; then
  ccsv=${csv%.csv}-ceiling.csv tmp=$(mktemp -d)
  echo "machine,workers,points_each,serial_s,alone_s,concurrent_max_s,concurrent_avg_s,efficiency_ceiling" >"$ccsv"
  machine=$(awk -F, 'NR == 2 { print $1 }' "$csv")
  for p in $workers; do
    [[ $p -gt 1 ]] || continue
    each=$((points / p))
    one=(--points "$each" --dist "$dist" --quiet --no-check)
    "$bin/delaunay-serial" "${one[@]}" --seed "$seed" --csv "$tmp/alone.csv" >/dev/null
    for ((i = 0; i < p; i++)); do
      "$bin/delaunay-serial" "${one[@]}" --seed $((seed + i)) --csv "$tmp/c$p-$i.csv" >/dev/null &
    done
    wait
    alone=$(awk -F, -v c="$col" 'NR == 2 { print $c }' "$tmp/alone.csv")
    cat "$tmp"/c$p-*.csv | awk -F, -v c="$col" -v p="$p" -v e="$each" -v b="$base" -v a="$alone" \
      -v m="$machine" '$c ~ /^[0-9.]+$/ { n++; s += $c; if ($c > mx) mx = $c }
      END { printf "\"%s\",%d,%d,%.4f,%.4f,%.4f,%.4f,%.3f\n", m, p, e, b, a, mx, s / n, b / (p * mx) }' \
      | sed 's/^"\(.*\)",/\1,/' >>"$ccsv"
    rm -f "$tmp/alone.csv"
  done
  rm -rf "$tmp"
  echo "delaunay sweep: the machine's ceiling (p serial runs of n/p points at once):"
  if command -v column >/dev/null; then column -s, -t "$ccsv"; else cat "$ccsv"; fi
fi
echo "delaunay sweep: $csv"

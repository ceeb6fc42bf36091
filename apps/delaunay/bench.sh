#!/usr/bin/env bash
# apps/delaunay/bench.sh: the Delaunay sweep of Myrmics Figure 4d (time against workers, with the
# serial baseline, CGAL's serial time and the machine's ceiling), for uniform and clustered
# points. Runs anywhere with binaries built here (scripts/device-delaunay on the lent boxes).
# Usage: apps/delaunay/bench.sh BUILD_DIR CSV [--quick | --full]
#   BUILD_DIR  a build tree (BUILD_DIR/apps/delaunay/delaunay, delaunay-serial[, delaunay-cgal]),
#              or a directory holding them (a carried one: scripts/device-delaunay --pack DIR)
#   CSV        rewritten: per distribution the serial row, CGAL's (where it was built), a row per
#              worker count (the fastest of DT_REPS runs; every run in CSV's -runs.csv sibling);
#              CSV's -ceiling.csv sibling: the ceiling per distribution and worker count
#   --quick (default)  100,000 points, uniform and clustered, 1, 2, 4 workers and their
#                      ceiling, one run each: under a minute on 2 cores
#   --full             5,000,000 points (the paper's), uniform and clustered, 1, 2, 4, 8, 16, 32
#                      workers, the ceiling of each, the fastest of 2 runs; 16 and 32 workers
#                      also under a scheduler tree (1 + W/8 schedulers: a root over W/8 leaves
#                      of 8 workers each; the tag says W(leaves))
# Overrides: DT_POINTS, DT_DISTS="uniform clustered", DT_WORKERS="1 2 4", DT_REPS, DT_TREE="16 32"
# (worker counts run again under the tree; "" for none), DT_CEILING=0 (none), DT_SEED,
# DT_MPIRUN_ARGS, DT_ARGS (more options of the parallel program, e.g. "--sample 128 --zone 4"),
# DT_LOGS=DIR (every parallel run's output, with its table of phases: --phases), DT_TIMEOUT
# (seconds a parallel run may take, check included: 240).
# Every run checks its mesh (not timed); the CSV gets the timed part only.
# The ceiling: for p workers, p copies of delaunay-serial at once, each on n/p points of the same
# distribution (no communication, no borders), and one copy alone: efficiency_ceiling =
# T_serial(n) / (p * max T_copy); a run within X of the ceiling takes X times its slowest copy.
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
[[ $# -ge 2 ]] || { sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
build=$1 csv=$2 mode=${3:---quick}
points=100000 workers="1 2 4" reps=1 tree=""
if [[ $mode == --full ]]; then points=5000000 workers="1 2 4 8 16 32" reps=2 tree="16 32"; fi
points=${DT_POINTS:-$points} workers=${DT_WORKERS:-$workers} reps=${DT_REPS:-$reps}
tree=${DT_TREE-$tree} dists=${DT_DISTS:-uniform clustered} seed=${DT_SEED:-1}
ceiling=${DT_CEILING:-1} logs=${DT_LOGS:-}
[[ -f $here/../../scripts/env.sh ]] && source "$here/../../scripts/env.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export ANTHEAP_STATS=off
bin=$build/apps/delaunay; [[ -x $bin/delaunay ]] || bin=$build
for p in delaunay delaunay-serial; do
  [[ -x $bin/$p ]] || { echo "delaunay bench: no $bin/$p (build first)" >&2; exit 1; }
done
# antheap binds each rank to a core itself when there are enough (hwloc): no mpirun binding.
mpi=(mpirun --bind-to none ${DT_MPIRUN_ARGS:-})
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=${csv%.csv}-runs.csv ccsv=${csv%.csv}-ceiling.csv
mkdir -p "$(dirname "$csv")"
[[ -n $logs ]] && mkdir -p "$logs"
rm -f "$csv" "$runs" "$ccsv"
echo "delaunay sweep: $points points ($dists); workers: $workers; tree: ${tree:-none}; $reps run(s) each ($(nproc) cores)"

# col NAME: the column of NAME in the CSV's header
col() { head -1 "$1" | tr ',' '\n' | grep -nx "$2" | cut -d: -f1; }
# add FILE TO: FILE's rows to TO (its header first when TO is new)
add() { [[ -s $2 ]] || head -1 "$1" >"$2"; tail -n +2 "$1" >>"$2"; }

# One serial program's row (serial or CGAL) for a distribution.
serial_row() { # PROGRAM DIST
  rm -f "$tmp/s.csv"
  "$bin/$1" --points "$points" --dist "$2" --seed "$seed" --quiet --csv "$tmp/s.csv" | grep -v "^ *tag\|^$\|seconds per"
  add "$tmp/s.csv" "$csv"
}

# A parallel configuration, DT_REPS times; the fastest run's row to the CSV, all to the runs.
parallel() { # DIST WORKERS SCHEDULERS FANOUT TAG BASE
  local d=$1 p=$2 s=$3 f=$4 tag=$5 base=$6 best="" bt="" i
  for ((i = 1; i <= reps; i++)); do
    rm -f "$tmp/p.csv"
    local log=$tmp/log
    [[ -n $logs ]] && log=$logs/$d-$tag-$i.txt
    if ! timeout "${DT_TIMEOUT:-240}" "${mpi[@]}" -np $((p + s)) "$bin/delaunay" --antheap-schedulers "$s" \
         --antheap-fanout "$f" --points "$points" --dist "$d" --seed "$seed" --quiet --phases \
         --tag "$tag" --baseline-seconds "$base" --csv "$tmp/p.csv" ${DT_ARGS:-} >"$log" 2>&1 ||
       ! grep -q "1 passed, 0 failed" "$log"; then
      echo "delaunay bench: $d, $tag workers: FAILED (its output: $log)" >&2
      tail -5 "$log" >&2
      failed=$((failed + 1))
      continue
    fi
    grep "^delaunay: [0-9]* points\|check:" "$log" | sed 's/^/  /'
    add "$tmp/p.csv" "$runs"
    local t
    t=$(awk -F, -v c="$(col "$tmp/p.csv" total_s)" 'NR == 2 { print $c }' "$tmp/p.csv")
    if [[ -z $bt ]] || awk -v a="$t" -v b="$bt" 'BEGIN { exit !(a < b) }'; then
      bt=$t best=$(tail -1 "$tmp/p.csv")
      head -1 "$tmp/p.csv" >"$tmp/best.csv"
    fi
  done
  [[ -n $best ]] && { echo "$best" >>"$tmp/best.csv"; add "$tmp/best.csv" "$csv"; }
  return 0
}

# The ceiling of p workers for a distribution: p copies of n/p points at once, one alone.
ceiling_row() { # DIST P BASE
  local d=$1 p=$2 base=$3 each=$(($points / $2)) i
  local one=(--points "$each" --dist "$d" --quiet --no-check)
  rm -f "$tmp"/c-*.csv "$tmp/alone.csv"
  "$bin/delaunay-serial" "${one[@]}" --seed "$seed" --csv "$tmp/alone.csv" >/dev/null
  for ((i = 0; i < p; i++)); do
    "$bin/delaunay-serial" "${one[@]}" --seed $((seed + i)) --csv "$tmp/c-$i.csv" >/dev/null &
  done
  wait
  local c alone
  c=$(col "$tmp/alone.csv" total_s)
  alone=$(awk -F, -v c="$c" 'NR == 2 { print $c }' "$tmp/alone.csv")
  cat "$tmp"/c-*.csv | awk -F, -v c="$c" -v p="$p" -v e="$each" -v b="$base" -v a="$alone" -v d="$d" '
    /^machine/ { next } { m = $1; n++; s += $c; if ($c + 0 > mx) mx = $c + 0 }
    END { printf "%s,%s,%d,%d,%.4f,%.4f,%.4f,%.4f,%.3f\n", m, d, p, e, b, a, mx, s / n, b / (p * mx) }' \
    >>"$ccsv"
}

failed=0
for d in $dists; do
  echo "== $d"
  serial_row delaunay-serial "$d"
  base=$(awk -F, -v c="$(col "$csv" total_s)" -v dc="$(col "$csv" dist)" -v d="$d" \
    '$dc == d { b = $c } END { print b }' "$csv")
  if [[ -x $bin/delaunay-cgal ]]; then
    serial_row delaunay-cgal "$d"
  else
    echo "delaunay sweep: no delaunay-cgal in $bin (CGAL not found at build time): no CGAL row"
  fi
  for p in $workers; do parallel "$d" "$p" 1 8 "$p" "$base"; done
  for p in $tree; do
    [[ $p -ge 16 ]] || continue
    parallel "$d" "$p" $((1 + p / 8)) $((p / 8)) "$p($((p / 8)))" "$base"
  done
  if [[ $ceiling == 1 ]]; then
    [[ -s $ccsv ]] || echo "machine,dist,workers,points_each,serial_s,alone_s,concurrent_max_s,concurrent_avg_s,efficiency_ceiling" >"$ccsv"
    for p in $workers; do
      [[ $p -gt 1 ]] && ceiling_row "$d" "$p" "$base"
    done
  fi
done

# The table: every configuration's time against the ceiling of its worker count.
echo "delaunay sweep: seconds (the mean worker's compute, comm, sched, wait; total = the slowest worker; x ceiling = total / the ceiling's slowest copy)"
tables=("$csv"); [[ -s $ccsv ]] && tables=("$ccsv" "$csv")
awk -F, -v csv="$csv" -v ccsv="$ccsv" '
  FNR == 1 { for (i = 1; i <= NF; i++) h[FILENAME, $i] = i; next }
  FILENAME == ccsv { cm[$h[ccsv, "dist"], $h[ccsv, "workers"]] = $h[ccsv, "concurrent_max_s"]; next }
  { d = $h[csv, "dist"]; n++; row[n] = d; tag[n] = $h[csv, "tag"]; w[n] = $h[csv, "workers"]
    t[n] = $h[csv, "total_s"]; cmp[n] = $h[csv, "compute_s"]; wc[n] = $h[csv, "worker_comm_s"]
    sc[n] = $h[csv, "sched_comm_s"]; wt[n] = $h[csv, "wait_s"]; e[n] = $h[csv, "efficiency"] }
  END {
    printf "  %-10s %-7s %8s %8s %8s %8s %8s %9s %9s %6s\n", "dist", "run", "compute", "w.comm", "sched",
           "wait", "total", "ceiling", "x ceiling", "eff"
    for (i = 1; i <= n; i++) {
      c = (row[i], w[i]) in cm ? cm[row[i], w[i]] : ""
      printf "  %-10s %-7s %8.3f %8.3f %8.3f %8.3f %8.3f %9s %9s %6s\n", row[i], tag[i], cmp[i], wc[i], sc[i], wt[i], t[i],
             c == "" ? "-" : sprintf("%.3f", c), c == "" ? "-" : sprintf("%.2f", t[i] / c), e[i]
    }
  }' "${tables[@]}"
echo "delaunay sweep: $csv, $runs$([[ -s $ccsv ]] && echo ", $ccsv")"
[[ $failed -eq 0 ]] || { echo "delaunay sweep: $failed run(s) FAILED" >&2; exit 1; }

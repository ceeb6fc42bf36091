#!/usr/bin/env bash
# apps/barnes/bench.sh: the Barnes-Hut sweep of Myrmics Figure 4e-f, with the plain-MPI program
# beside antheap's and the machine's ceiling, every parallel run verified against the serial
# run (bit for bit: the parallel walk is the serial walk). Runs anywhere with binaries built
# here (scripts/bench barnes; scripts/device-session barnes-sweep on the lent boxes).
# Usage: apps/barnes/bench.sh BUILD_DIR CSV [--quick | --full]
#   BUILD_DIR  a build tree (BUILD_DIR/apps/barnes/{barnes,barnes-mpi,barnes-serial}), or a
#              directory holding the three binaries and antheapd (a carried one)
#   CSV        rewritten: the serial row, then a row per parallel run (mode antheap or mpi);
#              CSV's -ceiling.csv sibling gets the ceiling per worker count
#   --quick (default)  8,192 bodies, 2 steps; e: 1, 2, 4 workers; f: 4 workers under 2 leaves
#   --full             1,100,000 bodies (the paper's), 2 steps; e: 1, 2, 4, 8, 16, 32 workers;
#                      f: 32 under 4 leaves; 10 runs in a row at the largest e count
# Overrides: BARNES_BODIES, BARNES_STEPS, BARNES_E="1 2 4", BARNES_F="P:S:F ..." (workers,
# schedulers, fan-out: S = 1 + F is a root over F leaves), BARNES_REPEAT (runs at the largest
# e count, 1 by default with --quick), BARNES_MPI=0 (no plain-MPI rows), BARNES_CEILING=0.
# The ceiling: for p workers, p copies of barnes-serial on N/p bodies at once against the
# serial run on N: efficiency_ceiling = T_serial(N) / (p * max T_copy); a run's efficiency is
# T_serial(N) / (p * T_p), and efficiency / ceiling what the machine allows that is used. A
# copy's bodies each take fewer interactions than in the whole system (a smaller tree: about
# 1,250 against 1,800 at 1.1M bodies), so efficiency_ceiling_work scales the ceiling by that
# ratio: what the machine allows for the parallel run's own work per body.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[[ $# -ge 2 ]] || { sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
build=$1 csv=$2 mode=${3:---quick}
bodies=8192 steps=2 e_list="1 2 4" f_list="4:3:2" repeat=1
if [[ $mode == --full ]]; then
  bodies=1100000 steps=2 e_list="1 2 4 8 16 32" f_list="32:5:4" repeat=10
fi
bodies=${BARNES_BODIES:-$bodies} steps=${BARNES_STEPS:-$steps}
e_list=${BARNES_E:-$e_list} f_list=${BARNES_F:-$f_list} repeat=${BARNES_REPEAT:-$repeat}
[[ -f $here/../../scripts/env.sh ]] && source "$here/../../scripts/env.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export ANTHEAP_STATS=off
bin=$build/apps/barnes; [[ -x $bin/barnes ]] || bin=$build
for p in barnes barnes-mpi barnes-serial; do
  [[ -x $bin/$p ]] || { echo "barnes bench: no $bin/$p (build first)" >&2; exit 1; }
done
run=(--bodies "$bodies" --steps "$steps" --quiet --csv "$csv")
mpi=(mpirun --bind-to none ${BARNES_MPIRUN_ARGS:-}) # antheap binds its ranks itself (hwloc)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$(dirname "$csv")"
rm -f "$csv"
echo "barnes sweep: $bodies bodies, $steps steps; e: $e_list; f: $f_list ($(nproc) cores)"
"$bin/barnes-serial" "${run[@]}" --figure s --tag Serial --positions "$tmp/serial.txt"
col=$(head -1 "$csv" | tr ',' '\n' | grep -nx total_s | cut -d: -f1)
base=$(awk -F, -v c="$col" 'NR == 2 { print $c }' "$csv")
verified=0 failed=0
# one parallel run: its row in the CSV, its positions against the serial run's
one() { # TAG FIGURE NP PROGRAM ARGS...
  local tag=$1 fig=$2 np=$3; shift 3
  rm -f "$tmp/run.txt"
  if timeout 900 "${mpi[@]}" -np "$np" "$@" "${run[@]}" --figure "$fig" --tag "$tag" \
       --baseline-seconds "$base" --positions "$tmp/run.txt" >"$tmp/log" 2>&1 &&
     cmp -s "$tmp/run.txt" "$tmp/serial.txt"; then
    verified=$((verified + 1))
  else
    failed=$((failed + 1))
    echo "barnes bench: $tag ($fig, $*): FAILED or not the serial positions" >&2
    tail -5 "$tmp/log" >&2
  fi
  grep -v "^barnes: [0-9]* passed" "$tmp/log" | grep -v "seconds per worker\|^ *figure " || true
}
last=${e_list##* }
for p in $e_list; do
  n=1; [[ $p == "$last" ]] && n=$repeat
  for ((i = 0; i < n; i++)); do one "$p" e $((p + 1)) "$bin/barnes" --antheap-schedulers 1; done
  if [[ ${BARNES_MPI:-1} == 1 ]]; then one "$p" e "$p" "$bin/barnes-mpi"; fi
done
for spec in $f_list; do
  IFS=: read -r p s f <<<"$spec"
  one "$p($((s - 1)))" f $((p + s)) "$bin/barnes" --antheap-schedulers "$s" --antheap-fanout "$f"
done
echo "barnes sweep: $verified runs identical to the serial run, $failed failed"
# the ceiling: p copies of the serial program on N/p bodies at once
if [[ ${BARNES_CEILING:-1} == 1 ]]; then
  ccsv=${csv%.csv}-ceiling.csv
  echo "machine,workers,bodies_each,serial_s,concurrent_max_s,efficiency_ceiling,interactions_each,interactions_all,efficiency_ceiling_work" >"$ccsv"
  icol=$(head -1 "$csv" | tr ',' '\n' | grep -nx interactions_per_body | cut -d: -f1)
  iall=$(awk -F, -v c="$icol" 'NR == 2 { print $c }' "$csv")
  for p in $e_list; do
    [[ $p -le 1 ]] && continue
    each=$((bodies / p))
    for ((k = 0; k < p; k++)); do
      "$bin/barnes-serial" --bodies "$each" --steps "$steps" --quiet --seed $((k + 1)) \
        --csv "$tmp/c$p-$k.csv" >/dev/null &
    done
    wait
    cat "$tmp"/c$p-*.csv | awk -F, -v c="$col" -v ic="$icol" -v ia="$iall" -v p="$p" -v e="$each" -v b="$base" '
      /^machine/ { next } { m = $1; if ($c + 0 > mx) mx = $c + 0; ii += $ic; k++ }
      END { ie = ii / k
            printf "%s,%d,%d,%.4f,%.4f,%.3f,%.1f,%.1f,%.3f\n", m, p, e, b, mx, b / (p * mx), ie, ia,
                   b / (p * mx) * ie / ia }' >>"$ccsv"
  done
  echo "barnes ceiling: $ccsv"
  cat "$ccsv"
fi
echo "barnes sweep: $csv"
[[ $failed -eq 0 ]]

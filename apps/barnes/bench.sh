#!/usr/bin/env bash
# apps/barnes/bench.sh: the Barnes-Hut sweep of Myrmics Figure 4e-f (called by scripts/bench
# barnes; runs as well on another machine with binaries built here).
# Usage: apps/barnes/bench.sh BUILD_DIR CSV [--full]
#   BUILD_DIR: a build tree (BUILD_DIR/apps/barnes/barnes, barnes-serial)
#   CSV:       rewritten: the serial baseline row, then one row per parallel run
#   quick (default): 8192 bodies, 4 steps; e: 1, 2, 4 workers; f: 2(2), 4(2) workers(leaves)
#   --full:          65536 bodies, 5 steps; e: 1, 2, 4, 8, 16 workers; f: 4(2), 8(2), 16(4)
# Overrides: BARNES_BODIES, BARNES_STEPS, BARNES_E="1 2 4", BARNES_F="P:S:F ..." (workers,
# schedulers, fan-out; S = 1 + F is a root over F leaves), BARNES_MPIRUN_ARGS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[[ $# -ge 2 ]] || { sed -n '2,12p' "$0"; exit 2; }
build=$1 csv=$2 full=${3:-}
bodies=8192 steps=4 e_list="1 2 4" f_list="2:3:2 4:3:2"
if [[ $full == --full ]]; then
  bodies=65536 steps=5 e_list="1 2 4 8 16" f_list="4:3:2 8:3:2 16:5:4"
fi
bodies=${BARNES_BODIES:-$bodies} steps=${BARNES_STEPS:-$steps}
e_list=${BARNES_E:-$e_list} f_list=${BARNES_F:-$f_list}
# Root, oversubscription, idle ranks that yield (as every antheap job here).
[[ -f $here/../../scripts/env.sh ]] && source "$here/../../scripts/env.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
bin=$build/apps/barnes
run=(--bodies "$bodies" --steps "$steps" --quiet --csv "$csv")
# antheap binds each rank to a core itself when there are enough (hwloc): no mpirun binding.
mpi=(mpirun --bind-to none ${BARNES_MPIRUN_ARGS:-})
mkdir -p "$(dirname "$csv")"
rm -f "$csv"
echo "barnes sweep: $bodies bodies, $steps steps; e: $e_list; f: $f_list ($(nproc) cores)"
"$bin/barnes-serial" "${run[@]}" --figure s --tag Serial
col=$(head -1 "$csv" | tr ',' '\n' | grep -nx total_s | cut -d: -f1)
base=$(awk -F, -v c="$col" 'NR == 2 { print $c }' "$csv")
for p in $e_list; do
  "${mpi[@]}" -np $((p + 1)) "$bin/barnes" --antheap-schedulers 1 "${run[@]}" --figure e \
    --tag "$p" --baseline-seconds "$base"
done
for spec in $f_list; do
  IFS=: read -r p s f <<<"$spec"
  "${mpi[@]}" -np $((p + s)) "$bin/barnes" --antheap-schedulers "$s" --antheap-fanout "$f" \
    "${run[@]}" --figure f --tag "$p($((s - 1)))" --baseline-seconds "$base"
done
echo "barnes sweep: $csv"

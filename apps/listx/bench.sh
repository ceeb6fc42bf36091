#!/usr/bin/env bash
# apps/listx/bench.sh: the listx sweeps (Myrmics Fig. 4g-h), each variant launched on its own,
# on two interconnects; one CSV row per run, then the comparison table (table.awk).
# Called by scripts/bench listx (sweep "default") and scripts/run (sweep "smoke").
set -uo pipefail

usage() {
  cat <<'USAGE'
usage: apps/listx/bench.sh [options]
  --bin DIR       where listx (and listx-shmem) are (default: build/release/apps/listx)
  --csv FILE      CSV to append to (default: results/listx.csv; --fresh empties it first)
  --fresh         start the CSV afresh
  --sweep NAME    smoke    4 workers, 60,000 nodes, 5 reps, shared memory only (< 1 minute)
                  quick    a: 16 workers, 15,000 and 30,000 nodes; b: 15,000 nodes, 2/4/16
                           workers; TCP: 1,000 nodes (a few minutes on 2 cores)
                  default  shm a: 16 workers, 15,000..120,000 nodes; shm b: 30,000 nodes,
                           2/4/8/16 workers, single and hierarchical schedulers; TCP a: 1,000,
                           2,000, 4,000 nodes; TCP b: 2,000 nodes (about 20 minutes on 2 cores)
                  device   for one 10-minute call on a 16-core box (with --budget): shm as
                           full but b: 2/4/8/12/16 workers; TCP a: 15,000 and 30,000 nodes,
                           TCP b: 15,000 nodes, 2/4/8/16 workers
                  full     the paper's: a: 15,000..240,000 nodes, b: 30,000 nodes, 2..16
                           workers, on both interconnects (a 16-core machine)
  --quick         same as --sweep quick
  --nets LIST     interconnects to run, from "shm tcp" (default: both; smoke: shm)
  --variants LIST variants to run (default: every one built)
  --budget S      start no new run after S seconds (rows so far are kept)
  --no-table      do not print the comparison table
Interconnects (labelled in the CSV's net column):
  shm  Open MPI's defaults on one host (vader/CMA for MPI; UCX shared memory for OSHMEM)
  tcp  TCP over loopback, a cluster-like network: --mca pml ob1 --mca btl tcp,self
       --mca osc pt2pt, UCX_TLS=tcp,self
Hierarchical schedulers: max(2, workers/4) leaf schedulers under one root (fan-out = leaves).
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/scripts/env.sh"
export OMPI_MCA_opal_common_ucx_opal_mem_hooks=${OMPI_MCA_opal_common_ucx_opal_mem_hooks:-0}
bin="$root/build/release/apps/listx"
csv="$root/results/listx.csv"
sweep=default fresh=0 table=1 budget=0 nets="" variants=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help) usage; exit 0;;
    --bin) bin=$2; shift 2;;
    --csv) csv=$2; shift 2;;
    --fresh) fresh=1; shift;;
    --sweep) sweep=$2; shift 2;;
    --quick) sweep=quick; shift;;
    --nets) nets=$2; shift 2;;
    --variants) variants=$2; shift 2;;
    --budget) budget=$2; shift 2;;
    --no-table) table=0; shift;;
    *) echo "listx bench: unknown option '$1'" >&2; usage >&2; exit 2;;
  esac
done
[[ -x "$bin/listx" ]] || { echo "listx bench: no $bin/listx (build first)" >&2; exit 1; }
mkdir -p "$(dirname "$csv")"
[[ $fresh -eq 1 ]] && : >"$csv"

# The variants that are built (and run: OSHMEM is tried once before the sweep).
if [[ -z $variants ]]; then
  variants="antheap antheap-balloc mpi-rma mpi-pack"
  if [[ -x "$bin/listx-shmem" ]]; then
    if probe=$(timeout 120 mpirun --oversubscribe --bind-to none -np 2 "$bin/listx-shmem" \
                 --nodes 10 --reps 1 --quiet 2>&1); then
      variants+=" shmem"
    else
      printf '%s\n' "$probe" | tail -15 >&2
      echo "listx bench: listx-shmem does not run here (OSHMEM/UCX, above); the shmem variant is skipped" >&2
    fi
  else
    echo "listx bench: listx-shmem not built (no oshcc); the shmem variant is skipped" >&2
  fi
fi

case "$sweep" in
  smoke)   a_nodes="60000"; a_workers=4; b_nodes=""; b_workers=""; reps=5
           t_nodes=""; tb_nodes=""; [[ -z $nets ]] && nets=shm;;
  quick)   a_nodes="15000 30000"; a_workers=16; b_nodes=15000; b_workers="2 4 16"; reps=3
           t_nodes="1000"; tb_nodes="1000"; t_reps=2;;
  default) a_nodes="15000 30000 60000 120000"; a_workers=16; b_nodes=30000
           b_workers="2 4 8 16"; reps=3; t_nodes="1000 2000 4000"; tb_nodes=2000; t_reps=2;;
  device)  a_nodes="15000 30000 60000 120000 240000"; a_workers=16; b_nodes=30000
           b_workers="2 4 8 12 16"; reps=3; t_nodes="15000 30000"; tb_nodes=15000; t_reps=2
           b_workers_tcp="2 4 8 16";;
  full)    a_nodes="15000 30000 60000 120000 240000"; a_workers=16; b_nodes=30000
           b_workers="2 4 6 8 10 12 14 16"; reps=3; t_nodes="$a_nodes"; tb_nodes=30000; t_reps=3;;
  *) echo "listx bench: unknown sweep '$sweep'" >&2; exit 2;;
esac
[[ -z $nets ]] && nets="shm tcp"
t_reps=${t_reps:-$reps}

start=$SECONDS
declare -A done_runs
# run NET WORKERS NODES VARIANT LAYOUT(single|hier) REPS
run() {
  local net=$1 w=$2 n=$3 v=$4 layout=$5 r=$6 key="$1/$2/$3/$4/$5"
  [[ -n ${done_runs[$key]:-} ]] && return 0
  done_runs[$key]=1
  if [[ $budget -gt 0 && $((SECONDS - start)) -ge $budget ]]; then
    echo "listx bench: budget of ${budget}s spent; skipped $key" >&2; return 0
  fi
  local mpi=(mpirun --oversubscribe --bind-to none) np=$w prog=("$bin/listx")
  if [[ $net == tcp ]]; then
    mpi+=(--mca pml ob1 --mca btl tcp,self --mca osc pt2pt -x UCX_TLS=tcp,self)
  fi
  case "$v" in
    antheap*) local s=1 f=8
              if [[ $layout == hier ]]; then f=$((w / 4 > 2 ? w / 4 : 2)); s=$((f + 1)); fi
              np=$((w + s)); prog+=(--antheap-schedulers "$s" --antheap-fanout "$f");;
    shmem) prog=("$bin/listx-shmem");;
  esac
  local t0=$SECONDS
  if UCX_TLS=$([[ $net == tcp ]] && echo tcp,self || echo "${UCX_TLS:-all}") \
     timeout "${LISTX_RUN_TIMEOUT:-900}" "${mpi[@]}" -np "$np" "${prog[@]}" --variants "$v" \
       --nodes "$n" --reps "$r" --net "$net" --csv "$csv" 2>&1 | grep -v "^antheapd\|^ *rank \|^ *[0-9]\+ \+[0-9]"; then
    :
  fi
  local rc=${PIPESTATUS[0]}
  [[ $rc -ne 0 ]] && echo "listx bench: $key: exit status $rc (${LISTX_RUN_TIMEOUT:-900}s limit)" >&2
  echo "listx bench: $key: $((SECONDS - t0))s" >&2
}

for net in $nets; do
  r=$reps a=$a_nodes bw=$b_workers bn=$b_nodes
  if [[ $net == tcp ]]; then r=$t_reps a=$t_nodes bn=$tb_nodes bw=${b_workers_tcp:-$b_workers}; fi
  for n in $a; do                     # (a) 16 workers, varying nodes (Fig. 4g)
    for v in $variants; do run "$net" "$a_workers" "$n" "$v" single "$r"; done
  done
  [[ -z $bn ]] && continue
  for w in $bw; do                    # (b) varying workers (Fig. 4h)
    for v in $variants; do
      run "$net" "$w" "$bn" "$v" single "$r"
      [[ $v == antheap* ]] && run "$net" "$w" "$bn" "$v" hier "$r"
    done
  done
done
echo "listx bench: $((SECONDS - start))s; rows in $csv" >&2
[[ $table -eq 1 ]] && awk -F, -f "$here/table.awk" "$csv"
exit 0

#!/usr/bin/env bash
# apps/listx/hybrid.sh: issue 34's listx goal, "hybrid (2 x 16) at least as fast as 32
# single-threaded ranks" on a 32-core box: in each round, alternating, antheap with W
# single-threaded worker ranks and antheap-threads with R ranks x T threads (the same W
# workers, lists, partners and verification), then MPI RMA at W ranks; one CSV, then the table
# (table.awk: x_antheap of a hybrid row is its time over the W-rank antheap row's, per round).
set -uo pipefail

usage() {
  cat <<'USAGE'
usage: apps/listx/hybrid.sh [options]
  --bin DIR       where listx is (default: this script's directory when listx is there, else
                  build/release/apps/listx of the repository)
  --out DIR       where listx-hybrid.csv and hybrid.log go (default: $OUT when set, else
                  ./hybrid-out); the CSV is started afresh
  --workers W     workers in every run (default 32)
  --shapes LIST   hybrid shapes RANKSxTHREADS, space- or comma-separated, RANKS x THREADS = W
                  (default 2x16)
  --nodes N       nodes per worker (default 240000, the largest of bench.sh's sweeps)
  --reps R        repetitions per run (default 5)
  --rounds K      rounds (default 2); odd rounds run the hybrid first, even ones antheap first
  --balloc        also antheap-balloc (W ranks) and antheap-balloc-threads (each shape)
  --no-bundled    leave out antheap-threads-bundled (each shape: the crossing lists of a rank
                  pair and stage moved together by one thread a side, 4 moves instead of 4m;
                  run after antheap-threads by default, as a comparison)
  --no-rma        leave out MPI RMA
  --timeout S     limit per run in seconds (default 300)
  --net LABEL     the CSV's net label (default shm)
  -h, --help      this text
Every run: mpirun --oversubscribe --bind-to none (a hybrid rank's threads need every core);
antheap runs have one scheduler rank: W + 1 ranks single-threaded, RANKS + 1 hybrid. The CSV's
machine column starts with "round K" so that the table compares within a round.
Example (the 32-core box): apps/listx/hybrid.sh --bin build-carry/lxt --out "$OUT"
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
bin="" out="${OUT:-./hybrid-out}" workers=32 shapes="2x16" nodes=240000 reps=5 rounds=2
balloc=0 bundled=1 rma=1 limit=300 net=shm
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help) usage; exit 0;;
    --bin) bin=$2; shift 2;;
    --out) out=$2; shift 2;;
    --workers) workers=$2; shift 2;;
    --shapes) shapes=${2//,/ }; shift 2;;
    --nodes) nodes=$2; shift 2;;
    --reps) reps=$2; shift 2;;
    --rounds) rounds=$2; shift 2;;
    --balloc) balloc=1; shift;;
    --no-bundled) bundled=0; shift;;
    --no-rma) rma=0; shift;;
    --timeout) limit=$2; shift 2;;
    --net) net=$2; shift 2;;
    *) echo "hybrid.sh: unknown option '$1'" >&2; usage >&2; exit 2;;
  esac
done
if [[ -z $bin ]]; then
  if [[ -x $here/listx ]]; then bin=$here; else bin=$(cd "$here/../.." && pwd)/build/release/apps/listx; fi
fi
[[ -x $bin/listx ]] || { echo "hybrid.sh: no $bin/listx (build it, or --bin DIR)" >&2; exit 1; }
table=$here/table.awk
[[ -f $table ]] || table=$bin/table.awk
for s in $shapes; do
  r=${s%x*} t=${s#*x}
  [[ $s == *x* && $r =~ ^[0-9]+$ && $t =~ ^[0-9]+$ && $((r * t)) -eq $workers ]] ||
    { echo "hybrid.sh: shape '$s' is not RANKSxTHREADS with RANKS x THREADS = $workers" >&2; exit 2; }
done

# What scripts/env.sh and bench.sh set for MPI jobs (this script may run outside the tree).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
export OMPI_MCA_opal_common_ucx_opal_mem_hooks=${OMPI_MCA_opal_common_ucx_opal_mem_hooks:-0}

mkdir -p "$out" || exit 1
csv=$out/listx-hybrid.csv log=$out/hybrid.log
: >"$csv"
: >"$log"
echo "hybrid.sh: $(date -u +%FT%TZ) $(nproc) cores; $bin/listx; W=$workers shapes=$shapes" \
     "nodes=$nodes reps=$reps rounds=$rounds" | tee -a "$log"
fails=0
# run ROUND NP LISTX-ARGS...: one launch, its rows into the CSV, its output into the log
run() {
  local round=$1 np=$2; shift 2
  local t0=$SECONDS
  echo "== round $round: mpirun -np $np listx $*" >>"$log"
  LISTX_MACHINE="round $round" timeout "$limit" mpirun --oversubscribe --bind-to none -np "$np" \
    "$bin/listx" "$@" --nodes "$nodes" --reps "$reps" --net "$net" --csv "$csv" >>"$log" 2>&1
  local rc=$?
  [[ $rc -ne 0 ]] && { fails=$((fails + 1)); echo "hybrid.sh: round $round: exit status $rc: listx $* (see $log)" >&2; }
  grep "^listx: " "$log" | tail -1
  echo "hybrid.sh: round $round: $((SECONDS - t0))s" >&2
}
single() { # W single-threaded workers + 1 scheduler
  run "$1" $((workers + 1)) --antheap-schedulers 1 --variants antheap
  [[ $balloc -eq 1 ]] && run "$1" $((workers + 1)) --antheap-schedulers 1 --variants antheap-balloc
}
hybrid() { # each shape: RANKS hybrid ranks + 1 scheduler
  local s
  for s in $shapes; do
    run "$1" $((${s%x*} + 1)) --antheap-schedulers 1 --threads "${s#*x}" --variants antheap-threads
    [[ $bundled -eq 1 ]] &&
      run "$1" $((${s%x*} + 1)) --antheap-schedulers 1 --threads "${s#*x}" --variants antheap-threads-bundled
    [[ $balloc -eq 1 ]] &&
      run "$1" $((${s%x*} + 1)) --antheap-schedulers 1 --threads "${s#*x}" --variants antheap-balloc-threads
  done
}
for ((k = 1; k <= rounds; k++)); do
  if ((k % 2)); then hybrid "$k"; single "$k"; else single "$k"; hybrid "$k"; fi
  [[ $rma -eq 1 ]] && run "$k" "$workers" --variants mpi-rma
done
awk -F, -f "$table" "$csv" | tee -a "$log"
echo "hybrid.sh: $fails failed runs; $csv, $log" | tee -a "$log"
[[ $fails -eq 0 ]]

#!/usr/bin/env bash
# apps/barnes/hybrid.sh: issue 34's Barnes-Hut goal, "hybrid (2 x 16) at least as fast as 32
# single-threaded ranks" on a 32-core box: in each round, alternating, barnes with W worker
# ranks and barnes --threads T with R ranks (R x T = W: the sort, tree, LETs and walk shared by
# a rank's threads),
# then barnes-mpi both ways; every run's final positions checked against the serial run's, bit
# for bit; one CSV, then a table of total_s against the W-rank antheap run of the same round.
set -uo pipefail

usage() {
  cat <<'USAGE'
usage: apps/barnes/hybrid.sh [options]
  --bin DIR       where barnes, barnes-mpi and barnes-serial are (default: this script's
                  directory when barnes is there, else build/release/apps/barnes)
  --out DIR       where barnes-hybrid.csv and hybrid.log go (default: $OUT when set, else
                  ./hybrid-out); the CSV is started afresh
  --workers W     worker ranks of the single-threaded runs (default 32)
  --shapes LIST   hybrid shapes RANKSxTHREADS, RANKS x THREADS = W (default 2x16)
  --bodies N      bodies (default 1100000, bench.sh --full)
  --steps K       steps (default 2)
  --rounds K      rounds (default 2); odd rounds run the hybrid first
  --no-mpi        leave out barnes-mpi
  --no-check      no serial run, no position check (saves the serial run's time: about 33 s
                  at 1.1M bodies on the 32-core box)
  --timeout S     limit per run in seconds (default 300)
  --old DIR       another build's barnes run beside this one's in every round (the single and
                  hybrid runs, not barnes-mpi), tagged old:TAG, its x_W against its own W-rank
                  run: a change's effect measured side by side
  -h, --help      this text
Every run: mpirun --bind-to none; antheap runs have one scheduler rank (W + 1, RANKS + 1).
The CSV's figure column is "rK" (round K); its tag is W, or RANKSxTHREADS.
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
bin="" old="" out="${OUT:-./hybrid-out}" workers=32 shapes="2x16" bodies=1100000 steps=2 rounds=2
mpi=1 check=1 limit=300
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help) usage; exit 0;;
    --bin) bin=$2; shift 2;;
    --out) out=$2; shift 2;;
    --workers) workers=$2; shift 2;;
    --shapes) shapes=${2//,/ }; shift 2;;
    --bodies) bodies=$2; shift 2;;
    --steps) steps=$2; shift 2;;
    --rounds) rounds=$2; shift 2;;
    --no-mpi) mpi=0; shift;;
    --no-check) check=0; shift;;
    --timeout) limit=$2; shift 2;;
    --old) old=$2; shift 2;;
    *) echo "barnes hybrid.sh: unknown option '$1'" >&2; usage >&2; exit 2;;
  esac
done
if [[ -z $bin ]]; then
  if [[ -x $here/barnes ]]; then bin=$here; else bin=$(cd "$here/../.." && pwd)/build/release/apps/barnes; fi
fi
for p in barnes barnes-mpi barnes-serial; do
  [[ -x $bin/$p ]] || { echo "barnes hybrid.sh: no $bin/$p (build it, or --bin DIR)" >&2; exit 1; }
done
[[ -z $old || -x $old/barnes ]] || { echo "barnes hybrid.sh: no $old/barnes (--old DIR)" >&2; exit 1; }
for s in $shapes; do
  r=${s%x*} t=${s#*x}
  [[ $s == *x* && $r =~ ^[0-9]+$ && $t =~ ^[0-9]+$ && $((r * t)) -eq $workers ]] ||
    { echo "barnes hybrid.sh: shape '$s' is not RANKSxTHREADS with RANKS x THREADS = $workers" >&2; exit 2; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1 ANTHEAP_STATS=off
mkdir -p "$out" || exit 1
csv=$out/barnes-hybrid.csv log=$out/hybrid.log
rm -f "$csv"
: >"$log"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run=(--bodies "$bodies" --steps "$steps" --quiet)
echo "barnes hybrid.sh: $(date -u +%FT%TZ) $(nproc) cores; $bin; W=$workers shapes=$shapes" \
     "bodies=$bodies steps=$steps rounds=$rounds" | tee -a "$log"
if [[ $check -eq 1 ]]; then
  t0=$SECONDS
  "$bin/barnes-serial" "${run[@]}" --positions "$tmp/serial.txt" >>"$log" 2>&1 ||
    { echo "barnes hybrid.sh: the serial run failed (see $log)" >&2; exit 1; }
  echo "barnes hybrid.sh: serial run $((SECONDS - t0))s (its positions check every run)" | tee -a "$log"
fi
fails=0
one() { # ROUND NP PROGRAM ARGS...
  local k=$1 np=$2 t0=$SECONDS; shift 2
  echo "== round $k: mpirun -np $np $*" >>"$log"
  rm -f "$tmp/run.txt"
  timeout "$limit" mpirun --bind-to none -np "$np" "$@" "${run[@]}" --figure "r$k" --csv "$csv" \
    --positions "$tmp/run.txt" >>"$log" 2>&1
  local rc=$?
  if [[ $rc -ne 0 ]] || { [[ $check -eq 1 ]] && ! cmp -s "$tmp/run.txt" "$tmp/serial.txt"; }; then
    fails=$((fails + 1))
    echo "barnes hybrid.sh: round $k: FAILED (exit $rc) or not the serial positions: $*" >&2
  fi
  echo "barnes hybrid.sh: round $k: $((SECONDS - t0))s: ${*##*/}" >&2
}
single() { # ROUND [DIR TAG-PREFIX]
  one "$1" $((workers + 1)) "${2:-$bin}/barnes" --antheap-schedulers 1 ${3:+--tag "$3$workers"}
}
hybrid() {
  local s
  for s in $shapes; do
    one "$1" $((${s%x*} + 1)) "${2:-$bin}/barnes" --antheap-schedulers 1 --threads "${s#*x}" \
      ${3:+--tag "$3$s"}
  done
}
both() { # ROUND [DIR TAG-PREFIX]: the hybrids first in odd rounds
  if (($1 % 2)); then hybrid "$@"; single "$@"; else single "$@"; hybrid "$@"; fi
}
for ((k = 1; k <= rounds; k++)); do
  if [[ -z $old ]]; then both "$k"
  elif ((k % 2)); then both "$k"; both "$k" "$old" old:
  else both "$k" "$old" old:; both "$k"; fi
  if [[ $mpi -eq 1 ]]; then
    one "$k" "$workers" "$bin/barnes-mpi"
    for s in $shapes; do one "$k" "${s%x*}" "$bin/barnes-mpi" --threads "${s#*x}"; done
  fi
done
# the table: per round, each run's total and its ratio to the W-rank antheap run's
awk -F, -v w="$workers" '
  NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
  { r = $c["figure"]; n[r]++; m[r, n[r]] = $c["mode"]; t[r, n[r]] = $c["tag"]
    tot[r, n[r]] = $c["total_s"]; cmp_[r, n[r]] = $c["compute_s"]; bar[r, n[r]] = $c["barrier_s"]
    wc[r, n[r]] = $c["worker_comm_s"]
    side[r, n[r]] = $c["tag"] ~ /^old:/ ? "old" : "new"
    if ($c["mode"] == "antheap") ref[r, side[r, n[r]]] = $c["total_s"]
    if (!(r in seen)) { seen[r] = 1; rs[++nr] = r } }
  END {
    printf "%-6s %-16s %-10s %9s %9s %9s %9s %9s\n", "round", "mode", "tag", "total_s", "x_" w,
           "compute", "w_comm", "barrier"
    for (i = 1; i <= nr; i++) { r = rs[i]
      for (j = 1; j <= n[r]; j++) {
        x = "-"
        if (((r, side[r, j]) in ref) && ref[r, side[r, j]] > 0)
          x = sprintf("%.3f", tot[r, j] / ref[r, side[r, j]])
        printf "%-6s %-16s %-10s %9.4f %9s %9.4f %9.4f %9.4f\n", r, m[r, j], t[r, j], tot[r, j],
               x, cmp_[r, j], wc[r, j], bar[r, j] } } }' "$csv" | tee -a "$log"
echo "barnes hybrid.sh: x_$workers = total_s / the $workers-rank antheap run of the round (the goal: <= 1" \
     "for ${shapes}); $fails failed runs; $csv, $log" | tee -a "$log"
[[ $fails -eq 0 ]]

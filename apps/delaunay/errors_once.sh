#!/usr/bin/env bash
# apps/delaunay/errors_once.sh: the parallel program says each error once, not once per worker
# (every worker reads the input and parses the arguments; one of them speaks). Runs the command
# and counts the lines of its output that carry "error". A ctest entry.
# Usage: errors_once.sh MPIEXEC NP PROGRAM ARGS...
set -uo pipefail
[[ $# -ge 3 ]] || { sed -n '2,5p' "$0"; exit 2; }
mpiexec=$1 np=$2; shift 2
out=$("$mpiexec" --oversubscribe --bind-to none -np "$np" "$@" 2>&1)
echo "$out" | sed 's/^/  | /'
lines=$(grep -c "error" <<<"$out")
echo "errors_once: $lines error line(s) from $np ranks"
[[ $lines -eq 1 ]] && echo "errors_once: 1 passed, 0 failed" || { echo "errors_once: 0 passed, 1 failed"; exit 1; }

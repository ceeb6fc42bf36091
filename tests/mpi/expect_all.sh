#!/bin/sh
# expect_all.sh PATTERN... -- COMMAND...: run COMMAND (its output shown), then pass only if every
# PATTERN (an extended regular expression) matches some line of its output, whatever its exit
# status (a job that a check stops on purpose exits non-zero). For tests whose output comes
# from several processes in any order, where one ctest regular expression cannot say "all".
pats=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do pats="$pats
$1"; shift; done
[ "$1" = "--" ] || { echo "expect_all.sh: usage: PATTERN... -- COMMAND..." >&2; exit 2; }
shift
log=$(mktemp) || exit 2
"$@" >"$log" 2>&1
status=$?
cat "$log"
bad=0
printf '%s\n' "$pats" | while IFS= read -r p; do
  [ -z "$p" ] && continue
  grep -Eq -- "$p" "$log" || { echo "expect_all.sh: MISSING in the output: $p"; exit 1; }
done || bad=1
rm -f "$log"
echo "expect_all.sh: the command exited with $status; every pattern $( [ $bad = 0 ] && echo found || echo 'NOT found')"
exit $bad

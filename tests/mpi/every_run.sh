#!/bin/sh
# every_run.sh N PATTERN -- COMMAND...: run COMMAND N times; pass only if the output of every
# run (stdout and stderr, whatever its exit status) has a line matching PATTERN (an extended
# regular expression). For messages that must survive a launcher ending the job: a race shows
# in some runs only. Prints the output of the first run that misses it.
n=$1 pat=$2
shift 2
[ "$1" = "--" ] || { echo "every_run.sh: usage: N PATTERN -- COMMAND..." >&2; exit 2; }
shift
log=$(mktemp) || exit 2
i=1
while [ "$i" -le "$n" ]; do
  "$@" >"$log" 2>&1
  if ! grep -Eq -- "$pat" "$log"; then
    cat "$log"
    rm -f "$log"
    echo "every_run.sh: run $i of $n: MISSING in the output: $pat"
    exit 1
  fi
  i=$((i + 1))
done
tail -5 "$log"
rm -f "$log"
echo "every_run.sh: all $n runs printed: $pat"

#!/bin/sh
# expect_fail.sh PATTERN COMMAND...: run COMMAND; succeed only when it exits non-zero AND its
# output (stdout and stderr) matches the extended regular expression PATTERN. For ctest
# checks that a failure is detected (WILL_FAIL would also accept a crash).
pattern=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -eq 0 ]; then
  echo "expect_fail: the command succeeded; a failure was expected" >&2
  exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq "$pattern"; then
  echo "expect_fail: exit status $rc, but no line matches: $pattern" >&2
  exit 1
fi
echo "expect_fail: failed as expected (exit status $rc)"

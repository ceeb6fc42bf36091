#!/bin/sh
# tests/help_check.sh PROG [ARGS...]: the check that a program's --help works without mpirun:
# `PROG --help ARGS` must exit 0 and print, as its first line on stdout, a usage line
# ("usage: ..."). Open MPI is pointed at a messaging component that does not exist, so a
# program that starts MPI before it looks at --help fails here (its MPI_Init aborts) rather
# than passing as a singleton; programs without MPI do not notice.
if [ $# -lt 1 ]; then
  echo "usage: tests/help_check.sh PROG [ARGS...]" >&2
  exit 2
fi
prog=$1
shift
out=$(OMPI_MCA_pml=antheap_help_check_no_mpi "$prog" --help "$@" </dev/null)
rc=$?
first=$(printf '%s\n' "$out" | head -n 1)
if [ $rc -ne 0 ]; then
  echo "help_check: FAILED: $prog --help exited with status $rc" >&2
  exit 1
fi
case $first in
  "usage: "*) ;;
  *)
    echo "help_check: FAILED: the first line of $prog --help is not a usage line: '$first'" >&2
    exit 1
    ;;
esac
echo "help_check: $(basename "$prog") --help: exit 0, first line: $first"

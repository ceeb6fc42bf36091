# scripts/env.sh: sourced by the scripts; environment every antheap job needs.
# Open MPI refuses to run as root unless told; CI runs as root on 2 cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Oversubscribe: more ranks than cores is the normal case on CI and laptops.
export OMPI_MCA_rmaps_base_oversubscribe=1
# Let the ranks yield the core when idle, so oversubscribed jobs do not crawl.
export OMPI_MCA_mpi_yield_when_idle=1
ANTHEAP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export ANTHEAP_ROOT
ANTHEAP_JOBS=$(nproc 2>/dev/null || echo 2)
export ANTHEAP_JOBS
# ah_build DIR TYPE [cmake args...]: configure and build into DIR, saying where the log goes
# and showing progress (a line each tenth of the build, naming what it is at). AH_TARGETS, when
# set, builds only those targets (space-separated).
ah_build() {
  local dir=$1 type=$2; shift 2
  mkdir -p "$dir" || return 1
  echo "antheap: configuring $dir ($type); log: $dir.configure.log"
  cmake -S "$ANTHEAP_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE="$type" "$@" >"$dir.configure.log" 2>&1 \
    || { cat "$dir.configure.log" >&2; echo "antheap: error: cmake configure failed ($dir)" >&2; return 1; }
  local targets=()
  [[ -n ${AH_TARGETS:-} ]] && read -ra targets <<<"--target $AH_TARGETS"
  echo "antheap: building with $ANTHEAP_JOBS jobs; log: $dir.build.log"
  cmake --build "$dir" -j "$ANTHEAP_JOBS" "${targets[@]}" 2>&1 | tee "$dir.build.log" | ah_progress
  if [[ ${PIPESTATUS[0]} -ne 0 ]]; then
    tail -60 "$dir.build.log" >&2
    echo "antheap: error: build failed ($dir); full log $dir.build.log" >&2
    return 1
  fi
}
# ah_progress: make's "[ 42%] Building C object src/x/CMakeFiles/y.dir/z.c.o" lines, reduced to
# one line each tenth of the way ("antheap: build  40%  src/x/z.c").
ah_progress() {
  awk -v t0="$(date +%s)" '
    /^\[ *[0-9]+%\]/ {
      p = substr($0, 2, index($0, "%") - 2) + 0
      if (p < next_p) next
      what = $NF; sub(/.*CMakeFiles\/[^\/]*\.dir\//, "", what); sub(/\.o$/, "", what)
      printf "antheap: build %3d%%  %s  (%ds)\n", p, what, systime() - t0
      fflush(); next_p = p - p % 10 + 10
    }'
}

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
# ah_build DIR TYPE [cmake args...]: configure and build into DIR.
ah_build() {
  local dir=$1 type=$2; shift 2
  cmake -S "$ANTHEAP_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE="$type" "$@" >"$dir.configure.log" 2>&1 \
    || { cat "$dir.configure.log" >&2; echo "antheap: error: cmake configure failed ($dir)" >&2; return 1; }
  cmake --build "$dir" -j "$ANTHEAP_JOBS" >"$dir.build.log" 2>&1 \
    || { tail -60 "$dir.build.log" >&2; echo "antheap: error: build failed ($dir); full log $dir.build.log" >&2; return 1; }
}

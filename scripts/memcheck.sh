#!/usr/bin/env bash
# valgrind memcheck and PETSc -malloc_debug -malloc_dump runs of the program (tests/memcheck/memcheck.sh;
# docs/robustness.md), on the normal build: builds build/ if needed, then runs the checks. Silent but
# for the time when they pass; exit status 1 and the findings when not.
# Usage: scripts/memcheck.sh   Environment: GGLMBS_BUILD (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${GGLMBS_BUILD:-build}
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGGLMBS_WERROR=ON > /dev/null
cmake --build "$build" -j2 --target gglmbs_app > /dev/null
command -v valgrind > /dev/null || { echo "memcheck.sh: valgrind is not installed (Debian: apt-get install valgrind)" >&2; exit 1; }
start=$(date +%s)
bash tests/memcheck/memcheck.sh "$build/gglmbs" "$PWD" "$(command -v mpiexec)" "$(command -v valgrind)"
echo "memcheck.sh: passed in $(( $(date +%s) - start )) s"

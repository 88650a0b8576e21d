#!/usr/bin/env bash
# The whole test suite under AddressSanitizer (with LeakSanitizer) and UndefinedBehaviorSanitizer:
# configures build-asan/ with -DGGLMBS_SANITIZE=ON, builds it, and runs every ctest entry (MPI tests,
# the Python and ParaView tests that run the program, the installed-package test) plus every input of
# tests/inputs/bad through the program. Any sanitizer report fails the run (tests/sanitizers/).
# Usage: scripts/sanitize.sh [extra ctest arguments, e.g. -R test_app]
# Environment: GGLMBS_SANITIZE_BUILD (default build-asan), GGLMBS_JOBS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${GGLMBS_SANITIZE_BUILD:-build-asan}
jobs=${GGLMBS_JOBS:-2}
start=$(date +%s)
mkdir -p "$build"
if ! { cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGGLMBS_WERROR=ON -DGGLMBS_SANITIZE=ON && cmake --build "$build" -j"$jobs"; } > "$build/sanitize-build.log" 2>&1; then
  tail -n 40 "$build/sanitize-build.log" >&2
  echo "sanitize.sh: configuring or building $build failed (log: $build/sanitize-build.log)" >&2
  exit 1
fi
status=0
ctest --test-dir "$build" --output-on-failure -j"$jobs" "$@" || status=$?
echo "sanitize.sh: $(( $(date +%s) - start )) s (configure, build, ctest -j$jobs in $build)"
exit $status

#!/usr/bin/env bash
# Every input in tests/inputs/bad through the program: each must end the way a user error should, exit
# status 1 and a "gglmbs: error:" message, never a crash or a sanitizer exit status. In the
# GGLMBS_SANITIZE build (tests/sanitizers/sanitizers.cmake) this runs the error paths under ASan, UBSan
# and LeakSanitizer; test_sanitizer_reports then fails on any report they wrote.
# Silent when it passes.
#
# Usage: bad_inputs.sh <gglmbs program> <source dir>
set -uo pipefail
gglmbs=$1 source=$2
scratch=$(mktemp -d "${TMPDIR:-/tmp}/gglmbs_bad_inputs.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
failures=0 count=0
# One process without an Open MPI daemon (singleton): half the start-up time of each of the ~120 runs.
export OMPI_MCA_ess_singleton_isolated=1
for input in "$source"/tests/inputs/bad/*.yaml; do
  count=$((count + 1))
  name=$(basename "$input" .yaml)
  options=()
  # valid input that only the memory limit test_yaml sets refuses (without it: a 10^5-particle run)
  [ "$name" = memory_limit ] && options=(-mbs_memory_limit 100MiB)
  "$gglmbs" -i "$input" -mbs_output_dir "$scratch/$name" "${options[@]}" > "$scratch/out" 2> "$scratch/err"
  status=$?
  if [ $status != 1 ] || ! grep -q '^gglmbs: error: ' "$scratch/err"; then
    echo "bad_inputs: $name: exit status $status (expected 1 and a 'gglmbs: error:' line); stderr:" >&2
    head -n 20 "$scratch/err" >&2
    failures=$((failures + 1))
  fi
done
[ $count -gt 0 ] || { echo "bad_inputs: no inputs in $source/tests/inputs/bad" >&2; exit 1; }
[ $failures = 0 ] || { echo "bad_inputs: $failures of $count inputs failed" >&2; exit 1; }

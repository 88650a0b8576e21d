#!/usr/bin/env bash
# Runs the paper examples (every scheme) and chain1000 with two builds of gglmbs and compares the final
# states and diagnostics byte for byte (their provenance comments aside): the check that a refactoring changed
# no result.
# Usage: scripts/same_states.sh OLD_GGLMBS NEW_GGLMBS [extra options for both]
set -euo pipefail
old=$1 new=$2
shift 2
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
run() { # name input options...
  local name=$1 input=$2
  shift 2
  for which in old new; do
    local bin=$old
    [ $which = new ] && bin=$new
    mkdir -p "$work/$which/$name"
    "$bin" -i "$input" -mbs_output_dir "$work/$which/$name" -mbs_write_state "$work/$which/$name/state.csv" -mbs_progress 0 "$@" >/dev/null
  done
  # the provenance comments name the build and the output directory: compared are the results
  if cmp -s <(grep -v '^#' "$work/old/$name/state.csv") <(grep -v '^#' "$work/new/$name/state.csv") &&
     cmp -s <(grep -v '^#' "$work/old/$name/diagnostics.csv") <(grep -v '^#' "$work/new/$name/diagnostics.csv"); then
    echo "same      $name"
  else
    echo "DIFFERENT $name"
    status=1
  fi
}
for scheme in em em-g vi-s vi-a vi-b; do
  run pendulum3d-$scheme inputs/pendulum3d.yaml -mbs_scheme $scheme "$@"
  run heavy_top-$scheme inputs/heavy_top.yaml -mbs_scheme $scheme "$@"
  run four_particle-$scheme inputs/four_particle.yaml -mbs_scheme $scheme "$@"
done
run chain1000 inputs/chain1000.yaml "$@"
run rigid_chain1000 inputs/rigid_chain1000.yaml -mbs_t_end 0.05 "$@"
exit $status

#!/usr/bin/env bash
# Cost of the outputs of issue 5 on chain1000 (EM, h = 1e-3, 300 steps, one rank): trajectory (XDMF +
# HDF5) every 10 steps and every step, a checkpoint every 100 steps and every step, -mbs_monitor; the
# wall time per step against the plain run, and the time per write derived from it.
# Usage: benchmarks/output.sh [build dir (default build)]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
exe="$build/gglmbs"
[ -x "$exe" ] || { echo "output.sh: no executable $exe (build first, or pass the build directory)" >&2; exit 1; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
steps=300
run() { # label, writes per run, options...
  local label=$1 writes=$2
  shift 2
  local line
  line=$("$exe" -i "$root/inputs/chain1000.yaml" -mbs_t_end 0.3 -mbs_output_every 10 -mbs_output_dir "$OUT/$RANDOM" "$@" | grep "steps in" | tail -1)
  local wall
  wall=$(sed -E 's/.* steps in ([0-9.]+) s.*/\1/' <<< "$line")
  echo "$label|$writes|$wall"
}
echo "output.sh: $(date -u +%F), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
base=$(run "plain" 0 | cut -d'|' -f3)
printf '| configuration | writes | wall (s) | per step (ms) | per write (ms) |\n|---|---|---|---|---|\n'
printf '| plain | 0 | %s | %.2f | - |\n' "$base" "$(awk "BEGIN{print 1000 * $base / $steps}")"
while IFS='|' read -r label writes wall; do
  # the cost per write is resolved only with a write every step; a few writes vanish in the noise (about 3 %)
  if [ "$writes" -ge 100 ]; then per=$(awk "BEGIN{printf \"%.2f\", 1000 * ($wall - $base) / $writes}"); else per="(within noise)"; fi
  printf '| %s | %s | %s | %.2f | %s |\n' "$label" "$writes" "$wall" "$(awk "BEGIN{print 1000 * $wall / $steps}")" "$per"
done < <(
  run "trajectory every 10" 31 -mbs_trajectory xdmf -mbs_trajectory_every 10
  run "trajectory every step" 301 -mbs_trajectory xdmf -mbs_trajectory_every 1
  run "checkpoint every 100" 3 -mbs_checkpoint_every 100
  run "checkpoint every step" 300 -mbs_checkpoint_every 1
  run "-mbs_monitor (diagnostics every step)" 301 -mbs_monitor
)

#!/usr/bin/env bash
# Four-particle stability study of seed paper 004 (Kinon, Betsch, Schneider 2023), Sect. 6.3 / Figs. 31-33.
# Runs every (scheme, h) case of the study to T = 1000 (KLU direct solver), plus, at h = 0.675, EM and EM-G
# with several Newton settings, and writes benchmarks/paper/stability.md (via stability.py). The study
# follows the blow-ups, so the run-time energy check is off (-mbs_energy_divergence 0).
# Usage: benchmarks/paper/stability.sh [build dir] [output dir for the runs' CSVs (default: a temp dir, removed)]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
build=${1:-build}
if [ -n "${2:-}" ]; then out=$2; mkdir -p "$out"; keep=1; else out=$(mktemp -d); keep=0; fi
T=1000
input=inputs/four_particle.yaml
cases="$out/cases.tsv"
: > "$cases"
start=$(date +%s)

# run <tag> <scheme> <h> <extra options...>
run() {
  local tag=$1 scheme=$2 h=$3; shift 3
  local steps every
  steps=$(python3 -c "import math; print(math.ceil($T/$h - 1e-9))")
  every=1; [ "$steps" -gt 25000 ] && every=5
  local cmd=("$build/gglmbs" -i "$input" -mbs_scheme "$scheme" -mbs_dt "$h" -mbs_t_end "$T"
             -mbs_output_dir "$out/$tag" -mbs_output_every "$every" -pc_factor_mat_solver_type klu -mbs_jacobian_reuse 0 -mbs_energy_divergence 0 "$@")
  local t0 t1 rc=0
  t0=$(date +%s.%N)
  "${cmd[@]}" > "$out/$tag.stdout" 2> "$out/$tag.stderr" || rc=$?
  t1=$(date +%s.%N)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$tag" "$scheme" "$h" "$rc" \
    "$(python3 -c "print('%.2f' % ($t1 - $t0))")" "$every" "${cmd[*]}" >> "$cases"
  echo "$tag: rc=$rc, $(tail -n 1 "$out/$tag.stdout" "$out/$tag.stderr" 2>/dev/null | grep -h '^gglmbs' | tail -n 1 | cut -c1-160)"
}

for h in 0.01 0.04; do
  for s in vi-s vi-a vi-b em em-g; do run "$s-h$h" "$s" "$h"; done
done
for s in vi-s vi-b vi-a em em-g; do run "$s-h0.05" "$s" 0.05; done
for s in vi-s vi-b; do run "$s-h0.045" "$s" 0.045; done   # extra: between the paper's 0.04 (stable) and 0.05
for s in vi-a em em-g; do run "$s-h0.25" "$s" 0.25; done
for s in em em-g; do
  run "$s-h0.675" "$s" 0.675
  run "$s-h0.675-l2" "$s" 0.675 -snes_linesearch_type l2
  run "$s-h0.675-adv" "$s" 0.675 -mbs_predictor advanced
  run "$s-h0.675-adv-l2" "$s" 0.675 -mbs_predictor advanced -snes_linesearch_type l2
  run "$s-h0.675-bt" "$s" 0.675 -snes_linesearch_type bt
  run "$s-h0.675-adv-bt" "$s" 0.675 -mbs_predictor advanced -snes_linesearch_type bt
  run "$s-h0.675-adapt" "$s" 0.675 -mbs_adapt
  run "$s-h0.675-adv-adapt" "$s" 0.675 -mbs_predictor advanced -mbs_adapt
done

end=$(date +%s)
python3 "$here/stability.py" "$out" "$T" "$((end - start))" > "$here/stability.md"
echo "wrote $here/stability.md (total $((end - start)) s)"
[ "$keep" = 1 ] || rm -rf "$out"

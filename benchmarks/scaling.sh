#!/usr/bin/env bash
# Strong and weak scaling of gglmbs (issue 17, part 5): particle chains, rigid chains and nets, EM, h = 1e-3, the
# default solvers (one rank: UMFPACK on chains, Schur-AMG on large nets; several ranks: the interface LU on chains,
# Schur-AMG on large nets). Runs every model at every rank count, writes a CSV, SVG plots (time per step, speed-up and
# parallel efficiency against ranks) and a markdown report with a weak-scaling projection to 16 ... 1024 ranks from
# the measured per-rank cost and communication (its assumptions are printed with it).
#
# Usage: benchmarks/scaling.sh [build dir (default build)]
# Environment (defaults in brackets); nothing is specific to this machine:
#   RANKS ["1 2"]                      rank counts
#   STUDIES ["strong weak"]
#   MODELS ["chain rigid net"]
#   STRONG ["chain:100000 rigid:10000 net:316"]   the fixed model: particles, rigid links, net side
#   WEAK ["chain:50000 rigid:5000 net:50000"]     the model per rank: particles, links, net particles (side rounded)
#   STEPS ["chain:20 rigid:20 net:5"]  steps per run
#   MPIEXEC ["mpiexec --oversubscribe"] how to start P ranks ("$MPIEXEC -n P"), e.g. "srun" on a cluster
#   EXTRA []                           options added to every run
#   BUDGET [1800]                      seconds per run; a run over it is killed and reported
#   OUT [a new /tmp/gglmbs-scaling.XXXX, kept]   inputs, runs, scaling.csv, scaling_*.svg, report.md
#   PROJECT ["16 32 64 128 256 512 1024"], LATENCY [2e-6 s], BANDWIDTH [1e10 bytes/s]   the projection's ranks and
#                                      network (defaults: an InfiniBand-class cluster)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
exe="$build/gglmbs"
[ -x "$exe" ] || { echo "scaling.sh: no executable $exe (build first, or pass the build directory)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "scaling.sh: /usr/bin/time is missing (peak memory): apt-get install time" >&2; exit 1; }
RANKS=${RANKS:-1 2}
STUDIES=${STUDIES:-strong weak}
MODELS=${MODELS:-chain rigid net}
STRONG=${STRONG:-chain:100000 rigid:10000 net:316}
WEAK=${WEAK:-chain:50000 rigid:5000 net:50000}
STEPS=${STEPS:-chain:20 rigid:20 net:5}
MPIEXEC=${MPIEXEC:-mpiexec --oversubscribe}
EXTRA=${EXTRA:-}
BUDGET=${BUDGET:-1800}
PROJECT=${PROJECT:-16 32 64 128 256 512 1024}
LATENCY=${LATENCY:-2e-6}
BANDWIDTH=${BANDWIDTH:-1e10}
OUT=${OUT:-$(mktemp -d /tmp/gglmbs-scaling.XXXX)}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT/inputs"
res="$OUT/runs.jsonl"
: > "$res"
echo "scaling.sh: runs in $OUT" >&2

lookup() { # key list: the value of key:value in list
  for kv in $2; do [ "${kv%%:*}" = "$1" ] && { echo "${kv#*:}"; return; }; done
  echo "scaling.sh: no entry for $1 in '$2'" >&2
  exit 1
}

make_input() { # model size file
  case $1 in
    chain) sed -E "s/count: 1000,/count: $2,/" "$root/inputs/chain1000.yaml" > "$3" ;;
    rigid) sed -E "s/count: 1000$/count: $2/" "$root/inputs/rigid_chain1000.yaml" > "$3" ;;
    net) "$here/net_yaml.sh" "$2" > "$3" ;;
  esac
}

for study in $STUDIES; do
  for model in $MODELS; do
    steps=$(lookup "$model" "$STEPS")
    tend=$(python3 -c "print(repr($steps * 0.001))")
    for np in $RANKS; do
      if [ "$study" = strong ]; then
        size=$(lookup "$model" "$STRONG")
      else
        size=$(lookup "$model" "$WEAK")
        if [ "$model" = net ]; then size=$(python3 -c "import math; print(max(2, round(math.sqrt($size * $np))))")
        else size=$((size * np)); fi
      fi
      in="$OUT/inputs/$model-$size.yaml"
      [ -f "$in" ] || make_input "$model" "$size" "$in"
      dir="$OUT/$study-$model-$size-np$np"
      rm -rf "$dir"
      mkdir -p "$dir"
      echo "$(date +%T) $study, $model of $size, $np rank(s)" >&2
      # shellcheck disable=SC2086
      args=(-i "$in" -mbs_t_end "$tend" -mbs_output_every 10 -mbs_output_dir "$dir/out" -log_view ":$dir/log.txt"
        -mbs_stepper_view ":$dir/view.txt" $EXTRA)
      set +e
      # one /usr/bin/time per rank (OpenMPI's OMPI_COMM_WORLD_RANK, Slurm's SLURM_PROCID or PMI_RANK names its file)
      # shellcheck disable=SC2086
      timeout "$BUDGET" $MPIEXEC -n "$np" sh -c \
        'r=${OMPI_COMM_WORLD_RANK:-${SLURM_PROCID:-${PMI_RANK:-0}}}; exec /usr/bin/time -v -o "$0/time.$r.txt" "$@"' \
        "$dir" "$exe" "${args[@]}" < /dev/null > "$dir/stdout" 2> "$dir/stderr"
      rc=$?
      set -e
      note=()
      [ $rc = 124 ] && note=("note=killed after $BUDGET s")
      python3 "$here/scale_lib.py" parse "$dir" "study=$study" "model=$model" "size=$size" "ranks=$np" "${note[@]}" >> "$res"
    done
  done
done

{
  echo "## Scaling ($(date +%F))"
  echo
  echo "Command: \`benchmarks/scaling.sh ${build#"$root"/}\` (RANKS=\"$RANKS\", STUDIES=\"$STUDIES\", MODELS=\"$MODELS\", STRONG=\"$STRONG\", WEAK=\"$WEAK\", STEPS=\"$STEPS\"$([ -n "$EXTRA" ] && echo ", EXTRA=\"$EXTRA\""))."
  echo "Machine: $(python3 "$here/scale_lib.py" machine). Load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Tree at commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" diff --quiet 2>/dev/null || echo ' + uncommitted changes')."
  echo
  python3 "$here/scaling.py" "$res" "$OUT" "$PROJECT" "$LATENCY" "$BANDWIDTH"
} | tee "$OUT/report.md"
echo "scaling.sh: $OUT/scaling.csv, $OUT/scaling_strong.svg, $OUT/scaling_weak.svg, $OUT/report.md" >&2

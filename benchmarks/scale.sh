#!/usr/bin/env bash
# Scaling study of issue 4: particle chains (template inputs/chain1000.yaml) and rigid chains (template
# inputs/rigid_chain1000.yaml, spherical joints) of N = 10 .. 10^5 bodies, same link length, mass and
# h = 1e-3 as the templates (only `count` changes), EM and VI-B, STEPS (100) steps each with output only at
# the first and last step. Per run: time per step and mean Newton iterations (the program's summary line),
# the -log_view events (MbsResidual, MbsJacobian = assembly; PCSetUp = LU factorization, KSPSolve = LU
# solves), peak memory (/usr/bin/time -v). Fits the exponent of time per step vs N over 10^3..10^5, and runs
# the chain1000 target (inputs/chain1000.yaml as it is, 1000 steps) with the default solver, Newton proper
# (-mbs_jacobian_reuse 0) and the advanced predictor. Prints markdown (command, machine, date, tables).
#
# Usage: benchmarks/scale.sh [build dir (default build)] [extra gglmbs options for every run]
# Environment:
#   OUT=dir           where inputs and run directories go (default: a new /tmp/gglmbs-scale.XXXX, kept)
#   PARTICLE_SIZES    default "10 100 1000 10000 100000"
#   RIGID_SIZES       default "10 100 1000 10000 100000"
#   SCHEMES           default "em vi-b"
#   STEPS             default 100
#   MILLION=1         also a 10^6-particle chain (probed with one step first; fewer steps, stated, if 100 would
#                     exceed BUDGET)
#   Every size is skipped if the previous size's peak RSS, scaled linearly in N plus 20 %, exceeds 85 % of the
#   available memory.
#   FALLBACK_OPTS     when the probe of a large size fails in the LU factorization (UMFPACK's 32-bit workspace
#                     overflows near 10^6 particles / 10^5 rigid links), probe again and run with these options
#                     (default "-pc_factor_mat_solver_type klu -mat_klu_use_btf 0"; empty: no retry)
#   STOP_ON_FAIL      1 (default): after a failed run (Newton did not converge), skip the larger sizes of that
#                     chain and scheme
#   BUDGET            seconds per run (default 600); a run that exceeds it is killed and larger sizes of the
#                     same chain and scheme are skipped
#   PROBE_MIN         sizes >= this are first probed with one step to choose the number of steps (default 100000)
#   TARGET_REPS       repetitions of each chain1000 target configuration, best kept (default 3; 0 skips)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-build}
shift || true
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
exe="$build/gglmbs"
[ -x "$exe" ] || { echo "scale.sh: no executable $exe (build first, or pass the build directory)" >&2; exit 1; }
# The binary must not be older than the last commit that changed the sources it is built from.
if [ "$(git -C "$root" log -1 --format=%ct -- src include CMakeLists.txt 2>/dev/null || echo 0)" -gt "$(date -r "$exe" +%s)" ]; then
  echo "scale.sh: warning: $exe is older than the last commit to $root/src, include or CMakeLists.txt: rebuild it" >&2
fi
if [ ! -x /usr/bin/time ]; then
  echo "scale.sh: /usr/bin/time is missing (peak memory): apt-get install time" >&2
  exit 1
fi
extra=("$@")
PARTICLE_SIZES=${PARTICLE_SIZES:-"10 100 1000 10000 100000"}
RIGID_SIZES=${RIGID_SIZES:-"10 100 1000 10000 100000"}
SCHEMES=${SCHEMES:-"em vi-b"}
STEPS=${STEPS:-100}
MILLION=${MILLION:-0}
BUDGET=${BUDGET:-600}
PROBE_MIN=${PROBE_MIN:-100000}
TARGET_REPS=${TARGET_REPS:-3}
STOP_ON_FAIL=${STOP_ON_FAIL:-1}
FALLBACK_OPTS=${FALLBACK_OPTS-"-pc_factor_mat_solver_type klu -mat_klu_use_btf 0"}
OUT=${OUT:-$(mktemp -d /tmp/gglmbs-scale.XXXX)}
mkdir -p "$OUT/inputs"
res="$OUT/results.jsonl"
: > "$res"
lib="$here/scale_lib.py"
h=0.001
echo "scale.sh: runs in $OUT" >&2
load0=$(cut -d' ' -f1-3 /proc/loadavg)
# Sample the 1-minute load average every 30 s (this benchmark's own process counts 1).
( while :; do cut -d' ' -f1 /proc/loadavg >> "$OUT/load.txt"; sleep 30; done ) &
sampler=$!
trap 'kill $sampler 2>/dev/null || true' EXIT

# run DIR TEND ARGS... : one run of gglmbs with log_view and /usr/bin/time; returns the exit status
run() {
  local dir=$1 tend=$2
  shift 2
  rm -rf "$dir"
  mkdir -p "$dir"
  set +e
  /usr/bin/time -v -o "$dir/time.txt" timeout "$BUDGET" "$exe" "$@" -mbs_t_end "$tend" -mbs_output_dir "$dir/out" \
    -log_view ":$dir/log.txt" "${extra[@]}" > "$dir/stdout" 2> "$dir/stderr"
  local rc=$?
  set -e
  return $rc
}

tend_of() { python3 -c "print(repr($1 * $h))"; }

make_input() {  # kind N -> path
  local kind=$1 n=$2 f
  if [ "$kind" = particle ]; then
    f="$OUT/inputs/chain$n.yaml"
    sed -E "s/count: 1000,/count: $n,/" "$root/inputs/chain1000.yaml" > "$f"
  else
    f="$OUT/inputs/rigid_chain$n.yaml"
    sed -E "s/^( *count:) 1000$/\1 $n/" "$root/inputs/rigid_chain1000.yaml" > "$f"
  fi
  grep -q "count: $n\b" "$f" || { echo "scale.sh: could not set count in $f" >&2; exit 1; }
  echo "$f"
}

avail_kib() { awk '/MemAvailable/ {print $2}' /proc/meminfo; }

for kind in particle rigid; do
  sizes=$PARTICLE_SIZES
  [ "$kind" = rigid ] && sizes=$RIGID_SIZES
  [ "$kind" = particle ] && [ "$MILLION" = 1 ] && sizes="$sizes 1000000"
  for s in $SCHEMES; do
    stop=""
    prev_rss=""
    for n in $sizes; do
      dir="$OUT/$kind-$n-$s"
      meta=(study=scale kind=$kind N=$n scheme_opt=$s "opts=${extra[*]}")
      if [ -n "$stop" ]; then
        mkdir -p "$dir"
        python3 "$lib" parse "$dir" "${meta[@]}" "note=skipped: $stop" >> "$res"
        continue
      fi
      # Memory guard: the previous size's peak RSS scaled linearly in N, plus 20 %, must fit in 85 % of the
      # memory available now.
      if [ -n "$prev_rss" ]; then
        need=$(( prev_rss * 12 / 10 * n / prev_n ))
        if [ "$need" -gt $(( $(avail_kib) * 85 / 100 )) ]; then
          mkdir -p "$dir"
          python3 "$lib" parse "$dir" "${meta[@]}" "note=skipped: expected peak RSS $((need / 1024)) MiB (size $prev_n: $((prev_rss / 1024)) MiB, scaled) exceeds 85 % of the available $(( $(avail_kib) / 1024 )) MiB" >> "$res"
          stop="memory"
          continue
        fi
      fi
      in=$(make_input "$kind" "$n")
      steps=$STEPS
      lopts=()
      if [ "$n" -ge "$PROBE_MIN" ]; then
        echo "$(date +%T) probe $kind N=$n $s (1 step)" >&2
        ok=1
        run "$dir-probe" "$(tend_of 1)" -i "$in" -mbs_scheme "$s" -mbs_output_every 1 || ok=0
        if [ $ok = 0 ] && [ -n "$FALLBACK_OPTS" ] && grep -q "Error in external library\|MatLUFactor\|Out of memory" "$dir-probe/stderr"; then
          why=$(grep -m1 -o "[a-zA-Z_]*_numeric failed\|Error in external library\|Out of memory" "$dir-probe/stderr" || true)
          # shellcheck disable=SC2206
          lopts=($FALLBACK_OPTS)
          meta+=("note=the default LU failed at this size ($why, peak RSS $(( $(awk '/Maximum resident/ {print $NF}' "$dir-probe/time.txt") / 1024 )) MiB); run with $FALLBACK_OPTS")
          mv "$dir-probe" "$dir-probe-default"
          echo "  default LU failed ($why); probing with $FALLBACK_OPTS" >&2
          ok=1
          run "$dir-probe" "$(tend_of 1)" -i "$in" -mbs_scheme "$s" -mbs_output_every 1 "${lopts[@]}" || ok=0
        fi
        if [ $ok = 1 ]; then
          t1=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['time'])" "$(python3 "$lib" parse "$dir-probe" study=probe)")
          if python3 -c "import sys; sys.exit(0 if $t1 * $STEPS <= 0.9 * $BUDGET else 1)"; then
            steps=$STEPS
          else
            # The first step carries the set-up (symbolic LU, COO pattern, more refreshes): time 3 steps and
            # take the cost of the later ones as (t3 - t1) / 2.
            run "$dir-probe3" "$(tend_of 3)" -i "$in" -mbs_scheme "$s" -mbs_output_every 1 "${lopts[@]}" || true
            t3=$(python3 -c "import json,sys; print(json.loads(sys.argv[1]).get('time') or 1e30)" "$(python3 "$lib" parse "$dir-probe3" study=probe)")
            steps=$(python3 -c "per = max(($t3 - $t1) / 2, 1e-9); print($STEPS if $t1 + per * ($STEPS - 1) <= 0.9 * $BUDGET else max(2, int((0.9 * $BUDGET - $t1) / per) + 1))")
            echo "  3 steps: $t3 s" >&2
          fi
          echo "  probe: first step $t1 s -> $steps steps" >&2
        else
          mkdir -p "$dir"
          python3 "$lib" parse "$dir-probe" "${meta[@]}" "note=skipped: one step failed or did not finish within $BUDGET s" >> "$res"
          stop="size $n: one step failed or did not finish within $BUDGET s"
          continue
        fi
      fi
      [ ${#lopts[@]} -gt 0 ] && meta+=("opts=$(echo ${lopts[*]} ${extra[*]})")
      [ "$steps" != "$STEPS" ] && meta+=("steps_note=$steps steps (100 would exceed the $BUDGET s budget)")
      echo "$(date +%T) $kind N=$n $s ($steps steps)" >&2
      if run "$dir" "$(tend_of "$steps")" -i "$in" -mbs_scheme "$s" -mbs_output_every "$STEPS" "${lopts[@]}"; then :; else
        rc=$?
        if [ $rc = 124 ]; then
          stop="size $n exceeded $BUDGET s"
          meta+=("note=killed after $BUDGET s")
        elif [ "$STOP_ON_FAIL" = 1 ]; then
          stop="size $n failed"
        fi
      fi
      python3 "$lib" parse "$dir" "${meta[@]}" >> "$res"
      prev_rss=$(awk '/Maximum resident/ {print $NF}' "$dir/time.txt" 2>/dev/null || echo "")
      prev_n=$n
      tail -n 1 "$res" | python3 -c "import json,sys; r=json.load(sys.stdin); print('  ', r.get('time'), 's,', r.get('its'), 'its,', r.get('rss_mib'), 'MiB', r.get('error', ''))" >&2
    done
  done
done

# chain1000 target: the input file as it is (1000 steps at h = 1e-3), one rank.
for rep in $(seq 1 "$TARGET_REPS"); do
  for cfg in "default|" "Newton proper|-mbs_jacobian_reuse 0" "advanced predictor|-mbs_predictor advanced" \
             "Newton proper + advanced predictor|-mbs_jacobian_reuse 0 -mbs_predictor advanced"; do
    label=${cfg%%|*}
    opts=${cfg#*|}
    dir="$OUT/target-$rep-${label// /_}"
    echo "$(date +%T) chain1000 target: $label ($rep/$TARGET_REPS)" >&2
    # shellcheck disable=SC2086
    run "$dir" 1 -i "$root/inputs/chain1000.yaml" -mbs_output_every 1000 $opts || true
    python3 "$lib" parse "$dir" study=target "label=$label" "opts=$(echo $opts ${extra[*]})" >> "$res"
  done
done

echo "## Scaling study ($(date +%F))"
echo
echo "Command: \`benchmarks/scale.sh ${build#"$root"/} ${extra[*]}\` (PARTICLE_SIZES=\"$PARTICLE_SIZES\", RIGID_SIZES=\"$RIGID_SIZES\", SCHEMES=\"$SCHEMES\", STEPS=$STEPS, MILLION=$MILLION, BUDGET=$BUDGET)."
kill $sampler 2>/dev/null || true
echo "Machine: $(python3 "$lib" machine)."
echo "Load: 1/5/15-min load average $load0 before the runs; 1-minute load average during the runs (sampled every 30 s, this benchmark counts 1): $(sort -n "$OUT/load.txt" | awk '{a[NR]=$1} END {printf "median %s, max %s", a[int((NR+1)/2)], a[NR]}')."
echo "Date: $(date '+%F %H:%M %Z'); tree at commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" diff --quiet 2>/dev/null || echo ' + uncommitted changes'); binary $exe built $(date -r "$exe" '+%F %H:%M %Z')."
echo
python3 "$lib" scale "$res"

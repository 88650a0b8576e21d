#!/usr/bin/env bash
# Strong scaling (issues 4 and 17): 1 vs 2 MPI ranks on the largest particle chain (CHAIN_N particles, template
# inputs/chain1000.yaml), a rigid chain (RIGID_N links, template inputs/rigid_chain1000.yaml) and a net (NET_N x NET_N
# particles, template inputs/net100x100.yaml), EM, h = 1e-3,
# with several linear-solver configurations per rank count. Per run: time per step, Newton iterations, the
# -log_view events (residual, Jacobian, LU factorization, solves), peak memory summed over the ranks
# (/usr/bin/time -v per rank), and the energy drift from diagnostics.csv (written every 10 steps), which
# shows whether Newton still converged to round-off. Speedups are against the fastest 1-rank configuration.
#
# Usage: benchmarks/strong.sh [build dir (default build)]
# Environment:
#   OUT=dir        runs (default: a new /tmp/gglmbs-strong.XXXX, kept)
#   CHAIN_N        default 100000;  CHAIN_STEPS default 100
#   RIGID_N        default 10000;   RIGID_STEPS default 20
#   NET_N          default 100 (a 100 x 100 net); NET_STEPS default 20
#   MODELS         default "chain rigid net"
#   BUDGET         seconds per run (default 600); a run that exceeds it is killed and reported
#   CHAIN_CONFIGS, RIGID_CONFIGS, NET_CONFIGS   override the configuration lists: lines "label|ranks|options[|max steps]"
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-build}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
exe="$build/gglmbs"
[ -x "$exe" ] || { echo "strong.sh: no executable $exe (build first, or pass the build directory)" >&2; exit 1; }
# The binary must not be older than the last commit that changed the sources it is built from.
if [ "$(git -C "$root" log -1 --format=%ct -- src include CMakeLists.txt 2>/dev/null || echo 0)" -gt "$(date -r "$exe" +%s)" ]; then
  echo "strong.sh: warning: $exe is older than the last commit to $root/src, include or CMakeLists.txt: rebuild it" >&2
fi
[ -x /usr/bin/time ] || { echo "strong.sh: /usr/bin/time is missing (peak memory): apt-get install time" >&2; exit 1; }
CHAIN_N=${CHAIN_N:-100000}
CHAIN_STEPS=${CHAIN_STEPS:-100}
NET_N=${NET_N:-100}
NET_STEPS=${NET_STEPS:-20}
RIGID_N=${RIGID_N:-10000}
RIGID_STEPS=${RIGID_STEPS:-20}
MODELS=${MODELS:-"chain rigid net"}
BUDGET=${BUDGET:-600}
OUT=${OUT:-$(mktemp -d /tmp/gglmbs-strong.XXXX)}
mkdir -p "$OUT/inputs"
res="$OUT/results.jsonl"
: > "$res"
lib="$here/scale_lib.py"
mpi=(mpiexec --allow-run-as-root --oversubscribe)
echo "strong.sh: runs in $OUT" >&2

krylov="-ksp_type gmres -ksp_pc_side right -ksp_rtol 1e-10 -ksp_max_it 200"
stag="-mbs_stagnation_tol 1e-8"
# The Schur-complement block preconditioner of docs/solvers.md (one rank; several ranks)
schur="-mbs_fieldsplit_split primal_dual -ksp_type gmres -ksp_pc_side right -ksp_rtol 1e-8 -pc_type fieldsplit -pc_fieldsplit_type schur -pc_fieldsplit_schur_fact_type lower -pc_fieldsplit_schur_precondition selfp -fieldsplit_primal_ksp_type preonly -fieldsplit_dual_ksp_type preonly -fieldsplit_dual_pc_type lu"
schur1="$schur -fieldsplit_primal_pc_type ilu -fieldsplit_dual_pc_factor_mat_solver_type klu"
schur2="$schur -fieldsplit_primal_pc_type bjacobi -fieldsplit_primal_sub_pc_type ilu -fieldsplit_dual_pc_factor_mat_solver_type mumps -fieldsplit_dual_mat_mumps_icntl_14 200"
# label|ranks|options[|steps]: the optional fourth field caps the steps of a configuration known to be slow
CHAIN_CONFIGS=${CHAIN_CONFIGS:-"UMFPACK (default on 1 rank)|1|
interface LU (default on 2 ranks)|2|
MUMPS|2|-mbs_parallel_lu mumps|20
SuperLU_DIST|2|-pc_factor_mat_solver_type superlu_dist|20"}
RIGID_CONFIGS=${RIGID_CONFIGS:-"UMFPACK (default on 1 rank)|1|
interface LU (default on 2 ranks)|2|
MUMPS|2|-mbs_parallel_lu mumps"}
NET_CONFIGS=${NET_CONFIGS:-"UMFPACK (default on 1 rank)|1|
MUMPS|1|-pc_factor_mat_solver_type mumps
Schur/selfp block preconditioner (ILU, KLU)|1|$schur1
MUMPS (default on 2 ranks)|2|
Schur/selfp block preconditioner (block Jacobi ILU, MUMPS)|2|$schur2
GMRES + ASM(overlap 1) / MUMPS|2|$krylov -pc_type asm -pc_asm_overlap 1 -sub_pc_type lu -sub_pc_factor_mat_solver_type mumps"}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
( while :; do cut -d' ' -f1 /proc/loadavg >> "$OUT/load.txt"; sleep 30; done ) &
sampler=$!
trap 'kill $sampler 2>/dev/null || true' EXIT

for model in $MODELS; do
  if [ "$model" = chain ]; then
    in="$OUT/inputs/chain$CHAIN_N.yaml"
    sed -E "s/count: 1000,/count: $CHAIN_N,/" "$root/inputs/chain1000.yaml" > "$in"
    steps=$CHAIN_STEPS
    configs=$CHAIN_CONFIGS
    name="particle chain, N = $CHAIN_N"
  elif [ "$model" = rigid ]; then
    in="$OUT/inputs/rigid_chain$RIGID_N.yaml"
    sed -E "s/count: 1000$/count: $RIGID_N/" "$root/inputs/rigid_chain1000.yaml" > "$in"
    steps=$RIGID_STEPS
    configs=$RIGID_CONFIGS
    name="rigid chain, N = $RIGID_N"
  else
    in="$OUT/inputs/net$NET_N.yaml"
    sed -E "s/count: \[100, 100\]/count: [$NET_N, $NET_N]/" "$root/inputs/net100x100.yaml" > "$in"
    steps=$NET_STEPS
    configs=$NET_CONFIGS
    name="net $NET_N x $NET_N"
  fi
  while IFS='|' read -r label np opts csteps; do
    [ -z "$label" ] && continue
    nsteps=$steps
    [ -n "$csteps" ] && [ "$csteps" -lt "$steps" ] && nsteps=$csteps
    tend=$(python3 -c "print(repr($nsteps * 0.001))")
    dir="$OUT/$model-$np-$(echo "$label" | tr -c 'A-Za-z0-9\n' '_')"
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "$(date +%T) $name: $label on $np rank(s)" >&2
    # shellcheck disable=SC2086
    args=(-i "$in" -mbs_t_end "$tend" -mbs_output_every 10 -mbs_output_dir "$dir/out" -log_view ":$dir/log.txt" $opts)
    set +e
    if [ "$np" = 1 ]; then
      timeout "$BUDGET" /usr/bin/time -v -o "$dir/time.0.txt" "$exe" "${args[@]}" < /dev/null > "$dir/stdout" 2> "$dir/stderr"
    else
      # one /usr/bin/time per rank (OpenMPI's OMPI_COMM_WORLD_RANK names its file)
      timeout "$BUDGET" "${mpi[@]}" -n "$np" sh -c '/usr/bin/time -v -o "$0/time.$OMPI_COMM_WORLD_RANK.txt" "$@"' \
        "$dir" "$exe" "${args[@]}" < /dev/null > "$dir/stdout" 2> "$dir/stderr"
    fi
    rc=$?
    set -e
    note=()
    [ $rc = 124 ] && note=("note=killed after $BUDGET s")
    python3 "$lib" parse "$dir" "model=$name" "label=$label" "ranks=$np" "opts=$opts" "${note[@]}" >> "$res"
    tail -n 1 "$res" | python3 -c "import json,sys; r=json.load(sys.stdin); print('  ', r.get('time'), 's,', r.get('its'), 'its,', r.get('rss_mib'), 'MiB', r.get('error', ''))" >&2
  done <<< "$configs"
done

kill $sampler 2>/dev/null || true
echo "## Strong scaling, 1 vs 2 ranks ($(date +%F))"
echo
echo "Command: \`benchmarks/strong.sh ${build#"$root"/}\` (MODELS=\"$MODELS\", CHAIN_N=$CHAIN_N, CHAIN_STEPS=$CHAIN_STEPS, RIGID_N=$RIGID_N, RIGID_STEPS=$RIGID_STEPS, NET_N=$NET_N, NET_STEPS=$NET_STEPS); EM, h = 1e-3, diagnostics every 10 steps."
echo "Machine: $(python3 "$lib" machine)."
echo "Load: 1/5/15-min load average $load0 before the runs; 1-minute load average during the runs (sampled every 30 s; a 2-rank run counts 2): $(sort -n "$OUT/load.txt" | awk '{a[NR]=$1} END {printf "median %s, max %s", a[int((NR+1)/2)], a[NR]}')."
echo "Date: $(date '+%F %H:%M %Z'); tree at commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$root" diff --quiet 2>/dev/null || echo ' + uncommitted changes'); binary $exe built $(date -r "$exe" '+%F %H:%M %Z')."
echo
python3 "$lib" strong "$res"

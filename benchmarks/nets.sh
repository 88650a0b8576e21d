#!/usr/bin/env bash
# Nets of N x N particles: direct LU (KLU, MUMPS) against the block preconditioner of docs/solvers.md
# (Schur complement on the multipliers, selfp), per scheme and size. Prints a markdown table: time per
# step, Newton and linear iterations, factorizations, energy drift, deviation of the final state from
# the LU run's, peak memory.
#
# Usage: benchmarks/nets.sh [build dir]
# Environment (defaults in brackets):
#   SIZES ["10 32 100 316"]   net sides N (N^2 particles, 10 N^2 unknowns for EM)
#   SCHEMES ["em vi-b"]       schemes
#   SOLVERS ["umfpack klu mumps block"]  the first LU that finishes is the reference of "final state vs LU"
#   NP [1]                    MPI ranks (mpiexec --oversubscribe); KLU is serial and skipped for NP > 1
#   KLU_MAX [10]              largest N run with KLU (its fill on nets is huge: 18 s per factorization at N = 32)
#   MUMPS_MAX [100]           largest N run with MUMPS or UMFPACK (one MUMPS factorization takes 4 min at N = 316)
#   STEPS ["10:100 32:20 100:5 316:2"]  steps per size (h = 1e-3); sizes not listed get 2
#   TIMEOUT [300]             seconds per run; a run that exceeds it is reported as such
#   EXTRA []                  options added to every run
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=$(cd "${1:-build}" && pwd)
SIZES=${SIZES:-10 32 100 316}
SCHEMES=${SCHEMES:-em vi-b}
SOLVERS=${SOLVERS:-umfpack klu mumps block}
NP=${NP:-1}
KLU_MAX=${KLU_MAX:-10}
MUMPS_MAX=${MUMPS_MAX:-100}
STEPS=${STEPS:-10:100 32:20 100:5 316:2}
TIMEOUT=${TIMEOUT:-300}
EXTRA=${EXTRA:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# the stepper's defaults: UMFPACK on one rank, MUMPS in parallel (with -mat_mumps_icntl_14 100)
umfpack="-ksp_type preonly -pc_type lu -pc_factor_mat_solver_type umfpack"
mumps="-ksp_type preonly -pc_type lu -pc_factor_mat_solver_type mumps"
klu="-ksp_type preonly -pc_type lu -pc_factor_mat_solver_type klu"
# docs/solvers.md, "The block preconditioner"
block="-mbs_fieldsplit_split primal_dual -ksp_type gmres -ksp_pc_side right -ksp_rtol 1e-8
  -pc_type fieldsplit -pc_fieldsplit_type schur -pc_fieldsplit_schur_fact_type lower -pc_fieldsplit_schur_precondition selfp
  -fieldsplit_primal_ksp_type preonly -fieldsplit_dual_ksp_type preonly -fieldsplit_dual_pc_type lu"
if [ "$NP" -eq 1 ]; then
  block="$block -fieldsplit_primal_pc_type ilu -fieldsplit_dual_pc_factor_mat_solver_type klu"
  run=("$build/gglmbs")
else
  block="$block -fieldsplit_primal_pc_type bjacobi -fieldsplit_primal_sub_pc_type ilu
  -fieldsplit_dual_pc_factor_mat_solver_type mumps -fieldsplit_dual_mat_mumps_icntl_14 200"
  run=(mpiexec --oversubscribe -n "$NP" "$build/gglmbs")
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

steps_for() {
  for s in $STEPS; do [ "${s%%:*}" = "$1" ] && { echo "${s##*:}"; return; }; done
  echo 2
}

echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u +%Y-%m-%d); $NP rank(s); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| scheme | net | unknowns | solver | steps | s/step | CPU s | Newton its/step | linear its/Newton it | LU/ILU factorizations | max rel. energy drift | final state vs LU | peak RSS MB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for scheme in $SCHEMES; do
  for n in $SIZES; do
    benchmarks/net_yaml.sh "$n" > "$tmp/net$n.yaml"
    nsteps=$(steps_for "$n")
    ref=""
    for solver in $SOLVERS; do
      case $solver in
        klu) if [ "$NP" -ne 1 ] || [ "$n" -gt "$KLU_MAX" ]; then continue; fi; opts=$klu ;;
        umfpack) if [ "$NP" -ne 1 ] || [ "$n" -gt "$MUMPS_MAX" ]; then continue; fi; opts=$umfpack ;;
        mumps) [ "$n" -le "$MUMPS_MAX" ] || continue; opts=$mumps ;;
        block) opts=$block ;;
        *) echo "unknown solver $solver" >&2; exit 2 ;;
      esac
      out=$tmp/$scheme-$n-$solver
      mkdir -p "$out"
      # shellcheck disable=SC2086
      /usr/bin/time -f "%M %U %S" -o "$out/time" timeout "$TIMEOUT" "${run[@]}" -i "$tmp/net$n.yaml" -mbs_scheme "$scheme" \
        -mbs_t_end "$(python3 -c "print($nsteps * 1e-3)")" -mbs_output_dir "$out" -mbs_output_every 1 \
        -mbs_write_state "$out/state.csv" -ksp_converged_reason -log_view $opts $EXTRA > "$out/log" 2>&1
      status=$?
      python3 - "$scheme" "$n" "$solver" "$nsteps" "$status" "$TIMEOUT" "$out" "$ref" <<'PY'
import csv, re, sys, os
scheme, n, solver, nsteps, status, timeout, out, ref = sys.argv[1:]
log = open(os.path.join(out, "log"), errors="replace").read()
def event(name):
    m = re.search(r"^%s\s+(\d+)\s+\S+\s+(\S+)" % name, log, re.M)
    return (int(m.group(1)), float(m.group(2))) if m else (0, 0.0)
summ = re.search(r"(\d+) unknowns;.*?(\d+) steps in ([\d.]+) s.*mean Newton iterations ([\d.]+)", log)
t = open(os.path.join(out, "time")).read().split()
rss, cpu = int(t[-3]) / 1024, float(t[-2]) + float(t[-1])
if int(status) != 0 or not summ:
    why = "timed out after %s s" % timeout if int(status) == 124 else "failed (exit %s)" % status
    m = re.search(r"ERROR: (.*)", log)
    if m and int(status) != 124: why += ": " + m.group(1).strip()[:80]
    print("| %s | %sx%s | | %s | %s | %s | %.0f | | | | | | %.0f |" % (scheme, n, n, solver, nsteps, why, cpu, rss))
    sys.exit(0)
unknowns, steps, wall, newton = int(summ.group(1)), int(summ.group(2)), float(summ.group(3)), float(summ.group(4))
lin = [int(x) for x in re.findall(r"Linear solve converged due to \S+ iterations (\d+)", log)]
nfact, _ = event("MatLUFactorNum")
nstep, tstep = event("MbsStep")
rows = list(csv.DictReader(line for line in open(os.path.join(out, "diagnostics.csv")) if not line.startswith("#")))
E = [float(r["E"]) for r in rows]
drift = max(abs(e - E[0]) for e in E) / abs(E[0])
dev = ""
if ref and os.path.exists(os.path.join(ref, "state.csv")):
    a = list(csv.DictReader(line for line in open(os.path.join(out, "state.csv")) if not line.startswith("#")))
    b = list(csv.DictReader(line for line in open(os.path.join(ref, "state.csv")) if not line.startswith("#")))
    for k in ("q", "p"):
        d = max(abs(float(x[k]) - float(y[k])) for x, y in zip(a, b)) / max(abs(float(y[k])) for y in b)
        dev += "%s%s %.1e" % (", " if dev else "", k, d)
print("| %s | %sx%s | %d | %s | %d | %.3g | %.1f | %.2f | %.1f | %d | %.1e | %s | %.0f |" % (
    scheme, n, n, unknowns, solver, steps, tstep / max(nstep, 1), cpu, newton,
    sum(lin) / max(len(lin), 1), nfact, drift, dev or ("(no LU run)" if solver == "block" else "(reference)"), rss))
PY
      # the first LU run that finished is the reference for the others
      if [ -z "$ref" ] && [ "$solver" != block ] && [ -f "$out/state.csv" ] && grep -q '^gglmbs:' "$out/log"; then ref=$out; fi
    done
  done
done

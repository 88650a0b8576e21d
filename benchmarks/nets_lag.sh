#!/usr/bin/env bash
# Jacobian reuse and lagging (docs/solvers.md): the stepper's modified Newton (default), Newton proper
# (-mbs_jacobian_reuse 0), SNES's lagged Jacobian (-snes_lag_jacobian N -snes_lag_jacobian_persists)
# and lagged preconditioner (-snes_lag_preconditioner N -snes_lag_preconditioner_persists, with preonly
# and with GMRES), on chain1000 and a 32 x 32 net with the default LU (UMFPACK on one rank), and on the
# same net with the block preconditioner. Prints a markdown table: time per step, Newton iterations, Jacobian assemblies,
# factorizations, linear iterations, energy drift, deviation of the final state from Newton's.
#
# Usage: benchmarks/nets_lag.sh [build dir]
# Environment: CHAIN_STEPS [200], NET [32], NET_STEPS [20], TIMEOUT [300], ONLY [] (run only the cases
# whose name contains this string, e.g. ONLY=block)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=$(cd "${1:-build}" && pwd)
CHAIN_STEPS=${CHAIN_STEPS:-200}
NET=${NET:-32}
NET_STEPS=${NET_STEPS:-20}
TIMEOUT=${TIMEOUT:-300}
ONLY=${ONLY:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
benchmarks/net_yaml.sh "$NET" > "$tmp/net.yaml"

# one line: the cases below are split at '|' by read, which stops at a newline
block="-mbs_fieldsplit_split primal_dual -ksp_type gmres -ksp_pc_side right -ksp_rtol 1e-8 \
  -pc_type fieldsplit -pc_fieldsplit_type schur -pc_fieldsplit_schur_fact_type lower -pc_fieldsplit_schur_precondition selfp \
  -fieldsplit_primal_ksp_type preonly -fieldsplit_primal_pc_type ilu \
  -fieldsplit_dual_ksp_type preonly -fieldsplit_dual_pc_type lu -fieldsplit_dual_pc_factor_mat_solver_type klu"
gmres="-ksp_type gmres -ksp_pc_side right -ksp_rtol 1e-8"
variants=(
  "Newton|-mbs_jacobian_reuse 0"
  "modified Newton (default)|"
  "Newton, lag Jacobian 2|-mbs_jacobian_reuse 0 -snes_lag_jacobian 2 -snes_lag_jacobian_persists"
  "Newton, lag Jacobian 5|-mbs_jacobian_reuse 0 -snes_lag_jacobian 5 -snes_lag_jacobian_persists"
  "Newton, lag PC 5|-mbs_jacobian_reuse 0 -snes_lag_preconditioner 5 -snes_lag_preconditioner_persists"
  "Newton + GMRES, lag PC 5|-mbs_jacobian_reuse 0 -snes_lag_preconditioner 5 -snes_lag_preconditioner_persists GMRES"
  "Newton + GMRES, lag PC 20|-mbs_jacobian_reuse 0 -snes_lag_preconditioner 20 -snes_lag_preconditioner_persists GMRES"
)
cases=(
  "chain1000, LU|inputs/chain1000.yaml|$CHAIN_STEPS|"
  "net ${NET}x$NET, LU|$tmp/net.yaml|$NET_STEPS|"
  "net ${NET}x$NET, block PC|$tmp/net.yaml|$NET_STEPS|$block"
)

echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u +%Y-%m-%d); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| case | variant | steps | s/step | Newton its/step | Jacobians | factorizations | linear its/Newton it | max rel. energy drift | final state vs Newton |"
echo "|---|---|---|---|---|---|---|---|---|---|"
k=0
for c in "${cases[@]}"; do
  IFS='|' read -r cname input nsteps copts <<< "$c"
  [[ $cname == *"$ONLY"* ]] || continue
  ref=""
  for v in "${variants[@]}"; do
    IFS='|' read -r vname vopts <<< "$v"
    # the block preconditioner already is GMRES: its "GMRES" variants are the same as without
    if [[ $vopts == *GMRES ]]; then [[ $cname == *block* ]] && continue; vopts="${vopts% GMRES} $gmres"; fi
    k=$((k + 1))
    out=$tmp/$k
    mkdir -p "$out"
    # shellcheck disable=SC2086
    timeout "$TIMEOUT" "$build/gglmbs" -i "$input" -mbs_t_end "$(python3 -c "print($nsteps * 1e-3)")" -mbs_output_dir "$out" \
      -mbs_output_every 1 -mbs_write_state "$out/state.csv" -ksp_converged_reason -log_view $copts $vopts > "$out/log" 2>&1
    status=$?
    python3 - "$cname" "$vname" "$status" "$out" "$ref" <<'PY'
import csv, re, sys, os
cname, vname, status, out, ref = sys.argv[1:]
log = open(os.path.join(out, "log"), errors="replace").read()
def event(name):
    m = re.search(r"^%s\s+(\d+)\s+\S+\s+(\S+)" % name, log, re.M)
    return (int(m.group(1)), float(m.group(2))) if m else (0, 0.0)
summ = re.search(r"(\d+) steps in ([\d.]+) s.*mean Newton iterations ([\d.]+)", log)
if int(status) != 0 or not summ:
    m = re.search(r"gglmbs: error: (.*)", log)
    print("| %s | %s | | %s | | | | | | |" % (cname, vname, "timed out" if int(status) == 124 else "failed: " + (m.group(1)[:100] if m else "exit %s" % status)))
    sys.exit(0)
steps, newton = int(summ.group(1)), float(summ.group(3))
nstep, tstep = event("MbsStep")
njac, _ = event("MbsJacobian")
nfact, _ = event("MatLUFactorNum")
lin = [int(x) for x in re.findall(r"Linear solve converged due to \S+ iterations (\d+)", log)]
E = [float(r["E"]) for r in csv.DictReader(line for line in open(os.path.join(out, "diagnostics.csv")) if not line.startswith("#"))]
dev = "(reference)"
if ref:
    a = list(csv.DictReader(line for line in open(os.path.join(out, "state.csv")) if not line.startswith("#")))
    b = list(csv.DictReader(line for line in open(os.path.join(ref, "state.csv")) if not line.startswith("#")))
    dev = ", ".join("%s %.1e" % (k, max(abs(float(x[k]) - float(y[k])) for x, y in zip(a, b)) / max(abs(float(y[k])) for y in b)) for k in ("q", "p"))
print("| %s | %s | %d | %.3g | %.2f | %d | %d | %.1f | %.1e | %s |" % (cname, vname, steps, tstep / max(nstep, 1), newton, njac, nfact,
      sum(lin) / max(len(lin), 1), max(abs(e - E[0]) for e in E) / abs(E[0]), dev))
PY
    # Newton proper is the reference of its case
    if [ "$vname" = Newton ] && grep -q '^gglmbs:' "$out/log"; then ref=$out; fi
  done
done

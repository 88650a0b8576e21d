#!/usr/bin/env bash
# The Schur-AMG preconditioner (docs/solvers.md, src/stepper/schuramg.c) against N: GMRES iterations per linear solve
# (mean and largest), time per step, memory, for nets, chains of particles and chains of rigid links, one or several
# ranks. Prints a markdown table. Each run also states the energy drift of EM (must stay at round-off).
#
# Usage: benchmarks/schur_amg.sh [build dir]
# Environment (defaults in brackets):
#   NETS ["32 100 316"]          net sides (N^2 particles; inputs/net100x100.yaml with the count changed)
#   CHAINS ["1000 10000"]        chains of particles (inputs/chain1000.yaml with the count changed)
#   RIGID ["100 1000"]           chains of rigid links (inputs/rigid_chain1000.yaml with the count changed)
#   SCHEMES ["em"]               schemes
#   STEPS [5]                    steps per run (h = 1e-3); nets above 316 run 2
#   NP [1]                       MPI ranks (mpiexec --oversubscribe)
#   LU [1]                       also run the default solver (-mbs_solver lu) up to LU_MAX unknowns, for comparison
#   LU_MAX [200000]
#   EXTRA []                     options added to every Schur-AMG run (e.g. -mbs_schur_pc_type ilu)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=$(cd "${1:-build}" && pwd)
NETS=${NETS-32 100 316}
CHAINS=${CHAINS-1000 10000}
RIGID=${RIGID-100 1000}
SCHEMES=${SCHEMES:-em}
STEPS=${STEPS:-5}
NP=${NP:-1}
LU=${LU:-1}
LU_MAX=${LU_MAX:-200000}
EXTRA=${EXTRA:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ "$NP" -eq 1 ]; then run=("$build/gglmbs"); else run=(mpiexec --oversubscribe -n "$NP" "$build/gglmbs"); fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u +%Y-%m-%d); $NP rank(s); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| model | scheme | unknowns | solver | steps | s/step (MbsStep) | linear solves | GMRES its mean / max | Newton its/step | max rel. energy drift | peak RSS MB |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"

one() { # name input scheme solver steps
  local name=$1 input=$2 scheme=$3 solver=$4 steps=$5 t_end out
  t_end=$(python3 -c "print($steps * 1e-3)")
  out=$tmp/out.txt
  /usr/bin/time -f "RSS %M" "${run[@]}" -i "$input" -mbs_scheme "$scheme" -mbs_t_end "$t_end" -mbs_solver "$solver" \
    -mbs_output_dir "$tmp/o" -mbs_output_every 1 -ksp_converged_reason -log_view $([ "$solver" = schur ] && echo "$EXTRA") \
    >"$out" 2>&1
  local rc=$?
  python3 - "$out" "$tmp/o/diagnostics.csv" "$name" "$scheme" "$solver" "$steps" "$rc" <<'EOF'
import csv, re, sys
out, diag, name, scheme, solver, steps, rc = sys.argv[1:]
text = open(out).read()
its = [int(m) for m in re.findall(r"Linear solve converged due to \S+ iterations (\d+)", text)]
unk = re.search(r"(\d+) unknowns", text)
step = re.search(r"^MbsStep\s+(\d+)\s+\S+\s+(\S+)", text, re.M)
newton = re.search(r"mean Newton iterations ([0-9.]+)", text)
rss = re.findall(r"RSS (\d+)", text)
drift = "-"
try:
    rows = list(csv.DictReader(l for l in open(diag) if not l.startswith("#")))
    E = [float(r["E"]) for r in rows]
    drift = "%.1e" % max(abs(e - E[0]) / abs(E[0]) for e in E)
except Exception:
    pass
if rc != "0" or not step:
    last = [l for l in text.splitlines() if "error" in l.lower()][:1]
    print("| %s | %s | %s | %s | %s | failed: %s | | | | | |" % (name, scheme, unk.group(1) if unk else "?", solver, steps,
          (last[0][:120] if last else "rc " + rc).replace("|", "/")))
    sys.exit(0)
n = int(step.group(1))
print("| %s | %s | %s | %s | %d | %.3g | %d | %s | %s | %s | %d |" % (
    name, scheme, unk.group(1), solver, n, float(step.group(2)) / n, len(its),
    ("%.1f / %d" % (sum(its) / len(its), max(its))) if its and solver == "schur" else "-",
    newton.group(1) if newton else "-", drift, max(int(r) for r in rss) // 1024 if rss else 0))
EOF
}

for scheme in $SCHEMES; do
  for n in $NETS; do
    benchmarks/net_yaml.sh "$n" >"$tmp/net.yaml"
    s=$STEPS; [ "$n" -gt 316 ] && s=2
    one "net ${n}x$n" "$tmp/net.yaml" "$scheme" schur "$s"
    [ "$LU" = 1 ] && [ $((10 * n * n)) -le "$LU_MAX" ] && one "net ${n}x$n" "$tmp/net.yaml" "$scheme" lu "$s"
  done
  for n in $CHAINS; do
    sed "s/count: 1000,/count: $n,/" inputs/chain1000.yaml >"$tmp/chain.yaml"
    one "chain $n" "$tmp/chain.yaml" "$scheme" schur "$STEPS"
    [ "$LU" = 1 ] && [ $((8 * n)) -le "$LU_MAX" ] && one "chain $n" "$tmp/chain.yaml" "$scheme" lu "$STEPS"
  done
  for n in $RIGID; do
    sed "s/count: 1000$/count: $n/" inputs/rigid_chain1000.yaml >"$tmp/rigid.yaml"
    one "rigid chain $n" "$tmp/rigid.yaml" "$scheme" schur "$STEPS"
    [ "$LU" = 1 ] && [ $((42 * n)) -le "$LU_MAX" ] && one "rigid chain $n" "$tmp/rigid.yaml" "$scheme" lu "$STEPS"
  done
done

#!/usr/bin/env bash
# The stepper's KLU (src/stepper/klu.c) against UMFPACK on one rank (docs/solvers.md): each model run with -mbs_klu 0
# (UMFPACK from 81 to 2 10^6 unknowns) and with -mbs_klu, alternating, REPS times each; the column "default solver"
# says which of the two the stepper chooses by itself. Prints a
# markdown table of the median time in MbsStep (-log_view), the CPU seconds and the peak RSS of the whole process, and
# checks that both runs end in the same state: the largest difference of the energies (E, T, V) and of the momenta
# (J, L) of the last diagnostics row, each relative to the largest of its group.
#
# Usage: benchmarks/klu.sh [build dir]
# Environment (defaults in brackets):
#   CHAINS ["30:1 100:1 300:1 1000:0.3 10000:0.1 100000:0.02"]  particles:t_end of chains (inputs/chain1000.yaml)
#   RIGID ["30:0.2 100:0.2 1000:0.05"]                           links:t_end of rigid chains (rigid_chain1000.yaml)
#   INPUTS ["flyball_governor andrews_squeezer flying_spaghetti right_angle_cantilever"]  inputs/*.yaml, to time.end
#   REPS [3]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=$(cd "${1:-build}" && pwd) || exit 1
CHAINS=${CHAINS-30:1 100:1 300:1 1000:0.3 10000:0.1 100000:0.02}
RIGID=${RIGID-30:0.2 100:0.2 1000:0.05}
INPUTS=${INPUTS-flyball_governor andrews_squeezer flying_spaghetti right_angle_cantilever}
REPS=${REPS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "Machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u +%Y-%m-%d); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| model | unknowns | steps | default solver | MbsStep s: UMFPACK / KLU | cpu s: UMFPACK / KLU | peak RSS MB: UMFPACK / KLU | final E, T, V, J, L: largest relative difference |"
echo "|---|---|---|---|---|---|---|---|"

median() { sort -g | awk '{a[NR] = $1} END {print (NR ? a[int((NR + 1) / 2)] : 0)}'; }

# one run: input, options...; prints "MbsStep-seconds cpu-seconds peak-KB" and leaves the diagnostics in $tmp/out
run() {
  local input=$1
  shift
  rm -rf "$tmp/out"
  /usr/bin/time -f "TIME %U %S %M" "$build/gglmbs" -i "$input" -mbs_output_dir "$tmp/out" -mbs_output_every 1000000 \
    -log_view "$@" >"$tmp/log" 2>&1 || { echo "FAILED: $input $*" >&2; tail -5 "$tmp/log" >&2; }
  awk '/^MbsStep / {s = $4} /^TIME / {c = $2 + $3; m = $4} END {print s, c, m}' "$tmp/log"
}

one() { # name input t_end
  local name=$1 input=$2 t_end=$3 t_opt=() choice unknowns steps
  [ "$t_end" != "-" ] && t_opt=(-mbs_t_end "$t_end")
  choice=$("$build/gglmbs" -i "$input" -mbs_output_dir "$tmp/out" -mbs_dt 1e-3 -mbs_t_end 1e-3 -mbs_stepper_view 2>&1 |
    sed -n 's/^ *linear solver: \([^,]*\),.*/\1/p' | head -1)
  : >"$tmp/u"
  : >"$tmp/k"
  for ((r = 0; r < REPS; r++)); do
    run "$input" "${t_opt[@]}" -mbs_klu 0 >>"$tmp/u"
    cp "$tmp/out/diagnostics.csv" "$tmp/u.csv"
    run "$input" "${t_opt[@]}" -mbs_klu >>"$tmp/k"
    cp "$tmp/out/diagnostics.csv" "$tmp/k.csv"
  done
  unknowns=$(sed -n 's/.* \([0-9]*\) unknowns;.*/\1/p' "$tmp/log" | head -1)
  steps=$(sed -n 's/.*, \([0-9]*\) steps in .*/\1/p' "$tmp/log" | head -1)
  local diff
  diff=$(python3 - "$tmp/u.csv" "$tmp/k.csv" <<'EOF'
import csv, sys
rows = []
for f in sys.argv[1:]:
    r = [l for l in csv.reader(x for x in open(f) if not x.startswith('#'))]
    rows.append(r)
h, a, b = rows[0][0], rows[0][-1], rows[1][-1]
d = 0.0
for group in (('E', 'T', 'V'), ('Jx', 'Jy', 'Jz'), ('Lx', 'Ly', 'Lz')):
    k = [h.index(c) for c in group]
    x, y = [float(a[i]) for i in k], [float(b[i]) for i in k]
    scale = max(abs(v) for v in x + y)
    if scale > 0:
        d = max(d, max(abs(u - v) for u, v in zip(x, y)) / scale)
print('%.1e' % d)
EOF
)
  printf '| %s | %s | %s | %s | %s / %s | %s / %s | %s / %s | %s |\n' "$name" "$unknowns" "$steps" "$choice" \
    "$(cut -d' ' -f1 "$tmp/u" | median)" "$(cut -d' ' -f1 "$tmp/k" | median)" \
    "$(cut -d' ' -f2 "$tmp/u" | median)" "$(cut -d' ' -f2 "$tmp/k" | median)" \
    "$(($(cut -d' ' -f3 "$tmp/u" | median) / 1024))" "$(($(cut -d' ' -f3 "$tmp/k" | median) / 1024))" "$diff"
}

for c in $CHAINS; do
  n=${c%%:*}
  sed "s/count: 1000,/count: $n,/" inputs/chain1000.yaml >"$tmp/chain$n.yaml"
  one "chain of $n particles" "$tmp/chain$n.yaml" "${c#*:}"
done
for c in $RIGID; do
  n=${c%%:*}
  sed "s/count: 1000$/count: $n/" inputs/rigid_chain1000.yaml >"$tmp/rigid$n.yaml"
  one "rigid chain of $n links" "$tmp/rigid$n.yaml" "${c#*:}"
done
for f in $INPUTS; do one "$f" "inputs/$f.yaml" -; done

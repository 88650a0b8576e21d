#!/usr/bin/env bash
# Regenerate docs/figures/*.png: the diagnostics plots of seed paper 004 Sect. 6 (Kinon, Betsch,
# Schneider 2023, Figs. 8-33) for the spherical pendulum, the heavy top and the four-particle system,
# all five schemes, plus the two convergence-order studies (docs/figures/orders.csv).
#
# Usage: scripts/figures.sh            (from anywhere; run from the repository after building)
# Env:   GGLMBS  solver binary           (default build/gglmbs)
#        PYTHON  python with matplotlib  (default: first of python3, /usr/bin/python3 that has it)
#        KEEP=1  keep the run directory and print its path
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${GGLMBS:-build/gglmbs}
OUT=docs/figures
PLOT=scripts/plot_diagnostics.py
if [[ -z ${PYTHON:-} ]]; then
  for PYTHON in python3 /usr/bin/python3 ""; do
    [[ -n $PYTHON ]] && "$PYTHON" -c "import matplotlib" 2>/dev/null && break
  done
  [[ -n $PYTHON ]] || { echo "figures.sh: no python3 with matplotlib" >&2; exit 1; }
fi
RUN=$(mktemp -d)
if [[ ${KEEP:-0} == 1 ]]; then echo "run directory: $RUN"; else trap 'rm -rf "$RUN"' EXIT; fi
mkdir -p "$OUT"
SECONDS=0

SCHEMES=(em em-g vi-s vi-a vi-b)
declare -A LABEL=([em]=EM [em-g]=EM-G [vi-s]=VI-S [vi-a]=VI-A [vi-b]=VI-B)

run() {  # run EXAMPLE SCHEME DIR [options]: one solver run, quiet unless it fails
  local ex=$1 scheme=$2 dir=$3
  shift 3
  mkdir -p "$dir"
  "$BIN" -i "inputs/$ex.yaml" -mbs_scheme "$scheme" -mbs_output_dir "$dir" \
    -pc_factor_mat_solver_type klu "$@" >"$dir/log" 2>&1 ||
    echo "figures.sh: $ex $scheme $* failed (see $dir/log): $(tail -n 1 "$dir/log")" >&2
}

curves() {  # curves EXAMPLE SCHEME...: -c arguments for plot_diagnostics.py
  local ex=$1 s
  shift
  for s in "$@"; do printf -- '-c\n%s\n' "$RUN/$ex/$s/diagnostics.csv:${LABEL[$s]}"; done
}

plot() { "$PYTHON" "$PLOT" series "$@"; }

# --- long-time runs with the inputs' defaults (paper values of h and T) ---------------------------
for ex in pendulum3d heavy_top four_particle; do
  for s in "${SCHEMES[@]}"; do run "$ex" "$s" "$RUN/$ex/$s"; done
done

declare -A NAME=([pendulum3d]=pendulum [heavy_top]=heavy_top [four_particle]=four_particle)
declare -A TITLE=([pendulum3d]="Pendulum (h = 0.05)" [heavy_top]="Heavy top (h = 0.002)"
                  [four_particle]="Four particles (h = 0.01)")
for ex in pendulum3d heavy_top four_particle; do
  n=$OUT/${NAME[$ex]} T=${TITLE[$ex]}
  mapfile -t ALL < <(curves "$ex" "${SCHEMES[@]}")
  mapfile -t VIAB < <(curves "$ex" vi-a vi-b)
  plot "${ALL[@]}" -q E -t "$T: total energy" -o "${n}_energy.png"
  plot "${ALL[@]}" -q dE -t "$T: energy increments" -o "${n}_energy_increments.png"
  plot "${ALL[@]}" -q g_max -t "$T: position constraints" -o "${n}_g.png"
  plot "${ALL[@]}" -q gv_max -t "$T: momentum-level constraints" -o "${n}_gv.png"
  plot "${VIAB[@]}" -q Gv_max -t "$T: velocity constraints of VI-A/B" -o "${n}_Gv.png"
  if [[ $ex == four_particle ]]; then
    mapfile -t EMS < <(curves "$ex" em em-g)
    plot "${ALL[@]}" -q dJ -t "$T: angular momentum increments" -o "${n}_J_increments.png"
    plot "${ALL[@]}" -q dL -t "$T: linear momentum increments" -o "${n}_L_increments.png"
    plot "${EMS[@]}" -q Jx Jy Jz -t "$T: angular momentum" -o "${n}_J.png"
  else
    plot "${ALL[@]}" -q dJz -t "$T: increments of \$J_z\$" -o "${n}_Jz_increments.png"
    mapfile -t VIS < <(curves "$ex" vi-s)
    if [[ $ex == heavy_top ]]; then  # Fig. 17: phi_3 = V / (m g), m, g as in inputs/heavy_top.yaml
      plot "${ALL[@]}" -q V --scale "$(awk 'BEGIN { printf "%.17g", 1 / (0.7068583470577038 * 9.81) }')" \
        --ylabel '$\varphi_3 = V/(m g)$' -t "$T: height of the centre of mass" -o "${n}_phi3.png"
    fi
    plot "${VIS[@]}" -q Jx Jy Jz -t "$T: angular momentum (VI-S)" -o "${n}_J.png"
  fi
done

# --- four particles: energy stability for larger steps (Figs. 32, 33) -----------------------------
# VI-S and VI-B (h = 0.05, 0.25) and VI-A (h = 0.25) blow up; their runs stop with a Newton failure,
# reported on stderr, and the plots show the steps computed before it.
for h in 0.05 0.25; do
  for s in "${SCHEMES[@]}"; do run four_particle "$s" "$RUN/fp_h$h/$s" -mbs_dt "$h" -mbs_t_end 100; done
  mapfile -t C < <(for s in "${SCHEMES[@]}"; do
    printf -- '-c\n%s\n' "$RUN/fp_h$h/$s/diagnostics.csv:${LABEL[$s]}"; done)
  plot "${C[@]}" -q E --logy on -t "Four particles (h = $h): total energy" \
    -o "$OUT/four_particle_energy_h$h.png"
done

# --- convergence orders ---------------------------------------------------------------------------
state() {  # state EXAMPLE SCHEME H T_END FILE
  run "$1" "$2" "$RUN/orders/$1_$2_$3" -mbs_dt "$3" -mbs_t_end "$4" -mbs_write_state "$5"
}
# Heavy top (Figs. 18, 19): phi_3(0.001) against the steady-precession height 0.0375, and p_1(0.001)
# against EM with h = 5e-7.
state heavy_top em 5e-7 0.001 "$RUN/orders/ht_ref.csv"
for s in vi-s vi-b vi-a em em-g; do
  for h in 1e-4 5e-5 2.5e-5 1.25e-5; do state heavy_top "$s" "$h" 0.001 "$RUN/orders/ht_${s}_$h.csv"; done
done
# Four particles (Figs. 28, 29): q_4 and p_4 at t = 0.1 against EM with h = 1e-5.
state four_particle_convergence em 1e-5 0.1 "$RUN/orders/fp_ref.csv"
for s in em em-g; do
  for h in 1e-3 5e-4 2.5e-4 1.25e-4; do
    state four_particle_convergence "$s" "$h" 0.1 "$RUN/orders/fp_${s}_$h.csv"
  done
done

"$PYTHON" - "$RUN/orders" "${LABEL[@]}" <<'EOF'
import csv, math, sys
d = sys.argv[1]
label = {s.lower(): s for s in sys.argv[2:]}

def state(path):
    with open(path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return [float(r["q"]) for r in rows], [float(r["p"]) for r in rows]

def rel(x, ref):
    return math.dist(x, ref) / math.hypot(*ref)

def table(name, rows):
    with open(f"{d}/{name}.csv", "w") as f:
        f.write("scheme,quantity,h,error\n")
        f.writelines(f"{s},{q},{h},{e:.6e}\n" for s, q, h, e in rows)

hs = ["1e-4", "5e-5", "2.5e-5", "1.25e-5"]
_, pref = state(f"{d}/ht_ref.csv")
rows = []
for s in ["vi-s", "vi-b", "vi-a", "em", "em-g"]:
    for h in hs:
        q, p = state(f"{d}/ht_{s}_{h}.csv")
        rows.append((label[s], "q", h, abs(q[2] - 0.0375) / 0.0375))
        rows.append((label[s], "p", h, rel(p[0:3], pref[0:3])))
table("heavy_top", rows)

hs = ["1e-3", "5e-4", "2.5e-4", "1.25e-4"]
qref, pref = state(f"{d}/fp_ref.csv")
rows = []
for s in ["em", "em-g"]:
    for h in hs:
        q, p = state(f"{d}/fp_{s}_{h}.csv")
        rows.append((label[s], "q", h, rel(q[9:12], qref[9:12])))
        rows.append((label[s], "p", h, rel(p[9:12], pref[9:12])))
table("four_particle", rows)
EOF

{
  echo "example,scheme,quantity,h,error,local_order"
  for ex in heavy_top four_particle; do
    awk -F, -v ex=$ex 'NR > 1 {
        k = $1 "," $2; lo = (k in prev) ? sprintf("%.3f", log($4 / prev[k]) / log($3 / ph[k])) : ""
        print ex "," $0 "," lo; prev[k] = $4; ph[k] = $3 }' "$RUN/orders/$ex.csv"
  done
} >"$OUT/orders.csv"
orders() {  # orders EXAMPLE QUANTITY PNG TITLE: plot, and print fitted orders as CSV
  "$PYTHON" "$PLOT" orders -c "$RUN/orders/$1.csv" --select "$2" -o "$3" -t "$4" | sed "s/^/$1,/"
}
{
  echo "example,scheme,quantity,fitted_order"
  orders heavy_top q "$OUT/orders_heavy_top.png" \
    "Heavy top: relative error of \$\\varphi_3(0.001)\$ vs 0.0375"
  orders heavy_top p "$OUT/orders_heavy_top_p.png" \
    "Heavy top: relative error of \$p_1(0.001)\$ vs EM, h = 5e-7"
  "$PYTHON" "$PLOT" orders -c "$RUN/orders/four_particle.csv" -o "$OUT/orders_four_particle.png" \
    -t "Four particles: errors of \$q_4\$, \$p_4\$ at t = 0.1 vs EM, h = 1e-5" |
    sed 's/^/four_particle,/'
} >"$OUT/orders_fit.csv"
cat "$OUT/orders_fit.csv"
PNGS=("$OUT"/*.png)
echo "figures.sh: ${#PNGS[@]} figures in $OUT ($(du -ch "$OUT"/*.png | tail -n 1 | cut -f1)), ${SECONDS} s"

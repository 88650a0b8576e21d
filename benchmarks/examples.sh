#!/usr/bin/env bash
# Runs the paper examples and chain1000 with EM and prints, per example: the program's summary line and
# the conservation figures read from diagnostics.csv (max relative energy error, max momentum-map drift,
# max constraint residuals on both levels).
# Usage: benchmarks/examples.sh [build dir] [extra gglmbs options]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
out=$(mktemp -d)
for ex in pendulum3d heavy_top four_particle chain1000; do
  "$build/gglmbs" -i "inputs/$ex.yaml" -mbs_output_dir "$out/$ex" "$@" | grep '^gglmbs:'
  python3 - "$out/$ex/diagnostics.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(line for line in open(sys.argv[1]) if not line.startswith("#")))
col = lambda k: [float(r[k]) for r in rows]
E = col("E")
drift = lambda k: max(abs(v - col(k)[0]) for v in col(k))
print("  max |E-E0|/|E0| = %.2e   max |dJx|,|dJy|,|dJz| = %.1e %.1e %.1e   max |dL| = %.1e   max g = %.1e   max gv = %.1e" % (
    max(abs(e - E[0]) for e in E) / abs(E[0]), drift("Jx"), drift("Jy"), drift("Jz"),
    max(drift("Lx"), drift("Ly"), drift("Lz")), max(col("g_max")), max(col("gv_max"))))
PY
done
rm -rf "$out"

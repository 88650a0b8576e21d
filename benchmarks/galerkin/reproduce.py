#!/usr/bin/env python3
"""Man, Gao & Zhong (2020), Sect. 4, with gglmbs's Galerkin integrators (docs/galerkin.md).

For the nonlinear spring pendulum, the triple pendulum and the six balls: the paper's global energy error
e = max_k |H_k - H_0| / |H_0| over 0..T for the eight algorithms and m = 2..6 at the step h (its Figs. 2, 3, 5, 6,
8); the observed order of that error between h and h/2; the six balls' angular momentum error with LGG, m = 2,
h = 1 (Fig. 9) and their antisymmetry x1 + x6, y1 + y6 (eq. 61, Fig. 11); unknowns per step against the constrained
Lobatto IIIA-IIIB method's 2md + (m - 2)c equations.

Usage: benchmarks/galerkin/reproduce.py [build dir] [T] [h]   (defaults: build, 400, 0.1)
Prints markdown tables.
"""
import csv
import math
import os
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
T = float(sys.argv[2]) if len(sys.argv) > 2 else 400.0
H = float(sys.argv[3]) if len(sys.argv) > 3 else 0.1
exe = os.path.join(build, "gglmbs")
tmp = tempfile.mkdtemp(prefix="gglmbs-galerkin.")
variants = ["ell", "egl", "elg", "egg", "lll", "lgl", "llg", "lgg"]
examples = [("spring pendulum", "inputs/spring_pendulum.yaml"), ("triple pendulum", "inputs/triple_pendulum.yaml"),
            ("six balls", "inputs/six_balls.yaml")]


def run(inp, scheme, m, h, t_end, every=1):
    out = os.path.join(tmp, f"{os.path.basename(inp)}_{scheme}_{m}_{h}")
    cmd = [exe, "-i", os.path.join(root, inp), "-mbs_scheme", scheme, "-mbs_points", str(m), "-mbs_dt", str(h),
           "-mbs_t_end", str(t_end), "-mbs_output_dir", out, "-mbs_output_every", str(every),
           "-mbs_write_state", os.path.join(out, "state.csv")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    with open(os.path.join(out, "diagnostics.csv")) as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr.strip().splitlines()[-1]
    return rows, summary, out


def energy_error(rows):
    e0 = float(rows[0]["E"])
    return max(abs(float(x["E"]) - e0) for x in rows) / abs(e0)


for name, inp in examples:
    print(f"\n### {name} ({inp}), max |H - H0|/|H0| over 0..{T:g} s at h = {H:g} (order from h = {2 * H:g})\n")
    print("| algorithm | " + " | ".join(f"m = {m}" for m in range(2, 7)) + " |")
    print("|---|" + "---|" * 5)
    for v in variants:
        cells = []
        for m in range(2, 7):
            e1 = energy_error(run(inp, "galerkin-" + v, m, H, T, 10)[0])
            e2 = energy_error(run(inp, "galerkin-" + v, m, 2 * H, T, 5)[0])
            order = math.log(e2 / e1) / math.log(2) if e1 > 0 and e2 > 0 else float("nan")
            cells.append(f"{e1:.1e} ({order:.1f})")
        print(f"| {v.upper()} | " + " | ".join(cells) + " |", flush=True)

print("\n### six balls: angular momentum and antisymmetry, LGG, m = 2\n")
for h, t_end in ((1.0, T), (0.1, T)):
    rows, _, out = run("inputs/six_balls.yaml", "galerkin-lgg", 2, h, t_end, 1)
    jz = [float(x["Jz"]) for x in rows]
    print(f"* h = {h:g}, 0..{t_end:g} s: max |Jz - Jz0| = {max(abs(j - jz[0]) for j in jz):.1e} (Jz0 = {jz[0]:.3g}), "
          f"energy error {energy_error(rows):.1e}")
    # antisymmetry from the final state: x1 + x6, y1 + y6 against their initial values (eq. 61)
    with open(os.path.join(out, "state.csv")) as f:
        vals = [l.strip().split(",") for l in f if l[0].isdigit()]
    q = [float(v[1]) for v in vals][:18]
    print(f"  x1 + x6 = {q[0] + q[15]:.15f} (initially {(1 - math.sqrt(2)) / 2 + 2 + math.sqrt(2) / 2:.15f}), "
          f"y1 + y6 = {q[1] + q[16]:.15f} (initially {(math.sqrt(3) - math.sqrt(2)) / 2 + math.sqrt(2) / 2:.15f})")

print("\n### unknowns per step (d coordinates, c constraints)\n")
print("| example | d | c | m | Galerkin m (d + c) | Lobatto IIIA-IIIB 2md + (m - 2)c |")
print("|---|---|---|---|---|---|")
for name, inp in examples:
    _, summary, _ = run(inp, "galerkin-lgg", 2, H, H)
    d = int(summary.split(" coordinates")[0].split()[-1])
    c = int(summary.split(" constraints")[0].split()[-1])
    for m in (2, 4, 6):
        print(f"| {name} | {d} | {c} | {m} | {m * (d + c)} | {2 * m * d + (m - 2) * c} |")

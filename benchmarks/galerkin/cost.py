#!/usr/bin/env python3
"""Accuracy against cost for every scheme (docs/galerkin.md, benchmarks/RESULTS.md).

For one input: each scheme at several step sizes, the error of the final state (max over the coordinates) against
a converged reference (galerkin-lgg with 6 points at a small step), and the program's own wall time of the
stepping (its summary line); writes CSV and a log-log plot of error against wall time per simulated second.

Usage: benchmarks/galerkin/cost.py [build dir] [input] [t_end] [h0] [out prefix] [repeats]
       benchmarks/galerkin/cost.py --plot CSV TITLE PNG   (a plot of an earlier run's CSV)
  defaults: build inputs/heavy_top.yaml 0.5 0.004 /tmp/gglmbs-cost 3
Step sizes h0, h0/2, h0/4, h0/8. Each configuration runs `repeats` times and keeps its fastest time (the machines
are shared). A scheme whose step fails at a step size (RATTLE and the Galerkin schemes are conditionally stable for
a tensioned chain's geometric stiffness: docs/rattle.md) is left out there.
"""
import csv
import math
import os
import re
import subprocess
import sys
import tempfile

def plot(rows, title, png):
    try:
        import matplotlib
    except ImportError:
        print(f"no matplotlib for {sys.executable}: plot with /usr/bin/python3 {sys.argv[0]} --plot CSV TITLE PNG")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5))
    for label in dict.fromkeys(r[0] for r in rows):
        pts = [(float(r[4]), float(r[3])) for r in rows if r[0] == label and float(r[3]) > 0]  # not the reference
        ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
    ax.set_xlabel("wall time per simulated second [s]")
    ax.set_ylabel("max error of the final state")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if len(sys.argv) == 5 and sys.argv[1] == "--plot":
    with open(sys.argv[2]) as f:
        plot(list(csv.reader(f))[1:], sys.argv[3], sys.argv[4])
    sys.exit(0)


root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
inp = sys.argv[2] if len(sys.argv) > 2 else "inputs/heavy_top.yaml"
T = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
h0 = float(sys.argv[4]) if len(sys.argv) > 4 else 0.004
prefix = sys.argv[5] if len(sys.argv) > 5 else "/tmp/gglmbs-cost"
repeats = int(sys.argv[6]) if len(sys.argv) > 6 else 3
exe = os.path.join(build, "gglmbs")
tmp = tempfile.mkdtemp(prefix="gglmbs-cost.")
schemes = [("em", 0), ("em-g", 0), ("vi-a", 0), ("rattle", 0)] + [("galerkin-lgg", m) for m in range(2, 7)]


def run(scheme, m, h, repeat=1):
    out = os.path.join(tmp, f"{scheme}_{m}_{h}")
    state = os.path.join(out, "state.csv")
    cmd = [exe, "-i", os.path.join(root, inp), "-mbs_scheme", scheme, "-mbs_dt", repr(h), "-mbs_t_end", repr(T),
           "-mbs_output_dir", out, "-mbs_output_every", "100000", "-mbs_write_state", state]
    if m:
        cmd += ["-mbs_points", str(m)]
    best = None
    for _ in range(repeat):
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            return None, None, None
        text = r.stdout + r.stderr
        mt = re.search(r"(\d+) steps in ([0-9.]+) s", text)
        mu = re.search(r"(\d+) unknowns", text)
        t = float(mt.group(2))
        best = t if best is None else min(best, t)
    with open(state) as f:
        q = [float(l.split(",")[1]) for l in f if l[0].isdigit()]
    return q, best, int(mu.group(1))


ref, _, _ = run("galerkin-lgg", 6, h0 / 8)
rows = []
for scheme, m in schemes:
    for k in range(4):
        h = h0 / 2 ** k
        q, t, n = run(scheme, m, h, repeats)
        if q is None:
            continue
        err = max(abs(a - b) for a, b in zip(q, ref))
        label = scheme + (f" m={m}" if m else "")
        rows.append((label, h, n, err, t / T))
        print(f"{label:16s} h={h:<8g} unknowns={n:<5d} error={err:.2e} wall/sim-s={t / T:.4f}", flush=True)
with open(prefix + ".csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["scheme", "h", "unknowns", "error", "wall_per_simulated_second"])
    w.writerows(rows)
plot(rows, f"{os.path.basename(inp)}, t = {T:g} s", prefix + ".png")

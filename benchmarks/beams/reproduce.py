#!/usr/bin/env python3
"""The published beam examples under EM (docs/beams.md): the right-angle cantilever and the flying spaghetti of Simo
and Vu-Quoc. Runs inputs/right_angle_cantilever.yaml (h = 0.05 and 0.025; 20 and 40 elements) and
inputs/flying_spaghetti.yaml, and prints markdown: the conservation of energy (and, for the free spaghetti, linear
and angular momentum) after the loads end, and the ranges of the out-of-plane displacement of the cantilever's elbow
and tip. Writes the displacement histories to OUT/*.csv and, with matplotlib, docs/figures/beams_*.png.

Usage: benchmarks/beams/reproduce.py [build dir (default build)]     (OUT: default a new /tmp directory)
"""
import csv
import io
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
exe = os.path.join(build, "gglmbs")
out = os.environ.get("OUT") or tempfile.mkdtemp(prefix="gglmbs-beams-reproduce-")


def run(inp, name, *opts):
    d = os.path.join(out, name)
    subprocess.run([exe, "-i", inp, "-mbs_output_dir", d, "-mbs_trajectory", "xdmf", "-mbs_output_every", "1",
                    *opts], check=True, capture_output=True)
    return d


def diagnostics(d):
    lines = [l for l in open(os.path.join(d, "diagnostics.csv")) if not l.startswith("#")]
    rows = list(csv.DictReader(io.StringIO("".join(lines))))
    return {k: np.array([float(r[k]) if r[k] else np.nan for r in rows]) for k in rows[0]}


def track(d, body):
    f = h5py.File(os.path.join(d, "trajectory.h5"), "r")
    steps = sorted(f["steps"].keys())
    t = np.array([float(np.ravel(f["steps"][s].attrs["time"])[0]) for s in steps])
    x = np.array([f["steps"][s]["position"][body] for s in steps])
    return t, x


def drift(v):
    return (v.max() - v.min()) / max(abs(v).max(), 1e-300)


rac = os.path.join(root, "inputs", "right_angle_cantilever.yaml")
rac40 = os.path.join(out, "rac40.yaml")
os.makedirs(out, exist_ok=True)
with open(rac40, "w") as f:
    f.write(open(rac).read().replace("elements: 20", "elements: 40").replace("frame.10", "frame.20"))
print("| right-angle cantilever | E drift after t = 2 | elbow u3 range | tip u3 range |")
print("|---|---|---|---|")
curves = {}
for label, inp, opts, elbow, tip in [("20 elements, h = 0.05", rac, [], 10, 21),
                                     ("20 elements, h = 0.025", rac, ["-mbs_dt", "0.025"], 10, 21),
                                     ("40 elements, h = 0.05", rac40, [], 20, 41)]:
    d = run(inp, label.replace(" ", "_").replace(",", "").replace("=", ""), *opts)
    g = diagnostics(d)
    m = g["t"] >= 2 - 1e-9
    t, xe = track(d, elbow)
    _, xt = track(d, tip)
    curves[label] = (t, xe[:, 2], xt[:, 2])
    print("| %s | %.1e | [%.3f, %.3f] | [%.3f, %.3f] |" % (label, drift(g["E"][m]), xe[:, 2].min(), xe[:, 2].max(),
                                                          xt[:, 2].min(), xt[:, 2].max()))
    with open(os.path.join(out, label.replace(" ", "_").replace(",", "").replace("=", "") + ".csv"), "w") as f:
        f.write("t,elbow_u3,tip_u3\n")
        for a, b, c in zip(t, xe[:, 2], xt[:, 2]):
            f.write("%.17g,%.17g,%.17g\n" % (a, b, c))
d = run(os.path.join(root, "inputs", "flying_spaghetti.yaml"), "spaghetti")
g = diagnostics(d)
m = g["t"] >= 5 - 1e-9
print("\n| flying spaghetti, h = 0.05 | after t = 5 |")
print("|---|---|")
print("| E drift (relative) | %.1e (E = %.6f) |" % (drift(g["E"][m]), g["E"][m][0]))
for k in ["Lx", "Ly", "Jz"]:
    print("| %s drift (absolute) | %.1e (%s = %.6f) |" % (k, g[k][m].max() - g[k][m].min(), k, g[k][m][0]))
ts, xs0 = track(d, 0)
_, xs1 = track(d, 10)
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.5))
    for label, (t, e, tp) in curves.items():
        ax[0].plot(t, e, label=label)
        ax[1].plot(t, tp, label=label)
    for a, w in zip(ax, ["elbow", "tip"]):
        a.set_xlabel("t")
        a.set_ylabel("%s displacement out of the plane" % w)
        a.grid(True)
    ax[1].legend(fontsize=8)
    fig.suptitle("Right-angle cantilever, EM")
    fig.tight_layout()
    fig.savefig(os.path.join(root, "docs", "figures", "beams_right_angle_cantilever.png"), dpi=90)
    fig, ax = plt.subplots(figsize=(6, 4))
    for k in range(0, len(ts), 10):
        ax.plot([xs0[k, 0], xs1[k, 0]], [xs0[k, 1], xs1[k, 1]], "k-", lw=0.5)
    ax.set_aspect("equal")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title("Flying spaghetti, EM: the chord every 0.5 s")
    fig.tight_layout()
    fig.savefig(os.path.join(root, "docs", "figures", "beams_flying_spaghetti.png"), dpi=90)
except ImportError:
    print("\n(no matplotlib: no figures)")
print("\nRuns and CSV files in %s" % out)

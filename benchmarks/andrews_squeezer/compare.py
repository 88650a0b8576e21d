#!/usr/bin/python3
"""compare.py <out_dir> [...]: the 7 benchmark angles from gglmbs's trajectory.h5 (directors d1 of the 7
bodies, unwrapped over the written steps) against reference.py at t = 0.001, 0.005, 0.01, 0.02, 0.03;
also the run time from the log line in <out_dir>/run.log if present."""
import os, sys, re
import numpy as np, h5py
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference as ref

TS = np.array([0.001, 0.005, 0.01, 0.02, 0.03])
qref = np.loadtxt(os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_angles.txt"))[:, 1:8].T   # from reference.py


def angles(path):
    with h5py.File(path, "r") as f:
        keys = sorted(f["steps"].keys())
        t = np.array([f["steps"][k].attrs["time"] for k in keys])
        a = np.array([np.arctan2(f["steps"][k]["d1"][:7, 1], f["steps"][k]["d1"][:7, 0]) for k in keys])
        zoff = max(np.max(np.abs(f["steps"][k]["position"][:7, 2])) for k in keys)
        d3z = min(np.min(f["steps"][k]["d3"][:7, 2]) for k in keys)
    a = np.unwrap(a, axis=0)
    q = np.column_stack([a[:, 0], a[:, 1] - a[:, 0], a[:, 2], a[:, 3] - a[:, 4], a[:, 4], a[:, 5] - a[:, 6], a[:, 6]])
    return t, q, zoff, d3z


for d in sys.argv[1:]:
    t, q, zoff, d3z = angles(d + "/trajectory.h5")
    idx = [int(np.argmin(np.abs(t - ti))) for ti in TS]
    assert all(abs(t[i] - ti) < 1e-12 for i, ti in zip(idx, TS)), "output times do not hit the comparison times"
    err = q[idx].T - qref
    log = open(d + "/run.log").read() if __import__("os").path.exists(d + "/run.log") else ""
    m = re.search(r"(\d+) steps in ([0-9.]+) s", log)
    print("== %s  (max |z| of centres %.1e, min d3_z %.15f)" % (d, zoff, d3z))
    if m:
        print("   %s steps in %s s: %.0f s of wall time per simulated second" % (m.group(1), m.group(2), float(m.group(2)) / 0.03))
    print("   %-6s" % "t" + "".join("%12s" % n for n in ref.NAMES) + "   (gglmbs - reference)")
    for k, ti in enumerate(TS):
        print("   %-6g" % ti + "".join("%12.2e" % x for x in err[:, k]))
    print("   angles at t = 0.03:", " ".join("%.12f" % x for x in q[idx[-1]]))

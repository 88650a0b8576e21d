#!/usr/bin/python3
"""compare.py <out_dir> [...]: the slider's height s(t) from gglmbs's trajectory.h5 (the centre of body 1, 'slider')
against reference.py's reference_s.txt at every written time that the reference has (every 0.1 s); prints the error
every 0.5 s, the largest error and, from <out_dir>/run.log if present, the wall time per simulated second."""
import os
import re
import sys

import h5py
import numpy as np

ref = np.loadtxt(os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_s.txt"))
for d in sys.argv[1:]:
    with h5py.File(os.path.join(d, "trajectory.h5"), "r") as f:
        steps = f["steps"]
        ts = np.array([steps[k].attrs["time"] for k in steps])
        ss = np.array([steps[k]["position"][1, 2] for k in steps])
    order = np.argsort(ts)
    ts, ss = ts[order], ss[order]
    rows = []
    for t, s in zip(ts, ss):
        i = int(np.argmin(np.abs(ref[:, 0] - t)))
        if abs(ref[i, 0] - t) < 1e-9:
            rows.append((t, s, ref[i, 1]))
    rows = np.array(rows)
    print(f"== {d}")
    log = os.path.join(d, "run.log")
    if os.path.exists(log):
        m = re.search(r"(\d+) steps in ([0-9.]+) s", open(log).read())
        if m:
            print(f"   {m.group(1)} steps in {m.group(2)} s: {float(m.group(2)) / rows[-1, 0]:.2f} s of wall time per "
                  "simulated second")
    print("   t      s (gglmbs)      s (reference)   difference")
    for t, s, r in rows:
        if abs(t * 2 - round(t * 2)) < 1e-9:
            print(f"   {t:4.1f}   {s:.10f}   {r:.10f}   {s - r:+.2e}")
    print(f"   largest |difference| over {len(rows)} times: {np.max(np.abs(rows[:, 1] - rows[:, 2])):.2e} m")

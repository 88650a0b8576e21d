#!/usr/bin/env python3
"""Scale study of nonholonomic contacts (issue 21): a train of n skates on the horizontal plane, each a rigid body
(mass 1, length 1) held by a planar joint, with a knife edge at its centre that stops sideways sliding, coupled by
rods from the rear of one skate to the front of the next. All start in line moving forward at 1 m/s; a harmonic
torque about the vertical on the lead skate steers it, and the train follows it in waves. Default solvers, STEPS
steps of h = 0.01 s, diagnostics written every step. Per size and scheme: time per step and mean Newton iterations
(the program's summary line), peak memory (/usr/bin/time -v), the drift of E - W (W the torque's work); the fitted
exponent of time per step against n. Prints markdown.

Usage: benchmarks/nonholonomic/train.py [build dir (default build)]
Environment: SIZES (default "1000 3000 10000"), SCHEMES (default "em dla"), STEPS (default 20), OUT (default a new
/tmp dir), KEEP=1 writes the YAML files only (for farm-bench)
"""
import math
import os
import re
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build")
exe = os.path.join(build, "gglmbs")
sizes = [int(s) for s in os.environ.get("SIZES", "1000 3000 10000").split()]
schemes = os.environ.get("SCHEMES", "em dla").split()
steps = int(os.environ.get("STEPS", "20"))
out = os.environ.get("OUT") or tempfile.mkdtemp(prefix="gglmbs-train-")
h = 0.01
gap = 0.2  # rod length between skates


def write_yaml(n, scheme, path, outdir):
    lines = ["time: {step: %g, end: %g}" % (h, steps * h), "scheme: {type: %s}" % scheme, "bodies:"]
    for k in range(n):
        x = -k * (1.0 + gap)
        lines.append("  - {name: s%d, type: rigid, mass: 1, inertia: [0.02, 0.09, 0.1], position: [%g, 0, 0], "
                     "velocity: [1, 0, 0]}" % (k, x))
    lines.append("joints:")
    for k in range(n):
        lines.append("  - {type: planar, bodies: [s%d, ground], axes: [[0, 0, 1], [0, 0, 1]]}" % k)
        lines.append("  - {type: knife_edge, body: s%d, normal: [0, 1, 0]}" % k)
        if k:
            lines.append("  - {type: rod, bodies: [s%d, s%d], points: [[-0.5, 0, 0], [0.5, 0, 0]]}" % (k - 1, k))
    lines.append("loads:")
    lines.append("  - {type: torque, body: s0, torque: [0, 0, 1], time: {type: harmonic, amplitude: 1, frequency: 1}}")
    lines.append("output: {directory: %s, every: 1}" % outdir)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


SUMMARY = re.compile(r"(\d+) unknowns; scheme \S+, h = \S+, (\d+) steps in (\S+) s .* mean Newton iterations (\S+)")


def run(n, scheme):
    d = os.path.join(out, "%s_n%d" % (scheme, n))
    os.makedirs(d, exist_ok=True)
    yaml = os.path.join(d, "train.yaml")
    write_yaml(n, scheme, yaml, os.path.join(d, "out"))
    if os.environ.get("KEEP"):
        return None
    timef = os.path.join(d, "time.txt")
    p = subprocess.run(["/usr/bin/time", "-v", "-o", timef, exe, "-i", yaml], capture_output=True, text=True)
    if p.returncode:
        sys.exit("n = %d (%s) failed:\n%s%s" % (n, scheme, p.stdout, p.stderr))
    m = SUMMARY.search(p.stdout)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(timef).read()).group(1))
    rows = [l.split(",") for l in open(os.path.join(d, "out", "diagnostics.csv")) if l[0].isdigit()]
    W = sum(float(r[15]) for r in rows)  # the work of the steering torque, step by step
    E0, E1 = float(rows[0][2]), float(rows[-1][2]) - W
    unknowns, nsteps, t, its = int(m.group(1)), int(m.group(2)), float(m.group(3)), float(m.group(4))
    return dict(n=n, scheme=scheme, unknowns=unknowns, ms=1e3 * t / nsteps, its=its, rss=rss / 1024.0,
                dE=abs(E1 - E0) / abs(E0))


def machine():
    cpu = re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read()).group(1)
    mem = int(re.search(r"MemTotal:\s*(\d+)", open("/proc/meminfo").read()).group(1)) / 1048576
    return "%s, %d cores, %.0f GiB" % (cpu, os.cpu_count(), mem)


rows = [run(n, s) for s in schemes for n in sizes]
if os.environ.get("KEEP"):
    print(out)
    sys.exit(0)
print("Machine: %s. Command: `benchmarks/nonholonomic/train.py` (STEPS=%d, h = %g s)\n" % (machine(), steps, h))
print("| scheme | skates | unknowns | ms per step | Newton its per step | peak RSS (MiB) | \\|E - W - E0\\|/E0 |")
print("|---|---:|---:|---:|---:|---:|---:|")
for r in rows:
    print("| %s | %d | %d | %.2f | %.2f | %.0f | %.1e |" % (r["scheme"], r["n"], r["unknowns"], r["ms"], r["its"],
                                                        r["rss"], r["dE"]))
for s in schemes:
    sel = [r for r in rows if r["scheme"] == s]
    if len(sel) >= 2:
        xs = [math.log(r["n"]) for r in sel]
        ys = [math.log(r["ms"]) for r in sel]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        print("\n%s: time per step grows like n^%.2f from %d to %d skates." % (s, slope, sel[0]["n"], sel[-1]["n"]))

#!/usr/bin/env python3
"""Scale study of beams (issue 19): a straight beam of n elements (element length 0.01 m, a steel tube's section,
pinned at both ends, sagging under gravity from straight) under EM with the default solvers, STEPS steps of
h = 1e-4 s, output only at the ends. Per size: time per step and mean Newton iterations (the program's summary
line), peak memory (/usr/bin/time -v); the fitted exponent of time per step against n. Prints markdown.

Usage: benchmarks/beams/scale.py [build dir (default build)]
Environment: SIZES (default "1000 3000 10000 30000 100000"), STEPS (default 20), OUT (default a new /tmp dir)
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
sizes = [int(s) for s in os.environ.get("SIZES", "1000 3000 10000 30000 100000").split()]
steps = int(os.environ.get("STEPS", "20"))
out = os.environ.get("OUT") or tempfile.mkdtemp(prefix="gglmbs-beams-")
h = 1e-4

# a steel tube 20 mm x 2 mm: A = 1.131e-4 m^2, I = 4.637e-9 m^4, E = 2.1e11, G = 8.1e10, rho = 7850
TEMPLATE = """time: {{step: {h}, end: {end}}}
gravity: [0, 0, -9.81]
beams:
  - name: b
    points: [[0, 0, 0], [{length}, 0, 0]]
    elements: {n}
    E: 2.1e11
    G: 8.1e10
    density: 7850
    area: 1.131e-4
    I1: 4.637e-9
    I2: 4.637e-9
    shear_factor: 0.53
    supports: [pinned, pinned]
output: {{directory: {dir}, every: {steps}}}
"""
SUMMARY = re.compile(r"(\d+) unknowns; scheme \S+, h = \S+, (\d+) steps in (\S+) s .* mean Newton iterations (\S+)")


def run(n):
    d = os.path.join(out, "n%d" % n)
    os.makedirs(d, exist_ok=True)
    yaml = os.path.join(d, "beam.yaml")
    with open(yaml, "w") as f:
        f.write(TEMPLATE.format(h=h, end=steps * h, length=0.01 * n, n=n, dir=os.path.join(d, "out"), steps=steps))
    timef = os.path.join(d, "time.txt")
    p = subprocess.run(["/usr/bin/time", "-v", "-o", timef, exe, "-i", yaml], capture_output=True, text=True)
    if p.returncode:
        sys.exit("n = %d failed:\n%s%s" % (n, p.stdout, p.stderr))
    m = SUMMARY.search(p.stdout)
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", open(timef).read()).group(1))
    unknowns, nsteps, t, its = int(m.group(1)), int(m.group(2)), float(m.group(3)), float(m.group(4))
    return dict(n=n, unknowns=unknowns, ms=1e3 * t / nsteps, its=its, rss=rss / 1024.0)


def machine():
    cpu = re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read()).group(1)
    mem = int(re.search(r"MemTotal:\s*(\d+)", open("/proc/meminfo").read()).group(1)) / 1048576
    return "%s, %d cores, %.0f GiB" % (cpu, os.cpu_count(), mem)


rows = [run(n) for n in sizes]
print("Machine: %s. Command: `benchmarks/beams/scale.py` (STEPS=%d, h = %g s)\n" % (machine(), steps, h))
print("| elements | unknowns | ms per step | Newton its per step | peak RSS (MiB) |")
print("|---:|---:|---:|---:|---:|")
for r in rows:
    print("| %d | %d | %.2f | %.2f | %.0f |" % (r["n"], r["unknowns"], r["ms"], r["its"], r["rss"]))
big = [r for r in rows if r["n"] >= 10000] or rows
if len(big) >= 2:
    xs = [math.log(r["n"]) for r in big]
    ys = [math.log(r["ms"]) for r in big]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    print("\nTime per step grows like n^%.2f from %d to %d elements." % (slope, big[0]["n"], big[-1]["n"]))

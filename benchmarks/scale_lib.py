#!/usr/bin/env python3
"""Helpers of benchmarks/scale.sh and benchmarks/strong.sh.

  scale_lib.py parse RUNDIR KEY=VALUE...   one JSON line describing a finished run: the program's summary
                                           line (RUNDIR/stdout), the -log_view events (RUNDIR/log.txt), the
                                           peak memory of /usr/bin/time -v (RUNDIR/time*.txt, one per rank)
                                           and the energy drift from RUNDIR/out/diagnostics.csv
  scale_lib.py scale RESULTS.jsonl         markdown tables and fitted exponents of the scaling study
  scale_lib.py strong RESULTS.jsonl        markdown table of the strong-scaling study
  scale_lib.py machine                     one line: CPU model, cores, memory, OS, PETSc
"""
import csv
import glob
import json
import math
import os
import re
import subprocess
import sys

EVENTS = ["MbsStep", "MbsResidual", "MbsJacobian", "MatSetPreallCOO", "MatSetValuesCOO", "SNESSolve",
          "PCSetUp", "KSPSolve", "PCApply", "MatLUFactorSym", "MatLUFactorNum", "MatSolve", "MatMult",
          "VecScatterBegin", "VecScatterEnd", "MbsDiagnostics"]

SUMMARY = re.compile(r"gglmbs: (?P<input>\S+): (?P<bodies>\d+) bodies, (?P<coords>\d+) coordinates, "
                     r"(?P<constraints>\d+) constraints, (?P<unknowns>\d+) unknowns; scheme (?P<scheme>\S+), "
                     r"h = (?P<h>\S+), (?P<steps>\d+) steps in (?P<time>\S+) s \(\S+ steps/s\), "
                     r"mean Newton iterations (?P<its>\S+)")


def parse_log(path):
    """Event name -> (count, max time over ranks) from a -log_view text file."""
    ev = {}
    if not os.path.exists(path):
        return ev
    for line in open(path, errors="replace"):
        f = line.split()
        if len(f) > 5 and f[0] in EVENTS:
            try:
                ev[f[0]] = (int(f[1]), float(f[3]))
            except ValueError:
                pass
    return ev


def parse_time(rundir):
    """Peak RSS (sum and max over ranks, MiB) and process wall time from /usr/bin/time -v outputs."""
    rss, wall, status = [], None, None
    for p in sorted(glob.glob(os.path.join(rundir, "time*.txt"))):
        for line in open(p, errors="replace"):
            line = line.strip()
            if line.startswith("Maximum resident set size"):
                rss.append(int(line.split(":")[-1]) / 1024.0)
            elif line.startswith("Elapsed (wall clock) time"):
                t = line.split(": ")[-1].split(":")
                w = sum(float(x) * 60 ** i for i, x in enumerate(reversed(t)))
                wall = w if wall is None else max(wall, w)
            elif line.startswith("Exit status"):
                status = int(line.split(":")[-1])
            elif line.startswith("Command terminated by signal"):
                status = 128 + int(line.split()[-1])
    return (sum(rss) if rss else None, max(rss) if rss else None, len(rss), wall, status)


def parse_diag(path):
    if not os.path.exists(path):
        return {}
    rows = list(csv.DictReader(line for line in open(path) if not line.startswith("#")))
    if not rows:
        return {}
    E = [float(r["E"]) for r in rows]
    return {"rows": len(rows), "E0": E[0], "dE": max(abs(e - E[0]) for e in E) / abs(E[0]) if E[0] else None,
            "g_max": max(float(r["g_max"]) for r in rows), "gv_max": max(float(r["gv_max"]) for r in rows)}


def cmd_parse(rundir, kv):
    rec = dict(x.split("=", 1) for x in kv)
    rec["dir"] = rundir
    out = open(os.path.join(rundir, "stdout"), errors="replace").read() if os.path.exists(os.path.join(rundir, "stdout")) else ""
    m = SUMMARY.search(out)
    if m:
        for k, v in m.groupdict().items():
            rec[k] = v if k in ("input", "scheme") else (float(v) if k in ("h", "time", "its") else int(v))
        rec["ok"] = True
    else:
        rec["ok"] = False
        err = open(os.path.join(rundir, "stderr"), errors="replace").read() if os.path.exists(os.path.join(rundir, "stderr")) else ""
        lines = [l for l in (err + out).splitlines() if l.strip()]
        errs = [l for l in lines if "error:" in l and "PETSC ERROR" not in l]
        pet = [l.split("PETSC ERROR: ", 1)[1] for l in lines if "PETSC ERROR: " in l]
        if errs:
            msg = errs[0].split("error: ", 1)[1].split(". Try a smaller")[0]
        elif pet:
            msg = "; ".join(pet[1:3])
        else:
            msg = " | ".join(lines[-3:])
        rec["error"] = msg[:300]
    rec["events"] = parse_log(os.path.join(rundir, "log.txt"))
    rss_sum, rss_max, nr, wall, status = parse_time(rundir)
    rec.update({"rss_mib": rss_sum, "rss_max_rank_mib": rss_max, "rss_ranks": nr, "wall": wall, "status": status})
    rec["diag"] = parse_diag(os.path.join(rundir, "out", "diagnostics.csv"))
    print(json.dumps(rec))


def load(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def ev(r, name, what=1):
    return r["events"].get(name, (0, 0.0))[what]


def shares(r):
    """Times of the parts of the stepping loop (MbsStep): assembly (residual, Jacobian), factorization
    (PCSetUp), solves (KSPSolve), the rest."""
    tot = ev(r, "MbsStep") or r.get("time", 0.0)
    res, jac = ev(r, "MbsResidual"), ev(r, "MbsJacobian")
    fac, sol = ev(r, "PCSetUp"), ev(r, "KSPSolve")
    return tot, res, jac, fac, sol, max(tot - res - jac - fac - sol, 0.0)


def pct(x, tot):
    return "%.0f" % (100.0 * x / tot) if tot else "-"


def fmt_t(x):
    if x is None:
        return "-"
    if x >= 100:
        return "%.0f" % x
    if x >= 1:
        return "%.2f" % x
    if x >= 1e-3:
        return "%.2f ms" % (1e3 * x) if x < 0.1 else "%.3f" % x
    return "%.0f us" % (1e6 * x)


def fmt_ms(x):
    return "%.3g" % (1e3 * x)


def fit(points):
    """Least-squares slope of log y vs log x."""
    if len(points) < 2:
        return None
    lx = [math.log(x) for x, _ in points]
    ly = [math.log(y) for _, y in points]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxx = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sxx if sxx else None


def sizestr(n):
    n = int(n)
    e = int(round(math.log10(n))) if n > 0 else 0
    return "10^%d" % e if 10 ** e == n and e >= 2 else str(n)


def cmd_scale(path):
    recs = load(path)
    study = [r for r in recs if r.get("study") == "scale"]
    kinds = [k for k in ("particle", "rigid") if any(r.get("kind") == k for r in study)]
    print("| chain | N | scheme | unknowns | steps | time/step (ms) | steps/s | Newton its/step | LU factorizations "
          "| assembly % (residual + Jacobian) | LU % (factor + solve) | other % | peak RSS (MiB) | max abs(E-E0)/abs(E0) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for k in kinds:
        for r in sorted([r for r in study if r.get("kind") == k], key=lambda r: (r["scheme_opt"], int(r["N"]))):
            if not r["ok"]:
                print("| %s | %s | %s | - | - | %s | | | | | | | %s | |" % (k, sizestr(r["N"]), r["scheme_opt"],
                      r.get("note") or ("failed: " + r.get("error", "")), "%.0f" % r["rss_mib"] if r.get("rss_mib") else "-"))
                continue
            tot, res, jac, fac, sol, oth = shares(r)
            tps = r["time"] / r["steps"]
            print("| %s | %s | %s | %d | %d | %s | %.1f | %.2f | %d | %s (%s + %s) | %s (%s + %s) | %s | %.0f | %.1e |" % (
                k, sizestr(r["N"]), r["scheme"], r["unknowns"], r["steps"], "%.3g" % (1e3 * tps), 1.0 / tps, r["its"],
                ev(r, "MatLUFactorNum", 0), pct(res + jac, tot), pct(res, tot), pct(jac, tot), pct(fac + sol, tot),
                pct(fac, tot), pct(sol, tot), pct(oth, tot), r["rss_mib"] or 0, r["diag"].get("dE") or 0))
    for r in [r for r in study if r["ok"] and r.get("note")]:
        print("\n%s N = %s %s: %s" % (r["kind"], sizestr(r["N"]), r["scheme"], r["note"]))
    print()
    print("Per call (ms): residual evaluation, Jacobian assembly (element loops + COO values; the first call also "
          "builds the COO pattern), symbolic LU (once), numeric LU, triangular solve.\n")
    print("| chain | N | scheme | residual: calls, ms/call | Jacobian: calls, ms/call | LU symbolic (ms) "
          "| LU numeric: calls, ms/call | solve: calls, ms/call |")
    print("|---|---|---|---|---|---|---|---|")
    for k in kinds:
        for r in sorted([r for r in study if r.get("kind") == k and r["ok"]], key=lambda r: (r["scheme_opt"], int(r["N"]))):
            def pc(name):
                c, t = r["events"].get(name, (0, 0.0))
                return "%d, %s" % (c, fmt_ms(t / c)) if c else "-"
            print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (k, sizestr(r["N"]), r["scheme"], pc("MbsResidual"),
                  pc("MbsJacobian"), fmt_ms(ev(r, "MatLUFactorSym")), pc("MatLUFactorNum"), pc("MatSolve")))
    print()
    print("Fitted exponent p of time per step ~ N^p (least squares in log-log over the sizes 10^3 <= N <= 10^5 that ran; "
          "in brackets: over all sizes >= 100, and of the time per Newton iteration over 10^3..10^5):\n")
    print("| chain | scheme | sizes in the fit | exponent 10^3..10^5 | [all >= 100] | [per Newton iteration] |")
    print("|---|---|---|---|---|---|")
    for k in kinds:
        for s in sorted(set(r["scheme_opt"] for r in study if r.get("kind") == k)):
            rs = [r for r in study if r.get("kind") == k and r["scheme_opt"] == s and r["ok"]]
            pts = [(int(r["N"]), r["time"] / r["steps"]) for r in rs if 1000 <= int(r["N"]) <= 100000]
            allp = [(int(r["N"]), r["time"] / r["steps"]) for r in rs if int(r["N"]) >= 100]
            itp = [(int(r["N"]), r["time"] / r["steps"] / max(r["its"], 1e-9)) for r in rs if 1000 <= int(r["N"]) <= 100000]
            p, pa, pi = fit(pts), fit(allp), fit(itp)
            print("| %s | %s | %s | %s | %s | %s |" % (k, s, ", ".join(sizestr(n) for n, _ in sorted(pts)) or "-",
                  "%.2f" % p if p is not None else "-", "%.2f" % pa if pa is not None else "-",
                  "%.2f" % pi if pi is not None else "-"))
    tg = [r for r in recs if r.get("study") == "target"]
    if tg:
        print()
        print("chain1000 target (inputs/chain1000.yaml, EM, h = 1e-3, T = 1: 1000 steps, one rank):\n")
        print("| configuration | options | steps/s | time/step (ms) | Newton its/step | LU factorizations | residual calls "
              "| assembly % | LU % | other % | max abs(E-E0)/abs(E0) |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        labels = []
        for r in tg:
            if r["label"] not in labels:
                labels.append(r["label"])
        for lab in labels:
            rs = [r for r in tg if r["label"] == lab]
            ok = [r for r in rs if r["ok"]]
            r = min(ok, key=lambda r: r["time"]) if ok else rs[0]
            if len(rs) > 1:
                r = dict(r, label="%s (best of %d%s)" % (lab, len(rs), "; %d failed" % (len(rs) - len(ok)) if len(ok) < len(rs) else ""))
            if not r["ok"]:
                print("| %s | `%s` | failed: %s |||||||||" % (r["label"], r.get("opts", ""), r.get("error", "")))
                continue
            tot, res, jac, fac, sol, oth = shares(r)
            tps = r["time"] / r["steps"]
            print("| %s | `%s` | %.1f | %.2f | %.2f | %d | %d | %s | %s | %s | %.1e |" % (
                r["label"], r.get("opts", "") or "(default)", 1.0 / tps, 1e3 * tps, r["its"], ev(r, "MatLUFactorNum", 0),
                ev(r, "MbsResidual", 0), pct(res + jac, tot), pct(fac + sol, tot), pct(oth, tot), r["diag"].get("dE") or 0))


def cmd_strong(path):
    recs = load(path)
    print("| model | unknowns | ranks | configuration | steps | time/step (ms) | without set-up (ms) | speedup vs best serial "
          "| Newton its/step | LU factorizations | residual % | Jacobian % | factor % | solve % | other % | peak RSS sum (MiB) "
          "| max abs(E-E0)/abs(E0) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    models = []
    for r in recs:
        if r["model"] not in models:
            models.append(r["model"])
    for m in models:
        rs = [r for r in recs if r["model"] == m]
        def steady(r):  # time per step without the one-time set-up: symbolic LU and the COO pattern
            once = ev(r, "MatLUFactorSym") + ev(r, "MatSetPreallCOO")
            return (r["time"] - once) / r["steps"]
        ser = [steady(r) for r in rs if r["ok"] and int(r["ranks"]) == 1]
        best = min(ser) if ser else None
        for r in rs:
            if not r["ok"]:
                print("| %s | | %s | %s | failed: %s ||||||||||||" % (m, r["ranks"], r["label"], r.get("note") or r.get("error", "")))
                continue
            tot, res, jac, fac, sol, oth = shares(r)
            tps = r["time"] / r["steps"]
            print("| %s | %d | %s | %s | %d | %.1f | %.1f | %s | %.2f | %d | %s | %s | %s | %s | %s | %.0f | %.1e |" % (
                m, r["unknowns"], r["ranks"], r["label"], r["steps"], 1e3 * tps, 1e3 * steady(r),
                "%.2f" % (best / steady(r)) if best else "-",
                r["its"], ev(r, "MatLUFactorNum", 0), pct(res, tot), pct(jac, tot), pct(fac, tot), pct(sol, tot),
                pct(oth, tot), r["rss_mib"] or 0, r["diag"].get("dE") or 0))
    print()
    print("Options of each configuration:\n")
    seen = set()
    for r in recs:
        if r["label"] not in seen:
            seen.add(r["label"])
            print("- %s: `%s`" % (r["label"], r.get("opts", "") or "(program defaults)"))


def cmd_machine():
    def run(*a):
        try:
            return subprocess.run(a, capture_output=True, text=True).stdout
        except Exception:
            return ""
    cpu = [l.split(":", 1)[1].strip() for l in run("lscpu").splitlines() if l.startswith("Model name")]
    mem = [l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")]
    osr = [l.split("=", 1)[1].strip().strip('"') for l in open("/etc/os-release") if l.startswith("PRETTY_NAME")] \
        if os.path.exists("/etc/os-release") else []
    petsc = run("pkg-config", "--modversion", "PETSc").strip()
    print("%s, %d cores, %.0f GiB, %s, PETSc %s" % (cpu[0] if cpu else "unknown CPU", os.cpu_count(),
          int(mem[0]) / 2 ** 20 if mem else 0, osr[0] if osr else "unknown OS", petsc or "?"))


if __name__ == "__main__":
    c = sys.argv[1]
    if c == "parse":
        cmd_parse(sys.argv[2], sys.argv[3:])
    elif c == "scale":
        cmd_scale(sys.argv[2])
    elif c == "strong":
        cmd_strong(sys.argv[2])
    elif c == "machine":
        cmd_machine()
    else:
        sys.exit(__doc__)

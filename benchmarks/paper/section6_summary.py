#!/usr/bin/env python3
"""Summarise diagnostics.csv files of seed 004 Sect. 6 runs as a markdown table row.

usage: section6_summary.py EXAMPLE SCHEME CSV [all]   ('all': every component of J and L is a
first integral, as for the free four-particle system; otherwise only Jz)
"""
import csv
import sys


def summarise(path, all_momenta):
    rows = list(csv.DictReader(line for line in open(path) if not line.startswith("#")))
    col = lambda k: [float(r[k]) for r in rows]
    E, t = col("E"), col("t")
    E0 = E[0]
    dE = max(abs(e - E0) for e in E) / abs(E0)
    inc = max(abs(b - a) for a, b in zip(E, E[1:])) / abs(E0)
    keys = ["Jx", "Jy", "Jz", "Lx", "Ly", "Lz"] if all_momenta else ["Jz"]
    dJ = max(max(abs(v - col(k)[0]) for v in col(k)) for k in keys)
    Gv = [float(r["Gv_max"]) for r in rows if r["Gv_max"]]
    its = [int(r["newton_its"]) for r in rows[1:]]
    return {
        "steps": len(rows) - 1, "T": t[-1], "dE": dE, "dEinc": inc, "dJ": dJ,
        "g": max(col("g_max")), "gv": max(col("gv_max")),
        "Gv": max(Gv) if Gv else None, "its": sum(its) / len(its),
    }


def main():
    example, scheme, path = sys.argv[1:4]
    s = summarise(path, len(sys.argv) > 4 and sys.argv[4] == "all")
    Gv = "%.1e" % s["Gv"] if s["Gv"] is not None else "-"
    print("| %s | %s | %.1e | %.1e | %.1e | %.1e | %.1e | %s | %.2f |" % (
        example, scheme, s["dE"], s["dEinc"], s["dJ"], s["g"], s["gv"], Gv, s["its"]))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Plot gglmbs diagnostics (diagnostics.csv) over time, or convergence orders.

Time series (one curve per CSV and quantity):
  plot_diagnostics.py series -q dE -c em.csv:EM -c vi-s.csv:VI-S -o energy_increments.png

  A quantity is a diagnostics column (E, T, V, Jx, Jy, Jz, Lx, Ly, Lz, g_max, gv_max, Gv_max,
  newton_its) or a derived one:
    dX    increments X_{n+1} - X_n between consecutive rows (plotted as |.|, semilog-y)
    dJ, dL  2-norm of the vector increment of J = (Jx, Jy, Jz) or L = (Lx, Ly, Lz)
    X-X0  deviation from the initial value X - X_0
  Residual columns (g_max, gv_max, Gv_max) and increments default to a logarithmic y axis;
  override with --logy on|off.

Convergence orders (log-log, one curve per scheme [and quantity], reference slopes 1 and 2):
  plot_diagnostics.py orders -c errors.csv -o orders.png
  errors.csv has columns scheme,h,error and optionally quantity (--select Q keeps one). Fitted slopes (least squares of
  log error over log h) are printed as CSV lines scheme,quantity,order.
"""
import argparse
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RESIDUALS = {"g_max", "gv_max", "Gv_max"}
TEX = {"E": "E", "T": "T", "V": "V", "g_max": r"\max_k |g_k(q)|",
       "gv_max": r"\max_k |G_k(q) M^{-1} p|", "Gv_max": r"\max_k |G_k(q_\theta) v|",
       "newton_its": r"n_\mathrm{iter}"}


def tex(col):
    if col in TEX:
        return TEX[col]
    if len(col) == 2 and col[1] in "xyz":
        return f"{col[0]}_{col[1]}"
    return col.replace("_", r"\_")


def read_columns(path):
    """Return {column: [float or None]} of a diagnostics CSV."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    if not rows:
        sys.exit(f"{path}: no data rows")
    return {k: [float(r[k]) if r[k] not in ("", None) else None for r in rows] for k in rows[0]}


def derive(cols, quantity):
    """(t, y, label) for a quantity; None entries are dropped."""
    t = cols["t"]
    base, minus, ref = quantity.partition("-")
    if minus and ref == base + "0" and base in cols:
        y0 = cols[base][0]
        y = [None if v is None else v - y0 for v in cols[base]]
        label = rf"${tex(base)} - {tex(base)}^0$"
    elif quantity.startswith("d") and quantity[1:] in cols:
        base = quantity[1:]
        v = cols[base]
        y = [None] + [None if a is None or b is None else b - a for a, b in zip(v, v[1:])]
        label = rf"$|{tex(base)}^{{n+1}} - {tex(base)}^n|$"
    elif quantity.startswith("d") and quantity[1:] + "x" in cols:
        # vector increment 2-norm, e.g. dJ = |J_{n+1} - J_n|
        base = quantity[1:]
        v = list(zip(*(cols[base + c] for c in "xyz")))
        y = [None] + [math.dist(a, b) for a, b in zip(v, v[1:])]
        label = rf"$\|\mathbf{{{base}}}^{{n+1}} - \mathbf{{{base}}}^n\|$"
    elif quantity in cols:
        y, label = cols[quantity], rf"${tex(quantity)}$"
    else:
        sys.exit(f"unknown quantity {quantity!r}; columns: {', '.join(cols)}")
    pairs = [(a, b) for a, b in zip(t, y) if b is not None]
    return [p[0] for p in pairs], [p[1] for p in pairs], label


def is_log(quantity, logy):
    if logy != "auto":
        return logy == "on"
    return quantity in RESIDUALS or (quantity.startswith("d") and "-" not in quantity)


def split_spec(spec):
    path, _, label = spec.partition(":")
    return path, label or path


def plot_series(args):
    fig, ax = plt.subplots(figsize=args.size)
    log = any(is_log(q, args.logy) for q in args.quantity)
    ylabels, clipped = [], False
    for spec in args.csv:
        path, name = split_spec(spec)
        cols = read_columns(path)
        for q in args.quantity:
            t, y, label = derive(cols, q)
            y = [v * args.scale for v in y]
            curve = name if len(args.quantity) == 1 else f"{name}: {label}"
            if log:
                # round-off noise reads better as dots; exact zeros are drawn at the floor
                clipped = clipped or any(abs(v) < args.floor for v in y)
                y = [max(abs(v), args.floor) for v in y]
                ax.plot(t, y, ls="none", marker=".", ms=2.5, label=curve)
            else:
                ax.plot(t, y, lw=1.0, marker="." if len(t) < 60 else None, label=curve)
            ylabels.append(label)
    if not log:
        ax.ticklabel_format(axis="y", useOffset=False)
    if log:
        ax.set_yscale("log")
        if clipped:
            ax.annotate(f"values below {args.floor:g} (exact zeros) drawn at {args.floor:g}",
                        (0.01, 0.01), xycoords="axes fraction", fontsize="x-small")
    ax.set_xlabel("$t$")
    ax.set_ylabel(args.ylabel or (ylabels[0] if len(set(ylabels)) == 1 else ""))
    finish(fig, ax, args)


def read_errors(path, select=None):
    series = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(line for line in f if not line.startswith("#")):
            qty = r.get("quantity") or ""
            if select is None or qty == select:
                series.setdefault((r["scheme"], qty), []).append((float(r["h"]), float(r["error"])))
    if not series:
        sys.exit(f"{path}: no rows" + (f" with quantity {select}" if select else ""))
    return {k: sorted(v) for k, v in series.items()}


def fit_order(points):
    x = [math.log(h) for h, e in points if e > 0]
    y = [math.log(e) for h, e in points if e > 0]
    if len(x) < 2:
        return float("nan")
    mx, my = sum(x) / len(x), sum(y) / len(y)
    return sum((a - mx) * (b - my) for a, b in zip(x, y)) / sum((a - mx) ** 2 for a in x)


def plot_orders(args):
    series = read_errors(args.csv[0], args.select)
    fig, ax = plt.subplots(figsize=args.size)
    colors = {s: f"C{i}" for i, s in enumerate(dict.fromkeys(k[0] for k in series))}
    styles = {q: [("-", "o"), ("--", "s"), (":", "^")][i % 3]
              for i, q in enumerate(sorted({k[1] for k in series}))}
    hs, es = [], []
    for (scheme, qty), pts in series.items():
        h, e = zip(*pts)
        order = fit_order(pts)
        print(f"{scheme},{qty},{order:.3f}")
        ls, marker = styles[qty]
        label = f"{scheme} {qty}".strip() + f" (order {order:.2f})"
        ax.loglog(h, e, color=colors[scheme], ls=ls, marker=marker, ms=4, lw=1.0, label=label)
        hs += h
        es += [v for v in e if v > 0]
    # reference slopes anchored at the geometric mean of the data
    h0, h1 = min(hs), max(hs)
    e_mid = math.exp(sum(map(math.log, es)) / len(es))
    h_mid = math.sqrt(h0 * h1)
    for p, style in ((1, ":"), (2, "-.")):
        ax.loglog([h0, h1], [e_mid * (h0 / h_mid) ** p, e_mid * (h1 / h_mid) ** p],
                  color="k", ls=style, lw=0.8, label=f"slope {p}")
    ax.set_xlabel("$h$")
    ax.set_ylabel(args.ylabel or "relative error")
    finish(fig, ax, args)


def finish(fig, ax, args):
    if args.title:
        ax.set_title(args.title)
    ax.grid(True, which="major", lw=0.3)
    ax.legend(fontsize="x-small" if len(ax.get_lines()) > 8 else "small",
              markerscale=3 if args.mode == "series" else 1)
    fig.tight_layout()
    fig.savefig(args.output, dpi=args.dpi)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n", 1)[1])
    p.add_argument("mode", choices=["series", "orders"])
    p.add_argument("-c", "--csv", action="append", required=True,
                   help="CSV file, for series as PATH[:LABEL] (repeatable)")
    p.add_argument("-q", "--quantity", nargs="+", default=["E"], help="series quantities")
    p.add_argument("-o", "--output", required=True, help="output PNG")
    p.add_argument("-t", "--title")
    p.add_argument("--ylabel")
    p.add_argument("--scale", type=float, default=1.0, help="series: multiply values by this")
    p.add_argument("--select", metavar="Q", help="orders: only rows with quantity Q")
    p.add_argument("--logy", choices=["auto", "on", "off"], default="auto")
    p.add_argument("--floor", type=float, default=1e-18,
                   help="smallest value drawn on a log axis (zeros are clipped to it)")
    p.add_argument("--dpi", type=int, default=100)
    p.add_argument("--size", type=float, nargs=2, default=(6.0, 4.0), metavar=("W", "H"))
    args = p.parse_args(argv)
    (plot_series if args.mode == "series" else plot_orders)(args)


if __name__ == "__main__":
    main()

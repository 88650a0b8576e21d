#!/usr/bin/env python3
"""Tests of scripts/gglmbs-plot, run as a subprocess the way a user runs it.

  1. real runs of the program (heavy top, EM and VI-B): all five PNGs exist, decode, have a sensible
     size and are not blank;
  2. --summary equals the values computed here from the CSV with the csv module (real runs and a
     synthetic file with shuffled column order, so that a wrong column mapping fails);
  3. malformed CSV files: exit status 2 and one line naming the file, line and column;
  4. several files overlay; a single-row file plots.

Environment: GGLMBS_SOURCE_DIR (the source tree; default: the parent of this directory), GGLMBS_BINARY
(the gglmbs program; default: GGLMBS_SOURCE_DIR/build/gglmbs; the tests that run it are skipped
without it). ctest sets both. Needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import os
import subprocess
import sys
import tempfile
import unittest

SYSTEM_PYTHON = "/usr/bin/python3"
try:
    import matplotlib
except ImportError:
    # python3 in PATH may be a pyenv or venv interpreter without matplotlib; Debian's python3-matplotlib
    # is installed for /usr/bin/python3.
    if os.path.exists(SYSTEM_PYTHON) and os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON):
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__)] + sys.argv[1:])
    sys.exit("test_plot.py: matplotlib is not available (Debian: apt-get install python3-matplotlib)")
matplotlib.use("Agg")
import matplotlib.image  # noqa: E402

SOURCE = os.environ.get("GGLMBS_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.environ.get("GGLMBS_BINARY") or os.path.join(SOURCE, "build", "gglmbs")
SCRIPT = os.path.join(SOURCE, "scripts", "gglmbs-plot")
PLOTS = ["energy.png", "energy_increments.png", "momentum.png", "constraints.png", "newton.png"]
HEADER = "step,t,E,T,V,Jx,Jy,Jz,Lx,Ly,Lz,g_max,gv_max,newton_its,Gv_max".split(",")
T_END = "0.1"  # 50 steps of the heavy top


def plot(*args):
    """Run gglmbs-plot (through its own #! line); returns the CompletedProcess."""
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=120)


def parse_summary(text):
    """[{key: value string}] from --summary output: `key = value` lines, blank lines between files."""
    blocks, cur = [], {}
    for line in text.splitlines():
        if not line.strip():
            if cur:
                blocks.append(cur)
            cur = {}
            continue
        key, sep, value = line.partition(" = ")
        assert sep, f"not a `key = value` line: {line!r}"
        assert key not in cur, f"duplicate key {key}"
        cur[key] = value
    if cur:
        blocks.append(cur)
    return blocks


def expected_summary(path):
    """The summary computed independently, by column name, with the csv module."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    col = {k: [r[k] for r in rows] for k in HEADER}
    num = {k: [float(v) for v in col[k]] for k in HEADER if k != "Gv_max"}
    E, E0 = num["E"], num["E"][0]
    dev = {X: max(max(abs(num[X + c][n] - num[X + c][0]) for c in "xyz") for n in range(len(rows))) for X in "JL"}
    its = [int(v) for v, s in zip(col["newton_its"], col["step"]) if int(s) > 0]
    Gv = [float(v) for v in col["Gv_max"] if v.strip()]
    return {
        "rows": len(rows),
        "t_final": num["t"][-1],
        "E0": E0,
        "max_abs_E_minus_E0": max(abs(e - E0) for e in E),
        "max_rel_E_drift": max(abs(e - E0) for e in E) / abs(E0) if E0 else None,
        "max_abs_E_increment": max(abs(b - a) for a, b in zip(E, E[1:])) if len(E) > 1 else None,
        "max_abs_J_minus_J0": dev["J"],
        "max_abs_L_minus_L0": dev["L"],
        "max_g_max": max(num["g_max"]),
        "max_gv_max": max(num["gv_max"]),
        "max_Gv_max": max(Gv) if Gv else None,
        "mean_newton_its": sum(its) / len(its) if its else None,
        "max_newton_its": max(its) if its else None,
    }


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


class PlotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="test_plot_")
        cls.dir = cls.tmp.name
        cls.runs = {}
        if not os.access(BINARY, os.X_OK):
            return
        for scheme in ["em", "vi-b"]:
            out = os.path.join(cls.dir, scheme)
            r = subprocess.run([BINARY, "-i", os.path.join(SOURCE, "inputs", "heavy_top.yaml"), "-mbs_scheme", scheme,
                                "-mbs_output_dir", out, "-mbs_t_end", T_END], capture_output=True, text=True,
                               timeout=300)
            if r.returncode != 0:
                raise RuntimeError(f"gglmbs {scheme} failed ({r.returncode}): {r.stderr}{r.stdout}")
            cls.runs[scheme] = os.path.join(out, "diagnostics.csv")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def need_runs(self):
        if not self.runs:
            self.skipTest(f"no gglmbs program at {BINARY} (set GGLMBS_BINARY)")

    def assert_pngs(self, outdir):
        """All five PNGs exist, decode, are at least 400 x 300 pixels and not blank."""
        for name in PLOTS:
            path = os.path.join(outdir, name)
            self.assertTrue(os.path.isfile(path), f"{path} missing")
            self.assertLess(os.path.getsize(path), 1_000_000, path)
            img = matplotlib.image.imread(path)
            self.assertEqual(img.ndim, 3, path)
            h, w = img.shape[:2]
            self.assertGreaterEqual(w, 400, path)
            self.assertGreaterEqual(h, 300, path)
            rgb = img[..., :3]
            self.assertGreater(float(rgb.var()), 1e-3, f"{path} is blank")
            nonwhite = float((rgb.min(axis=2) < 0.9).mean())
            self.assertGreater(nonwhite, 0.01, f"{path}: only {nonwhite:.2%} of the pixels are not white")

    def assert_summary(self, block, path):
        want = expected_summary(path)
        self.assertEqual(block["file"], path)
        for key, value in want.items():
            self.assertIn(key, block)
            got = block[key]
            if value is None:
                self.assertEqual(got, "-", key)
            elif key == "mean_newton_its":
                self.assertAlmostEqual(float(got), value, delta=1e-12 * max(1.0, value), msg=key)
            elif isinstance(value, int):
                self.assertEqual(int(got), value, key)
            else:  # the same double: printed with repr, computed the same way
                self.assertEqual(float(got), value, f"{key}: {got} != {value!r}")

    # 1. real runs --------------------------------------------------------------------------------------
    def test_plots_of_real_runs(self):
        self.need_runs()
        for scheme, path in self.runs.items():
            with self.subTest(scheme=scheme):
                out = os.path.join(self.dir, "png-" + scheme)
                r = plot("-o", out, path)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stderr, "")
                self.assert_pngs(out)

    # 2. summary values ---------------------------------------------------------------------------------
    def test_summary_of_real_runs(self):
        self.need_runs()
        for scheme, path in self.runs.items():
            with self.subTest(scheme=scheme):
                r = plot("--summary", path)
                self.assertEqual(r.returncode, 0, r.stderr)
                blocks = parse_summary(r.stdout)
                self.assertEqual(len(blocks), 1)
                self.assert_summary(blocks[0], path)
                self.assertEqual(blocks[0]["label"], scheme)  # the parent directory's name
                self.assertEqual(int(blocks[0]["rows"]), 51)
        # the program's own claims as a sanity check of the data: EM conserves energy, VI-B has Gv_max
        em = parse_summary(plot("--summary", self.runs["em"]).stdout)[0]
        self.assertLess(float(em["max_rel_E_drift"]), 1e-12)
        self.assertEqual(em["max_Gv_max"], "-")
        vib = parse_summary(plot("--summary", self.runs["vi-b"]).stdout)[0]
        self.assertNotEqual(vib["max_Gv_max"], "-")

    def test_summary_column_mapping(self):
        """A synthetic file, columns in another order, every column with its own values: each summary key
        comes out of one column only, so reading the wrong column changes it."""
        order = ["Gv_max", "newton_its", "gv_max", "g_max", "Lz", "Ly", "Lx", "Jz", "Jy", "Jx", "V", "T", "E", "t",
                 "step"]
        rows = []
        for n in range(6):
            v = {"step": n, "t": 0.25 * n, "E": 10 + 0.01 * n * n - 0.03 * n, "T": 7 + n, "V": 3 - 0.5 * n,
                 "Jx": 1 + 0.1 * n, "Jy": 2 - 0.2 * n * (n % 2), "Jz": 3 + 0.3 * n, "Lx": -1 + 0.4 * n,
                 "Ly": -2 + 0.5 * (n % 3), "Lz": -3 - 0.7 * n, "g_max": 1e-16 * (n + 1), "gv_max": 1e-14 * (7 - n),
                 "newton_its": [0, 3, 5, 4, 8, 2][n], "Gv_max": "" if n in (0, 2) else 1e-13 * n}
            rows.append(",".join(repr(v[c]) if isinstance(v[c], float) else str(v[c]) for c in order))
        path = write(os.path.join(self.dir, "mapping", "diagnostics.csv"), ",".join(order) + "\n" + "\n".join(rows) + "\n")
        r = plot("--summary", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        block = parse_summary(r.stdout)[0]
        self.assert_summary(block, path)
        # and by hand, independently of expected_summary
        self.assertEqual(int(block["max_newton_its"]), 8)
        self.assertAlmostEqual(float(block["mean_newton_its"]), 22 / 5)
        self.assertEqual(float(block["t_final"]), 1.25)
        self.assertEqual(float(block["max_Gv_max"]), 5e-13)
        self.assertEqual(float(block["max_abs_L_minus_L0"]), abs(-0.7 * 5))

    def test_one_row(self):
        self.need_runs()
        with open(self.runs["vi-b"]) as f:
            lines = f.readlines()
        comments = [line for line in lines if line.startswith("#")]
        self.assertTrue(comments and lines[:len(comments)] == comments, "no provenance before the header")
        path = write(os.path.join(self.dir, "one", "diagnostics.csv"), "".join(lines[:len(comments) + 2]))
        out = os.path.join(self.dir, "png-one")
        r = plot("--summary", "-o", out, path)
        self.assertEqual(r.returncode, 0, r.stderr)
        block = parse_summary(r.stdout)[0]
        self.assert_summary(block, path)
        for key in ["max_abs_E_increment", "max_Gv_max", "mean_newton_its", "max_newton_its"]:
            self.assertEqual(block[key], "-", key)
        self.assert_pngs(out)

    # 3. malformed input --------------------------------------------------------------------------------
    def test_malformed(self):
        good_row = "1,0.002,5.5,5.2,0.3,0,-0.04,0.07,0.4,0,0,1e-16,1e-14,6,"
        head = ",".join(HEADER)
        bad = os.path.join(self.dir, "bad")
        cases = [  # name, file contents (None: no file), strings the message must contain
            ("missing", None, ["no such file"]),
            ("empty", "", ["empty file"]),
            ("blank", "\n\n", ["empty file"]),
            ("header only", head + "\n", ["no data rows"]),
            ("wrong header", head.replace(",Lz", "").replace("gv_max,", "") + "\n" + good_row + "\n",
             [":1:", "missing columns Lz, gv_max"]),
            ("no header", good_row + "\n" + good_row + "\n", [":1:", "missing columns step, t, E"]),
            ("non-numeric", head + "\n" + good_row + "\n" + good_row.replace("5.5", "5.5x") + "\n",
             [":3:", "column 3 (E)", "'5.5x'"]),
            ("non-numeric Gv", head + "\n" + good_row + "abc\n", [":2:", "column 15 (Gv_max)", "'abc'"]),
            ("fractional iterations", head + "\n" + good_row.replace(",6,", ",6.5,") + "\n",
             [":2:", "column 14 (newton_its)", "integer", "'6.5'"]),
            ("empty energy", head + "\n" + good_row.replace("5.5,", ",", 1) + "\n", [":2:", "column 3 (E)"]),
            ("short row", head + "\n" + good_row + "\n" + "2,0.004,5.5\n", [":3:", "expected 15 fields", "got 3"]),
        ]
        for name, text, needles in cases:
            with self.subTest(case=name):
                path = os.path.join(bad, name.replace(" ", "_"), "diagnostics.csv")
                if text is not None:
                    write(path, text)
                for mode in [[], ["--summary"]]:
                    out = os.path.join(self.dir, "png-bad")
                    r = plot(*mode, "-o", out, path)
                    self.assertEqual(r.returncode, 2, f"{name} {mode}: {r.stderr}")
                    self.assertEqual(r.stdout, "")
                    lines = r.stderr.splitlines()
                    self.assertEqual(len(lines), 1, r.stderr)
                    self.assertTrue(lines[0].startswith("gglmbs-plot: error: " + path), lines[0])
                    for needle in needles:
                        self.assertIn(needle, lines[0])
                    self.assertFalse(os.path.exists(os.path.join(out, "energy.png")))

    def test_usage(self):
        r = plot("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("usage: gglmbs-plot", r.stdout)
        self.assertIn("--summary", r.stdout)
        for args in [[], ["--no-such-option", "x.csv"], ["--label", "a", "--label", "b", "x.csv"]]:
            r = plot(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
            self.assertTrue(r.stderr.startswith("gglmbs-plot: error: "), r.stderr)
            self.assertNotIn("Traceback", r.stderr)

    # 4. overlay ----------------------------------------------------------------------------------------
    def test_overlay(self):
        self.need_runs()
        em, vib = self.runs["em"], self.runs["vi-b"]
        out = os.path.join(self.dir, "png-overlay")
        r = plot("-o", out, "--label", "EM", "--label", "VI-B", em, vib)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_pngs(out)
        # a second curve is drawn: the overlay differs from the plot of EM alone
        single = os.path.join(self.dir, "png-em-only")
        self.assertEqual(plot("-o", single, em).returncode, 0)
        for name in PLOTS:
            a = matplotlib.image.imread(os.path.join(out, name))
            b = matplotlib.image.imread(os.path.join(single, name))
            self.assertTrue(a.shape != b.shape or float(abs(a - b).max()) > 0, f"{name}: overlay = EM alone")
        # summaries in file order with the given labels; one label for two files labels the first only
        r = plot("--summary", "--label", "EM", em, vib)
        self.assertEqual(r.returncode, 0, r.stderr)
        blocks = parse_summary(r.stdout)
        self.assertEqual([b["label"] for b in blocks], ["EM", "vi-b"])
        self.assert_summary(blocks[0], em)
        self.assert_summary(blocks[1], vib)


if __name__ == "__main__":
    unittest.main(verbosity=2)

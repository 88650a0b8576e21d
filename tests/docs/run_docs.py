#!/usr/bin/env python3
"""Runs every code block of README.md and docs/*.md as written (ctest test_docs).

Every fenced (```) and every 4-space-indented code block is found, and each is run or checked according
to its form and to the marker in an HTML comment right before it (only blank lines between):

    <!-- doc-test: DIRECTIVE; DIRECTIVE; ... -->

A DIRECTIVE is `name` or `name: value`. A block without a marker is run: an indented block or a fenced one
without language (or sh, bash) by bash (`set -eo pipefail`: every command must succeed); ```c as a whole
program, compiled against the package installed into a scratch prefix (cmake --install, pkg-config gglmbs,
as a user builds it; tests/install/test_install.sh checks the same package) and run; ```python by
/usr/bin/python3 (the interpreter Debian's python3-* packages are for; else this one). Any other block
without a marker (yaml, cmake, an output sample) fails: it needs a marker that says what it is.

Directives that say how a block is run:
  skip: REASON            not run (apt-get set-up, hour-long runs, the whole test suite); REASON is printed
  long: OPTIONS           run with OPTIONS appended to every gglmbs command of the block (after the block's
                          own options, so they override them), e.g. `long: -mbs_t_end 0.05`; needs `why:`
  stub: COMMAND           COMMAND (e.g. scripts/setup.sh) is replaced by `:` in the block; needs `why:`
  instead: COMMANDS       COMMANDS run in place of the block (e.g. an install into the suite's build tree
                          with another prefix); needs `why:`
  why: REASON             the reason for long, stub or instead
  console                 `$ command` lines are run, each followed by its expected output (compared below)
  c: CONTEXT              a C fragment, compiled and run inside a context of this file (CONTEXTS below):
                          model, loaded-model, stepper, element, scheme, file
  pvpython                a ```python block for ParaView: run by pvpython, under xvfb-run (through
                          tests/paraview/xvfb_retry.sh) when it is installed; skipped without pvpython
  args: ARGS              command-line arguments of a python block (sys.argv[1:])
  expect: TEXT            what a python block must print (compared as below)
  png: FILE               after the block, FILE must be a PNG that is not blank (at least 1 % of its pixels
                          differ from the corner pixel, the background)
  yaml: fragment          the block's top-level keys replace those of a small base input (a pendulum, one
                          step of 1e-3 s); the result is run by gglmbs
  yaml: input             the block is a whole input file, run by gglmbs as it is
  options: OPTIONS        extra gglmbs options for a yaml block (needs `why:`)
  options-for: COMMAND    the block is a set of options: appended to COMMAND, which must succeed and print
                          no "was given but never used" warning
  cmake-project: FILES    the block is a CMakeLists.txt: configured with the package installed earlier in
                          the same file ($HOME/opt/gglmbs) and built, with FILES (source paths) beside it

Directives that say what a block shows (compared with what the program prints):
  output-of: COMMAND      the block is what COMMAND (bash, in the scratch tree) prints on stdout + stderr
  output-of: @RECIPE      the same for a named recipe of this file (RECIPES below)
  output-of-previous      the block is (part of) what the previous block printed
  file-contains: PATH     the block is (part of) the file PATH written by an earlier block
  status: N               the exit status COMMAND must have (default 0; `nonzero` for any other)
The expected text must occur in the actual output, compared token by token: runs of white space (line
breaks included) are equal, `...` stands for any text, and numbers are compared exactly unless
  any-number: A, B, ...   these numbers of the block vary legitimately (a machine's memory, a step at
                          which a signal arrives, a time) and match any number
  tolerance: R            numbers agree to a relative tolerance R

Blocks that are no commands:
  formula                 a formula; not run
  diagram                 a picture drawn in text; not run
  layout                  a directory map: every path in it (src/..., include/..., tests/... and file
                          names under the directory last named) must exist in the source tree
  h5-layout: FILE         an HDF5 layout: every group, dataset and attribute it lists must be in FILE
                          (written by an earlier block), with the listed shapes; read with h5py

Each markdown file runs in a scratch tree of its own, top to bottom: a temporary directory with copies of
inputs/ and meshes/ (commands may write there), symlinks to the rest of the source tree (src, include,
scripts, examples, tests, benchmarks, docs, ...), `build` pointing at the real build directory (so
`build/gglmbs -i inputs/...` works as written), an empty `output/`, HOME inside it, and bin/ in front of
PATH with `gglmbs` and `gglmbs-plot` (the installed names the docs use). Nothing is written into the
source tree.

Besides, README.md and docs/ must stand alone: no reference to material outside the repository (the
source papers' files, design notes, "seed 004", "DESIGN 2.3", ../shared/...). The check fails with the
file and line of each.

Usage: run_docs.py [--only FILE[:LINE]] [--list] [--keep]. Environment: GGLMBS_SOURCE_DIR (default: this
file's ../..), GGLMBS_BINARY (default: build/gglmbs), GGLMBS_CMAKE, CC, GGLMBS_MPIEXEC (ctest sets them),
and for mpiexec as root OMPI_ALLOW_RUN_AS_ROOT=1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 (set here if missing).
Prints one line per block and file:line of every failing one; exit status 1 if any failed.
"""
import argparse
import glob
import os
import re
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.realpath(os.environ.get("GGLMBS_SOURCE_DIR") or os.path.join(HERE, "..", ".."))
BINARY = os.path.realpath(os.environ.get("GGLMBS_BINARY") or os.path.join(SOURCE, "build", "gglmbs"))
BUILD = os.path.dirname(BINARY)
CMAKE = os.environ.get("GGLMBS_CMAKE") or shutil.which("cmake") or "cmake"
CC = os.environ.get("CC") or shutil.which("cc") or "cc"
DOC_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
BLOCK_TIMEOUT = 240

# Source entries a scratch tree links to (read only) and copies (commands may write into them).
LINKED = ["src", "include", "scripts", "examples", "tests", "benchmarks", "docs", "cmake", "CMakeLists.txt",
          "gglmbs.pc.in", "README.md"]
COPIED = ["inputs", "meshes"]

# ---- references outside the repository (the docs must stand alone) ----------------------------------------
OUTSIDE = [
    (r"\bseeds?\s*0\d\d\b|(?<![\w.])00[0-4](?=\s+(Sect|eq|Fig|Table|App))", "a source paper named by its file number"),
    (r"shared/|\.\./shared", "a path outside the repository"),
    (r"\bDESIGN(\.md|\s+\d)", "the design notes, which are not in the repository"),
    (r"lost (when|in) (its |the )?(text |)?(was )?extract|did not survive extraction|lost in extraction",
     "the text extraction of a paper, which readers do not have"),
]


def check_standalone(files):
    failures = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                for pattern, what in OUTSIDE:
                    m = re.search(pattern, line, re.IGNORECASE)
                    if m:
                        failures.append(f"{rel(path)}:{n}: refers to {what}: '{m.group(0)}'")
    return failures


def rel(path):
    return os.path.relpath(path, SOURCE)


# ---- extraction ----------------------------------------------------------------------------------------
class Block:
    def __init__(self, path, line, form, info, lines, marker, marker_line):
        self.path, self.line, self.form, self.info, self.lines = path, line, form, info, lines
        self.text = "\n".join(lines) + "\n"
        self.marker, self.marker_line = marker, marker_line
        self.d = parse_marker(marker) if marker is not None else {}

    def where(self):
        return f"{rel(self.path)}:{self.line}"


MARKER = re.compile(r"^\s*<!--\s*doc-test:(.*?)-->\s*$")


def parse_marker(text):
    d = {}
    for part in text.split(";"):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition(":")
        d[name.strip()] = value.strip() if sep else True
    return d


def extract(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    blocks, i, n = [], 0, len(lines)
    prev_blank, in_list = True, False

    def marker_before(start):
        j = start - 1
        while j >= 0 and not lines[j].strip():
            j -= 1
        if j >= 0:
            m = MARKER.match(lines[j])
            if m:
                return m.group(1), j + 1
        return None, None

    while i < n:
        line = lines[i]
        m = re.match(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)", line)
        if m:
            fence, info, start = m.group(2), m.group(3), i
            close = re.compile(r"^ {0,3}" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
            i += 1
            body = []
            while i < n and not close.match(lines[i]):
                body.append(lines[i])
                i += 1
            i += 1
            marker, mline = marker_before(start)
            blocks.append(Block(path, start + 1, "fenced", info, body, marker, mline))
            prev_blank = False
            continue
        if not line.strip():
            prev_blank = True
            i += 1
            continue
        # Indented lines after a list item continue the item; an indented code block needs a blank line
        # before it and no list around it.
        if re.match(r"^\s*([*+-]|\d+[.)])\s", line):
            in_list = True
        elif not line.startswith(" "):
            in_list = False
        if prev_blank and re.match(r"^( {4}|\t)", line) and not in_list:
            start, body = i, []
            while i < n and (not lines[i].strip() or re.match(r"^( {4}|\t)", lines[i])):
                body.append(lines[i][4:] if lines[i].startswith("    ") else lines[i].lstrip("\t"))
                i += 1
            while body and not body[-1].strip():
                body.pop()
            marker, mline = marker_before(start)
            blocks.append(Block(path, start + 1, "indented", "", body, marker, mline))
            prev_blank = False
            continue
        prev_blank = False
        i += 1
    return blocks


# ---- scratch trees and running -----------------------------------------------------------------------
class Tree:
    """The scratch tree of one markdown file."""

    def __init__(self, root, name):
        self.dir = os.path.join(root, name)
        os.makedirs(self.dir)
        for entry in LINKED:
            if os.path.exists(os.path.join(SOURCE, entry)):
                os.symlink(os.path.join(SOURCE, entry), os.path.join(self.dir, entry))
        for entry in COPIED:
            shutil.copytree(os.path.join(SOURCE, entry), os.path.join(self.dir, entry), symlinks=False)
        os.symlink(BUILD, os.path.join(self.dir, "build"))
        for d in ["output", "home", "bin", "doc-test"]:
            os.makedirs(os.path.join(self.dir, d))
        os.symlink(BINARY, os.path.join(self.dir, "bin", "gglmbs"))
        os.symlink(os.path.join(SOURCE, "scripts", "gglmbs-plot"), os.path.join(self.dir, "bin", "gglmbs-plot"))
        self.env = dict(os.environ)
        self.env.update(HOME=os.path.join(self.dir, "home"), MPLBACKEND="Agg",
                        PATH=os.path.join(self.dir, "bin") + os.pathsep + os.environ.get("PATH", ""))
        for k, v in [("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
                     ("OMPI_MCA_rmaps_base_oversubscribe", "1")]:
            self.env.setdefault(k, v)
        self.env.pop("PETSC_OPTIONS", None)
        self.count = 0
        self.previous_output = None

    def scratch(self, name):
        self.count += 1
        return os.path.join(self.dir, "doc-test", f"{self.count:02d}_{name}")

    def run(self, argv, timeout=BLOCK_TIMEOUT, stdin=None):
        """(status, stdout, stderr) of argv run in the tree; status None on a time-out."""
        try:
            p = subprocess.run(argv, cwd=self.dir, env=self.env, capture_output=True, text=True, timeout=timeout,
                               stdin=subprocess.DEVNULL if stdin is None else stdin, errors="replace")
            return p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
            return None, out, err + f"\n(killed after {timeout} s)"

    def bash(self, script, timeout=BLOCK_TIMEOUT):
        path = self.scratch("block.sh")
        with open(path, "w") as f:
            f.write("set -eo pipefail\n" + script)
        return self.run(["bash", path], timeout=timeout)


class Failure(Exception):
    pass


def tail(text, n=40):
    lines = text.rstrip("\n").split("\n")
    return "\n".join(("  | " + l) for l in lines[-n:]) if text.strip() else "  | (no output)"


def require(result, what):
    status, out, err = result
    if status != 0:
        raise Failure(f"{what} exited with status {status}:\n{tail(out + err)}")
    return out + err


# ---- comparing output ------------------------------------------------------------------------------------
NUMBER = r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])"


def expected_pattern(expected, anys, tolerance):
    """A regular expression for the expected text and, per group, the expected number (None: any)."""
    parts, numbers = [], []
    pos = 0
    token = re.compile(r"(\s+)|(\.\.\.)|(" + NUMBER + r")", re.S)
    text = expected.strip()
    while pos < len(text):
        m = token.search(text, pos)
        if not m:
            parts.append(re.escape(text[pos:]))
            break
        parts.append(re.escape(text[pos:m.start()]))
        if m.group(1):
            parts.append(r"\s+")
        elif m.group(2):
            parts.append(r".*?")
        else:
            value = m.group(3)
            if value in anys or tolerance is not None:
                parts.append("(" + NUMBER + ")")
                numbers.append(None if value in anys else value)
            else:
                parts.append(re.escape(value))
        pos = m.end()
    return re.compile("".join(parts), re.S), numbers


def compare(expected, actual, d):
    anys = {a.strip() for a in str(d.get("any-number", "")).split(",") if a.strip()}
    tolerance = float(d["tolerance"]) if "tolerance" in d else None
    pattern, numbers = expected_pattern(expected, anys, tolerance)
    m = pattern.search(actual)
    if not m:
        # Name the first expected line at which the block stops matching, for the report.
        lines, missing = expected.strip().split("\n"), None
        for k in range(1, len(lines) + 1):
            if lines[k - 1].strip() in ("", "..."):
                continue
            if not expected_pattern("\n".join(lines[:k]), anys, tolerance)[0].search(actual):
                missing = lines[k - 1].strip()
                break
        hint = f"\n  the block stops matching at: {missing}" if missing else ""
        raise Failure(f"the output differs from the block{hint}\n  actual output:\n{tail(actual, 60)}")
    for i, want in enumerate(numbers):
        if want is None:
            continue
        got = m.group(i + 1)
        w, g = float(want), float(got)
        if abs(g - w) > tolerance * max(abs(w), abs(g)):
            raise Failure(f"number {want} of the block is {got} in the output (relative tolerance {tolerance})")


def check_status(status, d):
    want = str(d.get("status", "0"))
    if status is None:
        raise Failure("timed out")
    if want == "nonzero":
        if status == 0:
            raise Failure("exited with status 0, expected a failure")
    elif status != int(want):
        raise Failure(f"exited with status {status}, expected {want}")


# ---- shell blocks ----------------------------------------------------------------------------------------
def gglmbs_commands(line, options):
    """Appends options to every gglmbs command of a shell line (segments split at &&, ||, ;, |)."""
    m = re.search(r"\s#\s", line)
    code, comment = (line[:m.start()], line[m.start():]) if m else (line, "")
    segments = re.split(r"(&&|\|\||;|\|)", code)
    for i in range(0, len(segments), 2):
        if any(re.fullmatch(r"(.*/)?gglmbs", w) for w in segments[i].split()):
            segments[i] = segments[i].rstrip() + " " + options + (" " if i + 1 < len(segments) else "")
    return "".join(segments) + comment


def run_shell(block, tree):
    d = block.d
    script = block.text
    if "stub" in d:
        script = re.sub(r"(?<![\w/.-])" + re.escape(d["stub"]) + r"(?![\w/.-])", ":", script)
    if "long" in d:
        script = "\n".join(gglmbs_commands(l, d["long"]) for l in script.split("\n"))
    result = tree.bash(script)
    tree.previous_output = result[1] + result[2]
    require(result, "the block")


def run_console(block, tree):
    commands, current = [], None
    for line in block.lines:
        if line.startswith("$ "):
            current = [line[2:], []]
            commands.append(current)
        elif current is None:
            raise Failure("a console block must start with a `$ command` line")
        else:
            current[1].append(line)
    for command, expected in commands:
        status, out, err = tree.bash(command)
        tree.previous_output = out + err
        check_status(status, block.d)
        if "\n".join(expected).strip():
            compare("\n".join(expected), out + err, block.d)


# ---- recipes (output-of: @NAME) ----------------------------------------------------------------------------
def recipe_interrupt_chain1000(tree):
    """gglmbs -i inputs/chain1000.yaml, sent SIGINT once it has written a few diagnostics rows (every 10 steps)."""
    csv = os.path.join(tree.dir, "output", "chain1000", "diagnostics.csv")
    if os.path.exists(csv):
        os.remove(csv)  # an earlier block's
    p = subprocess.Popen(["gglmbs", "-i", "inputs/chain1000.yaml"], cwd=tree.dir, env=tree.env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and p.poll() is None:
        try:
            with open(csv) as f:
                if sum(1 for line in f if not line.startswith("#")) >= 6:  # the header and 5 rows
                    break
        except OSError:
            pass
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    return p.returncode, out, err


PLOT_ROW = "1,0.002,5.5,5.2,0.3,0,-0.04,0.07,0.4,0,0,1e-16,1e-14,6,"
PLOT_HEAD = "step,t,E,T,V,Jx,Jy,Jz,Lx,Ly,Lz,g_max,gv_max,newton_its,Gv_max"


def recipe_plot_errors(tree):
    """gglmbs-plot out/diagnostics.csv for each malformed file of docs/plots.md, in its order."""
    cases = [None, "",
             PLOT_HEAD.replace(",Lz", "").replace("gv_max,", "") + "\n" + PLOT_ROW + "\n",
             PLOT_HEAD + "\n" + PLOT_ROW + "\n" + PLOT_ROW.replace("5.5", "5.5x") + "\n",
             PLOT_HEAD + "\n" + PLOT_ROW.replace(",6,", ",6.5,") + "\n",
             PLOT_HEAD + "\n" + PLOT_ROW + "\n2,0.004,5.5\n"]
    out_all, status = "", 2
    path = os.path.join(tree.dir, "out", "diagnostics.csv")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    for text in cases:
        if os.path.exists(path):
            os.remove(path)
        if text is not None:
            with open(path, "w") as f:
                f.write(text)
        s, out, err = tree.run(["gglmbs-plot", "out/diagnostics.csv"])
        out_all += out + err
        if s != 2:
            status = s
    return status, out_all, ""


RECIPES = {"interrupt-chain1000": recipe_interrupt_chain1000, "plot-errors": recipe_plot_errors}


def run_output_of(block, tree):
    d = block.d
    if "output-of-previous" in d:
        if tree.previous_output is None:
            raise Failure("output-of-previous: no block ran before it in this file")
        compare(block.text, tree.previous_output, d)
        return
    command = d["output-of"]
    if command.startswith("@"):
        if command[1:] not in RECIPES:
            raise Failure(f"unknown recipe {command} (known: {', '.join(RECIPES)})")
        status, out, err = RECIPES[command[1:]](tree)
    else:
        status, out, err = tree.bash(command)
    check_status(status, d)
    compare(block.text, out + err, d)


def run_file_contains(block, tree):
    path = os.path.join(tree.dir, block.d["file-contains"])
    if not os.path.exists(path):
        raise Failure(f"{block.d['file-contains']} was not written by the blocks before")
    with open(path, errors="replace") as f:
        compare(block.text, f.read(), block.d)


# ---- C -----------------------------------------------------------------------------------------------------
C_MAIN = """
int main(int argc, char **argv)
{
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(DocFragment());
  PetscCall(PetscFinalize());
  return 0;
}
"""

# Contexts for C fragments: what the fragment may use, declared (and set up) around it. @BODY@ is the
# fragment (function-body contexts) and @FILE@/@CALLS@ the file-level part of it and its file-level calls
# (file contexts: a call such as `MbsElementTypeRegister(&TetherType);` at file level runs in main()).
C_CONTEXTS = {
    # the fragment builds a model from nothing
    "model": """#include <gglmbs/gglmbs.h>
static PetscErrorCode DocFragment(void)
{
  MbsModel model = NULL;

  PetscFunctionBeginUser;
@BODY@
  PetscCall(MbsModelDestroy(&model));
  PetscFunctionReturn(0);
}
""",
    # a model read from inputs/pendulum3d.yaml, not set up; the fragment creates the stepper st
    "loaded-model": """#include <gglmbs/gglmbs.h>
static PetscErrorCode DocFragment(void)
{
  MbsModel     model = NULL;
  MbsStepper   st    = NULL;
  MbsRunConfig cfg;
  MPI_Comm     comm = PETSC_COMM_WORLD;
  PetscReal    h    = 0.05;

  PetscFunctionBeginUser;
  (void)comm;
  (void)h;
  PetscCall(MbsModelCreate(PETSC_COMM_WORLD, &model));
  PetscCall(MbsModelLoadYAML(model, "inputs/pendulum3d.yaml", &cfg));
@BODY@
  PetscCall(MbsStepperDestroy(&st));
  PetscCall(MbsModelDestroy(&model));
  PetscFunctionReturn(0);
}
""",
    # a stepper st (scheme em, h = 0.05) on the set-up model of inputs/pendulum3d.yaml
    "stepper": """#include <gglmbs/gglmbs.h>
static PetscErrorCode DocFragment(void)
{
  MbsModel     model = NULL;
  MbsStepper   st    = NULL;
  MbsRunConfig cfg;
  MPI_Comm     comm = PETSC_COMM_WORLD;
  PetscReal    h    = 0.05;

  PetscFunctionBeginUser;
  (void)comm;
  PetscCall(MbsModelCreate(PETSC_COMM_WORLD, &model));
  PetscCall(MbsModelLoadYAML(model, "inputs/pendulum3d.yaml", &cfg));
  PetscCall(MbsModelSetUp(model));
  PetscCall(MbsStepperCreate(model, &st));
  PetscCall(MbsStepperSetTimeStep(st, h));
@BODY@
  PetscCall(MbsStepperDestroy(&st));
  PetscCall(MbsModelDestroy(&model));
  PetscFunctionReturn(0);
}
""",
    # declarations at file level (checked against the library's headers); file-level calls run in main()
    "file": """#include <gglmbs/gglmbs.h>
@FILE@
static PetscErrorCode DocFragment(void)
{
  PetscFunctionBeginUser;
@CALLS@
  PetscFunctionReturn(0);
}
""",
    # an element type: the kernel functions the fragment names are declared here (examples/custom_element.c
    # has them); the fragment's file-level calls run in main()
    "element": """#include <gglmbs/gglmbs.h>
#include <gglmbs/elements.h>
static double TetherEnergy(const MbsElemData *e, const double *q) { (void)e; (void)q; return 0; }
static void   TetherGradient(const MbsElemData *e, const double *q, double *dV) { (void)e; (void)q; (void)dV; }
static void   TetherHessian(const MbsElemData *e, const double *q, double *H) { (void)e; (void)q; (void)H; }
static void   TetherDiscreteGradient(const MbsElemData *e, const double *q0, const double *q1, double *dg, double *ddg)
{
  (void)e; (void)q0; (void)q1; (void)dg; (void)ddg;
}
@FILE@
static PetscErrorCode DocFragment(void)
{
  PetscFunctionBeginUser;
@CALLS@
  PetscFunctionReturn(0);
}
""",
    # a scheme: the operations the fragment names are declared here (examples/custom_scheme.c has them)
    "scheme": """#include <gglmbs/gglmbs.h>
#include <gglmbs/schemes.h>
static PetscErrorCode MyEMSetUp(MbsStepper st) { (void)st; return 0; }
static PetscErrorCode MyEMResidual(MbsStepper st, const PetscScalar *x, PetscScalar *f) { (void)st; (void)x; (void)f; return 0; }
static PetscErrorCode MyEMJacobian(MbsStepper st, const PetscScalar *x) { (void)st; (void)x; return 0; }
static PetscErrorCode MyEMConstraintForceWeight(MbsStepper st, PetscReal *w) { (void)st; *w = 0.5; return 0; }
@FILE@
static PetscErrorCode DocFragment(void)
{
  PetscFunctionBeginUser;
@CALLS@
  PetscFunctionReturn(0);
}
""",
}


def split_file_calls(block):
    """The fragment's file-level part and its file-level calls (lines at brace depth 0 that call a
    function: `Name(...);` or `PetscCall(Name(...));`), each with a #line directive."""
    file_part, calls, depth = [], [], 0
    for k, line in enumerate(block.lines):
        directive = f'#line {block.line + 1 + k} "{rel(block.path)}"'
        m = re.match(r"^\s*([A-Za-z_]\w*\s*\(.*\))\s*;(.*)$", line)
        if depth == 0 and m and not re.match(r"^\s*(typedef|static|extern|const|struct|enum|PETSC_EXTERN)\b", line):
            call = m.group(1) if m.group(1).startswith("PetscCall(") else f"PetscCall({m.group(1)})"
            calls += [directive, f"  {call};{m.group(2)}"]
        else:
            file_part += [directive, line]
        depth += line.count("{") - line.count("}")
    return "\n".join(file_part), "\n".join(calls)


class Package:
    """The build tree installed into a scratch prefix once, for compiling C blocks against."""

    def __init__(self, root):
        self.prefix = os.path.join(root, "prefix")
        self.ready = None

    def flags(self, tree):
        if self.ready is None:
            r = tree.run([CMAKE, "--install", BUILD, "--prefix", self.prefix], timeout=120)
            if r[0] != 0:
                raise Failure(f"cmake --install {BUILD} --prefix {self.prefix} failed:\n{tail(r[1] + r[2])}")
            pcs = glob.glob(os.path.join(self.prefix, "**", "gglmbs.pc"), recursive=True)
            if len(pcs) != 1:
                raise Failure(f"expected one gglmbs.pc under {self.prefix}, found {pcs}")
            env = dict(tree.env, PKG_CONFIG_PATH=os.path.dirname(pcs[0]))
            p = subprocess.run(["pkg-config", "--cflags", "--libs", "gglmbs"], env=env, capture_output=True,
                               text=True)
            if p.returncode != 0:
                raise Failure(f"pkg-config gglmbs failed: {p.stderr}")
            libdir = os.path.dirname(os.path.dirname(pcs[0]))
            self.ready = shlex.split(p.stdout) + [f"-Wl,-rpath,{libdir}", "-lm"]
        return self.ready


def run_c(block, tree, package):
    context = block.d.get("c", "program")
    source = tree.scratch("snippet.c")
    exe = source[:-2]
    origin = f'#line {block.line + 1} "{rel(block.path)}"\n'
    if context == "program":
        code = origin + block.text
    elif context in ("model", "loaded-model", "stepper"):
        code = C_CONTEXTS[context].replace("@BODY@", origin + block.text) + C_MAIN
    elif context in ("file", "element", "scheme"):
        file_part, calls = split_file_calls(block)
        code = C_CONTEXTS[context].replace("@FILE@", file_part).replace("@CALLS@", calls) + C_MAIN
    else:
        raise Failure(f"unknown C context '{context}' (known: program, {', '.join(C_CONTEXTS)})")
    with open(source, "w") as f:
        f.write(code)
    flags = package.flags(tree)
    cmd = [CC, "-O1", "-Wall", "-Werror=implicit-function-declaration", "-Werror=incompatible-pointer-types",
           "-Werror=int-conversion", "-Werror=return-type", "-o", exe, source] + flags
    status, out, err = tree.run(cmd, timeout=120)
    if status != 0:
        raise Failure(f"does not compile ({' '.join(cmd[:2])} ... {os.path.basename(source)}):\n{tail(out + err)}")
    require(tree.run([exe], timeout=120), "the compiled block")


# ---- python and pvpython ---------------------------------------------------------------------------------
def run_python(block, tree):
    path = tree.scratch("block.py")
    with open(path, "w") as f:
        f.write(block.text)
    if "pvpython" in block.d:
        pvpython = shutil.which("pvpython")
        if not pvpython:
            return "skipped: pvpython (Debian package paraview) is not installed"
        xvfb = shutil.which("xvfb-run")
        if xvfb:
            argv = ["sh", os.path.join(SOURCE, "tests", "paraview", "xvfb_retry.sh"), xvfb, pvpython, path]
        else:
            argv = [pvpython, "--force-offscreen-rendering", path]
        result = tree.run(argv)
    else:
        args = shlex.split(block.d["args"]) if isinstance(block.d.get("args"), str) else []
        result = tree.run([DOC_PYTHON, path] + args)
    tree.previous_output = result[1] + result[2]
    require(result, "the block")
    if "expect" in block.d:
        compare(block.d["expect"], result[1] + result[2], block.d)
    if "png" in block.d:
        check_png(os.path.join(tree.dir, block.d["png"]))


def read_png(path):
    """(width, height, rows of pixel tuples) of an 8-bit RGB or RGBA PNG, with the standard library."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise Failure(f"{path} is not a PNG file")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunk)
            if depth != 8 or ctype not in (2, 6) or interlace:
                raise Failure(f"{path}: unsupported PNG (depth {depth}, colour type {ctype})")
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    raw, rows, prev = zlib.decompress(idat), [], bytearray(width * bpp)
    stride = width * bpp
    for y in range(height):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 255
            elif ftype == 2:
                line[x] = (line[x] + b) & 255
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def check_png(path, share=0.01):
    if not os.path.exists(path):
        raise Failure(f"{rel(path) if path.startswith(SOURCE) else os.path.basename(path)} was not written")
    width, height, bpp, rows = read_png(path)
    background = rows[0][:3]
    drawn = sum(1 for row in rows for x in range(0, width * bpp, bpp) if row[x:x + 3] != background)
    if drawn < share * width * height:
        raise Failure(f"{os.path.basename(path)} is almost blank: {drawn} of {width} x {height} pixels differ "
                      f"from the background {tuple(background)} (at least {share:.0%} expected)")
    return drawn


# ---- YAML, options, CMake ----------------------------------------------------------------------------------
YAML_BASE = """time: {step: 0.001, end: 0.001}
gravity: [0, 0, -9.81]
bodies:
  - {name: bob, type: particle, mass: 1, position: [1, 0, 0], velocity: [0, 1, 0]}
joints:
  - {type: rod, bodies: [ground, bob], length: 1}
output: {directory: output/doc-test, every: 1}
"""


def top_level_sections(text):
    """{key: text} of a YAML document's top-level keys (each key's lines, up to the next top-level key)."""
    sections, key = {}, None
    for line in text.split("\n"):
        m = re.match(r"^([A-Za-z_]\w*)\s*:", line)
        if m:
            key = m.group(1)
            sections[key] = line + "\n"
        elif key is not None and line.strip():
            sections[key] += line + "\n"
    return sections


def run_yaml(block, tree):
    kind = block.d["yaml"]
    if kind == "input":
        text = block.text
    elif kind == "fragment":
        sections = top_level_sections(YAML_BASE)
        sections.update(top_level_sections(block.text))
        text = "".join(sections.values())
    else:
        raise Failure(f"yaml: expected 'input' or 'fragment', got '{kind}'")
    # One directory below the tree, so that relative paths (a mesh's ../meshes/...) resolve as from inputs/.
    path = tree.scratch("input.yaml")
    with open(path, "w") as f:
        f.write(text)
    options = shlex.split(block.d.get("options", "")) if isinstance(block.d.get("options"), str) else []
    status, out, err = tree.run([BINARY, "-i", path] + options)
    if status != 0 or "was given but never used" in err:
        raise Failure(f"gglmbs -i {os.path.basename(path)} failed (status {status}); the input was:\n"
                      f"{tail(text)}\n  output:\n{tail(out + err)}")


def run_options_for(block, tree):
    options = " ".join(l.strip() for l in block.lines if l.strip())
    status, out, err = tree.bash(block.d["options-for"] + " " + options)
    if status != 0:
        raise Failure(f"{block.d['options-for']} with the block's options exited with status {status}:\n"
                      f"{tail(out + err)}")
    unused = [l for l in err.split("\n") if "was given but never used" in l]
    if unused:
        raise Failure("options of the block were not used:\n" + "\n".join("  | " + l for l in unused))


def run_cmake_project(block, tree):
    d = tree.scratch("cmake")
    os.makedirs(d)
    with open(os.path.join(d, "CMakeLists.txt"), "w") as f:
        f.write(block.text)
    for src in block.d["cmake-project"].split():
        shutil.copy(os.path.join(tree.dir, src), d)
    prefix = os.path.join(tree.env["HOME"], "opt", "gglmbs")
    require(tree.run([CMAKE, "-S", d, "-B", os.path.join(d, "build"), f"-DCMAKE_PREFIX_PATH={prefix}",
                      f"-DCMAKE_C_COMPILER={CC}"]), "cmake (configure)")
    require(tree.run([CMAKE, "--build", os.path.join(d, "build")]), "cmake --build")


# ---- layouts -------------------------------------------------------------------------------------------------
TOP = ("src", "include", "tests", "examples", "benchmarks", "scripts", "inputs", "meshes", "docs", "cmake")


def expand_braces(path):
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    return [q for alt in m.group(1).split(",") for q in expand_braces(path[:m.start()] + alt + path[m.end():])]


def run_layout(block):
    missing, directory = [], None
    for line in block.lines:
        for word in re.findall(r"[\w./{},*-]+", line):
            word = word.rstrip(".,;:")
            if word.split("/")[0] in TOP and "/" in word:
                for path in expand_braces(word):
                    if not glob.glob(os.path.join(SOURCE, path)):
                        missing.append(path)
                if word.endswith("/"):
                    directory = word
            elif re.fullmatch(r"[\w-]+\.(c|h|py|sh)", word) and directory:
                if not glob.glob(os.path.join(SOURCE, directory, "**", word), recursive=True):
                    missing.append(f"{directory}{word}")
    if missing:
        raise Failure("paths that do not exist: " + ", ".join(dict.fromkeys(missing)))


H5_CHECK = r"""
import re, sys
import h5py
f = h5py.File(sys.argv[1], "r")
layout = open(sys.argv[2]).read().split("\n")
errors, entries = [], []
for line in layout:
    if line.startswith("/"):
        spec, rest = (re.split(r"\s{2,}", line, maxsplit=1) + [""])[:2]
        first, *others = [x.strip() for x in spec.split(",")]
        base = first.rsplit("/", 1)[0]
        entries.append([first, rest])
        entries += [[base + "/" + name, rest] for name in others]   # /steps/<step>/d1, d2, d3
    elif entries and line.strip():
        entries[-1][1] += " " + line.strip()
values = {k: int(v) for k, v in f.attrs.items() if k in ("npoints", "nbodies", "ncells")}
first = sorted(f["steps"])[0] if "steps" in f else None
for path, rest in entries:
    if "<step>" in path:
        path = path.replace("<step>", first or "?")
    path = path.rstrip("/") or "/"
    if path not in f and path != "/":
        if "only when" not in rest:
            errors.append(f"{path} is not in the file")
        continue
    node = f[path]
    attrs = re.search(r"attributes:\s*(.*)", rest)
    if attrs:
        text = re.sub(r"\([^()]*\)", "", attrs.group(1))
        for item in text.split(","):
            name = item.strip().split(" ")[0].split("=")[0].strip()
            if name and name not in node.attrs:
                errors.append(f"{path}: no attribute {name}")
    for name in re.findall(r'attribute "(\w+)"', rest):
        if name not in node.attrs:
            errors.append(f"{path}: no attribute {name}")
    shape = re.match(r"(int|double)\s*\[([^\]]*)\]", rest)
    if shape:
        kind, dims = shape.groups()
        if isinstance(node, h5py.Group):
            errors.append(f"{path} is a group, the layout says a dataset")
            continue
        if (kind == "int") != (node.dtype.kind in "iu"):
            errors.append(f"{path}: type {node.dtype}, the layout says {kind}")
        want = []
        for dim in dims.split(","):
            expr = re.sub(r"(\d)\s+([a-z])", r"\1*\2", dim.strip())
            want.append(eval(expr, {}, dict(values, np=values.get("npoints"))))
        if list(node.shape) != want:
            errors.append(f"{path}: shape {list(node.shape)}, the layout says [{dims}] = {want}")
print("\n".join(errors))
sys.exit(1 if errors else 0)
"""


def run_h5_layout(block, tree):
    path = os.path.join(tree.dir, block.d["h5-layout"])
    if not os.path.exists(path):
        raise Failure(f"{block.d['h5-layout']} was not written by the blocks before")
    script, layout = tree.scratch("h5check.py"), tree.scratch("layout.txt")
    with open(script, "w") as f:
        f.write(H5_CHECK)
    with open(layout, "w") as f:
        f.write(block.text)
    status, out, err = tree.run([DOC_PYTHON, script, path, layout])
    if status != 0:
        raise Failure(f"the file does not have the layout of the block:\n{tail(out + err)}")


# ---- dispatch ------------------------------------------------------------------------------------------------
NOT_RUN = ("formula", "diagram")


def classify(block):
    d = block.d
    for key in ("skip",) + NOT_RUN + ("layout", "h5-layout", "yaml", "options-for", "cmake-project", "output-of",
                                      "output-of-previous", "file-contains", "console", "pvpython", "c", "instead"):
        if key in d:
            return key
    if block.info == "c":
        return "c"
    if block.info == "python":
        return "python"
    if block.form == "indented" or block.info in ("", "sh", "bash", "shell"):
        return "shell"
    return None


KNOWN = {"args", "expect", "skip", "long", "stub", "instead", "why", "console", "c", "pvpython", "png", "yaml", "options",
         "options-for", "cmake-project", "output-of", "output-of-previous", "file-contains", "status", "any-number",
         "tolerance", "formula", "diagram", "layout", "h5-layout"}


def run_block(block, tree, package):
    """None when run and passed; a string starting with 'skipped' when not run."""
    d, kind = block.d, classify(block)
    unknown = [k for k in d if k not in KNOWN]
    if unknown:
        raise Failure(f"unknown marker directive(s) {', '.join(repr(k) for k in unknown)} (a ';' inside a value "
                      "starts a new directive)")
    for key in ("long", "stub", "instead", "options"):
        if key in d and not isinstance(d.get("why"), str):
            raise Failure(f"the marker's '{key}' needs a 'why: ...'")
    if kind is None:
        raise Failure(f"a ```{block.info} block needs a marker that says what it is (<!-- doc-test: ... -->; "
                      "tests/docs/run_docs.py lists them)")
    if kind == "skip":
        if not isinstance(d["skip"], str) or not d["skip"]:
            raise Failure("'skip' needs a reason: <!-- doc-test: skip: REASON -->")
        return "skipped: " + d["skip"]
    if kind in NOT_RUN:
        return f"not code: {kind}"
    if kind == "layout":
        return run_layout(block)
    if kind == "h5-layout":
        return run_h5_layout(block, tree)
    if kind == "yaml":
        return run_yaml(block, tree)
    if kind == "options-for":
        return run_options_for(block, tree)
    if kind == "cmake-project":
        return run_cmake_project(block, tree)
    if kind in ("output-of", "output-of-previous"):
        return run_output_of(block, tree)
    if kind == "file-contains":
        return run_file_contains(block, tree)
    if kind == "console":
        return run_console(block, tree)
    if kind in ("pvpython", "python"):
        return run_python(block, tree)
    if kind == "c":
        return run_c(block, tree, package)
    if kind == "instead":
        result = tree.bash(d["instead"])
        tree.previous_output = result[1] + result[2]
        require(result, "the marker's instead-commands")
        return None
    return run_shell(block, tree)


def main():
    parser = argparse.ArgumentParser(description="Run the code blocks of README.md and docs/*.md.")
    parser.add_argument("--only", action="append", default=[], help="FILE or FILE:LINE (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the blocks and how each is run")
    parser.add_argument("--keep", action="store_true", help="keep the scratch trees")
    args = parser.parse_args()

    files = [os.path.join(SOURCE, "README.md")] + sorted(glob.glob(os.path.join(SOURCE, "docs", "*.md")))
    started = time.time()
    failures = [f"{x}" for x in check_standalone(files)]
    for f in failures:
        print(f"FAIL {f}")

    selected = {}
    for spec in args.only:
        name, _, line = spec.partition(":")
        selected.setdefault(os.path.realpath(os.path.join(SOURCE, name)), set()).update({int(line)} if line else set())
    if selected:
        files = [f for f in files if os.path.realpath(f) in selected]

    if args.list:
        for path in files:
            for b in extract(path):
                print(f"{b.where()}: {b.form} {b.info or '-'}: {classify(b)} {b.marker.strip() if b.marker else ''}")
        return 0

    if not os.path.exists(BINARY):
        print(f"run_docs.py: the program {BINARY} does not exist (GGLMBS_BINARY)", file=sys.stderr)
        return 1
    root = tempfile.mkdtemp(prefix="gglmbs_test_docs.")
    package = Package(root)
    counts = {"run": 0, "skipped": 0, "not code": 0, "failed": 0}
    found = 0
    for path in files:
        blocks = extract(path)
        found += len(blocks)
        lines = selected.get(os.path.realpath(path))
        tree = Tree(root, rel(path).replace("/", "_").replace(".md", ""))
        for b in blocks:
            if lines and b.line not in lines:
                continue
            t0 = time.time()
            try:
                note = run_block(b, tree, package)
            except Failure as e:
                counts["failed"] += 1
                failures.append(f"{b.where()}: {e}")
                print(f"FAIL {b.where()} ({classify(b)}, {time.time() - t0:.1f} s): {e}", flush=True)
                continue
            if note and note.startswith("skipped"):
                counts["skipped"] += 1
            elif note and note.startswith("not code"):
                counts["not code"] += 1
            else:
                counts["run"] += 1
            print(f"ok   {b.where()} ({classify(b)}, {time.time() - t0:.1f} s){': ' + note if note else ''}", flush=True)

    print(f"\nrun_docs.py: {found} blocks in {len(files)} files: {counts['run']} run and passed, {counts['failed']} "
          f"failed, {counts['skipped']} skipped, {counts['not code']} not code; {time.time() - started:.0f} s")
    if failures:
        print("\nFailing blocks and references:")
        for f in failures:
            print("  " + f.split("\n")[0])
        print(f"\nscratch trees kept in {root}")
    elif args.keep:
        print(f"scratch trees kept in {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

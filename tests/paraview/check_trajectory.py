"""
The trajectory output (trajectory.xdmf + trajectory.h5) read back with ParaView's own XDMF reader.

Run by ctest under pvpython (test_trajectory_paraview, and test_trajectory_paraview_np2 with --np 2):

  pvpython check_trajectory.py --gglmbs build/gglmbs --source . --work DIR [--np 2 --mpiexec mpiexec] [--render]

For each case it runs gglmbs with -mbs_trajectory xdmf -mbs_trajectory_every K and a short -mbs_t_end,
opens the XDMF file with Xdmf3ReaderS and asserts: the number of points (bodies + ground anchors) and of
cells (two-point elements), the time steps, that the points at the last time are the final state written
with -mbs_write_state (1e-12), that p = m v holds between that state's momenta and the written
velocities, that the directors are orthonormal on rigid bodies and zero elsewhere, the cell kinds, and
the constraint and spring forces of a model hanging at rest (m g, sign and units). With --render it draws
one frame headless and asserts that the picture is not blank; with --np N it runs every case on N ranks
as well and asserts that the trajectory is the one-rank trajectory, without it that a run restarted from a
checkpoint appends to the trajectory it continues, and that a running program lists its written steps at
each sync (-mbs_trajectory_sync) in a file ParaView reads, and all of them when stopped by a signal.
Silent when it passes.
"""
import argparse
import csv
import math
import os
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import numpy as np
from paraview import servermanager
from paraview import simple
from vtk.numpy_interface import dataset_adapter as dsa

G = 9.81

# input, final time and its step h, trajectory every (on the command line, or in the input file with
# trajectory_in_input), expected points, cells, written steps, cell kinds (None: not checked), rigid bodies,
# options, expected cell forces at the last time
CASES = [
    dict(name="heavy_top", input="inputs/heavy_top.yaml", t_end=0.02, h=0.002, every=3, points=2, cells=1,
         steps=[0, 3, 6, 9, 10], kinds=[1], rigid=[0]),
    dict(name="four_particle", input="inputs/four_particle.yaml", t_end=0.05, h=0.01, every=2, points=4, cells=4,
         steps=[0, 2, 4, 5], kinds=[2, 2, 5, 5], rigid=[]),
    dict(name="rigid_chain_revolute", input="tests/inputs/parallel/rigid_chain_revolute.yaml", t_end=0.004, h=1e-3,
         every=1, points=25, cells=24, steps=[0, 1, 2, 3, 4], kinds=[3] * 24, rigid=list(range(24)),
         options=["-mbs_scheme", "vi-b"]),
    dict(name="net", input="tests/inputs/parallel/net.yaml", t_end=0.003, h=1e-3, every=2, points=72, cells=113,
         steps=[0, 2, 3], kinds=None, rigid=[]),
    dict(name="hanging", input="tests/inputs/trajectory/hanging.yaml", t_end=0.02, h=0.01, every=5, points=7, cells=4,
         steps=[0, 2], kinds=[2, 2, 1, 4], rigid=[3], trajectory_in_input=True,
         forces=[[0, 0, 2.5 * G], [0, 0, 0.5 * G], [0, 0, 3 * G], [0, 0, 1 * G]]),
]

failures = []


def check(cond, message):
    if not cond:
        failures.append(message)
    return cond


def run_gglmbs(args, case, outdir, np_ranks):
    cmd = [args.gglmbs, "-i", os.path.join(args.source, case["input"]), "-mbs_output_dir", outdir,
           "-mbs_t_end", repr(case["t_end"]), "-mbs_write_state", os.path.join(outdir, "state.csv")] + case.get("options", [])
    if not case.get("trajectory_in_input"):
        cmd += ["-mbs_trajectory", "xdmf", "-mbs_trajectory_every", str(case["every"])]
    if np_ranks > 1:
        cmd = [args.mpiexec, "--oversubscribe", "-n", str(np_ranks)] + cmd
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, env=child_environment())
    if proc.returncode != 0:
        failures.append("%s: '%s' failed (exit %d):\n%s" % (case["name"], " ".join(cmd), proc.returncode, proc.stdout))
        return False
    return True


def child_environment():
    """pvpython is an MPI singleton: its Open MPI/PMIx variables would make the child mpiexec or gglmbs join it."""
    keep = ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "OMPI_MCA_rmaps_base_oversubscribe")
    return {k: v for k, v in os.environ.items() if k in keep or not k.startswith(("OMPI_", "PMIX_", "OPAL_"))}


def read_state(path):
    with open(path) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    return np.array([float(r["q"]) for r in rows]), np.array([float(r["p"]) for r in rows])


def read_trajectory(xdmf, legacy=False):
    """All time steps of the file: list of (time, dataset) with numpy arrays; with ParaView's Xdmf3 reader, or
    with its legacy XDMF (version 2) reader."""
    reader = simple.XDMFReader(FileNames=[xdmf]) if legacy else simple.Xdmf3ReaderS(FileName=[xdmf])
    reader.UpdatePipelineInformation()
    frames = []
    for t in reader.TimestepValues:
        reader.UpdatePipeline(t)
        data = servermanager.Fetch(reader)
        ds = dsa.WrapDataObject(data)
        frame = dict(time=t, npoints=data.GetNumberOfPoints(), ncells=data.GetNumberOfCells(),
                     points=np.array(ds.Points), cell_types=[data.GetCellType(i) for i in range(data.GetNumberOfCells())])
        for name in ds.PointData.keys():
            frame[name] = np.array(ds.PointData[name])
        for name in ds.CellData.keys():
            frame[name] = np.array(ds.CellData[name])
        frames.append(frame)
    simple.Delete(reader)
    return frames


def fnv1a64(path):
    h = 14695981039346656037
    with open(path, "rb") as f:
        for c in f.read():
            h = ((h ^ c) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def check_provenance(args, case, outdir):
    """The XDMF file's Information element names the program, the input with its size and hash, the options."""
    import xml.etree.ElementTree as ET
    info = [e for e in ET.parse(os.path.join(outdir, "trajectory.xdmf")).getroot().iter("Information") if e.get("Name") == "provenance"]
    if not check(len(info) == 1, "%s: %d provenance elements in the XDMF file, expected 1" % (case["name"], len(info))):
        return
    lines = dict(line.split(": ", 1) for line in info[0].get("Value").splitlines() if ": " in line)
    path = os.path.join(args.source, case["input"])
    want = "%s (%d bytes, FNV-1a 64 %016x)" % (path, os.path.getsize(path), fnv1a64(path))
    check(lines.get("program", "").startswith("gglmbs "), "%s: provenance program %r" % (case["name"], lines.get("program")))
    check(lines.get("input") == want, "%s: provenance input %r, expected %r" % (case["name"], lines.get("input"), want))
    check("-mbs_t_end %s" % repr(case["t_end"]) in lines.get("options", ""), "%s: provenance options %r" % (case["name"], lines.get("options")))


def check_case(args, case, outdir):
    name = case["name"]
    frames = read_trajectory(os.path.join(outdir, "trajectory.xdmf"))
    # the legacy XDMF reader (and other XDMF 2 readers) read the same file as the Xdmf3 reader
    compare(name, frames, read_trajectory(os.path.join(outdir, "trajectory.xdmf"), legacy=True), "read by the legacy XDMF reader")
    check_provenance(args, case, outdir)
    times = [f["time"] for f in frames]
    expected = [s * case["h"] for s in case["steps"]]
    if not check(len(times) == len(expected) and np.allclose(times, expected, rtol=0, atol=1e-12),
                 "%s: time steps %s, expected %s" % (name, times, expected)):
        return frames
    last = frames[-1]
    nbodies = case["points"] - sum(1 for b in last.get("body", []) if b < 0)
    check(last["npoints"] == case["points"], "%s: %d points, expected %d" % (name, last["npoints"], case["points"]))
    check(last["ncells"] == case["cells"], "%s: %d cells, expected %d" % (name, last["ncells"], case["cells"]))
    check(all(t == 4 for t in last["cell_types"]), "%s: cells are not all lines (VTK_POLY_LINE = 4): %s" % (name, set(last["cell_types"])))
    check(list(last["body"]) == list(range(nbodies)) + [-1] * (case["points"] - nbodies), "%s: point bodies %s" % (name, list(last["body"])))
    if case["kinds"] is not None:
        check(list(last["kind"]) == case["kinds"], "%s: cell kinds %s, expected %s" % (name, list(last["kind"]), case["kinds"]))
    # the last frame is the final state, in input order; directors on rigid bodies only, orthonormal
    q, p = read_state(os.path.join(outdir, "state.csv"))
    off = 0
    for b in range(nbodies):
        rigid = b in case["rigid"]
        x = last["points"][b]
        check(np.abs(x - q[off:off + 3]).max() <= 1e-12, "%s: point %d at the last time is %s, the final state %s" % (name, b, x, q[off:off + 3]))
        v, pb = last["velocity"][b], p[off:off + 3]
        if np.abs(v).max() > 0:  # p = m v with one positive m per body
            m = np.dot(pb, v) / np.dot(v, v)
            check(m > 0 and np.abs(pb - m * v).max() <= 1e-12 * max(1.0, np.abs(pb).max()), "%s: velocity %s of body %d is not parallel to its momentum %s" % (name, v, b, pb))
        D = np.array([last[k][b] for k in ("d1", "d2", "d3")])
        if rigid:
            check(np.abs(D.reshape(-1) - q[off + 3:off + 12]).max() <= 1e-12, "%s: directors of body %d are not the final state's" % (name, b))
            check(np.abs(D @ D.T - np.eye(3)).max() <= 1e-10, "%s: directors of body %d are not orthonormal: %s" % (name, b, D))
            off += 12
        else:
            check(np.abs(D).max() == 0, "%s: particle %d has directors %s" % (name, b, D))
            off += 3
    check(off == len(q), "%s: the final state has %d coordinates, the trajectory's bodies %d" % (name, len(q), off))
    for k in range(case["points"] - nbodies):
        check(np.abs(last["velocity"][nbodies + k]).max() == 0, "%s: ground anchor %d moves" % (name, k))
    if "forces" in case:
        f = last["force"]
        check(np.abs(f - np.array(case["forces"])).max() <= 1e-9, "%s: cell forces at the last time\n%s\nexpected\n%s" % (name, f, np.array(case["forces"])))
        # at the initial state no step has produced multipliers yet: constraint forces are zero, spring forces not
        f0 = frames[0]["force"]
        check(np.abs(f0[:3]).max() == 0 and abs(f0[3][2] - G) <= 1e-9, "%s: cell forces at t = 0: %s" % (name, f0))
    return frames


def compare(name, reference, other, what):
    """Every field of every frame of other equals reference's (1e-10 relative to the field's size)."""
    if not check(len(reference) == len(other), "%s: %d time steps, %d %s" % (name, len(reference), len(other), what)):
        return
    for a, b in zip(reference, other):
        for key in a:
            if key == "cell_types":
                check(a[key] == b.get(key), "%s: cell types differ %s" % (name, what))
                continue
            x, y = np.asarray(a[key], dtype=float), np.asarray(b.get(key, np.nan), dtype=float)
            if not check(x.shape == y.shape, "%s, t = %g: '%s' has shape %s, %s %s" % (name, a["time"], key, x.shape, y.shape, what)):
                continue
            scale = max(1.0, np.abs(x).max()) if x.size else 1.0
            err = np.abs(x - y).max() if x.size else 0.0
            check(err <= 1e-10 * scale, "%s, t = %g: '%s' differs by %.3e %s" % (name, a["time"], key, err, what))


def check_restart(args):
    """A run interrupted at step 8 and restarted from its checkpoint appends to the trajectory of the first
    part: the file lists the steps of both parts, with the data of an uninterrupted run; restarted from step 8 once
    more, it writes the later steps anew over those of the run before."""
    case = dict(name="restart", input="inputs/heavy_top.yaml", every=3)
    first, whole = os.path.join(args.work, "restart"), os.path.join(args.work, "restart_whole")
    step8 = os.path.join(args.work, "restart_step8.bin")
    for outdir, t_end, extra in ((first, 0.016, ["-mbs_checkpoint_every", "4"]),
                                 (first, 0.03, ["-mbs_restart", os.path.join(first, "checkpoint.bin")]),
                                 # again from step 8: the steps after it, written by the run before, are written anew
                                 (first, 0.03, ["-mbs_restart", step8]),
                                 (whole, 0.03, [])):
        if not run_gglmbs(args, dict(case, t_end=t_end, options=extra), outdir, 1):
            return
        if t_end == 0.016:
            shutil.copyfile(os.path.join(first, "checkpoint.bin"), step8)
    restarted, straight = read_trajectory(os.path.join(first, "trajectory.xdmf")), read_trajectory(os.path.join(whole, "trajectory.xdmf"))
    steps = [round(f["time"] / 0.002) for f in restarted]
    check(steps == [0, 3, 6, 8, 9, 12, 15], "restart: the restarted trajectory lists the steps %s, expected 0, 3, 6, 8 (first part), 9, 12, 15" % steps)
    by_time = {round(f["time"] / 0.002): f for f in restarted}
    compare("restart", straight, [by_time.get(round(f["time"] / 0.002), {}) for f in straight], "after the restart")


def check_sync(args):
    """Written steps are flushed and listed together at most -mbs_trajectory_sync seconds apart: while the run goes
    on, the XDMF file is complete (it parses) and its list grows; a run stopped by SIGTERM lists every step it wrote
    (the last sync is at the stop), which ParaView reads. The file is read back to back for 2 s, across about 100
    syncs: a sync that let a reader see a half-written file is caught here (extending the file in place was)."""
    outdir = os.path.join(args.work, "sync")
    xdmf = os.path.join(outdir, "trajectory.xdmf")
    cmd = [args.gglmbs, "-i", os.path.join(args.source, "inputs/heavy_top.yaml"), "-mbs_output_dir", outdir,
           "-mbs_t_end", "400", "-mbs_output_every", "100", "-mbs_trajectory", "xdmf", "-mbs_trajectory_every", "10",
           "-mbs_trajectory_sync", "0.02"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, env=child_environment())
    seen = []
    start = time.time()
    while proc.poll() is None:
        try:
            grids = ET.parse(xdmf).getroot().findall("./Domain/Grid/Grid")
        except FileNotFoundError:  # not yet written (it is renamed into place, so never absent once written)
            continue
        except (OSError, ET.ParseError) as e:  # never incomplete once written
            failures.append("sync: %s does not parse while the run goes on: %s" % (xdmf, e))
            break
        if not seen or len(grids) != seen[-1]:
            seen.append(len(grids))
        if len(seen) >= 3 and seen[-1] > 0 and time.time() - start > 2:
            break
    check(proc.poll() is None, "sync: the run ended before the check (steps listed while running: %s)" % seen)
    proc.send_signal(signal.SIGTERM)
    out = proc.communicate()[0]
    check(len(seen) >= 3 and seen == sorted(seen), "sync: the listed steps while running were %s, expected a growing list" % seen)
    check(proc.returncode == 128 + signal.SIGTERM, "sync: exit %s after SIGTERM, expected %d:\n%s" % (proc.returncode, 128 + signal.SIGTERM, out))
    last = [line for line in out.splitlines() if "Interrupted by SIGTERM after step " in line]
    if check(len(last) == 1, "sync: no 'Interrupted by SIGTERM after step' line:\n%s" % out):
        stop = int(last[0].split("after step ")[1].split()[0].rstrip(":,."))
        reader = simple.Xdmf3ReaderS(FileName=[xdmf])
        reader.UpdatePipelineInformation()
        times = reader.TimestepValues  # a number when the file lists one step
        times = list(times) if hasattr(times, "__len__") else [times]
        simple.Delete(reader)
        expected = [0.002 * k for k in range(0, stop + 1, 10)]  # the stop is not a written step of its own
        check(len(times) == len(expected) and np.allclose(times, expected, rtol=0, atol=1e-9),
              "sync: the stopped run at step %d lists %d steps (up to t = %s), expected %d" % (stop, len(times), times[-1] if times else None, len(expected)))


def render(xdmf, png):
    """One frame: cells as tubes coloured by |force|, director glyphs; asserts the image is not blank."""
    reader = simple.Xdmf3ReaderS(FileName=[xdmf])
    reader.UpdatePipelineInformation()
    view = simple.CreateRenderView()
    view.ViewSize = [400, 300]
    view.OrientationAxesVisibility = 0
    view.Background = [1, 1, 1]
    view.ViewTime = reader.TimestepValues[-1]
    tubes = simple.Tube(Input=simple.ExtractSurface(Input=reader), Radius=0.002)
    display = simple.Show(tubes, view)
    simple.ColorBy(display, ("CELLS", "force", "Magnitude"))
    glyphs = simple.Glyph(Input=reader, GlyphType="Arrow", OrientationArray=["POINTS", "d3"], ScaleArray=["POINTS", "No scale array"], ScaleFactor=0.01)
    simple.Show(glyphs, view)
    view.ResetCamera()
    simple.SaveScreenshot(png, view, ImageResolution=[400, 300])
    from vtkmodules.vtkIOImage import vtkPNGReader
    from vtkmodules.util.numpy_support import vtk_to_numpy
    r = vtkPNGReader()
    r.SetFileName(png)
    r.Update()
    img = vtk_to_numpy(r.GetOutput().GetPointData().GetScalars())
    drawn = np.count_nonzero(np.any(img[:, :3] < 250, axis=1))  # pixels that are not the white background
    check(drawn > 0.002 * img.shape[0], "%s: the rendered frame is blank (%d of %d pixels drawn)" % (png, drawn, img.shape[0]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gglmbs", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--np", type=int, default=1)
    parser.add_argument("--mpiexec", default="mpiexec")
    parser.add_argument("--render", action="store_true")
    args = parser.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    for case in CASES:
        serial = os.path.join(args.work, case["name"])
        if not run_gglmbs(args, case, serial, 1):
            continue
        frames = check_case(args, case, serial)
        if args.np > 1:
            parallel = os.path.join(args.work, "%s_np%d" % (case["name"], args.np))
            if run_gglmbs(args, case, parallel, args.np):
                compare(case["name"], frames, check_case(args, case, parallel), "on %d ranks" % args.np)
    if args.np == 1:
        check_restart(args)
        check_sync(args)
    if args.render:
        render(os.path.join(args.work, "net", "trajectory.xdmf"), os.path.join(args.work, "net.png"))
    if failures:
        for f in failures:
            print("check_trajectory: FAILED: " + f, file=sys.stderr)
        return 1
    shutil.rmtree(args.work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    # sys.exit() after rendering makes pvpython's teardown fail (GLXBadContext) and exit 1 under Xvfb
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    if status:
        os._exit(status)

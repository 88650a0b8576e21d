#!/usr/bin/env python3
"""
Renders one ParaView picture per example of inputs/ into docs/figures/paraview_<name>.png (docs/output.md).

  scripts/render_examples.py [--gglmbs build/gglmbs] [--work /tmp/gglmbs-render] [--only heavy_top ...]

Each example runs with -mbs_trajectory xdmf; the picture is its last written frame, read back through
ParaView's Xdmf3 reader: joints, rods and springs as tubes coloured by the magnitude of the cell field
`force`, the directors d1, d2, d3 of rigid bodies as red, green and blue arrows, and for the small paper
examples the paths of the bodies over the whole run. Run with python3, the script starts itself again
under pvbatch inside a virtual X server (xvfb-run), which Debian's ParaView needs to render headless.
net100x100 takes about two minutes on one core (10 steps of 1e5 unknowns); the others a few seconds each.
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)

# name: input, trajectory every, camera (direction from the focal point, up), tube radius, sphere
# radius of the bodies and arrow length of the directors in m (0: none), colour the cells by |force| or
# not, paths of the bodies, the earlier written states drawn in grey (strobe), title
EXAMPLES = {
    "pendulum3d": dict(input="inputs/pendulum3d.yaml", every=1, view=(1, -1.6, 0.9), up=(0, 0, 1), tube=0.012,
                       spheres=0.05, color=False, paths=True,
                       title="spherical pendulum (EM, h = 0.05): rod and bob at t = 10, path of the bob"),
    "heavy_top": dict(input="inputs/heavy_top.yaml", every=2, view=(1, -1.4, 0.7), up=(0, 0, 1), tube=0.0015,
                      spheres=0.004, arrows=0.04, color=False, paths=True,
                      title="heavy top (EM, h = 0.002): directors d1, d2, d3 at t = 2, path of the centre of mass"),
    "four_particle": dict(input="inputs/four_particle.yaml", every=5, view=(1.2, -1, 0.9), up=(0, 0, 1), tube=0.012,
                          spheres=0.05, paths=True,
                          title="four particles (EM, h = 0.01): rods 1-2, 3-4, quartic springs 1-3, 2-4 at t = 10, paths"),
    "chain1000": dict(input="inputs/chain1000.yaml", every=100, view=(0, -1, 0), up=(0, 0, 1), tube=0.03, strobe=True,
                      title="chain of 1000 particles (EM, h = 1e-3): t = 1, earlier states every 0.1 in grey"),
    "rigid_chain1000": dict(input="inputs/rigid_chain1000.yaml", every=50, view=(0, -1, 0), up=(0, 0, 1), tube=0.03,
                            strobe=True, title="chain of 1000 rigid links (EM, h = 1e-3): t = 0.2, earlier states every 0.05 in grey"),
    "mesh_net": dict(input="inputs/mesh_net.yaml", every=100, view=(0.8, -1, 0.5), up=(0, 0, 1), tube=0.004,
                     title="net of 192 particles from a Gmsh mesh (EM, h = 1e-3) at t = 2"),
    "net100x100": dict(input="inputs/net100x100.yaml", every=5, view=(0.8, -1, 0.5), up=(0, 0, 1), tube=0,
                       title="net of 100 x 100 particles (EM, h = 1e-3) at t = 0.01"),
}


def relaunch():
    """Not inside ParaView: run this script under pvbatch in a virtual X server."""
    pvbatch, xvfb = shutil.which("pvbatch"), shutil.which("xvfb-run")
    if not pvbatch:
        sys.exit("render_examples: pvbatch not found (Debian: apt-get install paraview python3-paraview xvfb xauth, or scripts/setup.sh)")
    cmd = [pvbatch, os.path.abspath(__file__)] + sys.argv[1:]
    if xvfb:
        cmd = [xvfb, "-a", "-s", "-screen 0 1280x1024x24"] + cmd
    else:
        cmd.insert(1, "--force-offscreen-rendering")
    os.execv(cmd[0], cmd)


def run(args, name, ex, outdir):
    cmd = [args.gglmbs, "-i", os.path.join(SOURCE, ex["input"]), "-mbs_output_dir", outdir,
           "-mbs_trajectory", "xdmf", "-mbs_trajectory_every", str(ex["every"])]
    if args.np > 1:
        cmd = ["mpiexec", "--oversubscribe", "-n", str(args.np)] + cmd
    # pvbatch is an MPI singleton: its Open MPI/PMIx variables would make gglmbs join it
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMIX_", "OPAL_")) or k.startswith("OMPI_ALLOW")}
    print("render_examples: %s: %s" % (name, " ".join(cmd)), flush=True)
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)


def render(name, ex, xdmf, png, size):
    from paraview import simple

    reader = simple.Xdmf3ReaderS(FileName=[xdmf])
    reader.UpdatePipelineInformation()
    times = reader.TimestepValues
    view = simple.CreateRenderView()
    view.ViewSize = list(size)
    view.Background = [1, 1, 1]
    try:  # ParaView >= 5.10 takes the background from the palette unless told otherwise
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    view.OrientationAxesVisibility = 1
    view.ViewTime = times[-1]

    def solid(proxy, rgb):
        display = simple.Show(proxy, view)
        simple.ColorBy(display, None)
        display.AmbientColor = display.DiffuseColor = rgb
        return display

    # lines as tubes, or (tube 0: thousands of cells, where tubes would alias) as lines
    tubes = simple.Tube(Input=simple.ExtractSurface(Input=reader), Radius=ex["tube"], NumberofSides=16) if ex["tube"] else reader
    if ex.get("color", True):
        shown = simple.Show(tubes, view)
        simple.ColorBy(shown, ("CELLS", "force", "Magnitude"))
        lut = simple.GetColorTransferFunction("force")
        lut.ApplyPreset("Viridis (matplotlib)", True)
        shown.RescaleTransferFunctionToDataRange(True, False)
        shown.SetScalarBarVisibility(view, True)
        bar = simple.GetScalarBar(lut, view)
        bar.Title = "force magnitude [N]"
        bar.ComponentTitle = ""
        bar.TitleColor = bar.LabelColor = [0, 0, 0]
        bar.TitleFontSize = bar.LabelFontSize = 14
        bar.RangeLabelFormat = "%-#6.3g"
    else:
        solid(tubes, [0.35, 0.35, 0.4])
    if ex.get("spheres"):
        solid(simple.Glyph(Input=reader, GlyphType="Sphere", ScaleArray=["POINTS", "No scale array"],
                           ScaleFactor=2 * ex["spheres"], GlyphMode="All Points"), [0.25, 0.25, 0.25])
    if ex.get("arrows"):
        for k, rgb in enumerate(([0.85, 0.1, 0.1], [0.1, 0.6, 0.1], [0.1, 0.2, 0.85])):
            d = "d%d" % (k + 1)
            # scaled by the director itself: unit on rigid bodies, zero (invisible) on particles and anchors
            solid(simple.Glyph(Input=reader, GlyphType="Arrow", OrientationArray=["POINTS", d], ScaleArray=["POINTS", d],
                               ScaleFactor=ex["arrows"], GlyphMode="All Points"), rgb)
    if ex.get("strobe"):
        for i, t in enumerate(times[:-1]):
            earlier = simple.ForceTime(Input=reader, ForcedTime=t, IgnorePipelineTime=1)
            grey = 0.85 - 0.45 * i / max(1, len(times) - 2)
            solid(simple.Tube(Input=simple.ExtractSurface(Input=earlier), Radius=0.6 * ex["tube"], NumberofSides=8), [grey] * 3)
    if ex.get("paths"):
        paths = simple.TemporalParticlesToPathlines(Input=reader, MaskPoints=1, MaxTrackLength=len(times) + 1,
                                                    MaxStepDistance=[1e6, 1e6, 1e6], IdChannelArray="body")
        for t in times:  # the filter builds the paths as time advances through every step
            paths.UpdatePipeline(t)
        p = solid(paths, [0.85, 0.4, 0.1])
        p.LineWidth = 2.0

    title = simple.Show(simple.Text(Text=ex["title"]), view)
    title.Color = [0, 0, 0]
    title.FontSize = 13
    title.WindowLocation = "Upper Center"

    view.ResetCamera()
    cam = view.GetActiveCamera()
    fx, fy, fz = cam.GetFocalPoint()
    vx, vy, vz = ex["view"]
    cam.SetPosition(fx + vx, fy + vy, fz + vz)
    cam.SetViewUp(*ex["up"])
    view.ResetCamera()
    cam.Zoom(ex.get("zoom", 1.0))
    simple.SaveScreenshot(png, view, ImageResolution=list(size), CompressionLevel="9")
    simple.Delete(view)
    try:  # a palette of 256 colours keeps a picture of thousands of thin lines small (python3-pil)
        from PIL import Image
        Image.open(png).convert("RGB").quantize(colors=256, dither=Image.Dither.NONE).save(png, optimize=True)
    except ImportError:
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gglmbs", default=os.path.join(SOURCE, "build", "gglmbs"), help="the program (default build/gglmbs)")
    parser.add_argument("--work", default="/tmp/gglmbs-render", help="where the runs write their output")
    parser.add_argument("--out", default=os.path.join(SOURCE, "docs", "figures"), help="where the pictures go")
    parser.add_argument("--np", type=int, default=1, help="MPI ranks per run")
    parser.add_argument("--size", type=int, nargs=2, default=[800, 600])
    parser.add_argument("--only", nargs="*", choices=sorted(EXAMPLES), help="these examples only")
    parser.add_argument("--no-run", action="store_true", help="render the trajectories already in --work")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.only or EXAMPLES:
        ex = EXAMPLES[name]
        outdir = os.path.join(args.work, name)
        if not args.no_run:
            shutil.rmtree(outdir, ignore_errors=True)
            run(args, name, ex, outdir)
        png = os.path.join(args.out, "paraview_%s.png" % name)
        render(name, ex, os.path.join(outdir, "trajectory.xdmf"), png, args.size)
        print("render_examples: wrote %s (%d KB)" % (png, os.path.getsize(png) // 1024), flush=True)


if __name__ == "__main__":
    try:
        import paraview  # noqa: F401
    except ImportError:
        relaunch()
    main()
    sys.stdout.flush()
    os._exit(0)  # pvbatch's teardown after rendering can fail under Xvfb (GLXBadContext) and exit 1

#!/usr/bin/env python3
"""Writes inputs/flyball_governor.yaml: the stiff flyball governor of the IFToMM benchmark library (problem A05).

Data (docs/mechanisms.md): a shaft spinning freely about the vertical on a revolute joint, a slider on it (prismatic,
turning with the shaft), two rods hinged at the top of the shaft 0.05 m either side of its axis, a 5 kg ball at the
end of each rod, and a stiff spring-damper from each rod's midpoint to the slider's side. Rods and shaft are
1 x 0.01 x 0.01 m prisms of density 3000 kg/m^3, the slider a 0.1 m cube; the rods start 30 degrees below the
horizontal, the slider 0.5 m up, where the springs are at their free length, and everything turns at 2 pi rad/s.
"""
import math
import os

rho, g = 3000.0, 9.81
m_rod = rho * 1.0 * 0.01 * 0.01                     # 0.3 kg, shaft and rods
i_axial = m_rod * (0.01**2 + 0.01**2) / 12          # about the long axis
i_trans = m_rod * (1.0**2 + 0.01**2) / 12           # about a transverse axis
m_slider = rho * 0.1**3                             # 3 kg
i_slider = m_slider * (0.1**2 + 0.1**2) / 12
m_ball, xa, s0, alpha, omega = 5.0, 0.05, 0.5, math.pi / 6, 2 * math.pi
k, c, l0 = 8e5, 4e4, 0.5


def r12(x):
    return float(f"{x:.12g}")


def vec(v):
    return "[" + ", ".join(repr(float(x)) for x in v) + "]"


lines = [
    "# The stiff flyball governor, IFToMM multibody benchmark library problem A05 (docs/mechanisms.md).",
    "# Written by benchmarks/flyball_governor/make_yaml.py; the reference is benchmarks/flyball_governor/reference.py.",
    "time: {step: 0.001, end: 10}",
    "scheme: {type: em}",
    "gravity: [0, 0, -9.81]",
    "bodies:",
    f"  - {{name: shaft, type: rigid, mass: {r12(m_rod)!r}, inertia: {vec([r12(i_trans), r12(i_trans), r12(i_axial)])}, "
    f"position: [0, 0, 0.5], angular_velocity: [0, 0, {omega!r}]}}",
    f"  - {{name: slider, type: rigid, mass: {r12(m_slider)!r}, inertia: {vec([r12(i_slider)] * 3)}, "
    f"position: [0, 0, {s0!r}], angular_velocity: [0, 0, {omega!r}]}}",
]
for side, name in ((1, "right"), (-1, "left")):
    e = [side * math.cos(alpha), 0.0, -math.sin(alpha)]     # along the rod, outwards and down
    hinge = [side * xa, 0.0, 1.0]
    centre = [hinge[i] + 0.5 * e[i] for i in range(3)]
    ball = [hinge[i] + 1.0 * e[i] for i in range(3)]
    angle = alpha if side > 0 else math.pi - alpha         # body x along the rod: a turn about y
    lines.append(f"  - {{name: rod_{name}, type: rigid, mass: {r12(m_rod)!r}, inertia: {vec([r12(i_axial), r12(i_trans), r12(i_trans)])}, "
                 f"position: {vec(centre)}, orientation: {{axis: [0, 1, 0], angle: {angle!r}}}, "
                 f"velocity: {vec([0, omega * centre[0], 0])}, angular_velocity: [0, 0, {omega!r}]}}")
    lines.append(f"  - {{name: ball_{name}, type: particle, mass: {m_ball!r}, position: {vec(ball)}, "
                 f"velocity: {vec([0, omega * ball[0], 0])}}}")
lines += [
    "joints:",
    "  - {type: revolute, bodies: [ground, shaft], points: [[0, 0, 0], [0, 0, -0.5]], axes: [[0, 0, 1], [0, 0, 1]]}",
    "  - {type: prismatic, bodies: [shaft, slider], axes: [[0, 0, 1], [0, 0, 1]]}",
]
for side, name in ((1, "right"), (-1, "left")):
    lines.append(f"  - {{type: revolute, bodies: [shaft, rod_{name}], points: [[{side * xa!r}, 0, 0.5], [-0.5, 0, 0]], "
                 "axes: [[0, 1, 0], [0, 1, 0]]}")
    lines.append(f"  - {{type: spherical, bodies: [rod_{name}, ball_{name}], points: [[0.5, 0, 0], [0, 0, 0]]}}")
lines.append("springs:")
for side, name in ((1, "right"), (-1, "left")):
    pts = f"[[0, 0, 0], [{side * xa!r}, 0, 0]]"
    lines.append(f"  - {{type: linear, bodies: [rod_{name}, slider], points: {pts}, stiffness: {k!r}, length: {l0!r}}}")
    lines.append(f"  - {{type: damper, bodies: [rod_{name}, slider], points: {pts}, damping: {c!r}}}")
lines.append("output: {directory: output/flyball_governor, every: 100}")

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "..", "..", "inputs", "flyball_governor.yaml"), "w") as f:
    f.write("\n".join(lines) + "\n")

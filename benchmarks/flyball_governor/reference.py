#!/usr/bin/python3
"""An independent reference for the stiff flyball governor (inputs/flyball_governor.yaml, docs/mechanisms.md).

The mechanism has four degrees of freedom: the shaft's angle phi, the slider's height s and the rods' angles th1, th2
below the horizontal. In them (no cross terms: the rods turn in the plane that turns with the shaft)

  T = 1/2 J(th) phi'^2 + 1/2 m_s s'^2 + 1/2 A (th1'^2 + th2'^2),
  J = J0 + sum_i [Ia sin^2 th_i + Ip cos^2 th_i + m_r (xa + cos th_i / 2)^2 + m_b (xa + cos th_i)^2],
  A = Ip + m_r / 4 + m_b,   J0 the shaft's and the slider's moments about the axis,
  V = m_s g s - g (m_r / 2 + m_b) sum_i sin th_i + sum_i k/2 (l_i - l0)^2,
  l_i = |(cos th_i / 2, 1 - sin th_i / 2 - s)|,

with the dampers' forces c l_i'. Lagrange's equations are integrated by scipy's Radau at two tolerances; the script
checks them by the energy balance (E(t) + dissipated work = E(0)) and writes s(t) every 0.1 s to reference_s.txt.

  python3 reference.py [T]     (default T = 10)
"""
import sys
import warnings

import numpy as np
from scipy.integrate import solve_ivp

g, rho = 9.81, 3000.0
m_r = rho * 1.0 * 0.01 * 0.01
Ia, Ip = m_r * 2e-4 / 12, m_r * (1.0 + 1e-4) / 12
m_s = rho * 0.1**3
J0 = Ia + m_s * 0.02 / 12
m_b, xa, k, c, l0 = 5.0, 0.05, 8e5, 4e4, 0.5
A = Ip + m_r / 4 + m_b
mg = g * (m_r / 2 + m_b)


def J(th):
    return J0 + sum(Ia * np.sin(t) ** 2 + Ip * np.cos(t) ** 2 + m_r * (xa + 0.5 * np.cos(t)) ** 2
                    + m_b * (xa + np.cos(t)) ** 2 for t in th)


def dJ(t):
    return (2 * np.sin(t) * np.cos(t) * (Ia - Ip) - m_r * (xa + 0.5 * np.cos(t)) * np.sin(t)
            - 2 * m_b * (xa + np.cos(t)) * np.sin(t))


def spring(th, s):
    dx, dz = 0.5 * np.cos(th), 1 - 0.5 * np.sin(th) - s
    l = np.hypot(dx, dz)
    return l, (-0.5 * dx * np.sin(th) - 0.5 * dz * np.cos(th)) / l, -dz / l


def rhs(t, y):
    phi, s, t1, t2, w, sd, t1d, t2d, diss = y
    Qs, Qt, power = -m_s * g, [], 0.0
    for th, thd in ((t1, t1d), (t2, t2d)):
        l, l_th, l_s = spring(th, s)
        ld = l_th * thd + l_s * sd
        F = k * (l - l0) + c * ld
        power += c * ld * ld
        Qs -= F * l_s
        Qt.append(-F * l_th + 0.5 * dJ(th) * w * w + mg * np.cos(th))
    wd = -(dJ(t1) * t1d + dJ(t2) * t2d) * w / J([t1, t2])
    return [w, sd, t1d, t2d, wd, Qs / m_s, Qt[0] / A, Qt[1] / A, power]


def energy(y):
    phi, s, t1, t2, w, sd, t1d, t2d, diss = y
    E = 0.5 * J([t1, t2]) * w * w + 0.5 * m_s * sd * sd + 0.5 * A * (t1d * t1d + t2d * t2d) + m_s * g * s
    for th in (t1, t2):
        E += -mg * np.sin(th) + 0.5 * k * (spring(th, s)[0] - l0) ** 2
    return E


warnings.filterwarnings("ignore", "overflow", RuntimeWarning)  # scipy's finite-difference Jacobian probes
T = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
y0 = [0.0, 0.5, np.pi / 6, np.pi / 6, 2 * np.pi, 0.0, 0.0, 0.0, 0.0]
times = np.round(np.arange(0.0, T + 1e-9, 0.1), 10)
runs = []
for rtol in (1e-9, 1e-11):
    sol = solve_ivp(rhs, (0, T), y0, method="Radau", rtol=rtol, atol=rtol * 1e-3, t_eval=times)
    assert sol.status == 0, sol.message
    balance = max(abs(energy(sol.y[:, i]) + sol.y[8, i] - energy(y0)) for i in range(len(sol.t)))
    print(f"rtol {rtol:g}: s(T) = {sol.y[1, -1]:.12f}, max |E + dissipated - E0| = {balance:.2e} J")
    runs.append(sol)
print(f"largest difference in s between the tolerances: {np.max(np.abs(runs[0].y[1] - runs[1].y[1])):.2e} m")
sol = runs[1]
np.savetxt("reference_s.txt", np.c_[sol.t, sol.y[1], sol.y[4], sol.y[2]], fmt="%.12f",
           header="t s omega theta  (flyball governor, benchmarks/flyball_governor/reference.py)")
for t in (0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0):
    i = np.argmin(np.abs(sol.t - t))
    if abs(sol.t[i] - t) < 1e-9:
        print(f"t = {t:4.1f}: s = {sol.y[1, i]:.10f} m, omega = {sol.y[4, i]:.10f} rad/s")

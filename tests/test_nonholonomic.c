/*
  Nonholonomic mechanics (docs/nonholonomic.md): velocity constraints A(q) v = 0 (knife edges, rolling) under EM, whose
  reactions do no work so that it keeps the energy exactly, and under the discrete Lagrange-d'Alembert integrator DLA,
  against closed-form solutions: the Chaplygin sleigh's approach to straight-line motion, a skate on an inclined plane,
  the upright rolling disk's circle and a ball rolling down an incline; observed orders in h, the structural stability
  of the sleigh's relative equilibria under large steps, and the errors for bad models. Silent when it passes
  (GGLMBS_TEST_VERBOSE=1 prints the numbers).
*/
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <gglmbs/gglmbs.h>
#include "stepper/stepperimpl.h"
#include "mbstest.h"

#define CHECK(call)                                            \
  do {                                                         \
    ClearError();                                              \
    if (call) fail_msg("%s failed: %s", #call, error_message); \
  } while (0)

static int Verbose(void)
{
  const char *v = getenv("GGLMBS_TEST_VERBOSE");
  return v && v[0] && v[0] != '0';
}

/* A planar joint of body a on the ground's plane through the origin with unit normal n; a's axis na (its frame) */
static void AddPlanar(MbsModel model, PetscInt a, const PetscReal na[3], const PetscReal n[3])
{
  CHECK(MbsModelAddJoint(model, MBS_JOINT_PLANAR, a, NULL, na, MBS_GROUND, NULL, n, NULL));
}

/* A knife edge at the point X of a (its frame), no velocity along N (its frame) */
static PetscInt AddKnifeEdge(MbsModel model, PetscInt a, const PetscReal X[3], const PetscReal N[3])
{
  PetscInt e;
  CHECK(MbsModelAddKnifeEdge(model, a, X, N, &e));
  return e;
}

/* Runs the model under a scheme (tau for dla, ignored otherwise) with step h to time T; the largest |E - E0| relative
   to E0 and the largest |A(q) M^-1 p| over the steps; returns the stepper for the caller to read and destroy */
static MbsStepper Run(MbsModel model, const char *scheme, PetscReal tau, PetscReal h, PetscReal T, PetscReal *dE,
                      PetscReal *av)
{
  MbsStepper     st;
  MbsDiagnostics d;
  PetscReal      E0;
  const PetscInt n = (PetscInt)(T / h + 0.5);

  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetType(st, scheme));
  if (!strcmp(scheme, MBSSCHEMEDLA) || !strcmp(scheme, MBSSCHEMEDH))
    CHECK(MbsStepperSetSchemeParameter(st, "tau", tau));
  CHECK(MbsStepperSetTimeStep(st, h));
  CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_TRUE));
  CHECK(MbsStepperSetUp(st));
  CHECK(MbsStepperComputeDiagnostics(st, &d));
  E0 = d.E;
  if (dE) *dE = 0;
  if (av) *av = 0;
  for (PetscInt k = 0; k < n; k++) {
    CHECK(MbsStepperStep(st));
    CHECK(MbsStepperComputeDiagnostics(st, &d));
    if (dE) *dE = PetscMax(*dE, PetscAbsReal(d.E - E0) / PetscAbsReal(E0));
    if (av) *av = PetscMax(*av, d.av_max);
  }
  return st;
}

static PetscReal Order(PetscReal e_coarse, PetscReal e_fine)
{
  return PetscLog2Real(e_coarse / e_fine);
}

/* ------------------------------------------------------------------------------------------------------------ */
/* The Chaplygin sleigh: a rigid body (mass m, moment I about the vertical at its centre) on the horizontal plane, with
   a knife edge at a d1 that stops the contact point across d1. In the body frame u' = -a w^2, (I + m a^2) w' = m a u w;
   with U = sqrt(2E/m), k = m a/(I + m a^2) and c0 = artanh(u0/U):
     u(t) = -U tanh(k U t - c0),   w(t) = w0 cosh(c0)/cosh(k U t - c0):
   every motion tends to the straight line u = -U (the knife trailing), a relative equilibrium that is asymptotically
   stable; the one with the knife leading (u = +U) is unstable. */
typedef struct {
  PetscReal m, Iz, a, u0, w0;
} Sleigh;

static void BuildSleigh(const Sleigh *s, MbsModel *model, PetscInt *body)
{
  const PetscReal J[3] = {0.3, 0.4, s->Iz}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, z[3] = {0, 0, 1};
  const PetscReal v[3] = {s->u0, -s->a * s->w0, 0}, w[3] = {0, 0, s->w0};

  CHECK(MbsModelCreate(PETSC_COMM_WORLD, model));
  CHECK(MbsModelAddRigidBody(*model, "sleigh", s->m, J, (PetscReal[]){0, 0, 0}, R, v, w, body));
  AddPlanar(*model, *body, z, z);
  (void)AddKnifeEdge(*model, *body, (PetscReal[]){s->a, 0, 0}, (PetscReal[]){0, 1, 0});
  CHECK(MbsModelSetUp(*model));
}

static void SleighExact(const Sleigh *s, PetscReal t, PetscReal *u, PetscReal *w)
{
  const PetscReal E = 0.5 * s->m * s->u0 * s->u0 + 0.5 * (s->Iz + s->m * s->a * s->a) * s->w0 * s->w0;
  const PetscReal U = PetscSqrtReal(2 * E / s->m), k = s->m * s->a / (s->Iz + s->m * s->a * s->a);
  const PetscReal c0 = atanh(s->u0 / U);

  *u = -U * PetscTanhReal(k * U * t - c0);
  *w = s->w0 * PetscCoshReal(c0) / PetscCoshReal(k * U * t - c0);
}

/* The sleigh's forward speed u = d1 . v and turning rate w = (d1 x (v(d1) - v(0)))_z in the stepper's state */
static void SleighState(MbsStepper st, PetscInt body, PetscReal *u, PetscReal *w)
{
  const PetscReal X0[3] = {0, 0, 0}, X1[3] = {1, 0, 0};
  PetscReal       x0[3], x1[3], v0[3], v1[3], d1[3], dv[3];

  CHECK(MbsStepperGetPointPosition(st, body, X0, x0));
  CHECK(MbsStepperGetPointPosition(st, body, X1, x1));
  CHECK(MbsStepperGetPointVelocity(st, body, X0, v0));
  CHECK(MbsStepperGetPointVelocity(st, body, X1, v1));
  for (int i = 0; i < 3; i++) d1[i] = x1[i] - x0[i], dv[i] = v1[i] - v0[i];
  *u = d1[0] * v0[0] + d1[1] * v0[1] + d1[2] * v0[2];
  *w = d1[0] * dv[1] - d1[1] * dv[0];
}

static PetscReal SleighError(const Sleigh *s, const char *scheme, PetscReal tau, PetscReal h, PetscReal T,
                             PetscReal *dE, PetscReal *av)
{
  MbsModel   model;
  MbsStepper st;
  PetscInt   body;
  PetscReal  u, w, ue, we;

  BuildSleigh(s, &model, &body);
  st = Run(model, scheme, tau, h, T, dE, av);
  SleighState(st, body, &u, &w);
  SleighExact(s, T, &ue, &we);
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  return PetscMax(PetscAbsReal(u - ue), PetscAbsReal(w - we));
}

/* The sleigh against its closed form at T = 4 with h = 0.04, 0.02, 0.01: EM and DLA (tau = 1/2) converge at second
   order, DLA with tau = 1 at first; EM keeps the energy to round-off, and its midpoint constraint leaves the nodes'
   velocities off the constraint by O(h^2) only */
static void TestSleigh(void **state)
{
  const Sleigh s = {1.0, 0.5, 0.5, 1.0, 1.0};
  const struct {
    const char *scheme;
    PetscReal   tau, order, err;
  } cases[] = {
    {MBSSCHEMEEM, 0, 2, 2e-4},   {MBSSCHEMEDLA, 0.5, 2, 2e-4}, {MBSSCHEMEDLA, 1.0, 1, 5e-2},
    {MBSSCHEMEDH, 0.5, 2, 2e-4}, {MBSSCHEMEDH, 1.0, 1, 5e-2},
  };

  (void)state;
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    PetscReal e[3], dE[3], av[3], p1, p2;
    for (int k = 0; k < 3; k++)
      e[k] = SleighError(&s, cases[c].scheme, cases[c].tau, 0.04 / (1 << k), 4.0, &dE[k], &av[k]);
    p1 = Order(e[0], e[1]), p2 = Order(e[1], e[2]);
    if (Verbose())
      printf("sleigh %s tau %g: errors %.3e %.3e %.3e, orders %.3f %.3f; max |dE|/E %.2e %.2e %.2e; max |A v| %.2e "
             "%.2e %.2e\n",
             cases[c].scheme, (double)cases[c].tau, (double)e[0], (double)e[1], (double)e[2], (double)p1, (double)p2,
             (double)dE[0], (double)dE[1], (double)dE[2], (double)av[0], (double)av[1], (double)av[2]);
    assert_true(PetscAbsReal(p1 - cases[c].order) < 0.15 && PetscAbsReal(p2 - cases[c].order) < 0.15);
    assert_true(e[2] < cases[c].err);
    if (!strcmp(cases[c].scheme, MBSSCHEMEEM)) {
      for (int k = 0; k < 3; k++) assert_true(dE[k] < 1e-13);
      assert_true(Order(av[0], av[2]) / 2 > 1.8); /* O(h^2) */
    }
  }
}

/* The sleigh's relative equilibria under large steps (Lynch and Zenkov's structural stability): on straight-line motion
   with u0 = -1 (knife trailing: asymptotically stable) or u0 = +1 (leading: unstable) and a small turning rate w0, the
   linearized rate equation is w' = kappa w, kappa = m a u0/(I + m a^2). Three steps of size h multiply w by lambda^3,
   lambda the scheme's amplification factor: the Cayley factor (1 + h kappa/2)/(1 - h kappa/2) of EM, DLA(1/2) and
   DH(1/2), below 1 in modulus exactly when kappa < 0, (1 + (1 - tau) h kappa)/(1 - tau h kappa) of DLA(tau), which for
   h |kappa| > 2 makes the unstable motion stable (tau = 1) or the stable one unstable (tau = 0), and the mirror image
   (1 + tau h kappa)/(1 - (1 - tau) h kappa) of DH(tau), measured in the body frame. */
static PetscReal SleighFactor(const char *scheme, PetscReal tau, PetscReal u0, PetscReal h)
{
  const Sleigh   s = {1.0, 0.5, 0.5, u0, 1e-6};
  const PetscInt n = 3;
  MbsModel       model;
  MbsStepper     st;
  PetscInt       body;
  PetscReal      u, w;

  BuildSleigh(&s, &model, &body);
  st = Run(model, scheme, tau, h, n * h, NULL, NULL);
  SleighState(st, body, &u, &w);
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  return PetscPowReal(PetscAbsReal(w / s.w0), 1.0 / n);
}

static void TestSleighStability(void **state)
{
  const char     *schemes[] = {MBSSCHEMEEM, MBSSCHEMEDLA, MBSSCHEMEDLA, MBSSCHEMEDLA,
                               MBSSCHEMEDH, MBSSCHEMEDH,  MBSSCHEMEDH};
  const PetscReal taus[] = {0.5, 0.5, 1.0, 0.0, 0.5, 1.0, 0.0}, hs[] = {0.5, 4.0, 10.0}, k = 0.5 / 0.75;

  (void)state;
  for (int c = 0; c < 7; c++)
    for (int j = 0; j < 3; j++)
      for (int side = 0; side < 2; side++) {
        const PetscReal u0 = side ? 1.0 : -1.0, kappa = k * u0, h = hs[j], tau = taus[c];
        const PetscReal a   = strcmp(schemes[c], MBSSCHEMEDH) ? 1 - tau : tau; /* DH measures in the body frame */
        const PetscReal lam = PetscAbsReal((1 + a * h * kappa) / (1 - (1 - a) * h * kappa));
        const PetscReal got = SleighFactor(schemes[c], tau, u0, h);
        if (Verbose())
          printf("sleigh stability %s tau %g h %g %s: |lambda| %.6f, linear theory %.6f%s\n", schemes[c], (double)tau,
                 (double)h, side ? "leading " : "trailing", (double)got, (double)lam,
                 (got < 1) != (kappa < 0) ? "  (stability type changed)" : "");
        assert_true(PetscAbsReal(got - lam) < 1e-3 * lam);
        if (tau == 0.5) assert_true((got < 1) == (kappa < 0)); /* EM, DLA(1/2), DH(1/2) keep the type at every h */
      }
  /* and the other interpolation points lose it at large steps */
  assert_true(SleighFactor(MBSSCHEMEDLA, 1.0, 1.0, 4.0) < 1);
  assert_true(SleighFactor(MBSSCHEMEDLA, 0.0, -1.0, 4.0) > 1);
  assert_true(SleighFactor(MBSSCHEMEDH, 1.0, -1.0, 4.0) > 1);
  assert_true(SleighFactor(MBSSCHEMEDH, 0.0, 1.0, 4.0) < 1);
}

/* ------------------------------------------------------------------------------------------------------------ */
/* A skate (knife edge at the centre of mass) on a plane inclined at alpha, released with the blade pointing downhill
   and turning at the rate w (Neimark and Fufaev): the heading turns uniformly, th = w t, the speed along the blade is
   g sin(alpha) sin(w t)/w, and the centre moves by x = g sin(alpha)/(2 w^2) sin^2(w t) downhill and
   y = g sin(alpha)/(2 w^2) (w t - sin(2 w t)/2) across. The plane's normal n = (-sin alpha, 0, cos alpha), the
   downhill direction s = -(cos alpha, 0, sin alpha), the cross direction n x s = -e_y; gravity -9.81 e_z. */
static PetscReal SkateError(const char *scheme, PetscReal tau, PetscReal h, PetscReal T, PetscReal *dE, PetscReal *rerr)
{
  const PetscReal al = 0.3, w = 2.0, g = 9.81, ca = PetscCosReal(al), sa = PetscSinReal(al);
  const PetscReal n[3] = {-sa, 0, ca}, sd[3] = {-ca, 0, -sa}, ey[3] = {0, -1, 0};
  const PetscReal R[9] = {sd[0], ey[0], n[0], sd[1], ey[1], n[1], sd[2], ey[2], n[2]}; /* columns s, n x s, n */
  const PetscReal J[3] = {0.2, 0.3, 0.4}, om[3] = {w * n[0], w * n[1], w * n[2]}, z[3] = {0, 0, 1};
  const PetscReal c = g * sa / (2 * w * w);
  MbsModel        model;
  MbsStepper      st;
  PetscInt        body, knife;
  PetscReal       x[3], xe[3], F[3], M[3], tw;

  CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
  CHECK(MbsModelSetGravity(model, (PetscReal[]){0, 0, -g}));
  CHECK(MbsModelAddRigidBody(model, "skate", 1.5, J, (PetscReal[]){0, 0, 0}, R, NULL, om, &body));
  AddPlanar(model, body, z, n);
  knife = AddKnifeEdge(model, body, (PetscReal[]){0, 0, 0}, (PetscReal[]){0, 1, 0});
  CHECK(MbsModelSetUp(model));
  st = Run(model, scheme, tau, h, T, dE, NULL);
  CHECK(MbsStepperGetPointPosition(st, body, (PetscReal[]){0, 0, 0}, x));
  for (int i = 0; i < 3; i++)
    xe[i] = c * PetscSqr(PetscSinReal(w * T)) * sd[i] + c * (w * T - 0.5 * PetscSinReal(2 * w * T)) * ey[i];
  /* the knife's lateral force on the skate, 2 m g sin(alpha) sin(w t) along d2 = -sin(w t) s + cos(w t) n x s: the
     reaction is its mean over the last step, its value at the step's middle to O(h^2); the ground receives the
     opposite */
  CHECK(MbsStepperGetReaction(st, knife, F, M));
  tw    = T - 0.5 * h; /* the reaction is the mean force over the last step */
  *rerr = 0;
  for (int i = 0; i < 3; i++)
    *rerr = PetscMax(*rerr, PetscAbsReal(F[i] + 2 * 1.5 * g * sa * PetscSinReal(w * tw) *
                                                  (-PetscSinReal(w * tw) * sd[i] + PetscCosReal(w * tw) * ey[i])) /
                              (2 * 1.5 * g * sa));
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  return PetscSqrtReal(PetscSqr(x[0] - xe[0]) + PetscSqr(x[1] - xe[1]) + PetscSqr(x[2] - xe[2]));
}

/* EM and DLA(1/2) converge to the skate's closed form at second order (T = 2, h = 0.02, 0.01, 0.005); EM keeps the
   energy (gravity's work is in V) to round-off */
static void TestSkate(void **state)
{
  const char     *schemes[] = {MBSSCHEMEEM, MBSSCHEMEDLA, MBSSCHEMEDH};
  const PetscReal tau[]     = {0, 0.5, 0.5};

  (void)state;
  for (int c = 0; c < 3; c++) {
    PetscReal e[3], dE[3];
    PetscReal re[3];
    for (int k = 0; k < 3; k++) e[k] = SkateError(schemes[c], tau[c], 0.02 / (1 << k), 2.0, &dE[k], &re[k]);
    if (Verbose())
      printf("skate %s: position errors %.3e %.3e %.3e, orders %.3f %.3f; max |dE|/E %.2e %.2e %.2e; knife force "
             "errors %.2e %.2e %.2e\n",
             schemes[c], (double)e[0], (double)e[1], (double)e[2], (double)Order(e[0], e[1]), (double)Order(e[1], e[2]),
             (double)dE[0], (double)dE[1], (double)dE[2], (double)re[0], (double)re[1], (double)re[2]);
    /* EM's reaction converges at first order (its nodes' momenta satisfy the constraint to O(h^2) only, and the
       reaction is their change over h); DLA's and DH's at second order */
    assert_true(Order(re[0], re[2]) / 2 > (c == 0 ? 0.9 : 1.8) && re[2] < (c == 0 ? 5e-3 : 1e-4));
    assert_true(PetscAbsReal(Order(e[0], e[1]) - 2) < 0.15 && PetscAbsReal(Order(e[1], e[2]) - 2) < 0.15);
    assert_true(e[2] < 1e-3);
    if (c == 0)
      for (int k = 0; k < 3; k++) assert_true(dE[k] < 1e-13);
  }
}

/* ------------------------------------------------------------------------------------------------------------ */
/* An upright disk (radius r, thickness t, mass m, moments m r^2/2 about its axis d3 and m (r^2/4 + t^2/12) about its
   diameters) rolling without
   slipping on the horizontal plane: kept upright by perpendicular axes (d3 . e_z = 0), rolling with the spin rate ws
   about its axis and turning at the rate W about the vertical. Both rates are first integrals (Bloch, Nonholonomic
   Mechanics and Control, 1.4), so the centre moves on the circle x = rho sin(W t), y = rho (1 - cos(W t)), z = r,
   rho = r ws/W. */
static PetscReal DiskError(const char *scheme, PetscReal tau, PetscReal h, PetscReal T, PetscReal *dE, PetscReal *drate)
{
  const PetscReal m = 2.0, r = 0.5, ws = 3.0, W = 1.2, rho = r * ws / W;
  const PetscReal t = 0.1, J[3] = {m * (r * r / 4 + t * t / 12), m * (r * r / 4 + t * t / 12), 0.5 * m * r * r};
  const PetscReal R[9] = {1, 0, 0, 0, 0, 1, 0, -1, 0}; /* d1 = e_x, d2 = -e_z, d3 = e_y */
  const PetscReal v[3] = {r * ws, 0, 0}, om[3] = {0, ws, W}, z[3] = {0, 0, 1};
  MbsModel        model;
  MbsStepper      st;
  PetscInt        body;
  PetscReal       x[3], v0[3], v3[3], d3[3], x3[3], rate_W, rate_s;

  CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
  CHECK(MbsModelSetGravity(model, (PetscReal[]){0, 0, -9.81}));
  CHECK(MbsModelAddRigidBody(model, "disk", m, J, (PetscReal[]){0, 0, r}, R, v, om, &body));
  CHECK(MbsModelAddRolling(model, body, NULL, r, z, NULL));
  CHECK(MbsModelAddJoint(model, MBS_JOINT_PERPENDICULAR, body, NULL, z, MBS_GROUND, NULL, z, NULL));
  CHECK(MbsModelSetUp(model));
  st = Run(model, scheme, tau, h, T, dE, NULL);
  CHECK(MbsStepperGetPointPosition(st, body, (PetscReal[]){0, 0, 0}, x));
  CHECK(MbsStepperGetPointPosition(st, body, (PetscReal[]){0, 0, 1}, x3));
  CHECK(MbsStepperGetPointVelocity(st, body, (PetscReal[]){0, 0, 0}, v0));
  CHECK(MbsStepperGetPointVelocity(st, body, (PetscReal[]){0, 0, 1}, v3));
  for (int i = 0; i < 3; i++) d3[i] = x3[i] - x[i], v3[i] -= v0[i];
  rate_W = (d3[0] * v3[1] - d3[1] * v3[0]) / (d3[0] * d3[0] + d3[1] * d3[1]); /* the heading's rate */
  rate_s = PetscSqrtReal(v0[0] * v0[0] + v0[1] * v0[1]) / r;                  /* the rolling rate */
  *drate = PetscMax(PetscAbsReal(rate_W - W) / W, PetscAbsReal(rate_s - ws) / ws);
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  return PetscSqrtReal(PetscSqr(x[0] - rho * PetscSinReal(W * T)) + PetscSqr(x[1] - rho * (1 - PetscCosReal(W * T))) +
                       PetscSqr(x[2] - r));
}

static void TestRollingDisk(void **state)
{
  const char     *schemes[] = {MBSSCHEMEEM, MBSSCHEMEDLA, MBSSCHEMEDH};
  const PetscReal tau[]     = {0, 0.5, 0.5};

  (void)state;
  for (int c = 0; c < 3; c++) {
    PetscReal e[3], dE[3], dr[3];
    for (int k = 0; k < 3; k++) e[k] = DiskError(schemes[c], tau[c], 0.02 / (1 << k), 3.0, &dE[k], &dr[k]);
    if (Verbose())
      printf("rolling disk %s: centre errors %.3e %.3e %.3e, orders %.3f %.3f; max |dE|/E %.2e %.2e %.2e; rates' "
             "relative errors %.2e %.2e %.2e\n",
             schemes[c], (double)e[0], (double)e[1], (double)e[2], (double)Order(e[0], e[1]), (double)Order(e[1], e[2]),
             (double)dE[0], (double)dE[1], (double)dE[2], (double)dr[0], (double)dr[1], (double)dr[2]);
    assert_true(PetscAbsReal(Order(e[0], e[1]) - 2) < 0.15 && PetscAbsReal(Order(e[1], e[2]) - 2) < 0.15);
    assert_true(e[2] < 1e-3 && dr[2] < 1e-3);
    if (c == 0)
      for (int k = 0; k < 3; k++) assert_true(dE[k] < 1e-13);
  }
}

/* ------------------------------------------------------------------------------------------------------------ */
/* A homogeneous ball (moment 2/5 m r^2) rolling without slipping on a plane inclined at beta, with a cross-slope
   velocity u and a spin sp about the plane's normal: its centre falls with the acceleration 5/7 g sin(beta) along the
   slope and keeps u across it (Routh), x(t) = x0 + u t + 5/14 g sin(beta) t^2 s. EM converges to it at second order
   (T = 1, h = 0.02, 0.01, 0.005; the ball turns by up to 0.2 rad in a step), keeping the energy, and so does DH;
   DLA(1/2), whose positions are those of the midpoint rule on the centre's uniformly accelerated motion, reproduces it
   to round-off. */
static PetscReal BallError(const char *scheme, PetscReal h, PetscReal *dE, PetscReal *rerr)
{
  const PetscReal be = 0.4, g = 9.81, m = 0.8, r = 0.3, u = 0.7, sp = 5.0, T = 1.0,
                  a    = 5.0 / 7.0 * g * PetscSinReal(be);
  const PetscReal n[3] = {-PetscSinReal(be), 0, PetscCosReal(be)}, sd[3] = {-PetscCosReal(be), 0, -PetscSinReal(be)};
  const PetscReal J = 0.4 * m * r * r, Jv[3] = {J, J, J}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  const PetscReal c0[3] = {r * n[0], r * n[1], r * n[2]}, v[3] = {0, u, 0};
  MbsModel        model;
  MbsStepper      st;
  PetscInt        body, roll;
  PetscReal       om[3], x[3], err = 0, F[3], M[3];

  /* the contact point at rest: omega x (-r n) = -v, omega = n x v / r + sp n */
  om[0] = (n[1] * v[2] - n[2] * v[1]) / r + sp * n[0];
  om[1] = (n[2] * v[0] - n[0] * v[2]) / r + sp * n[1];
  om[2] = (n[0] * v[1] - n[1] * v[0]) / r + sp * n[2];
  CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
  CHECK(MbsModelSetGravity(model, (PetscReal[]){0, 0, -g}));
  CHECK(MbsModelAddRigidBody(model, "ball", m, Jv, c0, R, v, om, &body));
  CHECK(MbsModelAddRolling(model, body, NULL, r, n, &roll));
  CHECK(MbsModelSetUp(model));
  st = Run(model, scheme, 0.5, h, T, dE, NULL);
  CHECK(MbsStepperGetPointPosition(st, body, (PetscReal[]){0, 0, 0}, x));
  for (int i = 0; i < 3; i++) err = PetscMax(err, PetscAbsReal(x[i] - (c0[i] + v[i] * T + 0.5 * a * T * T * sd[i])));
  /* what the ball exerts on the plane: its weight's normal part m g cos(beta) and the friction 2/7 m g sin(beta)
     down the slope */
  CHECK(MbsStepperGetReaction(st, roll, F, M));
  *rerr = 0;
  for (int i = 0; i < 3; i++)
    *rerr = PetscMax(
      *rerr,
      PetscAbsReal(F[i] - (-m * g * PetscCosReal(be) * n[i] + 2.0 / 7.0 * m * g * PetscSinReal(be) * sd[i])) / (m * g));
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  return err;
}

static void TestRollingBall(void **state)
{
  const char *schemes[] = {MBSSCHEMEEM, MBSSCHEMEDLA, MBSSCHEMEDH};

  (void)state;
  for (int c = 0; c < 3; c++) {
    PetscReal e[3], dE[3];
    PetscReal re[3];
    for (int k = 0; k < 3; k++) e[k] = BallError(schemes[c], 0.02 / (1 << k), &dE[k], &re[k]);
    if (Verbose())
      printf(
        "rolling ball %s: centre errors %.3e %.3e %.3e, orders %.3f %.3f; max |dE|/E %.2e %.2e %.2e; contact force "
        "errors %.2e %.2e %.2e\n",
        schemes[c], (double)e[0], (double)e[1], (double)e[2], (double)Order(e[0], e[1]), (double)Order(e[1], e[2]),
        (double)dE[0], (double)dE[1], (double)dE[2], (double)re[0], (double)re[1], (double)re[2]);
    assert_true(re[2] < (c == 0 ? 5e-3 : 1e-3)); /* the normal force and the friction (EM: see the skate) */
    if (c == 2) assert_true(Order(re[0], re[2]) / 2 > 1.8);
    if (c == 1) assert_true(re[2] < 1e-12);
    if (c != 1) {
      assert_true(PetscAbsReal(Order(e[0], e[1]) - 2) < 0.15 && PetscAbsReal(Order(e[1], e[2]) - 2) < 0.15);
      assert_true(e[2] < 1e-3);
      if (c == 0)
        for (int k = 0; k < 3; k++) assert_true(dE[k] < 1e-13);
    } else
      for (int k = 0; k < 3; k++) assert_true(e[k] < 1e-12);
  }
}

/* ------------------------------------------------------------------------------------------------------------ */
/* The free rigid body (Ball 2013, Ch. 2 and 5): a body with moments (0.2, 0.3, 0.4) tumbling from omega0 = (0.5, 0.1,
   2) (body frame) about its centre, solved by the discrete Euler-Lagrange equations (dla: the coordinate frame) and by
   the discrete Hamel equations in the body frames (dh), both with tau = 1/2, against Euler's equations integrated here
   by RK4 (J w' = J w x w, R' = R [w]x; 4000 steps per unit time). Both converge at second order; they are distinct
   integrators (Ball's Remark 3.3), and the test measures how far apart they land. */
static void EulerReference(const PetscReal J[3], const PetscReal w0[3], PetscReal T, PetscReal R[3][3])
{
  const int n  = (int)(4000 * T);
  PetscReal dt = T / n, y[12];

  for (int i = 0; i < 9; i++) y[i] = (i % 4 == 0);
  for (int i = 0; i < 3; i++) y[9 + i] = w0[i];
  for (int s = 0; s < n; s++) {
    PetscReal k[4][12], t[12];
    for (int st = 0; st < 4; st++) {
      const PetscReal c = st == 0 ? 0 : (st == 3 ? 1.0 : 0.5);
      for (int j = 0; j < 12; j++) t[j] = y[j] + (st ? c * dt * k[st - 1][j] : 0);
      /* R' = R [w]x, row-major R in t[0..8] */
      for (int r = 0; r < 3; r++) {
        const PetscReal *Rr = &t[3 * r], *w = &t[9];
        k[st][3 * r + 0] = Rr[1] * w[2] - Rr[2] * w[1];
        k[st][3 * r + 1] = Rr[2] * w[0] - Rr[0] * w[2];
        k[st][3 * r + 2] = Rr[0] * w[1] - Rr[1] * w[0];
      }
      k[st][9]  = (J[1] - J[2]) * t[10] * t[11] / J[0];
      k[st][10] = (J[2] - J[0]) * t[11] * t[9] / J[1];
      k[st][11] = (J[0] - J[1]) * t[9] * t[10] / J[2];
    }
    for (int j = 0; j < 12; j++) y[j] += dt / 6 * (k[0][j] + 2 * k[1][j] + 2 * k[2][j] + k[3][j]);
  }
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) R[r][c] = y[3 * r + c];
}

/* The directors at T, the largest |E - E0|/E0 and |J - J0| (angular momentum about the centre) over the steps */
static void FreeBody(const char *scheme, PetscReal tau, PetscReal h, PetscReal T, PetscReal D[3][3], PetscReal *dE,
                     PetscReal *dJ)
{
  const PetscReal J[3] = {0.2, 0.3, 0.4}, w0[3] = {0.5, 0.1, 2.0}, I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  MbsModel        model;
  MbsStepper      st;
  PetscInt        body;
  MbsDiagnostics  d;
  PetscReal       J0[3];
  const PetscInt  n = (PetscInt)(T / h + 0.5);

  CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
  CHECK(MbsModelAddRigidBody(model, "body", 1.0, J, (PetscReal[]){0, 0, 0}, I3, NULL, w0, &body));
  CHECK(MbsModelSetUp(model));
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetType(st, scheme));
  CHECK(MbsStepperSetSchemeParameter(st, "tau", tau));
  CHECK(MbsStepperSetTimeStep(st, h));
  CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_TRUE));
  CHECK(MbsStepperComputeDiagnostics(st, &d));
  for (int i = 0; i < 3; i++) J0[i] = d.J[i];
  *dE = *dJ = 0;
  for (PetscInt k = 0; k < n; k++) {
    const PetscReal E0 = k ? *dE : 0;
    (void)E0;
    CHECK(MbsStepperStep(st));
    CHECK(MbsStepperComputeDiagnostics(st, &d));
    *dJ = PetscMax(*dJ, PetscSqrtReal(PetscSqr(d.J[0] - J0[0]) + PetscSqr(d.J[1] - J0[1]) + PetscSqr(d.J[2] - J0[2])));
  }
  for (int i = 0; i < 3; i++) {
    PetscReal e[3] = {0, 0, 0}, x[3], c[3];
    e[i]           = 1;
    CHECK(MbsStepperGetPointPosition(st, body, e, x));
    CHECK(MbsStepperGetPointPosition(st, body, (PetscReal[]){0, 0, 0}, c));
    for (int l = 0; l < 3; l++) D[l][i] = x[l] - c[l];
  }
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  (void)dE;
}

static void TestFreeRigidBody(void **state)
{
  const PetscReal J[3] = {0.2, 0.3, 0.4}, w0[3] = {0.5, 0.1, 2.0}, T = 5.0;
  const char     *schemes[] = {MBSSCHEMEDLA, MBSSCHEMEDH};
  PetscReal       Rref[3][3], D[2][3][3][3], err[2][3], dJ[2][3], dE, apart[3];

  (void)state;
  EulerReference(J, w0, T, Rref);
  for (int c = 0; c < 2; c++)
    for (int k = 0; k < 3; k++) {
      FreeBody(schemes[c], 0.5, 0.04 / (1 << k), T, D[c][k], &dE, &dJ[c][k]);
      err[c][k] = 0;
      for (int i = 0; i < 3; i++)
        for (int l = 0; l < 3; l++) err[c][k] = PetscMax(err[c][k], PetscAbsReal(D[c][k][l][i] - Rref[l][i]));
    }
  for (int k = 0; k < 3; k++) {
    apart[k] = 0;
    for (int i = 0; i < 3; i++)
      for (int l = 0; l < 3; l++) apart[k] = PetscMax(apart[k], PetscAbsReal(D[0][k][l][i] - D[1][k][l][i]));
  }
  for (int c = 0; c < 2; c++) {
    if (Verbose())
      printf("free rigid body %s: director errors %.3e %.3e %.3e, orders %.3f %.3f; max |J - J0| %.1e %.1e %.1e\n",
             schemes[c], (double)err[c][0], (double)err[c][1], (double)err[c][2], (double)Order(err[c][0], err[c][1]),
             (double)Order(err[c][1], err[c][2]), (double)dJ[c][0], (double)dJ[c][1], (double)dJ[c][2]);
    assert_true(PetscAbsReal(Order(err[c][0], err[c][1]) - 2) < 0.15 &&
                PetscAbsReal(Order(err[c][1], err[c][2]) - 2) < 0.15);
  }
  if (Verbose())
    printf("free rigid body: dla and dh apart by %.3e %.3e %.3e (orders %.3f %.3f)\n", (double)apart[0],
           (double)apart[1], (double)apart[2], (double)Order(apart[0], apart[1]), (double)Order(apart[1], apart[2]));
  for (int k = 0; k < 3; k++) assert_true(apart[k] < 1e-12); /* tau = 1/2: the same steps */
  for (int k = 0; k < 3; k++) {                              /* tau = 1: distinct */
    PetscReal Da[3][3], Dh[3][3];
    FreeBody(MBSSCHEMEDLA, 1.0, 0.04 / (1 << k), T, Da, &dE, &dJ[0][k]);
    FreeBody(MBSSCHEMEDH, 1.0, 0.04 / (1 << k), T, Dh, &dE, &dJ[1][k]);
    apart[k] = 0;
    for (int i = 0; i < 3; i++)
      for (int l = 0; l < 3; l++) apart[k] = PetscMax(apart[k], PetscAbsReal(Da[l][i] - Dh[l][i]));
  }
  if (Verbose())
    printf("free rigid body, tau = 1: dla and dh apart by %.3e %.3e %.3e (orders %.3f %.3f); max |J - J0| %.1e, %.1e\n",
           (double)apart[0], (double)apart[1], (double)apart[2], (double)Order(apart[0], apart[1]),
           (double)Order(apart[1], apart[2]), (double)dJ[0][2], (double)dJ[1][2]);
  assert_true(apart[2] > 1e-4 && PetscAbsReal(Order(apart[1], apart[2]) - 1) < 0.2);
}

/* ------------------------------------------------------------------------------------------------------------ */
/* The model distributed: a train of 12 skates with rods between them and a ball rolling beside it
   (tests/inputs/nonholonomic/skate_train.yaml) under EM, DLA and DH, on all ranks and on one, end in the same state to
   1e-11 of its size (velocity constraint rows of elements whose bodies sit on different ranks, ghost bodies in DH's
   frames) */
static void RunTrain(MPI_Comm comm, const char *scheme, PetscReal x[][6], PetscInt *nbodies)
{
  char         path[PETSC_MAX_PATH_LEN];
  MbsModel     model;
  MbsStepper   st;
  MbsRunConfig cfg;

  InputPath(path, sizeof(path), "tests/inputs/nonholonomic/skate_train.yaml");
  CHECK(MbsModelCreate(comm, &model));
  CHECK(MbsModelLoadYAML(model, path, &cfg));
  CHECK(MbsModelSetUp(model));
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetTimeStep(st, cfg.dt));
  CHECK(MbsStepperSetType(st, scheme));
  CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_TRUE));
  for (int k = 0; k < 10; k++) CHECK(MbsStepperStep(st));
  CHECK(MbsModelGetNumBodies(model, nbodies));
  for (PetscInt b = 0; b < *nbodies; b++) {
    const PetscReal X[3] = {0.3, -0.2, 0.1};
    CHECK(MbsStepperGetPointPosition(st, b, X, x[b]));
    CHECK(MbsStepperGetPointVelocity(st, b, X, x[b] + 3));
  }
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
}

static void TestParallelTrain(void **state)
{
  const char *schemes[] = {MBSSCHEMEEM, MBSSCHEMEDLA, MBSSCHEMEDH};
  PetscMPIInt size;

  (void)state;
  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (size == 1) skip();
  for (int c = 0; c < 3; c++) {
    PetscReal par[16][6], ser[16][6], diff = 0, norm = 0;
    PetscInt  nb, nb1;
    RunTrain(PETSC_COMM_WORLD, schemes[c], par, &nb);
    RunTrain(PETSC_COMM_SELF, schemes[c], ser, &nb1);
    assert_int_equal(nb, nb1);
    for (PetscInt b = 0; b < nb; b++)
      for (int i = 0; i < 6; i++) {
        diff = PetscMax(diff, PetscAbsReal(par[b][i] - ser[b][i]));
        norm = PetscMax(norm, PetscAbsReal(ser[b][i]));
      }
    if (Verbose())
      printf("skate train %s on %d ranks: %.2e from serial (state size %.2f)\n", schemes[c], (int)size, (double)diff,
             (double)norm);
    assert_true(diff <= 1e-11 * norm);
  }
}

int main(int argc, char **argv)
{
  struct CMUnitTest tests[16];
  size_t            n = 0;
  int               failed;

  if (PetscInitialize(&argc, &argv, NULL, NULL)) return 1;
  if (PetscPushErrorHandler(CaptureError, NULL)) return 1;
  if (!getenv("CMOCKA_XML_FILE")) {
    char        report[64];
    PetscMPIInt rank;

    if (MPI_Comm_rank(PETSC_COMM_WORLD, &rank)) return 1;
    snprintf(report, sizeof(report), "test_nonholonomic.%d.xml", rank);
    (void)remove(report);
    if (setenv("CMOCKA_XML_FILE", report, 1)) return 1;
  }
  cmocka_set_message_output(CM_OUTPUT_XML);
  tests[n++] = (struct CMUnitTest){"sleigh", TestSleigh, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"sleigh stability", TestSleighStability, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"skate", TestSkate, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"rolling disk", TestRollingDisk, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"rolling ball", TestRollingBall, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"free rigid body", TestFreeRigidBody, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"parallel train", TestParallelTrain, NULL, NULL, NULL};
  /* GGLMBS_TEST_FILTER: only the tests whose names match (cmocka's wildcards); the 2-rank run takes the parallel
     train alone, the closed-form cases are one-body models that a second rank leaves idle */
  if (getenv("GGLMBS_TEST_FILTER")) cmocka_set_test_filter(getenv("GGLMBS_TEST_FILTER"));
  failed = _cmocka_run_group_tests("nonholonomic", tests, n, NULL, NULL);
  if (PetscFinalize()) return 1;
  return failed;
}

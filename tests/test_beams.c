/*
  Beams (docs/beams.md, docs/statics.md): the beam generator's bodies, masses, corners and errors; the static scheme
  against the large-deflection solutions of the inextensible elastica (a cantilever under a tip load, by shooting on
  its ordinary differential equation here, and a cantilever rolled into a full circle by the end moment 2 pi EI/L),
  with second-order convergence in the number of elements; and a dynamic run started from the static equilibrium,
  which stays at rest. Silent when it passes.
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
#include <unistd.h>
#include <cmocka.h>

#include <gglmbs/gglmbs.h>
#include "stepper/stepperimpl.h"
#include "mbstest.h"

#define CHECK(call)                                            \
  do {                                                         \
    ClearError();                                              \
    if (call) fail_msg("%s failed: %s", #call, error_message); \
  } while (0)

/* A slender section: EA = GA = 1e7 EI / L^2, so that stretch and shear move the tip by about 1e-7 L */
static MbsBeamSection SlenderSection(PetscReal EI)
{
  MbsBeamSection s = {1e7 * EI, 1e7 * EI, 1e7 * EI, EI, EI, EI, 1.0, 1e-3, 1e-3};
  return s;
}

/* A cantilever of length 1 along x, clamped at x = 0, with n elements; its tip node */
static void BuildCantilever(PetscInt n, PetscReal EI, MbsModel *model, PetscInt *tip)
{
  const PetscReal      pts[6] = {0, 0, 0, 1, 0, 0};
  const MbsBeamSection sec    = SlenderSection(EI);
  PetscInt             first, nnodes;

  CHECK(MbsModelCreate(PETSC_COMM_WORLD, model));
  CHECK(MbsModelAddBeam(*model, "b", 2, pts, n, &sec, NULL, MBS_BEAM_CLAMPED, MBS_BEAM_FREE, &first, &nnodes));
  assert_int_equal(nnodes, n + 1);
  *tip = first + n;
}

/* The largest departure of the beam elements' stress resultants (the trajectory's, docs/output.md) from the statics of
   a cantilever under the tip force F at x_tip: every element carries the force |F| (shear and axial together) and
   the bending moment |F| times the lever arm of its midpoint, relative to |F| L */
static PetscReal ResultantError(MbsStepper st, const PetscReal F[3], const PetscReal xtip[3])
{
  MbsModel     model = st->model;
  PetscScalar *q;
  PetscReal    err = 0, Fn = PetscSqrtReal(F[0] * F[0] + F[1] * F[1] + F[2] * F[2]);

  CHECK(PetscMalloc1(model->nq_ghosted, &q));
  CHECK(MbsModelCoordinatesToLocal(model, st->q, q));
  for (PetscInt k = 0; k < model->nelem_local; k++) {
    const MbsElement *el = MbsModelLocalElement(model, k);
    PetscReal         qe[MBS_ELEM_MAX_NQ], r[6], xm[3], arm[3], M[3], Mn;
    if (!el->kernel->resultants) continue;
    MbsElementGather(model, el, q, qe);
    el->kernel->resultants(&el->data, qe, r);
    for (int i = 0; i < 3; i++) xm[i] = 0.5 * (qe[i] + qe[12 + i]), arm[i] = xtip[i] - xm[i];
    M[0] = arm[1] * F[2] - arm[2] * F[1], M[1] = arm[2] * F[0] - arm[0] * F[2], M[2] = arm[0] * F[1] - arm[1] * F[0];
    Mn  = PetscSqrtReal(M[0] * M[0] + M[1] * M[1] + M[2] * M[2]);
    err = PetscMax(err, PetscAbsReal(PetscSqrtReal(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]) - Fn) / Fn);
    err = PetscMax(err, PetscAbsReal(PetscSqrtReal(r[3] * r[3] + r[4] * r[4] + r[5] * r[5]) - Mn) / Fn);
  }
  CHECK(PetscFree(q));
  if (MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD)) fail_msg("MPI_Allreduce");
  return err;
}

/* Static solve in nsteps load steps of a ramp over [0, 1]; the tip's centre and its director d3; with F, the
   departure of the resultants from the statics of a tip force F (ResultantError()) */
static void SolveStatic(MbsModel model, PetscInt nsteps, PetscInt tip, PetscReal x[3], PetscReal d3[3],
                        const PetscReal *F, PetscReal *rerr)
{
  MbsStepper      st;
  const PetscReal X0[3] = {0, 0, 0}, X3[3] = {0, 0, 1};
  PetscReal       x3[3];

  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetType(st, MBSSCHEMESTATIC));
  CHECK(MbsStepperSetTimeStep(st, 1.0 / nsteps));
  for (PetscInt k = 0; k < nsteps; k++) CHECK(MbsStepperStep(st));
  CHECK(MbsStepperGetPointPosition(st, tip, X0, x));
  CHECK(MbsStepperGetPointPosition(st, tip, X3, x3));
  for (int i = 0; i < 3; i++) d3[i] = x3[i] - x[i];
  if (F) *rerr = ResultantError(st, F, x);
  CHECK(MbsStepperDestroy(&st));
}

/*
  The inextensible, unshearable elastica of a cantilever of length 1 under a tip force alpha EI / L^2 across it:
  theta'' = -alpha cos(theta), theta(0) = 0, theta'(1) = 0, by shooting on theta'(0) in [0, alpha] (bisection, RK4
  with 4000 steps). Returns the tip's deflection across (w) and its shortening along the beam (u).
*/
static void Elastica(PetscReal alpha, PetscReal *w, PetscReal *u)
{
  const int N  = 4000;
  PetscReal lo = 0, hi = alpha, y[4] = {0, 0, 0, 0};

  for (int it = 0; it < 80; it++) {
    const PetscReal k0 = 0.5 * (lo + hi), ds = 1.0 / N;
    y[0] = 0, y[1] = k0, y[2] = 0, y[3] = 0; /* theta, theta', x, z */
    for (int s = 0; s < N; s++) {
      PetscReal k[4][4], t[4];
      for (int stage = 0; stage < 4; stage++) {
        const PetscReal c = stage == 0 ? 0 : (stage == 3 ? 1.0 : 0.5);
        for (int j = 0; j < 4; j++) t[j] = y[j] + (stage ? c * ds * k[stage - 1][j] : 0);
        k[stage][0] = t[1];
        k[stage][1] = -alpha * cos(t[0]);
        k[stage][2] = cos(t[0]);
        k[stage][3] = sin(t[0]);
      }
      for (int j = 0; j < 4; j++) y[j] += ds / 6 * (k[0][j] + 2 * k[1][j] + 2 * k[2][j] + k[3][j]);
    }
    if (y[1] < 0)
      lo = k0;
    else
      hi = k0;
  }
  *w = y[3];
  *u = 1.0 - y[2];
}

/* The large-deflection cantilever under a tip load P = alpha EI/L^2 (alpha = 3: the tip deflects 0.60 L), from 8,
   16, 32 elements: the error of the tip's position against the elastica falls at second order, and with 32 elements
   is below 1e-3 L; the elements' stress resultants carry the tip force and its moment */
static void TestTipLoad(void **state)
{
  const PetscInt  ns[3] = {8, 16, 32};
  const PetscReal alpha = 3.0, EI = 2.0;
  PetscReal       w, u, err[3], rerr[3];

  (void)state;
  Elastica(alpha, &w, &u);
  if (!(w > 0.6 && w < 0.61 && u > 0.25 && u < 0.26)) fail_msg("elastica: w %g, u %g", (double)w, (double)u);
  for (int k = 0; k < 3; k++) {
    MbsModel              model;
    PetscInt              tip;
    PetscReal             x[3], d3[3];
    const PetscReal       F[3] = {0, 0, -alpha * EI}, X[3] = {0, 0, 0};
    const MbsTimeFunction ramp = {MBS_TIME_RAMP, {0, 1, 0, 1}, NULL};

    BuildCantilever(ns[k], EI, &model, &tip);
    CHECK(MbsModelAddPointLoad(model, tip, X, F, &ramp, NULL));
    CHECK(MbsModelSetUp(model));
    SolveStatic(model, 10, tip, x, d3, F, &rerr[k]);
    err[k] = PetscSqrtReal(PetscSqr(-x[2] - w) + PetscSqr(1 - x[0] - u) + PetscSqr(x[1]));
    if (getenv("GGLMBS_TEST_VERBOSE"))
      printf("tip load, %d elements: w %.6f u %.6f (elastica %.6f %.6f), error %.3e, resultants %.3e\n", (int)ns[k],
             -(double)x[2], 1 - (double)x[0], (double)w, (double)u, (double)err[k], (double)rerr[k]);
    CHECK(MbsModelDestroy(&model));
  }
  for (int k = 0; k < 2; k++) {
    const PetscReal order = log2(err[k] / err[k + 1]);
    if (!(order > 1.8 && order < 2.3))
      fail_msg("tip load: observed order %.3f between %d and %d elements (errors %.3e %.3e), expected 2", order,
               (int)ns[k], (int)ns[k + 1], (double)err[k], (double)err[k + 1]);
  }
  if (!(err[2] < 1e-3)) fail_msg("tip load: error %.3e with 32 elements", (double)err[2]);
  /* the resultants satisfy the statics of the deformed beam, to the same second order */
  if (!(rerr[2] < 5e-3 && rerr[0] / rerr[1] > 3.5 && rerr[1] / rerr[2] > 3.5))
    fail_msg("tip load: resultants depart from the statics by %.3e, %.3e, %.3e of F L", (double)rerr[0],
             (double)rerr[1], (double)rerr[2]);
}

/* A cantilever rolled up by the end moment M = 2 pi EI/L (a torque about d1, fixed in space: conservative in the
   plane): the exact tip is back at the clamp with d3 along the beam again. 16, 32, 64 elements: the tip's distance
   from the clamp falls at second order */
static void TestEndMoment(void **state)
{
  const PetscInt  ns[3] = {16, 32, 64};
  const PetscReal EI    = 1.5;
  PetscReal       err[3];

  (void)state;
  for (int k = 0; k < 3; k++) {
    MbsModel              model;
    PetscInt              tip;
    PetscReal             x[3], d3[3];
    const PetscReal       T[3] = {0, -2 * PETSC_PI * EI, 0};
    const MbsTimeFunction ramp = {MBS_TIME_RAMP, {0, 1, 0, 1}, NULL};

    BuildCantilever(ns[k], EI, &model, &tip);
    CHECK(MbsModelAddTorqueLoad(model, tip, T, &ramp, NULL));
    CHECK(MbsModelSetUp(model));
    SolveStatic(model, 20, tip, x, d3, NULL, NULL);
    err[k] = PetscSqrtReal(PetscSqr(x[0]) + PetscSqr(x[1]) + PetscSqr(x[2]));
    if (getenv("GGLMBS_TEST_VERBOSE"))
      printf("end moment, %d elements: tip (%.6f, %.6f, %.6f), d3 (%.6f, %.6f, %.6f)\n", (int)ns[k], (double)x[0],
             (double)x[1], (double)x[2], (double)d3[0], (double)d3[1], (double)d3[2]);
    if (!(x[2] > 0 && PetscAbsReal(x[1]) < 1e-10)) /* rolled up over the top, in its plane */
      fail_msg("end moment, %d elements: tip at (%g, %g, %g)", (int)ns[k], (double)x[0], (double)x[1], (double)x[2]);
    CHECK(MbsModelDestroy(&model));
  }
  for (int k = 1; k < 2; k++) { /* 16 elements: pre-asymptotic (2.26) */
    const PetscReal order = log2(err[k] / err[k + 1]);
    if (!(order > 1.8 && order < 2.3))
      fail_msg("end moment: observed order %.3f between %d and %d elements (tip %.3e, %.3e from the clamp)", order,
               (int)ns[k], (int)ns[k + 1], (double)err[k], (double)err[k + 1]);
  }
}

/* The generator: a straight clamped beam (bodies, elements, the lumped mass and inertia adding up to the beam's), an
   L-shaped polyline (a welded corner, d1 carried round the corner), a straight polyline of two segments (one shared
   node, no weld), and errors for bad arguments */
static void TestGenerator(void **state)
{
  const MbsBeamSection sec = {10, 10, 10, 1, 2, 3, 2.0, 0.01, 0.02};
  MbsModel             model;
  PetscInt             first, nnodes, nel, nq, ncon;
  PetscReal            m = 0, J3 = 0;

  (void)state;
  {
    const PetscReal pts[6] = {0, 0, 0, 0, 0, 2};
    CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
    CHECK(MbsModelAddBeam(model, "s", 2, pts, 4, &sec, NULL, MBS_BEAM_CLAMPED, MBS_BEAM_PINNED, &first, &nnodes));
    assert_int_equal(nnodes, 5);
    CHECK(MbsModelGetNumElements(model, &nel));
    assert_int_equal(nel, 5 + 4 + 2); /* the nodes' director constraints, the beam elements, the two supports */
    for (PetscInt k = 0; k < nnodes; k++) {
      m += model->bodies[first + k].mass;
      J3 += model->bodies[first + k].inertia[2];
    }
    if (!(PetscAbsReal(m - 2.0 * 2) < 1e-14 && PetscAbsReal(J3 - 0.03 * 2) < 1e-14))
      fail_msg("straight beam: mass %g, polar inertia %g; expected 4, 0.06", (double)m, (double)J3);
    CHECK(MbsModelSetInitialTolerance(model, 1e-12));
    CHECK(MbsModelSetUp(model));
    CHECK(MbsModelGetSizes(model, NULL, &nq, NULL, &ncon));
    assert_int_equal(nq, 5 * 12);
    assert_int_equal(ncon, 5 * 6 + 6 + 3);
    CHECK(MbsModelDestroy(&model));
  }
  {
    const PetscReal pts[9] = {0, 0, 0, 0, 1, 0, -1, 1, 0}, d1[3] = {0, 0, 5}, X1[3] = {1, 0, 0}, X0[3] = {0, 0, 0};
    PetscInt        b;
    CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
    CHECK(MbsModelAddBeam(model, "L", 3, pts, 4, &sec, d1, MBS_BEAM_FREE, MBS_BEAM_FREE, &first, &nnodes));
    assert_int_equal(nnodes, 6); /* 2 + 2 elements: 3 + 3 nodes, the corner twice */
    CHECK(MbsModelGetNumElements(model, &nel));
    assert_int_equal(nel, 6 + 4 + 1);
    CHECK(MbsModelFindBody(model, "L.3", &b)); /* before the set-up, which leaves each rank its own bodies */
    assert_int_equal(b, first + 3);
    for (PetscInt k = 0; k < nnodes; k++) { /* d1 stays along z; the corner nodes coincide */
      PetscReal x0[3], x1[3];
      CHECK(MbsModelGetPointPosition(model, first + k, X0, x0));
      CHECK(MbsModelGetPointPosition(model, first + k, X1, x1));
      if (!(PetscAbsReal(x1[2] - x0[2] - 1) < 1e-14)) fail_msg("L beam: node %d's d1 is not along z", (int)k);
      if (k == 2 || k == 3)
        if (!(PetscAbsReal(x0[0]) + PetscAbsReal(x0[1] - 1) < 1e-14)) fail_msg("L beam: corner node %d", (int)k);
    }
    CHECK(MbsModelSetInitialTolerance(model, 1e-12));
    CHECK(MbsModelSetUp(model));
    CHECK(MbsModelDestroy(&model));
  }
  {
    const PetscReal pts[9] = {0, 0, 0, 1, 0, 0, 3, 0, 0};
    m                      = 0;
    CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
    CHECK(MbsModelAddBeam(model, "p", 3, pts, 6, &sec, NULL, MBS_BEAM_FREE, MBS_BEAM_FREE, &first, &nnodes));
    assert_int_equal(nnodes, 7); /* 2 + 4 elements by length, one shared node */
    CHECK(MbsModelGetNumElements(model, &nel));
    assert_int_equal(nel, 7 + 6);
    for (PetscInt k = 0; k < nnodes; k++) m += model->bodies[first + k].mass;
    if (!(PetscAbsReal(m - 2.0 * 3) < 1e-13)) fail_msg("straight polyline: mass %g, expected 6", (double)m);
    CHECK(MbsModelDestroy(&model));
  }
  { /* errors */
    const PetscReal pts[9] = {0, 0, 0, 1, 0, 0, 1, 0, 0}, along[3] = {1, 0, 0};
    MbsBeamSection  bad = sec;
    const struct {
      PetscInt              npts, nel;
      const MbsBeamSection *s;
      const PetscReal      *d1;
      const char           *msg;
    } cases[] = {
      {3, 4, &sec, NULL, "coincide"},
      {2, 4, &bad, NULL, "rhoI2 must be positive"},
      {2, 4, &sec, along, "lies along the beam"},
      {3, 1, &sec, NULL, "each segment needs at least one"},
    };
    bad.rhoI2 = 0;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
      PetscErrorCode ierr;
      CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
      ClearError();
      ierr = MbsModelAddBeam(model, "e", cases[c].npts, pts, cases[c].nel, cases[c].s, cases[c].d1, MBS_BEAM_FREE,
                             MBS_BEAM_FREE, NULL, NULL);
      if (!ierr || !strstr(error_message, cases[c].msg))
        fail_msg("beam error %d: got '%s', expected '%s'", (int)c, error_message, cases[c].msg);
      CHECK(MbsModelDestroy(&model));
    }
  }
}

/* A cantilever sagging under gravity: MbsStepperSolve() with -mbs_equilibrium-like MbsStepperSetEquilibrium() starts
   EM from the equilibrium, where it stays at rest (kinetic energy below 1e-20 of the potential's change) over 20
   steps; the reactions at the clamp carry the beam's weight */
static void TestEquilibriumStart(void **state)
{
  MbsModel        model;
  MbsStepper      st;
  PetscInt        tip;
  const PetscReal g[3] = {0, 0, -9.81}, X0[3] = {0, 0, 0};
  PetscReal       x0[3], x1[3];
  MbsDiagnostics  d0, d;

  (void)state;
  BuildCantilever(16, 1.0, &model, &tip);
  CHECK(MbsModelSetGravity(model, g));
  CHECK(MbsModelSetUp(model));
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetTimeStep(st, 0.01));
  CHECK(MbsStepperComputeDiagnostics(st, &d0));
  CHECK(MbsStepperSolveEquilibrium(st, 2));
  CHECK(MbsStepperGetPointPosition(st, tip, X0, x0));
  CHECK(MbsStepperComputeDiagnostics(st, &d));
  if (!(x0[2] < -0.1 && d.T == 0)) fail_msg("equilibrium: tip at z = %g, T = %g", (double)x0[2], (double)d.T);
  for (int n = 0; n < 20; n++) {
    CHECK(MbsStepperStep(st));
    CHECK(MbsStepperComputeDiagnostics(st, &d));
    if (!(d.T <= 1e-20 * PetscAbsReal(d.V - d0.V)))
      fail_msg("after the equilibrium, step %d: T = %g (V - V0 = %g)", n, (double)d.T, (double)(d.V - d0.V));
  }
  CHECK(MbsStepperGetPointPosition(st, tip, X0, x1));
  if (!(PetscAbsReal(x1[2] - x0[2]) < 1e-12)) fail_msg("the tip moved by %g", (double)(x1[2] - x0[2]));
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
}

/* inputs/flying_spaghetti.yaml under EM with step h up to time T: the diagnostics after each step go to check() */
static void RunSpaghetti(PetscReal h, PetscReal T, void (*check)(PetscReal t, const MbsDiagnostics *, void *),
                         void *ctx, PetscReal x_end[3])
{
  MbsModel        model;
  MbsStepper      st;
  MbsRunConfig    cfg;
  MbsDiagnostics  d;
  char            path[PETSC_MAX_PATH_LEN];
  PetscInt        end;
  const PetscReal X[3]   = {0, 0, 0};
  const PetscInt  nsteps = (PetscInt)PetscFloorReal(T / h + 0.5);

  InputPath(path, sizeof(path), "inputs/flying_spaghetti.yaml");
  CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
  CHECK(MbsRunConfigSetDefaults(&cfg));
  CHECK(MbsModelLoadYAML(model, path, &cfg));
  CHECK(MbsModelFindBody(model, "spaghetti.10", &end));
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetRunConfig(st, &cfg));
  CHECK(MbsStepperSetTimeStep(st, h));
  for (PetscInt n = 0; n < nsteps; n++) {
    CHECK(MbsStepperStep(st));
    if (check) {
      CHECK(MbsStepperComputeDiagnostics(st, &d));
      check((n + 1) * h, &d, ctx);
    }
  }
  if (x_end) CHECK(MbsStepperGetPointPosition(st, end, X, x_end));
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
}

typedef struct {
  PetscBool      have;
  MbsDiagnostics free; /* the first state after the loads end */
  PetscReal      dE, dL, dJ;
} SpaghettiDrift;

static void SpaghettiCheck(PetscReal t, const MbsDiagnostics *d, void *ctx)
{
  SpaghettiDrift *s = (SpaghettiDrift *)ctx;

  if (t < 5.0 - 1e-9) return;
  if (!s->have) {
    s->free = *d;
    s->have = PETSC_TRUE;
  }
  s->dE = PetscMax(s->dE, PetscAbsReal(d->E - s->free.E) / PetscAbsReal(s->free.E));
  for (int i = 0; i < 3; i++) {
    s->dL = PetscMax(s->dL, PetscAbsReal(d->L[i] - s->free.L[i]));
    s->dJ = PetscMax(s->dJ, PetscAbsReal(d->J[i] - s->free.J[i]));
  }
}

/* The flying spaghetti under EM: the loads' impulse gives the beam exactly the momentum (50, 0, 0) (the load is
   piecewise linear in time with kinks on step boundaries, and EM takes it at the step's mid-time); after the loads end
   at t = 5 the energy, linear and angular momentum stay constant to round-off while it tumbles; and the step's error
   at t = 1 falls at second order in h */
static void TestFlyingSpaghetti(void **state)
{
  SpaghettiDrift  s    = {PETSC_FALSE};
  const PetscReal h[3] = {0.1, 0.05, 0.025};
  PetscReal       ref[3], x[3][3], e[3];

  (void)state;
  RunSpaghetti(0.05, 8.0, SpaghettiCheck, &s, NULL);
  if (!(PetscAbsReal(s.free.L[0] - 50) < 1e-11 && PetscAbsReal(s.free.L[1]) < 1e-11))
    fail_msg("flying spaghetti: momentum (%.15g, %.3g) after the loads, expected (50, 0)", (double)s.free.L[0],
             (double)s.free.L[1]);
  if (!(s.dE < 1e-13 && s.dL < 1e-12 * 50 && s.dJ < 1e-12 * PetscAbsReal(s.free.J[2])))
    fail_msg("flying spaghetti, free flight: drift of E %.3e (relative), L %.3e, J %.3e (J_z %g)", (double)s.dE,
             (double)s.dL, (double)s.dJ, (double)s.free.J[2]);
  if (getenv("GGLMBS_TEST_VERBOSE"))
    printf("flying spaghetti: E %.6f, J_z %.6f; drift after t = 5: E %.2e (relative), L %.2e, J %.2e\n",
           (double)s.free.E, (double)s.free.J[2], (double)s.dE, (double)s.dL, (double)s.dJ);
  RunSpaghetti(0.1 / 64, 1.0, NULL, NULL, ref);
  for (int k = 0; k < 3; k++) {
    RunSpaghetti(h[k], 1.0, NULL, NULL, x[k]);
    e[k] = PetscSqrtReal(PetscSqr(x[k][0] - ref[0]) + PetscSqr(x[k][1] - ref[1]) + PetscSqr(x[k][2] - ref[2]));
  }
  for (int k = 0; k < 2; k++) {
    const PetscReal order = log2(e[k] / e[k + 1]);
    if (getenv("GGLMBS_TEST_VERBOSE")) printf("flying spaghetti: h %g error %.3e, order %.3f\n", h[k], e[k], order);
    if (!(order > 1.8 && order < 2.3))
      fail_msg("flying spaghetti: observed order %.3f in h (errors %.3e, %.3e), expected 2", order, (double)e[k],
               (double)e[k + 1]);
  }
}

/* A network's junction is one node joining its elements in any directions (each element carries its frame in the
   node's director basis): an L-shaped network of 2 x 8 elements (one corner node) and the L-shaped polyline beam
   (two corner nodes welded) reach the same static equilibrium under a tip load out of their plane, with an
   unsymmetric section (the section's axes follow d1 round the corner in both) */
static void TestNetworkJunction(void **state)
{
  const MbsBeamSection  sec   = {1e6, 2e6, 3e6, 3.0, 1.0, 2.0, 1.0, 1e-3, 2e-3};
  const PetscReal       d1[3] = {0, 0, 1}, F[3] = {0.5, 0.2, -1.0}, X[3] = {0, 0, 0};
  const MbsTimeFunction ramp = {MBS_TIME_RAMP, {0, 1, 0, 1}, NULL};
  PetscReal             xtip[2][3], d3[3];

  (void)state;
  for (int variant = 0; variant < 2; variant++) {
    MbsModel model;
    PetscInt first, tip, nnodes;
    if (variant == 0) {
      const PetscReal pts[9] = {0, 0, 0, 0, 1, 0, -1, 1, 0};
      CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
      CHECK(MbsModelAddBeam(model, "L", 3, pts, 16, &sec, d1, MBS_BEAM_CLAMPED, MBS_BEAM_FREE, &first, &nnodes));
      tip = first + nnodes - 1;
    } else {
      PetscReal x[3 * 17];
      PetscInt  edge[2 * 16], clamped[1] = {0};
      for (int k = 0; k <= 16; k++) {
        x[3 * k]     = k <= 8 ? 0 : -(k - 8) / 8.0;
        x[3 * k + 1] = k <= 8 ? k / 8.0 : 1;
        x[3 * k + 2] = 0;
      }
      for (int e = 0; e < 16; e++) edge[2 * e] = e, edge[2 * e + 1] = e + 1;
      CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
      CHECK(MbsModelAddBeamNetwork(model, "L", 17, x, NULL, 16, edge, &sec, d1, 1, clamped, 0, NULL, &first));
      tip = first + 16;
    }
    CHECK(MbsModelAddPointLoad(model, tip, X, F, &ramp, NULL));
    CHECK(MbsModelSetUp(model));
    SolveStatic(model, 10, tip, xtip[variant], d3, NULL, NULL);
    CHECK(MbsModelDestroy(&model));
  }
  if (getenv("GGLMBS_TEST_VERBOSE"))
    printf("L network: tip (%.10f, %.10f, %.10f), L beam (%.10f, %.10f, %.10f)\n", (double)xtip[1][0],
           (double)xtip[1][1], (double)xtip[1][2], (double)xtip[0][0], (double)xtip[0][1], (double)xtip[0][2]);
  if (!(PetscAbsReal(xtip[0][2]) > 0.05))
    fail_msg("L beam: the tip moved too little out of the plane (%g)", (double)xtip[0][2]);
  for (int i = 0; i < 3; i++)
    if (!(PetscAbsReal(xtip[0][i] - xtip[1][i]) < 1e-9))
      fail_msg("L network against L beam: tip component %d %.12g against %.12g", i, (double)xtip[1][i],
               (double)xtip[0][i]);
}

/* A load per unit length (`beams: load:`, lumped onto the nodes by the length each stands for): a cantilever under a
   small uniform load q across it deflects at the tip by Euler-Bernoulli's q L^4 / (8 EI) (measured: 2e-8 of it; the
   shear adds q L^2 / (2 GA), 1e-11 of it) */
static void TestDistributedLoad(void **state)
{
  MbsModel        model;
  MbsStepper      st;
  MbsRunConfig    cfg;
  char            path[PETSC_MAX_PATH_LEN];
  PetscInt        tip;
  const PetscReal X[3] = {0, 0, 0}, q = 5e-4, L = 2, EI = 4;
  PetscReal       x[3], w;

  (void)state;
  InputPath(path, sizeof(path), "tests/inputs/beams/uniform_cantilever.yaml");
  CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
  CHECK(MbsRunConfigSetDefaults(&cfg));
  CHECK(MbsModelLoadYAML(model, path, &cfg));
  CHECK(MbsModelFindBody(model, "b.32", &tip));
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetRunConfig(st, &cfg));
  CHECK(MbsStepperStep(st));
  CHECK(MbsStepperGetPointPosition(st, tip, X, x));
  w = q * PetscPowReal(L, 4) / (8 * EI);
  if (getenv("GGLMBS_TEST_VERBOSE")) printf("uniform load: tip %.12g, Euler-Bernoulli %.12g\n", -(double)x[2], w);
  if (!(PetscAbsReal(-x[2] - w) < 1e-4 * w))
    fail_msg("uniform load: the tip deflects %.12g, expected q L^4/(8 EI) = %.12g", -(double)x[2], (double)w);
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
}

/* An equilibrium that one load step cannot reach (the end moment 2 pi EI/L rolls the cantilever into a circle): the
   error names the load step, the model's load factor and the state are left as they were; twenty load steps reach
   it (the tip of 16 elements 0.13 L from the clamp, as the static scheme's) */
static void TestEquilibriumSteps(void **state)
{
  MbsModel        model;
  MbsStepper      st;
  PetscInt        tip;
  const PetscReal T[3] = {0, -2 * PETSC_PI, 0}, X[3] = {0, 0, 0};
  PetscReal       x[3], lf;
  PetscErrorCode  ierr;

  (void)state;
  BuildCantilever(16, 1.0, &model, &tip);
  CHECK(MbsModelAddTorqueLoad(model, tip, T, NULL, NULL));
  CHECK(MbsModelSetUp(model));
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetTimeStep(st, 0.01));
  ClearError();
  ierr = MbsStepperSolveEquilibrium(st, 1);
  if (!ierr || !strstr(error_message, "load step 1 of 1"))
    fail_msg("one load step: expected an error naming it, got %d '%s'", (int)ierr, error_message);
  CHECK(MbsModelGetLoadFactor(model, &lf));
  CHECK(MbsStepperGetPointPosition(st, tip, X, x));
  if (!(lf == 1 && x[0] == 1 && x[2] == 0))
    fail_msg("after the failed equilibrium: load factor %g, tip (%g, %g, %g)", (double)lf, (double)x[0], (double)x[1],
             (double)x[2]);
  CHECK(MbsStepperSolveEquilibrium(st, 20));
  CHECK(MbsStepperGetPointPosition(st, tip, X, x));
  if (!(PetscSqrtReal(x[0] * x[0] + x[2] * x[2]) < 0.14 && x[2] > 0))
    fail_msg("twenty load steps: tip at (%g, %g, %g), expected near the clamp", (double)x[0], (double)x[1],
             (double)x[2]);
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
}

/* A mesh of beams (tests/inputs/beams/grid.yaml: a 6 x 6 grid of lines, a steel tube's section, pinned at its
   corners, gravity, a load per length of 2 N/m, a rigid plate welded to an inner node): its nodes are rigid bodies
   (the weld to the plate takes them); EM keeps E - W to round-off (below 1e-10 of W) while the load rises; and the
   static equilibrium's support reactions carry exactly the weight of the grid and the plate plus the load (12 m of
   beams) */
static void TestBeamMesh(void **state)
{
  MbsModel        model;
  MbsStepper      st;
  MbsRunConfig    cfg;
  MbsDiagnostics  d0, d;
  char            path[PETSC_MAX_PATH_LEN];
  PetscInt        nbodies, nelem, nsupports = 0;
  int            *support;
  PetscReal       W = 0, dEW = 0, F[3] = {0, 0, 0};
  const PetscReal Ltot = 12.0, g = 9.81, rhoA = 7850 * 1.131e-4, q = 2.0, mplate = 0.5;

  (void)state;
  InputPath(path, sizeof(path), "tests/inputs/beams/grid.yaml");
  for (int pass = 0; pass < 2; pass++) {
    CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
    CHECK(MbsRunConfigSetDefaults(&cfg));
    CHECK(MbsModelLoadYAML(model, path, &cfg));
    CHECK(MbsModelGetNumBodies(model, &nbodies));
    assert_int_equal(nbodies, 37);
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetRunConfig(st, &cfg));
    if (pass == 0) { /* EM over the load's rise */
      CHECK(MbsStepperComputeDiagnostics(st, &d0));
      for (int n = 0; n < 20; n++) {
        CHECK(MbsStepperStep(st));
        CHECK(MbsStepperComputeDiagnostics(st, &d));
        W += d.W;
        dEW = PetscMax(dEW, PetscAbsReal(d.E - d0.E - W));
      }
      /* the round-off floor of E here: 4e-14 against T up to 0.012 (steel: EA = 2.4e7 N in the strain energy) */
      if (!(dEW < 1e-10 * PetscAbsReal(W) && PetscAbsReal(W) > 1e-3))
        fail_msg("beam mesh, EM: E - E0 - W reaches %.3e (W = %g)", (double)dEW, (double)W);
    } else { /* the static equilibrium, the load complete */
      CHECK(MbsStepperSetType(st, MBSSCHEMESTATIC));
      CHECK(MbsStepperSetTimeStep(st, 1.0));
      CHECK(MbsStepperStep(st));
      CHECK(MbsModelGetNumElements(model, &nelem));
      CHECK(PetscCalloc1(nelem, &support)); /* the supports, from the ranks that hold them */
      for (PetscInt k = 0; k < model->nelem_local; k++) {
        const char *label = MbsModelLocalElement(model, k)->label;
        if (label && strstr(label, "support")) support[model->elem_local[k]] = 1;
      }
      CHECK(MPI_Allreduce(MPI_IN_PLACE, support, (int)nelem, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
      for (PetscInt e = 0; e < nelem; e++) {
        PetscReal Fe[3], Me[3];
        if (!support[e]) continue;
        CHECK(MbsStepperGetReaction(st, e, Fe, Me));
        for (int i = 0; i < 3; i++) F[i] += Fe[i];
        nsupports++;
      }
      CHECK(PetscFree(support));
      {
        const PetscReal weight = g * (rhoA * Ltot + mplate) + q * Ltot;
        if (!(nsupports == 4 && PetscAbsReal(F[2] + weight) < 1e-9 * weight && PetscAbsReal(F[0]) < 1e-9 * weight &&
              PetscAbsReal(F[1]) < 1e-9 * weight))
          fail_msg("beam mesh, statics: %d supports carry (%g, %g, %g), expected (0, 0, %g)", (int)nsupports,
                   (double)F[0], (double)F[1], (double)F[2], -(double)weight);
      }
    }
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
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
    snprintf(report, sizeof(report), "test_beams.%d.xml", rank);
    (void)remove(report);
    if (setenv("CMOCKA_XML_FILE", report, 1)) return 1;
  }
  cmocka_set_message_output(CM_OUTPUT_XML);
  tests[n++] = (struct CMUnitTest){"generator", TestGenerator, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"tip load", TestTipLoad, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"equilibrium start", TestEquilibriumStart, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"flying spaghetti", TestFlyingSpaghetti, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"network junction", TestNetworkJunction, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"distributed load", TestDistributedLoad, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"equilibrium steps", TestEquilibriumSteps, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"beam mesh", TestBeamMesh, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"end moment", TestEndMoment, NULL, NULL, NULL};
  failed     = _cmocka_run_group_tests("beams", tests, n, NULL, NULL);
  if (PetscFinalize()) return 1;
  return failed;
}

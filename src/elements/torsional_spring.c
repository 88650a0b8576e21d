#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "quadrow.h"
#include "jointaxis.h"

#define MBS_TORSION_PI 3.14159265358979323846

/*
  Torsional spring at a revolute or cylindrical joint (docs/torsional_spring.md): V = k/2 phi^2 with phi the angle by
  which b has turned relative to a about a's axis, away from the rest angle. With A_k, B_k the joint frames carried by
  a and b (axis 2 along the joint axis; complete() turns a's frame by the rest angle), the two quadratic rows

    S = A_1 . B_0,  C = A_0 . B_0,  phi = atan2(S, C) in (-pi, pi]

  give the angle. The potential is periodic in phi with period 2 pi: k/2 phi^2 for deflections below a half-turn, with
  its maximum k pi^2 / 2 at the half-turn.

  EM's discrete gradient: with Dphi = atan2(C0 S1 - S0 C1, C0 C1 + S0 S1) the turn over the step and m = (S, C) at
  the midpoint of (S0, C0) and (S1, C1),

    g = Dphi / sin(Dphi) (C_m, -S_m) / (r0 r1),  r = |(S, C)|,

  is a discrete gradient of phi in the (S, C) plane: g . ((S1, C1) - (S0, C0)) = Dphi exactly, since
  C_m (S1 - S0) - S_m (C1 - C0) = C0 S1 - S0 C1 = r0 r1 sin(Dphi). S and C are quadratic in q, so their gradients at
  qm carry the increment exactly, and

    dg_q = sigma (g_S DS(qm) + g_C DC(qm)),  sigma = (V(phi1) - V(phi0)) / Dphi = k/2 (phi0 + phi1)

  satisfies dg_q . (q1 - q0) = V(q1) - V(q0). sigma is the secant of V in phi without cancellation; across the
  half-turn (phi jumps by 2 pi while the turn Dphi is small) it is k/2 (phi1^2 - phi0^2) / Dphi.
*/

/* The rows S and C; MbsElemQuadRowsEval() gives their values and gradients DS = G[0..nq-1], DC = G[nq..2nq-1] */
static void TorsionalSpringRows(const MbsElemData *e, MbsElemQuadRow rows[2])
{
  MbsElemQuadRowVectors(e, e->frame_a[1], e->frame_b[0], &rows[0]); /* S */
  MbsElemQuadRowVectors(e, e->frame_a[0], e->frame_b[0], &rows[1]); /* C */
}

static double TorsionalSpringEnergy(const MbsElemData *e, const double *q)
{
  MbsElemQuadRow rows[2];
  double         sc[2], phi;

  TorsionalSpringRows(e, rows);
  MbsElemQuadRowsEval(2, rows, MbsElemNq(e), q, sc, NULL);
  phi = atan2(sc[0], sc[1]);
  return 0.5 * e->stiffness * phi * phi;
}

/* dphi/dq = (C DS - S DC) / r^2 into dphi; returns phi (0 with dphi = 0 where r = 0: the angle is undefined there) */
static double TorsionalSpringAngle(const MbsElemData *e, const MbsElemQuadRow rows[2], const double *q, double sc[2],
                                   double *G, double *dphi)
{
  const int nq = MbsElemNq(e);
  double    r2;

  MbsElemQuadRowsEval(2, rows, MbsElemNq(e), q, sc, G);
  r2 = sc[0] * sc[0] + sc[1] * sc[1];
  for (int i = 0; i < nq; i++) dphi[i] = r2 > 0 ? (sc[1] * G[i] - sc[0] * G[nq + i]) / r2 : 0.0;
  return r2 > 0 ? atan2(sc[0], sc[1]) : 0.0;
}

static void TorsionalSpringGradient(const MbsElemData *e, const double *q, double *dV)
{
  const int      nq = MbsElemNq(e);
  MbsElemQuadRow rows[2];
  double         sc[2], G[2 * MBS_ELEM_MAX_NQ], phi;

  TorsionalSpringRows(e, rows);
  phi = TorsionalSpringAngle(e, rows, q, sc, G, dV);

  for (int i = 0; i < nq; i++) dV[i] *= e->stiffness * phi;
}

/* D2V = k (Dphi Dphi^T + phi D2phi) with
   D2phi = [DS DC^T - DC DS^T + C HS - S HC] / r^2 - 2 (C DS - S DC)(S DS + C DC)^T / r^4, symmetrized */
static void TorsionalSpringHessian(const MbsElemData *e, const double *q, double *d2V)
{
  const int      nq = MbsElemNq(e);
  MbsElemQuadRow rows[2];
  double sc[2], G[2 * MBS_ELEM_MAX_NQ], dphi[MBS_ELEM_MAX_NQ], H[2 * MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ], phi, r2, S, C;

  TorsionalSpringRows(e, rows);
  phi = TorsionalSpringAngle(e, rows, q, sc, G, dphi);
  S = sc[0], C = sc[1], r2 = S * S + C * C;
  if (!(r2 > 0)) {
    for (int i = 0; i < nq * nq; i++) d2V[i] = 0;
    return;
  }
  MbsElemQuadRowsHessian(2, rows, nq, H);
  for (int i = 0; i < nq; i++) {
    for (int j = 0; j <= i; j++) {
      const double *DS = G, *DC = G + nq, *HS = H, *HC = H + nq * nq;
      double        a, b, h;

      a = (C * (HS[i * nq + j] + HS[j * nq + i]) - S * (HC[i * nq + j] + HC[j * nq + i])) / (2 * r2);
      b = -((C * DS[i] - S * DC[i]) * (S * DS[j] + C * DC[j]) + (C * DS[j] - S * DC[j]) * (S * DS[i] + C * DC[i])) /
          (r2 * r2);
      h               = e->stiffness * (dphi[i] * dphi[j] + phi * (a + b));
      d2V[i * nq + j] = d2V[j * nq + i] = h;
    }
  }
}

/* x / sin x and its derivative, by their series near 0 */
static double TurnFactor(double x, double *df)
{
  const double x2 = x * x;

  if (fabs(x) < 1e-3) {
    *df = x / 3.0 + 7.0 * x * x2 / 90.0;
    return 1.0 + x2 / 6.0 + 7.0 * x2 * x2 / 360.0;
  } else {
    const double s = sin(x);

    *df = (s - x * cos(x)) / (s * s);
    return x / s;
  }
}

/* sigma = (V(phi1) - V(phi0)) / Dphi and dsigma/dphi1 (with dDphi = dphi1). Across the half-turn phi jumps by about
   2 pi: there V(phi1) - V(phi0) = k/2 (phi1 - phi0)(phi1 + phi0) is divided by the turn itself (0 when the turn is
   0, i.e. phi = pi and -pi at the two ends, the same point of the circle). */
static double TorsionalSpringSecant(double k, double phi0, double phi1, double turn, double *dsigma)
{
  double sigma;

  if (fabs(phi1 - phi0) <= MBS_TORSION_PI) {
    *dsigma = 0.5 * k;
    return 0.5 * k * (phi0 + phi1);
  }
  if (turn == 0) {
    *dsigma = 0;
    return 0;
  }
  sigma   = 0.5 * k * (phi1 - phi0) * (phi1 + phi0) / turn;
  *dsigma = (k * phi1 - sigma) / turn;
  return sigma;
}

static void TorsionalSpringDiscreteGradient(const MbsElemData *e, const double *q0, const double *q1, double *dg,
                                            double *ddg)
{
  const int      nq = MbsElemNq(e);
  MbsElemQuadRow rows[2];
  double         qm[MBS_ELEM_MAX_NQ], sc0[2], sc1[2], scm[2], scq[2], G1[2 * MBS_ELEM_MAX_NQ], Gm[2 * MBS_ELEM_MAX_NQ],
    H[2 * MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];
  double r0, r1, phi0, phi1, turn, f, df, sigma, dsigma, gS, gC;

  for (int i = 0; i < nq; i++) qm[i] = 0.5 * (q0[i] + q1[i]);
  TorsionalSpringRows(e, rows);
  MbsElemQuadRowsEval(2, rows, MbsElemNq(e), q0, sc0, NULL);
  MbsElemQuadRowsEval(2, rows, MbsElemNq(e), q1, sc1, G1);
  MbsElemQuadRowsEval(2, rows, MbsElemNq(e), qm, scq, Gm);
  r0 = hypot(sc0[0], sc0[1]), r1 = hypot(sc1[0], sc1[1]);
  if (!(r0 > 0 && r1 > 0)) { /* the angle is undefined at one end: no torque */
    for (int i = 0; i < nq; i++) dg[i] = 0;
    if (ddg)
      for (int i = 0; i < nq * nq; i++) ddg[i] = 0;
    return;
  }
  phi0 = atan2(sc0[0], sc0[1]), phi1 = atan2(sc1[0], sc1[1]);
  turn  = atan2(sc0[1] * sc1[0] - sc0[0] * sc1[1], sc0[1] * sc1[1] + sc0[0] * sc1[0]);
  f     = TurnFactor(turn, &df);
  sigma = TorsionalSpringSecant(e->stiffness, phi0, phi1, turn, &dsigma);
  /* (S_m, C_m): the mean of the ends' values (not the values at qm), which makes g . ((S1, C1) - (S0, C0)) = Dphi */
  scm[0] = 0.5 * (sc0[0] + sc1[0]), scm[1] = 0.5 * (sc0[1] + sc1[1]);
  gS = f * scm[1] / (r0 * r1), gC = -f * scm[0] / (r0 * r1);
  for (int i = 0; i < nq; i++) dg[i] = sigma * (gS * Gm[i] + gC * Gm[nq + i]);
  if (!ddg) return;
  {
    /* derivatives in (S1, C1): dphi1 = (C1, -S1)/r1^2 = dturn, dr1 = (S1, C1)/r1 */
    const double dphi1[2] = {sc1[1] / (r1 * r1), -sc1[0] / (r1 * r1)}, dr1[2] = {sc1[0] / r1, sc1[1] / r1};
    double       dgS[2], dgC[2], dsig[2], wq[3][MBS_ELEM_MAX_NQ];

    for (int m = 0; m < 2; m++) {
      dsig[m] = dsigma * dphi1[m];
      dgS[m]  = (df * dphi1[m] * scm[1] + f * (m == 1 ? 0.5 : 0.0) - f * scm[1] * dr1[m] / r1) / (r0 * r1);
      dgC[m]  = -(df * dphi1[m] * scm[0] + f * (m == 0 ? 0.5 : 0.0) - f * scm[0] * dr1[m] / r1) / (r0 * r1);
    }
    /* d/dq1 of a function of (S1, C1): its (S1, C1) derivative against DS(q1), DC(q1) */
    for (int j = 0; j < nq; j++) {
      wq[0][j] = dsig[0] * G1[j] + dsig[1] * G1[nq + j];
      wq[1][j] = dgS[0] * G1[j] + dgS[1] * G1[nq + j];
      wq[2][j] = dgC[0] * G1[j] + dgC[1] * G1[nq + j];
    }
    MbsElemQuadRowsHessian(2, rows, nq, H);
    for (int i = 0; i < nq; i++) {
      const double u = gS * Gm[i] + gC * Gm[nq + i];

      for (int j = 0; j < nq; j++)
        ddg[i * nq + j] = u * wq[0][j] + sigma * (Gm[i] * wq[1][j] + Gm[nq + i] * wq[2][j]) +
                          0.5 * sigma * (gS * H[i * nq + j] + gC * H[(nq + i) * nq + j]);
    }
  }
}

const MbsElemKernel MbsElemKernelTorsionalSpring = {
  .name              = "torsional_spring",
  .ncon              = 0,
  .energy            = TorsionalSpringEnergy,
  .gradient          = TorsionalSpringGradient,
  .hessian           = TorsionalSpringHessian,
  .discrete_gradient = TorsionalSpringDiscreteGradient,
};

/* Joint frames from a's axis, a's turned by the rest angle (in `length`; unset means 0): then phi = 0 at the rest
   angle. */
static int TorsionalSpringComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                                   size_t len)
{
  double n[3], E[3][3], R[3][3], rest;

  if (MbsElemUnitAxis(d->axis_a, "Torsional spring", "the axis", error, len)) return 1;
  if (!(d->stiffness > 0 && isnormal(d->stiffness))) {
    snprintf(error, len, "Torsional spring: stiffness must be positive and finite, got %g", d->stiffness);
    return 1;
  }
  rest = d->length == MBS_ELEM_UNSET ? 0.0 : d->length;
  if (!(fabs(rest) < MBS_TORSION_PI)) {
    snprintf(error, len, "Torsional spring: the rest angle must lie in (-pi, pi) (rad, from the initial state), got %g",
             rest);
    return 1;
  }
  d->length = rest;
  MbsElemPlacementVector(a, d->axis_a, n);
  MbsElemFrameFromAxis(n, E);
  for (int l = 0; l < 3; l++) {
    R[0][l] = cos(rest) * E[0][l] + sin(rest) * E[1][l];
    R[1][l] = -sin(rest) * E[0][l] + cos(rest) * E[1][l];
    R[2][l] = E[2][l];
  }
  MbsElemFrameInBody(a, R, d->frame_a);
  MbsElemFrameInBody(b, E, d->frame_b);
  return 0;
}

const MbsElementType MbsElementTypeTorsionalSpring = {
  .name              = "torsional_spring",
  .section           = "springs",
  .title             = "Torsional spring",
  .kernel            = &MbsElemKernelTorsionalSpring,
  .needs_orientation = MBS_ELEM_ORIENT_BOTH,
  .nparams           = 3,
  .params            = {MBS_ELEM_JOINT_AXIS_PARAM,
                        {"stiffness",
                         MBS_ELEM_PARAM_REAL,
                         {offsetof(MbsElemData, stiffness)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "torsional stiffness k in N m/rad"},
                        {"angle",
                         MBS_ELEM_PARAM_REAL,
                         {offsetof(MbsElemData, length)},
                         MBS_ELEM_RANGE_FINITE,
                         MBS_ELEM_DEFAULT_BY_TYPE,
                         "rest angle of b relative to a in rad, from the initial state, default 0"}},
  .complete          = TorsionalSpringComplete,
};

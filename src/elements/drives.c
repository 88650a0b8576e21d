#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include <gglmbs/elements/vec3.h>
#include "quadrow.h"

/*
  Drives (docs/drives.md): rheonomic constraints that prescribe a joint coordinate or a point over time, measured
  from the initial state. Each row is sum_j c_j(t) g_j(q) with quadratic g_j (quadrow.h), linear in its time
  coefficients c_j (e->tcoef, set through time_coefficients()), so that

    * EM's constraint forces G(q_{n+1/2}; mean c)^T lambda use the q-part of the discrete gradient of g in (q, t):
      g(q1, t1) - g(q0, t0) = G(qm; (c0 + c1)/2) (q1 - q0) + sum_j (g_j(q0) + g_j(q1))/2 (c_j(t1) - c_j(t0));
    * the coefficients' time derivatives in place of the coefficients give dg/dt and its gradient in q.
*/

static int CheckStartsAtZero(const MbsTimeFunction *f, const char title[], const char what[], char *error, size_t len)
{
  const double v0 = MbsTimeFunctionEval(f, 0.0);

  if (!(fabs(v0) <= 1e-12)) {
    snprintf(error, len,
             "%s: the prescribed %s must be 0 at t = 0 (it is measured from the initial state), got %g; start the "
             "function at 0 or move the initial state",
             title, what, v0);
    return 1;
  }
  return 0;
}

/* Mean over [t0, t1] of (1, f) or the derivative (0, f') at t1: the coefficients of a row g_fixed(q) - f(t) */
static void AdditiveCoefficients(const MbsElemData *e, double t0, double t1, int derivative, double coef[])
{
  double df0, df1, f0 = MbsTimeFunctionEvalDerivative(&e->time, t0, &df0),
                   f1 = MbsTimeFunctionEvalDerivative(&e->time, t1, &df1);

  coef[0] = derivative ? 0.0 : 1.0;
  coef[1] = derivative ? df1 : 0.5 * (f0 + f1);
}

/* ---- Angle: b turns relative to a about a's axis by theta(t). With A_k, B_k the joint frame carried by a and b
   (axis 2 along the axis, both frames equal initially), B_0 = cos th A_0 + sin th A_1 is the row
   cos th A_1.B_0 - sin th A_0.B_0 = 0 (whose gradient along the turn is 1). Use with a revolute or cylindrical joint
   about the same axis, which keeps B_0 in the plane of A_0 and A_1. */
static void AngleDriveRows(const MbsElemData *e, MbsElemQuadRow rows[1])
{
  MbsElemQuadRow r0;

  MbsElemQuadRowVectors(e, e->frame_a[1], e->frame_b[0], &rows[0]);
  MbsElemQuadRowScale(&rows[0], e->tcoef[0]);
  MbsElemQuadRowVectors(e, e->frame_a[0], e->frame_b[0], &r0);
  MbsElemQuadRowAxpy(&rows[0], -e->tcoef[1], &r0);
}

static void AngleDriveCoefficients(const MbsElemData *e, double t0, double t1, int derivative, double coef[])
{
  double dth0, dth1, th0 = MbsTimeFunctionEvalDerivative(&e->time, t0, &dth0),
                     th1 = MbsTimeFunctionEvalDerivative(&e->time, t1, &dth1);

  if (derivative) {
    coef[0] = -dth1 * sin(th1);
    coef[1] = dth1 * cos(th1);
  } else {
    coef[0] = 0.5 * (cos(th0) + cos(th1));
    coef[1] = 0.5 * (sin(th0) + sin(th1));
  }
}

MBS_QUADROW_KERNEL_EXTRA(AngleDrive, "angle_drive", 1, .time_coefficients = AngleDriveCoefficients);

static int AngleDriveComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                              size_t len)
{
  double n[3], E[3][3];

  if (MbsElemUnitAxis(d->axis_a, "Angle drive", "the axis", error, len)) return 1;
  MbsElemPlacementVector(a, d->axis_a, n);
  MbsElemFrameFromAxis(n, E);
  MbsElemFrameInBody(a, E, d->frame_a);
  MbsElemFrameInBody(b, E, d->frame_b);
  return CheckStartsAtZero(&d->time, "Angle drive", "angle", error, len);
}

const MbsElementType MbsElementTypeAngleDrive = {
  .name              = "angle",
  .section           = "drives",
  .title             = "Angle drive",
  .kernel            = &MbsElemKernelAngleDrive,
  .needs_orientation = MBS_ELEM_ORIENT_BOTH,
  .cell_kind         = 13,
  .nparams           = 2,
  .params            = {{"axis",
                         MBS_ELEM_PARAM_DIRECTION,
                         {offsetof(MbsElemData, axis_a)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "axis of the turn in the frame of a, world frame for ground"},
                        {"angle",
                         MBS_ELEM_PARAM_TIME_FUNCTION,
                         {offsetof(MbsElemData, time)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "angle of b relative to a in rad, from the initial state, 0 at t = 0"}},
  .complete          = AngleDriveComplete,
};

/* ---- Slide: the point Xb of b moves relative to the point Xa of a along a's axis n_a by u(t):
   (x_b(Xb) - x_a(Xa)) . n_a - s0 - u(t) = 0, s0 its initial value. Rows -d.A_2 c_0 - c_1 with
   (c_0, c_1) = (1, s0 + u), derivatives (0, u'). Use with a prismatic or cylindrical joint, or a point on a line. */
static void SlideDriveRows(const MbsElemData *e, MbsElemQuadRow rows[1])
{
  MbsElemQuadRowOffsetA(e, e->axis_a, &rows[0]);
  MbsElemQuadRowScale(&rows[0], -e->tcoef[0]);
  rows[0].c0 -= e->tcoef[1];
}

static void SlideDriveCoefficients(const MbsElemData *e, double t0, double t1, int derivative, double coef[])
{
  AdditiveCoefficients(e, t0, t1, derivative, coef);
  if (!derivative) coef[1] += e->length;
}

MBS_QUADROW_KERNEL_EXTRA(SlideDrive, "slide_drive", 1, .time_coefficients = SlideDriveCoefficients);

static int SlideDriveComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                              size_t len)
{
  double n[3], r[3];

  if (MbsElemUnitAxis(d->axis_a, "Slide drive", "the axis", error, len)) return 1;
  MbsElemPlacementVector(a, d->axis_a, n);
  for (int l = 0; l < 3; l++) r[l] = b->x[l] - a->x[l];
  d->length = MbsVec3Dot(r, n); /* s0 */
  return CheckStartsAtZero(&d->time, "Slide drive", "displacement", error, len);
}

const MbsElementType MbsElementTypeSlideDrive = {
  .name              = "slide",
  .section           = "drives",
  .title             = "Slide drive",
  .kernel            = &MbsElemKernelSlideDrive,
  .needs_orientation = MBS_ELEM_ORIENT_A,
  .cell_kind         = 13,
  .nparams           = 2,
  .params            = {{"axis",
                         MBS_ELEM_PARAM_DIRECTION,
                         {offsetof(MbsElemData, axis_a)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "axis of the slide in the frame of a, world frame for ground"},
                        {"displacement",
                         MBS_ELEM_PARAM_TIME_FUNCTION,
                         {offsetof(MbsElemData, time)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "displacement of b's point relative to a's along the axis in m, from the initial state, 0 at "
                                    "t = 0"}},
  .complete          = SlideDriveComplete,
};

/* ---- Position: the point Xa of a moves along a world line, x_a(Xa) = x0 + s(t) n: rows d_l c_0 - c_1 n_l with
   d = x_a(Xa) - x0 (b is the ground at x0), (c_0, c_1) = (1, s), derivatives (0, s'). Affine in q. */
static void PositionDriveRows(const MbsElemData *e, MbsElemQuadRow rows[3])
{
  for (int l = 0; l < 3; l++) {
    MbsElemQuadRowPoint(e, l, &rows[l]);
    MbsElemQuadRowScale(&rows[l], e->tcoef[0]);
    rows[l].c0 -= e->tcoef[1] * e->axis_b[l];
  }
}

MBS_QUADROW_KERNEL_EXTRA(PositionDrive, "position_drive", 3, .time_coefficients = AdditiveCoefficients);

static int PositionDriveComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                                 size_t len)
{
  (void)a, (void)b;
  if (MbsElemUnitAxis(d->axis_b, "Position drive", "the direction", error, len)) return 1;
  return CheckStartsAtZero(&d->time, "Position drive", "displacement", error, len);
}

const MbsElementType MbsElementTypePositionDrive = {
  .name       = "position",
  .section    = "drives",
  .title      = "Position drive",
  .kernel     = &MbsElemKernelPositionDrive,
  .connection = MBS_ELEM_BODY_TO_WORLD,
  .cell_kind  = 13,
  .nparams    = 2,
  .params     = {{"direction",
                  MBS_ELEM_PARAM_DIRECTION,
                  {offsetof(MbsElemData, axis_b)},
                  MBS_ELEM_RANGE_POSITIVE,
                  MBS_ELEM_REQUIRED,
                  "direction of the path, world frame"},
                 {"displacement",
                  MBS_ELEM_PARAM_TIME_FUNCTION,
                  {offsetof(MbsElemData, time)},
                  MBS_ELEM_RANGE_POSITIVE,
                  MBS_ELEM_REQUIRED,
                  "displacement along the direction in m, from the position, 0 at t = 0"}},
  .complete   = PositionDriveComplete,
};

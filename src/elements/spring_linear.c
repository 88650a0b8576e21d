#include <math.h>

#include "elements/spring_invariant.h"

/* Linear spring V = k/2 (|d| - L)^2 = f(pi), pi = d.d, r = |d| = sqrt(pi):
     f'(pi) = k/2 (1 - L/r), f''(pi) = k L / (4 r^3).
   Degenerate case d = 0 with L > 0: V = k/2 L^2 is fine, but the terms in L/r (they carry the direction
   d/|d|, undefined at d = 0) are singular. There they are dropped, i.e. d/|d| := 0: f'(0) = k/2, f''(0) = 0,
   so the gradient is zero (an element of the generalized gradient at the cone tip, the ball of radius kL),
   the Hessian is that of the regular part k/2 |d|^2, and likewise in the secant below. This covers
   pi == 0.0 in floating point (|d| below ~1e-162); for 0 < |d| the terms are evaluated as they stand, finite
   unless |d| is astronomically small (f'' ~ kL/|d|^3 overflows below |d| ~ 1e-103 (kL)^(1/3)). */
static double SpringLinearF(const MbsElemData *e, double pi)
{
  const double stretch = sqrt(pi) - e->length;

  return 0.5 * e->stiffness * stretch * stretch;
}

static double SpringLinearDF(const MbsElemData *e, double pi)
{
  if (e->length == 0.0 || pi == 0.0) return 0.5 * e->stiffness;
  return 0.5 * e->stiffness * (1.0 - e->length / sqrt(pi));
}

static double SpringLinearD2F(const MbsElemData *e, double pi)
{
  if (e->length == 0.0 || pi == 0.0) return 0.0;
  return 0.25 * e->stiffness * e->length / (pi * sqrt(pi));
}

/* Secant in closed form: f(pi1) - f(pi0) = k/2 (r1 - r0)(r0 + r1 - 2L) and pi1 - pi0 = (r1 - r0)(r0 + r1), so
     s = k/2 (1 - 2L/(r0 + r1)),  ds/dpi1 = ds/dr1 / (2 r1) = k L / (2 r1 (r0 + r1)^2),
   with no cancellation; at r1 = r0 these are f'(pi0) (bitwise) and f''(pi0)/2. Degenerate cases as above:
   at r0 + r1 = 0 (q0 and q1 both at d = 0) s = k/2; at r1 = 0 ds/dpi1 multiplies Dpi1 = 2 d1^T P = 0 and
   ds/dpi1 Dpi1 = k L / (r0 + r1)^2 (d1/r1)^T P has an undefined direction, so ds/dpi1 := 0 (then ddg is
   s D2pi / 2). s stays exact (finite) whenever r0 + r1 > 0, so dg.(q1 - q0) = V(q1) - V(q0) still holds. */
static void SpringLinearSecant(const MbsElemData *e, double pi0, double pi1, double *s, double *ds_dpi1)
{
  const double k = e->stiffness, L = e->length, r0 = sqrt(pi0), r1 = sqrt(pi1), rsum = r0 + r1;

  *s       = rsum > 0.0 ? 0.5 * k * (1.0 - 2.0 * L / rsum) : 0.5 * k;
  *ds_dpi1 = r1 > 0.0 ? 0.5 * k * L / (r1 * (rsum * rsum)) : 0.0;
}

static const MbsInvariantPotential spring_linear = {SpringLinearF, SpringLinearDF, SpringLinearD2F, SpringLinearSecant};

static double SpringLinearEnergy(const MbsElemData *e, const double *q)
{
  return MbsInvariantEnergy(&spring_linear, e, q);
}

static void SpringLinearGradient(const MbsElemData *e, const double *q, double *dV)
{
  MbsInvariantGradient(&spring_linear, e, q, dV);
}

static void SpringLinearHessian(const MbsElemData *e, const double *q, double *d2V)
{
  MbsInvariantHessian(&spring_linear, e, q, d2V);
}

static void SpringLinearDiscreteGradient(const MbsElemData *e, const double *q0, const double *q1, double *dg,
                                         double *ddg)
{
  MbsInvariantDiscreteGradient(&spring_linear, e, q0, q1, dg, ddg);
}

const MbsElemKernel MbsElemKernelSpringLinear = {
  .name              = "spring_linear",
  .ncon              = 0,
  .energy            = SpringLinearEnergy,
  .gradient          = SpringLinearGradient,
  .hessian           = SpringLinearHessian,
  .discrete_gradient = SpringLinearDiscreteGradient,
};

const MbsElementType MbsElementTypeSpringLinear = {
  .name      = "linear",
  .section   = "springs",
  .title     = "Linear spring",
  .kernel    = &MbsElemKernelSpringLinear,
  .cell_kind = 4,
  .nparams   = 2,
  .params    = {{"stiffness",
                 MBS_ELEM_PARAM_REAL,
                 {offsetof(MbsElemData, stiffness)},
                 MBS_ELEM_RANGE_POSITIVE,
                 MBS_ELEM_REQUIRED,
                 "stiffness in N/m"},
                {"length",
                 MBS_ELEM_PARAM_REAL,
                 {offsetof(MbsElemData, length)},
                 MBS_ELEM_RANGE_NONNEGATIVE,
                 MBS_ELEM_DEFAULT_DISTANCE,
                 "rest length in m"}},
  .complete  = MbsSpringComplete,
};

#include <math.h>

#include "elements/spring_invariant.h"

/* Linear spring V = k/2 (|d| - L)^2 = f(pi), pi = d.d. f' and f'' are singular at pi = 0 unless L = 0. */
static double SpringLinearF(const MbsElemData *e, double pi)
{
  const double stretch = sqrt(pi) - e->length;

  return 0.5 * e->stiffness * stretch * stretch;
}

static double SpringLinearDF(const MbsElemData *e, double pi)
{
  if (e->length == 0.0) return 0.5 * e->stiffness;
  return 0.5 * e->stiffness * (1.0 - e->length / sqrt(pi));
}

static double SpringLinearD2F(const MbsElemData *e, double pi)
{
  if (e->length == 0.0) return 0.0;
  return 0.25 * e->stiffness * e->length / (pi * sqrt(pi));
}

static const MbsInvariantPotential spring_linear = {SpringLinearF, SpringLinearDF, SpringLinearD2F};

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

static void SpringLinearDiscreteGradient(const MbsElemData *e, const double *q0, const double *q1, double *dg, double *ddg)
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

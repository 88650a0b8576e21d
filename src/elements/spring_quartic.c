#include "elements/spring_invariant.h"

/* Quartic spring V = k/2 (|d|^2 - L^2)^2 = f(pi), pi = d.d (the four-particle example, DESIGN 2.5). */
static double SpringQuarticF(const MbsElemData *e, double pi)
{
  const double strain = pi - e->length * e->length;

  return 0.5 * e->stiffness * strain * strain;
}

static double SpringQuarticDF(const MbsElemData *e, double pi)
{
  return e->stiffness * (pi - e->length * e->length);
}

static double SpringQuarticD2F(const MbsElemData *e, double pi)
{
  (void)pi;
  return e->stiffness;
}

/* f is quadratic in pi, so its secant is f' at the midpoint: s = k/2 (pi0 + pi1 - 2 L^2), ds/dpi1 = k/2.
   At pi1 = pi0 this is bitwise f'(pi0) (the factors 2 are exact). */
static void SpringQuarticSecant(const MbsElemData *e, double pi0, double pi1, double *s, double *ds_dpi1)
{
  *s       = 0.5 * e->stiffness * (pi0 + pi1 - 2.0 * (e->length * e->length));
  *ds_dpi1 = 0.5 * e->stiffness;
}

static const MbsInvariantPotential spring_quartic = {SpringQuarticF, SpringQuarticDF, SpringQuarticD2F,
                                                     SpringQuarticSecant};

static double SpringQuarticEnergy(const MbsElemData *e, const double *q)
{
  return MbsInvariantEnergy(&spring_quartic, e, q);
}

static void SpringQuarticGradient(const MbsElemData *e, const double *q, double *dV)
{
  MbsInvariantGradient(&spring_quartic, e, q, dV);
}

static void SpringQuarticHessian(const MbsElemData *e, const double *q, double *d2V)
{
  MbsInvariantHessian(&spring_quartic, e, q, d2V);
}

static void SpringQuarticDiscreteGradient(const MbsElemData *e, const double *q0, const double *q1, double *dg,
                                          double *ddg)
{
  MbsInvariantDiscreteGradient(&spring_quartic, e, q0, q1, dg, ddg);
}

const MbsElemKernel MbsElemKernelSpringQuartic = {
  .name              = "spring_quartic",
  .ncon              = 0,
  .energy            = SpringQuarticEnergy,
  .gradient          = SpringQuarticGradient,
  .hessian           = SpringQuarticHessian,
  .discrete_gradient = SpringQuarticDiscreteGradient,
};

const MbsElementType MbsElementTypeSpringQuartic = {
  .name      = "quartic",
  .section   = "springs",
  .title     = "Quartic spring",
  .kernel    = &MbsElemKernelSpringQuartic,
  .cell_kind = 5,
  .nparams   = 2,
  .params    = {{"stiffness",
                 MBS_ELEM_PARAM_REAL,
                 {offsetof(MbsElemData, stiffness)},
                 MBS_ELEM_RANGE_POSITIVE,
                 MBS_ELEM_REQUIRED,
                 "stiffness in N/m^3"},
                {"length",
                 MBS_ELEM_PARAM_REAL,
                 {offsetof(MbsElemData, length)},
                 MBS_ELEM_RANGE_NONNEGATIVE,
                 MBS_ELEM_DEFAULT_DISTANCE,
                 "rest length in m"}},
  .complete  = MbsSpringComplete,
};

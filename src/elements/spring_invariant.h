/*
  Potentials through the quadratic invariant pi = d.d of the point difference d = x_a(Xa) - x_b(Xb) = c + P q
  (P = [w_0 I, w_1 I, ...], see MbsElemPointDifference): V = f(pi), Dpi = 2 d^T P, D2pi = 2 P^T P (constant).
  A spring file supplies f, f', f'' and, when it has one, the secant of f in closed form, and wires these
  helpers into its kernel (DESIGN 2.2, 2.3). Internal to src/elements.
*/
#ifndef MBS_ELEM_SPRING_INVARIANT_H
#define MBS_ELEM_SPRING_INVARIANT_H

#include <math.h>
#include <string.h>

#include <math.h>
#include <stdio.h>
#include <gglmbs/elements/element.h>

/* secant (may be NULL): the secant s = (f(pi1) - f(pi0)) / (pi1 - pi0), continued by s = f'(pi0) at pi1 = pi0, and
   its slope ds/dpi1 in closed form, accurate to a few ulp for every pi0, pi1 (no difference of f values, no
   branch at pi1 = pi0). A potential without one gets the generic Greenspan/midpoint secant below. */
typedef struct {
  double (*f)(const MbsElemData *e, double pi);
  double (*df)(const MbsElemData *e, double pi);
  double (*d2f)(const MbsElemData *e, double pi);
  void (*secant)(const MbsElemData *e, double pi0, double pi1, double *s, double *ds_dpi1);
} MbsInvariantPotential;

/* Generic secant, the fallback for a potential without a closed-form one: (f(pi1) - f(pi0)) / (pi1 - pi0)
   and ds/dpi1 = (f'(pi1) - s) / (pi1 - pi0) lose eps |f| / |pi1 - pi0| and eps |f| / (pi1 - pi0)^2 to
   cancellation, so below |pi1 - pi0| <= rtol (|pi0| + |pi1|) the midpoint values f'((pi0 + pi1) / 2) and
   f''((pi0 + pi1) / 2) / 2 are taken instead, element by element. Just above the switch ds/dpi1 is still
   only good to eps |f| / (pi1 - pi0)^2, which is O(1) relative near dpi/pi ~ 1e-8 .. 1e-9: a potential
   whose secant has a closed form should supply it. */
#define MBS_INVARIANT_MIDPOINT_RTOL 1e-10

static inline void MbsInvariantSecantGeneric(const MbsInvariantPotential *pot, const MbsElemData *e, double pi0,
                                             double pi1, double *s, double *ds_dpi1)
{
  const double dpi = pi1 - pi0;

  if (fabs(dpi) <= MBS_INVARIANT_MIDPOINT_RTOL * fmax(fabs(pi0) + fabs(pi1), 1e-300)) {
    const double pim = 0.5 * (pi0 + pi1);

    *s       = pot->df(e, pim);
    *ds_dpi1 = 0.5 * pot->d2f(e, pim);
  } else {
    *s       = (pot->f(e, pi1) - pot->f(e, pi0)) / dpi;
    *ds_dpi1 = (pot->df(e, pi1) - *s) / dpi;
  }
}

typedef struct {
  int    nblocks;
  double w[MBS_ELEM_MAX_BLOCKS], c[3];
} MbsInvariantGeometry;

static inline void MbsInvariantGeometrySetUp(const MbsElemData *e, MbsInvariantGeometry *geo)
{
  geo->nblocks = e->nblocks_a + e->nblocks_b;
  MbsElemPointDifference(e, geo->w, geo->c);
}

/* pi(q) and Dpi(q) (Dpi may be NULL) */
static inline double MbsInvariantEval(const MbsInvariantGeometry *geo, const double *q, double *Dpi)
{
  double d[3];

  MbsElemPointDifferenceEval(geo->nblocks, geo->w, geo->c, q, d);
  if (Dpi) {
    for (int j = 0; j < geo->nblocks; j++) {
      for (int k = 0; k < 3; k++) Dpi[3 * j + k] = 2.0 * geo->w[j] * d[k];
    }
  }
  return d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
}

/* A += alpha D2pi, A nq x nq */
static inline void MbsInvariantAddHessian(const MbsInvariantGeometry *geo, double alpha, double *A)
{
  const int nq = 3 * geo->nblocks;

  for (int i = 0; i < geo->nblocks; i++) {
    for (int j = 0; j < geo->nblocks; j++) {
      const double a = 2.0 * alpha * (geo->w[i] * geo->w[j]); /* bitwise symmetric */

      for (int k = 0; k < 3; k++) A[(3 * i + k) * nq + 3 * j + k] += a;
    }
  }
}

static inline double MbsInvariantEnergy(const MbsInvariantPotential *pot, const MbsElemData *e, const double *q)
{
  MbsInvariantGeometry geo;

  MbsInvariantGeometrySetUp(e, &geo);
  return pot->f(e, MbsInvariantEval(&geo, q, NULL));
}

/* DV = f'(pi) Dpi */
static inline void MbsInvariantGradient(const MbsInvariantPotential *pot, const MbsElemData *e, const double *q,
                                        double *dV)
{
  MbsInvariantGeometry geo;
  double               pi, df;

  MbsInvariantGeometrySetUp(e, &geo);
  pi = MbsInvariantEval(&geo, q, dV);
  df = pot->df(e, pi);
  for (int i = 0; i < 3 * geo.nblocks; i++) dV[i] *= df;
}

/* D2V = f''(pi) Dpi Dpi^T + f'(pi) D2pi */
static inline void MbsInvariantHessian(const MbsInvariantPotential *pot, const MbsElemData *e, const double *q,
                                       double *d2V)
{
  MbsInvariantGeometry geo;
  double               Dpi[MBS_ELEM_MAX_NQ], pi, d2f;
  int                  nq;

  MbsInvariantGeometrySetUp(e, &geo);
  nq  = 3 * geo.nblocks;
  pi  = MbsInvariantEval(&geo, q, Dpi);
  d2f = pot->d2f(e, pi);
  for (int i = 0; i < nq; i++) {
    for (int j = 0; j < nq; j++) d2V[i * nq + j] = d2f * (Dpi[i] * Dpi[j]); /* bitwise symmetric */
  }
  MbsInvariantAddHessian(&geo, pot->df(e, pi), d2V);
}

/* Gonzalez discrete gradient DGV = s Dpi(qm), qm = (q0 + q1)/2, with the secant s = (f(pi1) - f(pi0)) / (pi1 - pi0)
   (pot->secant, or the generic one). Since pi is quadratic, Dpi(qm).(q1 - q0) = pi1 - pi0, which gives
   DGV.(q1 - q0) = V(q1) - V(q0) exactly. ddg = d(DGV)/dq1 = Dpi(qm) ds/dq1^T + s D2pi / 2 (may be NULL). */
static inline void MbsInvariantDiscreteGradient(const MbsInvariantPotential *pot, const MbsElemData *e,
                                                const double *q0, const double *q1, double *dg, double *ddg)
{
  MbsInvariantGeometry geo;
  double               qm[MBS_ELEM_MAX_NQ], Dpi1[MBS_ELEM_MAX_NQ], pi0, pi1, s, ds_dpi1;
  int                  nq;

  MbsInvariantGeometrySetUp(e, &geo);
  nq = 3 * geo.nblocks;
  for (int i = 0; i < nq; i++) qm[i] = 0.5 * (q0[i] + q1[i]);
  pi0 = MbsInvariantEval(&geo, q0, NULL);
  pi1 = MbsInvariantEval(&geo, q1, Dpi1);
  (void)MbsInvariantEval(&geo, qm, dg);
  if (pot->secant) {
    pot->secant(e, pi0, pi1, &s, &ds_dpi1);
  } else {
    MbsInvariantSecantGeneric(pot, e, pi0, pi1, &s, &ds_dpi1);
  }
  if (ddg) {
    for (int i = 0; i < nq; i++) {
      for (int j = 0; j < nq; j++) ddg[i * nq + j] = dg[i] * ds_dpi1 * Dpi1[j];
    }
    MbsInvariantAddHessian(&geo, 0.5 * s, ddg);
  }
  for (int i = 0; i < nq; i++) dg[i] *= s;
}

/* The rest length defaults to the initial distance; stiffness > 0, rest length >= 0, both finite. */
static inline int MbsSpringComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                                    size_t len)
{
  if (d->length == MBS_ELEM_UNSET) d->length = MbsElemInitialDistance(a->x, b->x);
  if (!(d->stiffness > 0 && isnormal(d->stiffness))) {
    snprintf(error, len, "Spring: stiffness must be positive and finite, got %g", d->stiffness);
    return 1;
  }
  if (!(d->length >= 0 && (isnormal(d->length) || d->length == 0))) {
    snprintf(error, len, "Spring: rest length must be non-negative and finite, got %g", d->length);
    return 1;
  }
  return 0;
}

#endif

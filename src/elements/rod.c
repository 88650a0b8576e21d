#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gglmbs/elements/element.h>

/* Rod (distance) constraint g = 1/2 (d.d / L^2 - 1), d = x_a(Xa) - x_b(Xb) = c + P q, so
   G = d^T P / L^2 and H = P^T P / L^2 (constant). */
static void RodConstraint(const MbsElemData *e, const double *q, double *g, double *G)
{
  const int    nblocks = e->nblocks_a + e->nblocks_b;
  const double inv_L2  = 1.0 / (e->length * e->length);
  double       w[MBS_ELEM_MAX_BLOCKS], c[3], d[3];

  MbsElemPointDifference(e, w, c);
  MbsElemPointDifferenceEval(nblocks, w, c, q, d);
  g[0] = 0.5 * ((d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) * inv_L2 - 1.0);
  if (!G) return;
  for (int j = 0; j < nblocks; j++) {
    for (int k = 0; k < 3; k++) G[3 * j + k] = w[j] * d[k] * inv_L2;
  }
}

static void RodConstraintHessian(const MbsElemData *e, double *H)
{
  const int    nblocks = e->nblocks_a + e->nblocks_b, nq = 3 * nblocks;
  const double inv_L2 = 1.0 / (e->length * e->length);
  double       w[MBS_ELEM_MAX_BLOCKS], c[3];

  MbsElemPointDifference(e, w, c);
  memset(H, 0, sizeof(double) * nq * nq);
  for (int i = 0; i < nblocks; i++) {
    for (int j = 0; j < nblocks; j++) {
      for (int k = 0; k < 3; k++) H[(3 * i + k) * nq + 3 * j + k] = w[i] * w[j] * inv_L2;
    }
  }
}

/* sum_k mu_k H_k w = mu P^T (P w) / L^2: block i of the result is w_i mu (sum_j w_j w_block_j) / L^2 */
static void RodConstraintHessianMult(const MbsElemData *e, const double *mu, const double *wq, double *out)
{
  const int    nblocks = e->nblocks_a + e->nblocks_b;
  const double s       = mu[0] / (e->length * e->length);
  double       w[MBS_ELEM_MAX_BLOCKS], c[3], Pw[3] = {0, 0, 0};

  MbsElemPointDifference(e, w, c);
  for (int j = 0; j < nblocks; j++) {
    for (int k = 0; k < 3; k++) Pw[k] += w[j] * wq[3 * j + k];
  }
  for (int i = 0; i < nblocks; i++) {
    for (int k = 0; k < 3; k++) out[3 * i + k] = s * w[i] * Pw[k];
  }
}

const MbsElemKernel MbsElemKernelRod = {
  .name                    = "rod",
  .ncon                    = 1,
  .constraint              = RodConstraint,
  .constraint_hessian      = RodConstraintHessian,
  .constraint_hessian_mult = RodConstraintHessianMult,
  .hessian_isotropic       = 1,
};

static int RodComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error, size_t len)
{
  if (d->length == MBS_ELEM_UNSET) d->length = MbsElemInitialDistance(a->x, b->x);
  if (!(d->length > 0 && isnormal(d->length))) {
    snprintf(error, len, "Rod: length must be positive and finite, got %g", d->length);
    return 1;
  }
  return 0;
}

const MbsElementType MbsElementTypeRod = {
  .name      = "rod",
  .section   = "joints",
  .title     = "Rod",
  .kernel    = &MbsElemKernelRod,
  .cell_kind = 2,
  .nparams   = 1,
  .params    = {{"length",
                 MBS_ELEM_PARAM_REAL,
                 {offsetof(MbsElemData, length)},
                 MBS_ELEM_RANGE_POSITIVE,
                 MBS_ELEM_DEFAULT_DISTANCE,
                 "rod length in m"}},
  .complete  = RodComplete,
};

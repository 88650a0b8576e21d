#include <string.h>

#include <gglmbs/elements/element.h>

/* Spherical joint: g = x_a(Xa) - x_b(Xb), linear in q, so H = 0. */
static void SphericalConstraint(const MbsElemData *e, const double *q, double *g, double *G)
{
  const int nblocks = e->nblocks_a + e->nblocks_b, nq = 3 * nblocks;
  double    w[MBS_ELEM_MAX_BLOCKS], c[3];

  MbsElemPointDifference(e, w, c);
  MbsElemPointDifferenceEval(nblocks, w, c, q, g);
  if (!G) return;
  memset(G, 0, sizeof(double) * 3 * nq);
  for (int j = 0; j < nblocks; j++) {
    for (int k = 0; k < 3; k++) G[k * nq + 3 * j + k] = w[j];
  }
}

static void SphericalConstraintHessian(const MbsElemData *e, double *H)
{
  const int nq = MbsElemNq(e);

  memset(H, 0, sizeof(double) * 3 * nq * nq);
}

const MbsElemKernel MbsElemKernelSpherical = {
  .name               = "spherical",
  .ncon               = 3,
  .constraint         = SphericalConstraint,
  .constraint_hessian = SphericalConstraintHessian,
  .linear             = 1,
};

const MbsElementType MbsElementTypeSpherical = {
  .name      = "spherical",
  .section   = "joints",
  .title     = "Spherical joint",
  .kernel    = &MbsElemKernelSpherical,
  .cell_kind = 1,
};

/* A spherical joint to the ground: the ground's point is the fixed world position */
const MbsElementType MbsElementTypeFixedPoint = {
  .name       = "fixed_point",
  .section    = "joints",
  .title      = "Fixed point",
  .kernel     = &MbsElemKernelSpherical,
  .connection = MBS_ELEM_BODY_TO_WORLD,
  .cell_kind  = 1,
};

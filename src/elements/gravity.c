#include <string.h>

#include <gglmbs/elements/kernels.h>

/* Gravity V = -m b . x with x block 0 of body a (particle position or rigid centre of mass phi).
   V is linear, so its exact discrete gradient is DV itself and every second derivative vanishes.
   Ground (no blocks) has no energy to speak of. */
static double GravityEnergy(const MbsElemData *e, const double *q)
{
  if (e->nblocks_a == 0) return 0.0;
  return -e->mass * (e->gravity[0] * q[0] + e->gravity[1] * q[1] + e->gravity[2] * q[2]);
}

static void GravityGradient(const MbsElemData *e, const double *q, double *dV)
{
  (void)q;
  memset(dV, 0, sizeof(double) * MbsElemNq(e));
  if (e->nblocks_a == 0) return;
  for (int k = 0; k < 3; k++) dV[k] = -e->mass * e->gravity[k];
}

static void GravityHessian(const MbsElemData *e, const double *q, double *d2V)
{
  const int nq = MbsElemNq(e);

  (void)q;
  memset(d2V, 0, sizeof(double) * nq * nq);
}

static void GravityDiscreteGradient(const MbsElemData *e, const double *q0, const double *q1, double *dg, double *ddg)
{
  (void)q1;
  GravityGradient(e, q0, dg);
  if (ddg) GravityHessian(e, q0, ddg);
}

const MbsElemKernel MbsElemKernelGravity = {
  .name              = "gravity",
  .ncon              = 0,
  .energy            = GravityEnergy,
  .gradient          = GravityGradient,
  .hessian           = GravityHessian,
  .discrete_gradient = GravityDiscreteGradient,
  .applied           = 1,
  .linear            = 1,
};

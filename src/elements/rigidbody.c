#include <string.h>

#include <gglmbs/elements/kernels.h>

/* Internal constraints of the director rigid body (seed 004 eq. 103), q = (phi, d1, d2, d3):
   rows 1/2 (d1.d1 - 1), 1/2 (d2.d2 - 1), 1/2 (d3.d3 - 1), d1.d2, d1.d3, d2.d3. */
#define RIGID_NCON 6
#define RIGID_NQ   12

/* Director blocks (1..3) paired by each row; the first three rows pair a director with itself. */
static const int rigid_pair[RIGID_NCON][2] = {{1, 1}, {2, 2}, {3, 3}, {1, 2}, {1, 3}, {2, 3}};

static void RigidBodyConstraint(const MbsElemData *e, const double *q, double *g, double *G)
{
  (void)e;
  for (int k = 0; k < RIGID_NCON; k++) {
    const double *di = &q[3 * rigid_pair[k][0]], *dj = &q[3 * rigid_pair[k][1]];
    const double  dot = di[0] * dj[0] + di[1] * dj[1] + di[2] * dj[2];

    g[k] = k < 3 ? 0.5 * (dot - 1.0) : dot;
  }
  if (!G) return;
  memset(G, 0, sizeof(double) * RIGID_NCON * RIGID_NQ);
  for (int k = 0; k < RIGID_NCON; k++) {
    const int i = rigid_pair[k][0], j = rigid_pair[k][1];

    /* for i == j both assignments write the same d_i, which is the derivative of 1/2 d_i.d_i */
    for (int l = 0; l < 3; l++) {
      G[k * RIGID_NQ + 3 * i + l] = q[3 * j + l];
      G[k * RIGID_NQ + 3 * j + l] = q[3 * i + l];
    }
  }
}

static void RigidBodyConstraintHessian(const MbsElemData *e, double *H)
{
  (void)e;
  memset(H, 0, sizeof(double) * RIGID_NCON * RIGID_NQ * RIGID_NQ);
  for (int k = 0; k < RIGID_NCON; k++) {
    const int i = rigid_pair[k][0], j = rigid_pair[k][1];

    for (int l = 0; l < 3; l++) {
      H[(k * RIGID_NQ + 3 * i + l) * RIGID_NQ + 3 * j + l] = 1.0;
      H[(k * RIGID_NQ + 3 * j + l) * RIGID_NQ + 3 * i + l] = 1.0;
    }
  }
}

/* sum_k mu_k H_k w: row (i, j) pairs block d_i with w_dj and d_j with w_di; (i, i) gives w_di once */
static void RigidBodyConstraintHessianMult(const MbsElemData *e, const double *mu, const double *w, double *out)
{
  (void)e;
  memset(out, 0, sizeof(double) * RIGID_NQ);
  for (int k = 0; k < RIGID_NCON; k++) {
    const int i = rigid_pair[k][0], j = rigid_pair[k][1];

    for (int l = 0; l < 3; l++) {
      out[3 * i + l] += mu[k] * w[3 * j + l];
      if (i != j) out[3 * j + l] += mu[k] * w[3 * i + l];
    }
  }
}

const MbsElemKernel MbsElemKernelRigidBody = {
  .name                    = "rigid_body",
  .ncon                    = RIGID_NCON,
  .constraint              = RigidBodyConstraint,
  .constraint_hessian      = RigidBodyConstraintHessian,
  .constraint_hessian_mult = RigidBodyConstraintHessianMult,
  .hessian_isotropic       = 1,
};

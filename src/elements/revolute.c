#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gglmbs/elements/element.h>
#include <gglmbs/elements/vec3.h>

/* Revolute joint: the three spherical rows x_a(Xa) - x_b(Xb), then n_a . b_k (k = 0, 1) with the
   axis n_a = axis_a[i] d_i^a and b_k = perp_b[k][i] d_i^b for a rigid body, or the constant world vectors
   axis_a, perp_b[k] for ground. The last two rows are bilinear in (d^a, d^b), so H is constant.
   Only rigid bodies (4 blocks) carry directors; any other body is treated as ground here (the model
   never joins a particle with a revolute). */
#define REVOLUTE_NCON 5

static int IsRigid(int nblocks)
{
  return nblocks == 4;
}

/* Material vector sum_i coef[i] d_i of a rigid body whose blocks start at q, or coef itself for ground. */
static void DirectorVector(int rigid, const double coef[3], const double *q, double v[3])
{
  if (!rigid) {
    for (int l = 0; l < 3; l++) v[l] = coef[l];
    return;
  }
  for (int l = 0; l < 3; l++) v[l] = coef[0] * q[3 + l] + coef[1] * q[6 + l] + coef[2] * q[9 + l];
}

static void RevoluteConstraint(const MbsElemData *e, const double *q, double *g, double *G)
{
  const int nblocks = e->nblocks_a + e->nblocks_b, nq = 3 * nblocks, offset_b = 3 * e->nblocks_a;
  const int rigid_a = IsRigid(e->nblocks_a), rigid_b = IsRigid(e->nblocks_b);
  double    w[MBS_ELEM_MAX_BLOCKS], c[3], n_a[3], b[2][3];

  MbsElemPointDifference(e, w, c);
  MbsElemPointDifferenceEval(nblocks, w, c, q, g);
  DirectorVector(rigid_a, e->axis_a, q, n_a);
  for (int k = 0; k < 2; k++) {
    DirectorVector(rigid_b, e->perp_b[k], q + offset_b, b[k]);
    g[3 + k] = n_a[0] * b[k][0] + n_a[1] * b[k][1] + n_a[2] * b[k][2];
  }
  if (!G) return;
  memset(G, 0, sizeof(double) * REVOLUTE_NCON * nq);
  for (int j = 0; j < nblocks; j++) {
    for (int l = 0; l < 3; l++) G[l * nq + 3 * j + l] = w[j];
  }
  for (int k = 0; k < 2; k++) {
    double *row = &G[(3 + k) * nq];

    for (int i = 0; i < 3; i++) {
      for (int l = 0; l < 3; l++) {
        if (rigid_a) row[3 * (1 + i) + l] = e->axis_a[i] * b[k][l];
        if (rigid_b) row[offset_b + 3 * (1 + i) + l] = e->perp_b[k][i] * n_a[l];
      }
    }
  }
}

static void RevoluteConstraintHessian(const MbsElemData *e, double *H)
{
  const int nq = MbsElemNq(e), offset_b = 3 * e->nblocks_a;

  memset(H, 0, sizeof(double) * REVOLUTE_NCON * nq * nq);
  if (!IsRigid(e->nblocks_a) || !IsRigid(e->nblocks_b)) return;
  for (int k = 0; k < 2; k++) {
    double *Hk = &H[(3 + k) * nq * nq];

    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 3; j++) {
        const double coef = e->axis_a[i] * e->perp_b[k][j];
        const int    ra = 3 * (1 + i), rb = offset_b + 3 * (1 + j);

        for (int l = 0; l < 3; l++) {
          Hk[(ra + l) * nq + rb + l] = coef;
          Hk[(rb + l) * nq + ra + l] = coef;
        }
      }
    }
  }
}

/* sum_k mu_k H_k w: only the rows n_a . b_k between two rigid bodies have a Hessian; block d_i^a gets
   axis_a[i] sum_j perp_b[k][j] w(d_j^b), block d_j^b gets perp_b[k][j] sum_i axis_a[i] w(d_i^a). */
static void RevoluteConstraintHessianMult(const MbsElemData *e, const double *mu, const double *w, double *out)
{
  const int nq = MbsElemNq(e), offset_b = 3 * e->nblocks_a;
  double    Nw[3];

  memset(out, 0, sizeof(double) * nq);
  if (!IsRigid(e->nblocks_a) || !IsRigid(e->nblocks_b)) return;
  DirectorVector(1, e->axis_a, w, Nw);
  for (int k = 0; k < 2; k++) {
    double Bw[3];

    DirectorVector(1, e->perp_b[k], w + offset_b, Bw);
    for (int i = 0; i < 3; i++) {
      for (int l = 0; l < 3; l++) {
        out[3 * (1 + i) + l] += mu[3 + k] * e->axis_a[i] * Bw[l];
        out[offset_b + 3 * (1 + i) + l] += mu[3 + k] * e->perp_b[k][i] * Nw[l];
      }
    }
  }
}

const MbsElemKernel MbsElemKernelRevolute = {
  .name                    = "revolute",
  .ncon                    = REVOLUTE_NCON,
  .constraint              = RevoluteConstraint,
  .constraint_hessian      = RevoluteConstraintHessian,
  .constraint_hessian_mult = RevoluteConstraintHessianMult,
  .hessian_isotropic       = 1,
};

static int Normalize(double v[3], const char what[], char *error, size_t len)
{
  const double n = MbsVec3Norm(v);

  if (!(n > 0 && isnormal(n))) {
    snprintf(error, len, "Revolute joint: axis of body %s must be a non-zero finite vector", what);
    return 1;
  }
  for (int i = 0; i < 3; i++) v[i] /= n;
  return 0;
}

/* Unit axes; b1 orthogonal to b's axis, from the coordinate direction least aligned with it, b2 = axis x b1. */
static int RevoluteComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                            size_t len)
{
  const double *nb   = d->axis_b;
  double        t[3] = {0, 0, 0}, b1[3], b2[3], n;
  int           k    = 0;

  (void)a, (void)b;
  if (Normalize(d->axis_a, "a", error, len) || Normalize(d->axis_b, "b", error, len)) return 1;
  for (int i = 1; i < 3; i++)
    if (fabs(nb[i]) < fabs(nb[k])) k = i;
  t[k] = 1.0;
  MbsVec3Cross(nb, t, b1);
  n = MbsVec3Norm(b1);
  for (int i = 0; i < 3; i++) b1[i] /= n;
  MbsVec3Cross(nb, b1, b2);
  for (int i = 0; i < 3; i++) {
    d->perp_b[0][i] = b1[i];
    d->perp_b[1][i] = b2[i];
  }
  return 0;
}

const MbsElementType MbsElementTypeRevolute = {
  .name              = "revolute",
  .section           = "joints",
  .title             = "Revolute joint",
  .kernel            = &MbsElemKernelRevolute,
  .needs_orientation = MBS_ELEM_ORIENT_BOTH,
  .cell_kind         = 3,
  .nparams           = 1,
  .params            = {{"axes",
                         MBS_ELEM_PARAM_DIRECTION_PAIR,
                         {offsetof(MbsElemData, axis_a), offsetof(MbsElemData, axis_b)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "hinge axis in each body's frame"}},
  .complete          = RevoluteComplete,
};

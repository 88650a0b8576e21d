#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <gglmbs/elements/vec3.h>
#include "quadrow.h"

/*
  Velocity constraints of a rigid body a on the ground (docs/nonholonomic.md): rows A(q) v = 0, linear in the
  velocities. A material point X of a moves with v_X = phi' + sum_j X_j d_j'; the body's coordinates are the blocks
  phi (0) and d_1, d_2, d_3 (1 to 3), so A's rows are made of 3-vector blocks and are affine in q: dA is constant.
*/

/* Knife edge (skate, sleigh runner): the contact point Xa has no velocity across the blade, n_a . v_X = 0 with
   n_a = sum_i N_i d_i and N = axis_a, in a's frame. A = [n_a, X_1 n_a, X_2 n_a, X_3 n_a]. */
static void KnifeEdgeVelocityConstraint(const MbsElemData *e, const double *q, double *A, double *dA)
{
  const int     nq = 12;
  const double *N = e->axis_a, *X = e->Xa;
  double        n[3];

  for (int l = 0; l < 3; l++) n[l] = N[0] * q[3 + l] + N[1] * q[6 + l] + N[2] * q[9 + l];
  for (int l = 0; l < 3; l++) {
    A[l] = n[l];
    for (int j = 0; j < 3; j++) A[3 * (1 + j) + l] = X[j] * n[l];
  }
  if (!dA) return;
  memset(dA, 0, sizeof(double) * nq * nq);
  for (int b = 0; b < 4; b++) /* the block of A multiplying phi' (b = 0) or d_b' */
    for (int i = 0; i < 3; i++)
      for (int l = 0; l < 3; l++) dA[(3 * b + l) * nq + 3 * (1 + i) + l] = (b ? X[b - 1] : 1.0) * N[i];
}

const MbsElemKernel MbsElemKernelKnifeEdge = {
  .name = "knife_edge", .nvcon = 1, .velocity_constraint = KnifeEdgeVelocityConstraint};

static int KnifeEdgeComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                             size_t len)
{
  (void)a, (void)b;
  return MbsElemUnitAxis(d->axis_a, "Knife edge", "the direction across the blade", error, len);
}

const MbsElementType MbsElementTypeKnifeEdge = {
  .name              = "knife_edge",
  .section           = "joints",
  .title             = "Knife edge",
  .kernel            = &MbsElemKernelKnifeEdge,
  .connection        = MBS_ELEM_ONE_BODY,
  .needs_orientation = MBS_ELEM_ORIENT_A,
  .nparams           = 1,
  .params            = {{"normal",
                         MBS_ELEM_PARAM_DIRECTION,
                         {offsetof(MbsElemData, axis_a)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "direction across the blade, in the body frame: the contact point has no velocity along it"}},
  .complete          = KnifeEdgeComplete,
};

/*
  Rolling without slipping of a round body on a fixed plane with unit normal n (a ball, or an upright wheel or disk;
  docs/nonholonomic.md). The centre c = phi + X_j d_j (the point Xa) stays at its initial height over the plane,
  n . (c - c0) = 0 (one holonomic row, linear in q), and the material point at the contact, c - R n, has no velocity
  along the plane's tangents t_m (m = 1, 2):

    t_m . (c' + omega x (-R n)) = t_m . (phi' + X_j d_j' - R (n . d_j) d_j') = 0,

  since omega x v = sum_j (v . d_j) d_j' for orthonormal directors. A_m = [t_m, (X_j - R n . d_j) t_m]. The normal
  component of the contact velocity is the rate of the height row. frame_b holds t_1, t_2, n (world), length R and
  load[0] the initial height n . c0.
*/
static void RollingConstraint(const MbsElemData *e, const double *q, double *g, double *G)
{
  const double *n = e->frame_b[2];

  g[0] = -e->load[0];
  for (int l = 0; l < 3; l++) g[0] += n[l] * (q[l] + e->Xa[0] * q[3 + l] + e->Xa[1] * q[6 + l] + e->Xa[2] * q[9 + l]);
  if (!G) return;
  for (int l = 0; l < 3; l++) {
    G[l] = n[l];
    for (int j = 0; j < 3; j++) G[3 * (1 + j) + l] = e->Xa[j] * n[l];
  }
}

static void RollingConstraintHessian(const MbsElemData *e, double *H)
{
  (void)e;
  memset(H, 0, sizeof(double) * 12 * 12);
}

static void RollingVelocityConstraint(const MbsElemData *e, const double *q, double *A, double *dA)
{
  const int     nq = 12;
  const double *n = e->frame_b[2], R = e->length;

  for (int m = 0; m < 2; m++) {
    const double *t = e->frame_b[m];
    for (int l = 0; l < 3; l++) A[m * nq + l] = t[l];
    for (int j = 0; j < 3; j++) {
      const double s = e->Xa[j] - R * MbsVec3Dot(n, &q[3 * (1 + j)]);
      for (int l = 0; l < 3; l++) A[m * nq + 3 * (1 + j) + l] = s * t[l];
    }
  }
  if (!dA) return;
  memset(dA, 0, sizeof(double) * 2 * nq * nq);
  for (int m = 0; m < 2; m++)
    for (int j = 0; j < 3; j++)
      for (int l = 0; l < 3; l++)
        for (int k = 0; k < 3; k++)
          dA[(m * nq + 3 * (1 + j) + l) * nq + 3 * (1 + j) + k] = -R * n[k] * e->frame_b[m][l];
}

const MbsElemKernel MbsElemKernelRolling = {.name                = "rolling",
                                            .ncon                = 1,
                                            .constraint          = RollingConstraint,
                                            .constraint_hessian  = RollingConstraintHessian,
                                            .linear              = 1,
                                            .nvcon               = 2,
                                            .velocity_constraint = RollingVelocityConstraint};

static int RollingComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                           size_t len)
{
  double E[3][3];

  (void)b;
  if (MbsElemUnitAxis(d->axis_b, "Rolling", "the plane's normal", error, len)) return 1;
  if (!(d->length > 0 && isfinite(d->length))) {
    snprintf(error, len, "Rolling: radius must be positive and finite, got %g", d->length);
    return 1;
  }
  MbsElemFrameFromAxis(d->axis_b, E);
  memcpy(d->frame_b, E, sizeof(E));
  d->load[0] = MbsVec3Dot(E[2], a->x);
  return 0;
}

const MbsElementType MbsElementTypeRolling = {
  .name              = "rolling",
  .section           = "joints",
  .title             = "Rolling",
  .kernel            = &MbsElemKernelRolling,
  .connection        = MBS_ELEM_ONE_BODY,
  .needs_orientation = MBS_ELEM_ORIENT_A,
  .nparams           = 2,
  .params            = {{"radius",
                         MBS_ELEM_PARAM_REAL,
                         {offsetof(MbsElemData, length)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "distance in m from the centre (the point) to the contact"},
                        {"normal",
                         MBS_ELEM_PARAM_DIRECTION,
                         {offsetof(MbsElemData, axis_b)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "normal of the plane rolled on, world frame, pointing to the body"}},
  .complete          = RollingComplete,
};

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <gglmbs/elements/element.h>
#include "jointaxis.h"
#include "quadrow.h" /* MbsElemUnitAxis() */

/* Loads (docs/loads.md): force elements that depend on time, not on velocity. */

/* A force F = load(t) at the material point Xa of body a: F on a particle; F on a rigid body's centre and Xa_i F on
   its director d_i (x = phi + X_i d_i, so the virtual work F . dx is theirs). Independent of q and v. */
static void PointLoadForce(const MbsElemData *e, const double *qm, const double *vm, double t, double *f, double *Jq,
                           double *Jv)
{
  const int    nq = 3 * e->nblocks_a;
  const double s  = MbsTimeFunctionEval(&e->time, t);

  (void)qm, (void)vm;
  for (int j = 0; j < e->nblocks_a; j++)
    for (int l = 0; l < 3; l++) f[3 * j + l] = (j == 0 ? 1.0 : e->Xa[j - 1]) * s * e->load[l];
  if (Jq) memset(Jq, 0, sizeof(double) * nq * nq);
  if (Jv) memset(Jv, 0, sizeof(double) * nq * nq);
}

/* A torque T = load(t) on the rigid body a: 1/2 T x d_i on director d_i, whose virtual work is T . dtheta for
   orthonormal directors (d_i x (T x d_i) summed over i is 2 T). Linear in the directors: d f_i / d d_i = [T/2]x. */
static void TorqueLoadForce(const MbsElemData *e, const double *qm, const double *vm, double t, double *f, double *Jq,
                            double *Jv)
{
  const int    nq = 3 * e->nblocks_a;
  const double s = 0.5 * MbsTimeFunctionEval(&e->time, t), T[3] = {s * e->load[0], s * e->load[1], s * e->load[2]};

  (void)vm;
  memset(f, 0, sizeof(double) * nq);
  if (Jq) memset(Jq, 0, sizeof(double) * nq * nq);
  if (Jv) memset(Jv, 0, sizeof(double) * nq * nq);
  if (e->nblocks_a != 4) return;
  for (int i = 0; i < 3; i++) {
    const double *d  = &qm[3 * (1 + i)];
    double       *fi = &f[3 * (1 + i)];
    fi[0]            = T[1] * d[2] - T[2] * d[1];
    fi[1]            = T[2] * d[0] - T[0] * d[2];
    fi[2]            = T[0] * d[1] - T[1] * d[0];
    if (Jq) {
      double *J     = &Jq[3 * (1 + i) * nq + 3 * (1 + i)];
      J[0 * nq + 1] = -T[2], J[0 * nq + 2] = T[1];
      J[1 * nq + 0] = T[2], J[1 * nq + 2] = -T[0];
      J[2 * nq + 0] = -T[1], J[2 * nq + 1] = T[0];
    }
  }
}

const MbsElemKernel MbsElemKernelPointLoad  = {.name = "point_load", .force = PointLoadForce, .applied = 1};
const MbsElemKernel MbsElemKernelTorqueLoad = {.name = "torque_load", .force = TorqueLoadForce, .applied = 1};

const MbsElementType MbsElementTypePointLoad = {
  .name       = "force",
  .section    = "loads",
  .title      = "Force",
  .kernel     = &MbsElemKernelPointLoad,
  .connection = MBS_ELEM_ONE_BODY,
  .nparams    = 2,
  .params     = {{"force",
                  MBS_ELEM_PARAM_VECTOR,
                  {offsetof(MbsElemData, load)},
                  MBS_ELEM_RANGE_POSITIVE,
                  MBS_ELEM_REQUIRED,
                  "force in N, world frame"},
                 {"time",
                  MBS_ELEM_PARAM_TIME_FUNCTION,
                  {offsetof(MbsElemData, time)},
                  MBS_ELEM_RANGE_POSITIVE,
                  MBS_ELEM_DEFAULT_BY_TYPE,
                  "factor of the force over time"}},
};

const MbsElementType MbsElementTypeTorqueLoad = {
  .name              = "torque",
  .section           = "loads",
  .title             = "Torque",
  .kernel            = &MbsElemKernelTorqueLoad,
  .connection        = MBS_ELEM_ONE_BODY,
  .needs_orientation = MBS_ELEM_ORIENT_A,
  .nparams           = 2,
  .params            = {{"torque",
                         MBS_ELEM_PARAM_VECTOR,
                         {offsetof(MbsElemData, load)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "torque in N m, world frame"},
                        {"time",
                         MBS_ELEM_PARAM_TIME_FUNCTION,
                         {offsetof(MbsElemData, time)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_DEFAULT_BY_TYPE,
                         "factor of the torque over time"}},
};

/* A torque tau(t) about a joint axis between two bodies (docs/loads.md): tau n on b and -tau n on a, with
   n = axis_a_k d_k^a the axis carried by a (the constant axis_a if a is the ground), at the step's midpoint. On b's
   directors 1/2 tau n x d_i^b, on a's -1/2 tau n x d_i^a (the map G below, times tau). Derivatives, [v]x w = v x w:
     d f_i^b / d d_j^b = 1/2 tau [n]x delta_ij            d f_i^b / d d_k^a = -1/2 tau axis_a_k [d_i^b]x
     d f_i^a / d d_j^a = -1/2 tau ([n]x delta_ij - axis_a_j [d_i^a]x) */
static void CrossMatrixAdd(double *J, int nq, int row, int col, double s, const double v[3])
{
  J[(row + 0) * nq + col + 1] -= s * v[2];
  J[(row + 0) * nq + col + 2] += s * v[1];
  J[(row + 1) * nq + col + 0] += s * v[2];
  J[(row + 1) * nq + col + 2] -= s * v[0];
  J[(row + 2) * nq + col + 0] -= s * v[1];
  J[(row + 2) * nq + col + 1] += s * v[0];
}

/* The generalized force G of a unit torque about the axis n carried by a, on b, and its opposite on a; dG = dG/dq
   (nq x nq, may be NULL). G . v is the relative angular velocity about n, n . (omega_b - omega_a), of directors moving
   with v (omega = 1/2 sum_i d_i x d_i'). */
void MbsElemAxisOfA(const MbsElemData *e, const double *q, double n[3])
{
  for (int l = 0; l < 3; l++)
    n[l] =
      e->nblocks_a == 4 ? e->axis_a[0] * q[3 + l] + e->axis_a[1] * q[6 + l] + e->axis_a[2] * q[9 + l] : e->axis_a[l];
}

void MbsElemJointAxisMap(const MbsElemData *e, const double *qm, double *G, double *dG)
{
  const int nq = 3 * (e->nblocks_a + e->nblocks_b), ob = 3 * e->nblocks_a;
  const int rigid_a = e->nblocks_a == 4, rigid_b = e->nblocks_b == 4;
  double    n[3];

  memset(G, 0, sizeof(double) * nq);
  if (dG) memset(dG, 0, sizeof(double) * nq * nq);
  MbsElemAxisOfA(e, qm, n);
  for (int side = 0; side < 2; side++) {
    const int    rigid = side ? rigid_b : rigid_a, off = side ? ob : 0;
    const double sg = side ? 0.5 : -0.5;
    if (!rigid) continue;
    for (int i = 0; i < 3; i++) {
      const double *d  = &qm[off + 3 * (1 + i)];
      double       *gi = &G[off + 3 * (1 + i)];
      gi[0] += sg * (n[1] * d[2] - n[2] * d[1]);
      gi[1] += sg * (n[2] * d[0] - n[0] * d[2]);
      gi[2] += sg * (n[0] * d[1] - n[1] * d[0]);
      if (!dG) continue;
      CrossMatrixAdd(dG, nq, off + 3 * (1 + i), off + 3 * (1 + i), sg, n); /* through d_i itself */
      if (rigid_a)                                                         /* through n, carried by a */
        for (int k = 0; k < 3; k++) CrossMatrixAdd(dG, nq, off + 3 * (1 + i), 3 * (1 + k), -sg * e->axis_a[k], d);
    }
  }
}

static void JointTorqueForce(const MbsElemData *e, const double *qm, const double *vm, double t, double *f, double *Jq,
                             double *Jv)
{
  const int    nq  = 3 * (e->nblocks_a + e->nblocks_b);
  const double tau = MbsTimeFunctionEval(&e->time, t);

  (void)vm;
  MbsElemJointAxisMap(e, qm, f, Jq);
  for (int r = 0; r < nq; r++) f[r] *= tau;
  if (Jq)
    for (int r = 0; r < nq * nq; r++) Jq[r] *= tau;
  if (Jv) memset(Jv, 0, sizeof(double) * nq * nq);
}

const MbsElemKernel MbsElemKernelJointTorque = {.name = "joint_torque", .force = JointTorqueForce, .applied = 1};

static int JointTorqueComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                               size_t len)
{
  (void)a, (void)b;
  return MbsElemUnitAxis(d->axis_a, "Joint torque", "the axis", error, len);
}

const MbsElementType MbsElementTypeJointTorque = {
  .name              = "joint_torque",
  .section           = "loads",
  .title             = "Joint torque",
  .kernel            = &MbsElemKernelJointTorque,
  .needs_orientation = MBS_ELEM_ORIENT_BOTH,
  .nparams           = 2,
  .params            = {MBS_ELEM_JOINT_AXIS_PARAM,
                        {"torque",
                         MBS_ELEM_PARAM_TIME_FUNCTION,
                         {offsetof(MbsElemData, time)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "torque about the axis in N m, on b (on a: its opposite)"}},
  .complete          = JointTorqueComplete,
};

/* A force f(t) along an axis n carried by a (the constant axis_a on the ground), between the points Xa of a and Xb
   of b (docs/loads.md): f n on b's point and -f n on a's, at the step's midpoint; the drive of a prismatic or
   cylindrical joint. With d = x_a(Xa) - x_b(Xb) = c + sum_j w_j Q_j (MbsElemPointDifference()), the generalized
   force is f_j = -w_j f n, its power f n . (v_b - v_a); through n = axis_a_k d_k^a, d f_j / d d_k^a = -w_j f axis_a_k
   I. */
static void JointForceForce(const MbsElemData *e, const double *qm, const double *vm, double t, double *f, double *Jq,
                            double *Jv)
{
  const int    nb = e->nblocks_a + e->nblocks_b, nq = 3 * nb, rigid_a = e->nblocks_a == 4;
  const double s = MbsTimeFunctionEval(&e->time, t);
  double       w[MBS_ELEM_MAX_BLOCKS], c[3], n[3];

  (void)vm;
  MbsElemPointDifference(e, w, c);
  MbsElemAxisOfA(e, qm, n);
  for (int j = 0; j < nb; j++)
    for (int l = 0; l < 3; l++) f[3 * j + l] = -w[j] * s * n[l];
  if (Jq) {
    memset(Jq, 0, sizeof(double) * nq * nq);
    if (rigid_a)
      for (int j = 0; j < nb; j++)
        for (int k = 0; k < 3; k++)
          for (int l = 0; l < 3; l++) Jq[(3 * j + l) * nq + 3 * (1 + k) + l] = -w[j] * s * e->axis_a[k];
  }
  if (Jv) memset(Jv, 0, sizeof(double) * nq * nq);
}

const MbsElemKernel MbsElemKernelJointForce = {.name = "joint_force", .force = JointForceForce, .applied = 1};

static int JointForceComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                              size_t len)
{
  (void)a, (void)b;
  return MbsElemUnitAxis(d->axis_a, "Joint force", "the axis", error, len);
}

const MbsElementType MbsElementTypeJointForce = {
  .name              = "joint_force",
  .section           = "loads",
  .title             = "Joint force",
  .kernel            = &MbsElemKernelJointForce,
  .needs_orientation = MBS_ELEM_ORIENT_A,
  .nparams           = 2,
  .params            = {MBS_ELEM_JOINT_AXIS_PARAM,
                        {"force",
                         MBS_ELEM_PARAM_TIME_FUNCTION,
                         {offsetof(MbsElemData, time)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "force along the axis in N, on b's point (on a's: its opposite)"}},
  .complete          = JointForceComplete,
};

#include <math.h>
#include <stddef.h>
#include <string.h>

#include <gglmbs/elements/element.h>

/* Loads (docs/loads.md): force elements that depend on time, not on velocity. */

double MbsTimeFunctionEval(const MbsTimeFunction *f, double t)
{
  switch (f->kind) {
    case MBS_TIME_RAMP:
    case MBS_TIME_SMOOTH_STEP: {
      double s = (t - f->p[0]) / (f->p[1] - f->p[0]);
      s        = s < 0 ? 0 : s > 1 ? 1 : s;
      if (f->kind == MBS_TIME_SMOOTH_STEP) s = s * s * s * (10.0 + s * (-15.0 + 6.0 * s));
      return f->p[2] + (f->p[3] - f->p[2]) * s;
    }
    case MBS_TIME_HARMONIC: return f->p[3] + f->p[0] * sin(2.0 * 3.14159265358979323846 * f->p[1] * t + f->p[2]);
    default: return f->p[0];
  }
}

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

const MbsElemKernel MbsElemKernelPointLoad  = {.name = "point_load", .force = PointLoadForce};
const MbsElemKernel MbsElemKernelTorqueLoad = {.name = "torque_load", .force = TorqueLoadForce};

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

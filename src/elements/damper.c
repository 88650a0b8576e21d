#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <gglmbs/elements/element.h>
#include <gglmbs/elements/vec3.h>
#include "jointaxis.h"
#include "quadrow.h" /* MbsElemUnitAxis() */

/* Axial damper between two points (docs/dampers.md). With d = x_a(Xa) - x_b(Xb) = c + sum_j w_j Q_j at the step's
   midpoint, n = d/|d|, the axial velocity u = n . d' (d' = sum_j w_j V_j from the mean velocity V) and
   phi(u) = |u|^(e-1) u, the force on a is -c phi(u) n and on b its opposite: f_j = -c phi(u) w_j n. Its power
   f . V = -c |u|^(e+1) <= 0. Derivatives, blocks (j, k), P = I - n n^T, r = |d|:
     df_j/dV_k = -c w_j w_k phi'(u) n n^T
     df_j/dQ_k = -c w_j w_k (phi'(u) n (P d')^T + phi(u) P) / r
   Two coinciding points (r = 0) have no axis: no force there. */
static void DamperForce(const MbsElemData *e, const double *qm, const double *vm, double t, double *f, double *Jq,
                        double *Jv)
{
  const int nblocks = e->nblocks_a + e->nblocks_b, nq = 3 * nblocks;
  double w[MBS_ELEM_MAX_BLOCKS], c[3], d[3], dv[3] = {0, 0, 0}, n[3], r, u, au, phi, dphi, Pdv[3], Bq[3][3], Bv[3][3];

  (void)t;
  MbsElemPointDifference(e, w, c);
  MbsElemPointDifferenceEval(nblocks, w, c, qm, d);
  for (int j = 0; j < nblocks; j++)
    for (int l = 0; l < 3; l++) dv[l] += w[j] * vm[3 * j + l];
  r = MbsVec3Norm(d);
  memset(f, 0, sizeof(double) * nq);
  if (Jq) memset(Jq, 0, sizeof(double) * nq * nq);
  if (Jv) memset(Jv, 0, sizeof(double) * nq * nq);
  if (!(r > 0)) return;
  for (int l = 0; l < 3; l++) n[l] = d[l] / r;
  u    = MbsVec3Dot(n, dv);
  au   = fabs(u);
  phi  = e->exponent == 1.0 ? u : pow(au, e->exponent - 1.0) * u;
  dphi = e->exponent == 1.0 ? 1.0 : e->exponent * pow(au, e->exponent - 1.0);
  for (int j = 0; j < nblocks; j++)
    for (int l = 0; l < 3; l++) f[3 * j + l] = -e->damping * phi * w[j] * n[l];
  if (!Jq && !Jv) return;
  for (int l = 0; l < 3; l++) Pdv[l] = dv[l] - u * n[l];
  for (int l = 0; l < 3; l++)
    for (int m = 0; m < 3; m++) {
      Bv[l][m] = -e->damping * dphi * n[l] * n[m];
      Bq[l][m] = -e->damping * (dphi * n[l] * Pdv[m] + phi * ((l == m) - n[l] * n[m])) / r;
    }
  for (int j = 0; j < nblocks; j++)
    for (int k = 0; k < nblocks; k++)
      for (int l = 0; l < 3; l++)
        for (int m = 0; m < 3; m++) {
          const int at = (3 * j + l) * nq + 3 * k + m;
          if (Jq) Jq[at] = w[j] * w[k] * Bq[l][m];
          if (Jv) Jv[at] = w[j] * w[k] * Bv[l][m];
        }
}

const MbsElemKernel MbsElemKernelDamper = {
  .name        = "damper",
  .force       = DamperForce,
  .dissipative = 1,
};

static int DamperComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error, size_t len)
{
  (void)a, (void)b;
  if (d->exponent == MBS_ELEM_UNSET) d->exponent = 1.0;
  if (!(d->damping > 0 && isnormal(d->damping))) {
    snprintf(error, len, "Damper: damping must be positive and finite, got %g", d->damping);
    return 1;
  }
  if (!(d->exponent >= 1 && d->exponent <= 10)) {
    snprintf(error, len, "Damper: exponent must be in [1, 10], got %g", d->exponent);
    return 1;
  }
  return 0;
}

const MbsElementType MbsElementTypeDamper = {
  .name      = "damper",
  .section   = "springs",
  .title     = "Damper",
  .kernel    = &MbsElemKernelDamper,
  .cell_kind = 12,
  .nparams   = 2,
  .params    = {{"damping",
                 MBS_ELEM_PARAM_REAL,
                 {offsetof(MbsElemData, damping)},
                 MBS_ELEM_RANGE_POSITIVE,
                 MBS_ELEM_REQUIRED,
                 "damping coefficient c, in N s/m for exponent 1 (N (s/m)^exponent)"},
                {"exponent",
                 MBS_ELEM_PARAM_REAL,
                 {offsetof(MbsElemData, exponent)},
                 MBS_ELEM_RANGE_POSITIVE,
                 MBS_ELEM_DEFAULT_BY_TYPE,
                 "exponent of the axial velocity in the damping force, 1 (linear) to 10"}},
  .complete  = DamperComplete,
};

/* Torsional damper at a joint (docs/dampers.md): the torque -c u about the axis n carried by a, on b (its opposite on
   a), u = n . (omega_b - omega_a) the relative angular velocity about the axis from the step's midpoint directors and
   mean velocity. With G the map of a unit torque (jointaxis.h), u = G . v and f = -c u G, so f . v = -c u^2 <= 0;
   df/dv = -c G G^T, df/dq = -c (G (dG^T v)^T + u dG). */
static void TorsionalDamperForce(const MbsElemData *e, const double *qm, const double *vm, double t, double *f,
                                 double *Jq, double *Jv)
{
  const int nq = MbsElemNq(e);
  double    G[MBS_ELEM_MAX_NQ], dG[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ], du[MBS_ELEM_MAX_NQ], u = 0;

  (void)t;
  MbsElemJointAxisMap(e, qm, G, Jq ? dG : NULL);
  for (int r = 0; r < nq; r++) u += G[r] * vm[r];
  for (int r = 0; r < nq; r++) f[r] = -e->damping * u * G[r];
  if (Jv)
    for (int r = 0; r < nq; r++)
      for (int c = 0; c < nq; c++) Jv[r * nq + c] = -e->damping * G[r] * G[c];
  if (!Jq) return;
  for (int c = 0; c < nq; c++) {
    du[c] = 0;
    for (int r = 0; r < nq; r++) du[c] += vm[r] * dG[r * nq + c];
  }
  for (int r = 0; r < nq; r++)
    for (int c = 0; c < nq; c++) Jq[r * nq + c] = -e->damping * (G[r] * du[c] + u * dG[r * nq + c]);
}

const MbsElemKernel MbsElemKernelTorsionalDamper = {
  .name        = "torsional_damper",
  .force       = TorsionalDamperForce,
  .dissipative = 1,
};

static int TorsionalDamperComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                                   size_t len)
{
  (void)a, (void)b;
  if (MbsElemUnitAxis(d->axis_a, "Torsional damper", "the axis", error, len)) return 1;
  if (!(d->damping > 0 && isnormal(d->damping))) {
    snprintf(error, len, "Torsional damper: damping must be positive and finite, got %g", d->damping);
    return 1;
  }
  return 0;
}

const MbsElementType MbsElementTypeTorsionalDamper = {
  .name              = "torsional_damper",
  .section           = "springs",
  .title             = "Torsional damper",
  .kernel            = &MbsElemKernelTorsionalDamper,
  .needs_orientation = MBS_ELEM_ORIENT_BOTH,
  .nparams           = 2,
  .params            = {MBS_ELEM_JOINT_AXIS_PARAM,
                        {"damping",
                         MBS_ELEM_PARAM_REAL,
                         {offsetof(MbsElemData, damping)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "torsional damping c in N m s"}},
  .complete          = TorsionalDamperComplete,
};

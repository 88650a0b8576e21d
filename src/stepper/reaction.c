/* Joint reactions: the force and torque a constraint element transmits, from its multipliers (docs/output.md) */
#include <gglmbs/elements/vec3.h>
#include "stepper/stepperimpl.h"

/*
  The reaction of the owned constraint element at local position k: the generalized force -G_e(q_w)^T lambda_e of the
  last step (q_w where the scheme's momentum balance applies it, MbsStepperGetConstraintForceWeight()), on body b: its
  translational block F, and for a rigid b the torque of the director blocks, sum_i d_i x f_i about the centre of
  mass, moved to b's joint point x_P = phi + X_i d_i: M = sum_i d_i x f_i - (x_P - phi) x F. With b the ground, the
  opposite of the reaction on a at a's point (what a exerts on the ground). lam: the local multipliers; qloc: the
  ghosted local state the step reached. Zero before the first step and for elements without constraint rows.
*/
PetscErrorCode MbsStepperReactionLocal_Private(MbsStepper st, PetscInt k, const PetscScalar *lam,
                                               const PetscScalar *qloc, PetscReal F[3], PetscReal M[3])
{
  MbsModel          model = st->model;
  const MbsElement *el    = &model->elems[model->elem_local[k]];
  const int         nq = MbsElemNq(&el->data), nc = el->kernel->ncon, on_b = el->body[1] >= 0;
  const int         off = on_b ? 3 * el->data.nblocks_a : 0, nblocks = on_b ? el->data.nblocks_b : el->data.nblocks_a;
  const double     *X = on_b ? el->data.Xb : el->data.Xa;
  PetscReal         q0[MBS_ELEM_MAX_NQ], q1[MBS_ELEM_MAX_NQ], qw[MBS_ELEM_MAX_NQ], g[MBS_ELEM_MAX_CON],
    G[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ], f[MBS_ELEM_MAX_NQ], w;

  PetscFunctionBegin;
  for (int l = 0; l < 3; l++) F[l] = M[l] = 0;
  if (!nc || !lam || !st->started) PetscFunctionReturn(0);
  PetscCall(MbsStepperGetConstraintForceWeight(st, &w));
  MbsElementGather(model, el, st->q0, q0);
  MbsElementGather(model, el, qloc, q1);
  for (int j = 0; j < nq; j++) qw[j] = (1.0 - w) * q0[j] + w * q1[j];
  el->kernel->constraint(&el->data, qw, g, G);
  for (int j = 0; j < nq; j++) {
    f[j] = 0;
    for (int r = 0; r < nc; r++) f[j] -= G[r * nq + j] * PetscRealPart(lam[model->elem_c[k] + r]);
  }
  for (int l = 0; l < 3; l++) F[l] = f[off + l];
  if (nblocks == 4) {
    const PetscReal *d = qw + off + 3, *fd = f + off + 3;
    PetscReal        r[3], c[3];

    for (int i = 0; i < 3; i++) {
      MbsVec3Cross(d + 3 * i, fd + 3 * i, c);
      for (int l = 0; l < 3; l++) M[l] += c[l];
    }
    for (int l = 0; l < 3; l++) r[l] = X[0] * d[l] + X[1] * d[3 + l] + X[2] * d[6 + l];
    MbsVec3Cross(r, F, c);
    for (int l = 0; l < 3; l++) M[l] -= c[l];
  }
  if (!on_b)
    for (int l = 0; l < 3; l++) F[l] = -F[l], M[l] = -M[l];
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetReaction - The reaction force and torque of a joint or drive over the last step: what body a exerts on
  body b through the element, at b's joint point, in the world frame (docs/output.md)

  Collective

  Input Parameters:
+ st - the stepper
- elem - the element (its index in the model, as MbsModelAddJoint() returned it)

  Output Parameters:
+ F - the force on b, N
- M - the torque on b about its joint point x_b(Xb), N m (zero for a particle b)

  Notes:
  The reaction is -G_e^T lambda_e on b's coordinates, from the multipliers of the last step, with G_e where the
  scheme's momentum balance evaluates the constraint forces (MbsStepperGetConstraintForceWeight()). When b is the
  ground, the result is what a exerts on the ground: minus the reaction on a, at a's point. Before the first step, and
  for an element without constraint rows, both are zero. The velocity-level multipliers of the GGL schemes are not
  part of it: they vanish with the constraint drift.

  Level: intermediate

.seealso: `MbsStepperGetConstraintForceWeight()`, `MbsStepperSetReactions()`
@*/
PetscErrorCode MbsStepperGetReaction(MbsStepper st, PetscInt elem, PetscReal F[3], PetscReal M[3])
{
  MbsModel           model;
  PetscReal          fm[6] = {0, 0, 0, 0, 0, 0}, sum[6];
  const PetscScalar *x     = NULL;
  PetscScalar       *qloc  = NULL;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  model = st->model;
  PetscCheck(elem >= 0 && elem < model->nelems, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "Element %" PetscInt_FMT " does not exist (the model has %" PetscInt_FMT ")", elem, model->nelems);
  if (st->started && st->field_lambda >= 0) { /* the scatter is collective: every rank takes part */
    PetscCall(PetscMalloc1(model->nq_ghosted, &qloc));
    PetscCall(MbsModelCoordinatesToLocal(model, st->q, qloc));
    PetscCall(VecGetArrayRead(st->X, &x));
  }
  for (PetscInt k = 0; k < model->nelem_local; k++)
    if (model->elem_local[k] == elem)
      PetscCall(
        MbsStepperReactionLocal_Private(st, k, x ? x + st->sys->foff[st->field_lambda] : NULL, qloc, fm, fm + 3));
  if (x) PetscCall(VecRestoreArrayRead(st->X, &x));
  PetscCall(PetscFree(qloc));
  PetscCall(MPIU_Allreduce(fm, sum, 6, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)st)));
  for (int l = 0; l < 3; l++) F[l] = sum[l], M[l] = sum[3 + l];
  PetscFunctionReturn(0);
}

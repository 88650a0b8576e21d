/* Joint reactions: the force and torque a constraint element transmits, from its multipliers (docs/output.md) */
#include <gglmbs/elements/vec3.h>
#include "stepper/stepperimpl.h"

PetscErrorCode MbsStepperGetReactionTerms_Private(MbsStepper st, PetscInt *n, MbsReactionTerm terms[])
{
  PetscReal w;

  PetscFunctionBegin;
  *n = 0;
  if (st->ops->reaction_terms) {
    PetscCall(st->ops->reaction_terms(st, n, terms));
    PetscFunctionReturn(0);
  }
  PetscCall(MbsStepperGetConstraintForceWeight(st, &w));
  if (st->field_lambda >= 0) terms[(*n)++] = (MbsReactionTerm){st->field_lambda, w, 1.0};
  if (st->field_nu >= 0) terms[(*n)++] = (MbsReactionTerm){st->field_nu, w, 1.0};
  PetscFunctionReturn(0);
}

PetscErrorCode MbsStepperElementConstraintForce_Private(MbsStepper st, PetscInt k, PetscInt n,
                                                        const MbsReactionTerm terms[], const PetscScalar *x,
                                                        const PetscScalar *qloc, PetscReal f[], PetscReal qw[])
{
  MbsModel          model = st->model;
  const MbsElement *el    = MbsModelLocalElement(model, k);
  const int         nq = MbsElemNq(&el->data), nc = el->kernel->ncon, nv = el->kernel->nvcon;
  PetscReal         q0[MBS_ELEM_MAX_NQ], q1[MBS_ELEM_MAX_NQ];

  PetscFunctionBegin;
  for (int j = 0; j < nq; j++) f[j] = 0;
  MbsElementGather(model, el, st->q0, q0);
  MbsElementGather(model, el, qloc, q1);
  if (qw)
    for (int j = 0; j < nq; j++) qw[j] = n ? (1.0 - terms[0].weight) * q0[j] + terms[0].weight * q1[j] : q1[j];
  if (!st->started || !x) PetscFunctionReturn(0);
  for (PetscInt t = 0; t < n; t++) {
    const MbsFieldKind kind = st->sys->kind[terms[t].field];
    const PetscScalar *y    = x + st->sys->foff[terms[t].field];
    const PetscReal    w = terms[t].weight, c = terms[t].coef;
    PetscReal          qt[MBS_ELEM_MAX_NQ], g[MBS_ELEM_MAX_CON],
      G[MBS_ELEM_MAX_VCON * MBS_ELEM_MAX_NQ + MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ];
    for (int j = 0; j < nq; j++) qt[j] = (1.0 - w) * q0[j] + w * q1[j];
    if (kind == MBS_FIELD_CONSTRAINT && nc) {
      el->kernel->constraint(&el->data, qt, g, G);
      for (int j = 0; j < nq; j++)
        for (int r = 0; r < nc; r++) f[j] += c * G[r * nq + j] * PetscRealPart(y[model->elem_c[k] + r]);
    } else if (kind == MBS_FIELD_VCONSTRAINT && nv) {
      el->kernel->velocity_constraint(&el->data, qt, G, NULL);
      for (int j = 0; j < nq; j++)
        for (int r = 0; r < nv; r++) f[j] += c * G[r * nq + j] * PetscRealPart(y[model->elem_v[k] + r]);
    }
  }
  PetscFunctionReturn(0);
}

/*
  The reaction of the owned constraint element at local position k: the generalized force of its constraint forces
  over the last step (MbsStepperElementConstraintForce_Private(), with the scheme's terms: -G_e(q_w)^T lambda_e, and
  -A_e(q_w)^T nu_e for velocity constraints, docs/nonholonomic.md), on body b: its translational block F, and for a
  rigid b the torque of the director blocks, sum_i d_i x f_i about the centre of mass, moved to b's joint point
  x_P = phi + X_i d_i: M = sum_i d_i x f_i - (x_P - phi) x F, with the directors at the first term's weight. With b
  the ground, the opposite of the reaction on a at a's point (what a exerts on the ground). Zero before the first step
  and for elements without constraint rows.
*/
PetscErrorCode MbsStepperReactionLocal_Private(MbsStepper st, PetscInt k, PetscInt n, const MbsReactionTerm terms[],
                                               const PetscScalar *x, const PetscScalar *qloc, PetscReal F[3],
                                               PetscReal M[3])
{
  MbsModel          model = st->model;
  const MbsElement *el    = MbsModelLocalElement(model, k);
  const int         nq = MbsElemNq(&el->data), on_b = el->body[1] >= 0;
  const int         off = on_b ? 3 * el->data.nblocks_a : 0, nblocks = on_b ? el->data.nblocks_b : el->data.nblocks_a;
  const double     *X = on_b ? el->data.Xb : el->data.Xa;
  PetscReal         qw[MBS_ELEM_MAX_NQ], f[MBS_ELEM_MAX_NQ];

  PetscFunctionBegin;
  for (int l = 0; l < 3; l++) F[l] = M[l] = 0;
  if (!st->started || !x || !(el->kernel->ncon || el->kernel->nvcon)) PetscFunctionReturn(0);
  PetscCall(MbsStepperElementConstraintForce_Private(st, k, n, terms, x, qloc, f, qw));
  for (int j = 0; j < nq; j++) f[j] = -f[j];
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
  scheme's momentum balance evaluates the constraint forces (MbsStepperGetConstraintForceWeight()); a velocity
  constraint's (a knife edge's lateral force, a rolling body's friction) adds -A_e^T nu_e (docs/nonholonomic.md). When b
is the ground, the result is what a exerts on the ground: minus the reaction on a, at a's point. Before the first step,
and for an element without constraint rows, both are zero. The velocity-level multipliers of the GGL schemes are not
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
  MbsReactionTerm    terms[MBS_MAX_REACTION_TERMS];
  PetscInt           n;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  model = st->model;
  PetscCheck(elem >= 0 && elem < model->nelems, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "Element %" PetscInt_FMT " does not exist (the model has %" PetscInt_FMT ")", elem, model->nelems);
  PetscCall(MbsStepperGetReactionTerms_Private(st, &n, terms));
  if (st->started && n) { /* the scatter is collective: on every rank */
    PetscCall(PetscMalloc1(model->nq_ghosted, &qloc));
    PetscCall(MbsModelCoordinatesToLocal(model, st->q, qloc));
    PetscCall(VecGetArrayRead(st->X, &x));
  }
  for (PetscInt k = 0; k < model->nelem_local; k++)
    if (model->elem_local[k] == elem) PetscCall(MbsStepperReactionLocal_Private(st, k, n, terms, x, qloc, fm, fm + 3));
  if (x) PetscCall(VecRestoreArrayRead(st->X, &x));
  PetscCall(PetscFree(qloc));
  PetscCall(MPIU_Allreduce(fm, sum, 6, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)st)));
  for (int l = 0; l < 3; l++) F[l] = sum[l], M[l] = sum[3 + l];
  PetscFunctionReturn(0);
}

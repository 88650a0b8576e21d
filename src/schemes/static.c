/*
  Static equilibrium (docs/statics.md): each step solves for the configuration in which the loads, gravity, the force
  elements (at rest) and the constraint forces balance, at the step's end time t1. Unknowns (q1, p1, lambda):

    R_q   = DV(q1) + G(q1)^T lambda - F(q1, 0, t1) - F_ext
    R_p   = p1                                  (the state is at rest)
    R_lam = g(q1, t1)

  Time is the loads' parameter (pseudo-time): the time functions of the loads and drives say how they grow, so a run
  of several steps applies them in load steps, each starting from the last equilibrium, and -mbs_adapt halves a load
  step whose Newton iteration fails. The model's load factor (MbsModelSetLoadFactor()) scales the applied loads on top:
  MbsStepperSolveEquilibrium() ramps it at a fixed time. Dampers exert nothing at rest; a host's external force
  (MbsStepperSetExternalForce()) is a load like the others. Velocity constraints (knife edges, rolling) hold at rest
  and exert nothing: they do not restrict the configuration, so a ball on an incline has no equilibrium.
*/
#include "stepper/stepperimpl.h"

enum { ST_Q, ST_P, ST_LAM };

static PetscErrorCode MbsSchemeSetUp_Static(MbsStepper st)
{
  const MbsFieldKind kinds[] = {MBS_FIELD_COORDINATE, MBS_FIELD_COORDINATE, MBS_FIELD_CONSTRAINT};
  const char *const  names[] = {"q", "p", "lambda"};

  PetscFunctionBegin;
  PetscCall(MbsStepperSetFields(st, 3, kinds, names));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeResidual_Static(MbsStepper st, const PetscScalar *x, PetscScalar *f)
{
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  const PetscReal    t1    = st->tstep[1];
  const PetscScalar *q1 = x + sys->loff[ST_Q], *p1 = x + sys->loff[ST_P], *lam = x + sys->loff[ST_LAM];
  PetscScalar       *fq = f + sys->loff[ST_Q], *fp = f + sys->loff[ST_P], *flam = f + sys->loff[ST_LAM];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < model->nq_local; i++) fp[i] = p1[i];
  PetscCall(MbsModelSetConstraintTime(model, t1, t1));
  PetscCall(MbsOpGradientAdd(model, q1, 1.0, fq));
  PetscCall(MbsOpGTMultAdd(model, q1, lam, 1.0, MBS_SCALE_NONE, fq));
  if (st->has_forces) PetscCall(MbsOpForceAdd(model, q1, q1, st->hstep, t1, -1.0, fq));
  if (st->force) {
    const PetscScalar *fe;
    PetscCall(VecGetArrayRead(st->Fext, &fe));
    for (PetscInt i = 0; i < model->nq_local; i++) fq[i] -= model->load_factor * fe[i];
    PetscCall(VecRestoreArrayRead(st->Fext, &fe));
  }
  PetscCall(MbsOpConstraintAdd(model, q1, 1.0, flam));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeJacobian_Static(MbsStepper st, const PetscScalar *x)
{
  const MbsSystem    sys = st->sys;
  const PetscReal    t1  = st->tstep[1];
  const PetscScalar *q1 = x + sys->loff[ST_Q], *lam = x + sys->loff[ST_LAM];

  PetscFunctionBegin;
  PetscCall(MbsModelSetConstraintTime(st->model, t1, t1));
  PetscCall(MbsJacAddIdentity(sys, ST_Q, ST_Q, 0.0, MBS_SCALE_NONE)); /* the diagonal in the pattern: a rigid body's
                                                                          phi block may have no other entry there */
  PetscCall(MbsJacAddPotentialHessian(sys, ST_Q, ST_Q, q1, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddT(sys, ST_Q, ST_Q, lam, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddGT(sys, ST_Q, ST_LAM, q1, 1.0, MBS_SCALE_NONE));
  if (st->has_forces)
    PetscCall(MbsJacAddForceWeights(sys, ST_Q, ST_Q, q1, q1, st->hstep, t1, -1.0, 0.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddIdentity(sys, ST_P, ST_P, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddG(sys, ST_LAM, ST_Q, q1, 1.0, MBS_SCALE_NONE));
  PetscFunctionReturn(0);
}

/* the constraint forces G(q1)^T lambda act at the equilibrium */
static PetscErrorCode MbsSchemeConstraintForceWeight_Static(MbsStepper st, PetscReal *w)
{
  PetscFunctionBegin;
  *w = 1.0;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeCreate_Static(MbsStepper st)
{
  PetscFunctionBegin;
  st->ops->setup                   = MbsSchemeSetUp_Static;
  st->ops->residual                = MbsSchemeResidual_Static;
  st->ops->jacobian                = MbsSchemeJacobian_Static;
  st->ops->constraint_force_weight = MbsSchemeConstraintForceWeight_Static;
  st->ops->own_forces              = PETSC_TRUE; /* at rest, at q1 and t1 */
  st->ops->velocity_constraints    = PETSC_TRUE; /* at rest they hold and exert nothing (docs/nonholonomic.md) */
  st->ops->quasistatic             = PETSC_TRUE;
  /* a first Newton update of a large rotation leaves the directors off their constraints, with a residual many times
     the first (the beam's axial stiffness): no divergence test (-snes_divergence_tolerance overrides) */
  PetscCall(SNESSetDivergenceTolerance(st->snes, -1.0));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSchemeRegister_Static(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, MBSSCHEMESTATIC, MbsSchemeCreate_Static));
  PetscFunctionReturn(0);
}

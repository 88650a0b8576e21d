#include "schemes/vi.h"

PetscErrorCode MbsVISetUp(MbsStepper st)
{
  const MbsFieldKind kinds[] = {MBS_FIELD_COORDINATE, MBS_FIELD_COORDINATE, MBS_FIELD_COORDINATE, MBS_FIELD_CONSTRAINT,
                                MBS_FIELD_CONSTRAINT};
  const char *const  names[] = {"q", "p", "v", "lambda", "gamma"};

  PetscFunctionBegin;
  PetscCall(MbsStepperSetFields(st, 5, kinds, names));
  PetscFunctionReturn(0);
}

void MbsVIInterpolate(MbsStepper st, PetscReal theta, const PetscScalar *q1, PetscScalar *qt)
{
  for (PetscInt i = 0; i < st->model->nq_ghosted; i++) qt[i] = (1.0 - theta) * st->q0[i] + theta * q1[i];
}

PetscErrorCode MbsVISetConstraintTime(MbsStepper st, PetscReal theta)
{
  const PetscReal t = st->tstep[0] + theta * st->hstep;

  PetscFunctionBegin;
  PetscCall(MbsModelSetConstraintTime(st->model, t, t));
  PetscFunctionReturn(0);
}

/* max |G(q_theta) v| of the last solved step (collective) */
static PetscErrorCode MbsVIVelocityResidual(MbsStepper st, PetscReal *Gv)
{
  const PetscReal    theta = ((MbsVI *)st->data)->theta;
  MbsSystem          sys   = st->sys;
  const PetscScalar *x;
  PetscReal          gmax;
  PetscScalar       *qt = st->work[2];

  PetscFunctionBegin;
  PetscCall(MbsSystemGlobalToLocal(sys, st->X, sys->Xloc));
  PetscCall(VecGetArrayRead(sys->Xloc, &x));
  MbsVIInterpolate(st, theta, x + sys->loff[VI_Q], qt);
  PetscCall(MbsVISetConstraintTime(st, theta)); /* the step just solved: drives at t_theta, and dg/dt there */
  PetscCall(MbsOpConstraintMax(st->model, qt, x + sys->loff[VI_V], &gmax, Gv));
  PetscCall(VecRestoreArrayRead(sys->Xloc, &x));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsVIDestroy(MbsStepper st)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(st->data));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsVICreateParametrized(MbsStepper st)
{
  MbsVI *vi;

  PetscFunctionBegin;
  PetscCall(PetscNew(&vi));
  st->data                   = vi;
  st->ops->velocity_residual = MbsVIVelocityResidual;
  st->ops->destroy           = MbsVIDestroy;
  PetscFunctionReturn(0);
}

/*
  EM-G: the energy-momentum scheme of Gonzalez (1999), primary constraints only. Unknowns
  (q1, p1, lambda); qm = (q0+q1)/2, pm = (p0+p1)/2:

    R_q   = q1 - q0 - h M^-1 pm
    R_p   = p1 - p0 + h DGV(q0,q1) + h G(qm)^T lambda
    R_lam = g(q1)

  Conserves energy and the symmetric momentum maps and satisfies g(q_n) = 0; the velocity
  constraints G(q_n) M^-1 p_n = 0 are not enforced.
*/
#include "stepper/stepperimpl.h"

enum { EMG_Q, EMG_P, EMG_LAM };

static PetscErrorCode MbsSchemeSetUp_EMG(MbsStepper st)
{
  const MbsFieldKind kinds[] = {MBS_FIELD_COORDINATE, MBS_FIELD_COORDINATE, MBS_FIELD_CONSTRAINT};
  const char *const  names[] = {"q", "p", "lambda"};

  PetscFunctionBegin;
  PetscCall(MbsStepperSetFields(st, 3, kinds, names));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeResidual_EMG(MbsStepper st, const PetscScalar *x, PetscScalar *f)
{
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  const PetscReal    h     = st->hstep;
  const PetscScalar *q1 = x + sys->loff[EMG_Q], *p1 = x + sys->loff[EMG_P], *lam = x + sys->loff[EMG_LAM];
  PetscScalar       *fq = f + sys->loff[EMG_Q], *fp = f + sys->loff[EMG_P], *flam = f + sys->loff[EMG_LAM];
  PetscScalar       *qm = st->work[0];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < model->nq_ghosted; i++) qm[i] = 0.5 * (st->q0[i] + q1[i]);
  for (PetscInt i = 0; i < model->nq_local; i++) {
    fq[i] = q1[i] - st->q0[i] - 0.5 * h * model->minv[i] * (st->p0[i] + p1[i]);
    fp[i] = p1[i] - st->p0[i];
  }
  PetscCall(MbsOpDiscreteGradientAdd(model, st->q0, q1, h, fp));
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[0], st->tstep[1])); /* drives: as in EM (em.c) */
  PetscCall(MbsOpGTMultAdd(model, qm, lam, h, MBS_SCALE_NONE, fp));
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[1], st->tstep[1]));
  PetscCall(MbsOpConstraintAdd(model, q1, 1.0, flam));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeJacobian_EMG(MbsStepper st, const PetscScalar *x)
{
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  const PetscReal    h     = st->hstep;
  const PetscScalar *q1 = x + sys->loff[EMG_Q], *lam = x + sys->loff[EMG_LAM];
  PetscScalar       *qm = st->work[0];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < model->nq_ghosted; i++) qm[i] = 0.5 * (st->q0[i] + q1[i]);
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[0], st->tstep[1]));
  PetscCall(MbsJacAddIdentity(sys, EMG_Q, EMG_Q, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddIdentity(sys, EMG_Q, EMG_P, -0.5 * h, MBS_SCALE_MINV_ROW));
  PetscCall(MbsJacAddDiscreteGradient(sys, EMG_P, EMG_Q, st->q0, q1, h));
  PetscCall(MbsJacAddT(sys, EMG_P, EMG_Q, lam, 0.5 * h, MBS_SCALE_NONE));
  PetscCall(MbsJacAddIdentity(sys, EMG_P, EMG_P, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddGT(sys, EMG_P, EMG_LAM, qm, h, MBS_SCALE_NONE));
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[1], st->tstep[1]));
  PetscCall(MbsJacAddG(sys, EMG_LAM, EMG_Q, q1, 1.0, MBS_SCALE_NONE));
  PetscFunctionReturn(0);
}

/* EM-G: G(q_{n+1/2})^T lambda */
static PetscErrorCode MbsSchemeConstraintForceWeight_EMG(MbsStepper st, PetscReal *w)
{
  PetscFunctionBegin;
  *w = 0.5;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeCreate_EMG(MbsStepper st)
{
  PetscFunctionBegin;
  st->ops->setup                   = MbsSchemeSetUp_EMG;
  st->ops->residual                = MbsSchemeResidual_EMG;
  st->ops->schur_amg               = PETSC_TRUE; /* tests/test_solvers.c: LU's trajectory, exact at zero multipliers */
  st->ops->schur_axial             = 0.5;        /* (h/2) lambda g'' against h G^T and G */
  st->ops->jacobian                = MbsSchemeJacobian_EMG;
  st->ops->constraint_force_weight = MbsSchemeConstraintForceWeight_EMG;
  st->ops->conserves_energy        = PETSC_TRUE;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSchemeRegister_EMG(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, MBSSCHEMEEMG, MbsSchemeCreate_EMG));
  PetscFunctionReturn(0);
}

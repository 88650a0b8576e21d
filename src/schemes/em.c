/*
  EM: the GGL energy-momentum scheme (Kinon, Betsch & Schneider 2023, eq. 84) for a constant mass
  matrix, with v = M^-1 p eliminated. Unknowns (q1, p1, lambda, gamma); qm = (q0+q1)/2, pm = (p0+p1)/2:

    R_q   = q1 - q0 - h M^-1 pm - h M^-1 G(qm)^T gamma
    R_p   = p1 - p0 + h DGV(q0,q1) + h G(qm)^T lambda + h T(gamma) M^-1 pm
    R_lam = g(q1)
    R_gam = G(q1) M^-1 p1

  Drives (rheonomic constraints, docs/drives.md): g and G(q1) at t1, R_gam adds dg/dt(q1, t1), and the forces use
  G(qm) with the drives' time coefficients averaged over the step (the q-part of their discrete gradient in (q, t)):
  the energy then changes by exactly the drives' work.

  Constraints are at most quadratic, so G(qm) is their exact discrete gradient; DGV is the Gonzalez
  discrete gradient of the potential. The scheme conserves energy and the symmetric momentum maps and
  satisfies both constraint levels at the nodes.

  Velocity constraints A(q) v = 0 (knife edges, rolling; docs/nonholonomic.md) add a field nu, their reaction
  h A(qm)^T nu to R_p, and the discrete constraint R_nu = A(qm) (q1 - q0)/h: E_{n+1} - E_n then gains exactly
  -nu . A(qm) (q1 - q0), which it sets to zero (docs/nonholonomic.md derives it; imposing A(qm) M^-1 pm instead leaves
  the term -h gamma . G(qm) M^-1 A(qm)^T nu).
*/
#include "stepper/stepperimpl.h"

enum { EM_Q, EM_P, EM_LAM, EM_GAM, EM_NU };

static PetscErrorCode MbsSchemeSetUp_EM(MbsStepper st)
{
  const MbsFieldKind kinds[] = {MBS_FIELD_COORDINATE, MBS_FIELD_COORDINATE, MBS_FIELD_CONSTRAINT, MBS_FIELD_CONSTRAINT,
                                MBS_FIELD_VCONSTRAINT};
  const char *const  names[] = {"q", "p", "lambda", "gamma", "nu"};

  PetscFunctionBegin;
  PetscCall(MbsStepperSetFields(st, st->model->nvcon ? 5 : 4, kinds, names));
  PetscFunctionReturn(0);
}

/* Midpoint configuration and the velocities M^-1 pm, M^-1 p1 on all ghosted coordinates. */
static void MbsEMMidpoint(MbsStepper st, const PetscScalar *q1, const PetscScalar *p1, PetscScalar *qm, PetscScalar *vm,
                          PetscScalar *v1)
{
  const MbsModel   model = st->model;
  const PetscReal *minv  = model->minv;
  for (PetscInt i = 0; i < model->nq_ghosted; i++) {
    qm[i] = 0.5 * (st->q0[i] + q1[i]);
    vm[i] = 0.5 * minv[i] * (st->p0[i] + p1[i]);
    v1[i] = minv[i] * p1[i];
  }
}

static PetscErrorCode MbsSchemeResidual_EM(MbsStepper st, const PetscScalar *x, PetscScalar *f)
{
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  const PetscReal    h     = st->hstep;
  const PetscScalar *q1 = x + sys->loff[EM_Q], *p1 = x + sys->loff[EM_P], *lam = x + sys->loff[EM_LAM],
                    *gam = x + sys->loff[EM_GAM];
  PetscScalar *fq = f + sys->loff[EM_Q], *fp = f + sys->loff[EM_P], *flam = f + sys->loff[EM_LAM],
              *fgam = f + sys->loff[EM_GAM];
  PetscScalar *qm = st->work[0], *vm = st->work[1], *v1 = st->work[2];

  PetscFunctionBegin;
  MbsEMMidpoint(st, q1, p1, qm, vm, v1);
  for (PetscInt i = 0; i < model->nq_local; i++) {
    fq[i] = q1[i] - st->q0[i] - h * vm[i];
    fp[i] = p1[i] - st->p0[i];
  }
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[0], st->tstep[1]));
  PetscCall(MbsOpGTMultAdd2(model, qm, gam, -h, MBS_SCALE_MINV_ROW, fq, lam, h, MBS_SCALE_NONE, fp));
  PetscCall(MbsOpDiscreteGradientAdd(model, st->q0, q1, h, fp));
  PetscCall(MbsOpHessianMultAdd(model, gam, vm, h, fp));
  if (model->nvcon) {
    PetscCall(MbsOpVConstraintTMultAdd(model, qm, x + sys->loff[EM_NU], h, MBS_SCALE_NONE, fp));
    PetscScalar *dq = st->work[3];
    for (PetscInt i = 0; i < model->nq_ghosted; i++) dq[i] = q1[i] - st->q0[i];
    PetscCall(MbsOpVConstraintAdd(model, qm, dq, 1.0 / h, f + sys->loff[EM_NU]));
  }
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[1], st->tstep[1]));
  PetscCall(MbsOpConstraintGMultAdd(model, q1, v1, 1.0, flam, 1.0, fgam));
  PetscCall(MbsOpConstraintRateAdd(model, q1, st->tstep[1], 1.0, fgam));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeJacobian_EM(MbsStepper st, const PetscScalar *x)
{
  const MbsSystem    sys = st->sys;
  const PetscReal    h   = st->hstep;
  const PetscScalar *q1 = x + sys->loff[EM_Q], *p1 = x + sys->loff[EM_P], *lam = x + sys->loff[EM_LAM],
                    *gam = x + sys->loff[EM_GAM];
  PetscScalar *qm = st->work[0], *vm = st->work[1], *v1 = st->work[2];

  PetscFunctionBegin;
  MbsEMMidpoint(st, q1, p1, qm, vm, v1);
  PetscCall(MbsModelSetConstraintTime(st->model, st->tstep[0], st->tstep[1]));
  /* dR_q */
  PetscCall(MbsJacAddIdentity(sys, EM_Q, EM_Q, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddT(sys, EM_Q, EM_Q, gam, -0.5 * h, MBS_SCALE_MINV_ROW));
  PetscCall(MbsJacAddIdentity(sys, EM_Q, EM_P, -0.5 * h, MBS_SCALE_MINV_ROW));
  PetscCall(MbsJacAddGT(sys, EM_Q, EM_GAM, qm, -h, MBS_SCALE_MINV_ROW));
  /* dR_p */
  PetscCall(MbsJacAddDiscreteGradient(sys, EM_P, EM_Q, st->q0, q1, h));
  PetscCall(MbsJacAddT(sys, EM_P, EM_Q, lam, 0.5 * h, MBS_SCALE_NONE));
  PetscCall(MbsJacAddIdentity(sys, EM_P, EM_P, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddT(sys, EM_P, EM_P, gam, 0.5 * h, MBS_SCALE_MINV_COL));
  PetscCall(MbsJacAddGT(sys, EM_P, EM_LAM, qm, h, MBS_SCALE_NONE));
  PetscCall(MbsJacAddHw(sys, EM_P, EM_GAM, vm, h, MBS_SCALE_NONE));
  if (st->model->nvcon) {
    PetscCall(MbsJacAddATmu(sys, EM_P, EM_Q, qm, x + sys->loff[EM_NU], 0.5 * h, MBS_SCALE_NONE));
    PetscCall(MbsJacAddAT(sys, EM_P, EM_NU, qm, h, MBS_SCALE_NONE));
    /* dR_nu */
    PetscScalar *dq = st->work[3];
    for (PetscInt i = 0; i < st->model->nq_ghosted; i++) dq[i] = q1[i] - st->q0[i];
    PetscCall(MbsJacAddA(sys, EM_NU, EM_Q, qm, 1.0 / h, MBS_SCALE_NONE));
    PetscCall(MbsJacAddAw(sys, EM_NU, EM_Q, qm, dq, 0.5 / h, MBS_SCALE_NONE));
  }
  /* dR_lam */
  PetscCall(MbsModelSetConstraintTime(st->model, st->tstep[1], st->tstep[1]));
  PetscCall(MbsJacAddG(sys, EM_LAM, EM_Q, q1, 1.0, MBS_SCALE_NONE));
  /* dR_gam */
  PetscCall(MbsJacAddHwT(sys, EM_GAM, EM_Q, v1, 1.0));
  PetscCall(MbsJacAddConstraintRate(sys, EM_GAM, EM_Q, q1, st->tstep[1], 1.0));
  PetscCall(MbsJacAddG(sys, EM_GAM, EM_P, q1, 1.0, MBS_SCALE_MINV_COL));
  PetscFunctionReturn(0);
}

/* EM: eq. (84), G(q_{n+1/2})^T lambda */
static PetscErrorCode MbsSchemeConstraintForceWeight_EM(MbsStepper st, PetscReal *w)
{
  PetscFunctionBegin;
  *w = 0.5;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeCreate_EM(MbsStepper st)
{
  PetscFunctionBegin;
  st->ops->setup                   = MbsSchemeSetUp_EM;
  st->ops->residual                = MbsSchemeResidual_EM;
  st->ops->schur_amg               = PETSC_TRUE; /* tests/test_solvers.c: LU's trajectory, exact at zero multipliers */
  st->ops->schur_axial             = 0.5;        /* (h/2) lambda g'' against h G^T and G */
  st->ops->wide_mumps              = PETSC_TRUE; /* MbsStepperChooseSolver() */
  st->ops->jacobian                = MbsSchemeJacobian_EM;
  st->ops->constraint_force_weight = MbsSchemeConstraintForceWeight_EM;
  st->ops->conserves_energy        = PETSC_TRUE;
  st->ops->velocity_constraints    = PETSC_TRUE;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSchemeRegister_EM(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, MBSSCHEMEEM, MbsSchemeCreate_EM));
  PetscFunctionReturn(0);
}

/*
  VI-S: the first-order GGL variational integrator (Kinon, Betsch & Schneider 2023, eq. 55), a
  symplectic-Euler-like scheme. Unknowns (q1, p1, v, lambda, gamma); qb = q0 + h v, w1 = M^-1 p1:

    R_q   = q1 - q0 - h v - h M^-1 G(qb)^T gamma
    R_p   = p1 - p0 + h DV(q0) + h G(q0)^T lambda + h T(gamma) w1
    R_v   = v - w1 - h M^-1 T(gamma) w1              (eq. 55c times M^-1)
    R_lam = g(q1)
    R_gam = G(qb) w1

  Symplectic and momentum-map conserving; g(q_n) = 0 at the nodes, the velocity constraints only at
  the intermediate configuration qb. Drives (docs/drives.md): G(q0) at t0; everything at qb or q1 at t1, and
  R_gam adds dg/dt(qb, t1).
*/
#include "schemes/vi.h"

static PetscErrorCode MbsSchemeResidual_VIS(MbsStepper st, const PetscScalar *x, PetscScalar *f)
{
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  const PetscReal    h = st->hstep, *minv = model->minv;
  const PetscScalar *q1 = x + sys->loff[VI_Q], *p1 = x + sys->loff[VI_P], *v = x + sys->loff[VI_V],
                    *lam = x + sys->loff[VI_LAM], *gam = x + sys->loff[VI_GAM];
  PetscScalar *fq = f + sys->loff[VI_Q], *fp = f + sys->loff[VI_P], *fv = f + sys->loff[VI_V],
              *flam = f + sys->loff[VI_LAM], *fgam = f + sys->loff[VI_GAM];
  PetscScalar *qb = st->work[0], *w1 = st->work[1], *tmp = st->work[2];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < model->nq_ghosted; i++) {
    qb[i] = st->q0[i] + h * v[i];
    w1[i] = minv[i] * p1[i];
  }
  for (PetscInt i = 0; i < model->nq_local; i++) {
    fq[i] = q1[i] - st->q0[i] - h * v[i];
    fp[i] = p1[i] - st->p0[i];
    fv[i] = v[i] - w1[i];
  }
  PetscCall(MbsOpGradientAdd(model, st->q0, h, fp));
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[0], st->tstep[0]));
  PetscCall(MbsOpGTMultAdd(model, st->q0, lam, h, MBS_SCALE_NONE, fp));
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[1], st->tstep[1]));
  PetscCall(MbsOpGTMultAdd(model, qb, gam, -h, MBS_SCALE_MINV_ROW, fq));
  PetscCall(PetscArrayzero(tmp, model->nq_ghosted));
  PetscCall(MbsOpHessianMultAdd(model, gam, w1, h, tmp));
  for (PetscInt i = 0; i < model->nq_ghosted; i++) {
    fp[i] += tmp[i];
    fv[i] -= minv[i] * tmp[i];
  }
  PetscCall(MbsOpConstraintAdd(model, q1, 1.0, flam));
  PetscCall(MbsOpGMultAdd(model, qb, w1, 1.0, fgam));
  PetscCall(MbsOpConstraintRateAdd(model, qb, st->tstep[1], 1.0, fgam));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeJacobian_VIS(MbsStepper st, const PetscScalar *x)
{
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  const PetscReal    h     = st->hstep;
  const PetscScalar *p1 = x + sys->loff[VI_P], *v = x + sys->loff[VI_V], *gam = x + sys->loff[VI_GAM];
  PetscScalar       *qb = st->work[0], *w1 = st->work[1];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < model->nq_ghosted; i++) {
    qb[i] = st->q0[i] + h * v[i];
    w1[i] = model->minv[i] * p1[i];
  }
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[0], st->tstep[0]));
  PetscCall(MbsJacAddGT(sys, VI_P, VI_LAM, st->q0, h, MBS_SCALE_NONE));
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[1], st->tstep[1]));
  /* dR_q */
  PetscCall(MbsJacAddIdentity(sys, VI_Q, VI_Q, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddIdentity(sys, VI_Q, VI_V, -h, MBS_SCALE_NONE));
  PetscCall(MbsJacAddT(sys, VI_Q, VI_V, gam, -h * h, MBS_SCALE_MINV_ROW));
  PetscCall(MbsJacAddGT(sys, VI_Q, VI_GAM, qb, -h, MBS_SCALE_MINV_ROW));
  /* dR_p */
  PetscCall(MbsJacAddIdentity(sys, VI_P, VI_P, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddT(sys, VI_P, VI_P, gam, h, MBS_SCALE_MINV_COL));
  PetscCall(MbsJacAddHw(sys, VI_P, VI_GAM, w1, h, MBS_SCALE_NONE));
  /* dR_v */
  PetscCall(MbsJacAddIdentity(sys, VI_V, VI_V, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddIdentity(sys, VI_V, VI_P, -1.0, MBS_SCALE_MINV_ROW));
  PetscCall(MbsJacAddT(sys, VI_V, VI_P, gam, -h, MBS_SCALE_MINV_BOTH));
  PetscCall(MbsJacAddHw(sys, VI_V, VI_GAM, w1, -h, MBS_SCALE_MINV_ROW));
  /* dR_lam */
  PetscCall(MbsJacAddG(sys, VI_LAM, VI_Q, x + sys->loff[VI_Q], 1.0, MBS_SCALE_NONE));
  /* dR_gam */
  PetscCall(MbsJacAddHwT(sys, VI_GAM, VI_V, w1, h));
  PetscCall(MbsJacAddConstraintRate(sys, VI_GAM, VI_V, qb, st->tstep[1], h));
  PetscCall(MbsJacAddG(sys, VI_GAM, VI_P, qb, 1.0, MBS_SCALE_MINV_COL));
  PetscFunctionReturn(0);
}

/* VI-S: eq. (55), G(q_n)^T lambda */
static PetscErrorCode MbsSchemeConstraintForceWeight_VIS(MbsStepper st, PetscReal *w)
{
  PetscFunctionBegin;
  *w = 0.0;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeCreate_VIS(MbsStepper st)
{
  PetscFunctionBegin;
  st->ops->setup                   = MbsVISetUp;
  st->ops->residual                = MbsSchemeResidual_VIS;
  st->ops->schur_amg               = PETSC_TRUE; /* tests/test_solvers.c: LU's trajectory, exact at zero multipliers */
  st->ops->wide_mumps              = PETSC_TRUE; /* MbsStepperChooseSolver() */
  st->ops->jacobian                = MbsSchemeJacobian_VIS;
  st->ops->constraint_force_weight = MbsSchemeConstraintForceWeight_VIS;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSchemeRegister_VIS(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, MBSSCHEMEVIS, MbsSchemeCreate_VIS));
  PetscFunctionReturn(0);
}

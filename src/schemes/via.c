/*
  VI-A(theta): GGL variational integrator with the constraints evaluated at an intermediate
  configuration (Kinon, Betsch & Schneider 2023, eq. 79). Unknowns (q1, p1, v, lambda, gamma);
  qt = (1-theta) q0 + theta q1:

    R_q   = q1 - q0 - h v - h M^-1 G(qt)^T gamma
    R_p   = p1 - p0 + h DV(qt) + h G(qt)^T lambda + h T(gamma) v
    R_v   = v - M^-1 (theta p0 + (1-theta) p1)          (eq. 79c times M^-1)
    R_lam = g(qt)
    R_gam = G(qt) v

  Second order for theta = 1/2 (the default); symplectic and momentum-map conserving. Both constraint
  levels hold at qt, not at the nodes. Drives (docs/drives.md) are evaluated at t_theta = t0 + theta h, and
  R_gam adds their dg/dt(qt, t_theta).
*/
#include "schemes/vi.h"

static PetscErrorCode MbsSchemeSetUp_VIA(MbsStepper st)
{
  MbsVI *vi = (MbsVI *)st->data;

  PetscFunctionBegin;
  PetscCall(MbsStepperGetParameter_Private(st, "theta", &vi->theta));
  PetscCall(MbsVISetUp(st));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeResidual_VIA(MbsStepper st, const PetscScalar *x, PetscScalar *f)
{
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  const PetscReal    h = st->hstep, theta = ((MbsVI *)st->data)->theta, *minv = model->minv;
  const PetscScalar *q1 = x + sys->loff[VI_Q], *p1 = x + sys->loff[VI_P], *v = x + sys->loff[VI_V],
                    *lam = x + sys->loff[VI_LAM], *gam = x + sys->loff[VI_GAM];
  PetscScalar *fq = f + sys->loff[VI_Q], *fp = f + sys->loff[VI_P], *fv = f + sys->loff[VI_V],
              *flam = f + sys->loff[VI_LAM], *fgam = f + sys->loff[VI_GAM];
  PetscScalar *qt = st->work[0];

  PetscFunctionBegin;
  MbsVIInterpolate(st, theta, q1, qt);
  PetscCall(MbsVISetConstraintTime(st, theta));
  for (PetscInt i = 0; i < model->nq_local; i++) {
    fq[i] = q1[i] - st->q0[i] - h * v[i];
    fp[i] = p1[i] - st->p0[i];
    fv[i] = v[i] - minv[i] * (theta * st->p0[i] + (1.0 - theta) * p1[i]);
  }
  PetscCall(MbsOpGTMultAdd2(model, qt, gam, -h, MBS_SCALE_MINV_ROW, fq, lam, h, MBS_SCALE_NONE, fp));
  PetscCall(MbsOpGradientAdd(model, qt, h, fp));
  PetscCall(MbsOpHessianMultAdd(model, gam, v, h, fp));
  PetscCall(MbsOpConstraintGMultAdd(model, qt, v, 1.0, flam, 1.0, fgam));
  PetscCall(MbsOpConstraintRateAdd(model, qt, st->tstep[0] + theta * h, 1.0, fgam));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeJacobian_VIA(MbsStepper st, const PetscScalar *x)
{
  const MbsSystem    sys = st->sys;
  const PetscReal    h = st->hstep, theta = ((MbsVI *)st->data)->theta;
  const PetscScalar *v = x + sys->loff[VI_V], *lam = x + sys->loff[VI_LAM], *gam = x + sys->loff[VI_GAM];
  PetscScalar       *qt = st->work[0];

  PetscFunctionBegin;
  MbsVIInterpolate(st, theta, x + sys->loff[VI_Q], qt);
  PetscCall(MbsVISetConstraintTime(st, theta));
  /* dR_q */
  PetscCall(MbsJacAddIdentity(sys, VI_Q, VI_Q, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddT(sys, VI_Q, VI_Q, gam, -h * theta, MBS_SCALE_MINV_ROW));
  PetscCall(MbsJacAddIdentity(sys, VI_Q, VI_V, -h, MBS_SCALE_NONE));
  PetscCall(MbsJacAddGT(sys, VI_Q, VI_GAM, qt, -h, MBS_SCALE_MINV_ROW));
  /* dR_p */
  PetscCall(MbsJacAddPotentialHessian(sys, VI_P, VI_Q, qt, h * theta, MBS_SCALE_NONE));
  PetscCall(MbsJacAddT(sys, VI_P, VI_Q, lam, h * theta, MBS_SCALE_NONE));
  PetscCall(MbsJacAddIdentity(sys, VI_P, VI_P, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddT(sys, VI_P, VI_V, gam, h, MBS_SCALE_NONE));
  PetscCall(MbsJacAddGT(sys, VI_P, VI_LAM, qt, h, MBS_SCALE_NONE));
  PetscCall(MbsJacAddHw(sys, VI_P, VI_GAM, v, h, MBS_SCALE_NONE));
  /* dR_v */
  PetscCall(MbsJacAddIdentity(sys, VI_V, VI_V, 1.0, MBS_SCALE_NONE));
  if (theta != 1.0) PetscCall(MbsJacAddIdentity(sys, VI_V, VI_P, -(1.0 - theta), MBS_SCALE_MINV_ROW));
  /* dR_lam, dR_gam */
  PetscCall(MbsJacAddG(sys, VI_LAM, VI_Q, qt, theta, MBS_SCALE_NONE));
  PetscCall(MbsJacAddHwT(sys, VI_GAM, VI_Q, v, theta));
  PetscCall(MbsJacAddConstraintRate(sys, VI_GAM, VI_Q, qt, st->tstep[0] + theta * h, theta));
  PetscCall(MbsJacAddG(sys, VI_GAM, VI_V, qt, 1.0, MBS_SCALE_NONE));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeView_VIA(MbsStepper st, PetscViewer viewer)
{
  PetscReal theta;

  PetscFunctionBegin;
  PetscCall(MbsStepperGetParameter_Private(st, "theta", &theta));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  VI-A: theta = %g\n", (double)theta));
  PetscFunctionReturn(0);
}

/* VI-A: eq. (79), G(q_theta)^T lambda */
static PetscErrorCode MbsSchemeConstraintForceWeight_VIA(MbsStepper st, PetscReal *w)
{
  PetscFunctionBegin;
  PetscCall(MbsStepperGetParameter_Private(st, "theta", w));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeCreate_VIA(MbsStepper st)
{
  PetscFunctionBegin;
  PetscCall(MbsVICreateParametrized(st));
  st->ops->setup                   = MbsSchemeSetUp_VIA;
  st->ops->residual                = MbsSchemeResidual_VIA;
  st->ops->schur_amg               = PETSC_TRUE; /* tests/test_solvers.c: LU's trajectory, exact at zero multipliers */
  st->ops->schur_axial             = 1.0; /* (h theta) lambda g''(qt) against h G(qt)^T and theta G(qt), any theta */
  st->ops->jacobian                = MbsSchemeJacobian_VIA;
  st->ops->constraint_force_weight = MbsSchemeConstraintForceWeight_VIA;
  st->ops->view                    = MbsSchemeView_VIA;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSchemeRegister_VIA(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, MBSSCHEMEVIA, MbsSchemeCreate_VIA));
  /* the default is the one of the paper's own computations; the paper's range is (0, 1) (after its eq. 79): at
     theta = 1, R_v fixes v = M^-1 p_n, so g(q_1) = 0 and G(q_1) v = 0 both bind q_1 through gamma alone and lambda is
     left undetermined (the Jacobian is singular) */
  PetscCall(MbsSchemeRegisterParameter(MBSSCHEMEVIA, "theta", 0.5, 0.0, PETSC_TRUE, 1.0, PETSC_TRUE,
                                       "VI-A: q_theta = (1-theta) q_n + theta q_{n+1}"));
  PetscFunctionReturn(0);
}

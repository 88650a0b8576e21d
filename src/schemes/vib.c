/*
  VI-B(Theta, vartheta): GGL variational integrator with trapezoidal evaluation of the configuration
  constraint (Kinon, Betsch & Schneider 2023, eq. 82; (1, 1/2) is eq. 83). Unknowns
  (q1, p1, v, lambda, gamma); qt = (1-Theta) q0 + Theta q1, G0 = G(q0), G1 = G(q1):

    R_q   = q1 - q0 - h v - h M^-1 G(qt)^T gamma
    R_p   = p1 - p0 + h DV(qt) + h ((1-vartheta) G0 + vartheta G1)^T lambda + h T(gamma) v
    R_v   = v - M^-1 (Theta p0 + (1-Theta) p1)
              + h M^-1 (Theta (1-vartheta) G0^T - vartheta (1-Theta) G1^T) lambda     (eq. 82c times M^-1)
    R_lam = g(q1)
    R_gam = G(qt) v

  First order; symplectic and momentum-map conserving; g(q_n) = 0 at the nodes and G(q_theta) v = 0 in
  its own velocity unknown. Drives (docs/drives.md): G0 at t0, G1 and g(q1) at t1, G(qt) at t_Theta = t0 + Theta h,
  and R_gam adds dg/dt(qt, t_Theta).
*/
#include "schemes/vi.h"

static PetscErrorCode MbsSchemeSetUp_VIB(MbsStepper st)
{
  MbsVI *vi = (MbsVI *)st->data;

  PetscFunctionBegin;
  PetscCall(MbsStepperGetParameter_Private(st, "theta", &vi->theta));
  PetscCall(MbsStepperGetParameter_Private(st, "vartheta", &vi->vartheta));
  PetscCall(MbsVISetUp(st));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeResidual_VIB(MbsStepper st, const PetscScalar *x, PetscScalar *f)
{
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  const MbsVI       *vi    = (MbsVI *)st->data;
  const PetscReal    h = st->hstep, Th = vi->theta, vt = vi->vartheta, *minv = model->minv;
  const PetscScalar *q1 = x + sys->loff[VI_Q], *p1 = x + sys->loff[VI_P], *v = x + sys->loff[VI_V],
                    *lam = x + sys->loff[VI_LAM], *gam = x + sys->loff[VI_GAM];
  PetscScalar *fq = f + sys->loff[VI_Q], *fp = f + sys->loff[VI_P], *fv = f + sys->loff[VI_V],
              *flam = f + sys->loff[VI_LAM], *fgam = f + sys->loff[VI_GAM];
  PetscScalar *qt = st->work[0];

  PetscFunctionBegin;
  MbsVIInterpolate(st, Th, q1, qt);
  for (PetscInt i = 0; i < model->nq_local; i++) {
    fq[i] = q1[i] - st->q0[i] - h * v[i];
    fp[i] = p1[i] - st->p0[i];
    fv[i] = v[i] - minv[i] * (Th * st->p0[i] + (1.0 - Th) * p1[i]);
  }
  PetscCall(MbsOpGradientAdd(model, qt, h, fp));
  PetscCall(MbsVISetConstraintTime(st, Th));
  PetscCall(MbsOpGTMultAdd(model, qt, gam, -h, MBS_SCALE_MINV_ROW, fq));
  PetscCall(MbsOpHessianMultAdd(model, gam, v, h, fp));
  PetscCall(MbsOpGMultAdd(model, qt, v, 1.0, fgam));
  PetscCall(MbsOpConstraintRateAdd(model, qt, st->tstep[0] + Th * h, 1.0, fgam));
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[0], st->tstep[0]));
  PetscCall(MbsOpGTMultAdd2(model, st->q0, lam, h * (1.0 - vt), MBS_SCALE_NONE, fp, lam, h * Th * (1.0 - vt),
                            MBS_SCALE_MINV_ROW, fv));
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[1], st->tstep[1]));
  PetscCall(
    MbsOpGTMultAdd2(model, q1, lam, h * vt, MBS_SCALE_NONE, fp, lam, -h * vt * (1.0 - Th), MBS_SCALE_MINV_ROW, fv));
  PetscCall(MbsOpConstraintAdd(model, q1, 1.0, flam));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeJacobian_VIB(MbsStepper st, const PetscScalar *x)
{
  const MbsSystem    sys = st->sys;
  const MbsVI       *vi  = (MbsVI *)st->data;
  const PetscReal    h = st->hstep, Th = vi->theta, vt = vi->vartheta;
  const PetscScalar *q1 = x + sys->loff[VI_Q], *v = x + sys->loff[VI_V], *lam = x + sys->loff[VI_LAM],
                    *gam = x + sys->loff[VI_GAM];
  PetscScalar *qt        = st->work[0];

  PetscFunctionBegin;
  MbsVIInterpolate(st, Th, q1, qt);
  /* terms without constraints */
  PetscCall(MbsJacAddIdentity(sys, VI_Q, VI_Q, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddIdentity(sys, VI_Q, VI_V, -h, MBS_SCALE_NONE));
  if (Th != 0.0) PetscCall(MbsJacAddPotentialHessian(sys, VI_P, VI_Q, qt, h * Th, MBS_SCALE_NONE));
  PetscCall(MbsJacAddIdentity(sys, VI_P, VI_P, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddIdentity(sys, VI_V, VI_V, 1.0, MBS_SCALE_NONE));
  if (Th != 1.0) PetscCall(MbsJacAddIdentity(sys, VI_V, VI_P, -(1.0 - Th), MBS_SCALE_MINV_ROW));
  /* at q_Theta (drives at t_Theta): gamma's terms and R_gam */
  PetscCall(MbsVISetConstraintTime(st, Th));
  if (Th != 0.0) PetscCall(MbsJacAddT(sys, VI_Q, VI_Q, gam, -h * Th, MBS_SCALE_MINV_ROW));
  PetscCall(MbsJacAddGT(sys, VI_Q, VI_GAM, qt, -h, MBS_SCALE_MINV_ROW));
  PetscCall(MbsJacAddT(sys, VI_P, VI_V, gam, h, MBS_SCALE_NONE));
  PetscCall(MbsJacAddHw(sys, VI_P, VI_GAM, v, h, MBS_SCALE_NONE));
  if (Th != 0.0) {
    PetscCall(MbsJacAddHwT(sys, VI_GAM, VI_Q, v, Th));
    PetscCall(MbsJacAddConstraintRate(sys, VI_GAM, VI_Q, qt, st->tstep[0] + Th * h, Th));
  }
  PetscCall(MbsJacAddG(sys, VI_GAM, VI_V, qt, 1.0, MBS_SCALE_NONE));
  /* at q_n (t_n): lambda's G0 terms */
  PetscCall(MbsModelSetConstraintTime(st->model, st->tstep[0], st->tstep[0]));
  if (vt != 1.0) PetscCall(MbsJacAddGT(sys, VI_P, VI_LAM, st->q0, h * (1.0 - vt), MBS_SCALE_NONE));
  if (Th != 0.0 && vt != 1.0)
    PetscCall(MbsJacAddGT(sys, VI_V, VI_LAM, st->q0, h * Th * (1.0 - vt), MBS_SCALE_MINV_ROW));
  /* at q_{n+1} (t_{n+1}): lambda's G1 terms and R_lam */
  PetscCall(MbsModelSetConstraintTime(st->model, st->tstep[1], st->tstep[1]));
  if (vt != 0.0) {
    PetscCall(MbsJacAddT(sys, VI_P, VI_Q, lam, h * vt, MBS_SCALE_NONE));
    PetscCall(MbsJacAddGT(sys, VI_P, VI_LAM, q1, h * vt, MBS_SCALE_NONE));
    if (Th != 1.0) {
      PetscCall(MbsJacAddT(sys, VI_V, VI_Q, lam, -h * vt * (1.0 - Th), MBS_SCALE_MINV_ROW));
      PetscCall(MbsJacAddGT(sys, VI_V, VI_LAM, q1, -h * vt * (1.0 - Th), MBS_SCALE_MINV_ROW));
    }
  }
  PetscCall(MbsJacAddG(sys, VI_LAM, VI_Q, q1, 1.0, MBS_SCALE_NONE));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeView_VIB(MbsStepper st, PetscViewer viewer)
{
  PetscReal Th, vt;

  PetscFunctionBegin;
  PetscCall(MbsStepperGetParameter_Private(st, "theta", &Th));
  PetscCall(MbsStepperGetParameter_Private(st, "vartheta", &vt));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  VI-B: Theta = %g, vartheta = %g\n", (double)Th, (double)vt));
  PetscFunctionReturn(0);
}

/* VI-B: eq. (82), ((1 - vartheta) G(q_n) + vartheta G(q_{n+1}))^T lambda = G(q_vartheta)^T lambda (G is affine) */
static PetscErrorCode MbsSchemeConstraintForceWeight_VIB(MbsStepper st, PetscReal *w)
{
  PetscFunctionBegin;
  PetscCall(MbsStepperGetParameter_Private(st, "vartheta", w));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeCreate_VIB(MbsStepper st)
{
  PetscFunctionBegin;
  PetscCall(MbsVICreateParametrized(st));
  st->ops->setup                   = MbsSchemeSetUp_VIB;
  st->ops->residual                = MbsSchemeResidual_VIB;
  st->ops->schur_amg               = PETSC_TRUE; /* tests/test_solvers.c: LU's trajectory, exact at zero multipliers */
  st->ops->jacobian                = MbsSchemeJacobian_VIB;
  st->ops->constraint_force_weight = MbsSchemeConstraintForceWeight_VIB;
  st->ops->view                    = MbsSchemeView_VIB;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSchemeRegister_VIB(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, MBSSCHEMEVIB, MbsSchemeCreate_VIB));
  /* the defaults are those of the paper's own computations */
  PetscCall(MbsSchemeRegisterParameter(MBSSCHEMEVIB, "theta", 1.0, 0.0, PETSC_FALSE, 1.0, PETSC_FALSE,
                                       "VI-B: Theta, q_Theta = (1-Theta) q_n + Theta q_{n+1}"));
  PetscCall(MbsSchemeRegisterParameter(MBSSCHEMEVIB, "vartheta", 0.5, 0.0, PETSC_FALSE, 1.0, PETSC_FALSE,
                                       "VI-B: vartheta, weight of G(q_{n+1}) in the multiplier forces"));
  PetscFunctionReturn(0);
}

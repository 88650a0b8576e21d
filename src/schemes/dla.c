/*
  DLA: the discrete Lagrange-d'Alembert integrator (Cortes and Martinez 2001) for holonomic constraints g(q) = 0 and
  velocity constraints A(q) v = 0, in the form of Ball's constrained discrete Hamel equations (Ball 2013, (3.20) with
  the discrete constraint xi^U_{k,k+1} = 0 of its Sect. 3.3.5) in the coordinate frame, to which they reduce (its
  Remark 5.1); docs/nonholonomic.md. The discrete Lagrangian is L_d(q0, q1) = h [ 1/2 v^T M v - V(q_tau) ],
  v = (q1 - q0)/h, q_tau = (1 - tau) q0 + tau q1, and the discrete Lagrange-d'Alembert principle with the reactions
  at the node,

    D2 L_d(q_{n-1}, q_n) + D1 L_d(q_n, q_{n+1}) = h G(q_n)^T lambda + h A(q_n)^T nu,
    g(q_{n+1}) = 0,   A(q_{n+tau}) (q_{n+1} - q_n)/h = 0   (the discrete constraint),

  fixes the positions. The momentum at a node is the mean of the two discrete Legendre transforms, p_n^- =
  D2 L_d(q_{n-1}, q_n) and p_n^+ = -D1 L_d(q_n, q_{n+1}), which differ by the node's reaction: as in RATTLE it is
  p_n = p_n^- - h/2 (G(q_n)^T mu + A(q_n)^T nu1), the multipliers chosen so that p_n satisfies the hidden constraints
  G(q_n) M^-1 p_n = 0 and A(q_n) M^-1 p_n = 0. Since that shift lies in the span of the next step's reactions, which
  absorb it, it leaves the positions of the scheme unchanged and makes the momenta second order for tau = 1/2 (p_n^-
  alone is first order). With M (q1 - q0)/h = tau p0 + (1 - tau) p1^- - tau h (G(q0)^T lambda + A(q0)^T nu) and
  p1^- = p1 + h/2 (G(q1)^T mu + A(q1)^T nu1), the step's unknowns are (q1, p1, lambda, mu[, nu, nu1]) and

    R_q   = q1 - q0 - h M^-1 (tau p0 + (1 - tau) p1) + tau h^2 M^-1 (G(q0)^T lambda + A(q0)^T nu)
                    - (1 - tau) h^2/2 M^-1 (G(q1)^T mu + A(q1)^T nu1)
    R_p   = p1 - p0 + h DV(q_tau) + h (G(q0)^T lambda + A(q0)^T nu) + h/2 (G(q1)^T mu + A(q1)^T nu1)
    R_lam = g(q1)
    R_mu  = G(q1) M^-1 p1
    R_nu  = A(q_tau) (q1 - q0)/h
    R_nu1 = A(q1) M^-1 p1

  R_p is the momentum balance, so the force elements' and a host's impulse h F (step.c) splits as the potential's does:
  (1 - tau) h F before the positions move, tau h F after. Without velocity constraints it is a symplectic variational
  integrator for every tau in [0, 1]; second order for tau = 1/2 (the default: the midpoint rule), first order
  otherwise. Drives: G(q0) at t0; g(q1), G(q1) at t1, and R_mu adds dg/dt(q1, t1).
*/
#include "stepper/stepperimpl.h"

enum { DLA_Q, DLA_P, DLA_LAM, DLA_MU, DLA_NU, DLA_NU1 };

typedef struct {
  PetscReal tau;
} MbsDLA;

static PetscErrorCode MbsSchemeSetUp_DLA(MbsStepper st)
{
  const MbsFieldKind kinds[] = {MBS_FIELD_COORDINATE, MBS_FIELD_COORDINATE,  MBS_FIELD_CONSTRAINT,
                                MBS_FIELD_CONSTRAINT, MBS_FIELD_VCONSTRAINT, MBS_FIELD_VCONSTRAINT};
  const char *const  names[] = {"q", "p", "lambda", "mu", "nu", "nu1"};

  PetscFunctionBegin;
  PetscCall(MbsStepperGetParameter_Private(st, "tau", &((MbsDLA *)st->data)->tau));
  PetscCall(MbsStepperSetFields(st, st->model->nvcon ? 6 : 4, kinds, names));
  PetscFunctionReturn(0);
}

/* q_tau, q1 - q0 and M^-1 p1 on all ghosted coordinates */
static void MbsDLAInterpolate(MbsStepper st, PetscReal tau, const PetscScalar *q1, const PetscScalar *p1,
                              PetscScalar *qt, PetscScalar *dq, PetscScalar *v1)
{
  for (PetscInt i = 0; i < st->model->nq_ghosted; i++) {
    qt[i] = (1 - tau) * st->q0[i] + tau * q1[i];
    dq[i] = q1[i] - st->q0[i];
    v1[i] = st->model->minv[i] * p1[i];
  }
}

static PetscErrorCode MbsSchemeResidual_DLA(MbsStepper st, const PetscScalar *x, PetscScalar *f)
{
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  const PetscReal    h = st->hstep, tau = ((MbsDLA *)st->data)->tau, *minv = model->minv;
  const PetscScalar *q1 = x + sys->loff[DLA_Q], *p1 = x + sys->loff[DLA_P], *lam = x + sys->loff[DLA_LAM],
                    *mu = x + sys->loff[DLA_MU];
  PetscScalar *fq = f + sys->loff[DLA_Q], *fp = f + sys->loff[DLA_P], *flam = f + sys->loff[DLA_LAM],
              *fmu = f + sys->loff[DLA_MU];
  PetscScalar *qt = st->work[0], *dq = st->work[1], *v1 = st->work[2], *r0 = st->work[3], *r1 = st->work[4];

  PetscFunctionBegin;
  MbsDLAInterpolate(st, tau, q1, p1, qt, dq, v1);
  PetscCall(PetscArrayzero(r0, model->nq_ghosted)); /* G(q0)^T lambda + A(q0)^T nu */
  PetscCall(PetscArrayzero(r1, model->nq_ghosted)); /* G(q1)^T mu + A(q1)^T nu1 */
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[0], st->tstep[0]));
  PetscCall(MbsOpGTMultAdd(model, st->q0, lam, 1.0, MBS_SCALE_NONE, r0));
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[1], st->tstep[1]));
  PetscCall(MbsOpGTMultAdd(model, q1, mu, 1.0, MBS_SCALE_NONE, r1));
  if (model->nvcon) {
    PetscCall(MbsOpVConstraintTMultAdd(model, st->q0, x + sys->loff[DLA_NU], 1.0, MBS_SCALE_NONE, r0));
    PetscCall(MbsOpVConstraintTMultAdd(model, q1, x + sys->loff[DLA_NU1], 1.0, MBS_SCALE_NONE, r1));
    PetscCall(MbsOpVConstraintAdd(model, qt, dq, 1.0 / h, f + sys->loff[DLA_NU]));
    PetscCall(MbsOpVConstraintAdd(model, q1, v1, 1.0, f + sys->loff[DLA_NU1]));
  }
  for (PetscInt i = 0; i < model->nq_ghosted; i++) { /* ghosts: to their owners */
    fq[i] += h * h * minv[i] * (tau * r0[i] - 0.5 * (1 - tau) * r1[i]);
    fp[i] += h * (r0[i] + 0.5 * r1[i]);
  }
  for (PetscInt i = 0; i < model->nq_local; i++) {
    fq[i] += dq[i] - h * minv[i] * (tau * st->p0[i] + (1 - tau) * p1[i]);
    fp[i] += p1[i] - st->p0[i];
  }
  PetscCall(MbsOpGradientAdd(model, qt, h, fp));
  PetscCall(MbsOpConstraintGMultAdd(model, q1, v1, 1.0, flam, 1.0, fmu));
  PetscCall(MbsOpConstraintRateAdd(model, q1, st->tstep[1], 1.0, fmu));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeJacobian_DLA(MbsStepper st, const PetscScalar *x)
{
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  const PetscReal    h = st->hstep, tau = ((MbsDLA *)st->data)->tau, c1 = -0.5 * (1 - tau) * h * h;
  const PetscScalar *q1 = x + sys->loff[DLA_Q], *p1 = x + sys->loff[DLA_P], *mu = x + sys->loff[DLA_MU];
  PetscScalar       *qt = st->work[0], *dq = st->work[1], *v1 = st->work[2];

  PetscFunctionBegin;
  MbsDLAInterpolate(st, tau, q1, p1, qt, dq, v1);
  /* the reactions at q0 */
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[0], st->tstep[0]));
  PetscCall(MbsJacAddGT(sys, DLA_Q, DLA_LAM, st->q0, tau * h * h, MBS_SCALE_MINV_ROW));
  PetscCall(MbsJacAddGT(sys, DLA_P, DLA_LAM, st->q0, h, MBS_SCALE_NONE));
  /* dR_q */
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[1], st->tstep[1]));
  PetscCall(MbsJacAddIdentity(sys, DLA_Q, DLA_Q, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddT(sys, DLA_Q, DLA_Q, mu, c1, MBS_SCALE_MINV_ROW));
  PetscCall(MbsJacAddIdentity(sys, DLA_Q, DLA_P, -(1 - tau) * h, MBS_SCALE_MINV_ROW));
  PetscCall(MbsJacAddGT(sys, DLA_Q, DLA_MU, q1, c1, MBS_SCALE_MINV_ROW));
  /* dR_p */
  PetscCall(MbsJacAddPotentialHessian(sys, DLA_P, DLA_Q, qt, tau * h, MBS_SCALE_NONE));
  PetscCall(MbsJacAddT(sys, DLA_P, DLA_Q, mu, 0.5 * h, MBS_SCALE_NONE));
  PetscCall(MbsJacAddIdentity(sys, DLA_P, DLA_P, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddGT(sys, DLA_P, DLA_MU, q1, 0.5 * h, MBS_SCALE_NONE));
  /* dR_lam */
  PetscCall(MbsJacAddG(sys, DLA_LAM, DLA_Q, q1, 1.0, MBS_SCALE_NONE));
  /* dR_mu */
  PetscCall(MbsJacAddHwT(sys, DLA_MU, DLA_Q, v1, 1.0));
  PetscCall(MbsJacAddConstraintRate(sys, DLA_MU, DLA_Q, q1, st->tstep[1], 1.0));
  PetscCall(MbsJacAddG(sys, DLA_MU, DLA_P, q1, 1.0, MBS_SCALE_MINV_COL));
  if (model->nvcon) {
    const PetscScalar *nu1 = x + sys->loff[DLA_NU1];
    PetscCall(MbsJacAddAT(sys, DLA_Q, DLA_NU, st->q0, tau * h * h, MBS_SCALE_MINV_ROW));
    PetscCall(MbsJacAddAT(sys, DLA_P, DLA_NU, st->q0, h, MBS_SCALE_NONE));
    PetscCall(MbsJacAddATmu(sys, DLA_Q, DLA_Q, q1, nu1, c1, MBS_SCALE_MINV_ROW));
    PetscCall(MbsJacAddAT(sys, DLA_Q, DLA_NU1, q1, c1, MBS_SCALE_MINV_ROW));
    PetscCall(MbsJacAddATmu(sys, DLA_P, DLA_Q, q1, nu1, 0.5 * h, MBS_SCALE_NONE));
    PetscCall(MbsJacAddAT(sys, DLA_P, DLA_NU1, q1, 0.5 * h, MBS_SCALE_NONE));
    /* dR_nu */
    PetscCall(MbsJacAddA(sys, DLA_NU, DLA_Q, qt, 1.0 / h, MBS_SCALE_NONE));
    PetscCall(MbsJacAddAw(sys, DLA_NU, DLA_Q, qt, dq, tau / h, MBS_SCALE_NONE));
    /* dR_nu1 */
    PetscCall(MbsJacAddAw(sys, DLA_NU1, DLA_Q, q1, v1, 1.0, MBS_SCALE_NONE));
    PetscCall(MbsJacAddA(sys, DLA_NU1, DLA_P, q1, 1.0, MBS_SCALE_MINV_COL));
  }
  PetscFunctionReturn(0);
}
/* The constraint forces of a step: h (G(q_n)^T lambda + A(q_n)^T nu) + h/2 (G(q_{n+1})^T mu + A(q_{n+1})^T nu1) */
static PetscErrorCode MbsSchemeReactionTerms_DLA(MbsStepper st, PetscInt *n, MbsReactionTerm terms[])
{
  PetscFunctionBegin;
  *n       = 2;
  terms[0] = (MbsReactionTerm){DLA_LAM, 0.0, 1.0};
  terms[1] = (MbsReactionTerm){DLA_MU, 1.0, 0.5};
  if (st->model->nvcon) {
    terms[(*n)++] = (MbsReactionTerm){DLA_NU, 0.0, 1.0};
    terms[(*n)++] = (MbsReactionTerm){DLA_NU1, 1.0, 0.5};
  }
  PetscFunctionReturn(0);
}

/* DLA: G(q_n)^T lambda */
static PetscErrorCode MbsSchemeConstraintForceWeight_DLA(MbsStepper st, PetscReal *w)
{
  PetscFunctionBegin;
  *w = 0.0;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeView_DLA(MbsStepper st, PetscViewer viewer)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  DLA: tau = %g\n", (double)((MbsDLA *)st->data)->tau));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeDestroy_DLA(MbsStepper st)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(st->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeCreate_DLA(MbsStepper st)
{
  MbsDLA *dla;

  PetscFunctionBegin;
  PetscCall(PetscNew(&dla));
  dla->tau                         = 0.5;
  st->data                         = dla;
  st->ops->setup                   = MbsSchemeSetUp_DLA;
  st->ops->residual                = MbsSchemeResidual_DLA;
  st->ops->schur_amg               = PETSC_TRUE; /* tests/test_solvers.c: LU's trajectory, exact at zero multipliers */
  st->ops->jacobian                = MbsSchemeJacobian_DLA;
  st->ops->constraint_force_weight = MbsSchemeConstraintForceWeight_DLA;
  st->ops->view                    = MbsSchemeView_DLA;
  st->ops->destroy                 = MbsSchemeDestroy_DLA;
  st->ops->velocity_constraints    = PETSC_TRUE;
  st->ops->reaction_terms          = MbsSchemeReactionTerms_DLA;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSchemeRegister_DLA(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, MBSSCHEMEDLA, MbsSchemeCreate_DLA));
  PetscCall(
    MbsSchemeRegisterParameter(MBSSCHEMEDLA, "tau", 0.5, 0.0, PETSC_FALSE, 1.0, PETSC_FALSE,
                               "DLA: the interpolation point q_{n+tau} = (1-tau) q_n + tau q_{n+1} (Ball 2013)"));
  PetscFunctionReturn(0);
}

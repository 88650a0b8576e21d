/*
  RATTLE (Andersen 1983; Leimkuhler & Skeel 1994; Hairer, Lubich & Wanner, Geometric Numerical Integration, VII.1.4):
  the symplectic, second-order, time-reversible integrator of constrained Hamiltonian systems. One step:

    p_{1/2} = p0 - h/2 (DV(q0) + G(q0)^T lambda)
    q1      = q0 + h M^-1 p_{1/2},                       g(q1) = 0
    p1      = p_{1/2} - h/2 (DV(q1) + G(q1)^T mu),       G(q1) M^-1 p1 = 0

  solved as one system in (q1, p1, lambda, mu), with p_{1/2} eliminated through the mean of the two half steps,
  p_{1/2} = (p0 + p1)/2 + h/4 (DV(q1) - DV(q0) + G(q1)^T mu - G(q0)^T lambda):

    R_q  = q1 - q0 - h M^-1 ((p0 + p1)/2 + h/4 (DV(q1) - DV(q0) + G(q1)^T mu - G(q0)^T lambda))
    R_p  = p1 - p0 + h/2 (DV(q0) + DV(q1)) + h/2 G(q0)^T lambda + h/2 G(q1)^T mu
    R_lam = g(q1)
    R_mu  = G(q1) M^-1 p1

  The two forms are the same equations. The second one keeps the force elements and a host's forces, which every
  scheme adds to its momentum balance only (h F in R_p, src/stepper/step.c), consistent: F drops out of the mean,
  so it acts as the impulse h/2 F on each half step, and the method stays second order with them.

  Drives (docs/drives.md): G(q0) at t0, g, G(q1) at t1, and R_mu adds dg/dt(q1, t1).
  The constraint forces act at both ends of the step, h/2 G(q0)^T lambda and h/2 G(q1)^T mu: the field "lambda"
  (lambda, at q0) is what the reactions and the drives' work see, an O(h) approximation of the step's mean force
  (docs/rattle.md).
*/
#include "stepper/stepperimpl.h"

enum { RA_Q, RA_P, RA_LAM, RA_MU };

static PetscErrorCode MbsSchemeSetUp_RATTLE(MbsStepper st)
{
  const MbsFieldKind kinds[] = {MBS_FIELD_COORDINATE, MBS_FIELD_COORDINATE, MBS_FIELD_CONSTRAINT, MBS_FIELD_CONSTRAINT};
  const char *const  names[] = {"q", "p", "lambda", "mu"};

  PetscFunctionBegin;
  PetscCall(MbsStepperSetFields(st, 4, kinds, names));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeResidual_RATTLE(MbsStepper st, const PetscScalar *x, PetscScalar *f)
{
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  const PetscReal    h = st->hstep, *minv = model->minv;
  const PetscScalar *q1 = x + sys->loff[RA_Q], *p1 = x + sys->loff[RA_P], *lam = x + sys->loff[RA_LAM],
                    *mu = x + sys->loff[RA_MU];
  PetscScalar *fq = f + sys->loff[RA_Q], *fp = f + sys->loff[RA_P], *flam = f + sys->loff[RA_LAM],
              *fmu = f + sys->loff[RA_MU];
  PetscScalar *v1 = st->work[0], *d = st->work[1]; /* M^-1 p1; DV(q1) - DV(q0) + G(q1)^T mu - G(q0)^T lambda */

  PetscFunctionBegin;
  PetscCall(PetscArrayzero(d, model->nq_ghosted));
  for (PetscInt i = 0; i < model->nq_ghosted; i++) v1[i] = minv[i] * p1[i];
  for (PetscInt i = 0; i < model->nq_local; i++) fp[i] = p1[i] - st->p0[i];
  PetscCall(MbsOpGradientAdd(model, st->q0, 0.5 * h, fp));
  PetscCall(MbsOpGradientAdd(model, q1, 0.5 * h, fp));
  PetscCall(MbsOpGradientAdd(model, st->q0, -1.0, d));
  PetscCall(MbsOpGradientAdd(model, q1, 1.0, d));
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[0], st->tstep[0]));
  PetscCall(MbsOpGTMultAdd2(model, st->q0, lam, 0.5 * h, MBS_SCALE_NONE, fp, lam, -1.0, MBS_SCALE_NONE, d));
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[1], st->tstep[1]));
  PetscCall(MbsOpGTMultAdd2(model, q1, mu, 0.5 * h, MBS_SCALE_NONE, fp, mu, 1.0, MBS_SCALE_NONE, d));
  for (PetscInt i = 0; i < model->nq_local; i++) fq[i] = q1[i] - st->q0[i] - 0.5 * h * minv[i] * (st->p0[i] + p1[i]);
  for (PetscInt i = 0; i < model->nq_ghosted; i++) fq[i] -= 0.25 * h * h * minv[i] * d[i]; /* ghosts: to their owners */
  PetscCall(MbsOpConstraintGMultAdd(model, q1, v1, 1.0, flam, 1.0, fmu));
  PetscCall(MbsOpConstraintRateAdd(model, q1, st->tstep[1], 1.0, fmu));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeJacobian_RATTLE(MbsStepper st, const PetscScalar *x)
{
  const MbsSystem    sys = st->sys;
  const PetscReal    h   = st->hstep;
  const PetscScalar *q1 = x + sys->loff[RA_Q], *p1 = x + sys->loff[RA_P], *mu = x + sys->loff[RA_MU];
  PetscScalar       *v1 = st->work[0];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < st->model->nq_ghosted; i++) v1[i] = st->model->minv[i] * p1[i];
  PetscCall(MbsModelSetConstraintTime(st->model, st->tstep[1], st->tstep[1]));
  /* dR_q */
  PetscCall(MbsJacAddIdentity(sys, RA_Q, RA_Q, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddPotentialHessian(sys, RA_Q, RA_Q, q1, -0.25 * h * h, MBS_SCALE_MINV_ROW));
  PetscCall(MbsJacAddT(sys, RA_Q, RA_Q, mu, -0.25 * h * h, MBS_SCALE_MINV_ROW));
  PetscCall(MbsJacAddIdentity(sys, RA_Q, RA_P, -0.5 * h, MBS_SCALE_MINV_ROW));
  PetscCall(MbsModelSetConstraintTime(st->model, st->tstep[0], st->tstep[0]));
  PetscCall(MbsJacAddGT(sys, RA_Q, RA_LAM, st->q0, 0.25 * h * h, MBS_SCALE_MINV_ROW));
  PetscCall(MbsJacAddGT(sys, RA_P, RA_LAM, st->q0, 0.5 * h, MBS_SCALE_NONE));
  PetscCall(MbsModelSetConstraintTime(st->model, st->tstep[1], st->tstep[1]));
  PetscCall(MbsJacAddGT(sys, RA_Q, RA_MU, q1, -0.25 * h * h, MBS_SCALE_MINV_ROW));
  /* dR_p */
  PetscCall(MbsJacAddPotentialHessian(sys, RA_P, RA_Q, q1, 0.5 * h, MBS_SCALE_NONE));
  PetscCall(MbsJacAddT(sys, RA_P, RA_Q, mu, 0.5 * h, MBS_SCALE_NONE));
  PetscCall(MbsJacAddIdentity(sys, RA_P, RA_P, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddGT(sys, RA_P, RA_MU, q1, 0.5 * h, MBS_SCALE_NONE));
  /* dR_lam */
  PetscCall(MbsJacAddG(sys, RA_LAM, RA_Q, q1, 1.0, MBS_SCALE_NONE));
  /* dR_mu */
  PetscCall(MbsJacAddHwT(sys, RA_MU, RA_Q, v1, 1.0));
  PetscCall(MbsJacAddConstraintRate(sys, RA_MU, RA_Q, q1, st->tstep[1], 1.0));
  PetscCall(MbsJacAddG(sys, RA_MU, RA_P, q1, 1.0, MBS_SCALE_MINV_COL));
  PetscFunctionReturn(0);
}

/* the field lambda acts at q_n (see above) */
static PetscErrorCode MbsSchemeConstraintForceWeight_RATTLE(MbsStepper st, PetscReal *w)
{
  PetscFunctionBegin;
  (void)st;
  *w = 0.0;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeCreate_RATTLE(MbsStepper st)
{
  PetscFunctionBegin;
  st->ops->setup                   = MbsSchemeSetUp_RATTLE;
  st->ops->residual                = MbsSchemeResidual_RATTLE;
  st->ops->schur_amg               = PETSC_TRUE; /* tests/test_solvers.c: LU's trajectory, exact at zero multipliers */
  st->ops->wide_mumps              = PETSC_TRUE; /* refactors as often as EM: MbsStepperChooseSolver() */
  st->ops->jacobian                = MbsSchemeJacobian_RATTLE;
  st->ops->constraint_force_weight = MbsSchemeConstraintForceWeight_RATTLE;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSchemeRegister_RATTLE(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, MBSSCHEMERATTLE, MbsSchemeCreate_RATTLE));
  PetscFunctionReturn(0);
}

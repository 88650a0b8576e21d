static const char help[] =
  "A program that adds its own time-stepping scheme to gglmbs, built against the installed library and its scheme\n\
header (gglmbs/schemes.h): the GGL energy-momentum scheme written again outside the library and registered as\n\
'my-em'. It runs the paper's spherical pendulum with 'em' and with 'my-em', and prints, on rank 0:\n\
  max_state_difference    max |q_em - q_my-em| + |p_em - p_my-em| after 40 steps (0: the same scheme)\n\
  jacobian_error_my-em    max |J - J_fd| / max(1, max |J|) at the last step's solution\n\
  energy_drift_my-em      max_n |E_n - E_0| / |E_0| over the run\n\n";

#include <gglmbs/gglmbs.h>
#include <gglmbs/schemes.h>

/* The residual and Jacobian of eq. (84) on the ghosted local unknowns x, written against the global operators,
   exactly as src/schemes/em.c does inside the library. */
enum { EM_Q, EM_P, EM_LAM, EM_GAM };

static PetscErrorCode MyEMSetUp(MbsStepper st)
{
  const MbsFieldKind kinds[] = {MBS_FIELD_COORDINATE, MBS_FIELD_COORDINATE, MBS_FIELD_CONSTRAINT, MBS_FIELD_CONSTRAINT};
  const char *const  names[] = {"q", "p", "lambda", "gamma"};

  PetscFunctionBegin;
  PetscCall(MbsStepperSetFields(st, 4, kinds, names));
  PetscFunctionReturn(0);
}

/* Midpoint configuration and the velocities M^-1 pm, M^-1 p1 on all ghosted coordinates. */
static void MyEMMidpoint(MbsStepper st, const PetscScalar *q1, const PetscScalar *p1, PetscScalar *qm, PetscScalar *vm,
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

static PetscErrorCode MyEMResidual(MbsStepper st, const PetscScalar *x, PetscScalar *f)
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
  MyEMMidpoint(st, q1, p1, qm, vm, v1);
  for (PetscInt i = 0; i < model->nq_local; i++) {
    fq[i] = q1[i] - st->q0[i] - h * vm[i];
    fp[i] = p1[i] - st->p0[i];
  }
  PetscCall(MbsOpGTMultAdd2(model, qm, gam, -h, MBS_SCALE_MINV_ROW, fq, lam, h, MBS_SCALE_NONE, fp));
  PetscCall(MbsOpDiscreteGradientAdd(model, st->q0, q1, h, fp));
  PetscCall(MbsOpHessianMultAdd(model, gam, vm, h, fp));
  PetscCall(MbsOpConstraintGMultAdd(model, q1, v1, 1.0, flam, 1.0, fgam));
  PetscFunctionReturn(0);
}

static PetscErrorCode MyEMJacobian(MbsStepper st, const PetscScalar *x)
{
  const MbsSystem    sys = st->sys;
  const PetscReal    h   = st->hstep;
  const PetscScalar *q1 = x + sys->loff[EM_Q], *p1 = x + sys->loff[EM_P], *lam = x + sys->loff[EM_LAM],
                    *gam = x + sys->loff[EM_GAM];
  PetscScalar *qm = st->work[0], *vm = st->work[1], *v1 = st->work[2];

  PetscFunctionBegin;
  MyEMMidpoint(st, q1, p1, qm, vm, v1);
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
  /* dR_lam */
  PetscCall(MbsJacAddG(sys, EM_LAM, EM_Q, q1, 1.0, MBS_SCALE_NONE));
  /* dR_gam */
  PetscCall(MbsJacAddHwT(sys, EM_GAM, EM_Q, v1, 1.0));
  PetscCall(MbsJacAddG(sys, EM_GAM, EM_P, q1, 1.0, MBS_SCALE_MINV_COL));
  PetscFunctionReturn(0);
}

static PetscErrorCode MyEMConstraintForceWeight(MbsStepper st, PetscReal *w)
{
  PetscFunctionBegin;
  *w = 0.5;
  PetscFunctionReturn(0);
}

static PetscErrorCode MyEMCreate(MbsStepper st)
{
  PetscFunctionBegin;
  st->ops->setup                   = MyEMSetUp;
  st->ops->residual                = MyEMResidual;
  st->ops->jacobian                = MyEMJacobian;
  st->ops->constraint_force_weight = MyEMConstraintForceWeight;
  PetscFunctionReturn(0);
}

/* max |J - J_fd| / max(1, max |J|) at the solution of the stepper's last step */
static PetscErrorCode JacobianError(MbsStepper st, PetscReal *error)
{
  SNES      snes;
  Vec       X;
  Mat       J, Jfd, D;
  PetscInt  n, N;
  PetscReal jmax, dmax;

  PetscFunctionBegin;
  PetscCall(MbsStepperGetSNES(st, &snes));
  PetscCall(SNESGetSolution(snes, &X));
  PetscCall(SNESGetJacobian(snes, &J, NULL, NULL, NULL));
  PetscCall(SNESComputeJacobian(snes, X, J, J));
  PetscCall(VecGetLocalSize(X, &n));
  PetscCall(VecGetSize(X, &N));
  PetscCall(MatCreateDense(PetscObjectComm((PetscObject)X), n, n, N, N, NULL, &Jfd));
  PetscCall(SNESComputeJacobianDefault(snes, X, Jfd, Jfd, NULL));
  PetscCall(MatConvert(J, MATDENSE, MAT_INITIAL_MATRIX, &D));
  PetscCall(MatNorm(D, NORM_MAX, &jmax));
  PetscCall(MatAXPY(D, -1.0, Jfd, SAME_NONZERO_PATTERN));
  PetscCall(MatNorm(D, NORM_MAX, &dmax));
  *error = dmax / PetscMax(1.0, jmax);
  PetscCall(MatDestroy(&D));
  PetscCall(MatDestroy(&Jfd));
  PetscFunctionReturn(0);
}

/* 40 steps of the spherical pendulum (m = 1, l = 1, g = 9.81, h = 0.05) with a scheme; its final state */
static PetscErrorCode Run(const char scheme[], Vec *q, Vec *p, PetscReal *drift, PetscReal *jacobian_error)
{
  const PetscReal x0[3] = {1, 0, 0}, v0[3] = {0, 1, 0}, origin[3] = {0, 0, 0}, g[3] = {0, 0, -9.81};
  MbsModel        model;
  MbsStepper      st;
  MbsDiagnostics  d;
  PetscInt        bob;
  PetscReal       E0 = 0;
  Vec             qs, ps;

  PetscFunctionBegin;
  PetscCall(MbsModelCreate(PETSC_COMM_WORLD, &model));
  PetscCall(MbsModelAddParticle(model, "bob", 1.0, x0, v0, &bob));
  PetscCall(MbsModelAddRod(model, MBS_GROUND, origin, bob, NULL, 1.0, NULL));
  PetscCall(MbsModelSetGravity(model, g));
  PetscCall(MbsModelSetUp(model));
  PetscCall(MbsStepperCreate(model, &st));
  PetscCall(MbsStepperSetType(st, scheme));
  PetscCall(MbsStepperSetTimeStep(st, 0.05));
  *drift = 0;
  for (PetscInt n = 0; n <= 40; n++) {
    if (n) PetscCall(MbsStepperStep(st));
    PetscCall(MbsStepperComputeDiagnostics(st, &d));
    if (!n) E0 = d.E;
    *drift = PetscMax(*drift, PetscAbsReal(d.E - E0) / PetscAbsReal(E0));
  }
  if (jacobian_error) PetscCall(JacobianError(st, jacobian_error));
  PetscCall(MbsStepperGetState(st, &qs, &ps));
  PetscCall(VecDuplicate(qs, q));
  PetscCall(VecDuplicate(ps, p));
  PetscCall(VecCopy(qs, *q));
  PetscCall(VecCopy(ps, *p));
  PetscCall(MbsStepperDestroy(&st));
  PetscCall(MbsModelDestroy(&model));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Vec       q[2], p[2];
  PetscReal drift[2], error = 0, dq, dp;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(MbsSchemeRegister("my-em", MyEMCreate));
  PetscCall(Run(MBSSCHEMEEM, &q[0], &p[0], &drift[0], NULL));
  PetscCall(Run("my-em", &q[1], &p[1], &drift[1], &error));
  PetscCall(VecAXPY(q[1], -1.0, q[0]));
  PetscCall(VecAXPY(p[1], -1.0, p[0]));
  PetscCall(VecNorm(q[1], NORM_INFINITY, &dq));
  PetscCall(VecNorm(p[1], NORM_INFINITY, &dp));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "max_state_difference = %.3e\n", (double)(dq + dp)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "jacobian_error_my-em = %.3e\n", (double)error));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "energy_drift_my-em = %.3e\n", (double)drift[1]));
  for (int k = 0; k < 2; k++) {
    PetscCall(VecDestroy(&q[k]));
    PetscCall(VecDestroy(&p[k]));
  }
  PetscCall(PetscFinalize());
  return 0;
}

static const char help[] =
  "A program that adds its own element type to gglmbs, built against the installed library: a tether, the\n\
potential V = k/2 |x_b(Xb) - x_a(Xa)|^2 of a spring of rest length zero, registered for the input section\n\
'springs' as type 'tether'. It writes an input file that uses it (a pendulum with a second particle tethered to\n\
its bob), reads it through the generic reader, and for every registered scheme checks the assembled Jacobian\n\
of a step against finite differences (SNESComputeJacobianDefault); with EM it checks energy conservation.\n\
It prints, on rank 0, one `key = value` per line:\n\
  jacobian_error_<scheme>  max |J - J_fd| / max(1, max |J|) at the last step's solution\n\
  energy_drift_em          max_n |E_n - E_0| / |E_0| over the EM run\n\
  initial_energy(_expected) E_0 = T + V_gravity + V_tether as the model computes it, and by hand\n\n";

#include <stdio.h>
#include <gglmbs/gglmbs.h>
#include <gglmbs/elements.h>

/* ---- the element type: pure arithmetic on the element's coordinates, like the built-in kernels ---- */

/* d = x_a(Xa) - x_b(Xb) = c + sum_j w_j Q_j (gglmbs/elements/kernels.h) */
static void TetherDifference(const MbsElemData *e, const double *q, double w[MBS_ELEM_MAX_BLOCKS], double d[3])
{
  double c[3];

  MbsElemPointDifference(e, w, c);
  MbsElemPointDifferenceEval(e->nblocks_a + e->nblocks_b, w, c, q, d);
}

static double TetherEnergy(const MbsElemData *e, const double *q)
{
  double w[MBS_ELEM_MAX_BLOCKS], d[3];

  TetherDifference(e, q, w, d);
  return 0.5 * e->stiffness * MbsVec3Dot(d, d);
}

/* dV/dQ_j = k w_j d */
static void TetherGradient(const MbsElemData *e, const double *q, double *dV)
{
  double w[MBS_ELEM_MAX_BLOCKS], d[3];

  TetherDifference(e, q, w, d);
  for (int j = 0; j < e->nblocks_a + e->nblocks_b; j++)
    for (int k = 0; k < 3; k++) dV[3 * j + k] = e->stiffness * w[j] * d[k];
}

/* d2V/dQ_i dQ_j = k w_i w_j I: constant */
static void TetherHessian(const MbsElemData *e, const double *q, double *H)
{
  const int nb = e->nblocks_a + e->nblocks_b, nq = 3 * nb;
  double    w[MBS_ELEM_MAX_BLOCKS], d[3];

  TetherDifference(e, q, w, d);
  for (int i = 0; i < nq * nq; i++) H[i] = 0;
  for (int i = 0; i < nb; i++)
    for (int j = 0; j < nb; j++)
      for (int k = 0; k < 3; k++) H[(3 * i + k) * nq + 3 * j + k] = e->stiffness * w[i] * w[j];
}

/* V is quadratic, so the gradient at the midpoint is a discrete gradient: dg . (q1 - q0) = V(q1) - V(q0). */
static void TetherDiscreteGradient(const MbsElemData *e, const double *q0, const double *q1, double *dg, double *ddg)
{
  const int nq                  = 3 * (e->nblocks_a + e->nblocks_b);
  double    qm[MBS_ELEM_MAX_NQ] = {0};

  for (int i = 0; i < nq; i++) qm[i] = 0.5 * (q0[i] + q1[i]);
  TetherGradient(e, qm, dg);
  if (ddg) {
    TetherHessian(e, qm, ddg);
    for (int i = 0; i < nq * nq; i++) ddg[i] *= 0.5;
  }
}

static int TetherComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error, size_t len)
{
  (void)a, (void)b; /* the initial placements of its two points: positions and body frames */
  if (!(d->stiffness > 0 && d->stiffness < 1e300)) {
    snprintf(error, len, "Tether: stiffness must be positive and finite, got %g", d->stiffness);
    return 1;
  }
  return 0;
}

static const MbsElemKernel TetherKernel = {
  .name              = "tether",
  .energy            = TetherEnergy,
  .gradient          = TetherGradient,
  .hessian           = TetherHessian,
  .discrete_gradient = TetherDiscreteGradient,
};

static const MbsElementType TetherType = {
  .name      = "tether",
  .section   = "springs",
  .title     = "Tether",
  .kernel    = &TetherKernel,
  .cell_kind = 0,
  .nparams   = 1,
  .params    = {{"stiffness",
                 MBS_ELEM_PARAM_REAL,
                 {offsetof(MbsElemData, stiffness)},
                 MBS_ELEM_RANGE_POSITIVE,
                 MBS_ELEM_REQUIRED,
                 "stiffness in N/m"}},
  .complete  = TetherComplete,
};

/* ---- the host program ---- */

static const char input[] = "time: {step: 0.01, end: 0.2}\n"
                            "gravity: [0, 0, -9.81]\n"
                            "bodies:\n"
                            "  - {name: bob, type: particle, mass: 1.0, position: [1, 0, 0], velocity: [0, 1, 0]}\n"
                            "  - {name: ball, type: particle, mass: 0.5, position: [1.5, 0.2, -0.3]}\n"
                            "joints:\n"
                            "  - {type: rod, bodies: [ground, bob]}\n"
                            "springs:\n"
                            "  - {type: tether, bodies: [bob, ball], stiffness: 40}\n";

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

int main(int argc, char **argv)
{
  const char *const schemes[]                = {MBSSCHEMEEM, MBSSCHEMEEMG, MBSSCHEMEVIS, MBSSCHEMEVIA, MBSSCHEMEVIB};
  char              file[PETSC_MAX_PATH_LEN] = "custom_element_input.yaml";
  PetscMPIInt       rank;
  MbsModel          model;
  MbsRunConfig      cfg;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(MbsElementTypeRegister(&TetherType));
  if (!rank) {
    FILE *fp = fopen(file, "w");
    PetscCheck(fp && fputs(input, fp) >= 0 && !fclose(fp), PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "Cannot write %s",
               file);
  }
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  PetscCall(MbsModelCreate(PETSC_COMM_WORLD, &model));
  PetscCall(MbsRunConfigSetDefaults(&cfg));
  PetscCall(MbsModelLoadYAML(model, file, &cfg));
  PetscCall(MbsModelSetUp(model));
  {
    /* the bob's kinetic energy, the ball's weight 0.5 g at z = -0.3, the tether's k/2 |x_ball - x_bob|^2 */
    const PetscReal d2 = 0.5 * 0.5 + 0.2 * 0.2 + 0.3 * 0.3;
    PetscCall(
      PetscPrintf(PETSC_COMM_WORLD, "initial_energy_expected = %.15g\n", 0.5 * 1.0 - 0.5 * 9.81 * 0.3 + 0.5 * 40 * d2));
  }
  for (size_t s = 0; s < sizeof(schemes) / sizeof(schemes[0]); s++) {
    MbsStepper     st;
    MbsDiagnostics d;
    PetscReal      error = 0, E0 = 0, drift = 0;
    PetscInt       steps;

    PetscCall(MbsStepperCreate(model, &st));
    PetscCall(MbsStepperSetOptionsPrefix(st, "custom_"));
    PetscCall(MbsStepperSetRunConfig(st, &cfg));
    PetscCall(MbsStepperSetType(st, schemes[s]));
    PetscCall(MbsStepperSetFromOptions(st));
    steps = 20;
    for (PetscInt n = 0; n <= steps; n++) {
      if (n) PetscCall(MbsStepperStep(st));
      PetscCall(MbsStepperComputeDiagnostics(st, &d));
      if (!n) E0 = d.E;
      drift = PetscMax(drift, PetscAbsReal(d.E - E0) / PetscAbsReal(E0));
      if (!n && s == 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "initial_energy = %.15g\n", E0));
    }
    PetscCall(JacobianError(st, &error));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "jacobian_error_%s = %.3e\n", schemes[s], (double)error));
    if (s == 0) PetscCall(PetscPrintf(PETSC_COMM_WORLD, "energy_drift_em = %.3e\n", (double)drift));
    PetscCall(MbsStepperDestroy(&st));
  }
  PetscCall(MbsModelDestroy(&model));
  if (!rank) remove(file);
  PetscCall(PetscFinalize());
  return 0;
}

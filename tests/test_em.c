/* EM scheme: analytic Jacobian against finite differences on a model with every element type, exact
   preallocation of the Jacobian, and the conservation properties of seed 004 Sect. 6. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <gglmbs/gglmbs.h>
#include "schemes/stepperimpl.h"

static void Fail(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fail();
}

#define CHECK(call) assert_int_equal((int)(call), 0)

/* Every element type: particles, rigid bodies, spherical (body-body and to ground), fixed point, rod
   (body-body and to ground), revolute, linear and quartic springs, gravity. The initial state need not
   satisfy the constraints here: the Jacobian is checked at an arbitrary point. */
static void BuildEveryElementModel(MPI_Comm comm, MbsModel *model)
{
  const PetscReal g[3] = {0.3, -0.2, -9.81};
  const PetscReal R1[9] = {1, 0, 0, 0, 0.8, -0.6, 0, 0.6, 0.8}, R2[9] = {0, -1, 0, 1, 0, 0, 0, 0, 1};
  const PetscReal J1[3] = {1.0, 2.0, 2.5}, J2[3] = {0.4, 0.5, 0.6};
  PetscInt        p1, p2, r1, r2;

  CHECK(MbsModelCreate(comm, model));
  CHECK(MbsModelSetGravity(*model, g));
  CHECK(MbsModelAddParticle(*model, "p1", 1.3, (PetscReal[]){0.3, -0.2, 0.5}, (PetscReal[]){0.1, 0.2, -0.3}, &p1));
  CHECK(MbsModelAddRigidBody(*model, "r1", 2.0, J1, (PetscReal[]){0, 0, 1}, R1, (PetscReal[]){0.1, 0, 0}, (PetscReal[]){1, 2, 3}, &r1));
  CHECK(MbsModelAddParticle(*model, "p2", 0.7, (PetscReal[]){1.1, 0.4, 0.2}, NULL, &p2));
  CHECK(MbsModelAddRigidBody(*model, "r2", 1.5, J2, (PetscReal[]){0.5, 0.5, 1.5}, R2, NULL, (PetscReal[]){-1, 0.5, 2}, &r2));
  CHECK(MbsModelAddFixedPoint(*model, r1, (PetscReal[]){0, 0, -0.5}, (PetscReal[]){0, 0, 0.5}, NULL));
  CHECK(MbsModelAddRevolute(*model, r1, (PetscReal[]){0.2, 0.1, 0.3}, (PetscReal[]){0, 0, 1}, r2, (PetscReal[]){-0.1, 0.2, 0}, (PetscReal[]){0, 1, 0}, NULL));
  CHECK(MbsModelAddSpherical(*model, r2, (PetscReal[]){0.1, -0.3, 0.2}, p1, NULL, NULL));
  CHECK(MbsModelAddSpherical(*model, MBS_GROUND, (PetscReal[]){1, 1, 1}, p2, NULL, NULL));
  CHECK(MbsModelAddRod(*model, p1, NULL, p2, NULL, 0.9, NULL));
  CHECK(MbsModelAddRod(*model, MBS_GROUND, (PetscReal[]){0, 1, 0}, r2, (PetscReal[]){0.3, 0, 0}, 1.2, NULL));
  CHECK(MbsModelAddSpring(*model, MBS_SPRING_LINEAR, p1, NULL, r1, (PetscReal[]){0.1, 0.2, 0.3}, 40.0, 0.5, NULL));
  CHECK(MbsModelAddSpring(*model, MBS_SPRING_QUARTIC, r2, (PetscReal[]){0, 0.1, -0.2}, p2, NULL, 25.0, 0.8, NULL));
  CHECK(MbsModelSetInitialTolerance(*model, PETSC_MAX_REAL));
  CHECK(MbsModelSetUp(*model));
}

/* A pseudo-random state: unknowns X near the step-start state, multipliers of order one. */
static void Randomize(MbsStepper st, PetscRandom rnd, Vec X)
{
  CHECK(VecSetRandom(st->q, rnd));
  CHECK(VecSetRandom(st->p, rnd));
  CHECK(MbsModelCoordinatesToLocal(st->model, st->q, st->q0));
  CHECK(MbsModelCoordinatesToLocal(st->model, st->p, st->p0));
  CHECK(VecSetRandom(X, rnd));
}

static void test_jacobian_matches_finite_differences(void **state)
{
  MbsModel    model;
  MbsStepper  st;
  PetscRandom rnd;
  Vec         X, Xp, Xm, Fp, Fm;
  Mat         J;
  PetscInt    n;
  PetscReal   jmax = 0, errmax = 0;

  BuildEveryElementModel(PETSC_COMM_WORLD, &model);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetTimeStep(st, 0.1));
  CHECK(MbsStepperSetUp(st));
  CHECK(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  CHECK(PetscRandomSetInterval(rnd, -1.0, 1.0));
  CHECK(PetscRandomSetSeed(rnd, 7));
  CHECK(PetscRandomSeed(rnd));
  CHECK(VecDuplicate(st->X, &X));
  Randomize(st, rnd, X);
  CHECK(VecDuplicate(X, &Xp));
  CHECK(VecDuplicate(X, &Xm));
  CHECK(VecDuplicate(X, &Fp));
  CHECK(VecDuplicate(X, &Fm));
  CHECK(SNESComputeJacobian(st->snes, X, st->J, st->J));
  J = st->J;
  CHECK(VecGetSize(X, &n));
  CHECK(MatNorm(J, NORM_MAX, &jmax));
  for (PetscInt j = 0; j < n; j++) {
    const PetscReal eps = 1e-6;
    PetscInt        lo, hi;
    CHECK(VecCopy(X, Xp));
    CHECK(VecCopy(X, Xm));
    CHECK(VecGetOwnershipRange(X, &lo, &hi));
    if (j >= lo && j < hi) {
      CHECK(VecSetValue(Xp, j, eps, ADD_VALUES));
      CHECK(VecSetValue(Xm, j, -eps, ADD_VALUES));
    }
    CHECK(VecAssemblyBegin(Xp));
    CHECK(VecAssemblyEnd(Xp));
    CHECK(VecAssemblyBegin(Xm));
    CHECK(VecAssemblyEnd(Xm));
    CHECK(SNESComputeFunction(st->snes, Xp, Fp));
    CHECK(SNESComputeFunction(st->snes, Xm, Fm));
    CHECK(VecAXPY(Fp, -1.0, Fm));
    CHECK(VecScale(Fp, 0.5 / eps));
    CHECK(VecGetOwnershipRange(Fp, &lo, &hi));
    for (PetscInt i = lo; i < hi; i++) {
      PetscScalar fd, an;
      CHECK(VecGetValues(Fp, 1, &i, &fd));
      CHECK(MatGetValues(J, 1, &i, 1, &j, &an));
      if (PetscAbsScalar(fd - an) > errmax) errmax = PetscAbsScalar(fd - an);
    }
  }
  CHECK(MPI_Allreduce(MPI_IN_PLACE, &errmax, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
  if (!(errmax <= 1e-7 * PetscMax(1.0, jmax))) Fail("EM Jacobian differs from finite differences: max |J - Jfd| = %g, max |J| = %g\n", (double)errmax, (double)jmax);
  CHECK(VecDestroy(&X));
  CHECK(VecDestroy(&Xp));
  CHECK(VecDestroy(&Xm));
  CHECK(VecDestroy(&Fp));
  CHECK(VecDestroy(&Fm));
  CHECK(PetscRandomDestroy(&rnd));
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
}

/* Allocated and used nonzeros and mallocs of this rank's storage: the matrix itself, or for MPIAIJ its
   diagonal and off-diagonal SeqAIJ blocks. */
static void LocalStorage(Mat J, PetscReal *allocated, PetscReal *used, PetscReal *mallocs)
{
  PetscBool mpi;
  Mat       blocks[2] = {J, NULL};
  MatInfo   info;

  *allocated = *used = *mallocs = 0;
  CHECK(PetscObjectTypeCompare((PetscObject)J, MATMPIAIJ, &mpi));
  if (mpi) CHECK(MatMPIAIJGetSeqAIJ(J, &blocks[0], &blocks[1], NULL));
  for (int b = 0; b < 2 && blocks[b]; b++) {
    CHECK(MatGetInfo(blocks[b], MAT_LOCAL, &info));
    *allocated += info.nz_allocated;
    *used += info.nz_used;
    *mallocs += info.mallocs;
  }
}

/* Assemble the Jacobian of the every-element model twice at random states on comm; return this rank's
   storage after each assembly and the global number of nonzeros. */
static void AssembleTwice(MPI_Comm comm, PetscReal alloc[2], PetscReal used[2], PetscReal mallocs[2], PetscReal *nz_global)
{
  MbsModel    model;
  MbsStepper  st;
  PetscRandom rnd;
  MatInfo     info;

  BuildEveryElementModel(comm, &model);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetUp(st));
  CHECK(PetscRandomCreate(comm, &rnd));
  CHECK(PetscRandomSetSeed(rnd, 11));
  CHECK(PetscRandomSeed(rnd));
  for (int k = 0; k < 2; k++) {
    Randomize(st, rnd, st->X);
    CHECK(SNESComputeJacobian(st->snes, st->X, st->J, st->J));
    LocalStorage(st->J, &alloc[k], &used[k], &mallocs[k]);
  }
  CHECK(MatGetInfo(st->J, MAT_GLOBAL_SUM, &info));
  *nz_global = info.nz_used;
  CHECK(PetscRandomDestroy(&rnd));
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
}

/* The pattern recorded at the first assembly preallocates the matrix exactly: no unused slots, no
   mallocs, the same nonzeros at every assembly. On several ranks, where the blocks are built from the
   COO arrays, the distributed matrix has exactly the nonzeros of a serial copy of the same model. */
static void test_jacobian_preallocation_exact(void **state)
{
  PetscReal   alloc[2], used[2], mallocs[2], nz, nz_serial;
  PetscMPIInt size;

  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  AssembleTwice(PETSC_COMM_SELF, alloc, used, mallocs, &nz_serial);
  if (mallocs[0] != 0 || mallocs[1] != 0) Fail("Jacobian assembly allocated: %g then %g mallocs\n", mallocs[0], mallocs[1]);
  if (alloc[0] != used[0] || used[0] <= 0) Fail("Jacobian preallocation not exact: %g allocated, %g used\n", alloc[0], used[0]);
  if (used[1] != used[0] || alloc[1] != alloc[0]) Fail("Jacobian pattern changed between assemblies: %g -> %g nonzeros\n", used[0], used[1]);
  if (size > 1) {
    AssembleTwice(PETSC_COMM_WORLD, alloc, used, mallocs, &nz);
    if (mallocs[0] != 0 || mallocs[1] != 0) Fail("Distributed Jacobian assembly allocated: %g then %g mallocs\n", mallocs[0], mallocs[1]);
    if (used[1] != used[0]) Fail("Distributed Jacobian pattern changed between assemblies: %g -> %g nonzeros\n", used[0], used[1]);
    if (nz != nz_serial) Fail("Distributed Jacobian has %g nonzeros, the serial one %g\n", nz, nz_serial);
  }
}

typedef struct {
  const char *input;
  PetscReal   t_end;       /* 0: the input's own */
  PetscBool   all_momenta; /* all of J and L are conserved (no external field) */
} Example;

/* Runs an example with EM and asserts round-off conservation of energy and of the symmetric momentum
   maps (Jz under gravity about e3; all of J and L without external forces), and both constraint levels
   at every node. */
static void RunConservation(const Example *ex)
{
  char           path[PETSC_MAX_PATH_LEN], dir[] = "/tmp/gglmbs_test_em_XXXXXX";
  const char    *src = getenv("GGLMBS_SOURCE_DIR");
  MbsModel       model;
  MbsStepper     st;
  MbsRunConfig   cfg;
  MbsDiagnostics d0, d;
  PetscInt       nsteps;
  PetscReal      dE = 0, dJ = 0, gmax = 0, gvmax = 0;

  assert_non_null(src);
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/%s", src, ex->input);
  CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
  CHECK(MbsRunConfigSetDefaults(&cfg));
  CHECK(MbsModelLoadYAML(model, path, &cfg));
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetTimeStep(st, cfg.dt));
  CHECK(MbsStepperComputeDiagnostics(st, &d0));
  nsteps = (PetscInt)PetscCeilReal((ex->t_end > 0 ? ex->t_end : cfg.t_end) / cfg.dt - 1e-9);
  for (PetscInt n = 0; n < nsteps; n++) {
    CHECK(MbsStepperStep(st));
    CHECK(MbsStepperComputeDiagnostics(st, &d));
    dE    = PetscMax(dE, PetscAbsReal(d.E - d0.E) / PetscAbsReal(d0.E));
    dJ    = PetscMax(dJ, PetscAbsReal(d.J[2] - d0.J[2]));
    gmax  = PetscMax(gmax, d.g_max);
    gvmax = PetscMax(gvmax, d.gv_max);
    if (ex->all_momenta)
      for (int i = 0; i < 3; i++) dJ = PetscMax(dJ, PetscMax(PetscAbsReal(d.J[i] - d0.J[i]), PetscAbsReal(d.L[i] - d0.L[i])));
  }
  if (!(dE <= 1e-10)) Fail("%s: relative energy error %g > 1e-10\n", ex->input, (double)dE);
  if (!(dJ <= 1e-10)) Fail("%s: momentum map error %g > 1e-10\n", ex->input, (double)dJ);
  if (!(gmax <= 1e-10 && gvmax <= 1e-10)) Fail("%s: constraint residuals max |g| = %g, max |G M^-1 p| = %g > 1e-10\n", ex->input, (double)gmax, (double)gvmax);
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  rmdir(dir);
}

static void test_pendulum(void **state)
{
  const Example ex = {"inputs/pendulum3d.yaml", 0, PETSC_FALSE};
  RunConservation(&ex);
}

static void test_heavy_top(void **state)
{
  const Example ex = {"inputs/heavy_top.yaml", 0, PETSC_FALSE};
  RunConservation(&ex);
}

static void test_four_particle(void **state)
{
  const Example ex = {"inputs/four_particle.yaml", 0, PETSC_TRUE};
  RunConservation(&ex);
}

static void test_chain(void **state)
{
  const Example ex = {"inputs/chain1000.yaml", 0.05, PETSC_FALSE};
  RunConservation(&ex);
}

int main(int argc, char **argv)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_jacobian_matches_finite_differences),
    cmocka_unit_test(test_jacobian_preallocation_exact),
    cmocka_unit_test(test_pendulum),
    cmocka_unit_test(test_heavy_top),
    cmocka_unit_test(test_four_particle),
    cmocka_unit_test(test_chain),
  };
  int fails;

  if (PetscInitialize(&argc, &argv, NULL, NULL)) return 1;
  fails = cmocka_run_group_tests(tests, NULL, NULL);
  if (PetscFinalize()) return 1;
  return fails;
}

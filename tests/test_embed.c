/*
  gglmbs inside a host program (docs/library.md): options prefixes keep the host's solver options and the
  stepper's apart, the library leaves the options database as it found it, the stepper holds a reference on
  its model, and a failed step has a reason the host can ask for instead of an error.
  Uses only the public API.
*/
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdarg.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <cmocka.h>
#include <unistd.h>
#include <gglmbs/gglmbs.h>
#include "mbstest.h"

#define CHECK(call) assert_int_equal((int)(call), 0)

/* The spherical pendulum of the paper's first example: m = 1 on a rod of length 1, g = 9.81. */
static void CreatePendulum(MbsModel *model)
{
  const PetscReal x0[3] = {1, 0, 0}, v0[3] = {0, 1, 0}, origin[3] = {0, 0, 0}, g[3] = {0, 0, -9.81};
  PetscInt        bob;

  CHECK(MbsModelCreate(PETSC_COMM_WORLD, model));
  CHECK(MbsModelAddParticle(*model, "bob", 1.0, x0, v0, &bob));
  CHECK(MbsModelAddRod(*model, MBS_GROUND, origin, bob, NULL, 1.0, NULL));
  CHECK(MbsModelSetGravity(*model, g));
  CHECK(MbsModelSetUp(*model));
}

/* 20 steps of the pendulum with the given prefix; the final position of the bob. */
static void RunPendulum(const char prefix[], PetscReal x[3], char snes_type[64])
{
  MbsModel   model;
  MbsStepper st;
  SNES       snes;
  SNESType   type;

  CreatePendulum(&model);
  CHECK(MbsStepperCreate(model, &st));
  if (prefix) CHECK(MbsStepperSetOptionsPrefix(st, prefix));
  CHECK(MbsStepperSetTimeStep(st, 0.05));
  CHECK(MbsStepperSetFromOptions(st));
  for (int n = 0; n < 20; n++) CHECK(MbsStepperStep(st));
  CHECK(MbsStepperGetPointPosition(st, 0, NULL, x));
  CHECK(MbsStepperGetSNES(st, &snes));
  CHECK(SNESGetType(snes, &type));
  snprintf(snes_type, 64, "%s", type);
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
}

/* The host's own problem, x^2 = 2 from x = 1: Newton finds sqrt(2); ksponly stops after one linear solve at 1.5. */
static PetscErrorCode HostResidual(SNES snes, Vec X, Vec F, void *ctx)
{
  const PetscScalar *x;
  PetscScalar       *f;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(X, &x));
  PetscCall(VecGetArray(F, &f));
  f[0] = x[0] * x[0] - 2.0;
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscCall(VecRestoreArray(F, &f));
  PetscFunctionReturn(0);
}

static PetscErrorCode HostJacobian(SNES snes, Vec X, Mat J, Mat P, void *ctx)
{
  const PetscScalar *x;
  PetscScalar        d;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(X, &x));
  d = 2.0 * x[0];
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscCall(MatSetValue(P, 0, 0, d, INSERT_VALUES));
  PetscCall(MatAssemblyBegin(P, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(P, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscReal HostSolve(void)
{
  SNES               snes;
  Vec                x, r;
  Mat                J;
  const PetscScalar *a;
  PetscReal          value;

  CHECK(VecCreateSeq(PETSC_COMM_SELF, 1, &x));
  CHECK(VecDuplicate(x, &r));
  CHECK(MatCreateSeqDense(PETSC_COMM_SELF, 1, 1, NULL, &J));
  CHECK(SNESCreate(PETSC_COMM_SELF, &snes));
  CHECK(SNESSetFunction(snes, r, HostResidual, NULL));
  CHECK(SNESSetJacobian(snes, J, J, HostJacobian, NULL));
  CHECK(SNESSetFromOptions(snes));
  CHECK(VecSet(x, 1.0));
  CHECK(SNESSolve(snes, NULL, x));
  CHECK(VecGetArrayRead(x, &a));
  value = PetscRealPart(a[0]);
  CHECK(VecRestoreArrayRead(x, &a));
  CHECK(SNESDestroy(&snes));
  CHECK(MatDestroy(&J));
  CHECK(VecDestroy(&r));
  CHECK(VecDestroy(&x));
  return value;
}

/* A host that runs its own solver with -snes_type ksponly: under a prefix, gglmbs keeps Newton and gives the
   same trajectory as without the host's options; without a prefix the host's option would reach it. */
static void test_prefix_isolates_host_options(void **state)
{
  PetscReal reference[3], x[3];
  char      type[64];

  (void)state;
  RunPendulum("mbs1_", reference, type);
  assert_string_equal(type, SNESNEWTONLS);
  CHECK(PetscOptionsSetValue(NULL, "-snes_type", "ksponly"));
  assert_true(PetscAbsReal(HostSolve() - 1.5) < 1e-14); /* the host's option does act on the host's SNES */
  RunPendulum("mbs1_", x, type);
  assert_string_equal(type, SNESNEWTONLS);
  for (int i = 0; i < 3; i++) assert_true(x[i] == reference[i]);
  {
    /* without a prefix the host's ksponly reaches the stepper: refused, never run unconverged */
    MbsModel   model;
    MbsStepper st;
    CreatePendulum(&model);
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetFromOptions(st));
    CHECK(PetscPushErrorHandler(CaptureError, NULL));
    ClearError();
    assert_int_equal((int)MbsStepperStep(st), PETSC_ERR_ARG_INCOMP);
    CHECK(PetscPopErrorHandler());
    assert_non_null(strstr(error_message, "ksponly"));
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
  }
  /* and the stepper's own options reach it under its prefix */
  CHECK(PetscOptionsSetValue(NULL, "-mbs1_snes_type", "newtontr"));
  RunPendulum("mbs1_", x, type);
  assert_string_equal(type, SNESNEWTONTR);
  RunPendulum("mbs2_", x, type);
  assert_string_equal(type, SNESNEWTONLS);
  CHECK(PetscOptionsClearValue(NULL, "-mbs1_snes_type"));
  CHECK(PetscOptionsClearValue(NULL, "-snes_type"));
  assert_true(PetscAbsReal(HostSolve() - PetscSqrtReal(2.0)) < 1e-10);
}

/* -<prefix>mbs_ options reach the stepper and the model; unprefixed -mbs_ options do not. */
static void test_prefix_reaches_mbs_options(void **state)
{
  MbsModel    model;
  MbsStepper  st;
  const char *type, *prefix;
  PetscReal   h;

  (void)state;
  CHECK(PetscOptionsSetValue(NULL, "-mbs_scheme", "vi-b"));
  CHECK(PetscOptionsSetValue(NULL, "-host_mbs_scheme", "vi-a"));
  CHECK(PetscOptionsSetValue(NULL, "-host_mbs_dt", "0.025"));
  CreatePendulum(&model);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetOptionsPrefix(st, "ho"));
  CHECK(MbsStepperAppendOptionsPrefix(st, "st_"));
  CHECK(MbsStepperGetOptionsPrefix(st, &prefix));
  assert_string_equal(prefix, "host_");
  CHECK(MbsStepperSetFromOptions(st));
  CHECK(MbsStepperGetType(st, &type));
  assert_string_equal(type, MBSSCHEMEVIA);
  CHECK(MbsStepperGetTimeStep(st, &h));
  assert_true(h == 0.025);
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  CHECK(PetscOptionsClearValue(NULL, "-mbs_scheme"));
  CHECK(PetscOptionsClearValue(NULL, "-host_mbs_scheme"));
  CHECK(PetscOptionsClearValue(NULL, "-host_mbs_dt"));
}

/* The library writes nothing into the options database: MUMPS's workspace margin is set on the stepper's own
   factor (ICNTL(14) = 100), not as -mat_mumps_icntl_14 for every MUMPS solve of the host. */
static void test_options_database_untouched(void **state)
{
  MbsModel   model;
  MbsStepper st;
  SNES       snes;
  KSP        ksp;
  PC         pc;
  Mat        F;
  PetscInt   icntl;
  PetscBool  set;

  (void)state;
  CHECK(PetscOptionsSetValue(NULL, "-mbs3_pc_factor_mat_solver_type", "mumps"));
  CreatePendulum(&model);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetOptionsPrefix(st, "mbs3_"));
  CHECK(MbsStepperSetFromOptions(st));
  CHECK(MbsStepperStep(st));
  CHECK(PetscOptionsHasName(NULL, NULL, "-mat_mumps_icntl_14", &set));
  assert_false(set);
  CHECK(PetscOptionsHasName(NULL, "mbs3_", "-mat_mumps_icntl_14", &set));
  assert_false(set);
  CHECK(MbsStepperGetSNES(st, &snes));
  CHECK(SNESGetKSP(snes, &ksp));
  CHECK(KSPGetPC(ksp, &pc));
  CHECK(PCFactorGetMatrix(pc, &F));
  CHECK(MatMumpsGetIcntl(F, 14, &icntl));
  assert_int_equal((int)icntl, 100);
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  CHECK(PetscOptionsClearValue(NULL, "-mbs3_pc_factor_mat_solver_type"));
  /* a margin the user chose stays */
  CHECK(PetscOptionsSetValue(NULL, "-mbs3_pc_factor_mat_solver_type", "mumps"));
  CHECK(PetscOptionsSetValue(NULL, "-mbs3_mat_mumps_icntl_14", "37"));
  CreatePendulum(&model);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetOptionsPrefix(st, "mbs3_"));
  CHECK(MbsStepperSetFromOptions(st));
  CHECK(MbsStepperStep(st));
  CHECK(MbsStepperGetSNES(st, &snes));
  CHECK(SNESGetKSP(snes, &ksp));
  CHECK(KSPGetPC(ksp, &pc));
  CHECK(PCFactorGetMatrix(pc, &F));
  CHECK(MatMumpsGetIcntl(F, 14, &icntl));
  assert_int_equal((int)icntl, 37);
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  CHECK(PetscOptionsClearValue(NULL, "-mbs3_pc_factor_mat_solver_type"));
  CHECK(PetscOptionsClearValue(NULL, "-mbs3_mat_mumps_icntl_14"));
}

/* The stepper holds a reference on its model: the host may destroy its handle first. */
static void test_stepper_references_model(void **state)
{
  MbsModel   model, held;
  MbsStepper st;
  PetscInt   refct, nb;

  (void)state;
  CreatePendulum(&model);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(PetscObjectGetReference((PetscObject)model, &refct));
  assert_int_equal((int)refct, 2);
  CHECK(MbsModelDestroy(&model));
  assert_null(model);
  CHECK(MbsStepperGetModel(st, &held));
  CHECK(PetscObjectGetReference((PetscObject)held, &refct));
  assert_int_equal((int)refct, 1);
  CHECK(MbsModelGetNumBodies(held, &nb));
  assert_int_equal((int)nb, 1);
  for (int n = 0; n < 5; n++) CHECK(MbsStepperStep(st));
  CHECK(MbsStepperDestroy(&st));
  assert_null(st);
}

/* A step that cannot converge (one Newton iteration allowed) is not accepted: an error naming it by default;
   with MbsStepperSetErrorIfStepFails(st, PETSC_FALSE) a reason the host asks for, the state unchanged. */
static void test_failed_step_reason(void **state)
{
  MbsModel      model;
  MbsStepper    st;
  MbsStepReason reason;
  PetscInt      step;
  PetscReal     before[3], after[3];

  (void)state;
  CHECK(PetscOptionsSetValue(NULL, "-mbs4_snes_max_it", "1"));
  CHECK(PetscOptionsSetValue(NULL, "-mbs4_mbs_failure_checkpoint", "none"));
  CreatePendulum(&model);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetOptionsPrefix(st, "mbs4_"));
  CHECK(MbsStepperSetTimeStep(st, 0.05));
  CHECK(MbsStepperSetFromOptions(st));
  CHECK(MbsStepperGetConvergedReason(st, &reason));
  assert_int_equal(reason, MBS_STEP_ITERATING);
  CHECK(MbsStepperGetPointPosition(st, 0, NULL, before));
  CHECK(PetscPushErrorHandler(CaptureError, NULL));
  ClearError();
  assert_int_equal((int)MbsStepperStep(st), PETSC_ERR_NOT_CONVERGED);
  CHECK(PetscPopErrorHandler());
  assert_non_null(strstr(error_message, "did not converge"));
  CHECK(MbsStepperGetConvergedReason(st, &reason));
  assert_int_equal(reason, MBS_STEP_DIVERGED_NONLINEAR_SOLVE);
  assert_string_equal(MbsStepReasons[reason], "DIVERGED_NONLINEAR_SOLVE");
  CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_FALSE));
  CHECK(MbsStepperStep(st));
  CHECK(MbsStepperGetConvergedReason(st, &reason));
  assert_int_equal(reason, MBS_STEP_DIVERGED_NONLINEAR_SOLVE);
  CHECK(MbsStepperGetStepNumber(st, &step));
  assert_int_equal((int)step, 0);
  CHECK(MbsStepperGetPointPosition(st, 0, NULL, after));
  for (int i = 0; i < 3; i++) assert_true(after[i] == before[i]);
  {
    char dir[] = "/tmp/gglmbs_test_embed_XXXXXX", file[64];
    assert_non_null(mkdtemp(dir));
    CHECK(MbsStepperSetOutput(st, dir, 1));
    CHECK(MbsStepperSolve(st)); /* stops at the failed step, without an error */
    snprintf(file, sizeof(file), "%s/diagnostics.csv", dir);
    remove(file);
    remove(dir);
  }
  CHECK(MbsStepperGetStepNumber(st, &step));
  assert_int_equal((int)step, 0);
  CHECK(PetscOptionsClearValue(NULL, "-mbs4_snes_max_it"));
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  CHECK(PetscOptionsClearValue(NULL, "-mbs4_mbs_failure_checkpoint"));
}

/* A whole file's bytes (free them) and its size; and writing them back. */
static char *ReadWholeFile(const char *path, long *size)
{
  FILE *fp = fopen(path, "rb");
  char *bytes;

  assert_non_null(fp);
  assert_int_equal(fseek(fp, 0, SEEK_END), 0);
  *size = ftell(fp);
  rewind(fp);
  bytes = malloc((size_t)*size);
  assert_non_null(bytes);
  assert_int_equal((long)fread(bytes, 1, (size_t)*size, fp), *size);
  fclose(fp);
  return bytes;
}

static void WriteWholeFile(const char *path, const char *bytes, long size)
{
  FILE *fp = fopen(path, "wb");

  assert_non_null(fp);
  assert_int_equal((long)fwrite(bytes, 1, (size_t)size, fp), size);
  assert_int_equal(fclose(fp), 0);
}

/* Checkpoints verify themselves: a changed byte is caught by the checksum; a state that is not finite, or one that
   violates the constraints more than the state written did, is refused even with an intact checksum; and a restart
   after the final time is refused instead of running no step. */
static void test_checkpoint_verification(void **state)
{
  MbsModel   model;
  MbsStepper st, st2;
  Vec        q;
  char       dir[] = "/tmp/gglmbs_test_ckpt_XXXXXX", good[96], flipped[96], nan[96], moved_path[96];
  long       size;

  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(good, sizeof(good), "%s/good.bin", dir);
  snprintf(flipped, sizeof(flipped), "%s/flipped.bin", dir);
  snprintf(nan, sizeof(nan), "%s/nan.bin", dir);
  snprintf(moved_path, sizeof(moved_path), "%s/moved.bin", dir);
  CreatePendulum(&model);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetTimeStep(st, 0.05));
  for (int n = 0; n < 4; n++) CHECK(MbsStepperStep(st));
  CHECK(MbsStepperWriteCheckpoint(st, good));
  { /* the same file with one bit of one byte in its middle flipped */
    char *bytes;
    bytes = ReadWholeFile(good, &size);
    bytes[size / 2] ^= 0x01;
    WriteWholeFile(flipped, bytes, size);
    free(bytes);
  }
  { /* the same file with q_0 moved by 1 % (off the constraint manifold) and sealed again with a valid checksum: what
       a writer that stored another state than it measured, or a tool that edits checkpoints, would leave */
    char              *bytes;
    const PetscScalar *qa;
    unsigned char      be[8], *hit = NULL;
    double             q0, moved;
    uint64_t           u, h = 1469598103934665603ULL; /* the checkpoint checksum's FNV-1a start */
    CHECK(MbsStepperGetState(st, &q, NULL));
    CHECK(VecGetArrayRead(q, &qa));
    q0 = (double)qa[0];
    CHECK(VecRestoreArrayRead(q, &qa));
    memcpy(&u, &q0, 8);
    for (int i = 0; i < 8; i++) be[i] = (unsigned char)(u >> (56 - 8 * i)); /* PETSc binary files are big-endian */
    bytes = ReadWholeFile(good, &size);
    for (long i = 0; i + 8 <= size && !hit; i++)
      if (!memcmp(bytes + i, be, 8)) hit = (unsigned char *)bytes + i;
    assert_non_null(hit); /* the first copy of q_0 is the state's */
    moved = q0 * 1.01 + 0.01;
    memcpy(&u, &moved, 8);
    for (int i = 0; i < 8; i++) hit[i] = (unsigned char)(u >> (56 - 8 * i));
    for (long i = 0; i < size - 24; i++) h = (h ^ (unsigned char)bytes[i]) * 1099511628211ULL;
    memcpy(bytes + size - 8, &h, 8);
    WriteWholeFile(moved_path, bytes, size);
    free(bytes);
  }
  CHECK(VecSetValue(q, 0, PETSC_MAX_REAL * 10, INSERT_VALUES)); /* inf */
  CHECK(VecAssemblyBegin(q));
  CHECK(VecAssemblyEnd(q));
  CHECK(MbsStepperWriteCheckpoint(st, nan));
  CHECK(MbsStepperDestroy(&st));

  CHECK(MbsStepperCreate(model, &st2));
  CHECK(MbsStepperSetTimeStep(st2, 0.05));
  CHECK(PetscPushErrorHandler(CaptureError, NULL));
  ClearError();
  assert_int_equal((int)MbsStepperLoadCheckpoint(st2, flipped), PETSC_ERR_FILE_UNEXPECTED);
  assert_non_null(strstr(error_message, "checksum does not match"));
  ClearError();
  assert_int_equal((int)MbsStepperLoadCheckpoint(st2, nan), PETSC_ERR_FILE_UNEXPECTED);
  assert_non_null(strstr(error_message, "not finite"));
  ClearError();
  assert_int_equal((int)MbsStepperLoadCheckpoint(st2, moved_path), PETSC_ERR_FILE_UNEXPECTED);
  assert_non_null(strstr(error_message, "violates the constraints"));
  CHECK(PetscPopErrorHandler());
  CHECK(MbsStepperLoadCheckpoint(st2, good)); /* the intact file loads */
  CHECK(MbsStepperSetFinalTime(st2, 0.1));    /* the checkpoint is at t = 0.2 */
  CHECK(PetscPushErrorHandler(CaptureError, NULL));
  ClearError();
  assert_int_equal((int)MbsStepperSolve(st2), PETSC_ERR_USER_INPUT);
  CHECK(PetscPopErrorHandler());
  assert_non_null(strstr(error_message, "after its final time"));
  CHECK(MbsStepperDestroy(&st2));
  CHECK(MbsModelDestroy(&model));
  remove(good);
  remove(flipped);
  remove(nan);
  remove(moved_path);
  rmdir(dir);
}

/* The signal of SignalCase(): raised as step 7 starts, from the external force (once) ... */
typedef struct {
  MbsStepper st;
  int        raised;
} SignalContext;

static PetscErrorCode SignalAtStep7(MbsStepper st, PetscReal t, PetscReal h, Vec q, Vec p, Vec F, void *ctx)
{
  SignalContext *sc = (SignalContext *)ctx;
  PetscInt       step;

  PetscFunctionBegin;
  PetscCall(MbsStepperGetStepNumber(st, &step));
  if (step == 6 && !sc->raised) {
    sc->raised = 1;
    raise(SIGTERM);
  }
  PetscFunctionReturn(0);
}

/* ... or, under modified Newton, in step 7 after its kept Jacobian was refreshed: iteration 1 asks for a fresh
   Jacobian, the signal comes at iteration 2 (an SNES monitor runs before the convergence test that sees it). */
static PetscErrorCode SignalAfterRefresh(SNES snes, PetscInt it, PetscReal fnorm, void *ctx)
{
  SignalContext *sc = (SignalContext *)ctx;
  PetscInt       step;

  PetscFunctionBegin;
  PetscCall(MbsStepperGetStepNumber(sc->st, &step));
  if (step != 6 || sc->raised) PetscFunctionReturn(0);
  if (it == 1) PetscCall(SNESSetLagJacobian(snes, -2));
  if (it == 2) {
    sc->raised = 1;
    raise(SIGTERM);
  }
  PetscFunctionReturn(0);
}

/* A signal during a step (a long step of a large model must not delay it until the step ends): the step is abandoned
   at its next Newton iteration, MbsStepperSolve() writes a checkpoint of the state at the step's start and returns
   PETSC_ERR_SIG with the reason MBS_STEP_INTERRUPTED; the run continued from the checkpoint ends exactly where the
   uninterrupted run does, bit for bit: under modified Newton also when the abandoned step had refreshed the kept
   Jacobian (the step's start restores the one it replaced, MbsStepperAbandonStep_Private()). */
static void SignalCase(PetscBool reuse)
{
  MbsModel      model;
  MbsStepper    st;
  PetscReal     straight[3], continued[3];
  PetscInt      step, its_straight, its_continued;
  MbsStepReason reason;
  SignalContext sc    = {NULL, 0};
  char          dir[] = "/tmp/gglmbs_test_signal_XXXXXX", file[96];

  assert_non_null(mkdtemp(dir));
  CreatePendulum(&model);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetTimeStep(st, 0.05));
  CHECK(MbsStepperSetFinalTime(st, 0.5));
  CHECK(MbsStepperSetJacobianReuse(st, reuse, 0.75));
  CHECK(MbsStepperSolve(st));
  CHECK(MbsStepperGetPointPosition(st, 0, NULL, straight));
  CHECK(MbsStepperGetNewtonIterations(st, NULL, &its_straight));
  CHECK(MbsStepperDestroy(&st));

  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetTimeStep(st, 0.05));
  CHECK(MbsStepperSetFinalTime(st, 0.5));
  CHECK(MbsStepperSetJacobianReuse(st, reuse, 0.75));
  CHECK(MbsStepperSetOutput(st, dir, 1));
  sc.st = st;
  if (reuse) {
    SNES snes;
    CHECK(MbsStepperGetSNES(st, &snes));
    CHECK(SNESMonitorSet(snes, SignalAfterRefresh, &sc, NULL));
  } else
    CHECK(MbsStepperSetExternalForce(st, SignalAtStep7, &sc));
  CHECK(MbsInterruptHandlerPush());
  CHECK(PetscPushErrorHandler(CaptureError, NULL));
  ClearError();
  assert_int_equal((int)MbsStepperSolve(st), PETSC_ERR_SIG);
  CHECK(PetscPopErrorHandler());
  CHECK(MbsInterruptHandlerPop());
  assert_int_equal(sc.raised, 1);
  assert_non_null(strstr(error_message, "Interrupted by SIGTERM after step 6 of 10"));
  CHECK(MbsStepperGetConvergedReason(st, &reason));
  assert_int_equal((int)reason, (int)MBS_STEP_INTERRUPTED);
  CHECK(MbsStepperGetStepNumber(st, &step));
  assert_int_equal((int)step, 6); /* the abandoned step 7 left the state at its start */
  CHECK(MbsStepperDestroy(&st));

  snprintf(file, sizeof(file), "%s/checkpoint.bin", dir);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetTimeStep(st, 0.05));
  CHECK(MbsStepperSetFinalTime(st, 0.5));
  CHECK(MbsStepperSetJacobianReuse(st, reuse, 0.75));
  CHECK(MbsStepperLoadCheckpoint(st, file));
  CHECK(MbsStepperGetStepNumber(st, &step));
  assert_int_equal((int)step, 6);
  CHECK(MbsStepperSolve(st));
  CHECK(MbsStepperGetPointPosition(st, 0, NULL, continued));
  CHECK(MbsStepperGetNewtonIterations(st, NULL, &its_continued));
  for (int i = 0; i < 3; i++)
    if (continued[i] != straight[i])
      fail_msg("%s: the continued run ends at x[%d] = %.17g, the uninterrupted one at %.17g",
               reuse ? "modified Newton" : "Newton", i, (double)continued[i], (double)straight[i]);
  assert_int_equal((int)its_continued, (int)its_straight); /* the abandoned iterations are not counted */
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  remove(file);
  snprintf(file, sizeof(file), "%s/diagnostics.csv", dir);
  remove(file);
  rmdir(dir);
}

static void test_signal_during_step(void **state)
{
  (void)state;
  SignalCase(PETSC_FALSE);
  SignalCase(PETSC_TRUE);
}

/* A host's own output: registered by name, attached like a monitor, called at the documented points. */
typedef struct {
  PetscInt begins, writes, lasts, finishes, ends, destroys, every_seen;
} OutputCounts;
static OutputCounts output_counts;

static PetscErrorCode CountBegin(MbsStepper st, PetscInt every, void *ctx)
{
  output_counts.begins++;
  output_counts.every_seen = every;
  return 0;
}
static PetscErrorCode CountWrite(MbsStepper st, PetscInt every, PetscBool last, void *ctx)
{
  output_counts.writes++;
  output_counts.lasts += last;
  return 0;
}
static PetscErrorCode CountFinish(MbsStepper st, void *ctx)
{
  output_counts.finishes++;
  return 0;
}
static PetscErrorCode CountEnd(MbsStepper st, void *ctx)
{
  output_counts.ends++;
  return 0;
}
static PetscErrorCode CountDestroy(void **ctx)
{
  output_counts.destroys++;
  return 0;
}
static PetscErrorCode CountCreate(MbsStepper st, MbsOutputOps *ops, void **ctx)
{
  ops->begin   = CountBegin;
  ops->write   = CountWrite;
  ops->finish  = CountFinish;
  ops->end     = CountEnd;
  ops->destroy = CountDestroy;
  *ctx         = NULL;
  return 0;
}

static void test_output_interface(void **state)
{
  MbsModel   model;
  MbsStepper st;
  char       dir[] = "/tmp/gglmbs_test_output_XXXXXX", file[64];

  (void)state;
  memset(&output_counts, 0, sizeof(output_counts));
  assert_non_null(mkdtemp(dir));
  CHECK(MbsOutputRegister("count", CountCreate));
  CreatePendulum(&model);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetTimeStep(st, 0.05));
  CHECK(MbsStepperSetFinalTime(st, 0.5));
  CHECK(MbsStepperSetOutput(st, dir, 1));
  CHECK(MbsStepperAddOutput(st, "count", 3));
  CHECK(MbsStepperSolve(st));
  /* the initial state and 10 steps; the last of them is the last; Solve brackets them */
  assert_int_equal((int)output_counts.writes, 11);
  assert_int_equal((int)output_counts.lasts, 1);
  assert_int_equal((int)output_counts.begins, 1);
  assert_int_equal((int)output_counts.every_seen, 3);
  assert_int_equal((int)output_counts.finishes, 1);
  assert_int_equal((int)output_counts.ends, 1);
  /* a host's own loop: write() after every step, no begin or end */
  for (int n = 0; n < 2; n++) CHECK(MbsStepperStep(st));
  assert_int_equal((int)output_counts.writes, 13);
  assert_int_equal((int)output_counts.ends, 1);
  CHECK(MbsStepperDestroy(&st));
  assert_int_equal((int)output_counts.destroys, 1);
  CHECK(MbsModelDestroy(&model));
  snprintf(file, sizeof(file), "%s/diagnostics.csv", dir);
  remove(file);
  remove(dir);
}

/* The number of steps trajectory.xdmf lists (its <Grid Name="step ...">), -1 if it cannot be read */
static int CountListedSteps(const char path[])
{
  FILE *fp = fopen(path, "r");
  char  line[512];
  int   n = 0;

  if (!fp) return -1;
  while (fgets(line, sizeof(line), fp))
    if (strstr(line, "<Grid Name=\"step ")) n++;
  fclose(fp);
  return n;
}

/* A host that reads the trajectory after MbsStepperSolve(), before destroying the stepper, finds every written step
   listed, with the sync interval far longer than the run: the solve's end syncs them; and a failed step's solve too */
static void test_trajectory_synced_at_end(void **state)
{
  MbsModel   model;
  MbsStepper st;
  char       dir[] = "/tmp/gglmbs_test_traj_XXXXXX", file[96];

  (void)state;
  assert_non_null(mkdtemp(dir));
  snprintf(file, sizeof(file), "%s/trajectory.xdmf", dir);
  CreatePendulum(&model);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetTimeStep(st, 0.05));
  CHECK(MbsStepperSetFinalTime(st, 0.5));
  CHECK(MbsStepperSetOutput(st, dir, 1));
  CHECK(MbsStepperSetTrajectory(st, "xdmf", 2));
  CHECK(MbsStepperSetTrajectorySync(st, 1e9));
  CHECK(MbsStepperSolve(st));
  assert_int_equal(CountListedSteps(file), 6); /* steps 0, 2, ..., 10 */
  CHECK(MbsStepperDestroy(&st));
  /* the first step fails (one Newton iteration allowed): the solve returns with the initial frame listed */
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetTimeStep(st, 0.05));
  CHECK(MbsStepperSetFinalTime(st, 0.5));
  CHECK(MbsStepperSetOutput(st, dir, 1));
  CHECK(MbsStepperSetTrajectory(st, "xdmf", 2));
  CHECK(MbsStepperSetTrajectorySync(st, 1e9));
  CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_FALSE));
  {
    SNES snes;
    CHECK(MbsStepperGetSNES(st, &snes));
    CHECK(SNESSetTolerances(snes, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT, 1, PETSC_DEFAULT));
  }
  CHECK(MbsStepperSolve(st));
  {
    MbsStepReason reason;
    CHECK(MbsStepperGetConvergedReason(st, &reason));
    assert_true(reason < 0);
  }
  assert_int_equal(CountListedSteps(file), 1);
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  {
    char cmd[160];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
  }
}

int main(int argc, char **argv)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_prefix_isolates_host_options), cmocka_unit_test(test_prefix_reaches_mbs_options),
    cmocka_unit_test(test_options_database_untouched),   cmocka_unit_test(test_stepper_references_model),
    cmocka_unit_test(test_failed_step_reason),           cmocka_unit_test(test_output_interface),
    cmocka_unit_test(test_checkpoint_verification),      cmocka_unit_test(test_signal_during_step),
    cmocka_unit_test(test_trajectory_synced_at_end),
  };
  const char *filter = getenv("GGLMBS_TEST_FILTER");
  int         fails;

  if (PetscInitialize(&argc, &argv, NULL, NULL)) return 1;
  if (filter) cmocka_set_test_filter(filter);
  fails = _cmocka_run_group_tests("embed", tests, sizeof(tests) / sizeof(tests[0]), NULL, NULL);
  if (PetscFinalize()) return 1;
  return fails;
}

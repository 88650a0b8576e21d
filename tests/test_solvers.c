/* Linear solvers (docs/solvers.md): the named field splits of every scheme are addressable from the
   options database (-fieldsplit_<field>_..., and -mbs_fieldsplit_split primal_dual), the documented
   block preconditioner (Schur complement on the multipliers, selfp) gives the LU trajectory on a net,
   and keeps working when a scheme parameter changes the layout after set-up.

   GGLMBS_TEST_SOLVERS_EXTRA="options" appends options to the block-preconditioned runs (to see the
   test fail, e.g. "-snes_atol 1e-8 -snes_stol 1e-6 -mbs_stagnation_tol 1e-6": Newton stopped short). */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <gglmbs/gglmbs.h>
#include "stepper/stepperimpl.h"

static void Fail(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fail();
}

#define CHECK(call) assert_int_equal((int)(call), 0)

/* The documented block preconditioner (docs/solvers.md), one rank and several. */
static const char *const block_serial =
  "-mbs_fieldsplit_split primal_dual -ksp_type gmres -ksp_pc_side right -ksp_rtol 1e-8 "
  "-pc_type fieldsplit -pc_fieldsplit_type schur -pc_fieldsplit_schur_fact_type lower "
  "-pc_fieldsplit_schur_precondition selfp "
  "-fieldsplit_primal_ksp_type preonly -fieldsplit_primal_pc_type ilu "
  "-fieldsplit_dual_ksp_type preonly -fieldsplit_dual_pc_type lu -fieldsplit_dual_pc_factor_mat_solver_type klu";
static const char *const block_parallel =
  "-mbs_fieldsplit_split primal_dual -ksp_type gmres -ksp_pc_side right -ksp_rtol 1e-8 "
  "-pc_type fieldsplit -pc_fieldsplit_type schur -pc_fieldsplit_schur_fact_type lower "
  "-pc_fieldsplit_schur_precondition selfp "
  "-fieldsplit_primal_ksp_type preonly -fieldsplit_primal_pc_type bjacobi -fieldsplit_primal_sub_pc_type ilu "
  "-fieldsplit_dual_ksp_type preonly -fieldsplit_dual_pc_type lu -fieldsplit_dual_pc_factor_mat_solver_type mumps "
  "-fieldsplit_dual_mat_mumps_icntl_14 200";
/* The reference: the default LU (UMFPACK on one rank, MUMPS on several) */
static const char *const lu_serial   = "-ksp_type preonly -pc_type lu -pc_factor_mat_solver_type umfpack";
static const char *const lu_parallel = "-ksp_type preonly -pc_type lu -pc_factor_mat_solver_type mumps";

/* A net of nx x ny particles (0.1 g, 1 cm meshes) joined by rods along its grid lines, its row j = 0
   fixed, hanging at about 11 degrees from the vertical under gravity (inputs/net100x100.yaml, smaller).
   Built through the C API so that the test does not depend on the input generators. */
static void BuildNet(PetscInt nx, PetscInt ny, MbsModel *model)
{
  const PetscReal g[3] = {0, 0, -9.81}, s = 0.01, n = PetscSqrtReal(0.2 * 0.2 + 1.0);
  const PetscReal u[3] = {1, 0, 0}, w[3] = {0, 0.2 / n, -1.0 / n};
  PetscInt       *body;

  CHECK(MbsModelCreate(PETSC_COMM_WORLD, model));
  CHECK(MbsModelSetGravity(*model, g));
  CHECK(PetscMalloc1(nx * ny, &body));
  for (PetscInt j = 0; j < ny; j++)
    for (PetscInt i = 0; i < nx; i++) {
      PetscReal x[3];
      char      name[64];
      for (int k = 0; k < 3; k++) x[k] = s * (i * u[k] + j * w[k]);
      snprintf(name, sizeof(name), "net.%d.%d", (int)i, (int)j);
      CHECK(MbsModelAddParticle(*model, name, 1e-4, x, NULL, &body[j * nx + i]));
      if (j == 0) CHECK(MbsModelAddFixedPoint(*model, body[j * nx + i], NULL, x, NULL));
    }
  for (PetscInt j = 0; j < ny; j++)
    for (PetscInt i = 0; i < nx; i++) {
      if (i + 1 < nx && j > 0)
        CHECK(MbsModelAddRod(*model, body[j * nx + i], NULL, body[j * nx + i + 1], NULL, s, NULL));
      if (j + 1 < ny) CHECK(MbsModelAddRod(*model, body[j * nx + i], NULL, body[(j + 1) * nx + i], NULL, s, NULL));
    }
  CHECK(PetscFree(body));
  CHECK(MbsModelSetUp(*model));
}

static void SetOptions(const char *opts, const char *extra)
{
  CHECK(PetscOptionsClear(NULL));
  CHECK(PetscOptionsInsertString(NULL, opts));
  if (extra) CHECK(PetscOptionsInsertString(NULL, extra));
}

/* The set-up of a stepper of the model under the options (scheme NULL: the default) must fail with the error code
   and a message that says text */
static void ExpectSetUpError(MbsModel model, const char *opts, const char *extra, const char *scheme,
                             PetscErrorCode code, const char *text, const char *what)
{
  MbsStepper     st;
  PetscErrorCode ierr;
  const char    *msg = NULL;

  SetOptions(opts, extra);
  CHECK(MbsStepperCreate(model, &st));
  if (scheme) CHECK(MbsStepperSetType(st, scheme));
  CHECK(MbsStepperSetFromOptions(st));
  CHECK(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MbsStepperSetUp(st);
  CHECK(PetscPopErrorHandler());
  if (ierr) CHECK(PetscErrorMessage(ierr, NULL, (char **)&msg));
  if (ierr != code || !msg || !strstr(msg, text))
    Fail("%s: set-up returned %d ('%s'), expected %d saying '%s'\n", what, (int)ierr, msg ? msg : "(none)", (int)code,
         text);
  CHECK(MbsStepperDestroy(&st));
  CHECK(PetscOptionsClear(NULL));
}

typedef struct {
  PetscInt   steps;
  Vec       *q, *p;  /* state after every step */
  PetscReal *E;      /* energy at every node, E[0] initial */
  PetscInt   newton; /* Newton iterations */
  PetscInt   linear; /* linear (Krylov) iterations */
} Trajectory;

static void RunNet(MbsModel model, const char *scheme, const char *opts, const char *extra, PetscInt steps,
                   Trajectory *tr)
{
  MbsStepper     st;
  MbsDiagnostics d;
  SNES           snes;
  Vec            q, p;

  SetOptions(opts, extra);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetType(st, scheme));
  CHECK(MbsStepperSetTimeStep(st, 1e-3));
  CHECK(MbsStepperSetFromOptions(st));
  CHECK(MbsStepperGetSNES(st, &snes));
  tr->steps = steps;
  CHECK(PetscMalloc3(steps + 1, &tr->q, steps + 1, &tr->p, steps + 1, &tr->E));
  CHECK(MbsStepperComputeDiagnostics(st, &d));
  tr->E[0]   = d.E;
  tr->linear = 0;
  for (PetscInt n = 1; n <= steps; n++) {
    PetscInt lits;
    CHECK(MbsStepperStep(st));
    CHECK(SNESGetLinearSolveIterations(snes, &lits));
    tr->linear += lits;
    CHECK(MbsStepperComputeDiagnostics(st, &d));
    tr->E[n] = d.E;
    CHECK(MbsStepperGetState(st, &q, &p));
    CHECK(VecDuplicate(q, &tr->q[n]));
    CHECK(VecDuplicate(p, &tr->p[n]));
    CHECK(VecCopy(q, tr->q[n]));
    CHECK(VecCopy(p, tr->p[n]));
  }
  CHECK(MbsStepperGetNewtonIterations(st, NULL, &tr->newton));
  CHECK(MbsStepperDestroy(&st));
  CHECK(PetscOptionsClear(NULL));
}

static void FreeTrajectory(Trajectory *tr)
{
  for (PetscInt n = 1; n <= tr->steps; n++) {
    CHECK(VecDestroy(&tr->q[n]));
    CHECK(VecDestroy(&tr->p[n]));
  }
  CHECK(PetscFree3(tr->q, tr->p, tr->E));
}

/* max over the steps of |x - x_ref|_inf / max over the steps of |x_ref|_inf, for q and for p */
static void Deviation(const Trajectory *a, const Trajectory *ref, PetscReal *dq, PetscReal *dp)
{
  PetscReal nq = 0, np = 0, eq = 0, ep = 0, t;
  Vec       diff;

  CHECK(VecDuplicate(ref->q[1], &diff));
  for (PetscInt n = 1; n <= ref->steps; n++) {
    CHECK(VecNorm(ref->q[n], NORM_INFINITY, &t));
    nq = PetscMax(nq, t);
    CHECK(VecNorm(ref->p[n], NORM_INFINITY, &t));
    np = PetscMax(np, t);
    CHECK(VecWAXPY(diff, -1.0, ref->q[n], a->q[n]));
    CHECK(VecNorm(diff, NORM_INFINITY, &t));
    eq = PetscMax(eq, t);
    CHECK(VecWAXPY(diff, -1.0, ref->p[n], a->p[n]));
    CHECK(VecNorm(diff, NORM_INFINITY, &t));
    ep = PetscMax(ep, t);
  }
  CHECK(VecDestroy(&diff));
  *dq = eq / nq;
  *dp = ep / np;
}

/* The block preconditioner on a 10 x 10 net, 30 steps: the same trajectory as LU (q and p to 1e-10
   relative at every step), EM's energy conserved to 1e-10 relative, and it really iterated (GMRES,
   more linear iterations than Newton iterations). EM (default), VI-B and VI-S. */
static void test_block_preconditioner_matches_lu(void **state)
{
  static const char *const schemes[] = {"em", "vi-b", "vi-s"};
  const PetscInt           steps     = 30;
  const char              *extra     = getenv("GGLMBS_TEST_SOLVERS_EXTRA");
  PetscMPIInt              size;
  MbsModel                 model;

  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  BuildNet(10, 10, &model);
  for (size_t s = 0; s < sizeof(schemes) / sizeof(schemes[0]); s++) {
    Trajectory lu, fs;
    PetscReal  dq, dp, dE = 0;

    RunNet(model, schemes[s], size == 1 ? lu_serial : lu_parallel, NULL, steps, &lu);
    RunNet(model, schemes[s], size == 1 ? block_serial : block_parallel, extra, steps, &fs);
    Deviation(&fs, &lu, &dq, &dp);
    if (getenv("GGLMBS_TEST_VERBOSE"))
      printf("%s: Newton its LU %d, block %d; linear its block %d; deviation q %.2e p %.2e\n", schemes[s],
             (int)lu.newton, (int)fs.newton, (int)fs.linear, (double)dq, (double)dp);
    if (!(fs.linear > fs.newton))
      Fail("%s: the block preconditioner made %d linear iterations in %d Newton iterations: not a Krylov solve\n",
           schemes[s], (int)fs.linear, (int)fs.newton);
    if (!(dq <= 1e-10 && dp <= 1e-10))
      Fail("%s: block-preconditioned trajectory deviates from LU's by %.3e (q) and %.3e (p) relative (> 1e-10)\n",
           schemes[s], (double)dq, (double)dp);
    if (!strcmp(schemes[s], "em")) {
      for (PetscInt n = 1; n <= steps; n++) dE = PetscMax(dE, PetscAbsReal(fs.E[n] - fs.E[0]) / PetscAbsReal(fs.E[0]));
      if (!(dE <= 1e-10)) Fail("em: energy drift %.3e relative with the block preconditioner (> 1e-10)\n", (double)dE);
    }
    FreeTrajectory(&lu);
    FreeTrajectory(&fs);
  }
  CHECK(MbsModelDestroy(&model));
}

/* A scheme parameter changed after set-up lays the unknowns out again (MbsStepperSetSchemeParameter()):
   the stepper must replace its field splits, not add to them. VI-B, 3 steps, vartheta 1/2 -> 0.4, 3 more
   steps: the block-preconditioned run has 2 splits and ends where LU's does (1e-10 relative). */
static void RunReset(MbsModel model, const char *opts, Vec *q, PetscInt *nsplit)
{
  MbsStepper st;
  SNES       snes;
  KSP        ksp, *sub;
  PC         pc;
  PCType     type;
  PetscBool  isfs;
  Vec        qs;

  SetOptions(opts, NULL);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetType(st, "vi-b"));
  CHECK(MbsStepperSetTimeStep(st, 1e-3));
  CHECK(MbsStepperSetFromOptions(st));
  for (int n = 0; n < 3; n++) CHECK(MbsStepperStep(st));
  CHECK(MbsStepperSetSchemeParameter(st, "vartheta", 0.4));
  for (int n = 0; n < 3; n++) CHECK(MbsStepperStep(st));
  CHECK(MbsStepperGetSNES(st, &snes));
  CHECK(SNESGetKSP(snes, &ksp));
  CHECK(KSPGetPC(ksp, &pc));
  CHECK(PCGetType(pc, &type));
  CHECK(PetscStrcmp(type, PCFIELDSPLIT, &isfs));
  *nsplit = 0;
  if (isfs) {
    CHECK(PCFieldSplitGetSubKSP(pc, nsplit, &sub));
    CHECK(PetscFree(sub));
  }
  CHECK(MbsStepperGetState(st, &qs, NULL));
  CHECK(VecDuplicate(qs, q));
  CHECK(VecCopy(qs, *q));
  CHECK(MbsStepperDestroy(&st));
  CHECK(PetscOptionsClear(NULL));
}

static void test_block_preconditioner_after_reset(void **state)
{
  PetscMPIInt size;
  MbsModel    model;
  Vec         qlu, qfs;
  PetscInt    nlu, nfs;
  PetscReal   diff, norm;

  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  BuildNet(6, 6, &model);
  RunReset(model, size == 1 ? lu_serial : lu_parallel, &qlu, &nlu);
  RunReset(model, size == 1 ? block_serial : block_parallel, &qfs, &nfs);
  if (nfs != 2) Fail("after a re-set-up the block preconditioner has %d splits, expected 2\n", (int)nfs);
  CHECK(VecNorm(qlu, NORM_INFINITY, &norm));
  CHECK(VecAXPY(qfs, -1.0, qlu));
  CHECK(VecNorm(qfs, NORM_INFINITY, &diff));
  if (!(diff <= 1e-10 * norm))
    Fail("after a re-set-up the block-preconditioned state is %.3e from LU's (norm %.3e)\n", (double)diff,
         (double)norm);
  CHECK(VecDestroy(&qlu));
  CHECK(VecDestroy(&qfs));
  CHECK(MbsModelDestroy(&model));
}

/* Set up the stepper's KSP on an assembled Jacobian with the given options, and return the field
   split's sub-KSPs' prefixes, their sub-PC types and the sizes of their operators. */
static void SetUpSplits(MbsModel model, const char *scheme, const char *opts, PetscInt *nsplit, char prefix[][64],
                        char pctype[][32], PetscInt size[])
{
  MbsStepper st;
  SNES       snes;
  KSP        ksp, *sub;
  PC         pc;

  SetOptions(opts, NULL);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetType(st, scheme));
  CHECK(MbsStepperSetTimeStep(st, 1e-3));
  CHECK(MbsStepperSetFromOptions(st));
  CHECK(MbsStepperSetUp(st));
  CHECK(MbsStepperGetSNES(st, &snes));
  /* the Jacobian at the initial state (q1 = q0, p1 = p0, zero multipliers) */
  CHECK(MbsModelCoordinatesToLocal(st->model, st->q, st->q0));
  CHECK(MbsModelCoordinatesToLocal(st->model, st->p, st->p0));
  CHECK(VecSet(st->X, 0.0));
  CHECK(SNESComputeJacobian(snes, st->X, st->J, st->J));
  CHECK(SNESGetKSP(snes, &ksp));
  CHECK(KSPSetOperators(ksp, st->J, st->J));
  CHECK(KSPSetUp(ksp));
  CHECK(KSPGetPC(ksp, &pc));
  CHECK(PCFieldSplitGetSubKSP(pc, nsplit, &sub));
  for (PetscInt k = 0; k < *nsplit; k++) {
    const char *pre;
    PCType      type;
    PC          spc;
    Mat         A;
    CHECK(KSPGetOptionsPrefix(sub[k], &pre));
    CHECK(PetscStrncpy(prefix[k], pre ? pre : "", 64));
    CHECK(KSPGetPC(sub[k], &spc));
    CHECK(PCGetType(spc, &type));
    CHECK(PetscStrncpy(pctype[k], type ? type : "", 32));
    CHECK(KSPGetOperators(sub[k], &A, NULL));
    CHECK(MatGetSize(A, &size[k], NULL));
  }
  CHECK(PetscFree(sub));
  CHECK(MbsStepperDestroy(&st));
  CHECK(PetscOptionsClear(NULL));
}

/* Every scheme's fields are splits addressable by name: -fieldsplit_<field>_pc_type reaches the split of
   that field, whose operator has the field's size; with -mbs_fieldsplit_split primal_dual the two splits
   "primal" (q, p, v) and "dual" (lambda, gamma). */
static void test_fieldsplit_by_name(void **state)
{
  static const struct {
    const char *scheme;
    PetscInt    nfields;
    const char *field[5];
  } cases[] = {
    {"em", 4, {"q", "p", "lambda", "gamma"}},        {"em-g", 3, {"q", "p", "lambda"}},
    {"vi-s", 5, {"q", "p", "v", "lambda", "gamma"}}, {"vi-a", 5, {"q", "p", "v", "lambda", "gamma"}},
    {"vi-b", 5, {"q", "p", "v", "lambda", "gamma"}},
  };
  MbsModel model;
  PetscInt nq, nc;

  BuildNet(4, 3, &model);
  CHECK(MbsModelGetSizes(model, NULL, &nq, NULL, &nc));
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    char opts[1024] = "-ksp_type gmres -pc_type fieldsplit -pc_fieldsplit_type additive", prefix[5][64], type[5][32],
         want[64];
    PetscInt nsplit, size[5], ncoord = 0, ncon = 0;
    /* a distinct, valid PC type per field (a multiplier block is zero: only "none" sets up on it) */
    static const char *const pcs[5] = {"jacobi", "pbjacobi", "none", "none", "none"};
    for (PetscInt f = 0; f < cases[c].nfields; f++) {
      const PetscBool con = (PetscBool)(!strcmp(cases[c].field[f], "lambda") || !strcmp(cases[c].field[f], "gamma"));
      char            o[128];
      snprintf(o, sizeof(o), " -fieldsplit_%s_pc_type %s", cases[c].field[f], con ? "none" : pcs[f]);
      strcat(opts, o);
    }
    SetUpSplits(model, cases[c].scheme, opts, &nsplit, prefix, type, size);
    if (nsplit != cases[c].nfields)
      Fail("%s: %d splits, expected %d\n", cases[c].scheme, (int)nsplit, (int)cases[c].nfields);
    for (PetscInt f = 0; f < nsplit; f++) {
      const PetscBool con = (PetscBool)(!strcmp(cases[c].field[f], "lambda") || !strcmp(cases[c].field[f], "gamma"));
      snprintf(want, sizeof(want), "fieldsplit_%s_", cases[c].field[f]);
      if (strcmp(prefix[f], want))
        Fail("%s: split %d has prefix '%s', expected '%s'\n", cases[c].scheme, (int)f, prefix[f], want);
      if (strcmp(type[f], con ? "none" : pcs[f]))
        Fail("%s: -%spc_type %s not applied (PC type %s)\n", cases[c].scheme, want, con ? "none" : pcs[f], type[f]);
      if (size[f] != (con ? nc : nq))
        Fail("%s: split %s has %d rows, expected %d\n", cases[c].scheme, cases[c].field[f], (int)size[f],
             (int)(con ? nc : nq));
      if (con)
        ncon++;
      else
        ncoord++;
    }
    snprintf(opts, sizeof(opts),
             "-mbs_fieldsplit_split primal_dual -ksp_type gmres -pc_type fieldsplit -pc_fieldsplit_type additive "
             "-fieldsplit_primal_pc_type jacobi -fieldsplit_dual_pc_type none");
    SetUpSplits(model, cases[c].scheme, opts, &nsplit, prefix, type, size);
    if (nsplit != 2) Fail("%s, primal_dual: %d splits, expected 2\n", cases[c].scheme, (int)nsplit);
    if (strcmp(prefix[0], "fieldsplit_primal_") || strcmp(prefix[1], "fieldsplit_dual_"))
      Fail("%s, primal_dual: prefixes '%s', '%s'\n", cases[c].scheme, prefix[0], prefix[1]);
    if (strcmp(type[0], "jacobi") || strcmp(type[1], "none"))
      Fail("%s, primal_dual: PC types %s, %s\n", cases[c].scheme, type[0], type[1]);
    if (size[0] != ncoord * nq || size[1] != ncon * nc)
      Fail("%s, primal_dual: splits of %d and %d rows, expected %d and %d\n", cases[c].scheme, (int)size[0],
           (int)size[1], (int)(ncoord * nq), (int)(ncon * nc));
  }
  CHECK(MbsModelDestroy(&model));
}

/* A chain of n particles or an n x n net (no fixed nodes), set up. */
static void CreateStructure(PetscBool net, PetscInt n, MbsModel *model)
{
  const PetscReal origin[3] = {0, 0, 0}, a[3] = {0.01, 0, 0}, b[3] = {0, 0.01, 0}, down[3] = {0.2, 0, -1};

  CHECK(MbsModelCreate(PETSC_COMM_WORLD, model));
  if (net)
    CHECK(MbsModelAddNet(*model, "n", n, n, 0.001, origin, a, b, 0, NULL, NULL));
  else
    CHECK(MbsModelAddChain(*model, "c", n, 0.001, 0.01, origin, down, NULL));
  CHECK(MbsModelSetUp(*model));
}

/* The structural measure behind the solver choice: the body graph's bandwidth in RCM order is 1 for a chain and, for
   an n x n grid, at least n (the grid's bandwidth is exactly n) and not far above it. */
static void test_graph_width(void **state)
{
  MbsModel model;
  PetscInt width;

  (void)state;
  CreateStructure(PETSC_FALSE, 200, &model);
  CHECK(MbsModelGetGraphWidth(model, &width));
  assert_int_equal((int)width, 1);
  CHECK(MbsModelDestroy(&model));
  CreateStructure(PETSC_TRUE, 12, &model);
  CHECK(MbsModelGetGraphWidth(model, &width));
  if (width < 12 || width > 24) Fail("12 x 12 net: RCM bandwidth %d, expected 12 to 24\n", (int)width);
  CHECK(MbsModelDestroy(&model));
}

/* The LU package when nobody chose one (docs/solvers.md): on one rank dense LU up to 80 unknowns, the stepper's KLU
   for chains of particles (UMFPACK with -mbs_klu 0), UMFPACK for small nets (KLU with -mbs_klu), MUMPS for nets of at
   least 6000 unknowns; on several ranks the interface LU for a small interface (a chain, a small net), MUMPS for a
   large one (a 40 x 40 net cut in two) or with -mbs_parallel_lu mumps; a user's choice is kept. Nets of at least
   200000 unknowns (150 x 150 under EM) get GMRES with the Schur-AMG preconditioner unless -mbs_solver lu; chains never
   do (a chain of 20000 particles, 160000 unknowns, keeps LU). */
static void test_solver_choice(void **state)
{
  const struct {
    PetscBool   net;
    PetscInt    n;
    const char *user, *one_rank; /* NULL: dense LU (a PCSHELL); "klu": the stepper's KLU (a PCSHELL) */
    const char *ranks;           /* on several ranks; "interface": the interface LU (a PCSHELL) */
  } cases[] = {
    {PETSC_FALSE, 8, NULL, NULL, "interface"},
    {PETSC_FALSE, 12, NULL, "klu", "interface"},
    {PETSC_FALSE, 1000, NULL, "klu", "interface"},
    {PETSC_FALSE, 1000, "-mbs_klu 0", MATSOLVERUMFPACK, "interface"},
    {PETSC_TRUE, 16, NULL, MATSOLVERUMFPACK, "interface"},
    {PETSC_TRUE, 16, "-mbs_klu", "klu", "interface"},
    {PETSC_TRUE, 40, NULL, MATSOLVERMUMPS, MATSOLVERMUMPS},
    {PETSC_TRUE, 40, MATSOLVERSUPERLU_DIST, MATSOLVERSUPERLU_DIST, MATSOLVERSUPERLU_DIST},
    {PETSC_FALSE, 1000, "-mbs_parallel_lu mumps", "klu", MATSOLVERMUMPS},
    {PETSC_TRUE, 150, NULL, "schur", "schur"},
    {PETSC_TRUE, 150, "-mbs_solver lu", MATSOLVERMUMPS, MATSOLVERMUMPS},
    {PETSC_FALSE, 20000, NULL, "klu", "interface"},
  };
  PetscMPIInt size;

  (void)state;
  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    MbsModel      model;
    MbsStepper    st;
    SNES          snes;
    KSP           ksp;
    PC            pc;
    PetscBool     isshell, option = (PetscBool)(cases[k].user && cases[k].user[0] == '-');
    MatSolverType type   = NULL;
    const char   *expect = size > 1 ? cases[k].ranks : cases[k].one_rank, *shell = NULL;

    CreateStructure(cases[k].net, cases[k].n, &model);
    if (option) CHECK(PetscOptionsInsertString(NULL, cases[k].user));
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetFromOptions(st));
    CHECK(MbsStepperGetSNES(st, &snes));
    CHECK(SNESGetKSP(snes, &ksp));
    CHECK(KSPGetPC(ksp, &pc));
    if (cases[k].user && !option) CHECK(PCFactorSetMatSolverType(pc, cases[k].user));
    CHECK(MbsStepperSetUp(st));
    if (option) CHECK(PetscOptionsClear(NULL));
    CHECK(KSPGetPC(ksp, &pc));
    CHECK(PetscObjectTypeCompare((PetscObject)pc, PCSHELL, &isshell));
    if (isshell)
      CHECK(PCShellGetName(pc, &shell));
    else
      CHECK(PCFactorGetMatSolverType(pc, &type));
    if (!expect                        ? !(isshell && !strncmp(shell, "gglmbs dense LU", 15))
        : !strcmp(expect, "interface") ? !(isshell && !strncmp(shell, "gglmbs interface LU", 19))
        : !strcmp(expect, "schur")     ? !(isshell && !strncmp(shell, "gglmbs Schur-AMG", 16))
        : !strcmp(expect, "klu")       ? !(isshell && !strncmp(shell, "gglmbs KLU", 10))
                                       : !type || strcmp(type, expect))
      Fail("%s of %d on %d rank(s): LU %s, expected %s\n", cases[k].net ? "net" : "chain", (int)cases[k].n, (int)size,
           isshell ? shell
           : type  ? type
                   : "(none)",
           expect ? expect : "dense");
    if (!cases[k].net && cases[k].n == 1000 && !cases[k].user && size == 1) {
      /* a package chosen after the stepper chose its KLU (a PCSHELL) wins at the next set-up: by the host program
         (PCFactorSetMatSolverType() on the shell), then by the options database */
      const char *const how[] = {"api", "-pc_factor_mat_solver_type superlu"};
      for (int h = 0; h < 2; h++) {
        const char *want = h == 0 ? MATSOLVERMUMPS : MATSOLVERSUPERLU;
        CHECK(KSPGetPC(ksp, &pc));
        if (h == 0)
          CHECK(PCFactorSetMatSolverType(pc, want));
        else
          CHECK(PetscOptionsInsertString(NULL, how[h]));
        CHECK(MbsStepperSetType(st, MBSSCHEMEEMG));
        CHECK(MbsStepperSetUp(st));
        if (h == 1) CHECK(PetscOptionsClear(NULL));
        CHECK(KSPGetPC(ksp, &pc));
        type = NULL;
        CHECK(PetscObjectTypeCompare((PetscObject)pc, PCSHELL, &isshell));
        if (!isshell) CHECK(PCFactorGetMatSolverType(pc, &type));
        if (!type || strcmp(type, want))
          Fail("chain of 1000, %s after the stepper's KLU: %s, expected %s\n", how[h],
               isshell ? "a PCSHELL"
               : type  ? type
                       : "(none)",
               want);
        if (h == 0) { /* back to the shell for the options' turn */
          CHECK(PCSetType(pc, PCLU));
          CHECK(MbsStepperDestroy(&st));
          CHECK(MbsStepperCreate(model, &st));
          CHECK(MbsStepperGetSNES(st, &snes));
          CHECK(SNESGetKSP(snes, &ksp));
          CHECK(MbsStepperSetUp(st));
        }
      }
    }
    if (cases[k].net && cases[k].n == 40 && !cases[k].user) {
      /* chosen again for another scheme: UMFPACK for VI-B (its solves are faster; it refactors rarely) */
      const char *vib = size > 1 ? MATSOLVERMUMPS : MATSOLVERUMFPACK;
      CHECK(MbsStepperSetType(st, MBSSCHEMEVIB));
      CHECK(MbsStepperSetUp(st));
      CHECK(PCFactorGetMatSolverType(pc, &type));
      if (!type || strcmp(type, vib)) Fail("net of 40, VI-B after EM: LU package %s, expected %s\n", type, vib);
    }
    if (cases[k].net && cases[k].n == 150 && !cases[k].user) {
      /* chosen again after a scheme change and back: -mbs_solver lu through the options, LU under KSPPREONLY; the
         default again, the Schur-AMG preconditioner under GMRES */
      KSPType kt;
      CHECK(PetscOptionsInsertString(NULL, "-mbs_solver lu"));
      CHECK(MbsStepperSetFromOptions(st));
      CHECK(PetscOptionsClear(NULL));
      CHECK(MbsStepperSetType(st, MBSSCHEMEVIS));
      CHECK(MbsStepperSetUp(st));
      CHECK(KSPGetPC(ksp, &pc));
      CHECK(PCFactorGetMatSolverType(pc, &type));
      CHECK(KSPGetType(ksp, &kt));
      if (!type || strcmp(type, MATSOLVERMUMPS) || strcmp(kt, KSPPREONLY))
        Fail("net of 150, VI-S with -mbs_solver lu after the Schur-AMG: LU package %s under %s, expected mumps under "
             "preonly\n",
             type, kt);
      CHECK(PetscOptionsInsertString(NULL, "-mbs_solver auto"));
      CHECK(MbsStepperSetFromOptions(st));
      CHECK(PetscOptionsClear(NULL));
      CHECK(MbsStepperSetType(st, MBSSCHEMEEM));
      CHECK(MbsStepperSetUp(st));
      CHECK(KSPGetPC(ksp, &pc));
      CHECK(PetscObjectTypeCompare((PetscObject)pc, PCSHELL, &isshell));
      if (isshell) CHECK(PCShellGetName(pc, &shell));
      CHECK(KSPGetType(ksp, &kt));
      if (!isshell || strncmp(shell, "gglmbs Schur-AMG", 16) || strcmp(kt, KSPGMRES))
        Fail("net of 150, EM again: %s under %s, expected the Schur-AMG preconditioner under gmres\n",
             isshell ? shell : "LU", kt);
    }
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
  }
  if (size > 1) { /* the view names the interiors' solver the options chose, not the one the stepper would have */
    const char *const opts[]  = {NULL, "-mbs_interface_pc_factor_mat_solver_type mumps"},
                      *want[] = {"by KLU", "by mumps"};
    PetscMPIInt rank;
    CHECK(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    for (int k = 0; k < 2; k++) {
      MbsModel    model;
      MbsStepper  st;
      PetscViewer sv;
      char        text[4096] = "";
      CreateStructure(PETSC_FALSE, 1000, &model);
      if (opts[k]) CHECK(PetscOptionsInsertString(NULL, opts[k]));
      CHECK(MbsStepperCreate(model, &st));
      CHECK(MbsStepperSetFromOptions(st));
      CHECK(MbsStepperSetUp(st));
      CHECK(PetscOptionsClear(NULL));
      CHECK(PetscViewerASCIIOpen(PETSC_COMM_WORLD, "solver_choice_view.txt", &sv));
      CHECK(MbsStepperView(st, sv));
      CHECK(PetscViewerDestroy(&sv));
      CHECK(MPI_Barrier(PETSC_COMM_WORLD));
      {
        FILE  *f = fopen("solver_choice_view.txt", "r");
        size_t got;
        if (!f) Fail("cannot read solver_choice_view.txt back\n");
        got       = fread(text, 1, sizeof(text) - 1, f);
        text[got] = 0;
        fclose(f);
      }
      CHECK(MPI_Barrier(PETSC_COMM_WORLD));
      if (!rank) remove("solver_choice_view.txt");
      if (!strstr(text, want[k]))
        Fail("chain of 1000 on %d ranks%s%s: the view does not say \"interior %s\":\n%s\n", (int)size,
             opts[k] ? ", " : "", opts[k] ? opts[k] : "", want[k], text);
      CHECK(MbsStepperDestroy(&st));
      CHECK(MbsModelDestroy(&model));
    }
  }
}

/* The interface LU of several ranks (src/stepper/interfacelu.c) is an exact solve: J x = b to round-off for a random b,
   after a step, on a net of particles, a chain of rigid bodies with revolute joints and a train of skates with
   velocity constraints, under schemes of every field structure. On one rank there is nothing to split (the stepper
   never chooses it). */
static void InputModel(const char *relative, MbsModel *model, MbsRunConfig *cfg)
{
  char path[PETSC_MAX_PATH_LEN];

  snprintf(path, sizeof(path), "%s/%s", getenv("GGLMBS_SOURCE_DIR"), relative);
  CHECK(MbsModelCreate(PETSC_COMM_WORLD, model));
  CHECK(MbsRunConfigSetDefaults(cfg));
  CHECK(MbsModelLoadYAML(*model, path, cfg));
  CHECK(MbsModelSetUp(*model));
}

/* The model of a test case: an input file, or an nx x ny net when input is NULL (cfg then has the defaults) */
static void CaseModel(const char *input, PetscInt nx, PetscInt ny, MbsModel *model, MbsRunConfig *cfg)
{
  if (input)
    InputModel(input, model, cfg);
  else {
    CHECK(MbsRunConfigSetDefaults(cfg));
    BuildNet(nx, ny, model);
  }
}

/* The stepper's PC after a step is the PCSHELL named shell, and an exact solve: J x = b to 1e-12 of |J| |x| for a
   random b (what, scheme: the case, for the messages) */
static void ExpectExactShell(MbsStepper st, PetscRandom rnd, const char *shell, const char *what, const char *scheme)
{
  SNES        snes;
  KSP         ksp;
  PC          pc;
  Mat         J;
  Vec         b, x, r;
  PetscReal   nJ, nx, nr, nb;
  PetscBool   isshell;
  const char *name = NULL;
  PetscMPIInt size;

  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  CHECK(MbsStepperGetSNES(st, &snes));
  CHECK(SNESGetKSP(snes, &ksp));
  CHECK(KSPGetPC(ksp, &pc));
  CHECK(PetscObjectTypeCompare((PetscObject)pc, PCSHELL, &isshell));
  if (isshell) CHECK(PCShellGetName(pc, &name));
  if (!name || !strstr(name, shell))
    Fail("%s, %s on %d rank(s): the stepper chose %s, not the %s\n", what, scheme, (int)size,
         name ? name : "another PC", shell);
  CHECK(PCGetOperators(pc, &J, NULL));
  CHECK(MatCreateVecs(J, &x, &b));
  CHECK(VecDuplicate(b, &r));
  CHECK(VecSetRandom(b, rnd));
  CHECK(PCApply(pc, b, x));
  CHECK(MatMult(J, x, r));
  CHECK(VecAXPY(r, -1.0, b));
  CHECK(MatNorm(J, NORM_INFINITY, &nJ));
  CHECK(VecNorm(x, NORM_INFINITY, &nx));
  CHECK(VecNorm(r, NORM_INFINITY, &nr));
  CHECK(VecNorm(b, NORM_INFINITY, &nb));
  if (getenv("GGLMBS_TEST_VERBOSE"))
    CHECK(PetscPrintf(PETSC_COMM_WORLD, "%s, %s, %s: |Jx - b| / (|J| |x|) = %.2e (|x| %.2e)\n", shell, what, scheme,
                      (double)(nr / (nJ * nx)), (double)nx));
  if (!(nr <= 1e-12 * nJ * nx))
    Fail("%s, %s: the %s leaves |Jx - b| = %g against |J| |x| = %g (|b| = %g)\n", what, scheme, shell, (double)nr,
         (double)(nJ * nx), (double)nb);
  { /* a block of right-hand sides (PCMatApply()): the KLU shell solves it in one call, on one rank in arrays whose
       leading dimension is larger than their rows; PETSc applies the interface LU a column at a time */
    Mat      B, X;
    PetscInt m, M;
    CHECK(VecGetLocalSize(b, &m));
    CHECK(VecGetSize(b, &M));
    if (size == 1) {
      Mat *mats[2] = {&B, &X};
      for (int k = 0; k < 2; k++) {
        CHECK(MatCreate(PETSC_COMM_SELF, mats[k]));
        CHECK(MatSetSizes(*mats[k], m, PETSC_DECIDE, M, 5));
        CHECK(MatSetType(*mats[k], MATSEQDENSE));
        CHECK(MatDenseSetLDA(*mats[k], m + 3 + k));
        CHECK(MatSetUp(*mats[k]));
      }
    } else {
      CHECK(MatCreateDense(PETSC_COMM_WORLD, m, PETSC_DECIDE, M, 5, NULL, &B));
      CHECK(MatDuplicate(B, MAT_DO_NOT_COPY_VALUES, &X));
    }
    CHECK(MatSetRandom(B, rnd));
    CHECK(PCMatApply(pc, B, X));
    for (PetscInt c = 0; c < 5; c++) {
      Vec bc, xc;
      CHECK(MatDenseGetColumnVecRead(B, c, &bc));
      CHECK(MatDenseGetColumnVecRead(X, c, &xc));
      CHECK(MatMult(J, xc, r));
      CHECK(VecAXPY(r, -1.0, bc));
      CHECK(VecNorm(xc, NORM_INFINITY, &nx));
      CHECK(VecNorm(r, NORM_INFINITY, &nr));
      CHECK(MatDenseRestoreColumnVecRead(X, c, &xc));
      CHECK(MatDenseRestoreColumnVecRead(B, c, &bc));
      if (!(nr <= 1e-12 * nJ * nx))
        Fail("%s, %s: the %s's block solve leaves |Jx - b| = %g against |J| |x| = %g in column %d\n", what, scheme,
             shell, (double)nr, (double)(nJ * nx), (int)c);
    }
    CHECK(MatDestroy(&B));
    CHECK(MatDestroy(&X));
  }
  CHECK(VecDestroy(&b));
  CHECK(VecDestroy(&x));
  CHECK(VecDestroy(&r));
}

static void test_interface_lu_exact(void **state)
{
  const struct {
    const char *input; /* NULL: an 8 x 10 net */
    const char *schemes[6];
  } cases[] = {
    {NULL, {"em", "em-g", "vi-a", "vi-b", "vi-s", "rattle"}},
    {"tests/inputs/parallel/rigid_chain_revolute.yaml", {"em", "vi-s", "galerkin-lgl"}},
    {"tests/inputs/nonholonomic/skate_train.yaml", {"em", "dla", "dh"}},
  };
  PetscMPIInt size;
  PetscRandom rnd;

  (void)state;
  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (size == 1) skip();
  CHECK(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  CHECK(PetscRandomSetSeed(rnd, 17));
  CHECK(PetscRandomSeed(rnd));
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    MbsModel     model;
    MbsRunConfig cfg;
    CaseModel(cases[c].input, 8, 10, &model, &cfg);
    for (int k = 0; k < 6 && cases[c].schemes[k]; k++) {
      MbsStepper st;

      CHECK(MbsStepperCreate(model, &st));
      CHECK(MbsStepperSetType(st, cases[c].schemes[k]));
      CHECK(MbsStepperSetTimeStep(st, cases[c].input ? cfg.dt : 1e-3));
      CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_TRUE));
      CHECK(MbsStepperStep(st));
      ExpectExactShell(st, rnd, "interface LU", cases[c].input ? cases[c].input : "net", cases[c].schemes[k]);
      CHECK(MbsStepperDestroy(&st));
    }
    CHECK(MbsModelDestroy(&model));
  }
  CHECK(PetscRandomDestroy(&rnd));
  {
    /* a failed interior factorization (MUMPS on the same rod given twice: a singular interior): the step fails on
       every rank with the failed solve's reason, and nothing reads the interface left unfactored; a package that
       stops with an error on one rank (PETSc's own LU on the zero diagonal of the multipliers) stops every rank */
    const char *const opts[] = {"-mbs_interface_pc_factor_mat_solver_type mumps",
                                "-mbs_interface_pc_factor_mat_solver_type petsc"};
    for (int k = 0; k < 2; k++) {
      MbsModel       model;
      MbsRunConfig   cfg;
      MbsStepper     st;
      MbsStepReason  reason;
      PetscErrorCode ierr;
      if (k == 0)
        InputModel("tests/inputs/redundant/rod_twice.yaml", &model, &cfg);
      else
        BuildNet(4, 6, &model);
      CHECK(PetscOptionsInsertString(NULL, opts[k]));
      CHECK(MbsStepperCreate(model, &st));
      CHECK(MbsStepperSetFromOptions(st));
      CHECK(MbsStepperSetTimeStep(st, k == 0 ? cfg.dt : 1e-3));
      CHECK(MbsStepperSetFailureCheckpoint(st, "none"));
      CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_FALSE));
      CHECK(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = MbsStepperStep(st);
      CHECK(PetscPopErrorHandler());
      CHECK(PetscOptionsClear(NULL));
      CHECK(MbsStepperGetConvergedReason(st, &reason));
      if (k == 0 && (ierr || reason != MBS_STEP_DIVERGED_NONLINEAR_SOLVE))
        Fail("interface LU, singular interior: error %d, step reason %d, expected a failed step\n", (int)ierr,
             (int)reason);
      if (k == 1 && !ierr) Fail("interface LU, an interior package that stops: the step went on\n");
      CHECK(MbsStepperDestroy(&st));
      CHECK(MbsModelDestroy(&model));
    }
  }
}

/* The stepper's KLU (src/stepper/klu.c, one rank) is an exact solve: J x = b to round-off for a random b after a step,
   on a chain of particles (chosen by default) and, with -mbs_klu, on rigid links with revolute joints and on a train
   of skates with velocity constraints, under schemes of every field structure. A
   singular Jacobian (a rod given twice) is a failed step with the failed solve's reason, not an error. */
static void test_klu(void **state)
{
  const struct {
    const char *input; /* NULL: a chain of 200 particles */
    const char *schemes[6];
  } cases[] = {
    {NULL, {"em", "em-g", "vi-a", "vi-b", "vi-s", "rattle"}},
    {"tests/inputs/parallel/rigid_chain_revolute.yaml", {"em", "vi-s", "galerkin-lgl"}},
    {"tests/inputs/nonholonomic/skate_train.yaml", {"em", "dla", "dh"}},
  };
  PetscMPIInt size;
  PetscRandom rnd;

  (void)state;
  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (size > 1) skip();
  CHECK(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  CHECK(PetscRandomSetSeed(rnd, 19));
  CHECK(PetscRandomSeed(rnd));
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    MbsModel     model;
    MbsRunConfig cfg;
    if (cases[c].input)
      InputModel(cases[c].input, &model, &cfg);
    else {
      CHECK(MbsRunConfigSetDefaults(&cfg));
      CreateStructure(PETSC_FALSE, 200, &model);
      cfg.dt = 1e-3;
    }
    for (int k = 0; k < 6 && cases[c].schemes[k]; k++) {
      MbsStepper st;

      if (cases[c].input) CHECK(PetscOptionsInsertString(NULL, "-mbs_klu"));
      CHECK(MbsStepperCreate(model, &st));
      CHECK(MbsStepperSetFromOptions(st));
      CHECK(PetscOptionsClear(NULL));
      CHECK(MbsStepperSetType(st, cases[c].schemes[k]));
      CHECK(MbsStepperSetTimeStep(st, cfg.dt));
      CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_TRUE));
      CHECK(MbsStepperStep(st));
      ExpectExactShell(st, rnd, "gglmbs KLU", cases[c].input ? cases[c].input : "chain", cases[c].schemes[k]);
      CHECK(MbsStepperDestroy(&st));
    }
    CHECK(MbsModelDestroy(&model));
  }
  CHECK(PetscRandomDestroy(&rnd));
  {
    MbsModel       model;
    MbsRunConfig   cfg;
    MbsStepper     st;
    MbsStepReason  reason;
    PetscErrorCode ierr;
    InputModel("tests/inputs/redundant/rod_twice.yaml", &model, &cfg);
    CHECK(PetscOptionsInsertString(NULL, "-mbs_klu"));
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetFromOptions(st));
    CHECK(PetscOptionsClear(NULL));
    CHECK(MbsStepperSetTimeStep(st, cfg.dt));
    CHECK(MbsStepperSetFailureCheckpoint(st, "none"));
    CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_FALSE));
    CHECK(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = MbsStepperStep(st);
    CHECK(PetscPopErrorHandler());
    CHECK(MbsStepperGetConvergedReason(st, &reason));
    if (ierr || reason != MBS_STEP_DIVERGED_NONLINEAR_SOLVE)
      Fail("KLU, a rod given twice: error %d, step reason %d, expected a failed step\n", (int)ierr, (int)reason);
    { /* failed by the factorization's zero pivot, not by the NaN a division by it would leave */
      SNES               snes;
      KSP                ksp;
      PC                 pc;
      KSPConvergedReason kr;
      PCFailedReason     pr;
      CHECK(MbsStepperGetSNES(st, &snes));
      CHECK(SNESGetKSP(snes, &ksp));
      CHECK(KSPGetPC(ksp, &pc));
      CHECK(KSPGetConvergedReason(ksp, &kr));
      CHECK(PCGetFailedReason(pc, &pr));
      if (kr != KSP_DIVERGED_PC_FAILED || pr != PC_FACTOR_NUMERIC_ZEROPIVOT)
        Fail("KLU, a rod given twice: linear solve reason %d, PC failure %d, expected a zero pivot\n", (int)kr,
             (int)pr);
    }
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
  }
}

/* Largest Krylov iteration count of each linear solve, in order (a KSP monitor) */
typedef struct {
  PetscInt n, its[64];
} SolveIts;

static PetscErrorCode RecordIts(KSP ksp, PetscInt it, PetscReal rnorm, void *ctx)
{
  SolveIts *s = (SolveIts *)ctx;
  (void)ksp;
  (void)rnorm;
  if (it == 0 && s->n < 64)
    s->its[s->n++] = 0;
  else if (s->n)
    s->its[s->n - 1] = it;
  return 0;
}

/* The Schur-AMG preconditioner (src/stepper/schuramg.c) under every scheme, on a net of particles and a chain of rigid
   bodies with revolute joints:
   * it is the exact inverse where its model is exact: at the first Newton iteration of the first step (multipliers
     zero, so no stiffness couples two bodies and the multiplier block is exactly C_h (x) G M^-1 G^T), with an exact
     solve of G M^-1 G^T (-mbs_schur_pc_type lu) GMRES converges in one iteration;
   * with the default AMG it gives LU's trajectory (q and p to 1e-10 relative at every step), EM's energy is conserved
     to 1e-10, and it iterates (more Krylov than Newton iterations). */
static void test_schur_amg_matches_lu(void **state)
{
  const struct {
    const char *input; /* NULL: a 10 x 10 net */
    const char *schemes[10];
  } cases[] = {
    {NULL, {"em", "em-g", "vi-a", "vi-b", "vi-s", "rattle", "dla", "dh", "galerkin-lgl"}},
    {"tests/inputs/parallel/rigid_chain_revolute.yaml", {"em", "vi-s", "vi-a", "galerkin-lgl"}},
  };
  const PetscInt steps = 20;
  PetscMPIInt    size;

  (void)state;
  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    MbsModel     model;
    MbsRunConfig cfg;
    CaseModel(cases[c].input, 10, 10, &model, &cfg);
    for (int k = 0; k < 10 && cases[c].schemes[k]; k++) {
      const char *scheme = cases[c].schemes[k], *what = cases[c].input ? cases[c].input : "net";
      Trajectory  lu, sa;
      PetscReal   dq, dp, dE = 0;
      {
        MbsStepper st;
        SNES       snes;
        KSP        ksp;
        SolveIts   its = {0, {0}};
        SetOptions("-mbs_solver schur -mbs_schur_pc_type lu", NULL);
        CHECK(MbsStepperCreate(model, &st));
        CHECK(MbsStepperSetType(st, scheme));
        CHECK(MbsStepperSetTimeStep(st, 1e-3));
        CHECK(MbsStepperSetFromOptions(st));
        CHECK(MbsStepperGetSNES(st, &snes));
        CHECK(SNESGetKSP(snes, &ksp));
        CHECK(KSPMonitorSet(ksp, RecordIts, &its, NULL));
        CHECK(MbsStepperStep(st));
        CHECK(MbsStepperDestroy(&st));
        CHECK(PetscOptionsClear(NULL));
        if (getenv("GGLMBS_TEST_VERBOSE"))
          CHECK(PetscPrintf(PETSC_COMM_WORLD, "Schur-AMG, %s, %s: first solve %d iterations (exact T)\n", what, scheme,
                            (int)its.its[0]));
        if (!(its.n >= 1 && its.its[0] == 1))
          Fail("%s, %s: the first linear solve took %d GMRES iterations with an exact G M^-1 G^T solve, expected 1\n",
               what, scheme, its.n ? (int)its.its[0] : -1);
      }
      RunNet(model, scheme, size == 1 ? lu_serial : lu_parallel, NULL, steps, &lu);
      RunNet(model, scheme, "-mbs_solver schur", NULL, steps, &sa);
      Deviation(&sa, &lu, &dq, &dp);
      if (getenv("GGLMBS_TEST_VERBOSE"))
        CHECK(PetscPrintf(PETSC_COMM_WORLD,
                          "Schur-AMG, %s, %s: Newton its LU %d, Schur %d; linear its %d; deviation q %.2e p %.2e\n",
                          what, scheme, (int)lu.newton, (int)sa.newton, (int)sa.linear, (double)dq, (double)dp));
      if (!(sa.linear > sa.newton))
        Fail("%s, %s: Schur-AMG made %d linear iterations in %d Newton iterations: not a Krylov solve\n", what, scheme,
             (int)sa.linear, (int)sa.newton);
      if (!(dq <= 1e-10 && dp <= 1e-10))
        Fail("%s, %s: the Schur-AMG trajectory deviates from LU's by %.3e (q) and %.3e (p) relative (> 1e-10)\n", what,
             scheme, (double)dq, (double)dp);
      if (!strcmp(scheme, "em")) {
        for (PetscInt n = 1; n <= steps; n++)
          dE = PetscMax(dE, PetscAbsReal(sa.E[n] - sa.E[0]) / PetscAbsReal(sa.E[0]));
        if (!(dE <= 1e-10)) Fail("%s, em: energy drift %.3e relative with Schur-AMG (> 1e-10)\n", what, (double)dE);
      }
      FreeTrajectory(&lu);
      FreeTrajectory(&sa);
    }
    CHECK(MbsModelDestroy(&model));
  }
}

/* The Schur-AMG iterations do not grow with the net: EM, 10 steps of nets of 12 x 12, 24 x 24 and 48 x 48 particles
   (16 times as many): the mean GMRES iterations per linear solve of the largest within 1.3 times the smallest's plus
   one. (LU-preconditioned it would be 1; the old selfp block preconditioner grew from 7.3 to 15.6 over such a range.)
 */
static void test_schur_amg_bounded_iterations(void **state)
{
  const PetscInt sizes[] = {12, 24, 48};
  PetscReal      mean[3];

  (void)state;
  for (int k = 0; k < 3; k++) {
    MbsModel   model;
    MbsStepper st;
    SNES       snes;
    KSP        ksp;
    SolveIts   its   = {0, {0}};
    PetscInt   total = 0;
    BuildNet(sizes[k], sizes[k], &model);
    SetOptions("-mbs_solver schur", NULL);
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetTimeStep(st, 1e-3));
    CHECK(MbsStepperSetFromOptions(st));
    CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_TRUE));
    CHECK(MbsStepperGetSNES(st, &snes));
    CHECK(SNESGetKSP(snes, &ksp));
    CHECK(KSPMonitorSet(ksp, RecordIts, &its, NULL));
    for (int n = 0; n < 10; n++) CHECK(MbsStepperStep(st));
    for (PetscInt i = 0; i < its.n; i++) total += its.its[i];
    mean[k] = its.n ? (PetscReal)total / its.n : 0;
    if (getenv("GGLMBS_TEST_VERBOSE"))
      CHECK(PetscPrintf(PETSC_COMM_WORLD, "Schur-AMG, net %d x %d: %d linear solves, %.2f GMRES iterations each\n",
                        (int)sizes[k], (int)sizes[k], (int)its.n, (double)mean[k]));
    if (!(its.n > 0 && mean[k] > 1))
      Fail("net %d: %d linear solves of %.2f iterations\n", (int)sizes[k], (int)its.n, (double)mean[k]);
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
    CHECK(PetscOptionsClear(NULL));
  }
  if (!(mean[2] <= 1.3 * mean[0] + 1))
    Fail("Schur-AMG: %.2f GMRES iterations per solve on the 48 x 48 net against %.2f on the 12 x 12 one\n",
         (double)mean[2], (double)mean[0]);
}

/* -mbs_schur_axial (src/stepper/schuramg.c): on hanging chains, whose tension grows with their length, the constraints'
   axial stiffness taken out of the primal block (A - B W C, solved exactly) bounds the GMRES iterations, which grow
   with the chain under the default body blocks (7.2 at 300 particles, 19.7 at 3000, 43 at 10^4): EM, EM-G and VI-A
   (at theta = 0.75, where rho = 1 differs from 2 theta and 1 / (2 theta)), 5 steps
   of chains of 300 and 3000 particles, the mean iterations per linear solve of the longer within 1.3 times the
   shorter's plus one, and at most 6. Under EM the shorter chain's trajectory is LU's (1e-10 relative) and the energy is
   conserved to 1e-10 on both. (EM-G's p on these chains is fixed only to about 1e-9 relative by the Newton iterations'
   floor: with the default body blocks, and with KLU against UMFPACK, it differs by 1.4e-9 and 1e-10.) A scheme for
   which W is not derived is refused with the reason. */
static void test_schur_amg_axial(void **state)
{
  const char *const schemes[] = {"em", "em-g", "vi-a"};
  const PetscInt    sizes[] = {300, 3000}, steps = 5;
  PetscMPIInt       size;

  (void)state;
  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (int k = 0; k < 3; k++) {
    PetscReal mean[2];
    for (int c = 0; c < 2; c++) {
      MbsModel   model;
      Trajectory sa;
      BuildNet(1, sizes[c], &model); /* a chain hanging from its fixed first particle */
      RunNet(model, schemes[k], "-mbs_solver schur -mbs_schur_axial", k == 2 ? "-mbs_theta 0.75" : NULL, steps, &sa);
      mean[c] = (PetscReal)sa.linear / sa.newton;
      if (getenv("GGLMBS_TEST_VERBOSE"))
        CHECK(PetscPrintf(PETSC_COMM_WORLD, "Schur-AMG axial, %s, chain of %d: %d Newton, %.2f GMRES its each\n",
                          schemes[k], (int)sizes[c], (int)sa.newton, (double)mean[c]));
      { /* EM conserves its energy on both; the shorter chain's trajectory is LU's (the longer one's is as sensitive
           to the Newton iterations' floor as one LU package's to another's: UMFPACK's and KLU's differ by 2e-10 in p
           at 3000 particles) */
        PetscReal dE = 0;
        for (PetscInt n = 1; n <= steps && !strcmp(schemes[k], "em"); n++)
          dE = PetscMax(dE, PetscAbsReal(sa.E[n] - sa.E[0]) / PetscAbsReal(sa.E[0]));
        if (!(dE <= 1e-10))
          Fail("em, chain of %d, -mbs_schur_axial: energy drift %.3e relative (> 1e-10)\n", (int)sizes[c], (double)dE);
      }
      if (c == 0 && !strcmp(schemes[k], "em")) {
        Trajectory lu;
        PetscReal  dq, dp;
        RunNet(model, schemes[k], size == 1 ? lu_serial : lu_parallel, NULL, steps, &lu);
        Deviation(&sa, &lu, &dq, &dp);
        if (getenv("GGLMBS_TEST_VERBOSE"))
          CHECK(PetscPrintf(PETSC_COMM_WORLD, "  deviation from LU: q %.2e, p %.2e\n", (double)dq, (double)dp));
        if (!(dq <= 1e-10 && dp <= 1e-10))
          Fail("%s, chain of %d, -mbs_schur_axial: the trajectory deviates from LU's by %.3e (q) and %.3e (p)\n",
               schemes[k], (int)sizes[c], (double)dq, (double)dp);
        FreeTrajectory(&lu);
      }
      FreeTrajectory(&sa);
      CHECK(MbsModelDestroy(&model));
    }
    if (!(mean[0] > 1 && mean[1] <= 1.3 * mean[0] + 1 && mean[1] <= 6))
      Fail("%s, -mbs_schur_axial: %.2f GMRES iterations per Newton iteration on a chain of %d against %.2f on one of "
           "%d\n",
           schemes[k], (double)mean[1], (int)sizes[1], (double)mean[0], (int)sizes[0]);
  }
  { /* refused where W is not derived: vi-s has no lambda g'' in its primal block, vi-b's is not of the form B W C */
    MbsModel model;
    BuildNet(1, 10, &model);
    ExpectSetUpError(model, "-mbs_solver schur -mbs_schur_axial", NULL, "vi-s", PETSC_ERR_SUP,
                     "(em, em-g, vi-a), not vi-s: lambda's forces act at q_n", "vi-s, -mbs_schur_axial");
    ExpectSetUpError(model, "-mbs_solver schur -mbs_schur_axial", NULL, "vi-b", PETSC_ERR_SUP,
                     "(em, em-g, vi-a), not vi-b", "vi-b, -mbs_schur_axial");
    CHECK(MbsModelDestroy(&model));
  }
}

/* A hanging chain of n rigid links (director bodies, spherical joints), as inputs/rigid_chain1000.yaml */
static void BuildRigidChain(PetscInt n, MbsModel *model)
{
  const PetscReal g[3] = {0, 0, -9.81}, inertia[3] = {8.5833333333333333e-9, 8.5833333333333333e-9, 5e-10};
  const PetscReal start[3] = {0, 0, 0}, dir[3] = {0.2, 0, -1};

  CHECK(MbsModelCreate(PETSC_COMM_WORLD, model));
  CHECK(MbsModelSetGravity(*model, g));
  CHECK(
    MbsModelAddRigidChain(*model, "links", n, 1e-3, inertia, 0.01, start, dir, MBS_CHAIN_JOINT_SPHERICAL, NULL, NULL));
  CHECK(MbsModelSetUp(*model));
}

/* -mbs_schur_assembled (src/stepper/schuramg.c): S~ = D - C A~^-1 B assembled in place of C_h (x) G M^-1 G^T is the
   exact Schur complement where the bodies are coupled by linear constraints only (a rigid chain's spherical joints),
   and the GMRES iterations no longer grow with the chain (the default's grow with it: 8.4 at 100 links, 24 at 1000,
   65 at 10^4; the thin links' director stiffness, which P leaves out). EM, VI-S and the Galerkin LGL integrator, 5
   steps of chains of 30 and 300 links: the mean iterations per linear solve of the longer within 1.3 times the
   shorter's plus one, and at most 2; the shorter chain's trajectory is LU's (1e-10 relative), EM's energy conserved
   to 1e-10. The options -mbs_schur_axial and -mbs_schur_assembled together are refused. */
static void test_schur_amg_assembled(void **state)
{
  const char *const schemes[] = {"em", "vi-s", "galerkin-lgl"};
  const PetscInt    sizes[] = {30, 300}, steps = 5;
  PetscMPIInt       size;

  (void)state;
  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (int k = 0; k < 3; k++) {
    PetscReal mean[2];
    for (int c = 0; c < 2; c++) {
      MbsModel   model;
      Trajectory sa;
      BuildRigidChain(sizes[c], &model);
      RunNet(model, schemes[k], "-mbs_solver schur -mbs_schur_assembled", NULL, steps, &sa);
      mean[c] = (PetscReal)sa.linear / sa.newton;
      if (getenv("GGLMBS_TEST_VERBOSE"))
        CHECK(PetscPrintf(PETSC_COMM_WORLD, "Schur-AMG assembled, %s, rigid chain of %d: %d Newton, %.2f GMRES its\n",
                          schemes[k], (int)sizes[c], (int)sa.newton, (double)mean[c]));
      if (!strcmp(schemes[k], "em")) {
        PetscReal dE = 0;
        for (PetscInt n = 1; n <= steps; n++)
          dE = PetscMax(dE, PetscAbsReal(sa.E[n] - sa.E[0]) / PetscAbsReal(sa.E[0]));
        if (!(dE <= 1e-10))
          Fail("em, rigid chain of %d, -mbs_schur_assembled: energy drift %.3e relative (> 1e-10)\n", (int)sizes[c],
               (double)dE);
      }
      if (c == 0) {
        Trajectory lu;
        PetscReal  dq, dp;
        RunNet(model, schemes[k], size == 1 ? lu_serial : lu_parallel, NULL, steps, &lu);
        Deviation(&sa, &lu, &dq, &dp);
        if (!(dq <= 1e-10 && dp <= 1e-10))
          Fail("%s, rigid chain of %d, -mbs_schur_assembled: the trajectory deviates from LU's by %.3e (q) and %.3e "
               "(p)\n",
               schemes[k], (int)sizes[c], (double)dq, (double)dp);
        FreeTrajectory(&lu);
      }
      FreeTrajectory(&sa);
      CHECK(MbsModelDestroy(&model));
    }
    if (!(mean[0] >= 1 && mean[1] <= 1.3 * mean[0] + 1 && mean[1] <= 2))
      Fail("%s, -mbs_schur_assembled: %.2f GMRES iterations per Newton iteration on a rigid chain of %d against %.2f "
           "on one of %d\n",
           schemes[k], (double)mean[1], (int)sizes[1], (double)mean[0], (int)sizes[0]);
  }
  { /* the two options exclude each other */
    MbsModel model;
    BuildRigidChain(3, &model);
    ExpectSetUpError(model, "-mbs_solver schur -mbs_schur_axial -mbs_schur_assembled", NULL, NULL, PETSC_ERR_ARG_INCOMP,
                     "exclude each other", "-mbs_schur_axial -mbs_schur_assembled");
    CHECK(MbsModelDestroy(&model));
  }
}

/* A later set-up of the Schur-AMG preconditioner (the values of its submatrices, and from its second set-up those of
   the body blocks, copied through their positions in the Jacobian's arrays, src/stepper/schuramg.c) is the one that a
   first set-up (submatrices cut out of the Jacobian, body blocks read row by row) makes: a run restarted from a
   checkpoint, whose preconditioner starts afresh there, ends bit for bit where the run that went on ends. EM on a
   10 x 10 net, 3 steps, then 3 more; on one rank the same for the variants (-mbs_schur_axial under modified Newton,
   whose preconditioner after the restart must be that of the kept Jacobian's iterate, and -mbs_schur_assembled). On
   several ranks their inner LU is MUMPS's, whose factors need not be the same bits from one run to the next (it
   schedules large fronts dynamically: docs/restart.md); a sanitizer build on 2 ranks showed a 5e-33 difference. */
static void SchurAMGRestart(const char *opts)
{
  MbsModel    model;
  Vec         q[2], p[2];
  char        file[PETSC_MAX_PATH_LEN];
  PetscMPIInt size, rank;
  PetscBool   eq[2];

  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  CHECK(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  CHECK(PetscSNPrintf(file, sizeof(file), "schur_amg_restart_np%d.bin", (int)size));
  BuildNet(10, 10, &model);
  for (int run = 0; run < 2; run++) {
    MbsStepper st;
    Vec        qs, ps;
    SetOptions(opts, NULL);
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetTimeStep(st, 1e-3));
    CHECK(MbsStepperSetFromOptions(st));
    CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_TRUE));
    if (run == 0) {
      for (int n = 0; n < 3; n++) CHECK(MbsStepperStep(st));
      CHECK(MbsStepperWriteCheckpoint(st, file));
    } else
      CHECK(MbsStepperLoadCheckpoint(st, file));
    for (int n = 0; n < 3; n++) CHECK(MbsStepperStep(st));
    CHECK(MbsStepperGetState(st, &qs, &ps));
    CHECK(VecDuplicate(qs, &q[run]));
    CHECK(VecDuplicate(ps, &p[run]));
    CHECK(VecCopy(qs, q[run]));
    CHECK(VecCopy(ps, p[run]));
    CHECK(MbsStepperDestroy(&st));
  }
  CHECK(MPI_Barrier(PETSC_COMM_WORLD));
  if (!rank) remove(file);
  CHECK(VecEqual(q[0], q[1], &eq[0]));
  CHECK(VecEqual(p[0], p[1], &eq[1]));
  if (!(eq[0] && eq[1])) {
    PetscReal dq, dp;
    CHECK(VecAXPY(q[1], -1.0, q[0]));
    CHECK(VecAXPY(p[1], -1.0, p[0]));
    CHECK(VecNorm(q[1], NORM_INFINITY, &dq));
    CHECK(VecNorm(p[1], NORM_INFINITY, &dp));
    Fail("Schur-AMG, %s: the run restarted after 3 steps ends %g (q) and %g (p) away from the run that went on\n", opts,
         (double)dq, (double)dp);
  }
  for (int run = 0; run < 2; run++) {
    CHECK(VecDestroy(&q[run]));
    CHECK(VecDestroy(&p[run]));
  }
  CHECK(MbsModelDestroy(&model));
  CHECK(PetscOptionsClear(NULL));
}

static void test_schur_amg_restart(void **state)
{
  const char *const variants[] = {"-mbs_solver schur", "-mbs_solver schur -mbs_schur_axial -mbs_jacobian_reuse 1",
                                  "-mbs_solver schur -mbs_schur_assembled"};

  PetscMPIInt size;

  (void)state;
  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  for (size_t v = 0; v < (size == 1 ? sizeof(variants) / sizeof(variants[0]) : 1); v++) SchurAMGRestart(variants[v]);
}

/* Counts the Jacobian assemblies of a stepper: wraps the Jacobian routine the stepper gave SNES */
typedef struct {
  PetscErrorCode (*jac)(SNES, Vec, Mat, Mat, void *);
  void    *ctx;
  PetscInt count;
} JacobianCount;

static PetscErrorCode CountJacobian(SNES snes, Vec X, Mat J, Mat P, void *ctx)
{
  JacobianCount *c = (JacobianCount *)ctx;

  c->count++;
  return c->jac(snes, X, J, P, c->ctx);
}

/* The default Newton variant follows the linear solver: modified Newton under LU (a factorization costs many solves),
   Newton's method proper under the Schur-AMG preconditioner (a refresh costs about one solve): 5 steps of a 24 x 24
   net (5762 unknowns, above the 1000 from which LU reuses its factors) assemble a Jacobian at every Newton iteration
   under Schur-AMG, fewer under LU and under Schur-AMG with -mbs_jacobian_reuse 1 */
static void test_schur_amg_newton(void **state)
{
  const char *cases[] = {"-mbs_solver schur", "-mbs_solver lu", "-mbs_solver schur -mbs_jacobian_reuse 1"};

  (void)state;
  for (int c = 0; c < 3; c++) {
    MbsModel      model;
    MbsStepper    st;
    SNES          snes;
    Mat           J, P;
    JacobianCount count  = {NULL, NULL, 0};
    PetscInt      newton = 0;
    BuildNet(24, 24, &model);
    SetOptions(cases[c], NULL);
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetTimeStep(st, 1e-3));
    CHECK(MbsStepperSetFromOptions(st));
    CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_TRUE));
    CHECK(MbsStepperSetUp(st));
    CHECK(MbsStepperGetSNES(st, &snes));
    CHECK(SNESGetJacobian(snes, &J, &P, &count.jac, &count.ctx));
    CHECK(SNESSetJacobian(snes, J, P, CountJacobian, &count));
    for (int n = 0; n < 5; n++) CHECK(MbsStepperStep(st));
    newton = st->total_its; /* with any retried solve's */
    if (getenv("GGLMBS_TEST_VERBOSE"))
      CHECK(PetscPrintf(PETSC_COMM_WORLD, "%s: %d Newton iterations, %d Jacobians\n", cases[c], (int)newton,
                        (int)count.count));
    if (c == 0 ? count.count != newton : !(count.count < newton))
      Fail("%s: %d Jacobians for %d Newton iterations: expected %s\n", cases[c], (int)count.count, (int)newton,
           c == 0 ? "one per iteration (Newton's method proper)" : "fewer (modified Newton)");
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
    CHECK(PetscOptionsClear(NULL));
  }
}

/* A set-up again that moves from modified Newton to Newton's method proper (LU steps, then -mbs_solver schur and a
   scheme change) assembles a Jacobian at every iteration: the lag modified Newton left in SNES (never recompute) is
   undone */
static void test_schur_amg_newton_after_lu(void **state)
{
  MbsModel      model;
  MbsStepper    st;
  SNES          snes;
  Mat           J, P;
  JacobianCount count = {NULL, NULL, 0};
  PetscInt      before;

  (void)state;
  BuildNet(24, 24, &model);
  SetOptions("-mbs_solver lu", NULL);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetTimeStep(st, 1e-3));
  CHECK(MbsStepperSetFromOptions(st));
  CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_TRUE));
  for (int n = 0; n < 3; n++) CHECK(MbsStepperStep(st));
  SetOptions("-mbs_solver schur", NULL);
  CHECK(MbsStepperSetFromOptions(st));
  CHECK(MbsStepperSetType(st, "em-g"));
  CHECK(MbsStepperSetTimeStep(st, 1e-3));
  CHECK(MbsStepperSetUp(st));
  CHECK(MbsStepperGetSNES(st, &snes));
  CHECK(SNESGetJacobian(snes, &J, &P, &count.jac, &count.ctx));
  CHECK(SNESSetJacobian(snes, J, P, CountJacobian, &count));
  before = st->total_its;
  for (int n = 0; n < 3; n++) CHECK(MbsStepperStep(st));
  if (st->reuse || count.count != st->total_its - before)
    Fail("LU, then Schur-AMG: reuse %d, %d Jacobians for %d Newton iterations\n", (int)st->reuse, (int)count.count,
         (int)(st->total_its - before));
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  CHECK(PetscOptionsClear(NULL));
}

/* BoomerAMG smooths with l1-Gauss-Seidel by default (from the Schur-AMG PC's private options database, PCHYPRE having
   no setter), and the user's -mbs_schur_pc_hypre_boomeramg_relax_type_all overrides it: -ksp_view's report of a
   12 x 12 net's preconditioner after a step says which smoother BoomerAMG ran. */
static void test_schur_amg_smoother(void **state)
{
  const char *cases[][2] = {
    {"", "Relax down          l1-Gauss-Seidel"},
    {"-mbs_schur_pc_hypre_boomeramg_relax_type_all symmetric-SOR/Jacobi", "Relax down          symmetric-SOR/Jacobi"},
  };

  (void)state;
  for (int c = 0; c < 2; c++) {
    MbsModel    model;
    MbsStepper  st;
    SNES        snes;
    KSP         ksp;
    PetscViewer viewer;
    PetscMPIInt rank;
    char        file[64];
    BuildNet(12, 12, &model);
    SetOptions("-mbs_solver schur", cases[c][0]);
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetTimeStep(st, 1e-3));
    CHECK(MbsStepperSetFromOptions(st));
    CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_TRUE));
    CHECK(MbsStepperStep(st));
    CHECK(MbsStepperGetSNES(st, &snes));
    CHECK(SNESGetKSP(snes, &ksp));
    CHECK(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    snprintf(file, sizeof(file), "schur_amg_view.%d.txt", c);
    CHECK(PetscViewerASCIIOpen(PETSC_COMM_WORLD, file, &viewer));
    CHECK(KSPView(ksp, viewer));
    CHECK(PetscViewerDestroy(&viewer));
    if (!rank) {
      char   text[65536];
      FILE  *f = fopen(file, "r");
      size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
      if (f) fclose(f);
      text[n] = 0;
      (void)remove(file);
      if (!strstr(text, "gglmbs Schur-AMG") || !strstr(text, cases[c][1]))
        Fail("Schur-AMG with '%s': the preconditioner's report lacks '%s':\n%s\n", cases[c][0], cases[c][1], text);
    }
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
    CHECK(PetscOptionsClear(NULL));
  }
}

/* -mbs_solver schur where the preconditioner does not apply is refused at set-up, with the reason: velocity
   constraints (a train of skates), the static scheme, eliminated redundant constraints (a rod given twice) */
static void test_schur_amg_refused(void **state)
{
  const struct {
    const char *input, *scheme, *reason;
  } cases[] = {
    {"tests/inputs/nonholonomic/skate_train.yaml", "em", "does not apply to velocity constraints"},
    {"tests/inputs/parallel/rigid_chain_revolute.yaml", "static", "does not apply to a static solve"},
    {"tests/inputs/redundant/rod_twice.yaml", "em", "does not apply to eliminated redundant constraints"},
  };

  (void)state;
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    MbsModel     model;
    MbsRunConfig cfg;
    char         what[PETSC_MAX_PATH_LEN];
    InputModel(cases[c].input, &model, &cfg);
    CHECK(PetscSNPrintf(what, sizeof(what), "%s, %s, -mbs_solver schur", cases[c].input, cases[c].scheme));
    ExpectSetUpError(model, "-mbs_solver schur",
                     strstr(cases[c].input, "redundant") ? "-mbs_allow_redundant_constraints" : NULL, cases[c].scheme,
                     PETSC_ERR_SUP, cases[c].reason, what);
    CHECK(MbsModelDestroy(&model));
  }
}

/* A linear solve that fails at an iterate at the round-off floor does not fail the step, and one that fails above it
   does not let the step pass (MbsStepperLinearFailureAtFloor(), src/stepper/step.c). Seen: on two ranks, GMRES under
   the Schur-AMG on a rigid chain of 10^4 links stagnated at 1.1e-13, the rounding of J x, on a right-hand side of
   5e-13, and reported a breakdown. A KSP convergence test stands in for that Krylov method here: under an exact LU
   preconditioner it reports a breakdown at every solve whose iterate is within `window` of the floor (max_f ||F_f|| /
   (eps ||s_f||), the convergence test's measure), or at every solve (window < 0). */
typedef struct {
  MbsStepper st;
  PetscReal  window;
  PetscInt   fails, solves; /* linear failures; Newton solves (a step solved again counts twice) */
} FloorKSP;

static PetscErrorCode FloorSNESMonitor(SNES snes, PetscInt it, PetscReal fnorm, void *ctx)
{
  PetscFunctionBegin;
  (void)snes;
  (void)fnorm;
  if (it == 0) ((FloorKSP *)ctx)->solves++;
  PetscFunctionReturn(0);
}

static PetscErrorCode FloorKSPConverged(KSP ksp, PetscInt it, PetscReal rnorm, KSPConvergedReason *reason, void *ctx)
{
  FloorKSP *f = (FloorKSP *)ctx;

  PetscFunctionBegin;
  (void)ksp;
  (void)rnorm;
  *reason = it >= 1 ? KSP_CONVERGED_ITS : KSP_CONVERGED_ITERATING; /* the exact preconditioner: one iteration */
  if (it == 0) {
    PetscBool fail = (PetscBool)(f->window < 0);
    if (!fail) {
      Vec       X, F;
      PetscReal ratio;
      PetscCall(SNESGetSolution(f->st->snes, &X));
      PetscCall(SNESGetFunction(f->st->snes, &F, NULL, NULL));
      PetscCall(MbsStepperResidualScale_Private(f->st, X, F, &ratio));
      fail = (PetscBool)(ratio / PETSC_MACHINE_EPSILON <= f->window);
    }
    if (fail) {
      *reason = KSP_DIVERGED_BREAKDOWN;
      f->fails++;
    }
  }
  PetscFunctionReturn(0);
}

static void test_linear_failure_at_floor(void **state)
{
  const PetscInt  steps     = 5;
  const PetscReal window[3] = {0, MBS_FLOOR_EPS_FACTOR, -1};
  PetscMPIInt     size;
  MbsModel        model;
  Vec             q[3], p[3];
  PetscInt        fails[3], failed[3], solves[3];

  (void)state;
  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  BuildNet(4, 6, &model);
  for (int k = 0; k < 3; k++) { /* no failure (the reference), failures at the floor, failures everywhere */
    MbsStepper st;
    SNES       snes;
    KSP        ksp;
    FloorKSP   f = {NULL, window[k], 0, 0};
    Vec        qs, ps;
    SetOptions("-ksp_type gmres -pc_type lu -mbs_jacobian_reuse 1",
               size == 1 ? "-pc_factor_mat_solver_type umfpack" : "-pc_factor_mat_solver_type mumps");
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetType(st, "em"));
    CHECK(MbsStepperSetTimeStep(st, 1e-3));
    CHECK(MbsStepperSetFromOptions(st));
    CHECK(MbsStepperSetFailureCheckpoint(st, "none"));
    CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_FALSE));
    CHECK(MbsStepperSetUp(st));
    CHECK(MbsStepperGetSNES(st, &snes));
    CHECK(SNESGetKSP(snes, &ksp));
    f.st = st;
    CHECK(KSPSetConvergenceTest(ksp, FloorKSPConverged, &f, NULL));
    CHECK(SNESMonitorSet(snes, FloorSNESMonitor, &f, NULL));
    failed[k] = 0;
    for (PetscInt n = 0; n < steps && !failed[k]; n++) {
      MbsStepReason reason;
      CHECK(MbsStepperStep(st));
      CHECK(MbsStepperGetConvergedReason(st, &reason));
      if (reason < 0) failed[k] = 1;
    }
    fails[k]  = f.fails;
    solves[k] = f.solves;
    CHECK(MbsStepperGetState(st, &qs, &ps));
    CHECK(VecDuplicate(qs, &q[k]));
    CHECK(VecDuplicate(ps, &p[k]));
    CHECK(VecCopy(qs, q[k]));
    CHECK(VecCopy(ps, p[k]));
    if (getenv("GGLMBS_TEST_VERBOSE"))
      CHECK(PetscPrintf(PETSC_COMM_WORLD, "window %g: %d linear failures, %d Newton solves, %s\n", (double)window[k],
                        (int)fails[k], (int)solves[k], failed[k] ? "a step failed" : "every step converged"));
    CHECK(MbsStepperDestroy(&st));
    CHECK(PetscOptionsClear(NULL));
  }
  if (fails[0] || failed[0]) Fail("the reference run failed (%d linear failures)\n", (int)fails[0]);
  if (!fails[1] || failed[1] || solves[1] != steps) /* more solves than steps: a step was solved again */
    Fail(
      "linear failures at the round-off floor: %d of them, %s, %d Newton solves in %d steps (expected some failures, "
      "every step accepted where it failed)\n",
      (int)fails[1], failed[1] ? "a step failed" : "no step failed", (int)solves[1], (int)steps);
  else {
    PetscReal dq, dp, nq, np;
    CHECK(VecAXPY(q[1], -1.0, q[0]));
    CHECK(VecAXPY(p[1], -1.0, p[0]));
    CHECK(VecNorm(q[1], NORM_INFINITY, &dq));
    CHECK(VecNorm(p[1], NORM_INFINITY, &dp));
    CHECK(VecNorm(q[0], NORM_INFINITY, &nq));
    CHECK(VecNorm(p[0], NORM_INFINITY, &np));
    if (!(dq <= 1e-12 * nq && dp <= 1e-10 * np))
      Fail("linear failures at the round-off floor: the state deviates from the reference by %.3e (q) and %.3e (p)\n",
           (double)dq, (double)dp);
  }
  if (!failed[2]) Fail("linear failures above the round-off floor: the step was accepted\n");
  for (int k = 0; k < 3; k++) {
    CHECK(VecDestroy(&q[k]));
    CHECK(VecDestroy(&p[k]));
  }
  CHECK(MbsModelDestroy(&model));
}

/* A preconditioner whose set-up fails fails the step, on every rank, and the next set-up starts afresh: the same rod
   given twice (two dependent constraints of one body, a singular block of P_ss; under -mbs_schur_assembled a singular
   S~, whose LU fails) fails two steps in a row with the failed-solve reason, not an error */
static void test_schur_amg_failure(void **state)
{
  const char *const variants[] = {"-mbs_solver schur", "-mbs_solver schur -mbs_schur_assembled"};

  (void)state;
  for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
    MbsModel     model;
    MbsRunConfig cfg;
    MbsStepper   st;
    InputModel("tests/inputs/redundant/rod_twice.yaml", &model, &cfg);
    SetOptions(variants[v], NULL);
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetFromOptions(st));
    CHECK(MbsStepperSetTimeStep(st, cfg.dt));
    CHECK(MbsStepperSetFailureCheckpoint(st, "none"));
    CHECK(MbsStepperSetErrorIfStepFails(st, PETSC_FALSE));
    for (int k = 0; k < 2; k++) {
      MbsStepReason reason;
      CHECK(MbsStepperStep(st));
      CHECK(MbsStepperGetConvergedReason(st, &reason));
      if (reason != MBS_STEP_DIVERGED_NONLINEAR_SOLVE)
        Fail("Schur-AMG (%s), rod given twice, attempt %d: step reason %d, expected a failed step\n", variants[v],
             k + 1, (int)reason);
    }
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
    CHECK(PetscOptionsClear(NULL));
  }
}

int main(int argc, char **argv)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fieldsplit_by_name),
    cmocka_unit_test(test_graph_width),
    cmocka_unit_test(test_solver_choice),
    cmocka_unit_test(test_block_preconditioner_matches_lu),
    cmocka_unit_test(test_block_preconditioner_after_reset),
    cmocka_unit_test(test_interface_lu_exact),
    cmocka_unit_test(test_klu),
    cmocka_unit_test(test_schur_amg_matches_lu),
    cmocka_unit_test(test_schur_amg_bounded_iterations),
    cmocka_unit_test(test_schur_amg_smoother),
    cmocka_unit_test(test_schur_amg_newton),
    cmocka_unit_test(test_schur_amg_newton_after_lu),
    cmocka_unit_test(test_schur_amg_restart),
    cmocka_unit_test(test_schur_amg_axial),
    cmocka_unit_test(test_schur_amg_assembled),
    cmocka_unit_test(test_schur_amg_refused),
    cmocka_unit_test(test_schur_amg_failure),
    cmocka_unit_test(test_linear_failure_at_floor),
  };
  const char *filter = getenv("GGLMBS_TEST_FILTER");
  int         fails;

  if (PetscInitialize(&argc, &argv, NULL, NULL)) return 1;
  if (filter) cmocka_set_test_filter(filter);
  fails = _cmocka_run_group_tests("solvers", tests, sizeof(tests) / sizeof(tests[0]), NULL, NULL);
  if (PetscFinalize()) return 1;
  return fails;
}

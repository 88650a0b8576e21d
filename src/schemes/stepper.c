#include <signal.h>
#include <unistd.h>
#include <petsctime.h>
#include "schemes/stepperimpl.h"
#include "io/output.h"
#include "model/redundancy.h"

/* Contexts of the built-in monitors (-mbs_monitor, -mbs_progress) */
typedef struct {
  PetscBool have0;
  PetscReal E0;
} MbsMonitorDefaultCtx;

static PetscErrorCode MbsMonitorCtxDestroy(void **ctx)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(*ctx));
  PetscFunctionReturn(0);
}

typedef struct {
  PetscLogDouble start, last; /* wall clock at the first call and at the last line */
  PetscInt       step0;       /* step of the first call */
  PetscBool      printed;
} MbsMonitorProgressCtx;

static PetscFunctionList MbsSchemeFunctions = NULL;
static PetscBool         MbsPackageInitialized = PETSC_FALSE;
PetscLogEvent            MBS_Residual, MBS_Jacobian, MBS_Step, MBS_Diagnostics;
static PetscClassId      MBS_CLASSID;

static const char MbsCitation[] = "@article{KinonBetschSchneider2023,\n"
                                  "  author  = {Kinon, Philipp L. and Betsch, Peter and Schneider, Simon},\n"
                                  "  title   = {Structure-preserving integrators based on a new variational principle for constrained mechanical systems},\n"
                                  "  journal = {Nonlinear Dynamics},\n"
                                  "  year    = {2023}\n}\n";
static PetscBool  MbsCited = PETSC_FALSE;

const char *const MbsPredictors[] = {"simple", "advanced", "MbsPredictor", "MBS_PREDICTOR_", NULL};

#define MBS_MAX_SCHEME_PARAMETERS 32
static MbsSchemeParameter MbsSchemeParameters[MBS_MAX_SCHEME_PARAMETERS];
static PetscInt           MbsNumSchemeParameters = 0;

static PetscErrorCode MbsFinalizePackage(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListDestroy(&MbsSchemeFunctions));
  MbsNumSchemeParameters = 0;
  MbsPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsInitializePackage(void)
{
  PetscFunctionBegin;
  if (MbsPackageInitialized) PetscFunctionReturn(0);
  MbsPackageInitialized = PETSC_TRUE;
  PetscCall(PetscClassIdRegister("Multibody stepper", &MBS_CLASSID));
  PetscCall(PetscLogEventRegister("MbsStep", MBS_CLASSID, &MBS_Step));
  PetscCall(PetscLogEventRegister("MbsResidual", MBS_CLASSID, &MBS_Residual));
  PetscCall(PetscLogEventRegister("MbsJacobian", MBS_CLASSID, &MBS_Jacobian));
  PetscCall(PetscLogEventRegister("MbsDiagnostics", MBS_CLASSID, &MBS_Diagnostics));
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, MBSSCHEMEEM, MbsSchemeCreate_EM));
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, MBSSCHEMEEMG, MbsSchemeCreate_EMG));
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, MBSSCHEMEVIS, MbsSchemeCreate_VIS));
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, MBSSCHEMEVIA, MbsSchemeCreate_VIA));
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, MBSSCHEMEVIB, MbsSchemeCreate_VIB));
  /* Defaults are those of the paper's own computations (seed 004, lost Table 1). */
  PetscCall(MbsSchemeRegisterParameter(MBSSCHEMEVIA, "theta", 0.5, 0.0, PETSC_TRUE, 1.0, "VI-A: q_theta = (1-theta) q_n + theta q_{n+1}"));
  PetscCall(MbsSchemeRegisterParameter(MBSSCHEMEVIB, "theta", 1.0, 0.0, PETSC_FALSE, 1.0, "VI-B: Theta, q_Theta = (1-Theta) q_n + Theta q_{n+1}"));
  PetscCall(MbsSchemeRegisterParameter(MBSSCHEMEVIB, "vartheta", 0.5, 0.0, PETSC_FALSE, 1.0, "VI-B: vartheta, weight of G(q_{n+1}) in the multiplier forces"));
  PetscCall(PetscRegisterFinalize(MbsFinalizePackage));
  PetscFunctionReturn(0);
}

/*@C
  MbsSchemeRegister - Adds a time-stepping scheme, selectable with MbsStepperSetType() or -mbs_scheme.

  Not Collective

  Input Parameters:
+ name - the scheme's name
- create - routine that fills the stepper's scheme operations

  Level: advanced
@*/
PetscErrorCode MbsSchemeRegister(const char name[], PetscErrorCode (*create)(MbsStepper))
{
  PetscFunctionBegin;
  PetscCall(MbsInitializePackage());
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, name, create));
  PetscFunctionReturn(0);
}

/*@C
  MbsSchemeRegisterParameter - Declares a real parameter of a scheme, settable with
  MbsStepperSetSchemeParameter(), the option -mbs_<name> and the input file (scheme: {type: ..., name: value}).

  Not Collective

  Input Parameters:
+ scheme - the scheme's name
. name - the parameter's name
. def - its default
. lo, lo_open - lower bound, and whether lo itself is excluded
. hi - upper bound (included)
- help - one line for -help

  Level: advanced
@*/
PetscErrorCode MbsSchemeRegisterParameter(const char scheme[], const char name[], PetscReal def, PetscReal lo, PetscBool lo_open, PetscReal hi, const char help[])
{
  const MbsSchemeParameter *old;
  MbsSchemeParameter       *prm;

  PetscFunctionBegin;
  PetscCall(MbsInitializePackage());
  PetscCall(MbsSchemeGetParameter(scheme, name, &old));
  if (old) prm = (MbsSchemeParameter *)old;
  else {
    PetscCheck(MbsNumSchemeParameters < MBS_MAX_SCHEME_PARAMETERS, PETSC_COMM_SELF, PETSC_ERR_SUP, "At most %d scheme parameters", MBS_MAX_SCHEME_PARAMETERS);
    prm = &MbsSchemeParameters[MbsNumSchemeParameters++];
  }
  PetscCheck(strlen(name) < sizeof(prm->name) && strlen(scheme) < sizeof(prm->scheme), PETSC_COMM_SELF, PETSC_ERR_ARG_SIZ, "Scheme or parameter name too long");
  PetscCall(PetscStrncpy(prm->scheme, scheme, sizeof(prm->scheme)));
  PetscCall(PetscStrncpy(prm->name, name, sizeof(prm->name)));
  PetscCall(PetscStrncpy(prm->help, help ? help : "", sizeof(prm->help)));
  prm->def     = def;
  prm->lo      = lo;
  prm->hi      = hi;
  prm->lo_open = lo_open;
  PetscFunctionReturn(0);
}

/*@C
  MbsSchemeGetParameter - Finds a scheme's parameter by name; NULL if the scheme has no such parameter.

  Not Collective
@*/
PetscErrorCode MbsSchemeGetParameter(const char scheme[], const char name[], const MbsSchemeParameter **param)
{
  PetscFunctionBegin;
  PetscCall(MbsInitializePackage());
  *param = NULL;
  for (PetscInt i = 0; i < MbsNumSchemeParameters; i++) {
    PetscBool s, n;
    PetscCall(PetscStrcmp(MbsSchemeParameters[i].scheme, scheme, &s));
    PetscCall(PetscStrcmp(MbsSchemeParameters[i].name, name, &n));
    if (s && n) *param = &MbsSchemeParameters[i];
  }
  PetscFunctionReturn(0);
}

/*@C
  MbsSchemeGetParameterNames - "theta, vartheta" (or "none") for error messages.

  Not Collective
@*/
PetscErrorCode MbsSchemeGetParameterNames(const char scheme[], char names[], size_t len)
{
  PetscInt k = 0;

  PetscFunctionBegin;
  PetscCall(MbsInitializePackage());
  names[0] = 0;
  for (PetscInt i = 0; i < MbsNumSchemeParameters; i++) {
    PetscBool s;
    PetscCall(PetscStrcmp(MbsSchemeParameters[i].scheme, scheme, &s));
    if (!s) continue;
    if (k++) PetscCall(PetscStrlcat(names, ", ", len));
    PetscCall(PetscStrlcat(names, MbsSchemeParameters[i].name, len));
  }
  if (!k) PetscCall(PetscStrncpy(names, "none", len));
  PetscFunctionReturn(0);
}

/*@C
  MbsSchemeCheckParameter - Whether a value is admissible for a parameter; if not, `expected` describes
  the range ("a real in (0, 1] (VI-A: ...)").

  Not Collective
@*/
PetscErrorCode MbsSchemeCheckParameter(const MbsSchemeParameter *prm, PetscReal value, PetscBool *ok, char expected[], size_t len)
{
  PetscFunctionBegin;
  *ok = (PetscIsNormalReal(value) || value == 0) && (prm->lo_open ? value > prm->lo : value >= prm->lo) && value <= prm->hi ? PETSC_TRUE : PETSC_FALSE;
  if (expected && len) snprintf(expected, len, "a real in %s%g, %g] for %s of scheme %s", prm->lo_open ? "(" : "[", (double)prm->lo, (double)prm->hi, prm->name, prm->scheme);
  PetscFunctionReturn(0);
}

/*@C
  MbsSchemeList - Prints the registered schemes.

  Collective
@*/
PetscErrorCode MbsSchemeList(MPI_Comm comm, PetscViewer viewer)
{
  PetscFunctionBegin;
  PetscCall(MbsInitializePackage());
  PetscCall(PetscFunctionListView(MbsSchemeFunctions, viewer ? viewer : PETSC_VIEWER_STDOUT_(comm)));
  PetscFunctionReturn(0);
}

/*@C
  MbsSchemeIsRegistered - Tells whether a scheme name is registered.

  Not Collective

  Input Parameters:
+ name - the scheme name
- len - size of names

  Output Parameters:
+ registered - whether it is registered
- names - "one of: em, ..." listing the registered schemes (may be NULL)

  Level: intermediate
@*/
PetscErrorCode MbsSchemeIsRegistered(const char name[], PetscBool *registered, char names[], size_t len)
{
  PetscErrorCode (*create)(MbsStepper);

  PetscFunctionBegin;
  PetscCall(MbsInitializePackage());
  PetscCall(PetscFunctionListFind(MbsSchemeFunctions, name, &create));
  *registered = create ? PETSC_TRUE : PETSC_FALSE;
  if (names && len) {
    const char **list;
    int                n;
    PetscCall(PetscFunctionListGet(MbsSchemeFunctions, &list, &n));
    PetscCall(PetscStrncpy(names, "a registered scheme, one of:", len));
    for (int i = 0, k = 0; i < n; i++) {
      if (!list[i] || !list[i][0]) continue;
      PetscCall(PetscStrlcat(names, k++ ? ", " : " ", len));
      PetscCall(PetscStrlcat(names, list[i], len));
    }
    PetscCall(PetscFree(list));
  }
  PetscFunctionReturn(0);
}

/* SNES's default test (atol, rtol, stol, max_it, NaN), and the round-off floor: once the residual norm
   is below stagnation_tol, below stagnation_rtol times the solve's initial residual norm, or below
   MBS_FLOOR_EPS_FACTOR eps |x| (the floor scales with the system: a long chain's coordinates and
   tensions, tiny inertias putting M^-1 ~ 1e10 into some rows), an iteration that no longer
   halves it has reached the floor that rounding sets for this system (quadratic convergence would have
   cut it by orders of magnitude): converged.
   Conservation to round-off needs Newton run to that floor; a fixed atol alone either stops one
   iteration early or never triggers on systems whose floor lies above it. */
static PetscErrorCode MbsStepperConverged(SNES snes, PetscInt it, PetscReal xnorm, PetscReal snorm, PetscReal fnorm, SNESConvergedReason *reason, void *ctx)
{
  MbsStepper st    = (MbsStepper)ctx;
  PetscBool  fresh = (PetscBool)(!st->reuse || st->jac_fresh); /* this iteration used a Jacobian assembled for it */

  PetscFunctionBegin;
  st->jac_fresh = PETSC_FALSE;
  if (it == 0) st->jac_uses = 0;
  else st->jac_uses++;
  PetscCall(SNESConvergedDefault(snes, it, xnorm, snorm, fnorm, reason, NULL));
  /* With a kept (modified-Newton) Jacobian, slow linear convergence must not pass for the floor: above
     the eps |x| estimate it counts only as stagnation with almost no progress; short of that the
     Jacobian is refreshed below. */
  if (it == 0) st->fnorm0 = fnorm;
  if (*reason == SNES_CONVERGED_ITERATING && it > 0) {
    const PetscReal floor_eps = MBS_FLOOR_EPS_FACTOR * PETSC_MACHINE_EPSILON * xnorm, floor_tol = PetscMax(PetscMax(st->stagnation_tol, st->stagnation_rtol * st->fnorm0), floor_eps);
    if ((fnorm <= floor_tol && fnorm > (fresh ? 0.5 : 0.9) * st->fnorm_prev) || (fnorm <= floor_eps && fnorm > 0.5 * st->fnorm_prev)) {
      PetscCall(PetscInfo(snes, "Residual norm %g stagnates at the round-off floor (previous %g): converged\n", (double)fnorm, (double)st->fnorm_prev));
      *reason = SNES_CONVERGED_FNORM_ABS;
    }
  }
  /* Modified Newton: a kept Jacobian that no longer contracts the residual by reuse_rate, or that has
     served MBS_REUSE_MAX_USES iterations of this solve, is refreshed at the next iteration (lag -2:
     compute once, then keep). */
  if (st->reuse && *reason == SNES_CONVERGED_ITERATING && it > 0 && (fnorm > st->reuse_rate * st->fnorm_prev || st->jac_uses >= MBS_REUSE_MAX_USES)) PetscCall(SNESSetLagJacobian(snes, -2));
  st->fnorm_prev = fnorm;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperCreate - Creates a time stepper for a model; the default scheme is "em".

  Collective

  Input Parameter:
. model - the model (set up here if it is not yet)

  Output Parameter:
. st - the stepper

  Level: beginner

.seealso: `MbsStepperSetType()`, `MbsStepperSetFromOptions()`, `MbsStepperSolve()`
@*/
PetscErrorCode MbsStepperCreate(MbsModel model, MbsStepper *stepper)
{
  MbsStepper st;
  KSP        ksp;
  PC         pc;
  SNESLineSearch ls;

  PetscFunctionBegin;
  PetscCall(MbsInitializePackage());
  PetscCall(MbsModelSetUp(model));
  PetscCall(PetscNew(&st));
  PetscCall(MbsModelGetComm(model, &st->comm));
  st->model        = model;
  st->h            = 0.01;
  st->hstep        = 0.01;
  st->t_end        = 1.0;
  st->output_every = 1;
  st->traj_every   = 1;
  st->monitored_step = -1;
  st->field_q = st->field_p = st->field_v = -1;
  st->predictor = MBS_PREDICTOR_SIMPLE;
  st->adapt_max = 5;
  st->reuse      = PETSC_TRUE; /* unless set, decided in MbsStepperSetUp() from the system size */
  st->reuse_rate = 0.75;
  st->energy_divergence = MBS_ENERGY_DIVERGENCE;
  PetscCall(PetscStrncpy(st->output_dir, "output", sizeof(st->output_dir)));
  PetscCall(SNESCreate(st->comm, &st->snes));
  /* Conservation to round-off needs Newton converged to round-off: tight absolute tolerance, and a
     direct solve with pivoting (the saddle-point system has a zero multiplier block). */
  PetscCall(SNESSetType(st->snes, SNESNEWTONLS));
  PetscCall(SNESGetLineSearch(st->snes, &ls));
  PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHBASIC));
  PetscCall(SNESSetTolerances(st->snes, 1e-15, 1e-300, 1e-13, 50, -1));
  st->stagnation_tol  = 1e-11;
  st->stagnation_rtol = 1e-8;
  PetscCall(SNESSetConvergenceTest(st->snes, MbsStepperConverged, st, NULL));
  PetscCall(SNESGetKSP(st->snes, &ksp));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCLU));
  {
    /* UMFPACK on one rank, MUMPS in parallel (docs/solvers.md). On chains UMFPACK's triangular solves, which
       dominate under the kept Jacobian, cost a quarter of MUMPS's (whose per-front overhead dominates on
       thousands of tiny fronts); on nets its factorization stays within a few times MUMPS's, where KLU's
       (no supernodes) is 40 times slower. */
    PetscMPIInt size;
    PetscCallMPI(MPI_Comm_size(st->comm, &size));
    PetscCall(PCFactorSetMatSolverType(pc, size == 1 ? MATSOLVERUMFPACK : MATSOLVERMUMPS));
  }
  {
    /* MUMPS's workspace estimate assumes little delayed pivoting; the multiplier blocks of these saddle-point
       systems delay many pivots, and the default 20% margin fails (INFOG(1) = -9) on nets and hinge chains.
       Unless the user chose a margin, allow 100%. */
    PetscBool set;
    PetscCall(PetscOptionsHasName(NULL, NULL, "-mat_mumps_icntl_14", &set));
    if (!set) PetscCall(PetscOptionsSetValue(NULL, "-mat_mumps_icntl_14", "100"));
  }
  PetscCall(MbsStepperSetType(st, MBSSCHEMEEM));
  *stepper = st;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsStepperReset(MbsStepper st)
{
  PetscFunctionBegin;
  st->jac_valid = PETSC_FALSE;
  PetscCall(MbsSystemDestroy(&st->sys));
  PetscCall(MatDestroy(&st->J));
  PetscCall(VecDestroy(&st->X));
  PetscCall(VecDestroy(&st->F));
  PetscCall(VecDestroy(&st->Xsave));
  PetscCall(VecDestroy(&st->qstart));
  PetscCall(VecDestroy(&st->pstart));
  PetscCall(VecDestroy(&st->Fext));
  PetscCall(VecDestroy(&st->Xjac));
  PetscCall(VecDestroy(&st->qjac));
  PetscCall(VecDestroy(&st->pjac));
  st->field_q = st->field_p = st->field_v = -1;
  PetscCall(PetscFree2(st->q0, st->p0));
  for (int i = 0; i < MBS_STEPPER_NWORK; i++) PetscCall(PetscFree(st->work[i]));
  st->setup   = PETSC_FALSE;
  st->started = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperDestroy - Destroys a stepper (not its model) and sets the handle to NULL.

  Collective
@*/
PetscErrorCode MbsStepperDestroy(MbsStepper *stepper)
{
  MbsStepper st;

  PetscFunctionBegin;
  if (!stepper || !*stepper) PetscFunctionReturn(0);
  st = *stepper;
  PetscCall(MbsStepperMonitorCancel(st));
  PetscCall(MbsTrajectoryDestroy(&st->traj));
  PetscCall(MbsStepperReset(st));
  if (st->ops.destroy) PetscCall(st->ops.destroy(st));
  PetscCall(VecDestroy(&st->q));
  PetscCall(VecDestroy(&st->p));
  PetscCall(SNESDestroy(&st->snes));
  PetscCall(PetscFree(st));
  *stepper = NULL;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetType - Chooses the time-stepping scheme.

  Collective

  Input Parameters:
+ st - the stepper
- type - a registered scheme name, e.g. MBSSCHEMEEM

  Options Database Key:
. -mbs_scheme <type> - the scheme

  Level: beginner
@*/
PetscErrorCode MbsStepperSetType(MbsStepper st, const char type[])
{
  PetscErrorCode (*create)(MbsStepper);
  PetscBool same;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(st->type, type, &same));
  if (same) PetscFunctionReturn(0);
  PetscCall(PetscFunctionListFind(MbsSchemeFunctions, type, &create));
  PetscCheck(create, st->comm, PETSC_ERR_USER_INPUT, "Unknown scheme '%s'; run with -help to list the registered schemes", type);
  PetscCall(MbsStepperReset(st));
  if (st->ops.destroy) PetscCall(st->ops.destroy(st));
  PetscCall(PetscMemzero(&st->ops, sizeof(st->ops)));
  st->data = NULL;
  PetscCall(PetscStrncpy(st->type, type, sizeof(st->type)));
  st->nparams = 0;
  for (PetscInt i = 0; i < MbsNumSchemeParameters; i++) {
    PetscCall(PetscStrcmp(MbsSchemeParameters[i].scheme, type, &same));
    if (!same) continue;
    PetscCheck(st->nparams < MBS_STEPPER_MAX_PARAMS, st->comm, PETSC_ERR_SUP, "Scheme %s has more than %d parameters", type, MBS_STEPPER_MAX_PARAMS);
    PetscCall(PetscStrncpy(st->param_name[st->nparams], MbsSchemeParameters[i].name, sizeof(st->param_name[0])));
    st->param[st->nparams++] = MbsSchemeParameters[i].def;
  }
  PetscCall(create(st));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetType - The name of the stepper's scheme (borrowed; do not free).

  Not Collective

  Level: beginner
@*/
PetscErrorCode MbsStepperGetType(MbsStepper st, const char *type[])
{
  PetscFunctionBegin;
  *type = st->type;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetTimeStep - Sets the step size h.

  Logically Collective

  Options Database Key:
. -mbs_dt <h> - the step size
@*/
PetscErrorCode MbsStepperSetTimeStep(MbsStepper st, PetscReal h)
{
  PetscFunctionBegin;
  PetscCheck(h > 0 && PetscIsNormalReal(h), st->comm, PETSC_ERR_ARG_OUTOFRANGE, "The step size (-mbs_dt, time.step) must be positive and finite, got %g", (double)h);
  st->h = st->hstep = h;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetTimeStep - The step size h.

  Not Collective

  Level: beginner
@*/
PetscErrorCode MbsStepperGetTimeStep(MbsStepper st, PetscReal *h)
{
  PetscFunctionBegin;
  *h = st->h;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetFinalTime - Sets the time MbsStepperSolve() integrates to.

  Logically Collective

  Options Database Key:
. -mbs_t_end <t> - the final time
@*/
PetscErrorCode MbsStepperSetFinalTime(MbsStepper st, PetscReal t_end)
{
  PetscFunctionBegin;
  PetscCheck(t_end > 0 && PetscIsNormalReal(t_end), st->comm, PETSC_ERR_ARG_OUTOFRANGE, "The final time (-mbs_t_end, time.end) must be positive and finite, got %g", (double)t_end);
  st->t_end = t_end;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetOutput - Sets the output directory (diagnostics.csv) and how often a row is written.

  Logically Collective

  Options Database Keys:
+ -mbs_output_dir <dir> - the directory (created if needed)
- -mbs_output_every <n> - write every n steps (the first and last state are always written)
@*/
PetscErrorCode MbsStepperSetOutput(MbsStepper st, const char directory[], PetscInt every)
{
  PetscFunctionBegin;
  PetscCheck(every > 0, st->comm, PETSC_ERR_ARG_OUTOFRANGE, "The output frequency (-mbs_output_every, output.every) must be positive, got %" PetscInt_FMT, every);
  if (directory) PetscCall(PetscStrncpy(st->output_dir, directory, sizeof(st->output_dir)));
  st->output_every = every;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetSchemeParameter - Sets a real parameter of the current scheme (e.g. "theta" of vi-a);
  MbsStepperSetType() resets parameters to the scheme's defaults.

  Logically Collective

  Options Database Keys:
+ -mbs_theta <theta> - theta of vi-a (default 1/2), Theta of vi-b (default 1)
- -mbs_vartheta <vartheta> - vartheta of vi-b (default 1/2)

  Level: intermediate
@*/
PetscErrorCode MbsStepperSetSchemeParameter(MbsStepper st, const char name[], PetscReal value)
{
  const MbsSchemeParameter *prm;
  PetscBool                 ok;
  char                      expected[256], names[128];

  PetscFunctionBegin;
  PetscCall(MbsSchemeGetParameter(st->type, name, &prm));
  PetscCall(MbsSchemeGetParameterNames(st->type, names, sizeof(names)));
  PetscCheck(prm, st->comm, PETSC_ERR_ARG_WRONG, "Scheme %s has no parameter '%s' (its parameters: %s)", st->type, name, names);
  PetscCall(MbsSchemeCheckParameter(prm, value, &ok, expected, sizeof(expected)));
  PetscCheck(ok, st->comm, PETSC_ERR_ARG_OUTOFRANGE, "Expected %s, got %g", expected, (double)value);
  for (PetscInt i = 0; i < st->nparams; i++) {
    PetscCall(PetscStrcmp(st->param_name[i], name, &ok));
    if (!ok || st->param[i] == value) continue;
    st->param[i] = value;
    /* Blocks with a zero coefficient are left out of the Jacobian's pattern: lay it out again. */
    if (st->setup) PetscCall(MbsStepperReset(st));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode MbsStepperGetParameter_Private(MbsStepper st, const char name[], PetscReal *value)
{
  PetscBool same;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < st->nparams; i++) {
    PetscCall(PetscStrcmp(st->param_name[i], name, &same));
    if (same) {
      *value = st->param[i];
      PetscFunctionReturn(0);
    }
  }
  SETERRQ(st->comm, PETSC_ERR_ARG_WRONG, "Scheme %s has no parameter '%s'", st->type, name);
}

/*@C
  MbsStepperGetSchemeParameter - Gets a real parameter of the current scheme.

  Not Collective
@*/
PetscErrorCode MbsStepperGetSchemeParameter(MbsStepper st, const char name[], PetscReal *value)
{
  PetscFunctionBegin;
  PetscCall(MbsStepperGetParameter_Private(st, name, value));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetPredictor - Chooses the initial guess of each step's Newton iteration: the state at t_n
  (MBS_PREDICTOR_SIMPLE, default) or q_n + h M^-1 p_n (MBS_PREDICTOR_ADVANCED, seed 004 Table 2).

  Logically Collective

  Options Database Key:
. -mbs_predictor <simple,advanced> - the predictor

  Level: intermediate
@*/
PetscErrorCode MbsStepperSetPredictor(MbsStepper st, MbsPredictor predictor)
{
  PetscFunctionBegin;
  st->predictor = predictor;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetPredictor - The Newton initial guess in use (MbsStepperSetPredictor()).

  Not Collective

  Level: intermediate
@*/
PetscErrorCode MbsStepperGetPredictor(MbsStepper st, MbsPredictor *predictor)
{
  PetscFunctionBegin;
  *predictor = st->predictor;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetAdapt - With adapt, a step whose Newton solve fails is retried as two sub-steps of half
  the size, recursively up to max_halvings times (each retry is reported); without, a failed step is an
  error (the default).

  Logically Collective

  Options Database Keys:
+ -mbs_adapt - retry failed steps with halved sub-steps
- -mbs_adapt_max_halvings <n> - at most n halvings of a step (default 5)

  Level: intermediate
@*/
PetscErrorCode MbsStepperSetAdapt(MbsStepper st, PetscBool adapt, PetscInt max_halvings)
{
  PetscFunctionBegin;
  if (max_halvings != PETSC_DEFAULT) {
    PetscCheck(max_halvings >= 1 && max_halvings <= 30, st->comm, PETSC_ERR_ARG_OUTOFRANGE, "The number of step halvings must be in [1, 30], got %" PetscInt_FMT, max_halvings);
    st->adapt_max = max_halvings;
  }
  st->adapt = adapt;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetJacobianReuse - Modified Newton: the Jacobian (and its LU factors) is kept across Newton
  iterations and time steps while each iteration still cuts the residual norm by at least the factor
  rate; it is refreshed at the next iteration when one does not, whenever the step size changes, and a
  step that fails from a kept Jacobian is retried once with a fresh one before it counts as failed.

  Logically Collective

  Input Parameters:
+ st - the stepper
. reuse - PETSC_TRUE to reuse
- rate - contraction factor in (0, 1) below which the kept Jacobian is good enough (PETSC_DEFAULT: 0.75)

  Options Database Keys:
+ -mbs_jacobian_reuse <bool> - by default on for systems of at least 1000 unknowns; 0 gives Newton's method with a fresh Jacobian every iteration
- -mbs_jacobian_reuse_rate <rate> - the factor

  Notes:
  The residual is exact, so a converged step solves the same equations to the same tolerance: the
  scheme's conservation properties are unchanged, only the iteration count and cost differ. With reuse
  on, the stepper owns SNES's Jacobian lag (-snes_lag_jacobian is overridden).

  Level: intermediate

.seealso: `MbsStepperSetPredictor()`, `SNESSetLagJacobian()`
@*/
PetscErrorCode MbsStepperSetJacobianReuse(MbsStepper st, PetscBool reuse, PetscReal rate)
{
  PetscFunctionBegin;
  if (rate == (PetscReal)PETSC_DEFAULT) rate = 0.75;
  PetscCheck(rate > 0 && rate < 1, st->comm, PETSC_ERR_ARG_OUTOFRANGE, "Jacobian reuse rate must be in (0, 1), got %g", (double)rate);
  if (st->reuse && !reuse) PetscCall(SNESSetLagJacobian(st->snes, 1));
  if (!st->reuse && reuse) st->jac_valid = PETSC_FALSE; /* a Jacobian of Newton proper was not recorded for checkpoints: start afresh */
  st->reuse      = reuse;
  st->reuse_set  = PETSC_TRUE;
  st->reuse_rate = rate;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetAdaptRetries - How many times a failed (sub-)step was retried with halved sub-steps.

  Not Collective
@*/
PetscErrorCode MbsStepperGetAdaptRetries(MbsStepper st, PetscInt *retries)
{
  PetscFunctionBegin;
  *retries = st->retries;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetFromOptions - Reads the stepper's options, then the nonlinear solver's (-snes_*, -ksp_*, -pc_*).

  Collective

  Options Database Keys:
+ -mbs_scheme <em> - the scheme
. -mbs_dt <h> - step size
. -mbs_t_end <t> - final time
. -mbs_output_dir <dir> - output directory
. -mbs_output_every <n> - output frequency
. -mbs_write_state <file> - write the final state (index,q,p) as CSV
. -mbs_theta, -mbs_vartheta - the scheme's parameters (MbsStepperSetSchemeParameter())
. -mbs_predictor <simple,advanced> - Newton initial guess
. -mbs_adapt - retry failed steps with halved sub-steps
. -mbs_adapt_max_halvings <n> - at most n halvings per step
. -mbs_energy_divergence <factor> - stop a run whose energy diverges (MbsStepperSetEnergyDivergence())
. -mbs_failure_checkpoint <file> - where a failed step leaves its state (MbsStepperSetFailureCheckpoint())
- -mbs_allow_redundant_constraints - run consistent redundant constraints (MbsStepperSetAllowRedundantConstraints())

  Level: beginner
@*/
PetscErrorCode MbsStepperSetFromOptions(MbsStepper st)
{
  char      type[64];
  PetscBool flg;
  PetscReal h = st->h, t_end = st->t_end;
  PetscInt  every = st->output_every;

  PetscFunctionBegin;
  PetscOptionsBegin(st->comm, NULL, "Multibody time stepper", "MbsStepper");
  PetscCall(PetscOptionsFList("-mbs_scheme", "Time-stepping scheme", "MbsStepperSetType", MbsSchemeFunctions, st->type, type, sizeof(type), &flg));
  if (flg) PetscCall(MbsStepperSetType(st, type));
  PetscCall(PetscOptionsReal("-mbs_dt", "Step size", "MbsStepperSetTimeStep", h, &h, &flg));
  if (flg) PetscCall(MbsStepperSetTimeStep(st, h));
  PetscCall(PetscOptionsReal("-mbs_t_end", "Final time", "MbsStepperSetFinalTime", t_end, &t_end, &flg));
  if (flg) PetscCall(MbsStepperSetFinalTime(st, t_end));
  PetscCall(PetscOptionsString("-mbs_output_dir", "Output directory", "MbsStepperSetOutput", st->output_dir, st->output_dir, sizeof(st->output_dir), NULL));
  PetscCall(PetscOptionsInt("-mbs_output_every", "Write diagnostics every n steps", "MbsStepperSetOutput", every, &every, &flg));
  if (flg) PetscCall(MbsStepperSetOutput(st, NULL, every));
  PetscCall(PetscOptionsString("-mbs_write_state", "Write the final state as CSV", "MbsStepperWriteState", st->write_state, st->write_state, sizeof(st->write_state), NULL));
  for (PetscInt i = 0; i < st->nparams; i++) {
    const MbsSchemeParameter *prm;
    char                      opt[64];
    PetscReal                 value = st->param[i];
    PetscCall(MbsSchemeGetParameter(st->type, st->param_name[i], &prm));
    PetscCall(PetscSNPrintf(opt, sizeof(opt), "-mbs_%s", st->param_name[i]));
    PetscCall(PetscOptionsReal(opt, prm->help, "MbsStepperSetSchemeParameter", value, &value, &flg));
    if (flg) PetscCall(MbsStepperSetSchemeParameter(st, st->param_name[i], value));
  }
  PetscCall(PetscOptionsEnum("-mbs_predictor", "Newton initial guess", "MbsStepperSetPredictor", MbsPredictors, (PetscEnum)st->predictor, (PetscEnum *)&st->predictor, NULL));
  {
    PetscBool adapt = st->adapt;
    PetscInt  maxh  = st->adapt_max;
    PetscCall(PetscOptionsBool("-mbs_adapt", "Retry a failed step with halved sub-steps", "MbsStepperSetAdapt", adapt, &adapt, NULL));
    PetscCall(PetscOptionsInt("-mbs_adapt_max_halvings", "At most this many halvings of a step", "MbsStepperSetAdapt", maxh, &maxh, NULL));
    PetscCall(MbsStepperSetAdapt(st, adapt, maxh));
  }
  {
    PetscBool reuse = st->reuse, set1, set2;
    PetscReal rate  = st->reuse_rate;
    PetscCall(PetscOptionsBool("-mbs_jacobian_reuse", "Modified Newton: keep the factored Jacobian across iterations and steps while it contracts the residual (default: on from 1000 unknowns)", "MbsStepperSetJacobianReuse", reuse, &reuse, &set1));
    PetscCall(PetscOptionsReal("-mbs_jacobian_reuse_rate", "Refresh a reused Jacobian when an iteration cuts the residual norm by less than this factor", "MbsStepperSetJacobianReuse", rate, &rate, &set2));
    if (set1) PetscCall(MbsStepperSetJacobianReuse(st, reuse, rate));
    else if (set2) {
      PetscCheck(rate > 0 && rate < 1, st->comm, PETSC_ERR_ARG_OUTOFRANGE, "Jacobian reuse rate must be in (0, 1), got %g", (double)rate);
      st->reuse_rate = rate;
    }
  }
  {
    PetscBool mon = PETSC_FALSE, prog = PETSC_FALSE;
    char      fmt[16] = "";
    PetscInt  every   = st->traj_every, ckevery = st->checkpoint_every;
    PetscBool has_mon = PETSC_FALSE, has_prog = PETSC_FALSE; /* SetFromOptions called again adds them once */
    for (PetscInt i = 0; i < st->nmonitors; i++) {
      if (st->monitor[i] == MbsStepperMonitorDefault) has_mon = PETSC_TRUE;
      if (st->monitor[i] == MbsStepperMonitorProgress) has_prog = PETSC_TRUE;
    }
    PetscCall(PetscOptionsBool("-mbs_monitor", "Print diagnostics every step", "MbsStepperMonitorDefault", mon, &mon, NULL));
    if (mon && !has_mon) {
      MbsMonitorDefaultCtx *c;
      PetscCall(PetscNew(&c));
      PetscCall(MbsStepperMonitorSet(st, MbsStepperMonitorDefault, c, MbsMonitorCtxDestroy));
    }
    PetscCall(PetscOptionsBool("-mbs_progress", "Print progress (percent, time, steps/s, ETA) to stderr", "MbsStepperMonitorProgress", prog, &prog, NULL));
    if (prog && !has_prog) {
      MbsMonitorProgressCtx *c;
      PetscCall(PetscNew(&c));
      c->step0 = -1;
      PetscCall(MbsStepperMonitorSet(st, MbsStepperMonitorProgress, c, MbsMonitorCtxDestroy));
    }
    PetscCall(PetscOptionsString("-mbs_trajectory", "Trajectory output: xdmf or none", "MbsStepperSetTrajectory", st->traj_format, fmt, sizeof(fmt), &flg));
    {
      /* the trajectory is written as often as the diagnostics unless told otherwise */
      PetscBool set_every;
      if (!st->traj_format[0]) every = st->output_every;
      PetscCall(PetscOptionsInt("-mbs_trajectory_every", "Write the trajectory every n steps (default: as -mbs_output_every)", "MbsStepperSetTrajectory", every, &every, &set_every));
      if (flg || set_every) PetscCall(MbsStepperSetTrajectory(st, flg ? fmt : (st->traj_format[0] ? st->traj_format : "none"), every));
    }
    PetscCall(PetscOptionsString("-mbs_checkpoint", "Checkpoint file (default <output dir>/checkpoint.bin)", "MbsStepperSetCheckpoint", st->checkpoint, st->checkpoint, sizeof(st->checkpoint), NULL));
    PetscCall(PetscOptionsInt("-mbs_checkpoint_every", "Write a checkpoint every n steps and at the end (0: never)", "MbsStepperSetCheckpoint", ckevery, &ckevery, NULL));
    PetscCall(MbsStepperSetCheckpoint(st, NULL, ckevery));
    PetscCall(PetscOptionsString("-mbs_restart", "Continue from this checkpoint", "MbsStepperLoadCheckpoint", st->restart, st->restart, sizeof(st->restart), NULL));
  }
  {
    PetscReal factor = st->energy_divergence;
    PetscCall(PetscOptionsReal("-mbs_energy_divergence", "Stop when the energy moves from its initial value (plus external work) by more than this many times its scale (0: never)", "MbsStepperSetEnergyDivergence", factor, &factor, &flg));
    if (flg) PetscCall(MbsStepperSetEnergyDivergence(st, factor));
    PetscCall(PetscOptionsString("-mbs_failure_checkpoint", "Where a failed or diverged step leaves its state (default <output dir>/failed_step.bin, none: nowhere)", "MbsStepperSetFailureCheckpoint", st->failure_checkpoint, st->failure_checkpoint, sizeof(st->failure_checkpoint), NULL));
  }
  PetscCall(PetscOptionsReal("-mbs_stagnation_tol", "Below this residual norm, a Newton iteration that does not halve it has reached the round-off floor (converged)", "MbsStepperCreate", st->stagnation_tol, &st->stagnation_tol, NULL));
  PetscCall(PetscOptionsReal("-mbs_stagnation_rtol", "... or below this factor times the step's initial residual norm (systems whose floor is above -mbs_stagnation_tol)", "MbsStepperCreate", st->stagnation_rtol, &st->stagnation_rtol, NULL));
  {
    PetscBool allow = st->allow_redundant, set;
    PetscCall(PetscOptionsBool("-mbs_allow_redundant_constraints", "Solve with MUMPS null-pivot detection so that consistent redundant constraints run", "MbsStepperSetAllowRedundantConstraints", allow, &allow, &set));
    if (set) PetscCall(MbsStepperSetAllowRedundantConstraints(st, allow));
  }
  if (st->ops.setfromoptions) PetscCall(st->ops.setfromoptions(st, PetscOptionsObject));
  PetscOptionsEnd();
  PetscCall(SNESSetFromOptions(st->snes));
  PetscFunctionReturn(0);
}

/* Called by a scheme's setup: lay out its unknowns. */
PetscErrorCode MbsStepperSetFields(MbsStepper st, PetscInt n, const MbsFieldKind kinds[], const char *const names[])
{
  PetscFunctionBegin;
  PetscCall(MbsSystemCreate(st->model, n, kinds, names, &st->sys));
  for (PetscInt f = 0; f < n; f++) {
    PetscBool isq, isp;
    PetscCall(PetscStrcmp(names[f], "q", &isq));
    PetscCall(PetscStrcmp(names[f], "p", &isp));
    if (isq) st->field_q = f;
    if (isp) st->field_p = f;
    PetscCall(PetscStrcmp(names[f], "v", &isq));
    if (isq) st->field_v = f;
  }
  PetscCheck(st->field_q >= 0 && st->field_p >= 0, st->comm, PETSC_ERR_PLIB, "Scheme %s must have fields named q and p", st->type);
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsStepperFormFunction(SNES snes, Vec X, Vec F, void *ctx)
{
  MbsStepper         st  = (MbsStepper)ctx;
  MbsSystem          sys = st->sys;
  const PetscScalar *x;
  PetscScalar       *f;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(MBS_Residual, 0, 0, 0, 0));
  PetscCall(MbsSystemGlobalToLocal(sys, X, sys->Xloc));
  PetscCall(VecSet(sys->Floc, 0.0));
  PetscCall(VecGetArrayRead(sys->Xloc, &x));
  PetscCall(VecGetArray(sys->Floc, &f));
  PetscCall(st->ops.residual(st, x, f));
  if (st->force) { /* the host's impulse h F on the momentum balance R_p = p1 - p0 + ... */
    const PetscScalar *fe;
    PetscScalar       *fp = f + sys->loff[st->field_p];
    PetscCall(VecGetArrayRead(st->Fext, &fe));
    for (PetscInt i = 0; i < st->model->nq_local; i++) fp[i] -= st->hstep * fe[i];
    PetscCall(VecRestoreArrayRead(st->Fext, &fe));
  }
  PetscCall(VecRestoreArrayRead(sys->Xloc, &x));
  PetscCall(VecRestoreArray(sys->Floc, &f));
  PetscCall(VecSet(F, 0.0));
  PetscCall(MbsSystemLocalToGlobalAdd(sys, sys->Floc, F));
  PetscCall(PetscLogEventEnd(MBS_Residual, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* Assembles the Jacobian at X for the step the stepper is solving (st->q0, st->p0, st->hstep). */
static PetscErrorCode MbsStepperAssembleJacobian(MbsStepper st, Vec X, Mat J, Mat P)
{
  MbsSystem          sys = st->sys;
  const PetscScalar *x;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(MBS_Jacobian, 0, 0, 0, 0));
  PetscCall(MbsSystemGlobalToLocal(sys, X, sys->Xloc));
  PetscCall(VecGetArrayRead(sys->Xloc, &x));
  PetscCall(MbsSystemAssemblyBegin(sys));
  PetscCall(st->ops.jacobian(st, x));
  PetscCall(MbsSystemAssemblyEnd(sys, P));
  PetscCall(VecRestoreArrayRead(sys->Xloc, &x));
  if (J != P) {
    PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(PetscLogEventEnd(MBS_Jacobian, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsStepperFormJacobian(SNES snes, Vec X, Mat J, Mat P, void *ctx)
{
  MbsStepper st = (MbsStepper)ctx;

  PetscFunctionBegin;
  st->jac_valid = PETSC_TRUE;
  st->jac_fresh = PETSC_TRUE;
  st->jac_h     = st->hstep;
  st->jac_evals++;
  /* What defines a kept Jacobian, for a checkpoint to rebuild the same factors: X, the (sub-)step's
     start state and size. Newton's method proper assembles afresh at every iteration, so only a kept
     (modified-Newton) Jacobian outlives its step. */
  if (st->reuse) {
    PetscCall(VecCopy(X, st->Xjac));
    PetscCall(VecCopy(st->q, st->qjac));
    PetscCall(VecCopy(st->p, st->pjac));
  }
  PetscCall(MbsStepperAssembleJacobian(st, X, J, P));
  PetscFunctionReturn(0);
}

/* After a restart: assembles the kept Jacobian again from what defined it (Xjac, qjac, pjac, jac_h), so
   that the next solve factors exactly the matrix the interrupted run had factored. Leaves st->q0, st->p0
   at (qjac, pjac). */
PetscErrorCode MbsStepperRebuildJacobian(MbsStepper st)
{
  const PetscReal h = st->hstep;

  PetscFunctionBegin;
  PetscCall(MbsModelCoordinatesToLocal(st->model, st->qjac, st->q0));
  PetscCall(MbsModelCoordinatesToLocal(st->model, st->pjac, st->p0));
  st->hstep = st->jac_h;
  PetscCall(MbsStepperAssembleJacobian(st, st->Xjac, st->J, st->J));
  st->hstep     = h;
  st->jac_valid = PETSC_TRUE;
  st->jac_fresh = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetUp - Lays out the scheme's unknowns, creates the Jacobian and the state vectors.

  Collective
@*/
PetscErrorCode MbsStepperSetUp(MbsStepper st)
{
  MbsModel model = st->model;

  PetscFunctionBegin;
  if (st->setup) PetscFunctionReturn(0);
  PetscCheck(st->ops.setup && st->ops.residual && st->ops.jacobian, st->comm, PETSC_ERR_PLIB, "Scheme %s does not provide setup, residual and jacobian", st->type);
  if (!st->q) PetscCall(MbsModelCreateInitialState(model, &st->q, &st->p));
  PetscCall(st->ops.setup(st));
  /* Small systems keep Newton's method proper: a step costs microseconds either way, and quadratic
     convergence reaches the true round-off floor (pendulum energy error 1.4e-14 against 1.5e-13 under
     modified Newton, whose floor test has to be looser, see MbsStepperConverged()). */
  if (!st->reuse_set) st->reuse = (PetscBool)(st->sys->nglobal >= MBS_REUSE_MIN_UNKNOWNS);
  PetscCall(PetscMalloc2(model->nq_ghosted, &st->q0, model->nq_ghosted, &st->p0));
  for (int i = 0; i < MBS_STEPPER_NWORK; i++) PetscCall(PetscMalloc1(model->nq_ghosted, &st->work[i]));
  PetscCall(VecDuplicate(st->sys->X, &st->X));
  PetscCall(VecDuplicate(st->sys->X, &st->F));
  PetscCall(VecDuplicate(st->sys->X, &st->Xsave));
  PetscCall(VecDuplicate(st->q, &st->qstart));
  PetscCall(VecDuplicate(st->p, &st->pstart));
  PetscCall(VecDuplicate(st->q, &st->Fext));
  PetscCall(VecDuplicate(st->sys->X, &st->Xjac));
  PetscCall(VecDuplicate(st->q, &st->qjac));
  PetscCall(VecDuplicate(st->p, &st->pjac));
  PetscCall(MbsSystemCreateMatrix(st->sys, &st->J));
  PetscCall(SNESSetFunction(st->snes, st->F, MbsStepperFormFunction, st));
  PetscCall(SNESSetJacobian(st->snes, st->J, st->J, MbsStepperFormJacobian, st));
  PetscCall(MbsStepperAllowRedundant_Private(st));
  {
    KSP               ksp;
    PC                pc;
    const char *const splits[] = {"fields", "primal_dual"};
    PetscInt          split    = 0;
    PetscCall(SNESGetKSP(st->snes, &ksp));
    PetscCall(KSPGetPC(ksp, &pc));
    /* Named splits for -pc_type fieldsplit (a no-op for other PCs): one per field (-fieldsplit_q_...,
       -fieldsplit_lambda_...), or two, "primal" (q, p, v) and "dual" (lambda, gamma), for a Schur
       complement on the multipliers (-pc_fieldsplit_type schur; docs/solvers.md). */
    PetscOptionsBegin(st->comm, NULL, "Multibody stepper: field splits", "MbsStepper");
    PetscCall(PetscOptionsEList("-mbs_fieldsplit_split", "Splits registered with PCFIELDSPLIT: one per field, or primal (q, p, v) and dual (lambda, gamma)", "MbsStepperSetUp", splits, 2, splits[0], &split, NULL));
    PetscOptionsEnd();
    {
      /* A set-up again (after a scheme parameter changed the layout) must replace the splits, not append to them. */
      PetscBool isfs;
      PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCFIELDSPLIT, &isfs));
      if (isfs) PetscCall(PCReset(pc));
    }
    if (split == 0) {
      for (PetscInt f = 0; f < st->sys->nfields; f++) PetscCall(PCFieldSplitSetIS(pc, st->sys->name[f], st->sys->is[f]));
    } else {
      for (int k = 0; k < 2; k++) {
        IS       list[MBS_MAX_FIELDS], is;
        PetscInt n = 0;
        for (PetscInt f = 0; f < st->sys->nfields; f++)
          if (st->sys->kind[f] == (k ? MBS_FIELD_CONSTRAINT : MBS_FIELD_COORDINATE)) list[n++] = st->sys->is[f];
        PetscCall(ISConcatenate(st->comm, n, list, &is));
        PetscCall(PCFieldSplitSetIS(pc, k ? "dual" : "primal", is));
        PetscCall(ISDestroy(&is));
      }
    }
  }
  {
    PetscBool view = PETSC_FALSE;
    PetscCall(PetscOptionsGetBool(NULL, NULL, "-mbs_view_partition", &view, NULL));
    if (view) { /* the model printed its part at its set-up; the unknowns per rank depend on the scheme */
      PetscViewer viewer;
      PetscMPIInt rank;
      PetscCallMPI(MPI_Comm_rank(st->comm, &rank));
      PetscCall(PetscViewerASCIIGetStdout(st->comm, &viewer));
      PetscCall(PetscViewerASCIIPrintf(viewer, "MbsStepper %s: %" PetscInt_FMT " unknowns in %" PetscInt_FMT " fields\n", st->type, st->sys->nglobal, st->sys->nfields));
      PetscCall(PetscViewerASCIIPushSynchronized(viewer));
      PetscCall(PetscViewerASCIISynchronizedPrintf(viewer, "  [%d] %" PetscInt_FMT " unknowns\n", rank, st->sys->nlocal));
      PetscCall(PetscViewerFlush(viewer));
      PetscCall(PetscViewerASCIIPopSynchronized(viewer));
    }
  }
  st->setup = PETSC_TRUE;
  if (!MbsCited) PetscCall(PetscCitationsRegister(MbsCitation, &MbsCited));
  PetscFunctionReturn(0);
}

/* Copy the state (q, p) into the unknowns' q and p fields (to_unknowns) or back. */
static PetscErrorCode MbsStepperCopyState(MbsStepper st, PetscBool to_unknowns)
{
  const PetscInt field[2] = {st->field_q, st->field_p};
  Vec            state[2] = {st->q, st->p}, sub;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    PetscCall(VecGetSubVector(st->X, st->sys->is[field[k]], &sub));
    if (to_unknowns) PetscCall(VecCopy(state[k], sub));
    else PetscCall(VecCopy(sub, state[k]));
    PetscCall(VecRestoreSubVector(st->X, st->sys->is[field[k]], &sub));
  }
  PetscFunctionReturn(0);
}

/* The initial guess of a (sub-)step from the state (q_n, p_n) at its start: q, p as they are (or
   q_n + h M^-1 p_n with the advanced predictor), v = M^-1 p_n, multipliers as X holds them (the previous
   step's, zero at the start). */
static PetscErrorCode MbsStepperPredict(MbsStepper st)
{
  const PetscReal *minv = st->model->minv;
  Vec              sub;
  PetscScalar     *x;
  const PetscScalar *p;
  PetscInt         n;

  PetscFunctionBegin;
  if (!st->started) {
    PetscCall(VecSet(st->X, 0.0));
    st->started = PETSC_TRUE;
  }
  PetscCall(MbsStepperCopyState(st, PETSC_TRUE));
  /* owned coordinates come first, in order, in the ghosted local arrays minv and p0 */
  PetscCall(VecGetArrayRead(st->p, &p));
  if (st->field_v >= 0) {
    PetscCall(VecGetSubVector(st->X, st->sys->is[st->field_v], &sub));
    PetscCall(VecGetLocalSize(sub, &n));
    PetscCall(VecGetArray(sub, &x));
    for (PetscInt i = 0; i < n; i++) x[i] = minv[i] * p[i];
    PetscCall(VecRestoreArray(sub, &x));
    PetscCall(VecRestoreSubVector(st->X, st->sys->is[st->field_v], &sub));
  }
  if (st->predictor == MBS_PREDICTOR_ADVANCED) {
    PetscCall(VecGetSubVector(st->X, st->sys->is[st->field_q], &sub));
    PetscCall(VecGetLocalSize(sub, &n));
    PetscCall(VecGetArray(sub, &x));
    for (PetscInt i = 0; i < n; i++) x[i] += st->hstep * minv[i] * p[i];
    PetscCall(VecRestoreArray(sub, &x));
    PetscCall(VecRestoreSubVector(st->X, st->sys->is[st->field_q], &sub));
  }
  PetscCall(VecRestoreArrayRead(st->p, &p));
  PetscFunctionReturn(0);
}

/* Why a (sub-)step solve failed, for the report of MbsStepperStep() */
typedef struct {
  SNESConvergedReason reason;
  PetscReal           fnorm, t0, hstep;
  PetscInt            its, level;
} MbsStepFailure;

/* Solves one (sub-)step of size st->hstep from the current state, starting at time t0, at halving
   level `level`. On success the state moves on and *failed is false; on failure the state stays, and
   with adapt the (sub-)step is retried as two halves until adapt_max halvings; when that does not help
   either, *failed is true and fail says why. */
static PetscErrorCode MbsStepperAdvance(MbsStepper st, PetscReal t0, PetscInt level, PetscBool *failed, MbsStepFailure *fail)
{
  SNESConvergedReason reason;
  PetscInt            its;
  PetscReal           fnorm;
  PetscBool           stale = PETSC_FALSE;

  PetscFunctionBegin;
  *failed = PETSC_FALSE;
  PetscCall(MbsModelCoordinatesToLocal(st->model, st->q, st->q0));
  PetscCall(MbsModelCoordinatesToLocal(st->model, st->p, st->p0));
  if (st->force) {
    PetscCall(VecSet(st->Fext, 0.0));
    PetscCall(st->force(st, t0 + 0.5 * st->hstep, st->hstep, st->q, st->p, st->Fext, st->force_ctx));
    PetscCall(VecAssemblyBegin(st->Fext));
    PetscCall(VecAssemblyEnd(st->Fext));
  }
  PetscCall(MbsStepperPredict(st));
  PetscCall(VecCopy(st->X, st->Xsave));
  if (st->reuse) {
    stale = (PetscBool)(st->jac_valid && st->jac_h == st->hstep);
    PetscCall(SNESSetLagJacobian(st->snes, stale ? -1 : -2));
  }
  PetscCall(SNESSolve(st->snes, NULL, st->X));
  PetscCall(SNESGetConvergedReason(st->snes, &reason));
  PetscCall(SNESGetIterationNumber(st->snes, &its));
  st->last_its += its;
  st->total_its += its;
  if (reason <= 0 && stale) { /* a failure that started from an old Jacobian: retry once with a fresh one */
    PetscCall(PetscInfo(st->snes, "Step failed from a reused Jacobian (%s): retrying with a fresh one\n", SNESConvergedReasons[reason]));
    PetscCall(VecCopy(st->Xsave, st->X));
    PetscCall(SNESSetLagJacobian(st->snes, -2));
    PetscCall(SNESSolve(st->snes, NULL, st->X));
    PetscCall(SNESGetConvergedReason(st->snes, &reason));
    PetscCall(SNESGetIterationNumber(st->snes, &its));
    st->last_its += its;
    st->total_its += its;
  }
  if (reason > 0) {
    PetscCall(MbsStepperCopyState(st, PETSC_FALSE));
    if (st->force) { /* the work of the external force along the step, for the energy check */
      const PetscScalar *f, *q;
      PetscInt           n;
      PetscCall(VecGetLocalSize(st->q, &n));
      PetscCall(VecGetArrayRead(st->Fext, &f));
      PetscCall(VecGetArrayRead(st->q, &q));
      for (PetscInt i = 0; i < n; i++) st->ext_work += PetscRealPart(f[i] * (q[i] - st->q0[i])); /* owned coordinates come first in q0 */
      PetscCall(VecRestoreArrayRead(st->q, &q));
      PetscCall(VecRestoreArrayRead(st->Fext, &f));
    }
    PetscFunctionReturn(0);
  }
  PetscCall(SNESGetFunctionNorm(st->snes, &fnorm));
  PetscCall(VecCopy(st->Xsave, st->X)); /* the guess, with the multipliers of the last accepted step */
  if (!st->adapt || level >= st->adapt_max) {
    *failed      = PETSC_TRUE;
    fail->reason = reason;
    fail->fnorm  = fnorm;
    fail->its    = its;
    fail->level  = level;
    fail->t0     = t0;
    fail->hstep  = st->hstep;
    PetscFunctionReturn(0);
  }
  st->retries++;
  PetscCall(PetscPrintf(st->comm, "gglmbs: step %" PetscInt_FMT " (t = %g, h = %g) of scheme %s did not converge: residual norm %.3e after %" PetscInt_FMT " Newton iterations, SNES reason %s; retrying as 2 sub-steps of h = %g\n", st->step + 1, (double)t0, (double)st->hstep, st->type, (double)fnorm, its, SNESConvergedReasons[reason], (double)(0.5 * st->hstep)));
  st->hstep *= 0.5;
  PetscCall(MbsStepperAdvance(st, t0, level + 1, failed, fail));
  if (!*failed) PetscCall(MbsStepperAdvance(st, t0 + st->hstep, level + 1, failed, fail));
  st->hstep *= 2.0;
  PetscFunctionReturn(0);
}

/* Writes the current state to the failure checkpoint, unless it is switched off; says where in `where`
   (for the error message). Errors of the write itself are reported in `where`, not raised: the failure
   being reported matters more. */
static PetscErrorCode MbsStepperWriteFailureState(MbsStepper st, PetscBool restartable, char where[], size_t len)
{
  char           path[PETSC_MAX_PATH_LEN];
  PetscBool      none;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  where[0] = 0;
  PetscCall(PetscStrcmp(st->failure_checkpoint, "none", &none));
  if (none) PetscFunctionReturn(0);
  if (st->failure_checkpoint[0]) PetscCall(PetscStrncpy(path, st->failure_checkpoint, sizeof(path)));
  else PetscCall(PetscSNPrintf(path, sizeof(path), "%s/failed_step.bin", st->output_dir));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MbsStepperWriteCheckpoint(st, path);
  PetscCall(PetscPopErrorHandler());
  if (ierr) PetscCall(PetscSNPrintf(where, len, "; writing its state to %s failed too", path));
  else if (restartable) PetscCall(PetscSNPrintf(where, len, "; the state at its start is in %s (continue from it with other options: -mbs_restart %s)", path, path));
  else PetscCall(PetscSNPrintf(where, len, "; the state it reached is in %s, for inspection", path));
  PetscFunctionReturn(0);
}

/* T + V of the current state (collective); also sums the ranks' external work of the step into *work. */
static PetscErrorCode MbsStepperEnergy(MbsStepper st, PetscReal *E, PetscReal *T0, PetscReal *V0, PetscReal *work)
{
  MbsModel           model = st->model;
  const PetscScalar *p;
  PetscReal          loc[2] = {0, st->ext_work}, glob[2], V;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(st->p, &n));
  PetscCall(VecGetArrayRead(st->p, &p));
  for (PetscInt i = 0; i < n; i++) loc[0] += 0.5 * PetscRealPart(p[i] * p[i]) * model->minv[i];
  PetscCall(VecRestoreArrayRead(st->p, &p));
  PetscCall(MPIU_Allreduce(loc, glob, 2, MPIU_REAL, MPIU_SUM, st->comm));
  PetscCall(MbsModelCoordinatesToLocal(model, st->q, st->work[0]));
  PetscCall(MbsOpPotentialEnergy(model, st->work[0], &V));
  *E = glob[0] + V;
  if (T0) *T0 = glob[0];
  if (V0) *V0 = V;
  if (work) *work = glob[1];
  st->ext_work = 0;
  PetscFunctionReturn(0);
}

/* The energy a run starts with and its scale: the largest of |E|, T, |V| and the work gravity does over
   the model's extent (a chain released from rest at V = 0 has E = T = V = 0). */
static PetscErrorCode MbsStepperEnergyStart(MbsStepper st)
{
  MbsModel           model = st->model;
  const PetscScalar *q;
  PetscReal          E, T, V, box[6], mass = 0, total_mass, g = 0, diameter = 0;

  PetscFunctionBegin;
  PetscCall(MbsStepperEnergy(st, &E, &T, &V, NULL));
  for (int i = 0; i < 6; i++) box[i] = PETSC_MAX_REAL; /* min x_i, then min -x_i */
  PetscCall(VecGetArrayRead(st->q, &q));
  for (PetscInt k = 0; k < model->nowned; k++) {
    const PetscInt b = model->owned_body[k], off = model->body_q[b] - model->rank_qstart[model->rank];
    mass += model->bodies[b].mass;
    for (int i = 0; i < 3; i++) {
      box[i]     = PetscMin(box[i], PetscRealPart(q[off + i]));
      box[3 + i] = PetscMin(box[3 + i], -PetscRealPart(q[off + i]));
    }
  }
  PetscCall(VecRestoreArrayRead(st->q, &q));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, box, 6, MPIU_REAL, MPIU_MIN, st->comm));
  PetscCall(MPIU_Allreduce(&mass, &total_mass, 1, MPIU_REAL, MPIU_SUM, st->comm));
  for (int i = 0; i < 3; i++) {
    g += PetscSqr(model->gravity[i]);
    if (model->nbodies) diameter += PetscSqr(-box[3 + i] - box[i]);
  }
  st->energy_ref   = E;
  st->energy_scale = PetscMax(PetscMax(PetscAbsReal(E), T), PetscMax(PetscAbsReal(V), total_mass * PetscSqrtReal(g) * PetscSqrtReal(diameter)));
  st->energy_set   = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* After an accepted step: the energy must stay finite and within energy_divergence times its scale of
   the initial energy plus the external work. A scheme that blows up (too large a step for a VI scheme, a
   Newton solve that converged to a spurious root) is stopped at the step it happens. */
static PetscErrorCode MbsStepperCheckEnergy(MbsStepper st, PetscBool *diverged, PetscReal *E)
{
  PetscReal work;

  PetscFunctionBegin;
  *diverged = PETSC_FALSE;
  PetscCall(MbsStepperEnergy(st, E, NULL, NULL, &work));
  st->energy_ref += work;
  if (!PetscIsInfOrNanReal(*E) && (st->energy_scale == 0 || PetscAbsReal(*E - st->energy_ref) <= st->energy_divergence * st->energy_scale)) PetscFunctionReturn(0);
  *diverged = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperStep - Advances one step of size h: solves the scheme's nonlinear system with SNES and
  accepts the new state. A step whose solve does not converge (diverged, maximum iterations, NaN) is
  never accepted: without -mbs_adapt it is an error naming the step, the time, the scheme, the residual
  norm and the SNES reason, and the state stays at the start of the step; with -mbs_adapt it is retried
  as two sub-steps of half the size (reported, up to the halving limit). When the constraints at the
  start of a failed step are redundant (linearly dependent), the error names the elements involved.
  A step whose energy leaves the bound of -mbs_energy_divergence is accepted and then reported as an error.
  In both cases the state (for a failed step the one at its start, for a diverged one the state it reached)
  is written to the failure checkpoint first (MbsStepperSetFailureCheckpoint()).

  Collective

  Level: beginner

.seealso: `MbsStepperSetAdapt()`, `MbsStepperSetPredictor()`, `MbsStepperSetFailureCheckpoint()`, `MbsStepperSetEnergyDivergence()`
@*/
PetscErrorCode MbsStepperStep(MbsStepper st)
{
  MbsStepFailure fail;
  PetscBool      failed, diverged = PETSC_FALSE;
  PetscReal      E = 0;

  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  if (st->monitored_step != st->step) PetscCall(MbsStepperMonitor(st)); /* the initial state */
  if (st->energy_divergence > 0 && !st->energy_set) PetscCall(MbsStepperEnergyStart(st));
  PetscCall(PetscLogEventBegin(MBS_Step, 0, 0, 0, 0));
  st->hstep    = st->h;
  st->last_its = 0;
  st->ext_work = 0;
  if (st->adapt) { /* sub-steps may be accepted before a later one fails */
    PetscCall(VecCopy(st->q, st->qstart));
    PetscCall(VecCopy(st->p, st->pstart));
  }
  PetscCall(MbsStepperAdvance(st, st->t, 0, &failed, &fail));
  st->hstep = st->h;
  PetscCall(PetscLogEventEnd(MBS_Step, 0, 0, 0, 0));
  if (failed) {
    char     sub[128] = "", where[2 * PETSC_MAX_PATH_LEN + 128], redundant[2048] = "";
    PetscInt ndependent = 0;
    if (st->adapt) {
      PetscCall(VecCopy(st->qstart, st->q));
      PetscCall(VecCopy(st->pstart, st->p));
    }
    if (fail.level) PetscCall(PetscSNPrintf(sub, sizeof(sub), " after %" PetscInt_FMT " halvings (sub-step t = %g, h = %g)", fail.level, (double)fail.t0, (double)fail.hstep));
    PetscCall(MbsStepperWriteFailureState(st, PETSC_TRUE, where, sizeof(where)));
    {
      /* The diagnosis needs a factorization of its own; if that fails too, the step's failure is still
         what gets reported. */
      PetscErrorCode ierr;
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = MbsModelFindRedundantConstraints(st->model, st->q, &ndependent, redundant, sizeof(redundant));
      PetscCall(PetscPopErrorHandler());
      if (ierr) ndependent = 0;
    }
    /* the checkpoint comes before the report, which may be long (PETSc keeps 2047 characters of a message) */
    SETERRQ(st->comm, PETSC_ERR_NOT_CONVERGED, "Step %" PetscInt_FMT " (t = %g -> %g) of scheme %s did not converge%s: residual norm %.3e after %" PetscInt_FMT " Newton iterations, SNES reason %s%s%s%s%s", st->step + 1, (double)st->t, (double)(st->t + st->h), st->type, sub, (double)fail.fnorm, fail.its, SNESConvergedReasons[fail.reason], ndependent ? "" : ". Try a smaller step (-mbs_dt), -mbs_adapt, or see -snes_monitor -snes_converged_reason", where, ndependent ? ". Cause: " : "", redundant);
  }
  st->step++;
  st->t = st->step * st->h;
  if (st->energy_divergence > 0) PetscCall(MbsStepperCheckEnergy(st, &diverged, &E));
  if (diverged) {
    char where[2 * PETSC_MAX_PATH_LEN + 128];
    PetscCall(MbsStepperWriteFailureState(st, PETSC_FALSE, where, sizeof(where)));
    SETERRQ(st->comm, PETSC_ERR_NOT_CONVERGED, "Step %" PetscInt_FMT " (t = %g -> %g) of scheme %s: the energy diverged: E = %.6e, expected %.6e within %g times its scale %.3e (-mbs_energy_divergence). Try a smaller step (-mbs_dt) or another scheme%s", st->step, (double)(st->t - st->h), (double)st->t, st->type, (double)E, (double)st->energy_ref, (double)st->energy_divergence, (double)st->energy_scale, where);
  }
  PetscCall(MbsStepperMonitor(st));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperComputeDiagnostics - Energy, momentum maps and constraint residuals of the current state.

  Collective

  Output Parameter:
. d - the diagnostics
@*/
PetscErrorCode MbsStepperComputeDiagnostics(MbsStepper st, MbsDiagnostics *d)
{
  MbsModel     model = st->model;
  PetscScalar *q, *w;
  PetscReal    loc[7] = {0, 0, 0, 0, 0, 0, 0}, glob[7];

  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  PetscCall(PetscLogEventBegin(MBS_Diagnostics, 0, 0, 0, 0));
  q = st->work[0];
  w = st->work[1];
  PetscCall(MbsModelCoordinatesToLocal(model, st->q, q));
  PetscCall(MbsModelCoordinatesToLocal(model, st->p, w));
  for (PetscInt k = 0; k < model->nowned; k++) {
    const PetscInt b = model->owned_body[k], off = model->body_lq[b];
    for (PetscInt j = 0; j < (PetscInt)model->bodies[b].type; j++) {
      const PetscScalar *x = q + off + 3 * j, *pp = w + off + 3 * j;
      loc[1] += PetscRealPart(x[1] * pp[2] - x[2] * pp[1]);
      loc[2] += PetscRealPart(x[2] * pp[0] - x[0] * pp[2]);
      loc[3] += PetscRealPart(x[0] * pp[1] - x[1] * pp[0]);
      if (j == 0)
        for (int i = 0; i < 3; i++) loc[4 + i] += PetscRealPart(pp[i]);
    }
  }
  for (PetscInt i = 0; i < model->nq_ghosted; i++) w[i] *= model->minv[i];
  for (PetscInt i = 0; i < model->nq_local; i++) loc[0] += 0.5 * PetscRealPart(w[i] * w[i]) / model->minv[i];
  PetscCall(MPIU_Allreduce(loc, glob, 7, MPIU_REAL, MPIU_SUM, st->comm));
  d->T = glob[0];
  for (int i = 0; i < 3; i++) {
    d->J[i] = glob[1 + i];
    d->L[i] = glob[4 + i];
  }
  PetscCall(MbsOpPotentialEnergy(model, q, &d->V));
  d->E = d->T + d->V;
  PetscCall(MbsOpConstraintMax(model, q, w, &d->g_max, &d->gv_max));
  d->has_Gv = (st->ops.velocity_residual && st->step > 0) ? PETSC_TRUE : PETSC_FALSE;
  d->Gv_max = 0;
  if (d->has_Gv) PetscCall(st->ops.velocity_residual(st, &d->Gv_max));
  PetscCall(PetscLogEventEnd(MBS_Diagnostics, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsStepperWriteDiagnostics(MbsStepper st, MbsDiagnosticsFile file)
{
  MbsDiagnostics d;

  PetscFunctionBegin;
  PetscCall(MbsStepperComputeDiagnostics(st, &d));
  PetscCall(MbsDiagnosticsFileWrite(file, st->step, st->t, &d, st->step ? st->last_its : 0));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSolve - Integrates from the current time to the final time, writing diagnostics.csv into
  the output directory (every -mbs_output_every steps and the last), the trajectory if one is set, a
  checkpoint every -mbs_checkpoint_every steps, and the final state if -mbs_write_state is set. With
  -mbs_restart FILE it first continues from that checkpoint (MbsStepperLoadCheckpoint()), appending to
  the diagnostics of the interrupted run.

  With the handlers of MbsInterruptHandlerPush() installed, a SIGINT or SIGTERM stops the run after the
  step in progress: a checkpoint (the file of MbsStepperSetCheckpoint(), default <output
  directory>/checkpoint.bin) is written, the outputs are closed, and Solve returns
  PETSC_ERR_SIG with a message naming the checkpoint and the -mbs_restart option that continues the run.
  A step that fails or diverges is an error of MbsStepperStep(); the diagnostics written so far stay
  complete (every row is whole: a failed write is cut back to the last whole row).

  Collective

  Level: beginner

.seealso: `MbsStepperStep()`, `MbsStepperSetCheckpoint()`, `MbsStepperSetTrajectory()`, `MbsInterruptHandlerPush()`
@*/
PetscErrorCode MbsStepperSolve(MbsStepper st)
{
  MbsDiagnosticsFile file = NULL;
  PetscInt           nsteps;
  PetscErrorCode     ierr = 0;
  PetscBool          catch_signals;
  int                signum = 0;

  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  if (st->restart[0] && !st->restarted) PetscCall(MbsStepperLoadCheckpoint(st, st->restart));
  PetscCheck(st->t_end / st->h < (PetscReal)PETSC_MAX_INT, st->comm, PETSC_ERR_ARG_OUTOFRANGE, "A final time of %g with steps of %g makes %g steps, more than %" PetscInt_FMT " (the largest PetscInt)", (double)st->t_end, (double)st->h, (double)(st->t_end / st->h), (PetscInt)PETSC_MAX_INT);
  nsteps = MbsStepperNumSteps(st);
  {
    /* every rank takes part in the per-step reduction if any rank catches signals */
    PetscBool installed;
    PetscCall(MbsInterruptPending(&installed, NULL));
    PetscCallMPI(MPI_Allreduce(&installed, &catch_signals, 1, MPIU_BOOL, MPI_LOR, st->comm));
    PetscCall(MbsInterruptSetAgreed_Private(0));
  }
  /* A run that continues (from a checkpoint, or a second Solve to a later final time) appends to the
     diagnostics it continues, rows after its step dropped; a run from step 0 starts the file afresh. */
  PetscCall(MbsDiagnosticsFileOpen(st->comm, st->output_dir, st->step > 0 ? st->step : -1, &file));
  /* a continued run adds no row off the output grid (a checkpoint taken at an interrupt may lie there) */
  if (!MbsDiagnosticsFileHasStep(file, st->step) && st->step % st->output_every == 0) PetscCall(MbsStepperWriteDiagnostics(st, file));
  if (st->monitored_step != st->step) PetscCall(MbsStepperMonitor(st));
  while (st->step < nsteps) {
    if (catch_signals) { /* every rank stops after the same step */
      int sig;
      PetscCall(MbsInterruptPending(NULL, &sig));
      PetscCallMPI(MPI_Allreduce(&sig, &signum, 1, MPI_INT, MPI_MAX, st->comm));
      if (signum) break;
    }
    ierr = MbsStepperStep(st);
    if (ierr) break;
    if (st->step % st->output_every == 0 || st->step == nsteps) {
      ierr = MbsStepperWriteDiagnostics(st, file);
      if (ierr) break;
    }
    if (st->checkpoint_every > 0 && st->step % st->checkpoint_every == 0 && st->step < nsteps) {
      ierr = MbsStepperWriteCheckpoint(st, NULL);
      if (ierr) break;
    }
  }
  if (signum) {
    PetscCall(MbsInterruptSetAgreed_Private(signum));
    /* The diagnostics and the trajectory keep their rows and frames on the -mbs_output_every grid (each
       is flushed as it is written), so that the restarted run continues them as if never interrupted. */
    char path[PETSC_MAX_PATH_LEN];
    ierr = MbsStepperWriteCheckpoint(st, NULL);
    PetscCall(MbsDiagnosticsFileClose(&file));
    PetscCall(ierr);
    PetscCall(MbsStepperCheckpointPath(st, NULL, path, sizeof(path)));
    SETERRQ(st->comm, PETSC_ERR_SIG, "Interrupted by %s after step %" PetscInt_FMT " of %" PetscInt_FMT " (t = %g): the checkpoint is in %s; continue with the same command and -mbs_restart %s", signum == SIGINT ? "SIGINT" : signum == SIGTERM ? "SIGTERM" : "a signal", st->step, nsteps, (double)st->t, path, path);
  }
  PetscCall(MbsDiagnosticsFileClose(&file));
  PetscCall(ierr);
  if (st->traj) PetscCall(MbsTrajectoryWrite(st->traj, st, PETSC_TRUE));
  if (st->checkpoint_every > 0) PetscCall(MbsStepperWriteCheckpoint(st, NULL));
  if (st->write_state[0]) PetscCall(MbsStepperWriteState(st, st->write_state));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperView - Prints the scheme, its parameters, the problem size and the solver.

  Collective
@*/
PetscErrorCode MbsStepperView(MbsStepper st, PetscViewer viewer)
{
  PetscInt nb, nq, nc, n = 0;

  PetscFunctionBegin;
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(st->comm, &viewer));
  PetscCall(MbsModelGetNumBodies(st->model, &nb));
  PetscCall(MbsModelGetSizes(st->model, NULL, &nq, NULL, &nc));
  if (st->sys) n = st->sys->nglobal;
  PetscCall(PetscViewerASCIIPrintf(viewer, "MbsStepper: scheme %s, h = %g, t_end = %g\n", st->type, (double)st->h, (double)st->t_end));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  %" PetscInt_FMT " bodies, %" PetscInt_FMT " coordinates, %" PetscInt_FMT " constraints, %" PetscInt_FMT " unknowns\n", nb, nq, nc, n));
  if (st->ops.view) PetscCall(st->ops.view(st, viewer));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(SNESView(st->snes, viewer));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetModel - The model the stepper integrates (borrowed; do not destroy).

  Not Collective

  Level: beginner
@*/
PetscErrorCode MbsStepperGetModel(MbsStepper st, MbsModel *model)
{
  PetscFunctionBegin;
  *model = st->model;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetSNES - The nonlinear solver of each step (borrowed), for settings the options database does not reach.

  Not Collective

  Level: intermediate
@*/
PetscErrorCode MbsStepperGetSNES(MbsStepper st, SNES *snes)
{
  PetscFunctionBegin;
  *snes = st->snes;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetTime - The current time t = n h.

  Not Collective

  Level: beginner
@*/
PetscErrorCode MbsStepperGetTime(MbsStepper st, PetscReal *t)
{
  PetscFunctionBegin;
  *t = st->t;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetStepNumber - The number of accepted steps since the start (a restart continues the count).

  Not Collective

  Level: beginner
@*/
PetscErrorCode MbsStepperGetStepNumber(MbsStepper st, PetscInt *step)
{
  PetscFunctionBegin;
  *step = st->step;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetState - The current coordinates and momenta (borrowed references; do not destroy).

  Not Collective
@*/
PetscErrorCode MbsStepperGetState(MbsStepper st, Vec *q, Vec *p)
{
  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  if (q) *q = st->q;
  if (p) *p = st->p;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetNewtonIterations - Newton iterations of the last step (all attempts with -mbs_adapt) and in total; either may be NULL.

  Not Collective

  Level: intermediate
@*/
PetscErrorCode MbsStepperGetNewtonIterations(MbsStepper st, PetscInt *last, PetscInt *total)
{
  PetscFunctionBegin;
  if (last) *last = st->last_its;
  if (total) *total = st->total_its;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetNumUnknowns - The global number of unknowns of the scheme's nonlinear system per step.

  Collective (sets the stepper up if needed)

  Level: intermediate
@*/
PetscErrorCode MbsStepperGetNumUnknowns(MbsStepper st, PetscInt *n)
{
  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  *n = st->sys->nglobal;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperMonitorSet - Adds a monitor, called with the initial state (step 0, or the step a restart
  continues from) and after every accepted step, from MbsStepperSolve() and from a host's own loop over
  MbsStepperStep() alike.

  Logically Collective

  Input Parameters:
+ st - the stepper
. monitor - monitor(st, step, t, ctx)
. ctx - its context
- destroy - frees ctx when the monitor is cancelled (or NULL)

  Options Database Keys:
+ -mbs_monitor - MbsStepperMonitorDefault(): one line of diagnostics per step
- -mbs_progress - MbsStepperMonitorProgress(): progress to stderr (the gglmbs program's default when stderr is a terminal)

  Level: intermediate

.seealso: `MbsStepperMonitorCancel()`, `MbsStepperComputeDiagnostics()`
@*/
PetscErrorCode MbsStepperMonitorSet(MbsStepper st, PetscErrorCode (*monitor)(MbsStepper, PetscInt, PetscReal, void *), void *ctx, PetscErrorCode (*destroy)(void **))
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < st->nmonitors; i++) /* the same monitor twice (e.g. SetFromOptions called again) is added once */
    if (st->monitor[i] == monitor && st->monitor_ctx[i] == ctx) PetscFunctionReturn(0);
  PetscCheck(st->nmonitors < MBS_MAX_MONITORS, st->comm, PETSC_ERR_ARG_OUTOFRANGE, "At most %d monitors", MBS_MAX_MONITORS);
  st->monitor[st->nmonitors]         = monitor;
  st->monitor_ctx[st->nmonitors]     = ctx;
  st->monitor_destroy[st->nmonitors] = destroy;
  st->nmonitors++;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperMonitorCancel - Removes all monitors, freeing their contexts.

  Logically Collective

  Level: intermediate
@*/
PetscErrorCode MbsStepperMonitorCancel(MbsStepper st)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < st->nmonitors; i++)
    if (st->monitor_destroy[i]) PetscCall(st->monitor_destroy[i](&st->monitor_ctx[i]));
  st->nmonitors = 0;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperMonitor - Runs the trajectory output and the monitors on the current state (called by
  MbsStepperStep() and MbsStepperSolve(); a host only needs it to monitor a state it set itself).

  Collective

  Level: developer
@*/
PetscErrorCode MbsStepperMonitor(MbsStepper st)
{
  PetscBool none;

  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  PetscCall(PetscStrcmp(st->traj_format, "none", &none));
  if (st->traj_format[0] && !none && !st->traj) PetscCall(MbsTrajectoryCreate(st, st->traj_format, st->traj_every, &st->traj));
  if (st->traj) PetscCall(MbsTrajectoryWrite(st->traj, st, PETSC_FALSE));
  for (PetscInt i = 0; i < st->nmonitors; i++) PetscCall(st->monitor[i](st, st->step, st->t, st->monitor_ctx[i]));
  st->monitored_step = st->step;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperMonitorDefault - Prints one line per step: step, time, energy and its change since the
  first monitored state (relative to |E_0|, or absolute when E_0 = 0), both constraint levels and the
  step's Newton iterations. ctx: NULL, or the context created by -mbs_monitor.

  Collective

  Options Database Key:
. -mbs_monitor - use this monitor

  Level: beginner
@*/
PetscErrorCode MbsStepperMonitorDefault(MbsStepper st, PetscInt step, PetscReal t, void *ctx)
{
  MbsMonitorDefaultCtx *c = (MbsMonitorDefaultCtx *)ctx;
  MbsDiagnostics        d;
  PetscReal             dE;
  char                  Gv[48] = "";

  PetscFunctionBegin;
  PetscCall(MbsStepperComputeDiagnostics(st, &d));
  if (c && !c->have0) {
    c->have0 = PETSC_TRUE;
    c->E0    = d.E;
  }
  dE = c ? (d.E - c->E0) / (c->E0 != 0 ? PetscAbsReal(c->E0) : 1.0) : 0.0;
  if (d.has_Gv) PetscCall(PetscSNPrintf(Gv, sizeof(Gv), " Gv %.2e", (double)d.Gv_max));
  PetscCall(PetscPrintf(st->comm, "%5" PetscInt_FMT " t %.6e E %.15e dE %+.2e g %.2e gv %.2e%s its %" PetscInt_FMT "\n", step, (double)t, (double)d.E, (double)dE, (double)d.g_max, (double)d.gv_max, Gv, step ? st->last_its : 0));
  PetscFunctionReturn(0);
}

#define MBS_PROGRESS_INTERVAL 2.0 /* seconds of wall clock between progress lines */

/*@C
  MbsStepperMonitorProgress - Prints progress to stderr (rank 0) at most every 2 s of wall clock, and a
  last line at the final step if it printed before: percent of the steps to the final time, simulated
  time, steps per second and the estimated time to go. ctx: the context created by -mbs_progress.

  Collective

  Options Database Key:
. -mbs_progress - use this monitor (the gglmbs program turns it on when stderr is a terminal)

  Level: beginner
@*/
PetscErrorCode MbsStepperMonitorProgress(MbsStepper st, PetscInt step, PetscReal t, void *ctx)
{
  MbsMonitorProgressCtx *c = (MbsMonitorProgressCtx *)ctx;
  PetscLogDouble         now;
  PetscInt               nsteps = MbsStepperNumSteps(st);
  PetscReal              rate, eta;

  PetscFunctionBegin;
  PetscCheck(c, st->comm, PETSC_ERR_ARG_NULL, "MbsStepperMonitorProgress needs its context (use -mbs_progress)");
  PetscCall(PetscTime(&now));
  /* every rank decides from rank 0's clock, so the collective print is entered by all or none */
  PetscCallMPI(MPI_Bcast(&now, 1, MPI_DOUBLE, 0, st->comm));
  if (c->step0 < 0) {
    c->start = c->last = now;
    c->step0           = step;
    PetscFunctionReturn(0);
  }
  if (now - c->last < MBS_PROGRESS_INTERVAL && !(c->printed && step >= nsteps)) PetscFunctionReturn(0);
  c->last    = now;
  c->printed = PETSC_TRUE;
  rate       = (step - c->step0) / PetscMax(now - c->start, 1e-9);
  eta        = rate > 0 ? (nsteps - step) / rate : 0.0;
  PetscCall(PetscFPrintf(st->comm, PETSC_STDERR, "gglmbs: %5.1f%%  t = %.6g of %.6g  step %" PetscInt_FMT " of %" PetscInt_FMT "  %.1f steps/s  ETA %.0f s\n", nsteps ? 100.0 * step / nsteps : 100.0, (double)t, (double)st->t_end, step, nsteps, (double)rate, (double)PetscMax(eta, 0.0)));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetExternalForce - Sets forces applied by a host code. force(st, t, h, q, p, F, ctx) is
  called once per step (and per sub-step when -mbs_adapt splits one) before its solve, with t the mid-time
  t_n + h/2, h the (sub-)step size and (q, p) the state at its start (read only). It adds generalized
  forces into F (coordinate layout, zeroed before the call; MbsModelAddPointForce() turns a force at a
  point into them), and the stepper assembles F. Every scheme adds the impulse h F to its momentum
  balance (R_p = p_{n+1} - p_n + ... - h F): the force is constant over a step and evaluated from its
  start, the usual explicit (staggered) coupling. With EM the discrete energy balance is exact:
  E_{n+1} - E_n = F . (q_{n+1} - q_n), the work of F along the step's displacement (the GGL term makes
  q_{n+1} - q_n differ from h M^-1 (p_n + p_{n+1})/2 where constraints act, so the midpoint-velocity work
  balances only to O(h) of the multiplier gamma).

  Logically Collective

  Input Parameters:
+ st - the stepper
. force - the force routine, or NULL to remove it
- ctx - its context

  Level: intermediate

.seealso: `MbsModelAddPointForce()`, `MbsModelGetBodyCoordinates()`, `MbsStepperStep()`
@*/
PetscErrorCode MbsStepperSetExternalForce(MbsStepper st, MbsExternalForceFn force, void *ctx)
{
  PetscFunctionBegin;
  st->force     = force;
  st->force_ctx = ctx;
  PetscFunctionReturn(0);
}

/* The owner of a body evaluates a point's position (velocity) in the current state and broadcasts it. */
static PetscErrorCode MbsStepperPointKinematics(MbsStepper st, PetscInt body, const PetscReal X[3], PetscBool velocity, PetscReal x[3])
{
  MbsModel           model = st->model;
  Vec                v     = velocity ? st->p : st->q;
  PetscMPIInt        owner;
  PetscInt           off, n, start;
  const PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  PetscCall(MbsModelGetBodyCoordinates(model, body, &off, &n, &owner));
  if (model->rank == owner) {
    const MbsBody *b = &model->bodies[body];
    PetscCall(VecGetOwnershipRange(v, &start, NULL));
    PetscCall(VecGetArrayRead(v, &a));
    for (int i = 0; i < 3; i++) {
      x[i] = PetscRealPart(a[off - start + i]) / (velocity ? b->mblock[0] : 1.0);
      if (b->type == MBS_BODY_RIGID && X)
        for (int d = 0; d < 3; d++) x[i] += X[d] * PetscRealPart(a[off - start + 3 + 3 * d + i]) / (velocity ? b->mblock[1 + d] : 1.0);
    }
    PetscCall(VecRestoreArrayRead(v, &a));
  }
  PetscCallMPI(MPI_Bcast(x, 3, MPIU_REAL, owner, st->comm));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetPointPosition - World position of a material point of a body in the current state.

  Collective: the owner of the body computes it and every rank receives it.

  Input Parameters:
+ st - the stepper
. body - the body index
- X - the point in the body frame (ignored for a particle; NULL: the centre)

  Output Parameter:
. x - world position

  Level: beginner

.seealso: `MbsStepperGetPointVelocity()`, `MbsStepperGetState()`
@*/
PetscErrorCode MbsStepperGetPointPosition(MbsStepper st, PetscInt body, const PetscReal X[3], PetscReal x[3])
{
  PetscFunctionBegin;
  PetscCall(MbsStepperPointKinematics(st, body, X, PETSC_FALSE, x));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetPointVelocity - World velocity M^-1 p of a material point of a body in the current state
  (centre velocity plus X_i times the director velocities of a rigid body).

  Collective: the owner of the body computes it and every rank receives it.

  Level: beginner

.seealso: `MbsStepperGetPointPosition()`
@*/
PetscErrorCode MbsStepperGetPointVelocity(MbsStepper st, PetscInt body, const PetscReal X[3], PetscReal v[3])
{
  PetscFunctionBegin;
  PetscCall(MbsStepperPointKinematics(st, body, X, PETSC_TRUE, v));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetTrajectory - Writes the trajectory for visualization into the output directory
  (docs/output.md): format "xdmf" (trajectory.xdmf + trajectory.h5) or "none", every `every` steps and
  the last step of MbsStepperSolve().

  Logically Collective

  Options Database Keys:
+ -mbs_trajectory <none,xdmf> - the format
- -mbs_trajectory_every <n> - write every n steps

  Level: beginner
@*/
PetscErrorCode MbsStepperSetTrajectory(MbsStepper st, const char format[], PetscInt every)
{
  PetscBool xdmf, none;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(format, "xdmf", &xdmf));
  PetscCall(PetscStrcmp(format, "none", &none));
  PetscCheck(xdmf || none, st->comm, PETSC_ERR_USER_INPUT, "Unknown trajectory format '%s': expected xdmf or none", format);
  PetscCheck(every > 0, st->comm, PETSC_ERR_ARG_OUTOFRANGE, "The trajectory frequency (-mbs_trajectory_every) must be positive, got %" PetscInt_FMT, every);
  PetscCheck(!st->traj, st->comm, PETSC_ERR_ORDER, "The trajectory is already being written");
  PetscCall(PetscStrncpy(st->traj_format, format, sizeof(st->traj_format)));
  st->traj_every = every;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetCheckpoint - Writes a checkpoint (MbsStepperWriteCheckpoint()) every `every` steps of
  MbsStepperSolve() and at its end, to filename (NULL: <output directory>/checkpoint.bin).

  Logically Collective

  Options Database Keys:
+ -mbs_checkpoint_every <n> - write every n steps (0: never)
. -mbs_checkpoint <file> - the file
- -mbs_restart <file> - continue from a checkpoint (MbsStepperLoadCheckpoint())

  Level: beginner
@*/
PetscErrorCode MbsStepperSetCheckpoint(MbsStepper st, const char filename[], PetscInt every)
{
  PetscFunctionBegin;
  PetscCheck(every >= 0, st->comm, PETSC_ERR_ARG_OUTOFRANGE, "The checkpoint frequency (-mbs_checkpoint_every) must be non-negative, got %" PetscInt_FMT, every);
  if (filename) PetscCall(PetscStrncpy(st->checkpoint, filename, sizeof(st->checkpoint)));
  st->checkpoint_every = every;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetEnergyDivergence - Stops a run whose energy diverges: after every accepted step, the energy
  E = T + V must be finite and within factor * scale of the initial energy plus the work of external forces
  since (MbsStepperSetExternalForce()), where scale is the largest of |E_0|, T_0, |V_0| and m |g| D (total
  mass, gravity, diameter of the initial configuration). A step that breaks this is an error naming the step,
  the energies and the bound, and its state goes to the failure checkpoint (MbsStepperSetFailureCheckpoint()).

  Logically Collective

  Input Parameters:
+ st - the stepper
- factor - the bound (default 10; 0 switches the check off)

  Options Database Key:
. -mbs_energy_divergence <factor> - the bound

  Note:
  EM and EM-G conserve energy to round-off, and the variational schemes keep its error bounded by a
  fraction of its scale at stable step sizes; an error of ten times the scale is a blow-up, not an
  integration error. The check costs one pass over the bodies and elements per step. The reference is
  taken at the first step after this call and carried through checkpoints; a host that changes the state
  between steps (other than through MbsStepperSetExternalForce()) calls this again to take a new one.

  Level: intermediate

.seealso: `MbsStepperStep()`, `MbsStepperSetFailureCheckpoint()`
@*/
PetscErrorCode MbsStepperSetEnergyDivergence(MbsStepper st, PetscReal factor)
{
  PetscFunctionBegin;
  PetscCheck(factor >= 0 && !PetscIsInfOrNanReal(factor), st->comm, PETSC_ERR_ARG_OUTOFRANGE, "The energy divergence bound (-mbs_energy_divergence) must be non-negative and finite (0: no check), got %g", (double)factor);
  st->energy_divergence = factor;
  st->energy_set        = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetFailureCheckpoint - Where a step that fails (its solve does not converge) or whose energy
  diverges leaves the state, as a checkpoint (MbsStepperWriteCheckpoint()): for a failed step the state at
  its start, which a run with other solver options can continue from (-mbs_restart), for a diverged step
  the state it reached, for inspection.

  Logically Collective

  Input Parameters:
+ st - the stepper
- filename - the file; NULL or "" for the default <output directory>/failed_step.bin, "none" to write nothing

  Options Database Key:
. -mbs_failure_checkpoint <file> - the file

  Level: intermediate

.seealso: `MbsStepperStep()`, `MbsStepperLoadCheckpoint()`, `MbsStepperSetEnergyDivergence()`
@*/
PetscErrorCode MbsStepperSetFailureCheckpoint(MbsStepper st, const char filename[])
{
  PetscFunctionBegin;
  PetscCall(PetscStrncpy(st->failure_checkpoint, filename ? filename : "", sizeof(st->failure_checkpoint)));
  PetscFunctionReturn(0);
}

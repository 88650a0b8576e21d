#include "schemes/stepperimpl.h"
#include "io/output.h"

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

static PetscErrorCode MbsFinalizePackage(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListDestroy(&MbsSchemeFunctions));
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
  st->t_end        = 1.0;
  st->output_every = 1;
  st->field_q = st->field_p = -1;
  PetscCall(PetscStrncpy(st->output_dir, "output", sizeof(st->output_dir)));
  PetscCall(SNESCreate(st->comm, &st->snes));
  /* Conservation to round-off needs Newton converged to round-off: tight absolute tolerance, and a
     direct solve with pivoting (the saddle-point system has a zero multiplier block). */
  PetscCall(SNESSetType(st->snes, SNESNEWTONLS));
  PetscCall(SNESGetLineSearch(st->snes, &ls));
  PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHBASIC));
  PetscCall(SNESSetTolerances(st->snes, 1e-15, 1e-300, 1e-13, 50, -1));
  PetscCall(SNESGetKSP(st->snes, &ksp));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCLU));
  PetscCall(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
  PetscCall(MbsStepperSetType(st, MBSSCHEMEEM));
  *stepper = st;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsStepperReset(MbsStepper st)
{
  PetscFunctionBegin;
  PetscCall(MbsSystemDestroy(&st->sys));
  PetscCall(MatDestroy(&st->J));
  PetscCall(VecDestroy(&st->X));
  PetscCall(VecDestroy(&st->F));
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
  PetscCall(create(st));
  PetscFunctionReturn(0);
}

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
  PetscCheck(h > 0 && PetscIsNormalReal(h), st->comm, PETSC_ERR_ARG_OUTOFRANGE, "The step size must be positive and finite, got %g", (double)h);
  st->h = h;
  PetscFunctionReturn(0);
}

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
  PetscCheck(t_end > 0 && PetscIsNormalReal(t_end), st->comm, PETSC_ERR_ARG_OUTOFRANGE, "The final time must be positive and finite, got %g", (double)t_end);
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
  PetscCheck(every > 0, st->comm, PETSC_ERR_ARG_OUTOFRANGE, "Output frequency must be positive, got %" PetscInt_FMT, every);
  if (directory) PetscCall(PetscStrncpy(st->output_dir, directory, sizeof(st->output_dir)));
  st->output_every = every;
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
- -mbs_write_state <file> - write the final state (index,q,p) as CSV

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
  PetscCall(VecRestoreArrayRead(sys->Xloc, &x));
  PetscCall(VecRestoreArray(sys->Floc, &f));
  PetscCall(VecSet(F, 0.0));
  PetscCall(MbsSystemLocalToGlobalAdd(sys, sys->Floc, F));
  PetscCall(PetscLogEventEnd(MBS_Residual, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsStepperFormJacobian(SNES snes, Vec X, Mat J, Mat P, void *ctx)
{
  MbsStepper         st  = (MbsStepper)ctx;
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
  PetscCall(PetscMalloc2(model->nq_ghosted, &st->q0, model->nq_ghosted, &st->p0));
  for (int i = 0; i < MBS_STEPPER_NWORK; i++) PetscCall(PetscMalloc1(model->nq_ghosted, &st->work[i]));
  PetscCall(VecDuplicate(st->sys->X, &st->X));
  PetscCall(VecDuplicate(st->sys->X, &st->F));
  PetscCall(MbsSystemCreateMatrix(st->sys, &st->J));
  PetscCall(SNESSetFunction(st->snes, st->F, MbsStepperFormFunction, st));
  PetscCall(SNESSetJacobian(st->snes, st->J, st->J, MbsStepperFormJacobian, st));
  {
    KSP ksp;
    PC  pc;
    PetscCall(SNESGetKSP(st->snes, &ksp));
    PetscCall(KSPGetPC(ksp, &pc));
    /* Named fields for -pc_type fieldsplit (-fieldsplit_q_..., -fieldsplit_lambda_...); a no-op for other PCs. */
    for (PetscInt f = 0; f < st->sys->nfields; f++) PetscCall(PCFieldSplitSetIS(pc, st->sys->name[f], st->sys->is[f]));
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

/*@C
  MbsStepperStep - Advances one step of size h: solves the scheme's nonlinear system with SNES and
  accepts the new state. A step whose solve does not converge is an error naming the step, the time,
  the scheme, the residual norm and the SNES reason; the state stays at the start of the step.

  Collective

  Level: beginner
@*/
PetscErrorCode MbsStepperStep(MbsStepper st)
{
  SNESConvergedReason reason;

  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  PetscCall(PetscLogEventBegin(MBS_Step, 0, 0, 0, 0));
  PetscCall(MbsModelCoordinatesToLocal(st->model, st->q, st->q0));
  PetscCall(MbsModelCoordinatesToLocal(st->model, st->p, st->p0));
  /* Predictor: the state at t_n for q and p, the previous step's multipliers (zero at the start). */
  if (!st->started) {
    PetscCall(VecSet(st->X, 0.0));
    st->started = PETSC_TRUE;
  }
  PetscCall(MbsStepperCopyState(st, PETSC_TRUE));

  PetscCall(SNESSolve(st->snes, NULL, st->X));
  PetscCall(SNESGetConvergedReason(st->snes, &reason));
  PetscCall(SNESGetIterationNumber(st->snes, &st->last_its));
  st->total_its += st->last_its;
  if (reason < 0) {
    PetscReal fnorm;
    PetscCall(SNESGetFunctionNorm(st->snes, &fnorm));
    PetscCall(PetscLogEventEnd(MBS_Step, 0, 0, 0, 0));
    SETERRQ(st->comm, PETSC_ERR_NOT_CONVERGED, "Step %" PetscInt_FMT " (t = %g -> %g) of scheme %s did not converge: residual norm %.3e after %" PetscInt_FMT " Newton iterations, SNES reason %s. Try a smaller step (-mbs_dt) or see -snes_monitor -snes_converged_reason", st->step + 1, (double)st->t, (double)(st->t + st->h), st->type, (double)fnorm, st->last_its, SNESConvergedReasons[reason]);
  }
  PetscCall(MbsStepperCopyState(st, PETSC_FALSE));
  st->step++;
  st->t = st->step * st->h;
  PetscCall(PetscLogEventEnd(MBS_Step, 0, 0, 0, 0));
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
  for (PetscInt b = model->body_start; b < model->body_end; b++) {
    const PetscInt off = model->body_lq[b];
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
  the output directory, the final state if -mbs_write_state is set, and a one-line summary.

  Collective

  Level: beginner
@*/
PetscErrorCode MbsStepperSolve(MbsStepper st)
{
  MbsDiagnosticsFile file = NULL;
  PetscInt           nsteps;
  PetscErrorCode     ierr;

  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  nsteps = (PetscInt)PetscCeilReal(st->t_end / st->h - 1e-9);
  PetscCall(MbsDiagnosticsFileOpen(st->comm, st->output_dir, &file));
  PetscCall(MbsStepperWriteDiagnostics(st, file));
  while (st->step < nsteps) {
    ierr = MbsStepperStep(st);
    if (ierr) {
      PetscCall(MbsDiagnosticsFileClose(&file));
      PetscCall(ierr);
    }
    if (st->step % st->output_every == 0 || st->step == nsteps) PetscCall(MbsStepperWriteDiagnostics(st, file));
  }
  PetscCall(MbsDiagnosticsFileClose(&file));
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

PetscErrorCode MbsStepperGetModel(MbsStepper st, MbsModel *model)
{
  PetscFunctionBegin;
  *model = st->model;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsStepperGetSNES(MbsStepper st, SNES *snes)
{
  PetscFunctionBegin;
  *snes = st->snes;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsStepperGetTime(MbsStepper st, PetscReal *t)
{
  PetscFunctionBegin;
  *t = st->t;
  PetscFunctionReturn(0);
}

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

PetscErrorCode MbsStepperGetNewtonIterations(MbsStepper st, PetscInt *last, PetscInt *total)
{
  PetscFunctionBegin;
  if (last) *last = st->last_its;
  if (total) *total = st->total_its;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsStepperGetNumUnknowns(MbsStepper st, PetscInt *n)
{
  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  *n = st->sys->nglobal;
  PetscFunctionReturn(0);
}

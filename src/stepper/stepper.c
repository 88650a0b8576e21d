#include <stdarg.h>
#include <stdio.h>
/* The stepper object: creation, settings, set-up, queries and viewing. */
#include "stepper/stepperimpl.h"
#include "model/memory.h"

static const char MbsCitation[] =
  "@article{KinonBetschSchneider2023,\n"
  "  author  = {Kinon, Philipp L. and Betsch, Peter and Schneider, Simon},\n"
  "  title   = {Structure-preserving integrators based on a new variational principle for constrained mechanical "
  "systems},\n"
  "  journal = {Nonlinear Dynamics},\n"
  "  year    = {2023}\n}\n";
static PetscBool MbsCited = PETSC_FALSE;

const char *const MbsPredictors[] = {"simple", "advanced", "extrapolate", "MbsPredictor", "MBS_PREDICTOR_", NULL};

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
  MbsStepper     st;
  MPI_Comm       comm;
  KSP            ksp;
  PC             pc;
  SNESLineSearch ls;

  PetscFunctionBegin;
  PetscCall(MbsStepperInitializePackage());
  PetscCall(MbsModelSetUp(model));
  PetscCall(MbsModelGetComm(model, &comm));
  PetscCall(PetscHeaderCreate(st, MBS_STEPPER_CLASSID, "MbsStepper", "Multibody time stepper", "MbsStepper", comm,
                              MbsStepperDestroy, MbsStepperView));
  PetscCall(PetscObjectReference((PetscObject)model));
  st->model             = model;
  st->errorifstepfailed = PETSC_TRUE;
  st->h                 = 0.01;
  st->hstep             = 0.01;
  st->t_end             = 1.0;
  st->output_every      = 1;
  st->traj_every        = 1;
  st->traj_sync         = 1.0;
  st->monitored_step    = -1;
  st->field_q = st->field_p = st->field_v = -1;
  st->predictor                           = MBS_PREDICTOR_EXTRAPOLATE;
  st->adapt_max                           = 5;
  st->reuse             = PETSC_TRUE; /* unless set, decided in MbsStepperSetUp() from the system size */
  st->reuse_rate        = 0.75;
  st->energy_divergence = MBS_ENERGY_DIVERGENCE;
  st->energy_tol        = MBS_ENERGY_TOL;
  PetscCall(PetscStrncpy(st->output_dir, "output", sizeof(st->output_dir)));
  PetscCall(SNESCreate(comm, &st->snes));
  PetscCall(PetscObjectIncrementTabLevel((PetscObject)st->snes, (PetscObject)st, 1));
  /* Conservation to round-off needs Newton converged to round-off: tight absolute tolerance, and a
     direct solve with pivoting (the saddle-point system has a zero multiplier block). */
  PetscCall(SNESSetType(st->snes, SNESNEWTONLS));
  PetscCall(SNESGetLineSearch(st->snes, &ls));
  PetscCall(SNESLineSearchSetType(ls, SNESLINESEARCHBASIC));
  PetscCall(SNESSetTolerances(st->snes, 1e-15, 1e-300, 1e-13, 50, -1));
  st->stagnation_tol = 0;
  st->klu            = -1;
  PetscCall(SNESSetConvergenceTest(st->snes, MbsStepperConverged_Private, st, NULL));
  PetscCall(SNESGetKSP(st->snes, &ksp));
  PetscCall(KSPSetType(ksp, KSPPREONLY));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCLU)); /* the factorization package is chosen at set-up (MbsStepperChooseSolver()) */
  PetscCall(MbsStepperSetType(st, MBSSCHEMEEM));
  /* MbsStepperSolve() writes the diagnostics (and checkpoints, when they are asked for) */
  PetscCall(MbsStepperAddOutput(st, MBSOUTPUTCSV, st->output_every));
  PetscCall(MbsStepperAddOutput(st, MBSOUTPUTCHECKPOINT, 0));
  *stepper = st;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsStepperReset_Private(MbsStepper st)
{
  PetscFunctionBegin;
  st->jac_valid = PETSC_FALSE;
  /* SNES, its KSP and PC keep their types and options but drop their vectors and operators: a scheme with other
     unknowns (em -> em-g) would otherwise meet the old sizes ("Cannot change local size of Amat after use") */
  if (st->snes) PetscCall(SNESReset(st->snes));
  PetscCall(MbsSystemDestroy(&st->sys));
  PetscCall(MatDestroy(&st->J));
  PetscCall(VecScatterDestroy(&st->abs_scatter));
  PetscCall(VecDestroy(&st->abs_ghost));
  PetscCall(PetscFree(st->drop));
  PetscCall(PetscFree(st->drop_x));
  PetscCall(VecDestroy(&st->qsub));
  PetscCall(VecDestroy(&st->psub));
  st->ndrop = st->ndrop_x = 0;
  PetscCall(VecDestroy(&st->Xabs));
  PetscCall(VecDestroy(&st->Sabs));
  PetscCall(VecDestroy(&st->X));
  PetscCall(VecDestroy(&st->F));
  PetscCall(VecDestroy(&st->Xsave));
  PetscCall(VecDestroy(&st->qstart));
  PetscCall(VecDestroy(&st->pstart));
  PetscCall(VecDestroy(&st->Fext));
  PetscCall(VecDestroy(&st->qm));
  PetscCall(VecDestroy(&st->vm));
  PetscCall(VecDestroy(&st->Fsf));
  PetscCall(VecDestroy(&st->Xjac));
  PetscCall(VecDestroy(&st->qjac));
  PetscCall(VecDestroy(&st->pjac));
  PetscCall(VecDestroy(&st->Xjac_step));
  PetscCall(VecDestroy(&st->qjac_step));
  PetscCall(VecDestroy(&st->pjac_step));
  for (int i = 0; i < MBS_PREDICT_HIST; i++) PetscCall(VecDestroy(&st->xhist[i]));
  st->nhist   = 0;
  st->field_q = st->field_p = st->field_v = -1;
  PetscCall(PetscFree2(st->q0, st->p0));
  for (int i = 0; i < MBS_STEPPER_NWORK; i++) PetscCall(PetscFree(st->work[i]));
  st->setup   = PETSC_FALSE;
  st->started = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsStepperFreeParameters(MbsStepper st)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < st->nparams; i++) PetscCall(PetscFree(st->param_name[i]));
  PetscCall(PetscFree2(st->param_name, st->param));
  st->nparams = 0;
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
  PetscValidHeaderSpecific(*stepper, MBS_STEPPER_CLASSID, 1);
  if (--((PetscObject)(*stepper))->refct > 0) {
    *stepper = NULL;
    PetscFunctionReturn(0);
  }
  st = *stepper;
  PetscCall(MbsStepperMonitorCancel(st));
  PetscCall(PetscFree(st->monitors));
  PetscCall(MbsStepperOutputsDestroy_Private(st));
  PetscCall(MbsStepperReset_Private(st));
  PetscCall(MatDestroy(&st->Jsf));
  if (st->ops->destroy) PetscCall(st->ops->destroy(st));
  PetscCall(VecDestroy(&st->q));
  PetscCall(VecDestroy(&st->p));
  PetscCall(SNESDestroy(&st->snes));
  PetscCall(PetscViewerDestroy(&st->report));
  PetscCall(MbsStepperFreeParameters(st));
  PetscCall(MbsModelDestroy(&st->model));
  PetscCall(PetscHeaderDestroy(stepper));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetOptionsPrefix - Sets the prefix of every option the stepper reads: its own (-<prefix>mbs_scheme,
  -<prefix>mbs_dt, ...) and those of its SNES, KSP, PC and factorization (-<prefix>snes_type, -<prefix>pc_type,
  -<prefix>mat_mumps_icntl_14, ...), so that a host program's options and gglmbs's stay apart.

  Logically Collective

  Input Parameters:
+ st - the stepper
- prefix - the prefix (no leading dash), e.g. "mbs1_"; NULL for none

  Notes:
  Call it before MbsStepperSetFromOptions(). The gglmbs program uses no prefix.

  Level: intermediate

.seealso: `MbsStepperAppendOptionsPrefix()`, `MbsStepperGetOptionsPrefix()`, `MbsModelSetOptionsPrefix()`
@*/
PetscErrorCode MbsStepperSetOptionsPrefix(MbsStepper st, const char prefix[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)st, prefix));
  PetscCall(SNESSetOptionsPrefix(st->snes, prefix));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperAppendOptionsPrefix - Appends to the prefix of the stepper's options and those of its solvers.

  Logically Collective

  Level: intermediate

.seealso: `MbsStepperSetOptionsPrefix()`
@*/
PetscErrorCode MbsStepperAppendOptionsPrefix(MbsStepper st, const char prefix[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  PetscCall(PetscObjectAppendOptionsPrefix((PetscObject)st, prefix));
  PetscCall(SNESAppendOptionsPrefix(st->snes, prefix));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetOptionsPrefix - Gets the prefix of the stepper's options (borrowed).

  Not Collective

  Level: intermediate

.seealso: `MbsStepperSetOptionsPrefix()`
@*/
PetscErrorCode MbsStepperGetOptionsPrefix(MbsStepper st, const char *prefix[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)st, prefix));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperViewFromOptions - Views the stepper if the option `name` (with the stepper's prefix) is given,
  e.g. -mbs_stepper_view.

  Collective

  Level: intermediate

.seealso: `MbsStepperView()`, `PetscObjectViewFromOptions()`
@*/
PetscErrorCode MbsStepperViewFromOptions(MbsStepper st, PetscObject obj, const char name[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  PetscCall(PetscObjectViewFromOptions((PetscObject)st, obj, name));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetReportViewer - Where the stepper reports what a user should know of as it happens: a step that
  -mbs_adapt retries in halves, a restart from a checkpoint of another partition that restores the state only.
  They always go to PetscInfo(); the gglmbs program reports them on standard output.

  Logically Collective

  Input Parameters:
+ st - the stepper
- viewer - an ASCII viewer (a reference is taken), or NULL for none

  Options Database Key:
. -mbs_report [viewer] - report to a viewer (default standard output)

  Level: intermediate

.seealso: `MbsStepperSetAdapt()`, `MbsStepperLoadCheckpoint()`
@*/
PetscErrorCode MbsStepperSetReportViewer(MbsStepper st, PetscViewer viewer)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  if (viewer) PetscCall(PetscObjectReference((PetscObject)viewer));
  PetscCall(PetscViewerDestroy(&st->report));
  st->report = viewer;
  PetscFunctionReturn(0);
}

/* A line on the report viewer, if there is one, and in PetscInfo() */
PetscErrorCode MbsStepperReport_Private(MbsStepper st, const char format[], ...)
{
  char    line[1024];
  va_list ap;

  PetscFunctionBegin;
  va_start(ap, format);
  vsnprintf(line, sizeof(line), format, ap);
  va_end(ap);
  PetscCall(PetscInfo(st, "%s", line));
  if (st->report) PetscCall(PetscViewerASCIIPrintf(st->report, "%s", line));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetConvergedReason - Why the last step ended: MBS_STEP_CONVERGED for an accepted step,
  MBS_STEP_DIVERGED_NONLINEAR_SOLVE for a step whose Newton solve failed (after the retries of
  -mbs_adapt; the state stays at its start), MBS_STEP_DIVERGED_ENERGY for a step whose energy left the bound
  of MbsStepperSetEnergyDivergence() (the state is the one it reached), MBS_STEP_INTERRUPTED for a
  MbsStepperSolve() stopped by a signal, MBS_STEP_ITERATING before the first step.

  Not Collective

  Notes:
  The reason is set before MbsStepperStep() returns its error, so a host that catches the error (or that
  turned errors off with MbsStepperSetErrorIfStepFails()) can ask why. MbsStepperSolve() keeps the reason of
  the step it stopped at.

  Level: intermediate

.seealso: `MbsStepperSetErrorIfStepFails()`, `MbsStepperStep()`, `MbsStepReasons`
@*/
PetscErrorCode MbsStepperGetConvergedReason(MbsStepper st, MbsStepReason *reason)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  *reason = st->reason;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetErrorIfStepFails - Whether a step that fails (its solve does not converge, or its energy
  diverges) is an error (the default), or only sets the reason (MbsStepperGetConvergedReason()): then
  MbsStepperStep() returns without error, the failed step not accepted, and MbsStepperSolve() stops there.

  Logically Collective

  Options Database Key:
. -mbs_error_if_step_fails <bool> - the setting

  Level: intermediate

.seealso: `MbsStepperGetConvergedReason()`
@*/
PetscErrorCode MbsStepperSetErrorIfStepFails(MbsStepper st, PetscBool flg)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  st->errorifstepfailed = flg;
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
  PetscCheck(create, PetscObjectComm((PetscObject)st), PETSC_ERR_USER_INPUT,
             "Unknown scheme '%s'; run with -help to list the registered schemes", type);
  PetscCall(MbsStepperReset_Private(st));
  if (st->ops->destroy) PetscCall(st->ops->destroy(st));
  PetscCall(PetscMemzero(st->ops, sizeof(*st->ops)));
  PetscCall(SNESSetDivergenceTolerance(st->snes, PETSC_DEFAULT)); /* the static scheme turns it off */
  st->data = NULL;
  PetscCall(PetscStrncpy(st->type, type, sizeof(st->type)));
  PetscCall(MbsStepperFreeParameters(st));
  for (PetscInt i = 0; i < MbsNumSchemeParameters; i++) {
    PetscCall(PetscStrcmp(MbsSchemeParameters[i]->scheme, type, &same));
    st->nparams += same;
  }
  PetscCall(PetscMalloc2(st->nparams, &st->param_name, st->nparams, &st->param));
  for (PetscInt i = 0, k = 0; i < MbsNumSchemeParameters; i++) {
    PetscCall(PetscStrcmp(MbsSchemeParameters[i]->scheme, type, &same));
    if (!same) continue;
    PetscCall(PetscStrallocpy(MbsSchemeParameters[i]->name, &st->param_name[k]));
    st->param[k++] = MbsSchemeParameters[i]->def;
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
  PetscCheck(h > 0 && PetscIsNormalReal(h), PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "The step size (-mbs_dt, time.step) must be positive and finite, got %g", (double)h);
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
  PetscCheck(t_end > 0 && PetscIsNormalReal(t_end), PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "The final time (-mbs_t_end, time.end) must be positive and finite, got %g", (double)t_end);
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
  PetscCheck(every > 0, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "The output frequency (-mbs_output_every, output.every) must be positive, got %" PetscInt_FMT, every);
  if (directory) PetscCall(PetscStrncpy(st->output_dir, directory, sizeof(st->output_dir)));
  st->output_every = every;
  PetscCall(MbsStepperAddOutput(st, MBSOUTPUTCSV, every));
  if (st->reaction_spec[0]) PetscCall(MbsStepperAddOutput(st, MBSOUTPUTREACTIONS, every));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetReactions - Writes the reaction force and torque of chosen joints and drives over time, one CSV each,
  <output directory>/reactions/<name>.csv, as often as the diagnostics (docs/output.md)

  Logically Collective

  Input Parameters:
+ st - the stepper
- spec - "all" (every joint and drive, the rods of generated chains, nets and meshes among them, at most 256), or a list
separated by commas or spaces of element indices, element labels (MbsModelSetElementLabel()) or an input's names
(joints[0], drives[1]); NULL or "" for none

  Options Database Key:
. -mbs_reactions <spec> - the same

  Notes:
  Each row holds the step, the time and MbsStepperGetReaction()'s force and torque on body b. The elements are found
  when the stepper is set up; a name that matches none is an error then.

  Level: intermediate

.seealso: `MbsStepperGetReaction()`, `MbsStepperSetOutput()`
@*/
PetscErrorCode MbsStepperSetReactions(MbsStepper st, const char spec[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  PetscCall(PetscStrncpy(st->reaction_spec, spec ? spec : "", sizeof(st->reaction_spec)));
  if (st->reaction_spec[0]) PetscCall(MbsStepperAddOutput(st, MBSOUTPUTREACTIONS, st->output_every));
  PetscFunctionReturn(0); /* an output added before writes nothing with an empty list */
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
  PetscCheck(prm, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_WRONG,
             "Scheme %s has no parameter '%s' (its parameters: %s)", st->type, name, names);
  PetscCall(MbsSchemeCheckParameter(prm, value, &ok, expected, sizeof(expected)));
  PetscCheck(ok, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE, "Expected %s, got %g", expected,
             (double)value);
  for (PetscInt i = 0; i < st->nparams; i++) {
    PetscCall(PetscStrcmp(st->param_name[i], name, &ok));
    if (!ok || st->param[i] == value) continue;
    st->param[i] = value;
    /* Blocks with a zero coefficient are left out of the Jacobian's pattern: lay it out again. */
    if (st->setup) PetscCall(MbsStepperReset_Private(st));
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
  SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_WRONG, "Scheme %s has no parameter '%s'", st->type, name);
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
  MbsStepperSetPredictor - Chooses the initial guess of each step's Newton iteration: the state at t_n with the last
  step's multipliers (MBS_PREDICTOR_SIMPLE), q_n + h M^-1 p_n (MBS_PREDICTOR_ADVANCED, seed 004 Table 2), or all
  unknowns extrapolated from the last four steps of the same size (MBS_PREDICTOR_EXTRAPOLATE, default; the simple
  guess until two are known). The predictor changes the iteration count, not the solution: every step is solved to
  its round-off floor.

  Logically Collective

  Options Database Key:
. -mbs_predictor <simple,advanced,extrapolate> - the predictor

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
    PetscCheck(max_halvings >= 1 && max_halvings <= 30, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
               "The number of step halvings must be in [1, 30], got %" PetscInt_FMT, max_halvings);
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
+ -mbs_jacobian_reuse <bool> - by default on for systems of at least 1000 unknowns solved by LU, off under the
Schur-AMG preconditioner; 0 gives Newton's method with a fresh Jacobian every iteration
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
  PetscCheck(rate > 0 && rate < 1, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "Jacobian reuse rate must be in (0, 1), got %g", (double)rate);
  if (st->reuse && !reuse) PetscCall(SNESSetLagJacobian(st->snes, 1));
  if (!st->reuse && reuse)
    st->jac_valid = PETSC_FALSE; /* a Jacobian of Newton proper was not recorded for checkpoints: start afresh */
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

/* Called by a scheme's setup: lay out its unknowns. The names say the roles: "q" and "p" (required) hold q_{n+1}
   and p_{n+1}, "v" a velocity unknown, "lambda" the multipliers of the constraint forces, "gamma" GGL's velocity-level
   multipliers, "nu" those of the velocity constraints' reactions. */
PetscErrorCode MbsStepperSetFields(MbsStepper st, PetscInt n, const MbsFieldKind kinds[], const char *const names[])
{
  PetscFunctionBegin;
  PetscCheck(n > 0 && n <= MBS_MAX_FIELDS, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "Scheme %s declares %" PetscInt_FMT " fields; 1 to %d are supported", st->type, n, MBS_MAX_FIELDS);
  PetscCall(MbsSystemCreate(st->model, n, kinds, names, &st->sys));
  for (PetscInt f = 0; f < MBS_MAX_FIELDS; f++) st->sfield[f] = 0;
  st->field_lambda = st->field_gamma = st->field_nu = -1;
  for (PetscInt f = 0; f < n; f++) {
    PetscBool is;
    PetscCall(PetscStrcmp(names[f], "q", &is));
    if (is) st->field_q = f;
    PetscCall(PetscStrcmp(names[f], "p", &is));
    if (is) st->field_p = f;
    PetscCall(PetscStrcmp(names[f], "v", &is));
    if (is) st->field_v = f;
    PetscCall(PetscStrcmp(names[f], "lambda", &is));
    if (is) st->field_lambda = f;
    PetscCall(PetscStrcmp(names[f], "gamma", &is));
    if (is) st->field_gamma = f;
    PetscCall(PetscStrcmp(names[f], "nu", &is));
    if (is) st->field_nu = f;
  }
  PetscCheck(st->field_q >= 0 && st->field_p >= 0, PetscObjectComm((PetscObject)st), PETSC_ERR_PLIB,
             "Scheme %s must have fields named q and p", st->type);
  PetscFunctionReturn(0);
}

/*
  The LU package when nobody chose one (-pc_factor_mat_solver_type, PCFactorSetMatSolverType()), from the system
  (measured, docs/solvers.md and benchmarks/RESULTS.md):
    one rank, at most 80 unknowns,      dense LU (LAPACK) of a dense copy of J (src/stepper/denselu.c): 18 us per
      an AIJ Jacobian                   factorization of the heavy top's 42 unknowns, where the sparse packages
                                        spend 50-70 us on their own set-up; a zero pivot is a failed linear solve.
                                        Steps per second dense / UMFPACK: heavy top (42) 10700 / 5800, slider-crank
                                        (60) 7700 / 5300, chain of 8 (64) 8000 / 6300, chain of 12 (96) 3300 / 4900,
                                        flyball governor (208) 770 / 1180, chain of 30 (240) 280 / 2040
    one rank, EM or VI-S and a wide     MUMPS: it factors faster than UMFPACK on two-dimensional structures
      body graph (MbsModelGetGraphWidth structures under the schemes that refactor often (EM, steps per second
      >= 8: nets, meshes) of at least   UMFPACK / MUMPS: 20 x 20 net 84 / 75, 32 x 32 net 17 / 27, 50 x 50 net
      6000 unknowns                     4.7 / 9.1, 100 x 100 net 0.14 / 0.46; VI-S 32 x 32 9.1 / 11.2; mesh_net,
                                        1914 unknowns, 835 / 214); UMFPACK's solves are faster, and it stays the
                                        choice for EM-G, VI-A, VI-B (32 x 32 net 177 / 47, 22.5 / 16.1,
                                        23.0 / 9.4; VI-B 100 x 100 0.35 / 0.17)
    one rank, a narrow body graph of    KLU through the stepper's interface (src/stepper/klu.c: a singular matrix is
      particles, or one with rigid      a failed solve): it factors 3-4 times faster than UMFPACK with less overhead
      bodies up to                      per call (seconds UMFPACK / KLU, benchmarks/klu.sh: chain of 30 particles
      MBS_KLU_RIGID_MAX_UNKNOWNS        0.94 / 0.43, chain1000 1.35 / 1.13, flyball governor 15.4 / 12.6; a chain of
                                        10^6 particles, 2 steps from rest: MUMPS 188 s, 13.3 GiB, KLU 104 s,
                                        8.5 GiB); UMFPACK's supernodal solves win on rigid chains (rigid_chain1000
                                        2.89 / 3.74)
    one rank, more than                 MUMPS: UMFPACK's 32-bit workspace overflows on a chain of 10^6 particles
      MBS_UMFPACK_MAX_UNKNOWNS          (8 10^6 unknowns)
    one rank otherwise (long rigid      UMFPACK: 1.4 times MUMPS's speed on rigid_chain1000;
      chains, small nets)               on a singular matrix it returns Inf, so the step fails
                                        with its diagnosis
    several ranks, a dynamic scheme,    the interface LU (src/stepper/interfacelu.c): each rank's interior by
      an MPIAIJ Jacobian and at most    KLU, UMFPACK or MUMPS (the one-rank rule), the interface by dense LU; chain
      MBS_INTERFACE_MAX_UNKNOWNS        of 10^5 particles 1.38 times faster on 2 ranks than on 1 (1.6 against
      interface unknowns                UMFPACK on both; MUMPS 0.88 times)
    several ranks otherwise             MUMPS
*/
#define MBS_DENSE_MAX_UNKNOWNS   80      /* dense LU up to this size */
#define MBS_WIDE_MIN_UNKNOWNS    6000    /* wide body graphs at least this large are factored by MUMPS */
#define MBS_UMFPACK_MAX_UNKNOWNS 2000000 /* above this, MUMPS (UMFPACK's 32-bit workspace) */
/* KLU for narrow graphs with rigid bodies up to this size (EM, seconds UMFPACK / KLU, benchmarks/klu.sh: flyball
   governor (208 unknowns) 15.4 / 12.6, right-angle cantilever (816) 6.96 / 4.40; rigid chains of 30 links (1260)
   0.33 / 0.44, 100 links 0.71 / 1.09, 1000 links 2.89 / 3.74) */
#define MBS_KLU_RIGID_MAX_UNKNOWNS 1000
#define MBS_INTERFACE_MAX_UNKNOWNS                                                          \
  500 /* several ranks: the interface LU up to this many interface unknowns (nets, 2 ranks: \
         break-even with MUMPS at 528, MUMPS 2.1 times faster at 882) */
const char *const MbsParallelLUTypes[] = {"auto", "interface", "mumps"};
const char *const MbsSolverTypes[]     = {"auto", "lu", "schur"};
/* auto: the Schur-AMG preconditioner for nets and meshes of particles from MBS_SCHUR_MIN_UNKNOWNS on
   (src/model/memory.h, whose memory estimate follows this choice). Measured (EM, one rank, long runs, where modified
   Newton keeps MUMPS's factors for many steps): MUMPS 1.25 times faster at 40962 unknowns, 1.22 at 100002, 1.08 at
   256002 (with twice the memory); a MUMPS factorization takes minutes at 10^6 unknowns, where the Schur-AMG
   preconditioner takes 9 s per step in 2.3 GB. Short runs favour it from 10^4 unknowns (benchmarks/RESULTS.md, issue 17
   part 3). */
/* Sets the package the stepper chose; a PC set up with another package (an earlier choice) is reset first. */
static PetscErrorCode MbsStepperSetSolver(MbsStepper st, PC pc, MatSolverType type)
{
  PetscBool same;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(type, st->solver_auto, &same));
  if (st->solver_auto[0] && !same) PetscCall(PCReset(pc));
  PetscCall(PCFactorSetMatSolverType(pc, type));
  PetscCall(PetscStrncpy(st->solver_auto, type, sizeof(st->solver_auto)));
  PetscFunctionReturn(0);
}

/* The one-rank package for a system of n unknowns (the whole system, or a rank's interior under the interface LU),
   and why */
static PetscErrorCode MbsStepperSerialPackage(MbsStepper st, PetscInt n, MatSolverType *type, char *why, size_t len)
{
  PetscInt width;

  PetscFunctionBegin;
  PetscCall(MbsModelGetGraphWidth(st->model, &width));
  if (st->ops->wide_mumps && width >= MBS_WIDE_GRAPH && n >= MBS_WIDE_MIN_UNKNOWNS) {
    *type = MATSOLVERMUMPS;
    PetscCall(PetscSNPrintf(why, len,
                            "a wide body graph (bandwidth %" PetscInt_FMT
                            " in RCM order: a net or a mesh) of %" PetscInt_FMT " unknowns",
                            width, n));
  } else if (n > MBS_UMFPACK_MAX_UNKNOWNS) {
    *type = MATSOLVERMUMPS;
    PetscCall(
      PetscSNPrintf(why, len, "a large system (%" PetscInt_FMT " unknowns; UMFPACK's 32-bit workspace overflows)", n));
  } else {
    *type = MATSOLVERUMFPACK;
    PetscCall(PetscSNPrintf(
      why, len, "a narrow body graph (bandwidth %" PetscInt_FMT " in RCM order: chains, trees) or a small system",
      width));
  }
  PetscFunctionReturn(0);
}

/* GMRES (right-preconditioned: it tests the true residual) to a relative 1e-8, an inexact Newton step that still
   converges to the round-off floor (docs/solvers.md), at most 500 iterations; each setting only where neither the
   options database nor the host program (a KSP type other than preonly, tolerances other than PETSc's defaults) chose
   it. st->ksp_auto records which the stepper set (MBS_KSP_AUTO_*), for MbsStepperSetUpFactorization() to undo. */
static PetscErrorCode MbsStepperSetSchurKSP(MbsStepper st)
{
  KSP         ksp;
  const char *prefix;
  PetscBool   set, preonly;
  PetscReal   rtol;
  PetscInt    maxit;

  PetscFunctionBegin;
  PetscCall(SNESGetKSP(st->snes, &ksp));
  PetscCall(KSPGetOptionsPrefix(ksp, &prefix));
  PetscCall(PetscOptionsHasName(((PetscObject)ksp)->options, prefix, "-ksp_type", &set));
  PetscCall(PetscObjectTypeCompare((PetscObject)ksp, KSPPREONLY, &preonly));
  if (!set && preonly) {
    PetscCall(KSPSetType(ksp, KSPGMRES));
    st->ksp_auto |= MBS_KSP_AUTO_TYPE;
  }
  PetscCall(PetscOptionsHasName(((PetscObject)ksp)->options, prefix, "-ksp_pc_side", &set));
  if (!set && (st->ksp_auto & MBS_KSP_AUTO_TYPE)) {
    PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
    st->ksp_auto |= MBS_KSP_AUTO_SIDE;
  }
  PetscCall(KSPGetTolerances(ksp, &rtol, NULL, NULL, &maxit));
  PetscCall(PetscOptionsHasName(((PetscObject)ksp)->options, prefix, "-ksp_rtol", &set));
  if (!set && rtol == 1e-5) { /* PETSc's default */
    PetscCall(KSPSetTolerances(ksp, 1e-8, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT));
    st->ksp_auto |= MBS_KSP_AUTO_RTOL;
  }
  PetscCall(PetscOptionsHasName(((PetscObject)ksp)->options, prefix, "-ksp_max_it", &set));
  if (!set && maxit == 10000) { /* a preconditioner that does not fit the step fails it early (diagnosed) */
    PetscCall(KSPSetTolerances(ksp, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT, 500));
    st->ksp_auto |= MBS_KSP_AUTO_MAXIT;
  }
  PetscFunctionReturn(0);
}

/* Whether one rank's LU (above the dense LU's size) is the stepper's KLU, and why: -mbs_klu, or by the model. KLU
   leaves the LU packages behind on narrow body graphs (no fill to speak of): on chains of particles at every size
   measured, on small mechanisms with rigid bodies; UMFPACK's supernodal solves win on long chains of rigid links, and
   KLU's pivoting destroys its ordering on nets (MBS_KLU_RIGID_MAX_UNKNOWNS; docs/solvers.md) */
static PetscErrorCode MbsStepperUseKLU(MbsStepper st, PetscInt n, char *why, size_t len, PetscBool *use)
{
  PetscInt  width     = 0;
  PetscBool particles = PETSC_TRUE;

  PetscFunctionBegin;
  *use = PETSC_FALSE;
  if (st->klu >= 0) {
    *use = (PetscBool)(st->klu > 0);
    if (*use) PetscCall(PetscSNPrintf(why, len, "-mbs_klu"));
    PetscFunctionReturn(0);
  }
  PetscCall(MbsModelGetGraphWidth(st->model, &width));
  if (width >= MBS_WIDE_GRAPH) PetscFunctionReturn(0);
  for (PetscInt b = 0; b < st->model->nbodies && particles; b++)
    particles = (PetscBool)(st->model->body_type[b] == MBS_BODY_PARTICLE);
  if (particles)
    PetscCall(PetscSNPrintf(
      why, len, "a narrow body graph of particles (bandwidth %" PetscInt_FMT " in RCM order: chains)", width));
  else if (n <= MBS_KLU_RIGID_MAX_UNKNOWNS)
    PetscCall(PetscSNPrintf(why, len,
                            "a narrow body graph (bandwidth %" PetscInt_FMT " in RCM order) of %" PetscInt_FMT
                            " unknowns with rigid bodies",
                            width, n));
  else
    PetscFunctionReturn(0);
  *use = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* PCFactorSetMatSolverType() on a PCSHELL the stepper chose (dense LU, KLU, the interface LU, Schur-AMG): kept on the
   PC for its next set-up, where the shell gives way to a PCLU with that package (MbsStepperSetUpFactorization()) */
static PetscErrorCode MbsPCShellSetMatSolverType_Private(PC pc, MatSolverType type)
{
  PetscContainer c;
  char          *t;

  PetscFunctionBegin;
  PetscCall(PetscStrallocpy(type, &t));
  PetscCall(PetscContainerCreate(PetscObjectComm((PetscObject)pc), &c));
  PetscCall(PetscContainerSetPointer(c, t));
  PetscCall(PetscContainerSetUserDestroy(c, PetscContainerUserDestroyDefault));
  PetscCall(PetscObjectCompose((PetscObject)pc, "MbsStepperMatSolverType", (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsStepperChooseSolver(MbsStepper st, PC pc)
{
  MatSolverType type;
  PetscMPIInt   size;
  PetscBool     isaij, ismpiaij, klu = PETSC_FALSE;
  char          why[128], interior[64];

  PetscFunctionBegin;
  PetscCall(PCFactorGetMatSolverType(pc, &type));
  if (type && st->solver_auto[0]) { /* the package of an earlier set-up, set by the stepper or changed since */
    PetscBool same;
    PetscCall(PetscStrcmp(type, st->solver_auto, &same));
    if (same) type = NULL;
  }
  if (type) {
    st->solver_auto[0] = 0;
    PetscCall(PetscSNPrintf(st->solver_choice, sizeof(st->solver_choice), "%s, chosen by the user", type));
    PetscFunctionReturn(0);
  }
  if (st->solver != MBS_SOLVER_LU) {
    char      whynot[160];
    PetscInt  width = 0;
    PetscBool schur = PETSC_FALSE;
    PetscCall(MbsStepperSchurAMGApplicable_Private(st, whynot, sizeof(whynot)));
    PetscCheck(
      st->solver != MBS_SOLVER_SCHUR || !whynot[0], PetscObjectComm((PetscObject)st), PETSC_ERR_SUP,
      "-mbs_solver schur: the Schur-AMG preconditioner does not apply to %s (docs/solvers.md); use -mbs_solver lu",
      whynot);
    if (st->solver == MBS_SOLVER_SCHUR)
      schur = PETSC_TRUE;
    else if (!whynot[0] && st->ops->schur_amg && st->sys->nglobal >= MBS_SCHUR_MIN_UNKNOWNS) {
      /* nets and meshes of particles: BoomerAMG on a chain of rigid links failed (src/stepper/schuramg.c), and
         rigid bodies in wide graphs are not measured */
      PetscBool particles = PETSC_TRUE;
      for (PetscInt b = 0; b < st->model->nbodies && particles; b++)
        particles = (PetscBool)(st->model->body_type[b] == MBS_BODY_PARTICLE);
      PetscCall(MbsModelGetGraphWidth(st->model, &width));
      schur = (PetscBool)(particles && width >= MBS_WIDE_GRAPH);
    }
    if (schur) {
      PetscCall(MbsPCSetSchurAMG_Private(pc, st)); /* src/stepper/schuramg.c */
      PetscCall(MbsStepperSetSchurKSP(st));
      PetscCall(PetscStrncpy(st->solver_auto, "schur", sizeof(st->solver_auto)));
      if (st->solver == MBS_SOLVER_SCHUR)
        PetscCall(
          PetscSNPrintf(st->solver_choice, sizeof(st->solver_choice),
                        "GMRES with the Schur-AMG block preconditioner, chosen by the user (-mbs_solver schur)"));
      else
        PetscCall(
          PetscSNPrintf(st->solver_choice, sizeof(st->solver_choice),
                        "GMRES with the Schur-AMG block preconditioner, chosen for a wide body graph (bandwidth "
                        "%" PetscInt_FMT " in RCM order: a net or a mesh) of %" PetscInt_FMT " unknowns",
                        width, st->sys->nglobal));
      PetscFunctionReturn(0);
    }
  }
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)st), &size));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)st->J, MATSEQAIJ, &isaij));
  PetscCall(PetscObjectTypeCompare((PetscObject)st->J, MATMPIAIJ, &ismpiaij)); /* not its GPU and other kinds */
  if (size == 1 && isaij && (st->klu > 0 || st->sys->nglobal > MBS_DENSE_MAX_UNKNOWNS))
    PetscCall(MbsStepperUseKLU(st, st->sys->nglobal, why, sizeof(why), &klu));
  if (klu) {
    PetscCall(MbsPCSetKLU_Private(pc)); /* src/stepper/klu.c */
    PetscCall(PetscStrncpy(st->solver_auto, "klu", sizeof(st->solver_auto)));
    PetscCall(PetscSNPrintf(st->solver_choice, sizeof(st->solver_choice), "KLU, chosen for one rank and %s", why));
  } else if (size == 1 && isaij && st->sys->nglobal <= MBS_DENSE_MAX_UNKNOWNS) {
    PetscCall(MbsPCSetDenseLU_Private(pc)); /* src/stepper/denselu.c */
    PetscCall(PetscStrncpy(st->solver_auto, "dense", sizeof(st->solver_auto)));
    PetscCall(PetscSNPrintf(st->solver_choice, sizeof(st->solver_choice),
                            "dense LU (LAPACK), chosen for a small system (%" PetscInt_FMT " unknowns)",
                            st->sys->nglobal));
  } else if (size > 1) {
    PetscInt nB = 0, nlocal = st->sys->nlocal;
    /* not for a static solve: without masses, an interior body held only by interface elements floats
       (src/stepper/interfacelu.c) */
    const PetscBool can = (PetscBool)(ismpiaij && !st->ops->quasistatic);
    if (can && st->parallel_lu != MBS_PARALLEL_LU_MUMPS) PetscCall(MbsStepperInterfaceSize_Private(st, &nB, NULL));
    if (can && (st->parallel_lu == MBS_PARALLEL_LU_INTERFACE ||
                (st->parallel_lu == MBS_PARALLEL_LU_AUTO && nB <= MBS_INTERFACE_MAX_UNKNOWNS))) {
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nlocal, 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)st)));
      if (nlocal > MBS_DENSE_MAX_UNKNOWNS || st->klu > 0)
        PetscCall(MbsStepperUseKLU(st, nlocal, why, sizeof(why), &klu));
      if (klu)
        type = "KLU";
      else
        PetscCall(MbsStepperSerialPackage(st, nlocal, &type, why, sizeof(why)));
      PetscCall(MbsPCSetInterfaceLU_Private(pc, st, klu ? NULL : type, interior, sizeof(interior)));
      PetscCall(PetscStrncpy(st->solver_auto, "interface", sizeof(st->solver_auto)));
      {
        PetscBool same;
        PetscCall(PetscStrcmp(interior, type, &same)); /* "klu" (PETSc's) is not the stepper's "KLU" */
        if (!same) PetscCall(PetscStrncpy(why, "-mbs_interface_pc_* in the options", sizeof(why)));
      }
      PetscCall(PetscSNPrintf(st->solver_choice, sizeof(st->solver_choice),
                              "interface LU (each rank's interior by %s, for %s; an interface of %" PetscInt_FMT
                              " unknowns by dense LU), chosen for several ranks and %s",
                              interior, why, nB,
                              st->parallel_lu == MBS_PARALLEL_LU_INTERFACE ? "-mbs_parallel_lu interface"
                                                                           : "a small interface"));
    } else {
      PetscCall(MbsStepperSetSolver(st, pc, MATSOLVERMUMPS));
      PetscCall(PetscSNPrintf(st->solver_choice, sizeof(st->solver_choice), "%s, chosen for several ranks and %s",
                              MATSOLVERMUMPS,
                              st->ops->quasistatic                       ? "a static solve"
                              : st->parallel_lu == MBS_PARALLEL_LU_MUMPS ? "-mbs_parallel_lu mumps"
                                                                         : "a large interface"));
    }
  } else {
    PetscCall(MbsStepperSerialPackage(st, st->sys->nglobal, &type, why, sizeof(why)));
    PetscCall(MbsStepperSetSolver(st, pc, type));
    PetscCall(PetscSNPrintf(st->solver_choice, sizeof(st->solver_choice), "%s, chosen for one rank and %s", type, why));
  }
  PetscFunctionReturn(0);
}

/* MUMPS's workspace estimate assumes little delayed pivoting; the multiplier blocks of these saddle-point
   systems delay many pivots, and the default 20% margin fails (INFOG(1) = -9) on nets and hinge chains.
   Unless the user chose a margin (-[prefix]mat_mumps_icntl_14), allow 100%: on this stepper's factor
   only. The options database belongs to the host program and its other solvers. */
static PetscErrorCode MbsStepperSetUpFactorization(MbsStepper st)
{
  KSP       ksp;
  PC        pc;
  PetscBool islu;

  PetscFunctionBegin;
  PetscCall(SNESGetKSP(st->snes, &ksp));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCLU, &islu));
  if (!islu) { /* another PC, or a PCSHELL the stepper chose at an earlier set-up (chosen again) */
    PetscBool isshell, dense;
    PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCSHELL, &isshell));
    PetscCall(PetscStrcmp(st->solver_auto, "dense", &dense));
    if (!dense) PetscCall(PetscStrcmp(st->solver_auto, "interface", &dense));
    if (!dense) PetscCall(PetscStrcmp(st->solver_auto, "schur", &dense));
    if (!dense) PetscCall(PetscStrcmp(st->solver_auto, "klu", &dense));
    if (!(isshell && dense)) {
      st->solver_choice[0] = st->solver_auto[0] = 0;
      PetscFunctionReturn(0);
    }
    PetscCall(PCSetType(pc, PCLU));
    { /* a package the host program or the options database chose since (the shell ignored it) */
      PetscContainer c;
      const char    *prefix;
      char           type[64];
      PetscBool      set;
      PetscCall(PetscObjectQuery((PetscObject)pc, "MbsStepperMatSolverType", (PetscObject *)&c));
      if (c) {
        char *t;
        PetscCall(PetscContainerGetPointer(c, (void **)&t));
        PetscCall(PCFactorSetMatSolverType(pc, t));
        PetscCall(PetscObjectCompose((PetscObject)pc, "MbsStepperMatSolverType", NULL));
      } else {
        PetscCall(PCGetOptionsPrefix(pc, &prefix));
        PetscCall(PetscOptionsGetString(((PetscObject)pc)->options, prefix, "-pc_factor_mat_solver_type", type,
                                        sizeof(type), &set));
        if (set) PetscCall(PCFactorSetMatSolverType(pc, type));
      }
    }
    /* undo what the stepper set for the Schur-AMG preconditioner (MbsStepperSetSchurKSP()), nothing else */
    if (st->ksp_auto & MBS_KSP_AUTO_TYPE) PetscCall(KSPSetType(ksp, KSPPREONLY));
    if (st->ksp_auto & MBS_KSP_AUTO_SIDE) PetscCall(KSPSetPCSide(ksp, PC_LEFT));
    if (st->ksp_auto & MBS_KSP_AUTO_RTOL)
      PetscCall(KSPSetTolerances(ksp, 1e-5, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT));
    if (st->ksp_auto & MBS_KSP_AUTO_MAXIT)
      PetscCall(KSPSetTolerances(ksp, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT, 10000));
    st->ksp_auto       = 0;
    st->solver_auto[0] = 0;
  }
  PetscCall(MbsStepperChooseSolver(st, pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCLU, &islu));
  if (!islu) { /* dense LU, KLU, interface LU, Schur-AMG: a PCSHELL */
    PetscCall(
      PetscObjectComposeFunction((PetscObject)pc, "PCFactorSetMatSolverType_C", MbsPCShellSetMatSolverType_Private));
    PetscFunctionReturn(0);
  }
  PetscCall(MbsPCSetMumpsMargin_Private(pc, st->J));
  PetscFunctionReturn(0);
}

/* MUMPS's workspace margin of 100 % on a PCLU's factor (this PC's alone), unless the user chose one
   (-<prefix>mat_mumps_icntl_14); A, when given, becomes the PC's operator first (the factor needs one) */
PetscErrorCode MbsPCSetMumpsMargin_Private(PC pc, Mat A)
{
  MatSolverType type;
  const char   *prefix;
  PetscBool     ismumps, set;
  Mat           F;

  PetscFunctionBegin;
  PetscCall(PCFactorGetMatSolverType(pc, &type));
  PetscCall(PetscStrcmp(type, MATSOLVERMUMPS, &ismumps));
  if (!ismumps) PetscFunctionReturn(0);
  PetscCall(PCGetOptionsPrefix(pc, &prefix));
  PetscCall(PetscOptionsHasName(((PetscObject)pc)->options, prefix, "-mat_mumps_icntl_14", &set));
  if (set) PetscFunctionReturn(0);
  if (A) PetscCall(PCSetOperators(pc, A, A));
  PetscCall(PCFactorSetUpMatSolverType(pc));
  PetscCall(PCFactorGetMatrix(pc, &F));
  PetscCall(MatMumpsSetIcntl(F, 14, 100));
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
  PetscCheck(st->ops->setup && st->ops->residual && st->ops->jacobian, PetscObjectComm((PetscObject)st), PETSC_ERR_PLIB,
             "Scheme %s does not provide setup, residual and jacobian", st->type);
  if (model->nvcon && !st->ops->velocity_constraints) { /* name the first, from the rank that owns it */
    char     desc[PETSC_MAX_PATH_LEN + 128] = "";
    PetscInt k                              = 0, first;
    while (k < model->nelem_local && !MbsModelLocalElement(model, k)->kernel->nvcon) k++;
    if (k < model->nelem_local) MbsElementDescribe(model, k, desc, sizeof(desc));
    PetscCall(MbsModelFirstElement(model, k < model->nelem_local ? k : -1, desc, sizeof(desc), &first));
    SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_USER_INPUT,
            "%s: a velocity constraint (one of %" PetscInt_FMT " rows) needs a scheme that treats them, em, dla or dh; "
            "scheme %s does not (docs/nonholonomic.md)",
            desc, model->nvcon, st->type);
  }
  if (!st->q) PetscCall(MbsModelCreateInitialState(model, &st->q, &st->p));
  PetscCall(st->ops->setup(st));
  st->has_forces = PETSC_FALSE; /* force elements (dampers, loads) on any rank: step.c adds their impulse and work */
  for (PetscInt k = 0; k < model->nelem_local; k++)
    if (MbsModelLocalElement(model, k)->kernel->force) st->has_forces = PETSC_TRUE;
  /* on every rank alike: the work after a step gathers ghosted coordinates, which every rank must join */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &st->has_forces, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)st)));
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
  PetscCall(SNESSetFunction(st->snes, st->F, MbsStepperFormFunction_Private, st));
  PetscCall(SNESSetJacobian(st->snes, st->J, st->J, MbsStepperFormJacobian_Private, st));
  PetscCall(MbsStepperSelectConstraints_Private(st, st->q));
  PetscCall(MbsStepperSetUpFactorization(st));
  /* Modified Newton pays where a factorization costs many solves. Under the Schur-AMG preconditioner a refresh (the
     Jacobian and the preconditioner's set-up) costs about one GMRES solve, and Newton's method proper needs far fewer
     solves: 200 x 200 net, EM, 20 steps, 2.15 Newton iterations per step against 5.9, 34.3 s against 53.6 s
     (docs/solvers.md). So with that preconditioner the default is Newton's method proper. */
  if (!st->reuse_set && st->solver_auto[0]) {
    PetscBool schur;
    PetscCall(PetscStrcmp(st->solver_auto, "schur", &schur));
    if (schur) st->reuse = PETSC_FALSE;
  }
  if (!st->reuse) { /* a lag that modified Newton left (-1, -2: never again) would keep SNES from every Jacobian */
    PetscInt lag;
    PetscCall(SNESGetLagJacobian(st->snes, &lag));
    if (lag < 0) PetscCall(SNESSetLagJacobian(st->snes, 1));
  }
  {
    KSP      ksp;
    PC       pc;
    PetscInt split = st->fieldsplit_split;
    PetscCall(SNESGetKSP(st->snes, &ksp));
    PetscCall(KSPGetPC(ksp, &pc));
    /* Named splits for -pc_type fieldsplit (a no-op for other PCs): one per field (-fieldsplit_q_...,
       -fieldsplit_lambda_...), or two, "primal" (q, p, v) and "dual" (lambda, gamma), for a Schur
       complement on the multipliers (-pc_fieldsplit_type schur, -mbs_fieldsplit_split; docs/solvers.md). */
    {
      /* A set-up again (after a scheme parameter changed the layout) must replace the splits, not append to them. */
      PetscBool isfs;
      PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCFIELDSPLIT, &isfs));
      if (isfs) PetscCall(PCReset(pc));
    }
    if (split == 0) {
      for (PetscInt f = 0; f < st->sys->nfields; f++)
        PetscCall(PCFieldSplitSetIS(pc, st->sys->name[f], st->sys->is[f]));
    } else {
      for (int k = 0; k < 2; k++) {
        IS      *list, is;
        PetscInt n = 0;
        PetscCall(PetscMalloc1(st->sys->nfields, &list));
        for (PetscInt f = 0; f < st->sys->nfields; f++)
          if ((st->sys->kind[f] != MBS_FIELD_COORDINATE) == (k == 1)) list[n++] = st->sys->is[f];
        PetscCall(ISConcatenate(PetscObjectComm((PetscObject)st), n, list, &is));
        PetscCall(PCFieldSplitSetIS(pc, k ? "dual" : "primal", is));
        PetscCall(ISDestroy(&is));
        PetscCall(PetscFree(list));
      }
    }
  }
  {
    PetscBool view = PETSC_FALSE;
    PetscCall(
      PetscOptionsGetBool(((PetscObject)st)->options, ((PetscObject)st)->prefix, "-mbs_view_partition", &view, NULL));
    if (view) { /* the model printed its part at its set-up; the unknowns per rank depend on the scheme */
      PetscViewer viewer;
      PetscMPIInt rank;
      PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)st), &rank));
      PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)st), &viewer));
      PetscCall(PetscViewerASCIIPrintf(viewer,
                                       "MbsStepper %s: %" PetscInt_FMT " unknowns in %" PetscInt_FMT " fields\n",
                                       st->type, st->sys->nglobal, st->sys->nfields));
      PetscCall(PetscViewerASCIIPushSynchronized(viewer));
      PetscCall(
        PetscViewerASCIISynchronizedPrintf(viewer, "  [%d] %" PetscInt_FMT " unknowns\n", rank, st->sys->nlocal));
      PetscCall(PetscViewerFlush(viewer));
      PetscCall(PetscViewerASCIIPopSynchronized(viewer));
    }
  }
  st->setup = PETSC_TRUE;
  /* -mbs_restart (MbsStepperSetFromOptions()): continue from the checkpoint once the layout exists */
  if (st->restart[0] && !st->restarted) PetscCall(MbsStepperLoadCheckpoint(st, st->restart));
  PetscCall(MbsStepperViewFromOptions(st, NULL, "-mbs_stepper_view"));
  if (!MbsCited) PetscCall(PetscCitationsRegister(MbsCitation, &MbsCited));
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
  PetscReal    loc[9] = {0, 0, 0, 0, 0, 0, 0, st->step_supplied, st->step_dissipated}, glob[9];

  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  PetscCall(PetscLogEventBegin(MBS_Diagnostics, 0, 0, 0, 0));
  q = st->work[0];
  w = st->work[1];
  PetscCall(MbsModelCoordinatesToLocal(model, st->q, q));
  PetscCall(MbsModelCoordinatesToLocal(model, st->p, w));
  for (PetscInt k = 0; k < model->nowned; k++) {
    const PetscInt b = model->owned_body[k], off = model->body_lq[b];
    for (PetscInt j = 0; j < (PetscInt)model->body_type[b]; j++) {
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
  PetscCall(MPIU_Allreduce(loc, glob, 9, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)st)));
  d->T = glob[0];
  d->W = glob[7];
  d->D = glob[8];
  for (int i = 0; i < 3; i++) {
    d->J[i] = glob[1 + i];
    d->L[i] = glob[4 + i];
  }
  PetscCall(MbsOpPotentialEnergy(model, q, &d->V));
  d->E = d->T + d->V;
  PetscCall(MbsModelSetConstraintTime(model, st->t, st->t)); /* drives: g(q, t) and G w + dg/dt */
  PetscCall(MbsOpConstraintMax(model, q, w, &d->g_max, &d->gv_max));
  d->av_max = 0;
  if (model->nvcon) PetscCall(MbsOpVConstraintMax(model, q, w, &d->av_max));
  d->has_Gv = (st->ops->velocity_residual && st->step > 0) ? PETSC_TRUE : PETSC_FALSE;
  d->Gv_max = 0;
  if (d->has_Gv) PetscCall(st->ops->velocity_residual(st, &d->Gv_max));
  PetscCall(PetscLogEventEnd(MBS_Diagnostics, 0, 0, 0, 0));
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
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)st), &viewer));
  PetscCall(MbsModelGetNumBodies(st->model, &nb));
  PetscCall(MbsModelGetSizes(st->model, NULL, &nq, NULL, &nc));
  if (st->sys) n = st->sys->nglobal;
  PetscCall(PetscViewerASCIIPrintf(viewer, "MbsStepper: scheme %s, h = %g, t_end = %g\n", st->type, (double)st->h,
                                   (double)st->t_end));
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "  %" PetscInt_FMT " bodies, %" PetscInt_FMT " coordinates, %" PetscInt_FMT
                                   " constraints, %" PetscInt_FMT " unknowns\n",
                                   nb, nq, nc, n));
  if (st->ops->view) PetscCall(st->ops->view(st, viewer));
  {
    const char *prefix;
    PetscCall(PetscObjectGetOptionsPrefix((PetscObject)st, &prefix));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  options prefix: %s\n", prefix ? prefix : "(none)"));
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "  predictor %s; -mbs_adapt %s (at most %" PetscInt_FMT " halvings)\n",
                                   MbsPredictors[st->predictor], st->adapt ? "on" : "off", st->adapt_max));
  if (st->reuse)
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "  modified Newton: the factored Jacobian is kept while each iteration cuts the "
                                     "residual by %g\n",
                                     (double)st->reuse_rate));
  else
    PetscCall(PetscViewerASCIIPrintf(viewer, "  Newton's method proper\n"));
  if (st->solver_choice[0]) PetscCall(PetscViewerASCIIPrintf(viewer, "  linear solver: %s\n", st->solver_choice));
  PetscCall(PetscViewerASCIIPrintf(
    viewer,
    "  converged at the round-off floor: a residual norm below %g eps || |J| |X| || that "
    "no longer halves%s\n",
    (double)MBS_FLOOR_EPS_FACTOR, st->stagnation_tol > 0 ? " (or below -mbs_stagnation_tol)" : ""));
  PetscCall(PetscViewerASCIIPrintf(
    viewer, "  failed step: %s; energy divergence bound %g%s; redundant constraints %s\n",
    st->errorifstepfailed ? "an error" : "a reason only", (double)st->energy_divergence,
    st->energy_divergence > 0 ? " times its scale" : " (off)", st->allow_redundant ? "allowed" : "refused"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  output directory %s; outputs:", st->output_dir));
  for (PetscInt i = 0; i < st->noutputs; i++)
    PetscCall(
      PetscViewerASCIIPrintf(viewer, " %s (every %" PetscInt_FMT ")", st->outputs[i].name, st->outputs[i].every));
  PetscCall(PetscViewerASCIIPrintf(
    viewer, "; %" PetscInt_FMT " monitors%s%s\n", st->nmonitors, st->force ? "; external forces set" : "",
    st->sforce ? (st->Jsf ? "; state force with Jacobian set" : "; state force set") : ""));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(SNESView(st->snes, viewer));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetConstraintForceWeight - Where the scheme applies the constraint forces: its momentum balance
  carries h G(q_w)^T lambda with q_w = (1 - w) q_n + w q_{n+1} (w = 1/2 for EM and EM-G, 0 for VI-S, theta
  for VI-A, vartheta for VI-B). The trajectory output evaluates the joint forces there.

  Not Collective

  Output Parameter:
. w - the weight (1 for a scheme that does not say)

  Level: advanced

.seealso: `MbsStepperSetTrajectory()`
@*/
PetscErrorCode MbsStepperGetConstraintForceWeight(MbsStepper st, PetscReal *w)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  *w = 1.0;
  if (st->ops->constraint_force_weight)
    PetscCall(st->ops->constraint_force_weight(st, w));
  else
    PetscCall(PetscInfo(st, "Scheme %s does not say where it applies constraint forces: G(q_{n+1})\n", st->type));
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
  MbsStepperGetNewtonIterations - Newton iterations of the last step (all attempts with -mbs_adapt) and in total; either
may be NULL.

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
  MbsStepperUsesSchurAMG - Whether the step's linear solver is GMRES with the Schur-AMG block preconditioner
  (-mbs_solver schur, or chosen for a wide body graph; docs/solvers.md). Its inner preconditioners
  (-mbs_schur_, -mbs_schur_primal_) read the options of their own nested solvers (e.g. -mbs_schur_primal_sub_pc_type
  under bjacobi) only when they are set up, at the first step.

  Collective (sets the stepper up if needed)

  Output Parameter:
. flg - PETSC_TRUE if it is

  Level: intermediate

.seealso: `MbsStepperGetSNES()`
@*/
PetscErrorCode MbsStepperUsesSchurAMG(MbsStepper st, PetscBool *flg)
{
  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  PetscCall(PetscStrcmp(st->solver_auto, "schur", flg));
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
. force - the force routine, or NULL to remove it (see above)
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

/*@C
  MbsStepperSetStateForce - Sets a force of a host code that depends on the state, with its Jacobian, for an implicit
  coupling. force(st, t, q, v, F, ctx) adds generalized forces into F (coordinate layout, zeroed before the call;
  MbsModelAddPointForce() turns a force at a point into them) at t the step's mid-time, q = (q_n + q_{n+1})/2 its
  midpoint and v = (q_{n+1} - q_n)/h its mean coordinate velocity, as the force elements (dampers) are evaluated. It is
  called at every residual evaluation of a step's Newton solve, and once more when the step is accepted, for the work
  F . (q_{n+1} - q_n) it adds to the diagnostics' W: with EM the discrete energy balance
  E_{n+1} - E_n = W - D holds to round-off. Every scheme adds the impulse h F to its momentum balance.

  jacobian(st, t, q, v, shift, J, ctx) adds dF/dq + shift dF/dv into J (zeroed before the call; shift = 2/h, so that
  h/2 times it is the derivative of h F with respect to q_{n+1}); MbsModelAddPointForceJacobian() turns the derivative
  of a point force into it. J is a coordinate-layout matrix whose nonzero pattern must hold every entry the force ever
  couples: MbsModelCreateCoordinateMatrix() makes one from the pairs of bodies the force couples. Its pattern becomes
  part of the step's Jacobian (exactly preallocated, serial or parallel) and must not change afterwards. Without a
  Jacobian (J and jacobian NULL) the steps converge to the same solution with Newton's method on an inexact Jacobian,
  linearly at best.

  Both are called on every rank (collective); any rank may add to any rows (VecSetValues() and MatSetValues() with
  ADD_VALUES), and the stepper assembles F and J. q and v are read only. An entry outside J's pattern is an error
  (MAT_NEW_NONZERO_LOCATION_ERR) on the rank that owns its row: in a parallel run that rank alone stops, so a host
  that is not sure of its pattern adds its entries on the ranks that own their rows.

  With a Jacobian, the force (and its matrix) can be removed or replaced only before MbsStepperSetUp(), since its
  pattern is part of the step's; afterwards a routine that adds nothing turns it off.

  Logically Collective

  Input Parameters:
+ st - the stepper
. force - the force routine, or NULL to remove it (see above)
. J - the matrix for its Jacobian, or NULL (the stepper takes a reference); it can be set or changed only before
      MbsStepperSetUp()
. jacobian - the Jacobian routine, or NULL
- ctx - their context

  Level: intermediate

.seealso: `MbsModelCreateCoordinateMatrix()`, `MbsModelAddPointForceJacobian()`, `MbsModelAddPointForce()`,
          `MbsModelGetPointFromCoordinates()`, `MbsStepperSetExternalForce()`
@*/
PetscErrorCode MbsStepperSetStateForce(MbsStepper st, MbsStateForceFn force, Mat J, MbsStateForceJacobianFn jacobian,
                                       void *ctx)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  if (J) PetscValidHeaderSpecific(J, MAT_CLASSID, 3);
  PetscCheck(!J == !jacobian, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_WRONG,
             "A state force's Jacobian needs both the matrix and the routine, or neither");
  PetscCheck(force || !jacobian, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_WRONG,
             "A state force's Jacobian without the force");
  PetscCheck(J == st->Jsf || !st->sys, PetscObjectComm((PetscObject)st), PETSC_ERR_ORDER,
             "The state force's Jacobian matrix (its nonzero pattern) is part of the step's Jacobian: set or change it "
             "before MbsStepperSetUp()");
  if (J) {
    MPI_Comm    comm = PetscObjectComm((PetscObject)st);
    PetscInt    m, n, mlocal;
    PetscMPIInt same;
    PetscBool   rows;
    PetscCallMPI(MPI_Comm_compare(PetscObjectComm((PetscObject)J), comm, &same));
    PetscCheck(same == MPI_IDENT || same == MPI_CONGRUENT, comm, PETSC_ERR_ARG_NOTSAMECOMM,
               "The state force's Jacobian must live on the stepper's communicator");
    PetscCall(MatGetSize(J, &m, &n));
    PetscCheck(m == st->model->nq && n == st->model->nq, comm, PETSC_ERR_ARG_SIZ,
               "The state force's Jacobian is %" PetscInt_FMT " x %" PetscInt_FMT ", the model has %" PetscInt_FMT
               " coordinates: create it with MbsModelCreateCoordinateMatrix()",
               m, n, st->model->nq);
    /* on every rank alike: a rank whose rows differ must not leave the others waiting in the step's assembly */
    PetscCall(MatGetLocalSize(J, &mlocal, NULL));
    rows = (PetscBool)(mlocal == st->model->nq_local);
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &rows, 1, MPIU_BOOL, MPI_LAND, comm));
    PetscCheck(rows, comm, PETSC_ERR_ARG_SIZ,
               "The state force's Jacobian does not distribute its rows as the model distributes its coordinates: "
               "create it with MbsModelCreateCoordinateMatrix()");
    PetscCall(PetscObjectReference((PetscObject)J));
  }
  PetscCall(MatDestroy(&st->Jsf));
  st->Jsf        = J;
  st->sforce     = force;
  st->sforce_jac = jacobian;
  st->sforce_ctx = ctx;
  PetscFunctionReturn(0);
}

/* The owner of a body evaluates a point's position (velocity) in the current state and broadcasts it. */
static PetscErrorCode MbsStepperPointKinematics(MbsStepper st, PetscInt body, const PetscReal X[3], PetscBool velocity,
                                                PetscReal x[3])
{
  MbsModel           model = st->model;
  Vec                v;
  PetscMPIInt        owner;
  PetscInt           off, n, start;
  const PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st)); /* creates the state vectors */
  v = velocity ? st->p : st->q;
  PetscCall(MbsModelGetBodyCoordinates(model, body, &off, &n, &owner));
  if (model->rank == owner) {
    const MbsBody *b = MbsModelBody(model, body);
    PetscCall(VecGetOwnershipRange(v, &start, NULL));
    PetscCall(VecGetArrayRead(v, &a));
    for (int i = 0; i < 3; i++) {
      x[i] = PetscRealPart(a[off - start + i]) / (velocity ? b->mblock[0] : 1.0);
      if (b->type == MBS_BODY_RIGID && X)
        for (int d = 0; d < 3; d++)
          x[i] += X[d] * PetscRealPart(a[off - start + 3 + 3 * d + i]) / (velocity ? b->mblock[1 + d] : 1.0);
    }
    PetscCall(VecRestoreArrayRead(v, &a));
  }
  PetscCallMPI(MPI_Bcast(x, 3, MPIU_REAL, owner, PetscObjectComm((PetscObject)st)));
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

/* The outputs with a role of their own, which the trajectory cannot be */
static PetscBool MbsOutputIsFixed(const char name[])
{
  return (PetscBool)(!strcmp(name, MBSOUTPUTCSV) || !strcmp(name, MBSOUTPUTCHECKPOINT) ||
                     !strcmp(name, MBSOUTPUTREACTIONS));
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
  PetscBool         none, writing = PETSC_FALSE, has;
  MbsOutputCreateFn create;

  PetscFunctionBegin;
  PetscCall(PetscStrcmp(format, "none", &none));
  PetscCall(PetscFunctionListFind(MbsOutputFunctions, format, &create));
  if (MbsOutputIsFixed(format)) create = NULL; /* the diagnostics, the checkpoint, the reactions: not a trajectory */
  if (!none && !create) {
    const char **list;
    int          n;
    char         names[256] = "";
    PetscCall(PetscFunctionListGet(MbsOutputFunctions, &list, &n));
    for (int i = 0; i < n; i++) { /* PetscFunctionListGet() may list an empty name */
      if (!list[i] || !list[i][0] || MbsOutputIsFixed(list[i])) continue;
      if (names[0]) PetscCall(PetscStrlcat(names, ", ", sizeof(names)));
      PetscCall(PetscStrlcat(names, list[i], sizeof(names)));
    }
    PetscCall(PetscFree(list));
    SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_USER_INPUT,
            "Unknown trajectory format '%s': expected one of %s, or none", format, names);
  }
  PetscCheck(every > 0, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "The trajectory frequency (-mbs_trajectory_every) must be positive, got %" PetscInt_FMT, every);
  if (st->traj_format[0]) PetscCall(MbsStepperHasOutput_Private(st, st->traj_format, &has, &writing));
  PetscCheck(!writing, PetscObjectComm((PetscObject)st), PETSC_ERR_ORDER, "The trajectory is already being written");
  if (st->traj_format[0]) PetscCall(MbsStepperRemoveOutput_Private(st, st->traj_format));
  PetscCall(PetscStrncpy(st->traj_format, format, sizeof(st->traj_format)));
  st->traj_every = every;
  if (!none) PetscCall(MbsStepperAddOutput(st, format, every));
  PetscFunctionReturn(0);
}

/*@
  MbsStepperSetTrajectorySync - Sets how often the trajectory files are made durable: the written steps are
  flushed to trajectory.h5 (an fsync under MPI-IO, about 1 ms) and listed in trajectory.xdmf together, once at
  least `seconds` of wall time have passed since the last sync, and always at the end of MbsStepperSolve() whatever
  ended it (the last step, a failed step, a signal) and when the stepper is destroyed; at a checkpoint step
  trajectory.h5 is flushed (the checkpoint names flushed steps) and the XML follows when the spacing below allows. A
process killed outright (SIGKILL, a failed node) leaves files that list the steps up to the last sync.

  Logically Collective

  Input Parameters:
+ st - the stepper
- seconds - the interval (default 1); 0 syncs as often as the spacing below allows (after every written step while
            the XML is small)

  Options Database Key:
. -mbs_trajectory_sync <seconds> - the interval

  Notes:
  Takes effect for a trajectory writer created afterwards (at the first write of MbsStepperSolve()).
  trajectory.xdmf is rewritten whole at a sync (under a temporary name, written to the disk (fsync), then renamed,
  so a reader never sees it half written); a sync therefore also waits 50 times as long as the last rewrite took,
  which keeps the rewrites under 2% of the run. docs/output.md measures the cost of a sync.

  Level: intermediate

.seealso: `MbsStepperSetTrajectory()`
@*/
PetscErrorCode MbsStepperSetTrajectorySync(MbsStepper st, PetscReal seconds)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  PetscValidLogicalCollectiveReal(st, seconds, 2);
  PetscCheck(seconds >= 0, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "The trajectory sync interval (-mbs_trajectory_sync) must be 0 or positive, got %g", (double)seconds);
  st->traj_sync = seconds;
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
  PetscCheck(every >= 0, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "The checkpoint frequency (-mbs_checkpoint_every) must be non-negative, got %" PetscInt_FMT, every);
  if (filename) PetscCall(PetscStrncpy(st->checkpoint, filename, sizeof(st->checkpoint)));
  st->checkpoint_every = every;
  PetscCall(MbsStepperAddOutput(st, MBSOUTPUTCHECKPOINT, every));
  PetscFunctionReturn(0);
}

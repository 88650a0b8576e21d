/* The static equilibrium a dynamic run starts from (docs/statics.md): the static scheme at a fixed time, with the
   applied loads raised in load steps. */
#include "stepper/stepperimpl.h"

/* The inner static stepper of MbsStepperSolveEquilibrium(), set up from st */
static PetscErrorCode MbsEquilibriumSetUp(MbsStepper st, MbsStepper eq, const char prefix[])
{
  PetscFunctionBegin;
  PetscCall(MbsStepperSetOptionsPrefix(eq, prefix));
  PetscCall(MbsStepperSetType(eq, MBSSCHEMESTATIC));
  PetscCall(MbsStepperSetTimeStep(eq, st->h));
  PetscCall(PetscStrncpy(eq->output_dir, st->output_dir, sizeof(eq->output_dir))); /* its failure checkpoint */
  PetscCall(MbsStepperSetAllowRedundantConstraints(eq, st->allow_redundant));
  if (st->force) PetscCall(MbsStepperSetExternalForce(eq, st->force, st->force_ctx));
  PetscCall(MbsStepperSetFromOptions(eq));
  /* a load step is solved at the fixed time: halving it would solve the same problem twice (and move the time) */
  PetscCall(MbsStepperSetAdapt(eq, PETSC_FALSE, 1));
  PetscCall(MbsStepperSetErrorIfStepFails(eq, PETSC_FALSE));
  eq->hold_time = PETSC_TRUE;
  eq->step      = st->step;
  eq->t         = st->t;
  PetscCall(MbsStepperSetUp(eq));
  PetscCall(VecCopy(st->q, eq->q));
  PetscCall(VecSet(eq->p, 0.0));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSolveEquilibrium - Replaces the stepper's state by the static equilibrium at its current time: the
  configuration in which gravity, the loads, the force elements at rest and the constraint forces balance, at rest.

  Collective

  Input Parameters:
+ st - the stepper (set up here if it is not)
- nsteps - load steps: the applied loads (gravity and the `loads` elements, MbsModelSetLoadFactor()) are raised from
           1/nsteps to their full value, each equilibrium starting from the last

  Options Database Keys:
+ -mbs_equilibrium <nsteps> - MbsStepperSolve() solves for the equilibrium before the first step
- -<prefix>mbs_equilibrium_snes_monitor, ... - the equilibrium solve's own solver options, under the stepper's
                                               prefix followed by "mbs_equilibrium_"

  Notes:
  The solve is a stepper of type `static` (MBSSCHEMESTATIC) on the same model, held at the current time, that takes
  its load steps from the current configuration; it takes the stepper's host external force and its setting for
  redundant constraints, not a host's state force (an error). Each load step must converge: a load step that does
  not is an error naming it (give more steps), after which the model's load factor is the one it had and the state
  is unchanged. The velocities become zero. The energy reference of the divergence checks is taken again from the
  new state.

  Level: intermediate

.seealso: `MbsStepperSetEquilibrium()`, `MbsModelSetLoadFactor()`, `MBSSCHEMESTATIC`
@*/
PetscErrorCode MbsStepperSolveEquilibrium(MbsStepper st, PetscInt nsteps)
{
  MbsStepper     eq;
  const char    *prefix;
  char           eqprefix[256];
  PetscReal      lf0;
  PetscInt       its = 0, k = 0;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  PetscCheck(nsteps >= 1, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "The equilibrium needs at least one load step, got %" PetscInt_FMT, nsteps);
  PetscCheck(!st->sforce, PetscObjectComm((PetscObject)st), PETSC_ERR_SUP,
             "The static equilibrium does not take a host's state force (MbsStepperSetStateForce()); solve it before "
             "setting the force, or without it");
  PetscCall(MbsStepperSetUp(st));
  PetscCall(MbsStepperGetOptionsPrefix(st, &prefix));
  PetscCall(PetscSNPrintf(eqprefix, sizeof(eqprefix), "%smbs_equilibrium_", prefix ? prefix : ""));
  PetscCall(MbsStepperCreate(st->model, &eq));
  ierr = MbsEquilibriumSetUp(st, eq, eqprefix);
  if (ierr) PetscCall(MbsStepperDestroy(&eq));
  PetscCall(ierr);
  PetscCall(MbsModelGetLoadFactor(st->model, &lf0));
  /* from here on, the model's load factor is restored and the inner stepper destroyed whatever happens */
  for (k = 1, ierr = 0; k <= nsteps && !ierr; k++) {
    PetscInt last;
    ierr     = MbsModelSetLoadFactor(st->model, lf0 * (PetscReal)k / (PetscReal)nsteps);
    eq->step = st->step; /* the same time for every load step */
    eq->t    = st->t;
    if (!ierr) ierr = MbsStepperStep(eq);
    if (!ierr && eq->reason < 0) break;
    if (!ierr) ierr = MbsStepperGetNewtonIterations(eq, &last, NULL);
    if (!ierr) its += last;
  }
  PetscCall(MbsModelSetLoadFactor(st->model, lf0));
  if (!ierr && k <= nsteps) { /* load step k failed */
    Vec       F;
    PetscReal fnorm = 0;
    ierr            = SNESGetFunction(eq->snes, &F, NULL, NULL);
    if (!ierr) ierr = VecNorm(F, NORM_2, &fnorm);
    PetscCall(MbsStepperDestroy(&eq));
    PetscCall(ierr);
    SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_NOT_CONVERGED,
            "The static equilibrium at t = %g did not converge at load step %" PetscInt_FMT " of %" PetscInt_FMT
            " (the loads at %g of their value): residual norm %.3e. Give more load steps (-mbs_equilibrium, "
            "equilibrium.load_steps), or see -mbs_equilibrium_snes_monitor",
            (double)st->t, k, nsteps, (double)((PetscReal)k / (PetscReal)nsteps), (double)fnorm);
  }
  if (!ierr) ierr = VecCopy(eq->q, st->q);
  if (!ierr) ierr = VecSet(st->p, 0.0);
  PetscCall(MbsStepperDestroy(&eq));
  PetscCall(ierr);
  st->energy_set = PETSC_FALSE; /* the energy reference is taken again from the new state */
  st->jac_valid  = PETSC_FALSE;
  st->nhist      = 0;
  PetscCall(
    PetscInfo(st, "Static equilibrium at t = %g in %" PetscInt_FMT " load steps, %" PetscInt_FMT " Newton iterations\n",
              (double)st->t, nsteps, its));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetEquilibrium - Makes MbsStepperSolve() start from the static equilibrium (MbsStepperSolveEquilibrium())
  of the initial state, in nsteps load steps; 0 (the default) starts from the state as given.

  Logically Collective

  Input Parameters:
+ st - the stepper
- nsteps - load steps, or 0

  Options Database Key:
. -mbs_equilibrium <nsteps> - the same

  Note:
  A run that continues from a checkpoint starts from the checkpoint's state, not from an equilibrium.

  Level: intermediate

.seealso: `MbsStepperSolveEquilibrium()`
@*/
PetscErrorCode MbsStepperSetEquilibrium(MbsStepper st, PetscInt nsteps)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  PetscCheck(nsteps >= 0, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "The number of load steps of the initial equilibrium must be non-negative, got %" PetscInt_FMT, nsteps);
  st->equilibrium_steps = nsteps;
  PetscFunctionReturn(0);
}

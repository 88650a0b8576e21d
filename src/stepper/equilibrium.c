/* The static equilibrium a dynamic run starts from (docs/statics.md): the static scheme at a fixed time, with the
   applied loads raised in load steps. */
#include "stepper/stepperimpl.h"

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
  its load steps from the current configuration. Each load step must converge (a load step that does not is an
  error naming it; give more steps). The velocities become zero. The energy reference of the divergence checks is
  taken again from the new state.

  Level: intermediate

.seealso: `MbsStepperSetEquilibrium()`, `MbsModelSetLoadFactor()`, `MBSSCHEMESTATIC`
@*/
PetscErrorCode MbsStepperSolveEquilibrium(MbsStepper st, PetscInt nsteps)
{
  MbsStepper  eq;
  const char *prefix;
  char        eqprefix[256];
  PetscReal   lf0;
  PetscInt    its = 0;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  PetscCheck(nsteps >= 1, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "The equilibrium needs at least one load step, got %" PetscInt_FMT, nsteps);
  PetscCall(MbsStepperSetUp(st));
  PetscCall(MbsStepperCreate(st->model, &eq));
  PetscCall(MbsStepperGetOptionsPrefix(st, &prefix));
  PetscCall(PetscSNPrintf(eqprefix, sizeof(eqprefix), "%smbs_equilibrium_", prefix ? prefix : ""));
  PetscCall(MbsStepperSetOptionsPrefix(eq, eqprefix));
  PetscCall(MbsStepperSetType(eq, MBSSCHEMESTATIC));
  PetscCall(MbsStepperSetTimeStep(eq, st->h));
  PetscCall(
    PetscStrncpy(eq->output_dir, st->output_dir, sizeof(eq->output_dir))); /* its failure checkpoint; no output */
  if (st->force) PetscCall(MbsStepperSetExternalForce(eq, st->force, st->force_ctx));
  PetscCall(MbsStepperSetFromOptions(eq));
  eq->hold_time = PETSC_TRUE;
  eq->step      = st->step;
  eq->t         = st->t;
  PetscCall(MbsStepperSetUp(eq));
  PetscCall(VecCopy(st->q, eq->q));
  PetscCall(VecSet(eq->p, 0.0));
  PetscCall(MbsModelGetLoadFactor(st->model, &lf0));
  for (PetscInt k = 1; k <= nsteps; k++) {
    PetscInt last;
    PetscCall(MbsModelSetLoadFactor(st->model, lf0 * (PetscReal)k / (PetscReal)nsteps));
    eq->step = st->step; /* the same time for every load step */
    eq->t    = st->t;
    PetscCall(MbsStepperStep(eq));
    PetscCall(MbsStepperGetNewtonIterations(eq, &last, NULL));
    its += last;
  }
  PetscCall(MbsModelSetLoadFactor(st->model, lf0));
  PetscCall(VecCopy(eq->q, st->q));
  PetscCall(VecSet(st->p, 0.0));
  PetscCall(MbsStepperDestroy(&eq));
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

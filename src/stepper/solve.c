/* The driver: MbsStepperSolve() runs the steps to the final time with the outputs and signals. */
#include <signal.h>
#include "stepper/stepperimpl.h"
#include "io/output.h"

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
  st->reason = MBS_STEP_ITERATING;
  PetscCheck(st->t_end / st->h < (PetscReal)PETSC_MAX_INT, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "A final time of %g with steps of %g makes %g steps, more than %" PetscInt_FMT " (the largest PetscInt)",
             (double)st->t_end, (double)st->h, (double)(st->t_end / st->h), (PetscInt)PETSC_MAX_INT);
  nsteps = MbsStepperNumSteps(st);
  {
    /* every rank takes part in the per-step reduction if any rank catches signals */
    PetscBool installed;
    PetscCall(MbsInterruptPending(&installed, NULL));
    PetscCallMPI(MPI_Allreduce(&installed, &catch_signals, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)st)));
    PetscCall(MbsInterruptSetAgreed_Private(0));
  }
  /* A run that continues (from a checkpoint, or a second Solve to a later final time) appends to the
     diagnostics it continues, rows after its step dropped; a run from step 0 starts the file afresh. */
  PetscCall(
    MbsDiagnosticsFileOpen(PetscObjectComm((PetscObject)st), st->output_dir, st->step > 0 ? st->step : -1, &file));
  /* a continued run adds no row off the output grid (a checkpoint taken at an interrupt may lie there) */
  if (!MbsDiagnosticsFileHasStep(file, st->step) && st->step % st->output_every == 0)
    PetscCall(MbsStepperWriteDiagnostics(st, file));
  if (st->monitored_step != st->step) PetscCall(MbsStepperMonitor(st));
  while (st->step < nsteps) {
    if (catch_signals) { /* every rank stops after the same step */
      int sig;
      PetscCall(MbsInterruptPending(NULL, &sig));
      PetscCallMPI(MPI_Allreduce(&sig, &signum, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)st)));
      if (signum) break;
    }
    ierr = MbsStepperStep(st);
    if (ierr || st->reason == MBS_STEP_DIVERGED_NONLINEAR_SOLVE) break; /* not accepted */
    if (st->step % st->output_every == 0 || st->step == nsteps || st->reason < 0) {
      ierr = MbsStepperWriteDiagnostics(st, file);
      if (ierr) break;
    }
    if (st->reason < 0) break; /* a diverged energy, with MbsStepperSetErrorIfStepFails() off */
    if (st->checkpoint_every > 0 && st->step % st->checkpoint_every == 0 && st->step < nsteps) {
      ierr = MbsStepperWriteCheckpoint(st, NULL);
      if (ierr) break;
    }
  }
  if (signum) {
    st->reason = MBS_STEP_INTERRUPTED;
    PetscCall(MbsInterruptSetAgreed_Private(signum));
    /* The diagnostics and the trajectory keep their rows and frames on the -mbs_output_every grid (each
       is flushed as it is written), so that the restarted run continues them as if never interrupted. */
    char path[PETSC_MAX_PATH_LEN];
    ierr = MbsStepperWriteCheckpoint(st, NULL);
    PetscCall(MbsDiagnosticsFileClose(&file));
    PetscCall(ierr);
    PetscCall(MbsStepperCheckpointPath(st, NULL, path, sizeof(path)));
    SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_SIG,
            "Interrupted by %s after step %" PetscInt_FMT " of %" PetscInt_FMT
            " (t = %g): the checkpoint is in %s; continue with the same command and -mbs_restart %s",
            signum == SIGINT    ? "SIGINT"
            : signum == SIGTERM ? "SIGTERM"
                                : "a signal",
            st->step, nsteps, (double)st->t, path, path);
  }
  PetscCall(MbsDiagnosticsFileClose(&file));
  PetscCall(ierr);
  if (st->reason < 0) PetscFunctionReturn(0); /* a failed step: the caller asks MbsStepperGetConvergedReason() */
  if (st->traj) PetscCall(MbsTrajectoryWrite(st->traj, st, PETSC_TRUE));
  if (st->checkpoint_every > 0) PetscCall(MbsStepperWriteCheckpoint(st, NULL));
  if (st->write_state[0]) PetscCall(MbsStepperWriteState(st, st->write_state));
  PetscFunctionReturn(0);
}

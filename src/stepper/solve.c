/* The driver: MbsStepperSolve() runs the steps to the final time with the outputs and signals. */
#include <signal.h>
#include "stepper/stepperimpl.h"

/*@C
  MbsStepperSolve - Integrates from the current time to the final time, writing diagnostics.csv into
  the output directory (every -mbs_output_every steps and the last), the trajectory if one is set, a
  checkpoint every -mbs_checkpoint_every steps, and the final state if -mbs_write_state is set. With
  -mbs_restart FILE it first continues from that checkpoint (MbsStepperLoadCheckpoint()), appending to
  the diagnostics of the interrupted run.

  With the handlers of MbsInterruptHandlerPush() installed, a SIGINT, SIGTERM or SIGHUP stops the run at the next
  Newton iteration of the step in progress, which is abandoned (a long step of a large model does not delay it): a
  checkpoint of the state at the step's start (the file of MbsStepperSetCheckpoint(), default <output
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
  PetscInt       nsteps;
  PetscErrorCode ierr = 0;
  PetscBool      catch_signals;
  int            signum = 0;

  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  st->reason = MBS_STEP_ITERATING;
  PetscCheck(st->t_end / st->h < (PetscReal)PETSC_MAX_INT, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "A final time of %g with steps of %g makes %g steps, more than %" PetscInt_FMT " (the largest PetscInt)",
             (double)st->t_end, (double)st->h, (double)(st->t_end / st->h), (PetscInt)PETSC_MAX_INT);
  nsteps = MbsStepperNumSteps(st);
  {
    /* a fixed step size reaches only multiples of itself: a final time between two would be overshot */
    const PetscReal r = st->t_end / st->h;
    PetscCheck(PetscAbsReal(r - PetscFloorReal(r + 0.5)) <= 1e-9 * PetscMax(1.0, r), PetscObjectComm((PetscObject)st),
               PETSC_ERR_USER_INPUT,
               "The final time %g (time.end, -mbs_t_end) is not a whole number of steps of %g (time.step, -mbs_dt): "
               "%.6g steps, so the run would end at %g. Give a final time of %g or %g, or a step that divides it",
               (double)st->t_end, (double)st->h, (double)r, (double)(nsteps * st->h),
               (double)(PetscFloorReal(r) * st->h), (double)(nsteps * st->h));
  }
  PetscCheck(!st->restarted || st->step <= nsteps, PetscObjectComm((PetscObject)st), PETSC_ERR_USER_INPUT,
             "The run continues from a checkpoint at step %" PetscInt_FMT " (t = %g), after its final time %g "
             "(-mbs_t_end): there is nothing to run; give a later final time",
             st->step, (double)st->t, (double)st->t_end);
  if (st->equilibrium_steps > 0 && st->step == 0 && !st->restarted) /* start from the static equilibrium */
    PetscCall(MbsStepperSolveEquilibrium(st, st->equilibrium_steps));
  {
    /* every rank takes part in the per-step reduction if any rank catches signals */
    PetscBool installed;
    PetscCall(MbsInterruptPending(&installed, NULL));
    PetscCallMPI(MPI_Allreduce(&installed, &catch_signals, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)st)));
    PetscCall(MbsInterruptSetAgreed_Private(0));
  }
  st->solving       = PETSC_TRUE;
  st->catch_signals = catch_signals;
  st->solve_nsteps  = nsteps;
  /* The outputs open their files (a continued run appends to what it continues) and, with the monitors, see
     the state the run starts from; then every accepted step. */
  ierr = MbsStepperOutputsBegin_Private(st);
  if (!ierr && st->monitored_step != st->step) ierr = MbsStepperMonitor(st);
  while (!ierr && st->step < nsteps) {
    if (catch_signals) { /* every rank stops after the same step */
      int sig;
      PetscCall(MbsInterruptPending(NULL, &sig));
      PetscCallMPI(MPI_Allreduce(&sig, &signum, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)st)));
      if (signum) break;
    }
    ierr = MbsStepperStep(st);
    if (!ierr && st->reason == MBS_STEP_INTERRUPTED) { /* a signal during the step, which was abandoned */
      signum = st->step_signal;
      break;
    }
    if (st->reason < 0) break; /* a failed step, with MbsStepperSetErrorIfStepFails() off */
  }
  st->solving       = PETSC_FALSE;
  st->catch_signals = PETSC_FALSE;
  if (signum) {
    char path[PETSC_MAX_PATH_LEN];

    st->reason = MBS_STEP_INTERRUPTED;
    PetscCall(MbsInterruptSetAgreed_Private(signum));
    /* The diagnostics and the trajectory keep their rows and frames on their output grid, so that the restarted run
       continues them as if never interrupted; the outputs end first, so that the trajectory's written steps are
       flushed and listed before the checkpoint names them. */
    {
      PetscErrorCode ierr_end = MbsStepperOutputsEnd_Private(st);
      ierr                    = MbsStepperWriteCheckpoint(st, NULL);
      PetscCall(ierr_end);
    }
    PetscCall(ierr);
    PetscCall(MbsStepperCheckpointPath(st, NULL, path, sizeof(path)));
    SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_SIG,
            "Interrupted by %s after step %" PetscInt_FMT " of %" PetscInt_FMT
            " (t = %g): the checkpoint is in %s; continue with the same command and -mbs_restart %s",
            signum == SIGINT    ? "SIGINT"
            : signum == SIGTERM ? "SIGTERM"
            : signum == SIGHUP  ? "SIGHUP"
                                : "a signal",
            st->step, nsteps, (double)st->t, path, path);
  }
  if (!ierr && st->reason >= 0) ierr = MbsStepperOutputsFinish_Private(st); /* the final frame, checkpoint */
  {
    PetscErrorCode ierr_end = MbsStepperOutputsEnd_Private(st);
    PetscCall(ierr);
    PetscCall(ierr_end);
  }
  if (st->reason < 0) PetscFunctionReturn(0); /* a failed step: the caller asks MbsStepperGetConvergedReason() */
  if (st->write_state[0]) PetscCall(MbsStepperWriteState(st, st->write_state));
  PetscFunctionReturn(0);
}

/*
  SIGINT, SIGTERM and SIGHUP (a closed terminal, a batch system's hang-up) during a run: the handler only records the
  signal; MbsStepperSolve() looks at the record between steps (all ranks agree through one reduction), finishes there,
  writes a checkpoint and its outputs, and returns PETSC_ERR_SIG saying how to continue. A second signal while the first
  is being handled ends the process at once, the way an impatient Ctrl-C expects.
*/
#define _POSIX_C_SOURCE 200809L /* sigaction */
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <gglmbs/stepper.h>

static volatile sig_atomic_t MbsInterruptSignal = 0;
static int                   MbsInterruptAgreed = 0; /* the signal the ranks agreed on in MbsStepperSolve() */
static struct sigaction      MbsInterruptSaved[3];
static PetscBool             MbsInterruptInstalled  = PETSC_FALSE;
static const int             MbsInterruptSignals[3] = {SIGINT, SIGTERM, SIGHUP};

static void MbsInterruptHandler(int sig)
{
  static const char again[] = "\ngglmbs: second interrupt: stopping at once, without a checkpoint\n";

  if (MbsInterruptSignal) {
    ssize_t n = write(STDERR_FILENO, again, sizeof(again) - 1);
    (void)n;
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  MbsInterruptSignal = sig;
}

/*@C
  MbsInterruptHandlerPush - Catches SIGINT, SIGTERM and SIGHUP so that MbsStepperSolve() stops between two steps,
  writes a checkpoint, flushes its outputs and returns PETSC_ERR_SIG with a message saying how to restart;
  a second signal ends the process at once. Call it on every rank, after PetscInitialize() (which installs
  PETSc's own handlers).

  Not Collective

  Level: intermediate

.seealso: `MbsInterruptHandlerPop()`, `MbsInterruptPending()`, `MbsStepperSolve()`
@*/
PetscErrorCode MbsInterruptHandlerPush(void)
{
  struct sigaction sa;

  PetscFunctionBegin;
  if (MbsInterruptInstalled) PetscFunctionReturn(0);
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = MbsInterruptHandler;
  sa.sa_flags   = SA_RESTART; /* a Ctrl-C must not make a write to a pipe or an MPI socket fail with EINTR */
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; i++)
    PetscCheck(!sigaction(MbsInterruptSignals[i], &sa, &MbsInterruptSaved[i]), PETSC_COMM_SELF, PETSC_ERR_SYS,
               "Cannot install the handler of signal %d", MbsInterruptSignals[i]);
  MbsInterruptSignal    = 0;
  MbsInterruptAgreed    = 0;
  MbsInterruptInstalled = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@C
  MbsInterruptHandlerPop - Restores the SIGINT, SIGTERM and SIGHUP handlers that MbsInterruptHandlerPush() replaced.

  Not Collective

  Level: intermediate

.seealso: `MbsInterruptHandlerPush()`
@*/
PetscErrorCode MbsInterruptHandlerPop(void)
{
  PetscFunctionBegin;
  if (!MbsInterruptInstalled) PetscFunctionReturn(0);
  for (int i = 0; i < 3; i++)
    PetscCheck(!sigaction(MbsInterruptSignals[i], &MbsInterruptSaved[i], NULL), PETSC_COMM_SELF, PETSC_ERR_SYS,
               "Cannot restore the handler of signal %d", MbsInterruptSignals[i]);
  MbsInterruptInstalled = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* MbsStepperSolve(): the signal all ranks agreed to stop on (0 at the start of a Solve). It is reported
   by MbsInterruptPending() on every rank, also on those that never received it. */
PetscErrorCode MbsInterruptSetAgreed_Private(int signum)
{
  PetscFunctionBegin;
  MbsInterruptAgreed = signum;
  if (signum) MbsInterruptSignal = 0; /* handled: a later Solve of the same process starts afresh */
  PetscFunctionReturn(0);
}

/*@C
  MbsInterruptPending - Whether the handlers of MbsInterruptHandlerPush() are installed, and the signal
  received since: the one the ranks agreed on when MbsStepperSolve() stopped for it, else the one this
  rank has received and not yet acted on (0: none).

  Not Collective

  Output Parameters:
+ installed - the handlers are installed (may be NULL)
- signum - SIGINT, SIGTERM or 0 (may be NULL)

  Level: intermediate

.seealso: `MbsInterruptHandlerPush()`
@*/
PetscErrorCode MbsInterruptPending(PetscBool *installed, int *signum)
{
  PetscFunctionBegin;
  if (installed) *installed = MbsInterruptInstalled;
  if (signum) *signum = MbsInterruptAgreed ? MbsInterruptAgreed : (int)MbsInterruptSignal;
  PetscFunctionReturn(0);
}

/* Monitors: the hook list, the default one-line monitor and the progress monitor. */
#include <petsctime.h>
#include "stepper/stepperimpl.h"

/* Contexts of the built-in monitors (-mbs_monitor, -mbs_progress) */
typedef struct {
  PetscViewer viewer; /* a reference; NULL: standard output */
  PetscBool   have0;
  PetscReal   E0;
} MbsMonitorDefaultCtx;

static PetscErrorCode MbsMonitorDefaultCtxDestroy(void **ctx)
{
  MbsMonitorDefaultCtx *c = (MbsMonitorDefaultCtx *)*ctx;

  PetscFunctionBegin;
  if (c) PetscCall(PetscViewerDestroy(&c->viewer));
  PetscCall(PetscFree(*ctx));
  PetscFunctionReturn(0);
}

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
- -mbs_progress - MbsStepperMonitorProgress(): progress to stderr (the gglmbs program's default when stderr is a
terminal)

  Level: intermediate

.seealso: `MbsStepperMonitorCancel()`, `MbsStepperComputeDiagnostics()`
@*/
PetscErrorCode MbsStepperMonitorSet(MbsStepper st, PetscErrorCode (*monitor)(MbsStepper, PetscInt, PetscReal, void *),
                                    void      *ctx, PetscErrorCode (*destroy)(void **))
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < st->nmonitors;
       i++) /* the same monitor twice (e.g. SetFromOptions called again) is added once */
    if (st->monitors[i].monitor == monitor && st->monitors[i].ctx == ctx) PetscFunctionReturn(0);
  if (st->nmonitors == st->maxmonitors) {
    st->maxmonitors = PetscMax(4, 2 * st->maxmonitors);
    PetscCall(PetscRealloc(sizeof(MbsMonitor) * st->maxmonitors, &st->monitors));
  }
  st->monitors[st->nmonitors].monitor = monitor;
  st->monitors[st->nmonitors].ctx     = ctx;
  st->monitors[st->nmonitors].destroy = destroy;
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
    if (st->monitors[i].destroy) PetscCall(st->monitors[i].destroy(&st->monitors[i].ctx));
  st->nmonitors = 0;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperMonitor - Runs the outputs and the monitors on the current state (called by
  MbsStepperStep() and MbsStepperSolve(); a host only needs it to monitor a state it set itself).

  Collective

  Level: developer
@*/
PetscErrorCode MbsStepperMonitor(MbsStepper st)
{
  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  PetscCall(MbsStepperOutputsWrite_Private(st));
  for (PetscInt i = 0; i < st->nmonitors; i++)
    PetscCall(st->monitors[i].monitor(st, st->step, st->t, st->monitors[i].ctx));
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
  PetscCall(PetscViewerASCIIPrintf(
    c && c->viewer ? c->viewer : PETSC_VIEWER_STDOUT_(PetscObjectComm((PetscObject)st)),
    "%5" PetscInt_FMT " t %.6e E %.15e dE %+.2e g %.2e gv %.2e%s its %" PetscInt_FMT "\n", step, (double)t, (double)d.E,
    (double)dE, (double)d.g_max, (double)d.gv_max, Gv, step ? st->last_its : 0));
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
  PetscCheck(c, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_NULL,
             "MbsStepperMonitorProgress needs its context (use -mbs_progress)");
  PetscCall(PetscTime(&now));
  /* every rank decides from rank 0's clock, so the collective print is entered by all or none */
  PetscCallMPI(MPI_Bcast(&now, 1, MPI_DOUBLE, 0, PetscObjectComm((PetscObject)st)));
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
  PetscCall(PetscViewerASCIIPrintf(PETSC_VIEWER_STDERR_(PetscObjectComm((PetscObject)st)),
                                   "gglmbs: %5.1f%%  t = %.6g of %.6g  step %" PetscInt_FMT " of %" PetscInt_FMT
                                   "  %.1f steps/s  ETA %.0f s\n",
                                   nsteps ? 100.0 * step / nsteps : 100.0, (double)t, (double)st->t_end, step, nsteps,
                                   (double)rate, (double)PetscMax(eta, 0.0)));
  PetscFunctionReturn(0);
}

/* -mbs_monitor and -mbs_progress, inside MbsStepperSetFromOptions()'s options block */
PetscErrorCode MbsStepperMonitorSetFromOptions_Private(MbsStepper st, PetscOptionItems *PetscOptionsObject)
{
  PetscBool         mon = PETSC_FALSE, prog = PETSC_FALSE;
  PetscBool         has_mon = PETSC_FALSE, has_prog = PETSC_FALSE; /* SetFromOptions called again adds them once */
  PetscViewer       viewer;
  PetscViewerFormat format;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < st->nmonitors; i++) {
    if (st->monitors[i].monitor == MbsStepperMonitorDefault) has_mon = PETSC_TRUE;
    if (st->monitors[i].monitor == MbsStepperMonitorProgress) has_prog = PETSC_TRUE;
  }
  PetscCall(PetscOptionsViewer("-mbs_monitor", "Print diagnostics every step (to a viewer, default stdout)",
                               "MbsStepperMonitorDefault", &viewer, &format, &mon));
  if (mon && !has_mon) {
    MbsMonitorDefaultCtx *c;
    PetscCall(PetscNew(&c));
    c->viewer = viewer; /* the reference PetscOptionsViewer() gave */
    PetscCall(MbsStepperMonitorSet(st, MbsStepperMonitorDefault, c, MbsMonitorDefaultCtxDestroy));
  } else if (mon)
    PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(PetscOptionsBool("-mbs_progress", "Print progress (percent, time, steps/s, ETA) to stderr",
                             "MbsStepperMonitorProgress", prog, &prog, NULL));
  if (prog && !has_prog) {
    MbsMonitorProgressCtx *c;
    PetscCall(PetscNew(&c));
    c->step0 = -1;
    PetscCall(MbsStepperMonitorSet(st, MbsStepperMonitorProgress, c, MbsMonitorCtxDestroy));
  }
  PetscFunctionReturn(0);
}

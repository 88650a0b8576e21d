#include <stdio.h>
#include "outputs/csvfile.h"

static const char MbsDiagnosticsHeader[] = "step,t,E,T,V,Jx,Jy,Jz,Lx,Ly,Lz,g_max,gv_max,newton_its,Gv_max,W,D,av_max\n";

/* One row of diagnostics.csv */
static PetscErrorCode MbsDiagnosticsRow(PetscInt step, PetscReal t, const MbsDiagnostics *d, PetscInt newton_its,
                                        char row[], size_t size)
{
  char Gv[32] = ""; /* the scheme's own velocity-level residual, empty for schemes without one */
  int  len;

  PetscFunctionBegin;
  if (d->has_Gv) PetscCall(PetscSNPrintf(Gv, sizeof(Gv), "%.17g", (double)d->Gv_max));
  len =
    snprintf(row, size,
             "%" PetscInt_FMT ",%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%" PetscInt_FMT
             ",%s,%.17g,%.17g,%.17g\n",
             step, (double)t, (double)d->E, (double)d->T, (double)d->V, (double)d->J[0], (double)d->J[1],
             (double)d->J[2], (double)d->L[0], (double)d->L[1], (double)d->L[2], (double)d->g_max, (double)d->gv_max,
             newton_its, Gv, (double)d->W, (double)d->D, (double)d->av_max);
  PetscCheck(len > 0 && (size_t)len < size, PETSC_COMM_SELF, PETSC_ERR_PLIB, "A diagnostics row is too long");
  PetscFunctionReturn(0);
}

/* The output "csv": diagnostics.csv, written by MbsStepperSolve() (docs/output.md) */
typedef struct {
  MbsCSVFile file;         /* open between begin and end */
  PetscInt   last_written; /* the step of the last row */
} MbsOutputCSV;

static PetscErrorCode MbsOutputWriteRow_CSV(MbsStepper st, MbsOutputCSV *csv)
{
  MbsDiagnostics d;
  char           row[512];

  PetscFunctionBegin;
  PetscCall(MbsStepperComputeDiagnostics(st, &d));
  PetscCall(MbsDiagnosticsRow(st->step, st->t, &d, st->step ? st->last_its : 0, row, sizeof(row)));
  PetscCall(MbsCSVFileWriteRow(csv->file, st->step, row));
  csv->last_written = st->step;
  PetscFunctionReturn(0);
}

/* A run that continues (from a checkpoint, or a second Solve to a later final time) appends to the diagnostics
   it continues, rows after its step dropped, and adds no row off the output grid (a checkpoint taken at an
   interrupt may lie there); a run from step 0 starts the file afresh. */
static PetscErrorCode MbsOutputBegin_CSV(MbsStepper st, PetscInt every, void *ctx)
{
  MbsOutputCSV *csv = (MbsOutputCSV *)ctx;

  const char *provenance;

  PetscFunctionBegin;
  PetscCall(MbsStepperGetProvenance(st, &provenance));
  PetscCall(MbsCSVFileOpen(PetscObjectComm((PetscObject)st), st->output_dir, "diagnostics.csv", MbsDiagnosticsHeader,
                           st->step > 0 ? st->step : -1, provenance, &csv->file));
  if (!MbsCSVFileHasStep(csv->file, st->step) && st->step % every == 0) PetscCall(MbsOutputWriteRow_CSV(st, csv));
  csv->last_written = st->step;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsOutputWrite_CSV(MbsStepper st, PetscInt every, PetscBool last, void *ctx)
{
  MbsOutputCSV *csv = (MbsOutputCSV *)ctx;

  PetscFunctionBegin;
  if (!csv->file || st->step <= csv->last_written) PetscFunctionReturn(0);
  if (st->step % every == 0 || last) PetscCall(MbsOutputWriteRow_CSV(st, csv));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsOutputEnd_CSV(MbsStepper st, void *ctx)
{
  MbsOutputCSV *csv = (MbsOutputCSV *)ctx;

  PetscFunctionBegin;
  PetscCall(MbsCSVFileClose(&csv->file));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsOutputDestroy_CSV(void **ctx)
{
  MbsOutputCSV *csv = (MbsOutputCSV *)*ctx;

  PetscFunctionBegin;
  if (csv) PetscCall(MbsCSVFileClose(&csv->file));
  PetscCall(PetscFree(*ctx));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOutputCreate_CSV(MbsStepper st, MbsOutputOps *ops, void **ctx)
{
  MbsOutputCSV *csv;

  PetscFunctionBegin;
  PetscCall(PetscNew(&csv));
  csv->last_written = -1;
  ops->begin        = MbsOutputBegin_CSV;
  ops->write        = MbsOutputWrite_CSV;
  ops->end          = MbsOutputEnd_CSV;
  ops->destroy      = MbsOutputDestroy_CSV;
  *ctx              = csv;
  PetscFunctionReturn(0);
}

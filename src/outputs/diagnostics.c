#define _POSIX_C_SOURCE 200809L /* fileno, ftruncate, lseek */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "stepper/stepperimpl.h"

typedef struct _n_MbsDiagnosticsFile *MbsDiagnosticsFile;

struct _n_MbsDiagnosticsFile {
  MPI_Comm comm;
  FILE    *fp; /* rank 0 only */
  char     path[PETSC_MAX_PATH_LEN];
  PetscInt last_kept; /* last step of the rows kept from an earlier run, -1 if none */
};

static const char MbsDiagnosticsHeader[] = "step,t,E,T,V,Jx,Jy,Jz,Lx,Ly,Lz,g_max,gv_max,newton_its,Gv_max,W,D\n";

/* The provenance as comment lines "# ...", before the header; returns an errno */
static int MbsDiagnosticsPutComments(FILE *fp, const char text[])
{
  for (const char *line = text; *line;) {
    const char *end = strchr(line, '\n');
    const int   len = end ? (int)(end - line) : (int)strlen(line);
    if (fprintf(fp, "# %.*s\n", len, line) < 0) return errno ? errno : EIO;
    line += len + (end ? 1 : 0);
  }
  return 0;
}

/* Rank 0: a new file with the provenance and the header; returns an errno */
static int MbsDiagnosticsCreate(const char path[], const char provenance[], FILE **fp)
{
  int err;

  *fp = fopen(path, "w");
  if (!*fp) return errno;
  err = MbsDiagnosticsPutComments(*fp, provenance);
  if (!err && (fputs(MbsDiagnosticsHeader, *fp) < 0 || fflush(*fp))) err = errno ? errno : EIO;
  return err;
}

/* Rank 0: rewrites path keeping its comments (the provenance of the runs before), this run's provenance after
   them, the header and the rows of steps <= keep_upto (under a temporary name, then renamed), and reopens it for
   appending. A missing file starts afresh. Returns an errno. */
static int MbsDiagnosticsReopen(const char path[], PetscInt keep_upto, const char provenance[], FILE **fp,
                                PetscInt *last_kept)
{
  char  tmp[PETSC_MAX_PATH_LEN + 8], line[4096];
  FILE *in, *out;
  int   err = 0, header = 0;

  *last_kept = -1;
  in         = fopen(path, "r");
  if (!in) {
    if (errno != ENOENT) return errno;
    return MbsDiagnosticsCreate(path, provenance, fp);
  }
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  out = fopen(tmp, "w");
  if (!out) {
    err = errno;
    fclose(in);
    return err;
  }
  for (int start = 1; !err && fgets(line, sizeof(line), in);) { /* the comments, up to the old header */
    if (start && line[0] != '#') {
      header = 1;
      break;
    }
    if (fputs(line, out) < 0) err = errno ? errno : EIO;
    start = strchr(line, '\n') != NULL; /* a comment longer than line[] comes in several pieces */
  }
  if (!err && fprintf(out, "# continued from step %" PetscInt_FMT " by:\n", keep_upto) < 0) err = errno ? errno : EIO;
  if (!err) err = MbsDiagnosticsPutComments(out, provenance);
  if (!err && fputs(MbsDiagnosticsHeader, out) < 0) err = errno ? errno : EIO;
  if (header) {
    while (!err && fgets(line, sizeof(line), in)) {
      long long    step;
      const size_t n = strlen(line);
      if (!n || line[n - 1] != '\n') break; /* a row cut short (the run was killed as it wrote it) */
      if (sscanf(line, "%lld,", &step) != 1 || step > keep_upto) break;
      if (fputs(line, out) < 0) err = errno ? errno : EIO;
      *last_kept = (PetscInt)step;
    }
  }
  fclose(in);
  if (fclose(out) && !err) err = errno ? errno : EIO;
  if (!err && rename(tmp, path)) err = errno;
  if (err) {
    remove(tmp);
    return err;
  }
  *fp = fopen(path, "a");
  return *fp ? 0 : errno;
}

static PetscErrorCode MbsDiagnosticsFileOpen(MPI_Comm comm, const char directory[], PetscInt keep_upto,
                                             const char provenance[], MbsDiagnosticsFile *file)
{
  MbsDiagnosticsFile f;
  PetscMPIInt        rank;
  int                err = 0;

  PetscFunctionBegin;
  PetscCall(MbsMakeDirectory(comm, directory));
  PetscCall(PetscNew(&f));
  f->comm = comm;
  PetscCall(PetscSNPrintf(f->path, sizeof(f->path), "%s/diagnostics.csv", directory));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  f->last_kept = -1;
  if (rank == 0) {
    if (keep_upto >= 0)
      err = MbsDiagnosticsReopen(f->path, keep_upto, provenance, &f->fp, &f->last_kept);
    else
      err = MbsDiagnosticsCreate(f->path, provenance, &f->fp);
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(&f->last_kept, 1, MPIU_INT, 0, comm));
  if (err) {
    if (f->fp) fclose(f->fp);
    PetscCall(PetscFree(f));
    SETERRQ(comm, PETSC_ERR_FILE_OPEN, "Cannot write '%s/diagnostics.csv': %s", directory, strerror(err));
  }
  *file = f;
  PetscFunctionReturn(0);
}

/* A row is written whole or not at all: it goes out in one write() past the stdio buffer (empty after
   the header), and a write that fails (disk full, I/O error) is cut back to the end of the last whole
   row, so the file stays a valid CSV that a restart can continue. */
static PetscErrorCode MbsDiagnosticsFileWrite(MbsDiagnosticsFile f, PetscInt step, PetscReal t, const MbsDiagnostics *d,
                                              PetscInt newton_its)
{
  int  err    = 0;
  char Gv[32] = ""; /* the scheme's own velocity-level residual, empty for schemes without one */
  char row[512];

  PetscFunctionBegin;
  if (d->has_Gv) PetscCall(PetscSNPrintf(Gv, sizeof(Gv), "%.17g", (double)d->Gv_max));
  if (f->fp) {
    const int   fd  = fileno(f->fp);
    const int   len = snprintf(row, sizeof(row),
                               "%" PetscInt_FMT
                               ",%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%" PetscInt_FMT
                               ",%s,%.17g,%.17g\n",
                               step, (double)t, (double)d->E, (double)d->T, (double)d->V, (double)d->J[0],
                               (double)d->J[1], (double)d->J[2], (double)d->L[0], (double)d->L[1], (double)d->L[2],
                               (double)d->g_max, (double)d->gv_max, newton_its, Gv, (double)d->W, (double)d->D);
    const off_t end = lseek(fd, 0, SEEK_END);

    if (len < 0 || len >= (int)sizeof(row)) err = EOVERFLOW;
    for (size_t done = 0; !err && done < (size_t)len;) {
      const ssize_t n = write(fd, row + done, (size_t)len - done);
      if (n > 0)
        done += (size_t)n;
      else if (n < 0 && errno == EINTR)
        continue;
      else
        err = n < 0 ? errno : ENOSPC;
    }
    if (err && end >= 0 && !ftruncate(fd, end)) (void)lseek(fd, end, SEEK_SET);
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, f->comm));
  PetscCheck(!err, f->comm, PETSC_ERR_FILE_WRITE, "Writing '%s' failed at step %" PetscInt_FMT ": %s", f->path, step,
             strerror(err));
  PetscFunctionReturn(0);
}

static PetscBool MbsDiagnosticsFileHasStep(MbsDiagnosticsFile f, PetscInt step)
{
  return (PetscBool)(f->last_kept == step);
}

static PetscErrorCode MbsDiagnosticsFileClose(MbsDiagnosticsFile *file)
{
  PetscFunctionBegin;
  if (!*file) PetscFunctionReturn(0);
  if ((*file)->fp) fclose((*file)->fp);
  PetscCall(PetscFree(*file));
  PetscFunctionReturn(0);
}

/* The output "csv": diagnostics.csv, written by MbsStepperSolve() (docs/output.md) */
typedef struct {
  MbsDiagnosticsFile file;         /* open between begin and end */
  PetscInt           last_written; /* the step of the last row */
} MbsOutputCSV;

static PetscErrorCode MbsOutputWriteRow_CSV(MbsStepper st, MbsOutputCSV *csv)
{
  MbsDiagnostics d;

  PetscFunctionBegin;
  PetscCall(MbsStepperComputeDiagnostics(st, &d));
  PetscCall(MbsDiagnosticsFileWrite(csv->file, st->step, st->t, &d, st->step ? st->last_its : 0));
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
  PetscCall(MbsDiagnosticsFileOpen(PetscObjectComm((PetscObject)st), st->output_dir, st->step > 0 ? st->step : -1,
                                   provenance, &csv->file));
  if (!MbsDiagnosticsFileHasStep(csv->file, st->step) && st->step % every == 0)
    PetscCall(MbsOutputWriteRow_CSV(st, csv));
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
  PetscCall(MbsDiagnosticsFileClose(&csv->file));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsOutputDestroy_CSV(void **ctx)
{
  MbsOutputCSV *csv = (MbsOutputCSV *)*ctx;

  PetscFunctionBegin;
  if (csv) PetscCall(MbsDiagnosticsFileClose(&csv->file));
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

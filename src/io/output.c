#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include "io/output.h"

struct _n_MbsDiagnosticsFile {
  MPI_Comm comm;
  FILE    *fp; /* rank 0 only */
  char     path[PETSC_MAX_PATH_LEN];
};

/* mkdir -p on rank 0; every rank learns whether it worked. */
PetscErrorCode MbsMakeDirectory(MPI_Comm comm, const char directory[])
{
  PetscMPIInt rank;
  int         err = 0;
  char        path[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    PetscCall(PetscStrncpy(path, directory, sizeof(path)));
    for (char *s = path + 1; *s && !err; s++) {
      if (*s != '/') continue;
      *s = 0;
      if (mkdir(path, 0777) && errno != EEXIST) err = errno;
      *s = '/';
    }
    if (!err && mkdir(path, 0777) && errno != EEXIST) err = errno;
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCheck(!err, comm, PETSC_ERR_FILE_OPEN, "Cannot create output directory '%s': %s", directory, strerror(err));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsDiagnosticsFileOpen(MPI_Comm comm, const char directory[], MbsDiagnosticsFile *file)
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
  if (rank == 0) {
    f->fp = fopen(f->path, "w");
    if (!f->fp || fprintf(f->fp, "step,t,E,T,V,Jx,Jy,Jz,Lx,Ly,Lz,g_max,gv_max,newton_its,Gv_max\n") < 0) err = errno ? errno : EIO;
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  if (err) {
    if (f->fp) fclose(f->fp);
    PetscCall(PetscFree(f));
    SETERRQ(comm, PETSC_ERR_FILE_OPEN, "Cannot write '%s/diagnostics.csv': %s", directory, strerror(err));
  }
  *file = f;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsDiagnosticsFileWrite(MbsDiagnosticsFile f, PetscInt step, PetscReal t, const MbsDiagnostics *d, PetscInt newton_its)
{
  int  err    = 0;
  char Gv[32] = ""; /* the scheme's own velocity-level residual, empty for schemes without one */

  PetscFunctionBegin;
  if (d->has_Gv) PetscCall(PetscSNPrintf(Gv, sizeof(Gv), "%.17g", (double)d->Gv_max));
  if (f->fp) {
    if (fprintf(f->fp, "%" PetscInt_FMT ",%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%" PetscInt_FMT ",%s\n", step, (double)t, (double)d->E, (double)d->T, (double)d->V, (double)d->J[0], (double)d->J[1], (double)d->J[2], (double)d->L[0], (double)d->L[1], (double)d->L[2], (double)d->g_max, (double)d->gv_max, newton_its, Gv) < 0 || fflush(f->fp))
      err = errno ? errno : EIO;
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, f->comm));
  PetscCheck(!err, f->comm, PETSC_ERR_FILE_WRITE, "Writing '%s' failed at step %" PetscInt_FMT ": %s", f->path, step, strerror(err));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsDiagnosticsFileClose(MbsDiagnosticsFile *file)
{
  PetscFunctionBegin;
  if (!*file) PetscFunctionReturn(0);
  if ((*file)->fp) fclose((*file)->fp);
  PetscCall(PetscFree(*file));
  PetscFunctionReturn(0);
}

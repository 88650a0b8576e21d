/* Output files: the per-step diagnostics CSV. Written by rank 0, flushed row by row so that what was
   written stays a valid file if the run stops early. */
#ifndef MBS_OUTPUT_H
#define MBS_OUTPUT_H

#include <gglmbs/stepper.h>

typedef struct _n_MbsDiagnosticsFile *MbsDiagnosticsFile;

/* Creates directory/diagnostics.csv; with keep_upto >= 0 (a restart) the rows of an existing file up to
   and including step keep_upto are kept and new rows appended. */
PETSC_INTERN PetscErrorCode MbsDiagnosticsFileOpen(MPI_Comm, const char directory[], PetscInt keep_upto,
                                                   MbsDiagnosticsFile *);
/* Whether the kept rows of a reopened file include this step (the same on every rank). */
PETSC_INTERN PetscBool      MbsDiagnosticsFileHasStep(MbsDiagnosticsFile, PetscInt step);
PETSC_INTERN PetscErrorCode MbsDiagnosticsFileWrite(MbsDiagnosticsFile, PetscInt step, PetscReal t,
                                                    const MbsDiagnostics *, PetscInt newton_its);
PETSC_INTERN PetscErrorCode MbsDiagnosticsFileClose(MbsDiagnosticsFile *);
PETSC_INTERN PetscErrorCode MbsMakeDirectory(MPI_Comm, const char directory[]);

#endif

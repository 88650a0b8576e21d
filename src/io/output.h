/* Output files: the per-step diagnostics CSV. Written by rank 0, flushed row by row so that what was
   written stays a valid file if the run stops early. */
#ifndef MBS_OUTPUT_H
#define MBS_OUTPUT_H

#include <gglmbs/stepper.h>

typedef struct _n_MbsDiagnosticsFile *MbsDiagnosticsFile;

PETSC_INTERN PetscErrorCode MbsDiagnosticsFileOpen(MPI_Comm, const char directory[], MbsDiagnosticsFile *);
PETSC_INTERN PetscErrorCode MbsDiagnosticsFileWrite(MbsDiagnosticsFile, PetscInt step, PetscReal t, const MbsDiagnostics *, PetscInt newton_its);
PETSC_INTERN PetscErrorCode MbsDiagnosticsFileClose(MbsDiagnosticsFile *);
PETSC_INTERN PetscErrorCode MbsMakeDirectory(MPI_Comm, const char directory[]);

#endif

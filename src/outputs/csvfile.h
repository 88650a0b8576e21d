/* Step-indexed CSV files for the outputs: rank 0 writes, the provenance as "# " comment lines, then the header, then
   one row per written step whose first column is the step. A run that continues from a step keeps the rows up to it
   (MbsCSVFileOpen() with keep_upto >= 0). Private to src/outputs. */
#ifndef MBS_OUTPUTS_CSVFILE_H
#define MBS_OUTPUTS_CSVFILE_H

#include "stepper/stepperimpl.h"

typedef struct _n_MbsCSVFile *MbsCSVFile;

/* directory/name; keep_upto < 0: a new file */
PETSC_INTERN PetscErrorCode MbsCSVFileOpen(MPI_Comm, const char directory[], const char name[], const char header[],
                                           PetscInt keep_upto, const char provenance[], MbsCSVFile *);
/* One row (its text, ended by a newline, from rank 0) written whole or not at all; collective */
PETSC_INTERN PetscErrorCode MbsCSVFileWriteRow(MbsCSVFile, PetscInt step, const char row[]);
/* The file kept a row of this step from an earlier run */
PETSC_INTERN PetscBool      MbsCSVFileHasStep(MbsCSVFile, PetscInt step);
PETSC_INTERN PetscErrorCode MbsCSVFileClose(MbsCSVFile *);

#endif

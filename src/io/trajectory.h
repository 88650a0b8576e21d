/* Trajectory output for visualization: XDMF (XML, light data) + HDF5 (heavy data, PETSc's HDF5 viewer);
   docs/output.md describes the files. */
#ifndef MBS_TRAJECTORY_H
#define MBS_TRAJECTORY_H

#include <gglmbs/stepper.h>

typedef struct _n_MbsTrajectory *MbsTrajectory;

/* Opens the writer for the stepper's output directory; format is "xdmf" ("none": no writer, NULL); writes
   every `every` steps (and the last step of MbsStepperSolve()). A restarted run (step > 0) appends. */
PETSC_INTERN PetscErrorCode MbsTrajectoryCreate(MbsStepper, const char format[], PetscInt every, MbsTrajectory *);
/* Writes the current state if its step is due (force: always). Collective. */
PETSC_INTERN PetscErrorCode MbsTrajectoryWrite(MbsTrajectory, MbsStepper, PetscBool force);
/* Finishes the files and frees the writer. Collective. */
PETSC_INTERN PetscErrorCode MbsTrajectoryDestroy(MbsTrajectory *);

#endif

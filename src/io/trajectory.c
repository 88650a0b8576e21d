/* Placeholder: the XDMF + HDF5 writer (issue 5). */
#include "io/trajectory.h"

PetscErrorCode MbsTrajectoryCreate(MbsStepper st, const char format[], PetscInt every, MbsTrajectory *traj)
{
  MPI_Comm comm;
  MbsModel model;

  PetscFunctionBegin;
  PetscCall(MbsStepperGetModel(st, &model));
  PetscCall(MbsModelGetComm(model, &comm));
  SETERRQ(comm, PETSC_ERR_SUP, "Trajectory output is not built yet");
}

PetscErrorCode MbsTrajectoryWrite(MbsTrajectory traj, MbsStepper st, PetscBool force)
{
  PetscFunctionBegin;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsTrajectoryDestroy(MbsTrajectory *traj)
{
  PetscFunctionBegin;
  PetscFunctionReturn(0);
}

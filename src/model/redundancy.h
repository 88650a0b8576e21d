/* Redundant (linearly dependent) constraints: which elements make G(q) rank deficient. */
#ifndef MBS_REDUNDANCY_H
#define MBS_REDUNDANCY_H

#include "model/modelimpl.h"

/*
  Collective. Looks for linearly dependent rows of the constraint Jacobian G(q) at the coordinates q
  (coordinate layout Vec). On return *ndependent is the number of independent dependencies found (0: G
  has full row rank), and msg (every rank gets the same text) names the elements involved and what to
  do about it; msg is "" when *ndependent is 0.
*/
PETSC_INTERN PetscErrorCode MbsModelFindRedundantConstraints(MbsModel model, Vec q, PetscInt *ndependent, char msg[], size_t len);

#endif

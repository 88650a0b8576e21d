/* Redundant (linearly dependent) constraints: which elements make G(q) rank deficient. */
#ifndef MBS_REDUNDANCY_H
#define MBS_REDUNDANCY_H

#include <petscksp.h>
#include "model/modelimpl.h"

/* Default null-pivot threshold on G M^-1 G^T scaled to unit diagonal (-mbs_redundancy_tol) */
#define MBS_REDUNDANCY_TOL 1e-10
/* At most this many dependencies are resolved into their elements (the count is always exact) */
#define MBS_REDUNDANCY_MAX_REPORTED 16

/*
  Collective. Looks for linearly dependent rows of the constraint Jacobian G(q) at the coordinates q
  (coordinate layout Vec). On return *ndependent is the number of independent dependencies found (0: G
  has full row rank), and msg (every rank gets the same text) names the elements involved and what to
  do about it; msg is "" when *ndependent is 0. The threshold is -mbs_redundancy_tol (default
  MBS_REDUNDANCY_TOL).
*/
/* Collective: an error (PETSC_ERR_USER_INPUT, naming the element) if a velocity constraint is implied by the other
   constraints of its rigid body at the initial state (MbsModelSetUp()) */
PETSC_INTERN PetscErrorCode MbsModelCheckVelocityConstraints(MbsModel model);

PETSC_INTERN PetscErrorCode MbsModelFindRedundantConstraints(MbsModel model, Vec q, PetscInt *ndependent, char msg[],
                                                             size_t len);

/*
  Collective. The same search with an explicit threshold tol, returning the elements: *ndependent =
  m - rank G(q); the first *nreported (<= MBS_REDUNDANCY_MAX_REPORTED) dependencies, each as the sorted
  element indices elems[offset[i] .. offset[i+1]-1] of the elements whose constraint rows take part in it
  (a sparse basis of the null space of G^T: independent dependencies come out separately). offset and
  elems are allocated (PetscFree() both; NULL when nothing is reported) and the same on every rank.
*/
PETSC_INTERN PetscErrorCode MbsModelGetRedundantConstraints(MbsModel model, Vec q, PetscReal tol, PetscInt *ndependent,
                                                            PetscInt *nreported, PetscInt **offset, PetscInt **elems);

/* At most this many dependent rows are eliminated (MbsModelGetDependentRows()) */
#define MBS_REDUNDANCY_MAX_ELIMINATED 1024

/*
  Collective. The rows to eliminate so that the remaining rows of G(q) are independent: *ndependent =
  m - rank G(q) global constraint rows (sorted, allocated, the same on every rank; PetscFree()), one pivot
  of each dependency of a sparse null-space basis of G^T (complete pivoting: the row that takes the largest
  part in it), rows of joints and rods before the internal constraints of rigid bodies. tol as in
  MbsModelGetRedundantConstraints(). An error if G(q) is not finite or more than
  MBS_REDUNDANCY_MAX_ELIMINATED rows depend on the others.
*/
PETSC_INTERN PetscErrorCode MbsModelGetDependentRows(MbsModel model, Vec q, PetscReal tol, PetscInt *ndependent,
                                                     PetscInt **rows);

/* Collective. MbsModelSetUp() with -mbs_check_redundancy: an error naming the elements if the constraints
   are redundant at the initial state. */
PETSC_INTERN PetscErrorCode MbsModelCheckRedundancy(MbsModel model);

#endif

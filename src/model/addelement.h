/* Internal to the library: an element added with the refusal of its type's complete() returned, for the input reader
   to say where in the file the element is. */
#ifndef MBS_ADDELEMENT_H
#define MBS_ADDELEMENT_H

#include <gglmbs/elements.h>

/* MbsModelAddElement(), but what the type's complete() refuses (a drive that does not start at the initial state, an
   axis of zero length) comes back in error (empty: added), with no element added (in the local pass of a construction
   in two passes, MbsModelPartition(), the element is added, *elem is its index, and only the ranks that store it can
   find the error); other errors raise as usual */
PETSC_INTERN PetscErrorCode MbsModelAddElement_Private(MbsModel, const MbsElementType *, PetscInt a, PetscInt b,
                                                       const MbsElemData *, PetscInt *elem, char error[], size_t len);

/* An error about element e (its index) that only the ranks holding its data can find: raised at once when the model is
   built whole, else kept, the first by element index, for MbsModelRaiseDeferred_Private(). Not collective. */
PETSC_INTERN PetscErrorCode MbsModelElementError_Private(MbsModel, PetscInt e, PetscErrorCode code, const char msg[]);
/* Raises the first kept error on every rank (MbsModelSetUp() does too). Collective. */
PETSC_INTERN PetscErrorCode MbsModelRaiseDeferred_Private(MbsModel);

#endif

/* Internal to the library: an element added with the refusal of its type's complete() returned, for the input reader
   to say where in the file the element is. */
#ifndef MBS_ADDELEMENT_H
#define MBS_ADDELEMENT_H

#include <gglmbs/elements.h>

/* MbsModelAddElement(), but what the type's complete() refuses (a drive that does not start at the initial state, an
   axis of zero length) comes back in error (empty: added), with no element added; other errors raise as usual */
PETSC_INTERN PetscErrorCode MbsModelAddElement_Private(MbsModel, const MbsElementType *, PetscInt a, PetscInt b,
                                                       const MbsElemData *, PetscInt *elem, char error[], size_t len);

#endif

/* The model's element-type interface: the registry of element types (src/elements/element.h) and adding an
   element of a registered type. Used by the model, the input readers and element authors. */
#ifndef MBS_ELEMENTTYPES_H
#define MBS_ELEMENTTYPES_H

#include <gglmbs/model.h>
#include "elements/element.h"

/* Element types (src/elements/element.h): registered by name per input section */
PETSC_INTERN PetscErrorCode MbsElementTypeRegister(const MbsElementType *);
PETSC_INTERN PetscErrorCode MbsElementTypeGetAll(PetscInt *n, const MbsElementType *const **types);
PETSC_INTERN PetscErrorCode MbsElementTypeFind(const char section[], const char name[], const MbsElementType **);
PETSC_INTERN PetscErrorCode MbsElementTypeNames(const char section[], const char separator[], const char last[],
                                                char names[], size_t len);
/* Adds an element of a registered type: data holds its points and parameters (reals left at MBS_ELEM_UNSET take
   their defaults); the type completes it from the initial configuration. */
PETSC_INTERN PetscErrorCode MbsModelAddElement(MbsModel, const MbsElementType *, PetscInt a, PetscInt b,
                                               const MbsElemData *data, PetscInt *elem);

#endif

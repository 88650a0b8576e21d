/* gglmbs public API for authors of element types: the kernel and type structures, the registry, and adding an
   element of a registered type to a model. docs/architecture.md says what an element type declares;
   examples/custom_element.c registers one from a program built against the installed library. */
#ifndef GGLMBS_ELEMENTS_H
#define GGLMBS_ELEMENTS_H

#include <gglmbs/model.h>
#include <gglmbs/elements/element.h>
#include <gglmbs/elements/vec3.h>

/* Element types (gglmbs/elements/element.h): registered by name per input section */
PETSC_EXTERN PetscErrorCode MbsElementTypeRegister(const MbsElementType *);
PETSC_EXTERN PetscErrorCode MbsElementTypeGetAll(PetscInt *n, const MbsElementType *const **types);
PETSC_EXTERN PetscErrorCode MbsElementTypeFind(const char section[], const char name[], const MbsElementType **);
PETSC_EXTERN PetscErrorCode MbsElementTypeNames(const char section[], const char separator[], const char last[],
                                                char names[], size_t len);
/* Adds an element of a registered type: data holds its points and parameters (reals left at MBS_ELEM_UNSET take
   their defaults); the type completes it from the initial configuration. */
PETSC_EXTERN PetscErrorCode MbsModelAddElement(MbsModel, const MbsElementType *, PetscInt a, PetscInt b,
                                               const MbsElemData *data, PetscInt *elem);

#endif

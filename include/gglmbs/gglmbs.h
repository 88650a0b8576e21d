/* gglmbs: sparse, large-scale flexible multibody dynamics with structure-preserving integrators. */
#ifndef GGLMBS_H
#define GGLMBS_H

#include <gglmbs/model.h>
#include <gglmbs/stepper.h>
#include <gglmbs/io.h>

/* The library's version, "MAJOR.MINOR.PATCH" (MbsGetVersion()) */
PETSC_EXTERN PetscErrorCode MbsGetVersion(char version[], size_t len);

#endif

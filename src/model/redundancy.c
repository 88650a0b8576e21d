#include "model/redundancy.h"

PetscErrorCode MbsModelFindRedundantConstraints(MbsModel model, Vec q, PetscInt *ndependent, char msg[], size_t len)
{
  PetscFunctionBegin;
  *ndependent = 0;
  if (len) msg[0] = 0;
  PetscFunctionReturn(0);
}

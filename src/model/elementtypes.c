/* The registry of element types, and the built-in ones: a new element type is its file in src/elements/ and two
   lines here (its declaration and its registration). */
#include "model/modelimpl.h"

static const MbsElementType **MbsElementTypes    = NULL;
static PetscInt               MbsNumElementTypes = 0, MbsMaxElementTypes = 0;

/* The built-in element types (src/elements/), in the order the input's messages list them */
extern const MbsElementType MbsElementTypeFixedPoint, MbsElementTypeSpherical, MbsElementTypeRod,
  MbsElementTypeRevolute, MbsElementTypeSpringLinear, MbsElementTypeSpringQuartic, MbsElementTypePrismatic,
  MbsElementTypeCylindrical, MbsElementTypeUniversal, MbsElementTypeWeld, MbsElementTypePointOnLine,
  MbsElementTypePointOnPlane, MbsElementTypeDamper, MbsElementTypePointLoad, MbsElementTypeTorqueLoad,
  MbsElementTypeJointTorque, MbsElementTypeTorsionalDamper, MbsElementTypeTorsionalSpring, MbsElementTypeAngleDrive,
  MbsElementTypeSlideDrive, MbsElementTypePositionDrive, MbsElementTypeJointForce, MbsElementTypeBeam,
  MbsElementTypePlanar, MbsElementTypePerpendicular, MbsElementTypeKnifeEdge, MbsElementTypeRolling;

PetscErrorCode MbsElementTypeRegisterAll(void)
{
  PetscFunctionBegin;
  PetscCall(MbsElementTypeRegister(&MbsElementTypeFixedPoint));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeSpherical));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeRod));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeRevolute));
  PetscCall(MbsElementTypeRegister(&MbsElementTypePrismatic));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeCylindrical));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeUniversal));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeWeld));
  PetscCall(MbsElementTypeRegister(&MbsElementTypePointOnLine));
  PetscCall(MbsElementTypeRegister(&MbsElementTypePointOnPlane));
  PetscCall(MbsElementTypeRegister(&MbsElementTypePlanar));
  PetscCall(MbsElementTypeRegister(&MbsElementTypePerpendicular));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeKnifeEdge));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeRolling));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeSpringLinear));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeSpringQuartic));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeDamper));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeTorsionalSpring));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeBeam));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeTorsionalDamper));
  PetscCall(MbsElementTypeRegister(&MbsElementTypePointLoad));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeTorqueLoad));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeJointTorque));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeJointForce));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeAngleDrive));
  PetscCall(MbsElementTypeRegister(&MbsElementTypeSlideDrive));
  PetscCall(MbsElementTypeRegister(&MbsElementTypePositionDrive));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsElementTypeRegistryDestroy_Private(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(MbsElementTypes));
  MbsNumElementTypes = MbsMaxElementTypes = 0;
  PetscFunctionReturn(0);
}

/*@C
  MbsElementTypeRegister - Adds an element type (gglmbs/elements/element.h): the input reader, MbsModelAddElement(),
  checkpoints and the trajectory then know it. A type of the same section and name replaces the old one.

  Not Collective

  Input Parameter:
. type - the type, kept by reference (a static constant, usually)

  Level: advanced

.seealso: `MbsModelAddElement()`, `MbsElementTypeFind()`, docs/architecture.md
@*/
PetscErrorCode MbsElementTypeRegister(const MbsElementType *type)
{
  PetscFunctionBegin;
  PetscCheck(type && type->name && type->section && type->kernel && type->nparams <= MBS_ELEM_MAX_PARAMS,
             PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "An element type needs a name, a section and a kernel");
  for (PetscInt p = 0; p < type->nparams; p++)
    PetscCheck(type->params[p].range >= MBS_ELEM_RANGE_POSITIVE && type->params[p].range <= MBS_ELEM_RANGE_FINITE,
               PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "Element type %s: parameter '%s' has an unknown range %d",
               type->name, type->params[p].key ? type->params[p].key : "(no key)", (int)type->params[p].range);
  for (PetscInt i = 0; i < MbsNumElementTypes; i++) {
    if (!strcmp(MbsElementTypes[i]->section, type->section) && !strcmp(MbsElementTypes[i]->name, type->name)) {
      MbsElementTypes[i] = type;
      PetscFunctionReturn(0);
    }
  }
  if (MbsNumElementTypes == MbsMaxElementTypes) {
    MbsMaxElementTypes = PetscMax(16, 2 * MbsMaxElementTypes);
    PetscCall(PetscRealloc(sizeof(*MbsElementTypes) * MbsMaxElementTypes, &MbsElementTypes));
  }
  MbsElementTypes[MbsNumElementTypes++] = type;
  PetscFunctionReturn(0);
}

/*@C
  MbsElementTypeGetAll - Every registered element type, in registration order (borrowed).

  Not Collective

  Level: advanced

.seealso: `MbsElementTypeRegister()`
@*/
PetscErrorCode MbsElementTypeGetAll(PetscInt *n, const MbsElementType *const **types)
{
  PetscFunctionBegin;
  PetscCall(MbsModelInitializePackage());
  *n     = MbsNumElementTypes;
  *types = MbsElementTypes;
  PetscFunctionReturn(0);
}

/*@C
  MbsElementTypeFind - The element type of that name in that input section ("joints", "springs"), or NULL.

  Not Collective

  Level: advanced

.seealso: `MbsElementTypeRegister()`
@*/
PetscErrorCode MbsElementTypeFind(const char section[], const char name[], const MbsElementType **type)
{
  PetscFunctionBegin;
  PetscCall(MbsModelInitializePackage());
  *type = NULL;
  for (PetscInt i = 0; i < MbsNumElementTypes; i++)
    if (!strcmp(MbsElementTypes[i]->section, section) && !strcmp(MbsElementTypes[i]->name, name))
      *type = MbsElementTypes[i];
  PetscFunctionReturn(0);
}

/*@C
  MbsElementTypeNames - The names of a section's element types, for messages: "fixed_point, spherical, rod or
  revolute" with separator ", " and last " or ".

  Not Collective

  Level: developer

.seealso: `MbsElementTypeFind()`
@*/
PetscErrorCode MbsElementTypeNames(const char section[], const char separator[], const char last[], char names[],
                                   size_t len)
{
  PetscInt n = 0, k = 0;

  PetscFunctionBegin;
  PetscCall(MbsModelInitializePackage());
  names[0] = 0;
  for (PetscInt i = 0; i < MbsNumElementTypes; i++) n += !strcmp(MbsElementTypes[i]->section, section);
  for (PetscInt i = 0; i < MbsNumElementTypes; i++) {
    if (strcmp(MbsElementTypes[i]->section, section)) continue;
    if (k) PetscCall(PetscStrlcat(names, k == n - 1 ? last : separator, len));
    PetscCall(PetscStrlcat(names, MbsElementTypes[i]->name, len));
    k++;
  }
  PetscFunctionReturn(0);
}

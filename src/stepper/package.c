/* The package: class ids, log events, the scheme registry and the schemes' declared parameters. */
#include "stepper/stepperimpl.h"

/* The built-in schemes (src/schemes/; each registers itself and its parameters) and outputs (src/outputs/, and the
   checkpoint in checkpoint.c): a new one is its file and two lines here. */
PETSC_INTERN PetscErrorCode MbsSchemeRegister_EM(void);
PETSC_INTERN PetscErrorCode MbsSchemeRegister_EMG(void);
PETSC_INTERN PetscErrorCode MbsSchemeRegister_VIS(void);
PETSC_INTERN PetscErrorCode MbsSchemeRegister_VIA(void);
PETSC_INTERN PetscErrorCode MbsSchemeRegister_VIB(void);
PETSC_INTERN PetscErrorCode MbsSchemeRegister_RATTLE(void);
PETSC_INTERN PetscErrorCode MbsSchemeRegister_Galerkin(void);
PETSC_INTERN PetscErrorCode MbsSchemeRegister_Static(void);
PETSC_INTERN PetscErrorCode MbsSchemeRegister_DLA(void);
PETSC_INTERN PetscErrorCode MbsSchemeRegister_DH(void);
PETSC_INTERN PetscErrorCode MbsOutputCreate_CSV(MbsStepper, MbsOutputOps *, void **);
PETSC_INTERN PetscErrorCode MbsOutputCreate_XDMF(MbsStepper, MbsOutputOps *, void **);
PETSC_INTERN PetscErrorCode MbsOutputCreate_Checkpoint(MbsStepper, MbsOutputOps *, void **);
PETSC_INTERN PetscErrorCode MbsOutputCreate_Reactions(MbsStepper, MbsOutputOps *, void **);

PetscFunctionList MbsOutputFunctions    = NULL;
PetscFunctionList MbsSchemeFunctions    = NULL;
static PetscBool  MbsPackageInitialized = PETSC_FALSE;
PetscLogEvent     MBS_Residual, MBS_Jacobian, MBS_Step, MBS_Diagnostics, MBS_InterfaceSchur, MBS_SchurSetUp;
PetscClassId      MBS_STEPPER_CLASSID;

static const char *const MbsStepReasons_Shifted[] = {"INTERRUPTED", "DIVERGED_ENERGY", "DIVERGED_NONLINEAR_SOLVE",
                                                     "ITERATING", "CONVERGED"};
const char *const       *MbsStepReasons           = MbsStepReasons_Shifted + 3;

MbsSchemeParameter **MbsSchemeParameters    = NULL;
PetscInt             MbsNumSchemeParameters = 0;
static PetscInt      MbsMaxSchemeParameters = 0;

static PetscErrorCode MbsFinalizePackage(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListDestroy(&MbsSchemeFunctions));
  PetscCall(PetscFunctionListDestroy(&MbsOutputFunctions));
  for (PetscInt i = 0; i < MbsNumSchemeParameters; i++) PetscCall(PetscFree(MbsSchemeParameters[i]));
  PetscCall(PetscFree(MbsSchemeParameters));
  MbsNumSchemeParameters = MbsMaxSchemeParameters = 0;
  MbsPackageInitialized                           = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperInitializePackage - Registers the stepper class, its log events and the built-in schemes; called
  by the first MbsStepperCreate() or MbsSchemeRegister(), and by a host that registers its own schemes first.

  Not Collective

  Level: developer
@*/
PetscErrorCode MbsStepperInitializePackage(void)
{
  PetscFunctionBegin;
  if (MbsPackageInitialized) PetscFunctionReturn(0);
  MbsPackageInitialized = PETSC_TRUE;
  PetscCall(PetscClassIdRegister("Multibody stepper", &MBS_STEPPER_CLASSID));
  PetscCall(PetscLogEventRegister("MbsStep", MBS_STEPPER_CLASSID, &MBS_Step));
  PetscCall(PetscLogEventRegister("MbsResidual", MBS_STEPPER_CLASSID, &MBS_Residual));
  PetscCall(PetscLogEventRegister("MbsJacobian", MBS_STEPPER_CLASSID, &MBS_Jacobian));
  PetscCall(PetscLogEventRegister("MbsDiagnostics", MBS_STEPPER_CLASSID, &MBS_Diagnostics));
  /* the interface LU's set-up: each rank's interior factored, S formed, summed over the ranks and factored */
  PetscCall(PetscLogEventRegister("MbsInterfaceS", MBS_STEPPER_CLASSID, &MBS_InterfaceSchur));
  /* the Schur-AMG preconditioner's set-up: blocks copied out, G M^-1 G^T formed, C_h fitted, AMG set up */
  PetscCall(PetscLogEventRegister("MbsSchurSetUp", MBS_STEPPER_CLASSID, &MBS_SchurSetUp));
  /* each scheme registers itself and its parameters (src/schemes/) */
  PetscCall(MbsSchemeRegister_EM());
  PetscCall(MbsSchemeRegister_EMG());
  PetscCall(MbsSchemeRegister_VIS());
  PetscCall(MbsSchemeRegister_VIA());
  PetscCall(MbsSchemeRegister_VIB());
  PetscCall(MbsSchemeRegister_RATTLE());
  PetscCall(MbsSchemeRegister_Galerkin());
  PetscCall(MbsSchemeRegister_Static());
  PetscCall(MbsSchemeRegister_DLA());
  PetscCall(MbsSchemeRegister_DH());
  PetscCall(PetscFunctionListAdd(&MbsOutputFunctions, MBSOUTPUTCSV, MbsOutputCreate_CSV));
  PetscCall(PetscFunctionListAdd(&MbsOutputFunctions, MBSOUTPUTXDMF, MbsOutputCreate_XDMF));
  PetscCall(PetscFunctionListAdd(&MbsOutputFunctions, MBSOUTPUTCHECKPOINT, MbsOutputCreate_Checkpoint));
  PetscCall(PetscFunctionListAdd(&MbsOutputFunctions, MBSOUTPUTREACTIONS, MbsOutputCreate_Reactions));
  PetscCall(PetscRegisterFinalize(MbsFinalizePackage));
  PetscFunctionReturn(0);
}

/*@C
  MbsSchemeRegister - Adds a time-stepping scheme, selectable with MbsStepperSetType() or -mbs_scheme.

  Not Collective

  Input Parameters:
+ name - the scheme's name
- create - routine that fills the stepper's scheme operations

  Level: advanced
@*/
PetscErrorCode MbsSchemeRegister(const char name[], PetscErrorCode (*create)(MbsStepper))
{
  PetscFunctionBegin;
  PetscCall(MbsStepperInitializePackage());
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, name, create));
  PetscFunctionReturn(0);
}

/*@C
  MbsSchemeRegisterParameter - Declares a real parameter of a scheme, settable with
  MbsStepperSetSchemeParameter(), the option -mbs_<name> and the input file (scheme: {type: ..., name: value}).

  Not Collective

  Input Parameters:
+ scheme - the scheme's name
. name - the parameter's name
. def - its default
. lo, lo_open - lower bound, and whether lo itself is excluded
. hi, hi_open - upper bound, and whether hi itself is excluded
- help - one line for -help

  Level: advanced
@*/
PetscErrorCode MbsSchemeRegisterParameter(const char scheme[], const char name[], PetscReal def, PetscReal lo,
                                          PetscBool lo_open, PetscReal hi, PetscBool hi_open, const char help[])
{
  const MbsSchemeParameter *old;
  MbsSchemeParameter       *prm;

  PetscFunctionBegin;
  PetscCall(MbsStepperInitializePackage());
  PetscCall(MbsSchemeGetParameter(scheme, name, &old));
  if (old)
    prm = (MbsSchemeParameter *)old;
  else {
    if (MbsNumSchemeParameters == MbsMaxSchemeParameters) {
      MbsMaxSchemeParameters = PetscMax(8, 2 * MbsMaxSchemeParameters);
      PetscCall(PetscRealloc(sizeof(*MbsSchemeParameters) * MbsMaxSchemeParameters, &MbsSchemeParameters));
    }
    PetscCall(PetscNew(&prm));
    MbsSchemeParameters[MbsNumSchemeParameters++] = prm;
  }
  PetscCheck(strlen(name) < sizeof(prm->name) && strlen(scheme) < sizeof(prm->scheme), PETSC_COMM_SELF,
             PETSC_ERR_ARG_SIZ, "Scheme or parameter name too long");
  PetscCall(PetscStrncpy(prm->scheme, scheme, sizeof(prm->scheme)));
  PetscCall(PetscStrncpy(prm->name, name, sizeof(prm->name)));
  PetscCall(PetscStrncpy(prm->help, help ? help : "", sizeof(prm->help)));
  prm->def     = def;
  prm->lo      = lo;
  prm->hi      = hi;
  prm->lo_open = lo_open;
  prm->hi_open = hi_open;
  PetscFunctionReturn(0);
}

/*@C
  MbsSchemeRegisterIntegerParameter - Declares a parameter of a scheme that takes integer values (e.g. the number of
  points of a Galerkin scheme), as MbsSchemeRegisterParameter() does a real one: a value that is not an integer is
  out of its range.

  Not Collective

  Input Parameters:
+ scheme - the scheme's name
. name - the parameter's name
. def - its default
. lo, hi - its bounds (both included)
- help - one line for -help

  Level: advanced

.seealso: `MbsSchemeRegisterParameter()`, `MbsSchemeCheckParameter()`
@*/
PetscErrorCode MbsSchemeRegisterIntegerParameter(const char scheme[], const char name[], PetscInt def, PetscInt lo,
                                                 PetscInt hi, const char help[])
{
  const MbsSchemeParameter *prm;

  PetscFunctionBegin;
  PetscCall(MbsSchemeRegisterParameter(scheme, name, (PetscReal)def, (PetscReal)lo, PETSC_FALSE, (PetscReal)hi,
                                       PETSC_FALSE, help));
  PetscCall(MbsSchemeGetParameter(scheme, name, &prm));
  ((MbsSchemeParameter *)prm)->integer = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@C
  MbsSchemeGetParameter - Finds a scheme's parameter by name; NULL if the scheme has no such parameter.

  Not Collective
@*/
PetscErrorCode MbsSchemeGetParameter(const char scheme[], const char name[], const MbsSchemeParameter **param)
{
  PetscFunctionBegin;
  PetscCall(MbsStepperInitializePackage());
  *param = NULL;
  for (PetscInt i = 0; i < MbsNumSchemeParameters; i++) {
    PetscBool s, n;
    PetscCall(PetscStrcmp(MbsSchemeParameters[i]->scheme, scheme, &s));
    PetscCall(PetscStrcmp(MbsSchemeParameters[i]->name, name, &n));
    if (s && n) *param = MbsSchemeParameters[i];
  }
  PetscFunctionReturn(0);
}

/*@C
  MbsSchemeGetParameterNames - "theta, vartheta" (or "none") for error messages.

  Not Collective
@*/
PetscErrorCode MbsSchemeGetParameterNames(const char scheme[], char names[], size_t len)
{
  PetscInt k = 0;

  PetscFunctionBegin;
  PetscCall(MbsStepperInitializePackage());
  names[0] = 0;
  for (PetscInt i = 0; i < MbsNumSchemeParameters; i++) {
    PetscBool s;
    PetscCall(PetscStrcmp(MbsSchemeParameters[i]->scheme, scheme, &s));
    if (!s) continue;
    if (k++) PetscCall(PetscStrlcat(names, ", ", len));
    PetscCall(PetscStrlcat(names, MbsSchemeParameters[i]->name, len));
  }
  if (!k) PetscCall(PetscStrncpy(names, "none", len));
  PetscFunctionReturn(0);
}

/*@C
  MbsSchemeCheckParameter - Whether a value is admissible for a parameter; if not, `expected` describes
  the range ("a real in (0, 1) for theta of scheme vi-a").

  Not Collective
@*/
PetscErrorCode MbsSchemeCheckParameter(const MbsSchemeParameter *prm, PetscReal value, PetscBool *ok, char expected[],
                                       size_t len)
{
  PetscFunctionBegin;
  *ok = (PetscIsNormalReal(value) || value == 0) && (prm->lo_open ? value > prm->lo : value >= prm->lo) &&
            (prm->hi_open ? value < prm->hi : value <= prm->hi) && (!prm->integer || value == PetscFloorReal(value))
          ? PETSC_TRUE
          : PETSC_FALSE;
  if (expected && len)
    snprintf(expected, len, "%s in %s%g, %g%s for %s of scheme %s", prm->integer ? "an integer" : "a real",
             prm->lo_open ? "(" : "[", (double)prm->lo, (double)prm->hi, prm->hi_open ? ")" : "]", prm->name,
             prm->scheme);
  PetscFunctionReturn(0);
}

/*@C
  MbsSchemeList - Prints the registered schemes.

  Collective
@*/
PetscErrorCode MbsSchemeList(MPI_Comm comm, PetscViewer viewer)
{
  PetscFunctionBegin;
  PetscCall(MbsStepperInitializePackage());
  PetscCall(PetscFunctionListView(MbsSchemeFunctions, viewer ? viewer : PETSC_VIEWER_STDOUT_(comm)));
  PetscFunctionReturn(0);
}

/*@C
  MbsSchemeIsRegistered - Tells whether a scheme name is registered.

  Not Collective

  Input Parameters:
+ name - the scheme name
- len - size of names

  Output Parameters:
+ registered - whether it is registered
- names - "one of: em, ..." listing the registered schemes (may be NULL)

  Level: intermediate
@*/
PetscErrorCode MbsSchemeIsRegistered(const char name[], PetscBool *registered, char names[], size_t len)
{
  PetscErrorCode (*create)(MbsStepper);

  PetscFunctionBegin;
  PetscCall(MbsStepperInitializePackage());
  PetscCall(PetscFunctionListFind(MbsSchemeFunctions, name, &create));
  *registered = create ? PETSC_TRUE : PETSC_FALSE;
  if (names && len) {
    const char **list;
    int          n;
    PetscCall(PetscFunctionListGet(MbsSchemeFunctions, &list, &n));
    PetscCall(PetscStrncpy(names, "a registered scheme, one of:", len));
    for (int i = 0, k = 0; i < n; i++) {
      if (!list[i] || !list[i][0]) continue;
      PetscCall(PetscStrlcat(names, k++ ? ", " : " ", len));
      PetscCall(PetscStrlcat(names, list[i], len));
    }
    PetscCall(PetscFree(list));
  }
  PetscFunctionReturn(0);
}

/*@C
  MbsGetVersion - The version of the gglmbs library, "MAJOR.MINOR.PATCH", and the PETSc version it was built
  with, e.g. "0.1.0 (PETSc 3.18.5)".

  Not Collective

  Input Parameter:
. len - the size of version

  Output Parameter:
. version - the text

  Note:
  The program prints it with `gglmbs --version`.

  Level: beginner
@*/
PetscErrorCode MbsGetVersion(char version[], size_t len)
{
  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(version, len, "%s (PETSc %d.%d.%d)", GGLMBS_VERSION, PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR,
                          PETSC_VERSION_SUBMINOR));
  PetscFunctionReturn(0);
}

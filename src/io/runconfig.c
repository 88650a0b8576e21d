/* Run settings of an input file (time, scheme, output) and their application to a stepper. */
#include <gglmbs/io.h>

/*@C
  MbsRunConfigSetDefaults - Fills a run configuration with the defaults of an input file that omits the optional keys

  Not Collective

  Output Parameter:
. cfg - dt = t_end = 0 (unset: 'time' is required in an input), scheme "em" with no parameters given (the scheme's
        defaults apply), output directory "output", output every step, no trajectory format ("")

  Level: beginner

.seealso: `MbsModelLoadYAML()`
@*/
PetscErrorCode MbsRunConfigSetDefaults(MbsRunConfig *cfg)
{
  PetscFunctionBegin;
  PetscCheck(cfg, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Null MbsRunConfig");
  PetscCall(PetscMemzero(cfg, sizeof(*cfg)));
  cfg->dt    = 0.0;
  cfg->t_end = 0.0;
  PetscCall(PetscStrncpy(cfg->scheme, MBSSCHEMEEM, sizeof(cfg->scheme)));
  cfg->nparams = 0;
  PetscCall(PetscStrncpy(cfg->output_dir, "output", sizeof(cfg->output_dir)));
  cfg->output_every = 1;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetRunConfig - Applies the run settings of an input file to a stepper: scheme and its parameters,
  step size, final time, output directory and frequency, trajectory format.

  Collective

  Input Parameters:
+ st - the stepper
- cfg - the settings (MbsModelLoadYAML())

  Notes:
  Call it before MbsStepperSetFromOptions(), so that the options database overrides the file, as the
  gglmbs program does.

  Level: beginner

.seealso: `MbsModelLoadYAML()`, `MbsRunConfigSetDefaults()`, `MbsStepperSetFromOptions()`
@*/
PetscErrorCode MbsStepperSetRunConfig(MbsStepper st, const MbsRunConfig *cfg)
{
  PetscFunctionBegin;
  PetscCall(MbsStepperSetType(st, cfg->scheme));
  for (PetscInt i = 0; i < cfg->nparams; i++)
    PetscCall(MbsStepperSetSchemeParameter(st, cfg->param_name[i], cfg->param_value[i]));
  PetscCall(MbsStepperSetTimeStep(st, cfg->dt));
  PetscCall(MbsStepperSetFinalTime(st, cfg->t_end));
  PetscCall(MbsStepperSetOutput(st, cfg->output_dir, cfg->output_every));
  if (cfg->trajectory[0]) PetscCall(MbsStepperSetTrajectory(st, cfg->trajectory, cfg->output_every));
  if (cfg->reactions[0]) PetscCall(MbsStepperSetReactions(st, cfg->reactions));
  if (cfg->equilibrium_steps) PetscCall(MbsStepperSetEquilibrium(st, cfg->equilibrium_steps));
  PetscFunctionReturn(0);
}

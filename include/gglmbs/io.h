/* gglmbs public API: input files. */
#ifndef GGLMBS_IO_H
#define GGLMBS_IO_H

#include <gglmbs/model.h>
#include <gglmbs/stepper.h>

/* Run parameters read from an input file; MbsStepperSetRunConfig() applies them to a stepper, and the options
   database (-mbs_dt, -mbs_t_end, -mbs_output_dir, -mbs_output_every, -mbs_trajectory, -mbs_scheme,
   -mbs_theta, ...) overrides them afterwards. */
#define MBS_RUNCONFIG_MAX_PARAMS 8

typedef struct {
  PetscReal dt;         /* time: step */
  PetscReal t_end;      /* time: end */
  char      scheme[64]; /* scheme: type (default "em") */
  PetscInt  nparams;    /* scheme parameters given in the file, e.g. scheme: {type: vi-b, theta: 1} */
  char      param_name[MBS_RUNCONFIG_MAX_PARAMS][32];
  PetscReal param_value[MBS_RUNCONFIG_MAX_PARAMS];
  char      output_dir[PETSC_MAX_PATH_LEN]; /* output: directory (default "output") */
  PetscInt  output_every;                   /* output: every (default 1) */
  char      trajectory[16];                 /* output: trajectory, "xdmf" or "none" (default "": not given) */
  char      reactions[PETSC_MAX_PATH_LEN];  /* output: reactions, "all" or names joined by commas (default "") */
  PetscInt  equilibrium_steps; /* equilibrium: load_steps, the initial static equilibrium's (default 0: none) */
} MbsRunConfig;

PETSC_EXTERN PetscErrorCode MbsRunConfigSetDefaults(MbsRunConfig *);
/* Reads a YAML input (rank 0 reads, contents broadcast, every rank builds the same model).
   Errors are PETSC_ERR_USER_INPUT with "file:line:column: key 'path': expected ..., got ...". */
PETSC_EXTERN PetscErrorCode MbsModelLoadYAML(MbsModel, const char filename[], MbsRunConfig *);
PETSC_EXTERN PetscErrorCode MbsStepperSetRunConfig(MbsStepper, const MbsRunConfig *);

#endif

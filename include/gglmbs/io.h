/* gglmbs public API: input files. */
#ifndef GGLMBS_IO_H
#define GGLMBS_IO_H

#include <gglmbs/model.h>

/* Run parameters read from an input file; the program applies them through the stepper's setters,
   and the options database (-mbs_dt, -mbs_t_end, -mbs_output_dir, -mbs_output_every, -mbs_scheme)
   overrides them afterwards. */
typedef struct {
  PetscReal dt;                          /* time: step */
  PetscReal t_end;                       /* time: end */
  char      scheme[64];                  /* scheme: type (default "em") */
  char      output_dir[PETSC_MAX_PATH_LEN]; /* output: directory (default "output") */
  PetscInt  output_every;                /* output: every (default 1) */
} MbsRunConfig;

PETSC_EXTERN PetscErrorCode MbsRunConfigSetDefaults(MbsRunConfig *);
/* Reads a YAML input (rank 0 reads, contents broadcast, every rank builds the same model).
   Errors are PETSC_ERR_USER_INPUT with "file:line:column: key 'path': expected ..., got ...". */
PETSC_EXTERN PetscErrorCode MbsModelLoadYAML(MbsModel, const char filename[], MbsRunConfig *);

#endif

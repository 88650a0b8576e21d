/* gglmbs public API: time stepping with structure-preserving schemes. */
#ifndef GGLMBS_STEPPER_H
#define GGLMBS_STEPPER_H

#include <petscsnes.h>
#include <gglmbs/model.h>

typedef struct _p_MbsStepper *MbsStepper;

#define MBSSCHEMEEM "em" /* GGL energy-momentum scheme, Kinon, Betsch & Schneider 2023, eq. (84) */

/* Conserved quantities and constraint residuals of a state. */
typedef struct {
  PetscReal E, T, V;  /* total, kinetic, potential energy */
  PetscReal J[3];     /* angular momentum about the origin, sum of q_i x p_i over all 3-vector blocks (directors too) */
  PetscReal L[3];     /* linear momentum, sum of p over translational blocks */
  PetscReal g_max;    /* max |g(q)| */
  PetscReal gv_max;   /* max |G(q) M^-1 p| */
} MbsDiagnostics;

PETSC_EXTERN PetscErrorCode MbsSchemeRegister(const char name[], PetscErrorCode (*create)(MbsStepper));
PETSC_EXTERN PetscErrorCode MbsSchemeList(MPI_Comm, PetscViewer);
PETSC_EXTERN PetscErrorCode MbsSchemeIsRegistered(const char name[], PetscBool *registered, char names[], size_t len);

PETSC_EXTERN PetscErrorCode MbsStepperCreate(MbsModel, MbsStepper *);
PETSC_EXTERN PetscErrorCode MbsStepperDestroy(MbsStepper *);
PETSC_EXTERN PetscErrorCode MbsStepperSetType(MbsStepper, const char type[]);
PETSC_EXTERN PetscErrorCode MbsStepperGetType(MbsStepper, const char *type[]);
PETSC_EXTERN PetscErrorCode MbsStepperSetTimeStep(MbsStepper, PetscReal h);
PETSC_EXTERN PetscErrorCode MbsStepperGetTimeStep(MbsStepper, PetscReal *h);
PETSC_EXTERN PetscErrorCode MbsStepperSetFinalTime(MbsStepper, PetscReal t_end);
PETSC_EXTERN PetscErrorCode MbsStepperSetOutput(MbsStepper, const char directory[], PetscInt every);
PETSC_EXTERN PetscErrorCode MbsStepperSetFromOptions(MbsStepper);
PETSC_EXTERN PetscErrorCode MbsStepperSetUp(MbsStepper);
PETSC_EXTERN PetscErrorCode MbsStepperStep(MbsStepper);
PETSC_EXTERN PetscErrorCode MbsStepperSolve(MbsStepper);
PETSC_EXTERN PetscErrorCode MbsStepperView(MbsStepper, PetscViewer);

PETSC_EXTERN PetscErrorCode MbsStepperGetModel(MbsStepper, MbsModel *);
PETSC_EXTERN PetscErrorCode MbsStepperGetSNES(MbsStepper, SNES *);
PETSC_EXTERN PetscErrorCode MbsStepperGetTime(MbsStepper, PetscReal *);
PETSC_EXTERN PetscErrorCode MbsStepperGetStepNumber(MbsStepper, PetscInt *);
PETSC_EXTERN PetscErrorCode MbsStepperGetState(MbsStepper, Vec *q, Vec *p);
PETSC_EXTERN PetscErrorCode MbsStepperGetNewtonIterations(MbsStepper, PetscInt *last, PetscInt *total);
PETSC_EXTERN PetscErrorCode MbsStepperGetNumUnknowns(MbsStepper, PetscInt *);
PETSC_EXTERN PetscErrorCode MbsStepperComputeDiagnostics(MbsStepper, MbsDiagnostics *);
PETSC_EXTERN PetscErrorCode MbsStepperWriteState(MbsStepper, const char filename[]);

#endif

/*
  Shared by the GGL variational integrators VI-S, VI-A and VI-B (seed 004, eqs. 55, 79, 82): their
  unknowns (q1, p1, v, lambda, gamma) and the velocity-level residual of their own velocity unknown.
*/
#ifndef MBS_VI_H
#define MBS_VI_H

#include "stepper/stepperimpl.h"

enum { VI_Q, VI_P, VI_V, VI_LAM, VI_GAM };

/* Parameters of VI-A (theta) and VI-B (theta = Theta, vartheta), read from the stepper at set-up */
typedef struct {
  PetscReal theta, vartheta;
} MbsVI;

/* Fields q, p, v (coordinate-sized), lambda, gamma (constraint-sized) */
PETSC_INTERN PetscErrorCode MbsVISetUp(MbsStepper);
/* VI-A, VI-B: an MbsVI as st->data, the velocity residual at q_theta, and its destruction */
PETSC_INTERN PetscErrorCode MbsVICreateParametrized(MbsStepper);
/* The drives at t_theta = t_n + theta h (MbsModelSetConstraintTime()) */
PETSC_INTERN PetscErrorCode MbsVISetConstraintTime(MbsStepper, PetscReal theta);
/* qt = (1-theta) q0 + theta q1 on all ghosted coordinates */
PETSC_INTERN void MbsVIInterpolate(MbsStepper, PetscReal theta, const PetscScalar *q1, PetscScalar *qt);

#endif

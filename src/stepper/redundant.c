/* Running models with consistent redundant constraints (docs/robustness.md, "Over-constrained models"). */
#include "stepper/stepperimpl.h"
#include "model/redundancy.h"

/*
  Null-pivot threshold of the stepper's MUMPS factorization, relative to the largest entry of the scaled
  Jacobian (CNTL(3) > 0). The duplicated-rod pendulum, the square with both diagonals and the revolute
  four-bar ran on all five schemes for every threshold from MUMPS's default (about 1e-5 eps) to 1e-6, with
  the same trajectory as the non-redundant model to 3e-14; 1e-12 leaves room for the round-off of long
  loops above the default and stays far below any genuine pivot of the saddle-point Jacobian.
*/
#define MBS_NULL_PIVOT_TOL 1e-12

/* Called by MbsStepperSetUp() once the Jacobian exists, and by the setter after set-up. */
PetscErrorCode MbsStepperAllowRedundant_Private(MbsStepper st)
{
  KSP ksp;
  PC  pc;

  PetscFunctionBegin;
  if (!st->allow_redundant) PetscFunctionReturn(0);
  PetscCall(SNESGetKSP(st->snes, &ksp));
  PetscCall(KSPSetOperators(ksp, st->J, st->J));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(MbsPCAllowNullPivots(pc, MBS_NULL_PIVOT_TOL));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetAllowRedundantConstraints - Runs models whose constraints are redundant but consistent
  (the same rod given twice, a closed planar loop of spatial joints that closes exactly): the step's linear
  systems, singular because G(q) has dependent rows, are solved by MUMPS's LU with null-pivot detection.

  Logically Collective

  Input Parameters:
+ st - the stepper
- allow - PETSC_TRUE to allow redundant constraints (default PETSC_FALSE: a step that fails on them is
          an error naming the elements involved)

  Options Database Key:
. -mbs_allow_redundant_constraints - allow redundant constraints

  Notes:
  Sets LU by MUMPS on every number of ranks (instead of UMFPACK on one), with ICNTL(24) = 1 (null-pivot
  detection), CNTL(3) = 1e-12 (null-pivot threshold relative to the scaled matrix; -mat_mumps_cntl_3
  overrides it), ICNTL(6) = 0 (the maximum transversal stops at the structurally singular Jacobians of
  duplicated elements) and ICNTL(13) = 1. The coordinates and momenta are unique and the scheme keeps its
  properties (energy, momentum, constraints); the multipliers of the redundant elements are one of many
  solutions, so the force split between them (and their trajectory output) is arbitrary.
  Needs the direct solve (-pc_type lu, the default); the Schur-complement preconditioner is refused.
  Inconsistent redundancy (two rods of different lengths between the same points) has no solution: the
  initial-state check of MbsModelSetUp() reports it.

  Level: intermediate

.seealso: `MbsStepperSetFromOptions()`, `MbsStepperStep()`
@*/
PetscErrorCode MbsStepperSetAllowRedundantConstraints(MbsStepper st, PetscBool allow)
{
  PetscFunctionBegin;
  PetscCheck(allow || !st->setup || !st->allow_redundant, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_WRONGSTATE,
             "Redundant constraints were allowed at set-up: the linear solver cannot be changed back afterwards");
  st->allow_redundant = allow;
  if (st->setup) PetscCall(MbsStepperAllowRedundant_Private(st));
  PetscFunctionReturn(0);
}

/* Failed and diverging steps: the energy check and the failure checkpoint. */
#include "stepper/stepperimpl.h"

/* Writes the current state to the failure checkpoint, unless it is switched off; says where in `where`
   (for the error message). Errors of the write itself are reported in `where`, not raised: the failure
   being reported matters more. */
PetscErrorCode MbsStepperWriteFailureState_Private(MbsStepper st, PetscBool restartable, char where[], size_t len)
{
  char           path[PETSC_MAX_PATH_LEN];
  PetscBool      none;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  where[0] = 0;
  PetscCall(PetscStrcmp(st->failure_checkpoint, "none", &none));
  if (none) PetscFunctionReturn(0);
  if (st->failure_checkpoint[0])
    PetscCall(PetscStrncpy(path, st->failure_checkpoint, sizeof(path)));
  else
    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/failed_step.bin", st->output_dir));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MbsStepperWriteCheckpoint(st, path);
  PetscCall(PetscPopErrorHandler());
  if (ierr)
    PetscCall(PetscSNPrintf(where, len, "; writing its state to %s failed too", path));
  else if (restartable)
    PetscCall(PetscSNPrintf(where, len,
                            "; the state at its start is in %s (continue from it with other options: -mbs_restart %s)",
                            path, path));
  else
    PetscCall(PetscSNPrintf(where, len, "; the state it reached is in %s, for inspection", path));
  PetscFunctionReturn(0);
}

/* T + V of the current state (collective); also sums the ranks' external work of the step into *work. */
static PetscErrorCode MbsStepperEnergy(MbsStepper st, PetscReal *E, PetscReal *T0, PetscReal *V0, PetscReal *work)
{
  MbsModel           model = st->model;
  const PetscScalar *p;
  PetscReal          loc[2] = {0, st->ext_work}, glob[2], V;
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(VecGetLocalSize(st->p, &n));
  PetscCall(VecGetArrayRead(st->p, &p));
  for (PetscInt i = 0; i < n; i++) loc[0] += 0.5 * PetscRealPart(p[i] * p[i]) * model->minv[i];
  PetscCall(VecRestoreArrayRead(st->p, &p));
  PetscCall(MPIU_Allreduce(loc, glob, 2, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)st)));
  PetscCall(MbsModelCoordinatesToLocal(model, st->q, st->work[0]));
  PetscCall(MbsOpPotentialEnergy(model, st->work[0], &V));
  *E = glob[0] + V;
  if (T0) *T0 = glob[0];
  if (V0) *V0 = V;
  if (work) *work = glob[1];
  st->ext_work = 0;
  PetscFunctionReturn(0);
}

/* E = T + V of the current state (collective); leaves the external work alone */
PetscErrorCode MbsStepperTotalEnergy_Private(MbsStepper st, PetscReal *E)
{
  const PetscReal work = st->ext_work;

  PetscFunctionBegin;
  PetscCall(MbsStepperEnergy(st, E, NULL, NULL, NULL));
  st->ext_work = work;
  PetscFunctionReturn(0);
}

/* The energy a run starts with and its scale: the largest of |E|, T, |V| and the work gravity does over
   the model's extent (a chain released from rest at V = 0 has E = T = V = 0). */
PetscErrorCode MbsStepperEnergyStart_Private(MbsStepper st)
{
  MbsModel           model = st->model;
  const PetscScalar *q;
  PetscReal          E, T, V, box[6], mass = 0, total_mass, g = 0, diameter = 0;

  PetscFunctionBegin;
  PetscCall(MbsStepperEnergy(st, &E, &T, &V, NULL));
  for (int i = 0; i < 6; i++) box[i] = PETSC_MAX_REAL; /* min x_i, then min -x_i */
  PetscCall(VecGetArrayRead(st->q, &q));
  for (PetscInt k = 0; k < model->nowned; k++) {
    const PetscInt b = model->owned_body[k], off = model->body_q[b] - model->rank_qstart[model->rank];
    mass += MbsModelBody(model, b)->mass;
    for (int i = 0; i < 3; i++) {
      box[i]     = PetscMin(box[i], PetscRealPart(q[off + i]));
      box[3 + i] = PetscMin(box[3 + i], -PetscRealPart(q[off + i]));
    }
  }
  PetscCall(VecRestoreArrayRead(st->q, &q));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, box, 6, MPIU_REAL, MPIU_MIN, PetscObjectComm((PetscObject)st)));
  PetscCall(MPIU_Allreduce(&mass, &total_mass, 1, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)st)));
  for (int i = 0; i < 3; i++) {
    g += PetscSqr(model->gravity[i]);
    if (model->nbodies) diameter += PetscSqr(-box[3 + i] - box[i]);
  }
  st->energy_ref   = E;
  st->energy_scale = PetscMax(PetscMax(PetscAbsReal(E), T),
                              PetscMax(PetscAbsReal(V), total_mass * PetscSqrtReal(g) * PetscSqrtReal(diameter)));
  st->energy_set   = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* After an accepted step: the energy must stay finite and within energy_divergence times its scale of
   the initial energy plus the external work. A scheme that blows up (too large a step for a VI scheme, a
   Newton solve that converged to a spurious root) is stopped at the step it happens. */
PetscErrorCode MbsStepperCheckEnergy_Private(MbsStepper st, PetscBool *diverged, PetscReal *E)
{
  PetscReal work;

  PetscFunctionBegin;
  *diverged = PETSC_FALSE;
  PetscCall(MbsStepperEnergy(st, E, NULL, NULL, &work));
  st->energy_ref += work;
  if (!PetscIsInfOrNanReal(*E) &&
      (st->energy_scale == 0 || PetscAbsReal(*E - st->energy_ref) <= st->energy_divergence * st->energy_scale))
    PetscFunctionReturn(0);
  *diverged = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetEnergyDivergence - Stops a run whose energy diverges: after every accepted step, the energy
  E = T + V must be finite and within factor * scale of the initial energy plus the work of external forces
  since (MbsStepperSetExternalForce()), where scale is the largest of |E_0|, T_0, |V_0| and m |g| D (total
  mass, gravity, diameter of the initial configuration). A step that breaks this is an error naming the step,
  the energies and the bound, and its state goes to the failure checkpoint (MbsStepperSetFailureCheckpoint()).

  Logically Collective

  Input Parameters:
+ st - the stepper
- factor - the bound (default 10; 0 switches the check off)

  Options Database Key:
. -mbs_energy_divergence <factor> - the bound

  Note:
  EM and EM-G conserve energy to round-off, and the variational schemes keep its error bounded by a
  fraction of its scale at stable step sizes; an error of ten times the scale is a blow-up, not an
  integration error. The check costs one pass over the bodies and elements per step. The reference is
  taken at the first step after this call and carried through checkpoints; a host that changes the state
  between steps (other than through MbsStepperSetExternalForce()) calls this again to take a new one.

  Level: intermediate

.seealso: `MbsStepperStep()`, `MbsStepperSetFailureCheckpoint()`
@*/
PetscErrorCode MbsStepperSetEnergyDivergence(MbsStepper st, PetscReal factor)
{
  PetscFunctionBegin;
  PetscCheck(
    factor >= 0 && !PetscIsInfOrNanReal(factor), PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
    "The energy divergence bound (-mbs_energy_divergence) must be non-negative and finite (0: no check), got %g",
    (double)factor);
  st->energy_divergence = factor;
  st->energy_set        = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetEnergyTolerance - For the schemes that conserve energy exactly (EM, EM-G: E = T + V, less the
  work of external forces, is the same after a step whenever its equations hold): a (sub-)step whose solve
  converged but that changes E - W by more than tol times the energy's scale (MbsStepperSetEnergyDivergence())
  is not accepted; it fails like a step that did not converge (retried with -mbs_adapt, else reported).

  Logically Collective

  Input Parameters:
+ st - the stepper
- tol - the bound, relative to the energy's scale (default 1e-8; 0 switches the check off)

  Options Database Key:
. -mbs_energy_tol <tol> - the bound

  Note:
  Converged steps change the energy by round-off, measured at most 1e-14 of its scale (Bricard's mechanism, the
  chains, the heavy top). A larger change means the solve stopped short of its equations' solution (a
  residual above its round-off floor accepted by a loosened test such as -mbs_stagnation_tol, a singular
  Jacobian); this check keeps such a step from being accepted silently. It costs two energy evaluations per
  step. Other schemes are unaffected.

  Level: intermediate

.seealso: `MbsStepperSetEnergyDivergence()`, `MbsStepperStep()`
@*/
PetscErrorCode MbsStepperSetEnergyTolerance(MbsStepper st, PetscReal tol)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  PetscCheck(tol >= 0 && !PetscIsInfOrNanReal(tol), PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "The energy tolerance (-mbs_energy_tol) must be non-negative and finite (0: no check), got %g",
             (double)tol);
  st->energy_tol = tol;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetFailureCheckpoint - Where a step that fails (its solve does not converge) or whose energy
  diverges leaves the state, as a checkpoint (MbsStepperWriteCheckpoint()): for a failed step the state at
  its start, which a run with other solver options can continue from (-mbs_restart), for a diverged step
  the state it reached, for inspection.

  Logically Collective

  Input Parameters:
+ st - the stepper
- filename - the file; NULL or "" for the default <output directory>/failed_step.bin, "none" to write nothing

  Options Database Key:
. -mbs_failure_checkpoint <file> - the file

  Level: intermediate

.seealso: `MbsStepperStep()`, `MbsStepperLoadCheckpoint()`, `MbsStepperSetEnergyDivergence()`
@*/
PetscErrorCode MbsStepperSetFailureCheckpoint(MbsStepper st, const char filename[])
{
  PetscFunctionBegin;
  PetscCall(PetscStrncpy(st->failure_checkpoint, filename ? filename : "", sizeof(st->failure_checkpoint)));
  PetscFunctionReturn(0);
}

/* One step: the SNES callbacks, the predictor, the solve with its retries, and accepting the step. */
#include "stepper/stepperimpl.h"
#include "model/redundancy.h"

/* SNES's default test (atol, rtol, stol, max_it, NaN), and the round-off floor: once the residual norm
   is below stagnation_tol, below stagnation_rtol times the solve's initial residual norm, or below
   MBS_FLOOR_EPS_FACTOR eps |x| (the floor scales with the system: a long chain's coordinates and
   tensions, tiny inertias putting M^-1 ~ 1e10 into some rows), an iteration that no longer
   halves it has reached the floor that rounding sets for this system (quadratic convergence would have
   cut it by orders of magnitude): converged.
   Conservation to round-off needs Newton run to that floor; a fixed atol alone either stops one
   iteration early or never triggers on systems whose floor lies above it. */
PetscErrorCode MbsStepperConverged_Private(SNES snes, PetscInt it, PetscReal xnorm, PetscReal snorm, PetscReal fnorm,
                                           SNESConvergedReason *reason, void *ctx)
{
  MbsStepper st    = (MbsStepper)ctx;
  PetscBool  fresh = (PetscBool)(!st->reuse || st->jac_fresh); /* this iteration used a Jacobian assembled for it */

  PetscFunctionBegin;
  st->jac_fresh = PETSC_FALSE;
  if (it == 0)
    st->jac_uses = 0;
  else
    st->jac_uses++;
  PetscCall(SNESConvergedDefault(snes, it, xnorm, snorm, fnorm, reason, NULL));
  /* With a kept (modified-Newton) Jacobian, slow linear convergence must not pass for the floor: above
     the eps |x| estimate it counts only as stagnation with almost no progress; short of that the
     Jacobian is refreshed below. */
  if (it == 0) st->fnorm0 = fnorm;
  if (*reason == SNES_CONVERGED_ITERATING && it > 0) {
    const PetscReal floor_eps = MBS_FLOOR_EPS_FACTOR * PETSC_MACHINE_EPSILON * xnorm,
                    floor_tol = PetscMax(PetscMax(st->stagnation_tol, st->stagnation_rtol * st->fnorm0), floor_eps);
    if ((fnorm <= floor_tol && fnorm > (fresh ? 0.5 : 0.9) * st->fnorm_prev) ||
        (fnorm <= floor_eps && fnorm > 0.5 * st->fnorm_prev)) {
      PetscCall(PetscInfo(snes, "Residual norm %g stagnates at the round-off floor (previous %g): converged\n",
                          (double)fnorm, (double)st->fnorm_prev));
      *reason = SNES_CONVERGED_FNORM_ABS;
    }
  }
  /* Modified Newton: a kept Jacobian that no longer contracts the residual by reuse_rate, or that has
     served MBS_REUSE_MAX_USES iterations of this solve, is refreshed at the next iteration (lag -2:
     compute once, then keep). */
  if (st->reuse && *reason == SNES_CONVERGED_ITERATING && it > 0 &&
      (fnorm > st->reuse_rate * st->fnorm_prev || st->jac_uses >= MBS_REUSE_MAX_USES))
    PetscCall(SNESSetLagJacobian(snes, -2));
  st->fnorm_prev = fnorm;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsStepperFormFunction_Private(SNES snes, Vec X, Vec F, void *ctx)
{
  MbsStepper         st  = (MbsStepper)ctx;
  MbsSystem          sys = st->sys;
  const PetscScalar *x;
  PetscScalar       *f;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(MBS_Residual, 0, 0, 0, 0));
  PetscCall(MbsSystemGlobalToLocal(sys, X, sys->Xloc));
  PetscCall(VecSet(sys->Floc, 0.0));
  PetscCall(VecGetArrayRead(sys->Xloc, &x));
  PetscCall(VecGetArray(sys->Floc, &f));
  PetscCall(st->ops->residual(st, x, f));
  if (st->force) { /* the host's impulse h F on the momentum balance R_p = p1 - p0 + ... */
    const PetscScalar *fe;
    PetscScalar       *fp = f + sys->loff[st->field_p];
    PetscCall(VecGetArrayRead(st->Fext, &fe));
    for (PetscInt i = 0; i < st->model->nq_local; i++) fp[i] -= st->hstep * fe[i];
    PetscCall(VecRestoreArrayRead(st->Fext, &fe));
  }
  PetscCall(VecRestoreArrayRead(sys->Xloc, &x));
  PetscCall(VecRestoreArray(sys->Floc, &f));
  PetscCall(VecSet(F, 0.0));
  PetscCall(MbsSystemLocalToGlobalAdd(sys, sys->Floc, F));
  PetscCall(PetscLogEventEnd(MBS_Residual, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* Assembles the Jacobian at X for the step the stepper is solving (st->q0, st->p0, st->hstep). */
static PetscErrorCode MbsStepperAssembleJacobian(MbsStepper st, Vec X, Mat J, Mat P)
{
  MbsSystem          sys = st->sys;
  const PetscScalar *x;

  PetscFunctionBegin;
  PetscCall(PetscLogEventBegin(MBS_Jacobian, 0, 0, 0, 0));
  PetscCall(MbsSystemGlobalToLocal(sys, X, sys->Xloc));
  PetscCall(VecGetArrayRead(sys->Xloc, &x));
  PetscCall(MbsSystemAssemblyBegin(sys));
  PetscCall(st->ops->jacobian(st, x));
  PetscCall(MbsSystemAssemblyEnd(sys, P));
  PetscCall(VecRestoreArrayRead(sys->Xloc, &x));
  if (J != P) {
    PetscCall(MatAssemblyBegin(J, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(J, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(PetscLogEventEnd(MBS_Jacobian, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsStepperFormJacobian_Private(SNES snes, Vec X, Mat J, Mat P, void *ctx)
{
  MbsStepper st = (MbsStepper)ctx;

  PetscFunctionBegin;
  st->jac_valid = PETSC_TRUE;
  st->jac_fresh = PETSC_TRUE;
  st->jac_h     = st->hstep;
  st->jac_evals++;
  /* What defines a kept Jacobian, for a checkpoint to rebuild the same factors: X, the (sub-)step's
     start state and size. Newton's method proper assembles afresh at every iteration, so only a kept
     (modified-Newton) Jacobian outlives its step. */
  if (st->reuse) {
    PetscCall(VecCopy(X, st->Xjac));
    PetscCall(VecCopy(st->q, st->qjac));
    PetscCall(VecCopy(st->p, st->pjac));
  }
  PetscCall(MbsStepperAssembleJacobian(st, X, J, P));
  PetscFunctionReturn(0);
}

/* After a restart: assembles the kept Jacobian again from what defined it (Xjac, qjac, pjac, jac_h), so
   that the next solve factors exactly the matrix the interrupted run had factored. Leaves st->q0, st->p0
   at (qjac, pjac). */
PetscErrorCode MbsStepperRebuildJacobian(MbsStepper st)
{
  const PetscReal h = st->hstep;

  PetscFunctionBegin;
  PetscCall(MbsModelCoordinatesToLocal(st->model, st->qjac, st->q0));
  PetscCall(MbsModelCoordinatesToLocal(st->model, st->pjac, st->p0));
  st->hstep = st->jac_h;
  PetscCall(MbsStepperAssembleJacobian(st, st->Xjac, st->J, st->J));
  st->hstep     = h;
  st->jac_valid = PETSC_TRUE;
  st->jac_fresh = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* Copy the state (q, p) into the unknowns' q and p fields (to_unknowns) or back. */
static PetscErrorCode MbsStepperCopyState(MbsStepper st, PetscBool to_unknowns)
{
  const PetscInt field[2] = {st->field_q, st->field_p};
  Vec            state[2] = {st->q, st->p}, sub;

  PetscFunctionBegin;
  for (int k = 0; k < 2; k++) {
    PetscCall(VecGetSubVector(st->X, st->sys->is[field[k]], &sub));
    if (to_unknowns)
      PetscCall(VecCopy(state[k], sub));
    else
      PetscCall(VecCopy(sub, state[k]));
    PetscCall(VecRestoreSubVector(st->X, st->sys->is[field[k]], &sub));
  }
  PetscFunctionReturn(0);
}

/* The initial guess of a (sub-)step from the state (q_n, p_n) at its start: q, p as they are (or
   q_n + h M^-1 p_n with the advanced predictor), v = M^-1 p_n, multipliers as X holds them (the previous
   step's, zero at the start). */
static PetscErrorCode MbsStepperPredict(MbsStepper st)
{
  const PetscReal   *minv = st->model->minv;
  Vec                sub;
  PetscScalar       *x;
  const PetscScalar *p;
  PetscInt           n;

  PetscFunctionBegin;
  if (!st->started) {
    PetscCall(VecSet(st->X, 0.0));
    st->started = PETSC_TRUE;
  }
  PetscCall(MbsStepperCopyState(st, PETSC_TRUE));
  /* owned coordinates come first, in order, in the ghosted local arrays minv and p0 */
  PetscCall(VecGetArrayRead(st->p, &p));
  if (st->field_v >= 0) {
    PetscCall(VecGetSubVector(st->X, st->sys->is[st->field_v], &sub));
    PetscCall(VecGetLocalSize(sub, &n));
    PetscCall(VecGetArray(sub, &x));
    for (PetscInt i = 0; i < n; i++) x[i] = minv[i] * p[i];
    PetscCall(VecRestoreArray(sub, &x));
    PetscCall(VecRestoreSubVector(st->X, st->sys->is[st->field_v], &sub));
  }
  if (st->predictor == MBS_PREDICTOR_ADVANCED) {
    PetscCall(VecGetSubVector(st->X, st->sys->is[st->field_q], &sub));
    PetscCall(VecGetLocalSize(sub, &n));
    PetscCall(VecGetArray(sub, &x));
    for (PetscInt i = 0; i < n; i++) x[i] += st->hstep * minv[i] * p[i];
    PetscCall(VecRestoreArray(sub, &x));
    PetscCall(VecRestoreSubVector(st->X, st->sys->is[st->field_q], &sub));
  }
  PetscCall(VecRestoreArrayRead(st->p, &p));
  PetscFunctionReturn(0);
}

/* Why a (sub-)step solve failed, for the report of MbsStepperStep() */
typedef struct {
  SNESConvergedReason reason;
  PetscReal           fnorm, t0, hstep;
  PetscInt            its, level;
} MbsStepFailure;

/* Solves one (sub-)step of size st->hstep from the current state, starting at time t0, at halving
   level `level`. On success the state moves on and *failed is false; on failure the state stays, and
   with adapt the (sub-)step is retried as two halves until adapt_max halvings; when that does not help
   either, *failed is true and fail says why. */
static PetscErrorCode MbsStepperAdvance(MbsStepper st, PetscReal t0, PetscInt level, PetscBool *failed,
                                        MbsStepFailure *fail)
{
  SNESConvergedReason reason;
  PetscInt            its;
  PetscReal           fnorm;
  PetscBool           stale = PETSC_FALSE;

  PetscFunctionBegin;
  *failed = PETSC_FALSE;
  PetscCall(MbsModelCoordinatesToLocal(st->model, st->q, st->q0));
  PetscCall(MbsModelCoordinatesToLocal(st->model, st->p, st->p0));
  if (st->force) {
    PetscCall(VecSet(st->Fext, 0.0));
    PetscCall(st->force(st, t0 + 0.5 * st->hstep, st->hstep, st->q, st->p, st->Fext, st->force_ctx));
    PetscCall(VecAssemblyBegin(st->Fext));
    PetscCall(VecAssemblyEnd(st->Fext));
  }
  PetscCall(MbsStepperPredict(st));
  PetscCall(VecCopy(st->X, st->Xsave));
  if (st->reuse) {
    stale = (PetscBool)(st->jac_valid && st->jac_h == st->hstep);
    PetscCall(SNESSetLagJacobian(st->snes, stale ? -1 : -2));
  }
  PetscCall(SNESSolve(st->snes, NULL, st->X));
  PetscCall(SNESGetConvergedReason(st->snes, &reason));
  PetscCall(SNESGetIterationNumber(st->snes, &its));
  st->last_its += its;
  st->total_its += its;
  if (reason <= 0 && stale) { /* a failure that started from an old Jacobian: retry once with a fresh one */
    PetscCall(PetscInfo(st->snes, "Step failed from a reused Jacobian (%s): retrying with a fresh one\n",
                        SNESConvergedReasons[reason]));
    PetscCall(VecCopy(st->Xsave, st->X));
    PetscCall(SNESSetLagJacobian(st->snes, -2));
    PetscCall(SNESSolve(st->snes, NULL, st->X));
    PetscCall(SNESGetConvergedReason(st->snes, &reason));
    PetscCall(SNESGetIterationNumber(st->snes, &its));
    st->last_its += its;
    st->total_its += its;
  }
  if (reason > 0) {
    PetscCall(MbsStepperCopyState(st, PETSC_FALSE));
    if (st->force) { /* the work of the external force along the step, for the energy check */
      const PetscScalar *f, *q;
      PetscInt           n;
      PetscCall(VecGetLocalSize(st->q, &n));
      PetscCall(VecGetArrayRead(st->Fext, &f));
      PetscCall(VecGetArrayRead(st->q, &q));
      for (PetscInt i = 0; i < n; i++)
        st->ext_work += PetscRealPart(f[i] * (q[i] - st->q0[i])); /* owned coordinates come first in q0 */
      PetscCall(VecRestoreArrayRead(st->q, &q));
      PetscCall(VecRestoreArrayRead(st->Fext, &f));
    }
    PetscFunctionReturn(0);
  }
  {
    /* the norm of the last residual SNES evaluated: NaN stays NaN (SNES keeps 0 when the first residual is NaN) */
    Vec F;
    PetscCall(SNESGetFunction(st->snes, &F, NULL, NULL));
    PetscCall(VecNorm(F, NORM_2, &fnorm));
  }
  PetscCall(VecCopy(st->Xsave, st->X)); /* the guess, with the multipliers of the last accepted step */
  if (!st->adapt || level >= st->adapt_max) {
    *failed      = PETSC_TRUE;
    fail->reason = reason;
    fail->fnorm  = fnorm;
    fail->its    = its;
    fail->level  = level;
    fail->t0     = t0;
    fail->hstep  = st->hstep;
    PetscFunctionReturn(0);
  }
  st->retries++;
  PetscCall(
    MbsStepperReport_Private(st,
                             "gglmbs: step %" PetscInt_FMT
                             " (t = %g, h = %g) of scheme %s did not converge: residual norm %.3e after %" PetscInt_FMT
                             " Newton iterations, SNES reason %s; retrying as 2 sub-steps of h = %g\n",
                             st->step + 1, (double)t0, (double)st->hstep, st->type, (double)fnorm, its,
                             SNESConvergedReasons[reason], (double)(0.5 * st->hstep)));
  st->hstep *= 0.5;
  PetscCall(MbsStepperAdvance(st, t0, level + 1, failed, fail));
  if (!*failed) PetscCall(MbsStepperAdvance(st, t0 + st->hstep, level + 1, failed, fail));
  st->hstep *= 2.0;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperStep - Advances one step of size h: solves the scheme's nonlinear system with SNES and
  accepts the new state. A step whose solve does not converge (diverged, maximum iterations, NaN) is
  never accepted: without -mbs_adapt it is an error naming the step, the time, the scheme, the residual
  norm and the SNES reason, and the state stays at the start of the step; with -mbs_adapt it is retried
  as two sub-steps of half the size (reported, up to the halving limit). When the constraints at the
  start of a failed step are redundant (linearly dependent), the error names the elements involved.
  A step whose energy leaves the bound of -mbs_energy_divergence is accepted and then reported as an error.
  In both cases the state (for a failed step the one at its start, for a diverged one the state it reached)
  is written to the failure checkpoint first (MbsStepperSetFailureCheckpoint()).

  Collective

  Level: beginner

.seealso: `MbsStepperSetAdapt()`, `MbsStepperSetPredictor()`, `MbsStepperSetFailureCheckpoint()`,
`MbsStepperSetEnergyDivergence()`
@*/
PetscErrorCode MbsStepperStep(MbsStepper st)
{
  MbsStepFailure fail;
  PetscBool      failed, diverged = PETSC_FALSE;
  PetscReal      E = 0;

  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  {
    /* ksponly reports success after one linear solve whatever the residual: every step would be accepted
       unconverged (a host's -snes_type ksponly reaches a stepper without an options prefix). */
    PetscBool ksponly;
    PetscCall(PetscObjectTypeCompare((PetscObject)st->snes, SNESKSPONLY, &ksponly));
    PetscCheck(!ksponly, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_INCOMP,
               "The stepper's SNES is ksponly (-%ssnes_type ksponly), which accepts a step after one linear solve "
               "without solving its nonlinear equations; use Newton (newtonls, the default), or give the stepper "
               "an options prefix (MbsStepperSetOptionsPrefix()) to keep a host program's solver options apart",
               ((PetscObject)st)->prefix ? ((PetscObject)st)->prefix : "");
  }
  if (st->monitored_step != st->step) PetscCall(MbsStepperMonitor(st)); /* the initial state */
  if (st->energy_divergence > 0 && !st->energy_set) PetscCall(MbsStepperEnergyStart_Private(st));
  PetscCall(PetscLogEventBegin(MBS_Step, 0, 0, 0, 0));
  st->hstep    = st->h;
  st->last_its = 0;
  st->ext_work = 0;
  if (st->adapt) { /* sub-steps may be accepted before a later one fails */
    PetscCall(VecCopy(st->q, st->qstart));
    PetscCall(VecCopy(st->p, st->pstart));
  }
  PetscCall(MbsStepperAdvance(st, st->t, 0, &failed, &fail));
  st->hstep = st->h;
  PetscCall(PetscLogEventEnd(MBS_Step, 0, 0, 0, 0));
  if (failed) {
    char        sub[128] = "", where[2 * PETSC_MAX_PATH_LEN + 128], redundant[2048] = "";
    const char *advice;
    PetscInt    ndependent = 0;
    if (st->adapt) {
      PetscCall(VecCopy(st->qstart, st->q));
      PetscCall(VecCopy(st->pstart, st->p));
    }
    st->reason = MBS_STEP_DIVERGED_NONLINEAR_SOLVE;
    if (!st->errorifstepfailed) {
      PetscCall(PetscInfo(st, "Step %" PetscInt_FMT " did not converge (SNES reason %s); not accepted\n", st->step + 1,
                          SNESConvergedReasons[fail.reason]));
      PetscFunctionReturn(0);
    }
    if (fail.level)
      PetscCall(PetscSNPrintf(sub, sizeof(sub), " after %" PetscInt_FMT " halvings (sub-step t = %g, h = %g)",
                              fail.level, (double)fail.t0, (double)fail.hstep));
    PetscCall(MbsStepperWriteFailureState_Private(st, PETSC_TRUE, where, sizeof(where)));
    {
      /* The diagnosis needs a factorization of its own; if that fails too, the step's failure is still
         what gets reported. */
      PetscErrorCode ierr;
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = MbsModelFindRedundantConstraints(st->model, st->q, &ndependent, redundant, sizeof(redundant));
      PetscCall(PetscPopErrorHandler());
      if (ierr) ndependent = 0;
    }
    /* what can help: nothing the step size does for a residual that is not finite from the start; no -mbs_adapt
       once it gave up */
    if (ndependent)
      advice = "";
    else if (PetscIsInfOrNanReal(fail.fnorm) && fail.its == 0 && fail.level == 0)
      advice = ". The residual at the step's start is not finite (NaN or Inf): a value of the state, a force or a "
               "parameter overflows; a smaller step cannot help";
    else if (st->adapt)
      advice = ". Try a smaller step (-mbs_dt), or see -snes_monitor -snes_converged_reason";
    else
      advice = ". Try a smaller step (-mbs_dt), -mbs_adapt, or see -snes_monitor -snes_converged_reason";
    /* the checkpoint comes before the report, which may be long (PETSc keeps 2047 characters of a message) */
    SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_NOT_CONVERGED,
            "Step %" PetscInt_FMT
            " (t = %g -> %g) of scheme %s did not converge%s: residual norm %.3e after %" PetscInt_FMT
            " Newton iterations, SNES reason %s%s%s%s%s",
            st->step + 1, (double)st->t, (double)(st->t + st->h), st->type, sub, (double)fail.fnorm, fail.its,
            SNESConvergedReasons[fail.reason], advice, where, ndependent ? ". Cause: " : "", redundant);
  }
  st->step++;
  st->t = st->step * st->h;
  if (st->energy_divergence > 0) PetscCall(MbsStepperCheckEnergy_Private(st, &diverged, &E));
  st->reason = diverged ? MBS_STEP_DIVERGED_ENERGY : MBS_STEP_CONVERGED;
  if (diverged && !st->errorifstepfailed) { /* accepted: the monitors and outputs see it */
    PetscCall(PetscInfo(st, "Step %" PetscInt_FMT ": the energy diverged (E = %g)\n", st->step, (double)E));
    PetscCall(MbsStepperMonitor(st));
    PetscFunctionReturn(0);
  }
  if (diverged) {
    char where[2 * PETSC_MAX_PATH_LEN + 128];
    PetscCall(MbsStepperWriteFailureState_Private(st, PETSC_FALSE, where, sizeof(where)));
    SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_NOT_CONVERGED,
            "Step %" PetscInt_FMT
            " (t = %g -> %g) of scheme %s: the energy diverged: E = %.6e, expected %.6e within %g times its scale %.3e "
            "(-mbs_energy_divergence). Try a smaller step (-mbs_dt) or another scheme%s",
            st->step, (double)(st->t - st->h), (double)st->t, st->type, (double)E, (double)st->energy_ref,
            (double)st->energy_divergence, (double)st->energy_scale, where);
  }
  PetscCall(MbsStepperMonitor(st));
  PetscFunctionReturn(0);
}

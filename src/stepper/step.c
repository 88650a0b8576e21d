/* One step: the SNES callbacks, the predictor, the solve with its retries, and accepting the step. */
#include "stepper/stepperimpl.h"
#include "model/redundancy.h"

/* The 2-norms of each field of v (one reduction; a field is contiguous in each rank's block of X). */
static PetscErrorCode MbsStepperFieldNorms(MbsStepper st, Vec v, PetscReal norms[])
{
  const MbsSystem    sys = st->sys;
  const PetscScalar *a;
  PetscReal          sq[MBS_MAX_FIELDS];

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(v, &a));
  for (PetscInt f = 0; f < sys->nfields; f++) {
    const PetscInt end = f + 1 < sys->nfields ? sys->foff[f + 1] : sys->nlocal;
    sq[f]              = 0;
    for (PetscInt i = sys->foff[f]; i < end; i++) sq[f] += PetscRealPart(a[i] * PetscConj(a[i]));
  }
  PetscCall(VecRestoreArrayRead(v, &a));
  PetscCall(MPIU_Allreduce(sq, norms, sys->nfields, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)st)));
  for (PetscInt f = 0; f < sys->nfields; f++) norms[f] = PetscSqrtReal(norms[f]);
  PetscFunctionReturn(0);
}

/*
  S = |J| |X|, read from J's own values: no copy of J (a Jacobian's worth of memory) and no change of J's state (which
  would make the preconditioner refactor it). On several ranks the off-diagonal block's columns are gathered from X
  by a scatter made once per nonzero pattern.
*/
static PetscErrorCode MbsStepperAbsMult(MbsStepper st, Vec X, Vec S)
{
  Mat                blocks[2] = {st->J, NULL};
  const PetscInt    *colmap;
  const PetscScalar *x[2] = {NULL, NULL};
  PetscScalar       *s;
  PetscBool          ismpi;

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)st->J, MATMPIAIJ, &ismpi));
  if (ismpi) {
    PetscObjectState nz;
    PetscCall(MatMPIAIJGetSeqAIJ(st->J, &blocks[0], &blocks[1], &colmap));
    PetscCall(MatGetNonzeroState(st->J, &nz));
    if (!st->abs_scatter || nz != st->abs_nzstate) {
      PetscInt nghost;
      IS       is;
      PetscCall(VecScatterDestroy(&st->abs_scatter));
      PetscCall(VecDestroy(&st->abs_ghost));
      PetscCall(MatGetSize(blocks[1], NULL, &nghost));
      PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nghost, colmap, PETSC_COPY_VALUES, &is));
      PetscCall(VecCreateSeq(PETSC_COMM_SELF, nghost, &st->abs_ghost));
      PetscCall(VecScatterCreate(X, is, st->abs_ghost, NULL, &st->abs_scatter));
      PetscCall(ISDestroy(&is));
      st->abs_nzstate = nz;
    }
    PetscCall(VecScatterBegin(st->abs_scatter, X, st->abs_ghost, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(st->abs_scatter, X, st->abs_ghost, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecGetArrayRead(st->abs_ghost, &x[1]));
  }
  PetscCall(VecGetArrayRead(X, &x[0]));
  PetscCall(VecGetArrayWrite(S, &s));
  for (int b = 0; b < 2; b++) {
    const PetscInt    *ia, *ja;
    const PetscScalar *v;
    PetscInt           n;
    PetscBool          done;
    if (!blocks[b]) continue;
    PetscCall(MatGetRowIJ(blocks[b], 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cannot read the Jacobian's rows");
    PetscCall(MatSeqAIJGetArrayRead(blocks[b], &v));
    for (PetscInt i = 0; i < n; i++) {
      PetscScalar sum = b ? s[i] : 0;
      for (PetscInt k = ia[i]; k < ia[i + 1]; k++) sum += PetscAbsScalar(v[k]) * PetscAbsScalar(x[b][ja[k]]);
      s[i] = sum;
    }
    PetscCall(MatSeqAIJRestoreArrayRead(blocks[b], &v));
    PetscCall(MatRestoreRowIJ(blocks[b], 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  }
  PetscCall(VecRestoreArrayWrite(S, &s));
  PetscCall(VecRestoreArrayRead(X, &x[0]));
  if (x[1]) PetscCall(VecRestoreArrayRead(st->abs_ghost, &x[1]));
  PetscFunctionReturn(0);
}

/*
  The round-off scale of the residual at X: s = |J| |X| + |F - J X|, J the Jacobian Newton works with.
  Row i of |J| |X| sums the magnitudes of the terms in the unknowns, and F - J X holds the rest (the
  step-start state p_n, q_n, forces, to first order), so s_i is the size of the terms that cancel in F_i near
  the solution (p_{n+1} against p_n, h G^T lambda against h DV, g(q) against its coordinates), and rounding
  leaves |F_i| of order eps s_i.
  *ratio is the largest ||F_f|| / ||s_f|| over the fields f of the unknowns (q, p, v, lambda, gamma: each
  field at the round-off of its own terms, so a field of small terms, such as the velocity constraints, is
  not hidden by one of large terms; a field whose terms are all below MBS_FLOOR_FIELD_MIN of the system's,
  such as the velocities of a model at rest, is measured against that fraction). Unlike eps |X| it sees the
  scaling of each row (M^-1 of a tiny inertia, the step size, huge multipliers), and unlike a residual
  relative to the step's initial one it does not grow with a poor initial guess. For a Jacobian that is not
  AIJ it falls back to ||F|| / (||J||_F ||X||).
*/
PetscErrorCode MbsStepperResidualScale_Private(MbsStepper st, Vec X, Vec F, PetscReal *ratio)
{
  PetscBool isseq, ismpi;
  PetscReal stotal;

  PetscFunctionBegin;
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)st->J, MATSEQAIJ, &isseq));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)st->J, MATMPIAIJ, &ismpi));
  if (!isseq && !ismpi) {
    PetscReal nj, nx;
    PetscReal nf;
    PetscCall(MatNorm(st->J, NORM_FROBENIUS, &nj));
    PetscCall(VecNorm(X, NORM_2, &nx));
    PetscCall(VecNorm(F, NORM_2, &nf));
    *ratio = nj * nx > 0 ? nf / (nj * nx) : (nf > 0 ? PETSC_MAX_REAL : 0);
    PetscFunctionReturn(0);
  }
  if (!st->Xabs) {
    PetscCall(VecDuplicate(X, &st->Xabs));
    PetscCall(VecDuplicate(X, &st->Sabs));
  }
  PetscCall(MbsStepperAbsMult(st, X, st->Sabs));
  /* max over the fields f of ||F_f|| / ||s_f||, s = |J| |X| + |F - J X| */
  PetscCall(MatMult(st->J, X, st->Xabs));
  PetscCall(VecAYPX(st->Xabs, -1.0, F));
  PetscCall(VecAbs(st->Xabs));
  PetscCall(VecAXPY(st->Sabs, 1.0, st->Xabs));
  PetscCall(VecNorm(st->Sabs, NORM_2, &stotal));
  {
    PetscReal nf[MBS_MAX_FIELDS], ns[MBS_MAX_FIELDS];
    PetscCall(MbsStepperFieldNorms(st, F, nf));
    PetscCall(MbsStepperFieldNorms(st, st->Sabs, ns));
    *ratio = 0;
    for (PetscInt f = 0; f < st->sys->nfields; f++) {
      ns[f] += MBS_FLOOR_FIELD_MIN * stotal;
      st->sfield[f] = ns[f];
      if (nf[f] > 0) *ratio = PetscMax(*ratio, ns[f] > 0 ? nf[f] / ns[f] : PETSC_MAX_REAL);
      if (PetscIsInfOrNanReal(nf[f])) *ratio = PETSC_MAX_REAL;
    }
  }
  PetscFunctionReturn(0);
}

/*
  The convergence test of every scheme: SNES's default (atol, max_it, NaN, divergence), except that a
  small Newton update (SNES's stol) alone is not convergence, and the round-off floor:

    converged  <=>  ||F|| <= atol,  or  ||F_f|| <= MBS_FLOOR_EPS_FACTOR eps ||s_f|| in every field f
                    (s = |J| |X| + |F - J X|, MbsStepperResidualScale_Private()) and the iteration no longer halves
  ||F|| (it has reached the floor rounding sets for this system), or ||F|| <= -mbs_stagnation_tol (default 0) and it no
  longer halves. The floor of an iterate whose residual is MBS_FLOOR_MAX_GROWTH times the solve's first is not
  convergence: the iterate has run off, and its floor grew with it.

  A small update with a residual above that floor is what a singular or nearly singular Jacobian gives
  (redundant constraints, a lost rank): continuing makes it fail at max_it, and the step is retried or
  reported, never accepted. Conservation to round-off needs Newton run to the floor; a fixed atol alone
  either stops one iteration early or never triggers on systems whose floor lies above it.
*/
PetscErrorCode MbsStepperConverged_Private(SNES snes, PetscInt it, PetscReal xnorm, PetscReal snorm, PetscReal fnorm,
                                           SNESConvergedReason *reason, void *ctx)
{
  MbsStepper st = (MbsStepper)ctx;

  PetscFunctionBegin;
  if (it == 0) {
    st->jac_uses        = 0;
    st->scaled_in_solve = PETSC_FALSE;
    st->fnorm_start     = fnorm; /* SNES stops before this test when the first residual is not finite */
  } else
    st->jac_uses++;
  PetscCall(SNESConvergedDefault(snes, it, xnorm, snorm, fnorm, reason, NULL));
  if (st->catch_signals && *reason == SNES_CONVERGED_ITERATING) {
    /* a signal stops a long step between Newton iterations, on every rank at the same one: the step is abandoned
       and MbsStepperSolve() checkpoints the state at its start */
    int sig;
    PetscCall(MbsInterruptPending(NULL, &sig));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)st)));
    if (sig) {
      PetscCall(PetscInfo(snes, "Signal %d at Newton iteration %" PetscInt_FMT ": the step is abandoned\n", sig, it));
      st->step_signal = sig;
      *reason         = SNES_DIVERGED_FUNCTION_DOMAIN;
      PetscFunctionReturn(0);
    }
  }
  /* The round-off floor: a residual at MBS_FLOOR_AT of it is converged; one that no longer halves (with a fresh or a
     kept, modified-Newton, Jacobian) is converged within MBS_FLOOR_EPS_FACTOR of it, and above that a kept Jacobian is
     refreshed below. */
  if (it > 0 && (*reason == SNES_CONVERGED_ITERATING || *reason == SNES_CONVERGED_SNORM_RELATIVE)) {
    const PetscBool halving = (PetscBool)(fnorm <= 0.5 * st->fnorm_prev);
    const PetscReal level   = halving ? MBS_FLOOR_AT : MBS_FLOOR_EPS_FACTOR;
    PetscReal       ratio   = PETSC_MAX_REAL;
    Vec             X, F;
    PetscCall(SNESGetSolution(snes, &X));
    PetscCall(SNESGetFunction(snes, &F, NULL, NULL));
    {
      /* A residual that still halves is tested only when an estimate from the scale of the last test (X and J
         change little between iterations and steps) puts it within a factor MBS_FLOOR_ESTIMATE of the level; one that
         no longer halves is tested at least once in each solve, so that the scale is that of this step's iterates
         (a scale kept from earlier steps can be far off: a skate's grows as it speeds up from rest), and after that
         when the estimate puts it within that factor (modified Newton's slow iterations far above the floor skip the
         scale's two products with J) */
      PetscReal est = 0;
      {
        PetscReal nf[MBS_MAX_FIELDS];
        PetscCall(MbsStepperFieldNorms(st, F, nf));
        for (PetscInt f = 0; f < st->sys->nfields; f++) {
          if (!(st->sfield[f] > 0)) { /* no scale yet: test */
            est = 0;
            break;
          }
          est = PetscMax(est, nf[f] / st->sfield[f]);
        }
      }
      if (!(est / PETSC_MACHINE_EPSILON > MBS_FLOOR_ESTIMATE * level) || (!halving && !st->scaled_in_solve)) {
        PetscCall(MbsStepperResidualScale_Private(st, X, F, &ratio));
        ratio /= PETSC_MACHINE_EPSILON;
        st->scaled_in_solve = PETSC_TRUE;
      } else
        ratio = est / PETSC_MACHINE_EPSILON; /* the estimate, MBS_FLOOR_ESTIMATE times above the level */
    }
    if (ratio <= level && !(fnorm <= MBS_FLOOR_MAX_GROWTH * st->fnorm_start)) {
      PetscCall(PetscInfo(snes,
                          "Residual norm %g at the round-off floor of an iterate that ran off (more than %g times the "
                          "first residual %g): not converged\n",
                          (double)fnorm, (double)MBS_FLOOR_MAX_GROWTH, (double)st->fnorm_start));
      if (*reason == SNES_CONVERGED_SNORM_RELATIVE) *reason = SNES_CONVERGED_ITERATING;
    } else if (ratio <= level || (!halving && fnorm <= st->stagnation_tol)) {
      PetscCall(PetscInfo(snes,
                          "Residual norm %g at the round-off floor (previous %g, max over fields of ||F_f|| / (eps "
                          "||s_f||) = %g): converged\n",
                          (double)fnorm, (double)st->fnorm_prev, (double)ratio));
      *reason = SNES_CONVERGED_FNORM_ABS;
    } else if (*reason == SNES_CONVERGED_SNORM_RELATIVE) {
      /* a small update above the floor: the next iteration decides while the residual falls fast; after that it is
         what a singular or nearly singular Jacobian gives */
      if (!halving)
        PetscCall(PetscInfo(snes,
                            "Small update but residual norm %g above the round-off floor (max over fields of "
                            "||F_f|| / (eps ||s_f||) = %g): not converged\n",
                            (double)fnorm, (double)ratio));
      *reason = SNES_CONVERGED_ITERATING;
    }
  } else if (*reason == SNES_CONVERGED_SNORM_RELATIVE)
    *reason = SNES_CONVERGED_ITERATING;
  /* Modified Newton: a kept Jacobian that no longer contracts the residual by reuse_rate per iteration, measured over
     two iterations (a kept Jacobian often contracts poorly in one iteration and by orders of magnitude in the next:
     the velocity-constraint rows lag the positions by one iteration), that lets the first iteration grow the residual
     by more than 2, or that has served MBS_REUSE_MAX_USES iterations of this solve, is refreshed at the next
     iteration (lag -2: compute once, then keep). */
  if (st->reuse && *reason == SNES_CONVERGED_ITERATING && it > 0 &&
      ((it == 1 && fnorm > 2 * st->fnorm_prev) ||
       (it > 1 && fnorm > st->reuse_rate * st->reuse_rate * st->fnorm_prev2) || st->jac_uses >= MBS_REUSE_MAX_USES)) {
    PetscCall(SNESSetLagJacobian(snes, -2));
  }
  st->fnorm_prev2 = it > 0 ? st->fnorm_prev : fnorm;
  st->fnorm_prev  = fnorm;
  PetscFunctionReturn(0);
}

/* The host's state force (MbsStepperSetStateForce()) at the midpoint and mean velocity of the step from the start
   state to the unknowns X (jacobian false: F into st->Fsf), or its Jacobian (true: dF/dq + (2/h) dF/dv into st->Jsf) */
static PetscErrorCode MbsStepperStateForce(MbsStepper st, Vec X, PetscBool jacobian)
{
  const PetscInt     nq = st->model->nq_local, off = st->sys->foff[st->field_q];
  const PetscScalar *x;
  PetscScalar       *qm, *vm;

  PetscFunctionBegin;
  if (!st->Fsf) {
    PetscCall(VecDuplicate(st->q, &st->qm));
    PetscCall(VecDuplicate(st->q, &st->vm));
    PetscCall(VecDuplicate(st->q, &st->Fsf));
  }
  PetscCall(VecGetArrayRead(X, &x));
  PetscCall(VecGetArray(st->qm, &qm));
  PetscCall(VecGetArray(st->vm, &vm));
  for (PetscInt i = 0; i < nq; i++) { /* the step's start st->q0: owned coordinates first */
    qm[i] = 0.5 * (st->q0[i] + x[off + i]);
    vm[i] = (x[off + i] - st->q0[i]) / st->hstep;
  }
  PetscCall(VecRestoreArray(st->vm, &vm));
  PetscCall(VecRestoreArray(st->qm, &qm));
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscCall(VecLockReadPush(st->qm));
  PetscCall(VecLockReadPush(st->vm));
  if (!jacobian) {
    PetscCall(VecSet(st->Fsf, 0.0));
    PetscCall(st->sforce(st, st->tmid, st->qm, st->vm, st->Fsf, st->sforce_ctx));
    PetscCall(VecAssemblyBegin(st->Fsf));
    PetscCall(VecAssemblyEnd(st->Fsf));
  } else {
    PetscCall(MatZeroEntries(st->Jsf));
    PetscCall(st->sforce_jac(st, st->tmid, st->qm, st->vm, 2.0 / st->hstep, st->Jsf, st->sforce_ctx));
    PetscCall(MatAssemblyBegin(st->Jsf, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(st->Jsf, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(VecLockReadPop(st->qm));
  PetscCall(VecLockReadPop(st->vm));
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
  if (st->has_forces && !st->ops->own_forces) /* the force elements' impulse h F(qm, vm, t) on the momentum balance */
    PetscCall(MbsOpForceAdd(st->model, st->q0, x + sys->loff[st->field_q], st->hstep, st->tmid, -st->hstep,
                            f + sys->loff[st->field_p]));
  if (st->force && !st->ops->own_forces) { /* the host's impulse h F on the momentum balance R_p = p1 - p0 + ... */
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
  if (st->sforce) { /* the host's state force: impulse h F(t, q_m, v_m) on the momentum balance */
    const PetscScalar *fs;
    PetscScalar       *fg;
    PetscCall(MbsStepperStateForce(st, X, PETSC_FALSE));
    PetscCall(VecGetArray(F, &fg));
    PetscCall(VecGetArrayRead(st->Fsf, &fs));
    for (PetscInt i = 0; i < st->model->nq_local; i++) fg[sys->foff[st->field_p] + i] -= st->hstep * fs[i];
    PetscCall(VecRestoreArrayRead(st->Fsf, &fs));
    PetscCall(VecRestoreArray(F, &fg));
  }
  PetscCall(MbsStepperEliminateResidual_Private(st, X, F));
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
  PetscCall(MbsSystemAssemblyBegin(sys, P));
  PetscCall(st->ops->jacobian(st, x));
  if (st->has_forces && !st->ops->own_forces)
    PetscCall(MbsJacAddForce(sys, st->field_p, st->field_q, st->q0, x + sys->loff[st->field_q], st->hstep, st->tmid,
                             -st->hstep));
  if (st->sforce && st->sforce_jac) { /* d(h F)/dq_{n+1} = (h/2) (dF/dq + (2/h) dF/dv) */
    PetscObjectState nz;
    PetscCall(MbsStepperStateForce(st, X, PETSC_TRUE));
    PetscCall(MatGetNonzeroState(st->Jsf, &nz));
    if (sys->recording) st->Jsf_nzstate = nz;
    PetscCheck(nz == st->Jsf_nzstate, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_WRONGSTATE,
               "The state force's Jacobian changed its nonzero pattern after the first assembly: give the matrix every "
               "coupling from the start (MbsModelCreateCoordinateMatrix())");
    PetscCall(MbsJacAddCoordinateMatrix(sys, st->field_p, st->field_q, st->Jsf, -0.5 * st->hstep));
  }
  if (st->allow_redundant) /* the diagonal of the constraint fields, for rows that MbsStepperEliminateJacobian_Private()
                              makes identity rows */
    for (PetscInt f = 0; f < sys->nfields; f++)
      if (sys->kind[f] == MBS_FIELD_CONSTRAINT) PetscCall(MbsJacAddIdentity(sys, f, f, 0.0, MBS_SCALE_NONE));
  PetscCall(MbsSystemAssemblyEnd(sys, P));
  PetscCall(MbsStepperEliminateJacobian_Private(st, P));
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
  if (st->reuse && !st->jac_step_saved) {
    st->jac_valid_step = st->jac_valid;
    st->jac_h_step     = st->jac_h;
    st->jac_t0_step    = st->jac_t0;
  }
  st->jac_valid = PETSC_TRUE;
  st->jac_h     = st->hstep;
  st->jac_t0    = st->tstep[0];
  st->jac_evals++;
  /* What defines a kept Jacobian, for a checkpoint to rebuild the same factors: X, the (sub-)step's
     start state and size. Newton's method proper assembles afresh at every iteration, so only a kept
     (modified-Newton) Jacobian outlives its step. */
  if (st->reuse) {
    if (!st->jac_step_saved) { /* the first assembly of this step: keep the record it replaces (a swap, no copy) */
      Vec tmp;
      if (!st->Xjac_step) {
        PetscCall(VecDuplicate(st->Xjac, &st->Xjac_step));
        PetscCall(VecDuplicate(st->qjac, &st->qjac_step));
        PetscCall(VecDuplicate(st->pjac, &st->pjac_step));
      }
      tmp = st->Xjac, st->Xjac = st->Xjac_step, st->Xjac_step = tmp;
      tmp = st->qjac, st->qjac = st->qjac_step, st->qjac_step = tmp;
      tmp = st->pjac, st->pjac = st->pjac_step, st->pjac_step = tmp;
      st->jac_step_saved = PETSC_TRUE;
    }
    PetscCall(VecCopy(X, st->Xjac));
    PetscCall(VecCopy(st->q, st->qjac));
    PetscCall(VecCopy(st->p, st->pjac));
  }
  PetscCall(MbsStepperAssembleJacobian(st, X, J, P));
  PetscFunctionReturn(0);
}

/* After a restart: assembles the kept Jacobian again from what defined it (Xjac, qjac, pjac, jac_h, jac_t0), so
   that the next solve factors exactly the matrix the interrupted run had factored. Leaves st->q0, st->p0
   at (qjac, pjac). */
PetscErrorCode MbsStepperRebuildJacobian(MbsStepper st)
{
  const PetscReal h = st->hstep;

  PetscFunctionBegin;
  PetscCall(MbsModelCoordinatesToLocal(st->model, st->qjac, st->q0));
  PetscCall(MbsModelCoordinatesToLocal(st->model, st->pjac, st->p0));
  {
    const PetscReal t[3] = {st->tstep[0], st->tstep[1], st->tmid}; /* the loads' and drives' times of that step */
    st->hstep            = st->jac_h;
    st->tstep[0]         = st->jac_t0;
    st->tstep[1]         = st->jac_t0 + st->jac_h;
    st->tmid             = st->jac_t0 + 0.5 * st->jac_h;
    PetscCall(MbsStepperAssembleJacobian(st, st->Xjac, st->J, st->J));
    st->tstep[0] = t[0], st->tstep[1] = t[1], st->tmid = t[2];
  }
  st->hstep     = h;
  st->jac_valid = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* A step abandoned for a signal leaves the solver as it was at the step's start: the counters, and a kept Jacobian
   refreshed during the step is replaced by the one the step started with (assembled again from its record), and the
   floor test's scales are those of the step's start, so that
   the checkpoint written next, and a host that goes on stepping, continue exactly as if the step had not begun. */
static PetscErrorCode MbsStepperAbandonStep_Private(MbsStepper st)
{
  PetscFunctionBegin;
  st->total_its = st->total_its_step;
  PetscCall(PetscArraycpy(st->sfield, st->sfield_step, MBS_MAX_FIELDS));
  if (st->jac_step_saved) {
    Vec tmp;
    tmp = st->Xjac, st->Xjac = st->Xjac_step, st->Xjac_step = tmp;
    tmp = st->qjac, st->qjac = st->qjac_step, st->qjac_step = tmp;
    tmp = st->pjac, st->pjac = st->pjac_step, st->pjac_step = tmp;
    st->jac_step_saved = PETSC_FALSE;
    st->jac_evals      = st->jac_evals_step;
    st->jac_h          = st->jac_h_step;
    st->jac_t0         = st->jac_t0_step;
    st->jac_valid      = st->jac_valid_step;
    if (st->jac_valid) PetscCall(MbsStepperRebuildJacobian(st));
  }
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

/* Records the unknowns of an accepted (sub-)step for the extrapolation predictor: a step of another size starts the
   history again. */
static PetscErrorCode MbsStepperPushHistory(MbsStepper st)
{
  PetscFunctionBegin;
  if (st->predictor != MBS_PREDICTOR_EXTRAPOLATE) PetscFunctionReturn(0);
  for (int i = 0; i < MBS_PREDICT_HIST; i++)
    if (!st->xhist[i]) PetscCall(VecDuplicate(st->X, &st->xhist[i]));
  if (st->nhist && st->hist_h != st->hstep) st->nhist = 0;
  {
    Vec oldest = st->xhist[MBS_PREDICT_HIST - 1];
    for (int i = MBS_PREDICT_HIST - 1; i > 0; i--) st->xhist[i] = st->xhist[i - 1];
    st->xhist[0] = oldest;
  }
  PetscCall(VecCopy(st->X, st->xhist[0]));
  st->nhist  = PetscMin(st->nhist + 1, MBS_PREDICT_HIST);
  st->hist_h = st->hstep;
  PetscCall(PetscObjectStateGet((PetscObject)st->q, &st->hist_qstate));
  PetscCall(PetscObjectStateGet((PetscObject)st->p, &st->hist_pstate));
  PetscFunctionReturn(0);
}

/* Whether the predictor's history still describes the state: q and p are the Vecs its newest entry left (a host may
   change them through MbsStepperGetState(), a rejected or interrupted step restores them). Agreed over the ranks, as a
   host may change the state on some ranks only and every rank must take the same branch. */
PetscErrorCode MbsStepperHistoryValid_Private(MbsStepper st, PetscBool *valid)
{
  PetscObjectState sq, sp;

  PetscFunctionBegin;
  PetscCall(PetscObjectStateGet((PetscObject)st->q, &sq));
  PetscCall(PetscObjectStateGet((PetscObject)st->p, &sp));
  *valid = (PetscBool)(sq == st->hist_qstate && sp == st->hist_pstate);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, valid, 1, MPIU_BOOL, MPI_LAND, PetscObjectComm((PetscObject)st)));
  PetscFunctionReturn(0);
}

/* The extrapolation predictor: the polynomial through the unknowns of the last accepted steps of the same size (up to
   MBS_PREDICT_HIST), at the next step: 4 x_n - 6 x_{n-1} + 4 x_{n-2} - x_{n-3}, an error of order h^4 for a smooth
   motion against order h for the state at t_n (fewer points at the start: linear, quadratic). Multipliers are
   extrapolated with the state. *done is false when the history does
   not describe this step: fewer than two steps of this size, or a state changed since (by a host through
   MbsStepperGetState(), a restart on other ranks). */
static PetscErrorCode MbsStepperExtrapolate(MbsStepper st, MbsPredictor predictor, PetscBool *done)
{
  PetscBool valid;

  PetscFunctionBegin;
  *done = PETSC_FALSE;
  if (predictor != MBS_PREDICTOR_EXTRAPOLATE || st->nhist < 2 || st->hist_h != st->hstep) PetscFunctionReturn(0);
  PetscCall(MbsStepperHistoryValid_Private(st, &valid));
  if (!valid) {
    st->nhist = 0;
    PetscFunctionReturn(0);
  }
  if (st->nhist == 2)
    PetscCall(VecAXPBYPCZ(st->X, 2.0, -1.0, 0.0, st->xhist[0], st->xhist[1]));
  else if (st->nhist == 3) {
    PetscCall(VecAXPBYPCZ(st->X, 3.0, -3.0, 0.0, st->xhist[0], st->xhist[1]));
    PetscCall(VecAXPY(st->X, 1.0, st->xhist[2]));
  } else {
    PetscCall(VecAXPBYPCZ(st->X, 4.0, -6.0, 0.0, st->xhist[0], st->xhist[1]));
    PetscCall(VecAXPBYPCZ(st->X, 4.0, -1.0, 1.0, st->xhist[2], st->xhist[3]));
  }
  *done = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* The initial guess of a (sub-)step from the state (q_n, p_n) at its start: q, p as they are (or
   q_n + h M^-1 p_n with the advanced predictor), v = M^-1 p_n, multipliers as X holds them (the previous
   step's, zero at the start); with the extrapolation predictor, once two steps of this size are known, every
   unknown extrapolated from them (MbsStepperExtrapolate(); *extrapolated tells). */
static PetscErrorCode MbsStepperPredict(MbsStepper st, MbsPredictor predictor, PetscBool *extrapolated)
{
  const PetscReal   *minv = st->model->minv;
  Vec                sub;
  PetscScalar       *x;
  const PetscScalar *p;
  PetscInt           n;
  PetscBool          done;

  PetscFunctionBegin;
  if (!st->started) {
    PetscCall(VecSet(st->X, 0.0));
    st->started = PETSC_TRUE;
  }
  PetscCall(MbsStepperExtrapolate(st, predictor, &done));
  if (extrapolated) *extrapolated = done;
  if (done) PetscFunctionReturn(0);
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
  if (predictor == MBS_PREDICTOR_ADVANCED) {
    PetscCall(VecGetSubVector(st->X, st->sys->is[st->field_q], &sub));
    PetscCall(VecGetLocalSize(sub, &n));
    PetscCall(VecGetArray(sub, &x));
    for (PetscInt i = 0; i < n; i++) x[i] += st->hstep * minv[i] * p[i];
    PetscCall(VecRestoreArray(sub, &x));
    PetscCall(VecRestoreSubVector(st->X, st->sys->is[st->field_q], &sub));
  }
  PetscCall(VecRestoreArrayRead(st->p, &p));
  if (st->ops->predict) PetscCall(st->ops->predict(st));
  PetscFunctionReturn(0);
}

/* Why a (sub-)step solve failed, for the report of MbsStepperStep() */
typedef struct {
  SNESConvergedReason reason;
  PetscReal           fnorm, t0, hstep;
  PetscInt            its, level;
  PetscReal           gdrop;   /* violation of an eliminated (redundant) constraint row after a converged solve */
  PetscInt            droprow; /* ... that row, or -1 */
  PetscReal           dE; /* energy change (of its scale) in a converged (sub-)step of an energy-conserving scheme */
  PetscReal           fnorm_start; /* the residual norm at the start of the failed solve, -1 if not finite */
} MbsStepFailure;

/* Why a solve was not accepted: the SNES reason, or the eliminated (redundant) row it left violated */
static void MbsStepFailureWhy(SNESConvergedReason reason, PetscInt droprow, PetscReal gdrop, PetscReal dE, char buf[],
                              size_t len)
{
  if (dE != 0)
    (void)PetscSNPrintf(buf, len,
                        "SNES converged, but the energy changed by %.3e of its scale in the (sub-)step of an "
                        "energy-conserving scheme (-mbs_energy_tol): the solve did not reach its round-off floor",
                        (double)dE);
  else if (droprow >= 0)
    (void)PetscSNPrintf(buf, len,
                        "SNES converged, but constraint row %" PetscInt_FMT
                        ", eliminated as redundant, is violated by %.3e (the redundancy is not consistent along the "
                        "motion, or the configuration is near a singular one)",
                        droprow, (double)gdrop);
  else
    (void)PetscSNPrintf(buf, len, "SNES reason %s", SNESConvergedReasons[reason]);
}

/* The drives' work over the step just solved (docs/drives.md), this rank's part: the work of their constraint
   forces with the step's multipliers, G and H at the midpoint with the drives' time coefficients averaged over the
   step. EM's energy changes by exactly this; for the other schemes it is the same expression of their multipliers. */
static PetscErrorCode MbsStepperDriveWork(MbsStepper st, PetscReal *W)
{
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  const PetscScalar *x, *p1;
  PetscScalar       *v0 = st->work[1], *v1 = st->work[2];
  const PetscInt     fgam = st->field_gamma;

  PetscFunctionBegin;
  *W = 0;
  if (st->field_lambda < 0) PetscFunctionReturn(0);
  PetscCall(MbsSystemGlobalToLocal(sys, st->X, sys->Xloc));
  PetscCall(VecGetArrayRead(sys->Xloc, &x));
  p1 = x + sys->loff[st->field_p];
  for (PetscInt i = 0; i < model->nq_ghosted; i++) {
    v0[i] = model->minv[i] * st->p0[i];
    v1[i] = model->minv[i] * p1[i];
  }
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[0], st->tstep[1]));
  if (st->ops->reaction_terms) { /* the scheme's own constraint force terms, each at its configuration */
    MbsReactionTerm    terms[MBS_MAX_REACTION_TERMS];
    PetscInt           n;
    const PetscScalar *q1 = x + sys->loff[st->field_q];
    PetscScalar       *qw = st->work[0];
    PetscCall(MbsStepperGetReactionTerms_Private(st, &n, terms));
    for (PetscInt t = 0; t < n; t++) {
      if (sys->kind[terms[t].field] != MBS_FIELD_CONSTRAINT) continue;
      for (PetscInt i = 0; i < model->nq_ghosted; i++)
        qw[i] = (1 - terms[t].weight) * st->q0[i] + terms[t].weight * q1[i];
      PetscCall(MbsOpDriveWorkAt(model, qw, st->q0, q1, x + sys->loff[terms[t].field], terms[t].coef, W));
    }
  } else
    PetscCall(MbsOpDriveWork(model, st->q0, x + sys->loff[st->field_q], v0, v1, x + sys->loff[st->field_lambda],
                             fgam >= 0 ? x + sys->loff[fgam] : NULL, W));
  PetscCall(VecRestoreArrayRead(sys->Xloc, &x));
  PetscFunctionReturn(0);
}

/* A linear solve that fails at an iterate within MBS_FLOOR_EPS_FACTOR of the round-off floor is the stagnation the
   convergence test accepts there (MbsStepperConverged_Private()): a Krylov method's true residual cannot fall below
   the rounding of J x, which at such an iterate is of the residual's own size, and GMRES then reports a breakdown (the
   residual of its recursion drifts from the true one) or runs out of iterations. Measured: a rigid chain of 10^4 links
   under the Schur-AMG on two ranks, EM, at ||F|| = 5e-13, GMRES stagnated at 1.1e-13. The iterate is then converged;
   one that ran off, or one left by a preconditioner that failed, is not. Collective. */
static PetscErrorCode MbsStepperLinearFailureAtFloor(MbsStepper st, SNESConvergedReason *reason)
{
  KSP                ksp;
  KSPConvergedReason kr;
  Vec                X, F;
  PetscReal          fnorm, ratio;

  PetscFunctionBegin;
  if (*reason != SNES_DIVERGED_LINEAR_SOLVE) PetscFunctionReturn(0);
  PetscCall(SNESGetKSP(st->snes, &ksp));
  PetscCall(KSPGetConvergedReason(ksp, &kr));
  if (kr != KSP_DIVERGED_BREAKDOWN && kr != KSP_DIVERGED_ITS) PetscFunctionReturn(0);
  PetscCall(SNESGetFunctionNorm(st->snes, &fnorm));
  if (!(fnorm <= MBS_FLOOR_MAX_GROWTH * st->fnorm_start)) PetscFunctionReturn(0);
  PetscCall(SNESGetSolution(st->snes, &X));
  PetscCall(SNESGetFunction(st->snes, &F, NULL, NULL));
  PetscCall(MbsStepperResidualScale_Private(st, X, F, &ratio));
  ratio /= PETSC_MACHINE_EPSILON;
  PetscCall(PetscInfo(st->snes,
                      "Linear solve failed (%s) at residual norm %g, max over fields of ||F_f|| / (eps ||s_f||) = %g: "
                      "%s\n",
                      KSPConvergedReasons[kr], (double)fnorm, (double)ratio,
                      ratio <= MBS_FLOOR_EPS_FACTOR ? "at the round-off floor, converged" : "not converged"));
  if (ratio <= MBS_FLOOR_EPS_FACTOR) {
    *reason = SNES_CONVERGED_FNORM_ABS;
    PetscCall(SNESSetConvergedReason(st->snes, *reason)); /* what a host reading the SNES sees */
  }
  PetscFunctionReturn(0);
}

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
  PetscBool           stale = PETSC_FALSE, extrapolated = PETSC_FALSE;
  PetscReal           gdrop = 0, E0 = 0, dE = 0;
  PetscInt            droprow      = -1;
  const PetscBool     energy_check = (PetscBool)(st->ops->conserves_energy && st->energy_tol > 0 && st->energy_set);
  const PetscReal     work0 = st->ext_work, supplied0 = st->step_supplied, dissipated0 = st->step_dissipated;

  PetscFunctionBegin;
  *failed = PETSC_FALSE;
  PetscCall(MbsModelSetConstraintTime(st->model, t0, t0)); /* drives: the state the step starts from */
  if (st->allow_redundant) PetscCall(MbsStepperSelectConstraints_Private(st, st->q));
  if (energy_check) {
    PetscCall(MbsStepperTotalEnergy_Private(st, &E0));
    if (!st->qsub) {
      PetscCall(VecDuplicate(st->q, &st->qsub));
      PetscCall(VecDuplicate(st->p, &st->psub));
    }
    PetscCall(VecCopy(st->q, st->qsub));
    PetscCall(VecCopy(st->p, st->psub));
  }
  PetscCall(MbsModelCoordinatesToLocal(st->model, st->q, st->q0));
  PetscCall(MbsModelCoordinatesToLocal(st->model, st->p, st->p0));
  st->tmid     = st->hold_time ? t0 : t0 + 0.5 * st->hstep;
  st->tstep[0] = t0;
  st->tstep[1] = st->hold_time ? t0 : t0 + st->hstep;
  if (st->force) {
    PetscCall(VecSet(st->Fext, 0.0));
    /* at the step's mid-time, where the schemes take the force elements; a static step at its end time */
    PetscCall(
      st->force(st, st->ops->quasistatic ? st->tstep[1] : st->tmid, st->hstep, st->q, st->p, st->Fext, st->force_ctx));
    PetscCall(VecAssemblyBegin(st->Fext));
    PetscCall(VecAssemblyEnd(st->Fext));
  }
  PetscCall(MbsStepperPredict(st, st->predictor, &extrapolated));
  PetscCall(VecCopy(st->X, st->Xsave));
  if (st->reuse) {
    stale = (PetscBool)(st->jac_valid && st->jac_h == st->hstep);
    PetscCall(SNESSetLagJacobian(st->snes, stale ? -1 : -2));
  }
  st->fnorm_start = -1;
  PetscCall(SNESSolve(st->snes, NULL, st->X));
  PetscCall(SNESGetConvergedReason(st->snes, &reason));
  PetscCall(MbsStepperLinearFailureAtFloor(st, &reason));
  PetscCall(SNESGetIterationNumber(st->snes, &its));
  st->last_its += its;
  st->total_its += its;
  if (st->step_signal) { /* interrupted: no retry, the caller stops */
    PetscCall(VecCopy(st->Xsave, st->X));
    *failed      = PETSC_TRUE;
    fail->reason = reason;
    PetscFunctionReturn(0);
  }
  if (reason <= 0 && (stale || extrapolated)) {
    /* a failure that started from an old Jacobian or an extrapolated guess (which can be poor when the step does not
       resolve the motion): retry once with a fresh Jacobian from q_n + h M^-1 p_n and the last step's multipliers */
    PetscCall(PetscInfo(st->snes, "Step failed from a %s (%s): retrying with a fresh one%s\n",
                        extrapolated ? "extrapolated guess" : "reused Jacobian", SNESConvergedReasons[reason],
                        extrapolated ? " from the advanced predictor" : ""));
    if (extrapolated) {
      PetscCall(VecCopy(st->xhist[0], st->X)); /* the unknowns of the last accepted step */
      PetscCall(MbsStepperPredict(st, MBS_PREDICTOR_ADVANCED, NULL));
      PetscCall(VecCopy(st->X, st->Xsave));
    } else
      PetscCall(VecCopy(st->Xsave, st->X));
    if (st->reuse) PetscCall(SNESSetLagJacobian(st->snes, -2));
    st->fnorm_start = -1;
    PetscCall(SNESSolve(st->snes, NULL, st->X));
    PetscCall(SNESGetConvergedReason(st->snes, &reason));
    PetscCall(MbsStepperLinearFailureAtFloor(st, &reason));
    PetscCall(SNESGetIterationNumber(st->snes, &its));
    st->last_its += its;
    st->total_its += its;
  }
  if (reason > 0 && st->ndrop) { /* the eliminated rows must hold too: else the redundancy was not consistent */
    PetscReal gkept;
    PetscCall(MbsStepperCheckEliminated_Private(st, st->X, &gdrop, &gkept, &droprow));
    if (!(gdrop <= st->model->ic_tol + 10 * gkept)) {
      PetscCall(PetscInfo(st,
                          "Eliminated constraint row %" PetscInt_FMT " violated by %g after the solve: not accepted\n",
                          droprow, (double)gdrop));
      reason = SNES_DIVERGED_FUNCTION_DOMAIN;
    } else
      droprow = -1;
  }
  if (reason > 0) {
    PetscCall(MbsStepperCopyState(st, PETSC_FALSE));
    st->hlast = st->hstep;
    if (st->force) { /* the work of the external force along the step, for the energy check */
      const PetscScalar *f, *q;
      PetscInt           n;
      PetscReal          w = 0;
      PetscCall(VecGetLocalSize(st->q, &n));
      PetscCall(VecGetArrayRead(st->Fext, &f));
      PetscCall(VecGetArrayRead(st->q, &q));
      for (PetscInt i = 0; i < n; i++) w += PetscRealPart(f[i] * (q[i] - st->q0[i])); /* owned coordinates first */
      PetscCall(VecRestoreArrayRead(st->q, &q));
      PetscCall(VecRestoreArrayRead(st->Fext, &f));
      st->ext_work += w;
      st->step_supplied += w;
    }
    if (st->sforce) { /* the host's state force's work F . (q_{n+1} - q_n) = h F . v_m at the accepted step */
      const PetscScalar *f, *v;
      PetscReal          w = 0;
      PetscCall(MbsStepperStateForce(st, st->X, PETSC_FALSE));
      PetscCall(VecGetArrayRead(st->Fsf, &f));
      PetscCall(VecGetArrayRead(st->vm, &v));
      for (PetscInt i = 0; i < st->model->nq_local; i++) w += st->hstep * PetscRealPart(f[i] * v[i]);
      PetscCall(VecRestoreArrayRead(st->vm, &v));
      PetscCall(VecRestoreArrayRead(st->Fsf, &f));
      st->ext_work += w;
      st->step_supplied += w;
    }
    if (st->has_forces) { /* the force elements' work: supplied by drives, dissipated by dampers */
      PetscReal supplied, dissipated;
      PetscCall(MbsModelCoordinatesToLocal(st->model, st->q, st->work[0]));
      PetscCall(MbsOpForceWork(st->model, st->q0, st->work[0], st->hstep, st->tmid, &supplied, &dissipated));
      st->ext_work += supplied - dissipated;
      st->step_supplied += supplied;
      st->step_dissipated += dissipated;
    }
    if (st->model->has_drives) { /* the work of the drives' constraint forces */
      PetscReal w;
      PetscCall(MbsStepperDriveWork(st, &w));
      st->ext_work += w;
      st->step_supplied += w;
    }
    if (energy_check) { /* E - W must not change: else the solve stopped short of its floor (a spurious root) */
      PetscReal E1, dW = st->ext_work - work0; /* this rank's part of the sub-step's external work */
      PetscCall(MbsStepperTotalEnergy_Private(st, &E1));
      PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &dW, 1, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)st)));
      /* relative to the initial state's scale, or to the step's own energies and work where they are larger (a
         model that starts at rest and unloaded has scale 0 and gains its energy from the loads) */
      dE = (E1 - E0 - dW) / PetscMax(PetscMax(st->energy_scale, PETSC_SMALL),
                                     PetscMax(PetscMax(PetscAbsReal(E0), PetscAbsReal(E1)), PetscAbsReal(dW)));
      if (PetscAbsReal(dE) <= st->energy_tol) {
        PetscCall(MbsStepperPushHistory(st));
        PetscFunctionReturn(0);
      }
      PetscCall(PetscInfo(st, "Energy changed by %g of its scale in a converged solve: not accepted\n", (double)dE));
      PetscCall(VecCopy(st->qsub, st->q));
      PetscCall(VecCopy(st->psub, st->p));
      st->ext_work        = work0;
      st->step_supplied   = supplied0;
      st->step_dissipated = dissipated0;
      reason              = SNES_DIVERGED_FUNCTION_DOMAIN;
    } else {
      PetscCall(MbsStepperPushHistory(st));
      PetscFunctionReturn(0);
    }
  }
  {
    /* the norm of the last residual SNES evaluated: NaN stays NaN (SNES keeps 0 when the first residual is NaN) */
    Vec F;
    PetscCall(SNESGetFunction(st->snes, &F, NULL, NULL));
    PetscCall(VecNorm(F, NORM_2, &fnorm));
  }
  PetscCall(VecCopy(st->Xsave, st->X)); /* the guess, with the multipliers of the last accepted step */
  if (!st->adapt || level >= st->adapt_max) {
    *failed           = PETSC_TRUE;
    fail->reason      = reason;
    fail->fnorm       = fnorm;
    fail->its         = its;
    fail->level       = level;
    fail->t0          = t0;
    fail->hstep       = st->hstep;
    fail->gdrop       = gdrop;
    fail->droprow     = droprow;
    fail->dE          = dE;
    fail->fnorm_start = st->fnorm_start;
    PetscFunctionReturn(0);
  }
  st->retries++;
  {
    char why[256];
    MbsStepFailureWhy(reason, droprow, gdrop, dE, why, sizeof(why));
    PetscCall(MbsStepperReport_Private(st,
                                       "gglmbs: step %" PetscInt_FMT
                                       " (t = %g, h = %g) of scheme %s did not converge: residual norm %.3e after "
                                       "%" PetscInt_FMT " Newton iterations, %s; retrying as 2 sub-steps of h = %g\n",
                                       st->step + 1, (double)t0, (double)st->hstep, st->type,
                                       (double)PetscAbsReal(fnorm), its, why, (double)(0.5 * st->hstep)));
  }
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
  PetscCheck(
    !st->ops->own_forces || !st->sforce, PetscObjectComm((PetscObject)st), PETSC_ERR_SUP,
    "Scheme %s does not take a host's state force (MbsStepperSetStateForce()); use em, em-g, vi-s, vi-a, vi-b, "
    "rattle or dla",
    st->type);
  if (st->monitored_step != st->step) PetscCall(MbsStepperMonitor(st)); /* the initial state */
  if ((st->energy_divergence > 0 || (st->ops->conserves_energy && st->energy_tol > 0)) && !st->energy_set)
    PetscCall(MbsStepperEnergyStart_Private(st));
  PetscCall(PetscLogEventBegin(MBS_Step, 0, 0, 0, 0));
  st->hstep         = st->h;
  st->last_its      = 0;
  st->ext_work      = 0;
  st->step_supplied = st->step_dissipated = 0;
  st->step_signal                         = 0;
  /* what MbsStepperAbandonStep_Private() restores */
  st->jac_step_saved = PETSC_FALSE;
  st->jac_evals_step = st->jac_evals;
  st->total_its_step = st->total_its;
  PetscCall(PetscArraycpy(st->sfield_step, st->sfield, MBS_MAX_FIELDS));
  if (st->adapt) { /* sub-steps may be accepted before a later one fails */
    PetscCall(VecCopy(st->q, st->qstart));
    PetscCall(VecCopy(st->p, st->pstart));
  }
  PetscCall(MbsStepperAdvance(st, st->t, 0, &failed, &fail));
  st->hstep = st->h;
  PetscCall(PetscLogEventEnd(MBS_Step, 0, 0, 0, 0));
  if (failed) {
    char        sub[128] = "", where[2 * PETSC_MAX_PATH_LEN + 128], redundant[2048] = "", why[256], start[128] = "";
    const char *advice;
    PetscInt    ndependent = 0;
    if (st->adapt) {
      PetscCall(VecCopy(st->qstart, st->q));
      PetscCall(VecCopy(st->pstart, st->p));
    }
    if (st->step_signal) { /* abandoned for a signal: the state is the step's start; MbsStepperSolve() stops */
      PetscCall(MbsStepperAbandonStep_Private(st));
      st->reason = MBS_STEP_INTERRUPTED;
      PetscFunctionReturn(0);
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
    if (!st->allow_redundant) {
      /* The diagnosis needs a factorization of its own; if that fails too, the step's failure is still
         what gets reported. (With redundant constraints allowed, the dependent rows were eliminated.) */
      PetscErrorCode ierr;
      PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
      ierr = MbsModelSetConstraintTime(st->model, st->t, st->t); /* the state the step started from */
      if (!ierr) ierr = MbsModelFindRedundantConstraints(st->model, st->q, &ndependent, redundant, sizeof(redundant));
      PetscCall(PetscPopErrorHandler());
      if (ierr) ndependent = 0;
    }
    /* what can help: nothing the step size does for a residual that is not finite from the start; no -mbs_adapt
       once it gave up */
    if (ndependent)
      advice = "";
    else if (fail.fnorm_start < 0 && fail.level == 0)
      advice = ". The residual at the step's start is not finite (NaN or Inf): a value of the state, a force or a "
               "parameter overflows; a smaller step cannot help";
    else if (st->adapt)
      advice = ". Try a smaller step (-mbs_dt), or see -snes_monitor -snes_converged_reason";
    else
      advice = ". Try a smaller step (-mbs_dt), -mbs_adapt, or see -snes_monitor -snes_converged_reason";
    /* the checkpoint comes before the report, which may be long (PETSc keeps 2047 characters of a message) */
    MbsStepFailureWhy(fail.reason, fail.droprow, fail.gdrop, fail.dE, why, sizeof(why));
    if (PetscIsInfOrNanReal(fail.fnorm) &&
        fail.fnorm_start >= 0) /* finite at the start, then a Newton update was not */
      PetscCall(PetscSNPrintf(start, sizeof(start),
                              " (%.3e at the step's start: a Newton update was not finite, as from a singular "
                              "Jacobian)",
                              (double)fail.fnorm_start));
    SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_NOT_CONVERGED,
            "Step %" PetscInt_FMT
            " (t = %g -> %g) of scheme %s did not converge%s: residual norm %.3e%s after %" PetscInt_FMT
            " Newton iterations, %s%s%s%s%s",
            st->step + 1, (double)st->t, (double)(st->t + st->h), st->type, sub, (double)PetscAbsReal(fail.fnorm),
            start, fail.its, why, advice, where, ndependent ? ". Cause: " : "", redundant);
  }
  st->step++;
  st->t = st->step * st->h;
  if (st->energy_divergence > 0 && !st->ops->quasistatic) PetscCall(MbsStepperCheckEnergy_Private(st, &diverged, &E));
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

/*
  Running models with consistent redundant constraints (docs/robustness.md, "Over-constrained models").

  At the start of every (sub-)step the rows of G(q_n) that depend on the others are found
  (MbsModelGetDependentRows(): one row per dependency, joints before the internal constraints of rigid
  bodies) and eliminated from the step's equations: in every constraint-sized field (lambda, gamma) the
  equation of an eliminated row is replaced by "its multiplier is 0". The remaining rows are independent,
  so the step's Jacobian is regular, Newton converges quadratically to the round-off floor, and the
  multipliers stay of the size of the forces. Solving the singular system instead (a direct solver that
  skips null pivots) is not enough once the dependency is nonlinear: the discrete gradient of a set of
  dependent rows between q_n and q_{n+1} is not rank deficient, only nearly so (its smallest singular
  value is O(h)), so the multipliers grow like 1/h and a residual at their round-off is an energy error of
  order 1 J (Bricard's mechanism at h = 0.05: 2.3 J of 29 J).

  An eliminated row still constrains: after the solve its constraint at q_{n+1} must hold as well as the
  kept rows hold theirs (within the model's initial tolerance, MbsModelSetInitialTolerance(), plus 10 times
  the largest violation of the kept rows: the VI schemes that enforce the constraints between the nodes
  leave the nodes off by up to 1e-6); else the redundancy was not consistent along the step, and the step
  is not accepted.
*/
#include "stepper/stepperimpl.h"
#include "model/redundancy.h"

/*
  Null-pivot threshold of the search for the rows to eliminate (-mbs_redundancy_tol overrides it). Looser
  than the threshold that reports redundancy (MBS_REDUNDANCY_TOL): near a configuration where G is close to
  losing one more rank, the pivot of a true dependency is no longer at round-off (Bricard's mechanism at
  t = 1.25 s: above 1e-8), and a dependency left in makes the step's Jacobian singular. A row eliminated
  without being dependent is caught by the check after the solve: the step is not accepted.
*/
#define MBS_ELIMINATION_TOL 1e-6

PetscErrorCode MbsStepperSelectConstraints_Private(MbsStepper st, Vec q)
{
  MbsModel       model = st->model;
  MbsSystem      sys   = st->sys;
  PetscReal      tol   = MBS_ELIMINATION_TOL;
  const PetscInt c0 = model->rank_cstart[model->rank], c1 = model->rank_cstart[model->rank + 1];
  PetscInt       nown = 0, nfields = 0, nold = st->ndrop, *old = st->drop;
  PetscBool      same;

  PetscFunctionBegin;
  st->drop = NULL;
  PetscCall(PetscFree(st->drop_x));
  st->ndrop   = 0;
  st->ndrop_x = 0;
  if (!st->allow_redundant) {
    PetscCall(PetscFree(old));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscOptionsGetReal(((PetscObject)model)->options, ((PetscObject)model)->prefix, "-mbs_redundancy_tol",
                                &tol, NULL));
  PetscCall(MbsModelGetDependentRows(model, q, tol, &st->ndrop, &st->drop));
  same = (PetscBool)(nold == st->ndrop);
  for (PetscInt i = 0; same && i < nold; i++) same = (PetscBool)(old[i] == st->drop[i]);
  PetscCall(PetscFree(old));
  if (!same) st->jac_valid = PETSC_FALSE; /* a kept Jacobian has the other rows eliminated */
  for (PetscInt i = 0; i < st->ndrop; i++)
    if (st->drop[i] >= c0 && st->drop[i] < c1) nown++;
  for (PetscInt f = 0; f < sys->nfields; f++)
    if (sys->kind[f] == MBS_FIELD_CONSTRAINT) nfields++;
  PetscCall(PetscMalloc1(nown * nfields + 1, &st->drop_x));
  for (PetscInt f = 0; f < sys->nfields; f++) {
    if (sys->kind[f] != MBS_FIELD_CONSTRAINT) continue;
    for (PetscInt i = 0; i < st->ndrop; i++)
      if (st->drop[i] >= c0 && st->drop[i] < c1)
        st->drop_x[st->ndrop_x++] = sys->rank_xstart[model->rank] + sys->foff[f] + (st->drop[i] - c0);
  }
  if (st->ndrop) PetscCall(PetscInfo(st, "%" PetscInt_FMT " dependent constraint rows eliminated\n", st->ndrop));
  PetscFunctionReturn(0);
}

/* F_r = X_r (lambda_r = 0) on the eliminated rows */
PetscErrorCode MbsStepperEliminateResidual_Private(MbsStepper st, Vec X, Vec F)
{
  const PetscScalar *x;
  PetscScalar       *f;
  PetscInt           start;

  PetscFunctionBegin;
  if (!st->ndrop) PetscFunctionReturn(0);
  PetscCall(VecGetOwnershipRange(X, &start, NULL));
  PetscCall(VecGetArrayRead(X, &x));
  PetscCall(VecGetArray(F, &f));
  for (PetscInt i = 0; i < st->ndrop_x; i++) f[st->drop_x[i] - start] = x[st->drop_x[i] - start];
  PetscCall(VecRestoreArray(F, &f));
  PetscCall(VecRestoreArrayRead(X, &x));
  PetscFunctionReturn(0);
}

/* The eliminated rows of J become rows of the identity (their diagonal entries are in the pattern) */
PetscErrorCode MbsStepperEliminateJacobian_Private(MbsStepper st, Mat J)
{
  PetscFunctionBegin;
  if (!st->allow_redundant) PetscFunctionReturn(0);
  PetscCall(MatSetOption(J, MAT_NO_OFF_PROC_ZERO_ROWS, PETSC_TRUE));
  PetscCall(MatSetOption(J, MAT_KEEP_NONZERO_PATTERN, PETSC_TRUE)); /* the COO assembly's pattern */
  PetscCall(MatZeroRows(J, st->ndrop_x, st->drop_x, 1.0, NULL, NULL));
  PetscFunctionReturn(0);
}

/* The largest violation |g_r(q_{n+1})| of an eliminated row, with q_{n+1} in X, and that row (-1 if none);
 *gkept gets the largest violation of the other rows. */
PetscErrorCode MbsStepperCheckEliminated_Private(MbsStepper st, Vec X, PetscReal *gmax, PetscReal *gkept, PetscInt *row)
{
  MbsModel       model = st->model;
  const PetscInt c0 = model->rank_cstart[model->rank], c1 = model->rank_cstart[model->rank + 1];
  PetscScalar   *g;
  Vec            q;
  PetscBool     *dropped;
  struct {
    double val;
    int    row;
  } loc          = {0.0, -1}, glob;
  PetscReal kept = 0;

  PetscFunctionBegin;
  *gmax  = 0;
  *gkept = 0;
  *row   = -1;
  if (!st->ndrop) PetscFunctionReturn(0);
  PetscCall(PetscCalloc2(model->ncon_local + 1, &g, model->ncon_local + 1, &dropped));
  PetscCall(VecGetSubVector(X, st->sys->is[st->field_q], &q));
  PetscCall(MbsModelCoordinatesToLocal(model, q, st->work[0]));
  PetscCall(VecRestoreSubVector(X, st->sys->is[st->field_q], &q));
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[1], st->tstep[1])); /* the end of the step solved */
  PetscCall(MbsOpConstraintAdd(model, st->work[0], 1.0, g));
  for (PetscInt i = 0; i < st->ndrop; i++)
    if (st->drop[i] >= c0 && st->drop[i] < c1) dropped[st->drop[i] - c0] = PETSC_TRUE;
  for (PetscInt r = 0; r < model->ncon_local; r++) {
    PetscReal v = PetscAbsScalar(g[r]);
    if (PetscIsInfOrNanReal(v)) v = PETSC_MAX_REAL;
    if (!dropped[r])
      kept = PetscMax(kept, v);
    else if (v > loc.val || loc.row < 0) {
      loc.val = v;
      loc.row = (int)(c0 + r);
    }
  }
  PetscCall(PetscFree2(g, dropped));
  PetscCallMPI(MPI_Allreduce(&loc, &glob, 1, MPI_DOUBLE_INT, MPI_MAXLOC, PetscObjectComm((PetscObject)st)));
  PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &kept, 1, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)st)));
  *gmax  = glob.val;
  *gkept = kept;
  *row   = glob.row;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetAllowRedundantConstraints - Runs models whose constraints are redundant but consistent
  (the same rod given twice, a closed planar loop of spatial joints, an over-constrained spatial loop such
  as Bricard's mechanism): at the start of every step the constraint rows that depend linearly on the others
  are eliminated from the step's equations, so that its Newton solve is regular.

  Logically Collective

  Input Parameters:
+ st - the stepper
- allow - PETSC_TRUE to allow redundant constraints (default PETSC_FALSE: a step that fails on them is
          an error naming the elements involved)

  Options Database Keys:
+ -mbs_allow_redundant_constraints - allow redundant constraints
- -mbs_redundancy_tol <tol> - null-pivot threshold of the dependency search (default 1e-6)

  Notes:
  At the start of every (sub-)step, one row per dependency of G(q_n) is chosen (rows of joints and rods
  before the internal constraints of rigid bodies) and its equations in the step's system are replaced by
  "multiplier = 0"; the search factors G M^-1 G^T once per step (docs/robustness.md). The coordinates and
  momenta are those of the model without the eliminated rows, which has the same motion; the scheme keeps its
  properties (EM: energy to round-off); the eliminated rows' multipliers are 0, so the force split between
  redundant elements (and its trajectory output) is one of many. After the solve, each eliminated row's
  constraint must hold within the model's initial tolerance, or the step is not accepted (the redundancy was
  not consistent). Inconsistent redundancy at the start (two rods of different lengths between the same
  points) is reported by the initial-state check of MbsModelSetUp(). Changing this after set-up lays out the
  step's system again.

  Level: intermediate

.seealso: `MbsStepperSetFromOptions()`, `MbsStepperStep()`
@*/
PetscErrorCode MbsStepperSetAllowRedundantConstraints(MbsStepper st, PetscBool allow)
{
  PetscFunctionBegin;
  if (st->allow_redundant == allow) PetscFunctionReturn(0);
  st->allow_redundant = allow;
  /* the diagonal of the constraint fields is in the Jacobian's pattern only when rows may be eliminated */
  if (st->setup) PetscCall(MbsStepperReset_Private(st));
  PetscFunctionReturn(0);
}

/*
  Redundant constraints (docs/robustness.md, "Over-constrained models").

  The dependent rows of G (m x d) are the null space of A = G M^-1 G^T (m x m, sparse, symmetric positive
  semi-definite). A is scaled to unit diagonal, A_s = S A S with S = diag(A)^-1/2, so that every row is a
  constraint direction of unit length in the kinetic metric and thresholds mean the same for rods, joints
  and the internal constraints of rigid bodies, whatever the masses and lengths.

  Rank: A_s is factored by MUMPS (LDL^T) with null-pivot detection; a pivot below tol is null and
  INFOG(28), the number of null pivots, is m - rank G. Pivots, not eigenvalues: a full-rank chain of N
  links has lambda_min(A_s) ~ 1/N^2 (1e-10 at N = 1e5), which no eigenvalue threshold tells from a true
  dependency, while its pivots stay O(1/N) (the last separator's Schur complement); a true dependency gives
  a pivot at round-off, ~1e-16. A tiny pivot of a semi-definite matrix always means a nearly dependent
  row (interlacing), so a null pivot is never a false alarm beyond tol.

  Null vectors: MUMPS replaces the null pivots, so its factor F is that of A_s + C, C supported on the
  null-pivot rows, with A_s + C nonsingular. Then A_s F^-1 A_s = A_s and P = I - F^-1 A_s is a projector
  onto null(A_s); y = P w for random w spans the null space. P is applied twice: the second pass removes
  the solve error of the first (measured off-support noise 3e-9 -> 2e-12 on a 1e5-link chain). MUMPS's own
  null-space option (ICNTL(25)) is not used: it fails with a distributed solution (INFOG(1) = -37).

  Which elements: Gauss-Jordan elimination with complete pivoting on the null vectors gives a basis in
  which independent dependencies (two duplicated rods far apart) come out separately; the support of each
  vector, mapped from constraint rows to the elements that own them, names the elements.
*/
#include <stdarg.h>
#include <string.h>
#include <petscmat.h>
#include "model/redundancy.h"
#include "model/operators.h"

/* Entries of a null vector below this fraction of its largest are round-off (measured <= 2e-12) */
#define MBS_REDUNDANCY_SUPPORT 1e-8

/* y <- P y, P = I - F^-1 A: the part of y in the null space of A (see the comment at the top). */
static PetscErrorCode MbsRedundancyProject(Mat A, Mat F, Vec y, Vec work1, Vec work2)
{
  PetscFunctionBegin;
  PetscCall(MatMult(A, y, work1));
  PetscCall(MatSolve(F, work1, work2));
  PetscCall(VecAXPY(y, -1.0, work2));
  PetscFunctionReturn(0);
}

/*
  Gauss-Jordan elimination with complete pivoting on the n vectors y (distributed like the constraint
  rows): afterwards each vector has a pivot row where it is 1 and all others are 0. Returns in *nbasis how
  many vectors are numerically independent (pivot above 1e-8 of the first), and, if pivot is not NULL, the
  global constraint row of each vector's pivot. The pivot search weighs row r's entries by weight[r]
  (local rows; NULL: all 1), so that rows of some elements are chosen as pivots only when no others can be.
  Dropping the pivot rows leaves independent rows: a null vector vanishing on all pivots is 0.
*/
static PetscErrorCode MbsRedundancySparseBasis(MbsModel model, PetscInt n, Vec y[], const PetscReal weight[],
                                               PetscInt *nbasis, PetscInt pivot[])
{
  PetscScalar **a;
  PetscReal     first = 0, *rowv;
  PetscInt      ml    = model->ncon_local;

  PetscFunctionBegin;
  *nbasis = n;
  PetscCall(PetscMalloc2(n, &a, n, &rowv));
  for (PetscInt j = 0; j < n; j++) PetscCall(VecGetArray(y[j], &a[j]));
  for (PetscInt j = 0; j < n; j++) {
    struct {
      double val;
      int    rank;
    } loc             = {-1.0, (int)model->rank}, glob;
    PetscInt where[2] = {-1, -1}; /* vector, local row */

    for (PetscInt l = j; l < n; l++)
      for (PetscInt r = 0; r < ml; r++)
        if (PetscAbsScalar(a[l][r]) * (weight ? weight[r] : 1.0) > loc.val) {
          loc.val  = PetscAbsScalar(a[l][r]) * (weight ? weight[r] : 1.0);
          where[0] = l;
          where[1] = r;
        }
    PetscCallMPI(MPI_Allreduce(&loc, &glob, 1, MPI_DOUBLE_INT, MPI_MAXLOC, PetscObjectComm((PetscObject)model)));
    if (j == 0) first = glob.val;
    if (!(glob.val > 1e-8 * first) || glob.val <= 0) {
      *nbasis = j;
      break;
    }
    PetscCallMPI(MPI_Bcast(where, 2, MPIU_INT, glob.rank, PetscObjectComm((PetscObject)model)));
    if (pivot) pivot[j] = model->rank_cstart[glob.rank] + where[1];
    if (where[0] != j) {
      PetscScalar *ta = a[j];
      Vec          tv = y[j];
      a[j]            = a[where[0]];
      y[j]            = y[where[0]];
      a[where[0]]     = ta;
      y[where[0]]     = tv;
    }
    if (model->rank == glob.rank)
      for (PetscInt l = 0; l < n; l++) rowv[l] = PetscRealPart(a[l][where[1]]);
    PetscCallMPI(MPI_Bcast(rowv, (PetscMPIInt)n, MPIU_REAL, glob.rank, PetscObjectComm((PetscObject)model)));
    for (PetscInt r = 0; r < ml; r++) a[j][r] /= rowv[j];
    for (PetscInt l = 0; l < n; l++) {
      if (l == j || rowv[l] == 0) continue;
      for (PetscInt r = 0; r < ml; r++) a[l][r] -= rowv[l] * a[j][r];
    }
  }
  for (PetscInt j = 0; j < n; j++) PetscCall(VecRestoreArray(y[j], &a[j]));
  PetscCall(PetscFree2(a, rowv));
  PetscFunctionReturn(0);
}

/* The elements whose rows take part in each of the n vectors y, gathered on every rank and sorted. */
static PetscErrorCode MbsRedundancySupports(MbsModel model, PetscInt n, Vec y[], PetscInt **offset, PetscInt **elems)
{
  const PetscScalar **a;
  PetscReal          *maxglob;
  PetscInt           *pairs, npairs = 0, cap = 0, *counts, total = 0;
  PetscMPIInt        *rcounts, *displs, size = model->size;
  PetscInt           *all;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(n, &a, n, &maxglob));
  for (PetscInt j = 0; j < n; j++) {
    PetscCall(VecGetArrayRead(y[j], &a[j]));
    PetscCall(VecNorm(y[j], NORM_INFINITY, &maxglob[j]));
  }
  PetscCall(PetscMalloc1(16, &pairs));
  cap = 8;
  for (PetscInt k = 0; k < model->nelem_local; k++) {
    const MbsElement *el = MbsModelLocalElement(model, k);
    for (PetscInt j = 0; j < n; j++) {
      PetscReal m = 0;
      for (int r = 0; r < el->kernel->ncon; r++) m = PetscMax(m, PetscAbsScalar(a[j][model->elem_c[k] + r]));
      if (!(m > MBS_REDUNDANCY_SUPPORT * maxglob[j])) continue;
      if (npairs == cap) {
        PetscInt *p;
        cap *= 2;
        PetscCall(PetscMalloc1(2 * cap, &p));
        PetscCall(PetscArraycpy(p, pairs, 2 * npairs));
        PetscCall(PetscFree(pairs));
        pairs = p;
      }
      pairs[2 * npairs]     = j;
      pairs[2 * npairs + 1] = model->elem_local[k];
      npairs++;
    }
  }
  for (PetscInt j = 0; j < n; j++) PetscCall(VecRestoreArrayRead(y[j], &a[j]));
  PetscCall(PetscMalloc2(size, &rcounts, size, &displs));
  {
    PetscMPIInt mine = (PetscMPIInt)(2 * npairs);
    PetscCallMPI(MPI_Allgather(&mine, 1, MPI_INT, rcounts, 1, MPI_INT, PetscObjectComm((PetscObject)model)));
  }
  displs[0] = 0;
  for (PetscMPIInt r = 1; r < size; r++) displs[r] = displs[r - 1] + rcounts[r - 1];
  total = (displs[size - 1] + rcounts[size - 1]) / 2;
  PetscCall(PetscMalloc1(2 * total + 1, &all));
  PetscCallMPI(MPI_Allgatherv(pairs, (PetscMPIInt)(2 * npairs), MPIU_INT, all, rcounts, displs, MPIU_INT,
                              PetscObjectComm((PetscObject)model)));
  PetscCall(PetscFree(pairs));
  PetscCall(PetscFree2(rcounts, displs));
  PetscCall(PetscCalloc1(n + 1, &counts));
  for (PetscInt p = 0; p < total; p++) counts[all[2 * p]]++;
  PetscCall(PetscMalloc1(n + 1, offset));
  PetscCall(PetscMalloc1(total + 1, elems));
  (*offset)[0] = 0;
  for (PetscInt j = 0; j < n; j++) (*offset)[j + 1] = (*offset)[j] + counts[j];
  for (PetscInt j = 0; j < n; j++) counts[j] = (*offset)[j];
  for (PetscInt p = 0; p < total; p++) (*elems)[counts[all[2 * p]]++] = all[2 * p + 1];
  for (PetscInt j = 0; j < n; j++) PetscCall(PetscSortInt((*offset)[j + 1] - (*offset)[j], *elems + (*offset)[j]));
  PetscCall(PetscFree(counts));
  PetscCall(PetscFree(all));
  PetscCall(PetscFree2(a, maxglob));
  PetscFunctionReturn(0);
}

/* Factors A_s = S G(q) M^-1 G(q)^T S with null-pivot detection (see the comment at the top). *k = m - rank G,
   or -1 (and no factors) when G(q) is not finite. */
static PetscErrorCode MbsRedundancyFactor(MbsModel model, Vec q, PetscReal tol, Mat *A, Mat *F, PetscInt *k)
{
  PetscScalar *qloc;
  Mat          G;
  Vec          d;
  PetscInt     bad = 0;
  PetscReal    dmax;

  PetscFunctionBegin;
  *A = *F = NULL;
  PetscCall(PetscMalloc1(model->nq_ghosted, &qloc));
  PetscCall(MbsModelCoordinatesToLocal(model, q, qloc));
  PetscCall(MbsModelAssembleScaledG(model, qloc, MAT_INITIAL_MATRIX, &G));
  PetscCall(PetscFree(qloc));
  PetscCall(MatMatTransposeMult(G, G, MAT_INITIAL_MATRIX, PETSC_DEFAULT, A));
  PetscCall(MatDestroy(&G));

  /* Unit diagonal. A zero row of G (a constraint without gradient) keeps a zero row: a null pivot. */
  PetscCall(MatCreateVecs(*A, &d, NULL));
  PetscCall(MatGetDiagonal(*A, d));
  {
    PetscScalar *da;
    PetscInt     n;
    PetscCall(VecGetLocalSize(d, &n));
    PetscCall(VecGetArray(d, &da));
    for (PetscInt i = 0; i < n; i++) {
      const PetscReal v = PetscRealPart(da[i]);
      if (PetscIsInfOrNanReal(v)) bad = 1;
      da[i] = v > 0 && !PetscIsInfOrNanReal(v) ? 1.0 / PetscSqrtReal(v) : 1.0;
    }
    PetscCall(VecRestoreArray(d, &da));
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, &bad, 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)model)));
  }
  if (bad) { /* not a question of rank: the caller reports the non-finite state */
    PetscCall(PetscInfo(NULL, "G(q) is not finite: no redundancy analysis\n"));
    PetscCall(VecDestroy(&d));
    PetscCall(MatDestroy(A));
    *k = -1;
    PetscFunctionReturn(0);
  }
  PetscCall(MatDiagonalScale(*A, d, d));
  PetscCall(VecDestroy(&d));
  PetscCall(MatNorm(*A, NORM_INFINITY, &dmax));

  /* Own prefix: the options that tune the stepper's MUMPS (-mat_mumps_*) must not change this test. */
  PetscCall(MatSetOptionsPrefix(*A, "mbs_redundancy_"));
  PetscCall(MatGetFactor(*A, MATSOLVERMUMPS, MAT_FACTOR_CHOLESKY, F));
  PetscCall(MatSetOptionsPrefix(*F, "mbs_redundancy_"));
  PetscCall(MatMumpsSetIcntl(*F, 24, 1));   /* null-pivot detection */
  PetscCall(MatMumpsSetIcntl(*F, 13, 1));   /* no ScaLAPACK on the root front: it does not detect null pivots */
  PetscCall(MatMumpsSetIcntl(*F, 8, 0));    /* A is already scaled */
  PetscCall(MatMumpsSetIcntl(*F, 14, 100)); /* delayed pivots */
  PetscCall(MatMumpsSetCntl(*F, 3, -tol));  /* absolute threshold on the unit-diagonal matrix */
  PetscCall(MatCholeskyFactorSymbolic(*F, *A, NULL, NULL));
  PetscCall(MatCholeskyFactorNumeric(*F, *A, NULL));
  {
    MatFactorError err;
    PetscCall(MatFactorGetError(*F, &err));
    if (err != MAT_FACTOR_NOERROR) { /* a failure the caller may survive: free what was made */
      PetscCall(MatDestroy(F));
      PetscCall(MatDestroy(A));
      SETERRQ(PetscObjectComm((PetscObject)model), PETSC_ERR_LIB,
              "Redundancy analysis: the factorization of G M^-1 G^T failed (MatFactorError %d)", (int)err);
    }
  }
  PetscCall(MatMumpsGetInfog(*F, 28, k));
  PetscCall(PetscInfo(NULL,
                      "G(q): %" PetscInt_FMT " rows, %" PetscInt_FMT
                      " dependent (null pivots below %g of the unit diagonal; |A_s|_inf = %g)\n",
                      model->ncon, *k, (double)tol, (double)dmax));
  PetscFunctionReturn(0);
}

/* nv vectors spanning (part of) the null space of A, from the factor F (see the comment at the top).
   Allocates y[0..nv-1]. */
static PetscErrorCode MbsRedundancyNullVectors(MbsModel model, Mat A, Mat F, PetscInt nv, Vec y[])
{
  PetscRandom rnd;
  Vec         work1, work2;

  PetscFunctionBegin;
  PetscCall(MatCreateVecs(A, &work1, &work2));
  PetscCall(PetscRandomCreate(PetscObjectComm((PetscObject)model), &rnd));
  /* one stream per rank: equal streams make the vectors dependent */
  PetscCall(PetscRandomSetSeed(rnd, 20240601 + 7919 * (unsigned long)model->rank));
  PetscCall(PetscRandomSeed(rnd));
  for (PetscInt j = 0; j < nv; j++) {
    PetscCall(VecDuplicate(work1, &y[j]));
    PetscCall(VecSetRandom(y[j], rnd));
    PetscCall(VecShift(y[j], -0.5));
    for (int pass = 0; pass < 2; pass++) PetscCall(MbsRedundancyProject(A, F, y[j], work1, work2));
  }
  PetscCall(PetscRandomDestroy(&rnd));
  if (PetscDefined(USE_INFO)) {
    for (PetscInt j = 0; j < nv; j++) {
      PetscReal ny, nr;
      PetscCall(MatMult(A, y[j], work1));
      PetscCall(VecNorm(work1, NORM_INFINITY, &nr));
      PetscCall(VecNorm(y[j], NORM_INFINITY, &ny));
      PetscCall(
        PetscInfo(NULL, "null vector %" PetscInt_FMT ": |A_s y| / |y| = %g\n", j, (double)(ny > 0 ? nr / ny : 0)));
    }
  }
  PetscCall(VecDestroy(&work1));
  PetscCall(VecDestroy(&work2));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsModelGetRedundantConstraints(MbsModel model, Vec q, PetscReal tol, PetscInt *ndependent,
                                               PetscInt *nreported, PetscInt **offset, PetscInt **elems)
{
  Mat      A, F;
  Vec      y[MBS_REDUNDANCY_MAX_REPORTED];
  PetscInt k = 0, nv;

  PetscFunctionBegin;
  PetscCheck(model->setup, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONGSTATE, "Call MbsModelSetUp() first");
  PetscCheck(tol > 0 && tol < 1, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "The redundancy threshold must be in (0, 1), got %g", (double)tol);
  *ndependent = 0;
  *nreported  = 0;
  *offset     = NULL;
  *elems      = NULL;
  if (!model->ncon) PetscFunctionReturn(0);
  PetscCall(MbsRedundancyFactor(model, q, tol, &A, &F, &k));
  *ndependent = k;
  if (k < 0) PetscFunctionReturn(0);
  nv = PetscMin(k, MBS_REDUNDANCY_MAX_REPORTED);
  if (nv > 0) {
    PetscInt nbasis;
    PetscCall(MbsRedundancyNullVectors(model, A, F, nv, y));
    PetscCall(MbsRedundancySparseBasis(model, nv, y, NULL, &nbasis, NULL));
    PetscCall(MbsRedundancySupports(model, nbasis, y, offset, elems));
    *nreported = nbasis;
    for (PetscInt j = 0; j < nv; j++) PetscCall(VecDestroy(&y[j]));
  }
  PetscCall(MatDestroy(&F));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsModelGetDependentRows(MbsModel model, Vec q, PetscReal tol, PetscInt *ndependent, PetscInt **rows)
{
  Mat        A, F;
  Vec       *y;
  PetscInt   k = 0, nbasis;
  PetscReal *weight;

  PetscFunctionBegin;
  PetscCheck(model->setup, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONGSTATE, "Call MbsModelSetUp() first");
  *ndependent = 0;
  *rows       = NULL;
  if (!model->ncon) PetscFunctionReturn(0);
  PetscCall(MbsRedundancyFactor(model, q, tol, &A, &F, &k));
  PetscCheck(k >= 0, PetscObjectComm((PetscObject)model), PETSC_ERR_FP,
             "Redundant constraints: the constraint Jacobian G(q) is not finite");
  if (k > MBS_REDUNDANCY_MAX_ELIMINATED) {
    PetscCall(MatDestroy(&F));
    PetscCall(MatDestroy(&A));
    SETERRQ(PetscObjectComm((PetscObject)model), PETSC_ERR_SUP,
            "%" PetscInt_FMT " of the %" PetscInt_FMT " constraint rows are redundant; at most %d are eliminated "
            "(-mbs_allow_redundant_constraints): remove the redundant elements from the model "
            "(-mbs_check_redundancy names them)",
            k, model->ncon, MBS_REDUNDANCY_MAX_ELIMINATED);
  }
  if (k > 0) {
    /* Rows of joints and rods before the internal constraints of rigid bodies: those keep a body rigid
       on their own, whatever the joints do. */
    PetscCall(PetscMalloc1(model->ncon_local + 1, &weight));
    for (PetscInt k2 = 0; k2 < model->nelem_local; k2++) {
      const MbsElement *el = MbsModelLocalElement(model, k2);
      for (int r = 0; r < el->kernel->ncon; r++)
        weight[model->elem_c[k2] + r] = el->kernel == &MbsElemKernelRigidBody ? 1e-3 : 1.0;
    }
    PetscCall(PetscMalloc1(k, &y));
    PetscCall(PetscMalloc1(k, rows));
    PetscCall(MbsRedundancyNullVectors(model, A, F, k, y));
    PetscCall(MbsRedundancySparseBasis(model, k, y, weight, &nbasis, *rows));
    for (PetscInt j = 0; j < k; j++) PetscCall(VecDestroy(&y[j]));
    PetscCall(PetscFree(y));
    PetscCall(PetscFree(weight));
    PetscCheck(nbasis == k, PetscObjectComm((PetscObject)model), PETSC_ERR_PLIB,
               "Redundant constraints: %" PetscInt_FMT " null pivots but %" PetscInt_FMT " independent null vectors", k,
               nbasis);
    PetscCall(PetscSortInt(k, *rows));
  }
  *ndependent = k;
  PetscCall(MatDestroy(&F));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

/* Append to a message, truncating at its end. */
static void MbsAppend(char msg[], size_t len, const char *fmt, ...)
{
  size_t  n = strlen(msg);
  va_list ap;
  if (n + 1 >= len) return;
  va_start(ap, fmt);
  vsnprintf(msg + n, len - n, fmt, ap);
  va_end(ap);
}

static const char *MbsBodyName(MbsModel model, PetscInt b, char buf[], size_t len)
{
  if (b < 0) return "ground";
  if (MbsModelBody(model, b)->name && MbsModelBody(model, b)->name[0])
    snprintf(buf, len, "'%s'", MbsModelBody(model, b)->name);
  else
    snprintf(buf, len, "body %" PetscInt_FMT, b);
  return buf;
}

/* One line for element e, the k-th this rank owns: where it came from, its kind (unless the label says it), the bodies
   it joins (its owner holds them). */
static void MbsRedundancyDescribe(MbsModel model, PetscInt e, PetscInt k, char msg[], size_t len)
{
  const MbsElement *el = MbsModelLocalElement(model, k);
  char              a[160], b[160], kind[64];

  if (el->kernel == &MbsElemKernelRigidBody) {
    const MbsBody *body = MbsModelBody(model, el->body[0]);
    MbsAppend(msg, len, "    internal constraints of rigid body %s%s%s\n",
              MbsBodyName(model, el->body[0], a, sizeof(a)), body->label ? " at " : "", body->label ? body->label : "");
    return;
  }
  snprintf(kind, sizeof(kind), "(%s)", el->kernel->name);
  if (el->label && strstr(el->label, kind))
    MbsAppend(msg, len, "    %s", el->label);
  else if (el->label)
    MbsAppend(msg, len, "    %s %s", el->label, kind);
  else
    MbsAppend(msg, len, "    element %" PetscInt_FMT " %s", e, kind);
  if (el->body[0] >= 0 && el->body[1] >= 0)
    MbsAppend(msg, len, " joining %s and %s\n", MbsBodyName(model, el->body[0], a, sizeof(a)),
              MbsBodyName(model, el->body[1], b, sizeof(b)));
  else
    MbsAppend(msg, len, " joining %s to the ground\n",
              MbsBodyName(model, el->body[0] >= 0 ? el->body[0] : el->body[1], a, sizeof(a)));
}

PetscErrorCode MbsModelFindRedundantConstraints(MbsModel model, Vec q, PetscInt *ndependent, char msg[], size_t len)
{
  PetscReal tol = MBS_REDUNDANCY_TOL;
  PetscInt  nrep, *offset, *elems;
  const int max_elems = 8, max_deps = 4;
  char(*lines)[PETSC_MAX_PATH_LEN + 512];

  PetscFunctionBegin;
  if (len) msg[0] = 0;
  PetscCall(PetscOptionsGetReal(((PetscObject)model)->options, ((PetscObject)model)->prefix, "-mbs_redundancy_tol",
                                &tol, NULL));
  PetscCall(MbsModelGetRedundantConstraints(model, q, tol, ndependent, &nrep, &offset, &elems));
  if (*ndependent <= 0) {
    *ndependent = 0;
    PetscFunctionReturn(0);
  }
  /* the lines of the elements listed, each from the rank that holds the element */
  PetscCall(PetscCalloc1(max_deps * max_elems, &lines));
  for (PetscInt j = 0; j < PetscMin(nrep, max_deps); j++)
    for (PetscInt i = 0; i < PetscMin(offset[j + 1] - offset[j], max_elems); i++) {
      PetscInt k;
      PetscCall(PetscFindInt(elems[offset[j] + i], model->nelem_local, model->elem_local, &k));
      if (k >= 0) MbsRedundancyDescribe(model, elems[offset[j] + i], k, lines[j * max_elems + i], sizeof(lines[0]));
    }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, lines, (PetscMPIInt)(max_deps * max_elems * sizeof(lines[0])),
                             MPI_UNSIGNED_CHAR, MPI_BOR, PetscObjectComm((PetscObject)model)));
  MbsAppend(msg, len,
            "redundant constraints: %" PetscInt_FMT " of the %" PetscInt_FMT
            " constraint rows depend linearly on the others (G(q) has rank %" PetscInt_FMT
            "), so the multipliers are not unique and the linear system of a step is singular.\n",
            *ndependent, model->ncon, model->ncon - *ndependent);
  for (PetscInt j = 0; j < PetscMin(nrep, max_deps); j++) {
    const PetscInt n    = offset[j + 1] - offset[j];
    PetscInt       same = -1;
    for (PetscInt i = 0; i < j && same < 0; i++)
      if (offset[i + 1] - offset[i] == n && !memcmp(elems + offset[i], elems + offset[j], (size_t)n * sizeof(PetscInt)))
        same = i;
    if (same >= 0) { /* loops give several dependencies through the same elements */
      MbsAppend(msg, len,
                "  dependency %" PetscInt_FMT " of %" PetscInt_FMT ": the same %" PetscInt_FMT
                " elements as dependency %" PetscInt_FMT "\n",
                j + 1, *ndependent, n, same + 1);
      continue;
    }
    MbsAppend(msg, len, "  dependency %" PetscInt_FMT " of %" PetscInt_FMT ", %" PetscInt_FMT " element%s:\n", j + 1,
              *ndependent, n, n == 1 ? "" : "s");
    for (PetscInt i = 0; i < PetscMin(n, max_elems); i++) MbsAppend(msg, len, "%s", lines[j * max_elems + i]);
    if (n > max_elems) MbsAppend(msg, len, "      ... and %" PetscInt_FMT " more\n", n - max_elems);
  }
  if (*ndependent > PetscMin(nrep, max_deps))
    MbsAppend(msg, len, "  (%" PetscInt_FMT " more dependencies not listed)\n", *ndependent - PetscMin(nrep, max_deps));
  MbsAppend(msg, len,
            "Remove one element of each dependency or constrain fewer directions (e.g. spherical instead of revolute "
            "joints in a closed planar loop); if the redundancy is consistent (the same rod twice, a loop that closes "
            "exactly), -mbs_allow_redundant_constraints runs anyway (docs/robustness.md)");
  PetscCall(PetscFree(offset));
  PetscCall(PetscFree(elems));
  PetscCall(PetscFree(lines));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsModelCheckRedundancy(MbsModel model)
{
  Vec      q, p;
  PetscInt n;
  char     msg[4096];

  PetscFunctionBegin;
  PetscCall(MbsModelCreateInitialState(model, &q, &p));
  PetscCall(MbsModelFindRedundantConstraints(model, q, &n, msg, sizeof(msg)));
  PetscCall(VecDestroy(&q));
  PetscCall(VecDestroy(&p));
  PetscCheck(!n, PetscObjectComm((PetscObject)model), PETSC_ERR_USER_INPUT,
             "At the initial state (-mbs_check_redundancy), %s", msg);
  PetscFunctionReturn(0);
}

/*
  Velocity constraints implied by the other constraints of their body (docs/nonholonomic.md): for each owned rigid body
  with velocity constraints, the rows of its one-body elements (its own six, a planar joint, a rolling body's height)
  and then its velocity constraint rows, each times M^-1/2 on the body's twelve coordinates, are orthogonalized in
  turn (modified Gram-Schmidt, twice). A velocity row whose remainder is below MBS_REDUNDANCY_TOL^(1/2) of its length
  is a combination of those before it: the step's Jacobian would be singular. Two knife edges across the same direction
  on one body (an axle), a knife edge across a planar joint's normal, or the same contact twice. Dependencies that
  span several bodies are not looked for. Collective; an error naming the element on every rank.
*/
PetscErrorCode MbsModelCheckVelocityConstraints(MbsModel model)
{
  const PetscInt N = model->nbodies;
  PetscInt      *start, *list, *hasv;
  struct {
    int elem, rank;
  } loc = {-1, (int)model->rank}, glob;

  PetscFunctionBegin;
  /* this rank's one-body elements by body (local positions in element order), and which bodies have velocity rows */
  PetscCall(PetscCalloc3(N + 1, &start, model->nelem_local + 1, &list, N, &hasv));
  for (PetscInt k = 0; k < model->nelem_local; k++) {
    const MbsElement *e = MbsModelLocalElement(model, k);
    if (e->body[0] < 0 || e->body[1] >= 0) continue;
    start[e->body[0] + 1]++;
    if (e->kernel->nvcon) hasv[e->body[0]] = 1;
  }
  for (PetscInt b = 0; b < N; b++) start[b + 1] += start[b];
  for (PetscInt k = 0; k < model->nelem_local; k++) { /* start[b] runs to the end of b's run */
    const MbsElement *e = MbsModelLocalElement(model, k);
    if (e->body[0] < 0 || e->body[1] >= 0) continue;
    list[start[e->body[0]]++] = k;
  }
  for (PetscInt b = N; b > 0; b--) start[b] = start[b - 1]; /* and back to its beginning */
  start[0] = 0;
  for (PetscInt b = 0; b < N && loc.elem < 0; b++) {
    PetscReal basis[24][12], s[12];
    int       nb = 0;

    if (!hasv[b] || model->body_type[b] != MBS_BODY_RIGID) continue;
    for (int i = 0; i < 12; i++) s[i] = PetscSqrtReal(1.0 / MbsModelBody(model, b)->mblock[i / 3]);
    for (int pass = 0; pass < 2 && loc.elem < 0; pass++) /* holonomic rows, then velocity rows */
      for (PetscInt j = start[b]; j < start[b + 1] && loc.elem < 0; j++) {
        const MbsElement *e  = MbsModelLocalElement(model, list[j]);
        const int         nr = pass ? e->kernel->nvcon : e->kernel->ncon;
        PetscReal         qe[12], g[MBS_ELEM_MAX_CON], R[MBS_ELEM_MAX_CON * 12 + MBS_ELEM_MAX_VCON * 12];
        if (!nr) continue;
        for (int i = 0; i < 12; i++) qe[i] = MbsModelBody(model, b)->q0[i];
        if (pass)
          e->kernel->velocity_constraint(&e->data, qe, R, NULL);
        else
          e->kernel->constraint(&e->data, qe, g, R);
        for (int r = 0; r < nr && nb < 24; r++) {
          PetscReal v[12], len = 0, rem = 0;
          for (int i = 0; i < 12; i++) v[i] = R[r * 12 + i] * s[i], len += v[i] * v[i];
          for (int twice = 0; twice < 2; twice++)
            for (int l = 0; l < nb; l++) {
              PetscReal d = 0;
              for (int i = 0; i < 12; i++) d += basis[l][i] * v[i];
              for (int i = 0; i < 12; i++) v[i] -= d * basis[l][i];
            }
          for (int i = 0; i < 12; i++) rem += v[i] * v[i];
          if (!(rem > MBS_REDUNDANCY_TOL * len)) {
            if (pass) loc.elem = (int)model->elem_local[list[j]];
            continue; /* a dependent holonomic row is the general check's business */
          }
          for (int i = 0; i < 12; i++) basis[nb][i] = v[i] / PetscSqrtReal(rem);
          nb++;
        }
      }
  }
  PetscCall(PetscFree3(start, list, hasv));
  PetscCallMPI(MPI_Allreduce(&loc, &glob, 1, MPI_2INT, MPI_MAXLOC, PetscObjectComm((PetscObject)model)));
  if (glob.elem >= 0) { /* its owner names it and its body */
    char     desc[PETSC_MAX_PATH_LEN + 128], msg[PETSC_MAX_PATH_LEN + 512] = "";
    PetscInt k = -1, first;
    PetscCall(PetscFindInt(glob.elem, model->nelem_local, model->elem_local, &k));
    if (k >= 0) {
      MbsElementDescribe(model, k, desc, sizeof(desc));
      PetscCall(PetscSNPrintf(
        msg, sizeof(msg),
        "%s: this velocity constraint is implied by the other constraints of body '%s' (two knife edges across the "
        "same direction on one body, as on an axle, are one constraint; a knife edge across a planar joint's "
        "normal repeats the joint; the same contact twice): remove it (docs/nonholonomic.md)",
        desc, MbsModelBody(model, MbsModelLocalElement(model, k)->body[0])->name));
    }
    PetscCall(MbsModelFirstElement(model, k, msg, sizeof(msg), &first));
    SETERRQ(PetscObjectComm((PetscObject)model), PETSC_ERR_USER_INPUT, "%s", msg);
  }
  PetscFunctionReturn(0);
}

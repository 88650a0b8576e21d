/*
  Sparse LU by KLU (SuiteSparse) for the Jacobian of a narrow body graph on one rank (chains, small mechanisms): a
  PCSHELL over KLU's own interface rather than PETSc's MATSOLVERKLU, for what that interface does not do:
  * a singular Jacobian (coincident particles, a redundant rod) is a failed preconditioner
    (PC_FACTOR_NUMERIC_ZEROPIVOT), so the step fails and is diagnosed like any other; PETSc's interface stops the
    program. KLU's halt_if_singular stays on: klu_factor() then stops at the first zero pivot, numerical or
    structural, and returns no factors with status KLU_SINGULAR (with it off, KLU flags only a structurally empty
    column and divides by a numerical zero);
  * no block-triangular preordering (KLU's default; quadratic on these matrices: docs/solvers.md);
  * 64-bit indices when PETSc has them (klu_l_*).
  The analysis (the AMD ordering) is done once per pattern; every factorization is a full one with partial pivoting
  (klu_factor()). klu_refactor(), which keeps the last pivot order, saved 5 % of the factorization on a chain of 10^5
  particles and makes the factors depend on the run's history (a restarted run would not continue bit for bit).
  The CSR arrays of the AIJ matrix are the CSC arrays of its transpose: KLU factors A^T and klu_tsolve() solves
  A x = b (as PETSc's interface does).
*/
#include "stepper/stepperimpl.h"
#include <klu.h>

#if defined(PETSC_USE_64BIT_INDICES)
typedef SuiteSparse_long MbsKLUInt;
#define MbsKLUCommon   klu_l_common
#define MbsKLUSymbolic klu_l_symbolic
#define MbsKLUNumeric  klu_l_numeric
#define MbsKLUDefaults klu_l_defaults
#define MbsKLUAnalyze  klu_l_analyze
#define MbsKLUFactor   klu_l_factor
#define MbsKLUTsolve   klu_l_tsolve
#define MbsKLUFreeSym  klu_l_free_symbolic
#define MbsKLUFreeNum  klu_l_free_numeric
#else
typedef int MbsKLUInt;
#define MbsKLUCommon   klu_common
#define MbsKLUSymbolic klu_symbolic
#define MbsKLUNumeric  klu_numeric
#define MbsKLUDefaults klu_defaults
#define MbsKLUAnalyze  klu_analyze
#define MbsKLUFactor   klu_factor
#define MbsKLUTsolve   klu_tsolve
#define MbsKLUFreeSym  klu_free_symbolic
#define MbsKLUFreeNum  klu_free_numeric
#endif

typedef struct {
  MbsKLUCommon     common;
  MbsKLUSymbolic  *symbolic;
  MbsKLUNumeric   *numeric;
  Mat              mat;     /* the matrix analysed (not a reference) */
  PetscObjectState nzstate; /* and its pattern's state then */
  PetscInt         n;
  PetscInt         nfactor;
} MbsKLU;

static PetscErrorCode MbsKLUFree(MbsKLU *lu)
{
  PetscFunctionBegin;
  if (lu->numeric) MbsKLUFreeNum(&lu->numeric, &lu->common);
  if (lu->symbolic) MbsKLUFreeSym(&lu->symbolic, &lu->common);
  lu->numeric  = NULL;
  lu->symbolic = NULL;
  PetscFunctionReturn(0);
}

/* KLU's status after a call: an error (out of memory, an index too large) stops; a zero pivot is reported */
static PetscErrorCode MbsKLUCheck(MbsKLU *lu, const char *call)
{
  PetscFunctionBegin;
  PetscCheck(lu->common.status >= KLU_OK, PETSC_COMM_SELF,
             lu->common.status == KLU_OUT_OF_MEMORY ? PETSC_ERR_MEM : PETSC_ERR_LIB, "KLU %s failed (status %d: %s)",
             call, (int)lu->common.status,
             lu->common.status == KLU_OUT_OF_MEMORY ? "out of memory"
             : lu->common.status == KLU_TOO_LARGE   ? "an integer overflow: the system is too large for KLU"
                                                    : "invalid input");
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsKLUSetUp(PC pc)
{
  MbsKLU            *lu;
  Mat                P;
  const PetscInt    *ia, *ja;
  const PetscScalar *v;
  PetscInt           n;
  PetscBool          done;
  PetscObjectState   nzstate;

  PetscFunctionBegin;
  PetscCall(PCSetFailedReason(pc, PC_NOERROR)); /* a PCSHELL keeps a failure until its set-up clears it */
  PetscCall(PCShellGetContext(pc, &lu));
  PetscCall(PCGetOperators(pc, NULL, &P));
  PetscCall(MatGetNonzeroState(P, &nzstate));
  PetscCall(MatGetRowIJ(P, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cannot read the Jacobian's rows");
  if (lu->symbolic && (P != lu->mat || nzstate != lu->nzstate || n != lu->n)) PetscCall(MbsKLUFree(lu)); /* another */
  if (lu->numeric) MbsKLUFreeNum(&lu->numeric, &lu->common);
  lu->numeric = NULL;
  if (!lu->symbolic) {
    lu->symbolic = MbsKLUAnalyze((MbsKLUInt)n, (MbsKLUInt *)ia, (MbsKLUInt *)ja, &lu->common);
    lu->mat      = P;
    lu->nzstate  = nzstate;
    lu->n        = n;
  }
  if (lu->symbolic) {
    PetscCall(MatSeqAIJGetArrayRead(P, &v));
    lu->numeric = MbsKLUFactor((MbsKLUInt *)ia, (MbsKLUInt *)ja, (double *)v, lu->symbolic, &lu->common);
    PetscCall(MatSeqAIJRestoreArrayRead(P, &v));
  }
  PetscCall(MatRestoreRowIJ(P, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  if (!lu->symbolic) {
    PetscCall(MbsKLUCheck(lu, "analysis"));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_LIB, "KLU analysis failed");
  }
  if (!lu->numeric && lu->common.status == KLU_SINGULAR) { /* a zero pivot: no factors */
    PetscCall(PetscInfo(pc, "Zero pivot in column %d of KLU's factorization: the Jacobian is singular\n",
                        (int)lu->common.singular_col));
    PetscCall(PCSetFailedReason(pc, PC_FACTOR_NUMERIC_ZEROPIVOT));
    PetscFunctionReturn(0);
  }
  PetscCall(MbsKLUCheck(lu, "factorization"));
  PetscCheck(lu->numeric, PETSC_COMM_SELF, PETSC_ERR_LIB, "KLU factorization failed");
  lu->nfactor++;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsKLUApply(PC pc, Vec b, Vec x)
{
  MbsKLU      *lu;
  PetscScalar *xa;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &lu));
  if (!lu->numeric) { /* a failed factorization (the KSP reports it): no solution */
    PetscCall(VecSetInf(x));
    PetscFunctionReturn(0);
  }
  PetscCall(VecCopy(b, x));
  PetscCall(VecGetArray(x, &xa));
  MbsKLUTsolve(lu->symbolic, lu->numeric, (MbsKLUInt)lu->n, 1, (double *)xa, &lu->common);
  PetscCall(VecRestoreArray(x, &xa));
  PetscCall(MbsKLUCheck(lu, "solve"));
  PetscFunctionReturn(0);
}

/* A block of right-hand sides (PCMatApply()): klu_tsolve() takes them four at a time, reading the factors once for
   four columns instead of once for each (the interface LU's set-up, src/stepper/interfacelu.c) */
static PetscErrorCode MbsKLUMatApply(PC pc, Mat B, Mat X)
{
  MbsKLU      *lu;
  PetscScalar *xa;
  PetscInt     nrhs, lda;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &lu));
  PetscCall(MatCopy(B, X, SAME_NONZERO_PATTERN));
  PetscCall(MatGetSize(X, NULL, &nrhs));
  PetscCall(MatDenseGetLDA(X, &lda));
  PetscCall(MatDenseGetArray(X, &xa));
  if (!lu->numeric) { /* a failed factorization: no solution */
    for (PetscInt c = 0; c < nrhs; c++)
      for (PetscInt i = 0; i < lu->n; i++) xa[i + (size_t)c * lda] = PETSC_INFINITY;
  } else if (nrhs)
    MbsKLUTsolve(lu->symbolic, lu->numeric, (MbsKLUInt)lda, (MbsKLUInt)nrhs, (double *)xa, &lu->common);
  PetscCall(MatDenseRestoreArray(X, &xa));
  if (lu->numeric && nrhs) PetscCall(MbsKLUCheck(lu, "solve"));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsKLUView(PC pc, PetscViewer viewer)
{
  MbsKLU   *lu;
  PetscBool ascii;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &lu));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &ascii));
  if (!ascii) PetscFunctionReturn(0);
  PetscCall(
    PetscViewerASCIIPrintf(viewer, "KLU without BTF preordering: %" PetscInt_FMT " factorizations\n", lu->nfactor));
  if (lu->numeric)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  factors: %.0f nonzeros in L and U\n",
                                     (double)lu->numeric->lnz + (double)lu->numeric->unz));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsKLUDestroy(PC pc)
{
  MbsKLU *lu;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &lu));
  PetscCall(MbsKLUFree(lu));
  PetscCall(PetscFree(lu));
  PetscFunctionReturn(0);
}

/* Makes pc the KLU factorization of its (one-rank, AIJ) preconditioning matrix. */
PetscErrorCode MbsPCSetKLU_Private(PC pc)
{
  MbsKLU *lu;

  PetscFunctionBegin;
  PetscCall(PCSetType(pc, PCSHELL));
  PetscCall(PetscNew(&lu));
  MbsKLUDefaults(&lu->common);
  lu->common.btf = 0;
  /* threshold partial pivoting: a diagonal pivot at least 0.1 of its column's largest entry (KLU's default is 0.001,
     which let VI-B's chain Jacobians grow to a backward error of 3e-12 |J| |x|, above the Newton floor's window; at 0.1
     it is 2e-15, for about 10 % more entries in the factors: docs/solvers.md) */
  lu->common.tol = 0.1;
  PetscCall(PCShellSetContext(pc, lu));
  PetscCall(PCShellSetName(pc, "gglmbs KLU (SuiteSparse)"));
  PetscCall(PCShellSetSetUp(pc, MbsKLUSetUp));
  PetscCall(PCShellSetApply(pc, MbsKLUApply));
  PetscCall(PCShellSetMatApply(pc, MbsKLUMatApply));
  PetscCall(PCShellSetView(pc, MbsKLUView));
  PetscCall(PCShellSetDestroy(pc, MbsKLUDestroy));
  PetscFunctionReturn(0);
}

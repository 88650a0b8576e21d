/*
  Dense LU for small systems: a PCSHELL that factors a dense copy of the (sparse) Jacobian with LAPACK's getrf
  (partial pivoting, which the zero multiplier blocks need) and solves with getrs. For tens of unknowns the sparse
  packages spend most of a factorization on their own set-up (heavy top, 42 unknowns: 50-70 us against 18 us here).
  A singular matrix is a failed preconditioner (PC_FACTOR_NUMERIC_ZEROPIVOT), not an error: the step fails and is
  diagnosed like any other (PCLU on a MATSEQDENSE stops the program instead).
*/
#include "stepper/stepperimpl.h"
#include <petscblaslapack.h>

typedef struct {
  PetscBLASInt  n;
  PetscScalar  *a; /* the factors, column-major */
  PetscBLASInt *piv;
} MbsDenseLU;

static PetscErrorCode MbsDenseLUSetUp(PC pc)
{
  MbsDenseLU        *lu;
  Mat                P;
  const PetscInt    *ia, *ja;
  const PetscScalar *v;
  PetscInt           n;
  PetscBool          done;
  PetscBLASInt       info;

  PetscFunctionBegin;
  PetscCall(PCSetFailedReason(pc, PC_NOERROR)); /* a PCSHELL keeps a failure until its set-up clears it */
  PetscCall(PCShellGetContext(pc, &lu));
  PetscCall(PCGetOperators(pc, NULL, &P));
  PetscCall(MatGetRowIJ(P, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cannot read the Jacobian's rows");
  if (!lu->a || lu->n != n) {
    PetscCall(PetscFree2(lu->a, lu->piv));
    PetscCall(PetscBLASIntCast(n, &lu->n));
    PetscCall(PetscMalloc2((size_t)n * n, &lu->a, n, &lu->piv));
  }
  PetscCall(PetscArrayzero(lu->a, (size_t)n * n));
  PetscCall(MatSeqAIJGetArrayRead(P, &v));
  for (PetscInt i = 0; i < n; i++)
    for (PetscInt k = ia[i]; k < ia[i + 1]; k++) lu->a[i + (size_t)ja[k] * n] = v[k];
  PetscCall(MatSeqAIJRestoreArrayRead(P, &v));
  {
    PetscInt m, nc;
    PetscCall(MatGetSize(P, &m, &nc));
    PetscCheck(m == n && nc == n, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "Dense LU of a %" PetscInt_FMT " x %" PetscInt_FMT " matrix read as %" PetscInt_FMT " rows", m, nc, n);
  }
  PetscCall(MatRestoreRowIJ(P, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCallBLAS("LAPACKgetrf", LAPACKgetrf_(&lu->n, &lu->n, lu->a, &lu->n, lu->piv, &info));
  PetscCall(PetscLogFlops(2.0 * lu->n * lu->n * lu->n / 3.0));
  PetscCheck(info >= 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "LAPACK getrf: argument %d is invalid", (int)-info);
  if (info > 0) {
    PetscCall(PetscInfo(pc, "Zero pivot in column %d of the dense LU: the Jacobian is singular\n", (int)info));
    PetscCall(PCSetFailedReason(pc, PC_FACTOR_NUMERIC_ZEROPIVOT));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsDenseLUApply(PC pc, Vec b, Vec x)
{
  MbsDenseLU  *lu;
  PetscScalar *xa;
  PetscBLASInt one = 1, info;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &lu));
  PetscCall(VecCopy(b, x));
  PetscCall(VecGetArray(x, &xa));
  PetscCallBLAS("LAPACKgetrs", LAPACKgetrs_("N", &lu->n, &one, lu->a, &lu->n, lu->piv, xa, &lu->n, &info));
  PetscCall(VecRestoreArray(x, &xa));
  PetscCall(PetscLogFlops(2.0 * lu->n * lu->n));
  PetscCheck(info == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "LAPACK getrs: argument %d is invalid", (int)-info);
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsDenseLUDestroy(PC pc)
{
  MbsDenseLU *lu;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &lu));
  PetscCall(PetscFree2(lu->a, lu->piv));
  PetscCall(PetscFree(lu));
  PetscFunctionReturn(0);
}

/* Makes pc the dense LU of its (one-rank, AIJ) preconditioning matrix. */
PetscErrorCode MbsPCSetDenseLU_Private(PC pc)
{
  MbsDenseLU *lu;

  PetscFunctionBegin;
  PetscCall(PCSetType(pc, PCSHELL));
  PetscCall(PetscNew(&lu));
  PetscCall(PCShellSetContext(pc, lu));
  PetscCall(PCShellSetName(pc, "gglmbs dense LU (LAPACK getrf/getrs)"));
  PetscCall(PCShellSetSetUp(pc, MbsDenseLUSetUp));
  PetscCall(PCShellSetApply(pc, MbsDenseLUApply));
  PetscCall(PCShellSetDestroy(pc, MbsDenseLUDestroy));
  PetscFunctionReturn(0);
}

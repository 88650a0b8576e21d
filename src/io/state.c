#include <errno.h>
#include <string.h>
#include <gglmbs/stepper.h>

/*@C
  MbsStepperWriteState - Writes the current state as CSV with header index,q,p: one row per coordinate,
  in input order (bodies as they appear; particle x, y, z; rigid body phi, d1, d2, d3). The file is
  written under a temporary name and renamed, so it is either complete or absent.

  Collective

  Input Parameters:
+ st - the stepper
- filename - the file

  Options Database Key:
. -mbs_write_state <file> - write the final state of MbsStepperSolve()
@*/
PetscErrorCode MbsStepperWriteState(MbsStepper st, const char filename[])
{
  Vec         q, p, q0, p0;
  VecScatter  scatter;
  MPI_Comm    comm;
  MbsModel    model;
  PetscMPIInt rank;
  int         err = 0;
  const char *provenance;

  PetscFunctionBegin;
  PetscCall(MbsStepperGetState(st, &q, &p));
  PetscCall(MbsStepperGetModel(st, &model));
  PetscCall(MbsModelGetComm(model, &comm));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(MbsModelCreateScatterToZero(model, q, &scatter, &q0));
  PetscCall(VecDuplicate(q0, &p0));
  PetscCall(VecScatterBegin(scatter, q, q0, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(scatter, q, q0, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterBegin(scatter, p, p0, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(scatter, p, p0, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(MbsStepperGetProvenance(st, &provenance));
  if (rank == 0) {
    const PetscScalar *qa, *pa;
    PetscInt           n;
    char               tmp[PETSC_MAX_PATH_LEN];
    FILE              *fp;
    PetscCall(PetscSNPrintf(tmp, sizeof(tmp), "%s.tmp", filename));
    PetscCall(VecGetLocalSize(q0, &n));
    PetscCall(VecGetArrayRead(q0, &qa));
    PetscCall(VecGetArrayRead(p0, &pa));
    fp = fopen(tmp, "w");
    if (!fp)
      err = errno;
    else {
      for (const char *line = provenance; *line && !err;) { /* the provenance as comment lines */
        const char *end = strchr(line, '\n');
        const int   len = end ? (int)(end - line) : (int)strlen(line);
        if (fprintf(fp, "# %.*s\n", len, line) < 0) err = errno ? errno : EIO;
        line += len + (end ? 1 : 0);
      }
      if (!err && fprintf(fp, "index,q,p\n") < 0) err = errno ? errno : EIO;
      for (PetscInt i = 0; i < n && !err; i++)
        if (fprintf(fp, "%" PetscInt_FMT ",%.17g,%.17g\n", i, (double)PetscRealPart(qa[i]),
                    (double)PetscRealPart(pa[i])) < 0)
          err = errno ? errno : EIO;
      if (fclose(fp) && !err) err = errno ? errno : EIO;
      if (!err && rename(tmp, filename)) err = errno;
      if (err) remove(tmp);
    }
    PetscCall(VecRestoreArrayRead(q0, &qa));
    PetscCall(VecRestoreArrayRead(p0, &pa));
  }
  PetscCall(VecScatterDestroy(&scatter));
  PetscCall(VecDestroy(&q0));
  PetscCall(VecDestroy(&p0));
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCheck(!err, comm, PETSC_ERR_FILE_WRITE, "Cannot write state file '%s': %s", filename, strerror(err));
  PetscFunctionReturn(0);
}

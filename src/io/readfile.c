#include <errno.h>
#include <stdio.h>

#include "io/readfile.h"

/* Rank 0 reads the whole file; *status is 0 or an errno value. */
static PetscErrorCode ReadFile(const char filename[], char **bytes, PetscInt64 *len, int *status)
{
  FILE  *fp;
  size_t size = 0, cap = 1 << 16;

  PetscFunctionBegin;
  *bytes  = NULL;
  *len    = 0;
  *status = 0;
  fp      = fopen(filename, "rb");
  if (!fp) {
    *status = errno ? errno : EIO;
    PetscFunctionReturn(0);
  }
  PetscCall(PetscMalloc1(cap, bytes));
  for (;;) {
    size_t got = fread(*bytes + size, 1, cap - size, fp);

    size += got;
    if (size < cap) break;
    cap *= 2;
    PetscCall(PetscRealloc(cap, bytes));
  }
  if (ferror(fp)) *status = errno ? errno : EIO;
  (void)fclose(fp);
  (*bytes)[size] = 0; /* size < cap */
  *len           = (PetscInt64)size;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsReadFileBroadcast(MPI_Comm comm, const char filename[], char **bytes, PetscMPIInt *nbytes,
                                    int *status)
{
  PetscMPIInt rank;
  PetscInt64  header[2] = {0, 0}; /* length, errno */

  PetscFunctionBegin;
  *bytes = NULL;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    int st;
    PetscCall(ReadFile(filename, bytes, &header[0], &st));
    header[1] = st;
  }
  PetscCallMPI(MPI_Bcast(header, 2, MPIU_INT64, 0, comm));
  *status = (int)header[1];
  *nbytes = 0;
  if (*status) {
    PetscCall(PetscFree(*bytes));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscMPIIntCast(header[0], nbytes));
  if (rank != 0) PetscCall(PetscMalloc1(header[0] + 1, bytes));
  PetscCallMPI(MPI_Bcast(*bytes, *nbytes + 1, MPI_CHAR, 0, comm));
  PetscFunctionReturn(0);
}

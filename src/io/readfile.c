#define _POSIX_C_SOURCE 200809L /* fileno */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "io/readfile.h"

#define MBS_READFILE_PIECE (1 << 30) /* bytes per broadcast */

/* Rank 0 reads the whole file; *status is 0, an errno value, or MBS_READFILE_NOT_REGULAR or _TOO_LARGE, checked
   before anything is read: a device (/dev/zero) or pipe would be read until memory runs out. */
static PetscErrorCode ReadFile(const char filename[], PetscInt64 limit, char **bytes, PetscInt64 *len, int *status)
{
  FILE       *fp;
  size_t      size = 0, cap = 1 << 16;
  struct stat sb;

  PetscFunctionBegin;
  *bytes  = NULL;
  *len    = 0;
  *status = 0;
  fp      = fopen(filename, "rb");
  if (!fp) {
    *status = errno ? errno : EIO;
    PetscFunctionReturn(0);
  }
  if (fstat(fileno(fp), &sb))
    *status = errno ? errno : EIO;
  else if (!S_ISREG(sb.st_mode))
    *status = MBS_READFILE_NOT_REGULAR;
  else if ((PetscInt64)sb.st_size > limit)
    *status = MBS_READFILE_TOO_LARGE;
  if (*status) {
    (void)fclose(fp);
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

PetscErrorCode MbsReadFileBroadcast(MPI_Comm comm, const char filename[], PetscInt64 limit, char **bytes,
                                    PetscInt64 *nbytes, int *status)
{
  PetscMPIInt rank;
  PetscInt64  header[2] = {0, 0}; /* length, errno */

  PetscFunctionBegin;
  *bytes = NULL;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    int st;
    PetscCall(ReadFile(filename, limit, bytes, &header[0], &st));
    header[1] = st;
  }
  PetscCallMPI(MPI_Bcast(header, 2, MPIU_INT64, 0, comm));
  *status = (int)header[1];
  *nbytes = 0;
  if (*status) {
    PetscCall(PetscFree(*bytes));
    PetscFunctionReturn(0);
  }
  *nbytes = header[0];
  if (rank != 0) PetscCall(PetscMalloc1(header[0] + 1, bytes));
  /* in pieces: an MPI count is an int, and a file may be larger than 2 GiB */
  for (PetscInt64 done = 0; done < header[0] + 1; done += MBS_READFILE_PIECE) {
    const PetscMPIInt n = (PetscMPIInt)PetscMin(header[0] + 1 - done, (PetscInt64)MBS_READFILE_PIECE);
    PetscCallMPI(MPI_Bcast(*bytes + done, n, MPI_CHAR, 0, comm));
  }
  PetscFunctionReturn(0);
}

/* What a status of MbsReadFileBroadcast() means, for messages */
const char *MbsReadFileError(int status)
{
  if (status == MBS_READFILE_NOT_REGULAR) return "not a regular file (a device, pipe or directory)";
  if (status == MBS_READFILE_TOO_LARGE) return "larger than this reader accepts";
  return strerror(status);
}

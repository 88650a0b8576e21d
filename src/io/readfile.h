/* Reading a whole input file once and sharing it with every rank (YAML inputs, Gmsh meshes). */
#ifndef MBS_READFILE_H
#define MBS_READFILE_H

#include <petscsys.h>

/* Rank 0 reads the file (a regular file of at most `limit` bytes) and broadcasts it: on every rank *bytes
   (NUL-terminated, free with PetscFree) holds its *nbytes bytes, and *status is 0; if it cannot be read, *status is the
   errno value on every rank and *bytes is NULL. Collective. */
PETSC_INTERN PetscErrorCode MbsReadFileBroadcast(MPI_Comm, const char filename[], PetscInt64 limit, char **bytes,
                                                 PetscInt64 *nbytes, int *status);
#define MBS_READFILE_NOT_REGULAR (-1) /* a status: the path is not a regular file */
#define MBS_READFILE_TOO_LARGE   (-2) /* a status: the file is larger than the limit */
PETSC_INTERN const char *MbsReadFileError(int status);

#endif

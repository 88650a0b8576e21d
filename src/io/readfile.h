/* Reading a whole input file once and sharing it with every rank (YAML inputs, Gmsh meshes). */
#ifndef MBS_READFILE_H
#define MBS_READFILE_H

#include <petscsys.h>

/* Rank 0 reads the file and broadcasts it: on every rank *bytes (NUL-terminated, free with PetscFree)
   holds its *nbytes bytes, and *status is 0; if it cannot be read, *status is the errno value on every
   rank and *bytes is NULL. Collective. */
PETSC_INTERN PetscErrorCode MbsReadFileBroadcast(MPI_Comm, const char filename[], char **bytes, PetscMPIInt *nbytes,
                                                 int *status);

#endif

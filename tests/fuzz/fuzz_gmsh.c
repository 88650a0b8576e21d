/*
  libFuzzer target: the Gmsh reader (src/io/gmsh.c, MbsGmshRead()) on its own, without a YAML file.

  Each input is written to <scratch>/input.msh and read as a mesh file is in production (rank 0 reads it
  and broadcasts it). Findings: a crash, a sanitizer report, a leak, a time-out, an error other than
  PETSC_ERR_USER_INPUT with a message starting "<file>:<line>: ", or a mesh that reads but breaks what
  the reader promises (node and edge indices in range, each edge on two distinct nodes, group nodes
  sorted and in range).
*/
#include "fuzz_common.h"

#include "io/gmsh.h"

static char scratch[PETSC_MAX_PATH_LEN], input[PETSC_MAX_PATH_LEN + 32];

static void RemoveScratch(void)
{
  (void)remove(input);
  (void)remove(scratch);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc, (void)argv;
  FuzzInitializePetsc(NULL);
  FuzzMakeDir(scratch, sizeof(scratch));
  snprintf(input, sizeof(input), "%s/input.msh", scratch);
  atexit(RemoveScratch);
  return 0;
}

static void CheckMesh(const MbsGmshMesh *mesh)
{
  PetscInt *degree;

  if (mesh->nnodes < 1) FuzzFail("a mesh without nodes was accepted", 0);
  degree = (PetscInt *)calloc((size_t)mesh->nnodes, sizeof(PetscInt));
  if (!degree) FuzzFail("out of memory", 0);
  for (PetscInt e = 0; e < mesh->nedges; e++) {
    const PetscInt a = mesh->edge[2 * e], b = mesh->edge[2 * e + 1];

    if (a < 0 || a >= mesh->nnodes || b < 0 || b >= mesh->nnodes || a == b)
      FuzzFail("an edge with a node index out of range or twice", 0);
    degree[a]++;
    degree[b]++;
  }
  for (PetscInt k = 0; k < mesh->nnodes; k++)
    if (degree[k] != mesh->node_edges[k]) FuzzFail("node_edges does not count the edges at a node", 0);
  free(degree);
  for (PetscInt g = 0; g < mesh->ngroups; g++)
    for (PetscInt k = 0; k < mesh->groups[g].nnodes; k++) {
      const PetscInt n = mesh->groups[g].nodes[k];

      if (n < 0 || n >= mesh->nnodes || (k && n <= mesh->groups[g].nodes[k - 1]))
        FuzzFail("a physical group's nodes are out of range or not sorted and unique", 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  MbsGmshMesh    mesh;
  PetscErrorCode ierr;

  FuzzWriteFile(input, data, size);
  FuzzClearError();
  ierr = MbsGmshRead(PETSC_COMM_WORLD, input, NULL, &mesh);
  if (ierr) {
    if (ierr != PETSC_ERR_USER_INPUT) FuzzFail("MbsGmshRead failed with an error that is not an input error", ierr);
    if (fuzz_error_code != ierr) FuzzFail("MbsGmshRead returned another error than the one first raised", ierr);
    if (!FuzzIsLocated(fuzz_error_message, input, 0))
      FuzzFail("MbsGmshRead failed with a message not starting with <file>:<line>: ", ierr);
    return 0;
  }
  CheckMesh(&mesh);
  if (MbsGmshMeshDestroy(&mesh)) FuzzFail("MbsGmshMeshDestroy", 0);
  return 0;
}

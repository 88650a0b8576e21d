/*
  Times the readers on their own, in the normal build: MbsModelLoadYAML() on each *.yaml file given,
  MbsGmshRead() on each other file, each the best of -repeat n runs (default 1). Prints one line per
  file: its size, the seconds, the MB/s and the outcome (the model's bodies and elements, the mesh's
  nodes and edges, or the first line of the input error). The YAML time is the reader's alone, not
  MbsModelSetUp() or the stepper's set-up. docs/robustness.md ("Fuzzing") has the figures.

    cmake --build build --target time_readers
    tests/fuzz/make_large_seeds.py --sizes 1M,50M --only yaml_particles,gmsh41_quads /tmp/big
    build/tests/time_readers -mbs_memory_limit 0 /tmp/big/yaml/yaml_particles_50M.yaml
  /tmp/big/gmsh/gmsh41_quads_50M.msh ...
*/
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <gglmbs/io.h>

#include "io/gmsh.h"

static char           error_message[160];
static PetscErrorCode error_code;

static PetscErrorCode CaptureError(MPI_Comm comm, int line, const char *func, const char *file, PetscErrorCode code,
                                   PetscErrorType type, const char *message, void *ctx)
{
  (void)comm, (void)line, (void)func, (void)file, (void)ctx;
  if (type == PETSC_ERROR_INITIAL && !error_code) {
    error_code = code;
    snprintf(error_message, sizeof(error_message), "%s", message ? message : "");
    error_message[strcspn(error_message, "\n")] = 0;
  }
  return code;
}

static PetscErrorCode ReadOnce(const char file[], PetscBool yaml, char outcome[], size_t size)
{
  PetscErrorCode ierr;

  PetscFunctionBegin;
  error_code       = 0;
  error_message[0] = 0;
  if (yaml) {
    MbsModel     model;
    MbsRunConfig cfg;
    PetscInt     nb = 0, ne = 0;

    PetscCall(MbsModelCreate(PETSC_COMM_WORLD, &model));
    ierr = MbsModelLoadYAML(model, file, &cfg);
    if (!ierr) {
      PetscCall(MbsModelGetNumBodies(model, &nb));
      PetscCall(MbsModelGetNumElements(model, &ne));
      snprintf(outcome, size, "%" PetscInt_FMT " bodies, %" PetscInt_FMT " elements", nb, ne);
    }
    PetscCall(MbsModelDestroy(&model));
  } else {
    MbsGmshMesh mesh;

    ierr = MbsGmshRead(PETSC_COMM_WORLD, file, NULL, &mesh);
    if (!ierr) {
      snprintf(outcome, size, "%" PetscInt_FMT " nodes, %" PetscInt_FMT " edges, %" PetscInt_FMT " groups", mesh.nnodes,
               mesh.nedges, mesh.ngroups);
      PetscCall(MbsGmshMeshDestroy(&mesh));
    }
  }
  if (ierr) snprintf(outcome, size, "error %d: %.120s", (int)ierr, error_message);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt repeat = 1;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-repeat", &repeat, NULL));
  PetscCall(PetscPushErrorHandler(CaptureError, NULL));
  for (int i = 1; i < argc; i++) {
    const char     *file = argv[i], *dot = strrchr(argv[i], '.');
    const PetscBool yaml = (PetscBool)(dot && !strcmp(dot, ".yaml"));
    struct stat     sb;
    PetscLogDouble  best         = -1;
    char            outcome[256] = "";

    if (file[0] == '-') { /* an option and its value */
      if (i + 1 < argc && argv[i + 1][0] != '-') i++;
      continue;
    }
    if (stat(file, &sb)) {
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: cannot stat\n", file));
      continue;
    }
    for (PetscInt k = 0; k < repeat; k++) {
      PetscLogDouble t0, t1;

      PetscCall(PetscTime(&t0));
      PetscCall(ReadOnce(file, yaml, outcome, sizeof(outcome)));
      PetscCall(PetscTime(&t1));
      if (best < 0 || t1 - t0 < best) best = t1 - t0;
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-50s %11lld B %9.4f s %8.2f MB/s  %s\n", file, (long long)sb.st_size,
                          best, (double)sb.st_size / 1e6 / PetscMax(best, 1e-9), outcome));
  }
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscFinalize());
  return 0;
}

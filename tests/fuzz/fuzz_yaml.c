/*
  libFuzzer target: the YAML reader and the model builder (MbsModelLoadYAML(), MbsModelSetUp(), and
  the stepper's set-up with the scheme the input names).

  Each input is written to <scratch>/work/input.yaml, next to links to the project's meshes, so that the
  reader runs as in production (rank 0 reads the file and broadcasts it) and a mesh named in the input
  resolves as it does from the seed corpus: 'mesh/<f>.msh' (tests/inputs/bad/mesh), '../mesh/<f>.msh'
  (tests/inputs/mesh) and '../meshes/<f>.msh' (meshes/). GGLMBS_SOURCE_DIR names the source tree.

  Findings: a crash, a sanitizer report, a leak, a time-out, or an error that is not a located input
  error: PETSC_ERR_USER_INPUT or PETSC_ERR_FILE_OPEN (a mesh file that cannot be read) with a message
  starting "<input.yaml>:<line>:<column>: ". The model must also fit the memory limit set below
  (-mbs_memory_limit), so that a count of 10^9 is refused before anything is allocated.
*/
#include "fuzz_common.h"

#include <gglmbs/io.h>
#include <gglmbs/stepper.h>

static char scratch[PETSC_MAX_PATH_LEN], input[PETSC_MAX_PATH_LEN + 32];

static void Link(const char source[], const char relative[], const char link[])
{
  char target[PETSC_MAX_PATH_LEN], path[2 * PETSC_MAX_PATH_LEN];

  snprintf(target, sizeof(target), "%s/%s", source, relative);
  snprintf(path, sizeof(path), "%s/%s", scratch, link);
  if (symlink(target, path)) FuzzFail("cannot link the meshes into the scratch directory", 0);
}

static void RemoveScratch(void)
{
  const char *const names[] = {"work/input.yaml", "work/mesh", "mesh", "meshes", "work", NULL};
  char              path[2 * PETSC_MAX_PATH_LEN];

  for (int i = 0; names[i]; i++) {
    snprintf(path, sizeof(path), "%s/%s", scratch, names[i]);
    (void)remove(path);
  }
  (void)remove(scratch);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  /* a small limit: models the size estimate refuses are refused at once instead of filling the memory */
  const char *const options[] = {"-mbs_memory_limit", "128MiB", NULL};
  const char       *source    = getenv("GGLMBS_SOURCE_DIR");
  char              work[PETSC_MAX_PATH_LEN + 8];

  (void)argc, (void)argv;
  if (!source) {
    fprintf(stderr, "fuzz_yaml: set GGLMBS_SOURCE_DIR to the source tree (its meshes are linked next to each input)\n");
    abort();
  }
  FuzzInitializePetsc(options);
  FuzzMakeDir(scratch, sizeof(scratch));
  snprintf(work, sizeof(work), "%s/work", scratch);
  if (mkdir(work, 0700)) FuzzFail("cannot create the scratch directory", 0);
  Link(source, "tests/inputs/bad/mesh", "work/mesh");
  Link(source, "tests/inputs/mesh", "mesh");
  Link(source, "meshes", "meshes");
  snprintf(input, sizeof(input), "%s/input.yaml", work);
  atexit(RemoveScratch);
  return 0;
}

static void CheckLocated(const char what[], PetscErrorCode ierr, PetscBool file_open_ok)
{
  char finding[128];

  if (!(ierr == PETSC_ERR_USER_INPUT || (file_open_ok && ierr == PETSC_ERR_FILE_OPEN))) {
    snprintf(finding, sizeof(finding), "%s failed with an error that is not an input error", what);
    FuzzFail(finding, ierr);
  }
  if (fuzz_error_code != ierr) {
    snprintf(finding, sizeof(finding), "%s returned another error than the one first raised", what);
    FuzzFail(finding, ierr);
  }
  if (!FuzzIsLocated(fuzz_error_message, input, 1)) {
    snprintf(finding, sizeof(finding), "%s failed with a message not starting with %s:<line>:<column>: ", what, input);
    FuzzFail(finding, ierr);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  MbsModel       model = NULL;
  MbsStepper     st    = NULL;
  MbsRunConfig   cfg;
  PetscErrorCode ierr;

  FuzzWriteFile(input, data, size);
  FuzzClearError();
  if (MbsModelCreate(PETSC_COMM_WORLD, &model)) FuzzFail("MbsModelCreate", 0);
  ierr = MbsModelLoadYAML(model, input, &cfg);
  if (ierr)
    CheckLocated("MbsModelLoadYAML", ierr, PETSC_TRUE);
  else {
    ierr = MbsModelSetUp(model);
    if (ierr) CheckLocated("MbsModelSetUp", ierr, PETSC_FALSE);
  }
  if (!ierr) {
    /* what the program does with a loaded model, up to its first step (no output is written) */
    ierr = MbsStepperCreate(model, &st);
    if (!ierr) ierr = MbsStepperSetType(st, cfg.scheme);
    for (PetscInt i = 0; !ierr && i < cfg.nparams; i++)
      ierr = MbsStepperSetSchemeParameter(st, cfg.param_name[i], cfg.param_value[i]);
    if (!ierr) ierr = MbsStepperSetTimeStep(st, cfg.dt);
    if (!ierr) ierr = MbsStepperSetFinalTime(st, cfg.t_end);
    if (!ierr) ierr = MbsStepperSetUp(st);
    if (ierr) FuzzFail("the stepper's set-up failed on a model that loaded and set up", ierr);
    if (MbsStepperDestroy(&st)) FuzzFail("MbsStepperDestroy", 0);
  }
  FuzzClearError();
  if (MbsModelDestroy(&model)) FuzzFail("MbsModelDestroy", 0);
  return 0;
}

/*
  Regression inputs found by fuzzing (tests/fuzz/, scripts/fuzz.sh; docs/robustness.md), replayed in the
  normal build. Each YAML input in tests/inputs/fuzz/yaml either loads and sets up, or fails with
  PETSC_ERR_USER_INPUT and a message starting "<file>:<line>:<column>: "; each mesh in
  tests/inputs/fuzz/gmsh is read by MbsGmshRead() directly and fails with "<file>:<line>: ". The exact
  place and a phrase of each message are checked, so that the bug a file once triggered (which without
  sanitizers may have given some other error, or none) shows up as a different message. Every file in
  those directories must have an entry here. Silent when it passes.
*/
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <gglmbs/io.h>
#include <gglmbs/stepper.h>

#include "io/gmsh.h"
#include "mbstest.h"

typedef struct {
  const char *file;         /* in tests/inputs/fuzz/yaml or tests/inputs/fuzz/gmsh */
  int         line, column; /* of the error; line 0: the input loads and sets up */
  const char *part;         /* a phrase of the message */
} FuzzInput;

/* What each input once did is in docs/robustness.md ("Inputs: fuzzing and malformed files"). */
static const FuzzInput yaml_inputs[] = {
  {"subnormal_point.yaml", 0, 0, NULL},
  {"subnormal_direction.yaml", 0, 0, NULL},
  {NULL, 0, 0, NULL},
};

static const FuzzInput gmsh_inputs[] = {
  {"entity_bounding_overflow.msh", 6, 0,
   "expected the number of bounding entities (an integer from 0 to 0), got '2147483647'"},
  {NULL, 0, 0, NULL},
};

static void ExpectContains(const char *name, const char *message, const char *part)
{
  if (!strstr(message, part)) fail_msg("%s: the message\n  %s\nlacks\n  %s", name, message, part);
}

static void TestYAML(void **state)
{
  const FuzzInput *in = (const FuzzInput *)*state;
  char             path[PETSC_MAX_PATH_LEN], relative[PETSC_MAX_PATH_LEN], where[PETSC_MAX_PATH_LEN + 64];
  MbsModel         model;
  MbsStepper       st;
  MbsRunConfig     cfg;
  PetscErrorCode   ierr;

  snprintf(relative, sizeof(relative), "tests/inputs/fuzz/yaml/%s", in->file);
  InputPath(path, sizeof(path), relative);
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  ClearError();
  ierr = MbsModelLoadYAML(model, path, &cfg);
  if (!ierr) ierr = MbsModelSetUp(model);
  if (!in->line) {
    if (ierr) fail_msg("%s: expected it to load and set up, got error %d: %s", in->file, (int)ierr, error_message);
    assert_int_equal(MbsStepperCreate(model, &st), 0);
    assert_int_equal(MbsStepperSetType(st, cfg.scheme), 0);
    assert_int_equal(MbsStepperSetTimeStep(st, cfg.dt), 0);
    assert_int_equal(MbsStepperSetFinalTime(st, cfg.t_end), 0);
    if (MbsStepperSetUp(st)) fail_msg("%s: the stepper's set-up failed: %s", in->file, error_message);
    assert_int_equal(MbsStepperDestroy(&st), 0);
  } else {
    if (ierr != PETSC_ERR_USER_INPUT || error_code != PETSC_ERR_USER_INPUT)
      fail_msg("%s: expected PETSC_ERR_USER_INPUT (%d), got %d: %s", in->file, PETSC_ERR_USER_INPUT, (int)ierr,
               error_message);
    snprintf(where, sizeof(where), "%s:%d:%d: ", path, in->line, in->column);
    if (strncmp(error_message, where, strlen(where)))
      fail_msg("%s: the message\n  %s\ndoes not start with\n  %s", in->file, error_message, where);
    ExpectContains(in->file, error_message, in->part);
  }
  assert_int_equal(MbsModelDestroy(&model), 0);
}

static void TestGmsh(void **state)
{
  const FuzzInput *in = (const FuzzInput *)*state;
  char             path[PETSC_MAX_PATH_LEN], relative[PETSC_MAX_PATH_LEN], where[PETSC_MAX_PATH_LEN + 64];
  MbsGmshMesh      mesh;
  PetscErrorCode   ierr;

  snprintf(relative, sizeof(relative), "tests/inputs/fuzz/gmsh/%s", in->file);
  InputPath(path, sizeof(path), relative);
  ClearError();
  ierr = MbsGmshRead(PETSC_COMM_WORLD, path, NULL, &mesh);
  if (!in->line) {
    if (ierr) fail_msg("%s: expected it to be read, got error %d: %s", in->file, (int)ierr, error_message);
    assert_int_equal(MbsGmshMeshDestroy(&mesh), 0);
    return;
  }
  if (ierr != PETSC_ERR_USER_INPUT || error_code != PETSC_ERR_USER_INPUT)
    fail_msg("%s: expected PETSC_ERR_USER_INPUT (%d), got %d: %s", in->file, PETSC_ERR_USER_INPUT, (int)ierr,
             error_message);
  snprintf(where, sizeof(where), "%s:%d: ", path, in->line);
  if (strncmp(error_message, where, strlen(where)))
    fail_msg("%s: the message\n  %s\ndoes not start with\n  %s", in->file, error_message, where);
  ExpectContains(in->file, error_message, in->part);
}

/* A regression input without an entry would never be replayed. */
static void TestAllListed(void **state)
{
  static const struct {
    const char      *dir;
    const FuzzInput *list;
  } dirs[] = {
    {"tests/inputs/fuzz/yaml", yaml_inputs},
    {"tests/inputs/fuzz/gmsh", gmsh_inputs},
  };

  (void)state;
  for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
    char           path[PETSC_MAX_PATH_LEN];
    DIR           *dir;
    struct dirent *entry;

    InputPath(path, sizeof(path), dirs[d].dir);
    dir = opendir(path);
    if (!dir) fail_msg("cannot list %s", path);
    while ((entry = readdir(dir))) {
      PetscBool listed = PETSC_FALSE;

      if (entry->d_name[0] == '.') continue;
      for (const FuzzInput *in = dirs[d].list; in->file; in++)
        if (!strcmp(in->file, entry->d_name)) listed = PETSC_TRUE;
      if (!listed) {
        closedir(dir);
        fail_msg("%s/%s has no entry in tests/test_fuzz.c", dirs[d].dir, entry->d_name);
      }
    }
    closedir(dir);
  }
}

int main(int argc, char **argv)
{
  struct CMUnitTest tests[256];
  size_t            n = 0;
  int               failed;

  if (PetscInitialize(&argc, &argv, NULL, NULL)) return 1;
  if (PetscPushErrorHandler(CaptureError, NULL)) return 1;
  if (!getenv("CMOCKA_XML_FILE")) {
    char        report[64];
    PetscMPIInt rank;

    if (MPI_Comm_rank(PETSC_COMM_WORLD, &rank)) return 1;
    snprintf(report, sizeof(report), "test_fuzz.%d.xml", rank);
    (void)remove(report);
    if (setenv("CMOCKA_XML_FILE", report, 1)) return 1;
  }
  cmocka_set_message_output(CM_OUTPUT_XML);
  tests[n++] = (struct CMUnitTest){"every input listed", TestAllListed, NULL, NULL, NULL};
  for (const FuzzInput *in = yaml_inputs; in->file && n < 256; in++)
    tests[n++] = (struct CMUnitTest){in->file, TestYAML, NULL, NULL, (void *)in};
  for (const FuzzInput *in = gmsh_inputs; in->file && n < 256; in++)
    tests[n++] = (struct CMUnitTest){in->file, TestGmsh, NULL, NULL, (void *)in};
  failed = _cmocka_run_group_tests("fuzz regressions", tests, n, NULL, NULL);
  if (PetscPopErrorHandler()) return 1;
  if (PetscFinalize()) return 1;
  return failed;
}

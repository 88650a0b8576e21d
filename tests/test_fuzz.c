/*
  Regression inputs found by fuzzing (tests/fuzz/, scripts/fuzz.sh; docs/robustness.md), replayed in the
  normal build, the YAML ones with the fuzz target's memory limit (128 MiB). Each YAML input in
  tests/inputs/fuzz/yaml either loads and sets up, or fails with PETSC_ERR_USER_INPUT and a message
  starting "<file>:<line>:<column>: "; each mesh in
  tests/inputs/fuzz/gmsh is read by MbsGmshRead() directly and fails with "<file>:<line>: ". The exact
  place and a phrase of each message are checked, so that the bug a file once triggered (which without
  sanitizers may have given some other error, or none) shows up as a different message. Every file in
  those directories must have an entry here.

  The time-outs of the large inputs (readers whose time grew with the square of the input's size: many
  anchors, many keys in one mapping, many generators, a mesh with many physical groups) only show at sizes
  of megabytes, so their inputs are written here instead of stored: each shape at n and 4n items, read
  (best of 3) in less than 8 times the time of the smaller one (4 when linear, 16 when quadratic).
  Silent when it passes.
*/
#define _POSIX_C_SOURCE 200809L /* setenv, mkdtemp */
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
  {"net_fixed_memory.yaml", 8, 67,
   "key 'nets[0].fixed': expected a model that fits in memory: 9 x 293 nodes, 293 of them fixed, need about 130 MiB "
   "(estimate), the limit is 128 MiB"},
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
  assert_int_equal(MbsModelSetMemoryLimit(model, 128 * (PetscInt64)1048576), 0); /* as the fuzz target's option */
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

/* ---- linear time ---- */

typedef struct {
  const char *name;
  void (*write)(FILE *, const char dir[], int n); /* the YAML input of n items (and the files it names) */
  int         n;                                  /* items of the smaller input */
  int         line, column;                       /* of the expected error; 0: the input loads */
  const char *part;
} LinearShape;

/* n bodies with anchors on their names, masses and positions, and n rods naming them by aliases */
static void WriteAnchors(FILE *fp, const char dir[], int n)
{
  (void)dir;
  fprintf(fp, "time: {step: 0.001, end: 0.01}\nbodies:\n");
  for (int i = 0; i < n; i++)
    fprintf(fp, "  - {name: &n%d a%d, type: particle, mass: &m%d 0.01, position: &x%d [0, 0, %d]}\n", i, i, i, i,
            -i - 1);
  fprintf(fp, "joints:\n  - {type: rod, bodies: [ground, *n0]}\n");
  for (int i = 1; i < n; i++) fprintf(fp, "  - {type: rod, bodies: [*n%d, *n%d], length: *m%d}\n", i - 1, i, i);
}

/* a scheme mapping of n keys (any names are read before they are checked) */
static void WriteSchemeKeys(FILE *fp, const char dir[], int n)
{
  (void)dir;
  fprintf(fp, "time: {step: 0.001, end: 0.01}\nscheme: {type: em");
  for (int i = 0; i < n; i++) fprintf(fp, ", k%d: 0", i);
  fprintf(fp, "}\nbodies: [{name: a, type: particle, mass: 1, position: [0, 0, 0]}]\n");
}

/* n bodies named like generated members, n chains, n nets and n springs between their members */
static void WriteGenerators(FILE *fp, const char dir[], int n)
{
  (void)dir;
  fprintf(fp, "time: {step: 0.001, end: 0.01}\nbodies:\n");
  for (int i = 0; i < n; i++)
    fprintf(fp, "  - {name: b%d.%d, type: particle, mass: 1, position: [%d, 5, 0]}\n", i, i, i);
  fprintf(fp, "chains:\n");
  for (int i = 0; i < n; i++)
    fprintf(fp, "  - {name: c%d, count: 1, mass: 1, length: 1, start: [%d, 0, 0], direction: [0, 0, -1]}\n", i, i);
  fprintf(fp, "nets:\n");
  for (int i = 0; i < n; i++)
    fprintf(fp, "  - {name: n%d, count: [2, 2], mass: 1, spacing: 1, origin: [%d, 2, 0], fixed: [{j: 0}]}\n", i, 3 * i);
  fprintf(fp, "springs:\n");
  for (int i = 0; i < n; i++) fprintf(fp, "  - {type: linear, bodies: [c%d.0, n%d.1.1], stiffness: 1}\n", i, i);
}

/* a Gmsh 2.2 rope of n line elements, each in a physical group of its own, named; every fourth group fixed */
static void WriteMeshGroups(FILE *fp, const char dir[], int n)
{
  char  path[PETSC_MAX_PATH_LEN];
  FILE *mesh;

  snprintf(path, sizeof(path), "%s/groups.msh", dir);
  mesh = fopen(path, "w");
  if (!mesh) fail_msg("cannot write %s", path);
  fprintf(mesh, "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n%d\n", n);
  for (int k = 0; k < n; k++) fprintf(mesh, "1 %d \"g%d\"\n", k + 1, k);
  fprintf(mesh, "$EndPhysicalNames\n$Nodes\n%d\n", n + 1);
  for (int k = 0; k <= n; k++) fprintf(mesh, "%d %d 0 0\n", k + 1, k);
  fprintf(mesh, "$EndNodes\n$Elements\n%d\n", n);
  for (int k = 0; k < n; k++) fprintf(mesh, "%d 1 2 %d %d %d %d\n", k + 1, k + 1, k + 1, k + 1, k + 2);
  fprintf(mesh, "$EndElements\n");
  if (fclose(mesh)) fail_msg("cannot write %s", path);
  fprintf(fp, "time: {step: 0.001, end: 0.01}\nmeshes:\n  - {name: rope, file: groups.msh, node_mass: 0.01, fixed: [");
  for (int k = 0; k < n; k += 4) fprintf(fp, "%sg%d", k ? ", " : "", k);
  fprintf(fp, "]}\n");
}

static const LinearShape linear_shapes[] = {
  {"linear time: many anchors", WriteAnchors, 2500, 0, 0, NULL},
  {"linear time: many keys in one mapping", WriteSchemeKeys, 10000, 2, 20,
   "key 'scheme.k0': expected the key type or a parameter of scheme em"},
  {"linear time: many generators", WriteGenerators, 300, 0, 0, NULL},
  {"linear time: a mesh of many physical groups", WriteMeshGroups, 4000, 0, 0, NULL},
};

/* Seconds to read the input of n items, the best of 3; the outcome is checked. */
static double TimeShape(const LinearShape *shape, const char dir[], int n)
{
  char   path[PETSC_MAX_PATH_LEN], where[PETSC_MAX_PATH_LEN + 64];
  FILE  *fp;
  double best = -1;

  snprintf(path, sizeof(path), "%s/input.yaml", dir);
  fp = fopen(path, "w");
  if (!fp) fail_msg("cannot write %s", path);
  shape->write(fp, dir, n);
  if (fclose(fp)) fail_msg("cannot write %s", path);
  for (int k = 0; k < 3; k++) {
    MbsModel       model;
    MbsRunConfig   cfg;
    PetscLogDouble t0, t1;
    PetscErrorCode ierr;

    assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
    ClearError();
    assert_int_equal(PetscTime(&t0), 0);
    ierr = MbsModelLoadYAML(model, path, &cfg);
    assert_int_equal(PetscTime(&t1), 0);
    assert_int_equal(MbsModelDestroy(&model), 0);
    if (!shape->line && ierr)
      fail_msg("%s, %d items: expected it to load, got error %d: %s", shape->name, n, (int)ierr, error_message);
    if (shape->line) {
      snprintf(where, sizeof(where), "%s:%d:%d: ", path, shape->line, shape->column);
      if (ierr != PETSC_ERR_USER_INPUT || strncmp(error_message, where, strlen(where)))
        fail_msg("%s, %d items: expected an input error at %s, got error %d: %s", shape->name, n, where, (int)ierr,
                 error_message);
      ExpectContains(shape->name, error_message, shape->part);
    }
    if (best < 0 || t1 - t0 < best) best = t1 - t0;
  }
  return best;
}

static void TestLinearTime(void **state)
{
  const LinearShape *shape = (const LinearShape *)*state;
  char               dir[PETSC_MAX_PATH_LEN], path[PETSC_MAX_PATH_LEN + 16];
  const char        *tmp = getenv("TMPDIR");
  double             small, large;

  snprintf(dir, sizeof(dir), "%s/gglmbs-test-fuzz-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
  if (!mkdtemp(dir)) fail_msg("cannot create a scratch directory in %s", tmp && tmp[0] ? tmp : "/tmp");
  small = TimeShape(shape, dir, shape->n);
  large = TimeShape(shape, dir, 4 * shape->n);
  snprintf(path, sizeof(path), "%s/input.yaml", dir);
  (void)remove(path);
  snprintf(path, sizeof(path), "%s/groups.msh", dir);
  (void)remove(path);
  (void)remove(dir);
  if (large > 8 * small)
    fail_msg("%s: %d items read in %.3f s, %d items in %.3f s (%.1f times as long; linear: 4, quadratic: 16)",
             shape->name, shape->n, small, 4 * shape->n, large, large / small);
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
  for (size_t k = 0; k < sizeof(linear_shapes) / sizeof(linear_shapes[0]) && n < 256; k++)
    tests[n++] = (struct CMUnitTest){linear_shapes[k].name, TestLinearTime, NULL, NULL, (void *)&linear_shapes[k]};
  failed = _cmocka_run_group_tests("fuzz regressions", tests, n, NULL, NULL);
  if (PetscPopErrorHandler()) return 1;
  if (PetscFinalize()) return 1;
  return failed;
}

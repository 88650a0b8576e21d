/*
  Generators of large models: rigid chains, nets and rod networks through the C API, meshes through the
  YAML reader. The generated models have the expected bodies, elements, coordinates and constraints; their
  initial states satisfy the constraints to 1e-12; member names resolve to the right bodies; a line density
  lumps density x total rod length onto the nodes; a shared triangle edge is one rod; a physical group
  fixes exactly its nodes; and malformed mesh files fail with the YAML place, the mesh file and line, and
  what was expected. Silent when it passes.
*/
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <gglmbs/gglmbs.h>
#include "mbstest.h"

static void ExpectContains(const char *name, const char *message, const char *part)
{
  if (!strstr(message, part)) fail_msg("%s: the message\n  %s\nlacks\n  %s", name, message, part);
}

static void CheckCounts(const char *what, MbsModel model, PetscInt nbodies, PetscInt nelements, PetscInt nq,
                        PetscInt ncon)
{
  PetscInt n, q, c;

  assert_int_equal(MbsModelGetNumBodies(model, &n), 0);
  if (n != nbodies) fail_msg("%s: %" PetscInt_FMT " bodies, expected %" PetscInt_FMT, what, n, nbodies);
  assert_int_equal(MbsModelGetNumElements(model, &n), 0);
  if (n != nelements) fail_msg("%s: %" PetscInt_FMT " elements, expected %" PetscInt_FMT, what, n, nelements);
  /* the initial state satisfies every constraint on both levels to round-off */
  assert_int_equal(MbsModelSetInitialTolerance(model, 1e-12), 0);
  ClearError();
  if (MbsModelSetUp(model)) fail_msg("%s: MbsModelSetUp: %s", what, error_message);
  assert_int_equal(MbsModelGetSizes(model, NULL, &q, NULL, &c), 0);
  if (q != nq || c != ncon)
    fail_msg("%s: %" PetscInt_FMT " coordinates and %" PetscInt_FMT " constraints, expected %" PetscInt_FMT
             " and %" PetscInt_FMT,
             what, q, c, nq, ncon);
}

static void ExpectNear(const char *what, const PetscReal x[3], const PetscReal y[3], PetscReal tol)
{
  for (int i = 0; i < 3; i++)
    if (!(PetscAbsReal(x[i] - y[i]) <= tol))
      fail_msg("%s: (%.17g, %.17g, %.17g) differs from (%.17g, %.17g, %.17g) by more than %g", what, (double)x[0],
               (double)x[1], (double)x[2], (double)y[0], (double)y[1], (double)y[2], (double)tol);
}

static void ExpectBody(MbsModel model, const char name[], PetscInt expected)
{
  PetscInt body;

  assert_int_equal(MbsModelFindBody(model, name, &body), 0);
  if (body != expected)
    fail_msg("body '%s' has index %" PetscInt_FMT ", expected %" PetscInt_FMT, name, body, expected);
}

static const PetscReal link_inertia[3] = {8.5833333333333333e-9, 8.5833333333333333e-9, 5e-10};

/* Each link's end point is the next link's start point; link 0 starts at the fixed point. */
static void CheckLinks(MbsModel model, PetscInt first, PetscInt count, PetscReal length, const PetscReal start[3],
                       const PetscReal u[3])
{
  const PetscReal Xs[3] = {0, 0, -0.5 * length}, Xe[3] = {0, 0, 0.5 * length}, zero[3] = {0, 0, 0};
  PetscReal       a[3], b[3];

  assert_int_equal(MbsModelGetPointPosition(model, first, Xs, a), 0);
  ExpectNear("start of link 0", a, start, 1e-15);
  for (PetscInt i = 0; i < count; i++) {
    const PetscReal phi[3] = {start[0] + (i + 0.5) * length * u[0], start[1] + (i + 0.5) * length * u[1],
                              start[2] + (i + 0.5) * length * u[2]};

    assert_int_equal(MbsModelGetPointPosition(model, first + i, zero, a), 0);
    ExpectNear("centre of mass of a link", a, phi, 1e-14);
    if (i + 1 == count) break;
    assert_int_equal(MbsModelGetPointPosition(model, first + i, Xe, a), 0);
    assert_int_equal(MbsModelGetPointPosition(model, first + i + 1, Xs, b), 0);
    ExpectNear("joint between links", a, b, 1e-15);
  }
}

static void TestRigidChainSpherical(void **state)
{
  const PetscReal start[3] = {0.5, -1, 2}, direction[3] = {0.2, 0, -1}, g[3] = {0, 0, -9.81}, n = PetscSqrtReal(1.04);
  const PetscReal u[3] = {0.2 / n, 0, -1 / n};
  MbsModel        model;
  PetscInt        first;

  (void)state;
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  assert_int_equal(MbsModelSetGravity(model, g), 0);
  assert_int_equal(MbsModelAddRigidChain(model, "c", 7, 0.001, link_inertia, 0.01, start, direction,
                                         MBS_CHAIN_JOINT_SPHERICAL, NULL, &first),
                   0);
  assert_int_equal(first, 0);
  ExpectBody(model, "c.0", 0);
  ExpectBody(model, "c.6", 6);
  CheckLinks(model, first, 7, 0.01, start, u);
  /* per link: 6 internal constraints, a spherical joint (3) and, after set-up, a gravity element */
  CheckCounts("rigid chain, spherical", model, 7, 14, 7 * 12, 7 * 9);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

static void TestRigidChainRevolute(void **state)
{
  const PetscReal start[3] = {0, 0, 0}, direction[3] = {0.2, 0, -1}, axis[3] = {0, 1, 0.5}, n = PetscSqrtReal(1.04);
  const PetscReal u[3] = {0.2 / n, 0, -1 / n};
  MbsModel        model;
  PetscInt        first;

  (void)state;
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  /* a body before the chain: the links follow it */
  assert_int_equal(MbsModelAddParticle(model, "p", 1, start, NULL, NULL), 0);
  assert_int_equal(MbsModelAddRigidChain(model, "h", 5, 0.001, link_inertia, 0.01, start, direction,
                                         MBS_CHAIN_JOINT_REVOLUTE, axis, &first),
                   0);
  assert_int_equal(first, 1);
  ExpectBody(model, "h.4", 5);
  CheckLinks(model, first, 5, 0.01, start, u);
  /* the hinge axis is not orthogonal to the chain; the joints still start exactly closed */
  CheckCounts("rigid chain, revolute", model, 6, 10, 3 + 5 * 12, 5 * 11);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

typedef struct {
  const char    *what;
  PetscInt       count;
  PetscReal      inertia[3];
  PetscReal      direction[3];
  int            revolute;
  PetscReal      axis[3];
  PetscErrorCode code;
  const char    *message;
} RigidChainError;

static void TestRigidChainErrors(void **state)
{
  static const RigidChainError cases[] = {
    {"zero count",
     0,
     {1e-6, 1e-6, 1e-7},
     {0, 0, -1},
     0,
     {0, 0, 0},
     PETSC_ERR_ARG_OUTOFRANGE,
     "count must be positive, got 0"},
    {"negative count",
     -2,
     {1e-6, 1e-6, 1e-7},
     {0, 0, -1},
     0,
     {0, 0, 0},
     PETSC_ERR_ARG_OUTOFRANGE,
     "count must be positive, got -2"},
    {"inertia", 3, {1e-6, 1e-6, 3e-6}, {0, 0, -1}, 0, {0, 0, 0}, PETSC_ERR_ARG_OUTOFRANGE, "J3 < J1 + J2"},
    {"zero direction",
     3,
     {1e-6, 1e-6, 1e-7},
     {0, 0, 0},
     0,
     {0, 0, 0},
     PETSC_ERR_ARG_OUTOFRANGE,
     "direction must be a non-zero vector"},
    {"zero axis",
     3,
     {1e-6, 1e-6, 1e-7},
     {0, 0, -1},
     1,
     {0, 0, 0},
     PETSC_ERR_ARG_OUTOFRANGE,
     "the hinge axis must be a non-zero vector"},
    {"parallel axis",
     3,
     {1e-6, 1e-6, 1e-7},
     {0, 0, -1},
     1,
     {0, 0, 3},
     PETSC_ERR_ARG_OUTOFRANGE,
     "is parallel to the chain direction"},
  };
  const PetscReal start[3] = {0, 0, 0};

  (void)state;
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    MbsModel       model;
    PetscInt       n;
    PetscErrorCode ierr;

    assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
    ClearError();
    ierr = MbsModelAddRigidChain(model, "bad", cases[k].count, 0.001, cases[k].inertia, 0.01, start, cases[k].direction,
                                 cases[k].revolute ? MBS_CHAIN_JOINT_REVOLUTE : MBS_CHAIN_JOINT_SPHERICAL,
                                 cases[k].axis, NULL);
    if (ierr != cases[k].code)
      fail_msg("rigid chain, %s: error %d, expected %d (%s)", cases[k].what, (int)ierr, (int)cases[k].code,
               error_message);
    ExpectContains(cases[k].what, error_message, "Rigid chain 'bad'");
    ExpectContains(cases[k].what, error_message, cases[k].message);
    /* nothing was added */
    assert_int_equal(MbsModelGetNumBodies(model, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(MbsModelDestroy(&model), 0);
  }
}

static void TestNet(void **state)
{
  const PetscReal origin[3] = {1, 2, 3}, a[3] = {0.1, 0, 0}, b[3] = {0, 0.02, -0.1}, zero[3] = {0, 0, 0};
  const PetscInt  nx = 4, ny = 3, fixed[4] = {0 * 3 + 0, 1 * 3 + 0, 2 * 3 + 0, 3 * 3 + 0}; /* the edge j = 0 */
  MbsModel        model;
  PetscInt        first, body;
  PetscReal       x[3];

  (void)state;
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  assert_int_equal(MbsModelAddNet(model, "n", nx, ny, 0.01, origin, a, b, 4, fixed, &first), 0);
  for (PetscInt i = 0; i < nx; i++)
    for (PetscInt j = 0; j < ny; j++) {
      char            name[32];
      const PetscReal expected[3] = {origin[0] + i * a[0] + j * b[0], origin[1] + i * a[1] + j * b[1],
                                     origin[2] + i * a[2] + j * b[2]};

      snprintf(name, sizeof(name), "n.%" PetscInt_FMT ".%" PetscInt_FMT, i, j);
      ExpectBody(model, name, first + i * ny + j);
      assert_int_equal(MbsModelGetPointPosition(model, first + i * ny + j, zero, x), 0);
      ExpectNear(name, x, expected, 1e-15);
    }
  assert_int_equal(MbsModelFindBody(model, "n.4.0", &body), 0);
  assert_int_equal(body, -2);
  /* rods: 3 x 3 along i and 4 x 2 along j, less the 3 between the fixed nodes of the edge; 4 fixed points */
  CheckCounts("net", model, 12, 14 + 4, 36, 14 + 4 * 3);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

static void TestNetErrors(void **state)
{
  const PetscReal origin[3] = {0, 0, 0}, a[3] = {0.1, 0, 0}, b[3] = {0, 0.1, 0}, parallel[3] = {-0.2, 0, 0};
  const PetscInt  twice[2] = {1, 1}, outside[1] = {12};
  struct {
    const char      *what;
    PetscInt         nx, nfixed;
    const PetscReal *b;
    const PetscInt  *fixed;
    PetscErrorCode   code;
    const char      *message;
  } cases[] = {
    {"zero count", 0, 0, b, NULL, PETSC_ERR_ARG_OUTOFRANGE, "the node counts must be positive, got 0 x 3"},
    {"parallel edges", 4, 0, parallel, NULL, PETSC_ERR_ARG_OUTOFRANGE, "are parallel"},
    {"fixed twice", 4, 2, b, twice, PETSC_ERR_ARG_WRONG, "node 1 is listed twice as fixed"},
    {"fixed outside", 4, 1, b, outside, PETSC_ERR_ARG_OUTOFRANGE, "fixed node 12 does not exist (nodes 0..11)"},
  };

  (void)state;
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    MbsModel       model;
    PetscInt       n;
    PetscErrorCode ierr;

    assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
    ClearError();
    ierr =
      MbsModelAddNet(model, "bad", cases[k].nx, 3, 0.01, origin, a, cases[k].b, cases[k].nfixed, cases[k].fixed, NULL);
    if (ierr != cases[k].code)
      fail_msg("net, %s: error %d, expected %d (%s)", cases[k].what, (int)ierr, (int)cases[k].code, error_message);
    ExpectContains(cases[k].what, error_message, "Net 'bad'");
    ExpectContains(cases[k].what, error_message, cases[k].message);
    assert_int_equal(MbsModelGetNumBodies(model, &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(MbsModelDestroy(&model), 0);
  }
}

/* Two triangles sharing the edge 1-2, given as five edges; rods between fixed nodes are left out. */
static void TestRodNetwork(void **state)
{
  const PetscReal x[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0.5};
  const PetscInt  id[4] = {10, 20, 30, 40}, edge[10] = {0, 1, 1, 2, 2, 0, 1, 3, 3, 2}, fixed[2] = {0, 1};
  const PetscReal zero[3] = {0, 0, 0};
  MbsModel        model;
  PetscInt        first;
  PetscReal       p[3];
  PetscErrorCode  ierr;

  (void)state;
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  assert_int_equal(MbsModelAddRodNetwork(model, "w", 4, x, id, 5, edge, 0.1, 0, 2, fixed, &first), 0);
  ExpectBody(model, "w.40", first + 3);
  assert_int_equal(MbsModelGetPointPosition(model, first + 3, zero, p), 0);
  ExpectNear("w.40", p, &x[9], 0);
  /* 5 edges less the one between the fixed nodes 0 and 1; 2 fixed points */
  CheckCounts("rod network", model, 4, 4 + 2, 12, 4 + 6);
  assert_int_equal(MbsModelDestroy(&model), 0);

  /* a node on no edge gets no mass from the line density */
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  ClearError();
  ierr = MbsModelAddRodNetwork(model, "w", 4, x, id, 2, edge, 0.1, 0, 0, NULL, NULL);
  assert_int_equal(ierr, PETSC_ERR_ARG_OUTOFRANGE);
  ExpectContains("isolated node", error_message, "node 40 gets no mass");
  assert_int_equal(MbsModelDestroy(&model), 0);

  /* coincident nodes make a rod of zero length */
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  {
    const PetscReal same[6] = {0, 0, 0, 0, 0, 0};

    ClearError();
    ierr = MbsModelAddRodNetwork(model, "w", 2, same, NULL, 1, edge, 0.1, 0, 0, NULL, NULL);
  }
  assert_int_equal(ierr, PETSC_ERR_ARG_OUTOFRANGE);
  ExpectContains("coincident nodes", error_message, "at the same position");
  assert_int_equal(MbsModelDestroy(&model), 0);
}

static void LoadYAML(const char relative[], MbsModel *model)
{
  char         path[PETSC_MAX_PATH_LEN];
  MbsRunConfig cfg;

  InputPath(path, sizeof(path), relative);
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, model), 0);
  ClearError();
  if (MbsModelLoadYAML(*model, path, &cfg)) fail_msg("%s: %s", relative, error_message);
}

/* A YAML file with one mesh item of tests/inputs/mesh, written to the working directory. */
static void WriteMeshYAML(char path[], size_t size, const char mesh[], const char keys[])
{
  char  relative[PETSC_MAX_PATH_LEN], file[PETSC_MAX_PATH_LEN];
  FILE *fp;

  snprintf(relative, sizeof(relative), "tests/inputs/mesh/%s", mesh);
  InputPath(file, sizeof(file), relative);
  snprintf(path, size, "test_generators_%d.yaml", (int)getpid());
  fp = fopen(path, "w");
  if (!fp) fail_msg("cannot write %s", path);
  fprintf(fp, "time: {step: 0.001, end: 0.001}\ngravity: [0, 0, -1]\nmeshes:\n  - {name: m, file: %s, %s}\n", file,
          keys);
  fclose(fp);
}

static void LoadMesh(const char mesh[], const char keys[], MbsModel *model)
{
  char         path[PETSC_MAX_PATH_LEN];
  MbsRunConfig cfg;

  WriteMeshYAML(path, sizeof(path), mesh, keys);
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, model), 0);
  ClearError();
  if (MbsModelLoadYAML(*model, path, &cfg)) {
    remove(path);
    fail_msg("%s {%s}: %s", mesh, keys, error_message);
  }
  remove(path);
}

/* Gravity (0, 0, -1) and every node at z = 1: the potential energy is the total mass. */
static PetscReal TotalMass(MbsModel model)
{
  MbsStepper     st;
  MbsDiagnostics d;

  ClearError();
  if (MbsModelSetUp(model)) fail_msg("MbsModelSetUp: %s", error_message);
  assert_int_equal(MbsStepperCreate(model, &st), 0);
  assert_int_equal(MbsStepperSetTimeStep(st, 1e-3), 0);
  assert_int_equal(MbsStepperSetUp(st), 0);
  assert_int_equal(MbsStepperComputeDiagnostics(st, &d), 0);
  assert_int_equal(MbsStepperDestroy(&st), 0);
  return d.V;
}

static void TestMeshMass(void **state)
{
  /* net5x4: 5 x 4 nodes 0.1 apart, 4 x 4 + 5 x 3 = 31 quadrangle edges; the triangles add 4 x 3 diagonals */
  const PetscReal length_quad = 3.1, length_tri = 3.1 + 12 * 0.1 * PetscSqrtReal(2.0);
  struct {
    const char *mesh, *keys;
    PetscReal   mass;
  } cases[] = {
    {"net5x4_quad41.msh", "line_density: 0.2, translation: [0, 0, 1]", 0.2 * length_quad},
    {"net5x4_tri22.msh", "line_density: 0.2, translation: [0, 0, 1]", 0.2 * length_tri},
    {"net5x4_quad41.msh", "line_density: 0.2, node_mass: 0.01, translation: [0, 0, 1]", 0.2 * length_quad + 20 * 0.01},
    {"net5x4_quad41.msh", "node_mass: 0.01, translation: [0, 0, 1]", 20 * 0.01},
    /* scale 2 doubles every rod */
    {"net5x4_quad41.msh", "line_density: 0.2, scale: 2, translation: [0, 0, 1]", 0.4 * length_quad},
  };

  (void)state;
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    MbsModel  model;
    PetscReal mass;

    LoadMesh(cases[k].mesh, cases[k].keys, &model);
    mass = TotalMass(model);
    if (PetscAbsReal(mass - cases[k].mass) > 1e-14 * cases[k].mass)
      fail_msg("%s {%s}: total mass %.17g, expected %.17g", cases[k].mesh, cases[k].keys, (double)mass,
               (double)cases[k].mass);
    assert_int_equal(MbsModelDestroy(&model), 0);
  }
}

/* Shared edges of triangles and quadrangles, and the lines on them, are one rod each. */
static void TestMeshEdges(void **state)
{
  struct {
    const char *mesh;
    PetscInt    nodes, rods;
  } cases[] = {
    {"gmsh_square_tri41.msh", 12, 25}, /* Gmsh's own output: 14 triangles, 8 boundary nodes: E = 3 V - B - 3 */
    {"gmsh_square_tri22.msh", 12, 25}, {"net5x4_quad41.msh", 20, 31},
    {"net5x4_tri22.msh", 20, 43},      {"rope_tags41.msh", 3, 2},
  };

  (void)state;
  for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
    MbsModel model;

    LoadMesh(cases[k].mesh, "line_density: 1", &model);
    CheckCounts(cases[k].mesh, model, cases[k].nodes, cases[k].rods, 3 * cases[k].nodes, cases[k].rods);
    assert_int_equal(MbsModelDestroy(&model), 0);
  }
}

/* The same mesh in formats 4.1 and 2.2 gives the same particles under the same names. */
static void TestMeshFormats(void **state)
{
  MbsModel        m41, m22;
  const PetscReal zero[3] = {0, 0, 0};

  (void)state;
  LoadMesh("gmsh_square_tri41.msh", "line_density: 1", &m41);
  LoadMesh("gmsh_square_tri22.msh", "line_density: 1", &m22);
  for (PetscInt tag = 1; tag <= 12; tag++) {
    char      name[32];
    PetscInt  a, b;
    PetscReal xa[3], xb[3];

    snprintf(name, sizeof(name), "m.%" PetscInt_FMT, tag);
    assert_int_equal(MbsModelFindBody(m41, name, &a), 0);
    assert_int_equal(MbsModelFindBody(m22, name, &b), 0);
    assert_true(a >= 0 && b >= 0);
    assert_int_equal(MbsModelGetPointPosition(m41, a, zero, xa), 0);
    assert_int_equal(MbsModelGetPointPosition(m22, b, zero, xb), 0);
    ExpectNear(name, xa, xb, 0);
  }
  assert_int_equal(MbsModelDestroy(&m41), 0);
  assert_int_equal(MbsModelDestroy(&m22), 0);
}

/* Sparse node tags name the particles; scale, orientation and translation place them. */
static void TestMeshPlacement(void **state)
{
  MbsModel        model;
  const PetscReal zero[3] = {0, 0, 0}, expected[3] = {1, 2 + 2 * 0.1, 3}; /* x -> y, scaled by 2 */
  PetscInt        body;
  PetscReal       x[3];

  (void)state;
  LoadMesh("rope_tags41.msh",
           "node_mass: 1, scale: 2, orientation: {axis: [0, 0, 1], angle: 1.5707963267948966}, translation: [1, 2, 3]",
           &model);
  assert_int_equal(MbsModelFindBody(model, "m.42", &body), 0);
  assert_true(body >= 0);
  assert_int_equal(MbsModelGetPointPosition(model, body, zero, x), 0);
  ExpectNear("m.42", x, expected, 1e-15);
  assert_int_equal(MbsModelFindBody(model, "m.1000", &body), 0);
  assert_true(body >= 0);
  assert_int_equal(MbsModelFindBody(model, "m.1", &body), 0);
  assert_int_equal(body, -2);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

/* The nodes of the group "top" (y = 0) stay where they are while the rest of the horizontal net falls. */
static void TestMeshFixedGroup(void **state)
{
  MbsModel           model;
  MbsStepper         st;
  Vec                q, p, all;
  VecScatter         scatter;
  const PetscScalar *a;
  PetscReal          x0[20][3];
  const PetscReal    zero[3] = {0, 0, 0};
  PetscInt           nbodies, nfixed = 0;

  (void)state;
  LoadMesh("net5x4_quad41.msh", "line_density: 0.2, fixed: [top]", &model);
  assert_int_equal(MbsModelGetNumBodies(model, &nbodies), 0);
  assert_int_equal(nbodies, 20);
  for (PetscInt b = 0; b < nbodies; b++) assert_int_equal(MbsModelGetPointPosition(model, b, zero, x0[b]), 0);
  /* 31 rods less the 4 between the 5 fixed nodes, and 5 fixed points */
  CheckCounts("fixed group", model, 20, 27 + 5, 60, 27 + 15);
  assert_int_equal(MbsStepperCreate(model, &st), 0);
  assert_int_equal(MbsStepperSetTimeStep(st, 1e-3), 0);
  assert_int_equal(MbsStepperSetUp(st), 0);
  ClearError();
  if (MbsStepperStep(st)) fail_msg("step: %s", error_message);
  assert_int_equal(MbsStepperGetState(st, &q, &p), 0);
  assert_int_equal(MbsModelCreateScatterToZero(model, q, &scatter, &all), 0);
  assert_int_equal(VecScatterBegin(scatter, q, all, INSERT_VALUES, SCATTER_FORWARD), 0);
  assert_int_equal(VecScatterEnd(scatter, q, all, INSERT_VALUES, SCATTER_FORWARD), 0);
  assert_int_equal(VecGetArrayRead(all, &a), 0);
  for (PetscInt b = 0; b < nbodies; b++) {
    const PetscReal dz = PetscRealPart(a[3 * b + 2]) - x0[b][2];

    if (x0[b][1] == 0) {
      nfixed++;
      for (int i = 0; i < 3; i++)
        if (PetscAbsReal(PetscRealPart(a[3 * b + i]) - x0[b][i]) > 1e-14)
          fail_msg("fixed node %" PetscInt_FMT " moved by %g", b, (double)(PetscRealPart(a[3 * b + i]) - x0[b][i]));
    } else if (!(dz < -1e-8))
      fail_msg("free node %" PetscInt_FMT " did not fall: dz = %g", b, (double)dz);
  }
  assert_int_equal(nfixed, 5);
  assert_int_equal(VecRestoreArrayRead(all, &a), 0);
  assert_int_equal(VecScatterDestroy(&scatter), 0);
  assert_int_equal(VecDestroy(&all), 0);
  assert_int_equal(MbsStepperDestroy(&st), 0);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

/* Every generator at once from YAML: members resolve to the right bodies. */
static void TestGeneratorsYAML(void **state)
{
  MbsModel        model;
  const PetscReal zero[3] = {0, 0, 0}, end[3] = {0, 0, 0.0125};
  PetscInt        weight, link3, net23, sheet20;
  PetscReal       x[3], y[3];

  (void)state;
  LoadYAML("tests/inputs/good/generators.yaml", &model);
  assert_int_equal(MbsModelFindBody(model, "weight", &weight), 0);
  assert_int_equal(MbsModelFindBody(model, "links.3", &link3), 0);
  assert_int_equal(MbsModelFindBody(model, "net.2.3", &net23), 0);
  assert_int_equal(MbsModelFindBody(model, "sheet.20", &sheet20), 0);
  assert_true(weight >= 0 && link3 >= 0 && net23 >= 0 && sheet20 >= 0);
  /* the spherical joint [links.3, weight] closes at the end of the last link */
  assert_int_equal(MbsModelGetPointPosition(model, link3, end, x), 0);
  assert_int_equal(MbsModelGetPointPosition(model, weight, zero, y), 0);
  ExpectNear("end of links.3", x, y, 1e-15);
  /* net node (2, 3): origin + 2 (0.1, 0, 0) + 3 (0, 0.05, 0) */
  assert_int_equal(MbsModelGetPointPosition(model, net23, zero, x), 0);
  {
    const PetscReal expected[3] = {3.2, 0.15, 0};

    ExpectNear("net.2.3", x, expected, 1e-15);
  }
  /* tag 20 is the last interior node of net5x4, (i, j) = (3, 2), scaled by 0.5 and moved by (5, 0, 0) */
  assert_int_equal(MbsModelGetPointPosition(model, sheet20, zero, x), 0);
  {
    const PetscReal expected[3] = {5.15, 0.1, 0};

    ExpectNear("sheet.20", x, expected, 1e-15);
  }
  /* bodies: 1 + 3 + 4 + 3 + 12 + 3 + 20; constraints: rope 3, links 4 x 9, hinge 3 x 11, net 17 + 2 x 3,
     rope2 2 + 3, sheet 27 + 5 x 3, joints 3 + 1 + 1 */
  {
    PetscInt n;

    assert_int_equal(MbsModelGetNumBodies(model, &n), 0);
    assert_int_equal(n, 46);
  }
  CheckCounts("generators.yaml", model, 46, 75, 39 * 3 + 7 * 12, 3 + 36 + 33 + 23 + 5 + 42 + 5);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

/* Every generator refuses a model over the memory limit before it adds anything, with the estimate and
   the limit; the estimate grows with the model and a limit of 0 means none. */
static void TestMemoryLimit(void **state)
{
  const PetscReal origin[3] = {0, 0, 0}, a[3] = {0.1, 0, 0}, b[3] = {0, 0.1, 0}, down[3] = {0, 0, -1},
                  J[3]    = {1e-6, 1e-6, 1e-7};
  const PetscReal x[6]    = {0, 0, 0, 1, 0, 0};
  const PetscInt  edge[2] = {0, 1};
  PetscReal       small, large;

  (void)state;
  for (int k = 0; k < 4; k++) {
    static const char *const what[4] = {"Chain 'big'", "Rigid chain 'big'", "Net 'big'", "Rod network 'big'"};
    MbsModel                 model;
    PetscInt                 n;
    PetscErrorCode           ierr = 0;

    assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
    assert_int_equal(MbsModelSetMemoryLimit(model, 50 * 1048576), 0);
    ClearError();
    switch (k) {
      case 0: ierr = MbsModelAddChain(model, "big", 100000, 0.001, 0.01, origin, down, NULL); break;
      case 1:
        ierr = MbsModelAddRigidChain(model, "big", 10000, 0.001, J, 0.01, origin, down, MBS_CHAIN_JOINT_SPHERICAL, NULL,
                                     NULL);
        break;
      case 2: ierr = MbsModelAddNet(model, "big", 300, 300, 0.01, origin, a, b, 0, NULL, NULL); break;
      default: ierr = MbsModelAddRodNetwork(model, "big", 2, x, NULL, 1, edge, 1, 0, 0, NULL, NULL); break;
    }
    if (k < 3) {
      if (ierr != PETSC_ERR_MEM)
        fail_msg("%s: error %d, expected PETSC_ERR_MEM (%s)", what[k], (int)ierr, error_message);
      ExpectContains(what[k], error_message, what[k]);
      ExpectContains(what[k], error_message, "the model would not fit: need about ");
      ExpectContains(what[k], error_message, "(estimate), the limit is 50 MiB (MbsModelSetMemoryLimit())");
      assert_int_equal(MbsModelGetNumBodies(model, &n), 0);
      assert_int_equal(n, 0);
    } else if (ierr)
      fail_msg("%s: a two-node network fits in 50 MiB: %s", what[k], error_message);
    assert_int_equal(MbsModelDestroy(&model), 0);
  }
  /* the estimate grows with the model; without a limit the same chain is added */
  for (int k = 0; k < 2; k++) {
    MbsModel model;

    assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
    assert_int_equal(MbsModelSetMemoryLimit(model, 0), 0);
    assert_int_equal(MbsModelAddChain(model, "c", k ? 20000 : 10000, 0.001, 0.01, origin, down, NULL), 0);
    assert_int_equal(MbsModelEstimateMemory(model, k ? &large : &small), 0);
    assert_int_equal(MbsModelDestroy(&model), 0);
  }
  if (!(small > 0 && large > 1.5 * small - 48 * 1048576))
    fail_msg("estimates %g and %g bytes for 10^4 and 2 10^4 particles", (double)small, (double)large);
  { /* one rank factors a chain with KLU, which needs less than UMFPACK (-mbs_klu 0); several ranks hold more */
    PetscReal   est[2];
    PetscMPIInt size;
    assert_int_equal(MPI_Comm_size(PETSC_COMM_WORLD, &size), 0);
    for (int k = 0; k < 2; k++) {
      MbsModel model;
      assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
      assert_int_equal(MbsModelSetMemoryLimit(model, 0), 0);
      if (k) assert_int_equal(PetscOptionsSetValue(NULL, "-mbs_klu", "0"), 0);
      assert_int_equal(MbsModelAddChain(model, "c", 100000, 0.001, 0.01, origin, down, NULL), 0);
      assert_int_equal(MbsModelEstimateMemory(model, &est[k]), 0);
      if (k) assert_int_equal(PetscOptionsClearValue(NULL, "-mbs_klu"), 0);
      assert_int_equal(MbsModelDestroy(&model), 0);
    }
    if (size == 1 && !(est[0] < 0.8 * est[1]))
      fail_msg("a chain of 10^5 on one rank: %g bytes with KLU (the default), %g with -mbs_klu 0: expected KLU's "
               "smaller factors in the first",
               (double)est[0], (double)est[1]);
    if (size > 1 && est[0] != est[1])
      fail_msg("a chain of 10^5 on %d ranks: %g bytes (default), %g with -mbs_klu 0: expected the same", (int)size,
               (double)est[0], (double)est[1]);
  }
  /* A net counts the LU's 2-D fill only when LU solves it: below 200000 unknowns (the default) or with -mbs_solver lu.
     From there the default is the Schur-AMG preconditioner, which has none (docs/input.md), and the estimate is that
     of the same model without the fill: 4 log2(n) bytes per nonzero fewer. */
  for (int k = 0; k < 2; k++) {
    const PetscInt side = k ? 160 : 100; /* 10^5 and 2.56 10^5 unknowns */
    PetscReal      est[2];
    for (int lu = 0; lu < 2; lu++) {
      MbsModel model;
      assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
      assert_int_equal(MbsModelSetMemoryLimit(model, 0), 0);
      if (lu) assert_int_equal(PetscOptionsSetValue(NULL, "-mbs_solver", "lu"), 0);
      assert_int_equal(MbsModelAddNet(model, "net", side, side, 0.01, origin, a, b, 0, NULL, NULL), 0);
      assert_int_equal(MbsModelEstimateMemory(model, &est[lu]), 0);
      if (lu) assert_int_equal(PetscOptionsClearValue(NULL, "-mbs_solver"), 0);
      assert_int_equal(MbsModelDestroy(&model), 0);
    }
    if (k == 0 && est[0] != est[1])
      fail_msg("a 100 x 100 net (LU either way): estimates %g (default) and %g (-mbs_solver lu) bytes", (double)est[0],
               (double)est[1]);
    if (k == 1 && !(est[0] < 0.75 * est[1]))
      fail_msg("a 160 x 160 net: %g bytes with the Schur-AMG default, %g with -mbs_solver lu: expected the LU's fill "
               "(about half the estimate) only in the second",
               (double)est[0], (double)est[1]);
  }
}

typedef struct {
  const char    *name; /* tests/inputs/bad/mesh_<name>.yaml, referring to mesh/<name>.msh */
  PetscErrorCode code;
  int            mesh_line; /* 0: the message names no line of the mesh */
  const char    *expected, *got;
} BadMesh;

static const BadMesh bad_meshes[] = {
  {"missing", PETSC_ERR_FILE_OPEN, 0, "expected a readable Gmsh mesh file",
   "no_such_mesh.msh' (No such file or directory)"},
  {"empty", PETSC_ERR_USER_INPUT, 1, "expected a Gmsh mesh starting with $MeshFormat", "got an empty file"},
  {"not_msh", PETSC_ERR_USER_INPUT, 1, "expected $MeshFormat (a Gmsh .msh file starts with it)", "got 'solid cube'"},
  {"version", PETSC_ERR_USER_INPUT, 2, "expected MSH format version 4.1 or 2.2", "got version '4'"},
  {"binary", PETSC_ERR_USER_INPUT, 2, "expected an ASCII mesh, file type 0", "got file type 1 (binary)"},
  {"truncated_nodes", PETSC_ERR_USER_INPUT, 41,
   "expected the coordinates of node 1 of 1 of the block at line 39: 'x y z'", "got the end of the file"},
  {"truncated_elements", PETSC_ERR_USER_INPUT, 67, "expected element block 8 of 9", "got the end of the file"},
  {"bad_coordinate", PETSC_ERR_USER_INPUT, 41, "expected the y coordinate (a finite number)", "got 'zero'"},
  {"short_coordinates", PETSC_ERR_USER_INPUT, 35,
   "expected the coordinates of node 1 of 1 of the block at line 33: 'x y z'", "got '2 1'"},
  {"duplicate_tag", PETSC_ERR_USER_INPUT, 37, "expected a node tag not used before",
   "got tag 1 again (first at line 28)"},
  {"missing_end", PETSC_ERR_USER_INPUT, 48, "expected $EndNodes (closing $Nodes at line 25)", "got '$Elements'"},
  {"element_fields", PETSC_ERR_USER_INPUT, 71,
   "expected element 2 of 2 of the block at line 69: 'tag' and the 4 node tags of a 4-node quadrangle",
   "got '12 5 2 3'"},
  {"element_fields22", PETSC_ERR_USER_INPUT, 36,
   "expected element 13 of 14 with 2 tags and the 3 nodes of a 3-node triangle: 8 fields", "got '13 2 2 6 1 5 2'"},
  {"unknown_node", PETSC_ERR_USER_INPUT, 71, "expected the tag of a node in $Nodes", "got node tag 99"},
  {"tetrahedron", PETSC_ERR_USER_INPUT, 69,
   "expected element type 1 (2-node line), 2 (3-node triangle), 3 (4-node quadrangle) or 15 (1-node point)",
   "got type 4 (4-node tetrahedron)"},
  {"unclosed_section", PETSC_ERR_USER_INPUT, 9, "expected $EndComments (closing $Comments at line 4)",
   "got the end of the file"},
  {"isolated_node", PETSC_ERR_USER_INPUT, 24, "expected every node on a line, triangle or quadrangle element",
   "got node 1 on none"},
  {"duplicate_name", PETSC_ERR_USER_INPUT, 10, "expected one name per physical group",
   "got dimension 0, tag 1 named again"},
  {"coincident", PETSC_ERR_USER_INPUT, 60, "expected an element whose nodes are at distinct positions",
   "got nodes 1 and 5 at the same position"},
};

static void TestBadMesh(void **state)
{
  const BadMesh *bad = (const BadMesh *)*state;
  char           path[PETSC_MAX_PATH_LEN], relative[PETSC_MAX_PATH_LEN], where[2 * PETSC_MAX_PATH_LEN + 64],
    dir[PETSC_MAX_PATH_LEN];
  MbsModel       model;
  MbsRunConfig   cfg;
  PetscErrorCode ierr;

  snprintf(relative, sizeof(relative), "tests/inputs/bad/mesh_%s.yaml", bad->name);
  InputPath(path, sizeof(path), relative);
  InputPath(dir, sizeof(dir), "tests/inputs/bad");
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  ClearError();
  ierr = MbsModelLoadYAML(model, path, &cfg);
  if (ierr != bad->code || error_code != bad->code)
    fail_msg("%s: expected error %d, got %d: %s", bad->name, (int)bad->code, (int)ierr, error_message);
  /* the YAML place that named the file comes first */
  snprintf(where, sizeof(where), "%s:3:21: key 'meshes[0].file': ", path);
  if (strncmp(error_message, where, strlen(where)))
    fail_msg("%s: the message\n  %s\ndoes not start with\n  %s", bad->name, error_message, where);
  if (bad->mesh_line) {
    snprintf(where, sizeof(where), "%s/mesh/%s.msh:%d: ", dir, bad->name, bad->mesh_line);
    ExpectContains(bad->name, error_message, where);
  }
  ExpectContains(bad->name, error_message, bad->expected);
  ExpectContains(bad->name, error_message, bad->got);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

int main(int argc, char **argv)
{
  const size_t      nbad = sizeof(bad_meshes) / sizeof(bad_meshes[0]);
  struct CMUnitTest tests[sizeof(bad_meshes) / sizeof(bad_meshes[0]) + 16];
  size_t            n = 0;
  int               failed;

  if (PetscInitialize(&argc, &argv, NULL, NULL)) return 1;
  if (PetscPushErrorHandler(CaptureError, NULL)) return 1;
  if (!getenv("CMOCKA_XML_FILE")) {
    char        report[64];
    PetscMPIInt rank;

    if (MPI_Comm_rank(PETSC_COMM_WORLD, &rank)) return 1;
    snprintf(report, sizeof(report), "test_generators.%d.xml", rank);
    (void)remove(report);
    if (setenv("CMOCKA_XML_FILE", report, 1)) return 1;
  }
  cmocka_set_message_output(CM_OUTPUT_XML);
  tests[n++] = (struct CMUnitTest){"rigid chain, spherical", TestRigidChainSpherical, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"rigid chain, revolute", TestRigidChainRevolute, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"rigid chain errors", TestRigidChainErrors, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"net", TestNet, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"net errors", TestNetErrors, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"rod network", TestRodNetwork, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"mesh mass", TestMeshMass, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"mesh edges", TestMeshEdges, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"mesh formats", TestMeshFormats, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"mesh placement", TestMeshPlacement, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"mesh fixed group", TestMeshFixedGroup, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"generators.yaml", TestGeneratorsYAML, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"memory limit", TestMemoryLimit, NULL, NULL, NULL};
  for (size_t i = 0; i < nbad; i++)
    tests[n++] = (struct CMUnitTest){bad_meshes[i].name, TestBadMesh, NULL, NULL, (void *)&bad_meshes[i]};
  failed = _cmocka_run_group_tests("generators", tests, n, NULL, NULL);
  if (PetscPopErrorHandler()) return 1;
  if (PetscFinalize()) return 1;
  return failed;
}

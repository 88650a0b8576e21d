/*
  The YAML reader: the example inputs load into the right model and run configuration, and every kind of
  bad input fails with PETSC_ERR_USER_INPUT and a message naming file:line:column, the key and what was
  expected. Input files are found through GGLMBS_SOURCE_DIR. Silent when it passes.
*/
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <gglmbs/io.h>
#include "model/modelimpl.h"
#include "mbstest.h"

typedef struct {
  const char *name; /* tests/inputs/bad/<name>.yaml */
  int         line, column;
  const char *key;      /* the key path, NULL for YAML syntax errors */
  const char *expected; /* a phrase of "expected ..." */
  const char *got;      /* a phrase of "got ..." */
} BadInput;

static const BadInput bad_inputs[] = {
  {"syntax_error", 5, 4, NULL, "invalid YAML: did not find expected '-' indicator", "line 4, column 3"},
  {"deep_nesting", 2, 70, "(document)", "nested at most 64 deep", "deeper nesting"},
  {"tagged_str_mass", 3, 39, "bodies[0].mass", "expected a positive number (mass in kg)", "the YAML tag '!!str'"},
  {"tagged_local_mass", 3, 39, "bodies[0].mass", "expected a positive number (mass in kg)", "the YAML tag '!foo'"},
  {"empty_name", 3, 12, "bodies[0].name", "a non-empty string of printable characters", "the quoted string \"\""},
  {"newline_name", 3, 12, "bodies[0].name", "a non-empty string of printable characters", "\"b\\nob\""},
  {"empty_chain_name", 3, 12, "chains[0].name", "a non-empty string of printable characters", "\"\""},
  {"unterminated_flow", 3, 7, NULL, "invalid YAML: did not find expected ',' or '}'", "flow mapping"},
  {"invalid_utf8", 4, 13, NULL, "invalid YAML: invalid leading UTF-8 octet", ""},
  {"second_document", 5, 1, "(document)", "expected a single YAML document", "a second one"},
  {"empty_document", 1, 1, "(document)", "expected a mapping", "an empty document"},
  {"top_not_mapping", 1, 1, "(document)", "expected a mapping", "a sequence of 2 items"},
  {"unknown_top_key", 2, 1, "bodys",
   "one of the keys time, scheme, gravity, bodies, chains, rigid_chains, nets, meshes, beams, joints, springs, loads, "
   "drives, output, equilibrium",
   "unknown key 'bodys'"},
  {"unknown_key", 6, 5, "bodies[0].colour", "one of the keys name, type, mass, position, velocity (particle)",
   "unknown key 'colour'"},
  {"unknown_key_rigid_on_particle", 3, 42, "bodies[0].inertia",
   "one of the keys name, type, mass, position, velocity (particle)", "unknown key 'inertia'"},
  {"duplicate_key", 7, 5, "bodies[0].mass", "each key at most once", "first at line 5, column 5"},
  {"time_not_mapping", 1, 7, "time", "expected a mapping {step: h, end: T}", "'0.05'"},
  {"bodies_not_sequence", 2, 9, "bodies", "expected a sequence of bodies", "a mapping"},
  {"mass_not_number", 3, 39, "bodies[0].mass", "expected a positive number (mass in kg)", "'heavy'"},
  {"mass_quoted", 3, 39, "bodies[0].mass", "expected a positive number", "the quoted string \"1\""},
  {"mass_sequence", 5, 11, "bodies[0].mass", "expected a positive number", "a sequence of 1 item"},
  {"mass_empty", 5, 10, "bodies[0].mass", "expected a positive number", "an empty value"},
  {"position_not_vector", 3, 52, "bodies[0].position", "expected a 3-vector [x, y, z]", "a sequence of 2 items"},
  {"position_component", 3, 56, "bodies[0].position[1]", "expected a finite number", "'zero'"},
  {"matrix_not_3x3", 8, 27, "bodies[0].orientation.matrix", "expected a 3x3 matrix", "a sequence of 2 items"},
  {"matrix_row", 11, 11, "bodies[0].orientation.matrix[1]", "expected a matrix row", "a sequence of 2 items"},
  {"missing_time", 2, 1, "time", "expected a mapping {step: h, end: T}", "the key is missing"},
  {"missing_step", 1, 7, "time.step", "expected a positive number (time step in s)", "the key is missing"},
  {"missing_mass", 3, 5, "bodies[0].mass", "expected a positive number (mass in kg)", "the key is missing"},
  {"missing_name", 3, 5, "bodies[0].name", "expected a body name", "the key is missing"},
  {"nan_velocity", 3, 74, "bodies[0].velocity[0]", "expected a finite number", "'.nan'"},
  {"inf_end", 1, 25, "time.end", "expected a positive number (final time in s)", "'.inf'"},
  {"overflow_gravity", 2, 17, "gravity[2]", "expected a finite number", "'-1e400'"},
  {"negative_mass", 3, 39, "bodies[0].mass", "expected a positive number (mass in kg)", "'-1'"},
  {"zero_inertia", 3, 52, "bodies[0].inertia[1]", "expected a positive number (principal moment of inertia", "'0'"},
  {"inertia_triangle", 3, 48, "bodies[0].inertia", "expected principal moments with J_i < J_j + J_k",
   "J3 = 2 >= J1 + J2 = 2"},
  {"zero_step", 1, 14, "time.step", "expected a positive number (time step in s)", "'0'"},
  {"negative_end", 3, 8, "time.end", "expected a positive number (final time in s)", "'-10'"},
  {"zero_rod_length", 5, 48, "joints[0].length", "expected a positive number (rod length in m)", "'0'"},
  {"beams_load_overflow", 18, 19, "beams[0].load.force", "whose force on a node (times the length it stands for",
   "a sequence of 3 items"},
  {"rod_coincident", 6, 5, "joints[0].length",
   "expected a positive number (rod length in m; required here because the rod's two points coincide",
   "the key is missing"},
  {"zero_stiffness", 6, 47, "springs[0].stiffness", "expected a positive number (stiffness in N/m)", "'0'"},
  {"negative_spring_length", 6, 60, "springs[0].length", "expected a non-negative number (rest length in m)", "'-1'"},
  {"unknown_spring_type", 6, 12, "springs[0].type",
   "expected a spring type (linear, quartic, damper, torsional_spring, beam or torsional_damper)", "'cubic'"},
  {"zero_every", 4, 33, "output.every", "expected a positive integer", "'0'"},
  {"fractional_every", 4, 17, "output.every", "expected a positive integer", "'2.5'"},
  {"unknown_trajectory", 4, 48, "output.trajectory", "expected one of xdmf, none", "'vtk'"},
  {"not_orthonormal", 9, 15, "bodies[0].orientation.matrix",
   "expected a rotation matrix (orthonormal to 1e-9, determinant +1)", "max |R^T R - I| = 4.400e-05"},
  {"reflection", 9, 15, "bodies[0].orientation.matrix",
   "expected a rotation matrix (orthonormal to 1e-9, determinant +1)", "a reflection (determinant -1)"},
  {"zero_axis", 8, 25, "bodies[0].orientation.axis", "expected a non-zero 3-vector (rotation axis)", "[0, 0, 0]"},
  {"matrix_and_axis", 8, 18, "bodies[0].orientation", "expected either 'matrix' or 'axis' and 'angle'", "both"},
  {"unknown_body_type", 4, 24, "bodies[1].type", "expected a body type (particle or rigid)", "'soft'"},
  {"duplicate_body", 5, 12, "bodies[2].name", "expected a body name not used before",
   "'bob', already the name of bodies[0]"},
  {"ground_body_name", 3, 12, "bodies[0].name", "expected a body name other than 'ground'", "'ground'"},
  {"chain_name_clash", 5, 12, "chains[0].name", "are not names in 'bodies'", "body 'rope.2' is already bodies[0]"},
  {"chain_count", 3, 25, "chains[0].count", "expected a positive integer (number of particles)", "'0'"},
  {"scheme_unknown", 2, 16, "scheme.type", "expected a registered scheme, one of: em", "'vi-z'"},
  {"scheme_parameter_foreign", 2, 20, "scheme.theta",
   "expected the key type or a parameter of scheme em (its parameters: none)", "unknown key 'theta'"},
  {"scheme_parameter_default_type", 2, 10, "scheme.vartheta", "a parameter of scheme em (its parameters: none)",
   "unknown key 'vartheta'"},
  {"scheme_theta_zero", 4, 10, "scheme.theta", "expected a real in (0", "'0'"},
  {"scheme_theta_one", 4, 10, "scheme.theta", "expected a real in (0, 1) for theta of scheme vi-a", "'1'"},
  {"scheme_vartheta_range", 2, 20, "scheme.vartheta", "expected a real in [0", "'1.5'"},
  {"scheme_theta_not_number", 2, 29, "scheme.theta", "expected a real in (0", "'half'"},
  {"scheme_duplicate_parameter", 2, 34, "scheme.theta", "each key at most once", "first at line 2, column 22"},
  {"unknown_body", 5, 34, "joints[0].bodies[1]",
   "expected the name of a body in 'bodies' or of a generated one (chains, rigid_chains, nets, meshes, beams), "
   "or 'ground'",
   "'bobb', which is not defined"},
  {"unknown_chain_body", 5, 40, "joints[0].bodies[1]",
   "expected the name of a body in 'bodies' or of a generated one (chains, rigid_chains, nets, meshes, beams), "
   "or 'ground'",
   "'rope.5', which is not defined (chains[0] 'rope' has the members 0..4)"},
  {"fixed_point_ground", 5, 31, "joints[0].body", "(chains, rigid_chains, nets, meshes, beams), not 'ground'",
   "'ground'"},
  {"unknown_joint_type", 5, 12, "joints[0].type",
   "expected a joint type (fixed_point, spherical, rod, revolute, prismatic, cylindrical, universal, weld, "
   "point_on_line, point_on_plane, planar, perpendicular, knife_edge or rolling)",
   "'hinge'"},
  {"revolute_particle", 7, 20, "joints[0].bodies[1]", "expected a rigid body or 'ground'", "particle 'bob'"},
  {"prismatic_particle", 6, 32, "joints[0].bodies[0]", "expected a rigid body or 'ground' (a prismatic joint",
   "particle 'bob'"},
  {"line_zero_axis", 5, 57, "joints[0].axis", "expected a non-zero 3-vector (direction of the line", "[0, 0, 0]"},
  {"plane_no_normal", 5, 5, "joints[0].normal", "expected a non-zero 3-vector (normal of the plane",
   "nothing (the key is missing)"},
  {"ramp_backwards", 5, 82, "loads[0].time.end", "expected an end time after the start time",
   "end 1, not after the start 2"},
  {"unknown_time_function", 5, 61, "loads[0].time.type", "expected a time function type (constant, ramp, smooth_step",
   "'square'"},
  {"torque_particle", 5, 26, "loads[0].body", "expected a rigid body (a torque load needs an orientation)",
   "particle 'bob'"},
  {"harmonic_extra_key", 5, 99, "loads[0].time.start", "expected one of the keys type, amplitude, frequency",
   "unknown key 'start'"},
  {"weld_axes", 6, 34, "joints[0].axes", "expected one of the keys type, bodies, points (weld)", "unknown key 'axes'"},
  {"self_joint", 5, 37, "joints[0].bodies[1]", "expected a body other than bodies[0]", "'top' again"},
  {"ground_to_ground", 5, 37, "springs[0].bodies[1]", "expected a body other than bodies[0]", "'ground' again"},
  {"particle_point", 5, 60, "joints[0].points[1]", "expected [0, 0, 0] (a particle is a point",
   "[0.5, 0, 0] on a particle"},
  {"empty_model", 3, 9, "bodies",
   "expected at least one body (in 'bodies', or generated by 'chains', 'rigid_chains', 'nets', 'meshes' or 'beams')",
   "an empty sequence"},
  {"no_bodies", 1, 1, "bodies",
   "expected at least one body (in 'bodies', or generated by 'chains', 'rigid_chains', 'nets', 'meshes' or 'beams')",
   "the key is missing"},
  {"rigid_chain_count", 3, 26, "rigid_chains[0].count", "expected a positive integer (number of links)", "'0'"},
  {"rigid_chain_negative_count", 3, 26, "rigid_chains[0].count", "expected a positive integer (number of links)",
   "'-3'"},
  {"rigid_chain_axis_zero", 3, 131, "rigid_chains[0].axis",
   "expected a non-zero 3-vector (hinge axis of the revolute joints, world frame)", "[0, 0, 0]"},
  {"rigid_chain_axis_parallel", 3, 131, "rigid_chains[0].axis", "expected a hinge axis not parallel to 'direction'",
   "[0, 0, 2], parallel to the direction [0, 0, -1]"},
  {"rigid_chain_no_axis", 3, 5, "rigid_chains[0].axis", "expected a non-zero 3-vector (hinge axis",
   "the key is missing"},
  {"rigid_chain_axis_spherical", 3, 114, "rigid_chains[0].axis", "expected no 'axis'", "an axis for spherical joints"},
  {"rigid_chain_joint_type", 3, 115, "rigid_chains[0].joint", "expected a joint type (spherical or revolute)",
   "'hinge'"},
  {"rigid_chain_inertia", 3, 51, "rigid_chains[0].inertia", "expected principal moments with J_i < J_j + J_k",
   "J3 = 3e-06 >= J1 + J2 = 2e-06"},
  {"net_count_zero", 3, 25, "nets[0].count[0]",
   "expected a positive integer (number of nodes along the first direction)", "'0'"},
  {"net_count_length", 3, 24, "nets[0].count", "expected a sequence of two positive integers [nx, ny]",
   "a sequence of 1 item"},
  {"net_fixed_range", 3, 84, "nets[0].fixed[1].i", "expected an integer from -4 to 3 (node index i", "'4'"},
  {"net_fixed_empty", 3, 66, "nets[0].fixed[0]", "expected a node set {i: n, j: m}, {i: n} or {j: m}",
   "neither 'i' nor 'j'"},
  {"net_directions_parallel", 3, 70, "nets[0].directions", "expected a sequence of two non-parallel 3-vectors",
   "the parallel vectors [1, 0, 0] and [-2, 0, 0]"},
  {"net_unknown_key", 3, 58, "nets[0].diagonals",
   "expected one of the keys name, count, mass, spacing, origin, directions, fixed", "unknown key 'diagonals'"},
  {"mesh_no_mass", 3, 5, "meshes[0]", "expected a mapping with 'line_density' (kg/m), 'node_mass' (kg) or both",
   "neither"},
  {"mesh_unknown_group", 3, 78, "meshes[0].fixed[1]",
   "net5x4_quad41.msh (its named groups: 'corners', 'top', 'right', 'bottom', 'left', 'sheet')",
   "'roof', which it does not have"},
  {"generator_name_duplicate", 5, 12, "rigid_chains[0].name",
   "expected a rigid chain name not used by a body or another chain, rigid chain, net or mesh",
   "'rope', already the name of chains[0]"},
  {"generator_name_body", 5, 12, "nets[0].name", "expected a net name not used by a body",
   "'net', already the name of bodies[0]"},
  {"net_member_clash", 5, 12, "nets[0].name",
   "expected a net name whose bodies '<name>.<i>.<j>' are not names in 'bodies'",
   "'net', whose body 'net.3.2' is already bodies[0]"},
  {"net_prefix_clash", 3, 12, "nets[0].name", "are not those of another generator",
   "'n', whose nodes 'n.1.<j>' are already the bodies of rigid_chains[0] 'n.1'"},
  {"unknown_net_member", 5, 31, "joints[0].body", "expected the name of a body in 'bodies' or of a generated one",
   "'net.4.0', which is not defined (nets[0] 'net' has the nodes <i>.<j> with i < 4, j < 3)"},
  {"unknown_mesh_member", 5, 31, "joints[0].body", "expected the name of a body in 'bodies' or of a generated one",
   "'m.43', which is not defined (meshes[0] 'm' has no node with this tag)"},
  {"huge_chain", 4, 25, "chains[0].count", "expected a model that fits in memory: 1000000000 particles need about",
   "(the physical memory of the ranks' machines; -mbs_memory_limit), got '1000000000'"},
  {"huge_rigid_chain", 3, 26, "rigid_chains[0].count",
   "expected a model that fits in memory: 2000000000 links need about", "got '2000000000'"},
  {"huge_net", 3, 24, "nets[0].count", "expected a model that fits in memory: 100000 x 10000 nodes need about",
   "got a sequence of 2 items"},
  {"steps_overflow", 2, 14, "time.step", "expected a time step giving at most 2147483646 steps up to 'end'",
   "got '1e-12', 1e+15 steps"},
  {"chain_extent", 4, 25, "chains[0].count",
   "expected a chain whose members lie at finite positions (|start| + count x length <= 1e300)", "'10'"},
  {"net_extent", 3, 24, "nets[0].count",
   "expected a net whose members lie at finite positions (|origin| + nx |step_i| + ny |step_j| <= 1e300)",
   "a sequence of 2 items"},
  {"mesh_scale_overflow", 4, 21, NULL,
   "net5x4_quad41.msh:88: expected an element whose nodes lie at finite, distinct positions after 'scale' and "
   "'translation'",
   "beyond 1e300 apart or at infinity after scale and translation"},
  {"drive_not_at_zero", 7, 5, NULL,
   "drives[0] (angle): Angle drive: the prescribed angle must be 0 at t = 0 (it is measured from the initial state)",
   "got 0.479426"},
  {"table_not_increasing", 5, 96, "loads[0].time.points[2][0]", "expected a time after the previous point's",
   "0.5, not after the previous time 0.5"},
  {"table_bad_row", 5, 74, NULL, "table_bad_row.csv:4: expected two numbers 'time, value'", "got more: '0.7 2 3'"},
  {"torsion_rest_angle", 7, 5, NULL,
   "springs[0] (torsional_spring): Torsional spring: the rest angle must lie in (-pi, pi) (rad, from the initial "
   "state)",
   "got 4"},
  {"reactions_out_of_range", 6, 34, "output.reactions.joints[1]",
   "expected the number of an entry of 'joints' (0 to 0)", "'1'"},
  {"drive_zero_axis", 5, 51, "drives[0].axis", "expected a non-zero 3-vector (axis of the slide", "[0, 0, 0]"},
  {"subnormal_length", 3, 47, "chains[0].length", "expected a positive number (length of each link in m)", "'1e-310'"},
  {"direction_overflow", 3, 63, "chains[0].direction",
   "expected a 3-vector of length from 1e-150 to 1e+150 (direction of the chain)", "[1e+300, 1e+300, 0]"},
};

static void ExpectContains(const char *name, const char *message, const char *part)
{
  if (!strstr(message, part)) fail_msg("%s: the message\n  %s\nlacks\n  %s", name, message, part);
}

static void TestBadInput(void **state)
{
  const BadInput *bad = (const BadInput *)*state;
  char            path[PETSC_MAX_PATH_LEN], relative[PETSC_MAX_PATH_LEN], where[PETSC_MAX_PATH_LEN + 64], part[512];
  MbsModel        model;
  MbsRunConfig    cfg;
  PetscErrorCode  ierr;

  snprintf(relative, sizeof(relative), "tests/inputs/bad/%s.yaml", bad->name);
  InputPath(path, sizeof(path), relative);
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  ClearError();
  ierr = MbsModelLoadYAML(model, path, &cfg);
  if (ierr != PETSC_ERR_USER_INPUT || error_code != PETSC_ERR_USER_INPUT)
    fail_msg("%s: expected PETSC_ERR_USER_INPUT (%d), got %d: %s", bad->name, PETSC_ERR_USER_INPUT, (int)ierr,
             error_message);
  snprintf(where, sizeof(where), "%s:%d:%d: ", path, bad->line, bad->column);
  if (strncmp(error_message, where, strlen(where)))
    fail_msg("%s: the message\n  %s\ndoes not start with\n  %s", bad->name, error_message, where);
  if (bad->key) {
    snprintf(part, sizeof(part), "key '%s': expected ", bad->key);
    ExpectContains(bad->name, error_message, part);
  }
  ExpectContains(bad->name, error_message, bad->expected);
  snprintf(part, sizeof(part), ", got ");
  if (bad->key) ExpectContains(bad->name, error_message, part);
  ExpectContains(bad->name, error_message, bad->got);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

/* A drive whose prescribed motion starts at a speed the initial state does not have: set-up names the drive, where
   it is in the file, and the level (velocity) it violates */
static void TestDriveInconsistentVelocity(void **state)
{
  char         path[PETSC_MAX_PATH_LEN], where[PETSC_MAX_PATH_LEN + 256];
  MbsModel     model;
  MbsRunConfig cfg;

  (void)state;
  InputPath(path, sizeof(path), "tests/inputs/bad/drive_velocity.yaml");
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  assert_int_equal(MbsModelLoadYAML(model, path, &cfg), 0);
  ClearError();
  assert_int_equal(MbsModelSetUp(model), PETSC_ERR_USER_INPUT);
  snprintf(where, sizeof(where),
           "%s:6:5: drives[0] (slide): the initial state violates this slide_drive constraint "
           "on velocity level: max |G(q0) v0| = 5.000e-01",
           path);
  ExpectContains("drive_velocity", error_message, where);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

static void TestMissingFile(void **state)
{
  char         path[PETSC_MAX_PATH_LEN];
  MbsModel     model;
  MbsRunConfig cfg;

  (void)state;
  InputPath(path, sizeof(path), "tests/inputs/bad/no_such_file.yaml");
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  ClearError();
  assert_int_equal(MbsModelLoadYAML(model, path, &cfg), PETSC_ERR_FILE_OPEN);
  ExpectContains("missing file", error_message, path);
  ExpectContains("missing file", error_message, "No such file");
  assert_int_equal(MbsModelDestroy(&model), 0);
}

/* A path that is not a regular file (a device: /dev/zero would be read until memory runs out) is refused before
   anything is read. */
static void TestNotRegularFile(void **state)
{
  MbsModel     model;
  MbsRunConfig cfg;

  (void)state;
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  ClearError();
  assert_int_equal(MbsModelLoadYAML(model, "/dev/zero", &cfg), PETSC_ERR_FILE_OPEN);
  ExpectContains("device", error_message, "/dev/zero");
  ExpectContains("device", error_message, "not a regular file");
  assert_int_equal(MbsModelDestroy(&model), 0);
}

/* Loads without error; the initial state then violates a rod, and MbsModelSetUp() names it by its label. */
static void TestLabels(void **state)
{
  char         path[PETSC_MAX_PATH_LEN], where[PETSC_MAX_PATH_LEN + 64];
  MbsModel     model;
  MbsRunConfig cfg;

  (void)state;
  InputPath(path, sizeof(path), "tests/inputs/bad/rod_violated.yaml");
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  ClearError();
  if (MbsModelLoadYAML(model, path, &cfg)) fail_msg("rod_violated: %s", error_message);
  assert_int_equal(MbsModelSetUp(model), PETSC_ERR_USER_INPUT);
  snprintf(where, sizeof(where), "%s:7:5: joints[1] (rod)", path);
  ExpectContains("rod_violated", error_message, where);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

/* The memory limit: -mbs_memory_limit refuses memory_limit.yaml (about 1 GiB) at its count with both
   numbers, MbsModelSetMemoryLimit() overrides the option, 0 means no limit, a malformed size is an error. */
static void TestMemoryLimit(void **state)
{
  char           path[PETSC_MAX_PATH_LEN], where[PETSC_MAX_PATH_LEN + 160];
  MbsModel       model;
  MbsRunConfig   cfg;
  PetscInt64     limit;
  PetscReal      estimate;
  PetscInt       n;
  PetscErrorCode ierr;

  (void)state;
  InputPath(path, sizeof(path), "tests/inputs/bad/memory_limit.yaml");
  snprintf(where, sizeof(where),
           "%s:5:25: key 'chains[0].count': expected a model that fits in memory: 100000 particles need about ", path);
  assert_int_equal(PetscOptionsSetValue(NULL, "-mbs_memory_limit", "100MiB"), 0);
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  assert_int_equal(MbsModelGetMemoryLimit(model, &limit), 0);
  assert_true(limit == 100 * 1048576);
  ClearError();
  ierr = MbsModelLoadYAML(model, path, &cfg);
  if (ierr != PETSC_ERR_USER_INPUT)
    fail_msg("memory_limit: expected PETSC_ERR_USER_INPUT, got %d: %s", (int)ierr, error_message);
  if (strncmp(error_message, where, strlen(where)))
    fail_msg("memory_limit: the message\n  %s\ndoes not start with\n  %s", error_message, where);
  ExpectContains("memory_limit", error_message, " (estimate), the limit is 100 MiB (-mbs_memory_limit), got '100000'");
  assert_int_equal(MbsModelGetNumBodies(model, &n), 0);
  assert_int_equal(n, 0); /* refused before anything was added */
  assert_int_equal(MbsModelDestroy(&model), 0);

  /* the setter wins over the option; 0 is no limit */
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  assert_int_equal(MbsModelSetMemoryLimit(model, 0), 0);
  ClearError();
  if (MbsModelLoadYAML(model, path, &cfg)) fail_msg("memory_limit without a limit: %s", error_message);
  assert_int_equal(MbsModelEstimateMemory(model, &estimate), 0);
  { /* above the measured peak RSS (29 Nov 2026: 774 MiB on one rank, KLU; 2 x 582 MiB on two), below 2 GiB */
    PetscMPIInt size;
    assert_int_equal(MPI_Comm_size(PETSC_COMM_WORLD, &size), 0);
    const PetscReal peak = (size == 1 ? 774.0 : 2 * 582.0) * 1048576.0;
    if (!(estimate > peak && estimate < 2.0 * 1073741824.0))
      fail_msg("memory_limit: estimate %g bytes, expected above the measured peak %g bytes and below 2 GiB",
               (double)estimate, (double)peak);
  }
  assert_int_equal(MbsModelDestroy(&model), 0);
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  assert_int_equal(MbsModelSetMemoryLimit(model, 536870912), 0);
  ClearError();
  assert_int_equal(MbsModelLoadYAML(model, path, &cfg), PETSC_ERR_USER_INPUT);
  ExpectContains("memory_limit", error_message, "the limit is 512 MiB (MbsModelSetMemoryLimit())");
  assert_int_equal(MbsModelDestroy(&model), 0);

  assert_int_equal(PetscOptionsSetValue(NULL, "-mbs_memory_limit", "4XB"), 0);
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  ClearError();
  assert_int_equal(MbsModelLoadYAML(model, path, &cfg), PETSC_ERR_ARG_WRONG);
  ExpectContains("memory_limit", error_message,
                 "-mbs_memory_limit: expected a size in bytes such as 4GiB, 512MiB, 8e9 or 0 (no limit), got '4XB'");
  assert_int_equal(MbsModelDestroy(&model), 0);
  assert_int_equal(PetscOptionsClearValue(NULL, "-mbs_memory_limit"), 0);
}

static void TestRunConfigDefaults(void **state)
{
  MbsRunConfig cfg;

  (void)state;
  assert_int_equal(MbsRunConfigSetDefaults(&cfg), 0);
  assert_true(cfg.dt == 0 && cfg.t_end == 0);
  assert_string_equal(cfg.scheme, "em");
  assert_int_equal(cfg.nparams, 0);
  assert_string_equal(cfg.output_dir, "output");
  assert_int_equal(cfg.output_every, 1);
  assert_string_equal(cfg.trajectory, "");
}

typedef struct {
  const char *file;
  PetscInt    nbodies;
  PetscInt    nelements;       /* after loading: joints, springs, chain rods, one per rigid body */
  PetscInt    nelements_setup; /* after MbsModelSetUp: plus one gravity element per body if gravity != 0 */
  PetscReal   dt, t_end, gravity_z;
  const char *scheme, *output_dir;
  PetscInt    output_every;
} GoodInput;

static const GoodInput good_inputs[] = {
  {"inputs/pendulum3d.yaml", 1, 1, 2, 0.05, 10, -9.81, "em", "output/pendulum3d", 1},
  {"inputs/heavy_top.yaml", 1, 2, 3, 0.002, 2, -9.81, "em", "output/heavy_top", 1},
  {"inputs/four_particle.yaml", 4, 4, 4, 0.01, 10, 0, "em", "output/four_particle", 1},
  {"inputs/chain1000.yaml", 1000, 1000, 2000, 1e-3, 1.0, -9.81, "em", "output/chain1000", 10},
  {"tests/inputs/good/features.yaml", 5, 9, 14, 0.01, 1, -9.81, "em", "out/features", 1},
  {"tests/inputs/good/minimal.yaml", 1, 0, 0, 0.5, 2, 0, "em", "output", 1},
  {"tests/inputs/good/scheme_vi_b.yaml", 1, 1, 1, 0.01, 1, 0, "vi-b", "output", 1},
  {"tests/inputs/good/scheme_vi_a.yaml", 1, 1, 1, 0.01, 1, 0, "vi-a", "output", 1},
  {"inputs/rigid_chain1000.yaml", 1000, 2000, 3000, 1e-3, 0.2, -9.81, "em", "output/rigid_chain1000", 10},
  {"inputs/net100x100.yaml", 10000, 19801, 29801, 1e-3, 0.01, -9.81, "em", "output/net100x100", 10},
  {"inputs/mesh_net.yaml", 192, 357, 549, 1e-3, 2, -9.81, "em", "output/mesh_net", 10},
  {"tests/inputs/good/generators.yaml", 46, 75, 121, 1e-3, 0.01, -9.81, "em", "output", 1},
  {"tests/inputs/joints/joint_zoo.yaml", 6, 14, 20, 2e-3, 0.4, -9.81, "em", "output/joint_zoo", 10},
  {"inputs/spring_pendulum.yaml", 2, 4, 6, 0.1, 400, -1, "em", "output/spring_pendulum", 10},
  {"tests/inputs/dampers/damped_pendulum.yaml", 2, 5, 7, 0.01, 2, -9.81, "em", "output/damped_spring_pendulum", 1},
  {"tests/inputs/loads/driven_top.yaml", 2, 7, 9, 0.002, 2, -9.81, "em", "output/driven_top", 10},
  {"tests/inputs/loads/driven_crank.yaml", 2, 5, 7, 0.001, 0.5, -9.81, "em", "output/driven_crank", 10},
  {"tests/inputs/dampers/damped_hinge.yaml", 2, 6, 8, 0.002, 0.4, -9.81, "em", "output/damped_hinge", 10},
  {"tests/inputs/loads/pushed_carriage.yaml", 2, 6, 8, 0.002, 0.4, -9.81, "em", "output/pushed_carriage", 10},
  {"tests/inputs/springs/torsion_hinge.yaml", 2, 7, 9, 0.002, 0.4, -9.81, "em", "output/torsion_hinge", 10},
};

static void LoadGood(const GoodInput *good, MbsModel *model, MbsRunConfig *cfg)
{
  char path[PETSC_MAX_PATH_LEN];

  InputPath(path, sizeof(path), good->file);
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, model), 0);
  ClearError();
  if (MbsModelLoadYAML(*model, path, cfg)) fail_msg("%s: %s", good->file, error_message);
}

static void TestGoodInput(void **state)
{
  const GoodInput *good = (const GoodInput *)*state;
  MbsModel         model;
  MbsRunConfig     cfg;
  PetscInt         n;
  PetscReal        g[3];

  LoadGood(good, &model, &cfg);
  assert_int_equal(MbsModelGetNumBodies(model, &n), 0);
  assert_int_equal(n, good->nbodies);
  assert_int_equal(MbsModelGetNumElements(model, &n), 0);
  assert_int_equal(n, good->nelements);
  assert_int_equal(MbsModelGetGravity(model, g), 0);
  assert_true(g[0] == 0 && g[1] == 0 && g[2] == good->gravity_z);
  assert_true(cfg.dt == good->dt);
  assert_true(cfg.t_end == good->t_end);
  assert_string_equal(cfg.scheme, good->scheme);
  assert_string_equal(cfg.output_dir, good->output_dir);
  assert_int_equal(cfg.output_every, good->output_every);
  /* the initial state satisfies every constraint on both levels to the default tolerance */
  ClearError();
  if (MbsModelSetUp(model)) fail_msg("%s: %s", good->file, error_message);
  assert_int_equal(MbsModelGetNumElements(model, &n), 0);
  assert_int_equal(n, good->nelements_setup);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

/* q0, p0 of a single body (on any number of ranks) gathered to every rank. */
static void GatherInitialState(MbsModel model, PetscInt n, PetscReal *q, PetscReal *p)
{
  Vec                qv, pv, all;
  VecScatter         scatter;
  const PetscScalar *a;
  PetscInt           size;

  assert_int_equal(MbsModelCreateInitialState(model, &qv, &pv), 0);
  assert_int_equal(VecGetSize(qv, &size), 0);
  assert_int_equal(size, n);
  for (int k = 0; k < 2; k++) {
    assert_int_equal(VecScatterCreateToAll(k ? pv : qv, &scatter, &all), 0);
    assert_int_equal(VecScatterBegin(scatter, k ? pv : qv, all, INSERT_VALUES, SCATTER_FORWARD), 0);
    assert_int_equal(VecScatterEnd(scatter, k ? pv : qv, all, INSERT_VALUES, SCATTER_FORWARD), 0);
    assert_int_equal(VecGetArrayRead(all, &a), 0);
    for (PetscInt i = 0; i < n; i++) (k ? p : q)[i] = PetscRealPart(a[i]);
    assert_int_equal(VecRestoreArrayRead(all, &a), 0);
    assert_int_equal(VecScatterDestroy(&scatter), 0);
    assert_int_equal(VecDestroy(&all), 0);
  }
  assert_int_equal(VecDestroy(&qv), 0);
  assert_int_equal(VecDestroy(&pv), 0);
}

/* The heavy top's initial energy and axial angular momentum from the loaded state match DESIGN 2.5. */
static void TestHeavyTopInvariants(void **state)
{
  const PetscReal m = 0.7068583470577038, E = 0.5 * 5.301437602932779e-4, mblock[4] = {m, E, E, E};
  const PetscReal E0 = 5.66905519063295, Jz0 = 0.07106577106731392;
  MbsModel        model;
  MbsRunConfig    cfg;
  PetscReal       q[12], p[12], energy = 0, Jz = 0, tip[3];
  const PetscReal X[3] = {0, 0, -0.075};

  (void)state;
  LoadGood(&good_inputs[1], &model, &cfg);
  assert_int_equal(MbsModelGetPointPosition(model, 0, X, tip), 0);
  assert_true(PetscAbsReal(tip[0]) + PetscAbsReal(tip[1]) + PetscAbsReal(tip[2]) < 1e-15);
  assert_int_equal(MbsModelSetUp(model), 0);
  GatherInitialState(model, 12, q, p);
  for (int j = 0; j < 4; j++) {
    const PetscReal *qj = q + 3 * j, *pj = p + 3 * j;

    energy += 0.5 * (pj[0] * pj[0] + pj[1] * pj[1] + pj[2] * pj[2]) / mblock[j];
    Jz += qj[0] * pj[1] - qj[1] * pj[0];
  }
  energy += m * 9.81 * q[2];
  if (PetscAbsReal(energy - E0) > 1e-14 * E0)
    fail_msg("heavy top: E0 = %.17g, expected %.17g", (double)energy, (double)E0);
  if (PetscAbsReal(Jz - Jz0) > 1e-14 * Jz0) fail_msg("heavy top: Jz0 = %.17g, expected %.17g", (double)Jz, (double)Jz0);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

/* Axis-angle orientation, chain particle names and default fixed-point positions. */
static void TestFeatures(void **state)
{
  MbsModel        model;
  MbsRunConfig    cfg;
  PetscInt        door, bob, rope2;
  PetscReal       x[3];
  const PetscReal X[3] = {1, 0, 0}, zero[3] = {0, 0, 0};

  (void)state;
  LoadGood(&good_inputs[4], &model, &cfg);
  assert_int_equal(MbsModelFindBody(model, "door", &door), 0);
  assert_int_equal(MbsModelFindBody(model, "bob", &bob), 0);
  assert_int_equal(MbsModelFindBody(model, "rope.2", &rope2), 0);
  assert_true(door >= 0 && bob >= 0 && rope2 >= 0);
  /* a quarter turn about e3: d1 = e2 */
  assert_int_equal(MbsModelGetPointPosition(model, door, X, x), 0);
  assert_true(PetscAbsReal(x[0]) < 1e-15 && PetscAbsReal(x[1] - 1) < 1e-15 && x[2] == 1);
  /* particle 2 of the chain sits three links from its start */
  assert_int_equal(MbsModelGetPointPosition(model, rope2, zero, x), 0);
  assert_true(x[0] == 0 && PetscAbsReal(x[1] - 2.5) < 1e-15 && x[2] == 1);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

/* A model with the bodies of another (types, masses, inertias, initial placements; at rest) */
static void CopyBodies(MbsModel from, MbsModel *to)
{
  PetscInt nbodies;

  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, to), 0);
  assert_int_equal(MbsModelGetNumBodies(from, &nbodies), 0);
  for (PetscInt b = 0; b < nbodies; b++) {
    const MbsBody *body = &from->bodies[b];
    PetscReal      R[9];
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 3; k++) R[3 * k + i] = body->q0[3 + 3 * i + k]; /* rows of R; d_i its columns */
    if (body->type == MBS_BODY_RIGID)
      assert_int_equal(MbsModelAddRigidBody(*to, body->name, body->mass, body->inertia, body->q0, R, NULL, NULL, NULL),
                       0);
    else
      assert_int_equal(MbsModelAddParticle(*to, body->name, body->mass, body->q0, NULL, NULL), 0);
  }
}

/* The dampers of an input file and the same dampers added through MbsModelAddDamper() have the same data */
static void TestDamperCAPI(void **state)
{
  MbsModel         model, api;
  MbsRunConfig     cfg;
  const GoodInput *good = &good_inputs[14];
  PetscInt         nelems, matched = 0;

  (void)state;
  assert_string_equal(good->file, "tests/inputs/dampers/damped_pendulum.yaml");
  LoadGood(good, &model, &cfg);
  CopyBodies(model, &api);
  assert_int_equal(MbsModelGetNumElements(model, &nelems), 0);
  for (PetscInt k = 0; k < nelems; k++) {
    const MbsElement *e = &model->elems[k];
    PetscInt          elem;
    if (!e->type || strcmp(e->type->name, "damper")) continue;
    assert_int_equal(MbsModelAddDamper(api, e->body[0], e->data.Xa, e->body[1], e->data.Xb, e->data.damping,
                                       matched ? e->data.exponent : PETSC_DETERMINE, &elem),
                     0);
    assert_true(api->elems[elem].data.damping == e->data.damping);
    assert_true(api->elems[elem].data.exponent == e->data.exponent); /* the first has the default exponent, 1 */
    matched++;
  }
  assert_int_equal(matched, 2);
  ClearError();
  assert_int_equal(MbsModelAddDamper(api, 0, NULL, 1, NULL, -1.0, 1.0, NULL), PETSC_ERR_ARG_OUTOFRANGE);
  assert_non_null(strstr(error_message, "damping must be positive"));
  ClearError();
  assert_int_equal(MbsModelAddDamper(api, 0, NULL, 1, NULL, 1.0, 0.5, NULL), PETSC_ERR_ARG_OUTOFRANGE);
  assert_non_null(strstr(error_message, "exponent must be in [1, 10]"));
  assert_int_equal(MbsModelDestroy(&api), 0);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

/* The loads of an input file and the same loads added through MbsModelAddPointLoad() and MbsModelAddTorqueLoad()
   have the same data; a ramp that ends before it starts is refused */
static void TestLoadsCAPI(void **state)
{
  MbsModel         model, api;
  MbsRunConfig     cfg;
  const GoodInput *good = &good_inputs[15];
  PetscInt         nelems, matched = 0;

  (void)state;
  assert_string_equal(good->file, "tests/inputs/loads/driven_top.yaml");
  LoadGood(good, &model, &cfg);
  CopyBodies(model, &api);
  assert_int_equal(MbsModelGetNumElements(model, &nelems), 0);
  for (PetscInt k = 0; k < nelems; k++) {
    const MbsElement *e = &model->elems[k];
    PetscInt          elem;
    if (!e->type || strcmp(e->type->section, "loads")) continue;
    if (!strcmp(e->type->name, "force"))
      assert_int_equal(MbsModelAddPointLoad(api, e->body[0], e->data.Xa, e->data.load, &e->data.time, &elem), 0);
    else
      assert_int_equal(MbsModelAddTorqueLoad(api, e->body[0], e->data.load, &e->data.time, &elem), 0);
    assert_memory_equal(&api->elems[elem].data, &e->data, sizeof(MbsElemData));
    matched++;
  }
  assert_int_equal(matched, 3);
  ClearError();
  assert_int_equal(MbsModelAddPointLoad(api, 0, NULL, (PetscReal[]){1, 0, 0},
                                        &(MbsTimeFunction){MBS_TIME_RAMP, {2.0, 1.0, 0.0, 1.0}, NULL}, NULL),
                   PETSC_ERR_ARG_OUTOFRANGE);
  assert_non_null(strstr(error_message, "not after its start"));
  ClearError();
  assert_int_equal(MbsModelAddTorqueLoad(api, 1, (PetscReal[]){1, 0, 0}, NULL, NULL), PETSC_ERR_ARG_WRONG);
  assert_non_null(strstr(error_message, "is a particle"));
  assert_int_equal(MbsModelDestroy(&api), 0);
  assert_int_equal(MbsModelDestroy(&model), 0);

  /* the slider-crank's joint torque */
  good = &good_inputs[16];
  assert_string_equal(good->file, "tests/inputs/loads/driven_crank.yaml");
  LoadGood(good, &model, &cfg);
  CopyBodies(model, &api);
  assert_int_equal(MbsModelGetNumElements(model, &nelems), 0);
  matched = 0;
  for (PetscInt k = 0; k < nelems; k++) {
    const MbsElement *e = &model->elems[k];
    PetscInt          elem;
    if (!e->type || strcmp(e->type->name, "joint_torque")) continue;
    assert_int_equal(MbsModelAddJointTorque(api, e->body[0], e->data.axis_a, e->body[1], &e->data.time, &elem), 0);
    assert_memory_equal(&api->elems[elem].data, &e->data, sizeof(MbsElemData));
    matched++;
  }
  assert_int_equal(matched, 1);
  assert_int_equal(MbsModelDestroy(&api), 0);
  assert_int_equal(MbsModelDestroy(&model), 0);

  /* the carriage's joint forces */
  good = &good_inputs[18];
  assert_string_equal(good->file, "tests/inputs/loads/pushed_carriage.yaml");
  LoadGood(good, &model, &cfg);
  CopyBodies(model, &api);
  assert_int_equal(MbsModelGetNumElements(model, &nelems), 0);
  matched = 0;
  for (PetscInt k = 0; k < nelems; k++) {
    const MbsElement *e = &model->elems[k];
    PetscInt          elem;
    if (!e->type || strcmp(e->type->name, "joint_force")) continue;
    assert_int_equal(
      MbsModelAddJointForce(api, e->body[0], e->data.Xa, e->data.axis_a, e->body[1], e->data.Xb, &e->data.time, &elem),
      0);
    assert_memory_equal(&api->elems[elem].data, &e->data, sizeof(MbsElemData));
    matched++;
  }
  assert_int_equal(matched, 2);
  assert_int_equal(MbsModelDestroy(&api), 0);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

/* The joints of an input file and the same joints added through MbsModelAddJoint() to the same bodies complete to
   the same data blocks (points, axes, joint frames) */
/* The drives of tests/inputs/drives/drive_zoo.yaml through MbsModelAdd{Angle,Slide,Position}Drive(): the same data
   blocks, byte for byte; a drive that does not start at 0 is refused */
static void TestDrivesCAPI(void **state)
{
  char         path[PETSC_MAX_PATH_LEN];
  MbsModel     model, api;
  MbsRunConfig cfg;
  PetscInt     nelems, matched = 0;

  (void)state;
  InputPath(path, sizeof(path), "tests/inputs/drives/drive_zoo.yaml");
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &model), 0);
  assert_int_equal(MbsModelLoadYAML(model, path, &cfg), 0);
  CopyBodies(model, &api);
  assert_int_equal(MbsModelGetNumElements(model, &nelems), 0);
  for (PetscInt k = 0; k < nelems; k++) {
    const MbsElement  *e = &model->elems[k];
    const MbsElemData *d = &e->data;
    PetscInt           elem;
    if (!e->type || strcmp(e->type->section, "drives")) continue;
    if (!strcmp(e->type->name, "angle"))
      assert_int_equal(MbsModelAddAngleDrive(api, e->body[0], d->axis_a, e->body[1], &d->time, &elem), 0);
    else if (!strcmp(e->type->name, "slide"))
      assert_int_equal(MbsModelAddSlideDrive(api, e->body[0], d->Xa, d->axis_a, e->body[1], d->Xb, &d->time, &elem), 0);
    else
      assert_int_equal(MbsModelAddPositionDrive(api, e->body[0], d->Xa, NULL, d->axis_b, &d->time, &elem), 0);
    assert_memory_equal(&api->elems[elem].data, d, sizeof(MbsElemData));
    matched++;
  }
  assert_int_equal(matched, 3);
  ClearError();
  assert_int_equal(MbsModelAddAngleDrive(api, MBS_GROUND, (PetscReal[]){0, 0, 1}, 0,
                                         &(MbsTimeFunction){MBS_TIME_CONSTANT, {0.5}, NULL}, NULL),
                   PETSC_ERR_ARG_OUTOFRANGE);
  assert_non_null(strstr(error_message, "must be 0 at t = 0"));
  assert_int_equal(MbsModelDestroy(&api), 0);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

/* The torsional spring and damper through the C API, byte for byte against the input that declares them */
static void TestTorsionCAPI(void **state)
{
  MbsModel     model, api;
  MbsRunConfig cfg;
  PetscInt     nelems, matched = 0;

  (void)state;
  LoadGood(&good_inputs[19], &model, &cfg);
  assert_string_equal(good_inputs[19].file, "tests/inputs/springs/torsion_hinge.yaml");
  CopyBodies(model, &api);
  assert_int_equal(MbsModelGetNumElements(model, &nelems), 0);
  for (PetscInt k = 0; k < nelems; k++) {
    const MbsElement  *e = &model->elems[k];
    const MbsElemData *d = &e->data;
    PetscInt           elem;
    if (!e->type || strncmp(e->type->name, "torsional_", 10)) continue;
    if (!strcmp(e->type->name, "torsional_spring"))
      assert_int_equal(
        MbsModelAddTorsionalSpring(api, e->body[0], d->axis_a, e->body[1], d->stiffness, matched ? 0.0 : 0.3, &elem),
        0);
    else
      assert_int_equal(MbsModelAddTorsionalDamper(api, e->body[0], d->axis_a, e->body[1], d->damping, &elem), 0);
    assert_memory_equal(&api->elems[elem].data, d, sizeof(MbsElemData));
    matched++;
  }
  assert_int_equal(matched, 3);
  { /* -1 rad is an angle like any other (not PETSC_DETERMINE) */
    PetscInt elem;
    assert_int_equal(MbsModelAddTorsionalSpring(api, MBS_GROUND, (PetscReal[]){0, 0, 1}, 0, 1.0, -1.0, &elem), 0);
    assert_true(api->elems[elem].data.length == -1.0);
  }
  ClearError();
  assert_int_equal(MbsModelAddTorsionalSpring(api, MBS_GROUND, (PetscReal[]){0, 0, 1}, 0, 1.0, 3.5, NULL),
                   PETSC_ERR_ARG_OUTOFRANGE);
  assert_non_null(strstr(error_message, "rest angle must lie in (-pi, pi)"));
  assert_int_equal(MbsModelDestroy(&api), 0);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

static void TestJointsCAPI(void **state)
{
  static const char *const names[] = {"prismatic", "cylindrical",   "universal",
                                      "weld",      "point_on_line", "point_on_plane"};
  MbsModel                 model, api;
  MbsRunConfig             cfg;
  PetscInt                 nelems, matched = 0;

  (void)state;
  LoadGood(&good_inputs[12], &model, &cfg);
  assert_string_equal(good_inputs[12].file, "tests/inputs/joints/joint_zoo.yaml");
  CopyBodies(model, &api);
  assert_int_equal(MbsModelGetNumElements(model, &nelems), 0);
  for (PetscInt k = 0; k < nelems; k++) {
    const MbsElement *e = &model->elems[k];
    for (int t = 0; t < 6; t++) {
      PetscInt           elem;
      const MbsElemData *d  = &e->data, *c;
      const PetscBool    ua = (PetscBool)(t < 3), ub = (PetscBool)(t != 3);
      if (!e->type || strcmp(e->type->name, names[t])) continue;
      ClearError();
      if (MbsModelAddJoint(api, (MbsJointType)t, e->body[0], d->Xa, ua ? d->axis_a : NULL, e->body[1], d->Xb,
                           ub ? d->axis_b : NULL, &elem))
        fail_msg("%s: %s", names[t], error_message);
      c = &api->elems[elem].data;
      assert_int_equal(c->nblocks_a, d->nblocks_a);
      assert_int_equal(c->nblocks_b, d->nblocks_b);
      for (int i = 0; i < 3; i++) {
        assert_true(c->Xa[i] == d->Xa[i] && c->Xb[i] == d->Xb[i]);
        assert_true(fabs(c->axis_a[i] - d->axis_a[i]) <= 1e-15 && fabs(c->axis_b[i] - d->axis_b[i]) <= 1e-15);
        for (int j = 0; j < 3; j++)
          if (!(fabs(c->frame_a[i][j] - d->frame_a[i][j]) <= 1e-15 &&
                fabs(c->frame_b[i][j] - d->frame_b[i][j]) <= 1e-15))
            fail_msg("%s: joint frames differ from the input file's", names[t]);
      }
      matched++;
    }
  }
  assert_int_equal(matched, 6);
  /* an axis the joint needs is required, one it does not take is refused */
  ClearError();
  assert_int_equal(MbsModelAddJoint(api, MBS_JOINT_PRISMATIC, 0, NULL, NULL, 1, NULL, (PetscReal[]){0, 0, 1}, NULL),
                   PETSC_ERR_ARG_NULL);
  assert_non_null(strstr(error_message, "needs the axis of body a"));
  ClearError();
  assert_int_equal(MbsModelAddJoint(api, MBS_JOINT_WELD, 0, NULL, NULL, 1, NULL, (PetscReal[]){0, 0, 1}, NULL),
                   PETSC_ERR_ARG_WRONG);
  ClearError();
  assert_int_equal(
    MbsModelAddJoint(api, MBS_JOINT_UNIVERSAL, 0, NULL, (PetscReal[]){0, 0, 0}, 1, NULL, (PetscReal[]){0, 0, 1}, NULL),
    PETSC_ERR_ARG_OUTOFRANGE);
  assert_non_null(strstr(error_message, "must be a non-zero finite vector"));
  assert_int_equal(MbsModelDestroy(&api), 0);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

/* Scheme parameters are read whatever the order of the keys, type included; none are given unless written. */
static void TestSchemeParameters(void **state)
{
  MbsModel     model;
  MbsRunConfig cfg;

  (void)state;
  LoadGood(&good_inputs[6], &model, &cfg);
  assert_string_equal(cfg.scheme, "vi-b");
  assert_int_equal(cfg.nparams, 2);
  assert_string_equal(cfg.param_name[0], "theta");
  assert_true(cfg.param_value[0] == 1);
  assert_string_equal(cfg.param_name[1], "vartheta");
  assert_true(cfg.param_value[1] == 0.25);
  assert_int_equal(MbsModelDestroy(&model), 0);

  LoadGood(&good_inputs[7], &model, &cfg);
  assert_string_equal(cfg.scheme, "vi-a");
  assert_int_equal(cfg.nparams, 1);
  assert_string_equal(cfg.param_name[0], "theta");
  assert_true(cfg.param_value[0] == 0.7);
  assert_int_equal(MbsModelDestroy(&model), 0);

  LoadGood(&good_inputs[0], &model, &cfg);
  assert_int_equal(cfg.nparams, 0);
  assert_int_equal(MbsModelDestroy(&model), 0);
}

/* The state after a few EM steps, gathered by body: q[k * 12 + i] is coordinate i of body k (12 per body) */
static void StepAndGather(MbsModel model, PetscInt nbodies, PetscReal *q)
{
  MbsStepper         st;
  Vec                qv, pv, all;
  VecScatter         scatter;
  const PetscScalar *a;

  assert_int_equal(MbsStepperCreate(model, &st), 0);
  assert_int_equal(MbsStepperSetTimeStep(st, 1e-3), 0);
  assert_int_equal(MbsStepperSetUp(st), 0);
  for (int k = 0; k < 3; k++) {
    if (MbsStepperStep(st)) fail_msg("step %d: %s", k, error_message);
  }
  assert_int_equal(MbsStepperGetState(st, &qv, &pv), 0);
  assert_int_equal(VecScatterCreateToAll(qv, &scatter, &all), 0);
  assert_int_equal(VecScatterBegin(scatter, qv, all, INSERT_VALUES, SCATTER_FORWARD), 0);
  assert_int_equal(VecScatterEnd(scatter, qv, all, INSERT_VALUES, SCATTER_FORWARD), 0);
  assert_int_equal(VecGetArrayRead(all, &a), 0);
  for (PetscInt b = 0; b < nbodies; b++) {
    PetscInt offset, n;
    assert_int_equal(MbsModelGetBodyCoordinates(model, b, &offset, &n, NULL), 0);
    for (PetscInt i = 0; i < 12; i++) q[12 * b + i] = i < n ? PetscRealPart(a[offset + i]) : 0;
  }
  assert_int_equal(VecRestoreArrayRead(all, &a), 0);
  assert_int_equal(VecScatterDestroy(&scatter), 0);
  assert_int_equal(VecDestroy(&all), 0);
  assert_int_equal(MbsStepperDestroy(&st), 0);
}

/* On several ranks MbsModelLoadYAML() builds the model in two passes (MbsModelBeginGraph()): before the set-up a rank
   holds only its part (its share of the bodies and their neighbours), and the model it builds is the one a single
   rank builds whole: the same states after three steps, body by body, for inputs that exercise chains, beams with a
   corner and distributed loads, meshes, time tables, drives and every joint. */
static void TestDistributedConstruction(void **state)
{
  static const char *const inputs[] = {"inputs/chain1000.yaml",
                                       "inputs/right_angle_cantilever.yaml",
                                       "inputs/mesh_net.yaml",
                                       "tests/inputs/beams/uniform_cantilever.yaml",
                                       "tests/inputs/beams/grid.yaml",
                                       "tests/inputs/joints/joint_zoo.yaml",
                                       "tests/inputs/drives/drive_zoo.yaml"};
  PetscMPIInt              size;

  (void)state;
  assert_int_equal(MPI_Comm_size(PETSC_COMM_WORLD, &size), 0);
  for (size_t f = 0; f < sizeof(inputs) / sizeof(inputs[0]); f++) {
    char         path[PETSC_MAX_PATH_LEN];
    MbsModel     dist, whole;
    MbsRunConfig cfg;
    PetscInt     n, nwhole, held = 0, most;
    PetscReal   *qd, *qw, scale = 0, diff = 0;

    InputPath(path, sizeof(path), inputs[f]);
    assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &dist), 0);
    if (MbsModelLoadYAML(dist, path, &cfg)) fail_msg("%s: %s", inputs[f], error_message);
    assert_int_equal(MbsModelGetNumBodies(dist, &n), 0);
    for (PetscInt b = 0; b < n; b++) {
      PetscBool h;
      assert_int_equal(MbsModelHoldsBody(dist, b, &h), 0);
      held += h;
    }
    assert_int_equal(MPI_Allreduce(&held, &most, 1, MPIU_INT, MPI_MAX, PETSC_COMM_WORLD), 0);
    /* a chain: its share and a neighbour at each cut; a 2-D mesh or grid: its share and the cut's perimeter */
    if (size > 1 && n >= 100 && !(most <= (f == 0 ? 1.1 * n / size + 2 * size : 0.8 * n)))
      fail_msg("%s: a rank holds %" PetscInt_FMT " of %" PetscInt_FMT " bodies before the set-up on %d ranks",
               inputs[f], most, n, size);
    if (size == 1 && held != n) fail_msg("%s: one rank holds %" PetscInt_FMT " of %" PetscInt_FMT, inputs[f], held, n);
    if (MbsModelSetUp(dist)) fail_msg("%s: set-up: %s", inputs[f], error_message);
    /* after the set-up nothing of every element stays on a rank: it stores its own elements, and the first pass's
       record of every element's kind and bodies (the partition's) is gone */
    if (size > 1 && (dist->einfo || dist->nelem_store != dist->nelem_local))
      fail_msg("%s: after the set-up a rank keeps %s and %" PetscInt_FMT " elements of which it owns %" PetscInt_FMT,
               inputs[f], dist->einfo ? "every element's info" : "no element info", dist->nelem_store,
               dist->nelem_local);
    assert_int_equal(MbsModelCreate(PETSC_COMM_SELF, &whole), 0);
    if (MbsModelLoadYAML(whole, path, &cfg)) fail_msg("%s: %s", inputs[f], error_message);
    assert_int_equal(MbsModelGetNumBodies(whole, &nwhole), 0);
    assert_int_equal(nwhole, n);
    assert_int_equal(MbsModelSetUp(whole), 0);
    assert_int_equal(PetscMalloc2(12 * n, &qd, 12 * n, &qw), 0);
    StepAndGather(dist, n, qd);
    StepAndGather(whole, n, qw);
    for (PetscInt i = 0; i < 12 * n; i++) {
      scale = PetscMax(scale, PetscAbsReal(qw[i]));
      diff  = PetscMax(diff, PetscAbsReal(qd[i] - qw[i]));
    }
    if (!(diff <= 1e-10 * PetscMax(scale, 1.0)))
      fail_msg("%s: on %d ranks the state after 3 steps differs from one rank's by %g (scale %g)", inputs[f], size,
               (double)diff, (double)scale);
    assert_int_equal(PetscFree2(qd, qw), 0);
    assert_int_equal(MbsModelDestroy(&dist), 0);
    assert_int_equal(MbsModelDestroy(&whole), 0);
  }
}

/* The construction in two passes through the C API: a pendulum chain of rigid links and particles built by one
   function called twice. The first pass holds no body; the model cannot be set up before it is partitioned; the
   second pass must repeat the first (a missing element is refused at the set-up, a different one at once); the model
   then equals the one built whole. */
static PetscErrorCode BuildPendulums(MbsModel model, PetscInt n, PetscInt skip)
{
  const PetscReal X[3] = {-1, 0, 0}, J[3] = {1, 1, 1}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  PetscInt        prev = MBS_GROUND;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < n; k++) { /* body k at (k + 1, 0, 0): rigid links (even k) and particles (odd k) */
    const PetscReal x[3] = {(PetscReal)(k + 1), 0, 0};
    PetscInt        body;
    if (k % 2)
      PetscCall(MbsModelAddParticle(model, NULL, 1.0, x, NULL, &body));
    else
      PetscCall(MbsModelAddRigidBody(model, NULL, 1.0, J, x, R, NULL, NULL, &body));
    if (k != skip) {
      if (k % 2) /* a rod from the link's centre to the particle, its length the initial distance (completion) */
        PetscCall(MbsModelAddRod(model, prev, NULL, body, NULL, PETSC_DETERMINE, NULL));
      else /* the link's end X on the particle before it, or on the origin */
        PetscCall(MbsModelAddSpherical(model, prev, NULL, body, X, NULL));
    }
    prev = body;
  }
  PetscFunctionReturn(0);
}

/* The first pass of BuildPendulums() on a new model with gravity */
static void FirstPass(const PetscReal grav[3], PetscInt n, MbsModel *model)
{
  assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, model), 0);
  assert_int_equal(MbsModelSetGravity(*model, grav), 0);
  assert_int_equal(MbsModelBeginGraph(*model), 0);
  assert_int_equal(BuildPendulums(*model, n, -1), 0);
}

static void TestTwoPassCAPI(void **state)
{
  const PetscInt  n       = 40;
  const PetscReal grav[3] = {0, 0, -9.81};
  MbsModel        two, whole;
  PetscBool       held;
  PetscReal      *qt, *qw, diff = 0;
  PetscInt        nheld = 0;

  (void)state;
  FirstPass(grav, n, &two);
  assert_int_equal(MbsModelHoldsBody(two, 0, &held), 0);
  assert_false(held);
  {
    PetscInt b;
    ClearError();
    assert_int_equal(MbsModelFindBody(two, "bob", &b), PETSC_ERR_ORDER); /* the first pass records no names */
    ExpectContains("two passes", error_message, "records no names");
  }
  ClearError();
  assert_int_equal(MbsModelSetUp(two), PETSC_ERR_ORDER);
  ExpectContains("two passes", error_message, "MbsModelPartition()");
  assert_int_equal(MbsModelPartition(two), 0);
  ClearError();
  assert_int_equal(BuildPendulums(two, n, 3), PETSC_ERR_ORDER); /* the second pass must repeat the first */
  ExpectContains("two passes", error_message, "in the same order");
  assert_int_equal(MbsModelDestroy(&two), 0);

  FirstPass(grav, n, &two);
  assert_int_equal(MbsModelPartition(two), 0);
  assert_int_equal(BuildPendulums(two, n - 1, -1), 0); /* one body and element short */
  ClearError();
  assert_int_equal(MbsModelSetUp(two), PETSC_ERR_ORDER);
  ExpectContains("two passes", error_message, "were added again");
  assert_int_equal(MbsModelDestroy(&two), 0);

  FirstPass(grav, n, &two);
  assert_int_equal(MbsModelPartition(two), 0);
  assert_int_equal(BuildPendulums(two, n, -1), 0);
  ClearError();
  assert_int_equal(BuildPendulums(two, 1, -1), PETSC_ERR_ORDER); /* complete: no more bodies */
  ExpectContains("two passes", error_message, "it takes no more");
  ClearError();
  assert_int_equal(MbsModelSetPartitioner(two, "contiguous"), PETSC_ERR_ORDER);
  ExpectContains("two passes", error_message, "partitioned already");
  for (PetscInt b = 0; b < n; b++) {
    assert_int_equal(MbsModelHoldsBody(two, b, &held), 0);
    nheld += held;
    if (!held) {
      PetscReal x[3];
      ClearError();
      assert_int_equal(MbsModelGetPointPosition(two, b, (PetscReal[3]){0, 0, 0}, x), PETSC_ERR_ARG_WRONG);
      ExpectContains("not held", error_message, "is not held by rank");
    }
  }
  {
    PetscMPIInt size;
    assert_int_equal(MPI_Comm_size(PETSC_COMM_WORLD, &size), 0);
    if (size > 1 && !(nheld < n)) fail_msg("a rank holds all %" PetscInt_FMT " bodies of a two-pass construction", n);
  }
  assert_int_equal(MbsModelSetUp(two), 0);
  assert_int_equal(MbsModelCreate(PETSC_COMM_SELF, &whole), 0);
  assert_int_equal(MbsModelSetGravity(whole, grav), 0);
  assert_int_equal(BuildPendulums(whole, n, -1), 0);
  assert_int_equal(MbsModelSetUp(whole), 0);
  assert_int_equal(PetscMalloc2(12 * n, &qt, 12 * n, &qw), 0);
  StepAndGather(two, n, qt);
  StepAndGather(whole, n, qw);
  for (PetscInt i = 0; i < 12 * n; i++) diff = PetscMax(diff, PetscAbsReal(qt[i] - qw[i]));
  if (!(diff <= 1e-10 * n)) fail_msg("two passes against whole: the states differ by %g", (double)diff);
  { /* built whole on every rank: the set-up keeps each rank's own elements only, and the states are the same */
    MbsModel    wide;
    PetscMPIInt size;
    assert_int_equal(MPI_Comm_size(PETSC_COMM_WORLD, &size), 0);
    assert_int_equal(MbsModelCreate(PETSC_COMM_WORLD, &wide), 0);
    assert_int_equal(MbsModelSetGravity(wide, grav), 0);
    assert_int_equal(BuildPendulums(wide, n, -1), 0);
    assert_int_equal(MbsModelSetUp(wide), 0);
    if (wide->einfo || (size > 1 && (!wide->elems_local || wide->nelem_store != wide->nelem_local)))
      fail_msg("built whole, after the set-up on %d ranks a rank keeps %" PetscInt_FMT " elements of which it owns "
               "%" PetscInt_FMT "%s",
               size, wide->nelem_store, wide->nelem_local, wide->einfo ? ", and every element's info" : "");
    StepAndGather(wide, n, qt);
    diff = 0;
    for (PetscInt i = 0; i < 12 * n; i++) diff = PetscMax(diff, PetscAbsReal(qt[i] - qw[i]));
    if (!(diff <= 1e-10 * n))
      fail_msg("built whole on %d ranks against one: the states differ by %g", size, (double)diff);
    assert_int_equal(MbsModelDestroy(&wide), 0);
  }
  assert_int_equal(PetscFree2(qt, qw), 0);
  assert_int_equal(MbsModelDestroy(&two), 0);
  assert_int_equal(MbsModelDestroy(&whole), 0);
}

int main(int argc, char **argv)
{
  const size_t nbad  = sizeof(bad_inputs) / sizeof(bad_inputs[0]);
  const size_t ngood = sizeof(good_inputs) / sizeof(good_inputs[0]);
  struct CMUnitTest
              tests[sizeof(bad_inputs) / sizeof(bad_inputs[0]) + sizeof(good_inputs) / sizeof(good_inputs[0]) + 16];
  size_t      n = 0;
  int         failed;
  PetscMPIInt size;

  if (PetscInitialize(&argc, &argv, NULL, NULL)) return 1;
  if (MPI_Comm_size(PETSC_COMM_WORLD, &size)) return 1;
  if (PetscPushErrorHandler(CaptureError, NULL)) return 1;
  /* cmocka's report goes to an XML file, so a passing run prints nothing; failures still print to stderr */
  if (!getenv("CMOCKA_XML_FILE")) {
    char        report[64];
    PetscMPIInt rank;

    if (MPI_Comm_rank(PETSC_COMM_WORLD, &rank)) return 1;
    snprintf(report, sizeof(report), "test_yaml.%d.xml", rank);
    (void)remove(report); /* cmocka writes to stderr instead of an existing file */
    if (setenv("CMOCKA_XML_FILE", report, 1)) return 1;
  }
  cmocka_set_message_output(CM_OUTPUT_XML);
  tests[n++] = (struct CMUnitTest){"distributed construction", TestDistributedConstruction, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"two passes through the C API", TestTwoPassCAPI, NULL, NULL, NULL};
  if (size > 1) { /* several ranks: the construction in two passes, and errors found only where the data is */
    tests[n++] = (struct CMUnitTest){"drive with an inconsistent initial velocity", TestDriveInconsistentVelocity, NULL,
                                     NULL, NULL};
    tests[n++] = (struct CMUnitTest){"labels", TestLabels, NULL, NULL, NULL};
    for (size_t i = 0; i < nbad; i++)
      tests[n++] = (struct CMUnitTest){bad_inputs[i].name, TestBadInput, NULL, NULL, (void *)&bad_inputs[i]};
    goto run;
  }
  for (size_t i = 0; i < ngood; i++)
    tests[n++] = (struct CMUnitTest){good_inputs[i].file, TestGoodInput, NULL, NULL, (void *)&good_inputs[i]};
  tests[n++] = (struct CMUnitTest){"heavy top invariants", TestHeavyTopInvariants, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"features", TestFeatures, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"joints through the C API", TestJointsCAPI, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"dampers through the C API", TestDamperCAPI, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"loads through the C API", TestLoadsCAPI, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"drives through the C API", TestDrivesCAPI, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"torsional spring and damper through the C API", TestTorsionCAPI, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"scheme parameters", TestSchemeParameters, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"run config defaults", TestRunConfigDefaults, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"missing file", TestMissingFile, NULL, NULL, NULL};
  tests[n++] =
    (struct CMUnitTest){"drive with an inconsistent initial velocity", TestDriveInconsistentVelocity, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"not a regular file", TestNotRegularFile, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"labels", TestLabels, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"memory limit", TestMemoryLimit, NULL, NULL, NULL};
  for (size_t i = 0; i < nbad; i++)
    tests[n++] = (struct CMUnitTest){bad_inputs[i].name, TestBadInput, NULL, NULL, (void *)&bad_inputs[i]};
run:
  failed = _cmocka_run_group_tests("yaml", tests, n, NULL, NULL);
  if (PetscPopErrorHandler()) return 1;
  if (PetscFinalize()) return 1;
  return failed;
}

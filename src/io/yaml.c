/*
  YAML input reader (schema: docs/input.md).

  Rank 0 reads the file and broadcasts its bytes; every rank parses the same bytes with libyaml's
  document API and calls the same model setters, so all ranks build the same model. Every input error
  is PETSC_ERR_USER_INPUT with "file:line:column: key 'path': expected ..., got ...".
*/
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include <gglmbs/io.h>
#include <gglmbs/stepper.h>

#include "io/gmsh.h"
#include "io/readfile.h"
#include "model/memory.h"
#include <gglmbs/elements.h>

#define MBS_YAML_PATH_LEN     256
#define MBS_YAML_GOT_LEN      96
#define MBS_YAML_ROTATION_TOL 1e-9
/* lengths of directions and axes, which are normalized */
#define MBS_YAML_DIRECTION_MIN 1e-150
#define MBS_YAML_DIRECTION_MAX 1e150

typedef enum { MBS_YAML_FINITE, MBS_YAML_POSITIVE, MBS_YAML_NONNEGATIVE } MbsYAMLRange;

typedef struct {
  const char *name; /* points into the document */
  PetscInt    item; /* index in the 'bodies' list */
  PetscInt    body; /* model index, set when the body is added */
  MbsBodyType type;
  yaml_mark_t mark; /* of the name's value */
} MbsYAMLBody;

/* A generator's members are named "<name>.<i>" (chains, rigid chains), "<name>.<i>.<j>" (nets) or
   "<name>.<node tag>" (meshes); a reference is resolved by parsing the indices, not by a search. */
typedef enum { MBS_YAML_CHAIN, MBS_YAML_RIGID_CHAIN, MBS_YAML_NET, MBS_YAML_MESH } MbsYAMLGroupKind;

typedef struct {
  MbsYAMLGroupKind kind;
  const char      *name; /* points into the document */
  size_t           len;
  const char      *section; /* "chains", ..., and the item index there, for messages */
  PetscInt         item;
  PetscInt         count, ny;       /* members (chain links; net nodes along i and j; mesh nodes) */
  PetscInt         first_body;      /* member k is body first_body + k (net node (i, j): k = i ny + j) */
  PetscInt        *tags, *tag_node; /* mesh: node tags in increasing order and the node index of each */
} MbsYAMLGroup;

typedef struct {
  MPI_Comm         comm;
  const char      *file;
  yaml_document_t *doc;
  MbsModel         model;
  PetscInt         nbodies, ngroups;
  MbsYAMLBody     *bodies; /* in list order */
  MbsYAMLBody    **sorted; /* by name, for lookup */
  MbsYAMLGroup    *groups; /* chains, rigid chains, nets and meshes, in this order */
} MbsYAMLReader;

/* A resolved body reference: MBS_GROUND, a listed body or a chain member. */
typedef struct {
  PetscInt    body;
  MbsBodyType type;
  PetscBool   ground;
} MbsYAMLBodyRef;

static const char *const top_keys[]      = {"time", "scheme", "gravity", "bodies",  "chains", "rigid_chains",
                                            "nets", "meshes", "joints",  "springs", "output", NULL};
static const char *const time_keys[]     = {"step", "end", NULL};
static const char *const output_keys[]   = {"directory", "every", "trajectory", NULL};
static const char *const particle_keys[] = {"name", "type", "mass", "position", "velocity", NULL};
static const char *const rigid_keys[]    = {
     "name", "type", "mass", "inertia", "position", "orientation", "velocity", "angular_velocity", NULL};
static const char *const orientation_keys[] = {"matrix", "axis", "angle", NULL};
static const char *const chain_keys[]       = {"name", "count", "mass", "length", "start", "direction", NULL};
static const char *const rigid_chain_keys[] = {"name",  "count",     "mass",  "inertia", "length",
                                               "start", "direction", "joint", "axis",    NULL};
static const char *const net_keys[]       = {"name", "count", "mass", "spacing", "origin", "directions", "fixed", NULL};
static const char *const net_fixed_keys[] = {"i", "j", NULL};
static const char *const mesh_keys[]      = {"name",  "file",        "line_density", "node_mass", "fixed",
                                             "scale", "orientation", "translation",  NULL};

static yaml_node_t *NodeGet(MbsYAMLReader *r, yaml_node_item_t item)
{
  return yaml_document_get_node(r->doc, item);
}

static const char *ScalarText(yaml_node_t *node)
{
  return (const char *)node->data.scalar.value;
}

static PetscInt SequenceLength(yaml_node_t *node)
{
  return (PetscInt)(node->data.sequence.items.top - node->data.sequence.items.start);
}

static yaml_node_t *SequenceItem(MbsYAMLReader *r, yaml_node_t *node, PetscInt i)
{
  return NodeGet(r, node->data.sequence.items.start[i]);
}

static PetscBool ScalarIsNull(yaml_node_t *node)
{
  const char *s = ScalarText(node);

  if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return PETSC_FALSE;
  return (PetscBool)(!s[0] || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"));
}

/* What a node is, for the "got ..." part of a message. */
static void Describe(yaml_node_t *node, char got[], size_t size)
{
  switch (node->type) {
    case YAML_SCALAR_NODE:
      if (ScalarIsNull(node))
        snprintf(got, size, "an empty value");
      else if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        snprintf(got, size, "the quoted string \"%.40s%s\"", ScalarText(node),
                 node->data.scalar.length > 40 ? "..." : "");
      else
        snprintf(got, size, "'%.40s%s'", ScalarText(node), node->data.scalar.length > 40 ? "..." : "");
      break;
    case YAML_SEQUENCE_NODE: {
      PetscInt n = SequenceLength(node);
      if (n)
        snprintf(got, size, "a sequence of %" PetscInt_FMT " item%s", n, n == 1 ? "" : "s");
      else
        snprintf(got, size, "an empty sequence");
    } break;
    case YAML_MAPPING_NODE: snprintf(got, size, "a mapping"); break;
    default: snprintf(got, size, "nothing");
  }
}

/* Paths deeper than the buffer end in "..." rather than being cut anywhere. */
static void PathKey(char out[MBS_YAML_PATH_LEN], const char parent[], const char key[])
{
  if (snprintf(out, MBS_YAML_PATH_LEN, "%s%s%s", parent, parent[0] ? "." : "", key) >= MBS_YAML_PATH_LEN)
    strcpy(out + MBS_YAML_PATH_LEN - 4, "...");
}

static void PathIndex(char out[MBS_YAML_PATH_LEN], const char parent[], PetscInt i)
{
  if (snprintf(out, MBS_YAML_PATH_LEN, "%s[%" PetscInt_FMT "]", parent, i) >= MBS_YAML_PATH_LEN)
    strcpy(out + MBS_YAML_PATH_LEN - 4, "...");
}

static void KeyList(const char *const keys[], char out[], size_t size)
{
  size_t used = 0;

  out[0] = 0;
  for (PetscInt i = 0; keys[i] && used < size; i++) {
    int n = snprintf(out + used, size - used, "%s%s", i ? ", " : "", keys[i]);
    if (n < 0) break;
    used += (size_t)n;
  }
}

static PetscErrorCode Fail(MbsYAMLReader *r, yaml_mark_t mark, const char path[], const char expected[],
                           const char got[])
{
  PetscFunctionBegin;
  SETERRQ(r->comm, PETSC_ERR_USER_INPUT, "%s:%zu:%zu: key '%s': expected %s, got %s", r->file, mark.line + 1,
          mark.column + 1, path[0] ? path : "(document)", expected, got);
}

static PetscErrorCode FailNode(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char expected[])
{
  char got[MBS_YAML_GOT_LEN];

  PetscFunctionBegin;
  Describe(node, got, sizeof(got));
  PetscCall(Fail(r, node->start_mark, path, expected, got));
  PetscFunctionReturn(0);
}

static PetscErrorCode ExpectMapping(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char expected[])
{
  PetscFunctionBegin;
  if (node->type != YAML_MAPPING_NODE) PetscCall(FailNode(r, node, path, expected));
  PetscFunctionReturn(0);
}

static PetscErrorCode ExpectSequence(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char expected[])
{
  PetscFunctionBegin;
  if (node->type != YAML_SEQUENCE_NODE) PetscCall(FailNode(r, node, path, expected));
  PetscFunctionReturn(0);
}

/* Every key of a mapping is a scalar, appears once and is one of 'allowed' (any name if allowed is NULL:
   the caller checks the names itself). */
static PetscErrorCode CheckKeys(MbsYAMLReader *r, yaml_node_t *map, const char path[], const char *const allowed[],
                                const char context[])
{
  PetscFunctionBegin;
  for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
    yaml_node_t *key = NodeGet(r, pair->key);
    char         keypath[MBS_YAML_PATH_LEN], expected[256], got[MBS_YAML_GOT_LEN + 32];
    PetscBool    known = allowed ? PETSC_FALSE : PETSC_TRUE;

    if (key->type != YAML_SCALAR_NODE) PetscCall(FailNode(r, key, path, "a mapping with plain names as keys"));
    for (PetscInt i = 0; allowed && allowed[i]; i++)
      if (!strcmp(allowed[i], ScalarText(key))) known = PETSC_TRUE;
    PathKey(keypath, path, ScalarText(key));
    if (!known) {
      char list[192];

      KeyList(allowed, list, sizeof(list));
      snprintf(expected, sizeof(expected), "one of the keys %s%s", list, context);
      snprintf(got, sizeof(got), "unknown key '%.60s'", ScalarText(key));
      PetscCall(Fail(r, key->start_mark, keypath, expected, got));
    }
    for (yaml_node_pair_t *prev = map->data.mapping.pairs.start; prev < pair; prev++) {
      yaml_node_t *prevkey = NodeGet(r, prev->key);

      if (!strcmp(ScalarText(prevkey), ScalarText(key))) {
        snprintf(got, sizeof(got), "it again (first at line %zu, column %zu)", prevkey->start_mark.line + 1,
                 prevkey->start_mark.column + 1);
        PetscCall(Fail(r, key->start_mark, keypath, "each key at most once", got));
      }
    }
  }
  PetscFunctionReturn(0);
}

/* The value of 'key' in 'map' (NULL if absent; an error if absent and required); path receives the key's path. */
static PetscErrorCode Lookup(MbsYAMLReader *r, yaml_node_t *map, const char parent[], const char key[],
                             const char expected_if_missing[], char path[MBS_YAML_PATH_LEN], yaml_node_t **value)
{
  PetscFunctionBegin;
  PathKey(path, parent, key);
  *value = NULL;
  for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
    yaml_node_t *k = NodeGet(r, pair->key);

    if (k->type == YAML_SCALAR_NODE && !strcmp(ScalarText(k), key)) {
      *value = NodeGet(r, pair->value);
      break;
    }
  }
  if (!*value && expected_if_missing)
    PetscCall(Fail(r, map->start_mark, path, expected_if_missing, "nothing (the key is missing)"));
  PetscFunctionReturn(0);
}

static PetscBool IsYAMLNonFinite(const char s[])
{
  static const char *const spellings[] = {".inf",  ".Inf",  ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
                                          "-.Inf", "-.INF", ".nan", ".NaN",  ".NAN",  NULL};

  for (PetscInt i = 0; spellings[i]; i++)
    if (!strcmp(s, spellings[i])) return PETSC_TRUE;
  return PETSC_FALSE;
}

/* A plain scalar that reads as a finite double; 'expected' is the whole "expected ..." text of the error. */
static PetscErrorCode ParseFinite(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char expected[],
                                  double *value)
{
  double v   = 0.0;
  char  *end = NULL;

  PetscFunctionBegin;
  if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || ScalarIsNull(node))
    PetscCall(FailNode(r, node, path, expected));
  if (IsYAMLNonFinite(ScalarText(node))) PetscCall(FailNode(r, node, path, expected));
  errno = 0;
  v     = strtod(ScalarText(node), &end);
  if (end == ScalarText(node) || *end || !isfinite(v)) PetscCall(FailNode(r, node, path, expected));
  *value = v;
  PetscFunctionReturn(0);
}

static PetscErrorCode ParseReal(MbsYAMLReader *r, yaml_node_t *node, const char path[], MbsYAMLRange range,
                                const char quantity[], PetscReal *value)
{
  const char *what = range == MBS_YAML_POSITIVE
                       ? "a positive number"
                       : (range == MBS_YAML_NONNEGATIVE ? "a non-negative number" : "a finite number");
  char        expected[160];
  double      v = 0.0;

  PetscFunctionBegin;
  if (quantity)
    snprintf(expected, sizeof(expected), "%s (%s)", what, quantity);
  else
    snprintf(expected, sizeof(expected), "%s", what);
  PetscCall(ParseFinite(r, node, path, expected, &v));
  /* positive quantities (masses, lengths, step, ...) are divided by or normalized: no subnormal ones */
  if ((range == MBS_YAML_POSITIVE && !(v >= DBL_MIN)) || (range == MBS_YAML_NONNEGATIVE && !(v >= 0)))
    PetscCall(FailNode(r, node, path, expected));
  *value = (PetscReal)v;
  PetscFunctionReturn(0);
}

static PetscErrorCode ParseInt(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char quantity[],
                               PetscInt *value)
{
  char      expected[160];
  long long v   = 0;
  char     *end = NULL;

  PetscFunctionBegin;
  snprintf(expected, sizeof(expected), "a positive integer (%s)", quantity);
  if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || ScalarIsNull(node))
    PetscCall(FailNode(r, node, path, expected));
  errno = 0;
  v     = strtoll(ScalarText(node), &end, 10);
  if (end == ScalarText(node) || *end || errno == ERANGE || v < 1 || v > (long long)PETSC_MAX_INT)
    PetscCall(FailNode(r, node, path, expected));
  *value = (PetscInt)v;
  PetscFunctionReturn(0);
}

static PetscErrorCode ParseString(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char expected[],
                                  const char **value)
{
  PetscFunctionBegin;
  if (node->type != YAML_SCALAR_NODE || ScalarIsNull(node)) PetscCall(FailNode(r, node, path, expected));
  *value = ScalarText(node);
  PetscFunctionReturn(0);
}

static PetscErrorCode ParseVec3(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char quantity[],
                                PetscReal v[3])
{
  char expected[160];

  PetscFunctionBegin;
  snprintf(expected, sizeof(expected), "a 3-vector [x, y, z] (%s)", quantity);
  if (node->type != YAML_SEQUENCE_NODE || SequenceLength(node) != 3) PetscCall(FailNode(r, node, path, expected));
  for (PetscInt i = 0; i < 3; i++) {
    char itempath[MBS_YAML_PATH_LEN];

    PathIndex(itempath, path, i);
    PetscCall(ParseReal(r, SequenceItem(r, node, i), itempath, MBS_YAML_FINITE, NULL, &v[i]));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode ParseNonzeroVec3(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char quantity[],
                                       PetscReal v[3])
{
  char expected[160];

  PetscFunctionBegin;
  PetscCall(ParseVec3(r, node, path, quantity, v));
  snprintf(expected, sizeof(expected), "a non-zero 3-vector (%s)", quantity);
  if (v[0] == 0 && v[1] == 0 && v[2] == 0) PetscCall(Fail(r, node->start_mark, path, expected, "[0, 0, 0]"));
  {
    /* it is normalized: its length must be neither subnormal nor overflow when squared */
    const PetscReal norm = PetscSqrtReal(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);

    if (!(norm >= MBS_YAML_DIRECTION_MIN && norm <= MBS_YAML_DIRECTION_MAX)) {
      char got[MBS_YAML_GOT_LEN];

      snprintf(expected, sizeof(expected), "a 3-vector of length from %g to %g (%s)", MBS_YAML_DIRECTION_MIN,
               MBS_YAML_DIRECTION_MAX, quantity);
      snprintf(got, sizeof(got), "[%g, %g, %g]", (double)v[0], (double)v[1], (double)v[2]);
      PetscCall(Fail(r, node->start_mark, path, expected, got));
    }
  }
  PetscFunctionReturn(0);
}

/* Rows [[r11, r12, r13], ...] into row-major R[3*i + j] = r_(i+1)(j+1). */
static PetscErrorCode ParseMat3(MbsYAMLReader *r, yaml_node_t *node, const char path[], PetscReal R[9])
{
  const char *expected = "a 3x3 matrix [[r11, r12, r13], [r21, r22, r23], [r31, r32, r33]]";

  PetscFunctionBegin;
  if (node->type != YAML_SEQUENCE_NODE || SequenceLength(node) != 3) PetscCall(FailNode(r, node, path, expected));
  for (PetscInt i = 0; i < 3; i++) {
    yaml_node_t *row = SequenceItem(r, node, i);
    char         rowpath[MBS_YAML_PATH_LEN];

    PathIndex(rowpath, path, i);
    if (row->type != YAML_SEQUENCE_NODE || SequenceLength(row) != 3)
      PetscCall(FailNode(r, row, rowpath, "a matrix row [r_i1, r_i2, r_i3]"));
    for (PetscInt j = 0; j < 3; j++) {
      char itempath[MBS_YAML_PATH_LEN];

      PathIndex(itempath, rowpath, j);
      PetscCall(ParseReal(r, SequenceItem(r, row, j), itempath, MBS_YAML_FINITE, NULL, &R[3 * i + j]));
    }
  }
  PetscFunctionReturn(0);
}

/* orientation: {matrix: ...} or {axis: ..., angle: ...}; R row-major, its columns are the directors d_i. */
static PetscErrorCode ParseOrientation(MbsYAMLReader *r, yaml_node_t *node, const char path[], PetscReal R[9])
{
  const char  *expected = "a mapping {matrix: [[..], [..], [..]]} or {axis: [x, y, z], angle: radians}";
  yaml_node_t *matrix, *axis, *angle;
  char         mpath[MBS_YAML_PATH_LEN], apath[MBS_YAML_PATH_LEN], anpath[MBS_YAML_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(ExpectMapping(r, node, path, expected));
  PetscCall(CheckKeys(r, node, path, orientation_keys, ""));
  PetscCall(Lookup(r, node, path, "matrix", NULL, mpath, &matrix));
  PetscCall(Lookup(r, node, path, "axis", NULL, apath, &axis));
  PetscCall(Lookup(r, node, path, "angle", NULL, anpath, &angle));
  if (matrix) {
    PetscReal err = 0, det;
    char      got[MBS_YAML_GOT_LEN];

    if (axis || angle) PetscCall(Fail(r, node->start_mark, path, "either 'matrix' or 'axis' and 'angle'", "both"));
    PetscCall(ParseMat3(r, matrix, mpath, R));
    for (PetscInt i = 0; i < 3; i++)
      for (PetscInt j = 0; j < 3; j++) {
        PetscReal dot = R[i] * R[j] + R[3 + i] * R[3 + j] + R[6 + i] * R[6 + j];
        err           = PetscMax(err, PetscAbsReal(dot - (i == j ? 1.0 : 0.0)));
      }
    det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) + R[2] * (R[3] * R[7] - R[4] * R[6]);
    if (!(err <= MBS_YAML_ROTATION_TOL)) {
      snprintf(got, sizeof(got), "a matrix with max |R^T R - I| = %.3e", (double)err);
      PetscCall(Fail(r, matrix->start_mark, mpath, "a rotation matrix (orthonormal to 1e-9, determinant +1)", got));
    }
    if (det < 0) {
      snprintf(got, sizeof(got), "a reflection (determinant %.17g)", (double)det);
      PetscCall(Fail(r, matrix->start_mark, mpath, "a rotation matrix (orthonormal to 1e-9, determinant +1)", got));
    }
  } else {
    PetscReal n[3] = {0, 0, 0}, theta = 0, norm, c, s;

    PetscCall(Lookup(r, node, path, "axis", "a non-zero 3-vector (rotation axis; or give 'matrix')", apath, &axis));
    PetscCall(Lookup(r, node, path, "angle", "a finite number (rotation angle in radians)", anpath, &angle));
    PetscCall(ParseNonzeroVec3(r, axis, apath, "rotation axis", n));
    PetscCall(ParseReal(r, angle, anpath, MBS_YAML_FINITE, "rotation angle in radians", &theta));
    norm = PetscSqrtReal(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (PetscInt i = 0; i < 3; i++) n[i] /= norm;
    c = PetscCosReal(theta);
    s = PetscSinReal(theta);
    /* Rodrigues: R = c I + s [n]x + (1 - c) n n^T */
    for (PetscInt i = 0; i < 3; i++)
      for (PetscInt j = 0; j < 3; j++) R[3 * i + j] = (1 - c) * n[i] * n[j] + (i == j ? c : 0.0);
    R[1] -= s * n[2];
    R[2] += s * n[1];
    R[3] += s * n[2];
    R[5] -= s * n[0];
    R[6] -= s * n[1];
    R[7] += s * n[0];
  }
  PetscFunctionReturn(0);
}

/* Principal moments [J1, J2, J3], each positive and smaller than the sum of the other two. */
static PetscErrorCode ParseInertia(MbsYAMLReader *r, yaml_node_t *node, const char path[], PetscReal J[3])
{
  char jpath[MBS_YAML_PATH_LEN];

  PetscFunctionBegin;
  if (node->type != YAML_SEQUENCE_NODE || SequenceLength(node) != 3)
    PetscCall(FailNode(r, node, path, "a 3-vector [J1, J2, J3] (principal moments of inertia in kg m^2)"));
  for (PetscInt k = 0; k < 3; k++) {
    PathIndex(jpath, path, k);
    PetscCall(
      ParseReal(r, SequenceItem(r, node, k), jpath, MBS_YAML_POSITIVE, "principal moment of inertia in kg m^2", &J[k]));
  }
  for (PetscInt k = 0; k < 3; k++) {
    PetscInt j = (k + 1) % 3, l = (k + 2) % 3;

    if (!(J[k] < J[j] + J[l])) {
      char got[MBS_YAML_GOT_LEN + 32];

      snprintf(got, sizeof(got), "J%d = %g >= J%d + J%d = %g", (int)k + 1, (double)J[k], (int)j + 1, (int)l + 1,
               (double)(J[j] + J[l]));
      PetscCall(Fail(r, node->start_mark, path,
                     "principal moments with J_i < J_j + J_k for each i (so that E_i = (J_j + J_k - J_i)/2 > 0)", got));
    }
  }
  PetscFunctionReturn(0);
}

static int CompareBodies(const void *a, const void *b)
{
  const MbsYAMLBody *x = *(const MbsYAMLBody *const *)a, *y = *(const MbsYAMLBody *const *)b;
  int                c = strcmp(x->name, y->name);

  if (c) return c;
  return (x->item > y->item) - (x->item < y->item);
}

static MbsYAMLBody *FindListedBody(MbsYAMLReader *r, const char name[])
{
  PetscInt lo = 0, hi = r->nbodies;

  while (lo < hi) {
    PetscInt mid = lo + (hi - lo) / 2;
    int      c   = strcmp(r->sorted[mid]->name, name);

    if (!c) return r->sorted[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

/* The decimal index after the last '.' of name[0..len), without sign or leading zeros. */
static PetscBool SplitIndex(const char name[], size_t len, size_t *prefix_len, PetscInt *index)
{
  size_t    dot = len;
  long long i   = 0;

  while (dot > 0 && name[dot - 1] != '.') dot--;
  if (!dot || dot == len || (name[dot] == '0' && dot + 1 < len)) return PETSC_FALSE;
  for (size_t k = dot; k < len; k++) {
    if (name[k] < '0' || name[k] > '9' || i > (long long)PETSC_MAX_INT) return PETSC_FALSE;
    i = 10 * i + (name[k] - '0');
  }
  if (i > (long long)PETSC_MAX_INT) return PETSC_FALSE;
  *prefix_len = dot - 1;
  *index      = (PetscInt)i;
  return PETSC_TRUE;
}

static PetscBool GroupNamed(const MbsYAMLGroup *g, const char name[], size_t len)
{
  return (PetscBool)(g->len == len && !strncmp(g->name, name, len));
}

static const char *GroupMemberPattern(MbsYAMLGroupKind kind)
{
  switch (kind) {
    case MBS_YAML_NET: return "'<name>.<i>.<j>'";
    case MBS_YAML_MESH: return "'<name>.<node tag>'";
    default: return "'<name>.<i>'";
  }
}

/* A generator member by name: *group and *body, or *group = NULL. *near is a generator whose name
   matches but which has no such member (for the message), or NULL. */
static void FindGroupMember(MbsYAMLReader *r, const char name[], MbsYAMLGroup **group, PetscInt *body,
                            MbsYAMLGroup **near)
{
  size_t   len = strlen(name), len1, len2;
  PetscInt k1, k2;

  *group = NULL;
  *body  = -1;
  if (near) *near = NULL;
  if (!SplitIndex(name, len, &len1, &k1)) return;
  for (PetscInt g = 0; g < r->ngroups; g++) {
    MbsYAMLGroup *gr = &r->groups[g];

    if (gr->kind == MBS_YAML_NET || !GroupNamed(gr, name, len1)) continue;
    if (near) *near = gr;
    if (gr->kind == MBS_YAML_MESH) {
      PetscInt loc;

      if (PetscFindInt(k1, gr->count, gr->tags, &loc) || loc < 0) continue;
      *body = gr->first_body + gr->tag_node[loc];
    } else if (k1 < gr->count)
      *body = gr->first_body + k1;
    else
      continue;
    *group = gr;
    return;
  }
  if (!SplitIndex(name, len1, &len2, &k2)) return;
  for (PetscInt g = 0; g < r->ngroups; g++) {
    MbsYAMLGroup *gr = &r->groups[g];

    if (gr->kind != MBS_YAML_NET || !GroupNamed(gr, name, len2)) continue;
    if (near) *near = gr;
    if (k2 < gr->count && k1 < gr->ny) {
      *group = gr;
      *body  = gr->first_body + k2 * gr->ny + k1;
      return;
    }
  }
}

static PetscErrorCode ResolveBody(MbsYAMLReader *r, yaml_node_t *node, const char path[], PetscBool allow_ground,
                                  MbsYAMLBodyRef *ref)
{
  const char *expected =
    allow_ground
      ? "the name of a body in 'bodies' or of a generated one (chains, rigid_chains, nets, meshes), or 'ground'"
      : "the name of a body in 'bodies' or of a generated one (chains, rigid_chains, nets, meshes), not 'ground'";
  const char   *name = NULL;
  MbsYAMLBody  *listed;
  MbsYAMLGroup *group, *near;
  PetscInt      body;

  PetscFunctionBegin;
  PetscCall(ParseString(r, node, path, expected, &name));
  if (!strcmp(name, "ground")) {
    if (!allow_ground) PetscCall(Fail(r, node->start_mark, path, expected, "'ground'"));
    ref->body   = MBS_GROUND;
    ref->type   = MBS_BODY_PARTICLE;
    ref->ground = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  ref->ground = PETSC_FALSE;
  listed      = FindListedBody(r, name);
  if (listed) {
    ref->body = listed->body;
    ref->type = listed->type;
    PetscFunctionReturn(0);
  }
  FindGroupMember(r, name, &group, &body, &near);
  if (group) {
    ref->body = body;
    ref->type = group->kind == MBS_YAML_RIGID_CHAIN ? MBS_BODY_RIGID : MBS_BODY_PARTICLE;
    PetscFunctionReturn(0);
  }
  {
    char got[MBS_YAML_GOT_LEN + 160], hint[160] = "";

    if (near) {
      switch (near->kind) {
        case MBS_YAML_NET:
          snprintf(hint, sizeof(hint),
                   " (%s[%" PetscInt_FMT "] '%.40s' has the nodes <i>.<j> with i < %" PetscInt_FMT
                   ", j < %" PetscInt_FMT ")",
                   near->section, near->item, near->name, near->count, near->ny);
          break;
        case MBS_YAML_MESH:
          snprintf(hint, sizeof(hint), " (%s[%" PetscInt_FMT "] '%.40s' has no node with this tag)", near->section,
                   near->item, near->name);
          break;
        default:
          snprintf(hint, sizeof(hint), " (%s[%" PetscInt_FMT "] '%.40s' has the members 0..%" PetscInt_FMT ")",
                   near->section, near->item, near->name, near->count - 1);
      }
    }
    snprintf(got, sizeof(got), "'%.60s', which is not defined%s", name, hint);
    PetscCall(Fail(r, node->start_mark, path, expected, got));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode ParseTime(MbsYAMLReader *r, yaml_node_t *root, MbsRunConfig *cfg)
{
  yaml_node_t *node, *step, *end;
  char         path[MBS_YAML_PATH_LEN], spath[MBS_YAML_PATH_LEN], epath[MBS_YAML_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(Lookup(r, root, "", "time", "a mapping {step: h, end: T} (seconds)", path, &node));
  PetscCall(ExpectMapping(r, node, path, "a mapping {step: h, end: T} (seconds)"));
  PetscCall(CheckKeys(r, node, path, time_keys, ""));
  PetscCall(Lookup(r, node, path, "step", "a positive number (time step in s)", spath, &step));
  PetscCall(Lookup(r, node, path, "end", "a positive number (final time in s)", epath, &end));
  PetscCall(ParseReal(r, step, spath, MBS_YAML_POSITIVE, "time step in s", &cfg->dt));
  PetscCall(ParseReal(r, end, epath, MBS_YAML_POSITIVE, "final time in s", &cfg->t_end));
  /* the stepper counts steps in PetscInt: ceil(end / step) must fit */
  if (!(cfg->t_end / cfg->dt < (PetscReal)PETSC_MAX_INT)) {
    char expected[160], got[MBS_YAML_GOT_LEN];

    snprintf(expected, sizeof(expected), "a time step giving at most %" PetscInt_FMT " steps up to 'end'",
             PETSC_MAX_INT - 1);
    snprintf(got, sizeof(got), "'%.40s', %.3g steps", ScalarText(step), (double)(cfg->t_end / cfg->dt));
    PetscCall(Fail(r, step->start_mark, spath, expected, got));
  }
  PetscFunctionReturn(0);
}

/* scheme: {type: name, <parameter>: value, ...}. The parameters a key may name depend on the type, so the
   type is read first wherever it stands; without one the scheme is em. */
static PetscErrorCode ParseScheme(MbsYAMLReader *r, yaml_node_t *root, MbsRunConfig *cfg)
{
  yaml_node_t *node, *type;
  char         path[MBS_YAML_PATH_LEN], tpath[MBS_YAML_PATH_LEN];
  const char  *name = MBSSCHEMEEM;

  PetscFunctionBegin;
  PetscCall(Lookup(r, root, "", "scheme", NULL, path, &node));
  if (!node) PetscFunctionReturn(0);
  PetscCall(ExpectMapping(r, node, path, "a mapping {type: name, parameter: value, ...}"));
  PetscCall(CheckKeys(r, node, path, NULL, ""));
  PetscCall(Lookup(r, node, path, "type", NULL, tpath, &type));
  if (type) {
    PetscBool registered;
    char      expected[256];

    PetscCall(ParseString(r, type, tpath, "a registered scheme name (gglmbs -help lists them)", &name));
    if (strlen(name) >= sizeof(cfg->scheme))
      PetscCall(FailNode(r, type, tpath, "a scheme name of at most 63 characters"));
    PetscCall(MbsSchemeIsRegistered(name, &registered, expected, sizeof(expected)));
    if (!registered) PetscCall(FailNode(r, type, tpath, expected));
  }
  PetscCall(PetscStrncpy(cfg->scheme, name, sizeof(cfg->scheme)));
  cfg->nparams = 0;
  for (yaml_node_pair_t *pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
    yaml_node_t              *key = NodeGet(r, pair->key), *value = NodeGet(r, pair->value);
    const MbsSchemeParameter *prm;
    char                      ppath[MBS_YAML_PATH_LEN], expected[256], got[MBS_YAML_GOT_LEN + 32], names[128];
    double                    v = 0.0;
    PetscBool                 ok;

    if (!strcmp(ScalarText(key), "type")) continue;
    PathKey(ppath, path, ScalarText(key));
    PetscCall(MbsSchemeGetParameter(name, ScalarText(key), &prm));
    if (!prm) {
      PetscCall(MbsSchemeGetParameterNames(name, names, sizeof(names)));
      snprintf(expected, sizeof(expected), "the key type or a parameter of scheme %s (its parameters: %s)", name,
               names);
      snprintf(got, sizeof(got), "unknown key '%.60s'", ScalarText(key));
      PetscCall(Fail(r, key->start_mark, ppath, expected, got));
    }
    /* the range text serves both for a value that is no number and for one out of range */
    PetscCall(MbsSchemeCheckParameter(prm, prm->def, &ok, expected, sizeof(expected)));
    PetscCall(ParseFinite(r, value, ppath, expected, &v));
    PetscCall(MbsSchemeCheckParameter(prm, (PetscReal)v, &ok, expected, sizeof(expected)));
    if (!ok) PetscCall(FailNode(r, value, ppath, expected));
    if (cfg->nparams >= MBS_RUNCONFIG_MAX_PARAMS) {
      snprintf(expected, sizeof(expected), "at most %d scheme parameters", MBS_RUNCONFIG_MAX_PARAMS);
      PetscCall(FailNode(r, value, ppath, expected));
    }
    PetscCall(PetscStrncpy(cfg->param_name[cfg->nparams], prm->name, sizeof(cfg->param_name[0])));
    cfg->param_value[cfg->nparams++] = (PetscReal)v;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode ParseOutput(MbsYAMLReader *r, yaml_node_t *root, MbsRunConfig *cfg)
{
  yaml_node_t *node, *dir, *every, *traj;
  char         path[MBS_YAML_PATH_LEN], dpath[MBS_YAML_PATH_LEN], epath[MBS_YAML_PATH_LEN], tpath[MBS_YAML_PATH_LEN];
  const char  *name = NULL;

  PetscFunctionBegin;
  PetscCall(Lookup(r, root, "", "output", NULL, path, &node));
  if (!node) PetscFunctionReturn(0);
  PetscCall(ExpectMapping(r, node, path, "a mapping {directory: path, every: n, trajectory: xdmf}"));
  PetscCall(CheckKeys(r, node, path, output_keys, ""));
  PetscCall(Lookup(r, node, path, "directory", NULL, dpath, &dir));
  PetscCall(Lookup(r, node, path, "every", NULL, epath, &every));
  PetscCall(Lookup(r, node, path, "trajectory", NULL, tpath, &traj));
  if (traj) {
    const char *format = NULL;

    PetscCall(ParseString(r, traj, tpath, "one of xdmf, none", &format));
    if (strcmp(format, "xdmf") && strcmp(format, "none")) PetscCall(FailNode(r, traj, tpath, "one of xdmf, none"));
    PetscCall(PetscStrncpy(cfg->trajectory, format, sizeof(cfg->trajectory)));
  }
  if (dir) {
    PetscCall(ParseString(r, dir, dpath, "a directory name", &name));
    if (strlen(name) >= sizeof(cfg->output_dir)) PetscCall(FailNode(r, dir, dpath, "a shorter directory name"));
    PetscCall(PetscStrncpy(cfg->output_dir, name, sizeof(cfg->output_dir)));
  }
  if (every) PetscCall(ParseInt(r, every, epath, "write every n-th step", &cfg->output_every));
  PetscFunctionReturn(0);
}

/* First pass over 'bodies': names and types, so that lookups work and duplicates are found before anything is added. */
static PetscErrorCode CollectBodies(MbsYAMLReader *r, yaml_node_t *list, const char path[])
{
  PetscInt n = SequenceLength(list);

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(n, &r->bodies));
  PetscCall(PetscMalloc1(n, &r->sorted));
  r->nbodies = n;
  for (PetscInt i = 0; i < n; i++) {
    yaml_node_t *item = SequenceItem(r, list, i), *name, *type;
    char         ipath[MBS_YAML_PATH_LEN], npath[MBS_YAML_PATH_LEN], tpath[MBS_YAML_PATH_LEN];
    const char  *tname = NULL;

    PathIndex(ipath, path, i);
    PetscCall(ExpectMapping(r, item, ipath, "a mapping {name: ..., type: particle|rigid, mass: ..., ...}"));
    PetscCall(Lookup(r, item, ipath, "name", "a body name", npath, &name));
    PetscCall(ParseString(r, name, npath, "a body name", &r->bodies[i].name));
    if (!strcmp(r->bodies[i].name, "ground"))
      PetscCall(FailNode(r, name, npath, "a body name other than 'ground' (reserved for the fixed ground)"));
    PetscCall(Lookup(r, item, ipath, "type", "a body type (particle or rigid)", tpath, &type));
    PetscCall(ParseString(r, type, tpath, "a body type (particle or rigid)", &tname));
    if (!strcmp(tname, "particle"))
      r->bodies[i].type = MBS_BODY_PARTICLE;
    else if (!strcmp(tname, "rigid"))
      r->bodies[i].type = MBS_BODY_RIGID;
    else
      PetscCall(FailNode(r, type, tpath, "a body type (particle or rigid)"));
    r->bodies[i].item = i;
    r->bodies[i].body = -1;
    r->bodies[i].mark = name->start_mark;
    r->sorted[i]      = &r->bodies[i];
  }
  if (n) qsort(r->sorted, (size_t)n, sizeof(*r->sorted), CompareBodies);
  for (PetscInt i = 1; i < n; i++) {
    if (!strcmp(r->sorted[i - 1]->name, r->sorted[i]->name)) {
      MbsYAMLBody *first = r->sorted[i - 1], *again = r->sorted[i];
      char         ipath[MBS_YAML_PATH_LEN], npath[MBS_YAML_PATH_LEN], got[MBS_YAML_GOT_LEN + 64];

      PathIndex(ipath, path, again->item);
      PathKey(npath, ipath, "name");
      snprintf(got, sizeof(got), "'%.60s', already the name of bodies[%" PetscInt_FMT "]", again->name, first->item);
      PetscCall(Fail(r, again->mark, npath, "a body name not used before", got));
    }
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode AddBodies(MbsYAMLReader *r, yaml_node_t *list, const char path[])
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < r->nbodies; i++) {
    MbsYAMLBody *b    = &r->bodies[i];
    yaml_node_t *item = SequenceItem(r, list, i), *node;
    char         ipath[MBS_YAML_PATH_LEN], kpath[MBS_YAML_PATH_LEN], label[PETSC_MAX_PATH_LEN + 128];
    PetscReal    mass = 0, x[3] = {0, 0, 0}, v[3] = {0, 0, 0};

    PathIndex(ipath, path, i);
    PetscCall(CheckKeys(r, item, ipath, b->type == MBS_BODY_RIGID ? rigid_keys : particle_keys,
                        b->type == MBS_BODY_RIGID ? " (rigid body)" : " (particle)"));
    PetscCall(Lookup(r, item, ipath, "mass", "a positive number (mass in kg)", kpath, &node));
    PetscCall(ParseReal(r, node, kpath, MBS_YAML_POSITIVE, "mass in kg", &mass));
    PetscCall(Lookup(r, item, ipath, "position",
                     b->type == MBS_BODY_RIGID ? "a 3-vector (centre of mass in m)" : "a 3-vector (position in m)",
                     kpath, &node));
    PetscCall(ParseVec3(r, node, kpath, b->type == MBS_BODY_RIGID ? "centre of mass in m" : "position in m", x));
    PetscCall(Lookup(r, item, ipath, "velocity", NULL, kpath, &node));
    if (node) PetscCall(ParseVec3(r, node, kpath, "velocity in m/s", v));
    if (b->type == MBS_BODY_PARTICLE) {
      PetscCall(MbsModelAddParticle(r->model, b->name, mass, x, v, &b->body));
    } else {
      PetscReal J[3] = {0, 0, 0}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, omega[3] = {0, 0, 0};

      PetscCall(Lookup(r, item, ipath, "inertia",
                       "a 3-vector (principal moments of inertia about the centre of mass in kg m^2)", kpath, &node));
      PetscCall(ParseInertia(r, node, kpath, J));
      PetscCall(Lookup(r, item, ipath, "orientation", NULL, kpath, &node));
      if (node) PetscCall(ParseOrientation(r, node, kpath, R));
      PetscCall(Lookup(r, item, ipath, "angular_velocity", NULL, kpath, &node));
      if (node) PetscCall(ParseVec3(r, node, kpath, "angular velocity in rad/s, world frame", omega));
      PetscCall(MbsModelAddRigidBody(r->model, b->name, mass, J, x, R, v, omega, &b->body));
    }
    snprintf(label, sizeof(label), "%s:%zu:%zu: bodies[%" PetscInt_FMT "] '%s'", r->file, item->start_mark.line + 1,
             item->start_mark.column + 1, i, b->name);
    PetscCall(MbsModelSetBodyLabel(r->model, b->body, label));
  }
  PetscFunctionReturn(0);
}

static const char *GroupKindName(MbsYAMLGroupKind kind)
{
  switch (kind) {
    case MBS_YAML_CHAIN: return "chain";
    case MBS_YAML_RIGID_CHAIN: return "rigid chain";
    case MBS_YAML_NET: return "net";
    default: return "mesh";
  }
}

/* The name of a generator: not 'ground', not a body's, not another generator's. The group is filled in
   but not registered (r->ngroups) until RegisterGroup(), when its members are known. */
static PetscErrorCode NewGroup(MbsYAMLReader *r, MbsYAMLGroupKind kind, const char section[], PetscInt i,
                               yaml_node_t *item, const char ipath[], MbsYAMLGroup **group, yaml_node_t **name,
                               char npath[MBS_YAML_PATH_LEN])
{
  MbsYAMLGroup *g = &r->groups[r->ngroups];
  MbsYAMLBody  *listed;
  char          expected[128], got[MBS_YAML_GOT_LEN + 64];

  PetscFunctionBegin;
  PetscCall(PetscMemzero(g, sizeof(*g)));
  g->kind    = kind;
  g->section = section;
  g->item    = i;
  snprintf(expected, sizeof(expected), "a %s name", GroupKindName(kind));
  PetscCall(Lookup(r, item, ipath, "name", expected, npath, name));
  PetscCall(ParseString(r, *name, npath, expected, &g->name));
  g->len = strlen(g->name);
  if (!strcmp(g->name, "ground")) {
    snprintf(expected, sizeof(expected), "a %s name other than 'ground' (reserved for the fixed ground)",
             GroupKindName(kind));
    PetscCall(FailNode(r, *name, npath, expected));
  }
  snprintf(expected, sizeof(expected), "a %s name not used by a body or another chain, rigid chain, net or mesh",
           GroupKindName(kind));
  listed = FindListedBody(r, g->name);
  if (listed) {
    snprintf(got, sizeof(got), "'%.60s', already the name of bodies[%" PetscInt_FMT "]", g->name, listed->item);
    PetscCall(Fail(r, (*name)->start_mark, npath, expected, got));
  }
  for (PetscInt k = 0; k < r->ngroups; k++) {
    if (!strcmp(r->groups[k].name, g->name)) {
      snprintf(got, sizeof(got), "'%.60s', already the name of %s[%" PetscInt_FMT "]", g->name, r->groups[k].section,
               r->groups[k].item);
      PetscCall(Fail(r, (*name)->start_mark, npath, expected, got));
    }
  }
  *group = g;
  PetscFunctionReturn(0);
}

/* Registers a group whose members are known; none of them may be a name in 'bodies' or a member of an
   earlier generator. Only a net and a group named "<net>.<i>" can share members. */
static PetscErrorCode RegisterGroup(MbsYAMLReader *r, MbsYAMLGroup *g, yaml_node_t *name, const char npath[])
{
  char expected[160], got[MBS_YAML_GOT_LEN + 160];

  PetscFunctionBegin;
  r->ngroups++;
  for (PetscInt k = 0; k < r->nbodies; k++) {
    MbsYAMLGroup *clash;
    PetscInt      body;

    FindGroupMember(r, r->bodies[k].name, &clash, &body, NULL);
    if (clash == g) {
      snprintf(expected, sizeof(expected), "a %s name whose bodies %s are not names in 'bodies'",
               GroupKindName(g->kind), GroupMemberPattern(g->kind));
      snprintf(got, sizeof(got), "'%.60s', whose body '%.60s' is already bodies[%" PetscInt_FMT "]", g->name,
               r->bodies[k].name, r->bodies[k].item);
      PetscCall(Fail(r, name->start_mark, npath, expected, got));
    }
  }
  for (PetscInt k = 0; k + 1 < r->ngroups; k++) {
    const MbsYAMLGroup *other = &r->groups[k], *net = NULL, *single = NULL;
    size_t              len;
    PetscInt            i;

    if (g->kind == MBS_YAML_NET && other->kind != MBS_YAML_NET) {
      net    = g;
      single = other;
    } else if (g->kind != MBS_YAML_NET && other->kind == MBS_YAML_NET) {
      net    = other;
      single = g;
    } else
      continue;
    if (SplitIndex(single->name, single->len, &len, &i) && GroupNamed(net, single->name, len) && i < net->count) {
      snprintf(expected, sizeof(expected), "a %s name whose bodies %s are not those of another generator",
               GroupKindName(g->kind), GroupMemberPattern(g->kind));
      if (g == net)
        snprintf(got, sizeof(got),
                 "'%.60s', whose nodes '%.60s.<j>' are already the bodies of %s[%" PetscInt_FMT "] '%.60s'", g->name,
                 single->name, other->section, other->item, other->name);
      else
        snprintf(got, sizeof(got),
                 "'%.60s', whose bodies '%.60s.<%s>' are already nodes of %s[%" PetscInt_FMT "] '%.60s'", g->name,
                 g->name, g->kind == MBS_YAML_MESH ? "node tag" : "i", other->section, other->item, other->name);
      PetscCall(Fail(r, name->start_mark, npath, expected, got));
    }
  }
  PetscFunctionReturn(0);
}

/* A generator's model must fit in memory and its unknowns in PetscInt: refused at its count, before
   anything is allocated. 'what' says what the count makes, e.g. "1000000000 links". */
static PetscErrorCode CheckFits(MbsYAMLReader *r, yaml_node_t *count, const char path[], const MbsModelSize *added,
                                const char what[])
{
  PetscBool fits;
  char      why[256], expected[512];

  PetscFunctionBegin;
  PetscCall(MbsModelCheckSize(r->model, added, &fits, why, sizeof(why)));
  if (fits) PetscFunctionReturn(0);
  snprintf(expected, sizeof(expected), "a model that fits %s: %s %s",
           strncmp(why, "need", 4) ? "PetscInt" : "in memory", what, why);
  PetscCall(FailNode(r, count, path, expected));
  PetscFunctionReturn(0);
}

/* The far end of a straight generator, |start| + extent, must be finite (extent = count x length, ...). */
static PetscErrorCode CheckExtent(MbsYAMLReader *r, yaml_node_t *node, const char path[], const PetscReal start[3],
                                  PetscReal extent, const char what[], const char formula[])
{
  PetscReal far = PetscAbsReal(start[0]) + PetscAbsReal(start[1]) + PetscAbsReal(start[2]) + extent;

  PetscFunctionBegin;
  if (!(far <= 1e300)) {
    char expected[256];

    snprintf(expected, sizeof(expected), "a %s whose members lie at finite positions (%s <= 1e300)", what, formula);
    PetscCall(FailNode(r, node, path, expected));
  }
  PetscFunctionReturn(0);
}

/* Labels of a generator's bodies and elements start with its place in the file. */
static void GroupLabelPrefix(MbsYAMLReader *r, const MbsYAMLGroup *g, yaml_node_t *item, char prefix[], size_t size)
{
  snprintf(prefix, size, "%s:%zu:%zu: %s[%" PetscInt_FMT "] '%s'", r->file, item->start_mark.line + 1,
           item->start_mark.column + 1, g->section, g->item, g->name);
}

static PetscErrorCode AddChains(MbsYAMLReader *r, yaml_node_t *list, const char path[])
{
  PetscFunctionBegin;
  for (PetscInt i = 0, n = SequenceLength(list); i < n; i++) {
    MbsYAMLGroup *ch;
    yaml_node_t  *item = SequenceItem(r, list, i), *name, *node, *cnode;
    char ipath[MBS_YAML_PATH_LEN], npath[MBS_YAML_PATH_LEN], kpath[MBS_YAML_PATH_LEN], cpath[MBS_YAML_PATH_LEN],
      prefix[PETSC_MAX_PATH_LEN + 64], label[PETSC_MAX_PATH_LEN + 128];
    PetscReal mass = 0, length = 0, start[3] = {0, 0, 0}, direction[3] = {0, 0, 0};
    PetscInt  first_elem, end_elem;

    PathIndex(ipath, path, i);
    PetscCall(ExpectMapping(r, item, ipath,
                            "a mapping {name: ..., count: n, mass: ..., length: ..., start: [..], direction: [..]}"));
    PetscCall(CheckKeys(r, item, ipath, chain_keys, ""));
    PetscCall(NewGroup(r, MBS_YAML_CHAIN, "chains", i, item, ipath, &ch, &name, npath));
    PetscCall(Lookup(r, item, ipath, "count", "a positive integer (number of particles)", cpath, &cnode));
    PetscCall(ParseInt(r, cnode, cpath, "number of particles", &ch->count));
    PetscCall(Lookup(r, item, ipath, "mass", "a positive number (mass of each particle in kg)", kpath, &node));
    PetscCall(ParseReal(r, node, kpath, MBS_YAML_POSITIVE, "mass of each particle in kg", &mass));
    PetscCall(Lookup(r, item, ipath, "length", "a positive number (length of each link in m)", kpath, &node));
    PetscCall(ParseReal(r, node, kpath, MBS_YAML_POSITIVE, "length of each link in m", &length));
    PetscCall(Lookup(r, item, ipath, "start", NULL, kpath, &node));
    if (node) PetscCall(ParseVec3(r, node, kpath, "start point in m", start));
    PetscCall(Lookup(r, item, ipath, "direction", "a non-zero 3-vector (direction of the chain)", kpath, &node));
    PetscCall(ParseNonzeroVec3(r, node, kpath, "direction of the chain", direction));
    PetscCall(CheckExtent(r, cnode, cpath, start, (PetscReal)ch->count * length, "chain", "|start| + count x length"));
    {
      MbsModelSize added;
      char         what[64];

      PetscCall(PetscMemzero(&added, sizeof(added)));
      MbsModelSizeChain(&added, (PetscReal)ch->count);
      snprintf(what, sizeof(what), "%" PetscInt_FMT " particles", ch->count);
      PetscCall(CheckFits(r, cnode, cpath, &added, what));
    }
    PetscCall(RegisterGroup(r, ch, name, npath));

    PetscCall(MbsModelGetNumElements(r->model, &first_elem));
    PetscCall(MbsModelAddChain(r->model, ch->name, ch->count, mass, length, start, direction, &ch->first_body));
    PetscCall(MbsModelGetNumElements(r->model, &end_elem));
    /* MbsModelAddChain appends particle k and then rod k, from the fixed point to particle 0 and on */
    PetscCheck(end_elem - first_elem == ch->count, r->comm, PETSC_ERR_PLIB,
               "MbsModelAddChain() added %" PetscInt_FMT " elements for %" PetscInt_FMT
               " particles; the labels assume one rod per particle",
               end_elem - first_elem, ch->count);
    GroupLabelPrefix(r, ch, item, prefix, sizeof(prefix));
    for (PetscInt k = 0; k < ch->count; k++) {
      snprintf(label, sizeof(label), "%s particle %" PetscInt_FMT, prefix, k);
      PetscCall(MbsModelSetBodyLabel(r->model, ch->first_body + k, label));
      snprintf(label, sizeof(label), "%s rod %" PetscInt_FMT " (to particle %" PetscInt_FMT ")", prefix, k, k);
      PetscCall(MbsModelSetElementLabel(r->model, first_elem + k, label));
    }
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode AddRigidChains(MbsYAMLReader *r, yaml_node_t *list, const char path[])
{
  PetscFunctionBegin;
  for (PetscInt i = 0, n = SequenceLength(list); i < n; i++) {
    MbsYAMLGroup *ch;
    yaml_node_t  *item = SequenceItem(r, list, i), *name, *node, *axis_node, *cnode;
    char ipath[MBS_YAML_PATH_LEN], npath[MBS_YAML_PATH_LEN], kpath[MBS_YAML_PATH_LEN], apath[MBS_YAML_PATH_LEN],
      cpath[MBS_YAML_PATH_LEN], prefix[PETSC_MAX_PATH_LEN + 64], label[PETSC_MAX_PATH_LEN + 128];
    PetscReal mass = 0, length = 0, J[3] = {0, 0, 0}, start[3] = {0, 0, 0}, direction[3] = {0, 0, 0},
              axis[3] = {0, 0, 0};
    PetscInt          first_elem, end_elem;
    MbsChainJointType joint = MBS_CHAIN_JOINT_SPHERICAL;
    const char       *jname = "spherical";

    PathIndex(ipath, path, i);
    PetscCall(ExpectMapping(
      r, item, ipath, "a mapping {name: ..., count: n, mass: ..., inertia: [..], length: ..., direction: [..], ...}"));
    PetscCall(CheckKeys(r, item, ipath, rigid_chain_keys, ""));
    PetscCall(NewGroup(r, MBS_YAML_RIGID_CHAIN, "rigid_chains", i, item, ipath, &ch, &name, npath));
    PetscCall(Lookup(r, item, ipath, "count", "a positive integer (number of links)", cpath, &cnode));
    PetscCall(ParseInt(r, cnode, cpath, "number of links", &ch->count));
    PetscCall(Lookup(r, item, ipath, "mass", "a positive number (mass of each link in kg)", kpath, &node));
    PetscCall(ParseReal(r, node, kpath, MBS_YAML_POSITIVE, "mass of each link in kg", &mass));
    PetscCall(Lookup(
      r, item, ipath, "inertia",
      "a 3-vector (principal moments of inertia of each link about its centre of mass in kg m^2, J3 about the link "
      "axis)",
      kpath, &node));
    PetscCall(ParseInertia(r, node, kpath, J));
    PetscCall(Lookup(r, item, ipath, "length", "a positive number (length of each link in m)", kpath, &node));
    PetscCall(ParseReal(r, node, kpath, MBS_YAML_POSITIVE, "length of each link in m", &length));
    PetscCall(Lookup(r, item, ipath, "start", NULL, kpath, &node));
    if (node) PetscCall(ParseVec3(r, node, kpath, "start point in m", start));
    PetscCall(Lookup(r, item, ipath, "direction", "a non-zero 3-vector (direction of the chain)", kpath, &node));
    PetscCall(ParseNonzeroVec3(r, node, kpath, "direction of the chain", direction));
    PetscCall(Lookup(r, item, ipath, "joint", NULL, kpath, &node));
    if (node) {
      PetscCall(ParseString(r, node, kpath, "a joint type (spherical or revolute)", &jname));
      if (!strcmp(jname, "revolute"))
        joint = MBS_CHAIN_JOINT_REVOLUTE;
      else if (strcmp(jname, "spherical"))
        PetscCall(FailNode(r, node, kpath, "a joint type (spherical or revolute)"));
    }
    PetscCall(Lookup(
      r, item, ipath, "axis",
      joint == MBS_CHAIN_JOINT_REVOLUTE ? "a non-zero 3-vector (hinge axis of the revolute joints, world frame)" : NULL,
      apath, &axis_node));
    if (axis_node && joint != MBS_CHAIN_JOINT_REVOLUTE)
      PetscCall(Fail(r, axis_node->start_mark, apath,
                     "no 'axis' (only the revolute joints of 'joint: revolute' have a hinge axis)",
                     "an axis for spherical joints"));
    if (joint == MBS_CHAIN_JOINT_REVOLUTE) {
      PetscReal c[3], nc, na, nd;

      PetscCall(ParseNonzeroVec3(r, axis_node, apath, "hinge axis of the revolute joints, world frame", axis));
      c[0] = axis[1] * direction[2] - axis[2] * direction[1];
      c[1] = axis[2] * direction[0] - axis[0] * direction[2];
      c[2] = axis[0] * direction[1] - axis[1] * direction[0];
      nc   = PetscSqrtReal(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
      na   = PetscSqrtReal(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
      nd   = PetscSqrtReal(direction[0] * direction[0] + direction[1] * direction[1] + direction[2] * direction[2]);
      if (!(nc > 1e-8 * na * nd)) {
        char got[MBS_YAML_GOT_LEN + 64];

        snprintf(got, sizeof(got), "[%g, %g, %g], parallel to the direction [%g, %g, %g]", (double)axis[0],
                 (double)axis[1], (double)axis[2], (double)direction[0], (double)direction[1], (double)direction[2]);
        PetscCall(Fail(r, axis_node->start_mark, apath,
                       "a hinge axis not parallel to 'direction' (the chain could not bend)", got));
      }
    }
    PetscCall(
      CheckExtent(r, cnode, cpath, start, (PetscReal)ch->count * length, "rigid chain", "|start| + count x length"));
    {
      MbsModelSize added;
      char         what[64];

      PetscCall(PetscMemzero(&added, sizeof(added)));
      MbsModelSizeRigidChain(&added, (PetscReal)ch->count, joint);
      snprintf(what, sizeof(what), "%" PetscInt_FMT " links", ch->count);
      PetscCall(CheckFits(r, cnode, cpath, &added, what));
    }
    PetscCall(RegisterGroup(r, ch, name, npath));

    PetscCall(MbsModelGetNumElements(r->model, &first_elem));
    PetscCall(MbsModelAddRigidChain(r->model, ch->name, ch->count, mass, J, length, start, direction, joint,
                                    joint == MBS_CHAIN_JOINT_REVOLUTE ? axis : NULL, &ch->first_body));
    PetscCall(MbsModelGetNumElements(r->model, &end_elem));
    /* MbsModelAddRigidChain appends, per link, the body with its internal element and then the joint */
    PetscCheck(end_elem - first_elem == 2 * ch->count, r->comm, PETSC_ERR_PLIB,
               "MbsModelAddRigidChain() added %" PetscInt_FMT " elements for %" PetscInt_FMT
               " links; the labels assume two per link",
               end_elem - first_elem, ch->count);
    GroupLabelPrefix(r, ch, item, prefix, sizeof(prefix));
    for (PetscInt k = 0; k < ch->count; k++) {
      snprintf(label, sizeof(label), "%s link %" PetscInt_FMT, prefix, k);
      PetscCall(MbsModelSetBodyLabel(r->model, ch->first_body + k, label));
      if (k)
        snprintf(label, sizeof(label),
                 "%s %s joint %" PetscInt_FMT " (link %" PetscInt_FMT " to link %" PetscInt_FMT ")", prefix, jname, k,
                 k - 1, k);
      else
        snprintf(label, sizeof(label), "%s %s joint 0 (ground to link 0)", prefix, jname);
      PetscCall(MbsModelSetElementLabel(r->model, first_elem + 2 * k + 1, label));
    }
  }
  PetscFunctionReturn(0);
}

/* An integer index in [lo, hi]; negative indices count from the end. */
static PetscErrorCode ParseIndex(MbsYAMLReader *r, yaml_node_t *node, const char path[], PetscInt lo, PetscInt hi,
                                 const char quantity[], PetscInt *value)
{
  char      expected[192];
  long long v   = 0;
  char     *end = NULL;

  PetscFunctionBegin;
  snprintf(expected, sizeof(expected), "an integer from %" PetscInt_FMT " to %" PetscInt_FMT " (%s)", lo, hi, quantity);
  if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || ScalarIsNull(node))
    PetscCall(FailNode(r, node, path, expected));
  errno = 0;
  v     = strtoll(ScalarText(node), &end, 10);
  if (end == ScalarText(node) || *end || errno == ERANGE || v < lo || v > hi)
    PetscCall(FailNode(r, node, path, expected));
  *value = (PetscInt)v;
  PetscFunctionReturn(0);
}

/* 'fixed' of a net: a sequence of {i: n, j: m} (one node), {i: n} (all nodes with that i) or {j: m};
   negative indices count from the end (-1 is the last). Nodes selected twice are fixed once. */
static PetscErrorCode ParseNetFixed(MbsYAMLReader *r, yaml_node_t *node, const char path[], PetscInt nx, PetscInt ny,
                                    PetscInt *nfixed, PetscInt **fixed)
{
  const char *expected = "a sequence of node sets {i: n, j: m}, {i: n} or {j: m} (negative indices count from the end)";
  PetscBool  *marked   = NULL;
  PetscInt    n = 0, cap = 0, *list = NULL;

  PetscFunctionBegin;
  *nfixed = 0;
  *fixed  = NULL;
  PetscCall(ExpectSequence(r, node, path, expected));
  PetscCall(PetscCalloc1(nx * ny, &marked));
  for (PetscInt k = 0; k < SequenceLength(node); k++) {
    yaml_node_t   *set = SequenceItem(r, node, k), *vi, *vj;
    char           spath[MBS_YAML_PATH_LEN], ipath[MBS_YAML_PATH_LEN], jpath[MBS_YAML_PATH_LEN];
    PetscInt       i = -1, j = -1, i0, i1, j0, j1;
    PetscErrorCode ierr;

    PathIndex(spath, path, k);
    ierr = ExpectMapping(r, set, spath, "a node set {i: n, j: m}, {i: n} or {j: m}");
    if (!ierr) ierr = CheckKeys(r, set, spath, net_fixed_keys, " (node indices)");
    if (!ierr) ierr = Lookup(r, set, spath, "i", NULL, ipath, &vi);
    if (!ierr) ierr = Lookup(r, set, spath, "j", NULL, jpath, &vj);
    if (!ierr && !vi && !vj)
      ierr = Fail(r, set->start_mark, spath, "a node set {i: n, j: m}, {i: n} or {j: m}", "neither 'i' nor 'j'");
    if (!ierr && vi)
      ierr = ParseIndex(r, vi, ipath, -nx, nx - 1,
                        "node index i along the first direction; negative counts from the end", &i);
    if (!ierr && vj)
      ierr = ParseIndex(r, vj, jpath, -ny, ny - 1,
                        "node index j along the second direction; negative counts from the end", &j);
    if (ierr) {
      PetscCall(PetscFree(marked));
      PetscCall(PetscFree(list));
      PetscCall(ierr);
    }
    i0 = vi ? (i < 0 ? i + nx : i) : 0;
    i1 = vi ? i0 + 1 : nx;
    j0 = vj ? (j < 0 ? j + ny : j) : 0;
    j1 = vj ? j0 + 1 : ny;
    for (PetscInt a = i0; a < i1; a++)
      for (PetscInt b = j0; b < j1; b++) {
        if (marked[a * ny + b]) continue;
        marked[a * ny + b] = PETSC_TRUE;
        if (n == cap) {
          cap = PetscMax(2 * cap, 64);
          PetscCall(PetscRealloc(sizeof(PetscInt) * cap, &list));
        }
        list[n++] = a * ny + b;
      }
  }
  PetscCall(PetscFree(marked));
  *nfixed = n;
  *fixed  = list;
  PetscFunctionReturn(0);
}

static PetscErrorCode AddNets(MbsYAMLReader *r, yaml_node_t *list, const char path[])
{
  PetscFunctionBegin;
  for (PetscInt i = 0, n = SequenceLength(list); i < n; i++) {
    MbsYAMLGroup *net;
    yaml_node_t  *item = SequenceItem(r, list, i), *name, *node, *cnode;
    char ipath[MBS_YAML_PATH_LEN], npath[MBS_YAML_PATH_LEN], kpath[MBS_YAML_PATH_LEN], epath[MBS_YAML_PATH_LEN],
      cpath[MBS_YAML_PATH_LEN], prefix[PETSC_MAX_PATH_LEN + 64], label[PETSC_MAX_PATH_LEN + 128];
    PetscReal mass = 0, spacing[2] = {0, 0}, origin[3] = {0, 0, 0}, dir[2][3] = {{1, 0, 0}, {0, 1, 0}}, step[2][3],
              c[3], norm[2];
    PetscInt       nfixed = 0, *fixed = NULL, first_elem, end_elem, e;
    PetscBool     *is_fixed;
    PetscErrorCode ierr;

    PathIndex(ipath, path, i);
    PetscCall(ExpectMapping(r, item, ipath, "a mapping {name: ..., count: [nx, ny], mass: ..., spacing: ..., ...}"));
    PetscCall(CheckKeys(r, item, ipath, net_keys, ""));
    PetscCall(NewGroup(r, MBS_YAML_NET, "nets", i, item, ipath, &net, &name, npath));
    PetscCall(Lookup(r, item, ipath, "count",
                     "a sequence of two positive integers [nx, ny] (numbers of nodes along the two directions)", kpath,
                     &node));
    if (node->type != YAML_SEQUENCE_NODE || SequenceLength(node) != 2)
      PetscCall(FailNode(r, node, kpath,
                         "a sequence of two positive integers [nx, ny] (numbers of nodes along the two directions)"));
    PathIndex(epath, kpath, 0);
    PetscCall(ParseInt(r, SequenceItem(r, node, 0), epath, "number of nodes along the first direction", &net->count));
    PathIndex(epath, kpath, 1);
    PetscCall(ParseInt(r, SequenceItem(r, node, 1), epath, "number of nodes along the second direction", &net->ny));
    if (net->count > PETSC_MAX_INT / net->ny) {
      char got[MBS_YAML_GOT_LEN];

      snprintf(got, sizeof(got), "%" PetscInt_FMT " x %" PetscInt_FMT " nodes", net->count, net->ny);
      PetscCall(
        Fail(r, node->start_mark, kpath, "at most 2^31 - 1 nodes (PETSc is configured with 32-bit indices)", got));
    }
    PetscCall(Lookup(r, item, ipath, "mass", "a positive number (mass of each node in kg)", kpath, &node));
    PetscCall(ParseReal(r, node, kpath, MBS_YAML_POSITIVE, "mass of each node in kg", &mass));
    PetscCall(Lookup(r, item, ipath, "spacing",
                     "a positive number or two [da, db] (rod lengths along the two directions in m)", kpath, &node));
    if (node->type == YAML_SEQUENCE_NODE) {
      if (SequenceLength(node) != 2)
        PetscCall(
          FailNode(r, node, kpath, "a positive number or two [da, db] (rod lengths along the two directions in m)"));
      for (PetscInt k = 0; k < 2; k++) {
        PathIndex(epath, kpath, k);
        PetscCall(ParseReal(r, SequenceItem(r, node, k), epath, MBS_YAML_POSITIVE, "rod length in m", &spacing[k]));
      }
    } else {
      PetscCall(ParseReal(r, node, kpath, MBS_YAML_POSITIVE, "rod length in m, or two [da, db]", &spacing[0]));
      spacing[1] = spacing[0];
    }
    PetscCall(Lookup(r, item, ipath, "origin", NULL, kpath, &node));
    if (node) PetscCall(ParseVec3(r, node, kpath, "position of node (0, 0) in m", origin));
    PetscCall(Lookup(r, item, ipath, "directions", NULL, kpath, &node));
    if (node) {
      if (node->type != YAML_SEQUENCE_NODE || SequenceLength(node) != 2)
        PetscCall(FailNode(r, node, kpath,
                           "a sequence of two non-parallel 3-vectors [[..], [..]] (grid directions of i and j)"));
      for (PetscInt k = 0; k < 2; k++) {
        PathIndex(epath, kpath, k);
        PetscCall(ParseNonzeroVec3(r, SequenceItem(r, node, k), epath, "grid direction", dir[k]));
      }
    }
    for (PetscInt k = 0; k < 2; k++) {
      norm[k] = PetscSqrtReal(dir[k][0] * dir[k][0] + dir[k][1] * dir[k][1] + dir[k][2] * dir[k][2]);
      for (PetscInt l = 0; l < 3; l++) step[k][l] = spacing[k] * dir[k][l] / norm[k];
    }
    c[0] = dir[0][1] * dir[1][2] - dir[0][2] * dir[1][1];
    c[1] = dir[0][2] * dir[1][0] - dir[0][0] * dir[1][2];
    c[2] = dir[0][0] * dir[1][1] - dir[0][1] * dir[1][0];
    if (!(PetscSqrtReal(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) > 1e-10 * norm[0] * norm[1])) {
      char got[MBS_YAML_GOT_LEN + 64];

      snprintf(got, sizeof(got), "the parallel vectors [%g, %g, %g] and [%g, %g, %g]", (double)dir[0][0],
               (double)dir[0][1], (double)dir[0][2], (double)dir[1][0], (double)dir[1][1], (double)dir[1][2]);
      PetscCall(Fail(r, node->start_mark, kpath,
                     "a sequence of two non-parallel 3-vectors [[..], [..]] (grid directions of i and j)", got));
    }
    PetscCall(Lookup(r, item, ipath, "count", NULL, cpath, &cnode));
    PetscCall(CheckExtent(r, cnode, cpath, origin, (PetscReal)net->count * spacing[0] + (PetscReal)net->ny * spacing[1],
                          "net", "|origin| + nx |step_i| + ny |step_j|"));
    {
      MbsModelSize added;
      char         what[96];

      PetscCall(PetscMemzero(&added, sizeof(added)));
      MbsModelSizeNet(&added, (PetscReal)net->count, (PetscReal)net->ny, 0);
      snprintf(what, sizeof(what), "%" PetscInt_FMT " x %" PetscInt_FMT " nodes", net->count, net->ny);
      PetscCall(CheckFits(r, cnode, cpath, &added, what));
    }
    PetscCall(RegisterGroup(r, net, name, npath));
    PetscCall(Lookup(r, item, ipath, "fixed", NULL, kpath, &node));
    if (node) PetscCall(ParseNetFixed(r, node, kpath, net->count, net->ny, &nfixed, &fixed));

    PetscCall(MbsModelGetNumElements(r->model, &first_elem));
    ierr = MbsModelAddNet(r->model, net->name, net->count, net->ny, mass, origin, step[0], step[1], nfixed, fixed,
                          &net->first_body);
    if (ierr) PetscCall(PetscFree(fixed));
    PetscCall(ierr);
    PetscCall(MbsModelGetNumElements(r->model, &end_elem));
    /* label the elements in the order MbsModelAddNet documents */
    GroupLabelPrefix(r, net, item, prefix, sizeof(prefix));
    PetscCall(PetscCalloc1(net->count * net->ny, &is_fixed));
    for (PetscInt k = 0; k < nfixed; k++) is_fixed[fixed[k]] = PETSC_TRUE;
    e = first_elem;
    for (PetscInt a = 0; a < net->count; a++)
      for (PetscInt b = 0; b < net->ny; b++) {
        snprintf(label, sizeof(label), "%s node (%" PetscInt_FMT ", %" PetscInt_FMT ")", prefix, a, b);
        PetscCall(MbsModelSetBodyLabel(r->model, net->first_body + a * net->ny + b, label));
      }
    for (PetscInt dirk = 0; dirk < 2; dirk++)
      for (PetscInt a = 0; a + (dirk ? 0 : 1) < net->count; a++)
        for (PetscInt b = 0; b + (dirk ? 1 : 0) < net->ny; b++) {
          const PetscInt a2 = a + (dirk ? 0 : 1), b2 = b + (dirk ? 1 : 0);

          if (is_fixed[a * net->ny + b] && is_fixed[a2 * net->ny + b2]) continue;
          snprintf(label, sizeof(label),
                   "%s rod (%" PetscInt_FMT ", %" PetscInt_FMT ")-(%" PetscInt_FMT ", %" PetscInt_FMT ")", prefix, a, b,
                   a2, b2);
          if (e < end_elem) PetscCall(MbsModelSetElementLabel(r->model, e, label));
          e++;
        }
    for (PetscInt k = 0; k < nfixed; k++) {
      snprintf(label, sizeof(label), "%s fixed node (%" PetscInt_FMT ", %" PetscInt_FMT ")", prefix, fixed[k] / net->ny,
               fixed[k] % net->ny);
      if (e < end_elem) PetscCall(MbsModelSetElementLabel(r->model, e, label));
      e++;
    }
    PetscCall(PetscFree(is_fixed));
    PetscCall(PetscFree(fixed));
    PetscCheck(e == end_elem, r->comm, PETSC_ERR_PLIB,
               "MbsModelAddNet() added %" PetscInt_FMT " elements, the labels expect %" PetscInt_FMT,
               end_elem - first_elem, e - first_elem);
  }
  PetscFunctionReturn(0);
}

/* An error in a mesh file, after the YAML place that named it: "model.yaml:7:11: key 'meshes[0].file': mesh.msh:45:
 * expected ..., got ...". */
static PetscErrorCode FailMesh(MbsYAMLReader *r, const char context[], const MbsGmshMesh *mesh, PetscInt line,
                               const char expected[], const char got[])
{
  PetscFunctionBegin;
  SETERRQ(r->comm, PETSC_ERR_USER_INPUT, "%s: %s:%" PetscInt_FMT ": expected %s, got %s", context, mesh->file, line,
          expected, got);
}

/* The mesh file path: relative paths are relative to the directory of the YAML file. */
static void MeshPath(MbsYAMLReader *r, const char file[], char out[], size_t size)
{
  const char *slash = strrchr(r->file, '/');

  if (file[0] == '/' || !slash)
    snprintf(out, size, "%s", file);
  else
    snprintf(out, size, "%.*s/%s", (int)(slash - r->file), r->file, file);
}

/* 'fixed' of a mesh: names of physical groups; their nodes, each once. */
static PetscErrorCode ParseMeshFixed(MbsYAMLReader *r, yaml_node_t *node, const char path[], const MbsGmshMesh *mesh,
                                     PetscInt *nfixed, PetscInt **fixed)
{
  PetscBool *marked;
  PetscInt   n          = 0, *list;
  char       names[256] = "";
  size_t     used       = 0;

  PetscFunctionBegin;
  *nfixed = 0;
  *fixed  = NULL;
  PetscCall(ExpectSequence(r, node, path, "a sequence of physical group names [name, ...]"));
  for (PetscInt g = 0; g < mesh->ngroups && used < sizeof(names); g++) {
    int w;

    if (!mesh->groups[g].name) continue;
    w = snprintf(names + used, sizeof(names) - used, "%s'%s'", used ? ", " : "", mesh->groups[g].name);
    if (w > 0) used += (size_t)w;
  }
  for (PetscInt k = 0; k < SequenceLength(node); k++) {
    yaml_node_t *item = SequenceItem(r, node, k);
    const char  *gname;
    char         kpath[MBS_YAML_PATH_LEN], expected[400], got[MBS_YAML_GOT_LEN + 64];
    PetscInt     found = 0, nnodes = 0;

    PathIndex(kpath, path, k);
    snprintf(expected, sizeof(expected), "the name of a physical group of %s (%s%s)", mesh->file,
             used ? "its named groups: " : "it has no named physical groups", names);
    PetscCall(ParseString(r, item, kpath, expected, &gname));
    for (PetscInt g = 0; g < mesh->ngroups; g++)
      if (mesh->groups[g].name && !strcmp(mesh->groups[g].name, gname)) {
        found++;
        nnodes += mesh->groups[g].nnodes;
      }
    if (!found) {
      snprintf(got, sizeof(got), "'%.60s', which it does not have", gname);
      PetscCall(Fail(r, item->start_mark, kpath, expected, got));
    }
    if (!nnodes) {
      snprintf(got, sizeof(got), "'%.60s', which has no elements in the file", gname);
      PetscCall(Fail(r, item->start_mark, kpath,
                     "a physical group with nodes (Gmsh saves the elements of physical groups)", got));
    }
  }
  PetscCall(PetscCalloc1(mesh->nnodes, &marked));
  PetscCall(PetscMalloc1(mesh->nnodes, &list));
  for (PetscInt k = 0; k < SequenceLength(node); k++) {
    const char *gname = ScalarText(SequenceItem(r, node, k));

    for (PetscInt g = 0; g < mesh->ngroups; g++) {
      const MbsGmshGroup *grp = &mesh->groups[g];

      if (!grp->name || strcmp(grp->name, gname)) continue;
      for (PetscInt l = 0; l < grp->nnodes; l++)
        if (!marked[grp->nodes[l]]) {
          marked[grp->nodes[l]] = PETSC_TRUE;
          list[n++]             = grp->nodes[l];
        }
    }
  }
  PetscCall(PetscFree(marked));
  *nfixed = n;
  *fixed  = list;
  PetscFunctionReturn(0);
}

/* One item of 'meshes' with its mesh read; the caller frees the mesh. */
static PetscErrorCode AddMesh(MbsYAMLReader *r, yaml_node_t *item, const char ipath[], MbsYAMLGroup *g,
                              yaml_node_t *name, const char npath[], MbsGmshMesh *mesh, const char context[])
{
  yaml_node_t *node;
  char         kpath[MBS_YAML_PATH_LEN], prefix[PETSC_MAX_PATH_LEN + 64], label[2 * PETSC_MAX_PATH_LEN + 128],
    got[MBS_YAML_GOT_LEN + 64];
  PetscReal line_density = 0, node_mass = 0, scale = 1, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, translation[3] = {0, 0, 0},
            *x          = NULL;
  PetscInt       nfixed = 0, *fixed = NULL, first_elem, end_elem, e;
  PetscBool     *is_fixed = NULL, has_density, has_node_mass;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  /* every node carries a rod: a node on no line, triangle or quadrangle would be a free particle */
  for (PetscInt k = 0; k < mesh->nnodes; k++) {
    if (mesh->node_edges[k]) continue;
    snprintf(got, sizeof(got), "node %" PetscInt_FMT " on none", mesh->node_tag[k]);
    PetscCall(FailMesh(
      r, context, mesh, mesh->node_line[k],
      "every node on a line, triangle or quadrangle element (a node on none would be a free particle; Gmsh saves "
      "only the elements of physical groups unless Mesh.SaveAll = 1)",
      got));
  }
  for (PetscInt k = 0; k < mesh->nedges; k++) {
    const PetscInt a = mesh->edge[2 * k], b = mesh->edge[2 * k + 1];

    if (mesh->x[3 * a] != mesh->x[3 * b] || mesh->x[3 * a + 1] != mesh->x[3 * b + 1] ||
        mesh->x[3 * a + 2] != mesh->x[3 * b + 2])
      continue;
    snprintf(got, sizeof(got), "nodes %" PetscInt_FMT " and %" PetscInt_FMT " at the same position", mesh->node_tag[a],
             mesh->node_tag[b]);
    PetscCall(FailMesh(r, context, mesh, mesh->edge_line[k],
                       "an element whose nodes are at distinct positions (each edge becomes a rod of positive length)",
                       got));
  }
  PetscCall(Lookup(r, item, ipath, "line_density", NULL, kpath, &node));
  has_density = (PetscBool) !!node;
  if (node)
    PetscCall(ParseReal(r, node, kpath, MBS_YAML_POSITIVE, "mass per length of the rods in kg/m", &line_density));
  PetscCall(Lookup(r, item, ipath, "node_mass", NULL, kpath, &node));
  has_node_mass = (PetscBool) !!node;
  if (node) PetscCall(ParseReal(r, node, kpath, MBS_YAML_POSITIVE, "mass of each node in kg", &node_mass));
  if (!has_density && !has_node_mass)
    PetscCall(
      Fail(r, item->start_mark, ipath, "a mapping with 'line_density' (kg/m), 'node_mass' (kg) or both", "neither"));
  PetscCall(Lookup(r, item, ipath, "scale", NULL, kpath, &node));
  if (node) PetscCall(ParseReal(r, node, kpath, MBS_YAML_POSITIVE, "factor from mesh units to m", &scale));
  PetscCall(Lookup(r, item, ipath, "orientation", NULL, kpath, &node));
  if (node) PetscCall(ParseOrientation(r, node, kpath, R));
  PetscCall(Lookup(r, item, ipath, "translation", NULL, kpath, &node));
  if (node) PetscCall(ParseVec3(r, node, kpath, "translation in m", translation));
  g->count = mesh->nnodes;
  PetscCall(PetscMalloc2(mesh->nnodes, &g->tags, mesh->nnodes, &g->tag_node));
  for (PetscInt k = 0; k < mesh->nnodes; k++) {
    g->tags[k]     = mesh->node_tag[k];
    g->tag_node[k] = k;
  }
  PetscCall(PetscSortIntWithArray(mesh->nnodes, g->tags, g->tag_node));
  PetscCall(RegisterGroup(r, g, name, npath));
  PetscCall(Lookup(r, item, ipath, "fixed", NULL, kpath, &node));
  if (node) PetscCall(ParseMeshFixed(r, node, kpath, mesh, &nfixed, &fixed));

  {
    MbsModelSize added;
    yaml_node_t *file;
    char         fpath[MBS_YAML_PATH_LEN], what[PETSC_MAX_PATH_LEN + 96];

    PetscCall(PetscMemzero(&added, sizeof(added)));
    MbsModelSizeRodNetwork(&added, (PetscReal)mesh->nnodes, (PetscReal)mesh->nedges, (PetscReal)nfixed);
    PetscCall(Lookup(r, item, ipath, "file", "a Gmsh mesh file", fpath, &file));
    snprintf(what, sizeof(what), "the %" PetscInt_FMT " nodes and %" PetscInt_FMT " edges of %s", mesh->nnodes,
             mesh->nedges, mesh->file);
    ierr = CheckFits(r, file, fpath, &added, what);
    if (ierr) PetscCall(PetscFree(fixed));
    PetscCall(ierr);
  }
  PetscCall(PetscMalloc1(3 * mesh->nnodes, &x));
  for (PetscInt k = 0; k < mesh->nnodes; k++)
    for (PetscInt l = 0; l < 3; l++)
      x[3 * k + l] = translation[l] + scale * (R[3 * l] * mesh->x[3 * k] + R[3 * l + 1] * mesh->x[3 * k + 1] +
                                               R[3 * l + 2] * mesh->x[3 * k + 2]);
  /* scale and translation may carry a node, or the length of an edge, beyond the doubles */
  for (PetscInt k = 0; k < mesh->nedges; k++) {
    const PetscInt  a = mesh->edge[2 * k], b = mesh->edge[2 * k + 1];
    const PetscReal d = PetscSqrtReal(PetscSqr(x[3 * b] - x[3 * a]) + PetscSqr(x[3 * b + 1] - x[3 * a + 1]) +
                                      PetscSqr(x[3 * b + 2] - x[3 * a + 2]));

    if (d >= DBL_MIN && d <= 1e300) continue; /* a rod's length is a normal double */
    snprintf(got, sizeof(got), "nodes %" PetscInt_FMT " and %" PetscInt_FMT " %s after scale and translation",
             mesh->node_tag[a], mesh->node_tag[b],
             d < DBL_MIN ? "at the same position (to 2.2e-308)" : "beyond 1e300 apart or at infinity");
    PetscCall(PetscFree(x));
    PetscCall(PetscFree(fixed));
    PetscCall(FailMesh(r, context, mesh, mesh->edge_line[k],
                       "an element whose nodes lie at finite, distinct positions after 'scale' and 'translation'",
                       got));
  }
  PetscCall(MbsModelGetNumElements(r->model, &first_elem));
  {
    ierr = MbsModelAddRodNetwork(r->model, g->name, mesh->nnodes, x, mesh->node_tag, mesh->nedges, mesh->edge,
                                 line_density, node_mass, nfixed, fixed, &g->first_body);

    PetscCall(PetscFree(x));
    if (ierr) PetscCall(PetscFree(fixed));
    PetscCall(ierr);
  }
  PetscCall(MbsModelGetNumElements(r->model, &end_elem));
  /* label the elements in the order MbsModelAddRodNetwork documents */
  GroupLabelPrefix(r, g, item, prefix, sizeof(prefix));
  for (PetscInt k = 0; k < mesh->nnodes; k++) {
    snprintf(label, sizeof(label), "%s node %" PetscInt_FMT " (%s:%" PetscInt_FMT ")", prefix, mesh->node_tag[k],
             mesh->file, mesh->node_line[k]);
    PetscCall(MbsModelSetBodyLabel(r->model, g->first_body + k, label));
  }
  PetscCall(PetscCalloc1(mesh->nnodes, &is_fixed));
  for (PetscInt k = 0; k < nfixed; k++) is_fixed[fixed[k]] = PETSC_TRUE;
  e = first_elem;
  for (PetscInt k = 0; k < mesh->nedges; k++) {
    const PetscInt a = mesh->edge[2 * k], b = mesh->edge[2 * k + 1];

    if (is_fixed[a] && is_fixed[b]) continue;
    snprintf(label, sizeof(label), "%s rod %" PetscInt_FMT "-%" PetscInt_FMT " (%s:%" PetscInt_FMT ")", prefix,
             mesh->node_tag[a], mesh->node_tag[b], mesh->file, mesh->edge_line[k]);
    if (e < end_elem) PetscCall(MbsModelSetElementLabel(r->model, e, label));
    e++;
  }
  for (PetscInt k = 0; k < nfixed; k++) {
    snprintf(label, sizeof(label), "%s fixed node %" PetscInt_FMT, prefix, mesh->node_tag[fixed[k]]);
    if (e < end_elem) PetscCall(MbsModelSetElementLabel(r->model, e, label));
    e++;
  }
  PetscCall(PetscFree(is_fixed));
  PetscCall(PetscFree(fixed));
  PetscCheck(e == end_elem, r->comm, PETSC_ERR_PLIB,
             "MbsModelAddRodNetwork() added %" PetscInt_FMT " elements, the labels expect %" PetscInt_FMT,
             end_elem - first_elem, e - first_elem);
  PetscFunctionReturn(0);
}

static PetscErrorCode AddMeshes(MbsYAMLReader *r, yaml_node_t *list, const char path[])
{
  PetscFunctionBegin;
  for (PetscInt i = 0, n = SequenceLength(list); i < n; i++) {
    MbsYAMLGroup *g;
    MbsGmshMesh   mesh;
    yaml_node_t  *item = SequenceItem(r, list, i), *name, *node;
    char ipath[MBS_YAML_PATH_LEN], npath[MBS_YAML_PATH_LEN], fpath[MBS_YAML_PATH_LEN], file[PETSC_MAX_PATH_LEN],
      context[PETSC_MAX_PATH_LEN + MBS_YAML_PATH_LEN + 64];
    const char    *fname;
    PetscErrorCode ierr;

    PathIndex(ipath, path, i);
    PetscCall(ExpectMapping(r, item, ipath, "a mapping {name: ..., file: mesh.msh, line_density: ..., ...}"));
    PetscCall(CheckKeys(r, item, ipath, mesh_keys, ""));
    PetscCall(NewGroup(r, MBS_YAML_MESH, "meshes", i, item, ipath, &g, &name, npath));
    PetscCall(Lookup(r, item, ipath, "file",
                     "a Gmsh mesh file (.msh, ASCII format 4.1 or 2.2; relative to the directory of this file)", fpath,
                     &node));
    PetscCall(ParseString(r, node, fpath,
                          "a Gmsh mesh file (.msh, ASCII format 4.1 or 2.2; relative to the directory of this file)",
                          &fname));
    MeshPath(r, fname, file, sizeof(file));
    snprintf(context, sizeof(context), "%s:%zu:%zu: key '%s'", r->file, node->start_mark.line + 1,
             node->start_mark.column + 1, fpath);
    PetscCall(MbsGmshRead(r->comm, file, context, &mesh));
    ierr = AddMesh(r, item, ipath, g, name, npath, &mesh, context);
    PetscCall(MbsGmshMeshDestroy(&mesh));
    PetscCall(ierr);
  }
  PetscFunctionReturn(0);
}

/* 'bodies: [a, b]' of a joint or spring: two distinct bodies, at most one of them 'ground'. */
static PetscErrorCode ParseBodyPair(MbsYAMLReader *r, yaml_node_t *item, const char ipath[], MbsYAMLBodyRef ref[2],
                                    yaml_node_t *names[2], char namepaths[2][MBS_YAML_PATH_LEN])
{
  yaml_node_t *node;
  char         path[MBS_YAML_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(Lookup(r, item, ipath, "bodies", "a sequence of two body names [a, b]", path, &node));
  if (node->type != YAML_SEQUENCE_NODE || SequenceLength(node) != 2)
    PetscCall(FailNode(r, node, path, "a sequence of two body names [a, b]"));
  for (PetscInt k = 0; k < 2; k++) {
    names[k] = SequenceItem(r, node, k);
    PathIndex(namepaths[k], path, k);
    PetscCall(ResolveBody(r, names[k], namepaths[k], PETSC_TRUE, &ref[k]));
  }
  if (ref[0].body == ref[1].body) {
    char got[MBS_YAML_GOT_LEN + 32];

    snprintf(got, sizeof(got), "'%.60s' again", ScalarText(names[1]));
    PetscCall(Fail(r, names[1]->start_mark, namepaths[1],
                   "a body other than bodies[0] (an element connects two different bodies)", got));
  }
  PetscFunctionReturn(0);
}

/* A material point on a body: on a particle it must be zero (the particle is a point). */
static PetscErrorCode CheckPoint(MbsYAMLReader *r, yaml_node_t *node, const char path[], const MbsYAMLBodyRef *ref,
                                 const PetscReal X[3])
{
  char got[MBS_YAML_GOT_LEN];

  PetscFunctionBegin;
  if (!ref->ground && ref->type == MBS_BODY_PARTICLE && (X[0] != 0 || X[1] != 0 || X[2] != 0)) {
    snprintf(got, sizeof(got), "[%g, %g, %g] on a particle", (double)X[0], (double)X[1], (double)X[2]);
    PetscCall(Fail(r, node->start_mark, path, "[0, 0, 0] (a particle is a point; omit 'point(s)')", got));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode ParsePointPair(MbsYAMLReader *r, yaml_node_t *item, const char ipath[], const char key[],
                                     const char quantity[], const MbsYAMLBodyRef ref[2], PetscBool required,
                                     PetscReal X[2][3])
{
  yaml_node_t *node;
  char         path[MBS_YAML_PATH_LEN], expected[192];

  PetscFunctionBegin;
  snprintf(expected, sizeof(expected), "a sequence of two 3-vectors [[..], [..]] (%s)", quantity);
  PetscCall(Lookup(r, item, ipath, key, required ? expected : NULL, path, &node));
  for (PetscInt k = 0; k < 2; k++)
    for (PetscInt j = 0; j < 3; j++) X[k][j] = 0;
  if (!node) PetscFunctionReturn(0);
  if (node->type != YAML_SEQUENCE_NODE || SequenceLength(node) != 2) PetscCall(FailNode(r, node, path, expected));
  for (PetscInt k = 0; k < 2; k++) {
    char kpath[MBS_YAML_PATH_LEN];

    PathIndex(kpath, path, k);
    PetscCall(ParseVec3(r, SequenceItem(r, node, k), kpath, quantity, X[k]));
    if (!strcmp(key, "points")) PetscCall(CheckPoint(r, SequenceItem(r, node, k), kpath, &ref[k], X[k]));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode InitialDistance(MbsYAMLReader *r, const MbsYAMLBodyRef ref[2], PetscReal X[2][3],
                                      PetscReal *distance)
{
  PetscReal xa[3], xb[3];

  PetscFunctionBegin;
  PetscCall(MbsModelGetPointPosition(r->model, ref[0].body, X[0], xa));
  PetscCall(MbsModelGetPointPosition(r->model, ref[1].body, X[1], xb));
  *distance = PetscSqrtReal(PetscSqr(xb[0] - xa[0]) + PetscSqr(xb[1] - xa[1]) + PetscSqr(xb[2] - xa[2]));
  PetscFunctionReturn(0);
}

/* 'body', 'point' and 'position' of an element fixed to the world (fixed_point): b is the ground at the position,
   by default where the point starts. */
static PetscErrorCode ParseBodyToWorld(MbsYAMLReader *r, yaml_node_t *item, const char ipath[], MbsYAMLBodyRef ref[2],
                                       PetscReal X[2][3])
{
  yaml_node_t *node;
  char         kpath[MBS_YAML_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(Lookup(r, item, ipath, "body", "a body name", kpath, &node));
  PetscCall(ResolveBody(r, node, kpath, PETSC_FALSE, &ref[0]));
  ref[1].body   = MBS_GROUND;
  ref[1].ground = PETSC_TRUE;
  PetscCall(Lookup(r, item, ipath, "point", NULL, kpath, &node));
  X[0][0] = X[0][1] = X[0][2] = 0;
  if (node) {
    PetscCall(ParseVec3(r, node, kpath, "material point in the body frame, m", X[0]));
    PetscCall(CheckPoint(r, node, kpath, &ref[0], X[0]));
  }
  PetscCall(Lookup(r, item, ipath, "position", NULL, kpath, &node));
  if (node)
    PetscCall(ParseVec3(r, node, kpath, "fixed position in the world frame, m", X[1]));
  else
    PetscCall(MbsModelGetPointPosition(r->model, ref[0].body, X[0], X[1]));
  PetscFunctionReturn(0);
}

/* One parameter of an element type into its data block (src/elements/element.h) */
static PetscErrorCode ParseElementParam(MbsYAMLReader *r, yaml_node_t *item, const char ipath[],
                                        const MbsElementType *type, const MbsElemParam *prm,
                                        const MbsYAMLBodyRef ref[2], PetscReal X[2][3], MbsElemData *data)
{
  yaml_node_t *node;
  char         kpath[MBS_YAML_PATH_LEN], expected[256];
  const char  *number = prm->range == MBS_ELEM_RANGE_POSITIVE ? "a positive number" : "a non-negative number";

  PetscFunctionBegin;
  if (prm->kind == MBS_ELEM_PARAM_REAL) {
    PetscReal *value = (PetscReal *)((char *)data + prm->offset[0]);

    snprintf(expected, sizeof(expected), "%s (%s)", number, prm->quantity);
    PetscCall(Lookup(r, item, ipath, prm->key, prm->fallback == MBS_ELEM_REQUIRED ? expected : NULL, kpath, &node));
    if (node) {
      PetscCall(ParseReal(r, node, kpath,
                          prm->range == MBS_ELEM_RANGE_POSITIVE ? MBS_YAML_POSITIVE : MBS_YAML_NONNEGATIVE,
                          prm->quantity, value));
    } else if (prm->range == MBS_ELEM_RANGE_POSITIVE) { /* the default, the initial distance, must be positive */
      PetscReal distance = 0;

      PetscCall(InitialDistance(r, ref, X, &distance));
      if (!(distance > 0)) {
        snprintf(expected, sizeof(expected), "%s (%s; required here because the %s's two points coincide initially)",
                 number, prm->quantity, type->name);
        PetscCall(Fail(r, item->start_mark, kpath, expected, "nothing (the key is missing)"));
      }
    }
  } else {
    char      vpath[MBS_YAML_PATH_LEN];
    PetscReal v[3];

    snprintf(expected, sizeof(expected), "a sequence of two 3-vectors [[..], [..]] (%s)", prm->quantity);
    PetscCall(Lookup(r, item, ipath, prm->key, expected, kpath, &node));
    if (node->type != YAML_SEQUENCE_NODE || SequenceLength(node) != 2) PetscCall(FailNode(r, node, kpath, expected));
    for (PetscInt k = 0; k < 2; k++) {
      PathIndex(vpath, kpath, k);
      PetscCall(ParseNonzeroVec3(r, SequenceItem(r, node, k), vpath, prm->item_quantity, v));
      for (int i = 0; i < 3; i++) ((PetscReal *)((char *)data + prm->offset[k]))[i] = v[i];
    }
  }
  PetscFunctionReturn(0);
}

/* The elements of a section (joints, springs): each item's type is a registered element type, which says
   which keys it reads and how (src/elements/element.h). */
static PetscErrorCode AddElements(MbsYAMLReader *r, yaml_node_t *list, const char path[], const char section[],
                                  const char noun[])
{
  char types[256], choices[192], mapping[256];

  PetscFunctionBegin;
  PetscCall(MbsElementTypeNames(section, ", ", " or ", choices, sizeof(choices)));
  snprintf(types, sizeof(types), "a %s type (%s)", noun, choices);
  PetscCall(MbsElementTypeNames(section, "|", "|", choices, sizeof(choices)));
  snprintf(mapping, sizeof(mapping), "a mapping {type: %s, ...}", choices);
  for (PetscInt i = 0, n = SequenceLength(list); i < n; i++) {
    yaml_node_t *item = SequenceItem(r, list, i), *type_node, *names[2];
    char         ipath[MBS_YAML_PATH_LEN], tpath[MBS_YAML_PATH_LEN], namepaths[2][MBS_YAML_PATH_LEN], context[96],
      label[PETSC_MAX_PATH_LEN + 128];
    const char           *keys[4 + MBS_ELEM_MAX_PARAMS], *tname = NULL;
    const MbsElementType *type;
    MbsYAMLBodyRef        ref[2];
    PetscReal             X[2][3];
    MbsElemData           data;
    PetscInt              elem = -1, nkeys = 0;

    PathIndex(ipath, path, i);
    PetscCall(ExpectMapping(r, item, ipath, mapping));
    PetscCall(Lookup(r, item, ipath, "type", types, tpath, &type_node));
    PetscCall(ParseString(r, type_node, tpath, types, &tname));
    PetscCall(MbsElementTypeFind(section, tname, &type));
    if (!type) PetscCall(FailNode(r, type_node, tpath, types));
    keys[nkeys++] = "type";
    if (type->connection == MBS_ELEM_TWO_BODIES) {
      keys[nkeys++] = "bodies";
      keys[nkeys++] = "points";
    } else {
      keys[nkeys++] = "body";
      keys[nkeys++] = "point";
      keys[nkeys++] = "position";
    }
    for (PetscInt p = 0; p < type->nparams; p++) keys[nkeys++] = type->params[p].key;
    keys[nkeys] = NULL;
    snprintf(context, sizeof(context), " (%s)", type->name);
    PetscCall(CheckKeys(r, item, ipath, keys, context));
    if (type->connection == MBS_ELEM_TWO_BODIES) {
      PetscCall(ParseBodyPair(r, item, ipath, ref, names, namepaths));
      for (PetscInt k = 0; k < 2 && type->needs_orientation; k++) {
        if (!ref[k].ground && ref[k].type != MBS_BODY_RIGID) {
          char got[MBS_YAML_GOT_LEN + 32], expected[128];

          snprintf(got, sizeof(got), "particle '%.60s'", ScalarText(names[k]));
          snprintf(expected, sizeof(expected), "a rigid body or 'ground' (a %s %s needs an orientation)", type->name,
                   noun);
          PetscCall(Fail(r, names[k]->start_mark, namepaths[k], expected, got));
        }
      }
      PetscCall(ParsePointPair(r, item, ipath, "points", "material points in m", ref, PETSC_FALSE, X));
    } else
      PetscCall(ParseBodyToWorld(r, item, ipath, ref, X));
    PetscCall(PetscMemzero(&data, sizeof(data)));
    data.length = data.stiffness = MBS_ELEM_UNSET;
    for (int k = 0; k < 3; k++) {
      data.Xa[k] = X[0][k];
      data.Xb[k] = X[1][k];
    }
    for (PetscInt p = 0; p < type->nparams; p++)
      PetscCall(ParseElementParam(r, item, ipath, type, &type->params[p], ref, X, &data));
    PetscCall(MbsModelAddElement(r->model, type, ref[0].body, ref[1].body, &data, &elem));
    snprintf(label, sizeof(label), "%s:%zu:%zu: %s[%" PetscInt_FMT "] (%s)", r->file, item->start_mark.line + 1,
             item->start_mark.column + 1, section, i, tname);
    PetscCall(MbsModelSetElementLabel(r->model, elem, label));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode Build(MbsYAMLReader *r, MbsRunConfig *cfg)
{
  static const struct {
    const char *key, *expected;
    PetscErrorCode (*add)(MbsYAMLReader *, yaml_node_t *, const char[]);
  } generators[4] = {
    {"chains", "a sequence of chains", AddChains},
    {"rigid_chains", "a sequence of rigid chains", AddRigidChains},
    {"nets", "a sequence of nets", AddNets},
    {"meshes", "a sequence of meshes (Gmsh .msh files)", AddMeshes},
  };
  yaml_node_t *root = yaml_document_get_root_node(r->doc), *node, *bodies, *gen[4];
  char         path[MBS_YAML_PATH_LEN], bpath[MBS_YAML_PATH_LEN], gpath[4][MBS_YAML_PATH_LEN];
  PetscInt     ngen = 0;

  PetscFunctionBegin;
  if (!root) {
    yaml_mark_t start = {0, 0, 0};

    PetscCall(Fail(r, start, "", "a mapping with at least 'time' and 'bodies'", "an empty document"));
  }
  PetscCall(ExpectMapping(r, root, "", "a mapping with at least 'time' and 'bodies'"));
  PetscCall(CheckKeys(r, root, "", top_keys, ""));
  PetscCall(ParseTime(r, root, cfg));
  PetscCall(ParseScheme(r, root, cfg));
  PetscCall(ParseOutput(r, root, cfg));

  PetscCall(Lookup(r, root, "", "gravity", NULL, path, &node));
  if (node) {
    PetscReal g[3] = {0, 0, 0};

    PetscCall(ParseVec3(r, node, path, "gravitational acceleration in m/s^2", g));
    PetscCall(MbsModelSetGravity(r->model, g));
  }

  PetscCall(Lookup(r, root, "", "bodies", NULL, bpath, &bodies));
  if (bodies) {
    PetscCall(ExpectSequence(r, bodies, bpath, "a sequence of bodies"));
    PetscCall(CollectBodies(r, bodies, bpath));
  }
  for (PetscInt k = 0; k < 4; k++) {
    PetscCall(Lookup(r, root, "", generators[k].key, NULL, gpath[k], &gen[k]));
    if (!gen[k]) continue;
    PetscCall(ExpectSequence(r, gen[k], gpath[k], generators[k].expected));
    ngen += SequenceLength(gen[k]);
  }
  if (!r->nbodies && !ngen) {
    if (bodies)
      PetscCall(
        FailNode(r, bodies, bpath,
                 "at least one body (in 'bodies', or generated by 'chains', 'rigid_chains', 'nets' or 'meshes')"));
    PetscCall(Fail(r, root->start_mark, "bodies",
                   "at least one body (in 'bodies', or generated by 'chains', 'rigid_chains', 'nets' or 'meshes')",
                   "nothing (the key is missing)"));
  }
  if (bodies) PetscCall(AddBodies(r, bodies, bpath));
  PetscCall(PetscCalloc1(ngen, &r->groups));
  for (PetscInt k = 0; k < 4; k++)
    if (gen[k]) PetscCall(generators[k].add(r, gen[k], gpath[k]));

  for (int s = 0; s < 2; s++) {
    static const char *const sections[2][2] = {{"joints", "joint"}, {"springs", "spring"}};
    char                     expected[64];

    PetscCall(Lookup(r, root, "", sections[s][0], NULL, path, &node));
    if (!node) continue;
    snprintf(expected, sizeof(expected), "a sequence of %s", sections[s][0]);
    PetscCall(ExpectSequence(r, node, path, expected));
    PetscCall(AddElements(r, node, path, sections[s][0], sections[s][1]));
  }
  PetscFunctionReturn(0);
}

/*@C
  MbsModelLoadYAML - Adds the bodies, generated models (chains, rigid chains, nets, meshes), joints, springs and gravity
of a YAML input file to a model and reads its run parameters

  Collective on the model's communicator

  Input Parameters:
+ model    - the model, normally empty (body names in the file refer to bodies of the file only)
- filename - the input file (read on rank 0 and broadcast)

  Output Parameter:
. cfg - run parameters (time step, final time, scheme, output); may be NULL. Keys the file omits keep the values of
`MbsRunConfigSetDefaults()`.

  Notes:
  The schema is documented in docs/input.md. Every error in the input is `PETSC_ERR_USER_INPUT` with a
  message "file:line:column: key 'path': expected ..., got ...", identical on all ranks; the model is then
  partially built and should be destroyed. Bodies and elements are labelled with their place in the file
  (`MbsModelSetBodyLabel()`, `MbsModelSetElementLabel()`) so that `MbsModelSetUp()` can point at them.

  Gmsh mesh files named in 'meshes' are read relative to the directory of the input file (rank 0 reads,
  the contents are broadcast); an error in one is reported after the place in the YAML file that names
  it, with the mesh file's line. A mesh file that cannot be read is `PETSC_ERR_FILE_OPEN`.

  Level: beginner

.seealso: `MbsRunConfigSetDefaults()`, `MbsModelCreate()`, `MbsModelSetUp()`, `MbsModelAddChain()`,
`MbsModelAddRigidChain()`, `MbsModelAddNet()`, `MbsModelAddRodNetwork()`
@*/
PetscErrorCode MbsModelLoadYAML(MbsModel model, const char filename[], MbsRunConfig *cfg)
{
  MPI_Comm        comm;
  PetscMPIInt     nbytes;
  char           *bytes  = NULL;
  int             status = 0;
  yaml_parser_t   parser;
  yaml_document_t doc, extra;
  int             loaded, extra_loaded, second = 0;
  yaml_mark_t     second_mark = {0, 0, 0};
  MbsRunConfig    local;
  MbsYAMLReader   r;
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  PetscCheck(model, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Null MbsModel");
  PetscCheck(filename, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Null file name");
  PetscCall(MbsModelGetComm(model, &comm));
  PetscCall(MbsReadFileBroadcast(comm, filename, &bytes, &nbytes, &status));
  PetscCheck(!status, comm, PETSC_ERR_FILE_OPEN, "%s: cannot read the input file: %s", filename, strerror(status));

  if (!yaml_parser_initialize(&parser)) {
    PetscCall(PetscFree(bytes));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "Cannot initialize the YAML parser");
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, (size_t)nbytes);
  loaded = yaml_parser_load(&parser, &doc);
  if (loaded) {
    extra_loaded = yaml_parser_load(&parser, &extra);
    if (extra_loaded) {
      yaml_node_t *root = yaml_document_get_root_node(&extra);

      if (root) {
        second      = 1;
        second_mark = root->start_mark;
      }
      yaml_document_delete(&extra);
    } else {
      yaml_document_delete(&doc);
      loaded = 0;
    }
  }
  if (!loaded) {
    char        msg[512];
    yaml_mark_t mark = parser.problem_mark;

    if (parser.error == YAML_READER_ERROR) { /* encoding errors carry a byte offset, not a mark */
      mark.line = mark.column = 0;
      for (size_t i = 0; i < parser.problem_offset && i < (size_t)nbytes; i++) {
        if (bytes[i] == '\n') {
          mark.line++;
          mark.column = 0;
        } else
          mark.column++;
      }
    }
    if (parser.context)
      snprintf(msg, sizeof(msg), "%s (%s, at line %zu, column %zu)", parser.problem ? parser.problem : "unknown error",
               parser.context, parser.context_mark.line + 1, parser.context_mark.column + 1);
    else
      snprintf(msg, sizeof(msg), "%s", parser.problem ? parser.problem : "unknown error");
    yaml_parser_delete(&parser);
    PetscCall(PetscFree(bytes));
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "%s:%zu:%zu: invalid YAML: %s", filename, mark.line + 1, mark.column + 1, msg);
  }
  yaml_parser_delete(&parser);
  PetscCall(PetscFree(bytes));
  if (second) {
    yaml_document_delete(&doc);
    SETERRQ(comm, PETSC_ERR_USER_INPUT,
            "%s:%zu:%zu: key '(document)': expected a single YAML document, got a second one", filename,
            second_mark.line + 1, second_mark.column + 1);
  }

  PetscCall(PetscMemzero(&r, sizeof(r)));
  r.comm  = comm;
  r.file  = filename;
  r.doc   = &doc;
  r.model = model;
  ierr    = MbsRunConfigSetDefaults(&local);
  if (!ierr) ierr = Build(&r, &local);
  yaml_document_delete(&doc);
  PetscCall(PetscFree(r.bodies));
  PetscCall(PetscFree(r.sorted));
  for (PetscInt k = 0; k < r.ngroups; k++) PetscCall(PetscFree2(r.groups[k].tags, r.groups[k].tag_node));
  PetscCall(PetscFree(r.groups));
  PetscCall(ierr);
  if (cfg) *cfg = local;
  PetscFunctionReturn(0);
}

/* The YAML reader's parsing helpers: nodes, key paths, located errors, numbers, vectors, orientations, and
   body references resolved against the listed bodies and the generators' members. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/yamlimpl.h"

static const char *const orientation_keys[] = {"matrix", "axis", "angle", NULL};

yaml_node_t *MbsYAMLNodeGet(MbsYAMLReader *r, yaml_node_item_t item)
{
  return yaml_document_get_node(r->doc, item);
}

const char *MbsYAMLScalarText(yaml_node_t *node)
{
  return (const char *)node->data.scalar.value;
}

PetscInt MbsYAMLSequenceLength(yaml_node_t *node)
{
  return (PetscInt)(node->data.sequence.items.top - node->data.sequence.items.start);
}

yaml_node_t *MbsYAMLSequenceItem(MbsYAMLReader *r, yaml_node_t *node, PetscInt i)
{
  return MbsYAMLNodeGet(r, node->data.sequence.items.start[i]);
}

PetscBool MbsYAMLScalarIsNull(yaml_node_t *node)
{
  const char *s = MbsYAMLScalarText(node);

  if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return PETSC_FALSE;
  return (PetscBool)(!s[0] || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL"));
}

/* What a node is, for the "got ..." part of a message. */
/* At most 40 characters of a scalar, control characters written as escapes (\n, \x01): a message stays one line */
static void EscapedText(yaml_node_t *node, char out[], size_t size)
{
  const unsigned char *s = (const unsigned char *)MbsYAMLScalarText(node);
  size_t               n = 0;

  for (size_t i = 0; s[i] && i < 40 && n + 5 < size; i++) {
    if (s[i] == '\n')
      n += (size_t)snprintf(out + n, size - n, "\\n");
    else if (s[i] < 0x20 || s[i] == 0x7f)
      n += (size_t)snprintf(out + n, size - n, "\\x%02x", s[i]);
    else
      out[n++] = (char)s[i];
  }
  out[n] = 0;
}

static void Describe(yaml_node_t *node, char got[], size_t size)
{
  char text[192];

  switch (node->type) {
    case YAML_SCALAR_NODE:
      EscapedText(node, text, sizeof(text));
      if (MbsYAMLScalarIsNull(node))
        snprintf(got, size, "an empty value");
      else if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        snprintf(got, size, "the quoted string \"%s%s\"", text, node->data.scalar.length > 40 ? "..." : "");
      else
        snprintf(got, size, "'%s%s'", text, node->data.scalar.length > 40 ? "..." : "");
      break;
    case YAML_SEQUENCE_NODE: {
      PetscInt n = MbsYAMLSequenceLength(node);
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
void MbsYAMLPathKey(char out[MBS_YAML_PATH_LEN], const char parent[], const char key[])
{
  if (snprintf(out, MBS_YAML_PATH_LEN, "%s%s%s", parent, parent[0] ? "." : "", key) >= MBS_YAML_PATH_LEN)
    strcpy(out + MBS_YAML_PATH_LEN - 4, "...");
}

void MbsYAMLPathIndex(char out[MBS_YAML_PATH_LEN], const char parent[], PetscInt i)
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

void MbsYAMLFormatFail(MbsYAMLReader *r, yaml_mark_t mark, const char path[], const char expected[], const char got[],
                       char msg[], size_t len)
{
  snprintf(msg, len, "%s:%zu:%zu: key '%s': expected %s, got %s", r->file, mark.line + 1, mark.column + 1,
           path[0] ? path : "(document)", expected, got);
}

PetscErrorCode MbsYAMLFail(MbsYAMLReader *r, yaml_mark_t mark, const char path[], const char expected[],
                           const char got[])
{
  char msg[PETSC_MAX_PATH_LEN + 1024];

  PetscFunctionBegin;
  MbsYAMLFormatFail(r, mark, path, expected, got, msg, sizeof(msg));
  SETERRQ(r->comm, PETSC_ERR_USER_INPUT, "%s", msg);
}

PetscErrorCode MbsYAMLFailNode(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char expected[])
{
  char got[MBS_YAML_GOT_LEN];

  PetscFunctionBegin;
  Describe(node, got, sizeof(got));
  PetscCall(MbsYAMLFail(r, node->start_mark, path, expected, got));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsYAMLExpectMapping(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char expected[])
{
  PetscFunctionBegin;
  if (node->type != YAML_MAPPING_NODE) PetscCall(MbsYAMLFailNode(r, node, path, expected));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsYAMLExpectSequence(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char expected[])
{
  PetscFunctionBegin;
  if (node->type != YAML_SEQUENCE_NODE) PetscCall(MbsYAMLFailNode(r, node, path, expected));
  PetscFunctionReturn(0);
}

typedef struct {
  const char *text;
  PetscInt    pair;
} MbsYAMLKeyRef;

static int CompareKeyRefs(const void *a, const void *b)
{
  const MbsYAMLKeyRef *x = (const MbsYAMLKeyRef *)a, *y = (const MbsYAMLKeyRef *)b;
  int                  c = strcmp(x->text, y->text);

  if (c) return c;
  return (x->pair > y->pair) - (x->pair < y->pair);
}

/* The first pair of a mapping, in document order, whose scalar key an earlier pair has (*repeated, npairs if
   none), and that earlier pair (*first). The keys are sorted, so that a mapping of n keys costs n log n, not n^2
   (a 'scheme' mapping takes any key names before they are checked, 1 MB of them took 40 s). */
static PetscErrorCode FindRepeatedKey(MbsYAMLReader *r, yaml_node_t *map, PetscInt *repeated, PetscInt *first)
{
  const PetscInt npairs = (PetscInt)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
  MbsYAMLKeyRef  small[16], *keys = small;
  PetscInt       n = 0, run = 0;

  PetscFunctionBegin;
  *repeated = npairs;
  *first    = -1;
  if (npairs < 2) PetscFunctionReturn(0);
  if (npairs > (PetscInt)(sizeof(small) / sizeof(small[0]))) PetscCall(PetscMalloc1(npairs, &keys));
  for (PetscInt i = 0; i < npairs; i++) {
    yaml_node_t *key = MbsYAMLNodeGet(r, map->data.mapping.pairs.start[i].key);

    if (key->type != YAML_SCALAR_NODE) continue; /* refused before any later key is looked at */
    keys[n].text   = MbsYAMLScalarText(key);
    keys[n++].pair = i;
  }
  qsort(keys, (size_t)n, sizeof(*keys), CompareKeyRefs);
  for (PetscInt k = 1; k < n; k++) {
    if (strcmp(keys[k].text, keys[run].text))
      run = k; /* a key not seen before; keys[run] is the first pair with it */
    else if (keys[k].pair < *repeated) {
      *repeated = keys[k].pair;
      *first    = keys[run].pair;
    }
  }
  if (keys != small) PetscCall(PetscFree(keys));
  PetscFunctionReturn(0);
}

/* Every key of a mapping is a scalar, appears once and is one of 'allowed' (any name if allowed is NULL:
   the caller checks the names itself). The first pair that breaks a rule is reported. */
PetscErrorCode MbsYAMLCheckKeys(MbsYAMLReader *r, yaml_node_t *map, const char path[], const char *const allowed[],
                                const char context[])
{
  PetscInt repeated, first;

  PetscFunctionBegin;
  PetscCall(FindRepeatedKey(r, map, &repeated, &first));
  for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
    yaml_node_t *key = MbsYAMLNodeGet(r, pair->key);
    char         keypath[MBS_YAML_PATH_LEN], expected[256], got[MBS_YAML_GOT_LEN + 32];
    PetscBool    known = allowed ? PETSC_FALSE : PETSC_TRUE;

    if (key->type != YAML_SCALAR_NODE) PetscCall(MbsYAMLFailNode(r, key, path, "a mapping with plain names as keys"));
    for (PetscInt i = 0; allowed && allowed[i]; i++)
      if (!strcmp(allowed[i], MbsYAMLScalarText(key))) known = PETSC_TRUE;
    MbsYAMLPathKey(keypath, path, MbsYAMLScalarText(key));
    if (!known) {
      char list[192];

      KeyList(allowed, list, sizeof(list));
      snprintf(expected, sizeof(expected), "one of the keys %s%s", list, context);
      snprintf(got, sizeof(got), "unknown key '%.60s'", MbsYAMLScalarText(key));
      PetscCall(MbsYAMLFail(r, key->start_mark, keypath, expected, got));
    }
    if (pair - map->data.mapping.pairs.start == repeated) {
      yaml_node_t *prevkey = MbsYAMLNodeGet(r, map->data.mapping.pairs.start[first].key);

      snprintf(got, sizeof(got), "it again (first at line %zu, column %zu)", prevkey->start_mark.line + 1,
               prevkey->start_mark.column + 1);
      PetscCall(MbsYAMLFail(r, key->start_mark, keypath, "each key at most once", got));
    }
  }
  PetscFunctionReturn(0);
}

/* The value of 'key' in 'map' (NULL if absent; an error if absent and required); path receives the key's path. */
PetscErrorCode MbsYAMLLookup(MbsYAMLReader *r, yaml_node_t *map, const char parent[], const char key[],
                             const char expected_if_missing[], char path[MBS_YAML_PATH_LEN], yaml_node_t **value)
{
  PetscFunctionBegin;
  MbsYAMLPathKey(path, parent, key);
  *value = NULL;
  for (yaml_node_pair_t *pair = map->data.mapping.pairs.start; pair < map->data.mapping.pairs.top; pair++) {
    yaml_node_t *k = MbsYAMLNodeGet(r, pair->key);

    if (k->type == YAML_SCALAR_NODE && !strcmp(MbsYAMLScalarText(k), key)) {
      *value = MbsYAMLNodeGet(r, pair->value);
      break;
    }
  }
  if (!*value && expected_if_missing)
    PetscCall(MbsYAMLFail(r, map->start_mark, path, expected_if_missing, "nothing (the key is missing)"));
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

/* A value with a YAML tag (!!str 1, !foo 1): the tag would change what the value means, and gglmbs reads untagged
   values only. libyaml resolves '!!str' to the default tag of a plain scalar, so the source text is looked at too. */
static PetscErrorCode MbsYAMLCheckUntagged(MbsYAMLReader *r, yaml_node_t *node, const char path[],
                                           const char expected[])
{
  const char  *def     = node->type == YAML_SCALAR_NODE     ? YAML_DEFAULT_SCALAR_TAG
                         : node->type == YAML_SEQUENCE_NODE ? YAML_DEFAULT_SEQUENCE_TAG
                                                            : YAML_DEFAULT_MAPPING_TAG;
  const size_t at      = node->start_mark.index;
  char         tag[48] = "", got[MBS_YAML_GOT_LEN + 64];

  PetscFunctionBegin;
  if (r->text && at < r->ntext && r->text[at] == '!') {
    size_t n = 0;
    while (at + n < r->ntext && n < sizeof(tag) - 1 && r->text[at + n] != ' ' && r->text[at + n] != '\t' &&
           r->text[at + n] != '\n' && r->text[at + n] != '\r')
      n++;
    memcpy(tag, r->text + at, n);
    tag[n] = 0;
  } else if (node->tag && strcmp((const char *)node->tag, def))
    snprintf(tag, sizeof(tag), "%.40s", (const char *)node->tag);
  if (!tag[0]) PetscFunctionReturn(0);
  snprintf(got, sizeof(got), "a value with the YAML tag '%s' (tags are not read)", tag);
  PetscCall(MbsYAMLFail(r, node->start_mark, path, expected, got));
  PetscFunctionReturn(0);
}

/* A plain scalar that reads as a finite double; 'expected' is the whole "expected ..." text of the error. */
PetscErrorCode MbsYAMLParseFinite(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char expected[],
                                  double *value)
{
  double v   = 0.0;
  char  *end = NULL;

  PetscFunctionBegin;
  PetscCall(MbsYAMLCheckUntagged(r, node, path, expected));
  if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || MbsYAMLScalarIsNull(node))
    PetscCall(MbsYAMLFailNode(r, node, path, expected));
  if (IsYAMLNonFinite(MbsYAMLScalarText(node))) PetscCall(MbsYAMLFailNode(r, node, path, expected));
  errno = 0;
  v     = strtod(MbsYAMLScalarText(node), &end);
  if (end == MbsYAMLScalarText(node) || *end || !isfinite(v)) PetscCall(MbsYAMLFailNode(r, node, path, expected));
  *value = v;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsYAMLParseReal(MbsYAMLReader *r, yaml_node_t *node, const char path[], MbsYAMLRange range,
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
  PetscCall(MbsYAMLParseFinite(r, node, path, expected, &v));
  /* positive quantities (masses, lengths, step, ...) are divided by or normalized: no subnormal ones */
  if ((range == MBS_YAML_POSITIVE && !(v >= DBL_MIN)) || (range == MBS_YAML_NONNEGATIVE && !(v >= 0)))
    PetscCall(MbsYAMLFailNode(r, node, path, expected));
  *value = (PetscReal)v;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsYAMLParseInt(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char quantity[],
                               PetscInt *value)
{
  char      expected[160];
  long long v   = 0;
  char     *end = NULL;

  PetscFunctionBegin;
  snprintf(expected, sizeof(expected), "a positive integer (%s)", quantity);
  PetscCall(MbsYAMLCheckUntagged(r, node, path, expected));
  if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || MbsYAMLScalarIsNull(node))
    PetscCall(MbsYAMLFailNode(r, node, path, expected));
  errno = 0;
  v     = strtoll(MbsYAMLScalarText(node), &end, 10);
  if (end == MbsYAMLScalarText(node) || *end || errno == ERANGE || v < 1 || v > (long long)PETSC_MAX_INT)
    PetscCall(MbsYAMLFailNode(r, node, path, expected));
  *value = (PetscInt)v;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsYAMLParseString(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char expected[],
                                  const char **value)
{
  PetscFunctionBegin;
  PetscCall(MbsYAMLCheckUntagged(r, node, path, expected));
  if (node->type != YAML_SCALAR_NODE || MbsYAMLScalarIsNull(node)) PetscCall(MbsYAMLFailNode(r, node, path, expected));
  *value = MbsYAMLScalarText(node);
  PetscFunctionReturn(0);
}

/* A name: a non-empty string of printable characters (a newline would split the one-line messages that name it) */
PetscErrorCode MbsYAMLParseName(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char expected[],
                                const char **value)
{
  char what[192];

  PetscFunctionBegin;
  PetscCall(MbsYAMLParseString(r, node, path, expected, value));
  snprintf(what, sizeof(what), "%s: a non-empty string of printable characters", expected);
  if (!(*value)[0]) PetscCall(MbsYAMLFailNode(r, node, path, what));
  for (const unsigned char *c = (const unsigned char *)*value; *c; c++)
    if (*c < 0x20 || *c == 0x7f) PetscCall(MbsYAMLFailNode(r, node, path, what));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsYAMLParseVec3(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char quantity[],
                                PetscReal v[3])
{
  char expected[160];

  PetscFunctionBegin;
  snprintf(expected, sizeof(expected), "a 3-vector [x, y, z] (%s)", quantity);
  if (node->type != YAML_SEQUENCE_NODE || MbsYAMLSequenceLength(node) != 3)
    PetscCall(MbsYAMLFailNode(r, node, path, expected));
  for (PetscInt i = 0; i < 3; i++) {
    char itempath[MBS_YAML_PATH_LEN];

    MbsYAMLPathIndex(itempath, path, i);
    PetscCall(MbsYAMLParseReal(r, MbsYAMLSequenceItem(r, node, i), itempath, MBS_YAML_FINITE, NULL, &v[i]));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode MbsYAMLParseNonzeroVec3(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char quantity[],
                                       PetscReal v[3])
{
  char expected[160];

  PetscFunctionBegin;
  PetscCall(MbsYAMLParseVec3(r, node, path, quantity, v));
  snprintf(expected, sizeof(expected), "a non-zero 3-vector (%s)", quantity);
  if (v[0] == 0 && v[1] == 0 && v[2] == 0) PetscCall(MbsYAMLFail(r, node->start_mark, path, expected, "[0, 0, 0]"));
  {
    /* it is normalized: its length must be neither subnormal nor overflow when squared */
    const PetscReal norm = PetscSqrtReal(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);

    if (!(norm >= MBS_YAML_DIRECTION_MIN && norm <= MBS_YAML_DIRECTION_MAX)) {
      char got[MBS_YAML_GOT_LEN];

      snprintf(expected, sizeof(expected), "a 3-vector of length from %g to %g (%s)", MBS_YAML_DIRECTION_MIN,
               MBS_YAML_DIRECTION_MAX, quantity);
      snprintf(got, sizeof(got), "[%g, %g, %g]", (double)v[0], (double)v[1], (double)v[2]);
      PetscCall(MbsYAMLFail(r, node->start_mark, path, expected, got));
    }
  }
  PetscFunctionReturn(0);
}

/* Rows [[r11, r12, r13], ...] into row-major R[3*i + j] = r_(i+1)(j+1). */
static PetscErrorCode ParseMat3(MbsYAMLReader *r, yaml_node_t *node, const char path[], PetscReal R[9])
{
  const char *expected = "a 3x3 matrix [[r11, r12, r13], [r21, r22, r23], [r31, r32, r33]]";

  PetscFunctionBegin;
  if (node->type != YAML_SEQUENCE_NODE || MbsYAMLSequenceLength(node) != 3)
    PetscCall(MbsYAMLFailNode(r, node, path, expected));
  for (PetscInt i = 0; i < 3; i++) {
    yaml_node_t *row = MbsYAMLSequenceItem(r, node, i);
    char         rowpath[MBS_YAML_PATH_LEN];

    MbsYAMLPathIndex(rowpath, path, i);
    if (row->type != YAML_SEQUENCE_NODE || MbsYAMLSequenceLength(row) != 3)
      PetscCall(MbsYAMLFailNode(r, row, rowpath, "a matrix row [r_i1, r_i2, r_i3]"));
    for (PetscInt j = 0; j < 3; j++) {
      char itempath[MBS_YAML_PATH_LEN];

      MbsYAMLPathIndex(itempath, rowpath, j);
      PetscCall(MbsYAMLParseReal(r, MbsYAMLSequenceItem(r, row, j), itempath, MBS_YAML_FINITE, NULL, &R[3 * i + j]));
    }
  }
  PetscFunctionReturn(0);
}

/* orientation: {matrix: ...} or {axis: ..., angle: ...}; R row-major, its columns are the directors d_i. */
PetscErrorCode MbsYAMLParseOrientation(MbsYAMLReader *r, yaml_node_t *node, const char path[], PetscReal R[9])
{
  const char  *expected = "a mapping {matrix: [[..], [..], [..]]} or {axis: [x, y, z], angle: radians}";
  yaml_node_t *matrix, *axis, *angle;
  char         mpath[MBS_YAML_PATH_LEN], apath[MBS_YAML_PATH_LEN], anpath[MBS_YAML_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(MbsYAMLExpectMapping(r, node, path, expected));
  PetscCall(MbsYAMLCheckKeys(r, node, path, orientation_keys, ""));
  PetscCall(MbsYAMLLookup(r, node, path, "matrix", NULL, mpath, &matrix));
  PetscCall(MbsYAMLLookup(r, node, path, "axis", NULL, apath, &axis));
  PetscCall(MbsYAMLLookup(r, node, path, "angle", NULL, anpath, &angle));
  if (matrix) {
    PetscReal err = 0, det;
    char      got[MBS_YAML_GOT_LEN];

    if (axis || angle)
      PetscCall(MbsYAMLFail(r, node->start_mark, path, "either 'matrix' or 'axis' and 'angle'", "both"));
    PetscCall(ParseMat3(r, matrix, mpath, R));
    for (PetscInt i = 0; i < 3; i++)
      for (PetscInt j = 0; j < 3; j++) {
        PetscReal dot = R[i] * R[j] + R[3 + i] * R[3 + j] + R[6 + i] * R[6 + j];
        err           = PetscMax(err, PetscAbsReal(dot - (i == j ? 1.0 : 0.0)));
      }
    det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) + R[2] * (R[3] * R[7] - R[4] * R[6]);
    if (!(err <= MBS_YAML_ROTATION_TOL)) {
      snprintf(got, sizeof(got), "a matrix with max |R^T R - I| = %.3e", (double)err);
      PetscCall(
        MbsYAMLFail(r, matrix->start_mark, mpath, "a rotation matrix (orthonormal to 1e-9, determinant +1)", got));
    }
    if (det < 0) {
      snprintf(got, sizeof(got), "a reflection (determinant %.17g)", (double)det);
      PetscCall(
        MbsYAMLFail(r, matrix->start_mark, mpath, "a rotation matrix (orthonormal to 1e-9, determinant +1)", got));
    }
  } else {
    PetscReal n[3] = {0, 0, 0}, theta = 0, norm, c, s;

    PetscCall(
      MbsYAMLLookup(r, node, path, "axis", "a non-zero 3-vector (rotation axis; or give 'matrix')", apath, &axis));
    PetscCall(MbsYAMLLookup(r, node, path, "angle", "a finite number (rotation angle in radians)", anpath, &angle));
    PetscCall(MbsYAMLParseNonzeroVec3(r, axis, apath, "rotation axis", n));
    PetscCall(MbsYAMLParseReal(r, angle, anpath, MBS_YAML_FINITE, "rotation angle in radians", &theta));
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
PetscErrorCode MbsYAMLParseInertia(MbsYAMLReader *r, yaml_node_t *node, const char path[], PetscReal J[3])
{
  char jpath[MBS_YAML_PATH_LEN];

  PetscFunctionBegin;
  if (node->type != YAML_SEQUENCE_NODE || MbsYAMLSequenceLength(node) != 3)
    PetscCall(MbsYAMLFailNode(r, node, path, "a 3-vector [J1, J2, J3] (principal moments of inertia in kg m^2)"));
  for (PetscInt k = 0; k < 3; k++) {
    MbsYAMLPathIndex(jpath, path, k);
    PetscCall(MbsYAMLParseReal(r, MbsYAMLSequenceItem(r, node, k), jpath, MBS_YAML_POSITIVE,
                               "principal moment of inertia in kg m^2", &J[k]));
  }
  for (PetscInt k = 0; k < 3; k++) {
    PetscInt j = (k + 1) % 3, l = (k + 2) % 3;

    if (!(J[k] < J[j] + J[l])) {
      char got[MBS_YAML_GOT_LEN + 32];

      snprintf(got, sizeof(got), "J%d = %g >= J%d + J%d = %g", (int)k + 1, (double)J[k], (int)j + 1, (int)l + 1,
               (double)(J[j] + J[l]));
      PetscCall(MbsYAMLFail(r, node->start_mark, path,
                            "principal moments with J_i < J_j + J_k for each i (so that E_i = (J_j + J_k - J_i)/2 > 0)",
                            got));
    }
  }
  PetscFunctionReturn(0);
}

int MbsYAMLCompareBodies(const void *a, const void *b)
{
  const MbsYAMLBody *x = *(const MbsYAMLBody *const *)a, *y = *(const MbsYAMLBody *const *)b;
  int                c = strcmp(x->name, y->name);

  if (c) return c;
  return (x->item > y->item) - (x->item < y->item);
}

MbsYAMLBody *MbsYAMLFindListedBody(MbsYAMLReader *r, const char name[])
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
PetscBool MbsYAMLSplitIndex(const char name[], size_t len, size_t *prefix_len, PetscInt *index)
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

PetscBool MbsYAMLGroupNamed(const MbsYAMLGroup *g, const char name[], size_t len)
{
  return (PetscBool)(g->len == len && !strncmp(g->name, name, len));
}

const char *MbsYAMLGroupMemberPattern(MbsYAMLGroupKind kind)
{
  switch (kind) {
    case MBS_YAML_NET: return "'<name>.<i>.<j>'";
    case MBS_YAML_MESH: return "'<name>.<node tag>'";
    default: return "'<name>.<i>'";
  }
}

/* FNV-1a (model/hash.h), its high bits folded into the low ones that pick a bucket */
size_t MbsYAMLHash(const char s[], size_t len)
{
  const uint64_t h = MbsFNV1a(MBS_FNV1A_INIT, s, len);

  return (size_t)(h ^ (h >> 32));
}

/* Tables for up to 'ngroups' groups (the items of all generator sections), empty. */
PetscErrorCode MbsYAMLGroupTablesCreate(MbsYAMLReader *r, PetscInt ngroups)
{
  PetscInt n = 16;

  PetscFunctionBegin;
  while (n < 2 * ngroups) n *= 2;
  PetscCall(PetscMalloc4(n, &r->name_head, n, &r->prefix_head, ngroups, &r->name_next, ngroups, &r->prefix_next));
  for (PetscInt b = 0; b < n; b++) r->name_head[b] = r->prefix_head[b] = -1;
  r->nbuckets = n;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsYAMLGroupTablesDestroy(MbsYAMLReader *r)
{
  PetscFunctionBegin;
  PetscCall(PetscFree4(r->name_head, r->prefix_head, r->name_next, r->prefix_next));
  r->nbuckets = 0;
  PetscFunctionReturn(0);
}

/* Enters the registered group r->groups[g] in the tables. */
void MbsYAMLGroupTablesAdd(MbsYAMLReader *r, PetscInt g)
{
  const MbsYAMLGroup *gr   = &r->groups[g];
  const size_t        mask = (size_t)r->nbuckets - 1;
  size_t              b    = MbsYAMLHash(gr->name, gr->len) & mask, len;
  PetscInt            i;

  r->name_next[g]   = r->name_head[b];
  r->name_head[b]   = g;
  r->prefix_next[g] = -1;
  if (gr->kind == MBS_YAML_NET || !MbsYAMLSplitIndex(gr->name, gr->len, &len, &i)) return;
  b                 = MbsYAMLHash(gr->name, len) & mask;
  r->prefix_next[g] = r->prefix_head[b];
  r->prefix_head[b] = g;
}

/* The registered group named name[0..len), or NULL (group names are unique). */
MbsYAMLGroup *MbsYAMLFindGroup(MbsYAMLReader *r, const char name[], size_t len)
{
  if (!r->nbuckets) return NULL;
  for (PetscInt g = r->name_head[MbsYAMLHash(name, len) & ((size_t)r->nbuckets - 1)]; g >= 0; g = r->name_next[g])
    if (MbsYAMLGroupNamed(&r->groups[g], name, len)) return &r->groups[g];
  return NULL;
}

/* A generator member by name: *group and *body, or *group = NULL. *near is a generator whose name
   matches but which has no such member (for the message), or NULL. The name's prefixes are looked up in
   the table of group names: a member of a chain, rigid chain or mesh is "<name>.<i>", of a net
   "<name>.<i>.<j>". */
void MbsYAMLFindGroupMember(MbsYAMLReader *r, const char name[], MbsYAMLGroup **group, PetscInt *body,
                            MbsYAMLGroup **near)
{
  size_t        len = strlen(name), len1, len2;
  PetscInt      k1, k2;
  MbsYAMLGroup *gr;

  *group = NULL;
  *body  = -1;
  if (near) *near = NULL;
  if (!MbsYAMLSplitIndex(name, len, &len1, &k1)) return;
  gr = MbsYAMLFindGroup(r, name, len1);
  if (gr && gr->kind != MBS_YAML_NET) {
    if (near) *near = gr;
    if (gr->kind == MBS_YAML_MESH) {
      PetscInt loc;

      if (!PetscFindInt(k1, gr->count, gr->tags, &loc) && loc >= 0) {
        *body  = gr->first_body + gr->tag_node[loc];
        *group = gr;
        return;
      }
    } else if (k1 < gr->count) {
      *body  = gr->first_body + k1;
      *group = gr;
      return;
    }
  }
  if (!MbsYAMLSplitIndex(name, len1, &len2, &k2)) return;
  gr = MbsYAMLFindGroup(r, name, len2);
  if (gr && gr->kind == MBS_YAML_NET) {
    if (near) *near = gr;
    if (k2 < gr->count && k1 < gr->ny) {
      *group = gr;
      *body  = gr->first_body + k2 * gr->ny + k1;
    }
  }
}

PetscErrorCode MbsYAMLResolveBody(MbsYAMLReader *r, yaml_node_t *node, const char path[], PetscBool allow_ground,
                                  MbsYAMLBodyRef *ref)
{
  const char *expected =
    allow_ground ? "the name of a body in 'bodies' or of a generated one (chains, rigid_chains, nets, meshes, beams), "
                   "or 'ground'"
                 : "the name of a body in 'bodies' or of a generated one (chains, rigid_chains, nets, meshes, beams), "
                   "not 'ground'";
  const char   *name = NULL;
  MbsYAMLBody  *listed;
  MbsYAMLGroup *group, *near;
  PetscInt      body;

  PetscFunctionBegin;
  PetscCall(MbsYAMLParseString(r, node, path, expected, &name));
  if (!strcmp(name, "ground")) {
    if (!allow_ground) PetscCall(MbsYAMLFail(r, node->start_mark, path, expected, "'ground'"));
    ref->body   = MBS_GROUND;
    ref->type   = MBS_BODY_PARTICLE;
    ref->ground = PETSC_TRUE;
    PetscFunctionReturn(0);
  }
  ref->ground = PETSC_FALSE;
  listed      = MbsYAMLFindListedBody(r, name);
  if (listed) {
    ref->body = listed->body;
    ref->type = listed->type;
    PetscFunctionReturn(0);
  }
  MbsYAMLFindGroupMember(r, name, &group, &body, &near);
  if (group) {
    ref->body = body;
    ref->type = group->kind == MBS_YAML_RIGID_CHAIN || group->kind == MBS_YAML_BEAM || group->rigid ? MBS_BODY_RIGID
                                                                                                    : MBS_BODY_PARTICLE;
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
    PetscCall(MbsYAMLFail(r, node->start_mark, path, expected, got));
  }
  PetscFunctionReturn(0);
}

/*
  Gmsh MSH reader, ASCII formats 4.1 and 2.2 (https://gmsh.info/doc/texinfo/gmsh.html#MSH-file-format).

  The file is read line by line: every record of the sections used here ($MeshFormat, $PhysicalNames,
  $Entities, $Nodes, $Elements) is one line with a known number of fields, so a short or long line is
  reported where it is, not where the next number happens to be missing. Other sections are skipped.
  Element types: 1 (2-node line), 2 (3-node triangle), 3 (4-node quadrangle) give edges; 15 (point)
  only contributes its node to physical groups; any other type is an error. Partitioned meshes, whose
  element blocks refer to $PartitionedEntities, are not supported.
*/
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <petsc/private/hashmapi.h>
#include <petsc/private/hashmapij.h>

#include "io/readfile.h"

#include "io/gmsh.h"

#define MBS_GMSH_GOT_LEN   96
#define MBS_GMSH_MAX_BYTES ((PetscInt64)16 << 30) /* 16 GiB: every rank holds the whole file */

typedef struct {
  MPI_Comm    comm;
  const char *file, *context;
  const char *buf;
  size_t      len, pos;
  PetscInt    line; /* number of the current line; one past the last at the end of the file */
  PetscBool   eof;
  char       *text; /* the current line, NUL-terminated, without its end of line */
  char       *scratch;
  size_t      cap;
  char      **tok; /* the current line's whitespace-separated fields, in scratch */
  PetscInt    ntok, tokcap;
  PetscBool   v41, have_entities, have_nodes, have_elements, have_names;
  PetscHMapI  node_index;           /* node tag -> node index */
  PetscHMapIJ edge_index;           /* (smaller, larger node index) -> edge */
  PetscHMapIJ group_index;          /* (dimension, physical tag) -> physical group */
  PetscHMapI  entity[4];            /* entity tag of each dimension -> offset in phys */
  PetscInt   *phys, nphys, physcap; /* per entity: the count, then the physical tags */
  PetscInt    nnames, namecap;
  struct {
    PetscInt dim, tag, line;
    char    *name;
  } * names;
} MbsGmshParser;

typedef struct {
  int         type, nnodes, dim;
  const char *what;
} MbsGmshElementType;

static const MbsGmshElementType element_types[] = {
  {1, 2, 1, "2-node line"},
  {2, 3, 2, "3-node triangle"},
  {3, 4, 2, "4-node quadrangle"},
  {15, 1, 0, "1-node point"},
  {4, 4, 3, "4-node tetrahedron"},
  {5, 8, 3, "8-node hexahedron"},
  {6, 6, 3, "6-node prism"},
  {7, 5, 3, "5-node pyramid"},
  {8, 3, 1, "3-node second-order line"},
  {9, 6, 2, "6-node second-order triangle"},
  {10, 9, 2, "9-node second-order quadrangle"},
  {11, 10, 3, "10-node second-order tetrahedron"},
  {16, 8, 2, "8-node second-order quadrangle"},
};

static const char *const supported_types =
  "element type 1 (2-node line), 2 (3-node triangle), 3 (4-node quadrangle) or 15 (1-node point)";

static const MbsGmshElementType *FindElementType(long long type)
{
  for (size_t i = 0; i < sizeof(element_types) / sizeof(element_types[0]); i++)
    if (element_types[i].type == type) return &element_types[i];
  return NULL;
}

static PetscBool IsSupported(const MbsGmshElementType *t)
{
  return (PetscBool)(t && (t->type == 1 || t->type == 2 || t->type == 3 || t->type == 15));
}

/* The error at 'line': "[context: ]file:line: expected <expected>, got <got>"; got NULL means the
   current line (or the end of the file). */
static PetscErrorCode FailAt(MbsGmshParser *p, PetscInt line, const char got[], const char fmt[], ...)
{
  char    expected[320], current[MBS_GMSH_GOT_LEN];
  va_list ap;

  PetscFunctionBegin;
  va_start(ap, fmt);
  vsnprintf(expected, sizeof(expected), fmt, ap);
  va_end(ap);
  if (!got) {
    if (p->eof)
      got = "the end of the file";
    else {
      snprintf(current, sizeof(current), "'%.60s%s'", p->text, strlen(p->text) > 60 ? "..." : "");
      got = current;
    }
  }
  SETERRQ(p->comm, PETSC_ERR_USER_INPUT, "%s%s%s:%" PetscInt_FMT ": expected %s, got %s", p->context ? p->context : "",
          p->context ? ": " : "", p->file, line, expected, got);
}

static PetscErrorCode Grow(MbsGmshParser *p, size_t need)
{
  PetscFunctionBegin;
  if (need <= p->cap) PetscFunctionReturn(0);
  while (p->cap < need) p->cap = p->cap ? 2 * p->cap : 256;
  PetscCall(PetscFree2(p->text, p->scratch));
  PetscCall(PetscMalloc2(p->cap, &p->text, p->cap, &p->scratch));
  PetscFunctionReturn(0);
}

/* Advances to the next line that is not blank and splits it into fields. */
static PetscErrorCode NextLine(MbsGmshParser *p)
{
  PetscFunctionBegin;
  p->ntok = 0;
  while (!p->ntok) {
    const char *start = p->buf + p->pos, *end;
    size_t      n;
    char       *s;

    if (p->eof) PetscFunctionReturn(0);
    PetscCheck(p->line < PETSC_MAX_INT - 1, p->comm, PETSC_ERR_FILE_UNEXPECTED,
               "%s: more than %" PetscInt_FMT " lines, which this reader does not count (it names lines in messages)",
               p->file, PETSC_MAX_INT - 1);
    p->line++;
    if (p->pos >= p->len) {
      p->eof = PETSC_TRUE;
      PetscCall(Grow(p, 1));
      p->text[0] = 0;
      PetscFunctionReturn(0);
    }
    end = memchr(start, '\n', p->len - p->pos);
    n   = end ? (size_t)(end - start) : p->len - p->pos;
    p->pos += n + (end ? 1 : 0);
    if (n && start[n - 1] == '\r') n--;
    PetscCall(Grow(p, n + 1));
    memcpy(p->text, start, n);
    p->text[n] = 0;
    memcpy(p->scratch, start, n);
    p->scratch[n] = 0;
    for (s = p->scratch; *s;) {
      while (*s == ' ' || *s == '\t' || *s == '\f' || *s == '\v' || *s == '\r') *s++ = 0;
      if (!*s) break;
      if (p->ntok == p->tokcap) {
        p->tokcap = p->tokcap ? 2 * p->tokcap : 16;
        PetscCall(PetscRealloc(sizeof(char *) * p->tokcap, &p->tok));
      }
      p->tok[p->ntok++] = s;
      while (*s && *s != ' ' && *s != '\t' && *s != '\f' && *s != '\v' && *s != '\r') s++;
    }
  }
  PetscFunctionReturn(0);
}

/* Field k of the current line as an integer in [lo, hi]; 'what' names it for the error. */
static PetscErrorCode FieldInt(MbsGmshParser *p, PetscInt k, long long lo, long long hi, const char what[],
                               PetscInt *value)
{
  char     *end = NULL;
  long long v;

  PetscFunctionBegin;
  errno = 0;
  v     = strtoll(p->tok[k], &end, 10);
  if (end == p->tok[k] || *end || errno == ERANGE || v < lo || v > hi) {
    char got[MBS_GMSH_GOT_LEN];

    snprintf(got, sizeof(got), "'%.40s'", p->tok[k]);
    if (hi == (long long)PETSC_MAX_INT)
      PetscCall(FailAt(p, p->line, got, "%s (an integer >= %lld)", what, lo));
    else
      PetscCall(FailAt(p, p->line, got, "%s (an integer from %lld to %lld)", what, lo, hi));
  }
  *value = (PetscInt)v;
  PetscFunctionReturn(0);
}

static PetscErrorCode FieldReal(MbsGmshParser *p, PetscInt k, const char what[], PetscReal *value)
{
  char  *end = NULL;
  double v;

  PetscFunctionBegin;
  v = strtod(p->tok[k], &end);
  if (end == p->tok[k] || *end || !isfinite(v)) {
    char got[MBS_GMSH_GOT_LEN];

    snprintf(got, sizeof(got), "'%.40s'", p->tok[k]);
    PetscCall(FailAt(p, p->line, got, "%s (a finite number)", what));
  }
  *value = (PetscReal)v;
  PetscFunctionReturn(0);
}

/* The next line must hold exactly n fields: 'what' describes them. */
static PetscErrorCode ExpectRecord(MbsGmshParser *p, PetscInt n, const char what[])
{
  PetscFunctionBegin;
  PetscCall(NextLine(p));
  if (p->eof || p->ntok != n || p->tok[0][0] == '$') PetscCall(FailAt(p, p->line, NULL, "%s", what));
  PetscFunctionReturn(0);
}

static PetscErrorCode ExpectEnd(MbsGmshParser *p, const char section[], PetscInt start_line, const char more[])
{
  char end[64];

  PetscFunctionBegin;
  snprintf(end, sizeof(end), "$End%s", section);
  PetscCall(NextLine(p));
  if (p->eof || p->ntok != 1 || strcmp(p->tok[0], end))
    PetscCall(FailAt(p, p->line, NULL, "%s (closing $%s at line %" PetscInt_FMT ")%s", end, section, start_line, more));
  PetscFunctionReturn(0);
}

/* A count from a section header: at most one per byte of the file, so a corrupt count cannot ask for
   an absurd allocation. */
static PetscErrorCode FieldCount(MbsGmshParser *p, PetscInt k, const char what[], PetscInt *count)
{
  PetscFunctionBegin;
  PetscCall(FieldInt(p, k, 0, (long long)PetscMin((size_t)PETSC_MAX_INT, p->len), what, count));
  PetscFunctionReturn(0);
}

static PetscErrorCode ReadMeshFormat(MbsGmshParser *p, MbsGmshMesh *mesh)
{
  const PetscInt start = p->line;
  PetscInt       file_type, data_size;

  PetscFunctionBegin;
  PetscCall(ExpectRecord(p, 3, "'version file-type data-size', e.g. '4.1 0 8'"));
  if (strcmp(p->tok[0], "4.1") && strcmp(p->tok[0], "2.2")) {
    char got[MBS_GMSH_GOT_LEN];

    snprintf(got, sizeof(got), "version '%.20s'", p->tok[0]);
    PetscCall(FailAt(p, p->line, got, "MSH format version 4.1 or 2.2 (in Gmsh: -format msh41 or msh22)"));
  }
  PetscCall(PetscStrncpy(mesh->version, p->tok[0], sizeof(mesh->version)));
  p->v41 = (PetscBool)!strcmp(p->tok[0], "4.1");
  PetscCall(FieldInt(p, 1, 0, 1, "the file type (0 for ASCII)", &file_type));
  if (file_type != 0)
    PetscCall(FailAt(p, p->line, "file type 1 (binary)", "an ASCII mesh, file type 0 (in Gmsh: Mesh.Binary = 0)"));
  PetscCall(FieldInt(p, 2, 1, 16, "the data size", &data_size));
  PetscCall(ExpectEnd(p, "MeshFormat", start, ""));
  PetscFunctionReturn(0);
}

static PetscErrorCode ReadPhysicalNames(MbsGmshParser *p)
{
  const PetscInt start = p->line;
  PetscInt       n;

  PetscFunctionBegin;
  if (p->have_names) PetscCall(FailAt(p, p->line, NULL, "one $PhysicalNames section"));
  p->have_names = PETSC_TRUE;
  PetscCall(ExpectRecord(p, 1, "the number of physical names"));
  PetscCall(FieldCount(p, 0, "the number of physical names", &n));
  PetscCall(PetscMalloc1(n, &p->names));
  p->namecap = n;
  for (PetscInt i = 0; i < n; i++) {
    const char *q, *qend;
    size_t      namelen;
    PetscInt    dim, tag;

    PetscCall(NextLine(p));
    if (p->eof || p->ntok < 3 || p->tok[0][0] == '$')
      PetscCall(FailAt(p, p->line, NULL,
                       "physical name %" PetscInt_FMT " of %" PetscInt_FMT ": 'dimension tag \"name\"'", i + 1, n));
    PetscCall(FieldInt(p, 0, 0, 3, "the dimension of a physical group", &dim));
    PetscCall(FieldInt(p, 1, 1, PETSC_MAX_INT, "the tag of a physical group", &tag));
    q    = strchr(p->text, '"');
    qend = q ? strrchr(q + 1, '"') : NULL;
    if (!q || !qend || qend == q + 1)
      PetscCall(FailAt(p, p->line, NULL, "a non-empty quoted name: 'dimension tag \"name\"'"));
    p->names[i].dim  = dim;
    p->names[i].tag  = tag;
    p->names[i].line = p->line;
    namelen          = (size_t)(qend - q - 1);
    PetscCall(PetscMalloc1(namelen + 1, &p->names[i].name));
    memcpy(p->names[i].name, q + 1, namelen);
    p->names[i].name[namelen] = 0;
    p->nnames++;
  }
  PetscCall(ExpectEnd(p, "PhysicalNames", start, " after the number of names the section announces"));
  PetscFunctionReturn(0);
}

static PetscErrorCode PushPhys(MbsGmshParser *p, PetscInt value)
{
  PetscFunctionBegin;
  if (p->nphys == p->physcap) {
    p->physcap = p->physcap ? 2 * p->physcap : 64;
    PetscCall(PetscRealloc(sizeof(PetscInt) * p->physcap, &p->phys));
  }
  p->phys[p->nphys++] = value;
  PetscFunctionReturn(0);
}

/* $Entities (4.1): only the physical tags of each entity are kept. */
static PetscErrorCode ReadEntities(MbsGmshParser *p)
{
  static const char *const kinds[4] = {"point", "curve", "surface", "volume"};
  const PetscInt           start    = p->line;
  PetscInt                 count[4];

  PetscFunctionBegin;
  if (!p->v41) PetscCall(FailAt(p, p->line, NULL, "no $Entities section in an MSH 2.2 file"));
  if (p->have_entities) PetscCall(FailAt(p, p->line, NULL, "one $Entities section"));
  if (p->have_elements) PetscCall(FailAt(p, p->line, NULL, "$Entities before $Elements"));
  p->have_entities = PETSC_TRUE;
  PetscCall(ExpectRecord(p, 4, "'numPoints numCurves numSurfaces numVolumes'"));
  for (int d = 0; d < 4; d++) PetscCall(FieldCount(p, d, "the number of entities", &count[d]));
  for (int d = 0; d < 4; d++) {
    const PetscInt nfirst = d ? 7 : 4; /* tag + bounding box, or tag + x y z */

    for (PetscInt i = 0; i < count[d]; i++) {
      PetscInt tag, nphys, nbound = 0;
      char     what[160];

      snprintf(what, sizeof(what), "%s entity %" PetscInt_FMT " of %" PetscInt_FMT ": %s", kinds[d], i + 1, count[d],
               d ? "'tag minX minY minZ maxX maxY maxZ numPhysicalTags physicalTag... numBounding tag...'"
                 : "'tag X Y Z numPhysicalTags physicalTag...'");
      PetscCall(NextLine(p));
      if (p->eof || p->ntok < nfirst + 1 || p->tok[0][0] == '$') PetscCall(FailAt(p, p->line, NULL, "%s", what));
      PetscCall(FieldInt(p, 0, 1, PETSC_MAX_INT, "an entity tag", &tag));
      PetscCall(FieldInt(p, nfirst, 0, p->ntok - nfirst - 1, "the number of physical tags of the entity", &nphys));
      if (d) {
        if (p->ntok < nfirst + nphys + 2) PetscCall(FailAt(p, p->line, NULL, "%s", what));
        /* bounded by the fields left on the line, so that the count below cannot overflow */
        PetscCall(
          FieldInt(p, nfirst + 1 + nphys, 0, p->ntok - nfirst - 2 - nphys, "the number of bounding entities", &nbound));
      }
      if (p->ntok != nfirst + 1 + nphys + (d ? 1 + nbound : 0)) PetscCall(FailAt(p, p->line, NULL, "%s", what));
      {
        PetscBool missing;
        PetscCall(PetscHMapIQuerySet(p->entity[d], tag, p->nphys, &missing));
        if (!missing) {
          char got[MBS_GMSH_GOT_LEN];

          snprintf(got, sizeof(got), "%s tag %" PetscInt_FMT " again", kinds[d], tag);
          PetscCall(FailAt(p, p->line, got, "each %s entity once", kinds[d]));
        }
      }
      PetscCall(PushPhys(p, nphys));
      for (PetscInt k = 0; k < nphys; k++) {
        PetscInt ptag;

        /* Gmsh writes a negative physical tag for an entity whose orientation is reversed in the group */
        PetscCall(FieldInt(p, nfirst + 1 + k, -(long long)PETSC_MAX_INT, PETSC_MAX_INT, "a physical tag", &ptag));
        PetscCall(PushPhys(p, PetscAbsInt(ptag)));
      }
    }
  }
  PetscCall(ExpectEnd(p, "Entities", start, " after the number of entities the section announces"));
  PetscFunctionReturn(0);
}

static PetscErrorCode AddNodeTag(MbsGmshParser *p, MbsGmshMesh *mesh, PetscInt index, PetscInt tag)
{
  PetscHashIter it;
  PetscBool     missing;

  PetscFunctionBegin;
  PetscCall(PetscHMapIPut(p->node_index, tag, &it, &missing));
  if (!missing) {
    PetscInt first;
    char     got[MBS_GMSH_GOT_LEN];

    PetscCall(PetscHMapIIterGet(p->node_index, it, &first));
    snprintf(got, sizeof(got), "tag %" PetscInt_FMT " again (first at line %" PetscInt_FMT ")", tag,
             mesh->node_line[first]);
    PetscCall(FailAt(p, p->line, got, "a node tag not used before"));
  }
  PetscCall(PetscHMapIIterSet(p->node_index, it, index));
  mesh->node_tag[index]  = tag;
  mesh->node_line[index] = p->line;
  PetscFunctionReturn(0);
}

static PetscErrorCode ReadCoordinates(MbsGmshParser *p, MbsGmshMesh *mesh, PetscInt index, PetscInt first_field)
{
  static const char *const what[3] = {"the x coordinate", "the y coordinate", "the z coordinate"};

  PetscFunctionBegin;
  for (int l = 0; l < 3; l++) PetscCall(FieldReal(p, first_field + l, what[l], &mesh->x[3 * index + l]));
  PetscFunctionReturn(0);
}

static PetscErrorCode ReadNodes(MbsGmshParser *p, MbsGmshMesh *mesh)
{
  const PetscInt start = p->line;
  PetscInt       n, nblocks = 1, done = 0;

  PetscFunctionBegin;
  if (p->have_nodes) PetscCall(FailAt(p, p->line, NULL, "one $Nodes section"));
  p->have_nodes = PETSC_TRUE;
  if (p->v41) {
    PetscCall(ExpectRecord(p, 4, "'numEntityBlocks numNodes minNodeTag maxNodeTag'"));
    PetscCall(FieldCount(p, 0, "the number of node blocks", &nblocks));
    PetscCall(FieldCount(p, 1, "the number of nodes", &n));
  } else {
    PetscCall(ExpectRecord(p, 1, "the number of nodes"));
    PetscCall(FieldCount(p, 0, "the number of nodes", &n));
  }
  if (!n) PetscCall(FailAt(p, p->line, NULL, "at least one node"));
  PetscCall(PetscMalloc3(n, &mesh->node_tag, n, &mesh->node_line, 3 * n, &mesh->x));
  PetscCall(PetscCalloc1(n, &mesh->node_edges));
  mesh->nnodes = n;
  if (!p->v41) {
    for (PetscInt i = 0; i < n; i++) {
      PetscInt tag;
      char     what[96];

      snprintf(what, sizeof(what), "node %" PetscInt_FMT " of %" PetscInt_FMT ": 'tag x y z'", i + 1, n);
      PetscCall(ExpectRecord(p, 4, what));
      PetscCall(FieldInt(p, 0, 1, PETSC_MAX_INT, "a node tag", &tag));
      PetscCall(AddNodeTag(p, mesh, i, tag));
      PetscCall(ReadCoordinates(p, mesh, i, 1));
    }
    PetscCall(ExpectEnd(p, "Nodes", start, " after the number of nodes the section announces"));
    PetscFunctionReturn(0);
  }
  for (PetscInt b = 0; b < nblocks; b++) {
    PetscInt edim, etag, parametric, nb, block_line;
    char     what[160];

    snprintf(what, sizeof(what),
             "node block %" PetscInt_FMT " of %" PetscInt_FMT ": 'entityDim entityTag parametric numNodesInBlock'",
             b + 1, nblocks);
    PetscCall(ExpectRecord(p, 4, what));
    block_line = p->line;
    PetscCall(FieldInt(p, 0, 0, 3, "the entity dimension", &edim));
    PetscCall(FieldInt(p, 1, 0, PETSC_MAX_INT, "the entity tag", &etag));
    PetscCall(FieldInt(p, 2, 0, 1, "the parametric flag", &parametric));
    PetscCall(FieldInt(
      p, 3, 0, n - done,
      "the number of nodes in the block (at most the nodes the header announces and earlier blocks do not hold)", &nb));
    for (PetscInt i = 0; i < nb; i++) {
      PetscInt tag;

      snprintf(what, sizeof(what),
               "the tag of node %" PetscInt_FMT " of %" PetscInt_FMT " of the block at line %" PetscInt_FMT
               ", alone on its line",
               i + 1, nb, block_line);
      PetscCall(ExpectRecord(p, 1, what));
      PetscCall(FieldInt(p, 0, 1, PETSC_MAX_INT, "a node tag", &tag));
      PetscCall(AddNodeTag(p, mesh, done + i, tag));
    }
    for (PetscInt i = 0; i < nb; i++) {
      const PetscInt nfields = parametric ? 3 + edim : 3;

      snprintf(what, sizeof(what),
               "the coordinates of node %" PetscInt_FMT " of %" PetscInt_FMT " of the block at line %" PetscInt_FMT
               ": %s",
               i + 1, nb, block_line, parametric ? "'x y z' and the entity's parametric coordinates" : "'x y z'");
      PetscCall(ExpectRecord(p, nfields, what));
      PetscCall(ReadCoordinates(p, mesh, done + i, 0));
    }
    done += nb;
  }
  if (done != n) {
    char got[MBS_GMSH_GOT_LEN];

    snprintf(got, sizeof(got), "%" PetscInt_FMT " nodes in %" PetscInt_FMT " blocks", done, nblocks);
    PetscCall(FailAt(p, start + 1, got, "%" PetscInt_FMT " nodes, as the $Nodes header announces", n));
  }
  PetscCall(ExpectEnd(p, "Nodes", start, " after the blocks the section announces"));
  PetscFunctionReturn(0);
}

/* The physical group (dim, tag), found through p->group_index (a mesh may have a group per element), *cache
   when it is the last one used; a new one is appended. */
static PetscErrorCode AddToGroup(MbsGmshParser *p, MbsGmshMesh *mesh, PetscInt dim, PetscInt tag, PetscInt nnodes,
                                 const PetscInt nodes[], PetscInt *cache)
{
  MbsGmshGroup *g = NULL;

  PetscFunctionBegin;
  if (*cache >= 0 && mesh->groups[*cache].dim == dim && mesh->groups[*cache].tag == tag) g = &mesh->groups[*cache];
  if (!g) {
    PetscHashIJKey key;
    PetscInt       k;

    key.i = dim;
    key.j = tag;
    PetscCall(PetscHMapIJGet(p->group_index, key, &k));
    if (k >= 0) {
      g      = &mesh->groups[k];
      *cache = k;
    }
  }
  if (!g) {
    PetscHashIJKey key;

    key.i = dim;
    key.j = tag;
    PetscCall(PetscHMapIJSet(p->group_index, key, mesh->ngroups));
    if (mesh->ngroups == mesh->group_cap) {
      mesh->group_cap = mesh->group_cap ? 2 * mesh->group_cap : 8;
      PetscCall(PetscRealloc(sizeof(MbsGmshGroup) * mesh->group_cap, &mesh->groups));
    }
    *cache = mesh->ngroups++;
    g      = &mesh->groups[*cache];
    PetscCall(PetscMemzero(g, sizeof(*g)));
    g->dim = dim;
    g->tag = tag;
  }
  if (g->nnodes + nnodes > g->cap) {
    g->cap = PetscMax(2 * g->cap, g->nnodes + nnodes + 16);
    PetscCall(PetscRealloc(sizeof(PetscInt) * g->cap, &g->nodes));
  }
  for (PetscInt k = 0; k < nnodes; k++) g->nodes[g->nnodes++] = nodes[k];
  PetscFunctionReturn(0);
}

static PetscErrorCode AddEdge(MbsGmshParser *p, MbsGmshMesh *mesh, PetscInt a, PetscInt b)
{
  PetscHashIJKey key;
  PetscHashIter  it;
  PetscBool      missing;

  PetscFunctionBegin;
  key.i = PetscMin(a, b);
  key.j = PetscMax(a, b);
  PetscCall(PetscHMapIJPut(p->edge_index, key, &it, &missing));
  if (!missing) PetscFunctionReturn(0);
  PetscCall(PetscHMapIJIterSet(p->edge_index, it, mesh->nedges));
  if (mesh->nedges == mesh->edge_cap) {
    mesh->edge_cap = mesh->edge_cap ? 2 * mesh->edge_cap : 256;
    PetscCall(PetscRealloc(sizeof(PetscInt) * 2 * mesh->edge_cap, &mesh->edge));
    PetscCall(PetscRealloc(sizeof(PetscInt) * mesh->edge_cap, &mesh->edge_line));
  }
  mesh->edge[2 * mesh->nedges]     = a;
  mesh->edge[2 * mesh->nedges + 1] = b;
  mesh->edge_line[mesh->nedges]    = p->line;
  mesh->nedges++;
  mesh->node_edges[a]++;
  mesh->node_edges[b]++;
  PetscFunctionReturn(0);
}

/* One element from the fields first.. of the current line: its nodes become edges and join the groups. */
static PetscErrorCode AddElement(MbsGmshParser *p, MbsGmshMesh *mesh, const MbsGmshElementType *type, PetscInt first,
                                 PetscInt dim, PetscInt nphys, const PetscInt phys[], PetscInt *cache)
{
  PetscInt nodes[4];

  PetscFunctionBegin;
  for (int k = 0; k < type->nnodes; k++) {
    PetscInt tag, index;

    PetscCall(FieldInt(p, first + k, 1, PETSC_MAX_INT, "a node tag", &tag));
    PetscCall(PetscHMapIGet(p->node_index, tag, &index));
    if (index < 0) {
      char got[MBS_GMSH_GOT_LEN];

      snprintf(got, sizeof(got), "node tag %" PetscInt_FMT, tag);
      PetscCall(FailAt(p, p->line, got, "the tag of a node in $Nodes"));
    }
    for (int l = 0; l < k; l++)
      if (nodes[l] == index) {
        char got[MBS_GMSH_GOT_LEN];

        snprintf(got, sizeof(got), "node %" PetscInt_FMT " twice", tag);
        PetscCall(FailAt(p, p->line, got, "an element with distinct nodes"));
      }
    nodes[k] = index;
  }
  if (type->nnodes > 2 && !mesh->nsurface++) mesh->surface_line = p->line;
  if (type->nnodes > 1) {
    for (int k = 0; k < type->nnodes; k++) {
      if (type->nnodes == 2 && k == 1) break; /* a line is one edge */
      PetscCall(AddEdge(p, mesh, nodes[k], nodes[(k + 1) % type->nnodes]));
    }
  }
  for (PetscInt k = 0; k < nphys; k++) PetscCall(AddToGroup(p, mesh, dim, phys[k], type->nnodes, nodes, cache));
  PetscFunctionReturn(0);
}

static PetscErrorCode ElementType(MbsGmshParser *p, PetscInt field, const MbsGmshElementType **type)
{
  PetscInt t;

  PetscFunctionBegin;
  PetscCall(FieldInt(p, field, 1, PETSC_MAX_INT, supported_types, &t));
  *type = FindElementType(t);
  if (!IsSupported(*type)) {
    char got[MBS_GMSH_GOT_LEN];

    if (*type)
      snprintf(got, sizeof(got), "type %" PetscInt_FMT " (%s)", t, (*type)->what);
    else
      snprintf(got, sizeof(got), "type %" PetscInt_FMT, t);
    PetscCall(FailAt(p, p->line, got, "%s", supported_types));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode ReadElements(MbsGmshParser *p, MbsGmshMesh *mesh)
{
  const PetscInt start = p->line;
  PetscInt       n, nblocks = 1, done = 0, cache = -1;

  PetscFunctionBegin;
  if (p->have_elements) PetscCall(FailAt(p, p->line, NULL, "one $Elements section"));
  if (!p->have_nodes) PetscCall(FailAt(p, p->line, NULL, "$Nodes before $Elements"));
  p->have_elements = PETSC_TRUE;
  if (p->v41) {
    PetscCall(ExpectRecord(p, 4, "'numEntityBlocks numElements minElementTag maxElementTag'"));
    PetscCall(FieldCount(p, 0, "the number of element blocks", &nblocks));
    PetscCall(FieldCount(p, 1, "the number of elements", &n));
  } else {
    PetscCall(ExpectRecord(p, 1, "the number of elements"));
    PetscCall(FieldCount(p, 0, "the number of elements", &n));
  }
  if (!p->v41) {
    for (PetscInt i = 0; i < n; i++) {
      const MbsGmshElementType *type;
      PetscInt                  tag, ntags, phys = 0;

      PetscCall(NextLine(p));
      if (p->eof || p->ntok < 3 || p->tok[0][0] == '$')
        PetscCall(FailAt(p, p->line, NULL,
                         "element %" PetscInt_FMT " of %" PetscInt_FMT ": 'tag type numTags tag... node...'", i + 1,
                         n));
      PetscCall(FieldInt(p, 0, 1, PETSC_MAX_INT, "an element tag", &tag));
      PetscCall(ElementType(p, 1, &type));
      PetscCall(FieldInt(p, 2, 0, p->ntok - 3, "the number of element tags", &ntags));
      if (p->ntok != 3 + ntags + type->nnodes)
        PetscCall(FailAt(p, p->line, NULL,
                         "element %" PetscInt_FMT " of %" PetscInt_FMT " with %" PetscInt_FMT
                         " tags and the %d nodes of a %s: %" PetscInt_FMT " fields",
                         i + 1, n, ntags, type->nnodes, type->what, 3 + ntags + type->nnodes));
      if (ntags) PetscCall(FieldInt(p, 3, 0, PETSC_MAX_INT, "the physical tag of the element", &phys));
      PetscCall(AddElement(p, mesh, type, 3 + ntags, type->dim, phys ? 1 : 0, &phys, &cache));
    }
    PetscCall(ExpectEnd(p, "Elements", start, " after the number of elements the section announces"));
    PetscFunctionReturn(0);
  }
  for (PetscInt b = 0; b < nblocks; b++) {
    const MbsGmshElementType *type;
    PetscInt                  edim, etag, nb, block_line, nphys = 0, *phys = NULL;
    char                      what[192];

    snprintf(what, sizeof(what),
             "element block %" PetscInt_FMT " of %" PetscInt_FMT
             ": 'entityDim entityTag elementType numElementsInBlock'",
             b + 1, nblocks);
    PetscCall(ExpectRecord(p, 4, what));
    block_line = p->line;
    PetscCall(FieldInt(p, 0, 0, 3, "the entity dimension", &edim));
    PetscCall(FieldInt(p, 1, 0, PETSC_MAX_INT, "the entity tag", &etag));
    PetscCall(ElementType(p, 2, &type));
    PetscCall(FieldInt(
      p, 3, 0, n - done,
      "the number of elements in the block (at most the elements the header announces and earlier blocks do not hold)",
      &nb));
    if (p->have_entities) {
      PetscInt off;

      PetscCall(PetscHMapIGet(p->entity[edim], etag, &off));
      if (off < 0) {
        char got[MBS_GMSH_GOT_LEN];

        snprintf(got, sizeof(got), "dimension %" PetscInt_FMT ", tag %" PetscInt_FMT, edim, etag);
        PetscCall(FailAt(p, p->line, got, "an entity declared in $Entities"));
      }
      nphys = p->phys[off];
      phys  = &p->phys[off + 1];
    }
    for (PetscInt i = 0; i < nb; i++) {
      PetscInt tag;

      snprintf(what, sizeof(what),
               "element %" PetscInt_FMT " of %" PetscInt_FMT " of the block at line %" PetscInt_FMT
               ": 'tag' and the %d node tags of a %s",
               i + 1, nb, block_line, type->nnodes, type->what);
      PetscCall(ExpectRecord(p, 1 + type->nnodes, what));
      PetscCall(FieldInt(p, 0, 1, PETSC_MAX_INT, "an element tag", &tag));
      PetscCall(AddElement(p, mesh, type, 1, edim, nphys, phys, &cache));
    }
    done += nb;
  }
  if (done != n) {
    char got[MBS_GMSH_GOT_LEN];

    snprintf(got, sizeof(got), "%" PetscInt_FMT " elements in %" PetscInt_FMT " blocks", done, nblocks);
    PetscCall(FailAt(p, start + 1, got, "%" PetscInt_FMT " elements, as the $Elements header announces", n));
  }
  PetscCall(ExpectEnd(p, "Elements", start, " after the blocks the section announces"));
  PetscFunctionReturn(0);
}

static PetscErrorCode SkipSection(MbsGmshParser *p)
{
  const PetscInt start = p->line;
  char           section[104], end[128];

  PetscFunctionBegin;
  snprintf(section, sizeof(section), "%.100s", p->tok[0]);
  snprintf(end, sizeof(end), "$End%s", section + 1);
  for (;;) {
    PetscCall(NextLine(p));
    if (p->eof) PetscCall(FailAt(p, p->line, NULL, "%s (closing %s at line %" PetscInt_FMT ")", end, section, start));
    if (p->ntok == 1 && !strcmp(p->tok[0], end)) break;
  }
  PetscFunctionReturn(0);
}

/* Names from $PhysicalNames go to the groups with the same dimension and tag; a named group without
   elements is kept (empty), so that a reference to it can say so. */
static PetscErrorCode FinishGroups(MbsGmshParser *p, MbsGmshMesh *mesh)
{
  PetscFunctionBegin;
  for (PetscInt k = 0; k < mesh->ngroups; k++)
    PetscCall(PetscSortRemoveDupsInt(&mesh->groups[k].nnodes, mesh->groups[k].nodes));
  for (PetscInt i = 0; i < p->nnames; i++) {
    PetscInt cache = -1;

    PetscCall(AddToGroup(p, mesh, p->names[i].dim, p->names[i].tag, 0, NULL, &cache));
    if (mesh->groups[cache].name) {
      char got[MBS_GMSH_GOT_LEN];

      snprintf(got, sizeof(got), "dimension %" PetscInt_FMT ", tag %" PetscInt_FMT " named again", p->names[i].dim,
               p->names[i].tag);
      PetscCall(FailAt(p, p->names[i].line, got, "one name per physical group"));
    }
    mesh->groups[cache].name = p->names[i].name;
    p->names[i].name         = NULL;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode Parse(MbsGmshParser *p, MbsGmshMesh *mesh)
{
  PetscFunctionBegin;
  PetscCall(NextLine(p));
  if (p->eof) PetscCall(FailAt(p, p->line, "an empty file", "a Gmsh mesh starting with $MeshFormat"));
  if (p->ntok != 1 || strcmp(p->tok[0], "$MeshFormat"))
    PetscCall(FailAt(p, p->line, NULL, "$MeshFormat (a Gmsh .msh file starts with it)"));
  PetscCall(ReadMeshFormat(p, mesh));
  for (;;) {
    PetscCall(NextLine(p));
    if (p->eof) break;
    if (p->ntok != 1 || p->tok[0][0] != '$' || !strncmp(p->tok[0], "$End", 4))
      PetscCall(FailAt(p, p->line, NULL, "a section such as $Nodes or $Elements"));
    if (!strcmp(p->tok[0], "$PhysicalNames"))
      PetscCall(ReadPhysicalNames(p));
    else if (!strcmp(p->tok[0], "$Entities"))
      PetscCall(ReadEntities(p));
    else if (!strcmp(p->tok[0], "$Nodes"))
      PetscCall(ReadNodes(p, mesh));
    else if (!strcmp(p->tok[0], "$Elements"))
      PetscCall(ReadElements(p, mesh));
    else if (!strcmp(p->tok[0], "$MeshFormat"))
      PetscCall(FailAt(p, p->line, NULL, "one $MeshFormat section"));
    else
      PetscCall(SkipSection(p));
  }
  if (!p->have_nodes) PetscCall(FailAt(p, p->line, NULL, "a $Nodes section"));
  if (!p->have_elements) PetscCall(FailAt(p, p->line, NULL, "an $Elements section"));
  PetscCall(FinishGroups(p, mesh));
  PetscFunctionReturn(0);
}

static PetscErrorCode ParserDestroy(MbsGmshParser *p)
{
  PetscFunctionBegin;
  PetscCall(PetscFree2(p->text, p->scratch));
  PetscCall(PetscFree(p->tok));
  PetscCall(PetscHMapIDestroy(&p->node_index));
  PetscCall(PetscHMapIJDestroy(&p->edge_index));
  PetscCall(PetscHMapIJDestroy(&p->group_index));
  for (int d = 0; d < 4; d++) PetscCall(PetscHMapIDestroy(&p->entity[d]));
  PetscCall(PetscFree(p->phys));
  for (PetscInt i = 0; i < p->nnames; i++) PetscCall(PetscFree(p->names[i].name));
  PetscCall(PetscFree(p->names));
  PetscFunctionReturn(0);
}

/*
  MbsGmshMeshDestroy - Frees what MbsGmshRead() allocated and zeroes the structure.
*/
PetscErrorCode MbsGmshMeshDestroy(MbsGmshMesh *mesh)
{
  PetscFunctionBegin;
  if (!mesh) PetscFunctionReturn(0);
  PetscCall(PetscFree(mesh->file));
  PetscCall(PetscFree3(mesh->node_tag, mesh->node_line, mesh->x));
  PetscCall(PetscFree(mesh->node_edges));
  PetscCall(PetscFree(mesh->edge));
  PetscCall(PetscFree(mesh->edge_line));
  for (PetscInt k = 0; k < mesh->ngroups; k++) {
    PetscCall(PetscFree(mesh->groups[k].name));
    PetscCall(PetscFree(mesh->groups[k].nodes));
  }
  PetscCall(PetscFree(mesh->groups));
  PetscCall(PetscMemzero(mesh, sizeof(*mesh)));
  PetscFunctionReturn(0);
}

/*
  MbsGmshRead - Reads a Gmsh MSH file (ASCII 4.1 or 2.2): the nodes, the unique edges of its line,
  triangle and quadrangle elements, and the nodes of its physical groups.

  Collective

  Input Parameters:
+ comm - the ranks that need the mesh (rank 0 reads the file and broadcasts it)
. filename - the file
- context - prefix of every error message, naming what referred to the file (may be NULL)

  Output Parameter:
. mesh - the mesh, to be freed with MbsGmshMeshDestroy(); zeroed on error
*/
PetscErrorCode MbsGmshRead(MPI_Comm comm, const char filename[], const char context[], MbsGmshMesh *mesh)
{
  PetscInt64     nbytes;
  char          *bytes = NULL;
  int            status;
  MbsGmshParser  p;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(mesh, sizeof(*mesh)));
  PetscCall(MbsReadFileBroadcast(comm, filename, MBS_GMSH_MAX_BYTES, &bytes, &nbytes, &status));
  if (status == MBS_READFILE_TOO_LARGE)
    SETERRQ(comm, PETSC_ERR_FILE_OPEN,
            "%s%s%s: the mesh file is larger than %d GiB, the most this reader takes (every rank holds the whole text)",
            context ? context : "", context ? ": " : "", filename, (int)(MBS_GMSH_MAX_BYTES >> 30));
  if (status) {
    if (context)
      SETERRQ(comm, PETSC_ERR_FILE_OPEN, "%s: expected a readable Gmsh mesh file, got '%s' (%s)", context, filename,
              MbsReadFileError(status));
    SETERRQ(comm, PETSC_ERR_FILE_OPEN, "%s: cannot read the mesh file: %s", filename, MbsReadFileError(status));
  }

  PetscCall(PetscMemzero(&p, sizeof(p)));
  p.comm    = comm;
  p.file    = filename;
  p.context = context;
  p.buf     = bytes;
  p.len     = (size_t)nbytes;
  PetscCall(PetscHMapICreate(&p.node_index));
  PetscCall(PetscHMapIJCreate(&p.edge_index));
  PetscCall(PetscHMapIJCreate(&p.group_index));
  for (int d = 0; d < 4; d++) PetscCall(PetscHMapICreate(&p.entity[d]));
  ierr = PetscStrallocpy(filename, &mesh->file);
  if (!ierr) ierr = Parse(&p, mesh);
  PetscCall(ParserDestroy(&p));
  PetscCall(PetscFree(bytes));
  if (ierr) PetscCall(MbsGmshMeshDestroy(mesh));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* The YAML reader's own interface between its files: the reader state and the parsing helpers (yamlparse.c),
   shared by the model sections (yaml.c) and the generator sections (yamlgroups.c). */
#ifndef MBS_YAMLIMPL_H
#define MBS_YAMLIMPL_H

#include <yaml.h>
#include <gglmbs/io.h>
#include <gglmbs/stepper.h>
#include <gglmbs/elements.h>
#include "io/gmsh.h"
#include "io/readfile.h"
#include "model/addelement.h"
#include "model/memory.h"
#include "model/hash.h"

#define MBS_YAML_MAX_BYTES    (256 * (PetscInt64)1048576) /* an input file; meshes are read separately */
#define MBS_YAML_MAX_DEPTH    64                          /* nesting of sequences and mappings */
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
typedef enum { MBS_YAML_CHAIN, MBS_YAML_RIGID_CHAIN, MBS_YAML_NET, MBS_YAML_MESH, MBS_YAML_BEAM } MbsYAMLGroupKind;

typedef struct {
  MbsYAMLGroupKind kind;
  const char      *name; /* points into the document */
  size_t           len;
  const char      *section; /* "chains", ..., and the item index there, for messages */
  PetscInt         item;
  PetscInt         count, ny;       /* members (chain links; net nodes along i and j; mesh nodes) */
  PetscInt         first_body;      /* member k is body first_body + k (net node (i, j): k = i ny + j) */
  PetscInt        *tags, *tag_node; /* mesh: node tags in increasing order and the node index of each */
  PetscBool        rigid;           /* its members are rigid bodies (a mesh of beams) */
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
  /* the registered groups in hash tables with chained buckets (first group name_head[bucket], next one
     name_next[group]), so that a lookup does not search all generators: by name, and the chains, rigid chains
     and meshes named "<prefix>.<i>" by their prefix (prefix_head, prefix_next; a net named <prefix> would
     share bodies with them) */
  PetscInt    nbuckets; /* a power of two */
  PetscInt   *name_head, *name_next, *prefix_head, *prefix_next;
  const char *text; /* the input's bytes, for what the document API does not keep (explicit tags) */
  size_t      ntext;
} MbsYAMLReader;

/* A resolved body reference: MBS_GROUND, a listed body or a chain member. */
typedef struct {
  PetscInt    body;
  MbsBodyType type;
  PetscBool   ground;
} MbsYAMLBodyRef;

PETSC_INTERN PetscErrorCode MbsYAMLCheckKeys(MbsYAMLReader *r, yaml_node_t *map, const char path[],
                                             const char *const allowed[], const char context[]);
PETSC_INTERN PetscErrorCode MbsYAMLExpectMapping(MbsYAMLReader *r, yaml_node_t *node, const char path[],
                                                 const char expected[]);
PETSC_INTERN PetscErrorCode MbsYAMLExpectSequence(MbsYAMLReader *r, yaml_node_t *node, const char path[],
                                                  const char expected[]);
/* The message MbsYAMLFail() raises, "file:line:column: key 'path': expected ..., got ..." */
PETSC_INTERN void MbsYAMLFormatFail(MbsYAMLReader *r, yaml_mark_t mark, const char path[], const char expected[],
                                    const char got[], char msg[], size_t len);
PETSC_INTERN PetscErrorCode MbsYAMLFail(MbsYAMLReader *r, yaml_mark_t mark, const char path[], const char expected[],
                                        const char got[]);
PETSC_INTERN PetscErrorCode MbsYAMLFailNode(MbsYAMLReader *r, yaml_node_t *node, const char path[],
                                            const char expected[]);
PETSC_INTERN void MbsYAMLFindGroupMember(MbsYAMLReader *r, const char name[], MbsYAMLGroup **group, PetscInt *body,
                                         MbsYAMLGroup **near);
PETSC_INTERN MbsYAMLBody   *MbsYAMLFindListedBody(MbsYAMLReader *r, const char name[]);
PETSC_INTERN MbsYAMLGroup  *MbsYAMLFindGroup(MbsYAMLReader *r, const char name[], size_t len);
PETSC_INTERN size_t         MbsYAMLHash(const char s[], size_t len);
PETSC_INTERN PetscErrorCode MbsYAMLGroupTablesCreate(MbsYAMLReader *r, PetscInt ngroups);
PETSC_INTERN PetscErrorCode MbsYAMLGroupTablesDestroy(MbsYAMLReader *r);
PETSC_INTERN void           MbsYAMLGroupTablesAdd(MbsYAMLReader *r, PetscInt g);
PETSC_INTERN const char    *MbsYAMLGroupMemberPattern(MbsYAMLGroupKind kind);
PETSC_INTERN PetscBool      MbsYAMLGroupNamed(const MbsYAMLGroup *g, const char name[], size_t len);
PETSC_INTERN PetscErrorCode MbsYAMLLookup(MbsYAMLReader *r, yaml_node_t *map, const char parent[], const char key[],
                                          const char expected_if_missing[], char path[MBS_YAML_PATH_LEN],
                                          yaml_node_t **value);
PETSC_INTERN yaml_node_t   *MbsYAMLNodeGet(MbsYAMLReader *r, yaml_node_item_t item);
PETSC_INTERN PetscErrorCode MbsYAMLParseFinite(MbsYAMLReader *r, yaml_node_t *node, const char path[],
                                               const char expected[], double *value);
PETSC_INTERN PetscErrorCode MbsYAMLParseInertia(MbsYAMLReader *r, yaml_node_t *node, const char path[], PetscReal J[3]);
PETSC_INTERN PetscErrorCode MbsYAMLParseInt(MbsYAMLReader *r, yaml_node_t *node, const char path[],
                                            const char quantity[], PetscInt *value);
PETSC_INTERN PetscErrorCode MbsYAMLParseNonzeroVec3(MbsYAMLReader *r, yaml_node_t *node, const char path[],
                                                    const char quantity[], PetscReal v[3]);
PETSC_INTERN PetscErrorCode MbsYAMLParseOrientation(MbsYAMLReader *r, yaml_node_t *node, const char path[],
                                                    PetscReal R[9]);
PETSC_INTERN PetscErrorCode MbsYAMLParseReal(MbsYAMLReader *r, yaml_node_t *node, const char path[], MbsYAMLRange range,
                                             const char quantity[], PetscReal *value);
PETSC_INTERN PetscErrorCode MbsYAMLParseString(MbsYAMLReader *r, yaml_node_t *node, const char path[],
                                               const char expected[], const char **value);
PETSC_INTERN PetscErrorCode MbsYAMLParseVec3(MbsYAMLReader *r, yaml_node_t *node, const char path[],
                                             const char quantity[], PetscReal v[3]);
PETSC_INTERN void           MbsYAMLPathIndex(char out[MBS_YAML_PATH_LEN], const char parent[], PetscInt i);
PETSC_INTERN void           MbsYAMLPathKey(char out[MBS_YAML_PATH_LEN], const char parent[], const char key[]);
PETSC_INTERN PetscErrorCode MbsYAMLResolveBody(MbsYAMLReader *r, yaml_node_t *node, const char path[],
                                               PetscBool allow_ground, MbsYAMLBodyRef *ref);
PETSC_INTERN PetscBool      MbsYAMLScalarIsNull(yaml_node_t *node);
PETSC_INTERN const char    *MbsYAMLScalarText(yaml_node_t *node);
PETSC_INTERN yaml_node_t   *MbsYAMLSequenceItem(MbsYAMLReader *r, yaml_node_t *node, PetscInt i);
PETSC_INTERN PetscInt       MbsYAMLSequenceLength(yaml_node_t *node);
/* A file named in the input, relative to the directory of the input file unless absolute */
PETSC_INTERN void           MbsYAMLRelativePath(MbsYAMLReader *r, const char file[], char out[], size_t size);
PETSC_INTERN PetscBool      MbsYAMLSplitIndex(const char name[], size_t len, size_t *prefix_len, PetscInt *index);
PETSC_INTERN PetscErrorCode MbsYAMLAddChains(MbsYAMLReader *r, yaml_node_t *list, const char path[]);
PETSC_INTERN PetscErrorCode MbsYAMLAddMeshes(MbsYAMLReader *r, yaml_node_t *list, const char path[]);
PETSC_INTERN PetscErrorCode MbsYAMLAddNets(MbsYAMLReader *r, yaml_node_t *list, const char path[]);
PETSC_INTERN PetscErrorCode MbsYAMLAddRigidChains(MbsYAMLReader *r, yaml_node_t *list, const char path[]);
PETSC_INTERN PetscErrorCode MbsYAMLAddBeams(MbsYAMLReader *r, yaml_node_t *list, const char path[]);
PETSC_INTERN PetscErrorCode MbsYAMLParseTimeFunction(MbsYAMLReader *r, yaml_node_t *node, const char path[],
                                                     MbsTimeFunction *f);

PETSC_INTERN PetscErrorCode MbsYAMLParseName(MbsYAMLReader *r, yaml_node_t *node, const char path[],
                                             const char expected[], const char **value);
PETSC_INTERN int            MbsYAMLCompareBodies(const void *, const void *); /* by name, for qsort and bsearch */

#endif

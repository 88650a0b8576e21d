/* The YAML reader's generator sections: chains, rigid chains, nets and meshes (docs/input.md). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/yamlimpl.h"

static const char *const chain_keys[]       = {"name", "count", "mass", "length", "start", "direction", NULL};
static const char *const rigid_chain_keys[] = {"name",  "count",     "mass",  "inertia", "length",
                                               "start", "direction", "joint", "axis",    NULL};
static const char *const net_keys[]       = {"name", "count", "mass", "spacing", "origin", "directions", "fixed", NULL};
static const char *const net_fixed_keys[] = {"i", "j", NULL};
static const char *const mesh_keys[] = {"name",        "file",        "line_density", "node_mass", "fixed", "scale",
                                        "orientation", "translation", "beam",         "pinned",    "load",  NULL};
static PetscErrorCode    AddMeshBeams(MbsYAMLReader *, yaml_node_t *, const char[], MbsYAMLGroup *, yaml_node_t *,
                                      const char[], MbsGmshMesh *, const char[], yaml_node_t *);

static const char *GroupKindName(MbsYAMLGroupKind kind)
{
  switch (kind) {
    case MBS_YAML_CHAIN: return "chain";
    case MBS_YAML_RIGID_CHAIN: return "rigid chain";
    case MBS_YAML_NET: return "net";
    case MBS_YAML_BEAM: return "beam";
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
  PetscCall(MbsYAMLLookup(r, item, ipath, "name", expected, npath, name));
  PetscCall(MbsYAMLParseName(r, *name, npath, expected, &g->name));
  g->len = strlen(g->name);
  if (!strcmp(g->name, "ground")) {
    snprintf(expected, sizeof(expected), "a %s name other than 'ground' (reserved for the fixed ground)",
             GroupKindName(kind));
    PetscCall(MbsYAMLFailNode(r, *name, npath, expected));
  }
  snprintf(expected, sizeof(expected), "a %s name not used by a body or another chain, rigid chain, net or mesh",
           GroupKindName(kind));
  listed = MbsYAMLFindListedBody(r, g->name);
  if (listed) {
    snprintf(got, sizeof(got), "'%.60s', already the name of bodies[%" PetscInt_FMT "]", g->name, listed->item);
    PetscCall(MbsYAMLFail(r, (*name)->start_mark, npath, expected, got));
  }
  {
    const MbsYAMLGroup *other = MbsYAMLFindGroup(r, g->name, g->len);

    if (other) {
      snprintf(got, sizeof(got), "'%.60s', already the name of %s[%" PetscInt_FMT "]", g->name, other->section,
               other->item);
      PetscCall(MbsYAMLFail(r, (*name)->start_mark, npath, expected, got));
    }
  }
  *group = g;
  PetscFunctionReturn(0);
}

/* Compares a name with "<prefix[0..len)>.": 0 if it starts with it. */
static int ComparePrefix(const char name[], const char prefix[], size_t len)
{
  int c = strncmp(name, prefix, len);

  return c ? c : (int)(unsigned char)name[len] - (int)'.';
}

/* Registers a group whose members are known; none of them may be a name in 'bodies' or a member of an
   earlier generator. Only a net and a group named "<net>.<i>" can share members. Only the listed bodies named
   "<group>.<...>", a range of the sorted names, and only the groups named like the group or like its members are
   looked at, so that a model of many generators and bodies loads in time proportional to its size. */
static PetscErrorCode RegisterGroup(MbsYAMLReader *r, MbsYAMLGroup *g, yaml_node_t *name, const char npath[])
{
  char                expected[160], got[MBS_YAML_GOT_LEN + 160];
  const MbsYAMLBody  *clashing = NULL;
  const MbsYAMLGroup *other = NULL, *net = NULL, *single = NULL;
  PetscInt            lo = 0, hi = r->nbodies;

  PetscFunctionBegin;
  MbsYAMLGroupTablesAdd(r, r->ngroups++);
  while (lo < hi) {
    const PetscInt mid = lo + (hi - lo) / 2;

    if (ComparePrefix(r->sorted[mid]->name, g->name, g->len) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (PetscInt k = lo; k < r->nbodies && !ComparePrefix(r->sorted[k]->name, g->name, g->len); k++) {
    MbsYAMLGroup *clash;
    PetscInt      body;

    MbsYAMLFindGroupMember(r, r->sorted[k]->name, &clash, &body, NULL);
    if (clash == g && (!clashing || r->sorted[k]->item < clashing->item)) clashing = r->sorted[k];
  }
  if (clashing) {
    snprintf(expected, sizeof(expected), "a %s name whose bodies %s are not names in 'bodies'", GroupKindName(g->kind),
             MbsYAMLGroupMemberPattern(g->kind));
    snprintf(got, sizeof(got), "'%.60s', whose body '%.60s' is already bodies[%" PetscInt_FMT "]", g->name,
             clashing->name, clashing->item);
    PetscCall(MbsYAMLFail(r, name->start_mark, npath, expected, got));
  }
  if (g->kind == MBS_YAML_NET) {
    /* the first chain, rigid chain or mesh named "<g>.<i>" with i < nx */
    for (PetscInt k = r->prefix_head[MbsYAMLHash(g->name, g->len) & ((size_t)r->nbuckets - 1)]; k >= 0;
         k          = r->prefix_next[k]) {
      size_t   len;
      PetscInt i;

      if (MbsYAMLSplitIndex(r->groups[k].name, r->groups[k].len, &len, &i) &&
          MbsYAMLGroupNamed(g, r->groups[k].name, len) && i < g->count && (!other || &r->groups[k] < other))
        other = &r->groups[k];
    }
    net    = g;
    single = other;
  } else {
    size_t   len;
    PetscInt i;

    if (MbsYAMLSplitIndex(g->name, g->len, &len, &i)) {
      const MbsYAMLGroup *n = MbsYAMLFindGroup(r, g->name, len);

      if (n && n->kind == MBS_YAML_NET && i < n->count) other = n;
    }
    net    = other;
    single = g;
  }
  if (other) {
    snprintf(expected, sizeof(expected), "a %s name whose bodies %s are not those of another generator",
             GroupKindName(g->kind), MbsYAMLGroupMemberPattern(g->kind));
    if (g == net)
      snprintf(got, sizeof(got),
               "'%.60s', whose nodes '%.60s.<j>' are already the bodies of %s[%" PetscInt_FMT "] '%.60s'", g->name,
               single->name, other->section, other->item, other->name);
    else
      snprintf(got, sizeof(got),
               "'%.60s', whose bodies '%.60s.<%s>' are already nodes of %s[%" PetscInt_FMT "] '%.60s'", g->name,
               g->name, g->kind == MBS_YAML_MESH ? "node tag" : "i", other->section, other->item, other->name);
    PetscCall(MbsYAMLFail(r, name->start_mark, npath, expected, got));
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
  PetscCall(MbsYAMLFailNode(r, count, path, expected));
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
    PetscCall(MbsYAMLFailNode(r, node, path, expected));
  }
  PetscFunctionReturn(0);
}

/* Labels of a generator's bodies and elements start with its place in the file. */
static void GroupLabelPrefix(MbsYAMLReader *r, const MbsYAMLGroup *g, yaml_node_t *item, char prefix[], size_t size)
{
  snprintf(prefix, size, "%s:%zu:%zu: %s[%" PetscInt_FMT "] '%s'", r->file, item->start_mark.line + 1,
           item->start_mark.column + 1, g->section, g->item, g->name);
}

PetscErrorCode MbsYAMLAddChains(MbsYAMLReader *r, yaml_node_t *list, const char path[])
{
  PetscFunctionBegin;
  for (PetscInt i = 0, n = MbsYAMLSequenceLength(list); i < n; i++) {
    MbsYAMLGroup *ch;
    yaml_node_t  *item = MbsYAMLSequenceItem(r, list, i), *name, *node, *cnode;
    char ipath[MBS_YAML_PATH_LEN], npath[MBS_YAML_PATH_LEN], kpath[MBS_YAML_PATH_LEN], cpath[MBS_YAML_PATH_LEN],
      prefix[PETSC_MAX_PATH_LEN + 64], label[PETSC_MAX_PATH_LEN + 128];
    PetscReal mass = 0, length = 0, start[3] = {0, 0, 0}, direction[3] = {0, 0, 0};
    PetscInt  first_elem, end_elem;

    MbsYAMLPathIndex(ipath, path, i);
    PetscCall(MbsYAMLExpectMapping(
      r, item, ipath, "a mapping {name: ..., count: n, mass: ..., length: ..., start: [..], direction: [..]}"));
    PetscCall(MbsYAMLCheckKeys(r, item, ipath, chain_keys, ""));
    PetscCall(NewGroup(r, MBS_YAML_CHAIN, "chains", i, item, ipath, &ch, &name, npath));
    PetscCall(MbsYAMLLookup(r, item, ipath, "count", "a positive integer (number of particles)", cpath, &cnode));
    PetscCall(MbsYAMLParseInt(r, cnode, cpath, "number of particles", &ch->count));
    PetscCall(MbsYAMLLookup(r, item, ipath, "mass", "a positive number (mass of each particle in kg)", kpath, &node));
    PetscCall(MbsYAMLParseReal(r, node, kpath, MBS_YAML_POSITIVE, "mass of each particle in kg", &mass));
    PetscCall(MbsYAMLLookup(r, item, ipath, "length", "a positive number (length of each link in m)", kpath, &node));
    PetscCall(MbsYAMLParseReal(r, node, kpath, MBS_YAML_POSITIVE, "length of each link in m", &length));
    PetscCall(MbsYAMLLookup(r, item, ipath, "start", NULL, kpath, &node));
    if (node) PetscCall(MbsYAMLParseVec3(r, node, kpath, "start point in m", start));
    PetscCall(MbsYAMLLookup(r, item, ipath, "direction", "a non-zero 3-vector (direction of the chain)", kpath, &node));
    PetscCall(MbsYAMLParseNonzeroVec3(r, node, kpath, "direction of the chain", direction));
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

PetscErrorCode MbsYAMLAddRigidChains(MbsYAMLReader *r, yaml_node_t *list, const char path[])
{
  PetscFunctionBegin;
  for (PetscInt i = 0, n = MbsYAMLSequenceLength(list); i < n; i++) {
    MbsYAMLGroup *ch;
    yaml_node_t  *item = MbsYAMLSequenceItem(r, list, i), *name, *node, *axis_node, *cnode;
    char ipath[MBS_YAML_PATH_LEN], npath[MBS_YAML_PATH_LEN], kpath[MBS_YAML_PATH_LEN], apath[MBS_YAML_PATH_LEN],
      cpath[MBS_YAML_PATH_LEN], prefix[PETSC_MAX_PATH_LEN + 64], label[PETSC_MAX_PATH_LEN + 128];
    PetscReal mass = 0, length = 0, J[3] = {0, 0, 0}, start[3] = {0, 0, 0}, direction[3] = {0, 0, 0},
              axis[3] = {0, 0, 0};
    PetscInt          first_elem, end_elem;
    MbsChainJointType joint = MBS_CHAIN_JOINT_SPHERICAL;
    const char       *jname = "spherical";

    MbsYAMLPathIndex(ipath, path, i);
    PetscCall(MbsYAMLExpectMapping(
      r, item, ipath, "a mapping {name: ..., count: n, mass: ..., inertia: [..], length: ..., direction: [..], ...}"));
    PetscCall(MbsYAMLCheckKeys(r, item, ipath, rigid_chain_keys, ""));
    PetscCall(NewGroup(r, MBS_YAML_RIGID_CHAIN, "rigid_chains", i, item, ipath, &ch, &name, npath));
    PetscCall(MbsYAMLLookup(r, item, ipath, "count", "a positive integer (number of links)", cpath, &cnode));
    PetscCall(MbsYAMLParseInt(r, cnode, cpath, "number of links", &ch->count));
    PetscCall(MbsYAMLLookup(r, item, ipath, "mass", "a positive number (mass of each link in kg)", kpath, &node));
    PetscCall(MbsYAMLParseReal(r, node, kpath, MBS_YAML_POSITIVE, "mass of each link in kg", &mass));
    PetscCall(MbsYAMLLookup(
      r, item, ipath, "inertia",
      "a 3-vector (principal moments of inertia of each link about its centre of mass in kg m^2, J3 about the link "
      "axis)",
      kpath, &node));
    PetscCall(MbsYAMLParseInertia(r, node, kpath, J));
    PetscCall(MbsYAMLLookup(r, item, ipath, "length", "a positive number (length of each link in m)", kpath, &node));
    PetscCall(MbsYAMLParseReal(r, node, kpath, MBS_YAML_POSITIVE, "length of each link in m", &length));
    PetscCall(MbsYAMLLookup(r, item, ipath, "start", NULL, kpath, &node));
    if (node) PetscCall(MbsYAMLParseVec3(r, node, kpath, "start point in m", start));
    PetscCall(MbsYAMLLookup(r, item, ipath, "direction", "a non-zero 3-vector (direction of the chain)", kpath, &node));
    PetscCall(MbsYAMLParseNonzeroVec3(r, node, kpath, "direction of the chain", direction));
    PetscCall(MbsYAMLLookup(r, item, ipath, "joint", NULL, kpath, &node));
    if (node) {
      PetscCall(MbsYAMLParseString(r, node, kpath, "a joint type (spherical or revolute)", &jname));
      if (!strcmp(jname, "revolute"))
        joint = MBS_CHAIN_JOINT_REVOLUTE;
      else if (strcmp(jname, "spherical"))
        PetscCall(MbsYAMLFailNode(r, node, kpath, "a joint type (spherical or revolute)"));
    }
    PetscCall(MbsYAMLLookup(
      r, item, ipath, "axis",
      joint == MBS_CHAIN_JOINT_REVOLUTE ? "a non-zero 3-vector (hinge axis of the revolute joints, world frame)" : NULL,
      apath, &axis_node));
    if (axis_node && joint != MBS_CHAIN_JOINT_REVOLUTE)
      PetscCall(MbsYAMLFail(r, axis_node->start_mark, apath,
                            "no 'axis' (only the revolute joints of 'joint: revolute' have a hinge axis)",
                            "an axis for spherical joints"));
    if (joint == MBS_CHAIN_JOINT_REVOLUTE) {
      PetscReal c[3], nc, na, nd;

      PetscCall(MbsYAMLParseNonzeroVec3(r, axis_node, apath, "hinge axis of the revolute joints, world frame", axis));
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
        PetscCall(MbsYAMLFail(r, axis_node->start_mark, apath,
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
  if (node->type != YAML_SCALAR_NODE || node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || MbsYAMLScalarIsNull(node))
    PetscCall(MbsYAMLFailNode(r, node, path, expected));
  errno = 0;
  v     = strtoll(MbsYAMLScalarText(node), &end, 10);
  if (end == MbsYAMLScalarText(node) || *end || errno == ERANGE || v < lo || v > hi)
    PetscCall(MbsYAMLFailNode(r, node, path, expected));
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
  PetscCall(MbsYAMLExpectSequence(r, node, path, expected));
  PetscCall(PetscCalloc1(nx * ny, &marked));
  for (PetscInt k = 0; k < MbsYAMLSequenceLength(node); k++) {
    yaml_node_t   *set = MbsYAMLSequenceItem(r, node, k), *vi, *vj;
    char           spath[MBS_YAML_PATH_LEN], ipath[MBS_YAML_PATH_LEN], jpath[MBS_YAML_PATH_LEN];
    PetscInt       i = -1, j = -1, i0, i1, j0, j1;
    PetscErrorCode ierr;

    MbsYAMLPathIndex(spath, path, k);
    ierr = MbsYAMLExpectMapping(r, set, spath, "a node set {i: n, j: m}, {i: n} or {j: m}");
    if (!ierr) ierr = MbsYAMLCheckKeys(r, set, spath, net_fixed_keys, " (node indices)");
    if (!ierr) ierr = MbsYAMLLookup(r, set, spath, "i", NULL, ipath, &vi);
    if (!ierr) ierr = MbsYAMLLookup(r, set, spath, "j", NULL, jpath, &vj);
    if (!ierr && !vi && !vj)
      ierr = MbsYAMLFail(r, set->start_mark, spath, "a node set {i: n, j: m}, {i: n} or {j: m}", "neither 'i' nor 'j'");
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

PetscErrorCode MbsYAMLAddNets(MbsYAMLReader *r, yaml_node_t *list, const char path[])
{
  PetscFunctionBegin;
  for (PetscInt i = 0, n = MbsYAMLSequenceLength(list); i < n; i++) {
    MbsYAMLGroup *net;
    yaml_node_t  *item = MbsYAMLSequenceItem(r, list, i), *name, *node, *cnode;
    char ipath[MBS_YAML_PATH_LEN], npath[MBS_YAML_PATH_LEN], kpath[MBS_YAML_PATH_LEN], epath[MBS_YAML_PATH_LEN],
      cpath[MBS_YAML_PATH_LEN], prefix[PETSC_MAX_PATH_LEN + 64], label[PETSC_MAX_PATH_LEN + 128];
    PetscReal mass = 0, spacing[2] = {0, 0}, origin[3] = {0, 0, 0}, dir[2][3] = {{1, 0, 0}, {0, 1, 0}}, step[2][3],
              c[3], norm[2];
    PetscInt       nfixed = 0, *fixed = NULL, first_elem, end_elem, e;
    PetscBool     *is_fixed;
    PetscErrorCode ierr;

    MbsYAMLPathIndex(ipath, path, i);
    PetscCall(
      MbsYAMLExpectMapping(r, item, ipath, "a mapping {name: ..., count: [nx, ny], mass: ..., spacing: ..., ...}"));
    PetscCall(MbsYAMLCheckKeys(r, item, ipath, net_keys, ""));
    PetscCall(NewGroup(r, MBS_YAML_NET, "nets", i, item, ipath, &net, &name, npath));
    PetscCall(MbsYAMLLookup(r, item, ipath, "count",
                            "a sequence of two positive integers [nx, ny] (numbers of nodes along the two directions)",
                            kpath, &node));
    if (node->type != YAML_SEQUENCE_NODE || MbsYAMLSequenceLength(node) != 2)
      PetscCall(MbsYAMLFailNode(
        r, node, kpath, "a sequence of two positive integers [nx, ny] (numbers of nodes along the two directions)"));
    MbsYAMLPathIndex(epath, kpath, 0);
    PetscCall(MbsYAMLParseInt(r, MbsYAMLSequenceItem(r, node, 0), epath, "number of nodes along the first direction",
                              &net->count));
    MbsYAMLPathIndex(epath, kpath, 1);
    PetscCall(MbsYAMLParseInt(r, MbsYAMLSequenceItem(r, node, 1), epath, "number of nodes along the second direction",
                              &net->ny));
    if (net->count > PETSC_MAX_INT / net->ny) {
      char got[MBS_YAML_GOT_LEN];

      snprintf(got, sizeof(got), "%" PetscInt_FMT " x %" PetscInt_FMT " nodes", net->count, net->ny);
      PetscCall(MbsYAMLFail(r, node->start_mark, kpath,
                            "at most 2^31 - 1 nodes (PETSc is configured with 32-bit indices)", got));
    }
    PetscCall(MbsYAMLLookup(r, item, ipath, "mass", "a positive number (mass of each node in kg)", kpath, &node));
    PetscCall(MbsYAMLParseReal(r, node, kpath, MBS_YAML_POSITIVE, "mass of each node in kg", &mass));
    PetscCall(MbsYAMLLookup(r, item, ipath, "spacing",
                            "a positive number or two [da, db] (rod lengths along the two directions in m)", kpath,
                            &node));
    if (node->type == YAML_SEQUENCE_NODE) {
      if (MbsYAMLSequenceLength(node) != 2)
        PetscCall(MbsYAMLFailNode(r, node, kpath,
                                  "a positive number or two [da, db] (rod lengths along the two directions in m)"));
      for (PetscInt k = 0; k < 2; k++) {
        MbsYAMLPathIndex(epath, kpath, k);
        PetscCall(MbsYAMLParseReal(r, MbsYAMLSequenceItem(r, node, k), epath, MBS_YAML_POSITIVE, "rod length in m",
                                   &spacing[k]));
      }
    } else {
      PetscCall(MbsYAMLParseReal(r, node, kpath, MBS_YAML_POSITIVE, "rod length in m, or two [da, db]", &spacing[0]));
      spacing[1] = spacing[0];
    }
    PetscCall(MbsYAMLLookup(r, item, ipath, "origin", NULL, kpath, &node));
    if (node) PetscCall(MbsYAMLParseVec3(r, node, kpath, "position of node (0, 0) in m", origin));
    PetscCall(MbsYAMLLookup(r, item, ipath, "directions", NULL, kpath, &node));
    if (node) {
      if (node->type != YAML_SEQUENCE_NODE || MbsYAMLSequenceLength(node) != 2)
        PetscCall(MbsYAMLFailNode(
          r, node, kpath, "a sequence of two non-parallel 3-vectors [[..], [..]] (grid directions of i and j)"));
      for (PetscInt k = 0; k < 2; k++) {
        MbsYAMLPathIndex(epath, kpath, k);
        PetscCall(MbsYAMLParseNonzeroVec3(r, MbsYAMLSequenceItem(r, node, k), epath, "grid direction", dir[k]));
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
      PetscCall(MbsYAMLFail(r, node->start_mark, kpath,
                            "a sequence of two non-parallel 3-vectors [[..], [..]] (grid directions of i and j)", got));
    }
    PetscCall(MbsYAMLLookup(r, item, ipath, "count", NULL, cpath, &cnode));
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
    PetscCall(MbsYAMLLookup(r, item, ipath, "fixed", NULL, kpath, &node));
    if (node) PetscCall(ParseNetFixed(r, node, kpath, net->count, net->ny, &nfixed, &fixed));
    if (nfixed) {
      /* the fixed nodes' joints count too, as MbsModelAddNet() counts them: checked again now that they are
         known (the check above comes first, so that no list of nx x ny nodes is made for a net too large) */
      MbsModelSize added;
      char         what[160];

      PetscCall(PetscMemzero(&added, sizeof(added)));
      MbsModelSizeNet(&added, (PetscReal)net->count, (PetscReal)net->ny, (PetscReal)nfixed);
      snprintf(what, sizeof(what), "%" PetscInt_FMT " x %" PetscInt_FMT " nodes, %" PetscInt_FMT " of them fixed,",
               net->count, net->ny, nfixed);
      ierr = CheckFits(r, node, kpath, &added, what);
      if (ierr) PetscCall(PetscFree(fixed));
      PetscCall(ierr);
    }

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

/* A file named in the input (a mesh, a time table): relative paths are relative to the directory of the YAML file. */
void MbsYAMLRelativePath(MbsYAMLReader *r, const char file[], char out[], size_t size)
{
  const char *slash = strrchr(r->file, '/');

  if (file[0] == '/' || !slash)
    snprintf(out, size, "%s", file);
  else
    snprintf(out, size, "%.*s/%s", (int)(slash - r->file), r->file, file);
}

typedef struct {
  const char *name;
  PetscInt    group;
} MbsYAMLMeshGroupName;

static int CompareMeshGroupNames(const void *a, const void *b)
{
  const MbsYAMLMeshGroupName *x = (const MbsYAMLMeshGroupName *)a, *y = (const MbsYAMLMeshGroupName *)b;
  int                         c = strcmp(x->name, y->name);

  if (c) return c;
  return (x->group > y->group) - (x->group < y->group);
}

/* The range [*lo, *hi) of the sorted group names equal to 'name' (the groups in increasing order). */
static void FindMeshGroupName(const MbsYAMLMeshGroupName *sorted, PetscInt n, const char name[], PetscInt *lo,
                              PetscInt *hi)
{
  PetscInt a = 0, b = n;

  while (a < b) {
    const PetscInt mid = a + (b - a) / 2;

    if (strcmp(sorted[mid].name, name) < 0)
      a = mid + 1;
    else
      b = mid;
  }
  *lo = a;
  while (a < n && !strcmp(sorted[a].name, name)) a++;
  *hi = a;
}

/* Each name of 'fixed' is that of a physical group with nodes (several groups may have the same name). */
static PetscErrorCode CheckMeshFixedNames(MbsYAMLReader *r, yaml_node_t *node, const char path[],
                                          const MbsGmshMesh *mesh, const MbsYAMLMeshGroupName *sorted, PetscInt nsorted)
{
  char   names[256] = "";
  size_t used       = 0;

  PetscFunctionBegin;
  for (PetscInt g = 0; g < mesh->ngroups && used < sizeof(names); g++) {
    int w;

    if (!mesh->groups[g].name) continue;
    w = snprintf(names + used, sizeof(names) - used, "%s'%s'", used ? ", " : "", mesh->groups[g].name);
    if (w > 0) used += (size_t)w;
  }
  for (PetscInt k = 0; k < MbsYAMLSequenceLength(node); k++) {
    yaml_node_t *item = MbsYAMLSequenceItem(r, node, k);
    const char  *gname;
    char         kpath[MBS_YAML_PATH_LEN], expected[400], got[MBS_YAML_GOT_LEN + 64];
    PetscInt     lo, hi, nnodes = 0;

    MbsYAMLPathIndex(kpath, path, k);
    snprintf(expected, sizeof(expected), "the name of a physical group of %s (%s%s)", mesh->file,
             used ? "its named groups: " : "it has no named physical groups", names);
    PetscCall(MbsYAMLParseString(r, item, kpath, expected, &gname));
    FindMeshGroupName(sorted, nsorted, gname, &lo, &hi);
    for (PetscInt i = lo; i < hi; i++) nnodes += mesh->groups[sorted[i].group].nnodes;
    if (lo == hi) {
      snprintf(got, sizeof(got), "'%.60s', which it does not have", gname);
      PetscCall(MbsYAMLFail(r, item->start_mark, kpath, expected, got));
    }
    if (!nnodes) {
      snprintf(got, sizeof(got), "'%.60s', which has no elements in the file", gname);
      PetscCall(MbsYAMLFail(r, item->start_mark, kpath,
                            "a physical group with nodes (Gmsh saves the elements of physical groups)", got));
    }
  }
  PetscFunctionReturn(0);
}

/* 'fixed' of a mesh: names of physical groups; their nodes, each once, in the order of the names, of the
   groups and of the groups' nodes. The group names are sorted and each group is taken once, so that the time
   grows with the sizes of the list and of the mesh, not with their product. */
static PetscErrorCode ParseMeshFixed(MbsYAMLReader *r, yaml_node_t *node, const char path[], const MbsGmshMesh *mesh,
                                     PetscInt *nfixed, PetscInt **fixed)
{
  PetscBool            *marked, *taken;
  PetscInt              n = 0, nsorted = 0, *list;
  MbsYAMLMeshGroupName *sorted;
  PetscErrorCode        ierr;

  PetscFunctionBegin;
  *nfixed = 0;
  *fixed  = NULL;
  PetscCall(MbsYAMLExpectSequence(r, node, path, "a sequence of physical group names [name, ...]"));
  PetscCall(PetscMalloc1(mesh->ngroups, &sorted));
  for (PetscInt g = 0; g < mesh->ngroups; g++) {
    if (!mesh->groups[g].name) continue;
    sorted[nsorted].name    = mesh->groups[g].name;
    sorted[nsorted++].group = g;
  }
  if (nsorted) qsort(sorted, (size_t)nsorted, sizeof(*sorted), CompareMeshGroupNames);
  ierr = CheckMeshFixedNames(r, node, path, mesh, sorted, nsorted);
  if (ierr) PetscCall(PetscFree(sorted));
  PetscCall(ierr);
  PetscCall(PetscCalloc2(mesh->nnodes, &marked, mesh->ngroups, &taken));
  PetscCall(PetscMalloc1(mesh->nnodes, &list));
  for (PetscInt k = 0; k < MbsYAMLSequenceLength(node); k++) {
    PetscInt lo, hi;

    FindMeshGroupName(sorted, nsorted, MbsYAMLScalarText(MbsYAMLSequenceItem(r, node, k)), &lo, &hi);
    for (PetscInt i = lo; i < hi; i++) {
      const MbsGmshGroup *grp = &mesh->groups[sorted[i].group];

      if (taken[sorted[i].group]) continue;
      taken[sorted[i].group] = PETSC_TRUE;
      for (PetscInt l = 0; l < grp->nnodes; l++)
        if (!marked[grp->nodes[l]]) {
          marked[grp->nodes[l]] = PETSC_TRUE;
          list[n++]             = grp->nodes[l];
        }
    }
  }
  PetscCall(PetscFree2(marked, taken));
  PetscCall(PetscFree(sorted));
  *nfixed = n;
  *fixed  = list;
  PetscFunctionReturn(0);
}

/* Where a mesh goes: node x from the file is placed at translation + R (scale x) */
typedef struct {
  PetscReal scale, R[9], translation[3];
} MeshPlacement;

/* The mesh item's keys scale, orientation and translation (each optional) */
static PetscErrorCode ParseMeshPlacement(MbsYAMLReader *r, yaml_node_t *item, const char ipath[], MeshPlacement *p)
{
  yaml_node_t *node;
  char         kpath[MBS_YAML_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(PetscMemzero(p, sizeof(*p)));
  p->scale = 1;
  p->R[0] = p->R[4] = p->R[8] = 1;
  PetscCall(MbsYAMLLookup(r, item, ipath, "scale", NULL, kpath, &node));
  if (node) PetscCall(MbsYAMLParseReal(r, node, kpath, MBS_YAML_POSITIVE, "factor from mesh units to m", &p->scale));
  PetscCall(MbsYAMLLookup(r, item, ipath, "orientation", NULL, kpath, &node));
  if (node) PetscCall(MbsYAMLParseOrientation(r, node, kpath, p->R));
  PetscCall(MbsYAMLLookup(r, item, ipath, "translation", NULL, kpath, &node));
  if (node) PetscCall(MbsYAMLParseVec3(r, node, kpath, "translation in m", p->translation));
  PetscFunctionReturn(0);
}

/* The placed positions of the mesh's nodes, 3 each */
static void PlaceMeshNodes(const MbsGmshMesh *mesh, const MeshPlacement *p, PetscReal x[])
{
  for (PetscInt k = 0; k < mesh->nnodes; k++)
    for (PetscInt l = 0; l < 3; l++)
      x[3 * k + l] =
        p->translation[l] + p->scale * (p->R[3 * l] * mesh->x[3 * k] + p->R[3 * l + 1] * mesh->x[3 * k + 1] +
                                        p->R[3 * l + 2] * mesh->x[3 * k + 2]);
}

/* The mesh's members, named by node tag, registered as group g */
static PetscErrorCode RegisterMesh(MbsYAMLReader *r, MbsYAMLGroup *g, yaml_node_t *name, const char npath[],
                                   const MbsGmshMesh *mesh)
{
  PetscFunctionBegin;
  g->count = mesh->nnodes;
  PetscCall(PetscMalloc2(mesh->nnodes, &g->tags, mesh->nnodes, &g->tag_node));
  for (PetscInt k = 0; k < mesh->nnodes; k++) {
    g->tags[k]     = mesh->node_tag[k];
    g->tag_node[k] = k;
  }
  PetscCall(PetscSortIntWithArray(mesh->nnodes, g->tags, g->tag_node));
  PetscCall(RegisterGroup(r, g, name, npath));
  PetscFunctionReturn(0);
}

/* Every edge of the mesh joins two nodes at distinct positions (each becomes a rod or a beam element) */
static PetscErrorCode CheckMeshEdges(MbsYAMLReader *r, const MbsGmshMesh *mesh, const char context[])
{
  char got[MBS_YAML_GOT_LEN + 64];

  PetscFunctionBegin;
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
  PetscFunctionReturn(0);
}

/* Scale and translation may carry a node, or the length of an edge, beyond the doubles: x holds the placed nodes */
static PetscErrorCode CheckMeshPlacement(MbsYAMLReader *r, const MbsGmshMesh *mesh, const char context[],
                                         const PetscReal x[])
{
  char got[MBS_YAML_GOT_LEN + 64];

  PetscFunctionBegin;
  for (PetscInt k = 0; k < mesh->nedges; k++) {
    const PetscInt  a = mesh->edge[2 * k], b = mesh->edge[2 * k + 1];
    const PetscReal d = PetscSqrtReal(PetscSqr(x[3 * b] - x[3 * a]) + PetscSqr(x[3 * b + 1] - x[3 * a + 1]) +
                                      PetscSqr(x[3 * b + 2] - x[3 * a + 2]));

    if (d >= DBL_MIN && d <= 1e300) continue; /* a rod's length is a normal double */
    snprintf(got, sizeof(got), "nodes %" PetscInt_FMT " and %" PetscInt_FMT " %s after scale and translation",
             mesh->node_tag[a], mesh->node_tag[b],
             d < DBL_MIN ? "at the same position (to 2.2e-308)" : "beyond 1e300 apart or at infinity");
    PetscCall(FailMesh(r, context, mesh, mesh->edge_line[k],
                       "an element whose nodes lie at finite, distinct positions after 'scale' and 'translation'",
                       got));
  }
  PetscFunctionReturn(0);
}

/* One item of 'meshes' with its mesh read; the caller frees the mesh. */
static PetscErrorCode AddMesh(MbsYAMLReader *r, yaml_node_t *item, const char ipath[], MbsYAMLGroup *g,
                              yaml_node_t *name, const char npath[], MbsGmshMesh *mesh, const char context[])
{
  yaml_node_t *node;
  char         kpath[MBS_YAML_PATH_LEN], prefix[PETSC_MAX_PATH_LEN + 64], label[2 * PETSC_MAX_PATH_LEN + 128],
    got[MBS_YAML_GOT_LEN + 64];
  PetscReal      line_density = 0, node_mass = 0, *x = NULL;
  MeshPlacement  place;
  PetscInt       nfixed = 0, *fixed = NULL, first_elem, end_elem, e;
  PetscBool     *is_fixed = NULL, has_density, has_node_mass;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(MbsYAMLLookup(r, item, ipath, "beam", NULL, kpath, &node));
  if (node) { /* a network of beams (docs/beams.md) */
    PetscCall(AddMeshBeams(r, item, ipath, g, name, npath, mesh, context, node));
    PetscFunctionReturn(0);
  }
  PetscCall(MbsYAMLLookup(r, item, ipath, "pinned", NULL, kpath, &node));
  if (node)
    PetscCall(MbsYAMLFailNode(r, node, kpath,
                              "no 'pinned' for a mesh of rods (its 'fixed' nodes are pinned; beams take 'pinned')"));
  PetscCall(MbsYAMLLookup(r, item, ipath, "load", NULL, kpath, &node));
  if (node) PetscCall(MbsYAMLFailNode(r, node, kpath, "no 'load' for a mesh of rods (a load per length is for beams)"));
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
  PetscCall(CheckMeshEdges(r, mesh, context));
  PetscCall(MbsYAMLLookup(r, item, ipath, "line_density", NULL, kpath, &node));
  has_density = (PetscBool) !!node;
  if (node)
    PetscCall(
      MbsYAMLParseReal(r, node, kpath, MBS_YAML_POSITIVE, "mass per length of the rods in kg/m", &line_density));
  PetscCall(MbsYAMLLookup(r, item, ipath, "node_mass", NULL, kpath, &node));
  has_node_mass = (PetscBool) !!node;
  if (node) PetscCall(MbsYAMLParseReal(r, node, kpath, MBS_YAML_POSITIVE, "mass of each node in kg", &node_mass));
  if (!has_density && !has_node_mass)
    PetscCall(MbsYAMLFail(r, item->start_mark, ipath, "a mapping with 'line_density' (kg/m), 'node_mass' (kg) or both",
                          "neither"));
  PetscCall(ParseMeshPlacement(r, item, ipath, &place));
  PetscCall(RegisterMesh(r, g, name, npath, mesh));
  PetscCall(MbsYAMLLookup(r, item, ipath, "fixed", NULL, kpath, &node));
  if (node) PetscCall(ParseMeshFixed(r, node, kpath, mesh, &nfixed, &fixed));

  {
    MbsModelSize added;
    yaml_node_t *file;
    char         fpath[MBS_YAML_PATH_LEN], what[PETSC_MAX_PATH_LEN + 96];

    PetscCall(PetscMemzero(&added, sizeof(added)));
    MbsModelSizeRodNetwork(&added, (PetscReal)mesh->nnodes, (PetscReal)mesh->nedges, (PetscReal)nfixed);
    PetscCall(MbsYAMLLookup(r, item, ipath, "file", "a Gmsh mesh file", fpath, &file));
    snprintf(what, sizeof(what), "the %" PetscInt_FMT " nodes and %" PetscInt_FMT " edges of %s", mesh->nnodes,
             mesh->nedges, mesh->file);
    ierr = CheckFits(r, file, fpath, &added, what);
    if (ierr) PetscCall(PetscFree(fixed));
    PetscCall(ierr);
  }
  PetscCall(PetscMalloc1(3 * mesh->nnodes, &x));
  PlaceMeshNodes(mesh, &place, x);
  ierr = CheckMeshPlacement(r, mesh, context, x);
  if (ierr) {
    PetscCall(PetscFree(x));
    PetscCall(PetscFree(fixed));
  }
  PetscCall(ierr);
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

PetscErrorCode MbsYAMLAddMeshes(MbsYAMLReader *r, yaml_node_t *list, const char path[])
{
  PetscFunctionBegin;
  for (PetscInt i = 0, n = MbsYAMLSequenceLength(list); i < n; i++) {
    MbsYAMLGroup *g;
    MbsGmshMesh   mesh;
    yaml_node_t  *item = MbsYAMLSequenceItem(r, list, i), *name, *node;
    char ipath[MBS_YAML_PATH_LEN], npath[MBS_YAML_PATH_LEN], fpath[MBS_YAML_PATH_LEN], file[PETSC_MAX_PATH_LEN],
      context[PETSC_MAX_PATH_LEN + MBS_YAML_PATH_LEN + 64];
    const char    *fname;
    PetscErrorCode ierr;

    MbsYAMLPathIndex(ipath, path, i);
    PetscCall(MbsYAMLExpectMapping(r, item, ipath, "a mapping {name: ..., file: mesh.msh, line_density: ..., ...}"));
    PetscCall(MbsYAMLCheckKeys(r, item, ipath, mesh_keys, ""));
    PetscCall(NewGroup(r, MBS_YAML_MESH, "meshes", i, item, ipath, &g, &name, npath));
    PetscCall(MbsYAMLLookup(r, item, ipath, "file",
                            "a Gmsh mesh file (.msh, ASCII format 4.1 or 2.2; relative to the directory of this file)",
                            fpath, &node));
    PetscCall(MbsYAMLParseString(
      r, node, fpath, "a Gmsh mesh file (.msh, ASCII format 4.1 or 2.2; relative to the directory of this file)",
      &fname));
    MbsYAMLRelativePath(r, fname, file, sizeof(file));
    snprintf(context, sizeof(context), "%s:%zu:%zu: key '%s'", r->file, node->start_mark.line + 1,
             node->start_mark.column + 1, fpath);
    PetscCall(MbsGmshRead(r->comm, file, context, &mesh));
    ierr = AddMesh(r, item, ipath, g, name, npath, &mesh, context);
    PetscCall(MbsGmshMeshDestroy(&mesh));
    PetscCall(ierr);
  }
  PetscFunctionReturn(0);
}

static const char *const beam_keys[] = {
  "name", "points", "elements", "EA",   "GA1", "GA2", "EI1", "EI2",          "GJ", "rhoA",     "rhoI1", "rhoI2", "E",
  "G",    "nu",     "density",  "area", "I1",  "I2",  "J",   "shear_factor", "d1", "supports", "load",  NULL};
static const char *const beam_load_keys[] = {"force", "time", NULL};

/* A load per unit length on a beam's nodes, `load: {force: [qx, qy, qz], time: ...}` (N/m, world frame): a point load
   q l_k on node k (MbsModelAddPointLoad()), l_k the length the node stands for (share[k]); labelled after prefix */
static PetscErrorCode AddBeamLoad(MbsYAMLReader *r, yaml_node_t *load, const char lpath[], PetscInt first,
                                  PetscInt nnodes, const PetscReal share[], PetscReal most, const char prefix[])
{
  yaml_node_t    *node, *tnode;
  char            kpath[MBS_YAML_PATH_LEN], label[PETSC_MAX_PATH_LEN + 128];
  PetscReal       q[3];
  MbsTimeFunction time;
  const PetscReal X[3] = {0, 0, 0};

  PetscFunctionBegin;
  PetscCall(PetscMemzero(&time, sizeof(time)));
  PetscCall(MbsYAMLExpectMapping(r, load, lpath, "a mapping {force: [qx, qy, qz] (N/m), time: ...}"));
  PetscCall(MbsYAMLCheckKeys(r, load, lpath, beam_load_keys, ""));
  PetscCall(
    MbsYAMLLookup(r, load, lpath, "force", "a 3-vector (the load per unit length in N/m, world frame)", kpath, &node));
  PetscCall(MbsYAMLParseVec3(r, node, kpath, "the load per unit length in N/m, world frame", q));
  /* the nodes' forces checked here, on every rank: built in two passes only the holders of a node know its share */
  if (PetscIsInfOrNanReal(q[0] * most) || PetscIsInfOrNanReal(q[1] * most) || PetscIsInfOrNanReal(q[2] * most)) {
    char expected[160];
    snprintf(expected, sizeof(expected),
             "a load whose force on a node (times the length it stands for, up to %g m) is finite", (double)most);
    PetscCall(MbsYAMLFailNode(r, node, kpath, expected));
  }
  PetscCall(MbsYAMLLookup(r, load, lpath, "time", NULL, kpath, &tnode));
  if (tnode) PetscCall(MbsYAMLParseTimeFunction(r, tnode, kpath, &time));
  for (PetscInt k = 0; k < nnodes; k++) {
    const PetscReal F[3] = {q[0] * share[k], q[1] * share[k], q[2] * share[k]};
    PetscInt        elem; /* every node has a neighbour at a distance: share[k] > 0 where the node is held */
    PetscCall(MbsModelAddPointLoad(r->model, first + k, X, F, tnode ? &time : NULL, &elem));
    snprintf(label, sizeof(label), "%s distributed load on node %" PetscInt_FMT, prefix, k);
    PetscCall(MbsModelSetElementLabel(r->model, elem, label));
  }
  PetscFunctionReturn(0);
}

/* A positive number under key, required (expected given) or optional (*node NULL when absent) */
static PetscErrorCode BeamReal(MbsYAMLReader *r, yaml_node_t *item, const char ipath[], const char key[],
                               const char quantity[], PetscBool required, PetscReal *v, yaml_node_t **node)
{
  char         kpath[MBS_YAML_PATH_LEN], expected[192];
  yaml_node_t *n;

  PetscFunctionBegin;
  snprintf(expected, sizeof(expected), "a positive number (%s)", quantity);
  PetscCall(MbsYAMLLookup(r, item, ipath, key, required ? expected : NULL, kpath, &n));
  if (n) PetscCall(MbsYAMLParseReal(r, n, kpath, MBS_YAML_POSITIVE, quantity, v));
  if (node) *node = n;
  PetscFunctionReturn(0);
}

/* The section of beams[i]: the stiffnesses and inertias themselves, or a material (E, G or nu, density) and a section
   (area, I1, I2, J, shear_factor); not both */
static PetscErrorCode ParseBeamSection(MbsYAMLReader *r, yaml_node_t *item, const char ipath[], MbsBeamSection *sec)
{
  static const char *const direct[]     = {"EA", "GA1", "GA2", "EI1", "EI2", "GJ", "rhoA", "rhoI1", "rhoI2"};
  static const char *const material[]   = {"E", "G", "nu", "density", "area", "I1", "I2", "J", "shear_factor"};
  yaml_node_t             *first_direct = NULL, *first_material = NULL, *n;
  const char              *direct_key = NULL, *material_key = NULL;
  char                     kpath[MBS_YAML_PATH_LEN];

  PetscFunctionBegin;
  for (int k = 0; k < 9; k++) {
    PetscCall(MbsYAMLLookup(r, item, ipath, direct[k], NULL, kpath, &n));
    if (n && !first_direct) first_direct = n, direct_key = direct[k];
    PetscCall(MbsYAMLLookup(r, item, ipath, material[k], NULL, kpath, &n));
    if (n && !first_material) first_material = n, material_key = material[k];
  }
  if (first_direct && first_material) {
    char got[MBS_YAML_GOT_LEN + 64];

    MbsYAMLPathKey(kpath, ipath, material_key);
    snprintf(got, sizeof(got), "'%s' together with '%s'", material_key, direct_key);
    PetscCall(MbsYAMLFail(r, first_material->start_mark, kpath,
                          "either the stiffnesses and inertias (EA, GA1, GA2, EI1, EI2, GJ, rhoA, rhoI1, rhoI2) or a "
                          "material and section (E, G or nu, density, area, I1, I2, J, shear_factor), not both",
                          got));
  }
  if (!first_material) {
    PetscCall(BeamReal(r, item, ipath, "EA", "axial stiffness in N", PETSC_TRUE, &sec->EA, NULL));
    PetscCall(BeamReal(r, item, ipath, "GA1", "shear stiffness along d1 in N", PETSC_TRUE, &sec->GA1, NULL));
    PetscCall(BeamReal(r, item, ipath, "GA2", "shear stiffness along d2 in N", PETSC_TRUE, &sec->GA2, NULL));
    PetscCall(BeamReal(r, item, ipath, "EI1", "bending stiffness about d1 in N m^2", PETSC_TRUE, &sec->EI1, NULL));
    PetscCall(BeamReal(r, item, ipath, "EI2", "bending stiffness about d2 in N m^2", PETSC_TRUE, &sec->EI2, NULL));
    PetscCall(BeamReal(r, item, ipath, "GJ", "torsional stiffness in N m^2", PETSC_TRUE, &sec->GJ, NULL));
    PetscCall(BeamReal(r, item, ipath, "rhoA", "mass per unit length in kg/m", PETSC_TRUE, &sec->rhoA, NULL));
    PetscCall(BeamReal(r, item, ipath, "rhoI1", "rotary inertia per unit length about d1 in kg m", PETSC_TRUE,
                       &sec->rhoI1, NULL));
    PetscCall(BeamReal(r, item, ipath, "rhoI2", "rotary inertia per unit length about d2 in kg m", PETSC_TRUE,
                       &sec->rhoI2, NULL));
  } else {
    PetscReal    E = 0, G = 0, nu = 0, rho = 0, A = 0, I1 = 0, I2 = 0, J = 0, kappa = 1;
    yaml_node_t *gnode, *nunode, *jnode;

    PetscCall(BeamReal(r, item, ipath, "E", "Young's modulus in Pa", PETSC_TRUE, &E, NULL));
    PetscCall(BeamReal(r, item, ipath, "G", "shear modulus in Pa", PETSC_FALSE, &G, &gnode));
    PetscCall(MbsYAMLLookup(r, item, ipath, "nu", NULL, kpath, &nunode));
    if (gnode && nunode)
      PetscCall(MbsYAMLFail(r, nunode->start_mark, kpath, "either G or nu (Poisson's ratio), not both", "both"));
    if (nunode) {
      PetscCall(MbsYAMLParseFinite(r, nunode, kpath, "Poisson's ratio in (-1, 0.5]", &nu));
      if (!(nu > -1 && nu <= 0.5)) PetscCall(MbsYAMLFailNode(r, nunode, kpath, "Poisson's ratio in (-1, 0.5]"));
      G = E / (2 * (1 + nu));
    } else if (!gnode)
      PetscCall(MbsYAMLFail(r, item->start_mark, ipath, "a shear modulus 'G' or a Poisson's ratio 'nu'",
                            "neither (the key is missing)"));
    PetscCall(BeamReal(r, item, ipath, "density", "density in kg/m^3", PETSC_TRUE, &rho, NULL));
    PetscCall(BeamReal(r, item, ipath, "area", "cross-section area in m^2", PETSC_TRUE, &A, NULL));
    PetscCall(BeamReal(r, item, ipath, "I1", "second moment of area about d1 in m^4", PETSC_TRUE, &I1, NULL));
    PetscCall(BeamReal(r, item, ipath, "I2", "second moment of area about d2 in m^4", PETSC_TRUE, &I2, NULL));
    PetscCall(BeamReal(r, item, ipath, "J", "torsion constant in m^4 (default I1 + I2)", PETSC_FALSE, &J, &jnode));
    if (!jnode) J = I1 + I2;
    PetscCall(
      BeamReal(r, item, ipath, "shear_factor", "shear correction factor (default 1)", PETSC_FALSE, &kappa, NULL));
    sec->EA  = E * A;
    sec->GA1 = sec->GA2 = kappa * G * A;
    sec->EI1            = E * I1;
    sec->EI2            = E * I2;
    sec->GJ             = G * J;
    sec->rhoA           = rho * A;
    sec->rhoI1          = rho * I1;
    sec->rhoI2          = rho * I2;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode MbsYAMLAddBeams(MbsYAMLReader *r, yaml_node_t *list, const char path[])
{
  PetscFunctionBegin;
  for (PetscInt i = 0, n = MbsYAMLSequenceLength(list); i < n; i++) {
    MbsYAMLGroup *g;
    yaml_node_t  *item = MbsYAMLSequenceItem(r, list, i), *name, *pnode, *enode, *node, *d1node;
    char ipath[MBS_YAML_PATH_LEN], npath[MBS_YAML_PATH_LEN], ppath[MBS_YAML_PATH_LEN], epath[MBS_YAML_PATH_LEN],
      kpath[MBS_YAML_PATH_LEN], dpath[MBS_YAML_PATH_LEN], prefix[PETSC_MAX_PATH_LEN + 64],
      label[PETSC_MAX_PATH_LEN + 128];
    PetscInt                 npoints, nelem, first_elem, end_elem, ncorners = 0, nnodes;
    PetscReal               *pts, d1[3] = {0, 0, 0}, total = 0, longest = 0, p[3][3], first[3], t0[3];
    MbsBeamSection           sec;
    PetscErrorCode           ierr;
    MbsBeamSupport           support[2] = {MBS_BEAM_FREE, MBS_BEAM_FREE};
    static const char *const expected_points =
      "a sequence of at least two points [[x, y, z], ...] (the beam's centre line, a polyline, in m)";

    MbsYAMLPathIndex(ipath, path, i);
    PetscCall(MbsYAMLExpectMapping(
      r, item, ipath, "a mapping {name: ..., points: [[..], [..]], elements: n, EA: ..., ..., supports: [.., ..]}"));
    PetscCall(MbsYAMLCheckKeys(r, item, ipath, beam_keys, ""));
    PetscCall(NewGroup(r, MBS_YAML_BEAM, "beams", i, item, ipath, &g, &name, npath));
    PetscCall(MbsYAMLLookup(r, item, ipath, "points", expected_points, ppath, &pnode));
    if (pnode->type != YAML_SEQUENCE_NODE || MbsYAMLSequenceLength(pnode) < 2)
      PetscCall(MbsYAMLFailNode(r, pnode, ppath, expected_points));
    npoints = MbsYAMLSequenceLength(pnode);
    /* the points are checked first, three at a time (nothing is allocated until every key has been read) */
    for (PetscInt k = 0; k < npoints; k++) {
      char             xpath[MBS_YAML_PATH_LEN];
      PetscReal *const x = p[k % 3], *const xm1 = p[(k + 2) % 3], *const xm2 = p[(k + 1) % 3];

      MbsYAMLPathIndex(xpath, ppath, k);
      PetscCall(MbsYAMLParseVec3(r, MbsYAMLSequenceItem(r, pnode, k), xpath, "a point of the centre line in m", x));
      if (k == 0)
        for (int j = 0; j < 3; j++) first[j] = x[j];
      if (k == 1)
        for (int j = 0; j < 3; j++) t0[j] = x[j] - first[j];
      if (k) {
        PetscReal d[3], l, prev[3], c = 1;

        for (int j = 0; j < 3; j++) d[j] = x[j] - xm1[j];
        l = PetscSqrtReal(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        if (!(l > 0 && PetscIsNormalReal(l)))
          PetscCall(MbsYAMLFailNode(r, MbsYAMLSequenceItem(r, pnode, k), xpath,
                                    "a point other than the one before it (a beam segment of non-zero length)"));
        if (k >= 2) {
          for (int j = 0; j < 3; j++) prev[j] = xm1[j] - xm2[j];
          c = (prev[0] * d[0] + prev[1] * d[1] + prev[2] * d[2]) /
              (l * PetscSqrtReal(prev[0] * prev[0] + prev[1] * prev[1] + prev[2] * prev[2]));
        }
        if (!(c > -1.0 + 1e-8))
          PetscCall(MbsYAMLFailNode(r, MbsYAMLSequenceItem(r, pnode, k), xpath,
                                    "a point that does not turn the polyline back on itself"));
        if (c < 1.0 - 1e-12) ncorners++; /* a rigid corner: two nodes welded (MbsModelAddBeam()) */
        total += l;
        longest = PetscMax(longest, l); /* a node stands for at most this: half of each of its two elements */
      }
    }
    PetscCall(MbsYAMLLookup(r, item, ipath, "elements", "a positive integer (number of beam elements)", epath, &enode));
    PetscCall(MbsYAMLParseInt(r, enode, epath, "number of beam elements", &nelem));
    if (nelem < npoints - 1) {
      char expected[160];

      snprintf(expected, sizeof(expected), "at least %" PetscInt_FMT " elements (one per segment of 'points')",
               npoints - 1);
      PetscCall(MbsYAMLFailNode(r, enode, epath, expected));
    }
    PetscCall(ParseBeamSection(r, item, ipath, &sec));
    PetscCall(MbsYAMLLookup(r, item, ipath, "d1", NULL, dpath, &d1node));
    if (d1node) {
      PetscReal t[3], c[3];

      PetscCall(MbsYAMLParseNonzeroVec3(r, d1node, dpath, "the section's first principal axis, world frame", d1));
      for (int j = 0; j < 3; j++) t[j] = t0[j];
      c[0] = d1[1] * t[2] - d1[2] * t[1];
      c[1] = d1[2] * t[0] - d1[0] * t[2];
      c[2] = d1[0] * t[1] - d1[1] * t[0];
      if (!(PetscSqrtReal(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) >
            1e-8 * PetscSqrtReal(d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2]) *
              PetscSqrtReal(t[0] * t[0] + t[1] * t[1] + t[2] * t[2])))
        PetscCall(MbsYAMLFailNode(r, d1node, dpath, "an axis across the beam's first segment, not along it"));
    }
    PetscCall(MbsYAMLLookup(r, item, ipath, "supports", NULL, kpath, &node));
    if (node) {
      static const char *const expected_supports =
        "a sequence of two supports [start, end], each free, pinned or clamped";
      if (node->type != YAML_SEQUENCE_NODE || MbsYAMLSequenceLength(node) != 2)
        PetscCall(MbsYAMLFailNode(r, node, kpath, expected_supports));
      for (PetscInt k = 0; k < 2; k++) {
        char         spath[MBS_YAML_PATH_LEN];
        const char  *s;
        yaml_node_t *sn = MbsYAMLSequenceItem(r, node, k);

        MbsYAMLPathIndex(spath, kpath, k);
        PetscCall(MbsYAMLParseString(r, sn, spath, "a support: free, pinned or clamped", &s));
        if (!strcmp(s, "free"))
          support[k] = MBS_BEAM_FREE;
        else if (!strcmp(s, "pinned"))
          support[k] = MBS_BEAM_PINNED;
        else if (!strcmp(s, "clamped"))
          support[k] = MBS_BEAM_CLAMPED;
        else
          PetscCall(MbsYAMLFailNode(r, sn, spath, "a support: free, pinned or clamped"));
      }
    }
    PetscCall(CheckExtent(r, pnode, ppath, first, total, "beam", "|first point| + length"));
    {
      MbsModelSize added;
      char         what[64];

      PetscCall(PetscMemzero(&added, sizeof(added)));
      MbsModelSizeBeam(&added, (PetscReal)(nelem + npoints - 1), (PetscReal)nelem, (PetscReal)(npoints - 2), 12);
      snprintf(what, sizeof(what), "%" PetscInt_FMT " beam elements", nelem);
      PetscCall(CheckFits(r, enode, epath, &added, what));
    }
    g->count = nelem + 1 + ncorners;
    PetscCall(RegisterGroup(r, g, name, npath));
    PetscCall(MbsModelGetNumElements(r->model, &first_elem));
    PetscCall(PetscMalloc1(3 * npoints, &pts));
    for (PetscInt k = 0; k < npoints; k++) { /* read and checked above */
      char xpath[MBS_YAML_PATH_LEN];
      MbsYAMLPathIndex(xpath, ppath, k);
      ierr =
        MbsYAMLParseVec3(r, MbsYAMLSequenceItem(r, pnode, k), xpath, "a point of the centre line in m", pts + 3 * k);
      if (ierr) PetscCall(PetscFree(pts));
      PetscCall(ierr);
    }
    ierr = MbsModelAddBeam(r->model, g->name, npoints, pts, nelem, &sec, d1node ? d1 : NULL, support[0], support[1],
                           &g->first_body, &nnodes);
    PetscCall(PetscFree(pts));
    PetscCall(ierr);
    PetscCall(MbsModelGetNumElements(r->model, &end_elem));
    PetscCheck(nnodes == g->count, r->comm, PETSC_ERR_PLIB,
               "MbsModelAddBeam() made %" PetscInt_FMT " nodes, the reader counted %" PetscInt_FMT, nnodes, g->count);
    GroupLabelPrefix(r, g, item, prefix, sizeof(prefix));
    for (PetscInt k = 0; k < g->count; k++) {
      snprintf(label, sizeof(label), "%s node %" PetscInt_FMT, prefix, k);
      PetscCall(MbsModelSetBodyLabel(r->model, g->first_body + k, label));
    }
    { /* the elements in the order MbsModelAddBeam() documents; a node's own constraints keep the body's label */
      static const char *const held[]   = {"free", "pinned", "clamped"};
      const PetscReal          X0[3]    = {0, 0, 0};
      PetscReal                xprev[3] = {0, 0, 0}, x[3];
      PetscInt                 e        = first_elem;
      for (PetscInt k = 0; k < g->count; k++) {
        PetscBool stored; /* built in two passes, the rank that stores an element holds its nodes; others skip it */
        PetscCall(MbsModelHoldsBody(r->model, g->first_body + k, &stored));
        if (stored)
          PetscCall(MbsModelGetPointPosition(r->model, g->first_body + k, X0, x));
        else
          x[0] = x[1] = x[2] = PETSC_MAX_REAL;
        e++; /* the node's director constraints */
        if (k == 0 && support[0] != MBS_BEAM_FREE) {
          snprintf(label, sizeof(label), "%s start (%s)", prefix, held[support[0]]);
          if (e < end_elem) PetscCall(MbsModelSetElementLabel(r->model, e, label));
          e++;
        } else if (k > 0) {
          if (x[0] == xprev[0] && x[1] == xprev[1] && x[2] == xprev[2])
            snprintf(label, sizeof(label), "%s corner weld of nodes %" PetscInt_FMT " and %" PetscInt_FMT, prefix,
                     k - 1, k);
          else
            snprintf(label, sizeof(label), "%s element of nodes %" PetscInt_FMT " and %" PetscInt_FMT, prefix, k - 1,
                     k);
          if (e < end_elem) PetscCall(MbsModelSetElementLabel(r->model, e, label));
          e++;
        }
        for (int j = 0; j < 3; j++) xprev[j] = x[j];
      }
      if (support[1] != MBS_BEAM_FREE) {
        snprintf(label, sizeof(label), "%s end (%s)", prefix, held[support[1]]);
        if (e < end_elem) PetscCall(MbsModelSetElementLabel(r->model, e, label));
        e++;
      }
      PetscCheck(e == end_elem, r->comm, PETSC_ERR_PLIB,
                 "MbsModelAddBeam() added %" PetscInt_FMT " elements, the labels expect %" PetscInt_FMT,
                 end_elem - first_elem, e - first_elem);
    }
    PetscCall(MbsYAMLLookup(r, item, ipath, "load", NULL, kpath, &node));
    if (node) { /* node k stands for half the distance to each neighbour along the beam (0 between corner nodes) */
      PetscReal      *share, (*x)[3];
      PetscBool      *held;
      const PetscReal X0[3] = {0, 0, 0};
      PetscCall(PetscMalloc3(g->count, &share, g->count, &x, g->count, &held));
      for (PetscInt k = 0; k < g->count; k++) {
        PetscCall(MbsModelHoldsBody(r->model, g->first_body + k, &held[k]));
        if (held[k]) PetscCall(MbsModelGetPointPosition(r->model, g->first_body + k, X0, x[k]));
      }
      for (PetscInt k = 0; k < g->count; k++) { /* built in two passes, node k's owner holds its neighbours */
        share[k] = 0;
        for (PetscInt n = k - 1; n <= k + 1; n += 2)
          if (n >= 0 && n < g->count && held[k] && held[n])
            share[k] += 0.5 * PetscSqrtReal(PetscSqr(x[n][0] - x[k][0]) + PetscSqr(x[n][1] - x[k][1]) +
                                            PetscSqr(x[n][2] - x[k][2]));
      }
      ierr = AddBeamLoad(r, node, kpath, g->first_body, g->count, share, longest, prefix);
      PetscCall(PetscFree3(share, x, held));
      PetscCall(ierr);
    }
  }
  PetscFunctionReturn(0);
}

/* A mesh of lines as a network of beams: mesh item keys 'beam' (the section, as in 'beams', and d1), 'fixed' (groups
   clamped) and 'pinned' (groups pinned); MbsModelAddBeamNetwork() */
static PetscErrorCode AddMeshBeams(MbsYAMLReader *r, yaml_node_t *item, const char ipath[], MbsYAMLGroup *g,
                                   yaml_node_t *name, const char npath[], MbsGmshMesh *mesh, const char context[],
                                   yaml_node_t *beam)
{
  static const char *const section_keys[] = {
    "EA", "GA1", "GA2",     "EI1",  "EI2", "GJ", "rhoA", "rhoI1",        "rhoI2", "E",
    "G",  "nu",  "density", "area", "I1",  "I2", "J",    "shear_factor", "d1",    NULL};
  yaml_node_t *node, *d1node;
  char bpath[MBS_YAML_PATH_LEN], kpath[MBS_YAML_PATH_LEN], got[MBS_YAML_GOT_LEN + 64], prefix[PETSC_MAX_PATH_LEN + 64],
    label[2 * PETSC_MAX_PATH_LEN + 128];
  PetscReal      d1[3] = {0, 0, 0}, *x;
  MeshPlacement  place;
  PetscInt       nclamped = 0, *clamped = NULL, npinned = 0, *pinned = NULL, first_elem, end_elem;
  MbsBeamSection sec;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  MbsYAMLPathKey(bpath, ipath, "beam");
  PetscCall(MbsYAMLExpectMapping(r, beam, bpath, "a mapping of the beams' section {EA: .., ..} or {E: .., ..}"));
  PetscCall(MbsYAMLCheckKeys(r, beam, bpath, section_keys, ""));
  PetscCall(ParseBeamSection(r, beam, bpath, &sec));
  PetscCall(MbsYAMLLookup(r, beam, bpath, "d1", NULL, kpath, &d1node));
  if (d1node)
    PetscCall(MbsYAMLParseNonzeroVec3(r, d1node, kpath, "the sections' first principal axis, world frame", d1));
  for (int k = 0; k < 2; k++) {
    const char *key = k ? "node_mass" : "line_density";
    PetscCall(MbsYAMLLookup(r, item, ipath, key, NULL, kpath, &node));
    if (node)
      PetscCall(MbsYAMLFailNode(r, node, kpath, "no mass keys for beams (their mass comes from the section, 'beam')"));
  }
  if (mesh->nsurface)
    PetscCall(FailMesh(r, context, mesh, mesh->surface_line,
                       "only line elements (type 1) for beams ('beam' makes each line a beam element)",
                       "a triangle or quadrangle"));
  for (PetscInt k = 0; k < mesh->nnodes; k++) {
    if (mesh->node_edges[k]) continue;
    snprintf(got, sizeof(got), "node %" PetscInt_FMT " on none", mesh->node_tag[k]);
    PetscCall(FailMesh(r, context, mesh, mesh->node_line[k], "every node on a line element (a beam's node)", got));
  }
  PetscCall(CheckMeshEdges(r, mesh, context));
  PetscCall(ParseMeshPlacement(r, item, ipath, &place));
  g->rigid = PETSC_TRUE;
  PetscCall(RegisterMesh(r, g, name, npath, mesh));
  PetscCall(MbsYAMLLookup(r, item, ipath, "fixed", NULL, kpath, &node));
  if (node) PetscCall(ParseMeshFixed(r, node, kpath, mesh, &nclamped, &clamped));
  PetscCall(MbsYAMLLookup(r, item, ipath, "pinned", NULL, kpath, &node));
  if (node) {
    PetscBool *is_clamped;
    ierr = ParseMeshFixed(r, node, kpath, mesh, &npinned, &pinned);
    if (ierr) PetscCall(PetscFree(clamped));
    PetscCall(ierr);
    PetscCall(PetscCalloc1(mesh->nnodes, &is_clamped));
    for (PetscInt k = 0; k < nclamped; k++) is_clamped[clamped[k]] = PETSC_TRUE;
    for (PetscInt k = 0; k < npinned; k++)
      if (is_clamped[pinned[k]]) {
        snprintf(got, sizeof(got), "node %" PetscInt_FMT " in both", mesh->node_tag[pinned[k]]);
        PetscCall(PetscFree(is_clamped));
        PetscCall(PetscFree(clamped));
        PetscCall(PetscFree(pinned));
        PetscCall(MbsYAMLFail(r, node->start_mark, kpath,
                              "groups whose nodes are not also in 'fixed' (a node is clamped or pinned)", got));
      }
    PetscCall(PetscFree(is_clamped));
  }
  PetscCall(PetscMalloc1(3 * mesh->nnodes, &x));
  PlaceMeshNodes(mesh, &place, x);
  {
    MbsModelSize added;
    yaml_node_t *file;
    char         fpath[MBS_YAML_PATH_LEN], what[PETSC_MAX_PATH_LEN + 96];

    PetscCall(PetscMemzero(&added, sizeof(added)));
    MbsModelSizeBeam(&added, (PetscReal)mesh->nnodes, (PetscReal)mesh->nedges, 0,
                     (PetscReal)(6 * nclamped + 3 * npinned));
    PetscCall(MbsYAMLLookup(r, item, ipath, "file", "a Gmsh mesh file", fpath, &file));
    snprintf(what, sizeof(what), "the %" PetscInt_FMT " nodes and %" PetscInt_FMT " beams of %s", mesh->nnodes,
             mesh->nedges, mesh->file);
    ierr = CheckFits(r, file, fpath, &added, what);
    if (!ierr) ierr = CheckMeshPlacement(r, mesh, context, x);
    if (ierr) {
      PetscCall(PetscFree(x));
      PetscCall(PetscFree(clamped));
      PetscCall(PetscFree(pinned));
    }
    PetscCall(ierr);
  }
  PetscCall(MbsModelGetNumElements(r->model, &first_elem));
  ierr = MbsModelAddBeamNetwork(r->model, g->name, mesh->nnodes, x, mesh->node_tag, mesh->nedges, mesh->edge, &sec,
                                d1node ? d1 : NULL, nclamped, clamped, npinned, pinned, &g->first_body);
  PetscCall(PetscFree(x));
  PetscCall(PetscFree(clamped));
  PetscCall(PetscFree(pinned));
  PetscCall(ierr);
  PetscCall(MbsModelGetNumElements(r->model, &end_elem));
  GroupLabelPrefix(r, g, item, prefix, sizeof(prefix));
  for (PetscInt k = 0; k < mesh->nnodes; k++) {
    snprintf(label, sizeof(label), "%s node %" PetscInt_FMT " (%s:%" PetscInt_FMT ")", prefix, mesh->node_tag[k],
             mesh->file, mesh->node_line[k]);
    PetscCall(MbsModelSetBodyLabel(r->model, g->first_body + k, label));
  }
  PetscCall(MbsYAMLLookup(r, item, ipath, "load", NULL, kpath, &node));
  if (node) { /* node k stands for half of each of its elements */
    PetscReal *share, most = 0;
    PetscCall(PetscCalloc1(mesh->nnodes, &share));
    for (PetscInt k = 0; k < mesh->nedges; k++) {
      const PetscInt  a = mesh->edge[2 * k], b = mesh->edge[2 * k + 1];
      const PetscReal l = place.scale * PetscSqrtReal(PetscSqr(mesh->x[3 * b] - mesh->x[3 * a]) +
                                                      PetscSqr(mesh->x[3 * b + 1] - mesh->x[3 * a + 1]) +
                                                      PetscSqr(mesh->x[3 * b + 2] - mesh->x[3 * a + 2]));
      share[a] += 0.5 * l, share[b] += 0.5 * l;
    }
    for (PetscInt k = 0; k < mesh->nnodes; k++) most = PetscMax(most, share[k]);
    ierr = AddBeamLoad(r, node, kpath, g->first_body, mesh->nnodes, share, most, prefix);
    PetscCall(PetscFree(share));
    PetscCall(ierr);
  }
  for (PetscInt e = first_elem + mesh->nnodes; e < end_elem; e++) { /* after the nodes' own constraints */
    const PetscInt k = e - first_elem - mesh->nnodes;
    if (k < mesh->nedges)
      snprintf(label, sizeof(label), "%s beam %" PetscInt_FMT "-%" PetscInt_FMT " (%s:%" PetscInt_FMT ")", prefix,
               mesh->node_tag[mesh->edge[2 * k]], mesh->node_tag[mesh->edge[2 * k + 1]], mesh->file,
               mesh->edge_line[k]);
    else
      snprintf(label, sizeof(label), "%s support %" PetscInt_FMT, prefix, k - mesh->nedges);
    PetscCall(MbsModelSetElementLabel(r->model, e, label));
  }
  PetscFunctionReturn(0);
}

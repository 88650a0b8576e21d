/*
  YAML input reader (schema: docs/input.md).

  Rank 0 reads the file and broadcasts its bytes; every rank parses the same bytes with libyaml's
  document API and calls the same model setters, so all ranks build the same model. Every input error
  is PETSC_ERR_USER_INPUT with "file:line:column: key 'path': expected ..., got ...".
*/
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/yamlimpl.h"

static const char *const top_keys[]         = {"time",   "scheme", "gravity",     "bodies", "chains",  "rigid_chains",
                                               "nets",   "meshes", "beams",       "joints", "springs", "loads",
                                               "drives", "output", "equilibrium", NULL};
static const char *const time_keys[]        = {"step", "end", NULL};
static const char *const equilibrium_keys[] = {"load_steps", NULL};
static const char *const output_keys[]      = {"directory", "every", "trajectory", "reactions", NULL};
static const char *const particle_keys[]    = {"name", "type", "mass", "position", "velocity", NULL};
static const char *const rigid_keys[]       = {
        "name", "type", "mass", "inertia", "position", "orientation", "velocity", "angular_velocity", NULL};

static PetscErrorCode ParseTime(MbsYAMLReader *r, yaml_node_t *root, MbsRunConfig *cfg)
{
  yaml_node_t *node, *step, *end;
  char         path[MBS_YAML_PATH_LEN], spath[MBS_YAML_PATH_LEN], epath[MBS_YAML_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(MbsYAMLLookup(r, root, "", "time", "a mapping {step: h, end: T} (seconds)", path, &node));
  PetscCall(MbsYAMLExpectMapping(r, node, path, "a mapping {step: h, end: T} (seconds)"));
  PetscCall(MbsYAMLCheckKeys(r, node, path, time_keys, ""));
  PetscCall(MbsYAMLLookup(r, node, path, "step", "a positive number (time step in s)", spath, &step));
  PetscCall(MbsYAMLLookup(r, node, path, "end", "a positive number (final time in s)", epath, &end));
  PetscCall(MbsYAMLParseReal(r, step, spath, MBS_YAML_POSITIVE, "time step in s", &cfg->dt));
  PetscCall(MbsYAMLParseReal(r, end, epath, MBS_YAML_POSITIVE, "final time in s", &cfg->t_end));
  /* the stepper counts steps in PetscInt: ceil(end / step) must fit */
  if (!(cfg->t_end / cfg->dt < (PetscReal)PETSC_MAX_INT)) {
    char expected[160], got[MBS_YAML_GOT_LEN];

    snprintf(expected, sizeof(expected), "a time step giving at most %" PetscInt_FMT " steps up to 'end'",
             PETSC_MAX_INT - 1);
    snprintf(got, sizeof(got), "'%.40s', %.3g steps", MbsYAMLScalarText(step), (double)(cfg->t_end / cfg->dt));
    PetscCall(MbsYAMLFail(r, step->start_mark, spath, expected, got));
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
  PetscCall(MbsYAMLLookup(r, root, "", "scheme", NULL, path, &node));
  if (!node) PetscFunctionReturn(0);
  PetscCall(MbsYAMLExpectMapping(r, node, path, "a mapping {type: name, parameter: value, ...}"));
  PetscCall(MbsYAMLCheckKeys(r, node, path, NULL, ""));
  PetscCall(MbsYAMLLookup(r, node, path, "type", NULL, tpath, &type));
  if (type) {
    PetscBool registered;
    char      expected[256];

    PetscCall(MbsYAMLParseString(r, type, tpath, "a registered scheme name (gglmbs -help lists them)", &name));
    if (strlen(name) >= sizeof(cfg->scheme))
      PetscCall(MbsYAMLFailNode(r, type, tpath, "a scheme name of at most 63 characters"));
    PetscCall(MbsSchemeIsRegistered(name, &registered, expected, sizeof(expected)));
    if (!registered) PetscCall(MbsYAMLFailNode(r, type, tpath, expected));
  }
  PetscCall(PetscStrncpy(cfg->scheme, name, sizeof(cfg->scheme)));
  cfg->nparams = 0;
  for (yaml_node_pair_t *pair = node->data.mapping.pairs.start; pair < node->data.mapping.pairs.top; pair++) {
    yaml_node_t              *key = MbsYAMLNodeGet(r, pair->key), *value = MbsYAMLNodeGet(r, pair->value);
    const MbsSchemeParameter *prm;
    char                      ppath[MBS_YAML_PATH_LEN], expected[256], got[MBS_YAML_GOT_LEN + 32], names[128];
    double                    v = 0.0;
    PetscBool                 ok;

    if (!strcmp(MbsYAMLScalarText(key), "type")) continue;
    MbsYAMLPathKey(ppath, path, MbsYAMLScalarText(key));
    PetscCall(MbsSchemeGetParameter(name, MbsYAMLScalarText(key), &prm));
    if (!prm) {
      PetscCall(MbsSchemeGetParameterNames(name, names, sizeof(names)));
      snprintf(expected, sizeof(expected), "the key type or a parameter of scheme %s (its parameters: %s)", name,
               names);
      snprintf(got, sizeof(got), "unknown key '%.60s'", MbsYAMLScalarText(key));
      PetscCall(MbsYAMLFail(r, key->start_mark, ppath, expected, got));
    }
    /* the range text serves both for a value that is no number and for one out of range */
    PetscCall(MbsSchemeCheckParameter(prm, prm->def, &ok, expected, sizeof(expected)));
    PetscCall(MbsYAMLParseFinite(r, value, ppath, expected, &v));
    PetscCall(MbsSchemeCheckParameter(prm, (PetscReal)v, &ok, expected, sizeof(expected)));
    if (!ok) PetscCall(MbsYAMLFailNode(r, value, ppath, expected));
    if (cfg->nparams >= MBS_RUNCONFIG_MAX_PARAMS) {
      snprintf(expected, sizeof(expected), "at most %d scheme parameters", MBS_RUNCONFIG_MAX_PARAMS);
      PetscCall(MbsYAMLFailNode(r, value, ppath, expected));
    }
    PetscCall(PetscStrncpy(cfg->param_name[cfg->nparams], prm->name, sizeof(cfg->param_name[0])));
    cfg->param_value[cfg->nparams++] = (PetscReal)v;
  }
  PetscFunctionReturn(0);
}

/* output.reactions: "all", or the joints and drives by their place in their sections, {joints: [0, 2], drives: [1]},
   each checked against its section here; passed on as "joints[0],joints[2],drives[1]" (MbsStepperSetReactions()) */
static PetscErrorCode ParseReactions(MbsYAMLReader *r, yaml_node_t *root, yaml_node_t *output, const char opath[],
                                     MbsRunConfig *cfg)
{
  static const char *const sections[] = {"joints", "drives", NULL};
  static const char        expected[] = "'all' or a mapping of sections to entries, e.g. {joints: [0, 2], drives: [0]}";
  yaml_node_t             *node;
  char                     path[MBS_YAML_PATH_LEN];
  size_t                   len = 0;

  PetscFunctionBegin;
  PetscCall(MbsYAMLLookup(r, output, opath, "reactions", NULL, path, &node));
  if (!node) PetscFunctionReturn(0);
  if (node->type == YAML_SCALAR_NODE) {
    const char *text = NULL;
    PetscCall(MbsYAMLParseString(r, node, path, expected, &text));
    if (strcmp(text, "all")) PetscCall(MbsYAMLFailNode(r, node, path, expected));
    PetscCall(PetscStrncpy(cfg->reactions, "all", sizeof(cfg->reactions)));
    PetscFunctionReturn(0);
  }
  PetscCall(MbsYAMLExpectMapping(r, node, path, expected));
  PetscCall(MbsYAMLCheckKeys(r, node, path, sections, ""));
  for (int s = 0; sections[s]; s++) {
    yaml_node_t *list, *entries;
    char         spath[MBS_YAML_PATH_LEN], lpath[MBS_YAML_PATH_LEN];
    PetscInt     n;

    PetscCall(MbsYAMLLookup(r, node, path, sections[s], NULL, spath, &entries));
    if (!entries) continue;
    PetscCall(MbsYAMLExpectSequence(r, entries, spath, "a list of entry numbers, from 0"));
    PetscCall(MbsYAMLLookup(r, root, "", sections[s], NULL, lpath, &list));
    n = list && list->type == YAML_SEQUENCE_NODE ? MbsYAMLSequenceLength(list) : 0;
    for (PetscInt i = 0; i < MbsYAMLSequenceLength(entries); i++) {
      yaml_node_t *item = MbsYAMLSequenceItem(r, entries, i);
      char         ipath[MBS_YAML_PATH_LEN], what[96], name[48];
      PetscReal    v;
      PetscInt     k;

      snprintf(ipath, sizeof(ipath), "%s[%" PetscInt_FMT "]", spath, i);
      if (n)
        snprintf(what, sizeof(what), "the number of an entry of '%s' (0 to %" PetscInt_FMT ")", sections[s], n - 1);
      else
        snprintf(what, sizeof(what), "an entry of '%s', but the input has none", sections[s]);
      PetscCall(MbsYAMLParseReal(r, item, ipath, MBS_YAML_NONNEGATIVE, what, &v));
      if (!(v < n && v == PetscFloorReal(v))) PetscCall(MbsYAMLFailNode(r, item, ipath, what));
      k = (PetscInt)v;
      snprintf(name, sizeof(name), "%s%s[%" PetscInt_FMT "]", len ? "," : "", sections[s], k);
      PetscCheck(len + strlen(name) < sizeof(cfg->reactions), r->comm, PETSC_ERR_USER_INPUT,
                 "%s: output.reactions lists too many joints; use 'all' or -mbs_reactions", r->file);
      PetscCall(PetscStrncpy(cfg->reactions + len, name, sizeof(cfg->reactions) - len));
      len += strlen(name);
    }
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode ParseOutput(MbsYAMLReader *r, yaml_node_t *root, MbsRunConfig *cfg)
{
  yaml_node_t *node, *dir, *every, *traj;
  char         path[MBS_YAML_PATH_LEN], dpath[MBS_YAML_PATH_LEN], epath[MBS_YAML_PATH_LEN], tpath[MBS_YAML_PATH_LEN];
  const char  *name = NULL;

  PetscFunctionBegin;
  PetscCall(MbsYAMLLookup(r, root, "", "output", NULL, path, &node));
  if (!node) PetscFunctionReturn(0);
  PetscCall(
    MbsYAMLExpectMapping(r, node, path, "a mapping {directory: path, every: n, trajectory: xdmf, reactions: all}"));
  PetscCall(MbsYAMLCheckKeys(r, node, path, output_keys, ""));
  PetscCall(MbsYAMLLookup(r, node, path, "directory", NULL, dpath, &dir));
  PetscCall(MbsYAMLLookup(r, node, path, "every", NULL, epath, &every));
  PetscCall(MbsYAMLLookup(r, node, path, "trajectory", NULL, tpath, &traj));
  if (traj) {
    const char *format = NULL;

    PetscCall(MbsYAMLParseString(r, traj, tpath, "one of xdmf, none", &format));
    if (strcmp(format, "xdmf") && strcmp(format, "none"))
      PetscCall(MbsYAMLFailNode(r, traj, tpath, "one of xdmf, none"));
    PetscCall(PetscStrncpy(cfg->trajectory, format, sizeof(cfg->trajectory)));
  }
  if (dir) {
    PetscCall(MbsYAMLParseString(r, dir, dpath, "a directory name", &name));
    if (strlen(name) >= sizeof(cfg->output_dir)) PetscCall(MbsYAMLFailNode(r, dir, dpath, "a shorter directory name"));
    PetscCall(PetscStrncpy(cfg->output_dir, name, sizeof(cfg->output_dir)));
  }
  if (every) PetscCall(MbsYAMLParseInt(r, every, epath, "write every n-th step", &cfg->output_every));
  PetscCall(ParseReactions(r, root, node, path, cfg));
  PetscFunctionReturn(0);
}

/* First pass over 'bodies': names and types, so that lookups work and duplicates are found before anything is added. */
static PetscErrorCode CollectBodies(MbsYAMLReader *r, yaml_node_t *list, const char path[])
{
  PetscInt n = MbsYAMLSequenceLength(list);

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(n, &r->bodies));
  PetscCall(PetscMalloc1(n, &r->sorted));
  r->nbodies = n;
  for (PetscInt i = 0; i < n; i++) {
    yaml_node_t *item = MbsYAMLSequenceItem(r, list, i), *name, *type;
    char         ipath[MBS_YAML_PATH_LEN], npath[MBS_YAML_PATH_LEN], tpath[MBS_YAML_PATH_LEN];
    const char  *tname = NULL;

    MbsYAMLPathIndex(ipath, path, i);
    PetscCall(MbsYAMLExpectMapping(r, item, ipath, "a mapping {name: ..., type: particle|rigid, mass: ..., ...}"));
    PetscCall(MbsYAMLLookup(r, item, ipath, "name", "a body name", npath, &name));
    PetscCall(MbsYAMLParseName(r, name, npath, "a body name", &r->bodies[i].name));
    if (!strcmp(r->bodies[i].name, "ground"))
      PetscCall(MbsYAMLFailNode(r, name, npath, "a body name other than 'ground' (reserved for the fixed ground)"));
    PetscCall(MbsYAMLLookup(r, item, ipath, "type", "a body type (particle or rigid)", tpath, &type));
    PetscCall(MbsYAMLParseString(r, type, tpath, "a body type (particle or rigid)", &tname));
    if (!strcmp(tname, "particle"))
      r->bodies[i].type = MBS_BODY_PARTICLE;
    else if (!strcmp(tname, "rigid"))
      r->bodies[i].type = MBS_BODY_RIGID;
    else
      PetscCall(MbsYAMLFailNode(r, type, tpath, "a body type (particle or rigid)"));
    r->bodies[i].item = i;
    r->bodies[i].body = -1;
    r->bodies[i].mark = name->start_mark;
    r->sorted[i]      = &r->bodies[i];
  }
  if (n) qsort(r->sorted, (size_t)n, sizeof(*r->sorted), MbsYAMLCompareBodies);
  for (PetscInt i = 1; i < n; i++) {
    if (!strcmp(r->sorted[i - 1]->name, r->sorted[i]->name)) {
      MbsYAMLBody *first = r->sorted[i - 1], *again = r->sorted[i];
      char         ipath[MBS_YAML_PATH_LEN], npath[MBS_YAML_PATH_LEN], got[MBS_YAML_GOT_LEN + 64];

      MbsYAMLPathIndex(ipath, path, again->item);
      MbsYAMLPathKey(npath, ipath, "name");
      snprintf(got, sizeof(got), "'%.60s', already the name of bodies[%" PetscInt_FMT "]", again->name, first->item);
      PetscCall(MbsYAMLFail(r, again->mark, npath, "a body name not used before", got));
    }
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode AddBodies(MbsYAMLReader *r, yaml_node_t *list, const char path[])
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < r->nbodies; i++) {
    MbsYAMLBody *b    = &r->bodies[i];
    yaml_node_t *item = MbsYAMLSequenceItem(r, list, i), *node;
    char         ipath[MBS_YAML_PATH_LEN], kpath[MBS_YAML_PATH_LEN], label[PETSC_MAX_PATH_LEN + 128];
    PetscReal    mass = 0, x[3] = {0, 0, 0}, v[3] = {0, 0, 0};

    MbsYAMLPathIndex(ipath, path, i);
    PetscCall(MbsYAMLCheckKeys(r, item, ipath, b->type == MBS_BODY_RIGID ? rigid_keys : particle_keys,
                               b->type == MBS_BODY_RIGID ? " (rigid body)" : " (particle)"));
    PetscCall(MbsYAMLLookup(r, item, ipath, "mass", "a positive number (mass in kg)", kpath, &node));
    PetscCall(MbsYAMLParseReal(r, node, kpath, MBS_YAML_POSITIVE, "mass in kg", &mass));
    PetscCall(MbsYAMLLookup(
      r, item, ipath, "position",
      b->type == MBS_BODY_RIGID ? "a 3-vector (centre of mass in m)" : "a 3-vector (position in m)", kpath, &node));
    PetscCall(MbsYAMLParseVec3(r, node, kpath, b->type == MBS_BODY_RIGID ? "centre of mass in m" : "position in m", x));
    PetscCall(MbsYAMLLookup(r, item, ipath, "velocity", NULL, kpath, &node));
    if (node) PetscCall(MbsYAMLParseVec3(r, node, kpath, "velocity in m/s", v));
    if (b->type == MBS_BODY_PARTICLE) {
      PetscCall(MbsModelAddParticle(r->model, b->name, mass, x, v, &b->body));
    } else {
      PetscReal J[3] = {0, 0, 0}, R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, omega[3] = {0, 0, 0};

      PetscCall(MbsYAMLLookup(r, item, ipath, "inertia",
                              "a 3-vector (principal moments of inertia about the centre of mass in kg m^2)", kpath,
                              &node));
      PetscCall(MbsYAMLParseInertia(r, node, kpath, J));
      PetscCall(MbsYAMLLookup(r, item, ipath, "orientation", NULL, kpath, &node));
      if (node) PetscCall(MbsYAMLParseOrientation(r, node, kpath, R));
      PetscCall(MbsYAMLLookup(r, item, ipath, "angular_velocity", NULL, kpath, &node));
      if (node) PetscCall(MbsYAMLParseVec3(r, node, kpath, "angular velocity in rad/s, world frame", omega));
      PetscCall(MbsModelAddRigidBody(r->model, b->name, mass, J, x, R, v, omega, &b->body));
    }
    snprintf(label, sizeof(label), "%s:%zu:%zu: bodies[%" PetscInt_FMT "] '%s'", r->file, item->start_mark.line + 1,
             item->start_mark.column + 1, i, b->name);
    PetscCall(MbsModelSetBodyLabel(r->model, b->body, label));
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
  PetscCall(MbsYAMLLookup(r, item, ipath, "bodies", "a sequence of two body names [a, b]", path, &node));
  if (node->type != YAML_SEQUENCE_NODE || MbsYAMLSequenceLength(node) != 2)
    PetscCall(MbsYAMLFailNode(r, node, path, "a sequence of two body names [a, b]"));
  for (PetscInt k = 0; k < 2; k++) {
    names[k] = MbsYAMLSequenceItem(r, node, k);
    MbsYAMLPathIndex(namepaths[k], path, k);
    PetscCall(MbsYAMLResolveBody(r, names[k], namepaths[k], PETSC_TRUE, &ref[k]));
  }
  if (ref[0].body == ref[1].body) {
    char got[MBS_YAML_GOT_LEN + 32];

    snprintf(got, sizeof(got), "'%.60s' again", MbsYAMLScalarText(names[1]));
    PetscCall(MbsYAMLFail(r, names[1]->start_mark, namepaths[1],
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
    PetscCall(MbsYAMLFail(r, node->start_mark, path, "[0, 0, 0] (a particle is a point; omit 'point(s)')", got));
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
  PetscCall(MbsYAMLLookup(r, item, ipath, key, required ? expected : NULL, path, &node));
  for (PetscInt k = 0; k < 2; k++)
    for (PetscInt j = 0; j < 3; j++) X[k][j] = 0;
  if (!node) PetscFunctionReturn(0);
  if (node->type != YAML_SEQUENCE_NODE || MbsYAMLSequenceLength(node) != 2)
    PetscCall(MbsYAMLFailNode(r, node, path, expected));
  for (PetscInt k = 0; k < 2; k++) {
    char kpath[MBS_YAML_PATH_LEN];

    MbsYAMLPathIndex(kpath, path, k);
    PetscCall(MbsYAMLParseVec3(r, MbsYAMLSequenceItem(r, node, k), kpath, quantity, X[k]));
    if (!strcmp(key, "points")) PetscCall(CheckPoint(r, MbsYAMLSequenceItem(r, node, k), kpath, &ref[k], X[k]));
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
  PetscCall(MbsYAMLLookup(r, item, ipath, "body", "a body name", kpath, &node));
  PetscCall(MbsYAMLResolveBody(r, node, kpath, PETSC_FALSE, &ref[0]));
  ref[1].body   = MBS_GROUND;
  ref[1].ground = PETSC_TRUE;
  PetscCall(MbsYAMLLookup(r, item, ipath, "point", NULL, kpath, &node));
  X[0][0] = X[0][1] = X[0][2] = 0;
  if (node) {
    PetscCall(MbsYAMLParseVec3(r, node, kpath, "material point in the body frame, m", X[0]));
    PetscCall(CheckPoint(r, node, kpath, &ref[0], X[0]));
  }
  PetscCall(MbsYAMLLookup(r, item, ipath, "position", NULL, kpath, &node));
  X[1][0] = X[1][1] = X[1][2] = 0;
  if (node)
    PetscCall(MbsYAMLParseVec3(r, node, kpath, "fixed position in the world frame, m", X[1]));
  else {
    PetscBool held; /* built in two passes, the element's owner holds the body; the others do not store it */
    PetscCall(MbsModelHoldsBody(r->model, ref[0].body, &held));
    if (held) PetscCall(MbsModelGetPointPosition(r->model, ref[0].body, X[0], X[1]));
  }
  PetscFunctionReturn(0);
}

/* A body and a material point on it, for elements on one body (loads): b is the ground */
static PetscErrorCode ParseOneBody(MbsYAMLReader *r, yaml_node_t *item, const char ipath[], MbsYAMLBodyRef ref[2],
                                   PetscReal X[2][3])
{
  yaml_node_t *node;
  char         kpath[MBS_YAML_PATH_LEN];

  PetscFunctionBegin;
  PetscCall(MbsYAMLLookup(r, item, ipath, "body", "a body name", kpath, &node));
  PetscCall(MbsYAMLResolveBody(r, node, kpath, PETSC_FALSE, &ref[0]));
  ref[1].body   = MBS_GROUND;
  ref[1].ground = PETSC_TRUE;
  X[0][0] = X[0][1] = X[0][2] = X[1][0] = X[1][1] = X[1][2] = 0;
  PetscCall(MbsYAMLLookup(r, item, ipath, "point", NULL, kpath, &node));
  if (node) {
    PetscCall(MbsYAMLParseVec3(r, node, kpath, "material point in the body frame, m", X[0]));
    PetscCall(CheckPoint(r, node, kpath, &ref[0], X[0]));
  }
  PetscFunctionReturn(0);
}

#define MBS_TABLE_MAX_BYTES ((PetscInt64)1 << 30)

/* The points of a time table from a CSV file: one point "t, value" (or "t value") a line; blank lines and lines
   starting with '#' are skipped, and a first other line that is not two numbers is a header. */
static PetscErrorCode ReadTableFile(MbsYAMLReader *r, yaml_node_t *node, const char path[], const char file[],
                                    PetscInt *n, PetscReal **t, PetscReal **v)
{
  char      *bytes, *line, *next, where[PETSC_MAX_PATH_LEN + MBS_YAML_PATH_LEN + 64], msg[256] = "";
  PetscInt64 nbytes;
  PetscInt   cap = 0, lineno = 0;
  int        status;
  PetscBool  header = PETSC_TRUE;

  PetscFunctionBegin;
  *n = 0;
  *t = *v = NULL;
  snprintf(where, sizeof(where), "%s:%zu:%zu: key '%s'", r->file, node->start_mark.line + 1,
           node->start_mark.column + 1, path);
  PetscCall(MbsReadFileBroadcast(r->comm, file, MBS_TABLE_MAX_BYTES, &bytes, &nbytes, &status));
  PetscCheck(!status, r->comm, PETSC_ERR_USER_INPUT,
             "%s: expected a readable CSV file of (time, value) rows, got '%s' (%s)", where, file,
             MbsReadFileError(status));
  for (line = bytes; line && *line && !msg[0]; line = next) {
    char     *end, *p = line;
    PetscReal a = 0, b = 0;

    next = strchr(line, '\n');
    if (next) *next++ = 0;
    lineno++;
    while (*p == ' ' || *p == '\t' || *p == '\r') p++;
    if (!*p || *p == '#') continue;
    errno = 0;
    a     = strtod(p, &end);
    if (end != p) {
      p = end;
      while (*p == ' ' || *p == '\t' || *p == ',' || *p == ';') p++;
      b = strtod(p, &end);
    }
    if (end == p || errno == ERANGE || !isfinite(a) || !isfinite(b)) {
      if (header) { /* the first line that is not blank or a comment: a header */
        header = PETSC_FALSE;
        continue;
      }
      snprintf(msg, sizeof(msg), "expected two finite numbers 'time, value', got '%.60s'", line);
      break;
    }
    header = PETSC_FALSE;
    while (*end == ' ' || *end == '\t' || *end == '\r' || *end == ',') end++;
    if (*end) {
      snprintf(msg, sizeof(msg), "expected two numbers 'time, value', got more: '%.60s'", line);
      break;
    }
    if (*n > 0 && !(a > (*t)[*n - 1])) {
      snprintf(msg, sizeof(msg), "expected times that increase strictly, got %g after %g", (double)a,
               (double)(*t)[*n - 1]);
      break;
    }
    if (*n == cap) {
      PetscReal *tt, *vv;
      cap = PetscMax(64, 2 * cap);
      PetscCall(PetscMalloc2(cap, &tt, cap, &vv));
      if (*n) {
        PetscCall(PetscArraycpy(tt, *t, *n));
        PetscCall(PetscArraycpy(vv, *v, *n));
      }
      PetscCall(PetscFree2(*t, *v));
      *t = tt, *v = vv;
    }
    (*t)[*n] = a, (*v)[*n] = b, (*n)++;
  }
  PetscCall(PetscFree(bytes));
  if (msg[0] || *n < 2) PetscCall(PetscFree2(*t, *v));
  PetscCheck(!msg[0], r->comm, PETSC_ERR_USER_INPUT, "%s: %s:%" PetscInt_FMT ": %s", where, file, lineno, msg);
  PetscCheck(*n >= 2, r->comm, PETSC_ERR_USER_INPUT,
             "%s: %s: expected at least two (time, value) rows, got %" PetscInt_FMT, where, file, *n);
  PetscFunctionReturn(0);
}

/* {type: table, points: [[t, v], ...] | file: data.csv, interpolation: linear|cubic} */
static PetscErrorCode ParseTimeTable(MbsYAMLReader *r, yaml_node_t *node, const char path[], MbsTimeFunction *f)
{
  yaml_node_t *pts, *file, *interp;
  char         ppath[MBS_YAML_PATH_LEN], fpath[MBS_YAML_PATH_LEN], ipath[MBS_YAML_PATH_LEN];
  PetscInt     n = 0;
  PetscReal   *t = NULL, *v = NULL;
  PetscBool    cubic = PETSC_FALSE;

  PetscFunctionBegin;
  PetscCall(MbsYAMLLookup(r, node, path, "points", NULL, ppath, &pts));
  PetscCall(MbsYAMLLookup(r, node, path, "file", NULL, fpath, &file));
  if (!pts == !file)
    PetscCall(MbsYAMLFail(r, node->start_mark, path, "a table with either 'points: [[t, value], ...]' or 'file: <csv>'",
                          pts ? "both" : "neither"));
  PetscCall(MbsYAMLLookup(r, node, path, "interpolation", NULL, ipath, &interp));
  if (interp) {
    const char *s;
    PetscCall(MbsYAMLParseString(r, interp, ipath, "linear or cubic", &s));
    if (strcmp(s, "linear") && strcmp(s, "cubic")) PetscCall(MbsYAMLFailNode(r, interp, ipath, "linear or cubic"));
    cubic = (PetscBool)!strcmp(s, "cubic");
  }
  if (pts) {
    const char *expected = "a sequence of at least two points [t, value] with increasing t";
    if (pts->type != YAML_SEQUENCE_NODE || MbsYAMLSequenceLength(pts) < 2)
      PetscCall(MbsYAMLFailNode(r, pts, ppath, expected));
    n = MbsYAMLSequenceLength(pts);
    PetscCall(PetscMalloc2(n, &t, n, &v));
    for (PetscInt i = 0; i < n; i++) {
      yaml_node_t   *pt = MbsYAMLSequenceItem(r, pts, i);
      char           kpath[MBS_YAML_PATH_LEN], xpath[MBS_YAML_PATH_LEN];
      PetscErrorCode ierr = 0;

      MbsYAMLPathIndex(kpath, ppath, i);
      if (pt->type != YAML_SEQUENCE_NODE || MbsYAMLSequenceLength(pt) != 2)
        ierr = MbsYAMLFailNode(r, pt, kpath, "a point [t, value]");
      if (!ierr) {
        MbsYAMLPathIndex(xpath, kpath, 0);
        ierr = MbsYAMLParseReal(r, MbsYAMLSequenceItem(r, pt, 0), xpath, MBS_YAML_FINITE, "the time in s", &t[i]);
      }
      if (!ierr) {
        MbsYAMLPathIndex(xpath, kpath, 1);
        ierr = MbsYAMLParseReal(r, MbsYAMLSequenceItem(r, pt, 1), xpath, MBS_YAML_FINITE, "the value", &v[i]);
      }
      if (!ierr && i > 0 && !(t[i] > t[i - 1])) {
        char got[96];
        MbsYAMLPathIndex(xpath, kpath, 0);
        snprintf(got, sizeof(got), "%g, not after the previous time %g", (double)t[i], (double)t[i - 1]);
        ierr =
          MbsYAMLFail(r, MbsYAMLSequenceItem(r, pt, 0)->start_mark, xpath, "a time after the previous point's", got);
      }
      if (ierr) {
        PetscCall(PetscFree2(t, v));
        PetscCall(ierr);
      }
    }
  } else {
    const char *name;
    char        full[PETSC_MAX_PATH_LEN];
    PetscCall(MbsYAMLParseString(r, file, fpath,
                                 "a CSV file of (time, value) rows, relative to the directory of this file", &name));
    MbsYAMLRelativePath(r, name, full, sizeof(full));
    PetscCall(ReadTableFile(r, file, fpath, full, &n, &t, &v));
  }
  {
    PetscErrorCode ierr = MbsModelCreateTimeTable(r->model, n, t, v, cubic, f);
    PetscCall(PetscFree2(t, v));
    PetscCall(ierr);
  }
  PetscFunctionReturn(0);
}

/* A function of time (docs/loads.md): a number (constant) or {type: constant|ramp|smooth_step|harmonic|table, ...} */
PetscErrorCode MbsYAMLParseTimeFunction(MbsYAMLReader *r, yaml_node_t *node, const char path[], MbsTimeFunction *f)
{
  static const char *const kinds[]    = {"constant", "ramp", "smooth_step", "harmonic", "table"};
  static const char *const keys[5][6] = {{"type", "value", NULL},
                                         {"type", "start", "end", "from", "to", NULL},
                                         {"type", "start", "end", "from", "to", NULL},
                                         {"type", "amplitude", "frequency", "phase", "offset", NULL},
                                         {"type", "points", "file", "interpolation", NULL}};
  static const char *const expected   = "a number or a mapping {type: constant|ramp|smooth_step|harmonic|table, ...}";
  yaml_node_t             *tnode, *v;
  char                     kpath[MBS_YAML_PATH_LEN], tpath[MBS_YAML_PATH_LEN];
  const char              *tname = NULL;
  int                      kind  = -1;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(f, sizeof(*f)));
  if (node->type == YAML_SCALAR_NODE) {
    f->kind = MBS_TIME_CONSTANT;
    PetscCall(MbsYAMLParseReal(r, node, path, MBS_YAML_FINITE, "a constant factor", &f->p[0]));
    PetscFunctionReturn(0);
  }
  PetscCall(MbsYAMLExpectMapping(r, node, path, expected));
  PetscCall(MbsYAMLLookup(r, node, path, "type",
                          "a time function type (constant, ramp, smooth_step, harmonic or table)", tpath, &tnode));
  PetscCall(MbsYAMLParseString(r, tnode, tpath, "a time function type (constant, ramp, smooth_step, harmonic or table)",
                               &tname));
  for (int k = 0; k < 5; k++)
    if (!strcmp(tname, kinds[k])) kind = k;
  if (kind < 0)
    PetscCall(
      MbsYAMLFailNode(r, tnode, tpath, "a time function type (constant, ramp, smooth_step, harmonic or table)"));
  PetscCall(MbsYAMLCheckKeys(r, node, path, keys[kind],
                             kind == 4   ? " (table)"
                             : kind == 3 ? " (harmonic)"
                             : kind      ? " (ramp, smooth_step)"
                                         : ""));
  f->kind = kind;
  if (kind == MBS_TIME_TABLE) {
    PetscCall(ParseTimeTable(r, node, path, f));
  } else if (kind == MBS_TIME_CONSTANT) {
    PetscCall(MbsYAMLLookup(r, node, path, "value", "a number (the constant factor)", kpath, &v));
    PetscCall(MbsYAMLParseReal(r, v, kpath, MBS_YAML_FINITE, "the constant factor", &f->p[0]));
  } else if (kind == MBS_TIME_HARMONIC) {
    PetscCall(MbsYAMLLookup(r, node, path, "amplitude", "a number (the amplitude)", kpath, &v));
    PetscCall(MbsYAMLParseReal(r, v, kpath, MBS_YAML_FINITE, "the amplitude", &f->p[0]));
    PetscCall(MbsYAMLLookup(r, node, path, "frequency", "a non-negative number (the frequency in Hz)", kpath, &v));
    PetscCall(MbsYAMLParseReal(r, v, kpath, MBS_YAML_NONNEGATIVE, "the frequency in Hz", &f->p[1]));
    PetscCall(MbsYAMLLookup(r, node, path, "phase", NULL, kpath, &v));
    if (v) PetscCall(MbsYAMLParseReal(r, v, kpath, MBS_YAML_FINITE, "the phase in rad", &f->p[2]));
    PetscCall(MbsYAMLLookup(r, node, path, "offset", NULL, kpath, &v));
    if (v) PetscCall(MbsYAMLParseReal(r, v, kpath, MBS_YAML_FINITE, "the offset", &f->p[3]));
  } else {
    yaml_node_t *end;
    char         epath[MBS_YAML_PATH_LEN];
    PetscCall(MbsYAMLLookup(r, node, path, "start", "a number (the start time in s)", kpath, &v));
    PetscCall(MbsYAMLParseReal(r, v, kpath, MBS_YAML_FINITE, "the start time in s", &f->p[0]));
    PetscCall(MbsYAMLLookup(r, node, path, "end", "a number (the end time in s, after the start)", epath, &end));
    PetscCall(MbsYAMLParseReal(r, end, epath, MBS_YAML_FINITE, "the end time in s, after the start", &f->p[1]));
    if (!(f->p[1] > f->p[0])) {
      char got[96];
      snprintf(got, sizeof(got), "end %g, not after the start %g", f->p[1], f->p[0]);
      PetscCall(MbsYAMLFail(r, end->start_mark, epath, "an end time after the start time", got));
    }
    PetscCall(MbsYAMLLookup(r, node, path, "from", NULL, kpath, &v));
    if (v) PetscCall(MbsYAMLParseReal(r, v, kpath, MBS_YAML_FINITE, "the value before the start", &f->p[2]));
    PetscCall(MbsYAMLLookup(r, node, path, "to", "a number (the value after the end)", kpath, &v));
    PetscCall(MbsYAMLParseReal(r, v, kpath, MBS_YAML_FINITE, "the value after the end", &f->p[3]));
  }
  PetscFunctionReturn(0);
}

/* One parameter of an element type into its data block (src/elements/element.h) */
static PetscErrorCode ParseElementParam(MbsYAMLReader *r, yaml_node_t *item, const char ipath[],
                                        const MbsElementType *type, const MbsElemParam *prm,
                                        const MbsYAMLBodyRef ref[2], PetscReal X[2][3], MbsElemData *data)
{
  yaml_node_t              *node;
  char                      kpath[MBS_YAML_PATH_LEN], expected[256];
  static const char *const  numbers[] = {"a positive number", "a non-negative number", "a finite number"};
  static const MbsYAMLRange ranges[]  = {MBS_YAML_POSITIVE, MBS_YAML_NONNEGATIVE, MBS_YAML_FINITE};
  const char               *number    = numbers[prm->range]; /* indexed by MbsElemRange */
  const MbsYAMLRange        yrange    = ranges[prm->range];

  PetscFunctionBegin;
  if (prm->kind == MBS_ELEM_PARAM_REAL) {
    PetscReal *value = (PetscReal *)((char *)data + prm->offset[0]);

    snprintf(expected, sizeof(expected), "%s (%s)", number, prm->quantity);
    PetscCall(
      MbsYAMLLookup(r, item, ipath, prm->key, prm->fallback == MBS_ELEM_REQUIRED ? expected : NULL, kpath, &node));
    if (node) {
      PetscCall(MbsYAMLParseReal(r, node, kpath, yrange, prm->quantity, value));
    } else if (prm->fallback == MBS_ELEM_DEFAULT_BY_TYPE) {
      *value = MBS_ELEM_UNSET;                          /* complete() puts the type's default in */
    } else if (prm->range == MBS_ELEM_RANGE_POSITIVE) { /* the default, the initial distance, must be positive */
      PetscReal distance = 0;
      PetscBool held[2];

      /* built in two passes, only the ranks that hold both bodies know it; the element's owner is one of them */
      PetscCall(MbsModelHoldsBody(r->model, ref[0].body, &held[0]));
      PetscCall(MbsModelHoldsBody(r->model, ref[1].body, &held[1]));
      if (held[0] && held[1]) PetscCall(InitialDistance(r, ref, X, &distance));
      if (held[0] && held[1] && !(distance > 0)) {
        char     msg[PETSC_MAX_PATH_LEN + 1024];
        PetscInt e;
        snprintf(expected, sizeof(expected), "%s (%s; required here because the %s's two points coincide initially)",
                 number, prm->quantity, type->name);
        MbsYAMLFormatFail(r, item->start_mark, kpath, expected, "nothing (the key is missing)", msg, sizeof(msg));
        PetscCall(MbsModelGetNumElements(r->model, &e)); /* the element about to be added */
        PetscCall(MbsModelElementError_Private(r->model, e, PETSC_ERR_USER_INPUT, msg));
      }
    }
  } else if (prm->kind == MBS_ELEM_PARAM_VECTOR) {
    PetscReal *v = (PetscReal *)((char *)data + prm->offset[0]);

    snprintf(expected, sizeof(expected), "a 3-vector (%s)", prm->quantity);
    PetscCall(MbsYAMLLookup(r, item, ipath, prm->key, expected, kpath, &node));
    PetscCall(MbsYAMLParseVec3(r, node, kpath, prm->quantity, v));
  } else if (prm->kind == MBS_ELEM_PARAM_TIME_FUNCTION) {
    MbsTimeFunction *f = (MbsTimeFunction *)((char *)data + prm->offset[0]);

    snprintf(expected, sizeof(expected), "a number or a time function (%s)", prm->quantity);
    PetscCall(
      MbsYAMLLookup(r, item, ipath, prm->key, prm->fallback == MBS_ELEM_REQUIRED ? expected : NULL, kpath, &node));
    if (node)
      PetscCall(MbsYAMLParseTimeFunction(r, node, kpath, f));
    else {
      PetscCall(PetscMemzero(f, sizeof(*f)));
      f->kind = MBS_TIME_CONSTANT;
      f->p[0] = 1.0;
    }
  } else if (prm->kind == MBS_ELEM_PARAM_DIRECTION) {
    PetscReal *v = (PetscReal *)((char *)data + prm->offset[0]);

    snprintf(expected, sizeof(expected), "a non-zero 3-vector (%s)", prm->quantity);
    PetscCall(MbsYAMLLookup(r, item, ipath, prm->key, expected, kpath, &node));
    PetscCall(MbsYAMLParseNonzeroVec3(r, node, kpath, prm->quantity, v));
  } else {
    char      vpath[MBS_YAML_PATH_LEN];
    PetscReal v[3];

    snprintf(expected, sizeof(expected), "a sequence of two 3-vectors [[..], [..]] (%s)", prm->quantity);
    PetscCall(MbsYAMLLookup(r, item, ipath, prm->key, expected, kpath, &node));
    if (node->type != YAML_SEQUENCE_NODE || MbsYAMLSequenceLength(node) != 2)
      PetscCall(MbsYAMLFailNode(r, node, kpath, expected));
    for (PetscInt k = 0; k < 2; k++) {
      MbsYAMLPathIndex(vpath, kpath, k);
      PetscCall(MbsYAMLParseNonzeroVec3(r, MbsYAMLSequenceItem(r, node, k), vpath, prm->item_quantity, v));
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
  for (PetscInt i = 0, n = MbsYAMLSequenceLength(list); i < n; i++) {
    yaml_node_t *item = MbsYAMLSequenceItem(r, list, i), *type_node, *names[2];
    char         ipath[MBS_YAML_PATH_LEN], tpath[MBS_YAML_PATH_LEN], namepaths[2][MBS_YAML_PATH_LEN], context[96],
      label[PETSC_MAX_PATH_LEN + 128];
    const char           *keys[5 + MBS_ELEM_MAX_PARAMS], *tname = NULL; /* 4 fixed keys, the parameters, NULL */
    const MbsElementType *type;
    MbsYAMLBodyRef        ref[2];
    PetscReal             X[2][3];
    MbsElemData           data;
    PetscInt              elem = -1, nkeys = 0;

    MbsYAMLPathIndex(ipath, path, i);
    PetscCall(MbsYAMLExpectMapping(r, item, ipath, mapping));
    PetscCall(MbsYAMLLookup(r, item, ipath, "type", types, tpath, &type_node));
    PetscCall(MbsYAMLParseString(r, type_node, tpath, types, &tname));
    PetscCall(MbsElementTypeFind(section, tname, &type));
    if (!type) PetscCall(MbsYAMLFailNode(r, type_node, tpath, types));
    keys[nkeys++] = "type";
    if (type->connection == MBS_ELEM_TWO_BODIES) {
      keys[nkeys++] = "bodies";
      keys[nkeys++] = "points";
    } else if (type->connection == MBS_ELEM_ONE_BODY) {
      keys[nkeys++] = "body";
      keys[nkeys++] = "point";
    } else {
      keys[nkeys++] = "body";
      keys[nkeys++] = "point";
      keys[nkeys++] = "position";
    }
    for (PetscInt p = 0; p < type->nparams; p++) keys[nkeys++] = type->params[p].key;
    keys[nkeys] = NULL;
    snprintf(context, sizeof(context), " (%s)", type->name);
    PetscCall(MbsYAMLCheckKeys(r, item, ipath, keys, context));
    if (type->connection == MBS_ELEM_TWO_BODIES) {
      PetscCall(ParseBodyPair(r, item, ipath, ref, names, namepaths));
      for (PetscInt k = 0; k < 2; k++) {
        if (type->joins_centres && ref[k].ground) {
          char expected[128];
          snprintf(expected, sizeof(expected), "a body (a %s %s joins two bodies; weld a body to the ground instead)",
                   type->name, noun);
          PetscCall(MbsYAMLFail(r, names[k]->start_mark, namepaths[k], expected, "'ground'"));
        }
        if ((type->needs_orientation & (1 << k)) && !ref[k].ground && ref[k].type != MBS_BODY_RIGID) {
          char got[MBS_YAML_GOT_LEN + 32], expected[128];

          snprintf(got, sizeof(got), "particle '%.60s'", MbsYAMLScalarText(names[k]));
          snprintf(expected, sizeof(expected), "a rigid body or 'ground' (a %s %s needs an orientation)", type->name,
                   noun);
          PetscCall(MbsYAMLFail(r, names[k]->start_mark, namepaths[k], expected, got));
        }
      }
      PetscCall(ParsePointPair(r, item, ipath, "points", "material points in m", ref, PETSC_FALSE, X));
    } else if (type->connection == MBS_ELEM_ONE_BODY) {
      PetscCall(ParseOneBody(r, item, ipath, ref, X));
      if ((type->needs_orientation & MBS_ELEM_ORIENT_A) && ref[0].type != MBS_BODY_RIGID) {
        char         got[MBS_YAML_GOT_LEN + 32], expected[128], bpath[MBS_YAML_PATH_LEN];
        yaml_node_t *bnode;
        PetscCall(MbsYAMLLookup(r, item, ipath, "body", "a body name", bpath, &bnode));
        snprintf(got, sizeof(got), "particle '%.60s'", MbsYAMLScalarText(bnode));
        snprintf(expected, sizeof(expected), "a rigid body (a %s %s needs an orientation)", type->name, noun);
        PetscCall(MbsYAMLFail(r, bnode->start_mark, bpath, expected, got));
      }
    } else
      PetscCall(ParseBodyToWorld(r, item, ipath, ref, X));
    PetscCall(PetscMemzero(&data, sizeof(data)));
    data.length = data.stiffness = data.damping = data.exponent = MBS_ELEM_UNSET;
    for (int k = 0; k < 3; k++) {
      data.Xa[k] = X[0][k];
      data.Xb[k] = X[1][k];
    }
    for (PetscInt p = 0; p < type->nparams; p++)
      PetscCall(ParseElementParam(r, item, ipath, type, &type->params[p], ref, X, &data));
    {
      char error[256], msg[PETSC_MAX_PATH_LEN + 512];
      PetscCall(
        MbsModelAddElement_Private(r->model, type, ref[0].body, ref[1].body, &data, &elem, error, sizeof(error)));
      if (error[0]) { /* raised now, or, built in two passes, by the ranks that store the element, after the pass */
        snprintf(msg, sizeof(msg), "%s:%zu:%zu: %s[%" PetscInt_FMT "] (%s): %s", r->file, item->start_mark.line + 1,
                 item->start_mark.column + 1, section, i, tname, error);
        PetscCall(MbsModelElementError_Private(r->model, elem, PETSC_ERR_USER_INPUT, msg));
      }
    }
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
  } generators[5] = {
    {"chains", "a sequence of chains", MbsYAMLAddChains},
    {"rigid_chains", "a sequence of rigid chains", MbsYAMLAddRigidChains},
    {"nets", "a sequence of nets", MbsYAMLAddNets},
    {"meshes", "a sequence of meshes (Gmsh .msh files)", MbsYAMLAddMeshes},
    {"beams", "a sequence of beams", MbsYAMLAddBeams},
  };
  yaml_node_t *root = yaml_document_get_root_node(r->doc), *node, *bodies, *gen[5];
  char         path[MBS_YAML_PATH_LEN], bpath[MBS_YAML_PATH_LEN], gpath[5][MBS_YAML_PATH_LEN];
  PetscInt     ngen = 0;

  PetscFunctionBegin;
  if (!root) {
    yaml_mark_t start = {0, 0, 0};

    PetscCall(MbsYAMLFail(r, start, "", "a mapping with at least 'time' and 'bodies'", "an empty document"));
  }
  PetscCall(MbsYAMLExpectMapping(r, root, "", "a mapping with at least 'time' and 'bodies'"));
  PetscCall(MbsYAMLCheckKeys(r, root, "", top_keys, ""));
  PetscCall(ParseTime(r, root, cfg));
  PetscCall(ParseScheme(r, root, cfg));
  PetscCall(ParseOutput(r, root, cfg));
  PetscCall(MbsYAMLLookup(r, root, "", "equilibrium", NULL, path, &node));
  if (node) { /* equilibrium: {load_steps: n}: start from the static equilibrium (docs/statics.md) */
    char         spath[MBS_YAML_PATH_LEN];
    yaml_node_t *steps;
    PetscCall(MbsYAMLExpectMapping(r, node, path, "a mapping {load_steps: n}"));
    PetscCall(MbsYAMLCheckKeys(r, node, path, equilibrium_keys, ""));
    PetscCall(MbsYAMLLookup(r, node, path, "load_steps", "a positive integer (load steps of the initial equilibrium)",
                            spath, &steps));
    PetscCall(MbsYAMLParseInt(r, steps, spath, "load steps of the initial equilibrium", &cfg->equilibrium_steps));
  }

  PetscCall(MbsYAMLLookup(r, root, "", "gravity", NULL, path, &node));
  if (node) {
    PetscReal g[3] = {0, 0, 0};

    PetscCall(MbsYAMLParseVec3(r, node, path, "gravitational acceleration in m/s^2", g));
    PetscCall(MbsModelSetGravity(r->model, g));
  }

  PetscCall(MbsYAMLLookup(r, root, "", "bodies", NULL, bpath, &bodies));
  if (bodies) {
    PetscCall(MbsYAMLExpectSequence(r, bodies, bpath, "a sequence of bodies"));
    PetscCall(CollectBodies(r, bodies, bpath));
  }
  for (PetscInt k = 0; k < 5; k++) {
    PetscCall(MbsYAMLLookup(r, root, "", generators[k].key, NULL, gpath[k], &gen[k]));
    if (!gen[k]) continue;
    PetscCall(MbsYAMLExpectSequence(r, gen[k], gpath[k], generators[k].expected));
    ngen += MbsYAMLSequenceLength(gen[k]);
  }
  if (!r->nbodies && !ngen) {
    if (bodies)
      PetscCall(MbsYAMLFailNode(
        r, bodies, bpath,
        "at least one body (in 'bodies', or generated by 'chains', 'rigid_chains', 'nets', 'meshes' or 'beams')"));
    PetscCall(MbsYAMLFail(
      r, root->start_mark, "bodies",
      "at least one body (in 'bodies', or generated by 'chains', 'rigid_chains', 'nets', 'meshes' or 'beams')",
      "nothing (the key is missing)"));
  }
  if (bodies) PetscCall(AddBodies(r, bodies, bpath));
  PetscCall(PetscCalloc1(ngen, &r->groups));
  PetscCall(MbsYAMLGroupTablesCreate(r, ngen));
  for (PetscInt k = 0; k < 5; k++)
    if (gen[k]) PetscCall(generators[k].add(r, gen[k], gpath[k]));

  for (int s = 0; s < 4; s++) {
    static const char *const sections[4][2] = {
      {"joints", "joint"}, {"springs", "spring"}, {"loads", "load"}, {"drives", "drive"}};
    char expected[64];

    PetscCall(MbsYAMLLookup(r, root, "", sections[s][0], NULL, path, &node));
    if (!node) continue;
    snprintf(expected, sizeof(expected), "a sequence of %s", sections[s][0]);
    PetscCall(MbsYAMLExpectSequence(r, node, path, expected));
    PetscCall(AddElements(r, node, path, sections[s][0], sections[s][1]));
  }
  PetscFunctionReturn(0);
}

/* libyaml's loader (yaml_parser_load()) keeps the anchors of a document in a list and searches it for every
   anchor and alias, so that its time grows with their product: a 1 MB input of 16,000 anchors took 3 s, 50 MB
   would take hours. The document is composed here from the parser's events instead, in the same form (nodes,
   tags, styles, marks), with the same errors, and with the anchors in a hash table. */
typedef struct {
  char **name; /* open addressing, linear probing; NULL: an empty slot */
  int   *node;
  size_t cap, n; /* cap a power of two, at most half full */
} MbsYAMLAnchors;

typedef struct {
  int node; /* a sequence or mapping being composed */
  int key;  /* a mapping's key waiting for its value, or 0 */
} MbsYAMLFrame;

typedef struct {
  yaml_parser_t *parser;
  int            started, ended; /* the stream's start and end events were read */
  char           problem[192];   /* the text of an error of our own, which parser->problem points to */
} MbsYAMLComposer;

static size_t AnchorSlot(const MbsYAMLAnchors *a, const char name[])
{
  size_t i = MbsYAMLHash(name, strlen(name)) & (a->cap - 1);

  while (a->name[i] && strcmp(a->name[i], name)) i = (i + 1) & (a->cap - 1);
  return i;
}

static void AnchorsDestroy(MbsYAMLAnchors *a)
{
  for (size_t i = 0; i < a->cap; i++) free(a->name[i]);
  free(a->name);
  free(a->node);
  memset(a, 0, sizeof(*a));
}

/* Names 'node' by 'anchor'; 0 if out of memory or if the anchor names a node already (then *first is that one). */
static int AnchorsAdd(MbsYAMLAnchors *a, const char anchor[], int node, int *first)
{
  size_t slot;

  *first = 0;
  if (2 * (a->n + 1) > a->cap) {
    MbsYAMLAnchors b;

    b.cap  = a->cap ? 2 * a->cap : 64;
    b.n    = a->n;
    b.name = (char **)calloc(b.cap, sizeof(*b.name));
    b.node = (int *)calloc(b.cap, sizeof(*b.node));
    if (!b.name || !b.node) {
      free(b.name);
      free(b.node);
      return 0;
    }
    for (size_t i = 0; i < a->cap; i++) {
      if (!a->name[i]) continue;
      slot         = AnchorSlot(&b, a->name[i]);
      b.name[slot] = a->name[i];
      b.node[slot] = a->node[i];
    }
    free(a->name);
    free(a->node);
    *a = b;
  }
  slot = AnchorSlot(a, anchor);
  if (a->name[slot]) {
    *first = a->node[slot];
    return 0;
  }
  a->name[slot] = (char *)malloc(strlen(anchor) + 1);
  if (!a->name[slot]) return 0;
  strcpy(a->name[slot], anchor);
  a->node[slot] = node;
  a->n++;
  return 1;
}

/* As libyaml's loader reports them */
static int ComposerError(yaml_parser_t *parser, const char *context, yaml_mark_t context_mark, const char *problem,
                         yaml_mark_t problem_mark)
{
  parser->error        = YAML_COMPOSER_ERROR;
  parser->context      = context;
  parser->context_mark = context_mark;
  parser->problem      = problem;
  parser->problem_mark = problem_mark;
  return 0;
}

static int MemoryError(yaml_parser_t *parser)
{
  parser->error   = YAML_MEMORY_ERROR;
  parser->problem = "out of memory";
  return 0;
}

/* The node just made (or an alias's node) becomes the next item of the sequence or key or value of the
   mapping being composed; the root has no parent. */
/* A node's tag as libyaml's composer keeps it: the non-specific tag "!" is dropped */
static yaml_char_t *KeptTag(yaml_char_t *tag)
{
  return tag && strcmp((const char *)tag, "!") ? tag : NULL;
}

static int AddToParent(yaml_document_t *doc, MbsYAMLFrame *top, int node)
{
  if (!top) return 1;
  if (doc->nodes.start[top->node - 1].type == YAML_SEQUENCE_NODE)
    return yaml_document_append_sequence_item(doc, top->node, node);
  if (!top->key) {
    top->key = node;
    return 1;
  }
  node     = yaml_document_append_mapping_pair(doc, top->node, top->key, node);
  top->key = 0;
  return node;
}

/* The next document of the stream, as yaml_parser_load(): 1 and a document without nodes at the end of the
   stream, 0 with parser->error set on an error. */
static int Compose(MbsYAMLComposer *c, yaml_document_t *doc)
{
  yaml_parser_t *parser = c->parser;
  yaml_event_t   ev;
  MbsYAMLAnchors anchors = {NULL, NULL, 0, 0};
  MbsYAMLFrame  *stack   = NULL;
  size_t         depth = 0, cap = 0;
  int            ok = 1, done = 0;

  memset(doc, 0, sizeof(*doc));
  if (c->ended) return 1;
  if (!c->started) {
    if (!yaml_parser_parse(parser, &ev)) return 0;
    yaml_event_delete(&ev); /* the stream's start */
    c->started = 1;
  }
  if (!yaml_parser_parse(parser, &ev)) return 0;
  if (ev.type == YAML_STREAM_END_EVENT) {
    c->ended = 1;
    yaml_event_delete(&ev);
    return 1;
  }
  if (!yaml_document_initialize(doc, NULL, NULL, NULL, ev.data.document_start.implicit, 1)) {
    yaml_event_delete(&ev);
    return MemoryError(parser);
  }
  yaml_event_delete(&ev);
  while (ok && !done) {
    MbsYAMLFrame *top    = depth ? &stack[depth - 1] : NULL;
    const char   *anchor = NULL;
    int           node   = 0, first;

    if (!yaml_parser_parse(parser, &ev)) {
      ok = 0;
      break;
    }
    switch (ev.type) {
      case YAML_ALIAS_EVENT: {
        size_t slot = anchors.cap ? AnchorSlot(&anchors, (const char *)ev.data.alias.anchor) : 0;

        if (!anchors.cap || !anchors.name[slot])
          ok = ComposerError(parser, NULL, ev.start_mark, "found undefined alias", ev.start_mark);
        else
          ok = AddToParent(doc, top, anchors.node[slot]) ? 1 : MemoryError(parser);
      } break;
      case YAML_SCALAR_EVENT:
        anchor = (const char *)ev.data.scalar.anchor;
        node   = yaml_document_add_scalar(doc, KeptTag(ev.data.scalar.tag), ev.data.scalar.value,
                                          (int)ev.data.scalar.length, ev.data.scalar.style);
        break;
      case YAML_SEQUENCE_START_EVENT:
        anchor = (const char *)ev.data.sequence_start.anchor;
        node   = yaml_document_add_sequence(doc, KeptTag(ev.data.sequence_start.tag), ev.data.sequence_start.style);
        break;
      case YAML_MAPPING_START_EVENT:
        anchor = (const char *)ev.data.mapping_start.anchor;
        node   = yaml_document_add_mapping(doc, KeptTag(ev.data.mapping_start.tag), ev.data.mapping_start.style);
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        doc->nodes.start[top->node - 1].end_mark = ev.end_mark;
        depth--;
        break;
      case YAML_DOCUMENT_END_EVENT:
        doc->end_implicit = ev.data.document_end.implicit;
        done              = 1;
        break;
      default: ok = ComposerError(parser, NULL, ev.start_mark, "unexpected event", ev.start_mark);
    }
    if (ev.type == YAML_SCALAR_EVENT || ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
      if (!node && doc->nodes.start && (size_t)((char *)doc->nodes.end - (char *)doc->nodes.start) >= INT_MAX / 2) {
        /* libyaml's stacks stop growing at 1 GiB */
        snprintf(c->problem, sizeof(c->problem),
                 "more than %zu nodes (scalars, sequences and mappings), the most libyaml's document holds; large "
                 "models come from generators and meshes (docs/input.md)",
                 (size_t)(doc->nodes.end - doc->nodes.start));
        ok = ComposerError(parser, NULL, ev.start_mark, c->problem, ev.start_mark);
      } else if (!node)
        ok = MemoryError(parser);
      if (ok) {
        doc->nodes.start[node - 1].start_mark = ev.start_mark;
        doc->nodes.start[node - 1].end_mark   = ev.end_mark;
      }
      if (ok && anchor && !AnchorsAdd(&anchors, anchor, node, &first)) {
        if (first)
          ok = ComposerError(parser, "found duplicate anchor; first occurrence", doc->nodes.start[first - 1].start_mark,
                             "second occurrence", ev.start_mark);
        else
          ok = MemoryError(parser);
      }
      if (ok) ok = AddToParent(doc, top, node) ? 1 : MemoryError(parser);
      if (ok && ev.type != YAML_SCALAR_EVENT) {
        if (depth == cap) {
          MbsYAMLFrame *grown = (MbsYAMLFrame *)realloc(stack, (cap ? 2 * cap : 16) * sizeof(*stack));

          if (grown) {
            stack = grown;
            cap   = cap ? 2 * cap : 16;
          } else
            ok = MemoryError(parser);
        }
        if (ok) {
          stack[depth].node  = node;
          stack[depth++].key = 0;
        }
      }
    }
    yaml_event_delete(&ev);
  }
  AnchorsDestroy(&anchors);
  free(stack);
  if (!ok) yaml_document_delete(doc);
  return ok;
}

/* libyaml's time grows with the square of the nesting depth (a 200 kB file of nested brackets takes 37 s): the
   depth is checked with the event parser, which stops at the first level too deep, before the document is
   loaded. No input of gglmbs nests deeper than a handful of levels. */
static PetscErrorCode MbsYAMLCheckDepth(const char *bytes, size_t nbytes, PetscBool *too_deep, yaml_mark_t *deep)
{
  yaml_parser_t parser;
  yaml_event_t  event;
  int           depth = 0, done = 0;

  PetscFunctionBegin;
  PetscCheck(yaml_parser_initialize(&parser), PETSC_COMM_SELF, PETSC_ERR_MEM, "Cannot initialize the YAML parser");
  yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, nbytes);
  *too_deep = PETSC_FALSE;
  while (!done && !*too_deep && yaml_parser_parse(&parser, &event)) {
    if (event.type == YAML_SEQUENCE_START_EVENT || event.type == YAML_MAPPING_START_EVENT) {
      if (++depth > MBS_YAML_MAX_DEPTH) {
        *too_deep = PETSC_TRUE;
        *deep     = event.start_mark;
      }
    } else if (event.type == YAML_SEQUENCE_END_EVENT || event.type == YAML_MAPPING_END_EVENT)
      depth--;
    done = event.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&event);
  }
  yaml_parser_delete(&parser); /* a syntax error is reported by the document loader, with its position */
  PetscFunctionReturn(0);
}

/* One pass of the reader over the document: the model's bodies and elements and the run settings */
static PetscErrorCode BuildOnce(MbsYAMLReader *r, MPI_Comm comm, const char filename[], yaml_document_t *doc,
                                const char *bytes, size_t nbytes, MbsModel model, MbsRunConfig *cfg)
{
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(PetscMemzero(r, sizeof(*r)));
  r->comm  = comm;
  r->file  = filename;
  r->doc   = doc;
  r->model = model;
  r->text  = bytes;
  r->ntext = nbytes;
  ierr     = MbsRunConfigSetDefaults(cfg);
  if (!ierr) ierr = Build(r, cfg);
  PetscCall(PetscFree(r->bodies));
  PetscCall(PetscFree(r->sorted));
  for (PetscInt k = 0; k < r->ngroups; k++) PetscCall(PetscFree2(r->groups[k].tags, r->groups[k].tag_node));
  PetscCall(PetscFree(r->groups));
  PetscCall(MbsYAMLGroupTablesDestroy(r));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/*@C
  MbsModelLoadYAML - Adds the bodies, generated models (chains, rigid chains, nets, meshes, beams), joints, springs and
gravity of a YAML input file to a model and reads its run parameters

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

  On several ranks an empty model is built twice from the file (`MbsModelBeginGraph()`, `MbsModelPartition()`): no
  rank holds the whole model; an error that needs the bodies' initial positions is found by the ranks that hold them
  and raised on every rank when the second pass ends (docs/input.md). The model is then partitioned (by
  -mbs_partition or the default: `MbsModelSetPartitioner()` after the load is refused) and complete: it takes no
  further bodies or elements (on one rank it does).

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
  PetscInt64      nbytes;
  char           *bytes  = NULL;
  int             status = 0;
  yaml_parser_t   parser;
  yaml_document_t doc, extra;
  int             loaded, extra_loaded, second = 0;
  yaml_mark_t     second_mark = {0, 0, 0};
  MbsRunConfig    local;
  MbsYAMLReader   r;
  MbsYAMLComposer composer = {NULL, 0, 0, ""};
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  PetscCheck(model, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Null MbsModel");
  PetscCheck(filename, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Null file name");
  PetscCall(MbsModelGetComm(model, &comm));
  PetscCall(MbsReadFileBroadcast(comm, filename, MBS_YAML_MAX_BYTES, &bytes, &nbytes, &status));
  PetscCheck(status != MBS_READFILE_TOO_LARGE, comm, PETSC_ERR_FILE_OPEN,
             "%s: the input file is larger than %d MiB; large models come from generators and meshes (docs/input.md)",
             filename, (int)(MBS_YAML_MAX_BYTES >> 20));
  PetscCheck(!status, comm, PETSC_ERR_FILE_OPEN, "%s: cannot read the input file: %s", filename,
             MbsReadFileError(status));
  {
    char source[PETSC_MAX_PATH_LEN + 96];
    PetscCall(PetscSNPrintf(source, sizeof(source), "%s (%lld bytes, FNV-1a 64 %016llx)", filename, (long long)nbytes,
                            (unsigned long long)MbsFNV1a(MBS_FNV1A_INIT, bytes, (size_t)nbytes)));
    PetscCall(MbsModelSetSource(model, source));
  }
  {
    PetscBool   too_deep;
    yaml_mark_t deep = {0, 0, 0};
    PetscCall(MbsYAMLCheckDepth(bytes, (size_t)nbytes, &too_deep, &deep));
    if (too_deep) {
      PetscCall(PetscFree(bytes));
      SETERRQ(comm, PETSC_ERR_USER_INPUT,
              "%s:%zu:%zu: key '(document)': expected sequences and mappings nested at most %d deep, got deeper "
              "nesting",
              filename, deep.line + 1, deep.column + 1, MBS_YAML_MAX_DEPTH);
    }
  }

  if (!yaml_parser_initialize(&parser)) {
    PetscCall(PetscFree(bytes));
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_MEM, "Cannot initialize the YAML parser");
  }
  yaml_parser_set_input_string(&parser, (const unsigned char *)bytes, (size_t)nbytes);
  composer.parser = &parser;
  loaded          = Compose(&composer, &doc);
  if (loaded) {
    extra_loaded = Compose(&composer, &extra);
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
  if (second) {
    yaml_document_delete(&doc);
    PetscCall(PetscFree(bytes));
    SETERRQ(comm, PETSC_ERR_USER_INPUT,
            "%s:%zu:%zu: key '(document)': expected a single YAML document, got a second one", filename,
            second_mark.line + 1, second_mark.column + 1);
  }

  {
    PetscInt    nbodies, nelems;
    PetscMPIInt size;
    PetscBool   two_passes;
    PetscCallMPI(MPI_Comm_size(comm, &size));
    PetscCall(MbsModelGetNumBodies(model, &nbodies));
    PetscCall(MbsModelGetNumElements(model, &nelems));
    /* on several ranks an empty model is built in two passes (MbsModelBeginGraph()): no rank holds the whole */
    two_passes = (PetscBool)(size > 1 && !nbodies && !nelems);
    ierr       = two_passes ? MbsModelBeginGraph(model) : 0;
    if (!ierr && two_passes) ierr = BuildOnce(&r, comm, filename, &doc, bytes, (size_t)nbytes, model, &local);
    if (!ierr && two_passes) ierr = MbsModelPartition(model);
    if (!ierr) ierr = BuildOnce(&r, comm, filename, &doc, bytes, (size_t)nbytes, model, &local);
    if (!ierr && two_passes) ierr = MbsModelRaiseDeferred_Private(model);
  }
  yaml_document_delete(&doc);
  PetscCall(PetscFree(bytes));
  PetscCall(ierr);
  if (cfg) *cfg = local;
  PetscFunctionReturn(0);
}

/*
  Generators of large models through the public model API: chains of rigid links, rectangular nets of
  particles and rods, and rod networks from node and edge lists (meshes). Each adds its bodies and
  elements in one pass, O(count), with no name lookups.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/modelimpl.h"
#include "model/generators.h"
#include "elements/vec3.h"

#define MBS_GEN_NAME_LEN 256

/*
  Memory estimate of a model and of one step's solve with the default scheme (em) and solver (LU),
  in bytes (docs/input.md, "Model size and memory"; measured against docs/robustness.md):

    M = C_base + C_obj (bodies + elements) ranks + C_unk n + C_nnz nnz (+ C_2d log2(n) nnz for nets and meshes)

  n = 2 nq + 2 ncon are the unknowns (q, p, lambda, gamma), nnz = 16 sum_bodies k_b + 6.2 sum_elements
  k_e (r_e + 1) the Jacobian's nonzeros (k: coordinates of a body or of an element's bodies, r: its
  constraint rows), fitted to the Jacobians PETSc assembles for particle chains, rigid chains and nets
  (within 15 %). The per-unknown and per-nonzero costs (vectors, the matrix, the LU factor and its
  workspace) were fitted to the peak RSS of particle and rigid chains; the LU fill of a 2-D graph (nested
  dissection) grows like log2 n, fitted to a net. Every rank holds the whole model (C_obj). The vi-*
  schemes add a velocity per coordinate: about 1.3 times the estimate.
*/
#define MBS_MEM_BASE    (48.0 * 1048576.0) /* PETSc, MPI and the program before any model */
#define MBS_MEM_OBJECT  300.0 /* a body or element: structs, name, label, layout, the partitioner's graph */
#define MBS_MEM_UNKNOWN 680.0 /* per unknown: vectors (stepper, SNES, line search) and the factor's work arrays */
#define MBS_MEM_NONZERO 73.0  /* per Jacobian nonzero: the matrix, its copy in the factor package, the factor */
#define MBS_MEM_FILL_2D 10.0  /* per Jacobian nonzero and log2 n: LU fill of a 2-D graph */

void MbsModelSizeAddBodies(MbsModelSize *s, PetscReal count, PetscInt blocks)
{
  const PetscReal k = 3.0 * (PetscReal)blocks;

  s->nbodies += count;
  s->nelems += count; /* gravity, added at set-up: a linear potential, no Jacobian entries */
  s->nq += k * count;
  s->nnz += 16.0 * k * count;
}

void MbsModelSizeAddElements(MbsModelSize *s, PetscReal count, PetscInt ncoord, PetscInt ncon)
{
  const PetscReal k = (PetscReal)ncoord, r = (PetscReal)ncon;

  s->nelems += count;
  s->ncon += r * count;
  s->nnz += 6.2 * k * (r + 1.0) * count;
}
void MbsModelSizeChain(MbsModelSize *s, PetscReal count)
{
  MbsModelSizeAddBodies(s, count, 1);
  MbsModelSizeAddElements(s, count, 6, 1);
}

void MbsModelSizeRigidChain(MbsModelSize *s, PetscReal count, MbsChainJointType joint)
{
  MbsModelSizeAddBodies(s, count, 4);
  MbsModelSizeAddElements(s, count, 12, 6);
  MbsModelSizeAddElements(s, count, 24, joint == MBS_CHAIN_JOINT_REVOLUTE ? 5 : 3);
}

void MbsModelSizeNet(MbsModelSize *s, PetscReal nx, PetscReal ny, PetscReal nfixed)
{
  MbsModelSizeAddBodies(s, nx * ny, 1);
  MbsModelSizeAddElements(s, (nx - 1) * ny + nx * (ny - 1), 6, 1);
  MbsModelSizeAddElements(s, nfixed, 3, 3);
  s->two_dimensional = PETSC_TRUE;
}

void MbsModelSizeRodNetwork(MbsModelSize *s, PetscReal nnodes, PetscReal nedges, PetscReal nfixed)
{
  MbsModelSizeAddBodies(s, nnodes, 1);
  MbsModelSizeAddElements(s, nedges, 6, 1);
  MbsModelSizeAddElements(s, nfixed, 3, 3);
  s->two_dimensional = PETSC_TRUE;
}

/* A size such as 4GiB, 512M, 2.5e9 or 0 (no limit): binary units k, M, G, T with or without "iB",
   decimal ones as kB, MB, GB, TB. */
static PetscBool ParseMemorySize(const char text[], PetscReal *bytes)
{
  static const struct {
    const char *unit;
    PetscReal   factor;
  } units[] = {
    {"", 1.0},
    {"B", 1.0},
    {"k", 1024.0},
    {"K", 1024.0},
    {"KiB", 1024.0},
    {"kiB", 1024.0},
    {"M", 1048576.0},
    {"MiB", 1048576.0},
    {"G", 1073741824.0},
    {"GiB", 1073741824.0},
    {"T", 1099511627776.0},
    {"TiB", 1099511627776.0},
    {"kB", 1e3},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
  };
  char  *end;
  double v = strtod(text, &end);

  if (end == text || !(v >= 0) || !isfinite(v)) return PETSC_FALSE;
  while (*end == ' ') end++;
  for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
    if (!strcmp(end, units[i].unit)) {
      *bytes = (PetscReal)v * units[i].factor;
      return (PetscBool)(*bytes < 1e30);
    }
  return PETSC_FALSE;
}

/* The limit in bytes (0: none) and where it comes from. */
static PetscErrorCode GetMemoryLimit(MbsModel model, PetscReal *limit, const char **source)
{
  char      text[64];
  PetscBool set;

  PetscFunctionBegin;
  if (model->memory_limit_set) {
    *limit  = (PetscReal)model->memory_limit;
    *source = "MbsModelSetMemoryLimit()";
    PetscFunctionReturn(0);
  }
  PetscCall(PetscOptionsGetString(((PetscObject)model)->options, ((PetscObject)model)->prefix, "-mbs_memory_limit",
                                  text, sizeof(text), &set));
  if (set) {
    PetscCheck(ParseMemorySize(text, limit), PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONG,
               "-mbs_memory_limit: expected a size in bytes such as 4GiB, 512MiB, 8e9 or 0 (no limit), got '%s'", text);
    *source = "-mbs_memory_limit";
    PetscFunctionReturn(0);
  }
  if (!model->memory_physical) {
    /* The estimate covers all ranks, so the limit is the memory of all their nodes: each node's first
       rank adds its own (sysconf), and every rank gets the same sum, so all ranks decide alike. */
    MPI_Comm    node;
    PetscMPIInt node_rank;
    PetscReal   mine = 0;
    PetscCallMPI(
      MPI_Comm_split_type(PetscObjectComm((PetscObject)model), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    PetscCallMPI(MPI_Comm_rank(node, &node_rank));
    PetscCallMPI(MPI_Comm_free(&node));
    if (!node_rank) {
      const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
      mine = pages > 0 && page > 0 ? (PetscReal)pages * (PetscReal)page : 0;
    }
    PetscCall(
      MPIU_Allreduce(&mine, &model->memory_physical, 1, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)model)));
  }
  *limit  = model->memory_physical;
  *source = "the physical memory of the ranks' machines; -mbs_memory_limit";
  PetscFunctionReturn(0);
}

/* Bytes as "23 GiB", "1.2e3 GiB", "640 MiB". */
static void FormatBytes(PetscReal bytes, char out[], size_t len)
{
  const PetscReal gib = 1073741824.0, mib = 1048576.0;

  if (bytes >= 1000 * gib)
    snprintf(out, len, "%.1e GiB", (double)(bytes / gib));
  else if (bytes >= gib)
    snprintf(out, len, "%.3g GiB", (double)(bytes / gib));
  else
    snprintf(out, len, "%.3g MiB", (double)(bytes / mib));
}

static PetscErrorCode ModelSize(MbsModel model, MbsModelSize *s)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(s, sizeof(*s)));
  for (PetscInt b = 0; b < model->nbodies; b++) MbsModelSizeAddBodies(s, 1, (PetscInt)model->bodies[b].type);
  for (PetscInt e = 0; e < model->nelems; e++) {
    const MbsElement *el = &model->elems[e];

    if (el->kernel != &MbsElemKernelGravity) MbsModelSizeAddElements(s, 1, MbsElemNq(&el->data), el->kernel->ncon);
  }
  PetscFunctionReturn(0);
}

static PetscReal EstimateBytes(const MbsModelSize *s, PetscMPIInt nranks)
{
  const PetscReal n    = 2 * s->nq + 2 * s->ncon,
                  fill = s->two_dimensional ? MBS_MEM_FILL_2D * PetscLog2Real(PetscMax(n, 2)) : 0;

  return MBS_MEM_BASE + MBS_MEM_OBJECT * (s->nbodies + s->nelems) * nranks + MBS_MEM_UNKNOWN * n +
         (MBS_MEM_NONZERO + fill) * s->nnz;
}

PetscErrorCode MbsModelCheckSize(MbsModel model, const MbsModelSize *added, PetscBool *fits, char why[], size_t len)
{
  MbsModelSize s;
  PetscReal    n, nnz, bytes, limit;
  const char  *source;
  char         need[32], have[32];

  PetscFunctionBegin;
  *fits = PETSC_TRUE;
  if (len) why[0] = 0;
  PetscCall(ModelSize(model, &s));
  s.nbodies += added->nbodies;
  s.nelems += added->nelems;
  s.nq += added->nq;
  s.ncon += added->ncon;
  s.nnz += added->nnz;
  s.two_dimensional = (PetscBool)(s.two_dimensional || added->two_dimensional);
  PetscCall(GetMemoryLimit(model, &limit, &source));
  bytes = EstimateBytes(&s, model->size);
  if (limit > 0 && !(bytes <= limit)) {
    *fits = PETSC_FALSE;
    FormatBytes(bytes, need, sizeof(need));
    FormatBytes(limit, have, sizeof(have));
    snprintf(why, len, "need about %s (estimate), the limit is %s (%s)", need, have, source);
    PetscFunctionReturn(0);
  }
  n   = 3 * s.nq + 2 * s.ncon; /* the largest scheme's unknowns */
  nnz = 1.5 * s.nnz;
  if (n > (PetscReal)PETSC_MAX_INT || nnz > (PetscReal)PETSC_MAX_INT ||
      s.nbodies + s.nelems > (PetscReal)PETSC_MAX_INT) {
    *fits = PETSC_FALSE;
    snprintf(why, len,
             "give about %.3g unknowns and %.3g Jacobian nonzeros, more than PetscInt holds (%" PetscInt_FMT
             "; PETSc configured with 64-bit indices would be needed)",
             (double)n, (double)nnz, PETSC_MAX_INT);
  }
  PetscFunctionReturn(0);
}

/*@C
  MbsModelSetMemoryLimit - Sets the memory a model and a step's solve may need, checked by the generators
  (`MbsModelAddChain()`, `MbsModelAddRigidChain()`, `MbsModelAddNet()`, `MbsModelAddRodNetwork()`) and by
  `MbsModelLoadYAML()` before they allocate

  Logically Collective

  Input Parameters:
+ model - the model
- bytes - the limit in bytes; 0 for none; `PETSC_DEFAULT` for the default

  Options Database Key:
. -mbs_memory_limit <size> - the limit when no setter call gave one, e.g. 4GiB, 512MiB, 8e9, or 0 (none)

  Notes:
  The default is the physical memory of the machines (nodes) the ranks run on (sysconf on each node, summed). The
estimate, documented in docs/input.md, counts the model (held by every rank) and one step's solve of the largest scheme:
the unknowns, the Jacobian's nonzeros and an LU fill estimate. A model over the limit is refused with both numbers,
  before anything is allocated; so is one whose unknowns or Jacobian nonzeros do not fit `PetscInt`.

  Level: intermediate

.seealso: `MbsModelGetMemoryLimit()`, `MbsModelEstimateMemory()`, `MbsModelLoadYAML()`
@*/
PetscErrorCode MbsModelSetMemoryLimit(MbsModel model, PetscInt64 bytes)
{
  PetscFunctionBegin;
  PetscCheck(model, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Null MbsModel");
  if (bytes == PETSC_DEFAULT) {
    model->memory_limit_set = PETSC_FALSE;
    model->memory_limit     = 0;
    PetscFunctionReturn(0);
  }
  PetscCheck(bytes >= 0, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "The memory limit must be a number of bytes, 0 (none) or PETSC_DEFAULT, got %" PetscInt64_FMT, bytes);
  model->memory_limit_set = PETSC_TRUE;
  model->memory_limit     = bytes;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelGetMemoryLimit - Gets the memory limit in force: the one set with `MbsModelSetMemoryLimit()`,
  else -mbs_memory_limit, else the physical memory of the ranks' machines

  Collective (reads the options database)

  Input Parameter:
. model - the model

  Output Parameter:
. bytes - the limit in bytes, 0 for none

  Level: intermediate

.seealso: `MbsModelSetMemoryLimit()`, `MbsModelEstimateMemory()`
@*/
PetscErrorCode MbsModelGetMemoryLimit(MbsModel model, PetscInt64 *bytes)
{
  PetscReal   limit;
  const char *source;

  PetscFunctionBegin;
  PetscCall(GetMemoryLimit(model, &limit, &source));
  *bytes = (PetscInt64)PetscMin(limit, 9.2e18);
  PetscFunctionReturn(0);
}

/*@C
  MbsModelEstimateMemory - Estimates the memory the model and one step's solve need, the estimate that
  `MbsModelSetMemoryLimit()` checks

  Not Collective

  Input Parameter:
. model - the model

  Output Parameter:
. bytes - the estimate in bytes

  Level: intermediate

.seealso: `MbsModelSetMemoryLimit()`, `MbsModelGetMemoryLimit()`
@*/
PetscErrorCode MbsModelEstimateMemory(MbsModel model, PetscReal *bytes)
{
  MbsModelSize s;

  PetscFunctionBegin;
  PetscCall(ModelSize(model, &s));
  *bytes = EstimateBytes(&s, model->size);
  PetscFunctionReturn(0);
}

/* The generators refuse a model over the limit before they allocate (the YAML reader checks first, to
   point at the count in the file). */
PetscErrorCode MbsModelCheckGeneratorSize(MbsModel model, const char what[], const char name[],
                                          const MbsModelSize *added)
{
  PetscBool fits;
  char      why[256];

  PetscFunctionBegin;
  PetscCall(MbsModelCheckSize(model, added, &fits, why, sizeof(why)));
  PetscCheck(fits, PetscObjectComm((PetscObject)model), PETSC_ERR_MEM, "%s '%s': the model would not fit: %s", what,
             name, why);
  PetscFunctionReturn(0);
}

static PetscErrorCode CheckGroupName(MbsModel model, const char what[], const char name[])
{
  MPI_Comm  comm;
  size_t    len;
  PetscBool isground;

  PetscFunctionBegin;
  PetscCall(MbsModelGetComm(model, &comm));
  PetscCheck(name && name[0], comm, PETSC_ERR_ARG_WRONG, "%s: a name is required (members are named after it)", what);
  PetscCall(PetscStrlen(name, &len));
  PetscCheck(len + 48 < MBS_GEN_NAME_LEN, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "%s '%.40s...': the name is longer than %d characters", what, name, MBS_GEN_NAME_LEN - 48);
  PetscCall(PetscStrcmp(name, "ground", &isground));
  PetscCheck(!isground, comm, PETSC_ERR_ARG_WRONG, "%s: the name 'ground' is reserved for the fixed ground", what);
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddRigidChain - Adds a chain of rigid links (director rigid bodies) joined end to end by
  spherical or revolute joints, its first link joined to the ground.

  Logically Collective (every rank adds the same bodies)

  Input Parameters:
+ model - the model
. name - chain name; link i is named "<name>.<i>", i = 0 .. count-1
. count - number of links, positive
. mass - mass of each link
. inertia - principal moments of inertia [J1, J2, J3] of each link about its centre of mass; J3 is the
            moment about the link's own axis (each J_i < J_j + J_k, see `MbsModelAddRigidBody()`)
. length - length of each link (distance between its two joint points)
. start - world position of the joint of link 0 to the ground
. direction - direction of the straight initial chain (normalized here)
. joint - `MBS_CHAIN_JOINT_SPHERICAL` or `MBS_CHAIN_JOINT_REVOLUTE`
- axis - revolute only: hinge axis in the world frame, not parallel to `direction` (ignored, may be NULL, for spherical
joints)

  Output Parameter:
. first_body - index of link 0 (may be NULL); link i is body first_body + i

  Notes:
  Every link starts with the same orientation: d3 = direction (the link axis); for revolute joints d1 is
  the component of `axis` orthogonal to `direction`, otherwise d1 is orthogonal to d3 along the coordinate
  axis least aligned with it; d2 = d3 x d1. Link i has its centre of mass at start + (i + 1/2) length d3,
  its start point at X = (0, 0, -length/2) and its end point at X = (0, 0, length/2) (body frame), and
  starts at rest. Joint 0 joins the world point `start` to link 0's start point (a spherical joint to
  the ground, or a revolute joint to the ground about `axis`); joint i joins link i-1's end point to link
  i's start point. The initial state satisfies every constraint to round-off.

  For each link the generator adds the body (with its internal-constraint element) and then its joint,
  so link i's internal element and joint are elements e0 + 2i and e0 + 2i + 1, e0 the number of elements
  before the call.

  Level: intermediate

.seealso: `MbsModelAddChain()`, `MbsModelAddRigidBody()`, `MbsModelAddSpherical()`, `MbsModelAddRevolute()`
@*/
PetscErrorCode MbsModelAddRigidChain(MbsModel model, const char name[], PetscInt count, PetscReal mass,
                                     const PetscReal inertia[3], PetscReal length, const PetscReal start[3],
                                     const PetscReal direction[3], MbsChainJointType joint, const PetscReal axis[3],
                                     PetscInt *first_body)
{
  MPI_Comm  comm;
  PetscReal u[3], d1[3], d2[3], R[9], n, axis_body[3] = {0, 0, 0}, axis_world[3] = {0, 0, 0};
  PetscReal Xs[3] = {0, 0, -0.5 * length}, Xe[3] = {0, 0, 0.5 * length};
  PetscInt  prev = MBS_GROUND, body;
  char      bname[MBS_GEN_NAME_LEN];

  PetscFunctionBegin;
  PetscCall(MbsModelGetComm(model, &comm));
  PetscCall(CheckGroupName(model, "Rigid chain", name));
  PetscCheck(count > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Rigid chain '%s': count must be positive, got %" PetscInt_FMT,
             name, count);
  PetscCheck(mass > 0 && PetscIsNormalReal(mass), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Rigid chain '%s': mass must be positive and finite, got %g", name, (double)mass);
  PetscCheck(length > 0 && PetscIsNormalReal(length), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Rigid chain '%s': length must be positive and finite, got %g", name, (double)length);
  PetscCheck(inertia && MbsVec3IsFinite(inertia), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Rigid chain '%s': the moments of inertia must be finite", name);
  for (int i = 0; i < 3; i++)
    PetscCheck(
      inertia[i] > 0 && inertia[i] < inertia[(i + 1) % 3] + inertia[(i + 2) % 3], comm, PETSC_ERR_ARG_OUTOFRANGE,
      "Rigid chain '%s': principal moments of inertia must be positive with J%d < J%d + J%d, got (%g, %g, %g)", name,
      i + 1, (i + 1) % 3 + 1, (i + 2) % 3 + 1, (double)inertia[0], (double)inertia[1], (double)inertia[2]);
  PetscCheck(start && MbsVec3IsFinite(start), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Rigid chain '%s': start must be a finite vector", name);
  PetscCheck(direction && MbsVec3IsFinite(direction), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Rigid chain '%s': direction must be a finite vector", name);
  n = MbsVec3Norm(direction);
  PetscCheck(n > 0 && PetscIsNormalReal(n), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Rigid chain '%s': direction must be a non-zero vector", name);
  for (int i = 0; i < 3; i++) u[i] = direction[i] / n;
  {
    MbsModelSize added;

    PetscCall(PetscMemzero(&added, sizeof(added)));
    MbsModelSizeRigidChain(&added, (PetscReal)count, joint);
    PetscCall(MbsModelCheckGeneratorSize(model, "Rigid chain", name, &added));
  }
  if (joint == MBS_CHAIN_JOINT_REVOLUTE) {
    PetscReal an, along, perp;

    PetscCheck(axis && MbsVec3IsFinite(axis), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "Rigid chain '%s': a revolute chain needs a finite hinge axis", name);
    an = MbsVec3Norm(axis);
    PetscCheck(an > 0 && PetscIsNormalReal(an), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "Rigid chain '%s': the hinge axis must be a non-zero vector", name);
    for (int i = 0; i < 3; i++) axis_world[i] = axis[i] / an;
    along = MbsVec3Dot(axis_world, u);
    for (int i = 0; i < 3; i++) d1[i] = axis_world[i] - along * u[i];
    perp = MbsVec3Norm(d1);
    /* a hinge along the links would let the straight chain only spin about itself */
    PetscCheck(
      perp > 1e-8, comm, PETSC_ERR_ARG_OUTOFRANGE,
      "Rigid chain '%s': the hinge axis (%g, %g, %g) is parallel to the chain direction; the chain could not bend",
      name, (double)axis[0], (double)axis[1], (double)axis[2]);
    for (int i = 0; i < 3; i++) d1[i] /= perp;
  } else {
    PetscReal t[3] = {0, 0, 0}, along, perp;
    int       k    = 0;

    PetscCheck(joint == MBS_CHAIN_JOINT_SPHERICAL, comm, PETSC_ERR_ARG_OUTOFRANGE,
               "Rigid chain '%s': unknown joint type %d", name, (int)joint);
    for (int i = 1; i < 3; i++)
      if (PetscAbsReal(u[i]) < PetscAbsReal(u[k])) k = i;
    t[k]  = 1.0;
    along = MbsVec3Dot(t, u);
    for (int i = 0; i < 3; i++) d1[i] = t[i] - along * u[i];
    perp = MbsVec3Norm(d1);
    for (int i = 0; i < 3; i++) d1[i] /= perp;
  }
  MbsVec3Cross(u, d1, d2);
  for (int i = 0; i < 3; i++) {
    R[3 * i + 0] = d1[i];
    R[3 * i + 1] = d2[i];
    R[3 * i + 2] = u[i];
  }
  /* the hinge axis in the common body frame of the links: its components along d1, d2, d3 */
  axis_body[0] = MbsVec3Dot(axis_world, d1);
  axis_body[1] = MbsVec3Dot(axis_world, d2);
  axis_body[2] = MbsVec3Dot(axis_world, u);
  for (PetscInt i = 0; i < count; i++) {
    const PetscReal s      = ((PetscReal)i + 0.5) * length;
    const PetscReal phi[3] = {start[0] + s * u[0], start[1] + s * u[1], start[2] + s * u[2]};

    PetscCall(PetscSNPrintf(bname, sizeof(bname), "%s.%" PetscInt_FMT, name, i));
    PetscCall(MbsModelAddRigidBody(model, bname, mass, inertia, phi, R, NULL, NULL, &body));
    if (i == 0 && first_body) *first_body = body;
    if (joint == MBS_CHAIN_JOINT_REVOLUTE) {
      if (prev == MBS_GROUND)
        PetscCall(MbsModelAddRevolute(model, MBS_GROUND, start, axis_world, body, Xs, axis_body, NULL));
      else
        PetscCall(MbsModelAddRevolute(model, prev, Xe, axis_body, body, Xs, axis_body, NULL));
    } else
      PetscCall(MbsModelAddSpherical(model, prev, prev == MBS_GROUND ? start : Xe, body, Xs, NULL));
    prev = body;
  }
  PetscFunctionReturn(0);
}

/* fixed[] as flags per node; a node listed twice or out of range is the caller's error. */
static PetscErrorCode MarkFixed(MbsModel model, const char what[], const char name[], PetscInt nnodes, PetscInt nfixed,
                                const PetscInt fixed[], PetscBool **is_fixed)
{
  MPI_Comm comm;

  PetscFunctionBegin;
  PetscCall(MbsModelGetComm(model, &comm));
  PetscCheck(nfixed >= 0 && (nfixed == 0 || fixed), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "%s '%s': %" PetscInt_FMT " fixed nodes without a list", what, name, nfixed);
  PetscCall(PetscCalloc1(nnodes, is_fixed));
  for (PetscInt k = 0; k < nfixed; k++) {
    const PetscInt node = fixed[k];

    if (node < 0 || node >= nnodes || (*is_fixed)[node]) {
      PetscCall(PetscFree(*is_fixed));
      PetscCheck(node >= 0 && node < nnodes, comm, PETSC_ERR_ARG_OUTOFRANGE,
                 "%s '%s': fixed node %" PetscInt_FMT " does not exist (nodes 0..%" PetscInt_FMT ")", what, name, node,
                 nnodes - 1);
      SETERRQ(comm, PETSC_ERR_ARG_WRONG, "%s '%s': node %" PetscInt_FMT " is listed twice as fixed", what, name, node);
    }
    (*is_fixed)[node] = PETSC_TRUE;
  }
  PetscFunctionReturn(0);
}

/* Node (i, j) of a net at origin + i step_i + j step_j, computed the same way wherever it is needed. */
static void NetPosition(const PetscReal origin[3], const PetscReal step_i[3], const PetscReal step_j[3], PetscInt i,
                        PetscInt j, PetscReal x[3])
{
  for (int l = 0; l < 3; l++) x[l] = origin[l] + (PetscReal)i * step_i[l] + (PetscReal)j * step_j[l];
}

static PetscErrorCode AddNetMembers(MbsModel model, const char name[], PetscInt nx, PetscInt ny, PetscReal mass,
                                    const PetscReal origin[3], const PetscReal step_i[3], const PetscReal step_j[3],
                                    PetscReal len_i, PetscReal len_j, PetscInt nfixed, const PetscInt fixed[],
                                    const PetscBool is_fixed[], PetscInt *first_body)
{
  PetscInt  first = -1, body;
  PetscReal x[3];
  char      bname[MBS_GEN_NAME_LEN];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < nx; i++) {
    for (PetscInt j = 0; j < ny; j++) {
      NetPosition(origin, step_i, step_j, i, j, x);
      PetscCall(PetscSNPrintf(bname, sizeof(bname), "%s.%" PetscInt_FMT ".%" PetscInt_FMT, name, i, j));
      PetscCall(MbsModelAddParticle(model, bname, mass, x, NULL, &body));
      if (i == 0 && j == 0) first = body;
    }
  }
  for (PetscInt i = 0; i + 1 < nx; i++)
    for (PetscInt j = 0; j < ny; j++) {
      const PetscInt a = i * ny + j, b = a + ny;

      if (!(is_fixed[a] && is_fixed[b]))
        PetscCall(MbsModelAddRod(model, first + a, NULL, first + b, NULL, len_i, NULL));
    }
  for (PetscInt i = 0; i < nx; i++)
    for (PetscInt j = 0; j + 1 < ny; j++) {
      const PetscInt a = i * ny + j, b = a + 1;

      if (!(is_fixed[a] && is_fixed[b]))
        PetscCall(MbsModelAddRod(model, first + a, NULL, first + b, NULL, len_j, NULL));
    }
  for (PetscInt k = 0; k < nfixed; k++) {
    NetPosition(origin, step_i, step_j, fixed[k] / ny, fixed[k] % ny, x);
    PetscCall(MbsModelAddFixedPoint(model, first + fixed[k], NULL, x, NULL));
  }
  if (first_body) *first_body = first;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddNet - Adds a rectangular net of particles joined by rods along the grid lines, with
  chosen nodes fixed at their initial positions.

  Logically Collective (every rank adds the same bodies)

  Input Parameters:
+ model - the model
. name - net name; node (i, j) is the particle "<name>.<i>.<j>"
. nx, ny - numbers of nodes along the two grid directions, positive
. mass - mass of each node
. origin - initial position of node (0, 0)
. step_i, step_j - the grid's edge vectors: node (i, j) starts at origin + i step_i + j step_j, at rest;
                   non-zero and not parallel
. nfixed - number of fixed nodes
- fixed - the fixed nodes, each as i ny + j (each at most once; may be NULL if nfixed is 0)

  Output Parameter:
. first_body - index of node (0, 0) (may be NULL); node (i, j) is body first_body + i ny + j

  Notes:
  The rods have the lengths |step_i| and |step_j|. A rod between two fixed nodes is left out: it could
  not move, and its constraint would repeat those of the fixed points (a singular Jacobian). For the same
  reason no shear diagonals are added: a flat net of triangles has more rods than in-plane degrees of
  freedom. Note that a straight grid line between two fixed nodes with free nodes in between is taut and
  also makes the constraints redundant: fix whole edges, single corners, or corners not on a common grid
  line.

  Elements are added in this order after the bodies: the rods (i, j)-(i+1, j) for i = 0..nx-2, j =
  0..ny-1 (i outer), then the rods (i, j)-(i, j+1) for i = 0..nx-1, j = 0..ny-2 (i outer), each left out
  when both of its nodes are fixed, then one fixed point (`MbsModelAddFixedPoint()`) per fixed node in
  the order of `fixed`.

  Level: intermediate

.seealso: `MbsModelAddChain()`, `MbsModelAddRodNetwork()`, `MbsModelAddFixedPoint()`
@*/
PetscErrorCode MbsModelAddNet(MbsModel model, const char name[], PetscInt nx, PetscInt ny, PetscReal mass,
                              const PetscReal origin[3], const PetscReal step_i[3], const PetscReal step_j[3],
                              PetscInt nfixed, const PetscInt fixed[], PetscInt *first_body)
{
  MPI_Comm       comm;
  PetscReal      len_i, len_j, normal[3];
  PetscBool     *is_fixed;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(MbsModelGetComm(model, &comm));
  PetscCall(CheckGroupName(model, "Net", name));
  PetscCheck(nx > 0 && ny > 0, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Net '%s': the node counts must be positive, got %" PetscInt_FMT " x %" PetscInt_FMT, name, nx, ny);
  PetscCheck(nx <= PETSC_MAX_INT / ny, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Net '%s': %" PetscInt_FMT " x %" PetscInt_FMT
             " nodes overflow PetscInt (configure PETSc with 64-bit indices)",
             name, nx, ny);
  PetscCheck(mass > 0 && PetscIsNormalReal(mass), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Net '%s': mass must be positive and finite, got %g", name, (double)mass);
  PetscCheck(origin && MbsVec3IsFinite(origin) && step_i && MbsVec3IsFinite(step_i) && step_j &&
               MbsVec3IsFinite(step_j),
             comm, PETSC_ERR_ARG_OUTOFRANGE, "Net '%s': origin and edge vectors must be finite", name);
  len_i = MbsVec3Norm(step_i);
  len_j = MbsVec3Norm(step_j);
  PetscCheck(len_i > 0 && len_j > 0 && PetscIsNormalReal(len_i) && PetscIsNormalReal(len_j), comm,
             PETSC_ERR_ARG_OUTOFRANGE, "Net '%s': the edge vectors must be non-zero", name);
  MbsVec3Cross(step_i, step_j, normal);
  PetscCheck(MbsVec3Norm(normal) > 1e-10 * len_i * len_j, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Net '%s': the edge vectors (%g, %g, %g) and (%g, %g, %g) are parallel", name, (double)step_i[0],
             (double)step_i[1], (double)step_i[2], (double)step_j[0], (double)step_j[1], (double)step_j[2]);
  {
    MbsModelSize added;

    PetscCall(PetscMemzero(&added, sizeof(added)));
    MbsModelSizeNet(&added, (PetscReal)nx, (PetscReal)ny, (PetscReal)nfixed);
    PetscCall(MbsModelCheckGeneratorSize(model, "Net", name, &added));
  }
  PetscCall(MarkFixed(model, "Net", name, nx * ny, nfixed, fixed, &is_fixed));
  ierr =
    AddNetMembers(model, name, nx, ny, mass, origin, step_i, step_j, len_i, len_j, nfixed, fixed, is_fixed, first_body);
  PetscCall(PetscFree(is_fixed));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

static PetscErrorCode AddNetworkMembers(MbsModel model, const char name[], PetscInt nnodes, const PetscReal x[],
                                        const PetscInt node_id[], PetscInt nedges, const PetscInt edge[],
                                        const PetscReal mass[], const PetscReal length[], PetscInt nfixed,
                                        const PetscInt fixed[], const PetscBool is_fixed[], PetscInt *first_body)
{
  PetscInt first = -1, body;
  char     bname[MBS_GEN_NAME_LEN];

  PetscFunctionBegin;
  for (PetscInt k = 0; k < nnodes; k++) {
    PetscCall(PetscSNPrintf(bname, sizeof(bname), "%s.%" PetscInt_FMT, name, node_id ? node_id[k] : k));
    PetscCall(MbsModelAddParticle(model, bname, mass[k], &x[3 * k], NULL, &body));
    if (k == 0) first = body;
  }
  for (PetscInt e = 0; e < nedges; e++) {
    const PetscInt a = edge[2 * e], b = edge[2 * e + 1];

    if (!(is_fixed[a] && is_fixed[b]))
      PetscCall(MbsModelAddRod(model, first + a, NULL, first + b, NULL, length[e], NULL));
  }
  for (PetscInt k = 0; k < nfixed; k++)
    PetscCall(MbsModelAddFixedPoint(model, first + fixed[k], NULL, &x[3 * fixed[k]], NULL));
  if (first_body) *first_body = first;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddRodNetwork - Adds particles at given nodes joined by rods along given edges, with masses
  lumped from a line density and chosen nodes fixed: the model of a mesh of lines, triangles or
  quadrangles.

  Logically Collective (every rank adds the same bodies)

  Input Parameters:
+ model - the model
. name - network name; node k is the particle "<name>.<node_id[k]>" ("<name>.<k>" without node_id)
. nnodes - number of nodes, positive
. x - initial node positions, 3 per node (at rest)
. node_id - the number used in each node's name, e.g. its mesh tag (unique; may be NULL)
. nedges - number of edges
. edge - the edges, two node indices (0..nnodes-1) each; each pair at most once, on distinct positions
. line_density - mass per length of the rods, >= 0 (kg/m); each rod's mass goes half to each end node
. node_mass - mass added to every node, >= 0 (kg)
. nfixed - number of fixed nodes
- fixed - the node indices fixed at their initial positions (each at most once; may be NULL if nfixed is 0)

  Output Parameter:
. first_body - index of node 0 (may be NULL); node k is body first_body + k

  Notes:
  Node k gets the mass node_mass + line_density/2 times the sum of the lengths of its edges, which must
  be positive (a node on no edge needs node_mass > 0); the total mass is nnodes node_mass plus
  line_density times the total edge length. Each rod has its initial length. A rod between two fixed
  nodes is left out (it could not move, and its constraint would be redundant), but its mass is still
  lumped onto its nodes.

  Elements are added after the bodies: one rod per edge in the order of `edge` (skipping edges between
  two fixed nodes), then one fixed point (`MbsModelAddFixedPoint()`) per fixed node in the order of `fixed`.

  A flat sheet of triangles has more rods than in-plane degrees of freedom, so its constraint Jacobian
  is singular; use quadrangles or lines, or a curved surface.

  Level: intermediate

.seealso: `MbsModelAddNet()`, `MbsModelAddChain()`, `MbsModelAddFixedPoint()`
@*/
PetscErrorCode MbsModelAddRodNetwork(MbsModel model, const char name[], PetscInt nnodes, const PetscReal x[],
                                     const PetscInt node_id[], PetscInt nedges, const PetscInt edge[],
                                     PetscReal line_density, PetscReal node_mass, PetscInt nfixed,
                                     const PetscInt fixed[], PetscInt *first_body)
{
  MPI_Comm       comm;
  PetscReal     *mass, *length;
  PetscBool     *is_fixed = NULL;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  PetscCall(MbsModelGetComm(model, &comm));
  PetscCall(CheckGroupName(model, "Rod network", name));
  PetscCheck(nnodes > 0 && x, comm, PETSC_ERR_ARG_OUTOFRANGE, "Rod network '%s': needs at least one node", name);
  PetscCheck(nedges >= 0 && (nedges == 0 || edge), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Rod network '%s': %" PetscInt_FMT " edges without a list", name, nedges);
  PetscCheck(line_density >= 0 && (line_density == 0 || PetscIsNormalReal(line_density)), comm,
             PETSC_ERR_ARG_OUTOFRANGE, "Rod network '%s': line density must be non-negative and finite, got %g", name,
             (double)line_density);
  PetscCheck(node_mass >= 0 && (node_mass == 0 || PetscIsNormalReal(node_mass)), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Rod network '%s': node mass must be non-negative and finite, got %g", name, (double)node_mass);
  for (PetscInt k = 0; k < nnodes; k++)
    PetscCheck(MbsVec3IsFinite(&x[3 * k]), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "Rod network '%s': node %" PetscInt_FMT " has a non-finite position", name, node_id ? node_id[k] : k);
  {
    MbsModelSize added;

    PetscCall(PetscMemzero(&added, sizeof(added)));
    MbsModelSizeRodNetwork(&added, (PetscReal)nnodes, (PetscReal)nedges, (PetscReal)nfixed);
    PetscCall(MbsModelCheckGeneratorSize(model, "Rod network", name, &added));
  }
  PetscCall(PetscMalloc2(nnodes, &mass, nedges, &length));
  for (PetscInt k = 0; k < nnodes; k++) mass[k] = node_mass;
  for (PetscInt e = 0; e < nedges; e++) {
    const PetscInt a = edge[2 * e], b = edge[2 * e + 1];

    if (a < 0 || a >= nnodes || b < 0 || b >= nnodes || a == b) {
      PetscCall(PetscFree2(mass, length));
      SETERRQ(comm, PETSC_ERR_ARG_OUTOFRANGE,
              "Rod network '%s': edge %" PetscInt_FMT " joins nodes %" PetscInt_FMT " and %" PetscInt_FMT
              "; it needs two distinct nodes of 0..%" PetscInt_FMT,
              name, e, a, b, nnodes - 1);
    }
    {
      const PetscReal d[3] = {x[3 * b] - x[3 * a], x[3 * b + 1] - x[3 * a + 1], x[3 * b + 2] - x[3 * a + 2]};

      length[e] = MbsVec3Norm(d);
    }
    if (!(length[e] > 0 && PetscIsNormalReal(length[e]))) {
      PetscCall(PetscFree2(mass, length));
      SETERRQ(comm, PETSC_ERR_ARG_OUTOFRANGE,
              "Rod network '%s': edge %" PetscInt_FMT " joins nodes %" PetscInt_FMT " and %" PetscInt_FMT
              " at the same position; a rod needs a positive length",
              name, e, node_id ? node_id[a] : a, node_id ? node_id[b] : b);
    }
    mass[a] += 0.5 * line_density * length[e];
    mass[b] += 0.5 * line_density * length[e];
  }
  for (PetscInt k = 0; k < nnodes; k++) {
    if (!(mass[k] > 0 && PetscIsNormalReal(mass[k]))) {
      const PetscInt id = node_id ? node_id[k] : k;

      PetscCall(PetscFree2(mass, length));
      SETERRQ(comm, PETSC_ERR_ARG_OUTOFRANGE,
              "Rod network '%s': node %" PetscInt_FMT " gets no mass (it is on no edge and the node mass is 0)", name,
              id);
    }
  }
  ierr = MarkFixed(model, "Rod network", name, nnodes, nfixed, fixed, &is_fixed);
  if (!ierr) {
    ierr = AddNetworkMembers(model, name, nnodes, x, node_id, nedges, edge, mass, length, nfixed, fixed, is_fixed,
                             first_body);
    PetscCall(PetscFree(is_fixed));
  }
  PetscCall(PetscFree2(mass, length));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

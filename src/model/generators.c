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
#include "model/memory.h"
#include <gglmbs/elements/vec3.h>

#define MBS_GEN_NAME_LEN 256

static PetscErrorCode MbsNormalize(MbsModel model, const PetscReal v[3], PetscReal u[3], const char what[])
{
  const PetscReal n = MbsVec3Norm(v);

  PetscFunctionBegin;
  PetscCheck(n > 0 && PetscIsNormalReal(n), PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "%s must be a non-zero finite vector", what);
  for (int i = 0; i < 3; i++) u[i] = v[i] / n;
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

/*@C
  MbsModelAddChain - Adds a chain of particles joined by rods, hanging from a fixed point.

  Logically Collective

  Input Parameters:
+ model - the model
. name - chain name; particle i is named "<name>.<i>", i = 0 .. count-1
. count - number of particles
. mass - mass of each particle
. length - length of each rod
. start - the fixed point (world)
- direction - direction of the straight initial chain (normalized here)

  Output Parameter:
. first_body - index of particle 0 (may be NULL)

  Notes:
  Particle i starts at start + (i+1) length direction; rod 0 joins the fixed point to particle 0.
@*/
PetscErrorCode MbsModelAddChain(MbsModel model, const char name[], PetscInt count, PetscReal mass, PetscReal length,
                                const PetscReal start[3], const PetscReal direction[3], PetscInt *first_body)
{
  PetscReal u[3];
  PetscInt  prev = MBS_GROUND, body;
  char      pname[256];

  PetscFunctionBegin;
  PetscCheck(count > 0, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "Chain '%s': count must be positive", name ? name : "");
  PetscCheck(length > 0 && PetscIsNormalReal(length), PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "Chain '%s': length must be positive and finite", name ? name : "");
  PetscCheck(MbsVec3IsFinite(start), PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "Chain '%s': start must be finite", name ? name : "");
  PetscCall(MbsNormalize(model, direction, u, "Chain direction"));
  {
    MbsModelSize added;

    PetscCall(PetscMemzero(&added, sizeof(added)));
    MbsModelSizeChain(&added, (PetscReal)count);
    PetscCall(MbsModelCheckGeneratorSize(model, "Chain", name ? name : "", &added));
  }
  for (PetscInt i = 0; i < count; i++) {
    const PetscReal x[3] = {start[0] + (i + 1) * length * u[0], start[1] + (i + 1) * length * u[1],
                            start[2] + (i + 1) * length * u[2]};
    PetscCall(PetscSNPrintf(pname, sizeof(pname), "%s.%" PetscInt_FMT, name ? name : "chain", i));
    PetscCall(MbsModelAddParticle(model, pname, mass, x, NULL, &body));
    if (i == 0 && first_body) *first_body = body;
    PetscCall(MbsModelAddRod(model, prev, prev == MBS_GROUND ? start : NULL, body, NULL, length, NULL));
    prev = body;
  }
  if (model->build != MBS_BUILD_LOCAL) model->chain_bodies += count; /* once, in the graph pass of two */
  PetscFunctionReturn(0);
}

/* Two segments whose directions' cosine is at least 1 - MBS_BEAM_STRAIGHT go on straight and share their node */
#define MBS_BEAM_STRAIGHT 1e-12

/* Whether the polyline turns at point s (0 < s < npoints - 1): a corner, two nodes welded. The same arithmetic as the
   YAML reader's count of corners (src/io/yamlgroups.c), so that both count the same nodes. */
static PetscBool MbsBeamCorner(const PetscReal points[], PetscInt s)
{
  PetscReal d[3], prev[3], l, c;

  for (int j = 0; j < 3; j++) d[j] = points[3 * (s + 1) + j] - points[3 * s + j];
  for (int j = 0; j < 3; j++) prev[j] = points[3 * s + j] - points[3 * (s - 1) + j];
  l = PetscSqrtReal(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  c = (prev[0] * d[0] + prev[1] * d[1] + prev[2] * d[2]) /
      (l * PetscSqrtReal(prev[0] * prev[0] + prev[1] * prev[1] + prev[2] * prev[2]));
  return (PetscBool)(c < 1.0 - MBS_BEAM_STRAIGHT);
}

const char *const MbsBeamSupports[] = {"free", "pinned", "clamped", "MbsBeamSupport", "MBS_BEAM_", NULL};

/* v turned by the smallest rotation that takes the unit vector a to the unit vector b (about a x b) */
static void MbsBeamTransport(const PetscReal a[3], const PetscReal b[3], const PetscReal v[3], PetscReal out[3])
{
  PetscReal k[3], kv[3], s, c, kdv;

  MbsVec3Cross(a, b, k);
  s = MbsVec3Norm(k);
  c = MbsVec3Dot(a, b);
  if (s < 1e-300) {
    for (int i = 0; i < 3; i++) out[i] = v[i];
    return;
  }
  for (int i = 0; i < 3; i++) k[i] /= s;
  MbsVec3Cross(k, v, kv);
  kdv = MbsVec3Dot(k, v);
  for (int i = 0; i < 3; i++) out[i] = v[i] * c + kv[i] * s + k[i] * kdv * (1.0 - c);
}

static PetscErrorCode MbsBeamCheckSection(MbsModel model, const char name[], const MbsBeamSection *sec)
{
  const char *const keys[9] = {"EA", "GA1", "GA2", "EI1", "EI2", "GJ", "rhoA", "rhoI1", "rhoI2"};
  const PetscReal   val[9]  = {sec->EA, sec->GA1,  sec->GA2,   sec->EI1,  sec->EI2,
                               sec->GJ, sec->rhoA, sec->rhoI1, sec->rhoI2};

  PetscFunctionBegin;
  for (int i = 0; i < 9; i++)
    PetscCheck(val[i] > 0 && PetscIsNormalReal(val[i]), PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
               "Beam '%s': %s must be positive and finite, got %g", name, keys[i], (double)val[i]);
  PetscFunctionReturn(0);
}

/* The part of v across the unit vector t, normalized into e; 0 when v is (nearly) along t */
static int MbsBeamAcross(const PetscReal v[3], const PetscReal t[3], PetscReal e[3])
{
  const PetscReal along = MbsVec3Dot(v, t), nv = MbsVec3Norm(v);
  PetscReal       perp;

  for (int i = 0; i < 3; i++) e[i] = v[i] - along * t[i];
  perp = MbsVec3Norm(e);
  if (!(perp > 1e-8 * nv)) return 0;
  for (int i = 0; i < 3; i++) e[i] /= perp;
  return 1;
}

/* The section's first axis across the unit direction t: the part of d1 across it, or (no d1, or d1 along t) that of
   the coordinate axis least aligned with t */
static void MbsBeamSectionAxis(const PetscReal d1[3], const PetscReal t[3], PetscReal e[3])
{
  PetscReal c[3] = {0, 0, 0};
  int       k    = 0;

  if (d1 && MbsBeamAcross(d1, t, e)) return;
  for (int i = 1; i < 3; i++)
    if (PetscAbsReal(t[i]) < PetscAbsReal(t[k])) k = i;
  c[k] = 1;
  (void)MbsBeamAcross(c, t, e);
}

/* A beam element's data: the section's stiffnesses, the length from the nodes, the section axis in node A's frame
   (NULL: node A's d1) */
static void MbsBeamElementData(const MbsBeamSection *section, const PetscReal axis_a[3], MbsElemData *d)
{
  PetscMemzero(d, sizeof(*d));
  if (axis_a)
    for (int i = 0; i < 3; i++) d->axis_a[i] = axis_a[i];
  d->beam_stiffness[0] = section->GA1;
  d->beam_stiffness[1] = section->GA2;
  d->beam_stiffness[2] = section->EA;
  d->beam_stiffness[3] = section->EI1;
  d->beam_stiffness[4] = section->EI2;
  d->beam_stiffness[5] = section->GJ;
  d->length            = MBS_ELEM_UNSET;
}

/* MbsModelAddBeam()'s bodies and elements, segment s having ns[s] elements (the caller frees ns whatever happens) */
static PetscErrorCode MbsBeamAddNodes(MbsModel model, const char name[], PetscInt npoints, const PetscReal points[],
                                      const PetscInt ns[], const MbsBeamSection *section, const PetscReal d1[3],
                                      MbsBeamSupport start, MbsBeamSupport end, const MbsElementType *beam,
                                      PetscInt *first_body, PetscInt *nnodes)
{
  const PetscInt nseg = npoints - 1;
  PetscInt       node = 0, prev = -1, first = -1;
  PetscReal      dprev[3] = {0, 0, 0}, e1[3] = {0, 0, 0};
  char           bname[MBS_GEN_NAME_LEN];

  PetscFunctionBegin;
  for (PetscInt s = 0; s < nseg; s++) {
    const PetscReal *P = points + 3 * s;
    PetscReal        t[3], l, d2[3], R[9];
    PetscBool        corner = PETSC_FALSE;

    for (int i = 0; i < 3; i++) t[i] = points[3 * (s + 1) + i] - P[i];
    l = MbsVec3Norm(t);
    for (int i = 0; i < 3; i++) t[i] /= l;
    if (s == 0) /* the section's first axis: given (across the beam: checked above), or the least aligned axis */
      MbsBeamSectionAxis(d1, t, e1);
    else { /* carried round the turn; the projection removes round-off only */
      PetscReal tr[3];
      corner = MbsBeamCorner(points, s);
      MbsBeamTransport(dprev, t, e1, tr);
      (void)MbsBeamAcross(tr, t, e1);
    }
    MbsVec3Cross(t, e1, d2);
    for (int i = 0; i < 3; i++) {
      R[3 * i + 0] = e1[i];
      R[3 * i + 1] = d2[i];
      R[3 * i + 2] = t[i];
    }
    for (PetscInt j = (s == 0 || corner) ? 0 : 1; j <= ns[s]; j++) {
      const PetscReal le = l / (PetscReal)ns[s];
      /* the node's share: half of each of its elements; a node shared by two straight segments has one of each */
      const PetscReal share = (j == 0 || j == ns[s]) ? 0.5 * le : le;
      PetscReal       x[3], m, J[3], sh = share;
      PetscInt        body;

      if (j == ns[s] && s + 1 < nseg && !MbsBeamCorner(points, s + 1)) { /* a node shared with the next segment */
        PetscReal tn[3];
        for (int i = 0; i < 3; i++) tn[i] = points[3 * (s + 2) + i] - points[3 * (s + 1) + i];
        sh += 0.5 * MbsVec3Norm(tn) / (PetscReal)ns[s + 1];
      }
      m    = section->rhoA * sh;
      J[0] = section->rhoI1 * sh + m * sh * sh / 12.0;
      J[1] = section->rhoI2 * sh + m * sh * sh / 12.0;
      J[2] = (section->rhoI1 + section->rhoI2) * sh;
      for (int i = 0; i < 3; i++) x[i] = P[i] + (PetscReal)j / (PetscReal)ns[s] * l * t[i];
      if (j == ns[s]) /* the segment's end exactly at its point */
        for (int i = 0; i < 3; i++) x[i] = points[3 * (s + 1) + i];
      PetscCall(PetscSNPrintf(bname, sizeof(bname), "%s.%" PetscInt_FMT, name, node));
      PetscCall(MbsModelAddRigidBody(model, bname, m, J, x, R, NULL, NULL, &body));
      if (node == 0) {
        first = body;
        if (start == MBS_BEAM_CLAMPED)
          PetscCall(MbsModelAddJoint(model, MBS_JOINT_WELD, body, NULL, NULL, MBS_GROUND, x, NULL, NULL));
        else if (start == MBS_BEAM_PINNED)
          PetscCall(MbsModelAddFixedPoint(model, body, NULL, x, NULL));
      }
      if (j == 0 && s > 0) { /* a rigid corner: weld to the previous segment's end node */
        PetscCall(MbsModelAddJoint(model, MBS_JOINT_WELD, prev, NULL, NULL, body, NULL, NULL, NULL));
      } else if (prev >= 0) {
        MbsElemData d;
        MbsBeamElementData(section, NULL, &d);
        PetscCall(MbsModelAddElement(model, beam, prev, body, &d, NULL));
      }
      prev = body;
      node++;
    }
    for (int i = 0; i < 3; i++) dprev[i] = t[i];
  }
  {
    PetscReal x[3];
    for (int i = 0; i < 3; i++) x[i] = points[3 * nseg + i];
    if (end == MBS_BEAM_CLAMPED)
      PetscCall(MbsModelAddJoint(model, MBS_JOINT_WELD, prev, NULL, NULL, MBS_GROUND, x, NULL, NULL));
    else if (end == MBS_BEAM_PINNED)
      PetscCall(MbsModelAddFixedPoint(model, prev, NULL, x, NULL));
  }
  *first_body = first;
  *nnodes     = node;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddBeam - Adds a geometrically exact beam (docs/beams.md) along a polyline: rigid nodes joined by beam
  elements, its mass lumped onto the nodes, its ends free, pinned or clamped.

  Logically Collective (every rank adds the same bodies)

  Input Parameters:
+ model - the model
. name - beam name; node k is named "<name>.<k>", k = 0 .. nnodes-1, in order along the beam
. npoints - points of the polyline, at least 2
. points - their world positions, 3 npoints numbers
. nelements - elements in all, at least npoints - 1; segment s gets a share in proportion to its length (at least one)
. section - stiffness and inertia per unit length, each positive
. d1 - the section's first principal axis on the first segment, world frame, not along it (NULL: the coordinate axis
       least aligned with the segment); each later segment carries it on by the smallest rotation that turns the
       previous segment's direction into its own
. start - `MBS_BEAM_FREE`, `MBS_BEAM_PINNED` or `MBS_BEAM_CLAMPED`: how node 0 is held
- end - how the last node is held

  Output Parameters:
+ first_body - index of node 0 (may be NULL); node k is body first_body + k
- nnodes - number of nodes (may be NULL)

  Notes:
  Every node is a rigid body with d3 along its segment, d1 the section's first axis and d2 = d3 x d1. The nodes of a
  segment of n_s elements of length l split it evenly; node k carries the share l_k of the beam (l/2 at a segment's
  ends, l inside): mass rhoA l_k and principal moments rhoI1 l_k + m l_k^2/12, rhoI2 l_k + m l_k^2/12 about d1, d2 and
  (rhoI1 + rhoI2) l_k about d3 (the m l_k^2/12 term is the second moment of the node's mass along the axis, which keeps
  the director mass regular and vanishes as the elements shrink). Where the polyline turns, the two segments' end nodes
  are two bodies at the same point, joined by a weld: a rigid corner. The initial state is stress free and at rest.

  Elements come in this order: for each node its body's director constraints; after node 0 the start support (if
  any), after node k > 0 the beam element from node k-1, or at a corner the weld of node k-1 to node k; last the end
  support (if any).

  Level: intermediate

.seealso: `MbsBeamSection`, `MbsModelAddRigidChain()`, `MbsModelAddRigidBody()`
@*/
PetscErrorCode MbsModelAddBeam(MbsModel model, const char name[], PetscInt npoints, const PetscReal points[],
                               PetscInt nelements, const MbsBeamSection *section, const PetscReal d1[3],
                               MbsBeamSupport start, MbsBeamSupport end, PetscInt *first_body, PetscInt *nnodes)
{
  MPI_Comm              comm;
  const MbsElementType *beam;
  PetscInt             *ns, nseg = npoints - 1, node = 0, first = -1, assigned = 0;
  PetscReal             total = 0;

  PetscFunctionBegin;
  PetscCall(MbsModelGetComm(model, &comm));
  PetscCall(CheckGroupName(model, "Beam", name));
  PetscCheck(npoints >= 2 && points, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Beam '%s': at least two points are needed, got %" PetscInt_FMT, name, npoints);
  PetscCheck(nelements >= nseg, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Beam '%s': %" PetscInt_FMT " elements for %" PetscInt_FMT " segments; each segment needs at least one",
             name, nelements, nseg);
  PetscCheck(section, comm, PETSC_ERR_ARG_NULL, "Beam '%s': a section is required", name);
  PetscCall(MbsBeamCheckSection(model, name, section));
  PetscCheck(start >= MBS_BEAM_FREE && start <= MBS_BEAM_CLAMPED && end >= MBS_BEAM_FREE && end <= MBS_BEAM_CLAMPED,
             comm, PETSC_ERR_ARG_OUTOFRANGE, "Beam '%s': unknown support", name);
  for (PetscInt i = 0; i < npoints; i++)
    PetscCheck(MbsVec3IsFinite(points + 3 * i), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "Beam '%s': point %" PetscInt_FMT " is not finite", name, i);
  /* every check before anything is allocated or added */
  for (PetscInt s = 0; s < nseg; s++) {
    PetscReal d[3], l;
    for (int i = 0; i < 3; i++) d[i] = points[3 * (s + 1) + i] - points[3 * s + i];
    l = MbsVec3Norm(d);
    PetscCheck(l > 0 && PetscIsNormalReal(l), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "Beam '%s': points %" PetscInt_FMT " and %" PetscInt_FMT " coincide (a segment of zero length)", name, s,
               s + 1);
    if (s > 0) {
      PetscReal dp[3];
      for (int i = 0; i < 3; i++) dp[i] = points[3 * s + i] - points[3 * (s - 1) + i];
      PetscCheck(MbsVec3Dot(dp, d) / (l * MbsVec3Norm(dp)) > -1.0 + 1e-8, comm, PETSC_ERR_ARG_OUTOFRANGE,
                 "Beam '%s': the polyline turns back on itself at point %" PetscInt_FMT, name, s);
    } else if (d1) {
      PetscReal c[3];
      PetscCheck(MbsVec3IsFinite(d1), comm, PETSC_ERR_ARG_OUTOFRANGE, "Beam '%s': d1 must be finite", name);
      MbsVec3Cross(d1, d, c);
      PetscCheck(MbsVec3Norm(c) > 1e-8 * MbsVec3Norm(d1) * l, comm, PETSC_ERR_ARG_OUTOFRANGE,
                 "Beam '%s': d1 (%g, %g, %g) lies along the beam; it must have a component across it", name,
                 (double)d1[0], (double)d1[1], (double)d1[2]);
    }
    total += l;
  }
  {
    MbsModelSize added;

    PetscCall(PetscMemzero(&added, sizeof(added)));
    MbsModelSizeBeam(&added, (PetscReal)(nelements + nseg), (PetscReal)nelements, (PetscReal)(nseg - 1),
                     (PetscReal)((start == MBS_BEAM_CLAMPED  ? 6
                                  : start == MBS_BEAM_PINNED ? 3
                                                             : 0) +
                                 (end == MBS_BEAM_CLAMPED  ? 6
                                  : end == MBS_BEAM_PINNED ? 3
                                                           : 0)));
    PetscCall(MbsModelCheckGeneratorSize(model, "Beam", name, &added));
  }
  PetscCall(MbsElementTypeFind("springs", "beam", &beam));
  PetscCheck(beam, comm, PETSC_ERR_PLIB, "The beam element type is not registered");
  PetscCall(PetscMalloc1(nseg, &ns));
  /* every segment one element, the rest in proportion to the lengths (largest remainders) */
  {
    PetscReal rem_best;
    for (PetscInt s = 0; s < nseg; s++) {
      PetscReal d[3];
      for (int i = 0; i < 3; i++) d[i] = points[3 * (s + 1) + i] - points[3 * s + i];
      ns[s] = 1 + (PetscInt)PetscFloorReal((PetscReal)(nelements - nseg) * MbsVec3Norm(d) / total);
      assigned += ns[s];
    }
    while (assigned < nelements) {
      PetscInt best = 0;
      rem_best      = -1;
      for (PetscInt s = 0; s < nseg; s++) {
        PetscReal d[3], r;
        for (int i = 0; i < 3; i++) d[i] = points[3 * (s + 1) + i] - points[3 * s + i];
        r = (PetscReal)nelements * MbsVec3Norm(d) / total - (PetscReal)ns[s];
        if (r > rem_best) rem_best = r, best = s;
      }
      ns[best]++;
      assigned++;
    }
  }

  {
    PetscErrorCode ierr =
      MbsBeamAddNodes(model, name, npoints, points, ns, section, d1, start, end, beam, &first, &node);
    PetscCall(PetscFree(ns));
    PetscCall(ierr);
  }
  if (first_body) *first_body = first;
  if (nnodes) *nnodes = node;
  PetscFunctionReturn(0);
}

/* MbsModelAddBeamNetwork()'s bodies and elements, from each node's share of length and first direction (the caller
   frees them whatever happens) */
static PetscErrorCode MbsBeamNetworkAdd(MbsModel model, const char name[], PetscInt nnodes, const PetscReal x[],
                                        const PetscInt node_id[], PetscInt nedges, const PetscInt edge[],
                                        const MbsBeamSection *section, const PetscReal d1[3], PetscInt nclamped,
                                        const PetscInt clamped[], PetscInt npinned, const PetscInt pinned[],
                                        const MbsElementType *beam, const PetscReal share[], const PetscReal dir[],
                                        PetscInt *first_body)
{
  PetscInt first = -1;
  char     bname[MBS_GEN_NAME_LEN];

  PetscFunctionBegin;
  for (PetscInt k = 0; k < nnodes; k++) {
    const PetscReal *t = dir + 3 * k, sh = share[k], m = section->rhoA * sh;
    const PetscReal  J[3] = {section->rhoI1 * sh + m * sh * sh / 12.0, section->rhoI2 * sh + m * sh * sh / 12.0,
                             (section->rhoI1 + section->rhoI2) * sh};
    PetscReal        e1[3], e2[3], R[9];
    PetscInt         body;
    MbsBeamSectionAxis(d1, t, e1);
    MbsVec3Cross(t, e1, e2);
    for (int i = 0; i < 3; i++) R[3 * i] = e1[i], R[3 * i + 1] = e2[i], R[3 * i + 2] = t[i];
    PetscCall(PetscSNPrintf(bname, sizeof(bname), "%s.%" PetscInt_FMT, name, node_id ? node_id[k] : k));
    PetscCall(MbsModelAddRigidBody(model, bname, m, J, &x[3 * k], R, NULL, NULL, &body));
    if (k == 0) first = body;
  }
  for (PetscInt e = 0; e < nedges; e++) {
    const PetscInt   a = edge[2 * e], b = edge[2 * e + 1];
    const PetscReal *ta = dir + 3 * a;
    PetscReal        t[3], l, e1[3], da1[3], da2[3], axis[3];
    MbsElemData      d;
    for (int i = 0; i < 3; i++) t[i] = x[3 * b + i] - x[3 * a + i];
    l = MbsVec3Norm(t);
    for (int i = 0; i < 3; i++) t[i] /= l;
    MbsBeamSectionAxis(d1, t, e1);
    /* node a's directors, as added above: the section axis e1 in them */
    MbsBeamSectionAxis(d1, ta, da1);
    MbsVec3Cross(ta, da1, da2);
    axis[0] = MbsVec3Dot(e1, da1);
    axis[1] = MbsVec3Dot(e1, da2);
    axis[2] = MbsVec3Dot(e1, ta);
    MbsBeamElementData(section, axis, &d);
    PetscCall(MbsModelAddElement(model, beam, first + a, first + b, &d, NULL));
  }
  for (PetscInt k = 0; k < nclamped; k++)
    PetscCall(MbsModelAddJoint(model, MBS_JOINT_WELD, first + clamped[k], NULL, NULL, MBS_GROUND, &x[3 * clamped[k]],
                               NULL, NULL));
  for (PetscInt k = 0; k < npinned; k++)
    PetscCall(MbsModelAddFixedPoint(model, first + pinned[k], NULL, &x[3 * pinned[k]], NULL));
  *first_body = first;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddBeamNetwork - Adds a network of beams (docs/beams.md): a rigid node at each given point, a beam element
  along each given edge, nodes clamped or pinned: the model of a Gmsh mesh of lines.

  Logically Collective (every rank adds the same bodies)

  Input Parameters:
+ model - the model
. name - network name; node k is the body "<name>.<node_id[k]>" ("<name>.<k>" without node_id)
. nnodes - number of nodes, positive, each on at least one edge
. x - node positions, 3 per node (at rest)
. node_id - the number in each node's name, e.g. its mesh tag (unique; may be NULL)
. nedges - number of edges
. edge - two node indices each, at distinct positions, each pair at most once
. section - stiffness and inertia per unit length (`MbsBeamSection`), the same for every element
. d1 - the sections' first principal axis, world frame (NULL: the coordinate axis least aligned with each element;
       also where d1 lies along an element)
. nclamped, clamped - nodes welded to the ground
- npinned, pinned - nodes whose centres are held in place, free to turn (not clamped ones)

  Output Parameter:
. first_body - index of node 0 (may be NULL); node k is body first_body + k

  Notes:
  Elements come in this order: each node's own director constraints (with its body), then one beam element per edge in
  the order of `edge`, then one weld per clamped node and one fixed point per pinned node, in the given orders.

  Every element's frame has e3 along it and e1 the part of d1 across it; each node may join elements in any
  directions (a junction), since an element carries its frame in both nodes' director bases. Node k has d3 along its
  first edge and d1 across it, and carries half of each of its elements: mass rhoA l_k and principal moments
  rhoI1 l_k + m l_k^2/12, rhoI2 l_k + m l_k^2/12 and (rhoI1 + rhoI2) l_k, l_k half the length of its elements (at a
  junction the rotary inertia of the crossing elements is lumped about the first one's axes, a difference of the
  order of the rotary inertia of a node's share).

  Level: intermediate

.seealso: `MbsModelAddBeam()`, `MbsModelAddRodNetwork()`
@*/
PetscErrorCode MbsModelAddBeamNetwork(MbsModel model, const char name[], PetscInt nnodes, const PetscReal x[],
                                      const PetscInt node_id[], PetscInt nedges, const PetscInt edge[],
                                      const MbsBeamSection *section, const PetscReal d1[3], PetscInt nclamped,
                                      const PetscInt clamped[], PetscInt npinned, const PetscInt pinned[],
                                      PetscInt *first_body)
{
  MPI_Comm              comm;
  const MbsElementType *beam;
  PetscReal            *share, *dir;
  PetscInt             *held, first = -1;

  PetscFunctionBegin;
  PetscCall(MbsModelGetComm(model, &comm));
  PetscCall(CheckGroupName(model, "Beam network", name));
  PetscCheck(nnodes > 0 && x && (nedges == 0 || edge), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Beam network '%s': nodes and edges are required", name);
  PetscCheck(section, comm, PETSC_ERR_ARG_NULL, "Beam network '%s': a section is required", name);
  PetscCall(MbsBeamCheckSection(model, name, section));
  PetscCheck(!d1 || (MbsVec3IsFinite(d1) && MbsVec3Norm(d1) > 0), comm, PETSC_ERR_ARG_OUTOFRANGE,
             "Beam network '%s': d1 must be a non-zero finite vector", name);
  PetscCall(MbsElementTypeFind("springs", "beam", &beam));
  PetscCheck(beam, comm, PETSC_ERR_PLIB, "The beam element type is not registered");
  for (PetscInt e = 0; e < nedges; e++) { /* the edges' checks before anything is allocated */
    const PetscInt a = edge[2 * e], b = edge[2 * e + 1];
    PetscReal      t[3];
    PetscCheck(a >= 0 && a < nnodes && b >= 0 && b < nnodes && a != b, comm, PETSC_ERR_ARG_OUTOFRANGE,
               "Beam network '%s': edge %" PetscInt_FMT " has nodes %" PetscInt_FMT " and %" PetscInt_FMT
               " (expected two distinct ones in 0..%" PetscInt_FMT ")",
               name, e, a, b, nnodes - 1);
    for (int i = 0; i < 3; i++) t[i] = x[3 * b + i] - x[3 * a + i];
    PetscCheck(MbsVec3Norm(t) > 0 && PetscIsNormalReal(MbsVec3Norm(t)), comm, PETSC_ERR_ARG_OUTOFRANGE,
               "Beam network '%s': edge %" PetscInt_FMT " joins two nodes at the same position", name, e);
  }
  for (PetscInt k = 0; k < nclamped + npinned; k++) {
    const PetscInt n = k < nclamped ? clamped[k] : pinned[k - nclamped];
    PetscCheck(n >= 0 && n < nnodes, comm, PETSC_ERR_ARG_OUTOFRANGE,
               "Beam network '%s': held node %" PetscInt_FMT " is not in 0..%" PetscInt_FMT, name, n, nnodes - 1);
  }
  PetscCall(PetscCalloc3(nnodes, &share, 3 * nnodes, &dir, nnodes, &held));
  for (PetscInt e = 0; e < nedges; e++) {
    const PetscInt a = edge[2 * e], b = edge[2 * e + 1];
    PetscReal      t[3], l;
    for (int i = 0; i < 3; i++) t[i] = x[3 * b + i] - x[3 * a + i];
    l = MbsVec3Norm(t);
    share[a] += 0.5 * l, share[b] += 0.5 * l;
    for (int s = 0; s < 2; s++) {
      const PetscInt n = s ? b : a;
      if (dir[3 * n] == 0 && dir[3 * n + 1] == 0 && dir[3 * n + 2] == 0)
        for (int i = 0; i < 3; i++) dir[3 * n + i] = t[i] / l;
    }
  }
  for (PetscInt k = 0; k < nclamped + npinned; k++) {
    const PetscInt n = k < nclamped ? clamped[k] : pinned[k - nclamped];
    if (held[n]) {
      PetscCall(PetscFree3(share, dir, held));
      SETERRQ(comm, PETSC_ERR_ARG_WRONG, "Beam network '%s': node %" PetscInt_FMT " is held twice", name,
              node_id ? node_id[n] : n);
    }
    held[n] = 1;
  }
  for (PetscInt k = 0; k < nnodes; k++)
    if (!(share[k] > 0)) {
      PetscCall(PetscFree3(share, dir, held));
      SETERRQ(comm, PETSC_ERR_ARG_OUTOFRANGE,
              "Beam network '%s': node %" PetscInt_FMT " is on no edge (it would carry no beam and no mass)", name,
              node_id ? node_id[k] : k);
    }
  {
    MbsModelSize   added;
    PetscErrorCode ierr;
    PetscCall(PetscMemzero(&added, sizeof(added)));
    MbsModelSizeBeam(&added, (PetscReal)nnodes, (PetscReal)nedges, 0, (PetscReal)(6 * nclamped + 3 * npinned));
    ierr = MbsModelCheckGeneratorSize(model, "Beam network", name, &added);
    if (ierr) PetscCall(PetscFree3(share, dir, held));
    PetscCall(ierr);
  }
  {
    PetscErrorCode ierr = MbsBeamNetworkAdd(model, name, nnodes, x, node_id, nedges, edge, section, d1, nclamped,
                                            clamped, npinned, pinned, beam, share, dir, &first);
    PetscCall(PetscFree3(share, dir, held));
    PetscCall(ierr);
  }
  if (first_body) *first_body = first;
  PetscFunctionReturn(0);
}

#include "model/modelimpl.h"
#include <gglmbs/elements/vec3.h>
#include <metis.h>
#include "model/operators.h"
#include "model/addelement.h"
#include "model/memory.h"
#include "model/redundancy.h"

PetscErrorCode MbsObjectOptions(PetscObject obj, PetscErrorCode (*body)(PetscOptionItems *, PetscObject))
{
  PetscFunctionBegin;
  PetscObjectOptionsBegin(obj);
  {
    PetscErrorCode ierr = body(PetscOptionsObject, obj);
    if (ierr) (void)PetscOptionsEnd_Private(PetscOptionsObject);
    PetscCall(ierr);
  }
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

PetscErrorCode MbsModelCheckNotSetUp(MbsModel model)
{
  PetscFunctionBegin;
  PetscCheck(!model->setup, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONGSTATE,
             "The model is set up; add bodies and elements before MbsModelSetUp()");
  PetscFunctionReturn(0);
}

PetscClassId     MBS_MODEL_CLASSID;
static PetscBool MbsModelPackageInitialized = PETSC_FALSE;

static PetscErrorCode MbsModelFinalizePackage(void)
{
  PetscFunctionBegin;
  PetscCall(MbsElementTypeRegistryDestroy_Private());
  MbsModelPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelInitializePackage - Registers the model class (called by the first MbsModelCreate()).

  Not Collective

  Level: developer
@*/
PetscErrorCode MbsModelInitializePackage(void)
{
  PetscFunctionBegin;
  if (MbsModelPackageInitialized) PetscFunctionReturn(0);
  MbsModelPackageInitialized = PETSC_TRUE;
  PetscCall(PetscClassIdRegister("Multibody model", &MBS_MODEL_CLASSID));
  PetscCall(MbsElementTypeRegisterAll());
  PetscCall(PetscRegisterFinalize(MbsModelFinalizePackage));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelSetOptionsPrefix - Sets the prefix of the model's options (-<prefix>mbs_partition, ...).

  Logically Collective

  Level: intermediate

.seealso: `MbsModelAppendOptionsPrefix()`, `MbsStepperSetOptionsPrefix()`
@*/
PetscErrorCode MbsModelSetOptionsPrefix(MbsModel model, const char prefix[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(model, MBS_MODEL_CLASSID, 1);
  PetscCall(PetscObjectSetOptionsPrefix((PetscObject)model, prefix));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAppendOptionsPrefix - Appends to the prefix of the model's options.

  Logically Collective

  Level: intermediate

.seealso: `MbsModelSetOptionsPrefix()`
@*/
PetscErrorCode MbsModelAppendOptionsPrefix(MbsModel model, const char prefix[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(model, MBS_MODEL_CLASSID, 1);
  PetscCall(PetscObjectAppendOptionsPrefix((PetscObject)model, prefix));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelGetOptionsPrefix - Gets the prefix of the model's options (borrowed).

  Not Collective

  Level: intermediate

.seealso: `MbsModelSetOptionsPrefix()`
@*/
PetscErrorCode MbsModelGetOptionsPrefix(MbsModel model, const char *prefix[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(model, MBS_MODEL_CLASSID, 1);
  PetscCall(PetscObjectGetOptionsPrefix((PetscObject)model, prefix));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelViewFromOptions - Views the model if the option `name` (with the model's prefix) is given.

  Collective

  Level: intermediate

.seealso: `MbsModelView()`, `PetscObjectViewFromOptions()`
@*/
PetscErrorCode MbsModelViewFromOptions(MbsModel model, PetscObject obj, const char name[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(model, MBS_MODEL_CLASSID, 1);
  PetscCall(PetscObjectViewFromOptions((PetscObject)model, obj, name));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelCreate - Creates an empty multibody model.

  Collective

  Input Parameter:
. comm - the communicator the model is distributed over

  Output Parameter:
. model - the new model

  Level: beginner

.seealso: `MbsModelAddParticle()`, `MbsModelAddRigidBody()`, `MbsModelSetUp()`, `MbsModelDestroy()`
@*/
PetscErrorCode MbsModelCreate(MPI_Comm comm, MbsModel *model)
{
  MbsModel m;

  PetscFunctionBegin;
  PetscValidPointer(model, 2);
  PetscCall(MbsModelInitializePackage());
  PetscCall(PetscHeaderCreate(m, MBS_MODEL_CLASSID, "MbsModel", "Multibody model", "MbsModel", comm, MbsModelDestroy,
                              MbsModelView));
  m->ic_tol        = 1e-8;
  m->load_factor   = 1.0;
  m->graph_width   = -1;
  m->deferred_elem = -1;
  PetscCall(PetscStrncpy(m->partitioner, "metis", sizeof(m->partitioner)));
  PetscCallMPI(MPI_Comm_rank(comm, &m->rank));
  PetscCallMPI(MPI_Comm_size(comm, &m->size));
  *model = m;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelDestroy - Destroys a model and sets the handle to NULL.

  Collective

  Input Parameter:
. model - the model

  Level: beginner
@*/
PetscErrorCode MbsModelDestroy(MbsModel *model)
{
  MbsModel m;

  PetscFunctionBegin;
  if (!model || !*model) PetscFunctionReturn(0);
  PetscValidHeaderSpecific(*model, MBS_MODEL_CLASSID, 1);
  if (--((PetscObject)(*model))->refct > 0) {
    *model = NULL;
    PetscFunctionReturn(0);
  }
  m = *model;
  for (PetscInt b = 0; b < m->nbody_store; b++) {
    PetscCall(PetscFree(m->bodies[b].name));
    PetscCall(PetscFree(m->bodies[b].label));
  }
  for (PetscInt e = 0; e < m->nelem_store; e++) PetscCall(PetscFree(m->elems[e].label));
  PetscCall(PetscFree(m->bodies));
  PetscCall(PetscFree(m->body_type));
  PetscCall(PetscFree(m->body_store));
  PetscCall(PetscFree(m->elems));
  PetscCall(PetscFree(m->einfo));
  for (PetscInt k = 0; k < m->ntables; k++) {
    PetscCall(PetscFree3(m->tables[k]->t, m->tables[k]->v, m->tables[k]->d2));
    PetscCall(PetscFree(m->tables[k]));
  }
  PetscCall(PetscFree(m->tables));
  PetscCall(PetscFree(m->source));
  PetscCall(PetscFree(m->deferred));
  PetscCall(PetscFree(m->held_body));
  PetscCall(PetscFree2(m->rank_qstart, m->rank_cstart));
  PetscCall(PetscFree(m->body_rank));
  PetscCall(PetscFree(m->body_q));
  PetscCall(PetscFree(m->owned_body));
  PetscCall(PetscFree3(m->elem_local, m->elem_c, m->elem_v));
  PetscCall(PetscFree(m->rank_vstart));
  PetscCall(PetscFree(m->drive_local));
  PetscCall(PetscFree3(m->elem_con, m->elem_pot, m->elem_force));
  PetscCall(PetscFree(m->ghost_body));
  PetscCall(PetscFree(m->body_lq));
  PetscCall(PetscFree(m->minv));
  PetscCall(VecDestroy(&m->qghost));
  PetscCall(VecScatterDestroy(&m->qscatter));
  PetscCall(PetscHeaderDestroy(model));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelGetComm - Gets the communicator of a model.

  Not Collective
@*/
PetscErrorCode MbsModelGetComm(MbsModel model, MPI_Comm *comm)
{
  PetscFunctionBegin;
  *comm = PetscObjectComm((PetscObject)model);
  PetscFunctionReturn(0);
}

/*@C
  MbsModelSetSource - Says where the model came from, in one line (an input file's name, size and hash, or a host
  program's own description); the outputs record it in their provenance (docs/output.md).

  Logically Collective

  Input Parameters:
+ model - the model
- source - the text (copied; NULL clears it)

  Level: intermediate

.seealso: `MbsModelGetSource()`, `MbsModelLoadYAML()`, `MbsStepperGetProvenance()`
@*/
PetscErrorCode MbsModelSetSource(MbsModel model, const char source[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(model, MBS_MODEL_CLASSID, 1);
  PetscCall(PetscFree(model->source));
  PetscCall(PetscStrallocpy(source, &model->source));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelGetSource - Gets the text set by `MbsModelSetSource()` (NULL if none).

  Not Collective

  Level: intermediate

.seealso: `MbsModelSetSource()`
@*/
PetscErrorCode MbsModelGetSource(MbsModel model, const char *source[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(model, MBS_MODEL_CLASSID, 1);
  *source = model->source;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelSetGravity - Sets the gravitational acceleration b; every body gets the potential V = -m b . x.

  Logically Collective

  Input Parameters:
+ model - the model
- g - the acceleration vector (world frame)

  Level: beginner
@*/
PetscErrorCode MbsModelSetGravity(MbsModel model, const PetscReal g[3])
{
  PetscFunctionBegin;
  PetscCall(MbsModelCheckNotSetUp(model));
  PetscCheck(MbsVec3IsFinite(g), PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "Gravity must be a finite vector");
  for (int i = 0; i < 3; i++) model->gravity[i] = g[i];
  PetscFunctionReturn(0);
}

/*@C
  MbsModelSetLoadFactor - Scales the applied loads (gravity and the elements of the `loads` section) by a factor: the
  load steps of a static solve (MbsStepperSolveEquilibrium(), docs/statics.md).

  Logically Collective

  Input Parameters:
+ model - the model
- factor - the factor, finite; 1 (the default) applies the loads as given

  Note:
  The factor scales the potential of gravity and the force of every load, in every scheme and in the energy and work
  the diagnostics report. A dynamic run is meant to have the factor 1; MbsStepperSolveEquilibrium() restores it.

  Level: advanced

.seealso: `MbsModelGetLoadFactor()`, `MbsStepperSolveEquilibrium()`
@*/
PetscErrorCode MbsModelSetLoadFactor(MbsModel model, PetscReal factor)
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(model, MBS_MODEL_CLASSID, 1);
  PetscCheck(PetscIsNormalReal(factor) || factor == 0, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "The load factor must be finite, got %g", (double)factor);
  model->load_factor = factor;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelGetLoadFactor - The factor on the applied loads (MbsModelSetLoadFactor()).

  Not Collective

  Level: advanced
@*/
PetscErrorCode MbsModelGetLoadFactor(MbsModel model, PetscReal *factor)
{
  PetscFunctionBegin;
  *factor = model->load_factor;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelGetGravity - The gravitational acceleration (world frame) set with MbsModelSetGravity().

  Not Collective

  Level: beginner
@*/
PetscErrorCode MbsModelGetGravity(MbsModel model, PetscReal g[3])
{
  PetscFunctionBegin;
  for (int i = 0; i < 3; i++) g[i] = model->gravity[i];
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsModelNewBody(MbsModel model, const char name[], MbsBodyType type, MbsBody **body,
                                      PetscInt *index)
{
  PetscFunctionBegin;
  PetscCall(MbsModelCheckNotSetUp(model));
  if (name && name[0]) {
    PetscBool isground;
    PetscCall(PetscStrcmp(name, "ground", &isground));
    PetscCheck(!isground, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONG,
               "The body name 'ground' is reserved for the fixed ground");
  }
  if (model->build == MBS_BUILD_LOCAL) { /* the graph pass's body again: stored if this rank holds it */
    PetscInt s;
    PetscCheck(
      model->nbodies < model->nbodies_graph, PetscObjectComm((PetscObject)model), PETSC_ERR_ORDER,
      "Body '%s': the model was built in two passes (MbsModelPartition(); MbsModelLoadYAML() on several ranks) "
      "and has all the %" PetscInt_FMT " bodies of its first pass: it takes no more",
      name ? name : "", model->nbodies_graph);
    PetscCheck(model->nbodies < model->nbodies_graph && model->body_type[model->nbodies] == (short)type,
               PetscObjectComm((PetscObject)model), PETSC_ERR_ORDER,
               "Body %" PetscInt_FMT " ('%s'): after MbsModelPartition() the model's bodies and elements must be added "
               "again as in the first pass, in the same order",
               model->nbodies, name ? name : "");
    *index = model->nbodies++;
    s      = model->body_store[*index];
    *body  = s >= 0 ? &model->bodies[s] : &model->scratch_body;
    PetscCall(PetscMemzero(*body, sizeof(MbsBody)));
    (*body)->type = type;
    if (s >= 0) PetscCall(PetscStrallocpy(name ? name : "", &(*body)->name));
    PetscFunctionReturn(0);
  }
  if (model->nbodies == model->maxbodies) {
    model->maxbodies = PetscMax(16, 2 * model->maxbodies);
    if (model->build == MBS_BUILD_WHOLE) PetscCall(PetscRealloc(sizeof(MbsBody) * model->maxbodies, &model->bodies));
    PetscCall(PetscRealloc(sizeof(short) * model->maxbodies, &model->body_type));
  }
  *index                   = model->nbodies++;
  model->body_type[*index] = (short)type;
  if (model->build == MBS_BUILD_GRAPH) { /* the type only */
    *body = &model->scratch_body;
    PetscCall(PetscMemzero(*body, sizeof(MbsBody)));
    (*body)->type = type;
    PetscFunctionReturn(0);
  }
  model->nbody_store = model->nbodies;
  *body              = &model->bodies[*index];
  PetscCall(PetscMemzero(*body, sizeof(MbsBody)));
  (*body)->type = type;
  PetscCall(PetscStrallocpy(name ? name : "", &(*body)->name));
  PetscFunctionReturn(0);
}

/* Whether this rank stores element e of these bodies in the current pass of the construction */
static inline PetscBool MbsModelStoresElement(MbsModel model, PetscInt a, PetscInt b)
{
  if (model->build == MBS_BUILD_WHOLE) return PETSC_TRUE;
  if (model->build == MBS_BUILD_GRAPH) return PETSC_FALSE;
  return (PetscBool)(model->body_rank[a >= 0 ? a : b] == model->rank);
}

/* An element of that kernel can join a and b: the model is not set up, the bodies exist and differ */
static PetscErrorCode MbsModelCheckNewElement(MbsModel model, const MbsElemKernel *kernel, PetscInt a, PetscInt b)
{
  PetscInt body[2] = {a, b};

  PetscFunctionBegin;
  PetscCall(MbsModelCheckNotSetUp(model));
  for (int s = 0; s < 2; s++)
    PetscCheck(body[s] >= MBS_GROUND && body[s] < model->nbodies, PetscObjectComm((PetscObject)model),
               PETSC_ERR_ARG_OUTOFRANGE,
               "%s element: body index %" PetscInt_FMT " does not exist (the model has %" PetscInt_FMT
               " bodies; ground is MBS_GROUND)",
               kernel->name, body[s], model->nbodies);
  PetscCheck(a != b, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONG, "%s element joins a body to itself",
             kernel->name);
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsModelNewElement(MbsModel model, const MbsElemKernel *kernel, const MbsElementType *type,
                                         PetscInt a, PetscInt b, MbsElement **elem, PetscInt *index)
{
  PetscFunctionBegin;
  PetscCall(MbsModelCheckNewElement(model, kernel, a, b));
  if (model->build == MBS_BUILD_LOCAL) {
    const MbsElementInfo *info = model->nelems < model->nelems_graph ? &model->einfo[model->nelems] : NULL;
    PetscCheck(info, PetscObjectComm((PetscObject)model), PETSC_ERR_ORDER,
               "%s element: the model was built in two passes (MbsModelPartition(); MbsModelLoadYAML() on several "
               "ranks) and has all the %" PetscInt_FMT " elements of its first pass: it takes no more",
               kernel->name, model->nelems_graph);
    PetscCheck(info && info->kernel == kernel && info->type == type && info->body[0] == a && info->body[1] == b,
               PetscObjectComm((PetscObject)model), PETSC_ERR_ORDER,
               "Element %" PetscInt_FMT
               " (%s): after MbsModelPartition() the model's bodies and elements must be added "
               "again as in the first pass, in the same order",
               model->nelems, kernel->name);
    *index = model->nelems++;
    if (MbsModelStoresElement(model, a, b)) {
      if (model->nelem_store == model->maxelems) {
        model->maxelems = PetscMax(16, 2 * model->maxelems);
        PetscCall(PetscRealloc(sizeof(MbsElement) * model->maxelems, &model->elems));
      }
      *elem = &model->elems[model->nelem_store++];
    } else
      *elem = &model->scratch_elem;
  } else {
    if (model->nelems == model->maxelems) {
      model->maxelems = PetscMax(16, 2 * model->maxelems);
      if (model->build == MBS_BUILD_WHOLE)
        PetscCall(PetscRealloc(sizeof(MbsElement) * model->maxelems, &model->elems));
      else
        PetscCall(PetscRealloc(sizeof(MbsElementInfo) * model->maxelems, &model->einfo));
    }
    *index = model->nelems++;
    if (model->build == MBS_BUILD_GRAPH) {
      MbsElementInfo *info = &model->einfo[*index];
      info->kernel         = kernel;
      info->type           = type;
      info->body[0]        = a;
      info->body[1]        = b;
      *elem                = &model->scratch_elem;
    } else {
      model->nelem_store = model->nelems;
      *elem              = &model->elems[*index];
    }
  }
  PetscCall(PetscMemzero(*elem, sizeof(MbsElement)));
  (*elem)->kernel         = kernel;
  (*elem)->type           = type;
  (*elem)->body[0]        = a;
  (*elem)->body[1]        = b;
  (*elem)->data.nblocks_a = a >= 0 ? (int)model->body_type[a] : 0;
  (*elem)->data.nblocks_b = b >= 0 ? (int)model->body_type[b] : 0;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddParticle - Adds a point mass.

  Logically Collective (every rank adds the same bodies)

  Input Parameters:
+ model - the model
. name - a unique name (may be NULL)
. mass - positive mass
. x - initial position
- v - initial velocity (NULL for zero)

  Output Parameter:
. body - index of the new body (may be NULL)

  Level: beginner
@*/
PetscErrorCode MbsModelAddParticle(MbsModel model, const char name[], PetscReal mass, const PetscReal x[3],
                                   const PetscReal v[3], PetscInt *body)
{
  MbsBody *p;
  PetscInt index;

  PetscFunctionBegin;
  PetscCheck(mass > 0 && PetscIsNormalReal(mass), PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "Particle '%s': mass must be positive and finite, got %g", name ? name : "", (double)mass);
  PetscCheck(MbsVec3IsFinite(x) && (!v || MbsVec3IsFinite(v)), PetscObjectComm((PetscObject)model),
             PETSC_ERR_ARG_OUTOFRANGE, "Particle '%s': position and velocity must be finite", name ? name : "");
  PetscCall(MbsModelNewBody(model, name, MBS_BODY_PARTICLE, &p, &index));
  p->mass      = mass;
  p->mblock[0] = mass;
  for (int i = 0; i < 3; i++) {
    p->q0[i] = x[i];
    p->v0[i] = v ? v[i] : 0.0;
  }
  if (body) *body = index;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddRigidBody - Adds a rigid body in the director formulation (Betsch & Steinmann):
  q = (phi, d1, d2, d3) with six internal constraints keeping the directors orthonormal.

  Logically Collective

  Input Parameters:
+ model - the model
. name - a unique name (may be NULL)
. mass - positive mass
. inertia - principal moments of inertia about the centre of mass; each must be smaller than the sum of the other two
. phi - initial centre of mass
. R - initial rotation, row-major; the directors d_i are its columns
. v - initial velocity of the centre of mass (NULL for zero)
- omega - initial angular velocity in the world frame (NULL for zero)

  Output Parameter:
. body - index of the new body (may be NULL)

  Notes:
  The mass matrix is diag(m I, E1 I, E2 I, E3 I) with E_i = (J_j + J_k - J_i)/2, and v_{d_i} = omega x d_i.

  Level: beginner
@*/
PetscErrorCode MbsModelAddRigidBody(MbsModel model, const char name[], PetscReal mass, const PetscReal inertia[3],
                                    const PetscReal phi[3], const PetscReal R[9], const PetscReal v[3],
                                    const PetscReal omega[3], PetscInt *body)
{
  MbsBody    *r;
  MbsElement *internal;
  PetscInt    index, eindex;
  const char *nm = name ? name : "";

  PetscFunctionBegin;
  PetscCheck(mass > 0 && PetscIsNormalReal(mass), PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "Rigid body '%s': mass must be positive and finite, got %g", nm, (double)mass);
  PetscCheck(MbsVec3IsFinite(inertia) && MbsVec3IsFinite(phi) && MbsVec3IsFinite(R) && MbsVec3IsFinite(R + 3) &&
               MbsVec3IsFinite(R + 6) && (!v || MbsVec3IsFinite(v)) && (!omega || MbsVec3IsFinite(omega)),
             PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "Rigid body '%s': inertia, position, rotation and velocities must be finite", nm);
  for (int i = 0; i < 3; i++) {
    const PetscReal E = 0.5 * (inertia[(i + 1) % 3] + inertia[(i + 2) % 3] - inertia[i]);
    PetscCheck(inertia[i] > 0 && E > 0, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
               "Rigid body '%s': principal moments of inertia must be positive with J%d < J%d + J%d, got (%g, %g, %g)",
               nm, i + 1, (i + 1) % 3 + 1, (i + 2) % 3 + 1, (double)inertia[0], (double)inertia[1], (double)inertia[2]);
  }
  PetscCall(MbsModelNewBody(model, name, MBS_BODY_RIGID, &r, &index));
  r->mass      = mass;
  r->mblock[0] = mass;
  for (int i = 0; i < 3; i++) {
    r->inertia[i]    = inertia[i];
    r->mblock[1 + i] = 0.5 * (inertia[(i + 1) % 3] + inertia[(i + 2) % 3] - inertia[i]);
    r->q0[i]         = phi[i];
    r->v0[i]         = v ? v[i] : 0.0;
  }
  for (int d = 0; d < 3; d++) {
    const PetscReal di[3] = {R[0 * 3 + d], R[1 * 3 + d], R[2 * 3 + d]};
    const PetscReal w[3]  = {omega ? omega[0] : 0, omega ? omega[1] : 0, omega ? omega[2] : 0};
    for (int i = 0; i < 3; i++) r->q0[3 + 3 * d + i] = di[i];
    r->v0[3 + 3 * d + 0] = w[1] * di[2] - w[2] * di[1];
    r->v0[3 + 3 * d + 1] = w[2] * di[0] - w[0] * di[2];
    r->v0[3 + 3 * d + 2] = w[0] * di[1] - w[1] * di[0];
  }
  PetscCall(MbsModelNewElement(model, &MbsElemKernelRigidBody, NULL, index, MBS_GROUND, &internal, &eindex));
  if (body) *body = index;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelFindBody - Finds a body by name; returns MBS_GROUND for "ground" and -2 when there is no such body.

  Not Collective on a model built whole before MbsModelSetUp(); Collective after it on several ranks, and in the
  second pass of a construction in two passes (MbsModelPartition()); an error in its first pass (no names yet)

  Note:
  After MbsModelSetUp() on several ranks a rank holds only its own bodies and their neighbours (the ghosts): the ranks
  then look the name up among their own bodies together, and every rank gets the same index.
@*/
PetscErrorCode MbsModelFindBody(MbsModel model, const char name[], PetscInt *body)
{
  PetscBool match;

  PetscFunctionBegin;
  PetscCheck(
    model->build != MBS_BUILD_GRAPH, PetscObjectComm((PetscObject)model), PETSC_ERR_ORDER,
    "MbsModelFindBody('%s'): the first pass of a construction in two passes records no names; number the bodies "
    "by the order they are added",
    name);
  PetscCall(PetscStrcmp(name, "ground", &match));
  if (match) {
    *body = MBS_GROUND;
    PetscFunctionReturn(0);
  }
  *body = PETSC_MAX_INT; /* the first body of that name, as a model held whole finds it */
  for (PetscInt s = 0; s < model->nbody_store; s++) {
    PetscCall(PetscStrcmp(name, model->bodies[s].name, &match));
    if (match) {
      *body = PetscMin(*body, model->held_body     ? model->held_body[s]
                              : !model->body_store ? s
                              : s < model->nowned  ? model->owned_body[s]
                                                   : model->ghost_body[s - model->nowned]);
      if (!model->body_store) break; /* held whole: in index order */
    }
  }
  if (model->body_store) /* distributed: the ranks that hold it say */
    PetscCall(MPIU_Allreduce(MPI_IN_PLACE, body, 1, MPIU_INT, MPI_MIN, PetscObjectComm((PetscObject)model)));
  if (*body == PETSC_MAX_INT) *body = -2;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelGetNumBodies - The number of bodies (particles and rigid bodies), the same on every rank.

  Not Collective

  Level: beginner
@*/
PetscErrorCode MbsModelGetNumBodies(MbsModel model, PetscInt *n)
{
  PetscFunctionBegin;
  *n = model->nbodies;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelGetNumElements - Number of elements: joints, springs and one internal-constraint element per
  rigid body; after MbsModelSetUp() also one gravity element per body when gravity is non-zero.

  Not Collective
@*/
PetscErrorCode MbsModelGetNumElements(MbsModel model, PetscInt *n)
{
  PetscFunctionBegin;
  *n = model->nelems;
  PetscFunctionReturn(0);
}

/* The weights of a material point's position in a body's coordinate blocks: x = sum_j s_j q_j, s = (1, X) for a
   rigid body (phi, d1, d2, d3), s = (1) for a particle; the number of blocks */
static PetscInt MbsModelPointWeights(MbsModel model, PetscInt body, const PetscReal X[3], PetscReal s[4])
{
  const PetscInt nb = (PetscInt)model->body_type[body];
  s[0]              = 1.0;
  for (PetscInt j = 1; j < nb; j++) s[j] = X ? X[j - 1] : 0.0;
  return nb;
}

static PetscErrorCode MbsModelCheckBody(MbsModel model, PetscInt body, PetscBool ground)
{
  PetscFunctionBegin;
  PetscCheck(model->setup, PETSC_COMM_SELF, PETSC_ERR_ORDER, "Call MbsModelSetUp() first");
  PetscCheck((ground && body == MBS_GROUND) || (body >= 0 && body < model->nbodies), PETSC_COMM_SELF,
             PETSC_ERR_ARG_OUTOFRANGE, "Body %" PetscInt_FMT " does not exist (the model has %" PetscInt_FMT " bodies)",
             body, model->nbodies);
  PetscFunctionReturn(0);
}

/* x = sum_j s_j q_j, a material point's position from its body's coordinate blocks qb (or its velocity from their
   rates) */
static void MbsModelPointFromBlocks(MbsModel model, PetscInt body, const PetscReal X[3], const PetscScalar qb[],
                                    PetscReal x[3])
{
  PetscReal      s[4];
  const PetscInt nb = MbsModelPointWeights(model, body, X, s);
  for (int l = 0; l < 3; l++) {
    x[l] = 0;
    for (PetscInt j = 0; j < nb; j++) x[l] += s[j] * PetscRealPart(qb[3 * j + l]);
  }
}

/*@C
  MbsModelGetPointPosition - World position of a material point of a body at the initial state.

  Not Collective

  Input Parameters:
+ model - the model
. body - body index or MBS_GROUND
- X - material point: body frame for a rigid body, ignored for a particle, world for ground

  Output Parameter:
. x - world position

  Note:
  After MbsModelSetUp() on several ranks a rank holds only its own bodies and their neighbours; asking for another
  body is an error.
@*/
PetscErrorCode MbsModelGetPointPosition(MbsModel model, PetscInt body, const PetscReal X[3], PetscReal x[3])
{
  PetscFunctionBegin;
  PetscCheck(body >= MBS_GROUND && body < model->nbodies, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "Body %" PetscInt_FMT " does not exist", body);
  {
    PetscBool held;
    PetscCall(MbsModelHoldsBody(model, body, &held));
    PetscCheck(held, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG,
               "Body %" PetscInt_FMT
               " is not held by rank %d: a model built in two passes (MbsModelPartition(), as MbsModelLoadYAML() "
               "builds on several ranks) or set up on several ranks holds on each rank its own bodies and their "
               "neighbours only (MbsModelHoldsBody())",
               body, model->rank);
  }
  if (body == MBS_GROUND) {
    for (int i = 0; i < 3; i++) x[i] = X[i];
  } else
    MbsModelPointFromBlocks(model, body, X, MbsModelBody(model, body)->q0, x);
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddPointForce - Adds the generalized force of a force f acting at a material point of a body
  to a coordinate-layout vector F: f on a particle; f on the centre and X_i f on director d_i of a rigid
  body (x = phi + X_i d_i, so the virtual work f . delta x is that of these generalized forces).

  Not Collective: any rank may add to any body; the values are added with VecSetValues(ADD_VALUES), so
  F must be assembled afterwards (MbsStepper does that after an MbsExternalForceFn returns).
  Nothing is added for MBS_GROUND, which takes the reaction of a force between a body and the ground.

  Input Parameters:
+ model - the model (set up)
. body - the body index, or MBS_GROUND
. X - material point in the body frame (ignored for a particle; NULL means the centre)
. f - the force in the world frame
- F - the vector to add to

  Level: intermediate

.seealso: `MbsStepperSetExternalForce()`, `MbsModelGetBodyCoordinates()`
@*/
PetscErrorCode MbsModelAddPointForce(MbsModel model, PetscInt body, const PetscReal X[3], const PetscReal f[3], Vec F)
{
  PetscInt    idx[12], nb;
  PetscScalar val[12];
  PetscReal   s[4];

  PetscFunctionBegin;
  PetscCall(MbsModelCheckBody(model, body, PETSC_TRUE));
  PetscCheck(MbsVec3IsFinite(f) && (!X || MbsVec3IsFinite(X)), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "Force on body %" PetscInt_FMT ": force and point must be finite", body);
  if (body == MBS_GROUND) PetscFunctionReturn(0);
  nb = MbsModelPointWeights(model, body, X, s);
  for (PetscInt j = 0; j < nb; j++)
    for (int i = 0; i < 3; i++) {
      idx[3 * j + i] = model->body_q[body] + 3 * j + i;
      val[3 * j + i] = s[j] * f[i];
    }
  PetscCall(VecSetValues(F, 3 * nb, idx, val, ADD_VALUES));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddPointForceJacobian - Adds the derivative of a force at a material point of body a with respect to the
  position of a material point of body b, K = df/dx_b (3 x 3, row major, world frame), to a coordinate-layout matrix
  J in generalized coordinates: J(a, b) += C_a^T K C_b, with x = C q the point's position in its body's coordinates
  (MbsModelAddPointForce()). A force that depends on a point's velocity adds df/dv_b the same way, its velocity being
  C_b times the coordinates' rates.

  Not Collective: any rank may add to any rows, with MatSetValues(ADD_VALUES); J must be assembled afterwards (the
  stepper does that after an MbsStateForceJacobianFn returns). Nothing is added when a or b is MBS_GROUND.

  Input Parameters:
+ model - the model (set up)
. a, Xa - the body the force acts on and the material point (NULL: the centre; ignored for a particle)
. b, Xb - the body and material point whose position the force depends on
. K - df/dx_b
- J - the matrix (MbsModelCreateCoordinateMatrix(), with the pair (a, b))

  Level: intermediate

.seealso: `MbsStepperSetStateForce()`, `MbsModelCreateCoordinateMatrix()`, `MbsModelAddPointForce()`
@*/
PetscErrorCode MbsModelAddPointForceJacobian(MbsModel model, PetscInt a, const PetscReal Xa[3], PetscInt b,
                                             const PetscReal Xb[3], const PetscReal K[9], Mat J)
{
  PetscReal   sa[4], sb[4];
  PetscInt    na, nb, rows[12], cols[12];
  PetscScalar v[144];

  PetscFunctionBegin;
  PetscCall(MbsModelCheckBody(model, a, PETSC_TRUE));
  PetscCall(MbsModelCheckBody(model, b, PETSC_TRUE));
  if (a == MBS_GROUND || b == MBS_GROUND) PetscFunctionReturn(0);
  PetscCheck((!Xa || MbsVec3IsFinite(Xa)) && (!Xb || MbsVec3IsFinite(Xb)), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "Force Jacobian between bodies %" PetscInt_FMT " and %" PetscInt_FMT ": points must be finite", a, b);
  for (int i = 0; i < 9; i++)
    PetscCheck(!PetscIsInfOrNanReal(K[i]), PETSC_COMM_SELF, PETSC_ERR_FP,
               "Force Jacobian between bodies %" PetscInt_FMT " and %" PetscInt_FMT ": entry %d is %g", a, b, i,
               (double)K[i]);
  na = MbsModelPointWeights(model, a, Xa, sa);
  nb = MbsModelPointWeights(model, b, Xb, sb);
  for (PetscInt i = 0; i < 3 * na; i++) rows[i] = model->body_q[a] + i;
  for (PetscInt k = 0; k < 3 * nb; k++) cols[k] = model->body_q[b] + k;
  for (PetscInt j = 0; j < na; j++)
    for (PetscInt k = 0; k < nb; k++)
      for (int l = 0; l < 3; l++)
        for (int m = 0; m < 3; m++) v[(3 * j + l) * 3 * nb + 3 * k + m] = sa[j] * sb[k] * K[3 * l + m];
  PetscCall(MatSetValues(J, 3 * na, rows, 3 * nb, cols, v, ADD_VALUES));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelGetPointFromCoordinates - The position x = C q_b of a material point from its body's coordinates q_b (3 for
  a particle, 12 for a rigid body: phi, d1, d2, d3, as they stand in a coordinate-layout vector at the offset
  MbsModelGetBodyCoordinates() gives); given the coordinates' rates, the same call gives the point's velocity.

  Not Collective

  Input Parameters:
+ model - the model (set up)
. body - the body
. X - the material point (NULL: the centre; ignored for a particle)
- qb - the body's coordinates

  Output Parameter:
. x - the point

  Level: intermediate

.seealso: `MbsStepperSetStateForce()`, `MbsModelAddPointForce()`
@*/
PetscErrorCode MbsModelGetPointFromCoordinates(MbsModel model, PetscInt body, const PetscReal X[3],
                                               const PetscScalar qb[], PetscReal x[3])
{
  PetscFunctionBegin;
  PetscCall(MbsModelCheckBody(model, body, PETSC_FALSE));
  MbsModelPointFromBlocks(model, body, X, qb, x);
  PetscFunctionReturn(0);
}

/* Sorts pairs (a[i], b[i]) by a, then b, and removes duplicates; the new count */
static PetscErrorCode MbsSortPairs(PetscInt n, PetscInt a[], PetscInt b[], PetscInt *m)
{
  PetscInt k = 0;

  PetscFunctionBegin;
  PetscCall(PetscSortIntWithArray(n, a, b));
  for (PetscInt i = 0; i < n;) {
    PetscInt j = i, len;
    while (j < n && a[j] == a[i]) j++;
    len = j - i;
    PetscCall(PetscSortRemoveDupsInt(&len, b + i));
    for (PetscInt l = 0; l < len; l++) {
      a[k]   = a[i];
      b[k++] = b[i + l];
    }
    i = j;
  }
  *m = k;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelCreateCoordinateMatrix - Creates a matrix in the coordinate layout (rows and columns numbered as the state
  vectors; each rank owns the rows of its coordinates) whose nonzeros are the coordinate blocks of the given body
  pairs, both ways, and of each paired body with itself: exactly preallocated, with explicit zeros, assembled, and
  with MAT_NEW_NONZERO_LOCATION_ERR set, so that an entry outside the declared coupling is an error. It is the
  Jacobian of a host's state-dependent force (MbsStepperSetStateForce()): pair a with b when the force on a depends
  on the motion of b.

  Collective: every rank passes the same pairs

  Input Parameters:
+ model - the model (set up)
. npairs - the number of pairs
- pairs - 2 npairs body indices, a0 b0 a1 b1 ...; MBS_GROUND couples nothing, (a, a) a body with itself

  Output Parameter:
. J - the matrix (MATAIJ)

  Level: intermediate

.seealso: `MbsStepperSetStateForce()`, `MbsModelAddPointForceJacobian()`
@*/
PetscErrorCode MbsModelCreateCoordinateMatrix(MbsModel model, PetscInt npairs, const PetscInt pairs[], Mat *J)
{
  const PetscInt qstart = model->rank_qstart[model->rank];
  PetscInt      *ra, *rb, n = 0, m, *dnnz, *onnz;
  PetscScalar   *zeros;

  PetscFunctionBegin;
  PetscCheck(model->setup, PetscObjectComm((PetscObject)model), PETSC_ERR_ORDER, "Call MbsModelSetUp() first");
  PetscCheck(npairs >= 0 && (npairs == 0 || pairs), PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "Need %" PetscInt_FMT " pairs of bodies", npairs);
  for (PetscInt k = 0; k < 2 * npairs; k++)
    PetscCheck(pairs[k] == MBS_GROUND || (pairs[k] >= 0 && pairs[k] < model->nbodies),
               PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
               "Pair %" PetscInt_FMT ": body %" PetscInt_FMT " does not exist (the model has %" PetscInt_FMT " bodies)",
               k / 2, pairs[k], model->nbodies);
  /* the directed pairs (row body, column body) with an owned row body: (a, b), (b, a), (a, a), (b, b) */
  PetscCall(PetscMalloc2(4 * npairs, &ra, 4 * npairs, &rb));
  for (PetscInt k = 0; k < npairs; k++) {
    const PetscInt a = pairs[2 * k], b = pairs[2 * k + 1];
    const PetscInt d[4][2] = {{a, b}, {b, a}, {a, a}, {b, b}};
    for (int l = 0; l < 4; l++)
      if (d[l][0] >= 0 && d[l][1] >= 0 && model->body_rank[d[l][0]] == model->rank) {
        ra[n]   = d[l][0];
        rb[n++] = d[l][1];
      }
  }
  PetscCall(MbsSortPairs(n, ra, rb, &m));
  PetscCall(PetscCalloc2(model->nq_local, &dnnz, model->nq_local, &onnz));
  for (PetscInt k = 0; k < m; k++) {
    const PetscInt na = 3 * (PetscInt)model->body_type[ra[k]], nb = 3 * (PetscInt)model->body_type[rb[k]];
    const PetscInt r0 = model->body_q[ra[k]] - qstart;
    for (PetscInt i = 0; i < na; i++) {
      if (model->body_rank[rb[k]] == model->rank)
        dnnz[r0 + i] += nb;
      else
        onnz[r0 + i] += nb;
    }
  }
  PetscCall(MatCreate(PetscObjectComm((PetscObject)model), J));
  PetscCall(MatSetSizes(*J, model->nq_local, model->nq_local, model->nq, model->nq));
  PetscCall(MatSetType(*J, MATAIJ));
  PetscCall(MatXAIJSetPreallocation(*J, 1, dnnz, onnz, NULL, NULL));
  PetscCall(PetscFree2(dnnz, onnz));
  PetscCall(PetscCalloc1(144, &zeros));
  for (PetscInt k = 0; k < m; k++) {
    const PetscInt na = 3 * (PetscInt)model->body_type[ra[k]], nb = 3 * (PetscInt)model->body_type[rb[k]];
    PetscInt       rows[12], cols[12];
    for (PetscInt i = 0; i < na; i++) rows[i] = model->body_q[ra[k]] + i;
    for (PetscInt j = 0; j < nb; j++) cols[j] = model->body_q[rb[k]] + j;
    PetscCall(MatSetValues(*J, na, rows, nb, cols, zeros, INSERT_VALUES));
  }
  PetscCall(PetscFree(zeros));
  PetscCall(PetscFree2(ra, rb));
  PetscCall(MatAssemblyBegin(*J, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*J, MAT_FINAL_ASSEMBLY));
  PetscCall(MatSetOption(*J, MAT_NEW_NONZERO_LOCATION_ERR, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelGetBodyCoordinates - Where a body's coordinates are in coordinate-layout vectors (the state q,
  p of MbsStepperGetState(), the F of an MbsExternalForceFn): the global offset, their number (3 for a
  particle: x; 12 for a rigid body: phi, d1, d2, d3) and the rank that owns them.

  Not Collective

  Level: intermediate
@*/
PetscErrorCode MbsModelGetBodyCoordinates(MbsModel model, PetscInt body, PetscInt *offset, PetscInt *n,
                                          PetscMPIInt *owner)
{
  PetscFunctionBegin;
  PetscCheck(model->setup, PETSC_COMM_SELF, PETSC_ERR_ORDER, "Call MbsModelSetUp() first");
  PetscCheck(body >= 0 && body < model->nbodies, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "Body %" PetscInt_FMT " does not exist (the model has %" PetscInt_FMT " bodies)", body, model->nbodies);
  if (offset) *offset = model->body_q[body];
  if (n) *n = 3 * (PetscInt)model->body_type[body];
  if (owner) *owner = (PetscMPIInt)model->body_rank[body];
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddElement - Adds an element of a registered type.

  Logically Collective

  Input Parameters:
+ model - the model
. type - a registered type (MbsElementTypeRegister())
. a, b - the bodies it connects (either may be MBS_GROUND, not both)
- data - its points Xa, Xb and parameters; reals left at MBS_ELEM_UNSET take their defaults, and the type
         completes the block from the initial configuration

  Output Parameter:
. elem - the element index (may be NULL)

  Level: advanced

.seealso: `MbsElementTypeRegister()`, `MbsModelAddRod()`
@*/
PetscErrorCode MbsModelAddElement(MbsModel model, const MbsElementType *type, PetscInt a, PetscInt b,
                                  const MbsElemData *data, PetscInt *elem)
{
  char     error[256] = "";
  PetscInt index;

  PetscFunctionBegin;
  PetscCall(MbsModelAddElement_Private(model, type, a, b, data, &index, error, sizeof(error)));
  if (error[0]) PetscCall(MbsModelElementError_Private(model, index, PETSC_ERR_ARG_OUTOFRANGE, error));
  if (elem) *elem = index;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsModelAddElement_Private(MbsModel model, const MbsElementType *type, PetscInt a, PetscInt b,
                                          const MbsElemData *data, PetscInt *elem, char error[], size_t len)
{
  const PetscInt body[2] = {a, b};
  MbsElement    *e;
  PetscInt       index;
  MbsElemData    d;

  PetscFunctionBegin;
  PetscCall(MbsModelCheckNewElement(model, type->kernel, a, b));
  for (int s = 0; s < 2; s++) {
    if (!(type->needs_orientation & (1 << s)) || body[s] < 0 || model->body_type[body[s]] == MBS_BODY_RIGID) continue;
    if (model->build == MBS_BUILD_WHOLE) /* every rank holds the body's name */
      SETERRQ(PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONG,
              "%s: body '%s' is a particle; a %s needs rigid bodies or the ground", type->title,
              model->bodies[body[s]].name, type->name);
    SETERRQ(PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONG,
            "%s: body %" PetscInt_FMT " is a particle; a %s needs rigid bodies or the ground", type->title, body[s],
            type->name);
  }
  PetscCheck(!type->joins_centres || (a != MBS_GROUND && b != MBS_GROUND), PetscObjectComm((PetscObject)model),
             PETSC_ERR_ARG_WRONG,
             "%s: joins two bodies, not a body and the ground (fix a body to the ground with a weld)", type->title);
  error[0] = 0;
  if (elem) *elem = -1;
  PetscCall(PetscMemcpy(&d, data, sizeof(d))); /* with its zero padding: the checkpoint hashes the bytes */
  d.nblocks_a = a >= 0 ? (int)model->body_type[a] : 0;
  d.nblocks_b = b >= 0 ? (int)model->body_type[b] : 0;
  if (!MbsVec3IsFinite(d.Xa) || !MbsVec3IsFinite(d.Xb)) {
    /* in the local pass of a construction in two passes a point computed from a body's position (a fixed point's
       default position) is known only where the body is held: the caller raises or defers it */
    PetscCheck(model->build == MBS_BUILD_LOCAL, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
               "%s element: points must be finite", type->kernel->name);
    PetscCall(PetscSNPrintf(error, len, "%s element: points must be finite", type->kernel->name));
  }
  /* the completion reads the bodies' initial positions: only where the element is stored (its owner, in the local pass
     of a distributed construction, which holds both bodies); an error there is the caller's to raise or defer */
  if (type->complete && !error[0] && MbsModelStoresElement(model, a, b)) {
    MbsElemPlacement place[2];
    for (int s = 0; s < 2; s++) {
      PetscCall(MbsModelGetPointPosition(model, body[s], s ? d.Xb : d.Xa, place[s].x));
      for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
          place[s].D[i][k] = body[s] >= 0 && model->body_type[body[s]] == MBS_BODY_RIGID
                               ? MbsModelBody(model, body[s])->q0[3 + 3 * i + k]
                               : (PetscReal)(i == k);
    }
    if (type->complete(&d, &place[0], &place[1], error, len) && model->build == MBS_BUILD_WHOLE) PetscFunctionReturn(0);
  }
  PetscCall(MbsModelNewElement(model, type->kernel, type, a, b, &e, &index));
  PetscCall(PetscMemcpy(&e->data, &d, sizeof(d)));
  if (elem) *elem = index;
  PetscFunctionReturn(0);
}

/* An element of the registered type of that name, for the C setters below */
static PetscErrorCode MbsModelAddNamedElement(MbsModel model, const char section[], const char name[], PetscInt a,
                                              PetscInt b, const MbsElemData *data, PetscInt *elem)
{
  const MbsElementType *type;

  PetscFunctionBegin;
  PetscCall(MbsElementTypeFind(section, name, &type));
  PetscCheck(type, PetscObjectComm((PetscObject)model), PETSC_ERR_PLIB, "No element type '%s' among the %s", name,
             section);
  PetscCall(MbsModelAddElement(model, type, a, b, data, elem));
  PetscFunctionReturn(0);
}

/* A data block with the two points (NULL: the origin) and every real parameter unset. */
static void MbsElemDataInit(MbsElemData *d, const PetscReal Xa[3], const PetscReal Xb[3])
{
  PetscMemzero(d, sizeof(*d));
  for (int i = 0; i < 3; i++) {
    d->Xa[i] = Xa ? Xa[i] : 0.0;
    d->Xb[i] = Xb ? Xb[i] : 0.0;
  }
  d->length = d->stiffness = d->damping = d->exponent = MBS_ELEM_UNSET; /* time: zero, as the input leaves it */
}

/*@C
  MbsModelAddSpherical - Adds a spherical joint x_a(Xa) = x_b(Xb) (3 constraints).

  Logically Collective

  Input Parameters:
+ model - the model
. a, b - body indices (either may be MBS_GROUND, not both)
- Xa, Xb - material points (body frame; world frame on ground; ignored on particles; NULL for the origin)

  Output Parameter:
. elem - the element index (may be NULL)
@*/
PetscErrorCode MbsModelAddSpherical(MbsModel model, PetscInt a, const PetscReal Xa[3], PetscInt b,
                                    const PetscReal Xb[3], PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  MbsElemDataInit(&d, Xa, Xb);
  PetscCall(MbsModelAddNamedElement(model, "joints", "spherical", a, b, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddFixedPoint - Fixes a material point of a body at a world position (a spherical joint to ground).

  Logically Collective
@*/
PetscErrorCode MbsModelAddFixedPoint(MbsModel model, PetscInt a, const PetscReal Xa[3], const PetscReal world[3],
                                     PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  PetscCheck(a >= 0, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONG,
             "A fixed point needs a body, not the ground");
  MbsElemDataInit(&d, Xa, world);
  PetscCall(MbsModelAddNamedElement(model, "joints", "fixed_point", a, MBS_GROUND, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddRod - Adds a rigid massless rod (distance constraint) 1/2 (|x_b - x_a|^2 / L^2 - 1) = 0.

  Logically Collective

  Input Parameters:
+ model - the model
. a, Xa, b, Xb - bodies and material points, as in MbsModelAddSpherical()
- length - rod length L > 0, or PETSC_DETERMINE for the initial distance

  Output Parameter:
. elem - the element index (may be NULL)
@*/
PetscErrorCode MbsModelAddRod(MbsModel model, PetscInt a, const PetscReal Xa[3], PetscInt b, const PetscReal Xb[3],
                              PetscReal length, PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  MbsElemDataInit(&d, Xa, Xb);
  if (length != (PetscReal)PETSC_DETERMINE) d.length = length;
  PetscCall(MbsModelAddNamedElement(model, "joints", "rod", a, b, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddRevolute - Adds a revolute joint: a spherical joint at Xa/Xb plus two constraints keeping
  the axis of a orthogonal to two material vectors of b that are orthogonal to b's axis.

  Logically Collective

  Input Parameters:
+ model - the model
. a, Xa, axis_a - body a (rigid or MBS_GROUND), its joint point and axis (body frame; world on ground)
- b, Xb, axis_b - body b (rigid or MBS_GROUND), likewise

  Notes:
  The two axes must coincide in the initial configuration; MbsModelSetUp() checks it.
@*/
PetscErrorCode MbsModelAddRevolute(MbsModel model, PetscInt a, const PetscReal Xa[3], const PetscReal axis_a[3],
                                   PetscInt b, const PetscReal Xb[3], const PetscReal axis_b[3], PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  MbsElemDataInit(&d, Xa, Xb);
  for (int i = 0; i < 3; i++) {
    d.axis_a[i] = axis_a[i];
    d.axis_b[i] = axis_b[i];
  }
  PetscCall(MbsModelAddNamedElement(model, "joints", "revolute", a, b, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddJoint - Adds a prismatic, cylindrical, universal, weld, point-on-line, point-on-plane, planar or
  perpendicular-axes joint (docs/joints.md): quadratic constraint rows in the director formulation, built from the
  joint's points and axes and the bodies' initial placement.

  Logically Collective

  Input Parameters:
+ model - the model
. type - MBS_JOINT_PRISMATIC, MBS_JOINT_CYLINDRICAL, MBS_JOINT_UNIVERSAL, MBS_JOINT_WELD, MBS_JOINT_POINT_ON_LINE,
         MBS_JOINT_POINT_ON_PLANE, MBS_JOINT_PLANAR or MBS_JOINT_PERPENDICULAR
. a, Xa, axis_a - body a, its point (body frame; world on ground; NULL for the origin) and axis: the sliding or
                  joint axis (prismatic, cylindrical), the cross axis (universal), the plane's normal (planar), the
                  axis kept perpendicular (perpendicular); NULL for the others
- b, Xb, axis_b - body b likewise: the axis of b (prismatic, cylindrical), its cross axis (universal), the line's
                  direction (point on line), the plane's normal (point on plane, planar), the axis (perpendicular);
                  NULL for a weld

  Output Parameter:
. elem - the element index (may be NULL)

  Notes:
  Body a must be rigid or the ground, except for the point joints, where it may be a particle; body b is rigid
  or the ground. The joint must hold in the initial configuration (axes coinciding, the universal joint's cross
  axes perpendicular, the points where the joint puts them); MbsModelSetUp() checks it.

  Level: beginner

.seealso: `MbsModelAddRevolute()`, `MbsModelAddElement()`
@*/
PetscErrorCode MbsModelAddJoint(MbsModel model, MbsJointType type, PetscInt a, const PetscReal Xa[3],
                                const PetscReal axis_a[3], PetscInt b, const PetscReal Xb[3], const PetscReal axis_b[3],
                                PetscInt *elem)
{
  static const char *const names[] = {"prismatic",     "cylindrical",    "universal", "weld",
                                      "point_on_line", "point_on_plane", "planar",    "perpendicular"};
  MbsElemData              d;
  PetscBool                uses_a, uses_b;

  PetscFunctionBegin;
  PetscCheck((int)type >= 0 && (int)type < (int)(sizeof(names) / sizeof(names[0])), PetscObjectComm((PetscObject)model),
             PETSC_ERR_ARG_OUTOFRANGE, "Unknown joint type %d", (int)type);
  uses_a = (PetscBool)(type == MBS_JOINT_PRISMATIC || type == MBS_JOINT_CYLINDRICAL || type == MBS_JOINT_UNIVERSAL ||
                       type == MBS_JOINT_PLANAR || type == MBS_JOINT_PERPENDICULAR);
  uses_b = (PetscBool)(type != MBS_JOINT_WELD);
  PetscCheck(!uses_a || axis_a, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_NULL,
             "A %s joint needs the axis of body a", names[type]);
  PetscCheck(!uses_b || axis_b, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_NULL,
             "A %s joint needs the axis of body b", names[type]);
  PetscCheck((uses_a || !axis_a) && (uses_b || !axis_b), PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONG,
             "A %s joint takes no %s: pass NULL", names[type], uses_b ? "axis of body a" : "axes");
  MbsElemDataInit(&d, Xa, Xb);
  for (int i = 0; i < 3; i++) {
    d.axis_a[i] = uses_a ? axis_a[i] : 0.0;
    d.axis_b[i] = uses_b ? axis_b[i] : 0.0;
  }
  PetscCall(MbsModelAddNamedElement(model, "joints", names[type], a, b, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddKnifeEdge - Adds a knife edge (a skate, a sleigh's runner; docs/nonholonomic.md): the point X of the rigid
  body a has no velocity along the body-fixed direction normal, n_a . v_X = 0, a velocity constraint.

  Logically Collective

  Input Parameters:
+ model - the model
. a - a rigid body
. X - the contact point in a's frame (NULL for the centre)
- normal - the direction across the blade in a's frame (non-zero)

  Output Parameter:
. elem - the element index (may be NULL)

  Notes:
  Velocity constraints need a scheme that treats them (em, dla, dh). With a planar joint it makes a Chaplygin sleigh or
a skate. The initial velocity must satisfy it (MbsModelSetUp() checks it).

  Level: beginner

.seealso: `MbsModelAddRolling()`, `MbsModelAddJoint()`
@*/
PetscErrorCode MbsModelAddKnifeEdge(MbsModel model, PetscInt a, const PetscReal X[3], const PetscReal normal[3],
                                    PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  PetscCheck(normal, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_NULL, "Knife edge: the normal is required");
  MbsElemDataInit(&d, X, NULL);
  for (int i = 0; i < 3; i++) d.axis_a[i] = normal[i];
  PetscCall(MbsModelAddNamedElement(model, "joints", "knife_edge", a, MBS_GROUND, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddRolling - Adds rolling without slipping (docs/nonholonomic.md) of a round body (a ball, or a wheel or disk
  kept upright) on the fixed plane with unit normal n under it: the centre X stays at its initial height over the
  plane (one holonomic row) and the contact point c - r n has no velocity along the plane (two velocity rows).

  Logically Collective

  Input Parameters:
+ model - the model
. a - a rigid body
. X - the centre in a's frame (NULL for the centre of mass)
. r - the radius, the distance from the centre to the contact (positive)
- n - the plane's normal in the world frame, pointing to the body (non-zero)

  Output Parameter:
. elem - the element index (may be NULL)

  Notes:
  A wheel or disk needs its axis kept perpendicular to n (MBS_JOINT_PERPENDICULAR with the ground), so that the
  contact lies at distance r below its centre. Needs a scheme that treats velocity constraints (em, dla, dh).

  Level: beginner

.seealso: `MbsModelAddKnifeEdge()`, `MbsModelAddJoint()`
@*/
PetscErrorCode MbsModelAddRolling(MbsModel model, PetscInt a, const PetscReal X[3], PetscReal r, const PetscReal n[3],
                                  PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  PetscCheck(n, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_NULL, "Rolling: the plane's normal is required");
  MbsElemDataInit(&d, X, NULL);
  d.length = r;
  for (int i = 0; i < 3; i++) d.axis_b[i] = n[i];
  PetscCall(MbsModelAddNamedElement(model, "joints", "rolling", a, MBS_GROUND, &d, elem));
  PetscFunctionReturn(0);
}

/* The data of a load or a drive: its point X on a, its vector v into the field at offset `field` (load, axis_a or
   axis_b) and its time function (NULL: the constant 1), checked finite and, for a ramp or smooth step, with its end
   after its start */
static PetscErrorCode MbsModelLoadData(MbsModel model, const char what[], const PetscReal X[3], const PetscReal v[3],
                                       size_t field, const MbsTimeFunction *time, MbsElemData *d)
{
  PetscReal *dst = (PetscReal *)((char *)d + field);

  PetscFunctionBegin;
  MbsElemDataInit(d, X, NULL);
  PetscCheck(v && MbsVec3IsFinite(v), PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "%s load: the vector must be given and finite", what);
  for (int i = 0; i < 3; i++) dst[i] = v[i];
  if (time) {
    PetscBool owned = PETSC_FALSE;
    PetscCheck(time->kind >= MBS_TIME_CONSTANT && time->kind <= MBS_TIME_TABLE, PetscObjectComm((PetscObject)model),
               PETSC_ERR_ARG_OUTOFRANGE, "%s load: unknown time function kind %d", what, time->kind);
    for (PetscInt k = 0; k < model->ntables; k++) owned = (PetscBool)(owned || model->tables[k] == time->table);
    PetscCheck(time->kind != MBS_TIME_TABLE || owned, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONG,
               "%s load: a table must come from MbsModelCreateTimeTable() on this model", what);
    for (int i = 0; i < 4; i++)
      PetscCheck(PetscIsNormalReal(time->p[i]) || time->p[i] == 0, PetscObjectComm((PetscObject)model),
                 PETSC_ERR_ARG_OUTOFRANGE, "%s load: the time function's parameters must be finite", what);
    PetscCheck((time->kind != MBS_TIME_RAMP && time->kind != MBS_TIME_SMOOTH_STEP) || time->p[1] > time->p[0],
               PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
               "%s load: the time function ends at %g, not after its start %g", what, (double)time->p[1],
               (double)time->p[0]);
    d->time.kind = time->kind; /* field by field: the caller's padding bytes would enter the checkpoint's model hash */
    for (int i = 0; i < 4; i++) d->time.p[i] = time->p[i];
    d->time.table = time->kind == MBS_TIME_TABLE ? time->table : NULL;
  } else {
    d->time.kind = MBS_TIME_CONSTANT; /* a load without a time function: its vector at all times */
    d->time.p[0] = 1.0;
  }
  PetscFunctionReturn(0);
}

/*@C
  MbsModelCreateTimeTable - A function of time given by a table (docs/loads.md): values at strictly increasing
  times, interpolated linearly or by the natural cubic spline, constant before the first time and after the last.
  The model keeps a copy; use the function for loads and drives of this model.

  Logically Collective

  Input Parameters:
+ model - the model
. n - the number of points, at least 2
. t, v - the times (strictly increasing) and the values, finite
- cubic - PETSC_TRUE for the natural cubic spline (continuous first and second derivatives), PETSC_FALSE for
          linear interpolation

  Output Parameter:
. f - the time function (kind MBS_TIME_TABLE)

  Level: intermediate

.seealso: `MbsModelAddPointLoad()`, `MbsModelAddJointTorque()`
@*/
PetscErrorCode MbsModelCreateTimeTable(MbsModel model, PetscInt n, const PetscReal t[], const PetscReal v[],
                                       PetscBool cubic, MbsTimeFunction *f)
{
  MbsTimeTable *tb;
  PetscReal    *tt, *vv, *d2, *work;

  PetscFunctionBegin;
  PetscCheck(n >= 2 && n <= PETSC_MAX_INT / 4, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "Time table: expected at least 2 points, got %" PetscInt_FMT, n);
  for (PetscInt i = 0; i < n; i++) {
    PetscCheck(!PetscIsInfOrNanReal(t[i]) && !PetscIsInfOrNanReal(v[i]), PetscObjectComm((PetscObject)model),
               PETSC_ERR_ARG_OUTOFRANGE, "Time table: point %" PetscInt_FMT " is not finite (t = %g, value = %g)", i,
               (double)t[i], (double)v[i]);
    PetscCheck(i == 0 || t[i] > t[i - 1], PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
               "Time table: times must increase strictly, got t = %g at point %" PetscInt_FMT " after %g", (double)t[i],
               i, (double)t[i - 1]);
  }
  PetscCall(PetscNew(&tb));
  PetscCall(PetscMalloc3(n, &tt, n, &vv, n, &d2));
  PetscCall(PetscArraycpy(tt, t, n));
  PetscCall(PetscArraycpy(vv, v, n));
  PetscCall(PetscArrayzero(d2, n));
  if (cubic) {
    PetscCall(PetscMalloc1(n, &work));
    MbsTimeTableSpline((int)n, tt, vv, d2, work);
    PetscCall(PetscFree(work));
  }
  tb->n     = (int)n;
  tb->cubic = cubic ? 1 : 0;
  tb->t     = tt;
  tb->v     = vv;
  tb->d2    = d2;
  PetscCall(PetscRealloc(sizeof(MbsTimeTable *) * (model->ntables + 1), &model->tables));
  model->tables[model->ntables++] = tb;
  PetscCall(PetscMemzero(f, sizeof(*f)));
  f->kind  = MBS_TIME_TABLE;
  f->table = tb;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddPointLoad - Adds a force F f(t) at the material point X of a body (docs/loads.md): F in the world frame,
  f a time function (NULL: 1). Every scheme adds its impulse over a step at the step's mid-time; with EM the
  energy changes by exactly its work (MbsDiagnostics W).

  Logically Collective

  Input Parameters:
+ model - the model
. body - the body (a particle, or a rigid body with X in its frame)
. X - the material point (NULL: the origin; ignored on particles)
. F - the force, N
- time - the time function (MBS_TIME_CONSTANT p[0]; MBS_TIME_RAMP or MBS_TIME_SMOOTH_STEP from p[2] at p[0] to p[3]
         at p[1]; MBS_TIME_HARMONIC p[3] + p[0] sin(2 pi p[1] t + p[2])), or NULL

  Output Parameter:
. elem - the element index (may be NULL)

  Level: beginner

.seealso: `MbsModelAddTorqueLoad()`, `MbsStepperSetExternalForce()`
@*/
PetscErrorCode MbsModelAddPointLoad(MbsModel model, PetscInt body, const PetscReal X[3], const PetscReal F[3],
                                    const MbsTimeFunction *time, PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  PetscCall(MbsModelLoadData(model, "Force", X, F, offsetof(MbsElemData, load), time, &d));
  PetscCall(MbsModelAddNamedElement(model, "loads", "force", body, MBS_GROUND, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddTorqueLoad - Adds a torque T f(t) on a rigid body (docs/loads.md): T in the world frame, f a time
  function as in MbsModelAddPointLoad() (NULL: 1).

  Logically Collective

  Input Parameters:
+ model - the model
. body - a rigid body
. T - the torque, N m
- time - the time function, or NULL

  Output Parameter:
. elem - the element index (may be NULL)

  Level: beginner

.seealso: `MbsModelAddPointLoad()`
@*/
PetscErrorCode MbsModelAddTorqueLoad(MbsModel model, PetscInt body, const PetscReal T[3], const MbsTimeFunction *time,
                                     PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  PetscCall(MbsModelLoadData(model, "Torque", NULL, T, offsetof(MbsElemData, load), time, &d));
  PetscCall(MbsModelAddNamedElement(model, "loads", "torque", body, MBS_GROUND, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddJointTorque - Adds a torque tau(t) about an axis carried by body a, acting on b, and its opposite on a
  (docs/loads.md): the drive of a revolute or cylindrical joint between them.

  Logically Collective

  Input Parameters:
+ model - the model
. a, axis_a - body a (rigid or MBS_GROUND) and the axis in its frame (world frame on the ground)
. b - body b (rigid or MBS_GROUND, not both the ground)
- torque - tau(t) in N m, a time function as in MbsModelAddPointLoad()

  Output Parameter:
. elem - the element index (may be NULL)

  Level: beginner

.seealso: `MbsModelAddTorqueLoad()`, `MbsModelAddRevolute()`
@*/
PetscErrorCode MbsModelAddJointTorque(MbsModel model, PetscInt a, const PetscReal axis_a[3], PetscInt b,
                                      const MbsTimeFunction *torque, PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  PetscCheck(torque, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_NULL, "Joint torque: the torque is required");
  PetscCall(MbsModelLoadData(model, "Joint torque", NULL, axis_a, offsetof(MbsElemData, axis_a), torque, &d));
  PetscCall(MbsModelAddNamedElement(model, "loads", "joint_torque", a, b, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddJointForce - Adds a force f(t) along an axis carried by body a, on the point Xb of b, and its opposite on
  the point Xa of a (docs/loads.md): the drive of a prismatic or cylindrical joint between them.

  Logically Collective

  Input Parameters:
+ model - the model
. a, Xa, axis_a - body a (rigid or MBS_GROUND), its point and the axis in its frame (world frame on the ground)
. b, Xb - body b (any, or MBS_GROUND, not both the ground) and its point
- force - f(t) in N, a time function as in MbsModelAddPointLoad()

  Output Parameter:
. elem - the element index (may be NULL)

  Level: beginner

.seealso: `MbsModelAddJointTorque()`, `MbsModelAddJoint()`
@*/
PetscErrorCode MbsModelAddJointForce(MbsModel model, PetscInt a, const PetscReal Xa[3], const PetscReal axis_a[3],
                                     PetscInt b, const PetscReal Xb[3], const MbsTimeFunction *force, PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  PetscCheck(force, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_NULL, "Joint force: the force is required");
  PetscCall(MbsModelLoadData(model, "Joint force", Xa, axis_a, offsetof(MbsElemData, axis_a), force, &d));
  for (int i = 0; i < 3; i++) d.Xb[i] = Xb ? Xb[i] : 0;
  PetscCall(MbsModelAddNamedElement(model, "loads", "joint_force", a, b, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddAngleDrive - Prescribes the angle th(t) by which body b turns relative to body a about an axis carried by
  a, measured from the initial state (docs/drives.md): a rheonomic constraint, used with a revolute or cylindrical
  joint about the same axis.

  Logically Collective

  Input Parameters:
+ model - the model
. a, axis_a - body a (rigid or MBS_GROUND) and the axis in its frame (world frame on the ground)
. b - body b (rigid or MBS_GROUND, not both the ground)
- angle - th(t) in rad, a time function that is 0 at t = 0 (MbsModelAddPointLoad(), MbsModelCreateTimeTable())

  Output Parameter:
. elem - the element index (may be NULL)

  Notes:
  The initial velocities must agree with th'(0): MbsModelSetUp() checks both constraint levels.

  Level: beginner

.seealso: `MbsModelAddSlideDrive()`, `MbsModelAddPositionDrive()`, `MbsModelAddJointTorque()`
@*/
PetscErrorCode MbsModelAddAngleDrive(MbsModel model, PetscInt a, const PetscReal axis_a[3], PetscInt b,
                                     const MbsTimeFunction *angle, PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  PetscCheck(angle, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_NULL, "Angle drive: the angle is required");
  PetscCall(MbsModelLoadData(model, "Angle drive", NULL, axis_a, offsetof(MbsElemData, axis_a), angle, &d));
  PetscCall(MbsModelAddNamedElement(model, "drives", "angle", a, b, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddSlideDrive - Prescribes the displacement u(t) of the point Xb of body b relative to the point Xa of body a
  along an axis carried by a, measured from the initial state (docs/drives.md): used with a prismatic or cylindrical
  joint, or a point on a line.

  Logically Collective

  Input Parameters:
+ model - the model
. a, Xa, axis_a - body a (rigid or MBS_GROUND), its point (NULL: the origin) and the axis in its frame
. b, Xb - body b and its point (NULL: the origin)
- displacement - u(t) in m, a time function that is 0 at t = 0

  Output Parameter:
. elem - the element index (may be NULL)

  Level: beginner

.seealso: `MbsModelAddAngleDrive()`, `MbsModelAddJointForce()`
@*/
PetscErrorCode MbsModelAddSlideDrive(MbsModel model, PetscInt a, const PetscReal Xa[3], const PetscReal axis_a[3],
                                     PetscInt b, const PetscReal Xb[3], const MbsTimeFunction *displacement,
                                     PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  PetscCheck(displacement, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_NULL,
             "Slide drive: the displacement is required");
  PetscCall(MbsModelLoadData(model, "Slide drive", Xa, axis_a, offsetof(MbsElemData, axis_a), displacement, &d));
  for (int i = 0; i < 3; i++) d.Xb[i] = Xb ? Xb[i] : 0;
  PetscCall(MbsModelAddNamedElement(model, "drives", "slide", a, b, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddPositionDrive - Prescribes the path x0 + s(t) n of the point X of a body (docs/drives.md).

  Logically Collective

  Input Parameters:
+ model - the model
. body, X - the body (particle or rigid) and its point (NULL: the origin)
. x0 - the path's start in the world (NULL: where the point starts)
. n - the path's direction, world frame
- displacement - s(t) in m, a time function that is 0 at t = 0

  Output Parameter:
. elem - the element index (may be NULL)

  Level: beginner

.seealso: `MbsModelAddSlideDrive()`
@*/
PetscErrorCode MbsModelAddPositionDrive(MbsModel model, PetscInt body, const PetscReal X[3], const PetscReal x0[3],
                                        const PetscReal n[3], const MbsTimeFunction *displacement, PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  PetscCall(MbsModelCheckNotSetUp(model)); /* before reading the body, which a set-up model may not hold here */
  PetscCheck(displacement, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_NULL,
             "Position drive: the displacement is required");
  PetscCall(MbsModelLoadData(model, "Position drive", X, n, offsetof(MbsElemData, axis_b), displacement, &d));
  if (x0)
    for (int i = 0; i < 3; i++) d.Xb[i] = x0[i];
  else {
    PetscBool held; /* in a two-pass construction only the ranks that store the drive need its start */
    PetscCall(MbsModelHoldsBody(model, body, &held));
    if (held) PetscCall(MbsModelGetPointPosition(model, body, d.Xa, d.Xb));
  }
  PetscCall(MbsModelAddNamedElement(model, "drives", "position", body, MBS_GROUND, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddDamper - Adds an axial damper between two points (docs/dampers.md): the force -c |u|^(e-1) u n on a
  and its opposite on b, with n the unit vector from b's point to a's and u = n . (v_a - v_b) the rate at which the
  points separate. Every scheme adds its impulse over a step from the step's midpoint and mean velocity; with EM the
  energy falls by exactly the energy it dissipates (MbsDiagnostics D).

  Logically Collective

  Input Parameters:
+ model - the model
. a, Xa, b, Xb - bodies and material points, as in MbsModelAddSpherical()
. damping - c > 0
- exponent - e in [1, 10] (1: a linear damper), or PETSC_DETERMINE for 1

  Output Parameter:
. elem - the element index (may be NULL)

  Level: beginner

.seealso: `MbsModelAddSpring()`
@*/
PetscErrorCode MbsModelAddDamper(MbsModel model, PetscInt a, const PetscReal Xa[3], PetscInt b, const PetscReal Xb[3],
                                 PetscReal damping, PetscReal exponent, PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  MbsElemDataInit(&d, Xa, Xb);
  d.damping  = damping;
  d.exponent = exponent == PETSC_DETERMINE ? MBS_ELEM_UNSET : exponent;
  PetscCall(MbsModelAddNamedElement(model, "springs", "damper", a, b, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddTorsionalSpring - Adds a torsional spring at a revolute or cylindrical joint between bodies a and b
  (docs/torsional_spring.md): the potential k/2 phi^2, phi the angle by which b has turned relative to a about an axis
  carried by a, away from the rest angle, taken in (-pi, pi]. EM's discrete gradient keeps its energy balance exact.

  Logically Collective

  Input Parameters:
+ model - the model
. a, axis_a - body a (rigid or MBS_GROUND) and the axis in its frame (world frame on the ground)
. b - body b (rigid or MBS_GROUND, not both the ground)
. stiffness - k > 0, N m/rad
- angle - the rest angle in rad from the initial state, in (-pi, pi); 0: at rest initially

  Output Parameter:
. elem - the element index (may be NULL)

  Level: beginner

.seealso: `MbsModelAddTorsionalDamper()`, `MbsModelAddJoint()`
@*/
PetscErrorCode MbsModelAddTorsionalSpring(MbsModel model, PetscInt a, const PetscReal axis_a[3], PetscInt b,
                                          PetscReal stiffness, PetscReal angle, PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  MbsElemDataInit(&d, NULL, NULL);
  for (int i = 0; i < 3; i++) d.axis_a[i] = axis_a ? axis_a[i] : 0;
  d.stiffness = stiffness;
  d.length    = angle; /* every real is a valid angle: no PETSC_DETERMINE (-1) here */
  PetscCall(MbsModelAddNamedElement(model, "springs", "torsional_spring", a, b, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddTorsionalDamper - Adds a torsional damper at a revolute or cylindrical joint between bodies a and b
  (docs/dampers.md): the torque -c n . (omega_b - omega_a) about the axis n carried by a, on b, and its opposite on a.

  Logically Collective

  Input Parameters:
+ model - the model
. a, axis_a - body a (rigid or MBS_GROUND) and the axis in its frame (world frame on the ground)
. b - body b (rigid or MBS_GROUND, not both the ground)
- damping - c > 0, N m s

  Output Parameter:
. elem - the element index (may be NULL)

  Level: beginner

.seealso: `MbsModelAddTorsionalSpring()`, `MbsModelAddDamper()`
@*/
PetscErrorCode MbsModelAddTorsionalDamper(MbsModel model, PetscInt a, const PetscReal axis_a[3], PetscInt b,
                                          PetscReal damping, PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  MbsElemDataInit(&d, NULL, NULL);
  for (int i = 0; i < 3; i++) d.axis_a[i] = axis_a ? axis_a[i] : 0;
  d.damping = damping;
  PetscCall(MbsModelAddNamedElement(model, "springs", "torsional_damper", a, b, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelAddSpring - Adds a spring between two points.

  Logically Collective

  Input Parameters:
+ model - the model
. type - MBS_SPRING_LINEAR (V = k/2 (|d| - L)^2) or MBS_SPRING_QUARTIC (V = k/2 (|d|^2 - L^2)^2)
. a, Xa, b, Xb - bodies and material points, as in MbsModelAddSpherical()
. stiffness - k > 0
- length - rest length L >= 0, or PETSC_DETERMINE for the initial distance
@*/
PetscErrorCode MbsModelAddSpring(MbsModel model, MbsSpringType type, PetscInt a, const PetscReal Xa[3], PetscInt b,
                                 const PetscReal Xb[3], PetscReal stiffness, PetscReal length, PetscInt *elem)
{
  MbsElemData d;

  PetscFunctionBegin;
  MbsElemDataInit(&d, Xa, Xb);
  d.stiffness = stiffness;
  if (length != (PetscReal)PETSC_DETERMINE) d.length = length;
  PetscCall(
    MbsModelAddNamedElement(model, "springs", type == MBS_SPRING_QUARTIC ? "quartic" : "linear", a, b, &d, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelSetBodyLabel - Sets where a body came from (e.g. "input.yaml:12:5"), used in error messages about it.

  Not Collective

  Level: developer
@*/
PetscErrorCode MbsModelSetBodyLabel(MbsModel model, PetscInt body, const char label[])
{
  PetscFunctionBegin;
  PetscCall(MbsModelCheckNotSetUp(model));
  PetscCheck(body >= 0 && body < model->nbodies, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "Body %" PetscInt_FMT " does not exist", body);
  {
    PetscBool held;
    PetscCall(MbsModelHoldsBody(model, body, &held));
    if (!held) PetscFunctionReturn(0); /* a two-pass construction: another rank's body */
  }
  PetscCall(PetscFree(MbsModelBody(model, body)->label));
  PetscCall(PetscStrallocpy(label, &MbsModelBody(model, body)->label));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelSetElementLabel - Sets where an element came from (e.g. "input.yaml:30:7"), used in error messages about it.

  Not Collective

  Level: developer
@*/
PetscErrorCode MbsModelSetElementLabel(MbsModel model, PetscInt elem, const char label[])
{
  PetscFunctionBegin;
  PetscCall(MbsModelCheckNotSetUp(model));
  PetscCheck(elem >= 0 && elem < model->nelems, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "Element %" PetscInt_FMT " does not exist", elem);
  if (model->build != MBS_BUILD_WHOLE) { /* a two-pass construction: stored only by its owner, in the local pass */
    PetscInt k = -1;
    if (model->build == MBS_BUILD_LOCAL) PetscCall(PetscFindInt(elem, model->nelem_local, model->elem_local, &k));
    if (k < 0 || k >= model->nelem_store) PetscFunctionReturn(0);
    elem = k;
  }
  PetscCall(PetscFree(model->elems[elem].label));
  PetscCall(PetscStrallocpy(label, &model->elems[elem].label));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelSetInitialTolerance - Largest violation of the position and velocity constraints that
  MbsModelSetUp() accepts in the initial state.

  Logically Collective

  Options Database Key:
. -mbs_initial_tolerance <tol> - the tolerance (default 1e-8)
@*/
PetscErrorCode MbsModelSetInitialTolerance(MbsModel model, PetscReal tol)
{
  PetscFunctionBegin;
  PetscCheck(tol > 0, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE, "Tolerance must be positive");
  model->ic_tol = tol;
  PetscFunctionReturn(0);
}

/* Describe the k-th owned element for messages: its label if it has one, else its type and index. */
void MbsElementDescribe(MbsModel model, PetscInt k, char *buf, size_t len)
{
  const MbsElement *el = MbsModelLocalElement(model, k);
  if (el->label)
    PetscSNPrintf(buf, len, "%s", el->label);
  else if (el->kernel == &MbsElemKernelRigidBody)
    PetscSNPrintf(buf, len, "internal constraints of rigid body '%s'%s%s", MbsModelBody(model, el->body[0])->name,
                  MbsModelBody(model, el->body[0])->label ? " at " : "",
                  MbsModelBody(model, el->body[0])->label ? MbsModelBody(model, el->body[0])->label : "");
  else
    PetscSNPrintf(buf, len, "element %" PetscInt_FMT " (%s)", model->elem_local[k], el->kernel->name);
}

PetscErrorCode MbsModelDescribeElement_Private(MbsModel model, PetscInt e, char *buf, size_t len)
{
  PetscInt k = -1, first;

  PetscFunctionBegin;
  buf[0] = 0;
  if (e >= 0) PetscCall(PetscFindInt(e, model->nelem_local, model->elem_local, &k));
  if (k >= 0) MbsElementDescribe(model, k, buf, len);
  PetscCall(MbsModelFirstElement(model, k, buf, len, &first));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsModelElementError_Private(MbsModel model, PetscInt e, PetscErrorCode code, const char msg[])
{
  PetscFunctionBegin;
  if (model->build == MBS_BUILD_WHOLE) SETERRQ(PetscObjectComm((PetscObject)model), code, "%s", msg);
  if (model->deferred_elem >= 0 && model->deferred_elem <= e) PetscFunctionReturn(0); /* the first one counts */
  PetscCall(PetscFree(model->deferred));
  PetscCall(PetscStrallocpy(msg, &model->deferred));
  model->deferred_elem = e;
  model->deferred_code = code;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsModelRaiseDeferred_Private(MbsModel model)
{
  char     msg[PETSC_MAX_PATH_LEN + 1024] = "";
  PetscInt first, code = model->deferred_code;

  PetscFunctionBegin;
  if (model->deferred) PetscCall(PetscSNPrintf(msg, sizeof(msg), "%s", model->deferred));
  PetscCall(MbsModelFirstKey(model, model->deferred_elem, msg, sizeof(msg), &first));
  if (first < 0) PetscFunctionReturn(0);
  PetscCall(MbsModelFirstKey(model, model->deferred_elem, &code, sizeof(code), &first));
  PetscCall(PetscFree(model->deferred));
  model->deferred_elem = -1;
  SETERRQ(PetscObjectComm((PetscObject)model), (PetscErrorCode)code, "%s", msg);
}

/* A body in messages: its input position and name, or its name */
static void MbsBodyDescribe(MbsModel model, PetscInt b, char *buf, size_t len)
{
  const MbsBody *body = MbsModelBody(model, b);
  if (body->label)
    PetscSNPrintf(buf, len, "%s", body->label);
  else
    PetscSNPrintf(buf, len, "body %" PetscInt_FMT " '%s'", b, body->name ? body->name : "");
}

/* The initial energy, momenta and potentials must be finite: a velocity of 1e200 or a gravity of 1e307 passes
   the reader (each number is finite) but makes the energy overflow, and the first step would fail on a residual
   that is NaN, which no smaller step can help. Each rank checks its own bodies and elements; the first offender (bodies
   before elements, in index order) is reported on every rank. */
static PetscErrorCode MbsModelCheckFiniteState(MbsModel model)
{
  char     msg[PETSC_MAX_PATH_LEN + 512] = "";
  PetscInt key                           = -1, first;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < model->nowned && key < 0; k++) {
    const PetscInt b    = model->owned_body[k];
    const MbsBody *body = MbsModelBody(model, b);
    PetscReal      T = 0, L = 0;
    char           desc[PETSC_MAX_PATH_LEN + 128];

    for (PetscInt j = 0; j < (PetscInt)body->type; j++)
      for (int i = 0; i < 3; i++) {
        const PetscReal v = body->v0[3 * j + i], m = body->mblock[j];
        T += 0.5 * m * v * v;
        L += PetscAbsReal(m * v);
      }
    if (PetscIsInfOrNanReal(T) || PetscIsInfOrNanReal(L)) {
      MbsBodyDescribe(model, b, desc, sizeof(desc));
      PetscCall(
        PetscSNPrintf(msg, sizeof(msg),
                      "%s: the initial kinetic energy or momentum is not finite (T = %g, |m v| = %g): the mass, "
                      "inertia or velocity overflows",
                      desc, (double)T, (double)L));
      key = b;
    }
  }
  for (PetscInt k = 0; k < model->nelem_local && key < 0; k++) {
    const MbsElement *el = MbsModelLocalElement(model, k);
    PetscReal         qe[MBS_ELEM_MAX_NQ], V;
    PetscInt          n = 0;
    char              desc[PETSC_MAX_PATH_LEN + 128];

    if (!el->kernel->energy) continue;
    for (int s = 0; s < 2; s++)
      if (el->body[s] >= 0)
        for (PetscInt i = 0; i < 3 * (PetscInt)model->body_type[el->body[s]]; i++)
          qe[n++] = MbsModelBody(model, el->body[s])->q0[i];
    V = el->kernel->energy(&el->data, qe);
    if (PetscIsInfOrNanReal(V)) {
      if (el->kernel == &MbsElemKernelGravity) {
        char body[PETSC_MAX_PATH_LEN + 128];
        MbsBodyDescribe(model, el->body[0], body, sizeof(body));
        PetscCall(PetscSNPrintf(desc, sizeof(desc), "%s: its weight", body));
      } else
        MbsElementDescribe(model, k, desc, sizeof(desc));
      PetscCall(
        PetscSNPrintf(msg, sizeof(msg),
                      "%s: the initial potential energy is not finite (V = %g): gravity, a stiffness, a mass or "
                      "a position overflows",
                      desc, (double)V));
      key = model->nbodies + model->elem_local[k];
    }
  }
  PetscCall(MbsModelFirstKey(model, key, msg, sizeof(msg), &first));
  PetscCheck(first < 0, PetscObjectComm((PetscObject)model), PETSC_ERR_USER_INPUT, "%s", msg);
  PetscFunctionReturn(0);
}

/* The initial state must satisfy g(q0) = 0 and G(q0) v0 = 0; name the worst offending element. */
static PetscErrorCode MbsModelCheckInitialState(MbsModel model)
{
  PetscReal   worst[3];
  PetscInt    worst_elem[3];
  PetscReal  *q, *v;
  const char *what[3] = {"g(q0)", "G(q0) v0", "A(q0) v0"};

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(model->nq_ghosted, &q, model->nq_ghosted, &v));
  for (PetscInt b = 0; b < model->nbodies; b++) {
    if (model->body_lq[b] < 0) continue;
    for (PetscInt i = 0; i < 3 * (PetscInt)model->body_type[b]; i++) {
      q[model->body_lq[b] + i] = MbsModelBody(model, b)->q0[i];
      v[model->body_lq[b] + i] = MbsModelBody(model, b)->v0[i];
    }
  }
  PetscCall(MbsOpConstraintMaxLocal(model, q, v, worst, worst_elem));
  PetscCall(MbsOpVConstraintMaxLocal(model, q, v, &worst[2], &worst_elem[2]));
  PetscCall(PetscFree2(q, v));
  for (int level = 0; level < 3; level++) {
    struct {
      double val;
      int    elem;
    } loc = {worst[level], (int)worst_elem[level]}, glob;
    PetscCallMPI(MPI_Allreduce(&loc, &glob, 1, MPI_DOUBLE_INT, MPI_MAXLOC, PetscObjectComm((PetscObject)model)));
    if (!(glob.val <= model->ic_tol)) { /* a NaN residual is a violation too */
      char desc[PETSC_MAX_PATH_LEN + 128];
      PetscCall(MbsModelDescribeElement_Private(model, glob.elem, desc, sizeof(desc)));
      SETERRQ(PetscObjectComm((PetscObject)model), PETSC_ERR_USER_INPUT,
              "%s: the initial state violates this %s %s: max |%s| = %.3e > tolerance %.1e "
              "(-mbs_initial_tolerance)",
              desc, MbsModelElementInfo(model, glob.elem).kernel->name,
              level == 2 ? "velocity constraint"
                         : (level ? "constraint on velocity level" : "constraint on position level"),
              what[level], glob.val, (double)model->ic_tol);
    }
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsModelOptions_Private(PetscOptionItems *PetscOptionsObject, PetscObject obj)
{
  MbsModel model = (MbsModel)obj;

  PetscFunctionBegin;
  {
    PetscReal tol = model->ic_tol;
    PetscBool set;
    PetscCall(PetscOptionsReal("-mbs_initial_tolerance", "Largest accepted initial constraint violation",
                               "MbsModelSetInitialTolerance", tol, &tol, &set));
    PetscCheck(!set || (tol > 0 && !PetscIsInfOrNanReal(tol)), PetscObjectComm((PetscObject)model),
               PETSC_ERR_ARG_OUTOFRANGE, "-mbs_initial_tolerance: expected a positive finite number, got %g",
               (double)tol);
    model->ic_tol = tol;
  }
  {
    const char *const parts[] = {"metis", "contiguous"};
    PetscInt          which   = 0;
    PetscBool         set;
    PetscCall(PetscStrcmp(model->partitioner, "contiguous", &set));
    if (set) which = 1;
    PetscCall(PetscOptionsEList("-mbs_partition", "How bodies are distributed over MPI ranks", "MbsModelSetPartitioner",
                                parts, 2, parts[which], &which, &set));
    if (set) PetscCall(PetscStrncpy(model->partitioner, parts[which], sizeof(model->partitioner)));
  }
  PetscCall(PetscOptionsBool("-mbs_view_partition",
                             "Report bodies, unknowns, ghosts and cut elements per rank after set-up",
                             "MbsModelViewPartition", model->view_partition, &model->view_partition, NULL));
  PetscCall(PetscOptionsBool("-mbs_check_redundancy",
                             "Fail at set-up if constraints are redundant (linearly dependent) at the initial state",
                             "MbsModelSetUp", model->check_redundancy, &model->check_redundancy, NULL));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelSetFromOptions - Reads the model's options; MbsModelSetUp() calls it if it was not called.

  Collective

  Options Database Keys:
+ -mbs_initial_tolerance <tol> - largest accepted initial constraint violation (MbsModelSetInitialTolerance())
. -mbs_partition <metis,contiguous> - how bodies are distributed over the ranks (MbsModelSetPartitioner())
. -mbs_view_partition - report bodies, unknowns, ghosts and cut elements per rank after set-up
- -mbs_check_redundancy - set-up fails if constraints are redundant at the initial state, naming the elements
(docs/robustness.md)

  Level: beginner
@*/
PetscErrorCode MbsModelSetFromOptions(MbsModel model)
{
  PetscFunctionBegin;
  PetscCall(MbsObjectOptions((PetscObject)model, MbsModelOptions_Private));
  model->options_read = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelSetUp - Freezes the model: adds gravity elements, assigns bodies and elements to ranks, numbers
  coordinates and constraint rows, sets up the ghost bodies, and checks the initial state against the
  constraints on position and velocity level.

  Collective

  Options Database Key:
. -mbs_initial_tolerance <tol> - largest accepted initial constraint violation

  Level: beginner
@*/
PetscErrorCode MbsModelSetUp(MbsModel model)
{
  PetscFunctionBegin;
  if (model->setup) PetscFunctionReturn(0);
  PetscCheck(model->build != MBS_BUILD_GRAPH, PetscObjectComm((PetscObject)model), PETSC_ERR_ORDER,
             "The model holds only its graph: call MbsModelPartition() and add the bodies and elements again first");
  if (model->build == MBS_BUILD_LOCAL) {
    PetscCall(MbsModelRaiseDeferred_Private(model));
    PetscCheck(model->nbodies == model->nbodies_graph && model->nelems == model->nelems_graph,
               PetscObjectComm((PetscObject)model), PETSC_ERR_ORDER,
               "After MbsModelPartition() %" PetscInt_FMT " bodies and %" PetscInt_FMT
               " elements were added again, of the first pass's %" PetscInt_FMT " and %" PetscInt_FMT,
               model->nbodies, model->nelems, model->nbodies_graph, model->nelems_graph);
  }
  PetscCheck(model->nbodies > 0, PetscObjectComm((PetscObject)model), PETSC_ERR_USER_INPUT, "The model has no bodies");
  if (!model->options_read) PetscCall(MbsModelSetFromOptions(model));
  if (model->gravity[0] != 0 || model->gravity[1] != 0 || model->gravity[2] != 0) {
    if (model->build == MBS_BUILD_LOCAL) { /* the gravity elements' info on every rank, their data with the owner */
      PetscInt nown = 0;
      for (PetscInt b = 0; b < model->nbodies; b++) nown += model->body_rank[b] == model->rank;
      model->maxelems = model->nelem_store + nown; /* exactly: a doubling would copy and keep the rank's part twice */
      PetscCall(PetscRealloc(sizeof(MbsElement) * PetscMax(model->maxelems, 1), &model->elems));
      PetscCall(PetscRealloc(sizeof(MbsElementInfo) * (model->nelems + model->nbodies), &model->einfo));
      for (PetscInt b = 0; b < model->nbodies; b++) {
        MbsElementInfo *info = &model->einfo[model->nelems_graph++];
        info->kernel         = &MbsElemKernelGravity;
        info->type           = NULL;
        info->body[0]        = b;
        info->body[1]        = MBS_GROUND;
      }
    }
    for (PetscInt b = 0; b < model->nbodies; b++) {
      MbsElement *e;
      PetscInt    index;
      PetscCall(MbsModelNewElement(model, &MbsElemKernelGravity, NULL, b, MBS_GROUND, &e, &index));
      if (e != &model->scratch_elem) e->data.mass = MbsModelBody(model, b)->mass;
      for (int i = 0; i < 3; i++) e->data.gravity[i] = model->gravity[i];
      model->ngravity++;
    }
  }
  PetscCall(MbsModelLayout_Private(model));
  model->setup = PETSC_TRUE;
  if (model->view_partition) PetscCall(MbsModelViewPartition(model, NULL));
  PetscCall(MbsModelCheckFiniteState(model));
  PetscCall(MbsModelSetConstraintTime(model, 0.0, 0.0)); /* the drives at the initial state */
  PetscCall(MbsModelCheckInitialState(model));
  if (model->check_redundancy) PetscCall(MbsModelCheckRedundancy(model));
  if (model->nvcon) PetscCall(MbsModelCheckVelocityConstraints(model));
  if (model->size > 1) { /* what reads every element, before the ranks drop the others' */
    PetscInt width;
    PetscCall(MbsModelGetGraphWidth(model, &width));
    PetscCall(MbsModelCountSize_Private(model));
  }
  PetscCall(MbsModelDistribute_Private(model)); /* each rank keeps its part */
  PetscCall(MbsModelViewFromOptions(model, NULL, "-mbs_model_view"));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelGetVelocityConstraintSizes - Numbers of velocity constraint rows (docs/nonholonomic.md), on this rank and in
  total.

  Not Collective

  Level: intermediate

.seealso: `MbsModelGetSizes()`, `MbsModelAddKnifeEdge()`, `MbsModelAddRolling()`
@*/
PetscErrorCode MbsModelGetVelocityConstraintSizes(MbsModel model, PetscInt *nv_local, PetscInt *nv)
{
  PetscFunctionBegin;
  PetscCheck(model->setup, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONGSTATE, "Call MbsModelSetUp() first");
  if (nv_local) *nv_local = model->nvcon_local;
  if (nv) *nv = model->nvcon;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelGetSizes - Numbers of coordinates and constraint rows, on this rank and in total.

  Not Collective
@*/
PetscErrorCode MbsModelGetSizes(MbsModel model, PetscInt *nq_local, PetscInt *nq, PetscInt *ncon_local, PetscInt *ncon)
{
  PetscFunctionBegin;
  PetscCheck(model->setup, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONGSTATE, "Call MbsModelSetUp() first");
  if (nq_local) *nq_local = model->nq_local;
  if (nq) *nq = model->nq;
  if (ncon_local) *ncon_local = model->ncon_local;
  if (ncon) *ncon = model->ncon;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelCreateInitialState - Creates vectors with the initial coordinates q0 and momenta p0 = M v0.

  Collective

  Output Parameters:
+ q - coordinates, distributed like the model's coordinates
- p - momenta
@*/
PetscErrorCode MbsModelCreateInitialState(MbsModel model, Vec *q, Vec *p)
{
  PetscScalar *qa, *pa;

  PetscFunctionBegin;
  PetscCheck(model->setup, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONGSTATE, "Call MbsModelSetUp() first");
  PetscCall(VecCreateMPI(PetscObjectComm((PetscObject)model), model->nq_local, model->nq, q));
  PetscCall(VecDuplicate(*q, p));
  PetscCall(VecGetArray(*q, &qa));
  PetscCall(VecGetArray(*p, &pa));
  for (PetscInt k = 0; k < model->nowned; k++) {
    const MbsBody *body = MbsModelBody(model, model->owned_body[k]);
    const PetscInt off  = model->body_lq[model->owned_body[k]];
    for (PetscInt i = 0; i < 3 * (PetscInt)body->type; i++) {
      qa[off + i] = body->q0[i];
      pa[off + i] = body->mblock[i / 3] * body->v0[i];
    }
  }
  PetscCall(VecRestoreArray(*q, &qa));
  PetscCall(VecRestoreArray(*p, &pa));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelCreateScatterToZero - Creates a scatter that gathers a coordinate-layout vector (such as the
  state q or p) onto rank 0 in input order: bodies as they were added, particle x, y, z, rigid body
  phi, d1, d2, d3. The global layout follows the partition, so this is the way to read a state by body.

  Collective

  Input Parameters:
+ model - the set-up model
- x - a vector in coordinate layout

  Output Parameters:
+ scatter - the scatter, to be used with SCATTER_FORWARD (and SCATTER_REVERSE to distribute)
- x0 - a sequential vector holding all coordinates on rank 0 and none elsewhere

  Level: intermediate
@*/
PetscErrorCode MbsModelCreateScatterToZero(MbsModel model, Vec x, VecScatter *scatter, Vec *x0)
{
  PetscInt *idx, n = model->rank == 0 ? model->nq : 0, k = 0;
  IS        is;

  PetscFunctionBegin;
  PetscCheck(model->setup, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONGSTATE, "Call MbsModelSetUp() first");
  PetscCall(PetscMalloc1(n, &idx));
  if (model->rank == 0)
    for (PetscInt b = 0; b < model->nbodies; b++)
      for (PetscInt i = 0; i < 3 * (PetscInt)model->body_type[b]; i++) idx[k++] = model->body_q[b] + i;
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, n, idx, PETSC_OWN_POINTER, &is));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, x0));
  PetscCall(VecScatterCreate(x, is, *x0, NULL, scatter));
  PetscCall(ISDestroy(&is));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelView - Prints the model's size and layout.

  Collective
@*/
PetscErrorCode MbsModelView(MbsModel model, PetscViewer viewer)
{
  PetscInt nparticles = 0, nrigid = 0;

  PetscFunctionBegin;
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)model), &viewer));
  for (PetscInt b = 0; b < model->nbodies; b++) {
    if (model->body_type[b] == MBS_BODY_PARTICLE)
      nparticles++;
    else
      nrigid++;
  }
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "MbsModel: %" PetscInt_FMT " bodies (%" PetscInt_FMT " particles, %" PetscInt_FMT
                                   " rigid), %" PetscInt_FMT " elements\n",
                                   model->nbodies, nparticles, nrigid, model->nelems));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  gravity (%g, %g, %g)\n", (double)model->gravity[0],
                                   (double)model->gravity[1], (double)model->gravity[2]));
  if (model->setup) {
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "  %" PetscInt_FMT " coordinates, %" PetscInt_FMT " constraints on %d ranks\n",
                                     model->nq, model->ncon, model->size));
    PetscCall(MbsModelViewPartition(model, viewer));
  }
  PetscFunctionReturn(0);
}

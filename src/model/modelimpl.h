/* Private model structures: bodies, elements, the ownership layout and the ghosted local numbering. */
#ifndef MBS_MODELIMPL_H
#define MBS_MODELIMPL_H

#include <petsc/private/petscimpl.h>
#include <gglmbs/model.h>
#include <gglmbs/elements.h>

typedef struct {
  MbsBodyType type;
  char       *name;
  char       *label; /* where it came from, for error messages */
  PetscReal   mass;
  PetscReal   inertia[3];     /* principal moments about the centre of mass (rigid) */
  PetscReal   mblock[4];      /* mass of each 3-vector block: m (particle), m, E1, E2, E3 (rigid) */
  PetscReal   q0[12], v0[12]; /* initial coordinates and velocities */
} MbsBody;

typedef struct {
  const MbsElemKernel  *kernel;
  const MbsElementType *type;    /* what the element is (NULL for a rigid body's own constraints and gravity) */
  PetscInt              body[2]; /* body a, body b (MBS_GROUND for ground or for a one-body element) */
  MbsElemData           data;
  char                 *label;
} MbsElement;

/* An element's kind and bodies: what the partition reads of every element (MbsModel.einfo, MbsModelElementInfo()) */
typedef struct {
  const MbsElemKernel  *kernel;
  const MbsElementType *type;
  PetscInt              body[2];
} MbsElementInfo;

/* How MbsModelAdd...() records bodies and elements (MbsModelBeginGraph(), MbsModelPartition()) */
typedef enum {
  MBS_BUILD_WHOLE, /* every rank stores every body and element (the default) */
  MBS_BUILD_GRAPH, /* the first of two passes: only each body's type and each element's kind and bodies */
  MBS_BUILD_LOCAL  /* the second: the same calls again, each rank storing its own part and its neighbours */
} MbsBuildMode;

struct _p_MbsModel {
  PETSCHEADER(int);
  PetscMPIInt rank, size;
  PetscReal   gravity[3];
  PetscReal   load_factor; /* scales the applied loads (kernels with `applied`): MbsModelSetLoadFactor() */
  char       *source;      /* where it came from (MbsModelSetSource()), for the outputs' provenance */
  PetscReal   ic_tol;
  PetscBool   setup;
  PetscBool   options_read;     /* MbsModelSetFromOptions() was called */
  PetscBool   check_redundancy; /* -mbs_check_redundancy: MbsModelSetUp() looks for redundant constraints */
  PetscBool   memory_limit_set; /* MbsModelSetMemoryLimit() was called (else -mbs_memory_limit, else physical memory) */
  PetscInt64  memory_limit;     /* bytes, 0 for none */
  PetscReal   memory_physical;  /* physical memory of all the nodes the ranks run on, 0 until asked for */
  /* the size estimate's counts of bodies [0, sized_bodies) and elements [0, sized_elems) (src/model/memory.c):
     bodies, elements, coordinates, constraint rows, Jacobian nonzeros. Bodies and elements are only ever
     appended, so each size check counts only the new ones, and a model of many generators, each checked
     before it is added, costs time proportional to its size. */
  PetscInt  sized_bodies, sized_elems;
  PetscReal sized[6];
  PetscBool sized_2d;     /* a generator added a net or mesh (the estimate's LU fill) */
  PetscInt  chain_bodies; /* bodies that MbsModelAddChain() added (the estimate's KLU) */

  /* Bodies and elements. Built whole, until MbsModelSetUp() every rank holds all of them, in the order they were added
     (bodies[b], elems[e]). The set-up distributes them (MbsModelDistribute_Private()): a rank then holds the full
     data of its owned bodies and their ghosts (bodies[body_store[b]], owned first, in the order of their local
     coordinates) and of its owned elements (elems[k], k the position in elem_local); of every body only its type
     (body_type[b]) and the layout's arrays (body_rank, body_q, body_lq, body_store: MbsModelGetBodyCoordinates()
     answers for any body on any rank); no rank holds anything of every element then. On several ranks the elements are
     a rank's own from the set-up on (elems_local; from the local pass on when built in two passes, see below); einfo[]
     holds every element's kernel, type and bodies for the partition only (the graph pass, or a set-up that partitions a
     model built whole reads elems[]) and is freed by the set-up. */
  PetscInt nbodies, maxbodies; /* bodies in the model */
  PetscInt nbody_store;        /* bodies held by this rank */
  MbsBody *bodies;
  short   *body_type;         /* MbsBodyType of every body (not a char type: a char may alias the doubles the loops
                                  that read it store, which would make them load it again after every store) */
  PetscInt       *body_store; /* where body b is held in bodies[], -1 if not on this rank; NULL: bodies[b] */
  PetscInt        nelems, maxelems; /* elements in the model */
  PetscInt        nelem_store;      /* elements held by this rank */
  MbsElement     *elems;
  MbsElementInfo *einfo;       /* every element: from the graph pass to the set-up (built in two passes) */
  PetscBool       elems_local; /* elems[k] is the k-th owned element (elem_local[k]), not element k */
  PetscInt        ngravity;    /* gravity elements appended by SetUp */
  /* The construction in two passes (MbsModelBeginGraph(), MbsModelPartition()): in the local pass a rank stores its
     owned bodies, their neighbours in the body graph and its owned elements; a body or element it does not store is
     built in scratch space and dropped. An error only the ranks that hold the data can find (an element's completion
     from its bodies' positions) is kept as the first by element index and raised on every rank by
     MbsModelRaiseDeferred_Private(). */
  MbsBuildMode   build;
  PetscInt       nbodies_graph, nelems_graph; /* what the graph pass added, which the local pass adds again */
  PetscInt      *held_body;      /* local pass: the global index of each stored body (owned, ghosts, others) */
  PetscInt       ntables_before; /* time tables created before the first pass (kept by the partition) */
  MbsBody        scratch_body;
  MbsElement     scratch_elem;
  PetscInt       deferred_elem; /* -1: no deferred error */
  PetscErrorCode deferred_code;
  char          *deferred;
  PetscInt       ntables; /* time tables (MbsModelCreateTimeTable()), owned by the model */
  MbsTimeTable **tables;

  /* Layout after SetUp. Bodies are partitioned over the ranks (METIS on the body graph, or contiguous
     ranges), each element is owned by the rank of its first non-ground body and its constraint rows live
     with it. A rank numbers its coordinates and rows in increasing body and element index. */
  char      partitioner[16]; /* "metis" or "contiguous" */
  PetscBool view_partition;
  PetscInt  ncut;                      /* elements joining bodies on different ranks */
  PetscInt  nconn;                     /* elements joining two bodies */
  PetscInt  nq, ncon;                  /* global numbers of coordinates and constraint rows */
  PetscInt  nq_local, ncon_local;      /* owned by this rank */
  PetscInt *rank_qstart, *rank_cstart; /* size+1 prefix sums over ranks */
  PetscInt *body_rank;                 /* owner of each body */
  PetscInt  graph_width;               /* MbsModelGetGraphWidth(), -1 until computed */
  PetscInt *body_q;                    /* global coordinate offset of each body */
  PetscInt  nowned;
  PetscInt *owned_body; /* owned bodies, increasing */
  PetscInt  nelem_local;
  PetscInt *elem_local; /* owned elements */
  PetscInt *elem_c;     /* local constraint-row offset of each owned element (by position in elem_local) */
  /* Velocity constraints (docs/nonholonomic.md): rows A(q) v = 0 numbered like the constraint rows, in their own
     row space (a scheme's MBS_FIELD_VCONSTRAINT fields) */
  PetscInt  nvcon, nvcon_local;
  PetscInt *rank_vstart; /* size+1 */
  PetscInt *elem_v;      /* local velocity-row offset of each owned element */
  /* Drives (rheonomic constraints): their positions in elem_local, whether any rank has one, and the time span
     their constraints are evaluated at (MbsModelSetConstraintTime()) */
  PetscInt  ndrive_local;
  PetscInt *drive_local;
  /* The positions in elem_local of the elements with constraint rows, of those with a potential and no constraint
     rows, and of those with a force, increasing: the operators' loops (src/model/operators.c) visit only these, so a
     pass over a chain's rods does not also read its gravity elements (an element is 592 bytes; the residual is bound
     by reading them) */
  PetscInt  nelem_con, nelem_pot, nelem_force;
  PetscInt *elem_con, *elem_pot, *elem_force;
  PetscBool has_drives;
  PetscReal ctime[2];
  /* Ghosted local coordinate numbering: owned coordinates first, then those of ghost bodies. */
  PetscInt   nq_ghosted;
  PetscInt   nghost;
  PetscInt  *ghost_body; /* ghost bodies in the order of their local coordinates */
  PetscInt  *body_lq;    /* local coordinate offset of each body, -1 when absent */
  PetscReal *minv;       /* inverse mass per ghosted local coordinate */
  Vec        qghost;     /* ghosted local coordinates */
  VecScatter qscatter;   /* coordinate Vec -> qghost */
};

/* elementtypes.c: the registry and the built-in element types */
PETSC_INTERN PetscErrorCode MbsElementTypeRegisterAll(void);
PETSC_INTERN PetscErrorCode MbsElementTypeRegistryDestroy_Private(void);

/* The k-th owned element (elem_local[k]) in messages: its input label ("file:line:col: joints[1] (knife_edge)"), else
   its type and index. After the layout (MbsModelSetUp()). */
PETSC_INTERN void MbsElementDescribe(MbsModel, PetscInt k, char *buf, size_t len);
/* Element e's description (MbsElementDescribe()) on every rank, from its owner; "" if no rank owns it. Collective. */
PETSC_INTERN PetscErrorCode MbsModelDescribeElement_Private(MbsModel, PetscInt e, char *buf, size_t len);
/* The first over the ranks of each rank's key (-1 for none): first its value (-1 if no rank has one), and buf (len
   bytes, which the rank with that key filled) broadcast from that rank. Collective. */
PETSC_INTERN PetscErrorCode MbsModelFirstKey(MbsModel, PetscInt key, void *buf, size_t len, PetscInt *first);

/* layout.c: partition, ownership, numbering and ghosts, at MbsModelSetUp(); then each rank keeps only its part */
PETSC_INTERN PetscErrorCode MbsModelLayout_Private(MbsModel);
PETSC_INTERN PetscErrorCode MbsModelDistribute_Private(MbsModel);
/* The first over the ranks of each rank's candidate element (k its position in elem_local, -1 for none): elem its
   index (-1 if no rank has one), and buf (len bytes, which a rank with a candidate filled) broadcast from its owner */
PETSC_INTERN PetscErrorCode MbsModelFirstElement(MbsModel, PetscInt k, void *buf, size_t len, PetscInt *elem);
/* An error if the model is set up (bodies, elements and the partitioner are set before) */
PETSC_INTERN PetscErrorCode MbsModelCheckNotSetUp(MbsModel);
/* PetscObjectOptionsBegin(obj); body(PetscOptionsObject, obj); PetscOptionsEnd(), but an error raised in the
   body (a bad option value) still ends the block: PETSc's macros leave the block's strings allocated when
   an error returns from inside it. */
PETSC_INTERN PetscErrorCode MbsObjectOptions(PetscObject, PetscErrorCode (*body)(PetscOptionItems *, PetscObject));

/* The data of body b, which this rank must hold (owned or ghost after the set-up) */
static inline MbsBody *MbsModelBody(MbsModel model, PetscInt b)
{
  return &model->bodies[model->body_store ? model->body_store[b] : b];
}

/* The k-th element this rank owns (model->elem_local[k]), before and after the set-up distributed the model */
static inline MbsElement *MbsModelLocalElement(MbsModel model, PetscInt k)
{
  return &model->elems[model->elems_local ? k : model->elem_local[k]];
}

/* The kernel, type and bodies of element e, on every rank: from einfo[] in a construction in two passes, else from
   elems[]. Only until the set-up, which partitions with it; then on one rank (which holds every element) only. */
static inline MbsElementInfo MbsModelElementInfo(MbsModel model, PetscInt e)
{
  MbsElementInfo info;
  if (model->einfo) return model->einfo[e];
  PetscAssertAbort(!model->elems_local, PETSC_COMM_SELF, PETSC_ERR_PLIB,
                   "Element %" PetscInt_FMT "'s info after the ranks kept only their own elements", e);
  info.kernel  = model->elems[e].kernel;
  info.type    = model->elems[e].type;
  info.body[0] = model->elems[e].body[0];
  info.body[1] = model->elems[e].body[1];
  return info;
}

/* The factor on an element's potential or force: the model's load factor for an applied load, else 1 */
static inline PetscReal MbsElementLoadScale(MbsModel model, const MbsElement *e)
{
  return e->kernel->applied ? model->load_factor : 1.0;
}

/* Local coordinates of element e gathered from a ghosted local array. */
static inline void MbsElementGather(MbsModel model, const MbsElement *e, const PetscScalar *x, PetscReal *xe)
{
  PetscInt n = 0;
  for (int s = 0; s < 2; s++) {
    if (e->body[s] < 0) continue;
    const PetscInt nb = 3 * model->body_type[e->body[s]], off = model->body_lq[e->body[s]];
    for (PetscInt i = 0; i < nb; i++) xe[n++] = PetscRealPart(x[off + i]);
  }
}

/* Ghosted local indices of the element's coordinates; returns their number. */
static inline PetscInt MbsElementLocalIndices(MbsModel model, const MbsElement *e, PetscInt *idx)
{
  PetscInt n = 0;
  for (int s = 0; s < 2; s++) {
    if (e->body[s] < 0) continue;
    const PetscInt nb = 3 * model->body_type[e->body[s]], off = model->body_lq[e->body[s]];
    for (PetscInt i = 0; i < nb; i++) idx[n++] = off + i;
  }
  return n;
}

#endif

/*
  Trajectory output for ParaView (docs/output.md): trajectory.h5, written in parallel through PETSc's
  HDF5 viewer, and trajectory.xdmf, the XML that tells ParaView what the datasets mean, written by rank 0.

  Points, in natural order whatever the number of ranks and the partition: the bodies in input order
  (particle position, rigid body centre phi), then one fixed point per ground anchor of a two-point
  element attached to the ground, in element order. Cells: one line per two-point element (joints, rods,
  springs, fixed points to their anchor) in element order, from its first point to its second; the
  second is always a body (the ground anchor, if any, comes first). Elements of one body (rigid-body
  internal constraints, gravity) have no cell. The topology is written once; each written step adds a
  group with the step's data (docs/output.md has the layout).
*/
#define _POSIX_C_SOURCE 200809L /* fsync, fileno, access, statvfs */
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <petscviewerhdf5.h>
#include "stepper/stepperimpl.h"

typedef struct _n_MbsTrajectory *MbsTrajectory;

static PetscErrorCode MbsTrajectoryDestroy(MbsTrajectory *);

#define MBS_TRAJ_H5   "trajectory.h5"
#define MBS_TRAJ_XDMF "trajectory.xdmf"

/* The data of a step is gathered into one vector of 3-vectors: the blocks of rows below, npoints rows each,
   then one row per cell with its force; each block is written as a dataset of its own (/steps/<step>/<name>),
   so that every XDMF reader finds it by a plain HDF5 path. */
enum { MBS_TRAJ_POSITION, MBS_TRAJ_VELOCITY, MBS_TRAJ_D1, MBS_TRAJ_D2, MBS_TRAJ_D3, MBS_TRAJ_NPOINTFIELDS };
/* the cell fields, after the point fields: the force, and the stress resultants of beams (zero for other cells) */
#define MBS_TRAJ_FORCE       MBS_TRAJ_NPOINTFIELDS
#define MBS_TRAJ_NCELLFIELDS 3
#define MBS_TRAJ_NFIELDS     (MBS_TRAJ_NPOINTFIELDS + MBS_TRAJ_NCELLFIELDS)
static const char *const MbsTrajFields[] = {"position",        "velocity",        "d1", "d2", "d3", "force",
                                            "resultant_force", "resultant_moment"};
/* 3: the resultants; 2: a dataset per field; 1: one dataset "data" per step (neither continued) */
#define MBS_TRAJ_VERSION  3
#define MBS_TRAJ_GRID_MAX 8192 /* bytes of the XDMF text of one step */
/* A sync waits at least this many times as long as the last rewrite of the XDMF file took: rewriting the
   growing file then costs at most 1/MBS_TRAJ_SYNC_SPACING of the run, however many steps it lists. */
#define MBS_TRAJ_SYNC_SPACING 50

/* Cell kinds (the "kind" cell field). Two-point elements between two bodies always get a cell (kind 0
   for a type not listed here); an element attached to the ground gets one only if its type is listed,
   because one-body elements (rigid-body internal constraints, gravity) also name the ground as body b. */
static const char MbsTrajKindNames[] =
  "0 other two-body element, 1 spherical joint (a fixed point if one end is a ground anchor), 2 rod, 3 revolute "
  "joint, 4 linear spring, 5 quartic spring, 6 prismatic joint, 7 cylindrical joint, 8 universal joint, 9 weld joint, "
  "10 point on line, 11 point on plane, 12 damper, 13 drive, 14 beam";

struct _n_MbsTrajectory {
  MPI_Comm    comm;
  PetscMPIInt rank;
  PetscInt    every;
  char        h5[PETSC_MAX_PATH_LEN], xdmf[PETSC_MAX_PATH_LEN], dir[PETSC_MAX_PATH_LEN];
  PetscViewer viewer;

  /* Points are the bodies (point b is body b), then the ground anchors of the elements attached to the ground; cells
     are the elements with a cell kind (MbsTrajElementKind()), numbered as the elements are, and anchors as their
     cells. Nothing here is sized by the whole model: a rank holds the cells of its owned elements, and for the
     topology's datasets those of a slice of the element indices (MbsTrajBuildTopology()). */
  PetscInt  nbodies, npoints, ncells;
  PetscInt  nslice;      /* cells of the elements in this rank's slice of the element indices, in order */
  PetscInt *slice_elem;  /* their element */
  PetscInt *slice_point; /* their two points */
  PetscInt *slice_kind;
  PetscInt  nowned;       /* cells of the elements this rank owns */
  PetscInt *owned_k;      /* their position in model->elem_local */
  PetscInt *owned_cell;   /* their cell */
  PetscInt *owned_side;   /* which body of the element (0: a, 1: b) is the cell's second point */
  PetscInt *owned_anchor; /* the point of its ground anchor, -1 for none */

  /* One dataset per step: PETSc's HDF5 viewer flushes the file (with MPI-IO an fsync, which costs
     more than the rest of a write) after every dataset it writes. */
  Vec          data; /* the rows of a step, natural order, block size 3 */
  PetscInt     field_row[MBS_TRAJ_NFIELDS], field_rows[MBS_TRAJ_NFIELDS]; /* this rank's first row, and count */
  Vec          cell_owned; /* the forces of the owned cells, in owner order */
  Vec          velocity;   /* M^-1 p of the bodies' first blocks (particle x, rigid body phi), by their owners */
  VecScatter   q_to_points, p_to_points, to_cells;
  PetscScalar *qloc, *qw; /* ghosted local coordinates */

  PetscInt create_step, last_step;
  off_t    xdmf_end; /* rank 0: where the closing tags of the XDMF file start */

  /* Written steps are made durable together: one flush of trajectory.h5 (with MPI-IO an fsync, 1 ms, several
     times a small model's step), then the XDMF file lists them. */
  PetscReal      sync; /* seconds between syncs (MbsStepperSetTrajectorySync()); 0: as often as the spacing allows */
  PetscLogDouble synced_at; /* when the last sync ended */
  PetscLogDouble xml_cost;  /* seconds the last rewrite of the XDMF file took (rank 0's, known to all) */
  PetscBool      unflushed; /* a step was written since the last flush of trajectory.h5 */
  PetscInt       npending, maxpending;
  PetscInt      *pending_step; /* written, not yet flushed and listed */
  PetscReal     *pending_time;
  char          *provenance; /* MbsStepperGetProvenance() at creation */
};

static PetscBool     MbsTrajPackageInitialized = PETSC_FALSE;
static PetscLogEvent MBS_TrajWrite;

static PetscErrorCode MbsTrajFinalizePackage(void)
{
  PetscFunctionBegin;
  MbsTrajPackageInitialized = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsTrajInitializePackage(void)
{
  PetscClassId classid;

  PetscFunctionBegin;
  if (MbsTrajPackageInitialized) PetscFunctionReturn(0);
  MbsTrajPackageInitialized = PETSC_TRUE;
  PetscCall(PetscClassIdRegister("Multibody trajectory", &classid));
  PetscCall(PetscLogEventRegister("MbsTrajWrite", classid, &MBS_TrajWrite));
  PetscCall(PetscRegisterFinalize(MbsTrajFinalizePackage));
  PetscFunctionReturn(0);
}

/* The cell kind of an element (its type says), or -1 if it has no cell: one-body elements without a type (a
   rigid body's own constraints, gravity) */
static PetscInt MbsTrajElementKind(const MbsElement *el)
{
  const PetscBool two = (PetscBool)(el->body[0] >= 0 && el->body[1] >= 0);

  if (el->type && el->type->cell_kind > 0) return el->type->cell_kind;
  return two ? 0 : -1; /* a load on one body (the ground as b) is not a cell */
}

/* Cells and points, from the owned elements. The owners send each cell's kind and bodies to the rank whose slice of
   the element indices (split as PETSc splits vectors) holds it; a rank numbers the cells and anchors of its slice after
   those of the slices before it (MPI_Exscan) and sends each cell's number and anchor back to its owner. */
static PetscErrorCode MbsTrajBuildTopology(MbsTrajectory tr, MbsModel model)
{
  MPI_Comm        comm = tr->comm;
  PetscLayout     map;
  PetscSF         sf;
  PetscSFNode    *remote;
  PetscInt        lo, hi, nroots, counts[2], first[2] = {0, 0}, *leaf[3], *root[3];
  const PetscInt *ranges;

  PetscFunctionBegin;
  tr->nbodies = model->nbodies;
  tr->nowned  = 0;
  for (PetscInt k = 0; k < model->nelem_local; k++) {
    if (MbsTrajElementKind(MbsModelLocalElement(model, k)) >= 0) tr->nowned++;
  }
  PetscCall(PetscMalloc4(tr->nowned, &tr->owned_k, tr->nowned, &tr->owned_cell, tr->nowned, &tr->owned_side, tr->nowned,
                         &tr->owned_anchor));
  PetscCall(PetscMalloc4(tr->nowned, &remote, tr->nowned, &leaf[0], tr->nowned, &leaf[1], tr->nowned, &leaf[2]));
  PetscCall(PetscLayoutCreateFromSizes(comm, PETSC_DECIDE, model->nelems, 1, &map));
  PetscCall(PetscLayoutGetRange(map, &lo, &hi));
  PetscCall(PetscLayoutGetRanges(map, &ranges));
  nroots = hi - lo;
  for (PetscInt k = 0, i = 0; k < model->nelem_local; k++) {
    const MbsElement *el   = MbsModelLocalElement(model, k);
    const PetscInt    kind = MbsTrajElementKind(el), e = model->elem_local[k];
    PetscMPIInt       owner;
    if (kind < 0) continue;
    PetscCall(PetscLayoutFindOwner(map, e, &owner));
    remote[i].rank    = owner;
    remote[i].index   = e - ranges[owner];
    tr->owned_k[i]    = k;
    tr->owned_side[i] = el->body[0] >= 0 && el->body[1] >= 0 ? 1 : (el->body[0] >= 0 ? 0 : 1);
    leaf[0][i]        = kind;
    leaf[1][i]        = el->body[0];
    leaf[2][i++]      = el->body[1];
  }
  PetscCall(PetscSFCreate(comm, &sf));
  PetscCall(PetscSFSetGraph(sf, nroots, tr->nowned, NULL, PETSC_OWN_POINTER, remote, PETSC_COPY_VALUES));
  PetscCall(PetscMalloc3(nroots, &root[0], nroots, &root[1], nroots, &root[2]));
  for (PetscInt j = 0; j < nroots; j++) root[0][j] = -1; /* no cell */
  for (int f = 0; f < 3; f++) {
    PetscCall(PetscSFReduceBegin(sf, MPIU_INT, leaf[f], root[f], MPI_REPLACE));
    PetscCall(PetscSFReduceEnd(sf, MPIU_INT, leaf[f], root[f], MPI_REPLACE));
  }
  counts[0] = counts[1] = 0;
  for (PetscInt j = 0; j < nroots; j++)
    if (root[0][j] >= 0) {
      counts[0]++;
      if (root[1][j] < 0 || root[2][j] < 0) counts[1]++;
    }
  PetscCallMPI(MPI_Exscan(counts, first, 2, MPIU_INT, MPI_SUM, comm));
  if (tr->rank == 0) first[0] = first[1] = 0; /* MPI_Exscan leaves rank 0's undefined */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPIU_INT, MPI_SUM, comm));
  tr->ncells  = counts[0];
  tr->npoints = tr->nbodies + counts[1];
  tr->nslice  = 0;
  for (PetscInt j = 0; j < nroots; j++) tr->nslice += root[0][j] >= 0;
  PetscCall(PetscMalloc3(tr->nslice, &tr->slice_elem, 2 * tr->nslice, &tr->slice_point, tr->nslice, &tr->slice_kind));
  for (PetscInt j = 0, c = 0, a = 0; j < nroots; j++) {
    const PetscInt b0 = root[1][j], b1 = root[2][j];
    if (root[0][j] < 0) continue;
    tr->slice_elem[c] = lo + j;
    tr->slice_kind[c] = root[0][j];
    if (b0 >= 0 && b1 >= 0) {
      tr->slice_point[2 * c]     = b0;
      tr->slice_point[2 * c + 1] = b1;
      root[2][j]                 = -1; /* sent back: no anchor */
    } else {
      tr->slice_point[2 * c]     = tr->nbodies + first[1] + a++;
      tr->slice_point[2 * c + 1] = b0 >= 0 ? b0 : b1;
      root[2][j]                 = tr->slice_point[2 * c];
    }
    root[1][j] = first[0] + c++; /* sent back: the cell */
  }
  for (int f = 1; f < 3; f++) {
    PetscCall(PetscSFBcastBegin(sf, MPIU_INT, root[f], leaf[f], MPI_REPLACE));
    PetscCall(PetscSFBcastEnd(sf, MPIU_INT, root[f], leaf[f], MPI_REPLACE));
  }
  for (PetscInt i = 0; i < tr->nowned; i++) {
    tr->owned_cell[i]   = leaf[1][i];
    tr->owned_anchor[i] = leaf[2][i];
  }
  PetscCall(PetscSFDestroy(&sf));
  PetscCall(PetscLayoutDestroy(&map));
  PetscCall(PetscFree3(root[0], root[1], root[2]));
  PetscCall(PetscFree4(remote, leaf[0], leaf[1], leaf[2]));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsTrajCreateNaturalVec(MPI_Comm comm, PetscInt n, PetscInt bs, const char name[], Vec *v)
{
  PetscFunctionBegin;
  PetscCall(VecCreate(comm, v));
  PetscCall(VecSetSizes(*v, PETSC_DECIDE, bs * n));
  PetscCall(VecSetBlockSize(*v, bs));
  PetscCall(VecSetType(*v, VECMPI));
  PetscCall(PetscObjectSetName((PetscObject)*v, name));
  PetscCall(VecSet(*v, 0.0));
  PetscFunctionReturn(0);
}

/* Scatter of blocks of bs entries from src (block indices from[]) to dst (block indices to[]). */
static PetscErrorCode MbsTrajCreateBlockScatter(MPI_Comm comm, PetscInt bs, Vec src, PetscInt n, const PetscInt from[],
                                                Vec dst, const PetscInt to[], VecScatter *scatter)
{
  IS isfrom, isto;

  PetscFunctionBegin;
  PetscCall(ISCreateBlock(comm, bs, n, from, PETSC_COPY_VALUES, &isfrom));
  PetscCall(ISCreateBlock(comm, bs, n, to, PETSC_COPY_VALUES, &isto));
  PetscCall(VecScatterCreate(src, isfrom, dst, isto, scatter));
  PetscCall(ISDestroy(&isfrom));
  PetscCall(ISDestroy(&isto));
  PetscFunctionReturn(0);
}

/* The first row of field f in the step's data, and its rows: npoints for a point field, ncells for a cell field */
static PetscInt MbsTrajFieldFirst(MbsTrajectory tr, int f)
{
  return f < MBS_TRAJ_FORCE ? f * tr->npoints : MBS_TRAJ_NPOINTFIELDS * tr->npoints + (f - MBS_TRAJ_FORCE) * tr->ncells;
}

static PetscInt MbsTrajFieldRows(MbsTrajectory tr, int f)
{
  return f < MBS_TRAJ_FORCE ? tr->npoints : tr->ncells;
}

/* Natural-order vectors, the scatters from the state, and the ground anchors' positions. */
static PetscErrorCode MbsTrajCreateVectors(MbsTrajectory tr, MbsStepper st)
{
  const PetscInt np    = tr->npoints;
  MbsModel       model = st->model;
  PetscInt      *from, *to, n = 0, lo, hi;

  PetscFunctionBegin;
  PetscCall(MbsTrajCreateNaturalVec(tr->comm, MBS_TRAJ_NPOINTFIELDS * np + MBS_TRAJ_NCELLFIELDS * tr->ncells, 3, "data",
                                    &tr->data));
  PetscCall(VecCreateMPI(tr->comm, 3 * MBS_TRAJ_NCELLFIELDS * tr->nowned, PETSC_DETERMINE, &tr->cell_owned));
  /* in 3-vector rows: block j of body b (x or phi, d1, d2, d3) goes to row b of its field */
  PetscCall(PetscMalloc2(4 * model->nowned, &from, 4 * model->nowned, &to));
  for (PetscInt k = 0; k < model->nowned; k++) {
    const PetscInt b = model->owned_body[k];
    for (PetscInt j = 0; j < (PetscInt)model->body_type[b]; j++) {
      from[n] = model->body_q[b] / 3 + j;
      to[n++] = (j ? MBS_TRAJ_D1 + j - 1 : MBS_TRAJ_POSITION) * np + b;
    }
  }
  PetscCall(MbsTrajCreateBlockScatter(tr->comm, 3, st->q, n, from, tr->data, to, &tr->q_to_points));
  for (PetscInt k = 0; k < model->nowned; k++) {
    from[k] = model->body_q[model->owned_body[k]] / 3;
    to[k]   = MBS_TRAJ_VELOCITY * np + model->owned_body[k];
  }
  PetscCall(VecDuplicate(st->p, &tr->velocity));
  PetscCall(MbsTrajCreateBlockScatter(tr->comm, 3, tr->velocity, model->nowned, from, tr->data, to, &tr->p_to_points));
  PetscCall(PetscFree2(from, to));
  PetscCall(PetscMalloc2(MBS_TRAJ_NCELLFIELDS * tr->nowned, &from, MBS_TRAJ_NCELLFIELDS * tr->nowned, &to));
  PetscCall(VecGetOwnershipRange(tr->cell_owned, &lo, NULL));
  for (PetscInt c = 0; c < MBS_TRAJ_NCELLFIELDS; c++) /* cell_owned holds the owned cells' rows field by field */
    for (PetscInt i = 0; i < tr->nowned; i++) {
      from[c * tr->nowned + i] = lo / 3 + c * tr->nowned + i;
      to[c * tr->nowned + i]   = MBS_TRAJ_NPOINTFIELDS * np + c * tr->ncells + tr->owned_cell[i];
    }
  PetscCall(MbsTrajCreateBlockScatter(tr->comm, 3, tr->cell_owned, MBS_TRAJ_NCELLFIELDS * tr->nowned, from, tr->data,
                                      to, &tr->to_cells));
  PetscCall(PetscFree2(from, to));
  /* anchors never move, and no scatter writes to them: the owners of their elements set them once (the ground point
     is in world coordinates) */
  for (PetscInt i = 0; i < tr->nowned; i++) {
    const PetscInt    row = MBS_TRAJ_POSITION * np + tr->owned_anchor[i];
    const MbsElement *el  = MbsModelLocalElement(model, tr->owned_k[i]);
    if (tr->owned_anchor[i] < 0) continue;
    PetscCall(VecSetValuesBlocked(tr->data, 1, &row, tr->owned_side[i] ? el->data.Xa : el->data.Xb, INSERT_VALUES));
  }
  PetscCall(VecAssemblyBegin(tr->data));
  PetscCall(VecAssemblyEnd(tr->data));
  PetscCall(VecGetOwnershipRange(tr->data, &lo, &hi));
  PetscCall(PetscMalloc1(model->nq_ghosted, &tr->qloc));
  /* this rank's rows of each field (maybe none) */
  for (int f = 0; f < MBS_TRAJ_NFIELDS; f++) {
    const PetscInt first = MbsTrajFieldFirst(tr, f), end = first + MbsTrajFieldRows(tr, f);
    tr->field_row[f]  = PetscMin(PetscMax(lo / 3, first), end);
    tr->field_rows[f] = PetscMax(PetscMin(hi / 3, end) - tr->field_row[f], 0);
  }
  PetscFunctionReturn(0);
}

/* This rank's part [lo, hi) of n items split as PETSc splits vectors. */
static PetscErrorCode MbsTrajSlice(MPI_Comm comm, PetscInt n, PetscInt *lo, PetscInt *hi)
{
  PetscInt local = PETSC_DECIDE, end;

  PetscFunctionBegin;
  PetscCall(PetscSplitOwnership(comm, &local, &n));
  PetscCallMPI(MPI_Scan(&local, &end, 1, MPIU_INT, MPI_SUM, comm));
  *lo = end - local;
  *hi = end;
  PetscFunctionReturn(0);
}

/* An integer dataset of the ranks' parts in rank order, this rank's n blocks of bs values, through ISView. */
static PetscErrorCode MbsTrajWriteInts(MbsTrajectory tr, const char name[], PetscInt bs, PetscInt n,
                                       const PetscInt values[])
{
  IS is;

  PetscFunctionBegin;
  PetscCall(ISCreateGeneral(tr->comm, bs * n, values, PETSC_COPY_VALUES, &is));
  PetscCall(ISSetBlockSize(is, bs));
  PetscCall(PetscObjectSetName((PetscObject)is, name));
  PetscCall(ISView(is, tr->viewer));
  PetscCall(ISDestroy(&is));
  PetscFunctionReturn(0);
}

/* The static part: sizes and column names as attributes of the root, connectivity and integer fields
   under /topology. */
static PetscErrorCode MbsTrajWriteTopology(MbsTrajectory tr)
{
  PetscInt  lo, hi, version = MBS_TRAJ_VERSION;
  PetscInt *point_body;

  PetscFunctionBegin;
  PetscCall(PetscViewerHDF5WriteAttribute(tr->viewer, "/", "gglmbs_trajectory_version", PETSC_INT, &version));
  PetscCall(PetscViewerHDF5WriteAttribute(tr->viewer, "/", "provenance", PETSC_STRING, tr->provenance));
  PetscCall(PetscViewerHDF5WriteAttribute(tr->viewer, "/", "npoints", PETSC_INT, &tr->npoints));
  PetscCall(PetscViewerHDF5WriteAttribute(tr->viewer, "/", "nbodies", PETSC_INT, &tr->nbodies));
  PetscCall(PetscViewerHDF5WriteAttribute(tr->viewer, "/", "ncells", PETSC_INT, &tr->ncells));
  PetscCall(PetscViewerHDF5PushGroup(tr->viewer, "/topology"));
  PetscCall(MbsTrajSlice(tr->comm, tr->npoints, &lo, &hi));
  PetscCall(PetscMalloc1(hi - lo, &point_body)); /* the body of each point, -1 for a ground anchor */
  for (PetscInt p = lo; p < hi; p++) point_body[p - lo] = p < tr->nbodies ? p : -1;
  PetscCall(MbsTrajWriteInts(tr, "body", 1, hi - lo, point_body));
  /* no line cells, hence no anchors: one vertex cell per point (body), so that ParaView shows them */
  if (!tr->ncells)
    PetscCall(MbsTrajWriteInts(tr, "vertices", 1, hi - lo, point_body));
  else {
    PetscCall(MbsTrajWriteInts(tr, "cells", 2, tr->nslice, tr->slice_point));
    PetscCall(MbsTrajWriteInts(tr, "kind", 1, tr->nslice, tr->slice_kind));
    PetscCall(MbsTrajWriteInts(tr, "element", 1, tr->nslice, tr->slice_elem));
  }
  PetscCall(PetscFree(point_body));
  PetscCall(PetscViewerHDF5PopGroup(tr->viewer));
  if (tr->ncells)
    PetscCall(PetscViewerHDF5WriteAttribute(tr->viewer, "/topology/kind", "meaning", PETSC_STRING, MbsTrajKindNames));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsTrajStepGroup(PetscInt step, char group[], size_t len)
{
  PetscFunctionBegin;
  PetscCall(PetscSNPrintf(group, len, "/steps/%08" PetscInt_FMT, step));
  PetscFunctionReturn(0);
}

/* A bounded text buffer; overflow is reported once the text is complete. */
typedef struct {
  char  *s;
  size_t len, cap;
  int    overflow;
} MbsTrajText;

static void MbsTrajPrint(MbsTrajText *t, const char *fmt, ...)
{
  va_list ap;
  int     n;

  if (t->overflow) return;
  va_start(ap, fmt);
  n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= t->cap - t->len)
    t->overflow = 1;
  else
    t->len += (size_t)n;
}

/* An HDF5 dataset of the trajectory file, rows x width, as an XDMF data item: by its plain path, which
   ParaView's Xdmf3 readers and its legacy XDMF reader (and other XDMF 2 readers) all read. */
static void MbsTrajDataItem(MbsTrajText *t, const char path[], PetscInt rows, PetscInt width, PetscBool integer)
{
  MbsTrajPrint(t,
               "<DataItem Dimensions=\"%" PetscInt_FMT " %" PetscInt_FMT
               "\" NumberType=\"%s\" Precision=\"%d\" Format=\"HDF\">%s:%s</DataItem>",
               rows, width, integer ? "Int" : "Float", integer ? (int)sizeof(PetscInt) : 8, MBS_TRAJ_H5, path);
}

static void MbsTrajAttribute(MbsTrajText *t, const char name[], PetscBool cell, const char path[], PetscInt rows,
                             PetscInt width, PetscBool integer)
{
  MbsTrajPrint(t, "        <Attribute Name=\"%s\" AttributeType=\"%s\" Center=\"%s\">", name,
               width == 3 ? "Vector" : "Scalar", cell ? "Cell" : "Node");
  MbsTrajDataItem(t, path, rows, width, integer);
  MbsTrajPrint(t, "</Attribute>\n");
}

/* The XDMF grid of one written step, into t. */
static void MbsTrajFormatGrid(MbsTrajectory tr, PetscInt step, PetscReal time, MbsTrajText *t)
{
  const PetscInt np = tr->npoints, nc = tr->ncells;
  char           data[MBS_TRAJ_NFIELDS][96];

  for (int f = 0; f < MBS_TRAJ_NFIELDS; f++)
    snprintf(data[f], sizeof(data[f]), "/steps/%08" PetscInt_FMT "/%s", step, MbsTrajFields[f]);
  MbsTrajPrint(t,
               "      <Grid Name=\"step %" PetscInt_FMT "\" GridType=\"Uniform\">\n        <Time Value=\"%.17g\"/>\n",
               step, (double)time);
  if (nc) {
    MbsTrajPrint(
      t, "        <Topology TopologyType=\"Polyline\" NodesPerElement=\"2\" NumberOfElements=\"%" PetscInt_FMT "\">",
      nc);
    MbsTrajDataItem(t, "/topology/cells", nc, 2, PETSC_TRUE);
  } else {
    MbsTrajPrint(
      t, "        <Topology TopologyType=\"Polyvertex\" NodesPerElement=\"1\" NumberOfElements=\"%" PetscInt_FMT "\">",
      np);
    MbsTrajDataItem(t, "/topology/vertices", np, 1, PETSC_TRUE);
  }
  MbsTrajPrint(t, "</Topology>\n        <Geometry GeometryType=\"XYZ\">");
  MbsTrajDataItem(t, data[MBS_TRAJ_POSITION], np, 3, PETSC_FALSE);
  MbsTrajPrint(t, "</Geometry>\n");
  for (int f = MBS_TRAJ_VELOCITY; f < MBS_TRAJ_NPOINTFIELDS; f++)
    MbsTrajAttribute(t, MbsTrajFields[f], PETSC_FALSE, data[f], np, 3, PETSC_FALSE);
  MbsTrajAttribute(t, "body", PETSC_FALSE, "/topology/body", np, 1, PETSC_TRUE);
  if (nc) {
    for (int f = MBS_TRAJ_FORCE; f < MBS_TRAJ_NFIELDS; f++)
      MbsTrajAttribute(t, MbsTrajFields[f], PETSC_TRUE, data[f], nc, 3, PETSC_FALSE);
    MbsTrajAttribute(t, "kind", PETSC_TRUE, "/topology/kind", nc, 1, PETSC_TRUE);
    MbsTrajAttribute(t, "element", PETSC_TRUE, "/topology/element", nc, 1, PETSC_TRUE);
  }
  MbsTrajPrint(t, "      </Grid>\n");
}

static const char MbsTrajXDMFHeader[] = "<?xml version=\"1.0\" ?>\n"
                                        "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
                                        "<Xdmf Version=\"3.0\">\n"
                                        "  <Domain>\n";
static const char MbsTrajXDMFCollection[] =
  "    <Grid Name=\"gglmbs\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";

/* The provenance as an XDMF Information element (XML-escaped); returns EOF on a failed write */
static int MbsTrajPutProvenance(FILE *fp, const char text[])
{
  if (fputs("    <Information Name=\"provenance\" Value=\"", fp) < 0) return EOF;
  for (const char *c = text; *c; c++) {
    const char *e = *c == '&'    ? "&amp;"
                    : *c == '<'  ? "&lt;"
                    : *c == '>'  ? "&gt;"
                    : *c == '"'  ? "&quot;"
                    : *c == '\n' ? "&#10;"
                                 : NULL;
    if (e ? fputs(e, fp) < 0 : fputc(*c, fp) == EOF) return EOF;
  }
  return fputs("\"/>\n", fp) < 0 ? EOF : 0;
}
static const char MbsTrajXDMFFooter[] = "    </Grid>\n  </Domain>\n</Xdmf>\n";

/* Copies the first len bytes of the file open as in (at its start) to the file open as out; 0 or an errno. */
static int MbsTrajCopyPrefix(FILE *in, FILE *out, off_t len)
{
  char buf[1 << 16];

  for (off_t off = 0; off < len;) {
    const size_t r = fread(buf, 1, (size_t)PetscMin((off_t)sizeof(buf), len - off), in);
    if (!r)
      return ferror(in) && errno ? errno : EIO; /* or the file is shorter than it was written: changed by others */
    if (fwrite(buf, 1, r, out) != r) return errno ? errno : EIO;
    off += (off_t)r;
  }
  return 0;
}

/* Rank 0: the new XDMF file is written under a temporary name, tmp (len bytes), then installed by
   MbsTrajInstallXDMF(): on the disk (fsync), closed, renamed over the old file, so that a reader opens either the
   old file or the new one, both complete. NULL (errno set) if it cannot be created. */
static FILE *MbsTrajCreateXDMF(MbsTrajectory tr, char tmp[], size_t len)
{
  (void)snprintf(tmp, len, "%s.tmp", tr->xdmf);
  return fopen(tmp, "w");
}

/* Installs the new file fp (see MbsTrajCreateXDMF()) unless err says its writing failed; removes it if that or the
   installing fails. 0 or an errno. */
static int MbsTrajInstallXDMF(MbsTrajectory tr, FILE *fp, const char tmp[], int err)
{
  if (!err && (fflush(fp) || fsync(fileno(fp)))) err = errno ? errno : EIO;
  if (fclose(fp) && !err) err = errno ? errno : EIO;
  if (!err && rename(tmp, tr->xdmf)) err = errno;
  if (err) remove(tmp);
  return err;
}

/*
  Rank 0 writes the whole XDMF file, listing the given steps, under a temporary name and renames it:
  at the creation of the writer (a restarted run lists the steps it keeps).
*/
static PetscErrorCode MbsTrajWriteXDMF(MbsTrajectory tr, PetscInt n, const PetscInt steps[], const PetscReal times[])
{
  int err = 0;

  PetscFunctionBegin;
  if (tr->rank == 0) {
    char        tmp[PETSC_MAX_PATH_LEN + 8], buf[MBS_TRAJ_GRID_MAX];
    MbsTrajText t = {buf, 0, sizeof(buf), 0};
    FILE       *fp;
    long        end = 0;

    fp = MbsTrajCreateXDMF(tr, tmp, sizeof(tmp));
    if (!fp)
      err = errno;
    else {
      if (fputs(MbsTrajXDMFHeader, fp) < 0 || MbsTrajPutProvenance(fp, tr->provenance) ||
          fputs(MbsTrajXDMFCollection, fp) < 0)
        err = errno ? errno : EIO;
      for (PetscInt i = 0; i < n && !err; i++) {
        t.len = 0;
        MbsTrajFormatGrid(tr, steps[i], times[i], &t);
        if (t.overflow)
          err = ENOBUFS;
        else if (fputs(buf, fp) < 0)
          err = errno ? errno : EIO;
      }
      if (!err && ((end = ftell(fp)) < 0 || fputs(MbsTrajXDMFFooter, fp) < 0)) err = errno ? errno : EIO;
      err = MbsTrajInstallXDMF(tr, fp, tmp, err);
    }
    tr->xdmf_end = (off_t)end;
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, tr->comm));
  PetscCheck(!err, tr->comm, PETSC_ERR_FILE_WRITE, "Cannot write trajectory file '%s': %s", tr->xdmf, strerror(err));
  PetscFunctionReturn(0);
}

/*
  Rank 0 adds the pending steps to the XDMF file. The new file (the old grids, the new grids, the closing tags)
  is written under a temporary name and renamed over the old one, so a reader (ParaView reloading, a script
  polling the file) opens either the old file or the new one, both complete. Writing the new grids into the
  file in place is not enough: a reader can see a write half done. The copy of the old grids costs time in
  proportion to the file; MbsTrajectoryWrite() spaces the syncs so that it stays a small part of the run
  (xml_cost). Every rank learns whether the write succeeded and what it cost.
*/
static PetscErrorCode MbsTrajAppendXDMF(MbsTrajectory tr)
{
  double res[2] = {0, 0}; /* errno, seconds */

  PetscFunctionBegin;
  if (tr->rank == 0 && tr->npending) {
    char          *all;
    size_t         len = 0, cap = (size_t)tr->npending * MBS_TRAJ_GRID_MAX / 2 + sizeof(MbsTrajXDMFFooter);
    int            err = 0;
    FILE          *in, *out;
    char           buf[MBS_TRAJ_GRID_MAX], tmp[PETSC_MAX_PATH_LEN + 8];
    MbsTrajText    t = {buf, 0, sizeof(buf), 0};
    PetscLogDouble t0, t1;

    PetscCall(PetscTime(&t0));
    if (PetscMalloc1(cap, &all)) err = ENOMEM, all = NULL; /* reported to every rank below, not returned early */
    for (PetscInt i = 0; i < tr->npending && !err; i++) {
      t.len = 0;
      MbsTrajFormatGrid(tr, tr->pending_step[i], tr->pending_time[i], &t);
      if (t.overflow)
        err = ENOBUFS;
      else {
        if (len + t.len + sizeof(MbsTrajXDMFFooter) > cap) {
          char *more;
          cap = 2 * (len + t.len + sizeof(MbsTrajXDMFFooter));
          if (PetscMalloc1(cap, &more)) {
            err = ENOMEM;
            break;
          }
          PetscCall(PetscArraycpy(more, all, len));
          PetscCall(PetscFree(all));
          all = more;
        }
        PetscCall(PetscArraycpy(all + len, buf, t.len));
        len += t.len;
      }
    }
    if (!err) {
      const size_t grids = len;
      PetscCall(PetscArraycpy(all + len, MbsTrajXDMFFooter, sizeof(MbsTrajXDMFFooter) - 1));
      len += sizeof(MbsTrajXDMFFooter) - 1;
      if (!(in = fopen(tr->xdmf, "r")))
        err = errno;
      else {
        if (!(out = MbsTrajCreateXDMF(tr, tmp, sizeof(tmp))))
          err = errno;
        else {
          err = MbsTrajCopyPrefix(in, out, tr->xdmf_end);
          if (!err && fwrite(all, 1, len, out) != len) err = errno ? errno : EIO;
          err = MbsTrajInstallXDMF(tr, out, tmp, err);
        }
        fclose(in);
      }
      if (!err) tr->xdmf_end += (off_t)grids;
    }
    PetscCall(PetscFree(all));
    PetscCall(PetscTime(&t1));
    res[0] = err;
    res[1] = t1 - t0;
  }
  PetscCallMPI(MPI_Bcast(res, 2, MPI_DOUBLE, 0, tr->comm));
  PetscCheck(!res[0], tr->comm, PETSC_ERR_FILE_WRITE, "Cannot write trajectory file '%s' at step %" PetscInt_FMT ": %s",
             tr->xdmf, tr->npending ? tr->pending_step[tr->npending - 1] : tr->last_step, strerror((int)res[0]));
  if (tr->npending) tr->xml_cost = res[1];
  tr->npending = 0;
  PetscFunctionReturn(0);
}

/*
  A restart keeps the steps an earlier run wrote up to the restart step and lists them again (their groups
  stay in trajectory.h5; groups of later steps are overwritten as the run reaches them). The written steps
  form a chain: the root's attribute last_step names the last one, each group's previous_step the one
  before, so finding them costs one look per written step, not one per step of the run. A group whose
  dataset is missing (the run stopped while writing it) is left out.
*/
static PetscErrorCode MbsTrajReadEarlierSteps(MbsTrajectory tr, PetscInt *n, PetscInt **steps, PetscReal **times)
{
  PetscBool has;
  PetscInt  np = -1, nc = -1, max = 0, s = -1;

  PetscFunctionBegin;
  *n     = 0;
  *steps = NULL;
  *times = NULL;
  PetscCall(PetscViewerHDF5HasAttribute(tr->viewer, "/", "npoints", &has));
  if (!has) { /* an empty file (the earlier run stopped before writing anything): start it afresh */
    PetscCall(MbsTrajWriteTopology(tr));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscViewerHDF5ReadAttribute(tr->viewer, "/", "npoints", PETSC_INT, NULL, &np));
  PetscCall(PetscViewerHDF5ReadAttribute(tr->viewer, "/", "ncells", PETSC_INT, NULL, &nc));
  PetscCheck(np == tr->npoints && nc == tr->ncells, tr->comm, PETSC_ERR_FILE_UNEXPECTED,
             "'%s' holds the trajectory of another model (%" PetscInt_FMT " points, %" PetscInt_FMT
             " cells; this one has %" PetscInt_FMT " and %" PetscInt_FMT
             "): remove it or choose another output directory",
             tr->h5, np, nc, tr->npoints, tr->ncells);
  {
    PetscInt version = 1;
    PetscCall(PetscViewerHDF5HasAttribute(tr->viewer, "/", "gglmbs_trajectory_version", &has));
    if (has)
      PetscCall(PetscViewerHDF5ReadAttribute(tr->viewer, "/", "gglmbs_trajectory_version", PETSC_INT, NULL, &version));
    PetscCheck(version == MBS_TRAJ_VERSION, tr->comm, PETSC_ERR_FILE_UNEXPECTED,
               "'%s' is a trajectory of format version %" PetscInt_FMT
               ", which this gglmbs does not continue (it writes "
               "version %d): remove it or choose another output directory",
               tr->h5, version, MBS_TRAJ_VERSION);
  }
  PetscCall(PetscViewerHDF5HasAttribute(tr->viewer, "/", "provenance", &has));
  if (has) { /* the first run's provenance, then this run's, also kept as an attribute of its own */
    char  *first = NULL, *both, name[64];
    size_t len;
    PetscCall(PetscViewerHDF5ReadAttribute(tr->viewer, "/", "provenance", PETSC_STRING, NULL, &first));
    PetscCall(PetscSNPrintf(name, sizeof(name), "provenance_from_step_%08" PetscInt_FMT, tr->create_step));
    PetscCall(PetscViewerHDF5WriteAttribute(tr->viewer, "/", name, PETSC_STRING, tr->provenance));
    len = strlen(first) + strlen(tr->provenance) + 64;
    PetscCall(PetscMalloc1(len, &both));
    PetscCall(PetscSNPrintf(both, len, "%scontinued from step %" PetscInt_FMT " by:\n%s", first, tr->create_step,
                            tr->provenance));
    PetscCall(PetscFree(first));
    PetscCall(PetscFree(tr->provenance));
    tr->provenance = both;
  }
  PetscCall(PetscViewerHDF5HasAttribute(tr->viewer, "/", "last_step", &has));
  if (has) PetscCall(PetscViewerHDF5ReadAttribute(tr->viewer, "/", "last_step", PETSC_INT, NULL, &s));
  while (s >= 0) {
    char     group[64], path[96];
    PetscInt previous = -1;

    PetscCall(MbsTrajStepGroup(s, group, sizeof(group)));
    PetscCall(PetscViewerHDF5HasAttribute(tr->viewer, group, "previous_step", &has));
    if (!has) break;
    PetscCall(PetscViewerHDF5ReadAttribute(tr->viewer, group, "previous_step", PETSC_INT, NULL, &previous));
    PetscCall(PetscSNPrintf(path, sizeof(path), "%s/%s", group,
                            MbsTrajFields[tr->ncells ? MBS_TRAJ_NFIELDS - 1 : MBS_TRAJ_D3]));
    PetscCall(PetscViewerHDF5HasDataset(tr->viewer, path, &has));
    if (has && s <= tr->create_step) {
      if (*n == max) {
        max = PetscMax(64, 2 * max);
        PetscCall(PetscRealloc(sizeof(PetscInt) * max, steps));
        PetscCall(PetscRealloc(sizeof(PetscReal) * max, times));
      }
      PetscCall(PetscViewerHDF5ReadAttribute(tr->viewer, group, "time", PETSC_REAL, NULL, &(*times)[*n]));
      (*steps)[(*n)++] = s;
    }
    PetscCheck(previous < s, tr->comm, PETSC_ERR_FILE_UNEXPECTED,
               "'%s': the steps written are not in order (step %" PetscInt_FMT " follows step %" PetscInt_FMT ")",
               tr->h5, s, previous);
    s = previous;
  }
  for (PetscInt i = 0; i < *n / 2; i++) { /* into increasing order */
    const PetscInt  j = *n - 1 - i, si = (*steps)[i];
    const PetscReal ti = (*times)[i];
    (*steps)[i]        = (*steps)[j];
    (*times)[i]        = (*times)[j];
    (*steps)[j]        = si;
    (*times)[j]        = ti;
  }
  if (*n) tr->last_step = (*steps)[*n - 1];
  PetscFunctionReturn(0);
}

/* Parallel HDF5 (1.10) cannot recover from a write that fails for want of space: the metadata it could
   not flush makes it crash when MPI finalizes, whatever is done with the file. So the free space of
   the output file system is checked before each write (rank 0, statvfs): the data of the write, the
   same again for the file's metadata and free-space bookkeeping, a bound on the metadata of each step
   written since the last sync (about 3 KB measured; it reaches the disk at the sync), and a fixed margin
   for closing the file. If that does not fit, the pending steps are synced first and the check repeated;
   a full disk is then reported before HDF5 touches the file, which stays valid. */
#define MBS_TRAJ_SPACE_MARGIN (256 * 1024)
#define MBS_TRAJ_STEP_META    (16 * 1024)

static PetscErrorCode MbsTrajSync(MbsTrajectory, PetscInt, PetscBool);

static PetscErrorCode MbsTrajCheckSpace(MbsTrajectory tr, PetscInt64 bytes, PetscInt step)
{
  double avail = 0, need;
  int    err;

  PetscFunctionBegin;
  for (int attempt = 0;; attempt++) {
    need = 2.0 * (double)bytes + MBS_TRAJ_SPACE_MARGIN + (double)(tr->npending + 1) * MBS_TRAJ_STEP_META;
    err  = 0;
    if (tr->rank == 0) {
      struct statvfs fs;
      need += (double)tr->xdmf_end + (double)(tr->npending + 1) * MBS_TRAJ_GRID_MAX; /* the XML's new copy */
      if (statvfs(tr->dir, &fs))
        err = errno;
      else
        avail = (double)fs.f_bavail * (double)fs.f_frsize;
      if (!err && avail < need) err = ENOSPC;
    }
    PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, tr->comm));
    PetscCallMPI(MPI_Bcast(&avail, 1, MPI_DOUBLE, 0, tr->comm));
    PetscCallMPI(MPI_Bcast(&need, 1, MPI_DOUBLE, 0, tr->comm));
    if (err != ENOSPC || !tr->npending || attempt) break;
    PetscCall(MbsTrajSync(tr, step, PETSC_TRUE)); /* the pending metadata fitted at the last check */
  }
  if (err == ENOSPC) {
    PetscCall(PetscViewerDestroy(&tr->viewer)); /* the file holds the steps written so far */
    SETERRQ(tr->comm, PETSC_ERR_FILE_WRITE,
            "Cannot write trajectory file '%s' at step %" PetscInt_FMT ": %s (%.0f bytes needed, %.0f free)", tr->h5,
            step, strerror(ENOSPC), need, avail);
  }
  PetscCheck(!err, tr->comm, PETSC_ERR_FILE_WRITE, "Cannot write trajectory file '%s' at step %" PetscInt_FMT ": %s",
             tr->h5, step, strerror(err));
  PetscFunctionReturn(0);
}

/* HDF5 prints its error stack itself unless told not to; a failed write is reported once, by
   MbsTrajFailed(). The host's own setting is restored after each write. */
typedef struct {
  H5E_auto2_t func;
  void       *data;
} MbsTrajH5Quiet;

static void MbsTrajQuietBegin(MbsTrajH5Quiet *q)
{
  if (H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data) < 0) q->func = NULL, q->data = NULL;
  (void)H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

static void MbsTrajQuietEnd(const MbsTrajH5Quiet *q)
{
  (void)H5Eset_auto2(H5E_DEFAULT, q->func, q->data);
}

/* An HDF5 write that failed (disk full, quota, I/O error) leaves the file with metadata it cannot flush:
   the viewer is closed at once, its own errors ignored (HDF5 would otherwise try again, and crash, when
   MPI finalizes), and the failure is reported once, naming the file and the step. */
static PetscErrorCode MbsTrajFailed(MbsTrajectory tr, PetscErrorCode ierr, PetscInt step)
{
  PetscFunctionBegin;
  if (!ierr) PetscFunctionReturn(0);
  {
    MbsTrajH5Quiet quiet;
    MbsTrajQuietBegin(&quiet);
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    (void)PetscViewerDestroy(&tr->viewer);
    PetscCall(PetscPopErrorHandler());
    MbsTrajQuietEnd(&quiet);
  }
  tr->viewer = NULL;
  SETERRQ(tr->comm, PETSC_ERR_FILE_WRITE,
          "Cannot write trajectory file '%s' at step %" PetscInt_FMT
          ": HDF5 failed to write it (disk full, quota exceeded or I/O error)",
          tr->h5, step);
}

/*
  Makes the written steps durable: one flush of trajectory.h5 (collective), then the XDMF file lists them. With list
  false (a checkpoint step: the checkpoint needs the steps flushed, not listed, since a restart lists them again from
  trajectory.h5) the XDMF file is rewritten only when the spacing since the last rewrite allows (rank 0's clock decides
  for every rank), so that checkpoints do not make the rewrites grow with the run.
*/
static PetscErrorCode MbsTrajSync(MbsTrajectory tr, PetscInt step, PetscBool list)
{
  PetscFunctionBegin;
  if (!tr->npending) PetscFunctionReturn(0);
  if (tr->unflushed) {
    PetscErrorCode ierr;
    hid_t          file;
    MbsTrajH5Quiet quiet;
    MbsTrajQuietBegin(&quiet);
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = PetscViewerHDF5GetFileId(tr->viewer, &file);
    if (!ierr && H5Fflush(file, H5F_SCOPE_GLOBAL) < 0) ierr = PETSC_ERR_FILE_WRITE;
    PetscCall(PetscPopErrorHandler());
    MbsTrajQuietEnd(&quiet);
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ierr, 1, MPI_INT, MPI_MAX, tr->comm));
    PetscCall(MbsTrajFailed(tr, ierr, step));
    tr->unflushed = PETSC_FALSE;
  }
  if (!list) {
    PetscLogDouble now;
    int            due;
    PetscCall(PetscTime(&now));
    due = now - tr->synced_at >= MBS_TRAJ_SYNC_SPACING * tr->xml_cost;
    PetscCallMPI(MPI_Bcast(&due, 1, MPI_INT, 0, tr->comm));
    if (!due) PetscFunctionReturn(0);
  }
  PetscCall(MbsTrajAppendXDMF(tr));
  PetscCall(PetscTime(&tr->synced_at));
  PetscFunctionReturn(0);
}

/*@C
  MbsTrajectoryCreate - Opens the trajectory files trajectory.h5 and trajectory.xdmf in the stepper's
  output directory (created if needed). A run at step 0 creates them afresh; a restarted run (step > 0)
  appends to an existing trajectory.h5 of the same model and lists its steps up to the restart step again.

  Collective

  Input Parameters:
+ st - the stepper (set up here if it is not yet)
. format - "xdmf", or "none" for no writer (traj is NULL)
- every - write every `every` steps

  Output Parameter:
. traj - the writer

  Notes:
  An unknown format is PETSC_ERR_USER_INPUT; a directory or file that cannot be written
  PETSC_ERR_FILE_OPEN, an existing trajectory.h5 a restart cannot append to PETSC_ERR_FILE_UNEXPECTED,
  each naming the file. docs/output.md describes the files.

  Level: developer

.seealso: `MbsStepperSetTrajectory()`, `MbsTrajectoryWrite()`, `MbsTrajectoryDestroy()`
@*/
static PetscErrorCode MbsTrajectoryCreate(MbsStepper st, const char format[], PetscInt every, MbsTrajectory *traj)
{
  MbsTrajectory tr;
  MPI_Comm      comm;
  PetscMPIInt   rank;
  PetscBool     xdmf, none, exists = PETSC_FALSE, foreign = PETSC_FALSE;
  char          h5[PETSC_MAX_PATH_LEN], xml[PETSC_MAX_PATH_LEN];
  int           err   = 0;
  PetscInt      nkept = 0, *kept_step = NULL;
  PetscReal    *kept_time = NULL;

  PetscFunctionBegin;
  *traj = NULL;
  PetscCall(MbsModelGetComm(st->model, &comm));
  PetscCall(PetscStrcmp(format, "xdmf", &xdmf));
  PetscCall(PetscStrcmp(format, "none", &none));
  PetscCheck(xdmf || none, comm, PETSC_ERR_USER_INPUT, "Unknown trajectory format '%s': expected one of xdmf, none",
             format);
  PetscCheck(every > 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "Trajectory frequency must be positive, got %" PetscInt_FMT,
             every);
  if (none) PetscFunctionReturn(0);
  PetscCall(MbsTrajInitializePackage());
  PetscCall(MbsStepperSetUp(st));
  PetscCall(PetscSNPrintf(h5, sizeof(h5), "%s/%s", st->output_dir, MBS_TRAJ_H5));
  PetscCall(PetscSNPrintf(xml, sizeof(xml), "%s/%s", st->output_dir, MBS_TRAJ_XDMF));
  PetscCall(MbsMakeDirectory(comm, st->output_dir));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) { /* HDF5's own failure would name neither the file nor the reason */
    struct stat sh, sx;
    const int   has_xml = stat(xml, &sx) == 0;

    exists = stat(h5, &sh) == 0 ? PETSC_TRUE : PETSC_FALSE;
    if (access(st->output_dir, W_OK | X_OK) || (exists && access(h5, R_OK | W_OK)) || (has_xml && access(xml, W_OK)))
      err = errno;
    else if ((exists && !S_ISREG(sh.st_mode)) || (has_xml && !S_ISREG(sx.st_mode)))
      err = EISDIR;
    else if (exists && st->step > 0) { /* a restart appends to it */
      static const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
      unsigned char              head[8]      = {0};
      FILE                      *fp           = fopen(h5, "rb");

      if (!fp)
        err = errno;
      else {
        foreign = fread(head, 1, sizeof(head), fp) != sizeof(head) || memcmp(head, signature, sizeof(head))
                    ? PETSC_TRUE
                    : PETSC_FALSE;
        fclose(fp);
      }
    }
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(&exists, 1, MPIU_BOOL, 0, comm));
  PetscCallMPI(MPI_Bcast(&foreign, 1, MPIU_BOOL, 0, comm));
  PetscCheck(!err, comm, PETSC_ERR_FILE_OPEN, "Cannot write the trajectory to '%s': %s", h5, strerror(err));
  PetscCheck(
    !foreign, comm, PETSC_ERR_FILE_UNEXPECTED,
    "The restarted run would append to '%s', which is not an HDF5 file: remove it or choose another output directory",
    h5);
  PetscCall(PetscNew(&tr));
  tr->comm        = comm;
  tr->rank        = rank;
  tr->every       = every;
  tr->create_step = st->step;
  tr->last_step   = -1;
  tr->sync        = st->traj_sync;
  PetscCall(PetscTime(&tr->synced_at));
  PetscCall(PetscStrncpy(tr->h5, h5, sizeof(tr->h5)));
  PetscCall(PetscStrncpy(tr->xdmf, xml, sizeof(tr->xdmf)));
  PetscCall(PetscStrncpy(tr->dir, st->output_dir, sizeof(tr->dir)));
  {
    const char *provenance;
    PetscCall(MbsStepperGetProvenance(st, &provenance));
    PetscCall(PetscStrallocpy(provenance, &tr->provenance));
  }
  PetscCall(MbsTrajBuildTopology(tr, st->model));
  PetscCall(MbsTrajCreateVectors(tr, st));
  PetscCall(
    PetscViewerHDF5Open(comm, tr->h5, st->step > 0 && exists ? FILE_MODE_APPEND : FILE_MODE_WRITE, &tr->viewer));
  if (st->step > 0 && exists)
    PetscCall(MbsTrajReadEarlierSteps(tr, &nkept, &kept_step, &kept_time));
  else {
    PetscErrorCode ierr;
    MbsTrajH5Quiet quiet;
    ierr =
      MbsTrajCheckSpace(tr, (PetscInt64)sizeof(PetscInt) * (3 * tr->ncells + tr->npoints + 2 * tr->ncells), st->step);
    if (ierr) {
      PetscCall(MbsTrajectoryDestroy(&tr));
      PetscCall(ierr);
    }
    MbsTrajQuietBegin(&quiet);
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = MbsTrajWriteTopology(tr);
    PetscCall(PetscPopErrorHandler());
    MbsTrajQuietEnd(&quiet);
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ierr, 1, MPI_INT, MPI_MAX, comm));
    if (ierr) {
      PetscErrorCode ierr2 = MbsTrajFailed(tr, ierr, st->step);
      PetscCall(MbsTrajectoryDestroy(&tr));
      PetscCall(ierr2);
    }
  }
  PetscCall(MbsTrajWriteXDMF(tr, nkept, kept_step, kept_time));
  PetscCall(PetscFree(kept_step));
  PetscCall(PetscFree(kept_time));
  *traj = tr;
  PetscFunctionReturn(0);
}

/* Point data of the current state: positions, velocities M^-1 p, directors (zero for particles). */
static PetscErrorCode MbsTrajGatherPoints(MbsTrajectory tr, MbsStepper st)
{
  MbsModel           model = st->model;
  const PetscScalar *p;
  PetscScalar       *v;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(st->p, &p));
  PetscCall(VecGetArray(tr->velocity, &v));
  for (PetscInt k = 0; k < model->nowned; k++) {
    const PetscInt  off = model->body_lq[model->owned_body[k]];
    const PetscReal m   = MbsModelBody(model, model->owned_body[k])->mblock[0];
    for (int j = 0; j < 3; j++) v[off + j] = p[off + j] / m;
  }
  PetscCall(VecRestoreArray(tr->velocity, &v));
  PetscCall(VecRestoreArrayRead(st->p, &p));
  PetscCall(VecScatterBegin(tr->q_to_points, st->q, tr->data, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(tr->q_to_points, st->q, tr->data, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterBegin(tr->p_to_points, tr->velocity, tr->data, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(tr->p_to_points, tr->velocity, tr->data, INSERT_VALUES, SCATTER_FORWARD));
  PetscFunctionReturn(0);
}

/*
  Cell data: the force the element exerts on the body at the cell's second point, on its translational
  block (particle x, rigid body phi): the constraint force of the step that led to this state for a constraint
  (MbsStepperElementConstraintForce_Private(): -(G_e(q_w)^T lambda_e) and its velocity constraints' part, with
  the scheme's terms; zero for the initial state, which no step led to), and -dV_e/dq at the current state for a
  spring.
*/
static PetscErrorCode MbsTrajComputeForces(MbsTrajectory tr, MbsStepper st)
{
  MbsModel           model = st->model;
  const PetscScalar *x     = NULL;
  PetscScalar       *f;
  MbsReactionTerm    terms[MBS_MAX_REACTION_TERMS];
  PetscInt           nterms = 0;

  PetscFunctionBegin;
  PetscCall(MbsModelCoordinatesToLocal(model, st->q, tr->qloc));
  if (st->started) { /* a step was solved (or restored by a restart): st->X holds its multipliers, st->q0 its start */
    PetscCall(MbsStepperGetReactionTerms_Private(st, &nterms, terms));
    if (nterms) PetscCall(VecGetArrayRead(st->X, &x));
  }
  PetscCall(VecGetArray(tr->cell_owned, &f));
  for (PetscInt i = 0; i < tr->nowned; i++) {
    const PetscInt    k  = tr->owned_k[i];
    const MbsElement *el = MbsModelLocalElement(model, k);
    const int         nq = MbsElemNq(&el->data), nc = el->kernel->ncon + el->kernel->nvcon;
    const PetscInt    off = tr->owned_side[i] && el->body[0] >= 0 ? 3 * el->data.nblocks_a : 0;
    PetscReal         qe[MBS_ELEM_MAX_NQ], fe[MBS_ELEM_MAX_NQ];

    for (int j = 0; j < nq; j++) fe[j] = 0.0;
    if (nc && x) {
      PetscCall(MbsStepperElementConstraintForce_Private(st, k, nterms, terms, x, tr->qloc, fe, NULL));
    } else if (!nc && el->kernel->gradient) {
      MbsElementGather(model, el, tr->qloc, qe);
      el->kernel->gradient(&el->data, qe, fe);
    } else if (!nc && el->kernel->force && st->started) { /* a damper: its force over the last step */
      PetscReal qm[MBS_ELEM_MAX_NQ], vm[MBS_ELEM_MAX_NQ]; /* over a halved sub-step's own size */
      MbsElementStepMidpoint(model, el, st->q0, tr->qloc, st->hlast > 0 ? st->hlast : st->hstep, qm, vm);
      el->kernel->force(&el->data, qm, vm, st->tmid, fe, NULL, NULL);
      for (int j = 0; j < nq; j++) fe[j] = -fe[j]; /* fe is the gradient, the force's opposite */
    }
    for (int j = 0; j < 3; j++) f[3 * i + j] = -fe[off + j];
    {
      PetscReal r[6] = {0, 0, 0, 0, 0, 0};
      if (el->kernel->resultants) {
        MbsElementGather(model, el, tr->qloc, qe);
        el->kernel->resultants(&el->data, qe, r);
      }
      for (int j = 0; j < 3; j++) {
        f[3 * (tr->nowned + i) + j]     = r[j];
        f[3 * (2 * tr->nowned + i) + j] = r[3 + j];
      }
    }
  }
  PetscCall(VecRestoreArray(tr->cell_owned, &f));
  if (x) PetscCall(VecRestoreArrayRead(st->X, &x));
  PetscCall(VecScatterBegin(tr->to_cells, tr->cell_owned, tr->data, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(tr->to_cells, tr->cell_owned, tr->data, INSERT_VALUES, SCATTER_FORWARD));
  PetscFunctionReturn(0);
}

/*
  The fields of a step, one dataset each in the step's group, the force last (a restart looks for the last); the
  file is flushed by MbsTrajSync(). Written through HDF5 itself: VecView() would flush (an fsync under MPI-IO)
  after every dataset, which made a step's write cost three times as much. Each rank writes its rows of each field
  (independent or collective transfers, as the viewer is set: -viewer_hdf5_collective).
*/
static PetscErrorCode MbsTrajWriteFields(MbsTrajectory tr, const char group[])
{
  const PetscScalar *x;
  PetscInt           lo;
  hid_t              file, grp, xfer;
  herr_t             status = 0;

  PetscFunctionBegin;
  PetscCall(VecGetOwnershipRange(tr->data, &lo, NULL));
  PetscCall(PetscViewerHDF5OpenGroup(tr->viewer, group, &file, &grp));
  xfer = H5Pcreate(H5P_DATASET_XFER);
#if defined(H5_HAVE_PARALLEL)
  {
    PetscBool collective;
    PetscCall(PetscViewerHDF5GetCollective(tr->viewer, &collective));
    if (xfer >= 0 && collective) status = H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE);
  }
#endif
  PetscCall(VecGetArrayRead(tr->data, &x));
  for (int f = 0; f < MBS_TRAJ_NFIELDS && xfer >= 0 && status >= 0; f++) {
    const PetscInt first = MbsTrajFieldFirst(tr, f), rows = MbsTrajFieldRows(tr, f);
    const hsize_t  dims[2] = {(hsize_t)rows, 3}, start[2] = {(hsize_t)(tr->field_row[f] - first), 0},
                  count[2] = {(hsize_t)tr->field_rows[f], 3};
    hid_t fspace, mspace, dset = -1;

    if (f >= MBS_TRAJ_FORCE && !rows) continue;
    fspace = H5Screate_simple(2, dims, NULL);
    mspace = H5Screate_simple(2, count, NULL);
    if (fspace < 0 || mspace < 0)
      status = -1;
    else if (!count[0])
      status = H5Sselect_none(fspace) < 0 || H5Sselect_none(mspace) < 0 ? -1 : 0;
    else
      status = H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    /* a restart from an earlier checkpoint writes again the steps an earlier run wrote after it */
    if (status >= 0 && H5Lexists(grp, MbsTrajFields[f], H5P_DEFAULT) > 0)
      status = H5Ldelete(grp, MbsTrajFields[f], H5P_DEFAULT);
    if (status >= 0)
      dset = H5Dcreate2(grp, MbsTrajFields[f], H5T_NATIVE_DOUBLE, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (status >= 0 && dset < 0) status = -1;
    if (status >= 0) status = H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, xfer, x + 3 * tr->field_row[f] - lo);
    if (dset >= 0 && H5Dclose(dset) < 0) status = -1;
    if (mspace >= 0) H5Sclose(mspace);
    if (fspace >= 0) H5Sclose(fspace);
  }
  PetscCall(VecRestoreArrayRead(tr->data, &x));
  if (xfer < 0 || H5Pclose(xfer) < 0) status = -1;
  if (H5Gclose(grp) < 0) status = -1;
  PetscCheck(status >= 0, PETSC_COMM_SELF, PETSC_ERR_FILE_WRITE, "HDF5 failed to write the step's data to '%s'",
             tr->h5);
  PetscFunctionReturn(0);
}

/*@C
  MbsTrajectoryWrite - Writes the stepper's current state if its step is a multiple of `every`, or if
  force is set; a step already written is not written again.

  Collective

  Input Parameters:
+ traj - the writer (NULL: nothing to do)
. st - the stepper
- force - write whatever the step number (the last step of MbsStepperSolve())

  Notes:
  The step's group gets its attributes and the chain of written steps its new end, then its dataset
  (followed by a flush of the file), then the XDMF file lists it: an interrupted run leaves both files
  readable up to the last listed step. Logged as the event MbsTrajWrite.

  Level: developer

.seealso: `MbsTrajectoryCreate()`
@*/
static PetscErrorCode MbsTrajectoryWrite(MbsTrajectory tr, MbsStepper st, PetscBool force)
{
  /* a checkpoint of this step (written after the outputs before it) finds every written step flushed */
  const PetscBool ckpt = (PetscBool)(st->checkpoint_every > 0 && st->step % st->checkpoint_every == 0);
  char            group[64];
  PetscErrorCode  ierr;
  MbsTrajH5Quiet  quiet;

  PetscFunctionBegin;
  if (!tr) PetscFunctionReturn(0);
  if ((!force && st->step % tr->every) || st->step <= tr->last_step) { /* nothing to write; maybe a sync */
    if ((force || ckpt) && tr->npending && tr->viewer) PetscCall(MbsTrajSync(tr, st->step, force));
    PetscFunctionReturn(0);
  }
  PetscCheck(tr->viewer, tr->comm, PETSC_ERR_FILE_WRITE,
             "Cannot write trajectory file '%s' at step %" PetscInt_FMT ": an earlier write failed", tr->h5, st->step);
  {
    PetscInt n;
    PetscCall(VecGetSize(tr->data, &n));
    PetscCall(MbsTrajCheckSpace(tr, (PetscInt64)sizeof(PetscScalar) * n, st->step));
  }
  PetscCall(PetscLogEventBegin(MBS_TrajWrite, 0, 0, 0, 0));
  PetscCall(MbsTrajGatherPoints(tr, st));
  PetscCall(MbsTrajComputeForces(tr, st));
  PetscCall(MbsTrajStepGroup(st->step, group, sizeof(group)));
  MbsTrajQuietBegin(&quiet);
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = PetscViewerHDF5WriteAttribute(tr->viewer, group, "time", PETSC_REAL, &st->t);
  if (!ierr) ierr = PetscViewerHDF5WriteAttribute(tr->viewer, group, "step", PETSC_INT, &st->step);
  if (!ierr) ierr = PetscViewerHDF5WriteAttribute(tr->viewer, group, "previous_step", PETSC_INT, &tr->last_step);
  if (!ierr) ierr = PetscViewerHDF5WriteAttribute(tr->viewer, "/", "last_step", PETSC_INT, &st->step);
  if (!ierr) ierr = MbsTrajWriteFields(tr, group);
  PetscCall(PetscPopErrorHandler());
  MbsTrajQuietEnd(&quiet);
  {
    /* independent I/O may fail on some ranks only; closing the file is collective. The sync is due when the
       clock of any rank says so. */
    PetscLogDouble now;
    int            flags[2];
    PetscCall(PetscTime(&now));
    flags[0] = (int)ierr;
    flags[1] = force || now - tr->synced_at >= PetscMax(tr->sync, MBS_TRAJ_SYNC_SPACING * tr->xml_cost);
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, tr->comm));
    ierr = (PetscErrorCode)flags[0];
    if (ierr) PetscCall(PetscLogEventEnd(MBS_TrajWrite, 0, 0, 0, 0));
    PetscCall(MbsTrajFailed(tr, ierr, st->step));
    if (tr->npending == tr->maxpending) {
      PetscInt  *steps;
      PetscReal *times;
      tr->maxpending = PetscMax(16, 2 * tr->maxpending);
      PetscCall(PetscMalloc2(tr->maxpending, &steps, tr->maxpending, &times));
      PetscCall(PetscArraycpy(steps, tr->pending_step, tr->npending));
      PetscCall(PetscArraycpy(times, tr->pending_time, tr->npending));
      PetscCall(PetscFree2(tr->pending_step, tr->pending_time));
      tr->pending_step = steps;
      tr->pending_time = times;
    }
    tr->pending_step[tr->npending] = st->step;
    tr->pending_time[tr->npending] = st->t;
    tr->npending++;
    tr->unflushed = PETSC_TRUE;
    tr->last_step = st->step;
    if (flags[1] || ckpt) PetscCall(MbsTrajSync(tr, st->step, (PetscBool)flags[1]));
  }
  PetscCall(PetscLogEventEnd(MBS_TrajWrite, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/*@C
  MbsTrajectoryDestroy - Closes the files (both stay complete) and frees the writer.

  Collective

  Input Parameter:
. traj - the writer; set to NULL

  Level: developer

.seealso: `MbsTrajectoryCreate()`
@*/
static PetscErrorCode MbsTrajectoryDestroy(MbsTrajectory *traj)
{
  MbsTrajectory tr;

  PetscFunctionBegin;
  if (!traj || !*traj) PetscFunctionReturn(0);
  tr = *traj;
  if (tr->viewer && tr->npending) { /* a run that stops on an error: list what is written, if the file allows */
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    (void)MbsTrajSync(tr, tr->last_step, PETSC_TRUE);
    PetscCall(PetscPopErrorHandler());
  }
  PetscCall(PetscViewerDestroy(&tr->viewer));
  PetscCall(PetscFree2(tr->pending_step, tr->pending_time));
  PetscCall(VecDestroy(&tr->data));
  PetscCall(PetscFree(tr->provenance));
  PetscCall(VecDestroy(&tr->cell_owned));
  PetscCall(VecScatterDestroy(&tr->q_to_points));
  PetscCall(VecScatterDestroy(&tr->p_to_points));
  PetscCall(VecDestroy(&tr->velocity));
  PetscCall(VecScatterDestroy(&tr->to_cells));
  PetscCall(PetscFree3(tr->slice_elem, tr->slice_point, tr->slice_kind));
  PetscCall(PetscFree4(tr->owned_k, tr->owned_cell, tr->owned_side, tr->owned_anchor));
  PetscCall(PetscFree(tr->qloc));
  PetscCall(PetscFree(*traj));
  PetscFunctionReturn(0);
}

/* The output "xdmf": the trajectory, written every `every` steps, at the last step of MbsStepperSolve() and when
   it finishes; created at its first write (a restarted run, step > 0, appends to the files it continues). */
static PetscErrorCode MbsOutputWrite_XDMF(MbsStepper st, PetscInt every, PetscBool last, void *ctx)
{
  MbsTrajectory *tr = (MbsTrajectory *)ctx;

  PetscFunctionBegin;
  if (!*tr) PetscCall(MbsTrajectoryCreate(st, "xdmf", every ? every : 1, tr));
  PetscCall(MbsTrajectoryWrite(*tr, st, last));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsOutputFinish_XDMF(MbsStepper st, void *ctx)
{
  MbsTrajectory *tr = (MbsTrajectory *)ctx;

  PetscFunctionBegin;
  if (*tr) PetscCall(MbsTrajectoryWrite(*tr, st, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/* The end of MbsStepperSolve(), whatever ended it (the last step, a failed step, a signal): the written steps are
   synced, so that a host reading the files after the solve finds them listed */
static PetscErrorCode MbsOutputEnd_XDMF(MbsStepper st, void *ctx)
{
  MbsTrajectory *tr = (MbsTrajectory *)ctx;

  PetscFunctionBegin;
  (void)st;
  if (*tr && (*tr)->viewer && (*tr)->npending) PetscCall(MbsTrajSync(*tr, (*tr)->last_step, PETSC_TRUE));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsOutputDestroy_XDMF(void **ctx)
{
  PetscFunctionBegin;
  if (*ctx) PetscCall(MbsTrajectoryDestroy((MbsTrajectory *)*ctx));
  PetscCall(PetscFree(*ctx));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOutputCreate_XDMF(MbsStepper st, MbsOutputOps *ops, void **ctx)
{
  MbsTrajectory *tr;

  PetscFunctionBegin;
  PetscCall(PetscNew(&tr));
  ops->write   = MbsOutputWrite_XDMF;
  ops->finish  = MbsOutputFinish_XDMF;
  ops->end     = MbsOutputEnd_XDMF;
  ops->destroy = MbsOutputDestroy_XDMF;
  *ctx         = tr;
  PetscFunctionReturn(0);
}

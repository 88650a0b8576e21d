/* The layout of a model over the ranks: METIS or contiguous partition of the bodies, ownership of the elements,
   numbering of coordinates and constraint rows, ghost bodies and their scatter. */
#include "model/modelimpl.h"
#include <gglmbs/elements/vec3.h>
#include <metis.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include "model/operators.h"
#include "model/memory.h"
#include "model/redundancy.h"

/* Owner of an element: the rank of its first non-ground body. */
static inline PetscInt MbsElementOwnerBody(const PetscInt body[2])
{
  return body[0] >= 0 ? body[0] : body[1];
}

/*
  The body graph: bodies are vertices, elements joining two bodies are edges weighted by their constraint rows
  (springs count 1), parallel elements (a rod and a spring on the same pair) merged into one edge. CSR arrays
  xadj[N + 1], adj[xadj[N]], adjw[xadj[N]] (PetscFree3()), each row's neighbours in increasing order.
*/
static PetscErrorCode MbsModelBodyGraph(MbsModel model, PetscInt **xadj_out, PetscInt **adj_out, PetscInt **adjw_out)
{
  const PetscInt N      = model->nbodies;
  PetscInt      *xadj   = NULL, *adj, *adjw, *deg, *pos;
  PetscInt       nedges = 0;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(N + 1, &deg));
  for (PetscInt e = 0; e < model->nelems; e++) {
    const MbsElementInfo el = MbsModelElementInfo(model, e);
    if (el.body[0] >= 0 && el.body[1] >= 0) {
      deg[el.body[0]]++;
      deg[el.body[1]]++;
      nedges++;
    }
  }
  PetscCall(PetscMalloc3(N + 1, &xadj, 2 * nedges, &adj, 2 * nedges, &adjw));
  PetscCall(PetscMalloc1(N + 1, &pos));
  xadj[0] = 0;
  for (PetscInt b = 0; b < N; b++) xadj[b + 1] = xadj[b] + deg[b];
  for (PetscInt b = 0; b < N; b++) pos[b] = xadj[b];
  for (PetscInt e = 0; e < model->nelems; e++) {
    const MbsElementInfo el = MbsModelElementInfo(model, e);
    const PetscInt       w  = PetscMax(el.kernel->ncon, 1);
    if (el.body[0] < 0 || el.body[1] < 0) continue;
    adj[pos[el.body[0]]]    = el.body[1];
    adjw[pos[el.body[0]]++] = w;
    adj[pos[el.body[1]]]    = el.body[0];
    adjw[pos[el.body[1]]++] = w;
  }
  { /* sort each row and merge repeated neighbours */
    PetscInt k = 0;
    for (PetscInt b = 0; b < N; b++) {
      const PetscInt s = xadj[b], t = xadj[b + 1], first = k;
      PetscCall(PetscSortIntWithArray(t - s, adj + s, adjw + s));
      for (PetscInt i = s; i < t; i++) {
        if (k > first && adj[k - 1] == adj[i])
          adjw[k - 1] += adjw[i];
        else {
          adj[k]    = adj[i];
          adjw[k++] = adjw[i];
        }
      }
      xadj[b] = first;
    }
    xadj[N] = k;
  }
  PetscCall(PetscFree(pos));
  PetscCall(PetscFree(deg));
  *xadj_out = xadj;
  *adj_out  = adj;
  *adjw_out = adjw;
  PetscFunctionReturn(0);
}

/*
  Partition the body graph (MbsModelBodyGraph()) with METIS: bodies are weighted by their unknowns
  (coordinates and the constraint rows of the elements they own), edges by their constraint rows.
  Rank 0 partitions and broadcasts, so every rank has the same map.
*/
static PetscErrorCode MbsModelPartitionMetis(MbsModel model)
{
  const PetscInt N = model->nbodies;
  idx_t         *part;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(N, &part));
  if (model->rank == 0) {
    idx_t *xadj, *adj, *adjw, *vwgt, nvtxs = (idx_t)N, ncon = 1, nparts = (idx_t)model->size, objval = 0,
                                     options[METIS_NOPTIONS];
    PetscInt *gx, *ga, *gw, nedges;
    int       status;

    PetscCheck(N < (PetscInt)PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP,
               "METIS partitioning: too many bodies (%" PetscInt_FMT ")", N);
    PetscCall(MbsModelBodyGraph(model, &gx, &ga, &gw));
    nedges = gx[N] / 2;
    PetscCall(PetscMalloc4(N + 1, &xadj, N, &vwgt, gx[N], &adj, gx[N], &adjw));
    for (PetscInt b = 0; b <= N; b++) xadj[b] = (idx_t)gx[b];
    for (PetscInt k = 0; k < gx[N]; k++) {
      adj[k]  = (idx_t)ga[k];
      adjw[k] = (idx_t)gw[k];
    }
    PetscCall(PetscFree3(gx, ga, gw));
    for (PetscInt b = 0; b < N; b++) vwgt[b] = (idx_t)(3 * model->body_type[b]);
    for (PetscInt e = 0; e < model->nelems; e++) {
      const MbsElementInfo el = MbsModelElementInfo(model, e);
      vwgt[MbsElementOwnerBody(el.body)] += el.kernel->ncon + el.kernel->nvcon;
    }
    METIS_SetDefaultOptions(options);
    options[METIS_OPTION_SEED]      = 7;
    options[METIS_OPTION_NUMBERING] = 0;
    if (model->size <= 8)
      status = METIS_PartGraphRecursive(&nvtxs, &ncon, xadj, adj, vwgt, NULL, adjw, &nparts, NULL, NULL, options,
                                        &objval, part);
    else
      status =
        METIS_PartGraphKway(&nvtxs, &ncon, xadj, adj, vwgt, NULL, adjw, &nparts, NULL, NULL, options, &objval, part);
    PetscCheck(status == METIS_OK, PETSC_COMM_SELF, PETSC_ERR_LIB,
               "METIS failed to partition the body graph (%" PetscInt_FMT " bodies, %" PetscInt_FMT
               " edges): status %d",
               N, nedges, status);
    PetscCall(PetscFree4(xadj, vwgt, adj, adjw));
  }
  PetscCallMPI(MPI_Bcast(part, (PetscMPIInt)N, sizeof(idx_t) == 8 ? MPI_INT64_T : MPI_INT32_T, 0,
                         PetscObjectComm((PetscObject)model)));
  for (PetscInt b = 0; b < N; b++) model->body_rank[b] = (PetscInt)part[b];
  PetscCall(PetscFree(part));
  PetscFunctionReturn(0);
}

/* Contiguous body ranges in input order, balanced by coordinate count. */
static void MbsModelPartitionContiguous(MbsModel model)
{
  PetscInt total = 0, acc = 0;
  for (PetscInt b = 0; b < model->nbodies; b++) total += 3 * model->body_type[b];
  for (PetscInt b = 0; b < model->nbodies; b++) {
    PetscInt r          = (PetscInt)((acc * (PetscInt64)model->size) / PetscMax(total, 1));
    model->body_rank[b] = PetscMin(r, model->size - 1);
    acc += 3 * model->body_type[b];
  }
}

/*@C
  MbsModelGetGraphWidth - The bandwidth of the body graph (bodies joined by elements) in its reverse Cuthill-McKee
  ordering (PETSc's MATORDERINGRCM): about 1 for chains and rigid chains, n for an n x n net, the square root of the
  bodies for a triangulated surface. A banded factorization of the step's Jacobian fills about this many bodies'
  unknowns per row; wide graphs are factored with less fill by nested dissection. Computed once, on rank 0, and
  broadcast: on several ranks by MbsModelSetUp(), before each rank drops the other ranks' elements.

  Collective

  Output Parameter:
. width - the bandwidth (0 for a model without edges)
@*/
PetscErrorCode MbsModelGetGraphWidth(MbsModel model, PetscInt *width)
{
  PetscFunctionBegin;
  PetscCheck(model->setup, PetscObjectComm((PetscObject)model), PETSC_ERR_ORDER, "Call MbsModelSetUp() first");
  if (model->graph_width < 0) {
    PetscInt w = 0;
    if (model->rank == 0 && model->nbodies > 1) {
      const PetscInt  N = model->nbodies;
      PetscInt       *xadj, *adj, *adjw, *inv;
      PetscScalar    *one;
      Mat             A;
      IS              rperm, cperm;
      const PetscInt *perm;
      PetscCall(MbsModelBodyGraph(model, &xadj, &adj, &adjw));
      PetscCall(PetscMalloc2(xadj[N], &one, N, &inv));
      for (PetscInt k = 0; k < xadj[N]; k++) one[k] = 1.0;
      PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, N, N, xadj, adj, one, &A));
      PetscCall(MatGetOrdering(A, MATORDERINGRCM, &rperm, &cperm));
      PetscCall(ISGetIndices(rperm, &perm));
      for (PetscInt k = 0; k < N; k++) inv[perm[k]] = k;
      PetscCall(ISRestoreIndices(rperm, &perm));
      for (PetscInt b = 0; b < N; b++)
        for (PetscInt k = xadj[b]; k < xadj[b + 1]; k++) w = PetscMax(w, PetscAbsInt(inv[b] - inv[adj[k]]));
      PetscCall(ISDestroy(&rperm));
      PetscCall(ISDestroy(&cperm));
      PetscCall(MatDestroy(&A));
      PetscCall(PetscFree2(one, inv));
      PetscCall(PetscFree3(xadj, adj, adjw));
    }
    PetscCallMPI(MPI_Bcast(&w, 1, MPIU_INT, 0, PetscObjectComm((PetscObject)model)));
    model->graph_width = w;
  }
  *width = model->graph_width;
  PetscFunctionReturn(0);
}

/* model->body_rank from the body graph, by the chosen partitioner */
static PetscErrorCode MbsModelPartitionBodies(MbsModel model)
{
  PetscBool metis;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(model->nbodies, &model->body_rank));
  PetscCall(PetscStrcmp(model->partitioner, "metis", &metis));
  if (model->size == 1) {
    for (PetscInt b = 0; b < model->nbodies; b++) model->body_rank[b] = 0;
  } else if (metis)
    PetscCall(MbsModelPartitionMetis(model));
  else
    MbsModelPartitionContiguous(model);
  PetscFunctionReturn(0);
}

PetscErrorCode MbsModelLayout_Private(MbsModel model)
{
  const PetscInt N = model->nbodies, size = model->size;
  PetscInt      *nq_rank, *nc_rank, *nv_rank, *seen, nghost = 0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(size + 1, &model->rank_qstart, size + 1, &model->rank_cstart));
  PetscCall(PetscMalloc1(N, &model->body_q));
  PetscCall(PetscCalloc3(size, &nq_rank, size, &nc_rank, size, &nv_rank));
  PetscCall(PetscMalloc1(size + 1, &model->rank_vstart));
  if (!model->body_rank) PetscCall(MbsModelPartitionBodies(model)); /* else partitioned by MbsModelPartition() */
  model->nowned = 0;
  for (PetscInt b = 0; b < N; b++) {
    const PetscInt r = model->body_rank[b];
    model->body_q[b] = nq_rank[r]; /* rank-local for now, globalized below */
    nq_rank[r] += 3 * model->body_type[b];
    if (r == model->rank) model->nowned++;
  }
  PetscCall(PetscMalloc1(model->nowned, &model->owned_body));
  {
    PetscInt k = 0;
    for (PetscInt b = 0; b < N; b++)
      if (model->body_rank[b] == model->rank) model->owned_body[k++] = b;
  }
  model->ncut = model->nconn = 0;
  for (PetscInt e = 0; e < model->nelems; e++) {
    const MbsElementInfo el = MbsModelElementInfo(model, e);
    if (el.body[0] < 0 || el.body[1] < 0) continue;
    model->nconn++;
    if (model->body_rank[el.body[0]] != model->body_rank[el.body[1]]) model->ncut++;
  }
  model->nelem_local = 0;
  for (PetscInt e = 0; e < model->nelems; e++) {
    const MbsElementInfo el = MbsModelElementInfo(model, e);
    const PetscInt       r  = model->body_rank[MbsElementOwnerBody(el.body)];
    nc_rank[r] += el.kernel->ncon;
    nv_rank[r] += el.kernel->nvcon;
    if (r == model->rank) model->nelem_local++;
  }
  model->rank_qstart[0] = model->rank_cstart[0] = model->rank_vstart[0] = 0;
  for (PetscInt r = 0; r < size; r++) {
    model->rank_qstart[r + 1] = model->rank_qstart[r] + nq_rank[r];
    model->rank_cstart[r + 1] = model->rank_cstart[r] + nc_rank[r];
    model->rank_vstart[r + 1] = model->rank_vstart[r] + nv_rank[r];
  }
  for (PetscInt b = 0; b < N; b++) model->body_q[b] += model->rank_qstart[model->body_rank[b]];
  model->nq          = model->rank_qstart[size];
  model->ncon        = model->rank_cstart[size];
  model->nq_local    = nq_rank[model->rank];
  model->ncon_local  = nc_rank[model->rank];
  model->nvcon       = model->rank_vstart[size];
  model->nvcon_local = nv_rank[model->rank];

  PetscCall(PetscFree3(model->elem_local, model->elem_c, model->elem_v)); /* MbsModelPartition()'s, without gravity */
  PetscCall(PetscMalloc3(model->nelem_local, &model->elem_local, model->nelem_local, &model->elem_c, model->nelem_local,
                         &model->elem_v));
  PetscCall(PetscMalloc1(N, &model->body_lq));
  PetscCall(PetscCalloc1(N, &seen));
  for (PetscInt b = 0; b < N; b++) model->body_lq[b] = -1;
  {
    PetscInt k = 0, c = 0, v = 0;
    for (PetscInt e = 0; e < model->nelems; e++) {
      const MbsElementInfo el = MbsModelElementInfo(model, e);
      if (model->body_rank[MbsElementOwnerBody(el.body)] != model->rank) continue;
      model->elem_local[k] = e;
      model->elem_v[k]     = v;
      model->elem_c[k++]   = c;
      c += el.kernel->ncon;
      v += el.kernel->nvcon;
      for (int s = 0; s < 2; s++) {
        const PetscInt b = el.body[s];
        if (b >= 0 && model->body_rank[b] != model->rank && !seen[b]) {
          seen[b] = 1;
          nghost++;
        }
      }
    }
  }
  model->nghost       = nghost;
  model->ndrive_local = 0;
  for (PetscInt k = 0; k < model->nelem_local; k++)
    if (MbsModelElementInfo(model, model->elem_local[k]).kernel->time_coefficients) model->ndrive_local++;
  PetscCall(PetscMalloc1(model->ndrive_local, &model->drive_local));
  for (PetscInt k = 0, n = 0; k < model->nelem_local; k++)
    if (MbsModelElementInfo(model, model->elem_local[k]).kernel->time_coefficients) model->drive_local[n++] = k;
  model->has_drives = (PetscBool)(model->ndrive_local > 0);
  {
    PetscInt nc = 0, np = 0, nf = 0;
    for (PetscInt k = 0; k < model->nelem_local; k++) {
      const MbsElemKernel *ker = MbsModelElementInfo(model, model->elem_local[k]).kernel;
      nc += ker->ncon ? 1 : 0;
      np += !ker->ncon && ker->energy ? 1 : 0;
      nf += ker->force ? 1 : 0;
    }
    PetscCall(PetscFree3(model->elem_con, model->elem_pot, model->elem_force));
    PetscCall(PetscMalloc3(nc, &model->elem_con, np, &model->elem_pot, nf, &model->elem_force));
    model->nelem_con = model->nelem_pot = model->nelem_force = 0;
    for (PetscInt k = 0; k < model->nelem_local; k++) {
      const MbsElemKernel *ker = MbsModelElementInfo(model, model->elem_local[k]).kernel;
      if (ker->ncon) model->elem_con[model->nelem_con++] = k;
      if (!ker->ncon && ker->energy) model->elem_pot[model->nelem_pot++] = k;
      if (ker->force) model->elem_force[model->nelem_force++] = k;
    }
  }
  PetscCallMPI(
    MPI_Allreduce(MPI_IN_PLACE, &model->has_drives, 1, MPIU_BOOL, MPI_LOR, PetscObjectComm((PetscObject)model)));
  PetscCall(PetscMalloc1(nghost, &model->ghost_body));
  {
    PetscInt k = 0, lq = 0;
    for (PetscInt k = 0; k < model->nowned; k++) {
      const PetscInt b  = model->owned_body[k];
      model->body_lq[b] = lq;
      lq += 3 * model->body_type[b];
    }
    for (PetscInt b = 0; b < N; b++)
      if (seen[b]) {
        model->ghost_body[k++] = b;
        model->body_lq[b]      = lq;
        lq += 3 * model->body_type[b];
      }
    model->nq_ghosted = lq;
  }
  PetscCall(PetscMalloc1(model->nq_ghosted, &model->minv));
  for (PetscInt b = 0; b < N; b++) {
    const MbsBody *body;
    if (model->body_lq[b] < 0) continue;
    body = MbsModelBody(model, b);
    for (PetscInt j = 0; j < (PetscInt)body->type; j++)
      for (int i = 0; i < 3; i++) model->minv[model->body_lq[b] + 3 * j + i] = 1.0 / body->mblock[j];
  }
  {
    Vec       x;
    IS        from;
    PetscInt *idx;
    PetscCall(PetscMalloc1(model->nq_ghosted, &idx));
    for (PetscInt b = 0; b < N; b++)
      if (model->body_lq[b] >= 0)
        for (PetscInt i = 0; i < 3 * (PetscInt)model->body_type[b]; i++)
          idx[model->body_lq[b] + i] = model->body_q[b] + i;
    PetscCall(ISCreateGeneral(PETSC_COMM_SELF, model->nq_ghosted, idx, PETSC_OWN_POINTER, &from));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, model->nq_ghosted, &model->qghost));
    PetscCall(VecCreateMPIWithArray(PetscObjectComm((PetscObject)model), 1, model->nq_local, model->nq, NULL, &x));
    PetscCall(VecScatterCreate(x, from, model->qghost, NULL, &model->qscatter));
    PetscCall(VecDestroy(&x));
    PetscCall(ISDestroy(&from));
  }
  PetscCall(PetscFree(seen));
  PetscCall(PetscFree3(nq_rank, nc_rank, nv_rank));
  PetscFunctionReturn(0);
}

/*
  After the set-up's checks, which read every body and element, each rank keeps only its part of the model: the full
  data of its owned bodies and their ghosts, and of its owned elements; of the other bodies only their type, of the
  other elements nothing (the set-up computed the graph's width first, and the trajectory's cells and the parallel
  solvers' interface are found from the owned elements and their ghosts). On one rank everything is owned and kept as
  it is.
*/
PetscErrorCode MbsModelDistribute_Private(MbsModel model)
{
  PetscFunctionBegin;
  if (model->build == MBS_BUILD_LOCAL) { /* built distributed: the neighbours beyond the ghosts go */
    const PetscInt n = model->nowned + model->nghost;
    PetscCheck(model->nelem_store == model->nelem_local, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "Rank %d stored %" PetscInt_FMT " elements and owns %" PetscInt_FMT, model->rank, model->nelem_store,
               model->nelem_local);
    model->maxelems = model->nelem_store;
    PetscCall(PetscRealloc(sizeof(MbsElement) * PetscMax(model->nelem_store, 1), &model->elems));
    for (PetscInt k = 0; k < n; k++) { /* MbsModelPartition() stored them in this order: owned, then ghosts */
      const PetscInt b = k < model->nowned ? model->owned_body[k] : model->ghost_body[k - model->nowned];
      PetscCheck(model->body_store[b] == k, PETSC_COMM_SELF, PETSC_ERR_PLIB,
                 "Rank %d: body %" PetscInt_FMT " is stored at %" PetscInt_FMT ", the layout has it at %" PetscInt_FMT,
                 model->rank, b, model->body_store[b], k);
    }
    for (PetscInt s = n; s < model->nbody_store; s++) {
      PetscCall(PetscFree(model->bodies[s].name));
      PetscCall(PetscFree(model->bodies[s].label));
      model->body_store[model->held_body[s]] = -1;
    }
    PetscCall(PetscFree(model->held_body));
    PetscCall(PetscFree(model->einfo)); /* the graph pass's, which the partition and the set-up's checks read */
    model->nbody_store = model->maxbodies = n;
    PetscCall(PetscRealloc(sizeof(MbsBody) * PetscMax(n, 1), &model->bodies));
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
    PetscFunctionReturn(0);
  }
  if (model->size == 1) PetscFunctionReturn(0); /* elem_local[k] = k and owned_body[k] = k */
  { /* the owned elements to the front, in place (elem_local[k] >= k), the array then shrunk */
    PetscInt k = 0;
    for (PetscInt e = 0; e < model->nelems; e++) {
      if (k < model->nelem_local && model->elem_local[k] == e)
        PetscCall(PetscMemcpy(&model->elems[k++], &model->elems[e], sizeof(MbsElement))); /* padding too: hashed */
      else
        PetscCall(PetscFree(model->elems[e].label));
    }
    model->nelem_store = model->maxelems = model->nelem_local;
    model->elems_local                   = PETSC_TRUE;
    PetscCall(PetscRealloc(sizeof(MbsElement) * PetscMax(model->nelem_local, 1), &model->elems));
  }
  {
    const PetscInt n = model->nowned + model->nghost;
    MbsBody       *kept;
    PetscCall(PetscMalloc1(n, &kept));
    PetscCall(PetscMalloc1(model->nbodies, &model->body_store));
    for (PetscInt b = 0; b < model->nbodies; b++) model->body_store[b] = -1;
    for (PetscInt k = 0; k < n; k++) {
      const PetscInt b     = k < model->nowned ? model->owned_body[k] : model->ghost_body[k - model->nowned];
      kept[k]              = model->bodies[b];
      model->body_store[b] = k;
    }
    for (PetscInt b = 0; b < model->nbodies; b++)
      if (model->body_store[b] < 0) {
        PetscCall(PetscFree(model->bodies[b].name));
        PetscCall(PetscFree(model->bodies[b].label));
      }
    PetscCall(PetscFree(model->bodies));
    model->bodies      = kept;
    model->nbody_store = n;
  }
#if defined(__GLIBC__)
  malloc_trim(0); /* give the freed pages back: the whole model's arrays lay in the heap, below what came after */
#endif
  PetscFunctionReturn(0);
}

PetscErrorCode MbsModelFirstKey(MbsModel model, PetscInt key, void *buf, size_t len, PetscInt *first)
{
  PetscMPIInt mine[2] = {PETSC_MPI_INT_MAX, model->rank}, least[2];

  PetscFunctionBegin;
  if (key >= 0) PetscCall(PetscMPIIntCast(key, &mine[0]));
  PetscCallMPI(MPI_Allreduce(mine, least, 1, MPI_2INT, MPI_MINLOC, PetscObjectComm((PetscObject)model)));
  *first = least[0] == PETSC_MPI_INT_MAX ? -1 : (PetscInt)least[0];
  if (*first >= 0)
    PetscCallMPI(MPI_Bcast(buf, (PetscMPIInt)len, MPI_BYTE, least[1], PetscObjectComm((PetscObject)model)));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsModelFirstElement(MbsModel model, PetscInt k, void *buf, size_t len, PetscInt *elem)
{
  PetscFunctionBegin;
  PetscCall(MbsModelFirstKey(model, k >= 0 ? model->elem_local[k] : -1, buf, len, elem));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelBeginGraph - Starts a construction in two passes, in which no rank holds the whole model: the calls that add
  bodies and elements (MbsModelAddParticle(), MbsModelAddRod(), the generators, ...) record only the body graph, each
  body's type and each element's kind and bodies; MbsModelPartition() then partitions it, and the same calls, made
  again in the same order, store on each rank only its own bodies, their neighbours and its own elements.

  Logically Collective

  Input Parameter:
. model - an empty model

  Notes:
  MbsModelLoadYAML() builds this way on several ranks. Between the two passes the model knows no body's data: a host
  that computes an element's data from the bodies' initial positions (MbsModelGetPointPosition()) does so in the
  second pass, on the ranks that hold the bodies (MbsModelHoldsBody()); on the others the element is not stored and
  its data is not read. Errors only the holders can find (an element's completion from its bodies' positions) are
  raised on every rank by MbsModelSetUp(), the first by element index. Memory per rank during the construction: 2
  bytes per body and 24 per element for the graph, plus the rank's own part.

  Level: advanced

.seealso: `MbsModelPartition()`, `MbsModelHoldsBody()`, `MbsModelSetUp()`, `MbsModelLoadYAML()`
@*/
PetscErrorCode MbsModelBeginGraph(MbsModel model)
{
  PetscFunctionBegin;
  PetscCall(MbsModelCheckNotSetUp(model));
  PetscCheck(model->build == MBS_BUILD_WHOLE && model->nbodies == 0 && model->nelems == 0,
             PetscObjectComm((PetscObject)model), PETSC_ERR_ORDER,
             "MbsModelBeginGraph(): the model must be empty and not already built in two passes");
  model->build          = MBS_BUILD_GRAPH;
  model->ntables_before = model->ntables;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelPartition - Ends the first pass of a construction in two passes (MbsModelBeginGraph()): partitions the body
  graph over the ranks (MbsModelSetPartitioner()) and prepares each rank to store its part in the second pass, which
  adds the same bodies and elements again, in the same order.

  Collective

  Input Parameter:
. model - the model, after its first pass

  Notes:
  A rank stores in the second pass the bodies it owns, their neighbours in the body graph (the bodies an element joins
  to one of its own), and the elements it owns (those whose first body it owns). Time tables created in the first
  pass (MbsModelCreateTimeTable()) are freed here (those created before MbsModelBeginGraph() are kept); the second
  pass creates them again. The partitioner (MbsModelSetPartitioner(), -mbs_partition) is the one set now.

  Level: advanced

.seealso: `MbsModelBeginGraph()`, `MbsModelHoldsBody()`, `MbsModelSetUp()`
@*/
PetscErrorCode MbsModelPartition(MbsModel model)
{
  const PetscInt N     = model->nbodies;
  PetscInt       nheld = 0, nown = 0;

  PetscFunctionBegin;
  PetscCheck(model->build == MBS_BUILD_GRAPH, PetscObjectComm((PetscObject)model), PETSC_ERR_ORDER,
             "MbsModelPartition(): call MbsModelBeginGraph() and add the bodies and elements first");
  PetscCheck(N > 0, PetscObjectComm((PetscObject)model), PETSC_ERR_USER_INPUT, "The model has no bodies");
  if (!model->options_read) { /* the partitioner; the set-up reads the options again, after the host's setters */
    PetscCall(MbsModelSetFromOptions(model));
    model->options_read = PETSC_FALSE;
  }
  PetscCall(MbsModelPartitionBodies(model));
  PetscCall(PetscMalloc1(N, &model->body_store));
  /* the bodies held, in the order the set-up keeps them (MbsModelDistribute_Private()): the owned ones (-1), the
     ghosts, the other bodies of owned elements (-2), then the other neighbours of owned bodies (-3); the rest -4 */
  for (PetscInt b = 0; b < N; b++) model->body_store[b] = model->body_rank[b] == model->rank ? -1 : -4;
  for (PetscInt e = 0; e < model->nelems; e++) {
    const PetscInt *body  = model->einfo[e].body;
    const PetscBool owned = (PetscBool)(model->body_rank[MbsElementOwnerBody(body)] == model->rank);
    if (owned) nown++;
    if (body[0] < 0 || body[1] < 0) continue;
    for (int s = 0; s < 2; s++)
      if (model->body_rank[body[s]] == model->rank)
        model->body_store[body[1 - s]] = PetscMax(model->body_store[body[1 - s]], owned ? -2 : -3);
  }
  for (PetscInt b = 0; b < N; b++)
    if (model->body_store[b] > -4) nheld++;
  PetscCall(PetscMalloc1(nheld, &model->held_body));
  for (PetscInt level = -1, s = 0; level >= -3; level--)
    for (PetscInt b = 0; b < N; b++) {
      if (model->body_store[b] != level) continue;
      model->held_body[s]  = b;
      model->body_store[b] = s++;
    }
  for (PetscInt b = 0; b < N; b++)
    if (model->body_store[b] == -4) model->body_store[b] = -1;
  PetscCall(PetscCalloc1(PetscMax(nheld, 1), &model->bodies));
  model->maxbodies   = nheld;
  model->nbody_store = nheld;
  model->nelem_local = nown;
  PetscCall(PetscMalloc3(nown, &model->elem_local, nown, &model->elem_c, nown, &model->elem_v));
  for (PetscInt e = 0, k = 0; e < model->nelems; e++)
    if (model->body_rank[MbsElementOwnerBody(model->einfo[e].body)] == model->rank) model->elem_local[k++] = e;
  PetscCall(PetscCalloc1(PetscMax(nown, 1), &model->elems));
  model->maxelems    = PetscMax(nown, 1);
  model->nelem_store = 0;
  for (PetscInt k = model->ntables_before; k < model->ntables; k++) { /* no element of the first pass kept its table */
    PetscCall(PetscFree3(model->tables[k]->t, model->tables[k]->v, model->tables[k]->d2));
    PetscCall(PetscFree(model->tables[k]));
  }
  model->ntables       = model->ntables_before;
  model->nbodies_graph = N;
  model->nelems_graph  = model->nelems;
  model->elems_local   = PETSC_TRUE; /* the local pass stores the owned elements, in order */
  model->nbodies       = 0;
  model->nelems        = 0;
  model->build         = MBS_BUILD_LOCAL;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelHoldsBody - Whether this rank holds a body's data: always for a model built whole and not yet set up; in
  the second pass of a construction in two passes and after MbsModelSetUp() on several ranks only for the rank's own
  bodies and their neighbours; never in the first pass (MbsModelBeginGraph()).

  Not Collective

  Input Parameters:
+ model - the model
- body - a body index, or MBS_GROUND (always held)

  Output Parameter:
. held - whether MbsModelGetPointPosition() may be asked about it here

  Level: advanced

.seealso: `MbsModelBeginGraph()`, `MbsModelPartition()`, `MbsModelGetPointPosition()`
@*/
PetscErrorCode MbsModelHoldsBody(MbsModel model, PetscInt body, PetscBool *held)
{
  PetscFunctionBegin;
  PetscCheck(body >= MBS_GROUND && body < PetscMax(model->nbodies, model->nbodies_graph), PETSC_COMM_SELF,
             PETSC_ERR_ARG_OUTOFRANGE, "Body %" PetscInt_FMT " does not exist", body);
  if (body < 0)
    *held = PETSC_TRUE;
  else if (model->build == MBS_BUILD_GRAPH)
    *held = PETSC_FALSE;
  else
    *held = (PetscBool)(!model->body_store || model->body_store[body] >= 0);
  PetscFunctionReturn(0);
}

/*@C
  MbsModelSetPartitioner - Chooses how MbsModelSetUp(), or MbsModelPartition() for a model built in two passes,
  distributes the bodies over the ranks.

  Logically Collective

  Input Parameters:
+ model - the model
- type - "metis" (default: METIS on the body graph, vertices weighted by unknowns, elements as edges,
         minimizing the constraint rows that couple ranks) or "contiguous" (ranges of bodies in input order)

  Options Database Key:
. -mbs_partition <metis,contiguous> - the partitioner

  Level: intermediate

.seealso: `MbsModelViewPartition()`
@*/
PetscErrorCode MbsModelSetPartitioner(MbsModel model, const char type[])
{
  PetscBool metis, contiguous;

  PetscFunctionBegin;
  PetscCall(MbsModelCheckNotSetUp(model));
  PetscCheck(!model->body_rank, PetscObjectComm((PetscObject)model), PETSC_ERR_ORDER,
             "MbsModelSetPartitioner(): the model is partitioned already (MbsModelPartition(); MbsModelLoadYAML() "
             "partitions on several ranks: use -mbs_partition)");
  PetscCall(PetscStrcmp(type, "metis", &metis));
  PetscCall(PetscStrcmp(type, "contiguous", &contiguous));
  PetscCheck(metis || contiguous, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_UNKNOWN_TYPE,
             "Unknown partitioner '%s': expected metis or contiguous", type);
  PetscCall(PetscStrncpy(model->partitioner, type, sizeof(model->partitioner)));
  PetscFunctionReturn(0);
}

/*@C
  MbsModelViewPartition - Prints, per rank, the owned bodies, coordinates, constraint rows, elements and
  ghost bodies, and the number of cut elements (elements joining bodies owned by different ranks).

  Collective

  Options Database Key:
. -mbs_view_partition - print it at the end of MbsModelSetUp()

  Level: intermediate
@*/
PetscErrorCode MbsModelViewPartition(MbsModel model, PetscViewer viewer)
{
  PetscFunctionBegin;
  PetscCheck(model->setup, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONGSTATE, "Call MbsModelSetUp() first");
  if (!viewer) PetscCall(PetscViewerASCIIGetStdout(PetscObjectComm((PetscObject)model), &viewer));
  PetscCall(PetscViewerASCIIPrintf(
    viewer, "MbsModel partition (%s) on %d ranks: %" PetscInt_FMT " of %" PetscInt_FMT " two-body elements cut\n",
    model->size > 1 ? model->partitioner : "serial", model->size, model->ncut, model->nconn));
  PetscCall(PetscViewerASCIIPushSynchronized(viewer));
  PetscCall(PetscViewerASCIISynchronizedPrintf(
    viewer,
    "  [%d] %" PetscInt_FMT " bodies, %" PetscInt_FMT " coordinates, %" PetscInt_FMT " constraint rows, %" PetscInt_FMT
    " elements, %" PetscInt_FMT " ghost bodies\n",
    model->rank, model->nowned, model->nq_local, model->ncon_local, model->nelem_local, model->nghost));
  PetscCall(PetscViewerFlush(viewer));
  PetscCall(PetscViewerASCIIPopSynchronized(viewer));
  PetscFunctionReturn(0);
}

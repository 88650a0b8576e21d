/*
  Interface LU: an exact parallel solve of the step's saddle-point system by substructuring (docs/solvers.md,
  "Several ranks").

  Each rank's unknowns are split into its interior I_r and its part B_r of the interface B:
    * an interface body is a body of an element that joins bodies of two ranks, or a body with an unknown whose row
      has a column on another rank or whose column another rank's row reads (the Jacobian's own pattern: a host's
      coupling matrix, MbsStepperSetStateForce());
    * B_r holds every coordinate-field unknown (q, p, v, stages) of the rank's interface bodies and every multiplier
      row (constraint and velocity constraint fields) of the rank's elements that touch an interface body or a body of
      another rank (or that the pattern marks).
  No interior row then reads an unknown of another rank and no other rank's row reads an interior unknown, so
    [ A_II  A_IB ] [x_I]   [b_I]      A_II = diag(A_{I_r I_r}) (one sparse LU per rank, no communication),
    [ A_BI  A_BB ] [x_B] = [b_B]      S = A_BB - sum_r A_{B_r I_r} A_{I_r I_r}^-1 A_{I_r B_r} (dense, |B| x |B|).

  A_{I_r I_r} is the step Jacobian of the subsystem of interior bodies and the elements among them, the interface
  held fixed: its constraint rows are rows of the model's (independent) constraints without a column outside the
  interior, and its bodies have their masses, so a dynamic step's interior is as regular as the whole system. (An
  element between an interface body and an interior one is on the interface: kept inside, its rows would hold the
  interior body against a fixed body, and four rods from a net's node to fixed nodes are dependent.) A static solve
  has no masses: an interior body held only by interface elements (a plate welded to an interface node) would float,
  so the stepper does not choose the interface LU for the static scheme. S is formed with |B_r| interior solves per
  rank (in blocks of right-hand sides, PCMatApply()), summed over the ranks and factored by LAPACK on every rank (it is
  small: tens of unknowns per cut of a chain). A solve is then one interior solve per rank, the interface's right-hand
  side gathered (|B| numbers), the dense solve, and x_I = y_I - W x_B with W = A_II^-1 A_IB kept from the set-up (or a
  second interior solve when W would be large).

  The interior LU is a PCLU with the prefix <prefix>mbs_interface_ (-mbs_interface_pc_factor_mat_solver_type ...),
  its package chosen like the one-rank default from the largest rank's size. A singular interior or interface fails
  the step on every rank alike (diagnosed like any failed step): a package's zero pivot or LAPACK's is a failed
  preconditioner, and a solve after it gives Inf; UMFPACK's Inf reaches every rank through S or the gathered
  right-hand side. A package that stops with an error on one rank stops every rank.
*/
#include "stepper/stepperimpl.h"
#include <petscblaslapack.h>

/* W = A_II^-1 A_IB is kept when the rank has at most MBS_INTERFACE_KEEP_W interface unknowns and W at most
   MBS_INTERFACE_KEEP_W_ENTRIES entries (200 MB); the interface takes at most MBS_INTERFACE_MAX_DENSE unknowns (its
   dense S: 3.2 GB on every rank) */
#define MBS_INTERFACE_KEEP_W         64
#define MBS_INTERFACE_KEEP_W_ENTRIES 2.5e7
#define MBS_INTERFACE_MAX_DENSE      20000
/* the interior solves of the set-up take blocks of right-hand sides of at most this many entries (100 MB, twice) */
#define MBS_INTERFACE_BLOCK_ENTRIES 1.25e7

typedef struct {
  MbsStepper       st; /* the stepper that owns the PC (not referenced: it outlives its KSP) */
  PetscBool        marked;
  PetscInt         nI, nBl, nB; /* interior and interface unknowns of this rank; the interface's size */
  PetscInt        *iI, *iB;     /* their local indices, increasing */
  PetscInt        *Bglobal;     /* the interface's global indices, increasing (every rank's B_r in rank order) */
  PetscMPIInt     *counts, *displs;
  IS               isI, isB;
  Mat              Aii, Aib, Abi, AibT;
  MbsSubMatMap     map[3]; /* the positions in the Jacobian's diagonal block of the entries of Aii, Aib and Abi */
  Mat              pmat;   /* the Jacobian the split (and the blocks and maps) were made for (not referenced) */
  PetscObjectState pstate; /* and its pattern's state then */
  PC               sub;
  PetscScalar     *W; /* nI x nBl, column-major, or NULL */
  PetscScalar     *S; /* nB x nB, column-major: the factored interface Schur complement */
  PetscBLASInt    *piv;
  PetscScalar     *rB;         /* nB */
  Vec              bI, yI, tB; /* interior (sequential) and local interface work vectors */
  PetscBool        failed;     /* the last set-up failed (the same on every rank): a solve gives Inf */
} MbsInterfaceLU;

/* Marks (mark[i] != 0) the rank's unknowns of the interface from the model (bodies and elements) and from seed marks
   already set in mark (unknowns the Jacobian's pattern couples across ranks), lifted to their bodies and elements.
   Collective. A body is marked through its first ghosted local coordinate (body_if[], over the ghosted local
   coordinates), so nothing here is sized by the whole model. */
static PetscErrorCode MbsInterfaceMark(MbsStepper st, char *mark)
{
  MbsModel     model = st->model;
  MbsSystem    sys   = st->sys;
  char        *body_if;
  PetscInt    *lq_first; /* the first local coordinate of the body of each owned local coordinate */
  Vec          ghosts, owners;
  PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(model->nq_ghosted, &body_if));
  PetscCall(PetscMalloc1(model->nq_local, &lq_first));
  for (PetscInt k = 0; k < model->nowned; k++) {
    const PetscInt b = model->owned_body[k];
    for (PetscInt i = 0; i < 3 * (PetscInt)model->body_type[b]; i++)
      lq_first[model->body_lq[b] + i] = model->body_lq[b];
  }
  /* the bodies of every element joining bodies of two ranks. Such an element is owned by the rank of its first body,
     and its other body is a ghost there (every ghost body is one of these: the other body of an owned element); a
     rank's own bodies that other ranks hold as ghosts are the rest: the ghosts' marks are sent to their owners */
  for (PetscInt k = 0; k < model->nelem_local; k++) {
    const MbsElement *el = MbsModelLocalElement(model, k);
    const PetscInt    a = el->body[0], b = el->body[1];
    if (a >= 0 && b >= 0 && (model->body_lq[a] >= model->nq_local || model->body_lq[b] >= model->nq_local))
      body_if[model->body_lq[a]] = body_if[model->body_lq[b]] = 1;
  }
  PetscCall(VecDuplicate(model->qghost, &ghosts));
  PetscCall(VecCreateMPI(PetscObjectComm((PetscObject)model), model->nq_local, model->nq, &owners));
  PetscCall(VecGetArray(ghosts, &a));
  for (PetscInt l = 0; l < model->nq_ghosted; l++) a[l] = l >= model->nq_local && body_if[l] ? 1.0 : 0.0;
  PetscCall(VecRestoreArray(ghosts, &a));
  PetscCall(VecSet(owners, 0.0));
  PetscCall(VecScatterBegin(model->qscatter, ghosts, owners, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(model->qscatter, ghosts, owners, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecGetArray(owners, &a));
  for (PetscInt l = 0; l < model->nq_local; l++)
    if (PetscRealPart(a[l]) > 0) body_if[lq_first[l]] = 1;
  PetscCall(VecRestoreArray(owners, &a));
  PetscCall(VecDestroy(&owners));
  PetscCall(VecDestroy(&ghosts));
  /* seeds in coordinate fields mark their body; seeds in multiplier rows mark their element below */
  for (PetscInt f = 0; f < sys->nfields; f++) {
    if (sys->kind[f] != MBS_FIELD_COORDINATE) continue;
    for (PetscInt l = 0; l < model->nq_local; l++)
      if (mark[sys->foff[f] + l]) body_if[lq_first[l]] = 1;
  }
  for (PetscInt f = 0; f < sys->nfields; f++) {
    if (sys->kind[f] != MBS_FIELD_COORDINATE) continue;
    for (PetscInt l = 0; l < model->nq_local; l++)
      if (body_if[lq_first[l]]) mark[sys->foff[f] + l] = 1;
  }
  for (PetscInt k = 0; k < model->nelem_local; k++) {
    const MbsElement *el = MbsModelLocalElement(model, k);
    PetscBool         in = PETSC_FALSE;
    for (int s = 0; s < 2; s++)
      if (el->body[s] >= 0 && (body_if[model->body_lq[el->body[s]]] || model->body_lq[el->body[s]] >= model->nq_local))
        in = PETSC_TRUE;
    for (PetscInt f = 0; f < sys->nfields && !in; f++) {
      const PetscInt off = sys->kind[f] == MBS_FIELD_CONSTRAINT ? model->elem_c[k] : model->elem_v[k];
      const PetscInt n   = sys->kind[f] == MBS_FIELD_CONSTRAINT    ? el->kernel->ncon
                           : sys->kind[f] == MBS_FIELD_VCONSTRAINT ? el->kernel->nvcon
                                                                   : 0;
      for (PetscInt i = 0; i < n; i++)
        if (mark[sys->foff[f] + off + i]) in = PETSC_TRUE;
    }
    if (!in) continue;
    for (PetscInt f = 0; f < sys->nfields; f++) {
      const PetscInt off = sys->kind[f] == MBS_FIELD_CONSTRAINT ? model->elem_c[k] : model->elem_v[k];
      const PetscInt n   = sys->kind[f] == MBS_FIELD_CONSTRAINT    ? el->kernel->ncon
                           : sys->kind[f] == MBS_FIELD_VCONSTRAINT ? el->kernel->nvcon
                                                                   : 0;
      for (PetscInt i = 0; i < n; i++) mark[sys->foff[f] + off + i] = 1;
    }
  }
  PetscCall(PetscFree(lq_first));
  PetscCall(PetscFree(body_if));
  PetscFunctionReturn(0);
}

/* The interface's size from the model alone (before the Jacobian's pattern exists), for the stepper's choice. */
PetscErrorCode MbsStepperInterfaceSize_Private(MbsStepper st, PetscInt *nB, PetscInt *nBmax)
{
  char    *mark;
  PetscInt n = 0, nn[2];

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(st->sys->nlocal, &mark));
  PetscCall(MbsInterfaceMark(st, mark));
  for (PetscInt i = 0; i < st->sys->nlocal; i++) n += mark[i] ? 1 : 0;
  PetscCall(PetscFree(mark));
  nn[0] = n;
  nn[1] = n;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nn[0], 1, MPIU_INT, MPI_SUM, PetscObjectComm((PetscObject)st)));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &nn[1], 1, MPIU_INT, MPI_MAX, PetscObjectComm((PetscObject)st)));
  *nB = nn[0];
  if (nBmax) *nBmax = nn[1];
  PetscFunctionReturn(0);
}

/* Frees the splitting and everything built on it */
static PetscErrorCode MbsInterfaceLUClear(MbsInterfaceLU *ctx)
{
  PetscFunctionBegin;
  PetscCall(ISDestroy(&ctx->isI));
  PetscCall(ISDestroy(&ctx->isB));
  PetscCall(PetscFree2(ctx->iI, ctx->iB));
  PetscCall(PetscFree(ctx->Bglobal));
  PetscCall(PetscFree2(ctx->counts, ctx->displs));
  PetscCall(MatDestroy(&ctx->Aii));
  PetscCall(MatDestroy(&ctx->Aib));
  PetscCall(MatDestroy(&ctx->Abi));
  PetscCall(MatDestroy(&ctx->AibT));
  for (int k = 0; k < 3; k++) PetscCall(MbsSubMatMapReset_Private(&ctx->map[k]));
  PetscCall(PetscFree(ctx->W));
  PetscCall(PetscFree3(ctx->S, ctx->piv, ctx->rB));
  PetscCall(VecDestroy(&ctx->bI));
  PetscCall(VecDestroy(&ctx->yI));
  PetscCall(VecDestroy(&ctx->tB));
  ctx->marked = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* The splitting, once per Jacobian pattern: seeds from the assembled pattern, then the model's marks. */
static PetscErrorCode MbsInterfaceLUSplit(PC pc, MbsInterfaceLU *ctx, Mat P)
{
  MbsStepper      st = ctx->st;
  MPI_Comm        comm;
  PetscMPIInt     size, rank;
  char           *mark;
  PetscInt        nlocal = st->sys->nlocal, rstart;
  PetscBool       ismpi;
  Mat             Ao;
  const PetscInt *garray;

  PetscFunctionBegin;
  PetscCall(MbsInterfaceLUClear(ctx)); /* what an earlier split that stopped with an error left */
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(MatGetOwnershipRange(P, &rstart, NULL));
  PetscCall(PetscCalloc1(nlocal, &mark));
  PetscCall(PetscObjectTypeCompare((PetscObject)P, MATMPIAIJ, &ismpi));
  if (ismpi) {
    const PetscInt    *ia, *ja;
    PetscInt           n, nc;
    PetscBool          done;
    Vec                read;
    PetscScalar       *ones;
    const PetscScalar *r;

    PetscCall(MatMPIAIJGetSeqAIJ(P, NULL, &Ao, &garray));
    PetscCall(MatGetSize(Ao, NULL, &nc));
    /* rows that read another rank's unknowns */
    PetscCall(MatGetRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    PetscCheck(done && n == nlocal, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Cannot read the Jacobian's coupling rows");
    for (PetscInt i = 0; i < n; i++)
      if (ia[i + 1] > ia[i]) mark[i] = 1;
    PetscCall(MatRestoreRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
    /* unknowns another rank's rows read */
    PetscCall(MatCreateVecs(P, &read, NULL));
    PetscCall(PetscMalloc1(nc, &ones));
    for (PetscInt j = 0; j < nc; j++) ones[j] = 1.0;
    PetscCall(VecSetValues(read, nc, garray, ones, ADD_VALUES));
    PetscCall(VecAssemblyBegin(read));
    PetscCall(VecAssemblyEnd(read));
    PetscCall(VecGetArrayRead(read, &r));
    for (PetscInt i = 0; i < nlocal; i++)
      if (PetscRealPart(r[i]) != 0.0) mark[i] = 1;
    PetscCall(VecRestoreArrayRead(read, &r));
    PetscCall(PetscFree(ones));
    PetscCall(VecDestroy(&read));
  }
  PetscCall(MbsInterfaceMark(st, mark));
  ctx->nI = ctx->nBl = 0;
  for (PetscInt i = 0; i < nlocal; i++) {
    if (mark[i])
      ctx->nBl++;
    else
      ctx->nI++;
  }
  PetscCall(PetscMalloc2(ctx->nI, &ctx->iI, ctx->nBl, &ctx->iB));
  ctx->nI = ctx->nBl = 0;
  for (PetscInt i = 0; i < nlocal; i++) {
    if (mark[i])
      ctx->iB[ctx->nBl++] = i;
    else
      ctx->iI[ctx->nI++] = i;
  }
  PetscCall(PetscFree(mark));
  /* the interface over all ranks, in rank order (so increasing) */
  PetscCall(PetscMalloc2(size, &ctx->counts, size + 1, &ctx->displs));
  {
    PetscMPIInt nb;
    PetscCall(PetscMPIIntCast(ctx->nBl, &nb));
    PetscCallMPI(MPI_Allgather(&nb, 1, MPI_INT, ctx->counts, 1, MPI_INT, comm));
  }
  ctx->displs[0] = 0;
  for (PetscMPIInt r = 0; r < size; r++) ctx->displs[r + 1] = ctx->displs[r] + ctx->counts[r];
  ctx->nB = ctx->displs[size];
  /* S is dense and held on every rank: 8 |B|^2 bytes (the stepper chooses it up to 500; -mbs_parallel_lu interface
     can ask for more) */
  PetscCheck(ctx->nB <= MBS_INTERFACE_MAX_DENSE, comm, PETSC_ERR_SUP,
             "The interface LU's interface has %" PetscInt_FMT
             " unknowns, more than its dense Schur complement takes (%d, "
             "%.1f GB on every rank): use -mbs_parallel_lu mumps",
             ctx->nB, MBS_INTERFACE_MAX_DENSE, 8.0 * ctx->nB * ctx->nB / 1e9);
  {
    PetscInt *mine;
    PetscCall(PetscMalloc1(ctx->nBl, &mine));
    for (PetscInt i = 0; i < ctx->nBl; i++) mine[i] = rstart + ctx->iB[i];
    PetscCall(PetscMalloc1(ctx->nB, &ctx->Bglobal));
    PetscCallMPI(
      MPI_Allgatherv(mine, (PetscMPIInt)ctx->nBl, MPIU_INT, ctx->Bglobal, ctx->counts, ctx->displs, MPIU_INT, comm));
    PetscCall(PetscFree(mine));
  }
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, ctx->nI, ctx->iI, PETSC_USE_POINTER, &ctx->isI));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, ctx->nBl, ctx->iB, PETSC_USE_POINTER, &ctx->isB));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, ctx->nI, &ctx->bI));
  PetscCall(VecDuplicate(ctx->bI, &ctx->yI));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, ctx->nBl, &ctx->tB));
  PetscCall(PetscCalloc3((size_t)ctx->nB * ctx->nB, &ctx->S, ctx->nB, &ctx->piv, ctx->nB, &ctx->rB));
  for (PetscInt i = 0; i < ctx->nB; i++) ctx->piv[i] = (PetscBLASInt)(i + 1);
  if (ctx->nBl <= MBS_INTERFACE_KEEP_W && (double)ctx->nI * ctx->nBl <= MBS_INTERFACE_KEEP_W_ENTRIES)
    PetscCall(PetscMalloc1((size_t)ctx->nI * ctx->nBl, &ctx->W));
  ctx->marked = PETSC_TRUE;
  PetscCall(PetscInfo(pc,
                      "Interface LU: %" PetscInt_FMT " interior and %" PetscInt_FMT
                      " interface unknowns on this rank, %" PetscInt_FMT " interface unknowns in all\n",
                      ctx->nI, ctx->nBl, ctx->nB));
  PetscFunctionReturn(0);
}

/* A_II, A_IB, A_BI (and A_IB^T) from the diagonal block Ad of the Jacobian: made by MatCreateSubMatrix() after a
   split (a new Jacobian or pattern clears them, MbsInterfaceLUSetUp()), their values copied through the maps of their
   entries otherwise (MatCreateSubMatrix() with MAT_REUSE_MATRIX searches every interior row of Ad twice: 0.1 s a
   set-up on a chain of 10^5 particles) */
static PetscErrorCode MbsInterfaceLUBlocks(MbsInterfaceLU *ctx, Mat Ad)
{
  Mat *sub[3] = {&ctx->Aii, &ctx->Aib, &ctx->Abi};

  PetscFunctionBegin;
  if (!ctx->Aii) {
    IS rows[3] = {ctx->isI, ctx->isI, ctx->isB}, cols[3] = {ctx->isI, ctx->isB, ctx->isI};
    for (int k = 0; k < 3; k++) {
      PetscBool found;
      PetscCall(MatCreateSubMatrix(Ad, rows[k], cols[k], MAT_INITIAL_MATRIX, sub[k]));
      PetscCall(MbsSubMatMapCreate_Private(Ad, rows[k], cols[k], *sub[k], &ctx->map[k], &found));
      PetscCheck(found, PETSC_COMM_SELF, PETSC_ERR_PLIB,
                 "Interface LU: a submatrix does not follow the Jacobian's pattern");
    }
    PetscCall(MatTranspose(ctx->Aib, MAT_INITIAL_MATRIX, &ctx->AibT));
    PetscCall(PetscInfo(Ad, "Interface LU: the interior blocks made for the Jacobian's pattern\n"));
  } else {
    for (int k = 0; k < 3; k++) PetscCall(MbsSubMatMapCopy_Private(&ctx->map[k], Ad, *sub[k]));
    PetscCall(MatTranspose(ctx->Aib, MAT_REUSE_MATRIX, &ctx->AibT));
  }
  PetscFunctionReturn(0);
}

/* The rank's interior blocks, the LU of A_II (*failed = 1 when the package reports a failed factorization) and the
   rank's terms of S: its interface rows of A_BB and - A_{B_r I_r} A_{I_r I_r}^-1 A_{I_r B_r} (and W) */
static PetscErrorCode MbsInterfaceLULocalSetUp(MbsInterfaceLU *ctx, Mat P, Mat Ad, MatReuse reuse, PetscInt rstart,
                                               PetscInt off, PetscInt *failed)
{
  PetscFunctionBegin;
  *failed = 0;
  PetscCall(MbsInterfaceLUBlocks(ctx, Ad));
  if (ctx->nI) {
    PCFailedReason reason;
    PetscCall(PCSetOperators(ctx->sub, ctx->Aii, ctx->Aii));
    if (reuse == MAT_INITIAL_MATRIX) PetscCall(MbsPCSetMumpsMargin_Private(ctx->sub, NULL));
    PetscCall(PCSetUp(ctx->sub));
    PetscCall(PCGetFailedReason(ctx->sub, &reason));
    if (reason) *failed = 1;
  }
  if (*failed) PetscFunctionReturn(0);
  {
    const PetscInt     nB = ctx->nB;
    const PetscScalar *tb;

    PetscCall(PetscArrayzero(ctx->S, (size_t)nB * nB));
    /* A_BB: the interface rows' entries in interface columns (every other column of an interface row is interior) */
    for (PetscInt i = 0; i < ctx->nBl; i++) {
      const PetscInt    *cols;
      const PetscScalar *vals;
      PetscInt           nc, loc;
      PetscCall(MatGetRow(P, rstart + ctx->iB[i], &nc, &cols, &vals));
      for (PetscInt k = 0; k < nc; k++) {
        PetscCall(PetscFindInt(cols[k], nB, ctx->Bglobal, &loc));
        if (loc >= 0) ctx->S[off + i + (size_t)loc * nB] += vals[k];
      }
      PetscCall(MatRestoreRow(P, rstart + ctx->iB[i], &nc, &cols, &vals));
    }
    /* - A_{B_r I_r} A_{I_r I_r}^-1 A_{I_r B_r}, from the rows of A_IB^T, a block of columns at a time
       (PCMatApply()): MUMPS reads its factors once for a block of MBS_INTERFACE_BLOCK_ENTRIES, the stepper's KLU
       once for MBS_KLU_BLOCK columns; another solver (UMFPACK, without MatMatSolve()) takes a column at a time */
    if (ctx->nI && ctx->nBl) {
      PetscInt  kc = 1;
      PetscBool klu, lu, mumps = PETSC_FALSE;
      Mat       Bd = NULL, Xd = NULL; /* nI x (columns of a block), made once, again for a shorter last block */
      PetscCall(PetscObjectTypeCompare((PetscObject)ctx->sub, PCSHELL, &klu)); /* MbsPCSetKLU_Private() */
      PetscCall(PetscObjectTypeCompare((PetscObject)ctx->sub, PCLU, &lu));
      if (lu) {
        Mat           F;
        MatSolverType type;
        PetscCall(PCFactorGetMatrix(ctx->sub, &F));
        PetscCall(MatFactorGetSolverType(F, &type));
        PetscCall(PetscStrcmp(type, MATSOLVERMUMPS, &mumps));
      }
      if (mumps) kc = PetscMax(1, PetscMin(ctx->nBl, (PetscInt)(MBS_INTERFACE_BLOCK_ENTRIES / ctx->nI)));
      if (klu) kc = PetscMin(ctx->nBl, MBS_KLU_BLOCK);
      for (PetscInt j0 = 0; j0 < ctx->nBl; j0 += kc) {
        const PetscInt nc = PetscMin(kc, ctx->nBl - j0);
        PetscScalar   *b, *x;
        PetscInt       have = 0;
        if (Bd) PetscCall(MatGetSize(Bd, NULL, &have));
        if (have != nc) {
          PetscCall(MatDestroy(&Bd));
          PetscCall(MatDestroy(&Xd));
          PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, ctx->nI, nc, NULL, &Bd));
          PetscCall(MatCreateSeqDense(PETSC_COMM_SELF, ctx->nI, nc, NULL, &Xd));
        }
        PetscCall(MatDenseGetArrayWrite(Bd, &b));
        PetscCall(PetscArrayzero(b, (size_t)ctx->nI * nc));
        for (PetscInt c = 0; c < nc; c++) {
          const PetscInt    *cols;
          const PetscScalar *vals;
          PetscInt           ncols;
          PetscCall(MatGetRow(ctx->AibT, j0 + c, &ncols, &cols, &vals));
          for (PetscInt k = 0; k < ncols; k++) b[(size_t)c * ctx->nI + cols[k]] = vals[k];
          PetscCall(MatRestoreRow(ctx->AibT, j0 + c, &ncols, &cols, &vals));
        }
        PetscCall(MatDenseRestoreArrayWrite(Bd, &b));
        PetscCall(PCMatApply(ctx->sub, Bd, Xd));
        PetscCall(MatDenseGetArray(Xd, &x));
        for (PetscInt c = 0; c < nc; c++) {
          const PetscInt j = j0 + c;
          PetscCall(VecPlaceArray(ctx->yI, x + (size_t)c * ctx->nI));
          PetscCall(MatMult(ctx->Abi, ctx->yI, ctx->tB));
          PetscCall(VecResetArray(ctx->yI));
          PetscCall(VecGetArrayRead(ctx->tB, &tb));
          for (PetscInt i = 0; i < ctx->nBl; i++) ctx->S[off + i + (size_t)(off + j) * nB] -= tb[i];
          PetscCall(VecRestoreArrayRead(ctx->tB, &tb));
          if (ctx->W) PetscCall(PetscArraycpy(ctx->W + (size_t)j * ctx->nI, x + (size_t)c * ctx->nI, ctx->nI));
        }
        PetscCall(MatDenseRestoreArray(Xd, &x));
      }
      PetscCall(MatDestroy(&Bd));
      PetscCall(MatDestroy(&Xd));
    }
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsInterfaceLUSetUp(PC pc)
{
  MbsInterfaceLU *ctx;
  Mat             P, Ad;
  MPI_Comm        comm;
  PetscMPIInt     rank;
  PetscBool       ismpi;
  MatReuse        reuse;
  PetscInt        failed = 0, rstart;
  PetscErrorCode  ierr;

  PetscFunctionBegin;
  PetscCall(PCSetFailedReason(pc, PC_NOERROR)); /* a PCSHELL keeps a failure until its set-up clears it */
  PetscCall(PCShellGetContext(pc, &ctx));
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PCGetOperators(pc, NULL, &P));
  PetscCall(MatGetOwnershipRange(P, &rstart, NULL));
  PetscCall(PetscObjectTypeCompare((PetscObject)P, MATMPIAIJ, &ismpi));
  if (!ismpi) {
    PetscBool isseq;
    PetscCall(PetscObjectTypeCompare((PetscObject)P, MATSEQAIJ, &isseq));
    PetscCheck(isseq, comm, PETSC_ERR_SUP, "The interface LU takes an MPIAIJ or SeqAIJ Jacobian, not %s",
               ((PetscObject)P)->type_name);
  }
  { /* the split follows the Jacobian's pattern (the same on every rank: MPIAIJ's nonzero state is collective) */
    PetscObjectState pstate;
    PetscCall(MatGetNonzeroState(P, &pstate));
    if (ctx->marked && (P != ctx->pmat || pstate != ctx->pstate)) {
      PetscCall(PetscInfo(pc, "Interface LU: a new Jacobian or pattern: the split is made again\n"));
      PetscCall(MbsInterfaceLUClear(ctx));
    }
    ctx->pmat   = P;
    ctx->pstate = pstate;
  }
  if (!ctx->marked) PetscCall(MbsInterfaceLUSplit(pc, ctx, P));
  if (ismpi)
    PetscCall(MatMPIAIJGetSeqAIJ(P, &Ad, NULL, NULL));
  else
    Ad = P;
  ctx->failed = PETSC_TRUE;
  reuse       = ctx->Aii ? MAT_REUSE_MATRIX : MAT_INITIAL_MATRIX;
  /* the rank's own part, whose errors (a package that stops on a singular matrix, memory) are printed by the rank and
     must reach every rank before the collective calls below */
  PetscCall(PetscLogEventBegin(MBS_InterfaceSchur, pc, 0, 0, 0));
  ierr = MbsInterfaceLULocalSetUp(ctx, P, Ad, reuse, rstart, ctx->displs[rank], &failed);
  if (ierr) failed = 2;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPIU_INT, MPI_MAX, comm));
  PetscCheck(
    failed < 2, comm, PETSC_ERR_LIB,
    "Interface LU: the factorization of a rank's interior stopped with an error (see the first rank's message)");
  if (failed) {
    PetscCall(PetscInfo(pc, "Interface LU: an interior factorization failed\n"));
    PetscCall(PCSetFailedReason(pc, PC_SUBPC_ERROR));
    PetscCall(PetscLogEventEnd(MBS_InterfaceSchur, pc, 0, 0, 0));
    PetscFunctionReturn(0);
  }
  ctx->failed = PETSC_FALSE;
  {
    const PetscInt nB = ctx->nB;
    PetscBLASInt   n, info;

    if (nB) {
      PetscMPIInt nn;
      PetscCall(PetscMPIIntCast(nB * nB, &nn));
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, ctx->S, nn, MPIU_SCALAR, MPIU_SUM, comm));
      PetscCall(PetscBLASIntCast(nB, &n));
      PetscCallBLAS("LAPACKgetrf", LAPACKgetrf_(&n, &n, ctx->S, &n, ctx->piv, &info));
      PetscCall(PetscLogFlops(2.0 * nB * nB * nB / 3.0));
      PetscCheck(info >= 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "LAPACK getrf: argument %d is invalid", (int)-info);
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &info, 1, MPI_INT, MPI_MAX, comm)); /* the same S everywhere, but */
      if (info > 0) {
        PetscCall(PetscInfo(pc, "Interface LU: zero pivot in column %d of the interface: the Jacobian is singular\n",
                            (int)info));
        PetscCall(PCSetFailedReason(pc, PC_FACTOR_NUMERIC_ZEROPIVOT));
        ctx->failed = PETSC_TRUE;
      }
    }
  }
  PetscCall(PetscLogEventEnd(MBS_InterfaceSchur, pc, 0, 0, 0));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsInterfaceLUApply(PC pc, Vec b, Vec x)
{
  MbsInterfaceLU    *ctx;
  MPI_Comm           comm;
  PetscMPIInt        rank;
  const PetscScalar *ba;
  PetscScalar       *xa, *v, *t;
  PetscInt           off;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &ctx));
  if (ctx->failed) { /* KSPPREONLY applies a PC whose set-up failed (on every rank alike) */
    PetscCall(VecSet(x, PETSC_INFINITY));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  off = ctx->displs[rank];
  PetscCall(VecGetArrayRead(b, &ba));
  /* y_I = A_II^-1 b_I */
  PetscCall(VecGetArray(ctx->bI, &v));
  for (PetscInt i = 0; i < ctx->nI; i++) v[i] = ba[ctx->iI[i]];
  PetscCall(VecRestoreArray(ctx->bI, &v));
  if (ctx->nI && PCApply(ctx->sub, ctx->bI, ctx->yI))
    PetscCall(VecSet(ctx->yI, PETSC_INFINITY)); /* printed; all fail */
  /* r_B = b_B - A_BI y_I, gathered from every rank */
  PetscCall(MatMult(ctx->Abi, ctx->yI, ctx->tB));
  PetscCall(VecGetArray(ctx->tB, &t));
  for (PetscInt i = 0; i < ctx->nBl; i++) t[i] = ba[ctx->iB[i]] - t[i];
  PetscCallMPI(
    MPI_Allgatherv(t, (PetscMPIInt)ctx->nBl, MPIU_SCALAR, ctx->rB, ctx->counts, ctx->displs, MPIU_SCALAR, comm));
  PetscCall(VecRestoreArrayRead(b, &ba));
  /* x_B = S^-1 r_B */
  if (ctx->nB) {
    PetscBLASInt n, one = 1, info;
    PetscCall(PetscBLASIntCast(ctx->nB, &n));
    PetscCallBLAS("LAPACKgetrs", LAPACKgetrs_("N", &n, &one, ctx->S, &n, ctx->piv, ctx->rB, &n, &info));
    PetscCheck(info == 0, PETSC_COMM_SELF, PETSC_ERR_LIB, "LAPACK getrs: argument %d is invalid", (int)-info);
    PetscCall(PetscLogFlops(2.0 * ctx->nB * ctx->nB));
  }
  for (PetscInt i = 0; i < ctx->nBl; i++) t[i] = ctx->rB[off + i];
  PetscCall(VecRestoreArray(ctx->tB, &t));
  /* x_I = y_I - W x_B, or A_II^-1 (b_I - A_IB x_B) */
  if (ctx->nI && ctx->W && ctx->nBl) {
    PetscBLASInt m, n, one = 1;
    PetscScalar  mone = -1.0, pone = 1.0;
    PetscCall(PetscBLASIntCast(ctx->nI, &m));
    PetscCall(PetscBLASIntCast(ctx->nBl, &n));
    PetscCall(VecGetArray(ctx->yI, &v));
    PetscCallBLAS("BLASgemv", BLASgemv_("N", &m, &n, &mone, ctx->W, &m, ctx->rB + off, &one, &pone, v, &one));
    PetscCall(VecRestoreArray(ctx->yI, &v));
    PetscCall(PetscLogFlops(2.0 * ctx->nI * ctx->nBl));
  } else if (ctx->nI && ctx->nBl) {
    PetscCall(VecScale(ctx->tB, -1.0));
    PetscCall(VecGetArray(ctx->bI, &v)); /* b_I again */
    PetscCall(VecGetArrayRead(b, &ba));
    for (PetscInt i = 0; i < ctx->nI; i++) v[i] = ba[ctx->iI[i]];
    PetscCall(VecRestoreArrayRead(b, &ba));
    PetscCall(VecRestoreArray(ctx->bI, &v));
    PetscCall(MatMultAdd(ctx->Aib, ctx->tB, ctx->bI, ctx->bI));
    if (PCApply(ctx->sub, ctx->bI, ctx->yI)) PetscCall(VecSet(ctx->yI, PETSC_INFINITY));
  }
  PetscCall(VecGetArray(x, &xa));
  PetscCall(VecGetArray(ctx->yI, &v));
  for (PetscInt i = 0; i < ctx->nI; i++) xa[ctx->iI[i]] = v[i];
  PetscCall(VecRestoreArray(ctx->yI, &v));
  for (PetscInt i = 0; i < ctx->nBl; i++) xa[ctx->iB[i]] = ctx->rB[off + i];
  PetscCall(VecRestoreArray(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsInterfaceLUView(PC pc, PetscViewer viewer)
{
  MbsInterfaceLU *ctx;
  PetscBool       isascii;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &ctx));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (!isascii) PetscFunctionReturn(0);
  if (ctx->marked)
    PetscCall(PetscViewerASCIIPrintf(viewer, "  interface of %" PetscInt_FMT " unknowns (dense LU), W %s\n", ctx->nB,
                                     ctx->W ? "kept" : "not kept (two interior solves per application)"));
  PetscCall(PetscViewerASCIIPrintf(viewer, "  rank 0's interior:\n"));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  {
    PetscMPIInt rank;
    PetscViewer sv;
    PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)pc), &rank));
    PetscCall(PetscViewerGetSubViewer(viewer, PETSC_COMM_SELF, &sv));
    if (!rank) PetscCall(PCView(ctx->sub, sv));
    PetscCall(PetscViewerRestoreSubViewer(viewer, PETSC_COMM_SELF, &sv));
  }
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsInterfaceLUDestroy(PC pc)
{
  MbsInterfaceLU *ctx;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &ctx));
  PetscCall(MbsInterfaceLUClear(ctx));
  PetscCall(PCDestroy(&ctx->sub));
  PetscCall(PetscFree(ctx));
  PetscFunctionReturn(0);
}

/*
  Makes pc the interface LU of the stepper's (AIJ) Jacobian, each rank's interior factored by the LU package sub_type,
  or by the stepper's KLU (src/stepper/klu.c) when sub_type is NULL, unless the user chose a package
  (-<prefix>mbs_interface_pc_factor_mat_solver_type) or another PC (-<prefix>mbs_interface_pc_type). interior receives
  what factors the interiors after the options ("KLU", "umfpack", ...).
*/
PetscErrorCode MbsPCSetInterfaceLU_Private(PC pc, MbsStepper st, MatSolverType sub_type, char interior[], size_t len)
{
  MbsInterfaceLU *ctx;
  const char     *prefix;

  PetscFunctionBegin;
  PetscCall(PCSetType(pc, PCSHELL));
  PetscCall(PetscNew(&ctx));
  ctx->st = st;
  PetscCall(PCCreate(PETSC_COMM_SELF, &ctx->sub));
  PetscCall(PCGetOptionsPrefix(pc, &prefix));
  PetscCall(PCSetOptionsPrefix(ctx->sub, prefix));
  PetscCall(PCAppendOptionsPrefix(ctx->sub, "mbs_interface_"));
  {
    PetscBool klu = (PetscBool)!sub_type;
    if (klu) { /* the stepper's KLU (src/stepper/klu.c), unless the options choose a package for the interior */
      const char *subprefix;
      PetscBool   set;
      PetscCall(PCGetOptionsPrefix(ctx->sub, &subprefix));
      PetscCall(PetscOptionsHasName(((PetscObject)pc)->options, subprefix, "-pc_factor_mat_solver_type", &set));
      klu = (PetscBool)!set;
    }
    if (klu)
      PetscCall(MbsPCSetKLU_Private(ctx->sub));
    else {
      PetscCall(PCSetType(ctx->sub, PCLU));
      if (sub_type) PetscCall(PCFactorSetMatSolverType(ctx->sub, sub_type));
    }
  }
  PetscCall(PCSetFromOptions(ctx->sub));
  {
    PetscBool shell, lu;
    PetscCall(PetscObjectTypeCompare((PetscObject)ctx->sub, PCSHELL, &shell));
    PetscCall(PetscObjectTypeCompare((PetscObject)ctx->sub, PCLU, &lu));
    if (shell)
      PetscCall(PetscStrncpy(interior, "KLU", len));
    else if (lu) {
      MatSolverType type;
      PetscCall(PCFactorGetMatSolverType(ctx->sub, &type));
      PetscCall(PetscStrncpy(interior, type ? type : MATSOLVERPETSC, len));
    } else
      PetscCall(PetscSNPrintf(interior, len, "PC %s", ((PetscObject)ctx->sub)->type_name));
  }
  PetscCall(PCShellSetContext(pc, ctx));
  PetscCall(PCShellSetName(pc, "gglmbs interface LU (each rank's interior by sparse LU, the interface by dense LU)"));
  PetscCall(PCShellSetSetUp(pc, MbsInterfaceLUSetUp));
  PetscCall(PCShellSetApply(pc, MbsInterfaceLUApply));
  PetscCall(PCShellSetView(pc, MbsInterfaceLUView));
  PetscCall(PCShellSetDestroy(pc, MbsInterfaceLUDestroy));
  PetscFunctionReturn(0);
}

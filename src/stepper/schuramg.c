/*
  Schur-AMG: a block preconditioner for the step's saddle-point system whose cost grows like the model (docs/solvers.md,
  "The Schur-AMG preconditioner").

  Order the unknowns as primal (the scheme's coordinate fields: q, p, v, stages) and multipliers (its constraint
  fields: lambda, gamma, mu, ...), J = [A B; C D]. Every scheme couples a body's coordinates in one field to the same
  body's coordinates in another through the mass (q' = M^-1 p, ...), and bodies to each other only through O(h^2)
  stiffness terms (the potential's, and the constraints' lambda g''). The preconditioner keeps the first:

    A~  = A's blocks of each body (its coordinates in every coordinate field, all couplings inside the body);
    S~  = D - C A~^-1 B ~ C_h (x) P,  P = G M^-1 G^T,

  where C_h is a small m x m matrix over the m constraint fields (EM: h [[-h/2, 1], [-1, 0]] in (lambda, gamma)). C_h
  is not derived per scheme: at each set-up it is fitted to S~ by probing each block column with the same fixed
  pseudo-random vector w, c_ab = <S~_ab w, P w> / <P w, P w>, and the fit's relative residual is reported (-ksp_view).
  P, the constraints' weighted graph Laplacian, is symmetric positive definite for independent constraints. Its rows of
  constraints on one body (a rigid body's director constraints, joints to the ground) are eliminated exactly, body by
  body (Z = P_ss^-1), and T = P_jj - P_js Z P_sj on the joints between bodies is solved by BoomerAMG on wide body
  graphs (nets, meshes; GAMG without hypre) or by sparse LU on narrow ones (chains), unless -<prefix>mbs_schur_pc_type
  says otherwise:

    apply:  y_p = A~^-1 r_p,  t = r_m - C y_p,  x_m = (C_h^-1 (x) P^-1) t  (m solves with T),  x_p = y_p - A~^-1 B x_m.

  This is the full block factorization with A and S replaced by A~ and C_h (x) P; GMRES on J does the rest. At zero
  multipliers (the first Newton iteration from rest) both are exact, and with an exact T the preconditioner is J^-1.
  What it neglects, relative to what it keeps, is of the order h^2 k/m (k a stiffness between bodies, m a mass: the
  squared Courant number of transverse waves), not of the model's size, so the iterations stay bounded as a net grows
  at fixed h and tension (a long hanging chain's tension grows with its length, and its iterations with it). P is
  formed at the configuration the Jacobian was kept at (the step's start: O(h) from the iterate's; a preconditioner).

  Not for: velocity constraints (their multipliers couple through A(q), not G), eliminated redundant rows (their
  identity rows are not of the form C_h (x) P) and the static scheme (no masses); MbsStepperChooseSolver() does not
  choose it there and a user's -mbs_solver schur is refused with the reason. A singular block of A~, a singular C_h, a
  singular block of P_ss (dependent constraints of one body) or a failed T solver's set-up fails the preconditioner
  on every rank (the step is then diagnosed as not converged).

  Two variants bound the iterations on chains (docs/solvers.md, "Chains under tension", "Rigid chains"):
  * -mbs_schur_axial (EM, EM-G, VI-A): A~ is A' = A - B0 W C0, W = rho lambda kappa on the first constraint field
    (B0, C0 its columns of B and rows of C; kappa each constraint's curvature along its gradient, rho the scheme's
    ratio), which takes the constraints' axial stiffness out of A and keeps the rest exactly; A' is factored by sparse
    LU (-<prefix>mbs_schur_primal_) and C_h is fitted against D - C A'^-1 B.
  * -mbs_schur_assembled (every scheme): S~ = D - C A~^-1 B is assembled (A~^-1 as a block-diagonal matrix) and
    factored by sparse LU (-<prefix>mbs_schur_) in place of C_h (x) P; exact where bodies couple only through linear
    constraints (a rigid chain's spherical joints).
*/
#include <string.h>

#include "stepper/stepperimpl.h"
#include "model/operators.h"

#define MBS_SCHUR_MAX_FIELDS 8  /* coordinate fields, and constraint fields, at most */
#define MBS_SCHUR_MAX_BLOCK  96 /* the largest dense block inverted: a rigid body's 12 coordinates in 8 fields */

typedef struct {
  MbsStepper   st;     /* the stepper that owns the PC (not referenced: it outlives its KSP) */
  PetscInt     kc, km; /* coordinate and constraint fields */
  PetscInt     cf[MBS_SCHUR_MAX_FIELDS], mf[MBS_SCHUR_MAX_FIELDS];
  PetscInt     nq, nc; /* this rank's coordinates and constraint rows per field */
  IS           isP, isM;
  Mat          A10, A01, A11, Gs, GsT, P;
  PetscScalar *Dinv; /* one block per owned body, (kc nb) x (kc nb) row-major (nb its coordinates): A~^-1 */
  PetscInt    *doff; /* nowned + 1 offsets of the blocks in Dinv */
  PetscReal    Ch[MBS_SCHUR_MAX_FIELDS * MBS_SCHUR_MAX_FIELDS], Chinv[MBS_SCHUR_MAX_FIELDS * MBS_SCHUR_MAX_FIELDS];
  PetscReal    fit; /* the fit's largest relative residual over the blocks that matter */
  PC           amg;
  Vec          xp, yp, xm, tm, w, z;
  /* P's rows of constraints on a single body (a rigid body's director constraints, joints to the ground) are
     eliminated exactly, body by body: P^-1 by the block factorization with Z = P_ss^-1 (block diagonal) and AMG on
     T = P_jj - P_js Z P_sj, the joints between bodies */
  PetscInt     ns, nj;      /* this rank's single-body and joint rows of P */
  PetscInt    *sidx, *jidx; /* their local rows in P (single-body rows grouped by body) */
  PetscInt     nsb, *sboff; /* the bodies' groups of single-body rows: nsb groups, offsets into sidx */
  PetscInt     nsglobal;    /* single-body rows on all ranks */
  PetscBool    split;       /* the rows are split (MbsSchurAMGSplitRows()) */
  IS           isS, isJ;
  Mat          Z, Psj, Pjs, Pjj, T;
  Mat          PZP;     /* P_sj^T Z P_sj; T has the union of its pattern and P_jj's */
  MbsSubMatMap tmap[2]; /* the entries of P_jj and of PZP in T */
  PetscReal   *qjac;    /* the ghosted coordinates P is formed at (a kept Jacobian's) */
  PetscReal   *qP;      /* those of the last set-up that formed P, T and the AMG hierarchy without failing */
  PetscBool    Pvalid;
  Vec          rs, ys, rj, xj;
  PetscBool    failed; /* the last set-up failed (the same on every rank): a solve gives Inf */
  /* Where the values of A10, A01, A11 and of the body blocks sit in the Jacobian's own arrays (SeqAIJ, or MPIAIJ's
     diagonal and off-diagonal blocks), made once per pattern: later set-ups copy values instead of cutting the
     submatrices out again and reading every body's rows (MatGetRow). Empty for other matrix types. */
  PetscInt64       Jid;    /* the object id of the Jacobian they were made for, 0 for none */
  PetscObjectState Jnz;    /* its nonzero state then */
  MbsSubMatMap     sub[6]; /* A10, A01, A11 (and A00, C0, B0 under -mbs_schur_axial) */
  PetscInt        *bpos;   /* each entry of the body blocks (doff's layout): its position in J's diagonal block or -1 */
  /* -mbs_schur_axial: A~ is A' = A - B0 W C0 (B's columns and C's rows of the first constraint field), W = rho lambda
     kappa, solved by the PC prim (sparse LU) in place of the body blocks' inverses */
  PetscBool    axial;
  PetscReal    rho;                      /* the scheme's ratio (MbsSchemeOps.schur_axial) */
  PetscReal   *kappa;                    /* each constraint row's curvature along its gradient */
  Mat          A00, C0, B0, WC, BWC, Ap; /* C0, B0: C's rows and B's columns of the first constraint field */
  MbsSubMatMap apmap[2];                 /* the entries of A00 and of BWC in A' */
  Vec          Wv, zp;
  PC           prim;
  PetscBool    prim_fresh, amg_fresh; /* prim, and amg, hold no factor (or hierarchy) yet */
  /* -mbs_schur_assembled: S~ = D - C A~^-1 B assembled and solved by amg, in place of C_h (x) P */
  PetscBool    assembled;
  Mat          Ainv, AinvB, CAinvB, S;
  MbsSubMatMap smap[2]; /* the entries of A11 and of CAinvB in S */
} MbsSchurAMG;

/* In-place inverse of the n x n row-major matrix a by Gauss-Jordan with partial pivoting; *ok = PETSC_FALSE when a
   pivot is at most tol times the largest entry (tol = 0: a zero or non-finite pivot; the blocks of a rigid body with
   thin-rod inertias span ten orders of magnitude and are regular). */
static void MbsSmallInvert(PetscInt n, PetscReal *a, PetscReal tol, PetscBool *ok)
{
  PetscInt  pivrow[MBS_SCHUR_MAX_BLOCK];
  PetscReal amax = 0;

  *ok = PETSC_TRUE;
  for (PetscInt i = 0; i < n * n; i++) amax = PetscMax(amax, PetscAbsReal(a[i]));
  for (PetscInt k = 0; k < n; k++) {
    PetscInt  p = k;
    PetscReal piv;
    for (PetscInt i = k + 1; i < n; i++)
      if (PetscAbsReal(a[i * n + k]) > PetscAbsReal(a[p * n + k])) p = i;
    if (!(PetscAbsReal(a[p * n + k]) > tol * amax) || PetscIsInfOrNanReal(a[p * n + k])) {
      *ok = PETSC_FALSE;
      return;
    }
    pivrow[k] = p;
    for (PetscInt j = 0; j < n && p != k; j++) {
      const PetscReal t = a[k * n + j];
      a[k * n + j]      = a[p * n + j];
      a[p * n + j]      = t;
    }
    piv          = a[k * n + k];
    a[k * n + k] = 1.0;
    for (PetscInt j = 0; j < n; j++) a[k * n + j] /= piv;
    for (PetscInt i = 0; i < n; i++) {
      PetscReal f;
      if (i == k) continue;
      f            = a[i * n + k];
      a[i * n + k] = 0.0;
      for (PetscInt j = 0; j < n; j++) a[i * n + j] -= f * a[k * n + j];
    }
  }
  /* the row swaps of step k swap columns k and pivrow[k] of the inverse, undone in reverse order */
  for (PetscInt k = n - 1; k >= 0; k--)
    for (PetscInt i = 0; i < n && pivrow[k] != k; i++) {
      const PetscReal t    = a[i * n + k];
      a[i * n + k]         = a[i * n + pivrow[k]];
      a[i * n + pivrow[k]] = t;
    }
}

/* A deterministic value in [-1, 1] of a global row index, the same on any number of ranks (splitmix64) */
static PetscReal MbsProbeValue(PetscInt i)
{
  uint64_t z = (uint64_t)i + 0x9E3779B97F4A7C15ULL;
  z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z          = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z          = z ^ (z >> 31);
  return 2.0 * (PetscReal)(z >> 11) / 9007199254740992.0 - 1.0;
}

static PetscErrorCode MbsSchurAMGClearMaps(MbsSchurAMG *ctx)
{
  PetscFunctionBegin;
  for (int k = 0; k < 6; k++) PetscCall(MbsSubMatMapReset_Private(&ctx->sub[k]));
  PetscCall(PetscFree(ctx->bpos));
  ctx->Jid = 0;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchurAMGClear(MbsSchurAMG *ctx)
{
  PetscFunctionBegin;
  PetscCall(ISDestroy(&ctx->isP));
  PetscCall(ISDestroy(&ctx->isM));
  PetscCall(MatDestroy(&ctx->A10));
  PetscCall(MatDestroy(&ctx->A01));
  PetscCall(MatDestroy(&ctx->A11));
  PetscCall(MatDestroy(&ctx->Gs));
  PetscCall(MatDestroy(&ctx->GsT));
  PetscCall(MatDestroy(&ctx->P));
  PetscCall(PetscFree(ctx->Dinv));
  PetscCall(PetscFree(ctx->doff));
  PetscCall(VecDestroy(&ctx->xp));
  PetscCall(VecDestroy(&ctx->yp));
  PetscCall(VecDestroy(&ctx->xm));
  PetscCall(VecDestroy(&ctx->tm));
  PetscCall(VecDestroy(&ctx->w));
  PetscCall(VecDestroy(&ctx->z));
  PetscCall(PetscFree2(ctx->sidx, ctx->jidx));
  PetscCall(PetscFree(ctx->sboff));
  PetscCall(ISDestroy(&ctx->isS));
  PetscCall(ISDestroy(&ctx->isJ));
  PetscCall(MatDestroy(&ctx->Z));
  PetscCall(MatDestroy(&ctx->Psj));
  PetscCall(MatDestroy(&ctx->Pjs));
  PetscCall(MatDestroy(&ctx->Pjj));
  PetscCall(MatDestroy(&ctx->PZP));
  PetscCall(MatDestroy(&ctx->T));
  PetscCall(PetscFree(ctx->qjac));
  PetscCall(PetscFree(ctx->qP));
  ctx->Pvalid = PETSC_FALSE;
  ctx->split  = PETSC_FALSE;
  PetscCall(VecDestroy(&ctx->rs));
  PetscCall(VecDestroy(&ctx->ys));
  PetscCall(VecDestroy(&ctx->rj));
  PetscCall(VecDestroy(&ctx->xj));
  PetscCall(MbsSchurAMGClearMaps(ctx));
  PetscCall(PetscFree(ctx->kappa));
  PetscCall(MatDestroy(&ctx->A00));
  PetscCall(MatDestroy(&ctx->C0));
  PetscCall(MatDestroy(&ctx->B0));
  PetscCall(MatDestroy(&ctx->WC));
  PetscCall(MatDestroy(&ctx->BWC));
  PetscCall(MatDestroy(&ctx->Ap));
  for (int k = 0; k < 2; k++) PetscCall(MbsSubMatMapReset_Private(&ctx->apmap[k]));
  for (int k = 0; k < 2; k++) PetscCall(MbsSubMatMapReset_Private(&ctx->smap[k]));
  for (int k = 0; k < 2; k++) PetscCall(MbsSubMatMapReset_Private(&ctx->tmap[k]));
  PetscCall(MatDestroy(&ctx->Ainv));
  PetscCall(MatDestroy(&ctx->AinvB));
  PetscCall(MatDestroy(&ctx->CAinvB));
  PetscCall(MatDestroy(&ctx->S));
  PetscCall(VecDestroy(&ctx->Wv));
  PetscCall(VecDestroy(&ctx->zp));
  ctx->kc = ctx->km = 0;
  PetscFunctionReturn(0);
}

/* Why the stepper's current scheme and model cannot use this preconditioner, or "" (the same on every rank) */
PetscErrorCode MbsStepperSchurAMGApplicable_Private(MbsStepper st, char why[], size_t len)
{
  const MbsSystem sys = st->sys;
  PetscInt        kc = 0, km = 0;

  PetscFunctionBegin;
  why[0] = 0;
  for (PetscInt f = 0; f < sys->nfields; f++) {
    if (sys->kind[f] == MBS_FIELD_COORDINATE)
      kc++;
    else if (sys->kind[f] == MBS_FIELD_CONSTRAINT)
      km++;
  }
  if (st->ops->quasistatic)
    PetscCall(PetscSNPrintf(why, len, "a static solve has no masses"));
  else if (st->model->nvcon)
    PetscCall(PetscSNPrintf(why, len, "velocity constraints (their multipliers couple through A(q), not G)"));
  else if (st->allow_redundant)
    PetscCall(PetscSNPrintf(why, len, "eliminated redundant constraints (-mbs_allow_redundant_constraints)"));
  else if (!st->model->ncon)
    PetscCall(PetscSNPrintf(why, len, "a model without constraints"));
  else if (kc > MBS_SCHUR_MAX_FIELDS || km > MBS_SCHUR_MAX_FIELDS || !km)
    PetscCall(PetscSNPrintf(why, len,
                            "scheme %s's %" PetscInt_FMT " coordinate and %" PetscInt_FMT
                            " constraint fields (at most %d each, at least one constraint field)",
                            st->type, kc, km, MBS_SCHUR_MAX_FIELDS));
  PetscFunctionReturn(0);
}

/* The index set of the n fields f[] together (each with nlocal rows on this rank), in field order */
static PetscErrorCode MbsSchurAMGConcatenateFields(MbsStepper st, PetscInt n, const PetscInt f[], PetscInt nlocal,
                                                   IS *is)
{
  const MbsSystem sys = st->sys;
  IS              list[MBS_SCHUR_MAX_FIELDS];

  PetscFunctionBegin;
  for (PetscInt j = 0; j < n; j++) {
    PetscInt m;
    PetscCall(ISGetLocalSize(sys->is[f[j]], &m));
    PetscCheck(m == nlocal, PETSC_COMM_SELF, PETSC_ERR_PLIB, "field %s has %" PetscInt_FMT " rows, not %" PetscInt_FMT,
               sys->name[f[j]], m, nlocal);
    list[j] = sys->is[f[j]];
  }
  PetscCall(ISConcatenate(PetscObjectComm((PetscObject)st), n, list, is));
  PetscFunctionReturn(0);
}

/* The fields, index sets, work vectors and P's pattern, at the first set-up */
static PetscErrorCode MbsSchurAMGCreateLayout(MbsSchurAMG *ctx)
{
  const MbsStepper st  = ctx->st;
  const MbsSystem  sys = st->sys;

  PetscFunctionBegin;
  for (PetscInt f = 0; f < sys->nfields; f++) { /* velocity constraint fields are empty (no such rows) */
    if (sys->kind[f] == MBS_FIELD_COORDINATE)
      ctx->cf[ctx->kc++] = f;
    else if (sys->kind[f] == MBS_FIELD_CONSTRAINT)
      ctx->mf[ctx->km++] = f;
  }
  ctx->nq = st->model->nq_local;
  ctx->nc = st->model->ncon_local;
  PetscCall(MbsSchurAMGConcatenateFields(st, ctx->kc, ctx->cf, ctx->nq, &ctx->isP));
  PetscCall(MbsSchurAMGConcatenateFields(st, ctx->km, ctx->mf, ctx->nc, &ctx->isM));
  {
    const MbsModel model = st->model;
    PetscCall(PetscMalloc1(model->nowned + 1, &ctx->doff));
    ctx->doff[0] = 0;
    for (PetscInt k = 0; k < model->nowned; k++) {
      const PetscInt nb = ctx->kc * 3 * (PetscInt)model->body_type[model->owned_body[k]];
      ctx->doff[k + 1]  = ctx->doff[k] + nb * nb;
    }
    if (!ctx->axial)
      PetscCall(PetscMalloc1(ctx->doff[model->nowned], &ctx->Dinv)); /* (A - B W C is factored instead) */
  }
  PetscFunctionReturn(0);
}

/* The positions of the body blocks' entries in J's diagonal block (-1 where J has none) */
static PetscErrorCode MbsSchurAMGBlockMap(MbsSchurAMG *ctx, Mat J)
{
  const MbsSystem sys   = ctx->st->sys;
  const MbsModel  model = ctx->st->model;
  const PetscInt  kc    = ctx->kc;
  Mat             Jd, Jo;
  const PetscInt *g, *ia, *ja;
  PetscInt        n;
  PetscBool       ok, done;

  PetscFunctionBegin;
  PetscCall(MbsAIJSplit_Private(J, &Jd, &Jo, &g, &ok));
  PetscCall(PetscMalloc1(ctx->doff[model->nowned], &ctx->bpos));
  PetscCall(MatGetRowIJ(Jd, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "no row structure of the Jacobian's diagonal block");
  for (PetscInt k = 0; k < model->nowned; k++) {
    const PetscInt b = model->owned_body[k], nb = 3 * (PetscInt)model->body_type[b], nn = kc * nb;
    PetscInt      *p = ctx->bpos + ctx->doff[k];
    for (PetscInt j = 0; j < kc; j++)
      for (PetscInt i = 0; i < nb; i++)
        for (PetscInt l = 0; l < kc; l++)
          for (PetscInt c = 0; c < nb; c++)
            PetscCall(MbsCSRFind(ia, ja, sys->foff[ctx->cf[j]] + model->body_lq[b] + i,
                                 sys->foff[ctx->cf[l]] + model->body_lq[b] + c, &p[(j * nb + i) * nn + l * nb + c]));
  }
  PetscCall(MatRestoreRowIJ(Jd, 0, PETSC_FALSE, PETSC_FALSE, &n, &ia, &ja, &done));
  PetscFunctionReturn(0);
}

/* The submatrices A10, A01, A11 (and A00, C0, B0 under -mbs_schur_axial) cut out of J, and (SeqAIJ or MPIAIJ) the
   positions that copy their values at later set-ups (the body blocks' positions are recorded at the second set-up:
   the first reads the rows, so that a run restarted there checks both ways against each other). The products and sums
   made from the old submatrices (A', S~) are made again. Collective. */
static PetscErrorCode MbsSchurAMGCutBlocks(MbsSchurAMG *ctx, Mat J)
{
  Mat           *sub[6] = {&ctx->A10, &ctx->A01, &ctx->A11, &ctx->A00, &ctx->C0, &ctx->B0};
  IS             rows[6], cols[6];
  const PetscInt n  = ctx->axial ? 6 : 3;
  PetscBool      ok = PETSC_TRUE;

  PetscFunctionBegin;
  rows[0] = ctx->isM, cols[0] = ctx->isP;
  rows[1] = ctx->isP, cols[1] = ctx->isM;
  rows[2] = ctx->isM, cols[2] = ctx->isM;
  rows[3] = ctx->isP, cols[3] = ctx->isP;
  rows[4] = ctx->st->sys->is[ctx->mf[0]], cols[4] = ctx->isP;
  rows[5] = ctx->isP, cols[5] = ctx->st->sys->is[ctx->mf[0]];
  PetscCall(MbsSchurAMGClearMaps(ctx));
  for (int k = 0; k < n; k++) {
    PetscCall(MatDestroy(sub[k]));
    PetscCall(MatCreateSubMatrix(J, rows[k], cols[k], MAT_INITIAL_MATRIX, sub[k]));
  }
  PetscCall(MatDestroy(&ctx->WC)); /* A' is made again for the new pattern */
  PetscCall(MatDestroy(&ctx->BWC));
  PetscCall(MatDestroy(&ctx->Ap));
  PetscCall(MatDestroy(&ctx->Ainv)); /* and S~ */
  PetscCall(MatDestroy(&ctx->AinvB));
  PetscCall(MatDestroy(&ctx->CAinvB));
  PetscCall(MatDestroy(&ctx->S));
  for (int k = 0; k < n && ok; k++) {
    PetscCall(MbsSubMatMapCreate_Private(J, rows[k], cols[k], *sub[k], &ctx->sub[k], &ok));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPIU_BOOL, MPI_LAND, PetscObjectComm((PetscObject)J)));
  }
  if (ok) {
    PetscCall(PetscObjectGetId((PetscObject)J, &ctx->Jid));
    PetscCall(MatGetNonzeroState(J, &ctx->Jnz));
  } else {
    PetscCall(PetscInfo(J, "Schur-AMG: the submatrices are cut out of the Jacobian at every set-up\n"));
    PetscCall(MbsSchurAMGClearMaps(ctx));
  }
  PetscFunctionReturn(0);
}

/* A~^-1: the blocks of the Jacobian's coordinate rows and columns of each body (its coordinates in every coordinate
   field), inverted; *ok = PETSC_FALSE if one is singular (on this rank) */
static PetscErrorCode MbsSchurAMGBlocks(MbsSchurAMG *ctx, Mat J, PetscBool *ok)
{
  const MbsSystem sys   = ctx->st->sys;
  const MbsModel  model = ctx->st->model;
  const PetscInt  kc    = ctx->kc;
  PetscInt        rstart;

  PetscFunctionBegin;
  *ok = PETSC_TRUE;
  PetscCall(MatGetOwnershipRange(J, &rstart, NULL));
  PetscCall(PetscArrayzero(ctx->Dinv, ctx->doff[model->nowned]));
  if (ctx->bpos) { /* from the positions in J's diagonal block */
    Mat                Jd, Jo;
    const PetscInt    *g;
    const PetscScalar *ja;
    PetscBool          split;
    PetscCall(MbsAIJSplit_Private(J, &Jd, &Jo, &g, &split));
    PetscCall(MatSeqAIJGetArrayRead(Jd, &ja));
    for (PetscInt k = 0; k < model->nowned && *ok; k++) {
      const PetscInt  n = ctx->doff[k + 1] - ctx->doff[k];
      const PetscInt *p = ctx->bpos + ctx->doff[k];
      PetscScalar    *d = ctx->Dinv + ctx->doff[k];
      for (PetscInt e = 0; e < n; e++)
        if (p[e] >= 0) d[e] = ja[p[e]];
      MbsSmallInvert(kc * 3 * (PetscInt)model->body_type[model->owned_body[k]], d, 0.0, ok);
    }
    PetscCall(MatSeqAIJRestoreArrayRead(Jd, &ja));
    PetscFunctionReturn(0);
  }
  for (PetscInt k = 0; k < model->nowned && *ok; k++) {
    const PetscInt b = model->owned_body[k], nb = 3 * (PetscInt)model->body_type[b], n = kc * nb;
    PetscScalar   *d = ctx->Dinv + ctx->doff[k];
    for (PetscInt j = 0; j < kc; j++)
      for (PetscInt i = 0; i < nb; i++) {
        const PetscInt     row = rstart + sys->foff[ctx->cf[j]] + model->body_lq[b] + i;
        PetscInt           ncols;
        const PetscInt    *cols;
        const PetscScalar *vals;
        PetscCall(MatGetRow(J, row, &ncols, &cols, &vals));
        for (PetscInt c = 0; c < ncols; c++) /* the body's columns in each coordinate field */
          for (PetscInt l = 0; l < kc; l++) {
            const PetscInt c0 = rstart + sys->foff[ctx->cf[l]] + model->body_lq[b];
            if (cols[c] >= c0 && cols[c] < c0 + nb) d[(j * nb + i) * n + l * nb + cols[c] - c0] = vals[c];
          }
        PetscCall(MatRestoreRow(J, row, &ncols, &cols, &vals));
      }
    MbsSmallInvert(n, d, 0.0, ok);
  }
  PetscFunctionReturn(0);
}

/* y <- A~^-1 x, or y <- y - A~^-1 x if subtract, on the primal layout (field j's coordinate i at j nq + i) */
static PetscErrorCode MbsSchurAMGBlockSolve(MbsSchurAMG *ctx, Vec x, Vec y, PetscBool subtract)
{
  const MbsModel     model = ctx->st->model;
  const PetscInt     kc = ctx->kc, nq = ctx->nq;
  const PetscScalar *xa;
  PetscScalar       *ya;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArray(y, &ya));
  for (PetscInt k = 0; k < model->nowned; k++) {
    const PetscInt     b = model->owned_body[k], nb = 3 * (PetscInt)model->body_type[b], n = kc * nb;
    const PetscInt     o = model->body_lq[b];
    const PetscScalar *d = ctx->Dinv + ctx->doff[k];
    PetscScalar        xb[MBS_SCHUR_MAX_BLOCK];
    for (PetscInt j = 0; j < kc; j++)
      for (PetscInt i = 0; i < nb; i++) xb[j * nb + i] = xa[j * nq + o + i];
    for (PetscInt r = 0; r < n; r++) {
      PetscScalar s = 0;
      for (PetscInt c = 0; c < n; c++) s += d[r * n + c] * xb[c];
      {
        PetscScalar *yr = &ya[(r / nb) * nq + o + r % nb];
        *yr             = subtract ? *yr - s : s;
      }
    }
  }
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscCall(VecRestoreArray(y, &ya));
  PetscCall(PetscLogFlops(2.0 * ctx->doff[model->nowned]));
  PetscFunctionReturn(0);
}

/* y <- A~^-1 x (or y <- y - A~^-1 x): the body blocks' inverses, or under -mbs_schur_axial the solve with A - B W C */
static PetscErrorCode MbsSchurAMGPrimalSolve(MbsSchurAMG *ctx, Vec x, Vec y, PetscBool subtract)
{
  PetscFunctionBegin;
  if (!ctx->axial) {
    PetscCall(MbsSchurAMGBlockSolve(ctx, x, y, subtract));
  } else if (subtract) {
    PetscCall(PCApply(ctx->prim, x, ctx->zp));
    PetscCall(VecAXPY(y, -1.0, ctx->zp));
  } else
    PetscCall(PCApply(ctx->prim, x, y));
  PetscFunctionReturn(0);
}

/* The set-up of an inner solver (the LU of A' or S~, T's AMG or LU) on the matrix A; *ok the same on every rank. A
   failed one is reset, so that the next set-up factors afresh (PETSc 3.18's MUMPS skips the numeric factorization
   after a failed one, and the solve then stops the program); *fresh: no factor yet, which then gets MUMPS's workspace
   margin. Collective. */
static PetscErrorCode MbsSchurAMGInnerSetUp(PC inner, Mat A, PetscBool *fresh, PetscBool *ok)
{
  PCFailedReason reason;

  PetscFunctionBegin;
  if (*fresh) PetscCall(MbsPCSetMumpsMargin_Private(inner, A));
  *fresh = PETSC_FALSE;
  PetscCall(PCSetOperators(inner, A, A));
  PetscCall(PCSetUp(inner));
  PetscCall(PCGetFailedReason(inner, &reason));
  *ok = (PetscBool)(reason == PC_NOERROR);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, ok, 1, MPIU_BOOL, MPI_LAND, PetscObjectComm((PetscObject)inner)));
  if (!*ok) {
    PetscCall(PCReset(inner));
    *fresh = PETSC_TRUE;
  }
  PetscFunctionReturn(0);
}

/* Z = X + a Y: at the first call (*Z NULL) a new matrix with the union of their patterns; later calls add X's and Y's
   values through the maps of their entries in Z (MatAXPY() with SUBSET_NONZERO_PATTERN inserts row by row: 0.1 s per
   sum on a chain of 10^5 particles), or by MatAXPY() where no map can be made (other matrix types than AIJ).
   Collective. */
static PetscErrorCode MbsSchurAMGSum(Mat X, PetscScalar a, Mat Y, Mat *Z, MbsSubMatMap map[2])
{
  MPI_Comm comm = PetscObjectComm((PetscObject)X);

  PetscFunctionBegin;
  if (!*Z) {
    PetscInt  lo, hi;
    IS        all;
    PetscBool found[2];
    PetscCall(MatDuplicate(X, MAT_COPY_VALUES, Z));
    PetscCall(MatAXPY(*Z, a, Y, DIFFERENT_NONZERO_PATTERN));
    PetscCall(MatGetOwnershipRange(*Z, &lo, &hi));
    PetscCall(ISCreateStride(comm, hi - lo, lo, 1, &all));
    PetscCall(MbsSubMatMapCreate_Private(*Z, all, all, X, &map[0], &found[0]));
    PetscCall(MbsSubMatMapCreate_Private(*Z, all, all, Y, &map[1], &found[1]));
    PetscCall(ISDestroy(&all));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, found, 2, MPIU_BOOL, MPI_LAND, comm));
    if (!(found[0] && found[1])) {
      PetscCall(PetscInfo(*Z, "Schur-AMG: a sum is formed by MatAXPY() at every set-up (no map of its terms)\n"));
      for (int k = 0; k < 2; k++) PetscCall(MbsSubMatMapReset_Private(&map[k]));
    }
  } else if (map[0].pos[0]) { /* the maps (pos[0] is allocated whenever a map is made) */
    PetscCall(MatZeroEntries(*Z));
    PetscCall(MbsSubMatMapAddTo_Private(&map[0], X, 1.0, *Z));
    PetscCall(MbsSubMatMapAddTo_Private(&map[1], Y, a, *Z));
  } else {
    PetscCall(MatZeroEntries(*Z));
    PetscCall(MatAXPY(*Z, 1.0, X, SUBSET_NONZERO_PATTERN));
    PetscCall(MatAXPY(*Z, a, Y, SUBSET_NONZERO_PATTERN));
  }
  PetscFunctionReturn(0);
}

/* -mbs_schur_assembled: S~ = D - C A~^-1 B assembled (A~^-1 the body blocks' inverses as a block-diagonal matrix)
   and factored by ctx->amg, in place of C_h (x) P. Exact where A is block diagonal (bodies coupled by linear
   constraints only, a rigid chain's joints); it does not depend on the fit. Collective; *ok the same on every rank. */
static PetscErrorCode MbsSchurAMGAssembleS(MbsSchurAMG *ctx, PetscBool *ok)
{
  const MbsModel  model = ctx->st->model;
  const PetscInt  kc = ctx->kc, nq = ctx->nq;
  const PetscBool first = (PetscBool)!ctx->Ainv;
  const MatReuse  reuse = first ? MAT_INITIAL_MATRIX : MAT_REUSE_MATRIX;
  MPI_Comm        comm  = PetscObjectComm((PetscObject)ctx->st);
  PetscInt        pstart;

  PetscFunctionBegin;
  PetscCall(VecGetOwnershipRange(ctx->xp, &pstart, NULL));
  if (first) {
    PetscInt *nnz;
    PetscCall(PetscMalloc1(kc * nq + 1, &nnz));
    for (PetscInt k = 0; k < model->nowned; k++) {
      const PetscInt b = model->owned_body[k], nb = 3 * (PetscInt)model->body_type[b];
      for (PetscInt j = 0; j < kc; j++)
        for (PetscInt i = 0; i < nb; i++) nnz[j * nq + model->body_lq[b] + i] = kc * nb;
    }
    PetscCall(MatCreateAIJ(comm, kc * nq, kc * nq, PETSC_DETERMINE, PETSC_DETERMINE, 0, nnz, 0, NULL, &ctx->Ainv));
    PetscCall(MatSetOption(ctx->Ainv, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
    PetscCall(PetscFree(nnz));
  }
  for (PetscInt k = 0; k < model->nowned; k++) {
    const PetscInt b = model->owned_body[k], nb = 3 * (PetscInt)model->body_type[b];
    PetscInt       idx[MBS_SCHUR_MAX_BLOCK];
    for (PetscInt j = 0; j < kc; j++)
      for (PetscInt i = 0; i < nb; i++) idx[j * nb + i] = pstart + j * nq + model->body_lq[b] + i;
    PetscCall(MatSetValues(ctx->Ainv, kc * nb, idx, kc * nb, idx, ctx->Dinv + ctx->doff[k], INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(ctx->Ainv, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(ctx->Ainv, MAT_FINAL_ASSEMBLY));
  PetscCall(MatMatMult(ctx->Ainv, ctx->A01, reuse, PETSC_DEFAULT, &ctx->AinvB));
  PetscCall(MatMatMult(ctx->A10, ctx->AinvB, reuse, PETSC_DEFAULT, &ctx->CAinvB));
  PetscCall(MbsSchurAMGSum(ctx->A11, -1.0, ctx->CAinvB, &ctx->S, ctx->smap));
  PetscCall(MbsSchurAMGInnerSetUp(ctx->amg, ctx->S, &ctx->amg_fresh, ok));
  PetscFunctionReturn(0);
}

/* -mbs_schur_axial: A' = A - B W C factored by prim. The constraints' stiffness lambda g'' in A couples bodies; its
   axial part (along each constraint's gradient, lambda kappa grad g grad g^T) has the form B W C with W = rho lambda
   kappa on the first constraint field's rows (docs/solvers.md). Taking it out of A leaves the transverse part, which
   A' keeps exactly; where D = 0, the saddle-point system with A' in place of A preconditions J with every eigenvalue
   1. lambda is that of the current Newton iterate, kappa at the configuration P is formed at (q). Collective; *ok the
   same on every rank. */
static PetscErrorCode MbsSchurAMGAxial(MbsSchurAMG *ctx, const PetscScalar *q, PetscBool *ok)
{
  const MbsStepper   st    = ctx->st;
  const PetscBool    first = (PetscBool)!ctx->Ap;
  const PetscInt     nc    = ctx->nc;
  Vec                X;
  const PetscScalar *xa;
  PetscScalar       *wa;

  PetscFunctionBegin;
  if (!ctx->kappa) PetscCall(PetscMalloc1(nc + 1, &ctx->kappa));
  if (!ctx->Wv) PetscCall(MatCreateVecs(ctx->C0, NULL, &ctx->Wv));
  if (!ctx->zp) PetscCall(VecDuplicate(ctx->xp, &ctx->zp));
  PetscCall(MbsModelConstraintAxialCurvature(st->model, q, ctx->kappa));
  if (st->reuse && st->jac_valid && st->Xjac) /* a kept Jacobian: its multipliers, as for q */
    X = st->Xjac;
  else
    PetscCall(SNESGetSolution(st->snes, &X));
  PetscCall(VecGetArrayRead(X, &xa));
  PetscCall(VecGetArrayWrite(ctx->Wv, &wa));
  for (PetscInt i = 0; i < nc; i++) wa[i] = ctx->rho * PetscRealPart(xa[st->sys->foff[ctx->mf[0]] + i]) * ctx->kappa[i];
  PetscCall(VecRestoreArrayWrite(ctx->Wv, &wa));
  PetscCall(VecRestoreArrayRead(X, &xa));
  if (first)
    PetscCall(MatDuplicate(ctx->C0, MAT_COPY_VALUES, &ctx->WC));
  else
    PetscCall(MatCopy(ctx->C0, ctx->WC, SAME_NONZERO_PATTERN));
  PetscCall(MatDiagonalScale(ctx->WC, ctx->Wv, NULL));
  PetscCall(MatMatMult(ctx->B0, ctx->WC, first ? MAT_INITIAL_MATRIX : MAT_REUSE_MATRIX, PETSC_DEFAULT, &ctx->BWC));
  PetscCall(MbsSchurAMGSum(ctx->A00, -1.0, ctx->BWC, &ctx->Ap, ctx->apmap));
  PetscCall(MbsSchurAMGInnerSetUp(ctx->prim, ctx->Ap, &ctx->prim_fresh, ok));
  PetscFunctionReturn(0);
}

/* S~ w for the multiplier vector xm: tm <- D xm - C A~^-1 B xm */
static PetscErrorCode MbsSchurAMGSchurMult(MbsSchurAMG *ctx, Vec xm, Vec tm)
{
  PetscFunctionBegin;
  PetscCall(MatMult(ctx->A01, xm, ctx->xp));
  PetscCall(MbsSchurAMGPrimalSolve(ctx, ctx->xp, ctx->yp, PETSC_FALSE));
  PetscCall(MatMult(ctx->A10, ctx->yp, tm));
  PetscCall(VecScale(tm, -1.0));
  PetscCall(MatMultAdd(ctx->A11, xm, tm, tm));
  PetscFunctionReturn(0);
}

/* C_h: S~'s block (a, b) against P, probed with one pseudo-random vector per constraint field; *ok = PETSC_FALSE if
   C_h is singular (the same on every rank) */
static PetscErrorCode MbsSchurAMGFit(MbsSchurAMG *ctx, PetscBool *ok)
{
  const PetscInt km = ctx->km, nc = ctx->nc;
  PetscReal      sums[MBS_SCHUR_MAX_FIELDS * MBS_SCHUR_MAX_FIELDS * 2 + MBS_SCHUR_MAX_FIELDS];
  PetscInt       cstart;
  MPI_Comm       comm = PetscObjectComm((PetscObject)ctx->st);

  PetscFunctionBegin;
  PetscCall(VecGetOwnershipRange(ctx->w, &cstart, NULL));
  PetscCall(PetscArrayzero(sums, km * km * 2 + km));
  for (PetscInt b = 0; b < km; b++) {
    PetscScalar       *xa, *wa;
    const PetscScalar *za, *ta;
    PetscCall(VecGetArrayWrite(ctx->w, &wa));
    for (PetscInt i = 0; i < nc; i++) wa[i] = MbsProbeValue(cstart + i);
    PetscCall(VecRestoreArrayWrite(ctx->w, &wa));
    PetscCall(MatMult(ctx->P, ctx->w, ctx->z));
    PetscCall(VecSet(ctx->xm, 0.0));
    PetscCall(VecGetArray(ctx->xm, &xa));
    PetscCall(VecGetArrayRead(ctx->w, &za));
    for (PetscInt i = 0; i < nc; i++) xa[b * nc + i] = za[i];
    PetscCall(VecRestoreArrayRead(ctx->w, &za));
    PetscCall(VecRestoreArray(ctx->xm, &xa));
    PetscCall(MbsSchurAMGSchurMult(ctx, ctx->xm, ctx->tm));
    PetscCall(VecGetArrayRead(ctx->z, &za));
    PetscCall(VecGetArrayRead(ctx->tm, &ta));
    for (PetscInt i = 0; i < nc; i++) sums[2 * km * km + b] += za[i] * za[i];
    for (PetscInt a = 0; a < km; a++)
      for (PetscInt i = 0; i < nc; i++) {
        sums[2 * (a * km + b)] += ta[a * nc + i] * za[i];
        sums[2 * (a * km + b) + 1] += ta[a * nc + i] * ta[a * nc + i];
      }
    PetscCall(VecRestoreArrayRead(ctx->z, &za));
    PetscCall(VecRestoreArrayRead(ctx->tm, &ta));
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sums, (PetscMPIInt)(km * km * 2 + km), MPIU_REAL, MPIU_SUM, comm));
  {
    PetscReal ymax = 0;
    for (PetscInt a = 0; a < km * km; a++) ymax = PetscMax(ymax, sums[2 * a + 1]);
    ctx->fit = 0;
    for (PetscInt a = 0; a < km; a++)
      for (PetscInt b = 0; b < km; b++) {
        const PetscReal zz = sums[2 * km * km + b], yz = sums[2 * (a * km + b)], yy = sums[2 * (a * km + b) + 1];
        const PetscReal c   = zz > 0 ? yz / zz : 0;
        ctx->Ch[a * km + b] = c;
        /* blocks below 1e-8 of the largest (in norm) are round-off; the others' misfit is reported */
        if (yy > 1e-16 * ymax) ctx->fit = PetscMax(ctx->fit, PetscSqrtReal(PetscMax(0.0, yy - c * yz) / yy));
      }
  }
  PetscCall(PetscArraycpy(ctx->Chinv, ctx->Ch, km * km));
  MbsSmallInvert(km, ctx->Chinv, 1e-12, ok);
  PetscFunctionReturn(0);
}

/* The single-body rows (grouped by body) and the joint rows of P, at the first set-up */
static PetscErrorCode MbsSchurAMGSplitRows(MbsSchurAMG *ctx)
{
  const MbsModel model = ctx->st->model;
  const PetscInt nc    = ctx->nc;
  PetscInt      *body, *order, cstart;
  MPI_Comm       comm = PetscObjectComm((PetscObject)ctx->st);

  PetscFunctionBegin;
  PetscCall(PetscMalloc2(nc, &body, nc, &order));
  for (PetscInt i = 0; i < nc; i++) body[i] = -1;
  for (PetscInt k = 0; k < model->nelem_local; k++) {
    const MbsElement *el = MbsModelLocalElement(model, k);
    const PetscInt    b  = el->body[0] >= 0 && el->body[1] >= 0 ? -1 : PetscMax(el->body[0], el->body[1]);
    for (PetscInt r = 0; r < el->kernel->ncon; r++) body[model->elem_c[k] + r] = b;
  }
  ctx->ns = ctx->nj = 0;
  for (PetscInt i = 0; i < nc; i++) {
    if (body[i] >= 0) order[ctx->ns++] = i;
  }
  PetscCall(PetscMalloc2(ctx->ns + 1, &ctx->sidx, nc - ctx->ns + 1, &ctx->jidx));
  {
    PetscInt *key;
    PetscCall(PetscMalloc1(ctx->ns + 1, &key));
    for (PetscInt i = 0; i < ctx->ns; i++) key[i] = body[order[i]], ctx->sidx[i] = order[i];
    PetscCall(PetscSortIntWithArray(ctx->ns, key, ctx->sidx)); /* stable enough: rows of a body stay a group */
    PetscCall(PetscMalloc1(ctx->ns + 1, &ctx->sboff));
    ctx->nsb = 0;
    for (PetscInt i = 0; i < ctx->ns; i++)
      if (!i || key[i] != key[i - 1]) ctx->sboff[ctx->nsb++] = i;
    ctx->sboff[ctx->nsb] = ctx->ns;
    PetscCall(PetscFree(key));
  }
  for (PetscInt i = 0; i < nc; i++)
    if (body[i] < 0) ctx->jidx[ctx->nj++] = i;
  PetscCall(PetscFree2(body, order));
  PetscCall(VecGetOwnershipRange(ctx->w, &cstart, NULL));
  {
    PetscInt *g;
    PetscCall(PetscMalloc1(PetscMax(ctx->ns, ctx->nj) + 1, &g));
    for (PetscInt i = 0; i < ctx->ns; i++) g[i] = cstart + ctx->sidx[i];
    PetscCall(ISCreateGeneral(comm, ctx->ns, g, PETSC_COPY_VALUES, &ctx->isS));
    for (PetscInt i = 0; i < ctx->nj; i++) g[i] = cstart + ctx->jidx[i];
    PetscCall(ISCreateGeneral(comm, ctx->nj, g, PETSC_COPY_VALUES, &ctx->isJ));
    PetscCall(PetscFree(g));
  }
  {
    PetscInt red[2] = {ctx->ns, 0};
    for (PetscInt g = 0; g < ctx->nsb; g++) red[1] = PetscMax(red[1], ctx->sboff[g + 1] - ctx->sboff[g]);
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, red, 1, MPIU_INT, MPI_SUM, comm));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, red + 1, 1, MPIU_INT, MPI_MAX, comm));
    ctx->nsglobal = red[0];
    PetscCheck(red[1] <= MBS_SCHUR_MAX_BLOCK, comm, PETSC_ERR_SUP,
               "A body has %" PetscInt_FMT " constraint rows of its own, more than the %d the Schur-AMG preconditioner "
               "eliminates; use -mbs_solver lu",
               red[1], MBS_SCHUR_MAX_BLOCK);
  }
  ctx->split = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* Z = P_ss^-1 (the blocks of each body's single-body rows inverted) and T = P_jj - P_js Z P_sj; *ok = PETSC_FALSE if
   a block is singular (on this rank; its place in Z then holds the identity, so that Z's pattern never changes) */
static PetscErrorCode MbsSchurAMGEliminate(MbsSchurAMG *ctx, PetscBool *ok)
{
  const PetscBool first = (PetscBool)!ctx->split;
  const MatReuse  reuse = first ? MAT_INITIAL_MATRIX : MAT_REUSE_MATRIX;
  PetscInt        cstart, sstart;
  MPI_Comm        comm = PetscObjectComm((PetscObject)ctx->st);

  PetscFunctionBegin;
  *ok = PETSC_TRUE;
  if (first) PetscCall(MbsSchurAMGSplitRows(ctx));
  if (!ctx->nsglobal) { /* nothing to eliminate: T is P */
    if (!ctx->T) {
      PetscCall(PetscObjectReference((PetscObject)ctx->P));
      ctx->T = ctx->P;
    }
    PetscFunctionReturn(0);
  }
  PetscCall(VecGetOwnershipRange(ctx->w, &cstart, NULL));
  if (first) {
    PetscInt *nnz;
    PetscCall(PetscMalloc1(ctx->ns + 1, &nnz));
    for (PetscInt g = 0; g < ctx->nsb; g++)
      for (PetscInt i = ctx->sboff[g]; i < ctx->sboff[g + 1]; i++) nnz[i] = ctx->sboff[g + 1] - ctx->sboff[g];
    PetscCall(MatCreateAIJ(comm, ctx->ns, ctx->ns, PETSC_DETERMINE, PETSC_DETERMINE, 0, nnz, 0, NULL, &ctx->Z));
    PetscCall(MatSetOption(ctx->Z, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
    PetscCall(PetscFree(nnz));
    PetscCall(MatCreateVecs(ctx->Z, &ctx->rs, &ctx->ys));
  }
  PetscCall(MatGetOwnershipRange(ctx->Z, &sstart, NULL));
  for (PetscInt g = 0; g < ctx->nsb; g++) {
    const PetscInt n = ctx->sboff[g + 1] - ctx->sboff[g], *rows = ctx->sidx + ctx->sboff[g];
    PetscScalar    blk[MBS_SCHUR_MAX_BLOCK * MBS_SCHUR_MAX_BLOCK];
    PetscInt       grow[MBS_SCHUR_MAX_BLOCK], zrow[MBS_SCHUR_MAX_BLOCK];
    PetscBool      regular;
    for (PetscInt i = 0; i < n; i++) grow[i] = cstart + rows[i], zrow[i] = sstart + ctx->sboff[g] + i;
    PetscCall(MatGetValues(ctx->P, n, grow, n, grow, blk));
    MbsSmallInvert(n, blk, 0.0, &regular);
    if (!regular) {
      *ok = PETSC_FALSE;
      for (PetscInt i = 0; i < n * n; i++) blk[i] = (i % (n + 1)) ? 0.0 : 1.0;
    }
    PetscCall(MatSetValues(ctx->Z, n, zrow, n, zrow, blk, INSERT_VALUES));
  }
  PetscCall(MatAssemblyBegin(ctx->Z, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(ctx->Z, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreateSubMatrix(ctx->P, ctx->isS, ctx->isJ, reuse, &ctx->Psj));
  PetscCall(MatCreateSubMatrix(ctx->P, ctx->isJ, ctx->isS, reuse, &ctx->Pjs));
  PetscCall(MatCreateSubMatrix(ctx->P, ctx->isJ, ctx->isJ, reuse, &ctx->Pjj));
  /* P_js Z P_sj = P_sj^T Z P_sj (P is symmetric) by MatPtAP: MatMatMatMult and MatMatMult read uninitialized memory
     on MPIAIJ when a rank has no single-body rows (PETSc 3.18). T's pattern, the union of P_jj's and PZP's, is fixed
     at the first set-up (P's pattern is that of G G^T, the same at every set-up). */
  PetscCall(MatPtAP(ctx->Z, ctx->Psj, reuse, PETSC_DEFAULT, &ctx->PZP));
  PetscCall(MbsSchurAMGSum(ctx->Pjj, -1.0, ctx->PZP, &ctx->T, ctx->tmap));
  if (first) PetscCall(MatCreateVecs(ctx->T, &ctx->xj, &ctx->rj));
  PetscFunctionReturn(0);
}

/* z <- P^-1 w: the single-body rows exactly, the joints by one AMG cycle on T */
static PetscErrorCode MbsSchurAMGPSolve(MbsSchurAMG *ctx, Vec w, Vec z)
{
  const PetscScalar *wa, *va;
  PetscScalar       *ra, *za;

  PetscFunctionBegin;
  if (!ctx->nsglobal) {
    PetscCall(PCApply(ctx->amg, w, z));
    PetscFunctionReturn(0);
  }
  PetscCall(VecGetArrayRead(w, &wa));
  PetscCall(VecGetArrayWrite(ctx->rs, &ra));
  for (PetscInt i = 0; i < ctx->ns; i++) ra[i] = wa[ctx->sidx[i]];
  PetscCall(VecRestoreArrayWrite(ctx->rs, &ra));
  PetscCall(VecGetArrayWrite(ctx->rj, &ra));
  for (PetscInt i = 0; i < ctx->nj; i++) ra[i] = wa[ctx->jidx[i]];
  PetscCall(VecRestoreArrayWrite(ctx->rj, &ra));
  PetscCall(VecRestoreArrayRead(w, &wa));
  /* y_s = Z r_s, t_j = r_j - P_js y_s, x_j = T^-1 t_j, x_s = y_s - Z P_sj x_j */
  PetscCall(MatMult(ctx->Z, ctx->rs, ctx->ys));
  PetscCall(VecScale(ctx->ys, -1.0));
  PetscCall(MatMultAdd(ctx->Pjs, ctx->ys, ctx->rj, ctx->rj));
  PetscCall(VecScale(ctx->ys, -1.0));
  PetscCall(PCApply(ctx->amg, ctx->rj, ctx->xj));
  PetscCall(MatMult(ctx->Psj, ctx->xj, ctx->rs));
  PetscCall(VecScale(ctx->rs, -1.0));
  PetscCall(MatMultAdd(ctx->Z, ctx->rs, ctx->ys, ctx->ys));
  PetscCall(VecGetArrayWrite(z, &za));
  PetscCall(VecGetArrayRead(ctx->ys, &va));
  for (PetscInt i = 0; i < ctx->ns; i++) za[ctx->sidx[i]] = va[i];
  PetscCall(VecRestoreArrayRead(ctx->ys, &va));
  PetscCall(VecGetArrayRead(ctx->xj, &va));
  for (PetscInt i = 0; i < ctx->nj; i++) za[ctx->jidx[i]] = va[i];
  PetscCall(VecRestoreArrayRead(ctx->xj, &va));
  PetscCall(VecRestoreArrayWrite(z, &za));
  PetscFunctionReturn(0);
}

/* The multiplier block's P^-1: T = P_jj - P_js Z P_sj and its AMG hierarchy, formed unless samep (the configuration
   of the last set-up, whose P, T and hierarchy are kept). *ok: in, the set-up so far; out, and this one (the same on
   every rank). */
static PetscErrorCode MbsSchurAMGFormT(MbsSchurAMG *ctx, PC pc, const PetscScalar *q, PetscBool samep, PetscBool *ok)
{
  const MbsStepper st   = ctx->st;
  MPI_Comm         comm = PetscObjectComm((PetscObject)pc);

  PetscFunctionBegin;
  if (!samep) { /* T unchanged otherwise, and with it BoomerAMG's set-up below (a no-op for an unchanged operator) */
    PetscBool regular;
    PetscCall(MbsSchurAMGEliminate(ctx, &regular));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &regular, 1, MPIU_BOOL, MPI_LAND, comm));
    if (!regular) PetscCall(PetscInfo(pc, "Schur-AMG: a body's single-body constraint rows are dependent\n"));
    *ok = (PetscBool)(*ok && regular);
  }
  if (*ok) {
    PetscCall(MbsSchurAMGInnerSetUp(ctx->amg, ctx->T, &ctx->amg_fresh, ok));
    PetscCall(PetscInfo(pc, "Schur-AMG: C_h fitted with relative residual %g\n", (double)ctx->fit));
  }
  if (*ok) { /* all of it formed without failing: kept while the configuration is the same */
    if (!ctx->qP) PetscCall(PetscMalloc1(st->model->nq_ghosted, &ctx->qP));
    PetscCall(PetscArraycpy(ctx->qP, q, st->model->nq_ghosted));
    ctx->Pvalid = PETSC_TRUE;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchurAMGSetUp(PC pc)
{
  MbsSchurAMG       *ctx;
  MbsStepper         st;
  Mat                J;
  PetscBool          ok, first, samep;
  MatReuse           reuse;
  MPI_Comm           comm;
  const PetscScalar *q;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &ctx));
  st = ctx->st;
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCall(PCGetOperators(pc, NULL, &J));
  PetscCall(PetscLogEventBegin(MBS_SchurSetUp, pc, 0, 0, 0));
  PetscCall(PCSetFailedReason(pc, PC_NOERROR)); /* a PCSHELL keeps a failure until its set-up clears it */
  ctx->failed = PETSC_FALSE;
  first       = (PetscBool)!ctx->isP;
  if (first) PetscCall(MbsSchurAMGCreateLayout(ctx));
  reuse = first ? MAT_INITIAL_MATRIX : MAT_REUSE_MATRIX;
  {
    PetscObjectState nz;
    PetscInt64       id;
    PetscCall(MatGetNonzeroState(J, &nz));
    PetscCall(PetscObjectGetId((PetscObject)J, &id));
    if (first || (ctx->Jid && (ctx->Jid != id || ctx->Jnz != nz))) /* a new pattern (the same on every rank) */
      PetscCall(MbsSchurAMGCutBlocks(ctx, J));
    else if (ctx->Jid) {
      PetscCall(MbsSubMatMapCopy_Private(&ctx->sub[0], J, ctx->A10));
      PetscCall(MbsSubMatMapCopy_Private(&ctx->sub[1], J, ctx->A01));
      PetscCall(MbsSubMatMapCopy_Private(&ctx->sub[2], J, ctx->A11));
      if (ctx->axial) {
        PetscCall(MbsSubMatMapCopy_Private(&ctx->sub[3], J, ctx->A00));
        PetscCall(MbsSubMatMapCopy_Private(&ctx->sub[4], J, ctx->C0));
        PetscCall(MbsSubMatMapCopy_Private(&ctx->sub[5], J, ctx->B0));
      } else if (!ctx->bpos)
        PetscCall(MbsSchurAMGBlockMap(ctx, J));
    } else {
      PetscCall(MatCreateSubMatrix(J, ctx->isM, ctx->isP, MAT_REUSE_MATRIX, &ctx->A10));
      PetscCall(MatCreateSubMatrix(J, ctx->isP, ctx->isM, MAT_REUSE_MATRIX, &ctx->A01));
      PetscCall(MatCreateSubMatrix(J, ctx->isM, ctx->isM, MAT_REUSE_MATRIX, &ctx->A11));
      if (ctx->axial) {
        IS is0 = st->sys->is[ctx->mf[0]];
        PetscCall(MatCreateSubMatrix(J, ctx->isP, ctx->isP, MAT_REUSE_MATRIX, &ctx->A00));
        PetscCall(MatCreateSubMatrix(J, is0, ctx->isP, MAT_REUSE_MATRIX, &ctx->C0));
        PetscCall(MatCreateSubMatrix(J, ctx->isP, is0, MAT_REUSE_MATRIX, &ctx->B0));
      }
    }
  }
  /* P = (G M^-1/2)(G M^-1/2)^T at the step's start: that of the step the Jacobian was assembled in (a kept Jacobian
     keeps its configuration, qjac), so that a run restarted with its kept Jacobian rebuilds the same P */
  q = st->q0;
  if (st->reuse && st->jac_valid && st->qjac) {
    if (!ctx->qjac) PetscCall(PetscMalloc1(st->model->nq_ghosted, &ctx->qjac));
    PetscCall(MbsModelCoordinatesToLocal(st->model, st->qjac, ctx->qjac));
    q = ctx->qjac;
  }
  /* P, and T and BoomerAMG's hierarchy from it, depend on the configuration alone: the Newton iterations of one step
     (Newton's method proper refreshes the preconditioner at each) keep them; so do steps under a kept Jacobian */
  if (ctx->assembled)
    samep = PETSC_TRUE; /* no P: S~ is assembled instead */
  else
    samep = (PetscBool)(ctx->Pvalid && !memcmp(ctx->qP, q, st->model->nq_ghosted * sizeof(PetscReal)));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &samep, 1, MPIU_BOOL, MPI_LAND, comm));
  ctx->Pvalid = PETSC_FALSE;
  if (!samep) {
    PetscCall(MbsModelAssembleScaledG(st->model, q, reuse, &ctx->Gs));
    PetscCall(MatTranspose(ctx->Gs, reuse, &ctx->GsT)); /* MatMatTransposeMult's reuse fails on MPIAIJ (PETSc 3.18) */
    PetscCall(MatMatMult(ctx->Gs, ctx->GsT, reuse, PETSC_DEFAULT, &ctx->P));
  }
  if (first) {
    PetscCall(MatCreateVecs(ctx->A10, &ctx->xp, &ctx->xm));
    PetscCall(VecDuplicate(ctx->xp, &ctx->yp));
    PetscCall(VecDuplicate(ctx->xm, &ctx->tm));
    if (!ctx->assembled) PetscCall(MatCreateVecs(ctx->P, &ctx->w, &ctx->z));
  }
  /* every step below runs on every rank (the collective calls in the same order); a failure is agreed on */
  if (ctx->axial) {
    PetscCall(MbsSchurAMGAxial(ctx, q, &ok));
    if (!ok) PetscCall(PetscInfo(pc, "Schur-AMG: the factorization of A - B W C failed\n"));
  } else {
    PetscCall(MbsSchurAMGBlocks(ctx, J, &ok));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPIU_BOOL, MPI_LAND, comm));
    if (!ok) PetscCall(PetscInfo(pc, "Schur-AMG: a singular block of a body's coordinate fields\n"));
  }
  if (ctx->assembled) {
    if (ok) PetscCall(MbsSchurAMGAssembleS(ctx, &ok));
    if (!ok) PetscCall(PetscInfo(pc, "Schur-AMG: the factorization of D - C A~^-1 B failed\n"));
  } else {
    if (ok) {
      PetscCall(MbsSchurAMGFit(ctx, &ok));
      if (!ok) PetscCall(PetscInfo(pc, "Schur-AMG: the multiplier block's coefficient matrix C_h is singular\n"));
    }
    PetscCall(MbsSchurAMGFormT(ctx, pc, q, samep, &ok));
  }
  if (!ok) {
    ctx->failed = PETSC_TRUE;
    PetscCall(PCSetFailedReason(pc, PC_SUBPC_ERROR));
  }
  PetscCall(PetscLogEventEnd(MBS_SchurSetUp, pc, 0, 0, 0));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchurAMGApply(PC pc, Vec b, Vec x)
{
  MbsSchurAMG       *ctx;
  const PetscInt    *foff;
  const PetscScalar *ba, *ya;
  PetscScalar       *xa, *va;
  PetscInt           kc, km, nq, nc;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &ctx));
  if (ctx->failed) { /* KSP applies a PC whose set-up failed (on every rank alike) */
    PetscCall(VecSet(x, PETSC_INFINITY));
    PetscFunctionReturn(0);
  }
  foff = ctx->st->sys->foff;
  kc = ctx->kc, km = ctx->km, nq = ctx->nq, nc = ctx->nc;
  /* r_p into xp, r_m into tm */
  PetscCall(VecGetArrayRead(b, &ba));
  PetscCall(VecGetArrayWrite(ctx->xp, &va));
  for (PetscInt j = 0; j < kc; j++) PetscCall(PetscArraycpy(va + j * nq, ba + foff[ctx->cf[j]], nq));
  PetscCall(VecRestoreArrayWrite(ctx->xp, &va));
  PetscCall(VecGetArrayWrite(ctx->tm, &va));
  for (PetscInt a = 0; a < km; a++) PetscCall(PetscArraycpy(va + a * nc, ba + foff[ctx->mf[a]], nc));
  PetscCall(VecRestoreArrayWrite(ctx->tm, &va));
  PetscCall(VecRestoreArrayRead(b, &ba));
  /* y_p = A~^-1 r_p, t = r_m - C y_p */
  PetscCall(MbsSchurAMGPrimalSolve(ctx, ctx->xp, ctx->yp, PETSC_FALSE));
  PetscCall(VecScale(ctx->tm, -1.0));
  PetscCall(MatMultAdd(ctx->A10, ctx->yp, ctx->tm, ctx->tm));
  PetscCall(VecScale(ctx->tm, -1.0));
  /* x_m = S~^-1 t (assembled), or (C_h^-1 (x) P^-1) t: one V-cycle per constraint field */
  if (ctx->assembled)
    PetscCall(PCApply(ctx->amg, ctx->tm, ctx->xm));
  else
    PetscCall(VecSet(ctx->xm, 0.0));
  for (PetscInt bf = 0; !ctx->assembled && bf < km; bf++) {
    const PetscScalar *ta, *za;
    PetscCall(VecGetArrayRead(ctx->tm, &ta));
    PetscCall(VecGetArrayWrite(ctx->w, &va));
    PetscCall(PetscArraycpy(va, ta + bf * nc, nc));
    PetscCall(VecRestoreArrayWrite(ctx->w, &va));
    PetscCall(VecRestoreArrayRead(ctx->tm, &ta));
    PetscCall(MbsSchurAMGPSolve(ctx, ctx->w, ctx->z));
    PetscCall(VecGetArrayRead(ctx->z, &za));
    PetscCall(VecGetArray(ctx->xm, &va));
    for (PetscInt a = 0; a < km; a++) {
      const PetscReal c = ctx->Chinv[a * km + bf];
      for (PetscInt i = 0; i < nc; i++) va[a * nc + i] += c * za[i];
    }
    PetscCall(VecRestoreArray(ctx->xm, &va));
    PetscCall(VecRestoreArrayRead(ctx->z, &za));
  }
  /* x_p = y_p - A~^-1 B x_m */
  PetscCall(MatMult(ctx->A01, ctx->xm, ctx->xp));
  PetscCall(MbsSchurAMGPrimalSolve(ctx, ctx->xp, ctx->yp, PETSC_TRUE));
  PetscCall(VecGetArrayWrite(x, &xa));
  PetscCall(VecGetArrayRead(ctx->yp, &ya));
  for (PetscInt j = 0; j < kc; j++) PetscCall(PetscArraycpy(xa + foff[ctx->cf[j]], ya + j * nq, nq));
  PetscCall(VecRestoreArrayRead(ctx->yp, &ya));
  PetscCall(VecGetArrayRead(ctx->xm, &ya));
  for (PetscInt a = 0; a < km; a++) PetscCall(PetscArraycpy(xa + foff[ctx->mf[a]], ya + a * nc, nc));
  PetscCall(VecRestoreArrayRead(ctx->xm, &ya));
  PetscCall(VecRestoreArrayWrite(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchurAMGView(PC pc, PetscViewer viewer)
{
  MbsSchurAMG *ctx;
  PetscBool    isascii;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &ctx));
  PetscCall(PetscObjectTypeCompare((PetscObject)viewer, PETSCVIEWERASCII, &isascii));
  if (!isascii) PetscFunctionReturn(0);
  if (ctx->km) {
    const MbsSystem sys = ctx->st->sys;
    PetscCall(PetscViewerASCIIPrintf(viewer, "  %" PetscInt_FMT " coordinate fields (", ctx->kc));
    PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_FALSE));
    for (PetscInt j = 0; j < ctx->kc; j++)
      PetscCall(PetscViewerASCIIPrintf(viewer, "%s%s", j ? ", " : "", sys->name[ctx->cf[j]]));
    PetscCall(PetscViewerASCIIPrintf(viewer, "), %" PetscInt_FMT " constraint fields (", ctx->km));
    for (PetscInt a = 0; a < ctx->km; a++)
      PetscCall(PetscViewerASCIIPrintf(viewer, "%s%s", a ? ", " : "", sys->name[ctx->mf[a]]));
    PetscCall(PetscViewerASCIIPrintf(viewer, ")\n"));
    PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_TRUE));
  }
  if (ctx->assembled) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  multiplier block D - C A~^-1 B assembled, solved by:\n"));
    PetscCall(PetscViewerASCIIPushTab(viewer));
    PetscCall(PCView(ctx->amg, viewer));
    PetscCall(PetscViewerASCIIPopTab(viewer));
    PetscFunctionReturn(0);
  }
  if (ctx->km) {
    PetscCall(PetscViewerASCIIPrintf(
      viewer, "  multiplier block ~ C_h (x) G M^-1 G^T, C_h fitted (relative residual %.2g):\n", (double)ctx->fit));
    for (PetscInt a = 0; a < ctx->km; a++) {
      PetscCall(PetscViewerASCIIPrintf(viewer, "   "));
      PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_FALSE));
      for (PetscInt bf = 0; bf < ctx->km; bf++)
        PetscCall(PetscViewerASCIIPrintf(viewer, " %12.5e", (double)ctx->Ch[a * ctx->km + bf]));
      PetscCall(PetscViewerASCIIPrintf(viewer, "\n"));
      PetscCall(PetscViewerASCIIUseTabs(viewer, PETSC_TRUE));
    }
  }
  PetscCall(PetscViewerASCIIPrintf(viewer, "  G M^-1 G^T solved by:\n"));
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(PCView(ctx->amg, viewer));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  if (ctx->axial) {
    PetscCall(PetscViewerASCIIPrintf(viewer,
                                     "  primal block: A - B W C (the constraints' axial stiffness out, W = %g lambda "
                                     "kappa), solved by:\n",
                                     (double)ctx->rho));
    PetscCall(PetscViewerASCIIPushTab(viewer));
    PetscCall(PCView(ctx->prim, viewer));
    PetscCall(PetscViewerASCIIPopTab(viewer));
  } else
    PetscCall(PetscViewerASCIIPrintf(viewer, "  primal block: each body's blocks inverted\n"));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchurAMGDestroy(PC pc)
{
  MbsSchurAMG *ctx;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext(pc, &ctx));
  PetscCall(MbsSchurAMGClear(ctx));
  PetscCall(PCDestroy(&ctx->amg));
  PetscCall(PCDestroy(&ctx->prim));
  PetscCall(PetscFree(ctx));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchurAMGOptions(PetscOptionItems *PetscOptionsObject, PetscObject obj)
{
  MbsSchurAMG *ctx;

  PetscFunctionBegin;
  PetscCall(PCShellGetContext((PC)obj, &ctx));
  PetscCall(
    PetscOptionsBool("-mbs_schur_axial",
                     "Take the constraints' axial stiffness out of the primal block and solve that by sparse LU "
                     "(long chains under tension; schemes em, em-g and vi-a)",
                     "MbsPCSetSchurAMG_Private", ctx->axial, &ctx->axial, NULL));
  PetscCall(
    PetscOptionsBool("-mbs_schur_assembled",
                     "Assemble the multiplier block's Schur complement D - C A~^-1 B and solve it by sparse LU, "
                     "in place of C_h (x) G M^-1 G^T (rigid chains)",
                     "MbsPCSetSchurAMG_Private", ctx->assembled, &ctx->assembled, NULL));
  PetscFunctionReturn(0);
}

/* inner: the sparse LU of a block (A - B W C, or D - C A~^-1 B), a pivoting one: the stepper's KLU on one rank (a
   singular block is a failed preconditioner, src/stepper/klu.c), MUMPS on several, unless its options choose */
static PetscErrorCode MbsSchurAMGInnerLU(PC inner)
{
  const char *prefix;
  PetscBool   type, solver;
  PetscMPIInt size;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)inner), &size));
  PetscCall(PCGetOptionsPrefix(inner, &prefix));
  PetscCall(PetscOptionsHasName(((PetscObject)inner)->options, prefix, "-pc_type", &type));
  PetscCall(PetscOptionsHasName(((PetscObject)inner)->options, prefix, "-pc_factor_mat_solver_type", &solver));
  if (size == 1 && !type && !solver)
    PetscCall(MbsPCSetKLU_Private(inner));
  else {
    PetscCall(PCSetType(inner, PCLU));
    if (size > 1 && !solver) PetscCall(PCFactorSetMatSolverType(inner, MATSOLVERMUMPS));
  }
  PetscFunctionReturn(0);
}

/*
  Makes pc the Schur-AMG preconditioner of the stepper's Jacobian; the solver of T (G M^-1 G^T's joint part), or of
  the assembled S~ under -<prefix>mbs_schur_assembled, is a PC with the prefix <prefix>mbs_schur_: BoomerAMG on wide
  body graphs, sparse LU on narrow ones (and for S~), unless -<prefix>mbs_schur_pc_type says otherwise; that of A'
  under -<prefix>mbs_schur_axial has the prefix <prefix>mbs_schur_primal_.
*/
PetscErrorCode MbsPCSetSchurAMG_Private(PC pc, MbsStepper st)
{
  MbsSchurAMG *ctx;
  const char  *prefix;
  PetscMPIInt  size;
  MPI_Comm     comm = PetscObjectComm((PetscObject)pc);

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PCSetType(pc, PCSHELL));
  PetscCall(PetscNew(&ctx));
  ctx->st = st;
  PetscCall(PCShellSetContext(pc, ctx)); /* the PC owns it from here: an error below leaves nothing behind */
  PetscCall(PCShellSetDestroy(pc, MbsSchurAMGDestroy));
  PetscCall(PCGetOptionsPrefix(pc, &prefix));
  /* its own block of options, not the PC's: -help has printed the PC's already (the stepper's KSP set it from the
     options before it became this shell), and would not print these under it */
  PetscOptionsBegin(comm, prefix, "Schur-AMG preconditioner (gglmbs)", "PC");
  {
    PetscErrorCode ierr = MbsSchurAMGOptions(PetscOptionsObject, (PetscObject)pc);
    if (ierr) (void)PetscOptionsEnd_Private(PetscOptionsObject);
    PetscCall(ierr);
  }
  PetscOptionsEnd();
  PetscCheck(!(ctx->axial && ctx->assembled), comm, PETSC_ERR_ARG_INCOMP,
             "-%smbs_schur_axial and -%smbs_schur_assembled exclude each other (A - B W C is not block diagonal)",
             prefix ? prefix : "", prefix ? prefix : "");
  ctx->rho = st->ops->schur_axial;
  if (ctx->axial && ctx->rho == 0) {
    PetscReal w;
    PetscCall(MbsStepperGetConstraintForceWeight(st, &w));
    SETERRQ(
      comm, PETSC_ERR_SUP,
      "-%smbs_schur_axial: the axial correction is derived for the schemes whose lambda g'' is B W C for one W (em, "
      "em-g, vi-a), not %s%s",
      prefix ? prefix : "", st->type,
      w == 0 ? ": lambda's forces act at q_n, so its primal block holds no lambda g'' to take out" : "");
  }
  PetscCall(PCCreate(PetscObjectComm((PetscObject)pc), &ctx->amg));
  ctx->amg_fresh = PETSC_TRUE;
  PetscCall(PCSetOptionsPrefix(ctx->amg, prefix));
  PetscCall(PCAppendOptionsPrefix(ctx->amg, "mbs_schur_"));
  { /* wide graphs (nets, meshes): BoomerAMG (GAMG's smoothed aggregation assumes a constant near-null vector, which
       P's rows of either sign, g and -g being the same constraint, do not have: its V-cycle amplified the error on a
       net); narrow graphs (chains, rigid chains): T is banded and its sparse LU costs O(n), while AMG failed on rigid
       chains (a link's rotation couples its two joints with the sign reversed) */
    PetscInt  width;
    PetscBool hypre;
    PetscCall(MbsModelGetGraphWidth(st->model, &width));
    PetscCall(PetscHasExternalPackage("hypre", &hypre));
    if (width >= MBS_WIDE_GRAPH && !ctx->assembled) {
      PetscCall(PCSetType(ctx->amg, hypre ? PCHYPRE : PCGAMG));
      if (hypre) { /* BoomerAMG's l1-Gauss-Seidel smoother: the same GMRES iterations as PETSc's default (hybrid
                      symmetric Gauss-Seidel) with a cheaper cycle (docs/solvers.md). PCHYPRE takes its smoother only
                      from an options database: this default comes from a private one, read first, so the user's
                      options, read after it from the global database, which the library does not write, override it */
        PetscOptions defaults;
        char         name[256];
        PetscCall(PetscOptionsCreate(&defaults));
        PetscCall(
          PetscSNPrintf(name, sizeof(name), "-%smbs_schur_pc_hypre_boomeramg_relax_type_all", prefix ? prefix : ""));
        PetscCall(PetscOptionsSetValue(defaults, name, "l1-Gauss-Seidel"));
        PetscCall(PetscObjectSetOptions((PetscObject)ctx->amg, defaults));
        PetscCall(PCSetFromOptions(ctx->amg));
        PetscCall(PetscObjectSetOptions((PetscObject)ctx->amg, NULL));
        PetscCall(PetscOptionsDestroy(&defaults));
      }
    } else {
      if (ctx->assembled)
        PetscCall(MbsSchurAMGInnerLU(ctx->amg)); /* S~ is indefinite: a pivoting LU */
      else {
        PetscCall(PCSetType(ctx->amg, PCLU));
        if (size > 1) PetscCall(PCFactorSetMatSolverType(ctx->amg, MATSOLVERMUMPS));
      }
    }
  }
  PetscCall(PCSetFromOptions(ctx->amg));
  if (ctx->axial) {
    PetscCall(PCCreate(comm, &ctx->prim));
    PetscCall(PCSetOptionsPrefix(ctx->prim, prefix));
    PetscCall(PCAppendOptionsPrefix(ctx->prim, "mbs_schur_primal_"));
    PetscCall(MbsSchurAMGInnerLU(ctx->prim));
    PetscCall(PCSetFromOptions(ctx->prim));
    ctx->prim_fresh = PETSC_TRUE;
  }
  PetscCall(PCShellSetName(
    pc, ctx->axial       ? "gglmbs Schur-AMG (A - B W C factored, the multipliers by C_h (x) G M^-1 G^T)"
        : ctx->assembled ? "gglmbs Schur-AMG (each body's blocks inverted, D - C A~^-1 B factored)"
                         : "gglmbs Schur-AMG (each body's blocks inverted, the multipliers by C_h (x) G M^-1 G^T)"));
  PetscCall(PCShellSetSetUp(pc, MbsSchurAMGSetUp));
  PetscCall(PCShellSetApply(pc, MbsSchurAMGApply));
  PetscCall(PCShellSetView(pc, MbsSchurAMGView));
  PetscFunctionReturn(0);
}

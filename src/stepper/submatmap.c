/*
  Where the entries of a submatrix S = J(isr, isc) sit in its parent J's own value arrays, so that the preconditioners
  that cut blocks out of the Jacobian (the Schur-AMG's A10, A01, A11; the interface LU's interior blocks) copy the
  values of later Jacobians of the same pattern instead of cutting them out again (MatCreateSubMatrix() with
  MAT_REUSE_MATRIX searches every row of J: 0.1 s a set-up on a chain of 10^5 particles).

  J and S are SeqAIJ, or both MPIAIJ (S as MatCreateSubMatrix() makes it: J's local rows, isc's column ownership; or
  a matrix whose pattern J's holds, isr and isc the identity of J's rows and columns: a sum of it and another). An
  entry of S's diagonal block sits in J's diagonal block; one of its off-diagonal block in J's off-diagonal block, whose
  global column is translated to J's through one scatter of J's column numbers on S's column layout.
*/
#include "stepper/stepperimpl.h"

/* A's diagonal and off-diagonal blocks and the global columns of the latter's (Ao NULL for SeqAIJ); *ok = PETSC_FALSE
   for another type (a subtype that keeps its own copy of the values, say) */
PetscErrorCode MbsAIJSplit_Private(Mat A, Mat *Ad, Mat *Ao, const PetscInt **garray, PetscBool *ok)
{
  PetscBool seq, mpi;

  PetscFunctionBegin;
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATSEQAIJ, &seq));
  PetscCall(PetscObjectTypeCompare((PetscObject)A, MATMPIAIJ, &mpi));
  *Ad = *Ao = NULL;
  *garray   = NULL;
  *ok       = (PetscBool)(seq || mpi);
  if (seq) *Ad = A;
  if (mpi) PetscCall(MatMPIAIJGetSeqAIJ(A, Ad, Ao, garray));
  PetscFunctionReturn(0);
}

/* The positions in J's SeqAIJ block Jb of the entries of S's block Sb (S's row r is Jb's row rows[r] - roff, S's column
   c is Jb's column colJ[c], negative for none), found in Jb's rows by MbsCSRFind(); *found = PETSC_FALSE if one is
   missing */
static PetscErrorCode MbsSubMatMapBlock(Mat Jb, Mat Sb, const PetscInt rows[], PetscInt roff, const PetscInt colJ[],
                                        PetscInt *n, PetscInt **pos, PetscBool *found)
{
  const PetscInt *jia, *jja, *sia, *sja;
  PetscInt        nj, m;
  PetscBool       done;

  PetscFunctionBegin;
  PetscCall(MatGetRowIJ(Jb, 0, PETSC_FALSE, PETSC_FALSE, &nj, &jia, &jja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "no row structure of the parent matrix's block");
  PetscCall(MatGetRowIJ(Sb, 0, PETSC_FALSE, PETSC_FALSE, &m, &sia, &sja, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_SUP, "no row structure of a submatrix's block");
  *n = sia[m];
  PetscCall(PetscMalloc1(sia[m] + 1, pos));
  for (PetscInt r = 0; r < m; r++) {
    const PetscInt jr = rows[r] - roff;
    for (PetscInt k = sia[r]; k < sia[r + 1]; k++) {
      const PetscInt c = colJ[sja[k]];
      (*pos)[k]        = -1;
      if (c >= 0) PetscCall(MbsCSRFind(jia, jja, jr, c, &(*pos)[k]));
      if ((*pos)[k] < 0) *found = PETSC_FALSE;
    }
  }
  PetscCall(MatRestoreRowIJ(Sb, 0, PETSC_FALSE, PETSC_FALSE, &m, &sia, &sja, &done));
  PetscCall(MatRestoreRowIJ(Jb, 0, PETSC_FALSE, PETSC_FALSE, &nj, &jia, &jja, &done));
  PetscFunctionReturn(0);
}

/* The map of S = J(isr, isc) (see above); *ok = PETSC_FALSE (on this rank: the caller agrees over
   the ranks) for another matrix type or an entry not found, and the map is then empty. Collective on J when it is
   MPIAIJ. */
PetscErrorCode MbsSubMatMapCreate_Private(Mat J, IS isr, IS isc, Mat S, MbsSubMatMap *map, PetscBool *ok)
{
  Mat             Jd, Jo, Sd, So;
  const PetscInt *gJ, *gS, *rows, *cols;
  PetscInt        rstart, cstart, nloc, *colJ;
  PetscBool       okJ, okS;

  PetscFunctionBegin;
  PetscCall(MbsSubMatMapReset_Private(map));
  PetscCall(MbsAIJSplit_Private(J, &Jd, &Jo, &gJ, &okJ));
  PetscCall(MbsAIJSplit_Private(S, &Sd, &So, &gS, &okS));
  *ok = (PetscBool)(okJ && okS && (!Jo) == (!So));
  if (!*ok) PetscFunctionReturn(0);
  PetscCall(MatGetOwnershipRange(J, &rstart, NULL));
  PetscCall(MatGetOwnershipRangeColumn(J, &cstart, NULL));
  PetscCall(ISGetIndices(isr, &rows));
  PetscCall(ISGetIndices(isc, &cols));
  PetscCall(ISGetLocalSize(isc, &nloc));
  /* column c of S's diagonal block is isc's local entry c, a column J owns here */
  PetscCall(PetscMalloc1(nloc + 1, &colJ));
  for (PetscInt c = 0; c < nloc; c++) colJ[c] = cols[c] - cstart;
  PetscCall(MbsSubMatMapBlock(Jd, Sd, rows, rstart, colJ, &map->n[0], &map->pos[0], ok));
  PetscCall(PetscFree(colJ));
  if (So) { /* the global columns of S's off-diagonal block, as J's columns, as positions in J's off-diagonal block */
    Vec                v, lv;
    IS                 from;
    VecScatter         sct;
    PetscScalar       *va;
    const PetscScalar *la;
    PetscInt           nso, njo;
    PetscCall(MatGetLocalSize(So, NULL, &nso));
    PetscCall(MatGetLocalSize(Jo, NULL, &njo));
    PetscCall(MatCreateVecs(S, &v, NULL)); /* S's column layout, holding J's global column of each */
    PetscCall(VecGetArrayWrite(v, &va));
    for (PetscInt i = 0; i < nloc; i++) va[i] = (PetscScalar)cols[i];
    PetscCall(VecRestoreArrayWrite(v, &va));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, nso, &lv));
    PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nso, gS, PETSC_USE_POINTER, &from));
    PetscCall(VecScatterCreate(v, from, lv, NULL, &sct));
    PetscCall(VecScatterBegin(sct, v, lv, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(sct, v, lv, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(PetscMalloc1(nso + 1, &colJ));
    PetscCall(VecGetArrayRead(lv, &la));
    for (PetscInt c = 0; c < nso; c++) PetscCall(PetscFindInt((PetscInt)PetscRealPart(la[c]), njo, gJ, &colJ[c]));
    PetscCall(VecRestoreArrayRead(lv, &la));
    PetscCall(MbsSubMatMapBlock(Jo, So, rows, rstart, colJ, &map->n[1], &map->pos[1], ok));
    PetscCall(PetscFree(colJ));
    PetscCall(VecScatterDestroy(&sct));
    PetscCall(ISDestroy(&from));
    PetscCall(VecDestroy(&lv));
    PetscCall(VecDestroy(&v));
  }
  PetscCall(ISRestoreIndices(isr, &rows));
  PetscCall(ISRestoreIndices(isc, &cols));
  if (!*ok) PetscCall(MbsSubMatMapReset_Private(map));
  PetscFunctionReturn(0);
}

/* Moves values between J and S through the map: S's from J's (add = PETSC_FALSE), or J's at S's entries += alpha S's
   (add = PETSC_TRUE). The source is only read, so its state does not rise. */
static PetscErrorCode MbsSubMatMapMove(const MbsSubMatMap *map, Mat J, Mat S, PetscBool add, PetscScalar alpha)
{
  Mat             Jb[2], Sb[2];
  const PetscInt *g;
  PetscBool       ok;

  PetscFunctionBegin;
  PetscCall(MbsAIJSplit_Private(J, &Jb[0], &Jb[1], &g, &ok));
  PetscCall(MbsAIJSplit_Private(S, &Sb[0], &Sb[1], &g, &ok));
  for (int part = 0; part < (Sb[1] ? 2 : 1); part++) {
    const PetscInt    *pos  = map->pos[part];
    Mat                from = add ? Sb[part] : Jb[part], to = add ? Jb[part] : Sb[part];
    const PetscScalar *fa;
    PetscScalar       *ta;
    PetscCall(MatSeqAIJGetArrayRead(from, &fa));
    PetscCall(MatSeqAIJGetArray(to, &ta));
    if (add)
      for (PetscInt k = 0; k < map->n[part]; k++) ta[pos[k]] += alpha * fa[k];
    else
      for (PetscInt k = 0; k < map->n[part]; k++) ta[k] = fa[pos[k]];
    PetscCall(MatSeqAIJRestoreArray(to, &ta));
    PetscCall(MatSeqAIJRestoreArrayRead(from, &fa));
  }
  if (Sb[1]) PetscCall(PetscObjectStateIncrease((PetscObject)(add ? J : S))); /* its blocks' states rose */
  PetscFunctionReturn(0);
}

/* S's values from J's (of the pattern the map was made for) */
PetscErrorCode MbsSubMatMapCopy_Private(const MbsSubMatMap *map, Mat J, Mat S)
{
  PetscFunctionBegin;
  PetscCall(MbsSubMatMapMove(map, J, S, PETSC_FALSE, 0.0));
  PetscFunctionReturn(0);
}

/* J's values at S's entries += alpha S's: the sum of two matrices whose patterns are nested (J's holds S's), the map
   made with J as the parent and the identity of its rows and columns as isr, isc (MatAXPY() with SUBSET_NONZERO_PATTERN
   inserts row by row: 0.1 s per sum on a chain of 10^5 particles) */
PetscErrorCode MbsSubMatMapAddTo_Private(const MbsSubMatMap *map, Mat S, PetscScalar alpha, Mat J)
{
  PetscFunctionBegin;
  PetscCall(MbsSubMatMapMove(map, J, S, PETSC_TRUE, alpha));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSubMatMapReset_Private(MbsSubMatMap *map)
{
  PetscFunctionBegin;
  for (int part = 0; part < 2; part++) {
    PetscCall(PetscFree(map->pos[part]));
    map->n[part] = 0;
  }
  PetscFunctionReturn(0);
}

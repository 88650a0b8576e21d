#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gglmbs/elements/vec3.h>
#include "quadrow.h"

static int IsRigid(int nblocks)
{
  return nblocks == 4;
}

static void RowInit(MbsElemQuadRow *row)
{
  row->nbil = row->nlin = 0;
  row->c0               = 0.0;
}

static void RowBilinear(MbsElemQuadRow *row, int i, int j, double coef)
{
  if (coef == 0.0) return;
  row->bi[row->nbil]      = i;
  row->bj[row->nbil]      = j;
  row->bcoef[row->nbil++] = coef;
}

static void RowLinear(MbsElemQuadRow *row, int k, double s, const double v[3])
{
  if (s == 0.0) return;
  row->lk[row->nlin] = k;
  for (int l = 0; l < 3; l++) row->lvec[row->nlin][l] = s * v[l];
  row->nlin++;
}

void MbsElemQuadRowVectors(const MbsElemData *e, const double alpha[3], const double beta[3], MbsElemQuadRow *row)
{
  const int na = e->nblocks_a, rigid_a = IsRigid(e->nblocks_a), rigid_b = IsRigid(e->nblocks_b);

  RowInit(row);
  if (rigid_a && rigid_b) {
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) RowBilinear(row, 1 + i, na + 1 + j, alpha[i] * beta[j]);
  } else if (rigid_a) {
    for (int i = 0; i < 3; i++) RowLinear(row, 1 + i, alpha[i], beta);
  } else if (rigid_b) {
    for (int j = 0; j < 3; j++) RowLinear(row, na + 1 + j, beta[j], alpha);
  } else {
    row->c0 = MbsVec3Dot(alpha, beta);
  }
}

/* d . v with v the vector vec carried by the body whose director blocks start at block `first` (rigid), or the
   constant world vector vec */
static void OffsetRow(const MbsElemData *e, int rigid, int first, const double vec[3], MbsElemQuadRow *row)
{
  const int nblocks = e->nblocks_a + e->nblocks_b;
  double    w[MBS_ELEM_MAX_BLOCKS], c[3];

  MbsElemPointDifference(e, w, c);
  RowInit(row);
  if (rigid) {
    for (int j = 0; j < nblocks; j++)
      for (int m = 0; m < 3; m++) RowBilinear(row, j, first + m, w[j] * vec[m]);
    for (int m = 0; m < 3; m++) RowLinear(row, first + m, vec[m], c);
  } else {
    for (int j = 0; j < nblocks; j++) RowLinear(row, j, w[j], vec);
    row->c0 = MbsVec3Dot(c, vec);
  }
}

void MbsElemQuadRowOffset(const MbsElemData *e, const double beta[3], MbsElemQuadRow *row)
{
  OffsetRow(e, IsRigid(e->nblocks_b), e->nblocks_a + 1, beta, row);
}

void MbsElemQuadRowOffsetA(const MbsElemData *e, const double alpha[3], MbsElemQuadRow *row)
{
  OffsetRow(e, IsRigid(e->nblocks_a), 1, alpha, row);
}

void MbsElemQuadRowScale(MbsElemQuadRow *row, double s)
{
  for (int t = 0; t < row->nbil; t++) row->bcoef[t] *= s;
  for (int t = 0; t < row->nlin; t++)
    for (int l = 0; l < 3; l++) row->lvec[t][l] *= s;
  row->c0 *= s;
}

void MbsElemQuadRowAxpy(MbsElemQuadRow *row, double s, const MbsElemQuadRow *x)
{
  for (int t = 0; t < x->nbil; t++) RowBilinear(row, x->bi[t], x->bj[t], s * x->bcoef[t]);
  for (int t = 0; t < x->nlin; t++) RowLinear(row, x->lk[t], s, x->lvec[t]);
  row->c0 += s * x->c0;
}

void MbsElemQuadRowPoint(const MbsElemData *e, int l, MbsElemQuadRow *row)
{
  const int nblocks = e->nblocks_a + e->nblocks_b;
  double    w[MBS_ELEM_MAX_BLOCKS], c[3], unit[3] = {0, 0, 0};

  MbsElemPointDifference(e, w, c);
  RowInit(row);
  unit[l] = 1.0;
  for (int j = 0; j < nblocks; j++) RowLinear(row, j, w[j], unit);
  row->c0 = c[l];
}

void MbsElemQuadRowsEval(int nrows, const MbsElemQuadRow *rows, int nq, const double *q, double *g, double *G)
{
  if (G) memset(G, 0, sizeof(double) * (size_t)(nrows * nq));
  for (int k = 0; k < nrows; k++) {
    const MbsElemQuadRow *r   = &rows[k];
    double               *row = G ? &G[k * nq] : NULL;
    double                v   = r->c0;

    for (int t = 0; t < r->nbil; t++) {
      const double *qi = &q[3 * r->bi[t]], *qj = &q[3 * r->bj[t]], a = r->bcoef[t];
      v += a * MbsVec3Dot(qi, qj);
      if (row)
        for (int l = 0; l < 3; l++) {
          row[3 * r->bi[t] + l] += a * qj[l];
          row[3 * r->bj[t] + l] += a * qi[l];
        }
    }
    for (int t = 0; t < r->nlin; t++) {
      v += MbsVec3Dot(r->lvec[t], &q[3 * r->lk[t]]);
      if (row)
        for (int l = 0; l < 3; l++) row[3 * r->lk[t] + l] += r->lvec[t][l];
    }
    g[k] = v;
  }
}

void MbsElemQuadRowsHessian(int nrows, const MbsElemQuadRow *rows, int nq, double *H)
{
  memset(H, 0, sizeof(double) * (size_t)(nrows * nq * nq));
  for (int k = 0; k < nrows; k++) {
    double *Hk = &H[k * nq * nq];
    for (int t = 0; t < rows[k].nbil; t++) {
      const int i = 3 * rows[k].bi[t], j = 3 * rows[k].bj[t];
      for (int l = 0; l < 3; l++) {
        Hk[(i + l) * nq + j + l] += rows[k].bcoef[t];
        Hk[(j + l) * nq + i + l] += rows[k].bcoef[t];
      }
    }
  }
}

void MbsElemQuadRowsHessianMult(int nrows, const MbsElemQuadRow *rows, int nq, const double *mu, const double *w,
                                double *out)
{
  memset(out, 0, sizeof(double) * (size_t)nq);
  for (int k = 0; k < nrows; k++) {
    for (int t = 0; t < rows[k].nbil; t++) {
      const int    i = 3 * rows[k].bi[t], j = 3 * rows[k].bj[t];
      const double a = mu[k] * rows[k].bcoef[t];
      for (int l = 0; l < 3; l++) {
        out[i + l] += a * w[j + l];
        out[j + l] += a * w[i + l];
      }
    }
  }
}

void MbsElemFrameInBody(const MbsElemPlacement *p, const double E[3][3], double frame[3][3])
{
  for (int k = 0; k < 3; k++)
    for (int i = 0; i < 3; i++) frame[k][i] = MbsVec3Dot(p->D[i], E[k]);
}

void MbsElemPlacementVector(const MbsElemPlacement *p, const double v[3], double w[3])
{
  for (int l = 0; l < 3; l++) w[l] = v[0] * p->D[0][l] + v[1] * p->D[1][l] + v[2] * p->D[2][l];
}

void MbsElemFrameFromAxis(const double n[3], double E[3][3])
{
  const double norm = MbsVec3Norm(n);
  double       t[3] = {0, 0, 0}, len;
  int          k    = 0;

  for (int l = 0; l < 3; l++) E[2][l] = n[l] / norm;
  for (int i = 1; i < 3; i++)
    if (fabs(E[2][i]) < fabs(E[2][k])) k = i;
  t[k] = 1.0;
  MbsVec3Cross(E[2], t, E[0]);
  len = MbsVec3Norm(E[0]);
  for (int l = 0; l < 3; l++) E[0][l] /= len;
  MbsVec3Cross(E[2], E[0], E[1]);
}

int MbsElemUnitAxis(double n[3], const char title[], const char what[], char *error, size_t len)
{
  const double norm = MbsVec3Norm(n);

  if (!(norm > 0 && isnormal(norm))) {
    snprintf(error, len, "%s: %s must be a non-zero finite vector", title, what);
    return 1;
  }
  for (int i = 0; i < 3; i++) n[i] /= norm;
  return 0;
}

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "quadrow.h"

/*
  Geometrically exact beam element in director form (docs/beams.md): a linear element between two nodes that are
  rigid bodies, q = (phi_A, d1_A, d2_A, d3_A, phi_B, d1_B, d2_B, d3_B), d3 along the centre line. With the centre line
  and the directors interpolated linearly and the strains taken at the element's midpoint (one-point integration,
  which keeps thin beams from locking), phi' = (phi_B - phi_A)/L, d_i = (d_iA + d_iB)/2, d_i' = (d_iB - d_iA)/L:

    Gamma_i = d_i . phi'                       (i = 1, 2: shear; 3: stretch, 1 when unstrained)
    K_1 = 1/2 (d3' . d2 - d2' . d3) = (d2A . d3B - d3A . d2B) / (2L)
    K_2 = 1/2 (d1' . d3 - d3' . d1) = (d3A . d1B - d1A . d3B) / (2L)     (bending about d1, d2; torsion)
    K_3 = 1/2 (d2' . d1 - d1' . d2) = (d1A . d2B - d2A . d1B) / (2L)

  the strains of the Simo-Reissner rod in the director formulation (Betsch & Steinmann 2002). Each is bilinear in
  the nodes' coordinates: six quadratic rows (quadrow.h). The strain energy is

    V = L/2 sum_a C_a (eps_a - eps0_a)^2,  C = (GA1, GA2, EA, EI1, EI2, GJ),  eps = (Gamma_1, Gamma_2, Gamma_3, K_1..3)

  with eps0 the strains of the initial configuration, which is stress free. Since the strains are quadratic, the
  midpoint gradient of each is its exact discrete gradient, and the secant of the quadratic energy in eps is its value
  at the mean strain:

    dg = L sum_a C_a ((eps_a(q0) + eps_a(q1))/2 - eps0_a) D eps_a(qm),   dg . (q1 - q0) = V(q1) - V(q0)

  exactly (EM conserves energy and, the strains being invariant under rigid motions, the momentum maps).
*/

#define MBS_BEAM_NSTRAIN 6

/* (e_j^A . e_k^B - e_k^A . e_j^B) / (2L) with the element frame at each node e_j = sum_m frame[j][m] d_m (frames
   numbered from 0; a's directors are blocks 1..3, b's 5..7): nine director products */
static void BeamRowDirectorPair(const MbsElemData *e, int j, int k, MbsElemQuadRow *row)
{
  const double c = 0.5 / e->length;

  memset(row, 0, sizeof(*row));
  for (int m = 0; m < 3; m++)
    for (int n = 0; n < 3; n++) {
      row->bi[row->nbil] = 1 + m, row->bj[row->nbil] = 5 + n;
      row->bcoef[row->nbil++] = c * (e->frame_a[j][m] * e->frame_b[k][n] - e->frame_a[k][m] * e->frame_b[j][n]);
    }
}

/* The six strains as quadratic rows, with the element's frame e_i carried by each node (frame_a, frame_b):
   Gamma_i = (e_i^A + e_i^B) . (phi_B - phi_A) / (2L), K_1 = (e_2^A . e_3^B - e_3^A . e_2^B) / (2L), and cyclically */
static void BeamRows(const MbsElemData *e, MbsElemQuadRow rows[MBS_BEAM_NSTRAIN])
{
  const double c = 0.5 / e->length;

  for (int i = 0; i < 3; i++) {
    MbsElemQuadRow *row = &rows[i];
    memset(row, 0, sizeof(*row));
    for (int m = 0; m < 3; m++) {
      const double ca = c * e->frame_a[i][m], cb = c * e->frame_b[i][m];
      row->bi[row->nbil] = 1 + m, row->bj[row->nbil] = 4, row->bcoef[row->nbil++] = ca;
      row->bi[row->nbil] = 1 + m, row->bj[row->nbil] = 0, row->bcoef[row->nbil++] = -ca;
      row->bi[row->nbil] = 5 + m, row->bj[row->nbil] = 4, row->bcoef[row->nbil++] = cb;
      row->bi[row->nbil] = 5 + m, row->bj[row->nbil] = 0, row->bcoef[row->nbil++] = -cb;
    }
  }
  BeamRowDirectorPair(e, 1, 2, &rows[3]);
  BeamRowDirectorPair(e, 2, 0, &rows[4]);
  BeamRowDirectorPair(e, 0, 1, &rows[5]);
}

static void BeamStrains(const MbsElemData *e, const double *q, double eps[MBS_BEAM_NSTRAIN], double *G)
{
  MbsElemQuadRow rows[MBS_BEAM_NSTRAIN];
  BeamRows(e, rows);
  MbsElemQuadRowsEval(MBS_BEAM_NSTRAIN, rows, MbsElemNq(e), q, eps, G);
}

static double BeamEnergy(const MbsElemData *e, const double *q)
{
  double eps[MBS_BEAM_NSTRAIN], V = 0;

  BeamStrains(e, q, eps, NULL);
  for (int a = 0; a < MBS_BEAM_NSTRAIN; a++) V += e->beam_stiffness[a] * pow(eps[a] - e->beam_strain0[a], 2);
  return 0.5 * e->length * V;
}

static void BeamGradient(const MbsElemData *e, const double *q, double *dV)
{
  const int nq = MbsElemNq(e);
  double    eps[MBS_BEAM_NSTRAIN], G[MBS_BEAM_NSTRAIN * MBS_ELEM_MAX_NQ];

  BeamStrains(e, q, eps, G);
  for (int i = 0; i < nq; i++) {
    dV[i] = 0;
    for (int a = 0; a < MBS_BEAM_NSTRAIN; a++)
      dV[i] += e->length * e->beam_stiffness[a] * (eps[a] - e->beam_strain0[a]) * G[a * nq + i];
  }
}

/* L sum_a C_a (D eps_a D eps_a^T + (eps_a - eps0_a) H_a) */
static void BeamHessian(const MbsElemData *e, const double *q, double *d2V)
{
  const int      nq = MbsElemNq(e);
  MbsElemQuadRow rows[MBS_BEAM_NSTRAIN];
  double         eps[MBS_BEAM_NSTRAIN], G[MBS_BEAM_NSTRAIN * MBS_ELEM_MAX_NQ];
  double         Hloc[MBS_BEAM_NSTRAIN * MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];

  BeamRows(e, rows);
  MbsElemQuadRowsEval(MBS_BEAM_NSTRAIN, rows, nq, q, eps, G);
  MbsElemQuadRowsHessian(MBS_BEAM_NSTRAIN, rows, nq, Hloc);
  for (int i = 0; i < nq; i++)
    for (int j = 0; j < nq; j++) {
      double s = 0;
      for (int a = 0; a < MBS_BEAM_NSTRAIN; a++)
        s += e->beam_stiffness[a] *
             (G[a * nq + i] * G[a * nq + j] + (eps[a] - e->beam_strain0[a]) * Hloc[((size_t)a * nq + i) * nq + j]);
      d2V[i * nq + j] = e->length * s;
    }
}

/* dg above, and ddg = d dg / d q1 = L sum_a C_a (1/2 D eps_a(qm) D eps_a(q1)^T + 1/2 (mean eps_a - eps0_a) H_a) */
static void BeamDiscreteGradient(const MbsElemData *e, const double *q0, const double *q1, double *dg, double *ddg)
{
  const int      nq = MbsElemNq(e);
  MbsElemQuadRow rows[MBS_BEAM_NSTRAIN];
  double qm[MBS_ELEM_MAX_NQ], e0[MBS_BEAM_NSTRAIN], e1[MBS_BEAM_NSTRAIN], em[MBS_BEAM_NSTRAIN], s[MBS_BEAM_NSTRAIN];
  double Gm[MBS_BEAM_NSTRAIN * MBS_ELEM_MAX_NQ], G1[MBS_BEAM_NSTRAIN * MBS_ELEM_MAX_NQ];

  BeamRows(e, rows);
  for (int i = 0; i < nq; i++) qm[i] = 0.5 * (q0[i] + q1[i]);
  MbsElemQuadRowsEval(MBS_BEAM_NSTRAIN, rows, nq, q0, e0, NULL);
  MbsElemQuadRowsEval(MBS_BEAM_NSTRAIN, rows, nq, q1, e1, ddg ? G1 : NULL);
  MbsElemQuadRowsEval(MBS_BEAM_NSTRAIN, rows, nq, qm, em, Gm);
  for (int a = 0; a < MBS_BEAM_NSTRAIN; a++)
    s[a] = e->length * e->beam_stiffness[a] * (0.5 * (e0[a] + e1[a]) - e->beam_strain0[a]);
  for (int i = 0; i < nq; i++) {
    dg[i] = 0;
    for (int a = 0; a < MBS_BEAM_NSTRAIN; a++) dg[i] += s[a] * Gm[a * nq + i];
  }
  if (!ddg) return;
  {
    double H[MBS_BEAM_NSTRAIN * MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];
    MbsElemQuadRowsHessian(MBS_BEAM_NSTRAIN, rows, nq, H);
    for (int i = 0; i < nq; i++)
      for (int j = 0; j < nq; j++) {
        double v = 0;
        for (int a = 0; a < MBS_BEAM_NSTRAIN; a++)
          v += 0.5 * (e->length * e->beam_stiffness[a] * Gm[a * nq + i] * G1[a * nq + j] +
                      s[a] * H[((size_t)a * nq + i) * nq + j]);
        ddg[i * nq + j] = v;
      }
  }
}

/* the stress resultants C_a (eps_a - eps0_a): shear forces along d1, d2, axial force, bending moments about d1, d2,
   torque, at the element's midpoint */
static void BeamResultants(const MbsElemData *e, const double *q, double r[6])
{
  double eps[MBS_BEAM_NSTRAIN];

  BeamStrains(e, q, eps, NULL);
  for (int a = 0; a < MBS_BEAM_NSTRAIN; a++) r[a] = e->beam_stiffness[a] * (eps[a] - e->beam_strain0[a]);
}

const MbsElemKernel MbsElemKernelBeam = {
  .resultants        = BeamResultants,
  .name              = "beam",
  .ncon              = 0,
  .energy            = BeamEnergy,
  .gradient          = BeamGradient,
  .hessian           = BeamHessian,
  .discrete_gradient = BeamDiscreteGradient,
};

/* The element length (default: the nodes' initial distance) and the strains of the initial configuration, which is
   stress free; both nodes rigid bodies, joined at their centres */
static int BeamComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error, size_t len)
{
  static const char *const names[MBS_BEAM_NSTRAIN] = {"GA1", "GA2", "EA", "EI1", "EI2", "GJ"};
  double                   q[2 * 12];

  if (d->nblocks_a != 4 || d->nblocks_b != 4) {
    snprintf(error, len, "Beam: both nodes must be rigid bodies (their directors carry the cross-section)");
    return 1;
  }
  for (int i = 0; i < 3; i++)
    if (d->Xa[i] != 0 || d->Xb[i] != 0) {
      snprintf(error, len, "Beam: an element joins its nodes' centres; it takes no points");
      return 1;
    }
  if (d->length == MBS_ELEM_UNSET) d->length = MbsElemInitialDistance(a->x, b->x);
  if (!(d->length > 0 && isfinite(d->length))) {
    snprintf(error, len, "Beam: the element length must be positive (coincident nodes?), got %g", d->length);
    return 1;
  }
  { /* the element's frame: e3 along the chord; e1 the part across it of the section axis axis_a (in A's frame; set by
       a generator whose nodes' frames are not the sections', MbsModelAddBeamNetwork()) or else of node A's d1 (of d2
       when d1 is more than 45 degrees off the section's plane); e2 = e3 x e1. Each node carries it in its own director
       basis, so that the nodes' frames may be any (a junction of a network of beams) */
    double E[3][3], t[3], n = 0, best = -1;
    for (int i = 0; i < 3; i++) t[i] = b->x[i] - a->x[i], n += t[i] * t[i];
    n = sqrt(n);
    if (!(n > 0)) {
      snprintf(error, len, "Beam: the nodes coincide (a beam element of zero length)");
      return 1;
    }
    for (int i = 0; i < 3; i++) E[2][i] = t[i] / n;
    if (d->axis_a[0] != 0 || d->axis_a[1] != 0 || d->axis_a[2] != 0) {
      double v[3], along = 0, perp = 0, norm = 0;
      for (int i = 0; i < 3; i++)
        v[i] = d->axis_a[0] * a->D[0][i] + d->axis_a[1] * a->D[1][i] + d->axis_a[2] * a->D[2][i];
      for (int i = 0; i < 3; i++) along += v[i] * E[2][i], norm += v[i] * v[i];
      for (int i = 0; i < 3; i++) v[i] -= along * E[2][i], perp += v[i] * v[i];
      if (!(perp > 1e-12 * norm)) {
        snprintf(error, len, "Beam: the section's first axis lies along the element; it must have a part across it");
        return 1;
      }
      perp = sqrt(perp);
      for (int i = 0; i < 3; i++) E[0][i] = v[i] / perp;
      best = 2;
    }
    for (int k = 0; k < 2 && best < 0; k++) { /* of d1 and d2, the first well across the chord */
      double v[3], along = 0, perp = 0;
      for (int i = 0; i < 3; i++) along += a->D[k][i] * E[2][i];
      for (int i = 0; i < 3; i++) v[i] = a->D[k][i] - along * E[2][i], perp += v[i] * v[i];
      if (perp > 0.5 && best < 0) { /* d1 when it is at most 45 degrees off the section's plane */
        perp = sqrt(perp);
        for (int i = 0; i < 3; i++) E[0][i] = v[i] / perp;
        best = k;
      }
    }
    if (best < 0) { /* the chord at 45 degrees between d1 and d2: d2's part across it */
      double v[3], along = 0, perp = 0;
      for (int i = 0; i < 3; i++) along += a->D[1][i] * E[2][i];
      for (int i = 0; i < 3; i++) v[i] = a->D[1][i] - along * E[2][i], perp += v[i] * v[i];
      perp = sqrt(perp);
      for (int i = 0; i < 3; i++) E[0][i] = v[i] / perp;
    }
    E[1][0] = E[2][1] * E[0][2] - E[2][2] * E[0][1];
    E[1][1] = E[2][2] * E[0][0] - E[2][0] * E[0][2];
    E[1][2] = E[2][0] * E[0][1] - E[2][1] * E[0][0];
    MbsElemFrameInBody(a, E, d->frame_a);
    MbsElemFrameInBody(b, E, d->frame_b);
  }
  for (int k = 0; k < MBS_BEAM_NSTRAIN; k++)
    if (!(d->beam_stiffness[k] > 0 && isfinite(d->beam_stiffness[k]))) {
      snprintf(error, len, "Beam: %s must be positive and finite, got %g", names[k], d->beam_stiffness[k]);
      return 1;
    }
  for (int i = 0; i < 3; i++) {
    q[i]      = a->x[i];
    q[12 + i] = b->x[i];
    for (int k = 0; k < 3; k++) {
      q[3 + 3 * k + i]  = a->D[k][i];
      q[15 + 3 * k + i] = b->D[k][i];
    }
  }
  BeamStrains(d, q, d->beam_strain0, NULL);
  return 0;
}

const MbsElementType MbsElementTypeBeam = {
  .name              = "beam",
  .section           = "springs",
  .title             = "Beam",
  .kernel            = &MbsElemKernelBeam,
  .needs_orientation = MBS_ELEM_ORIENT_BOTH,
  .joins_centres     = 1,
  .cell_kind         = 14,
  .nparams           = 7,
  .params            = {{"EA",
                         MBS_ELEM_PARAM_REAL,
                         {offsetof(MbsElemData, beam_stiffness[2])},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "axial stiffness E A in N"},
                        {"GA1",
                         MBS_ELEM_PARAM_REAL,
                         {offsetof(MbsElemData, beam_stiffness[0])},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "shear stiffness along d1, G A1 in N"},
                        {"GA2",
                         MBS_ELEM_PARAM_REAL,
                         {offsetof(MbsElemData, beam_stiffness[1])},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "shear stiffness along d2, G A2 in N"},
                        {"EI1",
                         MBS_ELEM_PARAM_REAL,
                         {offsetof(MbsElemData, beam_stiffness[3])},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "bending stiffness about d1, E I1 in N m^2"},
                        {"EI2",
                         MBS_ELEM_PARAM_REAL,
                         {offsetof(MbsElemData, beam_stiffness[4])},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "bending stiffness about d2, E I2 in N m^2"},
                        {"GJ",
                         MBS_ELEM_PARAM_REAL,
                         {offsetof(MbsElemData, beam_stiffness[5])},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "torsional stiffness G J in N m^2"},
                        {"length",
                         MBS_ELEM_PARAM_REAL,
                         {offsetof(MbsElemData, length)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_DEFAULT_DISTANCE,
                         "element length in m"}},
  .complete          = BeamComplete,
};

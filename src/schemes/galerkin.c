/*
  The Galerkin variational integrators of Man, Gao & Zhong (Mathematics 2020, Sect. 3.2) for holonomic constraints:
  over a step of size eta, the coordinates and the multipliers are Lagrange polynomials of degree n = m - 1 through
  n + 1 control points 0 = d_0 < ... < d_n = 1 (equidistant, E, or Lobatto, L), q(t) = sum_k N_k(t) q^k,
  lambda(t) = sum_k N_k(t) lambda^k, with q^0 = q_n known. The action of the unconstrained Lagrangian
  L = 1/2 qdot^T M qdot - V(q) is integrated by one m-point rule (Gauss-Legendre, G, or Lobatto, L), that of the
  constraint term g(q)^T lambda by another. Its stationarity in q^0 .. q^n (their eq. 26/35), with the holonomic
  constraints at the control points (eq. 30) and the velocity constraint at the step's end (eq. 31), gives
  (n + 1)(d + c) equations in q^1 .. q^n, p^n = p_{n+1} and lambda^0 .. lambda^n:

    E_i = sum_j eta bU_j (-N_i(cU_j) DV(q(cU_j)) + N_i'(cU_j)/eta M qdot(cU_j))
          - sum_j eta bC_j N_i(cC_j) G(q(cC_j))^T lambda(cC_j) + [i = 0] p_n - [i = n] p_{n+1} = 0,  i = 0 .. n
    g(q^k) = 0 at t_n + d_k eta,  k = 1 .. n;        G(q^n) M^-1 p_{n+1} (+ dg/dt) = 0

  The kinetic term is integrated exactly by both rules (degree 2n - 2), so it is sum_k A_ik q^k M / eta with
  A_ik = int_0^1 N_i' N_k'. The rows solved are R_i = eta M^-1 E_i (the rows of field q hold R_0, of field q<i> R_i,
  of field p -R_n), the constraint rows in fields lambda<k> (k >= 1) and the velocity row in lambda0. Eight
  algorithms (type galerkin-XYZ: control points X, rule Y of the unconstrained term, rule Z of the constrained one,
  each E/L, G/L, G/L) with the parameter points = m. With Lobatto control points the order is 2m - 2; LLL is the
  constrained Lobatto IIIA-IIIB method (docs/galerkin.md).

  Drives (docs/drives.md): each constraint evaluation at its own time. Force elements (dampers, loads) enter E_i as
  sum_j eta bU_j N_i(cU_j) F(q(cU_j), qdot(cU_j), t_n + cU_j eta), a host's external force (constant over the step) as
  eta int N_i F: the scheme integrates them itself (MbsSchemeOps.own_forces). A host's state force is refused.
*/
#include <ctype.h>
#include <petscdt.h>
#include <string.h>
#include "stepper/stepperimpl.h"

#define MBS_GALERKIN_MAX_POINTS 8 /* m; the fields number 2m <= MBS_MAX_FIELDS */

typedef struct {
  char      control, rule_u, rule_c; /* 'E' or 'L'; 'G' or 'L'; 'G' or 'L' */
  PetscInt  m, n;                    /* points, degree n = m - 1 */
  PetscReal d[MBS_GALERKIN_MAX_POINTS];
  PetscReal cu[MBS_GALERKIN_MAX_POINTS], bu[MBS_GALERKIN_MAX_POINTS], cc[MBS_GALERKIN_MAX_POINTS],
    bc[MBS_GALERKIN_MAX_POINTS];
  PetscReal    Nu[MBS_GALERKIN_MAX_POINTS][MBS_GALERKIN_MAX_POINTS];  /* N_k(cU_j) */
  PetscReal    dNu[MBS_GALERKIN_MAX_POINTS][MBS_GALERKIN_MAX_POINTS]; /* N_k'(cU_j) */
  PetscReal    Nc[MBS_GALERKIN_MAX_POINTS][MBS_GALERKIN_MAX_POINTS];  /* N_k(cC_j) */
  PetscReal    A[MBS_GALERKIN_MAX_POINTS][MBS_GALERKIN_MAX_POINTS];   /* int_0^1 N_i' N_k' */
  PetscReal    wbar[MBS_GALERKIN_MAX_POINTS];                         /* int_0^1 N_k */
  PetscScalar *lamc;                                                  /* lambda at a quadrature point */
  PetscScalar *qa, *qb; /* ghosted coordinates with midpoint q(c) and mean velocity qdot(c): the force elements' */
} MbsGalerkin;

/* fields: q1 .. q(n-1) (stages), q (= q^n), p, lambda0 .. lambda(n) */
static inline PetscInt QF(const MbsGalerkin *g, PetscInt k)
{
  return k < g->n ? k - 1 : g->n - 1;
}
static inline PetscInt PF(const MbsGalerkin *g)
{
  return g->n;
}
static inline PetscInt LF(const MbsGalerkin *g, PetscInt k)
{
  return g->n + 1 + k;
}
/* the field whose rows hold R_i, and its sign */
static inline PetscInt RF(const MbsGalerkin *g, PetscInt i)
{
  return i == 0 ? QF(g, g->n) : i < g->n ? QF(g, i) : PF(g);
}
static inline PetscReal RS(const MbsGalerkin *g, PetscInt i)
{
  return i == g->n ? -1.0 : 1.0;
}

/* Lagrange basis on the nodes d[0..n] at x: N[k], and its derivative dN[k] */
static void MbsGalerkinBasis(PetscInt n, const PetscReal d[], PetscReal x, PetscReal N[], PetscReal dN[])
{
  for (PetscInt k = 0; k <= n; k++) {
    PetscReal v = 1, dv = 0;
    for (PetscInt i = 0; i <= n; i++) {
      if (i == k) continue;
      dv = dv * (x - d[i]) / (d[k] - d[i]) + v / (d[k] - d[i]);
      v *= (x - d[i]) / (d[k] - d[i]);
    }
    N[k]  = v;
    dN[k] = dv;
  }
}

/* an m-point rule on [0, 1]: Gauss-Legendre ('G') or Gauss-Lobatto ('L') */
static PetscErrorCode MbsGalerkinRule(char rule, PetscInt m, PetscReal c[], PetscReal b[])
{
  PetscFunctionBegin;
  if (rule == 'G')
    PetscCall(PetscDTGaussQuadrature(m, 0.0, 1.0, c, b));
  else {
    PetscCall(PetscDTGaussLobattoLegendreQuadrature(m, PETSCGAUSSLOBATTOLEGENDRE_VIA_NEWTON, c, b));
    for (PetscInt j = 0; j < m; j++) c[j] = 0.5 * (c[j] + 1.0), b[j] *= 0.5;
    c[0] = 0.0, c[m - 1] = 1.0;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeSetUp_Galerkin(MbsStepper st)
{
  MbsGalerkin *g = (MbsGalerkin *)st->data;
  PetscReal    points, N[MBS_GALERKIN_MAX_POINTS], dN[MBS_GALERKIN_MAX_POINTS];
  PetscReal    cg[2 * MBS_GALERKIN_MAX_POINTS], bg[2 * MBS_GALERKIN_MAX_POINTS];
  MbsFieldKind kinds[MBS_MAX_FIELDS];
  char         namebuf[MBS_MAX_FIELDS][16];
  const char  *names[MBS_MAX_FIELDS];

  PetscFunctionBegin;
  PetscCall(MbsStepperGetSchemeParameter(st, "points", &points));
  PetscCheck(points == PetscFloorReal(points), PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "Scheme %s: points must be an integer, got %g", st->type, (double)points);
  g->m = (PetscInt)points, g->n = g->m - 1;
  if (g->control == 'E')
    for (PetscInt k = 0; k <= g->n; k++) g->d[k] = (PetscReal)k / g->n;
  else
    PetscCall(MbsGalerkinRule('L', g->m, g->d, bg));
  PetscCall(MbsGalerkinRule(g->rule_u, g->m, g->cu, g->bu));
  PetscCall(MbsGalerkinRule(g->rule_c, g->m, g->cc, g->bc));
  for (PetscInt j = 0; j < g->m; j++) {
    MbsGalerkinBasis(g->n, g->d, g->cu[j], g->Nu[j], g->dNu[j]);
    MbsGalerkinBasis(g->n, g->d, g->cc[j], g->Nc[j], dN);
  }
  /* A_ik = int_0^1 N_i' N_k', exactly with m Gauss points (degree 2n - 2) */
  PetscCall(PetscDTGaussQuadrature(g->m, 0.0, 1.0, cg, bg));
  PetscCall(PetscArrayzero(&g->A[0][0], MBS_GALERKIN_MAX_POINTS * MBS_GALERKIN_MAX_POINTS));
  for (PetscInt j = 0; j < g->m; j++) {
    MbsGalerkinBasis(g->n, g->d, cg[j], N, dN);
    for (PetscInt i = 0; i <= g->n; i++)
      for (PetscInt k = 0; k <= g->n; k++) g->A[i][k] += bg[j] * dN[i] * dN[k];
  }
  for (PetscInt k = 1; k < g->n; k++) {
    kinds[QF(g, k)] = MBS_FIELD_COORDINATE;
    PetscCall(PetscSNPrintf(namebuf[QF(g, k)], sizeof(namebuf[0]), "q%" PetscInt_FMT, k));
  }
  kinds[QF(g, g->n)] = kinds[PF(g)] = MBS_FIELD_COORDINATE;
  PetscCall(PetscStrncpy(namebuf[QF(g, g->n)], "q", sizeof(namebuf[0])));
  PetscCall(PetscStrncpy(namebuf[PF(g)], "p", sizeof(namebuf[0])));
  for (PetscInt k = 0; k <= g->n; k++) {
    kinds[LF(g, k)] = MBS_FIELD_CONSTRAINT;
    PetscCall(PetscSNPrintf(namebuf[LF(g, k)], sizeof(namebuf[0]), "lambda%" PetscInt_FMT, k));
  }
  for (PetscInt f = 0; f < 2 * g->m; f++) names[f] = namebuf[f];
  PetscCall(MbsStepperSetFields(st, 2 * g->m, kinds, names));
  for (PetscInt k = 0; k <= g->n; k++) { /* the rule integrates degree n exactly */
    g->wbar[k] = 0;
    for (PetscInt j = 0; j < g->m; j++) g->wbar[k] += g->bu[j] * g->Nu[j][k];
  }
  PetscCall(PetscFree(g->lamc));
  PetscCall(PetscFree2(g->qa, g->qb));
  PetscCall(PetscMalloc1(st->model->ncon_local + 1, &g->lamc));
  PetscCall(PetscMalloc2(st->model->nq_ghosted + 1, &g->qa, st->model->nq_ghosted + 1, &g->qb));
  PetscFunctionReturn(0);
}

/* the stage coordinates q^k, k = 0 .. n (q^0 = q_n), and the multipliers lambda^k in the ghosted local unknowns x */
static void MbsGalerkinUnknowns(MbsStepper st, const PetscScalar *x, const PetscScalar *q[], const PetscScalar *lam[])
{
  const MbsGalerkin *g = (MbsGalerkin *)st->data;
  q[0]                 = st->q0;
  for (PetscInt k = 1; k <= g->n; k++) q[k] = x + st->sys->loff[QF(g, k)];
  for (PetscInt k = 0; k <= g->n; k++) lam[k] = x + st->sys->loff[LF(g, k)];
}

/* qc = sum_k w_k q^k over the ghosted coordinates, and lamc = sum_k w_k lambda^k (lam may be NULL) */
static void MbsGalerkinInterpolate(MbsStepper st, const PetscReal w[], const PetscScalar *q[], const PetscScalar *lam[],
                                   PetscScalar *qc)
{
  const MbsGalerkin *g = (MbsGalerkin *)st->data;
  for (PetscInt l = 0; l < st->model->nq_ghosted; l++) {
    PetscScalar s = 0;
    for (PetscInt k = 0; k <= g->n; k++) s += w[k] * q[k][l];
    qc[l] = s;
  }
  if (lam)
    for (PetscInt l = 0; l < st->model->ncon_local; l++) {
      PetscScalar s = 0;
      for (PetscInt k = 0; k <= g->n; k++) s += w[k] * lam[k][l];
      g->lamc[l] = s;
    }
}

/* qa, qb with midpoint q(c) and mean velocity qdot(c) over a step eta (src/model/operators.c evaluates the force
   elements there): q(c) -/+ (eta/2) qdot(c), qdot(c) = sum_k N_k'(c) q^k / eta */
static void MbsGalerkinForcePoint(MbsStepper st, PetscInt j, const PetscScalar *q[])
{
  const MbsGalerkin *g = (MbsGalerkin *)st->data;
  for (PetscInt l = 0; l < st->model->nq_ghosted; l++) {
    PetscScalar x = 0, dx = 0;
    for (PetscInt k = 0; k <= g->n; k++) {
      x += g->Nu[j][k] * q[k][l];
      dx += g->dNu[j][k] * q[k][l];
    }
    g->qa[l] = x - 0.5 * dx;
    g->qb[l] = x + 0.5 * dx;
  }
}

static PetscErrorCode MbsSchemeResidual_Galerkin(MbsStepper st, const PetscScalar *x, PetscScalar *f)
{
  const MbsGalerkin *g     = (MbsGalerkin *)st->data;
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  const PetscReal    eta = st->hstep, t0 = st->tstep[0], *minv = model->minv;
  const PetscInt     n = g->n, nq = model->nq_ghosted;
  const PetscScalar *q[MBS_GALERKIN_MAX_POINTS], *lam[MBS_GALERKIN_MAX_POINTS], *p1 = x + sys->loff[PF(g)];
  PetscScalar       *r[MBS_GALERKIN_MAX_POINTS], *qc = st->work[0], *tmp = st->work[1], *v1 = st->work[2];

  PetscFunctionBegin;
  MbsGalerkinUnknowns(st, x, q, lam);
  for (PetscInt i = 0; i <= n; i++) r[i] = f + sys->loff[RF(g, i)];
  for (PetscInt i = 0; i <= n; i++) /* the kinetic term and the boundary momenta, on owned coordinates */
    for (PetscInt l = 0; l < model->nq_local; l++) {
      PetscScalar s = 0;
      for (PetscInt k = 0; k <= n; k++) s += g->A[i][k] * q[k][l];
      if (i == 0) s += eta * minv[l] * st->p0[l];
      if (i == n) s -= eta * minv[l] * p1[l];
      r[i][l] += RS(g, i) * s;
    }
  for (PetscInt j = 0; j < g->m; j++) { /* the potential at the points of the unconstrained rule */
    MbsGalerkinInterpolate(st, g->Nu[j], q, NULL, qc);
    PetscCall(PetscArrayzero(tmp, nq));
    PetscCall(MbsOpGradientAdd(model, qc, 1.0, tmp));
    for (PetscInt i = 0; i <= n; i++) {
      const PetscReal a = -RS(g, i) * eta * eta * g->bu[j] * g->Nu[j][i];
      if (a != 0)
        for (PetscInt l = 0; l < nq; l++) r[i][l] += a * minv[l] * tmp[l]; /* ghosts: to their owners */
    }
  }
  if (st->has_forces)
    for (PetscInt j = 0; j < g->m; j++) { /* the force elements at the points of the unconstrained rule */
      MbsGalerkinForcePoint(st, j, q);
      PetscCall(PetscArrayzero(tmp, nq));
      PetscCall(MbsOpForceAdd(model, g->qa, g->qb, eta, t0 + g->cu[j] * eta, 1.0, tmp));
      for (PetscInt i = 0; i <= n; i++) {
        const PetscReal a = RS(g, i) * eta * eta * g->bu[j] * g->Nu[j][i];
        if (a != 0)
          for (PetscInt l = 0; l < nq; l++) r[i][l] += a * minv[l] * tmp[l];
      }
    }
  if (st->force) { /* the host's external force, constant over the step: int N_i F = eta wbar_i F */
    const PetscScalar *fe;
    PetscCall(VecGetArrayRead(st->Fext, &fe));
    for (PetscInt i = 0; i <= n; i++)
      for (PetscInt l = 0; l < model->nq_local; l++) r[i][l] += RS(g, i) * eta * eta * g->wbar[i] * minv[l] * fe[l];
    PetscCall(VecRestoreArrayRead(st->Fext, &fe));
  }
  for (PetscInt j = 0; j < g->m; j++) { /* the constraint forces at the points of the constrained rule */
    MbsGalerkinInterpolate(st, g->Nc[j], q, lam, qc);
    PetscCall(PetscArrayzero(tmp, nq));
    PetscCall(MbsModelSetConstraintTime(model, t0 + g->cc[j] * eta, t0 + g->cc[j] * eta));
    PetscCall(MbsOpGTMultAdd(model, qc, g->lamc, 1.0, MBS_SCALE_MINV_ROW, tmp));
    for (PetscInt i = 0; i <= n; i++) {
      const PetscReal a = -RS(g, i) * eta * eta * g->bc[j] * g->Nc[j][i];
      if (a != 0)
        for (PetscInt l = 0; l < nq; l++) r[i][l] += a * tmp[l];
    }
  }
  for (PetscInt k = 1; k <= n; k++) { /* the position constraints at the control points */
    PetscCall(MbsModelSetConstraintTime(model, t0 + g->d[k] * eta, t0 + g->d[k] * eta));
    PetscCall(MbsOpConstraintAdd(model, q[k], 1.0, f + sys->loff[LF(g, k)]));
  }
  for (PetscInt l = 0; l < nq; l++) v1[l] = minv[l] * p1[l]; /* the velocity constraints at the step's end */
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[1], st->tstep[1]));
  PetscCall(MbsOpGMultAdd(model, q[n], v1, 1.0, f + sys->loff[LF(g, 0)]));
  PetscCall(MbsOpConstraintRateAdd(model, q[n], st->tstep[1], 1.0, f + sys->loff[LF(g, 0)]));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeJacobian_Galerkin(MbsStepper st, const PetscScalar *x)
{
  const MbsGalerkin *g     = (MbsGalerkin *)st->data;
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  const PetscReal    eta = st->hstep, t0 = st->tstep[0];
  const PetscInt     n = g->n;
  const PetscScalar *q[MBS_GALERKIN_MAX_POINTS], *lam[MBS_GALERKIN_MAX_POINTS], *p1 = x + sys->loff[PF(g)];
  PetscScalar       *qc = st->work[0], *v1 = st->work[2];

  PetscFunctionBegin;
  MbsGalerkinUnknowns(st, x, q, lam);
  for (PetscInt i = 0; i <= n; i++)
    for (PetscInt k = 1; k <= n; k++)
      if (g->A[i][k] != 0) PetscCall(MbsJacAddIdentity(sys, RF(g, i), QF(g, k), RS(g, i) * g->A[i][k], MBS_SCALE_NONE));
  PetscCall(MbsJacAddIdentity(sys, RF(g, n), PF(g), -RS(g, n) * eta, MBS_SCALE_MINV_ROW));
  for (PetscInt j = 0; j < g->m; j++) {
    MbsGalerkinInterpolate(st, g->Nu[j], q, NULL, qc);
    for (PetscInt i = 0; i <= n; i++)
      for (PetscInt k = 1; k <= n; k++) {
        const PetscReal a = -RS(g, i) * eta * eta * g->bu[j] * g->Nu[j][i] * g->Nu[j][k];
        if (a != 0) PetscCall(MbsJacAddPotentialHessian(sys, RF(g, i), QF(g, k), qc, a, MBS_SCALE_MINV_ROW));
      }
  }
  if (st->has_forces)
    for (PetscInt j = 0; j < g->m; j++) { /* dq(c)/dq^k = N_k(c), dqdot(c)/dq^k = N_k'(c)/eta */
      MbsGalerkinForcePoint(st, j, q);
      for (PetscInt i = 0; i <= n; i++)
        for (PetscInt k = 1; k <= n; k++) {
          const PetscReal a = RS(g, i) * eta * eta * g->bu[j] * g->Nu[j][i];
          if (a != 0 && (g->Nu[j][k] != 0 || g->dNu[j][k] != 0))
            PetscCall(MbsJacAddForceWeights(sys, RF(g, i), QF(g, k), g->qa, g->qb, eta, t0 + g->cu[j] * eta,
                                            a * g->Nu[j][k], a * g->dNu[j][k] / eta, MBS_SCALE_MINV_ROW));
        }
    }
  for (PetscInt j = 0; j < g->m; j++) {
    MbsGalerkinInterpolate(st, g->Nc[j], q, lam, qc);
    PetscCall(MbsModelSetConstraintTime(model, t0 + g->cc[j] * eta, t0 + g->cc[j] * eta));
    for (PetscInt i = 0; i <= n; i++) {
      const PetscReal a = -RS(g, i) * eta * eta * g->bc[j] * g->Nc[j][i];
      if (a == 0) continue;
      for (PetscInt k = 1; k <= n; k++)
        if (g->Nc[j][k] != 0)
          PetscCall(MbsJacAddT(sys, RF(g, i), QF(g, k), g->lamc, a * g->Nc[j][k], MBS_SCALE_MINV_ROW));
      for (PetscInt k = 0; k <= n; k++)
        if (g->Nc[j][k] != 0) PetscCall(MbsJacAddGT(sys, RF(g, i), LF(g, k), qc, a * g->Nc[j][k], MBS_SCALE_MINV_ROW));
    }
  }
  for (PetscInt k = 1; k <= n; k++) {
    PetscCall(MbsModelSetConstraintTime(model, t0 + g->d[k] * eta, t0 + g->d[k] * eta));
    PetscCall(MbsJacAddG(sys, LF(g, k), QF(g, k), q[k], 1.0, MBS_SCALE_NONE));
  }
  for (PetscInt l = 0; l < model->nq_ghosted; l++) v1[l] = model->minv[l] * p1[l];
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[1], st->tstep[1]));
  PetscCall(MbsJacAddHwT(sys, LF(g, 0), QF(g, n), v1, 1.0));
  PetscCall(MbsJacAddConstraintRate(sys, LF(g, 0), QF(g, n), q[n], st->tstep[1], 1.0));
  PetscCall(MbsJacAddG(sys, LF(g, 0), PF(g), q[n], 1.0, MBS_SCALE_MINV_COL));
  PetscFunctionReturn(0);
}

/* The stages' initial guess when the stepper predicts the step from its start: q^k = q_n + d_k eta M^-1 p_n */
static PetscErrorCode MbsSchemePredict_Galerkin(MbsStepper st)
{
  const MbsGalerkin *g = (MbsGalerkin *)st->data;
  const PetscScalar *q, *p;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(st->q, &q));
  PetscCall(VecGetArrayRead(st->p, &p));
  for (PetscInt k = 1; k < g->n; k++) {
    Vec          sub;
    PetscScalar *xs;
    PetscInt     nloc;
    PetscCall(VecGetSubVector(st->X, st->sys->is[QF(g, k)], &sub));
    PetscCall(VecGetLocalSize(sub, &nloc));
    PetscCall(VecGetArray(sub, &xs));
    for (PetscInt l = 0; l < nloc; l++) xs[l] = q[l] + g->d[k] * st->hstep * st->model->minv[l] * p[l];
    PetscCall(VecRestoreArray(sub, &xs));
    PetscCall(VecRestoreSubVector(st->X, st->sys->is[QF(g, k)], &sub));
  }
  PetscCall(VecRestoreArrayRead(st->p, &p));
  PetscCall(VecRestoreArrayRead(st->q, &q));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeView_Galerkin(MbsStepper st, PetscViewer viewer)
{
  const MbsGalerkin *g = (MbsGalerkin *)st->data;

  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer,
                                   "  Galerkin: %" PetscInt_FMT " points (degree %" PetscInt_FMT
                                   "), %s control points, %s rule for the unconstrained term, %s for the constraints\n",
                                   g->m, g->n, g->control == 'E' ? "equidistant" : "Lobatto",
                                   g->rule_u == 'G' ? "Gauss-Legendre" : "Lobatto",
                                   g->rule_c == 'G' ? "Gauss-Legendre" : "Lobatto"));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeDestroy_Galerkin(MbsStepper st)
{
  MbsGalerkin *g = (MbsGalerkin *)st->data;

  PetscFunctionBegin;
  PetscCall(PetscFree(g->lamc));
  PetscCall(PetscFree2(g->qa, g->qb));
  PetscCall(PetscFree(st->data));
  PetscFunctionReturn(0);
}

/* the constraint forces act over the whole step (no single lambda at one configuration) */
static PetscErrorCode MbsSchemeConstraintForceWeight_Galerkin(MbsStepper st, PetscReal *w)
{
  PetscFunctionBegin;
  (void)st;
  *w = 0.5;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeCreate_Galerkin(MbsStepper st)
{
  MbsGalerkin *g;
  const char  *v;

  PetscFunctionBegin;
  PetscCall(PetscNew(&g));
  v                                = st->type + strlen("galerkin-"); /* galerkin-XYZ */
  g->control                       = (char)toupper((unsigned char)v[0]);
  g->rule_u                        = (char)toupper((unsigned char)v[1]);
  g->rule_c                        = (char)toupper((unsigned char)v[2]);
  st->data                         = g;
  st->ops->setup                   = MbsSchemeSetUp_Galerkin;
  st->ops->residual                = MbsSchemeResidual_Galerkin;
  st->ops->schur_amg               = PETSC_TRUE; /* tests/test_solvers.c: LU's trajectory, exact at zero multipliers */
  st->ops->jacobian                = MbsSchemeJacobian_Galerkin;
  st->ops->predict                 = MbsSchemePredict_Galerkin;
  st->ops->view                    = MbsSchemeView_Galerkin;
  st->ops->destroy                 = MbsSchemeDestroy_Galerkin;
  st->ops->constraint_force_weight = MbsSchemeConstraintForceWeight_Galerkin;
  st->ops->own_forces              = PETSC_TRUE;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSchemeRegister_Galerkin(void)
{
  static const char *const variants[] = {"ell", "egl", "elg", "egg", "lll", "lgl", "llg", "lgg"};

  PetscFunctionBegin;
  for (int i = 0; i < 8; i++) {
    char name[32];
    PetscCall(PetscSNPrintf(name, sizeof(name), "galerkin-%s", variants[i]));
    PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, name, MbsSchemeCreate_Galerkin));
    PetscCall(MbsSchemeRegisterIntegerParameter(name, "points", 3, 2, MBS_GALERKIN_MAX_POINTS,
                                                "Galerkin: points m (polynomial degree m - 1)"));
  }
  PetscFunctionReturn(0);
}

/*
  DH: Ball's discrete Hamel equations (Ball 2013, Thm 3.1, (3.6); constrained: (3.20) with the discrete constraint of
  its Sect. 3.3.5) in the body frames of the director formulation (docs/nonholonomic.md, "The discrete Hamel
  equations"). The velocities are measured in a frame psi(q): for a particle its own velocity; for a rigid body
  (phi, d_1, d_2, d_3), with R = [d_1 d_2 d_3], the quasi-velocities xi = (v, w_1, w_2, w_3) with

    phi' = R v,   d_j' = R w_j        (psi(q) = diag(R, R, R, R), body-frame velocities)

  whose fields have constant structure constants: [xi, eta] = (W v' - W' v, W W' - W' W), W = [w_1 w_2 w_3]. In the
  frame the Lagrangian is l(q, xi) = 1/2 (psi xi)^T M (psi xi) - V(q), its momentum p(q, xi) = psi^T M psi xi =
  (m C v, E_j C w_j), C = R^T R, and F = u[l] + [xi, p]^* its frame force: u[T] = (0, columns of C S),
  S = m v v^T + W E W^T, and [xi, p]^* = (W^T p_v, -p_v v^T + W^T P_W - P_W W^T), P_W = [E_j C w_j]. The discrete
  Lagrangian is h l(q_tau, xi), q_tau = (1 - tau) q0 + tau q1, with the kinematic closure (q1 - q0)/h = psi(q_tau) xi
  (Ball's Remark 3.1). In the form of its discrete Legendre maps (Ball's (5.1)),

    Theta^-(q0, q1) = p - (1 - tau) h F,   Theta^+(q0, q1) = p + tau h F     (p, F at (q_tau, xi); frame components)

  the step solves Theta^-(q0, q1) = psi(q0)^T (p0 - h G(q0)^T lambda - h A(q0)^T nu) and stores the coordinate momentum
  p1 with psi(q1)^T p1^- = Theta^+(q0, q1), p1^- = p1 + h/2 (G(q1)^T mu + A(q1)^T nu1): the mean of the node's two
  momenta, on the hidden constraints, as DLA stores it (src/schemes/dla.c). Unknowns (q1, p1, xi, lambda, mu[, nu,
  nu1]):

    R_q   = (q1 - q0)/h - psi(q_tau) xi
    R_xi  = p - (1 - tau) h F - psi(q0)^T (p0 - h G(q0)^T lambda - h A(q0)^T nu) - (1 - tau) h psi(q_tau)^T f
    R_p   = psi(q1)^T (p1 + h/2 (G(q1)^T mu + A(q1)^T nu1)) - p - tau h F - tau h psi(q_tau)^T f
    R_lam = g(q1),  R_mu = G(q1) M^-1 p1,  R_nu = A(q_tau) (q1 - q0)/h,  R_nu1 = A(q1) M^-1 p1

  with f = -DV(q_tau) + F_elements(q_m, v_m, t_m) + F_ext the applied coordinate forces. In the coordinate frame
  (psi = I) these are exactly DLA's equations (Ball's Remark 5.1). Second order for tau = 1/2 (Ball, p. 3.3.5).
  Drives: G(q0) at t0; g(q1), G(q1) at t1, and R_mu adds dg/dt(q1, t1).
*/
#include "stepper/stepperimpl.h"

enum { DH_Q, DH_P, DH_XI, DH_LAM, DH_MU, DH_NU, DH_NU1 };

typedef struct {
  PetscReal    tau;
  Vec          work;                       /* coordinate layout: MbsModelAssembleLocal() */
  PetscReal   *rowT;                       /* 9 per ghosted coordinate triple */
  PetscScalar *f, *r0, *r1, *qt, *dq, *v1; /* ghosted coordinate arrays */
} MbsDH;

/* ---- one body: the frame, the momentum and the frame force, and their tangents */

typedef struct {
  int       rigid;
  PetscReal m, E[3];
} MbsDHBody;

static void M3Mul(const PetscReal A[3][3], const PetscReal B[3][3], PetscReal C[3][3])
{
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) C[i][j] = A[i][0] * B[0][j] + A[i][1] * B[1][j] + A[i][2] * B[2][j];
}

static void M3TMul(const PetscReal A[3][3], const PetscReal B[3][3], PetscReal C[3][3]) /* A^T B */
{
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) C[i][j] = A[0][i] * B[0][j] + A[1][i] * B[1][j] + A[2][i] * B[2][j];
}

static void M3MulT(const PetscReal A[3][3], const PetscReal B[3][3], PetscReal C[3][3]) /* A B^T */
{
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) C[i][j] = A[i][0] * B[j][0] + A[i][1] * B[j][1] + A[i][2] * B[j][2];
}

/* A 12-vector of a rigid body as the 3-vector x (block 0) and the matrix X with the blocks 1..3 as its columns */
static void DHSplit(const PetscReal *y, PetscReal x[3], PetscReal X[3][3])
{
  for (int l = 0; l < 3; l++) {
    x[l] = y[l];
    for (int j = 0; j < 3; j++) X[l][j] = y[3 * (1 + j) + l];
  }
}

static void DHJoin(const PetscReal x[3], const PetscReal X[3][3], PetscReal *y)
{
  for (int l = 0; l < 3; l++) {
    y[l] = x[l];
    for (int j = 0; j < 3; j++) y[3 * (1 + j) + l] = X[l][j];
  }
}

/*
  At (q, xi) and, with dq and dxi (may be NULL: zero), their tangents: psi(q) xi, p(q, xi) and F(q, xi) = u[T] +
  [xi, p]^*, each a 12-vector of the body (3 for a particle), or their derivatives in the direction (dq, dxi).
*/
static void DHBodyEval(const MbsDHBody *b, const PetscReal *q, const PetscReal *xi, const PetscReal *dq,
                       const PetscReal *dxi, PetscReal *psixi, PetscReal *p, PetscReal *F)
{
  PetscReal R[3][3], dR[3][3], v[3], W[3][3], dv[3] = {0, 0, 0}, dW[3][3] = {{0}}, phi[3];
  PetscReal C[3][3], dC[3][3], S[3][3], dS[3][3], pv[3], PW[3][3], dpv[3], dPW[3][3], CS[3][3], T1[3][3], T2[3][3];
  PetscReal o[3], O[3][3];
  const int tangent = dq || dxi;

  if (!b->rigid) {
    for (int l = 0; l < 3; l++) {
      const PetscReal x = tangent ? (dxi ? dxi[l] : 0) : xi[l];
      psixi[l]          = x;
      p[l]              = b->m * x;
      F[l]              = 0;
    }
    return;
  }
  DHSplit(q, phi, R);
  DHSplit(xi, v, W);
  if (dq)
    DHSplit(dq, phi, dR);
  else
    PetscMemzero(dR, sizeof(dR));
  if (dxi) DHSplit(dxi, dv, dW);
  M3TMul(R, R, C);
  for (int a = 0; a < 3; a++) {
    pv[a] = 0;
    for (int c = 0; c < 3; c++) pv[a] += b->m * C[a][c] * v[c];
  }
  M3Mul(C, W, PW);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      PW[i][j] *= b->E[j];
      S[i][j] =
        b->m * v[i] * v[j] + b->E[0] * W[i][0] * W[j][0] + b->E[1] * W[i][1] * W[j][1] + b->E[2] * W[i][2] * W[j][2];
    }
  if (!tangent) {
    for (int l = 0; l < 3; l++) { /* psi xi = (R v, R W) */
      o[l] = R[l][0] * v[0] + R[l][1] * v[1] + R[l][2] * v[2];
    }
    M3Mul(R, W, O);
    DHJoin(o, O, psixi);
    DHJoin(pv, PW, p);
    M3Mul(C, S, CS); /* u[T] = (0, C S) */
    for (int i = 0; i < 3; i++) {
      o[i] = W[0][i] * pv[0] + W[1][i] * pv[1] + W[2][i] * pv[2]; /* W^T p_v */
    }
    M3TMul(W, PW, T1); /* W^T P_W */
    M3MulT(PW, W, T2); /* P_W W^T */
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) O[i][j] = CS[i][j] - pv[i] * v[j] + T1[i][j] - T2[i][j];
    DHJoin(o, O, F);
    return;
  }
  /* tangents */
  M3TMul(dR, R, T1);
  M3TMul(R, dR, T2);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) dC[i][j] = T1[i][j] + T2[i][j];
  for (int l = 0; l < 3; l++) {
    o[l] = 0;
    for (int c = 0; c < 3; c++) o[l] += dR[l][c] * v[c] + R[l][c] * dv[c];
  }
  M3Mul(dR, W, T1);
  M3Mul(R, dW, T2);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) O[i][j] = T1[i][j] + T2[i][j];
  DHJoin(o, O, psixi);
  for (int a = 0; a < 3; a++) {
    dpv[a] = 0;
    for (int c = 0; c < 3; c++) dpv[a] += b->m * (dC[a][c] * v[c] + C[a][c] * dv[c]);
  }
  M3Mul(dC, W, T1);
  M3Mul(C, dW, T2);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      dPW[i][j] = b->E[j] * (T1[i][j] + T2[i][j]);
      dS[i][j]  = b->m * (dv[i] * v[j] + v[i] * dv[j]);
      for (int k = 0; k < 3; k++) dS[i][j] += b->E[k] * (dW[i][k] * W[j][k] + W[i][k] * dW[j][k]);
    }
  DHJoin(dpv, dPW, p);
  M3Mul(dC, S, T1);
  M3Mul(C, dS, T2);
  for (int i = 0; i < 3; i++) {
    o[i] = 0;
    for (int a = 0; a < 3; a++) o[i] += dW[a][i] * pv[a] + W[a][i] * dpv[a]; /* dW^T p_v + W^T dp_v */
    for (int j = 0; j < 3; j++) O[i][j] = T1[i][j] + T2[i][j] - dpv[i] * v[j] - pv[i] * dv[j];
  }
  M3TMul(dW, PW, T1);
  M3TMul(W, dPW, T2);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) O[i][j] += T1[i][j] + T2[i][j];
  M3MulT(dPW, W, T1);
  M3MulT(PW, dW, T2);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) O[i][j] -= T1[i][j] + T2[i][j];
  DHJoin(o, O, F);
}

/* psi(q)^T y of one body (y, out: 3 or 12 entries; in place allowed) */
static void DHFrameT(const MbsDHBody *b, const PetscReal *q, const PetscReal *y, PetscReal *out)
{
  PetscReal t[12];
  if (!b->rigid) {
    for (int l = 0; l < 3; l++) out[l] = y[l];
    return;
  }
  for (int k = 0; k < 4; k++)
    for (int a = 0; a < 3; a++)
      t[3 * k + a] = q[3 + 3 * a] * y[3 * k] + q[4 + 3 * a] * y[3 * k + 1] + q[5 + 3 * a] * y[3 * k + 2];
  for (int i = 0; i < 12; i++) out[i] = t[i];
}

/* The derivative of psi(q)^T y in q at fixed y (12 x 12, row-major): row (block k, component a) is y_k^T on the columns
   of director a */
static void DHFrameTDerivative(const PetscReal *y, PetscReal *D)
{
  PetscMemzero(D, sizeof(PetscReal) * 144);
  for (int k = 0; k < 4; k++)
    for (int a = 0; a < 3; a++)
      for (int l = 0; l < 3; l++) D[(3 * k + a) * 12 + 3 * (1 + a) + l] = y[3 * k + l];
}

static void DHBodyData(MbsModel model, PetscInt body, MbsDHBody *b)
{
  const MbsBody *bd = MbsModelBody(model, body);
  b->rigid          = bd->type == MBS_BODY_RIGID;
  b->m              = bd->mblock[0];
  for (int i = 0; i < 3; i++) b->E[i] = b->rigid ? bd->mblock[1 + i] : 0;
}

/* rowT = psi(q)^T on every ghosted triple: R^T on a rigid body's blocks, I on a particle's */
static void DHFillRowT(MbsModel model, const PetscScalar *q, PetscReal *rowT)
{
  for (PetscInt b = 0; b < model->nbodies; b++) {
    const PetscInt lq = model->body_lq[b];
    const int      nb = model->body_type[b];
    if (lq < 0) continue;
    for (int k = 0; k < nb; k++) {
      PetscReal *T = rowT + 9 * (lq / 3 + k);
      for (int r = 0; r < 3; r++)
        for (int s = 0; s < 3; s++) T[3 * r + s] = nb == 4 ? PetscRealPart(q[lq + 3 * (1 + r) + s]) : (r == s);
    }
  }
}

/* out += alpha psi^T y over every ghosted triple, psi^T the triples of rowT */
static void DHApplyRowT(MbsModel model, const PetscReal *rowT, const PetscScalar *y, PetscReal alpha, PetscScalar *out)
{
  for (PetscInt t = 0; t < model->nq_ghosted / 3; t++) {
    const PetscReal *T = rowT + 9 * t;
    for (int r = 0; r < 3; r++)
      out[3 * t + r] += alpha * (T[3 * r] * y[3 * t] + T[3 * r + 1] * y[3 * t + 1] + T[3 * r + 2] * y[3 * t + 2]);
  }
}

static PetscErrorCode MbsSchemeSetUp_DH(MbsStepper st)
{
  const MbsFieldKind kinds[] = {MBS_FIELD_COORDINATE, MBS_FIELD_COORDINATE,  MBS_FIELD_COORDINATE, MBS_FIELD_CONSTRAINT,
                                MBS_FIELD_CONSTRAINT, MBS_FIELD_VCONSTRAINT, MBS_FIELD_VCONSTRAINT};
  const char *const  names[] = {"q", "p", "xi", "lambda", "mu", "nu", "nu1"};
  MbsDH             *dh      = (MbsDH *)st->data;
  const PetscInt     n       = st->model->nq_ghosted;

  PetscFunctionBegin;
  PetscCall(MbsStepperGetParameter_Private(st, "tau", &dh->tau));
  PetscCall(MbsStepperSetFields(st, st->model->nvcon ? 7 : 5, kinds, names));
  PetscCall(VecDestroy(&dh->work));
  PetscCall(PetscFree7(dh->rowT, dh->f, dh->r0, dh->r1, dh->qt, dh->dq, dh->v1));
  PetscCall(VecDuplicate(st->q, &dh->work));
  PetscCall(PetscMalloc7(3 * n + 1, &dh->rowT, n + 1, &dh->f, n + 1, &dh->r0, n + 1, &dh->r1, n + 1, &dh->qt, n + 1,
                         &dh->dq, n + 1, &dh->v1));
  PetscFunctionReturn(0);
}

/* q_tau, q1 - q0, M^-1 p1; the applied forces f at q_tau (ghosted, element contributions); r0 = G(q0)^T lambda +
   A(q0)^T nu, r1 = G(q1)^T mu + A(q1)^T nu1 (ghosted) */
static PetscErrorCode MbsDHPrepare(MbsStepper st, const PetscScalar *x)
{
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  MbsDH             *dh    = (MbsDH *)st->data;
  const PetscReal    tau   = dh->tau;
  const PetscScalar *q1 = x + sys->loff[DH_Q], *p1 = x + sys->loff[DH_P];

  PetscFunctionBegin;
  for (PetscInt i = 0; i < model->nq_ghosted; i++) {
    dh->qt[i] = (1 - tau) * st->q0[i] + tau * q1[i];
    dh->dq[i] = q1[i] - st->q0[i];
    dh->v1[i] = model->minv[i] * p1[i];
    dh->f[i] = dh->r0[i] = dh->r1[i] = 0;
  }
  PetscCall(MbsOpGradientAdd(model, dh->qt, -1.0, dh->f));
  if (st->has_forces) PetscCall(MbsOpForceAdd(model, st->q0, q1, st->hstep, st->tmid, 1.0, dh->f));
  if (st->force) {
    const PetscScalar *fe;
    PetscCall(VecGetArrayRead(st->Fext, &fe));
    for (PetscInt i = 0; i < model->nq_local; i++) dh->f[i] += fe[i];
    PetscCall(VecRestoreArrayRead(st->Fext, &fe));
  }
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[0], st->tstep[0]));
  PetscCall(MbsOpGTMultAdd(model, st->q0, x + sys->loff[DH_LAM], 1.0, MBS_SCALE_NONE, dh->r0));
  if (model->nvcon)
    PetscCall(MbsOpVConstraintTMultAdd(model, st->q0, x + sys->loff[DH_NU], 1.0, MBS_SCALE_NONE, dh->r0));
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[1], st->tstep[1]));
  PetscCall(MbsOpGTMultAdd(model, q1, x + sys->loff[DH_MU], 1.0, MBS_SCALE_NONE, dh->r1));
  if (model->nvcon) PetscCall(MbsOpVConstraintTMultAdd(model, q1, x + sys->loff[DH_NU1], 1.0, MBS_SCALE_NONE, dh->r1));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeResidual_DH(MbsStepper st, const PetscScalar *x, PetscScalar *f)
{
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  MbsDH             *dh    = (MbsDH *)st->data;
  const PetscReal    h = st->hstep, tau = dh->tau;
  const PetscScalar *q1 = x + sys->loff[DH_Q], *p1 = x + sys->loff[DH_P], *xi = x + sys->loff[DH_XI];
  PetscScalar       *fq = f + sys->loff[DH_Q], *fp = f + sys->loff[DH_P], *fxi = f + sys->loff[DH_XI];

  PetscFunctionBegin;
  PetscCall(MbsDHPrepare(st, x));
  for (PetscInt k = 0; k < model->nowned; k++) { /* the bodies' own terms */
    const PetscInt b = model->owned_body[k], lq = model->body_lq[b], nb = 3 * model->body_type[b];
    MbsDHBody      bd;
    PetscReal      qt[12], xib[12], q0[12], qb1[12], psixi[12], p[12], F[12], t0[12], t1[12];
    DHBodyData(model, b, &bd);
    for (PetscInt i = 0; i < nb; i++) {
      qt[i]  = PetscRealPart(dh->qt[lq + i]);
      xib[i] = PetscRealPart(xi[lq + i]);
      q0[i]  = PetscRealPart(st->q0[lq + i]);
      qb1[i] = PetscRealPart(q1[lq + i]);
      t0[i]  = PetscRealPart(st->p0[lq + i]);
      t1[i]  = PetscRealPart(p1[lq + i]);
    }
    DHBodyEval(&bd, qt, xib, NULL, NULL, psixi, p, F);
    DHFrameT(&bd, q0, t0, t0);
    DHFrameT(&bd, qb1, t1, t1);
    for (PetscInt i = 0; i < nb; i++) {
      fq[lq + i]  = dh->dq[lq + i] / h - psixi[i];
      fxi[lq + i] = p[i] - (1 - tau) * h * F[i] - t0[i];
      fp[lq + i]  = t1[i] - p[i] - tau * h * F[i];
    }
  }
  /* the coupled terms, over every ghosted triple (ghost parts reach their owners) */
  DHFillRowT(model, st->q0, dh->rowT);
  DHApplyRowT(model, dh->rowT, dh->r0, h, fxi);
  DHFillRowT(model, q1, dh->rowT);
  DHApplyRowT(model, dh->rowT, dh->r1, 0.5 * h, fp);
  DHFillRowT(model, dh->qt, dh->rowT);
  DHApplyRowT(model, dh->rowT, dh->f, -(1 - tau) * h, fxi);
  DHApplyRowT(model, dh->rowT, dh->f, -tau * h, fp);
  /* the constraints */
  PetscCall(MbsOpConstraintGMultAdd(model, q1, dh->v1, 1.0, f + sys->loff[DH_LAM], 1.0, f + sys->loff[DH_MU]));
  PetscCall(MbsOpConstraintRateAdd(model, q1, st->tstep[1], 1.0, f + sys->loff[DH_MU]));
  if (model->nvcon) {
    PetscCall(MbsOpVConstraintAdd(model, dh->qt, dh->dq, 1.0 / h, f + sys->loff[DH_NU]));
    PetscCall(MbsOpVConstraintAdd(model, q1, dh->v1, 1.0, f + sys->loff[DH_NU1]));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeJacobian_DH(MbsStepper st, const PetscScalar *x)
{
  const MbsModel     model = st->model;
  const MbsSystem    sys   = st->sys;
  MbsDH             *dh    = (MbsDH *)st->data;
  const PetscReal    h = st->hstep, tau = dh->tau;
  const PetscScalar *q1 = x + sys->loff[DH_Q], *p1 = x + sys->loff[DH_P], *xi = x + sys->loff[DH_XI],
                    *mu = x + sys->loff[DH_MU];

  PetscFunctionBegin;
  PetscCall(MbsDHPrepare(st, x));
  /* the applied forces and r1 whole on every body, for the derivatives of psi^T */
  PetscCall(MbsModelAssembleLocal(model, dh->f, dh->work));
  PetscCall(MbsModelAssembleLocal(model, dh->r1, dh->work));
  PetscCall(MbsJacAddIdentity(sys, DH_Q, DH_Q, 1.0 / h, MBS_SCALE_NONE));
  for (PetscInt k = 0; k < model->nowned; k++) { /* the bodies' own terms */
    const PetscInt b = model->owned_body[k], lq = model->body_lq[b], nb = 3 * model->body_type[b];
    MbsDHBody      bd;
    PetscReal      qt[12], xib[12], qb1[12], y[12], e[12], dpsi[12], dp[12], dF[12], D[144];
    PetscReal      Jqq[144], Jqx[144], Jxq[144], Jxx[144], Jpq[144], Jpx[144], Jpp[144];
    PetscInt       idx[12];
    DHBodyData(model, b, &bd);
    for (PetscInt i = 0; i < nb; i++) {
      qt[i]  = PetscRealPart(dh->qt[lq + i]);
      xib[i] = PetscRealPart(xi[lq + i]);
      qb1[i] = PetscRealPart(q1[lq + i]);
      idx[i] = lq + i;
      e[i]   = 0;
    }
    for (PetscInt j = 0; j < 2 * nb; j++) { /* column j: q1 (j < nb) or xi */
      const PetscBool isq = (PetscBool)(j < nb);
      e[isq ? j : j - nb] = 1;
      DHBodyEval(&bd, qt, xib, isq ? e : NULL, isq ? NULL : e, dpsi, dp, dF);
      e[isq ? j : j - nb] = 0;
      for (PetscInt i = 0; i < nb; i++) {
        const PetscInt c = isq ? j : j - nb;
        if (isq) { /* d/dq1 = tau d/dq_tau */
          Jqq[i * nb + c] = -tau * dpsi[i];
          Jxq[i * nb + c] = tau * (dp[i] - (1 - tau) * h * dF[i]);
          Jpq[i * nb + c] = -tau * (dp[i] + tau * h * dF[i]);
        } else {
          Jqx[i * nb + c] = -dpsi[i];
          Jxx[i * nb + c] = dp[i] - (1 - tau) * h * dF[i];
          Jpx[i * nb + c] = -(dp[i] + tau * h * dF[i]);
        }
      }
    }
    if (bd.rigid) { /* the frames' own dependence: psi(q_tau)^T f and psi(q1)^T p1^- */
      for (PetscInt i = 0; i < nb; i++) y[i] = PetscRealPart(dh->f[lq + i]);
      DHFrameTDerivative(y, D);
      for (PetscInt i = 0; i < nb * nb; i++) {
        Jxq[i] -= (1 - tau) * h * tau * D[i];
        Jpq[i] -= tau * h * tau * D[i];
      }
      for (PetscInt i = 0; i < nb; i++) y[i] = PetscRealPart(p1[lq + i] + 0.5 * h * dh->r1[lq + i]);
      DHFrameTDerivative(y, D);
      for (PetscInt i = 0; i < nb * nb; i++) Jpq[i] += D[i];
    }
    for (PetscInt i = 0; i < nb; i++) /* psi(q1)^T on p1 */
      for (PetscInt c = 0; c < nb; c++)
        Jpp[i * nb + c] = bd.rigid ? ((i / 3 == c / 3) ? qb1[3 + 3 * (i % 3) + c % 3] : 0) : (i == c);
    PetscCall(MbsJacAddBlock(sys, DH_Q, nb, idx, DH_Q, nb, idx, Jqq, 1.0, MBS_SCALE_NONE));
    PetscCall(MbsJacAddBlock(sys, DH_Q, nb, idx, DH_XI, nb, idx, Jqx, 1.0, MBS_SCALE_NONE));
    PetscCall(MbsJacAddBlock(sys, DH_XI, nb, idx, DH_Q, nb, idx, Jxq, 1.0, MBS_SCALE_NONE));
    PetscCall(MbsJacAddBlock(sys, DH_XI, nb, idx, DH_XI, nb, idx, Jxx, 1.0, MBS_SCALE_NONE));
    PetscCall(MbsJacAddBlock(sys, DH_P, nb, idx, DH_Q, nb, idx, Jpq, 1.0, MBS_SCALE_NONE));
    PetscCall(MbsJacAddBlock(sys, DH_P, nb, idx, DH_P, nb, idx, Jpp, 1.0, MBS_SCALE_NONE));
    PetscCall(MbsJacAddBlock(sys, DH_P, nb, idx, DH_XI, nb, idx, Jpx, 1.0, MBS_SCALE_NONE));
  }
  /* the coupled terms, their rows through the frames */
  sys->rowT = dh->rowT;
  DHFillRowT(model, st->q0, dh->rowT);
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[0], st->tstep[0]));
  PetscCall(MbsJacAddGT(sys, DH_XI, DH_LAM, st->q0, h, MBS_SCALE_ROWT));
  if (model->nvcon) PetscCall(MbsJacAddAT(sys, DH_XI, DH_NU, st->q0, h, MBS_SCALE_ROWT));
  DHFillRowT(model, dh->qt, dh->rowT);
  PetscCall(MbsJacAddPotentialHessian(sys, DH_XI, DH_Q, dh->qt, (1 - tau) * h * tau, MBS_SCALE_ROWT));
  PetscCall(MbsJacAddPotentialHessian(sys, DH_P, DH_Q, dh->qt, tau * h * tau, MBS_SCALE_ROWT));
  if (st->has_forces) {
    PetscCall(MbsJacAddForceWeights(sys, DH_XI, DH_Q, st->q0, q1, h, st->tmid, -0.5 * (1 - tau) * h, -(1 - tau),
                                    MBS_SCALE_ROWT));
    PetscCall(MbsJacAddForceWeights(sys, DH_P, DH_Q, st->q0, q1, h, st->tmid, -0.5 * tau * h, -tau, MBS_SCALE_ROWT));
  }
  DHFillRowT(model, q1, dh->rowT);
  PetscCall(MbsModelSetConstraintTime(model, st->tstep[1], st->tstep[1]));
  PetscCall(MbsJacAddT(sys, DH_P, DH_Q, mu, 0.5 * h, MBS_SCALE_ROWT));
  PetscCall(MbsJacAddGT(sys, DH_P, DH_MU, q1, 0.5 * h, MBS_SCALE_ROWT));
  if (model->nvcon) {
    PetscCall(MbsJacAddATmu(sys, DH_P, DH_Q, q1, x + sys->loff[DH_NU1], 0.5 * h, MBS_SCALE_ROWT));
    PetscCall(MbsJacAddAT(sys, DH_P, DH_NU1, q1, 0.5 * h, MBS_SCALE_ROWT));
  }
  sys->rowT = NULL;
  /* the constraints */
  PetscCall(MbsJacAddG(sys, DH_LAM, DH_Q, q1, 1.0, MBS_SCALE_NONE));
  PetscCall(MbsJacAddHwT(sys, DH_MU, DH_Q, dh->v1, 1.0));
  PetscCall(MbsJacAddConstraintRate(sys, DH_MU, DH_Q, q1, st->tstep[1], 1.0));
  PetscCall(MbsJacAddG(sys, DH_MU, DH_P, q1, 1.0, MBS_SCALE_MINV_COL));
  if (model->nvcon) {
    PetscCall(MbsJacAddA(sys, DH_NU, DH_Q, dh->qt, 1.0 / h, MBS_SCALE_NONE));
    PetscCall(MbsJacAddAw(sys, DH_NU, DH_Q, dh->qt, dh->dq, tau / h, MBS_SCALE_NONE));
    PetscCall(MbsJacAddAw(sys, DH_NU1, DH_Q, q1, dh->v1, 1.0, MBS_SCALE_NONE));
    PetscCall(MbsJacAddA(sys, DH_NU1, DH_P, q1, 1.0, MBS_SCALE_MINV_COL));
  }
  PetscFunctionReturn(0);
}

/* The quasi-velocities of the start state, psi(q0)^-1 M^-1 p0, as the initial guess of xi */
static PetscErrorCode MbsSchemePredict_DH(MbsStepper st)
{
  const MbsModel     model = st->model;
  const PetscScalar *q, *p;
  PetscScalar       *xs;
  Vec                sub;

  PetscFunctionBegin;
  PetscCall(VecGetArrayRead(st->q, &q));
  PetscCall(VecGetArrayRead(st->p, &p));
  PetscCall(VecGetSubVector(st->X, st->sys->is[DH_XI], &sub));
  PetscCall(VecGetArray(sub, &xs));
  for (PetscInt k = 0; k < model->nowned; k++) {
    const PetscInt b = model->owned_body[k], lq = model->body_lq[b];
    for (PetscInt i = 0; i < 3 * (PetscInt)model->body_type[b]; i++) xs[lq + i] = model->minv[lq + i] * p[lq + i];
    if (model->body_type[b] == MBS_BODY_RIGID) { /* solve R x = v block by block (Cramer) */
      PetscReal R[3][3], det, y[3];
      for (int l = 0; l < 3; l++)
        for (int a = 0; a < 3; a++) R[l][a] = PetscRealPart(q[lq + 3 * (1 + a) + l]);
      det = R[0][0] * (R[1][1] * R[2][2] - R[1][2] * R[2][1]) - R[0][1] * (R[1][0] * R[2][2] - R[1][2] * R[2][0]) +
            R[0][2] * (R[1][0] * R[2][1] - R[1][1] * R[2][0]);
      if (det == 0) continue;
      for (int blk = 0; blk < 4; blk++) {
        PetscScalar *v = xs + lq + 3 * blk;
        for (int c = 0; c < 3; c++) {
          PetscReal Mc[3][3];
          for (int l = 0; l < 3; l++)
            for (int a = 0; a < 3; a++) Mc[l][a] = a == c ? PetscRealPart(v[l]) : R[l][a];
          y[c] = (Mc[0][0] * (Mc[1][1] * Mc[2][2] - Mc[1][2] * Mc[2][1]) -
                  Mc[0][1] * (Mc[1][0] * Mc[2][2] - Mc[1][2] * Mc[2][0]) +
                  Mc[0][2] * (Mc[1][0] * Mc[2][1] - Mc[1][1] * Mc[2][0])) /
                 det;
        }
        for (int c = 0; c < 3; c++) v[c] = y[c];
      }
    }
  }
  PetscCall(VecRestoreArray(sub, &xs));
  PetscCall(VecRestoreSubVector(st->X, st->sys->is[DH_XI], &sub));
  PetscCall(VecRestoreArrayRead(st->p, &p));
  PetscCall(VecRestoreArrayRead(st->q, &q));
  PetscFunctionReturn(0);
}

/* The constraint forces of a step: h (G(q_n)^T lambda + A(q_n)^T nu) + h/2 (G(q_{n+1})^T mu + A(q_{n+1})^T nu1) */
static PetscErrorCode MbsSchemeReactionTerms_DH(MbsStepper st, PetscInt *n, MbsReactionTerm terms[])
{
  PetscFunctionBegin;
  *n       = 2;
  terms[0] = (MbsReactionTerm){DH_LAM, 0.0, 1.0};
  terms[1] = (MbsReactionTerm){DH_MU, 1.0, 0.5};
  if (st->model->nvcon) {
    terms[(*n)++] = (MbsReactionTerm){DH_NU, 0.0, 1.0};
    terms[(*n)++] = (MbsReactionTerm){DH_NU1, 1.0, 0.5};
  }
  PetscFunctionReturn(0);
}

/* DH: G(q_n)^T lambda */
static PetscErrorCode MbsSchemeConstraintForceWeight_DH(MbsStepper st, PetscReal *w)
{
  PetscFunctionBegin;
  (void)st;
  *w = 0.0;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeView_DH(MbsStepper st, PetscViewer viewer)
{
  PetscFunctionBegin;
  PetscCall(PetscViewerASCIIPrintf(viewer, "  DH: body frames, tau = %g\n", (double)((MbsDH *)st->data)->tau));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeDestroy_DH(MbsStepper st)
{
  MbsDH *dh = (MbsDH *)st->data;

  PetscFunctionBegin;
  PetscCall(VecDestroy(&dh->work));
  PetscCall(PetscFree7(dh->rowT, dh->f, dh->r0, dh->r1, dh->qt, dh->dq, dh->v1));
  PetscCall(PetscFree(st->data));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsSchemeCreate_DH(MbsStepper st)
{
  MbsDH *dh;

  PetscFunctionBegin;
  PetscCall(PetscNew(&dh));
  dh->tau                          = 0.5;
  st->data                         = dh;
  st->ops->setup                   = MbsSchemeSetUp_DH;
  st->ops->residual                = MbsSchemeResidual_DH;
  st->ops->schur_amg               = PETSC_TRUE; /* tests/test_solvers.c: LU's trajectory, exact at zero multipliers */
  st->ops->jacobian                = MbsSchemeJacobian_DH;
  st->ops->predict                 = MbsSchemePredict_DH;
  st->ops->constraint_force_weight = MbsSchemeConstraintForceWeight_DH;
  st->ops->view                    = MbsSchemeView_DH;
  st->ops->destroy                 = MbsSchemeDestroy_DH;
  st->ops->own_forces              = PETSC_TRUE;
  st->ops->velocity_constraints    = PETSC_TRUE;
  st->ops->reaction_terms          = MbsSchemeReactionTerms_DH;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSchemeRegister_DH(void)
{
  PetscFunctionBegin;
  PetscCall(PetscFunctionListAdd(&MbsSchemeFunctions, MBSSCHEMEDH, MbsSchemeCreate_DH));
  PetscCall(
    MbsSchemeRegisterParameter(MBSSCHEMEDH, "tau", 0.5, 0.0, PETSC_FALSE, 1.0, PETSC_FALSE,
                               "DH: the interpolation point q_{n+tau} = (1-tau) q_n + tau q_{n+1} (Ball 2013)"));
  PetscFunctionReturn(0);
}

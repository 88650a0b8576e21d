/*
  Element kernels against finite differences, their discrete-gradient properties (DESIGN 2.2) and
  their values on configurations computed independently here. Prints nothing of its own when it passes
  (only the cmocka runner lines).
*/
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <gglmbs/elements/element.h>

extern const MbsElementType MbsElementTypePrismatic, MbsElementTypeCylindrical, MbsElementTypeUniversal,
  MbsElementTypeWeld, MbsElementTypePointOnLine, MbsElementTypePointOnPlane;

/* Central differences with step 1e-6 are accurate to ~1e-9 relative on these O(1) data, so 1e-7 passes
   with margin while a wrong sign or a lost factor 2 (an error of order 1) fails by seven digits. */
#define FD_STEP 1e-6
#define FD_RTOL 1e-7
/* For pi1 ~ pi0 (q1 a rigid rotation or a tiny perturbation of q0) the reference must not depend on how the
   kernel forms its secant: a generic secant (f(pi1) - f(pi0)) / (pi1 - pi0) loses eps |f| / |pi1 - pi0| to
   cancellation at the perturbed points, which a small step turns into noise of order 1e-5. A large step with
   four levels of Richardson extrapolation keeps both that noise and the truncation error near 5e-9 (|d|
   stays above 1, so the step is small against the scale of V). FD_RTOL then still tells a ddg good to
   round-off from the generic slope (f'(pi1) - s) / (pi1 - pi0), off by ~eps |f| / (pi1 - pi0)^2: 4e-5 .. 5e-4
   relative at dpi/pi = 1e-6 and O(1) at 1e-8 on these data. */
#define FD_STEP_CLOSE   0.4
#define FD_LEVELS_CLOSE 4
#define EXACT_RTOL      1e-13
/* The springs' closed-form secant against the generic one at well separated pi1, pi0, where the generic
   one is good to a few ulp of f / (pi1 - pi0) */
#define SECANT_RTOL 1e-13
#define NSEEDS      6

/* relative changes (pi1 - pi0) / pi0 of the tiny perturbations q1 of q0, each taken with both signs */
static const double close_rel_dpi[] = {1e-6, 1e-8, 1e-10};

enum { GROUND = 0, PARTICLE = 1, RIGID = 4 };

typedef struct {
  int nblocks_a, nblocks_b;
} BodyPair;

static const BodyPair point_pairs[] = {
  {PARTICLE, PARTICLE}, {PARTICLE, GROUND}, {GROUND, PARTICLE}, {RIGID, RIGID},
  {RIGID, GROUND},      {GROUND, RIGID},    {RIGID, PARTICLE},  {PARTICLE, RIGID},
};
static const BodyPair revolute_pairs[] = {{RIGID, RIGID}, {GROUND, RIGID}, {RIGID, GROUND}};
static const BodyPair single_bodies[]  = {{PARTICLE, GROUND}, {RIGID, GROUND}};
#define NPAIRS(pairs) ((int)(sizeof(pairs) / sizeof(pairs[0])))

static uint64_t rng_state;

static void RandomSeed(uint64_t seed)
{
  rng_state = 0x9E3779B97F4A7C15ull * (seed + 1);
}

/* xorshift64*, uniform in [-1, 1) */
static double Random(void)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (double)((rng_state * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-52 - 1.0;
}

static void RandomVector(double scale, double v[3])
{
  for (int k = 0; k < 3; k++) v[k] = scale * Random();
}

static double Dot(const double a[3], const double b[3])
{
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void Cross(const double a[3], const double b[3], double c[3])
{
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

static void Normalize(double v[3])
{
  const double n = sqrt(Dot(v, v));

  for (int k = 0; k < 3; k++) v[k] /= n;
}

static void RandomUnitVector(double v[3])
{
  do RandomVector(1.0, v);
  while (Dot(v, v) < 0.1);
  Normalize(v);
}

/* Rodrigues rotation matrix about a random axis by an angle in [0.5, 1.5) */
static void RandomRotation(double R[3][3])
{
  double       n[3];
  const double angle = 1.0 + 0.5 * Random(), c = cos(angle), s = sin(angle);

  RandomUnitVector(n);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) R[i][j] = (1.0 - c) * n[i] * n[j] + (i == j ? c : 0.0);
  }
  R[0][1] -= s * n[2];
  R[1][0] += s * n[2];
  R[0][2] += s * n[1];
  R[2][0] -= s * n[1];
  R[1][2] -= s * n[0];
  R[2][1] += s * n[0];
}

static void MatVec(double R[3][3], const double x[3], double y[3])
{
  for (int i = 0; i < 3; i++) y[i] = R[i][0] * x[0] + R[i][1] * x[1] + R[i][2] * x[2];
}

static const char *BodyName(int nblocks)
{
  return nblocks == GROUND ? "ground" : nblocks == PARTICLE ? "particle" : "rigid";
}

typedef struct {
  char label[96];
} Context;

static void ContextSet(Context *ctx, const char *element, BodyPair pair, int seed)
{
  snprintf(ctx->label, sizeof(ctx->label), "%s %s-%s seed %d", element, BodyName(pair.nblocks_a),
           BodyName(pair.nblocks_b), seed);
}

static void ExpectClose(const Context *ctx, const char *what, int i, int j, double value, double reference, double tol)
{
  const double err = fabs(value - reference);

  if (!(err <= tol))
    print_error("%s: %s[%d][%d] = %.17g, expected %.17g (|diff| %.3g > tol %.3g)\n", ctx->label, what, i, j, value,
                reference, err, tol);
  assert_true(err <= tol);
}

static double MaxAbs(int n, const double *a)
{
  double m = 0.0;

  for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
  return m;
}

/* value (m x n) against reference, entrywise to rtol times the largest entry of either */
static void ExpectArrayClose(const Context *ctx, const char *what, int m, int n, const double *value,
                             const double *reference, double rtol)
{
  const double tol = rtol * fmax(MaxAbs(m * n, value), MaxAbs(m * n, reference));

  for (int i = 0; i < m; i++) {
    for (int j = 0; j < n; j++) ExpectClose(ctx, what, i, j, value[i * n + j], reference[i * n + j], tol);
  }
}

/* Random element data; a ground b sits near (2.5, 0, 0), see RandomState. */
static void RandomElement(BodyPair pair, MbsElemData *e)
{
  double axis_b[3];

  memset(e, 0, sizeof(*e));
  e->nblocks_a = pair.nblocks_a;
  e->nblocks_b = pair.nblocks_b;
  RandomVector(0.5, e->Xa);
  RandomVector(0.5, e->Xb);
  if (pair.nblocks_b == GROUND) e->Xb[0] += 2.5;
  RandomUnitVector(e->axis_a);
  RandomUnitVector(axis_b);
  RandomUnitVector(e->perp_b[0]);
  Cross(axis_b, e->perp_b[0], e->perp_b[1]);
  Normalize(e->perp_b[1]);
  Cross(e->perp_b[1], axis_b, e->perp_b[0]);
  e->length    = 1.0 + 0.5 * Random();
  e->stiffness = 5.0 + 4.0 * Random();
  e->mass      = 1.5 + Random();
  RandomVector(10.0, e->gravity);
}

/* Random coordinates: directors within 0.3 of the unit vectors but not orthonormal; positions within 0.5
   of points `separation` apart along e1 (a near the origin unless b is ground, whose point lies near
   (2.5, 0, 0)), so springs stay away from |d| = 0 and states of different separation differ in pi. */
static void RandomBody(int nblocks, double offset, double *q)
{
  if (nblocks == GROUND) return;
  RandomVector(0.5, q);
  q[0] += offset;
  if (nblocks == PARTICLE) return;
  for (int i = 0; i < 3; i++) {
    RandomVector(0.3, &q[3 * (1 + i)]);
    q[3 * (1 + i) + i] += 1.0;
  }
}

static void RandomState(const MbsElemData *e, double separation, double *q)
{
  RandomBody(e->nblocks_a, e->nblocks_b == GROUND ? 2.5 - separation : 0.0, q);
  RandomBody(e->nblocks_b, separation, q + 3 * e->nblocks_a);
}

/* Material point of a body (blocks starting at q), computed here independently of the kernels */
static void PointOnBody(int nblocks, const double X[3], const double *q, double x[3])
{
  for (int k = 0; k < 3; k++) {
    if (nblocks == GROUND) {
      x[k] = X[k];
    } else if (nblocks == PARTICLE) {
      x[k] = q[k];
    } else {
      x[k] = q[k] + X[0] * q[3 + k] + X[1] * q[6 + k] + X[2] * q[9 + k];
    }
  }
}

static void PointDifference(const MbsElemData *e, const double *q, double d[3])
{
  double xa[3], xb[3];

  PointOnBody(e->nblocks_a, e->Xa, q, xa);
  PointOnBody(e->nblocks_b, e->Xb, q + 3 * e->nblocks_a, xb);
  for (int k = 0; k < 3; k++) d[k] = xa[k] - xb[k];
}

/* q1 = q0 rotated rigidly by R about the point p: positions x -> p + R (x - p), directors d -> R d. With p the
   ground point (or the origin between two free bodies), |x_a - x_b| and hence pi is unchanged. */
static void RotateBody(int nblocks, double R[3][3], const double p[3], const double *q0, double *q1)
{
  double x[3];

  if (nblocks == GROUND) return;
  for (int k = 0; k < 3; k++) x[k] = q0[k] - p[k];
  MatVec(R, x, q1);
  for (int k = 0; k < 3; k++) q1[k] += p[k];
  for (int j = 1; j < nblocks; j++) MatVec(R, &q0[3 * j], &q1[3 * j]);
}

static void RotateState(const MbsElemData *e, double R[3][3], const double *q0, double *q1)
{
  double p[3] = {0.0, 0.0, 0.0};

  if (e->nblocks_a == GROUND) memcpy(p, e->Xa, sizeof(p));
  if (e->nblocks_b == GROUND) memcpy(p, e->Xb, sizeof(p));
  RotateBody(e->nblocks_a, R, p, q0, q1);
  RotateBody(e->nblocks_b, R, p, q0 + 3 * e->nblocks_a, q1 + 3 * e->nblocks_a);
}

typedef struct {
  const MbsElemKernel *kernel;
  const MbsElemData   *e;
  const double        *q0; /* first argument of the discrete gradient */
} Closure;

typedef void (*VectorFunction)(const Closure *c, const double *x, double *y);

static void EvalConstraint(const Closure *c, const double *q, double *g)
{
  c->kernel->constraint(c->e, q, g, NULL);
}

static void EvalConstraintJacobian(const Closure *c, const double *q, double *G)
{
  double g[MBS_ELEM_MAX_CON];

  c->kernel->constraint(c->e, q, g, G);
}

static void EvalEnergy(const Closure *c, const double *q, double *V)
{
  V[0] = c->kernel->energy(c->e, q);
}

static void EvalGradient(const Closure *c, const double *q, double *dV)
{
  c->kernel->gradient(c->e, q, dV);
}

static void EvalDiscreteGradient(const Closure *c, const double *q1, double *dg)
{
  c->kernel->discrete_gradient(c->e, c->q0, q1, dg, NULL);
}

/* J (m x n), J[i n + j] = dy_i/dx_j, by central differences with steps h, h/2, ..., h/2^(levels-1)
   combined by Richardson extrapolation (levels = 1: the plain central difference, error O(h^2)) */
#define FD_MAX_LEVELS 4
static void FiniteDifference(VectorFunction fn, const Closure *c, int m, int n, const double *x, double h, int levels,
                             double *J)
{
  double xp[MBS_ELEM_MAX_NQ], yp[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ], ym[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ];
  double T[FD_MAX_LEVELS][FD_MAX_LEVELS][MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ];

  for (int j = 0; j < n; j++) {
    for (int l = 0; l < levels; l++) {
      const double step = ldexp(h, -l);

      memcpy(xp, x, sizeof(double) * n);
      xp[j] = x[j] + step;
      fn(c, xp, yp);
      xp[j] = x[j] - step;
      fn(c, xp, ym);
      for (int i = 0; i < m; i++) {
        T[l][0][i] = (yp[i] - ym[i]) / (2.0 * step);
        for (int k = 1; k <= l; k++)
          T[l][k][i] = T[l][k - 1][i] + (T[l][k - 1][i] - T[l - 1][k - 1][i]) / (ldexp(1.0, 2 * k) - 1.0);
      }
    }
    for (int i = 0; i < m; i++) J[i * n + j] = T[levels - 1][levels - 1][i];
  }
}

static void CheckConstraint(const Context *ctx, const MbsElemKernel *kernel, const MbsElemData *e, const double *q)
{
  const int ncon = kernel->ncon, nq = MbsElemNq(e);
  double    g[MBS_ELEM_MAX_CON], g_only[MBS_ELEM_MAX_CON], G[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ],
    H[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];
  double  fd[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];
  Closure c = {kernel, e, NULL};

  kernel->constraint(e, q, g, G);
  kernel->constraint(e, q, g_only, NULL);
  ExpectArrayClose(ctx, "g without G", 1, ncon, g_only, g, 0.0);

  FiniteDifference(EvalConstraint, &c, ncon, nq, q, FD_STEP, 1, fd);
  ExpectArrayClose(ctx, "G vs FD of g", ncon, nq, G, fd, FD_RTOL);

  kernel->constraint_hessian(e, H);
  FiniteDifference(EvalConstraintJacobian, &c, ncon * nq, nq, q, FD_STEP, 1, fd);
  ExpectArrayClose(ctx, "H vs FD of G", ncon * nq, nq, H, fd, FD_RTOL);
  for (int k = 0; k < ncon; k++) {
    for (int i = 0; i < nq; i++) {
      for (int j = 0; j < nq; j++)
        ExpectClose(ctx, "H symmetry", k * nq + i, j, H[(k * nq + i) * nq + j], H[(k * nq + j) * nq + i], 0.0);
    }
  }
  /* an element that says it is affine must have H = 0; a closed-form T(mu) w must match the dense H */
  if (kernel->linear) {
    for (int i = 0; i < ncon * nq * nq; i++) ExpectClose(ctx, "H of an affine constraint", i, 0, H[i], 0.0, 0.0);
  }
  /* an element whose Hessian blocks are said to be multiples of I_3 has exactly that: Jacobians store only the blocks'
     diagonals (MbsJacAddT()) */
  if (kernel->hessian_isotropic) {
    for (int k = 0; k < ncon; k++)
      for (int i = 0; i < nq; i++)
        for (int j = 0; j < nq; j++) {
          const double *Hk = H + (size_t)k * nq * nq, want = i % 3 == j % 3 ? Hk[(i - i % 3) * nq + j - j % 3] : 0.0;
          ExpectClose(ctx, "isotropic H block", k * nq + i, j, Hk[i * nq + j], want, 0.0);
        }
  }
  if (kernel->constraint_hessian_mult) {
    double mu[MBS_ELEM_MAX_CON], w[MBS_ELEM_MAX_NQ], out[MBS_ELEM_MAX_NQ], dense[MBS_ELEM_MAX_NQ];
    for (int k = 0; k < ncon; k++) mu[k] = 0.7 - 0.3 * k;
    for (int i = 0; i < nq; i++) w[i] = 0.1 * (i % 5) - 0.25 + 0.03 * i;
    kernel->constraint_hessian_mult(e, mu, w, out);
    for (int i = 0; i < nq; i++) {
      dense[i] = 0;
      for (int k = 0; k < ncon; k++)
        for (int j = 0; j < nq; j++) dense[i] += mu[k] * H[(k * nq + i) * nq + j] * w[j];
    }
    ExpectArrayClose(ctx, "T(mu) w closed form vs dense H", 1, nq, out, dense, 1e-14);
  }
}

/* Discrete gradient at (q0, q1): its derivative in q1 against finite differences, directionality, and
   for a rotation-invariant potential between two free bodies sum_j (e_l x Qm_j) . dg_j = 0 */
static void CheckDiscreteGradient(const Context *ctx, const MbsElemKernel *kernel, const MbsElemData *e,
                                  const double *q0, const double *q1, int close, int rotation_invariant)
{
  const int nq = MbsElemNq(e);
  double    dg[MBS_ELEM_MAX_NQ], dg_only[MBS_ELEM_MAX_NQ], ddg[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ],
    fd[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];
  double  V0, V1, work = 0.0, scale;
  Closure c = {kernel, e, q0};

  kernel->discrete_gradient(e, q0, q1, dg, ddg);
  kernel->discrete_gradient(e, q0, q1, dg_only, NULL);
  ExpectArrayClose(ctx, "dg without ddg", 1, nq, dg_only, dg, 0.0);

  if (close) {
    FiniteDifference(EvalDiscreteGradient, &c, nq, nq, q1, FD_STEP_CLOSE, FD_LEVELS_CLOSE, fd);
  } else {
    FiniteDifference(EvalDiscreteGradient, &c, nq, nq, q1, FD_STEP, 1, fd);
  }
  ExpectArrayClose(ctx, close ? "ddg vs FD of dg (pi1 ~ pi0)" : "ddg vs FD of dg (pi1, pi0 apart)", nq, nq, ddg, fd,
                   FD_RTOL);

  V0    = kernel->energy(e, q0);
  V1    = kernel->energy(e, q1);
  scale = fabs(V0) + fabs(V1);
  for (int i = 0; i < nq; i++) {
    work += dg[i] * (q1[i] - q0[i]);
    scale += fabs(dg[i] * (q1[i] - q0[i]));
  }
  ExpectClose(ctx, "dg.(q1 - q0) vs V(q1) - V(q0)", 0, 0, work, V1 - V0, 1e-12 * scale);

  if (!rotation_invariant || e->nblocks_a == GROUND || e->nblocks_b == GROUND) return;
  for (int l = 0; l < 3; l++) {
    const double axis[3] = {l == 0, l == 1, l == 2};
    double       torque = 0.0, torque_scale = 0.0;

    for (int j = 0; j < nq / 3; j++) {
      double qm[3], exq[3];

      for (int k = 0; k < 3; k++) qm[k] = 0.5 * (q0[3 * j + k] + q1[3 * j + k]);
      Cross(axis, qm, exq);
      torque += Dot(exq, &dg[3 * j]);
      torque_scale += sqrt(Dot(qm, qm) * Dot(&dg[3 * j], &dg[3 * j]));
    }
    ExpectClose(ctx, "sum_j (e x Qm_j) . dg_j", l, 0, torque, 0.0, EXACT_RTOL * torque_scale);
  }
}

static void CheckPotential(const Context *ctx, const MbsElemKernel *kernel, const MbsElemData *e, const double *q0,
                           const double *q1, int rotation_invariant)
{
  const int nq = MbsElemNq(e);
  double    dV[MBS_ELEM_MAX_NQ], d2V[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ], dg[MBS_ELEM_MAX_NQ],
    ddg[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];
  double  fd[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ], q_rotated[MBS_ELEM_MAX_NQ], R[3][3];
  Closure c = {kernel, e, NULL};

  kernel->gradient(e, q0, dV);
  FiniteDifference(EvalEnergy, &c, 1, nq, q0, FD_STEP, 1, fd);
  ExpectArrayClose(ctx, "gradient vs FD of energy", 1, nq, dV, fd, FD_RTOL);

  kernel->hessian(e, q0, d2V);
  FiniteDifference(EvalGradient, &c, nq, nq, q0, FD_STEP, 1, fd);
  ExpectArrayClose(ctx, "hessian vs FD of gradient", nq, nq, d2V, fd, FD_RTOL);
  /* a potential said to be affine has no second derivatives, which Jacobians then leave out */
  if (kernel->linear) {
    for (int i = 0; i < nq * nq; i++) ExpectClose(ctx, "hessian of an affine potential", i, 0, d2V[i], 0.0, 0.0);
  }
  for (int i = 0; i < nq; i++) {
    for (int j = 0; j < nq; j++) ExpectClose(ctx, "hessian symmetry", i, j, d2V[i * nq + j], d2V[j * nq + i], 0.0);
  }

  /* dg(q, q) = DV(q); and since dg is symmetric in (q0, q1), d(dg)/dq1 at q1 = q0 is half the Hessian */
  kernel->discrete_gradient(e, q0, q0, dg, ddg);
  ExpectArrayClose(ctx, "dg(q, q) vs gradient(q)", 1, nq, dg, dV, EXACT_RTOL);
  for (int i = 0; i < nq * nq; i++) d2V[i] *= 0.5;
  ExpectArrayClose(ctx, "ddg(q, q) vs hessian(q) / 2", nq, nq, ddg, d2V, EXACT_RTOL);

  CheckDiscreteGradient(ctx, kernel, e, q0, q1, 0, rotation_invariant);
  if (!rotation_invariant) return;
  RandomRotation(R);
  RotateState(e, R, q0, q_rotated);
  ExpectClose(ctx, "V after rigid rotation", 0, 0, kernel->energy(e, q_rotated), kernel->energy(e, q0),
              EXACT_RTOL * fabs(kernel->energy(e, q0)));
  CheckDiscreteGradient(ctx, kernel, e, q0, q_rotated, 1, rotation_invariant);
}

static void CheckKernelSlots(const MbsElemKernel *kernel, const char *name, int ncon)
{
  assert_string_equal(kernel->name, name);
  assert_int_equal(kernel->ncon, ncon);
  if (ncon > 0) {
    assert_non_null(kernel->constraint);
    assert_non_null(kernel->constraint_hessian);
    assert_null(kernel->energy);
    assert_null(kernel->gradient);
    assert_null(kernel->hessian);
    assert_null(kernel->discrete_gradient);
  } else {
    assert_null(kernel->constraint);
    assert_null(kernel->constraint_hessian);
    assert_non_null(kernel->energy);
    assert_non_null(kernel->gradient);
    assert_non_null(kernel->hessian);
    assert_non_null(kernel->discrete_gradient);
  }
}

static void TestPointDifference(void **state)
{
  (void)state;
  for (int p = 0; p < NPAIRS(point_pairs); p++) {
    for (int seed = 0; seed < NSEEDS; seed++) {
      const int   nblocks = point_pairs[p].nblocks_a + point_pairs[p].nblocks_b;
      MbsElemData e;
      double      q[MBS_ELEM_MAX_NQ], w[MBS_ELEM_MAX_BLOCKS], c[3], d[3], d_ref[3];
      Context     ctx;

      ContextSet(&ctx, "point difference", point_pairs[p], seed);
      RandomSeed(seed);
      RandomElement(point_pairs[p], &e);
      RandomState(&e, 2.5, q);
      MbsElemPointDifference(&e, w, c);
      MbsElemPointDifferenceEval(nblocks, w, c, q, d);
      PointDifference(&e, q, d_ref);
      ExpectArrayClose(&ctx, "x_a - x_b", 1, 3, d, d_ref, 1e-15);
    }
  }
}

static void TestRigidBody(void **state)
{
  const BodyPair pair = {RIGID, GROUND};

  (void)state;
  CheckKernelSlots(&MbsElemKernelRigidBody, "rigid_body", 6);
  for (int seed = 0; seed < NSEEDS; seed++) {
    MbsElemData e;
    double      q[12], g[6], g_ref[6], R[3][3];
    Context     ctx;

    ContextSet(&ctx, "rigid_body", pair, seed);
    RandomSeed(seed);
    RandomElement(pair, &e);
    RandomState(&e, 2.5, q);
    CheckConstraint(&ctx, &MbsElemKernelRigidBody, &e, q);

    MbsElemKernelRigidBody.constraint(&e, q, g, NULL);
    for (int i = 0; i < 3; i++) g_ref[i] = 0.5 * (Dot(&q[3 * (1 + i)], &q[3 * (1 + i)]) - 1.0);
    g_ref[3] = Dot(&q[3], &q[6]);
    g_ref[4] = Dot(&q[3], &q[9]);
    g_ref[5] = Dot(&q[6], &q[9]);
    ExpectArrayClose(&ctx, "g", 1, 6, g, g_ref, 1e-15);

    /* the directors of an orthonormal frame are the columns of a rotation matrix */
    RandomRotation(R);
    for (int i = 0; i < 3; i++) {
      for (int k = 0; k < 3; k++) q[3 * (1 + i) + k] = R[k][i];
    }
    MbsElemKernelRigidBody.constraint(&e, q, g, NULL);
    for (int k = 0; k < 6; k++) ExpectClose(&ctx, "g on an orthonormal frame", k, 0, g[k], 0.0, 1e-15);
  }
}

static void TestSpherical(void **state)
{
  (void)state;
  CheckKernelSlots(&MbsElemKernelSpherical, "spherical", 3);
  for (int p = 0; p < NPAIRS(point_pairs); p++) {
    for (int seed = 0; seed < NSEEDS; seed++) {
      MbsElemData e;
      double      q[MBS_ELEM_MAX_NQ], g[3], d[3];
      Context     ctx;

      ContextSet(&ctx, "spherical", point_pairs[p], seed);
      RandomSeed(seed);
      RandomElement(point_pairs[p], &e);
      RandomState(&e, 2.5, q);
      CheckConstraint(&ctx, &MbsElemKernelSpherical, &e, q);
      MbsElemKernelSpherical.constraint(&e, q, g, NULL);
      PointDifference(&e, q, d);
      ExpectArrayClose(&ctx, "g = x_a - x_b", 1, 3, g, d, 1e-15);
    }
  }
}

static void TestRod(void **state)
{
  (void)state;
  CheckKernelSlots(&MbsElemKernelRod, "rod", 1);
  for (int p = 0; p < NPAIRS(point_pairs); p++) {
    for (int seed = 0; seed < NSEEDS; seed++) {
      MbsElemData e;
      double      q[MBS_ELEM_MAX_NQ], g, d[3], g_ref;
      Context     ctx;

      ContextSet(&ctx, "rod", point_pairs[p], seed);
      RandomSeed(seed);
      RandomElement(point_pairs[p], &e);
      RandomState(&e, 2.5, q);
      CheckConstraint(&ctx, &MbsElemKernelRod, &e, q);
      MbsElemKernelRod.constraint(&e, q, &g, NULL);
      PointDifference(&e, q, d);
      g_ref = 0.5 * (Dot(d, d) / (e.length * e.length) - 1.0);
      ExpectClose(&ctx, "g", 0, 0, g, g_ref, 1e-14 * fabs(g_ref));
    }
  }
}

static void TestRevolute(void **state)
{
  (void)state;
  CheckKernelSlots(&MbsElemKernelRevolute, "revolute", 5);
  for (int p = 0; p < NPAIRS(revolute_pairs); p++) {
    for (int seed = 0; seed < NSEEDS; seed++) {
      MbsElemData e;
      double      q[MBS_ELEM_MAX_NQ], g[5], g_ref[5], n_a[3], b[3];
      Context     ctx;

      ContextSet(&ctx, "revolute", revolute_pairs[p], seed);
      RandomSeed(seed);
      RandomElement(revolute_pairs[p], &e);
      RandomState(&e, 2.5, q);
      CheckConstraint(&ctx, &MbsElemKernelRevolute, &e, q);

      MbsElemKernelRevolute.constraint(&e, q, g, NULL);
      PointDifference(&e, q, g_ref);
      /* a director vector is the material point X = coef of a body without translation */
      if (e.nblocks_a == RIGID) {
        PointOnBody(RIGID, e.axis_a, q, n_a);
        for (int k = 0; k < 3; k++) n_a[k] -= q[k];
      } else {
        memcpy(n_a, e.axis_a, sizeof(n_a));
      }
      for (int k = 0; k < 2; k++) {
        if (e.nblocks_b == RIGID) {
          const double *qb = q + 3 * e.nblocks_a;

          PointOnBody(RIGID, e.perp_b[k], qb, b);
          for (int l = 0; l < 3; l++) b[l] -= qb[l];
        } else {
          memcpy(b, e.perp_b[k], sizeof(b));
        }
        g_ref[3 + k] = Dot(n_a, b);
      }
      ExpectArrayClose(&ctx, "g", 1, 5, g, g_ref, 1e-14);
    }
  }
}

/* Both revolute rows vanish when a's axis and b's axis coincide in the world. */
static void TestRevoluteAligned(void **state)
{
  const BodyPair pair = {RIGID, RIGID};

  (void)state;
  for (int seed = 0; seed < NSEEDS; seed++) {
    MbsElemData e;
    double      q[24], g[5], Ra[3][3], Rb[3][3], axis_b[3], axis_world[3];
    Context     ctx;

    ContextSet(&ctx, "revolute aligned", pair, seed);
    RandomSeed(seed);
    RandomElement(pair, &e);
    RandomState(&e, 2.5, q);
    RandomRotation(Ra);
    RandomRotation(Rb);
    Cross(e.perp_b[0], e.perp_b[1], axis_b);
    MatVec(Rb, axis_b, axis_world);
    for (int i = 0; i < 3; i++)
      e.axis_a[i] = Ra[0][i] * axis_world[0] + Ra[1][i] * axis_world[1] + Ra[2][i] * axis_world[2];
    for (int i = 0; i < 3; i++) {
      for (int k = 0; k < 3; k++) {
        q[3 * (1 + i) + k]      = Ra[k][i];
        q[12 + 3 * (1 + i) + k] = Rb[k][i];
      }
    }
    MbsElemKernelRevolute.constraint(&e, q, g, NULL);
    for (int k = 3; k < 5; k++) ExpectClose(&ctx, "n_a . b_k", k, 0, g[k], 0.0, 1e-15);
  }
}

static double SpringLinearEnergy(const MbsElemData *e, const double d[3])
{
  const double stretch = sqrt(Dot(d, d)) - e->length;

  return 0.5 * e->stiffness * stretch * stretch;
}

static double SpringQuarticEnergy(const MbsElemData *e, const double d[3])
{
  const double strain = Dot(d, d) - e->length * e->length;

  return 0.5 * e->stiffness * strain * strain;
}

/* V = f(pi) and f'(pi), pi = d.d */
static double SpringLinearF(const MbsElemData *e, double pi)
{
  const double stretch = sqrt(pi) - e->length;

  return 0.5 * e->stiffness * stretch * stretch;
}

static double SpringLinearDF(const MbsElemData *e, double pi)
{
  return 0.5 * e->stiffness * (1.0 - e->length / sqrt(pi));
}

static double SpringQuarticF(const MbsElemData *e, double pi)
{
  const double strain = pi - e->length * e->length;

  return 0.5 * e->stiffness * strain * strain;
}

static double SpringQuarticDF(const MbsElemData *e, double pi)
{
  return e->stiffness * (pi - e->length * e->length);
}

typedef struct {
  const MbsElemKernel *kernel;
  const char          *name;
  double (*energy)(const MbsElemData *e, const double d[3]);
  double (*f)(const MbsElemData *e, double pi);
  double (*df)(const MbsElemData *e, double pi);
} SpringReference;

static double Invariant(const MbsElemData *e, const double *q)
{
  double d[3];

  PointDifference(e, q, d);
  return Dot(d, d);
}

/* The Gonzalez discrete gradient with the generic secant s = (f(pi1) - f(pi0)) / (pi1 - pi0) and slope
   ds/dpi1 = (f'(pi1) - s) / (pi1 - pi0), for pi1 and pi0 well apart: dg = s Dpi(qm) and
   ddg = Dpi(qm) ds/dpi1 Dpi(q1)^T + s D2pi / 2, with Dpi_{3j+k} = 2 w_j d_k and D2pi = 2 w w^T (x) I. */
static void GenericSecantDiscreteGradient(const SpringReference *spring, const MbsElemData *e, const double *q0,
                                          const double *q1, double *dg, double *ddg)
{
  const int nq = MbsElemNq(e), nblocks = nq / 3;
  double    w[MBS_ELEM_MAX_BLOCKS], c[3], qm[MBS_ELEM_MAX_NQ], d1[3], dm[3], pi0, pi1, s, ds_dpi1;

  MbsElemPointDifference(e, w, c);
  for (int i = 0; i < nq; i++) qm[i] = 0.5 * (q0[i] + q1[i]);
  PointDifference(e, q1, d1);
  PointDifference(e, qm, dm);
  pi0     = Invariant(e, q0);
  pi1     = Dot(d1, d1);
  s       = (spring->f(e, pi1) - spring->f(e, pi0)) / (pi1 - pi0);
  ds_dpi1 = (spring->df(e, pi1) - s) / (pi1 - pi0);
  for (int i = 0; i < nblocks; i++) {
    for (int k = 0; k < 3; k++) {
      dg[3 * i + k] = s * 2.0 * w[i] * dm[k];
      for (int j = 0; j < nblocks; j++) {
        for (int l = 0; l < 3; l++)
          ddg[(3 * i + k) * nq + 3 * j + l] =
            2.0 * w[i] * dm[k] * ds_dpi1 * 2.0 * w[j] * d1[l] + (k == l ? s * w[i] * w[j] : 0.0);
      }
    }
  }
}

/* q1 = q0 + t v with pi(q1) - pi(q0) = rel pi(q0): v is a small random direction plus a radial one (w_j d0 / |d0|
   in block j, which moves d along d0), so pi changes to first order; d(q0 + t v) = d0 + t dv is affine in t and
   t is the small root of t^2 |dv|^2 + 2 t d0.dv - rel pi(q0) = 0. */
static void PerturbInvariant(const MbsElemData *e, const double *q0, double rel, double *q1)
{
  const int nq = MbsElemNq(e);
  double    w[MBS_ELEM_MAX_BLOCKS], c[3], v[MBS_ELEM_MAX_NQ], d0[3], dv[3], a, b, delta, t;

  MbsElemPointDifference(e, w, c);
  PointDifference(e, q0, d0);
  for (int j = 0; j < nq / 3; j++) {
    for (int k = 0; k < 3; k++) v[3 * j + k] = 0.2 * Random() + w[j] * d0[k] / sqrt(Dot(d0, d0));
  }
  for (int i = 0; i < nq; i++) q1[i] = q0[i] + v[i];
  PointDifference(e, q1, dv);
  for (int k = 0; k < 3; k++) dv[k] -= d0[k];
  a     = Dot(dv, dv);
  b     = Dot(d0, dv);
  delta = rel * Dot(d0, d0);
  t     = delta / (b + copysign(sqrt(b * b + a * delta), b));
  for (int i = 0; i < nq; i++) q1[i] = q0[i] + t * v[i];
}

static void CheckSpring(const SpringReference *spring)
{
  CheckKernelSlots(spring->kernel, spring->name, 0);
  for (int p = 0; p < NPAIRS(point_pairs); p++) {
    for (int seed = 0; seed < NSEEDS; seed++) {
      const int   nq = 3 * (point_pairs[p].nblocks_a + point_pairs[p].nblocks_b);
      MbsElemData e;
      double      q0[MBS_ELEM_MAX_NQ], q1[MBS_ELEM_MAX_NQ], d[3], V_ref, pi0, pi1;
      double      dg[MBS_ELEM_MAX_NQ], ddg[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ], dg_ref[MBS_ELEM_MAX_NQ],
        ddg_ref[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];
      Context ctx;

      ContextSet(&ctx, spring->name, point_pairs[p], seed);
      RandomSeed(seed);
      RandomElement(point_pairs[p], &e);
      RandomState(&e, 2.5, q0);
      RandomState(&e, 4.0, q1);
      PointDifference(&e, q0, d);
      V_ref = spring->energy(&e, d);
      ExpectClose(&ctx, "V", 0, 0, spring->kernel->energy(&e, q0), V_ref, 1e-14 * fabs(V_ref));
      CheckPotential(&ctx, spring->kernel, &e, q0, q1, 1);

      /* well apart the closed-form secant and slope agree with the generic ones */
      pi0 = Invariant(&e, q0);
      pi1 = Invariant(&e, q1);
      assert_true(fabs(pi1 - pi0) > 0.1 * (pi0 + pi1));
      spring->kernel->discrete_gradient(&e, q0, q1, dg, ddg);
      GenericSecantDiscreteGradient(spring, &e, q0, q1, dg_ref, ddg_ref);
      ExpectArrayClose(&ctx, "dg vs generic secant", 1, nq, dg, dg_ref, SECANT_RTOL);
      ExpectArrayClose(&ctx, "ddg vs generic secant", nq, nq, ddg, ddg_ref, SECANT_RTOL);

      /* q1 a tiny perturbation of q0 that changes pi: ddg must not lose digits to cancellation */
      for (int r = 0; r < (int)(sizeof(close_rel_dpi) / sizeof(close_rel_dpi[0])); r++) {
        for (int sign = -1; sign <= 1; sign += 2) {
          const double rel = sign * close_rel_dpi[r];
          Context      ctx_close;

          snprintf(ctx_close.label, sizeof(ctx_close.label), "%.64s, dpi/pi %.0e", ctx.label, rel);
          PerturbInvariant(&e, q0, rel, q1);
          pi1 = Invariant(&e, q1);
          ExpectClose(&ctx_close, "(pi1 - pi0) / pi0", 0, 0, (pi1 - pi0) / pi0, rel, 1e-3 * fabs(rel));
          CheckDiscreteGradient(&ctx_close, spring->kernel, &e, q0, q1, 1, 1);
        }
      }
    }
  }
}

static void TestSpringLinear(void **state)
{
  const SpringReference spring = {&MbsElemKernelSpringLinear, "spring_linear", SpringLinearEnergy, SpringLinearF,
                                  SpringLinearDF};

  (void)state;
  CheckSpring(&spring);
}

static void TestSpringQuartic(void **state)
{
  const SpringReference spring = {&MbsElemKernelSpringQuartic, "spring_quartic", SpringQuarticEnergy, SpringQuarticF,
                                  SpringQuarticDF};

  (void)state;
  CheckSpring(&spring);
}

/* Linear spring at d = 0 with L > 0, where f' and f'' are singular and spring_linear.c drops the terms carrying
   the undefined direction d/|d|: V = k/2 L^2, gradient 0, Hessian k P^T P (that of k/2 |d|^2), and finite
   discrete gradients at, from and to d = 0 that keep dg.(q1 - q0) = V(q1) - V(q0). */
static void TestSpringLinearDegenerate(void **state)
{
  const MbsElemKernel *kernel = &MbsElemKernelSpringLinear;

  (void)state;
  for (int p = 0; p < NPAIRS(point_pairs); p++) {
    for (int seed = 0; seed < NSEEDS; seed++) {
      const BodyPair pair = point_pairs[p];
      const int      nq = 3 * (pair.nblocks_a + pair.nblocks_b), nblocks = nq / 3;
      MbsElemData    e;
      double q0[MBS_ELEM_MAX_NQ], q1[MBS_ELEM_MAX_NQ], w[MBS_ELEM_MAX_BLOCKS], c[3], d[3], V0, V1, pi1, s, work = 0.0,
                                                                                                           scale;
      double dV[MBS_ELEM_MAX_NQ], d2V[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ], PtP[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ],
        ref[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];
      double  dg[MBS_ELEM_MAX_NQ], ddg[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];
      Context ctx;

      ContextSet(&ctx, "spring_linear at d = 0", pair, seed);
      RandomSeed(seed);
      RandomElement(pair, &e);
      /* material points at the body origins, so that d = 0 is met exactly in floating point */
      if (pair.nblocks_a != GROUND) memset(e.Xa, 0, sizeof(e.Xa));
      if (pair.nblocks_b != GROUND) memset(e.Xb, 0, sizeof(e.Xb));
      RandomState(&e, 2.5, q0);
      RandomState(&e, 4.0, q1);
      if (pair.nblocks_a == GROUND) {
        memcpy(q0, e.Xa, sizeof(e.Xa));
      } else if (pair.nblocks_b == GROUND) {
        memcpy(q0, e.Xb, sizeof(e.Xb));
      } else {
        memcpy(q0, q0 + 3 * pair.nblocks_a, 3 * sizeof(double));
      }
      PointDifference(&e, q0, d);
      for (int k = 0; k < 3; k++) assert_true(d[k] == 0.0);
      MbsElemPointDifference(&e, w, c);
      for (int i = 0; i < nblocks; i++) {
        for (int k = 0; k < 3; k++) {
          for (int j = 0; j < nblocks; j++) {
            for (int l = 0; l < 3; l++) PtP[(3 * i + k) * nq + 3 * j + l] = k == l ? w[i] * w[j] : 0.0; /* D2pi / 2 */
          }
        }
      }

      V0 = kernel->energy(&e, q0);
      ExpectClose(&ctx, "V at d = 0", 0, 0, V0, 0.5 * e.stiffness * e.length * e.length, 1e-15 * V0);
      kernel->gradient(&e, q0, dV);
      for (int i = 0; i < nq; i++) ExpectClose(&ctx, "gradient at d = 0", 0, i, dV[i], 0.0, 0.0);
      kernel->hessian(&e, q0, d2V);
      for (int i = 0; i < nq * nq; i++) ref[i] = e.stiffness * PtP[i];
      ExpectArrayClose(&ctx, "hessian at d = 0 vs k P^T P", nq, nq, d2V, ref, EXACT_RTOL);

      /* both ends at d = 0: s = k/2, ds/dpi1 = 0, so dg = 0 and ddg = k/2 P^T P */
      kernel->discrete_gradient(&e, q0, q0, dg, ddg);
      for (int i = 0; i < nq; i++) ExpectClose(&ctx, "dg(q, q) at d = 0", 0, i, dg[i], 0.0, 0.0);
      for (int i = 0; i < nq * nq; i++) ref[i] = 0.5 * e.stiffness * PtP[i];
      ExpectArrayClose(&ctx, "ddg(q, q) at d = 0 vs k/2 P^T P", nq, nq, ddg, ref, EXACT_RTOL);

      /* from d = 0 to a stretched state: smooth in q1, all the usual checks apply */
      CheckDiscreteGradient(&ctx, kernel, &e, q0, q1, 0, 1);

      /* from a stretched state to d = 0: ds/dpi1 Dpi(q1) has no direction and is dropped, ddg = s D2pi / 2
         with the exact secant s = (f(0) - f(pi1)) / (0 - pi1) */
      kernel->discrete_gradient(&e, q1, q0, dg, ddg);
      V1    = kernel->energy(&e, q1);
      scale = fabs(V0) + fabs(V1);
      for (int i = 0; i < nq; i++) {
        work += dg[i] * (q0[i] - q1[i]);
        scale += fabs(dg[i] * (q0[i] - q1[i]));
      }
      ExpectClose(&ctx, "dg.(q1 - q0) vs V(q1) - V(q0), q1 at d = 0", 0, 0, work, V0 - V1, 1e-12 * scale);
      pi1 = Invariant(&e, q1);
      s   = (SpringLinearF(&e, 0.0) - SpringLinearF(&e, pi1)) / (0.0 - pi1);
      for (int i = 0; i < nq * nq; i++) ref[i] = s * PtP[i];
      ExpectArrayClose(&ctx, "ddg(q, q1 at d = 0) vs s D2pi / 2", nq, nq, ddg, ref, SECANT_RTOL);
    }
  }
}

static void TestGravity(void **state)
{
  (void)state;
  CheckKernelSlots(&MbsElemKernelGravity, "gravity", 0);
  for (int p = 0; p < NPAIRS(single_bodies); p++) {
    for (int seed = 0; seed < NSEEDS; seed++) {
      MbsElemData e;
      double      q0[MBS_ELEM_MAX_NQ], q1[MBS_ELEM_MAX_NQ], V_ref;
      Context     ctx;

      ContextSet(&ctx, "gravity", single_bodies[p], seed);
      RandomSeed(seed);
      RandomElement(single_bodies[p], &e);
      RandomState(&e, 2.5, q0);
      RandomState(&e, 4.0, q1);
      V_ref = -e.mass * Dot(e.gravity, q0);
      ExpectClose(&ctx, "V", 0, 0, MbsElemKernelGravity.energy(&e, q0), V_ref, 1e-14 * fabs(V_ref));
      CheckPotential(&ctx, &MbsElemKernelGravity, &e, q0, q1, 0);
    }
  }
}

/* ---- the damper: a force element ---- */

static void EvalDamperQ(const Closure *c, const double *qm, double *f)
{
  c->kernel->force(c->e, qm, c->q0, 0.0, f, NULL, NULL); /* q0 holds the fixed velocity */
}

static void EvalDamperV(const Closure *c, const double *vm, double *f)
{
  c->kernel->force(c->e, c->q0, vm, 0.0, f, NULL, NULL); /* q0 holds the fixed configuration */
}

/* Jq and Jv against finite differences; the power f . v equals -c |u|^(e+1) with u the axial velocity computed
   here; the force on a is along -n, on b along +n */
static void TestDamper(void **state)
{
  static const double exponents[] = {1.0, 2.0, 2.5};

  (void)state;
  assert_string_equal(MbsElemKernelDamper.name, "damper");
  assert_int_equal(MbsElemKernelDamper.ncon, 0);
  assert_non_null(MbsElemKernelDamper.force);
  assert_null(MbsElemKernelDamper.energy);
  assert_true(MbsElemKernelDamper.dissipative);
  for (int x = 0; x < 3; x++) {
    for (int p = 0; p < NPAIRS(point_pairs); p++) {
      for (int seed = 0; seed < NSEEDS; seed++) {
        MbsElemData e;
        double      qm[MBS_ELEM_MAX_NQ], vm[MBS_ELEM_MAX_NQ],
          zero[MBS_ELEM_MAX_NQ] = {0}, f[MBS_ELEM_MAX_NQ], Jq[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ],
          Jv[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ], fd[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ], d[3], d1[3], d0[3], dv[3], n[3],
          u, power = 0;
        Context ctx;
        Closure cq = {&MbsElemKernelDamper, &e, vm}, cv = {&MbsElemKernelDamper, &e, qm};
        int     nq;

        ContextSet(&ctx, "damper", point_pairs[p], seed);
        RandomSeed(seed);
        RandomElement(point_pairs[p], &e);
        e.damping  = 0.5 + Random() * 0.4;
        e.exponent = exponents[x];
        nq         = MbsElemNq(&e);
        RandomState(&e, 2.5, qm);
        for (int i = 0; i < nq; i++) vm[i] = Random();
        MbsElemKernelDamper.force(&e, qm, vm, 0.0, f, Jq, Jv);
        FiniteDifference(EvalDamperQ, &cq, nq, nq, qm, FD_STEP, 1, fd);
        ExpectArrayClose(&ctx, "Jq vs FD of f", nq, nq, Jq, fd, FD_RTOL);
        FiniteDifference(EvalDamperV, &cv, nq, nq, vm, FD_STEP, 1, fd);
        ExpectArrayClose(&ctx, "Jv vs FD of f", nq, nq, Jv, fd, FD_RTOL);
        PointDifference(&e, qm, d);
        PointDifference(&e, vm, d1);
        PointDifference(&e, zero, d0);
        for (int l = 0; l < 3; l++) {
          dv[l] = d1[l] - d0[l];
          n[l]  = d[l] / sqrt(Dot(d, d));
        }
        u = Dot(n, dv);
        for (int i = 0; i < nq; i++) power += f[i] * vm[i];
        ExpectClose(&ctx, "f . v", 0, 0, power, -e.damping * pow(fabs(u), e.exponent + 1), 1e-13);
        if (e.nblocks_a) /* the first block of a is its point or centre: force -c phi(u) n */
          for (int l = 0; l < 3; l++)
            ExpectClose(&ctx, "force on a", l, 0, f[l], -e.damping * pow(fabs(u), e.exponent - 1) * u * n[l], 1e-13);
      }
    }
  }
}

/* ---- loads ---- */

/* The time functions at points where their values are known in closed form; the smooth step's first and second
   derivatives vanish at both ends (one-sided differences) */
static void TestTimeFunctions(void **state)
{
  const MbsTimeFunction c = {MBS_TIME_CONSTANT, {2.5}, NULL}, ramp = {MBS_TIME_RAMP, {1.0, 3.0, -1.0, 3.0}, NULL},
                        step = {MBS_TIME_SMOOTH_STEP, {1.0, 3.0, -1.0, 3.0}, NULL},
                        harm = {MBS_TIME_HARMONIC, {0.5, 2.0, 0.25, 1.0}, NULL};
  const double e             = 1e-4;

  (void)state;
  assert_true(MbsTimeFunctionEval(&c, -7.0) == 2.5 && MbsTimeFunctionEval(&c, 1e3) == 2.5);
  assert_true(MbsTimeFunctionEval(&ramp, 0.0) == -1.0 && MbsTimeFunctionEval(&ramp, 9.0) == 3.0);
  assert_true(fabs(MbsTimeFunctionEval(&ramp, 2.0) - 1.0) < 1e-15 && fabs(MbsTimeFunctionEval(&ramp, 1.5)) < 1e-15);
  assert_true(MbsTimeFunctionEval(&step, 0.5) == -1.0 && MbsTimeFunctionEval(&step, 3.5) == 3.0);
  assert_true(fabs(MbsTimeFunctionEval(&step, 2.0) - 1.0) < 1e-15);
  for (int end = 0; end < 2; end++) { /* f(t0 + s) - f(t0) = O(s^3) at both ends: s = 1e-4 gives < 1e-10 */
    const double t0 = end ? 3.0 : 1.0, s = end ? -e : e;
    assert_true(fabs(MbsTimeFunctionEval(&step, t0 + s) - MbsTimeFunctionEval(&step, t0)) < 1e-10);
  }
  assert_true(fabs(MbsTimeFunctionEval(&harm, 0.3) - (1.0 + 0.5 * sin(2 * 3.14159265358979323846 * 2.0 * 0.3 + 0.25))) <
              1e-15);
}

/* Every kind's derivative against a central difference, away from its kinks; tables: the values at the points, linear
   between them, constant outside; the natural cubic spline reproduces a straight line exactly, has continuous first
   and second derivatives at the inner points and zero second derivatives at the ends, and converges at fourth order
   to a smooth function (sin) as the points get denser */
static void TestTimeFunctionDerivatives(void **state)
{
  const double    tt[5] = {0.0, 0.3, 0.5, 1.2, 2.0}, vv[5] = {1.0, -0.5, 0.25, 2.0, 0.0}, line[5] = {1, 1.6, 2, 3.4, 5};
  double          d2[5], work[5], err[2];
  MbsTimeTable    lin = {5, 0, tt, vv, NULL}, cub = {5, 1, tt, vv, d2}, cubline = {5, 1, tt, line, NULL};
  MbsTimeFunction f[6] = {{MBS_TIME_RAMP, {1.0, 3.0, -1.0, 3.0}, NULL},
                          {MBS_TIME_SMOOTH_STEP, {1.0, 3.0, -1.0, 3.0}, NULL},
                          {MBS_TIME_HARMONIC, {0.5, 2.0, 0.25, 1.0}, NULL},
                          {MBS_TIME_TABLE, {0}, &lin},
                          {MBS_TIME_TABLE, {0}, &cub},
                          {MBS_TIME_CONSTANT, {2.0}, NULL}};
  const double    ts[] = {1.7, 2.4, 0.1, 0.41, 0.77, 1.6}, dt = 1e-6;

  (void)state;
  MbsTimeTableSpline(5, tt, vv, d2, work);
  for (int k = 0; k < 6; k++)
    for (size_t j = 0; j < sizeof(ts) / sizeof(ts[0]); j++) {
      double df, dp, dm;
      (void)MbsTimeFunctionEvalDerivative(&f[k], ts[j], &df);
      const double fd = (MbsTimeFunctionEvalDerivative(&f[k], ts[j] + dt, &dp) -
                         MbsTimeFunctionEvalDerivative(&f[k], ts[j] - dt, &dm)) /
                        (2 * dt);
      if (!(fabs(df - fd) <= 1e-7 * (1 + fabs(fd))))
        fail_msg("kind %d at t = %g: f' = %.12g, FD %.12g", k, ts[j], df, fd);
    }
  for (int i = 0; i < 5; i++) {
    assert_true(MbsTimeFunctionEval(&f[3], tt[i]) == vv[i]);
    assert_true(fabs(MbsTimeFunctionEval(&f[4], tt[i]) - vv[i]) < 1e-15);
  }
  assert_true(fabs(MbsTimeFunctionEval(&f[3], 0.4) - 0.5 * (-0.5 + 0.25)) < 1e-15);
  assert_true(MbsTimeFunctionEval(&f[3], -1.0) == 1.0 && MbsTimeFunctionEval(&f[4], 3.0) == 0.0);
  assert_true(d2[0] == 0.0 && d2[4] == 0.0);
  for (int i = 1; i < 4; i++) { /* the spline's first derivative is continuous at the inner points */
    double dl, dr;
    (void)MbsTimeFunctionEvalDerivative(&f[4], tt[i] - 1e-9, &dl);
    (void)MbsTimeFunctionEvalDerivative(&f[4], tt[i] + 1e-9, &dr);
    assert_true(fabs(dl - dr) < 1e-6);
  }
  {
    double d2l[5], fl;
    MbsTimeTableSpline(5, tt, line, d2l, work);
    cubline.d2 = d2l;
    f[5]       = (MbsTimeFunction){MBS_TIME_TABLE, {0}, &cubline};
    for (double t = 0.05; t < 2.0; t += 0.1) {
      fl = 1.0 + 2.0 * t;
      assert_true(fabs(MbsTimeFunctionEval(&f[5], t) - fl) < 1e-14);
    }
  }
  for (int level = 0; level < 2; level++) { /* sin on [0, 3] with 16 and 32 intervals */
    const int       n = level ? 33 : 17;
    double          t[33], v[33], s2[33], w[33];
    MbsTimeTable    tb = {n, 1, t, v, s2};
    MbsTimeFunction sf = {MBS_TIME_TABLE, {0}, &tb};
    for (int i = 0; i < n; i++) t[i] = 3.0 * i / (n - 1), v[i] = sin(t[i]);
    MbsTimeTableSpline(n, t, v, s2, w);
    err[level] = 0;
    for (double x = 0.5; x < 2.5; x += 0.01) err[level] = fmax(err[level], fabs(MbsTimeFunctionEval(&sf, x) - sin(x)));
  }
  if (!(log2(err[0] / err[1]) > 3.7))
    fail_msg("spline interior errors %g, %g: order %g", err[0], err[1], log2(err[0] / err[1]));
}

/* A force at a point: the generalized force F on the centre and X_i F on d_i, independent of q and v; a torque:
   its derivative against finite differences, and its power 1/2 sum_i (T x d_i) . d_i' equal to T . omega for a body
   turning with omega (d_i' = omega x d_i, orthonormal d_i) */
static void TestLoads(void **state)
{
  (void)state;
  for (int seed = 0; seed < NSEEDS; seed++) {
    MbsElemData e;
    double      q[12], v[12], f[12], Jq[144], Jv[144], fd[144], R[3][3], omega[3], T[3], power = 0;
    Context     ctx;
    Closure     cq = {&MbsElemKernelTorqueLoad, &e, v};

    ContextSet(&ctx, "loads", (BodyPair){RIGID, GROUND}, seed);
    RandomSeed(seed);
    memset(&e, 0, sizeof(e));
    e.nblocks_a = RIGID;
    e.time      = (MbsTimeFunction){MBS_TIME_HARMONIC, {0.8, 1.5, 0.3, 0.1}, NULL};
    RandomVector(1.0, e.Xa);
    RandomVector(2.0, e.load);
    RandomVector(1.0, q);
    RandomVector(1.0, omega);
    RandomRotation(R);
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 3; k++) q[3 * (1 + i) + k] = R[k][i];
    for (int i = 0; i < 12; i++) v[i] = Random();
    for (int i = 0; i < 3; i++) Cross(omega, &q[3 * (1 + i)], &v[3 * (1 + i)]);
    MbsElemKernelPointLoad.force(&e, q, v, 0.7, f, Jq, Jv);
    for (int j = 0; j < 4; j++)
      for (int l = 0; l < 3; l++)
        ExpectClose(&ctx, "point load", j, l, f[3 * j + l],
                    (j ? e.Xa[j - 1] : 1.0) * MbsTimeFunctionEval(&e.time, 0.7) * e.load[l], 1e-15);
    for (int i = 0; i < 144; i++) ExpectClose(&ctx, "point load derivatives", i, 0, Jq[i] + Jv[i], 0.0, 0.0);
    MbsElemKernelTorqueLoad.force(&e, q, v, 0.0, f, Jq, Jv);       /* at t = 0, as EvalDamperQ */
    FiniteDifference(EvalDamperQ, &cq, 12, 12, q, FD_STEP, 1, fd); /* f(qm) with v fixed */
    ExpectArrayClose(&ctx, "torque Jq vs FD", 12, 12, Jq, fd, FD_RTOL);
    MbsElemKernelTorqueLoad.force(&e, q, v, 0.7, f, NULL, NULL);
    for (int i = 0; i < 12; i++) power += f[i] * v[i];
    for (int l = 0; l < 3; l++) T[l] = MbsTimeFunctionEval(&e.time, 0.7) * e.load[l];
    ExpectClose(&ctx, "torque power", 0, 0, power, Dot(T, omega), 1e-14);
  }
}

/* The two bodies of e at random orientations (orthonormal directors), turning with random angular velocities
   omega[0], omega[1] (zero for the ground): q, and v with d_i' = omega x d_i */
static void RandomTurningBodies(const MbsElemData *e, double *q, double *v, double omega[2][3])
{
  for (int s = 0, off = 0; s < 2; s++) {
    double R[3][3];
    RandomVector(1.0, omega[s]);
    if ((s ? e->nblocks_b : e->nblocks_a) != RIGID) {
      omega[s][0] = omega[s][1] = omega[s][2] = 0;
      continue;
    }
    RandomRotation(R);
    RandomVector(1.0, &q[off]);
    for (int i = 0; i < 3; i++)
      for (int k = 0; k < 3; k++) q[off + 3 * (1 + i) + k] = R[k][i];
    RandomVector(1.0, &v[off]);
    for (int i = 0; i < 3; i++) Cross(omega[s], &q[off + 3 * (1 + i)], &v[off + 3 * (1 + i)]);
    off += 12;
  }
}

/* The axis axis_a as a carries it in q (world components), computed here independently of the kernels */
static void AxisCarriedByA(const MbsElemData *e, const double *q, double n[3])
{
  for (int l = 0; l < 3; l++)
    n[l] = e->nblocks_a == RIGID ? e->axis_a[0] * q[3 + l] + e->axis_a[1] * q[6 + l] + e->axis_a[2] * q[9 + l]
                                 : e->axis_a[l];
}

/* A torque tau n about a's axis n on b and its opposite on a: its power over bodies turning with omega_a, omega_b is
   tau n . (omega_b - omega_a); its derivative against finite differences; a ground as a holds the axis fixed */
static void TestJointTorque(void **state)
{
  static const BodyPair pairs[] = {{RIGID, RIGID}, {GROUND, RIGID}, {RIGID, GROUND}};

  (void)state;
  for (int p = 0; p < NPAIRS(pairs); p++) {
    for (int seed = 0; seed < NSEEDS; seed++) {
      MbsElemData e;
      double      q[24], v[24], f[24], Jq[576], Jv[576], fd[576], omega[2][3], n[3], rel[3], power = 0, tau;
      Context     ctx;
      Closure     cq = {&MbsElemKernelJointTorque, &e, v};
      int         nq;

      ContextSet(&ctx, "joint torque", pairs[p], seed);
      RandomSeed(seed);
      memset(&e, 0, sizeof(e));
      e.nblocks_a = pairs[p].nblocks_a;
      e.nblocks_b = pairs[p].nblocks_b;
      e.time      = (MbsTimeFunction){MBS_TIME_HARMONIC, {0.8, 1.5, 0.3, 0.1}, NULL};
      RandomUnitVector(e.axis_a);
      nq = MbsElemNq(&e);
      RandomTurningBodies(&e, q, v, omega);
      MbsElemKernelJointTorque.force(&e, q, v, 0.0, f, Jq, Jv);
      FiniteDifference(EvalDamperQ, &cq, nq, nq, q, FD_STEP, 1, fd);
      ExpectArrayClose(&ctx, "Jq vs FD", nq, nq, Jq, fd, FD_RTOL);
      MbsElemKernelJointTorque.force(&e, q, v, 0.7, f, NULL, NULL);
      for (int i = 0; i < nq; i++) power += f[i] * v[i];
      AxisCarriedByA(&e, q, n);
      for (int l = 0; l < 3; l++) rel[l] = omega[1][l] - omega[0][l];
      tau = MbsTimeFunctionEval(&e.time, 0.7);
      ExpectClose(&ctx, "power", 0, 0, power, tau * Dot(n, rel), 1e-14);
    }
  }
}

/* The joint force: its derivative against finite differences, and its power f n . (v_b(Xb) - v_a(Xa)) for random
   states and velocities of every body pair whose a carries an axis */
static void TestJointForce(void **state)
{
  static const BodyPair pairs[] = {
    {RIGID, RIGID}, {GROUND, RIGID}, {RIGID, GROUND}, {GROUND, PARTICLE}, {RIGID, PARTICLE}};

  (void)state;
  for (int p = 0; p < NPAIRS(pairs); p++) {
    for (int seed = 0; seed < NSEEDS; seed++) {
      MbsElemData e;
      double      q[24], v[24], f[24], Jq[576], fd[576], n[3], va[3], vb[3], rel[3], power = 0, s;
      Context     ctx;
      Closure     cq = {&MbsElemKernelJointForce, &e, v};
      int         nq;

      ContextSet(&ctx, "joint force", pairs[p], seed);
      RandomSeed(seed);
      RandomElement(pairs[p], &e);
      e.time = (MbsTimeFunction){MBS_TIME_HARMONIC, {0.8, 1.5, 0.3, 0.1}, NULL};
      nq     = MbsElemNq(&e);
      RandomState(&e, 2.5, q);
      for (int i = 0; i < nq; i++) v[i] = Random() - 0.5;
      MbsElemKernelJointForce.force(&e, q, v, 0.0, f, Jq, NULL);
      FiniteDifference(EvalDamperQ, &cq, nq, nq, q, FD_STEP, 1, fd);
      ExpectArrayClose(&ctx, "Jq vs FD", nq, nq, Jq, fd, FD_RTOL);
      MbsElemKernelJointForce.force(&e, q, v, 0.7, f, NULL, NULL);
      for (int i = 0; i < nq; i++) power += f[i] * v[i];
      AxisCarriedByA(&e, q, n);
      PointOnBody(e.nblocks_a, e.Xa, v, va); /* the point's velocity: the same affine map of the body's velocities, */
      PointOnBody(e.nblocks_b, e.Xb, v + 3 * e.nblocks_a, vb);
      if (e.nblocks_a == GROUND) va[0] = va[1] = va[2] = 0; /* less the constant part (the ground's is its point) */
      if (e.nblocks_b == GROUND) vb[0] = vb[1] = vb[2] = 0;
      for (int l = 0; l < 3; l++) rel[l] = vb[l] - va[l];
      s = MbsTimeFunctionEval(&e.time, 0.7);
      ExpectClose(&ctx, "power", 0, 0, power, s * Dot(n, rel), 1e-13);
    }
  }
}

/* The torsional damper: its power over bodies turning with omega_a, omega_b is -c (n . (omega_b - omega_a))^2, and
   both derivatives match finite differences */
static void TestTorsionalDamper(void **state)
{
  static const BodyPair pairs[] = {{RIGID, RIGID}, {GROUND, RIGID}, {RIGID, GROUND}};

  (void)state;
  assert_true(MbsElemKernelTorsionalDamper.dissipative && MbsElemKernelTorsionalDamper.force);
  for (int p = 0; p < NPAIRS(pairs); p++) {
    for (int seed = 0; seed < NSEEDS; seed++) {
      MbsElemData e;
      double      q[24], v[24], f[24], Jq[576], Jv[576], fd[576], omega[2][3], n[3], u = 0, power = 0;
      Context     ctx;
      Closure     cq = {&MbsElemKernelTorsionalDamper, &e, v}, cv = {&MbsElemKernelTorsionalDamper, &e, q};
      int         nq;

      ContextSet(&ctx, "torsional damper", pairs[p], seed);
      RandomSeed(seed);
      memset(&e, 0, sizeof(e));
      e.nblocks_a = pairs[p].nblocks_a;
      e.nblocks_b = pairs[p].nblocks_b;
      e.damping   = 0.3 + 0.2 * Random();
      RandomUnitVector(e.axis_a);
      nq = MbsElemNq(&e);
      RandomTurningBodies(&e, q, v, omega);
      MbsElemKernelTorsionalDamper.force(&e, q, v, 0.0, f, Jq, Jv);
      FiniteDifference(EvalDamperQ, &cq, nq, nq, q, FD_STEP, 1, fd);
      ExpectArrayClose(&ctx, "Jq vs FD", nq, nq, Jq, fd, FD_RTOL);
      FiniteDifference(EvalDamperV, &cv, nq, nq, v, FD_STEP, 1, fd);
      ExpectArrayClose(&ctx, "Jv vs FD", nq, nq, Jv, fd, FD_RTOL);
      for (int i = 0; i < nq; i++) power += f[i] * v[i];
      AxisCarriedByA(&e, q, n);
      for (int l = 0; l < 3; l++) u += n[l] * (omega[1][l] - omega[0][l]);
      ExpectClose(&ctx, "power", 0, 0, power, -e.damping * u * u, 1e-14);
    }
  }
}

/* ---- joints of quadratic rows (prismatic, cylindrical, universal, weld, point on line, point on plane) ---- */

static const BodyPair frame_pairs[] = {{RIGID, RIGID}, {GROUND, RIGID}, {RIGID, GROUND}};
static const BodyPair line_pairs[]  = {
   {RIGID, RIGID}, {GROUND, RIGID}, {RIGID, GROUND}, {PARTICLE, RIGID}, {PARTICLE, GROUND}};

/* Random joint frames (not orthonormal: the derivatives hold for any coefficients), and b's axis (perpendicular axes)
 */
static void RandomFrames(MbsElemData *e)
{
  for (int k = 0; k < 3; k++) {
    RandomVector(1.0, e->frame_a[k]);
    RandomVector(1.0, e->frame_b[k]);
  }
  RandomUnitVector(e->axis_b);
}

/* G and H against finite differences, H symmetric, T(mu) w against the dense H, for every body pair */
static void CheckJointDerivatives(const MbsElemKernel *kernel, const char *name, int ncon, const BodyPair *pairs,
                                  int npairs)
{
  CheckKernelSlots(kernel, name, ncon);
  for (int p = 0; p < npairs; p++) {
    for (int seed = 0; seed < NSEEDS; seed++) {
      MbsElemData e;
      double      q[MBS_ELEM_MAX_NQ];
      Context     ctx;

      ContextSet(&ctx, name, pairs[p], seed);
      RandomSeed(seed);
      RandomElement(pairs[p], &e);
      RandomFrames(&e);
      RandomState(&e, 2.5, q);
      CheckConstraint(&ctx, kernel, &e, q);
    }
  }
}

static void TestQuadraticJointDerivatives(void **state)
{
  (void)state;
  CheckJointDerivatives(&MbsElemKernelPrismatic, "prismatic", 5, frame_pairs, NPAIRS(frame_pairs));
  CheckJointDerivatives(&MbsElemKernelCylindrical, "cylindrical", 4, frame_pairs, NPAIRS(frame_pairs));
  CheckJointDerivatives(&MbsElemKernelUniversal, "universal", 4, frame_pairs, NPAIRS(frame_pairs));
  CheckJointDerivatives(&MbsElemKernelWeld, "weld", 6, frame_pairs, NPAIRS(frame_pairs));
  CheckJointDerivatives(&MbsElemKernelPointOnLine, "point_on_line", 2, line_pairs, NPAIRS(line_pairs));
  CheckJointDerivatives(&MbsElemKernelPointOnPlane, "point_on_plane", 1, line_pairs, NPAIRS(line_pairs));
  CheckJointDerivatives(&MbsElemKernelPlanar, "planar", 3, frame_pairs, NPAIRS(frame_pairs));
  CheckJointDerivatives(&MbsElemKernelPerpendicular, "perpendicular", 1, frame_pairs, NPAIRS(frame_pairs));
}

/* A rigid motion of the world, x -> P + R (x - P) + t */
typedef struct {
  double R[3][3], P[3], t[3];
} Motion;

static void RotationAbout(const double n[3], double angle, double R[3][3])
{
  const double c = cos(angle), s = sin(angle);

  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) R[i][j] = (1.0 - c) * n[i] * n[j] + (i == j ? c : 0.0);
  R[0][1] -= s * n[2];
  R[1][0] += s * n[2];
  R[0][2] += s * n[1];
  R[2][0] -= s * n[1];
  R[1][2] -= s * n[0];
  R[2][1] += s * n[0];
}

static void MotionSet(Motion *m, const double P[3], const double axis[3], double angle, const double t[3])
{
  RotationAbout(axis, angle, m->R);
  memcpy(m->P, P, sizeof(m->P));
  memcpy(m->t, t, sizeof(m->t));
}

/* Applies m (inverse: its inverse) to the blocks of one body */
static void MotionApply(const Motion *m, int inverse, int nblocks, double *q)
{
  double x[3], y[3], Rt[3][3];

  if (nblocks == GROUND) return;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) Rt[i][j] = inverse ? m->R[j][i] : m->R[i][j];
  for (int k = 0; k < 3; k++) x[k] = q[k] - m->P[k] - (inverse ? m->t[k] : 0.0);
  MatVec(Rt, x, y);
  for (int k = 0; k < 3; k++) q[k] = m->P[k] + y[k] + (inverse ? 0.0 : m->t[k]);
  for (int j = 1; j < nblocks; j++) {
    MatVec(Rt, &q[3 * j], y);
    memcpy(&q[3 * j], y, sizeof(y));
  }
}

/* b moves by m relative to a: b itself, or a by the inverse if b is the ground */
static void MoveB(const MbsElemData *e, const Motion *m, double *q)
{
  if (e->nblocks_b != GROUND)
    MotionApply(m, 0, e->nblocks_b, q + 3 * e->nblocks_a);
  else
    MotionApply(m, 1, e->nblocks_a, q);
}

/* One body at a random pose holding the joint point P: its blocks in q, its material point X, its placement */
static void PlaceBody(int nblocks, const double P[3], double *q, double X[3], MbsElemPlacement *pl)
{
  double R[3][3], phi[3], r[3];

  memcpy(pl->x, P, sizeof(pl->x));
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) pl->D[i][k] = i == k;
  if (nblocks == GROUND) {
    memcpy(X, P, 3 * sizeof(double));
    return;
  }
  if (nblocks == PARTICLE) {
    memcpy(q, P, 3 * sizeof(double));
    X[0] = X[1] = X[2] = 0;
    return;
  }
  RandomRotation(R);
  RandomVector(0.8, phi);
  memcpy(q, phi, sizeof(phi));
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) q[3 * (1 + i) + k] = pl->D[i][k] = R[k][i];
  for (int k = 0; k < 3; k++) r[k] = P[k] - phi[k];
  for (int i = 0; i < 3; i++) X[i] = Dot(pl->D[i], r); /* x = phi + X_i d_i */
}

/* World vector v in a body's frame (itself for the ground and particles) */
static void InBody(const MbsElemPlacement *pl, const double v[3], double out[3])
{
  for (int i = 0; i < 3; i++) out[i] = Dot(pl->D[i], v);
}

typedef enum { JOINT_PRISMATIC, JOINT_CYLINDRICAL, JOINT_UNIVERSAL, JOINT_WELD, JOINT_LINE, JOINT_PLANE } JointKind;

/* The constraint rows are zero in a consistent initial configuration, stay zero under each motion the joint
   allows (b relative to a), and become non-zero under each motion it forbids: the joint means what it says,
   checked with configurations built here from world geometry, through the types' own complete(). */
static void CheckJointMotions(const MbsElementType *type, JointKind kind, const BodyPair *pairs, int npairs)
{
  for (int p = 0; p < npairs; p++) {
    for (int seed = 0; seed < NSEEDS; seed++) {
      const MbsElemKernel *kernel = type->kernel;
      MbsElemData          e;
      MbsElemPlacement     pa, pb;
      double q0[MBS_ELEM_MAX_NQ] = {0}, q[MBS_ELEM_MAX_NQ], g[MBS_ELEM_MAX_CON], P[3], n[3], m[3], perp[3],
             zero[3] = {0, 0, 0}, along[3], off[3], a1 = 0.7, a2 = -0.4;
      char    error[256] = "";
      Context ctx;
      Motion  free1, free2, bad1, bad2;
      int     nfree = 2;

      ContextSet(&ctx, type->name, pairs[p], seed);
      RandomSeed(seed + 100);
      memset(&e, 0, sizeof(e));
      e.nblocks_a = pairs[p].nblocks_a;
      e.nblocks_b = pairs[p].nblocks_b;
      RandomVector(1.0, P);
      RandomUnitVector(n);
      RandomUnitVector(m);
      Cross(n, m, perp);
      Normalize(perp);   /* perp is orthogonal to n */
      Cross(perp, n, m); /* and m, orthogonal to both */
      PlaceBody(e.nblocks_a, P, q0, e.Xa, &pa);
      PlaceBody(e.nblocks_b, P, q0 + 3 * e.nblocks_a, e.Xb, &pb);
      if (kind == JOINT_PLANE) { /* a's point lies off Xb within the plane, so that d is not zero */
        for (int k = 0; k < 3; k++) off[k] = 0.3 * perp[k] - 0.2 * m[k];
        if (e.nblocks_b == RIGID) {
          double Xo[3];
          InBody(&pb, off, Xo);
          for (int i = 0; i < 3; i++) e.Xb[i] -= Xo[i];
        } else
          for (int k = 0; k < 3; k++) e.Xb[k] -= off[k];
      }
      if (kind == JOINT_LINE) { /* a's point lies off Xb along the line */
        if (e.nblocks_b == RIGID) {
          double Xo[3], o[3] = {0.5 * n[0], 0.5 * n[1], 0.5 * n[2]};
          InBody(&pb, o, Xo);
          for (int i = 0; i < 3; i++) e.Xb[i] -= Xo[i];
        } else
          for (int k = 0; k < 3; k++) e.Xb[k] -= 0.5 * n[k];
      }
      InBody(&pa, n, e.axis_a);
      InBody(&pb, kind == JOINT_UNIVERSAL ? m : n, e.axis_b);
      assert_int_equal(type->complete(&e, &pa, &pb, error, sizeof(error)), 0);
      kernel->constraint(&e, q0, g, NULL);
      for (int k = 0; k < kernel->ncon; k++)
        ExpectClose(&ctx, "g at the initial configuration", k, 0, g[k], 0.0, 1e-13);

      for (int k = 0; k < 3; k++) {
        along[k] = 0.37 * n[k];
        off[k]   = 0.3 * perp[k];
      }
      switch (kind) {
        case JOINT_PRISMATIC:
          MotionSet(&free1, P, n, 0.0, along);
          MotionSet(&free2, P, n, 0.0, zero);
          nfree = 1;
          MotionSet(&bad1, P, n, a1, zero); /* turning about the axis */
          MotionSet(&bad2, P, n, 0.0, off);
          break;
        case JOINT_CYLINDRICAL:
        case JOINT_LINE:
          MotionSet(&free1, P, n, a1, along);
          MotionSet(&free2, P, n, a2, zero);
          MotionSet(&bad1, P, perp, kind == JOINT_LINE ? 0.0 : a1, kind == JOINT_LINE ? off : zero);
          MotionSet(&bad2, P, n, 0.0, off);
          break;
        case JOINT_UNIVERSAL:
          MotionSet(&free1, P, n, a1, zero); /* about a's cross axis */
          MotionSet(&free2, P, m, a2, zero); /* about b's cross axis (b still where it started) */
          MotionSet(&bad1, P, perp, a1, zero);
          MotionSet(&bad2, P, n, 0.0, off);
          break;
        case JOINT_WELD:
          nfree = 0;
          MotionSet(&bad1, P, perp, a1, zero);
          MotionSet(&bad2, P, n, 0.0, off);
          break;
        case JOINT_PLANE:
          MotionSet(&free1, P, n, a1, off); /* turning about the normal and sliding in the plane */
          MotionSet(&free2, P, n, 0.0, zero);
          nfree = 1;
          MotionSet(&bad1, P, n, 0.0, along);
          MotionSet(&bad2, P, n, 0.0, along);
          break;
      }
      for (int f = 0; f < nfree; f++) {
        memcpy(q, q0, sizeof(q));
        MoveB(&e, f ? &free2 : &free1, q);
        kernel->constraint(&e, q, g, NULL);
        for (int k = 0; k < kernel->ncon; k++) ExpectClose(&ctx, "g after an allowed motion", k, f, g[k], 0.0, 1e-12);
      }
      for (int f = 0; f < 2; f++) {
        double worst = 0;
        memcpy(q, q0, sizeof(q));
        MoveB(&e, f ? &bad2 : &bad1, q);
        kernel->constraint(&e, q, g, NULL);
        for (int k = 0; k < kernel->ncon; k++) worst = fmax(worst, fabs(g[k]));
        if (!(worst > 1e-3))
          fail_msg("%s: a forbidden motion (%d) keeps every row at zero (max %g)", ctx.label, f, worst);
      }
    }
  }
}

static void TestQuadraticJointMotions(void **state)
{
  (void)state;
  CheckJointMotions(&MbsElementTypePrismatic, JOINT_PRISMATIC, frame_pairs, NPAIRS(frame_pairs));
  CheckJointMotions(&MbsElementTypeCylindrical, JOINT_CYLINDRICAL, frame_pairs, NPAIRS(frame_pairs));
  CheckJointMotions(&MbsElementTypeUniversal, JOINT_UNIVERSAL, frame_pairs, NPAIRS(frame_pairs));
  CheckJointMotions(&MbsElementTypeWeld, JOINT_WELD, frame_pairs, NPAIRS(frame_pairs));
  CheckJointMotions(&MbsElementTypePointOnLine, JOINT_LINE, line_pairs, NPAIRS(line_pairs));
  CheckJointMotions(&MbsElementTypePointOnPlane, JOINT_PLANE, line_pairs, NPAIRS(line_pairs));
}

/* ---- Drives (docs/drives.md) */
extern const MbsElementType MbsElementTypeAngleDrive, MbsElementTypeSlideDrive, MbsElementTypePositionDrive,
  MbsElementTypeTorsionalSpring;

static const BodyPair angle_pairs[]    = {{RIGID, RIGID}, {GROUND, RIGID}, {RIGID, GROUND}};
static const BodyPair slide_pairs[]    = {{RIGID, RIGID}, {GROUND, RIGID}, {GROUND, PARTICLE}, {RIGID, PARTICLE}};
static const BodyPair position_pairs[] = {{PARTICLE, GROUND}, {RIGID, GROUND}};

static void RandomHarmonic(MbsTimeFunction *f)
{
  f->kind = MBS_TIME_HARMONIC;
  f->p[0] = 0.5 + Random();       /* amplitude */
  f->p[1] = 0.3 + 0.5 * Random(); /* frequency */
  f->p[2] = Random();             /* phase */
  f->p[3] = Random();             /* offset */
}

/* g(q, t) with the drive's coefficients at t */
static void DriveAt(const MbsElemKernel *kernel, const MbsElemData *e, double t, const double *q, double *g)
{
  MbsElemData d = *e;
  kernel->time_coefficients(&d, t, t, 0, d.tcoef);
  kernel->constraint(&d, q, g, NULL);
}

/* For random elements, states and times: G and H against finite differences with the step's mean coefficients
   and with their derivatives; dg/dt (the derivative coefficients) against a central difference in t; the mean
   coefficients are the mean of the end points' */
static void CheckDriveDerivatives(const MbsElemKernel *kernel, const char *name, int ncon, const BodyPair *pairs,
                                  int npairs)
{
  CheckKernelSlots(kernel, name, ncon);
  assert_non_null(kernel->time_coefficients);
  for (int p = 0; p < npairs; p++) {
    for (int seed = 0; seed < NSEEDS; seed++) {
      MbsElemData e;
      double      q[MBS_ELEM_MAX_NQ], t0, t1, gt[MBS_ELEM_MAX_CON], gp[MBS_ELEM_MAX_CON], gm[MBS_ELEM_MAX_CON],
        fd[MBS_ELEM_MAX_CON], c0[MBS_ELEM_MAX_TCOEF] = {0}, c1[MBS_ELEM_MAX_TCOEF] = {0},
                              cm[MBS_ELEM_MAX_TCOEF] = {0}; /* a kernel fills the coefficients it has */
      const double dt                                = 1e-5;
      Context      ctx;

      ContextSet(&ctx, name, pairs[p], seed);
      RandomSeed(seed);
      RandomElement(pairs[p], &e);
      RandomFrames(&e);
      RandomHarmonic(&e.time);
      RandomState(&e, 2.5, q);
      t0 = 2.0 * Random();
      t1 = t0 + 0.1 + 0.2 * Random();
      kernel->time_coefficients(&e, t0, t1, 0, e.tcoef);
      CheckConstraint(&ctx, kernel, &e, q);
      kernel->time_coefficients(&e, t0, t0, 0, c0);
      kernel->time_coefficients(&e, t1, t1, 0, c1);
      kernel->time_coefficients(&e, t0, t1, 0, cm);
      for (int j = 0; j < MBS_ELEM_MAX_TCOEF; j++)
        ExpectClose(&ctx, "mean coefficient", j, 0, cm[j], 0.5 * (c0[j] + c1[j]), 1e-15);
      kernel->time_coefficients(&e, t1, t1, 1, e.tcoef);
      CheckConstraint(&ctx, kernel, &e, q);
      kernel->constraint(&e, q, gt, NULL);
      DriveAt(kernel, &e, t1 + dt, q, gp);
      DriveAt(kernel, &e, t1 - dt, q, gm);
      for (int k = 0; k < ncon; k++) fd[k] = (gp[k] - gm[k]) / (2 * dt);
      ExpectArrayClose(&ctx, "dg/dt vs central difference", 1, ncon, gt, fd, 1e-8);
    }
  }
}

static void TestDriveDerivatives(void **state)
{
  (void)state;
  CheckDriveDerivatives(&MbsElemKernelAngleDrive, "angle_drive", 1, angle_pairs, NPAIRS(angle_pairs));
  CheckDriveDerivatives(&MbsElemKernelSlideDrive, "slide_drive", 1, slide_pairs, NPAIRS(slide_pairs));
  CheckDriveDerivatives(&MbsElemKernelPositionDrive, "position_drive", 3, position_pairs, NPAIRS(position_pairs));
}

/* The drives mean what they say, checked with configurations built here from world geometry through the types'
   own complete(): zero at the initial state; zero after b turns (angle) or slides (slide) relative to a by the
   prescribed amount, or a's point moves along the path (position), at time t; non-zero 0.05 rad or 0.05 m off it */
static void TestDriveMotions(void **state)
{
  const MbsElementType *types[3] = {&MbsElementTypeAngleDrive, &MbsElementTypeSlideDrive, &MbsElementTypePositionDrive};
  const BodyPair       *pairs[3] = {angle_pairs, slide_pairs, position_pairs};
  const int             npairs[3] = {NPAIRS(angle_pairs), NPAIRS(slide_pairs), NPAIRS(position_pairs)};

  (void)state;
  for (int d = 0; d < 3; d++) {
    for (int p = 0; p < npairs[d]; p++) {
      for (int seed = 0; seed < NSEEDS; seed++) {
        const MbsElemKernel *kernel = types[d]->kernel;
        MbsElemData          e;
        MbsElemPlacement     pa, pb;
        double q0[MBS_ELEM_MAX_NQ] = {0}, q[MBS_ELEM_MAX_NQ], g[MBS_ELEM_MAX_CON], P[3], n[3], zero[3] = {0, 0, 0},
               shift[3], t = 0.37, value;
        char    error[256] = "";
        Context ctx;
        Motion  exact, off;

        ContextSet(&ctx, types[d]->name, pairs[d][p], seed);
        RandomSeed(seed + 200);
        memset(&e, 0, sizeof(e));
        e.nblocks_a = pairs[d][p].nblocks_a;
        e.nblocks_b = pairs[d][p].nblocks_b;
        RandomVector(1.0, P);
        RandomUnitVector(n);
        PlaceBody(e.nblocks_a, P, q0, e.Xa, &pa);
        PlaceBody(e.nblocks_b, P, q0 + 3 * e.nblocks_a, e.Xb, &pb);
        if (d == 2) { /* b is the ground at a's point */
          memcpy(e.Xb, P, sizeof(P));
          memcpy(e.axis_b, n, sizeof(n));
        } else
          InBody(&pa, n, e.axis_a);
        e.time.kind = MBS_TIME_HARMONIC; /* 0 at t = 0 */
        e.time.p[0] = 0.4 + 0.5 * Random();
        e.time.p[1] = 0.5;
        assert_int_equal(types[d]->complete(&e, &pa, &pb, error, sizeof(error)), 0);
        DriveAt(kernel, &e, 0.0, q0, g);
        for (int k = 0; k < kernel->ncon; k++) ExpectClose(&ctx, "g at the initial state", k, 0, g[k], 0.0, 1e-13);
        value = MbsTimeFunctionEval(&e.time, t);
        for (int k = 0; k < 3; k++) shift[k] = value * n[k];
        if (d == 0) {
          MotionSet(&exact, P, n, value, zero);
          MotionSet(&off, P, n, value + 0.05, zero);
        } else {
          double more[3];
          for (int k = 0; k < 3; k++) more[k] = (value + 0.05) * n[k];
          MotionSet(&exact, P, n, 0.0, shift);
          MotionSet(&off, P, n, 0.0, more);
        }
        memcpy(q, q0, sizeof(q));
        if (d == 2)
          MotionApply(&exact, 0, e.nblocks_a, q);
        else
          MoveB(&e, &exact, q);
        DriveAt(kernel, &e, t, q, g);
        for (int k = 0; k < kernel->ncon; k++)
          ExpectClose(&ctx, "g after the prescribed motion", k, 0, g[k], 0.0, 1e-12);
        memcpy(q, q0, sizeof(q));
        if (d == 2)
          MotionApply(&off, 0, e.nblocks_a, q);
        else
          MoveB(&e, &off, q);
        DriveAt(kernel, &e, t, q, g);
        assert_true(MaxAbs(kernel->ncon, g) > 1e-3);
      }
    }
  }
}

/* The beam element (src/elements/beam.c, docs/beams.md) between two rigid nodes: its gradient, Hessian and discrete
   gradient against finite differences, the discrete gradient's exactness and directionality, invariance under rigid
   motions, no energy in the initial configuration, and the strains of a bent and a twisted element */
extern const MbsElementType MbsElementTypeBeam;

static void BeamState(double L, double R[3][3], const double p[3], double *q)
{
  /* two nodes a length L apart along d3, both with directors R e_i (columns of R), a at p */
  for (int i = 0; i < 3; i++) {
    q[i]      = p[i];
    q[12 + i] = p[i] + L * R[i][2];
    for (int k = 0; k < 3; k++) q[3 + 3 * k + i] = q[15 + 3 * k + i] = R[i][k];
  }
}

static void TestBeam(void **state)
{
  const double stiffness[6] = {40.0, 55.0, 300.0, 2.0, 3.5, 1.2};
  (void)state;
  CheckKernelSlots(&MbsElemKernelBeam, "beam", 0);
  for (int seed = 0; seed < 6; seed++) {
    const BodyPair   pair = {RIGID, RIGID};
    MbsElemData      e;
    MbsElemPlacement pa, pb;
    Context          ctx;
    double           q0[24], q1[24], qref[24], R[3][3], p[3], L, eps_ref[6], V;
    char             error[256];

    RandomSeed(2000 + seed);
    ContextSet(&ctx, "beam", pair, seed);
    memset(&e, 0, sizeof(e));
    e.nblocks_a = e.nblocks_b = RIGID;
    for (int k = 0; k < 6; k++) e.beam_stiffness[k] = stiffness[k] * (1.5 + Random());
    /* a stress-free reference: a slightly curved and twisted element (node b turned a little) */
    RandomRotation(R);
    RandomVector(1.0, p);
    L = 1.0 + 0.5 * Random();
    BeamState(L, R, p, qref);
    {
      double       T[3][3], Rb[3][3];
      const double a = 0.2 * Random(), s = sin(a), c = cos(a);
      const double Tz[3][3] = {{c, -s, 0}, {s, c, 0}, {0, 0, 1}}; /* b turned about its d3 (twist) ... */
      memcpy(T, Tz, sizeof(T));
      for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) {
          Rb[i][k] = 0;
          for (int l = 0; l < 3; l++) Rb[i][k] += R[i][l] * T[l][k];
        }
      for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) qref[15 + 3 * k + i] = Rb[i][k];
    }
    for (int i = 0; i < 3; i++) {
      pa.x[i] = qref[i], pb.x[i] = qref[12 + i];
      for (int k = 0; k < 3; k++) pa.D[k][i] = qref[3 + 3 * k + i], pb.D[k][i] = qref[15 + 3 * k + i];
    }
    e.length = MBS_ELEM_UNSET;
    assert_int_equal(MbsElementTypeBeam.complete(&e, &pa, &pb, error, sizeof(error)), 0);
    ExpectClose(&ctx, "length from the nodes", 0, 0, e.length, L, 1e-14 * L);
    V = MbsElemKernelBeam.energy(&e, qref);
    ExpectClose(&ctx, "no energy in the reference configuration", 0, 0, V, 0.0, 1e-30);
    memcpy(eps_ref, e.beam_strain0, sizeof(eps_ref));
    /* the element's frame, carried by both nodes, is the chord's frame in the reference: whatever the nodes' own
       frames, the reference is straight, unsheared and unstretched in it */
    for (int k = 0; k < 6; k++)
      ExpectClose(&ctx, "reference strains in the element's frame", k, 0, eps_ref[k], k == 2 ? 1.0 : 0.0, 1e-12);
    /* random states near the reference (directors not orthonormal: the energy is defined on all of R^24) */
    for (int i = 0; i < 24; i++) {
      q0[i] = qref[i] + 0.2 * (Random() - 0.5);
      q1[i] = qref[i] + 0.2 * (Random() - 0.5);
    }
    CheckPotential(&ctx, &MbsElemKernelBeam, &e, q0, q1, 1);
  }
  for (int seed = 0; seed < 4; seed++) {
    /* the nodes' own frames do not matter: an element whose nodes' directors are the chord's frame E and one whose
       nodes carry E turned by random rotations Q_A, Q_B (a junction of a beam network), its section axis given in
       node A's frame (axis_a), have the same energy in the same motion (each node moved, and its directors mapped by
       a random linear map near a rotation) */
    const BodyPair   pair = {RIGID, RIGID};
    MbsElemData      e1, e2;
    MbsElemPlacement pa1, pb1, pa2, pb2;
    Context          ctx;
    double           E[3][3], QA[3][3], QB[3][3], LA[3][3], LB[3][3], p[3], q1[24], q2[24], V1, V2;
    char             error[256];

    RandomSeed(2100 + seed);
    ContextSet(&ctx, "beam node frames", pair, seed);
    RandomRotation(E);
    RandomRotation(QA);
    RandomRotation(QB);
    RandomRotation(LA);
    RandomRotation(LB);
    RandomVector(1.0, p);
    memset(&e1, 0, sizeof(e1));
    e1.nblocks_a = e1.nblocks_b = RIGID;
    for (int k = 0; k < 6; k++) e1.beam_stiffness[k] = 1.0 + k;
    e1.length = MBS_ELEM_UNSET;
    e2        = e1;
    for (int i = 0; i < 3; i++) {
      pa1.x[i] = pa2.x[i] = p[i];
      pb1.x[i] = pb2.x[i] = p[i] + 0.8 * E[i][2];
      for (int k = 0; k < 3; k++) {
        pa1.D[k][i] = pb1.D[k][i] = E[i][k];
        pa2.D[k][i] = pb2.D[k][i] = 0;
        for (int l = 0; l < 3; l++) pa2.D[k][i] += E[i][l] * QA[l][k], pb2.D[k][i] += E[i][l] * QB[l][k];
      }
    }
    assert_int_equal(MbsElementTypeBeam.complete(&e1, &pa1, &pb1, error, sizeof(error)), 0);
    for (int k = 0; k < 3; k++) /* the section's first axis E_1, in node A's frame (as MbsModelAddBeamNetwork() sets) */
      e2.axis_a[k] = pa2.D[k][0] * E[0][0] + pa2.D[k][1] * E[1][0] + pa2.D[k][2] * E[2][0];
    assert_int_equal(MbsElementTypeBeam.complete(&e2, &pa2, &pb2, error, sizeof(error)), 0);
    for (int i = 0; i < 3; i++) { /* the motion: node A moved by 0.1 and turned by LA (a small turn), B by LB */
      q1[i] = q2[i] = p[i] + 0.1 * (Random() - 0.5);
      q1[12 + i] = q2[12 + i] = pb1.x[i] + 0.1 * (Random() - 0.5);
      for (int k = 0; k < 3; k++) {
        double a1 = 0, a2 = 0, b1 = 0, b2 = 0;
        for (int l = 0; l < 3; l++) {
          const double s  = 0.3; /* L = I + s (LA - I): a moderate turn, directors not exactly orthonormal */
          const double la = (l == i) + s * (LA[i][l] - (l == i)), lb = (l == i) + s * (LB[i][l] - (l == i));
          a1 += la * pa1.D[k][l], a2 += la * pa2.D[k][l], b1 += lb * pb1.D[k][l], b2 += lb * pb2.D[k][l];
        }
        q1[3 + 3 * k + i] = a1, q2[3 + 3 * k + i] = a2, q1[15 + 3 * k + i] = b1, q2[15 + 3 * k + i] = b2;
      }
    }
    V1 = MbsElemKernelBeam.energy(&e1, q1);
    V2 = MbsElemKernelBeam.energy(&e2, q2);
    ExpectClose(&ctx, "energy independent of the nodes' frames", 0, 0, V2, V1, 1e-12 * (1 + V1));
    if (!(V1 > 1e-3)) fail_msg("beam node frames, seed %d: the motion strains too little (V %g)", seed, V1);
  }
  {
    /* pure bending and pure torsion of a straight element along e3 (unit stiffnesses, unstrained straight): the nodes
       turned by -th/2 and th/2 about e1 give the curvature K_1 = -sin(th)/L and the stretch cos(th/2) of the chord;
       about e3 the twist K_3 = -sin(th)/L */
    const BodyPair pair = {RIGID, RIGID};
    MbsElemData    e;
    Context        ctx;
    const double   L = 0.7, th = 0.3, ch = cos(0.5 * th), sh = sin(0.5 * th);

    ContextSet(&ctx, "beam strains", pair, 0);
    memset(&e, 0, sizeof(e));
    e.nblocks_a = e.nblocks_b = RIGID;
    e.length                  = L;
    for (int k = 0; k < 6; k++) e.beam_stiffness[k] = 1.0;
    for (int k = 0; k < 3; k++) e.frame_a[k][k] = e.frame_b[k][k] = 1.0; /* the element's frame: the nodes' */
    e.beam_strain0[2] = 1.0;
    for (int mode = 0; mode < 2; mode++) {
      double q[24], Vexp;
      memset(q, 0, sizeof(q));
      q[14] = L; /* b at (0, 0, L) */
      for (int side = 0; side < 2; side++) {
        const double sg = side ? 1.0 : -1.0;
        double      *D  = q + 12 * side + 3; /* d1, d2, d3 of the node */
        if (mode == 0) {                     /* about e1 */
          D[0] = 1;
          D[4] = ch, D[5] = sg * sh;
          D[7] = -sg * sh, D[8] = ch;
        } else { /* about e3 */
          D[0] = ch, D[1] = sg * sh;
          D[3] = -sg * sh, D[4] = ch;
          D[8] = 1;
        }
      }
      Vexp = mode == 0 ? 0.5 * L * (pow(ch - 1, 2) + pow(sin(th) / L, 2)) : 0.5 * L * pow(sin(th) / L, 2);
      ExpectClose(&ctx, mode ? "torsion energy" : "bending energy", mode, 0, MbsElemKernelBeam.energy(&e, q), Vexp,
                  1e-14);
    }
  }
}

/* Torsional spring: its derivatives and discrete gradient (random frames, any states); its energy against k/2 phi^2
   for turns of b about the joint axis, built through complete() with a rest angle, periodic past the half-turn; the
   discrete gradient across the half-turn; complete()'s refusals */
static void TestTorsionalSpring(void **state)
{
  const MbsElemKernel *kernel = &MbsElemKernelTorsionalSpring;

  (void)state;
  CheckKernelSlots(kernel, "torsional_spring", 0);
  for (int p = 0; p < NPAIRS(angle_pairs); p++) {
    for (int seed = 0; seed < NSEEDS; seed++) {
      MbsElemData      e;
      MbsElemPlacement pa, pb;
      double           q0[MBS_ELEM_MAX_NQ] = {0}, q[MBS_ELEM_MAX_NQ], q1[MBS_ELEM_MAX_NQ], P[3], n[3], zero[3] = {0};
      double           rest       = 0.8 * Random() - 0.4, k, R[3][3];
      char             error[256] = "";
      Context          ctx;
      Motion           turn;

      ContextSet(&ctx, "torsional spring", angle_pairs[p], seed);
      RandomSeed(seed + 300);
      RandomElement(angle_pairs[p], &e);
      RandomFrames(&e);
      RandomState(&e, 2.5, q0);
      RandomState(&e, 2.0, q1);
      /* the rotated state keeps S and C: no cancellation in this discrete gradient, so the plain central difference
         (not the springs' large Richardson step, which would turn the frames by a half-turn) */
      CheckPotential(&ctx, kernel, &e, q0, q1, 0);
      if (e.nblocks_a != GROUND && e.nblocks_b != GROUND) {
        RandomRotation(R);
        RotateState(&e, R, q0, q);
        ExpectClose(&ctx, "V after rigid rotation", 0, 0, kernel->energy(&e, q), kernel->energy(&e, q0),
                    EXACT_RTOL * kernel->energy(&e, q0));
        CheckDiscreteGradient(&ctx, kernel, &e, q0, q, 0, 1);
      }
      CheckDiscreteGradient(&ctx, kernel, &e, q0, q1, 0, 1);

      /* the meaning: b turned by alpha about the axis through P from the initial state stores k/2 (alpha - rest)^2,
         with the deflection taken in (-pi, pi] */
      memset(&e, 0, sizeof(e));
      memset(q0, 0, sizeof(q0));
      e.nblocks_a = angle_pairs[p].nblocks_a;
      e.nblocks_b = angle_pairs[p].nblocks_b;
      RandomVector(1.0, P);
      RandomUnitVector(n);
      PlaceBody(e.nblocks_a, P, q0, e.Xa, &pa);
      PlaceBody(e.nblocks_b, P, q0 + 3 * e.nblocks_a, e.Xb, &pb);
      InBody(&pa, n, e.axis_a);
      e.stiffness = k = 2.0 + Random();
      e.length        = rest;
      assert_int_equal(MbsElementTypeTorsionalSpring.complete(&e, &pa, &pb, error, sizeof(error)), 0);
      for (int i = -8; i <= 8; i++) {
        const double alpha = rest + 0.45 * i, phi = atan2(sin(alpha - rest), cos(alpha - rest));

        memcpy(q, q0, sizeof(q));
        MotionSet(&turn, P, n, alpha, zero);
        MoveB(&e, &turn, q);
        ExpectClose(&ctx, "V after a turn by alpha", i, 0, kernel->energy(&e, q), 0.5 * k * phi * phi, 1e-12 * k);
      }

      /* a step across the half-turn: from pi - 0.01 to -pi + 0.02 past the rest angle */
      memcpy(q, q0, sizeof(q));
      MotionSet(&turn, P, n, rest + 3.14159265358979 - 0.01, zero);
      MoveB(&e, &turn, q);
      memcpy(q1, q0, sizeof(q1));
      MotionSet(&turn, P, n, rest - 3.14159265358979 + 0.02, zero);
      MoveB(&e, &turn, q1);
      CheckDiscreteGradient(&ctx, kernel, &e, q, q1, 0, 1);
    }
  }
  {
    MbsElemData      e;
    MbsElemPlacement pa = {{0, 0, 0}, {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}, pb = pa;
    char             error[256] = "";

    memset(&e, 0, sizeof(e));
    e.nblocks_a = e.nblocks_b = RIGID;
    e.stiffness               = 1;
    e.length                  = 0;
    assert_int_equal(MbsElementTypeTorsionalSpring.complete(&e, &pa, &pb, error, sizeof(error)), 1);
    assert_non_null(strstr(error, "axis must be a non-zero"));
    e.axis_a[2] = 1;
    e.length    = 4.0;
    assert_int_equal(MbsElementTypeTorsionalSpring.complete(&e, &pa, &pb, error, sizeof(error)), 1);
    assert_non_null(strstr(error, "rest angle must lie in (-pi, pi)"));
  }
}

/* complete() refuses a drive that does not start at the initial state, and an axis of zero length */
static void TestDriveErrors(void **state)
{
  MbsElemData      e;
  MbsElemPlacement pa, pb;
  char             error[256] = "";

  (void)state;
  memset(&e, 0, sizeof(e));
  memset(&pa, 0, sizeof(pa));
  memset(&pb, 0, sizeof(pb));
  for (int i = 0; i < 3; i++) pa.D[i][i] = pb.D[i][i] = 1.0;
  e.nblocks_a = GROUND, e.nblocks_b = RIGID;
  e.axis_a[2] = 1.0;
  e.time.kind = MBS_TIME_CONSTANT;
  e.time.p[0] = 0.5;
  assert_int_equal(MbsElementTypeAngleDrive.complete(&e, &pa, &pb, error, sizeof(error)), 1);
  assert_non_null(strstr(error, "must be 0 at t = 0"));
  assert_non_null(strstr(error, "got 0.5"));
  e.time.p[0] = 0.0;
  e.axis_a[2] = 0.0;
  assert_int_equal(MbsElementTypeSlideDrive.complete(&e, &pa, &pb, error, sizeof(error)), 1);
  assert_non_null(strstr(error, "Slide drive: the axis must be a non-zero finite vector"));
}

/* ---- Velocity constraints (docs/nonholonomic.md) */
extern const MbsElementType MbsElementTypeKnifeEdge, MbsElementTypeRolling;

/* A rigid motion of body a: orthonormal directors R e_i at phi, moving with the velocity v and the angular velocity w;
   q and its rate qdot = (v, w x d_1, w x d_2, w x d_3) */
static void RandomRigidMotion(double *q, double *qdot, double w[3])
{
  double R[3][3], v[3];

  RandomRotation(R);
  RandomVector(1.0, q);
  RandomVector(1.0, v);
  RandomVector(2.0, w);
  for (int l = 0; l < 3; l++) qdot[l] = v[l];
  for (int i = 0; i < 3; i++) {
    double d[3] = {R[0][i], R[1][i], R[2][i]};
    for (int l = 0; l < 3; l++) q[3 * (1 + i) + l] = d[l];
    Cross(w, d, &qdot[3 * (1 + i)]);
  }
}

/* For random elements (rigid a on the ground) and states: A against its meaning on rigid motions, computed here from
   the motion's point velocities (the knife edge's contact point moves along the blade; the rolling body's contact
   point c - r n, with c the centre, moves along the plane), and dA against central differences of A at states whose
   directors are not orthonormal; the rolling's holonomic row (the centre's height over the plane) as every
   constraint */
static void TestVelocityConstraints(void **state)
{
  const MbsElementType *types[] = {&MbsElementTypeKnifeEdge, &MbsElementTypeRolling};
  const BodyPair        pair    = {RIGID, GROUND};

  (void)state;
  for (int t = 0; t < 2; t++) {
    const MbsElemKernel *kernel = types[t]->kernel;
    const int            nv = kernel->nvcon, nq = 12;

    assert_int_equal(nv, t ? 2 : 1);
    assert_non_null(kernel->velocity_constraint);
    assert_null(kernel->energy);
    for (int seed = 0; seed < NSEEDS; seed++) {
      MbsElemData      e;
      MbsElemPlacement pa, pb;
      Context          ctx;
      char             error[256];
      double           q[12], qdot[12], w[3], A[2 * 12], Av[2], ref[2], dA[2 * 12 * 12], fd[2 * 12 * 12], x[3], xd[3];

      ContextSet(&ctx, kernel->name, pair, seed);
      RandomSeed(seed);
      RandomElement(pair, &e);
      RandomUnitVector(e.axis_b);
      memset(&pa, 0, sizeof(pa));
      memset(&pb, 0, sizeof(pb));
      RandomVector(1.0, pa.x);
      for (int i = 0; i < 3; i++) pa.D[i][i] = pb.D[i][i] = 1;
      assert_int_equal(types[t]->complete(&e, &pa, &pb, error, sizeof(error)), 0);
      /* meaning on rigid motions */
      RandomRigidMotion(q, qdot, w);
      kernel->velocity_constraint(&e, q, A, NULL);
      PointOnBody(RIGID, e.Xa, q, x); /* the contact point (knife) or the centre (rolling) */
      PointOnBody(RIGID, e.Xa, qdot, xd);
      if (t == 0) {
        double n[3];
        for (int l = 0; l < 3; l++) n[l] = e.axis_a[0] * q[3 + l] + e.axis_a[1] * q[6 + l] + e.axis_a[2] * q[9 + l];
        ref[0] = Dot(n, xd);
      } else {
        double wn[3], vc[3];
        Cross(w, e.axis_b, wn);
        for (int l = 0; l < 3; l++) vc[l] = xd[l] - e.length * wn[l];
        ExpectClose(&ctx, "frame normal", 0, 0, Dot(e.frame_b[2], e.axis_b), 1.0, 1e-15);
        for (int m = 0; m < 2; m++) {
          ExpectClose(&ctx, "tangent . normal", m, 0, Dot(e.frame_b[m], e.axis_b), 0.0, 1e-15);
          ref[m] = Dot(e.frame_b[m], vc);
        }
      }
      for (int k = 0; k < nv; k++) {
        Av[k] = 0;
        for (int i = 0; i < nq; i++) Av[k] += A[k * nq + i] * qdot[i];
      }
      ExpectArrayClose(&ctx, "A qdot vs the contact velocity", 1, nv, Av, ref, 1e-13);
      /* dA at a generic state */
      RandomState(&e, 2.5, q);
      kernel->velocity_constraint(&e, q, A, dA);
      for (int j = 0; j < nq; j++) {
        double qp[12], qm[12], Ap[24], Am[24];
        memcpy(qp, q, sizeof(q));
        memcpy(qm, q, sizeof(q));
        qp[j] += FD_STEP;
        qm[j] -= FD_STEP;
        kernel->velocity_constraint(&e, qp, Ap, NULL);
        kernel->velocity_constraint(&e, qm, Am, NULL);
        for (int k = 0; k < nv * nq; k++) fd[k * nq + j] = (Ap[k] - Am[k]) / (2 * FD_STEP);
      }
      ExpectArrayClose(&ctx, "dA vs finite differences", nv * nq, nq, dA, fd, FD_RTOL);
      if (kernel->ncon) CheckConstraint(&ctx, kernel, &e, q);
    }
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(TestPointDifference),
    cmocka_unit_test(TestVelocityConstraints),
    cmocka_unit_test(TestTimeFunctionDerivatives),
    cmocka_unit_test(TestJointForce),
    cmocka_unit_test(TestDriveDerivatives),
    cmocka_unit_test(TestDriveMotions),
    cmocka_unit_test(TestDriveErrors),
    cmocka_unit_test(TestTorsionalSpring),
    cmocka_unit_test(TestBeam),
    cmocka_unit_test(TestRigidBody),
    cmocka_unit_test(TestSpherical),
    cmocka_unit_test(TestRod),
    cmocka_unit_test(TestRevolute),
    cmocka_unit_test(TestRevoluteAligned),
    cmocka_unit_test(TestSpringLinear),
    cmocka_unit_test(TestSpringQuartic),
    cmocka_unit_test(TestSpringLinearDegenerate),
    cmocka_unit_test(TestGravity),
    cmocka_unit_test(TestQuadraticJointDerivatives),
    cmocka_unit_test(TestQuadraticJointMotions),
    cmocka_unit_test(TestDamper),
    cmocka_unit_test(TestTimeFunctions),
    cmocka_unit_test(TestLoads),
    cmocka_unit_test(TestJointTorque),
    cmocka_unit_test(TestTorsionalDamper),
  };

  return cmocka_run_group_tests(tests, NULL, NULL);
}

/* All schemes (EM, EM-G, VI-S, VI-A, VI-B, RATTLE): analytic Jacobians against finite differences on a model
   with every element type, exact preallocation, what seed 004 Sect. 6 says each scheme conserves and
   violates on its three examples, observed convergence orders, the predictors and -mbs_adapt. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <stddef.h>
#include <string.h>
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <gglmbs/gglmbs.h>
#include "stepper/stepperimpl.h"
#include "model/operators.h"
#include <gglmbs/elements.h>

static void Fail(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fail();
}

#define CHECK(call) assert_int_equal((int)(call), 0)

/* Every registered element type (src/elements/element.h), on every pair of bodies it accepts among particles,
   rigid bodies and the ground, with rigid bodies' own constraints and gravity: a new element type is in these tests
   once it is registered. Points, parameters and axes are generic values; the initial state need not satisfy the
   constraints here: the Jacobian is checked at an arbitrary point. Element types with velocity constraints
   (docs/nonholonomic.md) only with_vcon, for the schemes that treat them. */
static void BuildEveryElementModelWith(MPI_Comm comm, PetscBool with_vcon, MbsModel *model)
{
  const PetscReal              g[3]  = {0.3, -0.2, -9.81};
  const PetscReal              R1[9] = {1, 0, 0, 0, 0.8, -0.6, 0, 0.6, 0.8}, R2[9] = {0, -1, 0, 1, 0, 0, 0, 0, 1};
  const PetscReal              J1[3] = {1.0, 2.0, 2.5}, J2[3] = {0.4, 0.5, 0.6};
  const MbsElementType *const *types;
  PetscInt                     p1, p2, r1, r2, r3 = -2, ntypes;

  CHECK(MbsModelCreate(comm, model));
  CHECK(MbsModelSetGravity(*model, g));
  CHECK(MbsModelAddParticle(*model, "p1", 1.3, (PetscReal[]){0.3, -0.2, 0.5}, (PetscReal[]){0.1, 0.2, -0.3}, &p1));
  CHECK(MbsModelAddRigidBody(*model, "r1", 2.0, J1, (PetscReal[]){0, 0, 1}, R1, (PetscReal[]){0.1, 0, 0},
                             (PetscReal[]){1, 2, 3}, &r1));
  CHECK(MbsModelAddParticle(*model, "p2", 0.7, (PetscReal[]){1.1, 0.4, 0.2}, NULL, &p2));
  CHECK(MbsModelAddRigidBody(*model, "r2", 1.5, J2, (PetscReal[]){0.5, 0.5, 1.5}, R2, NULL, (PetscReal[]){-1, 0.5, 2},
                             &r2));
  if (with_vcon) /* a body for the velocity constraints alone: on r1 the other joints would imply them */
    CHECK(MbsModelAddRigidBody(*model, "r3", 1.2, J1, (PetscReal[]){-0.5, 0.2, 0.8}, R2, (PetscReal[]){0.2, -0.1, 0.3},
                               (PetscReal[]){0.5, -1, 1.5}, &r3));
  CHECK(MbsElementTypeGetAll(&ntypes, &types));
  for (PetscInt t = 0; t < ntypes; t++) {
    const MbsElementType *type = types[t];
    const PetscInt pairs[][2]  = {{p1, p2}, {r1, r2}, {r2, p1}, {MBS_GROUND, p2}, {r1, MBS_GROUND}, {MBS_GROUND, r2}};
    const PetscInt npairs      = type->connection == MBS_ELEM_TWO_BODIES ? 6 : 2;

    if (type->kernel->nvcon && !with_vcon) continue;
    for (PetscInt k = 0; k < npairs; k++) {
      PetscInt    a = pairs[k][0], b = pairs[k][1];
      MbsElemData d;

      if (type->connection != MBS_ELEM_TWO_BODIES) { /* one body, the ground as b */
        a = k ? (type->kernel->nvcon ? r3 : r1) : p1;
        b = MBS_GROUND;
      }
      if (((type->needs_orientation & MBS_ELEM_ORIENT_A) && (a == p1 || a == p2)) ||
          ((type->needs_orientation & MBS_ELEM_ORIENT_B) && (b == p1 || b == p2)) ||
          (type->joins_centres && (a == MBS_GROUND || b == MBS_GROUND)))
        continue;
      CHECK(PetscMemzero(&d, sizeof(d)));
      for (int i = 0; i < 3; i++) { /* points: zero on particles, off the centre on rigid bodies and the ground */
        d.Xa[i] =
          (a == r1 || a == r2 || a == r3 || a == MBS_GROUND) && !type->joins_centres ? 0.1 * (i + 1) - 0.05 * t : 0.0;
        d.Xb[i] = (b == r1 || b == r2 || b == MBS_GROUND) && !type->joins_centres ? 0.2 - 0.15 * i + 0.03 * k : 0.0;
      }
      for (PetscInt p = 0; p < type->nparams; p++) {
        const MbsElemParam *prm = &type->params[p];
        if (prm->kind == MBS_ELEM_PARAM_REAL)
          *(PetscReal *)((char *)&d + prm->offset[0]) =
            prm->fallback == MBS_ELEM_DEFAULT_BY_TYPE ? MBS_ELEM_UNSET : 0.6 + 0.1 * p + 0.05 * k;
        else if (prm->kind == MBS_ELEM_PARAM_DIRECTION || prm->kind == MBS_ELEM_PARAM_VECTOR) {
          PetscReal *v = (PetscReal *)((char *)&d + prm->offset[0]);
          v[0] = 0.3, v[1] = 1.0, v[2] = -0.2;
        } else if (prm->kind == MBS_ELEM_PARAM_TIME_FUNCTION) {
          MbsTimeFunction *f = (MbsTimeFunction *)((char *)&d + prm->offset[0]);
          f->kind            = MBS_TIME_HARMONIC;
          f->p[0] = 0.8, f->p[1] = 1.5, f->p[2] = 0.3, f->p[3] = -0.8 * PetscSinReal(0.3); /* 0 at t = 0 (drives) */
        } else {
          PetscReal *u = (PetscReal *)((char *)&d + prm->offset[0]), *v = (PetscReal *)((char *)&d + prm->offset[1]);
          u[0] = 0.1, u[1] = 0.2, u[2] = 1.0;
          v[0] = 0.3, v[1] = 1.0, v[2] = -0.2;
        }
      }
      CHECK(MbsModelAddElement(*model, type, a, b, &d, NULL));
    }
  }
  CHECK(MbsModelSetInitialTolerance(*model, PETSC_MAX_REAL));
  CHECK(MbsModelSetUp(*model));
}

/* Whether scheme `type` treats velocity constraints (MbsSchemeOps.velocity_constraints) */
static PetscBool SchemeTreatsVelocityConstraints(const char *type)
{
  MbsModel   model;
  MbsStepper st;
  PetscInt   p;
  PetscBool  treats;

  CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
  CHECK(MbsModelAddParticle(model, "p", 1.0, (PetscReal[]){0, 0, 0}, NULL, &p));
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetType(st, type));
  treats = st->ops->velocity_constraints;
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  return treats;
}

/* The every-element model for a scheme: with the velocity constraints if it treats them */
static void BuildEveryElementModel(MPI_Comm comm, const char *scheme, MbsModel *model)
{
  BuildEveryElementModelWith(comm, scheme ? SchemeTreatsVelocityConstraints(scheme) : PETSC_FALSE, model);
}

/* A pseudo-random state: unknowns X near the step-start state, multipliers of order one. */
static void Randomize(MbsStepper st, PetscRandom rnd, Vec X)
{
  CHECK(VecSetRandom(st->q, rnd));
  CHECK(VecSetRandom(st->p, rnd));
  CHECK(MbsModelCoordinatesToLocal(st->model, st->q, st->q0));
  CHECK(MbsModelCoordinatesToLocal(st->model, st->p, st->p0));
  CHECK(VecSetRandom(X, rnd));
}

/* A scheme with its parameters; the non-default ones reach Jacobian blocks the defaults leave out. */
typedef struct {
  const char *type;
  PetscInt    nparams;
  const char *name[2];
  PetscReal   value[2];
} SchemeCase;

/* Every registered scheme with its default parameters (ForEachScheme()), and these non-default parameters */
static const SchemeCase parameter_cases[] = {
  {"vi-a", 1, {"theta"}, {0.3}},
  {"vi-b", 2, {"theta", "vartheta"}, {0.4, 0.7}},
  {"vi-b", 2, {"theta", "vartheta"}, {0.0, 1.0}},
  {"galerkin-lgg", 1, {"points"}, {5}},
  {"galerkin-egl", 1, {"points"}, {4}},
  {"galerkin-llg", 1, {"points"}, {2}},
  {"galerkin-ell", 1, {"points"}, {6}},
  {"dla", 1, {"tau"}, {0.3}},
  {"dh", 1, {"tau"}, {0.3}},
};

/* check() on every registered scheme (a new scheme is tested once it is registered), then on parameter_cases */
static void ForEachScheme(void (*check)(const SchemeCase *))
{
  const char **names;
  int          n;

  CHECK(MbsStepperInitializePackage());
  CHECK(PetscFunctionListGet(MbsSchemeFunctions, &names, &n));
  int checked = 0;
  for (int i = 0; i < n; i++) {
    const SchemeCase sc = {names[i], 0, {NULL}, {0}};
    if (!names[i] || !names[i][0]) continue; /* PetscFunctionListGet() leaves gaps */
    check(&sc);
    checked++;
  }
  assert_true(checked >= 5); /* the five built-in schemes at least */
  CHECK(PetscFree(names));
  for (size_t i = 0; i < sizeof(parameter_cases) / sizeof(parameter_cases[0]); i++) check(&parameter_cases[i]);
}

static void SetScheme(MbsStepper st, const SchemeCase *sc)
{
  CHECK(MbsStepperSetType(st, sc->type));
  for (PetscInt i = 0; i < sc->nparams; i++) CHECK(MbsStepperSetSchemeParameter(st, sc->name[i], sc->value[i]));
}

/* A host's state force (MbsStepperSetStateForce()) written as a host would: axial linear dampers with zero-length
   linear springs between point Xa of body a and point Xb of body b (either may be the ground), f_a = -k d - c u n with
   d = x_a - x_b, n = d/|d|, u = n . d', and -f_a on b: the damper of src/elements/damper.c plus a spring. The host
   gathers the coordinates it needs to every rank with a VecScatter made once; rank 0 adds the forces. */
typedef struct {
  PetscInt  a, b;
  PetscReal Xa[3], Xb[3], damping, stiffness;
} HostDamper;

typedef struct {
  MbsModel   model;
  PetscInt   n;
  HostDamper d[3];
  VecScatter gather;
  Vec        q_all, v_all;
  PetscBool  stray_entry; /* the Jacobian adds an entry outside the declared pattern */
  PetscInt   force_calls, jacobian_calls;
} HostForces;

static PetscErrorCode HostPoint(HostForces *c, PetscInt body, const PetscReal X[3], const PetscScalar *all,
                                PetscReal x[3])
{
  PetscInt    offset, n;
  PetscMPIInt owner;

  PetscFunctionBegin;
  if (body == MBS_GROUND) {
    for (int i = 0; i < 3; i++) x[i] = X[i];
    PetscFunctionReturn(0);
  }
  PetscCall(MbsModelGetBodyCoordinates(c->model, body, &offset, &n, &owner));
  PetscCall(MbsModelGetPointFromCoordinates(c->model, body, X, all + offset, x));
  PetscFunctionReturn(0);
}

/* Every damper's relative position d and velocity dv (world frame), on every rank */
static PetscErrorCode HostGather(HostForces *c, Vec q, Vec v, PetscReal d[][3], PetscReal dv[][3])
{
  const PetscScalar *qa, *va;

  PetscFunctionBegin;
  if (!c->gather) {
    PetscCall(VecScatterCreateToAll(q, &c->gather, &c->q_all));
    PetscCall(VecDuplicate(c->q_all, &c->v_all));
  }
  PetscCall(VecScatterBegin(c->gather, q, c->q_all, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(c->gather, q, c->q_all, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterBegin(c->gather, v, c->v_all, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(c->gather, v, c->v_all, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetArrayRead(c->q_all, &qa));
  PetscCall(VecGetArrayRead(c->v_all, &va));
  for (PetscInt k = 0; k < c->n; k++) {
    const HostDamper *h       = &c->d[k];
    const PetscReal   zero[3] = {0, 0, 0};
    PetscReal         xa[3], xb[3], va_[3], vb[3];
    PetscCall(HostPoint(c, h->a, h->Xa, qa, xa));
    PetscCall(HostPoint(c, h->b, h->Xb, qa, xb));
    /* a material point's velocity is C times the coordinates' rates; the ground's is zero */
    PetscCall(h->a == MBS_GROUND ? PetscArraycpy(va_, zero, 3) : HostPoint(c, h->a, h->Xa, va, va_));
    PetscCall(h->b == MBS_GROUND ? PetscArraycpy(vb, zero, 3) : HostPoint(c, h->b, h->Xb, va, vb));
    for (int i = 0; i < 3; i++) d[k][i] = xa[i] - xb[i], dv[k][i] = va_[i] - vb[i];
  }
  PetscCall(VecRestoreArrayRead(c->v_all, &va));
  PetscCall(VecRestoreArrayRead(c->q_all, &qa));
  PetscFunctionReturn(0);
}

/* HostGather(), and whether this rank adds the forces (rank 0 of obj's communicator) */
static PetscErrorCode HostGatherOnRankZero(HostForces *c, Vec q, Vec v, PetscObject obj, PetscReal d[][3],
                                           PetscReal dv[][3], PetscBool *mine)
{
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCall(HostGather(c, q, v, d, dv));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm(obj), &rank));
  *mine = (PetscBool)(rank == 0);
  PetscFunctionReturn(0);
}

static PetscErrorCode HostStateForce(MbsStepper st, PetscReal t, Vec q, Vec v, Vec F, void *ctx)
{
  HostForces *c = (HostForces *)ctx;
  PetscReal   d[3][3], dv[3][3];
  PetscBool   mine;

  PetscFunctionBegin;
  (void)st, (void)t;
  c->force_calls++;
  PetscCall(HostGatherOnRankZero(c, q, v, (PetscObject)F, d, dv, &mine));
  if (!mine) PetscFunctionReturn(0);
  for (PetscInt k = 0; k < c->n; k++) {
    const HostDamper *h = &c->d[k];
    const PetscReal   r = PetscSqrtReal(d[k][0] * d[k][0] + d[k][1] * d[k][1] + d[k][2] * d[k][2]);
    const PetscReal   u = (d[k][0] * dv[k][0] + d[k][1] * dv[k][1] + d[k][2] * dv[k][2]) / r;
    PetscReal         fa[3], fb[3];
    for (int i = 0; i < 3; i++) fa[i] = -h->stiffness * d[k][i] - h->damping * u * d[k][i] / r, fb[i] = -fa[i];
    PetscCall(MbsModelAddPointForce(c->model, h->a, h->Xa, fa, F));
    PetscCall(MbsModelAddPointForce(c->model, h->b, h->Xb, fb, F));
  }
  PetscFunctionReturn(0);
}

/* dF/dq + shift dF/dv: with P = I - n n^T, df_a/dd = -k I - c (n (P d')^T + u P)/r, df_a/dd' = -c n n^T */
static PetscErrorCode HostStateForceJacobian(MbsStepper st, PetscReal t, Vec q, Vec v, PetscReal shift, Mat J,
                                             void *ctx)
{
  HostForces *c = (HostForces *)ctx;
  PetscReal   d[3][3], dv[3][3];
  PetscBool   mine;

  PetscFunctionBegin;
  (void)st, (void)t;
  c->jacobian_calls++;
  PetscCall(HostGatherOnRankZero(c, q, v, (PetscObject)J, d, dv, &mine));
  if (!mine) PetscFunctionReturn(0);
  for (PetscInt k = 0; k < c->n; k++) {
    const HostDamper *h = &c->d[k];
    const PetscReal   r = PetscSqrtReal(d[k][0] * d[k][0] + d[k][1] * d[k][1] + d[k][2] * d[k][2]);
    PetscReal         n[3], u = 0, Pdv[3], K[9], mK[9];
    for (int i = 0; i < 3; i++) n[i] = d[k][i] / r, u += n[i] * dv[k][i];
    for (int i = 0; i < 3; i++) Pdv[i] = dv[k][i] - u * n[i];
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        K[3 * i + j] = -h->stiffness * (i == j) - h->damping * (n[i] * Pdv[j] + u * ((i == j) - n[i] * n[j])) / r -
                       shift * h->damping * n[i] * n[j];
        mK[3 * i + j] = -K[3 * i + j];
      }
    PetscCall(MbsModelAddPointForceJacobian(c->model, h->a, h->Xa, h->a, h->Xa, K, J));
    PetscCall(MbsModelAddPointForceJacobian(c->model, h->a, h->Xa, h->b, h->Xb, mK, J));
    PetscCall(MbsModelAddPointForceJacobian(c->model, h->b, h->Xb, h->a, h->Xa, mK, J));
    PetscCall(MbsModelAddPointForceJacobian(c->model, h->b, h->Xb, h->b, h->Xb, K, J));
  }
  if (c->stray_entry) PetscCall(MatSetValue(J, 0, 1, 1.0, ADD_VALUES));
  PetscFunctionReturn(0);
}

/* Attaches the host's forces c (c->model and the dampers set) to st, with their Jacobian when jacobian is true */
static void AttachHostForces(MbsStepper st, HostForces *c, PetscBool jacobian)
{
  PetscInt pairs[6];
  Mat      J = NULL;

  for (PetscInt k = 0; k < c->n; k++) pairs[2 * k] = c->d[k].a, pairs[2 * k + 1] = c->d[k].b;
  if (jacobian) CHECK(MbsModelCreateCoordinateMatrix(c->model, c->n, pairs, &J));
  CHECK(MbsStepperSetStateForce(st, HostStateForce, J, jacobian ? HostStateForceJacobian : NULL, c));
  CHECK(MatDestroy(&J));
}

static void HostForcesDestroy(HostForces *c)
{
  CHECK(VecScatterDestroy(&c->gather));
  CHECK(VecDestroy(&c->q_all));
  CHECK(VecDestroy(&c->v_all));
}

/* The step Jacobian against central differences of the residual at a random point; with host forces attached (host
   not NULL) too */
static void CheckJacobianWith(const SchemeCase *sc, HostForces *host)
{
  MbsModel    model;
  MbsStepper  st;
  PetscRandom rnd;
  Vec         X, Xp, Xm, Fp, Fm;
  Mat         J;
  PetscInt    n;
  PetscReal   jmax = 0, errmax = 0;

  BuildEveryElementModel(PETSC_COMM_WORLD, sc->type, &model);
  CHECK(MbsStepperCreate(model, &st));
  SetScheme(st, sc);
  CHECK(MbsStepperSetTimeStep(st, 0.1));
  if (host) {
    host->model = model;
    AttachHostForces(st, host, PETSC_TRUE);
  }
  CHECK(MbsStepperSetUp(st));
  st->tstep[0] = 0.3, st->tstep[1] = 0.4, st->tmid = 0.35; /* a step from t = 0.3: the drives' and loads' times */
  CHECK(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  CHECK(PetscRandomSetInterval(rnd, -1.0, 1.0));
  CHECK(PetscRandomSetSeed(rnd, 7));
  CHECK(PetscRandomSeed(rnd));
  CHECK(VecDuplicate(st->X, &X));
  /* the first assembly records the pattern; the one checked is a later one, written in place into that pattern (on
     several ranks: with the entries of rows of other ranks sent to them) at another point */
  Randomize(st, rnd, X);
  CHECK(SNESComputeJacobian(st->snes, X, st->J, st->J));
  Randomize(st, rnd, X);
  CHECK(VecDuplicate(X, &Xp));
  CHECK(VecDuplicate(X, &Xm));
  CHECK(VecDuplicate(X, &Fp));
  CHECK(VecDuplicate(X, &Fm));
  CHECK(SNESComputeJacobian(st->snes, X, st->J, st->J));
  J = st->J;
  CHECK(VecGetSize(X, &n));
  CHECK(MatNorm(J, NORM_MAX, &jmax));
  for (PetscInt j = 0; j < n; j++) {
    const PetscReal eps = 1e-6;
    PetscInt        lo, hi;
    CHECK(VecCopy(X, Xp));
    CHECK(VecCopy(X, Xm));
    CHECK(VecGetOwnershipRange(X, &lo, &hi));
    if (j >= lo && j < hi) {
      CHECK(VecSetValue(Xp, j, eps, ADD_VALUES));
      CHECK(VecSetValue(Xm, j, -eps, ADD_VALUES));
    }
    CHECK(VecAssemblyBegin(Xp));
    CHECK(VecAssemblyEnd(Xp));
    CHECK(VecAssemblyBegin(Xm));
    CHECK(VecAssemblyEnd(Xm));
    CHECK(SNESComputeFunction(st->snes, Xp, Fp));
    CHECK(SNESComputeFunction(st->snes, Xm, Fm));
    CHECK(VecAXPY(Fp, -1.0, Fm));
    CHECK(VecScale(Fp, 0.5 / eps));
    CHECK(VecGetOwnershipRange(Fp, &lo, &hi));
    for (PetscInt i = lo; i < hi; i++) {
      PetscScalar fd, an;
      CHECK(VecGetValues(Fp, 1, &i, &fd));
      CHECK(MatGetValues(J, 1, &i, 1, &j, &an));
      if (PetscAbsScalar(fd - an) > errmax) errmax = PetscAbsScalar(fd - an);
    }
  }
  CHECK(MPI_Allreduce(MPI_IN_PLACE, &errmax, 1, MPIU_REAL, MPI_MAX, PETSC_COMM_WORLD));
  if (!(errmax <= 1e-7 * PetscMax(1.0, jmax)))
    Fail("%s (%s %g %s %g): Jacobian differs from finite differences: max |J - Jfd| = %g, max |J| = %g\n", sc->type,
         sc->name[0] ? sc->name[0] : "", sc->nparams > 0 ? (double)sc->value[0] : 0.0, sc->name[1] ? sc->name[1] : "",
         sc->nparams > 1 ? (double)sc->value[1] : 0.0, (double)errmax, (double)jmax);
  CHECK(VecDestroy(&X));
  CHECK(VecDestroy(&Xp));
  CHECK(VecDestroy(&Xm));
  CHECK(VecDestroy(&Fp));
  CHECK(VecDestroy(&Fm));
  CHECK(PetscRandomDestroy(&rnd));
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  if (host) HostForcesDestroy(host);
}

static void CheckJacobian(const SchemeCase *sc)
{
  CheckJacobianWith(sc, NULL);
}

static void test_jacobians_match_finite_differences(void **state)
{
  ForEachScheme(CheckJacobian);
}

/* Host forces between a rigid body and a particle, a rigid body and the ground, a particle and a rigid body of the
   every-element model (bodies p1, r1, p2, r2 in that order) */
static void CheckJacobianStateForce(const SchemeCase *sc)
{
  HostForces host = {
    .n = 3,
    .d = {{1, 2, {0.1, -0.2, 0.3}, {0, 0, 0}, 1.5, 2.5},
          {3, MBS_GROUND, {0.2, 0.1, -0.1}, {0.5, 0.5, 0.5}, 0.7, 4.0},
          {0, 1, {0, 0, 0}, {-0.1, 0.2, 0.1}, 2.0, 0.5}},
  };
  CheckJacobianWith(sc, &host);
  assert_true(host.jacobian_calls > 0 && host.force_calls > host.jacobian_calls);
}

/* A host's state force with its Jacobian (MbsStepperSetStateForce()) in every scheme's step Jacobian, on 1-3 ranks */
static void test_state_force_jacobian(void **state)
{
  (void)state;
  ForEachScheme(CheckJacobianStateForce);
}

/* Allocated and used nonzeros and mallocs of this rank's storage: the matrix itself, or for MPIAIJ its
   diagonal and off-diagonal SeqAIJ blocks. */
static void LocalStorage(Mat J, PetscReal *allocated, PetscReal *used, PetscReal *mallocs)
{
  PetscBool mpi;
  Mat       blocks[2] = {J, NULL};
  MatInfo   info;

  *allocated = *used = *mallocs = 0;
  CHECK(PetscObjectTypeCompare((PetscObject)J, MATMPIAIJ, &mpi));
  if (mpi) CHECK(MatMPIAIJGetSeqAIJ(J, &blocks[0], &blocks[1], NULL));
  for (int b = 0; b < 2 && blocks[b]; b++) {
    CHECK(MatGetInfo(blocks[b], MAT_LOCAL, &info));
    *allocated += info.nz_allocated;
    *used += info.nz_used;
    *mallocs += info.mallocs;
  }
}

/* Assemble the Jacobian of the every-element model twice at random states on comm; return this rank's
   storage after each assembly and the global number of nonzeros. */
static void AssembleTwice(MPI_Comm comm, const SchemeCase *sc, PetscReal alloc[2], PetscReal used[2],
                          PetscReal mallocs[2], PetscReal *nz_global)
{
  MbsModel    model;
  MbsStepper  st;
  PetscRandom rnd;
  MatInfo     info;

  BuildEveryElementModel(comm, sc->type, &model);
  CHECK(MbsStepperCreate(model, &st));
  SetScheme(st, sc);
  CHECK(MbsStepperSetUp(st));
  CHECK(PetscRandomCreate(comm, &rnd));
  CHECK(PetscRandomSetSeed(rnd, 11));
  CHECK(PetscRandomSeed(rnd));
  for (int k = 0; k < 2; k++) {
    Randomize(st, rnd, st->X);
    CHECK(SNESComputeJacobian(st->snes, st->X, st->J, st->J));
    LocalStorage(st->J, &alloc[k], &used[k], &mallocs[k]);
  }
  CHECK(MatGetInfo(st->J, MAT_GLOBAL_SUM, &info));
  *nz_global = info.nz_used;
  CHECK(PetscRandomDestroy(&rnd));
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
}

/* The pattern recorded at the first assembly preallocates the matrix exactly: no unused slots, no
   mallocs, the same nonzeros at every assembly. On several ranks, where the blocks are built from the
   COO arrays, the distributed matrix has exactly the nonzeros of a serial copy of the same model. */
static void CheckPreallocation(const SchemeCase *sc)
{
  PetscReal   alloc[2], used[2], mallocs[2], nz, nz_serial;
  PetscMPIInt size;

  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  AssembleTwice(PETSC_COMM_SELF, sc, alloc, used, mallocs, &nz_serial);
  if (mallocs[0] != 0 || mallocs[1] != 0)
    Fail("%s: Jacobian assembly allocated: %g then %g mallocs\n", sc->type, mallocs[0], mallocs[1]);
  if (alloc[0] != used[0] || used[0] <= 0)
    Fail("%s: Jacobian preallocation not exact: %g allocated, %g used\n", sc->type, alloc[0], used[0]);
  if (used[1] != used[0] || alloc[1] != alloc[0])
    Fail("%s: Jacobian pattern changed between assemblies: %g -> %g nonzeros\n", sc->type, used[0], used[1]);
  if (size > 1) {
    AssembleTwice(PETSC_COMM_WORLD, sc, alloc, used, mallocs, &nz);
    if (mallocs[0] != 0 || mallocs[1] != 0)
      Fail("%s: Distributed Jacobian assembly allocated: %g then %g mallocs\n", sc->type, mallocs[0], mallocs[1]);
    if (used[1] != used[0])
      Fail("%s: Distributed Jacobian pattern changed between assemblies: %g -> %g nonzeros\n", sc->type, used[0],
           used[1]);
    if (nz != nz_serial) Fail("%s: Distributed Jacobian has %g nonzeros, the serial one %g\n", sc->type, nz, nz_serial);
  }
}

static void test_jacobian_preallocation_exact(void **state)
{
  ForEachScheme(CheckPreallocation);
}

/* ---------------------------------------------------------------- running the paper's examples */

typedef struct {
  const char  *input; /* relative to the source tree */
  const char  *scheme;
  PetscReal    h, t_end; /* 0: the input's own */
  MbsPredictor predictor;
  PetscBool    adapt;
  PetscReal    points; /* the Galerkin schemes' parameter points (0: its default) */
} RunSpec;

typedef struct {
  PetscReal E0, dE_rel;          /* max |E - E0| / |E0| */
  PetscReal dE_first, dE_second; /* max |E - E0| over the first and the second half of the steps */
  PetscReal dJz, dJL;            /* max |Jz - Jz0|; max over all components of J and L */
  PetscReal g, gv, Gv; /* max over the nodes of |g(q)|, |G(q) M^-1 p|, and of the scheme's own |G(q_theta) v| */
  PetscReal gv_tip,
    gv_body; /* max |G(q) M^-1 p| over the rows of spherical joints and of rigid-body internal constraints */
  PetscInt     steps, its, retries;
  PetscInt     nq;
  PetscScalar *q, *p; /* final state, on every rank */
  PetscReal   *diag;  /* per node n = 0..steps: E, T, V, J, L, g_max, gv_max (MBS_NDIAG values) */
} RunResult;

#define MBS_NDIAG 11

static void FreeResult(RunResult *r)
{
  CHECK(PetscFree2(r->q, r->p));
  CHECK(PetscFree(r->diag));
}

static void StoreDiagnostics(RunResult *r, PetscInt n, const MbsDiagnostics *d)
{
  PetscReal *x = r->diag + n * MBS_NDIAG;
  x[0]         = d->E;
  x[1]         = d->T;
  x[2]         = d->V;
  for (int i = 0; i < 3; i++) {
    x[3 + i] = d->J[i];
    x[6 + i] = d->L[i];
  }
  x[9]  = d->g_max;
  x[10] = d->gv_max;
}

/* max |G(q) M^-1 p| over the constraint rows of the elements of one kernel (collective) */
static PetscReal KernelVelocityResidual(MbsStepper st, const char *kernel)
{
  MbsModel     model = st->model;
  PetscScalar *q = st->work[0], *w = st->work[1], *gv;
  PetscReal    max = 0;

  CHECK(MbsModelCoordinatesToLocal(model, st->q, q));
  CHECK(MbsModelCoordinatesToLocal(model, st->p, w));
  for (PetscInt i = 0; i < model->nq_ghosted; i++) w[i] *= model->minv[i];
  CHECK(PetscCalloc1(model->ncon_local + 1, &gv));
  CHECK(MbsOpGMultAdd(model, q, w, 1.0, gv));
  for (PetscInt k = 0; k < model->nelem_local; k++) {
    const MbsElement *el = MbsModelLocalElement(model, k);
    if (strcmp(el->kernel->name, kernel)) continue;
    for (PetscInt r = 0; r < el->kernel->ncon; r++) max = PetscMax(max, PetscAbsScalar(gv[model->elem_c[k] + r]));
  }
  CHECK(PetscFree(gv));
  CHECK(MPI_Allreduce(MPI_IN_PLACE, &max, 1, MPIU_REAL, MPI_MAX, PetscObjectComm((PetscObject)model)));
  return max;
}

/* x gathered in input (body) order, whatever the partition, onto every rank. */
static void GatherToAll(MbsModel model, Vec x, PetscScalar **all)
{
  VecScatter         sc;
  Vec                seq;
  const PetscScalar *a;
  PetscInt           n, N;

  CHECK(VecGetSize(x, &N));
  CHECK(MbsModelCreateScatterToZero(model, x, &sc, &seq));
  CHECK(VecScatterBegin(sc, x, seq, INSERT_VALUES, SCATTER_FORWARD));
  CHECK(VecScatterEnd(sc, x, seq, INSERT_VALUES, SCATTER_FORWARD));
  CHECK(VecGetLocalSize(seq, &n));
  CHECK(VecGetArrayRead(seq, &a));
  CHECK(PetscArraycpy(*all, a, n));
  CHECK(VecRestoreArrayRead(seq, &a));
  CHECK(MPI_Bcast(*all, (int)N, MPIU_SCALAR, 0, PetscObjectComm((PetscObject)model)));
  CHECK(VecScatterDestroy(&sc));
  CHECK(VecDestroy(&seq));
}

/* Runs an input with a scheme and collects the diagnostics of every node. One rank: KLU (fast on
   these small systems); several: the default MUMPS. */
static void RunOn(MPI_Comm comm, const RunSpec *spec, RunResult *res)
{
  char           path[PETSC_MAX_PATH_LEN];
  const char    *src = getenv("GGLMBS_SOURCE_DIR");
  MbsModel       model;
  MbsStepper     st;
  MbsRunConfig   cfg;
  MbsDiagnostics d;
  PetscMPIInt    size;
  PetscReal      J0[3], L0[3];

  assert_non_null(src);
  memset(res, 0, sizeof(*res));
  snprintf(path, sizeof(path), "%s/%s", src, spec->input);
  CHECK(MPI_Comm_size(comm, &size));
  CHECK(MbsModelCreate(comm, &model));
  CHECK(MbsRunConfigSetDefaults(&cfg));
  CHECK(MbsModelLoadYAML(model, path, &cfg));
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetType(st, spec->scheme ? spec->scheme : cfg.scheme));
  CHECK(MbsStepperSetTimeStep(st, spec->h > 0 ? spec->h : cfg.dt));
  CHECK(MbsStepperSetPredictor(st, spec->predictor));
  CHECK(MbsStepperSetAdapt(st, spec->adapt, PETSC_DEFAULT));
  if (spec->points > 0) CHECK(MbsStepperSetSchemeParameter(st, "points", spec->points));
  if (size == 1) {
    SNES snes;
    KSP  ksp;
    PC   pc;
    CHECK(MbsStepperGetSNES(st, &snes));
    CHECK(SNESGetKSP(snes, &ksp));
    CHECK(KSPGetPC(ksp, &pc));
    CHECK(PCFactorSetMatSolverType(pc, MATSOLVERKLU));
  }
  CHECK(MbsStepperComputeDiagnostics(st, &d));
  res->E0 = d.E;
  for (int i = 0; i < 3; i++) {
    J0[i] = d.J[i];
    L0[i] = d.L[i];
  }
  res->g  = d.g_max;
  res->gv = d.gv_max;
  res->steps =
    (PetscInt)PetscCeilReal((spec->t_end > 0 ? spec->t_end : cfg.t_end) / (spec->h > 0 ? spec->h : cfg.dt) - 1e-9);
  CHECK(PetscMalloc1((res->steps + 1) * MBS_NDIAG, &res->diag));
  StoreDiagnostics(res, 0, &d);
  for (PetscInt n = 1; n <= res->steps; n++) {
    PetscReal dE;
    CHECK(MbsStepperStep(st));
    CHECK(MbsStepperComputeDiagnostics(st, &d));
    StoreDiagnostics(res, n, &d);
    dE          = PetscAbsReal(d.E - res->E0);
    res->dE_rel = PetscMax(res->dE_rel, dE / PetscAbsReal(res->E0));
    if (2 * n <= res->steps)
      res->dE_first = PetscMax(res->dE_first, dE);
    else
      res->dE_second = PetscMax(res->dE_second, dE);
    res->dJz = PetscMax(res->dJz, PetscAbsReal(d.J[2] - J0[2]));
    for (int i = 0; i < 3; i++)
      res->dJL = PetscMax(res->dJL, PetscMax(PetscAbsReal(d.J[i] - J0[i]), PetscAbsReal(d.L[i] - L0[i])));
    res->g  = PetscMax(res->g, d.g_max);
    res->gv = PetscMax(res->gv, d.gv_max);
    if (d.has_Gv) res->Gv = PetscMax(res->Gv, d.Gv_max);
    res->gv_tip  = PetscMax(res->gv_tip, KernelVelocityResidual(st, "spherical"));
    res->gv_body = PetscMax(res->gv_body, KernelVelocityResidual(st, "rigid_body"));
  }
  CHECK(MbsStepperGetNewtonIterations(st, NULL, &res->its));
  CHECK(MbsStepperGetAdaptRetries(st, &res->retries));
  CHECK(VecGetSize(st->q, &res->nq));
  CHECK(PetscMalloc2(res->nq, &res->q, res->nq, &res->p));
  GatherToAll(model, st->q, &res->q);
  GatherToAll(model, st->p, &res->p);
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
}

static void Run(const RunSpec *spec, RunResult *res)
{
  RunOn(PETSC_COMM_WORLD, spec, res);
}

/* ---------------------------------------------------------------- seed 004 Sect. 6, scheme by scheme */

typedef enum { PENDULUM, HEAVY_TOP, FOUR_PARTICLE, JOINT_ZOO, SPRING_PENDULUM } ExampleId;
static const char *const example_input[] = {"inputs/pendulum3d.yaml", "inputs/heavy_top.yaml",
                                            "inputs/four_particle.yaml", "tests/inputs/joints/joint_zoo.yaml",
                                            "inputs/spring_pendulum.yaml"};
static const PetscReal   example_h[]     = {0.05, 0.002, 0.01, 0.002, 0.1};

static PetscBool Is(const char *a, const char *b)
{
  return strcmp(a, b) ? PETSC_FALSE : PETSC_TRUE;
}

/*
  What each scheme must show on an example at the paper's h and T:
  - EM, EM-G conserve energy to round-off. VI-S, VI-A, VI-B are symplectic, not energy-conserving: by
    backward error analysis their energy error stays bounded (no drift) at O(h^p), p their order. We
    assert that it is far above round-off (> 1e-8 relative), that it does not grow (its maximum over
    the second half of the run is at most 1.2 times that over the first half), and that it is O(h^p):
    halving h divides it by at least 2^p/1.2 (p = 1 for VI-S, VI-B; 2 for VI-A).
  - All conserve the symmetric momentum maps (Jz under gravity; all of J and L for the free four
    particles) to round-off (the joint mechanism has none).
  - Position constraints hold at the nodes for all but VI-A, which violates them (> 1e-6).
  - Velocity constraints: EM at the nodes; VI-A and VI-B in their own velocity unknown, not with the
    nodal momentum; VI-S on the pendulum, and on the heavy top only in the three linear tip rows;
    EM-G violates them on the four-particle system.
*/
static void CheckSection6(ExampleId ex, const char *scheme)
{
  const RunSpec spec = {example_input[ex], scheme, 0, 0, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, 0};
  const char   *in   = example_input[ex];
  RunResult     r;
  PetscBool     em = Is(scheme, "em") || Is(scheme, "em-g");

  Run(&spec, &r);
  if (em) {
    if (!(r.dE_rel <= 1e-10)) Fail("%s, %s: relative energy error %g > 1e-10\n", in, scheme, (double)r.dE_rel);
  } else {
    const PetscReal p    = Is(scheme, "vi-a") || Is(scheme, "rattle") ? 2 : 1;
    RunSpec         half = spec;
    RunResult       r2;

    if (!(r.dE_rel > 1e-8))
      Fail("%s, %s: relative energy error %g, expected a symplectic scheme's O(h^p) error far above round-off\n", in,
           scheme, (double)r.dE_rel);
    if (ex != JOINT_ZOO && !(r.dE_second <= 1.2 * r.dE_first)) /* the mechanism's 0.4 s is no longer than its periods */
      Fail("%s, %s: energy error grows: max %g over the first half, %g over the second\n", in, scheme,
           (double)r.dE_first, (double)r.dE_second);
    half.h = 0.5 * example_h[ex];
    Run(&half, &r2);
    if (!(r2.dE_rel <= 1.2 * PetscPowReal(0.5, p) * r.dE_rel))
      Fail("%s, %s: energy error %g at h, %g at h/2: not O(h^%g)\n", in, scheme, (double)r.dE_rel, (double)r2.dE_rel,
           (double)p);
    FreeResult(&r2);
  }
  /* the mechanism's ground joints and springs, and the spring pendulum's line, break the symmetry about z */
  if (ex != JOINT_ZOO && ex != SPRING_PENDULUM && !(r.dJz <= 1e-10))
    Fail("%s, %s: Jz error %g > 1e-10\n", in, scheme, (double)r.dJz);
  if (ex == FOUR_PARTICLE && !(r.dJL <= 1e-10))
    Fail("%s, %s: angular/linear momentum error %g > 1e-10\n", in, scheme, (double)r.dJL);
  if (Is(scheme, "vi-a")) {
    if (!(r.g > 1e-6))
      Fail("%s, vi-a: max |g(q_n)| = %g, expected the position constraints violated at the nodes (> 1e-6)\n", in,
           (double)r.g);
  } else if (!(r.g <= 1e-10))
    Fail("%s, %s: max |g(q_n)| = %g > 1e-10\n", in, scheme, (double)r.g);
  if ((Is(scheme, "em") || Is(scheme, "rattle")) && !(r.gv <= 1e-10))
    Fail("%s, %s: max |G(q_n) M^-1 p_n| = %g > 1e-10\n", in, scheme, (double)r.gv);
  if (Is(scheme, "vi-a") || Is(scheme, "vi-b")) {
    if (!(r.Gv <= 1e-10))
      Fail("%s, %s: max |G(q_theta) v| = %g > 1e-10 in the scheme's own velocity unknown\n", in, scheme, (double)r.Gv);
    if (!(r.gv > 1e-6))
      Fail("%s, %s: max |G(q_n) M^-1 p_n| = %g: expected the nodal momentum to violate the velocity constraints (> "
           "1e-6)\n",
           in, scheme, (double)r.gv);
  } else if (r.Gv != 0)
    Fail("%s, %s: Gv_max reported for a scheme without a velocity unknown\n", in, scheme);
  if (Is(scheme, "vi-s") && ex == PENDULUM && !(r.gv <= 1e-10))
    Fail("%s, vi-s: max |G(q_n) M^-1 p_n| = %g > 1e-10\n", in, (double)r.gv);
  if (Is(scheme, "vi-s") && ex == HEAVY_TOP) {
    if (!(r.gv_tip <= 1e-10)) Fail("%s, vi-s: tip (linear) velocity constraints %g > 1e-10\n", in, (double)r.gv_tip);
    if (!(r.gv_body > 1e-6))
      Fail("%s, vi-s: internal velocity constraints %g, expected violated (> 1e-6)\n", in, (double)r.gv_body);
  }
  if (Is(scheme, "em-g") && ex == FOUR_PARTICLE && !(r.gv > 1e-6))
    Fail("%s, em-g: max |G(q_n) M^-1 p_n| = %g, expected violated (> 1e-6)\n", in, (double)r.gv);
  FreeResult(&r);
}

static const char *const all_schemes[] = {"em", "em-g", "vi-s", "vi-a", "vi-b", "rattle"};
#define NSCHEMES ((int)(sizeof(all_schemes) / sizeof(all_schemes[0])))

static void test_pendulum(void **state)
{
  for (int s = 0; s < NSCHEMES; s++) CheckSection6(PENDULUM, all_schemes[s]);
}

static void test_heavy_top(void **state)
{
  for (int s = 0; s < NSCHEMES; s++) CheckSection6(HEAVY_TOP, all_schemes[s]);
}

static void test_four_particle(void **state)
{
  for (int s = 0; s < NSCHEMES; s++) CheckSection6(FOUR_PARTICLE, all_schemes[s]);
}

/* The same properties on a mechanism with every joint of quadratic rows (prismatic, cylindrical, universal, weld,
   point on line, point on plane) and springs, under gravity */
static void test_joint_zoo(void **state)
{
  for (int s = 0; s < NSCHEMES; s++) CheckSection6(JOINT_ZOO, all_schemes[s]);
}

/* Man, Gao & Zhong (2020), Sect. 4.2: a particle on a line (point_on_line) with a nonlinear spring, and a
   pendulum hanging from it, 400 s */
static void test_spring_pendulum(void **state)
{
  for (int s = 0; s < NSCHEMES; s++) CheckSection6(SPRING_PENDULUM, all_schemes[s]);
}

/* EM on a large model: 1000 rods, 50 steps. */
static void test_chain(void **state)
{
  const RunSpec spec = {"inputs/chain1000.yaml", "em", 0, 0.05, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, 0};
  RunResult     r;

  Run(&spec, &r);
  if (!(r.dE_rel <= 1e-10 && r.dJz <= 1e-10 && r.g <= 1e-10 && r.gv <= 1e-10))
    Fail("chain1000, em: energy %g, Jz %g, g %g, gv %g (all must be <= 1e-10)\n", (double)r.dE_rel, (double)r.dJz,
         (double)r.g, (double)r.gv);
  FreeResult(&r);
}

/* Dampers and loads: with EM and EM-G the energy changes by exactly the work the loads supply less what the dampers
   dissipate, E_{n+1} - E_n = W_n - D_n to round-off at every step. The damped pendulum dissipates at every step
   (D_n > 0) with no supplied work; the driven top is supplied work (W != 0) with nothing dissipated. The other
   schemes keep the constraints. */
static void CheckBalance(const char *input, PetscBool damped, PetscInt nsteps)
{
  for (int s = 0; s < NSCHEMES; s++) {
    const char  *scheme = all_schemes[s];
    MbsModel     model;
    MbsStepper   st;
    MbsRunConfig cfg;
    char         path[PETSC_MAX_PATH_LEN];
    PetscReal    E0, balance = 0, dmin = PETSC_MAX_REAL, wsum = 0, dsum = 0, scale, gmax = 0;

    snprintf(path, sizeof(path), "%s/%s", getenv("GGLMBS_SOURCE_DIR"), input);
    CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
    CHECK(MbsRunConfigSetDefaults(&cfg));
    CHECK(MbsModelLoadYAML(model, path, &cfg));
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetType(st, scheme));
    CHECK(MbsStepperSetTimeStep(st, cfg.dt));
    {
      MbsDiagnostics d;
      CHECK(MbsStepperComputeDiagnostics(st, &d));
      E0    = d.E;
      scale = PetscMax(PetscAbsReal(d.E), PetscMax(d.T, PetscAbsReal(d.V)));
      if (!(d.W == 0 && d.D == 0)) Fail("%s, %s: W = %g, D = %g at the initial state\n", input, scheme, d.W, d.D);
    }
    for (PetscInt n = 1; n <= nsteps; n++) { /* E0: the energy before the step */
      MbsDiagnostics d;
      CHECK(MbsStepperStep(st));
      CHECK(MbsStepperComputeDiagnostics(st, &d));
      balance = PetscMax(balance, PetscAbsReal(d.E - E0 - d.W + d.D));
      dmin    = PetscMin(dmin, d.D);
      dsum += d.D;
      wsum += PetscAbsReal(d.W);
      gmax = PetscMax(gmax, d.g_max);
      E0   = d.E;
    }
    if (damped && !(dmin > 0 && wsum == 0))
      Fail("%s, %s: smallest D_n %g (expected > 0), sum |W_n| %g (expected 0)\n", input, scheme, dmin, wsum);
    if (!damped && !(dsum == 0 && wsum > 1e-3))
      Fail("%s, %s: sum D_n %g (expected 0), sum |W_n| %g (expected the loads' work)\n", input, scheme, dsum, wsum);
    scale = PetscMax(scale, PetscMax(wsum, dsum)); /* a system at rest with no potential starts at E = 0 */
    if ((Is(scheme, "em") || Is(scheme, "em-g")) && !(balance <= 1e-13 * scale))
      Fail("%s, %s: max |E_{n+1} - E_n - W_n + D_n| = %g, expected round-off (<= 1e-13 of %g)\n", input, scheme,
           balance, scale);
    if (!Is(scheme, "vi-a") && !(gmax <= 1e-10)) Fail("%s, %s: max |g| = %g\n", input, scheme, gmax);
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
  }
}

static void test_energy_balance(void **state)
{
  CheckBalance("tests/inputs/dampers/damped_pendulum.yaml", PETSC_TRUE, 200);
  CheckBalance("tests/inputs/dampers/damped_hinge.yaml", PETSC_TRUE, 200);
  CheckBalance("tests/inputs/springs/torsion_hinge.yaml", PETSC_TRUE, 200); /* torsional springs, past a half-turn */
  CheckBalance("tests/inputs/loads/driven_top.yaml", PETSC_FALSE, 500);
  CheckBalance("tests/inputs/loads/driven_crank.yaml", PETSC_FALSE, 500);
  CheckBalance("inputs/slider_crank_driven.yaml", PETSC_FALSE, 200);      /* a drive: W its constraint force's work */
  CheckBalance("tests/inputs/drives/crank_table.yaml", PETSC_FALSE, 300); /* tables: a cubic drive, a linear load */
  CheckBalance("tests/inputs/loads/pushed_carriage.yaml", PETSC_FALSE, 200); /* joint forces */
  CheckBalance("tests/inputs/drives/drive_zoo.yaml", PETSC_FALSE, 200);      /* angle, slide and position drives */
}

/* Andrews' squeezing mechanism (inputs/andrews_squeezer.yaml; Hairer & Wanner II, Sect. VII.7): seven bodies, a
   driving torque, a spring. Its seven angles at t = 0.03 against the published reference of the IVP test set
   (andrews.f, andsoln: PSIDE at tolerance 1e-14), with EM at h = 1e-5 and 5e-6: within 3e-4 and converging at second
   order. The angles come from each body's d1, unwrapped step by step (benchmarks/andrews_squeezer/make_yaml.py says
   which). */
static void test_andrews_squeezer(void **state)
{
  static const PetscReal published[7] = {0.1581077119629904e+2,  -0.1575637105984298e+2, 0.4082224013073101e-1,
                                         -0.5347301163226948e+0, 0.5244099658805304e+0,  0.5347301163226948e+0,
                                         0.1048080741042263e+1};
  PetscReal              err[2]       = {0, 0};

  for (int level = 0; level < 2; level++) {
    const PetscReal h = level ? 5e-6 : 1e-5;
    MbsModel        model;
    MbsStepper      st;
    MbsRunConfig    cfg;
    char            path[PETSC_MAX_PATH_LEN];
    PetscReal       a[7], angle[7];
    const PetscInt  nsteps = (PetscInt)(0.03 / h + 0.5);

    snprintf(path, sizeof(path), "%s/inputs/andrews_squeezer.yaml", getenv("GGLMBS_SOURCE_DIR"));
    CHECK(MbsModelCreate(PETSC_COMM_SELF, &model));
    CHECK(MbsRunConfigSetDefaults(&cfg));
    CHECK(MbsModelLoadYAML(model, path, &cfg));
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetType(st, "em"));
    CHECK(MbsStepperSetTimeStep(st, h));
    CHECK(MbsStepperSetJacobianReuse(st, PETSC_TRUE, PETSC_DEFAULT));
    CHECK(MbsStepperSetUp(st));
    for (PetscInt n = 0; n <= nsteps; n++) {
      const PetscScalar *q;
      if (n) CHECK(MbsStepperStep(st));
      CHECK(VecGetArrayRead(st->q, &q));
      for (int b = 0; b < 7; b++) { /* the absolute angle of body b, continued from the last step's */
        const PetscScalar *d1 = q + model->body_q[b] + 3;
        const PetscReal    t  = PetscAtan2Real(PetscRealPart(d1[1]), PetscRealPart(d1[0]));
        a[b]                  = n ? a[b] + remainder(t - a[b], 2 * PETSC_PI) : t;
      }
      CHECK(VecRestoreArrayRead(st->q, &q));
    }
    angle[0] = a[0], angle[1] = a[1] - a[0], angle[2] = a[2], angle[3] = a[3] - a[4], angle[4] = a[4];
    angle[5] = a[5] - a[6], angle[6] = a[6];
    for (int k = 0; k < 7; k++) err[level] = PetscMax(err[level], PetscAbsReal(angle[k] - published[k]));
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
  }
  if (!(err[0] <= 3e-4 && PetscLog2Real(err[0] / err[1]) > 1.9))
    Fail("Andrews' squeezer: max angle error %g (h = 1e-5), %g (h = 5e-6): order %g\n", err[0], err[1],
         PetscLog2Real(err[0] / err[1]));
  (void)state;
}

/* The stiff flyball governor (inputs/flyball_governor.yaml; IFToMM benchmark library A05): a free shaft, a slider on
   it, two rods with balls and two stiff spring-dampers. The slider's height at its first peak, t = 0.5 s, against the
   independent reference benchmarks/flyball_governor/reference.py (scipy Radau at rtol 1e-11, read from its
   reference_s.txt), with EM at h = 2e-3 and 1e-3: second order, and within 2e-7 m at h = 1e-3 (5.8e-8 seen). */
static void test_flyball_governor(void **state)
{
  PetscReal err[2] = {0, 0}, s_ref = -1;
  char      path[PETSC_MAX_PATH_LEN], line[256];
  FILE     *f;

  snprintf(path, sizeof(path), "%s/benchmarks/flyball_governor/reference_s.txt", getenv("GGLMBS_SOURCE_DIR"));
  f = fopen(path, "r");
  if (!f) Fail("cannot open %s\n", path);
  while (fgets(line, sizeof(line), f)) {
    double t, s;
    if (line[0] != '#' && sscanf(line, "%lf %lf", &t, &s) == 2 && fabs(t - 0.5) < 1e-9) s_ref = s;
  }
  fclose(f);
  if (!(s_ref > 0.7)) Fail("%s: no reference height at t = 0.5\n", path);
  for (int level = 0; level < 2; level++) {
    const PetscReal    h = level ? 1e-3 : 2e-3;
    MbsModel           model;
    MbsStepper         st;
    MbsRunConfig       cfg;
    const PetscScalar *q;

    snprintf(path, sizeof(path), "%s/inputs/flyball_governor.yaml", getenv("GGLMBS_SOURCE_DIR"));
    CHECK(MbsModelCreate(PETSC_COMM_SELF, &model));
    CHECK(MbsRunConfigSetDefaults(&cfg));
    CHECK(MbsModelLoadYAML(model, path, &cfg));
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetType(st, "em"));
    CHECK(MbsStepperSetTimeStep(st, h));
    CHECK(MbsStepperSetUp(st));
    for (PetscInt n = 0; n < (PetscInt)(0.5 / h + 0.5); n++) CHECK(MbsStepperStep(st));
    CHECK(VecGetArrayRead(st->q, &q));
    err[level] = PetscAbsReal(PetscRealPart(q[model->body_q[1] + 2]) - s_ref); /* the slider's centre, z */
    CHECK(VecRestoreArrayRead(st->q, &q));
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
  }
  if (!(err[1] <= 2e-7 && PetscLog2Real(err[0] / err[1]) > 1.8))
    Fail("flyball governor: slider height error %g (h = 2e-3), %g (h = 1e-3): order %g\n", err[0], err[1],
         PetscLog2Real(err[0] / err[1]));
  (void)state;
}

/* A reactions CSV written by the reactions output: msg is "" if it exists, its header line names each of the strings
   in names[] (NULL-terminated, may be empty) and its last row is step `step` with the reaction F, M exactly; else it
   says what is wrong. */
static void CheckReactionFile(const char path[], const char *const names[], PetscInt step, const PetscReal F[3],
                              const PetscReal M[3], char msg[], size_t len)
{
  char   line[1024], last[1024] = "", header[1024] = "";
  double v[8];
  FILE  *fp = fopen(path, "r");

  msg[0] = 0;
  if (!fp) {
    snprintf(msg, len, "%s was not written", path);
    return;
  }
  while (fgets(line, sizeof(line), fp)) {
    if (strstr(line, "reaction of element")) memcpy(header, line, sizeof(header));
    if (line[0] != '#') memcpy(last, line, sizeof(last));
  }
  fclose(fp);
  for (int i = 0; names[i]; i++)
    if (!strstr(header, names[i])) {
      snprintf(msg, len, "%s: header '%s' does not name '%s'", path, header, names[i]);
      return;
    }
  if (sscanf(last, "%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8 ||
      v[0] != step || v[2] != F[0] || v[3] != F[1] || v[4] != F[2] || v[5] != M[0] || v[6] != M[1] || v[7] != M[2])
    snprintf(msg, len, "%s: last row '%s', expected step %d and the reaction %g %g %g %g %g %g", path, last, (int)step,
             F[0], F[1], F[2], M[0], M[1], M[2]);
}

/* Joint reactions (MbsStepperGetReaction(), the reactions output): a rigid bar on a revolute joint to the ground under
   gravity, its centre off the hinge's plane (so the hinge carries a torque), stepped by EM-G, whose momentum balance
   holds exactly with the constraint forces at the midpoint and no other term. So over each step the bar's momentum
   changes by h (m g + F) and its angular momentum about the centre, L = sum_i d_i x p_i, by h (M + r x F) with r the
   joint point's offset from the centre at the midpoint: F and M the reaction on the bar at the joint point. Declared
   the other way round (bar first, the ground second), the reaction is what the bar exerts on the ground: the opposite.
   The CSV output holds the same numbers. */
static void test_reactions(void **state)
{
  const PetscReal h = 0.01, m = 2.0, g[3] = {0, 0, -9.81}, X[3] = {-0.3, -0.1, 0}, axis[3] = {0, 1, 0};

  for (int order = 0; order < 2; order++) {
    const PetscReal    R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, sign = order ? -1.0 : 1.0;
    MbsModel           model;
    MbsStepper         st;
    PetscInt           bar, hinge;
    PetscReal          p0[12], q0[12], F[3], M[3], err_f = 0, err_m = 0, scale_f = m * 9.81, scale_m = 0;
    const PetscScalar *q, *p;
    char               dir[] = "/tmp/gglmbs_reactions_XXXXXX", path[PETSC_MAX_PATH_LEN], msg[8192];

    if (!mkdtemp(dir)) Fail("mkdtemp failed\n");
    CHECK(MbsModelCreate(PETSC_COMM_SELF, &model));
    CHECK(MbsModelSetGravity(model, g));
    CHECK(MbsModelAddRigidBody(model, "bar", m, (PetscReal[]){0.01, 0.2, 0.205}, (PetscReal[]){0.3, 0.1, 0}, R,
                               (PetscReal[]){0, 0, -0.6}, (PetscReal[]){0, 2, 0}, &bar));
    if (order)
      CHECK(MbsModelAddRevolute(model, bar, X, axis, MBS_GROUND, (PetscReal[]){0, 0, 0}, axis, &hinge));
    else
      CHECK(MbsModelAddRevolute(model, MBS_GROUND, (PetscReal[]){0, 0, 0}, axis, bar, X, axis, &hinge));
    CHECK(MbsModelSetElementLabel(model, hinge, "hinge"));
    CHECK(MbsModelSetUp(model));
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetType(st, "em-g"));
    CHECK(MbsStepperSetTimeStep(st, h));
    CHECK(MbsStepperSetFinalTime(st, 0.3));
    CHECK(MbsStepperSetOutput(st, dir, 1));
    CHECK(MbsStepperSetReactions(st, "hinge"));
    CHECK(MbsStepperSetUp(st));
    for (int n = 0; n < 30; n++) {
      PetscReal dL[3] = {0, 0, 0}, r[3] = {0, 0, 0}, c[3];

      CHECK(VecGetArrayRead(st->q, &q));
      CHECK(VecGetArrayRead(st->p, &p));
      for (int i = 0; i < 12; i++) q0[i] = PetscRealPart(q[i]), p0[i] = PetscRealPart(p[i]);
      CHECK(VecRestoreArrayRead(st->p, &p));
      CHECK(VecRestoreArrayRead(st->q, &q));
      CHECK(MbsStepperStep(st));
      CHECK(MbsStepperGetReaction(st, hinge, F, M));
      CHECK(VecGetArrayRead(st->q, &q));
      CHECK(VecGetArrayRead(st->p, &p));
      for (int i = 1; i < 4; i++) {
        PetscReal d1[3], p1[3], dm[3];
        for (int l = 0; l < 3; l++) {
          d1[l] = PetscRealPart(q[3 * i + l]), p1[l] = PetscRealPart(p[3 * i + l]);
          dm[l] = 0.5 * (q0[3 * i + l] + d1[l]);
          r[l] += X[i - 1] * dm[l];
        }
        MbsVec3Cross(d1, p1, c);
        for (int l = 0; l < 3; l++) dL[l] += c[l];
        MbsVec3Cross(&q0[3 * i], &p0[3 * i], c);
        for (int l = 0; l < 3; l++) dL[l] -= c[l];
      }
      MbsVec3Cross(r, F, c);
      for (int l = 0; l < 3; l++) {
        const PetscReal dp = PetscRealPart(p[l]) - p0[l];
        err_f              = PetscMax(err_f, PetscAbsReal(dp / h - m * g[l] - sign * F[l]));
        err_m              = PetscMax(err_m, PetscAbsReal(dL[l] / h - sign * (M[l] + c[l])));
        scale_m            = PetscMax(scale_m, PetscAbsReal(M[l]));
      }
      CHECK(VecRestoreArrayRead(st->p, &p));
      CHECK(VecRestoreArrayRead(st->q, &q));
    }
    if (!(err_f <= 1e-10 * scale_f && err_m <= 1e-10 * scale_f && scale_m > 0.1))
      Fail("reactions (%s first): momentum balance off by %g N, angular by %g N m (torque scale %g)\n",
           order ? "the bar" : "the ground", err_f, err_m, scale_m);
    /* the CSV's last row: the reaction of the last step */
    CHECK(MbsStepperSolve(st));
    CHECK(MbsStepperGetReaction(st, hinge, F, M));
    snprintf(path, sizeof(path), "%s/reactions/hinge.csv", dir);
    CheckReactionFile(path, (const char *const[]){NULL}, 30, F, M, msg, sizeof(msg));
    if (msg[0]) Fail("%s\n", msg);
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
  }
  (void)state;
}

/* The reactions output on any number of ranks, where each rank holds only its own elements: 'all' writes one file per
   joint (the 24 revolute joints of a rigid chain, elements 1, 3, ..., 47 after the links' own constraints), named by
   by its index (the chain's joints share the chain's name in the input), its header naming that element and its bodies,
   its last row the reaction MbsStepperGetReaction() gives; joints named by their indices get the same files. And
   every rank finds a body by its name after the set-up, whether it holds the body or not. */
static void test_reactions_distributed(void **state)
{
  MPI_Comm     comm = PETSC_COMM_WORLD;
  MbsModel     model;
  MbsStepper   st;
  MbsRunConfig cfg;
  PetscMPIInt  rank;
  char         path[PETSC_MAX_PATH_LEN], dir[] = "/tmp/gglmbs_reactions_np_XXXXXX", msg[8192];
  PetscReal    FM[24][6];

  CHECK(MPI_Comm_rank(comm, &rank));
  if (!rank && !mkdtemp(dir)) Fail("mkdtemp failed\n");
  CHECK(MPI_Bcast(dir, sizeof(dir), MPI_CHAR, 0, comm));
  for (int pass = 0; pass < 2; pass++) { /* 'all', then the last and the first joint by their indices */
    snprintf(path, sizeof(path), "%s/tests/inputs/parallel/rigid_chain_revolute.yaml", getenv("GGLMBS_SOURCE_DIR"));
    CHECK(MbsModelCreate(comm, &model));
    CHECK(MbsRunConfigSetDefaults(&cfg));
    CHECK(MbsModelLoadYAML(model, path, &cfg));
    CHECK(MbsModelSetUp(model));
    for (PetscInt b = 0; b < 24; b += 23) { /* every rank finds every body by name, held here or not */
      PetscInt found;
      char     name[32];
      snprintf(name, sizeof(name), "links.%d", (int)b);
      CHECK(MbsModelFindBody(model, name, &found));
      if (found != b) Fail("MbsModelFindBody(%s) after the set-up: %d on rank %d\n", name, (int)found, rank);
    }
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetType(st, "em"));
    CHECK(MbsStepperSetTimeStep(st, 1e-3));
    CHECK(MbsStepperSetFinalTime(st, 5e-3));
    CHECK(MbsStepperSetOutput(st, dir, 1));
    CHECK(MbsStepperSetReactions(st, pass ? "47,1" : "all"));
    if (!rank) { /* the second pass must write its own files */
      char cmd[PETSC_MAX_PATH_LEN + 32];
      snprintf(cmd, sizeof(cmd), "rm -rf %s/reactions", dir);
      if (system(cmd)) Fail("could not remove %s/reactions\n", dir);
    }
    CHECK(MPI_Barrier(comm));
    CHECK(MbsStepperSolve(st));
    for (PetscInt j = 0; j < 24; j++) CHECK(MbsStepperGetReaction(st, 2 * j + 1, FM[j], FM[j] + 3)); /* collective */
    msg[0] = 0;
    for (PetscInt j = 0; j < 24 && !rank && !msg[0]; j++) { /* rank 0 reads the files, then all ranks pass or fail */
      const PetscInt e = 2 * j + 1;
      char           file[PETSC_MAX_PATH_LEN], want[64];

      if (pass && j != 0 && j != 23) continue;
      snprintf(file, sizeof(file), "%s/reactions/element_%d.csv", dir, (int)e);
      snprintf(want, sizeof(want), "reaction of element %d (revolute", (int)e);
      CheckReactionFile(file, (const char *const[]){want, "links.", NULL}, 5, FM[j], FM[j] + 3, msg, sizeof(msg));
    }
    CHECK(MPI_Bcast(msg, sizeof(msg), MPI_CHAR, 0, comm));
    if (msg[0]) Fail("%s\n", msg);
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
  }
  if (!rank) {
    char cmd[PETSC_MAX_PATH_LEN + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd)) Fail("could not remove %s\n", dir);
  }
  (void)state;
}

/* A slider-crank whose crank angle is prescribed (inputs/slider_crank_driven.yaml) has no degree of freedom left:
   the slider must follow the closed form x = r cos th + sqrt(l^2 - r^2 sin^2 th), th = pi/3 + 2 pi t, at every node
   of the schemes that keep g(q_n, t_n) = 0 (all but VI-A, whose constraints hold at q_theta: second order there);
   with EM, which also keeps G v + dg/dt = 0 at the nodes, the energy returns to its start after the revolution. */
static void test_slider_crank_closed_form(void **state)
{
  for (int s = 0; s < NSCHEMES; s++) {
    const char  *scheme = all_schemes[s];
    MbsModel     model;
    MbsStepper   st;
    MbsRunConfig cfg;
    char         path[PETSC_MAX_PATH_LEN];
    PetscReal    err = 0, E0 = 0, E1 = 0, bound = Is(scheme, "vi-a") ? 1e-4 : 1e-12;
    PetscInt     nsteps;

    snprintf(path, sizeof(path), "%s/inputs/slider_crank_driven.yaml", getenv("GGLMBS_SOURCE_DIR"));
    CHECK(MbsModelCreate(PETSC_COMM_SELF, &model));
    CHECK(MbsRunConfigSetDefaults(&cfg));
    CHECK(MbsModelLoadYAML(model, path, &cfg));
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetType(st, scheme));
    CHECK(MbsStepperSetTimeStep(st, cfg.dt));
    nsteps = (PetscInt)(cfg.t_end / cfg.dt + 0.5);
    for (PetscInt n = 0; n <= nsteps; n++) {
      const PetscScalar *q;
      MbsDiagnostics     d;
      const PetscReal    th = PETSC_PI / 3 + 2 * PETSC_PI * n * cfg.dt;
      const PetscReal    x  = 0.1 * PetscCosReal(th) + PetscSqrtReal(0.09 - 0.01 * PetscSqr(PetscSinReal(th)));

      if (n) CHECK(MbsStepperStep(st));
      CHECK(MbsStepperComputeDiagnostics(st, &d));
      if (n == 0) E0 = d.E;
      E1 = d.E;
      CHECK(VecGetArrayRead(st->q, &q));
      err = PetscMax(err, PetscAbsScalar(q[model->body_q[1]] - x));
      CHECK(VecRestoreArrayRead(st->q, &q));
    }
    if (!(err <= bound)) Fail("slider-crank, %s: slider off its closed form by %g (bound %g)\n", scheme, err, bound);
    if (Is(scheme, "em") && !(PetscAbsReal(E1 - E0) <= 1e-12))
      Fail("slider-crank, %s: energy after a revolution %.17g, at the start %.17g\n", scheme, E1, E0);
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
  }
  (void)state;
}

/* Distributed over the ranks (METIS), every scheme gives the serial run's diagnostics at every node to
   <= 1e-10 relative (energies, momentum maps; the constraint residuals to <= 1e-10 absolute) and the same
   final state to round-off, on particles, a particle chain, rigid chains with spherical and revolute
   joints, a generated net and a net read from a Gmsh mesh. */
static void test_parallel_matches_serial(void **state)
{
  static const struct {
    const char *input;
    PetscReal   t_end;
  } cases[] = {
    {"inputs/four_particle.yaml", 1.0},
    {"inputs/chain1000.yaml", 0.01},
    {"tests/inputs/parallel/rigid_chain_spherical.yaml", 0},
    {"tests/inputs/parallel/rigid_chain_revolute.yaml", 0},
    {"tests/inputs/parallel/net.yaml", 0},
    {"inputs/mesh_net.yaml", 0.01},
    {"tests/inputs/joints/joint_zoo.yaml", 0.1},
    {"tests/inputs/dampers/damped_pendulum.yaml", 0.5},
    {"tests/inputs/loads/driven_top.yaml", 0.1},
    {"tests/inputs/loads/driven_crank.yaml", 0.1},
    {"tests/inputs/dampers/chain_one_damper.yaml", 0.05}, /* a damper on one rank only */
    {"tests/inputs/dampers/damped_hinge.yaml", 0.05},
    {"tests/inputs/springs/torsion_hinge.yaml", 0.05},
    {"inputs/slider_crank_driven.yaml", 0.1},
  };
  static const char *const names[MBS_NDIAG] = {"E", "T", "V", "Jx", "Jy", "Jz", "Lx", "Ly", "Lz", "g_max", "gv_max"};
  PetscMPIInt              size;

  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (size == 1) skip();
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    for (int s = 0; s < NSCHEMES; s++) {
      const RunSpec spec = {cases[c].input, all_schemes[s], 0, cases[c].t_end, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, 0};
      RunResult     par, ser;
      PetscReal     diff = 0, norm = 0, scale[MBS_NDIAG] = {0};

      RunOn(PETSC_COMM_WORLD, &spec, &par);
      RunOn(PETSC_COMM_SELF, &spec, &ser);
      assert_int_equal(par.steps, ser.steps);
      for (PetscInt i = 0; i < par.nq; i++) {
        diff = PetscMax(diff, PetscMax(PetscAbsScalar(par.q[i] - ser.q[i]), PetscAbsScalar(par.p[i] - ser.p[i])));
        norm = PetscMax(norm, PetscMax(PetscAbsScalar(ser.q[i]), PetscAbsScalar(ser.p[i])));
      }
      if (!(diff <= 1e-12 * norm))
        Fail("%s, %s: %d ranks end %g from the serial run (state norm %g)\n", cases[c].input, all_schemes[s], (int)size,
             (double)diff, (double)norm);
      /* scales: the energies by max(|E|, T, |V|), the momentum maps by their largest component */
      for (PetscInt n = 0; n <= ser.steps; n++) {
        const PetscReal *x = ser.diag + n * MBS_NDIAG;
        for (int k = 0; k < 3; k++) scale[0] = PetscMax(scale[0], PetscAbsReal(x[k]));
        for (int k = 3; k < 9; k++) scale[3] = PetscMax(scale[3], PetscAbsReal(x[k]));
      }
      for (int k = 0; k < MBS_NDIAG; k++) scale[k] = k < 3 ? scale[0] : k < 9 ? scale[3] : 1.0;
      for (PetscInt n = 0; n <= ser.steps; n++)
        for (int k = 0; k < MBS_NDIAG; k++) {
          const PetscReal a = par.diag[n * MBS_NDIAG + k], b = ser.diag[n * MBS_NDIAG + k];
          if (!(PetscAbsReal(a - b) <= 1e-10 * scale[k]))
            Fail("%s, %s: %s at step %d is %.17g on %d ranks, %.17g on one (tolerance %.2g)\n", cases[c].input,
                 all_schemes[s], names[k], (int)n, (double)a, (int)size, (double)b, (double)(1e-10 * scale[k]));
        }
      FreeResult(&par);
      FreeResult(&ser);
    }
  }
  /* a Galerkin scheme (stage fields, force elements over its stages) */
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    const RunSpec spec = {
      cases[c].input,       "galerkin-lgg", 0, cases[c].t_end > 0 ? PetscMin(cases[c].t_end, 0.05) : 0.05,
      MBS_PREDICTOR_SIMPLE, PETSC_FALSE,    4};
    RunResult par, ser;
    PetscReal diff = 0, norm = 0;

    RunOn(PETSC_COMM_WORLD, &spec, &par);
    RunOn(PETSC_COMM_SELF, &spec, &ser);
    assert_int_equal(par.steps, ser.steps);
    for (PetscInt i = 0; i < par.nq; i++) {
      diff = PetscMax(diff, PetscMax(PetscAbsScalar(par.q[i] - ser.q[i]), PetscAbsScalar(par.p[i] - ser.p[i])));
      norm = PetscMax(norm, PetscMax(PetscAbsScalar(ser.q[i]), PetscAbsScalar(ser.p[i])));
    }
    if (!(diff <= 1e-10 * norm)) /* the rank-independence bound; the stage systems' round-off is 3e-12 here */
      Fail("%s, galerkin-lgg (4 points): %d ranks end %g from the serial run (state norm %g)\n", cases[c].input,
           (int)size, (double)diff, (double)norm);
    FreeResult(&par);
    FreeResult(&ser);
  }
}

/* ---------------------------------------------------------------- observed orders */

/* Least-squares slope of log(e) against log(h). */
static PetscReal ObservedOrder(int n, const PetscReal h[], const PetscReal e[])
{
  PetscReal sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < n; i++) {
    const PetscReal x = PetscLogReal(h[i]), y = PetscLogReal(e[i]);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

static void ExpectOrder(const char *what, const char *scheme, int n, const PetscReal h[], const PetscReal e[],
                        PetscReal nominal)
{
  const PetscReal p = ObservedOrder(n, h, e);
  if (!(PetscAbsReal(p - nominal) <= 0.15))
    Fail("%s, %s: observed order %.3f, expected %g +- 0.15 (errors %.3e %.3e %.3e %.3e)\n", what, scheme, (double)p,
         (double)nominal, (double)e[0], (double)e[1], (double)e[2], (double)e[3]);
  if (getenv("GGLMBS_TEST_VERBOSE"))
    printf("%s, %s: observed order %.3f (errors %.3e %.3e %.3e %.3e)\n", what, scheme, (double)p, (double)e[0],
           (double)e[1], (double)e[2], (double)e[3]);
}

/* RATTLE solves its textbook half steps (src/schemes/rattle.c): from one step's solution (q1, p1, lambda, mu),
   p_{1/2} = p0 - h/2 (DV(q0) + G(q0)^T lambda) gives q1 = q0 + h M^-1 p_{1/2} and
   p1 = p_{1/2} - h/2 (DV(q1) + G(q1)^T mu), on a rigid body under gravity and on particles with rods and springs */
static void test_rattle_half_steps(void **state)
{
  static const char *const inputs[] = {"inputs/heavy_top.yaml", "inputs/four_particle.yaml",
                                       "tests/inputs/joints/joint_zoo.yaml"};
  PetscMPIInt              size;

  (void)state;
  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (size > 1) skip();
  for (size_t k = 0; k < sizeof(inputs) / sizeof(inputs[0]); k++) {
    MbsModel           model;
    MbsStepper         st;
    MbsRunConfig       cfg;
    char               path[PETSC_MAX_PATH_LEN];
    const PetscScalar *x, *q, *p;
    PetscScalar       *q0, *p0, *ph, *p1c;
    PetscReal          h, dq = 0, dp = 0, sq = 0, sp = 0;
    PetscInt           nq;

    snprintf(path, sizeof(path), "%s/%s", getenv("GGLMBS_SOURCE_DIR"), inputs[k]);
    CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
    CHECK(MbsRunConfigSetDefaults(&cfg));
    CHECK(MbsModelLoadYAML(model, path, &cfg));
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetType(st, MBSSCHEMERATTLE));
    h = cfg.dt;
    CHECK(MbsStepperSetTimeStep(st, h));
    CHECK(MbsStepperSetUp(st));
    nq = model->nq_local;
    assert_int_equal((int)nq, (int)model->nq_ghosted);
    CHECK(PetscMalloc4(nq, &q0, nq, &p0, nq, &ph, nq, &p1c));
    for (int n = 0; n < 3; n++) { /* three steps: the multipliers of the later ones start from the earlier ones' */
      PetscReal t0;
      CHECK(MbsStepperGetTime(st, &t0));
      CHECK(VecGetArrayRead(st->q, &q));
      CHECK(VecGetArrayRead(st->p, &p));
      CHECK(PetscArraycpy(q0, q, nq));
      CHECK(PetscArraycpy(p0, p, nq));
      CHECK(VecRestoreArrayRead(st->q, &q));
      CHECK(VecRestoreArrayRead(st->p, &p));
      CHECK(MbsStepperStep(st));
      CHECK(VecGetArrayRead(st->X, &x));
      {
        const PetscScalar *q1 = x + st->sys->foff[0], *p1 = x + st->sys->foff[1], *lam = x + st->sys->foff[2],
                          *mu = x + st->sys->foff[3];
        CHECK(PetscArraycpy(ph, p0, nq));
        CHECK(MbsOpGradientAdd(model, q0, -0.5 * h, ph));
        CHECK(MbsModelSetConstraintTime(model, t0, t0));
        CHECK(MbsOpGTMultAdd(model, q0, lam, -0.5 * h, MBS_SCALE_NONE, ph));
        CHECK(PetscArraycpy(p1c, ph, nq));
        CHECK(MbsOpGradientAdd(model, q1, -0.5 * h, p1c));
        CHECK(MbsModelSetConstraintTime(model, t0 + h, t0 + h));
        CHECK(MbsOpGTMultAdd(model, q1, mu, -0.5 * h, MBS_SCALE_NONE, p1c));
        for (PetscInt i = 0; i < nq; i++) {
          dq = PetscMax(dq, PetscAbsScalar(q1[i] - q0[i] - h * model->minv[i] * ph[i]));
          dp = PetscMax(dp, PetscAbsScalar(p1[i] - p1c[i]));
          sq = PetscMax(sq, PetscAbsScalar(q1[i] - q0[i]));
          sp = PetscMax(sp, PetscMax(PetscAbsScalar(p1[i]), PetscAbsScalar(p1[i] - p0[i])));
        }
      }
      CHECK(VecRestoreArrayRead(st->X, &x));
    }
    if (!(dq <= 1e-12 * sq && dp <= 1e-12 * sp))
      Fail("%s, rattle: q1 - q0 - h M^-1 p_1/2 = %g (of %g), p1 - p_1/2 + h/2 (DV + G^T mu) = %g (of %g)\n", inputs[k],
           dq, sq, dp, sp);
    CHECK(PetscFree4(q0, p0, ph, p1c));
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
  }
}

/* Heavy top (seed 004 eq. 113): relative error of the centre of mass height phi_3 at t = 0.001 against
   the steady-precession height 0.0375. VI-S, VI-B order 1; VI-A, EM, EM-G, RATTLE order 2. */
static void test_order_heavy_top(void **state)
{
  const PetscReal          h[4]      = {1e-4, 5e-5, 2.5e-5, 1.25e-5};
  static const char *const sch[]     = {"vi-s", "vi-b", "vi-a", "em", "em-g", "rattle"};
  const PetscReal          nominal[] = {1, 1, 2, 2, 2, 2};

  for (int s = 0; s < (int)(sizeof(sch) / sizeof(sch[0])); s++) {
    PetscReal e[4];
    for (int i = 0; i < 4; i++) {
      const RunSpec spec = {"inputs/heavy_top.yaml", sch[s], h[i], 0.001, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, 0};
      RunResult     r;
      Run(&spec, &r);
      e[i] = PetscAbsReal(PetscRealPart(r.q[2]) - 0.0375) / 0.0375;
      FreeResult(&r);
    }
    ExpectOrder("heavy top phi_3(0.001)", sch[s], 4, h, e, nominal[s]);
  }
}

/* Four particles with v4 = (0, 3/1.7, 2/1.7) (seed 004 eq. 128): relative error of q4 and p4 at t = 0.1
   against EM with h = 1e-5. EM, EM-G and RATTLE are of order 2 in both. */
static void test_order_four_particle(void **state)
{
  const char     *in      = "inputs/four_particle_convergence.yaml";
  const PetscReal h[4]    = {1e-3, 5e-4, 2.5e-4, 1.25e-4};
  const RunSpec   refspec = {in, "em", 1e-5, 0.1, MBS_PREDICTOR_ADVANCED, PETSC_FALSE, 0};
  RunResult       ref;

  Run(&refspec, &ref);
  for (int s = 0; s < 3; s++) {
    const char *scheme = (const char *[]){"em", "em-g", "rattle"}[s];
    PetscReal   eq[4], ep[4];
    for (int i = 0; i < 4; i++) {
      const RunSpec spec = {in, scheme, h[i], 0.1, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, 0};
      RunResult     r;
      PetscReal     dq = 0, nq = 0, dp = 0, np = 0;
      Run(&spec, &r);
      for (int k = 9; k < 12; k++) {
        dq += PetscSqr(PetscRealPart(r.q[k] - ref.q[k]));
        nq += PetscSqr(PetscRealPart(ref.q[k]));
        dp += PetscSqr(PetscRealPart(r.p[k] - ref.p[k]));
        np += PetscSqr(PetscRealPart(ref.p[k]));
      }
      eq[i] = PetscSqrtReal(dq / nq);
      ep[i] = PetscSqrtReal(dp / np);
      FreeResult(&r);
    }
    ExpectOrder("four particles q4(0.1)", scheme, 4, h, eq, 2);
    ExpectOrder("four particles p4(0.1)", scheme, 4, h, ep, 2);
  }
  FreeResult(&ref);
}

/* RATTLE with force elements (two dampers, a spring, a particle on a line: tests/inputs/dampers/damped_pendulum.yaml):
   the dampers' impulse acts on the momentum balance only, and through the mean of the half steps on the positions
   too, so the scheme stays second order; error of q(1) against h = 1e-4 */
static void test_order_rattle_forces(void **state)
{
  const char     *in      = "tests/inputs/dampers/damped_pendulum.yaml";
  const PetscReal h[4]    = {2e-2, 1e-2, 5e-3, 2.5e-3};
  const RunSpec   refspec = {in, "rattle", 1e-4, 1.0, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, 0};
  RunResult       ref;
  PetscReal       e[4];

  (void)state;
  Run(&refspec, &ref);
  for (int i = 0; i < 4; i++) {
    const RunSpec spec = {in, "rattle", h[i], 1.0, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, 0};
    RunResult     r;
    Run(&spec, &r);
    e[i] = 0;
    for (PetscInt k = 0; k < r.nq; k++) e[i] = PetscMax(e[i], PetscAbsScalar(r.q[k] - ref.q[k]));
    FreeResult(&r);
  }
  ExpectOrder("damped spring pendulum q(1)", "rattle", 4, h, e, 2);
  FreeResult(&ref);
}

/* ---------------------------------------------------------------- Galerkin variational integrators */

static const char *const galerkin_variants[] = {"ell", "egl", "elg", "egg", "lll", "lgl", "llg", "lgg"};

/* Man, Gao & Zhong (2020), Table 3 and eq. (53): the observed order of the eight Galerkin integrators on their
   nonlinear spring pendulum (inputs/spring_pendulum.yaml), from the error of q(2) at h = 0.2, 0.1, 0.05 (m = 5: 0.2,
   0.1) against a
   converged reference (galerkin-lgg, 6 points, h = 0.01): 2m - 2 with Lobatto control points, m (m even) or m + 1
   (m odd) with equidistant ones; m = 2, 3, 4 for all eight and m = 5 for the equidistant ones (the Lobatto ones' order
   8 at m = 5 reaches round-off at these steps: docs/galerkin.md). The Lobatto ones at m = 4 (order 6) are fitted on
   h = 0.2, 0.1 too: at h = 0.05 their truncation error (4-10 10^-12) is of the size of the runs' round-off (each step
   converges to the round-off floor of its own terms; the same Jacobian summed in another order moved galerkin-lll's
   error there from 5.3e-12 to 3.3e-12 and its three-point order from 5.89 to 6.22, while h = 0.2, 0.1 give 6.00 either
   way). */
static void test_galerkin_orders(void **state)
{
  const PetscReal h[3]    = {0.2, 0.1, 0.05}; /* m = 5, and Lobatto m = 4: the first two, above the round-off floor */
  const RunSpec   refspec = {"inputs/spring_pendulum.yaml", "galerkin-lgg", 0.01, 2.0,
                             MBS_PREDICTOR_SIMPLE,          PETSC_FALSE,    6};
  RunResult       ref;

  (void)state;
  Run(&refspec, &ref);
  for (int v = 0; v < 8; v++)
    for (int m = 2; m <= 5; m++) {
      const PetscBool lobatto = galerkin_variants[v][0] == 'l';
      const int       nh      = m == 5 || (lobatto && m == 4) ? 2 : 3;
      const PetscReal nominal = lobatto ? 2 * m - 2 : (m % 2 ? m + 1 : m);
      char            scheme[32];
      PetscReal       e[3];
      if (lobatto && m == 5) continue;
      snprintf(scheme, sizeof(scheme), "galerkin-%s", galerkin_variants[v]);
      e[2] = 0;
      for (int i = 0; i < nh; i++) {
        const RunSpec spec = {"inputs/spring_pendulum.yaml", scheme, h[i], 2.0, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, m};
        RunResult     r;
        Run(&spec, &r);
        e[i] = 0;
        for (PetscInt k = 0; k < r.nq; k++) e[i] = PetscMax(e[i], PetscAbsScalar(r.q[k] - ref.q[k]));
        FreeResult(&r);
      }
      {
        const PetscReal p = ObservedOrder(nh, h, e);
        if (!(PetscAbsReal(p - nominal) <= 0.2))
          Fail("%s, %d points: observed order %.3f from %d steps, expected %g (errors %.3e %.3e %.3e)\n", scheme, m,
               (double)p, nh, (double)nominal, (double)e[0], (double)e[1], (double)e[2]);
        if (getenv("GGLMBS_TEST_VERBOSE"))
          printf("%s, %d points: observed order %.3f (errors %.3e %.3e %.3e)\n", scheme, m, (double)p, (double)e[0],
                 (double)e[1], (double)e[2]);
      }
    }
  FreeResult(&ref);
}

/* What every Galerkin integrator keeps, on the free four particles (symmetric springs and rods, 1 s) at 3 and 4
   points: the position constraints at the nodes (and so at every control point) and the velocity constraints at the
   step's end, the linear and angular momentum to round-off; and a bounded energy error over a long run */
static void test_galerkin_conservation(void **state)
{
  (void)state;
  for (int v = 0; v < 8; v++)
    for (int m = 3; m <= 4; m++) {
      char      scheme[32];
      RunResult r;
      snprintf(scheme, sizeof(scheme), "galerkin-%s", galerkin_variants[v]);
      {
        const RunSpec spec = {"inputs/four_particle.yaml", scheme, 0.01, 1.0, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, m};
        Run(&spec, &r);
      }
      if (!(r.g <= 1e-10 && r.gv <= 1e-10 && r.dJL <= 1e-10))
        Fail("%s, %d points: max |g| %g, max |G M^-1 p| %g, momentum maps %g (all <= 1e-10)\n", scheme, m, r.g, r.gv,
             r.dJL);
      FreeResult(&r);
      /* the long-time energy behaviour of a symplectic integrator: the spring pendulum over 400 s (4000 steps), its
         energy error bounded (no drift) and far above round-off */
      {
        const RunSpec spec = {"inputs/spring_pendulum.yaml", scheme, 0.1, 400, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, m};
        Run(&spec, &r);
      }
      if (!(r.dE_rel > 1e-12 && r.dE_second <= 1.2 * r.dE_first))
        Fail("%s, %d points: spring pendulum energy error %g (max over the first half %g, the second %g): expected "
             "bounded and above round-off\n",
             scheme, m, r.dE_rel, r.dE_first, r.dE_second);
      FreeResult(&r);
    }
}

/* Man, Gao & Zhong (2020), Sect. 4.4: the six balls (inputs/six_balls.yaml) with LGG, 2 points and the large step
   h = 1 over 100 s: the angular momentum (zero: released at rest) stays zero to round-off (their Fig. 9), and the
   motion keeps its antisymmetry, x1 + x6 and y1 + y6 constant (their eq. 61 and Fig. 11) */
static void test_galerkin_six_balls(void **state)
{
  const RunSpec   spec = {"inputs/six_balls.yaml", "galerkin-lgg", 1.0, 100.0, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, 2};
  const PetscReal x16 = 2.0 + 0.5, y16 = 0.5 * PetscSqrtReal(3.0); /* x1 + x6, y1 + y6 at t = 0 */
  RunResult       r;
  PetscReal       moved = 0;

  (void)state;
  Run(&spec, &r);
  for (PetscInt n = 0; n <= r.steps; n++) moved = PetscMax(moved, r.diag[n * MBS_NDIAG + 1]); /* kinetic energy */
  if (!(r.dJz <= 1e-12 && moved > 1e-2))
    Fail("six balls, LGG (2 points, h = 1): max |Jz - Jz0| = %g (<= 1e-12), max kinetic energy %g (> 1e-2)\n", r.dJz,
         moved);
  if (!(PetscAbsScalar(r.q[0] + r.q[15] - x16) <= 1e-10 && PetscAbsScalar(r.q[1] + r.q[16] - y16) <= 1e-10))
    Fail("six balls: x1 + x6 = %.15g (expected %.15g), y1 + y6 = %.15g (expected %.15g) after 100 s\n",
         (double)PetscRealPart(r.q[0] + r.q[15]), (double)x16, (double)PetscRealPart(r.q[1] + r.q[16]), (double)y16);
  FreeResult(&r);
}

/* With two points, Lobatto control points and Lobatto (trapezoidal) rules, the Galerkin integrator's equations are
   RATTLE's (the two-stage Lobatto IIIA-IIIB pair): the same trajectories to round-off */
static void test_galerkin_lll2_is_rattle(void **state)
{
  static const char *const inputs[] = {"inputs/heavy_top.yaml", "inputs/four_particle.yaml",
                                       "tests/inputs/joints/joint_zoo.yaml", "inputs/slider_crank_driven.yaml"};
  (void)state;
  for (size_t k = 0; k < sizeof(inputs) / sizeof(inputs[0]); k++) {
    const RunSpec a = {inputs[k], "galerkin-lll", 0, 0.2, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, 2};
    const RunSpec b = {inputs[k], "rattle", 0, 0.2, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, 0};
    RunResult     ra, rb;
    PetscReal     diff = 0, norm = 0;
    Run(&a, &ra);
    Run(&b, &rb);
    for (PetscInt i = 0; i < ra.nq; i++) {
      diff = PetscMax(diff, PetscMax(PetscAbsScalar(ra.q[i] - rb.q[i]), PetscAbsScalar(ra.p[i] - rb.p[i])));
      norm = PetscMax(norm, PetscMax(PetscAbsScalar(rb.q[i]), PetscAbsScalar(rb.p[i])));
    }
    if (!(diff <= 1e-11 * norm)) Fail("%s: galerkin-lll (2 points) ends %g from rattle\n", inputs[k], diff);
    FreeResult(&ra);
    FreeResult(&rb);
  }
}

/* The Galerkin schemes integrate the force elements over their stages: on a hinge chain with dampers and torsional
   dampers (tests/inputs/dampers/damped_hinge.yaml) the error of q(0.5) against 6-point LGG keeps the order 2m - 2
   (h = 0.02, 0.01, 0.005; m = 4: the first two, above the round-off floor) */
static void test_galerkin_forces(void **state)
{
  const char     *in      = "tests/inputs/dampers/damped_hinge.yaml";
  const PetscReal h[3]    = {0.02, 0.01, 0.005};
  const RunSpec   refspec = {in, "galerkin-lgg", 0.00125, 0.5, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, 6};
  RunResult       ref;

  (void)state;
  Run(&refspec, &ref);
  for (int m = 2; m <= 4; m++) {
    const int nh   = m == 4 ? 2 : 3;
    PetscReal e[4] = {0, 0, 0, 0};
    char      what[64];
    for (int i = 0; i < nh; i++) {
      const RunSpec spec = {in, "galerkin-lgg", h[i], 0.5, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, m};
      RunResult     r;
      Run(&spec, &r);
      e[i] = 0;
      for (PetscInt k = 0; k < r.nq; k++) e[i] = PetscMax(e[i], PetscAbsScalar(r.q[k] - ref.q[k]));
      FreeResult(&r);
    }
    snprintf(what, sizeof(what), "damped hinge q(0.5), %d points", m);
    if (nh == 3)
      ExpectOrder(what, "galerkin-lgg", 3, h, e, 2 * m - 2);
    else if (!(PetscAbsReal(PetscLog2Real(e[0] / e[1]) - (2 * m - 2)) <= 0.2))
      Fail("%s, galerkin-lgg: observed order %.3f, expected %d (errors %.3e %.3e)\n", what,
           (double)PetscLog2Real(e[0] / e[1]), 2 * m - 2, (double)e[0], (double)e[1]);
  }
  FreeResult(&ref);
}

static void BuildDampedSpringPendulum(PetscBool with_damper, MbsModel *model);

/* The Galerkin schemes refuse a host's state force with an error that names it, and a number of points that is not
   an integer */
static void test_galerkin_refusals(void **state)
{
  HostForces  host = {.n = 1, .d = {{MBS_GROUND, 1, {0, 0, 1}, {0, 0, 0}, 0.5, 0.0}}};
  MbsModel    model;
  MbsStepper  st;
  PetscMPIInt size;

  (void)state;
  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (size > 1) skip();
  BuildDampedSpringPendulum(PETSC_FALSE, &model);
  host.model = model;
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetType(st, MBSSCHEMEGALERKINLGG));
  AttachHostForces(st, &host, PETSC_TRUE);
  CHECK(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  assert_int_equal((int)MbsStepperStep(st), PETSC_ERR_SUP);
  assert_int_equal((int)MbsStepperSetSchemeParameter(st, "points", 2.5), PETSC_ERR_ARG_OUTOFRANGE);
  assert_int_equal((int)MbsStepperSetSchemeParameter(st, "points", 9), PETSC_ERR_ARG_OUTOFRANGE);
  CHECK(PetscPopErrorHandler());
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  HostForcesDestroy(&host);
}

/* ---------------------------------------------------------------- beams */

/* A straight beam along x of n linear elements (src/elements/beam.c) whose n + 1 nodes are rigid bodies with the
   beam's lumped mass: rho A l and the rotary inertia of their share l of the beam, the section's rho I l about d1
   and d2 plus the mass's spread along the axis, m l^2 / 12 (which keeps the director mass matrix regular). d3 runs
   along the axis, d1 along y, d2 along z. A clamped end (clamp) is welded to the ground. The nodes' initial velocity
   along z is v0 (x/L)^2 (a cantilever: v0 times the first bending mode, 1 at the tip), its slope rate the angular
   velocity about -y. */
static void BuildBeam(MPI_Comm comm, PetscInt n, PetscReal L, PetscReal EA, PetscReal GA, PetscReal EI, PetscReal GJ,
                      PetscReal rhoA, PetscReal rhoI, PetscBool clamp, PetscReal v0, MbsModel *model, PetscInt *tip)
{
  const PetscReal       R[9] = {0, 0, 1, 1, 0, 0, 0, 1, 0}, l = L / n;
  const MbsElementType *beam;
  PetscInt              prev = -1;

  CHECK(MbsModelCreate(comm, model));
  CHECK(MbsElementTypeFind("springs", "beam", &beam));
  assert_non_null(beam);
  for (PetscInt k = 0; k <= n; k++) {
    const PetscReal share = (k == 0 || k == n) ? 0.5 * l : l, m = rhoA * share, xi = k * l / L;
    const PetscReal J[3] = {rhoI * share + m * share * share / 12, rhoI * share + m * share * share / 12,
                            2 * rhoI * share};
    PetscReal       w = xi * xi, dw = 2 * xi / L; /* the velocity's shape along the beam, and its slope */
    if (clamp) { /* a cantilever: the first bending mode of Euler-Bernoulli's clamped-free beam, 1 at the tip */
      const PetscReal b = 1.8751040687 / L, sg = 0.7340955137, X = k * l, tipv = 2.0;
      w  = (cosh(b * X) - cos(b * X) - sg * (sinh(b * X) - sin(b * X))) / tipv;
      dw = b * (sinh(b * X) + sin(b * X) - sg * (cosh(b * X) - cos(b * X))) / tipv;
    }
    const PetscReal x[3] = {k * l, 0, 0}, v[3] = {0, 0, v0 * w}, omega[3] = {0, -v0 * dw, 0};
    char            name[16];
    PetscInt        node;
    snprintf(name, sizeof(name), "n%d", (int)k);
    CHECK(MbsModelAddRigidBody(*model, name, m, J, x, R, v, omega, &node));
    if (k == 0 && clamp) CHECK(MbsModelAddJoint(*model, MBS_JOINT_WELD, node, NULL, NULL, MBS_GROUND, x, NULL, NULL));
    if (prev >= 0) {
      MbsElemData d;
      CHECK(PetscMemzero(&d, sizeof(d)));
      d.beam_stiffness[0] = d.beam_stiffness[1] = GA;
      d.beam_stiffness[2]                       = EA;
      d.beam_stiffness[3] = d.beam_stiffness[4] = EI;
      d.beam_stiffness[5]                       = GJ;
      d.length                                  = MBS_ELEM_UNSET;
      CHECK(MbsModelAddElement(*model, beam, prev, node, &d, NULL));
    }
    prev = node;
  }
  *tip = prev;
  CHECK(MbsModelSetUp(*model));
}

/* A free beam set spinning and bending (no supports, no gravity): EM keeps the energy and the linear and angular
   momentum to round-off, the nodes' director constraints at both levels; the VI schemes and RATTLE keep the
   momentum maps and a bounded energy error */
static void test_beam_free_conservation(void **state)
{
  (void)state;
  for (int s = 0; s < NSCHEMES; s++) {
    MbsModel       model;
    MbsStepper     st;
    MbsDiagnostics d0, d;
    PetscInt       tip;
    PetscReal      dE = 0, dJL = 0;

    BuildBeam(PETSC_COMM_WORLD, 6, 1.0, 200, 150, 1.0, 0.8, 1.0, 1e-3, PETSC_FALSE, 1.5, &model, &tip);
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetType(st, all_schemes[s]));
    CHECK(MbsStepperSetTimeStep(st, 2e-3));
    CHECK(MbsStepperComputeDiagnostics(st, &d0));
    for (int n = 0; n < 200; n++) {
      CHECK(MbsStepperStep(st));
      CHECK(MbsStepperComputeDiagnostics(st, &d));
      dE = PetscMax(dE, PetscAbsReal(d.E - d0.E));
      for (int i = 0; i < 3; i++)
        dJL = PetscMax(dJL, PetscMax(PetscAbsReal(d.J[i] - d0.J[i]), PetscAbsReal(d.L[i] - d0.L[i])));
    }
    if (!(dJL <= 1e-12 && (Is(all_schemes[s], "vi-a") || d.g_max <= 1e-10))) /* VI-A: g at q_theta */
      Fail("free beam, %s: momentum maps drift %g, max |g| %g\n", all_schemes[s], dJL, d.g_max);
    if ((Is(all_schemes[s], "em") || Is(all_schemes[s], "em-g")) && !(dE <= 1e-12 * d0.E))
      Fail("free beam, %s: max |E - E0| = %g of E0 = %g, expected round-off\n", all_schemes[s], dE, d0.E);
    if (!(d0.V == 0 && d0.E > 0.1)) Fail("free beam: initial V %g (expected 0: stress free), E %g\n", d0.V, d0.E);
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
  }
}

/* The first bending frequency of a clamped-free beam against Euler-Bernoulli's omega_1 = 1.8751^2 sqrt(EI / (rho A
   L^4)) (slender: EI / (EA L^2) = EI / (GA L^2) = 1e-5, so that shear and rotary inertia shift it by less than 1e-4),
   from the tip's period under EM, started in the first mode: within 0.5 % with 16 elements, and converging at second
   order in the element size (6.9e-3, 1.8e-3, 4.9e-4 with 8, 16, 32) */
static void test_beam_cantilever_frequency(void **state)
{
  const PetscReal omega_eb = 1.8751040687 * 1.8751040687, h = 0.005; /* EI = rho A = L = 1 */
  PetscReal       err[3];
  PetscMPIInt     size;

  (void)state;
  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (size > 1) skip();
  for (int level = 0; level < 3; level++) {
    const PetscInt n = 8 << level;
    MbsModel       model;
    MbsStepper     st;
    PetscInt       tip, crossings = 0;
    PetscReal      z_prev = 0, t_first = 0, t_last = 0, x[3];

    BuildBeam(PETSC_COMM_WORLD, n, 1.0, 1e5, 1e5, 1.0, 1.0, 1.0, 1e-6, PETSC_TRUE, 0.01, &model, &tip);
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetTimeStep(st, h));
    for (int k = 1; k <= 1200 && crossings < 3; k++) { /* three upward zero crossings of the tip: two periods */
      PetscReal t;
      CHECK(MbsStepperStep(st));
      CHECK(MbsStepperGetTime(st, &t));
      CHECK(MbsStepperGetPointPosition(st, tip, NULL, x));
      if (k > 1 && z_prev < 0 && x[2] >= 0) {
        const PetscReal tc = t - h * x[2] / (x[2] - z_prev); /* linear interpolation */
        if (!crossings) t_first = tc;
        t_last = tc;
        crossings++;
      }
      z_prev = x[2];
    }
    assert_int_equal(crossings, 3);
    err[level] = PetscAbsReal(2 * 2 * PETSC_PI / (t_last - t_first) - omega_eb) / omega_eb;
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
  }
  if (!(err[1] <= 0.005 && err[0] > 3 * err[1] && err[1] > 3 * err[2])) /* second order in the element size */
    Fail("cantilever: first frequency off Euler-Bernoulli's by %.2e (8 elements), %.2e (16), %.2e (32)\n", err[0],
         err[1], err[2]);
  if (getenv("GGLMBS_TEST_VERBOSE"))
    printf("cantilever first frequency, relative error: %.3e (8), %.3e (16), %.3e (32)\n", err[0], err[1], err[2]);
}

/* ---------------------------------------------------------------- predictor and retries */

/* The predictor changes the Newton iteration's start, not its solution: simple, advanced and extrapolate give the
   same trajectory to round-off, for a scheme with and one without a velocity unknown. */
static void test_predictor_same_solution(void **state)
{
  for (int s = 0; s < 2; s++) {
    const char        *scheme   = s ? "vi-b" : "em";
    const MbsPredictor other[2] = {MBS_PREDICTOR_ADVANCED, MBS_PREDICTOR_EXTRAPOLATE};
    RunSpec            spec     = {"inputs/four_particle.yaml", scheme, 0, 1.0, MBS_PREDICTOR_SIMPLE, PETSC_FALSE, 0};
    RunResult          a, b;

    Run(&spec, &a);
    for (int k = 0; k < 2; k++) {
      PetscReal diff = 0, norm = 0;
      spec.predictor = other[k];
      Run(&spec, &b);
      for (PetscInt i = 0; i < a.nq; i++) {
        diff = PetscMax(diff, PetscMax(PetscAbsScalar(a.q[i] - b.q[i]), PetscAbsScalar(a.p[i] - b.p[i])));
        norm = PetscMax(norm, PetscMax(PetscAbsScalar(a.q[i]), PetscAbsScalar(a.p[i])));
      }
      if (!(diff <= 1e-11 * norm))
        Fail("%s: simple and %s predictors end %g apart (state norm %g)\n", scheme, MbsPredictors[other[k]],
             (double)diff, (double)norm);
      FreeResult(&b);
    }
    FreeResult(&a);
  }
}

/* EM on the four particles at h = 0.675 (the paper's stability limit): from the previous state,
   Newton fails on some step before t = 100. Without -mbs_adapt that is an error that leaves the state
   at the step's start; with it the step is retried in halves and the run reaches t = 100 conserving
   energy. */
static void test_adapt(void **state)
{
  char           path[PETSC_MAX_PATH_LEN];
  MbsModel       model;
  MbsStepper     st;
  MbsRunConfig   cfg;
  MbsDiagnostics d0, d;
  PetscErrorCode ierr = 0;
  PetscInt       n, nsteps = (PetscInt)(100 / 0.675), retries;
  PetscReal      t;
  Vec            q, p, qs, ps;
  PetscBool      same;

  snprintf(path, sizeof(path), "%s/inputs/four_particle.yaml", getenv("GGLMBS_SOURCE_DIR"));
  for (int adapt = 0; adapt < 2; adapt++) {
    CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
    CHECK(MbsRunConfigSetDefaults(&cfg));
    CHECK(MbsModelLoadYAML(model, path, &cfg));
    CHECK(MbsStepperCreate(model, &st));
    CHECK(MbsStepperSetTimeStep(st, 0.675));
    CHECK(MbsStepperSetAdapt(st, adapt ? PETSC_TRUE : PETSC_FALSE, 6));
    /* Newton's method proper (a fresh Jacobian every iteration), whose convergence radius this h exceeds from the
       simple predictor (the default extrapolation, retried from the advanced predictor, gets through these steps) */
    CHECK(MbsStepperSetJacobianReuse(st, PETSC_FALSE, PETSC_DEFAULT));
    CHECK(MbsStepperSetPredictor(st, MBS_PREDICTOR_SIMPLE));
    CHECK(MbsStepperComputeDiagnostics(st, &d0));
    CHECK(MbsStepperGetState(st, &q, &p));
    CHECK(VecDuplicate(q, &qs));
    CHECK(VecDuplicate(p, &ps));
    CHECK(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    for (n = 0; n < nsteps; n++) {
      CHECK(VecCopy(q, qs));
      CHECK(VecCopy(p, ps));
      ierr = MbsStepperStep(st);
      if (ierr) break;
    }
    CHECK(PetscPopErrorHandler());
    CHECK(MbsStepperGetTime(st, &t));
    CHECK(MbsStepperGetAdaptRetries(st, &retries));
    if (!adapt) {
      if (ierr != PETSC_ERR_NOT_CONVERGED)
        Fail("without -mbs_adapt: expected a step to fail with PETSC_ERR_NOT_CONVERGED before t = 100, got error %d "
             "after %d steps\n",
             (int)ierr, (int)n);
      if (!(PetscAbsReal(t - n * 0.675) < 1e-9))
        Fail("without -mbs_adapt: time %g after a failed step %d\n", (double)t, (int)n + 1);
      CHECK(VecEqual(q, qs, &same));
      if (!same) Fail("a failed step changed q\n");
      CHECK(VecEqual(p, ps, &same));
      if (!same) Fail("a failed step changed p\n");
    } else {
      if (ierr) Fail("with -mbs_adapt: step %d failed (error %d)\n", (int)n + 1, (int)ierr);
      if (retries < 1) Fail("with -mbs_adapt: no retries, but the run without failed\n");
      CHECK(MbsStepperComputeDiagnostics(st, &d));
      if (!(PetscAbsReal(d.E - d0.E) <= 1e-10 * PetscAbsReal(d0.E)))
        Fail("with -mbs_adapt: energy %.17g, initially %.17g\n", (double)d.E, (double)d0.E);
      if (!(PetscAbsReal(t - nsteps * 0.675) < 1e-9))
        Fail("with -mbs_adapt: time %g, expected %g\n", (double)t, nsteps * 0.675);
    }
    CHECK(VecDestroy(&qs));
    CHECK(VecDestroy(&ps));
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
  }
}

/* The external-force hook: forces added by a host (here from rank 0 only, on bodies any rank may own) at
   a free particle, the end of a hanging chain and a point off the centre of a rigid body pinned at a
   fixed point. With EM: each step's momentum change of the free particle is the impulse h f, and the
   energy changes by exactly the work sum f . (x_{n+1}(X) - x_n(X)) along the displacements of the
   points of application, to round-off, on any number of ranks. (With the midpoint velocity,
   h f . (v_n + v_{n+1})/2, the balance is off by h F . M^-1 G^T gamma: 2e-8 here.) */
typedef struct {
  PetscInt  free, tip, rigid;
  PetscReal X[3];
  PetscReal f[3][3]; /* the forces of the last call */
  PetscInt  calls;
} ForceCtx;

static PetscErrorCode HostForce(MbsStepper st, PetscReal t, PetscReal h, Vec q, Vec p, Vec F, void *ctx)
{
  ForceCtx   *c = (ForceCtx *)ctx;
  MbsModel    model;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCall(MbsStepperGetModel(st, &model));
  PetscCallMPI(MPI_Comm_rank(PetscObjectComm((PetscObject)F), &rank));
  c->f[0][0] = PetscSinReal(t), c->f[0][1] = PetscCosReal(2 * t), c->f[0][2] = 0.5;
  c->f[1][0] = 0, c->f[1][1] = 2 * PetscSinReal(3 * t), c->f[1][2] = 0;
  c->f[2][0] = PetscCosReal(t), c->f[2][1] = 0, c->f[2][2] = PetscSinReal(t);
  c->calls++;
  if (rank == 0) {
    PetscCall(MbsModelAddPointForce(model, c->free, NULL, c->f[0], F));
    PetscCall(MbsModelAddPointForce(model, c->tip, NULL, c->f[1], F));
    PetscCall(MbsModelAddPointForce(model, c->rigid, c->X, c->f[2], F));
  }
  PetscFunctionReturn(0);
}

static void test_external_force(void **state)
{
  const PetscReal g[3] = {0, 0, -9.81}, zero[3] = {0, 0, 0}, down[3] = {0.6, 0, -0.8},
                  R0[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, Jtop[3] = {0.5, 0.7, 0.9};
  const PetscReal h = 0.01, m_free = 1.7;
  const PetscInt  nsteps = 30;
  MbsModel        model;
  MbsStepper      st;
  ForceCtx        c = {0};
  MbsDiagnostics  d0, d1;
  PetscReal       v0[3][3], v1[3][3], x0[3][3], x1[3][3], work_total = 0;
  PetscInt        first;

  (void)state;
  CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
  CHECK(MbsModelSetGravity(model, g));
  CHECK(MbsModelAddParticle(model, "free", m_free, (PetscReal[]){2, 0, 0}, (PetscReal[]){0, 0.3, 0}, &c.free));
  CHECK(MbsModelAddChain(model, "chain", 12, 0.2, 0.1, zero, down, &first));
  c.tip = first + 11;
  CHECK(
    MbsModelAddRigidBody(model, "top", 3.0, Jtop, (PetscReal[]){0, 1, 1}, R0, NULL, (PetscReal[]){0, 0, 4}, &c.rigid));
  CHECK(MbsModelAddFixedPoint(model, c.rigid, (PetscReal[]){0, 0, -1}, (PetscReal[]){0, 1, 0}, NULL));
  c.X[0] = 0.1, c.X[1] = 0.2, c.X[2] = 0.3;
  CHECK(MbsModelSetUp(model));
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetType(st, MBSSCHEMEEM));
  CHECK(MbsStepperSetTimeStep(st, h));
  CHECK(MbsStepperSetExternalForce(st, HostForce, &c));
  CHECK(MbsStepperSetUp(st));
  CHECK(MbsStepperComputeDiagnostics(st, &d0));
  for (PetscInt n = 0; n < nsteps; n++) {
    const PetscInt body[3] = {c.free, c.tip, c.rigid};
    PetscReal      work    = 0, scale;
    for (int k = 0; k < 3; k++) CHECK(MbsStepperGetPointVelocity(st, body[k], k == 2 ? c.X : NULL, v0[k]));
    for (int k = 0; k < 3; k++) CHECK(MbsStepperGetPointPosition(st, body[k], k == 2 ? c.X : NULL, x0[k]));
    CHECK(MbsStepperStep(st));
    assert_int_equal((int)c.calls, (int)n + 1);
    for (int k = 0; k < 3; k++) CHECK(MbsStepperGetPointVelocity(st, body[k], k == 2 ? c.X : NULL, v1[k]));
    for (int k = 0; k < 3; k++) CHECK(MbsStepperGetPointPosition(st, body[k], k == 2 ? c.X : NULL, x1[k]));
    CHECK(MbsStepperComputeDiagnostics(st, &d1));
    for (int k = 0; k < 3; k++)
      for (int i = 0; i < 3; i++) work += c.f[k][i] * (x1[k][i] - x0[k][i]);
    scale = PetscAbsReal(d0.T) + PetscAbsReal(d0.V) + PetscAbsReal(work);
    if (PetscAbsReal(d1.E - d0.E - work) > 1e-12 * scale)
      Fail("step %d: E_{n+1} - E_n = %.17g, work of the external forces %.17g (difference %.3e)\n", (int)n,
           (double)(d1.E - d0.E), (double)work, (double)(d1.E - d0.E - work));
    if (PetscAbsReal(d1.W - work) > 1e-12 * scale || d1.D != 0) /* the diagnostics report that work */
      Fail("step %d: diagnostics W = %.17g, D = %g; the external forces' work is %.17g\n", (int)n, (double)d1.W,
           (double)d1.D, (double)work);
    for (int i = 0; i < 3; i++) {
      const PetscReal dp = m_free * (v1[0][i] - v0[0][i]), impulse = h * c.f[0][i] + (i == 2 ? h * m_free * g[2] : 0.0);
      if (PetscAbsReal(dp - impulse) > 1e-13)
        Fail("step %d: the free particle's momentum changed by %.17g, impulse %.17g (component %d)\n", (int)n,
             (double)dp, (double)impulse, i);
      /* its position advances with the mean velocity (EM's midpoint rule) */
      if (PetscAbsReal(x1[0][i] - x0[0][i] - 0.5 * h * (v0[0][i] + v1[0][i])) > 1e-14)
        Fail("step %d: free particle x_{n+1} - x_n = %.17g, h (v_n + v_{n+1})/2 = %.17g\n", (int)n,
             (double)(x1[0][i] - x0[0][i]), (double)(0.5 * h * (v0[0][i] + v1[0][i])));
    }
    if (d1.g_max > 1e-10 || d1.gv_max > 1e-10)
      Fail("step %d: g_max %g, gv_max %g\n", (int)n, (double)d1.g_max, (double)d1.gv_max);
    work_total += work;
    d0 = d1;
  }
  /* the forces did real work: the balance above is not 0 = 0 */
  if (PetscAbsReal(work_total) < 1e-3)
    Fail("the external forces did almost no work (%g): the test would not see a missing force\n", (double)work_total);
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
}

/* The damped spring pendulum of tests/inputs/dampers/damped_pendulum.yaml, built in C; with_damper false leaves out
   its linear damper between the ground point (0, 0, 1) and B, which the host then adds */
static void BuildDampedSpringPendulum(PetscBool with_damper, MbsModel *model)
{
  const PetscReal g[3] = {0, 0, -9.81}, s = PetscSqrtReal(0.5), axis[3] = {1, 0, 0}, origin[3] = {0, 0, 0};
  PetscInt        A, B;

  CHECK(MbsModelCreate(PETSC_COMM_WORLD, model));
  CHECK(MbsModelSetGravity(*model, g));
  CHECK(MbsModelAddParticle(*model, "A", 1, origin, NULL, &A));
  CHECK(MbsModelAddParticle(*model, "B", 1, (PetscReal[]){s, 0, -s}, NULL, &B));
  CHECK(MbsModelAddJoint(*model, MBS_JOINT_POINT_ON_LINE, A, NULL, NULL, MBS_GROUND, origin, axis, NULL));
  CHECK(MbsModelAddRod(*model, A, NULL, B, NULL, 1.0, NULL));
  CHECK(MbsModelAddSpring(*model, MBS_SPRING_LINEAR, MBS_GROUND, origin, A, NULL, 10, 0, NULL));
  if (with_damper) CHECK(MbsModelAddDamper(*model, MBS_GROUND, (PetscReal[]){0, 0, 1}, B, NULL, 0.5, 1, NULL));
  CHECK(MbsModelAddDamper(*model, MBS_GROUND, (PetscReal[]){-1, 0.2, 0}, A, NULL, 0.3, 2, NULL));
  CHECK(MbsModelSetUp(*model));
}

/* The host's damper (MbsStepperSetStateForce()) against the same damper as a model element, under every scheme on
   1-3 ranks: the same states to round-off. With its Jacobian, Newton takes the same iterations; without it, more
   (linear convergence) to the same solution. With EM the energy balance E_{n+1} - E_n = W - D holds to round-off, the
   host's work counted in W. */
static void test_state_force_as_damper(void **state)
{
  const PetscInt nsteps = 150;

  (void)state;
  for (int s = 0; s < NSCHEMES; s++) {
    const char *scheme  = all_schemes[s];
    Vec         qref    = NULL;
    PetscInt    its_ref = 0;
    for (int run = 0; run < 3; run++) { /* the element, the host with its Jacobian, the host without */
      HostForces     host = {.n = 1, .d = {{MBS_GROUND, 1, {0, 0, 1}, {0, 0, 0}, 0.5, 0.0}}};
      MbsModel       model;
      MbsStepper     st;
      MbsDiagnostics d;
      PetscReal      E0, scale, balance = 0, wsum = 0, diff = 0;
      PetscInt       its;

      BuildDampedSpringPendulum(run == 0, &model);
      host.model = model;
      CHECK(MbsStepperCreate(model, &st));
      CHECK(MbsStepperSetType(st, scheme));
      CHECK(MbsStepperSetTimeStep(st, 0.01));
      if (run) AttachHostForces(st, &host, run == 1);
      CHECK(MbsStepperComputeDiagnostics(st, &d));
      E0    = d.E;
      scale = PetscMax(PetscAbsReal(d.E), PetscMax(d.T, PetscAbsReal(d.V)));
      for (PetscInt n = 0; n < nsteps; n++) {
        CHECK(MbsStepperStep(st));
        CHECK(MbsStepperComputeDiagnostics(st, &d));
        balance = PetscMax(balance, PetscAbsReal(d.E - E0 - d.W + d.D));
        wsum += d.W;
        E0 = d.E;
      }
      CHECK(MbsStepperGetNewtonIterations(st, NULL, &its));
      if (run == 0) {
        CHECK(VecDuplicate(st->q, &qref));
        CHECK(VecCopy(st->q, qref));
        its_ref = its;
      } else {
        CHECK(VecAXPY(qref, -1.0, st->q));
        CHECK(VecNorm(qref, NORM_INFINITY, &diff));
        CHECK(VecAXPY(qref, 1.0, st->q));
        if (!(diff <= (run == 1 ? 1e-12 : 1e-10)))
          Fail("%s: the host's damper (%s Jacobian) ends %g away from the damper element\n", scheme,
               run == 1 ? "with" : "without", diff);
        if (run == 1 && its != its_ref)
          Fail("%s: %d Newton iterations with the host's damper and its Jacobian, %d with the element\n", scheme,
               (int)its, (int)its_ref);
        if (run == 2 && !(its > its_ref))
          Fail("%s: %d Newton iterations without the host's Jacobian, %d with the element: the Jacobian is not used\n",
               scheme, (int)its, (int)its_ref);
        if (!(wsum < -1e-3)) Fail("%s: the host's damper did the work %g, expected < 0\n", scheme, wsum);
        assert_true(host.force_calls > nsteps && (run == 2 ? host.jacobian_calls == 0 : host.jacobian_calls > 0));
      }
      if ((Is(scheme, "em") || Is(scheme, "em-g")) && !(balance <= 1e-13 * scale))
        Fail("%s (run %d): max |E_{n+1} - E_n - W_n + D_n| = %g, expected round-off (<= 1e-13 of %g)\n", scheme, run,
             balance, scale);
      CHECK(MbsStepperDestroy(&st));
      CHECK(MbsModelDestroy(&model));
      HostForcesDestroy(&host);
    }
    CHECK(VecDestroy(&qref));
  }
}

/* A Jacobian entry outside the pattern the host declared is an error, not a silent reallocation; in parallel, a matrix
   whose rows are not the model's is refused on every rank */
static void test_state_force_pattern(void **state)
{
  HostForces  host = {.n = 1, .d = {{MBS_GROUND, 1, {0, 0, 1}, {0, 0, 0}, 0.5, 0.0}}, .stray_entry = PETSC_TRUE};
  MbsModel    model;
  MbsStepper  st;
  PetscMPIInt size;

  (void)state;
  CHECK(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  if (size > 1) { /* a matrix whose rows are distributed otherwise than the coordinates: refused on every rank */
    PetscMPIInt rank;
    PetscInt    nq;
    Mat         J;
    CHECK(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
    BuildDampedSpringPendulum(PETSC_FALSE, &model);
    CHECK(MbsStepperCreate(model, &st));
    nq = model->nq;
    assert_true(model->nq_local < nq || rank > 0); /* the bodies are spread: rank 0 does not own every row */
    CHECK(MatCreateAIJ(PETSC_COMM_WORLD, rank ? 0 : nq, rank ? 0 : nq, nq, nq, 1, NULL, 0, NULL, &J));
    CHECK(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    assert_int_equal((int)MbsStepperSetStateForce(st, HostStateForce, J, HostStateForceJacobian, &host),
                     PETSC_ERR_ARG_SIZ);
    CHECK(PetscPopErrorHandler());
    CHECK(MatDestroy(&J));
    CHECK(MbsStepperDestroy(&st));
    CHECK(MbsModelDestroy(&model));
    return; /* a stray entry: the owner of its row alone would see the error */
  }
  BuildDampedSpringPendulum(PETSC_FALSE, &model);
  host.model = model;
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetTimeStep(st, 0.01));
  AttachHostForces(st, &host, PETSC_TRUE);
  CHECK(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  assert_int_equal((int)MbsStepperStep(st), PETSC_ERR_ARG_OUTOFRANGE); /* MatSetValues(): a new nonzero */
  CHECK(PetscPopErrorHandler());
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  HostForcesDestroy(&host);
}

int main(int argc, char **argv)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_jacobians_match_finite_differences),
    cmocka_unit_test(test_jacobian_preallocation_exact),
    cmocka_unit_test(test_chain),
    cmocka_unit_test(test_parallel_matches_serial),
    cmocka_unit_test(test_external_force),
    cmocka_unit_test(test_state_force_jacobian),
    cmocka_unit_test(test_state_force_as_damper),
    cmocka_unit_test(test_state_force_pattern),
    /* With GGLMBS_TEST_PARALLEL (the MPI runs) only the tests above: the rest are serial numerics (the
       one-body examples do not even distribute), which test_parallel_matches_serial ties to any number of ranks. */
    cmocka_unit_test(test_pendulum),
    cmocka_unit_test(test_heavy_top),
    cmocka_unit_test(test_four_particle),
    cmocka_unit_test(test_joint_zoo),
    cmocka_unit_test(test_spring_pendulum),
    cmocka_unit_test(test_energy_balance),
    cmocka_unit_test(test_slider_crank_closed_form),
    cmocka_unit_test(test_andrews_squeezer),
    cmocka_unit_test(test_flyball_governor),
    cmocka_unit_test(test_reactions),
    cmocka_unit_test(test_reactions_distributed),
    cmocka_unit_test(test_rattle_half_steps),
    cmocka_unit_test(test_order_heavy_top),
    cmocka_unit_test(test_order_four_particle),
    cmocka_unit_test(test_order_rattle_forces),
    cmocka_unit_test(test_galerkin_orders),
    cmocka_unit_test(test_galerkin_conservation),
    cmocka_unit_test(test_galerkin_six_balls),
    cmocka_unit_test(test_galerkin_lll2_is_rattle),
    cmocka_unit_test(test_galerkin_forces),
    cmocka_unit_test(test_beam_free_conservation),
    cmocka_unit_test(test_beam_cantilever_frequency),
    cmocka_unit_test(test_galerkin_refusals),
    cmocka_unit_test(test_predictor_same_solution),
    cmocka_unit_test(test_adapt),
  };
  const char *filter = getenv("GGLMBS_TEST_FILTER");
  size_t      ntests = getenv("GGLMBS_TEST_PARALLEL") ? 8 : sizeof(tests) / sizeof(tests[0]);
  int         fails;

  if (PetscInitialize(&argc, &argv, NULL, NULL)) return 1;
  if (filter) cmocka_set_test_filter(filter);
  fails = _cmocka_run_group_tests("schemes", tests, ntests, NULL, NULL);
  if (PetscFinalize()) return 1;
  return fails;
}

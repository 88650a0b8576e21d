/* Over-constrained models: the count of dependent constraint rows and the elements of each dependency
   (duplicated rod, square with both diagonals, revolute four-bar, a duplicated rod buried in a 200-link
   chain, two far apart), no false positive on the full-rank counterparts, the stepper's error naming the
   elements, and -mbs_allow_redundant_constraints running consistent redundancy as the non-redundant
   model runs (same trajectory, energy and constraints to round-off). Runs on 1 and 2 ranks. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <gglmbs/gglmbs.h>
#include "model/redundancy.h"
#include "mbstest.h"

#define CHECK(call) assert_int_equal((int)(call), 0)

static void Fail(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fail();
}

static void Load(const char *relative, MbsModel *model, MbsRunConfig *cfg)
{
  char        path[PETSC_MAX_PATH_LEN];
  const char *src = getenv("GGLMBS_SOURCE_DIR");

  assert_non_null(src);
  snprintf(path, sizeof(path), "%s/%s", src, relative);
  CHECK(MbsModelCreate(PETSC_COMM_WORLD, model));
  CHECK(MbsRunConfigSetDefaults(cfg));
  CHECK(MbsModelLoadYAML(*model, path, cfg));
  CHECK(MbsModelSetUp(*model));
}

/* The dependencies at the initial state; elems[offset[i] ..] of dependency i. */
typedef struct {
  PetscInt  ndependent, nreported;
  PetscInt *offset, *elems;
} Found;

static void Find(MbsModel model, Found *f)
{
  Vec q, p;
  CHECK(MbsModelCreateInitialState(model, &q, &p));
  CHECK(MbsModelGetRedundantConstraints(model, q, MBS_REDUNDANCY_TOL, &f->ndependent, &f->nreported, &f->offset,
                                        &f->elems));
  CHECK(VecDestroy(&q));
  CHECK(VecDestroy(&p));
}

static void FreeFound(Found *f)
{
  CHECK(PetscFree(f->offset));
  CHECK(PetscFree(f->elems));
}

/* Dependency i involves exactly the n elements expect (sorted). */
static void ExpectDependency(const char *what, const Found *f, PetscInt i, PetscInt n, const PetscInt expect[])
{
  const PetscInt got  = f->offset[i + 1] - f->offset[i];
  PetscBool      same = (PetscBool)(got == n);
  for (PetscInt k = 0; same && k < n; k++) same = (PetscBool)(f->elems[f->offset[i] + k] == expect[k]);
  if (!same) {
    fprintf(stderr, "%s: dependency %d involves elements", what, (int)i);
    for (PetscInt k = 0; k < got; k++) fprintf(stderr, " %d", (int)f->elems[f->offset[i] + k]);
    fprintf(stderr, ", expected");
    for (PetscInt k = 0; k < n; k++) fprintf(stderr, " %d", (int)expect[k]);
    Fail("\n");
  }
}

static void ExpectFullRank(const char *input)
{
  MbsModel     model;
  MbsRunConfig cfg;
  Found        f;
  Load(input, &model, &cfg);
  Find(model, &f);
  if (f.ndependent != 0 || f.nreported != 0)
    Fail("%s: %d dependencies found in a full-rank model\n", input, (int)f.ndependent);
  FreeFound(&f);
  CHECK(MbsModelDestroy(&model));
}

/* (a) the same rod twice: one dependency, the two rods (elements 0 and 1); the message names both. */
static void test_rod_twice(void **state)
{
  MbsModel       model;
  MbsRunConfig   cfg;
  Found          f;
  const PetscInt rods[] = {0, 1};
  char           msg[4096];
  PetscInt       n;
  Vec            q, p;

  Load("tests/inputs/redundant/rod_twice.yaml", &model, &cfg);
  Find(model, &f);
  assert_int_equal(f.ndependent, 1);
  assert_int_equal(f.nreported, 1);
  ExpectDependency("rod twice", &f, 0, 2, rods);
  FreeFound(&f);
  CHECK(MbsModelCreateInitialState(model, &q, &p));
  CHECK(MbsModelFindRedundantConstraints(model, q, &n, msg, sizeof(msg)));
  assert_int_equal(n, 1);
  if (!strstr(msg, "rod_twice.yaml:8:5: joints[0] (rod) joining 'bob' to the ground") ||
      !strstr(msg, "rod_twice.yaml:9:5: joints[1] (rod) joining 'bob' to the ground") ||
      !strstr(msg, "1 of the 2 constraint rows") || !strstr(msg, "-mbs_allow_redundant_constraints"))
    Fail("message does not name the rods and the remedy:\n%s\n", msg);
  CHECK(VecDestroy(&q));
  CHECK(VecDestroy(&p));
  CHECK(MbsModelDestroy(&model));
  ExpectFullRank("inputs/pendulum3d.yaml");
}

/* (b) closed planar loops: the square with both diagonals has one self-stress through all six rods; the
   revolute four-bar has 3 dependencies, all through the four revolute joints (and the links' internal
   constraints that carry the moments). (c) their full-rank counterparts find nothing. */
static void test_planar_loops(void **state)
{
  MbsModel       model;
  MbsRunConfig   cfg;
  Found          f;
  const PetscInt rods[] = {0, 1, 2, 3, 4, 5};

  Load("tests/inputs/redundant/square_diagonals.yaml", &model, &cfg);
  Find(model, &f);
  assert_int_equal(f.ndependent, 1);
  assert_int_equal(f.nreported, 1);
  ExpectDependency("square", &f, 0, 6, rods);
  FreeFound(&f);
  CHECK(MbsModelDestroy(&model));
  ExpectFullRank("tests/inputs/redundant/square_one_diagonal.yaml");

  Load("tests/inputs/redundant/fourbar_revolute.yaml", &model, &cfg);
  Find(model, &f);
  assert_int_equal(f.ndependent, 3);
  assert_int_equal(f.nreported, 3);
  {
    PetscInt seen[16] = {0}, nelem;
    CHECK(MbsModelGetNumElements(model, &nelem));
    for (PetscInt i = 0; i < f.offset[3]; i++) seen[f.elems[i]]++;
    /* elements: 0-2 internal constraints of the links, 3-6 the revolute joints, 7-9 gravity */
    for (PetscInt e = 3; e <= 6; e++)
      if (!seen[e]) Fail("four-bar: revolute joint (element %d) not named\n", (int)e);
    for (PetscInt e = 7; e < nelem; e++)
      if (seen[e]) Fail("four-bar: potential element %d named\n", (int)e);
  }
  FreeFound(&f);
  CHECK(MbsModelDestroy(&model));
  ExpectFullRank("tests/inputs/redundant/fourbar_rod.yaml");
}

/* (d) a 200-link chain with one rod given twice in the middle: exactly that rod and its copy; with a
   second copy far away, two dependencies, each with its own pair. */
static void BuildChain(PetscInt count, PetscInt ndup, const PetscInt dup_at[], PetscInt dup_elem[], MbsModel *model)
{
  const PetscReal start[3] = {0, 0, 0}, dir[3] = {1, 0.2, -0.1};
  PetscInt        first;

  CHECK(MbsModelCreate(PETSC_COMM_WORLD, model));
  CHECK(MbsModelSetGravity(*model, (PetscReal[]){0, 0, -9.81}));
  CHECK(MbsModelAddChain(*model, "chain", count, 0.01, 0.05, start, dir, &first));
  for (PetscInt i = 0; i < ndup; i++)
    CHECK(MbsModelAddRod(*model, first + dup_at[i] - 1, NULL, first + dup_at[i], NULL, 0.05, &dup_elem[i]));
  CHECK(MbsModelSetUp(*model));
}

static void test_chain_buried(void **state)
{
  MbsModel       model;
  Found          f;
  const PetscInt at[2] = {100, 17};
  PetscInt       dup[2];

  BuildChain(200, 0, NULL, NULL, &model);
  Find(model, &f);
  assert_int_equal(f.ndependent, 0);
  FreeFound(&f);
  CHECK(MbsModelDestroy(&model));

  BuildChain(200, 1, at, dup, &model);
  Find(model, &f);
  assert_int_equal(f.ndependent, 1);
  assert_int_equal(f.nreported, 1);
  ExpectDependency("chain", &f, 0, 2, (PetscInt[]){at[0], dup[0]}); /* rod k is element k */
  FreeFound(&f);
  CHECK(MbsModelDestroy(&model));

  BuildChain(200, 2, at, dup, &model);
  Find(model, &f);
  assert_int_equal(f.ndependent, 2);
  assert_int_equal(f.nreported, 2);
  {
    const PetscInt i100 = f.elems[f.offset[0]] == at[0] ? 0 : 1;
    ExpectDependency("chain, two copies", &f, i100, 2, (PetscInt[]){at[0], dup[0]});
    ExpectDependency("chain, two copies", &f, 1 - i100, 2, (PetscInt[]){at[1], dup[1]});
  }
  FreeFound(&f);
  CHECK(MbsModelDestroy(&model));
}

/* A failed step names the elements instead of a bare NaN (the stepper calls the diagnosis). */
static void test_step_error_names_elements(void **state)
{
  MbsModel       model;
  MbsRunConfig   cfg;
  MbsStepper     st;
  PetscErrorCode ierr;

  Load("tests/inputs/redundant/rod_twice.yaml", &model, &cfg);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetTimeStep(st, cfg.dt));
  CHECK(MbsStepperSetFailureCheckpoint(st, "none"));
  error_code       = 0;
  error_message[0] = 0;
  ierr             = MbsStepperStep(st);
  if (!ierr) Fail("the step of a redundant model with the default solver succeeded: the test sees nothing\n");
  if (!strstr(error_message, "redundant constraints") || !strstr(error_message, "joints[0] (rod)") ||
      !strstr(error_message, "joints[1] (rod)"))
    Fail("step error does not name the redundant rods:\n%s\n", error_message);
  error_code = 0;
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
}

/* The state in input order on every rank. */
static void FinalState(MbsStepper st, PetscInt *n, PetscScalar **x)
{
  MbsModel           model;
  Vec                q, p, q0;
  VecScatter         sc;
  const PetscScalar *a;

  CHECK(MbsStepperGetModel(st, &model));
  CHECK(MbsStepperGetState(st, &q, &p));
  CHECK(MbsModelCreateScatterToZero(model, q, &sc, &q0));
  CHECK(VecScatterBegin(sc, q, q0, INSERT_VALUES, SCATTER_FORWARD));
  CHECK(VecScatterEnd(sc, q, q0, INSERT_VALUES, SCATTER_FORWARD));
  CHECK(VecGetSize(q, n));
  CHECK(PetscMalloc1(*n, x));
  CHECK(VecGetArrayRead(q0, &a));
  if (!PetscGlobalRank) CHECK(PetscArraycpy(*x, a, *n));
  CHECK(VecRestoreArrayRead(q0, &a));
  CHECK(MPI_Bcast(*x, (int)*n, MPIU_SCALAR, 0, PETSC_COMM_WORLD));
  CHECK(VecScatterDestroy(&sc));
  CHECK(VecDestroy(&q0));
}

typedef struct {
  PetscReal    dE, g, gv, dJL;
  PetscInt     n;
  PetscScalar *q;
} Outcome;

static void RunModel(const char *input, const char *scheme, PetscBool allow, PetscInt steps, Outcome *o)
{
  MbsModel       model;
  MbsRunConfig   cfg;
  MbsStepper     st;
  MbsDiagnostics d0, d;

  Load(input, &model, &cfg);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetType(st, scheme));
  CHECK(MbsStepperSetTimeStep(st, cfg.dt));
  CHECK(MbsStepperSetAllowRedundantConstraints(st, allow));
  CHECK(MbsStepperComputeDiagnostics(st, &d0));
  memset(o, 0, sizeof(*o));
  for (PetscInt k = 0; k < steps; k++) {
    CHECK(MbsStepperStep(st));
    CHECK(MbsStepperComputeDiagnostics(st, &d));
    o->dE = PetscMax(o->dE, PetscAbsReal(d.E - d0.E));
    o->g  = PetscMax(o->g, d.g_max);
    o->gv = PetscMax(o->gv, d.gv_max);
    for (int i = 0; i < 3; i++)
      o->dJL = PetscMax(o->dJL, PetscMax(PetscAbsReal(d.J[i] - d0.J[i]), PetscAbsReal(d.L[i] - d0.L[i])));
  }
  FinalState(st, &o->n, &o->q);
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
}

/* -mbs_allow_redundant_constraints: the redundant model moves as its non-redundant counterpart (the
   duplicated rod adds nothing, nor does the second diagonal of a rigid square), with EM's energy and
   both constraint levels at round-off, and momentum where there is no gravity. */
static void test_run_anyway(void **state)
{
  const char *const schemes[] = {"em", "vi-b"};
  const struct {
    const char *redundant, *reference;
    PetscInt    steps;
    PetscBool   free; /* no gravity, no ground: momentum is conserved */
  } cases[] = {
    {"tests/inputs/redundant/rod_twice.yaml", "inputs/pendulum3d.yaml", 20, PETSC_FALSE},
    {"tests/inputs/redundant/square_diagonals.yaml", "tests/inputs/redundant/square_one_diagonal.yaml", 50, PETSC_TRUE},
  };

  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
    for (size_t s = 0; s < 2; s++) {
      Outcome   red, ref;
      PetscReal dq = 0, qmax = 0;
      RunModel(cases[c].redundant, schemes[s], PETSC_TRUE, cases[c].steps, &red);
      RunModel(cases[c].reference, schemes[s], PETSC_FALSE, cases[c].steps, &ref);
      assert_int_equal(red.n, ref.n);
      for (PetscInt i = 0; i < red.n; i++) {
        dq   = PetscMax(dq, PetscAbsScalar(red.q[i] - ref.q[i]));
        qmax = PetscMax(qmax, PetscAbsScalar(ref.q[i]));
      }
      if (!(dq <= 1e-11 * PetscMax(qmax, 1)))
        Fail("%s %s: final state differs from the non-redundant model by %g\n", cases[c].redundant, schemes[s],
             (double)dq);
      if (!(red.g <= 1e-12)) Fail("%s %s: position constraint %g\n", cases[c].redundant, schemes[s], (double)red.g);
      if (!strcmp(schemes[s], "em")) {
        if (!(red.dE <= 1e-12)) Fail("%s em: energy error %g\n", cases[c].redundant, (double)red.dE);
        if (!(red.gv <= 1e-12)) Fail("%s em: velocity constraint %g\n", cases[c].redundant, (double)red.gv);
      } else if (!(PetscAbsReal(red.dE - ref.dE) <= 1e-12 * PetscMax(ref.dE, 1)))
        Fail("%s vi-b: energy error %g, non-redundant %g\n", cases[c].redundant, (double)red.dE, (double)ref.dE);
      if (cases[c].free && !(red.dJL <= 1e-12))
        Fail("%s %s: momentum error %g\n", cases[c].redundant, schemes[s], (double)red.dJL);
      CHECK(PetscFree(red.q));
      CHECK(PetscFree(ref.q));
    }
}

/* Runs inputs/bricard.yaml with redundant constraints allowed to time T at step h with the given scheme.
   Returns the error code of the first failed step (0: all steps done); o gets the energy and constraint
   errors (relative to |E_0|) and the final coordinates. */
static PetscErrorCode RunBricard(const char *scheme, PetscReal h, PetscReal T, PetscBool adapt, Outcome *o)
{
  MbsModel       model;
  MbsRunConfig   cfg;
  MbsStepper     st;
  MbsDiagnostics d0, d;
  PetscErrorCode ierr  = 0;
  const PetscInt steps = (PetscInt)(T / h + 0.5);

  Load("inputs/bricard.yaml", &model, &cfg);
  CHECK(MbsStepperCreate(model, &st));
  CHECK(MbsStepperSetType(st, scheme));
  CHECK(MbsStepperSetTimeStep(st, h));
  CHECK(MbsStepperSetAdapt(st, adapt, 5));
  CHECK(MbsStepperSetFailureCheckpoint(st, "none"));
  CHECK(MbsStepperSetAllowRedundantConstraints(st, PETSC_TRUE));
  CHECK(MbsStepperComputeDiagnostics(st, &d0));
  memset(o, 0, sizeof(*o));
  error_code       = 0;
  error_message[0] = 0;
  for (PetscInt k = 0; k < steps && !ierr; k++) {
    ierr = MbsStepperStep(st);
    if (ierr) break;
    CHECK(MbsStepperComputeDiagnostics(st, &d));
    o->dE = PetscMax(o->dE, PetscAbsReal(d.E - d0.E) / PetscAbsReal(d0.E));
    o->g  = PetscMax(o->g, d.g_max);
  }
  error_code = 0;
  FinalState(st, &o->n, &o->q);
  CHECK(MbsStepperDestroy(&st));
  CHECK(MbsModelDestroy(&model));
  return ierr;
}

/* Bricard's mechanism (an over-constrained spatial loop whose dependency is nonlinear, so the discrete
   gradient of the joint rows is not rank deficient at h > 0): EM and EM-G conserve its energy to round-off
   at every step size, with and without -mbs_adapt, their trajectories converge at second order, and a
   scheme that cannot run it fails with an error, never with a silently wrong answer. The energy scale
   |E_0| is 29.43 J. */
static void test_bricard(void **state)
{
  const char *const energy[] = {"em", "em-g"}, *const others[] = {"vi-a", "vi-b", "vi-s"};
  const PetscReal hs[] = {0.05, 0.01};

  for (size_t s = 0; s < 2; s++) {
    for (size_t i = 0; i < 2; i++)
      for (int adapt = 0; adapt < 2; adapt++) {
        Outcome o;
        if (RunBricard(energy[s], hs[i], 2.0, (PetscBool)adapt, &o))
          Fail("bricard %s h = %g: %s\n", energy[s], (double)hs[i], error_message);
        if (!(o.dE <= 1e-13))
          Fail("bricard %s h = %g: relative energy error %g\n", energy[s], (double)hs[i], (double)o.dE);
        if (!(o.g <= 1e-13))
          Fail("bricard %s h = %g: constraint violation %g\n", energy[s], (double)hs[i], (double)o.g);
        CHECK(PetscFree(o.q));
      }
    {
      /* the final state at t = 1 for h, h/2, h/4: errors against the finest fall by 4 per halving */
      Outcome   o[3];
      PetscReal e[2] = {0, 0}, order;
      for (int k = 0; k < 3; k++)
        if (RunBricard(energy[s], 0.02 / (1 << k), 1.0, PETSC_FALSE, &o[k]))
          Fail("bricard %s h = %g: %s\n", energy[s], 0.02 / (1 << k), error_message);
      for (PetscInt j = 0; j < o[0].n; j++) {
        e[0] = PetscMax(e[0], PetscAbsScalar(o[0].q[j] - o[1].q[j]));
        e[1] = PetscMax(e[1], PetscAbsScalar(o[1].q[j] - o[2].q[j]));
      }
      order = PetscLog2Real(e[0] / e[1]);
      if (!(order > 1.8 && order < 2.2))
        Fail("bricard %s: observed order %g (differences %g, %g)\n", energy[s], (double)order, (double)e[0],
             (double)e[1]);
      for (int k = 0; k < 3; k++) CHECK(PetscFree(o[k].q));
    }
  }
  /* The other schemes: a result that keeps the constraints, or an error naming the step (a step that does not
     converge, or whose energy diverges: which one depends on the round-off of the linear solver). VI-A enforces them at
     an intermediate configuration, and its nodes violate them by design, by O(h^2): a VI-A result must show that order
     at h/2. */
  for (size_t s = 0; s < 3; s++) {
    Outcome         o, o2;
    PetscErrorCode  ierr = RunBricard(others[s], 0.01, 2.0, PETSC_TRUE, &o);
    const PetscBool via  = (PetscBool)!strcmp(others[s], "vi-a");
    if (ierr && !strstr(error_message, "did not converge") && !strstr(error_message, "the energy diverged"))
      Fail("bricard %s: %s\n", others[s], error_message);
    if (!ierr && !via && !(o.g <= 1e-12)) Fail("bricard %s: constraint violation %g\n", others[s], (double)o.g);
    if (!ierr && via) {
      ierr = RunBricard(others[s], 0.005, 2.0, PETSC_TRUE, &o2);
      if (ierr && !strstr(error_message, "did not converge") && !strstr(error_message, "the energy diverged"))
        Fail("bricard %s: %s\n", others[s], error_message);
      if (!ierr && !(PetscLog2Real(o.g / o2.g) >= 1.8))
        Fail("bricard vi-a: nodal constraint violation %g at h = 0.01 and %g at h = 0.005: not second order\n",
             (double)o.g, (double)o2.g);
      if (!ierr) printf("bricard vi-a: nodal violation %g (h = 0.01), %g (h = 0.005)\n", (double)o.g, (double)o2.g);
      CHECK(PetscFree(o2.q));
    }
    CHECK(PetscFree(o.q));
  }
}

/* Inconsistent redundancy (rods of lengths 1 and 1.1 between the same points) is refused at set-up. */
static void test_inconsistent(void **state)
{
  char         path[PETSC_MAX_PATH_LEN];
  MbsModel     model;
  MbsRunConfig cfg;

  snprintf(path, sizeof(path), "%s/tests/inputs/redundant/rod_twice_inconsistent.yaml", getenv("GGLMBS_SOURCE_DIR"));
  CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
  CHECK(MbsRunConfigSetDefaults(&cfg));
  CHECK(MbsModelLoadYAML(model, path, &cfg));
  error_code       = 0;
  error_message[0] = 0;
  if (!MbsModelSetUp(model)) Fail("inconsistent rods accepted\n");
  if (!strstr(error_message, "joints[1] (rod): the initial state violates"))
    Fail("unexpected error: %s\n", error_message);
  error_code = 0;
  CHECK(MbsModelDestroy(&model));
}

/* -mbs_check_redundancy: set-up fails on the redundant model, naming the rods, and passes the full-rank one. */
static void test_check_at_setup(void **state)
{
  const char *const inputs[2] = {"tests/inputs/redundant/square_diagonals.yaml",
                                 "tests/inputs/redundant/square_one_diagonal.yaml"};

  CHECK(PetscOptionsSetValue(NULL, "-mbs_check_redundancy", "1"));
  for (int i = 0; i < 2; i++) {
    char           path[PETSC_MAX_PATH_LEN];
    MbsModel       model;
    MbsRunConfig   cfg;
    PetscErrorCode ierr;

    snprintf(path, sizeof(path), "%s/%s", getenv("GGLMBS_SOURCE_DIR"), inputs[i]);
    CHECK(MbsModelCreate(PETSC_COMM_WORLD, &model));
    CHECK(MbsRunConfigSetDefaults(&cfg));
    CHECK(MbsModelLoadYAML(model, path, &cfg));
    error_code       = 0;
    error_message[0] = 0;
    ierr             = MbsModelSetUp(model);
    if (i == 1 && ierr) Fail("full-rank square refused: %s\n", error_message);
    if (i == 0 && (!ierr || !strstr(error_message, "-mbs_check_redundancy") ||
                   !strstr(error_message, "joints[5] (rod) joining 'p2' and 'p4'")))
      Fail("redundant square: %s\n", ierr ? error_message : "accepted");
    error_code = 0;
    CHECK(MbsModelDestroy(&model));
  }
  CHECK(PetscOptionsClearValue(NULL, "-mbs_check_redundancy"));
}

/* Cost on a large chain (docs/robustness.md): GGLMBS_REDUNDANCY_CHAIN=<links> runs it and prints the
   times of the full-rank check and of the check that names a duplicated rod in the middle. */
static void test_large_chain(void **state)
{
  const char    *env = getenv("GGLMBS_REDUNDANCY_CHAIN");
  const PetscInt n   = env ? (PetscInt)atol(env) : 0;
  MbsModel       model;
  Found          f;
  PetscInt       at[1], dup[1];
  PetscLogDouble t0, t1, t2, t3;

  if (n < 2) skip();
  at[0] = n / 2;
  BuildChain(n, 0, NULL, NULL, &model);
  CHECK(PetscTime(&t0));
  Find(model, &f);
  CHECK(PetscTime(&t1));
  assert_int_equal(f.ndependent, 0);
  FreeFound(&f);
  CHECK(MbsModelDestroy(&model));
  BuildChain(n, 1, at, dup, &model);
  CHECK(PetscTime(&t2));
  Find(model, &f);
  CHECK(PetscTime(&t3));
  assert_int_equal(f.ndependent, 1);
  ExpectDependency("large chain", &f, 0, 2, (PetscInt[]){at[0], dup[0]});
  FreeFound(&f);
  CHECK(MbsModelDestroy(&model));
  CHECK(PetscPrintf(PETSC_COMM_WORLD,
                    "chain of %d links: full-rank check %.3f s, duplicated rod found and named in %.3f s\n", (int)n,
                    t1 - t0, t3 - t2));
}

int main(int argc, char **argv)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_rod_twice),    cmocka_unit_test(test_planar_loops),
    cmocka_unit_test(test_chain_buried), cmocka_unit_test(test_step_error_names_elements),
    cmocka_unit_test(test_run_anyway),   cmocka_unit_test(test_bricard),
    cmocka_unit_test(test_inconsistent), cmocka_unit_test(test_check_at_setup),
    cmocka_unit_test(test_large_chain),
  };
  int fails;

  if (PetscInitialize(&argc, &argv, NULL, NULL)) return 1;
  if (PetscPushErrorHandler(CaptureError, NULL)) return 1;
  /* cmocka's report goes to an XML file, so a passing run prints nothing; failures still print to stderr */
  if (!getenv("CMOCKA_XML_FILE")) {
    char report[64];
    snprintf(report, sizeof(report), "test_redundancy.%d.xml", (int)PetscGlobalRank);
    (void)remove(report); /* cmocka writes to stderr instead of an existing file */
    if (setenv("CMOCKA_XML_FILE", report, 1)) return 1;
  }
  cmocka_set_message_output(CM_OUTPUT_XML);
  fails = cmocka_run_group_tests_name("redundancy", tests, NULL, NULL);
  if (PetscFinalize()) return 1;
  return fails;
}

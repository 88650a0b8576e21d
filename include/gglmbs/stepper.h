/* gglmbs public API: time stepping with structure-preserving schemes. */
#ifndef GGLMBS_STEPPER_H
#define GGLMBS_STEPPER_H

#include <petscsnes.h>
#include <gglmbs/model.h>

typedef struct _p_MbsStepper *MbsStepper;

/* Built-in schemes (Kinon, Betsch & Schneider 2023, seed 004) */
#define MBSSCHEMEEM  "em"   /* GGL energy-momentum scheme, eq. (84) */
#define MBSSCHEMEEMG "em-g" /* Gonzalez (1999) energy-momentum scheme, primary constraints only */
#define MBSSCHEMEVIS "vi-s" /* first-order GGL variational integrator, eq. (55) */
#define MBSSCHEMEVIA "vi-a" /* GGL variational integrator A(theta), eq. (79); parameter theta (default 1/2) */
#define MBSSCHEMEVIB                                                                                                \
  "vi-b" /* GGL variational integrator B(Theta, vartheta), eq. (82); parameters theta = Theta (default 1), vartheta \
            (default 1/2) */
/* Galerkin variational integrators (Man, Gao & Zhong 2020): galerkin-XYZ with X the control points (e equidistant,
   l Lobatto), Y and Z the rules of the unconstrained and the constrained term (g Gauss-Legendre, l Lobatto);
   parameter points (default 3, 2 to 8) */
#define MBSSCHEMEGALERKINLGG "galerkin-lgg"
#define MBSSCHEMEGALERKINLLL "galerkin-lll"
#define MBSSCHEMESTATIC      "static" /* static equilibrium at each step's end time (docs/statics.md) */
#define MBSSCHEMEDLA         "dla"    /* discrete Lagrange-d'Alembert (Cortes-Martinez), velocity constraints */
#define MBSSCHEMEDH          "dh"     /* Ball's discrete Hamel equations in the body frames, velocity constraints */
#define MBSSCHEMERATTLE      "rattle" /* RATTLE (Andersen 1983): symplectic, second order, constraints on both levels */

/* Initial guess of a step's Newton iteration for (q_{n+1}, p_{n+1}, v): the state at t_n ("simple"), or
   q_n + h M^-1 p_n ("advanced", seed 004 Table 2). Multipliers start from the previous step's. */
typedef enum { MBS_PREDICTOR_SIMPLE, MBS_PREDICTOR_ADVANCED, MBS_PREDICTOR_EXTRAPOLATE } MbsPredictor;
PETSC_EXTERN const char *const MbsPredictors[];

/* A real parameter of a scheme (e.g. theta of vi-a), with its default and admissible range. */
typedef struct {
  char      scheme[64];
  char      name[32];
  PetscReal def, lo, hi;
  PetscBool lo_open; /* lo itself is excluded */
  PetscBool hi_open; /* hi itself is excluded */
  char      help[128];
  PetscBool integer; /* only integer values (MbsSchemeRegisterIntegerParameter()) */
} MbsSchemeParameter;

/* Conserved quantities and constraint residuals of a state. */
typedef struct {
  PetscReal E, T, V; /* total, kinetic, potential energy */
  PetscReal J[3];    /* angular momentum about the origin, sum of q_i x p_i over all 3-vector blocks (directors too) */
  PetscReal L[3];    /* linear momentum, sum of p over translational blocks */
  PetscReal g_max;   /* max |g(q)| */
  PetscReal gv_max;  /* max |G(q) M^-1 p| */
  PetscBool has_Gv;  /* the scheme has its own velocity unknown v (vi-a, vi-b) and a step was taken */
  PetscReal Gv_max;  /* max |G(q_theta) v| of the last step: the scheme's own velocity-level residual */
  PetscReal W, D;    /* work supplied to the system (external forces) and energy dissipated (dampers) during the last
                        step: with EM, E_{n+1} - E_n = W - D to round-off (0 at the initial state) */
  PetscReal av_max;  /* max |A(q) M^-1 p| of the velocity constraints (docs/nonholonomic.md), 0 without them */
} MbsDiagnostics;

PETSC_EXTERN PetscErrorCode MbsStepperInitializePackage(void);
PETSC_EXTERN PetscErrorCode MbsSchemeRegister(const char name[], PetscErrorCode (*create)(MbsStepper));
PETSC_EXTERN PetscErrorCode MbsSchemeList(MPI_Comm, PetscViewer);
PETSC_EXTERN PetscErrorCode MbsSchemeIsRegistered(const char name[], PetscBool *registered, char names[], size_t len);
PETSC_EXTERN PetscErrorCode MbsSchemeRegisterParameter(const char scheme[], const char name[], PetscReal def,
                                                       PetscReal lo, PetscBool lo_open, PetscReal hi, PetscBool hi_open,
                                                       const char help[]);
PETSC_EXTERN PetscErrorCode MbsSchemeRegisterIntegerParameter(const char scheme[], const char name[], PetscInt def,
                                                              PetscInt lo, PetscInt hi, const char help[]);
PETSC_EXTERN PetscErrorCode MbsSchemeGetParameter(const char scheme[], const char name[],
                                                  const MbsSchemeParameter **param);
PETSC_EXTERN PetscErrorCode MbsSchemeGetParameterNames(const char scheme[], char names[], size_t len);
PETSC_EXTERN PetscErrorCode MbsSchemeCheckParameter(const MbsSchemeParameter *, PetscReal value, PetscBool *ok,
                                                    char expected[], size_t len);

/* Why the last step ended (MbsStepperGetConvergedReason()) */
typedef enum {
  MBS_STEP_INTERRUPTED              = -3, /* MbsStepperSolve() stopped by SIGINT or SIGTERM */
  MBS_STEP_DIVERGED_ENERGY          = -2, /* the energy left the bound of MbsStepperSetEnergyDivergence() */
  MBS_STEP_DIVERGED_NONLINEAR_SOLVE = -1, /* the Newton solve failed (after any retries of -mbs_adapt) */
  MBS_STEP_ITERATING                = 0,  /* no step taken yet */
  MBS_STEP_CONVERGED                = 1
} MbsStepReason;
PETSC_EXTERN const char *const *MbsStepReasons; /* MbsStepReasons[reason] is its name */

PETSC_EXTERN PetscClassId MBS_STEPPER_CLASSID;

PETSC_EXTERN PetscErrorCode MbsStepperCreate(MbsModel, MbsStepper *);
PETSC_EXTERN PetscErrorCode MbsStepperSetOptionsPrefix(MbsStepper, const char[]);
PETSC_EXTERN PetscErrorCode MbsStepperAppendOptionsPrefix(MbsStepper, const char[]);
PETSC_EXTERN PetscErrorCode MbsStepperGetOptionsPrefix(MbsStepper, const char *[]);
PETSC_EXTERN PetscErrorCode MbsStepperViewFromOptions(MbsStepper, PetscObject, const char[]);
PETSC_EXTERN PetscErrorCode MbsStepperGetConvergedReason(MbsStepper, MbsStepReason *);
PETSC_EXTERN PetscErrorCode MbsStepperSetErrorIfStepFails(MbsStepper, PetscBool);
PETSC_EXTERN PetscErrorCode MbsStepperSetReportViewer(MbsStepper, PetscViewer);
PETSC_EXTERN PetscErrorCode MbsStepperDestroy(MbsStepper *);
PETSC_EXTERN PetscErrorCode MbsStepperSetType(MbsStepper, const char type[]);
PETSC_EXTERN PetscErrorCode MbsStepperGetType(MbsStepper, const char *type[]);
PETSC_EXTERN PetscErrorCode MbsStepperSetTimeStep(MbsStepper, PetscReal h);
PETSC_EXTERN PetscErrorCode MbsStepperGetTimeStep(MbsStepper, PetscReal *h);
PETSC_EXTERN PetscErrorCode MbsStepperSetFinalTime(MbsStepper, PetscReal t_end);
PETSC_EXTERN PetscErrorCode MbsStepperSetOutput(MbsStepper, const char directory[], PetscInt every);
PETSC_EXTERN PetscErrorCode MbsStepperSetSchemeParameter(MbsStepper, const char name[], PetscReal value);
PETSC_EXTERN PetscErrorCode MbsStepperGetSchemeParameter(MbsStepper, const char name[], PetscReal *value);
PETSC_EXTERN PetscErrorCode MbsStepperSetPredictor(MbsStepper, MbsPredictor);
PETSC_EXTERN PetscErrorCode MbsStepperGetPredictor(MbsStepper, MbsPredictor *);
PETSC_EXTERN PetscErrorCode MbsStepperSetAdapt(MbsStepper, PetscBool adapt, PetscInt max_halvings);
PETSC_EXTERN PetscErrorCode MbsStepperGetAdaptRetries(MbsStepper, PetscInt *retries);
PETSC_EXTERN PetscErrorCode MbsStepperSetJacobianReuse(MbsStepper, PetscBool reuse, PetscReal rate);
PETSC_EXTERN PetscErrorCode MbsStepperSetAllowRedundantConstraints(MbsStepper, PetscBool allow);
PETSC_EXTERN PetscErrorCode MbsStepperSetFromOptions(MbsStepper);
PETSC_EXTERN PetscErrorCode MbsStepperSetUp(MbsStepper);
PETSC_EXTERN PetscErrorCode MbsStepperStep(MbsStepper);
PETSC_EXTERN PetscErrorCode MbsStepperSolve(MbsStepper);
PETSC_EXTERN PetscErrorCode MbsStepperSolveEquilibrium(MbsStepper, PetscInt nsteps);
PETSC_EXTERN PetscErrorCode MbsStepperSetEquilibrium(MbsStepper, PetscInt nsteps);
PETSC_EXTERN PetscErrorCode MbsStepperView(MbsStepper, PetscViewer);

PETSC_EXTERN PetscErrorCode MbsStepperGetModel(MbsStepper, MbsModel *);
PETSC_EXTERN PetscErrorCode MbsStepperGetConstraintForceWeight(MbsStepper, PetscReal *);
PETSC_EXTERN PetscErrorCode MbsStepperGetReaction(MbsStepper, PetscInt elem, PetscReal F[3], PetscReal M[3]);
PETSC_EXTERN PetscErrorCode MbsStepperSetReactions(MbsStepper, const char spec[]);
PETSC_EXTERN PetscErrorCode MbsStepperGetSNES(MbsStepper, SNES *);
PETSC_EXTERN PetscErrorCode MbsStepperGetTime(MbsStepper, PetscReal *);
PETSC_EXTERN PetscErrorCode MbsStepperGetStepNumber(MbsStepper, PetscInt *);
PETSC_EXTERN PetscErrorCode MbsStepperGetState(MbsStepper, Vec *q, Vec *p);
PETSC_EXTERN PetscErrorCode MbsStepperGetNewtonIterations(MbsStepper, PetscInt *last, PetscInt *total);
PETSC_EXTERN PetscErrorCode MbsStepperGetNumUnknowns(MbsStepper, PetscInt *);
PETSC_EXTERN PetscErrorCode MbsStepperUsesSchurAMG(MbsStepper, PetscBool *);
PETSC_EXTERN PetscErrorCode MbsStepperComputeDiagnostics(MbsStepper, MbsDiagnostics *);
PETSC_EXTERN PetscErrorCode MbsStepperWriteState(MbsStepper, const char filename[]);

/* Monitors: called with the initial state (step 0, or the restart step) and after every accepted step,
   whether the steps come from MbsStepperSolve() or from a host's own loop over MbsStepperStep(). */
PETSC_EXTERN PetscErrorCode MbsStepperMonitorSet(MbsStepper,
                                                 PetscErrorCode (*monitor)(MbsStepper, PetscInt step, PetscReal t,
                                                                           void *ctx),
                                                 void *ctx, PetscErrorCode (*destroy)(void **ctx));
PETSC_EXTERN PetscErrorCode MbsStepperMonitorCancel(MbsStepper);
PETSC_EXTERN PetscErrorCode MbsStepperMonitor(MbsStepper);
PETSC_EXTERN PetscErrorCode MbsStepperMonitorDefault(MbsStepper, PetscInt, PetscReal, void *);
PETSC_EXTERN PetscErrorCode MbsStepperMonitorProgress(MbsStepper, PetscInt, PetscReal, void *);

/* External forces applied by a host code: force(st, t, h, q, p, F, ctx) is called once per (sub-)step
   with t the mid-time of the step, h its size and (q, p) the state at its start; it adds generalized
   forces into F (zeroed before the call; coordinate layout; MbsModelAddPointForce() helps), and every
   scheme adds the impulse h F to its momentum balance. With EM the energy balance is exact:
   E_{n+1} - E_n = F . (q_{n+1} - q_n), the work of F along the step's displacement. */
typedef PetscErrorCode (*MbsExternalForceFn)(MbsStepper, PetscReal t, PetscReal h, Vec q, Vec p, Vec F, void *ctx);
PETSC_EXTERN PetscErrorCode MbsStepperSetExternalForce(MbsStepper, MbsExternalForceFn, void *ctx);
/* State-dependent forces of a host code, implicit, with their Jacobian (docs/library.md): force(st, t, q, v, F, ctx)
   adds F(t, q, v) into F at the step's mid-time, midpoint q = (q_n + q_{n+1})/2 and mean velocity v = (q_{n+1} -
   q_n)/h; jacobian(st, t, q, v, shift, J, ctx) adds dF/dq + shift dF/dv into J (shift = 2/h), a coordinate-layout
   matrix with a fixed pattern (MbsModelCreateCoordinateMatrix()). Called on every rank at every residual (Jacobian)
   evaluation; any rank may add to any rows; the stepper assembles. With EM: E_{n+1} - E_n = W - D to round-off. */
typedef PetscErrorCode (*MbsStateForceFn)(MbsStepper, PetscReal t, Vec q, Vec v, Vec F, void *ctx);
typedef PetscErrorCode (*MbsStateForceJacobianFn)(MbsStepper, PetscReal t, Vec q, Vec v, PetscReal shift, Mat J,
                                                  void *ctx);
PETSC_EXTERN PetscErrorCode MbsStepperSetStateForce(MbsStepper, MbsStateForceFn, Mat J, MbsStateForceJacobianFn,
                                                    void *ctx);
PETSC_EXTERN PetscErrorCode MbsStepperGetPointPosition(MbsStepper, PetscInt body, const PetscReal X[3], PetscReal x[3]);
PETSC_EXTERN PetscErrorCode MbsStepperGetPointVelocity(MbsStepper, PetscInt body, const PetscReal X[3], PetscReal v[3]);

/* Outputs: writers attached to a stepper like monitors, registered by name (docs/architecture.md). write() is
   called with the initial state and after every accepted step (MbsStepperMonitor()), with `every` the frequency
   the output was added with and `last` true at the final step of MbsStepperSolve() (or the step it stops at);
   begin() when MbsStepperSolve() starts (a continued run, step > 0, appends), finish() when it reached the final
   time, end() when it returns, normally or not. Any of them may be NULL. */
typedef struct {
  PetscErrorCode (*begin)(MbsStepper, PetscInt every, void *ctx);
  PetscErrorCode (*write)(MbsStepper, PetscInt every, PetscBool last, void *ctx);
  PetscErrorCode (*finish)(MbsStepper, void *ctx);
  PetscErrorCode (*end)(MbsStepper, void *ctx);
  PetscErrorCode (*destroy)(void **ctx);
} MbsOutputOps;
typedef PetscErrorCode (*MbsOutputCreateFn)(MbsStepper, MbsOutputOps *ops, void **ctx);

#define MBSOUTPUTCSV        "csv"        /* diagnostics.csv: energies, momenta, constraint residuals per step */
#define MBSOUTPUTXDMF       "xdmf"       /* trajectory.xdmf + trajectory.h5 for ParaView */
#define MBSOUTPUTCHECKPOINT "checkpoint" /* checkpoint.bin for restarts */
#define MBSOUTPUTREACTIONS  "reactions"  /* reactions/<joint>.csv: the reaction force and torque of chosen joints */

PETSC_EXTERN PetscErrorCode MbsOutputRegister(const char name[], MbsOutputCreateFn create);
PETSC_EXTERN PetscErrorCode MbsStepperAddOutput(MbsStepper, const char name[], PetscInt every);
PETSC_EXTERN PetscErrorCode MbsStepperGetOutputDirectory(MbsStepper, const char *directory[]);
PETSC_EXTERN PetscErrorCode MbsStepperGetProvenance(MbsStepper, const char *text[]);

/* Trajectories for visualization (XDMF + HDF5) */
PETSC_EXTERN PetscErrorCode MbsStepperSetTrajectory(MbsStepper, const char format[], PetscInt every);
PETSC_EXTERN PetscErrorCode MbsStepperSetTrajectorySync(MbsStepper, PetscReal);

/* Checkpoint and restart */
PETSC_EXTERN PetscErrorCode MbsStepperSetCheckpoint(MbsStepper, const char filename[], PetscInt every);
PETSC_EXTERN PetscErrorCode MbsStepperWriteCheckpoint(MbsStepper, const char filename[]);
PETSC_EXTERN PetscErrorCode MbsStepperLoadCheckpoint(MbsStepper, const char filename[]);

/* Failures: a step whose solve fails or whose energy diverges is an error, its state left in a checkpoint */
PETSC_EXTERN PetscErrorCode MbsStepperSetEnergyDivergence(MbsStepper, PetscReal factor);
PETSC_EXTERN PetscErrorCode MbsStepperSetEnergyTolerance(MbsStepper, PetscReal tol);
PETSC_EXTERN PetscErrorCode MbsStepperSetFailureCheckpoint(MbsStepper, const char filename[]);

/* SIGINT/SIGTERM: MbsStepperSolve() stops between steps, checkpoints, and returns PETSC_ERR_SIG */
PETSC_EXTERN PetscErrorCode MbsInterruptHandlerPush(void);
PETSC_EXTERN PetscErrorCode MbsInterruptHandlerPop(void);
PETSC_EXTERN PetscErrorCode MbsInterruptPending(PetscBool *installed, int *signum);

#endif

/* Private stepper structure and the interface a scheme implements. */
#ifndef MBS_STEPPERIMPL_H
#define MBS_STEPPERIMPL_H

#include <gglmbs/stepper.h>
#include "model/operators.h"

/*
  A scheme declares its fields in setup (MbsStepperSetFields; fields named "q" and "p" hold q_{n+1},
  p_{n+1}), and evaluates, on the ghosted local unknowns x of one step n -> n+1:
    residual: f (ghosted local, zeroed by the caller) from x, the step-start state st->q0, st->p0
    jacobian: the blocks of dF/dx through the MbsJacAdd* operators on st->sys
  The step size is st->hstep (st->h, or a fraction of it when a failed step is retried). A field named
  "v" (schemes with a velocity unknown) is predicted as M^-1 p_n. Everything else (predictor, SNES,
  retries, accepting a step, diagnostics, output) is shared.
*/
#define MBS_MAX_REACTION_TERMS 4
typedef struct {
  PetscInt  field;        /* a constraint or velocity constraint field */
  PetscReal weight, coef; /* where, and with what factor, the step's momentum balance applies it */
} MbsReactionTerm;

typedef struct {
  PetscErrorCode (*setup)(MbsStepper);
  PetscErrorCode (*residual)(MbsStepper, const PetscScalar *x, PetscScalar *f);
  PetscErrorCode (*jacobian)(MbsStepper, const PetscScalar *x);
  PetscErrorCode (*setfromoptions)(MbsStepper, PetscOptionItems *);
  PetscErrorCode (*view)(MbsStepper, PetscViewer);
  PetscErrorCode (*destroy)(MbsStepper);
  /* optional, for schemes with a velocity unknown v: max |G(q_theta) v| of the last solved step (collective) */
  PetscErrorCode (*velocity_residual)(MbsStepper, PetscReal *);
  /* the weight w of the configuration q_w = (1 - w) q_n + w q_{n+1} at which the scheme's momentum balance
     applies the constraint forces G(q_w)^T lambda (MbsStepperGetConstraintForceWeight()) */
  PetscErrorCode (*constraint_force_weight)(MbsStepper, PetscReal *);
  /* the scheme conserves E = T + V exactly (up to the work of external forces) when its equations hold:
     a (sub-)step that changes it by more than energy_tol times its scale did not converge (EM, EM-G) */
  PetscBool conserves_energy;
  /* on one rank, a wide body graph (nets, meshes) is factored faster by MUMPS than by UMFPACK for this scheme
     (measured per scheme, MbsStepperChooseSolver()) */
  PetscBool wide_mumps;
  /* -mbs_solver auto chooses the Schur-AMG preconditioner for large nets and meshes under this scheme (its iterations
     measured bounded, src/stepper/schuramg.c) */
  PetscBool schur_amg;
  /* the ratio of the coefficient of lambda g'' in the Jacobian's primal block to the product of those of G^T in its
     first constraint field's columns and of G in that field's rows (EM, EM-G: (h/2) / (h 1); VI-A: (h theta) /
     (h theta)); 0 where not derived (docs/solvers.md).
     The Schur-AMG preconditioner's -mbs_schur_axial takes the constraints' axial stiffness out of the primal block by
     it (src/stepper/schuramg.c) */
  PetscReal schur_axial;
  /* optional: the initial guess of the scheme's other fields (stages) when a step is predicted from its start state
     (X holds q_n, p_n and the last multipliers; MbsStepperPredict()) */
  PetscErrorCode (*predict)(MbsStepper);
  /* the scheme integrates the force elements' (dampers, loads) and the host's external force's impulse itself, over
     its stages (residual and jacobian read st->has_forces, st->force, st->Fext); it cannot take a host's state force,
     which the stepper then refuses */
  PetscBool own_forces;
  /* a static solve (no inertia, the state at rest): no energy-divergence check */
  PetscBool quasistatic;
  /* the scheme treats velocity constraints A(q) v = 0 (docs/nonholonomic.md), the multipliers of their reactions in a
     field named "nu"; the stepper refuses a model that has them under any other scheme */
  PetscBool velocity_constraints;
  /* optional: the terms of the constraint forces of a step, sum_t coef_t G(q_{w_t})^T (field_t) (A^T for velocity
     constraint fields), with the step's configuration q_w = (1 - w) q_n + w q_{n+1}, that the reactions report
     (MbsStepperGetReaction(), the trajectory); default: lambda and nu, coefficient 1, at the constraint force
     weight */
  PetscErrorCode (*reaction_terms)(MbsStepper, PetscInt *n, MbsReactionTerm terms[]);
} MbsSchemeOps;

#define MBS_STEPPER_NWORK 5
/* -mbs_parallel_lu: the solve of several ranks when nobody chose an LU package (MbsStepperChooseSolver()) */
enum { MBS_PARALLEL_LU_AUTO, MBS_PARALLEL_LU_INTERFACE, MBS_PARALLEL_LU_MUMPS };
PETSC_INTERN const char *const MbsParallelLUTypes[];
/* -mbs_solver: LU (direct, or the interface LU) or GMRES with the Schur-AMG preconditioner (MbsStepperChooseSolver())
 */
enum { MBS_SOLVER_AUTO, MBS_SOLVER_LU, MBS_SOLVER_SCHUR };
enum { MBS_KSP_AUTO_TYPE = 1, MBS_KSP_AUTO_SIDE = 2, MBS_KSP_AUTO_RTOL = 4, MBS_KSP_AUTO_MAXIT = 8 };
PETSC_INTERN const char *const MbsSolverTypes[];
#define MBS_WIDE_GRAPH \
  8 /* body graphs at least this wide (RCM bandwidth) are nets or meshes (MbsStepperChooseSolver()) */
#define MBS_MAX_FIELDS         16   /* fields of a scheme's unknowns (checkpoint version 7 on; 8 before) */
#define MBS_REUSE_MIN_UNKNOWNS 1000 /* default Jacobian reuse from this many unknowns on */
#define MBS_REUSE_MAX_USES     10   /* iterations of one solve on one kept Jacobian before it is refreshed */
#define MBS_PREDICT_HIST       4    /* accepted solutions the extrapolation predictor keeps (cubic) */
/* Round-off floor of the residual, relative to eps ||s_f|| in each field (MbsStepperConverged_Private()),
   and the smallest ||s_f|| counted, relative to ||s||: velocities of a model at rest are ~1e-25 */
#define MBS_FLOOR_EPS_FACTOR 1e3
#define MBS_FLOOR_FIELD_MIN  1e-8
/* ... and the level at which a residual is at that floor whether or not the iteration still halves it, so that Newton
   stops there without one more iteration to see it stagnate. Measured (pendulum, heavy top, four particles, chain1000,
   EM): 1 keeps energy and constraints at the floor of stopping only on stagnation (energy 1.9e-15 against 7.4e-16 of
   E0 on chain1000) for 0.3 fewer iterations per step; 4 saves 0.6 but lets the energy drift reach 1.4e-14. */
#define MBS_FLOOR_AT       1.0
#define MBS_FLOOR_ESTIMATE 100.0 /* the scale is computed for a residual within this factor of the level */
/* ... and never for a residual this many times the solve's first (PETSc's default divergence tolerance): an iterate
   that has run off (positions of 1e18 after 49 Newton iterations of a static solve, whose divergence test is off) has
   a floor as large as itself, and stagnates there */
#define MBS_FLOOR_MAX_GROWTH  1e4
#define MBS_ENERGY_DIVERGENCE 10.0 /* default of MbsStepperSetEnergyDivergence() */
/* Default of -mbs_energy_tol: EM and EM-G change E - W by round-off in a step (measured <= 1e-14 of the scale
   on Bricard's mechanism, the chains and the heavy top); a step that changes it by more was not solved. */
#define MBS_ENERGY_TOL 1e-8

typedef struct {
  PetscErrorCode (*monitor)(MbsStepper, PetscInt, PetscReal, void *);
  void *ctx;
  PetscErrorCode (*destroy)(void **);
} MbsMonitor;

typedef struct {
  char              name[64];
  PetscInt          every;
  MbsOutputCreateFn create;
  MbsOutputOps      ops;
  void             *ctx;
  PetscBool         created;
} MbsOutputLink;

struct _p_MbsStepper {
  PETSCHEADER(MbsSchemeOps);
  MbsModel      model; /* a reference is held */
  char          type[64];
  MbsStepReason reason;            /* of the last step (MbsStepperGetConvergedReason()) */
  PetscBool     errorifstepfailed; /* MbsStepperSetErrorIfStepFails() */
  PetscViewer   report; /* events a user should know of (MbsStepperSetReportViewer()); NULL: PetscInfo only */
  void         *data;
  PetscBool     setup;

  PetscReal    h, t_end, t;
  PetscReal    hstep; /* size of the step being solved: h, or h/2^k when -mbs_adapt retries */
  PetscInt     step;
  Vec          q, p;                      /* current state, coordinate layout */
  PetscScalar *q0, *p0;                   /* ghosted local state at the start of the step */
  PetscScalar *work[MBS_STEPPER_NWORK];   /* ghosted local coordinate work arrays for schemes */
  PetscInt     field_q, field_p, field_v; /* field_v < 0: the scheme has no velocity unknown */
  PetscInt     field_lambda;              /* the multipliers of the constraint forces, -1 if none */
  PetscInt     field_gamma;               /* GGL's velocity-level multipliers, -1 if none */
  PetscInt     field_nu;                  /* the multipliers of the velocity constraints' reactions, -1 if none */

  PetscInt   nparams; /* the scheme's real parameters (MbsSchemeRegisterParameter) */
  char     **param_name;
  PetscReal *param;

  MbsPredictor predictor;
  PetscBool    adapt;
  PetscInt     adapt_max, retries;

  MbsSystem sys;
  SNES      snes;
  Mat       J;
  /* |J| |X|, for the round-off scale of the residual (MbsStepperResidualScale_Private()): on several ranks, the
     scatter of X to the columns of J's off-diagonal block, made for J's nonzero state abs_nzstate */
  VecScatter       abs_scatter;
  Vec              abs_ghost;
  PetscObjectState abs_nzstate;
  PetscReal sfield[MBS_MAX_FIELDS]; /* ||s_f|| + MBS_FLOOR_FIELD_MIN ||s|| at the last floor test (0: none yet) */
  PetscBool scaled_in_solve;        /* the floor's scale was computed in this Newton solve */
  Vec       Xabs, Sabs;             /* |X| and |J| |X| */
  Vec       X, F, Xsave;
  Vec       qstart, pstart; /* state at the start of a step that -mbs_adapt may split */
  PetscBool started;
  /* the extrapolation predictor (MBS_PREDICTOR_EXTRAPOLATE): the unknowns of the last accepted (sub-)steps, newest
     first, all of size hist_h; valid while the state is the one the newest left (hist_qstate, hist_pstate) */
  Vec              xhist[MBS_PREDICT_HIST];
  PetscInt         nhist;
  PetscReal        hist_h;
  PetscObjectState hist_qstate, hist_pstate;
  PetscInt         last_its, total_its;
  PetscReal        stagnation_tol, fnorm_prev,
    fnorm_prev2;         /* floor test of MbsStepperConverged_Private(); -mbs_stagnation_tol */
  PetscReal fnorm_start; /* the residual norm at the start of the last solve, -1 if it was not finite */
  /* Jacobian reuse (modified Newton): keep the factored Jacobian across iterations and steps while
     each iteration still cuts the residual by reuse_rate; refresh when it does not, when the step size
     changes, and before giving up on a step. */
  PetscBool reuse, reuse_set; /* reuse_set: chosen by the user, else decided from the size and the solver */
  PetscReal reuse_rate;
  PetscBool jac_valid;          /* st->J holds an assembled Jacobian */
  PetscReal jac_h;              /* the step size it was assembled for */
  PetscReal jac_t0;             /* ... and the start time of that (sub-)step (time-dependent loads and drives) */
  PetscInt  jac_evals;          /* Jacobian assemblies since set-up */
  PetscInt  jac_uses;           /* iterations of the current solve on the current Jacobian */
  PetscBool allow_redundant;    /* eliminate dependent constraint rows (MbsStepperSetAllowRedundantConstraints()) */
  PetscInt  ndrop;              /* constraint rows eliminated at the current (sub-)step (the same on every rank) */
  PetscInt *drop;               /* ... their global constraint rows, sorted */
  PetscInt  ndrop_x, *drop_x;   /* ... the rows of X this rank owns that they make, over all constraint fields */
  Vec       qsub, psub;         /* the state at the start of a (sub-)step, for the energy check */
  PetscInt  fieldsplit_split;   /* splits registered with PCFIELDSPLIT: 0 one per field, 1 primal and dual */
  char      solver_choice[320]; /* the LU package and why (MbsStepperChooseSolver()), for the view */
  char      solver_auto[32]; /* the package the stepper chose ("dense" for dense LU, "interface" for the interface LU),
                                chosen again at a new set-up */
  PetscInt parallel_lu;      /* -mbs_parallel_lu: MBS_PARALLEL_LU_AUTO, _INTERFACE or _MUMPS */
  PetscInt solver;           /* -mbs_solver: MBS_SOLVER_AUTO, _LU or _SCHUR */
  PetscInt klu;              /* -mbs_klu: -1 by the model, 0 never, 1 always (one rank, src/stepper/klu.c) */
  PetscInt ksp_auto;         /* what the stepper set on the KSP for the Schur-AMG preconditioner (MBS_KSP_AUTO_*) */

  char     output_dir[PETSC_MAX_PATH_LEN];
  PetscInt output_every;
  char     write_state[PETSC_MAX_PATH_LEN];

  /* monitors (MbsStepperMonitorSet), called for the initial state and after every accepted step */
  PetscInt    nmonitors, maxmonitors;
  MbsMonitor *monitors;
  PetscInt    monitored_step; /* the step the monitors last saw, -1 before the first call */

  /* external force of a host code: impulse h F on the momentum balance of each (sub-)step */
  MbsExternalForceFn force;
  void              *force_ctx;
  Vec                Fext; /* coordinate layout, evaluated once per (sub-)step */
  /* state-dependent force of a host code (MbsStepperSetStateForce()): F(t, q_m, v_m) at the step's midpoint and mean
     velocity, implicit like the force elements', with its Jacobian dF/dq + shift dF/dv in Jsf (coordinate layout) */
  MbsStateForceFn         sforce;
  MbsStateForceJacobianFn sforce_jac;
  void                   *sforce_ctx;
  Mat                     Jsf;
  PetscObjectState        Jsf_nzstate; /* its nonzero state when the Jacobian's pattern was recorded */
  Vec                     qm, vm, Fsf; /* coordinate layout: the midpoint, the mean velocity, the force */

  /* trajectory output setting (MbsStepperSetTrajectory()): the format is an output added by name */
  char      traj_format[16]; /* "" or "none": off */
  PetscInt  traj_every;
  PetscReal traj_sync; /* seconds between syncs of the trajectory files (MbsStepperSetTrajectorySync()) */

  char reaction_spec[PETSC_MAX_PATH_LEN]; /* the joints whose reactions are written (MbsStepperSetReactions()) */

  /* outputs (MbsStepperAddOutput()), created at first use */
  PetscInt       noutputs, maxoutputs;
  MbsOutputLink *outputs;
  char          *provenance;    /* MbsStepperGetProvenance() */
  PetscBool      solving;       /* inside MbsStepperSolve() */
  PetscBool      catch_signals; /* inside MbsStepperSolve() with signal handlers on some rank: Newton looks too */
  int            step_signal;   /* the signal that stopped the Newton iterations of the step (0: none) */
  PetscInt       solve_nsteps;  /* its final step */

  /* checkpoint and restart; the kept Jacobian is defined by the unknowns, step-start state and step
     size it was assembled at, so a restart can rebuild exactly the same factors */
  char      checkpoint[PETSC_MAX_PATH_LEN];
  PetscInt  checkpoint_every;
  char      restart[PETSC_MAX_PATH_LEN];
  PetscBool restarted;        /* the restart file was loaded */
  Vec       Xjac, qjac, pjac; /* where the current Jacobian was assembled */
  /* the kept Jacobian's record at the start of the current step: a step a signal abandons after refreshing the
     Jacobian restores it (MbsStepperAbandonStep_Private()), so that the checkpoint continues bit-identically */
  Vec       Xjac_step, qjac_step, pjac_step;
  PetscBool jac_step_saved, jac_valid_step;
  PetscReal jac_h_step, jac_t0_step;
  PetscInt  jac_evals_step, total_its_step;
  PetscReal sfield_step[MBS_MAX_FIELDS];

  /* failures: a step that fails or whose energy diverges leaves its state in failure_checkpoint ("":
     <output dir>/failed_step.bin, "none": not written) */
  char      failure_checkpoint[PETSC_MAX_PATH_LEN];
  PetscReal energy_divergence; /* stop when |E - E_ref| > energy_divergence * energy_scale (0: never) */
  PetscReal energy_tol; /* energy-conserving schemes: largest change of E - W in one (sub-)step, times the scale */
  PetscBool energy_set; /* energy_ref and energy_scale hold for the current run */
  PetscBool hold_time;  /* every step at its start time (the loads' and drives' time): MbsStepperSolveEquilibrium() */
  PetscInt  equilibrium_steps;        /* MbsStepperSolve() starts from the static equilibrium in this many load steps */
  PetscReal energy_ref, energy_scale; /* initial energy plus the work of external forces since; its scale */
  PetscReal ext_work; /* this rank's part of the external forces' work F . (q_{n+1} - q_n) of the step */
  /* force elements (dampers): does this rank have any; the (sub-)step's mid-time; this rank's part of the work
     supplied (external forces, drives) and of the energy dissipated during the last step (MbsDiagnostics W, D) */
  PetscBool has_forces; /* on any rank */
  PetscReal tmid;
  PetscReal tstep[2]; /* the (sub-)step's start and end times: where the drives are evaluated */
  PetscReal hlast;    /* the size of the last accepted (sub-)step, whose start st->q0 holds */
  PetscReal step_supplied, step_dissipated;
};

PETSC_EXTERN PetscErrorCode MbsStepperSetFields(MbsStepper, PetscInt n, const MbsFieldKind[], const char *const[]);
PETSC_INTERN PetscErrorCode MbsStepperReset_Private(MbsStepper);

PETSC_INTERN PetscErrorCode MbsStepperRebuildJacobian(MbsStepper);
/* The constraint force terms of the last step (MbsSchemeOps.reaction_terms or the default) */
PETSC_INTERN PetscErrorCode MbsStepperGetReactionTerms_Private(MbsStepper, PetscInt *n, MbsReactionTerm terms[]);
/* The generalized constraint force of the owned element at local position k over the last step, sum_t coef_t
   G_e(q_w)^T lambda_e (A_e^T nu_e), with x the owned block of st->X and qloc the ghosted state the step reached; qw
   (may be NULL) the element's coordinates at the first term's weight. Zero before the first step. */
PETSC_INTERN PetscErrorCode MbsStepperElementConstraintForce_Private(MbsStepper, PetscInt k, PetscInt n,
                                                                     const MbsReactionTerm terms[],
                                                                     const PetscScalar *x, const PetscScalar *qloc,
                                                                     PetscReal f[], PetscReal qw[]);
PETSC_INTERN PetscErrorCode MbsStepperReactionLocal_Private(MbsStepper, PetscInt k, PetscInt n,
                                                            const MbsReactionTerm terms[], const PetscScalar *x,
                                                            const PetscScalar *qloc, PetscReal F[3], PetscReal M[3]);
PETSC_INTERN PetscErrorCode MbsPCSetDenseLU_Private(PC);
PETSC_INTERN PetscErrorCode MbsPCSetKLU_Private(PC);
/* KLU's solves take their right-hand sides four at a time (klu_solve.c): a block of this many reads the factors once */
#define MBS_KLU_BLOCK 4
/* MUMPS's 100 % workspace margin on a PCLU's factor unless the user set one (stepper.c) */
PETSC_INTERN PetscErrorCode MbsPCSetMumpsMargin_Private(PC, Mat);
/* interfacelu.c: the exact substructured solve of several ranks (each rank's interior by sparse LU, the interface by
   dense LU), and the interface's size (over all ranks, and the largest rank's part) from the model */
PETSC_INTERN PetscErrorCode MbsPCSetInterfaceLU_Private(PC, MbsStepper, MatSolverType, char[], size_t);
PETSC_INTERN PetscErrorCode MbsStepperInterfaceSize_Private(MbsStepper, PetscInt *, PetscInt *);
/* submatmap.c: where the entries of a submatrix S = J(isr, isc) (MatCreateSubMatrix()) sit in J's value arrays (SeqAIJ,
   or MPIAIJ's diagonal and off-diagonal blocks), to copy the values of later Jacobians of the same pattern */
typedef struct {
  PetscInt  n[2];   /* the entries of S's diagonal and off-diagonal blocks */
  PetscInt *pos[2]; /* each one's position in the values of J's diagonal, off-diagonal block */
} MbsSubMatMap;
/* *pos: the position of column c in row r of a CSR pattern (sorted columns), or -1 */
static inline PetscErrorCode MbsCSRFind(const PetscInt *ia, const PetscInt *ja, PetscInt r, PetscInt c, PetscInt *pos)
{
  PetscInt loc;

  PetscFunctionBegin;
  PetscCall(PetscFindInt(c, ia[r + 1] - ia[r], ja + ia[r], &loc));
  *pos = loc >= 0 ? ia[r] + loc : -1;
  PetscFunctionReturn(0);
}
PETSC_INTERN PetscErrorCode MbsAIJSplit_Private(Mat, Mat *, Mat *, const PetscInt **, PetscBool *);
PETSC_INTERN PetscErrorCode MbsSubMatMapCreate_Private(Mat J, IS isr, IS isc, Mat S, MbsSubMatMap *, PetscBool *ok);
PETSC_INTERN PetscErrorCode MbsSubMatMapCopy_Private(const MbsSubMatMap *, Mat J, Mat S);
PETSC_INTERN PetscErrorCode MbsSubMatMapAddTo_Private(const MbsSubMatMap *, Mat S, PetscScalar alpha, Mat J);
PETSC_INTERN PetscErrorCode MbsSubMatMapReset_Private(MbsSubMatMap *);
/* schuramg.c: the block preconditioner with AMG on G M^-1 G^T, and why a stepper cannot use it ("" if it can) */
PETSC_INTERN PetscErrorCode MbsPCSetSchurAMG_Private(PC, MbsStepper);
PETSC_INTERN PetscErrorCode MbsStepperSchurAMGApplicable_Private(MbsStepper, char[], size_t);
PETSC_INTERN PetscErrorCode MbsStepperHistoryValid_Private(MbsStepper, PetscBool *);
PETSC_INTERN PetscErrorCode MbsStepperCheckpointPath(MbsStepper, const char filename[], char path[], size_t len);
PETSC_INTERN PetscErrorCode MbsInterruptSetAgreed_Private(int signum);

/* The number of steps of h from t = 0 to t_end (the last may end past t_end by less than a step) */
static inline PetscInt MbsStepperNumSteps(MbsStepper st)
{
  return (PetscInt)PetscCeilReal(st->t_end / st->h - 1e-9);
}
PETSC_EXTERN PetscErrorCode MbsStepperGetParameter_Private(MbsStepper, const char name[], PetscReal *);

PETSC_INTERN PetscLogEvent MBS_Residual, MBS_Jacobian, MBS_Step, MBS_Diagnostics, MBS_InterfaceSchur, MBS_SchurSetUp;
PETSC_INTERN PetscFunctionList    MbsSchemeFunctions;
PETSC_INTERN MbsSchemeParameter **MbsSchemeParameters; /* of all registered schemes together */
PETSC_INTERN PetscInt             MbsNumSchemeParameters;

PETSC_INTERN PetscErrorCode MbsStepperReport_Private(MbsStepper, const char format[], ...) PETSC_ATTRIBUTE_FORMAT(2, 3);
/* step.c: the SNES callbacks */
PETSC_INTERN PetscErrorCode MbsStepperResidualScale_Private(MbsStepper, Vec X, Vec F, PetscReal *ratio);
PETSC_INTERN PetscErrorCode MbsStepperSelectConstraints_Private(MbsStepper, Vec q);
PETSC_INTERN PetscErrorCode MbsStepperEliminateResidual_Private(MbsStepper, Vec X, Vec F);
PETSC_INTERN PetscErrorCode MbsStepperEliminateJacobian_Private(MbsStepper, Mat J);
PETSC_INTERN PetscErrorCode MbsStepperCheckEliminated_Private(MbsStepper, Vec X, PetscReal *gmax, PetscReal *gkept,
                                                              PetscInt *row);
PETSC_INTERN PetscErrorCode MbsStepperConverged_Private(SNES, PetscInt, PetscReal, PetscReal, PetscReal,
                                                        SNESConvergedReason *, void *);
PETSC_INTERN PetscErrorCode MbsStepperFormFunction_Private(SNES, Vec, Vec, void *);
PETSC_INTERN PetscErrorCode MbsStepperFormJacobian_Private(SNES, Vec, Mat, Mat, void *);
/* failure.c: the energy check and the failure checkpoint */
PETSC_INTERN PetscErrorCode MbsStepperEnergyStart_Private(MbsStepper);
PETSC_INTERN PetscErrorCode MbsStepperCheckEnergy_Private(MbsStepper, PetscBool *diverged, PetscReal *E);
PETSC_INTERN PetscErrorCode MbsStepperTotalEnergy_Private(MbsStepper, PetscReal *E);
PETSC_INTERN PetscErrorCode MbsStepperWriteFailureState_Private(MbsStepper, PetscBool restartable, char where[],
                                                                size_t len);
/* output.c: the outputs at the points of MbsStepperSolve() and MbsStepperMonitor() */
PETSC_INTERN PetscFunctionList MbsOutputFunctions;
PETSC_INTERN PetscErrorCode    MbsStepperOutputsBegin_Private(MbsStepper);
PETSC_INTERN PetscErrorCode    MbsStepperOutputsWrite_Private(MbsStepper);
PETSC_INTERN PetscErrorCode    MbsStepperOutputsFinish_Private(MbsStepper);
PETSC_INTERN PetscErrorCode    MbsStepperOutputsEnd_Private(MbsStepper);
PETSC_INTERN PetscErrorCode    MbsStepperOutputsDestroy_Private(MbsStepper);
PETSC_INTERN PetscErrorCode    MbsStepperRemoveOutput_Private(MbsStepper, const char name[]);
PETSC_INTERN PetscErrorCode    MbsStepperHasOutput_Private(MbsStepper, const char name[], PetscBool *has,
                                                           PetscBool *created);
PETSC_INTERN PetscErrorCode    MbsMakeDirectory(MPI_Comm, const char directory[]);
/* monitor.c: -mbs_monitor, -mbs_progress */
PETSC_INTERN PetscErrorCode MbsStepperMonitorSetFromOptions_Private(MbsStepper, PetscOptionItems *);

#endif

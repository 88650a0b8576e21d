/* MbsStepperSetFromOptions(): every -mbs_ option of the stepper. */
#include "stepper/stepperimpl.h"

static PetscErrorCode MbsStepperOptions_Private(PetscOptionItems *PetscOptionsObject, PetscObject obj)
{
  MbsStepper st = (MbsStepper)obj;
  char       type[64];
  PetscBool  flg;
  PetscReal  h = st->h, t_end = st->t_end;
  PetscInt   every = st->output_every;

  PetscFunctionBegin;
  PetscCall(PetscOptionsFList("-mbs_scheme", "Time-stepping scheme", "MbsStepperSetType", MbsSchemeFunctions, st->type,
                              type, sizeof(type), &flg));
  if (flg) PetscCall(MbsStepperSetType(st, type));
  PetscCall(PetscOptionsReal("-mbs_dt", "Step size", "MbsStepperSetTimeStep", h, &h, &flg));
  if (flg) PetscCall(MbsStepperSetTimeStep(st, h));
  PetscCall(PetscOptionsReal("-mbs_t_end", "Final time", "MbsStepperSetFinalTime", t_end, &t_end, &flg));
  if (flg) PetscCall(MbsStepperSetFinalTime(st, t_end));
  PetscCall(PetscOptionsString("-mbs_output_dir", "Output directory", "MbsStepperSetOutput", st->output_dir,
                               st->output_dir, sizeof(st->output_dir), NULL));
  PetscCall(PetscOptionsInt("-mbs_output_every", "Write diagnostics every n steps", "MbsStepperSetOutput", every,
                            &every, &flg));
  if (flg) PetscCall(MbsStepperSetOutput(st, NULL, every));
  PetscCall(PetscOptionsString("-mbs_write_state", "Write the final state as CSV", "MbsStepperWriteState",
                               st->write_state, st->write_state, sizeof(st->write_state), NULL));
  for (PetscInt i = 0; i < st->nparams; i++) {
    const MbsSchemeParameter *prm;
    char                      opt[64];
    PetscReal                 value = st->param[i];
    PetscCall(MbsSchemeGetParameter(st->type, st->param_name[i], &prm));
    PetscCall(PetscSNPrintf(opt, sizeof(opt), "-mbs_%s", st->param_name[i]));
    PetscCall(PetscOptionsReal(opt, prm->help, "MbsStepperSetSchemeParameter", value, &value, &flg));
    if (flg) PetscCall(MbsStepperSetSchemeParameter(st, st->param_name[i], value));
  }
  PetscCall(PetscOptionsEnum("-mbs_predictor", "Newton initial guess", "MbsStepperSetPredictor", MbsPredictors,
                             (PetscEnum)st->predictor, (PetscEnum *)&st->predictor, NULL));
  {
    PetscBool adapt = st->adapt;
    PetscInt  maxh  = st->adapt_max;
    PetscCall(PetscOptionsBool("-mbs_adapt", "Retry a failed step with halved sub-steps", "MbsStepperSetAdapt", adapt,
                               &adapt, NULL));
    PetscCall(PetscOptionsInt("-mbs_adapt_max_halvings", "At most this many halvings of a step", "MbsStepperSetAdapt",
                              maxh, &maxh, NULL));
    PetscCall(MbsStepperSetAdapt(st, adapt, maxh));
  }
  {
    PetscBool reuse = st->reuse, set1, set2;
    PetscReal rate  = st->reuse_rate;
    PetscCall(PetscOptionsBool(
      "-mbs_jacobian_reuse",
      "Modified Newton: keep the factored Jacobian across iterations and steps while it contracts the residual "
      "(default: on from 1000 unknowns, off under the Schur-AMG preconditioner)",
      "MbsStepperSetJacobianReuse", reuse, &reuse, &set1));
    PetscCall(
      PetscOptionsReal("-mbs_jacobian_reuse_rate",
                       "Refresh a reused Jacobian when an iteration cuts the residual norm by less than this factor",
                       "MbsStepperSetJacobianReuse", rate, &rate, &set2));
    if (set1)
      PetscCall(MbsStepperSetJacobianReuse(st, reuse, rate));
    else if (set2) {
      PetscCheck(rate > 0 && rate < 1, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
                 "Jacobian reuse rate must be in (0, 1), got %g", (double)rate);
      st->reuse_rate = rate;
    }
  }
  {
    char     fmt[16] = "";
    PetscInt every = st->traj_every, ckevery = st->checkpoint_every;
    PetscCall(MbsStepperMonitorSetFromOptions_Private(st, PetscOptionsObject));
    PetscCall(PetscOptionsString("-mbs_trajectory", "Trajectory output: xdmf or none", "MbsStepperSetTrajectory",
                                 st->traj_format, fmt, sizeof(fmt), &flg));
    {
      /* the trajectory is written as often as the diagnostics unless told otherwise */
      PetscBool set_every;
      if (!st->traj_format[0]) every = st->output_every;
      PetscCall(PetscOptionsInt("-mbs_trajectory_every",
                                "Write the trajectory every n steps (default: as -mbs_output_every)",
                                "MbsStepperSetTrajectory", every, &every, &set_every));
      if (flg || set_every)
        PetscCall(MbsStepperSetTrajectory(st, flg ? fmt : (st->traj_format[0] ? st->traj_format : "none"), every));
    }
    {
      char spec[PETSC_MAX_PATH_LEN];
      PetscCall(
        PetscOptionsString("-mbs_reactions",
                           "Write the reactions of these joints and drives: all, or a list of names (joints[0]), "
                           "labels or element indices",
                           "MbsStepperSetReactions", st->reaction_spec, spec, sizeof(spec), &flg));
      if (flg) PetscCall(MbsStepperSetReactions(st, spec));
    }
    {
      PetscReal sync = st->traj_sync;
      PetscCall(PetscOptionsReal("-mbs_trajectory_sync",
                                 "Seconds between syncs of the trajectory files (flush and list the written steps; "
                                 "0: as often as rewriting the XML allows)",
                                 "MbsStepperSetTrajectorySync", sync, &sync, &flg));
      if (flg) PetscCall(MbsStepperSetTrajectorySync(st, sync));
    }
    {
      /* further outputs by name, written as often as the diagnostics: -mbs_output_formats a,b */
      char    *names[16];
      PetscInt n = 16;
      PetscCall(PetscOptionsStringArray("-mbs_output_formats",
                                        "Further registered outputs, written every -mbs_output_every steps",
                                        "MbsStepperAddOutput", names, &n, NULL));
      PetscErrorCode ierr = 0;
      for (PetscInt i = 0; i < n; i++) { /* an unknown name is an error, after the names are freed */
        if (!ierr) ierr = MbsStepperAddOutput(st, names[i], st->output_every);
        PetscCall(PetscFree(names[i]));
      }
      PetscCall(ierr);
    }
    PetscCall(PetscOptionsString("-mbs_checkpoint", "Checkpoint file (default <output dir>/checkpoint.bin)",
                                 "MbsStepperSetCheckpoint", st->checkpoint, st->checkpoint, sizeof(st->checkpoint),
                                 NULL));
    PetscCall(PetscOptionsInt("-mbs_checkpoint_every", "Write a checkpoint every n steps and at the end (0: never)",
                              "MbsStepperSetCheckpoint", ckevery, &ckevery, NULL));
    PetscCall(MbsStepperSetCheckpoint(st, NULL, ckevery));
    PetscCall(PetscOptionsString("-mbs_restart", "Continue from this checkpoint", "MbsStepperLoadCheckpoint",
                                 st->restart, st->restart, sizeof(st->restart), NULL));
  }
  {
    PetscInt n = st->equilibrium_steps;
    PetscCall(PetscOptionsInt("-mbs_equilibrium",
                              "Start from the static equilibrium of the initial state, in this many load steps (0: no)",
                              "MbsStepperSetEquilibrium", n, &n, &flg));
    if (flg) PetscCall(MbsStepperSetEquilibrium(st, n));
  }
  {
    PetscReal factor = st->energy_divergence;
    PetscCall(PetscOptionsReal(
      "-mbs_energy_divergence",
      "Stop when the energy moves from its initial value (plus external work) by more than this many times its "
      "scale (0: never)",
      "MbsStepperSetEnergyDivergence", factor, &factor, &flg));
    if (flg) PetscCall(MbsStepperSetEnergyDivergence(st, factor));
    factor = st->energy_tol;
    PetscCall(
      PetscOptionsReal("-mbs_energy_tol",
                       "Energy-conserving schemes (em, em-g): a (sub-)step that changes E - W by more than this "
                       "times the energy's scale is not accepted (0: no check)",
                       "MbsStepperSetEnergyTolerance", factor, &factor, &flg));
    if (flg) PetscCall(MbsStepperSetEnergyTolerance(st, factor));
    PetscCall(PetscOptionsString(
      "-mbs_failure_checkpoint",
      "Where a failed or diverged step leaves its state (default <output dir>/failed_step.bin, none: nowhere)",
      "MbsStepperSetFailureCheckpoint", st->failure_checkpoint, st->failure_checkpoint, sizeof(st->failure_checkpoint),
      NULL));
  }
  PetscCall(PetscOptionsReal("-mbs_stagnation_tol",
                             "Also accept a residual norm below this that no longer halves, even above the round-off "
                             "floor (a deliberate loosening; default 0)",
                             "MbsStepperCreate", st->stagnation_tol, &st->stagnation_tol, NULL));
  {
    const char *const splits[] = {"fields", "primal_dual"};
    PetscCall(PetscOptionsEList(
      "-mbs_fieldsplit_split",
      "Splits registered with PCFIELDSPLIT: one per field, or primal (q, p, v, xi) and dual (the multipliers)",
      "MbsStepperSetUp", splits, 2, splits[st->fieldsplit_split], &st->fieldsplit_split, NULL));
  }
  PetscCall(PetscOptionsEList(
    "-mbs_parallel_lu",
    "The solve of several ranks: auto (interface LU for small interfaces, else MUMPS), "
    "interface (each rank's interior by sparse LU, the interface by dense LU; -mbs_interface_pc_factor_...) "
    "or mumps",
    "MbsStepperSetUp", MbsParallelLUTypes, 3, MbsParallelLUTypes[st->parallel_lu], &st->parallel_lu, NULL));
  {
    PetscBool klu = (PetscBool)(st->klu > 0), set;
    PetscCall(PetscOptionsBool("-mbs_klu",
                               "One rank, LU: factor with KLU (src/stepper/klu.c) or not; by default chosen "
                               "from the model (narrow body graphs)",
                               "MbsStepperSetUp", klu, &klu, &set));
    if (set) st->klu = klu;
  }
  PetscCall(PetscOptionsEList(
    "-mbs_solver",
    "The step's linear solver when no PC or LU package is chosen: auto (LU, or Schur-AMG for large nets and meshes), "
    "lu, or schur (GMRES with the Schur-AMG block preconditioner; -mbs_schur_pc_...)",
    "MbsStepperSetUp", MbsSolverTypes, 3, MbsSolverTypes[st->solver], &st->solver, NULL));
  if (PetscOptionsObject->printhelp && st->solver != MBS_SOLVER_SCHUR) {
    /* the Schur-AMG preconditioner reads its options only when it is made (at set-up, if chosen): named here */
    const char *p;
    PetscCall(PetscObjectGetOptionsPrefix((PetscObject)st, &p));
    if (!p) p = "";
    PetscCall((*PetscHelpPrintf)(PetscObjectComm((PetscObject)st),
                                 "  Under -%smbs_solver schur (docs/solvers.md): -%smbs_schur_axial, "
                                 "-%smbs_schur_assembled (variants for chains), -%smbs_schur_pc_... (the multipliers' "
                                 "solver), -%smbs_schur_primal_pc_... (A - B W C's); -help -%smbs_solver schur lists "
                                 "them\n",
                                 p, p, p, p, p, p));
  }
  {
    PetscBool allow = st->allow_redundant, set;
    PetscCall(PetscOptionsBool("-mbs_allow_redundant_constraints",
                               "Solve with MUMPS null-pivot detection so that consistent redundant constraints run",
                               "MbsStepperSetAllowRedundantConstraints", allow, &allow, &set));
    if (set) PetscCall(MbsStepperSetAllowRedundantConstraints(st, allow));
  }
  {
    PetscViewer       viewer;
    PetscViewerFormat format;
    PetscBool         set;
    PetscCall(PetscOptionsViewer("-mbs_report", "Report retried steps and partial restarts (to a viewer)",
                                 "MbsStepperSetReportViewer", &viewer, &format, &set));
    if (set) {
      PetscCall(MbsStepperSetReportViewer(st, viewer));
      PetscCall(PetscViewerDestroy(&viewer));
    }
  }
  PetscCall(PetscOptionsBool("-mbs_error_if_step_fails", "A failed or diverged step is an error (else only its reason)",
                             "MbsStepperSetErrorIfStepFails", st->errorifstepfailed, &st->errorifstepfailed, NULL));
  if (st->ops->setfromoptions) PetscCall(st->ops->setfromoptions(st, PetscOptionsObject));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperSetFromOptions - Reads the stepper's options, then the nonlinear solver's (-snes_*, -ksp_*, -pc_*).

  Collective

  Options Database Keys:
+ -mbs_scheme <em> - the scheme
. -mbs_dt <h> - step size
. -mbs_t_end <t> - final time
. -mbs_output_dir <dir> - output directory
. -mbs_output_every <n> - output frequency
. -mbs_write_state <file> - write the final state (index,q,p) as CSV
. -mbs_theta, -mbs_vartheta - the scheme's parameters (MbsStepperSetSchemeParameter())
. -mbs_predictor <simple,advanced,extrapolate> - Newton initial guess
. -mbs_adapt - retry failed steps with halved sub-steps
. -mbs_adapt_max_halvings <n> - at most n halvings per step
. -mbs_energy_divergence <factor> - stop a run whose energy diverges (MbsStepperSetEnergyDivergence())
. -mbs_energy_tol <tol> - energy-conserving schemes: the largest accepted energy change of a step
(MbsStepperSetEnergyTolerance()) . -mbs_failure_checkpoint <file> - where a failed step leaves its state
(MbsStepperSetFailureCheckpoint()) . -mbs_allow_redundant_constraints - run consistent redundant constraints
(MbsStepperSetAllowRedundantConstraints())
- -mbs_fieldsplit_split <fields,primal_dual> - splits registered with -pc_type fieldsplit (docs/solvers.md)
. -mbs_parallel_lu <auto,interface,mumps> - the solve of several ranks when no LU package is chosen (docs/solvers.md)
. -mbs_klu <bool> - one rank: LU by KLU or not (default: chosen from the model; docs/solvers.md)
- -mbs_solver <auto,lu,schur> - LU or GMRES with the Schur-AMG preconditioner (docs/solvers.md)

  Level: beginner
@*/
PetscErrorCode MbsStepperSetFromOptions(MbsStepper st)
{
  PetscFunctionBegin;
  PetscCall(MbsObjectOptions((PetscObject)st, MbsStepperOptions_Private));
  PetscCall(SNESSetFromOptions(st->snes));
  PetscFunctionReturn(0);
}

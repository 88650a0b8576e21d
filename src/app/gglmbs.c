#define _POSIX_C_SOURCE 200809L /* strtok_r */
static const char help[] =
  "gglmbs: structure-preserving multibody dynamics.\n"
  "Usage: gglmbs -i input.yaml [-mbs_scheme em|em-g|vi-s|vi-a|vi-b|rattle|dla|dh|...] [-mbs_theta theta]\n"
  "              [-mbs_vartheta vartheta] [-mbs_tau tau]\n"
  "              [-mbs_predictor simple|advanced] [-mbs_adapt] [-mbs_adapt_max_halvings n]\n"
  "              [-mbs_dt h] [-mbs_t_end T] [-mbs_output_dir dir] [-mbs_output_every n]\n"
  "              [-mbs_write_state file] [-mbs_trajectory xdmf] [-mbs_trajectory_every n] [-mbs_trajectory_sync s]\n"
  "              [-mbs_checkpoint_every n] [-mbs_checkpoint file] [-mbs_restart file]\n"
  "              [-mbs_monitor] [-mbs_progress] [-mbs_view] [-snes_monitor] [PETSc options]\n"
  "       gglmbs --version\n\n";

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <petsctime.h>
#include <gglmbs/gglmbs.h>

/* Unknowns per rank below which a step costs tens of microseconds, so that mpiexec's start (about 0.35 s) and the
   messages of every step outweigh a second rank's gain in all but long runs (particle chains; docs/solvers.md) */
#define MBS_APP_MIN_UNKNOWNS_PER_RANK 500

/* PETSc says "Input string abc has no numeric value" for an option whose value is not a number, without the
   option's name: find the option with that value in the database, so that the message names it. */
static void MbsAppNameOption(const char *mess, char out[], size_t len)
{
  const char *start = mess + strlen("Input string "), *stop = strstr(start, " has no");
  char        value[256], *all = NULL, *save = NULL, *prev = NULL;

  out[0] = 0;
  if (!stop || (size_t)(stop - start) >= sizeof(value)) return;
  memcpy(value, start, (size_t)(stop - start));
  value[stop - start] = 0;
  if (PetscOptionsGetAll(NULL, &all) || !all) return;
  for (char *tok = strtok_r(all, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
    if (prev && prev[0] == '-' && !strcmp(tok, value)) {
      snprintf(out, len, "option %s: expected a number, got '%s'", prev, value);
      break;
    }
    prev = tok;
  }
  PetscFree(all);
}

/* Errors a user can fix (bad input, a step that does not converge, files, an option's value: the library's
   messages about an option start with its name) are reported in one line; anything else gets PETSc's traceback. */
static PetscBool option_error = PETSC_FALSE; /* an option's value was wrong: report it in one line */

static PetscErrorCode MbsAppErrorHandler(MPI_Comm comm, int line, const char *fun, const char *file, PetscErrorCode n,
                                         PetscErrorType p, const char *mess, void *ctx)
{
  if (n == PETSC_ERR_USER_INPUT || n == PETSC_ERR_NOT_CONVERGED || n == PETSC_ERR_FILE_OPEN ||
      n == PETSC_ERR_FILE_READ || n == PETSC_ERR_FILE_WRITE || n == PETSC_ERR_FILE_UNEXPECTED ||
      n == PETSC_ERR_ARG_OUTOFRANGE || n == PETSC_ERR_SIG ||
      (n == PETSC_ERR_ARG_WRONG && ((p == PETSC_ERROR_INITIAL && mess && mess[0] == '-') || option_error))) {
    PetscMPIInt rank = 0;
    if (n == PETSC_ERR_ARG_WRONG) option_error = PETSC_TRUE; /* its repeats up the stack stay quiet too */
    if (p == PETSC_ERROR_INITIAL) {
      if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &rank);
      char named[512] = "";
      if (!strncmp(mess, "Input string ", strlen("Input string "))) MbsAppNameOption(mess, named, sizeof(named));
      if (!rank) fprintf(stderr, "gglmbs: error: %s\n", named[0] ? named : mess);
    }
    return n;
  }
  return PetscTraceBackErrorHandler(comm, line, fun, file, n, p, mess, ctx);
}

/*
  Before the first step: an option of gglmbs' own (-mbs_...) that set-up did not read is misspelt (-mbs_sheme
  vi-a), and a run that ignores it would run with something else for as long as it takes: an error, before
  anything runs. Options read only later are exempt: -mbs_redundancy_tol (read when a step fails or at each
  step with -mbs_allow_redundant_constraints) and the viewer
  options of the Jacobian (-mbs_jac_..., read at its first assembly), and under the Schur-AMG preconditioner the
  options of its inner preconditioners' nested solvers (-mbs_schur_primal_sub_pc_type under bjacobi, read when they
  are set up at the first step). Other options (-snes_..., -ksp_...) may belong to solvers created later; they are
  reported after the run (ReportUnusedOptions()), and so are those exempt here if nothing read them.
*/
static PetscErrorCode CheckOwnOptions(MbsStepper st)
{
  static const char *const late[]   = {"mbs_redundancy_tol", "mbs_jac_"};
  static const char *const inner[]  = {"mbs_schur_primal_", "mbs_schur_"};
  static const char *const nested[] = {"sub_", "redundant_", "mg_levels_", "mg_coarse_", "fieldsplit_", "telescope_"};
  PetscInt                 n;
  char                   **names, **values, bad[256] = "";
  PetscBool                schur;

  PetscFunctionBegin;
  PetscCall(MbsStepperUsesSchurAMG(st, &schur));
  PetscCall(PetscOptionsLeftGet(NULL, &n, &names, &values));
  for (PetscInt i = 0; i < n && !bad[0]; i++) {
    PetscBool own, exempt = PETSC_FALSE;
    PetscCall(PetscStrbeginswith(names[i], "mbs_", &own));
    for (size_t k = 0; own && !exempt && k < sizeof(late) / sizeof(late[0]); k++)
      PetscCall(PetscStrbeginswith(names[i], late[k], &exempt));
    for (size_t k = 0; own && schur && !exempt && k < sizeof(inner) / sizeof(inner[0]); k++) {
      PetscBool under;
      PetscCall(PetscStrbeginswith(names[i], inner[k], &under));
      for (size_t j = 0; under && !exempt && j < sizeof(nested) / sizeof(nested[0]); j++)
        PetscCall(PetscStrbeginswith(names[i] + strlen(inner[k]), nested[j], &exempt));
    }
    if (own && !exempt) PetscCall(PetscSNPrintf(bad, sizeof(bad), "%s", names[i]));
  }
  PetscCall(PetscOptionsLeftRestore(NULL, &n, &names, &values));
  if (bad[0]) { /* the Schur-AMG preconditioner's options are read only when it is the step's solver */
    static const char *const schur_options[] = {"mbs_schur_axial",       "mbs_schur_assembled",   "mbs_schur_pc_",
                                                "mbs_schur_primal_pc_",  "mbs_schur_primal_mat_", "mbs_schur_mat_",
                                                "mbs_schur_primal_sub_", "mbs_schur_sub_"};
    PetscBool                schur           = PETSC_FALSE;
    for (size_t k = 0; k < sizeof(schur_options) / sizeof(schur_options[0]) && !schur; k++) {
      size_t len;
      PetscCall(PetscStrlen(schur_options[k], &len));
      if (schur_options[k][len - 1] == '_')
        PetscCall(PetscStrbeginswith(bad, schur_options[k], &schur));
      else
        PetscCall(PetscStrcmp(bad, schur_options[k], &schur));
    }
    PetscCheck(!schur, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT,
               "option -%s was not read: it belongs to the Schur-AMG preconditioner, which this run's solver does not "
               "use or does not configure so (-mbs_solver schur selects it; -mbs_stepper_view shows the solver); "
               "nothing was run",
               bad);
  }
  PetscCheck(!bad[0], PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT,
             "option -%s is not an option of gglmbs (misspelt? gglmbs -help lists them); nothing was run", bad);
  PetscFunctionReturn(0);
}

/* A signal during set-up (which takes minutes for a model of 10^6 bodies) stops the program at the end of the phase
   it came in, with nothing to save; during the run, MbsStepperSolve() acts on it (a checkpoint). */
static PetscErrorCode CheckInterrupted(const char phase[])
{
  int sig;

  PetscFunctionBegin;
  PetscCall(MbsInterruptPending(NULL, &sig));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, PETSC_COMM_WORLD));
  PetscCheck(!sig, PETSC_COMM_WORLD, PETSC_ERR_SIG, "Interrupted by %s while %s: no step was run, nothing was written",
             sig == SIGINT    ? "SIGINT"
             : sig == SIGTERM ? "SIGTERM"
             : sig == SIGHUP  ? "SIGHUP"
                              : "a signal",
             phase);
  PetscFunctionReturn(0);
}

/* The run; *model and *st are created here and destroyed by the caller, also when the run fails. */
static PetscErrorCode RunWith(MbsModel *model_out, MbsStepper *st_out)
{
  char           input[PETSC_MAX_PATH_LEN] = "";
  PetscBool      has_input, view = PETSC_FALSE;
  MbsModel       model;
  MbsStepper     st;
  MbsRunConfig   cfg;
  PetscLogDouble t0, t1;
  PetscInt       nb, nq, nc, nv, n, steps, its, step0, its0;
  char           vrows[64] = "";
  PetscReal      h;
  const char    *type;

  PetscFunctionBegin;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-i", input, sizeof(input), &has_input));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-mbs_view", &view, NULL));
  if (!has_input) {
    PetscBool helpflg;
    PetscCall(PetscOptionsHasHelp(NULL, &helpflg));
    if (helpflg) {
      PetscCall(MbsSchemeList(PETSC_COMM_WORLD, NULL));
      PetscFunctionReturn(0);
    }
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT,
            "no input file: run as gglmbs -i input.yaml (gglmbs -help lists the options)");
  }
  PetscCall(MbsModelCreate(PETSC_COMM_WORLD, model_out));
  model = *model_out;
  PetscCall(MbsRunConfigSetDefaults(&cfg));
  PetscCall(MbsModelLoadYAML(model, input, &cfg));
  {
    PetscInt64 limit; /* read (and its value checked) also for a model that no generator sized against it */
    PetscCall(MbsModelGetMemoryLimit(model, &limit));
  }
  PetscCall(CheckInterrupted("reading the input"));
  PetscCall(MbsModelSetUp(model));
  PetscCall(CheckInterrupted("setting up the model"));
  PetscCall(MbsStepperCreate(model, st_out));
  st = *st_out;
  PetscCall(MbsStepperSetRunConfig(st, &cfg));
  {
    /* Progress lines on stderr when a person watches (a terminal), unless -mbs_progress says otherwise;
       logs, pipes and test runs stay quiet. */
    PetscBool   set;
    PetscMPIInt tty = isatty(STDERR_FILENO);
    PetscCallMPI(MPI_Bcast(&tty, 1, MPI_INT, 0, PETSC_COMM_WORLD));
    PetscCall(PetscOptionsHasName(NULL, NULL, "-mbs_progress", &set));
    if (tty && !set) PetscCall(PetscOptionsSetValue(NULL, "-mbs_progress", "1"));
  }
  /* retried steps and partial restarts are reported on stdout unless -mbs_report says where */
  PetscCall(MbsStepperSetReportViewer(st, PETSC_VIEWER_STDOUT_WORLD));
  PetscCall(MbsStepperSetFromOptions(st));
  PetscCall(MbsStepperSetUp(st));
  PetscCall(CheckInterrupted("setting up the solver"));
  PetscCall(CheckOwnOptions(st));
  {
    /* several ranks pay off from about MBS_APP_MIN_UNKNOWNS_PER_RANK unknowns per rank (docs/solvers.md, "Several
       ranks"); below, say so */
    PetscMPIInt size;
    PetscInt    nx;
    PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
    PetscCall(MbsStepperGetNumUnknowns(st, &nx));
    if (size > 1 && nx < (PetscInt)size * MBS_APP_MIN_UNKNOWNS_PER_RANK)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                            "gglmbs: note: %" PetscInt_FMT " unknowns on %d ranks (%" PetscInt_FMT
                            " per rank); below about %d unknowns per rank a run on fewer ranks is usually faster "
                            "(docs/solvers.md, \"Several ranks\")\n",
                            nx, (int)size, nx / size, MBS_APP_MIN_UNKNOWNS_PER_RANK));
  }
  if (view) {
    PetscCall(MbsModelView(model, NULL));
    PetscCall(MbsStepperView(st, NULL));
  }
  PetscCall(MbsStepperGetStepNumber(st, &step0));
  PetscCall(MbsStepperGetNewtonIterations(st, NULL, &its0));
  PetscCall(PetscTime(&t0));
  PetscCall(MbsStepperSolve(st));
  PetscCall(PetscTime(&t1));

  PetscCall(MbsModelGetNumBodies(model, &nb));
  PetscCall(MbsModelGetSizes(model, NULL, &nq, NULL, &nc));
  PetscCall(MbsModelGetVelocityConstraintSizes(model, NULL, &nv));
  if (nv) PetscCall(PetscSNPrintf(vrows, sizeof(vrows), ", %" PetscInt_FMT " velocity constraints", nv));
  PetscCall(MbsStepperGetNumUnknowns(st, &n));
  PetscCall(MbsStepperGetStepNumber(st, &steps));
  PetscCall(MbsStepperGetNewtonIterations(st, NULL, &its));
  steps -= step0;
  its -= its0;
  PetscCall(MbsStepperGetTimeStep(st, &h));
  PetscCall(MbsStepperGetType(st, &type));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "gglmbs: %s: %" PetscInt_FMT " bodies, %" PetscInt_FMT " coordinates, %" PetscInt_FMT
                        " constraints%s, %" PetscInt_FMT " unknowns; scheme %s, h = %g, %" PetscInt_FMT
                        " steps in %.3f s (%.1f steps/s), mean Newton iterations %.2f%s\n",
                        input, nb, nq, nc, vrows, n, type, (double)h, steps, t1 - t0, steps / PetscMax(t1 - t0, 1e-12),
                        steps ? (double)its / steps : 0.0, step0 ? " (continued from a checkpoint)" : ""));
  {
    /* -mbs_error_if_step_fails 0: the run ended at a step that was not accepted (or whose energy diverged), and
       says so; the exit status is 0 */
    MbsStepReason reason;
    PetscReal     t;
    PetscCall(MbsStepperGetConvergedReason(st, &reason));
    PetscCall(MbsStepperGetTime(st, &t));
    if (reason < 0)
      PetscCall(PetscFPrintf(PETSC_COMM_WORLD, PETSC_STDERR,
                             "gglmbs: the run stopped at step %" PetscInt_FMT " (t = %g) before its final time: %s "
                             "(-mbs_error_if_step_fails 0; -info shows the solver's reason)\n",
                             step0 + steps, (double)t, MbsStepReasons[reason]));
  }
  PetscFunctionReturn(0);
}

/* PETSc's options-left convention: an option given but never read (a typo such as -mbs_sheme, an option of a
   solver that is not in use) is named on stderr after a run that went through, so that it is not silently
   ignored. */
static PetscErrorCode ReportUnusedOptions(void)
{
  PetscInt    n;
  char      **names, **values;
  PetscMPIInt rank;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscOptionsLeftGet(NULL, &n, &names, &values));
  for (PetscInt i = 0; i < n && !rank; i++)
    fprintf(stderr,
            "gglmbs: warning: option -%s%s%s was given but never used (misspelt, or for a solver not in use?)\n",
            names[i], values[i] ? " " : "", values[i] ? values[i] : "");
  PetscCall(PetscOptionsLeftRestore(NULL, &n, &names, &values));
  PetscFunctionReturn(0);
}

/* Objects are freed on every path: a failed run must not leave files open (HDF5 would flush them only
   when MPI finalizes) or memory behind (the sanitizer and valgrind runs check the error paths too). */
static PetscErrorCode Run(void)
{
  MbsModel       model = NULL;
  MbsStepper     st    = NULL;
  PetscErrorCode ierr;

  PetscFunctionBegin;
  ierr = RunWith(&model, &st);
  if (!ierr) {
    PetscCall(MbsStepperDestroy(&st));
    PetscCall(MbsModelDestroy(&model));
    PetscCall(ReportUnusedOptions());
    PetscFunctionReturn(0);
  }
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL)); /* the run's error is the one reported */
  (void)MbsStepperDestroy(&st);
  (void)MbsModelDestroy(&model);
  PetscCall(PetscPopErrorHandler());
  PetscFunctionReturn(ierr);
}

/* A process started without a launcher (no mpirun, srun or hydra variables) is an MPI singleton. Open MPI 4.1
   spends 0.3 s of its initialization there on starting a daemon and probing UCX, for a run that talks to no one
   (docs/solvers.md). Without the daemon ("isolated"), every singleton of a user on the host shares one session
   directory, and one that ends removes it under another that starts (3 failures in 400 runs, 8 at a time): so an
   isolated singleton gets a session directory of its own, removed when it ends (left behind by a process killed
   outright, as Open MPI's own is). A user's own setting of any of these in the environment wins (one in an
   mca-params.conf file does not: the environment overrides it), and a launched run is left alone. Returns the directory
   to remove at the end, or "". */
static void MbsAppSingletonSettings(char session[], size_t len)
{
  static const char *launched[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID"};
  const char        *tmp        = getenv("TMPDIR");

  session[0] = 0;
  for (size_t i = 0; i < sizeof(launched) / sizeof(launched[0]); i++)
    if (getenv(launched[i])) return;
  (void)setenv("OMPI_MCA_pml", "ob1", 0);
  if (getenv("OMPI_MCA_ess_singleton_isolated") || getenv("OMPI_MCA_orte_tmpdir_base")) return;
  if (snprintf(session, len, "%s/gglmbs-mpi.XXXXXX", tmp && tmp[0] ? tmp : "/tmp") >= (int)len || !mkdtemp(session)) {
    session[0] = 0; /* the daemon then, as Open MPI does by default */
    return;
  }
  (void)setenv("OMPI_MCA_orte_tmpdir_base", session, 1);
  (void)setenv("OMPI_MCA_ess_singleton_isolated", "1", 1);
}

/* Exit status: 0, 1 for an error, 128 + the signal number for a run stopped by SIGINT or SIGTERM (the
   shell convention, so a batch script can tell an interrupted run from a failed one). */
int main(int argc, char **argv)
{
  PetscErrorCode ierr;
  int            signum = 0;
  char           session[PETSC_MAX_PATH_LEN];

  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--version")) { /* before MPI and PETSc start: a script may ask on a login node */
      char version[128];
      if (MbsGetVersion(version, sizeof(version))) return 1;
      printf("gglmbs %s\n", version);
      return 0;
    }
  MbsAppSingletonSettings(session, sizeof(session));
  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscCall(PetscPushErrorHandler(MbsAppErrorHandler, NULL));
  PetscCall(MbsInterruptHandlerPush());
  ierr = Run();
  if (ierr == PETSC_ERR_SIG) PetscCall(MbsInterruptPending(NULL, &signum));
  PetscCall(MbsInterruptHandlerPop());
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscFinalize());
  if (session[0]) (void)rmdir(session); /* Open MPI empties it; left if it did not */
  return ierr ? (signum ? 128 + signum : 1) : 0;
}

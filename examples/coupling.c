static const char help[] =
  "A host program coupled to gglmbs: it builds a model through the C API, owns the time loop,\n\
applies time-dependent external forces from its own simulation, steps, and reads the state back.\n\
\n\
The model: a spherical pendulum (a bob on a rod to a ground point) pushed by the host's actuator, and a\n\
free particle under F(t) = F0 sin(omega t) e_x, both under gravity g. The run is repeated with h and h/2;\n\
it prints, on rank 0, one `key = value` per line:\n\
  particle_error_h, particle_error_h2, particle_order  the free particle against its exact solution\n\
      x(t) = x0 + F0/(m omega^2) (omega t - sin(omega t)) e_x + g t^2/2, and the observed order\n\
  work_energy_balance(_rel)  max_n |E_n - E_0 - W_n|, W_n the work of the host's forces along the\n\
      discrete displacements of their points, sum f . (x_{k+1} - x_k): EM's exact energy balance\n\
  mean_velocity_balance_h(2) the same with h f . (v_k + v_{k+1})/2 instead: O(h^2), not exact\n\
  g_max, gv_max              the largest constraint residuals of all monitored states\n\
-mbs_dt sets h (default 0.01); the -coupling_ options below set the rest.\n\n";

#include <gglmbs/gglmbs.h>

static const PetscReal particle_start[3] = {3, 0, 0};

/* What the host simulates besides the multibody system: an actuator force that lags its command with a
   time constant, plus velocity feedback, on the pendulum bob; and a prescribed force on the free particle. */
typedef struct {
  PetscReal gravity[3];
  PetscReal particle_mass, force_amplitude, force_frequency;
  PetscReal actuator_gain, actuator_frequency, actuator_time_constant, actuator_damping;
  PetscReal t_end;
  PetscInt  particle, bob;
} Setup;

/* The forces held constant over the current step, and what the force routine applied with them. */
typedef struct {
  const Setup *setup;
  PetscReal    step_start;   /* t_n of the step being taken */
  PetscReal    bob_force[3]; /* set by the host's loop before each step */
  PetscReal    particle_force[3], applied_h;
  PetscInt     calls; /* force routine calls in the current step */
} HostForces;

/* Collected by the monitor over every state the stepper reports. */
typedef struct {
  PetscInt  calls;
  PetscReal g_max, gv_max;
} ConstraintRecord;

typedef struct {
  char      scheme[64];
  PetscInt  steps, monitor_calls;
  PetscReal particle_error;        /* |x_h(T) - x(T)| of the free particle */
  PetscReal balance;               /* max_n |E_n - E_0 - W_n|, W the work along the displacements */
  PetscReal balance_mean_velocity; /* the same with W the work against the mean velocities */
  PetscReal energy_scale;          /* max_n (T_n + |V_n|) */
  PetscReal g_max, gv_max;
  PetscReal bob[3]; /* final position of the bob */
} RunResult;

static PetscErrorCode ExternalForce(MbsStepper st, PetscReal t, PetscReal h, Vec q, Vec p, Vec F, void *ctx)
{
  HostForces  *host = (HostForces *)ctx;
  const Setup *s    = host->setup;
  MbsModel     model;
  MPI_Comm     comm;
  PetscMPIInt  rank;

  PetscFunctionBeginUser;
  PetscCheck(PetscAbsReal(t - (host->step_start + 0.5 * h)) <= 1e-12 * PetscMax(1.0, t), PETSC_COMM_SELF,
             PETSC_ERR_PLIB, "The force routine expects the mid-time t_n + h/2 = %g, got %g",
             (double)(host->step_start + 0.5 * h), (double)t);
  host->particle_force[0] = s->force_amplitude * PetscSinReal(s->force_frequency * t);
  host->particle_force[1] = 0;
  host->particle_force[2] = 0;
  host->applied_h         = h;
  host->calls++;
  /* MbsModelAddPointForce() adds with ADD_VALUES: each force is added once, here by rank 0 */
  PetscCall(MbsStepperGetModel(st, &model));
  PetscCall(MbsModelGetComm(model, &comm));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    PetscCall(MbsModelAddPointForce(model, s->particle, NULL, host->particle_force, F));
    PetscCall(MbsModelAddPointForce(model, s->bob, NULL, host->bob_force, F));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode RecordConstraints(MbsStepper st, PetscInt step, PetscReal t, void *ctx)
{
  ConstraintRecord *rec = (ConstraintRecord *)ctx;
  MbsDiagnostics    d;

  PetscFunctionBeginUser;
  PetscCall(MbsStepperComputeDiagnostics(st, &d));
  rec->calls++;
  rec->g_max  = PetscMax(rec->g_max, d.g_max);
  rec->gv_max = PetscMax(rec->gv_max, d.gv_max);
  PetscFunctionReturn(0);
}

/* A spherical pendulum of length 1 released at 0.6 rad from the vertical with a horizontal velocity
   normal to the rod, and a free particle at rest, in C instead of YAML. */
static PetscErrorCode BuildModel(Setup *s, MbsModel *model)
{
  const PetscReal length = 1.0, angle = 0.6;
  const PetscReal ground[3] = {0, 0, 0}, bob_x[3] = {length * PetscSinReal(angle), 0, -length * PetscCosReal(angle)},
                  bob_v[3] = {0, 1.2, 0};
  const PetscReal rest[3]  = {0, 0, 0};

  PetscFunctionBeginUser;
  PetscCall(MbsModelCreate(PETSC_COMM_WORLD, model));
  PetscCall(MbsModelAddParticle(*model, "bob", 1.0, bob_x, bob_v, &s->bob));
  PetscCall(MbsModelAddRod(*model, MBS_GROUND, ground, s->bob, NULL, length, NULL));
  PetscCall(MbsModelAddParticle(*model, "particle", s->particle_mass, particle_start, rest, &s->particle));
  PetscCall(MbsModelSetGravity(*model, s->gravity));
  PetscCall(MbsModelSetUp(*model));
  PetscFunctionReturn(0);
}

static void ExactParticlePosition(const Setup *s, PetscReal t, PetscReal x[3])
{
  const PetscReal w = s->force_frequency;

  for (int i = 0; i < 3; i++) x[i] = particle_start[i] + 0.5 * s->gravity[i] * t * t;
  x[0] += s->force_amplitude / (s->particle_mass * w * w) * (w * t - PetscSinReal(w * t));
}

static PetscReal Dot3(const PetscReal a[3], const PetscReal b[3])
{
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/* One coupled run with step size h (halving = 0) or h/2 (halving = 1). The host owns the time loop. */
static PetscErrorCode RunCoupled(Setup *s, PetscInt halving, PetscBool view, PetscReal *h_used, RunResult *r)
{
  MbsModel         model;
  MbsStepper       st;
  MbsDiagnostics   d;
  HostForces       host = {0};
  ConstraintRecord rec  = {0, 0, 0};
  PetscReal        h, E0, work = 0, work_mean_velocity = 0, actuator = 0, x[3], exact[3];
  const char      *scheme;

  PetscFunctionBeginUser;
  PetscCall(BuildModel(s, &model));
  PetscCall(MbsStepperCreate(model, &st));
  PetscCall(MbsStepperSetType(st, MBSSCHEMEEM));
  PetscCall(MbsStepperSetTimeStep(st, 0.01));
  PetscCall(MbsStepperSetFinalTime(st, s->t_end)); /* for MbsStepperView() and monitors: the loop is the host's */
  PetscCall(MbsStepperSetFromOptions(st));         /* -mbs_scheme, -mbs_dt, -snes_*, ... */
  PetscCall(MbsStepperGetTimeStep(st, &h));
  if (halving) h *= 0.5;
  PetscCall(MbsStepperSetTimeStep(st, h));
  host.setup = s;
  PetscCall(MbsStepperSetExternalForce(st, ExternalForce, &host));
  PetscCall(MbsStepperMonitorSet(st, RecordConstraints, &rec, NULL));
  PetscCall(MbsStepperSetUp(st));
  if (view) PetscCall(MbsStepperView(st, NULL));

  PetscCall(MbsStepperComputeDiagnostics(st, &d));
  E0                       = d.E;
  r->balance               = 0;
  r->balance_mean_velocity = 0;
  r->energy_scale          = d.T + PetscAbsReal(d.V);
  r->steps                 = (PetscInt)PetscFloorReal(s->t_end / h + 0.5);
  for (PetscInt n = 0; n < r->steps; n++) {
    const PetscReal t = n * h, decay = PetscExpReal(-h / s->actuator_time_constant);
    PetscReal       bob_v0[3], bob_v1[3], particle_v0[3], particle_v1[3], bob_x0[3], bob_x1[3], particle_x0[3],
      particle_x1[3];

    /* the host's own simulation: the actuator relaxes towards its command over the step (exactly, for a
       command held at its mid-step value), and damps with the bob's velocity at the step start */
    actuator = s->actuator_gain * PetscSinReal(s->actuator_frequency * (t + 0.5 * h)) * (1 - decay) + actuator * decay;
    PetscCall(MbsStepperGetPointVelocity(st, s->bob, NULL, bob_v0));
    PetscCall(MbsStepperGetPointVelocity(st, s->particle, NULL, particle_v0));
    PetscCall(MbsStepperGetPointPosition(st, s->bob, NULL, bob_x0));
    PetscCall(MbsStepperGetPointPosition(st, s->particle, NULL, particle_x0));
    for (int i = 0; i < 3; i++) host.bob_force[i] = -s->actuator_damping * bob_v0[i];
    host.bob_force[1] += actuator;
    host.step_start = t;
    host.calls      = 0;

    PetscCall(MbsStepperStep(st));

    PetscCheck(host.calls == 1 && host.applied_h == h, PETSC_COMM_WORLD, PETSC_ERR_PLIB,
               "Step %" PetscInt_FMT ": the force routine ran %" PetscInt_FMT
               " times (h = %g); the work account needs one call per step of size h (no -mbs_adapt)",
               n, host.calls, (double)host.applied_h);
    PetscCall(MbsStepperGetPointVelocity(st, s->bob, NULL, bob_v1));
    PetscCall(MbsStepperGetPointVelocity(st, s->particle, NULL, particle_v1));
    PetscCall(MbsStepperGetPointPosition(st, s->bob, NULL, bob_x1));
    PetscCall(MbsStepperGetPointPosition(st, s->particle, NULL, particle_x1));
    /* EM's energy balance is E_{n+1} - E_n = F . (q_{n+1} - q_n) exactly: the work of the constant force
       along the displacement of its point. Against the mean velocity, h F . M^-1 (p_n + p_{n+1})/2, it
       misses h F . M^-1 G^T gamma, the GGL correction of the position update. */
    for (int i = 0; i < 3; i++) {
      work += host.bob_force[i] * (bob_x1[i] - bob_x0[i]) + host.particle_force[i] * (particle_x1[i] - particle_x0[i]);
      work_mean_velocity += h * (host.bob_force[i] * 0.5 * (bob_v0[i] + bob_v1[i]) +
                                 host.particle_force[i] * 0.5 * (particle_v0[i] + particle_v1[i]));
    }
    PetscCall(MbsStepperComputeDiagnostics(st, &d));
    r->balance               = PetscMax(r->balance, PetscAbsReal(d.E - E0 - work));
    r->balance_mean_velocity = PetscMax(r->balance_mean_velocity, PetscAbsReal(d.E - E0 - work_mean_velocity));
    r->energy_scale          = PetscMax(r->energy_scale, d.T + PetscAbsReal(d.V));
  }

  PetscCall(MbsStepperGetPointPosition(st, s->particle, NULL, x));
  ExactParticlePosition(s, r->steps * h, exact);
  for (int i = 0; i < 3; i++) x[i] -= exact[i];
  r->particle_error = PetscSqrtReal(Dot3(x, x));
  PetscCall(MbsStepperGetPointPosition(st, s->bob, NULL, r->bob));
  r->monitor_calls = rec.calls;
  r->g_max         = rec.g_max;
  r->gv_max        = rec.gv_max;
  *h_used          = h;
  PetscCall(MbsStepperGetType(st, &scheme));
  PetscCall(PetscStrncpy(r->scheme, scheme, sizeof(r->scheme)));
  PetscCall(MbsStepperDestroy(&st));
  PetscCall(MbsModelDestroy(&model));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  Setup       s = {{0, 0, -9.81}, 2.0, 1.0, 2 * PETSC_PI, 2.0, 3.0, 0.2, 0.5, 2.0, -1, -1};
  RunResult   run[2];
  PetscReal   h[2];
  PetscInt    ng   = 3;
  PetscBool   view = PETSC_FALSE, flg;
  PetscMPIInt size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, help));
  PetscOptionsBegin(PETSC_COMM_WORLD, "coupling_", "Coupling example", NULL);
  PetscCall(PetscOptionsReal("-t_end", "Final time", NULL, s.t_end, &s.t_end, NULL));
  PetscCall(PetscOptionsReal("-force_amplitude", "Amplitude F0 of the force on the free particle", NULL,
                             s.force_amplitude, &s.force_amplitude, NULL));
  PetscCall(PetscOptionsReal("-force_frequency", "Angular frequency omega of the force on the free particle", NULL,
                             s.force_frequency, &s.force_frequency, NULL));
  PetscCall(PetscOptionsRealArray("-gravity", "Gravity gx,gy,gz", NULL, s.gravity, &ng, &flg));
  PetscCheck(!flg || ng == 3, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT,
             "-coupling_gravity expects 3 components gx,gy,gz, got %" PetscInt_FMT, ng);
  PetscCall(PetscOptionsReal("-actuator_gain", "Amplitude of the actuator command on the bob", NULL, s.actuator_gain,
                             &s.actuator_gain, NULL));
  PetscCall(PetscOptionsReal("-actuator_damping", "Velocity feedback of the actuator", NULL, s.actuator_damping,
                             &s.actuator_damping, NULL));
  PetscCall(PetscOptionsBool("-view", "Print the stepper set-up", NULL, view, &view, NULL));
  PetscOptionsEnd();
  PetscCheck(s.t_end > 0 && s.force_frequency > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-coupling_t_end and -coupling_force_frequency must be positive");

  for (PetscInt k = 0; k < 2; k++) PetscCall(RunCoupled(&s, k, (PetscBool)(view && k == 0), &h[k], &run[k]));

  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));

  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "scheme = %s\n", run[0].scheme));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "ranks = %d\n", size));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "h = %.6e\n", (double)h[0]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "t_end = %.6e\n", (double)s.t_end));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "steps_h = %" PetscInt_FMT "\n", run[0].steps));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "steps_h2 = %" PetscInt_FMT "\n", run[1].steps));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "monitor_calls_h = %" PetscInt_FMT "\n", run[0].monitor_calls));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "monitor_calls_h2 = %" PetscInt_FMT "\n", run[1].monitor_calls));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "particle_error_h = %.6e\n", (double)run[0].particle_error));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "particle_error_h2 = %.6e\n", (double)run[1].particle_error));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "particle_order = %.4f\n",
                        (double)PetscLog2Real(run[0].particle_error / run[1].particle_error)));
  PetscCall(
    PetscPrintf(PETSC_COMM_WORLD, "energy_scale = %.6e\n", (double)PetscMax(run[0].energy_scale, run[1].energy_scale)));
  PetscCall(
    PetscPrintf(PETSC_COMM_WORLD, "work_energy_balance = %.3e\n", (double)PetscMax(run[0].balance, run[1].balance)));
  PetscCall(PetscPrintf(
    PETSC_COMM_WORLD, "work_energy_balance_rel = %.3e\n",
    (double)(PetscMax(run[0].balance, run[1].balance) / PetscMax(run[0].energy_scale, run[1].energy_scale))));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "mean_velocity_balance_h = %.3e\n", (double)run[0].balance_mean_velocity));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "mean_velocity_balance_h2 = %.3e\n", (double)run[1].balance_mean_velocity));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "g_max = %.3e\n", (double)PetscMax(run[0].g_max, run[1].g_max)));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "gv_max = %.3e\n", (double)PetscMax(run[0].gv_max, run[1].gv_max)));
  for (int i = 0; i < 3; i++)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "bob_%c = %.8f\n", 'x' + i, (double)run[1].bob[i]));

  PetscCall(PetscFinalize());
  return 0;
}

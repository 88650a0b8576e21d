/* The memory a model will need, checked before it is built: the estimate and the limit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/modelimpl.h"
#include "model/memory.h"

/*
  Memory estimate of a model and of one step's solve with the default scheme (em) and solver (LU),
  in bytes (docs/input.md, "Model size and memory"; measured against docs/robustness.md):

    M = C_base + C_obj (bodies + elements) ranks + f (C_unk n + C_nnz nnz (+ C_2d log2(n) nnz: nets, meshes by LU))

  (f = MBS_MEM_KLU on one rank for a model whose bodies all come from chain generators, which KLU factors, else 1)

  n = 2 nq + 2 ncon are the unknowns (q, p, lambda, gamma), nnz = 16 sum_bodies k_b + 6.2 sum_elements
  k_e (r_e + 1) the Jacobian's nonzeros (k: coordinates of a body or of an element's bodies, r: its
  constraint rows), fitted to the Jacobians PETSc assembled for particle chains, rigid chains and nets
  (within 15 %) when they held the element blocks whole; since they leave out the entries zero by construction (a
  chain 66 nonzeros per particle, not 122) the estimate is 8-62 % above the peaks (docs/robustness.md), not refitted.
  The per-unknown and per-nonzero costs (vectors, the matrix, the LU factor and its workspace) were fitted, with C_obj
  from the structs' sizes (massif: 490 bytes per body and element of a chain touched, 800 allocated), to the peak RSS of
  a particle chain of 10^5 and a rigid chain of 10^4 links, the fill of a 2-D graph to a 50 x 50 net (28 Nov 2026,
  docs/robustness.md: within 1 % of those and of a chain of 10^4 then; 29 % above a chain of 1.5 10^6 factored by
  MUMPS). A model built whole (the C API's default) is on every rank (C_obj per rank) before the set-up distributes it;
  one built in two passes (MbsModelBeginGraph(), the YAML reader on several ranks) is held once over the ranks, and
  every rank keeps the graph and the layout's per-body arrays (C_graph: a body's type, owner, storage, global and local
  offsets, 34 bytes, and an element's info, 24 bytes; 36 per body and element of a chain). The vi-* schemes add a
  velocity per coordinate: about 1.3 times the estimate. Nets and meshes of particles from MBS_SCHUR_MIN_UNKNOWNS on are
  solved by the Schur-AMG preconditioner by default, without fill: the formula without the C_2d term is 16 % above their
  peak RSS (1000 x 1000 net, one rank: 19.3 GiB estimated, 16.7 GiB measured; 300 x 300: 1.78 / 1.54 GiB).
*/
#define MBS_MEM_BASE    (48.0 * 1048576.0) /* PETSc, MPI and the program before any model */
#define MBS_MEM_OBJECT  500.0  /* a body or element: structs (280 and 592 bytes), name, label, layout, graph */
#define MBS_MEM_GRAPH   36.0   /* a body or element built in two passes: what every rank keeps of it */
#define MBS_MEM_UNKNOWN 1040.0 /* per unknown: vectors (stepper, SNES, line search) and the factor's workspace */
#define MBS_MEM_NONZERO 42.0   /* per Jacobian nonzero: the matrix, its place map, the factor */
#define MBS_MEM_FILL_2D 4.0    /* per Jacobian nonzero and log2 n: LU fill of a 2-D graph */
/* One rank's KLU (chains of particles, src/stepper/klu.c) against UMFPACK: the per-unknown and per-nonzero costs times
   this (peak RSS, one rank, 2 steps from rest, with the Jacobians' structural zeros left out, 29 Nov 2026: chains of
   10^4, 10^5 and 10^6 particles 116 MiB, 774 MiB and 8.33 GiB, estimated 139 MiB, 961 MiB and 8.97 GiB; the nonzero
   count above is that of the dense element blocks, 122 per particle where the Jacobian has 66). Not on several ranks:
   the interface LU's ranks hold more than one rank's KLU (a chain of 10^5 on 2 ranks: 2 x 582 MiB, against 1.46 GiB
   estimated without this factor). */
#define MBS_MEM_KLU 0.60

void MbsModelSizeAddBodies(MbsModelSize *s, PetscReal count, PetscInt blocks)
{
  const PetscReal k = 3.0 * (PetscReal)blocks;

  s->nbodies += count;
  if (blocks > 1) s->nrigid += count;
  s->nelems += count; /* gravity, added at set-up: a linear potential, no Jacobian entries */
  s->nq += k * count;
  s->nnz += 16.0 * k * count;
}

void MbsModelSizeAddElements(MbsModelSize *s, PetscReal count, PetscInt ncoord, PetscInt ncon)
{
  const PetscReal k = (PetscReal)ncoord, r = (PetscReal)ncon;

  s->nelems += count;
  s->ncon += r * count;
  s->nnz += 6.2 * k * (r + 1.0) * count;
}
void MbsModelSizeChain(MbsModelSize *s, PetscReal count)
{
  s->nchain += count;
  MbsModelSizeAddBodies(s, count, 1);
  MbsModelSizeAddElements(s, count, 6, 1);
}

void MbsModelSizeRigidChain(MbsModelSize *s, PetscReal count, MbsChainJointType joint)
{
  MbsModelSizeAddBodies(s, count, 4);
  MbsModelSizeAddElements(s, count, 12, 6);
  MbsModelSizeAddElements(s, count, 24, joint == MBS_CHAIN_JOINT_REVOLUTE ? 5 : 3);
}

void MbsModelSizeNet(MbsModelSize *s, PetscReal nx, PetscReal ny, PetscReal nfixed)
{
  MbsModelSizeAddBodies(s, nx * ny, 1);
  MbsModelSizeAddElements(s, (nx - 1) * ny + nx * (ny - 1), 6, 1);
  MbsModelSizeAddElements(s, nfixed, 3, 3);
  s->two_dimensional = PETSC_TRUE;
}

/* A beam: rigid nodes, beam elements between two of them, welds at the corners of a polyline, and the supports'
   constraint rows (a weld 6, a fixed point 3) */
void MbsModelSizeBeam(MbsModelSize *s, PetscReal nnodes, PetscReal nelems, PetscReal ncorners, PetscReal nsupport_rows)
{
  MbsModelSizeAddBodies(s, nnodes, 4);
  MbsModelSizeAddElements(s, nnodes, 12, 6);
  MbsModelSizeAddElements(s, nelems, 24, 0);
  MbsModelSizeAddElements(s, ncorners, 24, 6);
  MbsModelSizeAddElements(s, 1, 12, (PetscInt)nsupport_rows);
}

void MbsModelSizeRodNetwork(MbsModelSize *s, PetscReal nnodes, PetscReal nedges, PetscReal nfixed)
{
  MbsModelSizeAddBodies(s, nnodes, 1);
  MbsModelSizeAddElements(s, nedges, 6, 1);
  MbsModelSizeAddElements(s, nfixed, 3, 3);
  s->two_dimensional = PETSC_TRUE;
}

/* A size such as 4GiB, 512M, 2.5e9 or 0 (no limit): binary units k, M, G, T with or without "iB",
   decimal ones as kB, MB, GB, TB. */
static PetscBool ParseMemorySize(const char text[], PetscReal *bytes)
{
  static const struct {
    const char *unit;
    PetscReal   factor;
  } units[] = {
    {"", 1.0},
    {"B", 1.0},
    {"k", 1024.0},
    {"K", 1024.0},
    {"KiB", 1024.0},
    {"kiB", 1024.0},
    {"M", 1048576.0},
    {"MiB", 1048576.0},
    {"G", 1073741824.0},
    {"GiB", 1073741824.0},
    {"T", 1099511627776.0},
    {"TiB", 1099511627776.0},
    {"kB", 1e3},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
  };
  char  *end;
  double v = strtod(text, &end);

  if (end == text || !(v >= 0) || !isfinite(v)) return PETSC_FALSE;
  while (*end == ' ') end++;
  for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
    if (!strcmp(end, units[i].unit)) {
      *bytes = (PetscReal)v * units[i].factor;
      return (PetscBool)(*bytes < 1e30);
    }
  return PETSC_FALSE;
}

/* The limit in bytes (0: none) and where it comes from. */
static PetscErrorCode GetMemoryLimit(MbsModel model, PetscReal *limit, const char **source)
{
  char      text[64];
  PetscBool set;

  PetscFunctionBegin;
  if (model->memory_limit_set) {
    *limit  = (PetscReal)model->memory_limit;
    *source = "MbsModelSetMemoryLimit()";
    PetscFunctionReturn(0);
  }
  PetscCall(PetscOptionsGetString(((PetscObject)model)->options, ((PetscObject)model)->prefix, "-mbs_memory_limit",
                                  text, sizeof(text), &set));
  if (set) {
    PetscCheck(ParseMemorySize(text, limit), PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONG,
               "-mbs_memory_limit: expected a size in bytes such as 4GiB, 512MiB, 8e9 or 0 (no limit), got '%s'", text);
    *source = "-mbs_memory_limit";
    PetscFunctionReturn(0);
  }
  if (!model->memory_physical) {
    /* The estimate covers all ranks, so the limit is the memory of all their nodes: each node's first
       rank adds its own (sysconf), and every rank gets the same sum, so all ranks decide alike. */
    MPI_Comm    node;
    PetscMPIInt node_rank;
    PetscReal   mine = 0;
    PetscCallMPI(
      MPI_Comm_split_type(PetscObjectComm((PetscObject)model), MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    PetscCallMPI(MPI_Comm_rank(node, &node_rank));
    PetscCallMPI(MPI_Comm_free(&node));
    if (!node_rank) {
      const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
      mine = pages > 0 && page > 0 ? (PetscReal)pages * (PetscReal)page : 0;
    }
    PetscCall(
      MPIU_Allreduce(&mine, &model->memory_physical, 1, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)model)));
  }
  *limit  = model->memory_physical;
  *source = "the physical memory of the ranks' machines; -mbs_memory_limit";
  PetscFunctionReturn(0);
}

/* Bytes as "23 GiB", "1.2e3 GiB", "640 MiB". */
static void FormatBytes(PetscReal bytes, char out[], size_t len)
{
  const PetscReal gib = 1073741824.0, mib = 1048576.0;

  if (bytes >= 1000 * gib)
    snprintf(out, len, "%.1e GiB", (double)(bytes / gib));
  else if (bytes >= gib)
    snprintf(out, len, "%.3g GiB", (double)(bytes / gib));
  else
    snprintf(out, len, "%.3g MiB", (double)(bytes / mib));
}

/* The counts of the model's bodies and elements, continued from those counted before (model->sized). */
static PetscErrorCode ModelSize(MbsModel model, MbsModelSize *s)
{
  PetscFunctionBegin;
  PetscCall(PetscMemzero(s, sizeof(*s)));
  s->nbodies         = model->sized[0];
  s->nelems          = model->sized[1];
  s->nq              = model->sized[2];
  s->ncon            = model->sized[3];
  s->nnz             = model->sized[4];
  s->nrigid          = model->sized[5];
  s->two_dimensional = model->sized_2d;
  s->nchain          = (PetscReal)model->chain_bodies;
  for (PetscInt b = model->sized_bodies; b < model->nbodies; b++)
    MbsModelSizeAddBodies(s, 1, (PetscInt)model->body_type[b]);
  for (PetscInt e = model->sized_elems; e < model->nelems; e++) { /* none after a set-up on several ranks */
    const MbsElementInfo el = MbsModelElementInfo(model, e);
    PetscInt             nq = 0;

    for (int s = 0; s < 2; s++) nq += el.body[s] >= 0 ? 3 * (PetscInt)model->body_type[el.body[s]] : 0;
    if (el.kernel != &MbsElemKernelGravity) MbsModelSizeAddElements(s, 1, nq, el.kernel->ncon + el.kernel->nvcon);
  }
  model->sized_bodies = model->nbodies;
  model->sized_elems  = model->nelems;
  model->sized[0]     = s->nbodies;
  model->sized[1]     = s->nelems;
  model->sized[2]     = s->nq;
  model->sized[3]     = s->ncon;
  model->sized[4]     = s->nnz;
  model->sized[5]     = s->nrigid;
  PetscFunctionReturn(0);
}

/* Whether a step's solve is an LU, whose fill on a 2-D graph the estimate adds. The stepper's default for a net or mesh
   of particles of at least MBS_SCHUR_MIN_UNKNOWNS unknowns is the Schur-AMG preconditioner, which has none; the options
   that make it an LU there are read from the options database with the model's prefix: -mbs_solver lu, a factorization
   package, the static scheme, eliminated redundant constraints (velocity constraints, which also do, are not seen) */
static PetscErrorCode SolvesByLU(MbsModel model, const MbsModelSize *s, PetscBool *lu)
{
  PetscOptions options    = ((PetscObject)model)->options;
  const char  *prefix     = ((PetscObject)model)->prefix;
  char         solver[16] = "", scheme[16] = "";
  PetscBool    set, flag, package, redundant = PETSC_FALSE;

  PetscFunctionBegin;
  *lu = (PetscBool) !(s->two_dimensional && s->nrigid == 0 && 2 * s->nq + 2 * s->ncon >= MBS_SCHUR_MIN_UNKNOWNS);
  PetscCall(PetscOptionsGetString(options, prefix, "-mbs_solver", solver, sizeof(solver), &set));
  if (set) {
    PetscCall(PetscStrcasecmp(solver, "lu", &flag));
    if (flag) *lu = PETSC_TRUE;
    PetscCall(PetscStrcasecmp(solver, "schur", &flag));
    if (flag) *lu = PETSC_FALSE;
    PetscFunctionReturn(0);
  }
  PetscCall(PetscOptionsHasName(options, prefix, "-pc_factor_mat_solver_type", &package));
  PetscCall(PetscOptionsGetString(options, prefix, "-mbs_scheme", scheme, sizeof(scheme), &set));
  PetscCall(PetscStrcasecmp(scheme, "static", &flag));
  PetscCall(PetscOptionsGetBool(options, prefix, "-mbs_allow_redundant_constraints", &redundant, NULL));
  if (package || (set && flag) || redundant) *lu = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* Whether one rank's KLU solves the steps: the stepper's default for a chain of particles on one rank (a narrow body
   graph, src/stepper/stepper.c: MbsStepperUseKLU()), unless the options choose another solver (-mbs_klu 0, a package,
   -mbs_solver other than lu). Only a model whose bodies all come from chain generators counts: bodies added one by
   one can make a graph of any width, which UMFPACK, MUMPS or the Schur-AMG preconditioner would solve. */
static PetscErrorCode SolvesByKLU(MbsModel model, const MbsModelSize *s, PetscBool *klu)
{
  PetscOptions options    = ((PetscObject)model)->options;
  const char  *prefix     = ((PetscObject)model)->prefix;
  char         solver[16] = "";
  PetscBool    set, flag = PETSC_TRUE, package;

  PetscFunctionBegin;
  *klu =
    (PetscBool)(model->size == 1 && !s->two_dimensional && s->nrigid == 0 && s->nbodies > 0 && s->nchain >= s->nbodies);
  if (!*klu) PetscFunctionReturn(0);
  PetscCall(PetscOptionsGetBool(options, prefix, "-mbs_klu", &flag, &set));
  PetscCall(PetscOptionsHasName(options, prefix, "-pc_factor_mat_solver_type", &package));
  if ((set && !flag) || package) *klu = PETSC_FALSE;
  PetscCall(PetscOptionsGetString(options, prefix, "-mbs_solver", solver, sizeof(solver), &set));
  if (set) {
    PetscBool lu, automatic;
    PetscCall(PetscStrcasecmp(solver, "lu", &lu));
    PetscCall(PetscStrcasecmp(solver, "auto", &automatic));
    if (!lu && !automatic) *klu = PETSC_FALSE;
  }
  PetscFunctionReturn(0);
}

static PetscReal EstimateBytes(const MbsModelSize *s, PetscMPIInt nranks, PetscBool whole, PetscBool lu, PetscBool klu)
{
  const PetscReal n    = 2 * s->nq + 2 * s->ncon,
                  fill = s->two_dimensional && lu ? MBS_MEM_FILL_2D * PetscLog2Real(PetscMax(n, 2)) : 0,
                  objs = s->nbodies + s->nelems, solve = klu ? MBS_MEM_KLU : 1.0;

  return MBS_MEM_BASE + (whole ? MBS_MEM_OBJECT * objs * nranks : (MBS_MEM_OBJECT + MBS_MEM_GRAPH * nranks) * objs) +
         solve * (MBS_MEM_UNKNOWN * n + (MBS_MEM_NONZERO + fill) * s->nnz);
}

PetscErrorCode MbsModelCheckSize(MbsModel model, const MbsModelSize *added, PetscBool *fits, char why[], size_t len)
{
  MbsModelSize s;
  PetscReal    n, nnz, bytes, limit;
  PetscBool    lu, klu;
  const char  *source;
  char         need[32], have[32];

  PetscFunctionBegin;
  *fits = PETSC_TRUE;
  if (len) why[0] = 0;
  if (model->build == MBS_BUILD_LOCAL) PetscFunctionReturn(0); /* the graph pass checked the same additions */
  PetscCall(ModelSize(model, &s));
  s.nbodies += added->nbodies;
  s.nelems += added->nelems;
  s.nq += added->nq;
  s.ncon += added->ncon;
  s.nnz += added->nnz;
  s.nrigid += added->nrigid;
  s.two_dimensional = (PetscBool)(s.two_dimensional || added->two_dimensional);
  s.nchain += added->nchain;
  PetscCall(GetMemoryLimit(model, &limit, &source));
  PetscCall(SolvesByLU(model, &s, &lu));
  PetscCall(SolvesByKLU(model, &s, &klu));
  bytes = EstimateBytes(&s, model->size, (PetscBool)(model->build == MBS_BUILD_WHOLE), lu, klu);
  if (limit > 0 && !(bytes <= limit)) {
    *fits = PETSC_FALSE;
    FormatBytes(bytes, need, sizeof(need));
    FormatBytes(limit, have, sizeof(have));
    snprintf(why, len, "need about %s (estimate), the limit is %s (%s)", need, have, source);
    PetscFunctionReturn(0);
  }
  n   = 3 * s.nq + 2 * s.ncon; /* the largest scheme's unknowns */
  nnz = 1.5 * s.nnz;
  if (n > (PetscReal)PETSC_MAX_INT || nnz > (PetscReal)PETSC_MAX_INT ||
      s.nbodies + s.nelems > (PetscReal)PETSC_MAX_INT) {
    *fits = PETSC_FALSE;
    snprintf(why, len,
             "give about %.3g unknowns and %.3g Jacobian nonzeros, more than PetscInt holds (%" PetscInt_FMT
             "; PETSc configured with 64-bit indices would be needed)",
             (double)n, (double)nnz, PETSC_MAX_INT);
  }
  if (*fits) model->sized_2d = s.two_dimensional; /* the addition goes ahead: later estimates keep its fill */
  PetscFunctionReturn(0);
}

/*@C
  MbsModelSetMemoryLimit - Sets the memory a model and a step's solve may need, checked by the generators
  (`MbsModelAddChain()`, `MbsModelAddRigidChain()`, `MbsModelAddNet()`, `MbsModelAddRodNetwork()`) and by
  `MbsModelLoadYAML()` before they allocate

  Logically Collective

  Input Parameters:
+ model - the model
- bytes - the limit in bytes; 0 for none; `PETSC_DEFAULT` for the default

  Options Database Key:
. -mbs_memory_limit <size> - the limit when no setter call gave one, e.g. 4GiB, 512MiB, 8e9, or 0 (none)

  Notes:
  The default is the physical memory of the machines (nodes) the ranks run on (sysconf on each node, summed). The
estimate, documented in docs/input.md, counts the model (held by every rank when built whole, once over the ranks when
built in two passes, `MbsModelBeginGraph()`) and one step's solve of the largest scheme:
the unknowns, the Jacobian's nonzeros and, for nets and meshes solved by LU (`-mbs_solver`), an LU fill estimate. A
  model over the limit is refused with both numbers, before anything is allocated; so is one whose unknowns or Jacobian
  nonzeros do not fit `PetscInt`.

  Level: intermediate

.seealso: `MbsModelGetMemoryLimit()`, `MbsModelEstimateMemory()`, `MbsModelLoadYAML()`
@*/
PetscErrorCode MbsModelSetMemoryLimit(MbsModel model, PetscInt64 bytes)
{
  PetscFunctionBegin;
  PetscCheck(model, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Null MbsModel");
  if (bytes == PETSC_DEFAULT) {
    model->memory_limit_set = PETSC_FALSE;
    model->memory_limit     = 0;
    PetscFunctionReturn(0);
  }
  PetscCheck(bytes >= 0, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE,
             "The memory limit must be a number of bytes, 0 (none) or PETSC_DEFAULT, got %" PetscInt64_FMT, bytes);
  model->memory_limit_set = PETSC_TRUE;
  model->memory_limit     = bytes;
  PetscFunctionReturn(0);
}

/*@C
  MbsModelGetMemoryLimit - Gets the memory limit in force: the one set with `MbsModelSetMemoryLimit()`,
  else -mbs_memory_limit, else the physical memory of the ranks' machines

  Collective (reads the options database)

  Input Parameter:
. model - the model

  Output Parameter:
. bytes - the limit in bytes, 0 for none

  Level: intermediate

.seealso: `MbsModelSetMemoryLimit()`, `MbsModelEstimateMemory()`
@*/
PetscErrorCode MbsModelGetMemoryLimit(MbsModel model, PetscInt64 *bytes)
{
  PetscReal   limit;
  const char *source;

  PetscFunctionBegin;
  PetscCall(GetMemoryLimit(model, &limit, &source));
  *bytes = (PetscInt64)PetscMin(limit, 9.2e18);
  PetscFunctionReturn(0);
}

/*@C
  MbsModelEstimateMemory - Estimates the memory the model and one step's solve need, the estimate that
  `MbsModelSetMemoryLimit()` checks

  Not Collective

  Input Parameter:
. model - the model

  Output Parameter:
. bytes - the estimate in bytes

  Level: intermediate

.seealso: `MbsModelSetMemoryLimit()`, `MbsModelGetMemoryLimit()`
@*/
PetscErrorCode MbsModelEstimateMemory(MbsModel model, PetscReal *bytes)
{
  MbsModelSize s;
  PetscBool    lu, klu;

  PetscFunctionBegin;
  PetscCall(ModelSize(model, &s));
  PetscCall(SolvesByLU(model, &s, &lu));
  PetscCall(SolvesByKLU(model, &s, &klu));
  *bytes = EstimateBytes(&s, model->size, (PetscBool)(model->build == MBS_BUILD_WHOLE), lu, klu);
  PetscFunctionReturn(0);
}

PetscErrorCode MbsModelCountSize_Private(MbsModel model)
{
  MbsModelSize s;

  PetscFunctionBegin;
  PetscCall(ModelSize(model, &s));
  PetscFunctionReturn(0);
}

/* The generators refuse a model over the limit before they allocate (the YAML reader checks first, to
   point at the count in the file). */
PetscErrorCode MbsModelCheckGeneratorSize(MbsModel model, const char what[], const char name[],
                                          const MbsModelSize *added)
{
  PetscBool fits;
  char      why[256];

  PetscFunctionBegin;
  PetscCall(MbsModelCheckSize(model, added, &fits, why, sizeof(why)));
  PetscCheck(fits, PetscObjectComm((PetscObject)model), PETSC_ERR_MEM, "%s '%s': the model would not fit: %s", what,
             name, why);
  PetscFunctionReturn(0);
}

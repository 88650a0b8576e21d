/* Outputs: the registry of writers, the stepper's list of them, and the points at which they are called. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <gglmbs/gglmbs.h>
#include "stepper/stepperimpl.h"

/*@C
  MbsOutputRegister - Adds an output format, attachable with MbsStepperAddOutput(). The built-in ones are
  MBSOUTPUTCSV, MBSOUTPUTXDMF and MBSOUTPUTCHECKPOINT.

  Not Collective

  Input Parameters:
+ name - the format's name
- create - create(st, ops, ctx): fills the operations (MbsOutputOps) and creates the context; called at the
           output's first use, when the stepper is set up

  Level: advanced

.seealso: `MbsStepperAddOutput()`, `MbsOutputOps`
@*/
PetscErrorCode MbsOutputRegister(const char name[], MbsOutputCreateFn create)
{
  PetscFunctionBegin;
  PetscCall(MbsStepperInitializePackage());
  PetscCall(PetscFunctionListAdd(&MbsOutputFunctions, name, create));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperAddOutput - Attaches an output of a registered format, written every `every` steps and at the last
  step of MbsStepperSolve(); adding a format again changes its frequency.

  Logically Collective

  Input Parameters:
+ st - the stepper
. name - a registered format (MBSOUTPUTCSV, MBSOUTPUTXDMF, MBSOUTPUTCHECKPOINT or one of MbsOutputRegister())
- every - the frequency in steps (what 0 means is the format's: the checkpoint writes only at the end)

  Level: intermediate

.seealso: `MbsOutputRegister()`, `MbsStepperSetTrajectory()`, `MbsStepperSetCheckpoint()`
@*/
PetscErrorCode MbsStepperAddOutput(MbsStepper st, const char name[], PetscInt every)
{
  MbsOutputCreateFn create;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  PetscCall(PetscFunctionListFind(MbsOutputFunctions, name, &create));
  PetscCheck(create, PetscObjectComm((PetscObject)st), PETSC_ERR_USER_INPUT,
             "Unknown output format '%s'; MbsOutputRegister() adds one", name);
  PetscCheck(every >= 0, PetscObjectComm((PetscObject)st), PETSC_ERR_ARG_OUTOFRANGE,
             "Output '%s': the frequency must be non-negative, got %" PetscInt_FMT, name, every);
  for (PetscInt i = 0; i < st->noutputs; i++) {
    if (strcmp(st->outputs[i].name, name)) continue;
    st->outputs[i].every = every;
    PetscFunctionReturn(0);
  }
  if (st->noutputs == st->maxoutputs) {
    st->maxoutputs = PetscMax(4, 2 * st->maxoutputs);
    PetscCall(PetscRealloc(sizeof(MbsOutputLink) * st->maxoutputs, &st->outputs));
  }
  PetscCall(PetscMemzero(&st->outputs[st->noutputs], sizeof(MbsOutputLink)));
  PetscCall(PetscStrncpy(st->outputs[st->noutputs].name, name, sizeof(st->outputs[0].name)));
  st->outputs[st->noutputs].every  = every;
  st->outputs[st->noutputs].create = create;
  st->noutputs++;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetOutputDirectory - The directory the outputs write into (borrowed).

  Not Collective

  Level: intermediate

.seealso: `MbsStepperSetOutput()`
@*/
PetscErrorCode MbsStepperGetOutputDirectory(MbsStepper st, const char *directory[])
{
  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  *directory = st->output_dir;
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperGetProvenance - What produced the stepper's results, as lines "key: value" for the outputs' headers and
  attributes: the program's and PETSc's versions, the model's source (`MbsModelSetSource()`; an input file's name,
  size and hash), the options database, the number of ranks, the scheme and its step.

  Collective

  Input Parameter:
. st - the stepper

  Output Parameter:
. text - the lines, each ended by a newline, with no control characters inside a line (borrowed: valid until the
         next call or the stepper's destruction)

  Level: intermediate

.seealso: `MbsModelSetSource()`, `MbsGetVersion()`, `MbsOutputRegister()`
@*/
PetscErrorCode MbsStepperGetProvenance(MbsStepper st, const char *text[])
{
  char        version[64], *options = NULL;
  const char *source;
  PetscMPIInt size;
  size_t      len;

  PetscFunctionBegin;
  PetscValidHeaderSpecific(st, MBS_STEPPER_CLASSID, 1);
  PetscCall(MbsGetVersion(version, sizeof(version)));
  PetscCall(MbsModelGetSource(st->model, &source));
  PetscCall(PetscOptionsGetAll(((PetscObject)st)->options, &options));
  PetscCall(PetscStrlen(options, &len));
  while (len && options[len - 1] == ' ') options[--len] = 0;
  PetscCallMPI(MPI_Comm_size(PetscObjectComm((PetscObject)st), &size));
  PetscCall(PetscFree(st->provenance));
  PetscCall(PetscStrlen(options, &len));
  len += PETSC_MAX_PATH_LEN + 512 + (source ? strlen(source) : 0);
  PetscCall(PetscMalloc1(len, &st->provenance));
  PetscCall(
    PetscSNPrintf(st->provenance, len,
                  "program: gglmbs %s\ninput: %s\noptions:%s%s\nranks: %d\nscheme: %s, h = %.15g, t_end = %.15g\n",
                  version, source ? source : "(built by a program)", options && options[0] ? " " : "",
                  options ? options : "", (int)size, st->type, (double)st->h, (double)st->t_end));
  PetscCall(PetscFree(options));
  for (char *c = st->provenance; *c; c++) /* one line per key, whatever the values hold */
    if ((unsigned char)*c < 0x20 && *c != '\n') *c = '?';
  *text = st->provenance;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsOutputLinkCreate(MbsStepper st, MbsOutputLink *link)
{
  PetscFunctionBegin;
  if (link->created) PetscFunctionReturn(0);
  PetscCall(link->create(st, &link->ops, &link->ctx));
  link->created = PETSC_TRUE;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsStepperOutputsBegin_Private(MbsStepper st)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < st->noutputs; i++) {
    MbsOutputLink *link = &st->outputs[i];
    PetscCall(MbsOutputLinkCreate(st, link));
    if (link->ops.begin) PetscCall(link->ops.begin(st, link->every, link->ctx));
  }
  PetscFunctionReturn(0);
}

/* From MbsStepperMonitor(): the state just accepted (or the initial one) */
PetscErrorCode MbsStepperOutputsWrite_Private(MbsStepper st)
{
  const PetscBool last = (PetscBool)(st->solving && (st->step >= st->solve_nsteps || st->reason < 0));

  PetscFunctionBegin;
  for (PetscInt i = 0; i < st->noutputs; i++) {
    MbsOutputLink *link = &st->outputs[i];
    PetscCall(MbsOutputLinkCreate(st, link));
    if (link->ops.write) PetscCall(link->ops.write(st, link->every, last, link->ctx));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode MbsStepperOutputsFinish_Private(MbsStepper st)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < st->noutputs; i++) {
    MbsOutputLink *link = &st->outputs[i];
    if (link->created && link->ops.finish) PetscCall(link->ops.finish(st, link->ctx));
  }
  PetscFunctionReturn(0);
}

/* Every output's end() is called; the first error is returned after all of them. */
PetscErrorCode MbsStepperOutputsEnd_Private(MbsStepper st)
{
  PetscErrorCode ierr = 0;

  PetscFunctionBegin;
  for (PetscInt i = 0; i < st->noutputs; i++) {
    MbsOutputLink *link = &st->outputs[i];
    if (link->created && link->ops.end) {
      PetscErrorCode e = link->ops.end(st, link->ctx);
      if (!ierr) ierr = e;
    }
  }
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* Detaches an output of that name (destroying it if it was created). */
PetscErrorCode MbsStepperRemoveOutput_Private(MbsStepper st, const char name[])
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < st->noutputs; i++) {
    if (strcmp(st->outputs[i].name, name)) continue;
    if (st->outputs[i].created && st->outputs[i].ops.destroy)
      PetscCall(st->outputs[i].ops.destroy(&st->outputs[i].ctx));
    for (PetscInt j = i + 1; j < st->noutputs; j++) st->outputs[j - 1] = st->outputs[j];
    st->noutputs--;
    break;
  }
  PetscFunctionReturn(0);
}

/* Whether an output of that name is attached, and whether it was created (is writing) */
PetscErrorCode MbsStepperHasOutput_Private(MbsStepper st, const char name[], PetscBool *has, PetscBool *created)
{
  PetscFunctionBegin;
  *has = PETSC_FALSE;
  if (created) *created = PETSC_FALSE;
  for (PetscInt i = 0; i < st->noutputs; i++) {
    if (strcmp(st->outputs[i].name, name)) continue;
    *has = PETSC_TRUE;
    if (created) *created = st->outputs[i].created;
  }
  PetscFunctionReturn(0);
}

PetscErrorCode MbsStepperOutputsDestroy_Private(MbsStepper st)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < st->noutputs; i++)
    if (st->outputs[i].created && st->outputs[i].ops.destroy)
      PetscCall(st->outputs[i].ops.destroy(&st->outputs[i].ctx));
  PetscCall(PetscFree(st->outputs));
  PetscCall(PetscFree(st->provenance));
  st->noutputs = st->maxoutputs = 0;
  PetscFunctionReturn(0);
}

/* mkdir -p on rank 0; every rank learns whether it worked. */
PetscErrorCode MbsMakeDirectory(MPI_Comm comm, const char directory[])
{
  PetscMPIInt rank;
  int         err = 0;
  char        path[PETSC_MAX_PATH_LEN];

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    PetscCall(PetscStrncpy(path, directory, sizeof(path)));
    for (char *s = path + 1; *s && !err; s++) {
      if (*s != '/') continue;
      *s = 0;
      if (mkdir(path, 0777) && errno != EEXIST) err = errno;
      *s = '/';
    }
    if (!err && mkdir(path, 0777) && errno != EEXIST) err = errno;
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCheck(!err, comm, PETSC_ERR_FILE_OPEN, "Cannot create output directory '%s': %s", directory, strerror(err));
  PetscFunctionReturn(0);
}

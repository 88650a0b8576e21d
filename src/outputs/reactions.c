/* The output "reactions": one CSV per selected joint or drive, its reaction force and torque over time
   (docs/output.md; MbsStepperSetReactions(), MbsStepperGetReaction()) */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "outputs/csvfile.h"

#define MBS_REACTIONS_MAX 256 /* files open at once */

/* A selected element as its owner describes it to the other ranks (each rank holds only its own elements) */
typedef struct {
  PetscInt elem;                           /* its index in the model */
  PetscInt selectable;                     /* a joint or drive */
  char     type[64];                       /* its type, for a refusal */
  char     name[64];                       /* its file name, without .csv */
  char     desc[PETSC_MAX_PATH_LEN + 256]; /* what its file's header says of it */
} MbsReactionEntry;

typedef struct {
  PetscInt  n;                            /* selected elements */
  PetscInt *elem;                         /* their indices in the model */
  char (*name)[64];                       /* their file names, without .csv */
  char (*desc)[PETSC_MAX_PATH_LEN + 256]; /* what the header says of them */
  PetscInt     nlocal;                    /* those this rank owns ... */
  PetscInt    *local_k;                   /* ... their positions in elem_local ... */
  PetscInt    *local_i;                   /* ... and in elem */
  PetscScalar *qloc;                      /* ghosted local state */
  PetscReal   *fm, *sum;                  /* 6 per element: F, M */
  MbsCSVFile  *file;
  PetscBool    open;                     /* between begin and end */
  char         spec[PETSC_MAX_PATH_LEN]; /* the selection made (st->reaction_spec when it was made) */
  PetscInt     last_written;
} MbsOutputReactions;

static PetscBool IsSelectable(const MbsElement *e)
{
  return (PetscBool)(e->type && (e->kernel->ncon > 0 || e->kernel->nvcon > 0));
}

/* "joints[2]" -> "joints_2"; a number -> "element_<n>" */
static void FileName(const char token[], char name[64])
{
  char  *end;
  size_t j = 0;

  (void)strtol(token, &end, 10);
  if (*token && !*end) {
    snprintf(name, 64, "element_%s", token);
    return;
  }
  for (const char *c = token; *c && j < 63; c++) {
    const int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-';
    if (*c == ']') continue;
    name[j++] = ok ? *c : '_';
  }
  name[j] = 0;
}

/* Elements whose names coincide (the rods of one chain all carry the chain's name in the input) are named by their
   index instead, so that no two share a file */
static PetscErrorCode UniqueNames(MbsOutputReactions *out)
{
  PetscBool *clash;

  PetscFunctionBegin;
  PetscCall(PetscCalloc1(out->n, &clash));
  for (PetscInt i = 0; i < out->n; i++)
    for (PetscInt j = 0; j < i; j++)
      if (!strcmp(out->name[i], out->name[j])) clash[i] = clash[j] = PETSC_TRUE;
  for (PetscInt i = 0; i < out->n; i++)
    if (clash[i]) PetscCall(PetscSNPrintf(out->name[i], 64, "element_%" PetscInt_FMT, out->elem[i]));
  PetscCall(PetscFree(clash));
  PetscFunctionReturn(0);
}

/* The entry of this rank's k-th owned element: its file name (from its name in the input, else its index) and the
   description of the force and torque in its file's header */
static void MbsReactionsEntry(MbsModel model, PetscInt k, MbsReactionEntry *entry)
{
  const MbsElement *e = MbsModelLocalElement(model, k);
  const PetscInt    b = e->body[1] >= 0 ? e->body[1] : e->body[0];

  PetscMemzero(entry, sizeof(*entry));
  entry->elem       = model->elem_local[k];
  entry->selectable = IsSelectable(e);
  snprintf(entry->type, sizeof(entry->type), "%s",
           e->type ? e->type->name : "a rigid body's own constraints or gravity");
  snprintf(entry->name, sizeof(entry->name), "element_%" PetscInt_FMT, entry->elem);
  if (e->label) { /* an input's element: its name there */
    const char *c = strstr(e->label, ": ");
    char        token[64];
    size_t      len;
    if (c && (len = strcspn(c + 2, " ")) < sizeof(token)) {
      memcpy(token, c + 2, len);
      token[len] = 0;
      FileName(token, entry->name);
    }
  }
  if (!entry->selectable) return;
  snprintf(entry->desc, sizeof(entry->desc),
           "reaction of element %" PetscInt_FMT " (%s%s%s): the force (N) and torque (N m, about the joint point) that "
           "%s exerts on %s, world frame\n",
           entry->elem, e->type->name, e->label ? ", " : "", e->label ? e->label : "",
           e->body[1] >= 0 ? (e->body[0] >= 0 ? MbsModelBody(model, e->body[0])->name : "the ground")
                           : MbsModelBody(model, b)->name,
           e->body[1] >= 0 ? MbsModelBody(model, b)->name : "the ground");
}

/* The element a token names (its index, its label, or the name within the label of an input's element: "joints[2]"
   in "file:7:5: joints[2] (revolute)", the first in the model's order), described by its owner to every rank */
static PetscErrorCode FindElement(MbsStepper st, const char token[], MbsReactionEntry *entry)
{
  MbsModel model = st->model;
  MPI_Comm comm  = PetscObjectComm((PetscObject)st);
  char    *end, pattern[96];
  long     v = strtol(token, &end, 10);
  PetscInt k = -1, elem;

  PetscFunctionBegin;
  if (*token && !*end) {
    PetscCheck(v >= 0 && v < model->nelems, comm, PETSC_ERR_USER_INPUT,
               "Reactions (-mbs_reactions): element %ld does not exist (the model has %" PetscInt_FMT ")", v,
               model->nelems);
    PetscCall(PetscFindInt((PetscInt)v, model->nelem_local, model->elem_local, &k));
  } else {
    PetscCall(PetscSNPrintf(pattern, sizeof(pattern), ": %s (", token));
    for (PetscInt j = 0; j < model->nelem_local && k < 0; j++) {
      const char *label = MbsModelLocalElement(model, j)->label;
      if (label && (!strcmp(label, token) || strstr(label, pattern))) k = j;
    }
  }
  if (k >= 0) MbsReactionsEntry(model, k, entry);
  PetscCall(MbsModelFirstElement(model, k, entry, sizeof(*entry), &elem));
  PetscCheck(elem >= 0, comm, PETSC_ERR_USER_INPUT,
             "Reactions (-mbs_reactions, output.reactions): no element named '%s'; name a joint or drive as the "
             "input lists it (joints[0], drives[1]), by its label or by its index",
             token);
  PetscCheck(entry->selectable, comm, PETSC_ERR_USER_INPUT, "Reactions: element '%s' (%s) is not a joint or drive",
             token, entry->type);
  PetscFunctionReturn(0);
}

static int CompareEntries(const void *a, const void *b)
{
  const PetscInt ea = ((const MbsReactionEntry *)a)->elem, eb = ((const MbsReactionEntry *)b)->elem;
  return ea < eb ? -1 : ea > eb;
}

static PetscErrorCode MbsReactionsSelect(MbsStepper st, MbsOutputReactions *out)
{
  MbsModel          model = st->model;
  MPI_Comm          comm  = PetscObjectComm((PetscObject)st);
  char              spec[PETSC_MAX_PATH_LEN], *save = NULL;
  MbsReactionEntry *entry;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(MBS_REACTIONS_MAX, &out->elem));
  PetscCall(PetscMalloc1(MBS_REACTIONS_MAX, &out->name));
  PetscCall(PetscMalloc1(MBS_REACTIONS_MAX, &out->desc));
  PetscCall(PetscMalloc1(MBS_REACTIONS_MAX, &entry));
  if (!strcmp(st->reaction_spec, "all")) { /* each rank its own joints and drives, then all of them in model order */
    PetscMPIInt nlocal = 0, total = 0, *counts, *displs, size = model->size;
    for (PetscInt k = 0; k < model->nelem_local; k++)
      if (IsSelectable(MbsModelLocalElement(model, k))) nlocal++;
    PetscCallMPI(MPI_Allreduce(&nlocal, &total, 1, MPI_INT, MPI_SUM, comm));
    if (total > MBS_REACTIONS_MAX) PetscCall(PetscFree(entry));
    PetscCheck(total <= MBS_REACTIONS_MAX, comm, PETSC_ERR_USER_INPUT,
               "Reactions: 'all' selects more than %d joints and drives (the rods of chains, nets and meshes count), "
               "one file each; name the ones wanted",
               MBS_REACTIONS_MAX);
    PetscCall(PetscMalloc2(size, &counts, size, &displs));
    PetscCallMPI(MPI_Allgather(&nlocal, 1, MPI_INT, counts, 1, MPI_INT, comm));
    displs[0] = 0;
    for (PetscMPIInt r = 1; r < size; r++) displs[r] = displs[r - 1] + counts[r - 1];
    for (PetscInt k = 0, i = displs[model->rank]; k < model->nelem_local; k++) /* in place: at this rank's part */
      if (IsSelectable(MbsModelLocalElement(model, k))) MbsReactionsEntry(model, k, &entry[i++]);
    for (PetscMPIInt r = 0; r < size; r++) {
      counts[r] *= (PetscMPIInt)sizeof(MbsReactionEntry);
      displs[r] *= (PetscMPIInt)sizeof(MbsReactionEntry);
    }
    PetscCallMPI(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, entry, counts, displs, MPI_BYTE, comm));
    PetscCall(PetscFree2(counts, displs));
    qsort(entry, (size_t)total, sizeof(*entry), CompareEntries);
    out->n = total;
  } else {
    PetscCall(PetscStrncpy(spec, st->reaction_spec, sizeof(spec)));
    for (char *token = strtok_r(spec, ", ", &save); token; token = strtok_r(NULL, ", ", &save)) {
      PetscErrorCode ierr;
      if (out->n == MBS_REACTIONS_MAX) PetscCall(PetscFree(entry));
      PetscCheck(out->n < MBS_REACTIONS_MAX, comm, PETSC_ERR_USER_INPUT, "Reactions: at most %d joints and drives",
                 MBS_REACTIONS_MAX);
      ierr = FindElement(st, token, &entry[out->n]);
      if (ierr) PetscCall(PetscFree(entry));
      PetscCall(ierr);
      FileName(token, entry[out->n].name);
      for (PetscInt i = 0; i < out->n; i++)
        if (entry[i].elem == entry[out->n].elem) {
          PetscCall(PetscFree(entry));
          SETERRQ(comm, PETSC_ERR_USER_INPUT, "Reactions: '%s' is listed twice", token);
        }
      out->n++;
    }
  }
  for (PetscInt i = 0; i < out->n; i++) {
    out->elem[i] = entry[i].elem;
    PetscCall(PetscStrncpy(out->name[i], entry[i].name, sizeof(out->name[i])));
    PetscCall(PetscStrncpy(out->desc[i], entry[i].desc, sizeof(out->desc[i])));
  }
  PetscCall(PetscFree(entry));
  PetscCall(UniqueNames(out));
  PetscFunctionReturn(0);
}

/* A row in every file; kept: only in the files that did not keep this step's row from an earlier run */
static PetscErrorCode MbsOutputWriteRow_Reactions(MbsStepper st, MbsOutputReactions *out, PetscBool kept)
{
  MbsModel           model = st->model;
  const PetscScalar *x     = NULL;
  MbsReactionTerm    terms[MBS_MAX_REACTION_TERMS];
  PetscInt           n;

  PetscFunctionBegin;
  PetscCall(PetscArrayzero(out->fm, 6 * out->n));
  PetscCall(MbsStepperGetReactionTerms_Private(st, &n, terms));
  if (st->started && n) { /* the scatter is collective: on every rank */
    PetscCall(MbsModelCoordinatesToLocal(model, st->q, out->qloc));
    PetscCall(VecGetArrayRead(st->X, &x));
    for (PetscInt j = 0; j < out->nlocal; j++) {
      PetscReal *fm = out->fm + 6 * out->local_i[j];
      PetscCall(MbsStepperReactionLocal_Private(st, out->local_k[j], n, terms, x, out->qloc, fm, fm + 3));
    }
    PetscCall(VecRestoreArrayRead(st->X, &x));
  }
  PetscCall(MPIU_Allreduce(out->fm, out->sum, 6 * out->n, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)st)));
  for (PetscInt i = 0; i < out->n; i++) {
    const PetscReal *r = out->sum + 6 * i;
    char             row[512];

    if (kept && MbsCSVFileHasStep(out->file[i], st->step)) continue;
    PetscCall(PetscSNPrintf(row, sizeof(row), "%" PetscInt_FMT ",%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", st->step,
                            (double)st->t, (double)r[0], (double)r[1], (double)r[2], (double)r[3], (double)r[4],
                            (double)r[5]));
    PetscCall(MbsCSVFileWriteRow(out->file[i], st->step, row));
  }
  out->last_written = st->step;
  PetscFunctionReturn(0);
}

/* Frees the selection and closes the files */
static PetscErrorCode MbsReactionsReset(MbsOutputReactions *out)
{
  PetscFunctionBegin;
  for (PetscInt i = 0; i < out->n && out->file; i++) PetscCall(MbsCSVFileClose(&out->file[i]));
  PetscCall(PetscFree(out->file));
  PetscCall(PetscFree(out->elem));
  PetscCall(PetscFree(out->name));
  PetscCall(PetscFree(out->desc));
  PetscCall(PetscFree(out->qloc));
  PetscCall(PetscFree2(out->fm, out->sum));
  PetscCall(PetscFree2(out->local_k, out->local_i));
  out->n = out->nlocal = 0;
  out->open            = PETSC_FALSE;
  out->spec[0]         = 0;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsOutputBegin_Reactions(MbsStepper st, PetscInt every, void *ctx)
{
  MbsOutputReactions *out   = (MbsOutputReactions *)ctx;
  MbsModel            model = st->model;
  const char         *provenance;
  char                dir[PETSC_MAX_PATH_LEN], *text;
  size_t              len;

  PetscFunctionBegin;
  if (!out->file || strcmp(out->spec, st->reaction_spec)) { /* the first use, or a new selection */
    PetscCall(MbsReactionsReset(out));
    PetscCall(MbsReactionsSelect(st, out));
    PetscCall(PetscStrncpy(out->spec, st->reaction_spec, sizeof(out->spec)));
    PetscCall(PetscMalloc1(model->nq_ghosted, &out->qloc));
    PetscCall(PetscMalloc2(6 * out->n, &out->fm, 6 * out->n, &out->sum));
    PetscCall(PetscMalloc2(out->n, &out->local_k, out->n, &out->local_i));
    for (PetscInt k = 0; k < model->nelem_local; k++)
      for (PetscInt i = 0; i < out->n; i++)
        if (model->elem_local[k] == out->elem[i]) {
          out->local_k[out->nlocal]   = k;
          out->local_i[out->nlocal++] = i;
        }
    PetscCall(PetscCalloc1(out->n, &out->file));
  }
  PetscCall(MbsStepperGetProvenance(st, &provenance));
  PetscCall(PetscSNPrintf(dir, sizeof(dir), "%s/reactions", st->output_dir));
  PetscCall(PetscStrlen(provenance, &len));
  len += 512 + PETSC_MAX_PATH_LEN;
  PetscCall(PetscMalloc1(len, &text));
  for (PetscInt i = 0; i < out->n; i++) {
    char file[80];

    PetscCall(PetscSNPrintf(text, len, "%s%s", provenance, out->desc[i]));
    PetscCall(PetscSNPrintf(file, sizeof(file), "%s.csv", out->name[i]));
    PetscCall(MbsCSVFileClose(&out->file[i]));
    PetscCall(MbsCSVFileOpen(PetscObjectComm((PetscObject)st), dir, file, "step,t,Fx,Fy,Fz,Mx,My,Mz\n",
                             st->step > 0 ? st->step : -1, text, &out->file[i]));
  }
  PetscCall(PetscFree(text));
  out->open = PETSC_TRUE;
  if (st->step % every == 0) PetscCall(MbsOutputWriteRow_Reactions(st, out, PETSC_TRUE));
  out->last_written = st->step;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsOutputWrite_Reactions(MbsStepper st, PetscInt every, PetscBool last, void *ctx)
{
  MbsOutputReactions *out = (MbsOutputReactions *)ctx;

  PetscFunctionBegin;
  if (!out->open || st->step <= out->last_written) PetscFunctionReturn(0);
  if (st->step % every == 0 || last) PetscCall(MbsOutputWriteRow_Reactions(st, out, PETSC_FALSE));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsOutputEnd_Reactions(MbsStepper st, void *ctx)
{
  MbsOutputReactions *out = (MbsOutputReactions *)ctx;

  PetscFunctionBegin;
  (void)st;
  for (PetscInt i = 0; i < out->n && out->file; i++) PetscCall(MbsCSVFileClose(&out->file[i]));
  out->open = PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsOutputDestroy_Reactions(void **ctx)
{
  MbsOutputReactions *out = (MbsOutputReactions *)*ctx;

  PetscFunctionBegin;
  if (out) PetscCall(MbsReactionsReset(out));
  PetscCall(PetscFree(*ctx));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOutputCreate_Reactions(MbsStepper st, MbsOutputOps *ops, void **ctx)
{
  MbsOutputReactions *out;

  PetscFunctionBegin;
  (void)st;
  PetscCall(PetscNew(&out));
  out->last_written = -1;
  ops->begin        = MbsOutputBegin_Reactions;
  ops->write        = MbsOutputWrite_Reactions;
  ops->end          = MbsOutputEnd_Reactions;
  ops->destroy      = MbsOutputDestroy_Reactions;
  *ctx              = out;
  PetscFunctionReturn(0);
}

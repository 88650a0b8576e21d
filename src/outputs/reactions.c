/* The output "reactions": one CSV per selected joint or drive, its reaction force and torque over time
   (docs/output.md; MbsStepperSetReactions(), MbsStepperGetReaction()) */
#define _POSIX_C_SOURCE 200809L /* strtok_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "outputs/csvfile.h"

#define MBS_REACTIONS_MAX 256 /* files open at once */

typedef struct {
  PetscInt  n;           /* selected elements */
  PetscInt *elem;        /* their indices in the model */
  char (*name)[64];      /* their file names, without .csv */
  PetscInt     nlocal;   /* those this rank owns ... */
  PetscInt    *local_k;  /* ... their positions in elem_local ... */
  PetscInt    *local_i;  /* ... and in elem */
  PetscScalar *qloc;     /* ghosted local state */
  PetscReal   *fm, *sum; /* 6 per element: F, M */
  MbsCSVFile  *file;
  PetscBool    open;                     /* between begin and end */
  char         spec[PETSC_MAX_PATH_LEN]; /* the selection made (st->reaction_spec when it was made) */
  PetscInt     last_written;
} MbsOutputReactions;

static PetscBool IsSelectable(const MbsElement *e)
{
  return (PetscBool)(e->type && (e->kernel->ncon > 0 || e->kernel->nvcon > 0));
}

/* An element named by its index, by its label, or by the name within the label of an input's element
   ("joints[2]" in "file:7:5: joints[2] (revolute)") */
static PetscErrorCode FindElement(MbsStepper st, const char token[], PetscInt *elem)
{
  MbsModel model = st->model;
  char    *end, pattern[96];
  long     v = strtol(token, &end, 10);

  PetscFunctionBegin;
  *elem = -1;
  if (*token && !*end) {
    PetscCheck(v >= 0 && v < model->nelems, PetscObjectComm((PetscObject)st), PETSC_ERR_USER_INPUT,
               "Reactions (-mbs_reactions): element %ld does not exist (the model has %" PetscInt_FMT ")", v,
               model->nelems);
    *elem = (PetscInt)v;
  } else {
    PetscCall(PetscSNPrintf(pattern, sizeof(pattern), ": %s (", token));
    for (PetscInt i = 0; i < model->nelems && *elem < 0; i++) {
      const char *label = model->elems[i].label;
      if (label && (!strcmp(label, token) || strstr(label, pattern))) *elem = i;
    }
    PetscCheck(*elem >= 0, PetscObjectComm((PetscObject)st), PETSC_ERR_USER_INPUT,
               "Reactions (-mbs_reactions, output.reactions): no element named '%s'; name a joint or drive as the "
               "input lists it (joints[0], drives[1]), by its label or by its index",
               token);
  }
  PetscCheck(IsSelectable(&model->elems[*elem]), PetscObjectComm((PetscObject)st), PETSC_ERR_USER_INPUT,
             "Reactions: element '%s' (%s) is not a joint or drive", token,
             model->elems[*elem].type ? model->elems[*elem].type->name : "a rigid body's own constraints or gravity");
  PetscFunctionReturn(0);
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

static PetscErrorCode MbsReactionsSelect(MbsStepper st, MbsOutputReactions *out)
{
  MbsModel model = st->model;
  char     spec[PETSC_MAX_PATH_LEN], *save = NULL;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(MBS_REACTIONS_MAX, &out->elem));
  PetscCall(PetscMalloc1(MBS_REACTIONS_MAX, &out->name));
  if (!strcmp(st->reaction_spec, "all")) {
    for (PetscInt i = 0; i < model->nelems; i++) {
      if (!IsSelectable(&model->elems[i])) continue;
      PetscCheck(out->n < MBS_REACTIONS_MAX, PetscObjectComm((PetscObject)st), PETSC_ERR_USER_INPUT,
                 "Reactions: 'all' selects more than %d joints and drives (the rods of chains, nets and meshes count), "
                 "one file each; name the ones wanted",
                 MBS_REACTIONS_MAX);
      out->elem[out->n] = i;
      PetscCall(PetscSNPrintf(out->name[out->n], 64, "element_%" PetscInt_FMT, i));
      if (model->elems[i].label) { /* an input's element: its name there */
        const char *c = strstr(model->elems[i].label, ": ");
        char        token[64];
        size_t      len;
        if (c && (len = strcspn(c + 2, " ")) < sizeof(token)) {
          memcpy(token, c + 2, len);
          token[len] = 0;
          FileName(token, out->name[out->n]);
        }
      }
      out->n++;
    }
    PetscCall(UniqueNames(out));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscStrncpy(spec, st->reaction_spec, sizeof(spec)));
  for (char *token = strtok_r(spec, ", ", &save); token; token = strtok_r(NULL, ", ", &save)) {
    PetscCheck(out->n < MBS_REACTIONS_MAX, PetscObjectComm((PetscObject)st), PETSC_ERR_USER_INPUT,
               "Reactions: at most %d joints and drives", MBS_REACTIONS_MAX);
    PetscCall(FindElement(st, token, &out->elem[out->n]));
    FileName(token, out->name[out->n]);
    for (PetscInt i = 0; i < out->n; i++)
      PetscCheck(out->elem[i] != out->elem[out->n], PetscObjectComm((PetscObject)st), PETSC_ERR_USER_INPUT,
                 "Reactions: '%s' is listed twice", token);
    out->n++;
  }
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
    const MbsElement *e = &model->elems[out->elem[i]];
    const PetscInt    b = e->body[1] >= 0 ? e->body[1] : e->body[0];
    char              file[80];

    PetscCall(PetscSNPrintf(
      text, len,
      "%sreaction of element %" PetscInt_FMT " (%s%s%s): the force (N) and torque (N m, about the "
      "joint point) that %s exerts on %s, world frame\n",
      provenance, out->elem[i], e->type->name, e->label ? ", " : "", e->label ? e->label : "",
      e->body[1] >= 0 ? (e->body[0] >= 0 ? model->bodies[e->body[0]].name : "the ground") : model->bodies[b].name,
      e->body[1] >= 0 ? model->bodies[b].name : "the ground"));
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

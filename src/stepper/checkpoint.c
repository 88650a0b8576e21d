/*
  Checkpoint and restart.

  A checkpoint is a PETSc binary file (PetscViewerBinary; rank 0 writes, the vectors are gathered):

    char[16]    "GGLMBS-CKPT"                      magic
    int64[24]   header (MBS_CKPT_* below)           version, sizes, step, counters, model and layout hashes
    real[14]    t, h, t_end, jac_h, scheme parameters, the energy check's reference and scale, the state's
                constraint violations max |g(q)| and max |G(q) M^-1 p|, the step size of the predictor's history, the
                kept Jacobian's step start time (8 reals in version 1, 10 in 2 and 3, 12 in 4, 13 in 5 and 6)
    char[64]    scheme name
    int64, char (version 4) the length of the provenance (MbsStepperGetProvenance()), and its text
    real[nq]    q, p                                 input (natural) order: any number of ranks can read them
    Vec         X, Xjac                              solver state in the scheme's unknown layout
    Vec         qjac, pjac, qlast, plast             coordinate layout (same ranks and partition only)
    Vec         x_n, x_{n-1}, ...                    (version 5) the extrapolation predictor's history, newest first
    real[16]    (version 5) the floor test's last scales ||s_f|| (MbsStepperConverged_Private()); 8 in versions 5, 6
    char[16]    "GGLMBS-CKPT-END"                    end marker
    char[16]    "GGLMBS-CKSUM"                       (version 3) FNV-1a over every byte before it
    uint64      the checksum

  The solver state makes a restart bit-identical: the multipliers of the last step are the next step's
  initial guess, and under modified Newton the kept Jacobian is rebuilt from the unknowns, step-start
  state and step size it was assembled at (MbsStepperRebuildJacobian()), so the restarted run factors
  the same matrix. A restart on a different number of ranks or partition restores q and p only.
  The file is written under a temporary name and renamed, so a checkpoint is complete or absent.
*/
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include "stepper/stepperimpl.h"
#include "model/hash.h"

/* 8: the model hash is a sum of hashes of each body and element, which the ranks holding them compute (the model is
   distributed); 7: 16 fields' floor scales (schemes of up to 16 fields), the kept Jacobian's start time; 6: the model
   hash covers the joint frames of the data block; 5: the extrapolation predictor's history; 4: the state's constraint
   violations and the provenance; 3: the model hash over whole element data blocks; 2: the energy check's reference;
   versions 1 to 7 are read too (their model hash, over the whole model in order, on one rank only) */
#define MBS_CKPT_VERSION 8
#define MBS_CKPT_MAGIC   "GGLMBS-CKPT"
#define MBS_CKPT_END     "GGLMBS-CKPT-END"

enum {
  MBS_CKPT_VERSION_I,
  MBS_CKPT_NRANKS,
  MBS_CKPT_NBODIES,
  MBS_CKPT_NELEMS,
  MBS_CKPT_NQ,
  MBS_CKPT_NCON,
  MBS_CKPT_NUNKNOWNS,
  MBS_CKPT_STEP,
  MBS_CKPT_TOTAL_ITS,
  MBS_CKPT_RETRIES,
  MBS_CKPT_JAC_VALID,
  MBS_CKPT_JAC_EVALS,
  MBS_CKPT_STARTED,
  MBS_CKPT_MODEL_HASH,
  MBS_CKPT_LAYOUT_HASH,
  MBS_CKPT_NPARAMS,
  MBS_CKPT_ENERGY_SET,
  MBS_CKPT_NHIST, /* version 5: the number of history vectors after plast */
  MBS_CKPT_NINTS = 24
};
enum {
  MBS_CKPT_T,
  MBS_CKPT_H,
  MBS_CKPT_T_END,
  MBS_CKPT_JAC_H,
  MBS_CKPT_PARAM0,
  MBS_CKPT_NREALS_V1  = MBS_CKPT_PARAM0 + 4, /* four slots for scheme parameters (versions 1 and 2) */
  MBS_CKPT_ENERGY_REF = MBS_CKPT_NREALS_V1,
  MBS_CKPT_ENERGY_SCALE,
  MBS_CKPT_NREALS_V3,
  MBS_CKPT_G_MAX = MBS_CKPT_NREALS_V3, /* max |g(q)| of the state written (version 4) */
  MBS_CKPT_GV_MAX,                     /* max |G(q) M^-1 p| */
  MBS_CKPT_NREALS_V4,
  MBS_CKPT_HIST_H = MBS_CKPT_NREALS_V4, /* the step size of the history (version 5) */
  MBS_CKPT_NREALS_V6,
  MBS_CKPT_JAC_T0 = MBS_CKPT_NREALS_V6, /* the start time of the kept Jacobian's step (version 7) */
  MBS_CKPT_NREALS
};

/* FNV-1a over the bytes of values (not of structs: no padding), from this file's own start value (kept: it is in
   every checkpoint's hashes). */
static void MbsHash(PetscInt64 *h, const void *data, size_t n)
{
  *h = (PetscInt64)(MbsFNV1a((uint64_t)*h, data, n) & 0x7fffffffffffffffULL);
}

/* The bytes of the data block a checkpoint of that version hashes: versions 3-5 knew the fields before the joint
   frames (appended in version 6, with the element types that use them); from version 6 on the block up to the time
   function's table pointer, then the table's values (MbsModelHash()): the drives' time coefficients, last, are
   state of the evaluation, not of the model */
static size_t MbsModelHashBytes(PetscInt64 version)
{
  return version >= 7   ? offsetof(MbsElemData, tcoef)
         : version == 6 ? offsetof(MbsElemData, beam_stiffness)
                        : offsetof(MbsElemData, frame_a);
}

#define MBS_HASH_BASIS (1469598103934665603LL & 0x7fffffffffffffffLL)

/* A body's part of the model hash: type, mass, inertia */
static void MbsHashBody(PetscInt64 *h, const MbsBody *body)
{
  const int type = (int)body->type;
  MbsHash(h, &type, sizeof(type));
  MbsHash(h, &body->mass, sizeof(body->mass));
  MbsHash(h, body->inertia, sizeof(body->inertia));
}

/* An element's part: type, bodies and every field of the data block (points, axes, lengths, stiffnesses, and whatever a
   new element type adds, with no list of fields here). The data block's padding is zero: elements are zeroed when
   created and their data is copied with memcpy (MbsModelAddElement()). */
static void MbsHashElement(PetscInt64 *h, const MbsElement *e, size_t data_bytes)
{
  const PetscInt64 ab[2] = {e->body[0], e->body[1]};
  MbsHash(h, e->kernel->name, strlen(e->kernel->name));
  if (e->type) MbsHash(h, e->type->name, strlen(e->type->name));
  MbsHash(h, ab, sizeof(ab));
  if (data_bytes > offsetof(MbsElemData, time)) { /* a time table: its values, not its address */
    const MbsTimeTable *tb = e->data.time.table;
    MbsHash(h, &e->data, offsetof(MbsElemData, time) + offsetof(MbsTimeFunction, table));
    if (tb) {
      MbsHash(h, &tb->n, sizeof(tb->n));
      MbsHash(h, &tb->cubic, sizeof(tb->cubic));
      MbsHash(h, tb->t, sizeof(double) * (size_t)tb->n);
      MbsHash(h, tb->v, sizeof(double) * (size_t)tb->n);
    }
    if (data_bytes > offsetof(MbsElemData, beam_stiffness)) /* version 7: the fields after the time function */
      MbsHash(h, e->data.beam_stiffness, data_bytes - offsetof(MbsElemData, beam_stiffness));
  } else
    MbsHash(h, &e->data, data_bytes);
}

/*
  What makes two models the same for a restart: bodies (MbsHashBody()) and elements (MbsHashElement()) with their
  indices; initial conditions are not part of it. From version 8 on it is the sum (mod 2^63) of one hash per body and
  per element, each over its index and its data, computed by the rank that owns it: the same on any number of ranks.
  Versions 3 to 7 hashed the whole model in order (data_bytes of each data block, MbsModelHashBytes()), which only a
  rank that holds the whole model can do: one rank.
*/
static PetscErrorCode MbsModelHash(MbsModel model, PetscInt64 version, PetscInt64 *hash)
{
  const size_t data_bytes = MbsModelHashBytes(version);

  PetscFunctionBegin;
  if (version >= 8) {
    uint64_t sum = 0, total;
    for (PetscInt k = 0; k < model->nowned; k++) {
      const PetscInt64 b = model->owned_body[k];
      PetscInt64       h = MBS_HASH_BASIS;
      MbsHash(&h, &b, sizeof(b));
      MbsHashBody(&h, MbsModelBody(model, model->owned_body[k]));
      sum += (uint64_t)h;
    }
    for (PetscInt k = 0; k < model->nelem_local; k++) {
      const PetscInt64 e = model->elem_local[k];
      PetscInt64       h = MBS_HASH_BASIS;
      MbsHash(&h, &e, sizeof(e));
      MbsHashElement(&h, MbsModelLocalElement(model, k), data_bytes);
      sum += (uint64_t)h;
    }
    PetscCallMPI(MPI_Allreduce(&sum, &total, 1, MPI_UINT64_T, MPI_SUM, PetscObjectComm((PetscObject)model)));
    *hash = (PetscInt64)(total & 0x7fffffffffffffffULL);
  } else {
    PetscInt64 h = MBS_HASH_BASIS;
    PetscCheck(model->size == 1, PetscObjectComm((PetscObject)model), PETSC_ERR_SUP,
               "A checkpoint of version %" PetscInt64_FMT " identifies its model by a hash of the whole model, which "
               "only a run on one rank holds: restart it on one rank (its next checkpoint is of version %d)",
               version, MBS_CKPT_VERSION);
    for (PetscInt b = 0; b < model->nbodies; b++) MbsHashBody(&h, MbsModelBody(model, b));
    if (version >= 3)
      for (PetscInt k = 0; k < model->nelems; k++) MbsHashElement(&h, MbsModelLocalElement(model, k), data_bytes);
    else
      for (PetscInt k = 0; k < model->nelems; k++) { /* versions 1 and 2: the element types and fields listed */
        const MbsElement  *e     = MbsModelLocalElement(model, k);
        const MbsElemData *d     = &e->data;
        const PetscInt64   ab[2] = {e->body[0], e->body[1]};
        MbsHash(&h, e->kernel->name, strlen(e->kernel->name));
        MbsHash(&h, ab, sizeof(ab));
        MbsHash(&h, d->Xa, sizeof(d->Xa));
        MbsHash(&h, d->Xb, sizeof(d->Xb));
        MbsHash(&h, d->axis_a, sizeof(d->axis_a));
        MbsHash(&h, d->perp_b, sizeof(d->perp_b));
        MbsHash(&h, &d->length, sizeof(d->length));
        MbsHash(&h, &d->stiffness, sizeof(d->stiffness));
        MbsHash(&h, &d->mass, sizeof(d->mass));
        MbsHash(&h, d->gravity, sizeof(d->gravity));
      }
    *hash = h;
  }
  PetscFunctionReturn(0);
}

/* The distribution of bodies over ranks: equal hashes mean equal unknown layouts. */
static PetscInt64 MbsLayoutHash(MbsModel model)
{
  PetscInt64 h = MBS_HASH_BASIS;
  MbsHash(&h, &model->size, sizeof(model->size));
  for (PetscInt b = 0; b < model->nbodies; b++) {
    const PetscInt64 r = model->body_rank[b];
    MbsHash(&h, &r, sizeof(r));
  }
  return h;
}

/* The file MbsStepperWriteCheckpoint() writes for filename (NULL: the one of MbsStepperSetCheckpoint(),
   default <output dir>/checkpoint.bin, whose directory is created). */
PetscErrorCode MbsStepperCheckpointPath(MbsStepper st, const char filename[], char path[], size_t len)
{
  PetscFunctionBegin;
  if (filename && filename[0])
    PetscCall(PetscStrncpy(path, filename, len));
  else if (st->checkpoint[0])
    PetscCall(PetscStrncpy(path, st->checkpoint, len));
  else {
    PetscCall(MbsMakeDirectory(PetscObjectComm((PetscObject)st), st->output_dir));
    PetscCall(PetscSNPrintf(path, len, "%s/checkpoint.bin", st->output_dir));
  }
  PetscFunctionReturn(0);
}

/* The coordinate-layout vectors x[0..n-1] in input order, written from rank 0 (one gather each). */
static PetscErrorCode MbsWriteNatural(PetscViewer viewer, MbsModel model, PetscInt n, Vec x[])
{
  PetscErrorCode     ierr = 0;
  VecScatter         scatter;
  Vec                x0;
  const PetscScalar *a;
  PetscInt           n0;

  PetscFunctionBegin;
  PetscCall(MbsModelCreateScatterToZero(model, x[0], &scatter, &x0));
  PetscCall(VecGetLocalSize(x0, &n0));
  for (PetscInt k = 0; k < n && !ierr; k++) {
    PetscCall(VecScatterBegin(scatter, x[k], x0, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(scatter, x[k], x0, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecGetArrayRead(x0, &a));
    ierr = PetscViewerBinaryWrite(viewer, a, n0, PETSC_SCALAR); /* a full disk: free, then report */
    PetscCall(VecRestoreArrayRead(x0, &a));
  }
  PetscCall(VecScatterDestroy(&scatter));
  PetscCall(VecDestroy(&x0));
  PetscFunctionReturn(ierr);
}

/* The viewer and the work vectors last[] are the caller's to destroy, also when a write fails. */
static PetscErrorCode MbsCheckpointWrite_Private(MbsStepper st, const char tmp[], PetscViewer *viewer_out, Vec last[2])
{
  MbsModel    model = st->model;
  PetscViewer viewer;
  char        magic[16] = MBS_CKPT_MAGIC, end[16] = MBS_CKPT_END, scheme[64];
  PetscInt64  ints[MBS_CKPT_NINTS]   = {0};
  PetscReal   reals[MBS_CKPT_NREALS] = {0};
  Vec         qlast, plast;
  const char *provenance;

  PetscFunctionBegin;
  ints[MBS_CKPT_VERSION_I] = MBS_CKPT_VERSION;
  ints[MBS_CKPT_NRANKS]    = model->size;
  ints[MBS_CKPT_NBODIES]   = model->nbodies;
  ints[MBS_CKPT_NELEMS]    = model->nelems;
  ints[MBS_CKPT_NQ]        = model->nq;
  ints[MBS_CKPT_NCON]      = model->ncon;
  ints[MBS_CKPT_NUNKNOWNS] = st->sys->nglobal;
  ints[MBS_CKPT_STEP]      = st->step;
  ints[MBS_CKPT_TOTAL_ITS] = st->total_its;
  ints[MBS_CKPT_RETRIES]   = st->retries;
  ints[MBS_CKPT_JAC_VALID] = st->jac_valid && st->reuse; /* only a kept Jacobian is recorded (MbsStepperFormJacobian) */
  ints[MBS_CKPT_JAC_EVALS] = st->jac_evals;
  ints[MBS_CKPT_STARTED]   = st->started;
  PetscCall(MbsModelHash(model, MBS_CKPT_VERSION, &ints[MBS_CKPT_MODEL_HASH]));
  ints[MBS_CKPT_LAYOUT_HASH] = MbsLayoutHash(model);
  ints[MBS_CKPT_NPARAMS]     = st->nparams;
  ints[MBS_CKPT_ENERGY_SET]  = st->energy_set;
  ints[MBS_CKPT_NHIST]       = st->predictor == MBS_PREDICTOR_EXTRAPOLATE ? st->nhist : 0;
  {
    /* a history the state has left (a host's change, a rejected or interrupted step) is not written */
    PetscBool valid;
    PetscCall(MbsStepperHistoryValid_Private(st, &valid));
    if (!valid) ints[MBS_CKPT_NHIST] = 0;
  }
  reals[MBS_CKPT_HIST_H] = st->hist_h;
  reals[MBS_CKPT_T]      = st->t;
  reals[MBS_CKPT_H]      = st->h;
  reals[MBS_CKPT_T_END]  = st->t_end;
  reals[MBS_CKPT_JAC_H]  = st->jac_h;
  reals[MBS_CKPT_JAC_T0] = st->jac_t0;
  for (PetscInt i = 0; i < PetscMin(st->nparams, MBS_CKPT_NREALS_V1 - MBS_CKPT_PARAM0); i++)
    reals[MBS_CKPT_PARAM0 + i] = st->param[i]; /* versions 1 and 2 kept them here; version 3 after the name */
  reals[MBS_CKPT_ENERGY_REF]   = st->energy_ref;
  reals[MBS_CKPT_ENERGY_SCALE] = st->energy_scale;
  {
    MbsDiagnostics d;
    PetscCall(MbsStepperComputeDiagnostics(st, &d));
    reals[MBS_CKPT_G_MAX]  = d.g_max;
    reals[MBS_CKPT_GV_MAX] = d.gv_max;
  }
  PetscCall(MbsStepperGetProvenance(st, &provenance));
  PetscCall(PetscMemzero(scheme, sizeof(scheme)));
  PetscCall(PetscStrncpy(scheme, st->type, sizeof(scheme)));

  PetscCall(PetscViewerCreate(PetscObjectComm((PetscObject)st), viewer_out));
  viewer = *viewer_out;
  PetscCall(PetscViewerSetType(viewer, PETSCVIEWERBINARY));
  PetscCall(PetscViewerBinarySetSkipInfo(viewer, PETSC_TRUE));
  PetscCall(PetscViewerBinarySetSkipOptions(viewer, PETSC_TRUE));
  PetscCall(PetscViewerFileSetMode(viewer, FILE_MODE_WRITE));
  PetscCall(PetscViewerFileSetName(viewer, tmp));
  PetscCall(PetscViewerBinaryWrite(viewer, magic, sizeof(magic), PETSC_CHAR));
  PetscCall(PetscViewerBinaryWrite(viewer, ints, MBS_CKPT_NINTS, PETSC_INT64));
  PetscCall(PetscViewerBinaryWrite(viewer, reals, MBS_CKPT_NREALS, PETSC_REAL));
  PetscCall(PetscViewerBinaryWrite(viewer, scheme, sizeof(scheme), PETSC_CHAR));
  if (st->nparams) PetscCall(PetscViewerBinaryWrite(viewer, st->param, st->nparams, PETSC_REAL));
  {
    PetscInt64 len = (PetscInt64)strlen(provenance);
    PetscCall(PetscViewerBinaryWrite(viewer, &len, 1, PETSC_INT64));
    PetscCall(PetscViewerBinaryWrite(viewer, provenance, (PetscInt)len, PETSC_CHAR));
  }
  {
    Vec state[2] = {st->q, st->p};
    PetscCall(MbsWriteNatural(viewer, model, 2, state));
  }
  PetscCall(VecView(st->X, viewer));
  PetscCall(VecView(st->Xjac, viewer));
  PetscCall(VecView(st->qjac, viewer));
  PetscCall(VecView(st->pjac, viewer));
  /* the start of the last step (the VI schemes' velocity residual is evaluated at its q_theta) */
  PetscCall(VecDuplicate(st->q, &last[0]));
  PetscCall(VecDuplicate(st->p, &last[1]));
  qlast = last[0];
  plast = last[1];
  PetscCall(MbsModelLocalToCoordinates(model, st->q0, qlast));
  PetscCall(MbsModelLocalToCoordinates(model, st->p0, plast));
  PetscCall(VecView(qlast, viewer));
  PetscCall(VecView(plast, viewer));
  for (PetscInt i = 0; i < ints[MBS_CKPT_NHIST]; i++) PetscCall(VecView(st->xhist[i], viewer));
  PetscCall(PetscViewerBinaryWrite(viewer, st->sfield, MBS_MAX_FIELDS, PETSC_REAL));
  PetscCall(PetscViewerBinaryWrite(viewer, end, sizeof(end), PETSC_CHAR));
  *viewer_out = NULL; /* closed here, once: a failed close is a failed write */
  PetscCall(PetscViewerDestroy(&viewer));
  PetscFunctionReturn(0);
}

#define MBS_CKPT_CKSUM "GGLMBS-CKSUM"

/* FNV-1a over the first n bytes of a file (n < 0: all of it); returns an errno, 0 on success */
static int MbsFileChecksum(const char path[], long long n, uint64_t *h, long long *size)
{
  FILE         *fp = fopen(path, "rb");
  unsigned char buf[65536];
  long long     done = 0;
  uint64_t      x    = 1469598103934665603ULL;

  if (!fp) return errno ? errno : EIO;
  if (fseek(fp, 0, SEEK_END) || (*size = ftell(fp)) < 0 || fseek(fp, 0, SEEK_SET)) {
    fclose(fp);
    return errno ? errno : EIO;
  }
  if (n < 0) n = *size;
  while (done < n) {
    const size_t want = (size_t)PetscMin((long long)sizeof(buf), n - done), got = fread(buf, 1, want, fp);
    x = MbsFNV1a(x, buf, got);
    done += (long long)got;
    if (got < want) break;
  }
  fclose(fp);
  *h = x;
  return done == n ? 0 : EIO;
}

/* Rank 0: appends the checksum record of a written checkpoint; returns an errno */
static int MbsCheckpointSeal(const char path[])
{
  char      tag[16] = MBS_CKPT_CKSUM;
  uint64_t  h;
  long long size;
  int       err = MbsFileChecksum(path, -1, &h, &size);
  FILE     *fp;

  if (err) return err;
  if (!(fp = fopen(path, "ab"))) return errno ? errno : EIO;
  if (fwrite(tag, 1, sizeof(tag), fp) != sizeof(tag) || fwrite(&h, 1, sizeof(h), fp) != sizeof(h))
    err = errno ? errno : EIO;
  if (fclose(fp) && !err) err = errno ? errno : EIO;
  return err;
}

/* Rank 0: whether the file ends in a checksum record (sealed) and whether it matches (intact) */
static void MbsCheckpointVerify(const char path[], PetscBool *sealed, PetscBool *intact)
{
  char      tag[16];
  uint64_t  stored, h;
  long long size = 0;
  FILE     *fp   = fopen(path, "rb");

  *sealed = *intact = PETSC_FALSE;
  if (!fp) return;
  if (!fseek(fp, 0, SEEK_END) && (size = ftell(fp)) >= 24 && !fseek(fp, size - 24, SEEK_SET) &&
      fread(tag, 1, 16, fp) == 16 && fread(&stored, 1, 8, fp) == 8 &&
      !memcmp(tag, MBS_CKPT_CKSUM, sizeof(MBS_CKPT_CKSUM)))
    *sealed = PETSC_TRUE;
  fclose(fp);
  if (*sealed && !MbsFileChecksum(path, size - 24, &h, &size)) *intact = (PetscBool)(h == stored);
}

/*@C
  MbsStepperWriteCheckpoint - Writes everything a restart needs to continue the run bit for bit: time,
  step, the state (q, p), the scheme and its parameters, the step size, the multipliers of the last step
  and what defines the kept Jacobian. The file is written under a temporary name and renamed (a
  checkpoint is complete or absent); rank 0 writes, so it works on any number of ranks.

  Collective

  Input Parameters:
+ st - the stepper
- filename - the file (NULL: the one of MbsStepperSetCheckpoint(), default <output directory>/checkpoint.bin)

  Level: intermediate

.seealso: `MbsStepperLoadCheckpoint()`, `MbsStepperSetCheckpoint()`
@*/
PetscErrorCode MbsStepperWriteCheckpoint(MbsStepper st, const char filename[])
{
  char           path[PETSC_MAX_PATH_LEN], tmp[PETSC_MAX_PATH_LEN + 8];
  PetscErrorCode ierr;
  int            err     = 0;
  PetscViewer    viewer  = NULL;
  Vec            last[2] = {NULL, NULL};

  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  if (!st->started) { /* no step yet (nor restored): let the last step's start be the current state */
    PetscCall(MbsModelCoordinatesToLocal(st->model, st->q, st->q0));
    PetscCall(MbsModelCoordinatesToLocal(st->model, st->p, st->p0));
  }
  PetscCall(MbsStepperCheckpointPath(st, filename, path, sizeof(path)));
  PetscCall(PetscSNPrintf(tmp, sizeof(tmp), "%s.tmp", path));
  {
    /* the file is replaced by a rename: never a device, a pipe or a directory (/dev/full, as root) */
    struct stat sb;
    int         special = 0;
    if (st->model->rank == 0) special = !stat(path, &sb) && !S_ISREG(sb.st_mode);
    PetscCallMPI(MPI_Bcast(&special, 1, MPI_INT, 0, PetscObjectComm((PetscObject)st)));
    PetscCheck(!special, PetscObjectComm((PetscObject)st), PETSC_ERR_FILE_WRITE,
               "Cannot write checkpoint '%s': it exists and is not a regular file (a device, pipe or directory), which "
               "the checkpoint would replace",
               path);
  }
  {
    /* the writer opens the file on rank 0 alone and fails there alone, while the other ranks go on into its
       collective scatters: a file that cannot be created (a missing directory) is found first, on every rank */
    int why = 0;
    if (st->model->rank == 0) {
      FILE *fp = fopen(tmp, "wb");
      if (!fp)
        why = errno;
      else if (fclose(fp))
        why = errno;
    }
    PetscCallMPI(MPI_Bcast(&why, 1, MPI_INT, 0, PetscObjectComm((PetscObject)st)));
    PetscCheck(!why, PetscObjectComm((PetscObject)st), PETSC_ERR_FILE_WRITE,
               "Cannot write checkpoint '%s' at step %" PetscInt_FMT ": %s", tmp, st->step, strerror(why));
  }
  /* errors of the writer (disk full, unwritable directory) are reported once, below, with the path */
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = MbsCheckpointWrite_Private(st, tmp, &viewer, last);
  PetscCall(PetscPopErrorHandler());
  PetscCall(PetscViewerDestroy(&viewer)); /* left by a failed write */
  PetscCall(VecDestroy(&last[0]));
  PetscCall(VecDestroy(&last[1]));
  if (st->model->rank == 0) {
    if (!ierr) err = MbsCheckpointSeal(tmp);
    if (!ierr && !err && rename(tmp, path)) err = errno;
    if (ierr || err) remove(tmp);
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, PetscObjectComm((PetscObject)st)));
  if (ierr) {
    /* PETSc's viewer does not say why: try the write again, a byte, to learn the system's reason */
    int why = 0;
    if (st->model->rank == 0) {
      FILE *fp = fopen(tmp, "wb");
      if (!fp)
        why = errno;
      else {
        if (fputc(0, fp) == EOF || fflush(fp)) why = errno;
        if (fclose(fp) && !why) why = errno;
        remove(tmp);
      }
    }
    PetscCallMPI(MPI_Bcast(&why, 1, MPI_INT, 0, PetscObjectComm((PetscObject)st)));
    SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_FILE_WRITE,
            "Cannot write checkpoint '%s' at step %" PetscInt_FMT ": %s", tmp, st->step,
            why ? strerror(why) : "the file could not be written (directory missing or not writable, or disk full)");
  }
  PetscCheck(!err, PetscObjectComm((PetscObject)st), PETSC_ERR_FILE_WRITE,
             "Cannot finish checkpoint '%s' (checksum, then rename to '%s'): %s", tmp, path, strerror(err));
  PetscCall(
    PetscInfo(NULL, "Checkpoint at step %" PetscInt_FMT " (t = %g) written to %s\n", st->step, (double)st->t, path));
  PetscFunctionReturn(0);
}

/* Reads n natural-order arrays (every rank receives all of each, as PetscViewerBinaryRead() does) and
   inserts them into x[0..n-1] (coordinate layout) from rank 0 (one scatter for all). */
static PetscErrorCode MbsReadNatural(PetscViewer viewer, MbsModel model, PetscInt n, Vec x[])
{
  VecScatter   scatter;
  Vec          x0;
  PetscScalar *a, *all;
  PetscInt     n0;

  PetscFunctionBegin;
  PetscCall(PetscMalloc1(model->nq, &all));
  PetscCall(MbsModelCreateScatterToZero(model, x[0], &scatter, &x0));
  PetscCall(VecGetLocalSize(x0, &n0));
  for (PetscInt k = 0; k < n; k++) {
    PetscCall(PetscViewerBinaryRead(viewer, all, model->nq, NULL, PETSC_SCALAR));
    PetscCall(VecGetArray(x0, &a));
    for (PetscInt i = 0; i < n0; i++) a[i] = all[i];
    PetscCall(VecRestoreArray(x0, &a));
    PetscCall(VecScatterBegin(scatter, x0, x[k], INSERT_VALUES, SCATTER_REVERSE));
    PetscCall(VecScatterEnd(scatter, x0, x[k], INSERT_VALUES, SCATTER_REVERSE));
  }
  PetscCall(PetscFree(all));
  PetscCall(VecScatterDestroy(&scatter));
  PetscCall(VecDestroy(&x0));
  PetscFunctionReturn(0);
}

/* Loads a vector stored with VecView into x if keep, else reads past it. */
static PetscErrorCode MbsReadVec(PetscViewer viewer, Vec x, PetscBool keep)
{
  Vec y;

  PetscFunctionBegin;
  if (keep) {
    PetscCall(VecLoad(x, viewer));
    PetscFunctionReturn(0);
  }
  PetscCall(VecCreate(PetscObjectComm((PetscObject)x), &y));
  PetscCall(VecLoad(y, viewer));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

/* Reading, with every failure of the viewer turned into 'what' (the caller reports it). */
typedef struct {
  char       magic[16], end[16], scheme[64];
  PetscInt64 ints[MBS_CKPT_NINTS];
  PetscReal  reals[MBS_CKPT_NREALS];
  PetscReal *params; /* the scheme's parameters (version 3: their own array; before: in reals), freed by the reader */
} MbsCheckpointHeader;

#define MBS_CKPT_MAX_PARAMS     4096      /* more parameters than this is a damaged header */
#define MBS_CKPT_MAX_PROVENANCE (1 << 30) /* and a longer provenance */

static PetscErrorCode MbsCheckpointReadHeader(PetscViewer viewer, MbsCheckpointHeader *hd, const char **what)
{
  PetscFunctionBegin;
  *what = "its header";
  PetscCall(PetscViewerBinaryRead(viewer, hd->magic, sizeof(hd->magic), NULL, PETSC_CHAR));
  hd->magic[15] = 0;
  if (strcmp(hd->magic, MBS_CKPT_MAGIC)) PetscFunctionReturn(0); /* checked by the caller */
  PetscCall(PetscViewerBinaryRead(viewer, hd->ints, MBS_CKPT_NINTS, NULL, PETSC_INT64));
  if (hd->ints[MBS_CKPT_VERSION_I] < 1 || hd->ints[MBS_CKPT_VERSION_I] > MBS_CKPT_VERSION)
    PetscFunctionReturn(0); /* checked by the caller */
  PetscCall(PetscMemzero(hd->reals, sizeof(hd->reals)));
  {
    const PetscInt64 version = hd->ints[MBS_CKPT_VERSION_I];
    PetscCall(PetscViewerBinaryRead(viewer, hd->reals,
                                    version == 1   ? MBS_CKPT_NREALS_V1
                                    : version < 4  ? MBS_CKPT_NREALS_V3
                                    : version == 4 ? MBS_CKPT_NREALS_V4
                                    : version < 7  ? MBS_CKPT_NREALS_V6
                                                   : MBS_CKPT_NREALS,
                                    NULL, PETSC_REAL));
  }
  PetscCall(PetscViewerBinaryRead(viewer, hd->scheme, sizeof(hd->scheme), NULL, PETSC_CHAR));
  hd->scheme[63] = 0;
  {
    const PetscInt64 n = hd->ints[MBS_CKPT_NPARAMS];
    PetscCheck(n >= 0 && n <= MBS_CKPT_MAX_PARAMS, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
               "%" PetscInt64_FMT " scheme parameters", n);
    PetscCall(PetscMalloc1(n, &hd->params));
    if (hd->ints[MBS_CKPT_VERSION_I] >= 3)
      PetscCall(PetscViewerBinaryRead(viewer, hd->params, n, NULL, PETSC_REAL));
    else {
      PetscCheck(n <= MBS_CKPT_NREALS_V1 - MBS_CKPT_PARAM0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
                 "%" PetscInt64_FMT " scheme parameters", n);
      for (PetscInt64 i = 0; i < n; i++) hd->params[i] = hd->reals[MBS_CKPT_PARAM0 + i];
    }
  }
  if (hd->ints[MBS_CKPT_VERSION_I] >= 4) { /* the provenance: read past it */
    PetscInt64 len;
    char       buf[1024];
    PetscCall(PetscViewerBinaryRead(viewer, &len, 1, NULL, PETSC_INT64));
    PetscCheck(len >= 0 && len <= MBS_CKPT_MAX_PROVENANCE, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
               "a provenance of %" PetscInt64_FMT " bytes", len);
    for (PetscInt64 done = 0; done < len; done += (PetscInt64)sizeof(buf))
      PetscCall(
        PetscViewerBinaryRead(viewer, buf, (PetscInt)PetscMin(len - done, (PetscInt64)sizeof(buf)), NULL, PETSC_CHAR));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsCheckpointReadData(MbsStepper st, PetscViewer viewer, PetscBool same_layout, Vec qlast,
                                            Vec plast, PetscInt64 nhist, PetscInt nscales, char end[16],
                                            const char **what)
{
  PetscFunctionBegin;
  *what = "the state (q, p)";
  {
    Vec state[2] = {st->q, st->p};
    PetscCall(MbsReadNatural(viewer, st->model, 2, state));
  }
  *what = "the solver state";
  PetscCall(MbsReadVec(viewer, st->X, same_layout));
  PetscCall(MbsReadVec(viewer, st->Xjac, same_layout));
  PetscCall(MbsReadVec(viewer, st->qjac, same_layout));
  PetscCall(MbsReadVec(viewer, st->pjac, same_layout));
  PetscCall(MbsReadVec(viewer, qlast, same_layout));
  PetscCall(MbsReadVec(viewer, plast, same_layout));
  *what = "the predictor's history";
  PetscCheck(nhist >= 0 && nhist <= MBS_PREDICT_HIST, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "%" PetscInt64_FMT " history vectors", nhist);
  for (PetscInt64 i = 0; i < nhist; i++) {
    if (!st->xhist[i]) PetscCall(VecDuplicate(st->X, &st->xhist[i]));
    PetscCall(MbsReadVec(viewer, st->xhist[i], same_layout));
  }
  if (nscales) { /* version 5: the floor test's last scales, which decide when it is computed */
    PetscReal s[MBS_MAX_FIELDS] = {0};
    *what                       = "the floor test's scales";
    PetscCall(PetscViewerBinaryRead(viewer, s, nscales, NULL, PETSC_REAL));
    for (int f = 0; f < MBS_MAX_FIELDS; f++) st->sfield[f] = same_layout ? s[f] : 0;
  } else
    for (int f = 0; f < MBS_MAX_FIELDS; f++) st->sfield[f] = 0;
  *what = "its end marker";
  PetscCall(PetscViewerBinaryRead(viewer, end, 16, NULL, PETSC_CHAR));
  end[15] = 0;
  PetscFunctionReturn(0);
}

/* A checkpoint that cannot be continued: the stepper goes back to the model's initial state, not on from a state
   that is half loaded or not finite. */
static PetscErrorCode MbsCheckpointDiscardState(MbsStepper st)
{
  Vec q, p;

  PetscFunctionBegin;
  PetscCall(MbsModelCreateInitialState(st->model, &q, &p));
  PetscCall(VecCopy(q, st->q));
  PetscCall(VecCopy(p, st->p));
  PetscCall(VecDestroy(&q));
  PetscCall(VecDestroy(&p));
  PetscFunctionReturn(0);
}

/*@C
  MbsStepperLoadCheckpoint - Continues a run from a checkpoint of MbsStepperWriteCheckpoint(): sets the
  time, step and state, and (on the same number of ranks and partition) the multipliers and the kept
  Jacobian, so that the continued run reproduces the uninterrupted one bit for bit. The model, scheme,
  scheme parameters and step size must be those of the run that wrote it; the final time may differ.

  Collective

  Input Parameters:
+ st - the stepper, with its model, scheme and step size set (the input file and options of the run)
- filename - the checkpoint

  Notes:
  A missing, truncated or foreign file, or one written for another model, scheme or step size, is an
  error naming the file and the mismatch. On another number of ranks or partition q and p are restored
  and the run continues from them, equal to round-off but not bit for bit (Newton starts from zero
  multipliers and a fresh Jacobian).

  Options Database Key:
. -mbs_restart <file> - MbsStepperSolve() continues from this checkpoint

  Level: intermediate

.seealso: `MbsStepperWriteCheckpoint()`, `MbsStepperSetCheckpoint()`
@*/
PetscErrorCode MbsStepperLoadCheckpoint(MbsStepper st, const char filename[])
{
  MbsModel            model = st->model;
  PetscViewer         viewer;
  MbsCheckpointHeader hd;
  const char         *what = "the file";
  PetscErrorCode      ierr;
  PetscBool           exists, same_layout, ok, sealed;
  Vec                 qlast, plast;

  PetscFunctionBegin;
  PetscCall(MbsStepperSetUp(st));
  PetscCall(PetscMemzero(&hd, sizeof(hd)));
  PetscCall(PetscTestFile(filename, 'r', &exists));
  {
    PetscMPIInt e = exists;
    PetscCallMPI(MPI_Bcast(&e, 1, MPI_INT, 0, PetscObjectComm((PetscObject)st)));
    exists = (PetscBool)e;
  }
  PetscCheck(exists, PetscObjectComm((PetscObject)st), PETSC_ERR_FILE_OPEN,
             "Cannot read checkpoint '%s': no such readable file", filename);
  {
    PetscBool flags[2] = {PETSC_FALSE, PETSC_FALSE};
    if (model->rank == 0) MbsCheckpointVerify(filename, &flags[0], &flags[1]);
    PetscCallMPI(MPI_Bcast(flags, 2, MPIU_BOOL, 0, PetscObjectComm((PetscObject)st)));
    sealed = flags[0];
    PetscCheck(!sealed || flags[1], PetscObjectComm((PetscObject)st), PETSC_ERR_FILE_UNEXPECTED,
               "Checkpoint '%s' is corrupt: its checksum does not match its contents (changed after it was written)",
               filename);
  }
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = PetscViewerCreate(PetscObjectComm((PetscObject)st), &viewer);
  if (!ierr) ierr = PetscViewerSetType(viewer, PETSCVIEWERBINARY);
  if (!ierr) ierr = PetscViewerBinarySetSkipInfo(viewer, PETSC_TRUE);
  if (!ierr) ierr = PetscViewerBinarySetSkipOptions(viewer, PETSC_TRUE);
  if (!ierr) ierr = PetscViewerFileSetMode(viewer, FILE_MODE_READ);
  if (!ierr) ierr = PetscViewerFileSetName(viewer, filename);
  if (!ierr) ierr = MbsCheckpointReadHeader(viewer, &hd, &what);
  PetscCall(PetscPopErrorHandler());
  if (ierr) PetscCall(PetscViewerDestroy(&viewer));
  if (ierr) PetscCall(PetscFree(hd.params));
  PetscCheck(!ierr, PetscObjectComm((PetscObject)st), PETSC_ERR_FILE_READ,
             "Checkpoint '%s' is truncated or unreadable: reading %s failed", filename, what);
  if (strcmp(hd.magic, MBS_CKPT_MAGIC) || hd.ints[MBS_CKPT_VERSION_I] < 1 ||
      hd.ints[MBS_CKPT_VERSION_I] > MBS_CKPT_VERSION) {
    PetscCall(PetscViewerDestroy(&viewer));
    PetscCall(PetscFree(hd.params));
    SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_FILE_UNEXPECTED, "'%s' is not a gglmbs checkpoint (version %d)",
            filename, MBS_CKPT_VERSION);
  }
  if (hd.ints[MBS_CKPT_VERSION_I] >= 3 && !sealed) {
    PetscCall(PetscViewerDestroy(&viewer));
    PetscCall(PetscFree(hd.params));
    SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_FILE_UNEXPECTED,
            "Checkpoint '%s' is truncated or corrupt: its checksum record is missing", filename);
  }
  if (hd.ints[MBS_CKPT_VERSION_I] < 8 && model->size > 1) {
    PetscCall(PetscViewerDestroy(&viewer));
    PetscCall(PetscFree(hd.params));
    SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_SUP,
            "Checkpoint '%s' is of version %" PetscInt64_FMT
            ", which identifies its model by a hash of the whole model "
            "in order; since version 8 each rank holds only its part of the model: restart it on one rank (its next "
            "checkpoint is of version %d)",
            filename, hd.ints[MBS_CKPT_VERSION_I], MBS_CKPT_VERSION);
  }
  /* the run must be the one that wrote it */
  {
    char       msg[512] = "";
    PetscInt64 hash     = 0;
    if (hd.ints[MBS_CKPT_NBODIES] == model->nbodies && hd.ints[MBS_CKPT_NELEMS] == model->nelems)
      PetscCall(MbsModelHash(model, hd.ints[MBS_CKPT_VERSION_I], &hash));
    if (hd.ints[MBS_CKPT_NBODIES] != model->nbodies || hd.ints[MBS_CKPT_NELEMS] != model->nelems ||
        hd.ints[MBS_CKPT_NQ] != model->nq || hd.ints[MBS_CKPT_NCON] != model->ncon)
      PetscCall(PetscSNPrintf(msg, sizeof(msg),
                              "it was written for a model of %" PetscInt64_FMT " bodies, %" PetscInt64_FMT
                              " elements, %" PetscInt64_FMT " coordinates and %" PetscInt64_FMT
                              " constraints; this model has %" PetscInt_FMT ", %" PetscInt_FMT ", %" PetscInt_FMT
                              " and %" PetscInt_FMT,
                              hd.ints[MBS_CKPT_NBODIES], hd.ints[MBS_CKPT_NELEMS], hd.ints[MBS_CKPT_NQ],
                              hd.ints[MBS_CKPT_NCON], model->nbodies, model->nelems, model->nq, model->ncon));
    else if (hd.ints[MBS_CKPT_MODEL_HASH] != hash)
      PetscCall(PetscSNPrintf(
        msg, sizeof(msg),
        "it was written for a model of the same size but other masses, inertias, elements or element data"));
    else if (strcmp(hd.scheme, st->type))
      PetscCall(PetscSNPrintf(msg, sizeof(msg), "it was written by scheme %s; this run uses %s", hd.scheme, st->type));
    else if (hd.reals[MBS_CKPT_H] != st->h)
      PetscCall(PetscSNPrintf(msg, sizeof(msg), "it was written with step size h = %.17g; this run uses h = %.17g",
                              (double)hd.reals[MBS_CKPT_H], (double)st->h));
    else if (hd.ints[MBS_CKPT_NPARAMS] != st->nparams || hd.ints[MBS_CKPT_NUNKNOWNS] != st->sys->nglobal)
      PetscCall(PetscSNPrintf(msg, sizeof(msg), "its scheme has other parameters or unknowns"));
    else
      for (PetscInt i = 0; i < st->nparams && !msg[0]; i++)
        if (hd.params[i] != st->param[i])
          PetscCall(PetscSNPrintf(msg, sizeof(msg), "it was written with %s %s = %.17g; this run uses %.17g", st->type,
                                  st->param_name[i], (double)hd.params[i], (double)st->param[i]));
    PetscCall(PetscFree(hd.params));
    if (msg[0]) {
      PetscCall(PetscViewerDestroy(&viewer));
      SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_USER_INPUT, "Cannot restart from checkpoint '%s': %s",
              filename, msg);
    }
  }
  same_layout =
    (PetscBool)(hd.ints[MBS_CKPT_NRANKS] == model->size && hd.ints[MBS_CKPT_LAYOUT_HASH] == MbsLayoutHash(model));
  PetscCall(VecDuplicate(st->q, &qlast));
  PetscCall(VecDuplicate(st->p, &plast));
  {
    char end[16] = "";
    PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
    ierr = MbsCheckpointReadData(st, viewer, same_layout, qlast, plast,
                                 hd.ints[MBS_CKPT_VERSION_I] >= 5 ? hd.ints[MBS_CKPT_NHIST] : 0,
                                 hd.ints[MBS_CKPT_VERSION_I] >= 7   ? MBS_MAX_FIELDS
                                 : hd.ints[MBS_CKPT_VERSION_I] >= 5 ? 8
                                                                    : 0,
                                 end, &what);
    PetscCall(PetscPopErrorHandler());
    PetscCall(PetscViewerDestroy(&viewer));
    ok = (PetscBool)(!ierr && !strcmp(end, MBS_CKPT_END));
  }
  if (!ok) {
    PetscCall(VecDestroy(&qlast));
    PetscCall(VecDestroy(&plast));
    PetscCall(MbsCheckpointDiscardState(st)); /* the state may be half loaded */
    SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_FILE_READ,
            "Checkpoint '%s' is truncated or corrupt: reading %s failed", filename, ierr ? what : "its end marker");
  }
  {
    /* a state that is not finite (a diverged run's failure checkpoint) cannot be continued */
    PetscReal nq, np;
    PetscCall(VecNorm(st->q, NORM_INFINITY, &nq));
    PetscCall(VecNorm(st->p, NORM_INFINITY, &np));
    if (PetscIsInfOrNanReal(nq) || PetscIsInfOrNanReal(np)) {
      PetscCall(VecDestroy(&qlast));
      PetscCall(VecDestroy(&plast));
      PetscCall(MbsCheckpointDiscardState(st));
      SETERRQ(PetscObjectComm((PetscObject)st), PETSC_ERR_FILE_UNEXPECTED,
              "Checkpoint '%s' holds a state that is not finite (max |q| = %g, max |p| = %g): a run cannot continue "
              "from it",
              filename, (double)nq, (double)np);
    }
    /* version 4: the state must satisfy the constraints as it did when it was written (the same computation, row
       by row, whatever the ranks: equal up to round-off in the norms) */
    if (hd.ints[MBS_CKPT_VERSION_I] >= 4) {
      MbsDiagnostics  d;
      const PetscReal g0 = hd.reals[MBS_CKPT_G_MAX], gv0 = hd.reals[MBS_CKPT_GV_MAX];
      PetscCall(MbsStepperComputeDiagnostics(st, &d));
      if (!(d.g_max <= 2 * g0 + 1e-12 * PetscMax(1.0, nq)) || !(d.gv_max <= 2 * gv0 + 1e-12 * PetscMax(1.0, np))) {
        PetscCall(VecDestroy(&qlast));
        PetscCall(VecDestroy(&plast));
        PetscCall(MbsCheckpointDiscardState(st));
        SETERRQ(
          PetscObjectComm((PetscObject)st), PETSC_ERR_FILE_UNEXPECTED,
          "Checkpoint '%s' holds a state that violates the constraints by max |g(q)| = %.3e and max |G(q) M^-1 p| "
          "= %.3e, while it was written with %.3e and %.3e: the state is not the one written for this model",
          filename, (double)d.g_max, (double)d.gv_max, (double)g0, (double)gv0);
      }
    }
  }
  st->step      = (PetscInt)hd.ints[MBS_CKPT_STEP];
  st->t         = hd.reals[MBS_CKPT_T];
  st->total_its = (PetscInt)hd.ints[MBS_CKPT_TOTAL_ITS];
  st->retries   = (PetscInt)hd.ints[MBS_CKPT_RETRIES];
  st->jac_evals = (PetscInt)hd.ints[MBS_CKPT_JAC_EVALS];
  st->last_its  = 0;
  st->jac_valid = PETSC_FALSE;
  st->started   = PETSC_FALSE;
  st->nhist     = 0;
  if (same_layout) {
    st->started = (PetscBool)hd.ints[MBS_CKPT_STARTED];
    st->jac_h   = hd.reals[MBS_CKPT_JAC_H];
    /* before version 7 the start time was not kept: the checkpoint's step time, exact unless the loads or drives
       change with time and the Jacobian was kept from an earlier step */
    st->jac_t0 = hd.ints[MBS_CKPT_VERSION_I] >= 7 ? hd.reals[MBS_CKPT_JAC_T0] : hd.reals[MBS_CKPT_T];
    if (hd.ints[MBS_CKPT_JAC_VALID]) PetscCall(MbsStepperRebuildJacobian(st));
    PetscCall(MbsModelCoordinatesToLocal(model, qlast, st->q0));
    PetscCall(MbsModelCoordinatesToLocal(model, plast, st->p0));
    if (hd.ints[MBS_CKPT_VERSION_I] >= 5 && hd.ints[MBS_CKPT_NHIST] > 0) { /* the history goes on with this state */
      st->nhist  = (PetscInt)hd.ints[MBS_CKPT_NHIST];
      st->hist_h = hd.reals[MBS_CKPT_HIST_H];
      PetscCall(PetscObjectStateGet((PetscObject)st->q, &st->hist_qstate));
      PetscCall(PetscObjectStateGet((PetscObject)st->p, &st->hist_pstate));
    }
  } else {
    PetscCall(MbsStepperReport_Private(
      st,
      "gglmbs: checkpoint '%s' was written on %" PetscInt64_FMT
      " ranks (or another partition): restored the state only; the run continues equal to round-off, not bit for bit\n",
      filename, hd.ints[MBS_CKPT_NRANKS]));
    PetscCall(MbsModelCoordinatesToLocal(model, st->q, st->q0));
    PetscCall(MbsModelCoordinatesToLocal(model, st->p, st->p0));
  }
  PetscCall(VecDestroy(&qlast));
  PetscCall(VecDestroy(&plast));
  st->restarted = PETSC_TRUE;
  /* the energy check goes on from the interrupted run's reference (version 1 files: from the restored state) */
  st->energy_set     = (PetscBool)(hd.ints[MBS_CKPT_VERSION_I] >= 2 && hd.ints[MBS_CKPT_ENERGY_SET]);
  st->energy_ref     = hd.reals[MBS_CKPT_ENERGY_REF];
  st->energy_scale   = hd.reals[MBS_CKPT_ENERGY_SCALE];
  st->monitored_step = -1;
  PetscCall(
    PetscInfo(NULL, "Restarted from %s at step %" PetscInt_FMT ", t = %g\n", filename, st->step, (double)st->t));
  PetscFunctionReturn(0);
}

/* The output "checkpoint": every `every` steps of MbsStepperSolve() (not at the step it starts from nor at its
   last, which its finish writes) and when it finishes; 0: only when asked (MbsStepperWriteCheckpoint(), a signal,
   a failed step). */
typedef struct {
  PetscInt start_step; /* the step MbsStepperSolve() started from */
  PetscInt every;
} MbsOutputCheckpoint;

static PetscErrorCode MbsOutputBegin_Checkpoint(MbsStepper st, PetscInt every, void *ctx)
{
  MbsOutputCheckpoint *ck = (MbsOutputCheckpoint *)ctx;

  PetscFunctionBegin;
  ck->start_step = st->step;
  ck->every      = every;
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsOutputWrite_Checkpoint(MbsStepper st, PetscInt every, PetscBool last, void *ctx)
{
  MbsOutputCheckpoint *ck = (MbsOutputCheckpoint *)ctx;

  PetscFunctionBegin;
  ck->every = every;
  if (st->solving && every > 0 && st->step > ck->start_step && st->step % every == 0 && !last)
    PetscCall(MbsStepperWriteCheckpoint(st, NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsOutputFinish_Checkpoint(MbsStepper st, void *ctx)
{
  MbsOutputCheckpoint *ck = (MbsOutputCheckpoint *)ctx;

  PetscFunctionBegin;
  if (ck->every > 0) PetscCall(MbsStepperWriteCheckpoint(st, NULL));
  PetscFunctionReturn(0);
}

static PetscErrorCode MbsOutputDestroy_Checkpoint(void **ctx)
{
  PetscFunctionBegin;
  PetscCall(PetscFree(*ctx));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOutputCreate_Checkpoint(MbsStepper st, MbsOutputOps *ops, void **ctx)
{
  MbsOutputCheckpoint *ck;

  PetscFunctionBegin;
  PetscCall(PetscNew(&ck));
  ops->begin   = MbsOutputBegin_Checkpoint;
  ops->write   = MbsOutputWrite_Checkpoint;
  ops->finish  = MbsOutputFinish_Checkpoint;
  ops->destroy = MbsOutputDestroy_Checkpoint;
  *ctx         = ck;
  PetscFunctionReturn(0);
}

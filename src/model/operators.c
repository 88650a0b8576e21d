#include "model/operators.h"

/* Loop bodies over this rank's elements. The macros keep the element bookkeeping (gather, local
   indices, constraint-row offset) in one place; the operator says only what it does with the kernel. */
#define MBS_FOR_CONSTRAINT_ELEMENTS(model, k, el, nq, nc, c)            \
  for (PetscInt k_ = 0; k_ < (model)->nelem_con; k_++) {                \
    const PetscInt    k  = (model)->elem_con[k_];                       \
    const MbsElement *el = MbsModelLocalElement(model, k);              \
    const int         nc = el->kernel->ncon, nq = MbsElemNq(&el->data); \
    const PetscInt    c = (model)->elem_c[k];

#define MBS_FOR_POTENTIAL_ELEMENTS(model, k, el, nq)       \
  for (PetscInt k_ = 0; k_ < (model)->nelem_pot; k_++) {   \
    const PetscInt    k  = (model)->elem_pot[k_];          \
    const MbsElement *el = MbsModelLocalElement(model, k); \
    const int         nq = MbsElemNq(&el->data);

#define MBS_FOR_FORCE_ELEMENTS(model, k, el, nq)           \
  for (PetscInt k_ = 0; k_ < (model)->nelem_force; k_++) { \
    const PetscInt    k  = (model)->elem_force[k_];        \
    const MbsElement *el = MbsModelLocalElement(model, k); \
    const int         nq = MbsElemNq(&el->data);

#define MBS_FOR_DRIVES(model, k, el, nq, nc, c)                         \
  for (PetscInt k_ = 0; k_ < (model)->ndrive_local; k_++) {             \
    const PetscInt    k  = (model)->drive_local[k_];                    \
    const MbsElement *el = MbsModelLocalElement(model, k);              \
    const int         nc = el->kernel->ncon, nq = MbsElemNq(&el->data); \
    const PetscInt    c = (model)->elem_c[k];

#define MBS_END_FOR }

/* A drive's dg/dt at qe and time t, and its gradient in q (Gt may be NULL): its constraint with the time
   derivatives of its time coefficients in their place (kernels.h) */
static void MbsElementConstraintRate(const MbsElement *el, const PetscReal *qe, PetscReal t, PetscReal *gt,
                                     PetscReal *Gt)
{
  MbsElemData d = el->data;

  el->kernel->time_coefficients(&d, t, t, 1, d.tcoef);
  el->kernel->constraint(&d, qe, gt, Gt);
}

PetscErrorCode MbsModelSetConstraintTime(MbsModel model, PetscReal t0, PetscReal t1)
{
  PetscFunctionBegin;
  model->ctime[0] = t0;
  model->ctime[1] = t1;
  for (PetscInt k = 0; k < model->ndrive_local; k++) {
    MbsElement *el = MbsModelLocalElement(model, model->drive_local[k]);
    el->kernel->time_coefficients(&el->data, t0, t1, 0, el->data.tcoef);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpConstraintRateAdd(MbsModel model, const PetscScalar *q, PetscReal t, PetscReal alpha,
                                      PetscScalar *g)
{
  PetscFunctionBegin;
  MBS_FOR_DRIVES(model, k, el, nq, nc, c)
  PetscReal qe[MBS_ELEM_MAX_NQ], gt[MBS_ELEM_MAX_CON];
  (void)nq;
  MbsElementGather(model, el, q, qe);
  MbsElementConstraintRate(el, qe, t, gt, NULL);
  for (int r = 0; r < nc; r++) g[c + r] += alpha * gt[r];
  MBS_END_FOR
  PetscFunctionReturn(0);
}

/* The work of the drives' constraint forces over a step (docs/drives.md): with G, H at qm and the coefficients the
   model holds (the step's mean), -lambda . G dq - gamma . (G dv + [dq^T H_k vm]_k), this rank's part. */
PetscErrorCode MbsOpDriveWork(MbsModel model, const PetscScalar *q0, const PetscScalar *q1, const PetscScalar *v0,
                              const PetscScalar *v1, const PetscScalar *lam, const PetscScalar *gam, PetscReal *W)
{
  PetscFunctionBegin;
  *W = 0;
  MBS_FOR_DRIVES(model, k, el, nq, nc, c)
  PetscReal a[MBS_ELEM_MAX_NQ], b[MBS_ELEM_MAX_NQ], qm[MBS_ELEM_MAX_NQ], dq[MBS_ELEM_MAX_NQ], vm[MBS_ELEM_MAX_NQ],
    dv[MBS_ELEM_MAX_NQ], ge[MBS_ELEM_MAX_CON], G[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ],
    H[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];
  MbsElementGather(model, el, q0, a);
  MbsElementGather(model, el, q1, b);
  for (int i = 0; i < nq; i++) qm[i] = 0.5 * (a[i] + b[i]), dq[i] = b[i] - a[i];
  MbsElementGather(model, el, v0, a);
  MbsElementGather(model, el, v1, b);
  for (int i = 0; i < nq; i++) vm[i] = 0.5 * (a[i] + b[i]), dv[i] = b[i] - a[i];
  el->kernel->constraint(&el->data, qm, ge, G);
  if (gam) el->kernel->constraint_hessian(&el->data, H);
  for (int r = 0; r < nc; r++) {
    PetscReal Gdq = 0, Gdv = 0, dqHvm = 0;
    for (int i = 0; i < nq; i++) {
      Gdq += G[r * nq + i] * dq[i];
      Gdv += G[r * nq + i] * dv[i];
      if (gam)
        for (int j = 0; j < nq; j++) dqHvm += dq[i] * H[(r * nq + i) * nq + j] * vm[j];
    }
    *W -= PetscRealPart(lam[c + r]) * Gdq;
    if (gam) *W -= PetscRealPart(gam[c + r]) * (Gdv + dqHvm);
  }
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpDriveWorkAt(MbsModel model, const PetscScalar *qw, const PetscScalar *q0, const PetscScalar *q1,
                                const PetscScalar *lam, PetscReal alpha, PetscReal *W)
{
  PetscFunctionBegin;
  MBS_FOR_DRIVES(model, k, el, nq, nc, c)
  PetscReal a[MBS_ELEM_MAX_NQ], b[MBS_ELEM_MAX_NQ], qe[MBS_ELEM_MAX_NQ], ge[MBS_ELEM_MAX_CON],
    G[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ];
  MbsElementGather(model, el, q0, a);
  MbsElementGather(model, el, q1, b);
  MbsElementGather(model, el, qw, qe);
  el->kernel->constraint(&el->data, qe, ge, G);
  for (int r = 0; r < nc; r++) {
    PetscReal Gdq = 0;
    for (int i = 0; i < nq; i++) Gdq += G[r * nq + i] * (b[i] - a[i]);
    *W -= alpha * PetscRealPart(lam[c + r]) * Gdq;
  }
  MBS_END_FOR
  PetscFunctionReturn(0);
}

/* The step's midpoint configuration and mean velocity of one element */
void MbsElementStepMidpoint(MbsModel model, const MbsElement *el, const PetscScalar *q0, const PetscScalar *q1,
                            PetscReal h, PetscReal qm[], PetscReal vm[])
{
  PetscReal a[MBS_ELEM_MAX_NQ];
  const int nq = MbsElemNq(&el->data);

  MbsElementGather(model, el, q0, a);
  MbsElementGather(model, el, q1, qm);
  for (int i = 0; i < nq; i++) {
    vm[i] = (qm[i] - a[i]) / h;
    qm[i] = 0.5 * (qm[i] + a[i]);
  }
}

PetscErrorCode MbsOpForceAdd(MbsModel model, const PetscScalar *q0, const PetscScalar *q1, PetscReal h, PetscReal t,
                             PetscReal alpha, PetscScalar *f)
{
  PetscFunctionBegin;
  MBS_FOR_FORCE_ELEMENTS(model, k, el, nq)
  PetscReal qm[MBS_ELEM_MAX_NQ], vm[MBS_ELEM_MAX_NQ], fe[MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ];
  MbsElementStepMidpoint(model, el, q0, q1, h, qm, vm);
  MbsElementLocalIndices(model, el, idx);
  el->kernel->force(&el->data, qm, vm, t, fe, NULL, NULL);
  for (int i = 0; i < nq; i++) f[idx[i]] += alpha * MbsElementLoadScale(model, el) * fe[i];
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpForceWork(MbsModel model, const PetscScalar *q0, const PetscScalar *q1, PetscReal h, PetscReal t,
                              PetscReal *supplied, PetscReal *dissipated)
{
  PetscFunctionBegin;
  *supplied = *dissipated = 0;
  MBS_FOR_FORCE_ELEMENTS(model, k, el, nq)
  PetscReal qm[MBS_ELEM_MAX_NQ], vm[MBS_ELEM_MAX_NQ], fe[MBS_ELEM_MAX_NQ], w = 0;
  MbsElementStepMidpoint(model, el, q0, q1, h, qm, vm);
  el->kernel->force(&el->data, qm, vm, t, fe, NULL, NULL);
  for (int i = 0; i < nq; i++) w += MbsElementLoadScale(model, el) * fe[i] * vm[i] * h;
  if (el->kernel->dissipative)
    *dissipated -= w;
  else
    *supplied += w;
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsModelCoordinatesToLocal(MbsModel model, Vec x, PetscScalar *xloc)
{
  const PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(VecScatterBegin(model->qscatter, x, model->qghost, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(model->qscatter, x, model->qghost, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetArrayRead(model->qghost, &a));
  PetscCall(PetscArraycpy(xloc, a, model->nq_ghosted));
  PetscCall(VecRestoreArrayRead(model->qghost, &a));
  PetscFunctionReturn(0);
}

/* Owned coordinates come first in the ghosted numbering, so this is a copy of the leading part. */
PetscErrorCode MbsModelLocalToCoordinates(MbsModel model, const PetscScalar *xloc, Vec x)
{
  PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(VecGetArray(x, &a));
  PetscCall(PetscArraycpy(a, xloc, model->nq_local));
  PetscCall(VecRestoreArray(x, &a));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpConstraintAdd(MbsModel model, const PetscScalar *q, PetscReal alpha, PetscScalar *g)
{
  PetscFunctionBegin;
  MBS_FOR_CONSTRAINT_ELEMENTS(model, k, el, nq, nc, c)
  PetscReal qe[MBS_ELEM_MAX_NQ], ge[MBS_ELEM_MAX_CON];
  (void)nq;
  MbsElementGather(model, el, q, qe);
  el->kernel->constraint(&el->data, qe, ge, NULL);
  for (int r = 0; r < nc; r++) g[c + r] += alpha * ge[r];
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpConstraintGMultAdd(MbsModel model, const PetscScalar *q, const PetscScalar *w, PetscReal alpha,
                                       PetscScalar *g, PetscReal beta, PetscScalar *gw)
{
  PetscFunctionBegin;
  MBS_FOR_CONSTRAINT_ELEMENTS(model, k, el, nq, nc, c)
  PetscReal qe[MBS_ELEM_MAX_NQ], we[MBS_ELEM_MAX_NQ], ge[MBS_ELEM_MAX_CON], G[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ];
  MbsElementGather(model, el, q, qe);
  MbsElementGather(model, el, w, we);
  el->kernel->constraint(&el->data, qe, ge, G);
  for (int r = 0; r < nc; r++) {
    PetscReal s = 0;
    for (int i = 0; i < nq; i++) s += G[r * nq + i] * we[i];
    if (g) g[c + r] += alpha * ge[r];
    gw[c + r] += beta * s;
  }
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpGMultAdd(MbsModel model, const PetscScalar *q, const PetscScalar *w, PetscReal alpha,
                             PetscScalar *g)
{
  PetscFunctionBegin;
  PetscCall(MbsOpConstraintGMultAdd(model, q, w, 0.0, NULL, alpha, g));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpGTMultAdd2(MbsModel model, const PetscScalar *q, const PetscScalar *y1, PetscReal alpha1,
                               MbsScale scale1, PetscScalar *f1, const PetscScalar *y2, PetscReal alpha2,
                               MbsScale scale2, PetscScalar *f2)
{
  const PetscReal *minv = model->minv;

  PetscFunctionBegin;
  PetscCheck((scale1 == MBS_SCALE_NONE || scale1 == MBS_SCALE_MINV_ROW) &&
               (scale2 == MBS_SCALE_NONE || scale2 == MBS_SCALE_MINV_ROW),
             PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONG, "G^T y can only be scaled by M^-1 on its rows");
  MBS_FOR_CONSTRAINT_ELEMENTS(model, k, el, nq, nc, c)
  PetscReal qe[MBS_ELEM_MAX_NQ], ge[MBS_ELEM_MAX_CON], G[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ];
  MbsElementGather(model, el, q, qe);
  MbsElementLocalIndices(model, el, idx);
  el->kernel->constraint(&el->data, qe, ge, G);
  for (int i = 0; i < nq; i++) {
    PetscReal s1 = 0, s2 = 0;
    for (int r = 0; r < nc; r++) s1 += G[r * nq + i] * PetscRealPart(y1[c + r]);
    f1[idx[i]] += (scale1 == MBS_SCALE_MINV_ROW ? alpha1 * minv[idx[i]] : alpha1) * s1;
    if (!f2) continue;
    for (int r = 0; r < nc; r++) s2 += G[r * nq + i] * PetscRealPart(y2[c + r]);
    f2[idx[i]] += (scale2 == MBS_SCALE_MINV_ROW ? alpha2 * minv[idx[i]] : alpha2) * s2;
  }
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpGTMultAdd(MbsModel model, const PetscScalar *q, const PetscScalar *y, PetscReal alpha,
                              MbsScale scale, PetscScalar *f)
{
  PetscFunctionBegin;
  PetscCall(MbsOpGTMultAdd2(model, q, y, alpha, scale, f, NULL, 0, MBS_SCALE_NONE, NULL));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpHessianMultAdd(MbsModel model, const PetscScalar *mu, const PetscScalar *w, PetscReal alpha,
                                   PetscScalar *f)
{
  PetscReal H[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];

  PetscFunctionBegin;
  MBS_FOR_CONSTRAINT_ELEMENTS(model, k, el, nq, nc, c)
  PetscReal we[MBS_ELEM_MAX_NQ], me[MBS_ELEM_MAX_CON], out[MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ];
  if (el->kernel->linear) continue;
  MbsElementGather(model, el, w, we);
  MbsElementLocalIndices(model, el, idx);
  for (int r = 0; r < nc; r++) me[r] = PetscRealPart(mu[c + r]);
  if (el->kernel->constraint_hessian_mult)
    el->kernel->constraint_hessian_mult(&el->data, me, we, out);
  else {
    el->kernel->constraint_hessian(&el->data, H);
    for (int i = 0; i < nq; i++) {
      out[i] = 0;
      for (int r = 0; r < nc; r++) {
        const PetscReal *Hr = H + (size_t)(r * nq + i) * nq;
        if (me[r] == 0) continue;
        for (int j = 0; j < nq; j++) out[i] += me[r] * Hr[j] * we[j];
      }
    }
  }
  for (int i = 0; i < nq; i++) f[idx[i]] += alpha * out[i];
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpGradientAdd(MbsModel model, const PetscScalar *q, PetscReal alpha, PetscScalar *f)
{
  PetscFunctionBegin;
  MBS_FOR_POTENTIAL_ELEMENTS(model, k, el, nq)
  PetscReal qe[MBS_ELEM_MAX_NQ], dv[MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ];
  MbsElementGather(model, el, q, qe);
  MbsElementLocalIndices(model, el, idx);
  el->kernel->gradient(&el->data, qe, dv);
  for (int i = 0; i < nq; i++) f[idx[i]] += alpha * MbsElementLoadScale(model, el) * dv[i];
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpDiscreteGradientAdd(MbsModel model, const PetscScalar *q0, const PetscScalar *q1, PetscReal alpha,
                                        PetscScalar *f)
{
  PetscFunctionBegin;
  MBS_FOR_POTENTIAL_ELEMENTS(model, k, el, nq)
  PetscReal q0e[MBS_ELEM_MAX_NQ], q1e[MBS_ELEM_MAX_NQ], dg[MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ];
  MbsElementGather(model, el, q0, q0e);
  MbsElementGather(model, el, q1, q1e);
  MbsElementLocalIndices(model, el, idx);
  el->kernel->discrete_gradient(&el->data, q0e, q1e, dg, NULL);
  for (int i = 0; i < nq; i++) f[idx[i]] += alpha * MbsElementLoadScale(model, el) * dg[i];
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpPotentialEnergy(MbsModel model, const PetscScalar *q, PetscReal *V)
{
  PetscReal v = 0;

  PetscFunctionBegin;
  MBS_FOR_POTENTIAL_ELEMENTS(model, k, el, nq)
  PetscReal qe[MBS_ELEM_MAX_NQ];
  (void)nq;
  MbsElementGather(model, el, q, qe);
  v += MbsElementLoadScale(model, el) * el->kernel->energy(&el->data, qe);
  MBS_END_FOR
  PetscCall(MPIU_Allreduce(&v, V, 1, MPIU_REAL, MPIU_SUM, PetscObjectComm((PetscObject)model)));
  PetscFunctionReturn(0);
}

/* This rank's max |g(q)| and max |G(q) w| (NaN counts as infinite), and the elements where they occur
   (-1 when the rank has no constraint rows). */
PetscErrorCode MbsOpConstraintMaxLocal(MbsModel model, const PetscScalar *q, const PetscScalar *w, PetscReal max[2],
                                       PetscInt elem[2])
{
  PetscFunctionBegin;
  max[0] = max[1] = 0;
  elem[0] = elem[1] = -1;
  MBS_FOR_CONSTRAINT_ELEMENTS(model, k, el, nq, nc, c)
  PetscReal qe[MBS_ELEM_MAX_NQ], we[MBS_ELEM_MAX_NQ], ge[MBS_ELEM_MAX_CON], G[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ],
    rate[MBS_ELEM_MAX_CON] = {0};
  (void)c;
  MbsElementGather(model, el, q, qe);
  MbsElementGather(model, el, w, we);
  el->kernel->constraint(&el->data, qe, ge, G);
  if (el->kernel->time_coefficients) /* a drive: G w + dg/dt */
    MbsElementConstraintRate(el, qe, model->ctime[1], rate, NULL);
  for (int r = 0; r < nc; r++) {
    PetscReal v[2] = {ge[r], rate[r]};
    for (int i = 0; i < nq; i++) v[1] += G[r * nq + i] * we[i];
    for (int l = 0; l < 2; l++) {
      const PetscReal a = PetscIsInfOrNanReal(v[l]) ? PETSC_INFINITY : PetscAbsReal(v[l]);
      if (a > max[l] || elem[l] < 0) {
        max[l]  = a;
        elem[l] = model->elem_local[k];
      }
    }
  }
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpConstraintMax(MbsModel model, const PetscScalar *q, const PetscScalar *w, PetscReal *gmax,
                                  PetscReal *gwmax)
{
  PetscReal m[2], mg[2];
  PetscInt  elem[2];

  PetscFunctionBegin;
  PetscCall(MbsOpConstraintMaxLocal(model, q, w, m, elem));
  PetscCall(MPIU_Allreduce(m, mg, 2, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)model)));
  *gmax  = mg[0];
  *gwmax = mg[1];
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------------------------------------- */

/* Entries of a field of the given kind on rank r */
static PetscInt MbsFieldRankSize(MbsModel model, MbsFieldKind kind, PetscInt r)
{
  switch (kind) {
    case MBS_FIELD_COORDINATE: return model->rank_qstart[r + 1] - model->rank_qstart[r];
    case MBS_FIELD_CONSTRAINT: return model->rank_cstart[r + 1] - model->rank_cstart[r];
    default: return model->rank_vstart[r + 1] - model->rank_vstart[r];
  }
}

/* Owned entries of a field of the given kind on this rank (coordinates without the ghosts) */
static PetscInt MbsFieldLocalSize(MbsModel model, MbsFieldKind kind)
{
  return MbsFieldRankSize(model, kind, model->rank);
}

static PetscInt MbsSystemRankFieldOffset(MbsSystem sys, PetscInt r, PetscInt f)
{
  PetscInt off = 0;
  for (PetscInt g = 0; g < f; g++) off += MbsFieldRankSize(sys->model, sys->kind[g], r);
  return off;
}

/*
  MbsSystemCreate - Lays out a scheme's unknowns: fields in the given order inside each rank's block,
  the ghosted local vector, the scatter between them, and one index set per field (named, for
  PCFIELDSPLIT).
*/
static PetscErrorCode MbsSystemDirectRestore(MbsSystem);

PetscErrorCode MbsSystemCreate(MbsModel model, PetscInt nfields, const MbsFieldKind kinds[], const char *const names[],
                               MbsSystem *system)
{
  MbsSystem sys;
  PetscInt *from, n = 0, xstart;
  IS        isfrom;

  PetscFunctionBegin;
  PetscCheck(model->setup, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_WRONGSTATE, "Call MbsModelSetUp() first");
  PetscCheck(nfields > 0, PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_OUTOFRANGE, "A system needs fields");
  PetscCall(PetscNew(&sys));
  sys->model     = model;
  sys->nfields   = nfields;
  sys->recording = PETSC_TRUE;
  PetscCall(PetscCalloc5(nfields, &sys->kind, nfields, &sys->name, nfields, &sys->loff, nfields, &sys->foff, nfields,
                         &sys->is));
  for (PetscInt f = 0; f < nfields; f++) {
    sys->kind[f] = kinds[f];
    PetscCall(PetscStrallocpy(names[f], &sys->name[f]));
    sys->loff[f] = sys->nghosted;
    sys->foff[f] = sys->nlocal;
    sys->nghosted += kinds[f] == MBS_FIELD_COORDINATE ? model->nq_ghosted : MbsFieldLocalSize(model, kinds[f]);
    sys->nlocal += MbsFieldLocalSize(model, kinds[f]);
  }
  PetscCall(PetscMalloc1(model->size + 1, &sys->rank_xstart));
  sys->rank_xstart[0] = 0;
  for (PetscInt r = 0; r < model->size; r++)
    sys->rank_xstart[r + 1] = sys->rank_xstart[r] + MbsSystemRankFieldOffset(sys, r, nfields);
  sys->nglobal = sys->rank_xstart[model->size];
  xstart       = sys->rank_xstart[model->rank];

  PetscCall(PetscMalloc2(model->nq_ghosted, &sys->lq_global, model->nq_ghosted, &sys->lq_rank));
  for (PetscInt b = 0; b < model->nbodies; b++) {
    const PetscInt lq = model->body_lq[b], r = model->body_rank[b];
    if (lq < 0) continue;
    for (PetscInt i = 0; i < 3 * (PetscInt)model->body_type[b]; i++) {
      sys->lq_rank[lq + i]   = r;
      sys->lq_global[lq + i] = model->body_q[b] - model->rank_qstart[r] + i; /* index inside the owner's field block */
    }
  }
  PetscCall(PetscMalloc1(sys->nghosted, &from));
  for (PetscInt f = 0; f < nfields; f++) {
    if (kinds[f] == MBS_FIELD_COORDINATE) {
      for (PetscInt lq = 0; lq < model->nq_ghosted; lq++)
        from[n++] =
          sys->rank_xstart[sys->lq_rank[lq]] + MbsSystemRankFieldOffset(sys, sys->lq_rank[lq], f) + sys->lq_global[lq];
    } else {
      for (PetscInt c = 0; c < MbsFieldLocalSize(model, kinds[f]); c++) from[n++] = xstart + sys->foff[f] + c;
    }
    PetscCall(ISCreateStride(PetscObjectComm((PetscObject)model), MbsFieldLocalSize(model, kinds[f]),
                             xstart + sys->foff[f], 1, &sys->is[f]));
  }
  PetscCall(VecCreateMPI(PetscObjectComm((PetscObject)model), sys->nlocal, sys->nglobal, &sys->X));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, sys->nghosted, &sys->Xloc));
  PetscCall(VecDuplicate(sys->Xloc, &sys->Floc));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, sys->nghosted, from, PETSC_OWN_POINTER, &isfrom));
  PetscCall(VecScatterCreate(sys->X, isfrom, sys->Xloc, NULL, &sys->scatter));
  PetscCall(ISDestroy(&isfrom));
  *system = sys;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSystemDestroy(MbsSystem *system)
{
  MbsSystem sys = *system;

  PetscFunctionBegin;
  if (!sys) PetscFunctionReturn(0);
  for (PetscInt f = 0; f < sys->nfields; f++) {
    PetscCall(ISDestroy(&sys->is[f]));
    PetscCall(PetscFree(sys->name[f]));
  }
  PetscCall(PetscFree5(sys->kind, sys->name, sys->loff, sys->foff, sys->is));
  PetscCall(VecDestroy(&sys->X));
  PetscCall(VecDestroy(&sys->Xloc));
  PetscCall(VecDestroy(&sys->Floc));
  PetscCall(VecScatterDestroy(&sys->scatter));
  PetscCall(PetscFree2(sys->lq_global, sys->lq_rank));
  PetscCall(PetscFree(sys->rank_xstart));
  PetscCall(MbsSystemDirectRestore(sys));
  PetscCall(PetscSFDestroy(&sys->sf));
  PetscCall(PetscFree(sys->incoming_pos));
  PetscCall(PetscFree2(sys->remote, sys->incoming));
  PetscCall(PetscFree(sys->coo_i));
  PetscCall(PetscFree(sys->coo_j));
  PetscCall(PetscFree(sys->coo_pos));
  PetscCall(PetscFree(sys->coo_v));
  PetscCall(PetscFree(sys));
  *system = NULL;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSystemGlobalToLocal(MbsSystem sys, Vec X, Vec Xloc)
{
  PetscFunctionBegin;
  PetscCall(VecScatterBegin(sys->scatter, X, Xloc, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(sys->scatter, X, Xloc, INSERT_VALUES, SCATTER_FORWARD));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSystemLocalToGlobalAdd(MbsSystem sys, Vec Floc, Vec F)
{
  PetscFunctionBegin;
  PetscCall(VecScatterBegin(sys->scatter, Floc, F, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(sys->scatter, Floc, F, ADD_VALUES, SCATTER_REVERSE));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSystemCreateMatrix(MbsSystem sys, Mat *J)
{
  PetscFunctionBegin;
  PetscCall(MatCreate(PetscObjectComm((PetscObject)sys->model), J));
  PetscCall(MatSetSizes(*J, sys->nlocal, sys->nlocal, sys->nglobal, sys->nglobal));
  PetscCall(MatSetType(*J, MATAIJ));
  PetscCall(MatSetOptionsPrefix(*J, "mbs_jac_"));
  PetscCall(MatSetFromOptions(*J));
  PetscFunctionReturn(0);
}

/* Entry k of the assembly: into the matrix in place (or, on several ranks, the send buffer), or into the COO values */
static inline void MbsSystemPut(MbsSystem sys, PetscInt k, PetscScalar v)
{
  if (sys->directmat) {
    const PetscInt p = sys->coo_pos[k];
    if (p < sys->nnz_d)
      sys->direct[p] += v;
    else if (p < sys->nnz_do)
      sys->direct_o[p - sys->nnz_d] += v;
    else
      sys->remote[p - sys->nnz_do] += v;
  } else
    sys->coo_v[k] = v;
}

/* Gives back the arrays of an assembly in place */
static PetscErrorCode MbsSystemDirectRestore(MbsSystem sys)
{
  PetscFunctionBegin;
  if (!sys->directmat) PetscFunctionReturn(0);
  if (sys->sf) {
    Mat Ad, Ao;
    PetscCall(MatMPIAIJGetSeqAIJ(sys->directmat, &Ad, &Ao, NULL));
    PetscCall(MatSeqAIJRestoreArrayWrite(Ad, &sys->direct));
    PetscCall(MatSeqAIJRestoreArrayWrite(Ao, &sys->direct_o));
    /* the blocks' states rose, J's must too (a PC refactors on it) */
    PetscCall(PetscObjectStateIncrease((PetscObject)sys->directmat));
  } else
    PetscCall(MatSeqAIJRestoreArrayWrite(sys->directmat, &sys->direct));
  sys->direct = sys->direct_o = NULL;
  sys->directmat              = NULL;
  PetscFunctionReturn(0);
}

/* Zeroes J's values (and the send buffer) and opens them for the writes in place */
static PetscErrorCode MbsSystemDirectBegin(MbsSystem sys, Mat J)
{
  PetscFunctionBegin;
  if (sys->sf) {
    Mat Ad, Ao;
    PetscCall(MatMPIAIJGetSeqAIJ(J, &Ad, &Ao, NULL));
    PetscCall(MatSeqAIJGetArrayWrite(Ad, &sys->direct));
    PetscCall(MatSeqAIJGetArrayWrite(Ao, &sys->direct_o));
    PetscCall(PetscArrayzero(sys->direct_o, sys->nnz_do - sys->nnz_d));
    PetscCall(PetscArrayzero(sys->remote, sys->nremote));
  } else
    PetscCall(MatSeqAIJGetArrayWrite(J, &sys->direct));
  PetscCall(PetscArrayzero(sys->direct, sys->nnz_d));
  sys->directmat = J;
  PetscFunctionReturn(0);
}

/* Ends an assembly in place: the other ranks' entries in this rank's rows added, the arrays given back */
static PetscErrorCode MbsSystemDirectEnd(MbsSystem sys)
{
  PetscFunctionBegin;
  if (sys->sf) {
    PetscCall(PetscSFReduceBegin(sys->sf, MPIU_SCALAR, sys->remote, sys->incoming, MPI_REPLACE));
    PetscCall(PetscSFReduceEnd(sys->sf, MPIU_SCALAR, sys->remote, sys->incoming, MPI_REPLACE));
    for (PetscInt t = 0; t < sys->nincoming; t++) {
      const PetscInt p = sys->incoming_pos[t];
      if (p < sys->nnz_d)
        sys->direct[p] += sys->incoming[t];
      else
        sys->direct_o[p - sys->nnz_d] += sys->incoming[t];
    }
  }
  PetscCall(MbsSystemDirectRestore(sys));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsSystemAssemblyBegin(MbsSystem sys, Mat J)
{
  PetscFunctionBegin;
  PetscCall(MbsSystemDirectRestore(sys)); /* of an earlier assembly that stopped with an error */
  sys->pos = 0;
  if (sys->inplace) PetscCall(MbsSystemDirectBegin(sys, J));
  PetscFunctionReturn(0);
}

/* One rank: the matrix's pattern (CSR, columns sorted, duplicates merged) from the recorded triples, and the place of
   each triple among its values (sys->coo_pos, set only once the matrix is preallocated). The indices are sorted row by
   row (a counting sort of the rows, then each row's columns), so the cost is linear in the entries but for the sort of
   a row's few columns. This is the peak of a run's memory on a chain (the triples, 16 bytes each, and the matrix):
   each index array is freed as soon as it is read, so that at most 20 bytes per triple and the CSR are held at once. */
static PetscErrorCode MbsSystemPreallocateSeq(MbsSystem sys, Mat J)
{
  const PetscInt n = sys->nglobal, ncoo = sys->ncoo;
  PetscInt      *ia, *order, *cols, *place, nnz = 0;

  PetscFunctionBegin;
  for (PetscInt k = 0; k < ncoo; k++)
    PetscCheck(sys->coo_i[k] >= 0 && sys->coo_i[k] < n && sys->coo_j[k] >= 0 && sys->coo_j[k] < n, PETSC_COMM_SELF,
               PETSC_ERR_PLIB,
               "Jacobian entry (%" PetscInt_FMT ", %" PetscInt_FMT ") outside the %" PetscInt_FMT " unknowns",
               sys->coo_i[k], sys->coo_j[k], n);
  PetscCall(PetscCalloc1(n + 1, &ia)); /* first the rows' starts, then the CSR's */
  PetscCall(PetscMalloc1(ncoo, &order));
  for (PetscInt k = 0; k < ncoo; k++) ia[sys->coo_i[k] + 1]++;
  for (PetscInt i = 0; i < n; i++) ia[i + 1] += ia[i];
  for (PetscInt k = 0; k < ncoo; k++) order[ia[sys->coo_i[k]]++] = k; /* ia[i] now ends row i */
  for (PetscInt i = n; i > 0; i--) ia[i] = ia[i - 1];
  ia[0]       = 0;
  sys->capcoo = 0; /* a recording retried after an error here grows the arrays anew */
  PetscCall(PetscFree(sys->coo_i));
  PetscCall(PetscMalloc1(ncoo, &cols));
  for (PetscInt k = 0; k < ncoo; k++) cols[k] = sys->coo_j[order[k]];
  PetscCall(PetscFree(sys->coo_j));
  PetscCall(PetscMalloc1(ncoo, &place));
  for (PetscInt i = 0; i < n; i++) { /* sort row i's entries by column, merge them into cols[nnz...] (in place) */
    const PetscInt lo = ia[i], m = ia[i + 1] - ia[i];
    PetscCall(PetscSortIntWithArray(m, cols + lo, order + lo));
    ia[i] = nnz;
    for (PetscInt k = 0; k < m; k++) {
      if (k == 0 || cols[lo + k] != cols[lo + k - 1]) cols[nnz++] = cols[lo + k]; /* nnz <= lo + k */
      place[order[lo + k]] = nnz - 1;
    }
  }
  ia[n] = nnz;
  PetscCall(PetscFree(order));
  PetscCall(PetscRealloc(sizeof(PetscInt) * PetscMax(nnz, 1), &cols));
  PetscCall(MatSeqAIJSetPreallocationCSR(J, ia, cols, NULL));
  PetscCall(PetscFree(ia));
  PetscCall(PetscFree(cols));
  PetscCall(PetscFree(sys->coo_pos)); /* of an earlier recording that stopped with an error */
  sys->coo_pos = place;
  sys->nnz_d   = nnz;
  sys->nnz_do  = nnz;
  PetscFunctionReturn(0);
}

/* The rank r of a layout's ranges, start[r] <= i < start[r + 1] (start of size + 1 entries, ranks without entries
   allowed): the owner of a global row of X (rank_xstart) or of a global coordinate (rank_qstart) */
static inline PetscMPIInt MbsRangeOwner(const PetscInt start[], PetscMPIInt size, PetscInt i)
{
  PetscInt lo = 0, hi = size; /* start[lo] <= i < start[hi] */
  while (hi - lo > 1) {
    const PetscInt mid = (lo + hi) / 2;
    if (start[mid] <= i)
      lo = mid;
    else
      hi = mid;
  }
  return (PetscMPIInt)lo;
}

/* Several ranks, J exactly MPIAIJ: the pattern of this rank's rows from its recorded triples in them and those other
   ranks recorded in them, and the place of every triple (see MbsSystem). Triples in other ranks' rows get a slot of
   the send buffer, in their order; the star forest has a leaf per slot and a root per entry received, the roots of
   each sender consecutive. The rows are sorted as on one rank (a counting sort, then each row's columns). */
static PetscErrorCode MbsSystemPreallocateMPI(MbsSystem sys, Mat J)
{
  MPI_Comm       comm = PetscObjectComm((PetscObject)J);
  const PetscInt ncoo = sys->ncoo, n = sys->nlocal, N = sys->nglobal;
  const PetscInt rstart = sys->rank_xstart[sys->model->rank], rend = rstart + n;
  PetscMPIInt    size, *scount, *rcount, *soff, *roff;
  PetscInt       nrem = 0, nin = 0, *fill, *rem_i, *rem_j, *in_i, *in_j, *place, *in_place;
  PetscInt      *start, *order, *cols, *ia, *ja, nd = 0, no = 0, nnz = 0;
  PetscSFNode   *iremote;

  PetscFunctionBegin;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  { /* checked on every rank together, as every check below: the ranks go on into collective calls */
    PetscInt bad = -1;
    for (PetscInt k = 0; k < ncoo && bad < 0; k++)
      if (!(sys->coo_i[k] >= 0 && sys->coo_i[k] < N && sys->coo_j[k] >= 0 && sys->coo_j[k] < N)) bad = k;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPIU_INT, MPI_MAX, comm));
    PetscCheck(bad < 0, comm, PETSC_ERR_PLIB, "A Jacobian entry outside the %" PetscInt_FMT " unknowns", N);
  }
  /* the entries for other ranks: counts, each sender's offset among its receiver's roots, the star forest */
  PetscCall(PetscCalloc4(size, &scount, size, &rcount, size, &soff, size, &roff));
  PetscCall(PetscCalloc1(size, &fill));
  PetscCall(PetscMalloc1(ncoo, &place));
  for (PetscInt k = 0; k < ncoo; k++) {
    const PetscInt i = sys->coo_i[k];
    if (i >= rstart && i < rend) continue;
    scount[MbsRangeOwner(sys->rank_xstart, size, i)]++;
    nrem++;
  }
  PetscCallMPI(MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm));
  for (PetscMPIInt r = 0; r < size; r++) {
    PetscCall(PetscMPIIntCast(nin, &roff[r]));
    nin += rcount[r];
  }
  PetscCallMPI(MPI_Alltoall(roff, 1, MPI_INT, soff, 1, MPI_INT, comm));
  PetscCall(PetscMalloc3(nrem, &iremote, nrem, &rem_i, nrem, &rem_j));
  nrem = 0;
  for (PetscInt k = 0; k < ncoo; k++) {
    const PetscInt i = sys->coo_i[k];
    PetscInt       r;
    if (i >= rstart && i < rend) continue;
    r                   = MbsRangeOwner(sys->rank_xstart, size, i);
    iremote[nrem].rank  = r;
    iremote[nrem].index = soff[r] + fill[r]++;
    rem_i[nrem]         = i;
    rem_j[nrem]         = sys->coo_j[k];
    place[k]            = nrem++; /* a slot, made a place below */
  }
  PetscCall(PetscFree4(scount, rcount, soff, roff));
  PetscCall(PetscFree(fill));
  PetscCall(PetscSFDestroy(&sys->sf));
  PetscCall(PetscSFCreate(comm, &sys->sf));
  PetscCall(PetscSFSetGraph(sys->sf, nin, nrem, NULL, PETSC_COPY_VALUES, iremote, PETSC_COPY_VALUES));
  PetscCall(PetscMalloc2(nin, &in_i, nin, &in_j));
  PetscCall(PetscSFReduceBegin(sys->sf, MPIU_INT, rem_i, in_i, MPI_REPLACE));
  PetscCall(PetscSFReduceEnd(sys->sf, MPIU_INT, rem_i, in_i, MPI_REPLACE));
  PetscCall(PetscSFReduceBegin(sys->sf, MPIU_INT, rem_j, in_j, MPI_REPLACE));
  PetscCall(PetscSFReduceEnd(sys->sf, MPIU_INT, rem_j, in_j, MPI_REPLACE));
  PetscCall(PetscFree3(iremote, rem_i, rem_j));
  /* this rank's rows: entry e < ncoo is triple e, e >= ncoo received entry e - ncoo; sorted by row, then column */
  {
    const PetscInt ne = ncoo + nin;
    PetscCall(PetscMalloc1(nin, &in_place));
    PetscCall(PetscCalloc1(n + 1, &start));
    PetscCall(PetscMalloc2(ne, &order, ne, &cols));
    for (PetscInt e = 0; e < ne; e++) {
      const PetscInt i = e < ncoo ? sys->coo_i[e] : in_i[e - ncoo];
      if (i >= rstart && i < rend) start[i - rstart + 1]++;
    }
    for (PetscInt i = 0; i < n; i++) start[i + 1] += start[i];
    for (PetscInt e = 0; e < ne; e++) {
      const PetscInt i = e < ncoo ? sys->coo_i[e] : in_i[e - ncoo];
      if (i >= rstart && i < rend) order[start[i - rstart]++] = e;
    }
    for (PetscInt i = n; i > 0; i--) start[i] = start[i - 1];
    start[0] = 0;
    PetscCall(PetscMalloc1(n + 1, &ia));
    ia[0] = 0;
    for (PetscInt i = 0; i < n; i++) {
      const PetscInt lo = start[i], m = start[i + 1] - start[i];
      for (PetscInt k = 0; k < m; k++)
        cols[lo + k] = order[lo + k] < ncoo ? sys->coo_j[order[lo + k]] : in_j[order[lo + k] - ncoo];
      PetscCall(PetscSortIntWithArray(m, cols + lo, order + lo));
      for (PetscInt k = 0; k < m; k++) {
        const PetscInt e = order[lo + k];
        PetscInt       p;
        if (k == 0 || cols[lo + k] != cols[lo + k - 1]) {
          cols[nnz++] = cols[lo + k]; /* nnz <= lo + k: in place */
          if (cols[nnz - 1] >= rstart && cols[nnz - 1] < rend)
            nd++;
          else
            no++;
        }
        p = (cols[nnz - 1] >= rstart && cols[nnz - 1] < rend) ? nd - 1 : -no; /* off-diagonal: -(place + 1) */
        if (e < ncoo)
          place[e] = p;
        else
          in_place[e - ncoo] = p;
      }
      ia[i + 1] = nnz;
    }
    PetscCall(PetscMalloc1(nnz, &ja));
    PetscCall(PetscArraycpy(ja, cols, nnz));
    PetscCall(PetscFree2(order, cols));
    PetscCall(PetscFree(start));
  }
  PetscCall(PetscFree2(in_i, in_j));
  PetscCall(MatMPIAIJSetPreallocationCSR(J, ia, ja, NULL));
  /* the places assume that each block keeps a row's columns in the global order: checked, entry by entry */
  {
    Mat             Ad, Ao;
    const PetscInt *garray, *ai, *aj, *bi, *bj;
    PetscInt        na, nb;
    PetscBool       done, same = PETSC_TRUE;
    PetscCall(MatMPIAIJGetSeqAIJ(J, &Ad, &Ao, &garray));
    PetscCall(MatGetRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &na, &ai, &aj, &done));
    PetscCheck(done && na == n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No rows of the diagonal block"); /* SeqAIJ: never */
    PetscCall(MatGetRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &nb, &bi, &bj, &done));
    PetscCheck(done && nb == n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "No rows of the off-diagonal block");
    same = (PetscBool)(ai[n] == nd && bi[n] == no);
    for (PetscInt i = 0; i < n && same; i++) {
      PetscInt a = ai[i], b = bi[i];
      for (PetscInt k = ia[i]; k < ia[i + 1] && same; k++) {
        if (ja[k] >= rstart && ja[k] < rend)
          same = (PetscBool)(a < ai[i + 1] && aj[a++] == ja[k] - rstart);
        else
          same = (PetscBool)(b < bi[i + 1] && garray[bj[b++]] == ja[k]);
      }
      same = (PetscBool)(same && a == ai[i + 1] && b == bi[i + 1]);
    }
    PetscCall(MatRestoreRowIJ(Ad, 0, PETSC_FALSE, PETSC_FALSE, &na, &ai, &aj, &done));
    PetscCall(MatRestoreRowIJ(Ao, 0, PETSC_FALSE, PETSC_FALSE, &nb, &bi, &bj, &done));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPIU_BOOL, MPI_LAND, comm));
    PetscCheck(same, comm, PETSC_ERR_PLIB, "The Jacobian's blocks do not keep the preallocated column order");
  }
  PetscCall(PetscFree(ia));
  PetscCall(PetscFree(ja));
  for (PetscInt k = 0; k < ncoo; k++) {
    const PetscInt i = sys->coo_i[k];
    if (i >= rstart && i < rend)
      place[k] = place[k] >= 0 ? place[k] : nd - place[k] - 1;
    else
      place[k] += nd + no;
  }
  for (PetscInt t = 0; t < nin; t++) in_place[t] = in_place[t] >= 0 ? in_place[t] : nd - in_place[t] - 1;
  PetscCall(PetscFree(sys->coo_pos)); /* of an earlier recording that stopped with an error */
  PetscCall(PetscFree(sys->incoming_pos));
  PetscCall(PetscFree2(sys->remote, sys->incoming));
  sys->coo_pos      = place;
  sys->incoming_pos = in_place;
  sys->nnz_d        = nd;
  sys->nnz_do       = nd + no;
  sys->nremote      = nrem;
  sys->nincoming    = nin;
  PetscCall(PetscMalloc2(nrem, &sys->remote, nin, &sys->incoming));
  PetscFunctionReturn(0);
}

/* The first assembly records the COO pattern and preallocates the matrix exactly from it; later assemblies only
   write values, in the same order (see MbsSystem). The matrix keeps the pattern, so the recorded indices are freed;
   so are the values, but for matrix types other than SeqAIJ and MPIAIJ (PETSc's COO assembly), where they shrink to
   their count. */
PetscErrorCode MbsSystemAssemblyEnd(MbsSystem sys, Mat J)
{
  MPI_Comm comm = PetscObjectComm((PetscObject)J);

  PetscFunctionBegin;
  if (sys->directmat) {
    PetscInt bad = sys->pos != sys->ncoo;
    PetscCheck(J == sys->directmat, PETSC_COMM_SELF, PETSC_ERR_PLIB, "Jacobian assembly ended on another matrix");
    /* on several ranks checked together: one rank's error would leave the others waiting for its entries */
    if (sys->sf) PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPIU_INT, MPI_MAX, comm));
    PetscCheck(!bad, comm, PETSC_ERR_PLIB,
               "Jacobian assembly: the entries written and those of the recorded pattern differ (here %" PetscInt_FMT
               " and %" PetscInt_FMT ")",
               sys->pos, sys->ncoo);
    PetscCall(MbsSystemDirectEnd(sys));
    PetscFunctionReturn(0);
  }
  if (sys->recording) {
    PetscBool isseq, ismpi;
    sys->ncoo = sys->pos;
    /* exactly SeqAIJ or MPIAIJ: a subtype that keeps its own copy of the values (seqaijcrl) needs MatSetValuesCOO() */
    PetscCall(PetscObjectTypeCompare((PetscObject)J, MATSEQAIJ, &isseq));
    PetscCall(PetscObjectTypeCompare((PetscObject)J, MATMPIAIJ, &ismpi));
    if (isseq || ismpi) {
      if (isseq)
        PetscCall(MbsSystemPreallocateSeq(sys, J));
      else
        PetscCall(MbsSystemPreallocateMPI(sys, J));
      sys->recording = PETSC_FALSE;
      sys->inplace   = PETSC_TRUE;
      PetscCall(MbsSystemDirectBegin(sys, J));
      for (PetscInt k = 0; k < sys->ncoo; k++) MbsSystemPut(sys, k, sys->coo_v[k]);
      PetscCall(MbsSystemDirectEnd(sys));
      PetscCall(PetscFree(sys->coo_v));
    } else {
      PetscScalar *v;
      PetscCall(MatSetPreallocationCOO(J, sys->ncoo, sys->coo_i, sys->coo_j));
      PetscCall(PetscMalloc1(sys->ncoo, &v));
      PetscCall(PetscArraycpy(v, sys->coo_v, sys->ncoo));
      PetscCall(PetscFree(sys->coo_v));
      sys->coo_v = v;
    }
    PetscCall(PetscFree(sys->coo_i));
    PetscCall(PetscFree(sys->coo_j));
    sys->capcoo    = sys->ncoo;
    sys->recording = PETSC_FALSE;
    if (isseq || ismpi) PetscFunctionReturn(0);
  } else { /* checked on every rank together: one rank's error would leave the others waiting in MatSetValuesCOO() */
    PetscInt bad = sys->pos != sys->ncoo;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPIU_INT, MPI_MAX, comm));
    PetscCheck(
      !bad, comm, PETSC_ERR_PLIB,
      "Jacobian assembly: the entries written and those of the recorded pattern differ on a rank (here %" PetscInt_FMT
      " and %" PetscInt_FMT ")",
      sys->pos, sys->ncoo);
  }
  PetscCall(MatSetValuesCOO(J, sys->coo_v, INSERT_VALUES));
  PetscFunctionReturn(0);
}

/* Room for n more entries of the recording assembly. The triples grow by realloc: glibc moves a large block's pages
   (mremap) instead of copying them, so a growth does not hold the old and the new arrays at once (a chain of 10^6
   particles records 1.6e8 triples, 2.6 GB), and the capacity beyond the entries written is never touched. */
static PetscErrorCode MbsSystemReserve(MbsSystem sys, PetscInt n)
{
  PetscFunctionBegin;
  if (sys->pos + n <= sys->capcoo) PetscFunctionReturn(0);
  PetscCheck(sys->recording, PetscObjectComm((PetscObject)sys->model), PETSC_ERR_PLIB,
             "Jacobian assembly writes more entries than its recorded pattern");
  {
    const PetscInt cap = PetscMax(2 * sys->capcoo, sys->pos + n + 1024);
    PetscCall(PetscRealloc(sizeof(PetscInt) * cap, &sys->coo_i));
    PetscCall(PetscRealloc(sizeof(PetscInt) * cap, &sys->coo_j));
    PetscCall(PetscRealloc(sizeof(PetscScalar) * cap, &sys->coo_v));
    sys->capcoo = cap;
  }
  PetscFunctionReturn(0);
}

/* Global index in X of local index l of field f: a ghosted coordinate or an owned constraint row. */
static inline PetscInt MbsSystemGlobalIndex(MbsSystem sys, PetscInt f, PetscInt l)
{
  if (sys->kind[f] == MBS_FIELD_COORDINATE) {
    const PetscInt r = sys->lq_rank[l];
    return sys->rank_xstart[r] + MbsSystemRankFieldOffset(sys, r, f) + sys->lq_global[l];
  }
  return sys->rank_xstart[sys->model->rank] + sys->foff[f] + l;
}

/* Add a dense block v (nr x nc, row-major) at local rows rl of field rf and local columns cl of field cf. */
static PetscErrorCode MbsSystemAddBlock(MbsSystem sys, PetscInt rf, PetscInt nr, const PetscInt *rl, PetscInt cf,
                                        PetscInt nc, const PetscInt *cl, const PetscReal *v, PetscReal alpha,
                                        MbsScale scale)
{
  const PetscReal *minv = sys->model->minv;

  PetscFunctionBegin;
  if (scale & MBS_SCALE_ROWT) { /* each row triple times its 3 x 3 matrix, into a copy */
    PetscReal tv[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];
    PetscCheck(scale == MBS_SCALE_ROWT && sys->rowT && nr % 3 == 0 && nr * nc <= MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ &&
                 sys->kind[rf] == MBS_FIELD_COORDINATE,
               PETSC_COMM_SELF, PETSC_ERR_PLIB, "A row transform needs coordinate rows in whole triples");
    for (PetscInt i = 0; i < nr; i += 3) {
      const PetscReal *T = sys->rowT + 9 * (rl[i] / 3);
      PetscCheck(rl[i] % 3 == 0 && rl[i + 1] == rl[i] + 1 && rl[i + 2] == rl[i] + 2, PETSC_COMM_SELF, PETSC_ERR_PLIB,
                 "A row transform needs coordinate rows in whole triples");
      for (int r = 0; r < 3; r++)
        for (PetscInt j = 0; j < nc; j++)
          tv[(i + r) * nc + j] =
            T[3 * r] * v[i * nc + j] + T[3 * r + 1] * v[(i + 1) * nc + j] + T[3 * r + 2] * v[(i + 2) * nc + j];
    }
    PetscCall(MbsSystemAddBlock(sys, rf, nr, rl, cf, nc, cl, tv, alpha, MBS_SCALE_NONE));
    PetscFunctionReturn(0);
  }
  PetscCall(MbsSystemReserve(sys, nr * nc));
  if (sys->recording) {
    for (PetscInt i = 0; i < nr; i++) {
      const PetscInt gi = MbsSystemGlobalIndex(sys, rf, rl[i]);
      for (PetscInt j = 0; j < nc; j++) {
        sys->coo_i[sys->pos + i * nc + j] = gi;
        sys->coo_j[sys->pos + i * nc + j] = MbsSystemGlobalIndex(sys, cf, cl[j]);
      }
    }
  }
  for (PetscInt i = 0; i < nr; i++) {
    const PetscReal sr = (scale & MBS_SCALE_MINV_ROW) ? alpha * minv[rl[i]] : alpha;
    for (PetscInt j = 0; j < nc; j++)
      MbsSystemPut(sys, sys->pos + i * nc + j, sr * ((scale & MBS_SCALE_MINV_COL) ? minv[cl[j]] : 1.0) * v[i * nc + j]);
  }
  sys->pos += nr * nc;
  PetscFunctionReturn(0);
}

/* Add the n entries v[k] at local row rl[k] of field rf and local column cl[k] of field cf (MBS_SCALE_ROWT excluded) */
static PetscErrorCode MbsSystemAddEntries(MbsSystem sys, PetscInt rf, PetscInt cf, PetscInt n, const PetscInt *rl,
                                          const PetscInt *cl, const PetscReal *v, PetscReal alpha, MbsScale scale)
{
  const PetscReal *minv = sys->model->minv;

  PetscFunctionBegin;
  PetscCheck(!(scale & MBS_SCALE_ROWT), PETSC_COMM_SELF, PETSC_ERR_PLIB, "A row transform needs whole blocks");
  PetscCall(MbsSystemReserve(sys, n));
  if (sys->recording) {
    for (PetscInt k = 0; k < n; k++) {
      sys->coo_i[sys->pos + k] = MbsSystemGlobalIndex(sys, rf, rl[k]);
      sys->coo_j[sys->pos + k] = MbsSystemGlobalIndex(sys, cf, cl[k]);
    }
  }
  for (PetscInt k = 0; k < n; k++)
    MbsSystemPut(sys, sys->pos + k,
                 alpha * ((scale & MBS_SCALE_MINV_ROW) ? minv[rl[k]] : 1.0) *
                   ((scale & MBS_SCALE_MINV_COL) ? minv[cl[k]] : 1.0) * v[k]);
  sys->pos += n;
  PetscFunctionReturn(0);
}

PetscErrorCode MbsJacAddBlock(MbsSystem sys, PetscInt row, PetscInt nr, const PetscInt rl[], PetscInt col, PetscInt nc,
                              const PetscInt cl[], const PetscReal v[], PetscReal alpha, MbsScale scale)
{
  PetscFunctionBegin;
  PetscCall(MbsSystemAddBlock(sys, row, nr, rl, col, nc, cl, v, alpha, scale));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsModelAssembleLocal(MbsModel model, PetscScalar *xloc, Vec work)
{
  PetscScalar *a;

  PetscFunctionBegin;
  PetscCall(VecGetArray(model->qghost, &a));
  PetscCall(PetscArraycpy(a, xloc, model->nq_ghosted));
  PetscCall(VecRestoreArray(model->qghost, &a));
  PetscCall(VecSet(work, 0.0));
  PetscCall(VecScatterBegin(model->qscatter, model->qghost, work, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(model->qscatter, model->qghost, work, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(MbsModelCoordinatesToLocal(model, work, xloc));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsJacAddIdentity(MbsSystem sys, PetscInt row, PetscInt col, PetscReal alpha, MbsScale scale)
{
  const PetscReal one = 1.0;
  const PetscInt  n   = MbsFieldLocalSize(sys->model, sys->kind[row]);

  PetscFunctionBegin;
  PetscCheck(sys->kind[row] == sys->kind[col], PetscObjectComm((PetscObject)sys->model), PETSC_ERR_ARG_INCOMP,
             "Identity block between fields of different kinds");
  for (PetscInt i = 0; i < n; i++) PetscCall(MbsSystemAddBlock(sys, row, 1, &i, col, 1, &i, &one, alpha, scale));
  PetscFunctionReturn(0);
}

/* Constraint-element block: rows and columns are the element's coordinates or its constraint rows. */
static inline void MbsElementRows(const MbsElement *el, PetscInt c, PetscInt *rows)
{
  for (int r = 0; r < el->kernel->ncon; r++) rows[r] = c + r;
}

PetscErrorCode MbsJacAddG(MbsSystem sys, PetscInt row, PetscInt col, const PetscScalar *q, PetscReal alpha,
                          MbsScale scale)
{
  const MbsModel model = sys->model;

  PetscFunctionBegin;
  MBS_FOR_CONSTRAINT_ELEMENTS(model, k, el, nq, nc, c)
  PetscReal qe[MBS_ELEM_MAX_NQ], ge[MBS_ELEM_MAX_CON], G[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ], rows[MBS_ELEM_MAX_CON];
  MbsElementGather(model, el, q, qe);
  MbsElementLocalIndices(model, el, idx);
  MbsElementRows(el, c, rows);
  el->kernel->constraint(&el->data, qe, ge, G);
  PetscCall(MbsSystemAddBlock(sys, row, nc, rows, col, nq, idx, G, alpha, scale));
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsJacAddConstraintRate(MbsSystem sys, PetscInt row, PetscInt col, const PetscScalar *q, PetscReal t,
                                       PetscReal alpha)
{
  const MbsModel model = sys->model;

  PetscFunctionBegin;
  MBS_FOR_DRIVES(model, k, el, nq, nc, c)
  PetscReal qe[MBS_ELEM_MAX_NQ], gt[MBS_ELEM_MAX_CON], Gt[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ], rows[MBS_ELEM_MAX_CON];
  MbsElementGather(model, el, q, qe);
  MbsElementLocalIndices(model, el, idx);
  MbsElementRows(el, c, rows);
  MbsElementConstraintRate(el, qe, t, gt, Gt);
  PetscCall(MbsSystemAddBlock(sys, row, nc, rows, col, nq, idx, Gt, alpha, MBS_SCALE_NONE));
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsJacAddGT(MbsSystem sys, PetscInt row, PetscInt col, const PetscScalar *q, PetscReal alpha,
                           MbsScale scale)
{
  const MbsModel model = sys->model;

  PetscFunctionBegin;
  MBS_FOR_CONSTRAINT_ELEMENTS(model, k, el, nq, nc, c)
  PetscReal qe[MBS_ELEM_MAX_NQ], ge[MBS_ELEM_MAX_CON], G[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ],
    GT[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ];
  PetscInt idx[MBS_ELEM_MAX_NQ], rows[MBS_ELEM_MAX_CON];
  MbsElementGather(model, el, q, qe);
  MbsElementLocalIndices(model, el, idx);
  MbsElementRows(el, c, rows);
  el->kernel->constraint(&el->data, qe, ge, G);
  for (int i = 0; i < nq; i++)
    for (int r = 0; r < nc; r++) GT[i * nc + r] = G[r * nq + i];
  PetscCall(MbsSystemAddBlock(sys, row, nq, idx, col, nc, rows, GT, alpha, scale));
  MBS_END_FOR
  PetscFunctionReturn(0);
}

/*
  The entries of T = sum_r mu_r H_r of an element whose Hessian blocks are multiples of the identity
  (kernel->hessian_isotropic): the diagonals of its 3 x 3 blocks, at local coordinates idx. A block whose coefficient is
  zero in every H_r is left out when H does not depend on time (no time coefficients; H is then fixed for the element,
  so every assembly writes the same entries); a drive's blocks are all kept, since a coefficient zero at one time may
  not be at another. n <= nq^2 / 3.
*/
static void MbsElementIsotropicT(const MbsElement *el, int nq, int nc, const PetscReal *H, const PetscScalar *mu,
                                 const PetscInt *idx, PetscInt *n, PetscInt *ri, PetscInt *ci, PetscReal *tv)
{
  const PetscBool fixed = (PetscBool)!el->kernel->time_coefficients;

  *n = 0;
  for (int a = 0; a < nq; a += 3)
    for (int b = 0; b < nq; b += 3) {
      PetscReal t    = 0;
      PetscBool used = (PetscBool)!fixed;
      for (int r = 0; r < nc; r++) {
        const PetscReal hab = H[((size_t)r * nq + a) * nq + b];
        t += PetscRealPart(mu[r]) * hab;
        if (hab != 0) used = PETSC_TRUE;
      }
      if (!used) continue;
      for (int d = 0; d < 3; d++) {
        ri[*n] = idx[a + d];
        ci[*n] = idx[b + d];
        tv[*n] = t;
        (*n)++;
      }
    }
}

PetscErrorCode MbsJacAddT(MbsSystem sys, PetscInt row, PetscInt col, const PetscScalar *mu, PetscReal alpha,
                          MbsScale scale)
{
  const MbsModel model = sys->model;
  PetscReal      H[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ], T[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];

  PetscFunctionBegin;
  MBS_FOR_CONSTRAINT_ELEMENTS(model, k, el, nq, nc, c)
  if (el->kernel->linear) continue;
  PetscInt idx[MBS_ELEM_MAX_NQ];
  MbsElementLocalIndices(model, el, idx);
  el->kernel->constraint_hessian(&el->data, H);
  if (el->kernel->hessian_isotropic && !(scale & MBS_SCALE_ROWT)) {
    PetscInt  n;
    PetscInt  ri[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ / 3], ci[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ / 3];
    PetscReal tv[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ / 3];
    MbsElementIsotropicT(el, nq, nc, H, mu + c, idx, &n, ri, ci, tv);
    PetscCall(MbsSystemAddEntries(sys, row, col, n, ri, ci, tv, alpha, scale));
    continue;
  }
  for (int ij = 0; ij < nq * nq; ij++) {
    T[ij] = 0;
    for (int r = 0; r < nc; r++) T[ij] += PetscRealPart(mu[c + r]) * H[(size_t)r * nq * nq + ij];
  }
  PetscCall(MbsSystemAddBlock(sys, row, nq, idx, col, nq, idx, T, alpha, scale));
  MBS_END_FOR
  PetscFunctionReturn(0);
}

/* Columns H_r w of the element, as an nq x nc block. */
static void MbsElementHw(const MbsElement *el, const PetscReal *H, const PetscReal *we, PetscReal *Hw)
{
  const int nq = MbsElemNq(&el->data), nc = el->kernel->ncon;
  for (int i = 0; i < nq; i++)
    for (int r = 0; r < nc; r++) {
      const PetscReal *Hri = H + (size_t)(r * nq + i) * nq;
      PetscReal        s   = 0;
      for (int j = 0; j < nq; j++) s += Hri[j] * we[j];
      Hw[i * nc + r] = s;
    }
}

PetscErrorCode MbsJacAddHw(MbsSystem sys, PetscInt row, PetscInt col, const PetscScalar *w, PetscReal alpha,
                           MbsScale scale)
{
  const MbsModel model = sys->model;
  PetscReal      H[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];

  PetscFunctionBegin;
  MBS_FOR_CONSTRAINT_ELEMENTS(model, k, el, nq, nc, c)
  if (el->kernel->linear) continue;
  PetscReal we[MBS_ELEM_MAX_NQ], Hw[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ], rows[MBS_ELEM_MAX_CON];
  MbsElementGather(model, el, w, we);
  MbsElementLocalIndices(model, el, idx);
  MbsElementRows(el, c, rows);
  el->kernel->constraint_hessian(&el->data, H);
  MbsElementHw(el, H, we, Hw);
  PetscCall(MbsSystemAddBlock(sys, row, nq, idx, col, nc, rows, Hw, alpha, scale));
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsJacAddHwT(MbsSystem sys, PetscInt row, PetscInt col, const PetscScalar *w, PetscReal alpha)
{
  const MbsModel model = sys->model;
  PetscReal      H[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];

  PetscFunctionBegin;
  MBS_FOR_CONSTRAINT_ELEMENTS(model, k, el, nq, nc, c)
  if (el->kernel->linear) continue;
  PetscReal we[MBS_ELEM_MAX_NQ], Hw[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ], HwT[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ], rows[MBS_ELEM_MAX_CON];
  MbsElementGather(model, el, w, we);
  MbsElementLocalIndices(model, el, idx);
  MbsElementRows(el, c, rows);
  el->kernel->constraint_hessian(&el->data, H);
  MbsElementHw(el, H, we, Hw);
  for (int i = 0; i < nq; i++)
    for (int r = 0; r < nc; r++) HwT[r * nq + i] = Hw[i * nc + r];
  PetscCall(MbsSystemAddBlock(sys, row, nc, rows, col, nq, idx, HwT, alpha, MBS_SCALE_NONE));
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsJacAddPotentialHessian(MbsSystem sys, PetscInt row, PetscInt col, const PetscScalar *q,
                                         PetscReal alpha, MbsScale scale)
{
  const MbsModel model = sys->model;

  PetscFunctionBegin;
  MBS_FOR_POTENTIAL_ELEMENTS(model, k, el, nq)
  if (el->kernel->linear) continue; /* no second derivatives (gravity) */
  PetscReal qe[MBS_ELEM_MAX_NQ], K[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ];
  MbsElementGather(model, el, q, qe);
  MbsElementLocalIndices(model, el, idx);
  el->kernel->hessian(&el->data, qe, K);
  PetscCall(MbsSystemAddBlock(sys, row, nq, idx, col, nq, idx, K, alpha * MbsElementLoadScale(model, el), scale));
  MBS_END_FOR
  PetscFunctionReturn(0);
}

/* aq [M^-1] df/dqm + av [M^-1] df/dvm at the midpoint and mean velocity of (q0, q1) */
PetscErrorCode MbsJacAddForceWeights(MbsSystem sys, PetscInt row, PetscInt col, const PetscScalar *q0,
                                     const PetscScalar *q1, PetscReal h, PetscReal t, PetscReal aq, PetscReal av,
                                     MbsScale scale)
{
  const MbsModel model = sys->model;

  PetscFunctionBegin;
  MBS_FOR_FORCE_ELEMENTS(model, k, el, nq)
  PetscReal qm[MBS_ELEM_MAX_NQ], vm[MBS_ELEM_MAX_NQ], fe[MBS_ELEM_MAX_NQ], Jq[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ],
    Jv[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];
  PetscInt idx[MBS_ELEM_MAX_NQ];
  MbsElementStepMidpoint(model, el, q0, q1, h, qm, vm);
  MbsElementLocalIndices(model, el, idx);
  el->kernel->force(&el->data, qm, vm, t, fe, Jq, Jv);
  for (int i = 0; i < nq * nq; i++) Jq[i] = aq * Jq[i] + av * Jv[i];
  PetscCall(MbsSystemAddBlock(sys, row, nq, idx, col, nq, idx, Jq, MbsElementLoadScale(model, el), scale));
  MBS_END_FOR
  PetscFunctionReturn(0);
}

/* alpha d f(qm, vm) / d q1, with dqm/dq1 = 1/2 and dvm/dq1 = 1/h */
PetscErrorCode MbsJacAddForce(MbsSystem sys, PetscInt row, PetscInt col, const PetscScalar *q0, const PetscScalar *q1,
                              PetscReal h, PetscReal t, PetscReal alpha)
{
  PetscFunctionBegin;
  PetscCall(MbsJacAddForceWeights(sys, row, col, q0, q1, h, t, 0.5 * alpha, alpha / h, MBS_SCALE_NONE));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsJacAddDiscreteGradient(MbsSystem sys, PetscInt row, PetscInt col, const PetscScalar *q0,
                                         const PetscScalar *q1, PetscReal alpha)
{
  const MbsModel model = sys->model;

  PetscFunctionBegin;
  MBS_FOR_POTENTIAL_ELEMENTS(model, k, el, nq)
  if (el->kernel->linear) continue; /* its discrete gradient is constant (gravity) */
  PetscReal q0e[MBS_ELEM_MAX_NQ], q1e[MBS_ELEM_MAX_NQ], dg[MBS_ELEM_MAX_NQ], K[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ];
  MbsElementGather(model, el, q0, q0e);
  MbsElementGather(model, el, q1, q1e);
  MbsElementLocalIndices(model, el, idx);
  el->kernel->discrete_gradient(&el->data, q0e, q1e, dg, K);
  PetscCall(
    MbsSystemAddBlock(sys, row, nq, idx, col, nq, idx, K, alpha * MbsElementLoadScale(model, el), MBS_SCALE_NONE));
  MBS_END_FOR
  PetscFunctionReturn(0);
}

/*
  MbsJacAddCoordinateMatrix - Adds alpha A into rows of coordinate field `row` and columns of coordinate field `col`,
  A a coordinate-layout matrix (rows and columns numbered as the state vectors, this rank owning the rows of its
  coordinates; MbsModelCreateCoordinateMatrix()), assembled. Its nonzero pattern at the recording assembly is the one
  written at every later assembly: A must keep it (MatZeroEntries() does), and a changed pattern is an error.
*/
PetscErrorCode MbsJacAddCoordinateMatrix(MbsSystem sys, PetscInt row, PetscInt col, Mat A, PetscReal alpha)
{
  const MbsModel model = sys->model;
  const PetscInt xrow  = sys->rank_xstart[model->rank] + sys->foff[row];
  PetscInt       rstart, rend;
  MatInfo        info;

  PetscFunctionBegin;
  PetscCheck(sys->kind[row] == MBS_FIELD_COORDINATE && sys->kind[col] == MBS_FIELD_COORDINATE,
             PetscObjectComm((PetscObject)model), PETSC_ERR_ARG_INCOMP,
             "A coordinate matrix goes into coordinate fields");
  PetscCall(MatGetOwnershipRange(A, &rstart, &rend));
  PetscCheck(rstart == model->rank_qstart[model->rank] && rend == model->rank_qstart[model->rank + 1], PETSC_COMM_SELF,
             PETSC_ERR_ARG_SIZ,
             "The coordinate matrix owns rows [%" PetscInt_FMT ", %" PetscInt_FMT
             ") on rank %d, the model's coordinates "
             "are [%" PetscInt_FMT ", %" PetscInt_FMT "): create it with MbsModelCreateCoordinateMatrix()",
             rstart, rend, (int)model->rank, model->rank_qstart[model->rank], model->rank_qstart[model->rank + 1]);
  PetscCall(MatGetInfo(A, MAT_LOCAL, &info)); /* the entries of this rank's rows */
  PetscCall(MbsSystemReserve(sys, (PetscInt)info.nz_used));
  for (PetscInt i = rstart; i < rend; i++) {
    const PetscInt    *cols;
    const PetscScalar *vals;
    PetscInt           n;
    PetscCall(MatGetRow(A, i, &n, &cols, &vals));
    if (sys->recording)
      for (PetscInt k = 0; k < n; k++) {
        const PetscInt r         = MbsRangeOwner(model->rank_qstart, model->size, cols[k]);
        sys->coo_i[sys->pos + k] = xrow + i - rstart;
        sys->coo_j[sys->pos + k] =
          sys->rank_xstart[r] + MbsSystemRankFieldOffset(sys, r, col) + cols[k] - model->rank_qstart[r];
      }
    for (PetscInt k = 0; k < n; k++) MbsSystemPut(sys, sys->pos + k, alpha * vals[k]);
    sys->pos += n;
    PetscCall(MatRestoreRow(A, i, &n, &cols, &vals));
  }
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------------------------------------- */
/* Velocity constraints (docs/nonholonomic.md) */

#define MBS_FOR_VCONSTRAINT_ELEMENTS(model, k, el, nq, nv, v)            \
  for (PetscInt k = 0; k < (model)->nelem_local; k++) {                  \
    const MbsElement *el = MbsModelLocalElement(model, k);               \
    const int         nv = el->kernel->nvcon, nq = MbsElemNq(&el->data); \
    const PetscInt    v = (model)->elem_v[k];                            \
    if (!nv) continue;

/* One element's A(q) (nv x nq) and, with dA, its derivative, at the ghosted local coordinates q */
static void MbsElementVConstraint(MbsModel model, const MbsElement *el, const PetscScalar *q, PetscReal *A,
                                  PetscReal *dA)
{
  PetscReal qe[MBS_ELEM_MAX_NQ];

  MbsElementGather(model, el, q, qe);
  el->kernel->velocity_constraint(&el->data, qe, A, dA);
}

PetscErrorCode MbsOpVConstraintAdd(MbsModel model, const PetscScalar *q, const PetscScalar *w, PetscReal alpha,
                                   PetscScalar *c)
{
  PetscFunctionBegin;
  MBS_FOR_VCONSTRAINT_ELEMENTS(model, k, el, nq, nv, v)
  PetscReal A[MBS_ELEM_MAX_VCON * MBS_ELEM_MAX_NQ], we[MBS_ELEM_MAX_NQ];
  MbsElementVConstraint(model, el, q, A, NULL);
  MbsElementGather(model, el, w, we);
  for (int r = 0; r < nv; r++) {
    PetscReal s = 0;
    for (int i = 0; i < nq; i++) s += A[r * nq + i] * we[i];
    c[v + r] += alpha * s;
  }
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpVConstraintTMultAdd(MbsModel model, const PetscScalar *q, const PetscScalar *mu, PetscReal alpha,
                                        MbsScale scale, PetscScalar *f)
{
  PetscFunctionBegin;
  PetscCheck(scale == MBS_SCALE_NONE || scale == MBS_SCALE_MINV_ROW, PetscObjectComm((PetscObject)model),
             PETSC_ERR_ARG_WRONG, "A^T mu can only be scaled by M^-1 on its rows");
  MBS_FOR_VCONSTRAINT_ELEMENTS(model, k, el, nq, nv, v)
  PetscReal A[MBS_ELEM_MAX_VCON * MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ];
  MbsElementVConstraint(model, el, q, A, NULL);
  MbsElementLocalIndices(model, el, idx);
  for (int i = 0; i < nq; i++) {
    PetscReal s = 0;
    for (int r = 0; r < nv; r++) s += A[r * nq + i] * PetscRealPart(mu[v + r]);
    f[idx[i]] += (scale == MBS_SCALE_MINV_ROW ? alpha * model->minv[idx[i]] : alpha) * s;
  }
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsJacAddA(MbsSystem sys, PetscInt row, PetscInt col, const PetscScalar *q, PetscReal alpha,
                          MbsScale scale)
{
  const MbsModel model = sys->model;

  PetscFunctionBegin;
  MBS_FOR_VCONSTRAINT_ELEMENTS(model, k, el, nq, nv, v)
  PetscReal A[MBS_ELEM_MAX_VCON * MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ], rows[MBS_ELEM_MAX_VCON];
  MbsElementVConstraint(model, el, q, A, NULL);
  MbsElementLocalIndices(model, el, idx);
  for (int r = 0; r < nv; r++) rows[r] = v + r;
  PetscCall(MbsSystemAddBlock(sys, row, nv, rows, col, nq, idx, A, alpha, scale));
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsJacAddAT(MbsSystem sys, PetscInt row, PetscInt col, const PetscScalar *q, PetscReal alpha,
                           MbsScale scale)
{
  const MbsModel model = sys->model;

  PetscFunctionBegin;
  MBS_FOR_VCONSTRAINT_ELEMENTS(model, k, el, nq, nv, v)
  PetscReal A[MBS_ELEM_MAX_VCON * MBS_ELEM_MAX_NQ], AT[MBS_ELEM_MAX_VCON * MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ], cols[MBS_ELEM_MAX_VCON];
  MbsElementVConstraint(model, el, q, A, NULL);
  MbsElementLocalIndices(model, el, idx);
  for (int r = 0; r < nv; r++) {
    cols[r] = v + r;
    for (int i = 0; i < nq; i++) AT[i * nv + r] = A[r * nq + i];
  }
  PetscCall(MbsSystemAddBlock(sys, row, nq, idx, col, nv, cols, AT, alpha, scale));
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsJacAddAw(MbsSystem sys, PetscInt row, PetscInt col, const PetscScalar *q, const PetscScalar *w,
                           PetscReal alpha, MbsScale scale)
{
  const MbsModel model = sys->model;
  PetscReal      dA[MBS_ELEM_MAX_VCON * MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];

  PetscFunctionBegin;
  MBS_FOR_VCONSTRAINT_ELEMENTS(model, k, el, nq, nv, v)
  PetscReal A[MBS_ELEM_MAX_VCON * MBS_ELEM_MAX_NQ], B[MBS_ELEM_MAX_VCON * MBS_ELEM_MAX_NQ], we[MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ], rows[MBS_ELEM_MAX_VCON];
  MbsElementVConstraint(model, el, q, A, dA);
  MbsElementGather(model, el, w, we);
  MbsElementLocalIndices(model, el, idx);
  for (int r = 0; r < nv; r++) {
    rows[r] = v + r;
    for (int j = 0; j < nq; j++) {
      PetscReal s = 0;
      for (int i = 0; i < nq; i++) s += dA[(r * nq + i) * nq + j] * we[i];
      B[r * nq + j] = s;
    }
  }
  PetscCall(MbsSystemAddBlock(sys, row, nv, rows, col, nq, idx, B, alpha, scale));
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsJacAddATmu(MbsSystem sys, PetscInt row, PetscInt col, const PetscScalar *q, const PetscScalar *mu,
                             PetscReal alpha, MbsScale scale)
{
  const MbsModel model = sys->model;
  PetscReal      dA[MBS_ELEM_MAX_VCON * MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];

  PetscFunctionBegin;
  MBS_FOR_VCONSTRAINT_ELEMENTS(model, k, el, nq, nv, v)
  PetscReal A[MBS_ELEM_MAX_VCON * MBS_ELEM_MAX_NQ], B[MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];
  PetscInt  idx[MBS_ELEM_MAX_NQ];
  MbsElementVConstraint(model, el, q, A, dA);
  MbsElementLocalIndices(model, el, idx);
  for (int i = 0; i < nq; i++)
    for (int j = 0; j < nq; j++) {
      PetscReal s = 0;
      for (int r = 0; r < nv; r++) s += PetscRealPart(mu[v + r]) * dA[(r * nq + i) * nq + j];
      B[i * nq + j] = s;
    }
  PetscCall(MbsSystemAddBlock(sys, row, nq, idx, col, nq, idx, B, alpha, scale));
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpVConstraintMaxLocal(MbsModel model, const PetscScalar *q, const PetscScalar *w, PetscReal *cmax,
                                        PetscInt *elem)
{
  PetscFunctionBegin;
  *cmax = 0;
  *elem = -1;
  MBS_FOR_VCONSTRAINT_ELEMENTS(model, k, el, nq, nv, v)
  PetscReal A[MBS_ELEM_MAX_VCON * MBS_ELEM_MAX_NQ], we[MBS_ELEM_MAX_NQ];
  (void)v;
  MbsElementVConstraint(model, el, q, A, NULL);
  MbsElementGather(model, el, w, we);
  for (int r = 0; r < nv; r++) {
    PetscReal s = 0;
    for (int i = 0; i < nq; i++) s += A[r * nq + i] * we[i];
    if (!(PetscAbsReal(s) <= *cmax)) { /* NaN too */
      *cmax = PetscAbsReal(s);
      *elem = model->elem_local[k];
    }
  }
  MBS_END_FOR
  PetscFunctionReturn(0);
}

PetscErrorCode MbsOpVConstraintMax(MbsModel model, const PetscScalar *q, const PetscScalar *w, PetscReal *cmax)
{
  PetscReal m;
  PetscInt  elem;

  PetscFunctionBegin;
  PetscCall(MbsOpVConstraintMaxLocal(model, q, w, &m, &elem));
  PetscCall(MPIU_Allreduce(&m, cmax, 1, MPIU_REAL, MPIU_MAX, PetscObjectComm((PetscObject)model)));
  PetscFunctionReturn(0);
}

PetscErrorCode MbsModelConstraintAxialCurvature(MbsModel model, const PetscScalar *q, PetscReal kappa[])
{
  PetscFunctionBegin;
  PetscCall(PetscArrayzero(kappa, model->ncon_local));
  for (PetscInt k = 0; k < model->nelem_local; k++) {
    const MbsElement *el = MbsModelLocalElement(model, k);
    const int         nc = el->kernel->ncon, nq = MbsElemNq(&el->data);
    PetscReal         qe[MBS_ELEM_MAX_NQ], ge[MBS_ELEM_MAX_CON], Ge[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ];
    PetscReal         H[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ * MBS_ELEM_MAX_NQ];

    if (!nc || el->kernel->linear) continue;
    MbsElementGather(model, el, q, qe);
    el->kernel->constraint(&el->data, qe, ge, Ge);
    el->kernel->constraint_hessian(&el->data, H);
    for (int r = 0; r < nc; r++) {
      const PetscReal *g  = Ge + r * nq;
      PetscReal        gg = 0, gHg = 0;
      for (int i = 0; i < nq; i++) {
        const PetscReal *Hri = H + (size_t)(r * nq + i) * nq;
        PetscReal        s   = 0;
        for (int j = 0; j < nq; j++) s += Hri[j] * g[j];
        gHg += g[i] * s;
        gg += g[i] * g[i];
      }
      kappa[model->elem_c[k] + r] = gg > 0 ? gHg / (gg * gg) : 0;
    }
  }
  PetscFunctionReturn(0);
}

/* An empty G (its pattern preallocated) for MbsModelAssembleScaledG() */
static PetscErrorCode MbsModelCreateScaledG(MbsModel model, Mat *G)
{
  PetscInt *dnz, *onz;

  PetscFunctionBegin;
  PetscCall(PetscCalloc2(model->ncon_local, &dnz, model->ncon_local, &onz));
  for (PetscInt k = 0; k < model->nelem_local; k++) {
    const MbsElement *el = MbsModelLocalElement(model, k);
    for (int s = 0; s < 2; s++) {
      const PetscInt b = el->body[s];
      if (b < 0) continue;
      for (int r = 0; r < el->kernel->ncon; r++) {
        if (model->body_rank[b] == model->rank)
          dnz[model->elem_c[k] + r] += 3 * model->body_type[b];
        else
          onz[model->elem_c[k] + r] += 3 * model->body_type[b];
      }
    }
  }
  PetscCall(MatCreateAIJ(PetscObjectComm((PetscObject)model), model->ncon_local, model->nq_local, model->ncon,
                         model->nq, 0, dnz, 0, onz, G));
  PetscCall(PetscFree2(dnz, onz));
  PetscCall(MatSetOption(*G, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  PetscFunctionReturn(0);
}

/* G(q) M^-1/2 at the ghosted local coordinates q as a distributed AIJ matrix: rows are the constraint rows (owned by
   the element's rank), columns the coordinates. MAT_REUSE_MATRIX refills a G made by this function for the same model
   (redundancy.c, the Schur-AMG preconditioner's G M^-1 G^T). */
PetscErrorCode MbsModelAssembleScaledG(MbsModel model, const PetscScalar *q, MatReuse reuse, Mat *G)
{
  const PetscInt rstart = model->rank_cstart[model->rank];

  PetscFunctionBegin;
  if (reuse == MAT_REUSE_MATRIX)
    PetscCall(MatZeroEntries(*G));
  else
    PetscCall(MbsModelCreateScaledG(model, G));
  for (PetscInt k = 0; k < model->nelem_local; k++) {
    const MbsElement *el = MbsModelLocalElement(model, k);
    const int         nc = el->kernel->ncon, nq = MbsElemNq(&el->data);
    PetscReal         qe[MBS_ELEM_MAX_NQ], ge[MBS_ELEM_MAX_CON], Ge[MBS_ELEM_MAX_CON * MBS_ELEM_MAX_NQ];
    PetscInt          lidx[MBS_ELEM_MAX_NQ], cols[MBS_ELEM_MAX_NQ], n = 0;
    PetscScalar       vals[MBS_ELEM_MAX_NQ];

    if (!nc) continue;
    MbsElementGather(model, el, q, qe);
    MbsElementLocalIndices(model, el, lidx);
    for (int s = 0; s < 2; s++) {
      const PetscInt b = el->body[s];
      if (b < 0) continue;
      for (PetscInt i = 0; i < 3 * (PetscInt)model->body_type[b]; i++) cols[n++] = model->body_q[b] + i;
    }
    el->kernel->constraint(&el->data, qe, ge, Ge);
    for (int r = 0; r < nc; r++) {
      const PetscInt row = rstart + model->elem_c[k] + r;
      for (int i = 0; i < nq; i++) vals[i] = Ge[r * nq + i] * PetscSqrtReal(model->minv[lidx[i]]);
      PetscCall(MatSetValues(*G, 1, &row, nq, cols, vals, INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(*G, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*G, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/*
  Global operators on the model, and the unknown layout of a scheme's nonlinear system.

  A scheme's unknown vector X is made of fields: coordinate-sized fields (q, p, v) and constraint-sized
  fields (lambda, gamma). Each rank owns one contiguous block of X, ordered field by field. Residuals
  and Jacobians are evaluated on the ghosted local form of X (coordinate fields include the coordinates
  of ghost bodies; constraint fields hold the rank's own rows), then added into the global residual by
  a reverse scatter, and into the Jacobian through PETSc's COO assembly with a pattern fixed at set-up.

  Operators, written on ghosted local arrays (q, w: coordinates; y, mu: constraint rows):
    MbsOpConstraintAdd          g  += alpha g(q)
    MbsOpGMultAdd               g  += alpha G(q) w
    MbsOpGTMultAdd              f  += alpha [M^-1] G(q)^T y   (M^-1 with MBS_SCALE_MINV_ROW)
    MbsOpHessianMultAdd         f  += alpha T(mu) w,  T(mu) = sum_k mu_k H_k  (skips affine elements)
    MbsOpGradientAdd            f  += alpha DV(q)
    MbsOpDiscreteGradientAdd    f  += alpha DGV(q0, q1)
  Element contributions to ghost coordinates are added into the ghost part of f and reach their owner
  through the reverse scatter, so every element is evaluated exactly once.
*/
#ifndef MBS_OPERATORS_H
#define MBS_OPERATORS_H

#include <petscmat.h>
#include <petscsf.h>
#include "model/modelimpl.h"

typedef enum {
  MBS_FIELD_COORDINATE, /* one entry per coordinate (q, p, v) */
  MBS_FIELD_CONSTRAINT, /* one entry per constraint row (lambda, gamma) */
  MBS_FIELD_VCONSTRAINT /* one entry per velocity constraint row (mu; docs/nonholonomic.md) */
} MbsFieldKind;

/* Diagonal scaling of a Jacobian block by M^-1 on its rows or columns. */
/* MBS_SCALE_ROWT (Jacobian blocks with coordinate rows, alone): each triple of rows, a 3-vector block of a body, is
   multiplied by the 3 x 3 matrix sys->rowT holds for it (a frame's transpose; src/schemes/dh.c) */
typedef enum {
  MBS_SCALE_NONE      = 0,
  MBS_SCALE_MINV_ROW  = 1,
  MBS_SCALE_MINV_COL  = 2,
  MBS_SCALE_MINV_BOTH = 3,
  MBS_SCALE_ROWT      = 4
} MbsScale;

typedef struct _n_MbsSystem *MbsSystem;
struct _n_MbsSystem {
  MbsModel      model;
  PetscInt      nfields;
  MbsFieldKind *kind;
  char        **name;
  PetscInt      nlocal, nglobal; /* unknowns */
  PetscInt      nghosted;        /* entries of the ghosted local vector */
  PetscInt     *loff;            /* field offsets in the ghosted local vector */
  PetscInt     *foff;            /* field offsets in this rank's block of X */
  PetscInt
    *lq_global; /* global index in X of each ghosted coordinate, relative to field offset (see MbsSystemCoordIndex) */
  PetscInt  *lq_rank;     /* owner of each ghosted coordinate */
  PetscInt  *rank_xstart; /* size+1 */
  IS        *is;
  Vec        X, Xloc, Floc;
  VecScatter scatter;
  /* Jacobian assembly. The first (recording) assembly writes COO triples (coo_i, coo_j, coo_v) and preallocates the
     matrix from them. Later ones write the same entries in the same order straight into the matrix's values, at
     coo_pos[k], the place of entry k (4 or 8 bytes per entry): on one rank (SeqAIJ) among J's nnz values; on several
     (MPIAIJ) among the diagonal block's (p < nnz_d) or the off-diagonal block's values (p - nnz_d < nnz_do - nnz_d),
     or, for rows of other ranks, in the send buffer (slot p - nnz_do of remote), which the star forest sf carries to
     the owners' incoming buffer (entry t added at incoming_pos[t], placed as coo_pos). Other matrix types: coo_v and
     MatSetValuesCOO() (PETSc's maps then hold 16 bytes per entry more). */
  PetscBool    recording, inplace; /* inplace: the pattern and places are set */
  PetscInt     ncoo, capcoo, pos, nnz_d, nnz_do, nremote, nincoming;
  PetscInt    *coo_i, *coo_j, *coo_pos, *incoming_pos;
  PetscScalar *coo_v, *remote, *incoming;
  PetscSF      sf;
  PetscScalar *direct, *direct_o; /* during an assembly in place: the values of directmat (its two blocks on MPIAIJ) */
  Mat          directmat;
  /* MBS_SCALE_ROWT: a row-major 3 x 3 matrix per ghosted coordinate triple (9 nq_ghosted / 3 entries), set by the
     scheme before the blocks that use it */
  const PetscReal *rowT;
};

PETSC_EXTERN PetscErrorCode MbsSystemCreate(MbsModel, PetscInt nfields, const MbsFieldKind kinds[],
                                            const char *const names[], MbsSystem *);
PETSC_EXTERN PetscErrorCode MbsSystemDestroy(MbsSystem *);
PETSC_EXTERN PetscErrorCode MbsSystemGlobalToLocal(MbsSystem, Vec X, Vec Xloc);
PETSC_EXTERN PetscErrorCode MbsSystemLocalToGlobalAdd(MbsSystem, Vec Floc, Vec F);
PETSC_EXTERN PetscErrorCode MbsSystemCreateMatrix(MbsSystem, Mat *);
PETSC_EXTERN PetscErrorCode MbsSystemAssemblyBegin(MbsSystem, Mat);
PETSC_EXTERN PetscErrorCode MbsSystemAssemblyEnd(MbsSystem, Mat);

/* A dense block v (nr x nc, row-major) at the ghosted local rows rl of field row and local columns cl of field col:
   per-body terms of a scheme (coordinate indices body_lq[b] + i, constraint rows, ...) */
PETSC_EXTERN PetscErrorCode MbsJacAddBlock(MbsSystem, PetscInt row, PetscInt nr, const PetscInt rl[], PetscInt col,
                                           PetscInt nc, const PetscInt cl[], const PetscReal v[], PetscReal alpha,
                                           MbsScale);
/* A ghosted local coordinate array of element contributions made whole: the ghost parts added to their owners, and
   every entry (owned and ghost) then the owner's sum; work is a coordinate-layout Vec. Collective. */
PETSC_EXTERN PetscErrorCode MbsModelAssembleLocal(MbsModel, PetscScalar *xloc, Vec work);

/* Scatter between a coordinate-layout Vec (like the state q, p) and a ghosted local coordinate array. */
PETSC_EXTERN PetscErrorCode MbsModelCoordinatesToLocal(MbsModel, Vec x, PetscScalar *xloc);
PETSC_EXTERN PetscErrorCode MbsModelLocalToCoordinates(MbsModel, const PetscScalar *xloc, Vec x);

/* Residual operators (ghosted local arrays) */
PETSC_EXTERN PetscErrorCode MbsModelAssembleScaledG(MbsModel, const PetscScalar *q, MatReuse, Mat *G);
/* kappa[r] = grad g_r^T g_r'' grad g_r / |grad g_r|^4 of each owned constraint row at the ghosted coordinates q: the
   constraint's curvature along its own gradient (L^2 / |d|^2 for a rod's (|d|^2 / L^2 - 1) / 2; 0 for a linear one) */
PETSC_EXTERN PetscErrorCode MbsModelConstraintAxialCurvature(MbsModel, const PetscScalar *q, PetscReal kappa[]);
PETSC_EXTERN PetscErrorCode MbsOpConstraintAdd(MbsModel, const PetscScalar *q, PetscReal alpha, PetscScalar *g);
PETSC_EXTERN PetscErrorCode MbsOpGMultAdd(MbsModel, const PetscScalar *q, const PetscScalar *w, PetscReal alpha,
                                          PetscScalar *g);
PETSC_EXTERN PetscErrorCode MbsOpGTMultAdd(MbsModel, const PetscScalar *q, const PetscScalar *y, PetscReal alpha,
                                           MbsScale, PetscScalar *f);
/* Fused passes (one constraint evaluation per element): f1 += a1 [M^-1] G(q)^T y1 and f2 += a2 [M^-1] G(q)^T y2
   (y2, f2 may be NULL); g += alpha g(q) (g may be NULL) and gw += beta G(q) w */
PETSC_EXTERN PetscErrorCode MbsOpGTMultAdd2(MbsModel, const PetscScalar *q, const PetscScalar *y1, PetscReal alpha1,
                                            MbsScale, PetscScalar *f1, const PetscScalar *y2, PetscReal alpha2,
                                            MbsScale, PetscScalar *f2);
PETSC_EXTERN PetscErrorCode MbsOpConstraintGMultAdd(MbsModel, const PetscScalar *q, const PetscScalar *w,
                                                    PetscReal alpha, PetscScalar *g, PetscReal beta, PetscScalar *gw);
PETSC_EXTERN PetscErrorCode MbsOpHessianMultAdd(MbsModel, const PetscScalar *mu, const PetscScalar *w, PetscReal alpha,
                                                PetscScalar *f);
PETSC_EXTERN PetscErrorCode MbsOpGradientAdd(MbsModel, const PetscScalar *q, PetscReal alpha, PetscScalar *f);
PETSC_EXTERN PetscErrorCode MbsOpDiscreteGradientAdd(MbsModel, const PetscScalar *q0, const PetscScalar *q1,
                                                     PetscReal alpha, PetscScalar *f);

/* Jacobian blocks: add alpha * block into rows of field `row` and columns of field `col` */
PETSC_EXTERN PetscErrorCode MbsJacAddIdentity(MbsSystem, PetscInt row, PetscInt col, PetscReal alpha,
                                              MbsScale); /* alpha I or alpha M^-1 */
PETSC_EXTERN PetscErrorCode MbsJacAddG(MbsSystem, PetscInt row, PetscInt col, const PetscScalar *q, PetscReal alpha,
                                       MbsScale); /* alpha G(q) [M^-1] */
PETSC_EXTERN PetscErrorCode MbsJacAddGT(MbsSystem, PetscInt row, PetscInt col, const PetscScalar *q, PetscReal alpha,
                                        MbsScale); /* alpha [M^-1] G(q)^T */
PETSC_EXTERN PetscErrorCode MbsJacAddT(MbsSystem, PetscInt row, PetscInt col, const PetscScalar *mu, PetscReal alpha,
                                       MbsScale); /* alpha [M^-1] T(mu) [M^-1] */
PETSC_EXTERN PetscErrorCode MbsJacAddHw(MbsSystem, PetscInt row, PetscInt col, const PetscScalar *w, PetscReal alpha,
                                        MbsScale); /* alpha [M^-1] [H_1 w .. H_m w] */
PETSC_EXTERN PetscErrorCode MbsJacAddHwT(MbsSystem, PetscInt row, PetscInt col, const PetscScalar *w,
                                         PetscReal alpha); /* alpha [H_1 w .. H_m w]^T */
PETSC_EXTERN PetscErrorCode MbsJacAddPotentialHessian(MbsSystem, PetscInt row, PetscInt col, const PetscScalar *q,
                                                      PetscReal alpha, MbsScale); /* alpha [M^-1] K(q) */
PETSC_EXTERN PetscErrorCode MbsJacAddDiscreteGradient(MbsSystem, PetscInt row, PetscInt col, const PetscScalar *q0,
                                                      const PetscScalar *q1, PetscReal alpha); /* alpha d DGV / d q1 */

/* Velocity constraints A(q) v = 0 (docs/nonholonomic.md), rows in the row space of MBS_FIELD_VCONSTRAINT fields:
     c += alpha A(q) w;  f += alpha [M^-1] A(q)^T mu
   and the Jacobian blocks alpha A(q) [M^-1] (rows: a velocity constraint field), alpha [M^-1] A(q)^T (columns: one),
   alpha d(A(q) w)/dq and alpha [M^-1] d(A(q)^T mu)/dq (coordinate columns). */
PETSC_EXTERN PetscErrorCode MbsOpVConstraintAdd(MbsModel, const PetscScalar *q, const PetscScalar *w, PetscReal alpha,
                                                PetscScalar *c);
PETSC_EXTERN PetscErrorCode MbsOpVConstraintTMultAdd(MbsModel, const PetscScalar *q, const PetscScalar *mu,
                                                     PetscReal alpha, MbsScale, PetscScalar *f);
PETSC_EXTERN PetscErrorCode MbsJacAddA(MbsSystem, PetscInt row, PetscInt col, const PetscScalar *q, PetscReal alpha,
                                       MbsScale);
PETSC_EXTERN PetscErrorCode MbsJacAddAT(MbsSystem, PetscInt row, PetscInt col, const PetscScalar *q, PetscReal alpha,
                                        MbsScale);
PETSC_EXTERN PetscErrorCode MbsJacAddAw(MbsSystem, PetscInt row, PetscInt col, const PetscScalar *q,
                                        const PetscScalar *w, PetscReal alpha, MbsScale);
PETSC_EXTERN PetscErrorCode MbsJacAddATmu(MbsSystem, PetscInt row, PetscInt col, const PetscScalar *q,
                                          const PetscScalar *mu, PetscReal alpha, MbsScale);
/* max |A(q) w| over the model (collective); over this rank's elements, with the worst element (-1 if none) */
PETSC_EXTERN PetscErrorCode MbsOpVConstraintMax(MbsModel, const PetscScalar *q, const PetscScalar *w, PetscReal *cmax);
PETSC_EXTERN PetscErrorCode MbsOpVConstraintMaxLocal(MbsModel, const PetscScalar *q, const PetscScalar *w,
                                                     PetscReal *cmax, PetscInt *elem);

/* Drives (rheonomic constraints, docs/drives.md). The model's constraint operators evaluate the drives with their
   time coefficients' mean over [t0, t1] (t0 == t1: at that time), which this sets; MbsOpConstraintMax[Local]()
   add dg/dt at t1 to G w. Not collective. */
PETSC_INTERN PetscErrorCode MbsModelSetConstraintTime(MbsModel, PetscReal t0, PetscReal t1);
/* g += alpha dg/dt (q, t) over the drives' rows; the Jacobian block alpha d(dg/dt)/dq */
PETSC_INTERN PetscErrorCode MbsOpConstraintRateAdd(MbsModel, const PetscScalar *q, PetscReal t, PetscReal alpha,
                                                   PetscScalar *g);
PETSC_INTERN PetscErrorCode MbsJacAddConstraintRate(MbsSystem, PetscInt row, PetscInt col, const PetscScalar *q,
                                                    PetscReal t, PetscReal alpha);
/* The work of the drives' constraint forces over the step q0 -> q1 (velocities v0 -> v1) with multipliers lambda and
   gamma (NULL: none), at the coefficients set for the step; this rank's part */
PETSC_INTERN PetscErrorCode MbsOpDriveWork(MbsModel, const PetscScalar *q0, const PetscScalar *q1,
                                           const PetscScalar *v0, const PetscScalar *v1, const PetscScalar *lam,
                                           const PetscScalar *gam, PetscReal *W);
/* W += -alpha lambda . G(qw) (q1 - q0) over the drives' rows: the work of one term of a scheme's constraint forces
   (MbsSchemeOps.reaction_terms) at the coefficients set for the step; this rank's part */
PETSC_INTERN PetscErrorCode MbsOpDriveWorkAt(MbsModel, const PetscScalar *qw, const PetscScalar *q0,
                                             const PetscScalar *q1, const PetscScalar *lam, PetscReal alpha,
                                             PetscReal *W);

/* Diagnostics over the whole model (collective): potential energy, max |g(q)|, max |G(q) w| */
PETSC_EXTERN PetscErrorCode MbsOpPotentialEnergy(MbsModel, const PetscScalar *q, PetscReal *V);
/* Force elements (dampers): f += alpha F(qm, vm, t) over the step q0 -> q1 of size h; this rank's work F . (q1 - q0),
   supplied (drives) and dissipated (dampers, counted positive); the Jacobian block alpha dF/dq1 */
/* One element's coordinates at the midpoint of the step q0 -> q1 of size h, and its mean velocity */
PETSC_INTERN void MbsElementStepMidpoint(MbsModel, const MbsElement *, const PetscScalar *q0, const PetscScalar *q1,
                                         PetscReal h, PetscReal qm[], PetscReal vm[]);
PETSC_EXTERN PetscErrorCode MbsOpForceAdd(MbsModel, const PetscScalar *q0, const PetscScalar *q1, PetscReal h,
                                          PetscReal t, PetscReal alpha, PetscScalar *f);
PETSC_EXTERN PetscErrorCode MbsOpForceWork(MbsModel, const PetscScalar *q0, const PetscScalar *q1, PetscReal h,
                                           PetscReal t, PetscReal *supplied, PetscReal *dissipated);
/* aq [M^-1] df/dqm + av [M^-1] df/dvm of the force elements at the midpoint and mean velocity of (q0, q1) */
PETSC_EXTERN PetscErrorCode MbsJacAddForceWeights(MbsSystem, PetscInt row, PetscInt col, const PetscScalar *q0,
                                                  const PetscScalar *q1, PetscReal h, PetscReal t, PetscReal aq,
                                                  PetscReal av, MbsScale);
PETSC_EXTERN PetscErrorCode MbsJacAddForce(MbsSystem, PetscInt row, PetscInt col, const PetscScalar *q0,
                                           const PetscScalar *q1, PetscReal h, PetscReal t, PetscReal alpha);
/* alpha A into rows of coordinate field row and columns of coordinate field col: A a coordinate-layout matrix,
   assembled, whose pattern stays that of the first (recording) assembly */
PETSC_EXTERN PetscErrorCode MbsJacAddCoordinateMatrix(MbsSystem, PetscInt row, PetscInt col, Mat A, PetscReal alpha);
PETSC_EXTERN PetscErrorCode MbsOpConstraintMax(MbsModel, const PetscScalar *q, const PetscScalar *w, PetscReal *gmax,
                                               PetscReal *gwmax);
PETSC_EXTERN PetscErrorCode MbsOpConstraintMaxLocal(MbsModel, const PetscScalar *q, const PetscScalar *w,
                                                    PetscReal max[2], PetscInt elem[2]);

#endif

/*
  Quadratic constraint rows: the joints of the director formulation built from points and body-fixed vectors
  (docs/joints.md). A row is

    g = c0 + sum_t coef_t Q_{i_t} . Q_{j_t} + sum_t l_t . Q_{k_t}

  with Q_j the 3-vector blocks of the element's coordinates (kernels.h), so G is affine in q and the Hessian is
  constant: exactly what keeps EM's midpoint constraint gradient a discrete gradient and the Jacobians cheap.
  Pure arithmetic; private to src/elements.
*/
#ifndef MBS_ELEM_QUADROW_H
#define MBS_ELEM_QUADROW_H

#include <gglmbs/elements/element.h>

#define MBS_QUADROW_MAX_BIL 24 /* a point difference (8 blocks) against a body vector (3 director blocks) */
#define MBS_QUADROW_MAX_LIN 8

typedef struct {
  int    nbil, nlin;
  int    bi[MBS_QUADROW_MAX_BIL], bj[MBS_QUADROW_MAX_BIL];
  double bcoef[MBS_QUADROW_MAX_BIL];
  int    lk[MBS_QUADROW_MAX_LIN];
  double lvec[MBS_QUADROW_MAX_LIN][3];
  double c0;
} MbsElemQuadRow;

/* Row builders. A body vector of a is sum_i alpha[i] d_i^a on a rigid a, the world vector alpha on the ground. */
void MbsElemQuadRowVectors(const MbsElemData *e, const double alpha[3], const double beta[3], MbsElemQuadRow *row);
/* (x_a(Xa) - x_b(Xb)) . (b's vector beta) */
void MbsElemQuadRowOffset(const MbsElemData *e, const double beta[3], MbsElemQuadRow *row);
/* (x_a(Xa) - x_b(Xb)) . (a's vector alpha) */
void MbsElemQuadRowOffsetA(const MbsElemData *e, const double alpha[3], MbsElemQuadRow *row);
/* row = s row; row = row + s x (the terms of both, within the row's capacity) */
void MbsElemQuadRowScale(MbsElemQuadRow *row, double s);
void MbsElemQuadRowAxpy(MbsElemQuadRow *row, double s, const MbsElemQuadRow *x);
/* component l of x_a(Xa) - x_b(Xb) */
void MbsElemQuadRowPoint(const MbsElemData *e, int l, MbsElemQuadRow *row);

void MbsElemQuadRowsEval(int nrows, const MbsElemQuadRow *rows, int nq, const double *q, double *g, double *G);
void MbsElemQuadRowsHessian(int nrows, const MbsElemQuadRow *rows, int nq, double *H);
void MbsElemQuadRowsHessianMult(int nrows, const MbsElemQuadRow *rows, int nq, const double *mu, const double *w,
                                double *out);

/* Joint frames for complete(): E (world, rows E[k]) expressed in a body's director basis, frame[k][i] = D[i] . E[k] */
void MbsElemFrameInBody(const MbsElemPlacement *p, const double E[3][3], double frame[3][3]);
/* The world components w of the vector v given in a body's frame: sum_i v_i D[i] */
void MbsElemPlacementVector(const MbsElemPlacement *p, const double v[3], double w[3]);
/* A right-handed orthonormal frame with E[2] = n / |n| (E[0] from the coordinate direction least aligned with n) */
void MbsElemFrameFromAxis(const double n[3], double E[3][3]);
/* n / |n|, or 1 with "<title>: <what> must be a non-zero finite vector" in error */
int MbsElemUnitAxis(double n[3], const char title[], const char what[], char *error, size_t len);

/* Shared complete() steps: the frames of an axis pair (prismatic, cylindrical), b's frame from its direction
   (point on line, point on plane) */
int MbsElemAxialFrames(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, const char title[],
                       char *error, size_t len);
int MbsElemFrameOfB(MbsElemData *d, const char title[], const char what[], char *error, size_t len);

/* The kernel of a joint whose rows come from Name##Rows(const MbsElemData *, MbsElemQuadRow rows[]); `extra`, one more
   designated initializer of the kernel (a drive's .time_coefficients) */
#define MBS_QUADROW_KERNEL(Name, label, nrows) MBS_QUADROW_KERNEL_EXTRA(Name, label, nrows, .time_coefficients = NULL)
#define MBS_QUADROW_KERNEL_EXTRA(Name, label, nrows, extra)                                                     \
  static void Name##Constraint(const MbsElemData *e, const double *q, double *g, double *G)                     \
  {                                                                                                             \
    MbsElemQuadRow rows[nrows];                                                                                 \
    Name##Rows(e, rows);                                                                                        \
    MbsElemQuadRowsEval(nrows, rows, MbsElemNq(e), q, g, G);                                                    \
  }                                                                                                             \
  static void Name##ConstraintHessian(const MbsElemData *e, double *H)                                          \
  {                                                                                                             \
    MbsElemQuadRow rows[nrows];                                                                                 \
    Name##Rows(e, rows);                                                                                        \
    MbsElemQuadRowsHessian(nrows, rows, MbsElemNq(e), H);                                                       \
  }                                                                                                             \
  static void Name##ConstraintHessianMult(const MbsElemData *e, const double *mu, const double *w, double *out) \
  {                                                                                                             \
    MbsElemQuadRow rows[nrows];                                                                                 \
    Name##Rows(e, rows);                                                                                        \
    MbsElemQuadRowsHessianMult(nrows, rows, MbsElemNq(e), mu, w, out);                                          \
  }                                                                                                             \
  const MbsElemKernel MbsElemKernel##Name = {                                                                   \
    .name                    = label,                                                                           \
    .ncon                    = nrows,                                                                           \
    .constraint              = Name##Constraint,                                                                \
    .constraint_hessian      = Name##ConstraintHessian,                                                         \
    .constraint_hessian_mult = Name##ConstraintHessianMult,                                                     \
    .hessian_isotropic       = 1,                                                                               \
    extra,                                                                                                      \
  }

#endif

/* 3-vector arithmetic shared by the element kernels, the model and the generators: pure C on double[3]. */
#ifndef MBS_VEC3_H
#define MBS_VEC3_H

#include <math.h>

static inline double MbsVec3Dot(const double x[3], const double y[3])
{
  return x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
}

static inline double MbsVec3Norm(const double x[3])
{
  return sqrt(MbsVec3Dot(x, x));
}

static inline void MbsVec3Cross(const double x[3], const double y[3], double z[3])
{
  z[0] = x[1] * y[2] - x[2] * y[1];
  z[1] = x[2] * y[0] - x[0] * y[2];
  z[2] = x[0] * y[1] - x[1] * y[0];
}

/* Every component finite; subnormal components are finite too (a computed position or point may be one). */
static inline int MbsVec3IsFinite(const double x[3])
{
  return isfinite(x[0]) && isfinite(x[1]) && isfinite(x[2]);
}

#endif

#include <math.h>

#include <gglmbs/elements/element.h>
#include <gglmbs/elements/vec3.h>

/* Appends the weights of body (nblocks, X) to w starting at block n, with sign +1 for a and -1 for b;
   returns the next free block. Ground has no blocks and contributes its world point to c. */
static int PointDifferenceAddBody(int nblocks, const double X[3], double sign, double *w, int n, double c[3])
{
  switch (nblocks) {
    case 0:
      for (int k = 0; k < 3; k++) c[k] += sign * X[k];
      break;
    case 1: w[n++] = sign; break;
    case 4:
      w[n++] = sign;
      for (int i = 0; i < 3; i++) w[n++] = sign * X[i];
      break;
    default:
      /* not a body type: leave its blocks at zero weight so the caller sees a constant difference */
      for (int j = 0; j < nblocks; j++) w[n++] = 0.0;
  }
  return n;
}

void MbsElemPointDifference(const MbsElemData *e, double w[MBS_ELEM_MAX_BLOCKS], double c[3])
{
  int n = 0;

  c[0] = c[1] = c[2] = 0.0;
  n                  = PointDifferenceAddBody(e->nblocks_a, e->Xa, 1.0, w, n, c);
  (void)PointDifferenceAddBody(e->nblocks_b, e->Xb, -1.0, w, n, c);
}

void MbsElemPointDifferenceEval(int nblocks, const double *w, const double c[3], const double *q, double d[3])
{
  for (int k = 0; k < 3; k++) d[k] = c[k];
  for (int j = 0; j < nblocks; j++) {
    for (int k = 0; k < 3; k++) d[k] += w[j] * q[3 * j + k];
  }
}

double MbsElemInitialDistance(const double xa[3], const double xb[3])
{
  return sqrt((xb[0] - xa[0]) * (xb[0] - xa[0]) + (xb[1] - xa[1]) * (xb[1] - xa[1]) +
              (xb[2] - xa[2]) * (xb[2] - xa[2]));
}

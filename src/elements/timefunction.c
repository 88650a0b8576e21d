#include <math.h>

#include <gglmbs/elements/kernels.h>

/* Functions of time (docs/loads.md): the factor of a load, the prescribed coordinate of a drive. */

/* The table's value and derivative at t: linear or the natural cubic spline within, constant outside */
static double TableEval(const MbsTimeTable *tb, double t, double *df)
{
  int           lo = 0, hi = tb->n - 1;
  double        h, a, b;
  const double *x = tb->t, *y = tb->v;

  if (t <= x[0] || t >= x[hi]) {
    *df = 0.0;
    return t <= x[0] ? y[0] : y[hi];
  }
  while (hi - lo > 1) { /* x[lo] < t < x[hi] */
    const int mid = (lo + hi) / 2;
    if (x[mid] <= t)
      lo = mid;
    else
      hi = mid;
  }
  h = x[hi] - x[lo];
  b = (t - x[lo]) / h;
  a = 1.0 - b;
  if (!tb->cubic) {
    *df = (y[hi] - y[lo]) / h;
    return a * y[lo] + b * y[hi];
  }
  *df = (y[hi] - y[lo]) / h + h * ((3 * b * b - 1) * tb->d2[hi] - (3 * a * a - 1) * tb->d2[lo]) / 6.0;
  return a * y[lo] + b * y[hi] + h * h * ((a * a * a - a) * tb->d2[lo] + (b * b * b - b) * tb->d2[hi]) / 6.0;
}

double MbsTimeFunctionEvalDerivative(const MbsTimeFunction *f, double t, double *df)
{
  const double twopi = 2.0 * 3.14159265358979323846;

  switch (f->kind) {
    case MBS_TIME_TABLE: return TableEval(f->table, t, df);
    case MBS_TIME_RAMP:
    case MBS_TIME_SMOOTH_STEP: {
      const double T = f->p[1] - f->p[0], jump = f->p[3] - f->p[2];
      double       s = (t - f->p[0]) / T, w = 1.0, dw = 1.0;
      if (s < 0 || s > 1) dw = 0.0; /* one-sided at the kinks */
      s = s < 0 ? 0 : s > 1 ? 1 : s;
      w = s;
      if (f->kind == MBS_TIME_SMOOTH_STEP) {
        w  = s * s * s * (10.0 + s * (-15.0 + 6.0 * s));
        dw = 30.0 * s * s * (1.0 - s) * (1.0 - s);
      }
      *df = jump * dw / T;
      return f->p[2] + jump * w;
    }
    case MBS_TIME_HARMONIC: {
      const double arg = twopi * f->p[1] * t + f->p[2];
      *df              = f->p[0] * twopi * f->p[1] * cos(arg);
      return f->p[3] + f->p[0] * sin(arg);
    }
    default: *df = 0.0; return f->p[0];
  }
}

double MbsTimeFunctionEval(const MbsTimeFunction *f, double t)
{
  double df;
  return MbsTimeFunctionEvalDerivative(f, t, &df);
}

void MbsTimeTableSpline(int n, const double *t, const double *v, double *d2, double *work)
{
  /* h_{i-1} d2_{i-1} + 2 (h_{i-1} + h_i) d2_i + h_i d2_{i+1} = 6 (slope_i - slope_{i-1}), d2_0 = d2_{n-1} = 0: the
     Thomas algorithm, work the eliminated super-diagonal */
  d2[0] = d2[n - 1] = 0.0;
  work[0]           = 0.0;
  for (int i = 1; i < n - 1; i++) {
    const double hl = t[i] - t[i - 1], hr = t[i + 1] - t[i];
    const double rhs  = 6.0 * ((v[i + 1] - v[i]) / hr - (v[i] - v[i - 1]) / hl);
    const double diag = 2.0 * (hl + hr) - hl * work[i - 1];
    work[i]           = hr / diag;
    d2[i]             = (rhs - hl * d2[i - 1]) / diag;
  }
  for (int i = n - 2; i >= 1; i--) d2[i] -= work[i] * d2[i + 1];
}

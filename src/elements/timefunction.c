#include <math.h>

#include <gglmbs/elements/kernels.h>

/* Functions of time (docs/loads.md): the factor of a load, the prescribed coordinate of a drive. */

double MbsTimeFunctionEvalDerivative(const MbsTimeFunction *f, double t, double *df)
{
  const double twopi = 2.0 * 3.14159265358979323846;

  switch (f->kind) {
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

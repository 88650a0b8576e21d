/* gglmbs public API for authors of time-stepping schemes: the stepper's private structure and the interface a
   scheme implements (MbsSchemeOps), and the global operators a scheme is written against (G, G^T, T(mu), DV, DGV,
   their Jacobian blocks). Like PETSc's petsc/private headers, these change with the library more freely than the
   rest of the API. docs/architecture.md says what a scheme provides; examples/custom_scheme.c registers one from
   a program built against the installed library. */
#ifndef GGLMBS_SCHEMES_H
#define GGLMBS_SCHEMES_H

#include <stepper/stepperimpl.h>

#endif

/* The map of a torque about a joint axis carried by body a (src/elements/loads.c): shared by the joint torque and the
   torsional damper. Private to src/elements. */
#ifndef MBS_ELEM_JOINTAXIS_H
#define MBS_ELEM_JOINTAXIS_H

#include <gglmbs/elements/kernels.h>

/* n: the axis axis_a as body a carries it in q (a's directors; the constant axis_a on the ground) */
void MbsElemAxisOfA(const MbsElemData *e, const double *q, double n[3]);
/* G: the generalized force of a unit torque about a's axis on b (and its opposite on a); dG = dG/dq, may be NULL.
   G . v = n . (omega_b - omega_a) for directors moving with v. */
void MbsElemJointAxisMap(const MbsElemData *e, const double *qm, double *G, double *dG);

#endif

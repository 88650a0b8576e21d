/* The map of a torque about a joint axis carried by body a (src/elements/loads.c): shared by the joint torque and the
   torsional damper; the axis parameter of the joint-axis elements. Private to src/elements. */
#ifndef MBS_ELEM_JOINTAXIS_H
#define MBS_ELEM_JOINTAXIS_H

#include <stddef.h>
#include <gglmbs/elements/element.h>

/* The parameter "axis" of the elements that act about or along a joint axis carried by a (joint torque and force,
   torsional spring and damper) */
#define MBS_ELEM_JOINT_AXIS_PARAM                                                                                  \
  {                                                                                                                \
    "axis", MBS_ELEM_PARAM_DIRECTION, {offsetof(MbsElemData, axis_a)}, MBS_ELEM_RANGE_POSITIVE, MBS_ELEM_REQUIRED, \
      "joint axis in the frame of a, world frame for ground"                                                       \
  }

/* n: the axis axis_a as body a carries it in q (a's directors; the constant axis_a on the ground) */
void MbsElemAxisOfA(const MbsElemData *e, const double *q, double n[3]);
/* G: the generalized force of a unit torque about a's axis on b (and its opposite on a); dG = dG/dq, may be NULL.
   G . v = n . (omega_b - omega_a) for directors moving with v. */
void MbsElemJointAxisMap(const MbsElemData *e, const double *qm, double *G, double *dG);

#endif

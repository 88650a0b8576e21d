#include <stddef.h>

#include "quadrow.h"

/* Cylindrical joint (docs/joints.md): b slides along and turns about the joint axis of a. A_2.B_0 = A_2.B_1 = 0
   (axes parallel), d.B_0 = d.B_1 = 0 (the points stay on the axis). */
#define CYLINDRICAL_NCON 4

static void CylindricalRows(const MbsElemData *e, MbsElemQuadRow rows[CYLINDRICAL_NCON])
{
  MbsElemQuadRowVectors(e, e->frame_a[2], e->frame_b[0], &rows[0]);
  MbsElemQuadRowVectors(e, e->frame_a[2], e->frame_b[1], &rows[1]);
  MbsElemQuadRowOffset(e, e->frame_b[0], &rows[2]);
  MbsElemQuadRowOffset(e, e->frame_b[1], &rows[3]);
}

MBS_QUADROW_KERNEL(Cylindrical, "cylindrical", CYLINDRICAL_NCON);

static int CylindricalComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                               size_t len)
{
  return MbsElemAxialFrames(d, a, b, "Cylindrical joint", error, len);
}

const MbsElementType MbsElementTypeCylindrical = {
  .name              = "cylindrical",
  .section           = "joints",
  .title             = "Cylindrical joint",
  .kernel            = &MbsElemKernelCylindrical,
  .needs_orientation = MBS_ELEM_ORIENT_BOTH,
  .cell_kind         = 7,
  .nparams           = 1,
  .params            = {{"axes",
                         MBS_ELEM_PARAM_DIRECTION_PAIR,
                         {offsetof(MbsElemData, axis_a), offsetof(MbsElemData, axis_b)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "joint axis in each body's frame",
                         "joint axis in the body frame"}},
  .complete          = CylindricalComplete,
};

#include <stddef.h>

#include "quadrow.h"

/* Point on a plane (docs/joints.md): the point Xa of a stays in the plane of b through Xb with normal B_2:
   d.B_2 = 0. */
#define POINT_ON_PLANE_NCON 1

static void PointOnPlaneRows(const MbsElemData *e, MbsElemQuadRow rows[POINT_ON_PLANE_NCON])
{
  MbsElemQuadRowOffset(e, e->frame_b[2], &rows[0]);
}

MBS_QUADROW_KERNEL(PointOnPlane, "point_on_plane", POINT_ON_PLANE_NCON);

static int PointOnPlaneComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                                size_t len)
{
  (void)a, (void)b;
  return MbsElemFrameOfB(d, "Point on plane", "the plane's normal", error, len);
}

const MbsElementType MbsElementTypePointOnPlane = {
  .name              = "point_on_plane",
  .section           = "joints",
  .title             = "Point on plane",
  .kernel            = &MbsElemKernelPointOnPlane,
  .needs_orientation = MBS_ELEM_ORIENT_B,
  .cell_kind         = 11,
  .nparams           = 1,
  .params            = {{"normal",
                         MBS_ELEM_PARAM_DIRECTION,
                         {offsetof(MbsElemData, axis_b)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "normal of the plane in the frame of b, world frame for ground"}},
  .complete          = PointOnPlaneComplete,
};

#include <stddef.h>

#include "quadrow.h"

/* Point on a line (docs/joints.md): the point Xa of a (a particle, a rigid body or the ground) stays on the line
   of b through Xb along b's direction: d.B_0 = d.B_1 = 0 with B_0, B_1 orthogonal to the line. */
#define POINT_ON_LINE_NCON 2

static void PointOnLineRows(const MbsElemData *e, MbsElemQuadRow rows[POINT_ON_LINE_NCON])
{
  MbsElemQuadRowOffset(e, e->frame_b[0], &rows[0]);
  MbsElemQuadRowOffset(e, e->frame_b[1], &rows[1]);
}

MBS_QUADROW_KERNEL(PointOnLine, "point_on_line", POINT_ON_LINE_NCON);

/* The frame of b's direction, in b's frame (world for the ground); also for the plane's normal */
int MbsElemFrameOfB(MbsElemData *d, const char title[], const char what[], char *error, size_t len)
{
  if (MbsElemUnitAxis(d->axis_b, title, what, error, len)) return 1;
  MbsElemFrameFromAxis(d->axis_b, d->frame_b);
  return 0;
}

static int PointOnLineComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                               size_t len)
{
  (void)a, (void)b;
  return MbsElemFrameOfB(d, "Point on line", "the line's direction", error, len);
}

const MbsElementType MbsElementTypePointOnLine = {
  .name              = "point_on_line",
  .section           = "joints",
  .title             = "Point on line",
  .kernel            = &MbsElemKernelPointOnLine,
  .needs_orientation = MBS_ELEM_ORIENT_B,
  .cell_kind         = 10,
  .nparams           = 1,
  .params            = {{"axis",
                         MBS_ELEM_PARAM_DIRECTION,
                         {offsetof(MbsElemData, axis_b)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "direction of the line in the frame of b, world frame for ground"}},
  .complete          = PointOnLineComplete,
};

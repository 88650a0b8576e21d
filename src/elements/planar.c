#include <stddef.h>

#include "quadrow.h"

/* Planar joint (docs/joints.md): a moves in a plane of b. a's normal stays parallel to b's, A_2.B_0 = A_2.B_1 = 0,
   and a's point stays in b's plane through b's point, d.B_2 = 0: two translations in the plane and the rotation
   about its normal are free. The floor of a sleigh or a skate (docs/nonholonomic.md). */
#define PLANAR_NCON 3

static void PlanarRows(const MbsElemData *e, MbsElemQuadRow rows[PLANAR_NCON])
{
  MbsElemQuadRowVectors(e, e->frame_a[2], e->frame_b[0], &rows[0]);
  MbsElemQuadRowVectors(e, e->frame_a[2], e->frame_b[1], &rows[1]);
  MbsElemQuadRowOffset(e, e->frame_b[2], &rows[2]);
}

MBS_QUADROW_KERNEL(Planar, "planar", PLANAR_NCON);

static int PlanarComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error, size_t len)
{
  return MbsElemAxialFrames(d, a, b, "Planar joint", error, len);
}

const MbsElementType MbsElementTypePlanar = {
  .name              = "planar",
  .section           = "joints",
  .title             = "Planar joint",
  .kernel            = &MbsElemKernelPlanar,
  .needs_orientation = MBS_ELEM_ORIENT_BOTH,
  .nparams           = 1,
  .params            = {{"axes",
                         MBS_ELEM_PARAM_DIRECTION_PAIR,
                         {offsetof(MbsElemData, axis_a), offsetof(MbsElemData, axis_b)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "normal of the plane in each body's frame (world frame for the ground)",
                         "plane normal in the body frame"}},
  .complete          = PlanarComplete,
};

/* Perpendicular axes (docs/joints.md): an axis of a stays perpendicular to an axis of b, A_2.B_2 = 0; with the
   ground's vertical as b's axis, it keeps a wheel or a disk upright (docs/nonholonomic.md). */
#define PERPENDICULAR_NCON 1

static void PerpendicularRows(const MbsElemData *e, MbsElemQuadRow rows[PERPENDICULAR_NCON])
{
  MbsElemQuadRowVectors(e, e->axis_a, e->axis_b, &rows[0]);
}

MBS_QUADROW_KERNEL(Perpendicular, "perpendicular", PERPENDICULAR_NCON);

static int PerpendicularComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                                 size_t len)
{
  (void)a, (void)b;
  return MbsElemUnitAxis(d->axis_a, "Perpendicular axes", "the axis of body a", error, len) ||
         MbsElemUnitAxis(d->axis_b, "Perpendicular axes", "the axis of body b", error, len);
}

const MbsElementType MbsElementTypePerpendicular = {
  .name              = "perpendicular",
  .section           = "joints",
  .title             = "Perpendicular axes",
  .kernel            = &MbsElemKernelPerpendicular,
  .needs_orientation = MBS_ELEM_ORIENT_BOTH,
  .nparams           = 1,
  .params            = {{"axes",
                         MBS_ELEM_PARAM_DIRECTION_PAIR,
                         {offsetof(MbsElemData, axis_a), offsetof(MbsElemData, axis_b)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "an axis of each body, in its frame (world frame for the ground), perpendicular initially",
                         "axis in the body frame"}},
  .complete          = PerpendicularComplete,
};

#include <stddef.h>

#include "quadrow.h"

/* Prismatic joint (docs/joints.md): b slides on a along the joint axis without turning. With A_k, B_k the joint
   frame carried by a and b (axis 2 along the slide) and d = x_a(Xa) - x_b(Xb): A_2.B_0 = A_2.B_1 = 0 (axes
   parallel), A_0.B_1 = 0 (no turning about the axis), d.B_0 = d.B_1 = 0 (the points stay on the axis). */
#define PRISMATIC_NCON 5

static void PrismaticRows(const MbsElemData *e, MbsElemQuadRow rows[PRISMATIC_NCON])
{
  MbsElemQuadRowVectors(e, e->frame_a[2], e->frame_b[0], &rows[0]);
  MbsElemQuadRowVectors(e, e->frame_a[2], e->frame_b[1], &rows[1]);
  MbsElemQuadRowVectors(e, e->frame_a[0], e->frame_b[1], &rows[2]);
  MbsElemQuadRowOffset(e, e->frame_b[0], &rows[3]);
  MbsElemQuadRowOffset(e, e->frame_b[1], &rows[4]);
}

MBS_QUADROW_KERNEL(Prismatic, "prismatic", PRISMATIC_NCON);

/* The joint frame: axis 2 along b's axis in the initial configuration, axes 0 and 1 orthogonal to it; carried
   by both bodies as they are initially (a's axis 2 is a's own axis, which must coincide). */
int MbsElemAxialFrames(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, const char title[],
                       char *error, size_t len)
{
  double n[3], E[3][3];

  if (MbsElemUnitAxis(d->axis_a, title, "the axis of body a", error, len) ||
      MbsElemUnitAxis(d->axis_b, title, "the axis of body b", error, len))
    return 1;
  MbsElemPlacementVector(b, d->axis_b, n);
  MbsElemFrameFromAxis(n, E);
  MbsElemFrameInBody(a, E, d->frame_a);
  MbsElemFrameInBody(b, E, d->frame_b);
  for (int i = 0; i < 3; i++) d->frame_a[2][i] = d->axis_a[i];
  return 0;
}

static int PrismaticComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                             size_t len)
{
  return MbsElemAxialFrames(d, a, b, "Prismatic joint", error, len);
}

const MbsElementType MbsElementTypePrismatic = {
  .name              = "prismatic",
  .section           = "joints",
  .title             = "Prismatic joint",
  .kernel            = &MbsElemKernelPrismatic,
  .needs_orientation = MBS_ELEM_ORIENT_BOTH,
  .cell_kind         = 6,
  .nparams           = 1,
  .params            = {{"axes",
                         MBS_ELEM_PARAM_DIRECTION_PAIR,
                         {offsetof(MbsElemData, axis_a), offsetof(MbsElemData, axis_b)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "sliding axis in each body's frame",
                         "sliding axis in the body frame"}},
  .complete          = PrismaticComplete,
};

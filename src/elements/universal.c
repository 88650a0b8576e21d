#include <stddef.h>

#include "quadrow.h"

/* Universal (Cardan) joint (docs/joints.md): the points coincide, d = 0 (3 rows), and the cross axes of a and b
   stay perpendicular, A_2.B_2 = 0: two relative rotations are free, the one that would turn a's axis out of
   the plane normal to b's is not. */
#define UNIVERSAL_NCON 4

static void UniversalRows(const MbsElemData *e, MbsElemQuadRow rows[UNIVERSAL_NCON])
{
  for (int l = 0; l < 3; l++) MbsElemQuadRowPoint(e, l, &rows[l]);
  MbsElemQuadRowVectors(e, e->frame_a[2], e->frame_b[2], &rows[3]);
}

MBS_QUADROW_KERNEL(Universal, "universal", UNIVERSAL_NCON);

static int UniversalComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error,
                             size_t len)
{
  (void)a, (void)b;
  if (MbsElemUnitAxis(d->axis_a, "Universal joint", "the cross axis of body a", error, len) ||
      MbsElemUnitAxis(d->axis_b, "Universal joint", "the cross axis of body b", error, len))
    return 1;
  for (int i = 0; i < 3; i++) {
    d->frame_a[2][i] = d->axis_a[i];
    d->frame_b[2][i] = d->axis_b[i];
  }
  return 0;
}

const MbsElementType MbsElementTypeUniversal = {
  .name              = "universal",
  .section           = "joints",
  .title             = "Universal joint",
  .kernel            = &MbsElemKernelUniversal,
  .needs_orientation = MBS_ELEM_ORIENT_BOTH,
  .cell_kind         = 8,
  .nparams           = 1,
  .params            = {{"axes",
                         MBS_ELEM_PARAM_DIRECTION_PAIR,
                         {offsetof(MbsElemData, axis_a), offsetof(MbsElemData, axis_b)},
                         MBS_ELEM_RANGE_POSITIVE,
                         MBS_ELEM_REQUIRED,
                         "cross axis of each body, in its frame (perpendicular to each other initially)",
                         "cross axis in the body frame"}},
  .complete          = UniversalComplete,
};

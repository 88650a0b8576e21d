#include "quadrow.h"

/* Weld (fixed) joint (docs/joints.md): the points coincide, d = 0 (3 rows), and the relative orientation stays
   the initial one: with the world axes of the initial configuration carried by a and b as A_k and B_k,
   A_0.B_1 = A_1.B_2 = A_2.B_0 = 0 (to first order the three components of the relative rotation). */
#define WELD_NCON 6

static void WeldRows(const MbsElemData *e, MbsElemQuadRow rows[WELD_NCON])
{
  for (int l = 0; l < 3; l++) MbsElemQuadRowPoint(e, l, &rows[l]);
  MbsElemQuadRowVectors(e, e->frame_a[0], e->frame_b[1], &rows[3]);
  MbsElemQuadRowVectors(e, e->frame_a[1], e->frame_b[2], &rows[4]);
  MbsElemQuadRowVectors(e, e->frame_a[2], e->frame_b[0], &rows[5]);
}

MBS_QUADROW_KERNEL(Weld, "weld", WELD_NCON);

static int WeldComplete(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error, size_t len)
{
  static const double world[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

  (void)error, (void)len;
  MbsElemFrameInBody(a, world, d->frame_a);
  MbsElemFrameInBody(b, world, d->frame_b);
  return 0;
}

const MbsElementType MbsElementTypeWeld = {
  .name              = "weld",
  .section           = "joints",
  .title             = "Weld joint",
  .kernel            = &MbsElemKernelWeld,
  .needs_orientation = MBS_ELEM_ORIENT_BOTH,
  .cell_kind         = 9,
  .complete          = WeldComplete,
};

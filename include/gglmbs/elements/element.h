/*
  Element types: what an element type tells the rest of the code about itself, beside its kernel.

  The input calls it by name in a section (joints[i].type: rod); its parameters are read into its data block
  (MbsElemData) by key, kind, range and unit; its data is completed from the initial configuration (default
  lengths, unit axes, derived vectors); the trajectory draws it as a cell of a kind. The YAML reader, the model,
  the checkpoint's model hash and the trajectory ask the type and know no element by name, so a new element
  type is its file (kernel and type) plus one registration line (MbsModelInitializePackage()).

  Pure data and arithmetic, like the kernels: no allocation, no PETSc objects, no MPI.
*/
#ifndef MBS_ELEMENT_H
#define MBS_ELEMENT_H

#include <stddef.h>
#include <gglmbs/elements/kernels.h>

/* How the input names the bodies and points an element connects */
typedef enum {
  MBS_ELEM_TWO_BODIES,    /* bodies: [a, b], points: [Xa, Xb] (optional, zero); either body may be the ground */
  MBS_ELEM_BODY_TO_WORLD, /* body: a, point: Xa, position: x (b is the ground at x; default: where Xa starts) */
  MBS_ELEM_ONE_BODY       /* body: a, point: Xa (default the origin); b is the ground (loads) */
} MbsElemConnection;

typedef enum {
  MBS_ELEM_PARAM_REAL,           /* a real number at offset[0] */
  MBS_ELEM_PARAM_DIRECTION_PAIR, /* two non-zero 3-vectors, one in each body's frame, at offset[0] and offset[1] */
  MBS_ELEM_PARAM_DIRECTION,      /* one non-zero 3-vector in a body's frame (its quantity says which), at offset[0] */
  MBS_ELEM_PARAM_VECTOR,         /* one 3-vector, world frame, at offset[0] */
  MBS_ELEM_PARAM_TIME_FUNCTION   /* an MbsTimeFunction at offset[0]: a number or a mapping (docs/loads.md); default 1 */
} MbsElemParamKind;

/* Which bodies must be rigid or the ground (their directors carry the element's axes): bits of needs_orientation */
#define MBS_ELEM_ORIENT_A    1
#define MBS_ELEM_ORIENT_B    2
#define MBS_ELEM_ORIENT_BOTH 3

/* Where an element's body is at the initial state: the world position x of the element's point on it and its
   directors D[i] (world components; the unit vectors for the ground and for particles). */
typedef struct {
  double x[3];
  double D[3][3];
} MbsElemPlacement;

typedef enum {
  MBS_ELEM_RANGE_POSITIVE,    /* > 0 */
  MBS_ELEM_RANGE_NONNEGATIVE, /* >= 0 */
  MBS_ELEM_RANGE_FINITE       /* any finite number */
} MbsElemRange;

typedef enum {
  MBS_ELEM_REQUIRED,         /* the input must give it */
  MBS_ELEM_DEFAULT_DISTANCE, /* a real that defaults to the initial distance between the element's two points */
  MBS_ELEM_DEFAULT_BY_TYPE   /* left at MBS_ELEM_UNSET when not given: complete() puts the type's default in */
} MbsElemDefault;

typedef struct {
  const char      *key; /* input key */
  MbsElemParamKind kind;
  size_t           offset[2]; /* offsetof(MbsElemData, ...): where the values go */
  MbsElemRange     range;     /* of a real */
  MbsElemDefault   fallback;
  const char      *quantity;      /* what it is, with its unit: "rod length in m" */
  const char      *item_quantity; /* of each vector of a pair: "hinge axis in the body frame" */
} MbsElemParam;

#define MBS_ELEM_MAX_PARAMS 8

/* A real parameter not given (input) or PETSC_DETERMINE (C API): complete() puts its default in. */
#define MBS_ELEM_UNSET (-1.0e300)

typedef struct {
  const char          *name;    /* in the input: joints[i].type or springs[i].type */
  const char          *section; /* "joints" or "springs" */
  const char          *title;   /* in messages: "Rod", "Revolute joint" */
  const MbsElemKernel *kernel;
  MbsElemConnection    connection;
  int                  needs_orientation; /* MBS_ELEM_ORIENT_* bits: these bodies are rigid or the ground */
  int                  cell_kind;         /* trajectory cell kind (docs/output.md), 0 for none of its own */
  int                  nparams;
  MbsElemParam         params[MBS_ELEM_MAX_PARAMS];
  /* Completes d from the initial placements of its two bodies (a->x, b->x: the world positions of its two points):
     defaults of unset reals, unit axes, derived vectors and frames, range checks. Returns 0, or 1 with error
     ("Rod: length must be positive and finite, got -1"). NULL: nothing to complete. */
  int (*complete)(MbsElemData *d, const MbsElemPlacement *a, const MbsElemPlacement *b, char *error, size_t len);
  int joins_centres; /* a and b are bodies, not the ground, joined at their centres: it takes no points (a beam) */
} MbsElementType;

/* Shared by complete() routines: a real left unset takes the initial distance |xb - xa|. */
double MbsElemInitialDistance(const double xa[3], const double xb[3]);

#endif

/* gglmbs public API: the multibody model (bodies, joints, springs, gravity). */
#ifndef GGLMBS_MODEL_H
#define GGLMBS_MODEL_H

#include <petscsys.h>
#include <petscvec.h>
#include <petscmat.h>
#include <gglmbs/elements/kernels.h> /* MbsTimeFunction */

/* Body index of the fixed ground. Points on the ground are given in world coordinates. */
#define MBS_GROUND ((PetscInt)-1)

typedef struct _p_MbsModel *MbsModel;

typedef enum {
  MBS_BODY_PARTICLE = 1,
  MBS_BODY_RIGID    = 4
} MbsBodyType; /* the value is the number of 3-vector coordinate blocks of the body */

/* Joints of MbsModelAddJoint() (docs/joints.md) */
typedef enum {
  MBS_JOINT_PRISMATIC,      /* b slides along the axis of a without turning: axes of a and b */
  MBS_JOINT_CYLINDRICAL,    /* b slides along and turns about the axis of a: axes of a and b */
  MBS_JOINT_UNIVERSAL,      /* the points coincide, the cross axes of a and b stay perpendicular */
  MBS_JOINT_WELD,           /* the points coincide, the relative orientation stays the initial one: no axes */
  MBS_JOINT_POINT_ON_LINE,  /* the point of a stays on the line of b through Xb along axis_b: no axis_a */
  MBS_JOINT_POINT_ON_PLANE, /* the point of a stays in the plane of b through Xb with normal axis_b: no axis_a */
  MBS_JOINT_PLANAR,         /* a moves in the plane of b through Xb with normal axis_b, a's axis_a kept along it */
  MBS_JOINT_PERPENDICULAR   /* axis_a of a stays perpendicular to axis_b of b (no points) */
} MbsJointType;

typedef enum {
  MBS_SPRING_LINEAR, /* V = k/2 (|x_b - x_a| - L)^2 */
  MBS_SPRING_QUARTIC /* V = k/2 (|x_b - x_a|^2 - L^2)^2 */
} MbsSpringType;

PETSC_EXTERN PetscClassId MBS_MODEL_CLASSID;

PETSC_EXTERN PetscErrorCode MbsModelInitializePackage(void);
PETSC_EXTERN PetscErrorCode MbsModelCreate(MPI_Comm, MbsModel *);
PETSC_EXTERN PetscErrorCode MbsModelSetOptionsPrefix(MbsModel, const char[]);
PETSC_EXTERN PetscErrorCode MbsModelAppendOptionsPrefix(MbsModel, const char[]);
PETSC_EXTERN PetscErrorCode MbsModelGetOptionsPrefix(MbsModel, const char *[]);
PETSC_EXTERN PetscErrorCode MbsModelViewFromOptions(MbsModel, PetscObject, const char[]);
PETSC_EXTERN PetscErrorCode MbsModelDestroy(MbsModel *);
PETSC_EXTERN PetscErrorCode MbsModelGetComm(MbsModel, MPI_Comm *);
PETSC_EXTERN PetscErrorCode MbsModelSetSource(MbsModel, const char[]);
PETSC_EXTERN PetscErrorCode MbsModelGetSource(MbsModel, const char *[]);
PETSC_EXTERN PetscErrorCode MbsModelSetGravity(MbsModel, const PetscReal[3]);
PETSC_EXTERN PetscErrorCode MbsModelGetGravity(MbsModel, PetscReal[3]);
PETSC_EXTERN PetscErrorCode MbsModelSetLoadFactor(MbsModel, PetscReal);
PETSC_EXTERN PetscErrorCode MbsModelGetLoadFactor(MbsModel, PetscReal *);

PETSC_EXTERN PetscErrorCode MbsModelAddParticle(MbsModel, const char name[], PetscReal mass, const PetscReal x[3],
                                                const PetscReal v[3], PetscInt *body);
PETSC_EXTERN PetscErrorCode MbsModelAddRigidBody(MbsModel, const char name[], PetscReal mass,
                                                 const PetscReal inertia[3], const PetscReal phi[3],
                                                 const PetscReal R[9], const PetscReal v[3], const PetscReal omega[3],
                                                 PetscInt *body);
PETSC_EXTERN PetscErrorCode MbsModelFindBody(MbsModel, const char name[], PetscInt *body);
PETSC_EXTERN PetscErrorCode MbsModelGetNumBodies(MbsModel, PetscInt *);
PETSC_EXTERN PetscErrorCode MbsModelGetNumElements(MbsModel, PetscInt *);

PETSC_EXTERN PetscErrorCode MbsModelAddSpherical(MbsModel, PetscInt a, const PetscReal Xa[3], PetscInt b,
                                                 const PetscReal Xb[3], PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddFixedPoint(MbsModel, PetscInt a, const PetscReal Xa[3], const PetscReal world[3],
                                                  PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddRod(MbsModel, PetscInt a, const PetscReal Xa[3], PetscInt b,
                                           const PetscReal Xb[3], PetscReal length, PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddRevolute(MbsModel, PetscInt a, const PetscReal Xa[3], const PetscReal axis_a[3],
                                                PetscInt b, const PetscReal Xb[3], const PetscReal axis_b[3],
                                                PetscInt *elem);
/* Velocity constraints (docs/nonholonomic.md): a knife edge at the point X of the rigid body a (no velocity along its
   body-fixed direction normal), a round body of centre X and radius r rolling without slipping on the fixed plane
   with normal n under it */
PETSC_EXTERN PetscErrorCode MbsModelAddKnifeEdge(MbsModel, PetscInt a, const PetscReal X[3], const PetscReal normal[3],
                                                 PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddRolling(MbsModel, PetscInt a, const PetscReal X[3], PetscReal r,
                                               const PetscReal n[3], PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddJoint(MbsModel, MbsJointType, PetscInt a, const PetscReal Xa[3],
                                             const PetscReal axis_a[3], PetscInt b, const PetscReal Xb[3],
                                             const PetscReal axis_b[3], PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddSpring(MbsModel, MbsSpringType, PetscInt a, const PetscReal Xa[3], PetscInt b,
                                              const PetscReal Xb[3], PetscReal stiffness, PetscReal length,
                                              PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddPointLoad(MbsModel, PetscInt body, const PetscReal X[3], const PetscReal F[3],
                                                 const MbsTimeFunction *time, PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddTorqueLoad(MbsModel, PetscInt body, const PetscReal T[3],
                                                  const MbsTimeFunction *time, PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelCreateTimeTable(MbsModel, PetscInt n, const PetscReal t[], const PetscReal v[],
                                                    PetscBool cubic, MbsTimeFunction *f);
PETSC_EXTERN PetscErrorCode MbsModelAddJointTorque(MbsModel, PetscInt a, const PetscReal axis_a[3], PetscInt b,
                                                   const MbsTimeFunction *torque, PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddJointForce(MbsModel, PetscInt a, const PetscReal Xa[3],
                                                  const PetscReal axis_a[3], PetscInt b, const PetscReal Xb[3],
                                                  const MbsTimeFunction *force, PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddAngleDrive(MbsModel, PetscInt a, const PetscReal axis_a[3], PetscInt b,
                                                  const MbsTimeFunction *angle, PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddSlideDrive(MbsModel, PetscInt a, const PetscReal Xa[3],
                                                  const PetscReal axis_a[3], PetscInt b, const PetscReal Xb[3],
                                                  const MbsTimeFunction *displacement, PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddPositionDrive(MbsModel, PetscInt body, const PetscReal X[3],
                                                     const PetscReal x0[3], const PetscReal n[3],
                                                     const MbsTimeFunction *displacement, PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddDamper(MbsModel, PetscInt a, const PetscReal Xa[3], PetscInt b,
                                              const PetscReal Xb[3], PetscReal damping, PetscReal exponent,
                                              PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddTorsionalSpring(MbsModel, PetscInt a, const PetscReal axis_a[3], PetscInt b,
                                                       PetscReal stiffness, PetscReal angle, PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddTorsionalDamper(MbsModel, PetscInt a, const PetscReal axis_a[3], PetscInt b,
                                                       PetscReal damping, PetscInt *elem);
PETSC_EXTERN PetscErrorCode MbsModelAddChain(MbsModel, const char name[], PetscInt count, PetscReal mass,
                                             PetscReal length, const PetscReal start[3], const PetscReal direction[3],
                                             PetscInt *first_body);

PETSC_EXTERN PetscErrorCode MbsModelGetPointPosition(MbsModel, PetscInt body, const PetscReal X[3], PetscReal x[3]);
PETSC_EXTERN PetscErrorCode MbsModelSetBodyLabel(MbsModel, PetscInt body, const char label[]);
PETSC_EXTERN PetscErrorCode MbsModelSetElementLabel(MbsModel, PetscInt elem, const char label[]);
PETSC_EXTERN PetscErrorCode MbsModelSetInitialTolerance(MbsModel, PetscReal);
PETSC_EXTERN PetscErrorCode MbsModelSetFromOptions(MbsModel);
PETSC_EXTERN PetscErrorCode MbsModelSetUp(MbsModel);
PETSC_EXTERN PetscErrorCode MbsModelView(MbsModel, PetscViewer);
PETSC_EXTERN PetscErrorCode MbsModelSetPartitioner(MbsModel, const char type[]);
PETSC_EXTERN PetscErrorCode MbsModelBeginGraph(MbsModel);
PETSC_EXTERN PetscErrorCode MbsModelPartition(MbsModel);
PETSC_EXTERN PetscErrorCode MbsModelHoldsBody(MbsModel, PetscInt body, PetscBool *held);
PETSC_EXTERN PetscErrorCode MbsModelSetMemoryLimit(MbsModel, PetscInt64 bytes);
PETSC_EXTERN PetscErrorCode MbsModelGetMemoryLimit(MbsModel, PetscInt64 *bytes);
PETSC_EXTERN PetscErrorCode MbsModelEstimateMemory(MbsModel, PetscReal *bytes);
PETSC_EXTERN PetscErrorCode MbsModelViewPartition(MbsModel, PetscViewer);
PETSC_EXTERN PetscErrorCode MbsModelGetGraphWidth(MbsModel, PetscInt *);
/* Gather a coordinate-layout vector onto rank 0 in input (body) order */
PETSC_EXTERN PetscErrorCode MbsModelCreateScatterToZero(MbsModel, Vec x, VecScatter *, Vec *x0);

/* Sizes after MbsModelSetUp: coordinates and constraint rows, local (this rank) and global */
PETSC_EXTERN PetscErrorCode MbsModelGetSizes(MbsModel, PetscInt *nq_local, PetscInt *nq, PetscInt *ncon_local,
                                             PetscInt *ncon);
/* Velocity constraint rows (docs/nonholonomic.md) after MbsModelSetUp: on this rank and in total */
PETSC_EXTERN PetscErrorCode MbsModelGetVelocityConstraintSizes(MbsModel, PetscInt *nv_local, PetscInt *nv);
/* Initial state (q0, p0 = M v0) as new vectors in coordinate layout */
PETSC_EXTERN PetscErrorCode MbsModelCreateInitialState(MbsModel, Vec *q, Vec *p);

/* Adds the generalized force of a force f (world frame) acting at material point X of a body into F
   (coordinate layout, e.g. in an MbsExternalForceFn). Not collective: any rank may add to any body. */
PETSC_EXTERN PetscErrorCode MbsModelAddPointForce(MbsModel, PetscInt body, const PetscReal X[3], const PetscReal f[3],
                                                  Vec F);
/* J(a, b) += C_a^T K C_b: a force at point Xa of body a that depends on the position (or velocity) of point Xb of
   body b, K = df/dx_b, in generalized coordinates (e.g. in an MbsStateForceJacobianFn). Not collective. */
PETSC_EXTERN PetscErrorCode MbsModelAddPointForceJacobian(MbsModel, PetscInt a, const PetscReal Xa[3], PetscInt b,
                                                          const PetscReal Xb[3], const PetscReal K[9], Mat J);
/* x = C q_b: a material point's position (or velocity) from its body's coordinates (or their rates) */
PETSC_EXTERN PetscErrorCode MbsModelGetPointFromCoordinates(MbsModel, PetscInt body, const PetscReal X[3],
                                                            const PetscScalar qb[], PetscReal x[3]);
/* A coordinate-layout matrix with the coordinate blocks of the body pairs (a0 b0 a1 b1 ...), both ways, exactly
   preallocated and with MAT_NEW_NONZERO_LOCATION_ERR: the Jacobian of a state force. Collective, same pairs. */
PETSC_EXTERN PetscErrorCode MbsModelCreateCoordinateMatrix(MbsModel, PetscInt npairs, const PetscInt pairs[], Mat *J);
/* Global offset and number of the coordinates of a body in coordinate-layout vectors, and its owner rank */
PETSC_EXTERN PetscErrorCode MbsModelGetBodyCoordinates(MbsModel, PetscInt body, PetscInt *offset, PetscInt *n,
                                                       PetscMPIInt *owner);

/* Generators of large models (src/model/generators.c) */
typedef enum {
  MBS_CHAIN_JOINT_SPHERICAL, /* links joined by spherical joints */
  MBS_CHAIN_JOINT_REVOLUTE   /* links joined by revolute joints with a common hinge axis */
} MbsChainJointType;

PETSC_EXTERN PetscErrorCode MbsModelAddRigidChain(MbsModel, const char name[], PetscInt count, PetscReal mass,
                                                  const PetscReal inertia[3], PetscReal length,
                                                  const PetscReal start[3], const PetscReal direction[3],
                                                  MbsChainJointType joint, const PetscReal axis[3],
                                                  PetscInt *first_body);
/* A beam's section (docs/beams.md): the stiffnesses of its six strains and its inertia per unit length */
typedef struct {
  PetscReal EA, GA1, GA2; /* axial and shear stiffness, N */
  PetscReal EI1, EI2, GJ; /* bending stiffness about d1 and d2, torsional stiffness, N m^2 */
  PetscReal rhoA;         /* mass per unit length, kg/m */
  PetscReal rhoI1, rhoI2; /* the section's rotary inertia per unit length about d1 and d2, kg m */
} MbsBeamSection;

/* How a beam's end is held */
typedef enum {
  MBS_BEAM_FREE,   /* not held */
  MBS_BEAM_PINNED, /* its end node's centre held in place (a fixed point), free to turn */
  MBS_BEAM_CLAMPED /* its end node welded to the ground */
} MbsBeamSupport;
PETSC_EXTERN const char *const MbsBeamSupports[];

PETSC_EXTERN PetscErrorCode MbsModelAddBeamNetwork(MbsModel, const char name[], PetscInt nnodes, const PetscReal x[],
                                                   const PetscInt node_id[], PetscInt nedges, const PetscInt edge[],
                                                   const MbsBeamSection *, const PetscReal d1[3], PetscInt nclamped,
                                                   const PetscInt clamped[], PetscInt npinned, const PetscInt pinned[],
                                                   PetscInt *first_body);
PETSC_EXTERN PetscErrorCode MbsModelAddBeam(MbsModel, const char name[], PetscInt npoints, const PetscReal points[],
                                            PetscInt nelements, const MbsBeamSection *, const PetscReal d1[3],
                                            MbsBeamSupport start, MbsBeamSupport end, PetscInt *first_body,
                                            PetscInt *nnodes);
PETSC_EXTERN PetscErrorCode MbsModelAddNet(MbsModel, const char name[], PetscInt nx, PetscInt ny, PetscReal mass,
                                           const PetscReal origin[3], const PetscReal step_i[3],
                                           const PetscReal step_j[3], PetscInt nfixed, const PetscInt fixed[],
                                           PetscInt *first_body);
PETSC_EXTERN PetscErrorCode MbsModelAddRodNetwork(MbsModel, const char name[], PetscInt nnodes, const PetscReal x[],
                                                  const PetscInt node_id[], PetscInt nedges, const PetscInt edge[],
                                                  PetscReal line_density, PetscReal node_mass, PetscInt nfixed,
                                                  const PetscInt fixed[], PetscInt *first_body);

#endif

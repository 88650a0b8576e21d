/*
  Element kernels: pure arithmetic on small dense arrays (no allocation, no PETSc objects, no MPI).

  An element touches one or two bodies, a and b. Its local coordinate vector is the concatenation of
  the coordinates of a and b, in 3-vector blocks:
    ground   : 0 blocks (no unknowns)
    particle : 1 block  (x)
    rigid    : 4 blocks (phi, d1, d2, d3)
  so nq = 3 * (nblocks_a + nblocks_b) <= 24, block j occupying q[3j .. 3j+2].

  A material point X on a body is an affine function of the body's coordinates:
    ground   : x = X (X given in world coordinates)
    particle : x = q          (X unused)
    rigid    : x = phi + X_1 d1 + X_2 d2 + X_3 d3  (X in body-frame coordinates)
  so every joint and spring built on points is at most quadratic in q, and every constraint Hessian
  H_k = D^2 g_k is constant (DESIGN 2.1).

  Arrays are row-major: G is ncon x nq (G[k*nq + i] = dg_k/dq_i), H is ncon x nq x nq
  (H[(k*nq + i)*nq + j] = d^2 g_k / dq_i dq_j), potential Hessians are nq x nq.
*/
#ifndef MBS_ELEMENT_KERNELS_H
#define MBS_ELEMENT_KERNELS_H

#define MBS_ELEM_MAX_BLOCKS 8
#define MBS_ELEM_MAX_NQ     24
#define MBS_ELEM_MAX_CON    6
#define MBS_ELEM_MAX_VCON   3

/* A function of time (docs/loads.md): constant p[0]; ramp and smooth step from p[2] at t = p[0] to p[3] at
   t = p[1] (linear; quintic with zero first and second derivatives at both ends), constant before and after;
   harmonic p[3] + p[0] sin(2 pi p[1] t + p[2]); a table of values at increasing times, interpolated linearly or by
   the natural cubic spline, constant before the first time and after the last */
typedef enum {
  MBS_TIME_CONSTANT,
  MBS_TIME_RAMP,
  MBS_TIME_SMOOTH_STEP,
  MBS_TIME_HARMONIC,
  MBS_TIME_TABLE
} MbsTimeFunctionKind;
typedef struct {
  int           n;     /* points, >= 2 */
  int           cubic; /* 0: linear between the points; 1: the natural cubic spline through them */
  const double *t, *v; /* strictly increasing times, values */
  const double *d2;    /* cubic: the spline's second derivatives at the points */
} MbsTimeTable;
typedef struct {
  int                 kind; /* MbsTimeFunctionKind */
  double              p[4];
  const MbsTimeTable *table; /* MBS_TIME_TABLE (owned by the model: MbsModelCreateTimeTable()); last (the
                                checkpoint's model hash covers the table's values, not this pointer) */
} MbsTimeFunction;

double MbsTimeFunctionEval(const MbsTimeFunction *f, double t);
/* f(t), and its derivative f'(t) in *df (one-sided where f has a kink: the right derivative at a ramp's start, the left
   at its end) */
double MbsTimeFunctionEvalDerivative(const MbsTimeFunction *f, double t, double *df);
/* The second derivatives d2[0..n-1] of the natural cubic spline through (t_i, v_i), t strictly increasing, n >= 2;
   work holds n doubles */
void MbsTimeTableSpline(int n, const double *t, const double *v, double *d2, double *work);

#define MBS_ELEM_MAX_TCOEF 4

typedef struct {
  int    nblocks_a, nblocks_b; /* 0 ground, 1 particle, 4 rigid body */
  double Xa[3], Xb[3];         /* material points on a and b (world coordinates for ground) */
  double axis_a[3];            /* revolute: unit axis, body frame of a (world frame if a is ground) */
  double axis_b[3];            /* revolute: unit axis, body frame of b (perp_b is derived from it) */
  double perp_b[2][3]; /* revolute: two unit vectors of b orthogonal to b's axis (body frame of b, world if ground) */
  double length;       /* rod length; spring rest length */
  double stiffness;    /* spring stiffness */
  double mass;         /* gravity: mass of body a */
  double gravity[3];   /* gravity: acceleration b, V = -m b . x_com */
  /* Joint frames (prismatic, cylindrical, universal, weld, point_on_line, point_on_plane): frame_a[k] holds the
     coefficients of the k-th axis of the joint frame in a's director basis (the vector sum_i frame_a[k][i] d_i^a;
     world components if a is the ground), likewise frame_b; axis 2 is the joint axis. Set from the initial
     configuration so that both frames coincide in the world then (docs/joints.md). Appended last: the checkpoint
     hash of versions 3-5 covers the bytes before them. */
  double          frame_a[3][3], frame_b[3][3];
  double          damping;  /* damper: c > 0 */
  double          exponent; /* damper: the force grows as |axial velocity|^exponent, exponent >= 1 */
  double          load[3];  /* force (N) or torque (N m) of a load, world frame, times its time function */
  MbsTimeFunction time;     /* of a load; of a drive: its prescribed coordinate */
  /* Beam element (docs/beams.md): the stiffnesses GA1, GA2, EA, EI1, EI2, GJ of its six strains and their values in
     the stress-free initial configuration. Appended in checkpoint version 7. */
  double beam_stiffness[6], beam_strain0[6];
  /* Not model data: the time coefficients of a rheonomic constraint (a drive) at the time the model's constraints
     are evaluated, set by MbsModelSetConstraintTime() through the kernel's time_coefficients(). Last, and not part
     of the checkpoint's model hash. */
  double tcoef[MBS_ELEM_MAX_TCOEF];
} MbsElemData;

typedef struct {
  const char *name;
  int         ncon; /* constraint rows; 0 for a potential element */
  /* constraint elements (ncon > 0) */
  void (*constraint)(const MbsElemData *e, const double *q, double *g, double *G); /* G may be NULL */
  void (*constraint_hessian)(const MbsElemData *e, double *H);                     /* constant, ncon x nq x nq */
  /* optional: out = sum_k mu_k H_k w without forming H (the residual's T(mu) w) */
  void (*constraint_hessian_mult)(const MbsElemData *e, const double *mu, const double *w, double *out);
  int linear; /* the constraint is affine in q, or the potential is: G constant, H = 0 (operators skip the Hessian
                 terms; a potential's Hessian and its discrete gradient's derivative are not added to Jacobians) */
  /* every 3 x 3 block of every H_k is a multiple of the identity, as for any row built from dot products of points and
     body vectors (quadrow.h): Jacobians then hold only the blocks' diagonals (MbsJacAddT(); tests/test_elements.c
     checks it for every kernel that sets it) */
  int hessian_isotropic;
  /* potential elements (ncon == 0) */
  double (*energy)(const MbsElemData *e, const double *q);
  void (*gradient)(const MbsElemData *e, const double *q, double *dV);
  void (*hessian)(const MbsElemData *e, const double *q, double *d2V);
  /* Gonzalez discrete gradient: dg . (q1 - q0) = V(q1) - V(q0) exactly, dg(q, q) = DV(q);
     ddg = d(dg)/d(q1), nq x nq, may be NULL */
  void (*discrete_gradient)(const MbsElemData *e, const double *q0, const double *q1, double *dg, double *ddg);
  /* force elements (ncon == 0, no energy; docs/dampers.md): the generalized force f over a step, from its midpoint
     configuration qm = (q0 + q1)/2, its mean velocity vm = (q1 - q0)/h and its mid-time t; every scheme adds the
     impulse h f to its momentum balance, and f . (q1 - q0) is the work it does. Jq = df/dqm, Jv = df/dvm (nq x nq),
     either may be NULL. */
  void (*force)(const MbsElemData *e, const double *qm, const double *vm, double t, double *f, double *Jq, double *Jv);
  int dissipative; /* its work is dissipated energy (f . v <= 0): reported as D, not as supplied work W */
  /* rheonomic constraint elements (drives; docs/drives.md): g(q, t) = sum_j c_j(t) g_j(q) with g_j quadratic in q,
     linear in time coefficients c_j that constraint() and constraint_hessian() read from e->tcoef. This fills them:
     derivative 0, their mean over [t0, t1] ((c(t0) + c(t1))/2; the values at t0 when t0 == t1); derivative 1, their
     time derivatives at t1, with which constraint() gives dg/dt and its gradient d(dg/dt)/dq. */
  void (*time_coefficients)(const MbsElemData *e, double t0, double t1, int derivative, double coef[]);
  /* optional, for the trajectory (docs/output.md): six stress resultants of the element at q, in its own frame; a
     beam's (docs/beams.md) shear forces, axial force, bending moments and torque C_a (eps_a - eps0_a) */
  void (*resultants)(const MbsElemData *e, const double *q, double r[6]);
  int applied; /* an applied load (gravity, the loads): its potential or force is scaled by the model's load factor
                  (MbsModelSetLoadFactor()), by which a static solve applies its loads in steps */
  /* velocity constraint elements (nonholonomic; docs/nonholonomic.md): nvcon rows A(q) v = 0, homogeneous and linear
     in the velocities v, with ncon = 0 and no energy. Fills A (nvcon x nq, A[k*nq + i]) and, when dA is not NULL,
     its derivative dA[(k*nq + i)*nq + j] = dA_ki/dq_j. Their reactions A(q)^T mu do no work. */
  int nvcon;
  void (*velocity_constraint)(const MbsElemData *e, const double *q, double *A, double *dA);
} MbsElemKernel;

static inline int MbsElemNq(const MbsElemData *e)
{
  return 3 * (e->nblocks_a + e->nblocks_b);
}

/* Point difference d = x_a(Xa) - x_b(Xb) = c + sum_j w[j] Q_j with Q_j the 3-vector blocks of q.
   Fills w[0 .. nblocks_a + nblocks_b - 1] and c[3]. */
void MbsElemPointDifference(const MbsElemData *e, double w[MBS_ELEM_MAX_BLOCKS], double c[3]);
/* Evaluate d at q given w, c. */
void MbsElemPointDifferenceEval(int nblocks, const double *w, const double c[3], const double *q, double d[3]);

extern const MbsElemKernel
  MbsElemKernelRigidBody; /* 6 internal constraints 1/2(di.di - 1), di.dj; a = rigid body, no b */
extern const MbsElemKernel MbsElemKernelSpherical;     /* 3 rows x_a(Xa) - x_b(Xb) */
extern const MbsElemKernel MbsElemKernelRod;           /* 1 row 1/2 (|x_b - x_a|^2 / L^2 - 1) */
extern const MbsElemKernel MbsElemKernelRevolute;      /* spherical rows + n_a . b1_b, n_a . b2_b */
extern const MbsElemKernel MbsElemKernelSpringLinear;  /* V = k/2 (|d| - L)^2 */
extern const MbsElemKernel MbsElemKernelSpringQuartic; /* V = k/2 (|d|^2 - L^2)^2 */
extern const MbsElemKernel MbsElemKernelGravity;       /* V = -m b . x_a (particle x or rigid phi); a only */
extern const MbsElemKernel MbsElemKernelPointLoad;     /* a force load(t) at the point Xa of body a */
extern const MbsElemKernel MbsElemKernelTorqueLoad;    /* a torque load(t) on the rigid body a: 1/2 T x d_i on d_i */
extern const MbsElemKernel MbsElemKernelJointTorque;   /* tau(t) about a's axis on b, -tau on a */
extern const MbsElemKernel MbsElemKernelJointForce;    /* f(t) along a's axis on b's point, -f on a's */
extern const MbsElemKernel MbsElemKernelDamper; /* f = -c |u|^(e-1) u n on a, opposite on b; u = n . d', n = d/|d| */
extern const MbsElemKernel MbsElemKernelTorsionalDamper; /* -c n . (omega_b - omega_a) about a's axis, on b */
extern const MbsElemKernel MbsElemKernelTorsionalSpring; /* V = k/2 phi^2, phi = atan2(A_1.B_0, A_0.B_0) */
extern const MbsElemKernel MbsElemKernelBeam; /* V = L/2 sum C_a (eps_a - eps0_a)^2, six strains quadratic in q */
/* Joints of quadratic rows in the director formulation (docs/joints.md); A_k, B_k the joint-frame axes carried by a
   and b, d = x_a(Xa) - x_b(Xb) */
extern const MbsElemKernel MbsElemKernelPrismatic;    /* A_2.B_0, A_2.B_1, A_0.B_1, d.B_0, d.B_1 */
extern const MbsElemKernel MbsElemKernelCylindrical;  /* A_2.B_0, A_2.B_1, d.B_0, d.B_1 */
extern const MbsElemKernel MbsElemKernelUniversal;    /* d (3 rows), A_2.B_2 */
extern const MbsElemKernel MbsElemKernelWeld;         /* d (3 rows), A_0.B_1, A_1.B_2, A_2.B_0 */
extern const MbsElemKernel MbsElemKernelPointOnLine;  /* d.B_0, d.B_1 */
extern const MbsElemKernel MbsElemKernelPointOnPlane; /* d.B_2 */
/* Drives: rheonomic constraints prescribing a joint coordinate or a point over time (docs/drives.md) */
extern const MbsElemKernel MbsElemKernelAngleDrive;    /* cos th(t) A_1.B_0 - sin th(t) A_0.B_0 */
extern const MbsElemKernel MbsElemKernelSlideDrive;    /* -d.A_2 - s0 - u(t) */
extern const MbsElemKernel MbsElemKernelPositionDrive; /* x_a(Xa) - x0 - s(t) n (3 rows) */
/* Planar joint (holonomic): A_2.B_0, A_2.B_1, d.B_2; perpendicular axes: A_2.B_2 */
extern const MbsElemKernel MbsElemKernelPlanar;
extern const MbsElemKernel MbsElemKernelPerpendicular;
/* Velocity constraints (docs/nonholonomic.md), rigid body a on the ground: */
extern const MbsElemKernel MbsElemKernelKnifeEdge; /* n_a . v_P = 0, n_a = sum N_i d_i, v_P = phi' + sum X_j d_j' */
extern const MbsElemKernel MbsElemKernelRolling;   /* t_m . (phi' - R sum (n.d_j) d_j') = 0, m = 1, 2 */

#endif

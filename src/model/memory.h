/* Size of a model before it is built: the memory estimate the generators and the YAML reader check. */
#ifndef MBS_MEMORY_H
#define MBS_MEMORY_H

#include <gglmbs/model.h>

/* Counts in floating point, so that a count of 10^12 neither overflows nor wraps. */
typedef struct {
  PetscReal nbodies, nelems; /* bodies; elements, with the gravity element set-up adds per body */
  PetscReal nq, ncon;        /* coordinates, constraint rows */
  PetscReal nnz;             /* estimated nonzeros of a step's Jacobian */
  PetscReal nrigid;          /* rigid bodies */
  PetscBool two_dimensional; /* a net or mesh: the LU fill grows like n log n, not like n */
  PetscReal nchain;          /* bodies of chains of particles (a narrow graph, which one rank factors by KLU) */
} MbsModelSize;

/* From this many unknowns on, the stepper's default solver for a net or mesh of particles (a wide body graph) is GMRES
   with the Schur-AMG preconditioner instead of LU (src/stepper/stepper.c, docs/solvers.md): the estimate then has no
   LU fill */
#define MBS_SCHUR_MIN_UNKNOWNS 200000

/* What a generator adds: bodies of 'blocks' 3-vector blocks each (1 particle, 4 rigid body), and
   elements coupling 'ncoord' coordinates with 'ncon' constraint rows each. */
PETSC_INTERN void MbsModelSizeAddBodies(MbsModelSize *, PetscReal count, PetscInt blocks);
PETSC_INTERN void MbsModelSizeAddElements(MbsModelSize *, PetscReal count, PetscInt ncoord, PetscInt ncon);
PETSC_INTERN void MbsModelSizeChain(MbsModelSize *, PetscReal count);
PETSC_INTERN void MbsModelSizeRigidChain(MbsModelSize *, PetscReal count, MbsChainJointType);
PETSC_INTERN void MbsModelSizeNet(MbsModelSize *, PetscReal nx, PetscReal ny, PetscReal nfixed);
PETSC_INTERN void MbsModelSizeBeam(MbsModelSize *, PetscReal nnodes, PetscReal nelems, PetscReal ncorners,
                                   PetscReal nsupport_rows);
PETSC_INTERN void MbsModelSizeRodNetwork(MbsModelSize *, PetscReal nnodes, PetscReal nedges, PetscReal nfixed);

/* Whether the model with 'added' fits: in memory (the estimate against the limit, MbsModelSetMemoryLimit())
   and in PetscInt (unknowns and Jacobian nonzeros). If not, 'why' receives the reason, e.g. "need about
   1.2e3 GiB (estimate), the limit is 23 GiB (-mbs_memory_limit)". Collective (reads the options database). */
PETSC_INTERN PetscErrorCode MbsModelCheckSize(MbsModel, const MbsModelSize *added, PetscBool *fits, char why[],
                                              size_t len);
/* Counts the bodies and elements added since the last count into the model's size (the set-up, before each rank drops
   the elements of the others) */
PETSC_INTERN PetscErrorCode MbsModelCountSize_Private(MbsModel);
/* The same as an error (PETSC_ERR_MEM) "<what> '<name>': the model would not fit: <why>". */
PETSC_INTERN PetscErrorCode MbsModelCheckGeneratorSize(MbsModel, const char what[], const char name[],
                                                       const MbsModelSize *added);

#endif

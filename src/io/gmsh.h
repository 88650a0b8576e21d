/*
  Gmsh MSH reader (ASCII, format 4.1 and 2.2): nodes, the edges of line, triangle and quadrangle
  elements (each edge once), and the nodes of each physical group. Reading only: the model is built
  from the result elsewhere (MbsModelAddRodNetwork()).
*/
#ifndef MBS_GMSH_H
#define MBS_GMSH_H

#include <petscsys.h>

typedef struct {
  char     *name;   /* from $PhysicalNames; NULL for an unnamed group */
  PetscInt  dim;    /* 0 point, 1 curve, 2 surface, 3 volume */
  PetscInt  tag;    /* physical tag */
  PetscInt  nnodes; /* nodes of the group's elements, as node indices, sorted, each once */
  PetscInt *nodes;
  PetscInt  cap;
} MbsGmshGroup;

typedef struct {
  char         *file;       /* the path it was read from, for messages */
  char          version[8]; /* "4.1" or "2.2" */
  PetscInt      nnodes;
  PetscInt     *node_tag;   /* Gmsh tag of each node */
  PetscInt     *node_line;  /* line of the node's tag in the file */
  PetscInt     *node_edges; /* number of edges at each node */
  PetscReal    *x;          /* coordinates, 3 per node */
  PetscInt      nedges, edge_cap;
  PetscInt     *edge;      /* two node indices per edge */
  PetscInt     *edge_line; /* line of the first element with the edge */
  PetscInt      ngroups, group_cap;
  MbsGmshGroup *groups;
  PetscInt      nsurface, surface_line; /* triangles and quadrangles, and the line of the first */
} MbsGmshMesh;

/* Rank 0 reads the file and broadcasts it; every rank parses the same bytes. Errors name the file and
   line, after 'context' (the place that referred to the file, e.g. "model.yaml:7:11: key 'meshes[0].file'")
   when it is not NULL: PETSC_ERR_FILE_OPEN when the file cannot be read, PETSC_ERR_USER_INPUT when its
   contents are not a mesh this reader understands. */
PETSC_INTERN PetscErrorCode MbsGmshRead(MPI_Comm comm, const char filename[], const char context[], MbsGmshMesh *mesh);
PETSC_INTERN PetscErrorCode MbsGmshMeshDestroy(MbsGmshMesh *mesh);

#endif

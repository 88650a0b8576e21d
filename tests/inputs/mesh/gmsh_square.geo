// Meshed with Gmsh 4.8.4: gmsh -2 gmsh_square.geo -format msh41 -o gmsh_square_tri41.msh (and -format msh22 for
// gmsh_square_tri22.msh). The .msh files are Gmsh's own output, kept to test the reader against it.
Point(1) = {0, 0, 0, 0.5};
Point(2) = {1, 0, 0, 0.5};
Point(3) = {1, 1, 0, 0.5};
Point(4) = {0, 1, 0, 0.5};
Line(1) = {1, 2};
Line(2) = {2, 3};
Line(3) = {3, 4};
Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4};
Plane Surface(1) = {1};
Physical Curve("top") = {3};
Physical Point("corner") = {1};
Physical Surface("sheet") = {1};

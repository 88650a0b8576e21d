#!/usr/bin/env python3
"""Writes structured Gmsh meshes (ASCII MSH 4.1 or 2.2) for gglmbs's `meshes:` input, without Gmsh.

The files have the layout Gmsh itself writes for the same geometry: $PhysicalNames, $Entities (4.1),
nodes in blocks per entity (corner points, then curve-interior nodes, then surface-interior nodes), and
elements per entity, every entity in a physical group so that every element is saved.

  net:  a rectangle [0, nx-1] x [0, ny-1] times the spacing in the x-y plane, nx * ny nodes, meshed with
        quadrangles (or two triangles per cell with --triangles). Physical groups: "corners" (the four
        corner points), "top" (the edge y = 0), "right" (x = max), "bottom" (y = max), "left" (x = 0),
        "sheet" (the surface).
  rope: a straight line of n nodes along x, meshed with line elements. Physical groups: "start" and
        "end" (points), "rope" (the curve).

Examples:
  scripts/make_mesh.py net --nx 12 --ny 16 --spacing 0.05 -o meshes/net12x16.msh
  scripts/make_mesh.py rope --n 200 --spacing 0.01 --format 2.2 -o rope.msh
  scripts/make_mesh.py net --nx 1000 --ny 1000 --spacing 0.001 -o /tmp/net1000x1000.msh   (benchmarks; not committed)
"""
import argparse
import sys


def fmt(v):
    return repr(float(v)) if v != int(v) else str(int(v))


class Mesh:
    def __init__(self):
        self.points = []  # (tag, x, y, z, physical)
        self.curves = []  # (tag, nodes of the curve in order incl. end points, physical, (start point, end point))
        self.surfaces = []  # (tag, physical, bounding curves)
        self.names = []  # (dim, tag, name)
        self.coords = {}  # node tag -> (x, y, z)
        self.blocks = []  # (dim, entity, [node tags])
        self.elements = []  # (dim, entity, type, [[node tags]...])

    def bbox(self, tags):
        xs = [self.coords[t] for t in tags]
        lo = [min(c[k] for c in xs) for k in range(3)]
        hi = [max(c[k] for c in xs) for k in range(3)]
        return lo + hi

    def physical_of(self, dim, entity):
        if dim == 0:
            return [p[4] for p in self.points if p[0] == entity][0]
        if dim == 1:
            return [c[2] for c in self.curves if c[0] == entity][0]
        return [s[1] for s in self.surfaces if s[0] == entity][0]

    def write(self, out, version):
        w = out.write
        w("$MeshFormat\n%s 0 8\n$EndMeshFormat\n" % version)
        w("$PhysicalNames\n%d\n" % len(self.names))
        for dim, tag, name in self.names:
            w('%d %d "%s"\n' % (dim, tag, name))
        w("$EndPhysicalNames\n")
        nnodes = sum(len(b[2]) for b in self.blocks)
        nelems = sum(len(e[3]) for e in self.elements)
        if version == "4.1":
            w("$Entities\n%d %d %d 0\n" % (len(self.points), len(self.curves), len(self.surfaces)))
            for tag, x, y, z, phys in self.points:
                w("%d %s %s %s 1 %d\n" % (tag, fmt(x), fmt(y), fmt(z), phys))
            for tag, nodes, phys, (a, b) in self.curves:
                w("%d %s 1 %d 2 %d %d\n" % (tag, " ".join(fmt(v) for v in self.bbox(nodes)), phys, a, -b))
            for tag, phys, bounds in self.surfaces:
                box = self.bbox(list(self.coords))
                w("%d %s 1 %d %d %s\n" % (tag, " ".join(fmt(v) for v in box), phys, len(bounds), " ".join(str(b) for b in bounds)))
            w("$EndEntities\n")
            tags = [t for b in self.blocks for t in b[2]]
            w("$Nodes\n%d %d %d %d\n" % (len(self.blocks), nnodes, min(tags), max(tags)))
            for dim, entity, block in self.blocks:
                w("%d %d 0 %d\n" % (dim, entity, len(block)))
                for t in block:
                    w("%d\n" % t)
                for t in block:
                    w("%s %s %s\n" % tuple(fmt(v) for v in self.coords[t]))
            w("$EndNodes\n")
            w("$Elements\n%d %d 1 %d\n" % (len(self.elements), nelems, nelems))
            tag = 1
            for dim, entity, etype, elems in self.elements:
                w("%d %d %d %d\n" % (dim, entity, etype, len(elems)))
                for nodes in elems:
                    w("%d %s\n" % (tag, " ".join(str(n) for n in nodes)))
                    tag += 1
            w("$EndElements\n")
        else:
            w("$Nodes\n%d\n" % nnodes)
            for dim, entity, block in self.blocks:
                for t in block:
                    w("%d %s %s %s\n" % ((t,) + tuple(fmt(v) for v in self.coords[t])))
            w("$EndNodes\n")
            w("$Elements\n%d\n" % nelems)
            tag = 1
            for dim, entity, etype, elems in self.elements:
                phys = self.physical_of(dim, entity)
                for nodes in elems:
                    w("%d %d 2 %d %d %s\n" % (tag, etype, phys, entity, " ".join(str(n) for n in nodes)))
                    tag += 1
            w("$EndElements\n")


def net(nx, ny, h, triangles, lines=False):
    if nx < 2 or ny < 2:
        sys.exit("make_mesh.py: a net needs nx, ny >= 2")
    m = Mesh()
    m.names = [(0, 1, "corners"), (1, 2, "top"), (1, 3, "right"), (1, 4, "bottom"), (1, 5, "left"), (2, 6, "sheet")]
    tag = {}
    nxt = [1]

    def node(i, j):
        t = nxt[0]
        nxt[0] += 1
        tag[(i, j)] = t
        m.coords[t] = (i * h, j * h, 0.0)
        return t

    corners = [(0, 0), (nx - 1, 0), (nx - 1, ny - 1), (0, ny - 1)]
    for k, (i, j) in enumerate(corners):
        t = node(i, j)
        m.points.append((k + 1, i * h, j * h, 0.0, 1))
        m.blocks.append((0, k + 1, [t]))
        m.elements.append((0, k + 1, 15, [[t]]))
    edges = [
        [(i, 0) for i in range(nx)],  # top: P1 -> P2
        [(nx - 1, j) for j in range(ny)],  # right: P2 -> P3
        [(i, ny - 1) for i in reversed(range(nx))],  # bottom: P3 -> P4
        [(0, j) for j in reversed(range(ny))],  # left: P4 -> P1
    ]
    for c, path in enumerate(edges):
        block = [node(*ij) for ij in path[1:-1]]
        m.blocks.append((1, c + 1, block))
        tags = [tag[ij] for ij in path]
        m.curves.append((c + 1, tags, c + 2, (c + 1, (c + 1) % 4 + 1)))
        m.elements.append((1, c + 1, 1, [[tags[k], tags[k + 1]] for k in range(len(tags) - 1)]))
    block = [node(i, j) for j in range(1, ny - 1) for i in range(1, nx - 1)]
    m.blocks.append((2, 1, block))
    m.surfaces.append((1, 6, [1, 2, 3, 4]))
    if lines:  # a grid of lines: the inner grid segments as line elements of the surface
        segs = [[tag[(i, j)], tag[(i + 1, j)]] for j in range(1, ny - 1) for i in range(nx - 1)]
        segs += [[tag[(i, j)], tag[(i, j + 1)]] for i in range(1, nx - 1) for j in range(ny - 1)]
        m.elements.append((2, 1, 1, segs))
        return m
    cells = []
    for j in range(ny - 1):
        for i in range(nx - 1):
            a, b, c, d = tag[(i, j)], tag[(i + 1, j)], tag[(i + 1, j + 1)], tag[(i, j + 1)]
            if triangles:
                cells += [[a, b, c], [a, c, d]]
            else:
                cells.append([a, b, c, d])
    m.elements.append((2, 1, 2 if triangles else 3, cells))
    return m


def rope(n, h):
    if n < 2:
        sys.exit("make_mesh.py: a rope needs n >= 2")
    m = Mesh()
    m.names = [(0, 1, "start"), (0, 2, "end"), (1, 3, "rope")]
    for t, x in ((1, 0.0), (2, (n - 1) * h)):
        m.coords[t] = (x, 0.0, 0.0)
    m.points = [(1, 0.0, 0.0, 0.0, 1), (2, (n - 1) * h, 0.0, 0.0, 2)]
    m.blocks = [(0, 1, [1]), (0, 2, [2])]
    m.elements = [(0, 1, 15, [[1]]), (0, 2, 15, [[2]])]
    inner = list(range(3, n + 1))
    for k, t in enumerate(inner):
        m.coords[t] = ((k + 1) * h, 0.0, 0.0)
    m.blocks.append((1, 1, inner))
    order = [1] + inner + [2]
    m.curves = [(1, order, 3, (1, 2))]
    m.elements.append((1, 1, 1, [[order[k], order[k + 1]] for k in range(n - 1)]))
    return m


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["net", "rope"])
    ap.add_argument("--nx", type=int, default=12, help="net: nodes along x")
    ap.add_argument("--ny", type=int, default=16, help="net: nodes along y")
    ap.add_argument("--n", type=int, default=100, help="rope: nodes")
    ap.add_argument("--spacing", type=float, default=0.05, help="distance between neighbouring nodes")
    ap.add_argument("--triangles", action="store_true", help="net: two triangles per cell instead of a quadrangle")
    ap.add_argument("--lines", action="store_true", help="net: line elements along the grid lines (a grid of beams)")
    ap.add_argument("--format", choices=["4.1", "2.2"], default="4.1")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    m = net(a.nx, a.ny, a.spacing, a.triangles, a.lines) if a.kind == "net" else rope(a.n, a.spacing)
    with open(a.output, "w") as out:
        m.write(out, a.format)


if __name__ == "__main__":
    main()

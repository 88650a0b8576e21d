#!/usr/bin/env python3
"""Writes large seed inputs for the libFuzzer targets (tests/fuzz/, scripts/fuzz.sh; docs/robustness.md).

libFuzzer seldom grows an input to a megabyte by mutation, so the inputs that exercise the readers at
the size of -max_len come from here: OUTDIR/yaml/*.yaml for fuzz_yaml and OUTDIR/gmsh/*.msh for
fuzz_gmsh, each kind at each of the sizes given (default 128 KiB and 1 MiB; a file is as large as fits
in its size, never larger, so that -max_len does not cut it). The files are deterministic.

YAML (fuzz_yaml writes each input to <scratch>/work/input.yaml; '../meshes/' and '../mesh/' resolve to
meshes/ and tests/inputs/mesh/, as from tests/inputs/good/):
  yaml_particles       a long flat block list of particles, a rod between each pair of neighbours
  yaml_flow_model      the same kind of model as one flow mapping on a single line, springs between
  yaml_rigid           rigid bodies (matrix and axis-angle orientations), spherical and revolute joints
  yaml_chains          many small chains, rods between members of neighbouring chains
  yaml_generators      chains, rigid chains, nets and meshes in turn, and listed bodies with dotted names
  yaml_meshes          many items of 'meshes' naming the same small mesh files (stops at the memory limit)
  yaml_anchors         an anchor on every value and name, aliases for all later uses
  yaml_long_name       one body whose name is the whole size, referenced by a joint
  yaml_long_key        a valid model, then an unknown top-level key (an explicit '? key') as long as the rest
  yaml_long_value      a valid model whose output directory is a very long string
  yaml_long_numbers    numbers with tens of thousands of digits (leading zeros, long fractions)
  yaml_quoted          names in single, double (with escapes) and block scalar styles, UTF-8, CRLF
  yaml_deep            a valid model, then an unknown key holding many structures nested 64 deep
  yaml_scheme_keys     a scheme mapping with many distinct keys
  yaml_documents       a valid document followed by many more documents
  yaml_comments        a valid model interleaved with long comments and blank lines
  yaml_late_error      a large valid model with one unknown body name in the very last joint
Gmsh:
  gmsh41_quads         a square net of quadrangles, MSH 4.1 as Gmsh writes it ($Entities, node and
                       element blocks per entity, physical groups)
  gmsh22_triangles     the same net as triangles, MSH 2.2
  gmsh41_rope          a long rope of line elements, MSH 4.1, sparse node tags
  gmsh22_groups        MSH 2.2, every line element in a physical group of its own, each group named
  gmsh41_entities      MSH 4.1, every element in an entity (and block) of its own, many node blocks
  gmsh41_parametric    MSH 4.1 node blocks with parametric coordinates, CRLF line ends
  gmsh_long_fields     coordinates with thousands of digits, long physical names, tabs and padding
  gmsh_skipped         a large $Comments section and unknown sections the reader skips, then a mesh
  gmsh_shared_edges    many elements over the same few nodes (the edges are shared, one rod each)

Usage:
  tests/fuzz/make_large_seeds.py OUTDIR                        # both kinds, 128 KiB and 1 MiB
  tests/fuzz/make_large_seeds.py --sizes 1M,50M --only yaml_particles,gmsh41_quads OUTDIR   # timing
"""
import argparse
import os
import sys

HEADER = "time: {step: 0.001, end: 0.01}\ngravity: [0, 0, -9.81]\n"


def num(v):
    """A short decimal for a float (no exponent surprises for the reader: plain YAML numbers)."""
    s = "%.6g" % v
    return s


# ---------------------------------------------------------------- YAML


def yaml_particles(n):
    out = [HEADER, "bodies:\n"]
    for i in range(n):
        out.append("  - name: p%d\n    type: particle\n    mass: 0.01\n    position: [0, 0, %s]\n" % (i, num(-0.1 * (i + 1))))
    out.append("joints:\n  - {type: rod, bodies: [ground, p0], points: [[0, 0, 0], [0, 0, 0]]}\n")
    for i in range(1, n):
        out.append("  - {type: rod, bodies: [p%d, p%d]}\n" % (i - 1, i))
    return "".join(out)


def yaml_flow_model(n):
    bodies = ", ".join("{name: q%d, type: particle, mass: 1, position: [%d, 0, 0], velocity: [0, %s, 0]}" % (i, i, num(0.001 * i)) for i in range(n))
    springs = ", ".join("{type: linear, bodies: [q%d, q%d], stiffness: 10}" % (i - 1, i) for i in range(1, n))
    return "{time: {step: 0.001, end: 0.01}, scheme: {type: vi-a, theta: 0.5}, bodies: [%s], springs: [%s], joints: [{type: fixed_point, body: q0}]}\n" % (bodies, springs)


def yaml_rigid(n):
    out = [HEADER, "scheme: {type: vi-b, theta: 1, vartheta: 0.5}\nbodies:\n"]
    for i in range(n):
        if i % 2:
            orient = "{axis: [0, 0, %d], angle: 0}" % (i % 5 + 1)
        else:
            orient = "{matrix: [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}"
        # every body spins about the chain's axis, so that the joints hold at the start (positions and velocities)
        out.append("  - {name: r%d, type: rigid, mass: 1, inertia: [1, 1.5, 2], position: [%d, 0, 0], orientation: %s, angular_velocity: [0.1, 0, 0]}\n" % (i, 2 * i, orient))
    out.append("joints:\n  - {type: spherical, bodies: [ground, r0], points: [[-1, 0, 0], [-1, 0, 0]]}\n")
    for i in range(1, n):
        if i % 3 == 0:
            out.append("  - {type: revolute, bodies: [r%d, r%d], points: [[1, 0, 0], [-1, 0, 0]], axes: [[0, 0, 1], [0, 0, 1]]}\n" % (i - 1, i))
        else:
            out.append("  - {type: spherical, bodies: [r%d, r%d], points: [[1, 0, 0], [-1, 0, 0]]}\n" % (i - 1, i))
    return "".join(out)


def yaml_chains(n):
    out = [HEADER, "chains:\n"]
    for i in range(n):
        out.append("  - {name: c%d, count: 2, mass: 0.01, length: 0.1, start: [%d, 0, 0], direction: [0, 0, -1]}\n" % (i, i))
    out.append("springs:\n")
    for i in range(1, n):
        out.append("  - {type: linear, bodies: [c%d.1, c%d.1], stiffness: 1}\n" % (i - 1, i))
    return "".join(out)


def section(name, n, line):
    """A YAML section with n entries, each `line` formatted with its index (as many times as it asks)."""
    return [name + ":\n"] + [line % ((i,) * line.count("%d")) for i in range(n)]


def yaml_generators(n):
    out = [HEADER]
    out += section("bodies", n, "  - {name: b%d.%d, type: particle, mass: 0.01, position: [%d, 5, 0]}\n")
    out += section("chains", n, "  - {name: ch%d, count: 1, mass: 0.01, length: 0.1, start: [%d, 1, 0], direction: [0, 0, -1]}\n")
    out += section("rigid_chains", n, "  - {name: rc%d, count: 1, mass: 0.01, inertia: [1e-4, 1e-4, 1e-5], length: 0.1, start: [%d, 2, 0], direction: [0, 0, -1]}\n")
    out += section("nets", n, "  - {name: n%d, count: [2, 2], mass: 0.01, spacing: 0.1, origin: [%d, 3, 0], fixed: [{j: 0}]}\n")
    out.append("meshes:\n  - {name: m, file: ../mesh/rope_tags41.msh, node_mass: 0.01, fixed: [anchor], translation: [0, 4, 0]}\n")
    out += section("joints", n, "  - {type: fixed_point, body: b%d.%d}\n")
    out += section("springs", n, "  - {type: linear, bodies: [ch%d.0, n%d.1.1], stiffness: 1}\n")
    return "".join(out)


def yaml_meshes(n):
    files = ["../meshes/net12x16.msh", "../mesh/net5x4_quad41.msh", "../mesh/net5x4_tri22.msh", "../mesh/rope_tags41.msh"]
    fixed = ["top", "top", "top", "anchor"]
    out = [HEADER, "meshes:\n"]
    for i in range(n):
        k = i % len(files)
        out.append("  - {name: mesh%d, file: %s, line_density: 0.02, fixed: [%s], translation: [%d, 0, 0]}\n" % (i, files[k], fixed[k], i))
    return "".join(out)


def yaml_anchors(n):
    out = [HEADER, "bodies:\n"]
    for i in range(n):
        t = "&tp particle" if i == 0 else "*tp"
        v = "&v%d [0, 0, 0]" % i if i % 7 == 0 else "*v%d" % (i - i % 7)
        out.append("  - {name: &n%d a%d, type: %s, mass: &m%d 0.01, position: &x%d [0, 0, %s], velocity: %s}\n"
                   % (i, i, t, i, i, num(-0.1 * (i + 1)), v))
    out.append("joints:\n  - {type: rod, bodies: [ground, *n0], points: [&z [0, 0, 0], *z]}\n")
    for i in range(1, n):
        out.append("  - {type: rod, bodies: [*n%d, *n%d], points: [*z, *z]}\n" % (i - 1, i))
    out.append("springs:\n")
    for i in range(1, n, 2):
        out.append("  - {type: linear, bodies: [*n%d, *n%d], stiffness: *m%d}\n" % (i - 1, i, i))
    return "".join(out)


def yaml_long_name(n):
    name = "".join(chr(ord("a") + (i * 7) % 26) for i in range(n))
    return HEADER + "bodies:\n  - {name: %s, type: particle, mass: 1, position: [0, 0, -1]}\njoints:\n  - {type: rod, bodies: [ground, %s]}\n" % (name, name)


def yaml_long_key(n):
    # an explicit key ('? '): a plain implicit key may have at most 1024 characters
    return yaml_particles(20) + "? " + "k" * n + "\n: 1\n"


def yaml_long_value(n):
    return yaml_particles(20) + "output: {directory: %s, every: 1}\n" % ("d/" * (n // 2))


def yaml_long_numbers(n):
    digits = max(1, n // 8)
    small = "0." + "0" * digits + "1"  # a subnormal-free tiny number? no: it underflows to 0 unless short
    zeros = "0" * digits
    out = [HEADER.replace("0.001", "0.00100" + "0" * (digits // 4)), "bodies:\n"]
    out.append("  - {name: z, type: particle, mass: %s1, position: [0.%s5, -%s2.5, 1e-%s5], velocity: [%s, 0, 0]}\n" % (zeros, "0" * 3 + "1" * digits, zeros, zeros, small))
    out.append("  - {name: w, type: particle, mass: 1.%s, position: [3.%s, 0, 0]}\n" % ("0" * digits, "1" * digits))
    out.append("chains:\n  - {name: c, count: %s3, mass: 1, length: 0.%s1, direction: [0, 0, -1]}\n" % (zeros, "0" * 3))
    out.append("joints:\n  - {type: rod, bodies: [z, w]}\n  - {type: fixed_point, body: z}\n")
    return "".join(out)


def yaml_quoted(n):
    out = ["\ufeff" + HEADER.replace("\n", "\r\n"), "bodies:\r\n"]
    names = []
    for i in range(n):
        k = i % 4
        if k == 0:
            name, text = "s%d" % i, "'s%d'" % i
        elif k == 1:
            name, text = "d\u00e9\u4e2d%d" % i, '"d\\u00e9\u4e2d%d"' % i
        elif k == 2:
            name, text = "x y%d" % i, '"x\\x20y%d"' % i
        else:
            name, text = "blk%d" % i, "|-\r\n      blk%d" % i
        names.append(name)
        out.append("  - name: %s\r\n    type: \"particle\"\r\n    mass: 0.5\r\n    position: [%d, 0, 0]\r\n" % (text, i))
    out.append("springs:\r\n")
    for i in range(1, n):
        out.append("  - {type: linear, bodies: ['%s', '%s'], stiffness: 1}\r\n" % (names[i - 1].replace("'", "''"), names[i].replace("'", "''")))
    out.append("joints:\r\n  - {type: fixed_point, body: '%s'}\r\n" % names[0])
    return "".join(out)


def yaml_deep(n):
    # the top-level mapping and the key's sequence take two levels: 62 more make 64, the deepest allowed
    nest = "[" * 62 + "0" + "]" * 62
    block = "".join("  " * (d + 1) + "k%d:\n" % d for d in range(62)) + "  " * 63 + "v\n"
    items = []
    for i in range(n):
        items.append("  - " + nest + "\n" if i % 2 == 0 else "  - {a: " + "{b: " * 61 + "0" + "}" * 61 + "}\n")
    return yaml_particles(10) + "zz_deep_block:\n" + block + "zz_deep:\n" + "".join(items)


def yaml_scheme_keys(n):
    keys = ", ".join("k%d: 0.5" % i for i in range(n))
    return HEADER + "scheme: {type: vi-a, theta: 0.5, %s}\nbodies:\n  - {name: p, type: particle, mass: 1, position: [0, 0, 0]}\n" % keys


def yaml_documents(n):
    docs = []
    for i in range(n):
        docs.append("---\n%s\n...\n" % ("{time: {step: 1, end: 2}}" if i % 2 else "- [%d, %d]" % (i, i)))
    return "%YAML 1.1\n---\n" + yaml_particles(10) + "...\n" + "".join(docs)


def yaml_comments(n):
    out = ["# " + "c" * 200 + "\n\n"]
    body = yaml_particles(n).split("\n")
    for i, line in enumerate(body):
        out.append(line + ("   # note %d %s\n" % (i, "-" * 40) if line and i % 2 else "\n"))
        if i % 5 == 0:
            out.append("\n# a comment line between items %d\n\n" % i)
    return "".join(out)


def yaml_late_error(n):
    return yaml_particles(n) + "springs:\n  - {type: linear, bodies: [p0, p%d], stiffness: 1}\n" % (n + 7)


# ---------------------------------------------------------------- Gmsh


def g(v):
    return repr(float(v)) if v != int(v) else str(int(v))


def grid_nodes(nx, ny, h):
    """Node tag of (i, j) is j nx + i + 1."""
    return [(j * nx + i + 1, i * h, j * h) for j in range(ny) for i in range(nx)]


def gmsh41_quads(n):
    nx = max(2, int(n ** 0.5))
    ny = max(2, n // nx)
    h = 0.01
    tag = lambda i, j: j * nx + i + 1
    w = []
    w.append("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n")
    w.append('$PhysicalNames\n3\n0 1 "corner"\n1 2 "top"\n2 3 "sheet"\n$EndPhysicalNames\n')
    X, Y = (nx - 1) * h, (ny - 1) * h
    w.append("$Entities\n1 1 1 0\n1 0 0 0 1 1\n1 0 0 0 %s 0 0 1 2 0\n1 0 0 0 %s %s 0 1 3 1 1\n$EndEntities\n" % (g(X), g(X), g(Y)))
    # node blocks: the corner point, the top edge (j = 0, i >= 1), the rest of the surface
    top = [tag(i, 0) for i in range(1, nx)]
    rest = [tag(i, j) for j in range(1, ny) for i in range(nx)]
    w.append("$Nodes\n3 %d 1 %d\n" % (nx * ny, nx * ny))
    for dim, ent, tags in ((0, 1, [1]), (1, 1, top), (2, 1, rest)):
        w.append("%d %d 0 %d\n" % (dim, ent, len(tags)))
        w.append("".join("%d\n" % t for t in tags))
        w.append("".join("%s %s 0\n" % (g(((t - 1) % nx) * h), g(((t - 1) // nx) * h)) for t in tags))
    w.append("$EndNodes\n")
    nq = (nx - 1) * (ny - 1)
    ne = 1 + (nx - 1) + nq
    w.append("$Elements\n3 %d 1 %d\n" % (ne, ne))
    w.append("0 1 15 1\n1 1\n")
    w.append("1 1 1 %d\n" % (nx - 1))
    e = 2
    for i in range(nx - 1):
        w.append("%d %d %d\n" % (e, tag(i, 0), tag(i + 1, 0)))
        e += 1
    w.append("2 1 3 %d\n" % nq)
    for j in range(ny - 1):
        for i in range(nx - 1):
            w.append("%d %d %d %d %d\n" % (e, tag(i, j), tag(i + 1, j), tag(i + 1, j + 1), tag(i, j + 1)))
            e += 1
    w.append("$EndElements\n")
    return "".join(w)


def gmsh22_triangles(n):
    nx = max(2, int(n ** 0.5))
    ny = max(2, n // nx)
    h = 0.01
    tag = lambda i, j: j * nx + i + 1
    w = ["$MeshFormat\n2.2 0 8\n$EndMeshFormat\n", '$PhysicalNames\n2\n1 1 "top"\n2 2 "sheet"\n$EndPhysicalNames\n']
    w.append("$Nodes\n%d\n" % (nx * ny))
    w.append("".join("%d %s %s %s\n" % (t, g(x), g(y), g(0.001 * ((t * 7919) % 13))) for t, x, y in grid_nodes(nx, ny, h)))
    w.append("$EndNodes\n")
    ne = (nx - 1) + 2 * (nx - 1) * (ny - 1)
    w.append("$Elements\n%d\n" % ne)
    e = 1
    for i in range(nx - 1):
        w.append("%d 1 2 1 1 %d %d\n" % (e, tag(i, 0), tag(i + 1, 0)))
        e += 1
    for j in range(ny - 1):
        for i in range(nx - 1):
            a, b, c, d = tag(i, j), tag(i + 1, j), tag(i + 1, j + 1), tag(i, j + 1)
            w.append("%d 2 2 2 1 %d %d %d\n%d 2 2 2 1 %d %d %d\n" % (e, a, b, c, e + 1, a, c, d))
            e += 2
    w.append("$EndElements\n")
    return "".join(w)


def gmsh41_rope(n):
    n = max(2, n)
    tags = [1 + 3 * k for k in range(n)]  # sparse tags
    w = ["$MeshFormat\n4.1 0 8\n$EndMeshFormat\n", '$PhysicalNames\n2\n0 1 "anchor"\n1 2 "rope"\n$EndPhysicalNames\n']
    w.append("$Entities\n2 1 0 0\n1 0 0 0 1 1\n2 %s 0 0 0\n1 0 0 0 %s 0 0 1 2 2 1 -2\n$EndEntities\n" % (g(n - 1), g(n - 1)))
    w.append("$Nodes\n3 %d 1 %d\n" % (n, tags[-1]))
    w.append("0 1 0 1\n%d\n0 0 0\n" % tags[0])
    w.append("0 2 0 1\n%d\n%s 0 0\n" % (tags[-1], g(n - 1)))
    inner = tags[1:-1]
    w.append("1 1 0 %d\n" % len(inner))
    w.append("".join("%d\n" % t for t in inner))
    w.append("".join("%d 0 0\n" % (k + 1) for k in range(len(inner))))
    w.append("$EndNodes\n")
    w.append("$Elements\n2 %d 1 %d\n0 1 15 1\n1 %d\n1 1 1 %d\n" % (n, n, tags[0], n - 1))
    w.append("".join("%d %d %d\n" % (k + 2, tags[k], tags[k + 1]) for k in range(n - 1)))
    w.append("$EndElements\n")
    return "".join(w)


def gmsh22_groups(n):
    n = max(2, n)
    w = ["$MeshFormat\n2.2 0 8\n$EndMeshFormat\n", "$PhysicalNames\n%d\n" % (n - 1)]
    w.append("".join('1 %d "segment %d"\n' % (k + 1, k) for k in range(n - 1)))
    w.append("$EndPhysicalNames\n$Nodes\n%d\n" % n)
    w.append("".join("%d %d 0 0\n" % (k + 1, k) for k in range(n)))
    w.append("$EndNodes\n$Elements\n%d\n" % (n - 1))
    w.append("".join("%d 1 2 %d %d %d %d\n" % (k + 1, k + 1, k + 1, k + 1, k + 2) for k in range(n - 1)))
    w.append("$EndElements\n")
    return "".join(w)


def gmsh41_entities(n):
    n = max(2, n)  # nodes of a rope; each line element in a curve entity and a physical group of its own
    w = ["$MeshFormat\n4.1 0 8\n$EndMeshFormat\n"]
    w.append("$Entities\n%d %d 0 0\n" % (n, n - 1))
    w.append("".join("%d %d 0 0 0\n" % (k + 1, k) for k in range(n)))
    w.append("".join("%d %d 0 0 %d 0 0 1 %d 2 %d -%d\n" % (k + 1, k, k + 1, k + 1, k + 1, k + 2) for k in range(n - 1)))
    w.append("$EndEntities\n$Nodes\n%d %d 1 %d\n" % (n, n, n))
    w.append("".join("0 %d 0 1\n%d\n%d 0 0\n" % (k + 1, k + 1, k) for k in range(n)))
    w.append("$EndNodes\n$Elements\n%d %d 1 %d\n" % (n - 1, n - 1, n - 1))
    w.append("".join("1 %d 1 1\n%d %d %d\n" % (k + 1, k + 1, k + 1, k + 2) for k in range(n - 1)))
    w.append("$EndElements\n")
    return "".join(w)


def gmsh41_parametric(n):
    n = max(2, n)
    w = ["$MeshFormat\r\n4.1 0 8\r\n$EndMeshFormat\r\n"]
    w.append("$Entities\r\n0 1 0 0\r\n1 0 0 0 %d 0 0 0 0\r\n$EndEntities\r\n" % (n - 1))
    w.append("$Nodes\r\n1 %d 1 %d\r\n1 1 1 %d\r\n" % (n, n, n))
    w.append("".join("%d\r\n" % (k + 1) for k in range(n)))
    w.append("".join("%d 0 0 %s\r\n" % (k, g(k / (n - 1))) for k in range(n)))
    w.append("$EndNodes\r\n$Elements\r\n1 %d 1 %d\r\n1 1 1 %d\r\n" % (n - 1, n - 1, n - 1))
    w.append("".join("%d %d %d\r\n" % (k + 1, k + 1, k + 2) for k in range(n - 1)))
    w.append("$EndElements\r\n")
    return "".join(w)


def gmsh_long_fields(n):
    d = max(1, n // 12)
    name = "".join(chr(ord("A") + k % 26) for k in range(d))
    w = ["$MeshFormat\n2.2 0 8\n$EndMeshFormat\n", '$PhysicalNames\n2\n1 1 "%s"\n1 2 "%s two"\n$EndPhysicalNames\n' % (name, name[: d // 2])]
    w.append("$Nodes\n4\n")
    w.append("1\t0.%s\t0 \t 0\n" % ("0" * d + "1"))
    w.append("%s2  1.%s 0 0   \n" % ("0" * d, "5" * d))
    w.append("3 2e%s0 0 0\n" % ("0" * d))
    w.append("4 3 -0.%s 0\n" % ("9" * d))
    w.append("$EndNodes\n$Elements\n3\n")
    w.append("1 1 2 1 1 1 2\n2 1 2 2 1 2 %s3\n3 1 0 3 4\n$EndElements\n" % ("0" * d))
    return "".join(w)


def gmsh_skipped(n):
    lines = "".join("comment line %d %s\n" % (k, "." * 60) for k in range(max(1, n // 80)))
    rope = gmsh41_rope(50)
    head, rest = rope.split("$PhysicalNames", 1)
    return head + "$Comments\n" + lines + "$EndComments\n$NodeData\n1\n\"x\"\n1\n0\n3\n0\n1\n0\n$EndNodeData\n$Unknown\n$\n$End\n$EndUnknown\n$PhysicalNames" + rest


def gmsh_shared_edges(n):
    n = max(1, n)
    w = ["$MeshFormat\n4.1 0 8\n$EndMeshFormat\n"]
    w.append("$Nodes\n1 4 1 4\n2 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n$EndNodes\n")
    w.append("$Elements\n3 %d 1 %d\n" % (3 * n, 3 * n))
    w.append("2 1 3 %d\n" % n)
    w.append("".join("%d %s\n" % (k + 1, ("1 2 3 4", "2 3 4 1", "4 3 2 1")[k % 3]) for k in range(n)))
    w.append("2 1 2 %d\n" % n)
    w.append("".join("%d %s\n" % (n + k + 1, ("1 2 3", "3 4 1", "2 4 3")[k % 3]) for k in range(n)))
    w.append("1 1 1 %d\n" % n)
    w.append("".join("%d %s\n" % (2 * n + k + 1, ("1 2", "3 2", "4 1", "1 3")[k % 4]) for k in range(n)))
    w.append("$EndElements\n")
    return "".join(w)


KINDS = [
    ("yaml", "yaml", f) for f in (yaml_particles, yaml_flow_model, yaml_rigid, yaml_chains, yaml_generators, yaml_meshes,
                                  yaml_anchors, yaml_long_name, yaml_long_key, yaml_long_value, yaml_long_numbers,
                                  yaml_quoted, yaml_deep, yaml_scheme_keys, yaml_documents, yaml_comments, yaml_late_error)
] + [
    ("gmsh", "msh", f) for f in (gmsh41_quads, gmsh22_triangles, gmsh41_rope, gmsh22_groups, gmsh41_entities,
                                 gmsh41_parametric, gmsh_long_fields, gmsh_skipped, gmsh_shared_edges)
]


def fit(f, target):
    """The largest output of f(n) (n: the kind's own measure of size) of at most 'target' bytes, or None."""
    n = 8
    data = f(n).encode()
    while len(data) * 8 < target:  # grow geometrically until the size is in reach, then interpolate
        n *= 8
        data = f(n).encode()
    best = data if len(data) <= target else None
    for _ in range(12):
        if best is not None and len(best) > 0.985 * target:
            break
        n = max(1, int(n * 0.995 * target / len(data)))
        data = f(n).encode()
        if len(data) <= target and (best is None or len(data) > len(best)):
            best = data
    while best is None:
        n = max(1, int(n * 0.97))
        data = f(n).encode()
        if len(data) <= target:
            best = data
        elif n == 1:
            return None
    return best


def parse_size(s):
    units = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
    s = s.strip().upper().rstrip("B").rstrip("I")
    return int(float(s[:-1]) * units[s[-1]]) if s and s[-1] in units else int(s)


def label(size):
    for unit, name in ((1024 ** 2, "M"), (1024, "K")):
        if size % unit == 0:
            return "%d%s" % (size // unit, name)
    return str(size)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("--sizes", default="128K,1M", help="comma-separated largest file sizes (bytes, or with K, M, G = KiB, MiB, GiB)")
    ap.add_argument("--only", default="", help="comma-separated kinds (default: all)")
    ap.add_argument("--list", action="store_true", help="list the kinds and exit")
    a = ap.parse_args()
    if a.list:
        print("\n".join(f.__name__ for _, _, f in KINDS))
        return
    only = set(k for k in a.only.split(",") if k)
    unknown = only - set(f.__name__ for _, _, f in KINDS)
    if unknown:
        sys.exit("make_large_seeds.py: unknown kind(s) %s (--list lists them)" % ", ".join(sorted(unknown)))
    sizes = [parse_size(s) for s in a.sizes.split(",") if s]
    for sub, ext, f in KINDS:
        if only and f.__name__ not in only:
            continue
        os.makedirs(os.path.join(a.outdir, sub), exist_ok=True)
        for size in sizes:
            data = fit(f, size)
            if data is None:
                print("make_large_seeds.py: %s is larger than %d bytes even at its smallest, skipped" % (f.__name__, size), file=sys.stderr)
                continue
            path = os.path.join(a.outdir, sub, "%s_%s.%s" % (f.__name__, label(size), ext))
            with open(path, "wb") as out:
                out.write(data)


if __name__ == "__main__":
    main()

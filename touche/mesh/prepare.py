"""Mesh preparation (Ericson, Real-Time Collision Detection, ch. 12): welding, adjacency,
connected components, holes / cracks / T-junctions, orientation, planarity, coplanar merging,
Euler checks.

Meshes are ``(vertices (n, 3) float64, faces (m, 3) int64)`` pairs; every function also takes a
TriangleMesh or a trimesh.Trimesh as its first argument (then ``faces`` is omitted).
Functions that change a mesh return new arrays and never modify their input.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import GeometryError
from ._common import _kernels, face_normals, newell_normal  # noqa: F401  (newell_normal: public here)

def _mesh_arrays(vertices, faces=None, copy=True):
    """(vertices (n, 3) float64, faces (m, 3) int64), validated; private copies unless ``copy``
    is False (for callers that never write into them: no copy when the input already fits)."""
    if faces is None:
        if hasattr(vertices, "vertices") and hasattr(vertices, "faces"):
            vertices, faces = vertices.vertices, vertices.faces
        else:
            raise GeometryError("pass a mesh (TriangleMesh / trimesh.Trimesh) or vertices and faces")
    v = np.array(vertices, dtype=np.float64, order="C") if copy else np.ascontiguousarray(vertices, dtype=np.float64)
    if v.ndim != 2 or v.shape[1] != 3:
        raise GeometryError(f"vertices must have shape (n, 3), got {v.shape}")
    if not np.isfinite(v).all():
        raise GeometryError("vertices contain NaN or inf")
    f = np.array(faces, order="C") if copy else np.ascontiguousarray(faces)
    if f.size == 0:
        f = np.zeros((0, 3), dtype=np.int64)
    if f.ndim != 2 or f.shape[1] != 3:
        raise GeometryError(f"faces must have shape (m, 3), got {f.shape}")
    if not np.issubdtype(f.dtype, np.integer):
        raise GeometryError("faces must hold integer vertex indices")
    f = f.astype(np.int64, copy=copy)
    if f.size and (f.min() < 0 or f.max() >= len(v)):
        raise GeometryError(f"faces index vertices out of range [0, {len(v)})")
    return v, f


# --------------------------------------------------------------------------------------------
# 12.1 welding
def weld(vertices, faces=None, tolerance=None, drop_degenerate=True, return_map=False, return_face_ids=False):
    """Weld vertices (Ericson 12.1).

    ``tolerance=None``: join vertices with exactly equal coordinates (hash of the bit patterns,
    -0.0 == 0.0; O(n)). ``tolerance=d > 0``: sequential welding on a hashed uniform grid (cell
    size 2d): each vertex joins the EARLIEST kept vertex within distance ``d`` (closed ball), else
    it is kept — so no vertex moves more than ``d`` (the book's "weld to previous vertex" option;
    the result depends on vertex order, as the book explains). Vertices no face uses are
    dropped; with ``drop_degenerate`` faces that lost a corner (two equal indices) are removed.

    Returns ``(vertices (k, 3), faces (m', 3))``, and with ``return_map`` also
    ``vertex_map (n,)`` (old vertex -> new vertex, -1 for dropped ones), and with
    ``return_face_ids`` also ``face_ids (m',)``: the input face each output face comes from
    (faces keep their order; dropped ones leave gaps).
    """
    v, f = _mesh_arrays(vertices, faces, copy=False)  # read only below: no copy of a large input
    kernels = _kernels()
    if tolerance is None:
        normalised = v + 0.0  # -0.0 + 0.0 == +0.0: one bit pattern for zero
        remap, kept = kernels.weld_exact(np.ascontiguousarray(normalised).view(np.int64))
        del normalised
    else:
        tolerance = float(tolerance)
        if not np.isfinite(tolerance) or tolerance <= 0.0:
            raise GeometryError(f"tolerance must be finite and > 0, got {tolerance!r}")
        cell = 2.0 * tolerance  # Ericson: the cell must be at least twice the weld radius
        largest = float(np.abs(v).max()) if v.size else 0.0
        # Ericson's assert: x +- eps must differ from x, and cell indices must fit int64 exactly
        if largest / cell > 2.0 ** 52 or (largest > 0 and largest + tolerance == largest):
            raise GeometryError(f"tolerance {tolerance:g} is too small for coordinates as large as "
                                f"{largest:g} (float64 cannot resolve it)")
        remap, kept = kernels.weld_tolerance(v, tolerance, cell)
    new_vertices = v[kept]
    new_faces = remap[f]
    face_ids = np.arange(len(new_faces), dtype=np.int64)
    if drop_degenerate and len(new_faces):
        good = ((new_faces[:, 0] != new_faces[:, 1]) & (new_faces[:, 1] != new_faces[:, 2])
                & (new_faces[:, 2] != new_faces[:, 0]))
        new_faces = new_faces[good]
        face_ids = face_ids[good]
    new_vertices, new_faces, compact = _drop_unused(new_vertices, new_faces)
    result = (new_vertices, new_faces)
    if return_map:
        result += (compact[remap],)
    if return_face_ids:
        result += (face_ids,)
    return result


def _drop_unused(vertices, faces):
    used = np.zeros(len(vertices), dtype=bool)
    used[faces.reshape(-1)] = True
    if used.all():  # the common case: no copies
        return vertices, faces, np.arange(len(vertices), dtype=np.int64)
    compact = np.full(len(vertices), -1, dtype=np.int64)
    compact[used] = np.arange(int(used.sum()))
    return vertices[used], compact[faces], compact


# --------------------------------------------------------------------------------------------
# 12.2 adjacency
class EdgeTable(NamedTuple):
    """Edge -> face table (Ericson 12.2.2).

    ``edges`` (e, 2) int64 vertex pairs with ``edges[:, 0] < edges[:, 1]``, sorted;
    ``face_edges`` (m, 3): edge id of face edge k = (faces[f, k], faces[f, (k + 1) % 3]);
    ``face_count`` (e,): faces per edge (1 = boundary, 2 = manifold, > 2 = non-manifold);
    ``start`` (e + 1,), ``faces`` (3m,): faces of edge i are ``faces[start[i]:start[i + 1]]``
    (ascending).
    """

    edges: np.ndarray
    face_edges: np.ndarray
    face_count: np.ndarray
    start: np.ndarray
    faces: np.ndarray


def edge_table(vertices, faces=None):
    """The edge -> face table of a mesh (vectorised: one stable sort of the 3m half-edges)."""
    v, f = _mesh_arrays(vertices, faces)
    table = _table(v, f)
    return EdgeTable(*(array.copy() for array in table))  # callers may modify theirs


_LAST_TABLE = [(None, None)]  # [(key, EdgeTable)]: the functions of one inspect() share one table


def _table(v, f):
    """edge_table without validation, cached for the last faces array seen (by content)."""
    import hashlib

    key = (len(v), f.shape, hashlib.blake2b(np.ascontiguousarray(f).view(np.uint8), digest_size=16).digest())
    cached_key, cached = _LAST_TABLE[0]  # one tuple: threads never see a key with another's table
    if cached_key == key:
        return cached
    n = max(len(v), 1)
    a = f.reshape(-1)
    b = f[:, [1, 2, 0]].reshape(-1)
    keys = np.minimum(a, b) * n + np.maximum(a, b)
    # stable: half-edge index 3 f + k ascends within an edge, so its faces come out ascending
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    first = np.ones(len(sorted_keys), dtype=bool)
    first[1:] = sorted_keys[1:] != sorted_keys[:-1]
    start = np.append(np.flatnonzero(first), len(sorted_keys)).astype(np.int64)
    inverse = np.empty(len(keys), dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    unique = sorted_keys[first]
    edges = np.stack([unique // n, unique % n], axis=1)
    table = EdgeTable(edges, inverse.reshape(-1, 3), np.diff(start), start, order // 3)
    _LAST_TABLE[0] = (key, table)
    return table


def vertex_faces(vertices, faces=None):
    """Vertex -> face table (Ericson 12.2.1) in CSR form: ``(start (n + 1,), faces)``; the faces
    using vertex i are ``faces[start[i]:start[i + 1]]`` (ascending, a face listed once per
    corner it has at i)."""
    v, f = _mesh_arrays(vertices, faces)
    flat = f.reshape(-1)
    order = np.argsort(flat, kind="stable")
    start = np.zeros(len(v) + 1, dtype=np.int64)
    np.cumsum(np.bincount(flat, minlength=len(v)), out=start[1:])
    return start, order // 3


def face_pairs(vertices, faces=None, table=None):
    """Pairs of faces sharing a manifold edge (exactly two faces):
    ``(face_a (p,), face_b (p,), same_direction (p,) int64, edge (p,))``; ``same_direction`` is 1
    when both faces run along the edge the same way (inconsistent orientation)."""
    v, f = _mesh_arrays(vertices, faces)
    table = _table(v, f) if table is None else table
    manifold = np.flatnonzero(table.face_count == 2)
    first = table.faces[table.start[manifold]]
    second = table.faces[table.start[manifold] + 1]
    # direction of the edge inside each face: +1 if it runs lo -> hi
    slot_first = np.argmax(table.face_edges[first] == manifold[:, None], axis=1)
    slot_second = np.argmax(table.face_edges[second] == manifold[:, None], axis=1)
    forward_first = f[first, slot_first] < f[first, (slot_first + 1) % 3]
    forward_second = f[second, slot_second] < f[second, (slot_second + 1) % 3]
    return first, second, (forward_first == forward_second).astype(np.int64), manifold


def connected_components(vertices, faces=None, by="edge"):
    """Face labels (m,) in 0..k-1 (Ericson 12.2.3): faces are connected through a shared edge
    (``by="edge"``) or a shared vertex (``by="vertex"``). Labels follow first appearance."""
    v, f = _mesh_arrays(vertices, faces)
    kernels = _kernels()
    if len(f) == 0:
        return np.zeros(0, dtype=np.int64)
    if by == "vertex":
        a = np.concatenate([f[:, 0], f[:, 1]])
        b = np.concatenate([f[:, 1], f[:, 2]])
        vertex_label = kernels.component_labels(len(v), a, b)
        face_label = vertex_label[f[:, 0]]
        _, relabel = np.unique(face_label, return_inverse=True)
        # renumber by first appearance among faces
        first_seen = np.full(relabel.max() + 1, len(f))
        np.minimum.at(first_seen, relabel, np.arange(len(f)))
        rank = np.empty_like(first_seen)
        rank[np.argsort(first_seen)] = np.arange(len(first_seen))
        return rank[relabel]
    if by != "edge":
        raise GeometryError(f"by must be 'edge' or 'vertex', got {by!r}")
    table = _table(v, f)
    # consecutive faces of each edge's list are joined
    joined = np.ones(len(table.faces), dtype=bool)
    joined[table.start[:-1]] = False  # the first face of each edge has no predecessor
    idx = np.flatnonzero(joined)
    return kernels.component_labels(len(f), table.faces[idx - 1], table.faces[idx])


# --------------------------------------------------------------------------------------------
# 12.3 holes, cracks, T-junctions
def boundary_edges(vertices, faces=None, table=None):
    """Edges used by exactly one face, as directed in their face: (b, 2) int64."""
    v, f = _mesh_arrays(vertices, faces)
    table = _table(v, f) if table is None else table
    single = table.face_count[table.face_edges] == 1  # (m, 3)
    face, slot = np.nonzero(single)
    return np.stack([f[face, slot], f[face, (slot + 1) % 3]], axis=1)


def boundary_loops(vertices, faces=None):
    """Holes (Ericson 12.3): closed chains of boundary edges, as a list of vertex-index arrays.
    Each loop runs opposite to its faces' edges, i.e. in the winding a face filling it needs."""
    v, f = _mesh_arrays(vertices, faces)
    edges = boundary_edges(v, f)
    if len(edges) == 0:
        return []
    starts, loop_vertices = _kernels().boundary_loops(edges[:, 0].copy(), edges[:, 1].copy(), len(v))
    loops = []
    for i in range(len(starts) - 1):  # one iteration per hole
        loop = loop_vertices[starts[i]:starts[i + 1]]
        if len(np.unique(loop)) == len(loop):
            loops.append(loop)
        else:
            loops.extend(_simple_cycles(loop))
    return loops


def _simple_cycles(loop):
    """Split a closed walk that visits a vertex twice (holes touching at a non-manifold vertex,
    chained into a figure 8) into simple cycles: walk on, and when a vertex already on the
    current path comes again, the path since its first visit is one cycle."""
    path, position, cycles = [], {}, []
    for vertex in loop.tolist():
        if vertex in position:
            start = position[vertex]
            cycle = path[start:]
            for gone in cycle[1:]:
                del position[gone]
            del path[start + 1:]
            if len(cycle) >= 3:
                cycles.append(np.array(cycle, dtype=np.int64))
        else:
            position[vertex] = len(path)
            path.append(vertex)
    if len(path) >= 3:
        cycles.append(np.array(path, dtype=np.int64))
    return cycles


def fill_holes(vertices, faces=None, max_edges=None):
    """Close every boundary loop (with at most ``max_edges`` edges, all if None) by ear-cutting
    it in the plane of its Newell normal (Ericson 12.4.2, 12.5.1). The new faces wind like the
    mesh around them. Returns ``(vertices, faces, filled)``: the new faces are appended after
    the old ones; ``filled`` is the number of holes closed."""
    from .triangulate import triangulate_polygon

    v, f = _mesh_arrays(vertices, faces)
    new = [f]
    filled = 0
    for loop in boundary_loops(v, f):
        if len(loop) < 3 or (max_edges is not None and len(loop) > max_edges):
            continue
        triangles = triangulate_polygon(v[loop])
        new.append(loop[triangles])
        filled += 1
    return v, np.concatenate(new), filled


class TJunctions(NamedTuple):
    """T-vertices (Ericson 12.3): ``vertex[i]`` lies on the interior of edge ``edge[i]`` (a
    vertex pair, directed as in its face) at parameter ``t[i]`` in (0, 1); ``face[i]`` is the face
    owning that edge (a boundary edge: one face)."""

    vertex: np.ndarray
    edge: np.ndarray
    t: np.ndarray
    face: np.ndarray


def _default_tolerance(v):
    """1e-9 x the largest extent, but never below what float64 resolves at these coordinates
    (4 ulps of the largest one): a mesh collapsed to a point or a sliver far from the origin
    gets a usable tolerance instead of one that welding must refuse."""
    extent = float(np.ptp(v, axis=0).max()) if len(v) else 0.0
    largest = float(np.abs(v).max()) if v.size else 0.0
    return max(extent * 1e-9, largest * 2.0 ** -50, 1e-300)


def t_junctions(vertices, faces=None, tolerance=None):
    """Find T-junctions on the cracks of a mesh: boundary vertices within ``tolerance`` (default
    1e-9 x the mesh extent) of the interior of a boundary edge they do not belong to. Only
    boundary edges can carry a crack's T-vertex in a mesh that would otherwise be closed (a
    gap between unconnected parts needs a global search: pass ``tolerance`` and check
    :func:`boundary_loops`). Each boundary edge scans the boundary vertices in its x range
    (sorted once): near O(B) for B boundary edges on typical meshes, O(B^2) at worst."""
    v, f = _mesh_arrays(vertices, faces)
    tolerance = _default_tolerance(v) if tolerance is None else float(tolerance)
    table = _table(v, f)
    single = table.face_count[table.face_edges] == 1
    face, slot = np.nonzero(single)
    u = f[face, slot]
    w = f[face, (slot + 1) % 3]
    candidates = np.unique(np.concatenate([u, w]))
    candidates = candidates[np.argsort(v[candidates, 0], kind="stable")]  # the kernel needs x order
    vertex, edge, t = _kernels().t_junctions(v, u.copy(), w.copy(), candidates, tolerance)
    return TJunctions(vertex, np.stack([u[edge], w[edge]], axis=1).reshape(-1, 2), t, face[edge])


def repair_t_junctions(vertices, faces=None, tolerance=None, max_passes=8):
    """Resolve T-junctions by edge cracking (Ericson 12.3, fig. 12.10b): the face owning the
    cracked edge (a, b) with T-vertices p1..pk (by t) becomes the fan (a, p1, c), (p1, p2, c), ...,
    (pk, b, c). Vertices do not move. Repeats until none is left (or ``max_passes``).
    Returns ``(vertices, faces, cracked)`` with ``cracked`` the number of T-vertices inserted."""
    v, f = _mesh_arrays(vertices, faces)
    cracked = 0
    for _ in range(max_passes):
        found = t_junctions(v, f, tolerance)
        if len(found.vertex) == 0:
            break
        keep = np.ones(len(f), dtype=bool)
        added = []
        order = np.lexsort((found.t, found.face))
        faces_hit, first = np.unique(found.face[order], return_index=True)
        bounds = np.append(first, len(order))
        for index, face in enumerate(faces_hit):  # few faces: one per cracked edge
            rows = order[bounds[index]:bounds[index + 1]]
            a, b = found.edge[rows[0]]
            # only one edge per face per pass: the rows of other edges wait for the next pass
            rows = rows[(found.edge[rows, 0] == a) & (found.edge[rows, 1] == b)]
            corners = list(f[face])
            k = corners.index(a)
            c = corners[(k + 2) % 3]
            chain = [a, *found.vertex[rows].tolist(), b]
            added.extend([chain[j], chain[j + 1], c] for j in range(len(chain) - 1))
            keep[face] = False
            cracked += len(rows)
        f = np.concatenate([f[keep], np.array(added, dtype=np.int64).reshape(-1, 3)])
    return v, f, cracked


# --------------------------------------------------------------------------------------------
# orientation
def signed_volume(vertices, faces=None):
    """Signed volume enclosed by a closed surface (positive when faces wind counter-clockwise
    seen from outside). Computed about the vertex centroid to limit cancellation."""
    v, f = _mesh_arrays(vertices, faces)
    if len(f) == 0:
        return 0.0
    p = v - v.mean(axis=0)
    return float(np.einsum("ij,ij->i", p[f[:, 0]], np.cross(p[f[:, 1]], p[f[:, 2]])).sum() / 6.0)


def orient(vertices, faces=None):
    """Make face windings consistent: faces sharing a manifold edge must run along it in
    opposite directions (breadth-first flips). Then each closed component is flipped as a whole
    if its signed volume is negative (normals point out); an open component keeps the winding
    of the majority of its faces. Returns ``(faces, flipped, conflicts)``: the new faces, the
    number of faces flipped, and the number of face pairs that no flipping can make consistent
    (0 for an orientable mesh)."""
    v, f = _mesh_arrays(vertices, faces)
    if len(f) == 0:
        return f.copy(), 0, 0
    table = _table(v, f)
    a, b, same, _ = face_pairs(v, f, table)
    kernels = _kernels()
    flip, conflicts = kernels.orient_faces(len(f), a, b, same)
    labels = connected_components(v, f)
    count = labels.max() + 1
    flipped_share = np.bincount(labels, weights=flip, minlength=count) / np.bincount(labels, minlength=count)
    invert = flipped_share > 0.5
    flip = flip ^ invert[labels].astype(np.int64)
    new = f.copy()
    new[flip == 1] = new[flip == 1][:, ::-1]
    # closed components: outward normals
    open_edges = table.face_count[table.face_edges] != 2
    component_open = np.bincount(labels, weights=open_edges.any(axis=1), minlength=count) > 0
    p = v - v.mean(axis=0)
    volume = np.einsum("ij,ij->i", p[new[:, 0]], np.cross(p[new[:, 1]], p[new[:, 2]]))
    component_volume = np.bincount(labels, weights=volume, minlength=count)
    turn = (~component_open) & (component_volume < 0)
    again = turn[labels]
    new[again] = new[again][:, ::-1]
    total_flipped = int(((flip == 1) ^ again).sum())
    return new, total_flipped, int(conflicts)


# --------------------------------------------------------------------------------------------
# 12.4 planarity and coplanar faces
def is_planar(polygon, tolerance):
    """Ericson 12.4.2: every vertex within the ABSOLUTE distance ``tolerance`` of the plane
    through the vertex centroid with the Newell normal. A polygon with no area is not planar."""
    p = np.asarray(polygon, dtype=np.float64)
    normal = newell_normal(p)
    length = np.linalg.norm(normal)
    if length == 0.0:
        return False
    normal /= length
    return bool(np.abs((p - p.mean(axis=0)) @ normal).max() <= tolerance)


def coplanar_groups(vertices, faces=None, tolerance=None, max_angle_degrees=1.0):
    """Group faces into coplanar patches (Ericson 12.4): grown over shared manifold edges; a face
    joins when its normal is within ``max_angle_degrees`` of the seed face's AND its vertices lie
    within the absolute ``tolerance`` (default 1e-9 x extent) of the seed's plane (12.4.1: an
    angle alone is a relative test). Returns group labels (m,)."""
    v, f = _mesh_arrays(vertices, faces)
    tolerance = _default_tolerance(v) if tolerance is None else float(tolerance)
    normals = face_normals(v, f)
    a, b, same, _ = face_pairs(v, f)
    consistent = same == 0
    kernels = _kernels()
    start, nbr, _ = kernels._csr(len(f), a[consistent], b[consistent])
    return kernels.coplanar_groups(v, f, normals, start, nbr, tolerance,
                                   float(np.cos(np.radians(max_angle_degrees))))


def merge_coplanar(vertices, faces=None, tolerance=None, max_angle_degrees=1.0):
    """Merge coplanar neighbouring faces into polygons and re-triangulate each polygon (with its
    holes) by ear cutting (Ericson 12.4 then 12.5.1). A patch whose re-triangulation does not
    preserve its area (a self-touching boundary) keeps its original faces.
    Returns ``(vertices, faces, groups)``: unused vertices dropped; ``groups`` = patch count."""
    from .triangulate import triangulate_polygon

    v, f = _mesh_arrays(vertices, faces)
    labels = coplanar_groups(v, f, tolerance, max_angle_degrees)
    count = int(labels.max()) + 1 if len(labels) else 0
    sizes = np.bincount(labels, minlength=count)
    keep = sizes[labels] == 1
    out = [f[keep]]
    area = 0.5 * np.linalg.norm(np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]]), axis=1)
    for group in np.flatnonzero(sizes > 1):  # one iteration per merged patch
        members = f[labels == group]
        loops = boundary_loops(v, members)
        if not loops:
            out.append(members)
            continue
        # loops run against their faces: reversed they run counter-clockwise around the patch
        rings = [loop[::-1] for loop in loops]
        normal = newell_normal(v[members]).sum(axis=0)
        signed = [float(newell_normal(v[r]) @ normal) for r in rings]
        outer = int(np.argmax(signed))
        holes = [rings[i] for i in range(len(rings)) if i != outer]
        try:
            triangles = triangulate_polygon(v[rings[outer]], [v[h] for h in holes], normal=normal)
        except GeometryError:
            out.append(members)
            continue
        ring_vertices = np.concatenate([rings[outer], *holes]) if holes else rings[outer]
        new = ring_vertices[triangles]
        new_area = 0.5 * np.linalg.norm(np.cross(v[new[:, 1]] - v[new[:, 0]], v[new[:, 2]] - v[new[:, 0]]), axis=1)
        if abs(new_area.sum() - area[labels == group].sum()) > 1e-9 * max(area[labels == group].sum(), 1e-300):
            out.append(members)
            continue
        out.append(new)
    merged = np.concatenate(out) if out else f
    v2, f2, _ = _drop_unused(v, merged)
    return v2, f2, count


# --------------------------------------------------------------------------------------------
# 12.6 Euler
class EulerReport(NamedTuple):
    """Counts and Euler-formula checks (Ericson 12.6). ``vertices`` counts referenced vertices.
    ``genus`` is defined for closed, manifold, orientable meshes (else None):
    V - E + F = 2 (C - G) summed over C components. ``consistent`` is the necessary (not
    sufficient) test of 12.6 for a closed manifold triangle mesh: 2E = 3F, F even, and
    V - E + F = 2 (C - G) with a whole genus G >= 0; ``problems`` lists what failed, in words."""

    vertices: int
    edges: int
    faces: int
    components: int
    characteristic: int
    boundary_edges: int
    nonmanifold_edges: int
    closed: bool
    genus: int | None
    consistent: bool
    problems: tuple


def euler(vertices, faces=None, orientable=None):
    """Euler-formula consistency checks (Ericson 12.6) -> :class:`EulerReport`. ``orientable``
    (bool) skips the orientation pass when the caller already knows it."""
    v, f = _mesh_arrays(vertices, faces)
    table = _table(v, f)
    n_vertices = int(np.count_nonzero(np.bincount(f.reshape(-1), minlength=len(v))))
    n_edges = len(table.edges)
    n_faces = len(f)
    components = int(connected_components(v, f).max() + 1) if n_faces else 0
    chi = n_vertices - n_edges + n_faces
    boundary = int((table.face_count == 1).sum())
    nonmanifold = int((table.face_count > 2).sum())
    closed = boundary == 0 and nonmanifold == 0 and n_faces > 0
    problems = []
    if boundary:
        problems.append(f"{boundary} boundary edge{'' if boundary == 1 else 's'} (open mesh: holes or cracks)")
    if nonmanifold:
        problems.append(f"{nonmanifold} edge{'' if nonmanifold == 1 else 's'} shared by more than two faces")
    genus = None
    if closed:
        if 2 * n_edges != 3 * n_faces:
            problems.append(f"2E = {2 * n_edges} differs from 3F = {3 * n_faces}")
        if n_faces % 2:
            problems.append(f"a closed triangle mesh has an even number of faces, not {n_faces}")
        if (2 * components - chi) % 2 or chi > 2 * components:
            problems.append(f"V - E + F = {chi} is not 2 (C - G) for C = {components}")
        else:
            if orientable is None:
                _, _, conflicts = orient(v, f)
                orientable = conflicts == 0
            if orientable:
                genus = (2 * components - chi) // 2
            else:
                problems.append("not orientable")
    return EulerReport(n_vertices, n_edges, n_faces, components, chi, boundary, nonmanifold,
                       closed, genus, closed and not problems, tuple(problems))


class PolygonEulerReport(NamedTuple):
    """Euler checks of a polygon mesh (Ericson 12.6 and Table 12.1). ``edges`` counts distinct
    edges; ``edges_from_sides`` is half the number of polygon sides, (3T + 4Q + ...) / 2, which
    equals ``edges`` in a closed manifold mesh and need not be whole otherwise. ``genus`` (closed
    meshes whose counts are consistent; orientability is assumed, not checked) from
    V - E + F = 2 (C - G)."""

    vertices: int
    edges: int
    faces: int
    triangles: int
    quads: int
    components: int
    characteristic: int
    boundary_edges: int
    nonmanifold_edges: int
    closed: bool
    edges_from_sides: float
    genus: int | None
    consistent: bool
    problems: tuple


def euler_polygons(polygons):
    """Euler-formula checks (Ericson 12.6) for faces of any size: ``polygons`` is a sequence of
    vertex-index sequences (at least 3 each). Returns :class:`PolygonEulerReport`."""
    try:
        rings = [np.asarray(p, dtype=np.int64).reshape(-1) for p in polygons]
    except (TypeError, ValueError):
        raise GeometryError("polygons must be sequences of integer vertex indices") from None
    if not rings:
        raise GeometryError("polygons is empty")
    sizes = np.array([len(r) for r in rings])
    if sizes.min() < 3:
        raise GeometryError(f"every polygon needs at least 3 vertices (polygon {int(np.argmin(sizes))} has "
                            f"{int(sizes.min())})")
    flat = np.concatenate(rings)
    if flat.min() < 0:
        raise GeometryError("polygons hold negative vertex indices")
    following = np.concatenate([np.roll(r, -1) for r in rings])
    lo, hi = np.minimum(flat, following), np.maximum(flat, following)
    if (lo == hi).any():
        raise GeometryError("a polygon repeats a vertex on consecutive corners")
    edges, uses = np.unique(np.stack([lo, hi], axis=1), axis=0, return_counts=True)
    used = np.unique(flat)
    n_vertices, n_edges, n_faces = len(used), len(edges), len(rings)
    chi = n_vertices - n_edges + n_faces
    # components of the vertex graph (for a manifold mesh the same as face components)
    relabel = np.searchsorted(used, edges)
    labels = _kernels().component_labels(n_vertices, np.ascontiguousarray(relabel[:, 0]),
                                         np.ascontiguousarray(relabel[:, 1]))
    components = int(labels.max() + 1)
    boundary = int((uses == 1).sum())
    nonmanifold = int((uses > 2).sum())
    closed = boundary == 0 and nonmanifold == 0
    from_sides = float(sizes.sum()) / 2.0
    problems = []
    if boundary:
        problems.append(f"{boundary} boundary edge{'' if boundary == 1 else 's'} (open mesh: holes or cracks)")
    if nonmanifold:
        problems.append(f"{nonmanifold} edge{'' if nonmanifold == 1 else 's'} shared by more than two faces")
    if from_sides != int(from_sides):
        problems.append(f"E = (sum of polygon sides) / 2 = {from_sides:g} is not a whole number")
    elif from_sides != n_edges:
        problems.append(f"(sum of polygon sides) / 2 = {from_sides:g} differs from the {n_edges} distinct edges")
    genus = None
    if (2 * components - chi) % 2 or chi > 2 * components:
        problems.append(f"V + F - E = {chi} is not 2 (C - G) for C = {components}")
    elif closed and not problems:
        genus = (2 * components - chi) // 2
    return PolygonEulerReport(n_vertices, n_edges, n_faces, int((sizes == 3).sum()), int((sizes == 4).sum()),
                              components, chi, boundary, nonmanifold, closed, from_sides, genus,
                              closed and not problems, tuple(problems))

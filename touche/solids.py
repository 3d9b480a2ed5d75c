"""Solid meshes (``TriangleMesh(..., solid=True)`` / ``mesh.as_solid()``) in mesh-mesh
``intersects``: containment without surface contact (issue 19).

Two closed surfaces that do not meet are nested or apart, per connected component: a component
of B lies wholly inside solid A or wholly outside it. So, after the surface test said "no
contact", one vertex of every connected component of B is tested against A (when A is solid) and
one of every component of A against B (when B is solid), with the exact winding-number inside
test (touche.meshquery.contains: points on the surface count, like touching surfaces). A mesh
that is not solid stays a surface: a solid inside a surface mesh does not intersect it, a surface
mesh inside a solid does.
"""
from __future__ import annotations

import numpy as np

from ._cache import WeakIdentityCache, shape_key
from .pose import as_matrices
from .results import DistanceResult, Status

# per mesh: (one vertex per connected component (k, 3), box min (3,), box max (3,)), weakly keyed
# by the mesh's coordinate array like the mesh trees
_REPRESENTATIVES = WeakIdentityCache()
_IDENTITY_BATCH = np.eye(4).reshape(1, 4, 4)


def component_representatives(mesh):
    """``(points (k, 3), box_min (3,), box_max (3,), center (3,), radius, center as floats)`` in
    the mesh's frame: one vertex of each connected component (vertices with identical
    coordinates welded), the mesh's box, and a sphere around the box."""
    key = shape_key(mesh)
    found = _REPRESENTATIVES.get(key)
    if found is None:
        found = _REPRESENTATIVES.get_or_build(lambda: _representatives(mesh._packed[2], mesh._packed[3]), key)
    return found


def _representatives(vertices, faces):
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    welded, inverse = np.unique(vertices, axis=0, return_inverse=True)
    faces = inverse.reshape(-1)[faces]
    rows = faces[:, [0, 1, 2]].reshape(-1)
    cols = faces[:, [1, 2, 0]].reshape(-1)
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(welded), len(welded)))
    used = np.zeros(len(welded), dtype=bool)
    used[faces.reshape(-1)] = True
    _, labels = connected_components(graph, directed=False)
    labels = np.where(used, labels, -1)
    _, first = np.unique(labels, return_index=True)
    first = first[labels[first] >= 0]
    low, high = vertices.min(axis=0), vertices.max(axis=0)
    center = 0.5 * (low + high)
    radius = float(np.sqrt(((np.maximum(high - center, center - low)) ** 2).sum()))
    return (np.ascontiguousarray(welded[first]), low, high, center, radius, tuple(float(x) for x in center))


def _inside_any(solid, ts, other, to, count, solid_data, other_data):
    """(count,) bool: some component of ``other`` (placed by ``to``) lies in ``solid`` (placed by
    ``ts``). The points are moved into the solid's frame; those outside its box are outside
    (no winding number needed: the common case of meshes apart)."""
    from .meshquery import _inside, mesh_tree

    points = other_data[0]
    box_min, box_max = solid_data[1], solid_data[2]
    # x_solid = R_s^T (R_o p + t_o - t_s), for every pose pair (n, k, 3)
    world = np.einsum("nij,kj->nki", to[:, :3, :3], points) + to[:, None, :3, 3]
    local = np.einsum("nji,nkj->nki", ts[:, :3, :3], world - ts[:, None, :3, 3])
    local = np.ascontiguousarray(np.broadcast_to(local, (count,) + local.shape[1:]).reshape(-1, 3))
    in_box = ((local >= box_min) & (local <= box_max)).all(axis=1)
    inside = np.zeros(len(local), dtype=bool)
    if in_box.any():
        candidates = np.ascontiguousarray(local[in_box])
        inside[in_box] = _inside(mesh_tree(solid), _IDENTITY_BATCH, candidates, False)
    return inside.reshape(count, -1).any(axis=1)


def _spheres_apart(ta, tb, data_a, data_b):
    """One pose pair: the bounding spheres of the placed meshes are apart (plain floats: a
    handful of numpy calls would cost ten times the surface test of two far meshes)."""
    (a00, a01, a02, a03), (a10, a11, a12, a13), (a20, a21, a22, a23), _ = ta.tolist()
    (b00, b01, b02, b03), (b10, b11, b12, b13), (b20, b21, b22, b23), _ = tb.tolist()
    x, y, z = data_a[5]
    u, v, w = data_b[5]
    gx = a00 * x + a01 * y + a02 * z + a03 - (b00 * u + b01 * v + b02 * w + b03)
    gy = a10 * x + a11 * y + a12 * z + a13 - (b10 * u + b11 * v + b12 * w + b13)
    gz = a20 * x + a21 * y + a22 * z + a23 - (b20 * u + b21 * v + b22 * w + b23)
    reach = data_a[4] + data_b[4]
    return gx * gx + gy * gy + gz * gz > reach * reach


_FEW = 8  # components: up to this many, one pose pair is answered point by point in plain floats


def _inside_one(solid, ts, to, solid_data, other_data):
    """One pose pair: some component of the other mesh lies in the solid (the points moved into
    the solid's frame with plain floats; the winding number only for those inside its box)."""
    from .meshquery import _inside, mesh_tree

    (s00, s01, s02, s03), (s10, s11, s12, s13), (s20, s21, s22, s23), _ = ts.tolist()
    (o00, o01, o02, o03), (o10, o11, o12, o13), (o20, o21, o22, o23), _ = to.tolist()
    lx, ly, lz = solid_data[1].tolist()
    hx, hy, hz = solid_data[2].tolist()
    candidates = []
    for x, y, z in other_data[0].tolist():
        wx = o00 * x + o01 * y + o02 * z + o03 - s03
        wy = o10 * x + o11 * y + o12 * z + o13 - s13
        wz = o20 * x + o21 * y + o22 * z + o23 - s23
        px = s00 * wx + s10 * wy + s20 * wz
        py = s01 * wx + s11 * wy + s21 * wz
        pz = s02 * wx + s12 * wy + s22 * wz
        if lx <= px <= hx and ly <= py <= hy and lz <= pz <= hz:
            candidates.append((px, py, pz))
    if not candidates:
        return False
    return bool(_inside(mesh_tree(solid), _IDENTITY_BATCH, np.array(candidates), False).any())


def contained_pairs(a, pose_a, b, pose_b, surface):
    """``surface`` (bool or (n,) bool: the surfaces meet) OR one solid holds the other mesh."""
    single = surface is True or surface is False
    if single:
        if surface:
            return True
        ta = as_matrices(pose_a, "pose_a")
        tb = as_matrices(pose_b, "pose_b")
        data_a = component_representatives(a)
        data_b = component_representatives(b)
        if _spheres_apart(ta, tb, data_a, data_b):
            return False
        if len(data_a[0]) <= _FEW and len(data_b[0]) <= _FEW:
            if a.solid and _inside_one(a, ta, tb, data_a, data_b):
                return True
            return bool(b.solid and _inside_one(b, tb, ta, data_b, data_a))
    touching = np.atleast_1d(np.asarray(surface, dtype=bool)).copy()
    if touching.all():
        return surface
    count = len(touching)
    ta = as_matrices(pose_a, "pose_a").reshape(-1, 4, 4)
    tb = as_matrices(pose_b, "pose_b").reshape(-1, 4, 4)
    data_a = component_representatives(a)
    data_b = component_representatives(b)
    # meshes whose bounding spheres are apart hold nothing of each other: the common case, and
    # no per-point work for it
    gap = (ta[:, :3, :3] @ data_a[3] + ta[:, :3, 3]) - (tb[:, :3, :3] @ data_b[3] + tb[:, :3, 3])
    near = np.einsum("ni,ni->n", gap, gap) <= (data_a[4] + data_b[4]) ** 2
    if not near.any():
        return surface
    if a.solid:
        touching |= near & _inside_any(a, ta, b, tb, count, data_a, data_b)
    if b.solid and not touching.all():
        touching |= near & _inside_any(b, tb, a, ta, count, data_b, data_a)
    return bool(touching[0]) if single else touching


# ---------------------------------------------------------------------------------------------
# penetration depth of solid meshes (issue 19; docs/solids.md)
#
# The vertex depth of a pose pair: the largest distance to the solid's surface of a vertex of the
# other mesh lying in the solid (both directions when both meshes are solid). Every step is a
# batched compiled query of touche.meshquery on all the candidate vertices of all the pose pairs
# at once: the exact inside test, then exact closest points, ordered by a cheap upper bound
# (the distance to the solid's nearest vertex, scipy's k-d tree) so that only the vertices that
# can still be the deepest are measured.

_MESH_DATA = WeakIdentityCache()
_UNSET = object()
_CHUNK_POINTS = 1 << 21  # (pose pair, vertex) rows transformed at once (48 MB of float64 triples)


class _MeshData:
    """Per mesh: the vertices used by its faces (``used`` indices, ``points`` (k, 3)), its
    distinct undirected edges (e, 2) of vertex indices, the box, and a k-d tree of the used
    points (built on first use)."""

    __slots__ = ("used", "points", "_faces", "_edges", "_edge_rows", "low", "high", "convex", "_kdtree", "__weakref__")

    def __init__(self, vertices, faces):
        # the used vertex indices, ascending (a count per vertex: np.unique sorts or hashes, ~100x slower)
        self.used = np.flatnonzero(np.bincount(faces.reshape(-1), minlength=len(vertices)))
        self.points = np.ascontiguousarray(vertices[self.used])
        self._faces = faces
        self._edges = None  # built on first use (only the directional separation needs them)
        self._edge_rows = None
        self.low = self.points.min(axis=0)
        self.high = self.points.max(axis=0)
        self._kdtree = None
        self.convex = _UNSET  # solids._convex_of

    @property
    def edges(self):
        """The distinct undirected edges (e, 2) of vertex indices, ascending."""
        if self._edges is None:
            faces = self._faces
            pairs = np.sort(faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
            pairs = pairs[pairs[:, 0] != pairs[:, 1]]
            # one int64 key per edge, a * n + b: a 1-d sort (np.unique(axis=0) is ~10x slower), same order
            n = np.int64(int(faces.max()) + 1 if faces.size else 1)
            keys = np.sort(pairs[:, 0] * n + pairs[:, 1])
            fresh = np.empty(len(keys), dtype=bool)
            fresh[:1] = True
            np.not_equal(keys[1:], keys[:-1], out=fresh[1:])
            keys = keys[fresh]
            edges = np.stack([keys // n, keys % n], axis=1)
            self._edge_rows = np.searchsorted(self.used, edges)  # the edges as rows of ``points``
            self._edges = edges
        return self._edges

    @property
    def edge_rows(self):
        self.edges
        return self._edge_rows

    def kdtree(self):
        if self._kdtree is None:
            from scipy.spatial import cKDTree

            self._kdtree = cKDTree(self.points)
        return self._kdtree


def mesh_data(mesh):
    return _MESH_DATA.for_shape(mesh, lambda m: _MeshData(m._packed[2], m._packed[3]))


def _relative(ts, to):
    """(n, 4, 4): the pose of ``other`` in the frame of ``solid`` for each pose pair."""
    rs = ts[:, :3, :3]
    out = np.zeros((max(len(ts), len(to)), 4, 4))
    out[:, :3, :3] = np.einsum("nji,njk->nik", rs, to[:, :3, :3])
    out[:, :3, 3] = np.einsum("nji,nj->ni", rs, to[:, :3, 3] - ts[:, :3, 3])
    out[:, 3, 3] = 1.0
    return out


def _vertex_depths(solid, ts, other, to, rows):
    """For the pose pairs ``rows`` (indices into the broadcast batch): the deepest vertex of
    ``other`` inside ``solid``. Returns ``(depth (k,), vertex (k,) int64 index into other's
    vertices or -1, point (k, 3) the vertex and closest (k, 3) its closest point on the
    solid's surface, both in the solid's frame, face (k,) the solid's face or -1)``; depth 0 and
    vertex -1 where no vertex lies in the solid."""
    from .meshquery import _inside, closest_arrays, mesh_tree

    count = len(rows)
    depth = np.zeros(count)
    vertex = np.full(count, -1, dtype=np.int64)
    point = np.full((count, 3), np.nan)
    closest = np.full((count, 3), np.nan)
    face = np.full(count, -1, dtype=np.int64)
    if count == 0:
        return depth, vertex, point, closest, face
    solid_data, other_data = mesh_data(solid), mesh_data(other)
    relative = _relative(ts[rows] if len(ts) > 1 else ts, to[rows] if len(to) > 1 else to)
    if len(relative) == 1 and count > 1:
        relative = np.broadcast_to(relative, (count, 4, 4))
    # candidates: (row, vertex) with the vertex in the solid's box, then in the solid
    slot_list, vid_list, local_list = [], [], []
    per = max(1, _CHUNK_POINTS // max(len(other_data.points), 1))
    for start in range(0, count, per):
        block = relative[start:start + per]
        local = np.einsum("nij,kj->nki", block[:, :3, :3], other_data.points) + block[:, None, :3, 3]
        in_box = ((local >= solid_data.low) & (local <= solid_data.high)).all(axis=2)
        slot, vid = np.nonzero(in_box)
        slot_list.append(slot + start)
        vid_list.append(vid)
        local_list.append(local[slot, vid])
    slot = np.concatenate(slot_list)
    vid = np.concatenate(vid_list)
    local = np.ascontiguousarray(np.concatenate(local_list))
    if len(slot) == 0:
        return depth, vertex, point, closest, face
    tree = mesh_tree(solid)
    inside = _inside(tree, _IDENTITY_BATCH, local, False)
    slot, vid, local = slot[inside], vid[inside], np.ascontiguousarray(local[inside])
    if len(slot) == 0:
        return depth, vertex, point, closest, face
    # an upper bound of each candidate's depth: its distance to the solid's nearest vertex (a
    # point of the surface); exact distances in rounds, largest bounds first, until no
    # remaining bound beats its pose pair's best
    bound, _ = solid_data.kdtree().query(local, eps=1.0)  # approximate: still a vertex, still a bound
    order = np.lexsort((-bound, slot))
    slot, vid, local, bound = slot[order], vid[order], local[order], bound[order]
    take = 8
    while len(slot):
        group_start = np.flatnonzero(np.r_[True, slot[1:] != slot[:-1]])
        sizes = np.diff(np.r_[group_start, len(slot)])
        rank = np.arange(len(slot)) - np.repeat(group_start, sizes)
        pick = rank < take
        queries = np.ascontiguousarray(local[pick])
        out_point = np.empty((len(queries), 3))
        out_distance = np.empty(len(queries))
        out_status = np.empty(len(queries), dtype=np.int8)
        out_face = closest_arrays(solid, _IDENTITY_BATCH, queries, out_point, out_distance, out_status)
        picked_slot = slot[pick]
        # the deepest of the picked per pose pair (ties: the first, i.e. the largest bound)
        best = np.lexsort((-out_distance, picked_slot))
        firsts = best[np.r_[True, picked_slot[best][1:] != picked_slot[best][:-1]]]
        better = out_distance[firsts] > depth[picked_slot[firsts]]
        firsts = firsts[better]
        target = picked_slot[firsts]
        depth[target] = out_distance[firsts]
        vertex[target] = other_data.used[vid[pick][firsts]]
        point[target] = queries[firsts]
        closest[target] = out_point[firsts]
        face[target] = out_face[firsts]
        keep = ~pick & (bound > depth[slot])
        slot, vid, local, bound = slot[keep], vid[keep], local[keep], bound[keep]
        take *= 4
    # a vertex on the surface (depth 0) still counts as in the solid
    return depth, vertex, point, closest, face



def _convex_of(mesh):
    """The solid mesh's ``ConvexPolyhedron`` when it is convex (the volume it encloses equals
    its hull's within 1e-9 relative), else None; computed once per mesh."""
    data = mesh_data(mesh)
    if data.convex is not _UNSET:
        return data.convex
    from scipy.spatial import ConvexHull, QhullError

    from .shapes import ConvexPolyhedron

    found = None
    try:
        hull = ConvexHull(data.points)
    except QhullError:
        hull = None
    if hull is not None:
        vertices, faces = mesh._packed[2], mesh._packed[3]
        a, b, c = (vertices[faces[:, i]] for i in range(3))
        center = data.points.mean(axis=0)
        volume = abs(np.einsum("ij,ij->", a - center, np.cross(b - center, c - center))) / 6.0
        if abs(hull.volume - volume) <= 1e-9 * hull.volume:
            found = ConvexPolyhedron(data.points[hull.vertices])
    data.convex = found
    return found


# which side's vertex gave the depth (SolidPenetration.side)
SIDE_NONE, SIDE_A_IN_B, SIDE_B_IN_A, SIDE_CONVEX = 0, 1, 2, 3


def _apply(poses, rows, points):
    """World coordinates of (k, 3) ``points`` given in the frames ``poses[rows]`` (or poses[0])."""
    placed = poses[rows] if len(poses) > 1 else np.broadcast_to(poses, (len(rows), 4, 4))
    return np.einsum("nij,nj->ni", placed[:, :3, :3], points) + placed[:, :3, 3]


def _unit_rows(vectors):
    length = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
    out = np.tile(np.array([0.0, 0.0, 1.0]), (len(vectors), 1))
    good = length > 0.0
    out[good] = vectors[good] / length[good, None]
    return out


def _depth_rows(a, ta, b, tb, rows):
    """The vertex depth of the pose pairs ``rows`` (module section above), both directions:
    ``(depth, point_a, point_b, normal, side, vertex, face)`` in world coordinates; normal from A
    to B (moving B along it takes the deepest vertex out), point_b - point_a = -depth * normal."""
    count = len(rows)
    depth = np.zeros(count)
    point_a = np.full((count, 3), np.nan)
    point_b = np.full((count, 3), np.nan)
    normal = np.full((count, 3), np.nan)
    side = np.zeros(count, dtype=np.int8)
    vertex = np.full(count, -1, dtype=np.int64)
    face = np.full(count, -1, dtype=np.int64)
    for solid, ts, other, to, code in ((b, tb, a, ta, SIDE_A_IN_B), (a, ta, b, tb, SIDE_B_IN_A)):
        if not solid.solid:
            continue
        d, v, local_vertex, local_closest, f = _vertex_depths(solid, ts, other, to, rows)
        better = (v >= 0) & (d > depth)
        if not better.any():
            continue
        where = np.flatnonzero(better)
        placed_vertex = _apply(ts, rows[where], local_vertex[where])
        placed_closest = _apply(ts, rows[where], local_closest[where])
        depth[where] = d[where]
        side[where] = code
        vertex[where] = v[where]
        face[where] = f[where]
        if code == SIDE_A_IN_B:  # B moves along (vertex - closest) to leave A's vertex behind
            point_a[where], point_b[where] = placed_vertex, placed_closest
            normal[where] = _unit_rows(placed_vertex - placed_closest)
        else:  # B's vertex leaves A along (closest - vertex)
            point_a[where], point_b[where] = placed_closest, placed_vertex
            normal[where] = _unit_rows(placed_closest - placed_vertex)
    return depth, point_a, point_b, normal, side, vertex, face


def _batch_poses(pose_a, pose_b):
    ta = as_matrices(pose_a, "pose_a")
    tb = as_matrices(pose_b, "pose_b")
    single = ta.ndim == 2 and tb.ndim == 2
    ta, tb = ta.reshape(-1, 4, 4), tb.reshape(-1, 4, 4)
    if len(ta) != len(tb) and len(ta) != 1 and len(tb) != 1:
        from .errors import GeometryError

        raise GeometryError(f"pose batches differ in length: pose_a has {len(ta)}, pose_b has {len(tb)}")
    return ta, tb, max(len(ta), len(tb)), single


def _penetration_arrays(a, pose_a, b, pose_b, surface, convex_distance):
    """``surface``: the surface DistanceResult (touche.query) of the pair; ``convex_distance``:
    touche.distance (for two convex solids, answered by the pair engine). Returns the arrays of
    the solid answer: (signed, point_a, point_b, normal, status, side, vertex, face), batch
    form, with the rows that do not interpenetrate copied from ``surface``."""
    from . import tolerance

    ta, tb, count, _ = _batch_poses(pose_a, pose_b)
    signed = np.array(surface.signed_distance, dtype=np.float64).reshape(count)
    point_a = np.array(surface.point_a, dtype=np.float64).reshape(count, 3)
    point_b = np.array(surface.point_b, dtype=np.float64).reshape(count, 3)
    normal = np.array(surface.normal, dtype=np.float64).reshape(count, 3)
    status = np.array(surface.status, dtype=np.int8).reshape(count)
    side = np.zeros(count, dtype=np.int8)
    vertex = np.full(count, -1, dtype=np.int64)
    face = np.full(count, -1, dtype=np.int64)
    meeting = status != Status.SEPARATED
    # the surfaces meet, or a solid holds a component of the other mesh (no surface contact)
    if count == 1:
        examine = np.array([contained_pairs(a, ta[0], b, tb[0], bool(meeting[0]))])
    else:
        examine = np.asarray(contained_pairs(a, ta, b, tb, meeting), dtype=bool).reshape(count)
    rows = np.flatnonzero(examine)
    if len(rows) == 0:
        return signed, point_a, point_b, normal, status, side, vertex, face
    depth, pa, pb, nrm, sd, vx, fc = _depth_rows(a, ta, b, tb, rows)
    offset = np.maximum(np.abs(ta[:, :3, 3]).max(axis=1), np.abs(tb[:, :3, 3]).max(axis=1))
    offset = offset[rows] if len(offset) > 1 else np.broadcast_to(offset, (len(rows),))
    touching = tolerance.touching_tolerance(max(a.scale, b.scale), offset)
    convex_a = _convex_of(a) if a.solid and b.solid else None
    convex_b = _convex_of(b) if convex_a is not None else None
    if convex_b is not None:  # two convex solids: the exact penetration depth of the pair engine
        exact = convex_distance(convex_a, ta[rows] if len(ta) > 1 else ta[0], convex_b, tb[rows] if len(tb) > 1 else tb[0])
        e_signed = np.array(exact.signed_distance, dtype=np.float64).reshape(-1)
        e_status = np.array(exact.status).reshape(-1)
        deeper = (e_status == Status.PENETRATING) & (-e_signed >= depth)
        if deeper.any():
            pick = np.flatnonzero(deeper)
            depth[pick] = -e_signed[pick]
            pa[pick] = np.array(exact.point_a, dtype=np.float64).reshape(-1, 3)[pick]
            pb[pick] = np.array(exact.point_b, dtype=np.float64).reshape(-1, 3)[pick]
            nrm[pick] = np.array(exact.normal, dtype=np.float64).reshape(-1, 3)[pick]
            sd[pick] = SIDE_CONVEX
            vx[pick] = -1
            fc[pick] = -1
    deep = depth > touching
    target = rows[deep]
    signed[target] = -depth[deep]
    point_a[target] = pa[deep]
    point_b[target] = pb[deep]
    normal[target] = nrm[deep]
    status[target] = Status.PENETRATING
    side[target] = sd[deep]
    vertex[target] = vx[deep]
    face[target] = fc[deep]
    # a solid holding the other mesh at a positive surface distance: overlapping, never SEPARATED
    return signed, point_a, point_b, normal, status, side, vertex, face


def solid_distance(a, pose_a, b, pose_b, surface_distance, convex_distance):
    """touche.distance of two meshes, at least one solid: the surface answer
    (``surface_distance``, query._surface_mesh_mesh_distance) where they do not interpenetrate,
    the penetration depth (touche.solid_queries.penetration_depth) where they do;
    ``convex_distance`` is touche.distance (two convex solids)."""
    surface = surface_distance(a, pose_a, b, pose_b)
    if not isinstance(surface.signed_distance, np.ndarray) and surface.status == Status.SEPARATED \
            and not contained_pairs(a, pose_a, b, pose_b, False):
        return surface  # apart, nothing held: the common case, without the arrays below
    signed, point_a, point_b, normal, status, *_ = _penetration_arrays(a, pose_a, b, pose_b, surface, convex_distance)
    if isinstance(surface.signed_distance, np.ndarray):
        return DistanceResult(signed, point_a, point_b, normal, status)
    if status[0] == surface.status and signed[0] == surface.signed_distance:
        return surface
    return DistanceResult(float(signed[0]), point_a[0], point_b[0], normal[0], Status(int(status[0])))


# ---------------------------------------------------------------------------------------------
# a convex shape against a solid mesh (issue 19)
#
# The mesh-shape engines compare the shape with the mesh's triangles. A finite convex shape
# that meets no triangle is connected, so it lies wholly inside the solid or wholly outside:
# one point of it decides (its first packed point: a sphere's or ellipsoid's center, an end of
# a segment's, capsule's, cylinder's or cone's axis, a vertex of a polytope; rays, lines and
# planes are unbounded and never inside).


def _shape_points(shape, ts, rows):
    """World (k, 3): the first packed point of ``shape`` placed by ts[rows] (or ts)."""
    local = shape._packed[2][0]
    placed = ts[rows] if ts.ndim == 3 and len(ts) > 1 else np.broadcast_to(ts.reshape(-1, 4, 4)[0], (len(rows), 4, 4))
    return np.einsum("nij,j->ni", placed[:, :3, :3], local) + placed[:, :3, 3]


def _points_in_solid(mesh, tm, rows, points):
    """(k,) bool: world points (one per row) inside the solid mesh placed by tm[rows] (or tm)."""
    from .meshquery import _inside, mesh_tree

    placed = tm[rows] if tm.ndim == 3 and len(tm) > 1 else np.broadcast_to(tm.reshape(-1, 4, 4)[0], (len(rows), 4, 4))
    local = np.einsum("nji,nj->ni", placed[:, :3, :3], points - placed[:, :3, 3])
    data = mesh_data(mesh)
    inside = ((local >= data.low) & (local <= data.high)).all(axis=1)
    if inside.any():
        where = np.flatnonzero(inside)
        inside[where] = _inside(mesh_tree(mesh), _IDENTITY_BATCH, np.ascontiguousarray(local[where]), False)
    return inside


def _finite_convex(shape):
    from ._kernels import kinds

    return shape.kind not in (kinds.RAY, kinds.LINE, kinds.PLANE, kinds.HALFSPACE, kinds.MESH)


def shape_inside(shape, ts, mesh, tm, surface):
    """touche.intersects of a shape and a solid mesh: ``surface`` (bool, or (n,) bool array:
    the shape meets the mesh's triangles) or the shape lies inside the solid."""
    if not _finite_convex(shape):
        return surface
    if surface is True or surface is False or isinstance(surface, (bool, np.bool_)):
        if surface:
            return True
        return bool(_points_in_solid(mesh, tm, np.zeros(1, dtype=np.int64),
                                     _shape_points(shape, ts, np.zeros(1, dtype=np.int64)))[0])
    rows = np.flatnonzero(~surface)
    if len(rows) == 0:
        return surface
    out = surface.copy()
    out[rows] = _points_in_solid(mesh, tm, rows, _shape_points(shape, ts, rows))
    return out


def shape_in_solid_distance(shape, ts, mesh, tm, shape_is_a, result, convex_distance):
    """touche.distance of a finite convex shape and a solid mesh (``convex_distance`` is
    touche.distance, for the shape's support point): ``result`` (the engine's
    answer against the triangles) where the shape meets the triangles or lies outside; where it
    lies wholly inside, the depth of its deepest point: the shape's support point away from the
    nearest wall (opposite to the direction from its closest point to the mesh's), measured to
    the mesh's surface (a certified lower bound on the translation that takes the shape out)."""
    from .meshquery import closest_point_with_face
    from .shapes import HalfSpace

    if not _finite_convex(shape):
        return result
    single = not isinstance(result.signed_distance, np.ndarray)
    status = np.array(result.status, dtype=np.int8).reshape(-1)
    rows = np.flatnonzero(status == Status.SEPARATED)
    if len(rows) == 0:
        return result
    ts3, tm3 = ts.reshape(-1, 4, 4), tm.reshape(-1, 4, 4)
    inside = _points_in_solid(mesh, tm3, rows, _shape_points(shape, ts3, rows))
    if not inside.any():
        return result
    rows = rows[inside]
    point_a = np.array(result.point_a, dtype=np.float64).reshape(-1, 3)
    point_b = np.array(result.point_b, dtype=np.float64).reshape(-1, 3)
    on_shape, on_mesh = (point_a, point_b) if shape_is_a else (point_b, point_a)
    toward_wall = _unit_rows(on_mesh[rows] - on_shape[rows])
    # the support point of the shape along -toward_wall: its closest point to a half-space
    # {x : n.x <= n.c - R} beyond it (z <= 0 placed by a pose whose z axis is n)
    reach = 4.0 * shape.scale
    planes = np.zeros((len(rows), 4, 4))
    planes[:, 3, 3] = 1.0
    helper = np.where(np.abs(toward_wall[:, :1]) < 0.6, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
    u = _unit_rows(np.cross(toward_wall, helper))
    v = np.cross(toward_wall, u)
    planes[:, :3, 0], planes[:, :3, 1], planes[:, :3, 2] = u, v, toward_wall
    planes[:, :3, 3] = on_shape[rows] - reach * toward_wall
    shape_poses = ts3[rows] if len(ts3) > 1 else np.ascontiguousarray(np.broadcast_to(ts3, (len(rows), 4, 4)))
    support = np.array(convex_distance(shape, shape_poses, HalfSpace([0.0, 0.0, 1.0], 0.0), planes).point_a).reshape(-1, 3)
    mesh_poses = tm3[rows] if len(tm3) > 1 else tm3
    wall, distance_to_wall, _ = closest_point_with_face(mesh, mesh_poses, support)
    depth = np.atleast_1d(distance_to_wall)
    wall = np.asarray(wall).reshape(-1, 3)
    signed = np.array(result.signed_distance, dtype=np.float64).reshape(-1)
    normal = np.array(result.normal, dtype=np.float64).reshape(-1, 3)
    signed[rows] = -depth
    status[rows] = Status.PENETRATING
    if shape_is_a:  # the mesh (B) moves along (support - wall) to leave the shape's point out
        point_a[rows], point_b[rows] = support, wall
        normal[rows] = _unit_rows(support - wall)
    else:
        point_a[rows], point_b[rows] = wall, support
        normal[rows] = _unit_rows(wall - support)
    if single:
        return DistanceResult(float(signed[0]), point_a[0], point_b[0], normal[0], Status(int(status[0])))
    return DistanceResult(signed, point_a, point_b, normal, status)

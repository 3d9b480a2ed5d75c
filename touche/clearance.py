"""Clearance between parts (triangle meshes, typically STL): do they intersect, how far apart are
they, where, and between which triangles — for one pair, a batch of poses, or every pair of a
list of parts.

    import touche as tc
    a, b = tc.mesh.load("bracket.stl"), tc.mesh.load("housing.stl")
    r = tc.clearance(a, pose_a, b, pose_b)
    r.intersecting, r.distance, r.vector, r.point_a, r.point_b, r.triangle_a, r.triangle_b
    tc.clearance(a, None, b, poses)                  # poses (n, 4, 4): arrays, all cores
    table = tc.clearance_all([a, b, c], poses)       # every pair of parts (or pairs=[(0, 2), ...])
    r = tc.clearance(a, None, b, None, curve=True)   # + every crossing triangle pair and segment

Method: the triangle-triangle strategy for STL meshes (seed S3) with its errata fixed, under the
mesh's bounding-volume tree (``touche.bvh``: the one tree every mesh query uses, built once per
mesh); see ``touche/_kernels/trees/clearance.py`` for the steps and the deviations. Parts are surfaces: ``intersecting`` means the two surfaces share a point, decided
by exact predicates on the posed coordinates (touching counts, coplanar overlaps included; a
triangle pair whose computed distance is exactly 0, i.e. touching below float64 resolution, counts
too). A part lying wholly inside a closed part does not touch its surface and gets a positive
distance (use ``touche.contains`` for nesting). Note: ``touche.clearance`` is this function; import
the module's other names with ``from touche.clearance import ...``.

Conventions: world frame; ``vector = point_a - point_b`` points from part B to part A (S3's
"from triangle 2 to triangle 1"), so its length is the distance; triangle ids index the faces of
the meshes as given. Each part is prepared once (S3 data and tree, cached per mesh object; or
keep a :class:`ClearancePart`).
"""
from __future__ import annotations

import os

import numpy as np

from . import _parallel
from . import bvh as _bvh
from ._cache import WeakIdentityCache, shape_key
from ._kernels import kernel_loader
from ._record import Record
from .errors import GeometryError
from .pose import as_matrices, nonnegative_number
from .query import _pair_matrices

# A part's tree is a touche.bvh tree: by default the mesh's own (``mesh.bvh``, shared with every
# other mesh query); another split rule or leaf size builds a tree of its own. The split rules are
# touche.bvh's, plus the two names this module used before it moved onto touche.bvh's trees:
# "longest" (object median along the longest extent: bvh "median") and "major" (along the box's
# major axis, Gottschalk: bvh "mean").
_SPLIT_ALIASES = {"longest": "median", "major": "mean"}
SPLITS = tuple(sorted(set(_bvh.SPLITS) | set(_SPLIT_ALIASES)))
DEFAULT_SPLIT = _bvh.DEFAULT_SPLIT
DEFAULT_LEAF_SIZE = _bvh.DEFAULT_LEAF_SIZE
# Batches run through touche._parallel.run: items per chunk (the smallest chunk worth handing to a
# thread, some tens of microseconds of work; a batch of at most one grain stays in the calling
# thread), from the cost per pair of each driver.
_GRAIN_QUERY = 1  # a clearance query between two trees: up to milliseconds
_GRAIN_TRIANGLES = 128  # S3 on two triangles: ~1 us
# the arrays of each mesh's default ClearancePart, weakly keyed by the mesh (touche/_cache.py): a
# deleted mesh takes them with it; the cached value holds arrays only (a ClearancePart holds its
# mesh, which would keep the key alive)
_prepared = WeakIdentityCache()
_kernels = kernel_loader("clearance")


def _as_mesh(value, name):
    from .shapes import TriangleMesh, as_shape

    if isinstance(value, TriangleMesh):
        return value
    if isinstance(value, (str, os.PathLike)):
        from . import mesh

        return mesh.load(value)
    if isinstance(value, tuple) and len(value) == 2:
        return TriangleMesh(value[0], value[1])
    try:
        shape = as_shape(value, name)
    except GeometryError:
        raise GeometryError(f"{name} must be a TriangleMesh, trimesh.Trimesh, (vertices, faces), a mesh file path "
                            f"or a ClearancePart, got {type(value).__name__}") from None
    if not isinstance(shape, TriangleMesh):
        raise GeometryError(f"{name} must be a triangle mesh, got {type(shape).__name__}")
    return shape


class ClearancePart:
    """A part prepared for clearance queries (in its own frame): its bounding-volume tree (a
    ``touche.bvh`` tree: the mesh's own for the default ``split`` and ``leaf_size``, else one
    built with them; see ``SPLITS``) and S3's per-triangle data in tree order. Build once, query
    at any poses. Attributes: ``mesh`` (TriangleMesh), ``node_index``, ``node_bounds`` (the
    tree's arrays, layout in ``touche/_kernels/trees/bvh_volumes.py``), ``triangles`` (per-triangle data
    in tree order, columns ``TRI_*`` of ``touche._kernels.trees.clearance``), ``triangle_ids``,
    ``depth``."""

    __slots__ = ("mesh", "node_index", "node_bounds", "triangles", "triangle_ids", "depth")

    def __init__(self, mesh, *, leaf_size=DEFAULT_LEAF_SIZE, split=DEFAULT_SPLIT):
        if split not in SPLITS:
            raise GeometryError(f"split must be one of {list(SPLITS)}, got {split!r}")
        if isinstance(leaf_size, bool) or not isinstance(leaf_size, (int, np.integer)) or leaf_size < 1:
            raise GeometryError(f"leaf_size must be an integer >= 1, got {leaf_size!r}")
        mesh = _as_mesh(mesh, "mesh")
        self._set(mesh, _build_arrays(mesh, int(leaf_size), split))

    @classmethod
    def _from_arrays(cls, mesh, arrays):
        part = cls.__new__(cls)
        part._set(mesh, arrays)
        return part

    def _set(self, mesh, arrays):
        nodes, bounds, tri, ids, depth = arrays
        self.mesh = mesh
        self.node_index = nodes
        self.node_bounds = bounds
        self.triangles = tri
        self.triangle_ids = ids
        self.depth = int(depth)

    def __reduce__(self):
        return (ClearancePart._from_arrays, (self.mesh, (self.node_index, self.node_bounds, self.triangles,
                                                          self.triangle_ids, self.depth)))

    def __repr__(self):
        return f"ClearancePart({len(self.triangle_ids)} triangles, {len(self.node_index)} nodes, depth {self.depth})"


def prepare(part, *, leaf_size=DEFAULT_LEAF_SIZE):
    """The :class:`ClearancePart` of a mesh (cached per mesh object for the default leaf size)."""
    if isinstance(part, ClearancePart):
        return part
    mesh = _as_mesh(part, "part")
    if leaf_size != DEFAULT_LEAF_SIZE:
        return ClearancePart(mesh, leaf_size=leaf_size)
    key = shape_key(mesh)
    arrays = _prepared.get(key)
    if arrays is None:
        arrays = _prepared.get_or_build(lambda: _build_arrays(mesh, DEFAULT_LEAF_SIZE, DEFAULT_SPLIT), key)
    return ClearancePart._from_arrays(mesh, arrays)


def _build_arrays(mesh, leaf_size, split):
    """(node_index, node_bounds, S3 triangle data, triangle ids, depth): the mesh's own tree for
    the defaults (shared with touche.bvh's queries), else a tree built with these settings."""
    split = _SPLIT_ALIASES.get(split, split)
    if leaf_size == DEFAULT_LEAF_SIZE and split == DEFAULT_SPLIT:
        tree = mesh.bvh
    else:
        tree = _bvh.build(mesh, split=split, leaf_size=leaf_size)
    kernels = _kernels()
    triangles = np.empty((len(tree.tri_ids), kernels.TRI_WIDTH))
    kernels.triangle_rows(tree.tri_vertices, triangles)
    return tree.node_index, tree.node_bounds, triangles, tree.tri_ids, int(tree.depth)


def _arrays(part):
    return part.node_index, part.node_bounds, part.triangles, part.triangle_ids


def _concatenate(parts):
    """One set of arrays for several parts (node and triangle indices made global)."""
    if len(parts) == 1:
        p = parts[0]
        return p.node_index, p.node_bounds, p.triangles, p.triangle_ids, np.zeros(1, dtype=np.int64)
    node_rows = np.cumsum([0] + [len(p.node_index) for p in parts])
    tri_rows = np.cumsum([0] + [len(p.triangle_ids) for p in parts])
    nodes = np.concatenate([p.node_index for p in parts])
    for k, p in enumerate(parts):
        block = nodes[node_rows[k]:node_rows[k + 1]]
        block[:, 0] += tri_rows[k]
        internal = block[:, 2] >= 0
        block[internal, 2] += node_rows[k]
    bounds = np.ascontiguousarray(np.concatenate([p.node_bounds for p in parts]))
    tri = np.ascontiguousarray(np.concatenate([p.triangles for p in parts]))
    ids = np.ascontiguousarray(np.concatenate([p.triangle_ids for p in parts]))
    return np.ascontiguousarray(nodes), bounds, tri, ids, node_rows[:-1].astype(np.int64)


def _stack_rows(depth_a, depth_b):
    """Rows of a traversal stack for two trees of these depths (a descent pushes at most two
    node pairs per level of either tree)."""
    return 2 * (depth_a + depth_b) + 8


def _max_distance(value):
    if value is None:
        return np.inf
    return nonnegative_number(value, "max_distance", finite=False)


class Clearance(Record):
    """Result of :func:`clearance`.

    ``intersecting``: the surfaces share a point (touching counts). ``distance``: 0 when
    intersecting, else the minimum separation; ``inf`` when nothing lies within
    ``max_distance``. ``point_a``, ``point_b``: the closest points in the world frame (a common
    point when intersecting; NaN when beyond max_distance). ``vector``: point_a - point_b, from B
    to A. ``triangle_a``, ``triangle_b``: the faces the points lie on (-1 when beyond
    max_distance). One pose pair: bool, float, (3,) arrays and ints; a batch of n: (n,) / (n, 3)
    arrays. ``facet_a``, ``facet_b``: the same faces numbered as in the parts' FILES (a mesh
    from :func:`touche.mesh.load` is welded, which drops collapsed facets and so renumbers the
    faces after them; see ``LoadedMesh.source_faces``); equal to ``triangle_a`` / ``triangle_b``
    for meshes made from arrays. With ``curve=True`` also ``pairs (k, 2)`` every intersecting
    face pair (``facet_pairs`` in file numbers) and ``segments (k, 2, 3)`` the intersection of
    each (both ends equal for a point; the longest chord for a coplanar overlap): together the
    intersection curve; otherwise None. ``work``: node pairs visited and triangle pairs tested
    exactly ((2,) or (n, 2); for benchmarks)."""

    __slots__ = ("intersecting", "distance", "point_a", "point_b", "triangle_a", "triangle_b", "pairs", "segments",
                 "work", "facet_a", "facet_b", "facet_pairs")
    _optional = ("pairs", "segments", "work", "facet_a", "facet_b", "facet_pairs")

    @property
    def vector(self):
        return self.point_a - self.point_b

    def __repr__(self):
        facets = ""
        if self.facet_a is not None and not (np.array_equal(self.facet_a, self.triangle_a)
                                             and np.array_equal(self.facet_b, self.triangle_b)):
            facets = f", facet_a={self.facet_a!r}, facet_b={self.facet_b!r}"
        return (f"Clearance(intersecting={self.intersecting!r}, distance={self.distance!r}, "
                f"triangle_a={self.triangle_a!r}, triangle_b={self.triangle_b!r}{facets})")


def _file_facets(mesh, faces):
    """The file's facet numbers of ``faces`` of ``mesh`` (an int or an int array; -1, no face,
    stays -1): ``mesh.source_faces`` for a mesh read by touche.mesh.load, else the faces."""
    source = getattr(mesh, "source_faces", None)
    if isinstance(faces, (int, np.integer)):
        return int(source[faces]) if source is not None and faces >= 0 else int(faces)
    faces = np.asarray(faces)
    if source is None:
        return faces.copy()
    return np.where(faces >= 0, source[np.maximum(faces, 0)], -1).astype(np.int64)


def _outputs(n):
    k = _kernels()
    return np.empty((n, k.OUT_REAL_WIDTH)), np.empty((n, k.OUT_INT_WIDTH), dtype=np.int64)


def _columns(out):
    """(distance, hit, triangle ids (n, 2), point_a, point_b, work (n, 2)) views of the outputs."""
    real, whole = out
    return (real[:, 0].copy(), whole[:, 0].astype(bool), whole[:, 1:3], np.ascontiguousarray(real[:, 1:4]),
            np.ascontiguousarray(real[:, 4:7]), whole[:, 3:5].copy())


def clearance(a, pose_a, b, pose_b, *, max_distance=None, curve=False):
    """Intersection and minimum distance between the surfaces of parts ``a`` and ``b``.

    Arguments:

    - ``a``, ``b``: ``TriangleMesh``, ``trimesh.Trimesh``, ``(vertices, faces)``, a mesh file
      path or a ``ClearancePart`` (prepared once, reused across calls).
    - ``pose_a``, ``pose_b``: None (identity), ``Pose``, ``(4, 4)`` or ``(n, 4, 4)``; a batch
      of 1 broadcasts, a batch runs on all cores; an empty batch ``(0, 4, 4)`` gives arrays of
      length 0 (the other pose must then be single or empty).
    - ``max_distance``: only separations below it are searched (faster; farther pairs report
      ``distance = inf``).
    - ``curve``: also collect every intersecting face pair and its intersection segment (one
      pose pair only).

    Returns a ``Clearance``: ``intersecting``, ``distance``, closest points ``point_a`` /
    ``point_b`` and ``vector`` (from B to A) in world coordinates, the faces they lie on
    (``triangle_a`` / ``triangle_b``, and ``facet_a`` / ``facet_b`` numbered as in the files);
    one pose pair gives a bool, a float, ``(3,)`` arrays and ints, a batch of n gives ``(n,)``
    / ``(n, 3)`` arrays. With ``curve=True`` also ``pairs`` ``(k, 2)`` and ``segments``
    ``(k, 2, 3)``: the intersection curve.

    Errors: ``MeshFormatError`` for a file that cannot be read; ``GeometryError`` for an empty
    or degenerate mesh, a bad pose, batch lengths that differ, ``curve=True`` with a batch."""
    part_a = prepare(a)
    part_b = part_a if b is a else prepare(b)
    limit = _max_distance(max_distance)
    matrices = _pair_matrices(pose_a, pose_b, check=True)  # the verbs' one empty-batch gate
    if matrices is None:  # a batch of no poses: arrays of length 0, shaped as a batch's
        if curve:
            raise GeometryError("curve=True takes one pose per part")
        empty = np.zeros(0, dtype=np.int64)
        return Clearance(np.zeros(0, dtype=bool), np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3)), empty, empty.copy(),
                         work=np.zeros((0, 2), dtype=np.int64), facet_a=empty.copy(), facet_b=empty.copy())
    pa, pb = matrices
    single = pa.ndim == 2 and pb.ndim == 2
    poses_a = np.ascontiguousarray(pa.reshape(-1, 4, 4))
    poses_b = np.ascontiguousarray(pb.reshape(-1, 4, 4))
    n = max(len(poses_a), len(poses_b))
    if len(poses_a) != len(poses_b) and 1 not in (len(poses_a), len(poses_b)):
        raise GeometryError(f"pose batches differ in length: pose_a has {len(poses_a)}, pose_b has {len(poses_b)}")
    if curve and not single:
        raise GeometryError("curve=True takes one pose per part")
    arrays = _arrays(part_a) + _arrays(part_b)
    stack_rows = _stack_rows(part_a.depth, part_b.depth)
    out = _outputs(n)
    k = _kernels()
    if n == 1:
        k.clearance_one(*arrays, poses_a[0], poses_b[0], limit, stack_rows, *out)
    else:
        _parallel.run(k.clearance_poses, n, *arrays, poses_a, poses_b, limit, stack_rows, *out, grain=_GRAIN_QUERY)
    mesh_a, mesh_b = part_a.mesh, part_b.mesh
    if not single:
        distance, hit, tri_ids, point_a, point_b, work = _columns(out)
        tri_a, tri_b = tri_ids[:, 0].copy(), tri_ids[:, 1].copy()
        return Clearance(hit, distance, point_a, point_b, tri_a, tri_b, work=work,
                         facet_a=_file_facets(mesh_a, tri_a), facet_b=_file_facets(mesh_b, tri_b))
    real, whole = out
    tri_a, tri_b = int(whole[0, 1]), int(whole[0, 2])
    result = Clearance(bool(whole[0, 0]), float(real[0, 0]), real[0, 1:4], real[0, 4:7], tri_a, tri_b,
                       work=whole[0, 3:5], facet_a=_file_facets(mesh_a, tri_a), facet_b=_file_facets(mesh_b, tri_b))
    if curve:
        result.pairs, result.segments = _curve(arrays, poses_a[0], poses_b[0], stack_rows, part_a, part_b)
        result.facet_pairs = np.stack([_file_facets(mesh_a, result.pairs[:, 0]),
                                       _file_facets(mesh_b, result.pairs[:, 1])], axis=1).reshape(-1, 2)
    return result


def _curve(arrays, pose_a, pose_b, stack_rows, part_a, part_b):
    k = _kernels()
    capacity = 1024
    while True:
        pairs = np.empty((capacity, 2), dtype=np.int64)
        points = np.empty((capacity, 3))
        count = k.intersections(*arrays, pose_a, pose_b, stack_rows, pairs, points)
        if count <= capacity:
            break
        capacity = count
    pairs = pairs[:count].copy()
    segments = np.empty((count, 2, 3))
    if count == 0:
        return pairs, segments
    from . import pairwise

    va = part_a.mesh.vertices @ pose_a[:3, :3].T + pose_a[:3, 3]
    vb = part_b.mesh.vertices @ pose_b[:3, :3].T + pose_b[:3, 3]
    tri_a = np.ascontiguousarray(va[part_a.mesh.faces[pairs[:, 0]]])
    tri_b = np.ascontiguousarray(vb[part_b.mesh.faces[pairs[:, 1]]])
    kinds, set_points, counts = pairwise.triangle_triangle_intersection(tri_a, tri_b)
    for row in range(count):
        m = counts[row]
        if m <= 0:  # the two methods disagree only within rounding: keep the common point found
            segments[row, 0] = segments[row, 1] = points[row]
            continue
        segments[row] = _bvh.longest_chord(set_points[row, :m])
    return pairs, segments


class ClearanceTable(Record):
    """Result of :func:`clearance_all`: one row per pair of parts. ``pairs (k, 2)`` part indices
    (A, B); ``intersecting (k,)``, ``distance (k,)``, ``point_a``, ``point_b (k, 3)``,
    ``vector (k, 3)`` (B to A), ``triangle_a``, ``triangle_b (k,)`` and ``facet_a``,
    ``facet_b (k,)`` (the same faces in the parts' file numbering), as in :class:`Clearance`."""

    __slots__ = ("pairs", "intersecting", "distance", "point_a", "point_b", "triangle_a", "triangle_b", "facet_a",
                 "facet_b")
    _optional = ("facet_a", "facet_b")

    @property
    def vector(self):
        return self.point_a - self.point_b

    def __len__(self):
        return len(self.pairs)

    def __repr__(self):
        return f"ClearanceTable({len(self.pairs)} pairs, {int(np.sum(self.intersecting))} intersecting)"


def clearance_all(parts, poses=None, *, pairs=None, max_distance=None):
    """Clearance of every pair of ``parts`` (or of the given ``pairs`` ``(k, 2)`` of part
    indices), each part at its pose.

    ``parts``: a list of p parts (any form :func:`clearance` takes); ``poses``: None (all at
    the identity), ``(p, 4, 4)`` or a list of p poses; ``max_distance`` as for
    :func:`clearance`. All pairs run compiled, on all cores.

    Returns a ``ClearanceTable``: one row per pair (the part indices, ``intersecting``,
    ``distance``, closest points and faces as arrays).

    Errors: ``GeometryError`` when ``poses`` does not give one pose per part or ``pairs``
    names a part that is not there; ``MeshFormatError`` for a file that cannot be read."""
    prepared = [prepare(p) for p in parts]
    count = len(prepared)
    if count < 2 and pairs is None:
        raise GeometryError(f"clearance_all needs at least 2 parts, got {count}")
    if poses is None:
        matrices = np.repeat(np.eye(4)[None], count, axis=0)
    elif isinstance(poses, (list, tuple)):
        if len(poses) != count:
            raise GeometryError(f"poses has {len(poses)} entries for {count} parts")
        matrices = np.stack([np.asarray(as_matrices(p, f"poses[{i}]")).reshape(4, 4) for i, p in enumerate(poses)])
    else:
        matrices = np.asarray(as_matrices(poses, "poses"))
        if matrices.ndim != 3 or len(matrices) != count:
            raise GeometryError(f"poses must be ({count}, 4, 4) for {count} parts, got {matrices.shape}")
    matrices = np.ascontiguousarray(matrices, dtype=np.float64)
    if pairs is None:
        i, j = np.triu_indices(count, 1)
        pair_rows = np.stack([i, j], axis=1).astype(np.int64)
    else:
        try:
            pair_rows = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        except (TypeError, ValueError):
            raise GeometryError("pairs must be (k, 2) integer part indices") from None
        if len(pair_rows) and (pair_rows.min() < 0 or pair_rows.max() >= count):
            raise GeometryError(f"pairs index parts out of range [0, {count})")
    pair_rows = np.ascontiguousarray(pair_rows)
    # identical part objects share their arrays
    unique = []
    where = {}
    for p in prepared:  # (the parts are alive for the whole call: their ids are theirs)
        if id(p.node_index) not in where:
            where[id(p.node_index)] = len(unique)
            unique.append(p)
    nodes, bounds, tri, ids, roots_unique = _concatenate(unique)
    roots = np.ascontiguousarray(np.array([roots_unique[where[id(p.node_index)]] for p in prepared],
                                          dtype=np.int64))
    depth = max(p.depth for p in unique)
    out = _outputs(len(pair_rows))
    _parallel.run(_kernels().clearance_pairs, len(pair_rows), nodes, bounds, tri, ids, roots, matrices, pair_rows,
                  _max_distance(max_distance), _stack_rows(depth, depth), *out, grain=_GRAIN_QUERY)
    distance, hit, tri_ids, point_a, point_b, work = _columns(out)
    tri_a, tri_b = tri_ids[:, 0].copy(), tri_ids[:, 1].copy()
    if all(getattr(p.mesh, "source_faces", None) is None for p in prepared):
        return ClearanceTable(pair_rows, hit, distance, point_a, point_b, tri_a, tri_b, tri_a.copy(), tri_b.copy())
    # file facet numbers: every part's map (its faces when it has none) in one array, offset per part
    maps = [_file_facets(p.mesh, np.arange(len(p.triangle_ids))) for p in prepared]
    offsets = np.cumsum([0] + [len(m) for m in maps])[:-1]
    flat = np.concatenate(maps)

    def facets(parts, faces):
        return np.where(faces >= 0, flat[offsets[parts] + np.maximum(faces, 0)], -1).astype(np.int64)

    return ClearanceTable(pair_rows, hit, distance, point_a, point_b, tri_a, tri_b,
                          facets(pair_rows[:, 0], tri_a), facets(pair_rows[:, 1], tri_b))


def triangle_clearance(tri_a, tri_b):
    """S3 on raw triangles (one frame): ``tri_a``, ``tri_b`` (3, 3) or (n, 3, 3) vertex rows
    (broadcast). Returns :class:`Clearance` (``triangle_a`` / ``triangle_b`` are None);
    bool / float / (3,) for one pair, arrays for n. A batch runs compiled, on all cores."""
    arrays = []
    for name, value in (("tri_a", tri_a), ("tri_b", tri_b)):
        try:
            array = np.array(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise GeometryError(f"{name} must be a (3, 3) or (n, 3, 3) array of vertices") from None
        if array.shape[-2:] != (3, 3) or array.ndim not in (2, 3):
            raise GeometryError(f"{name} must have shape (3, 3) or (n, 3, 3), got {array.shape}")
        if not np.isfinite(array).all():
            raise GeometryError(f"{name} has NaN or infinite coordinates")
        arrays.append(array)
    single = arrays[0].ndim == 2 and arrays[1].ndim == 2
    a = arrays[0].reshape(-1, 3, 3)
    b = arrays[1].reshape(-1, 3, 3)
    if len(a) != len(b) and 1 not in (len(a), len(b)):
        raise GeometryError(f"triangle batches differ in length: {len(a)} and {len(b)}")
    n = max(len(a), len(b))
    a = np.ascontiguousarray(np.broadcast_to(a, (n, 3, 3)))
    b = np.ascontiguousarray(np.broadcast_to(b, (n, 3, 3)))
    distance, hit = np.empty(n), np.empty(n, dtype=np.bool_)
    point_a, point_b = np.empty((n, 3)), np.empty((n, 3))
    _parallel.run(_kernels().triangle_pairs, n, a, b, distance, hit, point_a, point_b, grain=_GRAIN_TRIANGLES)
    if single:
        return Clearance(bool(hit[0]), float(distance[0]), point_a[0], point_b[0], None, None)
    return Clearance(hit, distance, point_a, point_b, None, None)


def warmup():
    """Compile the clearance kernels (two small boxes)."""
    from .shapes import TriangleMesh

    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float64)
    faces = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    tetra = TriangleMesh(vertices, faces)
    moved = np.eye(4)
    moved[:3, 3] = [0.5, 0.2, 0.1]
    clearance(tetra, None, tetra, moved, curve=True)
    clearance(tetra, None, tetra, np.stack([np.eye(4), moved]))
    clearance_all([tetra, tetra], [np.eye(4), moved])
    triangle_clearance(vertices[faces[:2]], vertices[faces[2:]])


__all__ = ["Clearance", "ClearancePart", "ClearanceTable", "clearance", "clearance_all", "prepare",
           "triangle_clearance", "warmup"]

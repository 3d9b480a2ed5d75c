"""Queries on one triangle mesh accelerated by its bounding-volume hierarchy: rays (first, any,
all hits), closest points, generalized winding numbers, inside/outside and signed distance.

    import touche as tc
    mesh = tc.TriangleMesh(vertices, faces)
    tc.raycast(mesh, pose, origins, directions)               # first hit (BVH)
    tc.raycast(mesh, pose, origins, directions, mode="all")   # RayHits: every hit, flat
    tc.contains(mesh, pose, points)                           # (n,) bool, closed meshes
    tc.winding_number(mesh, pose, points)                     # (n,) float
    tc.signed_distance_points(mesh, pose, points)             # (n,), negative inside

Points and rays are in world coordinates; ``pose`` places the mesh (a Pose, (4, 4), a (n, 4, 4)
batch with one pose per point / ray, or None). Units are the mesh's.

The tree. Built once per TriangleMesh on first use and cached (module-level, keyed by the
mesh's vertex array and dropped with it): ``bvh_build.build_tree(..., leaf_size=8,
split=SPLIT_SAH)`` (binned SAH: best for rays, good for points), node boxes padded by 1e-9 of
the mesh's coordinate scale (``bvh_mesh`` module doc: why). A ``trimesh.Trimesh`` passed
directly is converted on every call, so its tree is rebuilt every call: convert it once with
``TriangleMesh.from_trimesh`` for repeated queries.

Inside / outside. The generalized winding number w(p) (Jacobson et al. 2013) is the signed solid
angle of the mesh seen from p over 4 pi: for a closed, consistently oriented mesh it is an
integer off the surface (1 inside, 0 outside for outward-facing triangles), and it degrades
gracefully on meshes with holes. touche computes it EXACTLY (up to rounding, no far-field
approximation): far nodes are replaced by fans over their boundary edges (``bvh_winding``).

``contains`` / ``signed_distance_points`` on a CLOSED mesh (every edge shared by exactly two
faces with opposite orientation, after welding vertices with identical coordinates): inside iff
|w| >= 0.5 with w's sign taken so that the mesh's enclosed volume is positive (an inward-facing
closed mesh works too). For a closed mesh w is first computed as the signed crossing count of one
ray per point (fixed generic direction, O(log n)); the count is accepted only with a certificate
(every crossing decided by margins far above rounding: no edge, vertex, in-plane or
on-the-origin near miss, bvh_winding.classify_crossing) and otherwise replaced by the exact
solid-angle sum, so the answer is always the exact winding number's. Points ON the surface (w not within 1e-6 of an integer: only exactly on
it, rounding aside) count as inside: solids are closed sets, as everywhere in touche. On an OPEN
mesh these raise GeometryError unless ``open_ok=True``; then inside iff w >= 0.5 (the winding
number's natural threshold; needs consistently oriented, outward-facing triangles; near a hole
the answer is the best guess the winding number gives, not a guarantee).

Duplicate triangles make a mesh non-closed (their edges are used four times); zero-area
triangles are kept (never hit by rays, contribute nothing to w, and their edges count for
closedness). No query returns NaN for them.
"""
from __future__ import annotations

import os
import threading
import weakref

import numpy as np

from . import _parallel
from ._cache import WeakIdentityCache, shape_key
from ._kernels import kernel_loader, kinds
from ._queryargs import check_empty_rays, query_points, ray_arrays
from ._record import Record
from .errors import GeometryError, UnsupportedQuery
from .pose import as_matrices

LEAF_SIZE = 8
BOX_PAD_RELATIVE = 1e-9
ON_SURFACE_GAP = 1e-6  # |w - round(w)| above this: the point is on the surface (closed meshes)
# items per chunk of the thread pool at least (touche._parallel.run): ~50 us of work or more for
# the costly items (measured per item, one core: rays on diff_ring.stl, 58k triangles; points
# about an icosphere(4), 5k triangles)
RAY_ALL_GRAIN = 32  # rays, every hit: ~5 us per pass (a ray missing the root box ~0.05 us)
CLOSEST_GRAIN = 16  # closest points: ~4 us near the surface, 40-100 us far or deep inside
WINDING_GRAIN = 16  # exact winding numbers: ~13 us near or inside (0.06 us outside the root box)
CROSSINGS_GRAIN = 128  # signed ray crossings: ~0.5 us inside (0.07 us outside the root box)


_kernels = kernel_loader("bvh_mesh")
_ray_kernels = kernel_loader("bvh_rays")
_ray_tree_kernels = kernel_loader("bvh_ray_tree")
_closest_kernels = kernel_loader("bvh_closest")
_winding_kernels = kernel_loader("bvh_winding")


class MeshTree:
    """The BVH of one mesh and the derived data of the queries (see the module doc). Build it
    through :func:`mesh_tree` (cached)."""

    __slots__ = ("links", "boxes", "child_boxes", "root_box", "rec_f", "rec_i", "root", "tri", "tri_vertices",
                 "tri_ids", "depth", "pad",
                 "scale", "_mesh_points", "_mesh_triangles", "_topology", "_winding", "_ray_tree", "__weakref__")

    def __init__(self, points, triangles, scale):
        from ._kernels import bvh_build

        k = _kernels()
        pad = BOX_PAD_RELATIVE * max(float(np.abs(points).max()), 1e-300)
        links, boxes, child_boxes, tri, tri_vertices, tri_ids, depth = k.mesh_tree(
            points, triangles, LEAF_SIZE, bvh_build.SPLIT_SAH, pad
        )
        self.links = links
        self.boxes = boxes
        self.child_boxes = child_boxes
        self.root_box = np.ascontiguousarray(boxes[:1])
        self.rec_f, self.rec_i, self.root = _ray_records(k, links, child_boxes, len(triangles))
        self.tri = tri
        self.tri_vertices = tri_vertices
        self.tri_ids = tri_ids
        self.depth = int(depth)
        self.pad = pad
        self.scale = float(scale)
        # weak: the cache entry must not keep the mesh's arrays (its key) alive
        self._mesh_points = weakref.ref(points)
        self._mesh_triangles = weakref.ref(triangles)
        self._topology = None
        self._winding = None
        self._ray_tree = None

    # The lazy parts below are built once, under a lock, when several threads ask at once (each
    # is assigned whole, so a reader never sees half of one).
    def ray_tree(self):
        """``(nodes, nodes_i, blocks, block_face, root_box, depth)`` for bvh_rays.raycast_first_many:
        the first / any-hit tree (split references, 4-wide nodes; bvh_ray_tree),
        built on the first such ray query. ``nodes`` (K, 32) float32 rows: node_boxes in columns
        0:24 and, through the int32 view ``nodes_i`` of the same memory, node_kids in 24:32 (one
        128-byte row per node visit)."""
        return self._once("_ray_tree", self._build_ray_tree)

    def _once(self, attribute, build):
        """The member ``attribute``, made by ``build()`` on first use (once, whatever the number
        of threads asking)."""
        value = getattr(self, attribute)
        if value is None:
            with _lock_for(self):
                value = getattr(self, attribute)
                if value is None:
                    value = build()
                    setattr(self, attribute, value)
        return value

    def _build_ray_tree(self):
        points, triangles = self._mesh_points(), self._mesh_triangles()
        if points is None or triangles is None:
            raise GeometryError("the mesh of this tree no longer exists")
        node_boxes, node_kids, blocks, block_face, root_box, depth = _ray_tree_kernels().ray_tree(
            points, triangles, self.pad
        )
        nodes = _aligned_empty((len(node_boxes), 32), np.float32)
        nodes[:, :24] = node_boxes
        nodes_i = nodes.view(np.int32)
        nodes_i[:, 24:] = node_kids
        aligned_blocks = _aligned_empty(blocks.shape, np.float64)
        aligned_blocks[...] = blocks
        return (nodes, nodes_i, aligned_blocks, block_face, root_box, int(depth))

    # ---- topology (lazy: rays do not need it)
    def topology(self):
        """``(welded_vertices, welded_faces, closed, orientation)``: vertices with identical
        coordinates merged; closed = every directed edge appears once and its reverse once;
        orientation = sign of the enclosed volume (+1 outward-facing, -1 inward; +1 if open)."""
        return self._once("_topology", self._build_topology)

    def _build_topology(self):
        points, triangles = self._mesh_points(), self._mesh_triangles()
        if points is None or triangles is None:
            raise GeometryError("the mesh of this tree no longer exists")
        welded, inverse = weld_identical(points)
        faces = inverse[triangles]
        welded = np.ascontiguousarray(welded, dtype=np.float64)
        faces = np.ascontiguousarray(faces, dtype=np.int64)
        closed = _is_closed(faces, len(welded))
        orientation = 1.0
        if closed:
            a, b, c = (welded[faces[:, i]] for i in range(3))
            center = welded.mean(axis=0)  # volume relative to a near point: less cancellation
            volume = np.einsum("ij,ij->", a - center, np.cross(b - center, c - center)) / 6.0
            orientation = -1.0 if volume < 0.0 else 1.0
        return (welded, faces, closed, orientation)

    def winding_data(self):
        """``(cap_start, cap_count, cap_edges, cap_weight, welded_vertices, plan)`` for
        bvh_winding.winding_on_tree (fans over every node's boundary edges; ``plan``: how a node
        seen from outside its box is summed most cheaply, bvh_winding.outside_plan)."""
        return self._once("_winding", self._build_winding)

    def _build_winding(self):
        welded, faces, _, _ = self.topology()
        tree_faces = np.ascontiguousarray(faces[self.tri_ids])
        edges, start, count = _winding_kernels().node_boundaries(self.links, tree_faces)
        plan = _winding_kernels().outside_plan(self.links, count)
        return (
            start, count, np.ascontiguousarray(edges[:, :2]), edges[:, 2].astype(np.float64), welded, plan,
        )

    @property
    def closed(self):
        return self.topology()[2]


def weld_identical(points):
    """``(welded (k, 3), inverse (n,))``: the distinct rows of ``points`` in lexicographic order
    and each row's index among them -- np.unique(points, axis=0, return_inverse=True), by one
    lexsort of the columns (np.unique(axis=0) sorts structured rows, ~7x slower on 1M points)."""
    if len(points) == 0:
        return points.reshape(0, 3), np.zeros(0, dtype=np.int64)
    order = np.lexsort(points.T[::-1])
    ordered = points[order]
    fresh = np.empty(len(ordered), dtype=bool)
    fresh[0] = True
    np.any(ordered[1:] != ordered[:-1], axis=1, out=fresh[1:])
    inverse = np.empty(len(ordered), dtype=np.int64)
    inverse[order] = np.cumsum(fresh) - 1
    return ordered[fresh], inverse


def _ray_records(k, links, child_boxes, num_triangles):
    """bvh_mesh.ray_layout records packed one per 64-byte row: float32 boxes rounded OUTWARD
    (min one float32 step down, max one up: the float32 box contains the float64 one, so
    culling stays conservative) in columns 0:12, the int32 kids in 12:16 of the same memory."""
    boxes, kids = k.ray_layout(links, child_boxes)
    count = max(len(kids), 1)
    raw = np.zeros(count * 16 + 16, dtype=np.float32)
    shift = (-raw.ctypes.data % 64) // 4  # start on a cache line
    rec_f = raw[shift : shift + count * 16].reshape(count, 16)
    rec_i = rec_f.view(np.int32)
    if len(kids):
        with np.errstate(over="ignore"):  # beyond float32 range: +-inf, still conservative
            for lo, hi in ((0, 3), (6, 9)):
                rec_f[:, lo : lo + 3] = np.nextafter(boxes[:, lo : lo + 3].astype(np.float32), np.float32(-np.inf))
                rec_f[:, hi : hi + 3] = np.nextafter(boxes[:, hi : hi + 3].astype(np.float32), np.float32(np.inf))
        if kids.max() >= 2**31:
            raise GeometryError("mesh too large for the ray records (2**31 triangles)")
        rec_i[:, 12:16] = kids
        root = np.array([0, 0], dtype=np.int64)
    else:  # the root is a leaf
        root = np.array([0, num_triangles], dtype=np.int64)
    return rec_f, rec_i, root


def _aligned_empty(shape, dtype, alignment=64):
    """An uninitialised C-contiguous array starting on a cache line (node rows and triangle
    blocks then never straddle more lines than their size needs)."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(size + alignment, dtype=np.uint8)
    shift = -raw.ctypes.data % alignment
    return raw[shift : shift + size].view(dtype).reshape(shape)


def _is_closed(faces, num_vertices):
    """Every directed edge (collapsed edges a == a skipped) used exactly once and its reverse
    exactly once: closed, consistently oriented, edge-manifold."""
    edges = faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2)
    edges = edges[edges[:, 0] != edges[:, 1]]
    if len(edges) == 0:
        return False
    keys = np.sort(edges[:, 0] * num_vertices + edges[:, 1])
    if (np.diff(keys) == 0).any():
        return False
    # the directed edges are distinct, so are their reverses (as many): every reverse is an edge
    # iff the two sorted lists are equal (two sorts: faster than a search per edge on big meshes)
    reverse = np.sort(edges[:, 1] * num_vertices + edges[:, 0])
    return bool(np.array_equal(keys, reverse))


# weakly keyed by the mesh's coordinate array (touche/_cache.py; a MeshTree refers to the arrays
# weakly): built once when several threads ask at once, gone with the mesh
_TREES = WeakIdentityCache()
# A tree's lazy parts (topology, winding numbers, ray tree) take one of these re-entrant locks, picked by
# the object's id: the same object is built once when several threads ask at once, different
# ones mostly in parallel.
_BUILD_LOCKS = tuple(threading.RLock() for _ in range(64))


def _lock_for(obj):
    return _BUILD_LOCKS[id(obj) % len(_BUILD_LOCKS)]


def _new_locks_after_fork():  # a build running in another thread at fork never ends in the child
    global _BUILD_LOCKS
    _BUILD_LOCKS = tuple(threading.RLock() for _ in range(64))


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_locks_after_fork)


def mesh_tree(mesh):
    """The cached :class:`MeshTree` of a TriangleMesh (built on first use, once)."""
    mesh = _mesh(mesh)
    points = shape_key(mesh)
    tree = _TREES.get(points)
    if tree is None:
        tree = _TREES.get_or_build(lambda: _new_tree(mesh, points), points)
    return tree


def _new_tree(mesh, points):
    tree = MeshTree(points, mesh._packed[3], mesh.scale)
    # meshes built from arrays known valid (touche.environments) know their topology: distinct
    # vertex coordinates, closed or not by construction -- no welding pass or closed check
    known = getattr(mesh, "_known_topology", None)
    if known is not None:
        tree._topology = known()
    return tree


def _mesh(value):
    from .shapes import Shape, as_shape

    shape = value if isinstance(value, Shape) else as_shape(value, "mesh")
    if shape.kind != kinds.MESH:
        raise GeometryError(f"mesh must be a TriangleMesh (or trimesh.Trimesh), got {type(shape).__name__}")
    return shape


def is_closed(mesh):
    """Whether the mesh bounds a solid: every edge shared by exactly two faces with opposite
    orientation (vertices with identical coordinates welded first)."""
    return mesh_tree(mesh).closed


# ---------------------------------------------------------------------------------------------
# rays (query.raycast routes meshes here)


class RayHits(Record):
    """Every hit of a batch of rays (``touche.raycast(..., mode="all")``), flat and sorted by ray
    index, then t, then face: ``ray (k,) int64`` index of the ray, ``t (k,)`` distance along the
    unit direction, ``face (k,) int64`` triangle index, ``point (k, 3)`` world hit point. A ray
    through an edge or vertex shared by several triangles reports each of them (the same t up to
    rounding). ``counts(n)`` gives hits per ray."""

    __slots__ = ("ray", "t", "face", "point")

    @classmethod
    def empty(cls):
        """No hits (the answer for an empty batch of rays)."""
        return cls(np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros((0, 3)))

    def __len__(self):
        return len(self.t)

    def counts(self, n_rays):
        return np.bincount(self.ray, minlength=n_rays)

    def __repr__(self):
        return f"RayHits({len(self.t)} hits)"


MODES = ("first", "any", "all")


def raycast_arrays(mesh, poses, origins, directions, limits, mode, out_hit, out_t, out_point, out_normal, out_face):
    """Validated arrays in (see query.raycast); mode "first" / "any" fill the outputs, "all"
    returns a :class:`RayHits`."""
    tree = mesh_tree(mesh)
    k = _ray_kernels()
    count = len(origins)
    if mode == "all":
        # two passes over the pool: hits per ray (into offsets[i + 1]), then each ray's hits at
        # its exclusive prefix sum (the order of the serial loop, whatever the chunks)
        tree_args = (tree.rec_f, tree.rec_i, tree.root, tree.root_box, tree.tri, tree.tri_ids, tree.depth, poses,
                     origins, directions, limits)
        offsets = np.zeros(count + 1, dtype=np.int64)
        out_ray = np.empty(0, dtype=np.int64)
        out_t = np.empty(0)
        out_face = np.empty(0, dtype=np.int64)
        out_point = np.empty((0, 3))
        _parallel.run(k.raycast_tree_all, count, *tree_args, offsets, out_ray, out_t, out_face, out_point,
                      grain=RAY_ALL_GRAIN)
        np.cumsum(offsets, out=offsets)
        total = int(offsets[count])
        if total > 0:
            out_ray = np.empty(total, dtype=np.int64)
            out_t = np.empty(total)
            out_face = np.empty(total, dtype=np.int64)
            out_point = np.empty((total, 3))
            _parallel.run(k.raycast_tree_all, count, *tree_args, offsets, out_ray, out_t, out_face, out_point,
                          grain=RAY_ALL_GRAIN)
        return RayHits(out_ray, out_t, out_face, out_point)
    nodes, nodes_i, blocks, block_face, root_box, depth = tree.ray_tree()
    window = k.ray_window(count, _parallel.get_num_threads())
    # a chunk of the pool is a range of sorted windows (each >= 2048 rays: one is plenty of work)
    _parallel.run(
        k.raycast_first_many, -(-count // window),
        nodes, nodes_i, blocks, block_face, root_box, depth, poses, origins, directions, limits,
        k.MODE_ANY if mode == "any" else k.MODE_FIRST, window, out_hit, out_t, out_point, out_normal, out_face,
        grain=1,
    )
    return None


def raycast_all(mesh, pose, origins, directions, max_t=np.inf):
    """Every triangle hit by each ray: ``touche.raycast(mesh, ..., mode="all")`` (a
    :class:`RayHits`)."""
    from .shapes import Shape, as_shape

    shape = mesh if isinstance(mesh, Shape) else as_shape(mesh, "shape")
    if shape.kind != kinds.MESH:
        raise UnsupportedQuery("raycast(mode='all')", shape)
    rays = ray_arrays(pose, origins, directions, max_t)
    if rays is None:  # an empty batch
        check_empty_rays(pose, origins, directions)
        return RayHits.empty()
    poses, origin_array, direction_array, limits, _ = rays
    count = len(origin_array)
    return raycast_arrays(shape, poses, origin_array, direction_array, limits, "all", np.empty(count, dtype=np.bool_),
                          np.empty(count), np.empty((count, 3)), np.empty((count, 3)), np.empty(count, dtype=np.int64))


# ---------------------------------------------------------------------------------------------
# points


def _points_and_poses(pose, points):
    queries, single = query_points(points, "points")
    poses = as_matrices(pose, "pose").reshape(-1, 4, 4)
    if poses.shape[0] not in (1, queries.shape[0]):
        raise GeometryError(f"pose batch ({poses.shape[0]}) and points ({queries.shape[0]}) differ in length")
    return queries, poses, single


def closest_arrays(mesh, poses, queries, out_point, out_distance, out_status):
    """Validated arrays in (see query.closest_point); returns the (n,) original face indices."""
    tree = mesh_tree(mesh)
    out_face = np.empty(len(queries), dtype=np.int64)
    _parallel.run(
        _closest_kernels().closest_points_tree_many, len(queries),
        tree.links, tree.boxes, tree.child_boxes, tree.tri_vertices, tree.tri_ids, tree.depth, tree.scale, poses,
        queries, out_point, out_distance, out_status, out_face, grain=CLOSEST_GRAIN,
    )
    return out_face


def _winding(tree, poses, queries):
    start, count, edges, weight, welded, plan = tree.winding_data()
    out = np.empty(len(queries))
    _parallel.run(
        _winding_kernels().winding_tree_many, len(queries),
        tree.links, tree.boxes, tree.tri_vertices, start, count, edges, weight, welded, plan, tree.depth, poses,
        queries, out, grain=WINDING_GRAIN,
    )
    return out


def winding_number(mesh, pose, points):
    """Generalized winding number of the mesh about world ``points`` (3,) or (n, 3): the signed
    solid angle of the triangles seen from each point over 4 pi (exact up to rounding). Closed
    outward-facing mesh: 1 inside, 0 outside (k inside k nested shells); open mesh: a real
    number. Returns a float or (n,).

    ``pose``: None, a ``Pose``, ``(4, 4)``, or ``(n, 4, 4)`` with n points (one pose per point).
    Errors: ``GeometryError`` for a shape that is not a mesh, NaN / inf points or poses, or
    pose and point batches that differ in length."""
    mesh = _mesh(mesh)
    queries, poses, single = _points_and_poses(pose, points)
    out = _winding(mesh_tree(mesh), poses, queries)
    return float(out[0]) if single else out


# a fixed direction far from the axes and from simple rational directions (CAD meshes are full
# of axis-aligned faces and edges, where rays would graze more often)
_CROSSING_DIRECTION = np.array([0.5366563145999496, 0.6926629340370536, 0.4819814187283648])
_CROSSING_DIRECTION /= np.linalg.norm(_CROSSING_DIRECTION)


def _winding_closed(tree, poses, queries):
    """Winding numbers for a closed mesh: the signed crossing count of one ray per point
    (bvh_winding.crossings_many: O(log n) per point, exact when certified), and the exact
    hierarchical solid-angle sum for the points whose ray came near an edge, a vertex or the
    point itself (uncertified, incl. every point on the surface)."""
    count = len(queries)
    crossings = np.empty(count)
    certain = np.empty(count, dtype=np.bool_)
    _parallel.run(_winding_kernels().crossings_many, count, tree.rec_f, tree.rec_i, tree.root, tree.root_box, tree.tri,
                  tree.depth, poses, queries, _CROSSING_DIRECTION, crossings, certain, grain=CROSSINGS_GRAIN)
    if not certain.all():
        unsure = np.flatnonzero(~certain)
        crossings[unsure] = _winding(tree, poses if len(poses) == 1 else np.ascontiguousarray(poses[unsure]),
                                     np.ascontiguousarray(queries[unsure]))
    return crossings


def _inside_closed_any(tree, points):
    """Whether any of a few ``points`` (k, 3), in the mesh's own frame, lies in the closed mesh
    (the same answer as ``_inside(tree, identity, points, False).any()``): one crossing-count
    call; when every count is certified, a point is inside exactly when its count is not 0
    (an integer winding number: ``_inside``'s on-surface test cannot fire), else ``_inside``.
    For the solid-mesh containment test, which asks about one or a few points per pose pair and
    would otherwise pay ~10 us of numpy on one-element arrays."""
    count = len(points)
    crossings = np.empty(count)
    certain = np.empty(count, dtype=np.bool_)
    _winding_kernels().crossings_many(tree.rec_f, tree.rec_i, tree.root, tree.root_box, tree.tri, tree.depth,
                                      _IDENTITY_POSES, points, _CROSSING_DIRECTION, crossings, certain, 0, count)
    if certain.all():
        return bool((crossings != 0.0).any())
    return bool(_inside(tree, _IDENTITY_POSES, points, False).any())


_IDENTITY_POSES = np.eye(4).reshape(1, 4, 4)


def _inside(tree, poses, queries, open_ok):
    """Inside / outside of each query (module doc)."""
    _, _, closed, orientation = tree.topology()
    if closed:
        oriented = orientation * _winding_closed(tree, poses, queries)
        on_surface = np.abs(oriented - np.round(oriented)) > ON_SURFACE_GAP
        return (np.abs(oriented) >= 0.5) | on_surface
    if not open_ok:
        raise GeometryError(
            "inside/outside needs a closed mesh (every edge shared by exactly two faces with opposite "
            "orientation); this mesh is open or non-manifold. Repair it (touche.mesh), or pass open_ok=True "
            "to classify by generalized winding number >= 0.5"
        )
    return _winding(tree, poses, queries) >= 0.5


def contains(mesh, pose, points, *, open_ok=False):
    """Whether world ``points`` (3,) or (n, 3) lie in the solid bounded by a closed mesh placed
    by ``pose`` (closed set: points on the surface count). Returns a bool or (n,) bool.
    Open mesh: GeometryError, or with ``open_ok=True`` winding number >= 0.5 (module doc).

    ``pose``: None, a ``Pose``, ``(4, 4)``, or ``(n, 4, 4)`` with n points (one pose per point).
    Errors: ``GeometryError`` for an open mesh (without ``open_ok``), a shape that is not a
    mesh, NaN / inf points or poses, or pose and point batches that differ in length."""
    mesh = _mesh(mesh)
    queries, poses, single = _points_and_poses(pose, points)
    tree = mesh_tree(mesh)
    inside = _inside(tree, poses, queries, open_ok)
    return bool(inside[0]) if single else inside


def signed_distance_points(mesh, pose, points, *, open_ok=False):
    """Signed distance from world ``points`` (3,) or (n, 3) to the mesh surface: the distance
    to the closest point, negative inside (:func:`contains`; on the surface 0). Returns a float
    or (n,). Open mesh: as :func:`contains`.

    ``pose``: None, a ``Pose``, ``(4, 4)``, or ``(n, 4, 4)`` with n points (one pose per point).
    Errors: as :func:`contains`."""
    mesh = _mesh(mesh)
    queries, poses, single = _points_and_poses(pose, points)
    tree = mesh_tree(mesh)
    inside = _inside(tree, poses, queries, open_ok)
    count = len(queries)
    point = np.empty((count, 3))
    distance = np.empty(count)
    status = np.empty(count, dtype=np.int8)
    closest_arrays(mesh, poses, queries, point, distance, status)
    signed = np.where(inside, -distance, distance)
    return float(signed[0]) if single else signed


def closest_point_with_face(mesh, pose, points):
    """Closest mesh points to world ``points``: ``(point (n, 3), distance (n,), face (n,))``
    (the face index of trimesh.proximity.closest_point's third output). Single (3,) query:
    (3,), float, int."""
    mesh = _mesh(mesh)
    queries, poses, single = _points_and_poses(pose, points)
    count = len(queries)
    point = np.empty((count, 3))
    distance = np.empty(count)
    status = np.empty(count, dtype=np.int8)
    face = closest_arrays(mesh, poses, queries, point, distance, status)
    if single:
        return point[0], float(distance[0]), int(face[0])
    return point, distance, face

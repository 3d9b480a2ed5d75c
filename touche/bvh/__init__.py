"""Bounding-volume hierarchies over triangle meshes and the queries between two meshes.

    import touche as tc
    a = tc.TriangleMesh(vertices, faces)          # the tree is built on first use and kept
    tc.bvh.intersects(a, pose_a, b, pose_b)       # bool, or (n,) for (n, 4, 4) poses
    tc.bvh.collide(a, pose_a, b, pose_b)          # every intersecting triangle pair + segments
    tc.bvh.distance(a, pose_a, b, pose_b)         # distance, closest points, triangle ids

Trees (Ericson 6.2, 6.4, 6.6; Eberly S1 6): built in compiled code, top-down with a split rule
(``"sah"`` binned surface-area heuristic, the default; ``"median"`` object median on the longest
axis; ``"center"`` S1 6.2 center of the longest OBB axis with fallback to the other axes;
``"mean"`` Gottschalk's mean of the centroids along the OBB's major axis) or bottom-up
(``"bottomup"``, Ericson 6.2.2: agglomerative clustering, mutual nearest clusters by merged
box area searched in Morton order, merged until one is left), and a leaf size. Every
node stores an AABB, an OBB (continuous triangle covariance, Ericson 4.4.3), an RSS (rectangle
swept sphere) and a sphere, so the bounding volume a traversal uses is a query option (``bv``):
OBB (default for overlap), AABB, sphere or RSS; distance uses spheres then RSS bounds. A tree
built with ``kdop=k`` (6, 8, 14, 18, 26) also keeps every node's k-DOP for ``bv="kdop"``: exact
slab tests under pure translation, and under rotation (a rotated k-DOP is no k-DOP) the OBB test
plus each tree's slabs against the other's OBB. The arrays are flat and in preorder with child
offsets; a tree pickles as its arrays.

Collision system (S1 7): ``collide`` takes per-tree depth limits (negative = full depth; a node at
its limit acts as a leaf: its OBB is tested against the other side's triangles or OBB) and a
callback that receives each reported pair once (the traversal splits one tree per step, erratum
S1 L2426-2461) and may stop the search by returning False.
"""
from __future__ import annotations

import numpy as np

from .. import _parallel
from .._kernels import kernel_loader
from .._locks import Lock
from .._record import Record
from ..errors import GeometryError
from ..pose import as_matrices
from ..shapes import TriangleMesh, as_shape, register_tree_builder

SPLITS = {"median": 0, "center": 1, "mean": 2, "sah": 3, "bottomup": 4}
BOUNDING_VOLUMES = {"obb": 0, "aabb": 1, "sphere": 2, "rss": 3, "kdop": 4}
KDOPS = (6, 8, 14, 18, 26)
DEFAULT_SPLIT = "sah"
DEFAULT_LEAF_SIZE = 1
# pose pairs per chunk of the thread pool at least (touche._parallel.run): ~50 us of work or more
# (two 5k-triangle icospheres, one core: ~7 us per boolean query, ~90 us per distance query)
INTERSECTS_GRAIN = 4
DISTANCE_GRAIN = 1
COLLIDE_CHUNK = 4096  # rows per resumed traversal call when a callback may stop the search

_build = kernel_loader("bvh_build")
_volumes = kernel_loader("bvh_volumes")
_descent = kernel_loader("bvh_descent")
_overlap = kernel_loader("bvh_overlap")
_distance = kernel_loader("bvh_distance")
_coherence = kernel_loader("bvh_coherence")
_threshold = kernel_loader("bvh_threshold")


# Meshes of at least this many triangles are built on the batch threads (touche.set_num_threads):
# the top levels here, then the subtrees below them side by side (build_tree). Two threads built
# faster than one on every panel mesh measured, down to 902 triangles (~1 ms); below a few
# hundred, a build costs about what handing subtrees to a thread does.
PARALLEL_BUILD_MIN_TRIANGLES = 512


def build_tree(points, triangles, leaf_size, split, threads=None):
    """``(node_index, node_bounds, tri_vertices, tri_ids, depth)`` of the top-down build (or the
    bottom-up one), the same arrays bit for bit as one ``bvh_build.build_tree`` call. With more
    than one thread, a big mesh and one triangle per leaf, the levels above the subtrees are
    built here and the subtrees on threads (``bvh_build.build_range`` on disjoint ranges of the
    triangles), each written straight into its rows of the tree: a subtree over c triangles
    with one per leaf has 2c - 1 nodes, so every row is known before it is built."""
    build = _build()
    threads = _parallel.get_num_threads() if threads is None else int(threads)
    count = len(triangles)
    if threads < 2 or count < PARALLEL_BUILD_MIN_TRIANGLES or leaf_size != 1 or split == SPLITS["bottomup"]:
        return build.build_tree(points, triangles, leaf_size, split)
    origin, moments, tri_vertices, centroids, order = build.prepare_build(points, triangles)
    arrays = (tri_vertices, moments, centroids, order, origin, leaf_size, split, build.SAH_MIN_COUNT)
    # the levels above ~4 subtrees per thread, so that unequal halves still share out evenly
    stop_level = 1 + int(np.ceil(np.log2(4 * threads)))
    capacity = 2 ** (stop_level + 1)
    top_index = np.empty((capacity, 3), dtype=np.int64)
    top_bounds = np.empty((capacity, build.NODE_FLOATS))
    n_top, top_depth = build.build_range(*arrays, 0, count, 1, stop_level, top_index, top_bounds, 0)
    top_index, top_bounds = top_index[:n_top], top_bounds[:n_top]
    pending = np.flatnonzero(top_index[:, 2] == build.PENDING)
    sizes = np.ones(n_top, dtype=np.int64)
    sizes[pending] = 2 * top_index[pending, 1] - 1
    start = np.concatenate([[0], np.cumsum(sizes)[:-1]])  # each top row's first row in the tree
    total = int(sizes.sum())
    node_index = np.empty((total, 3), dtype=np.int64)
    node_bounds = np.empty((total, build.NODE_FLOATS))
    real = np.flatnonzero(top_index[:, 2] != build.PENDING)
    node_index[start[real], :2] = top_index[real, :2]
    right = top_index[real, 2]
    node_index[start[real], 2] = np.where(right >= 0, start[np.maximum(right, 0)], right)
    node_bounds[start[real]] = top_bounds[real]
    depths = [int(top_depth)]
    largest_first = pending[np.argsort(-top_index[pending, 1], kind="stable")]

    def build_pending(lo, hi):  # the subtrees largest_first[lo:hi], each into its own rows
        for row in largest_first[lo:hi]:
            first, size = int(top_index[row, 0]), int(top_index[row, 1])
            written, depth = build.build_range(*arrays, first, size, stop_level, build.UNLIMITED_LEVEL, node_index,
                                               node_bounds, int(start[row]))
            if written != 2 * size - 1:  # cannot happen: every split leaves both halves non-empty
                raise RuntimeError(f"a subtree of {size} triangles has {written} nodes, not {2 * size - 1}")
            depths.append(int(depth))

    _parallel.run(build_pending, len(largest_first), grain=1)
    return node_index, node_bounds, tri_vertices, order, max(depths)


class BVH:
    """A bounding-volume hierarchy over the triangles of one mesh (in the mesh's own frame).

    Attributes (read-only numpy arrays, layout in ``touche/_kernels/trees/bvh_volumes.py``):
    ``node_index (n, 3)`` int64 rows ``[first, count, right]`` (preorder, left child = next
    node, ``right == -1`` for leaves), ``node_bounds (n, 31)`` float64 (AABB, OBB, RSS, sphere
    per node), ``tri_vertices (m, 3, 3)`` triangles in tree order, ``tri_ids (m,)`` their
    indices in the mesh. ``depth``: nodes on the longest root-to-leaf path.
    """

    __slots__ = ("node_index", "node_bounds", "tri_vertices", "tri_ids", "depth", "split", "leaf_size", "max_leaf",
                 "kdop", "node_dops", "kdop_directions")

    def __init__(self, vertices, faces, *, split=DEFAULT_SPLIT, leaf_size=DEFAULT_LEAF_SIZE, kdop=None):
        if split not in SPLITS:
            raise GeometryError(f"split must be one of {sorted(SPLITS)}, got {split!r}")
        if isinstance(leaf_size, bool) or not isinstance(leaf_size, (int, np.integer)) or leaf_size < 1:
            raise GeometryError(f"leaf_size must be an integer >= 1, got {leaf_size!r}")
        if kdop is not None and (isinstance(kdop, bool) or kdop not in KDOPS):
            raise GeometryError(f"kdop must be None or one of {KDOPS}, got {kdop!r}")
        mesh = vertices if isinstance(vertices, TriangleMesh) else TriangleMesh(vertices, faces)
        _, _, points, triangles, _ = mesh._packed
        node_index, node_bounds, tri_vertices, tri_ids, depth = build_tree(points, triangles, int(leaf_size),
                                                                            SPLITS[split])
        dops = directions = None
        if kdop is not None:
            from .._kdop import KDOP_DIRECTIONS

            directions = np.ascontiguousarray(KDOP_DIRECTIONS[kdop], dtype=np.float64)
            dops = _volumes().node_kdops(node_index, tri_vertices, directions)
        self._set(node_index, node_bounds, tri_vertices, tri_ids, int(depth), split, int(leaf_size), kdop, dops,
                  directions)

    def _set(self, node_index, node_bounds, tri_vertices, tri_ids, depth, split, leaf_size, kdop=None, dops=None,
             directions=None):
        for name, value in (("node_index", node_index), ("node_bounds", node_bounds),
                            ("tri_vertices", tri_vertices), ("tri_ids", tri_ids)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "depth", depth)
        object.__setattr__(self, "split", split)
        object.__setattr__(self, "leaf_size", leaf_size)
        leaves = node_index[:, 2] < 0
        object.__setattr__(self, "max_leaf", int(node_index[leaves, 1].max()))
        object.__setattr__(self, "kdop", kdop)
        object.__setattr__(self, "node_dops", dops)
        object.__setattr__(self, "kdop_directions", directions)

    def __setattr__(self, name, value):
        raise AttributeError("BVH is immutable")

    def __reduce__(self):
        return (_restore_bvh, (self.node_index, self.node_bounds, self.tri_vertices, self.tri_ids, self.depth,
                               self.split, self.leaf_size, self.kdop, self.node_dops, self.kdop_directions))

    @property
    def node_count(self):
        return self.node_index.shape[0]

    def _arrays(self):
        return self.node_index, self.node_bounds, self.tri_vertices, self.tri_ids

    def _stack_rows(self, other):
        return 2 * (self.depth + other.depth) + 8

    def __repr__(self):
        return (f"BVH({len(self.tri_ids)} triangles, {self.node_count} nodes, depth {self.depth}, "
                f"split={self.split!r}, leaf_size={self.leaf_size})")


def _restore_bvh(node_index, node_bounds, tri_vertices, tri_ids, depth, split, leaf_size, kdop=None, dops=None,
                 directions=None):
    tree = object.__new__(BVH)
    tree._set(node_index, node_bounds, tri_vertices, tri_ids, depth, split, leaf_size, kdop, dops, directions)
    return tree


register_tree_builder(lambda mesh: BVH(mesh, None))  # TriangleMesh.bvh: the default tree


def build(mesh, *, split=DEFAULT_SPLIT, leaf_size=DEFAULT_LEAF_SIZE, kdop=None):
    """Build a new :class:`BVH` for ``mesh`` (a TriangleMesh or trimesh.Trimesh); ``kdop`` (6, 8,
    14, 18 or 26) also stores every node's k-DOP, for ``bv="kdop"`` queries."""
    mesh = _mesh(mesh, "mesh")
    return BVH(mesh, None, split=split, leaf_size=leaf_size, kdop=kdop)


def tree_of(mesh):
    """The mesh's default tree (built on first use, then kept on the mesh object)."""
    mesh = _mesh(mesh, "mesh")
    return mesh.bvh


def _mesh(value, name):
    shape = value if isinstance(value, TriangleMesh) else as_shape(value, name)
    if not isinstance(shape, TriangleMesh):
        raise GeometryError(f"{name} must be a TriangleMesh (or trimesh.Trimesh), got {type(shape).__name__}")
    return shape


def _tree(value, name):
    if type(value) is TriangleMesh:  # the usual case, answered without the checks (per-call cost)
        tree = value._bvh
        return tree if tree is not None else value.bvh
    if isinstance(value, BVH):
        return value
    return tree_of(value)


def _poses(pose_a, pose_b):
    return _batched(as_matrices(pose_a, "pose_a"), as_matrices(pose_b, "pose_b"))


def _batched(ta, tb):
    """(pa (1 or n, 4, 4), pb, n, single) of two checked pose matrices ((4, 4) or (n, 4, 4))."""
    single = ta.ndim == 2 and tb.ndim == 2
    pa = np.ascontiguousarray(ta.reshape(-1, 4, 4))
    pb = np.ascontiguousarray(tb.reshape(-1, 4, 4))
    if len(pa) != len(pb) and len(pa) != 1 and len(pb) != 1:
        raise GeometryError(f"pose batches differ in length: pose_a has {len(pa)}, pose_b has {len(pb)}")
    return pa, pb, max(len(pa), len(pb)), single


def _bv_code(bv):
    if bv not in BOUNDING_VOLUMES:
        raise GeometryError(f"bv must be one of {sorted(BOUNDING_VOLUMES)}, got {bv!r}")
    return BOUNDING_VOLUMES[bv]


def _kdop_directions(ta, tb):
    if ta.kdop is None or tb.kdop is None or ta.kdop != tb.kdop:
        raise GeometryError(f"bv='kdop' needs two trees built with the same kdop= (got {ta.kdop} and {tb.kdop}); "
                            "build them with touche.bvh.build(mesh, kdop=18)")
    return ta.kdop_directions


def intersects(a, pose_a, b, pose_b, *, bv="obb"):
    """Whether the surfaces of meshes (or trees) ``a`` and ``b`` touch or cross (closed
    triangles). Poses (4, 4) or (n, 4, 4) (broadcast). Returns a bool, or a (n,) bool array."""
    ta = a if type(a) is BVH else _tree(a, "a")
    tb = b if type(b) is BVH else _tree(b, "b")
    if bv == "obb":  # one pose each: the short kernel entry (it checks the poses itself)
        ma = as_matrices(pose_a, "pose_a", check=False)
        mb = as_matrices(pose_b, "pose_b", check=False)
        if ma.ndim == 2 and mb.ndim == 2:
            code = _overlap().tree_intersects_pair(ta.node_index, ta.node_bounds, ta.tri_vertices, ma, tb.node_index,
                                                 tb.node_bounds, tb.tri_vertices, mb, ta.depth + tb.depth + 2)
            if code < 0:
                _refuse_poses(pose_a, pose_b)
            return code == 1
        # as_matrices checked a batch; a single pose beside one is checked here (each once)
        pa, pb, n, single = _batched(ma if ma.ndim == 3 else as_matrices(pose_a, "pose_a"),
                                     mb if mb.ndim == 3 else as_matrices(pose_b, "pose_b"))
    else:
        pa, pb, n, single = _poses(pose_a, pose_b)
    return _intersects_many(ta, tb, pa, pb, n, single, bv)


def _intersects_many(ta, tb, pa, pb, n, single, bv="obb"):
    """intersects of trees ``ta``, ``tb`` at checked poses (see _batched)."""
    hit = np.empty(n, dtype=np.bool_)
    ids = np.empty((n, 2), dtype=np.int64)
    if bv == "kdop":
        directions = _kdop_directions(ta, tb)
        _parallel.run(_overlap().tree_intersects_kdop_many, n, *ta._arrays(), ta.node_dops, pa, *tb._arrays(),
                      tb.node_dops, pb, directions, ta._stack_rows(tb), max(ta.max_leaf, tb.max_leaf), hit, ids,
                      grain=INTERSECTS_GRAIN)
        return bool(hit[0]) if single else hit
    if n == 1:  # no thread-pool dispatch for one query
        _overlap().tree_intersects_one(*ta._arrays(), pa[0], *tb._arrays(), pb[0], _bv_code(bv), ta._stack_rows(tb),
                                     max(ta.max_leaf, tb.max_leaf), hit, ids)
        return bool(hit[0]) if single else hit
    _parallel.run(_overlap().tree_intersects_many, n, *ta._arrays(), pa, *tb._arrays(), pb, _bv_code(bv),
                  ta._stack_rows(tb), max(ta.max_leaf, tb.max_leaf), hit, ids, grain=INTERSECTS_GRAIN)
    return bool(hit[0]) if single else hit


class MeshDistance(Record):
    """Result of :func:`distance`: ``distance`` (0 when the surfaces touch or cross), closest
    points ``point_a``, ``point_b`` (world frame) and the triangle ids ``triangle_a``,
    ``triangle_b`` of the closest pair (for crossing surfaces: one crossing pair and a common
    point). Scalars / (3,) for one pose pair; (n,), (n, 3) and (n,) for a batch."""

    __slots__ = ("distance", "point_a", "point_b", "triangle_a", "triangle_b")

    def __repr__(self):
        return f"MeshDistance(distance={self.distance!r}, triangle_a={self.triangle_a!r}, triangle_b={self.triangle_b!r})"


def distance(a, pose_a, b, pose_b):
    """Smallest distance between the surfaces of meshes ``a`` and ``b`` with the closest points
    and triangle ids (branch and bound over both trees; exact up to rounding). Poses (4, 4) or
    (n, 4, 4) (broadcast); a batch runs on all cores. Returns :class:`MeshDistance`."""
    pair = _distance_pair(a, pose_a, b, pose_b)
    if pair is not None:
        _, id_a, id_b, out, _, _ = pair
        return MeshDistance(float(out[0]), out[1:4], out[4:7], int(id_a), int(id_b))
    dist, point_a, point_b, ids, _, _, single = _distance_arrays(a, pose_a, b, pose_b)
    return MeshDistance(dist, point_a, point_b, ids[:, 0], ids[:, 1])


def _distance_pair(a, pose_a, b, pose_b, scale_a=0.0, scale_b=0.0):
    """One pose pair in one compiled call (bvh_distance.tree_distance_pair_into; it checks the
    poses): ``(code, triangle id of a, of b, out (10,), pose matrix a, b)``, the same numbers as
    _distance_arrays for a batch of one; None when a pose is a batch. ``scale_a`` / ``scale_b``:
    the meshes' sizes for the TOUCHING band of the code."""
    ma = as_matrices(pose_a, "pose_a", check=False)
    mb = as_matrices(pose_b, "pose_b", check=False)
    if ma.ndim != 2 or mb.ndim != 2:
        return None
    pair = distance_pair_raw(_tree(a, "a"), ma, _tree(b, "b"), mb, scale_a, scale_b)
    if pair is None:
        _refuse_poses(pose_a, pose_b)
    return pair


def distance_pair_raw(ta, ma, tb, mb, scale_a, scale_b):
    """_distance_pair on trees and raw (4, 4) pose arrays (the kernel checks them): the same
    tuple, or None when a pose is not a rigid transform (touche.query's single-pair plans call
    it with the caller's arrays; an array type the kernel was not compiled for raises
    touche._kernels.NonCanonicalArguments)."""
    out = np.empty(10)
    code, id_a, id_b = _distance().tree_distance_pair_into(
        ta.node_index, ta.node_bounds, ta.tri_vertices, ta.tri_ids, ma, tb.node_index, tb.node_bounds,
        tb.tri_vertices, tb.tri_ids, mb, 2 * (ta.depth + tb.depth) + 8, max(ta.max_leaf, tb.max_leaf), scale_a, scale_b,
        out)
    if code < 0:
        return None
    return code, id_a, id_b, out, ma, mb


def _refuse_poses(pose_a, pose_b):
    """A kernel found a raw pose that is not a rigid transform: the full validation names the
    argument (it always raises for such a pose)."""
    as_matrices(pose_a, "pose_a")
    as_matrices(pose_b, "pose_b")
    raise GeometryError("pose_a or pose_b is not a rigid transform")  # pragma: no cover


def _distance_arrays(a, pose_a, b, pose_b):
    """distance's raw outputs: ``(dist (n,), point_a (n, 3), point_b (n, 3), ids (n, 2), poses_a
    (n|1, 4, 4), poses_b (n|1, 4, 4), single)`` (touche.distance builds its result from these)."""
    ta = _tree(a, "a")
    tb = _tree(b, "b")
    pa, pb, n, single = _poses(pose_a, pose_b)
    dist = np.empty(n)
    point_a = np.empty((n, 3))
    point_b = np.empty((n, 3))
    ids = np.empty((n, 2), dtype=np.int64)
    args = (*ta._arrays(), pa, *tb._arrays(), pb, ta._stack_rows(tb), max(ta.max_leaf, tb.max_leaf), dist, point_a,
            point_b, ids)
    if n == 1:
        _distance().tree_distance_one(*args)
    else:
        _parallel.run(_distance().tree_distance_many, n, *args, grain=DISTANCE_GRAIN)
    return dist, point_a, point_b, ids, pa, pb, single


FRONT_CAPACITY = 1 << 16  # node pairs a CoherentPair front may hold


class CoherentPair:
    """Queries between two meshes (or trees) over a sequence of slowly changing poses, reusing
    the previous query's work (Ericson 6.7, temporal coherence):

    - ``intersects``: the triangle pair that overlapped last time (witness), then its two
      leaves, are tested first; otherwise the search starts from the FRONT of the last complete
      traversal (the node pairs found disjoint and the leaf pairs tested: a partition of all
      triangle pairs valid at any pose) instead of from the root, so only pairs whose status
      changed are searched below (a root search with a quarter of the front as budget comes first:
      a front left deep by a close approach is dropped once the meshes are apart again).
    - ``distance``: the previous closest triangle pair's current distance is the initial upper
      bound of the branch and bound (a witness at distance 0 answers at once).

    Answers are those of :func:`intersects` / :func:`distance` (same booleans; distances equal up
    to rounding, the reported pair may differ among equally close ones); only the cost changes:
    benchmarks/bench_coherence.py. One pose pair per call ((4, 4) each). Safe from several threads
    (a lock makes calls on one pair take turns: its witnesses and front are one state), but the
    point is coherence between successive poses: give each thread its own pair.

        pair = tc.bvh.CoherentPair(mesh_a, mesh_b)
        for pose in trajectory:
            hit = pair.intersects(None, pose)
    """

    def __init__(self, a, b):
        self.tree_a = a if type(a) is BVH else _tree(a, "a")
        self.tree_b = b if type(b) is BVH else _tree(b, "b")
        self._rows = self.tree_a.depth + self.tree_b.depth + 2
        self._fronts = np.empty((2, FRONT_CAPACITY, 2), dtype=np.int64)
        self._lock = Lock()
        self.reset()

    def reset(self):
        """Forget the witnesses and the front (the next queries start from scratch)."""
        with self._lock:
            self._overlap_witness = np.full(4, -1, dtype=np.int64)
            self._distance_witness = np.full(2, -1, dtype=np.int64)
            self._state = np.array([-1, 0, 0], dtype=np.int64)

    @property
    def front_size(self):
        """Node pairs in the current front (0 before the first complete traversal)."""
        return max(int(self._state[0]), 0)

    def _matrices(self, pose_a, pose_b):
        ma = as_matrices(pose_a, "pose_a", check=False)
        mb = as_matrices(pose_b, "pose_b", check=False)
        if ma.ndim != 2 or mb.ndim != 2:
            raise GeometryError("CoherentPair queries take one (4, 4) pose per mesh")
        return ma, mb

    _raise = staticmethod(_refuse_poses)

    def intersects(self, pose_a, pose_b):
        """As :func:`intersects` (OBB trees) for one pose pair; a bool."""
        ma, mb = self._matrices(pose_a, pose_b)
        ta, tb = self.tree_a, self.tree_b
        with self._lock:
            code = _coherence().tree_overlap_tracked(ta.node_index, ta.node_bounds, ta.tri_vertices, tb.node_index,
                                                 tb.node_bounds, tb.tri_vertices, ma, mb, self._overlap_witness,
                                                 self._fronts, self._state, self._rows)
        if code < 0:
            self._raise(pose_a, pose_b)
        return code == 1

    def distance(self, pose_a, pose_b):
        """As :func:`distance` for one pose pair; a :class:`MeshDistance`."""
        ma, mb = self._matrices(pose_a, pose_b)
        ta, tb = self.tree_a, self.tree_b
        out = np.empty(9)
        with self._lock:
            code = _coherence().tree_distance_tracked(*ta._arrays(), *tb._arrays(), ma, mb, self._distance_witness,
                                                  2 * self._rows + 8, out)
        if code < 0:
            self._raise(pose_a, pose_b)
        return MeshDistance(float(out[0]), out[1:4].copy(), out[4:7].copy(), int(out[7]), int(out[8]))

    def __repr__(self):
        return f"CoherentPair({self.tree_a!r}, {self.tree_b!r}, front {self.front_size})"


class Collision(Record):
    """One reported pair of :func:`collide` (what a callback receives).

    ``item_a``, ``item_b``: triangle ids, or node ids when that side stopped at its depth limit
    (``a_is_node`` / ``b_is_node``). ``point``: a point of the contact in the world frame (the
    midpoint of the triangles' intersection segment; for a node, of the OBB centers).
    ``normal_a``, ``normal_b``: unit world normals (a triangle's face normal, or for a node the
    OBB normal taken as that of the box's inscribed ellipsoid at ``point``, as in S1 7.2).
    """

    __slots__ = ("item_a", "item_b", "a_is_node", "b_is_node", "point", "normal_a", "normal_b")

    def __repr__(self):
        kind_a = "node" if self.a_is_node else "triangle"
        kind_b = "node" if self.b_is_node else "triangle"
        return f"Collision({kind_a} {self.item_a}, {kind_b} {self.item_b}, point={self.point})"


class CollisionResult(Record):
    """Result of :func:`collide`: ``pairs (k, 2)`` int64 (triangle ids, or node ids where
    ``node_pairs (k, 2)`` bool says so), ``segments (k, 2, 3)`` the world-frame intersection
    segment of each triangle pair (both ends equal for a point contact; for a coplanar overlap the
    longest chord of the overlap polygon; NaN for node pairs), ``complete`` (False when a callback
    stopped the search or ``max_pairs`` was reached)."""

    __slots__ = ("pairs", "node_pairs", "segments", "complete")

    def __len__(self):
        return len(self.pairs)

    def __repr__(self):
        return f"CollisionResult({len(self.pairs)} pairs, complete={self.complete})"


def collide(a, pose_a, b, pose_b, *, bv="obb", depth_a=-1, depth_b=-1, max_pairs=None, callback=None):
    """Every pair of intersecting triangles of meshes ``a`` and ``b`` (one pose pair), each
    reported once, with its intersection segment.

    ``depth_a`` / ``depth_b``: S1 7.1 depth limits (negative = full depth; root = depth 0).
    ``callback(Collision) -> bool``: called for each pair in traversal order; returning False
    stops the search (S1 7.2's continue flag). ``max_pairs``: stop after that many pairs.
    Returns :class:`CollisionResult`.
    """
    ta = _tree(a, "a")
    tb = _tree(b, "b")
    pa, pb, n, single = _poses(pose_a, pose_b)
    if not single:
        raise GeometryError("collide takes one pose per mesh; use intersects for batches")
    for name, limit in (("depth_a", depth_a), ("depth_b", depth_b)):
        if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)):
            raise GeometryError(f"{name} must be an integer (negative = full depth), got {limit!r}")
    if max_pairs is not None and (isinstance(max_pairs, bool) or not isinstance(max_pairs, (int, np.integer))
                                  or max_pairs < 1):
        raise GeometryError(f"max_pairs must be a positive integer or None, got {max_pairs!r}")
    if callback is not None and not callable(callback):
        raise GeometryError("callback must be callable")
    rot = np.empty((3, 3))
    trans = np.empty(3)
    _descent().relative_rotation_translation(pa[0], pb[0], rot, trans)
    leaf = max(ta.max_leaf, tb.max_leaf)
    stack = np.zeros((ta._stack_rows(tb), 4), dtype=np.int64)
    chunk = COLLIDE_CHUNK if callback is not None else 1 << 16
    if max_pairs is not None:
        chunk = min(chunk, int(max_pairs))
    out = np.empty((chunk + leaf * leaf + 2 * leaf, 4), dtype=np.int64)
    rows = []
    top = 1
    total = 0
    stopped = False
    code = _bv_code(bv)
    if bv == "kdop":
        directions = _kdop_directions(ta, tb)
        dops_a, dops_b = ta.node_dops, tb.node_dops
    else:
        directions = dops_a = dops_b = np.zeros((0, 0))
    while top > 0 and not stopped:
        top, count = _overlap().tree_collide_with(*ta._arrays(), *tb._arrays(), rot, trans, code, dops_a, dops_b,
                                                  directions, int(depth_a), int(depth_b), stack, top, out, chunk)
        block = out[:count].copy()
        if max_pairs is not None and total + len(block) >= max_pairs:
            block = block[:max_pairs - total]
            stopped = True
        if callback is not None and len(block):
            for k in range(len(block)):
                contact = _contact(ta, tb, pa[0], pb[0], rot, trans, block[k])
                if callback(contact) is False:
                    block = block[:k + 1]
                    stopped = True
                    break
        rows.append(block)
        total += len(block)
    table = np.concatenate(rows) if rows else np.empty((0, 4), dtype=np.int64)
    pairs = np.ascontiguousarray(table[:, :2])
    node_pairs = table[:, 2:4].astype(bool)
    segments = _segments(ta, tb, pa[0], pb[0], rot, trans, table)
    return CollisionResult(pairs, node_pairs, segments, complete=not stopped and top == 0)


def _triangle_world(tree, triangle_id, pose):
    # tree order position of an original triangle id (trees keep the inverse permutation cheap)
    position = _positions(tree)[triangle_id]
    corners = tree.tri_vertices[position]
    return corners @ pose[:3, :3].T + pose[:3, 3]


_POSITION_CACHE = {}


def _positions(tree):
    key = id(tree)
    cached = _POSITION_CACHE.get(key)
    if cached is None or cached[0] is not tree:
        inverse = np.empty_like(tree.tri_ids)
        inverse[tree.tri_ids] = np.arange(len(tree.tri_ids))
        if len(_POSITION_CACHE) > 64:
            _POSITION_CACHE.clear()
        _POSITION_CACHE[key] = cached = (tree, inverse)
    return cached[1]


def _segments(ta, tb, pose_a, pose_b, rot, trans, table):
    count = len(table)
    segments = np.full((count, 2, 3), np.nan)
    triangle_rows = np.flatnonzero((table[:, 2] == 0) & (table[:, 3] == 0))
    if len(triangle_rows) == 0:
        return segments
    from .._kernels import sat_fast

    tri_a = ta.tri_vertices[_positions(ta)[table[triangle_rows, 0]]]
    tri_b = tb.tri_vertices[_positions(tb)[table[triangle_rows, 1]]]
    world_a = np.ascontiguousarray(tri_a @ pose_a[:3, :3].T + pose_a[:3, 3])
    world_b = np.ascontiguousarray(tri_b @ pose_b[:3, :3].T + pose_b[:3, 3])
    kind = np.empty(len(triangle_rows), dtype=np.int64)
    number = np.empty(len(triangle_rows), dtype=np.int64)
    points = np.empty((len(triangle_rows), 6, 3))
    _parallel.run(sat_fast.triangle_triangle_intersection_many, len(triangle_rows), world_a, world_b, kind, number,
                  points, grain=512)
    for row, k in enumerate(triangle_rows):
        m = number[row]
        if m <= 0:
            continue
        segments[k] = longest_chord(points[row, :m])
    return segments


def longest_chord(points):
    """The two points (2, 3) of ``points`` (m >= 1, 3) farthest apart (a lone point twice): the
    segment that stands for an intersection set of triangles."""
    if len(points) == 1:
        return points[[0, 0]]
    gaps = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=2)
    i, j = np.unravel_index(np.argmax(gaps), gaps.shape)
    return points[[i, j]]


def _unit(vector):
    length = np.linalg.norm(vector)
    return vector / length if length > 0 else np.full(3, np.nan)


def _node_obb_world(tree, node, pose):
    row = tree.node_bounds[node]
    center = pose[:3, :3] @ row[6:9] + pose[:3, 3]
    axes = row[9:18].reshape(3, 3) @ pose[:3, :3].T
    return center, axes, row[18:21]


def _ellipsoid_normal(center, axes, half, point):
    local = axes @ (point - center)
    gradient = axes.T @ (local / np.maximum(half, 1e-300) ** 2)
    return _unit(gradient)


def _contact(ta, tb, pose_a, pose_b, rot, trans, row):
    item_a, item_b, node_a, node_b = (int(x) for x in row)
    if node_a:
        center_a, axes_a, half_a = _node_obb_world(ta, item_a, pose_a)
    else:
        corners_a = _triangle_world(ta, item_a, pose_a)
    if node_b:
        center_b, axes_b, half_b = _node_obb_world(tb, item_b, pose_b)
    else:
        corners_b = _triangle_world(tb, item_b, pose_b)
    if not node_a and not node_b:
        segment = _segments(ta, tb, pose_a, pose_b, rot, trans, np.array([row]))[0]
        point = 0.5 * (segment[0] + segment[1])
    else:
        point_a = center_a if node_a else corners_a.mean(axis=0)
        point_b = center_b if node_b else corners_b.mean(axis=0)
        point = 0.5 * (point_a + point_b)
    if node_a:
        normal_a = _ellipsoid_normal(center_a, axes_a, half_a, point)
    else:
        normal_a = _unit(np.cross(corners_a[1] - corners_a[0], corners_a[2] - corners_a[0]))
    if node_b:
        normal_b = _ellipsoid_normal(center_b, axes_b, half_b, point)
    else:
        normal_b = _unit(np.cross(corners_b[1] - corners_b[0], corners_b[2] - corners_b[0]))
    return Collision(item_a, item_b, bool(node_a), bool(node_b), point, normal_a, normal_b)


__all__ = ["BVH", "CoherentPair", "Collision", "CollisionResult", "MeshDistance", "build", "collide", "distance",
           "intersects",
           "tree_of", "SPLITS", "BOUNDING_VOLUMES"]

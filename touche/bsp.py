"""BSP trees (Ericson, Real-Time Collision Detection, chapter 8).

    import touche as tc
    solid = tc.bsp.SolidBSP.from_mesh(mesh)            # closed mesh -> solid-leaf tree
    solid.contains(points)                              # (n,) bool, points on the surface count
    hit = solid.raycast(origins, directions, max_t)     # first entry into the solid: t, normal
    solid.sphere_intersects(centers, radii)             # (n,) bool
    solid.polytope_intersects(tc.Box([1, 1, 1]), poses) # (n,) bool, any convex polytope shape

    soup = tc.bsp.NodeBSP.from_mesh(mesh)               # node-storing (autopartitioned) tree
    soup.raycast(origins, directions)                   # first polygon hit: t, source triangle
    soup.locate(points)                                 # the convex cell (leaf) of each point
    tc.bsp.LeafBSP.from_mesh(mesh, leaf_size=8)         # leaf-storing tree, same queries

Three kinds of tree (8.2): a **node-storing** tree keeps the polygons coplanar with each dividing
plane at its node; a **leaf-storing** tree keeps them in its leaves (it stops splitting at
``leaf_size`` polygons or ``max_depth``); a **solid-leaf** tree is a node-storing tree of a
closed mesh whose leaves are labelled solid or empty: it represents the volume, so point, ray
and volume queries answer "inside the solid", not "on the surface".

Building (8.3): autopartitioning (dividing planes through input triangles), candidate planes
drawn at random (``seed``) when a node holds more than ``max_candidates`` polygons, plus with
``axis_cuts=True`` (default) three general cuts per node, one per axis through the polygons'
median (8.3.1: autopartitioning alone gives a convex mesh a tree as deep as its face count,
so a point query costs O(n); the general cuts bring that to O(log n)), all scored by ``split_weight * splits + (1 - split_weight) * |front - behind|`` (lowest
wins: ``split_weight`` near 1 favours few splits, near 0 balance). Polygons are classified
against THICK planes and split by the nine rules of the book's Table 8.2, every cut edge taken
from its front to its back endpoint so that neighbours share the split vertex bit for bit
(8.3.5: no cracks). The pieces are convex polygons: ``fragments()`` returns them flat.

Plane thickness (``eps``, the same for every tree of a mesh): ``PLANE_THICKNESS`` (1e-9) times
the mesh's size (the longest side of its bounding box), in a frame centred on that box.
Why that value: the tree works in coordinates of the size L of the mesh (its box centre is the
origin, so a mesh far from the world origin loses nothing), where a computed distance to a plane
is off by a few ulps of L (~1e-15 L), a split vertex by as much per cut, and a point of a face
coplanar with another face, measured against that face's plane (its normal computed from a
triangle of size h), by about 1e-16 L * L / h. 1e-9 L is a millionfold above the first two and
leaves room for triangles down to h ~ 1e-5 L; below 1e-9 L the tree cannot tell features apart
(such points count as on the plane). Queries that traverse intervals or volumes use twice the
build thickness (8.4.2: the query's epsilon must exceed the construction's, so that fragments
lying up to eps off their cell are still reached).

Boundary convention (solid trees, 8.4.1): points on the surface are inside (closed set, as
everywhere in touche) and points OUTSIDE within eps of the surface may be reported inside too
("boundary band", ~1e-9 of the mesh size). A point descends by the exact side of each plane,
and one that came within eps of a plane on the way (maybe on the surface) and reached an empty
leaf is inside iff a boundary fragment lies within eps (touche/_kernels/trees/bsp_query.py ``_inside``: the
book's "within eps: go back" rule misclassifies points near thin cells between nearly parallel
planes, as far as eps / angle from them). ``raycast`` reports t = 0 for a ray starting inside or on the surface,
and a ray grazing a face or running along it touches the solid (hit). Sphere and polytope
queries count touching as meeting.

Volume queries (8.4.3): the dividing planes are pushed by the query's extent (the radius; the
polytope's support along the plane normal) to decide which subtrees the volume reaches, and the
fragments stored at the nodes it straddles are tested exactly (instead of the book's bevel
planes, which need each leaf's polytope): the answer is exact, not conservative.

Queries take points in the mesh's frame (apply the inverse of the mesh's pose first).
"""
from __future__ import annotations

import numpy as np

from . import _parallel
from ._queryargs import query_points
from .errors import GeometryError

PLANE_THICKNESS = 1e-9  # relative to the mesh's size (module doc: why)
QUERY_THICKNESS_FACTOR = 2.0  # query epsilon / build epsilon (8.4.2)
DEFAULT_MAX_CANDIDATES = 8
DEFAULT_SPLIT_WEIGHT = 0.8  # the book's K
DEFAULT_LEAF_SIZE = 8
DEFAULT_MAX_DEPTH = 64
POINT_GRAIN = 1024
RAY_GRAIN = 128
VOLUME_GRAIN = 64

_KERNELS = None


def _kernels():
    global _KERNELS
    if _KERNELS is None:
        from ._kernels import bsp_query

        _KERNELS = bsp_query
    return _KERNELS


def _build_kernels():
    from ._kernels import bsp_build

    return bsp_build

class BSPRayHits:
    """First hits of a batch of rays: ``hit (n,) bool``, ``t (n,)`` (inf where no hit; in units
    of the given direction vectors), ``point (n, 3)`` (NaN where no hit), and per tree type
    ``normal (n, 3)`` (solid trees: the unit normal of the entered face, facing the ray; zeros
    when the ray starts inside) or ``face (n,)`` (surface trees: index of the input triangle,
    -1 where no hit)."""

    __slots__ = ("hit", "t", "point", "normal", "face")

    def __init__(self, t, origins, directions, normal=None, face=None):
        self.hit = np.isfinite(t)
        self.t = t
        with np.errstate(invalid="ignore"):
            self.point = np.where(self.hit[:, None], origins + t[:, None] * directions, np.nan)
        self.normal = normal
        self.face = face

    def __len__(self):
        return len(self.t)

    def __repr__(self):
        return f"BSPRayHits({int(self.hit.sum())} of {len(self.t)} rays hit)"


def _mesh_arrays(mesh):
    """(vertices (n, 3) float64, faces (m, 3) int64) of a TriangleMesh / trimesh / tuple."""
    from .shapes import Shape, TriangleMesh, as_shape

    if isinstance(mesh, tuple) and len(mesh) == 2:
        mesh = TriangleMesh(*mesh)
    shape = mesh if isinstance(mesh, Shape) else as_shape(mesh, "mesh")
    if not isinstance(shape, TriangleMesh):
        raise GeometryError(f"mesh must be a TriangleMesh (or trimesh.Trimesh), got {type(shape).__name__}")
    return shape, shape._packed[2], shape._packed[3]


def _int_option(value, name, low):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise GeometryError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _points(points, name):
    return query_points(points, name)


class _BSPTree:
    """Arrays of one built tree (touche/_kernels/trees/bsp_build.py module doc) and the common queries."""

    MODE = 0
    __slots__ = ("node_planes", "node_children", "node_fragments", "leaf_solid", "leaf_fragments",
                 "fragment_vertices", "fragment_offsets", "fragment_planes", "fragment_source", "root", "depth",
                 "center", "eps", "num_triangles", "__weakref__")

    def __init__(self, vertices, faces, *, max_candidates, split_weight, seed, axis_cuts, leaf_size=0, max_depth=0):
        _, vertices, faces = _mesh_arrays((vertices, faces))  # validated float64 / int64 (TriangleMesh's checks)
        max_candidates = _int_option(max_candidates, "max_candidates", 1)
        seed = _int_option(seed, "seed", 0)
        try:
            split_weight = float(split_weight)
        except (TypeError, ValueError):
            raise GeometryError(f"split_weight must be a number in [0, 1], got {split_weight!r}") from None
        if not 0.0 <= split_weight <= 1.0:
            raise GeometryError(f"split_weight must be in [0, 1], got {split_weight!r}")
        low = vertices.min(axis=0)
        high = vertices.max(axis=0)
        center = np.ascontiguousarray(0.5 * (low + high))
        size = float((high - low).max())
        if not size > 0.0:
            raise GeometryError("the mesh has no extent (all vertices coincide)")
        local = np.ascontiguousarray(vertices - center)
        self.eps = PLANE_THICKNESS * size
        self.center = center
        self.num_triangles = len(faces)
        out = _build_kernels().build_tree(local, faces, self.MODE, max_candidates, split_weight, seed, leaf_size,
                                    max_depth, 1 if axis_cuts else 0, self.eps)
        (self.node_planes, self.node_children, self.node_fragments, self.leaf_solid, self.leaf_fragments,
         self.fragment_vertices, self.fragment_offsets, self.fragment_planes, self.fragment_source) = out[:9]
        self.root = int(out[9])
        self.depth = int(out[10])
        if len(self.fragment_source) == 0:
            raise GeometryError("the mesh has no triangle of non-zero area")

    @classmethod
    def from_mesh(cls, mesh, **options):
        """Build from a TriangleMesh, a trimesh.Trimesh or ``(vertices, faces)``; options as
        the class doc."""
        _, vertices, faces = _mesh_arrays(mesh)
        return cls(vertices, faces, **options)

    # ---- inspection
    @property
    def num_nodes(self):
        return len(self.node_planes)

    @property
    def num_leaves(self):
        return len(self.leaf_solid)

    def fragments(self):
        """The stored convex polygons in WORLD (mesh) coordinates: ``(vertices (v, 3), offsets
        (f + 1,), source (f,))``; polygon f is ``vertices[offsets[f]:offsets[f + 1]]``, cut
        from input triangle ``source[f]``."""
        return self.fragment_vertices + self.center, self.fragment_offsets.copy(), self.fragment_source.copy()

    def __repr__(self):
        return (f"{type(self).__name__}({self.num_triangles} triangles -> {len(self.fragment_source)} fragments, "
                f"{self.num_nodes} nodes, {self.num_leaves} leaves, depth {self.depth})")

    # ---- queries
    def locate(self, points):
        """Index of the leaf (convex cell) holding each point (3,) or (n, 3): int or (n,) int64.
        A point within eps of a dividing plane goes to its back side."""
        queries, single = _points(points, "points")
        out = np.empty(len(queries), dtype=np.int64)
        _parallel.run(_kernels().locate_many, len(queries), self.node_planes, self.node_children, self.root,
                      self.eps, self.center, queries, out, grain=POINT_GRAIN)
        return int(out[0]) if single else out

    def _rays(self, origins, directions, max_t):
        origins, single = query_points(origins, "origins")
        directions, _ = query_points(directions, "directions", coordinates=False)
        if len(directions) == 1 and len(origins) > 1:
            directions = np.ascontiguousarray(np.broadcast_to(directions, origins.shape))
        if len(directions) != len(origins):
            raise GeometryError(f"origins ({len(origins)}) and directions ({len(directions)}) differ in length")
        if not (np.abs(directions).max(axis=1) > 0.0).all():
            raise GeometryError("directions contains a zero vector")
        try:
            limits = np.array(np.broadcast_to(np.asarray(max_t, dtype=np.float64), (len(origins),)))
        except (TypeError, ValueError):
            raise GeometryError(f"max_t must be a number or (n,) numbers, got {np.shape(max_t)}") from None
        if np.isnan(limits).any() or (limits < 0.0).any():
            raise GeometryError("max_t must be >= 0 (inf allowed), not NaN")
        return origins, directions, np.ascontiguousarray(limits), single


class NodeBSP(_BSPTree):
    """Node-storing BSP tree of a polygon soup (Ericson 8.2.1): autopartitioned, the polygons
    coplanar with each dividing plane stored at its node, empty leaves.

    ``NodeBSP.from_mesh(mesh, *, max_candidates=8, split_weight=0.8, seed=0)``; any triangle
    soup (open, self-intersecting) works; zero-area triangles are left out."""

    MODE = 0
    __slots__ = ()

    def __init__(self, vertices, faces, *, max_candidates=DEFAULT_MAX_CANDIDATES,
                 split_weight=DEFAULT_SPLIT_WEIGHT, seed=0, axis_cuts=True):
        super().__init__(vertices, faces, max_candidates=max_candidates, split_weight=split_weight, seed=seed,
                         axis_cuts=axis_cuts)

    def raycast(self, origins, directions, max_t=np.inf):
        """First polygon hit by each ray ``origin + t * direction``, t in [0, max_t]: a
        :class:`BSPRayHits` with ``face`` (the input triangle's index). Rays (3,) or (n, 3);
        one direction may serve every origin; ``max_t`` a number or (n,)."""
        origins, directions, limits, _ = self._rays(origins, directions, max_t)
        count = len(origins)
        out_t = np.empty(count)
        out_face = np.empty(count, dtype=np.int64)
        _parallel.run(_kernels().raycast_surface_many, count, self.node_planes, self.node_children,
                      self.node_fragments, self.leaf_fragments, self.root, self.depth,
                      QUERY_THICKNESS_FACTOR * self.eps, self.center, self.fragment_vertices, self.fragment_offsets,
                      self.fragment_planes, self.fragment_source, origins, directions, limits, out_t, out_face,
                      grain=RAY_GRAIN)
        return BSPRayHits(out_t, origins, directions, face=out_face)


class LeafBSP(NodeBSP):
    """Leaf-storing BSP tree of a polygon soup (Ericson 8.2.2): autopartitioned dividing planes,
    every polygon (cut to its cell) stored in a leaf; splitting stops at ``leaf_size`` polygons,
    at ``max_depth``, or when no plane of the polygons divides them (a convex piece).

    ``LeafBSP.from_mesh(mesh, *, leaf_size=8, max_depth=64, max_candidates=8,
    split_weight=0.8, seed=0)``. ``leaf_polygons(leaf)``: the fragment indices of a leaf."""

    MODE = 1
    __slots__ = ()

    def __init__(self, vertices, faces, *, leaf_size=DEFAULT_LEAF_SIZE, max_depth=DEFAULT_MAX_DEPTH,
                 max_candidates=DEFAULT_MAX_CANDIDATES, split_weight=DEFAULT_SPLIT_WEIGHT, seed=0, axis_cuts=True):
        _BSPTree.__init__(self, vertices, faces, max_candidates=max_candidates, split_weight=split_weight, seed=seed,
                          axis_cuts=axis_cuts,
                          leaf_size=_int_option(leaf_size, "leaf_size", 1),
                          max_depth=_int_option(max_depth, "max_depth", 0))

    def leaf_polygons(self, leaf):
        """Indices (into ``fragments()``) of the polygons stored in leaf ``leaf``."""
        start, count = self.leaf_fragments[int(leaf)]
        return np.arange(start, start + count)


class SolidBSP(_BSPTree):
    """Solid-leaf BSP tree of a closed mesh (Ericson 8.2.3): the volume it bounds.

    ``SolidBSP.from_mesh(mesh, *, max_candidates=8, split_weight=0.8, seed=0, axis_cuts=True,
    check_surface=True)``. The mesh must be closed and consistently oriented
    (``TriangleMesh.as_solid()``'s check; GeometryError naming the problem otherwise); an
    inward-facing mesh is turned outward. Its surface must not cross itself: after the build,
    two probe points per face (just behind and just in front of its centroid) are classified,
    and a face whose probes disagree with the tree (``inconsistent_faces``) makes it a
    GeometryError unless ``check_surface=False``. Queries: module doc (boundary convention
    there)."""

    MODE = 0
    __slots__ = ("inconsistent_faces",)

    def __init__(self, vertices, faces, *, max_candidates=DEFAULT_MAX_CANDIDATES,
                 split_weight=DEFAULT_SPLIT_WEIGHT, seed=0, axis_cuts=True, check_surface=True):
        from .shapes import solid_orientation

        _, vertices, faces = _mesh_arrays((vertices, faces))
        if solid_orientation(vertices, faces) < 0:
            faces = np.ascontiguousarray(faces[:, ::-1])
        super().__init__(vertices, faces, max_candidates=max_candidates, split_weight=split_weight, seed=seed,
                         axis_cuts=axis_cuts)
        self.inconsistent_faces = self._count_inconsistent_faces(vertices, faces)
        if check_surface and self.inconsistent_faces:
            raise GeometryError(
                f"the mesh's surface crosses itself: {self.inconsistent_faces} faces have solid in front of them "
                "or empty space behind them in the tree (a solid-leaf BSP represents only embedded surfaces); "
                "use touche.contains (winding number), or check_surface=False to keep this tree")

    def _count_inconsistent_faces(self, vertices, faces):
        """Faces whose probe points disagree with the tree: a point just behind the face's centroid
        (inside) classified empty, or just in front (outside) classified solid. On an embedded
        closed surface there are none; where the surface crosses itself, autopartitioning labels
        some cells wrongly and such faces appear (both self-intersecting meshes of the benchmark
        panel are caught, no valid one is). The probe distance is 1e-6 of the mesh size (far above
        the plane thickness), at most a tenth of the triangle's inradius (a probe stays over its
        own face); a wall thinner than that is reported too."""
        a, b, c = (vertices[faces[:, i]] for i in range(3))
        normal = np.cross(b - a, c - a)
        twice_area = np.linalg.norm(normal, axis=1)
        keep = twice_area > 0.0
        normal = normal[keep] / twice_area[keep, None]
        a, b, c = a[keep], b[keep], c[keep]
        perimeter = np.linalg.norm(b - a, axis=1) + np.linalg.norm(c - b, axis=1) + np.linalg.norm(a - c, axis=1)
        step = np.minimum(1e-6 * self.eps / PLANE_THICKNESS, 0.1 * twice_area[keep] / perimeter)
        centroid = (a + b + c) / 3.0
        front = self.contains(np.ascontiguousarray(centroid + step[:, None] * normal))
        behind = self.contains(np.ascontiguousarray(centroid - step[:, None] * normal))
        return int((front | ~behind).sum())

    def contains(self, points):
        """Whether each point (3,) or (n, 3) lies in the solid (8.4.1; points on the surface
        count): bool or (n,) bool."""
        queries, single = _points(points, "points")
        out = np.empty(len(queries), dtype=np.bool_)
        _parallel.run(_kernels().contains_many, len(queries), self.node_planes, self.node_children, self.leaf_solid,
                      self.node_fragments, self.fragment_vertices, self.fragment_offsets, self.fragment_planes,
                      self.root, self.depth, self.eps, self.center, queries, out, grain=POINT_GRAIN)
        return bool(out[0]) if single else out

    def raycast(self, origins, directions, max_t=np.inf):
        """First entry of each ray ``origin + t * direction`` (t in [0, max_t]) into the solid
        (8.4.2): a :class:`BSPRayHits` with ``normal``; t = 0 when the origin is inside or on
        the surface. Rays (3,) or (n, 3); one direction may serve every origin."""
        origins, directions, limits, _ = self._rays(origins, directions, max_t)
        count = len(origins)
        out_t = np.empty(count)
        out_normal = np.empty((count, 3))
        _parallel.run(_kernels().raycast_solid_many, count, self.node_planes, self.node_children, self.leaf_solid,
                      self.node_fragments, self.fragment_vertices, self.fragment_offsets, self.fragment_planes,
                      self.root, self.depth, QUERY_THICKNESS_FACTOR * self.eps, self.center, origins, directions,
                      limits, out_t, out_normal, grain=RAY_GRAIN)
        return BSPRayHits(out_t, origins, directions, normal=out_normal)

    def sphere_intersects(self, centers, radii):
        """Whether each closed sphere (centres (3,) or (n, 3), radii a number or (n,), >= 0)
        meets the solid: bool or (n,) bool."""
        queries, single = _points(centers, "centers")
        try:
            r = np.array(np.broadcast_to(np.asarray(radii, dtype=np.float64), (len(queries),)))
        except (TypeError, ValueError):
            raise GeometryError(f"radii must be a number or ({len(queries)},) numbers, got shape {np.shape(radii)}") from None
        if not np.isfinite(r).all() or (r < 0.0).any():
            raise GeometryError("radii must be finite and >= 0")
        out = np.empty(len(queries), dtype=np.bool_)
        _parallel.run(_kernels().sphere_intersects_many, len(queries), self.node_planes, self.node_children,
                      self.node_fragments, self.leaf_solid, self.root, self.depth, QUERY_THICKNESS_FACTOR * self.eps,
                      self.center, self.fragment_vertices, self.fragment_offsets, self.fragment_planes, queries,
                      np.ascontiguousarray(r), out, grain=VOLUME_GRAIN)
        return bool(out[0]) if single else out

    def polytope_intersects(self, shape, poses=None):
        """Whether a convex polytope shape (Box, AABB, Tetrahedron, Triangle, ConvexPolygon,
        ConvexPolyhedron) placed by ``poses`` (None, a Pose, (4, 4) or (n, 4, 4), in the mesh's
        frame) meets the solid (touching counts): bool or (n,) bool."""
        from .dispatch import POLYTOPES
        from .pose import as_matrices
        from .shapes import Shape

        if not isinstance(shape, Shape) or shape.kind not in POLYTOPES:
            raise GeometryError(f"shape must be a convex polytope shape (Box, ConvexPolyhedron, ...), got "
                                f"{type(shape).__name__}")
        _, params, points, _, _ = shape._packed
        n_vertices, n_planes = int(params[0]), int(params[1])
        if n_planes == 0:
            raise GeometryError("the polytope has no face planes (a zero-area triangle)")
        vertices = np.ascontiguousarray(points[:n_vertices])
        planes = np.ascontiguousarray(np.column_stack([points[n_vertices:n_vertices + n_planes],
                                                       params[4:4 + n_planes]]))
        matrices = as_matrices(poses, "poses")
        single = matrices.ndim == 2
        matrices = np.ascontiguousarray(matrices.reshape(-1, 4, 4), dtype=np.float64)
        out = np.empty(len(matrices), dtype=np.bool_)
        _parallel.run(_kernels().polytope_intersects_many, len(matrices), self.node_planes, self.node_children,
                      self.node_fragments, self.leaf_solid, self.root, self.depth, QUERY_THICKNESS_FACTOR * self.eps,
                      self.center, self.fragment_vertices, self.fragment_offsets, self.fragment_planes, vertices, planes,
                      matrices, out, grain=VOLUME_GRAIN)
        return bool(out[0]) if single else out


__all__ = ["BSPRayHits", "LeafBSP", "NodeBSP", "SolidBSP", "PLANE_THICKNESS"]

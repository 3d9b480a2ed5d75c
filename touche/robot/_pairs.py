"""The pairs a robot check tests, packed once for the compiled pair table
(touche/_kernels/narrow/pair_table.py): one kernel call answers every pair at every configuration,
instead of one touche.intersects (or touche.distance) call per pair.

A table belongs to one robot, one allowed-collision matrix, one self-collision switch and one
list of obstacle shapes (their poses change call by call and are not part of it); the robot keeps
the last few (``Robot._checked_pairs``) and drops them when its allowed-collision matrix changes.
"""
from __future__ import annotations

import numpy as np

from .. import _parallel
from .. import dispatch
from ..shapes import TriangleMesh
from ._common import cached_bounding_sphere

# configurations per chunk handed to a thread: a configuration costs ~0.1-1 us per sphere-culled
# pair and ~2-20 us per pair left to the narrow phase
GRAIN_PAIRS = 64
# configurations per chunk of a distance table: every pair's narrow phase runs (tens of us to ms
# per configuration)
GRAIN_DISTANCES = 4
# pairs per chunk when the threads share one configuration's pairs (~1 us to ~1 ms each)
GRAIN_DISTANCE_PAIRS = 16

_ROUTES = None


def _routes():
    global _ROUTES
    if _ROUTES is None:
        _ROUTES = dispatch.routes(dispatch.INTERSECTS)
    return _ROUTES


def _kernels():
    from .._kernels import pair_table

    return pair_table


def _surface_mesh(shape):
    """Whether the compiled table answers ``shape`` as a mesh: a surface (a solid mesh also
    holds shapes wholly inside it, which touche.intersects checks in Python)."""
    return isinstance(shape, TriangleMesh) and not shape.solid


def _concatenated(arrays, empty, start=None):
    """The arrays stacked along their first axis (``empty`` when they have no rows); ``start``
    (len + 1,), when given, gets each array's first row."""
    if start is not None:
        start[0] = 0
        start[1:] = np.cumsum([len(array) for array in arrays])
    if not any(len(array) for array in arrays):
        return np.ascontiguousarray(empty)
    return np.ascontiguousarray(np.concatenate(arrays))


def checked_pairs(robot, obstacle_count, self_collision):
    """(pair_a, pair_b) lists of the pairs a check tests, in the order of every check's pair
    axis: the self pairs first (when ``self_collision``), then every geometry whose link may touch
    the environment against every obstacle; pair_b < 0 is obstacle -pair_b - 1."""
    pairs = robot.self_pairs if self_collision else []
    pair_a = [a for a, _ in pairs]
    pair_b = [b for _, b in pairs]
    for g in range(len(robot.geometries)):
        if robot._allowed_environment[robot._geometry_link[g]]:
            continue
        for o in range(obstacle_count):
            pair_a.append(g)
            pair_b.append(-o - 1)
    return pair_a, pair_b


def _local_box(shape, tree):
    """(15,) a box holding ``shape`` in its own frame: center, axis rows, half extents -- a mesh's
    tree root box, else the shape's local axis-aligned box (a Box's own box); infinite half
    extents for an unbounded shape."""
    if tree is not None:
        from .._kernels.trees.bvh_volumes import OBB_AXES, OBB_CENTER, OBB_HALF

        root = tree.node_bounds[0]
        return np.concatenate([root[OBB_CENTER:OBB_CENTER + 3], root[OBB_AXES:OBB_AXES + 9], root[OBB_HALF:OBB_HALF + 3]])
    low, high = shape.local_box()
    if not (np.isfinite(low).all() and np.isfinite(high).all()):
        return np.concatenate([np.zeros(3), np.eye(3).ravel(), np.full(3, np.inf)])
    return np.concatenate([0.5 * (low + high), np.eye(3).ravel(), 0.5 * (high - low)])


class PairTable:
    """The checked pairs of a robot against a list of obstacle shapes.

    ``pair_a`` / ``pair_b`` (P,) int64 as checked_pairs gives them (geometry indices; pair_b < 0 is
    obstacle -pair_b - 1); ``python_pairs`` the pairs the kernel leaves to touche.intersects."""

    def __init__(self, robot, obstacle_shapes, self_collision):
        geometries = [g.shape for g in robot.geometries]
        self.geometry_count = len(geometries)
        shapes = geometries + list(obstacle_shapes)
        pair_a, pair_b = checked_pairs(robot, len(obstacle_shapes), self_collision)
        self.pair_a = np.array(pair_a, dtype=np.int64)
        self.pair_b = np.array(pair_b, dtype=np.int64)
        self.shapes = shapes
        self._pack(shapes, robot)
        kernels = _kernels()
        self.pairs = np.zeros((len(pair_a), kernels.ENGINE + 1), dtype=np.int64)
        for p, (a, b) in enumerate(zip(pair_a, pair_b)):
            b = b if b >= 0 else len(geometries) - b - 1
            route, first, second = self._route(shapes, a, b)
            self.pairs[p, kernels.FIRST], self.pairs[p, kernels.SECOND] = first, second
            self.pairs[p, kernels.ROUTE] = route  # ENGINE stays 0 until a pair needs it
        routes = self.pairs[:, kernels.ROUTE]
        self.python_pairs = np.flatnonzero(routes == kernels.ROUTE_PYTHON)
        self._kernel = kernels.pair_table_intersects_many

    def _pack(self, shapes, robot):
        kernels = _kernels()
        packed = [shape._packed for shape in shapes]
        trees = [s.bvh if _surface_mesh(s) else None for s in shapes]
        layout = np.zeros((kernels.KIND + 1, len(shapes) + 1), dtype=np.int64)
        layout[kernels.KIND, :-1] = [p[0] for p in packed]
        self.params = _concatenated([p[1] for p in packed], np.zeros(0), layout[kernels.PARAMS_AT])
        self.points = _concatenated([p[2] for p in packed], np.zeros((0, 3)), layout[kernels.POINTS_AT])
        self.tris = _concatenated([p[3] for p in packed], np.zeros((0, 3), dtype=np.int64), layout[kernels.TRIS_AT])
        self.edges = _concatenated([p[4] for p in packed], np.zeros((0, 2), dtype=np.int64), layout[kernels.EDGES_AT])
        no_nodes = np.zeros((0, 3), dtype=np.int64)
        self.node_index = _concatenated([t.node_index if t is not None else no_nodes for t in trees], no_nodes,
                                        layout[kernels.NODES_AT])
        width = next((t.node_bounds.shape[1] for t in trees if t is not None), 1)
        self.node_bounds = _concatenated([t.node_bounds if t is not None else np.zeros((0, width)) for t in trees],
                                         np.zeros((0, width)))
        self.tri_vertices = _concatenated([t.tri_vertices if t is not None else np.zeros((0, 3, 3)) for t in trees],
                                          np.zeros((0, 3, 3)), layout[kernels.TRIANGLES_AT])
        self.tri_ids = _concatenated([t.tri_ids if t is not None else np.zeros(0, dtype=np.int64) for t in trees],
                                     np.zeros(0, dtype=np.int64))
        self.layout = layout
        self.trees = trees
        depth = max([t.depth for t in trees if t is not None], default=0)
        self.stack_rows = 2 * depth + 8  # tree_overlap_direct: depth_a + depth_b + 2; the mesh engine: depth + 2
        bounds = np.zeros((len(shapes), kernels.BOUNDS_WIDTH))
        spheres = [(robot._sphere_center[g], robot._sphere_radius[g]) for g in range(self.geometry_count)]
        spheres += [cached_bounding_sphere(s) for s in shapes[self.geometry_count:]]
        for o, (shape, tree, (center, radius)) in enumerate(zip(shapes, trees, spheres)):
            bounds[o, kernels.SPHERE:kernels.SPHERE + 3] = center
            bounds[o, kernels.SPHERE + 3] = radius
            bounds[o, kernels.BOX:kernels.BOX + 15] = _local_box(shape, tree)
            bounds[o, kernels.MESH_SCALE] = float(shape.scale) if tree is not None else 0.0
        self.bounds = bounds

    @staticmethod
    def _route(shapes, a, b):
        """(route, first object, second object) of the pair of objects a, b."""
        kernels = _kernels()
        sa, sb = shapes[a], shapes[b]
        route = _routes().get((sa.kind, sb.kind))
        engine = None if route is None else route[0]
        if engine == dispatch.MESH_MESH and _surface_mesh(sa) and _surface_mesh(sb):
            return kernels.ROUTE_MESH_MESH, a, b
        if engine == dispatch.MESH_SHAPE:
            if _surface_mesh(sb) and not isinstance(sa, TriangleMesh):
                return kernels.ROUTE_SHAPE_MESH, a, b
            if _surface_mesh(sa) and not isinstance(sb, TriangleMesh):
                return kernels.ROUTE_SHAPE_MESH, b, a
        if engine in (dispatch.CLOSED_FORM, dispatch.PAIR_ENGINE):
            return kernels.ROUTE_CONVEX, a, b
        return kernels.ROUTE_PYTHON, a, b

    def _fill_addresses(self, pairs, missing, distances=False):
        """Compile (or load) the narrow phases of the pairs ``missing`` of ``pairs`` (the boolean
        table's, or the distance table's when ``distances``) and note their addresses: only
        engines some pair has needed are ever compiled."""
        from .._kernels import bvh_shape, bvh_shape_boolean
        from .._kernels import pairs as engines

        kernels = _kernels()
        for p in missing:
            route, a, b = (int(x) for x in pairs[p, [kernels.ROUTE, kernels.FIRST, kernels.SECOND]])
            if route == kernels.ROUTE_MESH_MESH:
                address = (kernels.MESH_MESH_DISTANCE if distances else kernels.MESH_MESH).address()
            elif route == kernels.ROUTE_SHAPE_MESH:
                shape = self.shapes[a]
                address = (bvh_shape.distance_engine_address(shape.kind, shape._packed[1]) if distances
                           else bvh_shape_boolean.boolean_engine_address(shape.kind))
            else:
                sa, sb = self.shapes[a], self.shapes[b]
                address = engines.engine_address(sa.kind, sa._packed[1], sb.kind, sb._packed[1], not distances)
            pairs[p, kernels.ENGINE] = address

    def _distance_setup(self):
        """What the distance table adds to the boolean one, made on its first use: the pairs with
        their distance addresses (filled as pairs need them) and which ones run swapped, each
        shape's scale, each tree's largest leaf and the rows of its triangles by original id."""
        if getattr(self, "_distance_pairs", None) is not None:
            return
        kernels = _kernels()
        pairs = np.zeros((len(self.pairs), kernels.SWAPPED + 1), dtype=np.int64)
        pairs[:, :kernels.ENGINE] = self.pairs[:, :kernels.ENGINE]
        # _route puts a shape before a mesh: FIRST is then the pair's second member
        pairs[:, kernels.SWAPPED] = (pairs[:, kernels.FIRST] != self.pair_a).astype(np.int64)
        self.scales = np.array([float(shape.scale) for shape in self.shapes])
        self.max_leaf = np.array([t.max_leaf if t is not None else 0 for t in self.trees], dtype=np.int64)
        from .. import bvh

        trees = [t for t in self.trees if t is not None]
        self.tri_positions = _concatenated([bvh._positions(t) for t in trees], np.zeros(0, dtype=np.int64))
        deepest = max(trees, key=lambda t: t.depth, default=None)  # the stack of its pair with itself
        self.distance_stack_rows = deepest._stack_rows(deepest) if deepest is not None else 8
        self._distance_pairs = pairs

    def distances(self, robot, q, obstacle_poses):
        """(signed (n, P), point_a (n, P, 3), point_b (n, P, 3), normal (n, P, 3), status (n, P)
        int8) over the compiled routes for the configurations ``q`` (n, dof); the columns of
        ``python_pairs`` are left for the caller (uninitialised)."""
        self._distance_setup()
        count, width = q.shape[0], len(self.pairs)
        tree = robot._tree
        while True:
            signed = np.empty((count, width))
            point_a = np.empty((count, width, 3))
            point_b = np.empty((count, width, 3))
            normal = np.empty((count, width, 3))
            status = np.empty((count, width), dtype=np.int8)
            missing = np.zeros(width, dtype=bool)
            kernel = _kernels().pair_table_distances_many
            arguments = (q, tree.parent, tree.joint_type, tree.origin, tree.axis, tree.dof, tree.multiplier,
                         tree.offset, robot._geometry_link, robot._geometry_origin, obstacle_poses, self.layout,
                         self.scales, self.max_leaf, self.params, self.points, self.tris, self.edges, self.node_index,
                         self.node_bounds, self.tri_vertices, self.tri_ids, self.tri_positions, self._distance_pairs,
                         self.distance_stack_rows, signed, point_a, point_b, normal, status, missing)
            if count == 1:  # one configuration: its pairs shared by the threads (the kernel releases the GIL)
                _parallel.run(lambda *chunk: kernel(*chunk[:-2], 0, 1, chunk[-2], chunk[-1]), width, *arguments,
                              grain=GRAIN_DISTANCE_PAIRS)
            else:
                _parallel.run(lambda *chunk: kernel(*chunk, 0, width), count, *arguments, grain=GRAIN_DISTANCES)
            if not missing.any():
                return signed, point_a, point_b, normal, status
            self._fill_addresses(self._distance_pairs, np.flatnonzero(missing), distances=True)

    def intersect(self, robot, q, obstacle_poses, first_only, record):
        """(hit (n,) bool, colliding (n, P) bool or None) over the compiled routes for the
        configurations ``q`` (n, dof) of ``robot`` and obstacle poses (max(1, O), 4, 4)."""
        count = q.shape[0]
        tree = robot._tree
        while True:
            hit = np.zeros(count, dtype=bool)
            colliding = np.zeros((count, len(self.pairs)) if record else (0, 0), dtype=bool)
            missing = np.zeros(len(self.pairs), dtype=bool)
            arguments = (q, tree.parent, tree.joint_type, tree.origin, tree.axis, tree.dof, tree.multiplier,
                         tree.offset, robot._geometry_link, robot._geometry_origin, obstacle_poses, self.layout,
                         self.bounds, self.params, self.points, self.tris, self.edges, self.node_index,
                         self.node_bounds, self.tri_vertices, self.tri_ids, self.pairs, self.stack_rows, first_only,
                         hit, colliding, missing)
            _parallel.run(self._kernel, count, *arguments, grain=GRAIN_PAIRS)
            if not missing.any():
                return hit, colliding if record else None
            self._fill_addresses(self.pairs, np.flatnonzero(missing))  # then once more, with every engine it needs

"""Ahead-of-time compilation of the kernels: warmup steps, progress, worker processes, and a
record of what numba compiles.

numba compiles a kernel on its first call and keeps the machine code in its on-disk cache
(``NUMBA_CACHE_DIR`` when set, else ``__pycache__`` next to the sources). ``warmup()`` runs the
steps below, each a group of public calls on tiny inputs that reaches one family of kernels,
so that later calls only load from that cache. Steps are independent: with ``jobs > 1`` they are
handed out one at a time to worker processes (``python -m touche._warmup_worker``) that share
the on-disk cache; a kernel reached by two workers at the same moment is compiled twice, which
costs time but never correctness (numba writes cache files atomically).

Progress goes to stderr: on a terminal one line rewritten in place (step n of N, its name, the
elapsed time); elsewhere one line when compiling starts and one when it ends.

``CompileLog`` counts numba's compilations (numba's ``numba:compile`` events; a load from the
cache is not one) with their exclusive times: the cold-start benchmark prints the most expensive
kernels with it, and the completeness test asserts that nothing compiles after ``warmup()``.
"""
from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from collections import defaultdict

import numpy as np


# ------------------------------------------------------------------------------------------------
# what numba compiles
class CompileLog:
    """Context manager recording every numba compilation in this process.

    ``entries``: (qualified name, exclusive seconds, argument types as text), in the order the
    compilations finished; a kernel compiled for a caller is its own entry, and its time is not
    counted again in the caller's (exclusive times add up to the compile wall time)."""

    def __init__(self, on_compiled=None):
        self.entries = []
        self.on_compiled = on_compiled  # called with each new entry
        self._stack = []
        self._listener = None

    def __enter__(self):
        from numba.core import event

        log = self

        class _Listener(event.Listener):
            def on_start(self, ev):
                dispatcher = ev.data["dispatcher"]
                func = dispatcher.py_func
                name = f"{func.__module__}.{func.__qualname__}"
                log._stack.append([name, time.perf_counter(), 0.0, str(ev.data.get("args", ""))])

            def on_end(self, ev):
                name, start, children, args = log._stack.pop()
                elapsed = time.perf_counter() - start
                entry = (name, elapsed - children, args)
                log.entries.append(entry)
                if log._stack:
                    log._stack[-1][2] += elapsed
                if log.on_compiled is not None:
                    log.on_compiled(entry)

        self._listener = _Listener()
        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc):
        from numba.core import event

        event.unregister("numba:compile", self._listener)
        return False

    @property
    def count(self):
        return len(self.entries)

    @property
    def seconds(self):
        return sum(entry[1] for entry in self.entries)

    def by_function(self):
        """{name: (exclusive seconds, number of specializations)}."""
        totals = defaultdict(lambda: [0.0, 0])
        for name, seconds, _ in self.entries:
            totals[name][0] += seconds
            totals[name][1] += 1
        return {name: tuple(value) for name, value in totals.items()}


# ------------------------------------------------------------------------------------------------
# steps: each a group of public calls on tiny inputs
def _poses(count=2):
    poses = np.tile(np.eye(4), (count, 1, 1))
    poses[:, 0, 3] = np.linspace(0.5, 1.5, count)
    return poses


def _shapes():
    import touche as tc

    return {
        "point": tc.Point([0.0, 0.0, 0.0]),
        "sphere": tc.Sphere(1.0),
        "segment": tc.Segment([0.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
        "capsule": tc.Capsule(0.3, 1.0),
        "box": tc.Box([1.0, 1.0, 1.0]),
        "triangle": tc.Triangle([0, 0, 0], [1, 0, 0], [0, 1, 0]),
        "hull": tc.ConvexPolyhedron(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1.0]])),
        "cylinder": tc.Cylinder(0.5, 1.0),
        "halfspace": tc.HalfSpace([0, 0, 1], 0.0),
    }


def _tetra():
    import touche as tc

    return tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])


def _step_point_pairs():
    """The closed forms (fastpaths.py): every pair the registry sends there, both verbs."""
    import touche as tc

    from . import dispatch

    by_kind = {shape.kind: shape for shape in _shapes().values()}
    moved = tc.Pose.from_translation([0.5, 0.2, 0.1])
    for verb, function in ((dispatch.INTERSECTS, tc.intersects), (dispatch.DISTANCE, tc.distance)):
        for (kind_a, kind_b), route in dispatch.routes(verb).items():
            if route.engine == dispatch.CLOSED_FORM:
                function(by_kind[kind_a], moved, by_kind[kind_b], None)


# The kernels behind boundaries (jit.KernelBoundary), which every driver calls through their
# addresses: compiled first, in two steps that two workers run side by side (the GJK kernel is
# compiled in both, its typing being the only part they share), before any step that uses them.
def _step_pair_engines():
    from ._kernels import pairs

    for family in (pairs.CLOSED_ENGINE, pairs.POLYTOPE_ENGINE, pairs.GJK_BOOLEAN_ENGINE):
        family.address()


def _step_gjk_and_mesh_engines():
    from ._kernels import bvh_shape, bvh_shape_boolean, pairs

    # (pairs.MESH_BRUTE_ENGINE is the tests' reference for the mesh trees, not a public path)
    pairs.GJK_ENGINE.address()
    bvh_shape.MESH_POINT_DISTANCE_ENGINE.address()
    bvh_shape.MESH_LINEAR_DISTANCE_ENGINE.address()
    bvh_shape.MESH_POLYTOPE_DISTANCE_ENGINE.address()
    bvh_shape.MESH_CURVED_DISTANCE_ENGINE.address()
    bvh_shape_boolean.MESH_BOX_BOOLEAN_ENGINE.address()
    bvh_shape_boolean.MESH_POINT_BOOLEAN_ENGINE.address()
    bvh_shape_boolean.MESH_LINEAR_BOOLEAN_ENGINE.address()
    bvh_shape_boolean.MESH_POLYTOPE_BOOLEAN_ENGINE.address()
    bvh_shape_boolean.MESH_CURVED_BOOLEAN_ENGINE.address()


def _step_robots():
    from . import robot

    robot.warmup()


def _step_engine_single():
    import touche as tc

    shapes = _shapes()
    moved = tc.Pose.from_translation([0.5, 0.2, 0.1])
    for a in ("capsule", "box", "halfspace"):
        for b in ("box", "hull"):
            tc.intersects(shapes[a], moved, shapes[b], None)
            tc.distance(shapes[a], moved, shapes[b], None)
    tc.distance(shapes["cylinder"], None, shapes["box"], None)  # GJK / EPA
    tc.intersects(shapes["cylinder"], None, shapes["box"], None)
    # margins and lower bounds of the GJK-backed families (batch.checked_threshold_one)
    tc.intersects(shapes["box"], moved, shapes["hull"], None, margin=0.1)
    tc.distance(shapes["box"], moved, shapes["hull"], None, lower_bound_only=True)


def _step_engine_batch():
    import touche as tc

    shapes = _shapes()
    poses = _poses()
    tc.intersects(shapes["sphere"], poses, shapes["box"], None)
    tc.distance(shapes["sphere"], poses, shapes["box"], None)
    tc.intersects(shapes["box"], poses, shapes["box"], None, margin=0.1)  # batch.threshold_many


def _step_points_and_rays():
    import touche as tc

    from ._kernels import ray_engine

    box = _shapes()["box"]
    tc.closest_point(box, None, [[0.0, 0.0, 2.0]])
    tc.closest_point(box, None, [0.0, 0.0, 2.0])  # one point: batch.checked_closest_point_into
    tc.raycast(box, None, [0.2, 0.2, 3.0], [0.0, 0.0, -1.0])  # one ray: batch.checked_raycast_into
    tc.raycast(box, None, [[0.2, 0.2, 3.0]], [0.0, 0.0, -1.0])  # rays: batch.raycast_many
    for family in ray_engine.RAY_FAMILIES:  # the other shapes' ray families (behind the boundary)
        family.address()


def _step_mesh_pairs():
    import touche as tc

    mesh = tc.TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    poses = _poses()
    tc.raycast(mesh, None, [0.2, 0.2, 1.0], [0.0, 0.0, -1.0])
    tc.intersects(mesh, None, mesh, None)
    tc.intersects(mesh, None, mesh, poses)
    tc.distance(mesh, None, mesh, None)
    tc.distance(mesh, None, mesh, poses)
    tc.intersects(mesh, None, mesh, poses, margin=0.1)  # bvh_threshold.tree_threshold_many
    tc.distance(mesh, None, mesh, None, lower_bound_only=True)
    solid = _tetra().as_solid()  # bvh_overlap's solid entries: surfaces, spheres, boxes in one call
    tc.intersects(solid, None, solid, poses[1])
    tc.intersects(solid, None, solid, poses)
    inner = _tetra()  # nested, surfaces apart: solid_held_pair, solid_held_many (crossing counts)
    inner = tc.TriangleMesh(0.1 * inner.vertices + 0.1, inner.faces, solid=True)
    tc.intersects(solid, None, inner, None)
    tc.intersects(solid, None, inner, np.stack([np.eye(4), np.eye(4)]))
    tc.distance(solid, None, inner, None)  # contained_pairs: solid_candidates_many, solid_held_pair
    tc.intersects(solid, None, inner, np.stack([np.eye(4), np.eye(4)]), margin=0.01)
    shifted = np.eye(4)
    shifted[:3, 3] = [0.05, 0.02, 0.01]  # interpenetrating: solid_depth.deepest_pairs (the vertex depth)
    tc.distance(solid, None, solid, shifted)
    tc.distance(solid, None, solid, np.stack([shifted, shifted]))
    shapes = _shapes()
    for name in ("sphere", "box"):
        tc.intersects(shapes[name], None, mesh, None)
        tc.intersects(shapes[name], poses, mesh, None)
        tc.distance(shapes[name], None, mesh, None)
        tc.distance(shapes[name], poses, mesh, None)


def _step_contacts():
    import touche as tc

    box = _shapes()["box"]
    tc.contacts(box, None, box, tc.Pose.from_translation([0.5, 0.2, 0.1]))


def _step_time_of_impact():
    import touche as tc

    shapes = _shapes()
    start = np.eye(4)
    start[0, 3] = 3.0
    moving = tc.Linear([-1.0, 0.0, 0.0], start)
    tc.time_of_impact(shapes["box"], moving, shapes["box"], None, 5.0)  # moving SAT
    tc.time_of_impact(shapes["sphere"], moving, shapes["box"], None, 5.0)  # GJK shape cast


def _step_mesh_points():
    import touche as tc

    tetra = _tetra()
    tc.contains(tetra, None, [[0.1, 0.1, 0.1]])
    tc.winding_number(tetra, None, [[0.1, 0.1, 0.1]])


def _step_mesh_preparation():
    from . import mesh

    mesh.warmup()


def _step_clearance():
    from .clearance import warmup as clearance_warmup  # (touche.clearance is the function)

    clearance_warmup()


def _step_broadphase():
    """The broad phases, then collision worlds on each of them (one step: both compile the
    broad-phase kernels)."""
    from . import broadphase

    broadphase.warmup()
    _step_world()


def _step_motions():
    """Every motion class against convex shapes (advancement, shape cast, moving SAT, closed
    forms), a mesh pair, a plane, box-box under QuadraticMatrix; single and batch."""
    import touche as tc

    shapes = _shapes()
    start = tc.Pose.from_translation([3.0, 0.2, 0.1])
    starts = np.stack([start.matrix, start.matrix])
    singles = [
        tc.Linear([-2.0, 0.0, 0.0], start),
        tc.Screw([-2.0, 0.0, 0.0], [0.0, 0.0, 1.0], start),
        tc.Keyframes([0.0, 1.0, 2.0], np.stack([start.matrix, np.eye(4), np.eye(4)])),
        tc.Integrated(lambda t: ([-2.0, 0.0, 0.0], [0.0, 0.0, 0.5]), start, t_end=2.0, steps=8),
        tc.CallableMotion(lambda t: tc.Pose.from_translation([3.0 - 2.0 * t, 0.0, 0.0]).matrix, 2.0),
    ]
    batches = [
        tc.Linear([-2.0, 0.0, 0.0], starts),
        tc.Screw([-2.0, 0.0, 0.0], [0.0, 0.0, 1.0], starts),
    ]
    mesh = _tetra()
    for motion in singles + batches:
        for name in ("sphere", "box", "capsule", "cylinder", "hull", "triangle", "segment", "point"):
            for other in ("box", "sphere"):
                tc.time_of_impact(shapes[name], motion, shapes[other], None, 2.0)
        tc.time_of_impact(mesh, motion, mesh, None, 2.0)
        tc.time_of_impact(mesh, motion, shapes["box"], None, 2.0)
        tc.time_of_impact(shapes["box"], motion, shapes["halfspace"], tc.Static(), 2.0)
    tc.time_of_impact(shapes["capsule"], singles[1], shapes["box"], singles[0], 2.0)
    quadratic = tc.QuadraticMatrix.from_motion(tc.Linear([-2.0, 0.0, 0.0], start))
    tc.time_of_impact(shapes["box"], quadratic, shapes["box"], None, 2.0)
    tc.time_of_impact(shapes["box"], tc.QuadraticMatrix.from_motion(batches[0]), shapes["box"], None, 2.0)


def _step_intersection_and_contacts():
    import touche as tc

    shapes = _shapes()
    moved = tc.Pose.from_translation([0.5, 0.2, 0.1])
    poses = _poses()
    for a in ("box", "hull", "triangle"):
        tc.intersection(shapes[a], moved, shapes["box"], None)
        tc.intersection(shapes[a], poses, shapes["box"], None)
    tc.contacts(shapes["box"], poses, shapes["box"], None)
    tc.contacts(shapes["sphere"], moved, shapes["box"], None)


def _step_convex_module():
    import touche as tc
    from touche import convex

    shapes = _shapes()
    poses = _poses()
    first = convex.gjk(shapes["box"], None, shapes["hull"], poses[0])
    convex.gjk(shapes["box"], None, shapes["hull"], poses[0], warm_start=first.warm_start)
    batch = convex.gjk(shapes["box"], poses, shapes["hull"], None)
    convex.gjk(shapes["box"], poses, shapes["hull"], None, warm_start=batch.warm_start)
    convex.penetration(shapes["box"], None, shapes["hull"], None)
    convex.penetration(shapes["box"], poses, shapes["hull"], None)
    convex.intersects(shapes["box"], None, shapes["hull"], poses[0])
    convex.intersects(shapes["box"], poses, shapes["hull"], None)
    start = tc.Pose.from_translation([2.0, 0.0, 0.0])
    convex.shape_cast(shapes["box"], start, [-1.0, 0.0, 0.0], shapes["hull"], None, [0.0, 0.0, 0.0], 2.0)
    convex.shape_cast(shapes["box"], poses, np.array([[-1.0, 0, 0], [-1.0, 0, 0]]), shapes["hull"], None,
                      [0.0, 0.0, 0.0], 2.0)


def _step_small_modules():
    """touche.planar, touche.pairwise, touche.lp."""
    from touche import lp, pairwise, planar

    square = [[0, 0], [1, 0], [1, 1], [0, 1]]
    squares = planar.place(square, np.array([[0.0, 0.0], [0.5, 0.5]]), angles=[0.0, 0.3])
    for b in (square, squares):
        planar.intersects(square, b)
        planar.intersection(square, b)
        planar.time_of_impact(square, [1.0, 0.0], b, [0.0, 0.0], 2.0)
    tri = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    tris = np.stack([tri, tri + 0.2])
    box = ([0.0, 0.0, 0.0], np.eye(3), [0.5, 0.4, 0.3])
    boxes = (np.zeros((2, 3)), np.stack([np.eye(3)] * 2), np.full((2, 3), 0.3))
    for other in (box, boxes):
        pairwise.obb_obb_intersects(*box, *other)
        pairwise.obb_obb_time_of_impact(*box, *other, [1.0, 0.0, 0.0], [0.0, 0.0, 0.0], 2.0)
        for t in (tri, tris):
            pairwise.triangle_obb_intersects(t, *other)
            pairwise.triangle_obb_time_of_impact(t, *other, [0.0, 0.0, 1.0], [0.0, 0.0, 0.0], 1.0)
    for t in (tri, tris):
        pairwise.triangle_triangle_intersects(t, tri + 0.1)
        pairwise.triangle_triangle_intersection(t, tri + 0.1)
        pairwise.triangle_triangle_time_of_impact(t, tri + 0.1, [0.0, 0.0, 1.0], [0.0, 0.0, 0.0], 2.0)
    cube = np.concatenate([np.eye(3), -np.eye(3)])
    lp.linprog([1.0, 2.0, 3.0], cube, np.ones(6))
    lp.linprog([1.0, 1.0], cube[:2, :2].copy(), [1.0, 1.0])
    lp.feasible_point(cube, np.ones(6))
    lp.fourier_motzkin(cube, np.ones(6))
    lp.fourier_motzkin(cube, np.ones(6), exact=True)
    shapes = _shapes()
    poses = _poses()
    for method in ("lp", "chung-wang"):
        lp.polytopes_intersect(shapes["box"], None, shapes["hull"], poses[0], method=method)
        lp.polytopes_intersect(shapes["box"], poses, shapes["hull"], None, method=method, return_witness=True)
    lp.separating_vector(shapes["box"], None, shapes["hull"], poses[0])
    lp.separating_vector(shapes["box"], poses, shapes["hull"], None)


def _step_bounding():
    from touche import bounding as bv

    cloud = np.random.default_rng(5).normal(size=(20, 3))
    volumes = [
        bv.aabb(cloud), bv.sphere_ritter(cloud), bv.sphere_iterative(cloud), bv.sphere_welzl(cloud),
        bv.sphere_pca(cloud), bv.obb_pca(cloud), bv.obb_hull_pca(cloud), bv.obb_brute_force(cloud, steps=3),
        bv.obb_min_volume(cloud, max_faces=8, restarts=1), bv.capsule(cloud), bv.lozenge(cloud), bv.rss(cloud),
    ] + [bv.kdop(cloud, k) for k in bv.KDOP_DIRECTIONS]
    for volume in volumes:
        volume.volume()
        volume.contains(cloud)
        bv.merge(volume, volume)
    bv.aabb_rotated(volumes[0], np.eye(3))
    flat = np.column_stack([cloud[:12, :2], np.zeros(12)])  # no 3D hull: the 2D hull (bounding_obb._hull2d)
    bv.obb_min_volume(flat, max_faces=8, restarts=1)
    bv.obb_brute_force(flat, steps=3)
    tetra = _tetra()
    bv.obb_triangles(tetra.vertices, tetra.triangles)


def _step_bvh_module():
    import touche as tc
    from touche import bvh

    a = _tetra()
    poses = _poses()
    # the parallel build of big meshes (bvh.build_tree: prepare_build, build_range from Python),
    # on a grid of triangles just above its threshold
    side = int(np.ceil(np.sqrt(bvh.PARALLEL_BUILD_MIN_TRIANGLES / 2))) + 1
    grid = np.stack(np.meshgrid(np.arange(side + 1.0), np.arange(side + 1.0), indexing="ij"), -1).reshape(-1, 2)
    corner = (np.arange(side)[:, None] * (side + 1) + np.arange(side)[None, :]).ravel()
    cells = np.stack([corner, corner + side + 1, corner + 1, corner + 1, corner + side + 1, corner + side + 2], 1)
    points = np.ascontiguousarray(np.column_stack([grid, np.sin(grid[:, 0])]))
    bvh.build_tree(points, np.ascontiguousarray(cells.reshape(-1, 3), dtype=np.int64), 1, bvh.SPLITS["sah"],
                   threads=2)
    for split in bvh.SPLITS:
        for kdop in (None,) + tuple(bvh.KDOPS):
            tree = bvh.build(a, split=split, kdop=kdop)
            for bv_name in bvh.BOUNDING_VOLUMES:
                if bv_name == "kdop" and kdop is None:
                    continue
                bvh.intersects(tree, None, tree, poses[0], bv=bv_name)
                bvh.intersects(tree, poses, tree, None, bv=bv_name)
    for bv_name in bvh.BOUNDING_VOLUMES:
        kdop = 14 if bv_name == "kdop" else None
        tree = bvh.build(a, kdop=kdop)
        bvh.collide(tree, None, tree, poses[0], bv=bv_name)
        bvh.collide(tree, None, tree, poses[0], bv=bv_name, callback=lambda contact: True)
    bvh.distance(a, None, a, poses[0])
    bvh.distance(a, poses, a, None)
    bvh.distance(a, poses[:1], a, None)  # a batch of one: tree_distance_one
    pair = bvh.CoherentPair(a, a)
    pair.intersects(None, poses[0])
    pair.distance(None, poses[0])
    tc.closest_point(a, None, [[0.1, 0.1, 2.0]])
    tc.raycast(a, None, [[0.1, 0.1, 2.0]], [0.0, 0.0, -1.0], mode="any")
    tc.raycast(a, None, [[0.1, 0.1, 2.0]], [0.0, 0.0, -1.0], mode="all")
    tc.signed_distance_points(a, None, [[0.1, 0.1, 0.1]])
    tc.contains(a, poses, [[0.1, 0.1, 0.1]] * 2)


def _step_bsp():
    import touche as tc
    from touche import bsp

    mesh = _tetra()
    points = np.array([[0.1, 0.1, 0.1], [2.0, 0.0, 0.0]])
    solid = bsp.SolidBSP.from_mesh(mesh)
    solid.contains(points)
    solid.locate(points)
    solid.raycast(points, [1.0, 0.0, 0.0])
    solid.sphere_intersects(points, 0.1)
    solid.polytope_intersects(tc.Box([1.0, 1.0, 1.0]), _poses())
    for kind in (bsp.NodeBSP, bsp.LeafBSP):
        kind.from_mesh(mesh).raycast(points, [1.0, 0.0, 0.0])


def _step_world():
    import touche as tc
    from touche import broadphase

    for name in broadphase.STRUCTURES:
        world = tc.CollisionWorld(broadphase=name)
        world.add(tc.Sphere(0.5))
        world.add(tc.Box([1.0, 1.0, 1.0]), tc.Pose.from_translation([0.6, 0.0, 0.0]))
        world.add(tc.Capsule(0.2, 1.0), motion=tc.Linear([0.0, -2.0, 0.0], tc.Pose.from_translation([0, 1.5, 0])))
        world.add(_tetra(), tc.Pose.from_translation([-0.5, 0.0, 0.0]))
        world.step(0.5)
        world.pairs()
        world.query(tc.Sphere(1.0), None)
        world.closest(tc.Sphere(0.1), tc.Pose.from_translation([0.0, 0.0, 5.0]))
        world.raycast([0.0, 0.0, 5.0], [0.0, 0.0, -1.0])
    tree = broadphase.DynamicAABBTree()
    tree.rebuild(np.array([[0, 0, 0, 1, 1, 1], [0.5, 0.5, 0.5, 2, 2, 2]], dtype=np.float64))
    tree.check()


# Heaviest first: with several workers the long steps start at once and the short ones fill in.
# The first ENGINE_STEPS steps compile the engines; only the steps in WITHOUT_ENGINES may run
# beside them (the others would compile the same engine again in a second process).
STEPS = [
    ("the pair engine: closed forms, polytopes, GJK boolean", _step_pair_engines),
    ("the GJK / EPA and mesh engines", _step_gjk_and_mesh_engines),
    ("distance / intersects: the pair engine, single pairs", _step_engine_single),
    ("distance / intersects: batches", _step_engine_batch),
    ("meshes: BVH pairs and rays", _step_mesh_pairs),
    ("time of impact", _step_time_of_impact),
    ("time of impact: every motion", _step_motions),
    ("intersection sets and contacts", _step_intersection_and_contacts),
    ("touche.convex", _step_convex_module),
    ("touche.bvh and mesh queries", _step_bvh_module),
    ("planar, pairwise, lp", _step_small_modules),
    ("bounding volumes", _step_bounding),
    ("contact manifolds", _step_contacts),
    ("broad phase and collision worlds", _step_broadphase),
    ("STL clearance", _step_clearance),
    ("mesh preparation", _step_mesh_preparation),
    ("closed-form pairs (points, spheres, capsules, boxes)", _step_point_pairs),
    ("closest points and rays", _step_points_and_rays),
    ("mesh inside / winding number", _step_mesh_points),
    ("robots", _step_robots),
    ("BSP trees", _step_bsp),
]


# ------------------------------------------------------------------------------------------------
# progress
class Progress:
    """Step n of N on stderr: rewritten in place on a terminal, two quiet lines elsewhere."""

    def __init__(self, total, stream=None, enabled=True):
        self.total = total
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.interactive = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.started = time.perf_counter()
        self._width = 0

    def begin(self, jobs):
        if not self.enabled:
            return
        if not self.interactive:
            self._print(f"touche: compiling kernels ({self.total} steps, {jobs} process{'es' * (jobs > 1)}); "
                        "a first run takes minutes, later runs load them from numba's cache")

    def step_done(self, name):
        self.done += 1
        if self.interactive:
            text = f"touche: compiling kernels [{self.done}/{self.total}] {name} ({self.elapsed():.0f} s)"
            pad = max(0, self._width - len(text))
            self.stream.write("\r" + text + " " * pad)
            self.stream.flush()
            self._width = len(text)

    def end(self):
        if not self.enabled:
            return
        if self.interactive:
            self.stream.write("\r" + " " * self._width + "\r")
        self._print(f"touche: kernels ready in {self.elapsed():.1f} s")

    def elapsed(self):
        return time.perf_counter() - self.started

    def _print(self, text):
        print(text, file=self.stream, flush=True)


# ------------------------------------------------------------------------------------------------
# running the steps
def default_jobs():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return max(1, os.cpu_count() or 1)


class _LogToDirectory:
    """With TOUCHE_COMPILE_LOG_DIR set (the cold-start benchmark sets it), record what this
    process compiles and write it there as JSON on exit."""

    def __init__(self):
        self.directory = os.environ.get("TOUCHE_COMPILE_LOG_DIR")
        self.log = CompileLog() if self.directory else None

    def __enter__(self):
        if self.log is not None:
            self.log.__enter__()
        return self

    def __exit__(self, *exc):
        if self.log is not None:
            self.log.__exit__(*exc)
            path = os.path.join(self.directory, f"compile-log-{os.getpid()}.json")
            with open(path, "w") as handle:
                json.dump(self.log.entries, handle)
        return False


def run(jobs=None, progress=True, steps=None, stream=None):
    """Run the warmup steps (all by default) in ``jobs`` worker processes (default: the usable
    cores; 1 = in this process). Returns {step name: seconds}."""
    chosen = list(range(len(STEPS))) if steps is None else list(steps)
    jobs = default_jobs() if jobs is None else int(jobs)
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    jobs = min(jobs, len(chosen)) or 1
    bar = Progress(len(chosen), stream, enabled=progress)
    bar.begin(jobs)
    if jobs == 1:
        seconds = {}
        with _LogToDirectory():
            for index in chosen:
                name, step = STEPS[index]
                started = time.perf_counter()
                step()
                seconds[name] = time.perf_counter() - started
                bar.step_done(name)
    else:
        seconds = _run_workers(chosen, jobs, bar)
    bar.end()
    return seconds


ENGINE_STEPS = 2
WITHOUT_ENGINES = {
    "touche.bvh and mesh queries", "planar, pairwise, lp", "bounding volumes", "STL clearance", "mesh preparation",
    "mesh inside / winding number", "BSP trees",
}


# Steps that compile the same kernels: never two of one group at once (a second worker would
# compile them again instead of loading them from the cache; found in the compile logs of a
# warmup, where these kernels were compiled by both workers).
SHARED_KERNELS = (
    {"meshes: BVH pairs and rays", "touche.bvh and mesh queries"},  # the two-tree traversals (bvh_overlap, bvh_distance, ...)
    {"time of impact", "intersection sets and contacts", "time of impact: every motion"},  # moving SAT
)


def _ready(index, done, chosen, running=()):
    """Whether step ``index`` may start: the engine steps first, unless the step does not use
    them, and no step sharing its kernels running."""
    name = STEPS[index][0]
    for group in SHARED_KERNELS:
        if name in group and any(STEPS[other][0] in group for other in running):
            return False
    if name in WITHOUT_ENGINES or index < ENGINE_STEPS:
        return True
    return all(engine in done or engine not in chosen for engine in range(ENGINE_STEPS))


def _hand_out(waiting, pending, done, chosen, failure):
    """Give each parked worker the first step it may start (or "exit" when nothing is left or a
    step failed); a worker stays parked while the only steps left wait for the engine step."""
    for worker in list(waiting):
        if failure is None and pending:
            running = set(chosen) - set(pending) - done
            startable = [index for index in pending if _ready(index, done, chosen, running)]
            if not startable:
                continue
            pending.remove(startable[0])
            command = startable[0]
        else:
            command = "exit"
        waiting.remove(worker)
        try:
            worker.stdin.write(f"{command}\n")
            worker.stdin.flush()
        except BrokenPipeError:  # the worker died: its exit code is read by the caller
            pass


def _run_workers(chosen, jobs, bar):
    """Hand the steps to ``jobs`` worker processes one at a time (a worker asks for the next step
    when it has finished one). Workers are fresh interpreters (no fork of a process whose threading
    layer may already run threads)."""
    pending = list(chosen)
    done = set()
    waiting = []  # workers with nothing they may run yet
    seconds = {}
    workers = []
    selector = selectors.DefaultSelector()
    env = dict(os.environ)

    def start_worker():
        worker = subprocess.Popen(
            [sys.executable, "-m", "touche._warmup_worker"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, env=env, text=True, bufsize=1,
        )
        workers.append(worker)
        selector.register(worker.stdout, selectors.EVENT_READ, worker)

    for _ in range(jobs):
        start_worker()
    failure = None
    try:
        running = len(workers)
        while running:
            for key, _ in selector.select():
                worker = key.data
                line = worker.stdout.readline()
                if not line:  # the worker ended
                    selector.unregister(worker.stdout)
                    running -= 1
                    if worker.wait() != 0 and failure is None:
                        failure = f"a warmup worker exited with code {worker.returncode}"
                    _hand_out(waiting, pending, done, chosen, failure)
                    continue
                words = line.split()
                retiring = words[0] == "done" and words[-1] == "retire"
                if words[0] == "done":
                    done.add(int(words[1]))
                    name = STEPS[int(words[1])][0]
                    seconds[name] = float(words[2])
                    bar.step_done(name)
                elif words[0] == "error" and failure is None:
                    failure = line.strip()
                if retiring:  # it exits (its end is read like any other): a fresh one takes its place
                    if pending and failure is None:
                        start_worker()
                        running += 1
                elif words[0] in ("ready", "done"):
                    waiting.append(worker)
                _hand_out(waiting, pending, done, chosen, failure)
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
        selector.close()
    if failure is not None:
        raise RuntimeError(f"touche warmup failed: {failure}")
    return seconds


# A worker whose resident memory has grown past this after a step retires, and a fresh one takes
# its place: numba keeps what it compiled (LLVM modules, type caches) for the life of the process,
# so one worker running steps for minutes grew to ~1.75 GB, while a new one loads from the cache
# only what its next steps use (a second or two). The largest step adds ~0.5 GB, so peaks stay
# near 1.3 GB. TOUCHE_WARMUP_RETIRE_MB overrides it (0: never retire).
RETIRE_MEGABYTES = 800


def resident_megabytes():
    """This process's resident memory now (Linux: /proc/self/statm), else its peak so far."""
    try:
        with open("/proc/self/statm") as handle:
            pages = int(handle.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
    except (OSError, ValueError, IndexError, AttributeError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (2 ** 20 if sys.platform == "darwin" else 2 ** 10)  # bytes on macOS, KiB elsewhere


def _retire_limit():
    value = os.environ.get("TOUCHE_WARMUP_RETIRE_MB")
    return RETIRE_MEGABYTES if value is None else float(value)


def _collect_garbage_less():
    """Fewer, cheaper garbage collections in a warmup worker, which only compiles.

    numba's compiler allocates millions of small objects, and each full collection walks every
    live one, numba's own modules and registries included. In a worker (never in a user's
    process) those are imported first and frozen out of the collector's walks, and the first
    generation is collected every 20,000 allocations instead of 700. A warmup on 2 processes, two
    runs each way: 214 / 207 s wall and 422 / 409 CPU-s against 225 / 228 s and 446 / 450 CPU-s
    (7-8 % less), for ~60 MB more peak memory (the retire limit still applies)."""
    import gc

    from touche._kernels.narrow import batch  # noqa: F401  (numba and most kernel modules)

    gc.collect()
    gc.freeze()
    gc.set_threshold(20000, 20, 20)


def _worker():
    """Read step indices from stdin, run each, answer 'done INDEX SECONDS' (or 'error ...');
    'done INDEX SECONDS retire' when it has grown past the retire limit: it then exits, and the
    parent starts a fresh worker instead of handing it another step."""
    out = sys.stdout
    limit = _retire_limit()
    _collect_garbage_less()
    print("ready", file=out, flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "exit":
            return 0
        index = int(command)
        started = time.perf_counter()
        try:
            STEPS[index][1]()
        except Exception as error:  # reported to the parent, which raises
            print(f"error step {index} ({STEPS[index][0]}): {type(error).__name__}: {error}", file=out, flush=True)
            return 1
        retire = limit > 0 and resident_megabytes() > limit
        print(f"done {index} {time.perf_counter() - started:.3f}{' retire' if retire else ''}", file=out, flush=True)
        if retire:
            return 0
    return 0

"""A walk over the whole public surface of touche, on tiny inputs.

``walk()`` calls every public entry point the way a user would: every verb on every pair of shape
kinds (both orders) with the pose forms a user passes (None, a ``touche.Pose``, a raw (4, 4)
array, a batch (n, 4, 4), a Pose batch), every motion class, every module (convex, planar,
pairwise, lp, bounding, bvh, meshquery, bsp, broadphase, CollisionWorld, mesh, clearance) and the
command line, plus the input variants users hand over (lists, int / float32 arrays, read-only,
Fortran-order and sliced arrays, a single point vs points, scalar vs array limits). A test can
then assert that after ``touche.warmup()`` no numba kernel compiles during the walk.

Which pairs a verb answers comes from the registry (touche/dispatch.py): on the sections that walk
every pair (``_answered``), a registered pair must answer and an unregistered one must raise
``touche.UnsupportedQuery``; either surprise fails the walk.

Structure: ``SECTIONS`` is a list of ``(name, function)``; ``walk()`` runs them in order (or
``walk(["raycast", ...])`` a subset); a failure names its section. Elsewhere, queries that touche
does not answer for their arguments (a motion, a mode) raise ``touche.UnsupportedQuery``: the walk
catches exactly that (``_try``), and
a ``touche.GeometryError`` only where that error is the documented answer for the combination
(mesh-only functions given another shape, a plane that rotates, ...). Nothing else is caught.

Checking the walk without compiling (the kernels then run as plain Python):
``NUMBA_DISABLE_JIT=1 python -c "import sys; sys.path.insert(0, 'tests'); import surface_walk;
surface_walk.walk()"`` (or ``python tests/surface_walk.py [section ...]``, which times each
section). Three things in the kernels only work compiled, so under NUMBA_DISABLE_JIT=1
(``NO_JIT``), and only there, the walk skips them:

- first / any-hit ray casts on meshes (``_ray_ok``): numba intrinsics (touche/_kernels/base/simd.py);
- the HierarchicalGrid broad phase (``_structures``): its cell hash wraps int64 multiplication;
- the exact fallback of the orientation predicates (``_exact``: clearance on touching or
  coplanar triangles; in ``section_cli`` the same error as exit code 4): math.ldexp with an
  int64 exponent is a TypeError in plain Python.
"""
from __future__ import annotations

import contextlib
import io
import os
import pickle
import tempfile
from pathlib import Path

import numpy as np

import touche as tc
from touche import GeometryError, MeshFormatError, UnsupportedQuery, dispatch

NO_JIT = os.environ.get("NUMBA_DISABLE_JIT") == "1"
T_MAX = 2.0


# ---------------------------------------------------------------------------------------------
# helpers
def _try(function, *args, **kwargs):
    """``function(*args, **kwargs)``, or None when touche answers UnsupportedQuery."""
    try:
        return function(*args, **kwargs)
    except UnsupportedQuery:
        return None


def _answered(verb, kind_a, kind_b, function, *args, **kwargs):
    """``function(*args, **kwargs)`` for a registered (verb, kind_a, kind_b); for an unregistered
    one, check that it raises UnsupportedQuery and return None."""
    if dispatch.supported(verb, kind_a, kind_b):
        return function(*args, **kwargs)
    try:
        function(*args, **kwargs)
    except UnsupportedQuery:
        return None
    raise AssertionError(f"{verb} answered ({kind_a}, {kind_b}), which touche.dispatch does not register")


def _documented_geometry_error(function, *args, **kwargs):
    """For combinations whose documented answer is a GeometryError (e.g. a mesh-only function
    given a box): call, and swallow exactly that error."""
    try:
        return function(*args, **kwargs)
    except GeometryError:
        return None


def _exact(function, *args, **kwargs):
    """Calls that can reach the exact-arithmetic fallback of the orientation predicates
    (touche/_kernels/base/predicates.py, used by the clearance kernels on touching / coplanar
    triangles): it calls math.ldexp with an int64 exponent, fine in numba, a TypeError in plain
    Python. With the JIT the call just runs; under NUMBA_DISABLE_JIT=1 exactly that TypeError
    skips it."""
    if not NO_JIT:
        return function(*args, **kwargs)
    try:
        return function(*args, **kwargs)
    except TypeError as exc:
        if "ldexp" not in str(exc):
            raise
        return None


def _clearance(*args, **kwargs):
    return _exact(tc.clearance, *args, **kwargs)


def _clearance_all(*args, **kwargs):
    return _exact(tc.clearance_all, *args, **kwargs)


def _triangle_clearance(*args, **kwargs):
    return _exact(tc.triangle_clearance, *args, **kwargs)


def _is_mesh(shape):
    return isinstance(shape, tc.TriangleMesh)


def _ray_ok(shape, mode="first"):
    """False for the calls that cannot run without JIT (first / any hit on meshes: simd)."""
    return not (NO_JIT and _is_mesh(shape) and mode != "all")


def _structures():
    """touche.broadphase.STRUCTURES as (name, class). Without JIT the hierarchical grid cannot run:
    its cell hash relies on wrapping int64 multiplication (numba), which overflows Python ints."""
    from touche import broadphase

    return [(name, cls) for name, cls in broadphase.STRUCTURES.items()
            if not (NO_JIT and cls is broadphase.HierarchicalGrid)]


def _translation(x, y=0.0, z=0.0):
    pose = np.eye(4)
    pose[:3, 3] = (x, y, z)
    return pose


def _touch(result, *names):
    """Read result fields (properties run code too) and the repr."""
    if result is None:
        return
    for name in names:
        getattr(result, name)
    repr(result)


_DISTANCE_FIELDS = ("distance", "signed_distance", "depth", "point_a", "point_b", "normal", "status")
_IMPACT_FIELDS = ("status", "time", "last_time", "normal", "point", "points", "kind", "count", "triangles")


# ---------------------------------------------------------------------------------------------
# data: shapes, poses, points
TETRA_V = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
TETRA_F = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
# a box of generic size and place (not aligned with the tetrahedron's vertices and edges)
CUBE_V = np.array([[x, y, z] for x in (0.0, 1.0) for y in (0.0, 1.0) for z in (0.0, 1.0)]) * [1.0, 0.9, 1.1] - [
    0.47, 0.43, 0.52]
CUBE_F = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                   [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
OPEN_V = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
OPEN_F = np.array([[0, 1, 2], [0, 2, 3]])


def _make_shapes():
    hull_points = np.random.default_rng(3).normal(size=(12, 3)) * 0.5
    return {
        "point": tc.Point([0.1, 0.2, 0.3]),
        "segment": tc.Segment([-0.5, 0.0, 0.0], [0.5, 0.2, 0.1]),
        "degenerate_segment": tc.Segment([0.2, 0.1, 0.0], [0.2, 0.1, 0.0]),
        "ray": tc.Ray([0.0, 0.0, -2.0], [0.0, 0.1, 1.0]),
        "line": tc.Line([0.0, 0.0, 0.0], [1.0, 1.0, 0.0]),
        "plane": tc.Plane([0.0, 0.0, 1.0], 0.1),
        "halfspace": tc.HalfSpace([0.0, 1.0, 1.0], 0.0),
        "triangle": tc.Triangle([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        "zero_area_triangle": tc.Triangle([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]),
        "tetrahedron": tc.Tetrahedron(*TETRA_V),
        "sphere": tc.Sphere(0.5),
        "capsule": tc.Capsule(0.3, 1.0),
        "box": tc.Box([1.0, 0.8, 0.6]),
        "aabb": tc.AABB([-0.4, -0.3, -0.2], [0.5, 0.6, 0.7]),
        "cylinder": tc.Cylinder(0.4, 1.0),
        "cone": tc.Cone(0.4, 1.0),
        "ellipsoid": tc.Ellipsoid([0.5, 0.4, 0.3]),
        "polygon": tc.ConvexPolygon([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]]),
        "polyhedron": tc.ConvexPolyhedron(hull_points),
        "mesh": tc.TriangleMesh(TETRA_V, TETRA_F),
    }


SHAPES = _make_shapes()


def _names_in(category):
    """The names of SHAPES whose kind is in one of touche.dispatch's categories, in SHAPES order."""
    return tuple(name for name, shape in SHAPES.items() if shape.kind in category)


FINITE_CONVEX = _names_in(dispatch.FINITE_CONVEX)
POLYTOPES = _names_in(dispatch.POLYTOPES)
PLANES = _names_in(dispatch.PLANES)
CUBE_MESH = tc.TriangleMesh(CUBE_V, CUBE_F)
OPEN_MESH = tc.TriangleMesh(OPEN_V, OPEN_F)

POSE = tc.Pose.from_rotvec([0.3, -0.2, 0.5], [0.3, 0.1, -0.2])  # a single Pose
RAW = np.array(tc.Pose.from_rotvec([-0.1, 0.4, 0.2], [-0.2, 0.3, 0.1]).matrix)  # writable float64 (4, 4)
FAR = _translation(6.0, 0.5, 0.0)
BATCH = np.ascontiguousarray(np.stack([np.eye(4), RAW, FAR]))  # (3, 4, 4): overlap, overlap, apart
POSE_BATCH = tc.Pose(np.stack([POSE.matrix, np.eye(4), FAR]))  # a Pose batch
N = 3

POINT = np.array([0.2, 0.1, 0.05])
POINTS = np.array([[0.1, 0.2, 0.3], [2.0, 0.0, 0.0], [0.3, -0.4, 1.5]])
ORIGINS = np.array([[-3.0, 0.1, 0.2], [0.05, 0.1, 0.05], [3.0, 3.0, 3.0]])
DIRECTIONS = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [-1.0, -1.0, -1.0]])

# pose forms of the pair verbs: both single (None, Pose, raw), batch on either side, both batches
PAIR_POSES = (
    (None, None),
    (POSE, RAW),
    (RAW, POSE),
    (BATCH, None),
    (None, POSE_BATCH),
    (POSE_BATCH, BATCH),
)

# motions: A starts at x = 2 and moves towards the origin (hits), batches add a miss and a start
# in contact
START = tc.Pose.from_rotvec([0.0, 0.0, 0.3], [2.0, 0.2, 0.1])
START_BATCH = np.stack([START.matrix, _translation(2.0, 6.0, 0.0), np.eye(4)])
VELOCITY = [-2.0, 0.0, 0.0]
VELOCITY_BATCH = np.array([[-2.0, 0.0, 0.0], [-2.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
SPIN = [0.0, 0.0, 1.5]
SPIN_BATCH = np.array([[0.0, 0.0, 1.5], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
KEY_TIMES = [0.0, 1.0, 2.0]


def _key_poses(start):
    return np.stack([start, tc.Pose.from_rotvec([0.2, 0.0, 0.9], [0.3, 0.1, 0.0]).matrix,
                     tc.Pose.from_rotvec([0.4, 0.1, 1.5], [-2.0, 0.0, 0.0]).matrix])


def _callable_pose(t):
    """Origin moves at speed 2, turns at 1 rad per unit time."""
    return tc.Pose.from_rotvec([0.0, 0.0, 0.3 + t], [2.0 - 2.0 * t, 0.2, 0.1]).matrix


def _callable_poses(times):
    times = np.asarray(times, dtype=np.float64)
    rotvec = np.zeros((len(times), 3))
    rotvec[:, 2] = 0.3 + times
    translation = np.stack([2.0 - 2.0 * times, 0.2 + 2.0 * np.arange(len(times)), 0.1 + 0.0 * times], axis=1)
    return tc.Pose.from_rotvec(rotvec, translation).matrix


def _single_motions():
    return {
        "static": tc.Static(START),
        "linear": tc.Linear(VELOCITY, START),
        "screw": tc.Screw(VELOCITY, SPIN, START),
        "screw_center": tc.Screw(VELOCITY, [0.5, 0.0, 1.0], START.matrix, center=[1.5, 0.0, 0.0]),
        "keyframes": tc.Keyframes(KEY_TIMES, _key_poses(START.matrix)),
        "keyframes_pose": tc.Keyframes(np.array(KEY_TIMES), tc.Pose(_key_poses(START.matrix))),
        "integrated": tc.Integrated(lambda t: (VELOCITY, [0.0, 0.0, 1.0]), START, t_end=T_MAX, steps=8),
        "integrated_center": tc.Integrated(lambda t: (VELOCITY, [0.0, 0.5, 0.0]), START.matrix, t_end=T_MAX,
                                           steps=4, center=lambda t: np.array([2.0 - 2.0 * t, 0.0, 0.0])),
        "callable": tc.CallableMotion(_callable_pose, 2.0, 1.0),
    }


def _batch_motions():
    w = np.tile([0.0, 0.0, 1.0], (N, 1))
    return {
        "static": tc.Static(START_BATCH),
        "linear": tc.Linear(VELOCITY_BATCH, START_BATCH),
        "linear_one_velocity": tc.Linear(VELOCITY, START_BATCH),
        "linear_one_pose": tc.Linear(VELOCITY_BATCH, START),
        "screw": tc.Screw(VELOCITY_BATCH, SPIN_BATCH, START_BATCH),
        "screw_center": tc.Screw(VELOCITY, SPIN_BATCH, START.matrix, center=np.ones((N, 3))),
        "keyframes": tc.Keyframes(KEY_TIMES, np.stack([_key_poses(p) for p in START_BATCH])),
        "integrated": tc.Integrated(lambda t: (VELOCITY_BATCH, w), START_BATCH, t_end=T_MAX, steps=4),
        "callable": tc.CallableMotion(_callable_poses, 2.0, np.array([1.0, 1.0, 1.0]), batch=N),
    }


def _quadratic(start=None):
    m0 = np.array(START.matrix if start is None else start)
    m1 = np.zeros((4, 4))
    m1[:3, 3] = VELOCITY
    m2 = np.zeros((4, 4))
    m2[:3, :3] = [[0.0, -0.05, 0.0], [0.05, 0.0, 0.0], [0.0, 0.0, 0.0]]
    return m0, m1, m2


def _impact(result):
    _touch(result, *_IMPACT_FIELDS)


# ---------------------------------------------------------------------------------------------
# shapes and poses
def section_shapes():
    for shape in SHAPES.values():
        shape.packed()
        repr(shape)
        shape.scale
        pickle.loads(pickle.dumps(shape))
        tc.as_shape(shape)
    len(tc.SUPPORTED_PAIRS), list(tc.Status), list(tc.ImpactStatus), list(tc.SetKind)
    s = SHAPES
    s["point"].position
    s["sphere"].radius, s["sphere"].center
    s["segment"].a, s["segment"].b
    s["capsule"].radius, s["capsule"].a, s["capsule"].b, s["capsule"].length
    s["ray"].origin, s["ray"].direction, s["line"].origin
    s["plane"].normal, s["plane"].offset, s["halfspace"].normal
    s["cylinder"].radius, s["cylinder"].length, s["cone"].radius, s["cone"].length
    s["ellipsoid"].radii, s["ellipsoid"].center
    s["triangle"].vertices, s["tetrahedron"].vertices
    s["box"].center, s["box"].half_extents, s["box"].extents, s["aabb"].min, s["aabb"].max
    s["polygon"].vertices, s["polygon"].normal
    poly = s["polyhedron"]
    poly.vertices, poly.faces, poly.face_planes, poly.vertex_neighbors
    s["mesh"].vertices, s["mesh"].faces, s["mesh"].bvh
    # constructors from the inputs users pass (lists, ints, float32, read-only, Fortran order,
    # sliced), each shape then queried once
    readonly = np.array(CUBE_V)
    readonly.setflags(write=False)
    faces_readonly = np.array(CUBE_F)
    faces_readonly.setflags(write=False)
    built = [
        tc.Sphere(1, center=[0, 0, 1]),
        tc.Box(np.array([1, 2, 3]), center=np.array([0, 0, 1], dtype=np.float32)),
        tc.Box.from_half_extents([0.5, 0.5, 0.5]),
        tc.Capsule(1, 0),  # length 0: a sphere
        tc.Capsule.from_points([0, 0, 0], [1, 0, 0], 0.2),
        tc.Cylinder(np.float32(0.5), 2),
        tc.Cone(1, 1),
        tc.Ellipsoid(np.array([1, 2, 3]), center=[1.0, 0.0, 0.0]),
        tc.Plane(np.array([0, 0, 2]), 1),
        tc.HalfSpace(),
        tc.Point(),
        tc.Segment(np.array([0, 0, 0]), np.array([1, 1, 1], dtype=np.float32)),
        tc.Ray([0, 0, 0], [0, 0, 3]),
        tc.Line(np.zeros(3), np.ones(3, dtype=np.float32)),
        tc.Triangle(*np.eye(3, dtype=np.float32)),
        tc.Tetrahedron(*TETRA_V.astype(int)),
        tc.AABB(np.zeros(3, dtype=int), np.ones(3, dtype=int)),
        tc.ConvexPolygon(np.array([[0, 0, 0], [2, 0, 0], [0, 2, 0]], dtype=np.int32)),
        tc.ConvexPolyhedron(readonly),
        tc.ConvexPolyhedron(np.asfortranarray(CUBE_V)),
        tc.ConvexPolyhedron(CUBE_V.tolist()),
        tc.TriangleMesh(CUBE_V.astype(np.float32), CUBE_F.astype(np.int32)),
        tc.TriangleMesh(readonly, faces_readonly),
        tc.TriangleMesh(np.asfortranarray(CUBE_V), np.asfortranarray(CUBE_F)),
        tc.TriangleMesh(CUBE_V.tolist(), CUBE_F.astype(float).tolist()),  # float faces holding integers
        tc.TriangleMesh(np.repeat(CUBE_V, 2, axis=0)[::2], CUBE_F[:, ::-1]),
    ]
    for shape in built:
        tc.intersects(shape, None, SHAPES["sphere"], RAW)
        tc.distance(SHAPES["box"], POSE, shape, None)
        _try(tc.raycast, shape, None, ORIGINS, DIRECTIONS, mode="all" if _is_mesh(shape) else "first")
    mesh = pickle.loads(pickle.dumps(SHAPES["mesh"]))
    mesh.bvh
    try:
        import trimesh
    except ImportError:  # pragma: no cover - trimesh is a test dependency
        return
    soup = trimesh.Trimesh(CUBE_V, CUBE_F, process=False)
    tc.as_shape(soup)
    tc.TriangleMesh.from_trimesh(soup)


def section_poses():
    poses = [
        tc.Pose(), tc.Pose(RAW), tc.Pose.identity(), tc.Pose.identity(2), tc.Pose.from_matrix(BATCH),
        tc.Pose.from_rt(np.eye(3), [1, 2, 3]), tc.Pose.from_rt(translation=np.zeros((2, 3))),
        tc.Pose.from_translation([1, 0, 0]), tc.Pose.from_translation(np.zeros((2, 3), dtype=np.float32)),
        tc.Pose.from_quaternion([1, 0, 0, 0], order="wxyz"),
        tc.Pose.from_quaternion([[0, 0, 0, 1], [0, 0, 1, 1]], [[1, 2, 3], [0, 0, 0]], order="xyzw"),
        tc.Pose.from_rotvec([0, 0, 1]), tc.Pose.from_rotvec(np.zeros((2, 3)), np.ones((2, 3))),
        tc.Pose.random(), tc.Pose.random(4, scale=2.0, seed=1),
        tc.Pose(np.eye(4, dtype=int)), tc.Pose(np.eye(4).tolist()), tc.Pose(np.asfortranarray(RAW)),
    ]
    from scipy.spatial.transform import Rotation

    poses.append(tc.Pose.from_scipy(Rotation.from_rotvec([0.1, 0.2, 0.3]), [1.0, 0.0, 0.0]))
    poses.append(tc.Pose.from_scipy(Rotation.from_rotvec(np.zeros((2, 3)))))
    for pose in poses:
        pose.rotation, pose.translation, pose.is_batch, repr(pose)
        pose.as_quaternion("wxyz"), pose.as_quaternion("xyzw"), pose.as_rotvec()
        pose.inverse()
        pose.apply([1.0, 2.0, 3.0])
        pose.apply_vectors(np.ones((1, 3)))
        (pose @ POSE).compose(POSE)
        if pose.is_batch:
            len(pose), pose[0], pose[:1]


# ---------------------------------------------------------------------------------------------
# the verbs on every pair of shape kinds (both orders)
def _pairs():
    for a in SHAPES.values():
        for b in SHAPES.values():
            yield a, b


def section_intersects():
    for a, b in _pairs():
        for pose_a, pose_b in PAIR_POSES:
            _answered(dispatch.INTERSECTS, a.kind, b.kind, tc.intersects, a, pose_a, b, pose_b)


def section_distance():
    for a, b in _pairs():
        for pose_a, pose_b in PAIR_POSES:
            _touch(_answered(dispatch.DISTANCE, a.kind, b.kind, tc.distance, a, pose_a, b, pose_b),
                   *_DISTANCE_FIELDS)


def section_margins_and_bounds():
    """intersects(margin=) and distance(lower_bound_only=True) on every pair (issue 19)."""
    for a, b in _pairs():
        for pose_a, pose_b in ((None, RAW), (POSE_BATCH, POSE)):
            _answered(dispatch.INTERSECTS, a.kind, b.kind, tc.intersects, a, pose_a, b, pose_b, margin=0.25)
            _touch(_answered(dispatch.DISTANCE, a.kind, b.kind, tc.distance, a, pose_a, b, pose_b,
                             lower_bound_only=True), *_DISTANCE_FIELDS)


def section_signed_distance():
    for a, b in _pairs():
        _answered(dispatch.SIGNED_DISTANCE, a.kind, b.kind, tc.signed_distance, a, None, b, RAW)
        _answered(dispatch.SIGNED_DISTANCE, a.kind, b.kind, tc.signed_distance, a, POSE_BATCH, b, POSE)


def section_contacts():
    for a, b in _pairs():
        def contacts(*args, **kwargs):
            return _answered(dispatch.CONTACTS, a.kind, b.kind, tc.contacts, *args, **kwargs)

        for pose_a, pose_b in PAIR_POSES:
            _touch(contacts(a, pose_a, b, pose_b), "points", "depths", "normal", "count", "status")
        contacts(a, POSE, b, None, max_points=1, margin=0.5)
        contacts(a, BATCH, b, RAW, max_points=8, margin=0.1)


def section_intersection():
    for a, b in _pairs():
        for pose_a, pose_b in PAIR_POSES:
            result = _answered(dispatch.INTERSECTION, a.kind, b.kind, tc.intersection, a, pose_a, b, pose_b)
            _touch(result, "kind", "points", "count", "faces")


def section_time_of_impact_pairs():
    """time_of_impact on every pair with translations (single, batch, a pose as Static), both
    orders; meshes and planes included."""
    verb = dispatch.TIME_OF_IMPACT[dispatch.TRANSLATION]
    for a, b in _pairs():
        def cast(*args):
            return _answered(verb, a.kind, b.kind, tc.time_of_impact, *args)

        _impact(cast(a, tc.Linear(VELOCITY, START), b, None, T_MAX))
        _impact(cast(a, tc.Linear(VELOCITY_BATCH, START_BATCH), b, tc.Static(), T_MAX))
        _impact(cast(a, POSE, b, tc.Linear([0.0, 0.0, 0.5], RAW), T_MAX))


def section_clearance_pairs():
    """tc.clearance takes triangle meshes only: a GeometryError for anything else (documented)."""
    for a, b in _pairs():
        call = _clearance if _is_mesh(a) and _is_mesh(b) else (
            lambda *args, **kwargs: _documented_geometry_error(tc.clearance, *args, **kwargs))
        for pose_a, pose_b in PAIR_POSES:
            call(a, pose_a, b, pose_b)


# ---------------------------------------------------------------------------------------------
# single-shape verbs on every shape kind
def section_closest_point():
    for shape in SHAPES.values():
        def closest(*args):
            return _answered(dispatch.CLOSEST_POINT, tc.Point().kind, shape.kind, tc.closest_point, *args)

        for pose in (None, POSE, RAW):
            _touch(closest(shape, pose, POINT), "point", "distance", "status")
            _touch(closest(shape, pose, POINTS), "point", "distance", "status")
        closest(shape, BATCH, POINTS)
        closest(shape, POSE_BATCH, POINTS)
        closest(shape, BATCH[:1], POINTS)
        closest(shape, BATCH[1:2], POINT)


def section_raycast():
    limits = np.array([1.0, np.inf, 10.0])
    ray_kind = tc.Ray([0.0, 0.0, 0.0], [0.0, 0.0, 1.0]).kind
    for shape in SHAPES.values():
        if not _ray_ok(shape):
            continue

        def cast(*args, **kwargs):
            return _answered(dispatch.RAYCAST, ray_kind, shape.kind, tc.raycast, *args, **kwargs)

        for solid in (True, False):
            for pose in (None, POSE, RAW):
                _touch(cast(shape, pose, ORIGINS[0], DIRECTIONS[0], solid=solid), "hit", "t", "point", "normal", "face")
                _touch(cast(shape, pose, ORIGINS, DIRECTIONS, 5.0, solid=solid), "hit", "t")
            cast(shape, BATCH, ORIGINS, DIRECTIONS[0], max_t=limits, solid=solid)
            cast(shape, POSE_BATCH, ORIGINS[1], DIRECTIONS, solid=solid)
            cast(shape, BATCH[:1], ORIGINS[2], DIRECTIONS[2], max_t=limits[:1], solid=solid)


def section_raycast_modes():
    """mode="first" / "any" / "all" on every shape (meshes answer all three; "all" raises
    UnsupportedQuery for the others)."""
    for shape in list(SHAPES.values()) + [CUBE_MESH, OPEN_MESH]:
        for mode in ("first", "any", "all"):
            if not _ray_ok(shape, mode):
                continue
            for pose in (None, POSE):
                hits = _try(tc.raycast, shape, pose, ORIGINS, DIRECTIONS, mode=mode)
                if isinstance(hits, tc.meshquery.RayHits):
                    len(hits), hits.counts(len(ORIGINS)), repr(hits), hits.ray, hits.t, hits.face, hits.point
            _try(tc.raycast, shape, BATCH, ORIGINS, DIRECTIONS, np.array([0.5, 5.0, np.inf]), mode=mode)
            _try(tc.raycast, shape, RAW, ORIGINS[0], DIRECTIONS[0], 3.0, mode=mode)
            _try(tc.raycast, shape, None, ORIGINS[1], DIRECTIONS, mode=mode, solid=False)


def section_mesh_point_queries():
    """contains / winding_number / signed_distance_points: closed meshes; open meshes raise a
    GeometryError unless open_ok=True; other shapes raise a GeometryError (documented)."""
    for shape in list(SHAPES.values()) + [CUBE_MESH]:
        call = (lambda f, *a, **k: f(*a, **k)) if _is_mesh(shape) else _documented_geometry_error
        for pose in (None, POSE, RAW):
            call(tc.contains, shape, pose, POINT)
            call(tc.contains, shape, pose, POINTS)
            call(tc.winding_number, shape, pose, POINT)
            call(tc.winding_number, shape, pose, POINTS)
            call(tc.signed_distance_points, shape, pose, POINT)
            call(tc.signed_distance_points, shape, pose, POINTS)
        call(tc.contains, shape, BATCH, POINTS)
        call(tc.winding_number, shape, POSE_BATCH, POINTS)
        call(tc.signed_distance_points, shape, BATCH, POINTS)
        call(tc.contains, shape, BATCH[:1], POINT)
    # surface points (the exact winding-number path), open meshes
    on_surface = np.array([[0.25, 0.25, 0.0], [0.0, 0.0, 0.0], [0.2, 0.2, 0.6]])
    tc.contains(SHAPES["mesh"], None, on_surface)
    tc.signed_distance_points(SHAPES["mesh"], None, on_surface)
    for function in (tc.contains, tc.signed_distance_points):
        _documented_geometry_error(function, OPEN_MESH, None, POINTS)
        function(OPEN_MESH, None, POINTS, open_ok=True)
        function(OPEN_MESH, POSE_BATCH, POINTS, open_ok=True)
    tc.winding_number(OPEN_MESH, None, POINTS)


def section_triangle_clearance():
    tri_a = TETRA_V[TETRA_F[0]]
    tri_b = TETRA_V[TETRA_F[1]] + [0.2, 0.1, 0.0]
    batch_a = TETRA_V[TETRA_F]
    batch_b = batch_a + [0.3, 0.2, 0.1]
    degenerate = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    for a, b in ((tri_a, tri_b), (tri_a, batch_b), (batch_a, tri_b), (batch_a, batch_b), (degenerate, tri_a),
                 (tri_a.tolist(), tri_b.astype(np.float32)), (degenerate, degenerate)):
        _touch(_triangle_clearance(a, b), "intersecting", "distance", "point_a", "point_b", "vector")


# ---------------------------------------------------------------------------------------------
# time of impact: every motion class
def section_motions():
    """The motion objects themselves: pose_at, packed, batch_size, is_batch, repr."""
    for motion in list(_single_motions().values()) + list(_batch_motions().values()):
        motion.pose_at(0.5), motion.batch_size, motion.is_batch, repr(motion), motion.pose
        if motion.kernel_form:
            motion.packed()
    for quadratic in (tc.QuadraticMatrix(*_quadratic()), tc.QuadraticMatrix(np.stack(_quadratic())),
                      tc.QuadraticMatrix(np.stack([np.stack(_quadratic(p)) for p in START_BATCH])),
                      tc.QuadraticMatrix.from_motion(tc.Linear(VELOCITY, START)),
                      tc.QuadraticMatrix.from_motion(tc.Linear(VELOCITY_BATCH, START_BATCH)),
                      tc.QuadraticMatrix(START.matrix)):
        quadratic.pose_at(0.5), quadratic.batch_size, quadratic.is_batch, repr(quadratic)
    tc.motion.as_motion(None), tc.motion.as_motion(RAW), tc.motion.as_motion(POSE), tc.motion.as_motion(BATCH)


def _toi_convex_against(partners):
    singles, batches = _single_motions(), _batch_motions()
    for name in FINITE_CONVEX:
        shape = SHAPES[name]
        for partner in partners:
            other = SHAPES[partner]
            for motion in singles.values():
                _impact(_try(tc.time_of_impact, shape, motion, other, None, T_MAX))
                _impact(_try(tc.time_of_impact, other, tc.Static(), shape, motion, T_MAX))
            for motion in batches.values():
                _impact(_try(tc.time_of_impact, shape, motion, other, tc.Static(), T_MAX))
                _impact(_try(tc.time_of_impact, other, None, shape, motion, T_MAX))


def section_toi_convex_vs_box():
    _toi_convex_against(("box", "aabb"))


def section_toi_convex_vs_sphere():
    _toi_convex_against(("sphere",))


def section_toi_two_motions():
    """Both shapes moving: every single motion class against every other, one batch pair."""
    motions = _single_motions()
    singles = list(motions.values())
    box, capsule = SHAPES["box"], SHAPES["capsule"]
    for motion_a in singles:
        for motion_b in singles:
            _impact(_try(tc.time_of_impact, capsule, motion_a, box, motion_b, T_MAX))
    batches = _batch_motions()
    for motion in batches.values():
        _impact(_try(tc.time_of_impact, capsule, motion, box, batches["screw"], T_MAX))
        _impact(_try(tc.time_of_impact, capsule, motion, box, tc.Linear([0.1, 0.0, 0.0], START_BATCH), T_MAX))
    # tolerance, infinite horizon on the exact engines, a pose (Static) for a motion
    _impact(tc.time_of_impact(capsule, motions["screw"], box, None, T_MAX, tolerance=1e-6))
    _impact(tc.time_of_impact(box, tc.Linear(VELOCITY, START), SHAPES["polyhedron"], RAW, np.inf))
    _impact(tc.time_of_impact(SHAPES["sphere"], tc.Linear(VELOCITY, START), SHAPES["sphere"], None, np.inf))
    _impact(tc.time_of_impact(SHAPES["sphere"], tc.Linear(VELOCITY, START), capsule, POSE, float("inf")))
    _impact(tc.time_of_impact(box, tc.Linear(VELOCITY, _translation(2.0)), SHAPES["aabb"], None, 3))


def section_toi_meshes():
    """Meshes under every motion class: mesh-mesh, mesh-convex, mesh-plane, both orders."""
    mesh, cube = SHAPES["mesh"], CUBE_MESH
    partners = (mesh, cube, SHAPES["sphere"], SHAPES["box"], SHAPES["capsule"], SHAPES["polyhedron"])
    for name, motion in _single_motions().items():
        for other in partners:
            _impact(_try(tc.time_of_impact, mesh, motion, other, None, T_MAX))
            _impact(_try(tc.time_of_impact, other, tc.Static(), cube, motion, T_MAX))
        for plane in PLANES:
            _impact(_try(tc.time_of_impact, cube, motion, SHAPES[plane], tc.Static(_translation(0.0, 0.0, -1.0)),
                         T_MAX))
            _impact(_try(tc.time_of_impact, SHAPES[plane], tc.Linear([0.0, 0.0, 0.5], _translation(0, 0, -3.0)),
                         mesh, motion, T_MAX))
    for name, motion in _batch_motions().items():
        if name == "callable":  # a CallableMotion batch on a mesh: UnsupportedQuery (documented)
            _try(tc.time_of_impact, mesh, motion, cube, None, T_MAX)
            continue
        for other in partners:
            _impact(_try(tc.time_of_impact, mesh, motion, other, tc.Static(), T_MAX))
            _impact(_try(tc.time_of_impact, other, None, cube, motion, T_MAX))
        _impact(_try(tc.time_of_impact, cube, motion, SHAPES["plane"], None, T_MAX))
    # a plane must translate (documented GeometryError), a callable plane too
    _documented_geometry_error(tc.time_of_impact, SHAPES["halfspace"], tc.Screw(VELOCITY, SPIN), mesh, None, T_MAX)
    _documented_geometry_error(tc.time_of_impact, mesh, None, SHAPES["plane"],
                               tc.CallableMotion(_callable_pose, 2.0, 1.0), T_MAX)
    _impact(tc.time_of_impact(mesh, tc.Linear(VELOCITY, START), cube, None, T_MAX, tolerance=1e-4))


def section_toi_planes():
    """Planes / half-spaces against convex shapes under every motion of the convex shape (the
    plane static or translating); a rotating plane is a documented GeometryError."""
    singles, batches = _single_motions(), _batch_motions()
    for plane_name in PLANES:
        plane = SHAPES[plane_name]
        for name in ("point", "segment", "triangle", "sphere", "capsule", "box", "cylinder", "cone", "ellipsoid",
                     "polygon", "polyhedron"):
            shape = SHAPES[name]
            for motion in singles.values():
                _impact(_try(tc.time_of_impact, shape, motion, plane, tc.Static(_translation(0, 0, -1.0)), T_MAX))
                _impact(_try(tc.time_of_impact, plane, tc.Linear([0.0, 0.0, 0.2]), shape, motion, T_MAX))
            for motion in batches.values():
                _impact(_try(tc.time_of_impact, shape, motion, plane, None, T_MAX))
                _impact(_try(tc.time_of_impact, plane, tc.Static(), shape, motion, T_MAX))
        _try(tc.time_of_impact, plane, None, SHAPES["plane"], tc.Linear(VELOCITY), T_MAX)  # plane-plane
        _documented_geometry_error(tc.time_of_impact, plane, tc.Screw(VELOCITY, SPIN), SHAPES["box"], None, T_MAX)
        _try(tc.time_of_impact, SHAPES["sphere"], None, plane, tc.CallableMotion(_callable_pose, 2.0, 1.0), T_MAX)


def section_toi_quadratic():
    """QuadraticMatrix motions: box-box (AABB is a box) exact; other pairs UnsupportedQuery;
    an infinite t_max is a documented GeometryError."""
    box, aabb = SHAPES["box"], SHAPES["aabb"]
    single = tc.QuadraticMatrix(*_quadratic())
    stacked = tc.QuadraticMatrix(np.stack(_quadratic()))
    batch = tc.QuadraticMatrix(np.stack([np.stack(_quadratic(p)) for p in START_BATCH]))
    for motion in (single, stacked, batch):
        for other_motion in (None, tc.Static(), tc.Linear([0.1, 0.0, 0.0]), single, batch,
                             tc.Linear(VELOCITY_BATCH, np.tile(np.eye(4), (N, 1, 1)))):
            _impact(_try(tc.time_of_impact, box, motion, aabb, other_motion, T_MAX))
            _impact(_try(tc.time_of_impact, aabb, other_motion, box, motion, T_MAX))
        _try(tc.time_of_impact, SHAPES["sphere"], motion, box, None, T_MAX)
        _try(tc.time_of_impact, box, motion, box, tc.Screw(VELOCITY, SPIN), T_MAX)
        _try(tc.time_of_impact, box, motion, CUBE_MESH, None, T_MAX)
        _documented_geometry_error(tc.time_of_impact, box, motion, box, None, np.inf)


# ---------------------------------------------------------------------------------------------
# modules
def section_convex():
    from touche import convex

    convex_names = FINITE_CONVEX
    for name_a in SHAPES:
        for name_b in SHAPES:
            a, b = SHAPES[name_a], SHAPES[name_b]
            if name_a not in convex_names or name_b not in convex_names:
                _try(convex.gjk, a, None, b, None)
                _try(convex.shape_cast, a, None, VELOCITY, b, None, [0.0, 0.0, 0.0], T_MAX)
                continue
            first = convex.gjk(a, POSE, b, RAW)
            _touch(first, "signed_distance", "point_a", "point_b", "normal", "status", "iterations", "distance",
                   "depth", "warm_start")
            convex.gjk(a, POSE, b, RAW, warm_start=first.warm_start)
            batch = convex.gjk(a, BATCH, b, None)
            _touch(batch, "distance", "depth", "iterations")
            convex.gjk(a, BATCH, b, POSE, warm_start=batch.warm_start)
            convex.gjk(a, None, b, POSE_BATCH)
            _touch(convex.penetration(a, None, b, None), "depth", "normal")
            convex.penetration(a, POSE_BATCH, b, RAW)
            convex.intersects(a, POSE, b, RAW)
            convex.intersects(a, BATCH, b, POSE_BATCH)
            cast = convex.shape_cast(a, tc.Pose.from_translation([2.0, 0.0, 0.0]), VELOCITY, b, None, [0, 0, 0],
                                     T_MAX)
            _touch(cast, "status", "t", "point", "normal")
            convex.shape_cast(a, START_BATCH, VELOCITY_BATCH, b, POSE, [0.0, 0.1, 0.0], T_MAX)
            convex.shape_cast(a, START, VELOCITY_BATCH, b, None, VELOCITY_BATCH * 0.0, 5)
    convex.GJKStatus(0), convex.CastStatus(1)


def section_planar():
    from touche import planar

    square = [[0, 0], [1, 0], [1, 1], [0, 1]]
    clockwise = [[0.0, 0.0], [0.0, 1.0], [1.0, 1.0], [1.0, 0.0]]
    triangle = np.array([[0.5, 0.5], [2.0, 0.5], [0.5, 2.0]])
    segment = [[0.2, -1.0], [0.2, 3.0]]
    point = [[0.5, 0.5]]
    degenerate_segment = [[3.0, 3.0], [3.0, 3.0]]
    translations = np.array([[0.0, 0.0], [0.5, 0.5], [5.0, 0.0]])
    squares = planar.place(square, translations)
    turned = planar.place(square, translations, angles=[0.0, 0.3, 1.0])
    planar.place(square, [0.5, 0.5], angles=0.4)
    shapes = (square, clockwise, triangle, segment, point, degenerate_segment, squares, turned)
    for a in shapes:
        for b in shapes:
            planar.intersects(a, b)
            kind_points = planar.intersection(a, b)
            kind_points[0], kind_points[1]
            for va, vb, t_max in (([1.0, 0.0], [0.0, 0.0], 2.0), (translations, [0, 0], 1.0),
                                  ([-1, 0], [0.0, 0.5], [1.0, 2.0, 3.0])):
                _touch(planar.time_of_impact(a, va, b, vb, t_max), "status", "t_first", "t_last", "normal",
                       "kind", "points")
    _touch(planar.time_of_impact(square, [0.0, 0.0], square, [0.0, 0.0], 0.0), "status")
    planar.ImpactStatus(0)


def section_pairwise():
    from touche import pairwise

    rotation = tc.Pose.from_rotvec([0.2, 0.3, 0.4]).rotation
    center_a, axes_a, half_a = [0.0, 0.0, 0.0], np.eye(3), [0.5, 0.4, 0.3]
    center_b, axes_b, half_b = np.array([0.6, 0.2, 0.1]), rotation.T, np.array([0.3, 0.3, 0.0])
    centers = np.array([[0.6, 0.2, 0.1], [3.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    axes = np.stack([np.eye(3), rotation.T, np.eye(3)[[1, 2, 0]]])
    halves = np.array([[0.3, 0.3, 0.3], [0.1, 0.2, 0.3], [0.0, 0.0, 0.0]])
    tri = TETRA_V[TETRA_F[1]]
    tris = TETRA_V[TETRA_F[:3]] + [0.2, 0.1, 0.0]
    degenerate = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    for box_b in ((center_b, axes_b, half_b), (centers, axes, halves), (centers[0], axes, half_b)):
        pairwise.obb_obb_intersects(center_a, axes_a, half_a, *box_b)
        _touch(pairwise.obb_obb_time_of_impact(center_a, axes_a, half_a, *box_b, [1, 0, 0], [0, 0, 0], 2.0),
               "status", "time", "point", "normal")
        pairwise.obb_obb_time_of_impact(center_a, axes_a, half_a, *box_b, [-1.0, 0.0, 0.0], np.zeros((N, 3)),
                                        [1.0, 2.0, np.inf])
        for t in (tri, tris, degenerate):
            pairwise.triangle_obb_intersects(t, *box_b)
            pairwise.triangle_obb_time_of_impact(t, *box_b, [0.0, 0.0, 1.0], [0.0, 0.0, 0.0], 1.0)
            pairwise.triangle_obb_time_of_impact(t, *box_b, VELOCITY_BATCH, [0.0, 0.0, 0.0], np.inf)
    for a in (tri, tris, degenerate):
        for b in (tri + 0.1, tris, degenerate):
            pairwise.triangle_triangle_intersects(a, b)
            pairwise.triangle_triangle_intersection(a, b)
            pairwise.triangle_triangle_time_of_impact(a, b, [0.0, 0.0, 1.0], [0, 0, 0], 2.0)
            pairwise.triangle_triangle_time_of_impact(a, b, VELOCITY_BATCH, [0.0, 0.0, 0.0], [1.0, 1.0, 1.0])
    coplanar = np.array([[0.2, 0.2, 0.0], [2.0, 0.2, 0.0], [0.2, 2.0, 0.0]])
    pairwise.triangle_triangle_intersection(TETRA_V[[0, 1, 2]], coplanar)


def section_lp():
    from touche import lp

    square = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    cube = np.concatenate([np.eye(3), -np.eye(3)])
    for c, A, b in (([1.0, 1.0], square, [1.0, 1.0, 1.0, 1.0]),
                    ([1, 2, 3], cube, np.ones(6)),
                    ([1.0, 0.0], square[:1], [1.0]),  # unbounded
                    ([1.0, 0.0, 0.0], cube, -np.ones(6))):  # infeasible
        _touch(lp.linprog(c, A, b), "status", "x", "value")
        lp.linprog(c, A, b, seed=7)
        _touch(lp.feasible_point(A, b), "status", "x", "radius")
        _touch(lp.fourier_motzkin(A, b), "status", "lower", "upper")
        lp.fourier_motzkin(A, b, exact=True)
    lp.fourier_motzkin(np.array([[1.0], [-1.0]]), [1.0, 0.0])
    for name_a in list(POLYTOPES) + ["sphere"]:
        for name_b in list(POLYTOPES) + ["mesh"]:
            a, b = SHAPES[name_a], SHAPES[name_b]
            for method in ("lp", "chung-wang"):
                _try(lp.polytopes_intersect, a, POSE, b, RAW, method=method)
                _try(lp.polytopes_intersect, a, None, b, None, method=method, return_witness=True)
                _try(lp.polytopes_intersect, a, BATCH, b, POSE, method=method, max_iterations=2, seed=3)
                _try(lp.polytopes_intersect, a, POSE_BATCH, b, BATCH, method=method, return_witness=True)
            _touch(_try(lp.separating_vector, a, None, b, FAR), "status", "vector", "iterations")
            _try(lp.separating_vector, a, POSE, b, RAW, initial=[1.0, 0.0, 0.0], max_iterations=5)
            _try(lp.separating_vector, a, BATCH, b, None)
            _try(lp.separating_vector, a, BATCH, b, POSE_BATCH, initial=np.ones((N, 3)))


def section_bounding():
    from touche import bounding as bv

    rng = np.random.default_rng(5)
    cloud = rng.normal(size=(20, 3))
    flat = np.column_stack([rng.normal(size=(12, 2)), np.zeros(12)])
    line = np.outer(np.linspace(0.0, 1.0, 6), [1.0, 2.0, 3.0])
    for points in (cloud, flat, line, np.array([1.0, 2.0, 3.0]), TETRA_V):
        volumes = [
            bv.aabb(points), bv.sphere_ritter(points), bv.sphere_iterative(points), bv.sphere_iterative(points, 2, 9),
            bv.sphere_welzl(points), bv.sphere_welzl(points, seed=4), bv.sphere_pca(points), bv.obb_pca(points),
            bv.obb_hull_pca(points), bv.obb_brute_force(points, steps=3, refine_rounds=2),
            bv.obb_min_volume(points, max_faces=8, restarts=1), bv.capsule(points), bv.lozenge(points),
            bv.rss(points),
        ] + [bv.kdop(points, k) for k in bv.KDOP_DIRECTIONS]
        for volume in volumes:
            volume.volume()
            volume.contains(cloud)
            volume.contains(cloud[0], tolerance=0.1)
            bv.merge(volume, volume)
    box = bv.aabb(cloud)
    bv.aabb_rotated(box, POSE.rotation, [1.0, 2.0, 3.0])
    bv.aabb_rotated(box, np.eye(3))
    box.center, box.half_extents, box.corners(), box.to_shape()
    bv.sphere_welzl(cloud).to_shape()
    bv.obb_min_volume(cloud).to_box()
    bv.obb_min_volume(cloud).corners()
    bv.capsule(cloud).to_shape()
    bv.lozenge(cloud).corners()
    bv.obb_triangles(CUBE_V, CUBE_F)
    bv.obb_triangles(TETRA_V, TETRA_F[:1])
    bv.obb_triangles(np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]), [[0, 1, 2]])
    bv.merge(bv.aabb(cloud), bv.aabb(flat))
    bv.merge(bv.sphere_welzl(cloud), bv.sphere_welzl(flat + 5.0))
    bv.merge(bv.obb_pca(cloud), bv.obb_pca(flat))
    bv.merge(bv.kdop(cloud, 18), bv.kdop(flat, 18))
    bv.merge(bv.capsule(cloud), bv.capsule(line))
    bv.merge(bv.lozenge(cloud), bv.lozenge(flat))


def section_bvh():
    from touche import bvh

    a, b = CUBE_MESH, SHAPES["mesh"]
    trees = {}
    for split in bvh.SPLITS:
        for kdop in (None,) + bvh.KDOPS:
            for leaf_size in (1, 2):
                tree = bvh.build(a, split=split, leaf_size=leaf_size, kdop=kdop)
                repr(tree), tree.node_count
                trees[split, kdop, leaf_size] = tree
    bvh.BVH(TETRA_V, TETRA_F)
    from touche.cli import _uv_sphere

    bvh.build(tc.TriangleMesh(*_uv_sphere(2 * bvh.PARALLEL_BUILD_MIN_TRIANGLES)))  # a big mesh: threads
    bvh.BVH(b, None, split="median", kdop=8)
    tree_b = {kdop: bvh.build(b, kdop=kdop) for kdop in (None,) + bvh.KDOPS}
    pickle.loads(pickle.dumps(trees["sah", 18, 1]))
    bvh.tree_of(a)
    poses = ((None, None), (POSE, RAW), (RAW, POSE), (BATCH, None), (None, POSE_BATCH), (BATCH[:1], None),
             (POSE_BATCH, BATCH))
    for bv_name in bvh.BOUNDING_VOLUMES:
        for (split, kdop, leaf_size), tree in trees.items():
            if bv_name == "kdop" and kdop is None:
                _documented_geometry_error(bvh.intersects, tree, None, tree_b[None], None, bv="kdop")
                continue
            other = tree_b[kdop if bv_name == "kdop" else None]
            for pose_a, pose_b in poses:
                bvh.intersects(tree, pose_a, other, pose_b, bv=bv_name)
        if bv_name != "kdop":  # meshes carry their default tree (no k-DOPs)
            for pose_a, pose_b in poses:
                bvh.intersects(a, pose_a, b, pose_b, bv=bv_name)
    for pose_a, pose_b in poses:
        _touch(bvh.distance(a, pose_a, b, pose_b), "distance", "point_a", "point_b", "triangle_a", "triangle_b")
        bvh.distance(trees["median", None, 2], pose_a, tree_b[None], pose_b)
    seen = []

    def callback(contact):
        seen.append(contact)
        repr(contact)
        return len(seen) < 2

    for bv_name in bvh.BOUNDING_VOLUMES:
        kdop = 14 if bv_name == "kdop" else None
        ta, tb = trees["sah", kdop, 1], tree_b[kdop]
        for pose_a, pose_b in ((None, None), (POSE, RAW)):
            result = bvh.collide(ta, pose_a, tb, pose_b, bv=bv_name)
            len(result), repr(result), result.pairs, result.node_pairs, result.segments, result.complete
            bvh.collide(ta, pose_a, tb, pose_b, bv=bv_name, depth_a=1, depth_b=0)
            bvh.collide(ta, pose_a, tb, pose_b, bv=bv_name, max_pairs=1)
            bvh.collide(ta, pose_a, tb, pose_b, bv=bv_name, depth_a=0, callback=callback)
            seen.clear()
            if bv_name != "kdop":
                bvh.collide(a, pose_a, b, pose_b, bv=bv_name, callback=callback)
                seen.clear()
    for first, second in ((a, b), (trees["mean", None, 1], tree_b[None]), (b, b)):
        pair = bvh.CoherentPair(first, second)
        for k in range(4):
            pose = tc.Pose.from_rotvec([0.0, 0.0, 0.1 * k], [0.3 * k, 0.1, 0.0])
            pair.intersects(None, pose)
            _touch(pair.distance(pose.matrix, None), "distance", "triangle_a")
        pair.front_size, repr(pair)
        pair.reset()
        pair.distance(None, FAR)


def section_meshquery():
    from touche import meshquery

    for mesh in (SHAPES["mesh"], CUBE_MESH, OPEN_MESH):
        meshquery.mesh_tree(mesh)
        meshquery.is_closed(mesh)
        meshquery.closest_point_with_face(mesh, None, POINT)
        meshquery.closest_point_with_face(mesh, POSE, POINTS)
        meshquery.closest_point_with_face(mesh, BATCH, POINTS)
        hits = meshquery.raycast_all(mesh, None, ORIGINS, DIRECTIONS)
        hits.counts(len(ORIGINS))
        meshquery.raycast_all(mesh, POSE_BATCH, ORIGINS[0], DIRECTIONS, max_t=[1.0, 2.0, np.inf])
        meshquery.winding_number(mesh, RAW, POINTS)
        meshquery.contains(mesh, None, POINTS, open_ok=True)
        meshquery.signed_distance_points(mesh, BATCH, POINTS, open_ok=True)
    try:
        import trimesh
    except ImportError:  # pragma: no cover
        return
    soup = trimesh.Trimesh(CUBE_V, CUBE_F, process=False)  # converted on every call
    tc.contains(soup, None, POINTS)
    tc.winding_number(soup, None, POINT)
    tc.closest_point(soup, None, POINTS)
    tc.intersects(soup, None, SHAPES["sphere"], POSE)
    tc.distance(SHAPES["box"], None, soup, RAW)
    if _ray_ok(CUBE_MESH):
        tc.raycast(soup, None, ORIGINS, DIRECTIONS)
    tc.raycast(soup, None, ORIGINS, DIRECTIONS, mode="all")
    tc.bvh.intersects(soup, None, CUBE_MESH, RAW)
    _clearance(soup, None, CUBE_MESH, RAW)


def section_bsp():
    """touche.bsp (issue 19): the three tree types from every mesh form, every query with the
    input variants, and solid meshes in mesh-mesh intersects."""
    from touche import bsp

    import trimesh

    solid = bsp.SolidBSP.from_mesh(CUBE_MESH)
    bsp.SolidBSP(CUBE_V.tolist(), CUBE_F.astype(np.int32), split_weight=0.5, max_candidates=2, seed=3)
    bsp.SolidBSP.from_mesh(trimesh.Trimesh(CUBE_V, CUBE_F, process=False), axis_cuts=False)
    node = bsp.NodeBSP.from_mesh((CUBE_V.astype(np.float32), CUBE_F))
    leaf = bsp.LeafBSP.from_mesh(SHAPES["mesh"], leaf_size=2, max_depth=4)
    for points in _point_variants():
        solid.contains(points)
        solid.locate(points)
        leaf.locate(points)
        solid.sphere_intersects(points, 0.2)
    solid.sphere_intersects(POINTS, [0.1, 0.2, 0.3])
    solid.sphere_intersects(POINTS.astype(np.float32), np.array([1, 0, 2]))
    for limit in _limit_variants():
        for tree in (solid, node, leaf):
            tree.raycast(ORIGINS, DIRECTIONS, limit)
    for vector in _vector_variants():
        solid.raycast(ORIGINS[0], vector)
        node.raycast(ORIGINS.astype(np.float32), vector)
    for pose in _pose_variants():
        solid.polytope_intersects(SHAPES["box"], pose)
    for batch in _batch_variants():
        solid.polytope_intersects(SHAPES["polyhedron"], batch)
    for name in ("triangle", "tetrahedron", "polygon", "aabb"):
        if name in SHAPES:
            solid.polytope_intersects(SHAPES[name], POSE)
    solid.fragments()
    leaf.leaf_polygons(0)
    repr(solid)
    cube = CUBE_MESH.as_solid()
    tc.TriangleMesh(CUBE_V, CUBE_F, solid=True)
    tc.intersects(cube, None, cube, POSE)
    tc.intersects(cube, None, CUBE_MESH, FAR)
    tc.intersects(cube, BATCH, cube, None)
    # the vertex depth of interpenetrating solids (solid_depth), one solid or two, single and batch
    _touch(tc.distance(cube, None, cube, _translation(0.3, 0.1)), "signed_distance", "status")
    tc.distance(cube, BATCH, cube, None)
    tc.distance(CUBE_MESH, POSE_BATCH, cube, _translation(0.2))
    _touch(tc.penetration_depth(cube, POSE, CUBE_MESH, _translation(0.1)), "depth", "normal")
    tc.intersects(CUBE_MESH, POSE_BATCH, cube, FAR)
    # solid meshes: penetration depth, directional separation, shapes inside (touche/solids.py)
    small = tc.TriangleMesh(CUBE_V * 0.25 + 0.1, CUBE_F, solid=True)
    tc.distance(cube, None, cube, POSE)
    tc.distance(cube, BATCH, CUBE_MESH, None)
    tc.distance(cube, None, small, None)
    tc.distance(cube, None, small, None, lower_bound_only=True)
    repr(tc.penetration_depth(cube, None, cube, POSE))
    tc.penetration_depth(CUBE_MESH, POSE_BATCH, small, None)
    tc.separating_translation(cube, None, CUBE_MESH, POSE, [1.0, 0.2, 0.0])
    tc.separating_translation(small, BATCH, cube, None, [0.0, 0.0, -1.0])
    for shape in (tc.Sphere(0.1), tc.Box([0.1, 0.1, 0.1])):  # inside the solid cube
        tc.intersects(shape, _translation(0.05), cube, None)
        tc.intersects(shape, BATCH, cube, None)
        tc.distance(cube, None, shape, _translation(0.05))
        tc.distance(shape, BATCH, cube, None)


def section_broadphase():
    from touche import broadphase

    boxes = np.array([[0, 0, 0, 1, 1, 1], [0.5, 0.5, 0.5, 2, 2, 2], [3, 3, 3, 4, 4, 4], [0.9, 0, 0, 1.5, 1, 1],
                      [-10, -10, -10, 10, 10, 10]], dtype=np.float64)
    structures = [cls() for _, cls in _structures()]
    structures += [broadphase.DynamicAABBTree(margin=0.1, predict=1.0), broadphase.DynamicAABBTree(fat_fraction=0.0),
                   broadphase.UniformGrid(cell_size=1.0, max_cells=2)]
    for structure in structures:
        len(structure), repr(structure), structure.pairs(), structure.query_aabb(boxes[0])
        structure.query_sphere([0, 0, 0], 1.0), structure.query_ray([0, 0, 0], [1, 0, 0])
        structure.rebuild(boxes)
        structure.pairs()
        structure.rebuild(boxes.tolist(), ids=[10, 11, 12, 13, 14])
        structure.prepare()
        structure.pairs()
        structure.insert(7, [0.2, 0.2, 0.2, 0.4, 0.4, 0.4])
        structure.insert(np.int64(8), np.array([5, 5, 5, 6, 6, 6]))
        structure.update(7, np.array([0.1, 0.1, 0.1, 0.3, 0.3, 0.3], dtype=np.float32))
        structure.update_many([10, 11], boxes[2:4])
        structure.update_many(np.array([12, 13], dtype=np.int32), boxes[:2].tolist())
        structure.update_many([], np.zeros((0, 6)))
        structure.pairs()
        structure.query_aabb([0, 0, 0, 1, 1, 1])
        structure.query_sphere(np.array([0.5, 0.5, 0.5]), 0.25)
        structure.query_ray([-1.0, 0.5, 0.5], [1.0, 0.0, 0.0])
        structure.query_ray([-1.0, 0.5, 0.5], [1, 0, 0], max_t=2.0, return_t=True)
        structure.remove(7)
        try:
            structure.remove(7)  # an unknown id: IdError, a documented GeometryError / KeyError
        except broadphase.IdError:
            pass
        structure.aabb(8), structure.ids, 8 in structure, structure.memory_bytes()
        structure.pairs()
        for k in range(20):  # growth past the initial capacity
            structure.insert(100 + k, [k, 0, 0, k + 1.5, 1, 1])
        structure.pairs()
        structure.query_ray([-1.0, 0.5, 0.5], [1.0, 0.0, 0.0], return_t=True)
        structure.clear()
        structure.pairs()
        if isinstance(structure, broadphase.DynamicAABBTree):
            structure.rebuild(boxes)
            structure.check(), structure.height
        if isinstance(structure, broadphase.IncrementalSweepAndPrune):
            structure.rebuild(boxes)
            structure.pair_count


def section_world():
    from touche import broadphase

    events = []

    def stop_after_one(event):
        events.append(event)
        return False

    for name, _ in _structures():
        world = tc.CollisionWorld(broadphase=name)
        world.add(tc.Sphere(0.5))
        world.add(tc.Box([1.0, 1.0, 1.0]), tc.Pose.from_translation([0.6, 0.0, 0.0]))
        world.add(tc.Capsule(0.2, 1.0), motion=tc.Linear([0.0, -2.0, 0.0], _translation(0.0, 1.5, 0.0)))
        world.step(0.5)
        world.pairs()
        world.query(tc.Sphere(1.0), None)
    world = tc.CollisionWorld(broadphase.DynamicAABBTree(), max_points=2)
    block, ball, capsule = tc.Box([1.0, 1.0, 1.0]), tc.Sphere(0.3), tc.Capsule(0.1, 0.4)
    base = world.add(block, np.eye(4), user_data="base")
    balls = [world.add(ball, tc.Pose.from_translation([0.4 * k - 0.6, 0.0, 0.6]), user_data=k) for k in range(4)]
    target = world.add(block, _translation(0.0, 5.0, 0.0))
    movers = [world.add(capsule, motion=tc.Linear([0.0, 3.0, 0.0], _translation(0.3 * k - 0.45, 3.8, 0.0)),
                        group=2) for k in range(4)]
    single = _single_motions()
    spinner = world.add(tc.Cylinder(0.2, 0.6), motion=tc.Screw([0.0, 0.0, -1.0], [0.0, 0.0, 2.0],
                                                                _translation(3.0, 0.0, 1.0)), group=2)
    world.add(block, _translation(3.0, 0.0, 0.0))
    world.add(tc.Cone(0.3, 0.6), motion=tc.Keyframes([0.0, 0.5, 1.0], np.stack(
        [_translation(-3.0, 3.0, 0.0), _translation(-3.0, 2.0, 0.0), _translation(-3.0, 1.0, 0.0)])), group=2)
    world.add(tc.Box([0.5, 0.5, 0.5]), _translation(-3.0, 1.0, 0.0))
    world.add(tc.Ellipsoid([0.3, 0.2, 0.1]), motion=tc.Integrated(
        lambda t: ([0.0, 0.0, -1.0], [0.0, 1.0, 0.0]), _translation(6.0, 0.0, 1.0), t_end=2.0, steps=8), group=2)
    world.add(tc.Sphere(0.5), _translation(6.0, 0.0, 0.0))
    world.add(tc.Tetrahedron(*TETRA_V), motion=tc.CallableMotion(lambda t: _translation(9.0, 0.0, 1.0 - t), 1.0),
              group=2, callback=lambda event: None)
    world.add(tc.Sphere(0.5), _translation(9.0, 0.0, 0.0))
    mesh_handle = world.add(CUBE_MESH, _translation(-6.0, 0.0, 0.0), user_data="mesh")
    world.add(SHAPES["mesh"], motion=tc.Linear([2.0, 0.0, 0.0], _translation(-8.0, 0.0, 0.0)), group=2)
    world.add(tc.HalfSpace([0.0, 0.0, 1.0], -2.0))  # unbounded: tested against everything
    world.add(tc.Ray([0.0, 0.0, 3.0], [0.0, 0.0, -1.0]), group=4, mask=1)  # static objects only
    world.add(tc.Triangle(*TETRA_V[:3]), _translation(-0.2, -0.2, 0.4))
    world.add(tc.Segment([0, 0, 0], [0, 0, 1]), _translation(0.2, 0.0, 0.0), group=1, mask=1)
    for dt in (0.0, 0.25, 0.25, 0.5):
        for event in world.step(dt):
            event.pair, event.normals, repr(event), event.points, event.depth, event.status, event.user_data_a
    world.add(tc.Sphere(0.2), _translation(-0.6, 0.0, 0.6), callback=stop_after_one)
    world.step(0.1)
    world.pairs()
    world.query(tc.Sphere(1.0), tc.Pose.from_translation([0.0, 0.0, 0.5]))
    world.query(tc.Box([1.0, 1.0, 1.0]), RAW, mask=2)
    world.query(tc.Plane(), None)
    _, result = world.closest(tc.Sphere(0.1), _translation(0.0, 0.0, 5.0))
    _touch(result, *_DISTANCE_FIELDS)
    world.closest(tc.Point([0.0, 0.0, 0.0]), POSE, mask=2)
    world.closest(tc.Line([0, 0, 0], [1, 0, 0]), None)
    world.closest(tc.Sphere(0.1), None, mask=8)  # no object in group 8: None
    # rays: the mesh at x = -6 is hit only along -x (first-hit mesh casts need the JIT)
    world.raycast([0.0, 0.0, 5.0], [0.0, 0.0, -1.0])
    world.raycast(np.array([0.0, 0.2, 5.0]), [0, 0, -1], max_t=10.0, mask=1)
    if not NO_JIT:
        world.raycast([0.0, 0.0, 0.0], [-1.0, 0.0, 0.0])
    world.set_pose(base, tc.Pose.from_translation([0.0, 0.0, 0.1]))
    world.set_poses(balls, np.stack([_translation(0.4 * k - 0.6, 0.0, 0.5) for k in range(4)]))
    world.set_poses(np.array(balls[:2]), tc.Pose(np.stack([np.eye(4), RAW])))
    world.set_motion(spinner, single["linear"])
    world.set_motion(spinner, single["keyframes"])
    world.set_motion(spinner, None)
    world.set_motion(movers[0], None, pose=_translation(0.0, 4.0, 0.0))
    world.set_motion(movers[1], tc.Static(), pose=RAW)
    world.set_velocity(movers[2], [0.0, 1.0, 0.0])
    world.set_velocity(movers[3], None)
    world.step(0.2)
    world.pose(target), world.motion(movers[2]), world.motion(target), world.user_data(mesh_handle)
    world.handles, len(world), target in world, repr(world)
    world.remove(balls[0])
    world.remove(mesh_handle)
    try:
        world.remove(mesh_handle)  # an unknown handle: IdError (a documented GeometryError)
    except broadphase.IdError:
        pass
    world.step(0.2)
    world.pairs()
    from touche.world import shifted_motion

    for motion in single.values():
        if not isinstance(motion, tc.Static):
            shifted_motion(motion, 0.5)


def section_mesh():
    from touche import mesh as tm

    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        paths = [tm.save(CUBE_MESH, folder / "cube.stl"), tm.save((CUBE_V, CUBE_F), folder / "cube_ascii.stl",
                                                                  ascii=True),
                 tm.save(SHAPES["mesh"], folder / "tetra.obj"), tm.save(CUBE_MESH, folder / "cube.bin", format="stl"),
                 tm.save((OPEN_V, OPEN_F), str(folder / "open.stl"))]
        for path in paths[:3] + paths[4:]:
            loaded = tm.load(path)
            tm.load(path, weld=False)
            tm.load(path, tolerance=1e-6)
            tm.as_mesh(path)
            tm.inspect(loaded)
        tm.load(paths[3], format="stl")
        tm.read_stl(paths[0])
        tm.read_stl(paths[1])
        tm.parse_stl(paths[0].read_bytes(), name="cube")
        for broken in (paths[0].read_bytes()[:-7], b"solid x\nfacet normal 0 0 1\nendsolid x\n", b"\x00" * 10):
            try:
                tm.parse_stl(broken)
            except MeshFormatError:  # documented answer for a malformed file
                pass
    tm.as_mesh((CUBE_V, CUBE_F)), tm.as_mesh(CUBE_MESH)
    tm.face_normals(CUBE_V, CUBE_F)
    l_mesh = _l_prism()
    t_v, t_f = _t_junction_mesh()
    for v, f in ((CUBE_V, CUBE_F), (OPEN_V, OPEN_F), l_mesh, (t_v, t_f), (CUBE_V, CUBE_F[:-1])):
        report = tm.inspect(v, f)
        str(report), report.as_dict()
        tm.inspect(tc.TriangleMesh(v, f), tolerance=1e-3)
        tm.repair(v, f)
        tm.repair(tc.TriangleMesh(v, f), fill=False, tolerance=1e-6)
        tm.weld(v, f), tm.weld(v, f, tolerance=1e-3), tm.weld(v, f, drop_degenerate=False, return_map=True)
        tm.fill_holes(v, f), tm.fill_holes(v, f, max_edges=3)
        tm.merge_coplanar(v, f), tm.merge_coplanar(v, f, tolerance=1e-6, max_angle_degrees=5.0)
        table = tm.edge_table(v, f)
        table.edges, table.face_count
        tm.vertex_faces(v, f), tm.face_pairs(v, f), tm.face_pairs(v, f, table=table)
        tm.connected_components(v, f), tm.connected_components(v, f, by="vertex")
        tm.boundary_edges(v, f), tm.boundary_loops(v, f)
        tm.t_junctions(v, f), tm.t_junctions(v, f, tolerance=1e-3), tm.repair_t_junctions(v, f)
        tm.signed_volume(v, f), tm.orient(v, f)
        tm.coplanar_groups(v, f), tm.euler(v, f), tm.euler(v, f, orientable=True)
        tm.concave_edges(v, f)
        tm.convex_decomposition(v, f)
    tm.convex_decomposition(tc.TriangleMesh(*l_mesh), max_depth=1)
    tm.inspect(CUBE_MESH), tm.repair(CUBE_MESH), tm.weld(CUBE_MESH), tm.euler(CUBE_MESH)
    tm.weld(np.repeat(CUBE_V, 2, axis=0), np.arange(24).reshape(8, 3) % 16)
    tm.newell_normal(CUBE_V[[0, 1, 3, 2]]), tm.newell_normal(np.stack([CUBE_V[[0, 1, 3, 2]]] * 2))
    tm.is_planar(CUBE_V[[0, 1, 3, 2]], 1e-9), tm.is_planar(CUBE_V[:4], 1e-9)
    tm.euler_polygons([[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]])
    tm.euler_polygons([[0, 1, 2], [0, 2, 3]])
    square = [[0, 0], [4, 0], [4, 4], [0, 4]]
    tm.triangulate_polygon(square)
    tm.triangulate_polygon(square[::-1], [[[1, 1], [1, 2], [2, 2]]])
    tm.triangulate_polygon(np.array(square, dtype=np.float32), holes=[np.array([[1, 1], [2, 1], [2, 2], [1, 2]])])
    tm.triangulate_polygon([[0, 0, 0], [1, 0, 0], [1, 1, 1], [0, 1, 1]])
    tm.triangulate_polygon(np.array([[0, 0, 0], [0, 1, 0], [1, 1, 0], [1, 0, 0]]), normal=[0, 0, -1])
    tm.triangulate_polygon([[0, 0], [3, 0], [3, 3], [2, 1], [1, 3], [0, 3]])  # concave


def _l_prism():
    """A closed L-shaped prism (one concave edge run): outline, caps by ear cutting, sides."""
    from touche import mesh as tm

    outline = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 1.0], [1.0, 1.0], [1.0, 2.0], [0.0, 2.0]])
    k = len(outline)
    cap = tm.triangulate_polygon(outline)
    vertices = np.concatenate([np.column_stack([outline, np.zeros(k)]), np.column_stack([outline, np.ones(k)])])
    faces = [cap[:, ::-1], cap + k]
    for i in range(k):
        j = (i + 1) % k
        faces.append(np.array([[i, j, j + k], [i, j + k, i + k]]))
    return vertices, np.concatenate(faces).astype(np.int64)


def _t_junction_mesh():
    vertices = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [1.0, -1.0, 0.0]])
    faces = np.array([[0, 1, 2], [0, 4, 3], [3, 4, 1]])
    return vertices, faces


def section_clearance():
    from touche.clearance import ClearancePart, prepare  # (touche.clearance is the function)

    a, b = SHAPES["mesh"], CUBE_MESH
    near = tc.Pose.from_rotvec([0.1, 0.2, 0.3], [0.4, 0.3, 0.2])
    for pose_a, pose_b in PAIR_POSES + ((near, FAR), (BATCH[:1], None)):
        result = _clearance(a, pose_a, b, pose_b)
        _touch(result, "intersecting", "distance", "point_a", "point_b", "vector", "triangle_a", "triangle_b",
               "pairs", "segments", "work")
        _clearance(a, pose_a, b, pose_b, max_distance=0.5)
        _clearance(a, pose_a, a, pose_b)
    for pose_a, pose_b in ((None, None), (near, None), (None, FAR), (RAW, POSE)):
        _touch(_clearance(a, pose_a, b, pose_b, curve=True), "pairs", "segments")
        _clearance(b, pose_a, b, pose_b, curve=True, max_distance=1.0)
    part = ClearancePart(b, leaf_size=1, split="major")
    repr(part)
    ClearancePart((TETRA_V, TETRA_F))
    prepare(a), prepare(b, leaf_size=3), prepare(part)
    _clearance(part, None, (CUBE_V, CUBE_F), RAW)
    tc.ClearancePart(OPEN_MESH, split="longest")
    _clearance(OPEN_MESH, None, part, BATCH, curve=False)
    with tempfile.TemporaryDirectory() as folder:
        path = tc.mesh.save(b, Path(folder) / "part.stl")
        _clearance(path, None, str(path), near)
        _clearance_all([path, a], None)
    parts = [a, b, part, OPEN_MESH]
    for poses in (None, [None, POSE, RAW, FAR], np.stack([np.eye(4), RAW, FAR, POSE.matrix])):
        _touch(_clearance_all(parts, poses), "pairs", "intersecting", "distance", "point_a", "point_b", "vector",
               "triangle_a", "triangle_b")
        _clearance_all(parts, poses, pairs=[(0, 1), (2, 3), (1, 1)], max_distance=0.2)
    _clearance_all([a], pairs=np.array([[0, 0]]))
    _clearance_all([a, a, a], tc.Pose(np.stack([np.eye(4), RAW, FAR])))


def section_cli():
    from click.testing import CliRunner

    from touche.cli import EXIT_BAD_INPUT, EXIT_CONTACT, EXIT_OK, EXIT_USAGE, cli, main

    runner = CliRunner()

    def run(expected, *args):
        result = runner.invoke(cli, [str(arg) for arg in args])
        if NO_JIT and result.exit_code == 4 and "ldexp" in result.output:
            return result  # the exact predicates cannot run without the JIT (see _exact)
        if result.exit_code not in expected:
            raise AssertionError(f"touche {' '.join(map(str, args))}: exit {result.exit_code}, expected {expected}:"
                                 f"\n{result.output}") from result.exception
        return result

    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        a = tc.mesh.save(CUBE_MESH, folder / "a.stl")
        b = tc.mesh.save((CUBE_V * 0.5 + [0.6, 0.0, 0.0], CUBE_F), folder / "b.stl")
        far = tc.mesh.save((CUBE_V + [5.0, 0.0, 0.0], CUBE_F), folder / "far.stl", ascii=True)
        open_part = tc.mesh.save((CUBE_V, CUBE_F[:-2]), folder / "open.stl", ascii=True)
        obj = tc.mesh.save((TETRA_V, TETRA_F), folder / "tetra.obj")
        contact = (EXIT_CONTACT,)
        run(contact, "check", a, b)
        run((EXIT_OK,), "check", a, far)
        run((EXIT_OK,), "check", a, far, "--json")
        run(contact, "check", a, far, "--json", "--min-clearance", "10")
        run((EXIT_OK, EXIT_CONTACT), "check", a, b, "--pose-a", "0.1,0,0", "--pose-b", "3,0,0,10,20,30",
            "--min-clearance", "0.5")
        run((EXIT_OK, EXIT_CONTACT), "check", a, b, "--pose-b", ",".join(map(str, _translation(4.0).ravel())))
        run((EXIT_OK, EXIT_CONTACT), "check", obj, b)
        run((EXIT_OK,), "inspect", a)
        run((EXIT_OK,), "inspect", open_part, "--json")
        run(contact, "inspect", open_part, "--strict")
        run((EXIT_OK,), "inspect", a, "--tolerance", "1e-6", "--strict")
        run((EXIT_OK,), "inspect", obj)
        run((EXIT_OK,), "repair", open_part, folder / "fixed.stl")
        run((EXIT_OK,), "repair", open_part, folder / "fixed.obj", "--no-fill")
        run((EXIT_OK,), "repair", open_part, folder / "fixed_ascii.stl", "--ascii", "--tolerance", "1e-6")
        run((EXIT_BAD_INPUT,), "inspect", folder / "missing.stl")
        run((EXIT_BAD_INPUT,), "check", a, b, "--pose-a", "1,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1")
        run((EXIT_USAGE,), "check", a)
        run((EXIT_OK,), "--help")
        run((EXIT_OK,), "bench", "--triangles", "64")
        with contextlib.redirect_stdout(io.StringIO()):  # the script's entry point prints
            code = main(["inspect", str(a), "--json"])
        if code != EXIT_OK:
            raise AssertionError(f"touche.cli.main(['inspect', ...]) returned {code}")


# ---------------------------------------------------------------------------------------------
# input variants: the array forms users pass, on every verb and module
def _readonly(array):
    array = np.array(array)
    array.setflags(write=False)
    return array


def _strided(array):
    """A non-contiguous view with the values of ``array`` (every other element of the last axis)."""
    array = np.asarray(array)
    wide = np.zeros(array.shape[:-1] + (2 * array.shape[-1],), dtype=array.dtype)
    wide[..., ::2] = array
    return wide[..., ::2]


def _point_variants():
    base = np.array([[0.1, 0.2, 0.3], [1.5, 0.0, 0.0], [0.2, 0.1, -0.6]])
    return [base.tolist(), np.array([[0, 0, 2], [1, 0, 0], [0, 0, 0]]), base.astype(np.float32), _readonly(base),
            np.asfortranarray(base), _strided(base), np.repeat(base, 2, axis=0)[::2], base[0], base[0].tolist(),
            _readonly(base[0]), base[0].astype(np.float32), np.array([0, 0, 1]), _strided(base[0]), (0.1, 0.2, 0.3)]


_TURN = np.array([[0.0, -1.0, 0.0, 0.5], [1.0, 0.0, 0.0, 0.25], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])


def _pose_variants():
    """Single poses: exact values, so that float32 / int copies stay rigid."""
    return [None, POSE, RAW, _TURN.tolist(), np.eye(4, dtype=int), _TURN.astype(np.float32), _readonly(_TURN),
            np.asfortranarray(_TURN), _strided(_TURN), POSE.matrix, tc.Pose(_TURN).matrix, tc.Pose(_TURN)]


def _batch_variants():
    batch = np.stack([np.eye(4), _TURN, FAR])
    return [batch, batch.tolist(), batch.astype(np.float32), _readonly(batch), np.asfortranarray(batch),
            _strided(batch), np.repeat(batch, 2, axis=0)[::2], batch[:1], _readonly(batch[:1]), POSE_BATCH,
            POSE_BATCH.matrix, np.tile(np.eye(4, dtype=int), (N, 1, 1))]


def _limit_variants():
    return [5, 5.0, np.float32(5.0), np.inf, np.array(5.0), np.array([1.0, 2.0, np.inf]), [1, 2, 3],
            np.array([1, 2, 3]), np.array([1.0, 2.0, 3.0], dtype=np.float32), _readonly([1.0, 2.0, 3.0]),
            _strided(np.array([1.0, 2.0, 3.0]))]


def _vector_variants():
    v = np.array([-2.0, 0.0, 0.0])
    return [v, v.tolist(), np.array([-2, 0, 0]), v.astype(np.float32), _readonly(v), _strided(v)]


def section_variants_pair_verbs():
    pairs = [(SHAPES["box"], SHAPES["capsule"]), (SHAPES["sphere"], SHAPES["polyhedron"]),
             (SHAPES["cylinder"], SHAPES["triangle"]), (SHAPES["mesh"], SHAPES["sphere"]),
             (SHAPES["mesh"], CUBE_MESH), (SHAPES["plane"], SHAPES["box"])]
    poses = _pose_variants() + _batch_variants()
    for a, b in pairs:
        for pose in poses:
            for pose_a, pose_b in ((pose, None), (RAW, pose)):
                tc.intersects(a, pose_a, b, pose_b)
                _touch(tc.distance(a, pose_a, b, pose_b), *_DISTANCE_FIELDS)
                tc.signed_distance(a, pose_a, b, pose_b)
                _try(tc.contacts, a, pose_a, b, pose_b, max_points=np.int64(3), margin=np.float32(0.1))
                _try(tc.intersection, a, pose_a, b, pose_b)
                if _is_mesh(a) and _is_mesh(b):
                    _clearance(a, pose_a, b, pose_b)
                    tc.bvh.intersects(a, pose_a, b, pose_b)
                    tc.bvh.intersects(a, pose_a, b, pose_b, bv="aabb")
                    tc.bvh.distance(a, pose_a, b, pose_b)
    polytope_pairs = [(SHAPES["box"], SHAPES["tetrahedron"]), (SHAPES["polygon"], SHAPES["polyhedron"])]
    for a, b in polytope_pairs:
        for pose in poses:
            tc.intersection(a, pose, b, None)
            tc.lp.polytopes_intersect(a, pose, b, RAW)
            tc.lp.polytopes_intersect(a, None, b, pose, method="chung-wang")
            tc.lp.separating_vector(a, pose, b, FAR)
    convex_pairs = [(SHAPES["box"], SHAPES["capsule"]), (SHAPES["cone"], SHAPES["ellipsoid"])]
    for a, b in convex_pairs:
        for pose in poses:
            tc.convex.gjk(a, pose, b, None)
            tc.convex.penetration(a, RAW, b, pose)
            tc.convex.intersects(a, pose, b, POSE)
            tc.convex.shape_cast(a, pose, VELOCITY, b, None, [0.0, 0.0, 0.0], T_MAX)
        for velocity in _vector_variants():
            tc.convex.shape_cast(a, START, velocity, b, None, velocity, T_MAX)
        for t_max in (1, np.float32(2.0), np.array(2.0)):
            tc.convex.shape_cast(a, START, VELOCITY, b, None, [0, 0, 0], t_max)
        first = tc.convex.gjk(a, POSE, b, RAW)
        for warm in (first.warm_start.tolist(), _readonly(first.warm_start), first.warm_start.astype(np.float32)):
            tc.convex.gjk(a, POSE, b, RAW, warm_start=warm)


def section_variants_point_verbs():
    shapes = [SHAPES["box"], SHAPES["sphere"], SHAPES["cylinder"], SHAPES["mesh"], SHAPES["plane"], CUBE_MESH]
    for shape in shapes:
        for points in _point_variants():
            for pose in (None, RAW):
                _touch(tc.closest_point(shape, pose, points), "point", "distance", "status")
                if _is_mesh(shape):
                    tc.contains(shape, pose, points)
                    tc.winding_number(shape, pose, points)
                    tc.signed_distance_points(shape, pose, points)
                    tc.meshquery.closest_point_with_face(shape, pose, points)
        for pose in _pose_variants():
            tc.closest_point(shape, pose, POINTS)
            if _is_mesh(shape):
                tc.contains(shape, pose, POINTS)
                tc.winding_number(shape, pose, POINT)
                tc.signed_distance_points(shape, pose, POINTS)
        for pose in _batch_variants():
            count = len(np.asarray(pose.matrix if isinstance(pose, tc.Pose) else pose))
            points = POINTS[:count]
            tc.closest_point(shape, pose, points)
            if _is_mesh(shape):
                tc.contains(shape, pose, points)
                tc.winding_number(shape, pose, points)
                tc.signed_distance_points(shape, pose, points)


def section_variants_raycast():
    shapes = [SHAPES["box"], SHAPES["sphere"], SHAPES["cone"], SHAPES["halfspace"], SHAPES["mesh"], CUBE_MESH]
    for shape in shapes:
        modes = [mode for mode in ("first", "any", "all") if _ray_ok(shape, mode)] if _is_mesh(shape) else ["first"]
        for mode in modes:
            for origins in _point_variants():
                for directions in ([1.0, 0.0, 0.0], np.array([[0, 0, 1]]), DIRECTIONS.astype(np.float32),
                                   _readonly(DIRECTIONS), _strided(DIRECTIONS)):
                    count = max(np.atleast_2d(np.asarray(origins)).shape[0], np.atleast_2d(directions).shape[0])
                    if count not in (1, 3) or (np.atleast_2d(directions).shape[0] not in (1, count)):
                        continue
                    tc.raycast(shape, None, origins, directions, mode=mode)
                    tc.raycast(shape, RAW, origins, directions, 4.0, solid=False, mode=mode)
            for limit in _limit_variants():
                tc.raycast(shape, None, ORIGINS, DIRECTIONS, limit, mode=mode)
            for pose in _pose_variants():
                tc.raycast(shape, pose, ORIGINS, DIRECTIONS, mode=mode)
            for pose in _batch_variants():
                count = len(np.asarray(pose.matrix if isinstance(pose, tc.Pose) else pose))
                tc.raycast(shape, pose, ORIGINS[:count], DIRECTIONS[0], mode=mode)


def section_variants_time_of_impact():
    pairs = [(SHAPES["box"], SHAPES["box"]), (SHAPES["sphere"], SHAPES["box"]), (SHAPES["capsule"], SHAPES["cone"]),
             (SHAPES["sphere"], SHAPES["sphere"]), (SHAPES["box"], SHAPES["plane"]), (SHAPES["mesh"], CUBE_MESH),
             (SHAPES["sphere"], SHAPES["mesh"])]
    for a, b in pairs:
        for velocity in _vector_variants():
            for pose in _pose_variants():
                _impact(tc.time_of_impact(a, tc.Linear(velocity, pose), b, pose, T_MAX))
            _impact(tc.time_of_impact(a, tc.Screw(velocity, velocity, START), b, None, T_MAX))
        for pose in _batch_variants():
            count = len(np.asarray(pose.matrix if isinstance(pose, tc.Pose) else pose))
            _impact(tc.time_of_impact(a, tc.Linear(VELOCITY_BATCH[:count], pose), b, None, T_MAX))
            _impact(tc.time_of_impact(a, tc.Static(START), b, pose, T_MAX))
            _impact(tc.time_of_impact(a, tc.Screw(VELOCITY, SPIN, pose), b, None, T_MAX))
            _impact(tc.time_of_impact(a, pose, b, tc.Linear([0.0, 0.0, 1.0], RAW), T_MAX))
        for t_max in (2, np.float32(2.0), np.array(2.0), 0.0):
            _impact(tc.time_of_impact(a, tc.Linear(VELOCITY, START), b, None, t_max))
        for key_poses in (_key_poses(START.matrix).tolist(), _readonly(_key_poses(START.matrix)),
                          _key_poses(START.matrix).astype(np.float32)):
            _impact(tc.time_of_impact(a, tc.Keyframes(np.array([0, 1, 2]), key_poses), b, None, T_MAX))
        for tolerance in (1e-3, np.float32(1e-4)):
            _impact(tc.time_of_impact(a, tc.Screw(VELOCITY, SPIN, START), b, None, T_MAX, tolerance=tolerance))
    box = SHAPES["box"]
    for m0 in (START.matrix, START.matrix.tolist(), START.matrix.astype(np.float32), _readonly(START.matrix)):
        _impact(tc.time_of_impact(box, tc.QuadraticMatrix(m0, _quadratic()[1]), box, None, T_MAX))


def section_variants_modules():
    from touche import bounding as bv
    from touche import broadphase, lp, pairwise, planar

    # bounding volumes
    cloud = np.random.default_rng(2).normal(size=(10, 3))
    for points in (cloud, cloud.tolist(), cloud.astype(np.float32), _readonly(cloud), np.asfortranarray(cloud),
                   _strided(cloud), np.repeat(cloud, 2, axis=0)[::2], np.round(cloud * 4).astype(int), cloud[0]):
        for fit in (bv.aabb, bv.sphere_ritter, bv.sphere_iterative, bv.sphere_welzl, bv.sphere_pca, bv.obb_pca,
                    bv.obb_hull_pca, bv.obb_min_volume, bv.capsule, bv.lozenge):
            fit(points).contains(points)
        bv.obb_brute_force(points, steps=2, refine_rounds=1)
        bv.kdop(points, 14).contains(points)
    for vertices, faces in ((CUBE_V.astype(np.float32), CUBE_F.astype(np.int32)), (_readonly(CUBE_V), CUBE_F),
                            (CUBE_V.tolist(), CUBE_F.tolist()), (np.asfortranarray(CUBE_V), _readonly(CUBE_F))):
        bv.obb_triangles(vertices, faces)
        tc.mesh.inspect(vertices, faces)
        tc.mesh.weld(vertices, faces)
        tc.mesh.weld(vertices, faces, tolerance=1e-3)
        tc.mesh.repair(vertices, faces)
        tc.mesh.fill_holes(vertices, np.asarray(faces)[:-1])
        tc.mesh.merge_coplanar(vertices, faces)
        tc.mesh.convex_decomposition(vertices, faces)
        tc.mesh.connected_components(vertices, faces, by="vertex")
        tc.bvh.build(tc.TriangleMesh(vertices, faces), kdop=6)
        _clearance((vertices, faces), None, CUBE_MESH, RAW)
    for ring in ([[0, 0], [4, 0], [4, 4], [0, 4]], np.array([[0, 0], [4, 0], [4, 4], [0, 4]], dtype=np.float32),
                 _readonly([[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0]])):
        tc.mesh.triangulate_polygon(ring, [np.array([[1, 1], [1, 2], [2, 2]])])
    # broad phase boxes
    boxes = np.array([[0, 0, 0, 1, 1, 1], [0.5, 0.5, 0.5, 2, 2, 2], [3, 3, 3, 4, 4, 4]], dtype=np.float64)
    for _, cls in _structures():
        structure = cls()
        for variant in (boxes.tolist(), boxes.astype(int), boxes.astype(np.float32), _readonly(boxes),
                        np.asfortranarray(boxes), _strided(boxes)):
            structure.rebuild(variant)
            structure.update_many(np.arange(3), variant)
            structure.update(0, variant[0])
            structure.query_aabb(variant[1])
            structure.pairs()
        for point in (np.zeros(3, dtype=np.float32), [0, 0, 0], _readonly(np.ones(3))):
            structure.query_sphere(point, 1)
            structure.query_ray(point, [1, 1, 1], max_t=np.float32(3.0))
    # pairwise raw arrays
    tri = TETRA_V[TETRA_F[1]]
    for t in (tri, tri.tolist(), tri.astype(np.float32), _readonly(tri), np.asfortranarray(tri), _strided(tri)):
        pairwise.triangle_triangle_intersects(t, tri + 0.1)
        pairwise.triangle_triangle_intersection(t, tri + 0.1)
        pairwise.triangle_obb_intersects(t, [0, 0, 0], np.eye(3), [0.5, 0.5, 0.5])
        pairwise.triangle_obb_intersects(t, _readonly(np.zeros(3)), _readonly(np.eye(3)), _readonly([0.5] * 3))
        pairwise.obb_obb_intersects(t[0], np.eye(3, dtype=int), [1, 1, 1], t[1], np.eye(3), [0.5, 0.5, 0.5])
        pairwise.triangle_triangle_time_of_impact(t, tri + 1.0, _readonly([-1.0, 0.0, 0.0]), [0, 0, 0], 2)
        pairwise.triangle_obb_time_of_impact(t, [3, 0, 0], np.eye(3), [0.5, 0.5, 0.5], [1, 0, 0], [0, 0, 0],
                                             np.float32(5.0))
        pairwise.obb_obb_time_of_impact(t[0], np.eye(3), [0.5] * 3, [3, 0, 0], np.eye(3), [0.5] * 3, [1, 0, 0],
                                        [0, 0, 0], _readonly([5.0]))
        _triangle_clearance(t, tri + 0.1)
    batch = TETRA_V[TETRA_F]
    for t in (batch.tolist(), batch.astype(np.float32), _readonly(batch), np.asfortranarray(batch), _strided(batch)):
        pairwise.triangle_triangle_intersects(t, tri)
        pairwise.triangle_triangle_intersection(t, batch)
        pairwise.triangle_obb_intersects(t, [0, 0, 0], np.eye(3), [0.5, 0.5, 0.5])
        pairwise.triangle_triangle_time_of_impact(t, batch + 1.0, [-1.0, 0.0, 0.0], [0, 0, 0], [1, 2, 3, 4])
        _triangle_clearance(t, batch)
    # planar polygons
    square = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    for poly in (square.tolist(), square.astype(int), square.astype(np.float32), _readonly(square),
                 np.asfortranarray(square), _strided(square)):
        planar.intersects(poly, square + 0.5)
        planar.intersection(poly, square + 0.5)
        planar.time_of_impact(poly, _readonly([1.0, 0.0]), square + [2.0, 0.0], [0, 0], np.float32(3.0))
        planar.place(poly, _readonly([[0.0, 0.0], [1.0, 1.0]]), angles=np.array([0, 1]))
    # linear programs
    a_matrix = np.concatenate([np.eye(3), -np.eye(3)])
    for A in (a_matrix.tolist(), a_matrix.astype(int), a_matrix.astype(np.float32), _readonly(a_matrix),
              np.asfortranarray(a_matrix), _strided(a_matrix)):
        lp.linprog(_readonly([1.0, 2.0, 3.0]), A, np.ones(6, dtype=np.float32))
        lp.feasible_point(A, _readonly(np.ones(6)))
        lp.fourier_motzkin(A, [1, 1, 1, 1, 1, 1])
    lp.separating_vector(SHAPES["box"], None, SHAPES["tetrahedron"], FAR, initial=_readonly([1.0, 0.0, 0.0]))
    lp.separating_vector(SHAPES["box"], BATCH, SHAPES["tetrahedron"], FAR, initial=np.ones((N, 3), dtype=np.float32))


def section_robot():
    """touche.robot: a URDF with every joint type (mimic too) and geometry (a mesh file), every
    method on one configuration and a batch, the configuration and obstacle forms users pass."""
    from touche import robot

    with tempfile.TemporaryDirectory() as folder:
        tc.mesh.save(tc.TriangleMesh(CUBE_V, CUBE_F), Path(folder) / "cube.stl")
        text = """<robot name="walk">
          <link name="base"><collision><geometry><cylinder radius="0.2" length="0.1"/></geometry></collision></link>
          <link name="upper"><collision><origin xyz="0 0 0.2" rpy="0.1 0 0"/><geometry>
            <mesh filename="cube.stl" scale="0.1 0.1 0.2"/></geometry></collision></link>
          <link name="fore"><collision><geometry><capsule radius="0.04" length="0.3"/></geometry></collision>
            <collision><origin xyz="0 0 0.2"/><geometry><sphere radius="0.05"/></geometry></collision></link>
          <link name="finger"><collision><geometry><box size="0.02 0.02 0.08"/></geometry></collision></link>
          <link name="twin"><collision><geometry><box size="0.02 0.02 0.08"/></geometry></collision></link>
          <joint name="yaw" type="continuous"><parent link="base"/><child link="upper"/><axis xyz="0 0 1"/></joint>
          <joint name="pitch" type="revolute"><parent link="upper"/><child link="fore"/><origin xyz="0 0 0.4"/>
            <axis xyz="0 1 0"/><limit lower="-2.5" upper="2.5"/></joint>
          <joint name="grip" type="prismatic"><parent link="fore"/><child link="finger"/><origin xyz="0 0 0.3"/>
            <axis xyz="1 0 0"/><limit lower="0" upper="0.05"/></joint>
          <joint name="grip2" type="prismatic"><parent link="fore"/><child link="twin"/><origin xyz="0 0 0.3"/>
            <axis xyz="-1 0 0"/><limit lower="0" upper="0.05"/><mimic joint="grip"/></joint>
        </robot>"""
        (Path(folder) / "walk.urdf").write_text(text)
        model = robot.load_urdf(Path(folder) / "walk.urdf",
                                srdf_text='<robot name="s"><disable_collisions link1="base" link2="fore"/></robot>')
        convex = robot.load_urdf(Path(folder) / "walk.urdf", meshes="convex")
    model.allow("finger", robot.ENVIRONMENT)
    model.forbid("finger", robot.ENVIRONMENT)
    batch = np.array([[0.0, 0.3, 0.01], [1.0, -2.0, 0.04], [3.0, 2.4, 0.0]])
    world = tc.CollisionWorld()
    world.add(tc.Sphere(0.1), tc.Pose.from_translation([0.3, 0.0, 0.6]))
    scenes = [
        None, [], tc.Box([0.2, 0.2, 0.2]), (tc.Box([0.2, 0.2, 0.2]), tc.Pose.from_translation([0.2, 0.0, 0.5])),
        [(tc.Capsule(0.05, 0.3), np.eye(4)), tc.HalfSpace([0, 0, 1], 0.0), (tc.TriangleMesh(CUBE_V, CUBE_F), None)],
        world,
    ]
    for each in (model, convex):
        for q in (batch, batch[0], batch.tolist(), batch[1].tolist(), batch.astype(np.float32), _readonly(batch),
                  np.asfortranarray(batch), _strided(batch), np.zeros((0, 3)), np.zeros((2, 3), dtype=int)):
            each.forward_kinematics(q)
            each.geometry_poses(q)
            for scene in scenes:
                each.in_collision(q, scene)
                report = each.collisions(q, scene)
                if np.ndim(q) == 2 and len(q):
                    report.colliding_pairs(0)
                each.distances(q, scene, gradients=True).minimum
            each.in_collision(q, scenes[3], self_collision=False)
        for scene in scenes:  # motion checks: one segment, segments, a path, the forms users pass
            each.check_motion(batch[0], batch[1], scene).contact_pairs
            each.check_motion(batch[:-1], batch[1:], scene, tolerance=1e-4).contact_pairs
            each.check_motion(batch[0].tolist(), batch.astype(np.float32), scene, self_collision=False)
            each.check_path(batch, scene).path_time
        each.check_path(_strided(batch), scenes[3], max_iterations=3)
        each.check_motion(np.zeros((0, 3)), np.zeros((0, 3)), scenes[3])
        each.check_motion(batch[0], batch[0] + [0.0, 3.0, 0.0], scenes[3], allow_outside_limits=True)
        _documented_geometry_error(each.check_motion, batch[0], batch[0] + [0.0, 3.0, 0.0])
        _documented_geometry_error(each.check_path, batch[0])
        each.in_collision(batch + [0.0, 3.0, 0.0], None, allow_outside_limits=True)
        _documented_geometry_error(each.in_collision, batch + [0.0, 3.0, 0.0])
        _documented_geometry_error(each.forward_kinematics, np.zeros(2))


SECTIONS = [
    ("shapes", section_shapes),
    ("poses", section_poses),
    ("intersects", section_intersects),
    ("distance", section_distance),
    ("signed_distance", section_signed_distance),
    ("margins_and_bounds", section_margins_and_bounds),
    ("contacts", section_contacts),
    ("intersection", section_intersection),
    ("time_of_impact_pairs", section_time_of_impact_pairs),
    ("clearance_pairs", section_clearance_pairs),
    ("closest_point", section_closest_point),
    ("raycast", section_raycast),
    ("raycast_modes", section_raycast_modes),
    ("mesh_point_queries", section_mesh_point_queries),
    ("triangle_clearance", section_triangle_clearance),
    ("motions", section_motions),
    ("toi_convex_vs_box", section_toi_convex_vs_box),
    ("toi_convex_vs_sphere", section_toi_convex_vs_sphere),
    ("toi_two_motions", section_toi_two_motions),
    ("toi_meshes", section_toi_meshes),
    ("toi_planes", section_toi_planes),
    ("toi_quadratic", section_toi_quadratic),
    ("convex", section_convex),
    ("planar", section_planar),
    ("pairwise", section_pairwise),
    ("lp", section_lp),
    ("bounding", section_bounding),
    ("bvh", section_bvh),
    ("meshquery", section_meshquery),
    ("bsp", section_bsp),
    ("broadphase", section_broadphase),
    ("world", section_world),
    ("mesh", section_mesh),
    ("clearance", section_clearance),
    ("cli", section_cli),
    ("variants_pair_verbs", section_variants_pair_verbs),
    ("variants_point_verbs", section_variants_point_verbs),
    ("variants_raycast", section_variants_raycast),
    ("variants_time_of_impact", section_variants_time_of_impact),
    ("variants_modules", section_variants_modules),
    ("robot", section_robot),
]


def walk(only=None, *, verbose=False):
    """Run every section (or the sections named in ``only``), in order. An exception propagates
    with the failing section's name attached (a note on Python >= 3.11, else in the message of a
    RuntimeError chained to it)."""
    names = {name for name, _ in SECTIONS}
    if only is not None:
        unknown = set(only) - names
        if unknown:
            raise ValueError(f"unknown sections {sorted(unknown)}; choose from {[n for n, _ in SECTIONS]}")
    for name, section in SECTIONS:
        if only is not None and name not in only:
            continue
        if verbose:
            import time

            started = time.perf_counter()
        try:
            section()
        except Exception as exc:  # re-raised at once: only the section's name is added
            if hasattr(exc, "add_note"):
                exc.add_note(f"surface_walk section: {name}")
                raise
            raise RuntimeError(f"surface_walk section {name!r} failed: {exc!r}") from exc
        if verbose:
            print(f"{name:<28} {time.perf_counter() - started:8.2f} s", flush=True)


if __name__ == "__main__":
    import sys

    walk(sys.argv[1:] or None, verbose=True)

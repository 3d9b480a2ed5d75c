"""Motion checks of a robot: straight joint-space segments and paths, certified by conservative
advancement (the derivation of the speed bound is in touche/_kernels/motion/robot.py, "motion checks").

Every (segment, pair) item advances its own parameter s from 0 with lower bounds of the pair's
distance, cheapest first:

1. the distance between the two bounding spheres (compiled, inside ``motion_sphere_advance``:
   many steps per Python iteration while the spheres are well apart);
2. the distance between convex stand-ins of the two geometries: the shape itself for a convex
   primitive, the convex hull of a triangle mesh (it contains the mesh, so its distance is a
   lower bound of the mesh's) -- one batched ``touche.distance`` call per pair over all the
   items of that pair at this iteration;
3. only where a stand-in lower bound is within the tolerance and a mesh is involved: the exact
   distance of the real shapes (one batched call per such pair).

An item stops with contact when its lower bound is <= the tolerance, free when the step passes
s = 1. Its segment's answer is the earliest contact over its pairs; items already past an earlier
contact of their segment (and, along a path, items of segments after the first one with a
contact) are dropped. The Python loop runs over iterations, never over items.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _parallel
from .._cache import WeakIdentityCache, shape_key
from .._enums import NamedIntEnum
from ..errors import GeometryError
from ..shapes import ConvexPolyhedron, TriangleMesh
from ._common import as_obstacles, kernels as _robot_kernels, obstacle_spheres

# sphere phase: hand over to the narrow phase when the bounding spheres come closer than this
# fraction of their radii (the stand-in's distance is then usually much larger than the gap), or
# after this many compiled steps in one iteration
_HANDOFF_FRACTION = 0.05
_SPHERE_STEPS = 32
_GRAIN_SPHERES = 128  # items per thread chunk: a few forward kinematics each
_GRAIN_POSES = 512

DEFAULT_RELATIVE_TOLERANCE = 1e-6  # of the robot's reach: about a micrometre for a 1 m arm
DEFAULT_MAX_ITERATIONS = 10_000


class MotionStatus(NamedIntEnum):
    """The answer for a segment or a path.

    ====  =========  ======================================================================
    code  name       meaning
    ====  =========  ======================================================================
    0     FREE       certified: no checked pair comes closer than 0 anywhere on it
    1     CONTACT    ``time`` is the first parameter where a pair's distance is <= tolerance
    2     UNDECIDED  not certified: a distance query did not converge, or ``max_iterations``
                     ran out (``in_collision`` still tells whether a contact was found)
    ====  =========  ======================================================================
    """

    FREE = 0
    CONTACT = 1
    UNDECIDED = 2


_HULLS = WeakIdentityCache(limit=256)


def convex_stand_in(shape):
    """(shape whose distance is a lower bound of ``shape``'s, whether it is ``shape`` itself): the
    convex hull of a triangle mesh (remembered while the mesh lives), the shape otherwise."""
    if not isinstance(shape, TriangleMesh):
        return shape, True
    key = shape_key(shape)
    hull = _HULLS.get(key)
    if hull is None:
        hull = _HULLS.get_or_build(lambda: _hull_or_none(shape), key)
    return (shape, True) if hull is _NO_HULL else (hull, False)


_NO_HULL = object()


def _hull_or_none(mesh):
    """The mesh's convex hull, or _NO_HULL for a flat mesh (no solid hull): then the mesh
    itself is its own, slower, stand-in."""
    try:
        return ConvexPolyhedron(mesh.vertices)
    except GeometryError:
        return _NO_HULL


def _lower_bounds(shape_a, poses_a, shape_b, poses_b):
    """(signed distances (k,), converged (k,) bool) of one shape pair over k poses of A."""
    from ..query import Status, distance

    if len(poses_a) == 1:  # touche's single-pair call: cheaper than a batch of one
        one = distance(shape_a, poses_a[0], shape_b, poses_b if poses_b.ndim == 2 else poses_b[0])
        return np.array([one.signed_distance]), np.array([one.status <= Status.PENETRATING])
    result = distance(shape_a, poses_a, shape_b, poses_b)
    return result.signed_distance, result.status <= Status.PENETRATING


class _ConvexPair:
    """Two convex stand-ins and what ``touche.distance`` would hand its compiled single-pair
    driver for them (the engine family's address, the packed shapes): the narrow phase calls
    that driver directly for a lone item, skipping the verb's argument checks (the poses come
    from the kinematics kernel; the driver still checks they are rigid)."""

    __slots__ = ("shape_a", "shape_b", "exact", "direct", "engine", "packed_a", "packed_b")

    def __init__(self, shape_a, shape_b):
        from ..query import _DISTANCE_ROUTES, _ENGINE_MESH_MESH, _ENGINE_MESH_SHAPE, _ENGINE_MESH_TREE
        from ..query import _kernels as drivers, _pair_engine

        (self.shape_a, exact_a), (self.shape_b, exact_b) = convex_stand_in(shape_a), convex_stand_in(shape_b)
        self.exact = exact_a and exact_b
        route = _DISTANCE_ROUTES.get((self.shape_a.kind, self.shape_b.kind))
        # the driver answers the pair engines' pairs; meshes (and unsupported pairs: the verb
        # raises their error) go through touche.distance
        self.direct = route is not None and route[0] not in (_ENGINE_MESH_SHAPE, _ENGINE_MESH_MESH, _ENGINE_MESH_TREE)
        if self.direct:
            self.engine = _pair_engine(drivers(), self.shape_a, self.shape_b, False)
            self.packed_a = (*self.shape_a._packed, self.shape_a.scale)
            self.packed_b = (*self.shape_b._packed, self.shape_b.scale)

    def lower_bound_one(self, pose_a, pose_b, buffer):
        """(signed distance, converged) at one pose of each."""
        from ..query import _kernels as drivers

        status = drivers().checked_distance_into(self.engine, *self.packed_a, pose_a, *self.packed_b, pose_b, buffer)
        return buffer[0], 0 <= status <= 2  # SEPARATED, TOUCHING, PENETRATING


def _rate_bounds(robot, q0, q1, pair_a, pair_b):
    tree = robot._tree
    bounds = np.empty((len(q0), len(pair_a)))
    _parallel.run(_robot_kernels().motion_rate_bounds, len(q0), tree.parent, tree.joint_type, tree.origin, tree.dof,
                  tree.multiplier, tree.offset, robot._geometry_link, robot._geometry_reach, pair_a, pair_b, q0, q1,
                  bounds, grain=_GRAIN_POSES)
    return bounds


def rate_bounds(robot, q0, q1, obstacles=None, self_collision=True):
    """(pair names, bounds (n, pairs)): for each segment q0[i] -> q1[i] ((n, dof) float64,
    validated) and each checked pair (the order of ``Robot.distances``), the bound on
    |d distance / ds| the motion checks advance with."""
    names, pair_a, pair_b = robot._pair_table(as_obstacles(obstacles), self_collision)
    return names, _rate_bounds(robot, q0, q1, pair_a, pair_b)


def local_rate_bounds(robot, q0, q1, s, obstacles=None, self_collision=True):
    """(pair names, rate0 (k, pairs), rate1 (k, pairs)): for one segment q0 -> q1 ((dof,)
    float64, validated) at parameters ``s`` (k,), the local bound the motion checks step with:
    |d(s + tau) - d(s)| <= rate0 tau + rate1 tau^2 / 2 for tau >= 0."""
    obstacles = as_obstacles(obstacles)
    names, pair_a, pair_b = robot._pair_table(obstacles, self_collision)
    tree = robot._tree
    s = np.ascontiguousarray(s, dtype=np.float64)
    count = len(s) * len(pair_a)
    rate0, rate1 = np.empty(count), np.empty(count)
    _robot_kernels().motion_pair_poses(
        tree.parent, tree.joint_type, tree.origin, tree.axis, tree.dof, tree.multiplier, tree.offset,
        robot._geometry_link, robot._geometry_origin, robot._sphere_center, robot._sphere_radius,
        robot._geometry_reach, pair_a, pair_b, np.ascontiguousarray(q0[None]), np.ascontiguousarray(q1[None]),
        np.zeros(count, dtype=np.int64), np.tile(np.arange(len(pair_a), dtype=np.int64), len(s)),
        np.repeat(s, len(pair_a)), np.empty((count, 4, 4)), np.empty((count, 4, 4)), rate0, rate1, 0, count)
    return names, rate0.reshape(len(s), -1), rate1.reshape(len(s), -1)


def advance_segments(robot, q0, q1, obstacles, self_collision, tolerance, max_iterations, along_path):
    """Conservative advancement of segments q0[i] -> q1[i] (float64 (n, dof), validated).

    Returns (names, status (n,) int8, first contact s (n,) (inf: none), pair (n,) (-1: none),
    lower bound at the contact (n,), iterations). ``along_path``: the segments are consecutive
    and only the first contact along them matters (later segments are dropped once one is
    found; their status is then meaningless)."""
    kernels = _robot_kernels()
    tree = robot._tree
    obstacles = as_obstacles(obstacles)
    names, pair_a, pair_b = robot._pair_table(obstacles, self_collision)
    segments, pairs = len(q0), len(pair_a)
    if tolerance is None:
        tolerance = DEFAULT_RELATIVE_TOLERANCE * robot.reach
    tolerance = float(tolerance)
    if not (math.isfinite(tolerance) and tolerance >= 0.0):
        raise GeometryError(f"tolerance must be finite and >= 0, got {tolerance}")
    max_iterations = int(max_iterations)
    if max_iterations < 1:
        raise GeometryError(f"max_iterations must be >= 1, got {max_iterations}")

    bounds = _rate_bounds(robot, q0, q1, pair_a, pair_b)

    obstacle_centers, obstacle_radii = obstacle_spheres(obstacles)
    radius_a = robot._sphere_radius[pair_a] if pairs else np.zeros(0)
    radius_b = np.where(pair_b >= 0, robot._sphere_radius[np.maximum(pair_b, 0)] if pairs else 0.0,
                        obstacle_radii[np.maximum(-pair_b - 1, 0)] if pairs else 0.0)
    pair_handoff = np.maximum(_HANDOFF_FRACTION * (radius_a + radius_b), tolerance + 1e-300)
    stand_ins = [None] * pairs  # (stand-in A, stand-in B, both exact), built when a pair first comes near

    item_segment = np.repeat(np.arange(segments, dtype=np.int64), pairs)
    item_pair = np.tile(np.arange(pairs, dtype=np.int64), segments)
    item_bound = bounds.reshape(-1).copy()
    s = np.zeros(segments * pairs)
    state = np.full(segments * pairs, kernels.MOTION_ACTIVE, dtype=np.int64)
    last_lower = np.full(segments * pairs, np.nan)
    first_contact = np.full(segments, np.inf)
    first_segment = np.array([segments], dtype=np.int64)
    geometry_args = (tree.parent, tree.joint_type, tree.origin, tree.axis, tree.dof, tree.multiplier, tree.offset,
                     robot._geometry_link, robot._geometry_origin)
    iterations = 0
    while True:
        active = np.flatnonzero(state == kernels.MOTION_ACTIVE)
        if len(active) == 0:
            break
        if iterations >= max_iterations:
            state[active] = kernels.MOTION_UNDECIDED
            break
        iterations += 1
        segment_of, pair_of = item_segment[active], item_pair[active]
        s_of, state_of = s[active], state[active]
        _parallel.run(kernels.motion_sphere_advance, len(active), *geometry_args, robot._sphere_center,
                      robot._sphere_radius, obstacle_centers, obstacle_radii, pair_a, pair_b, q0, q1, segment_of,
                      pair_of, item_bound[active], pair_handoff[pair_of], _SPHERE_STEPS, s_of, state_of,
                      grain=_GRAIN_SPHERES)
        s[active], state[active] = s_of, state_of
        near = active[state_of == kernels.MOTION_NEAR]
        if len(near):
            _narrow_phase(robot, kernels, geometry_args, near, item_segment, item_pair, item_bound, s, state,
                          last_lower, pair_a, pair_b, obstacles, stand_ins, q0, q1, tolerance)
        kernels.motion_drop_after_contacts(item_segment, s, state, first_contact, first_segment, along_path)

    status = np.full(segments, MotionStatus.FREE, dtype=np.int8)
    contact_pair = np.full(segments, -1, dtype=np.int64)
    contact_lower = np.full(segments, np.nan)
    per_segment = state.reshape(segments, pairs)
    s_grid = s.reshape(segments, pairs)
    undecided_before = ((per_segment == kernels.MOTION_UNDECIDED) & (s_grid < first_contact[:, None])).any(axis=1)
    hit = np.isfinite(first_contact)
    status[hit] = MotionStatus.CONTACT
    status[undecided_before] = MotionStatus.UNDECIDED
    for i in np.flatnonzero(hit):
        candidates = np.flatnonzero((per_segment[i] == kernels.MOTION_CONTACT) & (s_grid[i] == first_contact[i]))
        contact_pair[i] = candidates[0]
        contact_lower[i] = last_lower[i * pairs + candidates[0]]
    return names, status, first_contact, contact_pair, contact_lower, iterations


def _narrow_phase(robot, kernels, geometry_args, near, item_segment, item_pair, item_bound, s, state, last_lower,
                  pair_a, pair_b, obstacles, stand_ins, q0, q1, tolerance):
    """Lower bounds of the pair distance for the ``near`` items (stand-ins, then exact shapes
    where needed), then one advancement step for them."""
    count = len(near)
    pose_a = np.empty((count, 4, 4))
    pose_b = np.empty((count, 4, 4))
    rate0 = np.empty(count)
    rate1 = np.empty(count)
    _parallel.run(kernels.motion_pair_poses, count, *geometry_args, robot._sphere_center, robot._sphere_radius,
                  robot._geometry_reach, pair_a, pair_b, q0, q1, item_segment[near], item_pair[near], s[near],
                  pose_a, pose_b, rate0, rate1, grain=_GRAIN_POSES)
    lower = np.empty(count)
    reliable = np.empty(count, dtype=np.bool_)
    buffer = np.empty(10)
    pair_of = item_pair[near]
    order = np.argsort(pair_of, kind="stable")
    starts = np.flatnonzero(np.r_[True, pair_of[order][1:] != pair_of[order][:-1]])
    for start, stop in zip(starts, np.r_[starts[1:], count]):  # one batched call per pair near at all
        rows = order[start:stop]
        p = pair_of[rows[0]]
        shape_a = robot.geometries[pair_a[p]].shape
        if pair_b[p] >= 0:
            shape_b, other = robot.geometries[pair_b[p]].shape, pose_b[rows]
        else:
            shape_b, other, _ = obstacles[-pair_b[p] - 1]
        if stand_ins[p] is None:
            stand_ins[p] = _ConvexPair(shape_a, shape_b)
        convex = stand_ins[p]
        if len(rows) == 1 and convex.direct:
            row = rows[0]
            lower[row], reliable[row] = convex.lower_bound_one(pose_a[row], other[0] if other.ndim == 3 else other, buffer)
        else:
            lower[rows], reliable[rows] = _lower_bounds(convex.shape_a, pose_a[rows], convex.shape_b, other)
        if not convex.exact:  # within the tolerance on the hulls: the meshes themselves decide
            close = rows[(lower[rows] <= tolerance) | ~reliable[rows]]
            if len(close):
                lower[close], reliable[close] = _lower_bounds(shape_a, pose_a[close], shape_b,
                                                              other if pair_b[p] < 0 else pose_b[close])
    last_lower[near] = lower
    near_state = state[near]
    near_s = s[near]
    kernels.motion_distance_advance(lower, reliable, item_bound[near], rate0, rate1, tolerance, near_s, near_state)
    s[near], state[near] = near_s, near_state


class MotionResult:
    """Result of :meth:`Robot.check_motion` for n segments q0 -> q1 (scalars for one segment):

    ``status`` (n,) int8 codes of :class:`MotionStatus`; ``in_collision`` (n,) bool, a contact
    was found; ``time`` (n,) the first contact's parameter s in [0, 1] (NaN when none);
    ``configuration`` (n, dof) q0 + time (q1 - q0) (NaN when none); ``pair`` (n,) index into
    ``pairs`` of the pair in contact (-1 when none) and ``contact_pairs`` its (name, name);
    ``distance`` (n,) the lower bound of that pair's distance found at ``time`` (<= tolerance);
    ``iterations`` the conservative-advancement iterations the batch took; ``tolerance``."""

    __slots__ = ("pairs", "status", "time", "configuration", "pair", "distance", "iterations", "tolerance")

    def __init__(self, pairs, status, time, configuration, pair, distance, iterations, tolerance):
        self.pairs, self.status, self.time, self.configuration = pairs, status, time, configuration
        self.pair, self.distance, self.iterations, self.tolerance = pair, distance, iterations, tolerance

    @property
    def in_collision(self):
        answer = np.isfinite(self.time)
        return bool(answer) if np.ndim(answer) == 0 else answer

    @property
    def contact_pairs(self):
        if np.ndim(self.pair) == 0:
            return self.pairs[self.pair] if self.pair >= 0 else None
        return [self.pairs[p] if p >= 0 else None for p in self.pair]

    def __repr__(self):
        if np.ndim(self.status) == 0:
            return (f"MotionResult({MotionStatus(int(self.status)).name}, time={self.time!r}, "
                    f"pair={self.contact_pairs!r})")
        counts = {m.name: int(np.count_nonzero(self.status == m)) for m in MotionStatus}
        return f"MotionResult({len(self.status)} segments: {counts})"


class PathResult:
    """Result of :meth:`Robot.check_path` for configurations (m, dof), segments k -> k + 1:

    ``status`` a :class:`MotionStatus` (FREE: every segment certified; CONTACT: the first contact
    along the path is at ``segment``, ``time``; UNDECIDED: some segment before any contact found
    could not be certified); ``in_collision`` whether a contact was found; ``segment`` its
    segment index (-1 when none); ``time`` s within that segment (NaN when none); ``path_time``
    segment + time; ``configuration`` (dof,); ``pair`` / ``contact_pair`` / ``distance`` as in
    :class:`MotionResult`; ``iterations``; ``tolerance``."""

    __slots__ = ("pairs", "status", "segment", "time", "configuration", "pair", "distance", "iterations",
                 "tolerance")

    def __init__(self, pairs, status, segment, time, configuration, pair, distance, iterations, tolerance):
        self.pairs, self.status, self.segment, self.time = pairs, status, segment, time
        self.configuration, self.pair, self.distance = configuration, pair, distance
        self.iterations, self.tolerance = iterations, tolerance

    @property
    def in_collision(self):
        return self.segment >= 0

    @property
    def path_time(self):
        return self.segment + self.time if self.segment >= 0 else math.nan

    @property
    def contact_pair(self):
        return self.pairs[self.pair] if self.pair >= 0 else None

    def __repr__(self):
        return (f"PathResult({self.status.name}, segment={self.segment}, time={self.time!r}, "
                f"pair={self.contact_pair!r})")

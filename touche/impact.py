"""Time of impact and intersection sets: ``time_of_impact`` and ``intersection``.

    import touche as tc
    from touche.impact import time_of_impact, intersection
    hit = time_of_impact(a, tc.Static(), b, tc.Linear([1, -1, 0], pose_b), t_max=10.0)
    hit.status, hit.time, hit.normal, hit.point, hit.points, hit.kind

Engines: the registry (touche/dispatch.py) names the engine that answers a pair, per motion
family (``dispatch.motion_family``). Under translation, after the closed forms:
- ``dispatch.SAT``: the separating-axis engine for translating convex polytopes
  (touche/_kernels/motion/sat_moving.py: triangle, tetrahedron, box, convex polygon, convex polyhedron;
  Eberly's method of separating axes): exact first and last contact and the contact set;
- ``dispatch.GJK_CAST``: GJK shape casting (touche/_kernels/convex/gjk.py, Ericson 9.5.7, conservative
  advancement on the Minkowski difference) for every other pair of finite convex shapes (points,
  spheres, segments, capsules, cylinders, cones, ellipsoids, and those against polytopes): the
  first contact time, one contact point and the normal.
``intersection`` is answered for polytope pairs only (``dispatch.INTERSECTION``).
"""
from __future__ import annotations

import numpy as np

from . import _parallel, dispatch
from ._cache import WeakIdentityCache, shape_key
from ._enums import NamedIntEnum
from ._kernels import kernel_loader, kinds
from ._record import Record
from .errors import GeometryError, UnsupportedQuery
from .motion import CallableMotion, as_motion
from .pose import nonnegative_number
from .shapes import Shape, TriangleMesh, as_shape, local_bounding_sphere


class ImpactStatus(NamedIntEnum):
    """Outcome of :func:`time_of_impact`. One pair gives a member (it prints as its name); a batch
    gives an int8 array of the codes: 0 MISS, 1 HIT, 2 ALREADY_TOUCHING (touching or overlapping
    at t = 0), 3 MAX_ITERATIONS. ``ImpactStatus.names(codes)`` gives the names."""

    MISS = kinds.MISS
    HIT = kinds.HIT
    ALREADY_TOUCHING = kinds.ALREADY_TOUCHING
    MAX_ITERATIONS = kinds.TOI_MAX_ITERATIONS  # GJK casting did not converge: ``time`` is a lower bound


_STATUS_OF_CODE = {int(code): code for code in ImpactStatus}


class SetKind(NamedIntEnum):
    """Kind of a contact / intersection set (by its dimension). Batches give int8 codes:
    0 EMPTY, 1 POINT, 2 SEGMENT, 3 POLYGON, 4 POLYHEDRON (``SetKind.names(codes)``)."""

    EMPTY = kinds.SET_EMPTY
    POINT = kinds.SET_POINT
    SEGMENT = kinds.SET_SEGMENT
    POLYGON = kinds.SET_POLYGON
    POLYHEDRON = kinds.SET_POLYHEDRON


SAT_ENGINE = dispatch.SAT
_KIND_KEYFRAMES = 3  # touche.motion.KIND_KEYFRAMES
DEFAULT_TIME_TOLERANCE = 1e-9  # time accuracy of time_of_impact, a fraction of t_max
GJK_ENGINE = dispatch.GJK_CAST
# Batches run through touche._parallel.run: items per chunk (the smallest chunk worth handing to a
# thread, some tens of microseconds of work; a batch of at most one grain stays in the calling
# thread), from the cost per pair of each driver.
_GRAIN_ANALYTIC = 256  # closed forms under translation: ~0.1-0.5 us
_GRAIN_SAT = 32  # moving SAT of two polytopes with the contact set: a few us
_GRAIN_INTERSECTION = 32  # intersection set of two polytopes
_GRAIN_ADVANCEMENT = 4  # conservative advancement: tens of us to ms
_GRAIN_MESH = 1  # mesh time of impact: up to milliseconds
_GRAIN_QUADRATIC = 8  # quadratic box-box roots: several us
_GRAIN_POSE = 2048  # a motion's pose at a time: tens of ns
_GRAIN_GAP = 64  # one GJK gap


# the closed forms of ccd_analytic.py by their engine names in the registry
_CLOSED_FORM_CODES = {
    dispatch.SPHERE_SPHERE_CAST: "PAIR_SPHERE_SPHERE",
    dispatch.CONVEX_PLANE_CAST: "PAIR_CONVEX_PLANE",
    dispatch.SPHERE_TRIANGLE_CAST: "PAIR_SPHERE_TRIANGLE",
    dispatch.SPHERE_POLYGON_CAST: "PAIR_SPHERE_POLYGON",
    dispatch.SPHERE_BOX_CAST: "PAIR_SPHERE_BOX",
}


_kernels = kernel_loader("sat_moving")


def _shape(value, name):
    return value if isinstance(value, Shape) else as_shape(value, name)


def _capacity(a, b):
    """Rows per pair of the padded point outputs: a contact set has at most nv_a + nv_b vertices;
    A n B has at most 2 F - 4 vertices for F <= n_planes_a + n_planes_b facets (simple
    polytopes), a polygon at most n_planes_a + n_planes_b."""
    nva, npa = int(a.params[0]), int(a.params[1])
    nvb, npb = int(b.params[0]), int(b.params[1])
    return max(nva + nvb, 2 * (npa + npb), 4)


class ImpactResult(Record):
    """Result of :func:`time_of_impact`.

    One pair: ``status`` (:class:`ImpactStatus`), ``time`` (first contact; 0 when already
    touching; inf on MISS), ``last_time`` (end of the contact interval, may exceed t_max, inf when
    the shapes never part; NaN on MISS), ``normal`` (3,) unit, from A to B (HIT: the separating
    axis of first contact; ALREADY_TOUCHING: the axis of least penetration; NaN on MISS),
    ``points`` (k, 3) the contact set at ``time`` in world coordinates (HIT: the touching features;
    ALREADY_TOUCHING: A n B at t = 0), ``kind`` (:class:`SetKind`) and ``point`` (3,) the mean of
    ``points``.

    Batch of n: ``status`` (n,) int8, ``time`` / ``last_time`` (n,), ``normal`` / ``point`` (n, 3),
    ``kind`` (n,) int8, ``count`` (n,) int64 and ``points`` (n, K, 3) padded with NaN after
    ``count`` rows. The int8 codes are those of :class:`ImpactStatus` (0 MISS, 1 HIT,
    2 ALREADY_TOUCHING, 3 MAX_ITERATIONS) and :class:`SetKind`; ``status_names`` gives the
    statuses as names.

    Pairs with a triangle mesh also give ``triangles``: (2,) int64 (or (n, 2)) the original
    indices of the touching triangle of each mesh at first contact (-1 for a shape that is not
    a mesh, or on MISS); None for other pairs.
    """

    __slots__ = ("status", "time", "last_time", "normal", "point", "points", "kind", "count", "triangles")
    _optional = ("triangles",)

    @property
    def status_names(self):
        """``status`` as names: a str for one pair, a (n,) str array for a batch."""
        return ImpactStatus.names(self.status)

    _batch_field = "time"

    def _describe(self):
        return (f"status={self.status.name}, time={self.time!r}, kind={self.kind.name}, "
                f"point={np.round(self.point, 6).tolist()}, normal={np.round(self.normal, 6).tolist()}")


class IntersectionResult(Record):
    """Result of :func:`intersection`: ``kind`` (:class:`SetKind`) and ``points`` (m, 3): a point,
    a segment's two ends, a polygon's vertices in order around it, or a polyhedron's vertices
    (``faces`` gives its hull triangles, computed with scipy on demand). Batch: ``kind`` (n,)
    int8, ``count`` (n,), ``points`` (n, K, 3) NaN-padded."""

    __slots__ = ("kind", "points", "count")

    @property
    def faces(self):
        """Hull triangles (indices into ``points``) of a single POLYHEDRON result, else None."""
        if isinstance(self.kind, np.ndarray) or self.kind != SetKind.POLYHEDRON:
            return None
        from scipy.spatial import ConvexHull

        return ConvexHull(self.points).simplices

    _batch_field = "kind"

    def _describe(self):
        return f"kind={self.kind.name}, {len(self.points)} points"


def _motion(value, name):
    motion = as_motion(value, name)
    pose = np.ascontiguousarray(motion.pose, dtype=np.float64).reshape(-1, 4, 4)
    velocity = np.ascontiguousarray(motion.velocity, dtype=np.float64).reshape(-1, 3)
    return motion, np.require(pose, np.float64, ["C", "W"]), np.require(velocity, np.float64, ["C", "W"])


def _time_tolerance(value):
    if value is None:
        return DEFAULT_TIME_TOLERANCE
    try:
        tolerance = float(value)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"tolerance must be a number, got {value!r}") from exc
    if not (0.0 < tolerance < 1.0):
        raise GeometryError(f"tolerance must be in (0, 1) (a fraction of t_max), got {value!r}")
    return tolerance


def time_of_impact(a, motion_a, b, motion_b, t_max, tolerance=None):
    """First time in ``[0, t_max]`` at which two moving shapes touch.

    Arguments:

    - ``a``, ``b``: shapes (any touche shape, a ``TriangleMesh`` or a ``trimesh.Trimesh``).
    - ``motion_a``, ``motion_b``: touche motions (``Static``, ``Linear``, ``Screw``,
      ``Keyframes``, ``Integrated``, ``QuadraticMatrix``, ``CallableMotion``); a plain pose
      (``Pose``, ``(4, 4)``, ``(n, 4, 4)``) or None means ``Static`` there.
    - ``t_max``: the end of the time window, a number >= 0 (``inf`` allowed), in the caller's
      time units.
    - ``tolerance``: time accuracy as a fraction of ``t_max`` (default 1e-9); the reported time
      is never after the true first contact.

    Batches: motions whose poses are ``(n, 4, 4)``, velocities ``(n, 3)``, keyframe poses
    ``(n, k, 4, 4)`` or quadratic coefficients ``(n, 3, 4, 4)`` are n motions, run in one
    compiled call; a batch of 1 broadcasts against the other side. A batch of no motions
    (``(0, 4, 4)`` poses or ``(0, 3)`` velocities of ``Static`` / ``Linear`` / ``Screw``, or a
    ``(0, 4, 4)`` pose) gives empty arrays.

    Returns an ``ImpactResult``: ``status`` (``ImpactStatus``: ``MISS``, ``HIT``,
    ``ALREADY_TOUCHING``, ``MAX_ITERATIONS``), ``time`` (inf on a miss, 0 when already touching),
    ``last_time``, ``normal`` (from A to B), ``point`` and the contact set ``points`` / ``kind``
    / ``count`` in world coordinates, and for meshes ``triangles``; one pair gives scalars and
    ``(3,)`` arrays, a batch of n gives ``(n,)`` / ``(n, 3)`` / ``(n, K, 3)`` arrays (see
    ``ImpactResult``).

    Errors: ``GeometryError`` for a bad motion, pose or ``t_max`` (NaN, negative, batch
    lengths that differ); ``UnsupportedQuery`` for a pair without a time-of-impact engine
    (two planes, for instance).

    Engines (touche/dispatch.py, by the pair's kinds and motion family):

    - both motions translational (Static / Linear): the exact moving SAT for polytope pairs
      (first and last contact, contact set) and GJK shape casting for other finite convex pairs;
      contact means within the touching tolerance (touche.tolerance) on every axis;
    - rotating / keyframed / integrated motions, and any motion against a plane or half-space:
      conservative advancement on GJK distances (touche/_kernels/motion/ccd.py) with rigorous bounds
      on the approach speed, so thin fast-spinning shapes never tunnel; ``time`` is the first
      advancement time at which the gap is <= the touching tolerance; ``last_time`` is NaN;
    - QuadraticMatrix motions (box-box only; the other motion may be translational): exact first
      contact from the roots of the piecewise-polynomial separating-axis functions
      (touche/_kernels/motion/ccd_quadratic.py);
    - CallableMotion: conservative advancement in Python with the user's speed bounds (one
      kernel call per step);
    - a triangle mesh against a mesh, a convex shape or a plane (any rigid motion): the bounding
      balls, then the convex hulls advance to the hulls' contact (misses mostly end there; where
      the hulls touch on the meshes' own triangles that time is the first contact), then
      best-first conservative advancement on the BVHs with node-level motion bounds
      (touche/_kernels/motion/ccd_mesh.py). ``triangles`` gives the touching triangles.
    """
    a = _shape(a, "a")
    b = _shape(b, "b")
    limit = nonnegative_number(t_max, "t_max", finite=False)
    time_tolerance = _time_tolerance(tolerance)
    ma = as_motion(motion_a, "motion_a")
    mb = as_motion(motion_b, "motion_b")
    engine, flip = dispatch.require(dispatch.TIME_OF_IMPACT[dispatch.motion_family(ma, mb)], a, b)
    if ma.batch_size == 0 or mb.batch_size == 0:
        return _empty_impact(a, ma, b, mb, engine)
    if engine == dispatch.MESH_ADVANCEMENT or engine == dispatch.MESH_PYTHON_ADVANCEMENT:
        return _mesh_time_of_impact(a, ma, b, mb, limit, time_tolerance, flip)
    if engine == dispatch.QUADRATIC_SAT:
        return _quadratic_time_of_impact(a, ma, b, mb, limit, time_tolerance)
    if engine == dispatch.PYTHON_ADVANCEMENT:
        return _callable_time_of_impact(a, ma, b, mb, limit, time_tolerance, flip)
    if engine == dispatch.ADVANCEMENT:
        return _advancement_time_of_impact(a, ma, b, mb, limit, time_tolerance, flip)
    if engine == dispatch.ALIGNED_BOXES_OR_SAT:
        if _identity_rotations(ma) and _identity_rotations(mb):
            from ._kernels import ccd_analytic

            return _analytic_time_of_impact(a, ma, b, mb, limit, ccd_analytic.PAIR_AABB_AABB, False)
        engine = dispatch.SAT
    code_name = _CLOSED_FORM_CODES.get(engine)
    if code_name is not None:
        from ._kernels import ccd_analytic

        return _analytic_time_of_impact(a, ma, b, mb, limit, getattr(ccd_analytic, code_name), flip)
    return _translational(a, ma, b, mb, limit, engine)


def _empty_impact(a, motion_a, b, motion_b, engine):
    """The result of a batch of no motions (a filtered batch can be empty): arrays of length 0,
    shaped as a batch's. The other motion must be single (or empty too): several motions beside
    none is a length mismatch, as for any batch."""
    for motion, name in ((motion_a, "motion_a"), (motion_b, "motion_b")):
        if motion.batch_size > 1:
            raise GeometryError(f"motion batches differ in length: {name} has {motion.batch_size}, the other 0")
    rows = _capacity(a, b) if engine in (dispatch.SAT, dispatch.ALIGNED_BOXES_OR_SAT) else 1
    meshes = isinstance(a, TriangleMesh) or isinstance(b, TriangleMesh)
    return ImpactResult(np.zeros(0, dtype=np.int8), np.zeros(0), np.zeros(0), np.zeros((0, 3)), np.zeros((0, 3)),
                        np.zeros((0, rows, 3)), np.zeros(0, dtype=np.int8), np.zeros(0, dtype=np.int64),
                        np.zeros((0, 2), dtype=np.int64) if meshes else None)


# ----------------------------------------------------------------------------------------------
# closed forms under translation (Ericson 5.5.3-5.5.8), touche/_kernels/motion/ccd_analytic.py
def _identity_rotations(motion):
    rotation = np.asarray(motion.pose, dtype=np.float64).reshape(-1, 4, 4)[:, :3, :3]
    return bool((rotation == np.eye(3)).all())


def _linear_pair(motion_a, motion_b):
    """Poses (k, 4, 4) and velocities (k, 3) of two translational motions, the common batch
    length and whether both are single motions (GeometryError when the batches differ)."""
    motion_a, ta, va = _motion(motion_a, "motion_a")
    motion_b, tb, vb = _motion(motion_b, "motion_b")
    sizes = {len(ta), len(va), len(tb), len(vb)} - {1}
    if len(sizes) > 1:
        raise GeometryError(f"batch sizes differ: poses {len(ta)}, {len(tb)}; velocities {len(va)}, {len(vb)}")
    count = sizes.pop() if sizes else 1
    single = (np.ndim(motion_a.pose) == 2 and np.ndim(motion_b.pose) == 2
              and np.ndim(motion_a.velocity) == 1 and np.ndim(motion_b.velocity) == 1)
    return ta, va, tb, vb, count, single


def _analytic_time_of_impact(a, motion_a, b, motion_b, limit, code, flip):
    """A closed form of ccd_analytic.py (``code``); ``flip``: the kernel takes B first (the
    registry's order: the sphere / box / convex shape before its partner)."""
    from ._kernels import ccd_analytic

    if flip:
        a, motion_a, b, motion_b = b, motion_b, a, motion_a
    ta, va, tb, vb, count, single = _linear_pair(motion_a, motion_b)
    status = np.empty(count, dtype=np.int8)
    time = np.empty(count)
    last = np.empty(count)
    point = np.empty((count, 3))
    normal = np.empty((count, 3))
    if count == 1:  # no thread pool for one pair
        res = ccd_analytic.analytic_pair(code, *a._packed[:3], ta[0], va[0], *b._packed[:3], tb[0], vb[0], limit)
        status[0], time[0], last[0] = res[0], res[1], res[2]
        point[0] = res[3:6]
        normal[0] = res[6:9]
    else:
        _parallel.run(ccd_analytic.analytic_many, count, code, *a._packed[:3], ta, va, *b._packed[:3], tb, vb, limit,
                      status, time, last, point, normal, grain=_GRAIN_ANALYTIC)
    if flip:
        normal = -normal
    if code == ccd_analytic.PAIR_AABB_AABB:
        return _aabb_result(a, ta, va, b, tb, vb, status, time, last, normal, count, single)
    result = _point_result(status, time, point, normal, single)
    result.last_time = float(last[0]) if single else last
    return result


# corners of an overlap box by how many axes it extends along (0: a point, 1: a segment's two
# ends, 2: a rectangle's four corners in order around it, 3: the box's eight corners): for the
# rectangle, whether its first / second free axis takes the high end; for the box, whether each
# axis does (corner k takes bit j of k on axis j)
_RECTANGLE_HIGH = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=bool)
_BOX_HIGH = np.array([[(k >> j) & 1 for j in range(3)] for k in range(8)], dtype=bool)


def _box_contact_sets(lo, hi, middle, flat, found):
    """``(points (n, 8, 3) NaN-padded, counts (n,), kinds (n,) int8)``: the contact set of each
    found row's overlap box ``lo`` .. ``hi`` (middle where ``flat``), by array operations over
    the rows grouped by their number of free axes."""
    count = len(lo)
    extent = 3 - flat.sum(1)
    points = np.full((count, 8, 3), np.nan)
    counts = np.zeros(count, dtype=np.int64)
    kind = np.full(count, kinds.SET_EMPTY, dtype=np.int8)
    set_kinds = (kinds.SET_POINT, kinds.SET_SEGMENT, kinds.SET_POLYGON, kinds.SET_POLYHEDRON)
    for free_axes, corners in ((0, 1), (1, 2), (2, 4), (3, 8)):
        rows = np.flatnonzero(found & (extent == free_axes))
        if len(rows) == 0:
            continue
        counts[rows] = corners
        kind[rows] = set_kinds[free_axes]
        if free_axes == 3:
            points[rows] = np.where(_BOX_HIGH, hi[rows, None, :], lo[rows, None, :])
            continue
        block = np.repeat(middle[rows, None, :], corners, axis=1)  # (m, corners, 3)
        if free_axes > 0:
            # the free axes of each row in increasing order (flat axes sort last)
            axes = np.argsort(flat[rows], axis=1, kind="stable")[:, :free_axes]  # (m, free_axes)
            high = _RECTANGLE_HIGH if free_axes == 2 else np.array([[0], [1]], dtype=bool)  # (corners, free)
            index = np.arange(len(rows))[:, None, None]
            picked = np.where(high[None], np.take_along_axis(hi[rows], axes, 1)[:, None, :],
                              np.take_along_axis(lo[rows], axes, 1)[:, None, :])  # (m, corners, free)
            block[index, np.arange(corners)[None, :, None], axes[:, None, :]] = picked
        points[rows, :corners] = block
    return points, counts, kind


def _box_contact_set_one(lo, hi, middle, flat, found):
    """_box_contact_sets for a single row (the same corners in the same order)."""
    points = np.full((1, 8, 3), np.nan)
    if not found:
        return points, np.zeros(1, dtype=np.int64), np.full(1, kinds.SET_EMPTY, dtype=np.int8)
    lo, hi, middle = lo.tolist(), hi.tolist(), middle.tolist()
    free = [axis for axis in range(3) if not flat[axis]]
    if len(free) == 3:
        corners = [[hi[j] if high else lo[j] for j, high in enumerate(row)] for row in _BOX_HIGH.tolist()]
    else:
        high_table = _RECTANGLE_HIGH.tolist() if len(free) == 2 else [[False], [True]] if free else [[]]
        corners = []
        for row in high_table:
            corner = list(middle)
            for axis, high in zip(free, row):
                corner[axis] = hi[axis] if high else lo[axis]
            corners.append(corner)
    points[0, :len(corners)] = corners
    set_kind = (kinds.SET_POINT, kinds.SET_SEGMENT, kinds.SET_POLYGON, kinds.SET_POLYHEDRON)[len(free)]
    return points, np.array([len(corners)], dtype=np.int64), np.array([set_kind], dtype=np.int8)


def _aabb_result(a, ta, va, b, tb, vb, status, time, last, normal, count, single):
    """The contact set of two moving AABBs at first contact (the 5.5.8 path), as the SAT engine
    reports it: their overlap box at that time, flat along the axes where it has no extent (within
    the touching tolerance): a point, a segment (its ends), a rectangle (4 corners in order) or a
    box (8 corners, overlapping volumes at t = 0)."""
    from .tolerance import touching_tolerance

    half_a, half_b = a.params[-3:], b.params[-3:]
    centre_a = np.broadcast_to(ta[:, :3, 3] + a.params[-6:-3], (count, 3))
    centre_b = np.broadcast_to(tb[:, :3, 3] + b.params[-6:-3], (count, 3))
    va, vb = np.broadcast_to(va, (count, 3)), np.broadcast_to(vb, (count, 3))
    found = status != kinds.MISS
    at = np.where(found, time, 0.0)[:, None]
    lo = np.maximum(centre_a + at * va - half_a, centre_b + at * vb - half_b)
    hi = np.minimum(centre_a + at * va + half_a, centre_b + at * vb + half_b)
    scale = max(a.scale, b.scale) + float(np.abs(centre_a).max() + np.abs(centre_b).max())
    flat = (hi - lo) <= touching_tolerance(scale)
    middle = 0.5 * (lo + hi)
    lo = np.where(flat, middle, lo)
    hi = np.where(flat, middle, hi)
    if count == 1:  # one row: plain Python on three axes costs less than the grouped array passes
        points, counts, kind = _box_contact_set_one(lo[0], hi[0], middle[0], flat[0], bool(found[0]))
    else:
        points, counts, kind = _box_contact_sets(lo, hi, middle, flat, found)
    point = np.where(found[:, None], middle, np.nan)
    if single:
        n = int(counts[0])
        return ImpactResult(ImpactStatus(int(status[0])), float(time[0]), float(last[0]), normal[0], point[0],
                            points[0, :n].copy(), SetKind(int(kind[0])), n)
    return ImpactResult(status, time, last, normal, point, points, kind, counts)


def _translational(a, motion_a, b, motion_b, limit, engine):
    ta, va, tb, vb, count, single = _linear_pair(motion_a, motion_b)
    if engine == GJK_ENGINE:
        return _cast(a, ta, va, b, tb, vb, limit, count, single)
    kernels = _kernels()
    capacity = _capacity(a, b)
    while True:
        status = np.empty(count, dtype=np.int8)
        time = np.empty(count)
        last = np.empty(count)
        normal = np.empty((count, 3))
        kind = np.empty(count, dtype=np.int8)
        counts = np.empty(count, dtype=np.int64)
        points = np.empty((count, capacity, 3))
        if count == 1:
            kernels.time_of_impact_one(*a._packed, a.scale, ta, va, *b._packed, b.scale, tb, vb, limit,
                                       status, time, last, normal, kind, counts, points)
        else:
            _parallel.run(kernels.time_of_impact_many, count, *a._packed, a.scale, ta, va, *b._packed, b.scale, tb, vb,
                          limit, status, time, last, normal, kind, counts, points, grain=_GRAIN_SAT)
        if counts.max() <= capacity:
            break
        capacity = int(counts.max())  # never expected (see _capacity): rerun with room for all
    with np.errstate(invalid="ignore", divide="ignore"):
        point = np.nansum(points, axis=1) / counts[:, None]  # count 0 -> NaN
    if single:
        n = int(counts[0])
        return ImpactResult(ImpactStatus(int(status[0])), float(time[0]), float(last[0]), normal[0],
                            point[0], points[0, :n].copy(), SetKind(int(kind[0])), n)
    return ImpactResult(status, time, last, normal, point, points, kind, counts)


# ----------------------------------------------------------------------------------------------
# conservative advancement (rotating and general rigid motions), touche/_kernels/motion/ccd.py
_PLANES = dispatch.PLANES
CA_MAX_ITERATIONS = 20_000  # per pair; transversal contacts need ~30 x (speed bound / approach speed)


def _ccd():
    from ._kernels import ccd

    return ccd


# per-shape and per-pair caches: weakly keyed by the shapes (touche/_cache.py), so a deleted shape
# takes its entries with it; pairs bounded (their count can grow as the square of the shapes')
_BALLS = WeakIdentityCache()
_MESH_PAIRS = WeakIdentityCache(limit=64)
_HULLS = WeakIdentityCache()


def _ball(shape):
    """Local bounding sphere (cx, cy, cz, r) of a finite shape, radius included (cached per
    shape: shapes are immutable)."""
    return _BALLS.for_shape(shape, _bounding_ball)


def _bounding_ball(shape):
    kind = shape.kind
    if kind in _PLANES:
        ball = np.zeros(4)
    elif kind == kinds.MESH:
        ball = np.ascontiguousarray(shape.bvh.node_bounds[0, 27:31], dtype=np.float64).copy()
    else:
        center, radius = local_bounding_sphere(shape)
        ball = np.array([center[0], center[1], center[2], radius * (1.0 + 1e-12)])
    return ball


def _packed_motion(motion, name):
    if not getattr(motion, "kernel_form", False):
        raise UnsupportedQuery("time_of_impact", motion)
    rows = motion.packed()
    # the motions pack private float64 C arrays: np.require only when one is not (~1 us a call)
    if not (type(rows) is np.ndarray and rows.dtype == np.float64 and rows.flags.c_contiguous
            and rows.flags.writeable):
        rows = np.require(rows, np.float64, ["C", "W"])
    return rows, len(rows) > 1 or motion.is_batch


def _speed_bound(rows, ball):
    """A bound on point speeds (for the coarse tolerance only, not for safety)."""
    from ._kernels import ccd_mesh_hulls

    return ccd_mesh_hulls.motion_bounds(rows, ball)[0]


def _pair_scale(a, b, rows_a, rows_b):
    """Model size for the touching tolerance: the shapes plus how far their origins are."""
    from ._kernels import ccd_mesh_hulls

    ball = np.zeros(4)
    return max(a.scale, b.scale) + max(ccd_mesh_hulls.motion_bounds(rows_a, ball)[1],
                                       ccd_mesh_hulls.motion_bounds(rows_b, ball)[1])


def _advancement_time_of_impact(a, motion_a, b, motion_b, limit, time_tolerance, flip):
    """Finite convex A against finite convex or plane B (the registry's order; ``flip``: the
    caller gave them the other way round)."""
    if flip:
        a, motion_a, b, motion_b = b, motion_b, a, motion_a
    if b.kind in _PLANES and not motion_b.translational:
        raise GeometryError("a plane / half-space in time_of_impact must move by translation (Static / Linear)")
    from .tolerance import touching_tolerance

    rows_a, batch_a = _packed_motion(motion_a, "motion_a")
    rows_b, batch_b = _packed_motion(motion_b, "motion_b")
    if len(rows_a) > 1 and len(rows_b) > 1 and len(rows_a) != len(rows_b):
        _motion_lengths_differ(len(rows_a), len(rows_b), flip)
    count = max(len(rows_a), len(rows_b))
    ball_a, ball_b = _ball(a), _ball(b)
    kernels = _ccd()
    ka, pa, pta = a._packed[:3]
    kb, pb, ptb = b._packed[:3]
    if count == 1:
        from ._kernels import ccd_mesh_hulls

        # one kernel call for the touching tolerance and the coarse one (as below, for one row)
        eps, coarse = ccd_mesh_hulls.tolerances(rows_a[0], ball_a, rows_b[0], ball_b, max(a.scale, b.scale), limit,
                                                time_tolerance)
        out = np.empty(7)
        code, used = kernels.ca_pair(ka, pa, pta, rows_a[0], ball_a, kb, pb, ptb, rows_b[0], ball_b,
                                     limit, eps, coarse, CA_MAX_ITERATIONS, out)
        if not (batch_a or batch_b):
            return _single_point_result(code, out, flip)
        status = np.full(1, code, dtype=np.int8)
        time, point, normal = out[:1].copy(), out[None, 1:4].copy(), out[None, 4:7].copy()
        return _point_result(status, time, point, -normal if flip else normal, single=False)
    eps = touching_tolerance(_pair_scale(a, b, rows_a, rows_b))
    horizon = limit if np.isfinite(limit) else 1.0
    coarse = max(16.0 * eps, time_tolerance * horizon * (_speed_bound(rows_a, ball_a) + _speed_bound(rows_b, ball_b)))
    status = np.empty(count, dtype=np.int8)
    time = np.empty(count)
    point = np.empty((count, 3))
    normal = np.empty((count, 3))
    iterations = np.empty(count, dtype=np.int64)
    _parallel.run(kernels.ca_many, count, ka, pa, pta, rows_a, ball_a, kb, pb, ptb, rows_b, ball_b, limit, eps, coarse,
                  CA_MAX_ITERATIONS, status, time, point, normal, iterations, grain=_GRAIN_ADVANCEMENT)
    if flip:
        # the contact point was on the (former) A: a point of contact either way; the normal flips
        normal = -normal
    return _point_result(status, time, point, normal, single=not (batch_a or batch_b))


def _motion_lengths_differ(length_a, length_b, flip):
    """GeometryError naming the caller's motions (the engines may have swapped the pair)."""
    if flip:
        length_a, length_b = length_b, length_a
    raise GeometryError(f"motion batches differ in length: motion_a has {length_a}, motion_b has {length_b}")


def _single_point_result(code, out, flip):
    """ImpactResult of one query from a kernel's status code and out (7,) = (t, point, normal)
    (as _point_result for one pair, without its batch arrays)."""
    found = code == kinds.HIT or code == kinds.ALREADY_TOUCHING
    point = out[1:4]
    normal = -out[4:7] if flip else out[4:7]
    return ImpactResult(_STATUS_OF_CODE[code], float(out[0]), np.nan, normal, point,
                        point.reshape(1, 3).copy() if found else np.empty((0, 3)),
                        SetKind.POINT if found else SetKind.EMPTY, int(found))


def _point_result(status, time, point, normal, single, found=None):
    """ImpactResult of one contact point per pair; ``found``: the pairs with a contact point
    (default: HIT or ALREADY_TOUCHING)."""
    if found is None:
        found = (status == kinds.HIT) | (status == kinds.ALREADY_TOUCHING)
    kind = np.where(found, kinds.SET_POINT, kinds.SET_EMPTY).astype(np.int8)
    last = np.full(len(time), np.nan)
    if single:
        n = int(found[0])
        return ImpactResult(ImpactStatus(int(status[0])), float(time[0]), float(last[0]), normal[0],
                            point[0], point[:n].copy(), SetKind(int(kind[0])), n)
    points = np.where(found[:, None, None], point[:, None, :], np.nan)
    return ImpactResult(status, time, last, normal, point, points, kind, found.astype(np.int64))


# ----------------------------------------------------------------------------------------------
# meshes: conservative advancement on the BVH (touche/_kernels/motion/ccd_mesh.py)
MESH_BUDGET = 2_000_000  # advancement steps per query before the coarse / MAX_ITERATIONS exit


def _mesh_time_of_impact(a, motion_a, b, motion_b, limit, time_tolerance, flip):
    """Mesh-mesh, mesh-convex and mesh-plane pairs: conservative advancement over the BVH with
    node-level motion bounds (never tunnels; time never after the first contact). The mesh goes
    first (``flip``: it was given as B; the normal and the triangle ids are flipped back)."""
    if flip:
        a, motion_a, b, motion_b = b, motion_b, a, motion_a
    if b.kind == kinds.MESH:
        b_mode = 0
    elif b.kind in _PLANES:
        b_mode = 2
        if isinstance(motion_b, CallableMotion) or not getattr(motion_b, "translational", False):
            raise GeometryError("a plane / half-space in time_of_impact must move by translation (Static / Linear)")
    else:  # a finite convex shape (the registry admits nothing else)
        b_mode = 1
    if isinstance(motion_a, CallableMotion) or isinstance(motion_b, CallableMotion):
        if motion_a.is_batch or motion_b.is_batch:
            raise UnsupportedQuery("time_of_impact (a batch with a CallableMotion on a mesh)", a, b)
        return _callable_mesh_time_of_impact(a, motion_a, b, motion_b, b_mode, limit, time_tolerance, flip)
    rows_a, batch_a = _packed_motion(motion_a, "motion_a")
    rows_b, batch_b = _packed_motion(motion_b, "motion_b")
    if len(rows_a) > 1 and len(rows_b) > 1 and len(rows_a) != len(rows_b):
        _motion_lengths_differ(len(rows_a), len(rows_b), flip)
    count = max(len(rows_a), len(rows_b))
    ccd_mesh, a_side, b_side, tail = _mesh_pair_arguments(a, b, b_mode)
    out = np.empty((count, ccd_mesh.OUT_SIZE))
    if count == 1:
        code = ccd_mesh.mesh_toi(*a_side, rows_a[0], b_mode, *b_side, rows_b[0], limit, *tail[:1], time_tolerance,
                                 *tail[1:], out[0])
        if not (batch_a or batch_b):
            return _single_mesh_result(code, out[0], flip)
        status = np.full(1, code, dtype=np.int8)
    else:
        status = np.empty(count, dtype=np.int8)
        _parallel.run(ccd_mesh.mesh_toi_many, count, *a_side, rows_a, b_mode, *b_side, rows_b, limit, *tail[:1],
                      time_tolerance, *tail[1:], status, out, grain=_GRAIN_MESH)
    return _mesh_result(status, out, flip, single=not (batch_a or batch_b))


def _mesh_pair_arguments(a, b, b_mode):
    """The motion-independent arguments of ccd_mesh.mesh_toi for mesh A and B, cached per pair
    (shapes are immutable; a few us of packing per query otherwise): (module, A's tree and
    ball, B's tree / packed shape / ball, (scale, budget, descend, hulls...))."""
    key_a, key_b = shape_key(a), shape_key(b)
    cached = _MESH_PAIRS.get(key_a, key_b)
    if cached is not None:
        return cached
    kb, pb, ptb = b._packed[:3]
    # B's coordinate array is its cache key: the cached arguments must not hold it (it would keep
    # the entry alive), so they hold a copy
    ptb = ptb.copy()
    return _MESH_PAIRS.get_or_build(lambda: _pack_mesh_pair(a, b, b_mode, kb, pb, ptb), key_a, key_b)


def _pack_mesh_pair(a, b, b_mode, kb, pb, ptb):
    from ._kernels import ccd_mesh

    # a fresh mesh needs its hull (Qhull releases the GIL) and its tree (a nogil kernel): the
    # trees build in a helper thread meanwhile (a third of the first query on a fine mesh)
    fresh = [m for m in dict.fromkeys((a, b) if b_mode == 0 else (a,)) if m._bvh is None]
    helper = None
    if fresh:
        import threading

        helper = threading.Thread(target=_build_trees, args=(fresh,), name="touche-bvh", daemon=True)
        helper.start()
    try:
        # the hull prefix (ccd_mesh_hulls.hull_advance): A's hull against B's hull or B itself (convex);
        # not for planes (their translation is one closed-form step of the tree anyway)
        hull_a = _mesh_hull(a) if b_mode != 2 else _NO_HULL
        hull_b = _mesh_hull(b) if b_mode == 0 else (kb, pb, ptb, 0.0)
    finally:
        if helper is not None:
            helper.join()
    b_arrays = b.bvh._arrays() if b_mode == 0 else _NO_TREE
    if hull_a[0] < 0 or hull_b[0] < 0:
        hull_a = hull_b = _NO_HULL
    hulls = (*hull_a[:3], *hull_b[:3], ccd_mesh.HANDOVER, hull_a[3] + hull_b[3])
    arguments = (ccd_mesh, (*a.bvh._arrays(), _ball(a)), (*b_arrays, kb, pb, ptb, _ball(b)),
                 (max(a.scale, b.scale), MESH_BUDGET, ccd_mesh.DESCEND, *hulls))
    return arguments


def _build_trees(meshes):
    try:
        for mesh in meshes:
            mesh.bvh  # noqa: B018 - builds and keeps the tree
    except Exception:  # noqa: BLE001 - the calling thread builds again and raises it
        pass


_NO_TREE = (np.zeros((1, 3), dtype=np.int64), np.zeros((1, 31)), np.zeros((1, 3, 3)), np.zeros(1, dtype=np.int64))
_NO_HULL = (-1, np.zeros(4), np.zeros((1, 3)), 0.0)


def _mesh_hull(mesh):
    """(kind, params, points, slack) of the convex hull of a mesh's face vertices as a packed
    POLYHEDRON for the hull prefix of the mesh time of impact (touche/_kernels/motion/ccd_mesh.py
    hull_advance), cached per mesh; _NO_HULL (kind -1) for a flat or degenerate mesh. Only what
    GJK reads is packed: the hull vertices and their adjacency (CSR, hill climbing), no facet
    planes (ConvexPolyhedron's facet merge is quadratic in the facet count: a minute for a
    7,000-facet hull). ``slack``: the largest distance of a mesh vertex outside the hull's
    planes (Qhull's rounding), added to the hulls' margin so the hull still bounds the mesh."""
    return _HULLS.for_shape(mesh, _pack_hull)


def _pack_hull(mesh):
    from scipy.spatial import ConvexHull, QhullError

    points = np.asarray(mesh.points, dtype=np.float64)[np.unique(mesh.triangles)]
    try:
        hull = ConvexHull(points)
    except (QhullError, ValueError):
        packed = _NO_HULL
    else:
        vertices = np.ascontiguousarray(points[hull.vertices])
        local = np.full(len(points), -1, dtype=np.int64)
        local[hull.vertices] = np.arange(len(hull.vertices))
        simplices = local[hull.simplices]
        edges = np.concatenate([simplices[:, [0, 1]], simplices[:, [1, 2]], simplices[:, [2, 0]]])
        # unique undirected edges, both directions, sorted by (from, to): one int64 key per edge
        count = np.int64(len(vertices))
        keys = np.unique(np.minimum(edges[:, 0], edges[:, 1]) * count + np.maximum(edges[:, 0], edges[:, 1]))
        both = np.concatenate([np.stack([keys // count, keys % count], axis=1),
                               np.stack([keys % count, keys // count], axis=1)])
        both = both[np.argsort(both[:, 0] * count + both[:, 1])]
        starts = np.searchsorted(both[:, 0], np.arange(len(vertices) + 1))
        params = np.concatenate([[len(vertices), 0, 0, 0], starts, both[:, 1]]).astype(np.float64)
        packed = (kinds.POLYHEDRON, params, vertices, _hull_slack(hull.equations, points) * 2.0)
    return packed


_GRAIN_SLACK = 2048  # facets per chunk of the hull slack (tens of microseconds each)


def _hull_slack(equations, points):
    """max(0, largest n . p + d of any hull facet (n, d) at any point p), as every pair would give
    it, in a few hundred evaluations per facet (touche/_kernels/primitives/hull.py)."""
    from ._kernels import hull as kernels

    equations = np.ascontiguousarray(equations, dtype=np.float64)
    ordered, block_slabs, super_slabs, largest = kernels.prepare_points(np.ascontiguousarray(points, dtype=np.float64))
    best = np.zeros(len(equations))
    _parallel.run(kernels.slack_many, len(equations), equations, ordered, block_slabs, super_slabs, largest, best,
                  grain=_GRAIN_SLACK)
    return float(best.max()) if len(best) else 0.0


def _single_mesh_result(code, row, flip):
    """ImpactResult of one mesh query from the kernel's status code and out row (OUT_SIZE,)
    (as _point_result, without its batch arrays: a single query's overhead)."""
    found = code == kinds.HIT or code == kinds.ALREADY_TOUCHING
    point = row[1:4]  # views of the query's own out row
    normal = -row[4:7] if flip else row[4:7]
    first = -1 if row[7] != row[7] else int(row[7])
    second = -1 if row[8] != row[8] else int(row[8])
    triangles = np.array((second, first) if flip else (first, second), dtype=np.int64)
    return ImpactResult(_STATUS_OF_CODE[code], float(row[0]), np.nan, normal, point,
                        point.reshape(1, 3).copy() if found else np.empty((0, 3)),
                        SetKind.POINT if found else SetKind.EMPTY, int(found), triangles)


def _mesh_result(status, out, flip, single):
    if single:
        return _single_mesh_result(int(status[0]), out[0], flip)
    time = out[:, 0].copy()
    point = out[:, 1:4].copy()
    normal = out[:, 4:7].copy()
    triangles = np.where(np.isnan(out[:, 7:9]), -1, out[:, 7:9]).astype(np.int64)
    if flip:
        normal = -normal
        triangles = triangles[:, ::-1].copy()
    result = _point_result(status, time, point, normal, single)
    result.triangles = triangles[0] if single else triangles
    return result


def _quadratic_time_of_impact(a, motion_a, b, motion_b, limit, time_tolerance):
    """Box-box under QuadraticMatrix motions (a translational motion is converted to the quadratic
    matrix it is): exact first contact by the piecewise-polynomial SAT (ccd_quadratic.py)."""
    from ._kernels import ccd_quadratic
    from .motion import QuadraticMatrix
    from .tolerance import touching_tolerance

    if not np.isfinite(limit):
        raise GeometryError("QuadraticMatrix motions need a finite t_max (polynomial paths diverge)")

    def coefficients(motion, name):
        if not isinstance(motion, QuadraticMatrix):
            if not motion.translational:
                raise UnsupportedQuery("time_of_impact", motion)
            motion = QuadraticMatrix.from_motion(motion)
        rows = np.require(motion.coefficients.reshape(-1, 3, 4, 4), np.float64, ["C", "W"])
        return rows, motion.is_batch or len(rows) > 1

    qa, batch_a = coefficients(motion_a, "motion_a")
    qb, batch_b = coefficients(motion_b, "motion_b")
    if len(qa) > 1 and len(qb) > 1 and len(qa) != len(qb):
        raise GeometryError(f"motion batches differ in length: {len(qa)} and {len(qb)}")
    count = max(len(qa), len(qb))
    # size of the scene over [0, t_max]: boxes, translations and their growth
    spread = max(np.abs(q[:, 0]).max() + limit * np.abs(q[:, 1]).max() + limit * limit * np.abs(q[:, 2]).max()
                 for q in (qa, qb))
    tolerance = touching_tolerance(max(a.scale, b.scale) * max(1.0, spread) + spread)
    ca, ha = np.ascontiguousarray(a.params[-6:-3]), np.ascontiguousarray(a.params[-3:])
    cb, hb = np.ascontiguousarray(b.params[-6:-3]), np.ascontiguousarray(b.params[-3:])
    status = np.empty(count, dtype=np.int8)
    time = np.empty(count)
    point = np.empty((count, 3))
    normal = np.empty((count, 3))
    if count == 1:
        out = np.empty(7)
        status[0] = ccd_quadratic.quadratic_box_box(ca, ha, qa[0], cb, hb, qb[0], limit, tolerance, out)
        time[0], point[0], normal[0] = out[0], out[1:4], out[4:7]
    else:
        _parallel.run(ccd_quadratic.quadratic_box_box_many, count, ca, ha, qa, cb, hb, qb, limit, tolerance, status,
                      time, point, normal, grain=_GRAIN_QUADRATIC)
    return _point_result(status, time, point, normal, single=not (batch_a or batch_b))


def _callable_time_of_impact(a, motion_a, b, motion_b, limit, time_tolerance, flip):
    """Conservative advancement in Python for CallableMotion (the user's function cannot run in a
    kernel), vectorised over a batch: each step evaluates the poses of all cases (one call of a
    batch function), one gap kernel call for the cases still running, and steps each by
    gap / bound with bound = sum over the two shapes of (linear_speed + angular_speed * rho), rho
    the radius of the shape's bounding sphere about its local origin (the user's bounds are
    about the origin). After CA_MAX_ITERATIONS steps a case reports the first time its gap was
    <= the coarse tolerance (a contact to that tolerance), else MAX_ITERATIONS."""
    from .motion import CallableMotion
    from .tolerance import touching_tolerance

    if flip:  # the registry's order: the finite convex shape first, a plane second
        a, motion_a, b, motion_b = b, motion_b, a, motion_a
    if b.kind in _PLANES and isinstance(motion_b, CallableMotion):
        # a plane has no bounding ball: the speed bounds of a (possibly turning) callable motion
        # bound none of its far points, so no advancement step would be safe
        raise UnsupportedQuery("time_of_impact", a, b)
    if not np.isfinite(limit):
        raise GeometryError("CallableMotion needs a finite t_max")
    sizes = {motion_a.batch_size, motion_b.batch_size} - {1}
    if len(sizes) > 1:
        _motion_lengths_differ(motion_a.batch_size, motion_b.batch_size, flip)
    count = sizes.pop() if sizes else 1
    single = not (motion_a.is_batch or motion_b.is_batch)
    kernels = _ccd()

    def bound_of(motion, shape):
        ball = _ball(shape)
        if isinstance(motion, CallableMotion):
            return np.broadcast_to(np.asarray(motion.linear_speed + motion.angular_speed
                                              * (np.linalg.norm(ball[:3]) + ball[3])), (count,))
        rows, batch = _packed_motion(motion, "motion")
        from ._kernels import ccd_mesh_hulls

        return np.broadcast_to(np.array([ccd_mesh_hulls.row_bounds(row, ball)[0] for row in rows]), (count,))

    def poses_of(motion, times):
        if isinstance(motion, CallableMotion):
            poses = motion.pose_at(times if motion.is_batch else times[0])
            return np.ascontiguousarray(np.broadcast_to(poses.reshape(-1, 4, 4), (count, 4, 4)))
        rows, batch = _packed_motion(motion, "motion")
        out = np.empty((count, 4, 4))
        _parallel.run(kernels.motion_pose_times, count, rows, np.ascontiguousarray(times, dtype=np.float64), out,
                      grain=_GRAIN_POSE)
        return out

    speed = np.ascontiguousarray(bound_of(motion_a, a) + bound_of(motion_b, b), dtype=np.float64)
    t = np.zeros(count)
    start_a, start_b = poses_of(motion_a, t), poses_of(motion_b, t)
    reach = max(a.scale, b.scale) + max(np.abs(start_a[:, :3, 3]).max(), np.abs(start_b[:, :3, 3]).max())
    eps = touching_tolerance(reach + speed.max() * limit)
    coarse = np.maximum(16.0 * eps, time_tolerance * limit * speed)
    ka, pa, pta = a._packed[:3]
    kb, pb, ptb = b._packed[:3]
    out = np.full((count, 7), np.nan)
    status = np.full(count, kinds.TOI_MAX_ITERATIONS, dtype=np.int8)
    running = np.ones(count, dtype=bool)
    coarse_t = np.full(count, np.nan)
    coarse_out = np.full((count, 7), np.nan)
    for _ in range(CA_MAX_ITERATIONS):
        rows = np.flatnonzero(running)
        if len(rows) == 0:
            break
        ta, tb = poses_of(motion_a, t), poses_of(motion_b, t)
        _parallel.run(kernels.gap_many, len(rows), ka, pa, pta, ta, kb, pb, ptb, tb, rows.astype(np.int64), eps, out,
                      grain=_GRAIN_GAP)
        gap = out[rows, 0]
        broken = ~(gap == gap)
        running[rows[broken]] = False  # NaN gap: no progress possible (MAX_ITERATIONS)
        touch = gap <= eps
        done = rows[touch]
        status[done] = np.where(t[done] > 0.0, kinds.HIT, kinds.ALREADY_TOUCHING)
        running[done] = False
        first = (gap <= coarse[rows]) & np.isnan(coarse_t[rows])
        coarse_t[rows[first]] = t[rows[first]]
        coarse_out[rows[first]] = out[rows[first]]
        go = ~touch & ~broken
        moving, gaps = rows[go], gap[go]
        with np.errstate(divide="ignore"):
            following = np.where(speed[moving] > 0.0, t[moving] + (gaps - 0.5 * eps) / speed[moving], np.inf)
        miss = following > limit
        status[moving[miss]] = kinds.MISS
        running[moving[miss]] = False
        step = moving[~miss]
        t[step] = np.maximum(following[~miss], np.nextafter(t[step], np.inf))
    late = running & ~np.isnan(coarse_t)
    t[late] = coarse_t[late]
    out[late] = coarse_out[late]
    status[late] = np.where(t[late] > 0.0, kinds.HIT, kinds.ALREADY_TOUCHING)
    miss = status == kinds.MISS
    out[miss] = np.nan
    t[miss] = np.inf
    normal = -out[:, 4:7] if flip else out[:, 4:7]
    return _point_result(status, t, out[:, 1:4].copy(), np.ascontiguousarray(normal), single=single)


def _cast(a, ta, va, b, tb, vb, limit, count, single):
    """GJK shape cast (one contact point; no last time). Tolerance as the static verbs: the
    touching tolerance of the pair's size and start positions (touche.tolerance)."""
    from ._kernels import gjk_cast as gjk
    from .tolerance import touching_tolerance

    reach = max(a.scale, b.scale) + max(np.abs(ta[:, :3, 3]).max(), np.abs(tb[:, :3, 3]).max())
    reach += limit * max(np.abs(va).max(), np.abs(vb).max()) if np.isfinite(limit) else 0.0
    tolerance = touching_tolerance(reach)
    status = np.empty(count, dtype=np.int8)
    time = np.empty(count)
    point = np.empty((count, 3))
    normal = np.empty((count, 3))
    _parallel.run(gjk.gjk_shape_cast_many, count, a._packed[0], a._packed[1], a._packed[2], ta, va,
                  b._packed[0], b._packed[1], b._packed[2], tb, vb, limit, tolerance,
                  status, time, point, normal, grain=16)
    return _point_result(status, time, point, normal, single, found=status != kinds.MISS)


def intersection(a, pose_a, b, pose_b):
    """The set A ∩ B of two convex polytopes at their poses.

    Arguments: ``a``, ``b`` polytopes (``Box``, ``AABB``, ``Triangle``, ``Tetrahedron``,
    ``ConvexPolygon``, ``ConvexPolyhedron``, ...); ``pose_a``, ``pose_b``: None (identity), a
    ``Pose``, ``(4, 4)`` or ``(n, 4, 4)`` (a batch of 1 broadcasts; an empty batch
    ``(0, 4, 4)`` gives a result of no pairs).

    Returns an ``IntersectionResult``: ``kind`` (``SetKind``: ``EMPTY``, ``POINT``,
    ``SEGMENT``, ``POLYGON``, ``POLYHEDRON``) and ``points`` ``(m, 3)`` in world coordinates
    (a polygon's vertices in order around it; ``faces`` gives a polyhedron's hull triangles).
    A batch of n: ``kind`` ``(n,)`` int8, ``count`` ``(n,)`` and ``points`` ``(n, K, 3)``
    padded with NaN. Empty when the shapes are apart by more than the touching tolerance.

    Errors: ``UnsupportedQuery`` for a shape that is not a polytope (spheres, capsules,
    meshes, ...); ``GeometryError`` for a bad pose or batch lengths that differ.
    """
    a = _shape(a, "a")
    b = _shape(b, "b")
    dispatch.require(dispatch.INTERSECTION, a, b)
    from .query import _pair_matrices

    matrices = _pair_matrices(pose_a, pose_b, check=True)
    if matrices is None:  # an empty batch
        return IntersectionResult(np.zeros(0, dtype=np.int8), np.zeros((0, _capacity(a, b), 3)),
                                  np.zeros(0, dtype=np.int64))
    ta, tb = matrices
    single = ta.ndim == 2 and tb.ndim == 2
    ta = np.require(np.asarray(ta, dtype=np.float64).reshape(-1, 4, 4), np.float64, ["C", "W"])
    tb = np.require(np.asarray(tb, dtype=np.float64).reshape(-1, 4, 4), np.float64, ["C", "W"])
    if len(ta) != len(tb) and 1 not in (len(ta), len(tb)):
        raise GeometryError(f"pose batches differ in length: pose_a has {len(ta)}, pose_b has {len(tb)}")
    count = max(len(ta), len(tb))
    kernels = _kernels()
    capacity = _capacity(a, b)
    while True:
        kind = np.empty(count, dtype=np.int8)
        counts = np.empty(count, dtype=np.int64)
        points = np.empty((count, capacity, 3))
        if count == 1:
            kernels.intersection_one(*a._packed, a.scale, ta, *b._packed, b.scale, tb, kind, counts, points)
        else:
            _parallel.run(kernels.intersection_many, count, *a._packed, a.scale, ta, *b._packed, b.scale, tb, kind,
                          counts, points, grain=_GRAIN_INTERSECTION)
        if counts.max() <= capacity:
            break
        capacity = int(counts.max())
    if single:
        n = int(counts[0])
        return IntersectionResult(SetKind(int(kind[0])), points[0, :n].copy(), n)
    return IntersectionResult(kind, points, counts)


def _callable_mesh_time_of_impact(a, motion_a, b, motion_b, b_mode, limit, time_tolerance, flip):
    """Meshes under a CallableMotion: conservative advancement in Python on the exact surface
    distance (mesh-mesh: touche.bvh.distance; mesh-convex / plane: touche.distance), stepping by
    (distance - eps / 2) / (sum of the two point-speed bounds). Any point moves at most
    speed x time, so the distance between any two point sets (convex or not) shrinks no faster
    than the sum: no contact is stepped over. Slower than the kernel path (one distance query
    per step, no node-level bounds): a fallback for motions known only as Python functions."""
    from . import bvh as bvh_module
    from .query import distance as pair_distance
    from .tolerance import touching_tolerance

    if not np.isfinite(limit):
        raise GeometryError("CallableMotion needs a finite t_max")
    speed = _callable_speed(motion_a, a) + _callable_speed(motion_b, b)
    start_a = _callable_pose(motion_a, 0.0)
    start_b = _callable_pose(motion_b, 0.0)
    reach = max(a.scale, b.scale) + max(np.abs(start_a[:3, 3]).max(), np.abs(start_b[:3, 3]).max())
    eps = touching_tolerance(reach + speed * limit)
    coarse = max(16.0 * eps, time_tolerance * limit * speed)

    def gap_at(t):
        pa = _callable_pose(motion_a, t)
        pb = _callable_pose(motion_b, t)
        if b_mode == 0:
            found = bvh_module.distance(a, pa, b, pb)
            middle = 0.5 * (found.point_a + found.point_b)
            direction = found.point_b - found.point_a
            length = np.linalg.norm(direction)
            normal = direction / length if length > 0.0 else np.full(3, np.nan)
            return found.distance, middle, normal, (found.triangle_a, found.triangle_b)
        found = pair_distance(a, pa, b, pb)
        return (found.signed_distance, 0.5 * (found.point_a + found.point_b), np.asarray(found.normal, dtype=np.float64),
                (-1, -1))

    code, t, gap, point, normal, triangles = _python_advancement(gap_at, speed, limit, eps, coarse)
    status = np.array([code], dtype=np.int8)
    out = np.full((1, 13), np.nan)
    out[0, 0] = t
    out[0, 1:4] = point
    out[0, 4:7] = normal
    out[0, 7:9] = triangles
    return _mesh_result(status, out, flip, single=True)


def _callable_speed(motion, shape):
    """Bound on the speed of any point of ``shape`` under ``motion`` (CallableMotion: the user's
    bounds about the local origin; kernel motions: their exact bound). One motion per shape."""
    from .motion import CallableMotion

    ball = _ball(shape)
    if isinstance(motion, CallableMotion):
        return motion.linear_speed + motion.angular_speed * (np.linalg.norm(ball[:3]) + ball[3])
    rows, batch = _packed_motion(motion, "motion")
    if batch:
        raise GeometryError("CallableMotion queries take one motion per shape (no batches)")
    return _speed_bound(rows, ball)


def _callable_pose(motion, t):
    from .motion import CallableMotion

    if isinstance(motion, CallableMotion):
        return motion.pose_at(t)
    return np.ascontiguousarray(motion.pose_at(t), dtype=np.float64)


def _python_advancement(gap_at, speed, limit, eps, coarse):
    """Conservative advancement driven from Python: ``gap_at(t)`` -> (distance (< 0 when
    overlapping), point (3,), normal (3,), triangles (2,)). Contact at the first evaluated t with
    distance <= eps; after CA_MAX_ITERATIONS steps the first t with distance <= coarse (a
    contact to the coarse tolerance) else MAX_ITERATIONS with the last safe time.
    Returns (code, t, distance, point, normal, triangles)."""
    t = 0.0
    coarse_hit = None
    record = None
    for _ in range(CA_MAX_ITERATIONS):
        record = gap_at(t)
        gap = record[0]
        if not gap == gap:
            break
        if gap <= eps:
            return (kinds.HIT if t > 0.0 else kinds.ALREADY_TOUCHING), t, *record
        if coarse_hit is None and gap <= coarse:
            coarse_hit = (t, record)
        if speed == 0.0:
            return kinds.MISS, np.inf, np.nan, np.full(3, np.nan), np.full(3, np.nan), (-1, -1)
        following = t + (gap - 0.5 * eps) / speed
        if following > limit:
            return kinds.MISS, np.inf, np.nan, np.full(3, np.nan), np.full(3, np.nan), (-1, -1)
        t = max(following, np.nextafter(t, np.inf))
    else:
        if coarse_hit is not None:
            t, record = coarse_hit
            return (kinds.HIT if t > 0.0 else kinds.ALREADY_TOUCHING), t, *record
    return kinds.TOI_MAX_ITERATIONS, t, np.nan, np.full(3, np.nan), np.full(3, np.nan), (-1, -1)

"""Time of impact and intersection sets: ``time_of_impact`` and ``intersection``.

    import touche as tc
    from touche.impact import time_of_impact, intersection
    hit = time_of_impact(a, tc.Static(), b, tc.Linear([1, -1, 0], pose_b), t_max=10.0)
    hit.status, hit.time, hit.normal, hit.point, hit.points, hit.kind

Engines: ``_route(a, b)`` names the engine that answers a pair:
- "sat": the separating-axis engine for translating convex polytopes
  (touche/_kernels/sat_moving.py: triangle, tetrahedron, box, convex polygon, convex polyhedron;
  Eberly's method of separating axes): exact first and last contact and the contact set;
- "gjk": GJK shape casting (touche/_kernels/gjk.py, Ericson 9.5.7, conservative advancement on
  the Minkowski difference) for every other pair of finite convex shapes (points, spheres,
  segments, capsules, cylinders, cones, ellipsoids, and those against polytopes): the first
  contact time, one contact point and the normal.
``intersection`` is answered for polytope pairs only.
"""
from __future__ import annotations

import enum

import numpy as np

from ._kernels import kinds
from .errors import GeometryError, UnsupportedQuery
from .motion import as_motion
from .pose import as_matrices
from .shapes import Shape, as_shape


class ImpactStatus(enum.IntEnum):
    """Outcome of :func:`time_of_impact`. Batches return these codes as an int8 array."""

    MISS = kinds.MISS
    HIT = kinds.HIT
    ALREADY_TOUCHING = kinds.ALREADY_TOUCHING
    MAX_ITERATIONS = kinds.TOI_MAX_ITERATIONS  # GJK casting did not converge: ``time`` is a lower bound


class SetKind(enum.IntEnum):
    """Kind of a contact / intersection set (by its dimension)."""

    EMPTY = kinds.SET_EMPTY
    POINT = kinds.SET_POINT
    SEGMENT = kinds.SET_SEGMENT
    POLYGON = kinds.SET_POLYGON
    POLYHEDRON = kinds.SET_POLYHEDRON


_POLYTOPES = frozenset((kinds.TRIANGLE, kinds.TETRAHEDRON, kinds.BOX, kinds.POLYGON, kinds.POLYHEDRON))
_FINITE_CONVEX = _POLYTOPES | frozenset(
    (kinds.POINT, kinds.SPHERE, kinds.SEGMENT, kinds.CAPSULE, kinds.CYLINDER, kinds.CONE, kinds.ELLIPSOID)
)
SAT_ENGINE = "sat"
GJK_ENGINE = "gjk"


def _route(a, b):
    """The engine answering time_of_impact / intersection for shapes a, b, or None.

    One table for both verbs; the pair is symmetric. Add engines here rather than in the verbs."""
    if a.kind in _POLYTOPES and b.kind in _POLYTOPES:
        return SAT_ENGINE
    if a.kind in _FINITE_CONVEX and b.kind in _FINITE_CONVEX:
        return GJK_ENGINE
    return None


_KERNELS = None


def _kernels():
    global _KERNELS
    if _KERNELS is None:
        from ._kernels import sat_moving

        _KERNELS = sat_moving
    return _KERNELS


def _shape(value, name):
    return value if isinstance(value, Shape) else as_shape(value, name)


def _capacity(a, b):
    """Rows per pair of the padded point outputs: a contact set has at most nv_a + nv_b vertices;
    A n B has at most 2 F - 4 vertices for F <= n_planes_a + n_planes_b facets (simple
    polytopes), a polygon at most n_planes_a + n_planes_b."""
    nva, npa = int(a.params[0]), int(a.params[1])
    nvb, npb = int(b.params[0]), int(b.params[1])
    return max(nva + nvb, 2 * (npa + npb), 4)


class ImpactResult:
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
    ``count`` rows.
    """

    __slots__ = ("status", "time", "last_time", "normal", "point", "points", "kind", "count")

    def __init__(self, status, time, last_time, normal, point, points, kind, count):
        self.status = status
        self.time = time
        self.last_time = last_time
        self.normal = normal
        self.point = point
        self.points = points
        self.kind = kind
        self.count = count

    def __repr__(self):
        if isinstance(self.time, np.ndarray):
            return f"ImpactResult(batch of {len(self.time)})"
        return (f"ImpactResult(status={self.status.name}, time={self.time!r}, kind={self.kind.name}, "
                f"point={np.round(self.point, 6).tolist()}, normal={np.round(self.normal, 6).tolist()})")


class IntersectionResult:
    """Result of :func:`intersection`: ``kind`` (:class:`SetKind`) and ``points`` (m, 3): a point,
    a segment's two ends, a polygon's vertices in order around it, or a polyhedron's vertices
    (``faces`` gives its hull triangles, computed with scipy on demand). Batch: ``kind`` (n,)
    int8, ``count`` (n,), ``points`` (n, K, 3) NaN-padded."""

    __slots__ = ("kind", "points", "count")

    def __init__(self, kind, points, count):
        self.kind = kind
        self.points = points
        self.count = count

    @property
    def faces(self):
        """Hull triangles (indices into ``points``) of a single POLYHEDRON result, else None."""
        if isinstance(self.kind, np.ndarray) or self.kind != SetKind.POLYHEDRON:
            return None
        from scipy.spatial import ConvexHull

        return ConvexHull(self.points).simplices

    def __repr__(self):
        if isinstance(self.kind, np.ndarray):
            return f"IntersectionResult(batch of {len(self.kind)})"
        return f"IntersectionResult(kind={self.kind.name}, {len(self.points)} points)"


def _t_max(value):
    try:
        limit = float(value)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"t_max must be a number, got {value!r}") from exc
    if np.isnan(limit) or limit < 0.0:
        raise GeometryError(f"t_max must be >= 0 (inf allowed), got {value!r}")
    return limit


def _motion(value, name):
    motion = as_motion(value, name)
    if not getattr(motion, "translational", False):
        raise UnsupportedQuery("time_of_impact", motion)  # rotating motions: the CCD issue
    pose = np.ascontiguousarray(motion.pose, dtype=np.float64).reshape(-1, 4, 4)
    velocity = np.ascontiguousarray(motion.velocity, dtype=np.float64).reshape(-1, 3)
    return motion, np.require(pose, np.float64, ["C", "W"]), np.require(velocity, np.float64, ["C", "W"])


def time_of_impact(a, motion_a, b, motion_b, t_max):
    """First time in [0, t_max] at which two translating shapes touch; see :class:`ImpactResult`.

    ``motion_a`` / ``motion_b``: :class:`touche.Linear` / :class:`touche.Static` (a plain pose or
    None means Static). Poses (n, 4, 4) or velocities (n, 3) make a batch (one compiled call);
    batches of 1 broadcast. Contact means within the touching tolerance (touche.tolerance) on every
    separating axis, so ``time`` is when the gap first closes to that tolerance.
    """
    a = _shape(a, "a")
    b = _shape(b, "b")
    engine = _route(a, b)
    if engine is None:
        raise UnsupportedQuery("time_of_impact", a, b)
    motion_a, ta, va = _motion(motion_a, "motion_a")
    motion_b, tb, vb = _motion(motion_b, "motion_b")
    limit = _t_max(t_max)
    sizes = {len(ta), len(va), len(tb), len(vb)} - {1}
    if len(sizes) > 1:
        raise GeometryError(f"batch sizes differ: poses {len(ta)}, {len(tb)}; velocities {len(va)}, {len(vb)}")
    count = sizes.pop() if sizes else 1
    single = (np.ndim(motion_a.pose) == 2 and np.ndim(motion_b.pose) == 2
              and np.ndim(motion_a.velocity) == 1 and np.ndim(motion_b.velocity) == 1)
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
        entry = kernels.time_of_impact_one if count == 1 else kernels.time_of_impact_many
        entry(*a._packed, a.scale, ta, va, *b._packed, b.scale, tb, vb, limit,
              status, time, last, normal, kind, counts, points)
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


def _cast(a, ta, va, b, tb, vb, limit, count, single):
    """GJK shape cast (one contact point; no last time). Tolerance as the static verbs: the
    touching tolerance of the pair's size and start positions (touche.tolerance)."""
    from ._kernels import gjk
    from .tolerance import touching_tolerance

    reach = max(a.scale, b.scale) + max(np.abs(ta[:, :3, 3]).max(), np.abs(tb[:, :3, 3]).max())
    reach += limit * max(np.abs(va).max(), np.abs(vb).max()) if np.isfinite(limit) else 0.0
    tolerance = touching_tolerance(reach)
    status = np.empty(count, dtype=np.int8)
    time = np.empty(count)
    point = np.empty((count, 3))
    normal = np.empty((count, 3))
    gjk.gjk_shape_cast_many(a._packed[0], a._packed[1], a._packed[2], ta, va,
                            b._packed[0], b._packed[1], b._packed[2], tb, vb, limit, tolerance,
                            status, time, point, normal)
    found = status != kinds.MISS
    kind = np.where(found, kinds.SET_POINT, kinds.SET_EMPTY).astype(np.int8)
    last = np.full(count, np.nan)
    if single:
        n = int(found[0])
        return ImpactResult(ImpactStatus(int(status[0])), float(time[0]), float(last[0]), normal[0],
                            point[0], point[:n].copy(), SetKind(int(kind[0])), n)
    points = np.where(found[:, None, None], point[:, None, :], np.nan)
    return ImpactResult(status, time, last, normal, point, points, kind, found.astype(np.int64))


def intersection(a, pose_a, b, pose_b):
    """The set A n B of two convex polytopes at their poses; see :class:`IntersectionResult`.
    Empty when they are separated by more than the touching tolerance."""
    a = _shape(a, "a")
    b = _shape(b, "b")
    if _route(a, b) != SAT_ENGINE:
        raise UnsupportedQuery("intersection", a, b)
    ta = as_matrices(pose_a, "pose_a")
    tb = as_matrices(pose_b, "pose_b")
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
        entry = kernels.intersection_one if count == 1 else kernels.intersection_many
        entry(*a._packed, a.scale, ta, *b._packed, b.scale, tb, kind, counts, points)
        if counts.max() <= capacity:
            break
        capacity = int(counts.max())
    if single:
        n = int(counts[0])
        return IntersectionResult(SetKind(int(kind[0])), points[0, :n].copy(), n)
    return IntersectionResult(kind, points, counts)

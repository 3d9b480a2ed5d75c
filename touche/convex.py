"""Convex-pair queries by GJK, EPA and GJK shape casting (Ericson 9.5, 9.5.7).

    import touche
    from touche import convex
    r = convex.gjk(touche.Cylinder(0.5, 1.0), pose_a, touche.ConvexPolyhedron(points), pose_b)
    r.signed_distance, r.point_a, r.point_b, r.normal, r.status, r.iterations
    r2 = convex.gjk(a, moved_pose_a, b, pose_b, warm_start=r.warm_start)   # fewer iterations
    convex.penetration(a, pose_a, b, pose_b).depth
    convex.shape_cast(a, pose_a, velocity_a, b, pose_b, velocity_b, t_max)

Every convex kind works (Point, Sphere, Segment, Capsule, Triangle, Tetrahedron, Box/AABB,
ConvexPolygon, ConvexPolyhedron, Cylinder, Cone, Ellipsoid); rays, lines, planes, half-spaces and
meshes raise :class:`touche.UnsupportedQuery`. Poses: a :class:`touche.Pose`, a (4, 4) array, a
(n, 4, 4) batch or None; a batch on either side runs the whole batch in one compiled call
(parallel over pairs) and returns arrays; a batch of 1 broadcasts.
"""
from __future__ import annotations

import numpy as np

from . import _parallel, dispatch
from . import tolerance as _tolerance
from ._enums import NamedIntEnum
from ._kernels import kernel_loader, kinds
from ._record import DistanceBuffer, Record
from .errors import GeometryError, UnsupportedQuery
from .pose import as_matrices, nonnegative_number, pose_pair
from .shapes import Shape, as_shape


class GJKStatus(NamedIntEnum):
    """Outcome of a GJK / EPA query (batches: an int8 array of these codes).

    MAX_ITERATIONS: GJK or EPA hit its iteration / memory limit; DEGENERATE: GJK stopped making
    progress with its distance bounds still apart. In both cases the numbers are the best found
    and must not be trusted blindly."""

    SEPARATED = kinds.GJK_SEPARATED
    TOUCHING = kinds.GJK_TOUCHING
    PENETRATING = kinds.GJK_PENETRATING
    MAX_ITERATIONS = kinds.GJK_MAX_ITERATIONS
    DEGENERATE = kinds.GJK_DEGENERATE


class CastStatus(NamedIntEnum):
    """Outcome of :func:`shape_cast` (codes of kinds.MISS / HIT / ALREADY_TOUCHING, plus
    MAX_ITERATIONS when the advancement did not converge: ``t`` is then a lower bound)."""

    MISS = kinds.MISS
    HIT = kinds.HIT
    ALREADY_TOUCHING = kinds.ALREADY_TOUCHING
    MAX_ITERATIONS = 3  # gjk_cast.CAST_MAX_ITERATIONS


# pairs per chunk handed to a thread (a cold GJK pair costs ~1-3 us: a chunk is ~50-200 us)
GJK_GRAIN = 64
_GJK_STATUS = {s.value: s for s in GJKStatus}
_CAST_STATUS = {s.value: s for s in CastStatus}


_kernels = kernel_loader("gjk")
_cast_kernels = kernel_loader("gjk_cast")


class GJKResult(Record):
    """Result of :func:`gjk` / :func:`penetration`.

    One pair: ``signed_distance`` (float; negative = -penetration depth), ``point_a``,
    ``point_b``, ``normal`` ((3,) world), ``status`` (:class:`GJKStatus`), ``iterations`` (int,
    GJK + EPA), ``warm_start`` ((27,) token for the next call on the same pair of shapes).
    Batch of n: arrays (n,), (n, 3), int8 (n,), int64 (n,) and tokens (n, 27).

    ``normal`` points from A to B. Separated: closest points, ``normal = (point_b - point_a) /
    distance``. Overlapping: ``depth = -signed_distance`` is the minimum translation distance, B
    moves along ``normal`` to separate, ``point_a`` is A's deepest point along it, ``point_b``
    B's deepest point against it, ``depth == (point_a - point_b) . normal``.
    """

    __slots__ = ("signed_distance", "point_a", "point_b", "normal", "status", "iterations", "warm_start")

    @property
    def distance(self):
        """Distance (>= 0; 0 when overlapping)."""
        return np.maximum(self.signed_distance, 0.0) if isinstance(self.signed_distance, np.ndarray) else max(
            self.signed_distance, 0.0
        )

    @property
    def depth(self):
        """Penetration depth (>= 0; 0 when separated)."""
        return np.maximum(-self.signed_distance, 0.0) if isinstance(self.signed_distance, np.ndarray) else max(
            -self.signed_distance, 0.0
        )

    _batch_field = "signed_distance"

    def _describe(self):
        return (f"signed_distance={self.signed_distance:.6g}, status={self.status.name}, "
                f"iterations={self.iterations}, point_a={np.round(self.point_a, 6).tolist()}, "
                f"point_b={np.round(self.point_b, 6).tolist()}, normal={np.round(self.normal, 6).tolist()}")


class CastResult(Record):
    """Result of :func:`shape_cast`: ``status`` (:class:`CastStatus`), ``t`` (first contact
    time; inf on a miss), ``point`` (a contact point on A's surface at time t, world), ``normal``
    (from A to B at contact; NaN on a miss and when already overlapping without a separating
    direction). Batch of n: int8 (n,), (n,), (n, 3), (n, 3)."""

    __slots__ = ("status", "t", "point", "normal")

    _batch_field = "t"

    def _describe(self):
        return f"status={self.status.name}, t={self.t:.6g}, point={self.point}, normal={self.normal}"


# --------------------------------------------------------------------------------------------
# validation
def _convex_pair(verb, a, b):
    a = a if isinstance(a, Shape) else as_shape(a, "a")
    b = b if isinstance(b, Shape) else as_shape(b, "b")
    if a.kind not in dispatch.FINITE_CONVEX or b.kind not in dispatch.FINITE_CONVEX:
        raise UnsupportedQuery(verb, a, b)
    return a, b


def _tolerance_of(a, b, ta, tb):
    """Touching tolerance (touche.tolerance) at the size of the shapes and their placements."""
    reach = max(float(np.abs(ta[..., :3, 3]).max()), float(np.abs(tb[..., :3, 3]).max()))
    return _tolerance.touching_tolerance(max(a.scale, b.scale) + reach)


def _velocity(value, name):
    try:
        array = np.array(value, dtype=np.float64, order="C")
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be numeric (3,) or (n, 3)") from exc
    if not np.isfinite(array).all():
        raise GeometryError(f"{name} contains NaN or inf")
    if array.shape == (3,):
        return array, True
    if array.ndim != 2 or array.shape[1] != 3 or array.shape[0] == 0:
        raise GeometryError(f"{name} must have shape (3,) or (n, 3), got {array.shape}")
    if not np.isfinite(array).all():
        raise GeometryError(f"{name} contains NaN or inf")
    return array, False


# --------------------------------------------------------------------------------------------
# verbs
def _warm_array(warm_start, count, single):
    if warm_start is None:
        return np.zeros(_kernels().WARM_SIZE) if single else np.zeros((count, _kernels().WARM_SIZE))
    try:
        warm = np.array(warm_start, dtype=np.float64, order="C")
    except (TypeError, ValueError) as exc:
        raise GeometryError("warm_start must be a token returned by a previous gjk() call") from exc
    size = _kernels().WARM_SIZE
    expected = (size,) if single else (count, size)
    if warm.shape != expected:
        raise GeometryError(f"warm_start must have shape {expected}, got {warm.shape}")
    if not np.isfinite(warm).all():
        raise GeometryError("warm_start contains NaN or inf")
    return warm


def _distance(verb, a, pose_a, b, pose_b, warm_start):
    a, b = _convex_pair(verb, a, b)
    k = _kernels()
    pa, pb = a._packed, b._packed
    # one pose pair: the kernel checks raw (4, 4) arrays itself (rigid, finite) and computes the
    # tolerance, so the Python side only unwraps; an invalid pose is re-checked here to name it
    ta = as_matrices(pose_a, "pose_a", check=False)
    tb = as_matrices(pose_b, "pose_b", check=False)
    if ta.ndim == 2 and tb.ndim == 2:
        warm = np.zeros(k.WARM_SIZE) if warm_start is None else _warm_array(warm_start, 1, True)
        out = np.empty(11)
        status = k.gjk_distance_checked_into(pa[0], pa[1], pa[2], a.scale, ta, pb[0], pb[1], pb[2], b.scale, tb, warm, out)
        if status < 0:
            as_matrices(pose_a, "pose_a")
            as_matrices(pose_b, "pose_b")
            raise GeometryError("pose_a or pose_b is not a rigid transform")  # pragma: no cover
        return _SingleGJKResult(out, _GJK_STATUS[status], warm)
    ta, tb, count, single = pose_pair(ta if ta.ndim == 3 else pose_a, tb if tb.ndim == 3 else pose_b)
    tol = _tolerance_of(a, b, ta, tb)
    warm = _warm_array(warm_start, count, single)
    signed = np.empty(count)
    point_a = np.empty((count, 3))
    point_b = np.empty((count, 3))
    normal = np.empty((count, 3))
    status = np.empty(count, dtype=np.int8)
    iterations = np.empty(count, dtype=np.int64)
    _parallel.run(
        k.gjk_distance_warm_many, count,
        pa[0], pa[1], pa[2], ta.reshape(-1, 4, 4), pb[0], pb[1], pb[2], tb.reshape(-1, 4, 4), tol, warm,
        signed, point_a, point_b, normal, status, iterations, grain=GJK_GRAIN,
    )
    return GJKResult(signed, point_a, point_b, normal, status, iterations, warm)


class _SingleGJKResult(DistanceBuffer, GJKResult):
    """One pair's GJKResult backed by the (11,) buffer the kernel filled; the fields are made on
    first access (cheaper than building them on every call)."""

    __slots__ = ("_buffer",)

    def __init__(self, buffer, status, warm_start):
        self._buffer = buffer
        self.status = status
        self.warm_start = warm_start

    def __reduce__(self):
        # the parent's slots are properties here: pickle and copy go through the buffer
        return (_SingleGJKResult, (self._buffer.copy(), self.status, self.warm_start))

    @property
    def iterations(self):
        return int(self._buffer[10])


def gjk(a, pose_a, b, pose_b, *, warm_start=None):
    """GJK distance (and EPA depth when overlapping) of two convex shapes; see :class:`GJKResult`.

    ``warm_start``: the ``warm_start`` token of a previous result for the same shapes (one pose
    pair: (27,); a batch: (n, 27)); GJK then starts from that simplex, placed at the new poses."""
    return _distance("gjk", a, pose_a, b, pose_b, warm_start)


def penetration(a, pose_a, b, pose_b):
    """Penetration depth, normal and witness points (EPA) of two convex shapes: a
    :class:`GJKResult` whose ``depth`` is the minimum translation distance (0 when separated,
    where ``signed_distance`` is the distance)."""
    return _distance("penetration", a, pose_a, b, pose_b, None)


def intersects(a, pose_a, b, pose_b):
    """Boolean GJK (closed sets: touching counts): bool, or a (n,) bool array for a batch."""
    a, b = _convex_pair("intersects", a, b)
    ta, tb, count, single = pose_pair(pose_a, pose_b)
    k = _kernels()
    pa, pb = a._packed, b._packed
    if single:
        return bool(k.gjk_pair_intersects(pa[0], pa[1], pa[2], ta, pb[0], pb[1], pb[2], tb))
    out = np.empty(count, dtype=np.bool_)
    _parallel.run(k.gjk_intersects_many, count, pa[0], pa[1], pa[2], ta.reshape(-1, 4, 4), pb[0], pb[1], pb[2],
                  tb.reshape(-1, 4, 4), out, grain=GJK_GRAIN)
    return out


def shape_cast(a, pose_a, velocity_a, b, pose_b, velocity_b, t_max):
    """First contact of two convex shapes translating with constant world velocities (orientation
    fixed) over ``[0, t_max]``; see :class:`CastResult`. Velocities (3,) or (n, 3), poses as in
    :func:`gjk`; any batch makes the result arrays."""
    a, b = _convex_pair("shape_cast", a, b)
    ta, tb, count, single = pose_pair(pose_a, pose_b)
    va, single_va = _velocity(velocity_a, "velocity_a")
    vb, single_vb = _velocity(velocity_b, "velocity_b")
    limit = nonnegative_number(t_max, "t_max")
    sizes = {count if not single else 1, 1 if single_va else len(va), 1 if single_vb else len(vb)} - {1}
    if len(sizes) > 1:
        raise GeometryError(f"batch sizes differ: poses {count}, velocities {len(va.reshape(-1, 3))}, {len(vb.reshape(-1, 3))}")
    n = sizes.pop() if sizes else 1
    # tolerance at the size of the swept placements
    sweep = limit * (float(np.abs(va).max()) + float(np.abs(vb).max()))
    tol = _tolerance.touching_tolerance(max(a.scale, b.scale) + sweep + max(
        float(np.abs(ta[..., :3, 3]).max()), float(np.abs(tb[..., :3, 3]).max())))
    k = _cast_kernels()
    pa, pb = a._packed, b._packed
    if single and single_va and single_vb:
        out = np.empty(7)
        status = k.gjk_shape_cast_into(pa[0], pa[1], pa[2], ta, va, pb[0], pb[1], pb[2], tb, vb, limit, tol, out)
        return CastResult(_CAST_STATUS[status], float(out[0]), out[1:4], out[4:7])
    status = np.empty(n, dtype=np.int8)
    t = np.empty(n)
    point = np.empty((n, 3))
    normal = np.empty((n, 3))
    _parallel.run(
        k.gjk_shape_cast_many, n,
        pa[0], pa[1], pa[2], ta.reshape(-1, 4, 4), va.reshape(-1, 3), pb[0], pb[1], pb[2], tb.reshape(-1, 4, 4),
        vb.reshape(-1, 3), limit, tol, status, t, point, normal, grain=GJK_GRAIN // 4,
    )
    return CastResult(status, t, point, normal)


__all__ = ["CastResult", "CastStatus", "GJKResult", "GJKStatus", "gjk", "intersects", "penetration", "shape_cast"]

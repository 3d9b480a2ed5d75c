"""2D convex polygons: static test, time of impact under constant velocities, contact and
intersection sets (the method of separating axes, Eberly S0 §2-3 and §6-8; Ericson 5.2.1).

Polygons are float64 vertex arrays:

- one polygon: ``(k, 2)``; a batch: ``(n, k, 2)`` (every polygon in a batch has the same k);
- k >= 3: a convex polygon with non-zero area. Clockwise input is reoriented to counter-clockwise;
  collinear consecutive vertices are allowed, repeated consecutive vertices, reflex turns,
  self-winding and zero-area (all collinear) input raise :class:`touche.GeometryError`;
- k = 2: a segment, k = 1: a point (degenerate convex sets; a zero-length segment is a point).

Every verb accepts one polygon or a batch on either side; a single side broadcasts against a
batch (one fixed polygon against n placed copies of another: build them with :func:`place`).
One compiled call runs the whole batch (parallel over pairs). All sets are closed: touching
counts as intersecting.

    import touche.planar as tp
    square = [[0, 0], [1, 0], [1, 1], [0, 1]]
    tp.intersects(square, tp.place(square, translations))      # (n,) bool
    r = tp.time_of_impact(square, [0, 0], moved, [1, -1], t_max=2.0)
    r.status, r.t_first, r.normal, r.kind, r.points
"""
from __future__ import annotations

import sys

import numpy as np

from . import _parallel
from ._enums import NamedIntEnum
from ._kernels import kernel_loader, kinds
from ._record import Record
from .errors import GeometryError

# touche/__init__ has run before this submodule loads: reuse its enum once the 3D
# time-of-impact work adds one, so both verbs return the same type.
_EXISTING = getattr(sys.modules[__package__], "ImpactStatus", None)
if _EXISTING is not None:
    ImpactStatus = _EXISTING
else:

    class ImpactStatus(NamedIntEnum):
        """Outcome of a time-of-impact query. Batches return these codes as an int8 array."""

        MISS = kinds.MISS
        HIT = kinds.HIT
        ALREADY_TOUCHING = kinds.ALREADY_TOUCHING


__all__ = ["ImpactStatus", "PlanarImpactResult", "intersection", "intersects", "place", "time_of_impact"]

# Batches run through touche._parallel.run: items per chunk (the smallest chunk worth handing to a
# thread, some tens of microseconds of work; a batch of at most one grain stays in the calling
# thread), from the cost per item of each driver.
_GRAIN_CHECK = 4096  # polygon validation: tens of ns
_GRAIN_INTERSECTS = 2048  # static SAT test of two polygons: ~50-100 ns
_GRAIN_IMPACT = 512  # moving SAT with the contact set
_GRAIN_INTERSECTION = 512  # intersection set of two polygons


_kernels = kernel_loader('sat2d')


# ------------------------------------------------------------------------------------- validation


_MESSAGES = {
    1: "has a repeated consecutive vertex",
    2: "has zero area (all vertices collinear); pass a segment (2, 2) instead",
    3: "is not a convex polygon (reflex turn, spike or self-overlap)",
    4: "contains NaN or inf",
}


def _polygons(value, name):
    """-> (array (n, k, 2) float64 C-contiguous writable, is_batch). Clockwise polygons are
    reversed (vertex 0 kept first); checks run in one compiled call (sat2d.check_polygons)."""
    try:
        arr = np.array(value, dtype=np.float64, order="C", copy=True)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be a numeric (k, 2) or (n, k, 2) array") from exc
    if arr.ndim not in (2, 3) or arr.shape[-1] != 2:
        raise GeometryError(f"{name} must have shape (k, 2) or (n, k, 2), got {arr.shape}")
    if arr.size == 0:
        raise GeometryError(f"{name} is empty (shape {arr.shape})")
    batch = arr.ndim == 3
    arr = np.ascontiguousarray(arr.reshape((-1,) + arr.shape[-2:]))
    codes = np.empty(arr.shape[0], dtype=np.int64)
    _parallel.run(_kernels().check_polygons, arr.shape[0], arr, codes, grain=_GRAIN_CHECK)
    bad = np.flatnonzero(codes)
    if len(bad):
        where = f"{name}[{bad[0]}]" if batch else name
        raise GeometryError(f"{where} {_MESSAGES[int(codes[bad[0]])]}")
    return arr, batch


def _vectors(value, name):
    try:
        arr = np.array(value, dtype=np.float64, order="C", copy=True)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be numeric (2,) or (n, 2)") from exc
    if arr.ndim not in (1, 2) or arr.shape[-1] != 2 or arr.size == 0:
        raise GeometryError(f"{name} must have shape (2,) or (n, 2), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise GeometryError(f"{name} contains NaN or inf")
    return np.ascontiguousarray(arr.reshape(-1, 2)), arr.ndim == 2


def _times(value):
    try:
        arr = np.array(value, dtype=np.float64, order="C", copy=True)
    except (TypeError, ValueError) as exc:
        raise GeometryError("t_max must be a number or an (n,) array") from exc
    if arr.ndim > 1 or arr.size == 0:
        raise GeometryError(f"t_max must be a scalar or (n,), got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise GeometryError("t_max contains NaN or inf")
    if (arr < 0.0).any():
        raise GeometryError("t_max must be >= 0")
    return np.ascontiguousarray(arr.reshape(-1)), arr.ndim == 1


def _count(*parts):
    sizes = {len(arr) for arr, batch in parts if batch}
    if len(sizes) > 1:
        raise GeometryError(f"batch sizes differ: {sorted(sizes)}")
    return (sizes.pop(), True) if sizes else (1, False)


# ------------------------------------------------------------------------------------------ verbs


def place(poly, translations, angles=None):
    """Copies of one polygon ``(k, 2)`` rotated by ``angles`` (radians, (n,), about the origin of
    the polygon's coordinates) and then translated by ``translations`` ((n, 2)): -> (n, k, 2)."""
    arr, batch = _polygons(poly, "poly")
    if batch:
        raise GeometryError("place takes one polygon (k, 2)")
    shift, _ = _vectors(translations, "translations")
    base = arr[0]
    if angles is None:
        return np.ascontiguousarray(base[None, :, :] + shift[:, None, :])
    theta = np.array(angles, dtype=np.float64).reshape(-1)
    if not np.isfinite(theta).all():
        raise GeometryError("angles contain NaN or inf")
    if len(theta) not in (1, len(shift)) and len(shift) != 1:
        raise GeometryError("angles and translations differ in length")
    c, s = np.cos(theta)[:, None], np.sin(theta)[:, None]
    x = c * base[None, :, 0] - s * base[None, :, 1]
    y = s * base[None, :, 0] + c * base[None, :, 1]
    return np.ascontiguousarray(np.stack([x, y], axis=-1) + shift[:, None, :])


def intersects(poly_a, poly_b):
    """Closed-set static test. One pair -> bool; a batch -> (n,) bool array."""
    a, batch_a = _polygons(poly_a, "poly_a")
    b, batch_b = _polygons(poly_b, "poly_b")
    n, batch = _count((a, batch_a), (b, batch_b))
    out = np.empty(n, dtype=np.bool_)
    _parallel.run(_kernels().intersects_many, n, a, b, out, grain=_GRAIN_INTERSECTS)
    return out if batch else bool(out[0])


class PlanarImpactResult(Record):
    """Result of :func:`time_of_impact`.

    One pair: ``status`` (:class:`ImpactStatus`), ``t_first``, ``t_last`` (float; NaN on MISS;
    ``t_last`` is the end of the contact interval clipped to ``t_max``), ``normal`` ((2,) unit,
    A -> B: B moves along it away from A; on ALREADY_TOUCHING the axis of least overlap),
    ``kind`` (a ``kinds.SET_*`` code) and ``points`` ((m, 2), m = 0, 1 or 2): the contact set at
    ``t_first`` in world coordinates (a point or a segment). On ALREADY_TOUCHING the contact set
    is the intersection at t = 0 when that is a point or a segment; when it is a polygon,
    ``kind`` is SET_POLYGON and ``points`` is empty: call :func:`intersection` for it.

    Batch of n: ``status`` (n,) int8, ``t_first``/``t_last`` (n,), ``normal`` (n, 2), ``kind``
    (n,) int8, ``points`` (n, 2, 2) with NaN rows where there are fewer points.
    """

    __slots__ = ("status", "t_first", "t_last", "normal", "kind", "points")

    _batch_field = "t_first"

    def _describe(self):
        return (f"status={self.status.name}, t_first={self.t_first:.6g}, t_last={self.t_last:.6g}, "
                f"normal={np.round(self.normal, 6).tolist()}, kind={self.kind}, points={np.round(self.points, 6).tolist()}")


def time_of_impact(poly_a, velocity_a, poly_b, velocity_b, t_max):
    """First and last time of contact of ``poly_a + t velocity_a`` and ``poly_b + t velocity_b``
    over ``[0, t_max]`` (S0 §6), the contact normal and the contact set at first contact (S0 §7).

    Shapes: polygons (k, 2) / (n, k, 2), velocities (2,) / (n, 2), ``t_max`` scalar / (n,) >= 0;
    single sides broadcast. Returns a :class:`PlanarImpactResult`.
    """
    k = _kernels()
    a, batch_a = _polygons(poly_a, "poly_a")
    b, batch_b = _polygons(poly_b, "poly_b")
    va, batch_va = _vectors(velocity_a, "velocity_a")
    vb, batch_vb = _vectors(velocity_b, "velocity_b")
    tm, batch_t = _times(t_max)
    n, batch = _count((a, batch_a), (b, batch_b), (va, batch_va), (vb, batch_vb), (tm, batch_t))
    rows = np.empty((n, k.TOI_WIDTH), dtype=np.float64)
    _parallel.run(k.toi_many, n, a, b, va, vb, tm, rows, grain=_GRAIN_IMPACT)
    status = rows[:, k.TOI_STATUS].astype(np.int8)
    kind = rows[:, k.TOI_KIND]
    kind = np.where(np.isnan(kind), kinds.SET_EMPTY, kind).astype(np.int8)
    points = rows[:, k.TOI_P0 :].reshape(n, 2, 2).copy()
    touching = np.nonzero(status == kinds.ALREADY_TOUCHING)[0]
    if len(touching):
        sub_a = a[touching] if len(a) > 1 else a
        sub_b = b[touching] if len(b) > 1 else b
        sub_kind, sub_points, _ = _intersection_arrays(sub_a, sub_b, len(touching))
        kind[touching] = sub_kind
        flat = sub_kind <= kinds.SET_SEGMENT
        points[touching] = np.where(flat[:, None, None], sub_points[:, :2], np.nan)
    if batch:
        return PlanarImpactResult(status, rows[:, k.TOI_T_FIRST], rows[:, k.TOI_T_LAST], rows[:, k.TOI_NX : k.TOI_NY + 1],
                            kind, points)
    m = int(np.count_nonzero(~np.isnan(points[0, :, 0])))
    return PlanarImpactResult(
        ImpactStatus(int(status[0])),
        float(rows[0, k.TOI_T_FIRST]),
        float(rows[0, k.TOI_T_LAST]),
        rows[0, k.TOI_NX : k.TOI_NY + 1].copy(),
        int(kind[0]),
        points[0, :m].copy(),
    )


def _intersection_arrays(a, b, n):
    rows = a.shape[1] + b.shape[1]
    points = np.full((n, rows, 2), np.nan)
    kind = np.empty(n, dtype=np.int64)
    count = np.empty(n, dtype=np.int64)
    _parallel.run(_kernels().intersection_many, n, a, b, points, kind, count, grain=_GRAIN_INTERSECTION)
    return kind.astype(np.int8), points, count


def intersection(poly_a, poly_b):
    """Intersection set of two closed convex sets.

    One pair -> ``(kind, points)``: ``kind`` a ``kinds.SET_*`` code (EMPTY, POINT, SEGMENT,
    POLYGON) and ``points`` (m, 2) (a polygon counter-clockwise, m = 0 when empty).
    Batch of n -> ``(kind (n,) int8, points (n, ka + kb, 2))`` with NaN rows after each result's
    m points (m = number of non-NaN rows). Touching sets (least overlap depth within
    ``tolerance.touching_tolerance`` of the coordinate scale) return their contact point or
    segment (the extreme features across the touching axis); overlapping sets are clipped, and
    slivers thinner than a few tolerances collapse to a segment or a point.
    """
    a, batch_a = _polygons(poly_a, "poly_a")
    b, batch_b = _polygons(poly_b, "poly_b")
    n, batch = _count((a, batch_a), (b, batch_b))
    kind, points, count = _intersection_arrays(a, b, n)
    if batch:
        return kind, points
    return int(kind[0]), points[0, : int(count[0])].copy()


ImpactResult = PlanarImpactResult  # this module's earlier name for it (kept for existing imports)

"""Raw-array separating-axis fast paths: many OBB / triangle pairs at once.

For CAD and robotics code that already holds its boxes and triangles as arrays (no shape objects,
no poses). Seeds: Eberly, "Dynamic Collision Detection using Oriented Bounding Boxes" sections 2-4
(kernels in ``touche/_kernels/primitives/sat_fast.py``).

Array conventions
- OBB: ``center`` (3,), ``axes`` (3, 3) whose ROWS are the unit axes, ``half`` extents (3,);
  a batch is (n, 3), (n, 3, 3), (n, 3). Axes must be orthonormal (a left-handed frame is accepted:
  a box is symmetric); half extents must be >= 0 (zero gives a rectangle, segment or point).
- triangle: (3, 3), one vertex per row; a batch is (n, 3, 3). Zero-area triangles are allowed.
- velocities: (3,) or (n, 3); ``t_max``: a number or (n,), >= 0 (inf allowed).
Any argument may be a single item while others are batches of n: it is broadcast. When every
argument is a single item the result is a Python scalar / small array, else arrays of length n.
Invalid input (wrong shapes, NaN / inf, negative extents, non-orthonormal axes) raises
:class:`touche.GeometryError`. Everything is in one frame (the caller's world frame).

Time of impact (constant velocities over [0, t_max]) returns a :class:`PairwiseImpactResult`:
``status`` (``MISS`` / ``HIT`` / ``ALREADY_TOUCHING``, the codes of ``touche._kernels.base.kinds``),
``time`` (inf on a miss, 0 when already touching), ``point`` a point of first contact (on both
objects at ``time``; NaN on a miss) and ``normal`` the unit contact normal from A to B at a HIT
(NaN otherwise: an overlap at t = 0 has no first-contact direction).
"""
from __future__ import annotations

import numpy as np

from . import _parallel, tolerance
from ._kernels import kernel_loader
from ._kernels.base.kinds import (  # the status and set codes: public here
    ALREADY_TOUCHING, HIT, MISS, SET_EMPTY, SET_POINT, SET_POLYGON, SET_SEGMENT)
from ._record import Record
from .errors import GeometryError

__all__ = [
    "MISS", "HIT", "ALREADY_TOUCHING", "SET_EMPTY", "SET_POINT", "SET_SEGMENT", "SET_POLYGON", "MAX_SET_POINTS",
    "PairwiseImpactResult", "obb_obb_intersects", "triangle_obb_intersects", "triangle_triangle_intersects",
    "triangle_triangle_intersection", "obb_obb_time_of_impact", "triangle_obb_time_of_impact",
    "triangle_triangle_time_of_impact",
]

MAX_SET_POINTS = 6
# Batches run through touche._parallel.run: items per chunk (the smallest chunk worth handing to a
# thread, some tens of microseconds of work; a batch of at most one grain stays in the calling
# thread), from the cost per item of each driver.
_GRAIN_OVERLAP = 2048  # static SAT tests: ~50-100 ns each
_GRAIN_INTERSECTION = 512  # triangle-triangle intersection sets
_GRAIN_IMPACT = 256  # moving SAT under translation


_kernels = kernel_loader("sat_fast")


class PairwiseImpactResult(Record):
    """First contact under constant velocities; see the module docstring. Batch: ``status``
    (n,) int64, ``time`` (n,), ``point`` (n, 3), ``normal`` (n, 3)."""

    __slots__ = ("status", "time", "point", "normal")

    _batch_field = "status"

    def _describe(self):
        names = {MISS: "MISS", HIT: "HIT", ALREADY_TOUCHING: "ALREADY_TOUCHING"}
        return (f"status={names.get(int(self.status), self.status)}, time={self.time!r}, "
                f"point={np.round(self.point, 9).tolist()}, normal={np.round(self.normal, 9).tolist()}")


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------


def _array(value, name, tail):
    """float64 C-contiguous array of shape ``tail`` (single -> (1, *tail)) or (n, *tail)."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"{name} must be numeric, got {type(value).__name__}") from exc
    if array.shape == tail:
        batch = False
        array = array.reshape((1,) + tail)
    elif array.ndim == len(tail) + 1 and array.shape[1:] == tail:
        if array.shape[0] == 0:
            raise GeometryError(f"{name} is an empty batch")
        batch = True
    else:
        shape_text = ", ".join(str(s) for s in tail)
        raise GeometryError(f"{name} must have shape ({shape_text}) or (n, {shape_text}), got {array.shape}")
    array = np.ascontiguousarray(array)
    if _kernels().first_non_finite(array) >= 0:
        raise GeometryError(f"{name} contains NaN or inf")
    return array, batch


def _box(center, axes, half, name):
    c, bc = _array(center, f"{name} center", (3,))
    u, bu = _array(axes, f"{name} axes", (3, 3))
    h, bh = _array(half, f"{name} half extents", (3,))
    if (h < 0.0).any():
        raise GeometryError(f"{name} half extents must be >= 0")
    code, index = _kernels().check_boxes(u, h, tolerance.RIGID)
    if code == 2:
        raise GeometryError(f"{name} axes must be orthonormal rows (A A^T = I within {tolerance.RIGID});"
                            f" item {index} is not")
    return [c, u, h], (bc, bu, bh)


def _triangle(value, name):
    t, bt = _array(value, name, (3, 3))
    return [t], (bt,)


def _velocity(value, name):
    v, bv = _array(value, name, (3,))
    return [v], (bv,)


def _t_max(value):
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"t_max must be numeric, got {type(value).__name__}") from exc
    if array.ndim > 1:
        raise GeometryError(f"t_max must be a number or (n,), got shape {array.shape}")
    batch = array.ndim == 1
    if batch and array.shape[0] == 0:
        raise GeometryError("t_max is an empty batch")
    if np.isnan(array).any() or (array < 0.0).any():
        raise GeometryError("t_max must be >= 0 (inf allowed), not NaN")
    return [np.ascontiguousarray(array.reshape(-1))], (batch,)


def _broadcast(groups):
    """groups: list of (arrays, flags) per object. Each object's arrays are broadcast to the
    object's own count (1 or n); counts must agree. Returns (groups' arrays, n, is_batch)."""
    counts = set()
    is_batch = False
    for arrays, flags in groups:
        for array, flag in zip(arrays, flags):
            if flag:
                counts.add(array.shape[0])
                is_batch = True
    if len(counts) > 1:
        raise GeometryError(f"batch sizes differ: {sorted(counts)}")
    n = counts.pop() if counts else 1
    out = []
    for arrays, flags in groups:
        size = n if any(flags) else 1
        fixed = []
        for array in arrays:
            if array.shape[0] != size:
                array = np.ascontiguousarray(np.broadcast_to(array, (size,) + array.shape[1:]))
            fixed.append(array)
        out.append(fixed)
    return out, n, is_batch


# ---------------------------------------------------------------------------------------------
# static tests
# ---------------------------------------------------------------------------------------------


def obb_obb_intersects(center_a, axes_a, half_a, center_b, axes_b, half_b):
    """Whether two closed OBBs overlap (15 axes, Ericson 4.4.2 epsilon). bool or (n,) bool."""
    (a, b), n, batch = _broadcast([_box(center_a, axes_a, half_a, "box a"),
                                   _box(center_b, axes_b, half_b, "box b")])
    k = _kernels()
    if not batch:
        return bool(k.obb_obb_overlap(a[0], a[1], a[2], 0, b[0], b[1], b[2], 0))
    out = np.empty(n, dtype=np.bool_)
    _parallel.run(k.obb_obb_overlap_many, n, *a, *b, out, grain=_GRAIN_OVERLAP)
    return out


def triangle_obb_intersects(tri, center, axes, half):
    """Whether a closed triangle and a closed OBB overlap (13 axes). bool or (n,) bool."""
    (t, b), n, batch = _broadcast([_triangle(tri, "tri"), _box(center, axes, half, "box")])
    k = _kernels()
    if not batch:
        return bool(k.triangle_obb_overlap(t[0], 0, b[0], b[1], b[2], 0))
    out = np.empty(n, dtype=np.bool_)
    _parallel.run(k.triangle_obb_overlap_many, n, t[0], *b, out, grain=_GRAIN_OVERLAP)
    return out


def triangle_triangle_intersects(tri_a, tri_b):
    """Whether two closed triangles overlap (coplanar and zero-area triangles included)."""
    (a, b), n, batch = _broadcast([_triangle(tri_a, "tri_a"), _triangle(tri_b, "tri_b")])
    k = _kernels()
    if not batch:
        return bool(k.triangle_triangle_overlap(a[0], 0, b[0], 0))
    out = np.empty(n, dtype=np.bool_)
    _parallel.run(k.triangle_triangle_overlap_many, n, a[0], b[0], out, grain=_GRAIN_OVERLAP)
    return out


def triangle_triangle_intersection(tri_a, tri_b):
    """Intersection set of two closed triangles.

    Single pair: ``(kind, points)`` with ``kind`` a ``SET_*`` code (EMPTY, POINT, SEGMENT or
    POLYGON) and ``points`` (m, 3) (the polygon's vertices in order). Batch: ``(kind (n,),
    points (n, 6, 3) NaN-padded, counts (n,))``.
    """
    (a, b), n, batch = _broadcast([_triangle(tri_a, "tri_a"), _triangle(tri_b, "tri_b")])
    k = _kernels()
    if not batch:
        points = np.empty((MAX_SET_POINTS, 3))
        kind, count = k.triangle_triangle_intersection(a[0], 0, b[0], 0, points)
        return int(kind), points[:count].copy()
    kind = np.empty(n, dtype=np.int64)
    count = np.empty(n, dtype=np.int64)
    points = np.empty((n, MAX_SET_POINTS, 3))
    _parallel.run(k.triangle_triangle_intersection_many, n, a[0], b[0], kind, count, points, grain=_GRAIN_INTERSECTION)
    return kind, points, count


# ---------------------------------------------------------------------------------------------
# time of impact
# ---------------------------------------------------------------------------------------------


def _impact_single(res):
    return PairwiseImpactResult(int(res[0]), float(res[1]), np.array(res[2:5], dtype=np.float64),
                        np.array(res[5:8], dtype=np.float64))


def _impact_arrays(n):
    return (np.empty(n, dtype=np.int64), np.empty(n), np.empty((n, 3)), np.empty((n, 3)))


def obb_obb_time_of_impact(center_a, axes_a, half_a, center_b, axes_b, half_b, velocity_a, velocity_b,
                           t_max):
    """First contact of two OBBs translating at constant velocities over [0, t_max]."""
    (a, b, va, vb, tm), n, batch = _broadcast([
        _box(center_a, axes_a, half_a, "box a"), _box(center_b, axes_b, half_b, "box b"),
        _velocity(velocity_a, "velocity_a"), _velocity(velocity_b, "velocity_b"), _t_max(t_max)])
    k = _kernels()
    if not batch:
        return _impact_single(k.obb_obb_time_of_impact(a[0], a[1], a[2], 0, va[0][0], b[0], b[1], b[2], 0,
                                                       vb[0][0], float(tm[0][0])))
    out = _impact_arrays(n)
    _parallel.run(k.obb_obb_time_of_impact_many, n, *a, va[0], *b, vb[0], tm[0], *out, grain=_GRAIN_IMPACT)
    return PairwiseImpactResult(*out)


def triangle_obb_time_of_impact(tri, center, axes, half, velocity_tri, velocity_box, t_max):
    """First contact of a triangle (A) and an OBB (B) translating at constant velocities."""
    (t, b, vt, vb, tm), n, batch = _broadcast([
        _triangle(tri, "tri"), _box(center, axes, half, "box"), _velocity(velocity_tri, "velocity_tri"),
        _velocity(velocity_box, "velocity_box"), _t_max(t_max)])
    k = _kernels()
    if not batch:
        return _impact_single(k.triangle_obb_time_of_impact(t[0], 0, vt[0][0], b[0], b[1], b[2], 0, vb[0][0],
                                                            float(tm[0][0])))
    out = _impact_arrays(n)
    _parallel.run(k.triangle_obb_time_of_impact_many, n, t[0], vt[0], *b, vb[0], tm[0], *out, grain=_GRAIN_IMPACT)
    return PairwiseImpactResult(*out)


def triangle_triangle_time_of_impact(tri_a, tri_b, velocity_a, velocity_b, t_max):
    """First contact of two triangles translating at constant velocities over [0, t_max]."""
    (a, b, va, vb, tm), n, batch = _broadcast([
        _triangle(tri_a, "tri_a"), _triangle(tri_b, "tri_b"), _velocity(velocity_a, "velocity_a"),
        _velocity(velocity_b, "velocity_b"), _t_max(t_max)])
    k = _kernels()
    if not batch:
        return _impact_single(k.triangle_triangle_time_of_impact(a[0], 0, va[0][0], b[0], 0, vb[0][0],
                                                                 float(tm[0][0])))
    out = _impact_arrays(n)
    _parallel.run(k.triangle_triangle_time_of_impact_many, n, a[0], va[0], b[0], vb[0], tm[0], *out,
                  grain=_GRAIN_IMPACT)
    return PairwiseImpactResult(*out)


ImpactResult = PairwiseImpactResult  # this module's earlier name for it (kept for existing imports)

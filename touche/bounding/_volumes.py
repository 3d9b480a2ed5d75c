"""Plain bounding-volume result types (immutable NamedTuples of float64 numpy arrays).

Every type has ``volume()`` (exact) and ``contains(points, tolerance=None) -> (n,) bool``.
``tolerance`` is an absolute distance; the default is ``1e-9 * scale`` where scale is the
volume's size plus the magnitude of its position (floating point round-off in the fits is
relative to coordinate magnitude, so a far-from-origin volume gets a proportionally larger
slack).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import GeometryError

DEFAULT_RELATIVE_TOLERANCE = 1e-9


def _as_points(points):
    try:
        array = np.asarray(points, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise GeometryError(f"points must be numeric, got {type(points).__name__}") from exc
    if array.ndim == 1 and array.shape[0] == 3:
        array = array[None]
    if array.ndim != 2 or array.shape[1] != 3:
        raise GeometryError(f"points must have shape (n, 3) or (3,), got {array.shape}")
    if not np.isfinite(array).all():
        raise GeometryError("points contain NaN or inf")
    return array


def _tolerance(tolerance, scale):
    if tolerance is None:
        return DEFAULT_RELATIVE_TOLERANCE * scale
    tolerance = float(tolerance)
    if not np.isfinite(tolerance) or tolerance < 0:
        raise GeometryError(f"tolerance must be finite and >= 0, got {tolerance!r}")
    return tolerance


def _point_rectangle_distance(points, origin, axes, lengths):
    d = points - origin
    s = np.clip(d @ axes[0], 0.0, lengths[0])
    t = np.clip(d @ axes[1], 0.0, lengths[1])
    return np.linalg.norm(d - s[:, None] * axes[0] - t[:, None] * axes[1], axis=1)


def _point_segment_distance(points, p0, p1):
    d = p1 - p0
    dd = float(d @ d)
    if dd == 0.0:
        return np.linalg.norm(points - p0, axis=1)
    t = np.clip((points - p0) @ d / dd, 0.0, 1.0)
    return np.linalg.norm(points - (p0 + t[:, None] * d), axis=1)


class AABB(NamedTuple):
    """Axis-aligned box ``[min, max]`` (each (3,))."""

    min: np.ndarray
    max: np.ndarray

    @property
    def center(self):
        return 0.5 * (self.min + self.max)

    @property
    def half_extents(self):
        return 0.5 * (self.max - self.min)

    def volume(self):
        return float(np.prod(self.max - self.min))

    def corners(self):
        """(8, 3) corner points; corner n takes max on axis k when bit k of n is set."""
        bits = (np.arange(8)[:, None] >> np.arange(3)) & 1
        return np.where(bits == 1, self.max, self.min)

    def contains(self, points, tolerance=None):
        points = _as_points(points)
        tol = _tolerance(tolerance, np.abs(self.center).max() + np.ptp([self.min, self.max], axis=0).max())
        return ((points >= self.min - tol) & (points <= self.max + tol)).all(axis=1)

    def to_shape(self):
        """touche.AABB (a Box shape); raises GeometryError when the box is flat on some axis."""
        from ..shapes import AABB as ShapeAABB

        return ShapeAABB(self.min, self.max)


class Sphere(NamedTuple):
    """Ball of ``radius`` around ``center`` (3,)."""

    center: np.ndarray
    radius: float

    def volume(self):
        return 4.0 / 3.0 * np.pi * self.radius**3

    def contains(self, points, tolerance=None):
        points = _as_points(points)
        tol = _tolerance(tolerance, np.abs(self.center).max() + self.radius)
        return np.linalg.norm(points - self.center, axis=1) <= self.radius + tol

    def to_shape(self):
        """touche.Sphere; raises GeometryError for a zero radius (a single point)."""
        from ..shapes import Sphere as ShapeSphere

        return ShapeSphere(self.radius, self.center)


class OBB(NamedTuple):
    """Oriented box: ``center`` (3,), ``axes`` (3, 3) whose ROWS are the unit axes (right-handed),
    ``half_extents`` (3,) along those axes."""

    center: np.ndarray
    axes: np.ndarray
    half_extents: np.ndarray

    def volume(self):
        return float(8.0 * np.prod(self.half_extents))

    def corners(self):
        """(8, 3) world corners; corner n takes +half on axis k when bit k of n is set."""
        signs = np.where(((np.arange(8)[:, None] >> np.arange(3)) & 1) == 1, 1.0, -1.0)
        return self.center + (signs * self.half_extents) @ self.axes

    def contains(self, points, tolerance=None):
        points = _as_points(points)
        tol = _tolerance(tolerance, np.abs(self.center).max() + 2.0 * self.half_extents.max())
        local = np.abs((points - self.center) @ self.axes.T)
        return (local <= self.half_extents + tol).all(axis=1)

    def to_box(self):
        """``(touche.Box, touche.Pose)``: the box in its local frame and the pose placing it
        (rotation = axes.T, translation = center). Raises GeometryError for a flat box."""
        from ..pose import Pose
        from ..shapes import Box

        return Box.from_half_extents(self.half_extents), Pose.from_rt(self.axes.T, self.center)


class KDOP(NamedTuple):
    """k-DOP: ``k/2`` slab ``directions`` (rows, NOT normalised: integer vectors as in Ericson
    4.6), and the point projections' ``min`` / ``max`` along each."""

    k: int
    directions: np.ndarray
    min: np.ndarray
    max: np.ndarray

    def volume(self):
        """Volume of the slab intersection (a convex polytope; 0 when flat)."""
        from scipy.optimize import linprog
        from scipy.spatial import ConvexHull, HalfspaceIntersection

        norms = np.linalg.norm(self.directions, axis=1)
        a = np.concatenate([self.directions, -self.directions]) / np.concatenate([norms, norms])[:, None]
        b = np.concatenate([self.max, -self.min]) / np.concatenate([norms, norms])
        # Chebyshev centre: max r s.t. a x + r <= b
        res = linprog([0, 0, 0, -1], A_ub=np.hstack([a, np.ones((len(a), 1))]), b_ub=b,
                      bounds=[(None, None)] * 3 + [(0, None)], method="highs")
        if not res.success or res.x[3] <= 1e-12 * max(1.0, np.abs(b).max()):
            return 0.0
        halfspaces = np.hstack([a, -b[:, None]])
        hull = ConvexHull(HalfspaceIntersection(halfspaces, res.x[:3]).intersections)
        return float(hull.volume)

    def contains(self, points, tolerance=None):
        points = _as_points(points)
        norms = np.linalg.norm(self.directions, axis=1)
        scale = (np.maximum(np.abs(self.min), np.abs(self.max)) / norms).max()
        tol = _tolerance(tolerance, scale) * norms
        proj = points @ self.directions.T
        return ((proj >= self.min - tol) & (proj <= self.max + tol)).all(axis=1)


class Capsule(NamedTuple):
    """Sphere-swept segment: the points within ``radius`` of the segment ``p0``-``p1``."""

    p0: np.ndarray
    p1: np.ndarray
    radius: float

    def volume(self):
        length = float(np.linalg.norm(self.p1 - self.p0))
        return np.pi * self.radius**2 * length + 4.0 / 3.0 * np.pi * self.radius**3

    def contains(self, points, tolerance=None):
        points = _as_points(points)
        scale = max(np.abs(self.p0).max(), np.abs(self.p1).max()) + self.radius + np.linalg.norm(self.p1 - self.p0)
        tol = _tolerance(tolerance, scale)
        return _point_segment_distance(points, self.p0, self.p1) <= self.radius + tol

    def to_shape(self):
        """touche.Capsule (``Capsule.from_points``); raises GeometryError for a zero radius."""
        from ..shapes import Capsule as ShapeCapsule

        return ShapeCapsule.from_points(self.p0, self.p1, self.radius)


class Lozenge(NamedTuple):
    """Rectangle swept sphere (RSS, Ericson 4.5 "lozenge"): the points within ``radius`` of the
    rectangle ``origin + s*lengths[0]*axes[0] + t*lengths[1]*axes[1]``, s, t in [0, 1].
    ``axes`` (3, 3) rows are right-handed unit axes; axes[2] is the rectangle's normal."""

    origin: np.ndarray
    axes: np.ndarray
    lengths: np.ndarray
    radius: float

    def volume(self):
        """Exact: 2 a b r + pi r^2 (a + b) + 4/3 pi r^3 (slab, edge half-cylinders, corner
        sphere quarters)."""
        a, b = float(self.lengths[0]), float(self.lengths[1])
        r = self.radius
        return 2.0 * a * b * r + np.pi * r * r * (a + b) + 4.0 / 3.0 * np.pi * r**3

    def corners(self):
        """(4, 3) rectangle corners."""
        e0 = self.lengths[0] * self.axes[0]
        e1 = self.lengths[1] * self.axes[1]
        return np.array([self.origin, self.origin + e0, self.origin + e0 + e1, self.origin + e1])

    def contains(self, points, tolerance=None):
        points = _as_points(points)
        scale = np.abs(self.origin).max() + self.lengths.sum() + self.radius
        tol = _tolerance(tolerance, scale)
        return _point_rectangle_distance(points, self.origin, self.axes, self.lengths) <= self.radius + tol


RSS = Lozenge

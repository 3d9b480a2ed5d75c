"""Polygon triangulation by ear cutting, with holes (Ericson 12.5.1, 12.5.1.1).

``triangulate_polygon(outer, holes=(), normal=None)``

``outer`` (k, 2) or (k, 3): the boundary, any winding (2D: made counter-clockwise; 3D: projected
on the plane of its Newell normal, or of ``normal`` when given — then the winding about
``normal`` is kept and triangles come out counter-clockwise about it). ``holes``: a list of
(h_i, 2|3) rings inside ``outer`` (any winding: made clockwise). Holes are joined to the outer
ring by zero-width channels from each hole's rightmost vertex to the nearest visible ring
vertex, then the single ring is ear-cut (O(n^2)).

Returns ``triangles`` (t, 3) int64 indices into ``np.concatenate([outer, *holes])``, wound like
the outer ring as given (2D: counter-clockwise for a counter-clockwise ring; 3D: counter-clockwise
about the Newell normal, or like ``outer`` about ``normal`` when given). t = k - 2 without
holes, k + 2 H - 2 with H holes (k = all vertices). Raises GeometryError for fewer than 3
points, NaN / inf, or zero area. A ring that is not simple still terminates (the kernel cuts
its most convex vertex when a whole lap finds no ear) but may give overlapping triangles.
"""
from __future__ import annotations

import numpy as np

from ..errors import GeometryError
from ._common import _kernels, newell_normal


def _plane_basis(normal):
    n = normal / np.linalg.norm(normal)
    helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(helper, n)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(n, e1)
    return e1, e2  # (e1, e2, n) is right-handed: CCW about n maps to CCW in (e1, e2)


def _area2(ring):
    x, y = ring[:, 0], ring[:, 1]
    return float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y))


def _ring(points, name, dims=None):
    p = np.array(points, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] not in (2, 3) or (dims is not None and p.shape[1] != dims):
        raise GeometryError(f"{name} must have shape (k, {dims or '2|3'}), got {p.shape}")
    if len(p) < 3:
        raise GeometryError(f"{name} needs at least 3 points, got {len(p)}")
    if not np.isfinite(p).all():
        raise GeometryError(f"{name} contains NaN or inf")
    return p


def triangulate_polygon(outer, holes=(), normal=None):
    outer = _ring(outer, "outer")
    dims = outer.shape[1]
    holes = [_ring(h, f"holes[{i}]", dims) for i, h in enumerate(holes)]
    if dims == 3:
        n = newell_normal(outer) if normal is None else np.asarray(normal, dtype=np.float64)
        if not np.isfinite(n).all() or np.linalg.norm(n) == 0.0:
            raise GeometryError("the polygon has no area (zero Newell normal)")
        e1, e2 = _plane_basis(n)
        basis = np.stack([e1, e2], axis=1)
        outer2 = outer @ basis
        holes2 = [h @ basis for h in holes]
    else:
        outer2, holes2 = outer, holes
    area = _area2(outer2)
    if area == 0.0:
        raise GeometryError("the polygon has zero area")
    flip_outer = area < 0.0  # make it counter-clockwise; triangles are turned back at the end
    if flip_outer:
        outer2 = outer2[::-1]
    # holes clockwise
    hole_rings, hole_flip = [], []
    for h in holes2:
        reverse = _area2(h) > 0.0
        hole_rings.append(h[::-1] if reverse else h)
        hole_flip.append(reverse)
    # index maps from the (possibly reversed) rings back to the caller's concatenation
    k = len(outer2)
    index = [np.arange(k)[::-1] if flip_outer else np.arange(k)]
    offset = k
    for h, reverse in zip(hole_rings, hole_flip):
        ids = np.arange(offset, offset + len(h))
        index.append(ids[::-1] if reverse else ids)
        offset += len(h)
    index = np.concatenate(index)
    kernels = _kernels()
    if hole_rings:
        hole_points = np.ascontiguousarray(np.concatenate(hole_rings))
        starts = np.zeros(len(hole_rings) + 1, dtype=np.int64)
        np.cumsum([len(h) for h in hole_rings], out=starts[1:])
        ring = kernels.bridge_holes(np.ascontiguousarray(outer2), hole_points, starts)
        points = np.concatenate([outer2, hole_points])
    else:
        ring = np.arange(k)
        points = outer2
    triangles, _forced = kernels.earcut(np.ascontiguousarray(points[ring]))
    triangles = index[ring[triangles]]
    if flip_outer:
        triangles = triangles[:, ::-1].copy()
    return triangles

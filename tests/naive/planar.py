"""Slow, obviously correct references for 2D convex sets (tests/test_planar.py).

- ``clip``: Sutherland-Hodgman clipping of a convex subject (polygon, segment or point) by the
  closed half-planes of a CCW convex polygon, in exact rational arithmetic (``fractions``) or
  floats. Non-empty result <=> the closed sets intersect.
- ``intersects``: the static test built on ``clip`` (segment/point pairs by orientation tests).
- ``distance``: Euclidean distance between two convex sets (min over vertex-to-set distances,
  which is exact in 2D because a closest pair always involves a vertex).
- ``minkowski_time_of_impact``: first/last contact of translating convex polygons as a ray cast
  of the relative displacement t*w against the Minkowski difference A - B (convex hull of all
  pairwise vertex differences, scipy), an independent route to S0 §6's answer.
"""
from fractions import Fraction

import numpy as np
from scipy.spatial import ConvexHull


def _as(points, exact):
    conv = Fraction if exact else float
    return [(conv(float(x)), conv(float(y))) for x, y in np.asarray(points, dtype=float).reshape(-1, 2)]


def _ccw(poly):
    area2 = sum(poly[i][0] * poly[(i + 1) % len(poly)][1] - poly[(i + 1) % len(poly)][0] * poly[i][1]
                for i in range(len(poly)))
    return poly if area2 > 0 else poly[::-1]


def clip(subject, clipper, exact=True):
    """subject (m, 2) convex set, clipper (k >= 3, 2) convex polygon (any orientation) -> the
    list of points of subject ∩ clipper (closed half-planes, duplicates possible)."""
    points = _as(subject, exact)
    poly = _ccw(_as(clipper, exact))
    k = len(poly)
    for j in range(k):
        (px, py), (qx, qy) = poly[j], poly[(j + 1) % k]
        ex, ey = qx - px, qy - py

        def side(v):  # > 0 outside the edge's half-plane (left of a CCW edge is inside)
            return -(ex * (v[1] - py) - ey * (v[0] - px))

        result = []
        m = len(points)
        for i in range(m):
            cur, nxt = points[i], points[(i + 1) % m]
            s0, s1 = side(cur), side(nxt)
            if s0 <= 0:
                result.append(cur)
            if (s0 <= 0) != (s1 <= 0):
                f = s0 / (s0 - s1)
                result.append((cur[0] + f * (nxt[0] - cur[0]), cur[1] + f * (nxt[1] - cur[1])))
        points = result
        if not points:
            return []
    return points


def _orient(a, b, c):
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def _on_segment(p, a, b):
    return (_orient(a, b, p) == 0 and min(a[0], b[0]) <= p[0] <= max(a[0], b[0])
            and min(a[1], b[1]) <= p[1] <= max(a[1], b[1]))


def _segments_meet(a, b, c, d):
    o1, o2, o3, o4 = _orient(a, b, c), _orient(a, b, d), _orient(c, d, a), _orient(c, d, b)
    if ((o1 > 0 and o2 < 0) or (o1 < 0 and o2 > 0)) and ((o3 > 0 and o4 < 0) or (o3 < 0 and o4 > 0)):
        return True
    return _on_segment(c, a, b) or _on_segment(d, a, b) or _on_segment(a, c, d) or _on_segment(b, c, d)


def intersects(a, b, exact=True):
    """Closed convex sets a, b ((k, 2): polygon, segment k = 2, point k = 1) intersect?"""
    a = np.asarray(a, dtype=float).reshape(-1, 2)
    b = np.asarray(b, dtype=float).reshape(-1, 2)
    if len(a) >= 3:
        return len(clip(b, a, exact)) > 0
    if len(b) >= 3:
        return len(clip(a, b, exact)) > 0
    pa, pb = _as(a, exact), _as(b, exact)
    sa = pa if len(pa) == 2 else [pa[0], pa[0]]
    sb = pb if len(pb) == 2 else [pb[0], pb[0]]
    return _segments_meet(sa[0], sa[1], sb[0], sb[1])


def _point_set_distance(p, s):
    """Distance from point p (2,) to convex set s (k, 2): 0 inside a polygon (every edge has p on
    its inner side), else the nearest point over its edges (segment, point)."""
    s = np.asarray(s, dtype=float).reshape(-1, 2)
    p = np.asarray(p, dtype=float)
    if len(s) >= 3:
        if area(s) < 0:
            s = s[::-1]
        start, end = s, np.roll(s, -1, axis=0)
        e = end - start
        if (e[:, 0] * (p[1] - start[:, 1]) - e[:, 1] * (p[0] - start[:, 0]) >= 0).all():
            return 0.0
    elif len(s) == 2:
        start, end = s[:1], s[1:]
    else:
        start, end = s, s
    e = end - start
    ee = (e * e).sum(axis=1)
    u = np.where(ee > 0, ((p - start) * e).sum(axis=1) / np.where(ee > 0, ee, 1.0), 0.0).clip(0.0, 1.0)
    return float(np.hypot(*(start + u[:, None] * e - p).T).min())


def point_distance(p, s):
    return _point_set_distance(np.asarray(p, dtype=float), s)


def distance(a, b):
    """Distance between convex sets a, b (0 when they intersect)."""
    if intersects(a, b, exact=False):
        return 0.0
    a = np.asarray(a, dtype=float).reshape(-1, 2)
    b = np.asarray(b, dtype=float).reshape(-1, 2)
    return min(min(_point_set_distance(p, b) for p in a), min(_point_set_distance(q, a) for q in b))


def minkowski_time_of_impact(a, va, b, vb, t_max):
    """(t_first, t_last) of a + t va, b + t vb over [0, t_max] or None. Needs A - B to have area
    (true when either set is a polygon)."""
    a = np.asarray(a, dtype=float).reshape(-1, 2)
    b = np.asarray(b, dtype=float).reshape(-1, 2)
    w = np.asarray(vb, dtype=float) - np.asarray(va, dtype=float)
    diff = (a[:, None, :] - b[None, :, :]).reshape(-1, 2)
    hull = ConvexHull(diff)
    lo, hi = 0.0, np.inf
    # inside: normal . x + offset <= 0; x = t w  ->  (normal . w) t <= -offset
    for nx, ny, off in hull.equations:
        rate = nx * w[0] + ny * w[1]
        if rate == 0.0:
            if off > 0.0:
                return None
        elif rate > 0.0:
            hi = min(hi, -off / rate)
        else:
            lo = max(lo, -off / rate)
    if lo > hi or lo > t_max:
        return None
    return lo, min(hi, t_max)


def area(points):
    p = np.asarray(points, dtype=float).reshape(-1, 2)
    if len(p) < 3:
        return 0.0
    return 0.5 * float(np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1]))


def intersection_polygon(a, b):
    """Exact clip of b by polygon a, consecutive duplicates removed, as float (m, 2)."""
    pts = clip(b, a, exact=True)
    out = []
    for p in pts:
        if not out or p != out[-1]:
            out.append(p)
    while len(out) > 1 and out[0] == out[-1]:
        out.pop()
    return np.array([[float(x), float(y)] for x, y in out]).reshape(-1, 2)

"""Slow, obviously-correct references for touche._kernels.primitives.closest.

- hull_closest: closest point of the convex hull of a few points, by brute force over every
  subset of <= 4 points (Caratheodory): project onto the subset's affine hull (pseudo-inverse),
  keep projections with non-negative barycentric coordinates, take the nearest. Any kept
  candidate is a point of the hull, and the true closest point lies in the relative interior of
  some affinely independent subset, whose projection is kept.
- linear_linear_exact: convex quadratic over a (possibly unbounded) box, solved in exact
  rational arithmetic (fractions) by enumerating the KKT candidates.
- golden: golden-section minimisation of a convex 1-D function (solid cylinder / cone slices,
  segment-box distance).
"""

import itertools
from fractions import Fraction

import numpy as np

_SUBSETS = {}


def _subsets(n, k):
    key = (n, k)
    if key not in _SUBSETS:
        _SUBSETS[key] = np.array(list(itertools.combinations(range(n), k)), dtype=np.int64)
    return _SUBSETS[key]


def hull_closest(p, pts, tol=1e-12):
    """Closest point to p of conv(pts) (pts (n,3)); returns (q, distance)."""
    p = np.asarray(p, float)
    pts = np.asarray(pts, float)
    n = len(pts)
    best_q = None
    best_d = np.inf
    for k in range(1, min(4, n) + 1):
        idx = _subsets(n, k)
        base = pts[idx[:, 0]]  # (m,3)
        if k == 1:
            q = base
            ok = np.ones(len(idx), bool)
        else:
            E = np.transpose(pts[idx[:, 1:]] - base[:, None, :], (0, 2, 1))  # (m,3,k-1)
            lam = np.einsum("mij,mj->mi", np.linalg.pinv(E), p - base)  # (m,k-1)
            q = base + np.einsum("mij,mj->mi", E, lam)
            bary0 = 1.0 - lam.sum(axis=1)
            ok = (lam >= -tol).all(axis=1) & (bary0 >= -tol)
        if not ok.any():
            continue
        dist = np.linalg.norm(q[ok] - p, axis=1)
        i = np.argmin(dist)
        if dist[i] < best_d:
            best_d = dist[i]
            best_q = q[ok][i]
    return best_q, best_d


def hull_dist(p, pts):
    return hull_closest(p, pts)[1]


def hulls_distance(A, B):
    """Distance between conv(A) and conv(B) = distance of the origin to conv(A - B)."""
    A = np.asarray(A, float)
    B = np.asarray(B, float)
    diff = (A[:, None, :] - B[None, :, :]).reshape(-1, 3)
    return hull_dist(np.zeros(3), diff)


# ----------------------------------------------------------------- exact linear-linear


def _F(x):
    return Fraction(float(x))


def _clampF(x, lo, hi):
    if lo is not None and x < lo:
        return lo
    if hi is not None and x > hi:
        return hi
    return x


def _bound(x):
    return None if np.isinf(x) else Fraction(float(x))


def linear_linear_exact(p1, d1, lo1, hi1, p2, d2, lo2, hi2):
    """Exact min of |p1 + s d1 - p2 - t d2|^2 over the box; returns (dist, s, t) (floats).
    Candidates: the stationary point (if the Hessian is nonsingular and it is feasible), and for
    every finite bound of one parameter and for that parameter = clamp(0) (covers the singular
    directions), the other parameter's clamped optimum."""
    p1, d1, p2, d2 = ([_F(v) for v in x] for x in (p1, d1, p2, d2))
    L1, H1, L2, H2 = _bound(lo1), _bound(hi1), _bound(lo2), _bound(hi2)
    r = [p1[i] - p2[i] for i in range(3)]

    def dot(u, v):
        return sum(u[i] * v[i] for i in range(3))

    a, b, e = dot(d1, d1), dot(d1, d2), dot(d2, d2)
    c, f = dot(d1, r), dot(d2, r)

    def val(s, t):
        return sum((r[i] + s * d1[i] - t * d2[i]) ** 2 for i in range(3))

    def best_t(s):
        return _clampF((b * s + f) / e, L2, H2) if e != 0 else _clampF(Fraction(0), L2, H2)

    def best_s(t):
        return _clampF((t * b - c) / a, L1, H1) if a != 0 else _clampF(Fraction(0), L1, H1)

    cands = []
    den = a * e - b * b
    if den != 0:
        s = (b * f - c * e) / den
        t = (a * f - b * c) / den
        if _clampF(s, L1, H1) == s and _clampF(t, L2, H2) == t:
            cands.append((s, t))
    for s in {x for x in (L1, H1, _clampF(Fraction(0), L1, H1)) if x is not None}:
        cands.append((s, best_t(s)))
    for t in {x for x in (L2, H2, _clampF(Fraction(0), L2, H2)) if x is not None}:
        cands.append((best_s(t), t))
    v, s, t = min((val(s, t), s, t) for s, t in cands)
    return float(v) ** 0.5, float(s), float(t)


# ----------------------------------------------------------------- 1-D convex minimisation


def golden(f, lo, hi, iters=120):
    """Minimum of a convex function on [lo, hi] (golden section + endpoint check)."""
    g = (5**0.5 - 1) / 2
    x1 = hi - g * (hi - lo)
    x2 = lo + g * (hi - lo)
    f1, f2 = f(x1), f(x2)
    for _ in range(iters):
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - g * (hi - lo)
            f1 = f(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + g * (hi - lo)
            f2 = f(x2)
    return min(f1, f2, f(lo), f(hi))


def frame(axis):
    """Orthonormal matrix [e1 e2 u] with u = axis/|axis| (Gram-Schmidt)."""
    u = np.asarray(axis, float) / np.linalg.norm(axis)
    e = np.eye(3)[np.argmin(np.abs(u))]
    e1 = e - (e @ u) * u
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(u, e1)
    return np.column_stack([e1, e2, u])


def cylinder_dist(p, p0, p1, r):
    """Solid cylinder: in a local frame (z along the axis) the set is
    {0 <= z <= L, x^2 + y^2 <= r^2}; minimise over the slice height z."""
    R = frame(np.asarray(p1) - p0)
    L = np.linalg.norm(np.asarray(p1) - p0)
    x, y, z = R.T @ (np.asarray(p) - p0)
    rho = np.hypot(x, y)
    return golden(lambda h: np.hypot(z - h, max(rho - r, 0.0)), 0.0, L)


def cone_dist(p, apex, base, r):
    """Solid cone: slice at height h (0..H from the apex) is a disc of radius r h / H."""
    R = frame(np.asarray(base) - apex)
    H = np.linalg.norm(np.asarray(base) - apex)
    x, y, z = R.T @ (np.asarray(p) - apex)
    rho = np.hypot(x, y)
    return golden(lambda h: np.hypot(z - h, max(rho - r * h / H, 0.0)), 0.0, H)


def in_cylinder(q, p0, p1, r, tol):
    R = frame(np.asarray(p1) - p0)
    L = np.linalg.norm(np.asarray(p1) - p0)
    x, y, z = R.T @ (np.asarray(q) - p0)
    return -tol <= z <= L + tol and np.hypot(x, y) <= r + tol


def in_cone(q, apex, base, r, tol):
    R = frame(np.asarray(base) - apex)
    H = np.linalg.norm(np.asarray(base) - apex)
    x, y, z = R.T @ (np.asarray(q) - apex)
    return -tol <= z <= H + tol and np.hypot(x, y) <= r * max(z, 0.0) / H + tol


def point_obb_dist(p, c, axes, half):
    loc = axes.T @ (np.asarray(p) - c)
    return np.linalg.norm(np.maximum(np.abs(loc) - half, 0.0))


def obb_corners(c, axes, half):
    s = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))
    return c + (s * half) @ axes.T


def segment_obb_dist(a, b, c, axes, half):
    a = np.asarray(a, float)
    d = np.asarray(b, float) - a
    return golden(lambda t: point_obb_dist(a + t * d, c, axes, half), 0.0, 1.0)

"""Slow, obviously-correct references for the overlap kernels (numpy / scipy)."""
import itertools

import numpy as np
from scipy.optimize import linprog
from scipy.spatial import ConvexHull
from scipy.spatial import QhullError


# ------------------------------------------------------------------ point sets of shapes


def box_corners(c, axes, half):
    """8 corners of an OBB (axes columns = unit axes)."""
    s = np.array(list(itertools.product([-1.0, 1.0], repeat=3)))
    return c + (s * half) @ axes.T


def aabb_corners(mn, mx):
    c = 0.5 * (mn + mx)
    return box_corners(c, np.eye(3), 0.5 * (mx - mn))


def rect_corners(c, u, v, eu, ev):
    return np.array([c + su * eu * u + sv * ev * v for su, sv in [(1, 1), (-1, 1), (-1, -1), (1, -1)]])


def minkowski_diff(P, Q):
    """{q - p}: the hulls intersect iff the origin is in conv(Q - P)."""
    P = np.atleast_2d(P)
    Q = np.atleast_2d(Q)
    return (Q[None, :, :] - P[:, None, :]).reshape(-1, 3)


# ------------------------------------------------------------------ exact-ish primitives


def hulls_intersect_lp(P, Q):
    """Feasibility LP: sum l_i p_i = sum m_j q_j, l, m >= 0, sum l = sum m = 1."""
    P = np.atleast_2d(P)
    Q = np.atleast_2d(Q)
    n, m = len(P), len(Q)
    scale = max(np.abs(P).max(), np.abs(Q).max(), 1e-300)
    A = np.zeros((5, n + m))
    A[:3, :n] = P.T / scale
    A[:3, n:] = -Q.T / scale
    A[3, :n] = 1.0
    A[4, n:] = 1.0
    b = np.array([0, 0, 0, 1.0, 1.0])
    res = linprog(np.zeros(n + m), A_eq=A, b_eq=b, bounds=[(0, None)] * (n + m), method="highs")
    return res.status == 0


def point_triangle_dist(p, A, B, C):
    """Distance from p to many triangles (N,3) each: min over face projection (if inside),
    the three edges (clamped projection) and the vertices. Degenerate faces are skipped."""
    A = np.atleast_2d(A)
    B = np.atleast_2d(B)
    C = np.atleast_2d(C)
    best = np.full(len(A), np.inf)
    for X, Y in ((A, B), (B, C), (C, A)):
        d = Y - X
        dd = np.einsum("ij,ij->i", d, d)
        t = np.where(dd > 0, np.einsum("ij,ij->i", p - X, d) / np.where(dd > 0, dd, 1), 0.0)
        t = np.clip(t, 0, 1)
        q = X + t[:, None] * d
        best = np.minimum(best, np.linalg.norm(p - q, axis=1))
    e1 = B - A
    e2 = C - A
    n = np.cross(e1, e2)
    nn = np.einsum("ij,ij->i", n, n)
    ok = nn > 1e-28 * np.einsum("ij,ij->i", e1, e1) * np.einsum("ij,ij->i", e2, e2)
    if ok.any():
        # barycentric by solving the 2x2 normal equations
        w = p - A[ok]
        a11 = np.einsum("ij,ij->i", e1[ok], e1[ok])
        a12 = np.einsum("ij,ij->i", e1[ok], e2[ok])
        a22 = np.einsum("ij,ij->i", e2[ok], e2[ok])
        b1 = np.einsum("ij,ij->i", w, e1[ok])
        b2 = np.einsum("ij,ij->i", w, e2[ok])
        det = a11 * a22 - a12 * a12
        s = (b1 * a22 - b2 * a12) / det
        t = (a11 * b2 - a12 * b1) / det
        inside = (s >= 0) & (t >= 0) & (s + t <= 1)
        q = A[ok] + s[:, None] * e1[ok] + t[:, None] * e2[ok]
        dist = np.where(inside, np.linalg.norm(p - q, axis=1), np.inf)
        sub = best[ok]
        best[ok] = np.minimum(sub, dist)
    return best


def origin_hull_distance(D):
    """Distance from the origin to conv(D): 0 if the LP says the origin is inside, else the
    min over all vertex triples of the point-triangle distance (any boundary point of a
    polytope lies in a triangle of its vertices; every triple's triangle is in the hull)."""
    D = np.atleast_2d(D)
    if hulls_intersect_lp(np.zeros((1, 3)), D):
        return 0.0
    if len(D) == 1:
        return float(np.linalg.norm(D[0]))
    if len(D) == 2:
        return float(point_triangle_dist(np.zeros(3), D[:1], D[1:], D[1:])[0])
    idx = np.array(list(itertools.combinations(range(len(D)), 3)))
    return float(point_triangle_dist(np.zeros(3), D[idx[:, 0]], D[idx[:, 1]], D[idx[:, 2]]).min())


def hull_signed_distance(P, Q):
    """Signed distance between conv(P) and conv(Q): + distance if disjoint, - penetration
    depth (min translation) if overlapping, via the facets of the Minkowski difference.
    Returns None when the Minkowski difference is flat (use origin_hull_distance instead)."""
    D = minkowski_diff(P, Q)
    scale = np.abs(D).max()
    try:
        hull = ConvexHull(D / scale)
    except QhullError:
        return None
    off = hull.equations[:, 3] * scale  # n.x + off <= 0 inside; at x=0 value = off
    if off.max() <= 0:
        return float(off.max())
    s = hull.simplices
    return float(point_triangle_dist(np.zeros(3), D[s[:, 0]], D[s[:, 1]], D[s[:, 2]]).min())


def minkowski_facet_normals(P, Q):
    """Unit outward facet normals and offsets of conv(Q - P) (None if flat)."""
    D = minkowski_diff(P, Q)
    scale = np.abs(D).max()
    try:
        hull = ConvexHull(D / scale)
    except QhullError:
        return None
    return hull.equations[:, :3], hull.equations[:, 3] * scale


def gap_along(P, Q, L):
    """max(minQ - maxP, minP - maxQ) along the (not necessarily unit) axes L (k,3)."""
    L = np.atleast_2d(L)
    L = L / np.linalg.norm(L, axis=1)[:, None]
    pp = P @ L.T
    qq = Q @ L.T
    return np.maximum(qq.min(0) - pp.max(0), pp.min(0) - qq.max(0))


# ------------------------------------------------------------------ cones / planes


def cone_samples(apex, axis, h, r, m=20000):
    """Apex plus m points on the base circle (the extreme points of a solid cone)."""
    axis = axis / np.linalg.norm(axis)
    t = np.array([1.0, 0, 0]) if abs(axis[0]) < 0.9 else np.array([0, 1.0, 0])
    u = np.cross(axis, t)
    u /= np.linalg.norm(u)
    v = np.cross(axis, u)
    th = np.linspace(0, 2 * np.pi, m, endpoint=False)
    base = apex + h * axis
    pts = base + r * (np.cos(th)[:, None] * u + np.sin(th)[:, None] * v)
    return np.vstack([apex[None], pts])


def random_rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])

"""Slow, obviously-correct reference for the pair engine (touche/_kernels/narrow/pairs.py).

Independent of the engine: it reads only the public attributes of the shapes (vertices, radius,
normal, ...) and the pose matrices, and computes in plain numpy / scipy.

Geometry (world frame, see ``world``):
- "hull": conv(V) swept by a ball of radius r (Point, Sphere, Segment, Capsule, Triangle,
  Tetrahedron, Box, AABB, ConvexPolygon, ConvexPolyhedron);
- "linear": p + t d, t in [lo, hi], lo/hi may be infinite (Ray, Line);
- "round": solid cylinder / cone; "plane": n . x = d (two-sided) or n . x <= d; "mesh": a
  triangle soup (union of its solid triangles).

Why the references are right:
- ``core_distance(P, Q)`` (distance between conv P and conv Q): the closest pairs are
  {(x, x + v) : x in F_P, x + v in F_Q} where v is the minimum-norm point of conv(Q - P) and
  F_P, F_Q the support faces of P along v and of Q along -v; those faces lie in two parallel
  planes, and the intersection of F_P with F_Q - v (two convex polygons in one plane) has a
  vertex that is a vertex of one lying in the other, or a crossing of an edge of each. So
  the distance is the minimum over (vertex of P, simplex of <= 3 vertices of Q),
  (simplex of <= 3 vertices of P, vertex of Q) and (edge of P, edge of Q), where "edges" are all
  vertex pairs and "triangles" all vertex triples (each is a subset of the hull, so every
  candidate is >= the distance, and the minimum is attained). Each candidate is exact:
  point-triangle = min(face projection when inside, clamped edge projections); segment-segment
  = min(interior stationary point clamped to the square, the four clamped 1-D optima) -- the
  minimum of a convex quadratic on a square.
- penetration (``core_signed``): the minimum translation distance of two convex polytopes is
  the depth of the origin in the Minkowski difference conv(Q - P): minus the largest facet
  offset of its convex hull (scipy / Qhull). When the difference is flat (both shapes lie in
  one plane, or a segment meets a flat shape) its interior is empty and the depth is 0.
- a ray / line against a bounded set: the distance from p + t d to any point x of the set
  increases once t > (x - p) . d / |d|^2, so the minimum over t is attained on the parameter
  interval spanned by the set's vertices (clamped to [lo, hi]); the element becomes a segment.
- linear-linear: ``naive_closest.linear_linear_exact`` (rational arithmetic).
- swept radii: the Minkowski sum with a ball adds the radius to both distance and depth.
- point vs solid cylinder / cone: ``naive_closest.cylinder_dist`` / ``cone_dist`` (golden
  section on the convex slice distance, ~1e-15 relative); the depth of an interior point is the
  distance to the boundary in its meridian half-plane (a surface of revolution has its
  nearest point in the same half-plane).
- planes / half-spaces: the support values (min / max of n . x) of the other shape.
- meshes: a mesh is the union of its triangles; the engine reports the nearest (overlapping:
  the deepest) triangle, so the reference is the minimum over triangles of the triangle
  reference; against a plane, the extremes over all vertices (exact for the union).
"""
import itertools

import numpy as np
from scipy.spatial import ConvexHull, QhullError

from naive import closest as NC
from naive import overlap as NO

from touche._kernels import kinds as K



# ------------------------------------------------------------------------------------------------
# shapes in the world
_HULL_CORES = (K.POINT, K.SEGMENT, K.TRIANGLE, K.TETRAHEDRON, K.BOX, K.POLYGON, K.POLYHEDRON)


def world(shape, T):
    """World description of a touche shape placed by the 4x4 pose T (see the module docstring)."""
    T = np.asarray(T, float)
    R, t = T[:3, :3], T[:3, 3]

    def pts(x):
        return np.atleast_2d(np.asarray(x, float)) @ R.T + t

    k = shape.kind
    if k == K.POINT:
        return dict(type="hull", V=pts(shape.position), r=0.0, kind=k)
    if k == K.SPHERE:
        return dict(type="hull", V=pts(shape.center), r=shape.radius, kind=k)
    if k == K.SEGMENT:
        return dict(type="hull", V=pts([shape.a, shape.b]), r=0.0, kind=k)
    if k == K.CAPSULE:
        return dict(type="hull", V=pts([shape.a, shape.b]), r=shape.radius, kind=k)
    if k in (K.RAY, K.LINE):
        lo = 0.0 if k == K.RAY else -np.inf
        return dict(type="linear", p=pts(shape.origin)[0], d=R @ shape.direction, lo=lo, hi=np.inf, r=0.0, kind=k)
    if k == K.TRIANGLE:
        return dict(type="hull", V=pts(shape.vertices), r=0.0, kind=k)
    if k in (K.TETRAHEDRON, K.POLYGON, K.POLYHEDRON):
        return dict(type="hull", V=pts(shape.vertices), r=0.0, kind=k)
    if k == K.BOX:
        corners = np.array(list(itertools.product((-1.0, 1.0), repeat=3))) * shape.half_extents + shape.center
        return dict(type="hull", V=pts(corners), r=0.0, kind=k)
    if k in (K.CYLINDER, K.CONE):
        half = 0.5 * shape.length
        if k == K.CYLINDER:
            ends = pts([[0, 0, -half], [0, 0, half]])
        else:  # apex at +z, base centre at -z
            ends = pts([[0, 0, half], [0, 0, -half]])
        return dict(type="round", p0=ends[0], p1=ends[1], r=shape.radius, kind=k)
    if k in (K.PLANE, K.HALFSPACE):
        n = R @ shape.normal
        d = float(n @ pts(shape.normal * shape.offset)[0])
        return dict(type="plane", n=n, d=d, half=k == K.HALFSPACE, kind=k)
    if k == K.TAPERED_CAPSULE:
        return dict(type="tapered", C=pts([shape.a, shape.b]), R=np.array([shape.radius_a, shape.radius_b]), kind=k)
    if k == K.ROUNDED and shape.core.kind in _HULL_CORES:  # a hull grown by a ball
        core = world(shape.core, T)
        return dict(core, r=core["r"] + shape.radius, kind=k)
    if k == K.MESH:
        return dict(type="mesh", V=pts(shape.vertices), F=np.asarray(shape.faces), kind=k)
    raise ValueError(k)


def random_rotation(rng):
    return NO.random_rotation(rng)


def pose(R=None, t=(0.0, 0.0, 0.0)):
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    T[:3, 3] = t
    return T


# ------------------------------------------------------------------------------------------------
# exact convex-hull distance by feature enumeration
_CACHE = {}


def _simplices(n):
    """Index triples (i, j, k) of every vertex subset of size 1..3 (repeated indices for the
    smaller ones) and index pairs of every subset of size 1..2."""
    if n not in _CACHE:
        tri = [(i, i, i) for i in range(n)]
        tri += [(i, j, j) for i, j in itertools.combinations(range(n), 2)]
        tri += list(itertools.combinations(range(n), 3))
        seg = [(i, i) for i in range(n)] if n == 1 else list(itertools.combinations(range(n), 2))
        _CACHE[n] = (np.array(tri, dtype=np.int64), np.array(seg, dtype=np.int64))
    return _CACHE[n]


def seg_seg_dist(P0, P1, Q0, Q1):
    """Distances between segments [P0, P1] and [Q0, Q1] (arrays (m, 3)), vectorised. Every
    candidate is a feasible parameter pair, the true optimum is among them (see docstring)."""
    d1 = P1 - P0
    d2 = Q1 - Q0
    r = P0 - Q0
    a = np.einsum("ij,ij->i", d1, d1)
    e = np.einsum("ij,ij->i", d2, d2)
    b = np.einsum("ij,ij->i", d1, d2)
    c = np.einsum("ij,ij->i", d1, r)
    f = np.einsum("ij,ij->i", d2, r)

    def val(s, t):
        w = r + s[:, None] * d1 - t[:, None] * d2
        return np.einsum("ij,ij->i", w, w)

    def best_t(s):
        return np.clip(np.where(e > 0, (b * s + f) / np.where(e > 0, e, 1.0), 0.0), 0.0, 1.0)

    def best_s(t):
        return np.clip(np.where(a > 0, (b * t - c) / np.where(a > 0, a, 1.0), 0.0), 0.0, 1.0)

    zero = np.zeros(len(a))
    one = np.ones(len(a))
    best = np.minimum.reduce([
        val(zero, best_t(zero)), val(one, best_t(one)), val(best_s(zero), zero), val(best_s(one), one)
    ])
    den = a * e - b * b
    ok = den > 0
    s = np.clip(np.where(ok, (b * f - c * e) / np.where(ok, den, 1.0), 0.0), 0.0, 1.0)
    t = np.clip(np.where(ok, (a * f - b * c) / np.where(ok, den, 1.0), 0.0), 0.0, 1.0)
    best = np.minimum(best, val(s, t))
    return np.sqrt(best)


def core_distance(P, Q):
    """Exact distance between conv(P) and conv(Q) (0 only if they meet in a vertex / edge
    configuration; use core_signed to detect a deep overlap)."""
    P = np.atleast_2d(np.asarray(P, float))
    Q = np.atleast_2d(np.asarray(Q, float))
    best = np.inf
    for X, Y in ((P, Q), (Q, P)):
        tri, _ = _simplices(len(Y))
        A, B, C = Y[tri[:, 0]], Y[tri[:, 1]], Y[tri[:, 2]]
        for x in X:
            best = min(best, float(NO.point_triangle_dist(x, A, B, C).min()))
    _, segp = _simplices(len(P))
    _, segq = _simplices(len(Q))
    ip = np.repeat(np.arange(len(segp)), len(segq))
    iq = np.tile(np.arange(len(segq)), len(segp))
    dist = seg_seg_dist(P[segp[ip, 0]], P[segp[ip, 1]], Q[segq[iq, 0]], Q[segq[iq, 1]])
    return min(best, float(dist.min()))


def minkowski_depth(P, Q):
    """Largest facet offset of conv(Q - P) at the origin (<= 0: the origin is inside and minus
    this is the penetration depth), or None when the difference is flat."""
    D = NO.minkowski_diff(P, Q)
    scale = np.abs(D).max()
    if scale == 0.0:
        return None
    try:
        hull = ConvexHull(D / scale)
    except QhullError:
        return None
    return float(hull.equations[:, 3].max() * scale)


def core_signed(P, Q):
    """Signed distance between conv(P) and conv(Q): distance, or minus the minimum translation
    distance when they overlap (0 for flat overlaps)."""
    P = np.atleast_2d(np.asarray(P, float))
    Q = np.atleast_2d(np.asarray(Q, float))
    m = minkowski_depth(P, Q)
    if m is not None and m <= 0.0:
        return m
    # separated, or a flat Minkowski difference: the distance (0 when a flat pair meets)
    return core_distance(P, Q)


# ------------------------------------------------------------------------------------------------
# linear elements
def _clip_linear_to(g, V):
    """The segment of a linear element on which its distance to conv(V) is attained."""
    p, d, lo, hi = g["p"], g["d"], g["lo"], g["hi"]
    proj = (np.atleast_2d(V) - p) @ d / (d @ d)
    t0, t1 = max(lo, proj.min()), min(hi, proj.max())
    if t0 > t1:  # the vertices project outside [lo, hi]: the nearest end of the interval
        t0 = t1 = lo if proj.max() < lo else hi
    return np.array([p + t0 * d, p + t1 * d])


def _linear_linear(g, h):
    """Core distance of two linear elements (hull segments / points or rays / lines)."""
    def params(x):
        if x["type"] == "linear":
            return x["p"], x["d"], x["lo"], x["hi"]
        V = x["V"]
        b = V[-1] if len(V) > 1 else V[0]
        return V[0], b - V[0], 0.0, 1.0
    pa, da, la, ha = params(g)
    pb, db, lb, hb = params(h)
    return NC.linear_linear_exact(pa, da, la, ha, pb, db, lb, hb)[0]


# ------------------------------------------------------------------------------------------------
# round solids
def _meridian(q, p0, p1):
    u = (p1 - p0) / np.linalg.norm(p1 - p0)
    rel = np.asarray(q, float) - p0
    z = rel @ u
    rho = np.linalg.norm(rel - z * u)
    return rho, z, np.linalg.norm(p1 - p0)


def _seg2(px, py, ax, ay, bx, by):
    dx, dy = bx - ax, by - ay
    t = min(max(((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy), 0.0), 1.0)
    return float(np.hypot(px - ax - t * dx, py - ay - t * dy))


def round_point_signed(g, c):
    """Signed distance from point c to the solid cylinder / cone g (minus the depth inside),
    exactly, in the meridian half-plane (rho >= 0, z along the axis from p0): the section of
    the cylinder is the rectangle [0, r] x [0, H], the cone's the triangle (0,0), (r,H), (0,H)
    (apex p0 at z = 0); outside, the distance to the section; inside, minus the distance to the
    boundary pieces that are not on the axis."""
    rho, z, H = _meridian(c, g["p0"], g["p1"])
    r = g["r"]
    if g["kind"] == K.CYLINDER:
        if 0.0 <= z <= H and rho <= r:
            return -min(r - rho, z, H - z)
        return float(np.hypot(max(rho - r, 0.0), max(-z, z - H, 0.0)))
    slant = _seg2(rho, z, 0.0, 0.0, r, H)
    if 0.0 <= z <= H and rho * H <= r * z:
        return -min(H - z, slant)
    base = _seg2(rho, z, 0.0, H, r, H)
    return min(slant, base)  # the axis edge is never nearer than these for rho >= 0


def tapered_point_signed(g, x):
    """Signed distance from x to the hull of two balls (C[0], R[0]), (C[1], R[1]): that hull is
    the union of the balls (c(t), r(t)) interpolated linearly for t in [0, 1], so the distance
    is min_t |x - c(t)| - r(t), a convex function of t (ternary search to round-off). Inside,
    the value is <= 0 (not the depth)."""
    x = np.asarray(x, float)
    C, R = g["C"], g["R"]
    return minimum_over_unit_interval(
        lambda t: np.linalg.norm(x - (C[0] + t * (C[1] - C[0]))) - (R[0] + t * (R[1] - R[0])))


def minimum_over_unit_interval(value):
    """min over t in [0, 1] of a convex function (ternary search to round-off, ends included)."""
    low, high = 0.0, 1.0
    for _ in range(200):
        m1, m2 = low + (high - low) / 3.0, high - (high - low) / 3.0
        if value(m1) <= value(m2):
            high = m2
        else:
            low = m1
    return min(value(0.0), value(1.0), value(0.5 * (low + high)))


# ------------------------------------------------------------------------------------------------
# support values
def ref_support(g, n):
    """(min, max) of n . x over g (+-inf when unbounded)."""
    n = np.asarray(n, float)
    t = g["type"]
    if t == "hull":
        vals = g["V"] @ n
        return vals.min() - g["r"] * np.linalg.norm(n), vals.max() + g["r"] * np.linalg.norm(n)
    if t == "linear":
        base, slope = g["p"] @ n, g["d"] @ n
        if slope == 0.0:
            return base, base
        ends = [base + slope * x if np.isfinite(x) else (np.inf if slope * x > 0 else -np.inf) for x in (g["lo"], g["hi"])]
        return min(ends), max(ends)
    if t == "round":
        u = g["p1"] - g["p0"]
        u = u / np.linalg.norm(u)
        rim = g["r"] * np.linalg.norm(n - (n @ u) * u)  # not sqrt(n.n - (n.u)^2): cancellation
        if g["kind"] == K.CYLINDER:
            vals = [g["p0"] @ n - rim, g["p0"] @ n + rim, g["p1"] @ n - rim, g["p1"] @ n + rim]
        else:
            vals = [g["p0"] @ n, g["p1"] @ n - rim, g["p1"] @ n + rim]
        return min(vals), max(vals)
    if t == "mesh":
        vals = g["V"][np.unique(g["F"])] @ n
        return vals.min(), vals.max()
    if t == "tapered":
        length = np.linalg.norm(n)
        return (g["C"] @ n - g["R"] * length).min(), (g["C"] @ n + g["R"] * length).max()
    raise ValueError(t)


def _vs_plane(g, pl):
    """Signed distance of g to the plane / half-space pl (g not a plane)."""
    lo, hi = ref_support(g, pl["n"])
    d = pl["d"]
    if lo > d:
        return lo - d
    if not pl["half"] and hi < d:
        return d - hi
    below, above = d - lo, hi - d
    if pl["half"]:
        return -below
    return -min(below, above)


def _plane_plane(a, b):
    cross = np.cross(a["n"], b["n"])
    if cross @ cross > 1e-24:
        return -np.inf
    same = a["n"] @ b["n"] > 0
    db = b["d"] if same else -b["d"]  # b's boundary as a.n . x = db
    gap = db - a["d"]
    if not a["half"] and not b["half"]:
        return abs(gap)
    if a["half"] and b["half"]:
        if same:
            return -np.inf
        return gap  # a: n.x <= da, b: n.x >= db
    plane, half = (a, b) if b["half"] else (b, a)
    # plane P (two-sided) vs half-space H: the plane's height above H's boundary
    height = plane["d"] * (plane["n"] @ half["n"]) - half["d"]
    return height


# ------------------------------------------------------------------------------------------------
# the reference signed distance
NAN_DEPTH = "nan"


def _hull_hull(a, b):
    return core_signed(a["V"], b["V"]) - a["r"] - b["r"]


def _linear_hull(lin, h):
    seg = _clip_linear_to(lin, h["V"])
    return core_signed(seg, h["V"]) - h["r"]


def ref_signed(a, b):
    """Reference signed distance of world shapes a, b (see ``world``): > 0 the distance, <= 0
    minus the penetration depth (the engine's convention; -inf when no translation separates)."""
    ta, tb = a["type"], b["type"]
    if ta == "plane" and tb == "plane":
        return _plane_plane(a, b)
    if tb == "plane":
        return _vs_plane(a, b)
    if ta == "plane":
        return ref_signed(b, a)
    if ta == "mesh" and tb == "mesh":
        raise ValueError("mesh-mesh")
    if tb == "mesh":
        return min(ref_signed(a, dict(type="hull", V=b["V"][f], r=0.0, kind=K.TRIANGLE)) for f in b["F"])
    if ta == "mesh":
        return ref_signed(b, a)
    if ta == "tapered" or tb == "tapered":
        tapered, other = (a, b) if ta == "tapered" else (b, a)
        assert other["type"] == "hull" and len(other["V"]) == 1
        return tapered_point_signed(tapered, other["V"][0]) - other["r"]
    if ta == "round" or tb == "round":
        rnd, other = (a, b) if ta == "round" else (b, a)
        assert other["type"] == "hull" and len(other["V"]) == 1
        return round_point_signed(rnd, other["V"][0]) - other["r"]
    if ta == "linear" and tb == "linear":
        return _linear_linear(a, b)
    if ta == "linear":
        if len(b["V"]) <= 2:  # point / segment core: exact rational linear-linear
            return _linear_linear(a, b) - b["r"]
        return _linear_hull(a, b)
    if tb == "linear":
        return ref_signed(b, a)
    return _hull_hull(a, b)


def ref_point_distance(g, x):
    """Distance from the point x to the set g (0 inside)."""
    x = np.asarray(x, float)
    t = g["type"]
    if t == "hull":  # subsets of <= 4 vertices (Caratheodory), exact
        return max(NC.hull_dist(x, g["V"]) - g["r"], 0.0)
    if t == "linear":
        return _linear_linear(g, dict(type="hull", V=x[None], r=0.0))
    if t == "round":
        return max(round_point_signed(g, x), 0.0)
    if t == "tapered":
        return max(tapered_point_signed(g, x), 0.0)
    if t == "plane":
        v = g["n"] @ x - g["d"]
        return max(v, 0.0) if g["half"] else abs(v)
    if t == "mesh":
        F = g["F"]
        V = g["V"]
        return float(NO.point_triangle_dist(x, V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]).min())
    raise ValueError(t)


def is_unbounded_linear(g):
    return g["type"] == "linear"

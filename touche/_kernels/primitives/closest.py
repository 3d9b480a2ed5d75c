"""Closest-point kernels (Ericson, Real-Time Collision Detection, chapter 5.1).

All inputs/outputs are float64 world-space arrays of shape (3,) unless stated otherwise.
Every function returns freshly allocated arrays (never a view of an input).

Robustness notes (see docs/KERNELS.md):
- Degenerate inputs (zero-length directions, zero-area triangles, flat tetrahedra, parallel
  lines) are detected by guarded branches; no epsilon is ever added to a denominator.
- Two thresholds exist, both on *dimensionless* squared sines, used only to pick a branch:
  PAR_EPS (directions treated as parallel) and DEG_EPS (triangle treated as a segment union).
  Both branches return valid points on the shapes, so a wrong pick near the threshold only
  costs O(sqrt(eps) * size) ~ 1e-12 relative accuracy.
"""

import math

import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche._kernels.base.vec import cross as _cross  # noqa: E402
from touche._kernels.base.vec import dot as _dot  # noqa: E402

# sin^2(angle between two directions) at or below which they are treated as parallel.
PAR_EPS = 1e-24
# sin^2(angle at vertex a) at or below which a triangle is treated as degenerate (its
# closest point is then the best of its three edges, which is exact for zero area).
DEG_EPS = 1e-24

_INF = np.inf


# --------------------------------------------------------------------------- helpers






@njit(cache=True, nogil=True)
def _sub(a, b):
    out = np.empty(3)
    out[0] = a[0] - b[0]
    out[1] = a[1] - b[1]
    out[2] = a[2] - b[2]
    return out


@njit(cache=True, nogil=True)
def _madd(o, t, d):
    """o + t * d (new array)."""
    out = np.empty(3)
    out[0] = o[0] + t * d[0]
    out[1] = o[1] + t * d[1]
    out[2] = o[2] + t * d[2]
    return out


@njit(cache=True, nogil=True)
def _sqdist(a, b):
    x = a[0] - b[0]
    y = a[1] - b[1]
    z = a[2] - b[2]
    return x * x + y * y + z * z


@njit(cache=True, nogil=True)
def _clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@njit(cache=True, nogil=True)
def _orient(a, b, c, d):
    """Signed volume (x6) of tetrahedron abcd: ((b-a) x (c-a)) . (d-a)."""
    return _dot(_cross(_sub(b, a), _sub(c, a)), _sub(d, a))


@njit(cache=True, nogil=True)
def _any_perp_unit(u):
    """A unit vector perpendicular to the unit vector u."""
    ax = abs(u[0])
    ay = abs(u[1])
    az = abs(u[2])
    e = np.zeros(3)
    if ax <= ay and ax <= az:
        e[0] = 1.0
    elif ay <= az:
        e[1] = 1.0
    else:
        e[2] = 1.0
    w = _cross(u, e)
    ln = math.sqrt(_dot(w, w))
    w[0] /= ln
    w[1] /= ln
    w[2] /= ln
    return w


@njit(cache=True, nogil=True)
def _closest_point_ball(p, c, r):
    """Closest point of the solid ball (c, r); used only for degenerate cylinder/cone axes."""
    v = _sub(p, c)
    ln = math.sqrt(_dot(v, v))
    if ln <= r:
        return p.copy()
    return _madd(c, r / ln, v)


# --------------------------------------------------------------------------- point queries


@njit(cache=True, nogil=True)
def closest_point_plane(p, n, d):
    """Ericson 5.1.1 (n unit, so no division: see erratum E L6014 on DistPointPlane).
    q = p - (n.p - d) n."""
    t = _dot(n, p) - d
    return _madd(p, -t, n)


@njit(cache=True, nogil=True)
def closest_point_linear(p, o, d, t_lo, t_hi):
    """Ericson 5.1.2 generalised to o + t d, t in [t_lo, t_hi] (bounds may be infinite).
    Steps: t = (p-o).d / d.d (t = 0 when d == 0); clamp t; q = o + t d."""
    dd = _dot(d, d)
    if dd > 0.0:
        t = _dot(_sub(p, o), d) / dd
    else:
        t = 0.0
    t = _clamp(t, t_lo, t_hi)
    return _madd(o, t, d), t


@njit(cache=True, nogil=True)
def closest_point_segment(p, a, b):
    """Ericson 5.1.2 on segment ab (a == b allowed). Returns (q, t), q = a + t (b - a);
    the endpoints are returned exactly when t is clamped."""
    d = _sub(b, a)
    q, t = closest_point_linear(p, a, d, 0.0, 1.0)
    if t <= 0.0:
        return a.copy(), t
    if t >= 1.0:
        return b.copy(), t
    return q, t


@njit(cache=True, nogil=True)
def closest_point_aabb(p, mn, mx):
    """Ericson 5.1.3: clamp each coordinate to [mn_i, mx_i]."""
    q = np.empty(3)
    for i in range(3):
        q[i] = _clamp(p[i], mn[i], mx[i])
    return q


@njit(cache=True, nogil=True)
def closest_point_obb(p, c, axes, half):
    """Ericson 5.1.4: q = c + sum_i clamp((p-c).u_i, -h_i, h_i) u_i, u_i = axes[:, i].
    A point inside the (solid) box is returned unchanged."""
    dx = p[0] - c[0]
    dy = p[1] - c[1]
    dz = p[2] - c[2]
    q = c.copy()
    inside = True
    for i in range(3):
        ux = axes[0, i]
        uy = axes[1, i]
        uz = axes[2, i]
        dist = dx * ux + dy * uy + dz * uz
        if dist > half[i]:
            dist = half[i]
            inside = False
        elif dist < -half[i]:
            dist = -half[i]
            inside = False
        q[0] += dist * ux
        q[1] += dist * uy
        q[2] += dist * uz
    if inside:
        return p.copy()
    return q


@njit(cache=True, nogil=True)
def closest_point_rectangle(p, c, u0, u1, e0, e1):
    """Ericson 5.1.4.2: OBB with zero extent along u0 x u1.
    q = c + clamp((p-c).u0, +-e0) u0 + clamp((p-c).u1, +-e1) u1."""
    d = _sub(p, c)
    s0 = _clamp(_dot(d, u0), -e0, e0)
    s1 = _clamp(_dot(d, u1), -e1, e1)
    q = _madd(c, s0, u0)
    return _madd(q, s1, u1)


@njit(cache=True, nogil=True)
def _closest_point_tri_edges(p, a, b, c):
    """Best of the closest points on the three edges (exact for zero-area triangles, and for
    any triangle when p projects outside it)."""
    q, _ = closest_point_segment(p, a, b)
    q, best = _nearer_on_segment(p, q, _sqdist(p, q), b, c)
    q, _ = _nearer_on_segment(p, q, best, c, a)
    return q


@njit(cache=True, nogil=True, inline="always")
def _nearer_on_segment(p, q, best, u, v):
    """(q, best) = the nearer to p of q (squared distance best) and segment uv's closest point
    (q kept on ties)."""
    q2, _ = closest_point_segment(p, u, v)
    d2 = _sqdist(p, q2)
    if d2 < best:
        return q2, d2
    return q, best


@njit(cache=True, nogil=True)
def _tri_edges_xyz(p0, p1, p2, a0, a1, a2, b0, b1, b2, c0, c1, c2):
    q = _closest_point_tri_edges(np.array((p0, p1, p2)), np.array((a0, a1, a2)), np.array((b0, b1, b2)),
                                 np.array((c0, c1, c2)))
    return q[0], q[1], q[2]


@njit(cache=True, nogil=True)
def closest_point_triangle_xyz(p0, p1, p2, a0, a1, a2, b0, b1, b2, c0, c1, c2):
    """closest_point_triangle on coordinates: the point as (x, y, z), with no array allocated
    (the tree searches call it for every triangle they reach; allocating the array version's
    temporaries made each call ~4x slower). The same arithmetic in the same order, so the same
    point to the last bit."""
    ab0 = b0 - a0
    ab1 = b1 - a1
    ab2 = b2 - a2
    ac0 = c0 - a0
    ac1 = c1 - a1
    ac2 = c2 - a2
    n0 = ab1 * ac2 - ab2 * ac1
    n1 = ab2 * ac0 - ab0 * ac2
    n2 = ab0 * ac1 - ab1 * ac0
    nn = n0 * n0 + n1 * n1 + n2 * n2
    if not (nn > DEG_EPS * (ab0 * ab0 + ab1 * ab1 + ab2 * ab2) * (ac0 * ac0 + ac1 * ac1 + ac2 * ac2)):
        return _tri_edges_xyz(p0, p1, p2, a0, a1, a2, b0, b1, b2, c0, c1, c2)
    ap0 = p0 - a0
    ap1 = p1 - a1
    ap2 = p2 - a2
    d1 = ab0 * ap0 + ab1 * ap1 + ab2 * ap2
    d2 = ac0 * ap0 + ac1 * ap1 + ac2 * ap2
    if d1 <= 0.0 and d2 <= 0.0:
        return a0, a1, a2  # vertex region A
    bp0 = p0 - b0
    bp1 = p1 - b1
    bp2 = p2 - b2
    d3 = ab0 * bp0 + ab1 * bp1 + ab2 * bp2
    d4 = ac0 * bp0 + ac1 * bp1 + ac2 * bp2
    if d3 >= 0.0 and d4 <= d3:
        return b0, b1, b2  # vertex region B
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        den = d1 - d3
        if den > 0.0:  # edge region AB
            t = d1 / den
            return a0 + t * ab0, a1 + t * ab1, a2 + t * ab2
        return _tri_edges_xyz(p0, p1, p2, a0, a1, a2, b0, b1, b2, c0, c1, c2)
    cp0 = p0 - c0
    cp1 = p1 - c1
    cp2 = p2 - c2
    d5 = ab0 * cp0 + ab1 * cp1 + ab2 * cp2
    d6 = ac0 * cp0 + ac1 * cp1 + ac2 * cp2
    if d6 >= 0.0 and d5 <= d6:
        return c0, c1, c2  # vertex region C
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        den = d2 - d6
        if den > 0.0:  # edge region AC
            t = d2 / den
            return a0 + t * ac0, a1 + t * ac1, a2 + t * ac2
        return _tri_edges_xyz(p0, p1, p2, a0, a1, a2, b0, b1, b2, c0, c1, c2)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0:
        num = d4 - d3
        den = num + (d5 - d6)
        if den > 0.0:  # edge region BC
            t = num / den
            return b0 + t * (c0 - b0), b1 + t * (c1 - b1), b2 + t * (c2 - b2)
        return _tri_edges_xyz(p0, p1, p2, a0, a1, a2, b0, b1, b2, c0, c1, c2)
    den = va + vb + vc
    if not (den > 0.0):
        return _tri_edges_xyz(p0, p1, p2, a0, a1, a2, b0, b1, b2, c0, c1, c2)
    v = vb / den
    w = vc / den
    return (a0 + v * ab0) + w * ac0, (a1 + v * ab1) + w * ac1, (a2 + v * ab2) + w * ac2  # face region


@njit(cache=True, nogil=True)
def closest_point_triangle(p, a, b, c):
    """Ericson 5.1.5 (Voronoi regions). Steps: vertex region A, B, edge AB, vertex C, edge AC,
    edge BC, else face (barycentric combination); closest_point_triangle_xyz does the arithmetic.
    Deviation (degenerate safety): a triangle whose angle at a has sin^2 <= DEG_EPS (incl.
    zero area, coincident vertices) is handled as the union of its three edges, and every
    division is guarded; an unexpected zero denominator falls back to the edge union."""
    x, y, z = closest_point_triangle_xyz(p[0], p[1], p[2], a[0], a[1], a[2], b[0], b[1], b[2], c[0], c[1], c[2])
    out = np.empty(3)
    out[0] = x
    out[1] = y
    out[2] = z
    return out


@njit(cache=True, nogil=True)
def closest_point_tetrahedron(p, a, b, c, d):
    """Ericson 5.1.6 (solid tetrahedron). Steps: if p is inside (the four sub-volumes with p
    replacing one vertex all have the sign of the full volume, zeros allowed) return p;
    otherwise the best closest point over the four faces.
    Deviation: Ericson tests only faces whose plane p is outside of; with a flat tetrahedron
    (volume 0) that test never fires and p would be returned. Here a flat tetrahedron is never
    'inside' and all four faces are examined (their union covers the flat hull)."""
    vol = _orient(a, b, c, d)
    if vol != 0.0:
        v0 = _orient(p, b, c, d)
        v1 = _orient(a, p, c, d)
        v2 = _orient(a, b, p, d)
        v3 = _orient(a, b, c, p)
        if vol > 0.0:
            inside = v0 >= 0.0 and v1 >= 0.0 and v2 >= 0.0 and v3 >= 0.0
        else:
            inside = v0 <= 0.0 and v1 <= 0.0 and v2 <= 0.0 and v3 <= 0.0
        if inside:
            return p.copy()
    q = closest_point_triangle(p, a, b, c)
    best = _sqdist(p, q)
    q2 = closest_point_triangle(p, a, c, d)
    d2 = _sqdist(p, q2)
    if d2 < best:
        best = d2
        q = q2
    q2 = closest_point_triangle(p, a, d, b)
    d2 = _sqdist(p, q2)
    if d2 < best:
        best = d2
        q = q2
    q2 = closest_point_triangle(p, b, d, c)
    d2 = _sqdist(p, q2)
    if d2 < best:
        q = q2
    return q


@njit(cache=True, nogil=True)
def closest_point_convex_polygon(p, verts, normal):
    """Solid convex planar polygon, verts (k,3) CCW about the unit normal (cf. Ericson 5.1.5
    first method). Steps: project p onto the plane; if the polygon has positive area and the
    projection is on the inner side of every edge, return it; else best point over the edges.
    Degenerate polygons (k < 3 or zero area) are handled as their edge union."""
    k = verts.shape[0]
    if k == 1:
        return verts[0].copy()
    v0 = verts[0]
    proj = _madd(p, -_dot(normal, _sub(p, v0)), normal)
    if k >= 3:
        area2 = 0.0
        for i in range(1, k - 1):
            area2 += _dot(_cross(_sub(verts[i], v0), _sub(verts[i + 1], v0)), normal)
        if area2 > 0.0:
            inside = True
            for i in range(k):
                vi = verts[i]
                vj = verts[(i + 1) % k]
                if _dot(_cross(_sub(vj, vi), _sub(proj, vi)), normal) < 0.0:
                    inside = False
                    break
            if inside:
                return proj
    q, _ = closest_point_segment(p, verts[0], verts[1])
    best = _sqdist(p, q)
    for i in range(1, k):
        q2, _ = closest_point_segment(p, verts[i], verts[(i + 1) % k])
        d2 = _sqdist(p, q2)
        if d2 < best:
            best = d2
            q = q2
    return q


@njit(cache=True, nogil=True)
def closest_point_convex_polyhedron(p, vertices, triangles, planes):
    """Ericson 5.1.7 brute force. Steps: if n.p - d <= 0 for every face plane, p is inside:
    return (p, True); else best closest point over all boundary triangles, (q, False)."""
    inside = True
    for f in range(planes.shape[0]):
        s = planes[f, 0] * p[0] + planes[f, 1] * p[1] + planes[f, 2] * p[2] - planes[f, 3]
        if s > 0.0:
            inside = False
            break
    if inside:
        return p.copy(), True
    best = _INF
    q = p.copy()
    for t in range(triangles.shape[0]):
        q2 = closest_point_triangle(
            p, vertices[triangles[t, 0]], vertices[triangles[t, 1]], vertices[triangles[t, 2]]
        )
        d2 = _sqdist(p, q2)
        if d2 < best:
            best = d2
            q = q2
    return q, False


@njit(cache=True, nogil=True)
def closest_point_cylinder(p, p0, p1, r):
    """Solid cylinder (axis p0->p1, radius r); OBB-style clamping in the axial frame.
    Steps: h = (p-p0).u clamped to [0, L]; radial vector rv = (p-p0) - h u scaled down to
    length r if longer; inside points are returned unchanged.
    p0 == p1 leaves the shape's orientation undefined: the ball (p0, r), which contains every
    disc of radius r centred at p0, is used instead (callers should reject such cylinders)."""
    ax = _sub(p1, p0)
    L2 = _dot(ax, ax)
    if L2 == 0.0:
        return _closest_point_ball(p, p0, r)
    L = math.sqrt(L2)
    u = np.empty(3)
    u[0] = ax[0] / L
    u[1] = ax[1] / L
    u[2] = ax[2] / L
    w = _sub(p, p0)
    h = _dot(w, u)
    rv = _madd(w, -h, u)
    rho = math.sqrt(_dot(rv, rv))
    hc = _clamp(h, 0.0, L)
    if rho <= r:
        if hc == h:
            return p.copy()
        q = _madd(p0, hc, u)
        q[0] += rv[0]
        q[1] += rv[1]
        q[2] += rv[2]
        return q
    q = _madd(p0, hc, u)
    return _madd(q, r / rho, rv)


@njit(cache=True, nogil=True)
def closest_point_cone(p, apex, base_center, r):
    """Solid right circular cone. By rotational symmetry the closest point lies in the
    half-plane through the axis and p: in coordinates (h = axial from apex, rho = radial) it is
    the closest point of the solid triangle (0,0) (H,0) (H,r) to (h, rho) (Ericson 5.1.5 in 2D).
    On the axis (rho == 0) the radial direction is undefined: any perpendicular unit vector is
    used (the 2D answer then has rho* = 0 anyway). apex == base_center: ball fallback as in
    closest_point_cylinder."""
    ax = _sub(base_center, apex)
    H2 = _dot(ax, ax)
    if H2 == 0.0:
        return _closest_point_ball(p, apex, r)
    H = math.sqrt(H2)
    u = np.empty(3)
    u[0] = ax[0] / H
    u[1] = ax[1] / H
    u[2] = ax[2] / H
    w = _sub(p, apex)
    h = _dot(w, u)
    rv = _madd(w, -h, u)
    rho = math.sqrt(_dot(rv, rv))
    if h >= 0.0 and h <= H and rho * H <= r * h:
        return p.copy()
    p2 = np.zeros(3)
    p2[0] = h
    p2[1] = rho
    t0 = np.zeros(3)
    t1 = np.zeros(3)
    t1[0] = H
    t2 = np.zeros(3)
    t2[0] = H
    t2[1] = r
    q2 = closest_point_triangle(p2, t0, t1, t2)
    if rho > 0.0:
        e = np.empty(3)
        e[0] = rv[0] / rho
        e[1] = rv[1] / rho
        e[2] = rv[2] / rho
    else:
        e = _any_perp_unit(u)
    q = _madd(apex, q2[0], u)
    return _madd(q, max(q2[1], 0.0), e)


# --------------------------------------------------------------------------- pair queries


@njit(cache=True, nogil=True)
def linear_linear_parameters(p1, d1, lo1, hi1, p2, d2, lo2, hi2):
    """The (s, t) of closest_points_linear_linear without building the points (no allocation:
    the inner loops of segment-box and polytope features call this)."""
    # scalar arithmetic throughout: this routine sits in every inner loop, and temporary
    # 3-vectors would cost a heap allocation each
    rx = p1[0] - p2[0]
    ry = p1[1] - p2[1]
    rz = p1[2] - p2[2]
    a = d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2]
    e = d2[0] * d2[0] + d2[1] * d2[1] + d2[2] * d2[2]
    c = d1[0] * rx + d1[1] * ry + d1[2] * rz
    f = d2[0] * rx + d2[1] * ry + d2[2] * rz
    if a == 0.0 and e == 0.0:
        s = _clamp(0.0, lo1, hi1)
        t = _clamp(0.0, lo2, hi2)
    elif a == 0.0:
        s = _clamp(0.0, lo1, hi1)
        t = _clamp(f / e, lo2, hi2)
    elif e == 0.0:
        t = _clamp(0.0, lo2, hi2)
        s = _clamp(-c / a, lo1, hi1)
    else:
        b = d1[0] * d2[0] + d1[1] * d2[1] + d1[2] * d2[2]
        nx = d1[1] * d2[2] - d1[2] * d2[1]
        ny = d1[2] * d2[0] - d1[0] * d2[2]
        nz = d1[0] * d2[1] - d1[1] * d2[0]
        nn = nx * nx + ny * ny + nz * nz
        if nn > PAR_EPS * a * e:
            # n . (d2 x r)
            wx = d2[1] * rz - d2[2] * ry
            wy = d2[2] * rx - d2[0] * rz
            wz = d2[0] * ry - d2[1] * rx
            s = _clamp((nx * wx + ny * wy + nz * wz) / nn, lo1, hi1)
        else:
            s = _clamp(0.0, lo1, hi1)  # parallel: any s works, pick 0 (clamped)
        t = (b * s + f) / e
        if t < lo2:
            t = lo2
            s = _clamp((t * b - c) / a, lo1, hi1)
        elif t > hi2:
            t = hi2
            s = _clamp((t * b - c) / a, lo1, hi1)
    return s, t


@njit(cache=True, nogil=True, inline="always")
def segment_pair_gap(a, da, b, db):
    """Parameters (s, t) of the closest points of the segments a + s da and b + t db (s, t in
    [0, 1]) and their squared distance."""
    s, t = linear_linear_parameters(a, da, 0.0, 1.0, b, db, 0.0, 1.0)
    d2 = 0.0
    for m in range(3):
        gap = (a[m] + s * da[m]) - (b[m] + t * db[m])
        d2 += gap * gap
    return s, t, d2


@njit(cache=True, nogil=True)
def closest_points_linear_linear(p1, d1, lo1, hi1, p2, d2, lo2, hi2):
    """Closest points of L1(s) = p1 + s d1, s in [lo1, hi1] and L2(t) = p2 + t d2,
    t in [lo2, hi2] (bounds may be +-inf). Ericson 5.1.9 generalised from [0,1] to any
    intervals. Steps: zero-length directions -> point/linear cases; otherwise s = unconstrained
    line optimum (s = 0 if parallel) clamped to [lo1, hi1]; t = optimum for that s; if t is
    outside [lo2, hi2], clamp it and recompute s for the clamped t.
    Deviation for accuracy: s* = (d1xd2).(d2xr)/|d1xd2|^2 (equal to Ericson's (bf-ce)/(ae-b^2)
    by Lagrange's identity, but without the cancellation in ae-b^2). Returns (s, t, c1, c2)."""
    s, t = linear_linear_parameters(p1, d1, lo1, hi1, p2, d2, lo2, hi2)
    return s, t, _madd(p1, s, d1), _madd(p2, t, d2)


@njit(cache=True, nogil=True)
def closest_points_line_line(p1, d1, p2, d2):
    """Ericson 5.1.8 (two infinite lines; parallel or zero directions: s = 0)."""
    return closest_points_linear_linear(p1, d1, -_INF, _INF, p2, d2, -_INF, _INF)


@njit(cache=True, nogil=True)
def closest_points_segment_segment(p1, q1, p2, q2):
    """Ericson 5.1.9 via closest_points_linear_linear on [0,1] x [0,1]; endpoints are returned
    exactly when a parameter is clamped to 1 (or 0). Returns (s, t, c1, c2)."""
    s, t, c1, c2 = closest_points_linear_linear(
        p1, _sub(q1, p1), 0.0, 1.0, p2, _sub(q2, p2), 0.0, 1.0
    )
    if s >= 1.0:
        c1 = q1.copy()
    elif s <= 0.0:
        c1 = p1.copy()
    if t >= 1.0:
        c2 = q2.copy()
    elif t <= 0.0:
        c2 = p2.copy()
    return s, t, c1, c2


@njit(cache=True, nogil=True)
def _segment_crosses_triangle(p, q, a, b, c):
    """Transversal crossing of segment pq through the closed triangle abc.
    Reported only when the triangle is not degenerate (same criterion as
    closest_point_triangle), p and q are strictly on opposite sides of its plane (signed
    volumes) and the line's triple products with the three edges have no opposite signs.
    Touching / in-plane / degenerate-triangle contacts are NOT reported: callers cover them with
    endpoint-triangle and edge-edge distances, which are 0 then.
    Returns (hit, x) with x = p + t (q - p), t = sp / (sp - sq) in (0, 1)."""
    ab = _sub(b, a)
    ac = _sub(c, a)
    n = _cross(ab, ac)
    if not (_dot(n, n) > DEG_EPS * _dot(ab, ab) * _dot(ac, ac)):
        return False, p
    sp = _dot(n, _sub(p, a))
    sq = _dot(n, _sub(q, a))
    if not ((sp > 0.0 and sq < 0.0) or (sp < 0.0 and sq > 0.0)):
        return False, p
    pq = _sub(q, p)
    pa = _sub(a, p)
    pb = _sub(b, p)
    pc = _sub(c, p)
    u = _dot(pq, _cross(pb, pc))
    v = _dot(pq, _cross(pc, pa))
    w = _dot(pq, _cross(pa, pb))
    if not ((u >= 0.0 and v >= 0.0 and w >= 0.0) or (u <= 0.0 and v <= 0.0 and w <= 0.0)):
        return False, p
    if u == 0.0 and v == 0.0 and w == 0.0:
        return False, p
    t = sp / (sp - sq)  # sp, sq strictly opposite: denominator nonzero, t in (0, 1)
    return True, _madd(p, t, pq)


@njit(cache=True, nogil=True)
def closest_points_segment_triangle(p, q, a, b, c):
    """Ericson 5.1.10. Steps: candidates p and q against the triangle, pq against the edges
    ab, bc, ca (exact when pq does not cross the triangle's interior), plus, if pq crosses the
    triangle (_segment_crosses_triangle), the pair (x, closest point of the triangle to x).
    If the crossing pair is the best, (x, x) is returned (c1 == c2: the crossing point).
    The crossing pair is a *candidate* rather than an early exit so that an ill-conditioned
    crossing (segment almost in the plane, x poorly located) can never make the answer worse
    than the exact enumeration. Returns (c1 on segment, c2 on triangle)."""
    hit, x = _segment_crosses_triangle(p, q, a, b, c)
    c1 = p.copy()
    c2 = closest_point_triangle(p, a, b, c)
    best = _sqdist(c1, c2)
    y = closest_point_triangle(q, a, b, c)
    d2 = _sqdist(q, y)
    if d2 < best:
        best = d2
        c1 = q.copy()
        c2 = y
    for k in range(3):
        if k == 0:
            e0 = a
            e1 = b
        elif k == 1:
            e0 = b
            e1 = c
        else:
            e0 = c
            e1 = a
        _, _, x1, x2 = closest_points_segment_segment(p, q, e0, e1)
        d2 = _sqdist(x1, x2)
        if d2 < best:
            best = d2
            c1 = x1
            c2 = x2
    if hit:
        y = closest_point_triangle(x, a, b, c)
        if _sqdist(x, y) <= best:
            return x, x.copy()
    if best == 0.0:
        c2 = c1.copy()
    return c1, c2


@njit(cache=True, nogil=True)
def closest_points_triangle_triangle(a0, a1, a2, b0, b1, b2):
    """Ericson 5.1.11. Steps: best of the 6 vertex-triangle and 9 edge-edge pairs (exact for
    disjoint triangles, and 0 for touching / coplanar contact); plus, for each edge of one
    triangle crossing the other transversally at x, the candidate pair (x, closest point of the
    other triangle to x); if such a crossing pair is the best, (x, x) is returned (c1 == c2).
    Why the crossing test completes the intersection test: T1 n T2 is convex; if the planes
    differ each of its extreme points lies on an edge of T1 or T2, so some edge meets the other
    triangle, either transversally (tested) or with an endpoint on / the edge in the other plane
    (then a vertex-triangle or edge-edge distance is 0). Coplanar overlap likewise always has a
    vertex inside the other triangle or two crossing edges. Returns (c1 on A, c2 on B)."""
    best = _INF
    c1 = a0.copy()
    c2 = b0.copy()
    for k in range(3):
        if k == 0:
            va = a0
            vb = b0
        elif k == 1:
            va = a1
            vb = b1
        else:
            va = a2
            vb = b2
        y = closest_point_triangle(va, b0, b1, b2)
        d2 = _sqdist(va, y)
        if d2 < best:
            best = d2
            c1 = va.copy()
            c2 = y
        y = closest_point_triangle(vb, a0, a1, a2)
        d2 = _sqdist(vb, y)
        if d2 < best:
            best = d2
            c1 = y
            c2 = vb.copy()
    for i in range(3):
        if i == 0:
            e0 = a0
            e1 = a1
        elif i == 1:
            e0 = a1
            e1 = a2
        else:
            e0 = a2
            e1 = a0
        for j in range(3):
            if j == 0:
                f0 = b0
                f1 = b1
            elif j == 1:
                f0 = b1
                f1 = b2
            else:
                f0 = b2
                f1 = b0
            _, _, x1, x2 = closest_points_segment_segment(e0, e1, f0, f1)
            d2 = _sqdist(x1, x2)
            if d2 < best:
                best = d2
                c1 = x1
                c2 = x2
    for k in range(6):
        if k < 3:
            if k == 0:
                e0 = a0
                e1 = a1
            elif k == 1:
                e0 = a1
                e1 = a2
            else:
                e0 = a2
                e1 = a0
            hit, x = _segment_crosses_triangle(e0, e1, b0, b1, b2)
            if hit:
                y = closest_point_triangle(x, b0, b1, b2)
        else:
            if k == 3:
                e0 = b0
                e1 = b1
            elif k == 4:
                e0 = b1
                e1 = b2
            else:
                e0 = b2
                e1 = b0
            hit, x = _segment_crosses_triangle(e0, e1, a0, a1, a2)
            if hit:
                y = closest_point_triangle(x, a0, a1, a2)
        if hit:
            if _sqdist(x, y) <= best:
                return x, x.copy()
    if best == 0.0:
        c2 = c1.copy()
    return c1, c2


@njit(cache=True, nogil=True)
def closest_points_segment_obb(a, b, c, axes, half):
    """Closest points of segment ab and a solid OBB (centre c, axes the columns of ``axes``,
    half-extents ``half``): segment_box_parameter in the box's coordinates, then the point of
    the segment there and the box's closest point to it. Returns (c1 on segment, c2 on box);
    when the segment meets the box, the midpoint of the part inside, twice."""
    d = _sub(b, a)
    w = _sub(a, c)
    start = (w[0] * axes[0, 0] + w[1] * axes[1, 0] + w[2] * axes[2, 0],
             w[0] * axes[0, 1] + w[1] * axes[1, 1] + w[2] * axes[2, 1],
             w[0] * axes[0, 2] + w[1] * axes[1, 2] + w[2] * axes[2, 2])
    step = (d[0] * axes[0, 0] + d[1] * axes[1, 0] + d[2] * axes[2, 0],
            d[0] * axes[0, 1] + d[1] * axes[1, 1] + d[2] * axes[2, 1],
            d[0] * axes[0, 2] + d[1] * axes[1, 2] + d[2] * axes[2, 2])
    t, meets = segment_box_parameter(start, step, half)
    x = _madd(a, t, d)
    if meets:
        return x, x.copy()
    return x, closest_point_obb(x, c, axes, half)


@njit(cache=True, nogil=True)
def segment_box_parameter(start, step, half):
    """``(t, meets)`` for the segment start + t step, t in [0, 1], against the box [-half, half]
    (start and step: 3-tuples in the box's coordinates). When they meet: the midpoint of the
    parameter interval inside the box (slab clipping, Ericson 5.3.3), meets = True. Otherwise the
    parameter of the segment's point closest to the box: the squared distance from start + t step
    to the box is f(t) = sum_i (excess of start_i + t step_i beyond [-h_i, h_i])^2 (Ericson
    5.1.3.1: the squared distance from a point to a box adds up per axis); f is convex and
    continuously differentiable, and f'(t) / 2 = sum_i step_i e_i(t) is piecewise linear and
    non-decreasing, with breaks where a coordinate crosses a slab face. The minimiser is 0 when
    f'(0) >= 0, 1 when f'(1) <= 0, else the root of f' on the bracket between the last break with
    f' <= 0 and the first with f' > 0 (no break lies inside it, so f' is linear there). Exact up
    to rounding, scalars only: it replaced an enumeration of both endpoints and the 12
    segment-edge pairs that took ~2x the time of a whole capsule-box query."""
    t0 = 0.0
    t1 = 1.0
    meets = True
    for i in range(3):
        pi = start[i]
        di = step[i]
        h = half[i]
        if di == 0.0:
            if pi < -h or pi > h:
                meets = False
                break
        else:
            ta = (-h - pi) / di
            tb = (h - pi) / di
            if ta > tb:
                tmp = ta
                ta = tb
                tb = tmp
            if ta > t0:
                t0 = ta
            if tb < t1:
                t1 = tb
            if t0 > t1:
                meets = False
                break
    if meets:
        return 0.5 * (t0 + t1), True
    low = 0.0
    slope_low = _segment_box_slope(start, step, half, 0.0)
    if slope_low >= 0.0:
        return 0.0, False
    high = 1.0
    slope_high = _segment_box_slope(start, step, half, 1.0)
    if slope_high <= 0.0:
        return 1.0, False
    for i in range(3):
        if step[i] == 0.0:
            continue
        for side in (-1.0, 1.0):
            crossing = (side * half[i] - start[i]) / step[i]
            if low < crossing < high:
                slope = _segment_box_slope(start, step, half, crossing)
                if slope <= 0.0:
                    low = crossing
                    slope_low = slope
                else:
                    high = crossing
                    slope_high = slope
    return min(max(low - slope_low * (high - low) / (slope_high - slope_low), low), high), False


@njit(cache=True, nogil=True, inline="always")
def _segment_box_slope(start, step, half, t):
    """Half the derivative in t of the squared distance from start + t step to the box
    [-half, half] (segment_box_parameter)."""
    slope = 0.0
    for i in range(3):
        x = start[i] + t * step[i]
        if x > half[i]:
            slope += step[i] * (x - half[i])
        elif x < -half[i]:
            slope += step[i] * (x + half[i])
    return slope

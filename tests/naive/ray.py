"""Slow, obviously-correct references for touche._kernels.primitives.ray.

Convex solids: each shape is given by a convex "signed" function f(x) (<= 0 exactly on the
closed solid, gradient = outward normal on each smooth piece).  Along a ray phi(t) =
f(o + t d) is convex, so:
  * origin inside (phi(0) <= 0): the exit is the single sign change on [0, U]  -> bisection;
  * otherwise: ternary search for min phi on the bounding-sphere chord [L, U]; miss iff the
    minimum is > 0; else the entry is the sign change on [L, t_min]            -> bisection.
Everything is vectorised over a batch of rays; bisection runs to float resolution.
The normal is the normalised central-difference gradient of f at the hit point.

Flat things (triangles, polygons, lines, planes) use exact rational arithmetic (fractions).
"""
from fractions import Fraction as F

import numpy as np


# --------------------------------------------------------------------------- signed functions


def f_sphere(c, r):
    c = np.asarray(c, float)
    return lambda x: np.linalg.norm(x - c, axis=-1) - r


def f_aabb(mn, mx):
    mn = np.asarray(mn, float)
    mx = np.asarray(mx, float)
    return lambda x: np.max(np.maximum(mn - x, x - mx), axis=-1)


def f_obb(c, axes, half):
    return lambda x: np.max(np.abs((x - c) @ axes) - half, axis=-1)


def _axial(x, p0, ax):
    v = x - p0
    h = v @ ax
    rho = np.linalg.norm(v - h[..., None] * ax, axis=-1)
    return h, rho


def f_cylinder(p0, p1, r):
    H = np.linalg.norm(p1 - p0)
    ax = (p1 - p0) / H

    def f(x):
        h, rho = _axial(x, p0, ax)
        return np.maximum(rho - r, np.maximum(-h, h - H))
    return f


def f_capsule(a, b, r):
    ab = b - a
    L2 = ab @ ab

    def f(x):
        if L2 == 0:
            return np.linalg.norm(x - a, axis=-1) - r
        s = np.clip(((x - a) @ ab) / L2, 0.0, 1.0)
        return np.linalg.norm(x - (a + s[..., None] * ab), axis=-1) - r
    return f


def f_cone(apex, base, r):
    H = np.linalg.norm(base - apex)
    ax = (base - apex) / H
    L = np.hypot(H, r)

    def f(x):
        h, rho = _axial(x, apex, ax)
        return np.maximum((rho * H - r * h) / L, h - H)
    return f


def f_planes(planes):
    return lambda x: np.max(x @ planes[:, :3].T - planes[:, 3], axis=-1)


def tet_planes_naive(a, b, c, d):
    """Outward unit planes of a tetrahedron (independent numpy code)."""
    V = np.array([a, b, c, d], float)
    rows = []
    for k in range(4):
        i = [j for j in range(4) if j != k]
        n = np.cross(V[i[1]] - V[i[0]], V[i[2]] - V[i[0]])
        n = n / np.linalg.norm(n)
        off = n @ V[i[0]]
        if n @ V[k] > off:
            n, off = -n, -off
        rows.append([*n, off])
    return np.array(rows)


# --------------------------------------------------------------------------- convex solids


def ref_convex(f, center, radius, O, D, TMAX, solid, iters=200):
    """Batch reference for closed convex solids. center/radius: any sphere containing the
    solid. Returns hit (N,), t (N,), normal (N,3) under the touche ray contract."""
    O = np.asarray(O, float)
    D = np.asarray(D, float)
    N = len(O)
    R = 1.5 * radius
    m = O - center
    b = np.sum(m * D, axis=1)
    cc = np.sum(m * m, axis=1) - R * R
    disc = b * b - cc
    ok = disc >= 0
    sq = np.sqrt(np.where(ok, disc, 0.0))
    L = np.maximum(0.0, -b - sq)
    U = -b + sq
    ok &= U > 0

    def phi(t):
        return f(O + t[:, None] * D)

    hit = np.zeros(N, bool)
    t_out = np.full(N, np.inf)
    nrm = np.zeros((N, 3))
    inside = f(O) <= 0
    # --- inside: exit by bisection on [0, U]
    lo = np.zeros(N)
    hi = np.where(ok, U, 1.0)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        pin = phi(mid) <= 0
        lo = np.where(pin, mid, lo)
        hi = np.where(pin, hi, mid)
    t_exit = lo
    # --- outside: ternary search for the minimum on [L, U]
    a = np.where(ok, L, 0.0)
    z = np.where(ok, U, 1.0)
    best_t = a.copy()
    best_v = phi(a)
    for _ in range(iters):
        m1 = a + (z - a) / 3
        m2 = z - (z - a) / 3
        v1 = phi(m1)
        v2 = phi(m2)
        for tt, vv in ((m1, v1), (m2, v2)):
            better = vv < best_v
            best_t = np.where(better, tt, best_t)
            best_v = np.where(better, vv, best_v)
        left = v1 <= v2
        z = np.where(left, m2, z)
        a = np.where(left, a, m1)
    found = ok & (best_v <= 0)
    lo = np.where(ok, L, 0.0)
    hi = best_t.copy()
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        pin = phi(mid) <= 0
        hi = np.where(pin, mid, hi)
        lo = np.where(pin, lo, mid)
    t_entry = hi
    for i in range(N):
        if inside[i]:
            if solid:
                hit[i] = True
                t_out[i] = 0.0
                continue
            t = t_exit[i]
        elif found[i]:
            t = t_entry[i]
        else:
            continue
        if t <= TMAX[i]:
            hit[i] = True
            t_out[i] = t
            nrm[i] = grad_normal(f, O[i] + t * D[i], radius)
    return hit, t_out, nrm


def grad_normal(f, p, scale):
    h = 1e-7 * scale
    g = np.zeros(3)
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        g[k] = (f((p + e)[None])[0] - f((p - e)[None])[0]) / (2 * h)
    n = np.linalg.norm(g)
    return g / n if n > 0 else g


# --------------------------------------------------------------------------- exact flat references


def _fr(v):
    return [F(float(x)) for x in v]


def _sub(a, b):
    return [x - y for x, y in zip(a, b)]


def _dotf(a, b):
    return sum(x * y for x, y in zip(a, b))


def _crossf(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _det3(c0, c1, c2):
    return _dotf(c0, _crossf(c1, c2))


def exact_line_tri(p, dirv, a, b, c):
    """Solve p + t dirv = a + v (b-a) + w (c-a) exactly. Returns None if singular,
    else (t, u, v, w) as Fractions."""
    p, dirv, a, b, c = map(_fr, (p, dirv, a, b, c))
    e1 = _sub(b, a)
    e2 = _sub(c, a)
    rhs = _sub(a, p)
    c0 = dirv
    c1 = [-x for x in e1]
    c2 = [-x for x in e2]
    det = _det3(c0, c1, c2)
    if det == 0:
        return None
    t = _det3(rhs, c1, c2) / det
    v = _det3(c0, rhs, c2) / det
    w = _det3(c0, c1, rhs) / det
    return t, 1 - v - w, v, w


def ref_triangle(o, d, t_max, a, b, c):
    """-> (hit, t, u, v, w, normal facing against d)."""
    s = exact_line_tri(o, d, a, b, c)
    if s is None:
        return False, np.inf, 0, 0, 0, np.zeros(3)
    t, u, v, w = s
    if t < 0 or (t_max != np.inf and t > F(float(t_max))) or u < 0 or v < 0 or w < 0:
        return False, np.inf, 0, 0, 0, np.zeros(3)
    n = np.cross(np.asarray(b) - a, np.asarray(c) - a)
    n = n / np.linalg.norm(n)
    if n @ d > 0:
        n = -n
    return True, float(t), float(u), float(v), float(w), n


def ref_line_triangle(p, q, a, b, c):
    # direction q - p exactly in fractions
    P, Q = _fr(p), _fr(q)
    dirv = _sub(Q, P)
    A, B, C = map(_fr, (a, b, c))
    e1, e2 = _sub(B, A), _sub(C, A)
    c1 = [-x for x in e1]
    c2 = [-x for x in e2]
    det = _det3(dirv, c1, c2)
    if det == 0:
        return False, 0.0, 0.0, 0.0
    rhs = _sub(A, P)
    v = _det3(dirv, rhs, c2) / det
    w = _det3(dirv, c1, rhs) / det
    u = 1 - v - w
    if u < 0 or v < 0 or w < 0:
        return False, 0.0, 0.0, 0.0
    return True, float(u), float(v), float(w)


def ref_line_quad(p, q, a, b, c, d):
    for tri in ((a, b, c), (a, c, d)):
        h, u, v, w = ref_line_triangle(p, q, *tri)
        if h:
            return True, u * np.asarray(tri[0]) + v * np.asarray(tri[1]) + w * np.asarray(tri[2])
    return False, np.zeros(3)


def ref_polygon(o, d, t_max, verts, normal):
    """Exact: plane normal.x = normal.verts[0]; inside iff every edge cross product
    ((v_{i+1}-v_i) x (p - v_i)).normal has the same sign (not all zero)."""
    O, Dd, Nn = _fr(o), _fr(d), _fr(normal)
    V = [_fr(v) for v in verts]
    den = _dotf(Nn, Dd)
    if den == 0:
        return False, np.inf, np.zeros(3)
    t = _dotf(Nn, _sub(V[0], O)) / den
    if t < 0 or (t_max != np.inf and t > F(float(t_max))):
        return False, np.inf, np.zeros(3)
    P = [O[k] + t * Dd[k] for k in range(3)]
    s = []
    k = len(V)
    for i in range(k):
        s.append(_dotf(_crossf(_sub(V[(i + 1) % k], V[i]), _sub(P, V[i])), Nn))
    if not (all(x >= 0 for x in s) or all(x <= 0 for x in s)) or all(x == 0 for x in s):
        return False, np.inf, np.zeros(3)
    n = np.asarray(normal, float)
    return True, float(t), (n if n @ d < 0 else -n)


def ref_plane(o, d, t_max, n, dp):
    N, O, Dd = _fr(n), _fr(o), _fr(d)
    den = _dotf(N, Dd)
    dist = _dotf(N, O) - F(float(dp))
    if den == 0:
        return (True, 0.0, -np.asarray(n)) if dist == 0 else (False, np.inf, np.zeros(3))
    t = -dist / den
    if t < 0 or (t_max != np.inf and t > F(float(t_max))):
        return False, np.inf, np.zeros(3)
    return True, float(t), (np.asarray(n) if den < 0 else -np.asarray(n))


def ref_halfspace(o, d, t_max, n, dp, solid):
    N, O, Dd = _fr(n), _fr(o), _fr(d)
    den = _dotf(N, Dd)
    dist = _dotf(N, O) - F(float(dp))
    if dist <= 0:
        if solid:
            return True, 0.0, np.zeros(3)
        if den <= 0:
            return False, np.inf, np.zeros(3)  # never leaves
        t = -dist / den
    else:
        if den >= 0:
            return False, np.inf, np.zeros(3)
        t = -dist / den
    if t_max != np.inf and t > F(float(t_max)):
        return False, np.inf, np.zeros(3)
    return True, float(t), np.asarray(n, float)


def ref_segment_plane(a, b, n, dp):
    A, B, N = _fr(a), _fr(b), _fr(n)
    den = _dotf(N, _sub(B, A))
    num = F(float(dp)) - _dotf(N, A)
    if den == 0:
        return (True, 0.0, np.asarray(a, float)) if num == 0 else (False, np.inf, np.zeros(3))
    t = num / den
    if t < 0 or t > 1:
        return False, np.inf, np.zeros(3)
    q = [float(A[k] + t * (B[k] - A[k])) for k in range(3)]
    return True, float(t), np.array(q)


def ref_triangles_first(o, d, t_max, V, Fc):
    best = None
    for i, (x, y, z) in enumerate(Fc):
        h, t, *_ = ref_triangle(o, d, t_max, V[x], V[y], V[z])
        if h and (best is None or t < best[0]):
            best = (t, i)
    if best is None:
        return False, np.inf, -1, np.zeros(3)
    x, y, z = Fc[best[1]]
    n = np.cross(V[y] - V[x], V[z] - V[x])
    return True, best[0], best[1], n / np.linalg.norm(n)

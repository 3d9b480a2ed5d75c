"""Ray / line / segment intersection kernels (Ericson 5.3).

Uniform ray contract (every ``ray_<shape>``)::

    ray_<shape>(o, d, t_max, <shape params>, solid) -> (hit: bool, t: float, normal: (3,) float64)

* ``o`` origin, ``d`` direction of UNIT length (the caller normalises), ``t_max >= 0``
  (may be ``np.inf``); ``t`` is therefore a distance.
* ``hit`` iff the ray meets the shape at some ``t`` in the CLOSED range ``[0, t_max]``;
  ``t`` is the first such value.  A cut-off exactly at the surface counts as a hit
  (the computed ``t`` is compared with ``t <= t_max``).
* ``normal``: unit outward surface normal at the hit.  For two-sided flat things (plane,
  triangle, convex polygon) it is the normal facing the ray origin side, i.e. opposite
  to ``d``.
* Solids are closed sets.  The line meets a convex solid in an interval ``[t_in, t_out]``.
  If the origin lies in the closed solid (``t_in <= 0 <= t_out``, boundary included):
  ``solid=True`` -> ``(True, 0.0, zeros(3))``; ``solid=False`` -> the exit point ``t_out``
  (end of the chord containing the origin) with the outward normal there.  So an origin
  on the surface moving outward gives ``t = 0``; moving inward gives the far side.
* No hit: ``(False, np.inf, zeros(3))``.

Every kernel is allocation-light, never divides by a quantity that can be zero without a
guarded branch, and never adds an epsilon to a denominator.
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche._kernels.base.vec import cross as _cross  # noqa: E402
from touche._kernels.base.vec import dot as _dot  # noqa: E402

INF = np.inf


# --------------------------------------------------------------------------- helpers


@njit(cache=True, nogil=True)
def _triple(a, b, c):
    """Scalar triple product [a b c] = a . (b x c)."""
    return (a[0] * (b[1] * c[2] - b[2] * c[1])
            + a[1] * (b[2] * c[0] - b[0] * c[2])
            + a[2] * (b[0] * c[1] - b[1] * c[0]))


@njit(cache=True, nogil=True)
def _unit(v):
    """v / |v|, scaled first against under/overflow; zeros(3) for a zero (or non-finite) v."""
    out = np.zeros(3)
    m = max(abs(v[0]), max(abs(v[1]), abs(v[2])))
    if not (m > 0.0) or m == INF:
        return out
    x0 = v[0] / m
    x1 = v[1] / m
    x2 = v[2] / m
    n = np.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
    out[0] = x0 / n
    out[1] = x1 / n
    out[2] = x2 / n
    return out


@njit(cache=True, nogil=True)
def _norm(v):
    m = max(abs(v[0]), max(abs(v[1]), abs(v[2])))
    if not (m > 0.0) or m == INF:
        return m
    x0 = v[0] / m
    x1 = v[1] / m
    x2 = v[2] / m
    return m * np.sqrt(x0 * x0 + x1 * x1 + x2 * x2)


@njit(cache=True, nogil=True)
def _choose(t_in, t_out, t_max, solid):
    """Decide the answer from the chord [t_in, t_out] of the line inside a closed convex solid.

    Returns (code, t): code 0 = miss, 1 = origin inside & solid, 2 = entry hit at t,
    3 = exit hit at t (origin inside, solid=False)."""
    if not (t_in <= t_out):
        return 0, INF
    if t_out < 0.0:
        return 0, INF
    if t_in <= 0.0:
        if solid:
            return 1, 0.0
        if t_out <= t_max and t_out < INF:
            return 3, t_out + 0.0
        return 0, INF
    if t_in <= t_max:
        return 2, t_in
    return 0, INF


@njit(cache=True, nogil=True)
def _quad_roots(A, B, C):
    """Real roots r1 <= r2 of A t^2 + 2 B t + C (A != 0), numerically stable form.
    Returns (ok, r1, r2); ok False when the discriminant is negative."""
    disc = B * B - A * C
    if disc < 0.0:
        return False, 0.0, 0.0
    s = np.sqrt(disc)
    if B >= 0.0:
        q = -(B + s)
    else:
        q = -(B - s)
    if q == 0.0:
        # B == 0 and disc == 0 -> A*C == 0 -> C == 0: double root at 0
        return True, 0.0, 0.0
    x1 = q / A
    x2 = C / q
    if x1 <= x2:
        return True, x1, x2
    return True, x2, x1


# --------------------------------------------------------------------------- plane family


@njit(cache=True, nogil=True)
def segment_plane(a, b, n, dp):
    """Ericson 5.3.1: segment ab against plane n.x = dp -> (hit, t, q), q = a + t (b - a).

    Steps: t = (dp - n.a) / n.(b - a); hit iff 0 <= t <= 1.
    Parallel segment (n.(b-a) == 0, includes a == b): hit iff a lies on the plane, then
    (True, 0.0, a) (the whole segment lies in the plane).  No hit: (False, inf, zeros)."""
    ab0 = b[0] - a[0]
    ab1 = b[1] - a[1]
    ab2 = b[2] - a[2]
    denom = n[0] * ab0 + n[1] * ab1 + n[2] * ab2
    num = dp - _dot(n, a)
    q = np.zeros(3)
    if denom == 0.0:
        if num == 0.0:
            q[0] = a[0]
            q[1] = a[1]
            q[2] = a[2]
            return True, 0.0, q
        return False, INF, q
    t = num / denom
    if t >= 0.0 and t <= 1.0:
        t = t + 0.0  # no -0.0
        q[0] = a[0] + t * ab0
        q[1] = a[1] + t * ab1
        q[2] = a[2] + t * ab2
        return True, t, q
    return False, INF, q


@njit(cache=True, nogil=True)
def ray_plane(o, d, t_max, n, dp, solid):
    """Ray against the two-sided plane n.x = dp (Ericson 5.3.1 with a ray); solid ignored.

    Normal = n if n.d < 0 else -n (faces the origin side).  A ray lying in the plane hits at
    t = 0 (normal -n, since n.d == 0)."""
    denom = _dot(n, d)
    dist = _dot(n, o) - dp
    nrm = np.zeros(3)
    if denom == 0.0:
        if dist == 0.0:
            for i in range(3):
                nrm[i] = -n[i]
            return True, 0.0, nrm
        return False, INF, nrm
    t = -dist / denom
    if t >= 0.0 and t <= t_max:
        s = 1.0 if denom < 0.0 else -1.0
        for i in range(3):
            nrm[i] = s * n[i]
        return True, t + 0.0, nrm
    return False, INF, nrm


@njit(cache=True, nogil=True)
def ray_halfspace(o, d, t_max, n, dp, solid):
    """Ray against the closed halfspace n.x <= dp.  Outward normal is always n.
    Steps: chord of the line = [t, inf) when entering (n.d < 0), (-inf, t] when exiting,
    everything / nothing when parallel; then the uniform decision (see module doc)."""
    denom = _dot(n, d)
    dist = _dot(n, o) - dp
    t_in = -INF
    t_out = INF
    if denom == 0.0:
        if dist > 0.0:
            return False, INF, np.zeros(3)
    else:
        t = -dist / denom
        if denom < 0.0:
            t_in = t
        else:
            t_out = t
    code, t = _choose(t_in, t_out, t_max, solid)
    if code == 0:
        return False, INF, np.zeros(3)
    if code == 1:
        return True, 0.0, np.zeros(3)
    nrm = np.empty(3)
    for i in range(3):
        nrm[i] = n[i]
    return True, t, nrm


# --------------------------------------------------------------------------- sphere


@njit(cache=True, nogil=True)
def _sphere_interval(o, d, c, r):
    """Chord [t1, t2] of the line o + t d (unit d) inside the closed ball (c, r).

    Ericson 5.3.2, reformulated for stability: work relative to the closest approach
    pc = m - (m.d) d (m = o - c), h^2 = r^2 - |pc|^2 = (r-|pc|)(r+|pc|), roots -b -/+ h;
    the root with cancellation is recovered from the product t1 t2 = |m|^2 - r^2.
    Returns (ok, t1, t2, h, pc)."""
    m = np.empty(3)
    for i in range(3):
        m[i] = o[i] - c[i]
    b = _dot(m, d)
    pc = np.empty(3)
    for i in range(3):
        pc[i] = m[i] - b * d[i]
    lm = _norm(m)
    cc = (lm - r) * (lm + r)  # |m|^2 - r^2, sign decides inside/outside
    pcl = _norm(pc)
    h2 = (r - pcl) * (r + pcl)
    if h2 < 0.0:
        if cc > 0.0:
            return False, INF, -INF, 0.0, pc
        h2 = 0.0  # origin in the closed ball: rounding only
    h = np.sqrt(h2)
    if b > 0.0:
        t1 = -b - h
        t2 = cc / t1  # t1 < 0 here
    elif b < 0.0:
        t2 = -b + h
        t1 = cc / t2  # t2 > 0 here
    else:
        t1 = -h
        t2 = h
    if t1 > t2:  # rounding at tangency
        tm = 0.5 * (t1 + t2)
        t1 = tm
        t2 = tm
    return True, t1, t2, h, pc


@njit(cache=True, nogil=True)
def ray_sphere(o, d, t_max, c, r, solid):
    """Ericson 5.3.2 ray vs closed sphere (stable variant, see _sphere_interval).
    Normal at the hit point x: (x - c)/|x - c| evaluated as pc -/+ h d (no far-origin
    cancellation); a zero-radius sphere hit returns -d as its normal."""
    ok, t1, t2, h, pc = _sphere_interval(o, d, c, r)
    if not ok:
        return False, INF, np.zeros(3)
    code, t = _choose(t1, t2, t_max, solid)
    if code == 0:
        return False, INF, np.zeros(3)
    if code == 1:
        return True, 0.0, np.zeros(3)
    s = -h if code == 2 else h
    v = np.empty(3)
    for i in range(3):
        v[i] = pc[i] + s * d[i]
    nrm = _unit(v)
    if nrm[0] == 0.0 and nrm[1] == 0.0 and nrm[2] == 0.0:
        for i in range(3):
            nrm[i] = -d[i]
    return True, t, nrm


@njit(cache=True, nogil=True)
def ray_ellipsoid(o, d, t_max, points, solid):
    """Ray vs the solid ellipsoid ``points[0] + sum_i u_i points[i]``, |u| <= 1 (rows 1..3 are the
    orthogonal semi-axis vectors). The ray maps to u-space (a unit ball) where the stable sphere
    chord applies; ray parameters are the same in both spaces once the mapped direction is
    normalised (s = t * |d_u|). Normal: the gradient sum_i points[i] u_i / |points[i]|^2."""
    o_u = np.empty(3)
    d_u = np.empty(3)
    for i in range(3):
        axis = points[i + 1]
        squared = _dot(axis, axis)
        o_u[i] = (axis[0] * (o[0] - points[0, 0]) + axis[1] * (o[1] - points[0, 1]) + axis[2] * (o[2] - points[0, 2])) / squared
        d_u[i] = _dot(axis, d) / squared
    length = _norm(d_u)
    for i in range(3):
        d_u[i] /= length
    ok, s1, s2, _, _ = _sphere_interval(o_u, d_u, np.zeros(3), 1.0)
    if not ok:
        return False, INF, np.zeros(3)
    code, t = _choose(s1 / length, s2 / length, t_max, solid)
    if code == 0:
        return False, INF, np.zeros(3)
    if code == 1:
        return True, 0.0, np.zeros(3)
    gradient = np.zeros(3)
    for i in range(3):
        axis = points[i + 1]
        u_i = o_u[i] + (t * length) * d_u[i]
        gradient += (u_i / _dot(axis, axis)) * axis
    return True, t, _unit(gradient)


# --------------------------------------------------------------------------- boxes


@njit(cache=True, nogil=True)
def _slabs(o, d, mn, mx):
    """Ericson 5.3.3 slab test over the whole line. Returns (ok, t_in, f_in, t_out, f_out);
    face code f = 2*axis + (0 for the min face, 1 for the max face).
    A zero direction component is handled without division (inside the slab: no constraint;
    outside: miss).  Uses (mn - o)/d, never (mn - o)*(1/d), so no 0*inf = NaN."""
    t_in = -INF
    t_out = INF
    f_in = -1
    f_out = -1
    for i in range(3):
        if d[i] == 0.0:
            if o[i] < mn[i] or o[i] > mx[i]:
                return False, INF, -1, -INF, -1
        else:
            t1 = (mn[i] - o[i]) / d[i]
            t2 = (mx[i] - o[i]) / d[i]
            f1 = 2 * i
            f2 = 2 * i + 1
            if t1 > t2:
                tmp = t1
                t1 = t2
                t2 = tmp
                f1 = 2 * i + 1
                f2 = 2 * i
            if t1 > t_in:
                t_in = t1
                f_in = f1
            if t2 < t_out:  # erratum E L8407: the book prints `t2 > tmax`
                t_out = t2
                f_out = f2
            if t_in > t_out:
                return False, INF, -1, -INF, -1
    return True, t_in, f_in, t_out, f_out


@njit(cache=True, nogil=True)
def ray_aabb(o, d, t_max, mn, mx, solid):
    """Ericson 5.3.3 ray vs closed AABB: slab chord then the uniform decision.
    Normal: -e_i for the min face of axis i, +e_i for the max face."""
    ok, t_in, f_in, t_out, f_out = _slabs(o, d, mn, mx)
    if not ok:
        return False, INF, np.zeros(3)
    code, t = _choose(t_in, t_out, t_max, solid)
    nrm = np.zeros(3)
    if code == 0:
        return False, INF, nrm
    if code == 1:
        return True, 0.0, nrm
    f = f_in if code == 2 else f_out
    nrm[f // 2] = 1.0 if (f % 2) == 1 else -1.0
    return True, t, nrm


@njit(cache=True, nogil=True)
def ray_obb(o, d, t_max, c, axes, half, solid):
    """Ray vs closed OBB: express o, d in box space (axes columns are the unit axes),
    run the slab test against [-half, half], rotate the face normal back."""
    lo = np.empty(3)
    ld = np.empty(3)
    mn = np.empty(3)
    for j in range(3):
        so = 0.0
        sd = 0.0
        for i in range(3):
            so += axes[i, j] * (o[i] - c[i])
            sd += axes[i, j] * d[i]
        lo[j] = so
        ld[j] = sd
        mn[j] = -half[j]
    ok, t_in, f_in, t_out, f_out = _slabs(lo, ld, mn, half)
    if not ok:
        return False, INF, np.zeros(3)
    code, t = _choose(t_in, t_out, t_max, solid)
    if code == 0:
        return False, INF, np.zeros(3)
    if code == 1:
        return True, 0.0, np.zeros(3)
    f = f_in if code == 2 else f_out
    s = 1.0 if (f % 2) == 1 else -1.0
    j = f // 2
    v = np.empty(3)
    for i in range(3):
        v[i] = s * axes[i, j]
    return True, t, _unit(v)


# --------------------------------------------------------------------------- triangles / polygons


@njit(cache=True, nogil=True)
def _ray_tri(o, d, t_max, a, b, c):
    """Ericson 5.3.6 (Moller-Trumbore style), made two-sided. Returns (hit, t, u, v, w, dn)
    with dn = d . n, n = (b-a) x (c-a).
    Steps: n = ab x ac; denom = -d.n (qp.n with qp = -d); denom == 0 -> parallel ray or
    zero-area triangle -> no hit (a ray lying in the triangle's plane is reported as no hit);
    flip signs if denom < 0 (back face); t = ap.n, e = ap x d, v = ac.e, w = -ab.e;
    accept iff t >= 0, v >= 0, w >= 0, v + w <= denom, then divide by denom."""
    ab = np.empty(3)
    ac = np.empty(3)
    ap = np.empty(3)
    for i in range(3):
        ab[i] = b[i] - a[i]
        ac[i] = c[i] - a[i]
        ap[i] = o[i] - a[i]
    n = _cross(ab, ac)
    dn = _dot(d, n)
    denom = -dn
    if denom == 0.0:
        return False, INF, 0.0, 0.0, 0.0, dn
    tn = _dot(ap, n)
    e = _cross(ap, d)
    vn = _dot(ac, e)
    wn = -_dot(ab, e)
    if denom < 0.0:
        denom = -denom
        tn = -tn
        vn = -vn
        wn = -wn
    if tn < 0.0 or vn < 0.0 or wn < 0.0 or vn + wn > denom:
        return False, INF, 0.0, 0.0, 0.0, dn
    t = tn / denom
    if not (t <= t_max) or t == INF:
        return False, INF, 0.0, 0.0, 0.0, dn
    v = vn / denom
    w = wn / denom
    u = (denom - vn - wn) / denom
    return True, t + 0.0, u, v, w, dn


@njit(cache=True, nogil=True)
def ray_triangle_bary(o, d, t_max, a, b, c):
    """Two-sided ray vs triangle (Ericson 5.3.6) -> (hit, t, u, v, w), point = u a + v b + w c.
    Zero-area triangles and rays lying in the triangle's plane: no hit (never NaN).
    No hit: (False, inf, 0, 0, 0)."""
    hit, t, u, v, w, dn = _ray_tri(o, d, t_max, a, b, c)
    return hit, t, u, v, w


@njit(cache=True, nogil=True)
def ray_triangle(o, d, t_max, a, b, c, solid):
    """Two-sided ray vs triangle; normal = unit((b-a) x (c-a)) flipped to face the origin
    (opposite to d). solid is ignored (a triangle has no interior)."""
    hit, t, u, v, w, dn = _ray_tri(o, d, t_max, a, b, c)
    if not hit:
        return False, INF, np.zeros(3)
    ab = np.empty(3)
    ac = np.empty(3)
    for i in range(3):
        ab[i] = b[i] - a[i]
        ac[i] = c[i] - a[i]
    nrm = _unit(_cross(ab, ac))
    if dn > 0.0:
        for i in range(3):
            nrm[i] = -nrm[i]
    return True, t, nrm


@njit(cache=True, nogil=True)
def intersect_line_triangle(p, q, a, b, c):
    """Ericson 5.3.4: infinite line through p, q vs triangle abc, TWO-SIDED (the book's
    main listing is one-sided/CCW; its double-sided variant is used). -> (hit, u, v, w)
    with r = u a + v b + w c.
    Steps: u = [pq pc pb], v = [pq pa pc], w = [pq pb pa]; hit iff all >= 0 or all <= 0,
    and u + v + w != 0 (== 0 when the line lies in / is parallel to the plane, p == q, or
    the triangle has zero area: reported as no hit). No hit: (False, 0, 0, 0)."""
    pq = np.empty(3)
    pa = np.empty(3)
    pb = np.empty(3)
    pc = np.empty(3)
    for i in range(3):
        pq[i] = q[i] - p[i]
        pa[i] = a[i] - p[i]
        pb[i] = b[i] - p[i]
        pc[i] = c[i] - p[i]
    m = _cross(pq, pc)
    u = _dot(pb, m)
    v = -_dot(pa, m)
    w = _triple(pq, pb, pa)
    s = u + v + w
    if s == 0.0:
        return False, 0.0, 0.0, 0.0
    if not ((u >= 0.0 and v >= 0.0 and w >= 0.0) or (u <= 0.0 and v <= 0.0 and w <= 0.0)):
        return False, 0.0, 0.0, 0.0
    return True, u / s, v / s, w / s


@njit(cache=True, nogil=True)
def intersect_line_quad(p, q, a, b, c, d):
    """Ericson 5.3.5: line through p, q vs convex quad abcd (two-sided) -> (hit, point).
    Deviation from the listing: instead of the diagonal-first trick the two triangles abc
    and acd are tested with the two-sided 5.3.4 test (same result; points on the diagonal
    ca go to abc). Degenerate / parallel cases: no hit, point zeros."""
    r = np.zeros(3)
    hit, u, v, w = intersect_line_triangle(p, q, a, b, c)
    if hit:
        for i in range(3):
            r[i] = u * a[i] + v * b[i] + w * c[i]
        return True, r
    hit, u, v, w = intersect_line_triangle(p, q, a, c, d)
    if hit:
        for i in range(3):
            r[i] = u * a[i] + v * c[i] + w * d[i]
        return True, r
    return False, r


@njit(cache=True, nogil=True)
def ray_convex_polygon(o, d, t_max, verts, normal, solid):
    """Two-sided ray vs planar convex polygon (verts (k,3), CCW about unit `normal`).
    Steps: t from the plane n.x = n.verts[0]; reject if n.d == 0 (ray parallel / in the
    plane: no hit); edge test with the 5.3.4 scalar triple products s_i = [d, v_i-o, v_{i+1}-o]:
    inside iff all s_i >= 0 or all <= 0, and not all zero (zero-area polygon: no hit).
    Normal = normal if n.d < 0 else -normal. solid ignored."""
    k = verts.shape[0]
    if k < 3:
        return False, INF, np.zeros(3)
    denom = _dot(normal, d)
    if denom == 0.0:
        return False, INF, np.zeros(3)
    dist = (normal[0] * (verts[0, 0] - o[0]) + normal[1] * (verts[0, 1] - o[1])
            + normal[2] * (verts[0, 2] - o[2]))
    t = dist / denom
    if not (t >= 0.0 and t <= t_max) or t == INF:
        return False, INF, np.zeros(3)
    pos = False
    neg = False
    va = np.empty(3)
    vb = np.empty(3)
    for i in range(k):
        j = i + 1 if i + 1 < k else 0
        for l in range(3):
            va[l] = verts[i, l] - o[l]
            vb[l] = verts[j, l] - o[l]
        s = _triple(d, va, vb)
        if s > 0.0:
            pos = True
        elif s < 0.0:
            neg = True
        if pos and neg:
            return False, INF, np.zeros(3)
    if not (pos or neg):
        return False, INF, np.zeros(3)
    nrm = np.empty(3)
    sg = 1.0 if denom < 0.0 else -1.0
    for l in range(3):
        nrm[l] = sg * normal[l]
    return True, t + 0.0, nrm


@njit(cache=True, nogil=True)
def ray_triangles_first(o, d, t_max, vertices, faces):
    """Brute-force nearest two-sided hit over a triangle mesh.
    -> (hit, t, face_index, normal). normal = the hit triangle's CCW geometric unit normal
    unit((b-a) x (c-a)) -- NOT flipped towards the ray (outward for a closed, outward-CCW
    mesh). Ties keep the lowest face index. No hit: (False, inf, -1, zeros)."""
    best = t_max
    idx = -1
    for f in range(faces.shape[0]):
        a = vertices[faces[f, 0]]
        b = vertices[faces[f, 1]]
        c = vertices[faces[f, 2]]
        hit, t, u, v, w, dn = _ray_tri(o, d, best, a, b, c)
        if hit and (idx < 0 or t < best):
            best = t
            idx = f
    if idx < 0:
        return False, INF, -1, np.zeros(3)
    a = vertices[faces[idx, 0]]
    b = vertices[faces[idx, 1]]
    c = vertices[faces[idx, 2]]
    ab = np.empty(3)
    ac = np.empty(3)
    for i in range(3):
        ab[i] = b[i] - a[i]
        ac[i] = c[i] - a[i]
    return True, best, idx, _unit(_cross(ab, ac))


# --------------------------------------------------------------------------- cylinder / capsule / cone


@njit(cache=True, nogil=True)
def _far_shift(o, d, c, rb):
    """For an origin far from a shape (|o - c| > 4 rb, c/rb a bounding sphere) move it to
    the point of the line closest to c, so that quadratics are solved at the shape's scale
    (no catastrophic cancellation in B^2 - A C). Returns (o', t0) with o' = o + t0 d;
    callers add t0 back. Near origins are left untouched (t0 = 0) so that origin-on-surface
    answers stay exact."""
    mc0 = o[0] - c[0]
    mc1 = o[1] - c[1]
    mc2 = o[2] - c[2]
    o2 = np.empty(3)
    if mc0 * mc0 + mc1 * mc1 + mc2 * mc2 <= 16.0 * rb * rb:
        for i in range(3):
            o2[i] = o[i]
        return o2, 0.0
    t0 = -(mc0 * d[0] + mc1 * d[1] + mc2 * d[2])
    for i in range(3):
        o2[i] = o[i] + t0 * d[i]
    return o2, t0


@njit(cache=True, nogil=True)
def _cyl_interval(o, d, p0, p1, r):
    """_cyl_interval_core after the far-origin shift (see _far_shift)."""
    c = np.empty(3)
    w = np.empty(3)
    for i in range(3):
        c[i] = 0.5 * (p0[i] + p1[i])
        w[i] = 0.5 * (p1[i] - p0[i])
    hh = _norm(w)
    o2, t0 = _far_shift(o, d, c, np.sqrt(hh * hh + r * r))
    ok, t_in, f_in, t_out, f_out = _cyl_interval_core(o2, d, p0, p1, r)
    return ok, t_in + t0, f_in, t_out + t0, f_out


@njit(cache=True, nogil=True)
def _cyl_interval_core(o, d, p0, p1, r):
    """Chord of the line inside the closed capped cylinder (p0, p1, r).
    Own formulation of Ericson 5.3.7 as an intersection of two convex sets: axial slab
    0 <= (x-p0).a <= H and the infinite radial cylinder |x_perp| <= r (quadratic). Cap
    entries are kept (erratum E L9295: the listing rejects a root t < 0 even when the
    segment enters through an end cap). Face codes: 0 side, 1 cap at p0, 2 cap at p1.
    Returns (ok, t_in, f_in, t_out, f_out); ok False also for a degenerate axis p0 == p1."""
    w = np.empty(3)
    for i in range(3):
        w[i] = p1[i] - p0[i]
    H = _norm(w)
    if not (H > 0.0):
        return False, INF, 0, -INF, 0
    ax = np.empty(3)
    m = np.empty(3)
    for i in range(3):
        ax[i] = w[i] / H
        m[i] = o[i] - p0[i]
    ma = _dot(m, ax)
    da = _dot(d, ax)
    t_in = -INF
    t_out = INF
    f_in = 0
    f_out = 0
    if da == 0.0:
        if ma < 0.0 or ma > H:
            return False, INF, 0, -INF, 0
    else:
        t1 = -ma / da
        t2 = (H - ma) / da
        if da > 0.0:
            t_in = t1
            f_in = 1
            t_out = t2
            f_out = 2
        else:
            t_in = t2
            f_in = 2
            t_out = t1
            f_out = 1
    mp = np.empty(3)
    dp = np.empty(3)
    for i in range(3):
        mp[i] = m[i] - ma * ax[i]
        dp[i] = d[i] - da * ax[i]
    A = _dot(dp, dp)
    lmp = _norm(mp)
    C = (lmp - r) * (lmp + r)
    if A == 0.0:
        if C > 0.0:
            return False, INF, 0, -INF, 0
    else:
        # radial circle |mp + t dp| <= r solved about the closest approach (as 5.3.2)
        tc = -_dot(mp, dp) / A
        pc = np.empty(3)
        for i in range(3):
            pc[i] = mp[i] + tc * dp[i]
        pcl = _norm(pc)
        h2 = (r - pcl) * (r + pcl)
        if h2 < 0.0:
            if C > 0.0:
                return False, INF, 0, -INF, 0
            h2 = 0.0
        sh = np.sqrt(h2 / A)
        if tc > 0.0:
            r2 = tc + sh
            r1 = (C / A) / r2
        elif tc < 0.0:
            r1 = tc - sh
            r2 = (C / A) / r1
        else:
            r1 = -sh
            r2 = sh
        if r1 > r2:
            tm = 0.5 * (r1 + r2)
            r1 = tm
            r2 = tm
        if r1 > t_in:
            t_in = r1
            f_in = 0
        if r2 < t_out:
            t_out = r2
            f_out = 0
    if t_in > t_out:
        return False, INF, 0, -INF, 0
    return True, t_in, f_in, t_out, f_out


@njit(cache=True, nogil=True)
def ray_cylinder(o, d, t_max, p0, p1, r, solid):
    """Ray vs solid capped cylinder (Ericson 5.3.7, see _cyl_interval; end-cap erratum
    L9295 fixed). Normal: radial unit vector on the side, -axis on the p0 cap, +axis on
    the p1 cap. Degenerate axis (p0 == p1): the cylinder is treated as empty (no hit)."""
    ok, t_in, f_in, t_out, f_out = _cyl_interval(o, d, p0, p1, r)
    if not ok:
        return False, INF, np.zeros(3)
    code, t = _choose(t_in, t_out, t_max, solid)
    if code == 0:
        return False, INF, np.zeros(3)
    if code == 1:
        return True, 0.0, np.zeros(3)
    f = f_in if code == 2 else f_out
    w = np.empty(3)
    for i in range(3):
        w[i] = p1[i] - p0[i]
    ax = _unit(w)
    if f == 1:
        return True, t, -ax
    if f == 2:
        return True, t, ax
    x = np.empty(3)
    for i in range(3):
        x[i] = o[i] + t * d[i] - p0[i]
    h = _dot(x, ax)
    for i in range(3):
        x[i] -= h * ax[i]
    nrm = _unit(x)
    if nrm[0] == 0.0 and nrm[1] == 0.0 and nrm[2] == 0.0:  # r == 0, measure-zero
        for i in range(3):
            nrm[i] = -d[i]
    return True, t, nrm


@njit(cache=True, nogil=True)
def ray_capsule(o, d, t_max, a, b, r, solid):
    """Ray vs solid capsule = union of the capped cylinder (a, b, r) and balls at a and b.
    The line meets the (convex) capsule in one interval = union of the three part chords.
    Normal: (x - closest point on ab)/|.|. Degenerate a == b: the cylinder part is empty,
    so the capsule acts as a sphere."""
    ok1, s1, s2, h1, pc1 = _sphere_interval(o, d, a, r)
    ok2, u1, u2, h2, pc2 = _sphere_interval(o, d, b, r)
    ok3, c1, fi, c2, fo = _cyl_interval(o, d, a, b, r)
    t_in = INF
    t_out = -INF
    if ok1:
        t_in = min(t_in, s1)
        t_out = max(t_out, s2)
    if ok2:
        t_in = min(t_in, u1)
        t_out = max(t_out, u2)
    if ok3:
        t_in = min(t_in, c1)
        t_out = max(t_out, c2)
    if not (ok1 or ok2 or ok3):
        return False, INF, np.zeros(3)
    code, t = _choose(t_in, t_out, t_max, solid)
    if code == 0:
        return False, INF, np.zeros(3)
    if code == 1:
        return True, 0.0, np.zeros(3)
    x = np.empty(3)
    ab = np.empty(3)
    for i in range(3):
        x[i] = o[i] + t * d[i]
        ab[i] = b[i] - a[i]
    abab = _dot(ab, ab)
    s = 0.0
    if abab > 0.0:
        s = ((x[0] - a[0]) * ab[0] + (x[1] - a[1]) * ab[1] + (x[2] - a[2]) * ab[2]) / abab
        s = min(1.0, max(0.0, s))
    v = np.empty(3)
    for i in range(3):
        v[i] = x[i] - (a[i] + s * ab[i])
    nrm = _unit(v)
    if nrm[0] == 0.0 and nrm[1] == 0.0 and nrm[2] == 0.0:
        for i in range(3):
            nrm[i] = -d[i]
    return True, t, nrm


@njit(cache=True, nogil=True)
def _cone_interval(o, d, apex, base_center, r):
    """Chord of the line in the solid cone (apex, base disc centre, base radius r).
    Steps: axis a = unit(base - apex), H = |base - apex|, k = r/H; axial slab 0 <= h <= H
    (h = (x-apex).a); lateral double cone |x_perp|^2 <= k^2 h^2 gives the quadratic
    A t^2 + 2 B t + C <= 0; inside the slab only the upper nappe remains, so the chord is
    the slab interval intersected with {Q <= 0} (A > 0: between the roots; A < 0: outside
    the roots, only one piece survives the slab; A == 0: linear).
    Face codes: 0 lateral, 1 apex plane, 2 base. Returns (ok, t_in, f_in, t_out, f_out)."""
    w = np.empty(3)
    for i in range(3):
        w[i] = base_center[i] - apex[i]
    H = _norm(w)
    if not (H > 0.0):
        return False, INF, 0, -INF, 0
    ax = np.empty(3)
    m = np.empty(3)
    for i in range(3):
        ax[i] = w[i] / H
        m[i] = o[i] - apex[i]
    ma = _dot(m, ax)
    da = _dot(d, ax)
    # axial slab; faces: 0 lateral, 1 apex plane, 2 base
    s0 = -INF
    s1 = INF
    f0 = 1
    f1 = 2
    if da == 0.0:
        if ma < 0.0 or ma > H:
            return False, INF, 0, -INF, 0
    else:
        ta = -ma / da
        tb = (H - ma) / da
        if da > 0.0:
            s0 = ta
            f0 = 1
            s1 = tb
            f1 = 2
        else:
            s0 = tb
            f0 = 2
            s1 = ta
            f1 = 1
    mp = np.empty(3)
    dp = np.empty(3)
    for i in range(3):
        mp[i] = m[i] - ma * ax[i]
        dp[i] = d[i] - da * ax[i]
    k = r / H
    k2 = k * k
    A = _dot(dp, dp) - k2 * da * da
    B = _dot(mp, dp) - k2 * ma * da
    lmp = _norm(mp)
    C = (lmp - k * ma) * (lmp + k * ma)
    t_in = s0
    f_in = f0
    t_out = s1
    f_out = f1
    if A > 0.0:
        ok, r1, r2 = _quad_roots(A, B, C)
        if not ok:
            return False, INF, 0, -INF, 0
        if r1 > t_in:
            t_in = r1
            f_in = 0
        if r2 < t_out:
            t_out = r2
            f_out = 0
    elif A < 0.0:
        ok, r1, r2 = _quad_roots(A, B, C)
        if ok:
            # Q <= 0 on (-inf, r1] U [r2, inf); the slab keeps one piece (upper nappe)
            a0 = s0
            a1 = min(s1, r1)
            b0 = max(s0, r2)
            b1 = s1
            if a1 >= a0 and (b1 < b0 or (a1 - a0) >= (b1 - b0)):
                if r1 < t_out:
                    t_out = r1
                    f_out = 0
            else:
                if r2 > t_in:
                    t_in = r2
                    f_in = 0
    else:
        if B == 0.0:
            if C > 0.0:
                return False, INF, 0, -INF, 0
        else:
            t0 = -C / (2.0 * B)
            if B > 0.0:
                if t0 < t_out:
                    t_out = t0
                    f_out = 0
            else:
                if t0 > t_in:
                    t_in = t0
                    f_in = 0
    if not (t_in <= t_out):
        return False, INF, 0, -INF, 0
    return True, t_in, f_in, t_out, f_out


@njit(cache=True, nogil=True)
def ray_cone(o, d, t_max, apex, base_center, r, solid):
    """Ray vs solid cone (apex, base disc centre, base radius r); chord from _cone_interval
    (after the far-origin shift), then the uniform decision.
    Normal: base +a; lateral unit(H e_rho - r a); apex point -a.
    Degenerate apex == base_center: treated as empty (no hit)."""
    c = np.empty(3)
    w = np.empty(3)
    for i in range(3):
        c[i] = 0.5 * (apex[i] + base_center[i])
        w[i] = base_center[i] - apex[i]
    H = _norm(w)
    if not (H > 0.0):
        return False, INF, np.zeros(3)
    o2, t0 = _far_shift(o, d, c, np.sqrt(0.25 * H * H + r * r))
    ok, t_in, f_in, t_out, f_out = _cone_interval(o2, d, apex, base_center, r)
    if not ok:
        return False, INF, np.zeros(3)
    code, t = _choose(t_in + t0, t_out + t0, t_max, solid)
    if code == 0:
        return False, INF, np.zeros(3)
    if code == 1:
        return True, 0.0, np.zeros(3)
    f = f_in if code == 2 else f_out
    ax = np.empty(3)
    m = np.empty(3)
    for i in range(3):
        ax[i] = w[i] / H
        m[i] = o[i] - apex[i]
    nrm = np.empty(3)
    if f == 2:
        for i in range(3):
            nrm[i] = ax[i]
        return True, t, nrm
    if f == 1:
        for i in range(3):
            nrm[i] = -ax[i]
        return True, t, nrm
    x = np.empty(3)
    for i in range(3):
        x[i] = m[i] + t * d[i]
    h = _dot(x, ax)
    for i in range(3):
        x[i] -= h * ax[i]
    e = _unit(x)
    if e[0] == 0.0 and e[1] == 0.0 and e[2] == 0.0:
        for i in range(3):
            nrm[i] = -ax[i]
        return True, t, nrm
    for i in range(3):
        nrm[i] = H * e[i] - r * ax[i]
    return True, t, _unit(nrm)


# --------------------------------------------------------------------------- convex polyhedra


@njit(cache=True, nogil=True)
def _poly_interval(o, d, planes):
    """Ericson 5.3.8 Cyrus-Beck over the whole line; planes rows (nx, ny, nz, d), inside
    n.x <= d. Returns (ok, t_in, f_in, t_out, f_out) (face -1 = unbounded side).
    Steps per plane: denom = n.d, dist = d - n.o; parallel (denom == 0): reject iff
    dist < 0 (erratum E L9406: the listing rejects on dist > 0, i.e. inverted);
    otherwise t = dist/denom, entering (denom < 0) raises t_in, exiting lowers t_out;
    empty as soon as t_in > t_out."""
    t_in = -INF
    t_out = INF
    f_in = -1
    f_out = -1
    for i in range(planes.shape[0]):
        denom = planes[i, 0] * d[0] + planes[i, 1] * d[1] + planes[i, 2] * d[2]
        dist = planes[i, 3] - (planes[i, 0] * o[0] + planes[i, 1] * o[1] + planes[i, 2] * o[2])
        if denom == 0.0:
            if dist < 0.0:  # erratum E L9406
                return False, INF, -1, -INF, -1
        else:
            t = dist / denom
            if denom < 0.0:
                if t > t_in:
                    t_in = t
                    f_in = i
            else:
                if t < t_out:
                    t_out = t
                    f_out = i
            if t_in > t_out:
                return False, INF, -1, -INF, -1
    return True, t_in, f_in, t_out, f_out


@njit(cache=True, nogil=True)
def ray_convex_polyhedron(o, d, t_max, planes, solid):
    """Ray vs closed convex polyhedron given by outward unit face planes (Ericson 5.3.8).
    Normal: the normal of the entering (or, from inside with solid=False, exiting) plane.
    An unbounded polyhedron with no exit plane gives no exit hit."""
    ok, t_in, f_in, t_out, f_out = _poly_interval(o, d, planes)
    if not ok:
        return False, INF, np.zeros(3)
    code, t = _choose(t_in, t_out, t_max, solid)
    if code == 0:
        return False, INF, np.zeros(3)
    if code == 1:
        return True, 0.0, np.zeros(3)
    f = f_in if code == 2 else f_out
    nrm = np.empty(3)
    for i in range(3):
        nrm[i] = planes[f, i]
    return True, t, nrm


@njit(cache=True, nogil=True)
def tetrahedron_planes(a, b, c, dd):
    """Outward unit face planes (4,4) of tetrahedron abcd, oriented away from the opposite
    vertex. A face with zero area gives the all-zero row (no constraint), so a flat
    tetrahedron never produces NaN."""
    P = np.zeros((4, 4))
    V = np.empty((4, 3))
    for i in range(3):
        V[0, i] = a[i]
        V[1, i] = b[i]
        V[2, i] = c[i]
        V[3, i] = dd[i]
    # face k omits vertex k
    for k in range(4):
        if k == 0:
            i0, i1, i2 = 1, 2, 3
        elif k == 1:
            i0, i1, i2 = 0, 2, 3
        elif k == 2:
            i0, i1, i2 = 0, 1, 3
        else:
            i0, i1, i2 = 0, 1, 2
        e1 = np.empty(3)
        e2 = np.empty(3)
        for l in range(3):
            e1[l] = V[i1, l] - V[i0, l]
            e2[l] = V[i2, l] - V[i0, l]
        n = _unit(_cross(e1, e2))
        if n[0] == 0.0 and n[1] == 0.0 and n[2] == 0.0:
            continue
        off = 0.0
        opp = 0.0
        for l in range(3):
            off += n[l] * (V[i0, l] + V[i1, l] + V[i2, l]) / 3.0
            opp += n[l] * V[k, l]
        if opp > off:
            for l in range(3):
                n[l] = -n[l]
            off = -off
        for l in range(3):
            P[k, l] = n[l]
        P[k, 3] = off
    return P


@njit(cache=True, nogil=True)
def ray_tetrahedron(o, d, t_max, a, b, c, dd, solid):
    """Ray vs solid tetrahedron abcd via its four face planes (Ericson 5.3.8)."""
    return ray_convex_polyhedron(o, d, t_max, tetrahedron_planes(a, b, c, dd), solid)

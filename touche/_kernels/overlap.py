"""Boolean overlap kernels (closed sets: touching counts as overlapping).

Seeds: Ericson, Real-Time Collision Detection, ch. 4 (bounding volumes) and 5.2 (testing
primitives). All inputs are float64 (3,) arrays in world coordinates (see docs/KERNELS.md).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from .jit import njit

from .vec import cross as _cross  # noqa: E402
from .vec import dot as _dot  # noqa: E402

# ---------------------------------------------------------------------------------------------
# small vector helpers
# ---------------------------------------------------------------------------------------------






@njit(cache=True, nogil=True)
def _clamp01(x):
    if x < 0.0:
        return 0.0
    if x > 1.0:
        return 1.0
    return x


@njit(cache=True, nogil=True)
def _closest_pt_segment(p, a, b):
    """Closest point to p on segment ab (Ericson 5.1.2); zero-length segment -> a."""
    ab = b - a
    den = _dot(ab, ab)
    if den <= 0.0:
        return a.copy()
    t = _clamp01(_dot(p - a, ab) / den)
    return a + t * ab


@njit(cache=True, nogil=True)
def _sqdist_point_segment(p, a, b):
    q = _closest_pt_segment(p, a, b)
    d = p - q
    return _dot(d, d)


@njit(cache=True, nogil=True)
def _sqdist_segment_segment(p1, q1, p2, q2):
    """Squared distance between segments p1q1 and p2q2 and the closest points (Ericson 5.1.9).

    Robust form: the minimum of a convex quadratic over [0,1]^2 is either the interior critical
    point or lies on the boundary, and each boundary edge (s or t fixed at 0/1) is a
    point-segment distance. We take the min over the four point-segment candidates and the
    interior solution when it exists, so zero-length and (near-)parallel segments need no
    special case and every candidate is a true distance between two actual points.
    Returns (sqdist, c1, c2).
    """
    # four boundary candidates
    c1 = p1.copy()
    c2 = _closest_pt_segment(p1, p2, q2)
    dd = c1 - c2
    best = _dot(dd, dd)
    x2 = _closest_pt_segment(q1, p2, q2)
    dd = q1 - x2
    v = _dot(dd, dd)
    if v < best:
        best = v
        c1 = q1.copy()
        c2 = x2
    x1 = _closest_pt_segment(p2, p1, q1)
    dd = x1 - p2
    v = _dot(dd, dd)
    if v < best:
        best = v
        c1 = x1
        c2 = p2.copy()
    x1 = _closest_pt_segment(q2, p1, q1)
    dd = x1 - q2
    v = _dot(dd, dd)
    if v < best:
        best = v
        c1 = x1
        c2 = q2.copy()
    # interior critical point
    d1 = q1 - p1
    d2 = q2 - p2
    r = p1 - p2
    a = _dot(d1, d1)
    e = _dot(d2, d2)
    b = _dot(d1, d2)
    c = _dot(d1, r)
    f = _dot(d2, r)
    den = a * e - b * b
    if a > 0.0 and e > 0.0 and den > 0.0:
        s = (b * f - c * e) / den
        t = (a * f - b * c) / den
        if 0.0 < s < 1.0 and 0.0 < t < 1.0:
            y1 = p1 + s * d1
            y2 = p2 + t * d2
            dd = y1 - y2
            v = _dot(dd, dd)
            if v < best:
                best = v
                c1 = y1
                c2 = y2
    return best, c1, c2


@njit(cache=True, nogil=True)
def _closest_pt_triangle(p, a, b, c):
    """Closest point on the solid triangle abc to p (Ericson 5.1.5, robust variant).

    Steps: if the triangle has nonzero area and the orthogonal projection of p onto its plane
    has all barycentric coordinates >= 0, that projection is the answer; otherwise the
    closest point lies on an edge: min over the three point-segment closest points. Zero-area
    triangles always take the edge branch (they are segments or points), so no NaN.
    """
    ab = b - a
    ac = c - a
    n = _cross(ab, ac)
    nn = _dot(n, n)
    if nn > 0.0:
        ap = p - a
        dist = _dot(n, ap) / nn
        pp = p - dist * n  # projection on the plane
        u = _dot(n, _cross(b - pp, c - pp))
        v = _dot(n, _cross(c - pp, a - pp))
        w = _dot(n, _cross(a - pp, b - pp))
        if u >= 0.0 and v >= 0.0 and w >= 0.0:
            return pp
    q = _closest_pt_segment(p, a, b)
    d = p - q
    best = _dot(d, d)
    q2 = _closest_pt_segment(p, b, c)
    d = p - q2
    v2 = _dot(d, d)
    if v2 < best:
        best = v2
        q = q2
    q2 = _closest_pt_segment(p, c, a)
    d = p - q2
    v2 = _dot(d, d)
    if v2 < best:
        q = q2
    return q


# ---------------------------------------------------------------------------------------------
# simple volumes
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def test_aabb_aabb(mn1, mx1, mn2, mx2):
    """Ericson 4.2.1: overlap iff the intervals overlap on all three axes."""
    for i in range(3):
        if mx1[i] < mn2[i] or mx2[i] < mn1[i]:
            return False
    return True


@njit(cache=True, nogil=True)
def test_sphere_sphere(c1, r1, c2, r2):
    """Ericson 4.3.1: |c1-c2|^2 <= (r1+r2)^2."""
    d = c1 - c2
    rr = r1 + r2
    return _dot(d, d) <= rr * rr


@njit(cache=True, nogil=True)
def test_obb_obb(c1, axes1, half1, c2, axes2, half2, eps):
    """Ericson 4.4.1 (15 separating axes) with the 4.4.2 robustness epsilon.

    Steps: R = A1^T A2 (B's axes in A's frame); t = A1^T (c2 - c1); AbsR = |R| + eps (so that
    near-parallel edge pairs, whose cross-product axes are (near) null, never separate);
    test A's 3 face axes, B's 3 face axes and the 9 edge-edge axes. Separated iff
    |t.L| > ra + rb for some axis (closed boxes: touching is overlap).
    """
    R = np.empty((3, 3))
    AbsR = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            s = 0.0
            for k in range(3):
                s += axes1[k, i] * axes2[k, j]
            R[i, j] = s
            AbsR[i, j] = abs(s) + eps
    d = c2 - c1
    t = np.empty(3)
    for i in range(3):
        t[i] = axes1[0, i] * d[0] + axes1[1, i] * d[1] + axes1[2, i] * d[2]
    a = half1
    b = half2
    # A's face axes
    for i in range(3):
        ra = a[i]
        rb = b[0] * AbsR[i, 0] + b[1] * AbsR[i, 1] + b[2] * AbsR[i, 2]
        if abs(t[i]) > ra + rb:
            return False
    # B's face axes
    for i in range(3):
        ra = a[0] * AbsR[0, i] + a[1] * AbsR[1, i] + a[2] * AbsR[2, i]
        rb = b[i]
        if abs(t[0] * R[0, i] + t[1] * R[1, i] + t[2] * R[2, i]) > ra + rb:
            return False
    # A_i x B_j (indices cyclic). Erratum E L5024 (a.u[2] twice) avoided: the generic index
    # form below uses A's two other axes i1, i2 and B's two other axes j1, j2.
    for i in range(3):
        i1 = (i + 1) % 3
        i2 = (i + 2) % 3
        for j in range(3):
            j1 = (j + 1) % 3
            j2 = (j + 2) % 3
            ra = a[i1] * AbsR[i2, j] + a[i2] * AbsR[i1, j]
            rb = b[j1] * AbsR[i, j2] + b[j2] * AbsR[i, j1]
            if abs(t[i2] * R[i1, j] - t[i1] * R[i2, j]) > ra + rb:
                return False
    return True


# ---------------------------------------------------------------------------------------------
# swept spheres
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def test_sphere_capsule(c, r, a, b, rc):
    """Ericson 4.5.1: dist(c, segment ab) <= r + rc."""
    rr = r + rc
    return _sqdist_point_segment(c, a, b) <= rr * rr


@njit(cache=True, nogil=True)
def test_capsule_capsule(a1, b1, r1, a2, b2, r2):
    """Ericson 4.5.1: dist(segment1, segment2) <= r1 + r2."""
    d2, _, _ = _sqdist_segment_segment(a1, b1, a2, b2)
    rr = r1 + r2
    return d2 <= rr * rr


@njit(cache=True, nogil=True)
def _sqdist_point_rect(p, c, u, v, eu, ev):
    """Squared distance from p to the solid rectangle c + s u + t v, |s|<=eu, |t|<=ev
    (Ericson 5.1.4.1: project on the in-plane axes and clamp)."""
    d = p - c
    s = _dot(d, u)
    t = _dot(d, v)
    if s > eu:
        s = eu
    elif s < -eu:
        s = -eu
    if t > ev:
        t = ev
    elif t < -ev:
        t = -ev
    q = c + s * u + t * v
    w = p - q
    return _dot(w, w)


@njit(cache=True, nogil=True)
def _rect_corner(c, u, v, eu, ev, k):
    su = eu if (k == 0 or k == 1) else -eu
    sv = ev if (k == 0 or k == 3) else -ev
    return c + su * u + sv * v


@njit(cache=True, nogil=True)
def _sqdist_segment_rect(p, q, c, u, v, eu, ev):
    """Squared distance between segment pq and a solid rectangle.

    Steps: if the segment crosses the rectangle's plane strictly, the crossing point's
    distance is a candidate (0 when it hits the rectangle); then the two endpoints against the
    rectangle and the segment against the four rectangle edges. If the closest pair were in
    both relative interiors (segment not crossing), the segment would be parallel to the plane
    and could slide to an end or to an edge, so these candidates are exhaustive.
    """
    n = _cross(u, v)
    da = _dot(n, p - c)
    db = _dot(n, q - c)
    best = np.inf
    if (da < 0.0 and db > 0.0) or (da > 0.0 and db < 0.0):
        t = da / (da - db)
        x = p + t * (q - p)
        best = _sqdist_point_rect(x, c, u, v, eu, ev)
        if best == 0.0:
            return 0.0
    v1 = _sqdist_point_rect(p, c, u, v, eu, ev)
    if v1 < best:
        best = v1
    v1 = _sqdist_point_rect(q, c, u, v, eu, ev)
    if v1 < best:
        best = v1
    for k in range(4):
        e0 = _rect_corner(c, u, v, eu, ev, k)
        e1 = _rect_corner(c, u, v, eu, ev, (k + 1) % 4)
        v1, _, _ = _sqdist_segment_segment(p, q, e0, e1)
        if v1 < best:
            best = v1
    return best


@njit(cache=True, nogil=True)
def test_lozenge_lozenge(c1, u1, v1, e1u, e1v, r1, c2, u2, v2, e2u, e2v, r2):
    """Lozenge = solid rectangle (center, unit axes u, v, half-lengths) swept by a sphere
    (Ericson 4.5). Overlap iff dist(rect1, rect2) <= r1 + r2.

    Rectangle-rectangle distance = min over the 4 edges of each vs the other solid rectangle
    (segment-rectangle distance). This includes intersection (distance 0): any nonempty
    intersection of two convex planar sets has an extreme point on an edge of one of them.
    """
    rr = r1 + r2
    lim = rr * rr
    for k in range(4):
        p = _rect_corner(c1, u1, v1, e1u, e1v, k)
        q = _rect_corner(c1, u1, v1, e1u, e1v, (k + 1) % 4)
        if _sqdist_segment_rect(p, q, c2, u2, v2, e2u, e2v) <= lim:
            return True
    for k in range(4):
        p = _rect_corner(c2, u2, v2, e2u, e2v, k)
        q = _rect_corner(c2, u2, v2, e2u, e2v, (k + 1) % 4)
        if _sqdist_segment_rect(p, q, c1, u1, v1, e1u, e1v) <= lim:
            return True
    return False


# ---------------------------------------------------------------------------------------------
# planes and halfspaces (plane n.x = d, halfspace n.x <= d, n unit)
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def test_sphere_plane(c, r, n, d):
    """Ericson 5.2.2: |n.c - d| <= r."""
    return abs(_dot(n, c) - d) <= r


@njit(cache=True, nogil=True)
def test_sphere_halfspace(c, r, n, d):
    """Ericson 5.2.2: some point of the sphere has n.x <= d  <=>  n.c - d <= r."""
    return _dot(n, c) - d <= r


@njit(cache=True, nogil=True)
def sphere_inside_halfspace(c, r, n, d):
    """Ericson 5.2.2: the whole sphere has n.x <= d  <=>  n.c - d <= -r."""
    return _dot(n, c) - d <= -r


@njit(cache=True, nogil=True)
def _obb_plane_radius(axes, half, n):
    r = 0.0
    for i in range(3):
        r += half[i] * abs(n[0] * axes[0, i] + n[1] * axes[1, i] + n[2] * axes[2, i])
    return r


@njit(cache=True, nogil=True)
def test_obb_plane(c, axes, half, n, d):
    """Ericson 5.2.3: projection radius r = sum e_i |n.u_i|; overlap iff |n.c - d| <= r."""
    return abs(_dot(n, c) - d) <= _obb_plane_radius(axes, half, n)


@njit(cache=True, nogil=True)
def test_obb_halfspace(c, axes, half, n, d):
    """Ericson 5.2.3: some box point has n.x <= d  <=>  n.c - d <= r."""
    return _dot(n, c) - d <= _obb_plane_radius(axes, half, n)


@njit(cache=True, nogil=True)
def test_aabb_plane(mn, mx, n, d):
    """Ericson 5.2.3: center/extents form, r = sum e_i |n_i|."""
    s = 0.0
    r = 0.0
    for i in range(3):
        ci = 0.5 * (mn[i] + mx[i])
        ei = 0.5 * (mx[i] - mn[i])
        s += n[i] * ci
        r += ei * abs(n[i])
    return abs(s - d) <= r


@njit(cache=True, nogil=True)
def _cone_plane_range(apex, axis_unit, height, r, n):
    """min and max of n.x over the solid cone (Ericson 5.2.4).

    The extremes are at the tip T or on the base circle at B +- r m, m = unit projection of n
    orthogonal to the axis. Errata E L7669/L7688 fixed: d is n.P (not -n.P), and m is
    normalised; n.m = |n x v| so we use that norm directly (zero when n || v, no division).
    """
    nt = _dot(n, apex)
    nb = nt + height * _dot(n, axis_unit)
    w = _cross(n, axis_unit)
    rad = r * np.sqrt(_dot(w, w))
    lo = min(nt, nb - rad)
    hi = max(nt, nb + rad)
    return lo, hi


@njit(cache=True, nogil=True)
def test_cone_plane(apex, axis_unit, height, r, n, d):
    """Ericson 5.2.4 (fixed): the cone touches the plane iff min n.x <= d <= max n.x."""
    lo, hi = _cone_plane_range(apex, axis_unit, height, r, n)
    return lo <= d and d <= hi


@njit(cache=True, nogil=True)
def test_cone_halfspace(apex, axis_unit, height, r, n, d):
    """Ericson 5.2.4 (fixed): some cone point has n.x <= d (tip or farthest base point)."""
    lo, _ = _cone_plane_range(apex, axis_unit, height, r, n)
    return lo <= d


# ---------------------------------------------------------------------------------------------
# sphere vs boxes / triangles / polygons
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def test_sphere_aabb(c, r, mn, mx):
    """Ericson 5.2.5: q = clamp(c, mn, mx) (5.1.3); overlap iff |c - q|^2 <= r^2.
    Returns (hit, q) with q the closest point of the box to c."""
    q = np.empty(3)
    for i in range(3):
        x = c[i]
        if x < mn[i]:
            x = mn[i]
        if x > mx[i]:
            x = mx[i]
        q[i] = x
    w = c - q
    return _dot(w, w) <= r * r, q


@njit(cache=True, nogil=True)
def test_sphere_obb(c, r, oc, axes, half):
    """Ericson 5.2.6: clamp the local coordinates of c (5.1.4); returns (hit, q)."""
    d = c - oc
    q = oc.copy()
    for i in range(3):
        x = d[0] * axes[0, i] + d[1] * axes[1, i] + d[2] * axes[2, i]
        if x > half[i]:
            x = half[i]
        if x < -half[i]:
            x = -half[i]
        q[0] += x * axes[0, i]
        q[1] += x * axes[1, i]
        q[2] += x * axes[2, i]
    w = c - q
    return _dot(w, w) <= r * r, q


@njit(cache=True, nogil=True)
def test_sphere_triangle(c, r, a, b, tc):
    """Ericson 5.2.7: q = closest point on triangle (a, b, tc); hit iff |c-q|^2 <= r^2.
    Zero-area triangles work (closest point on their edges). Returns (hit, q)."""
    q = _closest_pt_triangle(c, a, b, tc)
    w = c - q
    return _dot(w, w) <= r * r, q


@njit(cache=True, nogil=True)
def test_sphere_polygon(c, r, verts, normal):
    """Sphere vs solid convex polygon (Ericson 5.2.8, rewritten; erratum E L7833 -- negated
    m.d and unnormalised ray direction -- avoided by not using the ray formulation).

    Steps: (1) plane distance s = n.(c - v0); reject if |s| > r. (2) if the projection of c
    lies inside the polygon (same side of every edge; either winding accepted), hit.
    (3) otherwise hit iff some edge is within r of c.
    """
    k = verts.shape[0]
    v0 = verts[0]
    s = _dot(normal, c - v0)
    if abs(s) > r:
        return False
    pp = c - s * normal
    pos = True
    neg = True
    for i in range(k):
        p = verts[i]
        q = verts[(i + 1) % k]
        o = _dot(normal, _cross(q - p, pp - p))
        if o < 0.0:
            pos = False
        if o > 0.0:
            neg = False
    if pos or neg:
        return True
    rr = r * r
    for i in range(k):
        if _sqdist_point_segment(c, verts[i], verts[(i + 1) % k]) <= rr:
            return True
    return False


# ---------------------------------------------------------------------------------------------
# triangle vs box
# ---------------------------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _tri_box_local(v0, v1, v2, e):
    """Triangle (already in the box frame, box centered at origin, half extents e) vs box.
    Ericson 5.2.9: 13 axes -- 9 edge cross products, 3 box normals, triangle normal.
    Zero edges / zero normal give null axes (all projections 0), which never separate, and
    the remaining axes still cover the segment/point cases (box normals, box axis x edge).
    """
    f0 = v1 - v0
    f1 = v2 - v1
    f2 = v0 - v2
    # category 3: a_ij = u_i x f_j, u_i the box axes
    for j in range(3):
        if j == 0:
            f = f0
        elif j == 1:
            f = f1
        else:
            f = f2
        for i in range(3):
            # axis u_i x f
            ax = np.zeros(3)
            if i == 0:
                ax[1] = -f[2]
                ax[2] = f[1]
            elif i == 1:
                ax[0] = f[2]
                ax[2] = -f[0]
            else:
                ax[0] = -f[1]
                ax[1] = f[0]
            p0 = _dot(v0, ax)
            p1 = _dot(v1, ax)
            p2 = _dot(v2, ax)
            rr = e[0] * abs(ax[0]) + e[1] * abs(ax[1]) + e[2] * abs(ax[2])
            # erratum E L8014 (v2.z for v2.y) avoided: generic dot products.
            if max(-max(p0, max(p1, p2)), min(p0, min(p1, p2))) > rr:
                return False
    # category 1: box face normals
    for i in range(3):
        if max(v0[i], max(v1[i], v2[i])) < -e[i] or min(v0[i], min(v1[i], v2[i])) > e[i]:
            return False
    # category 2: triangle plane, same (translated) frame for box and plane
    # (erratum E: the printed code mixes translated plane and untranslated box).
    # All three vertices are projected (not just v0): for a (near-)zero-area triangle the
    # computed n is rounding noise, not orthogonal to the edges, but any axis is a valid
    # separation test when the full projection interval is used.
    n = _cross(f0, f1)
    p0 = _dot(n, v0)
    p1 = _dot(n, v1)
    p2 = _dot(n, v2)
    rr = e[0] * abs(n[0]) + e[1] * abs(n[1]) + e[2] * abs(n[2])
    return not (max(-max(p0, max(p1, p2)), min(p0, min(p1, p2))) > rr)


@njit(cache=True, nogil=True)
def test_triangle_aabb(a, b, c, center, half):
    """Ericson 5.2.9 (errata fixed): translate the triangle so the box is centered at the
    origin, then the 13-axis separating-axis test."""
    return _tri_box_local(a - center, b - center, c - center, half)


@njit(cache=True, nogil=True)
def test_triangle_obb(a, b, c, oc, axes, half):
    """Ericson 5.2.9 for OBBs: express the vertices in the box frame (x_local = A^T (x - oc))
    and run the AABB test."""
    la = np.empty(3)
    lb = np.empty(3)
    lc = np.empty(3)
    da = a - oc
    db = b - oc
    dc = c - oc
    for i in range(3):
        la[i] = da[0] * axes[0, i] + da[1] * axes[1, i] + da[2] * axes[2, i]
        lb[i] = db[0] * axes[0, i] + db[1] * axes[1, i] + db[2] * axes[2, i]
        lc[i] = dc[0] * axes[0, i] + dc[1] * axes[1, i] + dc[2] * axes[2, i]
    return _tri_box_local(la, lb, lc, half)


# ---------------------------------------------------------------------------------------------
# triangle vs triangle
# ---------------------------------------------------------------------------------------------

# A triangle whose |normal|^2 <= _DEGEN * (longest edge)^4 is treated as the segment of its
# longest edge (sin of its largest-vs-others angle below ~1e-10).
_DEGEN = 1e-20
# Tolerance (relative to the coordinate scale) used only for degenerate triangles, where the
# intersection test becomes a distance test (a distance cannot be exactly 0 for crossings at
# non-representable points).
_DEGEN_TOL = 1e-12


@njit(cache=True, nogil=True)
def _sep_on_axis(ax, a0, a1, a2, b0, b1, b2):
    """True if the axis ax strictly separates the two vertex triples (any nonzero axis is a
    valid test; a null axis gives 0 > 0 = False)."""
    pa0 = _dot(ax, a0)
    pa1 = _dot(ax, a1)
    pa2 = _dot(ax, a2)
    pb0 = _dot(ax, b0)
    pb1 = _dot(ax, b1)
    pb2 = _dot(ax, b2)
    mina = min(pa0, min(pa1, pa2))
    maxa = max(pa0, max(pa1, pa2))
    minb = min(pb0, min(pb1, pb2))
    maxb = max(pb0, max(pb1, pb2))
    return minb > maxa or mina > maxb


@njit(cache=True, nogil=True)
def _tri_edge(a0, a1, a2, i):
    if i == 0:
        return a1 - a0
    if i == 1:
        return a2 - a1
    return a0 - a2


@njit(cache=True, nogil=True)
def _tri_kind(a0, a1, a2):
    """0 = point, 1 = segment (returns its endpoints), 2 = proper triangle."""
    e0 = a1 - a0
    e1 = a2 - a1
    e2 = a0 - a2
    l0 = _dot(e0, e0)
    l1 = _dot(e1, e1)
    l2 = _dot(e2, e2)
    lm = max(l0, max(l1, l2))
    if lm == 0.0:
        return 0, a0, a0
    n = _cross(e0, -e2)
    nn = _dot(n, n)
    if nn > _DEGEN * lm * lm:
        return 2, a0, a0
    if l0 >= l1 and l0 >= l2:
        return 1, a0, a1
    if l1 >= l2:
        return 1, a1, a2
    return 1, a2, a0


@njit(cache=True, nogil=True)
def _sqdist_segment_triangle(p, q, a, b, c):
    """Squared distance between segment pq and a proper triangle abc.

    Candidates: the strict crossing point of pq with the plane (its distance to the
    triangle, 0 if inside), both endpoints vs the triangle, pq vs the three edges."""
    n = _cross(b - a, c - a)
    da = _dot(n, p - a)
    db = _dot(n, q - a)
    best = np.inf
    if (da < 0.0 and db > 0.0) or (da > 0.0 and db < 0.0):
        t = da / (da - db)
        x = p + t * (q - p)
        y = _closest_pt_triangle(x, a, b, c)
        w = x - y
        best = _dot(w, w)
    y = _closest_pt_triangle(p, a, b, c)
    w = p - y
    v = _dot(w, w)
    if v < best:
        best = v
    y = _closest_pt_triangle(q, a, b, c)
    w = q - y
    v = _dot(w, w)
    if v < best:
        best = v
    v, _, _ = _sqdist_segment_segment(p, q, a, b)
    if v < best:
        best = v
    v, _, _ = _sqdist_segment_segment(p, q, b, c)
    if v < best:
        best = v
    v, _, _ = _sqdist_segment_segment(p, q, c, a)
    if v < best:
        best = v
    return best


@njit(cache=True, nogil=True)
def test_triangle_triangle(a0, a1, a2, b0, b1, b2):
    """Triangle-triangle overlap, closed, robust to coplanar and degenerate input.

    Proper triangles (Ericson 5.2.10 / Eberly SAT): separating-axis test over
    n_A, n_B, the 9 edge crosses e_i x f_j, and the in-plane / mixed axes n_A x e_i,
    n_A x f_j, n_B x e_i, n_B x f_j (needed when the planes are parallel: coplanar
    triangles; erratum S0 L511 -- parallel edges do occur, giving null axes, which simply
    never separate). Every axis is used unnormalised: a separation found along any nonzero
    axis is a proof, and for non-parallel planes n_A, n_B, e_i x f_j are complete, while for
    parallel planes n_A and the in-plane normals are complete. Coordinates are taken
    relative to a0 to reduce rounding.

    Zero-area triangles (collinear: a segment, or a point) are reduced to their segment /
    point and tested by distance <= 1e-12 * (coordinate scale).
    """
    o = a0.copy()
    A0 = a0 - o
    A1 = a1 - o
    A2 = a2 - o
    B0 = b0 - o
    B1 = b1 - o
    B2 = b2 - o
    ka, pa, qa = _tri_kind(A0, A1, A2)
    kb, pb, qb = _tri_kind(B0, B1, B2)
    if ka == 2 and kb == 2:
        nA = _cross(A1 - A0, A2 - A0)
        nB = _cross(B1 - B0, B2 - B0)
        if _sep_on_axis(nA, A0, A1, A2, B0, B1, B2):
            return False
        if _sep_on_axis(nB, A0, A1, A2, B0, B1, B2):
            return False
        for i in range(3):
            ei = _tri_edge(A0, A1, A2, i)
            for j in range(3):
                fj = _tri_edge(B0, B1, B2, j)
                if _sep_on_axis(_cross(ei, fj), A0, A1, A2, B0, B1, B2):
                    return False
        for i in range(3):
            ei = _tri_edge(A0, A1, A2, i)
            fi = _tri_edge(B0, B1, B2, i)
            if _sep_on_axis(_cross(nA, ei), A0, A1, A2, B0, B1, B2):
                return False
            if _sep_on_axis(_cross(nA, fi), A0, A1, A2, B0, B1, B2):
                return False
            if _sep_on_axis(_cross(nB, ei), A0, A1, A2, B0, B1, B2):
                return False
            if _sep_on_axis(_cross(nB, fi), A0, A1, A2, B0, B1, B2):
                return False
        return True
    # degenerate: distance test with a tiny scale-relative tolerance
    scale = 0.0
    for v in (A1, A2, B0, B1, B2):
        for k in range(3):
            if abs(v[k]) > scale:
                scale = abs(v[k])
    tol = _DEGEN_TOL * scale
    tol2 = tol * tol
    if ka == 2:
        d2 = _sqdist_segment_triangle(pb, qb, A0, A1, A2)
    elif kb == 2:
        d2 = _sqdist_segment_triangle(pa, qa, B0, B1, B2)
    else:
        d2, _, _ = _sqdist_segment_segment(pa, qa, pb, qb)
    return d2 <= tol2

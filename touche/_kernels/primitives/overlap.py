"""Boolean overlap kernels (closed sets: touching counts as overlapping).

Seeds: Ericson, Real-Time Collision Detection, ch. 4 (bounding volumes) and 5.2 (testing
primitives). All inputs are float64 (3,) arrays in world coordinates (see docs/KERNELS.md).
"""
import numpy as np
from touche._kernels import ensure_fresh_cache  # noqa: E402  (before any cached kernel loads)

ensure_fresh_cache()
from touche._kernels.base.jit import njit

from touche._kernels.base.vec import cross as _cross  # noqa: E402
from touche._kernels.base.vec import dot as _dot  # noqa: E402

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
def box_frame_columns(c1x, c1y, c1z, axes1, c2x, c2y, c2z, axes2):
    """Box 2 in box 1's frame for boxes whose axes are the COLUMNS of axes1 / axes2 (only the
    top-left 3x3 is read, so a (4, 4) pose works as it is): t = A1^T (c2 - c1) (3-tuple) and
    R = A1^T A2 (9-tuple, row-major: R[3 i + j] = A1_i . A2_j)."""
    d0 = c2x - c1x
    d1 = c2y - c1y
    d2 = c2z - c1z
    t = (axes1[0, 0] * d0 + axes1[1, 0] * d1 + axes1[2, 0] * d2,
         axes1[0, 1] * d0 + axes1[1, 1] * d1 + axes1[2, 1] * d2,
         axes1[0, 2] * d0 + axes1[1, 2] * d1 + axes1[2, 2] * d2)
    R = (axes1[0, 0] * axes2[0, 0] + axes1[1, 0] * axes2[1, 0] + axes1[2, 0] * axes2[2, 0],
         axes1[0, 0] * axes2[0, 1] + axes1[1, 0] * axes2[1, 1] + axes1[2, 0] * axes2[2, 1],
         axes1[0, 0] * axes2[0, 2] + axes1[1, 0] * axes2[1, 2] + axes1[2, 0] * axes2[2, 2],
         axes1[0, 1] * axes2[0, 0] + axes1[1, 1] * axes2[1, 0] + axes1[2, 1] * axes2[2, 0],
         axes1[0, 1] * axes2[0, 1] + axes1[1, 1] * axes2[1, 1] + axes1[2, 1] * axes2[2, 1],
         axes1[0, 1] * axes2[0, 2] + axes1[1, 1] * axes2[1, 2] + axes1[2, 1] * axes2[2, 2],
         axes1[0, 2] * axes2[0, 0] + axes1[1, 2] * axes2[1, 0] + axes1[2, 2] * axes2[2, 0],
         axes1[0, 2] * axes2[0, 1] + axes1[1, 2] * axes2[1, 1] + axes1[2, 2] * axes2[2, 1],
         axes1[0, 2] * axes2[0, 2] + axes1[1, 2] * axes2[1, 2] + axes1[2, 2] * axes2[2, 2])
    return t, R


@njit(cache=True, nogil=True)
def obb_obb_overlap_relative(t, R, a, b, eps):
    """THE OBB-OBB overlap test, given box B in box A's frame: Ericson 4.4.1 (15 separating
    axes) with the 4.4.2 robustness epsilon.

    t: B's centre in A's frame (3-tuple); R: R[3 i + j] = A_i . B_j (9-tuple); a, b: half
    extents (3-tuples or (3,) arrays). |R_ij| + eps in the radii, so that near-parallel edge
    pairs, whose cross-product axes are (near) null, never separate on rounding noise. Tests A's
    3 face axes, B's 3 face axes and the 9 edge-edge axes; separated iff |t.L| > ra + rb for
    some axis (closed boxes: touching is overlap).
    Erratum E L5024 (a.u[2] twice) avoided: the edge axes use the generic cyclic indices
    i1 = i+1, i2 = i+2, j1 = j+1, j2 = j+2 (mod 3):
    |t_i2 R_i1j - t_i1 R_i2j| > a_i1 Q_i2j + a_i2 Q_i1j + b_j1 Q_ij2 + b_j2 Q_ij1."""
    t0, t1, t2 = t
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = R
    a0 = a[0]
    a1 = a[1]
    a2 = a[2]
    b0 = b[0]
    b1 = b[1]
    b2 = b[2]
    q00 = abs(r00) + eps
    q01 = abs(r01) + eps
    q02 = abs(r02) + eps
    q10 = abs(r10) + eps
    q11 = abs(r11) + eps
    q12 = abs(r12) + eps
    q20 = abs(r20) + eps
    q21 = abs(r21) + eps
    q22 = abs(r22) + eps
    if abs(t0) > a0 + b0 * q00 + b1 * q01 + b2 * q02:
        return False
    if abs(t1) > a1 + b0 * q10 + b1 * q11 + b2 * q12:
        return False
    if abs(t2) > a2 + b0 * q20 + b1 * q21 + b2 * q22:
        return False
    if abs(t0 * r00 + t1 * r10 + t2 * r20) > a0 * q00 + a1 * q10 + a2 * q20 + b0:
        return False
    if abs(t0 * r01 + t1 * r11 + t2 * r21) > a0 * q01 + a1 * q11 + a2 * q21 + b1:
        return False
    if abs(t0 * r02 + t1 * r12 + t2 * r22) > a0 * q02 + a1 * q12 + a2 * q22 + b2:
        return False
    if abs(t2 * r10 - t1 * r20) > a1 * q20 + a2 * q10 + b1 * q02 + b2 * q01:  # A0 x B0
        return False
    if abs(t2 * r11 - t1 * r21) > a1 * q21 + a2 * q11 + b2 * q00 + b0 * q02:  # A0 x B1
        return False
    if abs(t2 * r12 - t1 * r22) > a1 * q22 + a2 * q12 + b0 * q01 + b1 * q00:  # A0 x B2
        return False
    if abs(t0 * r20 - t2 * r00) > a2 * q00 + a0 * q20 + b1 * q12 + b2 * q11:  # A1 x B0
        return False
    if abs(t0 * r21 - t2 * r01) > a2 * q01 + a0 * q21 + b2 * q10 + b0 * q12:  # A1 x B1
        return False
    if abs(t0 * r22 - t2 * r02) > a2 * q02 + a0 * q22 + b0 * q11 + b1 * q10:  # A1 x B2
        return False
    if abs(t1 * r00 - t0 * r10) > a0 * q10 + a1 * q00 + b1 * q22 + b2 * q21:  # A2 x B0
        return False
    if abs(t1 * r01 - t0 * r11) > a0 * q11 + a1 * q01 + b2 * q20 + b0 * q22:  # A2 x B1
        return False
    if abs(t1 * r02 - t0 * r12) > a0 * q12 + a1 * q02 + b0 * q21 + b1 * q20:  # A2 x B2
        return False
    return True


@njit(cache=True, nogil=True)
def test_obb_obb(c1, axes1, half1, c2, axes2, half2, eps):
    """OBB-OBB overlap (axes as columns): obb_obb_overlap_relative on B in A's frame."""
    t, R = box_frame_columns(c1[0], c1[1], c1[2], axes1, c2[0], c2[1], c2[2], axes2)
    return obb_obb_overlap_relative(t, R, half1, half2, eps)


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
def cross_tuple(a, b):
    """Cross product of two 3-tuples as a 3-tuple (no heap array in the per-pair loops)."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(cache=True, nogil=True)
def triangle_edge(P, i):
    """Edge i of a 9-tuple triangle (vertex rows): v1 - v0, v2 - v1, v0 - v2."""
    if i == 0:
        return (P[3] - P[0], P[4] - P[1], P[5] - P[2])
    if i == 1:
        return (P[6] - P[3], P[7] - P[4], P[8] - P[5])
    return (P[0] - P[6], P[1] - P[7], P[2] - P[8])


@njit(cache=True, nogil=True)
def triangle_projection(L, P):
    """[min, max] of the 9-tuple triangle P projected on the (unnormalised) axis L."""
    p = L[0] * P[0] + L[1] * P[1] + L[2] * P[2]
    q = L[0] * P[3] + L[1] * P[4] + L[2] * P[5]
    r = L[0] * P[6] + L[1] * P[7] + L[2] * P[8]
    return min(p, min(q, r)), max(p, max(q, r))


@njit(cache=True, nogil=True)
def triangles_separated_on(L, A, B):
    """True if the axis L strictly separates the two triangles (closed sets: touching is not
    separation; any nonzero axis is a valid test, a null axis gives 0 > 0 = False)."""
    lo0, hi0 = triangle_projection(L, A)
    lo1, hi1 = triangle_projection(L, B)
    return lo1 > hi0 or lo0 > hi1


@njit(cache=True, nogil=True)
def triangle_is_proper(P):
    """|n|^2 > _DEGEN * (longest edge^2)^2 for the 9-tuple triangle P (the rule of _tri_kind)."""
    e0 = triangle_edge(P, 0)
    e1 = triangle_edge(P, 1)
    e2 = triangle_edge(P, 2)
    lm = max(_dot(e0, e0), max(_dot(e1, e1), _dot(e2, e2)))
    if lm == 0.0:
        return False
    n = cross_tuple(e0, (-e2[0], -e2[1], -e2[2]))
    return _dot(n, n) > _DEGEN * lm * lm


@njit(cache=True, nogil=True)
def _proper_triangles_overlap(A, B):
    """SAT for two proper 9-tuple triangles given relative to a common origin (Ericson 5.2.10 /
    Eberly): n_A, n_B (early outs), the 9 e_i x f_j, then the in-plane axes n_A x e_i, n_A x f_i,
    n_B x e_i, n_B x f_i, needed when the planes are parallel (coplanar triangles; erratum S0
    L511: parallel edges give null axes, which never separate). Axes are unnormalised: a
    separation along any nonzero axis is a proof; for non-parallel planes n_A, n_B, e_i x f_j are
    complete, for parallel planes n_A and the in-plane normals are."""
    e0 = triangle_edge(A, 0)
    nA = cross_tuple(e0, (A[6] - A[0], A[7] - A[1], A[8] - A[2]))
    if triangles_separated_on(nA, A, B):
        return False
    f0 = triangle_edge(B, 0)
    nB = cross_tuple(f0, (B[6] - B[0], B[7] - B[1], B[8] - B[2]))
    if triangles_separated_on(nB, A, B):
        return False
    for i in range(3):
        ei = triangle_edge(A, i)
        for j in range(3):
            if triangles_separated_on(cross_tuple(ei, triangle_edge(B, j)), A, B):
                return False
    for i in range(3):
        ei = triangle_edge(A, i)
        fi = triangle_edge(B, i)
        if triangles_separated_on(cross_tuple(nA, ei), A, B):
            return False
        if triangles_separated_on(cross_tuple(nA, fi), A, B):
            return False
        if triangles_separated_on(cross_tuple(nB, ei), A, B):
            return False
        if triangles_separated_on(cross_tuple(nB, fi), A, B):
            return False
    return True


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
def _vertex_array(P, k):
    return np.array((P[3 * k], P[3 * k + 1], P[3 * k + 2]))


@njit(cache=True, nogil=True)
def triangles_overlap(A, B):
    """Triangle-triangle overlap, closed, robust to coplanar and degenerate input: THE
    triangle-triangle overlap test (test_triangle_triangle, sat_fast and the BVH queries call it).
    A and B are 9-tuples (vertex rows) relative to a common origin near them (e.g. A's first
    vertex), which reduces rounding.

    Proper triangles: _proper_triangles_overlap (SAT, all arithmetic on tuples).
    Zero-area triangles (collinear: a segment, or a point) are reduced to their segment /
    point and tested by distance <= 1e-12 * (coordinate scale): a crossing at a
    non-representable point never gives an exact 0.
    """
    if triangle_is_proper(A) and triangle_is_proper(B):
        return _proper_triangles_overlap(A, B)
    A0 = _vertex_array(A, 0)
    A1 = _vertex_array(A, 1)
    A2 = _vertex_array(A, 2)
    B0 = _vertex_array(B, 0)
    B1 = _vertex_array(B, 1)
    B2 = _vertex_array(B, 2)
    ka, pa, qa = _tri_kind(A0, A1, A2)
    kb, pb, qb = _tri_kind(B0, B1, B2)
    scale = 0.0
    for k in range(9):
        scale = max(scale, abs(A[k]), abs(B[k]))
    tol = _DEGEN_TOL * scale
    tol2 = tol * tol
    if ka == 2:
        d2 = _sqdist_segment_triangle(pb, qb, A0, A1, A2)
    elif kb == 2:
        d2 = _sqdist_segment_triangle(pa, qa, B0, B1, B2)
    else:
        d2, _, _ = _sqdist_segment_segment(pa, qa, pb, qb)
    return d2 <= tol2


@njit(cache=True, nogil=True)
def test_triangle_triangle(a0, a1, a2, b0, b1, b2):
    """Triangle-triangle overlap of (3,) vertex arrays: triangles_overlap with coordinates
    relative to a0."""
    o0 = a0[0]
    o1 = a0[1]
    o2 = a0[2]
    A = (0.0, 0.0, 0.0, a1[0] - o0, a1[1] - o1, a1[2] - o2, a2[0] - o0, a2[1] - o1, a2[2] - o2)
    B = (b0[0] - o0, b0[1] - o1, b0[2] - o2, b1[0] - o0, b1[1] - o1, b1[2] - o2,
         b2[0] - o0, b2[1] - o1, b2[2] - o2)
    return triangles_overlap(A, B)
